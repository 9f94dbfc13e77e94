//! Suppression comments through the one analysis entry point: same line, line above,
//! several codes, bare `ignore`, unknown codes (N104), unused suppressions (N103) and
//! what "unused" means when kernel rules did not run.

use fevlint_check::analysis::{self, Options};
use fevlint_check::config::Settings;
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parser, Target};
use std::sync::OnceLock;

fn kernel() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.12.117+deb12-amd64");
        Kernel::open(&path).expect("6.12 fixture opens")
    })
}

/// `line:code` (1-based line) of each diagnostic, with and without the kernel.
fn check(text: &str, with_kernel: bool) -> Vec<String> {
    let kernels: Vec<&Kernel> = if with_kernel { vec![kernel()] } else { Vec::new() };
    let diagnostics =
        analysis::check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&kernels))
            .1;
    diagnostics.iter().map(|d| format!("{}:{}", text[..d.span.start].matches('\n').count() + 1, d.code)).collect()
}

const DUP_FIELD: &str = "ip_rcv(x64 skb | int skb[32])";
const NOT_A_MEMBER: &str = "vfs_read(u32 mode+14[0])";

#[test]
fn unsuppressed_baseline() {
    assert_eq!(check(&format!("{DUP_FIELD}\n"), false), ["1:N102"]);
    assert_eq!(check(&format!("{NOT_A_MEMBER}\n"), true), ["1:T404"]);
}

#[test]
fn a_suppression_at_the_end_of_the_line() {
    assert_eq!(check(&format!("{DUP_FIELD}  # fevlint: ignore[N102]\n"), false), Vec::<String>::new());
    // By name, case-insensitive codes, extra words after the directive.
    assert_eq!(check(&format!("{DUP_FIELD} #fevlint:ignore[duplicate-field] why\n"), false), Vec::<String>::new());
    assert_eq!(check(&format!("{DUP_FIELD} # see below # fevlint: ignore[n102]\n"), false), Vec::<String>::new());
    // Another code does not hide N102, and is itself unused.
    assert_eq!(check(&format!("{DUP_FIELD}  # fevlint: ignore[S003]\n"), false), ["1:N102", "1:N103"]);
}

#[test]
fn a_suppression_on_the_line_above() {
    assert_eq!(check(&format!("# fevlint: ignore[N102]\n{DUP_FIELD}\n"), false), Vec::<String>::new());
    // Comment lines in between are skipped.
    assert_eq!(check(&format!("# fevlint: ignore[N102]\n# the skb word\n{DUP_FIELD}\n"), false), Vec::<String>::new());
    // It covers the next definition only.
    assert_eq!(check(&format!("# fevlint: ignore[N102]\n{DUP_FIELD}\n{DUP_FIELD}\n"), false), ["3:N101", "3:N102"]);
    // A blank line detaches it: it applies to nothing, whatever ran.
    assert_eq!(check(&format!("# fevlint: ignore[T404]\n\n{NOT_A_MEMBER}\n"), false), ["1:N103"]);
    assert_eq!(check("f(int a)\n# fevlint: ignore\n", false), ["2:N103"]);
}

#[test]
fn several_codes_and_bare_ignore() {
    const BOTH: &str = "vfs_read(u32 mode+14[0] | int mode[1])";
    // Two T404 (the first `mode` and the second) and one N102.
    assert_eq!(check(&format!("{BOTH}\n"), true), ["1:T404", "1:N102", "1:T404"]);
    assert_eq!(check(&format!("{BOTH}  # fevlint: ignore[T404, N102]\n"), true), Vec::<String>::new());
    // Only the unused code of a list is reported.
    let line = format!("{NOT_A_MEMBER}  # fevlint: ignore[T404, N102]\n");
    let got = analysis::check(
        &mut Parser::new(),
        line.as_bytes().to_vec(),
        &Options::new(Target::X86_64).kernels(&[kernel()]),
    )
    .1;
    assert_eq!(got.iter().map(|d| (d.code, &line[d.span.start..d.span.end])).collect::<Vec<_>>(), [("N103", "N102")]);
    assert_eq!(check(&format!("{BOTH}  # fevlint: ignore\n"), true), Vec::<String>::new());
    assert_eq!(check("vfs_read(x64 file)  # fevlint: ignore\n", true), ["1:N103"]);
    // `f` does not exist on the kernel: the K201 is what a bare ignore drops.
    assert_eq!(check("f(int a)  # fevlint: ignore\n", true), Vec::<String>::new());
    // Without a kernel the kernel rules did not run: a bare ignore proves nothing.
    assert_eq!(check("f(int a)  # fevlint: ignore\n", false), Vec::<String>::new());
}

#[test]
fn kernel_codes_are_unused_only_when_a_kernel_was_checked() {
    let text = "f(int a)  # fevlint: ignore[T404, K201]\n";
    assert_eq!(check(text, false), Vec::<String>::new());
    // With the kernel, `f` is unknown (K201, suppressed) and T404 did not fire.
    assert_eq!(check(text, true), ["1:N103"]);
    // File rules always run.
    assert_eq!(check("f(int a)  # fevlint: ignore[N102]\n", false), ["1:N103"]);
}

#[test]
fn unknown_codes_are_reported_not_matched_as_prefixes() {
    let text = format!("{DUP_FIELD}  # fevlint: ignore[N10, N102, bogus-name]\n");
    let got = analysis::check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64)).1;
    let got: Vec<_> = got.iter().map(|d| (d.code, &text[d.span.start..d.span.end], &*d.message)).collect();
    assert_eq!(
        got,
        [
            ("N104", "N10", "no rule has the code or name `N10`"),
            ("N104", "bogus-name", "no rule has the code or name `bogus-name`"),
        ]
    );
    // A suppression cannot silence N103/N104 themselves.
    assert_eq!(check("f(int a)  # fevlint: ignore[N103, X1]\n", false), ["1:N103", "1:N104"]);
}

#[test]
fn the_kernel_never_sees_the_comment() {
    // `#` cuts the line for the kernel: the definition still parses (a suppressed
    // S001 would otherwise be hiding a real difference).
    assert_eq!(check("vfs_read(x64 file) # fevlint: ignore[S001]\n", false), ["1:N103"]);
    assert_eq!(check("vfs_read(x64 file # fevlint: ignore[S001]\n", false), Vec::<String>::new());
}

#[test]
fn settings_decide_what_ran_and_apply_to_n103() {
    let text = "f(int a)  # fevlint: ignore[N102]\n";
    let run = |settings: &Settings| -> Vec<(&'static str, &'static str)> {
        analysis::check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64).settings(settings))
            .1
            .iter()
            .map(|d| (d.code, d.severity.as_str()))
            .collect()
    };
    assert_eq!(run(&Settings::default()), [("N103", "warning")]);
    // N102 turned off: it did not run, so the suppression is not unused.
    let off = Settings { ignore: vec!["N102".into()], ..Settings::default() };
    assert_eq!(run(&off), []);
    let loud = Settings { severity: vec![("N103", fevlint_check::diagnostic::Severity::Error)], ..Settings::default() };
    assert_eq!(run(&loud), [("N103", "error")]);
    let quiet = Settings { ignore: vec!["N103".into()], ..Settings::default() };
    assert_eq!(run(&quiet), []);
}
