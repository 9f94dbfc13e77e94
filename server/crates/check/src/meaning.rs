//! What a definition means on one kernel, in a form that can be compared with another
//! kernel and written to a lock file: the function's parameters at the used slots, and
//! for each field the members its redirects reach and the value it records.

use crate::resolve::{MeaningKind, Resolution};
use fevlint_kernel::Kernel;
use fevlint_syntax::machine::Parsed;
use fevlint_syntax::Target;
use fevlint_types::layout;
use fevlint_types::model::{TypeRef, TypeSource};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DefinitionMeaning {
    pub function: String,
    /// The function exists on the kernel.
    pub exists: bool,
    /// `ssize_t vfs_read(struct file * file, …)`, when the kernel has types.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Parameters of the slots the definition reads, by slot: what each slot's register
    /// holds under the ABI (a slot after a by-value struct holds a later parameter).
    #[serde(default, rename = "param", skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamMeaning>,
    #[serde(default, rename = "field", skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FieldSummary>,
    /// Hash of the event's `format` layout (field names, types, offsets, sizes): the
    /// event's version as consumers see it.
    pub schema: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamMeaning {
    pub slot: u32,
    pub name: Option<String>,
    #[serde(rename = "type")]
    pub ty: String,
    pub size: Option<u64>,
    /// `rdi`, `rsi:rdx`, `stack+0`.
    pub location: String,
    /// The type with typedefs and qualifiers resolved at every level (`u8 *` and
    /// `unsigned char *` are the same parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub canonical: Option<String>,
    /// The part of the parameter the slot's register holds (`bytes 8-15` of a 16-byte
    /// struct), when it takes several registers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldSummary {
    pub name: String,
    /// The field's type as written (`u32`, `char[16]`).
    #[serde(rename = "type")]
    pub field_type: String,
    #[serde(default, rename = "step", skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepSummary>,
    /// The C expression recorded (`file->f_op->read`), when followed to the end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_size: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_signed: Option<bool>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepSummary {
    /// `struct file`.
    pub container: String,
    /// `f_op`, dotted for nested members.
    pub member: String,
    pub offset: u64,
    pub size: u64,
    #[serde(rename = "type")]
    pub ty: String,
}

/// Summarises a resolution.
pub fn summarize(kernel: &Kernel, parsed: &Parsed, r: &Resolution, target: Target) -> DefinitionMeaning {
    summarize_with(kernel, parsed, r, target, &TypeNames::default())
}

/// [`summarize`], naming parameter types through `names` (shared by the definitions of
/// one kernel).
pub fn summarize_with(
    kernel: &Kernel,
    parsed: &Parsed,
    r: &Resolution,
    target: Target,
    names: &TypeNames,
) -> DefinitionMeaning {
    let src = kernel.types();
    let signature = match (r.proto(), src) {
        (Some(p), Some(src)) => layout::pahole_prototype(src, p).ok(),
        _ => None,
    };
    let mut slots: Vec<u32> = parsed.fields.iter().filter_map(|f| f.slot()).collect();
    slots.sort_unstable();
    slots.dedup();
    let params = slots.iter().filter_map(|&slot| param_meaning(kernel, r, slot, names)).collect();
    let fields = parsed
        .fields
        .iter()
        .zip(r.fields.iter().map(Some).chain(std::iter::repeat(None)))
        .map(|(f, m)| {
            let steps = m
                .map(|m| {
                    m.steps
                        .iter()
                        .map(|a| StepSummary {
                            container: a.container.clone(),
                            member: a.member.clone(),
                            offset: a.offset,
                            size: a.size,
                            ty: a.ty.clone(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            let v = value(m);
            FieldSummary {
                name: f.name.clone(),
                field_type: f.type_string(),
                steps,
                value: v.expr.map(str::to_owned),
                value_type: v.ty.map(str::to_owned),
                value_size: v.size,
                value_signed: v.signed,
            }
        })
        .collect();
    DefinitionMeaning {
        function: r.function.name.clone(),
        exists: r.function.exists(),
        signature,
        params,
        fields,
        schema: schema_hash(parsed, target),
    }
}

/// The parameter (or part of one) a slot's register holds under the ABI.
fn param_meaning(kernel: &Kernel, r: &Resolution, slot: u32, names: &TypeNames) -> Option<ParamMeaning> {
    let held = r.slots.get(slot as usize)?.as_ref()?;
    let p = r.params.get(held.param)?;
    let (ty, canonical) = match kernel.types() {
        Some(src) => names.of(src, p.ty),
        None => (String::new(), None),
    };
    let part = (held.parts > 1).then(|| format!("bytes {}-{}", held.start, held.end.saturating_sub(1)));
    Some(ParamMeaning { slot, name: p.name.clone(), ty, size: p.size, location: p.loc.describe(), canonical, part })
}

/// What a field records, as a summary says it ([`FieldSummary`]'s `value*`).
#[derive(Clone, Copy, Default)]
struct Value<'a> {
    expr: Option<&'a str>,
    ty: Option<&'a str>,
    size: Option<u64>,
    signed: Option<bool>,
}

fn value(m: Option<&crate::resolve::FieldMeaning>) -> Value<'_> {
    let rec = m.and_then(|m| m.recorded.as_ref());
    Value {
        expr: rec.map(|v| v.expr.as_str()),
        ty: rec.and_then(|v| v.ty.as_deref()),
        size: rec.filter(|v| v.kind == MeaningKind::Value).and_then(|v| v.size),
        signed: rec.and_then(|v| v.signed),
    }
}

/// A parameter type's names on one kernel (as written, and [`canonical`]), each type
/// named once: a script's functions share their parameter types (`struct sock *`).
/// Both names depend only on the kernel's types, so a name remembered is the name worked
/// out again.
#[derive(Debug, Default)]
pub struct TypeNames(std::sync::Mutex<rustc_hash::FxHashMap<TypeRef, (String, Option<String>)>>);

impl TypeNames {
    fn of(&self, src: &dyn TypeSource, ty: TypeRef) -> (String, Option<String>) {
        let memo = || self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(known) = memo().get(&ty) {
            return known.clone();
        }
        let names = (layout::type_name(src, ty).ok().unwrap_or_default(), canonical(src, ty, 0));
        memo().insert(ty, names.clone());
        names
    }
}

/// A definition's meaning on the target kernel, as [`crate::drift::compare`] reads it:
/// a summary (a lock's, or [`summarize`]'s), or the resolution itself ([`OnKernel`]).
pub trait Compared {
    /// The function exists on the kernel.
    fn exists(&self) -> bool;
    /// The kernel has the function's prototype, every type of it readable.
    fn has_signature(&self) -> bool;
    /// The parameter a slot the definition reads holds.
    fn param(&self, slot: u32) -> Option<std::borrow::Cow<'_, ParamMeaning>>;
    /// Field `field`'s step `i`: its container and member.
    fn step(&self, field: usize, i: usize) -> Option<(&str, &str)>;
    /// Field `field`'s recorded value: whether there is one, its type, size and signedness.
    fn value(&self, field: usize) -> (bool, Option<&str>, Option<u64>, Option<bool>);
    /// How many fields the meaning has.
    fn field_count(&self) -> usize;
}

impl Compared for DefinitionMeaning {
    fn exists(&self) -> bool {
        self.exists
    }
    fn has_signature(&self) -> bool {
        self.signature.is_some()
    }
    fn param(&self, slot: u32) -> Option<std::borrow::Cow<'_, ParamMeaning>> {
        self.params.iter().find(|p| p.slot == slot).map(std::borrow::Cow::Borrowed)
    }
    fn step(&self, field: usize, i: usize) -> Option<(&str, &str)> {
        let s = self.fields.get(field)?.steps.get(i)?;
        Some((&s.container, &s.member))
    }
    fn value(&self, field: usize) -> (bool, Option<&str>, Option<u64>, Option<bool>) {
        self.fields.get(field).map_or((false, None, None, None), |f| {
            (f.value.is_some(), f.value_type.as_deref(), f.value_size, f.value_signed)
        })
    }
    fn field_count(&self) -> usize {
        self.fields.len()
    }
}

/// A definition's meaning on a kernel read from its resolution in place: what
/// [`summarize`] would say, without the copies, the prototype's text or the schema hash
/// that a comparison never reads.
pub struct OnKernel<'a> {
    pub kernel: &'a Kernel,
    pub parsed: &'a Parsed,
    pub resolution: &'a Resolution,
    pub names: &'a TypeNames,
}

impl Compared for OnKernel<'_> {
    fn exists(&self) -> bool {
        self.resolution.function.exists()
    }
    fn has_signature(&self) -> bool {
        // The same answer as `summarize`'s `signature.is_some()`: the prototype prints.
        match (self.resolution.proto(), self.kernel.types()) {
            (Some(p), Some(src)) => layout::prototype_prints(src, p).is_ok(),
            _ => false,
        }
    }
    fn param(&self, slot: u32) -> Option<std::borrow::Cow<'_, ParamMeaning>> {
        // A summary has the parameters of the slots the definition reads.
        if !self.parsed.fields.iter().any(|f| f.slot() == Some(slot)) {
            return None;
        }
        param_meaning(self.kernel, self.resolution, slot, self.names).map(std::borrow::Cow::Owned)
    }
    fn step(&self, field: usize, i: usize) -> Option<(&str, &str)> {
        let a = self.resolution.fields.get(field)?.steps.get(i)?;
        Some((&a.container, &a.member))
    }
    fn value(&self, field: usize) -> (bool, Option<&str>, Option<u64>, Option<bool>) {
        let v = value(self.resolution.fields.get(field));
        (v.expr.is_some(), v.ty, v.size, v.signed)
    }
    fn field_count(&self) -> usize {
        self.parsed.fields.len()
    }
}

/// FNV-1a 64 of the event's `format` fields: `name type offset size signed` per field,
/// laid out as the kernel lays out the record (`ALIGN(offset, size)` after the header).
pub fn schema_hash(parsed: &Parsed, target: Target) -> String {
    use std::fmt::Write as _;
    let mut h = Fnv1a(0xcbf2_9ce4_8422_2325);
    let mut offset: u64 = 0;
    for f in &parsed.fields {
        let size = u64::from(f.elem_size(target).max(1));
        let at = offset.div_ceil(size) * size;
        let total = size * f.array.map_or(1, |(n, _)| n);
        offset = at + total;
        // The field's line, hashed as it is written (no copy of it is made), then a NUL.
        h.eat(f.name.as_bytes());
        h.eat(b" ");
        if f.atom == fevlint_syntax::Atom::String {
            h.eat(b"__data_loc char[]");
        } else {
            h.eat(f.type_string().as_bytes());
        }
        let _ = write!(h, " {at} {total} {}", f.atom.signed() && !f.unsigned);
        h.eat(&[0]);
    }
    format!("{:016x}", h.0)
}

/// FNV-1a 64, fed bytes or formatted text.
struct Fnv1a(u64);

impl Fnv1a {
    fn eat(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

impl std::fmt::Write for Fnv1a {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.eat(s.as_bytes());
        Ok(())
    }
}

/// A type name with typedefs and qualifiers resolved through pointers and arrays.
fn canonical(src: &dyn TypeSource, ty: TypeRef, depth: u32) -> Option<String> {
    use fevlint_types::model::Type;
    if depth > 8 {
        return None;
    }
    let (t, inner) = layout::strip(src, ty).ok()?;
    Some(match inner {
        Type::Pointer { target } => format!("{} *", canonical(src, target, depth + 1)?),
        Type::Array { element, len } => format!("{}[{len}]", canonical(src, element, depth + 1)?),
        _ => layout::type_name(src, t).ok()?,
    })
}
