//! Highlighting from the grammar's own `highlights.scm`, so semantic tokens and every
//! tree-sitter editor agree by construction: a capture name maps to one kind here.

use fevlint_syntax::{Parse, Span};
use std::sync::OnceLock;
use tree_sitter::{Query, QueryCursor, StreamingIterator};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HighlightKind {
    Comment,
    Function,
    /// A type keyword (`@type.builtin`).
    Type,
    /// `unsigned`, `NULL`.
    Keyword,
    /// A field reading a parameter (`@variable.parameter`).
    Parameter,
    /// A field at an absolute address (`@variable`).
    Variable,
    /// A kernel symbol (`@constant`).
    Constant,
    Number,
    Operator,
}

impl HighlightKind {
    /// The kind for a capture of highlights.scm; `None` for punctuation, which
    /// editors colour from the syntax anyway.
    pub fn from_capture(name: &str) -> Option<HighlightKind> {
        Some(match name {
            "comment" => HighlightKind::Comment,
            "function" => HighlightKind::Function,
            "type.builtin" => HighlightKind::Type,
            "type.qualifier" | "constant.builtin" => HighlightKind::Keyword,
            "variable.parameter" => HighlightKind::Parameter,
            "variable" => HighlightKind::Variable,
            "constant" => HighlightKind::Constant,
            "number" => HighlightKind::Number,
            "operator" => HighlightKind::Operator,
            _ => return None,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Highlight {
    pub span: Span,
    pub kind: HighlightKind,
}

fn query() -> Option<&'static Query> {
    static QUERY: OnceLock<Option<Query>> = OnceLock::new();
    QUERY.get_or_init(|| Query::new(&tree_sitter_fev::LANGUAGE.into(), tree_sitter_fev::HIGHLIGHTS_QUERY).ok()).as_ref()
}

/// Highlights in document order, not overlapping (the first capture of a span wins,
/// as in tree-sitter's own highlighter).
pub fn highlights(parse: &Parse, text: &str) -> Vec<Highlight> {
    let Some(query) = query() else { return Vec::new() };
    let mut cursor = QueryCursor::new();
    let mut out: Vec<Highlight> = Vec::new();
    let names = query.capture_names();
    let mut captures = cursor.captures(query, parse.tree.root_node(), text.as_bytes());
    while let Some((m, index)) = captures.next() {
        let Some(capture) = m.captures().get(*index) else { continue };
        let Some(kind) = names.get(capture.index as usize).and_then(|n| HighlightKind::from_capture(n)) else {
            continue;
        };
        let node = capture.node;
        let span = Span::new(node.start_byte(), node.end_byte());
        if span.is_empty() {
            continue;
        }
        if out.last().is_some_and(|last| span.start < last.span.end) {
            continue;
        }
        out.push(Highlight { span, kind });
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_capture_of_highlights_scm_is_mapped_or_punctuation() {
        let q = super::query().expect("highlights.scm compiles");
        for name in q.capture_names() {
            assert!(
                super::HighlightKind::from_capture(name).is_some() || name.starts_with("punctuation"),
                "capture @{name} of highlights.scm has no semantic token kind"
            );
        }
    }
}
