//! What bpftrace rules know about a script on one kernel (below the rules: they import
//! it; `crate::bpftrace` runs them): the context, each kernel's trace events and
//! lookups, the typing of kernel-typed expressions.

use crate::diagnostic::{Diagnostic, Origin, Severity};
use fevlint_bpftrace::{AttachPoint, Expr, ExprKind, Parse, Probe, ProbeKind, Span, Stmt};
use fevlint_kernel::{FunctionFacts, Kernel, Trace};
use fevlint_types::layout;
use fevlint_types::model::{Type, TypeNamespace, TypeRef, TypeSource};
use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// What the bpftrace rules look at: the parse and, for kernel rules, one kernel (and the
/// drift baseline).
pub struct BtContext<'a> {
    pub text: &'a str,
    pub parse: &'a Parse,
    pub kernel: Option<&'a Kernel>,
    pub baseline: Option<&'a Kernel>,
    facts: OnceLock<Option<KernelFacts<'a>>>,
    base_facts: OnceLock<Option<KernelFacts<'a>>>,
}

impl std::fmt::Debug for BtContext<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BtContext").field("kernel", &self.kernel.map(|k| &k.name)).finish_non_exhaustive()
    }
}

impl<'a> BtContext<'a> {
    pub fn new(text: &'a str, parse: &'a Parse, kernel: Option<&'a Kernel>, baseline: Option<&'a Kernel>) -> Self {
        BtContext { text, parse, kernel, baseline, facts: OnceLock::new(), base_facts: OnceLock::new() }
    }

    /// The kernel's facts (tracepoint list, per-name lookups), built on first use.
    pub fn facts(&self) -> Option<&KernelFacts<'a>> {
        self.facts.get_or_init(|| self.kernel.map(KernelFacts::new)).as_ref()
    }

    pub fn baseline_facts(&self) -> Option<&KernelFacts<'a>> {
        self.base_facts.get_or_init(|| self.baseline.map(KernelFacts::new)).as_ref()
    }

    /// Every attach point with its probe, when the grammar accepted the script (an
    /// attach point bpftrace refuses leaves the tree whole: the others are still checked).
    pub fn attach_points(&self) -> impl Iterator<Item = (&'a Probe, &'a AttachPoint)> + 'a {
        let parsed = self.parse.errors.iter().all(|e| e.stage == fevlint_bpftrace::Stage::AttachPoint);
        let probes: &'a [Probe] = if parsed { &self.parse.program.probes } else { &[] };
        probes.iter().flat_map(|p| p.attach_points.iter().map(move |a| (p, a)))
    }

    /// Every probe, when the grammar accepted the script (see [`Self::attach_points`]).
    pub fn probes(&self) -> impl Iterator<Item = &'a Probe> + 'a {
        let parsed = self.parse.errors.iter().all(|e| e.stage == fevlint_bpftrace::Stage::AttachPoint);
        let probes: &'a [Probe] = if parsed { &self.parse.program.probes } else { &[] };
        probes.iter()
    }

    /// A diagnostic about the kernel being checked.
    pub fn diagnostic(&self, rule: &impl Origin, span: Span, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(rule, fevlint_syntax::Span::new(span.start, span.end), message);
        d.kernel = self.kernel.map(|k| k.name.as_str().into());
        d
    }

    /// Types the script defines itself (they take precedence over the kernel's), and
    /// whether it `#include`s headers (whose types fevlint cannot see).
    pub fn script_types(&self) -> (HashSet<String>, bool) {
        let defined = self.parse.program.definitions.iter().filter_map(|d| d.name.clone()).collect();
        let includes = self
            .parse
            .program
            .preprocessor
            .iter()
            .any(|(p, _)| p.trim_start_matches('#').trim_start().starts_with("include"));
        (defined, includes)
    }
}

/// `*` wildcards as bpftrace 0.17 matches them (`wildcard_match`: `*` any run).
pub fn wildcard_match(pattern: &str, s: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == s;
    }
    let mut rest = s;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(p) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(at) => rest = &rest[at + p.len()..],
                None => return false,
            }
        }
    }
    true
}

/// Trace event systems whose events are created at run time or by ftrace itself: no
/// kernel image lists them.
const DYNAMIC_CATEGORIES: &[&str] = &["kprobes", "uprobes", "synthetic", "eprobes", "fprobes", "tracepoints", "ftrace"];

/// A wildcard expansion's key: functions (`true`) or events, the category, the pattern.
type ExpansionKey = (bool, String, String);

/// What fevlint knows about one kernel for bpftrace: its trace events and how to look
/// up functions, tracepoint fields and types.
pub struct KernelFacts<'a> {
    pub kernel: &'a Kernel,
    /// Trace event names (`sched_switch`, `sys_enter_openat`), from the symbol map's
    /// `__event_*` entries; `None` when it has none (`event_exists` then asks BTF for
    /// each name's `btf_trace_*` typedef).
    pub events: Option<&'a HashSet<String>>,
    /// Whether `events` includes the syscall events (`sys_enter_*` from the symbol map).
    pub events_have_syscalls: bool,
    functions: std::sync::Mutex<HashMap<String, Option<FunctionFacts>>>,
    /// `tracepoint_layouts` by `category:name`: scripts repeat their tracepoints.
    fields: std::sync::Mutex<HashMap<String, Option<Vec<Vec<Field>>>>>,
    /// `similar_functions` by name (a search of every function name each time).
    similar: std::sync::Mutex<HashMap<String, Vec<String>>>,
    /// Wildcard expansions by kind and pattern (each a pass over every name).
    expansions: std::sync::Mutex<HashMap<ExpansionKey, Option<Vec<String>>>>,
}

impl<'a> KernelFacts<'a> {
    /// The kernel's event names come from [`Kernel::symbol_events`], built once per
    /// kernel; the rest is looked up as asked.
    pub fn new(kernel: &'a Kernel) -> Self {
        let events = kernel.symbol_events();
        KernelFacts {
            kernel,
            events: events.map(|e| &e.names),
            events_have_syscalls: events.is_some_and(|e| e.syscalls),
            functions: Default::default(),
            fields: Default::default(),
            similar: Default::default(),
            expansions: Default::default(),
        }
    }

    pub fn function(&self, name: &str) -> Option<FunctionFacts> {
        let mut m = self.functions.lock().unwrap_or_else(|e| e.into_inner());
        m.entry(name.to_owned()).or_insert_with(|| self.kernel.function(name).ok()).clone()
    }

    /// The kernel's functions with names close to `name` (at most 3), remembered: a
    /// script names a missing function once per probe.
    pub fn similar_functions(&self, name: &str) -> Vec<String> {
        let mut m = self.similar.lock().unwrap_or_else(|e| e.into_inner());
        m.entry(name.to_owned()).or_insert_with(|| self.kernel.similar_functions(name, 3)).clone()
    }

    pub fn modules(&self) -> bool {
        self.kernel.config_enabled("MODULES") == Some(true)
    }

    /// Whether a trace event exists: `Some(false)` only when the kernel's list settles it.
    /// Events users create at run time (`kprobes`, `uprobes`, synthetic, eprobes,
    /// fprobes) and ftrace's own are never settled.
    /// With the kernel's `available_events` the system is checked too; without it only
    /// the name (kernel images do not say which system an event belongs to).
    pub fn event_exists(&self, category: &str, name: &str) -> Option<bool> {
        if DYNAMIC_CATEGORIES.contains(&category) {
            return None;
        }
        if let Some(list) = self.kernel.trace_events() {
            return Some(list.value.contains(category, name));
        }
        let Some(events) = self.events.as_ref() else {
            // No event list (kallsyms without data symbols): every tracepoint has its
            // `btf_trace_<name>` typedef; syscall events have none.
            if category == "syscalls" || name.starts_with("sys_enter_") || name.starts_with("sys_exit_") {
                return None;
            }
            let t = self.kernel.types()?;
            return Some(!t.find_type(TypeNamespace::Ordinary, &format!("btf_trace_{name}")).ok()?.is_empty());
        };
        let syscall = name.starts_with("sys_enter_") || name.starts_with("sys_exit_");
        if category == "syscalls" {
            if !syscall {
                return Some(false);
            }
            if !self.events_have_syscalls {
                return None;
            }
        }
        if syscall && category != "syscalls" && category != "*" && !category.contains('*') {
            return Some(false);
        }
        Some(events.contains(name))
    }

    /// Event names matching a tracepoint wildcard (the category is not known here, so
    /// only what fits the `syscalls` rule is filtered).
    pub fn events_matching(&self, category: &str, pattern: &str) -> Option<Vec<String>> {
        let key = (false, category.to_owned(), pattern.to_owned());
        if let Some(v) = self.expansions.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return v.clone();
        }
        let v = self.events_matching_uncached(category, pattern);
        self.expansions.lock().unwrap_or_else(|e| e.into_inner()).insert(key, v.clone());
        v
    }

    fn events_matching_uncached(&self, category: &str, pattern: &str) -> Option<Vec<String>> {
        if DYNAMIC_CATEGORIES.iter().any(|d| wildcard_match(category, d)) {
            return None;
        }
        if let Some(list) = self.kernel.trace_events() {
            let mut v: Vec<String> = list
                .value
                .iter()
                .filter(|(s, e)| wildcard_match(category, s) && wildcard_match(pattern, e))
                .map(|(s, e)| format!("{s}:{e}"))
                .collect();
            v.sort();
            return Some(v);
        }
        if category.contains('*') {
            return None;
        }
        let events = self.events.as_ref()?;
        if category == "syscalls" && !self.events_have_syscalls {
            return None;
        }
        let mut v: Vec<String> = events
            .iter()
            .filter(|e| wildcard_match(pattern, e))
            .filter(|e| {
                let sys = e.starts_with("sys_enter_") || e.starts_with("sys_exit_");
                match category {
                    "syscalls" => sys,
                    c if c.contains('*') => true,
                    _ => !sys,
                }
            })
            .cloned()
            .collect();
        v.sort();
        Some(v)
    }

    /// The systems the kernel's `available_events` lists an event named `name` in (empty
    /// without that list).
    pub fn event_systems(&self, name: &str) -> Vec<String> {
        self.kernel.trace_events().map(|l| l.value.systems_of(name).to_vec()).unwrap_or_default()
    }

    /// Traceable function names matching a kprobe/kfunc wildcard (bpftrace 0.17 expands
    /// them over `available_filter_functions`); `None` without that list.
    pub fn functions_matching(&self, pattern: &str) -> Option<Vec<String>> {
        let key = (true, String::new(), pattern.to_owned());
        if let Some(v) = self.expansions.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return v.clone();
        }
        let v = self.functions_matching_uncached(pattern);
        self.expansions.lock().unwrap_or_else(|e| e.into_inner()).insert(key, v.clone());
        v
    }

    fn functions_matching_uncached(&self, pattern: &str) -> Option<Vec<String>> {
        let ff = self.kernel.filter_functions()?;
        let mut v: Vec<String> =
            ff.value.iter().map(|(n, _)| n).filter(|n| wildcard_match(pattern, n)).map(str::to_owned).collect();
        v.sort();
        v.dedup();
        Some(v)
    }

    /// The fields `args->` may name on a tracepoint: `Some(sets)` with one field list per
    /// candidate layout (a field is valid when any candidate has it), `None` when the
    /// kernel data cannot tell.
    pub fn tracepoint_fields(&self, category: &str, name: &str) -> Option<Vec<Vec<String>>> {
        let layouts = self.tracepoint_layouts(category, name)?;
        Some(layouts.into_iter().map(|l| l.into_iter().map(|f| f.name).collect()).collect())
    }

    /// The C types of a tracepoint's fields where the kernel settles them: one
    /// `trace_event_raw_*` layout (its own, or a single matching template), fields that
    /// are not `__data_loc` (bpftrace reads those as offsets). `args->mm->member` is
    /// typed from these, as bpftrace types it from the event's format.
    pub fn tracepoint_field_types(&self, category: &str, name: &str) -> HashMap<String, TypeRef> {
        let Some(layouts) = self.tracepoint_layouts(category, name) else { return HashMap::new() };
        let [one] = &layouts[..] else { return HashMap::new() };
        one.iter().filter_map(|f| Some((f.name.clone(), f.ty?))).collect()
    }

    fn tracepoint_layouts(&self, category: &str, name: &str) -> Option<Vec<Vec<Field>>> {
        let key = format!("{category}:{name}");
        if let Some(v) = self.fields.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return v.clone();
        }
        let v = self.tracepoint_layouts_uncached(category, name);
        self.fields.lock().unwrap_or_else(|e| e.into_inner()).insert(key, v.clone());
        v
    }

    fn tracepoint_layouts_uncached(&self, category: &str, name: &str) -> Option<Vec<Vec<Field>>> {
        let t = self.kernel.types()?;
        const COMMON: [&str; 4] = ["common_type", "common_flags", "common_preempt_count", "common_pid"];
        let untyped = |n: &str| Field { name: n.to_owned(), ty: None };
        let with_common = |mut v: Vec<Field>| {
            v.extend(COMMON.iter().map(|s| untyped(s)));
            v
        };
        if category == "syscalls" {
            if name.starts_with("sys_exit_") {
                return Some(vec![with_common(vec![untyped("__syscall_nr"), untyped("ret")])]);
            }
            let sc = name.strip_prefix("sys_enter_")?;
            let f = t.functions(&format!("__do_sys_{sc}")).ok()?;
            let f = f.first()?;
            let mut v = vec![untyped("__syscall_nr")];
            for p in &f.proto.params {
                v.push(untyped(p.name.as_deref()?));
            }
            return Some(vec![with_common(v)]);
        }
        let fields_of = |ty: TypeRef| -> Option<Vec<Field>> {
            let Type::Struct(c) = layout::strip(t, ty).ok()?.1 else { return None };
            Some(
                c.members
                    .iter()
                    .filter_map(|m| Some((m.name.clone()?, m.ty)))
                    .filter(|(n, _)| n != "ent" && n != "__data")
                    .map(|(n, ty)| match n.strip_prefix("__data_loc_") {
                        Some(n) => untyped(n),
                        None => Field { name: n, ty: Some(ty) },
                    })
                    .collect(),
            )
        };
        if let Some(ty) = t.find_type(TypeNamespace::Struct, &format!("trace_event_raw_{name}")).ok()?.first() {
            return Some(vec![with_common(fields_of(*ty)?)]);
        }
        // A DEFINE_EVENT: its template's layout. Candidates are the templates whose
        // `trace_event_raw_event_<template>` takes the tracepoint's own prototype.
        let proto = tracepoint_proto(t, name)?;
        let mut out = Vec::new();
        for fname in t.function_names().ok()? {
            let Some(template) = fname.strip_prefix("trace_event_raw_event_") else { continue };
            let Some(f) = t.functions(&fname).ok().and_then(|v| v.into_iter().next()) else { continue };
            if f.proto.params.len() != proto.len() + 1 {
                continue;
            }
            let same = f.proto.params[1..].iter().zip(&proto).all(|(a, b)| same_type(t, a.ty, *b));
            if !same {
                continue;
            }
            if let Some(ty) = t.find_type(TypeNamespace::Struct, &format!("trace_event_raw_{template}")).ok()?.first() {
                out.push(with_common(fields_of(*ty)?));
            }
        }
        (!out.is_empty()).then_some(out)
    }
}

/// A tracepoint field: its name as `args->` names it, and its C type where typed.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Option<TypeRef>,
}

/// The parameter types of `btf_trace_<name>` after its leading `void *`.
fn tracepoint_proto(t: &dyn TypeSource, name: &str) -> Option<Vec<TypeRef>> {
    let td = t.find_type(TypeNamespace::Ordinary, &format!("btf_trace_{name}")).ok()?;
    let (_, ty) = layout::strip(t, *td.first()?).ok()?;
    let Type::Pointer { target } = ty else { return None };
    let Type::Function(p) = layout::strip(t, target).ok()?.1 else { return None };
    Some(p.params.iter().skip(1).map(|p| p.ty).collect())
}

fn same_type(t: &dyn TypeSource, a: TypeRef, b: TypeRef) -> bool {
    a == b || layout::type_name(t, a).ok() == layout::type_name(t, b).ok()
}

/// The member `name` of the composite `ty` points at or is (through typedefs, one
/// pointer when `arrow`), searching anonymous members: `Some(Some(type))`, `Some(None)`
/// when the composite has no such member, `None` when `ty` is not a composite (unknown).
pub fn member(t: &dyn TypeSource, ty: TypeRef, name: &str, arrow: bool) -> Option<Option<TypeRef>> {
    let mut cur = ty;
    if arrow {
        match layout::strip(t, cur).ok()?.1 {
            Type::Pointer { target } => cur = target,
            _ => return None,
        }
    }
    match layout::strip(t, cur).ok()?.1 {
        Type::Struct(_) | Type::Union(_) => {}
        _ => return None,
    }
    let m = layout::resolve_member(t, cur, name).ok()?;
    Some(m.map(|m| m.ty))
}

/// The kernel type a cast names (`struct sock`, `struct sock *` with `pointers`), when
/// the kernel defines it.
pub fn cast_type(t: &dyn TypeSource, ty: &str) -> Option<TypeRef> {
    let (ns, name) = if let Some(n) = ty.strip_prefix("struct ") {
        (TypeNamespace::Struct, n)
    } else if let Some(n) = ty.strip_prefix("union ") {
        (TypeNamespace::Union, n)
    } else {
        (TypeNamespace::Ordinary, ty)
    };
    t.find_type(ns, name.trim()).ok()?.into_iter().next()
}

/// The probes' kernel functions for `args`/`argN`: the function facts of a single
/// (non-wildcard) kprobe or kfunc attach point.
pub fn probe_function(f: &KernelFacts<'_>, probe: &Probe) -> Option<(ProbeKind, FunctionFacts)> {
    if probe.attach_points.len() != 1 {
        return None;
    }
    let ap = &probe.attach_points[0];
    let kind = ap.kind?;
    if !kind.is_kernel_function()
        || ap.wildcard
        || !ap.target.is_empty() && kind.is_btf_function() && ap.target != "vmlinux"
    {
        return None;
    }
    Some((kind, f.function(&ap.func)?))
}

/// Calls `f` on every expression of a probe (predicate and body, nested statements).
pub fn probe_exprs<'a>(probe: &'a Probe, f: &mut dyn FnMut(&'a Expr)) {
    if let Some(p) = &probe.predicate {
        p.walk(f);
    }
    for s in &probe.body {
        s.walk(&mut |s: &'a Stmt| {
            for e in s.exprs() {
                e.walk(f);
            }
        });
    }
}

/// The kernel type of an expression where fevlint can tell: casts to kernel types,
/// `args->f` of kfuncs and tracepoints, member chains, `$variables` assigned once from
/// such an expression in the probe.
pub struct Typer<'k, 'a> {
    pub types: &'k dyn TypeSource,
    /// `$var` -> its one kernel type in this probe.
    pub vars: HashMap<String, Option<TypeRef>>,
    pub script_types: &'a HashSet<String>,
    pub includes: bool,
    /// `args->name` -> the kfunc parameter's BTF type (empty for other probes).
    pub args: HashMap<String, TypeRef>,
}

impl<'k> Typer<'k, '_> {
    /// The C type of a value where fevlint can tell: a member reached through a typed
    /// base, or a kfunc's `args->param`.
    pub fn value_type(&self, e: &Expr) -> Option<TypeRef> {
        match &e.kind {
            ExprKind::Call { .. } => self.value_type(address_space_of(e)?),
            // `*p` of a typed pointer: the pointed-to type.
            ExprKind::Unary { op: "*", expr } => {
                let p = self.type_of(expr)?;
                (p.pointers == 1).then_some(p.ty)
            }
            ExprKind::Field { base, field, arrow, .. } => {
                if matches!(&base.kind, ExprKind::Builtin(b) if b == "args") {
                    return self.args.get(field).copied();
                }
                let b = self.type_of(base)?;
                if b.pointers != u8::from(*arrow) {
                    return None;
                }
                member(self.types, b.ty, field, false)?
            }
            _ => None,
        }
    }

    /// The pointer type a cast gives: `(struct T *)e` is `struct T *`, found as the
    /// pointer target plus one level of `->`.
    pub fn type_of(&self, e: &Expr) -> Option<KType> {
        match &e.kind {
            ExprKind::Call { .. } => self.type_of(address_space_of(e)?),
            ExprKind::Cast { ty, pointers, .. } => {
                if self.script_types.contains(ty.as_str()) {
                    return None;
                }
                let base = cast_type(self.types, ty)?;
                Some(KType { ty: base, pointers: *pointers })
            }
            ExprKind::Var(v) => {
                let t = self.vars.get(v)?.as_ref()?;
                Some(KType { ty: *t, pointers: 1 })
            }
            ExprKind::Field { base, field, arrow, .. } => {
                if matches!(&base.kind, ExprKind::Builtin(b) if b == "args") {
                    return self.args.get(field).map(|t| KType::from_ref(self.types, *t));
                }
                let b = self.type_of(base)?;
                let want_pointers = if *arrow { 1 } else { 0 };
                if b.pointers != want_pointers {
                    return None;
                }
                let m = member(self.types, b.ty, field, false)??;
                Some(KType::from_ref(self.types, m))
            }
            _ => None,
        }
    }
}

/// The argument of `kptr(e)`/`uptr(e)`: they mark the address space and keep the type.
fn address_space_of(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Call { name, args, .. } if (name == "kptr" || name == "uptr") && args.len() == 1 => args.first(),
        _ => None,
    }
}

/// A kernel type with its outer pointer levels counted separately (a cast's `*`).
#[derive(Clone, Copy, Debug)]
pub struct KType {
    /// The pointed-to type when `pointers` > 0, else the type itself.
    pub ty: TypeRef,
    pub pointers: u8,
}

impl KType {
    /// From a member's type: one pointer level unwrapped when it is a pointer.
    pub fn from_ref(t: &dyn TypeSource, ty: TypeRef) -> KType {
        match layout::strip(t, ty) {
            Ok((_, Type::Pointer { target })) => KType { ty: target, pointers: 1 },
            _ => KType { ty, pointers: 0 },
        }
    }
}

/// A typer for one probe: its `$variables`, and its kfunc's parameters as `args`.
pub fn typer_for<'k, 'a>(
    f: &KernelFacts<'_>,
    types: &'k dyn TypeSource,
    probe: &Probe,
    script_types: &'a HashSet<String>,
    includes: bool,
) -> Typer<'k, 'a> {
    let mut args = HashMap::new();
    if let [ap] = &probe.attach_points[..] {
        if ap.kind == Some(ProbeKind::Tracepoint) && !ap.wildcard {
            args = f.tracepoint_field_types(&ap.target, &ap.func);
        }
    }
    if let Some((kind, facts)) = probe_function(f, probe) {
        if kind.is_btf_function() && facts.prototypes.len() == 1 {
            for p in &facts.prototypes[0].proto.params {
                if let Some(n) = &p.name {
                    args.insert(n.clone(), p.ty);
                }
            }
        }
    }
    let mut typer = Typer { types, vars: HashMap::new(), script_types, includes, args };
    variable_types(&mut typer, probe);
    typer
}

/// What `str()` reads from a value of C type `ty`: `Ok(())` a string (a char array or a
/// pointer to char), `Err(what it is)` otherwise.
pub fn string_kind(t: &dyn TypeSource, ty: TypeRef) -> Result<(), String> {
    let name = layout::type_name(t, ty).unwrap_or_default();
    let is_char = |ty: TypeRef| {
        matches!(layout::strip(t, ty), Ok((_, Type::Int { is_char: true, .. })) | Ok((_, Type::Int { size: 1, .. })))
    };
    match layout::strip(t, ty) {
        Ok((_, Type::Array { element, .. })) if is_char(element) => Ok(()),
        Ok((_, Type::Pointer { target }))
            if is_char(target) || matches!(layout::strip(t, target), Ok((_, Type::Void))) =>
        {
            Ok(())
        }
        Ok((_, Type::Pointer { .. })) => Err(format!("a pointer to no string (`{name}`)")),
        Ok((_, Type::Int { .. } | Type::Enum { .. })) => Err(format!("an integer (`{name}`)")),
        Ok((_, Type::Struct(_) | Type::Union(_))) => Err(format!("a struct or union (`{name}`)")),
        _ => Ok(()),
    }
}

/// `$var = <expr>` assignments of a probe: each variable's kernel type when every
/// assignment gives the same one.
pub fn variable_types(typer: &mut Typer<'_, '_>, probe: &Probe) {
    let mut assigns: Vec<(&str, &Expr)> = Vec::new();
    for s in &probe.body {
        s.walk(&mut |s| {
            if let Stmt::Assign { target, value, op: None, .. } = s {
                if let ExprKind::Var(v) = &target.kind {
                    assigns.push((v.as_str(), value));
                }
            }
        });
    }
    for (v, value) in assigns {
        let t = typer.type_of(value).filter(|k| k.pointers == 1).map(|k| k.ty);
        match typer.vars.get(v) {
            None => {
                typer.vars.insert(v.to_owned(), t);
            }
            Some(prev) if *prev != t => {
                typer.vars.insert(v.to_owned(), None);
            }
            _ => {}
        }
    }
}

/// A kprobe/kfunc's traceability in words, for messages.
pub fn trace_words(f: &FunctionFacts) -> &'static str {
    match &f.trace {
        Trace::Traceable { .. } => "traceable",
        Trace::NotTraceable => "not in the ftrace list (notrace, inlined or `__init`)",
        Trace::OnlyClones(_) => "only its compiler clones are traceable",
        Trace::Unknown => "of unknown traceability",
    }
}

/// Downgrades a "not in the kernel image" finding when modules could provide the name.
pub fn module_caveat(f: &KernelFacts<'_>, mut d: Diagnostic, what: &str) -> Diagnostic {
    if f.modules() {
        d.severity = Severity::Warning;
        d = d.note(format!("{what} is not in the kernel image; it attaches only if a loaded module provides it"));
    }
    d
}
