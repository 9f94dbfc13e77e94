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
#[derive(Clone, Debug)]
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
}

/// A parsed script.
#[derive(Debug)]
pub struct Parse {
    pub tree: tree_sitter::Tree,
    pub lines: Vec<LineParse>,
    pub target: Target,
}

impl Parse {
    /// The definitions the kernel accepts or rejects (blank and comment lines skipped).
    pub fn definitions(&self) -> impl Iterator<Item = (&LineParse, &Parsed)> {
        self.lines.iter().filter_map(|l| l.parsed.as_ref().map(|p| (l, p)))
    }

    /// The line holding a byte offset.
    pub fn line_at(&self, offset: usize) -> Option<&LineParse> {
        let i = self.lines.partition_point(|l| l.line.span.end < offset);
        self.lines.get(i)
    }
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
        Parse { tree, lines, target }
    }

    /// Only the kernel's view, without the tree (for batch checks that need no positions
    /// beyond what the state machine records).
    pub fn lines(&mut self, text: &str, target: Target) -> Vec<LineParse> {
        let mut out = Vec::new();
        for (number, line) in lex::lines(text).enumerate() {
            let nul = line.span.text(text).bytes().position(|b| b == 0).map(|i| line.span.start + i);
            let code = match nul {
                Some(at) => Span::new(line.code.start, at.min(line.code.end)),
                None => line.code,
            };
            lex::tokens(text, code, &mut self.tokens);
            let parsed = (!self.tokens.is_empty()).then(|| machine::parse_line(text, &self.tokens, target));
            out.push(LineParse { number: u32::try_from(number).unwrap_or(u32::MAX), line, parsed, nul });
        }
        out
    }

    fn tree(&mut self, text: &str, old: Option<&tree_sitter::Tree>) -> tree_sitter::Tree {
        if let Some(tree) = self.ts.parse(text, old) {
            return tree;
        }
        // Only possible after a cancellation or timeout, which we never set: retry fresh.
        self.ts.reset();
        #[allow(clippy::expect_used)]
        self.ts.parse(text, None).expect("tree-sitter parses without cancellation")
    }
}

/// Parses `text` for x86_64 with a fresh parser.
pub fn parse(text: &str) -> Parse {
    Parser::new().parse(text, Target::default(), None)
}
