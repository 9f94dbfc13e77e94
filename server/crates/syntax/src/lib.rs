//! Text in, `Parse` out; never fails. Knows nothing about kernels, LSP or rendering.
//!
//! Two views of the same text, each for what it is good at:
//! - [`machine`]: the kernel's own tokenizer and state machine, line by line. It is the
//!   verdict (accepted or rejected at which token, with the kernel's message) and the
//!   meaning (slots, folded redirects, absolute addresses) the checker and executor use.
//! - [`tree`]: the tree-sitter tree with typed views, for editing: it survives half-typed
//!   lines, and gives node positions for hover, completion and highlighting.

pub mod kinds;
pub mod lex;
pub mod machine;
pub mod tree;
pub mod walk;

pub use machine::{Atom, Field, Parsed, Target};

/// A byte range in the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// The smallest span holding both.
    pub fn cover(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    pub fn contains(self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }

    /// Moves the span by `delta` bytes.
    pub fn shift(&mut self, delta: isize) {
        self.start = self.start.saturating_add_signed(delta);
        self.end = self.end.saturating_add_signed(delta);
    }

    /// The text under the span; empty when the span is out of range.
    pub fn text(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or("")
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

/// One line of a script and what the kernel makes of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineParse {
    /// 0-based line number.
    pub number: u32,
    pub line: lex::Line,
    /// `None` for blank and comment-only lines, which the kernel skips.
    pub parsed: Option<Parsed>,
    /// Offset of the first NUL byte in the line: the kernel stops reading there.
    pub nul: Option<usize>,
}

impl LineParse {
    /// The kernel refuses a line longer than its write buffer before parsing it.
    pub fn too_long(&self) -> bool {
        self.line.span.len() > lex::MAX_LINE_LEN
    }

    /// Moves the line by `bytes` and `lines` (text inserted or removed before it).
    pub fn shift(&mut self, bytes: isize, lines: isize) {
        let LineParse { number, line, parsed, nul } = self;
        *number = number.saturating_add_signed(lines as i32);
        let lex::Line { span, code, comment } = line;
        for s in [Some(span), Some(code), comment.as_mut()].into_iter().flatten() {
            s.shift(bytes);
        }
        if let Some(n) = nul {
            *n = n.saturating_add_signed(bytes);
        }
        if let Some(p) = parsed {
            p.shift(bytes);
        }
    }
}

/// A parsed script.
#[derive(Clone, Debug)]
pub struct Parse {
    pub tree: tree_sitter::Tree,
    /// Shared, so that a view of a document costs no copy (the language server keeps
    /// its lines up to date edit by edit and builds a `Parse` when a request needs one).
    pub lines: std::sync::Arc<Vec<LineParse>>,
    pub target: Target,
}

impl Parse {
    /// The definitions the kernel accepts or rejects (blank and comment lines skipped).
    pub fn definitions(&self) -> impl Iterator<Item = (&LineParse, &Parsed)> {
        self.lines.iter().filter_map(|l| l.parsed.as_ref().map(|p| (l, p)))
    }

    /// The line holding a byte offset.
    pub fn line_at(&self, offset: usize) -> Option<&LineParse> {
        self.lines.get(line_index(&self.lines, offset))
    }
}

/// The index of the line holding byte `offset` in `lines` (in order, of one text): the
/// first line ending at or after it, so the end of a line (before its `\n`) is in it;
/// `lines.len()` past the last line.
pub fn line_index(lines: &[LineParse], offset: usize) -> usize {
    lines.partition_point(|l| l.line.span.end < offset)
}

/// Parses scripts, keeping the tree-sitter parser and scratch buffers between calls.
pub struct Parser {
    ts: tree_sitter::Parser,
    tokens: Vec<lex::Token>,
}

impl std::fmt::Debug for Parser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("syntax::Parser")
    }
}

impl Default for Parser {
    fn default() -> Self {
        Parser::new()
    }
}

impl Parser {
    pub fn new() -> Parser {
        let mut ts = tree_sitter::Parser::new();
        // Invariant: the generated grammar and the runtime come from the same
        // tree-sitter version (the tests load it), so this cannot fail.
        #[allow(clippy::expect_used)]
        ts.set_language(&tree_sitter_fev::LANGUAGE.into()).expect("grammar ABI is supported by the runtime");
        Parser { ts, tokens: Vec::new() }
    }

    /// Parses `text` for `target`. With `old`, the tree is reparsed incrementally
    /// (the caller has applied its edits to `old` with `Tree::edit`).
    pub fn parse(&mut self, text: &str, target: Target, old: Option<&tree_sitter::Tree>) -> Parse {
        let tree = self.tree(text, old);
        let lines = self.lines(text, target);
        Parse { tree, lines: std::sync::Arc::new(lines), target }
    }

    /// Only the kernel's view, without the tree (for batch checks that need no positions
    /// beyond what the state machine records).
    pub fn lines(&mut self, text: &str, target: Target) -> Vec<LineParse> {
        lex::lines(text).enumerate().map(|(number, line)| self.line(text, line, number, target)).collect()
    }

    fn line(&mut self, text: &str, line: lex::Line, number: usize, target: Target) -> LineParse {
        let nul = line.span.text(text).bytes().position(|b| b == 0).map(|i| line.span.start + i);
        if line.span.len() > lex::MAX_LINE_LEN {
            // The kernel refuses a line longer than its write buffer before reading a
            // token of it (S004 says so): nothing to tokenize or parse. This keeps a
            // 60 MB line from costing gigabytes of tokens and fields.
            return LineParse { number: u32::try_from(number).unwrap_or(u32::MAX), line, parsed: None, nul };
        }
        let code = match nul {
            Some(at) => Span::new(line.code.start, at.min(line.code.end)),
            None => line.code,
        };
        lex::tokens(text, code, &mut self.tokens);
        let parsed = (!self.tokens.is_empty()).then(|| machine::parse_line(text, &self.tokens, target));
        LineParse { number: u32::try_from(number).unwrap_or(u32::MAX), line, parsed, nul }
    }

    /// Brings `lines`, the kernel's view of the text before an edit, in step with `text`,
    /// the text after it: the edit replaced the bytes `old` of the old text with `new_len`
    /// bytes. Only the lines the edit touched are read again; the others move. Returns the
    /// indexes of the lines read again (in the new `lines`) and how many lines replaced
    /// them. Lines are independent of each other in the kernel's grammar, so the result
    /// equals [`Parser::lines`] on `text`.
    pub fn relines(
        &mut self,
        lines: &mut Vec<LineParse>,
        text: &str,
        old: Span,
        new_len: usize,
        target: Target,
    ) -> Reread {
        let Some(last_index) = lines.len().checked_sub(1) else {
            *lines = self.lines(text, target);
            return Reread { new: 0..lines.len(), removed: 0 };
        };
        // The lines holding the edit's start and end (an edit after the last `\n` belongs
        // to the last line, which is read again with everything after it).
        let first = line_index(lines, old.start).min(last_index);
        let last = line_index(lines, old.end).clamp(first, last_index);
        let delta = new_len as isize - old.len() as isize;
        let start = lines[first].line.span.start;
        // The new text from the first touched line to the start of the first untouched
        // one (or the end of the text).
        let end = match lines.get(last + 1) {
            Some(next) => next.line.span.start.saturating_add_signed(delta).min(text.len()),
            None => text.len(),
        };
        let region = text.get(start..end).unwrap_or("");
        let mut fresh = Vec::new();
        // Nothing after the text's last `\n` is no line at all (as in `lex::lines`).
        let at_end = region.is_empty() && start > 0;
        for (i, mut line) in lex::lines(region).enumerate().filter(|_| !at_end) {
            for s in [Some(&mut line.span), Some(&mut line.code), line.comment.as_mut()].into_iter().flatten() {
                s.shift(start as isize);
            }
            fresh.push(self.line(text, line, first + i, target));
        }
        let added = fresh.len();
        let removed = last + 1 - first;
        lines.splice(first..=last, fresh);
        let moved = added as isize - removed as isize;
        if delta != 0 || moved != 0 {
            for l in &mut lines[first + added..] {
                l.shift(delta, moved);
            }
        }
        Reread { new: first..first + added, removed }
    }

    /// The tree of `text`; with `old`, reparsed incrementally (edited with `Tree::edit`).
    pub fn tree(&mut self, text: &str, old: Option<&tree_sitter::Tree>) -> tree_sitter::Tree {
        if let Some(tree) = self.ts.parse(text, old) {
            return tree;
        }
        // Only possible after a cancellation or timeout, which we never set: retry fresh.
        self.ts.reset();
        #[allow(clippy::expect_used)]
        self.ts.parse(text, None).expect("tree-sitter parses without cancellation")
    }
}

/// What [`Parser::relines`] read again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reread {
    /// Indexes of the lines read again, in the new lines.
    pub new: std::ops::Range<usize>,
    /// How many old lines they replaced.
    pub removed: usize,
}

/// Parses `text` for x86_64 with a fresh parser.
pub fn parse(text: &str) -> Parse {
    Parser::new().parse(text, Target::default(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pieces edits insert: whole definitions, half-typed ones, comments, newlines, a NUL,
    /// multi-byte text.
    const PIECES: [&str; 12] = [
        "vfs_read(x64 file, u32 count+8[0])",
        "\n",
        "# fevlint: ignore[T401]\n",
        "ip_rcv(x64 skb, ",
        ")",
        "\n\n",
        "do_IRQ(int counter+8=0xffffffff82354c18)\n",
        "x",
        "\0",
        "é😀",
        "symbol read+40[0]+16",
        "",
    ];

    fn rng(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn rereading_the_touched_lines_equals_a_fresh_parse_after_every_edit() {
        let mut text = "a(int x)\n# c\nb(x64 y+8[0], char z[4])\n\nc(string s".to_owned();
        let mut parser = Parser::new();
        let mut lines = parser.lines(&text, Target::X86_64);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for step in 0..5_000 {
            let mut start = (rng(&mut state) as usize) % (text.len() + 1);
            let mut end = (start + (rng(&mut state) as usize) % 24).min(text.len());
            while !text.is_char_boundary(start) {
                start -= 1;
            }
            while !text.is_char_boundary(end) {
                end += 1;
            }
            let piece = PIECES[(rng(&mut state) as usize) % PIECES.len()];
            let before = text.clone();
            text.replace_range(start..end, piece);
            let target = if step < 2_500 { Target::X86_64 } else { Target::X86_32 };
            if step == 2_500 {
                lines = parser.lines(&text, target);
                continue;
            }
            let reread = parser.relines(&mut lines, &text, Span::new(start, end), piece.len(), target);
            let fresh = parser.lines(&text, target);
            assert_eq!(lines, fresh, "step {step}: {before:?} -> {text:?}");
            assert!(reread.new.end <= lines.len());
            if text.len() > 4_000 {
                text.truncate(floor_char_boundary(&text, 100));
                lines = parser.lines(&text, target);
            }
        }
    }
}
