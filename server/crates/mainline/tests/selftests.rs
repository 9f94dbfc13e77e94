//! The ftrace selftests' syntax-error cases (`tests/kernel-syntax-error-cases.md`, copied
//! from fevlint's research notes, which transcribe `kprobe_syntax_errors.tc`,
//! `fprobe_syntax_errors.tc`, `tprobe_syntax_errors.tc`, `eprobes_syntax_errors.tc` and
//! `uprobe_syntax_errors.tc` of the Linux kernel, GPL-2.0) as a table test, with the
//! selftests' own README gates evaluated on each kernel's README.
//!
//! Asserted: what a selftest checks (the line is rejected with an error_log entry of that
//! subsystem, caret at the `^`) and the message. Where the Debian kernel itself answers
//! otherwise (recorded in `tests/oracle/`, e.g. 6.12 keeps an unknown tracepoint as a
//! stub for a future module, or logs NO_BTFARG where the test comment says BAD_ARG_NUM),
//! the kernel's answer is expected. The table's error IDs that differ from the kernel's
//! (they are test comments the selftests never check) are printed.

mod common;

use fevlint_mainline::{Dialect, ErrorId, Line, Rejection, Session};

struct Case {
    section: char,
    number: String,
    bytes: String,
    caret: usize,
    id: String,
    gate: String,
}

fn split_row(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => {
                cells.push(cur.trim().to_owned());
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    cells.into_iter().skip(1).collect()
}

fn cases() -> Vec<Case> {
    let md = include_str!("kernel-syntax-error-cases.md");
    let mut section = ' ';
    let mut out = Vec::new();
    for line in md.lines() {
        if let Some(rest) = line.strip_prefix("## ") {
            section = rest.chars().next().unwrap_or(' ');
            continue;
        }
        let Some(first) = line.strip_prefix("| ") else {
            continue;
        };
        if !first.starts_with(|c: char| c.is_ascii_digit()) || !"ABCDE".contains(section) {
            continue;
        }
        let cells = split_row(line);
        let unquote = |s: &str| s.trim_matches('`').to_owned();
        out.push(Case {
            section,
            number: cells[0].clone(),
            bytes: unquote(&cells[2]),
            caret: cells[3].parse().expect("caret"),
            id: cells[5].clone(),
            gate: cells[6].clone(),
        });
    }
    out
}

/// `grep -q 'PATTERN'` for the patterns the selftests use: `.*` between literal pieces
/// (with `\.`, `\[`, `\]` escapes), matched within one line.
fn grep(readme: &str, pattern: &str) -> bool {
    let pat = pattern.replace("\\.", ".").replace("\\[", "[").replace("\\]", "]");
    let pieces: Vec<&str> = pat.split(".*").filter(|p| !p.is_empty()).collect();
    readme.lines().any(|l| {
        let mut at = 0;
        pieces.iter().all(|p| match l[at..].find(p) {
            Some(i) => {
                at += i + p.len();
                true
            }
            None => false,
        })
    })
}

fn quoted(s: &str) -> Vec<String> {
    s.split('\'').skip(1).step_by(2).map(|x| x.to_owned()).collect()
}

/// Ok(true) run, Ok(false) gate closed, Err(reason) the selftest never runs it here.
fn gate_open(d: &Dialect, gate: &str) -> Result<bool, &'static str> {
    let readme = &d.readme;
    if gate.contains("if !grep") {
        return Err("guard written `if !grep` (a command named `!grep`): never runs");
    }
    if gate.contains("typecast series") {
        return Ok(gate_has(readme, gate));
    }
    if gate.contains("kprobes/list") {
        return Err("needs the kernel's code bytes (instruction boundary)");
    }
    if gate.starts_with("x86") || gate == "-" || gate.is_empty() {
        return Ok(true);
    }
    let mut ok = true;
    let g = gate.split("setup:").next().unwrap_or("");
    if g.contains("array gate") {
        ok &= readme.contains(" <type>\\[<array-size>\\]");
    }
    if g.contains("$comm") {
        ok &= readme.contains("$comm");
    }
    if g.contains("Create/append") {
        ok &= readme.contains("Create/append/");
    }
    for word in ["imm-value", "imm-string"] {
        if g.contains(word) && !g.contains('\'') {
            ok &= readme.contains(word);
        }
    }
    if g.contains("matches") {
        ok &= quoted(g).iter().all(|p| grep(readme, p));
    } else if g.contains("lacks") {
        ok &= quoted(g).iter().all(|p| !readme.contains(p.as_str()));
    } else {
        ok &= gate_has(readme, g);
    }
    Ok(ok)
}

fn gate_has(readme: &str, g: &str) -> bool {
    quoted(g).iter().all(|p| readme.contains(p.as_str()))
}

fn setup_of(gate: &str) -> Option<String> {
    let s = gate.split("setup:").nth(1)?;
    let s = s.trim().trim_start_matches("\\`").trim_start_matches('`');
    let end = s.find("\\`").or_else(|| s.find('`')).unwrap_or(s.len());
    Some(s[..end].to_owned())
}

/// The real kernel's answer for `line`, if the oracle corpus has it: (accepted, caret).
/// The real kernel's answer for `line`, if the oracle corpus has it: (accepted, the
/// error_log message, caret).
fn oracle(tsv: &str, line: &str) -> Option<(bool, String, Option<usize>)> {
    let corpus = include_str!("oracle/mainline-corpus.txt");
    let n = corpus.lines().position(|l| l == line)? + 1;
    tsv.lines().find_map(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        (f.first() == Some(&"DEF") && f.get(1) == Some(&n.to_string().as_str()))
            .then(|| (f[2] == "ACCEPT", f[f.len() - 3].to_owned(), f[f.len() - 2].parse().ok()))
    })
}

fn run(d: &Dialect, fixture: &str, tsv: &str) {
    let env = common::FixtureKernel::load(fixture);
    let (mut ran, mut closed, mut never, mut unmodelled, mut kernel_differs) = (0, 0, 0, 0, 0);
    let mut id_diffs = Vec::new();
    let mut bad = Vec::new();
    let mut last_setup: Option<String> = None;
    for c in cases() {
        let setup = setup_of(&c.gate).or_else(|| c.gate.starts_with("same").then(|| last_setup.clone()).flatten());
        last_setup = setup.clone();
        let section_open = match c.section {
            'A' => true,
            'B' => d.readme_has("f[:[<group>/][<event>]]"),
            'C' => d.readme_has("t[:[<group>/][<event>]] <tracepoint> [<args>]"),
            'D' => d.readme_has("<attached-group>.<attached-event> [<args>]"),
            _ => true,
        };
        match gate_open(d, &c.gate) {
            Err(_) => {
                never += 1;
                continue;
            }
            Ok(false) => {
                closed += 1;
                continue;
            }
            Ok(true) if !section_open => {
                closed += 1;
                continue;
            }
            Ok(true) => {}
        }
        let mut s = Session::new(d, &env);
        if let Some(setup) = &setup {
            let r = s.write(setup);
            assert!(matches!(r, Ok(Line::Probe(_))), "{}#{} setup `{setup}`: {r:?}", c.section, c.number);
        }
        let got = s.write(&c.bytes);
        if matches!(c.section, 'D' | 'E') {
            unmodelled += 1;
            if !matches!(got, Err(Rejection::Unmodelled { .. })) {
                bad.push(format!("{}#{} `{}`: {got:?}", c.section, c.number, c.bytes));
            }
            continue;
        }
        ran += 1;
        let subsystem = if c.section == 'A' { "trace_kprobe" } else { "trace_fprobe" };
        let mut want_reject = true;
        let mut want_caret = Some(c.caret);
        // The message: the real kernel's when the oracle recorded this line, else the
        // table's (a selftest comment, confirmed by the kernel's code for the rows with
        // a setup line: DIFF_PROBE_TYPE, DIFF_ARG_TYPE, SAME_PROBE).
        let mut want_message = ErrorId::from_name(&c.id).map(|id| format!("{subsystem}: error: {}", d.message(id)));
        if setup.is_none() {
            if let Some((acc, message, caret)) = oracle(tsv, &c.bytes) {
                if acc || caret != Some(c.caret) {
                    kernel_differs += 1;
                    want_reject = !acc;
                    want_caret = caret;
                }
                want_message = Some(message);
            }
        }
        let ok = match &got {
            Err(Rejection::Logged(e)) if want_reject => {
                let expected = ErrorId::from_name(&c.id);
                if expected != Some(e.id) && e.earlier.first().copied() != expected {
                    id_diffs.push(format!(
                        "{}#{} `{}`: table {} / parser {}",
                        c.section,
                        c.number,
                        c.bytes,
                        c.id,
                        e.id.name()
                    ));
                }
                let first = e.earlier.first().copied().unwrap_or(e.id);
                let message = format!("{}: error: {}", e.subsystem, d.message(first));
                e.subsystem == subsystem && Some(e.caret) == want_caret && Some(&message) == want_message.as_ref()
            }
            Ok(_) => !want_reject,
            _ => false,
        };
        if !ok {
            bad.push(format!(
                "{}#{} `{}` (setup {setup:?}): want reject={want_reject} caret {want_caret:?}, got {got:?}",
                c.section, c.number, c.bytes
            ));
        }
    }
    eprintln!(
        "{}: {ran} cases run, {closed} behind a closed README gate, {never} never run by the selftest, \
         {unmodelled} eprobe/uprobe cases (not modelled), {kernel_differs} where the Debian kernel differs from the selftest; \
         {} error IDs differ from the table's comment:\n  {}",
        d.version,
        id_diffs.len(),
        id_diffs.join("\n  ")
    );
    assert!(ran >= 40, "too few cases ran: {ran}");
    assert!(bad.is_empty(), "{} failures:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn selftest_cases_on_debian_6_1_192() {
    run(&Dialect::debian_6_1_192(), "6.1.0-56-amd64", include_str!("oracle/mainline-verdicts-6.1.192.tsv"));
}

#[test]
fn selftest_cases_on_debian_6_12_117() {
    run(&Dialect::debian_6_12_117(), "6.12.117+deb12-amd64", include_str!("oracle/mainline-verdicts-6.12.117.tsv"));
}
