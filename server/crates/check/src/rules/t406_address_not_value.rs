//! T406 address-not-value.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T406",
    name: "address-not-value",
    severity: Severity::Warning,
    doc: r#"# T406 address-not-value

## What it does
Finds scalar fields whose last step is an addition: `+N` after the last `[ ]` (added to
the value read) or a parameter plus an offset with no `[ ]` at all.

## Why is this bad?
The field records an address, not the value at that address. The documented
`__vfs_read(symbol read+40[0]+16)` records `&file->f_op->read`, not the function
`file->f_op->read`: that needs `read+40[0]+16[0]`.

## Example
```fev
vfs_read(symbol llseek+16[0]+16)
```

## Use instead
```fev
vfs_read(symbol llseek+16[0]+16[0])
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    out.extend(cx.problems().filter_map(|(_, p)| diagnostic(cx, p)));
}

fn diagnostic(cx: &Context<'_>, p: &Problem) -> Option<Diagnostic> {
    match p {
        Problem::AddressNotValue { span, expr, member } => {
            let mut d =
                cx.kernel_diagnostic(&RULE, *span, format!("this records the address `&{expr}`, not its value"));
            if member.is_some() {
                d = d.note(format!("help: add `[0]` to read `{expr}`"));
            }
            Some(d)
        }
        _ => None,
    }
}
