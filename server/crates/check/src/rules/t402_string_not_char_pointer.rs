//! T402 string-not-char-pointer.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T402",
    name: "string-not-char-pointer",
    severity: Severity::Error,
    doc: r#"# T402 string-not-char-pointer

## What it does
Checks that `string` and `char[N]` fields read from a `char *` (or `void *`, `const`
or not) or a `char[]` member. At an offset where a union holds several members, the
read is fine when one of them is a `char *` (`inode` +584 on 6.1: `i_pipe`, `i_cdev`,
`i_link`: a string matches `i_link`); the message names the member it judged.

## Why is this bad?
`string` copies bytes up to a NUL from the address it computes: from anything else it
prints garbage (or nothing), and from a pointer to a struct it leaks raw memory.

## Example
```fev
vfs_read(string file)
```

## Use instead
```fev
vfs_read(x64 file)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    out.extend(cx.problems().filter_map(|(f, p)| diagnostic(cx, p, &f.type_string())));
}

fn diagnostic(cx: &Context<'_>, p: &Problem, field_type: &str) -> Option<Diagnostic> {
    match p {
        Problem::StringNotChar { span, expr, ty, others } => {
            let mut d = cx
                .kernel_diagnostic(
                    &RULE,
                    *span,
                    format!("`{}` reads a string from `{expr}`, which is `{ty}`", field_type),
                )
                .note("strings are copied from a `char *` value or a `char[]` member");
            if !others.is_empty() {
                d = d.note(format!("no member at this offset is one: also {}", others.join(", ")));
            }
            Some(d.note("help: follow the pointer to a `char *` member first, or record the value with `x64`"))
        }
        _ => None,
    }
}
