//! A302 slot-beyond-parameters: a slot past the function's last parameter.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "A302",
    name: "slot-beyond-parameters",
    severity: Severity::Error,
    doc: r#"# A302 slot-beyond-parameters

## What it does
Reports fields whose slot's register holds no parameter at the function's entry: the
slot is past the registers the parameters take, or the parameters it would hold went to
the stack (variadic functions excepted). A field named after a parameter that is
elsewhere is A301 instead. A slot is a register, so
`tnum_is_aligned(NULL, NULL, size_t size)` is fine on x86_64: `struct tnum a` fills
`rdi:rsi` and `size` is in `rdx`.

## Why is this bad?
The register still exists, so the kernel records whatever the caller left in it: a
stale value that looks plausible and changes from call to call.

## Example
```fev
__x64_sys_openat(x64 regs, x64 oops)
```

## Use instead
```fev
__x64_sys_openat(x64 regs)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, _, r) in cx.resolved() {
        for m in &r.fields {
            for p in &m.problems {
                let Problem::SlotBeyondParameters { span, slot, register, params, placed, named } = p else {
                    continue;
                };
                if *params == usize::MAX {
                    continue; // variadic: the register may hold a variadic argument
                }
                let name = &r.function.name;
                let mut d = cx.kernel_diagnostic(
                    &RULE,
                    *span,
                    format!(
                        "`{name}` takes {params} parameter{}, none in `{register}`: slot {slot} records a stale register",
                        if *params == 1 { "" } else { "s" }
                    ),
                );
                if !placed.is_empty() {
                    d = d.note(format!("at the function's entry: {placed}"));
                }
                if let Some(n) = named {
                    d = d.note(format!("help: {n}"));
                }
                if let Some(proto) = r.proto() {
                    d = d.note(format!("prototype: {}", super::a301_slot_not_parameter::signature(cx, proto)));
                }
                out.push(d.note("help: remove the field, or read the value through a pointer parameter"));
            }
        }
    }
}
