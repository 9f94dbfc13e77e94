//! Kernel-aware editor features, over one or several loaded kernels: hover on a function
//! (signature, where each parameter arrives, traceability), hover on a field (the C
//! expression it reads and each member on the way), completion of function names,
//! parameter names and member offsets, inlay hints naming the member each redirect
//! reaches, and fixes that need a kernel (T406, K201, T404).
//!
//! Everything is computed from `fevlint_check::resolve` (what the checker sees) or, mid-typing,
//! from a small walk over the redirects written so far ([`walk_prefix`]), so hover,
//! hints and the T rules agree.

use crate::{Completion, CompletionKind, Edit, Fix};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_check::resolve::{self, MeaningKind};
use fevlint_check::rules;
use fevlint_kernel::{Kernel, Trace};
use fevlint_syntax::lex::is_word_byte;
use fevlint_syntax::machine::{self, fold_redirects, Atom, Field, Parsed, Source};
use fevlint_syntax::{Parse, Span, Target};
use fevlint_types::abi;
use fevlint_types::layout::{self, Placement};
use fevlint_types::model::{ModelError, Type, TypeRef, TypeSource};
use std::fmt::Write as _;

/// Most function names offered at once (the client asks again as the word grows).
pub const FUNCTION_LIMIT: usize = 100;

fn label(kernels: &[&Kernel], k: &Kernel) -> String {
    if kernels.len() > 1 {
        format!("**{}**: ", k.name)
    } else {
        String::new()
    }
}

// ---------------------------------------------------------------------------------
// Hover.

/// Markdown about function `name` on each kernel; `parsed` is the definition it heads
/// (to say which field reads each slot).
pub fn function_doc(kernels: &[&Kernel], name: &str, parsed: Option<&Parsed>) -> String {
    let mut s = String::new();
    for (i, k) in kernels.iter().enumerate() {
        if i > 0 {
            s.push_str("\n\n---\n\n");
        }
        if kernels.len() > 1 {
            let _ = write!(s, "### {}\n\n", k.name);
        }
        match function_on(k, name, parsed) {
            Ok(text) => s.push_str(&text),
            Err(e) => {
                let _ = write!(s, "cannot read `{name}` on {}: {e}", k.name);
            }
        }
    }
    s
}

fn function_on(k: &Kernel, name: &str, parsed: Option<&Parsed>) -> Result<String, ModelError> {
    let f = k.function(name)?;
    let mut s = String::new();
    if !f.exists() {
        let _ = write!(s, "`{name}` does not exist in {}", k.name);
        return Ok(s);
    }
    let readers = |slots: &[u32]| -> Vec<String> {
        parsed
            .into_iter()
            .flat_map(|p| p.fields.iter())
            .filter(|fl| fl.slot().is_some_and(|s| slots.contains(&s)))
            .map(|fl| format!("`{} {}` (slot {})", fl.type_string(), fl.name, fl.slot().unwrap_or_default()))
            .collect()
    };
    match (k.types(), f.prototypes.first()) {
        (Some(src), Some(info)) => {
            let _ = write!(s, "```c\n{}\n```\n", layout::pahole_prototype(src, info)?);
            if let Some((file, line)) = &info.decl {
                let _ = writeln!(s, "declared at `{file}:{line}`\n");
            }
            let locs = abi::locate(k.arch, src, &info.proto)?;
            if !locs.is_empty() {
                s.push_str("\nregisters at entry:\n");
            }
            // A slot is a register: each parameter is read by the slots of its registers.
            for p in &locs {
                let ty = layout::type_name(src, p.ty)?;
                let slots = abi::slots_of(k.arch, &p.loc);
                let _ = write!(
                    s,
                    "- {} `{}`: `{}` {}{}",
                    abi::describe_slots(&slots),
                    p.loc.describe(),
                    ty,
                    p.name.as_deref().unwrap_or("?"),
                    p.size.map(|n| format!(" ({n} bytes)")).unwrap_or_default()
                );
                if let Some(w) = &p.why {
                    let _ = write!(s, "; {w}");
                }
                let r = readers(&slots);
                if !r.is_empty() {
                    let _ = write!(s, "; read by {}", r.join(", "));
                }
                s.push('\n');
            }
            if info.proto.variadic {
                s.push_str("- (variadic)\n");
            }
        }
        _ => {
            let _ = writeln!(s, "`{name}` (no prototype: the kernel has no type information for it)");
        }
    }
    let verdict = match &f.trace {
        Trace::Traceable { count: 1 } => "traceable".to_owned(),
        Trace::Traceable { count } => format!("traceable ({count} functions of this name)"),
        Trace::NotTraceable => "**not traceable** (no ftrace call site: notrace, inlined or `__init`)".to_owned(),
        Trace::OnlyClones(c) => format!("**not traceable**; only its clones are: {}", quoted(c)),
        Trace::Unknown => "traceability unknown (no ftrace list)".to_owned(),
    };
    let _ = write!(s, "\n{verdict}");
    if let Some(from) = &f.trace_from {
        let _ = write!(s, ", decided by {from}");
    }
    s.push('\n');
    if !f.clones.is_empty() && !matches!(f.trace, Trace::OnlyClones(_)) {
        let _ = writeln!(s, "\nclones: {}", quoted(&f.clones));
    }
    if f.prototypes.len() > 1 {
        let _ = writeln!(s, "\nduplicates: {} type entries share this name (the first is shown)", f.prototypes.len());
    }
    if f.kprobe_blacklisted {
        s.push_str("\non the kprobe blacklist (kprobes refuse it; ftrace does not consult the list)\n");
    }
    if let Some((w, sc)) = &f.syscall {
        let _ = writeln!(s, "\nsyscall `{sc}` ({w:?} layer)");
    }
    Ok(s)
}

fn quoted(v: &[String]) -> String {
    v.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
}

/// Markdown, per kernel, about what field `index` of `parsed` reads: the C expression
/// and each member reached.
pub fn field_doc(kernels: &[&Kernel], parsed: &Parsed, index: usize, target: Target) -> String {
    let mut s = String::new();
    for k in kernels {
        let r = match resolve::resolve(k, parsed, target) {
            Ok(Some(r)) => r,
            Ok(None) => continue,
            Err(e) => {
                let _ = write!(s, "\n\n{}cannot resolve: {e}", label(kernels, k));
                continue;
            }
        };
        if !r.function.exists() {
            let _ = write!(s, "\n\n{}`{}` does not exist", label(kernels, k), r.function.name);
            continue;
        }
        let Some(m) = r.fields.get(index) else { continue };
        let head = if kernels.len() > 1 { format!("{}: ", k.name) } else { String::new() };
        if let Some(slot) = parsed.fields.get(index).and_then(Field::slot) {
            let _ = write!(s, "\n\n{head}{}", slot_words(k, &r, slot));
        }
        match &m.recorded {
            Some(meaning) => {
                let what = match meaning.kind {
                    MeaningKind::Value => "reads",
                    MeaningKind::Address => "records the address",
                    MeaningKind::CopyFrom => "copies from",
                    MeaningKind::String => "copies the string at",
                };
                let _ = write!(s, "\n\n{head}{what} `{}`", meaning.expr);
                if let Some(ty) = &meaning.ty {
                    let _ = write!(s, " (`{ty}`");
                    if let Some(n) = meaning.size {
                        let _ = write!(s, ", {n} bytes");
                    }
                    s.push(')');
                }
            }
            None => {
                let _ = write!(s, "\n\n{head}cannot be followed to the end on this kernel");
            }
        }
        for a in &m.steps {
            let _ = write!(
                s,
                "\n- `{}`: `{}` at offset {} in `{}` ({} bytes, `{}`)",
                a.expr, a.member, a.offset, a.container, a.size, a.ty
            );
            if !a.others.is_empty() {
                let _ = write!(s, "; union member matched, the others there: {}", a.others.join(", "));
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------------
// Walking the redirects written so far.

/// A value in the type domain, mid-walk.
#[derive(Clone, Debug)]
pub enum Walked {
    /// A value of type `ty`, written `expr`.
    Val {
        ty: TypeRef,
        expr: String,
    },
    /// `delta` bytes into the object of type `obj` that `expr` points to.
    Addr {
        obj: TypeRef,
        delta: u64,
        expr: String,
    },
    Lost,
}

fn pointee(src: &dyn TypeSource, ty: TypeRef) -> Result<Option<TypeRef>, ModelError> {
    Ok(match layout::strip(src, ty)?.1 {
        Type::Pointer { target } if !matches!(layout::strip(src, target)?.1, Type::Void) => Some(target),
        _ => None,
    })
}

/// The member read `delta` bytes into `obj`, preferring one of `want` bytes.
fn member_read(
    src: &dyn TypeSource,
    obj: TypeRef,
    delta: u64,
    want: u64,
) -> Result<Option<layout::MemberPath>, ModelError> {
    let paths = layout::member_at(src, obj, delta)?;
    if paths.is_empty() && delta == 0 {
        // A pointer to a scalar or a pointer: the object itself.
        let size = src.size_of(obj)?.unwrap_or(0);
        return Ok(Some(layout::MemberPath {
            names: Vec::new(),
            ty: obj,
            offset: 0,
            size,
            bit_offset: 0,
            bitfield_size: 0,
            place: Placement::Start,
        }));
    }
    Ok(paths
        .iter()
        .find(|p| p.place == Placement::Start && p.size == want)
        .or_else(|| paths.iter().find(|p| p.place == Placement::Start))
        .cloned())
}

/// `slot 2 reads rdx: parameter 1 size (size_t)`, in words, from a resolution.
fn slot_words(k: &Kernel, r: &resolve::Resolution, slot: u32) -> String {
    let reg = abi::arg_registers(k.arch).get(slot as usize).copied().unwrap_or("?");
    let held = r.slots.get(slot as usize).cloned().flatten();
    match held.and_then(|h| r.params.get(h.param).map(|p| (p, h))) {
        Some((p, h)) => {
            let ty = k.types().and_then(|src| layout::type_name(src, p.ty).ok()).unwrap_or_default();
            let name = h.describe(p.name.as_deref().unwrap_or("?"));
            format!("slot {slot} reads `{reg}`: parameter {} `{name}` (`{ty}`, in `{}`)", p.index, p.loc.describe())
        }
        None => format!("slot {slot} reads `{reg}`, which holds no parameter"),
    }
}

/// The parameter slot `slot`'s register holds on `k` (a slot is a register), and which
/// part of it.
pub fn slot_param(
    k: &Kernel,
    src: &dyn TypeSource,
    info: &fevlint_types::model::FunctionInfo,
    slot: u32,
) -> Result<Option<(abi::ParamLoc, abi::Held)>, ModelError> {
    let locs = abi::locate(k.arch, src, &info.proto)?;
    let holds = abi::slot_holds(k.arch, &locs);
    Ok(holds.get(slot as usize).cloned().flatten().and_then(|h| locs.get(h.param).cloned().map(|p| (p, h))))
}

/// Follows `field`'s redirects as intermediate pointer loads (the field is still being
/// typed, so every `[n]` written so far reads a pointer). `pairs` may be a prefix.
pub fn walk_prefix(k: &Kernel, parsed: &Parsed, field: &Field, target: Target) -> Result<Walked, ModelError> {
    let Some(src) = k.types() else { return Ok(Walked::Lost) };
    let Source::Param { slot, redirects } = &field.source else { return Ok(Walked::Lost) };
    let Some((name, _)) = &parsed.function else { return Ok(Walked::Lost) };
    let f = k.function(name)?;
    let Some(info) = f.prototypes.first() else { return Ok(Walked::Lost) };
    let Some((param, held)) = slot_param(k, src, info, *slot)? else { return Ok(Walked::Lost) };
    // Part of a by-value struct: the member starting at the register's first byte.
    let mut v = match layout::strip(src, param.ty)?.1 {
        Type::Struct(_) | Type::Union(_) => match member_read(src, param.ty, held.start, abi::register_size(k.arch))? {
            Some(path) => {
                Walked::Val { ty: path.ty, expr: format!("{}.{}", param.name.as_deref().unwrap_or("?"), path.dotted()) }
            }
            None => return Ok(Walked::Lost),
        },
        _ if held.part > 0 => return Ok(Walked::Lost),
        _ => Walked::Val { ty: param.ty, expr: param.name.clone().unwrap_or_else(|| format!("param{slot}")) },
    };
    let elem = u64::from(field.elem_size(target));
    let ptr = u64::from(target.ptr_size);
    for pair in fold_redirects(redirects) {
        let bytes = pair.offset.wrapping_add(pair.index.unwrap_or(0).wrapping_mul(elem));
        v = add(src, v, bytes)?;
        if pair.index.is_none() {
            break;
        }
        v = match v {
            Walked::Addr { obj, delta, expr } => match member_read(src, obj, delta, ptr)? {
                Some(path) if matches!(layout::strip(src, path.ty)?.1, Type::Pointer { .. }) => {
                    Walked::Val { ty: path.ty, expr: path.through(&expr) }
                }
                _ => Walked::Lost,
            },
            _ => Walked::Lost,
        };
    }
    Ok(v)
}

fn add(src: &dyn TypeSource, v: Walked, bytes: u64) -> Result<Walked, ModelError> {
    Ok(match v {
        Walked::Val { ty, expr } => match pointee(src, ty)? {
            Some(obj) => Walked::Addr { obj, delta: bytes, expr },
            None => Walked::Lost,
        },
        Walked::Addr { obj, delta, expr } => Walked::Addr { obj, delta: delta.wrapping_add(bytes), expr },
        Walked::Lost => Walked::Lost,
    })
}

/// A member listed for completion: dotted name, offset from the object's start, size, C type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberInfo {
    pub name: String,
    pub offset: u64,
    pub size: u64,
    pub ty: String,
    pub pointer: bool,
}

/// The members of composite `obj`, descending into anonymous members and up to two
/// levels of embedded (non-pointer) structs and unions. Bitfields are left out (no
/// field reads a bit).
pub fn members(src: &dyn TypeSource, obj: TypeRef) -> Result<Vec<MemberInfo>, ModelError> {
    let mut out = Vec::new();
    collect(src, obj, 0, "", 0, &mut out)?;
    out.sort_by_key(|m| m.offset);
    Ok(out)
}

fn collect(
    src: &dyn TypeSource,
    ty: TypeRef,
    base: u64,
    prefix: &str,
    depth: usize,
    out: &mut Vec<MemberInfo>,
) -> Result<(), ModelError> {
    let (_, t) = layout::strip(src, ty)?;
    let (Type::Struct(c) | Type::Union(c)) = &t else { return Ok(()) };
    for m in c.members.iter() {
        if m.bitfield_size != 0 || out.len() > 2000 {
            continue;
        }
        let offset = base + m.bit_offset / 8;
        let (_, mt) = layout::strip(src, m.ty)?;
        let composite = matches!(mt, Type::Struct(_) | Type::Union(_));
        match &m.name {
            None => collect(src, m.ty, offset, prefix, depth, out)?,
            Some(n) => {
                let name = if prefix.is_empty() { n.clone() } else { format!("{prefix}.{n}") };
                out.push(MemberInfo {
                    name: name.clone(),
                    offset,
                    size: src.size_of(m.ty)?.unwrap_or(0),
                    ty: layout::type_name(src, m.ty)?,
                    pointer: matches!(mt, Type::Pointer { .. }),
                });
                if composite && depth < 2 {
                    collect(src, m.ty, offset, &name, depth + 1, out)?;
                }
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------
// Completion.

/// What the word being typed is, when a kernel can help.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Context {
    /// At the start of a line: a function name.
    Function,
    /// After a field's type: its name (slot `slot` of `parsed`).
    FieldName { parsed: Parsed },
    /// After `+`: a member offset; `parsed` ends with the field being typed, without the `+`.
    Offset { parsed: Parsed },
    /// After `[`: `0`.
    Index { parsed: Parsed },
}

fn prev_byte(bytes: &[u8], line_start: usize, mut p: usize) -> Option<usize> {
    while p > line_start && matches!(bytes[p - 1], b' ' | b'\t') {
        p -= 1;
    }
    (p > line_start).then_some(p - 1)
}

/// The definition `text[line_start..end]` followed by `tail`, as the kernel parses it,
/// when it is accepted (its last field is the one being typed).
fn parse_prefix(text: &str, line_start: usize, end: usize, tail: &str, target: Target) -> Option<Parsed> {
    let line = format!("{}{tail}", &text[line_start..end]);
    let mut toks = Vec::new();
    fevlint_syntax::lex::tokens(&line, Span::new(0, line.len()), &mut toks);
    let parsed = machine::parse_line(&line, &toks, target);
    (parsed.rejection.is_none() && !parsed.fields.is_empty()).then_some(parsed)
}

fn context(parse: &Parse, text: &str, start: usize) -> Option<Context> {
    let bytes = text.as_bytes();
    let line = parse.line_at(start)?;
    let line_start = line.line.span.start;
    if line.line.comment.is_some_and(|c| c.start < start) {
        return None;
    }
    let Some(prev) = prev_byte(bytes, line_start, start) else { return Some(Context::Function) };
    let target = parse.target;
    match bytes[prev] {
        b'+' => parse_prefix(text, line_start, prev, ")", target).map(|parsed| Context::Offset { parsed }),
        b'[' => parse_prefix(text, line_start, prev, ")", target).map(|parsed| Context::Index { parsed }),
        b if is_word_byte(b) => {
            // The word before: a type (possibly after `unsigned`) heading a field.
            let mut w = prev + 1;
            while w > line_start && is_word_byte(bytes[w - 1]) {
                w -= 1;
            }
            let word = &text[w..=prev];
            let is_type = Atom::from_name(word.as_bytes()).is_some() || word == "string";
            let before = prev_byte(bytes, line_start, w).map(|i| bytes[i]);
            if !is_type || !matches!(before, Some(b'(' | b',' | b'|' | b'd')) {
                return None; // `d`: the end of `unsigned`
            }
            parse_prefix(text, line_start, start, "fevlint_field)", target).map(|parsed| Context::FieldName { parsed })
        }
        b']' => {
            parse_prefix(text, line_start, start, "fevlint_field)", target).map(|parsed| Context::FieldName { parsed })
        }
        _ => None,
    }
}

/// Kernel completions at `offset` (empty where the kernel has nothing to add).
pub fn completions(parse: &Parse, text: &str, offset: usize, kernels: &[&Kernel]) -> Vec<Completion> {
    if kernels.is_empty() {
        return Vec::new();
    }
    let offset = fevlint_syntax::floor_char_boundary(text, offset);
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && is_word_byte(bytes[start - 1]) {
        start -= 1;
    }
    let replace = Span::new(start, offset);
    let typed = &text[start..offset];
    let result = match context(parse, text, start) {
        Some(Context::Function) => Ok(function_completions(kernels, typed, replace)),
        Some(Context::FieldName { parsed }) => field_names(kernels, &parsed, replace),
        Some(Context::Offset { parsed }) => offsets(kernels, &parsed, typed, replace, parse.target),
        Some(Context::Index { parsed }) => index(kernels, &parsed, replace, parse.target),
        None => Ok(Vec::new()),
    };
    result.unwrap_or_default()
}

/// How well `name` matches `typed`: 0 exact prefix, 1 case-insensitive prefix, 2 a
/// substring, 3 a subsequence; `None` otherwise.
pub fn fuzzy_rank(name: &str, typed: &str) -> Option<u8> {
    if name.starts_with(typed) {
        return Some(0);
    }
    let lower = name.to_ascii_lowercase();
    let t = typed.to_ascii_lowercase();
    if lower.starts_with(&t) {
        return Some(1);
    }
    if lower.contains(&t) {
        return Some(2);
    }
    let mut it = lower.bytes();
    t.bytes().all(|c| it.any(|n| n == c)).then_some(3)
}

pub(crate) fn function_completions(kernels: &[&Kernel], typed: &str, replace: Span) -> Vec<Completion> {
    // (rank, not traceable, length, name): exact prefixes first, traceable first.
    let mut found: Vec<(u8, bool, usize, &str)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for k in kernels {
        let ff = k.filter_functions();
        for name in k.function_names().iter() {
            let Some(rank) = fuzzy_rank(name, typed) else { continue };
            if !seen.insert(name) {
                continue;
            }
            let traceable = ff.is_none_or(|ff| ff.value.count(name) > 0);
            found.push((rank, !traceable, name.len(), name));
        }
    }
    found.sort_unstable();
    found.truncate(FUNCTION_LIMIT);
    found
        .iter()
        .enumerate()
        .map(|(i, &(_, not_traceable, _, name))| {
            let (detail, documentation) = signature(kernels, name);
            let detail = if not_traceable { format!("(not traceable) {detail}") } else { detail };
            let mut c = Completion::new(name, CompletionKind::Function, replace)
                .with_detail(detail)
                .with_documentation(documentation)
                .with_rank(i as u32)
                .preferred(!not_traceable);
            c.deprecated = not_traceable;
            c
        })
        .collect()
}

/// The signature of `name` on the first kernel that has a prototype, and a short doc.
fn signature(kernels: &[&Kernel], name: &str) -> (String, String) {
    for k in kernels {
        let (Some(src), Ok(f)) = (k.types(), k.function(name)) else { continue };
        if let Some(info) = f.prototypes.first() {
            if let Ok(sig) = layout::pahole_prototype(src, info) {
                let doc = format!("```c\n{sig}\n```\non {}", k.name);
                return (sig, doc);
            }
        }
    }
    ("(no prototype)".to_owned(), String::new())
}

fn field_names(kernels: &[&Kernel], parsed: &Parsed, replace: Span) -> Result<Vec<Completion>, ModelError> {
    let Some(slot) = parsed.fields.last().and_then(Field::slot) else { return Ok(Vec::new()) };
    let Some((name, _)) = &parsed.function else { return Ok(Vec::new()) };
    let mut out: Vec<Completion> = Vec::new();
    for k in kernels {
        let (Some(src), f) = (k.types(), k.function(name)?) else { continue };
        let Some(info) = f.prototypes.first() else { continue };
        let Some((p, held)) = slot_param(k, src, info, slot)? else { continue };
        if held.part > 0 {
            continue; // the rest of a value that starts in an earlier slot
        }
        let Some(pname) = &p.name else { continue };
        if out.iter().any(|c| c.label == *pname) {
            continue;
        }
        let ty = layout::type_name(src, p.ty)?;
        let reg = abi::arg_registers(k.arch).get(slot as usize).copied().unwrap_or("?");
        let documentation = format!(
            "parameter {} of `{name}`: `{ty} {pname}`, in `{}` (slot {slot}'s `{reg}`) on {}",
            p.index,
            p.loc.describe(),
            k.name
        );
        out.push(
            Completion::new(pname.clone(), CompletionKind::Parameter, replace)
                .with_detail(ty)
                .with_documentation(documentation)
                .preferred(true),
        );
    }
    Ok(out)
}

fn offsets(
    kernels: &[&Kernel],
    parsed: &Parsed,
    typed: &str,
    replace: Span,
    target: Target,
) -> Result<Vec<Completion>, ModelError> {
    let Some(field) = parsed.fields.last() else { return Ok(Vec::new()) };
    for k in kernels {
        let Some(src) = k.types() else { continue };
        let (obj, delta, expr) = match walk_prefix(k, parsed, field, target)? {
            Walked::Val { ty, expr } => match pointee(src, ty)? {
                Some(obj) => (obj, 0, expr),
                None => continue,
            },
            Walked::Addr { obj, delta, expr } => (obj, delta, expr),
            Walked::Lost => continue,
        };
        let container = layout::type_name(src, obj)?;
        let digits = !typed.is_empty() && typed.bytes().all(|b| b.is_ascii_digit());
        let mut out = Vec::new();
        for (i, m) in members(src, obj)?.into_iter().enumerate() {
            let Some(rel) = m.offset.checked_sub(delta) else { continue };
            let number = rel.to_string();
            let filter = if digits { number.clone() } else { m.name.clone() };
            // Offsets match by prefix (`4` → 40, 48), names fuzzily.
            let keep = if digits {
                number.starts_with(typed)
            } else {
                typed.is_empty() || fuzzy_rank(&filter, typed).is_some()
            };
            if !keep {
                continue;
            }
            let mut c = Completion::new(format!("{} ({}, {})", m.name, rel, m.ty), CompletionKind::Member, replace)
                .with_detail(format!("{} bytes at offset {} of `{container}`", m.size, m.offset))
                .with_documentation(format!("`{expr}->{}` (`{}`) on {}", m.name, m.ty, k.name))
                .with_rank(i as u32)
                .preferred(true);
            // Inserted as its offset, matched by the member's name.
            (c.insert, c.filter) = (number, filter);
            out.push(c);
        }
        return Ok(out);
    }
    Ok(Vec::new())
}

fn index(kernels: &[&Kernel], parsed: &Parsed, replace: Span, target: Target) -> Result<Vec<Completion>, ModelError> {
    let Some(field) = parsed.fields.last() else { return Ok(Vec::new()) };
    for k in kernels {
        let Some(src) = k.types() else { continue };
        let (ty, expr) = match walk_prefix(k, parsed, field, target)? {
            Walked::Val { ty, expr } => (ty, expr),
            Walked::Addr { obj, delta, expr } => match member_read(src, obj, delta, u64::from(target.ptr_size))? {
                Some(path) => (path.ty, path.through(&expr)),
                None => continue,
            },
            Walked::Lost => continue,
        };
        if !matches!(layout::strip(src, ty)?.1, Type::Pointer { .. }) {
            continue;
        }
        let ty_name = layout::type_name(src, ty)?;
        return Ok(vec![Completion::new("0", CompletionKind::Value, replace)
            .with_detail(format!("dereference `{expr}` ({ty_name})"))
            .with_documentation(format!("`[0]` reads through `{expr}`, a `{ty_name}`, on {}", k.name))
            .preferred(true)]);
    }
    Ok(Vec::new())
}

// ---------------------------------------------------------------------------------
// Inlay hints.

/// A label to show after `at`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InlayHint {
    pub at: usize,
    pub label: String,
    /// Markdown tooltip.
    pub tooltip: String,
}

/// (kernel name, member, tooltip) of one redirect on one kernel.
type Reached = (String, String, String);

/// After each redirect that reaches a member, the member's name (per kernel when they
/// differ), for definitions overlapping `range`.
pub fn inlay_hints(parse: &Parse, range: Span, kernels: &[&Kernel]) -> Vec<InlayHint> {
    let mut out = Vec::new();
    for (line, parsed) in parse.definitions() {
        if line.line.span.end < range.start || line.line.span.start > range.end || parsed.rejection.is_some() {
            continue;
        }
        // span end -> per kernel (kernel, member, tooltip)
        let mut at: Vec<(usize, Vec<Reached>)> = Vec::new();
        for k in kernels {
            let Ok(Some(r)) = resolve::resolve(k, parsed, parse.target) else { continue };
            // A slot whose register holds another parameter than its number says (after
            // a by-value struct or a register pair), or part of one: name it.
            for f in &parsed.fields {
                let Some(slot) = f.slot() else { continue };
                let Some(h) = r.slots.get(slot as usize).cloned().flatten() else { continue };
                if h.param == slot as usize && h.parts == 1 {
                    continue;
                }
                let Some(p) = r.params.get(h.param) else { continue };
                let member = h.describe(p.name.as_deref().unwrap_or("?"));
                let entry = (k.name.clone(), member, slot_words(k, &r, slot));
                match at.iter_mut().find(|(e, _)| *e == f.name_span.end) {
                    Some((_, v)) => v.push(entry),
                    None => at.push((f.name_span.end, vec![entry])),
                }
            }
            for m in &r.fields {
                for a in &m.steps {
                    let mut tip =
                        format!("`{}`: `{}`, offset {} of `{}`, {} bytes", a.expr, a.ty, a.offset, a.container, a.size);
                    if !a.others.is_empty() {
                        let _ = write!(tip, "; union: matched among {}", a.others.join(", "));
                    }
                    let entry = (k.name.clone(), a.member.clone(), tip);
                    match at.iter_mut().find(|(e, _)| *e == a.span.end) {
                        Some((_, v)) => v.push(entry),
                        None => at.push((a.span.end, vec![entry])),
                    }
                }
            }
        }
        for (end, per) in at {
            let same = per.iter().all(|(_, m, _)| *m == per[0].1) && per.len() == kernels.len();
            let label = if same {
                format!("→ {}", per[0].1)
            } else {
                format!(
                    "→ {}",
                    per.iter().map(|(k, m, _)| format!("{m} ({})", short(k))).collect::<Vec<_>>().join(" · ")
                )
            };
            let tooltip = per
                .iter()
                .map(|(k, _, t)| if kernels.len() > 1 { format!("{k}: {t}") } else { t.clone() })
                .collect::<Vec<_>>()
                .join("\n\n");
            out.push(InlayHint { at: end, label, tooltip });
        }
    }
    out
}

/// `6.12.117+deb12-amd64` → `6.12.117`.
fn short(name: &str) -> &str {
    name.split(['+', '-']).next().unwrap_or(name)
}

// ---------------------------------------------------------------------------------
// Fixes.

/// Fixes for kernel diagnostics: T406 adds `[0]`, K201 renames to a suggested function,
/// T404 moves the offset to the enclosing or a nearby member's start.
pub fn fixes(parse: &Parse, text: &str, d: &Diagnostic, index: usize, kernels: &[&Kernel]) -> Vec<Fix> {
    let mut out = Vec::new();
    if d.is(&rules::T406) {
        t406(parse, d, index, &mut out);
    } else if d.is(&rules::K201) {
        k201(d, index, &mut out);
    } else if d.is(&rules::T404) {
        let k: Vec<&Kernel> =
            kernels.iter().copied().filter(|k| d.kernel.as_ref().is_none_or(|n| **n == *k.name)).collect();
        if let Some(k) = k.first() {
            let _ = t404(parse, text, d, index, k, &mut out);
        }
    }
    out
}

/// The field of the definition at `span` whose redirects cover it.
fn field_at(parse: &Parse, span: Span) -> Option<(&Parsed, usize)> {
    let parsed = parse.line_at(span.start)?.parsed.as_ref()?;
    let i = parsed.fields.iter().position(|f| f.span.start <= span.start && span.end <= f.span.end.max(span.end))?;
    Some((parsed, i))
}

fn t406(parse: &Parse, d: &Diagnostic, index: usize, out: &mut Vec<Fix>) {
    // Only when the address is a member's: the help note says what `[0]` reads.
    let Some(help) = d.notes.iter().find(|n| n.starts_with("help: add `[0]`")) else { return };
    let Some((parsed, i)) = field_at(parse, d.span) else { return };
    let Source::Param { redirects, .. } = &parsed.fields[i].source else { return };
    let Some(last) = redirects.last() else { return };
    let at = last.span().end;
    out.push(Fix {
        title: help.trim_start_matches("help: ").replacen("add", "Add", 1),
        diagnostic: index,
        edits: vec![Edit { span: Span::new(at, at), text: "[0]".to_owned() }],
        preferred: true,
    });
}

/// Names in backticks in the help notes: similar names and known renames.
fn k201(d: &Diagnostic, index: usize, out: &mut Vec<Fix>) {
    let mut names: Vec<String> = Vec::new();
    for n in &d.notes {
        let Some(help) = n.strip_prefix("help: ") else { continue };
        let take_all = help.starts_with("similar names");
        for (i, part) in help.split('`').enumerate() {
            if i % 2 == 1 && part.bytes().all(|b| is_word_byte(b) || b == b'.') && !part.is_empty() {
                if !names.iter().any(|x| x == part) {
                    names.push(part.to_owned());
                }
                if !take_all {
                    break;
                }
            }
        }
    }
    let single = names.len() == 1;
    for name in names {
        out.push(Fix {
            title: format!("Rename to `{name}`"),
            diagnostic: index,
            edits: vec![Edit { span: d.span, text: name }],
            preferred: single,
        });
    }
}

fn t404(
    parse: &Parse,
    text: &str,
    d: &Diagnostic,
    index: usize,
    k: &Kernel,
    out: &mut Vec<Fix>,
) -> Result<(), ModelError> {
    let Some(src) = k.types() else { return Ok(()) };
    let Some((parsed, i)) = field_at(parse, d.span) else { return Ok(()) };
    let field = &parsed.fields[i];
    let Source::Param { slot, redirects } = &field.source else { return Ok(()) };
    let pairs = fold_redirects(redirects);
    let Some(pi) = pairs.iter().position(|p| p.span == d.span) else { return Ok(()) };
    let pair = pairs[pi];
    // Walk the pairs before this one, then add this pair's offset.
    let upto: Vec<_> = redirects.iter().copied().filter(|r| r.span().end <= pair.span.start).collect();
    let prefix = Field { source: Source::Param { slot: *slot, redirects: upto }, ..field.clone() };
    let target = parse.target;
    let (obj, base) = match walk_prefix(k, parsed, &prefix, target)? {
        Walked::Val { ty, .. } => match pointee(src, ty)? {
            Some(obj) => (obj, 0),
            None => return Ok(()),
        },
        Walked::Addr { obj, delta, .. } => (obj, delta),
        Walked::Lost => return Ok(()),
    };
    let scaled = pair.index.unwrap_or(0).wrapping_mul(u64::from(field.elem_size(target)));
    let delta = base.wrapping_add(pair.offset).wrapping_add(scaled);
    let all = members(src, obj)?;
    let mut targets: Vec<&MemberInfo> = Vec::new();
    // The innermost member enclosing the offset, then the nearest starts either side.
    if let Some(m) = all.iter().rfind(|m| m.offset < delta && delta < m.offset + m.size.max(1)) {
        targets.push(m);
    }
    if let Some(m) = all.iter().rfind(|m| m.offset < delta) {
        if !targets.iter().any(|t| t.offset == m.offset) {
            targets.push(m);
        }
    }
    if let Some(m) = all.iter().find(|m| m.offset > delta) {
        targets.push(m);
    }
    // The written `[n]` (if any) stays; the `+` part becomes one number.
    let written = pair.span.text(text);
    let tail = written.rfind('[').map_or("", |b| &written[b..]);
    for m in targets {
        let Some(new) = m.offset.checked_sub(base).and_then(|o| o.checked_sub(scaled)) else { continue };
        out.push(Fix {
            title: format!("Use offset {new}: `{}` ({}, {} bytes)", m.name, m.ty, m.size),
            diagnostic: index,
            edits: vec![Edit { span: pair.span, text: format!("+{new}{tail}") }],
            preferred: false,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fevlint_syntax::Parser;

    fn kernel() -> Kernel {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/kernels/6.12.117+deb12-amd64");
        Kernel::open(&path).expect("the 6.12.117 fixture opens")
    }

    fn parse(text: &str) -> Parse {
        Parser::new().parse(text, Target::X86_64, None)
    }

    #[test]
    fn t404_offers_the_enclosing_and_next_members_keeping_the_index() {
        let k = kernel();
        let text = "vfs_read(x64 file+41[0])\n";
        let p = parse(text);
        let diags = fevlint_check::analysis::check_parse_kernel(&p, text, &k);
        let (i, d) = diags.iter().enumerate().find(|(_, d)| d.is(&fevlint_check::rules::T404)).expect("a T404 finding");
        let fixes = fixes(&p, text, d, i, &[&k]);
        let shown: Vec<(&str, &str)> = fixes.iter().map(|f| (f.title.as_str(), f.edits[0].text.as_str())).collect();
        assert_eq!(
            shown,
            [
                ("Use offset 40: `f_inode` (struct inode *, 8 bytes)", "+40[0]"),
                ("Use offset 48: `f_flags` (unsigned int, 4 bytes)", "+48[0]")
            ]
        );
        assert_eq!(fixes[0].edits[0].span.text(text), "+41[0]");
    }

    #[test]
    fn completion_follows_the_walk_in_a_half_typed_line() {
        let k = kernel();
        let text = "vfs_read(x64 file+40[0]+i_";
        let p = parse(text);
        let items = completions(&p, text, text.len(), &[&k]);
        let labels: Vec<&str> = items.iter().map(|c| c.label.as_str()).take(3).collect();
        assert_eq!(labels, ["i_mode (0, umode_t)", "i_opflags (2, short unsigned int)", "i_uid (4, kuid_t)"]);
        assert_eq!((items[0].insert.as_str(), items[0].replace.text(text)), ("0", "i_"));
        // Digits filter by offset.
        let text = "vfs_read(x64 file+40[0]+4";
        let p = parse(text);
        let items = completions(&p, text, text.len(), &[&k]);
        assert!(items.iter().all(|c| c.insert.starts_with('4')) && !items.is_empty());
    }

    #[test]
    fn fuzzy_ranks_prefix_before_substring_before_subsequence() {
        assert_eq!(fuzzy_rank("vfs_read", "vfs_r"), Some(0));
        assert_eq!(fuzzy_rank("VFS_read", "vfs"), Some(1));
        assert_eq!(fuzzy_rank("do_vfs_read", "vfs"), Some(2));
        assert_eq!(fuzzy_rank("vfs_read", "vrd"), Some(3));
        assert_eq!(fuzzy_rank("vfs_read", "xyz"), None);
    }
}
