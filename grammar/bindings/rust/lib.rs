//! Tree-sitter grammar for kernel function-event scripts (`*.fev`).
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser.set_language(&tree_sitter_fev::LANGUAGE.into()).expect("grammar ABI matches the runtime");
//! let tree = parser.parse("vfs_read(x64 file)\n", None).expect("a tree");
//! assert!(!tree.root_node().has_error());
//! ```

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_fev() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for this grammar.
#[allow(unsafe_code)]
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_fev) };

/// The content of the [`node-types.json`] file for this grammar.
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

/// The syntax highlighting query: the single source every editor uses.
pub const HIGHLIGHTS_QUERY: &str = include_str!("../../queries/highlights.scm");

#[cfg(test)]
mod tests {
    #[test]
    fn can_load_grammar() {
        let mut parser = tree_sitter::Parser::new();
        parser.set_language(&super::LANGUAGE.into()).expect("Error loading function-event parser");
    }
}
