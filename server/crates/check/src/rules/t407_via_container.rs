//! T407 via-container: an offset past the end of the declared type, read as a member of
//! a struct that embeds it.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::resolve::Problem;

pub static RULE: Rule = Rule {
    code: "T407",
    name: "via-container",
    severity: Severity::Warning,
    doc: r#"# T407 via-container

## What it does
When an offset lands past the end of a pointer's declared type, looks for structs that
embed that type at offset 0 (`struct tcp_sock` starts with `struct
inet_connection_sock`, which starts with `struct inet_sock`, which starts with `struct
sock`) and, if the offset is a member there, says which one and keeps checking the rest
of the field through that struct. When the type is the base of a family of structs
(`struct sockaddr`, which callers fill as a `sockaddr_in6`, a `sockaddr_un`, …: structs
named after it that start with the same tag), names the ones the offset fits instead.
Unions are never taken as containers: a union holding the type holds other things, not
more of it.

## Why is this bad?
It is not wrong by itself: kernel code casts (`tcp_sk(sk)`, `container_of`) and scripts
follow. But the cast is an assumption the prototype does not show: if the function is
ever called with another kind of object (a UDP socket), the field reads unrelated
memory. The diagnostic records the assumption; suppress it with
`# fevlint: ignore[T407]` once checked.

## Example
```fev
tcp_retransmit_skb(x64 sk | u32 snd_cwnd+1500[0])
```

## Use instead
```fev
tcp_retransmit_skb(x64 sk, x64 skb, int segs)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    for (_, _, r) in cx.resolved() {
        for m in &r.fields {
            for p in &m.problems {
                if let Problem::PastEndFits { span, declared, size, fits } = p {
                    out.push(
                        cx.kernel_diagnostic(&RULE, *span, format!("past the end of `{declared}` ({size} bytes): it fits {fits}"))
                            .note(format!("this assumes a larger struct that starts like `{declared}` (which one is the caller's to know)")),
                    );
                    continue;
                }
                let Problem::ViaContainer { span, declared, container, member, others } = p else { continue };
                let mut d = cx
                    .kernel_diagnostic(&RULE, *span, format!("past the end of `{declared}`: read as `{member}` of `{container}`, which embeds it"))
                    .note(format!("this assumes the `{declared}` is the start of a `{container}` (a cast the prototype does not show)"));
                if !others.is_empty() {
                    d = d.note(format!("also possible: {}", others.join(", ")));
                }
                out.push(d);
            }
        }
    }
}
