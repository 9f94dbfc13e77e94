//! S003 ignored-offset: `name+N=0x…` is accepted, but the kernel never uses the `+N`.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_syntax::machine::{Redirect, Source};

pub static RULE: Rule = Rule {
    code: "S003",
    name: "ignored-offset",
    severity: Severity::Warning,
    doc: r#"# S003 ignored-offset

## What it does
Finds redirects written between a field name and `=` in an absolute-address field, such
as `int a+8=0x1000`.

## Why is this bad?
The parser stores them but an absolute field is read with `read_address(index)`
directly: the `+8` is silently ignored, so the field reads `0x1000`, not `0x1008`.

## Example
```fev
do_IRQ(int counter+8=0xffffffff82354c18)
```

## Use instead
```fev
do_IRQ(int counter=0xffffffff82354c20)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, parsed) in cx.definitions() {
        if parsed.rejection.is_some() {
            continue;
        }
        for f in &parsed.fields {
            let Source::Absolute { ignored, .. } = &f.source else { continue };
            let (Some(first), Some(last)) = (ignored.first(), ignored.last()) else { continue };
            let span = first.span().cover(last.span());
            let sum: u64 = ignored
                .iter()
                .map(|r| match r {
                    Redirect::Plus { value, .. } => *value,
                    Redirect::Index { .. } => 0,
                })
                .fold(0u64, u64::wrapping_add);
            out.push(
                Diagnostic::new(&RULE, span, format!("the kernel ignores `{}` before `=`", span.text(cx.text)))
                    .note("an absolute-address field is read at the address after `=`; redirects are stored but never applied")
                    .note(format!("help: add the offset ({sum:#x}) to the address instead")),
            );
        }
    }
}
