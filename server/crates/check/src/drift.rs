//! What changed in a definition's meaning between a baseline (an older kernel, or the
//! lock) and a target kernel, and the edits that restore the baseline meaning.

use crate::meaning::{Compared, DefinitionMeaning, ParamMeaning, StepSummary};
use fevlint_kernel::Kernel;
use fevlint_syntax::machine::{fold_redirects, Parsed, Redirect, Source};
use fevlint_syntax::Span;
use fevlint_types::layout;
use fevlint_types::model::TypeNamespace;

/// One change, with where it shows in the script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// D501: the function is gone; `renames` are candidates found on the target.
    FunctionGone { span: Span, renames: Vec<String> },
    /// D502: the parameter a slot reads changed (or is gone).
    Param { span: Span, old: ParamMeaning, new: Option<ParamMeaning> },
    /// D503: a member a redirect meant is elsewhere (`new_offset`) or gone (`None`).
    Member { span: Span, field: String, old: StepSummary, new_offset: Option<u64>, fix: Option<Edit> },
    /// D504: the value a field records changed size, signedness or type.
    Value { span: Span, field: String, old: String, new: String },
}

/// A text edit that restores the baseline meaning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// Compares a definition's meaning on the baseline with the target's (a summary, or the
/// target's resolution read in place: [`crate::meaning::OnKernel`]). `exists` says
/// whether the target has a function of a name ([`Kernel::function_exists`], or a memo of it).
pub fn compare(
    text: &str,
    parsed: &Parsed,
    old: &DefinitionMeaning,
    new: &impl Compared,
    target: &Kernel,
    exists: &dyn Fn(&str) -> bool,
) -> Vec<Change> {
    let mut out = Vec::new();
    let fspan = parsed.function.as_ref().map_or(Span::default(), |(_, s)| *s);
    // Gone, or only a compiler clone left (no prototype for the name: nothing to trace).
    if old.exists && (!new.exists() || (old.signature.is_some() && !new.has_signature())) {
        out.push(Change::FunctionGone { span: fspan, renames: renames(exists, &old.function) });
        return out;
    }
    let mut changed_slots = Vec::new();
    for op in &old.params {
        let np = new.param(op.slot);
        let np = np.as_deref();
        let changed = match np {
            None => true,
            // Adding `const` to a parameter changes nothing a script reads.
            Some(np) => {
                (match (&np.canonical, &op.canonical) {
                    (Some(a), Some(b)) => !same_unqualified(a, b),
                    _ => !same_unqualified(&np.ty, &op.ty),
                }) || np.size != op.size
                    || np.location != op.location
                    || np.part != op.part
                    || np.name != op.name
            }
        };
        if changed {
            let span = parsed.fields.iter().find(|f| f.slot() == Some(op.slot)).map_or(fspan, |f| f.name_span);
            out.push(Change::Param { span, old: op.clone(), new: np.cloned() });
            changed_slots.push(op.slot);
        }
    }
    for (n, (f, of)) in parsed.fields.iter().zip(&old.fields).enumerate().take(new.field_count()) {
        // The parameter itself changed (D502): what follows it means nothing comparable.
        if f.slot().is_some_and(|s| changed_slots.contains(&s)) {
            continue;
        }
        let pairs = match &f.source {
            Source::Param { redirects, .. } => fold_redirects(redirects),
            Source::Absolute { .. } => continue,
        };
        // Step i is reached by redirect pair i (a load, or the copy source of an array).
        // After a moved step the target's walk follows the wrong member, so later steps
        // are judged by where the baseline's member is on the target, independently.
        let mut moved = false;
        for (i, os) in of.steps.iter().enumerate() {
            if !moved
                && new.step(n, i).is_some_and(|(container, member)| container == os.container && member == os.member)
            {
                // Same member, wherever it now is: the meaning is unchanged (this is what a
                // fixed definition looks like).
                continue;
            }
            let new_offset = member_offset(target, &os.container, &os.member);
            if new_offset == Some(os.offset) {
                // Still there (another union alternative was named, or the container
                // changed upstream and is reported at that step).
                continue;
            }
            let Some(pair) = pairs.get(i) else { break };
            let fix = new_offset.and_then(|no| retarget(text, f, pair.span, os.offset, no));
            out.push(Change::Member { span: pair.span, field: f.name.clone(), old: os.clone(), new_offset, fix });
            moved = true;
        }
        if moved {
            continue;
        }
        let describe = |t: Option<&str>, s: Option<u64>, g: Option<bool>| {
            format!(
                "{}{}{}",
                t.unwrap_or("?"),
                s.map(|s| format!(", {s} byte{}", if s == 1 { "" } else { "s" })).unwrap_or_default(),
                g.map(|g| if g { ", signed" } else { ", unsigned" }).unwrap_or_default()
            )
        };
        let (recorded, value_type, value_size, value_signed) = new.value(n);
        if of.value.is_some() && recorded && (of.value_size != value_size || of.value_signed != value_signed) {
            let (old, new) = (
                describe(of.value_type.as_deref(), of.value_size, of.value_signed),
                describe(value_type, value_size, value_signed),
            );
            out.push(Change::Value { span: f.type_span, field: f.name.clone(), old, new });
        }
    }
    out
}

/// Where `member` of `container` (`struct file`, `f_op`) is on the kernel.
pub fn member_offset(kernel: &Kernel, container: &str, member: &str) -> Option<u64> {
    let src = kernel.types()?;
    let mut container = container.trim();
    while let Some(rest) = container.strip_prefix("const ").or_else(|| container.strip_prefix("volatile ")) {
        container = rest.trim_start();
    }
    let (ns, name) = match container.split_once(' ') {
        Some(("struct", n)) => (TypeNamespace::Struct, n),
        Some(("union", n)) => (TypeNamespace::Union, n),
        _ => (TypeNamespace::Ordinary, container),
    };
    let ty = *src.find_type(ns, name).ok()?.first()?;
    let path = member.trim_start_matches('.');
    if path.is_empty() || path.starts_with('[') {
        return None;
    }
    layout::resolve_member(src, ty, path).ok().flatten().map(|m| m.offset)
}

/// Rewrites the redirect pair at `span` so its offset goes from `old` to `new`: adjusts
/// its last `+N` (or adds one before `[`). `None` when that cannot be done exactly.
fn retarget(text: &str, f: &fevlint_syntax::machine::Field, span: Span, old: u64, new: u64) -> Option<Edit> {
    let Source::Param { redirects, .. } = &f.source else { return None };
    let in_pair: Vec<&Redirect> =
        redirects.iter().filter(|r| span.start <= r.span().start && r.span().end <= span.end).collect();
    let delta = i128::from(new) - i128::from(old);
    let last_plus = in_pair.iter().rev().find_map(|r| match r {
        Redirect::Plus { value, span } => Some((*value, *span)),
        Redirect::Index { .. } => None,
    });
    match last_plus {
        Some((value, pspan)) => {
            let v = i128::from(value) + delta;
            if v < 0 {
                return None;
            }
            // Keep the author's notation: hex stays hex.
            let old_text = pspan.text(text);
            let hex = old_text.contains("0x") || old_text.contains("0X");
            let replacement = if v == 0 && in_pair.len() > 1 {
                String::new()
            } else if hex {
                format!("+{v:#x}")
            } else {
                format!("+{v}")
            };
            Some(Edit { span: pspan, replacement })
        }
        None if delta > 0 => {
            let first = in_pair.first()?.span();
            Some(Edit { span: Span::new(first.start, first.start), replacement: format!("+{delta}") })
        }
        None => None,
    }
}

/// Names on the target that likely replaced `name` (`exists`: whether the target has one).
pub fn renames(exists: &dyn Fn(&str) -> bool, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for cand in [format!("{name}_noprof"), format!("__{name}_noprof"), format!("__{name}"), format!("{name}_common")] {
        if exists(&cand) {
            out.push(cand);
        }
    }
    if let Some(base) = name.strip_suffix("_noprof") {
        if exists(base) {
            out.push(base.to_owned());
        }
    }
    out
}

/// Whether two C type names are the same without `const`/`volatile` (compared word by
/// word: `const char *` is `char *`).
fn same_unqualified(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let words = |t| str::split_whitespace(t).filter(|w| !matches!(*w, "const" | "volatile"));
    words(a).eq(words(b))
}
