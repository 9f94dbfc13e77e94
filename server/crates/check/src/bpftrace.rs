//! bpftrace scripts (`*.bt`) checked against kernels: what each attach point reaches on a
//! kernel (a function, a tracepoint, a wildcard's matches) and what each kernel-typed
//! access (`args->f`, `argN`, `((struct T *)e)->m`) resolves to. The rules in
//! `rules/` (S010, K210–K213, A310, T410, T411, D510) report from these facts.
//!
//! Invariant: a diagnostic is only about a fact a kernel model settled; what the kernel
//! data cannot decide (a tracepoint's category, a syscall tracepoint's fields when the
//! kernel has no `__do_sys_*` in BTF, types from `#include`d headers) is left alone.

use crate::diagnostic::Diagnostic;
use crate::kernel::Kernel;

pub use crate::bpftrace_facts::*;

/// Whether a file is a bpftrace script (`*.bt`).
pub fn is_bpftrace(name: &str) -> bool {
    name.ends_with(".bt")
}

/// Whether text read from standard input is a bpftrace script rather than function
/// events: a `#!…bpftrace` line, or it parses as bpftrace with a known probe type.
pub fn looks_like_bpftrace(text: &str) -> bool {
    if text.lines().next().is_some_and(|l| l.starts_with("#!") && l.contains("bpftrace")) {
        return true;
    }
    let p = fevlint_bpftrace::parse(text);
    p.accepted() && p.program.probes.iter().flat_map(|p| &p.attach_points).any(|a| a.kind.is_some())
}

/// The attach points of a script (for summaries).
pub fn attach_point_count(text: &str) -> usize {
    fevlint_bpftrace::parse(text).program.probes.iter().map(|p| p.attach_points.len()).sum()
}

/// A bpftrace script's findings on every kernel given (the first is the drift baseline),
/// sorted, with suppressions applied.
pub fn check(text: &str, kernels: &[&Kernel]) -> Vec<Diagnostic> {
    let parse = fevlint_bpftrace::parse(text);
    let mut out = Vec::new();
    let cx = BtContext::new(text, &parse, None, None);
    for (rule, check) in crate::rules::BT_RULES {
        if !rule.needs_kernel() {
            check(&cx, &mut out);
        }
    }
    for (i, k) in kernels.iter().enumerate() {
        let baseline = (i > 0).then(|| kernels[0]);
        let cx = BtContext::new(text, &parse, Some(k), baseline);
        for (rule, check) in crate::rules::BT_RULES {
            let run = if rule.needs_baseline() { baseline.is_some() } else { rule.needs_kernel() };
            if run {
                check(&cx, &mut out);
            }
        }
    }
    let suppressions = crate::rules::suppress::parse(text);
    crate::rules::suppress::apply(text, &suppressions, &mut out);
    crate::rules::sort(&mut out);
    out
}
