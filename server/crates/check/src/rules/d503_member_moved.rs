//! D503 member-moved: compares a definition's meaning on the baseline kernel with the target.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::drift::Change;

pub static RULE: Rule = Rule {
    code: "D503",
    name: "member-moved",
    severity: Severity::Error,
    doc: r#"# D503 member-moved

## What it does
Follows each redirect on the baseline kernel to the member it meant (`file->f_op` at
offset 40) and looks that member up on the target: reports members that moved (with
the offset to use, which `fevlint fix` writes) or disappeared.

## Why is this bad?
The offset now lands on another member: the field reads the wrong thing and nothing
fails. This is the drift that breaks scripts silently between kernel versions.

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
    super::report_drift(cx, out, |_, c, base, target| {
        let Change::Member { span, field, old, new_offset, fix } = c else { return None };
        let msg = match new_offset {
            Some(n) => format!(
                "`{}.{}` moved from offset {} to {n} between {base} and {target}",
                old.container, old.member, old.offset
            ),
            None => format!("`{}.{}` (offset {} on {base}) is gone on {target}", old.container, old.member, old.offset),
        };
        let mut d = cx
            .kernel_diagnostic(&RULE, *span, msg)
            .note(format!("field `{field}` meant `{}` ({}) on {base}", old.member, old.ty));
        if let Some(f) = fix {
            d = d.note(if f.replacement.is_empty() {
                "help: remove this offset (`fevlint fix` does it)".to_owned()
            } else {
                format!("help: write `{}` here (`fevlint fix` does it)", f.replacement)
            });
        }
        Some(d)
    });
}
