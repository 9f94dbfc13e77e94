//! What the top-level DIE walker ([`crate::toplevel`]) reports, and the cold lookups that
//! need no index: a type by name (units in order, stop at the first definition) and a
//! function through `.symtab` → `.debug_aranges` → its units.

use std::collections::HashSet;

use crate::{DieOffset, Dwarf, UnitKind};
use fevlint_types::layout;
use fevlint_types::model::{FunctionInfo, ModelError, TypeNamespace, TypeRef};

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

/// A top-level DIE's name. Most are `.debug_str` offsets, and most of those are never
/// read: a lookup compares one name's worth of bytes, the index deduplicates by
/// position and measures each distinct name once.
#[derive(Clone, Copy, Debug)]
pub(crate) enum TopName<'a> {
    Bytes(&'a [u8]),
    /// `.debug_str` from the name's offset to the end of the section (not empty); the
    /// name is what precedes the first NUL, and there may be none (malformed).
    Str(&'a [u8]),
}

impl<'a> TopName<'a> {
    /// Whether the name is `want`, reading at most `want.len() + 1` bytes.
    pub(crate) fn is(self, want: &[u8]) -> bool {
        match self {
            TopName::Bytes(b) => b == want,
            TopName::Str(s) => s.get(want.len()) == Some(&0) && s.starts_with(want),
        }
    }

    /// Where the name starts (a position in the mapped file).
    pub(crate) fn start(self) -> *const u8 {
        match self {
            TopName::Bytes(b) | TopName::Str(b) => b.as_ptr(),
        }
    }

    /// Its length, when it is already known.
    pub(crate) fn known_len(self) -> Option<usize> {
        match self {
            TopName::Bytes(b) => Some(b.len()),
            TopName::Str(_) => None,
        }
    }
}

/// A named top-level DIE, as the walker reports it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TopDie<'a> {
    pub die: DieOffset,
    pub kind: Kind,
    pub name: TopName<'a>,
    pub flags: u8,
    pub byte_size: u32,
    pub decl_line: u32,
    pub decl_file: Option<u64>,
}

impl Dwarf {
    /// Cold type lookup: units in file order until one defines `name`; returns that
    /// definition, or the first forward declaration if no unit defines it.
    pub(crate) fn scan_type(&self, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError> {
        Ok(self.scan_type_in(ns, name, usize::MAX)?.unwrap_or_default())
    }

    /// [`Dwarf::scan_type`] over the first `units` type-bearing units only: `None` when
    /// they hold no definition of the name (and there are more units).
    pub(crate) fn scan_type_in(
        &self,
        ns: TypeNamespace,
        name: &str,
        units: usize,
    ) -> Result<Option<Vec<TypeRef>>, ModelError> {
        let d = self.gimli();
        let want = Kind::of_namespace(ns);
        let mut forward = None;
        let mut found = None;
        let all = self.units().iter().filter(|u| u.kind != UnitKind::Other);
        let mut scanned = 0;
        for u in all.clone().take(units) {
            scanned += 1;
            self.walk_unit(&d, u, |t| {
                if t.kind == want && t.name.is(name.as_bytes()) {
                    if t.flags & FLAG_DECL == 0 {
                        found = Some(t.die);
                        return Ok(false);
                    }
                    forward = forward.or(Some(t.die));
                }
                Ok(true)
            })?;
            if let Some(f) = found {
                return Ok(Some(vec![f.into()]));
            }
        }
        if scanned < all.count() {
            return Ok(None);
        }
        Ok(Some(forward.map(TypeRef::from).into_iter().collect()))
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
            self.walk_unit(&d, &u, |t| {
                if t.kind == Kind::Function && t.flags & FLAG_DECL == 0 && t.name.is(name.as_bytes()) {
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
