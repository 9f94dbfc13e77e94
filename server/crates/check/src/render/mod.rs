//! Output formats: human text (codespan-reporting), JSON, SARIF and GitHub workflow
//! commands. Positions are computed here, from byte spans: 1-based lines, columns counted
//! in characters (SARIF: UTF-16 code units, as its default `columnKind` says).

pub mod github;
pub mod json;
pub mod sarif;
pub mod text;

use crate::diagnostic::Diagnostic;
use fevlint_syntax::{floor_char_boundary, Span};

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

    /// Like [`LineIndex::position`], with the column counted in UTF-16 code units.
    pub fn position_utf16(&self, text: &str, offset: usize) -> Position {
        let offset = floor_char_boundary(text, offset);
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let column = text[self.starts[line]..offset].encode_utf16().count() + 1;
        Position { line: line + 1, column }
    }
}

/// A file name as CI tools want it: relative to `base` (the working directory) when it
/// lies below it, otherwise as given.
pub fn relative_name(name: &str, base: &std::path::Path) -> String {
    let path = std::path::Path::new(name);
    match path.strip_prefix(base) {
        Ok(rel) if path.is_absolute() => rel.display().to_string(),
        _ => name.strip_prefix("./").unwrap_or(name).to_owned(),
    }
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
