//! B604 relocation-drift: a CO-RE relocation resolves on one kernel and not on another.

use super::Rule;
use crate::bpf::{outcome_text, relo_place, BpfContext, BpfFinding};
use crate::diagnostic::Severity;
use fevlint_bpf::Outcome;

pub static RULE: Rule = Rule {
    code: "B604",
    name: "relocation-drift",
    severity: Severity::Error,
    doc: r#"# B604 relocation-drift

## What it does
Compares the kernels given: a CO-RE relocation that resolves on one kernel but not on
another, unguarded, is reported on the kernel where it fails, with the kernel where it
resolves and what it resolved to. A relocation whose value merely changes (a member that
moved) is CO-RE doing its job and is not reported.

## Why is this bad?
The program loads on the kernel it was tested on and is rejected by the verifier on the
other (`invalid func unknown#195896080`): the member or type was removed or renamed.

## Example
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

long out;

SEC("kprobe/vfs_read")
int probe(struct file *file)
{
	out = BPF_CORE_READ(file, f_version);
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
int probe(struct file *file)
{
	if (bpf_core_field_exists(file->f_version))
		out = BPF_CORE_READ(file, f_version);
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
            if cx.guarded(k, i) {
                continue;
            }
            let Some((other, resolved)) = cx
                .kernels
                .iter()
                .find_map(|o| o.resolutions.get(i).filter(|x| x.outcome.value().is_some()).map(|x| (o.kernel, x)))
            else {
                continue;
            };
            let mut f = cx.relocation_finding(
                &RULE,
                Some(pk.kernel),
                r,
                format!("`{}` resolves on {} but not on {}: {reason}", r.subject(), other.name, pk.kernel.name),
            );
            f.program = r.program.clone();
            f.diagnostic = f
                .diagnostic
                .note(format!("on {}: {} {}", other.name, resolved.kind, outcome_text(resolved)))
                .note(format!("libbpf poisons {} on {}", relo_place(r), pk.kernel.name))
                .note("help: guard the access with `bpf_core_field_exists()` and read what the newer kernel has through a `___flavour` type");
            out.push(f);
        }
    }
}
