//! The rules: one file per rule with its documentation, and the registry.
//!
//! Codes are grouped by the input a rule needs: `S` the line alone, `N` names within a
//! file, `K` kernel symbols, `A` ABI and registers, `T` types and layouts, `D` drift.
//! Rules produce `Diagnostic`s with byte spans; they never render or speak LSP.

use crate::diagnostic::{Diagnostic, Severity};
use crate::syntax::{LineParse, Parsed, Target};

mod s001_syntax_error;
mod s002_too_many_slots;
mod s003_ignored_offset;
mod s004_line_too_long;
mod s005_nul_byte;
mod s006_uncounted_slot;

/// What a rule may look at.
#[derive(Debug)]
pub struct Context<'a> {
    pub text: &'a str,
    /// What the kernel makes of each line.
    pub lines: &'a [LineParse],
    pub target: Target,
}

impl Context<'_> {
    /// The definitions (blank and comment lines skipped).
    pub fn definitions(&self) -> impl Iterator<Item = (&LineParse, &Parsed)> {
        self.lines.iter().filter_map(|l| l.parsed.as_ref().map(|p| (l, p)))
    }
}

/// A rule: identity, documentation and check.
#[derive(Debug)]
pub struct Rule {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    /// Markdown: `What it does`, `Why is this bad?`, `Example`, `Use instead`.
    pub doc: &'static str,
    pub check: fn(&Context<'_>, &mut Vec<Diagnostic>),
}

/// Every rule, sorted by code.
pub static REGISTRY: &[&Rule] = &[
    &s001_syntax_error::RULE,
    &s002_too_many_slots::RULE,
    &s003_ignored_offset::RULE,
    &s004_line_too_long::RULE,
    &s005_nul_byte::RULE,
    &s006_uncounted_slot::RULE,
];

pub fn by_code(code: &str) -> Option<&'static Rule> {
    REGISTRY.iter().copied().find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
}

/// Runs every rule and returns the diagnostics in a stable order (position, then code).
pub fn check(cx: &Context<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in REGISTRY {
        (rule.check)(cx, &mut out);
    }
    out.sort_by(|a, b| (a.span.start, a.span.end, a.code).cmp(&(b.span.start, b.span.end, b.code)));
    out
}

/// The `Example` and `Use instead` code blocks of a rule's doc, for the doc tests.
pub fn doc_examples(doc: &str) -> (String, String) {
    let mut example = String::new();
    let mut use_instead = String::new();
    let mut section = "";
    let mut in_code = false;
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            section = if h.starts_with("Example") {
                "example"
            } else if h.starts_with("Use instead") {
                "instead"
            } else {
                ""
            };
            continue;
        }
        if line.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            let target = match section {
                "example" => &mut example,
                "instead" => &mut use_instead,
                _ => continue,
            };
            target.push_str(line);
            target.push('\n');
        }
    }
    (example, use_instead)
}
