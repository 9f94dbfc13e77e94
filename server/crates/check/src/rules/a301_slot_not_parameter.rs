//! A301 slot-not-parameter: slot k's register does not carry parameter k.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "A301",
    name: "slot-not-parameter",
    severity: Severity::Error,
    doc: r#"# A301 slot-not-parameter

## What it does
A slot is a register: slot k reads argument register k (x86_64 `rdi rsi rdx rcx r8 r9`,
x86_32 `eax edx ecx`). fevlint places every parameter under the kernel's ABI (x86_64
SysV without SSE: scalars one register each, a struct of 9 to 16 bytes by value two
consecutive registers, a larger one the stack; x86_32 `-mregparm=3`: scalars and
structs of up to 12 bytes take as many consecutive registers as they have words while
enough are left, a 64-bit value a register pair, the rest and everything of a variadic
function the stack) and reports a field that reads the raw register, is *named like a
parameter*, and whose register does not hold that parameter (it holds another one, part
of one, or nothing). A field named otherwise, or with redirects (`s64 pos+104[0]` names
what it reaches), reads whatever its register holds (hover and inlay hints say what) and
is checked as that; such a field on a register that holds nothing is A302.

## Why is this bad?
The kernel does not check. After a struct passed by value, or a 64-bit value on x86_32,
parameter k is no longer in register k: the field records another parameter, or half
of one, under the name of the parameter it meant.

## Example
```fev
__sys_bpf(int cmd, x64 uattr, u32 size)
```

## Use instead
```fev
__sys_bpf(int cmd, x64 uattr, NULL, u32 size)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, _, r) in cx.resolved() {
        for m in &r.fields {
            for p in &m.problems {
                let Problem::SlotNotParameter { span, slot, register, param, loc, why, holds } = p else { continue };
                let mut d = cx
                    .kernel_diagnostic(
                        &RULE,
                        *span,
                        format!("slot {slot} reads `{register}`, but parameter `{param}` is in {loc}"),
                    )
                    .note(match holds {
                        Some(h) => format!("`{register}` holds `{h}` at the function's entry, not `{param}`"),
                        None => format!("`{register}` holds no parameter at the function's entry"),
                    })
                    .note("help: move the field to the slot of the parameter's register, or rename it");
                if !why.is_empty() {
                    d = d.note(why.clone());
                }
                if let Some(proto) = r.proto() {
                    d = d.note(format!("prototype: {}", signature(cx, proto)));
                }
                out.push(d);
            }
        }
    }
}

pub(super) fn signature(cx: &Context<'_>, f: &fevlint_types::model::FunctionInfo) -> String {
    cx.kernel
        .and_then(|k| k.types())
        .and_then(|src| fevlint_types::layout::pahole_prototype(src, f).ok())
        .unwrap_or_else(|| f.name.clone())
}
