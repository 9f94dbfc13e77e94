//! T412 str-not-string: `str()` of a kernel value that is not a string.

use super::Rule;
use crate::bpftrace_facts::{probe_exprs, string_kind, typer_for, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::{Expr, ExprKind};

pub static RULE: Rule = Rule {
    code: "T412",
    name: "str-not-string",
    severity: Severity::Warning,
    doc: r#"# T412 str-not-string

## What it does
Types the argument of `str()` where the kernel's BTF says what it is (a kfunc's
`args->param`, a tracepoint's `args->field` from its `trace_event_raw_*` layout, a member
reached from a cast or a typed `$variable`, `*p`, through `kptr()`/`uptr()`) and reports
a value that is not a string: an integer, a pointer to something other than `char` (a
warning: bpftrace reads it anyway), a struct (an error: bpftrace refuses it).

## Why is this bad?
`str()` reads bytes at the value as an address: a length or a flags word becomes an
address and the output is garbage or empty; bpftrace refuses a struct outright. The
field was retyped (a `char *` became a `struct qstr`, a name moved into a sub-struct).

## Example
```bt
kfunc:vfs_read { printf("%s\n", str(args->count)); }
```

## Use instead
```bt
kfunc:vfs_read { printf("%s\n", str(args->file->f_path.dentry->d_name.name)); }
```
"#,
    check: super::no_script_check,
};

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    let Some(types) = f.kernel.types() else { return };
    let (defined, includes) = cx.script_types();
    for probe in cx.probes() {
        let typer = typer_for(f, types, probe, &defined, includes);
        probe_exprs(probe, &mut |e: &Expr| {
            let ExprKind::Call { name, args, .. } = &e.kind else { return };
            if name != "str" {
                return;
            }
            let Some(arg) = args.first() else { return };
            let Some(ty) = typer.value_type(arg) else { return };
            if let Err(what) = string_kind(types, ty) {
                let mut d = cx.diagnostic(&RULE, arg.span, format!("`str()` of {what} in {}", f.kernel.name));
                // bpftrace compiles `str()` of an integer or any pointer (and reads
                // garbage), but refuses a struct.
                if what.starts_with("a struct") {
                    d.severity = Severity::Error;
                }
                out.push(d);
            }
        });
    }
}
