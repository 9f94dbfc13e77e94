//! The `.BTF.ext` section: func_info, line_info and CO-RE relocation records.
//!
//! Header as `struct btf_ext_header` (kernel `include/uapi/linux/btf.h`, libbpf
//! `libbpf_internal.h`); each block is a record size followed by per-ELF-section
//! `{sec_name_off, num_info}` headers and their records, validated as libbpf's
//! `btf_ext_setup_info` validates them (4-byte alignment, minimum record sizes, no empty
//! section, no record past the block).

use serde::Serialize;

/// `struct bpf_func_info`: the BTF FUNC of the (sub)program starting at `insn_off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FuncInfo {
    /// Bytes from the start of the ELF section.
    pub insn_off: u32,
    pub type_id: u32,
}

/// `struct bpf_line_info`: the source position of the instruction at `insn_off`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LineInfo {
    pub insn_off: u32,
    pub file_name_off: u32,
    pub line_off: u32,
    /// `line << 10 | column`.
    pub line_col: u32,
}

impl LineInfo {
    pub fn line(&self) -> u32 {
        self.line_col >> 10
    }
    pub fn column(&self) -> u32 {
        self.line_col & 0x3ff
    }
}

/// `enum bpf_core_relo_kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReloKind {
    FieldByteOffset,
    FieldByteSize,
    FieldExists,
    FieldSigned,
    FieldLshiftU64,
    FieldRshiftU64,
    TypeIdLocal,
    TypeIdTarget,
    TypeExists,
    TypeSize,
    EnumvalExists,
    EnumvalValue,
    TypeMatches,
}

impl ReloKind {
    pub const ALL: [ReloKind; 13] = [
        ReloKind::FieldByteOffset,
        ReloKind::FieldByteSize,
        ReloKind::FieldExists,
        ReloKind::FieldSigned,
        ReloKind::FieldLshiftU64,
        ReloKind::FieldRshiftU64,
        ReloKind::TypeIdLocal,
        ReloKind::TypeIdTarget,
        ReloKind::TypeExists,
        ReloKind::TypeSize,
        ReloKind::EnumvalExists,
        ReloKind::EnumvalValue,
        ReloKind::TypeMatches,
    ];

    pub fn from_raw(kind: u32) -> Option<ReloKind> {
        ReloKind::ALL.get(usize::try_from(kind).ok()?).copied()
    }

    /// libbpf's name (`core_relo_kind_str`).
    pub fn name(self) -> &'static str {
        match self {
            ReloKind::FieldByteOffset => "byte_off",
            ReloKind::FieldByteSize => "byte_sz",
            ReloKind::FieldExists => "field_exists",
            ReloKind::FieldSigned => "signed",
            ReloKind::FieldLshiftU64 => "lshift_u64",
            ReloKind::FieldRshiftU64 => "rshift_u64",
            ReloKind::TypeIdLocal => "local_type_id",
            ReloKind::TypeIdTarget => "target_type_id",
            ReloKind::TypeExists => "type_exists",
            ReloKind::TypeMatches => "type_matches",
            ReloKind::TypeSize => "type_size",
            ReloKind::EnumvalExists => "enumval_exists",
            ReloKind::EnumvalValue => "enumval_value",
        }
    }

    pub fn is_field_based(self) -> bool {
        matches!(
            self,
            ReloKind::FieldByteOffset
                | ReloKind::FieldByteSize
                | ReloKind::FieldExists
                | ReloKind::FieldSigned
                | ReloKind::FieldLshiftU64
                | ReloKind::FieldRshiftU64
        )
    }

    pub fn is_type_based(self) -> bool {
        matches!(
            self,
            ReloKind::TypeIdLocal
                | ReloKind::TypeIdTarget
                | ReloKind::TypeExists
                | ReloKind::TypeMatches
                | ReloKind::TypeSize
        )
    }

    pub fn is_enumval_based(self) -> bool {
        matches!(self, ReloKind::EnumvalExists | ReloKind::EnumvalValue)
    }

    /// The kinds whose missing target is an answer (0), not a poisoned instruction.
    pub fn is_existence(self) -> bool {
        matches!(self, ReloKind::FieldExists | ReloKind::TypeExists | ReloKind::TypeMatches | ReloKind::EnumvalExists)
    }
}

/// `struct bpf_core_relo`. `kind` is kept raw: an unknown kind is libbpf's error to give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CoreRelo {
    pub insn_off: u32,
    pub type_id: u32,
    pub access_str_off: u32,
    pub kind: u32,
}

/// The records of one ELF section in one block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtSection<T> {
    /// `sec_name_off`, into the object's `.BTF` strings.
    pub name_off: u32,
    /// The name, when `.BTF` has it.
    pub name: Option<String>,
    pub records: Vec<T>,
}

/// The parsed `.BTF.ext`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BtfExt {
    pub func_info: Vec<ExtSection<FuncInfo>>,
    pub line_info: Vec<ExtSection<LineInfo>>,
    pub core_relo: Vec<ExtSection<CoreRelo>>,
}

/// A malformed `.BTF.ext`: the offset is inside the section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtError {
    pub offset: usize,
    pub what: String,
}

const MAGIC: u16 = 0xEB9F;
/// `magic, version, flags, hdr_len, func_info_off/len, line_info_off/len`.
const MIN_HEADER: usize = 24;
/// With `core_relo_off/len`.
const CORE_HEADER: usize = 32;

fn u32_at(data: &[u8], off: usize) -> Option<u32> {
    let b = data.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl BtfExt {
    /// Parses a little-endian `.BTF.ext` (BPF objects are little-endian: `e_machine`
    /// EM_BPF with ELFDATA2LSB; libbpf refuses non-native `.BTF.ext`).
    pub fn parse(data: &[u8]) -> Result<BtfExt, ExtError> {
        let err = |offset: usize, what: String| ExtError { offset, what };
        if data.len() < 8 {
            return Err(err(0, format!("{} bytes is too short for a .BTF.ext header", data.len())));
        }
        let magic = u16::from_le_bytes([data[0], data[1]]);
        if magic == MAGIC.swap_bytes() {
            return Err(err(0, "big-endian .BTF.ext is not supported".into()));
        }
        if magic != MAGIC {
            return Err(err(0, format!("bad .BTF.ext magic {magic:#06x}, expected {MAGIC:#06x}")));
        }
        if data[2] != 1 {
            return Err(err(2, format!("unsupported .BTF.ext version {}", data[2])));
        }
        if data[3] != 0 {
            return Err(err(3, format!("unsupported .BTF.ext flags {:#x}", data[3])));
        }
        let hdr_len = u32_at(data, 4).unwrap_or(0) as usize;
        if hdr_len < MIN_HEADER || hdr_len > data.len() {
            return Err(err(4, format!("header length {hdr_len} outside {MIN_HEADER}..={}", data.len())));
        }
        if hdr_len == data.len() {
            return Err(err(4, ".BTF.ext has no data after its header".into()));
        }
        let word = |at: usize| u32_at(data, at).unwrap_or(0);
        let block = |name: &'static str, at: usize, min_rec: u32| Block {
            name,
            hdr_at: at,
            off: word(at),
            len: word(at + 4),
            min_rec,
        };
        let mut ext = BtfExt {
            func_info: block("func_info", 8, 8)
                .records(data, hdr_len, |r: [u32; 2]| FuncInfo { insn_off: r[0], type_id: r[1] })?,
            line_info: block("line_info", 16, 16).records(data, hdr_len, |r: [u32; 4]| LineInfo {
                insn_off: r[0],
                file_name_off: r[1],
                line_off: r[2],
                line_col: r[3],
            })?,
            core_relo: Vec::new(),
        };
        if hdr_len >= CORE_HEADER {
            ext.core_relo = block("core_relo", 24, 16).records(data, hdr_len, |r: [u32; 4]| CoreRelo {
                insn_off: r[0],
                type_id: r[1],
                access_str_off: r[2],
                kind: r[3],
            })?;
        }
        Ok(ext)
    }

    /// Fills in the section names from the object's `.BTF` strings.
    pub fn name_sections(&mut self, name: impl Fn(u32) -> Option<String>) {
        for s in &mut self.func_info {
            s.name = name(s.name_off);
        }
        for s in &mut self.line_info {
            s.name = name(s.name_off);
        }
        for s in &mut self.core_relo {
            s.name = name(s.name_off);
        }
    }

    /// How many CO-RE relocation records there are in all.
    pub fn core_relo_count(&self) -> usize {
        self.core_relo.iter().map(|s| s.records.len()).sum()
    }
}

struct Block {
    name: &'static str,
    /// Where the block's `off` word is in the header.
    hdr_at: usize,
    off: u32,
    len: u32,
    min_rec: u32,
}

impl Block {
    fn records<T, const N: usize>(
        &self,
        data: &[u8],
        hdr_len: usize,
        make: impl Fn([u32; N]) -> T,
    ) -> Result<Vec<ExtSection<T>>, ExtError> {
        let name = self.name;
        let err = |offset: usize, what: String| ExtError { offset, what: format!("{name}: {what}") };
        if self.len == 0 {
            return Ok(Vec::new());
        }
        if !self.off.is_multiple_of(4) {
            return Err(err(self.hdr_at, format!("offset {} is not 4-byte aligned", self.off)));
        }
        let start = hdr_len as u64 + u64::from(self.off);
        let end = start + u64::from(self.len);
        if end > data.len() as u64 {
            return Err(err(
                self.hdr_at,
                format!("block {}+{} runs past the end of .BTF.ext ({} bytes)", self.off, self.len, data.len()),
            ));
        }
        let (start, end) = (start as usize, end as usize);
        let Some(rec_size) = u32_at(data, start).filter(|_| end - start >= 4) else {
            return Err(err(start, "no record size".into()));
        };
        if rec_size < self.min_rec || !rec_size.is_multiple_of(4) {
            return Err(err(
                start,
                format!("invalid record size {rec_size} (at least {}, a multiple of 4)", self.min_rec),
            ));
        }
        let rec_size = rec_size as usize;
        let mut at = start + 4;
        if at == end {
            return Err(err(at, "no records".into()));
        }
        let mut out = Vec::new();
        while at < end {
            if end - at < 8 {
                return Err(err(at, "truncated section header".into()));
            }
            let name_off = u32_at(data, at).unwrap_or(0);
            let num = u32_at(data, at + 4).unwrap_or(0);
            if num == 0 {
                return Err(err(at + 4, "a section with no records".into()));
            }
            let total = 8 + u64::from(num) * rec_size as u64;
            if total > (end - at) as u64 {
                return Err(err(
                    at + 4,
                    format!(
                        "{num} records of {rec_size} bytes run past the end of the block ({} bytes left)",
                        end - at - 8
                    ),
                ));
            }
            // Bounded by the block's size: `total` was checked against it.
            let mut records = Vec::with_capacity(num as usize);
            let mut rec = at + 8;
            for _ in 0..num {
                let mut words = [0u32; N];
                for (i, w) in words.iter_mut().enumerate() {
                    *w = u32_at(data, rec + 4 * i).unwrap_or(0);
                }
                records.push(make(words));
                rec += rec_size;
            }
            out.push(ExtSection { name_off, name: None, records });
            at += total as usize;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(core: bool) -> Vec<u8> {
        let mut h = vec![0x9f, 0xeb, 1, 0];
        let len: u32 = if core { 32 } else { 24 };
        h.extend_from_slice(&len.to_le_bytes());
        h.resize(len as usize, 0);
        h
    }

    fn put(h: &mut [u8], at: usize, v: u32) {
        h[at..at + 4].copy_from_slice(&v.to_le_bytes());
    }

    #[test]
    fn records_are_read_per_section() {
        let mut d = header(true);
        // core_relo block at offset 0: rec size 16, one section with two records.
        let mut block = Vec::new();
        for w in [16u32, 7, 2, 8, 3, 10, 0, 16, 4, 11, 2] {
            block.extend_from_slice(&w.to_le_bytes());
        }
        put(&mut d, 24, 0);
        put(&mut d, 28, block.len() as u32);
        d.extend_from_slice(&block);
        let ext = BtfExt::parse(&d).expect("valid");
        assert_eq!(ext.core_relo.len(), 1);
        assert_eq!(ext.core_relo[0].name_off, 7);
        assert_eq!(
            ext.core_relo[0].records,
            [
                CoreRelo { insn_off: 8, type_id: 3, access_str_off: 10, kind: 0 },
                CoreRelo { insn_off: 16, type_id: 4, access_str_off: 11, kind: 2 }
            ]
        );
    }

    #[test]
    fn absurd_counts_and_records_past_the_block_are_errors() {
        let mut d = header(true);
        let mut block = Vec::new();
        for w in [16u32, 7, u32::MAX, 8, 3, 10, 0] {
            block.extend_from_slice(&w.to_le_bytes());
        }
        put(&mut d, 28, block.len() as u32);
        d.extend_from_slice(&block);
        let e = BtfExt::parse(&d).expect_err("count past the block");
        assert!(e.what.contains("run past the end of the block"), "{e:?}");
        assert_eq!(e.offset, 32 + 8);
        // A block that claims more bytes than the section has.
        let mut d2 = header(false);
        put(&mut d2, 12, 1000);
        d2.extend_from_slice(&[0; 8]);
        assert!(BtfExt::parse(&d2).expect_err("block past the end").what.contains("runs past the end of .BTF.ext"));
        // Every truncation of a valid section is an error or a shorter valid reading, never a panic.
        for n in 0..d.len() {
            let _ = BtfExt::parse(&d[..n]);
        }
    }
}
