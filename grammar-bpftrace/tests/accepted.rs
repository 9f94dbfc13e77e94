//! Every script bpftrace 0.17 accepts parses without ERROR or MISSING: the 38 tools of
//! Debian's `bpftrace` package (`fixtures/bpftrace/debian-0.17-tools/`) and the scripts
//! of `fixtures/bpftrace/judged/` that `bpftrace -d` accepted (its `verdicts.txt`); the
//! ones it rejected at its syntax stage have one.

use std::path::{Path, PathBuf};
use tree_sitter::{Node, Parser, Query};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/bpftrace")
}

fn parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_bpftrace::LANGUAGE.into()).expect("grammar ABI matches the runtime");
    p
}

/// The first ERROR or MISSING node: its kind, line and column (1-based) and text.
fn first_error(node: Node, text: &str) -> Option<String> {
    if node.is_error() || node.is_missing() {
        let at = node.start_position();
        let end = node.end_byte().min(node.start_byte() + 60);
        return Some(format!(
            "{} at {}:{} `{}`",
            if node.is_missing() { "MISSING" } else { "ERROR" },
            at.row + 1,
            at.column + 1,
            &text[node.start_byte()..end]
        ));
    }
    if !node.has_error() {
        return None;
    }
    let mut cursor = node.walk();
    let found = node.children(&mut cursor).find_map(|c| first_error(c, text));
    found
}

fn errors_in(files: impl IntoIterator<Item = PathBuf>) -> (usize, Vec<String>) {
    let mut p = parser();
    let mut checked = 0;
    let mut bad = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let tree = p.parse(&text, None).expect("a tree");
        if let Some(e) = first_error(tree.root_node(), &text) {
            bad.push(format!("{}: {e}", path.display()));
        }
        checked += 1;
    }
    (checked, bad)
}

#[test]
fn debian_tools_parse_cleanly() {
    let dir = fixtures().join("debian-0.17-tools");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "bt"))
        .collect();
    files.sort();
    let (checked, bad) = errors_in(files);
    assert_eq!(checked, 38);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn scripts_bpftrace_accepts_parse_cleanly() {
    let dir = fixtures().join("judged");
    let verdicts = std::fs::read_to_string(dir.join("verdicts.txt")).expect("verdicts.txt");
    let accepted = verdicts.lines().filter_map(|l| l.strip_suffix(" accept")).map(|n| dir.join("cases").join(n));
    let (checked, bad) = errors_in(accepted);
    assert!(checked > 500, "only {checked} accepted scripts");
    assert!(bad.is_empty(), "{} of {checked}:\n{}", bad.len(), bad.join("\n"));
}

/// What bpftrace's lexer and grammar reject (its message starts so in `verdicts.txt`)
/// has an ERROR or MISSING node; later stages (attach point arguments, integer ranges)
/// are not the grammar's.
#[test]
fn scripts_bpftrace_rejects_as_syntax_have_errors() {
    const SYNTAX_STAGE: &[&str] = &[
        "syntax error",
        "invalid character",
        "unterminated string",
        "invalid escape character",
        "Unknown function",
        "Tuples are immutable",
        "unexpected end of file, expected {",
    ];
    let dir = fixtures().join("judged");
    let verdicts = std::fs::read_to_string(dir.join("verdicts.txt")).expect("verdicts.txt");
    let mut p = parser();
    let mut checked = 0;
    for line in verdicts.lines() {
        let mut f = line.splitn(4, ' ');
        let (name, verdict, message) = (f.next().unwrap_or(""), f.next(), f.nth(1).unwrap_or(""));
        if verdict != Some("reject") || !SYNTAX_STAGE.iter().any(|s| message.starts_with(s)) {
            continue;
        }
        let text = std::fs::read_to_string(dir.join("cases").join(name)).expect("case");
        let tree = p.parse(&text, None).expect("a tree");
        assert!(tree.root_node().has_error(), "{name} ({message}) parses cleanly: {}", tree.root_node().to_sexp());
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} rejected scripts");
}

#[test]
fn highlights_query_compiles() {
    Query::new(&tree_sitter_bpftrace::LANGUAGE.into(), tree_sitter_bpftrace::HIGHLIGHTS_QUERY)
        .expect("highlights.scm is valid for this grammar");
}

/// What `highlights.scm` captures on each construct of a script: the names editors style
/// (Neovim's `tests/editors/nvim_bt_test.lua` checks a few of them on screen).
#[test]
fn highlights_capture_each_construct() {
    use tree_sitter::{QueryCursor, StreamingIterator};
    let text = "#include <linux/sched.h>\n\
                kprobe:vfs_read* /pid == $1/ { @reads[comm, kstack(perf)] = count(); \
                $f = (struct file *)arg0; if ($f->f_flags & 0x10) { printf(\"%d\\n\", -1) } }\n";
    let query = Query::new(&tree_sitter_bpftrace::LANGUAGE.into(), tree_sitter_bpftrace::HIGHLIGHTS_QUERY)
        .expect("highlights.scm compiles");
    let tree = parser().parse(text, None).expect("a tree");
    assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    let mut cursor = QueryCursor::new();
    let mut captures = cursor.captures(&query, tree.root_node(), text.as_bytes());
    let mut have = Vec::new();
    while let Some((m, index)) = captures.next() {
        let c = m.captures()[*index];
        have.push((
            query.capture_names()[c.index as usize].to_owned(),
            c.node.utf8_text(text.as_bytes()).expect("utf-8").to_owned(),
        ));
    }
    for (capture, token) in [
        ("keyword.directive", "#include <linux/sched.h>"),
        ("keyword", "kprobe"),
        ("function", ":vfs_read*"),
        ("punctuation.delimiter", "/"),
        ("variable.builtin", "pid"),
        ("operator", "=="),
        ("variable.parameter", "$1"),
        ("variable", "@reads"),
        ("variable.builtin", "comm"),
        ("function.builtin", "kstack"),
        ("constant.builtin", "perf"),
        ("function.builtin", "count"),
        ("variable", "$f"),
        ("keyword", "struct"),
        ("type", "file"),
        ("variable.builtin", "arg0"),
        ("keyword", "if"),
        ("property", "f_flags"),
        ("number", "0x10"),
        ("string", "\"%d\\n\""),
        ("string.escape", "\\n"),
        ("operator", "-"),
    ] {
        assert!(have.iter().any(|(c, t)| c == capture && t == token), "no @{capture} on `{token}`: {have:?}");
    }
}
