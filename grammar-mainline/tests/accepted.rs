//! Every line a real kernel accepted (the QEMU-recorded verdicts of fevlint-mainline's
//! oracle corpus, Debian 6.1.192 and 6.12.117) parses without ERROR or MISSING, and the
//! tree has the structure editors rely on.

use tree_sitter::{Parser, Query};

fn parser() -> Parser {
    let mut p = Parser::new();
    p.set_language(&tree_sitter_dynevents::LANGUAGE.into()).expect("grammar ABI matches the runtime");
    p
}

fn sexp(line: &str) -> String {
    let tree = parser().parse(line, None).expect("a tree");
    tree.root_node().to_sexp()
}

#[test]
fn every_accepted_line_parses_cleanly() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../server/crates/mainline/tests/oracle/");
    let corpus = std::fs::read_to_string(format!("{root}mainline-corpus.txt")).expect("corpus");
    let lines: Vec<&str> = corpus.lines().collect();
    let mut checked = 0;
    let mut p = parser();
    for tsv in ["mainline-verdicts-6.1.192.tsv", "mainline-verdicts-6.12.117.tsv"] {
        let text = std::fs::read_to_string(format!("{root}{tsv}")).expect("verdicts");
        for row in text.lines().filter(|l| l.starts_with("DEF\t")) {
            let f: Vec<&str> = row.split('\t').collect();
            if f[2] != "ACCEPT" {
                continue;
            }
            let n: usize = f[1].parse().expect("line number");
            let line = lines[n - 1];
            let tree = p.parse(line, None).expect("a tree");
            assert!(!tree.root_node().has_error(), "{tsv} line {n} `{line}`: {}", tree.root_node().to_sexp());
            checked += 1;
        }
    }
    assert!(checked >= 80, "only {checked} accepted lines");
}

#[test]
fn definitions_have_fields() {
    assert_eq!(
        sexp("p:kp do_sys_openat2 dfd=$arg1:s32 path=+0($arg2):string # open\n"),
        "(source_file (definition kind: (probe_kind) event: (event_id) place: (place) \
         argument: (argument name: (argument_name) value: (variable name: (identifier)) type: (type name: (type_identifier))) \
         argument: (argument name: (argument_name) value: (dereference offset: (number) inner: (variable name: (identifier))) type: (type name: (type_identifier)))) \
         (comment))"
    );
    assert_eq!(
        sexp("f:x vfs_read name=file->f_path.dentry->d_name.name:string\n-:x\n"),
        "(source_file (definition kind: (probe_kind) event: (event_id) place: (place) \
         argument: (argument name: (argument_name) value: (btf_name name: (identifier) \
         member: (field_identifier) member: (field_identifier) member: (field_identifier) member: (field_identifier)) \
         type: (type name: (type_identifier)))) (removal event: (event_id)))"
    );
    assert_eq!(
        sexp("r16:g/e vfs_read+0 v=+u8(%si):u8[4] s=\\\"hi\" i=\\-5\n"),
        "(source_file (definition kind: (probe_kind) maxactive: (number) event: (event_id) place: (place) \
         argument: (argument name: (argument_name) value: (dereference offset: (number) inner: (register name: (identifier))) \
         type: (type name: (type_identifier) count: (number))) \
         argument: (argument name: (argument_name) value: (immediate_string text: (string_content))) \
         argument: (argument name: (argument_name) value: (immediate value: (number)))))"
    );
}

#[test]
fn half_typed_lines_keep_their_definition() {
    let s = sexp("p:kp vfs_read a=+0(%di\n");
    assert!(s.contains("(definition"), "{s}");
}

#[test]
fn highlights_query_compiles() {
    Query::new(&tree_sitter_dynevents::LANGUAGE.into(), tree_sitter_dynevents::HIGHLIGHTS_QUERY)
        .expect("highlights.scm is valid for this grammar");
}
