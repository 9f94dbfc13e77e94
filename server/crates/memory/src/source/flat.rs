//! makedumpfile's flattened stream (`makedumpfile -F`, Debian kdump-tools' default, QEMU's
//! `kdump-zlib/lzo/snappy`): a big-endian `makedumpfile` header, then records `{i64
//! offset, i64 size, data}` that are writes into the real kdump file. This index maps the
//! real file's offsets to the records' data, later writes winning, so the kdump reader
//! reads the stream in place (no `makedumpfile -R` copy).

use super::Source;
use crate::error::Error;
use std::collections::BTreeMap;
use std::path::Path;

pub(crate) const FLAT_SIGNATURE: &[u8] = b"makedumpfile";
/// `MAX_SIZE_MDF_HEADER`: the flat header occupies the first 4096 bytes.
const FLAT_HEADER_SIZE: u64 = 4096;
const RECORD_HEADER: u64 = 16;

/// Where each byte range of the reassembled file lies in the stream.
#[derive(Debug)]
pub struct FlatIndex {
    src: Source,
    /// Non-overlapping ranges of the reassembled file: start -> (end, stream offset).
    map: BTreeMap<u64, (u64, u64)>,
    len: u64,
    records: u64,
}

impl FlatIndex {
    /// Reads the record headers (not the data) of the stream.
    pub fn build(src: Source) -> Result<FlatIndex, Error> {
        let mut head = [0u8; 32];
        src.read_exact_at(0, &mut head)?;
        if !head.starts_with(FLAT_SIGNATURE) || head[12..16].iter().any(|&b| b != 0) {
            return Err(src.malformed(0, "no `makedumpfile` flattened-format signature"));
        }
        let ty = i64::from_be_bytes(head[16..24].try_into().unwrap_or_default());
        let version = i64::from_be_bytes(head[24..32].try_into().unwrap_or_default());
        if ty != 1 || version != 1 {
            return Err(src.malformed(16, format!("flattened header type {ty}, version {version} (expected 1, 1)")));
        }
        let mut map: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        let mut pos = FLAT_HEADER_SIZE;
        let mut len = 0u64;
        let mut records = 0u64;
        loop {
            if pos == src.len() {
                // A stream cut after a whole record: readable, as makedumpfile -R would be.
                break;
            }
            let mut rh = [0u8; 16];
            src.read_exact_at(pos, &mut rh)?;
            let offset = i64::from_be_bytes(rh[..8].try_into().unwrap_or_default());
            let size = i64::from_be_bytes(rh[8..].try_into().unwrap_or_default());
            if offset == -1 {
                break;
            }
            let data = pos + RECORD_HEADER;
            if offset < 0 || size < 0 || data.checked_add(size as u64).is_none_or(|e| e > src.len()) {
                return Err(src.malformed(
                    pos,
                    format!("flattened record {records}: offset {offset}, size {size} (negative, or past the end of the stream)"),
                ));
            }
            let (start, size) = (offset as u64, size as u64);
            let Some(end) = start.checked_add(size) else {
                return Err(
                    src.malformed(pos, format!("flattened record {records}: offset {offset} + size {size} overflows"))
                );
            };
            if size > 0 {
                insert(&mut map, start, end, data);
                len = len.max(end);
            }
            records += 1;
            pos = data + size;
        }
        Ok(FlatIndex { src, map, len, records })
    }

    pub fn path(&self) -> &Path {
        self.src.path()
    }

    /// The size of the file the stream reassembles to.
    pub fn logical_len(&self) -> u64 {
        self.len
    }

    /// The number of data records.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Reads the reassembled file; bytes no record wrote read as zero (as in the file
    /// `makedumpfile -R` writes).
    pub(crate) fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), Error> {
        buf.fill(0);
        let end = offset.saturating_add(buf.len() as u64);
        if end <= offset {
            return Ok(());
        }
        // The range starting at or before `offset`, then every range starting inside.
        let first = self.map.range(..=offset).next_back().map(|(&s, &v)| (s, v));
        let rest = self.map.range(offset + 1..end.max(offset + 1)).map(|(&s, &v)| (s, v));
        for (s, (e, data)) in first.into_iter().chain(rest) {
            let lo = s.max(offset);
            let hi = e.min(end);
            if lo >= hi {
                continue;
            }
            let out = &mut buf[(lo - offset) as usize..(hi - offset) as usize];
            self.src.read_exact_at(data + (lo - s), out)?;
        }
        Ok(())
    }
}

/// Inserts `[start, end)` -> `data`, cutting whatever it overwrites.
fn insert(map: &mut BTreeMap<u64, (u64, u64)>, start: u64, end: u64, data: u64) {
    // A range that starts before `start` and reaches into it: keep its head, and its tail
    // if it also reaches past `end`.
    if let Some((&s, &(e, d))) = map.range(..start).next_back() {
        if e > start {
            map.insert(s, (start, d));
            if e > end {
                map.insert(end, (e, d + (end - s)));
            }
        }
    }
    // Ranges starting inside [start, end): drop them, keeping a tail past `end`.
    let inside: Vec<(u64, (u64, u64))> = map.range(start..end).map(|(&s, &v)| (s, v)).collect();
    for (s, (e, d)) in inside {
        map.remove(&s);
        if e > end {
            map.insert(end, (e, d + (end - s)));
        }
    }
    map.insert(start, (end, data));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (core_kdump): an empty read panicked in `BTreeMap::range`.
    #[test]
    fn empty_and_edge_reads() {
        let mut f = vec![0u8; 4096];
        f[..12].copy_from_slice(b"makedumpfile");
        f[16..24].copy_from_slice(&1i64.to_be_bytes());
        f[24..32].copy_from_slice(&1i64.to_be_bytes());
        f.extend_from_slice(&5i64.to_be_bytes());
        f.extend_from_slice(&3i64.to_be_bytes());
        f.extend_from_slice(b"abc");
        let idx = FlatIndex::build(Source::from_vec(Path::new("t.flat"), f)).expect("index");
        assert_eq!(idx.logical_len(), 8);
        idx.read_exact_at(6, &mut []).expect("empty read");
        idx.read_exact_at(u64::MAX, &mut []).expect("empty read at the end");
        let mut b = [9u8; 8];
        idx.read_exact_at(0, &mut b).expect("read");
        assert_eq!(&b, b"\0\0\0\0\0abc");
        let mut b = [9u8; 4];
        idx.read_exact_at(u64::MAX - 1, &mut b).expect("read past everything");
        assert_eq!(b, [0; 4]);
    }

    #[test]
    fn later_writes_win() {
        let mut m = BTreeMap::new();
        insert(&mut m, 0, 100, 1000);
        insert(&mut m, 10, 20, 5000);
        insert(&mut m, 90, 120, 7000);
        let v: Vec<_> = m.into_iter().collect();
        assert_eq!(v, vec![(0, (10, 1000)), (10, (20, 5000)), (20, (90, 1020)), (90, (120, 7000))]);
    }
}
