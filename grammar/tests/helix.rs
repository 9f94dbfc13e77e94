//! Helix support (`editors/helix/`): `languages.toml` parses as TOML (Python's `tomllib`)
//! and declares the language, its server and its grammar; the Helix copy of the
//! highlights query is fresh (`scripts/sync-queries.sh --check`), compiles against this
//! grammar and uses only capture names Helix themes know; and the grammar builds with
//! `cc` into a shared library exporting `tree_sitter_fev`, as `hx --grammar build` does.
//! (Helix itself is not packaged for Debian 12 nor on a registry, so it is not run.)

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

#[test]
fn languages_toml_declares_fev_its_server_and_grammar() {
    if !fevlint_testkit::real_tools("Python 3.11 (tomllib)") {
        return;
    }
    let out = Command::new("python3")
        .args(["-c", "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))"])
        .arg(root().join("editors/helix/languages.toml"))
        .output()
        .expect("python3 (3.11 or later, for tomllib)");
    assert!(out.status.success(), "languages.toml is not valid TOML: {}", String::from_utf8_lossy(&out.stderr));
    let toml: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let lang =
        toml["language"].as_array().and_then(|l| l.iter().find(|l| l["name"] == "fev")).expect("[[language]] fev");
    assert_eq!(lang["scope"], "source.fev");
    assert_eq!(lang["file-types"], serde_json::json!(["fev"]));
    assert_eq!(lang["comment-token"], "#");
    assert_eq!(lang["language-servers"], serde_json::json!(["fevlint"]));
    let server = &toml["language-server"]["fevlint"];
    assert_eq!(server["command"], "fevlint");
    assert_eq!(server["args"], serde_json::json!(["lsp"]));
    let grammar =
        toml["grammar"].as_array().and_then(|g| g.iter().find(|g| g["name"] == "fev")).expect("[[grammar]] fev");
    let path = grammar["source"]["path"].as_str().unwrap_or_default();
    assert!(path.ends_with("/grammar"), "the grammar is the checkout's grammar/ folder: {path:?}");
    assert!(root().join("grammar/src/parser.c").is_file());
}

/// Capture names Helix's themes style (helix-editor.com, "Themes: scopes"), those the
/// query may use.
const HELIX_SCOPES: &[&str] = &[
    "attribute",
    "comment",
    "constant",
    "constant.builtin",
    "constant.character",
    "constant.numeric",
    "constructor",
    "function",
    "function.builtin",
    "keyword",
    "keyword.storage.modifier",
    "keyword.storage.type",
    "label",
    "namespace",
    "operator",
    "punctuation",
    "punctuation.bracket",
    "punctuation.delimiter",
    "punctuation.special",
    "special",
    "string",
    "tag",
    "type",
    "type.builtin",
    "variable",
    "variable.builtin",
    "variable.other.member",
    "variable.parameter",
];

#[test]
fn helix_highlights_are_fresh_compile_and_use_helix_scopes() {
    let sync = Command::new("sh")
        .arg(root().join("scripts/sync-queries.sh"))
        .arg("--check")
        .output()
        .expect("sync-queries.sh");
    assert!(sync.status.success(), "{}", String::from_utf8_lossy(&sync.stderr));
    let text = std::fs::read_to_string(root().join("editors/helix/runtime/queries/fev/highlights.scm")).expect("query");
    let query = tree_sitter::Query::new(&tree_sitter_fev::LANGUAGE.into(), &text).expect("the Helix query compiles");
    assert!(query.pattern_count() > 10);
    for name in query.capture_names() {
        assert!(HELIX_SCOPES.contains(name), "@{name} is not a Helix theme scope");
    }
}

#[test]
fn grammar_builds_as_helix_builds_it() {
    let out_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("helix-grammar");
    std::fs::create_dir_all(&out_dir).expect("tmp dir");
    let so = out_dir.join("fev.so");
    let _ = std::fs::remove_file(&so);
    let src = root().join("grammar/src");
    let mut cc = Command::new("cc");
    cc.args(["-shared", "-fPIC", "-fno-exceptions", "-O3", "-std=c11", "-I"]).arg(&src).arg(src.join("parser.c"));
    if src.join("scanner.c").is_file() {
        cc.arg(src.join("scanner.c"));
    }
    let out = cc.arg("-o").arg(&so).output().expect("cc");
    assert!(out.status.success(), "cc failed: {}", String::from_utf8_lossy(&out.stderr));
    let nm = Command::new("nm").args(["-D", "--defined-only"]).arg(&so).output().expect("nm");
    let symbols = String::from_utf8_lossy(&nm.stdout);
    assert!(
        symbols.lines().any(|l| l.ends_with(" T tree_sitter_fev")),
        "fev.so does not export tree_sitter_fev:\n{symbols}"
    );
}
