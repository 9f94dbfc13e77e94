//! K202 not-traceable: the function exists but ftrace cannot attach to it.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_kernel::Trace;

pub static RULE: Rule = Rule {
    code: "K202",
    name: "not-traceable",
    severity: Severity::Error,
    doc: r#"# K202 not-traceable

## What it does
Decides traceability from the kernel's real ftrace data (`available_filter_functions`,
or the `__mcount_loc` table of a vmlinux with symbols), not from BTF: thousands of
BTF functions have no ftrace call site (`notrace`, `noinstr`, `__init`, code built
without `-pg`), and some functions are only traceable as a compiler clone.

## Why is this bad?
`ftrace_set_filter()` refuses the function and the write fails. A clone such as
`finish_task_switch.isra.0` cannot be named in a definition: the parser splits names
at `.`.

## Example
```fev
__bitmap_and(x64 dst)
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
        if !f.exists() {
            continue;
        }
        let source = f.trace_from.as_deref().unwrap_or_default();
        match &f.trace {
            Trace::NotTraceable => out.push(
                cx.kernel_diagnostic(&RULE, *span, format!("ftrace cannot attach to `{name}` on {}", k.name))
                    .note(format!("it is not in the ftrace call-site list: decided by {source}"))
                    .note("functions without a call site are notrace/noinstr, __init (gone after boot), inlined everywhere, or built without -pg"),
            ),
            Trace::OnlyClones(clones) => out.push(
                cx.kernel_diagnostic(&RULE, *span, format!("only compiler clones of `{name}` are traceable on {}", k.name))
                    .note(format!("traceable: {}", clones.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")))
                    .note("a definition cannot name a clone: the parser splits names at `.`; trace a caller or callee instead")
                    .note(format!("decided by {source}")),
            ),
            Trace::Traceable { .. } | Trace::Unknown => {}
        }
    }
}
