//! Walking a unit's top-level DIEs (skipping children through `DW_AT_sibling`), and
//! the cold lookups that need no index: a type by name (units in order, stop at the
//! first definition) and a function through `.symtab` → `.debug_aranges` → its units.

use std::collections::HashSet;

use gimli::{constants as dw, AttributeValue, UnitOffset};

use super::{DieOffset, Dwarf, UnitEntry, UnitKind, R};
use crate::kernel::layout;
use crate::kernel::model::{FunctionInfo, ModelError, TypeNamespace, TypeRef};

/// What a name lookup can ask for; the index stores it in one byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub(crate) enum Kind {
    Struct = 0,
    Union = 1,
    Enum = 2,
    Ordinary = 3,
    Function = 4,
}

impl Kind {
    pub(crate) fn from_u8(k: u8) -> Option<Kind> {
        Some(match k {
            0 => Kind::Struct,
            1 => Kind::Union,
            2 => Kind::Enum,
            3 => Kind::Ordinary,
            4 => Kind::Function,
            _ => return None,
        })
    }

    pub(crate) fn of_namespace(ns: TypeNamespace) -> Kind {
        match ns {
            TypeNamespace::Struct => Kind::Struct,
            TypeNamespace::Union => Kind::Union,
            TypeNamespace::Enum => Kind::Enum,
            TypeNamespace::Ordinary => Kind::Ordinary,
        }
    }
}

/// `DW_AT_declaration`: a forward declaration or a function prototype.
pub(crate) const FLAG_DECL: u8 = 1;
pub(crate) const FLAG_EXTERNAL: u8 = 2;
/// A base type (as opposed to a typedef) in the ordinary namespace.
pub(crate) const FLAG_BASE: u8 = 4;
/// The DIE lives in `.debug_types`.
pub(crate) const FLAG_TYPES: u8 = 8;

/// A named top-level DIE, as the walker reports it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TopDie<'a> {
    pub die: DieOffset,
    pub kind: Kind,
    pub name: &'a [u8],
    pub flags: u8,
    pub byte_size: u32,
    pub decl_line: u32,
    pub decl_file: Option<u64>,
}

#[derive(Default)]
struct Attrs<'a> {
    name: Option<AttributeValue<R<'a>>>,
    decl: bool,
    external: bool,
    byte_size: u64,
    decl_line: u64,
    decl_file: Option<u64>,
    sibling: Option<usize>,
    origin: Option<usize>,
}

impl Dwarf {
    /// Calls `visit` for each named top-level type or subprogram DIE of one unit, in
    /// order; stops early when it returns `false`. Children are skipped through
    /// `DW_AT_sibling` when it points forward, else by walking them.
    pub(crate) fn walk_unit<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        unit: &gimli::Unit<R<'a>>,
        mut visit: impl FnMut(TopDie<'a>) -> Result<bool, ModelError>,
    ) -> Result<(), ModelError> {
        let base = if u.in_types { DieOffset::types(u.offset) } else { DieOffset::info(u.offset) };
        let at = |off: UnitOffset| base.same_section(u.offset + off.0 as u64);
        let unit_len = (u.end - u.offset) as usize;
        let mut raw = unit.entries_raw(None).map_err(|e| self.gimli_error(base, e))?;
        let Some(root) = raw.read_abbreviation().map_err(|e| self.gimli_error(base, e))? else { return Ok(()) };
        raw.skip_attributes(root.attributes()).map_err(|e| self.gimli_error(base, e))?;
        if !root.has_children() {
            return Ok(());
        }
        loop {
            if raw.is_empty() {
                return Ok(());
            }
            let off = raw.next_offset();
            let err = |e| self.gimli_error(at(off), e);
            let Some(ab) = raw.read_abbreviation().map_err(err)? else { return Ok(()) };
            let kind = match ab.tag() {
                dw::DW_TAG_structure_type | dw::DW_TAG_class_type => Some(Kind::Struct),
                dw::DW_TAG_union_type => Some(Kind::Union),
                dw::DW_TAG_enumeration_type => Some(Kind::Enum),
                dw::DW_TAG_typedef | dw::DW_TAG_base_type => Some(Kind::Ordinary),
                dw::DW_TAG_subprogram => Some(Kind::Function),
                _ => None,
            };
            let mut a = Attrs::default();
            for spec in ab.attributes() {
                let wanted = match spec.name() {
                    dw::DW_AT_sibling => true,
                    dw::DW_AT_name
                    | dw::DW_AT_declaration
                    | dw::DW_AT_external
                    | dw::DW_AT_byte_size
                    | dw::DW_AT_decl_line
                    | dw::DW_AT_decl_file
                    | dw::DW_AT_specification
                    | dw::DW_AT_abstract_origin => kind.is_some(),
                    _ => false,
                };
                if !wanted {
                    raw.skip_attributes(std::slice::from_ref(spec)).map_err(err)?;
                    continue;
                }
                let attr = raw.read_attribute(*spec).map_err(err)?;
                let v = attr.value();
                match spec.name() {
                    dw::DW_AT_sibling => {
                        if let AttributeValue::UnitRef(o) = v {
                            a.sibling = Some(o.0)
                        }
                    }
                    dw::DW_AT_name => a.name = Some(v),
                    dw::DW_AT_declaration => a.decl = matches!(v, AttributeValue::Flag(true)),
                    dw::DW_AT_external => a.external = matches!(v, AttributeValue::Flag(true)),
                    dw::DW_AT_byte_size => a.byte_size = v.udata_value().unwrap_or(0),
                    dw::DW_AT_decl_line => a.decl_line = v.udata_value().unwrap_or(0),
                    dw::DW_AT_decl_file => a.decl_file = file_index(v),
                    _ => {
                        if let AttributeValue::UnitRef(o) = v {
                            a.origin = Some(o.0)
                        }
                    }
                }
            }
            if let Some(kind) = kind {
                // A definition named through its declaration or abstract instance
                // (`DW_AT_specification`, `DW_AT_abstract_origin`): take the name,
                // linkage and place from there (same unit only; C compilers do not
                // emit cross-unit origins outside LTO).
                if a.name.is_none() {
                    if let Some(o) = a.origin.filter(|&o| o < unit_len && o != off.0) {
                        let e = unit.entry(UnitOffset(o)).map_err(err)?;
                        a.name = e.attr_value(dw::DW_AT_name).map_err(err)?;
                        a.external |=
                            matches!(e.attr_value(dw::DW_AT_external).map_err(err)?, Some(AttributeValue::Flag(true)));
                        if a.decl_line == 0 {
                            a.decl_line = e
                                .attr_value(dw::DW_AT_decl_line)
                                .map_err(err)?
                                .and_then(|v| v.udata_value())
                                .unwrap_or(0);
                            a.decl_file = e.attr_value(dw::DW_AT_decl_file).map_err(err)?.and_then(file_index);
                        }
                    }
                }
                if let Some(nv) = a.name {
                    let name = self.string(d, unit, at(off), nv)?;
                    let mut flags = 0;
                    if a.decl {
                        flags |= FLAG_DECL;
                    }
                    if a.external {
                        flags |= FLAG_EXTERNAL;
                    }
                    if ab.tag() == dw::DW_TAG_base_type {
                        flags |= FLAG_BASE;
                    }
                    if u.in_types {
                        flags |= FLAG_TYPES;
                    }
                    let top = TopDie {
                        die: at(off),
                        kind,
                        name,
                        flags,
                        byte_size: u32::try_from(a.byte_size).unwrap_or(u32::MAX),
                        decl_line: u32::try_from(a.decl_line).unwrap_or(u32::MAX),
                        decl_file: a.decl_file,
                    };
                    if !visit(top)? {
                        return Ok(());
                    }
                }
            }
            if ab.has_children() {
                match a.sibling {
                    Some(s) if s > off.0 && s < unit_len => {
                        raw = unit.entries_raw(Some(UnitOffset(s))).map_err(err)?;
                    }
                    _ => self.skip_subtree(&mut raw, at(off))?,
                }
            }
        }
    }

    fn skip_subtree(&self, raw: &mut gimli::EntriesRaw<'_, '_, R<'_>>, at: DieOffset) -> Result<(), ModelError> {
        let mut depth = 1usize;
        while depth > 0 {
            if raw.is_empty() {
                return Err(self.malformed(at, "children run past the end of the unit"));
            }
            match raw.read_abbreviation().map_err(|e| self.gimli_error(at, e))? {
                None => depth -= 1,
                Some(a) => {
                    raw.skip_attributes(a.attributes()).map_err(|e| self.gimli_error(at, e))?;
                    if a.has_children() {
                        depth += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Cold type lookup: units in file order until one defines `name`; returns that
    /// definition, or the first forward declaration if no unit defines it.
    pub(crate) fn scan_type(&self, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError> {
        let d = self.gimli();
        let want = Kind::of_namespace(ns);
        let mut forward = None;
        let mut found = None;
        for u in self.units().iter().filter(|u| u.kind != UnitKind::Other) {
            let unit = self.unit(&d, u)?;
            self.walk_unit(&d, u, &unit, |t| {
                if t.kind == want && t.name == name.as_bytes() {
                    if t.flags & FLAG_DECL == 0 {
                        found = Some(t.die);
                        return Ok(false);
                    }
                    forward = forward.or(Some(t.die));
                }
                Ok(true)
            })?;
            if let Some(f) = found {
                return Ok(vec![f.into()]);
            }
        }
        Ok(forward.map(TypeRef::from).into_iter().collect())
    }

    /// Cold function lookup: the text symbols named `name` in `.symtab` (searched for
    /// by name, the table is not read whole), their units through `.debug_aranges`,
    /// and the subprogram definitions of that name there. `None` when that path
    /// cannot answer (no symbol, no aranges entry, no DIE).
    pub(crate) fn functions_by_symbol(&self, name: &str) -> Result<Option<Vec<FunctionInfo>>, ModelError> {
        let Some(symbols) = self.elf().symbols_named(name) else { return Ok(None) };
        let addrs: Vec<u64> = symbols.iter().filter(|s| s.is_text()).map(|s| s.addr.0).collect();
        if addrs.is_empty() {
            return Ok(None);
        }
        let d = self.gimli();
        let mut cus = Vec::new();
        let mut found = vec![false; addrs.len()];
        let mut headers = d.debug_aranges.headers();
        loop {
            let header = match headers.next() {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(_) => return Ok(None),
            };
            let mut entries = header.entries();
            while let Ok(Some(e)) = entries.next() {
                let r = e.range();
                for (i, a) in addrs.iter().enumerate() {
                    if r.begin <= *a && *a < r.end {
                        found[i] = true;
                        cus.push(header.debug_info_offset().0 as u64);
                    }
                }
            }
        }
        if found.iter().any(|f| !f) {
            return Ok(None);
        }
        cus.sort_unstable();
        cus.dedup();
        let mut dies = Vec::new();
        for cu in cus {
            let u = *self.unit_of(DieOffset::info(cu))?;
            if u.offset != cu {
                return Err(self.malformed(DieOffset::info(cu), ".debug_aranges names an offset that is not a unit"));
            }
            let unit = self.unit(&d, &u)?;
            self.walk_unit(&d, &u, &unit, |t| {
                if t.kind == Kind::Function && t.flags & FLAG_DECL == 0 && t.name == name.as_bytes() {
                    dies.push(t.die);
                }
                Ok(true)
            })?;
        }
        if dies.is_empty() {
            return Ok(None);
        }
        let infos = dies.into_iter().map(|die| self.function_info(die)).collect::<Result<Vec<_>, _>>()?;
        Ok(Some(self.dedup_functions(infos)?))
    }

    /// Drops entries that describe the same function (an abstract instance and its
    /// out-of-line copy, a `static inline` from a header in several units).
    pub(crate) fn dedup_functions(&self, infos: Vec<FunctionInfo>) -> Result<Vec<FunctionInfo>, ModelError> {
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for f in infos {
            let mut key = vec![f.name.clone(), format!("{:?} {} {}", f.decl, f.is_static, f.proto.variadic)];
            key.push(match f.proto.ret {
                Some(r) => layout::type_name(self, r)?,
                None => "void".into(),
            });
            for p in &f.proto.params {
                key.push(format!("{:?} {}", p.name, layout::type_name(self, p.ty)?));
            }
            if seen.insert(key) {
                out.push(f);
            }
        }
        Ok(out)
    }
}

fn file_index(v: AttributeValue<R<'_>>) -> Option<u64> {
    match v {
        AttributeValue::FileIndex(x) => Some(x),
        other => other.udata_value(),
    }
}
