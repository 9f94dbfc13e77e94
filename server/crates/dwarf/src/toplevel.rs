//! The top-level DIE walker behind the cold lookups and the name index (`toplevel`: the
//! field walk of a probe definition is `fevlint_syntax::walk`, a different thing).
//!
//! A kernel has 1.4 million named top-level DIEs among 14 million, and an index entry
//! needs a handful of attributes of each. So a unit's abbreviation table is parsed here
//! (not by gimli, whose per-abbreviation allocations cost more than the walk) and each
//! abbreviation compiled into a few steps: skip N bytes of fixed-size values nobody
//! reads, skip one variable-size value, read one wanted attribute. DIEs are then decoded
//! straight from the unit's bytes by running those steps. An abbreviation with a form
//! the steps do not cover (`DW_FORM_indirect`, a form unknown to gimli, a wanted
//! attribute in an unusual form) is read through gimli instead (a gimli `Unit` is made
//! for that unit on first need), so the walk sees what gimli's reader would: which
//! attribute wins when one repeats, which forms give a value, which give nothing.
//!
//! Children are skipped through `DW_AT_sibling` when it points forward inside the unit,
//! else by walking them with the same steps.
//!
//! Every read is bounds-checked; the abbreviation table is parsed once per unit and
//! each compiled step is a constant size, so memory is bounded by the table's bytes.

use std::cell::OnceCell;

use gimli::{constants as dw, AttributeValue, DwForm, UnitOffset};
use rustc_hash::FxHashMap;

use crate::scan::{Kind, TopDie, TopName, FLAG_BASE, FLAG_DECL, FLAG_EXTERNAL, FLAG_TYPES};
use crate::{DieOffset, Dwarf, UnitEntry, R};
use fevlint_types::model::ModelError;

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
    /// Of the unit DIE only.
    StmtList,
    CompDir,
    RootName,
    StrOffsetsBase,
}

#[derive(Clone, Copy, Debug)]
enum Step {
    /// Fixed-size values nobody reads, merged.
    Skip(usize),
    /// One variable-size value nobody reads.
    SkipForm(DwForm),
    /// One wanted attribute, in a form [`read_value`] decodes.
    Read(Want, DwForm, i64),
    /// A unit-DIE attribute in a form that gives nothing (the value is skipped by the
    /// steps that follow): it still hides later ones of that name, as in gimli.
    Seen(Want),
    // The reads of top-level DIEs in the forms compilers use for them, each decoded and
    // kept in one step ([`fast`]): what `Read` of that attribute and form keeps, without
    // a dispatch on the form, a [`Value`] and a dispatch on the attribute per value.
    /// `DW_FORM_ref4`.
    Ref4(RefSlot),
    /// `DW_AT_name` in `DW_FORM_strp`, 32-bit DWARF.
    Strp4Name,
    /// `DW_FORM_data1`, `data2`, `data4`, `data8`.
    Data1(NumSlot),
    Data2(NumSlot),
    Data4(NumSlot),
    Data8(NumSlot),
    /// `DW_FORM_udata`.
    Udata(NumSlot),
    /// `DW_FORM_implicit_const`: the value as `udata_value` gives it.
    Const(NumSlot, Option<u64>),
    /// `DW_FORM_flag_present`.
    FlagPresent(FlagSlot),
}

#[derive(Clone, Copy, Debug)]
enum RefSlot {
    Sibling,
    Origin,
}

#[derive(Clone, Copy, Debug)]
enum NumSlot {
    ByteSize,
    DeclLine,
    DeclFile,
}

#[derive(Clone, Copy, Debug)]
enum FlagSlot {
    Declaration,
    External,
}

/// The one-step form of reading `want` in `form` ([`Step::Ref4`] and the rest), for the
/// attributes of top-level DIEs; `None`: read it through [`Step::Read`].
fn fast(want: Want, form: DwForm, implicit: i64, e: gimli::Encoding) -> Option<Step> {
    let num = match want {
        Want::ByteSize => Some(NumSlot::ByteSize),
        Want::DeclLine => Some(NumSlot::DeclLine),
        Want::DeclFile => Some(NumSlot::DeclFile),
        _ => None,
    };
    Some(match (want, form) {
        (Want::Sibling, dw::DW_FORM_ref4) => Step::Ref4(RefSlot::Sibling),
        (Want::Origin, dw::DW_FORM_ref4) => Step::Ref4(RefSlot::Origin),
        (Want::Name, dw::DW_FORM_strp) if e.format == gimli::Format::Dwarf32 => Step::Strp4Name,
        (Want::Declaration, dw::DW_FORM_flag_present) => Step::FlagPresent(FlagSlot::Declaration),
        (Want::External, dw::DW_FORM_flag_present) => Step::FlagPresent(FlagSlot::External),
        (_, dw::DW_FORM_data1) => Step::Data1(num?),
        (_, dw::DW_FORM_data2) => Step::Data2(num?),
        (_, dw::DW_FORM_data4) => Step::Data4(num?),
        (_, dw::DW_FORM_data8) => Step::Data8(num?),
        (_, dw::DW_FORM_udata) => Step::Udata(num?),
        (_, dw::DW_FORM_implicit_const) => Step::Const(num?, u64::try_from(implicit).ok()),
        _ => return None,
    })
}

/// One attribute specification of an abbreviation.
#[derive(Clone, Copy, Debug)]
struct Spec {
    name: gimli::DwAt,
    form: DwForm,
    implicit: i64,
}

/// One abbreviation, compiled.
#[derive(Clone, Copy, Debug)]
struct Plan {
    kind: Option<Kind>,
    base: bool,
    children: bool,
    /// Read this abbreviation's DIEs through gimli (see the module doc).
    gimli: bool,
    /// Its compiled steps in [`Plans::steps`], and its attributes in [`Plans::specs`].
    steps: (u32, u32),
    specs: (u32, u32),
}

/// The abbreviation table of one unit, compiled.
///
/// The buffers go from unit to unit, and so do compiled abbreviations: units repeat
/// the same declarations (a member, a pointer type, a parameter, under other codes), so
/// each distinct declaration is compiled once per worker and found again by its bytes.
#[derive(Default)]
pub(crate) struct Plans {
    by_code: Vec<Option<Plan>>,
    sparse: FxHashMap<u64, Plan>,
    specs: Vec<Spec>,
    /// The steps of every plan in `compiled`.
    steps: Vec<Step>,
    /// Declarations (the bytes after the code) compiled for `encoding`.
    compiled: FxHashMap<Box<[u8]>, Plan>,
    encoding: Option<gimli::Encoding>,
}

/// Compiled declarations kept per worker, at most (a bound on memory whatever a file's
/// abbreviation tables hold; a kernel has a few thousand distinct ones).
const COMPILED_MAX: usize = 1 << 16;

impl Plans {
    /// By reference: copying a plan out through an `Option` cost the walk more in
    /// store-forwarding stalls than decoding the DIE.
    #[inline]
    fn get(&self, code: u64) -> Option<&Plan> {
        match usize::try_from(code).ok().filter(|_| code < DENSE_CODES) {
            Some(i) => self.by_code.get(i).and_then(Option::as_ref),
            None => self.sparse.get(&code),
        }
    }

    fn steps(&self, p: &Plan) -> &[Step] {
        self.steps.get(p.steps.0 as usize..p.steps.1 as usize).unwrap_or(&[])
    }

    fn specs(&self, p: &Plan) -> &[Spec] {
        self.specs.get(p.specs.0 as usize..p.specs.1 as usize).unwrap_or(&[])
    }

    /// Parses the table at the start of `table` as gimli does (a missing terminator
    /// ends it; a zero tag or form, a bad children byte or a repeated code is an error)
    /// and compiles every abbreviation, into `p`'s buffers (reused from unit to unit).
    fn parse(mut p: Plans, table: &[u8], encoding: gimli::Encoding) -> Result<Plans, String> {
        p.by_code.clear();
        p.sparse.clear();
        p.specs.clear();
        if p.encoding != Some(encoding) || p.compiled.len() >= COMPILED_MAX {
            p.compiled.clear();
            p.steps.clear();
            p.encoding = Some(encoding);
        }
        let mut c = Cursor { buf: table, pos: 0 };
        let bad = |what: &str, at: usize| format!("{what} at .debug_abbrev offset +{at:#x}");
        let u16_of = |x: Option<u64>| x.and_then(|x| u16::try_from(x).ok());
        while c.pos < table.len() {
            let at = c.pos;
            let code = c.uleb().ok_or_else(|| bad("bad abbreviation code", at))?;
            if code == 0 {
                break;
            }
            let decl = c.pos;
            let tag = u16_of(c.uleb()).filter(|&t| t != 0).ok_or_else(|| bad("bad tag", at))?;
            let children = match c.u8() {
                Some(0) => false,
                Some(1) => true,
                _ => return Err(bad("bad children byte", at)),
            };
            let first = p.specs.len();
            loop {
                let name = u16_of(c.uleb()).ok_or_else(|| bad("bad attribute name", at))?;
                let form = u16_of(c.uleb()).ok_or_else(|| bad("bad attribute form", at))?;
                match (name, form) {
                    (0, 0) => break,
                    (0, _) | (_, 0) => return Err(bad("bad attribute specification", at)),
                    _ => {}
                }
                let form = DwForm(form);
                let implicit = if form == dw::DW_FORM_implicit_const {
                    c.sleb().ok_or_else(|| bad("bad implicit constant", at))?
                } else {
                    0
                };
                p.specs.push(Spec { name: gimli::DwAt(name), form, implicit });
            }
            let specs = (first as u32, p.specs.len() as u32);
            let plan = match p.compiled.get(&table[decl..c.pos]) {
                Some(plan) => Plan { specs, ..*plan },
                None => {
                    let plan = compile(gimli::DwTag(tag), children, specs, &p.specs[first..], encoding, &mut p.steps);
                    p.compiled.insert(table[decl..c.pos].into(), plan);
                    plan
                }
            };
            let fresh = match usize::try_from(code).ok().filter(|_| code < DENSE_CODES) {
                Some(i) => {
                    if p.by_code.len() <= i {
                        // Codes usually count up from 1: grow by doubling, not by one.
                        p.by_code.resize((i + 1).max(2 * p.by_code.len()).min(DENSE_CODES as usize), None);
                    }
                    p.by_code[i].replace(plan).is_none()
                }
                None => p.sparse.insert(code, plan).is_none(),
            };
            if !fresh {
                return Err(bad(&format!("abbreviation code {code} repeated"), at));
            }
        }
        Ok(p)
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

/// The attribute a top-level DIE of `kind` needs, if any.
fn top_want(name: gimli::DwAt, kind: Option<Kind>, children: bool) -> Option<Want> {
    match name {
        dw::DW_AT_sibling if children => Some(Want::Sibling),
        _ if kind.is_none() => None,
        dw::DW_AT_name => Some(Want::Name),
        dw::DW_AT_declaration => Some(Want::Declaration),
        dw::DW_AT_external => Some(Want::External),
        dw::DW_AT_byte_size => Some(Want::ByteSize),
        dw::DW_AT_decl_line => Some(Want::DeclLine),
        dw::DW_AT_decl_file => Some(Want::DeclFile),
        dw::DW_AT_specification | dw::DW_AT_abstract_origin => Some(Want::Origin),
        _ => None,
    }
}

/// The attribute the unit DIE needs, if any.
fn root_want(name: gimli::DwAt) -> Option<Want> {
    match name {
        dw::DW_AT_stmt_list => Some(Want::StmtList),
        dw::DW_AT_comp_dir => Some(Want::CompDir),
        dw::DW_AT_name => Some(Want::RootName),
        dw::DW_AT_str_offsets_base => Some(Want::StrOffsetsBase),
        _ => None,
    }
}

/// Appends the steps for `specs` to `steps`; `gimli` is set when a form needs gimli.
fn compile_steps(
    specs: &[Spec],
    encoding: gimli::Encoding,
    steps: &mut Vec<Step>,
    want: impl Fn(gimli::DwAt) -> Option<Want>,
) -> bool {
    let start = steps.len();
    for spec in specs {
        let form = spec.form;
        if let Some(w) = want(spec.name) {
            if decodes(w, form, encoding) {
                steps.push(fast(w, form, spec.implicit, encoding).unwrap_or(Step::Read(w, form, spec.implicit)));
                continue;
            }
            if !matches!(w, Want::StmtList | Want::CompDir | Want::RootName | Want::StrOffsetsBase) {
                return true;
            }
            // gimli's value of a unit-DIE attribute in another form is not one the
            // unit reader takes: noted, then skipped.
            steps.push(Step::Seen(w));
        }
        match fixed_size(form, encoding) {
            Some(0) => {}
            Some(n) => match steps[start..].last_mut() {
                Some(Step::Skip(m)) => *m += n,
                _ => steps.push(Step::Skip(n)),
            },
            None if variable(form) => steps.push(Step::SkipForm(form)),
            None => return true,
        }
    }
    false
}

fn compile(
    tag: gimli::DwTag,
    children: bool,
    specs_at: (u32, u32),
    specs: &[Spec],
    encoding: gimli::Encoding,
    steps: &mut Vec<Step>,
) -> Plan {
    let kind = kind_of(tag);
    let start = steps.len();
    let gimli = compile_steps(specs, encoding, steps, |name| top_want(name, kind, children));
    if gimli {
        steps.truncate(start);
    }
    Plan {
        kind,
        base: tag == dw::DW_TAG_base_type,
        children,
        gimli,
        steps: (start as u32, steps.len() as u32),
        specs: specs_at,
    }
}

/// Whether [`read_value`] decodes `form` for `want` the way gimli's reader does.
fn decodes(want: Want, form: DwForm, e: gimli::Encoding) -> bool {
    match want {
        // gimli reads these as section offsets (`allow_section_offset`).
        Want::StmtList => {
            form == dw::DW_FORM_sec_offset
                || (form == dw::DW_FORM_data4 && e.format == gimli::Format::Dwarf32)
                || (form == dw::DW_FORM_data8 && e.format == gimli::Format::Dwarf64)
        }
        Want::StrOffsetsBase => form == dw::DW_FORM_sec_offset,
        Want::Sibling | Want::Origin => {
            matches!(
                form,
                dw::DW_FORM_ref1 | dw::DW_FORM_ref2 | dw::DW_FORM_ref4 | dw::DW_FORM_ref8 | dw::DW_FORM_ref_udata
            )
        }
        Want::Name | Want::CompDir | Want::RootName => matches!(
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
    #[inline]
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let b = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(b)
    }

    #[inline]
    fn skip(&mut self, n: usize) -> Option<()> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.buf.len())?;
        self.pos = end;
        Some(())
    }

    #[inline]
    fn u8(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    #[inline(always)]
    fn u32(&mut self) -> Option<u32> {
        let b = self.bytes(4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Little-endian unsigned integer of `n` (≤ 8) bytes; the sizes forms have are
    /// single loads.
    #[inline(always)]
    fn uint(&mut self, n: usize) -> Option<u64> {
        let b = self.bytes(n)?;
        Some(match *b {
            [x] => u64::from(x),
            [x, y] => u64::from(u16::from_le_bytes([x, y])),
            [x, y, z, w] => u64::from(u32::from_le_bytes([x, y, z, w])),
            [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]),
            _ => b.iter().rev().fold(0u64, |acc, &x| (acc << 8) | u64::from(x)),
        })
    }

    #[inline(always)]
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

    #[inline]
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

    #[inline]
    fn skip_leb(&mut self) -> Option<()> {
        let rest = self.buf.get(self.pos..)?;
        let n = rest.iter().position(|&b| b & 0x80 == 0)?;
        self.pos += n + 1;
        Some(())
    }

    #[inline]
    fn cstr(&mut self) -> Option<&'a [u8]> {
        let rest = self.buf.get(self.pos..)?;
        let n = memchr::memchr(0, rest)?;
        self.pos += n + 1;
        rest.get(..n)
    }
}

/// Steps over one value of a [`variable`] form.
#[inline]
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
    /// Where the string is, tagged by section (never 0); `None` for an index into
    /// `.debug_str_offsets`, which depends on the unit's base.
    fn key(self, file_start: usize) -> Option<u64> {
        Some(match self {
            NameRef::Inline(s) => 1 << 62 | (s.as_ptr() as usize).wrapping_sub(file_start) as u64,
            NameRef::Str(o) => 2 << 62 | o as u64,
            NameRef::LineStr(o) => 3 << 62 | o as u64,
            NameRef::StrIndex(_) => return None,
        })
    }

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
#[inline(always)]
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
        dw::DW_FORM_sec_offset => Value::Unsigned(c.uint(word)?),
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
            Want::StmtList | Want::CompDir | Want::RootName | Want::StrOffsetsBase => {}
        }
    }

    /// Keeps a number as [`Attrs::set`] keeps a value's `udata`.
    #[inline(always)]
    fn num(&mut self, slot: NumSlot, v: Option<u64>) {
        match slot {
            NumSlot::ByteSize => self.byte_size = v.unwrap_or(0),
            NumSlot::DeclLine => self.decl_line = v.unwrap_or(0),
            NumSlot::DeclFile => self.decl_file = v,
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

/// The unit DIE's attributes, as [`Dwarf::line_program`] and [`Dwarf::unit`] read
/// them.
#[derive(Default)]
struct Root<'a> {
    /// gimli's `attr_value` finds the first of a name, even in a form that gives
    /// nothing: the outer `Option` is "seen".
    stmt_list: Option<Option<usize>>,
    comp_dir: Option<Option<NameRef<'a>>>,
    name: Option<Option<NameRef<'a>>>,
    /// The last one, as [`Dwarf::unit`] loops over all of them.
    str_offsets_base: usize,
}

impl<'a> Root<'a> {
    fn set(&mut self, want: Want, v: Option<Value<'a>>) {
        let name = |v: Option<Value<'a>>| match v {
            Some(Value::Name(n)) => Some(n),
            _ => None,
        };
        let offset = |v: Option<Value<'a>>| match v {
            Some(Value::Unsigned(o)) => usize::try_from(o).ok(),
            _ => None,
        };
        match want {
            Want::StmtList => {
                self.stmt_list.get_or_insert(offset(v));
            }
            Want::CompDir => {
                self.comp_dir.get_or_insert(name(v));
            }
            Want::RootName => {
                self.name.get_or_insert(name(v));
            }
            Want::StrOffsetsBase => {
                if let Some(o) = offset(v) {
                    self.str_offsets_base = o;
                }
            }
            _ => {}
        }
    }
}

/// Runs `steps` over the cursor, handing each read (or seen) value to `set`.
#[inline(always)]
fn run<'a>(
    c: &mut Cursor<'a>,
    steps: &[Step],
    e: gimli::Encoding,
    mut set: impl FnMut(Want, Option<Value<'a>>),
) -> Option<()> {
    for step in steps {
        match *step {
            Step::Skip(n) => c.skip(n)?,
            Step::SkipForm(form) => skip_form(c, form)?,
            Step::Read(want, form, implicit) => set(want, Some(read_value(c, form, implicit, e)?)),
            Step::Seen(want) => set(want, None),
            // Compiled for the attributes of top-level DIEs only ([`fast`]), which a
            // unit DIE's steps never read.
            Step::Ref4(_)
            | Step::Strp4Name
            | Step::Data1(_)
            | Step::Data2(_)
            | Step::Data4(_)
            | Step::Data8(_)
            | Step::Udata(_)
            | Step::Const(..)
            | Step::FlagPresent(_) => return None,
        }
    }
    Some(())
}

/// Runs a top-level DIE's `steps` over the cursor, keeping what they read in `a`.
#[inline(always)]
fn run_top<'a>(c: &mut Cursor<'a>, steps: &[Step], e: gimli::Encoding, a: &mut Attrs<'a>) -> Option<()> {
    for step in steps {
        match *step {
            Step::Skip(n) => c.skip(n)?,
            Step::Ref4(RefSlot::Sibling) => a.sibling = Some(c.u32()? as usize),
            Step::Strp4Name => {
                a.name = Some(NameRef::Str(c.u32()? as usize));
                a.name_gimli = None;
            }
            Step::Data1(slot) => a.num(slot, Some(u64::from(c.u8()?))),
            Step::Data2(slot) => a.num(slot, Some(c.uint(2)?)),
            Step::Data4(slot) => a.num(slot, Some(u64::from(c.u32()?))),
            Step::Data8(slot) => a.num(slot, Some(c.uint(8)?)),
            Step::FlagPresent(FlagSlot::Declaration) => a.decl = true,
            Step::FlagPresent(FlagSlot::External) => a.external = true,
            Step::Ref4(RefSlot::Origin) => a.origin = Some(c.u32()? as usize),
            Step::Udata(slot) => a.num(slot, Some(c.uleb()?)),
            Step::Const(slot, v) => a.num(slot, v),
            Step::SkipForm(form) => skip_form(c, form)?,
            Step::Read(want, form, implicit) => a.set(want, read_value(c, form, implicit, e)?),
            Step::Seen(_) => {}
        }
    }
    Some(())
}

/// One unit opened for walking: its bytes, its compiled abbreviation table, what its
/// unit DIE says, and (made on first need) the gimli view for what the steps leave to
/// gimli.
pub(crate) struct UnitWalk<'a, 'd> {
    dw: &'d Dwarf,
    d: &'d gimli::Dwarf<R<'a>>,
    u: UnitEntry,
    base: DieOffset,
    encoding: gimli::Encoding,
    /// The unit, header included (DIE offsets are relative to its start).
    buf: &'a [u8],
    debug_str: &'a [u8],
    debug_line_str: &'a [u8],
    debug_line: &'a [u8],
    plans: Plans,
    root: Root<'a>,
    /// Where the unit DIE's children start, if it has any.
    children: Option<usize>,
    /// Where the unit DIE starts.
    header_size: usize,
    gimli_unit: OnceCell<gimli::Unit<R<'a>>>,
}

impl Dwarf {
    /// Opens unit `u` for walking: reads its header, parses its abbreviation table and
    /// reads its unit DIE.
    pub(crate) fn walk<'a, 'd>(
        &'d self,
        d: &'d gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
    ) -> Result<UnitWalk<'a, 'd>, ModelError> {
        self.walk_reusing(d, u, Plans::default())
    }

    /// [`Dwarf::walk`] with the buffers of a previous walk ([`UnitWalk::recycle`]).
    pub(crate) fn walk_reusing<'a, 'd>(
        &'d self,
        d: &'d gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        plans: Plans,
    ) -> Result<UnitWalk<'a, 'd>, ModelError> {
        use gimli::Section as _;
        let base = if u.in_types { DieOffset::types(u.offset) } else { DieOffset::info(u.offset) };
        let err = |e| self.gimli_error(base, e);
        let header = if u.in_types {
            let rest = d.debug_types.reader().range_from(u.offset as usize..);
            let mut one = gimli::DebugTypes::from(rest).units();
            one.next().map_err(err)?.ok_or_else(|| self.malformed(base, "type unit vanished"))?
        } else {
            d.debug_info.header_from_offset(gimli::DebugInfoOffset(u.offset as usize)).map_err(err)?
        };
        let section = if u.in_types { d.debug_types.reader().slice() } else { d.debug_info.reader().slice() };
        let buf = usize::try_from(u.offset)
            .ok()
            .zip(usize::try_from(u.end).ok())
            .and_then(|(s, e)| section.get(s..e))
            .ok_or_else(|| self.malformed(base, "unit lies outside its section"))?;
        let encoding = header.encoding();
        let table = d.debug_abbrev.reader().slice().get(header.debug_abbrev_offset().0..).unwrap_or(&[]);
        let plans = Plans::parse(plans, table, encoding).map_err(|m| {
            self.malformed(base, format!("abbreviations at {:#x}: {m}", header.debug_abbrev_offset().0))
        })?;
        let mut w = UnitWalk {
            dw: self,
            d,
            u: *u,
            base,
            encoding,
            buf,
            debug_str: d.debug_str.reader().slice(),
            debug_line_str: d.debug_line_str.reader().slice(),
            debug_line: d.debug_line.reader().slice(),
            plans,
            root: Root::default(),
            children: None,
            header_size: header.header_size(),
            gimli_unit: OnceCell::new(),
        };
        let mut c = Cursor { buf, pos: header.header_size() };
        let off = c.pos;
        let code = c.uleb().ok_or_else(|| w.truncated(off))?;
        if code != 0 {
            let plan = *w.plans.get(code).ok_or_else(|| w.unknown(off, code))?;
            let mut steps = Vec::new();
            if compile_steps(w.plans.specs(&plan), encoding, &mut steps, root_want) {
                w.root_gimli(off)?;
                c.pos = w.die_end_gimli(off)?;
            } else {
                let mut root = Root::default();
                run(&mut c, &steps, encoding, |want, v| root.set(want, v)).ok_or_else(|| w.truncated(off))?;
                w.root = root;
            }
            w.children = plan.children.then_some(c.pos);
        }
        Ok(w)
    }

    /// Calls `visit` for each named top-level type or subprogram DIE of one unit, in
    /// order; stops early when it returns `false`.
    pub(crate) fn walk_unit<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        u: &UnitEntry,
        visit: impl FnMut(TopDie<'a>) -> Result<bool, ModelError>,
    ) -> Result<(), ModelError> {
        self.walk(d, u)?.top_dies(visit)
    }
}

impl<'a> UnitWalk<'a, '_> {
    fn at(&self, off: usize) -> DieOffset {
        self.base.same_section(self.u.offset + off as u64)
    }

    /// The compiled abbreviations' buffers, for the next [`Dwarf::walk_reusing`].
    pub(crate) fn recycle(self) -> Plans {
        self.plans
    }

    /// The unit's first byte, as an error location.
    pub(crate) fn unit_at(&self) -> DieOffset {
        self.base
    }

    fn truncated(&self, off: usize) -> ModelError {
        self.dw.malformed(self.at(off), "DIE attributes run past the end of the unit or are malformed")
    }

    fn unknown(&self, off: usize, code: u64) -> ModelError {
        self.dw.malformed(self.at(off), format!("unknown abbreviation code {code}"))
    }

    /// The gimli view of this unit, made on first need (abbreviations parsed by gimli,
    /// shared through the [`Dwarf`]'s cache).
    fn gimli_unit(&self) -> Result<&gimli::Unit<R<'a>>, ModelError> {
        if let Some(u) = self.gimli_unit.get() {
            return Ok(u);
        }
        let unit = self.dw.unit(self.d, &self.u)?;
        Ok(self.gimli_unit.get_or_init(|| unit))
    }

    /// The unit DIE's attributes through gimli, for a form the steps do not cover.
    fn root_gimli(&mut self, off: usize) -> Result<(), ModelError> {
        let unit = self.gimli_unit()?;
        let err = |e| self.dw.gimli_error(self.at(off), e);
        let e = unit.entry(UnitOffset(off)).map_err(err)?;
        let name = |v: Option<AttributeValue<R<'a>>>| match v {
            Some(AttributeValue::String(s)) => Some(NameRef::Inline(s.slice())),
            Some(AttributeValue::DebugStrRef(o)) => Some(NameRef::Str(o.0)),
            Some(AttributeValue::DebugLineStrRef(o)) => Some(NameRef::LineStr(o.0)),
            Some(AttributeValue::DebugStrOffsetsIndex(i)) => Some(NameRef::StrIndex(i.0)),
            _ => None,
        };
        let stmt_list = match e.attr_value(dw::DW_AT_stmt_list).map_err(err)? {
            Some(AttributeValue::DebugLineRef(o)) => Some(Some(o.0)),
            Some(_) => Some(None),
            None => None,
        };
        let comp_dir = e.attr_value(dw::DW_AT_comp_dir).map_err(err)?.map(|v| name(Some(v)));
        let comp_name = e.attr_value(dw::DW_AT_name).map_err(err)?.map(|v| name(Some(v)));
        let root = Root { stmt_list, comp_dir, name: comp_name, str_offsets_base: unit.str_offsets_base.0 };
        self.root = root;
        Ok(())
    }

    /// Where the DIE at `off` ends, through gimli.
    fn die_end_gimli(&self, off: usize) -> Result<usize, ModelError> {
        let unit = self.gimli_unit()?;
        let err = |e| self.dw.gimli_error(self.at(off), e);
        let mut raw = unit.entries_raw(Some(UnitOffset(off))).map_err(err)?;
        if let Some(ab) = raw.read_abbreviation().map_err(err)? {
            raw.skip_attributes(ab.attributes()).map_err(err)?;
        }
        Ok(raw.next_offset().0)
    }

    /// A string attribute value, as gimli's `Dwarf::attr_string` resolves it for this
    /// unit (`DW_FORM_strx` through the unit's `DW_AT_str_offsets_base`).
    pub(crate) fn string(&self, at: DieOffset, v: AttributeValue<R<'a>>) -> Result<&'a [u8], ModelError> {
        let d = self.d;
        let err = |e| self.dw.gimli_error(at, e);
        // The common two by one NUL search (gimli looks byte by byte); gimli's own
        // reader, and its error, when that finds no string.
        let cstr = |section: &'a [u8], o: usize| section.get(o..).and_then(|s| s.get(..memchr::memchr(0, s)?));
        let s = match v {
            AttributeValue::String(s) => s,
            AttributeValue::DebugStrRef(o) => match cstr(self.debug_str, o.0) {
                Some(s) => return Ok(s),
                None => d.string(o).map_err(err)?,
            },
            AttributeValue::DebugLineStrRef(o) => match cstr(self.debug_line_str, o.0) {
                Some(s) => return Ok(s),
                None => d.line_string(o).map_err(err)?,
            },
            AttributeValue::DebugStrRefSup(o) => d.sup_string(o).map_err(err)?,
            AttributeValue::DebugStrOffsetsIndex(i) => {
                let base = gimli::DebugStrOffsetsBase(self.root.str_offsets_base);
                let o = d.debug_str_offsets.get_str_offset(self.encoding.format, base, i).map_err(err)?;
                d.string(o).map_err(err)?
            }
            _ => return Err(err(gimli::Error::ExpectedStringAttributeValue)),
        };
        Ok(s.slice())
    }

    /// Reads the file table of the unit's line program header into `t` when it is
    /// DWARF 5, 32-bit, and its entries are in the forms compilers use, checking on the
    /// way what gimli's header parser checks; `false`: read the header through gimli
    /// ([`UnitWalk::line_program`]), which gives its own answer. gimli builds the whole
    /// header (every entry, every field), which cost the index more than its DIEs' names.
    pub(crate) fn file_table_v5(&self, t: &mut FileTable<'a>) -> bool {
        t.dirs.clear();
        t.files.clear();
        t.formats.clear();
        self.read_file_table_v5(t).is_some()
    }

    fn read_file_table_v5(&self, t: &mut FileTable<'a>) -> Option<()> {
        let offset = self.root.stmt_list.flatten()?;
        let rest = self.debug_line.get(offset..)?;
        let unit_length = usize::try_from(Cursor { buf: rest, pos: 0 }.u32()?).ok()?;
        if unit_length >= 0xffff_fff0 {
            return None;
        }
        let unit = rest.get(..unit_length.checked_add(4)?)?;
        let mut c = Cursor { buf: unit, pos: 4 };
        let (version, address_size, segment_selector_size) = (c.uint(2)?, c.u8()?, c.u8()?);
        if version != 5 || !matches!(address_size, 1 | 2 | 4 | 8) || segment_selector_size != 0 {
            return None;
        }
        let header_length = usize::try_from(c.u32()?).ok()?;
        let header = unit.get(..c.pos.checked_add(header_length)?)?;
        let mut c = Cursor { buf: header, pos: c.pos };
        let [min_inst, max_ops, _is_stmt, _line_base, line_range, opcode_base] =
            [c.u8()?, c.u8()?, c.u8()?, c.u8()?, c.u8()?, c.u8()?];
        if min_inst == 0 || max_ops == 0 || line_range == 0 || opcode_base == 0 {
            return None;
        }
        c.skip(usize::from(opcode_base - 1))?;
        for list in [Entries::Dirs, Entries::Files] {
            // The entry format: (content type, form) pairs, exactly one of them the path.
            t.formats.clear();
            let count = c.u8()?;
            for _ in 0..count {
                let content = u16::try_from(c.uleb()?).unwrap_or(u16::MAX);
                let form = u16::try_from(c.uleb()?).ok()?;
                t.formats.push((content, DwForm(form)));
            }
            if t.formats.iter().filter(|(content, _)| *content == dw::DW_LNCT_path.0).count() != 1 {
                return None;
            }
            let entries = c.uleb()?;
            for _ in 0..entries {
                let (mut path, mut dir) = (None, 0);
                for &(content, form) in &t.formats {
                    let v = line_value(&mut c, form)?;
                    if content == dw::DW_LNCT_path.0 {
                        path = match v {
                            LineValue::Path(p) => Some(p),
                            _ => return None,
                        };
                    } else if content == dw::DW_LNCT_directory_index.0 {
                        if let LineValue::Number(Some(n)) = v {
                            dir = n;
                        }
                    }
                }
                match list {
                    Entries::Dirs => t.dirs.push(path?),
                    Entries::Files => t.files.push((path?, dir)),
                }
            }
        }
        Some(())
    }

    /// Where the strings of file `f`'s directory (0: none) and name are, as numbers
    /// that are equal only for the same bytes, so that a file's path need be read and
    /// hashed once however many units name it. `None`: no such file, or a name in a
    /// form whose place depends on the unit.
    pub(crate) fn file_key(&self, t: &FileTable<'a>, f: u64) -> Option<(u64, u64)> {
        let &(name, dir) = t.files.get(usize::try_from(f).ok()?)?;
        let base = self.dw.elf().data().as_ptr() as usize;
        let dir = match usize::try_from(dir) {
            Ok(d) if d != 0 => t.dirs.get(d).map_or(Some(0), |v| v.key(base)),
            _ => Some(0),
        };
        Some((dir?, name.key(base)?))
    }

    /// File `f` of a table [`UnitWalk::file_table_v5`] read: its directory's path (none
    /// for directory 0, the compilation directory) and its own, as gimli's
    /// `LineProgramHeader::file` and `FileEntry::directory` find them. `None`: no such
    /// file.
    pub(crate) fn file_path(&self, t: &FileTable<'a>, f: u64) -> Option<(Option<&'a [u8]>, &'a [u8])> {
        let at = self.base;
        let &(name, dir) = t.files.get(usize::try_from(f).ok()?)?;
        let name = self.string(at, name.value()).unwrap_or(b"");
        let dir = match usize::try_from(dir) {
            Ok(d) if d != 0 => t.dirs.get(d).and_then(|v| self.string(at, v.value()).ok()),
            _ => None,
        };
        Some((dir, name))
    }

    /// The unit's line program header (`None`: none, or unreadable), for file names.
    pub(crate) fn line_program(&self) -> Option<gimli::IncompleteLineProgram<R<'a>>> {
        let at = self.base;
        let offset = self.root.stmt_list.flatten()?;
        let s = |n: Option<Option<NameRef<'a>>>| {
            n.flatten().and_then(|n| self.string(at, n.value()).ok()).map(|b| R::new(b, gimli::LittleEndian))
        };
        let (dir, name) = (s(self.root.comp_dir), s(self.root.name));
        self.d.debug_line.program(gimli::DebugLineOffset(offset), self.encoding.address_size, dir, name).ok()
    }

    /// Reads the DIE at the cursor: its plan (`None` for a null entry) and the wanted
    /// attributes, leaving the cursor after them.
    fn die(&self, c: &mut Cursor<'a>, a: &mut Attrs<'a>) -> Result<Option<&Plan>, ModelError> {
        let off = c.pos;
        let code = c.uleb().ok_or_else(|| self.truncated(off))?;
        if code == 0 {
            return Ok(None);
        }
        let plan = self.plans.get(code).ok_or_else(|| self.unknown(off, code))?;
        if plan.gimli {
            c.pos = self.die_gimli(off, a)?;
            return Ok(Some(plan));
        }
        run_top(c, self.plans.steps(plan), self.encoding, a).ok_or_else(|| self.truncated(off))?;
        Ok(Some(plan))
    }

    /// [`UnitWalk::die`] through gimli, for an abbreviation the steps do not cover;
    /// returns where the DIE ends.
    fn die_gimli(&self, off: usize, a: &mut Attrs<'a>) -> Result<usize, ModelError> {
        let unit = self.gimli_unit()?;
        let err = |e| self.dw.gimli_error(self.at(off), e);
        let mut raw = unit.entries_raw(Some(UnitOffset(off))).map_err(err)?;
        let Some(ab) = raw.read_abbreviation().map_err(err)? else { return Ok(raw.next_offset().0) };
        let kind = kind_of(ab.tag());
        for spec in ab.attributes() {
            if top_want(spec.name(), kind, ab.has_children()).is_some() {
                let attr = raw.read_attribute(*spec).map_err(err)?;
                a.set_gimli(spec.name(), attr.value());
            } else {
                raw.skip_attributes(std::slice::from_ref(spec)).map_err(err)?;
            }
        }
        Ok(raw.next_offset().0)
    }

    /// Takes the name, linkage and place of a definition (`a`, the DIE at `at`) from
    /// the declaration or abstract instance at `o`, as gimli's `attr_value` finds
    /// them (the first attribute of each name decides).
    fn origin(&self, at: DieOffset, o: usize, a: &mut Attrs<'a>) -> Result<(), ModelError> {
        if o < self.header_size {
            return Err(self.dw.malformed(at, format!("reference {o:#x} points into the unit header")));
        }
        let mut c = Cursor { buf: self.buf, pos: o };
        let code = c.uleb().ok_or_else(|| self.truncated(o))?;
        if code == 0 {
            return Err(self.dw.malformed(at, format!("reference {o:#x} points at a null entry")));
        }
        let plan = self.plans.get(code).ok_or_else(|| self.unknown(o, code))?;
        let specs = self.plans.specs(plan);
        let mut name: Option<Option<NameRef<'a>>> = None;
        let mut external = None;
        let mut line = None;
        let mut file = None;
        for spec in specs {
            let first = match spec.name {
                dw::DW_AT_name => name.is_none(),
                dw::DW_AT_external => external.is_none(),
                dw::DW_AT_decl_line => line.is_none(),
                dw::DW_AT_decl_file => file.is_none(),
                _ => false,
            };
            let want = match spec.name {
                dw::DW_AT_name => Want::Name,
                dw::DW_AT_external => Want::External,
                _ => Want::DeclLine,
            };
            if first && decodes(want, spec.form, self.encoding) {
                let v = read_value(&mut c, spec.form, spec.implicit, self.encoding).ok_or_else(|| self.truncated(o))?;
                match spec.name {
                    dw::DW_AT_name => name = Some(if let Value::Name(n) = v { Some(n) } else { None }),
                    dw::DW_AT_external => external = Some(matches!(v, Value::Flag(true))),
                    dw::DW_AT_decl_line => line = Some(v.udata()),
                    _ => file = Some(v.udata()),
                }
                continue;
            }
            if first && spec.name == dw::DW_AT_name {
                // A name in a form the steps do not read: gimli's value, and its error.
                return self.origin_gimli(at, o, a);
            }
            if first {
                // gimli's value in another form gives nothing here.
                match spec.name {
                    dw::DW_AT_external => external = Some(false),
                    dw::DW_AT_decl_line => line = Some(None),
                    _ => file = Some(None),
                }
            }
            let skipped = match fixed_size(spec.form, self.encoding) {
                Some(n) => c.skip(n),
                None if variable(spec.form) => skip_form(&mut c, spec.form),
                None => return self.origin_gimli(at, o, a),
            };
            skipped.ok_or_else(|| self.truncated(o))?;
        }
        a.name = name.flatten();
        a.external |= external == Some(true);
        if a.decl_line == 0 {
            a.decl_line = line.flatten().unwrap_or(0);
            a.decl_file = file.flatten();
        }
        Ok(())
    }

    /// [`UnitWalk::origin`] through gimli.
    fn origin_gimli(&self, at: DieOffset, o: usize, a: &mut Attrs<'a>) -> Result<(), ModelError> {
        let err = |e| self.dw.gimli_error(at, e);
        let e = self.gimli_unit()?.entry(UnitOffset(o)).map_err(err)?;
        a.name_gimli = e.attr_value(dw::DW_AT_name).map_err(err)?;
        a.external |= matches!(e.attr_value(dw::DW_AT_external).map_err(err)?, Some(AttributeValue::Flag(true)));
        if a.decl_line == 0 {
            a.decl_line = e.attr_value(dw::DW_AT_decl_line).map_err(err)?.and_then(|v| v.udata_value()).unwrap_or(0);
            a.decl_file = e.attr_value(dw::DW_AT_decl_file).map_err(err)?.and_then(file_index);
        }
        Ok(())
    }

    /// Skips the children of the DIE at `off`, whose attributes the cursor has passed.
    fn skip_children(&self, c: &mut Cursor<'a>, off: usize) -> Result<(), ModelError> {
        let mut depth = 1usize;
        let mut scratch = Attrs::default();
        while depth > 0 {
            if c.pos >= c.buf.len() {
                return Err(self.dw.malformed(self.at(off), "children run past the end of the unit"));
            }
            match self.die(c, &mut scratch)? {
                None => depth -= 1,
                Some(p) if p.children => depth += 1,
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Calls `visit` for each named top-level type or subprogram DIE, in order; stops
    /// early when it returns `false`.
    pub(crate) fn top_dies(
        &self,
        mut visit: impl FnMut(TopDie<'a>) -> Result<bool, ModelError>,
    ) -> Result<(), ModelError> {
        let Some(first) = self.children else { return Ok(()) };
        let buf = self.buf;
        let mut c = Cursor { buf, pos: first };
        loop {
            if c.pos >= buf.len() {
                return Ok(());
            }
            let off = c.pos;
            let mut a = Attrs::default();
            let Some(plan) = self.die(&mut c, &mut a)? else { return Ok(()) };
            // The walk goes to the sibling next, and it is usually in a cache line not
            // read yet: ask for it now, so that it arrives while this DIE is visited.
            if let Some(s) = a.sibling.filter(|&s| s < buf.len()) {
                prefetch(&buf[s..]);
            }
            if let Some(kind) = plan.kind {
                let at = self.at(off);
                // A definition named through its declaration or abstract instance
                // (`DW_AT_specification`, `DW_AT_abstract_origin`): take the name,
                // linkage and place from there (same unit only; C compilers do not
                // emit cross-unit origins outside LTO).
                if a.name.is_none() && a.name_gimli.is_none() {
                    if let Some(o) = a.origin.filter(|&o| o < buf.len() && o != off) {
                        self.origin(at, o, &mut a)?;
                    }
                }
                let name = match (a.name, a.name_gimli) {
                    // The common case, left unread (see [`TopName`]).
                    (Some(NameRef::Str(o)), _) => {
                        Some(TopName::Str(self.debug_str.get(o..).filter(|s| !s.is_empty()).ok_or_else(|| {
                            self.dw.malformed(at, format!("name at .debug_str offset {o:#x} is not a string"))
                        })?))
                    }
                    (Some(NameRef::Inline(s)), _) => Some(TopName::Bytes(s)),
                    (Some(n), _) => Some(TopName::Bytes(self.string(at, n.value())?)),
                    (None, Some(v)) => Some(TopName::Bytes(self.string(at, v)?)),
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
                    if self.u.in_types {
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
                    Some(s) if s > off && s < buf.len() => c.pos = s,
                    _ => self.skip_children(&mut c, off)?,
                }
            }
        }
    }
}

/// A unit's DWARF 5 file table ([`UnitWalk::file_table_v5`]): where each directory's
/// path is, and each file's path and directory index. Buffers reused from unit to unit.
#[derive(Default)]
pub(crate) struct FileTable<'a> {
    dirs: Vec<NameRef<'a>>,
    files: Vec<(NameRef<'a>, u64)>,
    formats: Vec<(u16, DwForm)>,
}

impl FileTable<'_> {
    pub(crate) fn files(&self) -> usize {
        self.files.len()
    }
}

#[derive(Clone, Copy)]
enum Entries {
    Dirs,
    Files,
}

/// A value in a line table entry, as far as the file table cares.
enum LineValue<'a> {
    Path(NameRef<'a>),
    /// gimli's `udata_value`.
    Number(Option<u64>),
    Other,
}

/// Reads one line-table entry value of `form` (gimli's `parse_attribute` for the
/// forms compilers use there, 32-bit DWARF); `None`: a form left to gimli, or the
/// header ends first.
fn line_value<'a>(c: &mut Cursor<'a>, form: DwForm) -> Option<LineValue<'a>> {
    let len = |n: u64| usize::try_from(n).ok();
    Some(match form {
        dw::DW_FORM_data1 => LineValue::Number(Some(u64::from(c.u8()?))),
        dw::DW_FORM_data2 => LineValue::Number(Some(c.uint(2)?)),
        dw::DW_FORM_data4 => LineValue::Number(Some(u64::from(c.u32()?))),
        dw::DW_FORM_data8 => LineValue::Number(Some(c.uint(8)?)),
        dw::DW_FORM_udata => LineValue::Number(Some(c.uleb()?)),
        dw::DW_FORM_sdata => LineValue::Number(u64::try_from(c.sleb()?).ok()),
        dw::DW_FORM_data16 => {
            c.skip(16)?;
            LineValue::Other
        }
        dw::DW_FORM_block1 => {
            let n = c.u8()?;
            c.skip(usize::from(n))?;
            LineValue::Other
        }
        dw::DW_FORM_block2 => {
            let n = c.uint(2)?;
            c.skip(len(n)?)?;
            LineValue::Other
        }
        dw::DW_FORM_block4 => {
            let n = c.u32()?;
            c.skip(len(u64::from(n))?)?;
            LineValue::Other
        }
        dw::DW_FORM_block => {
            let n = c.uleb()?;
            c.skip(len(n)?)?;
            LineValue::Other
        }
        dw::DW_FORM_string => LineValue::Path(NameRef::Inline(c.cstr()?)),
        dw::DW_FORM_strp => LineValue::Path(NameRef::Str(c.u32()? as usize)),
        dw::DW_FORM_line_strp => LineValue::Path(NameRef::LineStr(c.u32()? as usize)),
        _ => return None,
    })
}

/// A hint to bring the cache line at the start of `bytes` in.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch(bytes: &[u8]) {
    // SAFETY: SSE is part of the x86_64 baseline, and a prefetch reads nothing the
    // program can see and never faults (the pointer is in bounds anyway).
    #[cfg(target_arch = "x86_64")]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(bytes.as_ptr().cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

fn file_index(v: AttributeValue<R<'_>>) -> Option<u64> {
    match v {
        AttributeValue::FileIndex(x) => Some(x),
        other => other.udata_value(),
    }
}
