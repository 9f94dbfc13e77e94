//! T413 retval-of-void: `retval` in a `kretfunc:`/`fexit:` probe of a function that
//! returns nothing.

use super::Rule;
use crate::bpftrace_facts::{probe_exprs, probe_function, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::{Expr, ExprKind, ProbeKind};

pub static RULE: Rule = Rule {
    code: "T413",
    name: "retval-of-void",
    severity: Severity::Error,
    doc: r#"# T413 retval-of-void

## What it does
Checks every `retval` of a `kretfunc:` (`fexit:`) probe against the function's BTF
prototype: a function that returns `void` has no return value to read.

## Why is this bad?
bpftrace types `retval` of a kretfunc from BTF, so of a `void` function it has no type
and the script is refused (`Invalid expression for assignment: none`, `Undefined map`).
The function stopped returning a value, or the script meant another function. (A
`kretprobe:` reads the return register whatever the function returns, and is not
checked.)

## Example
```bt
kretfunc:tcp_close { @ = retval; }
```

## Use instead
```bt
kretfunc:tcp_sendmsg { @ = retval; }
```
"#,
    check: super::no_script_check,
};

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    for probe in cx.probes() {
        let Some((kind, facts)) = probe_function(f, probe) else { continue };
        if !matches!(kind, ProbeKind::Kretfunc | ProbeKind::Fexit) || facts.prototypes.len() != 1 {
            continue;
        }
        if facts.prototypes[0].proto.ret.is_some() {
            continue;
        }
        probe_exprs(probe, &mut |e: &Expr| {
            if matches!(&e.kind, ExprKind::Builtin(b) if b == "retval") {
                out.push(cx.diagnostic(
                    &RULE,
                    e.span,
                    format!("`{}` returns `void` in {}: `retval` has no value", facts.name, f.kernel.name),
                ));
            }
        });
    }
}
