//! bpftrace scripts (`*.bt`) as Debian's bpftrace 0.17 reads them: text in, a [`Parse`]
//! out (tokens, the tree with byte spans, every error bpftrace's lexer, parser and
//! attach-point parser would report). Sans-IO, never panics, knows nothing of kernels.
//!
//! The specification is bpftrace v0.17.0's `src/lexer.l`, `src/parser.yy` and
//! `src/ast/attachpoint_parser.cpp`; each module names the rules it transcribes.

pub mod ast;
pub mod lex;
pub mod parse;
pub mod probe;

pub use ast::*;
pub use parse::{parse, Parse};
pub use probe::{AttachPoint, ProbeKind};

/// A byte range in the script.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub const fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// Which of bpftrace's stages rejected the script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `lexer.l`: `driver.error(...)` (the lexer goes on after it).
    Lexer,
    /// `parser.yy`: a bison syntax error or an action's `error(...)`; parsing stops.
    Parser,
    /// `attachpoint_parser.cpp`: an attach point bpftrace cannot read.
    AttachPoint,
}

/// An error bpftrace reports, with its own message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    pub span: Span,
    pub stage: Stage,
    /// bpftrace's message, verbatim where bpftrace has one.
    pub message: String,
}
