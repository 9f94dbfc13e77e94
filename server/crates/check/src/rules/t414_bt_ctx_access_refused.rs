//! T414 ctx-access-refused: a kfunc's `args->p` or a kretfunc's `retval` whose BTF type
//! the verifier does not let a tracing program read.

use super::Rule;
use crate::bpftrace_facts::{probe_exprs, probe_function, BtContext};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_bpftrace::{Expr, ExprKind, ProbeKind};
use fevlint_types::layout;
use fevlint_types::model::{Type, TypeRef, TypeSource};

pub static RULE: Rule = Rule {
    code: "T414",
    name: "ctx-access-refused",
    severity: Severity::Error,
    doc: r#"# T414 ctx-access-refused

## What it does
Checks the type of every `args->param` a `kfunc:` reads and of `retval` in a `kretfunc:`
as the kernel's verifier does (`btf_ctx_access()`): a pointer must point to `void`, an
integer, a struct or a union (typedefs and qualifiers looked through). A pointer to a
pointer, an enum, a function, an array or a type declared but not defined is refused.

## Why is this bad?
bpftrace compiles the script, then the kernel refuses to load the program (`Error
loading program`, `invalid bpf_context access`): nothing is traced.

## Example
```bt
kretfunc:pcpu_get_vm_areas { @ = retval; }
```

## Use instead
```bt
kretprobe:pcpu_get_vm_areas { @ = retval; }
```
"#,
    check: super::no_script_check,
};

/// What a pointer of type `ty` points to when the verifier refuses it, in words.
fn refused(t: &dyn TypeSource, ty: TypeRef) -> Option<&'static str> {
    let Ok((_, Type::Pointer { target })) = layout::strip(t, ty) else { return None };
    match layout::strip(t, target).ok()?.1 {
        Type::Pointer { .. } => Some("a pointer"),
        Type::Enum { .. } => Some("an enum"),
        Type::Function(_) => Some("a function"),
        Type::Array { .. } => Some("an array"),
        Type::Forward { .. } => Some("a type declared but not defined"),
        _ => None,
    }
}

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(f) = cx.facts() else { return };
    let Some(types) = f.kernel.types() else { return };
    for probe in cx.probes() {
        let Some((kind, facts)) = probe_function(f, probe) else { continue };
        if !kind.is_btf_function() || facts.prototypes.len() != 1 {
            continue;
        }
        let proto = &facts.prototypes[0].proto;
        let on_return = matches!(kind, ProbeKind::Kretfunc | ProbeKind::Fexit);
        probe_exprs(probe, &mut |e: &Expr| {
            let (what, ty, span) = match &e.kind {
                ExprKind::Builtin(b) if b == "retval" && on_return => match proto.ret {
                    Some(ty) => ("`retval`".to_owned(), ty, e.span),
                    None => return,
                },
                ExprKind::Field { base, field, field_span, .. } if matches!(&base.kind, ExprKind::Builtin(b) if b == "args") =>
                {
                    let Some(p) = proto.params.iter().find(|p| p.name.as_deref() == Some(field.as_str())) else {
                        return;
                    };
                    (format!("`args->{field}`"), p.ty, *field_span)
                }
                _ => return,
            };
            let Some(target) = refused(types, ty) else { return };
            let name = layout::type_name(types, ty).unwrap_or_default();
            out.push(
                cx.diagnostic(
                    &RULE,
                    span,
                    format!(
                        "the verifier refuses {what} of `{}` in {}: `{name}` points to {target}, not to a struct, an integer or `void`",
                        facts.name, f.kernel.name
                    ),
                )
                .note("help: a `kprobe:`/`kretprobe:` reads the register whatever its type"),
            );
        });
    }
}
