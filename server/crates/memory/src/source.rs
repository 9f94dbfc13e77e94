//! The bytes of a dump file: memory-mapped, in memory (tests, fuzzing), read with
//! `pread` (`/proc/kcore`, which cannot be mapped), or a flattened stream seen through its
//! record index as the file it describes.

use crate::error::Error;
use crate::flat::FlatIndex;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A read-only random-access byte source with the path used in error messages.
#[derive(Clone)]
pub struct Source {
    path: Arc<PathBuf>,
    inner: Arc<Inner>,
}

enum Inner {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
    /// A file read with `pread`; `len` is its size (for `/proc/kcore`, the size `stat` says).
    File(File, u64),
    Flat(FlatIndex),
    Empty,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &*self.inner {
            Inner::Mapped(_) => "mapped",
            Inner::Owned(_) => "in memory",
            Inner::File(..) => "pread",
            Inner::Flat(_) => "flattened",
            Inner::Empty => "empty",
        };
        write!(f, "Source({}, {kind}, {} bytes)", self.path.display(), self.len())
    }
}

#[allow(unsafe_code)]
fn map(file: &File) -> std::io::Result<memmap2::Mmap> {
    // SAFETY: the map is read-only and private to this process. If another process
    // truncates or rewrites the file while it is mapped, reads may see the new bytes or
    // fault (SIGBUS); that is the accepted risk of mapping a dump (as the server's blob
    // loader, ripgrep and gimli users accept it).
    unsafe { memmap2::Mmap::map(file) }
}

impl Source {
    /// Opens a file: mapped when it is a regular file, read with `pread` otherwise
    /// (`/proc/kcore` reports a huge size and cannot be mapped).
    pub fn open(path: &Path) -> Result<Source, Error> {
        let io = |source| Error::Io { path: path.to_path_buf(), source };
        let file = File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        let proc_file = path.starts_with("/proc");
        let inner = if meta.len() == 0 {
            Inner::Empty
        } else if proc_file || !meta.is_file() {
            Inner::File(file, meta.len())
        } else {
            Inner::Mapped(map(&file).map_err(io)?)
        };
        Ok(Source { path: Arc::new(path.to_path_buf()), inner: Arc::new(inner) })
    }

    /// Bytes already in memory (tests, fuzzing); `path` names them in messages.
    pub fn from_vec(path: &Path, bytes: Vec<u8>) -> Source {
        Source { path: Arc::new(path.to_path_buf()), inner: Arc::new(Inner::Owned(bytes)) }
    }

    /// The file a flattened stream reassembles to.
    pub fn flat(index: FlatIndex) -> Source {
        Source { path: Arc::new(index.path().to_path_buf()), inner: Arc::new(Inner::Flat(index)) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn len(&self) -> u64 {
        match &*self.inner {
            Inner::Mapped(m) => m.len() as u64,
            Inner::Owned(v) => v.len() as u64,
            Inner::File(_, n) => *n,
            Inner::Flat(f) => f.logical_len(),
            Inner::Empty => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole file as a slice, when it is mapped or in memory.
    pub fn as_slice(&self) -> Option<&[u8]> {
        match &*self.inner {
            Inner::Mapped(m) => Some(m),
            Inner::Owned(v) => Some(v),
            Inner::Empty => Some(&[]),
            Inner::File(..) | Inner::Flat(_) => None,
        }
    }

    /// `len` bytes at `offset` without copying, when the source is a slice.
    pub fn slice(&self, offset: u64, len: u64) -> Option<&[u8]> {
        let all = self.as_slice()?;
        let end = offset.checked_add(len)?;
        if end > all.len() as u64 {
            return None;
        }
        Some(&all[offset as usize..end as usize])
    }

    pub(crate) fn malformed(&self, offset: u64, what: impl Into<String>) -> Error {
        Error::Malformed { path: self.path().to_path_buf(), offset, what: what.into() }
    }

    /// Fills `buf` from `offset`, or says the file ends first.
    pub fn read_exact_at(&self, offset: u64, buf: &mut [u8]) -> Result<(), Error> {
        let end = offset.checked_add(buf.len() as u64);
        if end.is_none_or(|e| e > self.len()) {
            return Err(self.malformed(
                offset,
                format!("{} bytes needed but the file is {} bytes long (truncated?)", buf.len(), self.len()),
            ));
        }
        match &*self.inner {
            Inner::Mapped(_) | Inner::Owned(_) | Inner::Empty => {
                let s = self.slice(offset, buf.len() as u64).ok_or_else(|| self.malformed(offset, "out of range"))?;
                buf.copy_from_slice(s);
                Ok(())
            }
            Inner::File(f, _) => {
                f.read_exact_at(buf, offset).map_err(|source| Error::Io { path: self.path().to_path_buf(), source })
            }
            Inner::Flat(idx) => idx.read_exact_at(offset, buf),
        }
    }

    pub(crate) fn u32_at(&self, offset: u64, big_endian: bool) -> Result<u32, Error> {
        let mut b = [0u8; 4];
        self.read_exact_at(offset, &mut b)?;
        Ok(if big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
    }

    /// Reads `len` bytes into a new vector, after checking they exist (so `len` read
    /// from the file never sizes an allocation beyond the file).
    pub(crate) fn vec_at(&self, offset: u64, len: u64) -> Result<Vec<u8>, Error> {
        if offset.checked_add(len).is_none_or(|e| e > self.len()) {
            return Err(self.malformed(
                offset,
                format!("{len} bytes needed but the file is {} bytes long (truncated?)", self.len()),
            ));
        }
        let mut v = vec![0u8; len as usize];
        self.read_exact_at(offset, &mut v)?;
        Ok(v)
    }
}

/// How far a gzip or xz wrapper may expand: past `floor` bytes, at most `ratio` bytes
/// per compressed byte (as the kernel readers bound their decompressions). A dump inside
/// such a wrapper is makedumpfile's output (pages already compressed or excluded: 1-10x);
/// even raw memory dumps stay far below the default 1100:1, while a wrapped run of zeros
/// (a bomb) reaches 7000:1 and more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrapperLimits {
    pub ratio: u64,
    pub floor: u64,
}

impl Default for WrapperLimits {
    fn default() -> Self {
        WrapperLimits { ratio: 1100, floor: 64 << 20 }
    }
}

impl WrapperLimits {
    /// The most bytes `compressed` bytes may decompress to.
    pub fn cap(&self, compressed: u64) -> u64 {
        compressed.saturating_mul(self.ratio).max(self.floor)
    }
}

/// How many bytes of the decompressed stream are looked at before any is written.
const SNIFF: usize = 1024;

/// Whether `head` (the first bytes of a wrapped stream) starts a dump this crate reads:
/// an ELF core, a compressed kdump or a flattened stream.
fn looks_like_dump(head: &[u8]) -> bool {
    (head.starts_with(b"\x7fELF") && head.get(16..18) == Some(&[4, 0]))
        || head.starts_with(crate::kdump::KDUMP_SIGNATURE)
        || head.starts_with(b"DISKDUMP")
        || head.starts_with(crate::flat::FLAT_SIGNATURE)
}

/// Decompresses a gzip- or xz-wrapped dump (`dump.<stamp>.gz` from kdump-tools with
/// `KDUMP_COMPRESSION`) into an unlinked temporary file and maps it: the size is bounded
/// by the disk, not by memory. The first KiB of the stream is sniffed before anything is
/// written (what is not a dump is refused at once), and the output is bounded by
/// `limits` (a bomb stops at its bound, not at the end of the disk).
pub(crate) fn unwrap_compressed(src: &Source, limits: &WrapperLimits) -> Result<Source, Error> {
    let path = src.path().to_path_buf();
    let io = |source| Error::Io { path: path.clone(), source };
    let data: Box<dyn Read + '_> = match src.as_slice() {
        Some(s) => Box::new(s),
        None => Box::new(SourceReader { src, pos: 0 }),
    };
    let mut magic = [0u8; 2];
    src.read_exact_at(0, &mut magic)?;
    let (mut reader, what): (Box<dyn Read + '_>, &str) = if magic == [0x1f, 0x8b] {
        (Box::new(flate2::read::MultiGzDecoder::new(data)), "gzip")
    } else {
        // 256 MiB of dictionary at most: xz -9 uses 64 MiB.
        (Box::new(lzma_rust2::XzReader::new_mem_limit(data, true, 256 * 1024)), "xz")
    };
    let broken = |e: std::io::Error| src.malformed(0, format!("decompressing the outer gzip/xz wrapper: {e}"));
    let mut head = vec![0u8; SNIFF];
    let mut got = 0;
    while got < SNIFF {
        match reader.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(broken(e)),
        }
    }
    head.truncate(got);
    if !looks_like_dump(&head) {
        let shown: String = head.iter().take(8).map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(" ");
        return Err(src.malformed(
            0,
            format!(
                "the {what} wrapper holds no core dump this reader knows (its first bytes are {}): refused before \
                 decompressing the rest",
                if shown.is_empty() { "none".to_owned() } else { shown }
            ),
        ));
    }
    let limit = limits.cap(src.len());
    let (tmp_path, mut tmp) = temp_file().map_err(io)?;
    let result = tmp
        .write_all(&head)
        .and_then(|()| std::io::copy(&mut reader.take(limit.saturating_add(1) - got as u64), &mut tmp))
        .and_then(|n| tmp.flush().map(|()| n + got as u64));
    // Unlinked at once: the map keeps the data alive and nothing is left behind.
    let _ = std::fs::remove_file(&tmp_path);
    let n = result.map_err(broken)?;
    if n > limit {
        return Err(src.malformed(
            0,
            format!(
                "the {what} wrapper expands past {limit} bytes ({}:1 past {} bytes): refused as a decompression bomb; \
                 decompress it yourself and pass the dump if it is real",
                limits.ratio, limits.floor
            ),
        ));
    }
    let len = tmp.metadata().map_err(io)?.len();
    let inner = if len == 0 { Inner::Empty } else { Inner::Mapped(map(&tmp).map_err(io)?) };
    Ok(Source { path: Arc::new(path), inner: Arc::new(inner) })
}

fn temp_file() -> std::io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir();
    loop {
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = dir.join(format!("fevlint-dump-{}-{n}", std::process::id()));
        match std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

struct SourceReader<'a> {
    src: &'a Source,
    pos: u64,
}

impl Read for SourceReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (self.src.len().saturating_sub(self.pos)).min(buf.len() as u64) as usize;
        self.src
            .read_exact_at(self.pos, &mut buf[..n])
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))?;
        self.pos += n as u64;
        Ok(n)
    }
}
