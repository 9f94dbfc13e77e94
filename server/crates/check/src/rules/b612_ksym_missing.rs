//! B612 ksym-missing: a `__ksym` extern of a BPF object (a kfunc, a kernel variable) that
//! the kernel does not have, or has with another type: libbpf refuses the whole object.

use super::Rule;
use crate::bpf::PerKernel;
use crate::bpf::{BpfContext, BpfFinding};
use crate::diagnostic::Severity;
use fevlint_bpf::ksym::{self, Extern, ExternKind, KsymOutcome};

pub static RULE: Rule = Rule {
    code: "B612",
    name: "ksym-missing",
    severity: Severity::Error,
    doc: r#"# B612 ksym-missing

## What it does
Resolves each `__ksym` extern of the object on each kernel as libbpf 1.1 does when it
loads the object: a kfunc (`extern ... f(...) __ksym;`) needs a BTF function of that name
whose prototype is compatible (`bpf_core_types_are_compat`); a typed variable
(`extern const struct rq runqueues __ksym;`) a BTF variable of a compatible type; a
typeless one (`extern const void x __ksym;`) a symbol in the kernel's symbol map. A
`__weak` extern the kernel lacks is left zero by libbpf: reported only for a call of a
missing weak kfunc the verifier reaches on that kernel (guards patched), which it refuses
(`R0 !read_ok` after `call #0` on 6.1). A ksym vmlinux's BTF lacks is looked up, as
libbpf does, in the split BTF of the modules loaded on that kernel when its folder has
them (`btf/`, a copy of `/sys/kernel/btf`; the running kernel's own). Without them it may
be a module's: reported as an error only when the kernel cannot have modules
(`CONFIG_MODULES` unset) or another kernel of the run has it in vmlinux (a kfunc that
kernel gained), otherwise as information.

## Why is this bad?
libbpf resolves externs before it loads any program: `extern (func ksym) 'NAME': not
found in kernel or module BTFs` and `bpf_object__load()` fails with `-ESRCH`; no program
of the object loads on that kernel.

## Example
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
extern void bpf_task_release(struct task_struct *p) __ksym;

SEC("tp_btf/sched_process_fork")
int probe(void *ctx)
{
	struct task_struct *t = bpf_task_from_pid(1);
	if (t)
		bpf_task_release(t);
	return 0;
}
```

## Use instead
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

long out;

SEC("tp_btf/sched_process_fork")
int probe(void *ctx)
{
	struct task_struct *t = bpf_get_current_task_btf();
	out = t->pid;
	return 0;
}
```
"#,
    check: super::no_script_check,
};

pub(crate) fn check(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    let object = cx.object;
    // An object libbpf cannot open is B603's; externs it cannot classify are skipped.
    let Ok(externs) = ksym::externs(object) else { return };
    for pk in &cx.kernels {
        for e in &externs {
            let why = match e.kind {
                ExternKind::Kconfig => continue,
                ExternKind::TypelessVar => {
                    let Some(found) = pk.kernel.has_symbol(&e.elf.name) else { continue };
                    if e.elf.weak || found {
                        continue;
                    }
                    format!("extern '{}' (strong): not resolved (no such symbol in the symbol map)", e.elf.name)
                }
                ExternKind::TypedVar { .. } | ExternKind::Func { .. } => {
                    let Some(target) = pk.target else { continue };
                    let mut outcome = ksym::resolve(object, e, target, pk.modules);
                    let mut evidence = None;
                    if outcome == KsymOutcome::NotInVmlinux {
                        match missing_evidence(cx, pk, e) {
                            Some(why) => {
                                // What libbpf says when no module has it either.
                                outcome = ksym::resolve(object, e, target, Some(&[]));
                                evidence = Some(why);
                            }
                            None => {
                                if !e.elf.weak {
                                    out.push(unknown(cx, pk, e));
                                }
                                continue;
                            }
                        }
                    }
                    match outcome {
                        KsymOutcome::Refused { message } => match evidence {
                            Some(why) => format!("{message} ({why})"),
                            None => message,
                        },
                        KsymOutcome::WeakMissing if matches!(e.kind, ExternKind::Func { .. }) => {
                            weak_calls(cx, pk, e, out);
                            continue;
                        }
                        _ => continue,
                    }
                }
            };
            let what = if matches!(e.kind, ExternKind::Func { .. }) { "kfunc" } else { "kernel variable" };
            let (section, off) = e.elf.uses.first().cloned().unwrap_or_default();
            let source = object.source(&section, off);
            let mut f = cx.finding(
                &RULE,
                Some(pk.kernel),
                source,
                format!("{what} `{}` cannot be resolved on {}: libbpf refuses the object", e.elf.name, pk.kernel.name),
            );
            f.diagnostic = f.diagnostic.note(format!("libbpf: {why}"));
            if let Some(p) = object.program_at(&section, u64::from(off)) {
                f.diagnostic = f.diagnostic.note(format!("used by program `{}` (`{}`)", p.name, p.section));
            }
            f.diagnostic = f.diagnostic.note(format!(
                "help: declare it `__weak` and call it only where the kernel has it, or leave it out on {}",
                pk.kernel.name
            ));
            out.push(f);
        }
    }
}

/// Why a ksym that vmlinux's BTF lacks (and whose modules are not known) is missing all
/// the same: the kernel has no modules, or another kernel of the run has it in vmlinux.
fn missing_evidence(cx: &BpfContext<'_>, pk: &PerKernel<'_>, e: &Extern<'_>) -> Option<String> {
    if pk.kernel.config_enabled("MODULES") == Some(false) {
        return Some(format!("{} is built without `CONFIG_MODULES`", pk.kernel.name));
    }
    let other = cx.kernels.iter().find(|o| {
        !std::ptr::eq(o.kernel, pk.kernel)
            && o.target
                .is_some_and(|t| matches!(ksym::resolve(cx.object, e, t, Some(&[])), KsymOutcome::Resolved { .. }))
    })?;
    Some(format!("the vmlinux of {} has it", other.kernel.name))
}

/// Information: a ksym vmlinux's BTF lacks may be a module's, whose BTF is not at hand.
fn unknown(cx: &BpfContext<'_>, pk: &PerKernel<'_>, e: &Extern<'_>) -> BpfFinding {
    let (section, off) = e.elf.uses.first().cloned().unwrap_or_default();
    let what = if matches!(e.kind, ExternKind::Func { .. }) { "kfunc" } else { "kernel variable" };
    let mut f = cx.finding(
        &RULE,
        Some(pk.kernel),
        cx.object.source(&section, off),
        format!(
            "{what} `{}` is not in the vmlinux BTF of {}: it resolves only if a loaded module has it",
            e.elf.name, pk.kernel.name
        ),
    );
    f.diagnostic.severity = crate::diagnostic::Severity::Info;
    f.diagnostic = f.diagnostic.note(
        "help: copy `/sys/kernel/btf` of that machine into the kernel folder as `btf/` so that the modules' BTF is \
         searched too, as libbpf searches it",
    );
    f
}

/// The calls of a missing `__weak` kfunc that the verifier reaches on this kernel: each
/// refuses its program (libbpf leaves the call's id 0).
fn weak_calls(cx: &BpfContext<'_>, pk: &PerKernel<'_>, e: &Extern<'_>, out: &mut Vec<BpfFinding>) {
    let object = cx.object;
    for (section, off) in &e.elf.uses {
        let Some(p) = object.program_at(section, u64::from(*off)) else { continue };
        if p.def.is_none() {
            continue; // a subprogram: its callers are not followed
        }
        let Some(live) = fevlint_bpf::flow::reachable(object, p, &pk.resolutions) else { continue };
        let at = (u64::from(*off).saturating_sub(p.offset) / 8) as usize;
        if live.get(at) != Some(&true) {
            continue;
        }
        let mut f = cx.finding(
            &RULE,
            Some(pk.kernel),
            object.source(section, *off),
            format!(
                "weak kfunc `{}` is missing on {} and program `{}` calls it: the verifier refuses the program",
                e.elf.name, pk.kernel.name, p.name
            ),
        );
        f.program = Some(p.name.clone());
        f.diagnostic =
            f.diagnostic.note("libbpf leaves the call's kernel id 0: `call #0`, then `R0 !read_ok`").note(format!(
                "help: call it only under a check that is false on {} (`bpf_core_type_exists()` of a type that \
                 only kernels with the kfunc have)",
                pk.kernel.name
            ));
        out.push(f);
    }
}
