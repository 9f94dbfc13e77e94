//! The bytes of a dump file: read with `pread` (the user's dump files and `/proc/kcore`),
//! in memory (tests, fuzzing), memory-mapped (only fevlint's own unlinked temporaries), or
//! a flattened stream seen through its record index as the file it describes.
//!
//! A user's dump is never mapped: another program truncating it (a rotation, a copy
//! being rewritten) would make the next read of the map fault with SIGBUS and kill
//! fevlint; `pread` sees the file end and the reader says so.

mod flat;

pub use flat::FlatIndex;
pub(crate) use flat::FLAT_SIGNATURE;

use crate::error::Error;
use std::fs::File;
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
    // SAFETY: only called by `map_file` on fevlint's own unlinked temporaries (an
    // unwrapped dump), which no other process can reach, truncate or rewrite.
    unsafe { memmap2::Mmap::map(file) }
}

impl Source {
    /// Opens a file, read with `pread` (never mapped: see the module's doc; `/proc/kcore`
    /// reports a huge size and cannot be mapped anyway).
    pub fn open(path: &Path) -> Result<Source, Error> {
        let io = |source| Error::Io { path: path.to_path_buf(), source };
        let file = File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        let inner = if meta.len() == 0 { Inner::Empty } else { Inner::File(file, meta.len()) };
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

    /// An open file mapped as the bytes of `path` (the unlinked temporary an unwrapped
    /// dump is decompressed into).
    pub(crate) fn map_file(path: PathBuf, file: &File) -> std::io::Result<Source> {
        let len = file.metadata()?.len();
        let inner = if len == 0 { Inner::Empty } else { Inner::Mapped(map(file)?) };
        Ok(Source { path: Arc::new(path), inner: Arc::new(inner) })
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
