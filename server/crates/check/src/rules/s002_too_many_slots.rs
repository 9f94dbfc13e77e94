//! S002 too-many-slots: more argument slots than the architecture passes.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "S002",
    name: "too-many-slots",
    severity: Severity::Error,
    doc: r#"# S002 too-many-slots

## What it does
Counts argument slots the way the kernel does (`,` advances only after a slot that read a
parameter or was `NULL`; `|` shares a slot; absolute addresses use none) and reports the
field that would need one slot more than the architecture fetches: 6 on x86_64
(`rdi rsi rdx rcx r8 r9`), 3 on x86_32 (`eax edx ecx`).

## Why is this bad?
The kernel refuses the line with `-EINVAL` (`Error: Too many arguments (max of 6)`), or,
after `unsigned`, with an unhelpful `Unexpected token` message.

## Example
```fev
f(x64 a, x64 b, x64 c, x64 d, x64 e, x64 g, x64 h)
```

## Use instead
```fev
f(x64 a, x64 b, x64 c, x64 d, x64 e, x64 g)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let target = cx.target;
    for (_, parsed) in cx.definitions() {
        let Some(r) = &parsed.rejection else { continue };
        if !r.slot_limit {
            continue;
        }
        let arch = if target.max_args == 3 { "x86_32" } else { "x86_64" };
        let mut d = Diagnostic::new(
            &RULE,
            r.at,
            format!(
                "this field needs slot {}, but {arch} passes only {} arguments (slots 0 to {})",
                target.max_args,
                target.max_args,
                target.max_args.saturating_sub(1)
            ),
        );
        if let Some(kernel) = r.kernel_message(cx.text, target) {
            d = d.note(format!("kernel: {kernel}"));
        }
        d = d.note("help: read further values through a pointer parameter, or use absolute addresses (`name=0x…`, `$sym`), which take no slot");
        out.push(d);
    }
}
