//! K201 unknown-function: the kernel has no function of that name.

use std::collections::HashMap;

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};

pub static RULE: Rule = Rule {
    code: "K201",
    name: "unknown-function",
    severity: Severity::Error,
    doc: r#"# K201 unknown-function

## What it does
Looks the function up in the kernel's types, its ftrace list and its symbol map, and
reports names the kernel does not have, with the closest names it does have and known
renames: `*_noprof` allocators (6.10), syscall entry points (`SyS_x` became
`__x64_sys_x`, which takes a `struct pt_regs *`, and `__do_sys_x` with the real
arguments), compiler clones.

## Why is this bad?
`ftrace_set_filter()` finds nothing to attach to and the write fails: the script was
written for another kernel, or the name is misspelt.

## Example
```fev
SyS_openat(int dfd, string path, x32 flags, x16 mode)
```

## Use instead
```fev
do_sys_openat2(int dfd, string filename, x64 how)
```
"#,
    check,
};

fn check(cx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let Some(k) = cx.kernel else { return };
    let missing = || {
        cx.resolved()
            .filter(|(_, _, r)| !r.function.exists())
            .filter_map(|(_, parsed, _)| parsed.function.as_ref().map(|(name, span)| (name.as_str(), *span)))
    };
    // Scripts repeat names: each is searched for once, all in one batch (the kernel keeps
    // the answers in the cache for the next run).
    let mut asked: Vec<&str> = missing().map(|(name, _)| name).collect();
    if asked.is_empty() {
        return;
    }
    asked.sort_unstable();
    asked.dedup();
    let similar: HashMap<&str, String> = asked
        .iter()
        .zip(k.similar_functions_of(&asked, 3))
        .map(|(&name, close)| (name, close.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")))
        .collect();
    for (name, span) in missing() {
        let mut d = cx.kernel_diagnostic(&RULE, span, format!("`{name}` does not exist in {}", k.name));
        for help in renames(&|n| cx.function_exists(n), name) {
            d = d.note(format!("help: {help}"));
        }
        if let Some(close) = similar.get(name).filter(|c| !c.is_empty()) {
            d = d.note(format!("help: similar names: {close}"));
        }
        if let Some(e) = k.symbols_error() {
            d = d.note(format!("the symbol map was not read, so only types and the ftrace list were searched: {e}"));
        }
        out.push(d);
    }
}

/// Renames the kernel is known to have made.
/// Known renames of `name` (`exists`: whether the kernel has a function of a name).
fn renames(exists: &dyn Fn(&str) -> bool, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let noprof = format!("{name}_noprof");
    if exists(&noprof) {
        out.push(format!("renamed to `{noprof}` (memory allocation profiling, 6.10)"));
    }
    let under = format!("__{name}");
    if exists(&under) {
        out.push(format!("`{under}` exists"));
    }
    let syscall =
        name.strip_prefix("SyS_").or_else(|| name.strip_prefix("sys_")).or_else(|| name.strip_prefix("compat_SyS_"));
    if let Some(sc) = syscall {
        let x64 = format!("__x64_sys_{sc}");
        if exists(&x64) {
            out.push(format!(
                "syscalls enter through `{x64}`, which takes one `struct pt_regs *regs`: read arguments as `x64 di+112[0]`, `x64 si+104[0]`, …"
            ));
        }
        let do_sys = format!("__do_sys_{sc}");
        if exists(&do_sys) {
            out.push(format!("`{do_sys}` has the real arguments (check it is traceable: it is often inlined)"));
        }
    }
    out
}
