//! The one place where LSP positions (line, UTF-16 code unit) meet byte offsets.
//!
//! Positions from the client are clamped, never trusted: a line past the end means the
//! end of the document, a character past the end of its line means the end of that line
//! (before its line break), and a character inside a surrogate pair means the start of
//! that character. Lines break at LF, CRLF and CR, as the protocol counts them.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, Range};

use crate::syntax::{LineParse, Span};

/// Byte offset of a client position, clamped into the document.
pub fn offset(rope: &Rope, pos: Position) -> usize {
    let line = pos.line as usize;
    if line >= rope.len_lines() {
        return rope.len_bytes();
    }
    let slice = rope.line(line);
    let mut chars = slice.len_chars();
    // Not past the line break: `\n`, `\r\n` or `\r`.
    if chars > 0 && slice.char(chars - 1) == '\n' {
        chars -= 1;
    }
    if chars > 0 && slice.char(chars - 1) == '\r' {
        chars -= 1;
    }
    let units = slice.char_to_utf16_cu(chars);
    let cu = (pos.character as usize).min(units);
    // Inside a surrogate pair ropey answers the char holding that code unit.
    let ch = slice.utf16_cu_to_char(cu).min(chars);
    rope.char_to_byte(rope.line_to_char(line) + ch)
}

/// Client position of a byte offset (clamped; an offset inside a UTF-8 sequence means
/// the character holding it).
pub fn position(rope: &Rope, offset: usize) -> Position {
    let offset = offset.min(rope.len_bytes());
    let ch = rope.byte_to_char(offset);
    let line = rope.char_to_line(ch);
    let start = rope.line_to_char(line);
    let character = rope.char_to_utf16_cu(ch) - rope.char_to_utf16_cu(start);
    Position::new(u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(character).unwrap_or(u32::MAX))
}

/// Positions of many offsets in one document (a publish converts thousands): through
/// the parse's line index and the text, where the lines are the protocol's (no `\r` in
/// the text), else through the rope.
pub struct Positions<'a> {
    rope: &'a Rope,
    text: &'a str,
    lines: Option<&'a [LineParse]>,
    /// The line of the last answer: findings come in order, most on the same or the
    /// next line.
    last: std::cell::Cell<usize>,
}

impl<'a> Positions<'a> {
    /// `text` and `lines`: the rope's text as one string and its parse.
    pub fn new(rope: &'a Rope, text: &'a str, lines: &'a [LineParse]) -> Positions<'a> {
        let same = text.len() == rope.len_bytes() && !text.contains('\r');
        Positions { rope, text, lines: same.then_some(lines), last: std::cell::Cell::new(0) }
    }

    /// [`position`], the same answer.
    pub fn position(&self, offset: usize) -> Position {
        if let Some(lines) = self.lines.filter(|_| self.text.is_char_boundary(offset)) {
            // The first line ending at or after `offset` (`line_index`), tried at the
            // last answer and the line after it before searching.
            let holds = |i: usize| {
                lines.get(i).is_some_and(|l| l.line.span.end >= offset)
                    && (i == 0 || lines.get(i - 1).is_some_and(|p| p.line.span.end < offset))
            };
            let hint = self.last.get();
            let i = [hint, hint + 1]
                .into_iter()
                .find(|&i| holds(i))
                .unwrap_or_else(|| crate::syntax::line_index(lines, offset));
            self.last.set(i);
            if let Some(l) = lines.get(i).filter(|l| l.number as usize == i && l.line.span.start <= offset) {
                if let Some(before) = self.text.get(l.line.span.start..offset) {
                    let character = if before.is_ascii() { before.len() } else { before.encode_utf16().count() };
                    return Position::new(l.number, u32::try_from(character).unwrap_or(u32::MAX));
                }
            }
        }
        position(self.rope, offset)
    }

    /// [`range`], the same answer.
    pub fn range(&self, span: Span) -> Range {
        Range::new(self.position(span.start), self.position(span.end.max(span.start)))
    }
}

pub fn range(rope: &Rope, span: Span) -> Range {
    Range::new(position(rope, span.start), position(rope, span.end.max(span.start)))
}

/// Byte span of a client range; a reversed range is read as empty at its start.
pub fn span(rope: &Rope, range: Range) -> Span {
    let start = offset(rope, range.start);
    let end = offset(rope, range.end).max(start);
    Span::new(start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: u32, character: u32) -> Position {
        Position::new(line, character)
    }

    #[test]
    fn clamps_and_counts_utf16() {
        // 'é' is 2 bytes, 1 unit; '😀' is 4 bytes, 2 units (a surrogate pair).
        let rope = Rope::from_str("aé😀b\r\nx\n");
        assert_eq!(offset(&rope, p(0, 0)), 0);
        assert_eq!(offset(&rope, p(0, 2)), 3);
        assert_eq!(offset(&rope, p(0, 3)), 3, "inside the surrogate pair: the start of the emoji");
        assert_eq!(offset(&rope, p(0, 4)), 7);
        assert_eq!(offset(&rope, p(0, 5)), 8, "end of line, before \\r\\n");
        assert_eq!(offset(&rope, p(0, u32::MAX)), 8);
        assert_eq!(offset(&rope, p(1, 1)), 11);
        assert_eq!(offset(&rope, p(2, 0)), 12, "the empty last line");
        assert_eq!(offset(&rope, p(u32::MAX, 7)), 12);
        assert_eq!(position(&rope, 7), p(0, 4));
        assert_eq!(position(&rope, 5), p(0, 2), "inside a UTF-8 sequence: the char holding it");
        assert_eq!(position(&rope, 1000), p(2, 0));
        let mut parser = crate::syntax::Parser::new();
        for text in [
            "a\u{e9}\u{1F600}b\r\nx\n",
            "a\rb\r\nc\u{2028}d\n",
            "vfs_read(x64 a)\n\u{e9}t\u{e9} # \u{1F600}\nx(",
            "x\n\n\ny\n",
            "",
        ] {
            let rope = Rope::from_str(text);
            let lines = parser.lines(text, crate::syntax::Target::default());
            let at = Positions::new(&rope, text, &lines);
            // In order (the cursor's case), backwards and jumping about.
            let n = text.len() + 3;
            let order = (0..n).chain((0..n).rev()).chain((0..n).map(|i| i * 7 % n));
            for o in order {
                assert_eq!(at.position(o), position(&rope, o), "{text:?} offset {o}");
            }
        }
        for off in 0..=12 {
            let back = offset(&rope, position(&rope, off));
            assert!(back <= off, "{off} -> {back}");
        }
    }

    #[test]
    fn lone_cr_breaks_a_line_as_lsp_says() {
        let rope = Rope::from_str("a\rb");
        assert_eq!(offset(&rope, p(1, 0)), 2);
        assert_eq!(position(&rope, 2), p(1, 0));
    }
}
