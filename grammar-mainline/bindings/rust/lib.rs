//! Tree-sitter grammar for the kernel's probe-event dialect (`kprobe_events`,
//! `dynamic_events`, `*.dynevents`).
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser.set_language(&tree_sitter_dynevents::LANGUAGE.into()).expect("grammar ABI matches the runtime");
//! let tree = parser.parse("p:myprobe vfs_read file=+0(%di):x64\n", None).expect("a tree");
//! assert!(!tree.root_node().has_error());
//! ```

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_dynevents() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for this grammar.
#[allow(unsafe_code)]
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_dynevents) };

/// The content of the `src/node-types.json` file for this grammar.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// The syntax highlighting query.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");
