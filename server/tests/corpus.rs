//! The caret-annotated rule corpus (`tests/corpus/*.fev`) and the clean control script
//! (`fixtures/scripts/clean-6.12.fev`): every rule fires where it must and stays quiet
//! where it must not, against real kernels.
//!
//! A corpus file names its kernel in a header line `# kernel: <folder in
//! fixtures/kernels>` and, for drift, its baseline in `# baseline: <folder>` (the
//! baseline's own findings are not expected; drift rules compare the two), or a lock made
//! on a kernel in `# lock: <folder>` (D505). Without a
//! kernel header the file rules run alone, for x86_64. Each line may be
//! followed by caret lines that state the diagnostics expected on it:
//!
//! ```text
//! vfs_read(u32 mode+14[0])
//! #                ^^^^^^ T404 offset 14 of `struct file` falls inside
//! ```
//!
//! The carets sit under the exact byte columns of the diagnostic's span; the code
//! follows, then a substring of the message. Optional ` note: <substring>` parts must
//! each be contained in one of the diagnostic's notes. A zero-width span is drawn as one
//! `$`. `@N` before the carets places them at byte column N instead of where they stand
//! (for spans past column 4094, where the caret line itself would be too long, and for
//! column 0, where the `#` stands). A header `# check: per-definition` checks each line
//! as a script of its own (kernel cases of one function would otherwise draw N101 on
//! each other); by default the file is checked whole. The set
//! of diagnostics must equal the set of expectations exactly; a mismatch is allowed only
//! when [`KNOWN_WRONG`] records it, and then it must stay exactly as recorded.

use fevlint_check::analysis::{check, Options};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parser, Target};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

/// A case where fevlint is wrong today: the fixture carries the right expectation, this
/// entry the difference fevlint shows now. `line` is a substring that identifies the
/// checked line of `file` (`lines` lines must match it). `missing` are expectations fevlint does not meet, `extra`
/// diagnostics it should not give, each `"CODE message-substring"`. When fevlint is
/// fixed, the entry no longer matches and the test says so: delete the entry.
struct KnownWrong {
    file: &'static str,
    line: &'static str,
    lines: usize,
    missing: &'static [&'static str],
    extra: &'static [&'static str],
}

const KNOWN_WRONG: &[KnownWrong] = &[
    // Empty: the cases the corpus found (0-based S002 slots, T401 help for signed values,
    // `tcp_sk()` casts, `sockaddr` byte reads, copies from bad addresses, `pt_regs`
    // registers holding pointers; drift: union alternatives at the same offset, members
    // after a changed parameter, array copy sources, clone-only functions, `const`-only
    // parameter changes, fixed scripts against the lock) are fixed and pinned by the
    // fixtures.
];

/// Kernels are opened once per test binary (20-100 ms each).
fn kernel(name: &str) -> &'static Kernel {
    static KERNELS: OnceLock<Mutex<HashMap<String, &'static Kernel>>> = OnceLock::new();
    let mut map = KERNELS.get_or_init(Default::default).lock().expect("kernel cache lock");
    map.entry(name.to_owned()).or_insert_with(|| {
        let path = root().join("fixtures/kernels").join(name);
        let k = Kernel::open(&path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        Box::leak(Box::new(k))
    })
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One expected diagnostic.
#[derive(Clone, Debug)]
struct Expect {
    /// Index of the line it is about.
    line: usize,
    start: usize,
    end: usize,
    code: String,
    message: String,
    notes: Vec<String>,
}

/// A fixture split into lines, with the caret expectations taken out.
struct Fixture {
    kernel: Option<String>,
    /// `# baseline: <folder>`: drift rules compare `kernel` with this one; the
    /// baseline's own findings are not part of the expectations.
    baseline: Option<String>,
    /// `# lock: <folder>`: the baseline is a lock made on that kernel (D505).
    lock: Option<String>,
    /// `# check: per-definition`: each line is checked as a script of its own, so that
    /// the cases of one function do not draw N101 on each other.
    per_definition: bool,
    /// Byte offset where each line starts.
    line_starts: Vec<usize>,
    lines: Vec<String>,
    expects: Vec<Expect>,
}

/// Parses `#  ^^^ CODE message [note: n]…`; `None` when the line is no caret line.
/// The expectation's `line` is left 0 for the caller to set.
fn caret_line(line: &str) -> Option<Result<Expect, String>> {
    let body = line.strip_prefix('#')?;
    let trimmed = body.trim_start();
    let (at, marks) = match trimmed.strip_prefix('@') {
        Some(rest) => {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            let Ok(col) = digits.parse::<usize>() else {
                return Some(Err(format!("bad `@` column in {line:?}")));
            };
            (Some(col), rest[digits.len()..].trim_start())
        }
        None => (None, trimmed),
    };
    if !marks.starts_with('^') && !marks.starts_with('$') {
        return None;
    }
    let col = at.unwrap_or(line.len() - marks.len());
    let width = if marks.starts_with('$') { 0 } else { marks.bytes().take_while(|&b| b == b'^').count() };
    let skip = if width == 0 { 1 } else { width };
    let rest = marks[skip..].trim_start();
    let (code, rest) = rest.split_once(' ').unwrap_or((rest, ""));
    let is_code = code.len() == 4
        && code.as_bytes()[0].is_ascii_uppercase()
        && code.as_bytes()[1..].iter().all(u8::is_ascii_digit);
    if !is_code {
        return Some(Err(format!("caret line without a rule code: {line:?}")));
    }
    let mut parts = rest.split(" note: ");
    let message = parts.next().unwrap_or("").trim().to_owned();
    let notes = parts.map(|n| n.trim().to_owned()).collect();
    Some(Ok(Expect { line: 0, start: col, end: col + width, code: code.to_owned(), message, notes }))
}

fn parse_fixture(text: &str) -> Result<Fixture, String> {
    let mut line_starts = Vec::new();
    let mut lines = Vec::new();
    let mut at = 0;
    for l in text.split_inclusive('\n') {
        line_starts.push(at);
        lines.push(l.trim_end_matches('\n').to_owned());
        at += l.len();
    }
    let mut kernel = None;
    let mut baseline = None;
    let mut lock = None;
    let mut per_definition = false;
    let mut expects = Vec::new();
    let mut target: Option<usize> = None;
    for (i, l) in lines.iter().enumerate() {
        if let Some(k) = l.strip_prefix("# kernel:") {
            if kernel.is_some() || expects.iter().any(|_: &Expect| true) {
                return Err(format!("line {}: a second or late `# kernel:` header", i + 1));
            }
            kernel = Some(k.trim().to_owned());
        }
        if let Some(b) = l.strip_prefix("# baseline:") {
            baseline = Some(b.trim().to_owned());
        }
        if let Some(b) = l.strip_prefix("# lock:") {
            lock = Some(b.trim().to_owned());
        }
        if let Some(mode) = l.strip_prefix("# check:") {
            match mode.trim() {
                "per-definition" => per_definition = true,
                "whole-file" => per_definition = false,
                other => return Err(format!("line {}: unknown check mode {other:?}", i + 1)),
            }
        }
        match caret_line(l) {
            Some(Ok(mut e)) => {
                let Some(t) = target else {
                    return Err(format!("line {}: caret line before any line", i + 1));
                };
                if e.end > lines[t].len() {
                    return Err(format!("line {}: carets past the end of line {}", i + 1, t + 1));
                }
                e.line = t;
                expects.push(e);
            }
            Some(Err(e)) => return Err(format!("line {}: {e}", i + 1)),
            None => target = Some(i),
        }
    }
    Ok(Fixture { kernel, baseline, lock, per_definition, line_starts, lines, expects })
}

fn line_of(fx: &Fixture, offset: usize) -> usize {
    fx.line_starts.partition_point(|&s| s <= offset).saturating_sub(1)
}

fn matches(e: &Expect, d: &Diagnostic, fx: &Fixture) -> bool {
    let base = fx.line_starts[e.line];
    e.code == d.code
        && base + e.start == d.span.start
        && base + e.end == d.span.end
        && d.message.contains(&e.message)
        && e.notes.iter().all(|n| d.notes.iter().any(|dn| dn.contains(n.as_str())))
}

fn show_diag(d: &Diagnostic, fx: &Fixture) -> String {
    let line = line_of(fx, d.span.start);
    let col = d.span.start - fx.line_starts[line];
    let marks = if d.span.is_empty() { "$".to_owned() } else { "^".repeat(d.span.len()) };
    let lead = if col == 0 { "#@0 ".to_owned() } else { format!("#{}", " ".repeat(col - 1)) };
    format!("line {}: {}\n  {lead}{marks} {} {}  (notes: {:?})", line + 1, fx.lines[line], d.code, d.message, d.notes)
}

/// Per line with a difference: (line index, missing expectations, extra diagnostics).
type Differences<'a> = Vec<(usize, Vec<&'a Expect>, Vec<&'a Diagnostic>)>;

fn differences<'a>(fx: &'a Fixture, diags: &'a [Diagnostic]) -> Differences<'a> {
    let mut used = vec![false; diags.len()];
    let mut missing: Vec<&Expect> = Vec::new();
    for e in &fx.expects {
        match (0..diags.len()).find(|&i| !used[i] && matches(e, &diags[i], fx)) {
            Some(i) => used[i] = true,
            None => missing.push(e),
        }
    }
    let extra: Vec<&Diagnostic> = diags.iter().zip(&used).filter(|(_, u)| !**u).map(|(d, _)| d).collect();
    let lines: BTreeSet<usize> =
        missing.iter().map(|e| e.line).chain(extra.iter().map(|d| line_of(fx, d.span.start))).collect();
    lines
        .into_iter()
        .map(|l| {
            let m = missing.iter().copied().filter(|e| e.line == l).collect();
            let x = extra.iter().copied().filter(|d| line_of(fx, d.span.start) == l).collect();
            (l, m, x)
        })
        .collect()
}

/// `"CODE message-substring"` against an expectation or a diagnostic.
fn recorded(rec: &str, code: &str, message: &str) -> bool {
    rec.split_once(' ').is_some_and(|(c, m)| c == code && message.contains(m))
}

/// Checks one fixture text; returns the failures (empty when it passes) and the
/// [`KNOWN_WRONG`] entries it used.
fn check_fixture(name: &str, text: &str, known: &[KnownWrong]) -> (Vec<String>, Vec<usize>) {
    let fx = match parse_fixture(text) {
        Ok(fx) => fx,
        Err(e) => return (vec![format!("{name}: {e}")], Vec::new()),
    };
    let kernels: Vec<&Kernel> = fx.baseline.iter().chain(fx.kernel.iter()).map(|k| kernel(k)).collect();
    let baseline_name = fx.baseline.as_ref().map(|b| kernel(b).name.clone());
    let keep = |d: &Diagnostic| baseline_name.is_none() || d.kernel.as_deref() != baseline_name.as_deref();
    // With `# lock:`, the text is locked on that kernel and checked against the others.
    let lock_kernel = fx.lock.as_ref().map(|k| kernel(k));
    let run = |parser: &mut Parser, text: &str| -> Vec<Diagnostic> {
        match lock_kernel {
            Some(lk) => {
                let entries: Vec<_> =
                    fevlint_check::analysis::meanings(parser, text, lk).into_iter().map(|(_, _, m)| m).collect();
                fevlint_check::analysis::check(
                    parser,
                    text.as_bytes().to_vec(),
                    &Options::new(Target::X86_64)
                        .kernels(&kernels)
                        .settings(&fevlint_check::config::Settings::default())
                        .lock(Some((lk.name.as_str(), entries.as_slice()))),
                )
                .1
            }
            None => check(parser, text.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&kernels)).1,
        }
    };
    let mut parser = Parser::new();
    let diags = if fx.per_definition {
        let mut all = Vec::new();
        for (i, line) in fx.lines.iter().enumerate() {
            if line.trim_start().starts_with('#') || line.trim().is_empty() {
                continue;
            }
            for mut d in run(&mut parser, line).into_iter().filter(keep) {
                d.span.start += fx.line_starts[i];
                d.span.end += fx.line_starts[i];
                all.push(d);
            }
        }
        all
    } else {
        run(&mut parser, text).into_iter().filter(keep).collect()
    };
    let mut failures = Vec::new();
    let mut used = Vec::new();
    for (line, missing, extra) in differences(&fx, &diags) {
        let text_line = &fx.lines[line];
        let entry = known.iter().position(|k| k.file == name && text_line.contains(k.line));
        if let Some(i) = entry {
            let k = &known[i];
            let same = missing.len() == k.missing.len()
                && extra.len() == k.extra.len()
                && missing.iter().all(|e| k.missing.iter().any(|r| recorded(r, &e.code, &e.message)))
                && k.missing.iter().all(|r| missing.iter().any(|e| recorded(r, &e.code, &e.message)))
                && extra.iter().all(|d| k.extra.iter().any(|r| recorded(r, d.code, &d.message)))
                && k.extra.iter().all(|r| extra.iter().any(|d| recorded(r, d.code, &d.message)));
            if same {
                used.push(i);
                continue;
            }
            failures.push(format!("{name}:{}: KNOWN_WRONG entry no longer matches (fixed?)", line + 1));
        }
        let mut f = format!("{name}:{}: {text_line}", line + 1);
        for e in missing {
            f += &format!(
                "\n  missing: {} at {}..{} containing {:?} notes {:?}",
                e.code, e.start, e.end, e.message, e.notes
            );
        }
        for d in extra {
            f += &format!("\n  unexpected: {}", show_diag(d, &fx));
        }
        failures.push(f);
    }
    (failures, used)
}

/// Entries of [`KNOWN_WRONG`] (for files `which` selects) that did not match as many lines
/// as they say: fevlint changed, the entry must be updated or deleted.
fn unused_known_wrong(which: impl Fn(&str) -> bool, used: &[usize]) -> Vec<String> {
    KNOWN_WRONG
        .iter()
        .enumerate()
        .filter(|(_, k)| which(k.file))
        .filter_map(|(i, k)| {
            let n = used.iter().filter(|&&u| u == i).count();
            (n != k.lines).then(|| {
                format!("KNOWN_WRONG {} {:?}: matched {n} line(s), not {} (fixed? update it)", k.file, k.line, k.lines)
            })
        })
        .collect()
}

fn corpus_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/corpus")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "fev"))
        .collect();
    files.sort();
    files
}

fn definitions(text: &str) -> usize {
    fevlint_check::analysis::count_definitions(text)
}

#[test]
fn corpus() {
    let mut failures = Vec::new();
    let mut used = Vec::new();
    let mut total = 0;
    let mut fired: BTreeSet<String> = BTreeSet::new();
    for path in corpus_files() {
        let name = format!("corpus/{}", path.file_name().expect("name").to_string_lossy());
        let text = std::fs::read_to_string(&path).expect("read corpus file");
        total += definitions(&text);
        if let Ok(fx) = parse_fixture(&text) {
            fired.extend(fx.expects.iter().map(|e| e.code.clone()));
        }
        let (f, u) = check_fixture(&name, &text, KNOWN_WRONG);
        failures.extend(f);
        used.extend(u);
    }
    failures.extend(unused_known_wrong(|f| f.starts_with("corpus/"), &used));
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    assert!(total >= 80, "the corpus has {total} definitions, want at least 80");
    // bpftrace rules have their defects in server/tests/bpftrace.rs, the rules of compiled
    // BPF objects theirs in server/tests/bpf_check.rs and the rule docs' compiled examples.
    let missing: Vec<&str> = fevlint_check::rules::REGISTRY
        .iter()
        .filter(|r| {
            !fevlint_check::rules::is_bpftrace(r)
                && !fevlint_check::rules::is_bpf_object(r)
                && !fevlint_check::rules::is_mainline(r)
        })
        .map(|r| r.code)
        .filter(|c| !fired.contains(*c))
        .collect();
    assert!(missing.is_empty(), "rules no corpus caret expects: {missing:?}");
}

#[test]
fn clean_script_has_no_diagnostics() {
    let path = root().join("fixtures/scripts/clean-6.12.fev");
    let text = std::fs::read_to_string(&path).expect("clean-6.12.fev");
    let fx = parse_fixture(&text).expect("clean script parses as a fixture");
    assert!(fx.expects.is_empty(), "the clean script carries no expectations");
    assert_eq!(fx.kernel.as_deref(), Some("6.12.117+deb12-amd64"));
    let (mut failures, used) = check_fixture("clean-6.12.fev", &text, KNOWN_WRONG);
    failures.extend(unused_known_wrong(|f| f == "clean-6.12.fev", &used));
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
    let n = definitions(&text);
    assert!(n >= 100, "the clean script has {n} definitions, want at least 100");
}

/// The i386 fixture has no BTF: the kernel says so once, and only the name, trace and
/// slot rules run (the corpus file `6.1.0-50-686-pae.fev` shows which fire).
#[test]
fn i386_kernel_says_once_that_types_are_unavailable() {
    let k = kernel("6.1.0-50-686-pae");
    let notes: Vec<&String> = k.notes.iter().filter(|n| n.contains("no type information")).collect();
    assert_eq!(notes.len(), 1, "{:?}", k.notes);
    assert_eq!(notes[0], "no type information (no BTF or DWARF): type and layout checks are off");
}

/// The harness can fail: a caret moved by one column, a wrong code, a wrong message, a
/// removed caret line and an added one each make a passing fixture fail.
#[test]
fn the_harness_catches_broken_carets() {
    let good = "# kernel: 6.12.117+deb12-amd64\nvfs_read(u32 mode+14[0])\n#                ^^^^^^ T404 offset 14 of `struct file`\n";
    assert_eq!(check_fixture("t", good, &[]).0, Vec::<String>::new());
    let broken = [
        good.replace("#                ^", "#                 ^"),
        good.replace("T404", "T405"),
        good.replace("offset 14", "offset 15"),
        good.replace("`struct file`\n", "`struct file` note: no such note\n"),
        good.lines().take(2).collect::<Vec<_>>().join("\n"),
        format!("{good}#^ S001 nothing here\n"),
        good.replace("mode+14", "mode+12"),
    ];
    for b in &broken {
        assert!(!check_fixture("t", b, &[]).0.is_empty(), "passes but should not:\n{b}");
    }
}
