//! On-disk cache of decompressed kernel files, so a kernel opens in milliseconds after
//! the first time: the decompressed bytes are stored once and memory-mapped afterwards.
//!
//! Keyed by the source file's canonical path, length and modification time. Each entry
//! is a payload file plus a small header file written after it (both atomically, through
//! a temporary name and `rename`); the header carries the payload's length and CRC-32, so
//! a torn or corrupted entry is detected and rebuilt. Any cache failure falls back to
//! decompressing: the cache can only make things faster.
//!
//! Location: decided once by the program's edge (the CLI, which also starts the
//! language server: `FEVLINT_CACHE_DIR`, `XDG_CACHE_HOME`, `HOME`, `FEVLINT_NO_CACHE`)
//! and passed down as a [`Cache`] value; the readers read no environment variable and
//! know no home directory. [`Cache::off`] (the default) caches nothing.

use crate::blob::{Blob, BlobSlice};
use crate::codec::Codec;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"FEVBLOB1";
/// Entries smaller than this are not worth a file.
const MIN_SIZE: usize = 64 * 1024;

/// The cache directory the edge chose, as a value the loaders are given: cheap to clone,
/// `Cache::off()` (the default) caches nothing and writes nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cache {
    dir: Option<Arc<Path>>,
}

impl Cache {
    /// Caches in `dir` (created when first written); `None` is [`Cache::off`].
    pub fn new(dir: Option<PathBuf>) -> Cache {
        Cache { dir: dir.map(Arc::from) }
    }

    /// No cache: every kernel is decompressed and indexed each time.
    pub fn off() -> Cache {
        Cache { dir: None }
    }

    /// The cache directory, or `None` when the cache is off.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// A key for what is derived from the file at `path`, valid while the file keeps its
    /// canonical path, length and modification time (as a cached decompression is):
    /// checking it costs a `stat`, not a read. `None` when the cache is off or the file
    /// cannot be stat'ed.
    pub fn source_key(&self, path: &Path) -> Option<u64> {
        self.dir()?;
        stamp(path).map(|s| s.key)
    }
}

/// Identity of a source file: what makes a cached decompression valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Stamp {
    key: u64,
    len: u64,
    mtime_ns: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mtime_ns = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as u64;
    let canonical = path.canonicalize().ok()?;
    let mut key = fnv1a(canonical.as_os_str().as_encoded_bytes());
    key = fnv1a_extend(key, &meta.len().to_le_bytes());
    key = fnv1a_extend(key, &mtime_ns.to_le_bytes());
    Some(Stamp { key, len: meta.len(), mtime_ns })
}

fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_extend(0xcbf2_9ce4_8422_2325, bytes)
}

fn fnv1a_extend(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn codec_id(c: Codec) -> u8 {
    Codec::ALL.iter().position(|&x| x == c).map_or(255, |i| i as u8)
}

fn paths(dir: &Path, s: Stamp) -> (PathBuf, PathBuf) {
    (dir.join(format!("{:016x}.bin", s.key)), dir.join(format!("{:016x}.hdr", s.key)))
}

fn header(s: Stamp, codec: Codec, payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(48);
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&s.len.to_le_bytes());
    h.extend_from_slice(&s.mtime_ns.to_le_bytes());
    h.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    h.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    h.push(codec_id(codec));
    h
}

impl Cache {
    /// The cached decompression of `path`, if there is a valid one.
    pub fn get(&self, path: &Path) -> Option<(Codec, Blob)> {
        self.get_checked(path).map(|(codec, blob, _)| (codec, blob))
    }

    /// [`Cache::get`] with the CRC-32 of the bytes, checked as they were read (a caller
    /// that keys things by the contents' checksum need not compute it again).
    pub fn get_checked(&self, path: &Path) -> Option<(Codec, Blob, u32)> {
        let (bin, codec, len, crc) = self.header(path)?;
        let blob = Blob::read_private_in(&bin, self.dir()).ok()?;
        if blob.len() as u64 != len || crc32fast::hash(&blob) != crc {
            return None;
        }
        Some((codec, blob, crc))
    }

    /// What the header of the cached decompression of `path` says, its payload unread:
    /// the codec, the payload's length and CRC-32; `None` when there is no valid header
    /// for the file as it is now.
    pub fn peek(&self, path: &Path) -> Option<(Codec, u64, u32)> {
        self.header(path).map(|(_, codec, len, crc)| (codec, len, crc))
    }

    /// The payload file of the cached decompression of `path` and what its header says
    /// (codec, length, CRC-32), when the header is valid for the file as it is now.
    fn header(&self, path: &Path) -> Option<(PathBuf, Codec, u64, u32)> {
        let dir = self.dir()?;
        let s = stamp(path)?;
        let (bin, hdr) = paths(dir, s);
        let h = std::fs::read(&hdr).ok()?;
        if h.len() != 37 || &h[..8] != MAGIC {
            return None;
        }
        let word = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or_default());
        if word(8) != s.len || word(16) != s.mtime_ns {
            return None;
        }
        let codec = *Codec::ALL.get(usize::from(h[36]))?;
        Some((bin, codec, word(24), u32::from_le_bytes(h[32..36].try_into().unwrap_or_default())))
    }

    /// The cached decompression of `path` ([`Cache::peek`] says which), to be read a page
    /// at a time: `crcs` is the CRC-32 of each of its [`PAGE`]-byte pages ([`page_crcs`] of
    /// the bytes, kept by the caller), each page refused unless it matches. `None` when the
    /// entry is absent or its length is not `len`, or `crcs` does not have one CRC a page.
    /// Nothing is read but the file's size.
    pub fn open_pages(&self, path: &Path, len: u64, crcs: Vec<u32>) -> Option<PagedEntry> {
        let dir = self.dir()?;
        let s = stamp(path)?;
        let (bin, _) = paths(dir, s);
        let (file, size) = crate::fsio::open_regular(&bin).ok()?;
        let len = usize::try_from(len).ok()?;
        if size != len as u64 || crcs.len() != len.div_ceil(PAGE) {
            return None;
        }
        Some(PagedEntry::new(file, len, crcs))
    }

    /// Stores a decompression; failures are ignored (the cache is an optimisation).
    pub fn put(&self, path: &Path, codec: Codec, payload: &[u8]) {
        if payload.len() < MIN_SIZE {
            return;
        }
        let (Some(dir), Some(s)) = (self.dir(), stamp(path)) else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let (bin, hdr) = paths(dir, s);
        // Payload first, header last: a header only exists for a complete payload.
        if write_atomic(&bin, payload).is_ok() {
            let _ = write_atomic(&hdr, &header(s, codec, payload));
        }
    }

    /// Stores what `produce` writes as the decompression of `path`, streamed to the cache
    /// file (never held in memory), and returns it memory-mapped. `None` when the cache is
    /// off or cannot be written (the caller then decompresses in memory); an error of
    /// `produce` about the input is returned as is.
    pub fn fill<E>(
        &self,
        path: &Path,
        codec: Codec,
        produce: impl FnOnce(&mut dyn std::io::Write) -> Result<u64, E>,
    ) -> Option<Result<Blob, E>> {
        let (dir, s) = (self.dir()?, stamp(path)?);
        std::fs::create_dir_all(dir).ok()?;
        let (bin, hdr) = paths(dir, s);
        /// Hashes and counts what passes through.
        struct Tee<'a> {
            file: std::io::BufWriter<&'a mut std::fs::File>,
            crc: crc32fast::Hasher,
        }
        impl std::io::Write for Tee<'_> {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                let n = self.file.write(buf)?;
                self.crc.update(&buf[..n]);
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                self.file.flush()
            }
        }
        let mut outcome: Option<Result<(u64, u32), E>> = None;
        let written = crate::fsio::write_atomic_with(&bin, |f| {
            let mut tee = Tee { file: std::io::BufWriter::with_capacity(1 << 20, f), crc: crc32fast::Hasher::new() };
            match produce(&mut tee) {
                Ok(n) => {
                    std::io::Write::flush(&mut tee)?;
                    outcome = Some(Ok((n, tee.crc.finalize())));
                    Ok(())
                }
                Err(e) => {
                    outcome = Some(Err(e));
                    // Abandon the file: nothing is named, nothing is left.
                    Err(std::io::Error::other("decompression failed"))
                }
            }
        });
        match outcome? {
            Err(e) => Some(Err(e)),
            Ok(_) if written.is_err() => None,
            Ok((len, crc)) => {
                let mut h = Vec::with_capacity(48);
                h.extend_from_slice(MAGIC);
                h.extend_from_slice(&s.len.to_le_bytes());
                h.extend_from_slice(&s.mtime_ns.to_le_bytes());
                h.extend_from_slice(&len.to_le_bytes());
                h.extend_from_slice(&crc.to_le_bytes());
                h.push(codec_id(codec));
                write_atomic(&hdr, &h).ok()?;
                self.get(path).map(|(_, blob)| Ok(blob))
            }
        }
    }
}

/// Nothing is left behind when the write fails or the process is killed (see
/// [`crate::fsio::write_atomic`]).
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    crate::fsio::write_atomic(path, bytes)
}

/// Marks the end of a derived entry: `payload, length (u64), CRC-32 (u32), DERIVED`.
const DERIVED: &[u8; 8] = b"FEVDRV01";

impl Cache {
    /// A derived file (an index computed from a kernel's inputs) stored as `name` under a
    /// key that covers everything it was computed from; `None` when absent, torn, corrupt or
    /// the cache is off. One file: written whole under a temporary name and renamed, its
    /// trailer gives the payload's length and CRC-32.
    pub fn get_derived(&self, name: &str) -> Option<BlobSlice> {
        let dir = self.dir()?;
        let blob = Blob::read_private_in(&dir.join(name), Some(dir)).ok()?;
        let body = blob.len().checked_sub(20)?;
        let trailer = &blob[body..];
        if &trailer[12..] != DERIVED {
            return None;
        }
        let len = u64::from_le_bytes(trailer[..8].try_into().ok()?);
        let crc = u32::from_le_bytes(trailer[8..12].try_into().ok()?);
        if len != body as u64 || crc32fast::hash(&blob[..body]) != crc {
            return None;
        }
        blob.slice(0..body)
    }

    /// Stores a derived file (see [`Cache::get_derived`]); failures are ignored (the cache is an
    /// optimisation).
    pub fn put_derived(&self, name: &str, payload: &[u8]) {
        let Some(dir) = self.dir() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let _ = crate::fsio::write_atomic_with(&dir.join(name), |f| {
            use std::io::Write;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            w.write_all(payload)?;
            w.write_all(&(payload.len() as u64).to_le_bytes())?;
            w.write_all(&crc32fast::hash(payload).to_le_bytes())?;
            w.write_all(DERIVED)?;
            w.flush()
        });
    }
}

/// Marks the end of a paged entry: `payload, CRC-32 of each page (u32 each), payload
/// length (u64), page count (u32), CRC-32 of the page CRCs (u32), PAGED`.
const PAGED: &[u8; 8] = b"FEVPAG01";
/// The unit a paged entry is read and checked in.
pub const PAGE: usize = 4096;

/// The CRC-32 of each [`PAGE`]-byte page of `bytes` (the last one shorter), as a paged
/// read checks them ([`Cache::open_pages`]).
pub fn page_crcs(bytes: &[u8]) -> Vec<u32> {
    bytes.chunks(PAGE).map(crc32fast::hash).collect()
}
/// A paged entry's trailer: length, page count, CRC of the page CRCs, [`PAGED`].
const PAGED_TRAILER: usize = 8 + 4 + 4 + 8;

/// A derived file read a page at a time, for lookups that touch a few places of a large
/// table (one name looked up among a symbol map's 150,000): opened with its trailer and
/// page checksums only, each page read with `pread` when first asked for and refused
/// unless its CRC-32 is the one stored ([`Cache::put_paged`]). As safe as
/// [`Cache::get_derived`]'s CRC of the whole file for every byte it hands out, without
/// reading the bytes it never hands out. Never mapped: a file truncated or rewritten under
/// it reads short or fails its checksum, and the read is `None`.
///
/// A page asked for is kept once read (a `OnceLock` slot, no lock on the read path:
/// [`PagedEntry::get`] lends bytes that lie in one page). Pages are read one at a time
/// until half of them were; then the pages not held yet are read in runs of up to [`RUN`]
/// (one read, each page checked), so a run that touches most of a table (1,000 names
/// looked up in a 1.5 MB ftrace table touch 65% of its pages) reads each page once, in
/// few reads, instead of reading the whole entry again after some lookups.
pub struct PagedEntry {
    file: std::fs::File,
    len: usize,
    crcs: Vec<u32>,
    /// Invariant: a set slot holds exactly page `i`'s bytes, checked against `crcs[i]`.
    pages: Box<[std::sync::OnceLock<Box<[u8]>>]>,
    /// Pages read one at a time so far.
    singles: std::sync::atomic::AtomicUsize,
}

/// The most pages a [`PagedEntry`] reads at once, once half of its pages were read
/// one at a time: 64 KiB.
pub const RUN: usize = 16;

impl std::fmt::Debug for PagedEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.pages.iter().filter(|p| p.get().is_some()).count();
        f.debug_struct("PagedEntry").field("len", &self.len).field("pages_held", &held).finish()
    }
}

impl PagedEntry {
    /// `crcs` has one CRC-32 per page of `len` bytes (checked by the callers against the
    /// file's size): one slot per page.
    fn new(file: std::fs::File, len: usize, crcs: Vec<u32>) -> PagedEntry {
        let pages = (0..crcs.len()).map(|_| std::sync::OnceLock::new()).collect();
        PagedEntry { file, len, crcs, pages, singles: Default::default() }
    }

    /// The payload's length.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The payload's bytes in `range`; `None` when out of bounds or when a page cannot be
    /// read or fails its checksum. A range over more than two pages (a table or index read
    /// whole) is read in one read, its pages checked and not kept; a smaller one from the
    /// pages kept ([`PagedEntry::get`]).
    pub fn read(&self, range: std::ops::Range<usize>) -> Option<Vec<u8>> {
        self.get(range).map(std::borrow::Cow::into_owned)
    }

    /// The payload's bytes in `range`, lent from the page they lie in when they lie in
    /// one (read and kept when first asked for), else copied from their pages, or over
    /// more than two pages read as [`PagedEntry::read`] reads them; `None` when out of
    /// bounds or when a page cannot be read or fails its checksum.
    #[inline]
    pub fn get(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        let first = range.start / PAGE;
        // The common case, a few bytes inside a page that is held: no call, no copy.
        if range.start < range.end && range.end <= (first + 1) * PAGE {
            if let Some(page) = self.pages.get(first).and_then(|p| p.get()) {
                return page.get(range.start - first * PAGE..range.end - first * PAGE).map(std::borrow::Cow::Borrowed);
            }
        }
        self.get_cold(range)
    }

    /// [`PagedEntry::get`] past its common case.
    #[cold]
    fn get_cold(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        if range.start > range.end || range.end > self.len {
            return None;
        }
        if range.is_empty() {
            return Some(Cow::Borrowed(&[]));
        }
        let first = range.start / PAGE;
        if range.end <= (first + 1) * PAGE {
            let from = range.start - first * PAGE;
            return self.page(first)?.get(from..from + range.len()).map(Cow::Borrowed);
        }
        if range.len() > 2 * PAGE {
            return self.read_span(range).map(Cow::Owned);
        }
        let mut out = Vec::with_capacity(range.len());
        let mut at = range.start;
        while at < range.end {
            let page = self.page(at / PAGE)?;
            let from = at % PAGE;
            let to = (range.end - (at - from)).min(page.len());
            out.extend_from_slice(page.get(from..to)?);
            at += to - from;
        }
        Some(Cow::Owned(out))
    }

    /// A range over several pages (a table or index read whole) in one read, each of its
    /// pages checked, none kept (the caller keeps the range).
    fn read_span(&self, range: std::ops::Range<usize>) -> Option<Vec<u8>> {
        let first = range.start / PAGE;
        let start = first * PAGE;
        let end = range.end.div_ceil(PAGE).checked_mul(PAGE)?.min(self.len);
        let mut buf = crate::fsio::read_exact_at(&self.file, start as u64, end.checked_sub(start)?).ok()?;
        for (i, page) in buf.chunks(PAGE).enumerate() {
            if crc32fast::hash(page) != *self.crcs.get(first + i)? {
                return None;
            }
        }
        buf.truncate(range.end - start);
        buf.drain(..range.start - start);
        Some(buf)
    }

    /// Pages `pages` ([`PAGE`] bytes each, the last of the payload shorter) in one read,
    /// each checked, none kept: `None` when out of bounds, or when any cannot be read whole
    /// or fails its checksum.
    pub fn read_pages(&self, pages: std::ops::Range<usize>) -> Option<Vec<u8>> {
        let end = pages.end.checked_mul(PAGE)?.min(self.len);
        let start = pages.start.checked_mul(PAGE)?;
        if pages.start >= pages.end || start >= end {
            return None;
        }
        self.read_span(start..end)
    }

    /// Page `i` ([`PAGE`] bytes, the last one shorter), read now and not kept: `None` when
    /// it cannot be read whole or fails its checksum (the caller keeps the pages it reads).
    pub fn read_page(&self, i: usize) -> Option<Vec<u8>> {
        let start = i.checked_mul(PAGE)?;
        let end = start.checked_add(PAGE)?.min(self.len);
        let buf = crate::fsio::read_exact_at(&self.file, start as u64, end.checked_sub(start)?).ok()?;
        (crc32fast::hash(&buf) == *self.crcs.get(i)?).then_some(buf)
    }

    /// Page `i`, kept: `None` when it cannot be read whole or fails its checksum (then it
    /// is asked of the file again the next time).
    #[inline]
    fn page(&self, i: usize) -> Option<&[u8]> {
        match self.pages.get(i)?.get() {
            Some(p) => Some(p),
            None => self.page_read(i),
        }
    }

    /// [`PagedEntry::page`] not held yet: read alone, or with the pages after it not held
    /// yet once half of the pages were read one at a time.
    #[cold]
    fn page_read(&self, i: usize) -> Option<&[u8]> {
        let singles = self.singles.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let run = if singles < self.pages.len() / 2 { None } else { self.run(i) };
        let bytes = match run {
            Some(b) => b,
            None => self.read_page(i)?,
        };
        Some(self.pages.get(i)?.get_or_init(|| bytes.into_boxed_slice()))
    }

    /// Page `i` and the pages after it, up to [`RUN`] of them and stopping before the
    /// first one held, in one read: the pages after `i` are kept, page `i` returned. `None`
    /// when that is page `i` alone or any of them fails (page `i` is then read alone).
    fn run(&self, i: usize) -> Option<Vec<u8>> {
        let limit = i.checked_add(RUN)?.min(self.pages.len());
        let end = (i + 1..limit).find(|&j| self.pages[j].get().is_some()).unwrap_or(limit);
        if end <= i + 1 {
            return None;
        }
        let bytes = self.read_pages(i..end)?;
        let mut pages = bytes.chunks(PAGE);
        let first = pages.next()?.to_vec();
        for (j, page) in (i + 1..end).zip(pages) {
            self.pages[j].get_or_init(|| page.into());
        }
        Some(first)
    }
}

impl Cache {
    /// Stores a derived file to be read a page at a time ([`Cache::open_paged`]); failures
    /// are ignored (the cache is an optimisation). Written whole under a temporary name and
    /// renamed, as [`Cache::put_derived`].
    pub fn put_paged(&self, name: &str, payload: &[u8]) {
        let Some(dir) = self.dir() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let crcs: Vec<u8> = payload.chunks(PAGE).flat_map(|p| crc32fast::hash(p).to_le_bytes()).collect();
        let _ = crate::fsio::write_atomic_with(&dir.join(name), |f| {
            use std::io::Write;
            let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
            w.write_all(payload)?;
            w.write_all(&crcs)?;
            w.write_all(&(payload.len() as u64).to_le_bytes())?;
            w.write_all(&((crcs.len() / 4) as u32).to_le_bytes())?;
            w.write_all(&crc32fast::hash(&crcs).to_le_bytes())?;
            w.write_all(PAGED)?;
            w.flush()
        });
    }

    /// A paged derived file ([`PagedEntry`]): `None` when absent, when its size is not
    /// what its trailer says, when its page checksums fail their own, or the cache is off.
    pub fn open_paged(&self, name: &str) -> Option<PagedEntry> {
        use std::os::unix::fs::FileExt;
        let dir = self.dir()?;
        let (file, size) = crate::fsio::open_regular(&dir.join(name)).ok()?;
        let size = usize::try_from(size).ok()?;
        let mut trailer = [0u8; PAGED_TRAILER];
        file.read_exact_at(&mut trailer, size.checked_sub(PAGED_TRAILER)? as u64).ok()?;
        if &trailer[16..] != PAGED {
            return None;
        }
        let len = usize::try_from(u64::from_le_bytes(trailer[..8].try_into().ok()?)).ok()?;
        let pages = u32::from_le_bytes(trailer[8..12].try_into().ok()?) as usize;
        let table_crc = u32::from_le_bytes(trailer[12..16].try_into().ok()?);
        if pages != len.div_ceil(PAGE) || len.checked_add(pages.checked_mul(4)?)?.checked_add(PAGED_TRAILER)? != size {
            return None;
        }
        let mut table = vec![0u8; pages * 4];
        file.read_exact_at(&mut table, len as u64).ok()?;
        if crc32fast::hash(&table) != table_crc {
            return None;
        }
        let crcs = table.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        Some(PagedEntry::new(file, len, crcs))
    }
}

#[cfg(test)]
mod paged_tests {
    use super::*;

    fn scratch(name: &str) -> Cache {
        let dir = std::env::temp_dir().join(format!("fevlint-paged-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Cache::new(Some(dir))
    }

    #[test]
    fn a_paged_entry_reads_back_any_range() {
        let cache = scratch("ranges");
        let payload: Vec<u8> = (0..3 * PAGE as u32 + 123).map(|i| (i * 7 % 251) as u8).collect();
        cache.put_paged("t.paged", &payload);
        let e = cache.open_paged("t.paged").expect("entry");
        assert_eq!(e.len(), payload.len());
        // Ranges within a page, across two, and over several (read in one go).
        let spans = [(10, 3 * PAGE + 123), (PAGE + 1, 3 * PAGE + 5), (0, 3 * PAGE), (PAGE, 3 * PAGE + 1)];
        for (a, b) in [(0, 0), (0, 10), (PAGE - 3, PAGE + 5), (3 * PAGE, 3 * PAGE + 123)].into_iter().chain(spans) {
            assert_eq!(e.read(a..b).as_deref(), Some(&payload[a..b]), "{a}..{b}");
        }
        assert_eq!(e.read(0..payload.len() + 1), None);
        // Runs of whole pages, the last one shorter; out of bounds or empty: `None`.
        assert_eq!(e.read_pages(0..4).as_deref(), Some(&payload[..]));
        assert_eq!(e.read_pages(1..3).as_deref(), Some(&payload[PAGE..3 * PAGE]));
        assert_eq!(e.read_pages(3..9).as_deref(), Some(&payload[3 * PAGE..]));
        let (three, one) = (3, 1);
        for none in [4..5, 2..2, three..one] {
            assert_eq!(e.read_pages(none.clone()), None, "{none:?}");
        }
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }

    #[test]
    fn pages_are_kept_then_read_in_runs_and_a_damaged_one_is_never_handed_out() {
        let cache = scratch("runs");
        let n = 40;
        let payload: Vec<u8> = (0..n as u32 * PAGE as u32 + 77).map(|i| (i * 31 % 241) as u8).collect();
        let page = |i: usize| i * PAGE..((i + 1) * PAGE).min(payload.len());
        cache.put_paged("t.paged", &payload);
        let path = cache.dir().expect("dir").join("t.paged");
        let mut file = std::fs::read(&path).expect("file");
        file[25 * PAGE + 3] ^= 1;
        std::fs::write(&path, &file).expect("write");
        let e = cache.open_paged("t.paged").expect("entry");
        // Pages 0..=20 one at a time (half of the 41), then 30: read with 31..=40 in one run.
        for i in (0..=20).chain([30]) {
            assert!(e.get(page(i)).as_deref() == Some(&payload[page(i)]), "{i}");
        }
        // A run over the damaged page 25 fails: the page asked for is read alone (22, 24);
        // 26's run reads 26..=29 (30 is held).
        for i in [22, 24, 26] {
            assert!(e.get(page(i)).as_deref() == Some(&payload[page(i)]), "{i}");
        }
        assert_eq!(e.get(page(25)), None);
        assert_eq!(e.get(24 * PAGE + 10..25 * PAGE + 10), None, "across the damaged page");
        // Cut the file under the entry: what was read is kept, what was not is refused,
        // and the damaged page is never handed out.
        std::fs::OpenOptions::new().write(true).open(&path).expect("open").set_len(23 * PAGE as u64).expect("cut");
        for i in (0..=22).chain([24]).chain(26..=n) {
            assert!(e.get(page(i)).as_deref() == Some(&payload[page(i)]), "{i} kept");
        }
        assert!(e.get(20 * PAGE + 5..22 * PAGE + 9).as_deref() == Some(&payload[20 * PAGE + 5..22 * PAGE + 9]));
        for i in [23, 25] {
            assert!(e.get(page(i)).is_none(), "{i}");
        }
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }

    #[test]
    fn a_changed_or_cut_paged_entry_is_refused_where_it_changed() {
        let cache = scratch("corrupt");
        let payload: Vec<u8> = (0..2 * PAGE as u32 + 9).map(|i| (i % 253) as u8).collect();
        cache.put_paged("t.paged", &payload);
        let path = cache.dir().expect("dir").join("t.paged");
        let good = std::fs::read(&path).expect("file");
        // One byte of the second page changed in place: that page is refused, the others read.
        let mut bad = good.clone();
        bad[PAGE + 17] ^= 1;
        std::fs::write(&path, &bad).expect("write");
        let e = cache.open_paged("t.paged").expect("the trailer and checksums are intact");
        assert_eq!(e.read(0..10).as_deref(), Some(&payload[..10]));
        assert_eq!(e.read(PAGE..PAGE + 20), None);
        assert_eq!(e.read(0..2 * PAGE + 9), None, "a range over the changed page, read in one go");
        // Pages read as a run: refused when the run holds the changed page.
        assert_eq!(e.read_pages(0..1).as_deref(), Some(&payload[..PAGE]));
        assert_eq!(e.read_pages(2..3).as_deref(), Some(&payload[2 * PAGE..]));
        assert_eq!(e.read_pages(0..2), None);
        assert_eq!(e.read_pages(1..3), None);
        // A page checksum changed: the whole entry is refused.
        let mut bad = good.clone();
        bad[payload.len() + 1] ^= 1;
        std::fs::write(&path, &bad).expect("write");
        assert!(cache.open_paged("t.paged").is_none());
        // Cut short, or grown: refused.
        for cut in [good.len() - 1, good.len() / 2, 3, 0] {
            std::fs::write(&path, &good[..cut]).expect("write");
            assert!(cache.open_paged("t.paged").is_none(), "{cut}");
        }
        let mut grown = good.clone();
        grown.push(0);
        std::fs::write(&path, &grown).expect("write");
        assert!(cache.open_paged("t.paged").is_none());
        // Truncated under a live entry: the pages not read yet are refused, no crash.
        std::fs::write(&path, &good).expect("write");
        let e = cache.open_paged("t.paged").expect("entry");
        assert!(e.read(0..4).is_some());
        std::fs::OpenOptions::new().write(true).open(&path).expect("open").set_len(100).expect("truncate");
        assert_eq!(e.read(2 * PAGE..2 * PAGE + 9), None);
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }
}
