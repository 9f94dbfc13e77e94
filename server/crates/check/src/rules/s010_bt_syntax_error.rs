//! S010 bt-syntax-error: bpftrace 0.17 refuses the script before it looks at a kernel.

use super::Rule;
use crate::bpftrace_facts::BtContext;
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "S010",
    name: "bt-syntax-error",
    severity: Severity::Error,
    doc: r#"# S010 bt-syntax-error

## What it does
Reads a bpftrace script (`*.bt`) as Debian's bpftrace 0.17 does (its lexer, its bison
grammar with the same conflict resolutions, its attach-point parser) and reports what
bpftrace refuses, at the token, with bpftrace's own message: `syntax error, unexpected
X`, `Unknown function: f`, `Invalid probe type: p`, `kretprobe` offsets, integers out
of range, unterminated strings.

## Why is this bad?
bpftrace stops before attaching anything. Probe types of later releases (`fentry:`,
`fexit:`, `rawtracepoint:`) are among them: 0.17 calls the first two `kfunc:` and
`kretfunc:`.

## Example
```bt
kprobe:vfs_read { @x = ; }
```

## Use instead
```bt
kprobe:vfs_read { @x = count(); }
```
"#,
    check: super::no_script_check,
};

pub fn check(cx: &BtContext<'_>, out: &mut Vec<Diagnostic>) {
    for e in &cx.parse.errors {
        let span = fevlint_syntax::Span::new(e.span.start, e.span.end);
        let mut d = Diagnostic::new(&RULE, span, lower_first(&e.message)).note(format!("bpftrace: {}", e.message));
        if let Some(p) = e.message.strip_prefix("Invalid probe type: ") {
            if let Some((_, _, _, old)) = fevlint_bpftrace::probe::LATER.iter().find(|(n, a, _, _)| *n == p || *a == p)
            {
                d = d.note(if old.is_empty() {
                    format!("help: `{p}` probes came after bpftrace 0.17; use `tracepoint:` or `kprobe:` there")
                } else {
                    format!("help: bpftrace 0.17 calls this probe type `{old}`")
                });
            }
        }
        out.push(d);
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        _ => String::new(),
    }
}
