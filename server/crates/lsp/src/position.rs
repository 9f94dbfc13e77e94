//! The one place where LSP positions (line, character in the negotiated encoding) meet
//! byte offsets.
//!
//! The character counts UTF-16 code units unless the client offered UTF-8 or UTF-32
//! (`general.positionEncodings`) and [`Encoding::negotiate`] picked it.
//!
//! Positions from the client are clamped, never trusted: a line past the end means the
//! end of the document, a character past the end of its line means the end of that line
//! (before its line break), and a character inside a surrogate pair or a UTF-8 sequence
//! means the start of that character. Lines break at LF, CRLF and CR, as the protocol
//! counts them.
//!
//! A range's end inside a character (a rule's one-byte span on an emoji) covers that
//! character: the range is as wide as the character, never empty, as `fevlint check`
//! shows it.

use ropey::Rope;
use tower_lsp_server::ls_types::{Position, PositionEncodingKind, Range};

use fevlint_syntax::{LineParse, Span};

/// What a position's `character` counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// Bytes.
    Utf8,
    /// UTF-16 code units: the protocol's default, and the only one every client takes.
    #[default]
    Utf16,
    /// Unicode scalar values (Rust's `char`s).
    Utf32,
}

impl Encoding {
    /// The first of the client's encodings (in its order of preference) the server
    /// speaks; UTF-16 when it offers none.
    pub fn negotiate(offered: Option<&[PositionEncodingKind]>) -> Encoding {
        offered.into_iter().flatten().find_map(Encoding::from_kind).unwrap_or_default()
    }

    fn from_kind(kind: &PositionEncodingKind) -> Option<Encoding> {
        match kind.as_str() {
            "utf-8" => Some(Encoding::Utf8),
            "utf-16" => Some(Encoding::Utf16),
            "utf-32" => Some(Encoding::Utf32),
            _ => None,
        }
    }

    pub fn kind(self) -> PositionEncodingKind {
        match self {
            Encoding::Utf8 => PositionEncodingKind::UTF8,
            Encoding::Utf16 => PositionEncodingKind::UTF16,
            Encoding::Utf32 => PositionEncodingKind::UTF32,
        }
    }

    /// The width of `s` in this encoding.
    pub fn width(self, s: &str) -> usize {
        match self {
            _ if s.is_ascii() => s.len(),
            Encoding::Utf8 => s.len(),
            Encoding::Utf16 => s.encode_utf16().count(),
            Encoding::Utf32 => s.chars().count(),
        }
    }
}

/// A document's rope with the negotiated encoding: what conversions need.
#[derive(Clone, Copy)]
pub struct Text<'a> {
    pub rope: &'a Rope,
    pub encoding: Encoding,
}

impl<'a> Text<'a> {
    pub fn new(rope: &'a Rope, encoding: Encoding) -> Text<'a> {
        Text { rope, encoding }
    }

    pub fn offset(self, pos: Position) -> usize {
        offset_in(self.rope, pos, self.encoding)
    }

    pub fn position(self, offset: usize) -> Position {
        position_in(self.rope, offset, self.encoding)
    }

    /// The range of a span; an end inside a character covers it.
    pub fn range(self, span: Span) -> Range {
        let end = ceil(self.rope, span.end.max(span.start));
        Range::new(self.position(span.start), self.position(end))
    }

    /// Byte span of a client range; a reversed range is read as empty at its start.
    pub fn span(self, range: Range) -> Span {
        let start = self.offset(range.start);
        let end = self.offset(range.end).max(start);
        Span::new(start, end)
    }
}

/// `offset` moved forward to the next character boundary (clamped to the rope).
fn ceil(rope: &Rope, offset: usize) -> usize {
    let offset = offset.min(rope.len_bytes());
    let ch = rope.byte_to_char(offset);
    let start = rope.char_to_byte(ch);
    if start == offset {
        offset
    } else {
        rope.char_to_byte(ch + 1)
    }
}

/// Byte offset of a client position (UTF-16), clamped into the document.
pub fn offset(rope: &Rope, pos: Position) -> usize {
    offset_in(rope, pos, Encoding::Utf16)
}

fn offset_in(rope: &Rope, pos: Position, encoding: Encoding) -> usize {
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
    let character = pos.character as usize;
    let ch = match encoding {
        Encoding::Utf16 => {
            let cu = character.min(slice.char_to_utf16_cu(chars));
            // Inside a surrogate pair ropey answers the char holding that code unit.
            slice.utf16_cu_to_char(cu)
        }
        Encoding::Utf32 => character,
        // Inside a UTF-8 sequence ropey answers the char holding that byte.
        Encoding::Utf8 => slice.byte_to_char(character.min(slice.char_to_byte(chars))),
    };
    rope.char_to_byte(rope.line_to_char(line) + ch.min(chars))
}

/// Client position (UTF-16) of a byte offset (clamped; an offset inside a UTF-8
/// sequence means the character holding it).
pub fn position(rope: &Rope, offset: usize) -> Position {
    position_in(rope, offset, Encoding::Utf16)
}

fn position_in(rope: &Rope, offset: usize, encoding: Encoding) -> Position {
    let offset = offset.min(rope.len_bytes());
    let ch = rope.byte_to_char(offset);
    let line = rope.char_to_line(ch);
    let start = rope.line_to_char(line);
    let character = match encoding {
        Encoding::Utf16 => rope.char_to_utf16_cu(ch) - rope.char_to_utf16_cu(start),
        Encoding::Utf32 => ch - start,
        Encoding::Utf8 => rope.char_to_byte(ch) - rope.char_to_byte(start),
    };
    Position::new(u32::try_from(line).unwrap_or(u32::MAX), u32::try_from(character).unwrap_or(u32::MAX))
}

/// Positions of many offsets in one document (a publish converts thousands): through
/// the parse's line index and the text, where the lines are the protocol's (no `\r` in
/// the text), else through the rope.
pub struct Positions<'a> {
    rope: &'a Rope,
    encoding: Encoding,
    text: &'a str,
    lines: Option<&'a [LineParse]>,
    /// The line of the last answer: findings come in order, most on the same or the
    /// next line.
    last: std::cell::Cell<usize>,
}

impl<'a> Positions<'a> {
    /// `text` and `lines`: the rope's text as one string and its parse.
    pub fn new(at: Text<'a>, text: &'a str, lines: &'a [LineParse]) -> Positions<'a> {
        let same = text.len() == at.rope.len_bytes() && !text.contains('\r');
        Positions {
            rope: at.rope,
            encoding: at.encoding,
            text,
            lines: same.then_some(lines),
            last: std::cell::Cell::new(0),
        }
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
                .unwrap_or_else(|| fevlint_syntax::line_index(lines, offset));
            self.last.set(i);
            if let Some(l) = lines.get(i).filter(|l| l.number as usize == i && l.line.span.start <= offset) {
                if let Some(before) = self.text.get(l.line.span.start..offset) {
                    let character = self.encoding.width(before);
                    return Position::new(l.number, u32::try_from(character).unwrap_or(u32::MAX));
                }
            }
        }
        position_in(self.rope, offset, self.encoding)
    }

    /// [`Text::range`], the same answer.
    pub fn range(&self, span: Span) -> Range {
        let mut end = span.end.max(span.start);
        if end < self.text.len() && self.text.len() == self.rope.len_bytes() {
            while !self.text.is_char_boundary(end) {
                end += 1;
            }
        } else {
            end = ceil(self.rope, end);
        }
        Range::new(self.position(span.start), self.position(end))
    }
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
        let mut parser = fevlint_syntax::Parser::new();
        for text in [
            "a\u{e9}\u{1F600}b\r\nx\n",
            "a\rb\r\nc\u{2028}d\n",
            "vfs_read(x64 a)\n\u{e9}t\u{e9} # \u{1F600}\nx(",
            "x\n\n\ny\n",
            "",
        ] {
            let rope = Rope::from_str(text);
            let lines = parser.lines(text, fevlint_syntax::Target::default());
            for encoding in [Encoding::Utf8, Encoding::Utf16, Encoding::Utf32] {
                let whole = Text::new(&rope, encoding);
                let at = Positions::new(whole, text, &lines);
                // In order (the cursor's case), backwards and jumping about.
                let n = text.len() + 3;
                let order = (0..n).chain((0..n).rev()).chain((0..n).map(|i| i * 7 % n));
                for o in order {
                    assert_eq!(at.position(o), whole.position(o), "{text:?} offset {o} {encoding:?}");
                    let span = Span::new(o.saturating_sub(1), o);
                    assert_eq!(at.range(span), whole.range(span), "{text:?} span {span:?} {encoding:?}");
                    // An offset at a character boundary comes back from its position.
                    if o <= text.len() && text.is_char_boundary(o) && !text[..o].ends_with('\r') {
                        assert_eq!(whole.offset(whole.position(o)), o, "{text:?} offset {o} {encoding:?}");
                    }
                }
            }
        }
        for off in 0..=12 {
            let back = offset(&rope, position(&rope, off));
            assert!(back <= off, "{off} -> {back}");
        }
    }

    #[test]
    fn a_span_ending_inside_a_character_covers_it_in_every_encoding() {
        // `😀` is 4 bytes, 2 UTF-16 units, 1 scalar; a rule's span may be its first byte.
        let text = "a\u{1F600}b\n\u{e9}";
        let rope = Rope::from_str(text);
        for (encoding, emoji, e_acute) in [(Encoding::Utf8, 4, 2), (Encoding::Utf16, 2, 1), (Encoding::Utf32, 1, 1)] {
            let at = Text::new(&rope, encoding);
            assert_eq!(at.range(Span::new(1, 2)), Range::new(p(0, 1), p(0, 1 + emoji)), "{encoding:?}");
            assert_eq!(at.range(Span::new(7, 8)), Range::new(p(1, 0), p(1, e_acute)), "{encoding:?}");
            assert_eq!(at.range(Span::new(1, 1)), Range::new(p(0, 1), p(0, 1)), "an empty span stays empty");
            // Inside the emoji a client position means its start.
            assert_eq!(at.offset(p(0, 1 + emoji - 1)), 1, "{encoding:?}");
            assert_eq!(at.offset(p(0, 1 + emoji)), 5, "{encoding:?}");
            assert_eq!(at.offset(p(0, 2 + emoji)), 6, "{encoding:?}: past the end of the line");
        }
        let offered = |l: &[&'static str]| l.iter().map(|s| PositionEncodingKind::new(s)).collect::<Vec<_>>();
        assert_eq!(Encoding::negotiate(None), Encoding::Utf16);
        assert_eq!(Encoding::negotiate(Some(&offered(&["utf-32", "utf-8"]))), Encoding::Utf32);
        assert_eq!(Encoding::negotiate(Some(&offered(&["ucs-2"]))), Encoding::Utf16);
    }

    #[test]
    fn lone_cr_breaks_a_line_as_lsp_says() {
        let rope = Rope::from_str("a\rb");
        assert_eq!(offset(&rope, p(1, 0)), 2);
        assert_eq!(position(&rope, 2), p(1, 0));
    }
}
