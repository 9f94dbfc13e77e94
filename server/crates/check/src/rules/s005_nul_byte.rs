//! S005 nul-byte: a NUL byte ends the kernel's view of the write.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_syntax::Span;

pub static RULE: Rule = Rule {
    code: "S005",
    name: "nul-byte",
    severity: Severity::Error,
    doc: r#"# S005 nul-byte

## What it does
Reports NUL bytes in a script.

## Why is this bad?
The kernel handles the written buffer as a C string: it stops at the NUL, the rest of
the line is never parsed, and a first line ending in a NUL makes the whole write fail
as "too long". Usually the file is not a text file at all.

## Example
```fev
f(int a)\0
```

## Use instead
```fev
f(int a)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let mut reported = 0usize;
    for line in cx.lines {
        let Some(at) = line.nul else { continue };
        reported += 1;
        if reported > 20 {
            // A binary file: twenty are enough to make the point.
            break;
        }
        out.push(Diagnostic::new(&RULE, Span::new(at, at + 1), "NUL byte: the kernel stops reading the line here"));
    }
}
