//! libbpf's view of a BTF blob, over the project's reader: `btf_type_by_id` (with id 0 as
//! `void`), members, arrays, enumerators, int encodings, `skip_mods_and_typedefs`,
//! `btf__resolve_size`, `btf_ptr_sz`, `btf_kind_str` and the essential name.
//!
//! Invariant: every read is bounds-checked by the reader; every walk is bounded.

use fevlint_btf::{Btf, BtfKind, BtfTypeId, RawType, StrOffset};
use fevlint_types::model::ModelError;

/// libbpf's `MAX_RESOLVE_DEPTH` (btf.c).
const MAX_RESOLVE_DEPTH: usize = 32;
/// Modifier chains longer than this are refused (libbpf has no limit; a loop would hang it).
const MAX_MODS: usize = 64;

/// One `struct btf_type` as libbpf sees it; `kind` `None` is `BTF_KIND_UNKN` (void).
#[derive(Clone, Copy, Debug)]
pub struct Ty {
    pub id: u32,
    pub kind: Option<BtfKind>,
    pub kflag: bool,
    pub vlen: u16,
    pub name_off: u32,
    /// `size` or `type`.
    pub size_or_type: u32,
    raw: Option<RawType>,
}

impl Ty {
    pub fn is(&self, k: BtfKind) -> bool {
        self.kind == Some(k)
    }
    pub fn is_composite(&self) -> bool {
        matches!(self.kind, Some(BtfKind::Struct | BtfKind::Union))
    }
    pub fn is_any_enum(&self) -> bool {
        matches!(self.kind, Some(BtfKind::Enum | BtfKind::Enum64))
    }
    pub fn is_mod_or_typedef(&self) -> bool {
        matches!(
            self.kind,
            Some(BtfKind::Typedef | BtfKind::Volatile | BtfKind::Const | BtfKind::Restrict | BtfKind::TypeTag)
        )
    }
    /// `btf_kind_core_compat`: same kind, or both any enum.
    pub fn core_compat(&self, other: &Ty) -> bool {
        self.kind == other.kind || (self.is_any_enum() && other.is_any_enum())
    }
}

/// `btf_kind_str`.
pub fn kind_str(kind: Option<BtfKind>) -> &'static str {
    match kind {
        None => "void",
        Some(k) => match k {
            BtfKind::Int => "int",
            BtfKind::Ptr => "ptr",
            BtfKind::Array => "array",
            BtfKind::Struct => "struct",
            BtfKind::Union => "union",
            BtfKind::Enum => "enum",
            BtfKind::Fwd => "fwd",
            BtfKind::Typedef => "typedef",
            BtfKind::Volatile => "volatile",
            BtfKind::Const => "const",
            BtfKind::Restrict => "restrict",
            BtfKind::Func => "func",
            BtfKind::FuncProto => "func_proto",
            BtfKind::Var => "var",
            BtfKind::Datasec => "datasec",
            BtfKind::Float => "float",
            BtfKind::DeclTag => "decl_tag",
            BtfKind::TypeTag => "type_tag",
            BtfKind::Enum64 => "enum64",
        },
    }
}

/// A struct/union member.
#[derive(Clone, Copy, Debug)]
pub struct MemberRec {
    pub name_off: u32,
    pub ty: u32,
    pub offset: u32,
}

/// An enumerator (ENUM or ENUM64); `value` is the 64-bit value as libbpf computes it
/// (`btf_enum64_value`), or the 32-bit `val` of an ENUM as stored (sign-extended by C's
/// conversion of `__s32` to `__u64`).
#[derive(Clone, Copy, Debug)]
pub struct EnumRec {
    pub name_off: u32,
    pub value: u64,
}

/// A BTF blob with what libbpf caches about it.
#[derive(Debug)]
pub struct View<'a> {
    pub btf: &'a Btf,
    ptr_sz: u32,
}

impl<'a> View<'a> {
    pub fn new(btf: &'a Btf) -> View<'a> {
        let ptr_sz = determine_ptr_size(btf).unwrap_or(8);
        View { btf, ptr_sz }
    }

    pub fn ptr_sz(&self) -> u32 {
        self.ptr_sz
    }

    /// `btf_type_by_id`; id 0 is void.
    pub fn ty(&self, id: u32) -> Result<Ty, ModelError> {
        if id == 0 {
            return Ok(Ty { id, kind: None, kflag: false, vlen: 0, name_off: 0, size_or_type: 0, raw: None });
        }
        let raw = self.btf.raw(BtfTypeId(id))?;
        Ok(Ty {
            id,
            kind: Some(raw.kind),
            kflag: raw.kind_flag,
            vlen: raw.vlen,
            name_off: raw.name_off.0,
            size_or_type: raw.size_or_type,
            raw: Some(raw),
        })
    }

    pub(crate) fn extra(&self, t: &Ty, i: usize) -> Result<u32, ModelError> {
        let Some(raw) = &t.raw else { return Err(self.malformed(0, "void has no extra data")) };
        // The blob that holds the record (a split BTF's base holds the low ids).
        let mut owner = self.btf;
        while raw.id.0 < owner.first_id().0 {
            match owner.base() {
                Some(b) => owner = b,
                None => return Err(self.malformed(raw.offset, "type outside the blob")),
            }
        }
        owner.extra_u32(raw, i)
    }

    fn malformed(&self, offset: usize, what: &str) -> ModelError {
        ModelError::Malformed {
            source_name: self.btf.source_name().to_owned(),
            offset: offset as u64,
            what: what.into(),
        }
    }

    /// `btf__name_by_offset`, as bytes.
    pub fn name(&self, off: u32) -> Result<&'a [u8], ModelError> {
        self.btf.string_bytes(StrOffset(off))
    }

    /// The name as text for messages (lossy).
    pub fn name_str(&self, off: u32) -> String {
        self.name(off).map(|n| String::from_utf8_lossy(n).into_owned()).unwrap_or_else(|_| "<?>".into())
    }

    pub fn member(&self, t: &Ty, i: usize) -> Result<MemberRec, ModelError> {
        if !t.is_composite() || i >= usize::from(t.vlen) {
            return Err(self.malformed(t.raw.map_or(0, |r| r.offset), "member index out of range"));
        }
        Ok(MemberRec {
            name_off: self.extra(t, 3 * i)?,
            ty: self.extra(t, 3 * i + 1)?,
            offset: self.extra(t, 3 * i + 2)?,
        })
    }

    /// `btf_member_bit_offset`.
    pub fn member_bit_offset(t: &Ty, m: &MemberRec) -> u32 {
        if t.kflag {
            m.offset & 0xff_ffff
        } else {
            m.offset
        }
    }

    /// `btf_member_bitfield_size`.
    pub fn member_bitfield_size(t: &Ty, m: &MemberRec) -> u32 {
        if t.kflag {
            m.offset >> 24
        } else {
            0
        }
    }

    /// `btf_array`: (element type, index type, nelems).
    pub fn array(&self, t: &Ty) -> Result<(u32, u32, u32), ModelError> {
        Ok((self.extra(t, 0)?, self.extra(t, 1)?, self.extra(t, 2)?))
    }

    /// FUNC_PROTO parameter `i`: (name_off, type).
    pub fn param(&self, t: &Ty, i: usize) -> Result<(u32, u32), ModelError> {
        Ok((self.extra(t, 2 * i)?, self.extra(t, 2 * i + 1)?))
    }

    pub fn enumerator(&self, t: &Ty, i: usize) -> Result<EnumRec, ModelError> {
        match t.kind {
            Some(BtfKind::Enum) => {
                let val = self.extra(t, 2 * i + 1)? as i32;
                Ok(EnumRec { name_off: self.extra(t, 2 * i)?, value: val as i64 as u64 })
            }
            Some(BtfKind::Enum64) => {
                let lo = u64::from(self.extra(t, 3 * i + 1)?);
                let hi = u64::from(self.extra(t, 3 * i + 2)?);
                Ok(EnumRec { name_off: self.extra(t, 3 * i)?, value: hi << 32 | lo })
            }
            _ => Err(self.malformed(t.raw.map_or(0, |r| r.offset), "not an enum")),
        }
    }

    /// The INT encoding word: (encoding, offset, bits). Non-INT types read as libbpf
    /// reads them (`btf_int_encoding` of a non-INT is garbage in C; here 0).
    pub fn int(&self, t: &Ty) -> Result<(u8, u8, u8), ModelError> {
        if !t.is(BtfKind::Int) {
            return Ok((0, 0, 0));
        }
        let w = self.extra(t, 0)?;
        Ok(((w >> 24 & 0x0f) as u8, (w >> 16 & 0xff) as u8, (w & 0xff) as u8))
    }

    /// `skip_mods_and_typedefs`: the type and its id.
    pub fn skip_mods(&self, mut id: u32) -> Result<(Ty, u32), ModelError> {
        for _ in 0..MAX_MODS {
            let t = self.ty(id)?;
            if !t.is_mod_or_typedef() {
                return Ok((t, id));
            }
            id = t.size_or_type;
        }
        Err(ModelError::TooDeep {
            source_name: self.btf.source_name().to_owned(),
            ty: fevlint_types::model::TypeRef(u64::from(id)),
        })
    }

    /// `btf__resolve_size`: `Err` carries libbpf's errno (`-EINVAL`, `-E2BIG`).
    pub fn resolve_size(&self, mut id: u32) -> Result<Result<u64, i32>, ModelError> {
        const EINVAL: i32 = -22;
        const E2BIG: i32 = -7;
        let mut nelems: u64 = 1;
        let mut size: Option<u64> = None;
        for _ in 0..MAX_RESOLVE_DEPTH {
            let t = self.ty(id)?;
            let Some(kind) = t.kind else { break };
            match kind {
                BtfKind::Int
                | BtfKind::Struct
                | BtfKind::Union
                | BtfKind::Enum
                | BtfKind::Enum64
                | BtfKind::Datasec
                | BtfKind::Float => {
                    size = Some(u64::from(t.size_or_type));
                    break;
                }
                BtfKind::Ptr => {
                    size = Some(u64::from(self.ptr_sz));
                    break;
                }
                BtfKind::Typedef
                | BtfKind::Volatile
                | BtfKind::Const
                | BtfKind::Restrict
                | BtfKind::Var
                | BtfKind::DeclTag
                | BtfKind::TypeTag => id = t.size_or_type,
                BtfKind::Array => {
                    let (elem, _, n) = self.array(&t)?;
                    if nelems != 0 && u64::from(n) > u64::from(u32::MAX) / nelems {
                        return Ok(Err(E2BIG));
                    }
                    nelems *= u64::from(n);
                    id = elem;
                }
                _ => return Ok(Err(EINVAL)),
            }
        }
        let Some(size) = size else { return Ok(Err(EINVAL)) };
        if nelems != 0 && size > u64::from(u32::MAX) / nelems {
            return Ok(Err(E2BIG));
        }
        Ok(Ok(nelems * size))
    }
}

/// libbpf's `determine_ptr_size`: the size of the first 4- or 8-byte INT named as a `long`.
fn determine_ptr_size(btf: &Btf) -> Option<u32> {
    const LONG_ALIASES: [&[u8]; 11] = [
        b"long",
        b"long int",
        b"int long",
        b"unsigned long",
        b"long unsigned",
        b"unsigned long int",
        b"unsigned int long",
        b"long unsigned int",
        b"long int unsigned",
        b"int unsigned long",
        b"int long unsigned",
    ];
    let mut id = 1u32;
    let end = btf.next_id();
    while id < end {
        if let Ok(raw) = btf.raw(BtfTypeId(id)) {
            if raw.kind == BtfKind::Int && matches!(raw.size_or_type, 4 | 8) {
                if let Ok(name) = btf.string_bytes(raw.name_off) {
                    if LONG_ALIASES.contains(&name) {
                        return Some(raw.size_or_type);
                    }
                }
            }
        }
        id += 1;
    }
    None
}

/// `bpf_core_essential_name_len` and the essential name itself: the BTF reader's, whose
/// candidate index is keyed by them.
pub use fevlint_btf::{essential_name, essential_name_len};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn essential_names_strip_the_last_flavour() {
        assert_eq!(essential_name(b"task_struct___old"), b"task_struct");
        assert_eq!(essential_name(b"a___b___c"), b"a___b");
        assert_eq!(essential_name(b"task_struct"), b"task_struct");
        // A separator is `X___Y` with neither X nor Y an underscore.
        assert_eq!(essential_name(b"x____y"), b"x____y");
        assert_eq!(essential_name(b"___x"), b"___x");
        assert_eq!(essential_name(b"ab___"), b"ab___");
        assert_eq!(essential_name(b""), b"");
    }
}
