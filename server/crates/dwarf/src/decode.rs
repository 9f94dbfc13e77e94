//! Decoding one DIE into the shared model: types one level deep, sizes, and
//! subprograms into [`FunctionInfo`]s (following `DW_AT_abstract_origin` and
//! `DW_AT_specification`, file names from the unit's line program).

use gimli::{constants as dw, AttributeValue, UnitOffset};

use crate::{DieOffset, Dwarf, UnitEntry, MAX_CHAIN, MAX_DIMS, R};
use fevlint_types::model::{
    Composite, ForwardKind, FunctionInfo, Member, ModelError, Param, Prototype, Qualifier, Type, TypeRef,
};

type Unit<'a> = gimli::Unit<R<'a>>;
type Entry<'u, 'a> = gimli::DebuggingInformationEntry<'u, 'u, R<'a>>;

/// One step of decoding: a finished type, or a transparent wrapper to look through
/// (`_Atomic`, which the model has no qualifier for, as BTF has none).
enum Step {
    Done(Type),
    Follow(DieOffset),
}

impl Dwarf {
    fn attr<'a>(
        &self,
        at: DieOffset,
        e: &Entry<'_, 'a>,
        name: dw::DwAt,
    ) -> Result<Option<AttributeValue<R<'a>>>, ModelError> {
        e.attr_value(name).map_err(|err| self.gimli_error(at, err))
    }

    pub(crate) fn string<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        unit: &Unit<'a>,
        at: DieOffset,
        v: AttributeValue<R<'a>>,
    ) -> Result<&'a [u8], ModelError> {
        d.attr_string(unit, v).map(|s| s.slice()).map_err(|e| self.gimli_error(at, e))
    }

    fn name<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        unit: &Unit<'a>,
        at: DieOffset,
        e: &Entry<'_, 'a>,
    ) -> Result<Option<String>, ModelError> {
        match self.attr(at, e, dw::DW_AT_name)? {
            Some(v) => Ok(Some(String::from_utf8_lossy(self.string(d, unit, at, v)?).into_owned())),
            None => Ok(None),
        }
    }

    /// Resolves a reference attribute value to a DIE, checking it stays in bounds.
    pub(crate) fn reference(
        &self,
        u: &UnitEntry,
        at: DieOffset,
        v: AttributeValue<R<'_>>,
    ) -> Result<DieOffset, ModelError> {
        match v {
            AttributeValue::UnitRef(UnitOffset(o)) => {
                let abs = u.offset.checked_add(o as u64).filter(|&a| a < u.end);
                match abs {
                    Some(a) if o > 0 => Ok(at.same_section(a)),
                    _ => Err(self.malformed(at, format!("unit reference {o:#x} points outside its unit"))),
                }
            }
            AttributeValue::DebugInfoRef(o) => {
                if o.0 as u64 >= self.section_len(gimli::SectionId::DebugInfo) || o.0 == 0 {
                    return Err(self.malformed(at, format!("reference {:#x} points outside .debug_info", o.0)));
                }
                Ok(DieOffset::info(o.0 as u64))
            }
            AttributeValue::DebugTypesRef(sig) => {
                self.signature(sig.0).ok_or_else(|| self.malformed(at, format!("unknown type signature {:#x}", sig.0)))
            }
            other => Err(self.malformed(at, format!("unsupported reference form {other:?}"))),
        }
    }

    /// `DW_AT_type` of `e`, or void when absent.
    fn type_of(&self, u: &UnitEntry, at: DieOffset, e: &Entry<'_, '_>) -> Result<DieOffset, ModelError> {
        match self.attr(at, e, dw::DW_AT_type)? {
            Some(v) => self.reference(u, at, v),
            None => Ok(DieOffset::VOID),
        }
    }

    fn flag(&self, at: DieOffset, e: &Entry<'_, '_>, name: dw::DwAt) -> Result<bool, ModelError> {
        Ok(matches!(self.attr(at, e, name)?, Some(AttributeValue::Flag(true))))
    }

    fn udata(&self, at: DieOffset, e: &Entry<'_, '_>, name: dw::DwAt) -> Result<Option<u64>, ModelError> {
        match self.attr(at, e, name)? {
            None => Ok(None),
            Some(AttributeValue::FileIndex(x)) => Ok(Some(x)),
            Some(v) => v
                .udata_value()
                .map(Some)
                .ok_or_else(|| self.malformed(at, format!("{name} has a non-constant form {v:?}"))),
        }
    }

    /// Resolves one type, one level deep (the `TypeSource::get` of DWARF).
    pub(crate) fn decode(&self, r: DieOffset) -> Result<Type, ModelError> {
        let mut cur = r;
        for _ in 0..MAX_CHAIN {
            if cur.die() == DieOffset::VOID {
                return Ok(Type::Void);
            }
            match self.decode_one(cur)? {
                Step::Done(t) => return Ok(t),
                Step::Follow(next) => cur = next,
            }
        }
        Err(self.malformed(r, "DW_AT_type chain too long (reference cycle?)"))
    }

    fn decode_one(&self, r: DieOffset) -> Result<Step, ModelError> {
        let d = self.gimli();
        let at = r.die();
        let (u, unit, uoff) = self.locate(&d, at)?;
        let e = unit.entry(uoff).map_err(|err| self.gimli_error(at, err))?;
        let target = || self.type_of(&u, at, &e);
        let tag = e.tag();
        let t = match tag {
            dw::DW_TAG_base_type => {
                let name = self.name(&d, &unit, at, &e)?.unwrap_or_default();
                let size = self.byte_size(at, &e)?.unwrap_or(0);
                let enc = match self.attr(at, &e, dw::DW_AT_encoding)? {
                    Some(AttributeValue::Encoding(x)) => x,
                    Some(v) => match v.udata_value() {
                        Some(x) => dw::DwAte(x as u8),
                        None => return Err(self.malformed(at, "DW_AT_encoding is not a constant")),
                    },
                    None => dw::DW_ATE_signed,
                };
                match enc {
                    dw::DW_ATE_float | dw::DW_ATE_complex_float | dw::DW_ATE_decimal_float => {
                        Type::Float { name, size }
                    }
                    _ => Type::Int {
                        is_char: matches!(enc, dw::DW_ATE_signed_char | dw::DW_ATE_unsigned_char)
                            || name.ends_with("char"),
                        is_bool: enc == dw::DW_ATE_boolean,
                        signed: matches!(enc, dw::DW_ATE_signed | dw::DW_ATE_signed_char),
                        size,
                        name,
                    },
                }
            }
            dw::DW_TAG_unspecified_type => Type::Void,
            dw::DW_TAG_pointer_type | dw::DW_TAG_reference_type | dw::DW_TAG_rvalue_reference_type => {
                Type::Pointer { target: target()?.into() }
            }
            dw::DW_TAG_const_type => Type::Qualified { qualifier: Qualifier::Const, target: target()?.into() },
            dw::DW_TAG_volatile_type => Type::Qualified { qualifier: Qualifier::Volatile, target: target()?.into() },
            dw::DW_TAG_restrict_type => Type::Qualified { qualifier: Qualifier::Restrict, target: target()?.into() },
            dw::DW_TAG_atomic_type | dw::DW_TAG_immutable_type | dw::DW_TAG_packed_type | dw::DW_TAG_shared_type => {
                return Ok(Step::Follow(target()?));
            }
            dw::DW_TAG_typedef => {
                Type::Typedef { name: self.name(&d, &unit, at, &e)?.unwrap_or_default(), target: target()?.into() }
            }
            dw::DW_TAG_structure_type | dw::DW_TAG_class_type | dw::DW_TAG_union_type => {
                let is_union = tag == dw::DW_TAG_union_type;
                let name = self.name(&d, &unit, at, &e)?;
                if self.flag(at, &e, dw::DW_AT_declaration)? {
                    Type::Forward {
                        name: name.unwrap_or_default(),
                        kind: if is_union { ForwardKind::Union } else { ForwardKind::Struct },
                    }
                } else {
                    let size = self.byte_size(at, &e)?.unwrap_or(0);
                    let members = self.members(&d, &u, &unit, uoff, at)?;
                    let c = Composite { name, size: u64::from(size), members: members.into() };
                    if is_union {
                        Type::Union(c)
                    } else {
                        Type::Struct(c)
                    }
                }
            }
            dw::DW_TAG_enumeration_type => {
                let name = self.name(&d, &unit, at, &e)?;
                if self.flag(at, &e, dw::DW_AT_declaration)? {
                    Type::Forward { name: name.unwrap_or_default(), kind: ForwardKind::Enum }
                } else {
                    let underlying = target()?;
                    let size = match self.byte_size(at, &e)? {
                        Some(s) => u64::from(s),
                        None => self.size_at(underlying, 1)?.unwrap_or(0),
                    };
                    let declared_signed = if underlying == DieOffset::VOID {
                        None
                    } else {
                        match self.strip(underlying)? {
                            Type::Int { signed, .. } | Type::Enum { signed, .. } => Some(signed),
                            _ => None,
                        }
                    };
                    let (signed, values) = self.enumerators(&d, &unit, uoff, at, declared_signed)?;
                    Type::Enum { name, size: u32::try_from(size).unwrap_or(u32::MAX), signed, values }
                }
            }
            dw::DW_TAG_array_type => {
                let dims = self.array_dims(&unit, uoff, at)?;
                let k = r.dim();
                let Some(&len) = dims.get(k) else {
                    return Err(self.malformed(at, format!("array has {} dimensions, not {}", dims.len(), k + 1)));
                };
                let element = if k + 1 < dims.len() { r.with_dim(k + 1) } else { target()? };
                Type::Array { element: element.into(), len }
            }
            dw::DW_TAG_subroutine_type | dw::DW_TAG_subprogram => {
                Type::Function(self.prototype(&d, &u, &unit, uoff, at, target()?)?)
            }
            other => return Err(self.malformed(at, format!("{other} is not a type"))),
        };
        if let Type::Int { size, .. } | Type::Float { size, .. } = &t {
            if *size > 64 {
                return Err(self.malformed(at, format!("base type of {size} bytes")));
            }
        }
        Ok(Step::Done(t))
    }

    fn byte_size(&self, at: DieOffset, e: &Entry<'_, '_>) -> Result<Option<u32>, ModelError> {
        match self.udata(at, e, dw::DW_AT_byte_size)? {
            Some(s) => {
                u32::try_from(s).map(Some).map_err(|_| self.malformed(at, format!("DW_AT_byte_size {s} is absurd")))
            }
            None => Ok(None),
        }
    }

    /// Follows typedefs and qualifiers (bounded).
    fn strip(&self, mut r: DieOffset) -> Result<Type, ModelError> {
        for _ in 0..MAX_CHAIN {
            match self.decode(r)? {
                Type::Typedef { target, .. } | Type::Qualified { target, .. } => r = DieOffset(target.0),
                t => return Ok(t),
            }
        }
        Err(self.malformed(r, "typedef chain too long (reference cycle?)"))
    }

    fn members<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        unit: &Unit<'a>,
        uoff: UnitOffset,
        at: DieOffset,
    ) -> Result<Vec<Member>, ModelError> {
        let err = |e| self.gimli_error(at, e);
        let mut tree = unit.entries_tree(Some(uoff)).map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        let mut out = Vec::new();
        while let Some(child) = children.next().map_err(err)? {
            let e = child.entry();
            if e.tag() != dw::DW_TAG_member {
                continue;
            }
            let m_at = at.same_section(u.offset + e.offset().0 as u64);
            let ty = self.type_of(u, m_at, e)?;
            let bit_size = self.udata(m_at, e, dw::DW_AT_bit_size)?.unwrap_or(0);
            let bitfield_size =
                u32::try_from(bit_size).map_err(|_| self.malformed(m_at, format!("bit size {bit_size} is absurd")))?;
            let byte_off = match self.attr(m_at, e, dw::DW_AT_data_member_location)? {
                None => 0,
                Some(AttributeValue::Exprloc(x)) => self.simple_location(m_at, x, unit.encoding())?,
                Some(AttributeValue::Block(b)) => self.simple_location(m_at, gimli::Expression(b), unit.encoding())?,
                Some(v) => {
                    v.udata_value().ok_or_else(|| self.malformed(m_at, format!("member location of form {v:?}")))?
                }
            };
            let overflow = || self.malformed(m_at, "member offset overflows");
            let bit_offset = if let Some(dbo) = self.udata(m_at, e, dw::DW_AT_data_bit_offset)? {
                dbo
            } else if let Some(bo) = self.udata(m_at, e, dw::DW_AT_bit_offset)? {
                // DWARF 2-4: bits counted from the most significant bit of a storage unit
                // of DW_AT_byte_size (or the member type's size) at the member location.
                let storage = match self.udata(m_at, e, dw::DW_AT_byte_size)? {
                    Some(s) => s,
                    None => self.size_at(ty, 1)?.unwrap_or(0),
                };
                let unit_bits = storage.checked_mul(8).ok_or_else(overflow)?;
                let from_lsb = unit_bits
                    .checked_sub(bo)
                    .and_then(|x| x.checked_sub(bit_size))
                    .ok_or_else(|| self.malformed(m_at, format!("DW_AT_bit_offset {bo} exceeds its storage unit")))?;
                byte_off.checked_mul(8).and_then(|b| b.checked_add(from_lsb)).ok_or_else(overflow)?
            } else {
                byte_off.checked_mul(8).ok_or_else(overflow)?
            };
            let name = self.name(d, unit, m_at, e)?;
            out.push(Member { name, ty: ty.into(), bit_offset, bitfield_size });
        }
        Ok(out)
    }

    /// `DW_AT_data_member_location` as an expression: `DW_OP_plus_uconst N` or a
    /// constant, which is all C compilers emit.
    fn simple_location(
        &self,
        at: DieOffset,
        x: gimli::Expression<R<'_>>,
        enc: gimli::Encoding,
    ) -> Result<u64, ModelError> {
        let mut ops = x.operations(enc);
        let err = |e| self.gimli_error(at, e);
        let first = ops.next().map_err(err)?;
        let second = ops.next().map_err(err)?;
        match (first, second) {
            (Some(gimli::Operation::PlusConstant { value }), None)
            | (Some(gimli::Operation::UnsignedConstant { value }), None) => Ok(value),
            (Some(gimli::Operation::SignedConstant { value }), None) if value >= 0 => Ok(value as u64),
            (f, s) => Err(self.malformed(at, format!("member location expression {f:?} {s:?} is not a constant"))),
        }
    }

    fn enumerators<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        unit: &Unit<'a>,
        uoff: UnitOffset,
        at: DieOffset,
        declared_signed: Option<bool>,
    ) -> Result<(bool, Vec<(String, i128)>), ModelError> {
        let err = |e| self.gimli_error(at, e);
        let mut tree = unit.entries_tree(Some(uoff)).map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        let mut raw = Vec::new();
        while let Some(child) = children.next().map_err(err)? {
            let e = child.entry();
            if e.tag() != dw::DW_TAG_enumerator {
                continue;
            }
            let name = self.name(d, unit, at, e)?.unwrap_or_default();
            let v = self
                .attr(at, e, dw::DW_AT_const_value)?
                .ok_or_else(|| self.malformed(at, format!("enumerator {name} has no value")))?;
            raw.push((name, v));
        }
        // Without an underlying type, a negative sdata value makes the enum signed.
        let signed =
            declared_signed.unwrap_or_else(|| raw.iter().any(|(_, v)| matches!(v, AttributeValue::Sdata(x) if *x < 0)));
        let mut values = Vec::with_capacity(raw.len());
        for (name, v) in raw {
            let value = match v {
                AttributeValue::Sdata(x) => i128::from(x),
                AttributeValue::Udata(x) => i128::from(x),
                AttributeValue::Data1(x) if signed => i128::from(x as i8),
                AttributeValue::Data2(x) if signed => i128::from(x as i16),
                AttributeValue::Data4(x) if signed => i128::from(x as i32),
                AttributeValue::Data8(x) if signed => i128::from(x as i64),
                AttributeValue::Data1(x) => i128::from(x),
                AttributeValue::Data2(x) => i128::from(x),
                AttributeValue::Data4(x) => i128::from(x),
                AttributeValue::Data8(x) => i128::from(x),
                other => return Err(self.malformed(at, format!("enumerator {name} has value form {other:?}"))),
            };
            values.push((name, value));
        }
        Ok((signed, values))
    }

    /// Lengths of each dimension of an array DIE (0 for a flexible or variable one).
    fn array_dims(&self, unit: &Unit<'_>, uoff: UnitOffset, at: DieOffset) -> Result<Vec<u64>, ModelError> {
        let err = |e| self.gimli_error(at, e);
        let mut tree = unit.entries_tree(Some(uoff)).map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        let mut dims = Vec::new();
        while let Some(child) = children.next().map_err(err)? {
            let e = child.entry();
            if !matches!(e.tag(), dw::DW_TAG_subrange_type | dw::DW_TAG_enumeration_type) {
                continue;
            }
            if dims.len() == MAX_DIMS {
                return Err(self.malformed(at, format!("array with more than {MAX_DIMS} dimensions")));
            }
            let lower = match self.attr(at, e, dw::DW_AT_lower_bound)? {
                Some(v) => v.udata_value().unwrap_or(0),
                None => 0,
            };
            let len = if let Some(v) = self.attr(at, e, dw::DW_AT_count)? {
                v.udata_value().unwrap_or(0)
            } else {
                match self.attr(at, e, dw::DW_AT_upper_bound)? {
                    None => 0,
                    Some(v) => {
                        let upper = match v {
                            AttributeValue::Sdata(x) if x < 0 => None,
                            AttributeValue::Data1(u8::MAX) => None,
                            AttributeValue::Data2(u16::MAX) => None,
                            AttributeValue::Data4(u32::MAX) => None,
                            AttributeValue::Data8(u64::MAX) => None,
                            AttributeValue::Udata(u64::MAX) => None,
                            // Variable-length arrays: a reference or an expression.
                            other => other.udata_value(),
                        };
                        upper.map_or(0, |u| u.saturating_sub(lower).saturating_add(1))
                    }
                }
            };
            dims.push(len);
        }
        if dims.is_empty() {
            // `T x[]` with no subrange at all: one flexible dimension.
            dims.push(0);
        }
        Ok(dims)
    }

    fn prototype<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        unit: &Unit<'a>,
        uoff: UnitOffset,
        at: DieOffset,
        ret: DieOffset,
    ) -> Result<Prototype, ModelError> {
        let (params, variadic) = self.params(d, u, unit, uoff, at)?;
        Ok(Prototype { ret: (ret != DieOffset::VOID).then_some(ret.into()), params, variadic })
    }

    /// The formal parameters among the children of a subprogram or subroutine type, with
    /// names and types taken through `DW_AT_abstract_origin` when the DIE has none.
    /// Returns `(params, variadic)`; `None` when the DIE has no parameter children.
    fn params<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        unit: &Unit<'a>,
        uoff: UnitOffset,
        at: DieOffset,
    ) -> Result<(Vec<Param>, bool), ModelError> {
        let err = |e| self.gimli_error(at, e);
        let mut tree = unit.entries_tree(Some(uoff)).map_err(err)?;
        let root = tree.root().map_err(err)?;
        let mut children = root.children();
        let mut params = Vec::new();
        let mut variadic = false;
        while let Some(child) = children.next().map_err(err)? {
            let e = child.entry();
            match e.tag() {
                dw::DW_TAG_unspecified_parameters => variadic = true,
                dw::DW_TAG_formal_parameter => {
                    let p_at = at.same_section(u.offset + e.offset().0 as u64);
                    let mut name = self.name(d, unit, p_at, e)?;
                    let mut ty = self.type_of(u, p_at, e)?;
                    if name.is_none() || ty == DieOffset::VOID {
                        if let Some(v) = self.attr(p_at, e, dw::DW_AT_abstract_origin)? {
                            let origin = self.reference(u, p_at, v)?;
                            let (oname, oty) = self.param_from(origin, 0)?;
                            name = name.or(oname);
                            if ty == DieOffset::VOID {
                                ty = oty;
                            }
                        }
                    }
                    params.push(Param { name, ty: ty.into() });
                }
                _ => {}
            }
        }
        Ok((params, variadic))
    }

    /// Name and type of a parameter DIE, through its own abstract origins.
    fn param_from(&self, r: DieOffset, depth: usize) -> Result<(Option<String>, DieOffset), ModelError> {
        if depth > MAX_CHAIN {
            return Err(self.malformed(r, "DW_AT_abstract_origin chain too long (cycle?)"));
        }
        let d = self.gimli();
        let (u, unit, uoff) = self.locate(&d, r)?;
        let e = unit.entry(uoff).map_err(|err| self.gimli_error(r, err))?;
        let name = self.name(&d, &unit, r, &e)?;
        let ty = self.type_of(&u, r, &e)?;
        if name.is_some() && ty != DieOffset::VOID {
            return Ok((name, ty));
        }
        match self.attr(r, &e, dw::DW_AT_abstract_origin)? {
            Some(v) => {
                let origin = self.reference(&u, r, v)?;
                let (on, ot) = self.param_from(origin, depth + 1)?;
                Ok((name.or(on), if ty == DieOffset::VOID { ot } else { ty }))
            }
            None => Ok((name, ty)),
        }
    }

    /// Size in bytes (the `TypeSource::size_of` of DWARF).
    pub(crate) fn size_at(&self, r: DieOffset, depth: usize) -> Result<Option<u64>, ModelError> {
        if depth > MAX_CHAIN {
            return Err(self.malformed(r, "DW_AT_type chain too long (reference cycle?)"));
        }
        if r.die() == DieOffset::VOID {
            return Ok(None);
        }
        let d = self.gimli();
        let at = r.die();
        let (u, unit, uoff) = self.locate(&d, at)?;
        let e = unit.entry(uoff).map_err(|err| self.gimli_error(at, err))?;
        Ok(match e.tag() {
            dw::DW_TAG_base_type
            | dw::DW_TAG_structure_type
            | dw::DW_TAG_class_type
            | dw::DW_TAG_union_type
            | dw::DW_TAG_enumeration_type => {
                if self.flag(at, &e, dw::DW_AT_declaration)? {
                    None
                } else {
                    match self.byte_size(at, &e)? {
                        Some(s) => Some(u64::from(s)),
                        None if e.tag() == dw::DW_TAG_enumeration_type => {
                            self.size_at(self.type_of(&u, at, &e)?, depth + 1)?
                        }
                        None => None,
                    }
                }
            }
            dw::DW_TAG_pointer_type | dw::DW_TAG_reference_type | dw::DW_TAG_rvalue_reference_type => {
                Some(self.byte_size(at, &e)?.map_or(u64::from(self.pointer_size), u64::from))
            }
            dw::DW_TAG_typedef
            | dw::DW_TAG_const_type
            | dw::DW_TAG_volatile_type
            | dw::DW_TAG_restrict_type
            | dw::DW_TAG_atomic_type
            | dw::DW_TAG_immutable_type
            | dw::DW_TAG_packed_type
            | dw::DW_TAG_shared_type => self.size_at(self.type_of(&u, at, &e)?, depth + 1)?,
            dw::DW_TAG_array_type => {
                let dims = self.array_dims(&unit, uoff, at)?;
                let elem = self.type_of(&u, at, &e)?;
                match self.size_at(elem, depth + 1)? {
                    None => None,
                    Some(s) => {
                        let mut total = s;
                        for &n in dims.get(r.dim()..).unwrap_or(&[]) {
                            total = total.checked_mul(n).ok_or_else(|| self.malformed(at, "array size overflows"))?;
                        }
                        Some(total)
                    }
                }
            }
            _ => None,
        })
    }

    /// A subprogram DIE as a [`FunctionInfo`]. `name` overrides the DIE's (for DIEs
    /// named only through their origin, the caller knows the name it looked for).
    pub(crate) fn function_info(&self, die: DieOffset) -> Result<FunctionInfo, ModelError> {
        let d = self.gimli();
        let mut name = None;
        let mut external = false;
        let mut decl: Option<(UnitEntry, u64, u32)> = None;
        let mut ret = None;
        let mut proto: Option<(Vec<Param>, bool)> = None;
        let mut cur = Some(die);
        let mut hops = 0;
        while let Some(at) = cur.take() {
            hops += 1;
            if hops > MAX_CHAIN {
                return Err(self.malformed(die, "DW_AT_abstract_origin/DW_AT_specification chain too long (cycle?)"));
            }
            let (u, unit, uoff) = self.locate(&d, at)?;
            let e = unit.entry(uoff).map_err(|err| self.gimli_error(at, err))?;
            if e.tag() != dw::DW_TAG_subprogram {
                return Err(self.malformed(at, format!("{} is not a DW_TAG_subprogram", e.tag())));
            }
            if name.is_none() {
                name = self.name(&d, &unit, at, &e)?;
            }
            external |= self.flag(at, &e, dw::DW_AT_external)?;
            if decl.is_none() {
                if let (Some(file), Some(line)) =
                    (self.udata(at, &e, dw::DW_AT_decl_file)?, self.udata(at, &e, dw::DW_AT_decl_line)?)
                {
                    decl = Some((u, file, u32::try_from(line).unwrap_or(u32::MAX)));
                }
            }
            if ret.is_none() {
                if let Some(v) = self.attr(at, &e, dw::DW_AT_type)? {
                    ret = Some(self.reference(&u, at, v)?);
                }
            }
            if proto.is_none() && e.has_children() {
                let p = self.params(&d, &u, &unit, uoff, at)?;
                if !p.0.is_empty() || p.1 {
                    proto = Some(p);
                }
            }
            let next = match self.attr(at, &e, dw::DW_AT_abstract_origin)? {
                Some(v) => Some(v),
                None => self.attr(at, &e, dw::DW_AT_specification)?,
            };
            if let Some(v) = next {
                cur = Some(self.reference(&u, at, v)?);
            }
        }
        let name = name.ok_or_else(|| self.malformed(die, "subprogram without a name"))?;
        let decl = match decl {
            Some((u, file, line)) => self.file_name(&d, &u, file, die)?.map(|f| (f, line)),
            None => None,
        };
        let (params, variadic) = proto.unwrap_or_default();
        Ok(FunctionInfo {
            name,
            proto: Prototype { ret: ret.filter(|r| *r != DieOffset::VOID).map(TypeRef::from), params, variadic },
            is_static: !external,
            decl,
        })
    }

    /// File `index` of the line program of unit `u` (DWARF 5: 0-based; 2-4: 1-based,
    /// gimli knows), relative to the compilation directory, without leading `./`.
    pub(crate) fn file_name<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        index: u64,
        at: DieOffset,
    ) -> Result<Option<String>, ModelError> {
        let unit = self.unit(d, u)?;
        let Some(program) = self.line_program(d, &unit, at)? else { return Ok(None) };
        let header = program.header();
        let Some(file) = header.file(index) else { return Ok(None) };
        let name = String::from_utf8_lossy(self.string(d, &unit, at, file.path_name())?).into_owned();
        let dir = match file.directory(header) {
            Some(v) if file.directory_index() != 0 => {
                Some(String::from_utf8_lossy(self.string(d, &unit, at, v)?).into_owned())
            }
            _ => None,
        };
        Ok(Some(join_path(dir.as_deref(), &name)))
    }

    pub(crate) fn line_program<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        unit: &Unit<'a>,
        at: DieOffset,
    ) -> Result<Option<gimli::IncompleteLineProgram<R<'a>>>, ModelError> {
        let err = |e| self.gimli_error(at, e);
        let off = unit.entries_raw(None).map_err(err)?.next_offset();
        let root = unit.entry(off).map_err(err)?;
        let Some(AttributeValue::DebugLineRef(line)) = root.attr_value(dw::DW_AT_stmt_list).map_err(err)? else {
            return Ok(None);
        };
        let comp_dir = match root.attr_value(dw::DW_AT_comp_dir).map_err(err)? {
            Some(v) => d.attr_string(unit, v).ok(),
            None => None,
        };
        let comp_name = match root.attr_value(dw::DW_AT_name).map_err(err)? {
            Some(v) => d.attr_string(unit, v).ok(),
            None => None,
        };
        d.debug_line.program(line, unit.header.address_size(), comp_dir, comp_name).map(Some).map_err(err)
    }
}

/// `dir/name` unless `name` is absolute, without leading `./` components.
pub(crate) fn join_path(dir: Option<&str>, name: &str) -> String {
    let joined = match dir {
        Some(dir) if !name.starts_with('/') && !dir.is_empty() => format!("{dir}/{name}"),
        _ => name.to_string(),
    };
    let mut s = joined.as_str();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    s.to_string()
}
