//! bpftrace scripts (`*.bt`) checked against kernels: what each attach point reaches on a
//! kernel (a function, a tracepoint, a wildcard's matches) and what each kernel-typed
//! access (`args->f`, `argN`, `((struct T *)e)->m`) resolves to. The rules in
//! `rules/` (S010, K210–K213, A310, T410, T411, D510) report from these facts.
//!
//! Invariant: a diagnostic is only about a fact a kernel model settled; what the kernel
//! data cannot decide (a tracepoint's category, a syscall tracepoint's fields when the
//! kernel has no `__do_sys_*` in BTF, types from `#include`d headers) is left alone.

use crate::diagnostic::Diagnostic;
use fevlint_kernel::Kernel;

pub use crate::bpftrace_facts::*;

/// Whether a file is a bpftrace script (`*.bt`).
pub fn is_bpftrace(name: &str) -> bool {
    name.ends_with(".bt")
}

/// Whether text read from standard input is a bpftrace script rather than function
/// events: a `#!…bpftrace` line, or it parses as bpftrace with a known probe type.
pub fn looks_like_bpftrace(text: &str) -> bool {
    if text.lines().next().is_some_and(|l| l.starts_with("#!") && l.contains("bpftrace")) {
        return true;
    }
    let p = fevlint_bpftrace::parse(text);
    p.accepted() && p.program.probes.iter().flat_map(|p| &p.attach_points).any(|a| a.kind.is_some())
}

/// The attach points of a script (for summaries).
pub fn attach_point_count(text: &str) -> usize {
    fevlint_bpftrace::parse(text).program.probes.iter().map(|p| p.attach_points.len()).sum()
}

/// Each probe of a script the grammar accepted: its span (first attach point to closing
/// brace) and its attach points as written (for per-probe reports such as `fevlint
/// matrix`).
pub fn probes(text: &str) -> Vec<(fevlint_syntax::Span, Vec<String>)> {
    let parse = fevlint_bpftrace::parse(text);
    parse
        .program
        .probes
        .iter()
        .map(|p| {
            let raw = p.attach_points.iter().map(|a| a.raw.clone()).collect();
            (fevlint_syntax::Span::new(p.span.start, p.span.end), raw)
        })
        .collect()
}

/// A bpftrace script's findings on every kernel given (the first is the drift baseline),
/// sorted, with suppressions applied.
pub fn check(text: &str, kernels: &[&Kernel]) -> Vec<Diagnostic> {
    let parse = fevlint_bpftrace::parse(text);
    let mut out = Vec::new();
    let cx = BtContext::new(text, &parse, None, None);
    for (rule, check) in crate::rules::BT_RULES {
        if !rule.needs_kernel() {
            check(&cx, &mut out);
        }
    }
    for (i, k) in kernels.iter().enumerate() {
        let baseline = (i > 0).then(|| kernels[0]);
        let cx = BtContext::new(text, &parse, Some(k), baseline);
        for (rule, check) in crate::rules::BT_RULES {
            let run = if rule.needs_baseline() { baseline.is_some() } else { rule.needs_kernel() };
            if run {
                check(&cx, &mut out);
            }
        }
    }
    let suppressions = crate::rules::suppress::parse(text);
    crate::rules::suppress::apply(text, &suppressions, &mut out);
    crate::rules::sort(&mut out);
    out
}

/// A quick fix of one bpftrace finding: replace `span` with `replacement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtFix {
    /// The index of the diagnostic it fixes in the list given.
    pub diagnostic: usize,
    pub title: String,
    pub span: fevlint_syntax::Span,
    pub replacement: String,
    /// A computed fix (the kernel's rename, the event's own system) rather than a guess
    /// among similar names.
    pub preferred: bool,
}

/// The fixes the findings' `help:` notes carry, as edits: D510's rename on the newer
/// kernel (preferred) or its similar names, K210's similar function names, and K210's
/// system of a tracepoint listed under another one (preferred: the event exists there).
pub fn fixes(text: &str, diagnostics: &[Diagnostic]) -> Vec<BtFix> {
    let parse = fevlint_bpftrace::parse(text);
    let names = |note: &str| -> Vec<String> { note.split('`').skip(1).step_by(2).map(str::to_owned).collect() };
    let mut out = Vec::new();
    for (i, d) in diagnostics.iter().enumerate() {
        if !d.is(&crate::rules::D510) && !d.is(&crate::rules::K210) {
            continue;
        }
        let Some(ap) = parse
            .program
            .probes
            .iter()
            .flat_map(|p| &p.attach_points)
            .find(|a| a.func_span.start == d.span.start && a.func_span.end == d.span.end)
        else {
            continue;
        };
        for note in d.notes.iter() {
            let Some(help) = note.strip_prefix("help: ") else { continue };
            if help.contains("is an event of another system") {
                // `tracepoint:SYS:EVENT`: the system part is replaced.
                let Some(pos) = ap.parts.iter().position(|p| *p == ap.target) else { continue };
                let Some(span) = ap.part_spans.get(pos) else { continue };
                if text.get(span.start..span.end) != Some(ap.target.as_str()) {
                    continue;
                }
                for full in names(help).iter().skip(1) {
                    let Some(system) = full.split(':').nth(1) else { continue };
                    out.push(BtFix {
                        diagnostic: i,
                        title: format!("Use `{full}`"),
                        span: fevlint_syntax::Span::new(span.start, span.end),
                        replacement: system.to_owned(),
                        preferred: true,
                    });
                }
            } else if help.starts_with("on ") || help.starts_with("similar names") {
                let preferred = help.starts_with("on ");
                for name in names(help) {
                    out.push(BtFix {
                        diagnostic: i,
                        title: format!("Rename to `{name}`"),
                        span: d.span,
                        replacement: name,
                        preferred,
                    });
                }
            }
        }
    }
    out
}

/// Hover text at `offset`: for an attach point's function or event, what it is on each
/// kernel (the prototype, the tracepoint's fields, or that it is missing); for
/// `args->f`, the field's type on each kernel. `(span, markdown)`.
pub fn describe_at(text: &str, offset: usize, kernels: &[&Kernel]) -> Option<(fevlint_syntax::Span, String)> {
    use fevlint_bpftrace::{ExprKind, ProbeKind};
    use fevlint_types::layout;
    let parse = fevlint_bpftrace::parse(text);
    let inside = |s: fevlint_bpftrace::Span| s.start <= offset && offset <= s.end && s.start < s.end;
    for probe in &parse.program.probes {
        for ap in &probe.attach_points {
            if !inside(ap.func_span) || ap.kind.is_none() {
                continue;
            }
            let mut md = format!("`{}`\n", ap.raw);
            for k in kernels {
                let f = KernelFacts::new(k);
                let line = match ap.kind {
                    Some(kind) if kind.is_kernel_function() && !ap.wildcard => match f.function(&ap.func) {
                        Some(facts) if facts.exists() => {
                            let proto = facts.prototypes.first().and_then(|p| {
                                let t = k.types()?;
                                let params: Vec<String> = p
                                    .proto
                                    .params
                                    .iter()
                                    .map(|q| {
                                        layout::declaration(t, q.ty, q.name.as_deref().unwrap_or(""))
                                            .unwrap_or_default()
                                    })
                                    .collect();
                                let ret = p
                                    .proto
                                    .ret
                                    .map_or("void".to_owned(), |r| layout::type_name(t, r).unwrap_or_default());
                                Some(format!("`{ret} {}({})`", p.name, params.join(", ")))
                            });
                            format!("{} ({})", proto.unwrap_or_else(|| format!("`{}`", ap.func)), trace_words(&facts))
                        }
                        _ => "not in the kernel image".to_owned(),
                    },
                    Some(ProbeKind::Tracepoint) if !ap.wildcard => match f.tracepoint_fields(&ap.target, &ap.func) {
                        Some(c) => format!(
                            "fields: {}",
                            c[0].iter()
                                .filter(|n| !n.starts_with("common_"))
                                .map(|n| format!("`{n}`"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        None => match f.event_exists(&ap.target, &ap.func) {
                            Some(false) => "no such trace event".to_owned(),
                            _ => "fields unknown".to_owned(),
                        },
                    },
                    _ => match rules_wildcard_count(&f, ap) {
                        Some(n) => format!("matches {n}"),
                        None => continue,
                    },
                };
                md.push_str(&format!("\n- on {}: {line}", k.name));
            }
            return Some((fevlint_syntax::Span::new(ap.func_span.start, ap.func_span.end), md));
        }
        // `args->f`: the field on each kernel.
        let mut found = None;
        probe_exprs(probe, &mut |e| {
            if let ExprKind::Field { base, field, field_span, .. } = &e.kind {
                if matches!(&base.kind, ExprKind::Builtin(b) if b == "args") && inside(*field_span) {
                    found = Some((field.clone(), *field_span));
                }
            }
        });
        if let Some((field, span)) = found {
            let mut md = format!("`args->{field}`\n");
            for k in kernels {
                let f = KernelFacts::new(k);
                let cx_fields = probe.attach_points.first().and_then(|ap| match ap.kind {
                    Some(ProbeKind::Tracepoint) => f.tracepoint_fields(&ap.target, &ap.func),
                    Some(kind) if kind.is_btf_function() => {
                        let (_, facts) = probe_function(&f, probe)?;
                        let p = facts.prototypes.first()?;
                        Some(vec![p.proto.params.iter().filter_map(|q| q.name.clone()).collect()])
                    }
                    _ => None,
                });
                let verdict = match cx_fields {
                    Some(c) if c.iter().any(|v| v.contains(&field)) => "a field",
                    Some(_) => "**no such field**",
                    None => "unknown",
                };
                md.push_str(&format!("\n- on {}: {verdict}", k.name));
            }
            return Some((fevlint_syntax::Span::new(span.start, span.end), md));
        }
    }
    None
}

fn rules_wildcard_count(f: &KernelFacts<'_>, ap: &fevlint_bpftrace::AttachPoint) -> Option<usize> {
    if !ap.wildcard {
        return None;
    }
    match ap.kind? {
        k if k.is_kernel_function() => f.functions_matching(&ap.func).map(|v| v.len()),
        fevlint_bpftrace::ProbeKind::Tracepoint => f.events_matching(&ap.target, &ap.func).map(|v| v.len()),
        _ => None,
    }
}
