//! T410 unknown-args-field: `args->f` names no field of the tracepoint or parameter of the
//! kfunc on this kernel.

use super::Rule;
use crate::bpftrace_facts::BtContext;
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::{Expr, ExprKind, Probe, ProbeKind};

pub static RULE: Rule = Rule {
    code: "T410",
    name: "unknown-args-field",
    severity: Severity::Error,
    doc: r#"# T410 unknown-args-field

## What it does
Checks every `args->field` (and `args.field`) against what `args` is on the kernel: a
tracepoint's fields (its `struct trace_event_raw_<event>` in BTF, or its template's when
the event is a `DEFINE_EVENT`, plus the `common_*` fields; a syscall's `__syscall_nr` and
its parameters from `__do_sys_<name>`), or a `kfunc:`'s parameters from its BTF `FUNC`.

## Why is this bad?
bpftrace refuses the script (`does not contain a field named`): the field was renamed
(`sched_switch`'s `prev_state` type changes, `block_rq_*`'s `rwbs`), or the script was
written for another event.

## Example
```bt
tracepoint:sched:sched_switch { @[args->prev_task] = count(); }
```

## Use instead
```bt
tracepoint:sched:sched_switch { @[args->prev_comm] = count(); }
```
"#,
    check: super::no_script_check,
};

/// The field lists `args` has in a probe on this kernel (one list per attach point, and
/// per candidate template), `None` when any attach point's are unknown.
pub fn args_fields(cx: &BtContext<'_>, probe: &Probe) -> Option<Vec<Vec<Vec<String>>>> {
    let f = cx.facts()?;
    let mut out = Vec::new();
    for ap in &probe.attach_points {
        if ap.wildcard {
            return None;
        }
        match ap.kind? {
            ProbeKind::Tracepoint => out.push(f.tracepoint_fields(&ap.target, &ap.func)?),
            k if k.is_btf_function() => {
                let (_, facts) = crate::bpftrace_facts::probe_function(f, probe)?;
                let proto = facts.prototypes.first()?;
                let names: Option<Vec<String>> = proto.proto.params.iter().map(|p| p.name.clone()).collect();
                out.push(vec![names?]);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// `args->f` and `args.f` in a probe: `(field, span)`.
pub fn args_uses(probe: &Probe) -> Vec<(&str, fevlint_bpftrace::Span)> {
    let mut uses = Vec::new();
    crate::bpftrace_facts::probe_exprs(probe, &mut |e: &Expr| {
        if let ExprKind::Field { base, field, field_span, .. } = &e.kind {
            if matches!(&base.kind, ExprKind::Builtin(b) if b == "args") {
                uses.push((field.as_str(), *field_span));
            }
        }
    });
    uses
}

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    for probe in cx.probes() {
        let uses = args_uses(probe);
        if uses.is_empty() {
            continue;
        }
        let Some(fields) = args_fields(cx, probe) else { continue };
        for (field, span) in uses {
            for (ap, candidates) in probe.attach_points.iter().zip(&fields) {
                if candidates.iter().any(|c| c.iter().any(|n| n == field)) {
                    continue;
                }
                let what = match ap.kind {
                    Some(ProbeKind::Tracepoint) => format!("tracepoint `{}:{}`", ap.target, ap.func),
                    _ => format!("`{}`", ap.func),
                };
                let mut d = cx.diagnostic(&RULE, span, format!("{what} has no field `{field}` in {}", f.kernel.name));
                if let Some(c) = candidates.first() {
                    let shown: Vec<String> =
                        c.iter().filter(|n| !n.starts_with("common_")).map(|n| format!("`{n}`")).collect();
                    d = d.note(format!("help: its fields: {}", shown.join(", ")));
                }
                out.push(d);
                break;
            }
        }
    }
}
