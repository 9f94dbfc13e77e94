//! A310 arg-beyond-parameters: a kprobe's `argN` reads a register no parameter is in.

use super::Rule;
use crate::bpftrace_facts::{probe_exprs, probe_function, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::{Expr, ExprKind, ProbeKind};
use fevlint_types::abi;

pub static RULE: Rule = Rule {
    code: "A310",
    name: "arg-beyond-parameters",
    severity: Severity::Warning,
    doc: r#"# A310 arg-beyond-parameters

## What it does
Places the kprobe's function's parameters in the argument registers (SysV x86_64:
`rdi rsi rdx rcx r8 r9`, a 9–16-byte struct by value in two) and checks that each
`argN` reads a register a parameter is in, and which part of it.

## Why is this bad?
`argN` past the last parameter reads whatever the caller left in that register: the
script prints plausible garbage. The function lost a parameter, or `argN` counts a
by-value struct as one register when it takes two.

## Example
```bt
kprobe:vfs_read { @[arg4] = count(); }
```

## Use instead
```bt
kprobe:vfs_read { @[arg2] = count(); }
```
"#,
    check: super::no_script_check,
};

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    let Some(types) = f.kernel.types() else { return };
    for probe in cx.probes() {
        let Some((kind, facts)) = probe_function(f, probe) else { continue };
        if kind != ProbeKind::Kprobe || facts.prototypes.len() != 1 {
            continue;
        }
        let proto = &facts.prototypes[0].proto;
        if proto.variadic {
            continue;
        }
        let Ok(locs) = abi::locate(f.kernel.arch, types, proto) else { continue };
        let holds = abi::slot_holds(f.kernel.arch, &locs);
        let regs = abi::arg_registers(f.kernel.arch);
        probe_exprs(probe, &mut |e: &Expr| {
            let ExprKind::Builtin(b) = &e.kind else { return };
            let Some(n) = b.strip_prefix("arg").and_then(|d| d.parse::<usize>().ok()) else { return };
            if n >= regs.len() {
                return;
            }
            let params = proto.params.len();
            match &holds[n] {
                None => {
                    let span = fevlint_syntax::Span::new(e.span.start, e.span.end);
                    let mut d = Diagnostic::new(
                        &RULE,
                        span,
                        format!(
                            "`{b}` is `{}`, which holds no parameter of `{}` in {}",
                            regs[n], facts.name, f.kernel.name
                        ),
                    )
                    .note(format!(
                        "`{}` takes {params} parameter{}",
                        facts.name,
                        if params == 1 { "" } else { "s" }
                    ));
                    d.kernel = Some(f.kernel.name.as_str().into());
                    out.push(d);
                }
                Some(h) if h.parts > 1 && h.part > 0 => {
                    let name = proto.params[h.param].name.clone().unwrap_or_else(|| format!("parameter {}", h.param));
                    let span = fevlint_syntax::Span::new(e.span.start, e.span.end);
                    let mut d = Diagnostic::new(
                        &RULE,
                        span,
                        format!(
                            "`{b}` holds {} of `{}` in {}, not a parameter of its own",
                            h.describe(&name),
                            facts.name,
                            f.kernel.name
                        ),
                    );
                    d.kernel = Some(f.kernel.name.as_str().into());
                    out.push(d);
                }
                _ => {}
            }
        });
    }
}
