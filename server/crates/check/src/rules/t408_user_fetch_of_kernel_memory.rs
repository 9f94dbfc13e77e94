//! T408 user-fetch-of-kernel-memory: a `+u…(…)` or `:ustring` of memory that is the
//! kernel's (the kernel stack, saved registers, kernel data) in a `*.dynevents` line.

use super::Rule;
use crate::diagnostic::Severity;

pub static RULE: Rule = Rule {
    code: "T408",
    name: "user-fetch-of-kernel-memory",
    severity: Severity::Warning,
    doc: r#"# T408 user-fetch-of-kernel-memory

## What it does
In the mainline dialect (`*.dynevents`), finds user fetches (`+u<offset>(…)`, `:ustring`)
whose address is certainly kernel memory: the kernel stack (`$stack`, `%sp`), a
`struct pt_regs` (a syscall wrapper's `regs`: the saved registers live on the kernel
stack), a kernel symbol (`@jiffies`) or a kernel address.

## Why is this bad?
The user accessors refuse kernel addresses: the real Debian 6.12 records `0` for
`+u0x68(%di)` on `__x64_sys_openat` (where `+0x68(%di)` records the filename pointer)
and `(fault)` for a `:ustring` of the kernel stack. The reverse mistake is harmless on
x86: a kernel fetch of a user address (`+0(%si):string` on `do_sys_openat2`) goes
through the user accessors by itself (`CONFIG_ARCH_HAS_NON_OVERLAPPING_ADDRESS_SPACE`),
so only this direction is reported.

## Example
```dynevents
p:sys/open __x64_sys_openat filename=+u0x68(%di):x64
```

## Use instead
```dynevents
p:sys/open __x64_sys_openat filename=+0x68(%di):x64 path=+u0(+0x68(%di)):string
```
"#,
    check: super::no_script_check,
};
