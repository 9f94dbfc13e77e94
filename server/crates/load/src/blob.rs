//! Bytes of a kernel input held in memory: an owned buffer (decompressed data, small
//! files) or a read-only memory map of a private copy (large uncompressed files such as a
//! `-dbg` vmlinux). No file another process can change is ever mapped: a shared map of a
//! file truncated under it faults (SIGBUS) on the next read and kills fevlint.

use std::fmt;
use std::fs::File;
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::Arc;

use crate::error::LoadError;
use crate::fsio;

/// Files at least this large are copied into a private file and mapped rather than read
/// into memory.
pub const MMAP_THRESHOLD: u64 = 16 << 20;
/// The most bytes read from a file that reported a small size (procfs files report 0;
/// `/proc/kallsyms` is about 20 MiB): far above any real one, and bounded.
const READ_LIMIT: u64 = 1 << 30;

/// Shared, immutable bytes. Cloning is cheap (one `Arc`).
#[derive(Clone)]
pub struct Blob(Arc<Inner>);

enum Inner {
    Owned(Vec<u8>),
    /// Owned bytes in anonymous memory of their own (see [`read_anon`]): the range of
    /// the map that holds them.
    Anon(memmap2::Mmap, Range<usize>),
    Mapped(memmap2::Mmap),
}

impl Blob {
    pub fn from_vec(v: Vec<u8>) -> Blob {
        Blob(Arc::new(Inner::Owned(v)))
    }

    /// Reads `path`: into memory when small, else as a private copy (see
    /// [`Blob::read_private`]: the user's vmlinux is never mapped shared, so another
    /// process truncating it cannot crash fevlint). The result is the file's bytes as they
    /// are; nothing is decompressed here. Only regular files are read: a device, a FIFO or
    /// a socket is refused before reading (it could be endless, or block forever).
    pub fn read(path: &Path) -> Result<Blob, LoadError> {
        Blob::read_in(path, None)
    }

    /// [`Blob::read`], a large file's private copy made in `scratch` first (fevlint's
    /// cache directory, as the edge chose it), else beside the file.
    pub fn read_in(path: &Path, scratch: Option<&Path>) -> Result<Blob, LoadError> {
        let io = |error| LoadError::Io { path: path.to_owned(), error };
        let (file, len) = fsio::open_regular(path).map_err(|e| io(e.into_io()))?;
        if len >= MMAP_THRESHOLD {
            return private_copy(file, len, path, scratch);
        }
        // Small files and procfs/sysfs files (which report size 0 or 4096): read to the
        // end, the size only a hint, but never more than READ_LIMIT.
        match fsio::read_to_limit(file, len.min(MMAP_THRESHOLD), READ_LIMIT) {
            Ok(v) => Ok(Blob::from_vec(v)),
            Err(fsio::LimitedError::Io(e)) => Err(io(e)),
            Err(fsio::LimitedError::TooLarge) => Err(io(std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("grew past {READ_LIMIT} bytes while being read"),
            ))),
        }
    }

    /// Reads `path` into bytes no other process can change: in memory when small, else
    /// copied into an unlinked file of fevlint's own (`O_TMPFILE` in the cache directory
    /// or beside the file, filled by `copy_file_range`, a reflink where the file system
    /// has them) and mapped. Another program may truncate or rewrite the file at any time
    /// (a cache entry, a vmlinux being rebuilt), and a shared map of a truncated file
    /// faults (SIGBUS) on the next read; the copy is read with `read`, which only sees the
    /// file end early.
    pub fn read_private(path: &Path) -> Result<Blob, LoadError> {
        Blob::read_private_in(path, None)
    }

    /// [`Blob::read_private`], the copy made in `scratch` first (see [`Blob::read_in`]).
    pub fn read_private_in(path: &Path, scratch: Option<&Path>) -> Result<Blob, LoadError> {
        let io = |error| LoadError::Io { path: path.to_owned(), error };
        let (file, len) = fsio::open_regular(path).map_err(|e| io(e.into_io()))?;
        if len < MMAP_THRESHOLD {
            let mut file = file;
            if let Some(blob) = read_anon(&mut file, len).map_err(io)? {
                return Ok(blob);
            }
            return match fsio::read_to_limit(file, len, MMAP_THRESHOLD) {
                Ok(v) => Ok(Blob::from_vec(v)),
                Err(fsio::LimitedError::Io(e)) => Err(io(e)),
                Err(fsio::LimitedError::TooLarge) => Err(io(std::io::Error::other("grew while being read"))),
            };
        }
        private_copy(file, len, path, scratch)
    }

    /// Whether the bytes are a memory map of the file (as opposed to an owned copy).
    pub fn is_mapped(&self) -> bool {
        matches!(*self.0, Inner::Mapped(_))
    }

    /// A sub-range that keeps this blob alive. `None` if `range` is out of bounds.
    pub fn slice(&self, range: Range<usize>) -> Option<BlobSlice> {
        if range.start > range.end || range.end > self.len() {
            return None;
        }
        Some(BlobSlice { blob: self.clone(), range })
    }

    /// The whole blob as a slice.
    pub fn whole(&self) -> BlobSlice {
        BlobSlice { blob: self.clone(), range: 0..self.len() }
    }
}

/// The `len` bytes of the open `file` (named `path`) as a map of a private copy: in
/// `scratch` when given (fevlint's cache directory), else beside the file; where neither
/// can hold it (a read-only folder, a full disk), read into memory. A file that ends
/// before `len` (truncated while copied) is an error, never a short blob.
fn private_copy(mut file: File, len: u64, path: &Path, scratch: Option<&Path>) -> Result<Blob, LoadError> {
    let io = |error| LoadError::Io { path: path.to_owned(), error };
    let changed = || io(std::io::Error::other(format!("changed while being read (it was {len} bytes)")));
    let beside = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    for dir in scratch.into_iter().chain([beside]) {
        let Ok(mut copy) = private_file(dir) else { continue };
        match std::io::copy(&mut file, &mut copy) {
            Ok(n) if n == len => return map(&copy).map(|m| Blob(Arc::new(Inner::Mapped(m)))).map_err(io),
            Ok(_) => return Err(changed()),
            // The copy could not be written (a full disk): start again from the top of
            // the file in the next place.
            Err(_) => {
                use std::io::Seek;
                file.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
            }
        }
    }
    match fsio::read_to_limit(file, len, len) {
        Ok(v) if v.len() as u64 == len => Ok(Blob::from_vec(v)),
        Ok(_) | Err(fsio::LimitedError::TooLarge) => Err(changed()),
        Err(fsio::LimitedError::Io(e)) => Err(io(e)),
    }
}

/// Files at least this large (a kernel's BTF, its name tables in the cache) are read into
/// anonymous memory advised for huge pages rather than a `Vec`: the same copy, with a
/// page fault per 2 MiB instead of per 4 KiB (a fifth of a warm four-kernel check was
/// spent faulting in freshly allocated pages).
const ANON_THRESHOLD: u64 = 2 << 20;
/// The transparent huge page of x86-64 (and of arm64 with 4 KiB pages). Only a whole
/// aligned one inside a map can back it: the bytes start at such a boundary, and the map
/// reaches past the one their end falls in, or a 3 MiB file read into a map wherever
/// mmap put it got at most one huge page and faulted in the rest 4 KiB at a time.
const HUGE_PAGE: usize = 2 << 20;

/// The `len` bytes of `file` (read from its start) in anonymous memory of their own:
/// owned bytes, no file behind them, so nothing another process does to the file can
/// reach them. `None` (the file rewound) when `len` is small, the memory cannot be had,
/// or the file is not exactly `len` bytes long any more: then read it the ordinary way.
fn read_anon(file: &mut File, len: u64) -> std::io::Result<Option<Blob>> {
    use std::io::{Read, Seek};
    if len < ANON_THRESHOLD {
        return Ok(None);
    }
    // Untouched, the pages around the bytes cost address space only.
    let Ok(mut map) = memmap2::MmapOptions::new().len(len as usize + 2 * HUGE_PAGE).map_anon() else {
        return Ok(None);
    };
    #[cfg(target_os = "linux")]
    let _ = map.advise(memmap2::Advice::HugePage);
    let at = map.as_ptr().align_offset(HUGE_PAGE).min(HUGE_PAGE);
    let range = at..at + len as usize;
    let buf = &mut map[range.clone()];
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let mut probe = [0u8; 1];
    let at_end = loop {
        match file.read(&mut probe) {
            Ok(n) => break n == 0,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    if filled < buf.len() || !at_end {
        file.seek(std::io::SeekFrom::Start(0))?;
        return Ok(None);
    }
    Ok(Some(Blob(Arc::new(Inner::Anon(map.make_read_only()?, range)))))
}

/// A file in `dir` with no name (`O_TMPFILE`): only this process holds it, and the
/// space is freed when it is dropped. Where the file system has no `O_TMPFILE`, a new
/// file named after this process, unlinked at once.
fn private_file(dir: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true).write(true).mode(0o600);
    if let Ok(f) = opts.clone().custom_flags(libc::O_TMPFILE).open(dir) {
        return Ok(f);
    }
    for n in 0..100u32 {
        let p = dir.join(format!(".private-{}-{n}", std::process::id()));
        match opts.clone().create_new(true).open(&p) {
            Ok(f) => {
                std::fs::remove_file(&p)?;
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("no private file could be created"))
}

#[allow(unsafe_code)]
fn map(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: only files no other process can reach are mapped: unlinked private
    // copies made by `private_copy` (`O_TMPFILE`, or a name unlinked at once), so no
    // one can truncate or rewrite them while the map lives.
    unsafe { memmap2::Mmap::map(file) }
}

impl Deref for Blob {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &*self.0 {
            Inner::Owned(v) => v,
            Inner::Anon(m, range) => &m[range.clone()],
            Inner::Mapped(m) => m,
        }
    }
}

impl fmt::Debug for Blob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.is_mapped() { "mapped" } else { "owned" };
        write!(f, "Blob({kind}, {} bytes)", self.len())
    }
}

/// A range of a [`Blob`] (e.g. the `.BTF` section of a vmlinux), zero-copy.
#[derive(Clone)]
pub struct BlobSlice {
    blob: Blob,
    range: Range<usize>,
}

impl BlobSlice {
    /// Where this slice starts inside the underlying blob.
    pub fn range(&self) -> Range<usize> {
        self.range.clone()
    }

    pub fn blob(&self) -> &Blob {
        &self.blob
    }
}

impl Deref for BlobSlice {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // Invariant: `range` was checked against the blob's length in `Blob::slice`,
        // and a blob never changes length.
        &self.blob[self.range.clone()]
    }
}

impl fmt::Debug for BlobSlice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BlobSlice({:?} of {:?})", self.range, self.blob)
    }
}

impl AsRef<[u8]> for BlobSlice {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A large file read privately is a copy: truncating the original under it leaves
    /// every byte readable (a shared map would fault with SIGBUS).
    #[test]
    fn a_private_read_survives_truncation_of_the_file() {
        let dir = std::env::temp_dir().join(format!("fevlint-blob-private-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("big.bin");
        let bytes: Vec<u8> = (0..MMAP_THRESHOLD + 4096).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).expect("write");
        let blob = Blob::read_private(&path).expect("read");
        assert!(blob.is_mapped(), "a large file is a mapped private copy");
        std::fs::OpenOptions::new().write(true).open(&path).expect("open").set_len(0).expect("truncate");
        assert!(blob[..] == bytes[..]);
        // Nothing named is left beside the file.
        let names: Vec<_> = std::fs::read_dir(&dir).expect("dir").flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("big.bin")]);
        let small = dir.join("small.bin");
        std::fs::write(&small, b"abc").expect("write");
        let blob = Blob::read_private(&small).expect("read");
        assert!(!blob.is_mapped() && blob[..] == b"abc"[..]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A file between the huge-page size and the mapping threshold is read into anonymous
    /// memory of its own: the same bytes, owned (no file behind them: truncating the file
    /// changes nothing), and one of another length than announced is read the usual way.
    #[test]
    fn a_mid_sized_read_is_owned_anonymous_memory() {
        let dir = std::env::temp_dir().join(format!("fevlint-blob-anon-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("mid.bin");
        let bytes: Vec<u8> = (0..ANON_THRESHOLD * 3 / 2 + 7).map(|i| (i % 253) as u8).collect();
        std::fs::write(&path, &bytes).expect("write");
        let blob = Blob::read_private(&path).expect("read");
        assert!(matches!(*blob.0, Inner::Anon(..)) && !blob.is_mapped());
        assert_eq!(blob.as_ptr() as usize % HUGE_PAGE, 0, "the bytes start on a huge page");
        std::fs::OpenOptions::new().write(true).open(&path).expect("open").set_len(0).expect("truncate");
        assert!(blob[..] == bytes[..]);
        // Announced longer than it is (a file that shrank after its size was read).
        std::fs::write(&path, &bytes).expect("write");
        let (mut file, _) = fsio::open_regular(&path).expect("open");
        assert!(read_anon(&mut file, bytes.len() as u64 + 1).expect("read").is_none());
        assert!(read_anon(&mut file, bytes.len() as u64 - 1).expect("read").is_none(), "it grew");
        let whole = read_anon(&mut file, bytes.len() as u64).expect("read").expect("exact length");
        assert!(whole[..] == bytes[..]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
