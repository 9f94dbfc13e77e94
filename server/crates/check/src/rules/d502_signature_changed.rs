//! D502 signature-changed: compares a definition's meaning on the baseline kernel with the target.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::drift::Change;

pub static RULE: Rule = Rule {
    code: "D502",
    name: "signature-changed",
    severity: Severity::Error,
    doc: r#"# D502 signature-changed

## What it does
For every slot a definition reads, compares the parameter on the baseline kernel with the
target's: name, C type, size and register. Also reports a slot whose parameter is gone.

## Why is this bad?
Slots are positions, not names: when a parameter is added, removed or reordered, the
same slot reads a different value and the event keeps printing numbers that look fine.

## Example
```fev
__cancel_work(x64 work, u32 is_dwork)
```

## Use instead
```fev
__cancel_work(x64 work)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    super::report_drift(cx, out, |_, c, base, target| {
        let Change::Param { span, old, new } = c else { return None };
        // A slot is a register: it may hold part of a by-value struct (`bytes 8-15`).
        let part = |p: &crate::meaning::ParamMeaning| p.part.as_ref().map(|b| format!(", {b}")).unwrap_or_default();
        let was = format!("`{}` ({}, {}{})", old.name.as_deref().unwrap_or("?"), old.ty, old.location, part(old));
        let msg = match new {
            Some(n) => format!(
                "slot {} was {was} on {base}; on {target} it is `{}` ({}, {}{})",
                old.slot,
                n.name.as_deref().unwrap_or("?"),
                n.ty,
                n.location,
                part(n)
            ),
            None => format!("slot {} was {was} on {base}; on {target} the function has no such parameter", old.slot),
        };
        Some(cx.kernel_diagnostic(&RULE, *span, msg))
    });
}
