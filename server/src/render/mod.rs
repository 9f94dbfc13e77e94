//! Output formats: human text (codespan-reporting) and JSON. Positions are computed
//! here, from byte spans: 1-based lines, columns counted in characters.

pub mod json;
pub mod text;

use crate::diagnostic::Diagnostic;
use crate::syntax::Span;

/// A checked file: its display name, text and diagnostics.
#[derive(Debug)]
pub struct FileReport {
    pub name: String,
    pub text: String,
    pub diagnostics: Vec<Diagnostic>,
}

/// 1-based line and character column of a byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Maps byte offsets to lines and columns.
#[derive(Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|&(_, b)| b == b'\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_char_boundary(text, offset);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let column = text[self.starts[line]..offset].chars().count() + 1;
        Position { line: line + 1, column }
    }
}

/// The nearest char boundary at or before `offset`, within the text.
pub fn floor_char_boundary(text: &str, offset: usize) -> usize {
    let mut o = offset.min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}

/// A span widened to char boundaries, so every renderer can slice it.
pub fn char_span(text: &str, span: Span) -> Span {
    let start = floor_char_boundary(text, span.start);
    let mut end = span.end.clamp(start, text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    Span::new(start, end)
}
