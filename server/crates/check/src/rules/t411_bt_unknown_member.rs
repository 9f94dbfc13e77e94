//! T411 unknown-member: a `->`/`.` member chain from a cast to a kernel type names a
//! member the type does not have on this kernel.

use super::Rule;
use crate::bpftrace_facts::{member, probe_exprs, typer_for, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::{Expr, ExprKind};
use fevlint_types::layout;

pub static RULE: Rule = Rule {
    code: "T411",
    name: "unknown-member",
    severity: Severity::Error,
    doc: r#"# T411 unknown-member

## What it does
Follows casts to kernel types (`(struct sock *)arg0`), a kfunc's typed `args->param`
and a tracepoint's pointer fields (`args->mm`, typed from its `trace_event_raw_*`
layout) through `->` and `.` member chains, also through `$variables` assigned such a
value and `kptr()`/`uptr()`, and checks each member exists in
the kernel's BTF (looking through anonymous structs and unions, as C does). Types the
script defines itself take precedence, as they do in bpftrace; types only an
`#include`d header defines are left alone.

## Why is this bad?
bpftrace refuses the script (`Struct/union of type 'struct sock' does not contain a
field named ...`): the member moved into a union or a sub-struct, or was renamed.

## Example
```bt
kprobe:tcp_connect { $sk = (struct sock *)arg0; @[$sk->sk_daddr] = count(); }
```

## Use instead
```bt
kprobe:tcp_connect { $sk = (struct sock *)arg0; @[$sk->__sk_common.skc_daddr] = count(); }
```
"#,
    check: super::no_script_check,
};

/// Every member access whose base has a known kernel type and whose member that type
/// lacks: `(type name, member, span)`.
pub fn unknown_members(cx: &BtContext<'_>) -> Vec<(String, String, fevlint_bpftrace::Span)> {
    member_uses(cx).into_iter().filter(|u| !u.3).map(|(t, m, s, _)| (t, m, s)).collect()
}

/// Every member access whose base has a known kernel type: `(type name, member, span,
/// the type has it)`.
pub fn member_uses(cx: &BtContext<'_>) -> Vec<(String, String, fevlint_bpftrace::Span, bool)> {
    let Some(f) = cx.facts() else { return Vec::new() };
    let Some(types) = f.kernel.types() else { return Vec::new() };
    let (defined, includes) = cx.script_types();
    let mut out = Vec::new();
    for probe in cx.probes() {
        let typer = typer_for(f, types, probe, &defined, includes);
        probe_exprs(probe, &mut |e: &Expr| {
            let ExprKind::Field { base, field, field_span, arrow } = &e.kind else { return };
            let Some(kt) = typer.type_of(base) else { return };
            if kt.pointers != u8::from(*arrow) {
                return;
            }
            if let Some(m) = member(types, kt.ty, field, false) {
                let name = layout::type_name(types, kt.ty).unwrap_or_default();
                out.push((name, field.clone(), *field_span, m.is_some()));
            }
        });
    }
    out
}

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(k) = cx.kernel else { return };
    for (ty, field, span) in unknown_members(cx) {
        out.push(cx.diagnostic(&RULE, span, format!("`{ty}` has no member `{field}` in {}", k.name)));
    }
}
