//! Helix support for bpftrace (`editors/helix/`): `languages.toml` declares the
//! `bpftrace` grammar as the checkout's `grammar-bpftrace/`; the Helix copy of the
//! highlights query is fresh (`scripts/sync-queries.sh --check`), compiles against this
//! grammar and uses only capture names Helix themes know; and the grammar (parser and
//! scanner) builds with `cc` into a shared library exporting `tree_sitter_bpftrace`, as
//! `hx --grammar build` does. (Helix is not packaged for Debian 12, so it is not run.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

/// Helix's theme scopes (helix-editor.com, "Themes: scopes") that the query may use.
const HELIX_SCOPES: &[&str] = &[
    "comment",
    "constant",
    "constant.builtin",
    "constant.character.escape",
    "constant.numeric",
    "function",
    "function.builtin",
    "keyword",
    "keyword.directive",
    "operator",
    "punctuation.bracket",
    "punctuation.delimiter",
    "string",
    "type",
    "variable",
    "variable.builtin",
    "variable.other.member",
    "variable.parameter",
];

#[test]
fn languages_toml_names_the_grammar() {
    let text = std::fs::read_to_string(root().join("editors/helix/languages.toml")).expect("languages.toml");
    let grammar =
        text.split("[[grammar]]").skip(1).find(|g| g.contains("name = \"bpftrace\"")).expect("[[grammar]] bpftrace");
    assert!(grammar.contains("source = { path = \"/path/to/fevlint/grammar-bpftrace\" }"), "{grammar}");
}

#[test]
fn helix_highlights_are_fresh_compile_and_use_helix_scopes() {
    let sync = Command::new("sh").arg(root().join("scripts/sync-queries.sh")).arg("--check").output().expect("sh");
    assert!(sync.status.success(), "{}", String::from_utf8_lossy(&sync.stderr));
    let path = root().join("editors/helix/runtime/queries/bpftrace/highlights.scm");
    let text = std::fs::read_to_string(path).expect("query");
    let query =
        tree_sitter::Query::new(&tree_sitter_bpftrace::LANGUAGE.into(), &text).expect("the Helix query compiles");
    assert!(query.pattern_count() > 20);
    for name in query.capture_names() {
        assert!(HELIX_SCOPES.contains(name), "@{name} is not a Helix theme scope");
    }
}

#[test]
fn grammar_builds_as_helix_builds_it() {
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("helix-grammar");
    std::fs::create_dir_all(&out_dir).expect("tmp dir");
    let so = out_dir.join("bpftrace.so");
    let _ = std::fs::remove_file(&so);
    let src = root().join("grammar-bpftrace/src");
    let out = Command::new("cc")
        .args(["-shared", "-fPIC", "-fno-exceptions", "-O2", "-std=c11", "-I"])
        .arg(&src)
        .arg(src.join("parser.c"))
        .arg(src.join("scanner.c"))
        .arg("-o")
        .arg(&so)
        .output()
        .expect("cc");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let nm = Command::new("nm").args(["-D", "--defined-only"]).arg(&so).output().expect("nm");
    let symbols = String::from_utf8_lossy(&nm.stdout);
    for symbol in ["tree_sitter_bpftrace", "tree_sitter_bpftrace_external_scanner_scan"] {
        assert!(
            symbols.lines().any(|l| l.ends_with(&format!(" T {symbol}"))),
            "bpftrace.so lacks {symbol}:\n{symbols}"
        );
    }
}
