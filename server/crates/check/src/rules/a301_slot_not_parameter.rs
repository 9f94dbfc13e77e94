//! A301 slot-not-parameter: slot k's register does not carry parameter k.

use super::resolve::Problem;
use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "A301",
    name: "slot-not-parameter",
    severity: Severity::Error,
    doc: r#"# A301 slot-not-parameter

## What it does
Places every parameter of the function under the kernel's ABI (x86_64 SysV: integer
registers `rdi rsi rdx rcx r8 r9`, structs by value split into eightbytes or passed in
memory; x86_32 `-mregparm=3`: `eax edx ecx`, 64-bit values in register pairs, nothing
in registers for variadic functions) and compares with what the event reads: slot k is
always the raw register k.

## Why is this bad?
The kernel does not check. When parameter k is not in register k (a 64-bit value on
x86_32, a struct passed by value, a parameter pushed to the stack), slot k records
whatever that register holds: half a value, or another parameter.

## Example
```fev
__sys_bpf(int cmd, x64 uattr, u32 size)
```

## Use instead
```fev
__sys_bpf(int cmd, x64 uattr)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, _, r) in cx.resolved() {
        for m in &r.fields {
            for p in &m.problems {
                let Problem::SlotNotParameter { span, slot, register, param, loc, why } = p else { continue };
                let mut d = cx
                    .kernel_diagnostic(
                        &RULE,
                        *span,
                        format!("slot {slot} reads `{register}`, but parameter {slot} (`{param}`) is in {loc}"),
                    )
                    .note(format!("`{register}` does not hold `{param}` at the function's entry"));
                if !why.is_empty() {
                    d = d.note(why.clone());
                }
                if let Some(proto) = &r.proto {
                    d = d.note(format!("prototype: {}", signature(cx, proto)));
                }
                out.push(d);
            }
        }
    }
}

pub(super) fn signature(cx: &Context<'_>, f: &crate::kernel::model::FunctionInfo) -> String {
    cx.kernel
        .and_then(|k| k.types())
        .and_then(|src| crate::kernel::layout::pahole_prototype(src, f).ok())
        .unwrap_or_else(|| f.name.clone())
}
