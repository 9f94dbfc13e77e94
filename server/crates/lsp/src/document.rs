//! An open document: rope (for positions and edits), text, tree and the kernel's view,
//! kept in step through incremental changes and incremental tree-sitter reparses.

use super::position;
use crate::diagnostic::Diagnostic;
use crate::lsp::config::Settings;
use crate::syntax::{Parse, Parser};
use ropey::Rope;
use std::sync::Arc;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;
use tree_sitter::{InputEdit, Point};

pub struct Document {
    pub version: i32,
    pub rope: Rope,
    /// Invariant: equal to `rope.to_string()`.
    pub text: String,
    /// Shared with a kernel check running off the lock on this version.
    pub parse: Arc<Parse>,
    /// Syntax diagnostics of `version`, after the `ignore` setting.
    pub diagnostics: Vec<Diagnostic>,
    /// Kernel diagnostics of `version`, once the debounced check has run.
    pub kernel_diagnostics: Option<Vec<Diagnostic>>,
    pub settings: Settings,
    /// A `kprobe_events`/`*.dynevents` document: the mainline dialect, checked by
    /// `fevlint_check::dynevents` (the `*.fev` parse is kept for the positions only).
    pub mainline: bool,
    parser: Parser,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document").field("version", &self.version).field("len", &self.text.len()).finish()
    }
}

/// tree-sitter's point of a byte offset: rows count `\n` only, columns are bytes.
fn point(text: &str, offset: usize) -> Point {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let row = before.iter().filter(|&&b| b == b'\n').count();
    let col = before.iter().rposition(|&b| b == b'\n').map_or(before.len(), |i| before.len() - i - 1);
    Point::new(row, col)
}

impl Document {
    #[cfg(test)]
    pub fn new(text: String, version: i32, settings: Settings) -> Document {
        Document::with_dialect(text, version, settings, false)
    }

    /// A document in the mainline dialect when `mainline`.
    pub fn with_dialect(text: String, version: i32, settings: Settings, mainline: bool) -> Document {
        let mut parser = Parser::new();
        let parse = Arc::new(parser.parse(&text, settings.target, None));
        let mut doc = Document {
            version,
            rope: Rope::from_str(&text),
            text,
            parse,
            diagnostics: Vec::new(),
            kernel_diagnostics: None,
            settings,
            mainline,
            parser,
        };
        doc.check();
        doc
    }

    /// Applies the changes of one `didChange`, in order, then reparses once
    /// (incrementally unless a change replaced the whole text).
    pub fn apply(&mut self, version: i32, changes: &[TextDocumentContentChangeEvent]) {
        let mut incremental = true;
        // The tree may be shared with a running kernel check: edit a copy (cheap, shared nodes).
        let mut tree = self.parse.tree.clone();
        for change in changes {
            match change.range {
                Some(range) => {
                    let span = position::span(&self.rope, range);
                    let (start, old_end) = (span.start, span.end);
                    let start_position = point(&self.text, start);
                    let old_end_position = point(&self.text, old_end);
                    let start_char = self.rope.byte_to_char(start);
                    let end_char = self.rope.byte_to_char(old_end);
                    self.rope.remove(start_char..end_char);
                    self.rope.insert(start_char, &change.text);
                    self.text.replace_range(start..old_end, &change.text);
                    let new_end = start + change.text.len();
                    let edit = InputEdit {
                        start_byte: start,
                        old_end_byte: old_end,
                        new_end_byte: new_end,
                        start_position,
                        old_end_position,
                        new_end_position: point(&self.text, new_end),
                    };
                    tree.edit(&edit);
                }
                None => {
                    self.rope = Rope::from_str(&change.text);
                    self.text.clone_from(&change.text);
                    incremental = false;
                }
            }
        }
        self.version = version;
        self.parse = Arc::new(self.parser.parse(&self.text, self.settings.target, incremental.then_some(&tree)));
        self.check();
    }

    /// Reparses (incrementally over the current tree, or from scratch, e.g. when the
    /// target changed).
    pub fn reparse(&mut self, incremental: bool) {
        let old = incremental.then_some(&self.parse.tree);
        self.parse = Arc::new(self.parser.parse(&self.text, self.settings.target, old));
        self.check();
    }

    pub fn set_settings(&mut self, settings: Settings) {
        let full = settings.target != self.settings.target;
        self.settings = settings;
        self.reparse(!full);
    }

    fn check(&mut self) {
        let mut diagnostics = if self.mainline {
            // The parser alone until the kernels' check replaces these (per kernel).
            fevlint_check::dynevents::check(&self.text, &[])
        } else {
            crate::analysis::check_parse(&self.parse, &self.text)
        };
        diagnostics.retain(|d| !self.settings.ignore.iter().any(|c| c.eq_ignore_ascii_case(d.code)));
        self.diagnostics = diagnostics;
        self.kernel_diagnostics = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: text.to_owned(),
        }
    }

    #[test]
    fn several_changes_apply_in_order_and_the_tree_matches_a_fresh_parse() {
        let mut doc = Document::new("ip_rcv(x64 skb, x86 dev)\n".to_owned(), 1, Settings::default());
        assert_eq!(doc.diagnostics.len(), 1);
        doc.apply(2, &[change(0, 16, 0, 19, "x64"), change(0, 0, 0, 0, "# é😀\n"), change(9, 9, 99, 0, "\nf(")]);
        assert_eq!(doc.text, "# é😀\nip_rcv(x64 skb, x64 dev)\n\nf(");
        assert_eq!(doc.rope.to_string(), doc.text);
        let fresh = crate::syntax::parse(&doc.text);
        assert_eq!(doc.parse.tree.root_node().to_sexp(), fresh.tree.root_node().to_sexp());
        let codes: Vec<_> = doc.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["S001"], "only the half-typed `f(` is left");
        assert_eq!(doc.version, 2);
    }
}
