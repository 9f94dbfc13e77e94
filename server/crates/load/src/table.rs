//! A sorted table of `(key, value)` rows kept in the cache as a paged entry
//! ([`crate::cache::PagedEntry`]) and searched in place: the keys of every 128th row
//! (the fence, read at open) narrow a lookup to 128 rows, whose index entries and keys
//! lie together, so a lookup reads two to four 4 KiB pages instead of reading and parsing
//! a whole list; a run of many lookups reads each page it touches once (the entry keeps
//! them, and reads the rest in runs once half were read: [`PagedEntry`]), never the whole
//! table again. The kernel's text facts (its ftrace list, config, kprobe blacklist,
//! trace events) are kept so, each under a key of the file it came from.
//!
//! Layout (little-endian): magic `FEVTAB02`, rows `n`, metadata length, fence length,
//! text length (u32 each); the metadata (the caller's bytes: counts, a codec, a
//! fingerprint); the fence, the key of rows 0, 128, 256, … each as its length (u32) and
//! bytes; `n` x (key start, key length, value length) u32, sorted by key (rows of equal
//! keys in the order they were given); the text, each row's key followed by its value.

use crate::cache::{Cache, PagedEntry};
use std::borrow::Cow;

const MAGIC: &[u8; 8] = b"FEVTAB02";
const HEAD: usize = MAGIC.len() + 16;
const ROW: usize = 12;
/// Every how many rows the fence holds a key.
const FENCE: usize = 128;

/// Builds the bytes of a table ([`Table::open`] reads them): rows sorted by key, stably.
/// `None` when the text would pass 4 GiB (nothing a kernel's lists come near).
pub fn build<K: AsRef<[u8]>, V: AsRef<[u8]>>(meta: &[u8], rows: &[(K, V)]) -> Option<Vec<u8>> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| rows[a].0.as_ref().cmp(rows[b].0.as_ref()));
    let text_len: usize = rows.iter().map(|(k, v)| k.as_ref().len() + v.as_ref().len()).sum();
    let mut fence = Vec::new();
    for &i in order.iter().step_by(FENCE) {
        let k = rows[i].0.as_ref();
        fence.extend_from_slice(&u32::try_from(k.len()).ok()?.to_le_bytes());
        fence.extend_from_slice(k);
    }
    let (n, meta_len, fence_len, text) = (
        u32::try_from(rows.len()).ok()?,
        u32::try_from(meta.len()).ok()?,
        u32::try_from(fence.len()).ok()?,
        u32::try_from(text_len).ok()?,
    );
    let mut out = Vec::with_capacity(HEAD + meta.len() + fence.len() + rows.len() * ROW + text_len);
    out.extend_from_slice(MAGIC);
    for v in [n, meta_len, fence_len, text] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(meta);
    out.extend_from_slice(&fence);
    let mut at = 0u32;
    for &i in &order {
        let (k, v) = (rows[i].0.as_ref(), rows[i].1.as_ref());
        for x in [at, k.len() as u32, v.len() as u32] {
            out.extend_from_slice(&x.to_le_bytes());
        }
        at += (k.len() + v.len()) as u32;
    }
    for &i in &order {
        out.extend_from_slice(rows[i].0.as_ref());
        out.extend_from_slice(rows[i].1.as_ref());
    }
    Some(out)
}

/// A table read in place from a paged cache entry, a page at a time. Every read is checked (the page's CRC-32, the row inside the text): a lookup
/// that meets a damaged page or row answers `None`, and the caller reads the source file
/// again (and stores the table again).
#[derive(Debug)]
pub struct Table {
    entry: PagedEntry,
    n: usize,
    meta: Vec<u8>,
    /// The keys of rows 0, [`FENCE`], 2 x [`FENCE`], …
    fence: Vec<Vec<u8>>,
    rows_at: usize,
    text_at: usize,
    text_len: usize,
}

impl Table {
    /// The table stored as `name` ([`Cache::put_paged`] of [`build`]'s bytes); `None` when
    /// absent, damaged (its sizes do not add up to the entry's length) or the cache is off.
    pub fn open(cache: &Cache, name: &str) -> Option<Table> {
        Table::from_entry(cache.open_paged(name)?)
    }

    /// A table over an open paged entry (see [`Table::open`]).
    pub fn from_entry(entry: PagedEntry) -> Option<Table> {
        let head = entry.read(0..HEAD.min(entry.len()))?;
        if head.get(..MAGIC.len())? != MAGIC {
            return None;
        }
        let word = |i: usize| Some(u32::from_le_bytes(head.get(8 + 4 * i..12 + 4 * i)?.try_into().ok()?) as usize);
        let (n, meta_len, fence_len, text_len) = (word(0)?, word(1)?, word(2)?, word(3)?);
        let fence_at = HEAD.checked_add(meta_len)?;
        let rows_at = fence_at.checked_add(fence_len)?;
        let text_at = rows_at.checked_add(n.checked_mul(ROW)?)?;
        if text_at.checked_add(text_len)? != entry.len() {
            return None;
        }
        let meta = entry.read(HEAD..fence_at)?;
        let bytes = entry.read(fence_at..rows_at)?;
        let mut fence = Vec::new();
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let len = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
            fence.push(rest.get(4..4usize.checked_add(len)?)?.to_vec());
            rest = &rest[4 + len..];
        }
        if fence.len() != n.div_ceil(FENCE) {
            return None;
        }
        Some(Table { entry, n, meta, fence, rows_at, text_at, text_len })
    }

    /// The metadata stored with the rows.
    pub fn meta(&self) -> &[u8] {
        &self.meta
    }

    /// The number of rows.
    pub fn len(&self) -> usize {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Row `i`'s text range: (key start, key end, value end), checked inside the text.
    fn row(&self, i: usize) -> Option<(usize, usize, usize)> {
        let at = self.rows_at.checked_add(i.checked_mul(ROW)?)?;
        let r = <[u8; ROW]>::try_from(&*self.entry.get(at..at.checked_add(ROW)?)?).ok()?;
        let word = |j: usize| u32::from_le_bytes([r[j], r[j + 1], r[j + 2], r[j + 3]]) as usize;
        let key_end = word(0).checked_add(word(4))?;
        let end = key_end.checked_add(word(8))?;
        (end <= self.text_len).then_some((word(0), key_end, end))
    }

    fn text(&self, from: usize, to: usize) -> Option<Cow<'_, [u8]>> {
        self.entry.get(self.text_at.checked_add(from)?..self.text_at.checked_add(to)?)
    }

    /// The values of the rows whose key is `key`, in the order they were given (none:
    /// empty); `None` when a page or row on the way is damaged.
    pub fn find(&self, key: &[u8]) -> Option<Vec<Vec<u8>>> {
        let mut values = Vec::new();
        self.each(key, |v| values.push(v.into_owned()))?;
        Some(values)
    }

    /// The first value of the rows whose key is `key` (see [`Table::find`]: the same rows
    /// are read, so the same damage gives `None`; the values past the first are not copied).
    pub fn first(&self, key: &[u8]) -> Option<Option<Vec<u8>>> {
        let mut first = None;
        self.each(key, |v| {
            if first.is_none() {
                first = Some(v.into_owned());
            }
        })?;
        Some(first)
    }

    /// Calls `value` with the value of each row whose key is `key`, in order; `None` when
    /// a page or row on the way is damaged.
    fn each(&self, key: &[u8], mut value: impl FnMut(Cow<'_, [u8]>)) -> Option<()> {
        // The first row not below `key` is past the last fence key below it, and at or
        // before the first fence key not below it.
        let j = self.fence.partition_point(|f| f.as_slice() < key);
        let (mut lo, mut hi) = (j.saturating_sub(1) * FENCE, (j * FENCE).min(self.n));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (s, e, _) = self.row(mid)?;
            if &*self.text(s, e)? < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        for i in lo..self.n {
            let (s, e, end) = self.row(i)?;
            if &*self.text(s, e)? != key {
                break;
            }
            value(self.text(e, end)?);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> Cache {
        let dir = std::env::temp_dir().join(format!("fevlint-table-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Cache::new(Some(dir))
    }

    #[test]
    fn a_table_finds_every_key_with_its_values_in_order() {
        let cache = scratch("find");
        let mut rows: Vec<(String, String)> =
            (0..5000).map(|i| (format!("name_{:05}", i * 7 % 5000), i.to_string())).collect();
        rows.push(("name_00007".to_owned(), "again".to_owned()));
        rows.push((String::new(), "empty key".to_owned()));
        cache.put_paged("t.tab", &build(b"meta!", &rows).expect("table"));
        let t = Table::open(&cache, "t.tab").expect("table");
        assert_eq!((t.meta(), t.len()), (&b"meta!"[..], rows.len()));
        assert_eq!(t.find(b"name_00007"), Some(vec![b"1".to_vec(), b"again".to_vec()]));
        assert_eq!(t.first(b"name_04999"), Some(Some(b"2857".to_vec())));
        assert_eq!(t.first(b""), Some(Some(b"empty key".to_vec())));
        for missing in [&b"name_"[..], b"name_05000", b"zzz", b"a"] {
            assert_eq!(t.find(missing), Some(Vec::new()));
        }
        // Every key (past half of the pages, the rest read in runs), with the same answers.
        for (k, v) in &rows[..5000] {
            assert_eq!(t.first(k.as_bytes()), Some(Some(v.clone().into_bytes())), "{k}");
        }
        assert_eq!(t.find(b"name_00007"), Some(vec![b"1".to_vec(), b"again".to_vec()]));
        assert_eq!(t.find(b"zzz"), Some(Vec::new()));
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }

    #[test]
    fn equal_keys_across_the_fence_are_all_found_in_order() {
        let cache = scratch("fence");
        for (before, equal) in [(10, 300), (0, 128), (127, 1), (128, 129), (3, 2)] {
            let mut rows: Vec<(String, String)> = (0..before).map(|i| (format!("a{i:04}"), String::new())).collect();
            rows.extend((0..equal).map(|i| ("x".to_owned(), i.to_string())));
            rows.push(("z".to_owned(), "last".to_owned()));
            cache.put_paged("t.tab", &build(b"", &rows).expect("table"));
            let t = Table::open(&cache, "t.tab").expect("table");
            let want: Vec<Vec<u8>> = (0..equal).map(|i| i.to_string().into_bytes()).collect();
            assert_eq!(t.find(b"x"), Some(want), "{before} {equal}");
            assert_eq!(t.first(b"z"), Some(Some(b"last".to_vec())));
            assert_eq!(t.find(b"y"), Some(Vec::new()));
            assert_eq!(t.first(b"a0000"), Some((before > 0).then(Vec::new)));
        }
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }

    #[test]
    fn a_damaged_table_answers_none_never_a_wrong_value() {
        let cache = scratch("damaged");
        let rows: Vec<(String, String)> = (0..3000).map(|i| (format!("k{i:05}"), format!("v{i}"))).collect();
        let bytes = build(b"", &rows).expect("table");
        // Bytes that are not a table (or the earlier form): refused at open.
        let mut old = bytes.clone();
        old[..8].copy_from_slice(b"FEVTAB01");
        for bad in [&b""[..], b"FEVTAB02", &bytes[..bytes.len() - 1], &old] {
            cache.put_paged("t.tab", bad);
            assert!(Table::open(&cache, "t.tab").is_none());
        }
        // A row pointing past the text, under valid page checksums: `None`, no panic.
        let mut bad = bytes.clone();
        let rows_at = HEAD + u32::from_le_bytes(bytes[16..20].try_into().expect("4 bytes")) as usize;
        bad[rows_at..rows_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        cache.put_paged("t.tab", &bad);
        let t = Table::open(&cache, "t.tab").expect("sizes add up");
        assert_eq!(t.find(b"k00000"), None);
        // A page changed on disk: the lookups through it answer `None`.
        cache.put_paged("t.tab", &bytes);
        let path = cache.dir().expect("dir").join("t.tab");
        let mut file = std::fs::read(&path).expect("file");
        file[bytes.len() - 10] ^= 1;
        std::fs::write(&path, &file).expect("write");
        let t = Table::open(&cache, "t.tab").expect("head intact");
        assert_eq!(t.first(b"k02999"), None);
        // Many lookups (past half of the pages, the rest read in runs): the pages still
        // answer where they are intact, the damaged one never.
        for _ in 0..2 {
            for (k, v) in &rows[..100] {
                assert_eq!(t.first(k.as_bytes()), Some(Some(v.clone().into_bytes())), "{k}");
            }
        }
        assert_eq!(t.first(b"k02999"), None);
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }
}
