//! K203 ambiguous-function: several functions share the name.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_kernel::Trace;

pub static RULE: Rule = Rule {
    code: "K203",
    name: "ambiguous-function",
    severity: Severity::Warning,
    doc: r#"# K203 ambiguous-function

## What it does
Reports names shared by several traceable functions (static functions of one name in
different files: `type_show` 17 times on Debian 6.1), or by several type entries with
different prototypes.

## Why is this bad?
`ftrace_set_filter()` matches every function of the name: the event fires for all of
them, and each may take different parameters, so one definition's fields read
different things depending on which function ran.

## Example
```fev
type_show(x64 dev)
```

## Use instead
```fev
vfs_read(x64 file)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(k) = cx.kernel else { return };
    for (_, parsed, r) in cx.resolved() {
        let Some((name, span)) = &parsed.function else { continue };
        let f = &r.function;
        let traced = match f.trace {
            Trace::Traceable { count } => count,
            _ => 0,
        };
        let protos = f.prototypes.len();
        let differ = f.prototypes.windows(2).any(|w| {
            w[0].proto.params.len() != w[1].proto.params.len()
                || w[0].proto.params.iter().zip(&w[1].proto.params).any(|(a, b)| a.name != b.name)
        });
        if traced > 1 {
            let mut d = cx
                .kernel_diagnostic(
                    &RULE,
                    *span,
                    format!("{traced} traceable functions are named `{name}` on {}", k.name),
                )
                .note("the event attaches to all of them");
            if differ {
                d = d.note("their prototypes differ, so a slot reads different parameters depending on which one runs");
            }
            out.push(d);
        } else if protos > 1 && differ {
            out.push(
                cx.kernel_diagnostic(
                    &RULE,
                    *span,
                    format!("{protos} functions named `{name}` have different prototypes on {}", k.name),
                )
                .note("fevlint checks against the first; the traced one may be another"),
            );
        }
    }
}
