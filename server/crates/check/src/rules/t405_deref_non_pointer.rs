//! T405 deref-non-pointer.

use super::resolve::Problem;
use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "T405",
    name: "deref-non-pointer",
    severity: Severity::Error,
    doc: r#"# T405 deref-non-pointer

## What it does
Checks that every `[n]` that makes the kernel follow a pointer reads a pointer member
(indexing an array member inside a struct is fine), and that array and string fields,
which read a pointer before copying, do not land on an inline array.

## Why is this bad?
The kernel reads the member's bytes as an address and follows it: the field records
whatever that bogus address holds, usually 0 after a fault.

## Example
```fev
vfs_read(u64 ino+40[0]+64[0][0])
```

## Use instead
```fev
vfs_read(u64 ino+40[0]+64[0])
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    out.extend(cx.problems().filter_map(|(_, p)| diagnostic(cx, p)));
}

fn diagnostic(cx: &Context<'_>, p: &Problem) -> Option<Diagnostic> {
    match p {
        Problem::DerefNonPointer { span, expr, ty, array } => {
            let mut d = cx.kernel_diagnostic(
                &RULE,
                *span,
                format!("`{expr}` is `{ty}`, not a pointer, but it is dereferenced"),
            );
            if *array {
                d = d.note("help: an inline array is already at this address: drop the `[n]` and use `+N` to reach it");
            }
            Some(d)
        }
        _ => None,
    }
}
