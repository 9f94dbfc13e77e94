//! K211 probe-not-attachable: the function exists but this probe type cannot attach to it.

use super::Rule;
use crate::bpftrace_facts::{trace_words, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_kernel::Trace;

pub static RULE: Rule = Rule {
    code: "K211",
    name: "probe-not-attachable",
    severity: Severity::Error,
    doc: r#"# K211 probe-not-attachable

## What it does
For a function that exists, checks what the probe type needs: a `kprobe:` needs a text
symbol (a function inlined everywhere has none) outside the kprobe blacklist, and an
offset inside the function; a `kfunc:`/`kretfunc:` needs a BTF `FUNC` that ftrace can
trace (listed in `available_filter_functions`).

## Why is this bad?
bpftrace fails to attach (`Could not attach`, `No BTF found for`), or a kfunc finds no
trampoline site. A function only its compiler clones (`.isra.0`, `.constprop.0`) can
trace is reached through the clone's name with a kprobe.

## Example
```bt
kfunc:do_syscall_64 { @ = count(); }
```

## Use instead
```bt
kfunc:vfs_read { @ = count(); }
```
"#,
    check: super::no_script_check,
};

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    for (_, ap) in cx.attach_points() {
        let Some(kind) = ap.kind else { continue };
        if !kind.is_kernel_function() || ap.wildcard || ap.func.is_empty() || ap.func.contains('$') {
            continue;
        }
        if kind.is_btf_function() && !ap.target.is_empty() && ap.target != "vmlinux" {
            continue;
        }
        let Some(facts) = f.function(&ap.func) else { continue };
        if !facts.exists() {
            continue;
        }
        let name = &ap.func;
        let problem: Option<(String, Option<String>)> = if kind.is_btf_function() {
            if facts.prototypes.is_empty() && f.kernel.types().is_some() {
                Some((
                    format!("`{name}` has no BTF `FUNC` in {}: kfunc probes need one", f.kernel.name),
                    Some(format!("help: attach with `kprobe:{name}`")),
                ))
            } else {
                match &facts.trace {
                    Trace::NotTraceable => Some((
                        format!("`{name}` is {} in {}: kfunc probes cannot attach", trace_words(&facts), f.kernel.name),
                        None,
                    )),
                    Trace::OnlyClones(c) => Some((
                        format!("only clones of `{name}` are traceable in {}", f.kernel.name),
                        c.first().map(|c| format!("help: `kprobe:{c}` reaches the clone")),
                    )),
                    _ => None,
                }
            }
        } else if facts.kprobe_blacklisted {
            Some((format!("`{name}` is on the kprobe blacklist of {}", f.kernel.name), None))
        } else if facts.text_symbol == Some(false) && !matches!(facts.trace, Trace::Traceable { .. }) {
            let help = match &facts.trace {
                Trace::OnlyClones(c) => {
                    c.first().map(|c| format!("help: the compiler cloned it: `{}:{c}`", kind.name()))
                }
                _ => None,
            };
            Some((
                format!("`{name}` has no text symbol in {} (inlined everywhere): kprobes cannot attach", f.kernel.name),
                help,
            ))
        } else {
            None
        };
        if let Some((msg, help)) = problem {
            let mut d = cx.diagnostic(&RULE, ap.func_span, msg);
            if let Some(h) = help {
                d = d.note(h);
            }
            out.push(d);
        }
    }
}
