//! Completion in field position: type atoms, `NULL` and `unsigned`, chosen from the
//! token before the word being typed (as the tree has it, so half-typed lines work).

use fevlint_kernel::Kernel;
use fevlint_syntax::lex::{is_space, is_word_byte};
use fevlint_syntax::machine::Atom;
use fevlint_syntax::{Parse, Span};

use crate::{Completion, CompletionKind};

impl Completion {
    fn word(
        label: &'static str,
        kind: CompletionKind,
        detail: String,
        documentation: String,
        replace: Span,
        preferred: bool,
    ) -> Completion {
        Completion::new(label, kind, replace).with_detail(detail).with_documentation(documentation).preferred(preferred)
    }
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

/// [`completions`] plus what the kernels offer: function names, parameter names,
/// member offsets after `+`, `0` after `[`.
pub fn completions_with(parse: &Parse, text: &str, offset: usize, kernels: &[&Kernel]) -> Vec<Completion> {
    let mut out = completions(parse, text, offset);
    out.extend(crate::kernel_aware::completions(parse, text, offset, kernels));
    out
}

/// Whether [`completions_with`] at `offset` reads the syntax tree: not for a word at its
/// line's start (a function name, completed from the line alone). The language server
/// reparses a large document's tree after an edit only for a request that reads it.
pub fn completion_reads_tree(text: &str, offset: usize) -> bool {
    let offset = fevlint_syntax::floor_char_boundary(text, offset);
    let bytes = text.as_bytes();
    let mut start = offset;
    while start > 0 && is_word_byte(bytes[start - 1]) {
        start -= 1;
    }
    !at_line_start(bytes, start)
}

/// Whether only blanks come before `start` on its line.
fn at_line_start(bytes: &[u8], start: usize) -> bool {
    let mut p = start;
    while p > 0 && bytes[p - 1] != b'\n' && is_space(bytes[p - 1]) {
        p -= 1;
    }
    p == 0 || bytes[p - 1] == b'\n'
}

/// Completions at a byte offset (empty where none apply).
pub fn completions(parse: &Parse, text: &str, offset: usize) -> Vec<Completion> {
    let offset = fevlint_syntax::floor_char_boundary(text, offset);
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
        out.push(Completion::word(
            "NULL",
            CompletionKind::Keyword,
            "skip this argument slot".to_owned(),
            "`NULL` records nothing for this slot; the next `,` moves to the next parameter.".to_owned(),
            replace,
            false,
        ));
    }
    if position == Position::SlotStart || position == Position::AfterPipe {
        out.push(Completion::word(
            "unsigned",
            CompletionKind::Keyword,
            "unsigned long/int/short/char".to_owned(),
            "`unsigned T`: prints T as unsigned; meaningful on `long int short char`.".to_owned(),
            replace,
            false,
        ));
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
        out.push(Completion::word(
            atom.name(),
            CompletionKind::Type,
            detail,
            super::hover::type_doc(atom, false, None, target),
            replace,
            preferred,
        ));
    }
    out
}

/// The completion context of a word starting at `start`, from the leaf before it.
fn position(parse: &Parse, text: &str, start: usize) -> Option<Position> {
    let mut p = start;
    while p > 0 && text.as_bytes()[p - 1] != b'\n' && is_space(text.as_bytes()[p - 1]) {
        p -= 1;
    }
    if at_line_start(text.as_bytes(), start) {
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
    match fevlint_syntax::tree::span(leaf).text(text) {
        "(" | "," => Some(Position::SlotStart),
        "|" => Some(Position::AfterPipe),
        "unsigned" => Some(Position::AfterUnsigned),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The language server leaves the tree behind an edit unless the request reads it:
    /// wherever [`completion_reads_tree`] says no, a tree of another text (what an edit
    /// leaves) gives the same completions, and fixes never read the tree.
    #[test]
    fn what_does_not_read_the_tree_answers_the_same_with_a_stale_one() {
        let text = "# c\nvfs_read(x64 a0, unsigned x32 b, x8 c=+8(%di))\n  do_sys_open(x, symbol f)\nip_rcv(\n";
        let mut parser = fevlint_syntax::Parser::new();
        let fresh = parser.parse(text, fevlint_syntax::Target::default(), None);
        let mut stale = parser.parse(text, fevlint_syntax::Target::default(), None);
        stale.tree = parser.tree("tcp_v4_rcv(x64 skb)\n\n\n\n# other\n", None);
        let mut skipped = 0;
        for offset in 0..=text.len() {
            if !completion_reads_tree(text, offset) {
                skipped += 1;
                assert_eq!(completions(&stale, text, offset), completions(&fresh, text, offset), "at {offset}");
            }
        }
        // Line starts and names typed there (also indented); not after `(` or a type.
        assert!(skipped > 20, "{skipped}");
        assert!(!completion_reads_tree(text, 8) && !completion_reads_tree(text, 53));
        assert!(completion_reads_tree(text, 14) && completion_reads_tree(text, 69));
        let findings = fevlint_check::analysis::check_parse(&fresh, text);
        assert!(!findings.is_empty());
        let all = fevlint_syntax::Span::new(0, text.len());
        assert_eq!(
            crate::fixes_with(&stale, text, &findings, all, &[]),
            crate::fixes_with(&fresh, text, &findings, all, &[])
        );
    }
}
