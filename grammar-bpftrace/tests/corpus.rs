//! Runs `test/corpus/*.txt` (tree-sitter's corpus format, as `tree-sitter test` reads it)
//! under `cargo test`, without the tree-sitter CLI: a header of `=` lines around the
//! test's name (and `:error` when the input must have an ERROR or MISSING node), the
//! input, a `---` line, and the expected tree as an S-expression, compared with
//! whitespace collapsed. `FEVLINT_REGENERATE=1` writes the trees of the inputs whose
//! expectation is `TODO`.
//!
//! Each input of a test without `:error` is also accepted by Debian's `bpftrace -d`
//! (0.17), and each `:error` input rejected by it with a syntax-stage message.

use std::path::Path;
use tree_sitter::Parser;

struct Case {
    name: String,
    error: bool,
    input: String,
    expected: String,
}

fn cases(text: &str) -> Vec<Case> {
    let mut out = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with("===") {
            continue;
        }
        let (mut name, mut error) = (String::new(), false);
        for l in lines.by_ref() {
            if l.starts_with("===") {
                break;
            }
            if l == ":error" {
                error = true;
            } else if name.is_empty() {
                name = l.to_owned();
            }
        }
        let mut body = Vec::new();
        while let Some(l) = lines.peek() {
            if l.starts_with("===") {
                break;
            }
            body.push(*l);
            lines.next();
        }
        let split = body.iter().rposition(|l| l.starts_with("---")).expect("a --- line");
        out.push(Case {
            name,
            error,
            input: body[..split].join("\n").trim_matches('\n').to_owned(),
            expected: body[split + 1..].join(" ").split_whitespace().collect::<Vec<_>>().join(" ").replace(" )", ")"),
        });
    }
    out
}

#[test]
fn corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test/corpus");
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_bpftrace::LANGUAGE.into()).expect("grammar ABI matches the runtime");
    let mut failures = Vec::new();
    let mut count = 0;
    let mut files: Vec<_> = std::fs::read_dir(&dir).expect("test/corpus").flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let mut text = std::fs::read_to_string(&path).expect("read corpus file");
        for case in cases(&text.clone()) {
            count += 1;
            let tree = parser.parse(&case.input, None).expect("a tree");
            let root = tree.root_node();
            if case.error {
                if !root.has_error() {
                    failures.push(format!("{}: {}: no error in {}", path.display(), case.name, root.to_sexp()));
                }
                continue;
            }
            let have = root.to_sexp();
            if case.expected == "TODO" && std::env::var_os("FEVLINT_REGENERATE").is_some() {
                let at = text.find(&case.input).expect("input in file") + case.input.len();
                let todo = at + text[at..].find("\nTODO\n").expect("TODO after input");
                text.replace_range(todo + 1..todo + 5, &have);
                std::fs::write(&path, &text).expect("write corpus file");
            } else if have != case.expected {
                failures.push(format!("{}: {}:\n  want {}\n  have {}", path.display(), case.name, case.expected, have));
            }
        }
    }
    assert!(count >= 25, "only {count} corpus tests");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// bpftrace's own messages for what its lexer and grammar reject (later stages, such as
/// an undeclared variable or a missing tracepoint, are about the script's meaning).
const SYNTAX_STAGE: &[&str] = &[
    "syntax error",
    "invalid character",
    "unterminated string",
    "end of file during comment",
    "invalid escape character",
    "octal escape sequence",
    "Unknown function",
    "Tuples are immutable",
    "The ++ operator",
    "The -- operator",
];

/// The real bpftrace agrees with the corpus: `bpftrace -d` (Debian's 0.17, which parses
/// before it looks at the kernel) rejects each `:error` input at its syntax stage and no
/// other input there. About 30 runs of bpftrace, a second.
#[test]
fn bpftrace_agrees_with_the_corpus() {
    if !fevlint_testkit::real_tools("bpftrace (Debian 0.17)") {
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test/corpus");
    let tmp = std::env::temp_dir().join(format!("bt-corpus-{}.bt", std::process::id()));
    let mut disagree = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("test/corpus").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("read corpus file");
        for case in cases(&text) {
            std::fs::write(&tmp, format!("{}\n", case.input)).expect("write script");
            let out = std::process::Command::new("bpftrace")
                .arg("-d")
                .arg(&tmp)
                .output()
                .unwrap_or_else(|e| panic!("bpftrace (Debian bpftrace, scripts/install-test-deps.sh): {e}"));
            let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            let rejected = said
                .lines()
                .filter_map(|l| l.split_once(": ERROR: ").map(|(_, m)| m))
                .any(|m| SYNTAX_STAGE.iter().any(|s| m.starts_with(s)));
            if rejected != case.error {
                disagree.push(format!(
                    "{}: {}: bpftrace {}:\n{said}",
                    entry.path().display(),
                    case.name,
                    if rejected { "rejects" } else { "accepts" }
                ));
            }
        }
    }
    let _ = std::fs::remove_file(&tmp);
    assert!(disagree.is_empty(), "{}", disagree.join("\n"));
}
