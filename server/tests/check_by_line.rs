//! A script's kernel findings are each definition's own: what a check keeps between the
//! definitions it resolves against one kernel (`resolve::Memo`: the structs an offset past
//! a struct's end may be read in; the names rename suggestions asked, `Context::
//! function_exists`) changes nothing. The examples and fixture scripts, plus names
//! missing on some kernels (K201, D501 with their suggestions), are checked against the
//! four amd64 fixture kernels whole and one line at a time: the same findings.

use fevlint_check::analysis::{check, Options};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_check::rules;
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parser, Target};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(line, column, code, message, notes, kernel)` of each kernel finding (file rules such
/// as N101 read several lines, so they are left out).
type Finding = (usize, usize, &'static str, String, Vec<String>, Option<String>);

fn owned(s: &std::sync::Arc<str>) -> String {
    s.to_string()
}

fn findings(text: &str, first_line: usize, found: Vec<Diagnostic>) -> Vec<Finding> {
    found
        .into_iter()
        .filter(|d| !d.code.starts_with(['N', 'S']))
        .map(|d| {
            let line = text[..d.span.start].matches('\n').count();
            let column = d.span.start - text[..d.span.start].rfind('\n').map_or(0, |i| i + 1);
            (
                first_line + line,
                column,
                d.code,
                owned(&d.message),
                d.notes.iter().map(owned).collect(),
                d.kernel.as_ref().map(owned),
            )
        })
        .collect()
}

#[test]
fn a_script_checked_whole_finds_what_its_lines_find() {
    let kernels: Vec<Kernel> = ["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"]
        .iter()
        .map(|k| Kernel::open(&root().join("fixtures/kernels").join(k)).unwrap_or_else(|e| panic!("{k}: {e}")))
        .collect();
    let refs: Vec<&Kernel> = kernels.iter().collect();
    let options = Options::new(Target::X86_64).kernels(&refs);
    let mut text = String::new();
    // Without comments: a suppression on the line before a definition would not be
    // seen by the line alone.
    for f in ["fixtures/scripts/clean-6.12.fev", "examples/net.fev", "examples/vfs.fev", "examples/mm.fev"] {
        let script = std::fs::read_to_string(root().join(f)).expect("script");
        text.extend(script.lines().filter(|l| !l.trim_start().starts_with('#')).map(|l| format!("{l}\n")));
    }
    // Gone or renamed on some kernels: K201 and D501 ask the same names for suggestions.
    text.push_str("kmalloc_trace(x64 s, x32 flags, u64 size)\nkmalloc(u64 size)\nSyS_openat(int dfd)\n");
    text.push_str("vfs_raed(x64 file)\n__kmalloc(u64 size)\nkmalloc_trace(x64 s)\n");
    // Past the end of a family's base struct, at two offsets (the family's names are
    // kept between them), and past the end of anything.
    text.push_str("tcp_v6_connect(NULL, x64 a6+16[0], int addr_len)\ntcp_v6_connect(NULL, x32 a+20[0])\n");
    text.push_str("tcp_enter_loss(u32 oops+5000[0])\n");
    let mut parser = Parser::new();
    let (_, whole) = check(&mut parser, text.as_bytes().to_vec(), &options);
    let whole = findings(&text, 0, whole);
    let mut by_line = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = format!("{line}\n");
        let (_, found) = check(&mut parser, line.as_bytes().to_vec(), &options);
        by_line.extend(findings(&line, i, found));
    }
    let sort = |mut v: Vec<Finding>| {
        v.sort();
        v
    };
    let (whole, by_line) = (sort(whole), sort(by_line));
    let has =
        |rule: &rules::Rule, note: &str| whole.iter().any(|f| f.2 == rule.code && f.4.iter().any(|n| n.contains(note)));
    assert!(has(&rules::T407, "") && has(&rules::D501, "help:") && has(&rules::K201, "similar names"), "{whole:#?}");
    assert!(whole.iter().any(|f| f.2 == rules::T407.code && f.3.contains("it fits")), "{whole:#?}");
    assert_eq!(whole, by_line);
}
