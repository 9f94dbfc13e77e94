//! The VS Code extension's TextMate grammar (`editors/vscode/syntaxes/fev.tmLanguage.json`)
//! against this grammar's highlighting: it is generated from `queries/highlights.scm`
//! (`editors/vscode/scripts/gen-tmgrammar.js --check` fails when it is stale), and
//! VS Code's own tokenizer (vscode-textmate + Oniguruma, from `editors/vscode/node_modules`,
//! installed by `scripts/install-test-deps.sh`) must give every character of real scripts
//! the scope of the tree-sitter capture covering it. The `dynevents` grammar is checked on
//! sample lines, the hand-written `bpftrace` grammar on sample lines and Debian's bpftrace tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use tree_sitter::{Parser, Query, QueryCursor, StreamingIterator};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

fn node(args: &[&str]) -> (bool, String) {
    let vscode = root().join("editors/vscode");
    if !vscode.join("node_modules/vscode-textmate").is_dir() {
        panic!("editors/vscode/node_modules is missing: run scripts/install-test-deps.sh (it runs `npm ci` there)");
    }
    let out = Command::new("node")
        .args(args)
        .current_dir(&vscode)
        .output()
        .unwrap_or_else(|e| panic!("cannot run node (Node.js 20 or later is needed): {e}"));
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn textmate_grammar_is_generated_from_highlights_scm() {
    if !fevlint_testkit::real_tools("Node.js with editors/vscode/node_modules") {
        return;
    }
    let (ok, out) = node(&["scripts/gen-tmgrammar.js", "--check"]);
    assert!(ok, "{out}");
}

#[test]
fn textmate_scopes_match_tree_sitter_captures() {
    if !fevlint_testkit::real_tools("Node.js with editors/vscode/node_modules") {
        return;
    }
    let language = tree_sitter_fev::LANGUAGE.into();
    let query = Query::new(&language, tree_sitter_fev::HIGHLIGHTS_QUERY).expect("highlights.scm compiles");
    let names = query.capture_names();
    let mut parser = Parser::new();
    parser.set_language(&language).expect("language");

    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "fev"))
        .collect();
    files.sort();
    files.push(root().join("editors/vscode/test/constructs.fev"));

    let mut docs = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("read script");
        let tree = parser.parse(&text, None).expect("parse");
        // Lines with ERROR/MISSING nodes have no highlighting contract: leave them out.
        let mut checked = String::new();
        let mut errors = Vec::new();
        collect_errors(tree.root_node(), &mut errors);
        for (n, line) in text.split_inclusive('\n').enumerate() {
            if errors.contains(&n) {
                checked.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
            } else {
                checked.push_str(line);
            }
        }
        let tree = parser.parse(&checked, None).expect("parse");
        let mut cursor = QueryCursor::new();
        let mut captures = cursor.captures(&query, tree.root_node(), checked.as_bytes());
        let mut out: Vec<serde_json::Value> = Vec::new();
        let mut last_end = 0;
        while let Some((m, index)) = captures.next() {
            let c = m.captures()[*index];
            let (start, end) = (c.node.start_byte(), c.node.end_byte());
            // As tree-sitter's highlighter and the language server: the first capture of a span wins.
            if start == end || (start < last_end && !out.is_empty()) {
                continue;
            }
            last_end = end;
            out.push(serde_json::json!({"start": start, "end": end, "name": names[c.index as usize]}));
        }
        let name = path.strip_prefix(root()).unwrap_or(path).display().to_string();
        docs.push(serde_json::json!({"file": name, "text": checked, "captures": out, "skipped_lines": errors}));
    }
    // constructs.fev ends with a half-typed line on purpose; everything else parses.
    let skipped: usize = docs.iter().map(|d| d["skipped_lines"].as_array().map_or(0, Vec::len)).sum();
    assert_eq!(skipped, 1, "lines left out (ERROR in the tree-sitter parse): {docs:#?}");

    let json = Path::new(env!("CARGO_TARGET_TMPDIR")).join("textmate-captures.json");
    std::fs::write(&json, serde_json::to_string(&docs).expect("json")).expect("write captures");
    let (ok, out) = node(&["test/tmgrammar-check.js", json.to_str().expect("utf-8 path")]);
    assert!(ok, "TextMate grammar disagrees with highlights.scm:\n{out}");
    assert!(out.contains(&format!("{} passed, 0 failed", files.len())), "{out}");
}

fn collect_errors(node: tree_sitter::Node, lines: &mut Vec<usize>) {
    if node.is_error() || node.is_missing() {
        for l in node.start_position().row..=node.end_position().row {
            if !lines.contains(&l) {
                lines.push(l);
            }
        }
        return;
    }
    if node.has_error() {
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            collect_errors(child, lines);
        }
    }
}

/// The mainline dialect's grammar (`dynevents`, hand-written until that dialect has a
/// tree-sitter grammar) loads in vscode-textmate and scopes the parts of real lines.
#[test]
fn dynevents_textmate_grammar_scopes_mainline_lines() {
    if !fevlint_testkit::real_tools("Node.js with editors/vscode/node_modules") {
        return;
    }
    let (ok, out) = node(&["test/dynevents-check.js"]);
    assert!(ok && out.contains(" passed, 0 failed"), "{out}");
}

/// The bpftrace grammar (`bpftrace.tmLanguage.json`, hand-written: VS Code highlights with
/// TextMate, the tree-sitter grammar-bpftrace serves Neovim and Helix) scopes the parts of
/// sample lines, and over every tool script Debian's bpftrace ships, every comment, probe
/// kind and map.
#[test]
fn bpftrace_textmate_grammar_scopes_the_debian_tools() {
    if !fevlint_testkit::real_tools("Node.js with editors/vscode/node_modules") {
        return;
    }
    let tools = root().join("fixtures/bpftrace/debian-0.17-tools");
    let mut scripts: Vec<String> = std::fs::read_dir(&tools)
        .expect("fixtures/bpftrace/debian-0.17-tools")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bt"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 30, "the Debian tools: {}", scripts.len());
    let mut args = vec!["test/bpftrace-check.js"];
    args.extend(scripts.iter().map(String::as_str));
    let (ok, out) = node(&args);
    assert!(ok && out.contains(" passed, 0 failed"), "{out}");
}
