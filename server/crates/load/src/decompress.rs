//! Decompression of kernel inputs, chosen by the stream's magic bytes (never by file
//! extension): zstd, xz (with its BCJ filters), gzip, bzip2, lz4 legacy frames and
//! `.lzma`. Output is capped so that a decompression bomb is an error, not an OOM.

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use zstd::zstd_safe::{self, DCtx, DParameter, InBuffer, OutBuffer};

use crate::codec::Codec;
use crate::error::{FileOffset, LoadError};

const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
const XZ_MAGIC: [u8; 6] = [0xFD, b'7', b'z', b'X', b'Z', 0x00];
const GZIP_MAGIC: [u8; 2] = [0x1F, 0x8B];
const LZ4_LEGACY_MAGIC: u32 = 0x184C_2102;
/// The uncompressed size of every lz4 legacy block but the last.
const LZ4_LEGACY_BLOCK: usize = 8 << 20;
const ZSTD_SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const ZSTD_SKIPPABLE: u32 = 0x184D_2A50;

/// Whether `data` starts like an x86 bzImage (`HdrS` at 0x202, the boot-protocol
/// header's magic; [`crate::bzimage`] reads the rest).
pub fn is_bzimage(data: &[u8]) -> bool {
    data.get(0x202..0x206) == Some(b"HdrS")
}

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
    /// Past [`Self::ratio_floor`], the most bytes one stream may decompress to per
    /// compressed byte. Kernel images, BTF, System.map and configs compress 3-7x (the
    /// fixtures: BTF 3x, ftrace lists and configs 4x, System.map 5-7x; `xz -9e` adds
    /// little); 64x leaves ten times that, while a bomb (zeros: 10000x and more) stops
    /// after 64 times its own size instead of at `max_output`.
    pub max_ratio: u64,
    /// Output up to this size is allowed whatever the ratio: small files may compress
    /// very well, and decoding this much costs little.
    pub ratio_floor: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_output: 2 << 30, max_ratio: 64, ratio_floor: 64 << 20 }
    }
}

impl Limits {
    /// The most bytes a stream of `input` compressed bytes may decompress to.
    pub fn cap(&self, input: usize) -> u64 {
        let by_ratio = (input as u64).saturating_mul(self.max_ratio).max(self.ratio_floor);
        self.max_output.min(by_ratio)
    }

    /// How [`Self::cap`] was reached, for the error message.
    fn rule(&self, input: usize) -> String {
        if self.cap(input) == self.max_output {
            format!("the limit of {} bytes", self.max_output)
        } else {
            format!(
                "{} bytes, the most allowed from {input} compressed bytes ({}x the input, at least {} bytes: \
                 no kernel file compresses so well)",
                self.cap(input),
                self.max_ratio,
                self.ratio_floor
            )
        }
    }
}

/// What the decompressed bytes must start with. The first bytes are looked at before the
/// rest is decoded, so that a file of the wrong kind (or a bomb of zeros) stops at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Content {
    /// Anything.
    #[default]
    Any,
    /// BTF, an ELF, a bzImage or a tar archive: what `--kernel FILE` can be.
    KernelImage,
    /// Raw BTF (`0xEB9F`).
    Btf,
    /// An ELF (a bzImage payload).
    Elf,
    /// Text (System.map, kallsyms, config, ftrace lists): no NUL byte.
    Text,
}

/// How many decompressed bytes [`Content`] is judged by (a tar's magic is at 257, a
/// bzImage's at 0x202).
pub const SNIFF_LEN: usize = 1024;

impl Content {
    fn what(self) -> &'static str {
        match self {
            Content::Any => "anything",
            Content::KernelImage => "BTF, ELF, bzImage or a tar archive",
            Content::Btf => "raw BTF (0xEB9F magic)",
            Content::Elf => "an ELF (\\x7fELF magic)",
            Content::Text => "text (no NUL bytes)",
        }
    }

    /// Whether `prefix` (the first [`SNIFF_LEN`] decompressed bytes, or all of them when
    /// fewer) can start this content.
    pub fn accepts(self, prefix: &[u8]) -> bool {
        let btf = prefix.starts_with(&[0x9F, 0xEB]);
        let elf = prefix.starts_with(b"\x7fELF");
        match self {
            Content::Any => true,
            Content::KernelImage => btf || elf || is_bzimage(prefix) || is_tar(prefix),
            Content::Btf => btf,
            Content::Elf => elf,
            Content::Text => !prefix.contains(&0),
        }
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

    fn too_large(&self, codec: Codec, limits: &Limits, input: usize) -> LoadError {
        LoadError::TooLarge {
            path: self.path.to_owned(),
            codec,
            offset: FileOffset(self.base),
            limit: limits.cap(input),
            rule: limits.rule(input),
        }
    }

    fn wrong_content(&self, codec: Codec, content: Content, prefix: &[u8]) -> LoadError {
        LoadError::Unrecognized {
            path: self.path.to_owned(),
            message: format!(
                "decompressed with {codec} (stream at byte {}), but it starts with {:02x?}, not {}: \
                 stopped after the first {} decompressed bytes",
                FileOffset(self.base),
                &prefix[..prefix.len().min(8)],
                content.what(),
                prefix.len()
            ),
        }
    }
}

/// Judges the first decompressed bytes once: `out[start..]` is what this stream wrote.
struct Sniff {
    content: Content,
    start: usize,
    done: bool,
}

impl Sniff {
    fn new(content: Content, out: &[u8]) -> Sniff {
        Sniff { content, start: out.len(), done: content == Content::Any }
    }

    /// Checks once enough bytes are out, or at the end (`complete`).
    fn check(&mut self, out: &[u8], complete: bool, codec: Codec, origin: &Origin<'_>) -> Result<(), LoadError> {
        if self.done {
            return Ok(());
        }
        let got = &out[self.start..];
        if got.len() < SNIFF_LEN && !complete {
            return Ok(());
        }
        self.done = true;
        let prefix = &got[..got.len().min(SNIFF_LEN)];
        if self.content.accepts(prefix) {
            Ok(())
        } else {
            Err(origin.wrong_content(codec, self.content, prefix))
        }
    }
}

/// Decompresses `data`, which must be entirely a `codec` stream (several concatenated
/// streams are accepted where the format allows them; anything else after the stream
/// is an error). For the kernel's trailing 4-byte size see [`crate::bzimage`].
pub fn decompress(data: &[u8], codec: Codec, limits: &Limits, origin: Origin<'_>) -> Result<Vec<u8>, LoadError> {
    decompress_sized(data, codec, None, limits, origin)
}

/// [`decompress`], stopping as soon as the first decompressed bytes show that the output
/// is not `content` (a file of another kind, or a bomb of zeros).
pub fn decompress_as(
    data: &[u8],
    codec: Codec,
    content: Content,
    limits: &Limits,
    origin: Origin<'_>,
) -> Result<Vec<u8>, LoadError> {
    decompress_sized_as(data, codec, None, content, limits, origin)
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
    decompress_sized_as(data, codec, size, Content::Any, limits, origin)
}

/// [`decompress_sized`] with a [`Content`] check of the first bytes.
pub fn decompress_sized_as(
    data: &[u8],
    codec: Codec,
    size: Option<u64>,
    content: Content,
    limits: &Limits,
    origin: Origin<'_>,
) -> Result<Vec<u8>, LoadError> {
    let cap = limits.cap(data.len());
    let size = size.or_else(|| (codec == Codec::Zstd).then(|| zstd_content_size(data)).flatten());
    let size = size.filter(|&n| n <= (data.len() as u64).saturating_mul(MAX_RATIO) && n <= cap);
    // At least what kernel images compress to (3-5x); the vector grows past it if need be.
    let guess = (data.len() as u64).saturating_mul(5).min(cap).min(1 << 30);
    let mut out = Vec::with_capacity(size.unwrap_or(0).max(guess) as usize);
    let d = Decode { data, codec, limits, cap, origin, content };
    match codec {
        Codec::Zstd => zstd(&d, size.is_some(), &mut out)?,
        Codec::Xz => {
            let mem_kb = mem_limit_kb(cap);
            stream(&d, &mut out, |r| Ok(Box::new(lzma_rust2::XzReader::new_mem_limit(r, true, mem_kb))))?
        }
        Codec::Lzma => {
            let mem_kb = mem_limit_kb(cap);
            stream(&d, &mut out, |r| Ok(Box::new(lzma_rust2::LzmaReader::new_mem_limit(r, mem_kb, None)?)))?;
        }
        Codec::Gzip => stream(&d, &mut out, |r| Ok(Box::new(flate2::bufread::MultiGzDecoder::new(r))))?,
        Codec::Bzip2 => stream(&d, &mut out, |r| Ok(Box::new(bzip2::bufread::MultiBzDecoder::new(r))))?,
        Codec::Lz4Legacy => {
            lz4_legacy(&d, &mut out)?;
        }
    }
    Ok(out)
}

/// One decompression: its input, where it is, and what bounds it.
struct Decode<'a> {
    data: &'a [u8],
    codec: Codec,
    limits: &'a Limits,
    /// [`Limits::cap`] of the input.
    cap: u64,
    origin: Origin<'a>,
    content: Content,
}

impl Decode<'_> {
    fn too_large(&self) -> LoadError {
        self.origin.too_large(self.codec, self.limits, self.data.len())
    }
}

/// Detects the codec and decompresses; data without a known magic is returned as is
/// (`None`). Recognised but unsupported formats are an error.
pub fn decompress_auto(
    data: &[u8],
    limits: &Limits,
    origin: Origin<'_>,
) -> Result<Option<(Codec, Vec<u8>)>, LoadError> {
    decompress_auto_as(data, Content::Any, limits, origin)
}

/// [`decompress_auto`] with a [`Content`] check of the first decompressed bytes.
pub fn decompress_auto_as(
    data: &[u8],
    content: Content,
    limits: &Limits,
    origin: Origin<'_>,
) -> Result<Option<(Codec, Vec<u8>)>, LoadError> {
    if let Some(codec) = detect(data) {
        return decompress_as(data, codec, content, limits, origin).map(|v| Some((codec, v)));
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
fn mem_limit_kb(cap: u64) -> u32 {
    let bytes = cap.min(1 << 30) + (4 << 20);
    (bytes / 1024) as u32
}

type BoxRead<'r> = Box<dyn Read + 'r>;

/// Runs a `Read`-based decoder over `data`, tracking how much input it consumed (for the
/// error offset) and capping its output. The first [`SNIFF_LEN`] bytes are judged before
/// the rest is decoded.
fn stream<'d>(
    d: &Decode<'d>,
    out: &mut Vec<u8>,
    make: impl for<'r> FnOnce(&'r mut &'d [u8]) -> io::Result<BoxRead<'r>>,
) -> Result<(), LoadError> {
    let (data, codec, origin) = (d.data, d.codec, &d.origin);
    let mut rest: &'d [u8] = data;
    let mut sniff = Sniff::new(d.content, out);
    let start = out.len();
    let result = match make(&mut rest) {
        Ok(mut dec) => {
            let first = (SNIFF_LEN as u64).min(d.cap.saturating_add(1));
            match (&mut dec).take(first).read_to_end(out) {
                Ok(_) => {
                    let got = out.len() - start;
                    match sniff.check(out, (got as u64) < first, codec, origin) {
                        Ok(()) => read_capped(&mut dec, d.cap.saturating_sub(got as u64), out),
                        Err(e) => return Err(e),
                    }
                }
                Err(e) => Err(e),
            }
        }
        Err(e) => Err(e),
    };
    let consumed = data.len() - rest.len();
    match result {
        Ok(false) if consumed < data.len() => {
            Err(origin.corrupt(codec, consumed, "trailing bytes after the end of the stream"))
        }
        Ok(false) => Ok(()),
        Ok(true) => Err(d.too_large()),
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
fn zstd(d: &Decode<'_>, sized: bool, out: &mut Vec<u8>) -> Result<(), LoadError> {
    let (data, origin) = (d.data, &d.origin);
    let codec = Codec::Zstd;
    if d.content != Content::Any {
        // The first bytes, decoded on their own (one block at most), judged before the
        // whole stream is. A damaged start is left to the full decode to describe.
        if let Some((prefix, complete)) = zstd_prefix(data, SNIFF_LEN) {
            Sniff::new(d.content, &[]).check(&prefix, complete, codec, origin)?;
        }
    }
    if sized && zstd_safe::decompress(out, data).is_ok() {
        return Ok(());
    }
    out.clear();
    let corrupt = |at: usize, code: usize| origin.corrupt(codec, at, zstd_safe::get_error_name(code));
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX)).map_err(|code| corrupt(0, code))?;
    // One byte past the cap, so that reaching the cap exactly is not taken for more.
    let cap = d.cap.saturating_add(1);
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
        if out.len() as u64 > d.cap {
            return Err(d.too_large());
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

/// Up to `n` bytes from the start of a zstd stream, and whether that is the whole
/// output; `None` when the start cannot be decoded.
fn zstd_prefix(data: &[u8], n: usize) -> Option<(Vec<u8>, bool)> {
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX)).ok()?;
    let mut out: Vec<u8> = Vec::with_capacity(n);
    let mut pos = 0;
    while out.len() < n {
        let end = data.len().min(pos + DCtx::in_size());
        let mut input = InBuffer::around(&data[pos..end]);
        let len = out.len();
        let left = dctx.decompress_stream(&mut OutBuffer::around_pos(&mut out, len), &mut input).ok()?;
        let progressed = input.pos() > 0 || out.len() > len;
        pos += input.pos();
        if pos == data.len() && left == 0 {
            return Some((out, true));
        }
        if !progressed {
            return None;
        }
    }
    Some((out, false))
}

/// lz4 legacy format: magic, then blocks of `u32 LE compressed size` + data, each
/// decompressing to 8 MiB (the last one to less). A repeated magic starts a new frame.
/// The kernel appends the 4-byte uncompressed size; four bytes left at the end are taken
/// as that size and checked.
fn lz4_legacy(d: &Decode<'_>, out: &mut Vec<u8>) -> Result<(), LoadError> {
    let (data, origin) = (d.data, &d.origin);
    let codec = Codec::Lz4Legacy;
    let mut sniff = Sniff::new(d.content, out);
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
        let room = d.cap.saturating_sub(out.len() as u64);
        let cap = (LZ4_LEGACY_BLOCK as u64).min(room) as usize;
        let old = out.len();
        out.resize(old + cap, 0);
        match lz4_flex::block::decompress_into(block, &mut out[old..]) {
            Ok(got) => out.truncate(old + got),
            Err(lz4_flex::block::DecompressError::OutputTooSmall { .. }) if cap < LZ4_LEGACY_BLOCK => {
                return Err(d.too_large());
            }
            Err(e) => return Err(origin.corrupt(codec, start, e)),
        }
        pos = start + n;
        sniff.check(out, false, codec, origin)?;
    }
    sniff.check(out, true, codec, origin)?;
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

/// Why [`decompress_to`] stopped: the input (an error about the file), or the writer.
#[derive(Debug)]
pub enum ToError {
    Load(LoadError),
    Write(io::Error),
}

impl From<LoadError> for ToError {
    fn from(e: LoadError) -> ToError {
        ToError::Load(e)
    }
}

/// Streamed output: judged by its first bytes, counted against the cap, written on.
struct Sink<'a, 'w> {
    d: &'a Decode<'a>,
    w: &'w mut dyn io::Write,
    written: u64,
    /// The first bytes, held until judged.
    head: Vec<u8>,
    judged: bool,
}

impl Sink<'_, '_> {
    fn push(&mut self, bytes: &[u8]) -> Result<(), ToError> {
        self.written += bytes.len() as u64;
        if self.written > self.d.cap {
            return Err(self.d.too_large().into());
        }
        if self.judged {
            return self.w.write_all(bytes).map_err(ToError::Write);
        }
        self.head.extend_from_slice(bytes);
        if self.head.len() >= SNIFF_LEN {
            self.judge(false)?;
        }
        Ok(())
    }

    fn judge(&mut self, complete: bool) -> Result<(), ToError> {
        Sniff::new(self.d.content, &[]).check(&self.head, complete, self.d.codec, &self.d.origin)?;
        self.judged = true;
        let head = std::mem::take(&mut self.head);
        self.w.write_all(&head).map_err(ToError::Write)
    }

    fn finish(mut self) -> Result<u64, ToError> {
        if !self.judged {
            self.judge(true)?;
        }
        Ok(self.written)
    }
}

/// Decompresses `data` into `w` in pieces of at most a few MiB, so that a large payload
/// goes to a file (the cache) instead of memory; the same checks as [`decompress_as`]:
/// first bytes, size and ratio caps. Returns the number of bytes written.
pub fn decompress_to(
    data: &[u8],
    codec: Codec,
    content: Content,
    limits: &Limits,
    origin: Origin<'_>,
    w: &mut dyn io::Write,
) -> Result<u64, ToError> {
    let cap = limits.cap(data.len());
    let d = Decode { data, codec, limits, cap, origin, content };
    let mut sink = Sink { d: &d, w, written: 0, head: Vec::new(), judged: content == Content::Any };
    match codec {
        Codec::Zstd => zstd_to(&d, &mut sink)?,
        Codec::Xz => {
            let mem_kb = mem_limit_kb(cap);
            stream_to(&d, &mut sink, |r| Ok(Box::new(lzma_rust2::XzReader::new_mem_limit(r, true, mem_kb))))?
        }
        Codec::Lzma => {
            let mem_kb = mem_limit_kb(cap);
            stream_to(&d, &mut sink, |r| Ok(Box::new(lzma_rust2::LzmaReader::new_mem_limit(r, mem_kb, None)?)))?
        }
        Codec::Gzip => stream_to(&d, &mut sink, |r| Ok(Box::new(flate2::bufread::MultiGzDecoder::new(r))))?,
        Codec::Bzip2 => stream_to(&d, &mut sink, |r| Ok(Box::new(bzip2::bufread::MultiBzDecoder::new(r))))?,
        Codec::Lz4Legacy => {
            // Blocks of 8 MiB at most: decoded in memory, block by block would gain little.
            let mut out = Vec::new();
            lz4_legacy(&d, &mut out)?;
            sink.push(&out)?;
        }
    }
    sink.finish()
}

/// [`stream`], into a [`Sink`].
fn stream_to<'d>(
    d: &Decode<'d>,
    sink: &mut Sink<'_, '_>,
    make: impl for<'r> FnOnce(&'r mut &'d [u8]) -> io::Result<BoxRead<'r>>,
) -> Result<(), ToError> {
    let (data, codec, origin) = (d.data, d.codec, &d.origin);
    let mut rest: &'d [u8] = data;
    let mut failed = None;
    match make(&mut rest) {
        Ok(mut dec) => {
            let mut buf = vec![0u8; 1 << 20];
            loop {
                match dec.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => sink.push(&buf[..n])?,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
        }
        Err(e) => failed = Some(e),
    }
    let consumed = data.len() - rest.len();
    match failed {
        Some(e) => Err(origin.corrupt(codec, consumed, describe(&e)).into()),
        None if consumed < data.len() => {
            Err(origin.corrupt(codec, consumed, "trailing bytes after the end of the stream").into())
        }
        None => Ok(()),
    }
}

/// [`zstd`]'s streaming loop, into a [`Sink`] through a 1 MiB buffer.
fn zstd_to(d: &Decode<'_>, sink: &mut Sink<'_, '_>) -> Result<(), ToError> {
    let (data, origin) = (d.data, &d.origin);
    let codec = Codec::Zstd;
    let corrupt = |at: usize, code: usize| origin.corrupt(codec, at, zstd_safe::get_error_name(code));
    let mut dctx = DCtx::create();
    dctx.set_parameter(DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX)).map_err(|code| corrupt(0, code))?;
    let mut chunk: Vec<u8> = Vec::with_capacity(1 << 20);
    let mut pos = 0;
    loop {
        let end = data.len().min(pos + DCtx::in_size());
        let mut input = InBuffer::around(&data[pos..end]);
        chunk.clear();
        let left = dctx.decompress_stream(&mut OutBuffer::around_pos(&mut chunk, 0), &mut input);
        let left = left.map_err(|code| corrupt(end, code))?;
        pos += input.pos();
        sink.push(&chunk)?;
        if pos == data.len() {
            if left == 0 {
                return Ok(());
            }
            if chunk.len() < chunk.capacity() {
                return Err(origin.corrupt(codec, pos, "truncated: the stream ends inside a frame").into());
            }
        }
    }
}
