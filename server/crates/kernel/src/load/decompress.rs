//! Decompression of kernel inputs, chosen by the stream's magic bytes (never by file
//! extension): zstd, xz (with its BCJ filters), gzip, bzip2, lz4 legacy frames and
//! `.lzma`. Output is capped so that a decompression bomb is an error, not an OOM.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use zstd::zstd_safe::{self, DCtx, DParameter, InBuffer, OutBuffer};

use super::error::{FileOffset, LoadError};

/// A compression format fevlint can read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Codec {
    Zstd,
    /// The `.xz` container (LZMA2 plus optional BCJ/delta filters, e.g. the kernel's
    /// `--x86` payloads).
    Xz,
    Gzip,
    Bzip2,
    /// lz4 legacy frames (`lz4 -l`, magic 0x184C2102, 8 MiB blocks), as the kernel uses.
    Lz4Legacy,
    /// The `.lzma` "alone" format (13-byte header, no container).
    Lzma,
}

impl Codec {
    pub const ALL: [Codec; 6] = [Codec::Zstd, Codec::Xz, Codec::Gzip, Codec::Bzip2, Codec::Lz4Legacy, Codec::Lzma];

    pub fn name(self) -> &'static str {
        match self {
            Codec::Zstd => "zstd",
            Codec::Xz => "xz",
            Codec::Gzip => "gzip",
            Codec::Bzip2 => "bzip2",
            Codec::Lz4Legacy => "lz4 (legacy)",
            Codec::Lzma => "lzma",
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const XZ_MAGIC: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];
const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
const LZ4_LEGACY_MAGIC: u32 = 0x184C_2102;
/// The uncompressed size of every lz4 legacy block but the last.
const LZ4_LEGACY_BLOCK: usize = 8 << 20;
const ZSTD_SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const ZSTD_SKIPPABLE: u32 = 0x184D_2A50;

/// Compression formats recognised by their magic but not supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsupportedCodec {
    /// lzop (`CONFIG_KERNEL_LZO`), magic `\x89LZO`.
    Lzo,
    /// The modern lz4 frame format (magic 0x184D2204); the kernel writes legacy frames.
    Lz4Frame,
}

/// Recognises a compressed stream by its first bytes.
pub fn detect(data: &[u8]) -> Option<Codec> {
    if data.starts_with(&ZSTD_MAGIC) {
        return Some(Codec::Zstd);
    }
    if let Some(m) = le32(data, 0) {
        if m & ZSTD_SKIPPABLE_MASK == ZSTD_SKIPPABLE {
            return Some(Codec::Zstd);
        }
        if m == LZ4_LEGACY_MAGIC {
            return Some(Codec::Lz4Legacy);
        }
    }
    if data.starts_with(&XZ_MAGIC) {
        return Some(Codec::Xz);
    }
    if data.starts_with(&GZIP_MAGIC) && data.get(2) == Some(&8) {
        return Some(Codec::Gzip);
    }
    if data.len() >= 4 && &data[..3] == b"BZh" && (b'1'..=b'9').contains(&data[3]) {
        return Some(Codec::Bzip2);
    }
    if looks_like_lzma_alone(data) {
        return Some(Codec::Lzma);
    }
    None
}

/// Recognises magics of formats that are not decoded, for a better error message.
pub fn detect_unsupported(data: &[u8]) -> Option<UnsupportedCodec> {
    if data.starts_with(b"\x89LZO\x00\r\n\x1a\n") {
        return Some(UnsupportedCodec::Lzo);
    }
    if le32(data, 0) == Some(0x184D_2204) {
        return Some(UnsupportedCodec::Lz4Frame);
    }
    None
}

/// The `.lzma` format has no magic; this is the heuristic of xz-utils' `lzma_alone`
/// decoder: a valid lc/lp/pb byte, a dictionary size of 2^n or 2^n + 2^(n-1) (or
/// all ones), and an uncompressed size that is unknown (all ones) or below 256 GiB.
fn looks_like_lzma_alone(data: &[u8]) -> bool {
    let (Some(&props), Some(dict), Some(size)) = (data.first(), le32(data, 1), le64(data, 5)) else {
        return false;
    };
    if props >= 9 * 5 * 5 {
        return false;
    }
    let dict_ok = dict == u32::MAX || {
        // Round up to 2^n or 2^n + 2^(n-1), as lzma_alone_decoder does.
        let mut d = dict.wrapping_sub(1);
        d |= d >> 2;
        d |= d >> 3;
        d |= d >> 4;
        d |= d >> 8;
        d |= d >> 16;
        d = d.wrapping_add(1);
        d == dict && dict >= 4096
    };
    dict_ok && (size == u64::MAX || size < (1 << 38))
}

/// Limits applied to every decompression.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The most bytes one stream may decompress to; more is an error.
    pub max_output: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_output: 2 << 30 }
    }
}

/// Where the compressed bytes are, for error messages: the file and the byte offset of
/// the stream's first byte inside it.
#[derive(Clone, Copy, Debug)]
pub struct Origin<'a> {
    pub path: &'a Path,
    pub base: u64,
}

impl<'a> Origin<'a> {
    pub fn file(path: &'a Path) -> Origin<'a> {
        Origin { path, base: 0 }
    }

    fn corrupt(&self, codec: Codec, at: usize, message: impl fmt::Display) -> LoadError {
        LoadError::Corrupt {
            path: self.path.to_owned(),
            codec,
            offset: FileOffset(self.base + at as u64),
            message: message.to_string(),
        }
    }

    fn too_large(&self, codec: Codec, limits: &Limits) -> LoadError {
        LoadError::TooLarge {
            path: self.path.to_owned(),
            codec,
            offset: FileOffset(self.base),
            limit: limits.max_output,
        }
    }
}

/// Decompresses `data`, which must be entirely a `codec` stream (several concatenated
/// streams are accepted where the format allows them; anything else after the stream
/// is an error). For the kernel's trailing 4-byte size see [`super::bzimage`].
pub fn decompress(data: &[u8], codec: Codec, limits: &Limits, origin: Origin<'_>) -> Result<Vec<u8>, LoadError> {
    decompress_sized(data, codec, None, limits, origin)
}

/// A declared output size larger than this many times the input is not believed: no
/// buffer is sized by it (the output may still grow past it). Kernel images and the
/// text files beside them compress 3-8x.
const MAX_RATIO: u64 = 32;

/// [`decompress`], told the output size the caller expects (the bzImage `size_append`
/// trailer), so that the output buffer is made once at that size. The caller checks the
/// result against it; a wrong size costs time, not correctness.
pub fn decompress_sized(
    data: &[u8],
    codec: Codec,
    size: Option<u64>,
    limits: &Limits,
    origin: Origin<'_>,
) -> Result<Vec<u8>, LoadError> {
    let size = size.or_else(|| (codec == Codec::Zstd).then(|| zstd_content_size(data)).flatten());
    let size = size.filter(|&n| n <= (data.len() as u64).saturating_mul(MAX_RATIO) && n <= limits.max_output);
    // At least what kernel images compress to (3-5x); the vector grows past it if need be.
    let guess = (data.len() as u64).saturating_mul(5).min(limits.max_output).min(1 << 30);
    let mut out = Vec::with_capacity(size.unwrap_or(0).max(guess) as usize);
    match codec {
        Codec::Zstd => zstd(data, size.is_some(), limits, origin, &mut out)?,
        Codec::Xz => {
            let mem_kb = mem_limit_kb(limits);
            stream(data, codec, limits, origin, &mut out, |r| {
                Ok(Box::new(lzma_rust2::XzReader::new_mem_limit(r, true, mem_kb)))
            })?
        }
        Codec::Lzma => {
            let mem_kb = mem_limit_kb(limits);
            stream(data, codec, limits, origin, &mut out, |r| {
                Ok(Box::new(lzma_rust2::LzmaReader::new_mem_limit(r, mem_kb, None)?))
            })?;
        }
        Codec::Gzip => {
            stream(data, codec, limits, origin, &mut out, |r| Ok(Box::new(flate2::bufread::MultiGzDecoder::new(r))))?
        }
        Codec::Bzip2 => {
            stream(data, codec, limits, origin, &mut out, |r| Ok(Box::new(bzip2::bufread::MultiBzDecoder::new(r))))?
        }
        Codec::Lz4Legacy => {
            lz4_legacy(data, limits, origin, &mut out)?;
        }
    }
    Ok(out)
}

/// Detects the codec and decompresses; data without a known magic is returned as is
/// (`None`). Recognised but unsupported formats are an error.
pub fn decompress_auto(
    data: &[u8],
    limits: &Limits,
    origin: Origin<'_>,
) -> Result<Option<(Codec, Vec<u8>)>, LoadError> {
    if let Some(codec) = detect(data) {
        return decompress(data, codec, limits, origin).map(|v| Some((codec, v)));
    }
    if let Some(u) = detect_unsupported(data) {
        return Err(LoadError::Unrecognized {
            path: origin.path.to_owned(),
            message: format!("{u:?} compression is not supported (byte {})", origin.base),
        });
    }
    Ok(None)
}

/// The dictionary memory an xz/lzma header may ask for, in KiB: no more than the output
/// cap (a dictionary larger than the whole output is of no use) and at most 1 GiB.
fn mem_limit_kb(limits: &Limits) -> u32 {
    let bytes = limits.max_output.min(1 << 30) + (4 << 20);
    (bytes / 1024) as u32
}

type BoxRead<'r> = Box<dyn Read + 'r>;

/// Runs a `Read`-based decoder over `data`, tracking how much input it consumed (for the
/// error offset) and capping its output.
fn stream<'d>(
    data: &'d [u8],
    codec: Codec,
    limits: &Limits,
    origin: Origin<'_>,
    out: &mut Vec<u8>,
    make: impl for<'r> FnOnce(&'r mut &'d [u8]) -> io::Result<BoxRead<'r>>,
) -> Result<(), LoadError> {
    let mut rest: &'d [u8] = data;
    let result = match make(&mut rest) {
        Ok(mut dec) => read_capped(&mut dec, limits.max_output, out),
        Err(e) => Err(e),
    };
    let consumed = data.len() - rest.len();
    match result {
        Ok(false) if consumed < data.len() => {
            Err(origin.corrupt(codec, consumed, "trailing bytes after the end of the stream"))
        }
        Ok(false) => Ok(()),
        Ok(true) => Err(origin.too_large(codec, limits)),
        Err(e) => Err(origin.corrupt(codec, consumed, describe(&e))),
    }
}

fn describe(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => format!("truncated ({e})"),
        _ => e.to_string(),
    }
}

/// Reads everything from `r` into `out`, at most `limit` bytes. Returns whether the
/// stream had more than `limit` bytes.
fn read_capped(r: &mut dyn Read, limit: u64, out: &mut Vec<u8>) -> io::Result<bool> {
    let start = out.len() as u64;
    r.take(limit.saturating_add(1)).read_to_end(out)?;
    Ok(out.len() as u64 - start > limit)
}

/// The largest window a zstd frame may ask for when streamed: 2^28 = 256 MiB, twice what
/// the kernel's `zstd -22 --ultra` uses. libzstd allocates the window up front.
const ZSTD_WINDOW_LOG_MAX: u32 = 28;

/// The content size a zstd stream declares, if it is one frame that declares it.
fn zstd_content_size(data: &[u8]) -> Option<u64> {
    let one_frame = zstd_safe::find_frame_compressed_size(data).ok()? == data.len();
    zstd_safe::get_frame_content_size(data).ok().flatten().filter(|_| one_frame)
}

/// `sized`: `out` has room for the whole output (the frame header or the caller said
/// how large it is). Then libzstd decodes in one pass straight into `out`, with no window
/// buffer and no copy: as fast as `zstd -d`. If that fails (a wrong size, a damaged
/// stream), streaming starts over and tells what is wrong and where.
fn zstd(data: &[u8], sized: bool, limits: &Limits, origin: Origin<'_>, out: &mut Vec<u8>) -> Result<(), LoadError> {
    if sized && zstd_safe::decompress(out, data).is_ok() {
        return Ok(());
    }
    out.clear();
    let codec = Codec::Zstd;
    let corrupt = |at: usize, code: usize| origin.corrupt(codec, at, zstd_safe::get_error_name(code));
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX)).map_err(|code| corrupt(0, code))?;
    // One byte past the cap, so that reaching the cap exactly is not taken for more.
    let cap = limits.max_output.saturating_add(1);
    let mut pos = 0;
    loop {
        if out.len() == out.capacity() {
            // Double (by 1 MiB at least), never past the cap.
            let room = cap.saturating_sub(out.len() as u64);
            out.reserve_exact(room.min(out.len().max(1 << 20) as u64) as usize);
        }
        // A block's worth of input at a time, so that an error is placed within a block.
        let end = data.len().min(pos + DCtx::in_size());
        let mut input = InBuffer::around(&data[pos..end]);
        let len = out.len();
        let left = dctx.decompress_stream(&mut OutBuffer::around_pos(out, len), &mut input);
        let left = left.map_err(|code| corrupt(end, code))?;
        pos += input.pos();
        if out.len() as u64 > limits.max_output {
            return Err(origin.too_large(codec, limits));
        }
        if pos == data.len() {
            if left == 0 {
                return Ok(());
            }
            if out.len() < out.capacity() {
                return Err(origin.corrupt(codec, pos, "truncated: the stream ends inside a frame"));
            }
        }
    }
}

/// lz4 legacy format: magic, then blocks of `u32 LE compressed size` + data, each
/// decompressing to 8 MiB (the last one to less). A repeated magic starts a new frame.
/// The kernel appends the 4-byte uncompressed size; four bytes left at the end are taken
/// as that size and checked.
fn lz4_legacy(data: &[u8], limits: &Limits, origin: Origin<'_>, out: &mut Vec<u8>) -> Result<(), LoadError> {
    let codec = Codec::Lz4Legacy;
    if le32(data, 0) != Some(LZ4_LEGACY_MAGIC) {
        return Err(origin.corrupt(codec, 0, "no lz4 legacy magic"));
    }
    // LZ4_compressBound(8 MiB): the largest a block can legitimately be.
    let bound = LZ4_LEGACY_BLOCK + LZ4_LEGACY_BLOCK / 255 + 16;
    let mut pos = 4usize;
    while pos < data.len() {
        let Some(n) = le32(data, pos) else {
            return Err(origin.corrupt(codec, pos, "truncated block header"));
        };
        if n == LZ4_LEGACY_MAGIC {
            pos += 4;
            continue;
        }
        if data.len() - pos == 4 && !out.is_empty() {
            // The kernel's size_append trailer.
            if n != out.len() as u32 {
                return Err(LoadError::SizeMismatch {
                    path: origin.path.to_owned(),
                    codec,
                    offset: FileOffset(origin.base + pos as u64),
                    message: format!("trailing size {n} does not match the {} bytes decompressed", out.len()),
                });
            }
            break;
        }
        let n = n as usize;
        if n > bound {
            return Err(origin.corrupt(codec, pos, format!("block size {n} exceeds {bound}")));
        }
        let start = pos + 4;
        let Some(block) = data.get(start..start + n) else {
            return Err(origin.corrupt(codec, pos, format!("truncated block of {n} bytes")));
        };
        let room = limits.max_output - out.len() as u64;
        let cap = (LZ4_LEGACY_BLOCK as u64).min(room) as usize;
        let old = out.len();
        out.resize(old + cap, 0);
        match lz4_flex::block::decompress_into(block, &mut out[old..]) {
            Ok(got) => out.truncate(old + got),
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if cap < LZ4_LEGACY_BLOCK => {
                return Err(origin.too_large(codec, limits));
            }
            Err(e) => return Err(origin.corrupt(codec, start, e)),
        }
        pos = start + n;
    }
    Ok(())
}

pub(crate) fn le32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

pub(crate) fn le16(data: &[u8], at: usize) -> Option<u16> {
    let b = data.get(at..at.checked_add(2)?)?;
    Some(u16::from_le_bytes([b[0], b[1]]))
}

pub(crate) fn le64(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    Some(u64::from_le_bytes(a))
}

/// Whether `data` is a tar archive (POSIX `ustar` magic at byte 257).
pub fn is_tar(data: &[u8]) -> bool {
    data.get(257..262) == Some(b"ustar")
}

/// Finds the one member of an in-memory tar archive whose name ends with `suffix` (e.g.
/// `.btf` in a BTFHub `.btf.tar.xz`) and returns its name and byte range in `data`.
/// Nothing is written to disk.
pub fn tar_member(data: &[u8], suffix: &str, path: &Path) -> Result<(String, std::ops::Range<usize>), LoadError> {
    let err = |message: String| LoadError::Tar { path: path.to_owned(), message };
    let mut archive = tar::Archive::new(data);
    let entries = archive.entries().map_err(|e| err(e.to_string()))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| err(e.to_string()))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = entry.path().map_err(|e| err(e.to_string()))?.display().to_string();
        if name.ends_with(suffix) {
            let start = entry.raw_file_position() as usize;
            let len = entry.size() as usize;
            let end = start
                .checked_add(len)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| err(format!("member {name} runs past the end of the archive")))?;
            found.push((name, start..end));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(err(format!("no member named *{suffix}"))),
        _ => Err(err(format!(
            "{} members named *{suffix}: {}",
            found.len(),
            found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>().join(", ")
        ))),
    }
}
