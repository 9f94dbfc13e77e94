//! The rules: one file per rule with its documentation, and the registry.
//!
//! Codes are grouped by the input a rule needs: `S` the line alone, `N` names within a
//! file, `K` kernel symbols, `A` ABI and registers, `T` types and layouts, `D` drift,
//! `B` compiled BPF objects (CO-RE relocations and attach points, [`BPF_RULES`]).
//! Rules produce `Diagnostic`s with byte spans; they never render or speak LSP.

use crate::diagnostic::{Diagnostic, Severity};
use fevlint_kernel::Kernel;
use fevlint_syntax::{LineParse, Parsed, Target};
use std::sync::OnceLock;

use crate::{drift, meaning, resolve};
// Not a rule, yet here: suppression comments name rules by code or name, so parsing
// them looks codes up in the registry below (`by_code`), and N103/N104 are rules over
// the parsed comments. As a module beside `rules` the two would import each other; inside
// it they form no circle. `server/tests/tidy.rs` holds `rules/` to rule files, `mod.rs`
// and this one.
pub mod suppress;

mod a301_slot_not_parameter;
mod a302_slot_beyond_parameters;
mod a310_bt_arg_beyond_parameters;
mod b601_relocation_fails;
mod b602_guarded_relocation;
mod b603_object_refused;
mod b604_relocation_drift;
mod b611_attach_point_missing;
mod b612_ksym_missing;
mod b613_tracing_argument_missing;
mod d501_function_gone;
mod d502_signature_changed;
mod d503_member_moved;
mod d504_value_changed;
mod d505_lock_mismatch;
mod d510_bt_probe_drift;
mod k201_unknown_function;
mod k202_not_traceable;
mod k203_ambiguous_function;
mod k210_bt_probe_missing;
mod k211_bt_not_attachable;
mod k212_bt_wildcard_matches_nothing;
mod k213_bt_wildcard_matches_many;
pub(crate) mod n101_duplicate_event;
mod n102_duplicate_field;
pub(crate) mod n103_unused_suppression;
mod n104_unknown_rule_in_suppression;
mod s001_syntax_error;
mod s002_too_many_slots;
mod s003_ignored_offset;
mod s004_line_too_long;
mod s005_nul_byte;
mod s006_uncounted_slot;
mod s010_bt_syntax_error;
mod t401_size_mismatch;
mod t402_string_not_char_pointer;
mod t403_symbol_not_pointer;
mod t404_offset_not_member;
mod t405_deref_non_pointer;
mod t406_address_not_value;
mod t407_via_container;
mod t408_user_fetch_of_kernel_memory;
mod t410_bt_unknown_args_field;
mod t411_bt_unknown_member;
mod t412_bt_str_not_string;
mod t413_bt_retval_of_void;
mod t414_bt_ctx_access_refused;

/// What a rule may look at.
#[derive(Debug)]
pub struct Context<'a> {
    pub text: &'a str,
    /// What the kernel makes of each line.
    pub lines: &'a [LineParse],
    pub target: Target,
    /// The kernel checked against, if any.
    pub kernel: Option<&'a Kernel>,
    /// Per line: the definition resolved against the kernel (computed on first use).
    resolutions: OnceLock<Vec<Option<resolve::Resolution>>>,
    /// What resolving asked of the kernel's types, for the next definitions.
    memo: Option<resolve::Memo<'a>>,
    /// What drift rules compare the kernel with.
    pub baseline: Option<Baseline<'a>>,
    /// Per line: the changes since the baseline (computed on first use).
    drift: OnceLock<Vec<Vec<drift::Change>>>,
    /// Names asked of the kernel by rename suggestions (K201 and D501 try the same ones).
    exists: std::sync::Mutex<rustc_hash::FxHashMap<String, bool>>,
    /// Parameter types named for the drift rules, each once.
    type_names: meaning::TypeNames,
}

/// The meaning a definition had before: on an older kernel, or as recorded in a lock.
#[derive(Clone, Copy, Debug)]
pub enum Baseline<'a> {
    Kernel(&'a Kernel),
    /// Lock entries for this file, by function name.
    Lock {
        kernel: &'a str,
        entries: &'a [meaning::DefinitionMeaning],
    },
    /// Meanings by line number (what `fevlint fix` checks its rewrite against: the
    /// original lines' meanings, even when a rename changed the function name).
    Lines {
        kernel: &'a str,
        lines: &'a [Option<meaning::DefinitionMeaning>],
    },
}

impl<'a> Context<'a> {
    pub fn new(text: &'a str, lines: &'a [LineParse], target: Target, kernel: Option<&'a Kernel>) -> Context<'a> {
        Context {
            text,
            lines,
            target,
            kernel,
            resolutions: OnceLock::new(),
            memo: kernel.map(resolve::Memo::new),
            baseline: None,
            drift: OnceLock::new(),
            exists: Default::default(),
            type_names: Default::default(),
        }
    }

    /// Whether the kernel checked against has a function `name` in any form
    /// ([`Kernel::function_exists`]), each name asked once per context.
    pub fn function_exists(&self, name: &str) -> bool {
        let Some(k) = self.kernel else { return false };
        let memo = || self.exists.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&known) = memo().get(name) {
            return known;
        }
        let found = k.function_exists(name);
        memo().insert(name.to_owned(), found);
        found
    }

    /// The same context with a drift baseline.
    pub fn with_baseline(mut self, baseline: Baseline<'a>) -> Context<'a> {
        self.baseline = Some(baseline);
        self
    }

    /// What each definition meant on the baseline, by line (a lock's or the lines' own
    /// meanings borrowed).
    pub fn baseline_meanings(&self) -> Vec<Option<std::borrow::Cow<'a, meaning::DefinitionMeaning>>> {
        use std::borrow::Cow;
        // The baseline kernel's own memo: its types are not this context's kernel's.
        let memo = match self.baseline {
            Some(Baseline::Kernel(b)) => Some(resolve::Memo::new(b)),
            _ => None,
        };
        self.lines
            .iter()
            .map(|l| {
                let p = l.parsed.as_ref().filter(|p| p.rejection.is_none())?;
                match self.baseline? {
                    Baseline::Kernel(b) => {
                        let t = target_for(b);
                        let r = resolve::resolve_with(memo.as_ref()?, p, t).ok().flatten()?;
                        Some(Cow::Owned(meaning::summarize(b, p, &r, t)))
                    }
                    Baseline::Lock { entries, .. } => {
                        let name = &p.function.as_ref()?.0;
                        entries.iter().find(|e| &e.function == name).map(Cow::Borrowed)
                    }
                    Baseline::Lines { lines, .. } => lines.get(l.number as usize)?.as_ref().map(Cow::Borrowed),
                }
            })
            .collect()
    }

    /// Changes of meaning since the baseline: `(line, parsed, changes)` for accepted
    /// definitions with at least one change.
    pub fn drift(&self) -> impl Iterator<Item = (&LineParse, &Parsed, &[drift::Change])> {
        let all = self.drift.get_or_init(|| {
            let Some(k) = self.kernel else { return Vec::new() };
            let old = self.baseline_meanings();
            self.lines
                .iter()
                .zip(old)
                .zip(self.resolutions())
                .map(|((l, old), r)| {
                    let (Some(p), Some(old), Some(r)) = (l.parsed.as_ref(), old, r) else {
                        return Vec::new();
                    };
                    let new = meaning::OnKernel { kernel: k, parsed: p, resolution: r, names: &self.type_names };
                    drift::compare(self.text, p, &old, &new, k, &|n| self.function_exists(n))
                })
                .collect()
        });
        self.lines
            .iter()
            .zip(all)
            .filter_map(|(l, c)| (!c.is_empty()).then(|| Some((l, l.parsed.as_ref()?, c.as_slice()))).flatten())
    }

    /// The definitions (blank and comment lines skipped).
    pub fn definitions(&self) -> impl Iterator<Item = (&LineParse, &Parsed)> {
        self.lines.iter().filter_map(|l| l.parsed.as_ref().map(|p| (l, p)))
    }

    /// Accepted definitions with their resolution on the kernel.
    pub fn resolved(&self) -> impl Iterator<Item = (&LineParse, &Parsed, &resolve::Resolution)> {
        self.lines.iter().zip(self.resolutions()).filter_map(|(l, r)| Some((l, l.parsed.as_ref()?, r.as_ref()?)))
    }

    /// Each line's resolution (`None` for a line that is no accepted definition, or with
    /// no kernel), in the order of [`Context::lines`].
    fn resolutions(&self) -> &[Option<resolve::Resolution>] {
        self.resolutions.get_or_init(|| {
            self.lines
                .iter()
                .map(|l| {
                    let memo = self.memo.as_ref()?;
                    let p = l.parsed.as_ref().filter(|p| p.rejection.is_none())?;
                    resolve::resolve_with(memo, p, self.target).ok().flatten()
                })
                .collect()
        })
    }

    /// Every problem the resolution found, with the field it is about (for the A and T
    /// rules, which each report their own kind).
    pub fn problems(&self) -> impl Iterator<Item = (&fevlint_syntax::Field, &resolve::Problem)> {
        self.resolved().flat_map(|(_, parsed, r)| {
            parsed.fields.iter().zip(&r.fields).flat_map(|(f, m)| m.problems.iter().map(move |p| (f, p)))
        })
    }

    /// A diagnostic about the kernel being checked.
    pub fn kernel_diagnostic(&self, rule: &Rule, span: fevlint_syntax::Span, message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(rule, span, message);
        d.kernel = self.kernel.map(|k| k.name.as_str().into());
        d
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

impl crate::diagnostic::Origin for Rule {
    fn code(&self) -> &'static str {
        self.code
    }
    fn name(&self) -> &'static str {
        self.name
    }
    fn severity(&self) -> Severity {
        self.severity
    }
}

impl Rule {
    /// Rules that read a kernel run once per kernel; the others once per file.
    pub fn needs_kernel(&self) -> bool {
        matches!(self.code.as_bytes().first(), Some(b'K' | b'A' | b'T' | b'D'))
    }

    /// Drift rules compare a kernel with a baseline.
    pub fn needs_baseline(&self) -> bool {
        self.code.starts_with('D')
    }
}

/// Each rule by its constant, for code outside `rules/` that names one (a finding's
/// rule is compared with [`Diagnostic::is`]): never by its code as a string.
pub use a301_slot_not_parameter::RULE as A301;
pub use a302_slot_beyond_parameters::RULE as A302;
pub use a310_bt_arg_beyond_parameters::RULE as A310;
pub use b601_relocation_fails::RULE as B601;
pub use b602_guarded_relocation::RULE as B602;
pub use b603_object_refused::RULE as B603;
pub use b604_relocation_drift::RULE as B604;
pub use b611_attach_point_missing::RULE as B611;
pub use b612_ksym_missing::RULE as B612;
pub use b613_tracing_argument_missing::RULE as B613;
pub use d501_function_gone::RULE as D501;
pub use d502_signature_changed::RULE as D502;
pub use d503_member_moved::RULE as D503;
pub use d504_value_changed::RULE as D504;
pub use d505_lock_mismatch::RULE as D505;
pub use d510_bt_probe_drift::RULE as D510;
pub use k201_unknown_function::RULE as K201;
pub use k202_not_traceable::RULE as K202;
pub use k203_ambiguous_function::RULE as K203;
pub use k210_bt_probe_missing::RULE as K210;
pub use k211_bt_not_attachable::RULE as K211;
pub use k212_bt_wildcard_matches_nothing::RULE as K212;
pub use k213_bt_wildcard_matches_many::RULE as K213;
pub use n101_duplicate_event::RULE as N101;
pub use n102_duplicate_field::RULE as N102;
pub use n103_unused_suppression::RULE as N103;
pub use n104_unknown_rule_in_suppression::RULE as N104;
pub use s001_syntax_error::RULE as S001;
pub use s002_too_many_slots::RULE as S002;
pub use s003_ignored_offset::RULE as S003;
pub use s004_line_too_long::RULE as S004;
pub use s005_nul_byte::RULE as S005;
pub use s006_uncounted_slot::RULE as S006;
pub use s010_bt_syntax_error::RULE as S010;
pub use t401_size_mismatch::RULE as T401;
pub use t402_string_not_char_pointer::RULE as T402;
pub use t403_symbol_not_pointer::RULE as T403;
pub use t404_offset_not_member::RULE as T404;
pub use t405_deref_non_pointer::RULE as T405;
pub use t406_address_not_value::RULE as T406;
pub use t407_via_container::RULE as T407;
pub use t408_user_fetch_of_kernel_memory::RULE as T408;
pub use t410_bt_unknown_args_field::RULE as T410;
pub use t411_bt_unknown_member::RULE as T411;
pub use t412_bt_str_not_string::RULE as T412;
pub use t413_bt_retval_of_void::RULE as T413;
pub use t414_bt_ctx_access_refused::RULE as T414;

/// Not a rule: the finding for a file that is not valid UTF-8 (reported before any rule
/// runs, and neither selectable nor documented).
pub static S000: Rule =
    Rule { code: "S000", name: "not-utf8", severity: Severity::Warning, doc: "", check: no_script_check };

/// Every rule, sorted by code.
pub static REGISTRY: &[&Rule] = &[
    &a301_slot_not_parameter::RULE,
    &a302_slot_beyond_parameters::RULE,
    &a310_bt_arg_beyond_parameters::RULE,
    &b601_relocation_fails::RULE,
    &b602_guarded_relocation::RULE,
    &b603_object_refused::RULE,
    &b604_relocation_drift::RULE,
    &b611_attach_point_missing::RULE,
    &b612_ksym_missing::RULE,
    &b613_tracing_argument_missing::RULE,
    &d501_function_gone::RULE,
    &d502_signature_changed::RULE,
    &d503_member_moved::RULE,
    &d504_value_changed::RULE,
    &d505_lock_mismatch::RULE,
    &d510_bt_probe_drift::RULE,
    &k201_unknown_function::RULE,
    &k202_not_traceable::RULE,
    &k203_ambiguous_function::RULE,
    &k210_bt_probe_missing::RULE,
    &k211_bt_not_attachable::RULE,
    &k212_bt_wildcard_matches_nothing::RULE,
    &k213_bt_wildcard_matches_many::RULE,
    &n101_duplicate_event::RULE,
    &n102_duplicate_field::RULE,
    &n103_unused_suppression::RULE,
    &n104_unknown_rule_in_suppression::RULE,
    &s001_syntax_error::RULE,
    &s002_too_many_slots::RULE,
    &s003_ignored_offset::RULE,
    &s004_line_too_long::RULE,
    &s005_nul_byte::RULE,
    &s006_uncounted_slot::RULE,
    &s010_bt_syntax_error::RULE,
    &t401_size_mismatch::RULE,
    &t402_string_not_char_pointer::RULE,
    &t403_symbol_not_pointer::RULE,
    &t404_offset_not_member::RULE,
    &t405_deref_non_pointer::RULE,
    &t406_address_not_value::RULE,
    &t407_via_container::RULE,
    &t408_user_fetch_of_kernel_memory::RULE,
    &t410_bt_unknown_args_field::RULE,
    &t411_bt_unknown_member::RULE,
    &t412_bt_str_not_string::RULE,
    &t413_bt_retval_of_void::RULE,
    &t414_bt_ctx_access_refused::RULE,
];

/// A bpftrace rule's check: over a bpftrace script's parse and one kernel.
pub type BtCheck = fn(&crate::bpftrace_facts::BtContext<'_>, &mut Vec<Diagnostic>);

/// The rules about bpftrace scripts (`*.bt`), sorted by code; their `Rule::check` does
/// nothing on function-event scripts.
pub static BT_RULES: &[(&Rule, BtCheck)] = &[
    (&a310_bt_arg_beyond_parameters::RULE, a310_bt_arg_beyond_parameters::check),
    (&d510_bt_probe_drift::RULE, d510_bt_probe_drift::check),
    (&k210_bt_probe_missing::RULE, k210_bt_probe_missing::check),
    (&k211_bt_not_attachable::RULE, k211_bt_not_attachable::check),
    (&k212_bt_wildcard_matches_nothing::RULE, k212_bt_wildcard_matches_nothing::check),
    (&k213_bt_wildcard_matches_many::RULE, k213_bt_wildcard_matches_many::check),
    (&s010_bt_syntax_error::RULE, s010_bt_syntax_error::check),
    (&t410_bt_unknown_args_field::RULE, t410_bt_unknown_args_field::check),
    (&t411_bt_unknown_member::RULE, t411_bt_unknown_member::check),
    (&t412_bt_str_not_string::RULE, t412_bt_str_not_string::check),
    (&t413_bt_retval_of_void::RULE, t413_bt_retval_of_void::check),
    (&t414_bt_ctx_access_refused::RULE, t414_bt_ctx_access_refused::check),
];

/// Whether a rule is about bpftrace scripts (its examples are `bt` code).
pub fn is_bpftrace(rule: &Rule) -> bool {
    BT_RULES.iter().any(|(r, _)| std::ptr::eq(*r, rule))
}

/// The rules only the mainline dialect (`*.dynevents`) has: `fevlint_check::dynevents`
/// reports them; their `Rule::check` does nothing on function-event scripts, and their
/// examples are `dynevents` lines.
pub static MAINLINE_RULES: &[&Rule] = &[&t408_user_fetch_of_kernel_memory::RULE];

/// Whether a rule is about the mainline dialect only (its examples are `dynevents` lines).
pub fn is_mainline(rule: &Rule) -> bool {
    MAINLINE_RULES.iter().any(|r| std::ptr::eq(*r, rule))
}

/// The `check` on function-event scripts of the rules that read other inputs (bpftrace
/// scripts, compiled BPF objects): nothing to do.
fn no_script_check(_: &Context<'_>, _: &mut Vec<Diagnostic>) {}

/// A check of compiled BPF objects.
pub type BpfCheck = fn(&crate::bpf::BpfContext<'_>, &mut Vec<crate::bpf::BpfFinding>);

/// The `B` rules (compiled BPF objects) with their object checks, sorted by code. Their
/// [`Rule::check`] does nothing: scripts have no relocations or sections.
pub static BPF_RULES: &[(&Rule, BpfCheck)] = &[
    (&b601_relocation_fails::RULE, b601_relocation_fails::check),
    (&b602_guarded_relocation::RULE, b602_guarded_relocation::check),
    (&b603_object_refused::RULE, b603_object_refused::check),
    (&b604_relocation_drift::RULE, b604_relocation_drift::check),
    (&b611_attach_point_missing::RULE, b611_attach_point_missing::check),
    (&b612_ksym_missing::RULE, b612_ksym_missing::check),
    (&b613_tracing_argument_missing::RULE, b613_tracing_argument_missing::check),
];

/// Whether `rule` reads compiled BPF objects (its findings come from objects, never from scripts).
pub fn is_bpf_object(rule: &Rule) -> bool {
    BPF_RULES.iter().any(|(r, _)| std::ptr::eq(*r, rule))
}

pub fn by_code(code: &str) -> Option<&'static Rule> {
    REGISTRY.iter().copied().find(|r| r.code.eq_ignore_ascii_case(code) || r.name == code)
}

/// Runs the rules that fit the context (kernel rules only with a kernel, file rules only
/// without one unless `file_rules`) and returns diagnostics in a stable order.
pub fn check(cx: &Context<'_>, file_rules: bool) -> Vec<Diagnostic> {
    check_selected(cx, file_rules, &|_| true)
}

/// [`check`] with only the rules `enabled` accepts.
pub fn check_selected(cx: &Context<'_>, file_rules: bool, enabled: &dyn Fn(&Rule) -> bool) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for rule in REGISTRY {
        let applicable = if rule.needs_baseline() {
            cx.kernel.is_some() && cx.baseline.is_some()
        } else if rule.needs_kernel() {
            cx.kernel.is_some()
        } else {
            file_rules
        };
        let run = applicable && enabled(rule);
        if run {
            (rule.check)(cx, &mut out);
        }
    }
    sort(&mut out);
    out
}

/// Position, then code, then kernel: the order every output uses.
pub fn sort(diags: &mut [Diagnostic]) {
    diags.sort_by(order);
}

/// The order [`sort`] puts findings in.
pub fn order(a: &Diagnostic, b: &Diagnostic) -> std::cmp::Ordering {
    (a.span.start, a.span.end, a.code, &a.kernel).cmp(&(b.span.start, b.span.end, b.code, &b.kernel))
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

/// Kernel-to-kernel drift (D501–D504): `report` turns each change of its rule's kind into
/// a diagnostic, given the definition, the baseline's and the target's names. A lock
/// baseline is D505's alone.
pub fn report_drift(
    cx: &Context<'_>,
    out: &mut Vec<Diagnostic>,
    report: impl Fn(&Parsed, &drift::Change, &str, &str) -> Option<Diagnostic>,
) {
    if matches!(cx.baseline, Some(Baseline::Lock { .. })) {
        return;
    }
    let (base, target) = drift_names(cx);
    for (_, parsed, changes) in cx.drift() {
        out.extend(changes.iter().filter_map(|c| report(parsed, c, &base, &target)));
    }
}

/// Display names of the baseline and the target for drift messages.
pub fn drift_names(cx: &Context<'_>) -> (String, String) {
    let target = cx.kernel.map_or_else(String::new, |k| k.name.clone());
    let base = match cx.baseline {
        Some(Baseline::Kernel(k)) => k.name.clone(),
        Some(Baseline::Lock { kernel, .. }) => format!("the lock's {kernel}"),
        Some(Baseline::Lines { kernel, .. }) => kernel.to_owned(),
        None => String::new(),
    };
    (base, target)
}

/// The parser target for a kernel: its slot limit and pointer size.
pub fn target_for(kernel: &Kernel) -> Target {
    match kernel.arch {
        fevlint_types::Arch::X86_64 => Target::X86_64,
        fevlint_types::Arch::X86_32 => Target::X86_32,
    }
}
