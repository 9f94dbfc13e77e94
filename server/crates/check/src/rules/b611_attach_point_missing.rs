//! B611 attach-point-missing: a BPF program's section names a function, tracepoint, LSM
//! hook or iterator the kernel does not offer (or, for kprobes, refuses).

use super::Rule;
use crate::bpf::{BpfContext, BpfFinding, PerKernel};
use crate::diagnostic::Severity;
use fevlint_bpf::btf::BtfKind;
use fevlint_bpf::{AttachKind, Placeholder, Program};
use fevlint_kernel::{Kernel, Trace};
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
BTF function ftrace can trace (`available_filter_functions`); `tp/CAT/NAME` and
`tracepoint/` the event in the kernel's `available_events` (where it lists the system;
else the tracepoint's `btf_trace_NAME` typedef, and nothing for `syscalls/`, whose events
have none); `raw_tp/`, `tp_btf/` the tracepoint's `btf_trace_NAME` typedef; `lsm/HOOK`
the `bpf_lsm_HOOK` function; `iter/NAME` the `bpf_iter_NAME` function. User-space probes
(`uprobe`, `usdt`) are not the kernel's to check.

A placeholder target is information, once per program, not an error on every kernel:
tools such as bcc's libbpf-tools declare `SEC("kprobe/dummy_file_read")`,
`SEC("fentry/dummy_fentry")` or `SEC("kprobe/foo")` and set the real function at run time
(`bpf_program__set_attach_target()` before loading, `bpf_program__attach_kprobe()` or
`_uprobe()` by name) or switch the program off (`bpf_program__set_autoload(false)`). A
target is taken for one when a `_`-separated part of it is `dummy` or `placeholder`, or it
is `foo`, `bar`, `baz` or `qux`, and no kernel of the run knows the name at all (symbol,
BTF function, ftrace list); a `dummy` name one kernel has (`alloc_netdev_dummy`, new in
6.10) stays an error on the others, and any other name is checked as below. A section
with no target (`SEC("kprobe")`) names nothing to check.

A target the kernel image lacks by any name may be a module's (`md_flush_request` of
md_mod, the `kvm` tracepoints, `xfs_file_read_iter`): libbpf looks functions and
`btf_trace_*` typedefs up in the loaded modules' BTF too, and the kernel attaches kprobes
and tracepoints in loaded modules. Where the kernel folder says which modules were loaded
(`btf/`, a copy of `/sys/kernel/btf`; kallsyms or an ftrace list with `[module]` entries),
a target a module's BTF has is found, and one nowhere is an error that says no loaded
module has it either. Where it does not (vmlinux BTF and `System.map` only, as the
fixtures and `debian:` kernels), the finding is a warning: the target is not in the
kernel image and attaches only if a loaded module provides it (the module is named when
another kernel of the run has it in a module; similar vmlinux names are offered for a
misspelling). It stays an error on a kernel built without `CONFIG_MODULES`, and where
another kernel of the run has the name in its image (a function that left vmlinux or was
renamed: `kmem_cache_alloc` on 6.12), as the bpftrace rule K210 and the ksym rule B612
treat module names.

A kprobe program whose target no kernel of the run has (image or listed modules), in a
tool binary that never attaches programs by section, is one note for the program: the
tool attaches it itself. Debian's libbpf-tools `gethostlatency` declares
`SEC("kprobe/handle_entry")` and attaches the program to libc with
`bpf_program__attach_uprobe()` (a kprobe program is a uprobe program too). "Never
attaches by section" is read from the binary's code: it never calls libbpf's
`bpf_object__attach_skeleton()` (what a skeleton's `NAME_bpf__attach()` calls), told by
the dynamic import where libbpf is a shared library, else by the calls that reach the
function holding libbpf's `failed to auto-attach` message (the function's start from
`.eh_frame_hdr`). A tool that attaches by section, and a bare `.bpf.o`, keep the finding.
Sections that fix the target at load time (`fentry/`, `tp_btf/`, ...) are never demoted.

`fmod_ret/FN` also needs `FN` to be modifiable: a `security_` hook, or a function on the
kernel's error-injection list (`ALLOW_ERROR_INJECTION`), which is empty on a kernel built
without `CONFIG_FUNCTION_ERROR_INJECTION` (Debian's). fevlint reads the list from the
kernel folder's `error_injection_list` (a copy of /sys/kernel/debug/error_injection/list;
`running` reads it live), else from the image's `_error_injection_whitelist` table
(`__start_error_injection_whitelist` to `__stop_error_injection_whitelist` in the symbol
map, each entry a function's address and an error type); a function off the list is an
error naming where the list came from. Where the config enables it (or is missing) and no
list is at hand, the finding is information (unknown), not an error.
`kprobe.multi/PATTERN` and `kretprobe.multi/PATTERN` need `CONFIG_FPROBE`, and libbpf 1.1
expands the pattern (`?` and `*`) over the kernel's symbols (`/proc/kallsyms`; the folder's
symbol map here) and passes every match to the kernel, which refuses the link when a match
is not a function ftrace can trace: a pattern that matches nothing, or a match missing from
`available_filter_functions`, fails the attach.

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

/// Why a program cannot attach on a kernel: an error when it cannot; information when
/// the kernel's files do not decide it; a warning when it depends on the libbpf version.
struct Problem {
    why: String,
    severity: Severity,
}

impl From<String> for Problem {
    fn from(why: String) -> Problem {
        Problem { why, severity: Severity::Error }
    }
}

/// Why `kind` cannot attach to `target` on this kernel, if it cannot.
fn problem(pk: &PerKernel<'_>, kind: AttachKind, target: &str) -> Option<Problem> {
    attach_problem(pk, kind, target).map(Problem::from).or_else(|| match kind {
        AttachKind::FmodRet => not_modifiable(pk.kernel, target),
        AttachKind::KprobeMulti => multi_problem(pk.kernel, target),
        _ => None,
    })
}

/// `fmod_ret`: the verifier's `check_attach_modify_return` (`security_` hooks and the
/// error-injection list) on a function that exists and is traceable. The list comes from
/// the kernel ([`Kernel::error_injection`]); a kernel built without
/// `CONFIG_FUNCTION_ERROR_INJECTION` has none; otherwise without it the answer is unknown.
fn not_modifiable(k: &Kernel, target: &str) -> Option<Problem> {
    if target.starts_with("security_") {
        return None;
    }
    let refused = |why: String| {
        Some(Problem::from(format!(
            "`{target}` is not modifiable on {}: `fmod_ret` needs a `security_` hook or a function on the \
             error-injection list, and {why}: the verifier says `{target}() is not modifiable`",
            k.name
        )))
    };
    if k.config_enabled("FUNCTION_ERROR_INJECTION") == Some(false) {
        return refused(format!("{} is built without `CONFIG_FUNCTION_ERROR_INJECTION`", k.name));
    }
    if let Some(list) = k.error_injection() {
        if list.value.contains(target) {
            return None;
        }
        return refused(format!(
            "`{target}` is not on it (`{}`, {} functions)",
            list.from.path.display(),
            list.value.len()
        ));
    }
    Some(Problem {
        why: format!(
            "cannot tell whether `{target}` is on the error-injection list of {} (`ALLOW_ERROR_INJECTION`), \
             which `fmod_ret` needs outside `security_` hooks: give the kernel folder an `error_injection_list` \
             (a copy of /sys/kernel/debug/error_injection/list) or its image",
            k.name
        ),
        severity: Severity::Info,
    })
}

/// `kprobe.multi`/`kretprobe.multi` with a pattern, as libbpf 1.1 attaches it: every
/// symbol of kallsyms the glob matches, each of which the kernel must be able to trace.
fn multi_problem(k: &Kernel, target: &str) -> Option<Problem> {
    let pattern = fevlint_bpf::section::multi_pattern(target)?;
    // libbpf expands the pattern before it asks the kernel for the link: only names that
    // start with the pattern's head (up to its first wildcard) can match, and the kernel
    // answers those without reading its whole symbol map.
    let head = &pattern[..pattern.find(['*', '?']).unwrap_or(pattern.len())];
    let names = match head.is_empty() {
        false => k.symbols_with_prefix(head),
        true => k.symbols().map(|s| s.value.iter().map(|s| s.name.to_owned()).collect()),
    };
    let have_map = names.is_some();
    let mut matched: Vec<String> =
        names.into_iter().flatten().filter(|n| fevlint_bpf::section::glob_match(n, pattern)).collect();
    if matched.is_empty() && have_map {
        return Some(Problem::from(format!("`{pattern}` matches no symbol of {} (libbpf: `-ENOENT`)", k.name)));
    }
    if k.config_enabled("FPROBE") == Some(false) {
        return Some(Problem::from(format!(
            "{} is built without `CONFIG_FPROBE`: multi-kprobe links are not supported there (`-EOPNOTSUPP`)",
            k.name
        )));
    }
    if matched.is_empty() {
        return None; // no symbol map: what the pattern matches is unknown
    }
    matched.sort_unstable();
    matched.dedup();
    let mut untraceable: Vec<&str> = Vec::new();
    for n in &matched {
        if k.traceable_count(n)? == 0 {
            untraceable.push(n);
        }
    }
    if untraceable.is_empty() {
        return None;
    }
    let shown: Vec<String> = untraceable.iter().take(3).map(|n| format!("`{n}`")).collect();
    let more = if untraceable.len() > 3 { format!(" and {} more", untraceable.len() - 3) } else { String::new() };
    if untraceable.len() == matched.len() {
        return Some(Problem::from(format!(
            "none of the {} symbol(s) `{pattern}` matches on {} can be traced ({}{more})",
            matched.len(),
            k.name,
            shown.join(", ")
        )));
    }
    // libbpf 1.2 and later match `available_filter_functions` instead of kallsyms.
    Some(Problem {
        why: format!(
            "`{pattern}` matches {} symbol(s) of {}, of which ftrace cannot trace {}{more}: the kernel refuses \
             the link libbpf 1.1 asks for (libbpf 1.2 and later expand the pattern over the traceable \
             functions only)",
            matched.len(),
            k.name,
            shown.join(", ")
        ),
        severity: Severity::Warning,
    })
}

/// `tp/CAT/NAME` (and `tracepoint/`): a trace event of tracefs. The kernel's event list
/// decides where it has the system; otherwise the tracepoint's `btf_trace_NAME` typedef,
/// except for `syscalls/`, whose events ftrace makes per syscall without a tracepoint of
/// their own (nothing in BTF names them).
fn tracefs_event(pk: &PerKernel<'_>, target: &str) -> Option<String> {
    let k = pk.kernel;
    let (system, name) = target.split_once('/').unwrap_or(("", target));
    if k.trace_system_exists(system) == Some(true) {
        let listed = k.trace_event_systems(name).is_some_and(|s| s.iter().any(|s| s == system));
        return (!listed)
            .then(|| format!("no trace event `{system}:{name}` on {} (not in its `available_events`)", k.name));
    }
    if system == "syscalls" {
        return None;
    }
    let typedef = format!("btf_trace_{name}");
    (pk.target.map(|t| t.has(BtfKind::Typedef, &typedef)) == Some(false))
        .then(|| format!("no tracepoint `{name}` on {} (no `{typedef}` in its BTF)", k.name))
}

/// Why `kind` cannot attach to `target` on this kernel, if it cannot: the function,
/// tracepoint, hook or iterator it names is missing.
fn attach_problem(pk: &PerKernel<'_>, kind: AttachKind, target: &str) -> Option<String> {
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
        AttachKind::Tracepoint => tracefs_event(pk, target),
        AttachKind::RawTracepoint | AttachKind::TpBtf => {
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

/// A placeholder target (see [`Placeholder`]) that no kernel of the run knows by any
/// name (symbol, BTF function, ftrace list): libbpf-tools set the real target at run
/// time (`bpf_program__set_attach_target()`, `bpf_program__attach_kprobe()` or
/// `_uprobe()` by name) or switch the program off (`bpf_program__set_autoload(false)`),
/// so its absence says nothing about the kernels. A real function missing from some
/// kernels only, or named otherwise, stays an error.
fn run_time_target(cx: &BpfContext<'_>, kind: AttachKind, target: &str) -> Option<Placeholder> {
    let name = match kind {
        AttachKind::Kprobe | AttachKind::Kretprobe => target.split('+').next().unwrap_or(target),
        AttachKind::Fentry | AttachKind::Fexit | AttachKind::FmodRet => target,
        _ => return None,
    };
    let convention = Placeholder::of(name)?;
    let unknown_everywhere =
        !cx.kernels.is_empty() && cx.kernels.iter().all(|pk| pk.kernel.function(name).is_ok_and(|f| !f.exists()));
    unknown_everywhere.then_some(convention)
}

/// The one note for a placeholder target: information, for the whole run.
fn run_time_note(
    cx: &BpfContext<'_>,
    p: &Program,
    kind: AttachKind,
    target: &str,
    convention: Placeholder,
) -> BpfFinding {
    let n = cx.kernels.len();
    let kernels = if n == 1 { "the kernel".to_owned() } else { format!("any of the {n} kernels") };
    let message = format!(
        "attach target of `{}` is set at run time: `{target}` is {} and not a function of {kernels}",
        p.section,
        convention.describe()
    );
    let how = match kind {
        AttachKind::Kprobe | AttachKind::Kretprobe => {
            "a tool attaches such a program by name (`bpf_program__attach_kprobe()`, `_uprobe()`) or switches it \
             off (`bpf_program__set_autoload(false)`); attached as written it fails with `-ENOENT`"
        }
        _ => {
            "a tool retargets such a program before loading (`bpf_program__set_attach_target()`) or switches it \
             off (`bpf_program__set_autoload(false)`); loaded as written libbpf refuses it (no BTF function \
             of that name)"
        }
    };
    let mut f = cx.finding(&RULE, None, cx.program_source(p), message);
    f.diagnostic.severity = Severity::Info;
    f.program = Some(p.name.clone());
    f.anchor = Some(format!("\"{}\"", p.section));
    f.diagnostic = f.diagnostic.note(format!("program `{}`", p.name)).note(how.to_owned());
    f
}

/// What an attach point names that a kernel image lacks by any name: a function (no
/// symbol, BTF function or ftrace entry), or a tracepoint (no `btf_trace_*` typedef), as
/// a module would provide it.
struct Absent {
    /// The name as the section gives it, for messages (`md_flush_request`, `kvm_exit`).
    name: String,
    /// What a module's BTF would have: a `Func` of that name, or the tracepoint's typedef.
    kind: BtfKind,
    btf_name: String,
}

/// The target of `kind` when the kernel image lacks it entirely (see [`Absent`]); `None`
/// when the image has it in some form, or the problem is another (blacklisted, not
/// traceable, a tracefs event missing from a system the kernel lists).
fn absent(pk: &PerKernel<'_>, kind: AttachKind, target: &str) -> Option<Absent> {
    let k = pk.kernel;
    let function = |name: &str| {
        let f = k.function(name).ok()?;
        let in_image = f.exists() && module_of_symbol(k, name).is_none();
        (!in_image && f.prototypes.is_empty()).then(|| Absent {
            name: name.to_owned(),
            kind: BtfKind::Func,
            btf_name: name.to_owned(),
        })
    };
    let tracepoint = |name: &str| {
        let typedef = format!("btf_trace_{name}");
        (pk.target.map(|t| t.has(BtfKind::Typedef, &typedef)) == Some(false)).then(|| Absent {
            name: name.to_owned(),
            kind: BtfKind::Typedef,
            btf_name: typedef,
        })
    };
    match kind {
        AttachKind::Kprobe | AttachKind::Kretprobe => function(target.split('+').next().unwrap_or(target)),
        AttachKind::Fentry | AttachKind::Fexit | AttachKind::FmodRet => function(target),
        AttachKind::Tracepoint => {
            let (system, name) = target.split_once('/').unwrap_or(("", target));
            if system == "syscalls" || k.trace_system_exists(system) == Some(true) {
                return None;
            }
            tracepoint(name)
        }
        AttachKind::RawTracepoint | AttachKind::TpBtf => tracepoint(target.rsplit('/').next().unwrap_or(target)),
        _ => None,
    }
}

/// The module the kernel's symbol map (kallsyms with its `[module]` column) or ftrace list
/// (`NAME [module]` lines) puts `name` in, when they do.
fn module_of_symbol(k: &Kernel, name: &str) -> Option<String> {
    if let Some(m) = k.symbol_module(name) {
        return Some(m.to_owned());
    }
    k.ftrace_module(name)
}

/// Whether the kernel's files say which modules it had loaded: a `btf/` folder (a copy of
/// `/sys/kernel/btf`), or kallsyms or an ftrace list with `[module]` entries.
fn knows_modules(pk: &PerKernel<'_>) -> bool {
    let k = pk.kernel;
    pk.modules.is_some() || k.symbols_have_modules() || k.ftrace_names_modules()
}

/// The module whose BTF (its folder's `btf/`) or symbols have what `a` names, on this kernel.
fn module_having(pk: &PerKernel<'_>, a: &Absent) -> Option<String> {
    let from_btf = pk.modules.and_then(|m| fevlint_bpf::ksym::module_with(m, a.kind, &a.btf_name)).map(|b| {
        let path = std::path::Path::new(b.source_name());
        path.file_name().map_or_else(|| b.source_name().to_owned(), |n| n.to_string_lossy().into_owned())
    });
    from_btf.or_else(|| (a.kind == BtfKind::Func).then(|| module_of_symbol(pk.kernel, &a.name)).flatten())
}

/// Why a target the image lacks is missing all the same where the kernel's modules are
/// not known: the kernel cannot have modules, or another kernel of the run has it in its
/// image (it left vmlinux, or was renamed: drift, not a module).
fn missing_evidence(cx: &BpfContext<'_>, pk: &PerKernel<'_>, a: &Absent) -> bool {
    if pk.kernel.config_enabled("MODULES") == Some(false) {
        return true;
    }
    cx.kernels.iter().any(|o| !std::ptr::eq(o.kernel, pk.kernel) && in_image(o, a))
}

/// Whether a kernel's image has what `a` names (a function by any name outside modules,
/// a tracepoint's typedef in its vmlinux BTF).
fn in_image(pk: &PerKernel<'_>, a: &Absent) -> bool {
    match a.kind {
        BtfKind::Func => {
            pk.kernel.function(&a.name).is_ok_and(|f| f.exists()) && module_of_symbol(pk.kernel, &a.name).is_none()
        }
        _ => pk.target.is_some_and(|t| t.has(a.kind, &a.btf_name)),
    }
}

/// The finding for a target the kernel image lacks on a kernel whose modules are not
/// known: a warning (a loaded module may provide it), naming the module where another
/// kernel of the run says which one has it.
fn module_warning(cx: &BpfContext<'_>, pk: &PerKernel<'_>, p: &Program, a: &Absent) -> BpfFinding {
    let k = pk.kernel;
    let what = match a.kind {
        BtfKind::Func => format!("`{}`", a.name),
        _ => format!("tracepoint `{}`", a.name),
    };
    let message = format!(
        "`{}` may not attach on {}: {what} is not in the kernel image (vmlinux) of {}: it attaches only if a \
         loaded module provides it",
        p.section, k.name, k.name
    );
    let mut f = cx.finding(&RULE, Some(k), cx.program_source(p), message);
    f.diagnostic.severity = Severity::Warning;
    f.program = Some(p.name.clone());
    f.anchor = Some(format!("\"{}\"", p.section));
    f.diagnostic = f.diagnostic.note(format!("program `{}`", p.name));
    let elsewhere = cx.kernels.iter().filter(|o| !std::ptr::eq(o.kernel, k)).find_map(|o| {
        let m = module_having(o, a)?;
        Some((m, o.kernel.name.as_str()))
    });
    let own = module_of_symbol(k, &a.name).filter(|_| a.kind == BtfKind::Func);
    if let Some(m) = own {
        f.diagnostic = f.diagnostic.note(format!(
            "the symbol map of {} puts `{}` in module `{m}`, whose BTF the kernel folder does not have (`btf/`)",
            k.name, a.name
        ));
    } else if let Some((m, on)) = elsewhere {
        f.diagnostic = f.diagnostic.note(format!("module `{m}` has it on {on}"));
    } else if a.kind == BtfKind::Func {
        let close: Vec<String> = k.similar_functions(&a.name, 3).iter().map(|c| format!("`{c}`")).collect();
        if !close.is_empty() {
            f.diagnostic =
                f.diagnostic.note(format!("help: if it is misspelt, similar names in vmlinux: {}", close.join(", ")));
        }
    }
    f.diagnostic = f.diagnostic.note(
        "help: copy `/sys/kernel/btf` of a machine with the module loaded into the kernel folder as `btf/` (or its \
         `/proc/kallsyms`) so that the modules are searched too, as libbpf and the kernel search them",
    );
    f
}

/// A kprobe-type program whose target no kernel of the run has by any name (image, or
/// the modules a kernel folder lists), in a tool binary that never attaches programs by
/// section (it never calls `bpf_object__attach_skeleton()`): the tool attaches it itself,
/// as Debian's libbpf-tools `gethostlatency` attaches `SEC("kprobe/handle_entry")` to libc
/// with `bpf_program__attach_uprobe()` (a kprobe program is a uprobe program too). One
/// note, information. Section names that fix the target at load time (`fentry/`,
/// `tp_btf/`, ...) are not demoted: libbpf resolves them whoever attaches.
fn hand_attached(cx: &BpfContext<'_>, p: &Program, kind: AttachKind, target: &str) -> Option<BpfFinding> {
    if cx.object.host_attaches_by_section != Some(false) || !matches!(kind, AttachKind::Kprobe | AttachKind::Kretprobe)
    {
        return None;
    }
    let missing = |pk: &PerKernel<'_>| {
        absent(pk, kind, target).is_some_and(|a| module_having(pk, &a).is_none() && !in_image(pk, &a))
    };
    if cx.kernels.is_empty() || !cx.kernels.iter().all(missing) {
        return None;
    }
    let name = target.split('+').next().unwrap_or(target);
    let n = cx.kernels.len();
    let kernels = if n == 1 { "the kernel".to_owned() } else { format!("any of the {n} kernels") };
    let message = format!(
        "`{}` is attached by the tool itself: `{name}` is not a function of {kernels}, and the tool never \
         attaches programs by section name",
        p.section
    );
    let mut f = cx.finding(&RULE, None, cx.program_source(p), message);
    f.diagnostic.severity = Severity::Info;
    f.program = Some(p.name.clone());
    f.anchor = Some(format!("\"{}\"", p.section));
    f.diagnostic = f.diagnostic.note(format!("program `{}`", p.name)).note(
        "the binary that embeds this object never calls `bpf_object__attach_skeleton()`: it attaches each program \
         itself, with a target of its own (`bpf_program__attach_uprobe()`, `_kprobe()`), or with \
         `bpf_program__attach()`, which uses the section's target and then fails with `-ENOENT`",
    );
    Some(f)
}

pub(crate) fn check(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    for p in &cx.object.programs {
        let Some(def) = p.def else { continue };
        let Some(target) = def.target(&p.section) else { continue };
        if let Some(convention) = run_time_target(cx, def.kind, target) {
            out.push(run_time_note(cx, p, def.kind, target, convention));
            continue;
        }
        if let Some(note) = hand_attached(cx, p, def.kind, target) {
            out.push(note);
            continue;
        }
        for pk in &cx.kernels {
            let Some(Problem { why, severity }) = problem(pk, def.kind, target) else { continue };
            let mut searched = None;
            if let Some(a) = absent(pk, def.kind, target) {
                let in_btf = pk.modules.and_then(|m| fevlint_bpf::ksym::module_with(m, a.kind, &a.btf_name));
                let in_symbols = (a.kind == BtfKind::Func).then(|| module_of_symbol(pk.kernel, &a.name)).flatten();
                if in_btf.is_some() {
                    continue; // libbpf and the kernel find it in that loaded module
                }
                if knows_modules(pk) {
                    searched = Some(match (&in_symbols, pk.modules.is_some()) {
                        (Some(m), _) => format!("module `{m}` has the symbol, but no BTF of it is loaded"),
                        (None, true) => {
                            format!("no module loaded on {} has it either (its folder's `btf/`)", pk.kernel.name)
                        }
                        (None, false) => {
                            format!("no module loaded on {} has it either (its symbol map)", pk.kernel.name)
                        }
                    });
                    if in_symbols.is_some() && pk.modules.is_none() {
                        out.push(module_warning(cx, pk, p, &a));
                        continue;
                    }
                } else if !missing_evidence(cx, pk, &a) {
                    out.push(module_warning(cx, pk, p, &a));
                    continue;
                }
            }
            let message = if severity != Severity::Error {
                format!("`{}` may not attach on {}: {why}", p.section, pk.kernel.name)
            } else {
                format!("`{}` cannot attach on {}: {why}", p.section, pk.kernel.name)
            };
            let mut f = cx.finding(&RULE, Some(pk.kernel), cx.program_source(p), message);
            f.diagnostic.severity = severity;
            f.program = Some(p.name.clone());
            f.anchor = Some(format!("\"{}\"", p.section));
            f.diagnostic = f.diagnostic.note(format!("program `{}`", p.name));
            if let Some(searched) = searched {
                f.diagnostic = f.diagnostic.note(searched);
            }
            out.push(f);
        }
    }
}
