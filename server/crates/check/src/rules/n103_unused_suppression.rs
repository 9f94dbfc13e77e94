//! N103 unused-suppression: a `# fevlint: ignore[…]` that dropped nothing.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::suppress::{Suppression, Usage};

pub static RULE: Rule = Rule {
    code: "N103",
    name: "unused-suppression",
    severity: Severity::Warning,
    doc: r#"# N103 unused-suppression

## What it does
Finds suppression comments (`# fevlint: ignore[CODE, …]` or a bare `# fevlint: ignore`)
that suppress nothing: a listed rule that ran and reported nothing on the line, or a
suppression on its own line that no definition follows directly (comment lines in
between are skipped; a blank line ends the search).

Only rules that ran count. Kernel rules (`K`, `A`, `T`, `D`) run only when a kernel is
given (`--kernel` or `kernels` in `fevlint.toml`): without one, a suppression of such a
code is not unused, because the check that it silences did not run. Likewise for rules
turned off by `select`/`ignore`. A bare `ignore` is reported only when every rule ran.
Suppressions cannot silence N103 and N104 themselves; use `ignore` in `fevlint.toml`.

## Why is this bad?
A suppression outlives the finding it was written for: after the script is fixed, or the
kernel changes, it silently hides the next, different finding of that rule on the line.

## Example
```fev
vfs_read(x64 file)  # fevlint: ignore[N102]
```

## Use instead
```fev
vfs_read(x64 file)
```
"#,
    check,
};

/// N103 needs every other rule's findings, so it does not run in the rule loop:
/// `analysis` calls [`report`] after applying the suppressions.
fn check(_: &Context<'_>, _: &mut Vec<Diagnostic>) {}

/// Reports the suppressions (and listed codes) that dropped nothing. `ran` says whether
/// a rule code ran in this analysis; `all_ran` whether every rule did.
pub fn report(
    suppressions: &[Suppression],
    usage: &Usage,
    ran: &dyn Fn(&str) -> bool,
    all_ran: bool,
    out: &mut Vec<Diagnostic>,
) {
    for (s, used) in suppressions.iter().zip(usage) {
        if s.target.is_none() {
            out.push(
                Diagnostic::new(&RULE, s.span, "this suppression applies to no definition")
                    .note("a suppression on its own line applies to the definition on the next line; comment lines in between are skipped, a blank line is not")
                    .note("help: move it directly above the definition, or to the end of its line"),
            );
            continue;
        }
        match &s.codes {
            None => {
                if all_ran && !used.first().copied().unwrap_or(false) {
                    out.push(
                        Diagnostic::new(&RULE, s.span, "`ignore` suppresses nothing on this line")
                            .note("help: remove the suppression"),
                    );
                }
            }
            Some(codes) => {
                for (c, &u) in codes.iter().zip(used) {
                    let Some(rule) = c.rule else { continue };
                    if !u && ran(rule.code) {
                        out.push(
                            Diagnostic::new(
                                &RULE,
                                c.span,
                                format!("`{}` ({}) is not reported on this line", rule.code, rule.name),
                            )
                            .note("help: remove it from the suppression"),
                        );
                    }
                }
            }
        }
    }
}
