//! Completion in bpftrace scripts, from the text before the cursor (which is usually
//! not a whole script yet): probe kinds at the start of an attach point, kernel
//! functions after `kprobe:`/`kfunc:` (and their aliases), trace systems and events after
//! `tracepoint:`, `args` fields of the enclosing probe, and members after `->`/`.` of
//! what fevlint can type (`args->p`, casts, `$variables` assigned earlier in the probe).

use crate::bpftrace_facts::{typer_for, KernelFacts};
use fevlint_bpftrace::{ExprKind, ProbeKind, Stmt};
use fevlint_kernel::Kernel;
use fevlint_types::layout;
use fevlint_types::model::{Type, TypeRef, TypeSource};
use std::collections::{BTreeMap, HashSet};

/// What a completion names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BtItemKind {
    ProbeKind,
    Function,
    System,
    Event,
    Field,
    Member,
}

/// One completion: `label` replaces the bytes `replace` (the word being typed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtItem {
    pub label: String,
    pub kind: BtItemKind,
    /// One line: the type, or the kernels that have it.
    pub detail: String,
    pub replace: fevlint_syntax::Span,
}

/// At most this many function names per answer (the client asks again as the word grows).
pub const MAX_FUNCTIONS: usize = 200;

const KINDS: &[&str] = &[
    "kprobe",
    "kretprobe",
    "kfunc",
    "kretfunc",
    "tracepoint",
    "rawtracepoint",
    "uprobe",
    "uretprobe",
    "usdt",
    "profile",
    "interval",
    "software",
    "hardware",
    "watchpoint",
    "asyncwatchpoint",
    "iter",
    "BEGIN",
    "END",
];

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Completions at `offset`, and whether the list was cut (ask again as the word grows).
pub fn complete_at(text: &str, offset: usize, kernels: &[&Kernel]) -> (Vec<BtItem>, bool) {
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return (Vec::new(), false);
    }
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && is_word(bytes[start - 1]) {
        start -= 1;
    }
    let word = &text[start..offset];
    let replace = fevlint_syntax::Span::new(start, offset);
    let facts: Vec<KernelFacts<'_>> = kernels.iter().map(|k| KernelFacts::new(k)).collect();
    let Some((header, body)) = enclosing(text, start) else { return (Vec::new(), false) };
    match body {
        // Outside any probe body: an attach point.
        None => (attach_point(&text[header..start], word, replace, &facts), false),
        Some(body_start) => {
            let before = &text[..start];
            let (base, arrow) = if let Some(b) = before.strip_suffix("->") {
                (b, true)
            } else if let Some(b) = before.strip_suffix('.') {
                (b, false)
            } else {
                return (Vec::new(), false);
            };
            let base_start = expression_start(base);
            let base_text = &base[base_start..];
            let probe_header = &text[header..body_start - 1];
            let statements = &text[body_start..base_start.max(body_start)];
            (members(probe_header, statements, base_text, arrow, word, replace, &facts), false)
        }
    }
}

/// The probe around `at`: where its header starts and, when `at` is inside its body, where
/// the body starts (after `{`). Braces in strings and comments are not counted; `None`
/// when `at` is inside a string or a comment.
fn enclosing(text: &str, at: usize) -> Option<(usize, Option<usize>)> {
    let bytes = text.as_bytes();
    let (mut depth, mut header, mut body) = (0usize, 0usize, None);
    let mut i = 0;
    while i < at {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < at && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if i >= at {
                    return None;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < at && bytes[i] != b'\n' {
                    i += 1;
                }
                if i >= at {
                    return None;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < at && !(bytes[i] == b'*' && bytes[i + 1] == b'/') {
                    i += 1;
                }
                if i + 1 >= at {
                    return None;
                }
                i += 1;
            }
            b'{' => {
                if depth == 0 {
                    body = Some(i + 1);
                }
                depth += 1;
            }
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    body = None;
                    header = i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    Some((header, body))
}

/// Where the expression ending at the end of `s` starts: identifiers, `$`, `@`, `->`,
/// `.` and balanced `(...)`/`[...]`.
fn expression_start(s: &str) -> usize {
    let b = s.as_bytes();
    let mut i = b.len();
    while i > 0 {
        let c = b[i - 1];
        if is_word(c) || c == b'$' || c == b'@' || c == b'.' {
            i -= 1;
        } else if c == b'>' && i >= 2 && b[i - 2] == b'-' {
            i -= 2;
        } else if c == b')' || c == b']' {
            let (open, close) = if c == b')' { (b'(', b')') } else { (b'[', b']') };
            let mut depth = 0;
            let mut j = i;
            while j > 0 {
                j -= 1;
                if b[j] == close {
                    depth += 1;
                } else if b[j] == open {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            if depth != 0 {
                break;
            }
            i = j;
        } else {
            break;
        }
    }
    i
}

/// A probe kind by name or short alias (`k`, `kr`, `f`, `t`, …) as bpftrace 0.17 knows them.
fn kind_of(name: &str) -> Option<ProbeKind> {
    fevlint_bpftrace::probe::PROBE_LIST.iter().find(|(n, a, _)| *n == name || *a == name).map(|(_, _, k)| *k)
}

fn attach_point(before: &str, word: &str, replace: fevlint_syntax::Span, facts: &[KernelFacts<'_>]) -> Vec<BtItem> {
    // The attach point being typed: after the last comma or the start of the header.
    let ap = before.rsplit([',', '\n']).next().unwrap_or("").trim_start();
    let parts: Vec<&str> = ap.split(':').collect();
    let item = |label: String, kind, detail: String| BtItem { label, kind, detail, replace };
    match parts[..] {
        [""] => KINDS
            .iter()
            .filter(|k| k.starts_with(word))
            .map(|k| item((*k).to_owned(), BtItemKind::ProbeKind, "probe kind".into()))
            .collect(),
        [kind, ""] => {
            let Some(kind) = kind_of(kind) else { return Vec::new() };
            if kind.is_kernel_function() {
                return functions(word, replace, facts, kind.is_btf_function());
            }
            if kind == ProbeKind::Tracepoint {
                return systems(word, replace, facts);
            }
            Vec::new()
        }
        [kind, system, ""] if kind_of(kind) == Some(ProbeKind::Tracepoint) => events(system, word, replace, facts),
        _ => Vec::new(),
    }
}

/// Per name, the kernels (by name) that have it: `detail` says where a name is missing.
fn on_kernels(
    found: BTreeMap<String, Vec<String>>,
    all: usize,
    kind: BtItemKind,
    replace: fevlint_syntax::Span,
) -> Vec<BtItem> {
    found
        .into_iter()
        .map(|(label, on)| {
            let detail =
                if on.len() == all { "on every kernel".to_owned() } else { format!("only on {}", on.join(", ")) };
            BtItem { label, kind, detail, replace }
        })
        .collect()
}

fn functions(word: &str, replace: fevlint_syntax::Span, facts: &[KernelFacts<'_>], btf: bool) -> Vec<BtItem> {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in facts {
        let Some(ff) = f.kernel.filter_functions() else { continue };
        let mut seen = HashSet::new();
        for (n, _) in ff.value.iter() {
            // kfunc needs a BTF function: clones (`name.isra.0`) have none.
            if !n.starts_with(word) || (btf && n.contains('.')) || !seen.insert(n) {
                continue;
            }
            if found.len() >= MAX_FUNCTIONS && !found.contains_key(n) {
                continue;
            }
            found.entry(n.to_owned()).or_default().push(f.kernel.name.clone());
        }
    }
    on_kernels(found, facts.len(), BtItemKind::Function, replace)
}

fn systems(word: &str, replace: fevlint_syntax::Span, facts: &[KernelFacts<'_>]) -> Vec<BtItem> {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in facts {
        let Some(list) = f.kernel.trace_events() else { continue };
        let systems: HashSet<&str> = list.value.iter().map(|(s, _)| s).filter(|s| s.starts_with(word)).collect();
        for s in systems {
            found.entry(s.to_owned()).or_default().push(f.kernel.name.clone());
        }
    }
    on_kernels(found, facts.len(), BtItemKind::System, replace)
}

fn events(system: &str, word: &str, replace: fevlint_syntax::Span, facts: &[KernelFacts<'_>]) -> Vec<BtItem> {
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in facts {
        let Some(list) = f.kernel.trace_events() else { continue };
        for (s, e) in list.value.iter() {
            if s == system && e.starts_with(word) {
                found.entry(e.to_owned()).or_default().push(f.kernel.name.clone());
            }
        }
    }
    on_kernels(found, facts.len(), BtItemKind::Event, replace)
}

/// `args` fields and members: a probe made of the header, the complete `$var = …;`
/// statements before the expression, and the expression assigned to a variable, typed as
/// the rules type it.
fn members(
    header: &str,
    statements: &str,
    base: &str,
    arrow: bool,
    word: &str,
    replace: fevlint_syntax::Span,
    facts: &[KernelFacts<'_>],
) -> Vec<BtItem> {
    let assigns: String = statements
        .split([';', '\n', '{', '}'])
        .map(str::trim)
        .filter(|s| s.starts_with('$') && s.contains('='))
        .map(|s| format!("{s};\n"))
        .collect();
    let script = format!("{header} {{\n{assigns}$__fevlint_complete = {base};\n}}\n");
    let parse = fevlint_bpftrace::parse(&script);
    let Some(probe) = parse.program.probes.first() else { return Vec::new() };
    let Some(Stmt::Assign { value, .. }) = probe.body.last() else { return Vec::new() };
    let defined: HashSet<String> = parse.program.definitions.iter().filter_map(|d| d.name.clone()).collect();
    let mut found: BTreeMap<String, (Vec<String>, String)> = BTreeMap::new();
    for f in facts {
        // `args.`/`args->`: the probe's fields.
        if matches!(&value.kind, ExprKind::Builtin(b) if b == "args") {
            let ap = probe.attach_points.first();
            let fields: Vec<(String, String)> = match ap.and_then(|a| a.kind) {
                Some(ProbeKind::Tracepoint) => {
                    let ap = ap.expect("attach point");
                    let types = f.tracepoint_field_types(&ap.target, &ap.func);
                    let names = f.tracepoint_fields(&ap.target, &ap.func).and_then(|c| c.into_iter().next());
                    let t = f.kernel.types();
                    names
                        .unwrap_or_default()
                        .into_iter()
                        .map(|n| {
                            let d = t.zip(types.get(&n)).map(|(t, ty)| layout::type_name(t, *ty).unwrap_or_default());
                            let d = d.unwrap_or_default();
                            (n, d)
                        })
                        .collect()
                }
                Some(k) if k.is_btf_function() => {
                    let Some((_, fx)) = crate::bpftrace_facts::probe_function(f, probe) else { continue };
                    let (Some(p), Some(t)) = (fx.prototypes.first(), f.kernel.types()) else { continue };
                    p.proto
                        .params
                        .iter()
                        .filter_map(|q| Some((q.name.clone()?, layout::type_name(t, q.ty).unwrap_or_default())))
                        .collect()
                }
                _ => Vec::new(),
            };
            for (n, d) in fields.into_iter().filter(|(n, _)| n.starts_with(word)) {
                let e = found.entry(n).or_insert_with(|| (Vec::new(), d));
                e.0.push(f.kernel.name.clone());
            }
            continue;
        }
        let Some(types) = f.kernel.types() else { continue };
        let typer = typer_for(f, types, probe, &defined, false);
        let Some(kt) = typer.type_of(value) else { continue };
        if kt.pointers != u8::from(arrow) {
            continue;
        }
        for (n, ty) in member_names(types, kt.ty) {
            if n.starts_with(word) {
                let d = layout::type_name(types, ty).unwrap_or_default();
                let e = found.entry(n).or_insert_with(|| (Vec::new(), d));
                e.0.push(f.kernel.name.clone());
            }
        }
    }
    let is_args = matches!(&value.kind, ExprKind::Builtin(b) if b == "args");
    let kind = if is_args { BtItemKind::Field } else { BtItemKind::Member };
    found
        .into_iter()
        .map(|(label, (on, ty))| {
            let detail = if on.len() == facts.len() { ty } else { format!("{ty} (only on {})", on.join(", ")) };
            BtItem { label, kind, detail, replace }
        })
        .collect()
}

/// The members a `.`/`->` can name on a composite: its named members and those of its
/// anonymous members, recursively (C's rule).
fn member_names(t: &dyn TypeSource, ty: TypeRef) -> Vec<(String, TypeRef)> {
    let mut out = Vec::new();
    let mut stack = vec![ty];
    let mut guard = 0;
    while let Some(ty) = stack.pop() {
        guard += 1;
        if guard > 64 {
            break;
        }
        let (Type::Struct(c) | Type::Union(c)) = (match layout::strip(t, ty) {
            Ok((_, ty)) => ty,
            Err(_) => continue,
        }) else {
            continue;
        };
        for m in c.members.iter() {
            match &m.name {
                Some(n) => out.push((n.clone(), m.ty)),
                None => stack.push(m.ty),
            }
        }
    }
    out
}
