//! T403 symbol-not-pointer.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T403",
    name: "symbol-not-pointer",
    severity: Severity::Warning,
    doc: r#"# T403 symbol-not-pointer

## What it does
Checks that `symbol` fields read a pointer (or an `unsigned long` address).

## Why is this bad?
`symbol` prints with `%pS`, resolving the value as a kernel address: an integer is shown
as a meaningless `0x…` or, worse, as the name of whatever symbol happens to be there.

## Example
```fev
vfs_read(x64 file, x64 buf, symbol count)
```

## Use instead
```fev
vfs_read(x64 file, x64 buf, u64 count)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    out.extend(cx.problems().filter_map(|(_, p)| diagnostic(cx, p)));
}

fn diagnostic(cx: &Context<'_>, p: &Problem) -> Option<Diagnostic> {
    match p {
        Problem::SymbolNotPointer { span, expr, ty } => Some(
            cx.kernel_diagnostic(
                &RULE,
                *span,
                format!("`symbol` prints `{expr}` as a kernel address, but it is `{ty}`"),
            )
            .note("help: use an integer type (`u64`, `x64`) for non-pointers"),
        ),
        _ => None,
    }
}
