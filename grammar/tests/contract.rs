//! The grammar's contract with the server and the editors: node kinds and field
//! names in `NODE_TYPES`, the highlight query's capture names, and the tree
//! shapes the language server relies on, checked through the Rust API.

use std::collections::BTreeSet;
use std::path::Path;

use tree_sitter::{Language, Node, Parser, Query};

/// Named node kinds the server code uses, each with the fields it reads.
const NODE_KINDS: &[(&str, &[&str])] = &[
    ("source_file", &[]),
    ("definition", &["function"]),
    ("argument", &[]),
    ("null", &[]),
    ("field", &["unsigned", "type", "array", "target"]),
    ("type", &[]),
    ("unsigned", &[]),
    ("array_size", &["count"]),
    ("parameter", &["name", "redirect"]),
    ("named_address", &["name", "redirect", "value"]),
    ("offset", &["value"]),
    ("index", &["value"]),
    ("symbol_ref", &["name"]),
    ("address", &[]),
    ("number", &[]),
    ("identifier", &[]),
    ("comment", &[]),
];

/// Standard capture names (tree-sitter highlight / nvim-treesitter / Helix
/// conventions). A capture outside this list gets no colour in most editors.
const STANDARD_CAPTURES: &[&str] = &[
    "attribute",
    "boolean",
    "character",
    "comment",
    "constant",
    "constant.builtin",
    "constructor",
    "embedded",
    "escape",
    "function",
    "function.builtin",
    "function.call",
    "function.macro",
    "function.method",
    "keyword",
    "keyword.function",
    "keyword.operator",
    "label",
    "module",
    "number",
    "number.float",
    "operator",
    "property",
    "punctuation",
    "punctuation.bracket",
    "punctuation.delimiter",
    "punctuation.special",
    "string",
    "string.escape",
    "string.special",
    "tag",
    "type",
    "type.builtin",
    "type.qualifier",
    "variable",
    "variable.builtin",
    "variable.member",
    "variable.parameter",
];

const ATOMS: &[&str] = &[
    "long", "int", "short", "char", "size_t", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64", "x8", "x16", "x32",
    "x64", "symbol", "string",
];

fn language() -> Language {
    tree_sitter_fev::LANGUAGE.into()
}

fn parse(text: &str) -> tree_sitter::Tree {
    let mut parser = Parser::new();
    parser.set_language(&language()).expect("the grammar's ABI matches the runtime");
    parser.parse(text, None).expect("a tree")
}

fn text<'a>(node: Node<'_>, source: &'a str) -> &'a str {
    node.utf8_text(source.as_bytes()).expect("UTF-8 source")
}

fn field<'t>(node: Node<'t>, name: &str) -> Node<'t> {
    node.child_by_field_name(name)
        .unwrap_or_else(|| panic!("`{}` has no `{name}` field: {}", node.kind(), node.to_sexp()))
}

fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// The `argument` children of a definition (the function name is not one).
fn arguments(definition: Node<'_>) -> Vec<Node<'_>> {
    named_children(definition).into_iter().filter(|n| n.kind() == "argument").collect()
}

#[test]
fn node_types_is_json_with_every_contract_kind_and_field() {
    let json: serde_json::Value = serde_json::from_str(tree_sitter_fev::NODE_TYPES).expect("NODE_TYPES is JSON");
    let entries = json.as_array().expect("NODE_TYPES is an array");
    for (kind, fields) in NODE_KINDS {
        let entry = entries
            .iter()
            .find(|e| e["type"] == *kind && e["named"] == true)
            .unwrap_or_else(|| panic!("NODE_TYPES has no named `{kind}`"));
        for name in *fields {
            assert!(entry["fields"].get(name).is_some(), "NODE_TYPES: `{kind}` has no field `{name}`");
        }
    }
}

#[test]
fn language_knows_every_contract_kind_and_field() {
    let lang = language();
    for (kind, fields) in NODE_KINDS {
        assert_ne!(lang.id_for_node_kind(kind, true), 0, "language has no named kind `{kind}`");
        for name in *fields {
            assert!(lang.field_id_for_name(name).is_some(), "language has no field `{name}`");
        }
    }
}

#[test]
fn highlights_query_compiles_with_standard_capture_names() {
    let query = Query::new(&language(), tree_sitter_fev::HIGHLIGHTS_QUERY).expect("highlights.scm compiles");
    assert!(!query.capture_names().is_empty());
    for name in query.capture_names() {
        assert!(STANDARD_CAPTURES.contains(name), "non-standard capture `@{name}` in highlights.scm");
    }
}

#[test]
fn highlight_tests_assert_every_capture() {
    // test/highlight/*.fev is run by `tree-sitter test`; here we only make sure
    // it keeps covering every capture the query defines.
    let query = Query::new(&language(), tree_sitter_fev::HIGHLIGHTS_QUERY).expect("highlights.scm compiles");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("test").join("highlight");
    let mut asserted = BTreeSet::new();
    for entry in std::fs::read_dir(dir).expect("grammar/test/highlight exists") {
        let content = std::fs::read_to_string(entry.expect("directory entry").path()).expect("UTF-8");
        for line in content.lines() {
            let Some(rest) = line.strip_prefix('#') else {
                continue;
            };
            let rest = rest.trim_start();
            let rest = rest.strip_prefix("<-").or_else(|| rest.strip_prefix('^'));
            if let Some(capture) = rest.and_then(|r| r.split_whitespace().next()) {
                asserted.insert(capture.trim_start_matches('!').to_string());
            }
        }
    }
    let missing: Vec<&str> = query.capture_names().iter().copied().filter(|c| !asserted.contains(*c)).collect();
    assert!(missing.is_empty(), "captures without a highlight assertion: {missing:?}");
}

#[test]
fn every_atom_is_a_type_node_with_its_text() {
    for atom in ATOMS {
        let source = format!("f({atom} a)");
        let tree = parse(&source);
        let root = tree.root_node();
        assert!(!root.has_error(), "{source}: {}", root.to_sexp());
        let definition = root.named_child(0).expect("a definition");
        let field_node = arguments(definition)[0].named_child(0).expect("a field");
        assert_eq!(field_node.kind(), "field");
        assert_eq!(text(field(field_node, "type"), &source), *atom);
        assert_eq!(text(field(field(field_node, "target"), "name"), &source), "a");
    }
}

#[test]
fn keywords_are_names_where_the_kernel_expects_a_name() {
    let source = "int(unsigned int unsigned | string NULL, long $int)";
    let tree = parse(source);
    let root = tree.root_node();
    assert!(!root.has_error(), "{}", root.to_sexp());
    let definition = root.named_child(0).expect("a definition");
    assert_eq!(text(field(definition, "function"), source), "int");
    let arguments = arguments(definition);
    let fields = named_children(arguments[0]);
    assert_eq!(text(field(fields[0], "unsigned"), source), "unsigned");
    assert_eq!(text(field(fields[0], "type"), source), "int");
    assert_eq!(text(field(field(fields[0], "target"), "name"), source), "unsigned");
    assert_eq!(text(field(fields[1], "type"), source), "string");
    assert_eq!(text(field(field(fields[1], "target"), "name"), source), "NULL");
    let symbol = field(named_children(arguments[1])[0], "target");
    assert_eq!(symbol.kind(), "symbol_ref");
    assert_eq!(text(field(symbol, "name"), source), "int");
}

#[test]
fn half_typed_line_keeps_function_and_first_field() {
    // The language server completes and hovers on lines like this one.
    let source = "vfs_read(int fd, x";
    let tree = parse(source);
    let root = tree.root_node();
    assert!(root.has_error());
    let definition = root.named_child(0).expect("a node");
    assert_eq!(definition.kind(), "definition", "{}", root.to_sexp());
    assert_eq!(text(field(definition, "function"), source), "vfs_read");
    let first = arguments(definition)[0];
    let first_field = first.named_child(0).expect("a field");
    assert_eq!(text(field(first_field, "type"), source), "int");
    assert_eq!(text(field(field(first_field, "target"), "name"), source), "fd");
}

#[test]
fn redirects_keep_source_order_and_values() {
    let source = "f(x8[6] perm_addr+16[0x0]+558, x64 a[0]+8=0x10)";
    let tree = parse(source);
    let root = tree.root_node();
    assert!(!root.has_error(), "{}", root.to_sexp());
    let definition = root.named_child(0).expect("a definition");
    let arguments = arguments(definition);
    let first = arguments[0].named_child(0).expect("a field");
    assert_eq!(text(field(field(first, "array"), "count"), source), "6");
    let target = field(first, "target");
    let mut cursor = target.walk();
    let redirects: Vec<(String, String)> = target
        .children_by_field_name("redirect", &mut cursor)
        .map(|r| (r.kind().to_string(), text(field(r, "value"), source).to_string()))
        .collect();
    let expected = [("offset", "16"), ("index", "0x0"), ("offset", "558")];
    assert_eq!(redirects, expected.map(|(k, v)| (k.to_string(), v.to_string())));
    let address = field(arguments[1].named_child(0).expect("a field"), "target");
    assert_eq!(address.kind(), "named_address");
    assert_eq!(text(field(address, "value"), source), "0x10");
}

#[test]
fn every_kernel_whitespace_separates_tokens() {
    // The kernel splits words with isspace(): space, \t, \n, \v, \f, \r.
    let source = "f(\x0bint\x0ca\t|\rx64 b)\r\n";
    let tree = parse(source);
    let root = tree.root_node();
    assert!(!root.has_error(), "{}", root.to_sexp());
}
