//! T401 size-mismatch.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T401",
    name: "size-mismatch",
    severity: Severity::Warning,
    doc: r#"# T401 size-mismatch

## What it does
Compares the size of each field's type with the size of the value it reads (what the
slot's register holds: a parameter, or the member of a by-value struct in that register;
or the member a redirect reaches), and the signedness. At an offset where a union holds
several members, the read matches one of its size and (for decimal types) signedness
(`sk_buff` +32: `u64` reads `skb_mstamp_ns`, `s64` reads `tstamp`); a read that covers a
named member whole (`x32` on an `atomic_t`) reads that member.

## Why is this bad?
A smaller field keeps only the low bytes (a pointer or `loff_t` cut to 32 bits); a
larger one reads past the value into the next member; a signed/unsigned mismatch
prints huge numbers for small negative ones.

## Example
```fev
vfs_read(x64 file, x64 buf, u32 count)
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
        Problem::SizeMismatch { span, expr, ty, value_size, field_size, detail } => Some(
            cx.kernel_diagnostic(
                &RULE,
                *span,
                format!("{} {field_size}-byte field {detail}", if *field_size == 8 { "an" } else { "a" }),
            )
            .note(format!("`{expr}` is `{ty}` ({value_size} byte{})", if *value_size == 1 { "" } else { "s" }))
            .note(match suggest(*value_size, detail.contains("is signed")) {
                Some(t) => format!("help: use `{t}`"),
                None => "help: read a member of it instead".to_owned(),
            }),
        ),
        _ => None,
    }
}

/// A field type of that size and signedness.
fn suggest(size: u64, signed: bool) -> Option<&'static str> {
    Some(match (size, signed) {
        (1, false) => "u8",
        (2, false) => "u16",
        (4, false) => "u32",
        (8, false) => "u64",
        (1, true) => "s8",
        (2, true) => "s16",
        (4, true) => "s32",
        (8, true) => "s64",
        _ => return None,
    })
}
