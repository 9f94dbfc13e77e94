//! fevlint's parser against the real bpftrace 0.17 on bpftrace's own test-suite programs
//! (`fixtures/bpftrace/judged`: 634 cases from v0.17.0's tests/parser.cpp, tests/runtime
//! and its `*.bt` files, with the verdicts `bpftrace -d` gave, recorded by `record.py`).
//!
//! Every case: the same verdict (accepted, or rejected on the same line with the same
//! message; for bison's syntax errors, the same `syntax error, unexpected X`). The live
//! test runs the installed bpftrace again on every rejected case and a sample of the
//! accepted ones, so the recording cannot drift from the tool.

use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/bpftrace/judged")
}

/// `(line, message)` of fevlint's first error, 1-based line.
fn verdict(text: &str) -> Option<(usize, String)> {
    let p = fevlint_bpftrace::parse(text);
    let e = p.errors.first()?;
    let line = text[..e.span.start.min(text.len())].matches('\n').count() + 1;
    Some((line, e.message.clone()))
}

fn recorded() -> Vec<(String, Option<(usize, String)>)> {
    let v = std::fs::read_to_string(dir().join("verdicts.txt")).expect("verdicts.txt");
    v.lines()
        .map(|l| {
            let (name, rest) = l.split_once(' ').expect("name");
            let r = rest.strip_prefix("reject ").map(|r| {
                let (place, msg) = r.split_once(' ').expect("place");
                let line = place.split(':').next().and_then(|l| l.parse().ok()).expect("line");
                (line, msg.to_owned())
            });
            (name.to_owned(), r)
        })
        .collect()
}

/// bison's "syntax error, unexpected X, expecting Y": fevlint says the first part.
fn same_message(ours: &str, theirs: &str) -> bool {
    ours == theirs || theirs.starts_with(&format!("{ours},"))
}

#[test]
fn verdicts_agree_with_bpftrace() {
    let cases = recorded();
    assert_eq!(cases.len(), 634);
    let mut bad = Vec::new();
    for (name, want) in &cases {
        let text = std::fs::read_to_string(dir().join("cases").join(name)).expect("case");
        let got = verdict(&text);
        let ok = match (&got, want) {
            (None, None) => true,
            (Some((gl, gm)), Some((wl, wm))) => gl == wl && same_message(gm, wm),
            _ => false,
        };
        if !ok {
            bad.push(format!("{name}: bpftrace {want:?}, fevlint {got:?}"));
        }
    }
    assert!(bad.is_empty(), "{} of {} disagree:\n{}", bad.len(), cases.len(), bad.join("\n"));
}

/// bpftrace's verdict, as `record.py` reads it: the first error of the parse stages.
fn live_verdict(path: &Path) -> Option<(usize, String)> {
    const PARSE_STAGE: &[&str] = &[
        "syntax error",
        "invalid character",
        "unterminated string",
        "end of file during comment",
        "invalid escape character",
        "octal escape sequence",
        "Invalid probe type",
        "probe type requires",
        "probe type takes",
        "Unknown function:",
        "The ++ operator",
        "The -- operator",
        "Tuples are immutable",
        "No attach points for probe",
        "unexpected end of file, expected {",
        "Offset not allowed",
        "Cannot take more than one offset",
        "Invalid offset",
        "param $",
        "Not a positional parameter",
        "Macro recursion limit",
        "Found trailing",
        "stoull",
        "Coefficient part",
        "Exponent",
        "No probe type matched",
        "Invalid function",
    ];
    let out = std::process::Command::new("bpftrace")
        .arg("-d")
        .arg(path)
        .output()
        .expect("bpftrace (Debian's 0.17, installed by scripts/install-test-deps.sh) runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let prefix = format!("{}:", path.display());
    for (at, _) in text.match_indices(&prefix) {
        let rest = &text[at + prefix.len()..];
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let rest = &rest[..line_end];
        let Some((place, msg)) = rest.split_once(": ERROR: ") else { continue };
        if PARSE_STAGE.iter().any(|p| msg.starts_with(p)) || msg.contains(" probe type ") {
            let line = place.split([':', '-']).next().and_then(|l| l.parse().ok())?;
            return Some((line, msg.to_owned()));
        }
    }
    None
}

/// The recording still holds: the installed bpftrace gives the recorded verdict on every
/// rejected case and on every tenth accepted one.
#[test]
fn recorded_verdicts_are_bpftraces() {
    if !fevlint_testkit::real_tools("bpftrace") {
        return;
    }
    let mut bad = Vec::new();
    for (i, (name, want)) in recorded().iter().enumerate() {
        if want.is_none() && i % 10 != 0 {
            continue;
        }
        let path = dir().join("cases").join(name);
        let got = live_verdict(&path);
        if &got != want {
            bad.push(format!("{name}: recorded {want:?}, bpftrace now {got:?}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
