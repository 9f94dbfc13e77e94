//! B601 relocation-fails: a CO-RE relocation of a compiled BPF program resolves on none
//! of the kernels, and nothing guards it.

use super::Rule;
use crate::bpf::{outcome_text, relo_place, BpfContext, BpfFinding};
use crate::diagnostic::Severity;
use fevlint_bpf::Outcome;

pub static RULE: Rule = Rule {
    code: "B601",
    name: "relocation-fails",
    severity: Severity::Error,
    doc: r#"# B601 relocation-fails

## What it does
Resolves every CO-RE relocation of a compiled BPF object (`.BTF.ext`) against each kernel
exactly as libbpf does at load time (candidates by essential name, the access walked
through anonymous members and arrays, compatibility, ambiguity), and reports one that
resolves on none of the kernels and whose instruction the verifier reaches (no
existence check makes it dead code there; see B602). It names the member or type the kernel lacks, at the `.bpf.c` line and column of
the object's line info.

## Why is this bad?
libbpf replaces the instruction with an invalid call ("poisons" it); the verifier then
rejects the whole program (`invalid func unknown#195896080`) as soon as that instruction
is reachable. The program does not load on that kernel.

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
            if cx.guarded(k, i)
                || cx.kernels.iter().any(|o| o.resolutions.get(i).is_some_and(|x| x.outcome.value().is_some()))
            {
                continue;
            }
            let mut f = cx.relocation_finding(
                &RULE,
                Some(pk.kernel),
                r,
                format!("`{}` does not resolve on {}: {reason}", r.subject(), pk.kernel.name),
            );
            f.program = r.program.clone();
            f.diagnostic = f
                .diagnostic
                .note(format!("libbpf poisons {}: the verifier rejects the program if it is reached", relo_place(r)))
                .note(format!("{} {}: {}", r.kind, r.access, outcome_text(r)))
                .note("help: guard the access with `bpf_core_field_exists()` (or `bpf_core_type_exists()`), and read what this kernel has through a `___flavour` type");
            out.push(f);
        }
    }
}
