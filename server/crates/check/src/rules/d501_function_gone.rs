//! D501 function-gone: compares a definition's meaning on the baseline kernel with the target.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::drift::Change;

pub static RULE: Rule = Rule {
    code: "D501",
    name: "function-gone",
    severity: Severity::Error,
    doc: r#"# D501 function-gone

## What it does
With several kernels (`--kernel A --kernel B`), compares each definition on the first
(baseline) kernel with the others: reports functions that exist on the baseline and
not on a target, with the names that replaced them there (`kmalloc` → `kmalloc_noprof`).

## Why is this bad?
The script stops working on the newer kernel: the write fails, and the tool built on it
silently gets no events.

## Example
```fev
kmalloc_trace(x64 s, x32 flags, u64 size)
```

## Use instead
```fev
vfs_read(x64 file)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    super::report_drift(cx, out, |parsed, c, base, target| {
        let Change::FunctionGone { span, renames } = c else { return None };
        let name = parsed.function.as_ref().map_or("", |(n, _)| n.as_str());
        let d = cx.kernel_diagnostic(&RULE, *span, format!("`{name}` exists on {base} but not on {target}"));
        Some(if renames.is_empty() {
            d.note("no obvious replacement found: search with `fevlint kernel fn`")
        } else {
            d.note(format!(
                "help: on {target}: {}",
                renames.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
            ))
        })
    });
}
