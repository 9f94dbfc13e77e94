//! K210 probe-target-missing: the function or tracepoint a bpftrace probe names is not in
//! the kernel.

use super::Rule;
use crate::bpftrace_facts::{module_caveat, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::ProbeKind;

pub static RULE: Rule = Rule {
    code: "K210",
    name: "probe-target-missing",
    severity: Severity::Error,
    doc: r#"# K210 probe-target-missing

## What it does
Looks up what each bpftrace attach point names on the kernel: the function of a
`kprobe:`/`kretprobe:` (types, ftrace list, symbol map) or a `kfunc:`/`kretfunc:`
(`fentry:`/`fexit:`); the trace event of a `tracepoint:` (with its system, from the kernel's
`available_events` where the kernel folder has it; else the kernel's `__event_*`
entries, syscall events included, where a `sys_enter_*` event belongs to `syscalls` and
no other event does); the `btf_trace_*` typedef of a `rawtracepoint:`. Names the kernel image
does not have are reported with the closest names it does have. On a kernel built with
modules the finding is a warning: a loaded module may provide the name.

## Why is this bad?
bpftrace refuses to attach (`tracepoint not found`, `Could not resolve symbol`): the
script was written for another kernel (a function renamed, made static and inlined,
a tracepoint replaced), or the name is misspelt.

## Example
```bt
kprobe:swap_readpage { @ = count(); }
```

## Use instead
```bt
kprobe:swap_read_folio { @ = count(); }
```
"#,
    check: super::no_script_check,
};

/// Whether an attach point's target is missing on this kernel: `Some(what)` naming it.
pub fn missing(cx: &BtContext<'_>, ap: &fevlint_bpftrace::AttachPoint) -> Option<String> {
    let f = cx.facts()?;
    let kind = ap.kind?;
    if ap.wildcard || ap.func.is_empty() || ap.func.contains('$') {
        return None;
    }
    match kind {
        k if k.is_kernel_function() => {
            if k.is_btf_function() && !ap.target.is_empty() && ap.target != "vmlinux" {
                return None;
            }
            let facts = f.function(&ap.func)?;
            (!facts.exists()).then(|| format!("`{}`", ap.func))
        }
        ProbeKind::Tracepoint => {
            (f.event_exists(&ap.target, &ap.func) == Some(false)).then(|| format!("`{}:{}`", ap.target, ap.func))
        }
        ProbeKind::RawTracepoint => {
            let t = f.kernel.types()?;
            let found =
                t.find_type(fevlint_types::model::TypeNamespace::Ordinary, &format!("btf_trace_{}", ap.func)).ok()?;
            found.is_empty().then(|| format!("`btf_trace_{}`", ap.func))
        }
        _ => None,
    }
}

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    // Where the drift baseline has it, D510 says so (naming both kernels) instead.
    let base = cx.baseline.map(|b| BtContext::new(cx.text, cx.parse, Some(b), None));
    for (_, ap) in cx.attach_points() {
        let Some(what) = missing(cx, ap) else { continue };
        if let Some(base) = &base {
            if super::d510_bt_probe_drift::exists_on(base, ap) {
                continue;
            }
        }
        let kind = ap.kind.map_or("", |k| k.name());
        let mut d =
            cx.diagnostic(&RULE, ap.func_span, format!("{kind} target {what} does not exist in {}", f.kernel.name));
        if ap.kind.is_some_and(|k| k.is_kernel_function()) {
            let close: Vec<String> = f.similar_functions(&ap.func).iter().map(|c| format!("`{c}`")).collect();
            if !close.is_empty() {
                d = d.note(format!("help: similar names: {}", close.join(", ")));
            }
        } else if ap.kind == Some(ProbeKind::Tracepoint) {
            let systems = f.event_systems(&ap.func);
            if !systems.is_empty() {
                let fixes: Vec<String> = systems.iter().map(|s| format!("`tracepoint:{s}:{}`", ap.func)).collect();
                d = d.note(format!("help: `{}` is an event of another system: {}", ap.func, fixes.join(", ")));
            } else if let Some(events) = &f.events {
                let mut close: Vec<&String> =
                    events.iter().filter(|e| e.contains(&ap.func) || ap.func.contains(e.as_str())).collect();
                close.sort();
                close.truncate(3);
                if !close.is_empty() {
                    let c: Vec<String> = close.iter().map(|c| format!("`{c}`")).collect();
                    d = d.note(format!("help: events with a similar name: {}", c.join(", ")));
                }
            }
        }
        out.push(module_caveat(f, d, &what));
    }
}
