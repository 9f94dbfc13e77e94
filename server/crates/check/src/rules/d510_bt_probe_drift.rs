//! D510 bt-drift: a probe target, `args` field or member that the baseline kernel has and
//! this kernel does not.

use super::Rule;
use crate::bpftrace_facts::BtContext;
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "D510",
    name: "bt-drift",
    severity: Severity::Error,
    doc: r#"# D510 bt-drift

## What it does
With several kernels, the first is the baseline: for each probe target (function,
tracepoint) and each member a cast reaches that exists on the baseline but not on a later
kernel, names both kernels and, where the later kernel has a close name, proposes it.

## Why is this bad?
The script worked where it was written and breaks on the kernel it now runs on, as
bpftrace's own tools broke when `blk_account_io_start` went away in 6.3.

## Example
```bt
kprobe:__alloc_pages { @ = count(); }
```

## Use instead
```bt
kprobe:__alloc_pages_noprof { @ = count(); }
```
"#,
    check: super::no_script_check,
};

/// Whether the baseline settles that the attach point's target exists there.
pub fn exists_on(base: &BtContext<'_>, ap: &fevlint_bpftrace::AttachPoint) -> bool {
    if super::k210_bt_probe_missing::missing(base, ap).is_some() {
        return false;
    }
    let Some(bf) = base.facts() else { return false };
    match ap.kind {
        Some(k) if k.is_kernel_function() => bf.function(&ap.func).is_some_and(|f| f.exists()),
        Some(fevlint_bpftrace::ProbeKind::Tracepoint) => bf.event_exists(&ap.target, &ap.func) == Some(true),
        Some(fevlint_bpftrace::ProbeKind::RawTracepoint) => true,
        _ => false,
    }
}

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let (Some(k), Some(b)) = (cx.kernel, cx.baseline) else { return };
    let base = BtContext::new(cx.text, cx.parse, Some(b), None);
    for (_, ap) in cx.attach_points() {
        let Some(what) = super::k210_bt_probe_missing::missing(cx, ap) else { continue };
        if !exists_on(&base, ap) {
            continue;
        }
        let mut d = cx.diagnostic(&RULE, ap.func_span, format!("{what} exists on {} but not on {}", b.name, k.name));
        if ap.kind.is_some_and(|k| k.is_kernel_function()) {
            let renamed = [format!("{}_noprof", ap.func), format!("__{}", ap.func)];
            let f = cx.facts();
            if let Some(r) = renamed.iter().find(|r| f.and_then(|f| f.function(r)).is_some_and(|x| x.exists())) {
                d = d.note(format!("help: on {}: `{r}`", k.name));
            } else {
                let close: Vec<String> = match f {
                    Some(f) => f.similar_functions(&ap.func).iter().map(|c| format!("`{c}`")).collect(),
                    None => k.similar_functions(&ap.func, 3).iter().map(|c| format!("`{c}`")).collect(),
                };
                if !close.is_empty() {
                    d = d.note(format!("help: similar names on {}: {}", k.name, close.join(", ")));
                }
            }
        }
        out.push(d);
    }
    let known_before: std::collections::HashSet<(String, usize)> = super::t411_bt_unknown_member::member_uses(&base)
        .into_iter()
        .filter(|u| u.3)
        .map(|(_, m, s, _)| (m, s.start))
        .collect();
    for (ty, field, span) in super::t411_bt_unknown_member::unknown_members(cx) {
        if !known_before.contains(&(field.clone(), span.start)) {
            continue;
        }
        out.push(cx.diagnostic(
            &RULE,
            span,
            format!("`{ty}` has member `{field}` on {} but not on {}", b.name, k.name),
        ));
    }
}
