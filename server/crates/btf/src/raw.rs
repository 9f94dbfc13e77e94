//! The BTF wire format: header, kinds, and the fixed records that follow each type.
//!
//! Layout as in the kernel's `include/uapi/linux/btf.h` and `Documentation/bpf/btf.rst`.
//! Nothing here allocates; every read is bounds-checked by the caller's slice.

use std::fmt;

/// `btf_header.magic`; read as 0x9FEB it means the blob is byte-swapped (big-endian).
pub const BTF_MAGIC: u16 = 0xEB9F;
/// Size of `struct btf_header` (version 1).
pub const HEADER_LEN: usize = 24;
/// Size of `struct btf_type` (name_off, info, size/type).
pub const TYPE_RECORD_LEN: usize = 12;

/// A BTF type id. Id 0 is `void`; a split BTF continues the ids of its base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BtfTypeId(pub u32);

impl fmt::Display for BtfTypeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}]", self.0)
    }
}

/// An offset into the (base + split) string section.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StrOffset(pub u32);

/// Byte order of the blob, decided by how the magic reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }
}

/// The nineteen BTF kinds (`BTF_KIND_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum BtfKind {
    Int = 1,
    Ptr = 2,
    Array = 3,
    Struct = 4,
    Union = 5,
    Enum = 6,
    Fwd = 7,
    Typedef = 8,
    Volatile = 9,
    Const = 10,
    Restrict = 11,
    Func = 12,
    FuncProto = 13,
    Var = 14,
    Datasec = 15,
    Float = 16,
    DeclTag = 17,
    TypeTag = 18,
    Enum64 = 19,
}

impl BtfKind {
    /// All kinds in numeric order.
    pub const ALL: [BtfKind; 19] = [
        BtfKind::Int,
        BtfKind::Ptr,
        BtfKind::Array,
        BtfKind::Struct,
        BtfKind::Union,
        BtfKind::Enum,
        BtfKind::Fwd,
        BtfKind::Typedef,
        BtfKind::Volatile,
        BtfKind::Const,
        BtfKind::Restrict,
        BtfKind::Func,
        BtfKind::FuncProto,
        BtfKind::Var,
        BtfKind::Datasec,
        BtfKind::Float,
        BtfKind::DeclTag,
        BtfKind::TypeTag,
        BtfKind::Enum64,
    ];

    pub fn from_raw(kind: u32) -> Option<BtfKind> {
        let idx = usize::try_from(kind).ok()?.checked_sub(1)?;
        BtfKind::ALL.get(idx).copied()
    }

    /// The name `bpftool btf dump` uses (`STRUCT`, `FUNC_PROTO`, ...).
    pub fn name(self) -> &'static str {
        match self {
            BtfKind::Int => "INT",
            BtfKind::Ptr => "PTR",
            BtfKind::Array => "ARRAY",
            BtfKind::Struct => "STRUCT",
            BtfKind::Union => "UNION",
            BtfKind::Enum => "ENUM",
            BtfKind::Fwd => "FWD",
            BtfKind::Typedef => "TYPEDEF",
            BtfKind::Volatile => "VOLATILE",
            BtfKind::Const => "CONST",
            BtfKind::Restrict => "RESTRICT",
            BtfKind::Func => "FUNC",
            BtfKind::FuncProto => "FUNC_PROTO",
            BtfKind::Var => "VAR",
            BtfKind::Datasec => "DATASEC",
            BtfKind::Float => "FLOAT",
            BtfKind::DeclTag => "DECL_TAG",
            BtfKind::TypeTag => "TYPE_TAG",
            BtfKind::Enum64 => "ENUM64",
        }
    }

    /// Bytes that follow the 12-byte `btf_type` record for a type of this kind.
    /// At most 12 * 0xffff, so it never overflows.
    pub fn extra_len(self, vlen: u16) -> usize {
        let vlen = usize::from(vlen);
        match self {
            BtfKind::Int | BtfKind::Var | BtfKind::DeclTag => 4,
            BtfKind::Array => 12,
            BtfKind::Struct | BtfKind::Union | BtfKind::Datasec | BtfKind::Enum64 => 12 * vlen,
            BtfKind::Enum | BtfKind::FuncProto => 8 * vlen,
            BtfKind::Ptr
            | BtfKind::Fwd
            | BtfKind::Typedef
            | BtfKind::Volatile
            | BtfKind::Const
            | BtfKind::Restrict
            | BtfKind::Func
            | BtfKind::Float
            | BtfKind::TypeTag => 0,
        }
    }

    /// Kinds whose third word is a size rather than a type id.
    pub fn has_size(self) -> bool {
        matches!(
            self,
            BtfKind::Int
                | BtfKind::Struct
                | BtfKind::Union
                | BtfKind::Enum
                | BtfKind::Datasec
                | BtfKind::Float
                | BtfKind::Enum64
        )
    }
}

/// `struct btf_header`, as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub endian: Endian,
    pub version: u8,
    pub flags: u8,
    pub hdr_len: u32,
    pub type_off: u32,
    pub type_len: u32,
    pub str_off: u32,
    pub str_len: u32,
}

/// `INT` encoding bits (`BTF_INT_SIGNED`, `BTF_INT_CHAR`, `BTF_INT_BOOL`).
pub const INT_SIGNED: u32 = 1;
pub const INT_CHAR: u32 = 2;
pub const INT_BOOL: u32 = 4;

/// Reads a little- or big-endian u32 at `off` of `data`, `None` when out of bounds.
pub fn read_u32(data: &[u8], off: usize, endian: Endian) -> Option<u32> {
    let b = data.get(off..off.checked_add(4)?)?;
    Some(endian.u32([b[0], b[1], b[2], b[3]]))
}

/// The decoded `btf_type` record of one type, plus where its extra data starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawType {
    pub id: BtfTypeId,
    pub kind: BtfKind,
    pub kind_flag: bool,
    pub vlen: u16,
    pub name_off: StrOffset,
    /// `size` for sized kinds, `type` for the others.
    pub size_or_type: u32,
    /// Absolute byte offset of this record inside the blob that holds it.
    pub offset: usize,
}

impl RawType {
    /// Decodes the `info` word: vlen bits 0-15, kind bits 24-28, kind_flag bit 31.
    pub fn decode_info(info: u32) -> (u32, bool, u16) {
        let kind = (info >> 24) & 0x1f;
        let kind_flag = info >> 31 == 1;
        let vlen = (info & 0xffff) as u16;
        (kind, kind_flag, vlen)
    }
}
