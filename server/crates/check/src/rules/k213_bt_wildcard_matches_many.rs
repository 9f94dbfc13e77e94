//! K213 wildcard-matches-many: a probe wildcard that matches more than bpftrace attaches.

use super::Rule;
use crate::bpftrace_facts::BtContext;
use crate::diagnostic::{Diagnostic, Severity};

/// bpftrace 0.17's default `BPFTRACE_MAX_PROBES`.
const MAX_PROBES: usize = 512;

pub static RULE: Rule = Rule {
    code: "K213",
    name: "wildcard-matches-many",
    severity: Severity::Info,
    doc: r#"# K213 wildcard-matches-many

## What it does
Counts what a probe wildcard matches on the kernel and says so when it is more than
bpftrace 0.17 attaches by default (`BPFTRACE_MAX_PROBES`, 512).

## Why is this bad?
bpftrace refuses with `Can't attach to N probes because it exceeds the current limit`
(unless raised), and thousands of probes slow the traced kernel.

## Example
```bt
kprobe:* { @[func] = count(); }
```

## Use instead
```bt
kprobe:tcp_* { @[func] = count(); }
```
"#,
    check: super::no_script_check,
};

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    for (_, ap) in cx.attach_points() {
        let Some(m) = super::k212_bt_wildcard_matches_nothing::matches(cx, ap) else { continue };
        if m.len() > MAX_PROBES {
            out.push(
                cx.diagnostic(
                    &RULE,
                    ap.func_span,
                    format!("`{}` matches {} probes in {}", ap.raw, m.len(), f.kernel.name),
                )
                .note(format!("bpftrace 0.17 attaches at most BPFTRACE_MAX_PROBES ({MAX_PROBES} by default)")),
            );
        }
    }
}
