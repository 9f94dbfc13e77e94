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
        let blob = Blob::read_private_in(&bin, Some(dir)).ok()?;
        let crc = u32::from_le_bytes(h[32..36].try_into().unwrap_or_default());
        if blob.len() as u64 != word(24) || crc32fast::hash(&blob) != crc {
            return None;
        }
        Some((codec, blob, crc))
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
