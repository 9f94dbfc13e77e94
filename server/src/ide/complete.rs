//! Completion in field position: type atoms, `NULL` and `unsigned`, chosen from the
//! token before the word being typed (as the tree has it, so half-typed lines work).

use crate::syntax::lex::{is_space, is_word_byte};
use crate::syntax::machine::Atom;
use crate::syntax::{Parse, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Type,
    Keyword,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    pub label: &'static str,
    pub kind: CompletionKind,
    /// One line: size, signedness, how it prints.
    pub detail: String,
    /// Markdown.
    pub documentation: String,
    /// The word being typed, which the completion replaces.
    pub replace: Span,
    /// Sorts before others (meaningful choices first).
    pub preferred: bool,
}

/// Where the cursor is, as far as completion is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Position {
    /// After `(` or `,`: a field, `NULL` or `unsigned`.
    SlotStart,
    /// After `|`: a field or `NULL`.
    AfterPipe,
    /// After `unsigned`: a type.
    AfterUnsigned,
}

/// Completions at a byte offset (empty where none apply).
pub fn completions(parse: &Parse, text: &str, offset: usize) -> Vec<Completion> {
    let offset = crate::render::floor_char_boundary(text, offset);
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && is_word_byte(bytes[start - 1]) {
        start -= 1;
    }
    let replace = Span::new(start, offset);
    let Some(position) = position(parse, text, start) else { return Vec::new() };
    let target = parse.target;
    let mut out = Vec::new();
    if position != Position::AfterUnsigned {
        out.push(Completion {
            label: "NULL",
            kind: CompletionKind::Keyword,
            detail: "skip this argument slot".to_owned(),
            documentation: "`NULL` records nothing for this slot; the next `,` moves to the next parameter.".to_owned(),
            replace,
            preferred: false,
        });
    }
    if position == Position::SlotStart || position == Position::AfterPipe {
        out.push(Completion {
            label: "unsigned",
            kind: CompletionKind::Keyword,
            detail: "unsigned long/int/short/char".to_owned(),
            documentation: "`unsigned T`: prints T as unsigned; meaningful on `long int short char`.".to_owned(),
            replace,
            preferred: false,
        });
    }
    for atom in Atom::ALL {
        if position == Position::AfterUnsigned && atom == Atom::String {
            continue; // `unsigned string` is nonsense (accepted, but nobody means it).
        }
        let size = atom.size(target.ptr_size);
        let detail = match atom {
            Atom::String => "string (__data_loc), %s".to_owned(),
            _ => format!(
                "{size} byte{}, {}",
                if size == 1 { "" } else { "s" },
                if atom.signed() { "signed" } else { "unsigned" }
            ),
        };
        let preferred = match position {
            Position::AfterUnsigned => matches!(atom, Atom::Long | Atom::Int | Atom::Short | Atom::Char),
            _ => true,
        };
        out.push(Completion {
            label: atom.name(),
            kind: CompletionKind::Type,
            detail,
            documentation: super::hover::type_doc(atom, false, None, target),
            replace,
            preferred,
        });
    }
    out
}

/// The completion context of a word starting at `start`, from the leaf before it.
fn position(parse: &Parse, text: &str, start: usize) -> Option<Position> {
    let bytes = text.as_bytes();
    let mut p = start;
    while p > 0 && bytes[p - 1] != b'\n' && is_space(bytes[p - 1]) {
        p -= 1;
    }
    if p == 0 || bytes[p - 1] == b'\n' {
        return None; // line start: a function name (kernel-aware, later)
    }
    let line = parse.line_at(start)?;
    if line.line.comment.is_some_and(|c| c.start < start) {
        return None;
    }
    let root = parse.tree.root_node();
    let leaf = root.descendant_for_byte_range(p - 1, p)?;
    if leaf.child_count() != 0 {
        return None;
    }
    // The token text, not only the kind: inside ERROR recovery tree-sitter may keep a
    // keyword as an identifier leaf.
    match crate::syntax::tree::span(leaf).text(text) {
        "(" | "," => Some(Position::SlotStart),
        "|" => Some(Position::AfterPipe),
        "unsigned" => Some(Position::AfterUnsigned),
        _ => None,
    }
}
