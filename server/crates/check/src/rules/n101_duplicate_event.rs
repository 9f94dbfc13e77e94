//! N101 duplicate-event: one function defined twice in a file.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "N101",
    name: "duplicate-event",
    severity: Severity::Error,
    doc: r#"# N101 duplicate-event

## What it does
Finds a function that two definitions of the same script use.

## Why is this bad?
Each definition creates the event `functions/<function>`. The second one cannot be
registered (an event of that name exists) and the write fails; the fields of the second
line are never recorded.

## Example
```fev
vfs_read(x64 file)
vfs_read(x64 file, x64 buf)
```

## Use instead
```fev
vfs_read(x64 file, x64 buf)
```
"#,
    check,
};

/// The function whose event a line creates: an accepted definition's (a rejected line
/// creates nothing).
pub fn event(line: &fevlint_syntax::LineParse) -> Option<&(String, fevlint_syntax::Span)> {
    line.parsed.as_ref().filter(|p| p.rejection.is_none())?.function.as_ref()
}

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    // Shared by every finding: a script repeated a hundred times has thousands.
    static NOTES: std::sync::LazyLock<[std::sync::Arc<str>; 2]> = std::sync::LazyLock::new(|| {
        [
            "the kernel names events after the function: this write fails and its fields are never recorded".into(),
            "help: merge the fields into one definition".into(),
        ]
    });
    let mut first: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    // A script repeats names: room for a few thousand, grown past that if they differ.
    first.reserve(cx.lines.len().min(1 << 12));
    for line in cx.lines {
        let Some((name, span)) = event(line) else { continue };
        match first.get(name.as_str()) {
            Some(&at) => out.push(
                Diagnostic::new(&RULE, *span, format!("`{name}` already has an event (line {})", at + 1))
                    .note(NOTES[0].clone())
                    .note(NOTES[1].clone()),
            ),
            None => {
                first.insert(name, line.number);
            }
        }
    }
}
