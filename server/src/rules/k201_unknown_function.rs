//! K201 unknown-function: the kernel has no function of that name.

use super::{Context, Rule};
use crate::diagnostic::{Diagnostic, Severity};
use crate::kernel::Kernel;

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
    for (_, parsed, r) in cx.resolved() {
        if r.function.exists() {
            continue;
        }
        let Some((name, span)) = &parsed.function else { continue };
        let mut d = cx.kernel_diagnostic(&RULE, *span, format!("`{name}` does not exist in {}", k.name));
        for help in renames(k, name) {
            d = d.note(format!("help: {help}"));
        }
        let close = closest(k.function_names(), name, 3);
        if !close.is_empty() {
            d = d.note(format!(
                "help: similar names: {}",
                close.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ")
            ));
        }
        out.push(d);
    }
}

/// Renames the kernel is known to have made.
fn renames(k: &Kernel, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let exists = |n: &str| k.function(n).map(|f| f.exists()).unwrap_or(false);
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

/// Up to `n` names within a small edit distance, closest first.
pub fn closest<'a>(names: &'a [String], name: &str, n: usize) -> Vec<&'a str> {
    let max = (name.len() / 4).clamp(1, 3);
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .filter(|c| c.len().abs_diff(name.len()) <= max && !c.contains('.'))
        .filter_map(|c| {
            let d = distance(name.as_bytes(), c.as_bytes(), max)?;
            Some((d, c.as_str()))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(n).map(|(_, c)| c).collect()
}

/// Levenshtein distance, `None` when above `max`.
fn distance(a: &[u8], b: &[u8], max: usize) -> Option<usize> {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        let mut row_min = cur[0];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
            row_min = row_min.min(cur[j + 1]);
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    (prev[b.len()] <= max).then_some(prev[b.len()])
}
