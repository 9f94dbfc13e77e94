//! T404 offset-not-member.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T404",
    name: "offset-not-member",
    severity: Severity::Error,
    doc: r#"# T404 offset-not-member

## What it does
Follows each `+N` and `[n]` through the struct layout of the kernel and reports offsets
that land in padding, inside a member, or past the end of the struct.

## Why is this bad?
The kernel reads whatever bytes are there: part of a member, padding, or the next
object. This is the typical silent breakage when a struct's layout changes between
kernels.

## Example
```fev
vfs_read(u32 mode+14[0])
```

## Use instead
```fev
vfs_read(u32 mode+12[0])
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    out.extend(cx.problems().filter_map(|(_, p)| diagnostic(cx, p)));
}

fn diagnostic(cx: &Context<'_>, p: &Problem) -> Option<Diagnostic> {
    match p {
        Problem::OffsetNotMember { span, container, offset, what, nearby } => {
            let mut d = cx.kernel_diagnostic(&RULE, *span, format!("offset {offset} of `{container}` is {what}"));
            if !nearby.is_empty() {
                d = d.note(format!("nearest members: {}", nearby.join(", ")));
            }
            Some(d)
        }
        _ => None,
    }
}
