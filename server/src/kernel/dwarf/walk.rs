//! The top-level DIE walker behind the cold lookups and the name index.
//!
//! A kernel has 1.4 million named top-level DIEs among 14 million, and an index entry
//! needs a handful of attributes of each. So each abbreviation of a unit is compiled,
//! on first use, into a few steps (skip N bytes of fixed-size values nobody reads, skip
//! one variable-size value, read one wanted attribute), and DIEs are decoded straight
//! from the unit's bytes by running those steps. An abbreviation with a form the steps
//! do not cover (`DW_FORM_indirect`, a form unknown to gimli, a wanted attribute in an
//! unusual form) is read through gimli instead, so the walk sees exactly what gimli's
//! reader would.
//!
//! Children are skipped through `DW_AT_sibling` when it points forward inside the unit,
//! else by walking them with the same steps.

use std::collections::HashMap;

use gimli::{constants as dw, AttributeValue, DwForm, UnitOffset};

use super::scan::{Kind, TopDie, FLAG_BASE, FLAG_DECL, FLAG_EXTERNAL, FLAG_TYPES};
use super::{DieOffset, Dwarf, UnitEntry, R};
use crate::kernel::model::ModelError;

/// Abbreviation codes below this are looked up in a table (real units use small, dense
/// codes), larger ones in a map.
const DENSE_CODES: u64 = 4096;

/// An attribute the walker reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    Sibling,
    Name,
    Declaration,
    External,
    ByteSize,
    DeclLine,
    DeclFile,
    /// `DW_AT_specification` or `DW_AT_abstract_origin`.
    Origin,
}

#[derive(Clone, Copy, Debug)]
enum Step {
    /// Fixed-size values nobody reads, merged.
    Skip(usize),
    /// One variable-size value nobody reads.
    SkipForm(DwForm),
    /// One wanted attribute, in a form [`read_value`] decodes.
    Read(Want, DwForm, i64),
}

/// One abbreviation, compiled.
#[derive(Clone, Copy, Debug)]
struct Plan {
    kind: Option<Kind>,
    base: bool,
    children: bool,
    /// Read this abbreviation's DIEs through gimli (see the module doc).
    gimli: bool,
    /// `steps[start..end]` of [`Plans::steps`].
    start: u32,
    end: u32,
}

/// The compiled abbreviations of one unit.
struct Plans<'u> {
    abbrevs: &'u gimli::Abbreviations,
    encoding: gimli::Encoding,
    by_code: Vec<Option<Plan>>,
    sparse: HashMap<u64, Plan>,
    steps: Vec<Step>,
}

impl Plans<'_> {
    /// The plan for `code`, compiled on first use. Each code is compiled once, so the
    /// step list is bounded by the abbreviation table.
    fn get(&mut self, code: u64) -> Option<Plan> {
        let dense = usize::try_from(code).ok().filter(|_| code < DENSE_CODES);
        let known = match dense {
            Some(i) => self.by_code.get(i).copied().flatten(),
            None => self.sparse.get(&code).copied(),
        };
        if known.is_some() {
            return known;
        }
        let plan = compile(self.abbrevs.get(code)?, self.encoding, &mut self.steps);
        match dense {
            Some(i) => {
                if self.by_code.len() <= i {
                    self.by_code.resize(i + 1, None);
                }
                self.by_code[i] = Some(plan);
            }
            None => {
                self.sparse.insert(code, plan);
            }
        }
        Some(plan)
    }
}

fn kind_of(tag: gimli::DwTag) -> Option<Kind> {
    match tag {
        dw::DW_TAG_structure_type | dw::DW_TAG_class_type => Some(Kind::Struct),
        dw::DW_TAG_union_type => Some(Kind::Union),
        dw::DW_TAG_enumeration_type => Some(Kind::Enum),
        dw::DW_TAG_typedef | dw::DW_TAG_base_type => Some(Kind::Ordinary),
        dw::DW_TAG_subprogram => Some(Kind::Function),
        _ => None,
    }
}

fn compile(ab: &gimli::Abbreviation, encoding: gimli::Encoding, steps: &mut Vec<Step>) -> Plan {
    let kind = kind_of(ab.tag());
    let start = steps.len();
    let mut gimli = false;
    for spec in ab.attributes() {
        let form = spec.form();
        let want = match spec.name() {
            dw::DW_AT_sibling if ab.has_children() => Some(Want::Sibling),
            _ if kind.is_none() => None,
            dw::DW_AT_name => Some(Want::Name),
            dw::DW_AT_declaration => Some(Want::Declaration),
            dw::DW_AT_external => Some(Want::External),
            dw::DW_AT_byte_size => Some(Want::ByteSize),
            dw::DW_AT_decl_line => Some(Want::DeclLine),
            dw::DW_AT_decl_file => Some(Want::DeclFile),
            dw::DW_AT_specification | dw::DW_AT_abstract_origin => Some(Want::Origin),
            _ => None,
        };
        if let Some(want) = want {
            if decodes(want, form) {
                steps.push(Step::Read(want, form, spec.implicit_const_value().unwrap_or(0)));
            } else {
                gimli = true;
            }
            continue;
        }
        match fixed_size(form, encoding) {
            Some(0) => {}
            Some(n) => match steps[start..].last_mut() {
                Some(Step::Skip(m)) => *m += n,
                _ => steps.push(Step::Skip(n)),
            },
            None if variable(form) => steps.push(Step::SkipForm(form)),
            None => gimli = true,
        }
    }
    if gimli {
        steps.truncate(start);
    }
    Plan {
        kind,
        base: ab.tag() == dw::DW_TAG_base_type,
        children: ab.has_children(),
        gimli,
        start: start as u32,
        end: steps.len() as u32,
    }
}

/// Whether [`read_value`] decodes `form` for `want` the way gimli's reader does.
fn decodes(want: Want, form: DwForm) -> bool {
    match want {
        Want::Sibling | Want::Origin => {
            matches!(
                form,
                dw::DW_FORM_ref1 | dw::DW_FORM_ref2 | dw::DW_FORM_ref4 | dw::DW_FORM_ref8 | dw::DW_FORM_ref_udata
            )
        }
        Want::Name => matches!(
            form,
            dw::DW_FORM_string
                | dw::DW_FORM_strp
                | dw::DW_FORM_line_strp
                | dw::DW_FORM_strx
                | dw::DW_FORM_GNU_str_index
                | dw::DW_FORM_strx1
                | dw::DW_FORM_strx2
                | dw::DW_FORM_strx3
                | dw::DW_FORM_strx4
        ),
        Want::Declaration | Want::External => matches!(form, dw::DW_FORM_flag | dw::DW_FORM_flag_present),
        Want::ByteSize | Want::DeclLine | Want::DeclFile => matches!(
            form,
            dw::DW_FORM_data1
                | dw::DW_FORM_data2
                | dw::DW_FORM_data4
                | dw::DW_FORM_data8
                | dw::DW_FORM_udata
                | dw::DW_FORM_sdata
                | dw::DW_FORM_implicit_const
        ),
    }
}

/// Size of a value of `form` when it does not depend on the value (gimli's
/// `get_attribute_size`).
fn fixed_size(form: DwForm, e: gimli::Encoding) -> Option<usize> {
    let word = usize::from(e.format.word_size());
    let addr = usize::from(e.address_size);
    Some(match form {
        dw::DW_FORM_addr => addr,
        dw::DW_FORM_implicit_const | dw::DW_FORM_flag_present => 0,
        dw::DW_FORM_data1 | dw::DW_FORM_flag | dw::DW_FORM_strx1 | dw::DW_FORM_ref1 | dw::DW_FORM_addrx1 => 1,
        dw::DW_FORM_data2 | dw::DW_FORM_ref2 | dw::DW_FORM_addrx2 | dw::DW_FORM_strx2 => 2,
        dw::DW_FORM_addrx3 | dw::DW_FORM_strx3 => 3,
        dw::DW_FORM_data4 | dw::DW_FORM_ref_sup4 | dw::DW_FORM_ref4 | dw::DW_FORM_strx4 | dw::DW_FORM_addrx4 => 4,
        dw::DW_FORM_data8 | dw::DW_FORM_ref8 | dw::DW_FORM_ref_sig8 | dw::DW_FORM_ref_sup8 => 8,
        dw::DW_FORM_data16 => 16,
        dw::DW_FORM_sec_offset
        | dw::DW_FORM_GNU_ref_alt
        | dw::DW_FORM_strp
        | dw::DW_FORM_strp_sup
        | dw::DW_FORM_GNU_strp_alt
        | dw::DW_FORM_line_strp => word,
        dw::DW_FORM_ref_addr if e.version == 2 => addr,
        dw::DW_FORM_ref_addr => word,
        _ => return None,
    })
}

/// Variable-size forms [`skip_form`] can step over.
fn variable(form: DwForm) -> bool {
    matches!(
        form,
        dw::DW_FORM_block1
            | dw::DW_FORM_block2
            | dw::DW_FORM_block4
            | dw::DW_FORM_block
            | dw::DW_FORM_exprloc
            | dw::DW_FORM_string
            | dw::DW_FORM_udata
            | dw::DW_FORM_sdata
            | dw::DW_FORM_ref_udata
            | dw::DW_FORM_strx
            | dw::DW_FORM_GNU_str_index
            | dw::DW_FORM_addrx
            | dw::DW_FORM_GNU_addr_index
            | dw::DW_FORM_loclistx
            | dw::DW_FORM_rnglistx
    )
}

/// A position in one unit's bytes. Every read is bounds-checked; `None` means the
/// value runs past the end of the unit or is malformed.
struct Cursor<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let b = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(b)
    }

    fn skip(&mut self, n: usize) -> Option<()> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len())?;
        self.pos = end;
        Some(())
    }

    fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    /// Little-endian unsigned integer of `n` (≤ 8) bytes.
    fn uint(&mut self, n: usize) -> Option<u64> {
        let b = self.bytes(n)?;
        Some(b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)))
    }

    fn uleb(&mut self) -> Option<u64> {
        let mut result = 0u64;
        let mut shift = 0u32;
        loop {
            let byte = self.u8()?;
            if shift == 63 && byte > 1 {
                return None;
            }
            result |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(result);
            }
            shift += 7;
            if shift > 63 {
                return None;
            }
        }
    }

    fn sleb(&mut self) -> Option<i64> {
        let mut result = 0i64;
        let mut shift = 0u32;
        loop {
            let byte = self.u8()?;
            if shift == 63 && byte != 0 && byte != 0x7f {
                return None;
            }
            result |= i64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte & 0x80 == 0 {
                if shift < 64 && byte & 0x40 != 0 {
                    result |= !0 << shift;
                }
                return Some(result);
            }
            if shift > 63 {
                return None;
            }
        }
    }

    fn skip_leb(&mut self) -> Option<()> {
        let rest = self.buf.get(self.pos..)?;
        let n = rest.iter().position(|&b| b & 0x80 == 0)?;
        self.pos += n + 1;
        Some(())
    }

    fn cstr(&mut self) -> Option<&'a [u8]> {
        let rest = self.buf.get(self.pos..)?;
        let n = memchr::memchr(0, rest)?;
        self.pos += n + 1;
        rest.get(..n)
    }
}

/// Steps over one value of a [`variable`] form.
fn skip_form(c: &mut Cursor<'_>, form: DwForm) -> Option<()> {
    match form {
        dw::DW_FORM_block1 => {
            let n = c.u8()?;
            c.skip(usize::from(n))
        }
        dw::DW_FORM_block2 => {
            let n = c.uint(2)?;
            c.skip(usize::try_from(n).ok()?)
        }
        dw::DW_FORM_block4 => {
            let n = c.uint(4)?;
            c.skip(usize::try_from(n).ok()?)
        }
        dw::DW_FORM_block | dw::DW_FORM_exprloc => {
            let n = c.uleb()?;
            c.skip(usize::try_from(n).ok()?)
        }
        dw::DW_FORM_string => c.cstr().map(|_| ()),
        _ => c.skip_leb(),
    }
}

/// A decoded value, as far as the walker cares.
#[derive(Clone, Copy)]
enum Value<'a> {
    Flag(bool),
    Unsigned(u64),
    Signed(i64),
    UnitRef(usize),
    Name(NameRef<'a>),
}

/// Where a name is, before it is looked up.
#[derive(Clone, Copy)]
enum NameRef<'a> {
    Inline(&'a [u8]),
    Str(usize),
    LineStr(usize),
    StrIndex(usize),
}

impl<'a> NameRef<'a> {
    fn value(self) -> AttributeValue<R<'a>> {
        match self {
            NameRef::Inline(s) => AttributeValue::String(R::new(s, gimli::LittleEndian)),
            NameRef::Str(o) => AttributeValue::DebugStrRef(gimli::DebugStrOffset(o)),
            NameRef::LineStr(o) => AttributeValue::DebugLineStrRef(gimli::DebugLineStrOffset(o)),
            NameRef::StrIndex(i) => AttributeValue::DebugStrOffsetsIndex(gimli::DebugStrOffsetsIndex(i)),
        }
    }
}

impl Value<'_> {
    /// gimli's `udata_value`.
    fn udata(self) -> Option<u64> {
        match self {
            Value::Unsigned(x) => Some(x),
            Value::Signed(x) => u64::try_from(x).ok(),
            _ => None,
        }
    }
}

/// Reads one value of a form [`decodes`] accepts.
fn read_value<'a>(c: &mut Cursor<'a>, form: DwForm, implicit: i64, e: gimli::Encoding) -> Option<Value<'a>> {
    let word = usize::from(e.format.word_size());
    let size = |x: u64| usize::try_from(x).ok();
    Some(match form {
        dw::DW_FORM_flag => Value::Flag(c.u8()? != 0),
        dw::DW_FORM_flag_present => Value::Flag(true),
        dw::DW_FORM_data1 => Value::Unsigned(c.uint(1)?),
        dw::DW_FORM_data2 => Value::Unsigned(c.uint(2)?),
        dw::DW_FORM_data4 => Value::Unsigned(c.uint(4)?),
        dw::DW_FORM_data8 => Value::Unsigned(c.uint(8)?),
        dw::DW_FORM_udata => Value::Unsigned(c.uleb()?),
        dw::DW_FORM_sdata => Value::Signed(c.sleb()?),
        dw::DW_FORM_implicit_const => Value::Signed(implicit),
        dw::DW_FORM_ref1 => Value::UnitRef(size(c.uint(1)?)?),
        dw::DW_FORM_ref2 => Value::UnitRef(size(c.uint(2)?)?),
        dw::DW_FORM_ref4 => Value::UnitRef(size(c.uint(4)?)?),
        dw::DW_FORM_ref8 => Value::UnitRef(size(c.uint(8)?)?),
        dw::DW_FORM_ref_udata => Value::UnitRef(size(c.uleb()?)?),
        dw::DW_FORM_string => Value::Name(NameRef::Inline(c.cstr()?)),
        dw::DW_FORM_strp => Value::Name(NameRef::Str(size(c.uint(word)?)?)),
        dw::DW_FORM_line_strp => Value::Name(NameRef::LineStr(size(c.uint(word)?)?)),
        dw::DW_FORM_strx | dw::DW_FORM_GNU_str_index => Value::Name(NameRef::StrIndex(size(c.uleb()?)?)),
        dw::DW_FORM_strx1 => Value::Name(NameRef::StrIndex(size(c.uint(1)?)?)),
        dw::DW_FORM_strx2 => Value::Name(NameRef::StrIndex(size(c.uint(2)?)?)),
        dw::DW_FORM_strx3 => Value::Name(NameRef::StrIndex(size(c.uint(3)?)?)),
        dw::DW_FORM_strx4 => Value::Name(NameRef::StrIndex(size(c.uint(4)?)?)),
        _ => return None,
    })
}

/// The attributes of one DIE the walker keeps.
#[derive(Default)]
struct Attrs<'a> {
    /// Read by the steps, or by gimli (then any form gimli reads).
    name: Option<NameRef<'a>>,
    name_gimli: Option<AttributeValue<R<'a>>>,
    decl: bool,
    external: bool,
    byte_size: u64,
    decl_line: u64,
    decl_file: Option<u64>,
    sibling: Option<usize>,
    origin: Option<usize>,
}

impl<'a> Attrs<'a> {
    /// Keeps one value, as the gimli path does (a repeated attribute: the last wins).
    fn set(&mut self, want: Want, v: Value<'a>) {
        match want {
            Want::Sibling => {
                if let Value::UnitRef(o) = v {
                    self.sibling = Some(o);
                }
            }
            Want::Origin => {
                if let Value::UnitRef(o) = v {
                    self.origin = Some(o);
                }
            }
            Want::Name => {
                if let Value::Name(n) = v {
                    self.name = Some(n);
                    self.name_gimli = None;
                }
            }
            Want::Declaration => self.decl = matches!(v, Value::Flag(true)),
            Want::External => self.external = matches!(v, Value::Flag(true)),
            Want::ByteSize => self.byte_size = v.udata().unwrap_or(0),
            Want::DeclLine => self.decl_line = v.udata().unwrap_or(0),
            Want::DeclFile => self.decl_file = v.udata(),
        }
    }

    /// Keeps one value read by gimli.
    fn set_gimli(&mut self, name: gimli::DwAt, v: AttributeValue<R<'a>>) {
        match name {
            dw::DW_AT_sibling => {
                if let AttributeValue::UnitRef(o) = v {
                    self.sibling = Some(o.0)
                }
            }
            dw::DW_AT_name => {
                self.name = None;
                self.name_gimli = Some(v);
            }
            dw::DW_AT_declaration => self.decl = matches!(v, AttributeValue::Flag(true)),
            dw::DW_AT_external => self.external = matches!(v, AttributeValue::Flag(true)),
            dw::DW_AT_byte_size => self.byte_size = v.udata_value().unwrap_or(0),
            dw::DW_AT_decl_line => self.decl_line = v.udata_value().unwrap_or(0),
            dw::DW_AT_decl_file => self.decl_file = file_index(v),
            _ => {
                if let AttributeValue::UnitRef(o) = v {
                    self.origin = Some(o.0)
                }
            }
        }
    }
}

/// One unit being walked: its bytes, compiled abbreviations and the gimli view for the
/// DIEs the steps do not cover.
struct Walk<'a, 'u> {
    dw: &'u Dwarf,
    unit: &'u gimli::Unit<R<'a>>,
    u: &'u UnitEntry,
    base: DieOffset,
    plans: Plans<'u>,
    c: Cursor<'a>,
}

impl<'a> Walk<'a, '_> {
    fn at(&self, off: usize) -> DieOffset {
        self.base.same_section(self.u.offset + off as u64)
    }

    fn truncated(&self, off: usize) -> ModelError {
        self.dw.malformed(self.at(off), "DIE attributes run past the end of the unit or are malformed")
    }

    /// Reads the DIE at the cursor: its plan (`None` for a null entry) and the wanted
    /// attributes, leaving the cursor after them.
    fn die(&mut self, a: &mut Attrs<'a>) -> Result<Option<Plan>, ModelError> {
        let off = self.c.pos;
        let code = self.c.uleb().ok_or_else(|| self.truncated(off))?;
        if code == 0 {
            return Ok(None);
        }
        let plan = self
            .plans
            .get(code)
            .ok_or_else(|| self.dw.malformed(self.at(off), format!("unknown abbreviation code {code}")))?;
        if plan.gimli {
            self.die_gimli(off, a)?;
            return Ok(Some(plan));
        }
        let enc = self.plans.encoding;
        let steps = self.plans.steps.get(plan.start as usize..plan.end as usize).unwrap_or(&[]);
        let c = &mut self.c;
        let ok = steps.iter().try_for_each(|step| match *step {
            Step::Skip(n) => c.skip(n),
            Step::SkipForm(form) => skip_form(c, form),
            Step::Read(want, form, implicit) => read_value(c, form, implicit, enc).map(|v| a.set(want, v)),
        });
        ok.ok_or_else(|| self.truncated(off))?;
        Ok(Some(plan))
    }

    /// [`Walk::die`] through gimli, for an abbreviation the steps do not cover.
    fn die_gimli(&mut self, off: usize, a: &mut Attrs<'a>) -> Result<(), ModelError> {
        let err = |e| self.dw.gimli_error(self.at(off), e);
        let mut raw = self.unit.entries_raw(Some(UnitOffset(off))).map_err(err)?;
        let Some(ab) = raw.read_abbreviation().map_err(err)? else { return Ok(()) };
        let kind = kind_of(ab.tag());
        for spec in ab.attributes() {
            let wanted = match spec.name() {
                dw::DW_AT_sibling => ab.has_children(),
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
            if wanted {
                let attr = raw.read_attribute(*spec).map_err(err)?;
                a.set_gimli(spec.name(), attr.value());
            } else {
                raw.skip_attributes(std::slice::from_ref(spec)).map_err(err)?;
            }
        }
        self.c.pos = raw.next_offset().0;
        Ok(())
    }

    /// Skips the children of the DIE at `off`, whose attributes the cursor has passed.
    fn skip_children(&mut self, off: usize) -> Result<(), ModelError> {
        let mut depth = 1usize;
        let mut scratch = Attrs::default();
        while depth > 0 {
            if self.c.pos >= self.c.buf.len() {
                return Err(self.dw.malformed(self.at(off), "children run past the end of the unit"));
            }
            match self.die(&mut scratch)? {
                None => depth -= 1,
                Some(p) if p.children => depth += 1,
                Some(_) => {}
            }
        }
        Ok(())
    }
}

impl Dwarf {
    /// Calls `visit` for each named top-level type or subprogram DIE of one unit, in
    /// order; stops early when it returns `false`.
    pub(crate) fn walk_unit<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        unit: &gimli::Unit<R<'a>>,
        mut visit: impl FnMut(TopDie<'a>) -> Result<bool, ModelError>,
    ) -> Result<(), ModelError> {
        use gimli::Section as _;
        let base = if u.in_types { DieOffset::types(u.offset) } else { DieOffset::info(u.offset) };
        let section = if u.in_types { d.debug_types.reader().slice() } else { d.debug_info.reader().slice() };
        let debug_str = d.debug_str.reader().slice();
        let buf = usize::try_from(u.offset)
            .ok()
            .zip(usize::try_from(u.end).ok())
            .and_then(|(s, e)| section.get(s..e))
            .ok_or_else(|| self.malformed(base, "unit lies outside its section"))?;
        let mut w = Walk {
            dw: self,
            unit,
            u,
            base,
            plans: Plans {
                abbrevs: &unit.abbreviations,
                encoding: unit.encoding(),
                by_code: Vec::new(),
                sparse: HashMap::new(),
                steps: Vec::new(),
            },
            c: Cursor { buf, pos: unit.header.header_size() },
        };
        let mut root = Attrs::default();
        let Some(root) = w.die(&mut root)? else { return Ok(()) };
        if !root.children {
            return Ok(());
        }
        loop {
            if w.c.pos >= buf.len() {
                return Ok(());
            }
            let off = w.c.pos;
            let mut a = Attrs::default();
            let Some(plan) = w.die(&mut a)? else { return Ok(()) };
            if let Some(kind) = plan.kind {
                let at = w.at(off);
                // A definition named through its declaration or abstract instance
                // (`DW_AT_specification`, `DW_AT_abstract_origin`): take the name,
                // linkage and place from there (same unit only; C compilers do not
                // emit cross-unit origins outside LTO).
                if a.name.is_none() && a.name_gimli.is_none() {
                    if let Some(o) = a.origin.filter(|&o| o < buf.len() && o != off) {
                        let err = |e| self.gimli_error(at, e);
                        let e = unit.entry(UnitOffset(o)).map_err(err)?;
                        a.name_gimli = e.attr_value(dw::DW_AT_name).map_err(err)?;
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
                let name = match (a.name, a.name_gimli) {
                    // The common case, without gimli's byte-at-a-time NUL search.
                    (Some(NameRef::Str(o)), _) => {
                        Some(debug_str.get(o..).and_then(|s| s.get(..memchr::memchr(0, s)?)).ok_or_else(|| {
                            self.malformed(at, format!("name at .debug_str offset {o:#x} is not a string"))
                        })?)
                    }
                    (Some(NameRef::Inline(s)), _) => Some(s),
                    (Some(n), _) => Some(self.string(d, unit, at, n.value())?),
                    (None, Some(v)) => Some(self.string(d, unit, at, v)?),
                    (None, None) => None,
                };
                if let Some(name) = name {
                    let mut flags = 0;
                    if a.decl {
                        flags |= FLAG_DECL;
                    }
                    if a.external {
                        flags |= FLAG_EXTERNAL;
                    }
                    if plan.base {
                        flags |= FLAG_BASE;
                    }
                    if u.in_types {
                        flags |= FLAG_TYPES;
                    }
                    let top = TopDie {
                        die: at,
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
            if plan.children {
                match a.sibling {
                    Some(s) if s > off && s < buf.len() => w.c.pos = s,
                    _ => w.skip_children(off)?,
                }
            }
        }
    }
}

fn file_index(v: AttributeValue<R<'_>>) -> Option<u64> {
    match v {
        AttributeValue::FileIndex(x) => Some(x),
        other => other.udata_value(),
    }
}
