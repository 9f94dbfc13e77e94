//! S001 syntax-error: the kernel's parser would reject the line.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use fevlint_syntax::machine::RejectKind;

pub static RULE: Rule = Rule {
    code: "S001",
    name: "syntax-error",
    severity: Severity::Error,
    doc: r#"# S001 syntax-error

## What it does
Runs each line through a transcription of the kernel's own parser (the state machine of
`kernel/trace/trace_event_ftrace.c`) and reports the token it would stop at, with the
message the kernel writes into `function_events` (`Unexpected token 'x86' for COMMA
state`, `Unexpected ending`).

## Why is this bad?
The write to `function_events` fails with `-EINVAL` and no event is created. The
kernel's caret is drawn under its own re-rendering of the line, not under your text,
and it keeps only the last error of a write.

## Example
```fev
ip_rcv(x64 skb, x86 dev)
```

## Use instead
```fev
ip_rcv(x64 skb, x64 dev)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let target = cx.target;
    for (line, parsed) in cx.definitions() {
        let Some(r) = &parsed.rejection else { continue };
        if r.slot_limit || line.too_long() {
            continue; // S002 / S004 say it better.
        }
        let token = fevlint_syntax::machine::lossy(cx.text, r.at);
        let message = match r.kind {
            RejectKind::UnexpectedToken | RejectKind::TooManyArgs => format!("unexpected `{token}` here"),
            RejectKind::UnexpectedEnding => "the definition ends before its closing `)`".to_owned(),
            RejectKind::Silent if parsed.function.is_none() => {
                format!("a definition must start with a function name, not `{token}`")
            }
            RejectKind::Silent => format!("unexpected `{token}`"),
        };
        let mut d = Diagnostic::new(&RULE, r.at, message);
        if let Some(kernel) = r.kernel_message(cx.text, target) {
            d = d.note(format!("kernel: {kernel}"));
        } else {
            d = d.note("the kernel rejects this line without any message (no function name was parsed)");
        }
        if let Some(help) = help(r.state, &token) {
            d = d.note(format!("help: {help}"));
        }
        out.push(d);
    }
}

/// What the parser wanted in that state.
fn help(state: fevlint_syntax::machine::State, token: &str) -> Option<String> {
    use fevlint_syntax::machine::State as S;
    let types = "long int short char size_t u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 symbol string";
    Some(match state {
        S::Init => "start with the name of a traceable kernel function".to_owned(),
        S::Func => {
            if token == "." {
                "compiler clones such as `f.isra.0` cannot be named: the tokenizer splits at `.`".to_owned()
            } else {
                "expected `(` after the function name".to_owned()
            }
        }
        S::Param | S::Comma | S::Pipe => format!("expected `NULL`, `unsigned` or a type: {types}"),
        S::Unsigned => format!("`unsigned` must be followed by one type: {types}"),
        S::Type => {
            if token == "[" {
                "`string` cannot be an array: use `char[N]` for a fixed-size buffer".to_owned()
            } else {
                "expected a field name, `0x…` or `$symbol`".to_owned()
            }
        }
        S::Array => "expected a non-zero array size (decimal, `0x` hex or `0` octal)".to_owned(),
        S::ArraySize | S::Indirect => "expected `]`".to_owned(),
        S::ArrayEnd => "expected a field name, `0x…` or `$symbol`".to_owned(),
        S::Var => "expected `+N`, `[N]`, `=`, `|`, `,` or `)` (there are no `-` offsets or `->` chains)".to_owned(),
        S::BracketEnd => "expected `+N`, `[N]`, `|`, `,` or `)`".to_owned(),
        S::Plus | S::Bracket => "expected an unsigned number (decimal, `0x` hex or `0` octal)".to_owned(),
        S::Equal => "expected an address starting with `0x`, or `$symbol`".to_owned(),
        S::Symbol => "expected a kernel symbol name".to_owned(),
        S::Addr => "an absolute address takes no redirects: expected `|`, `,` or `)`".to_owned(),
        S::Null => "`NULL` fills a whole slot: expected `,` or `)`".to_owned(),
        S::End => "nothing may follow `)`; comments start with `#`".to_owned(),
        S::Error => return None,
    })
}
