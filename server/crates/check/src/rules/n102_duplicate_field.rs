//! N102 duplicate-field: two fields of one definition share a name.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "N102",
    name: "duplicate-field",
    severity: Severity::Warning,
    doc: r#"# N102 duplicate-field

## What it does
Finds two fields of one definition with the same name.

## Why is this bad?
The documentation says names must be unique but the parser does not check. The event's
`format` then lists two fields of one name: filters, triggers and histograms silently
use the first, and tools reading the format see an ambiguous record.

## Example
```fev
ip_rcv(x64 skb | int skb[32])
```

## Use instead
```fev
ip_rcv(x64 skb | int skb_word[32])
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, parsed) in cx.definitions() {
        if parsed.rejection.is_some() {
            continue;
        }
        for (i, f) in parsed.fields.iter().enumerate() {
            if let Some(prev) = parsed.fields[..i].iter().find(|g| g.name == f.name) {
                out.push(
                    Diagnostic::new(&RULE, f.name_span, format!("a field named `{}` already exists", f.name))
                        .note(format!(
                            "the first `{}` is `{}`; the event format would hold both",
                            prev.name,
                            prev.type_string()
                        ))
                        .note("help: give each field its own name"),
                );
            }
        }
    }
}
