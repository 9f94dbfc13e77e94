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

/// A memo answers on its kernel what a fresh resolution answers: every 7th function of
/// two fixture kernels, resolved one after the other with the kernel's memo (where the
/// parameters of a prototype are found once for all the functions that share it) and
/// each alone. Functions with the same parameter types under other names are among them
/// (their A301 and hover name each its own parameters): a memo keyed by types alone
/// fails here.
#[test]
fn a_memo_answers_as_a_fresh_resolution_on_its_kernel() {
    use fevlint_check::resolve;
    use std::collections::HashMap;
    let target = Target::X86_64;
    for k in ["6.1.0-56-amd64", "6.12.117+deb12-amd64"] {
        let kernel = Kernel::open(&root().join("fixtures/kernels").join(k)).unwrap_or_else(|e| panic!("{k}: {e}"));
        let mut names = kernel.types().expect("BTF").function_names().expect("function names");
        names.sort();
        let text: String =
            names.iter().step_by(7).map(|n| format!("{n}(x64 a0, x64 a1, x64 a2, x64 a3, x64 a4, x64 a5)\n")).collect();
        let lines = Parser::new().lines(&text, target);
        let memo = resolve::Memo::new(&kernel);
        let (mut resolved, mut renamed) = (0, 0);
        let mut by_types: HashMap<Vec<u64>, Vec<Option<String>>> = HashMap::new();
        for l in &lines {
            let Some(p) = &l.parsed else { continue };
            let warm = resolve::resolve_with(&memo, p, target).expect("resolves");
            let cold = resolve::resolve(&kernel, p, target).expect("resolves");
            assert_eq!(format!("{warm:#?}"), format!("{cold:#?}"), "{k}: line {}", l.number);
            let Some(r) = warm else { continue };
            resolved += 1;
            let Some(proto) = r.proto() else { continue };
            let types = proto.proto.params.iter().map(|p| p.ty.0).collect::<Vec<_>>();
            let names = r.params.iter().map(|p| p.name.clone()).collect::<Vec<_>>();
            match by_types.get(&types) {
                Some(other) if *other != names => renamed += 1,
                Some(_) => {}
                None => {
                    by_types.insert(types, names);
                }
            }
        }
        assert!(resolved > 1000 && renamed > 50, "{k}: {resolved} resolved, {renamed} renamed");
    }
}
