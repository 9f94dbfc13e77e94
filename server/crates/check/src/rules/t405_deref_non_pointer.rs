//! T405 deref-non-pointer.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T405",
    name: "deref-non-pointer",
    severity: Severity::Error,
    doc: r#"# T405 deref-non-pointer

## What it does
Checks that every `[n]` that makes the kernel follow a pointer reads a pointer: a pointer
member (indexing an array member inside a struct is fine) or a pointer parameter, that
array and string fields, which read a pointer before copying, do not land on an inline
array, and that an array field does not copy from a number (`x8[4] nr` on an `int`). At an offset where a union holds several members, the read is fine when
one of them is a pointer; the step names the member it matched.

Two kinds of integer are read through without a report, deliberately: an `unsigned
long` saved in `struct pt_regs` (`regs->si` is a syscall argument, often a user
pointer), and a pointer-sized integer parameter of a syscall wrapper
(`__se_sys_openat(long dfd, long filename, …)` takes every argument as a `long`).

## Why is this bad?
The kernel reads the value as an address and follows it: the field records whatever
that bogus address holds, usually 0 after a fault. An `int` parameter such as
`find_pid_ns(int nr, …)` dereferenced with `nr[0]` reads memory at the number's value.

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
        Problem::DerefNonPointer { span, expr, ty, array, others } => {
            let mut d = cx.kernel_diagnostic(
                &RULE,
                *span,
                format!("`{expr}` is `{ty}`, not a pointer, but it is dereferenced"),
            );
            if !others.is_empty() {
                d = d.note(format!("no member at this offset is a pointer: also {}", others.join(", ")));
            }
            if *array {
                d = d.note("help: an inline array is already at this address: drop the `[n]` and use `+N` to reach it");
            }
            Some(d)
        }
        _ => None,
    }
}
