//! D504 value-changed: compares a definition's meaning on the baseline kernel with the target.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::drift::Change;

pub static RULE: Rule = Rule {
    code: "D504",
    name: "value-changed",
    severity: Severity::Warning,
    doc: r#"# D504 value-changed

## What it does
Compares the value each field records on the baseline kernel and on the target: its
size and signedness (a parameter that changed type is reported once, by D502).

## Why is this bad?
The same member keeps its name but changes width (a counter grown to 64 bits, an `int`
become `unsigned`): the field truncates or misprints on the newer kernel.

## Example
```fev
napi_complete_done(x64 n | int defer+28[0], int work_done)
```

## Use instead
```fev
napi_complete_done(x64 n, int work_done)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    super::report_drift(cx, out, |_, c, base, target| {
        let Change::Value { span, field, old, new } = c else { return None };
        Some(cx.kernel_diagnostic(&RULE, *span, format!("`{field}` read {old} on {base}, {new} on {target}")))
    });
}
