//! B613 tracing-argument-missing: a BTF-typed tracing program (`fentry`, `fexit`,
//! `fmod_ret`, `lsm`, `tp_btf`) reads an argument the kernel's function does not have
//! there: the verifier refuses the program.

use super::Rule;
use crate::bpf::{BpfContext, BpfFinding};
use crate::diagnostic::Severity;
use fevlint_bpf::args;

pub static RULE: Rule = Rule {
    code: "B613",
    name: "tracing-argument-missing",
    severity: Severity::Error,
    doc: r#"# B613 tracing-argument-missing

## What it does
Finds the context slots a BTF-typed tracing program reads (`BPF_PROG(name, a, b, c)`
reads slots 0, 1, 2 of its `u64` context) and compares them, on each kernel, with the
parameters of the function it attaches to, as the verifier's `btf_ctx_access` does:
`fentry/F` and `tp_btf/T` may read the function's (the `btf_trace_T` typedef's)
parameters; `fexit/F`, `fmod_ret/F` and `lsm/HOOK` also the slot right after them (the
return value). A parameter is read only if it is an integer, an enum, a struct, or a
pointer to void, an integer or a struct (Linux 6.1's rule: a function pointer or a
pointer to a pointer is refused). Only reads the verifier reaches on that kernel count
(guards patched).

## Why is this bad?
The verifier refuses the program at load: `func 'F' doesn't have N-th argument` (or
`func 'F' argN type FUNC_PROTO is not a struct`);
`bpf_object__load()` fails with `-EACCES` on that kernel. The function's parameters
changed between the kernels (a program written for one kernel's prototype).

## Example
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long out;

SEC("fentry/do_dentry_open")
int BPF_PROG(open_entry, struct file *f, struct inode *inode, void *open)
{
	out = (long)open;
	return 0;
}
```

## Use instead
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

long out;

SEC("fentry/do_dentry_open")
int BPF_PROG(open_entry, struct file *f)
{
	out = (long)f;
	return 0;
}
```
"#,
    check: super::no_script_check,
};

pub(crate) fn check(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    let object = cx.object;
    for p in &object.programs {
        let Some(def) = p.def else { continue };
        let Some(target) = def.target(&p.section) else { continue };
        let mut reads = None;
        for pk in &cx.kernels {
            let Some(t) = pk.target else { continue };
            let Some(ctx) = args::ctx_args(t, def.kind, target) else { continue };
            let Some(reads) = reads.get_or_insert_with(|| args::ctx_reads(object, p)) else { break };
            let Some(bad) = reads.iter().find(|r| !ctx.allows(r.slot)) else { continue };
            // Dead code on this kernel (CO-RE guards patched) is not verified.
            let live = fevlint_bpf::flow::reachable(object, p, &pk.resolutions);
            if live.as_ref().is_some_and(|l| l.get(bad.insn) == Some(&false)) {
                continue;
            }
            let off = u32::try_from(p.offset).ok().and_then(|o| o.checked_add(bad.insn as u32 * 8));
            let source = off.and_then(|o| object.source(&p.section, o)).or_else(|| cx.program_source(p));
            let n = ctx.params.len();
            let message = if (bad.slot as usize) < n {
                format!(
                    "`{}` reads argument {} of `{}` (`{}`), which the verifier does not let it read on {}",
                    p.section,
                    bad.slot + 1,
                    ctx.function,
                    ctx.params[bad.slot as usize],
                    pk.kernel.name
                )
            } else {
                format!(
                    "`{}` reads argument {} of `{}`, which has {n} parameter{} on {}: the verifier refuses the program",
                    p.section,
                    bad.slot + 1,
                    ctx.function,
                    if n == 1 { "" } else { "s" },
                    pk.kernel.name
                )
            };
            let mut f = cx.finding(&RULE, Some(pk.kernel), source, message);
            f.program = Some(p.name.clone());
            f.diagnostic = f.diagnostic.note(format!("verifier: {}", ctx.refusal(bad.slot)));
            let names: Vec<&str> = ctx.params.iter().map(String::as_str).collect();
            f.diagnostic = f.diagnostic.note(format!(
                "`{}` on {}: ({}){}",
                ctx.function,
                pk.kernel.name,
                names.join(", "),
                if ctx.ret_slot { format!(", then the return value as argument {}", n + 1) } else { String::new() }
            ));
            f.diagnostic = f.diagnostic.note(format!("program `{}`", p.name)).note(
                "help: read only what this kernel's prototype has there; where prototypes differ, one program per \
                 prototype, the others off with `bpf_program__set_autoload()`",
            );
            out.push(f);
        }
    }
}
