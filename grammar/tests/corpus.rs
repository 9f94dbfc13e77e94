//! Runs `test/corpus/*.txt` under `cargo test`, without the tree-sitter CLI.
//!
//! The corpus format and the comparison follow `tree-sitter test` (CLI 0.27,
//! `src/test.rs`), so a file passes here exactly when it passes there:
//!
//! - a test starts with a line of three or more `=` (optionally followed by a
//!   suffix, which the file's first suffixed header fixes for the whole file),
//!   then name lines and `:attribute` lines, then a closing `=` line;
//! - the body runs to the next header; the longest `---` line in it (the later
//!   one on a tie) divides input from expected output;
//! - the input loses one trailing `\n`, then one trailing `\r`;
//! - the expected S-expression loses `;` comment lines, whitespace runs collapse
//!   to one space and spaces before `)` go;
//! - the actual tree is `Node::to_sexp()` of the root (the CLI calls the same
//!   function), with field names removed only when the expectation has none.
//!
//! Attributes: `:skip` skips, `:error` only asserts that the tree has an error,
//! `:platform(os)` runs only on that OS, `:language(fev)` is accepted,
//! `:fail-fast` is ignored, and `:cst` (a different output format) is refused.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The construct files the grammar's test plan promises; losing one is a failure.
const REQUIRED_FILES: &[&str] = &[
    "addresses.txt",
    "arrays.txt",
    "blank_lines.txt",
    "comments.txt",
    "definitions.txt",
    "errors.txt",
    "null.txt",
    "pipes.txt",
    "redirects.txt",
    "spec_examples.txt",
    "types.txt",
    "unsigned.txt",
    "whitespace.txt",
];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Expectation {
    /// Compare the tree with the expected S-expression.
    Tree,
    /// Only require that the tree contains an ERROR or MISSING node.
    Error,
    Skip,
}

#[derive(Debug, Clone)]
struct CorpusTest {
    name: String,
    input: Vec<u8>,
    /// Normalised expected S-expression.
    expected: String,
    has_fields: bool,
    expectation: Expectation,
    cst: bool,
}

/// `Some((delimiter length, suffix))` when `line` is 3+ `c` then an optional suffix.
fn delimiter(line: &str, c: char) -> Option<(usize, &str)> {
    let len = line.len() - line.trim_start_matches(c).len();
    (len >= 3).then(|| (len, line[len..].trim_end_matches(['\r', '\n'])))
}

fn suffix_matches(first: Option<&str>, suffix: &str) -> bool {
    first.map_or(suffix.is_empty(), |first| first == suffix)
}

/// The CLI's normalisation of an expected S-expression.
fn normalize_sexp(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut prev_space = false;
    for line in raw.lines() {
        if line.trim_start().starts_with(';') {
            continue;
        }
        for ch in line.chars() {
            if ch.is_whitespace() {
                if !prev_space && !out.is_empty() {
                    out.push(' ');
                    prev_space = true;
                }
            } else {
                if ch == ')' && prev_space {
                    out.pop();
                }
                out.push(ch);
                prev_space = false;
            }
        }
        if !out.is_empty() && !prev_space {
            out.push(' ');
            prev_space = true;
        }
    }
    out.trim_end().to_string()
}

/// The CLI's `strip_sexp_fields`: ` name: (` becomes ` (`.
fn strip_fields(sexp: &str) -> String {
    let mut out = String::with_capacity(sexp.len());
    let mut rest = sexp;
    while let Some(pos) = rest.find(": (") {
        if let Some(space) = rest[..pos].rfind(' ') {
            let word = &rest[space + 1..pos];
            if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                out.push_str(&rest[..=space]);
                out.push('(');
                rest = &rest[pos + 3..];
                continue;
            }
        }
        out.push_str(&rest[..pos + 3]);
        rest = &rest[pos + 3..];
    }
    out.push_str(rest);
    out
}

struct Header {
    name: String,
    expectation: Expectation,
    cst: bool,
    body_start: usize,
}

fn parse_header(lines: &[&str], first_suffix: Option<&str>, start: usize) -> Option<Header> {
    let (_, suffix) = delimiter(lines[start], '=')?;
    if !suffix_matches(first_suffix, suffix) {
        return None;
    }
    let mut name = String::new();
    let (mut seen_marker, mut skip, mut error, mut cst, mut platform) = (false, false, false, false, None::<bool>);
    let mut i = start + 1;
    while i < lines.len() {
        if let Some((_, closing)) = delimiter(lines[i], '=') {
            if suffix_matches(first_suffix, closing) {
                break;
            }
        }
        let trimmed = lines[i].trim();
        if trimmed.is_empty() && !seen_marker {
            return None;
        }
        let head = trimmed.split('(').next().unwrap_or("");
        match head {
            ":skip" => (seen_marker, skip) = (true, true),
            ":error" => (seen_marker, error) = (true, true),
            ":cst" => (seen_marker, cst) = (true, true),
            ":fail-fast" => seen_marker = true,
            ":platform" => {
                let os = trimmed.strip_prefix(":platform(").and_then(|s| s.strip_suffix(')'));
                if let Some(os) = os {
                    seen_marker = true;
                    platform = Some(platform.unwrap_or(false) || os.trim() == std::env::consts::OS);
                }
            }
            ":language" => {
                let lang = trimmed.strip_prefix(":language(").and_then(|s| s.strip_suffix(')'));
                if let Some(lang) = lang {
                    seen_marker = true;
                    assert!(lang == "fev", "corpus test asks for language `{lang}`; only `fev` exists");
                }
            }
            _ if !seen_marker => name.push_str(lines[i]),
            _ => {}
        }
        i += 1;
    }
    if i >= lines.len() {
        return None;
    }
    let expectation = if skip || platform == Some(false) {
        Expectation::Skip
    } else if error {
        Expectation::Error
    } else {
        Expectation::Tree
    };
    Some(Header { name: name.trim_end().to_string(), expectation, cst, body_start: i + 1 })
}

fn build_test(body: &[&str], first_suffix: Option<&str>, header: Header) -> Option<CorpusTest> {
    let mut best: Option<usize> = None;
    let mut best_len = 0;
    for (j, line) in body.iter().enumerate() {
        if let Some((len, suffix)) = delimiter(line, '-') {
            if suffix_matches(first_suffix, suffix) && len + suffix.len() >= best_len {
                best = Some(j);
                best_len = len + suffix.len();
            }
        }
    }
    let divider = best?;
    let mut input: Vec<u8> = body[..divider].iter().flat_map(|l| l.bytes()).collect();
    if input.last() == Some(&b'\n') {
        input.pop();
    }
    if input.last() == Some(&b'\r') {
        input.pop();
    }
    let raw: String = body[divider + 1..].concat();
    let expected = normalize_sexp(&raw);
    Some(CorpusTest {
        name: header.name,
        input,
        has_fields: expected.contains(": ("),
        expected,
        expectation: header.expectation,
        cst: header.cst,
    })
}

/// Splits one corpus file into its tests, the way `tree-sitter test` does.
fn parse_corpus(content: &str) -> Vec<CorpusTest> {
    let lines: Vec<&str> = content.split_inclusive('\n').collect();
    let first_suffix = lines.iter().find_map(|l| match delimiter(l, '=') {
        Some((_, s)) if !s.is_empty() => Some(s.to_string()),
        _ => None,
    });
    let first_suffix = first_suffix.as_deref();
    let mut tests = Vec::new();
    let mut pending: Option<Header> = None;
    let mut i = 0;
    while i < lines.len() {
        let Some(header) = parse_header(&lines, first_suffix, i) else {
            i += 1;
            continue;
        };
        let opening = i;
        i = header.body_start;
        if let Some(prev) = pending.take() {
            let start = prev.body_start;
            tests.extend(build_test(&lines[start..opening], first_suffix, prev));
        }
        pending = Some(header);
    }
    if let Some(prev) = pending {
        let start = prev.body_start;
        tests.extend(build_test(&lines[start..], first_suffix, prev));
    }
    tests
}

fn parser() -> tree_sitter::Parser {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_fev::LANGUAGE.into()).expect("the grammar's ABI matches the tree-sitter runtime");
    parser
}

/// Runs one test; `Err` carries a readable failure report.
fn run_test(parser: &mut tree_sitter::Parser, test: &CorpusTest) -> Result<(), String> {
    assert!(!test.cst, "`{}`: `:cst` expectations are not supported by this runner", test.name);
    let tree =
        parser.parse(&test.input, None).ok_or_else(|| format!("`{}`: the parser returned no tree", test.name))?;
    let root = tree.root_node();
    match test.expectation {
        Expectation::Skip => Ok(()),
        Expectation::Error if root.has_error() => Ok(()),
        Expectation::Error => Err(format!("`{}`: expected an error, got {}", test.name, root.to_sexp())),
        Expectation::Tree => {
            let actual = root.to_sexp();
            let actual = if test.has_fields { actual } else { strip_fields(&actual) };
            if actual == test.expected {
                Ok(())
            } else {
                Err(format!(
                    "`{}`\n    input:    {:?}\n    expected: {}\n    actual:   {}",
                    test.name,
                    String::from_utf8_lossy(&test.input),
                    test.expected,
                    actual
                ))
            }
        }
    }
}

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test").join("corpus")
}

fn corpus_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("grammar/test/corpus exists")
        .map(|e| e.expect("readable corpus directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "txt"))
        .collect();
    files.sort();
    files
}

#[test]
fn corpus_matches_expected_trees() {
    let mut parser = parser();
    let mut failures = String::new();
    let (mut run, mut failed) = (0, 0);
    for path in corpus_files() {
        let content = std::fs::read_to_string(&path).expect("corpus file is UTF-8");
        let tests = parse_corpus(&content);
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        assert!(!tests.is_empty(), "{file}: no tests found");
        for test in &tests {
            run += 1;
            if let Err(report) = run_test(&mut parser, test) {
                failed += 1;
                let _ = writeln!(failures, "{file}: {report}");
            }
        }
    }
    assert!(run >= 100, "only {run} corpus tests found; files missing?");
    assert!(failed == 0, "{failed} of {run} corpus tests failed:\n{failures}");
}

#[test]
fn every_construct_file_exists() {
    let names: Vec<String> =
        corpus_files().iter().filter_map(|p| p.file_name().and_then(|n| n.to_str()).map(str::to_string)).collect();
    for required in REQUIRED_FILES {
        assert!(names.iter().any(|n| n == required), "test/corpus/{required} is missing");
    }
}

#[test]
fn every_expectation_names_fields() {
    // Expectations without fields are compared with fields stripped, which
    // hides a tree whose children moved to another field. Keep them all strict.
    for path in corpus_files() {
        let content = std::fs::read_to_string(&path).expect("corpus file is UTF-8");
        for test in parse_corpus(&content) {
            if test.expectation == Expectation::Tree && test.expected.contains("(definition") {
                assert!(test.has_fields, "{}: `{}` has no field names", path.display(), test.name);
            }
        }
    }
}

#[test]
fn crlf_input_survives_checkout() {
    // whitespace.txt is marked `-text`; if a checkout rewrote its line ends,
    // the CRLF test would silently test LF.
    let content = std::fs::read_to_string(corpus_dir().join("whitespace.txt")).expect("whitespace.txt");
    let crlf = parse_corpus(&content)
        .into_iter()
        .find(|t| t.name == "CRLF line ends")
        .expect("whitespace.txt has the `CRLF line ends` test");
    assert!(crlf.input.windows(2).any(|w| w == b"\r\n"), "CRLF test input has no CRLF: {:?}", crlf.input);
}

#[test]
fn half_typed_errors_use_the_cli_field_format() {
    // MISSING and ERROR nodes print the same way in to_sexp and in the CLI:
    // `type: (type (MISSING "long"))`, `(ERROR (UNEXPECTED '-') ...)`.
    let mut parser = parser();
    let tree = parser.parse("vfs_read(int fd, x", None).expect("a tree");
    assert!(tree.root_node().to_sexp().contains(r#"type: (type (MISSING "long"))"#));
    let tree = parser.parse("f(x64 a-8)", None).expect("a tree");
    assert!(tree.root_node().to_sexp().contains("(ERROR (UNEXPECTED '-') (number))"));
}

// The runner itself: it must parse the format like the CLI and must fail on a
// wrong expectation.

const SAMPLE: &str = "\
==================
Offset
==================
f(x64 p+4)
---

; a comment line in the expectation is ignored
(source_file
  (definition
    function: (identifier)
    (argument
      (field
        type: (type)
        target: (parameter
          name: (identifier)
          redirect: (offset
            value: (number)))))))

==================
No fields
:skip
==================
do_IRQ()
---

(source_file (definition (identifier)))
";

#[test]
fn runner_parses_the_cli_format() {
    let tests = parse_corpus(SAMPLE);
    assert_eq!(tests.len(), 2);
    assert_eq!(tests[0].name, "Offset");
    assert_eq!(tests[0].input, b"f(x64 p+4)");
    assert!(tests[0].has_fields);
    assert!(tests[0].expected.starts_with("(source_file (definition function: (identifier) (argument"));
    assert_eq!(tests[1].name, "No fields");
    assert_eq!(tests[1].expectation, Expectation::Skip);
    assert!(!tests[1].has_fields);
    let mut parser = parser();
    assert_eq!(run_test(&mut parser, &tests[0]), Ok(()));
}

#[test]
fn runner_compares_without_fields_when_the_expectation_has_none() {
    let mut test = parse_corpus(SAMPLE).remove(1);
    test.expectation = Expectation::Tree;
    assert_eq!(run_test(&mut parser(), &test), Ok(()));
}

#[test]
fn runner_fails_on_a_wrong_expectation() {
    let mut parser = parser();
    let good = parse_corpus(SAMPLE).remove(0);
    for (from, to) in [
        ("(offset", "(index"),                   // wrong node kind
        ("redirect: (offset", "value: (offset"), // wrong field name
        ("(number)", "(number) (number)"),       // extra node
    ] {
        let mut bad = good.clone();
        assert!(bad.expected.contains(from));
        bad.expected = bad.expected.replacen(from, to, 1);
        assert!(run_test(&mut parser, &bad).is_err(), "runner accepted `{from}` -> `{to}`");
    }
    let mut error = good.clone();
    error.expectation = Expectation::Error;
    assert!(run_test(&mut parser, &error).is_err(), "`:error` accepted a clean tree");
}

#[test]
fn runner_handles_suffixed_delimiters_and_longest_divider() {
    let content = "\
===|
Dashes in input
===|
f(int a)
---|
----|

(source_file (definition (argument (field (type) (parameter (identifier))))) (ERROR))
===
Not a test: the suffix differs from the file's first one
===
";
    let tests = parse_corpus(content);
    assert_eq!(tests.len(), 1);
    assert_eq!(tests[0].name, "Dashes in input");
    // The shorter `---|` is part of the input; the longest divider wins.
    assert_eq!(tests[0].input, b"f(int a)\n---|");
    assert!(tests[0].expected.ends_with("(ERROR)) === Not a test: the suffix differs from the file's first one ==="));
}
