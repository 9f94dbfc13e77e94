//! B611 attach-point-missing: a BPF program's section names a function, tracepoint, LSM
//! hook or iterator the kernel does not offer (or, for kprobes, refuses).

use super::Rule;
use crate::bpf::{BpfContext, BpfFinding, PerKernel};
use crate::diagnostic::Severity;
use fevlint_bpf::btf::BtfKind;
use fevlint_bpf::AttachKind;
use fevlint_kernel::Trace;
use fevlint_types::Arch;

pub static RULE: Rule = Rule {
    code: "B611",
    name: "attach-point-missing",
    severity: Severity::Error,
    doc: r#"# B611 attach-point-missing

## What it does
Reads each program's attach point from its section name, as libbpf's `section_defs[]`
does, and checks it against each kernel: `kprobe/`/`kretprobe/` need the function (any
kernel symbol or BTF function) off the kprobe blacklist; `ksyscall/NAME` the
architecture's `__x64_sys_NAME` (`__ia32_sys_NAME`); `fentry/`, `fexit/`, `fmod_ret/` a
BTF function ftrace can trace (`available_filter_functions`); `tp/CAT/NAME`,
`tracepoint/`, `raw_tp/`, `tp_btf/` the tracepoint's `btf_trace_NAME` typedef; `lsm/HOOK`
the `bpf_lsm_HOOK` function; `iter/NAME` the `bpf_iter_NAME` function. User-space probes
(`uprobe`, `usdt`) are not the kernel's to check.

## Why is this bad?
The program loads (or not) but attaching fails: `bpf_program__attach()` returns
`-ENOENT`/`-EINVAL` and the tool exits, on that kernel only.

## Example
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("kprobe/do_sys_open_gone")
int probe(void *ctx)
{
	return 0;
}
```

## Use instead
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("kprobe/vfs_read")
int probe(void *ctx)
{
	return 0;
}
```
"#,
    check: super::no_script_check,
};

/// Why `kind` cannot attach to `target` on this kernel, if it cannot.
fn problem(pk: &PerKernel<'_>, kind: AttachKind, target: &str) -> Option<String> {
    let k = pk.kernel;
    let has = |kind: BtfKind, name: &str| pk.target.map(|t| t.has(kind, name));
    match kind {
        AttachKind::Kprobe | AttachKind::Kretprobe => {
            let name = target.split('+').next().unwrap_or(target);
            let f = k.function(name).ok()?;
            if !f.exists() {
                return Some(format!("`{name}` does not exist on {}", k.name));
            }
            f.kprobe_blacklisted.then(|| format!("`{name}` is on the kprobe blacklist of {}", k.name))
        }
        AttachKind::Ksyscall | AttachKind::Kretsyscall => {
            let prefix = match k.arch {
                Arch::X86_64 => "__x64_sys_",
                Arch::X86_32 => "__ia32_sys_",
            };
            let wrapped = format!("{prefix}{target}");
            let found =
                [wrapped.as_str(), &format!("sys_{target}")].iter().any(|n| k.function(n).is_ok_and(|f| f.exists()));
            (!found).then(|| format!("no syscall `{target}` on {} (no `{wrapped}`)", k.name))
        }
        AttachKind::Fentry | AttachKind::Fexit | AttachKind::FmodRet => {
            let f = k.function(target).ok()?;
            if f.prototypes.is_empty() {
                return Some(format!("`{target}` is not a BTF function of {}", k.name));
            }
            match f.trace {
                Trace::NotTraceable => Some(format!("ftrace cannot attach to `{target}` on {}", k.name)),
                Trace::OnlyClones(_) => Some(format!("only compiler clones of `{target}` are traceable on {}", k.name)),
                Trace::Traceable { .. } | Trace::Unknown => None,
            }
        }
        AttachKind::Tracepoint | AttachKind::RawTracepoint | AttachKind::TpBtf => {
            let name = target.rsplit('/').next().unwrap_or(target);
            let typedef = format!("btf_trace_{name}");
            (has(BtfKind::Typedef, &typedef) == Some(false))
                .then(|| format!("no tracepoint `{name}` on {} (no `{typedef}` in its BTF)", k.name))
        }
        AttachKind::Lsm | AttachKind::LsmCgroup => {
            let f = format!("bpf_lsm_{target}");
            (has(BtfKind::Func, &f) == Some(false)).then(|| format!("no LSM hook `{target}` on {} (no `{f}`)", k.name))
        }
        AttachKind::Iter => {
            let f = format!("bpf_iter_{target}");
            (has(BtfKind::Func, &f) == Some(false))
                .then(|| format!("no BPF iterator `{target}` on {} (no `{f}`)", k.name))
        }
        _ => None,
    }
}

pub(crate) fn check(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    for p in &cx.object.programs {
        let Some(def) = p.def else { continue };
        let Some(target) = def.target(&p.section) else { continue };
        for pk in &cx.kernels {
            let Some(why) = problem(pk, def.kind, target) else { continue };
            let mut f = cx.finding(
                &RULE,
                Some(pk.kernel),
                cx.program_source(p),
                format!("`{}` cannot attach on {}: {why}", p.section, pk.kernel.name),
            );
            f.program = Some(p.name.clone());
            f.anchor = Some(format!("\"{}\"", p.section));
            f.diagnostic = f.diagnostic.note(format!("program `{}`", p.name));
            out.push(f);
        }
    }
}
