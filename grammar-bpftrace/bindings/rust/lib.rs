//! Tree-sitter grammar for bpftrace scripts (`*.bt`), as bpftrace 0.17's `lexer.l` and
//! `parser.yy` read them.
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser.set_language(&tree_sitter_bpftrace::LANGUAGE.into()).expect("grammar ABI matches the runtime");
//! let tree = parser.parse("kprobe:vfs_read /pid == 1/ { @[comm] = count(); }\n", None).expect("a tree");
//! assert!(!tree.root_node().has_error());
//! ```

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_bpftrace() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for this grammar.
#[allow(unsafe_code)]
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_bpftrace) };

/// The content of the `src/node-types.json` file for this grammar.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// The syntax highlighting query.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");
