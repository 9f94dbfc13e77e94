//! The parser against real kernels: `tests/oracle/mainline-corpus.txt` was written line by
//! line to `dynamic_events` of the Debian 6.1.170, 6.1.192 and 6.12.117 kernels under QEMU
//! (`oracle/run-oracle.sh`, commands in the TSV headers). For every line the parser, fed
//! the same lines in the same order ([`Session`]) and the fixture kernel's BTF, System.map
//! and ftrace list, must give the kernel's verdict, its first error_log message, its caret
//! and its errno.

mod common;

use fevlint_mainline::{Assumption, Dialect, Line, Rejection, Session};

struct Row {
    n: usize,
    accept: bool,
    message: String,
    caret: Option<usize>,
    errno: String,
}

fn rows(tsv: &str) -> Vec<Row> {
    tsv.lines()
        .filter(|l| l.starts_with("DEF\t"))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let k = f.len();
            Row {
                n: f[1].parse().expect("line number"),
                accept: f[2] == "ACCEPT",
                message: f[k - 3].to_owned(),
                caret: f[k - 2].parse().ok(),
                errno: f[k - 1].to_owned(),
            }
        })
        .collect()
}

/// Whether the line's probe place reads the kernel's code: `SYM+OFF` with OFF not 0
/// (`arch_adjust_kprobe_addr`, `can_probe`), or a numeric place.
fn places_into_code(line: &str) -> bool {
    let Some(place) = line.split_whitespace().nth(1) else { return false };
    let place = place.trim_end_matches("%return");
    match place.find(['+', '-']) {
        Some(i) => !place[i + 1..].trim_start_matches("0x").trim_start_matches('0').is_empty(),
        None => place.starts_with(|c: char| c.is_ascii_digit()),
    }
}

/// The hand-written corpus.
const CORPUS: &str = include_str!("oracle/mainline-corpus.txt");
/// Every argument of the corpus under every probe flavour, and probe places under each
/// (`oracle/generate-corpus.py`): each error path from each kind of probe.
const GENERATED: &str = include_str!("oracle/generated-corpus.txt");

fn run(dialect: &Dialect, fixture: &str, tsv: &str) {
    run_corpus(dialect, fixture, CORPUS, tsv)
}

fn run_corpus(dialect: &Dialect, fixture: &str, corpus: &str, tsv: &str) {
    let env = common::FixtureKernel::load(fixture);
    let lines: Vec<&str> = corpus.lines().collect();
    let rows = rows(tsv);
    assert!(rows.len() >= 100, "corpus too small: {}", rows.len());
    let mut session = Session::new(dialect, &env);
    let mut bad = Vec::new();
    let (mut accepted, mut logged, mut silent, mut garbage, mut deferred, mut code) = (0, 0, 0, 0, 0, 0);
    for row in &rows {
        let line = lines[row.n - 1];
        let got = session.write(line);
        let ok = match (&got, row.accept) {
            (Ok(Line::Probe(_) | Line::Remove(_)), true) => {
                accepted += 1;
                true
            }
            (Err(Rejection::Silent { errno, .. }), false) if row.message == "(no error_log entry)" => {
                silent += 1;
                errno.name() == row.errno
            }
            (Err(Rejection::Logged(e)), false) => {
                logged += 1;
                let first = e.earlier.first().copied().unwrap_or(e.id);
                let msg = format!("{}: error: {}", e.subsystem, dialect.message(first));
                // A caret beyond the command is the kernel's own garbage (an offset
                // computed from a NULL pointer, see parse_btf_field); only the id counts.
                let kernel_caret_sane = row.caret.is_some_and(|c| c <= e.command.len() + 1);
                if !kernel_caret_sane {
                    garbage += 1;
                }
                msg == row.message && (!kernel_caret_sane || row.caret == Some(e.caret)) && e.errno.name() == row.errno
            }
            // Registration failures only the kernel's code bytes decide (instruction
            // boundary, blacklist): the parser must accept and say it assumed it.
            (Ok(Line::Probe(p)), false)
                if row.message.ends_with("Failed to register probe event")
                    || row.message.ends_with("Probe point is not an instruction boundary") =>
            {
                deferred += 1;
                p.assumptions.iter().any(|a| matches!(a, Assumption::Registers { .. }))
            }
            _ => false,
        };
        // Where the kernel read its code (an offset into a function, an address), the
        // verdict is the kernel model's to give (server/tests/dynevents.rs reads the
        // images); this parser's test env has no code bytes.
        let code_dependent = !ok && places_into_code(line);
        if code_dependent {
            code += 1;
        }
        // An event the kernel refused but the parser kept would make its removal differ.
        if let (Ok(Line::Probe(p)), false) = (&got, row.accept) {
            let _ = session.write(&format!("-:{}/{}", p.group, p.event));
        }
        if !ok && !code_dependent {
            bad.push(format!(
                "line {} `{}`\n   kernel: {} {} caret {:?} {}\n   parser: {:?}",
                row.n,
                line,
                if row.accept { "ACCEPT" } else { "REJECT" },
                row.message,
                row.caret,
                row.errno,
                got.as_ref().map(|_| "accept").map_err(|e| match e {
                    Rejection::Logged(k) =>
                        format!("{} (first {:?}) caret {} {}", k.message, k.earlier.first(), k.caret, k.errno.name()),
                    other => format!("{other:?}"),
                })
            ));
        }
    }
    eprintln!(
        "{}: {} lines: {accepted} accepted, {logged} logged errors ({garbage} with a garbage kernel caret), {silent} silent, {deferred} registration failures left to the kernel model, {code} verdicts that need code bytes; {} mismatches",
        dialect.version,
        rows.len(),
        bad.len()
    );
    assert!(bad.is_empty(), "{} mismatches:\n{}", bad.len(), bad.join("\n"));
}

#[test]
fn debian_6_1_170_agrees_with_the_parser() {
    run(&Dialect::debian_6_1_170(), "6.1.0-47-amd64", include_str!("oracle/mainline-verdicts-6.1.170.tsv"));
}

#[test]
fn debian_6_1_192_agrees_with_the_parser() {
    run(&Dialect::debian_6_1_192(), "6.1.0-56-amd64", include_str!("oracle/mainline-verdicts-6.1.192.tsv"));
}

#[test]
fn debian_6_12_117_agrees_with_the_parser() {
    run(&Dialect::debian_6_12_117(), "6.12.117+deb12-amd64", include_str!("oracle/mainline-verdicts-6.12.117.tsv"));
}

#[test]
fn debian_6_12_117_agrees_on_the_generated_corpus() {
    run_corpus(
        &Dialect::debian_6_12_117(),
        "6.12.117+deb12-amd64",
        GENERATED,
        include_str!("oracle/generated-verdicts-6.12.117.tsv"),
    );
}

#[test]
fn debian_6_1_192_agrees_on_the_generated_corpus() {
    run_corpus(
        &Dialect::debian_6_1_192(),
        "6.1.0-56-amd64",
        GENERATED,
        include_str!("oracle/generated-verdicts-6.1.192.tsv"),
    );
}

#[test]
fn debian_6_1_170_agrees_on_the_generated_corpus() {
    run_corpus(
        &Dialect::debian_6_1_170(),
        "6.1.0-47-amd64",
        GENERATED,
        include_str!("oracle/generated-verdicts-6.1.170.tsv"),
    );
}
