//! x86 bzImage (`vmlinuz`): the boot-protocol header, and the compressed payload it
//! points at, decompressed to the ELF vmlinux.
//!
//! The payload is found through `payload_offset`/`payload_length` (boot protocol 2.08
//! and later) and its codec from the magic at that exact offset; nothing is scanned for
//! (a scan finds magic-like bytes inside other streams).

use std::path::Path;

use crate::codec::Codec;
use crate::decompress::{self, is_bzimage, le16, le32, Content, Limits, Origin};
use crate::error::{FileOffset, LoadError};

const SETUP_SECTS: usize = 0x1f1;
const BOOT_FLAG: usize = 0x1fe;
const HEADER_MAGIC: usize = 0x202;
const VERSION: usize = 0x206;
const PAYLOAD_OFFSET: usize = 0x248;
const PAYLOAD_LENGTH: usize = 0x24c;
const INIT_SIZE: usize = 0x260;
/// The first protocol with `payload_offset`/`payload_length`.
const MIN_PROTOCOL: u16 = 0x0208;

/// The fields of the x86 boot-protocol header that locate the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BzImageHeader {
    /// Boot protocol version, e.g. `(2, 15)`.
    pub protocol: (u8, u8),
    /// Setup sectors after the boot sector (a stored 0 means 4).
    pub setup_sects: u32,
    /// Relative to the protected-mode kernel.
    pub payload_offset: u32,
    pub payload_length: u32,
    /// Where the payload starts in the file: `(setup_sects + 1) * 512 + payload_offset`.
    pub payload_file_offset: u64,
    pub codec: Codec,
    /// The kernel's `init_size` (protocol 2.10+): the memory the decompressed kernel
    /// needs, a sanity bound for the ELF size.
    pub init_size: Option<u32>,
    /// The uncompressed size the build appended after the stream (`size_append`, all
    /// codecs but gzip), when present.
    pub trailer_size: Option<u32>,
}

/// Parses the header and locates the payload. Errors name the header field's offset.
pub fn parse_header(data: &[u8], path: &Path) -> Result<BzImageHeader, LoadError> {
    let err = |at: usize, message: String| LoadError::BzImage {
        path: path.to_owned(),
        offset: FileOffset(at as u64),
        message,
    };
    if data.len() < INIT_SIZE + 4 {
        return Err(err(data.len(), format!("file is {} bytes, too short for a boot-protocol header", data.len())));
    }
    if !is_bzimage(data) {
        return Err(err(HEADER_MAGIC, "no `HdrS` boot-protocol magic".into()));
    }
    let version = le16(data, VERSION).unwrap_or(0);
    if version < MIN_PROTOCOL {
        return Err(err(
            VERSION,
            format!("boot protocol {}.{:02} has no payload fields (need 2.08 or later)", version >> 8, version & 0xff),
        ));
    }
    if le16(data, BOOT_FLAG) != Some(0xAA55) {
        return Err(err(BOOT_FLAG, "boot flag is not 0xAA55".into()));
    }
    let setup_sects = match data[SETUP_SECTS] {
        0 => 4,
        n => u32::from(n),
    };
    let pm_start = (setup_sects as usize + 1) * 512;
    let payload_offset = le32(data, PAYLOAD_OFFSET).unwrap_or(0);
    let payload_length = le32(data, PAYLOAD_LENGTH).unwrap_or(0);
    let start = pm_start as u64 + u64::from(payload_offset);
    let end = start + u64::from(payload_length);
    if payload_length == 0 || end > data.len() as u64 {
        return Err(err(
            PAYLOAD_OFFSET,
            format!(
                "payload {start}..{end} (payload_offset {payload_offset}, payload_length \
                 {payload_length}, setup_sects {setup_sects}) is not inside the {}-byte file",
                data.len()
            ),
        ));
    }
    let payload = &data[start as usize..end as usize];
    let codec = match decompress::detect(payload) {
        Some(c) => c,
        None => {
            let what = match decompress::detect_unsupported(payload) {
                Some(u) => format!("payload is {u:?}, which is not supported"),
                None => format!(
                    "payload starts with {:02x?}, not a known compression magic",
                    &payload[..payload.len().min(6)]
                ),
            };
            return Err(err(start as usize, what));
        }
    };
    let trailer_size = if codec == Codec::Gzip { None } else { le32(payload, payload.len().saturating_sub(4)) };
    let init_size = if version >= 0x020a { le32(data, INIT_SIZE) } else { None };
    Ok(BzImageHeader {
        protocol: ((version >> 8) as u8, version as u8),
        setup_sects,
        payload_offset,
        payload_length,
        payload_file_offset: start,
        codec,
        init_size,
        trailer_size,
    })
}

/// Decompresses the payload of a bzImage: the ELF vmlinux (stripped in distribution
/// images). The `size_append` trailer is removed before decoding and checked after.
pub fn extract_vmlinux(data: &[u8], path: &Path, limits: &Limits) -> Result<(BzImageHeader, Vec<u8>), LoadError> {
    extract_payload(data, path, Content::Any, limits)
}

/// [`extract_vmlinux`], stopping after the first decompressed bytes when they are not
/// `content` (an x86 payload is the ELF vmlinux: [`Content::Elf`]).
pub fn extract_payload(
    data: &[u8],
    path: &Path,
    content: Content,
    limits: &Limits,
) -> Result<(BzImageHeader, Vec<u8>), LoadError> {
    let header = parse_header(data, path)?;
    let start = header.payload_file_offset as usize;
    let mut end = start + header.payload_length as usize;
    if header.trailer_size.is_some() && header.codec != Codec::Lz4Legacy {
        // lz4 legacy checks the trailer itself (it cannot tell where its stream ends
        // otherwise).
        end -= 4;
    }
    let origin = Origin { path, base: start as u64 };
    let size = header.trailer_size.map(u64::from);
    let payload = &data[start..end];
    let elf = decompress::decompress_sized_as(payload, header.codec, size, content, limits, origin)?;
    if let Some(size) = header.trailer_size {
        if size as usize != elf.len() {
            return Err(LoadError::SizeMismatch {
                path: path.to_owned(),
                codec: header.codec,
                offset: FileOffset((start + header.payload_length as usize - 4) as u64),
                message: format!("payload decompressed to {} bytes but its trailer says {size}", elf.len()),
            });
        }
    }
    Ok((header, elf))
}
