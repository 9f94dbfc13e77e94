//! B603 object-refused: libbpf refuses the whole object on a kernel while relocating, or
//! on every kernel when it opens it (an extern it cannot classify).

use super::Rule;
use crate::bpf::{relo_place, BpfContext, BpfFinding};
use crate::diagnostic::Severity;
use fevlint_bpf::{ksym, Outcome};

pub static RULE: Rule = Rule {
    code: "B603",
    name: "object-refused",
    severity: Severity::Error,
    doc: r#"# B603 object-refused

## What it does
Reports a CO-RE relocation that libbpf cannot compute at all on a kernel (as opposed to
one it poisons): ambiguous candidates (`field offset ambiguity`, `relocation decision
ambiguity`), an access string it cannot parse, a type without a size, an instruction that
does not hold the value the relocation expects. Also an object libbpf cannot even open:
an undefined function or variable that is neither a `__ksym` nor a `__kconfig` extern
(a call into another object that was not linked in with `bpftool gen object`, or a helper
macro the installed libbpf headers lack, such as `bpf_ksym_exists` before libbpf 1.2);
a `static` entry program (`sec '...': program '...' is static and not supported`); a
`.maps` definition whose `pinning` is neither `LIBBPF_PIN_NONE` nor `LIBBPF_PIN_BY_NAME`
(`invalid pinning value`); a `.struct_ops` variable whose function pointer is a program
of another type (`prog ... is not struct_ops BPF program`). And an object libbpf opens
but cannot load on any kernel: one whose only function is in `.text` (with a single
function libbpf takes it for a program, whose section gives no type: `missing BPF prog
type`; with two or more they are subprograms and nothing is loaded). Each is an error on
every kernel, with libbpf 1.1's own log line. And, per kernel, a `.struct_ops` variable
of a type `T` the kernel's BTF lacks (`struct T`, or `struct bpf_struct_ops_T`), or whose
`T` (as the object was built) has a member the kernel's lacks, set or not: libbpf 1.1
refuses the object at load there (`struct_ops init_kern ... Cannot find member`).
A warning for a program in a section libbpf 1.1 does not recognize (`tc/ingress`,
`uprobe.multi`, `kprobe.session`: names of later versions): it has no program type, and
`bpf_object__load()` refuses the object unless the loader sets one.

## Why is this bad?
`bpf_object__load()` fails with `failed to relocate` or `failed to patch`: no program of
the object loads on that kernel, whatever the code paths.

## Example
```c
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

long out;

SEC("kprobe/vfs_read")
int probe(void *ctx)
{
	out = bpf_core_type_size(__signalfn_t);
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
	out = bpf_core_type_exists(__signalfn_t);
	return 0;
}
```
"#,
    check: super::no_script_check,
};

/// What libbpf 1.1 refuses in the object whatever the kernel ([`fevlint_bpf::open`]): an
/// error on every kernel, at the program, the map's definition or the `.struct_ops`
/// variable, with libbpf's own words.
fn refusals(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    use fevlint_bpf::open::Stage;
    let object = cx.object;
    // A map has no line info: its file is the programs', its place the definition's text.
    let any_file = object.programs.iter().find_map(|p| cx.program_source(p));
    let everywhere = fevlint_bpf::open::refusals(object).into_iter().map(|r| (r, None));
    // `.struct_ops` types and members, which each kernel has or not.
    let per_kernel = cx.kernels.iter().enumerate().flat_map(|(i, pk)| {
        let found = pk.target.map(|t| fevlint_bpf::open::struct_ops_on(object, t)).unwrap_or_default();
        found.into_iter().map(move |r| (r, Some(i)))
    });
    for (r, on) in everywhere.chain(per_kernel) {
        let program = r.program.as_ref().and_then(|n| object.programs.iter().find(|p| &p.name == n));
        let (source, anchor) = match (&r.map, program) {
            (Some(map), Some(p)) => (cx.program_source(p), Some(format!("{map} = {{"))),
            (Some(map), None) if r.stage == Stage::Load => (
                any_file.clone().map(|s| fevlint_bpf::object::SourcePos { line: 1, column: 1, ..s }),
                Some(format!("{map} = {{")),
            ),
            (Some(map), None) => (
                any_file.clone().map(|s| fevlint_bpf::object::SourcePos { line: 1, column: 1, ..s }),
                Some(format!("{map} SEC(\".maps\")")),
            ),
            (None, Some(p)) => (cx.program_source(p), None),
            (None, None) => (None, None),
        };
        let message = match (r.stage, on.map(|i| &cx.kernels[i])) {
            (_, Some(pk)) => format!(
                "libbpf refuses to load the object on {}: {}: no program of it loads there",
                pk.kernel.name, r.what
            ),
            (Stage::Open, None) => {
                format!("libbpf cannot open the object: {}: no program of it loads on any kernel", r.what)
            }
            (Stage::Load, None) => {
                format!("libbpf refuses to load the object: {}: no program of it loads on any kernel", r.what)
            }
        };
        let kernels = cx.kernels.iter().enumerate().filter(|(i, _)| on.is_none_or(|k| k == *i));
        for (_, pk) in kernels {
            let mut f = cx.finding(&RULE, Some(pk.kernel), source.clone(), message.clone());
            f.program = program.map(|p| p.name.clone());
            f.anchor.clone_from(&anchor);
            f.diagnostic = f.diagnostic.note(format!("libbpf: {}", r.libbpf));
            out.push(f);
        }
    }
}

pub(crate) fn check(cx: &BpfContext<'_>, out: &mut Vec<BpfFinding>) {
    // `bpf_object__collect_externs`: libbpf refuses the object before it looks at a kernel.
    if let Err(why) = ksym::externs(cx.object) {
        let culprit = cx.object.externs.iter().find(|e| why.contains(&format!("'{}'", e.name)));
        let (section, off) = culprit.and_then(|e| e.uses.first().cloned()).unwrap_or_default();
        let what = culprit.map_or_else(
            || "an extern".to_owned(),
            |e| format!("extern `{}`, which is neither `__ksym` nor `__kconfig`", e.name),
        );
        for pk in &cx.kernels {
            let mut f = cx.finding(
                &RULE,
                Some(pk.kernel),
                cx.object.source(&section, off),
                format!("libbpf cannot open the object ({what}): no program of it loads on any kernel"),
            );
            f.diagnostic = f.diagnostic.note(format!("libbpf: {why}"));
            f.diagnostic = f.diagnostic.note(
                "help: link the object that defines it with `bpftool gen object`, or declare a kernel \
                 function or variable `__ksym`",
            );
            out.push(f);
        }
        return;
    }
    refusals(cx, out);
    // A program in a section libbpf 1.1 does not recognize (`tc/ingress`, `uprobe.multi`:
    // names of later versions) has no program type: `bpf_object__load()` fails on it
    // (`-EINVAL`) unless the loader sets the type, or switches it off (`SEC("?...")`).
    for p in &cx.object.programs {
        if p.def.is_some() || p.section == ".text" || p.section.starts_with('?') {
            continue;
        }
        let mut f = cx.finding(
            &RULE,
            None,
            cx.program_source(p),
            format!(
                "libbpf 1.1 does not recognize section `{}`: it refuses the object unless the loader sets the \
                 type of program `{}`",
                p.section, p.name
            ),
        );
        f.diagnostic.severity = Severity::Warning;
        f.program = Some(p.name.clone());
        f.anchor = Some(format!("\"{}\"", p.section));
        f.diagnostic = f.diagnostic.note(format!("libbpf: prog '{}': unrecognized ELF section name '{}'", p.name, p.section)).note(
            "help: use a section name libbpf 1.1 knows, or call `bpf_program__set_type()` before loading (libbpf 1.2 and later know more names)",
        );
        out.push(f);
    }
    for pk in &cx.kernels {
        // libbpf stops at the first failure.
        let Some(r) = pk.resolutions.iter().find(|r| matches!(r.outcome, Outcome::Failed { .. })) else { continue };
        let Outcome::Failed { reason, errno } = &r.outcome else { continue };
        let mut f = cx.relocation_finding(
            &RULE,
            Some(pk.kernel),
            r,
            format!("libbpf refuses the object on {}: `{}`: {reason}", pk.kernel.name, r.subject()),
        );
        f.diagnostic =
            f.diagnostic.note(format!("{} fails with error {errno}: no program of the object loads", relo_place(r)));
        out.push(f);
    }
}
