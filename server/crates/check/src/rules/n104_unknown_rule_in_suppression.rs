//! N104 unknown-rule-in-suppression: a suppression names a code no rule has.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "N104",
    name: "unknown-rule-in-suppression",
    severity: Severity::Error,
    doc: r#"# N104 unknown-rule-in-suppression

## What it does
Finds codes in a suppression comment (`# fevlint: ignore[CODE, …]`) that are neither the
code (`T404`) nor the name (`offset-not-member`) of a rule.

## Why is this bad?
A misspelt code suppresses nothing, so the finding it was meant for is still reported,
or, once that is fixed, the comment claims a rule is silenced that never was. Rules are
matched exactly, never by prefix, so `ignore[T40]` is an unknown code too.

## Example
```fev
ip_rcv(x64 skb | int skb[32])  # fevlint: ignore[N012]
```

## Use instead
```fev
ip_rcv(x64 skb | int skb[32])  # fevlint: ignore[N102]
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for s in crate::suppress::parse(cx.text) {
        for code in s.codes.iter().flatten().filter(|c| c.rule.is_none()) {
            out.push(
                Diagnostic::new(&RULE, code.span, format!("no rule has the code or name `{}`", code.text))
                    .note("help: `fevlint rule` lists the rules; codes are matched exactly, not as prefixes"),
            );
        }
    }
}
