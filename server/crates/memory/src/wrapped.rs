//! A dump in a gzip or xz wrapper (`dump.<stamp>.gz` from kdump-tools): sniffed,
//! bounded, and decompressed into an unlinked temporary file that is then read as the
//! dump itself.

use crate::error::Error;
use crate::kdump::KDUMP_SIGNATURE;
use crate::source::{Source, FLAT_SIGNATURE};
use std::fs::File;
use std::io::{Read, Write};
use std::path::PathBuf;

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
        || head.starts_with(KDUMP_SIGNATURE)
        || head.starts_with(b"DISKDUMP")
        || head.starts_with(FLAT_SIGNATURE)
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
    Source::map_file(path.clone(), &tmp).map_err(io)
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
