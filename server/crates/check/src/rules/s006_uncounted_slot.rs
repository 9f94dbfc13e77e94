//! S006 uncounted-slot: an absolute field joined with `|` stops the kernel from counting the slot.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_syntax::machine::Source;

pub static RULE: Rule = Rule {
    code: "S006",
    name: "uncounted-slot",
    severity: Severity::Warning,
    doc: r#"# S006 uncounted-slot

## What it does
Finds a slot whose fields read a parameter but whose last `|`-joined field is an
absolute address (`x64 a | int b=0x…`).

## Why is this bad?
The parser clears its "this slot read a parameter" flag when it meets an absolute
address, so that slot is not counted. After a `,` the next slot then reads the *same*
parameter again; at the end of the definition the slot is not fetched at all and its
fields record 0.

## Example
```fev
f(x64 a | int b=0xffffffff82354c18, x64 c)
```

## Use instead
```fev
f(int b=0xffffffff82354c18 | x64 a, x64 c)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, parsed) in cx.definitions() {
        if parsed.rejection.is_some() {
            continue;
        }
        // Fields of one slot are consecutive; find param fields followed by an absolute
        // field before the next slot starts.
        let fields = &parsed.fields;
        for (i, f) in fields.iter().enumerate() {
            let Source::Absolute { .. } = f.source else { continue };
            let Some(prev) = i.checked_sub(1).map(|j| &fields[j]) else { continue };
            let Some(slot) = prev.slot() else { continue };
            let joined = cx.text.get(prev.span.end..f.span.start).is_some_and(|between| between.contains('|'));
            let next_param = fields[i + 1..].iter().find_map(|g| g.slot().map(|s| (s, g)));
            let ends_slot = match next_param {
                Some((_, g)) => cx.text.get(f.span.end..g.span.start).is_some_and(|b| b.contains(',')),
                None => true,
            };
            if !joined || !ends_slot {
                continue;
            }
            let consequence = match next_param {
                Some((s, g)) if s == slot => {
                    format!("`{}` after the `,` reads parameter {slot} again, not parameter {}", g.name, slot + 1)
                }
                Some(_) => continue,
                None if slot >= parsed.slots => format!("slot {slot} is never fetched: `{}` records 0", prev.name),
                None => continue,
            };
            out.push(
                Diagnostic::new(
                    &RULE,
                    f.span,
                    format!("this absolute field ends slot {slot}, so the kernel does not count it"),
                )
                .note(consequence)
                .note("help: put absolute fields first in a `|` group, or in a group of their own"),
            );
        }
    }
}
