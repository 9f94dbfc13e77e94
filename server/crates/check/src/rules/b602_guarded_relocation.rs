//! B602 guarded-relocation: a CO-RE relocation that does not resolve on a kernel, behind
//! an existence check of the same access.

use super::Rule;
use crate::bpf::{relo_place, BpfContext, BpfFinding};
use crate::diagnostic::Severity;
use fevlint_bpf::Outcome;

pub static RULE: Rule = Rule {
    code: "B602",
    name: "guarded-relocation",
    severity: Severity::Info,
    doc: r#"# B602 guarded-relocation

## What it does
Notes a CO-RE relocation that does not resolve on a kernel but is guarded: once libbpf
has patched the program's existence checks (`bpf_core_field_exists()`,
`bpf_core_type_exists()`, `bpf_core_enum_value_exists()`) with that kernel's answers,
the poisoned instruction is unreachable (fevlint walks the program with the constants
the verifier knows and follows only the branches they decide), so the verifier never
visits it and the program loads. A `const volatile` global the object holds in `.rodata`
guards the same way (libbpf freezes that map and the verifier reads it as a constant:
`if (never)` with `never` 0); a note then says that a loader setting it otherwise before
loading reaches the instruction.

## Why is this bad?
It is not: this is how a program supports several kernels. It is shown so that the
branch taken on each kernel is visible.

## Example
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct___old { long state; } __attribute__((preserve_access_index));
long out;

SEC("kprobe/vfs_read")
int probe(void *ctx)
{
	struct task_struct___old *t = (void *)bpf_get_current_task();
	if (bpf_core_field_exists(t->state))
		out = BPF_CORE_READ(t, state);
	return 0;
}
```

## Use instead
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

long out;

SEC("kprobe/vfs_read")
int probe(void *ctx)
{
	struct task_struct *t = (void *)bpf_get_current_task();
	out = BPF_CORE_READ(t, __state);
	return 0;
}
```
"#,
    check: super::no_script_check,
};

pub(crate) fn check(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    for (k, pk) in cx.kernels.iter().enumerate() {
        for (i, r) in pk.resolutions.iter().enumerate() {
            let Outcome::Poisoned { reason } = &r.outcome else { continue };
            if !cx.guarded(k, i) || cx.never_loaded(r) {
                continue;
            }
            let read_only = cx.guarded_by_read_only(k, i);
            let guard = match read_only {
                true => "a read-only global's value in the object guards it",
                false => "an existence check guards it",
            };
            let mut f = cx.relocation_finding(
                &RULE,
                Some(pk.kernel),
                r,
                format!("`{}` does not resolve on {}; {guard}", r.subject(), pk.kernel.name),
            );
            f.program = r.program.clone();
            f.diagnostic = f.diagnostic.note(reason.clone()).note(format!("{} is dead code there", relo_place(r)));
            if read_only {
                f.diagnostic = f.diagnostic.note(
                    "dead through a read-only global's value in the object (a `const volatile` in `.rodata`, which \
                     the verifier reads as a constant): a loader that sets it otherwise before loading reaches it",
                );
            }
            out.push(f);
        }
    }
}
