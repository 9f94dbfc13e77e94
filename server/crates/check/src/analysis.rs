//! One analysis entry point shared by the CLI and the language server: bytes or text in,
//! diagnostics out. Never fails: everything wrong with the input is a diagnostic.

use rayon::prelude::*;

use crate::config::Settings;
use crate::diagnostic::Diagnostic;
use crate::rules::{self, Context};
use crate::suppress;
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parser, Span, Target};

/// What a script is checked against, for [`check`]: the target when no kernel says,
/// the kernels, the rule selection and severities (`fevlint.toml`), and a lock as the
/// drift baseline. `Options::new(Target::X86_64)` checks against no kernel with the
/// default settings.
#[derive(Clone, Copy, Debug)]
pub struct Options<'a> {
    /// The parser target when there is no kernel (else the first kernel's).
    pub target: Target,
    /// File rules run once, kernel rules once per kernel, each labelled with its kernel.
    pub kernels: &'a [&'a Kernel],
    /// `None`: every default rule at its default severity.
    pub settings: Option<&'a Settings>,
    /// A lock as the drift baseline of every kernel, instead of the first kernel.
    pub lock: LockBaseline<'a>,
}

impl<'a> Options<'a> {
    pub fn new(target: Target) -> Options<'a> {
        Options { target, kernels: &[], settings: None, lock: None }
    }

    pub fn kernels(self, kernels: &'a [&'a Kernel]) -> Options<'a> {
        Options { kernels, ..self }
    }

    pub fn settings(self, settings: &'a Settings) -> Options<'a> {
        Options { settings: Some(settings), ..self }
    }

    pub fn lock(self, lock: LockBaseline<'a>) -> Options<'a> {
        Options { lock, ..self }
    }
}

/// Checks one script given as raw bytes: the one analysis entry point of the CLI, tests
/// and benches. Invalid UTF-8 is replaced (and reported), so the returned text is what
/// the spans index. (The language server, which keeps its `Parse` between edits, uses
/// [`check_parse`] and [`KernelLineCache`].)
pub fn check(parser: &mut Parser, bytes: Vec<u8>, options: &Options<'_>) -> (String, Vec<Diagnostic>) {
    let Options { target, kernels, settings, lock } = *options;
    let default = Settings::default();
    let settings = settings.unwrap_or(&default);
    let (text, bad_utf8) = match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(at))
        }
    };
    let mut found = Vec::new();
    if let Some(at) = bad_utf8 {
        let end = crate::render::char_span(&text, Span::new(at, at + 1)).end;
        found.push(
            Diagnostic::new(&rules::S000, Span::new(at, end), format!("the file is not valid UTF-8 from byte {at}"))
                .note("fevlint shows invalid bytes as U+FFFD; the kernel would see the raw bytes"),
        );
    }
    let diagnostics = analyse(parser, &text, target, kernels, settings, found, lock);
    (text, diagnostics)
}

/// The definition lines of a script grouped by their text: the first of each text, and
/// where the others start.
#[derive(Default)]
struct Repeats {
    /// Start of each first occurrence, in order, and the starts of its repeats.
    groups: Vec<(usize, Vec<usize>)>,
    /// Line number of each first occurrence.
    firsts: rustc_hash::FxHashSet<u32>,
}

impl Repeats {
    fn new(text: &str, lines: &[fevlint_syntax::LineParse]) -> Repeats {
        let mut by_text: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut firsts = rustc_hash::FxHashSet::default();
        for l in lines.iter().filter(|l| l.parsed.is_some()) {
            let start = l.line.span.start;
            match by_text.entry(l.line.span.text(text)) {
                std::collections::hash_map::Entry::Occupied(e) => groups[*e.get()].1.push(start),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(groups.len());
                    groups.push((start, Vec::new()));
                    firsts.insert(l.number);
                }
            }
        }
        if groups.iter().all(|(_, r)| r.is_empty()) {
            return Repeats::default(); // every line distinct: nothing to share
        }
        Repeats { groups, firsts }
    }

    /// The lines (of some target's parse of the same text) that are first occurrences.
    fn distinct<'a>(
        &self,
        lines: &'a [fevlint_syntax::LineParse],
    ) -> std::borrow::Cow<'a, [fevlint_syntax::LineParse]> {
        if self.groups.is_empty() {
            return std::borrow::Cow::Borrowed(lines);
        }
        lines.iter().filter(|l| self.firsts.contains(&l.number)).cloned().collect()
    }

    /// Copies each finding on a first occurrence to its repeats.
    fn expand(&self, found: &mut Vec<Diagnostic>) {
        if self.groups.is_empty() {
            return;
        }
        let mut copies = Vec::new();
        for d in found.iter() {
            // The group whose first line holds the finding: the last starting at or before it.
            let i = self.groups.partition_point(|(start, _)| *start <= d.span.start);
            let Some((first, repeats)) = i.checked_sub(1).and_then(|i| self.groups.get(i)) else { continue };
            for &r in repeats {
                let mut c = d.clone();
                c.span.shift(r as isize - *first as isize);
                copies.push(c);
            }
        }
        found.extend(copies);
    }
}

/// The parser target for a kernel (defined beside the rules, which need it too).
pub use crate::rules::target_for;

/// A lock's entries for one file, with the name of the kernel they were resolved on.
pub type LockBaseline<'a> = Option<(&'a str, &'a [crate::meaning::DefinitionMeaning])>;

/// The enabled rules, then the suppression comments (and N103 for those that dropped
/// nothing), then the severity overrides; sorted. `out` holds findings made before.
fn analyse(
    parser: &mut Parser,
    text: &str,
    target: Target,
    kernels: &[&Kernel],
    settings: &Settings,
    mut out: Vec<Diagnostic>,
    lock: Option<(&str, &[crate::meaning::DefinitionMeaning])>,
) -> Vec<Diagnostic> {
    let enabled = |r: &rules::Rule| settings.enabled(r.code);
    let target = kernels.first().map_or(target, |k| target_for(k));
    let lines = parser.lines(text, target);
    out.extend(rules::check_selected(&Context::new(text, &lines, target, None), true, &enabled));
    // Kernel rules read one definition at a time: each distinct definition is checked
    // once per kernel, and its findings are copied to its repeats.
    let repeats = if kernels.is_empty() { Repeats::default() } else { Repeats::new(text, &lines) };
    // Kernels of another architecture read the script with their own register limits.
    let mut other_lines: Vec<(Target, Vec<fevlint_syntax::LineParse>)> = Vec::new();
    for k in kernels {
        let kt = target_for(k);
        if kt != target && !other_lines.iter().any(|(t, _)| *t == kt) {
            other_lines.push((kt, repeats.distinct(&parser.lines(text, kt)).into_owned()));
        }
    }
    let distinct = repeats.distinct(&lines);
    let lines_for = |kt: Target| other_lines.iter().find(|(t, _)| *t == kt).map_or(&distinct[..], |(_, l)| &l[..]);
    // Drift: a lock is the baseline of every kernel; otherwise the first kernel is the
    // baseline of the others, and what each line means on it is worked out once.
    let (first, rest) = match (kernels.split_first(), lock) {
        (Some((first, rest)), None) => (Some(first), rest),
        _ => (None, kernels),
    };
    let mut baseline: Vec<Option<crate::meaning::DefinitionMeaning>> = Vec::new();
    let mut kernel_found = Vec::new();
    if let Some(&k) = first {
        let cx = Context::new(text, lines_for(target_for(k)), target_for(k), Some(k));
        kernel_found.extend(rules::check_selected(&cx, false, &enabled));
        if !rest.is_empty() {
            baseline.resize(cx.lines.iter().map(|l| l.number as usize + 1).max().unwrap_or(0), None);
            let names = crate::meaning::TypeNames::default();
            for (l, p, r) in cx.resolved() {
                if let Some(slot) = baseline.get_mut(l.number as usize) {
                    *slot = Some(crate::meaning::summarize_with(k, p, r, cx.target, &names));
                }
            }
        }
    }
    // The other kernels are independent of each other: one thread each.
    let found: Vec<Vec<Diagnostic>> = rest
        .par_iter()
        .map(|&k| {
            let cx = Context::new(text, lines_for(target_for(k)), target_for(k), Some(k));
            let cx = match (lock, first) {
                (Some((kernel, entries)), _) => cx.with_baseline(rules::Baseline::Lock { kernel, entries }),
                (None, Some(b)) => cx.with_baseline(rules::Baseline::Lines { kernel: &b.name, lines: &baseline }),
                (None, None) => cx,
            };
            rules::check_selected(&cx, false, &enabled)
        })
        .collect();
    kernel_found.extend(found.into_iter().flatten());
    repeats.expand(&mut kernel_found);
    out.extend(kernel_found);
    // Kernel rules ran only if there was a kernel: their silence proves nothing otherwise.
    report(text, out, &Ran { settings, kernel: !kernels.is_empty() })
}

/// Which rules ran in a check, as an unused suppression (N103) is judged: a rule the
/// settings enable, and a kernel rule only when a kernel check ran; and the settings that
/// decide what is reported of them, at which severity.
#[derive(Clone, Copy, Debug)]
pub struct Ran<'a> {
    /// `select`, `ignore` (code prefixes) and the severity overrides.
    pub settings: &'a Settings,
    /// Whether the kernel rules ran (a kernel was given and its check is complete).
    pub kernel: bool,
}

impl Ran<'_> {
    pub fn ran(&self, code: &str) -> bool {
        rules::by_code(code).is_some_and(|r| self.settings.enabled(r.code) && (!r.needs_kernel() || self.kernel))
    }

    /// Every rule ran (a bare `ignore` is judged only then).
    pub fn all(&self) -> bool {
        rules::REGISTRY.iter().all(|r| self.ran(r.code))
    }
}

/// What a check of a `*.fev` script reports of what its rules found: the one place this
/// is decided, for `fevlint check` and the language server alike ([`report`]).
/// Suppression comments drop the findings they name; N103 reports each suppression that
/// dropped nothing among the rules that [`Ran`]; findings of rules the settings do not
/// enable go. Returns whether each of `found` is reported, and the N103 findings to add.
pub fn verdicts<D: std::borrow::Borrow<Diagnostic>>(
    text: &str,
    found: &[D],
    ran: &Ran<'_>,
) -> (Vec<bool>, Vec<Diagnostic>) {
    let suppressions = suppress::parse(text);
    let (mut keep, usage) = suppress::decide(text, &suppressions, found);
    let mut added = Vec::new();
    if !suppressions.is_empty() {
        rules::n103_unused_suppression::report(&suppressions, &usage, &|c| ran.ran(c), ran.all(), &mut added);
    }
    for (k, d) in keep.iter_mut().zip(found) {
        *k = *k && ran.settings.enabled(d.borrow().code);
    }
    added.retain(|d| ran.settings.enabled(d.code));
    (keep, added)
}

/// The findings a check of a `*.fev` script reports, decided here for `fevlint check` and
/// the language server: [`verdicts`] applied (suppression comments, N103, `select` and
/// `ignore` as code prefixes), each at the severity the settings give its rule, in
/// [`rules::order`].
pub fn report(text: &str, mut found: Vec<Diagnostic>, ran: &Ran<'_>) -> Vec<Diagnostic> {
    let (keep, added) = verdicts(text, &found, ran);
    let mut keep = keep.into_iter();
    found.retain(|_| keep.next().unwrap_or(true));
    found.extend(added);
    ran.settings.apply(&mut found);
    rules::sort(&mut found);
    found
}

/// Checks a script already parsed (the language server keeps its `Parse` between
/// edits); the same file-rule diagnostics as [`check`] on `text`, before suppressions and settings.
pub fn check_parse(parse: &fevlint_syntax::Parse, text: &str) -> Vec<Diagnostic> {
    rules::check(&Context::new(text, &parse.lines, parse.target, None), true)
}

/// File rules that read one line at a time: every rule without a kernel except N101 and
/// N104, which read the whole file (an editor re-runs these only on the lines an edit
/// touched).
pub fn per_line_rule(rule: &rules::Rule) -> bool {
    !rule.needs_kernel() && !rule.needs_baseline() && !whole_file_rule(rule)
}

fn whole_file_rule(rule: &rules::Rule) -> bool {
    std::ptr::eq(rule, &rules::N101) || std::ptr::eq(rule, &rules::N104)
}

/// The per-line file rules ([`per_line_rule`]) on some lines of `text`.
pub fn check_lines(text: &str, lines: &[fevlint_syntax::LineParse], target: Target) -> Vec<Diagnostic> {
    rules::check_selected(&Context::new(text, lines, target, None), true, &per_line_rule)
}

/// The whole-file file rules (N101, N104): with [`check_lines`] on every line, the same
/// as [`check_parse`]. `repeats: false` skips N101, for a caller that knows no function
/// has two events ([`event_key`]).
pub fn check_whole_file(
    text: &str,
    lines: &[fevlint_syntax::LineParse],
    target: Target,
    repeats: bool,
) -> Vec<Diagnostic> {
    let selected = |r: &rules::Rule| whole_file_rule(r) && (repeats || !std::ptr::eq(r, &rules::N101));
    rules::check_selected(&Context::new(text, lines, target, None), true, &selected)
}

/// A hash of the function whose event a line creates (N101's key), `None` for a line
/// that creates none: equal functions, equal keys, so counting keys over the lines tells
/// when no function can have two events.
pub fn event_key(line: &fevlint_syntax::LineParse) -> Option<u64> {
    use std::hash::{BuildHasher, BuildHasherDefault};
    let (name, _) = rules::n101_duplicate_event::event(line)?;
    Some(BuildHasherDefault::<rustc_hash::FxHasher>::default().hash_one(name.as_str()))
}

/// The kernel rules for a script already parsed, against one kernel (labelled with it).
pub fn check_parse_kernel(parse: &fevlint_syntax::Parse, text: &str, kernel: &Kernel) -> Vec<Diagnostic> {
    rules::check(&Context::new(text, &parse.lines, parse.target, Some(kernel)), false)
}

/// Definitions (non-blank, non-comment lines) in a text.
pub fn count_definitions(text: &str) -> usize {
    fevlint_syntax::lex::lines(text)
        .filter(|l| l.code.text(text).bytes().any(|b| !fevlint_syntax::lex::is_space(b)))
        .count()
}

/// What each accepted definition means on `kernel`: `(0-based line, definition text,
/// meaning)`, for `fevlint lock`.
pub fn meanings(
    parser: &mut Parser,
    text: &str,
    kernel: &Kernel,
) -> Vec<(u32, String, crate::meaning::DefinitionMeaning)> {
    let target = target_for(kernel);
    let lines = parser.lines(text, target);
    let cx = Context::new(text, &lines, target, Some(kernel));
    cx.resolved()
        .map(|(l, p, r)| {
            let code = l.line.code.text(text).trim().to_owned();
            (l.number, code, crate::meaning::summarize(kernel, p, r, target))
        })
        .collect()
}

/// Changes of meaning between a baseline and `kernel`, per definition line.
pub fn drift(
    parser: &mut Parser,
    text: &str,
    kernel: &Kernel,
    baseline: rules::Baseline<'_>,
) -> Vec<(u32, Vec<crate::drift::Change>)> {
    let target = target_for(kernel);
    let lines = parser.lines(text, target);
    let cx = Context::new(text, &lines, target, Some(kernel)).with_baseline(baseline);
    cx.drift().map(|(l, _, c)| (l.number, c.to_vec())).collect()
}

/// Findings on `lines` (some lines of one text, in order) grouped by line, each span made
/// relative to its line's start: one list per line.
pub fn by_line(
    lines: &[fevlint_syntax::LineParse],
    found: impl IntoIterator<Item = Diagnostic>,
) -> Vec<Vec<Diagnostic>> {
    let mut out: Vec<Vec<Diagnostic>> = vec![Vec::new(); lines.len()];
    let Some(last) = lines.len().checked_sub(1) else { return out };
    for mut d in found {
        // A line's findings lie within it or at its end (an unexpected ending).
        let i = fevlint_syntax::line_index(lines, d.span.start).min(last);
        d.span.shift(-(lines[i].line.span.start as isize));
        out[i].push(d);
    }
    out
}

/// Kernel findings per definition line, so that an edit re-checks only the lines it
/// changed. Kernel rules (K, A, T) look at one definition at a time, so a line's findings
/// depend only on its text, the kernel and the target.
#[derive(Debug, Default)]
pub struct KernelLineCache {
    entries: std::sync::Mutex<rustc_hash::FxHashMap<(usize, Target), Generations>>,
}

/// Findings by line text, spans from the line's start.
type LineFindings = rustc_hash::FxHashMap<Box<str>, Vec<Diagnostic>>;

/// Two generations: a line found in the old one moves to the new one; when the new one is
/// full, the old one is dropped. What a script uses stays; memory stays bounded.
#[derive(Debug, Default)]
struct Generations {
    current: LineFindings,
    previous: LineFindings,
}

impl Generations {
    fn get(&mut self, line: &str) -> Option<&Vec<Diagnostic>> {
        if !self.current.contains_key(line) {
            let (key, found) = self.previous.remove_entry(line)?;
            self.insert(key, found);
        }
        self.current.get(line)
    }

    fn insert(&mut self, line: Box<str>, found: Vec<Diagnostic>) {
        if self.current.len() >= LINE_CACHE_MAX / 2 {
            self.previous = std::mem::take(&mut self.current);
        }
        self.current.insert(line, found);
    }
}

/// Entries kept per kernel (a bound on memory, not a tuning knob).
const LINE_CACHE_MAX: usize = 200_000;

/// Kernels (loads) kept before the cache starts over.
const KERNELS_KEPT: usize = 16;

impl KernelLineCache {
    /// [`check_parse_kernel`], answering unchanged lines from the cache. `kernel_id`
    /// identifies the loaded kernel (a reloaded kernel must get a new id).
    pub fn check(
        &self,
        parse: &fevlint_syntax::Parse,
        text: &str,
        kernel: &Kernel,
        kernel_id: usize,
    ) -> Vec<Diagnostic> {
        self.check_lines(&parse.lines, parse.target, text, kernel, kernel_id)
    }

    /// [`KernelLineCache::check`] on some lines of `text` only.
    pub fn check_lines(
        &self,
        lines: &[fevlint_syntax::LineParse],
        target: Target,
        text: &str,
        kernel: &Kernel,
        kernel_id: usize,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut misses = Vec::new();
        let lock = || self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        {
            let mut entries = lock();
            // A reloaded kernel has a new id: forget the loads of long ago.
            if entries.len() >= KERNELS_KEPT && !entries.contains_key(&(kernel_id, target)) {
                entries.clear();
            }
            let cache = entries.entry((kernel_id, target)).or_default();
            for lp in lines.iter().filter(|l| l.parsed.is_some()) {
                match cache.get(lp.line.span.text(text)) {
                    Some(found) => out.extend(found.iter().cloned().map(|mut d| {
                        d.span.shift(lp.line.span.start as isize);
                        d
                    })),
                    None => misses.push(lp.clone()),
                }
            }
        }
        // The rules run off the lock (a first check of a large script takes a while).
        if !misses.is_empty() {
            let fresh = rules::check(&Context::new(text, &misses, target, Some(kernel)), false);
            let mine = by_line(&misses, fresh.iter().cloned());
            let mut entries = lock();
            let cache = entries.entry((kernel_id, target)).or_default();
            for (lp, found) in misses.iter().zip(mine) {
                cache.insert(lp.line.span.text(text).into(), found);
            }
            out.extend(fresh);
        }
        rules::sort(&mut out);
        out
    }
}

/// Checks objects against kernels; per object, its findings (unplaced).
pub fn check_objects(
    objects: &[fevlint_bpf::BpfObject],
    kernels: &[crate::bpf::BpfKernel<'_>],
    enabled: &dyn Fn(&crate::rules::Rule) -> bool,
) -> Vec<Vec<crate::bpf::BpfFinding>> {
    let targets = bpf_targets(kernels);
    check_objects_with(objects, kernels, &targets, enabled)
}

/// Each kernel's BTF indexed for candidate searches (once per kernel, for all objects).
pub fn bpf_targets<'k>(kernels: &'k [crate::bpf::BpfKernel<'_>]) -> Vec<Option<fevlint_bpf::core::Target<'k>>> {
    kernels.iter().map(|k| k.btf.as_deref().map(fevlint_bpf::core::Target::new)).collect()
}

/// [`check_objects`] with the kernels' [`bpf_targets`] built by the caller.
pub fn check_objects_with(
    objects: &[fevlint_bpf::BpfObject],
    kernels: &[crate::bpf::BpfKernel<'_>],
    targets: &[Option<fevlint_bpf::core::Target<'_>>],
    enabled: &dyn Fn(&crate::rules::Rule) -> bool,
) -> Vec<Vec<crate::bpf::BpfFinding>> {
    objects
        .iter()
        .map(|object| {
            let loaded = object.loaded_programs();
            let cx = crate::bpf::BpfContext {
                object,
                kernels: kernels
                    .iter()
                    .zip(targets)
                    .map(|(k, t)| {
                        let resolutions = t.as_ref().map(|t| fevlint_bpf::resolve(object, t)).unwrap_or_default();
                        let dead = crate::bpf::dead_code(object, &loaded, &resolutions);
                        let dead_by_read_only = crate::bpf::dead_by_read_only(object, &loaded, &resolutions, &dead);
                        crate::bpf::PerKernel {
                            kernel: k.kernel,
                            target: t.as_ref(),
                            modules: k.modules.as_deref(),
                            resolutions,
                            dead,
                            dead_by_read_only,
                        }
                    })
                    .collect(),
                loaded,
            };
            let mut out = Vec::new();
            for (rule, check) in crate::rules::BPF_RULES {
                if enabled(rule) {
                    check(&cx, &mut out);
                }
            }
            out
        })
        .collect()
}
