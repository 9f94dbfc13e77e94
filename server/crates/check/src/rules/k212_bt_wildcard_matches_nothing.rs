//! K212 wildcard-matches-nothing: a probe wildcard that no kernel name matches.

use super::Rule;
use crate::bpftrace_facts::BtContext;
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::ProbeKind;

pub static RULE: Rule = Rule {
    code: "K212",
    name: "wildcard-matches-nothing",
    severity: Severity::Error,
    doc: r#"# K212 wildcard-matches-nothing

## What it does
Expands a `kprobe:`/`kfunc:` wildcard over the kernel's traceable functions (bpftrace
0.17 expands over `available_filter_functions`) and a `tracepoint:` wildcard over its
trace events, and reports a pattern that matches nothing.

## Why is this bad?
bpftrace refuses the probe (`No probes to attach`): the functions the pattern was
written for were renamed or removed.

## Example
```bt
kprobe:ext3_* { @[func] = count(); }
```

## Use instead
```bt
kprobe:vfs_* { @[func] = count(); }
```
"#,
    check: super::no_script_check,
};

/// The names an attach point's wildcard matches on the kernel, `None` when the kernel
/// data cannot tell (or it is not a kernel wildcard).
pub fn matches(cx: &BtContext<'_>, ap: &fevlint_bpftrace::AttachPoint) -> Option<Vec<String>> {
    let f = cx.facts()?;
    if !ap.wildcard || ap.func.contains('$') || ap.target.contains('$') {
        return None;
    }
    match ap.kind? {
        k if k.is_kernel_function() => {
            if k.is_btf_function() && !ap.target.is_empty() && ap.target != "vmlinux" && ap.target != "*" {
                return None;
            }
            f.functions_matching(&ap.func)
        }
        ProbeKind::Tracepoint => f.events_matching(&ap.target, &ap.func),
        _ => None,
    }
}

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    for (_, ap) in cx.attach_points() {
        let Some(m) = matches(cx, ap) else { continue };
        if m.is_empty() {
            let d = cx.diagnostic(&RULE, ap.func_span, format!("`{}` matches nothing in {}", ap.raw, f.kernel.name));
            out.push(crate::bpftrace_facts::module_caveat(f, d, &format!("`{}`", ap.func)));
        }
    }
}
