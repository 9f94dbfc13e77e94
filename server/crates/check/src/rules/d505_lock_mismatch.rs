//! D505 lock-mismatch: the meaning recorded in the lock differs from the target's.

use super::{Baseline, Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::drift::Change;

pub static RULE: Rule = Rule {
    code: "D505",
    name: "lock-mismatch",
    severity: Severity::Error,
    doc: r#"# D505 lock-mismatch

## What it does
`fevlint lock --kernel A scripts/` records in `fevlint.lock` what each definition means
on A: the function's parameters at the used slots, the member each redirect reaches, the
value each field records, and a hash of the event's format. `fevlint check --lock
fevlint.lock --kernel B` then needs only the lock and B to report every definition
whose meaning differs on B.

## Why is this bad?
The definition still parses and attaches, but reads something else than when the lock
was written: a tool fetched from a third party prints bogus values on your kernel.

## Example
```fev
vfs_read(symbol read+40[0]+16[0])
```

## Use instead
```fev
vfs_open(x64 dentry+8[0])
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(Baseline::Lock { .. }) = cx.baseline else { return };
    let (base, target) = super::drift_names(cx);
    for (_, parsed, changes) in cx.drift() {
        let Some((name, span)) = &parsed.function else { continue };
        let mut d = cx.kernel_diagnostic(
            &RULE,
            *span,
            format!("`{name}` means something else on {target} than in the lock ({base})"),
        );
        for c in changes {
            d = d.note(match c {
                Change::FunctionGone { renames, .. } if renames.is_empty() => "the function is gone".to_owned(),
                Change::FunctionGone { renames, .. } => {
                    format!("the function is gone; candidates: {}", renames.join(", "))
                }
                Change::Param { old, new: Some(n), .. } => format!(
                    "slot {}: `{}` ({}, {}) is now `{}` ({}, {})",
                    old.slot,
                    old.name.as_deref().unwrap_or("?"),
                    old.ty,
                    old.location,
                    n.name.as_deref().unwrap_or("?"),
                    n.ty,
                    n.location
                ),
                Change::Param { old, new: None, .. } => {
                    format!("slot {}: parameter `{}` is gone", old.slot, old.name.as_deref().unwrap_or("?"))
                }
                Change::Member { old, new_offset: Some(n), field, .. } => {
                    format!("`{field}`: `{}.{}` moved from offset {} to {n}", old.container, old.member, old.offset)
                }
                Change::Member { old, new_offset: None, field, .. } => {
                    format!("`{field}`: `{}.{}` is gone", old.container, old.member)
                }
                Change::Value { field, old, new, .. } => format!("`{field}`: value was {old}, now {new}"),
            });
        }
        out.push(d.note("help: `fevlint fix --lock fevlint.lock --kernel <target>` rewrites the offsets it can"));
    }
}
