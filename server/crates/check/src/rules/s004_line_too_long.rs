//! S004 line-too-long: the line does not fit the kernel's 4096-byte write buffer.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_syntax::lex::MAX_LINE_LEN;
use fevlint_syntax::Span;

pub static RULE: Rule = Rule {
    code: "S004",
    name: "line-too-long",
    severity: Severity::Error,
    doc: r#"# S004 line-too-long

## What it does
Reports lines longer than 4094 bytes (`WRITE_BUFSIZE - 2`, room for the newline and the
terminating NUL), comments included: the kernel measures the line before cutting `#`.

## Why is this bad?
`trace_parse_run_command()` refuses the whole write with `-EINVAL` and logs
`Line length is too long: Should be less than 4094`.

## Example
```fev
f(int a) # {4100 × "x"}
```

## Use instead
```fev
# split long comments over several lines
f(int a)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for line in cx.lines {
        if !line.too_long() {
            continue;
        }
        let start = line.line.span.start + MAX_LINE_LEN;
        out.push(
            Diagnostic::new(
                &RULE,
                Span::new(start, line.line.span.end),
                format!("the line is {} bytes long; the kernel accepts at most {MAX_LINE_LEN}", line.line.span.len()),
            )
            .note("kernel: Line length is too long: Should be less than 4094"),
        );
    }
}
