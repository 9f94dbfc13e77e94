//! Editor features over a parsed script, in byte offsets and plain data: hover,
//! completion, symbols, folding, highlighting, formatting and fixes.
//!
//! Like rust-analyzer's `ide` crate: it knows the syntax and the rules, never LSP. The
//! language server (`fevlint-lsp`) converts positions, calls one function here, and
//! converts the answer back. Kernel-aware features plug in here (a `kernel` argument
//! next to the `Parse`), so every editor gets them through the same conversion.

#[cfg(test)]
use fevlint_check::analysis;
use fevlint_check::{diagnostic, rules};
use fevlint_syntax as syntax;

mod complete;
mod fix;
mod format;
mod highlight;
mod hover;
mod kernel;
mod outline;

pub use complete::{completions, completions_with, Completion, CompletionKind};
pub use fix::{fixes, fixes_with, Fix};
pub use format::format;
pub use highlight::{highlights, Highlight, HighlightKind};
pub use hover::{hover, hover_with, Hover};
pub use kernel::{fuzzy_rank, inlay_hints, members, InlayHint, MemberInfo, FUNCTION_LIMIT};
pub use outline::{comment_folds, symbols, Symbol, SymbolKind};

use crate::syntax::Span;

/// A replacement of `span` by `text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub text: String,
}

/// The leaf node covering `offset`, preferring the token that ends at `offset` when
/// the cursor sits right after it (`int|` hovers `int`).
pub(crate) fn leaf_at(root: tree_sitter::Node<'_>, offset: usize) -> Option<tree_sitter::Node<'_>> {
    let node = root.descendant_for_byte_range(offset, offset)?;
    if node.child_count() == 0 && node.start_byte() <= offset && offset < node.end_byte() {
        return Some(node);
    }
    let before = offset.checked_sub(1)?;
    let node = root.descendant_for_byte_range(before, before)?;
    (node.child_count() == 0 && node.end_byte() >= offset).then_some(node)
}

/// Registers holding argument slots at a function's entry (spec §2).
pub fn slot_register(target: crate::syntax::Target, slot: u32) -> Option<&'static str> {
    const X86_64: [&str; 6] = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"];
    const X86_32: [&str; 3] = ["eax", "edx", "ecx"];
    let regs: &[&str] = if target == crate::syntax::Target::X86_32 { &X86_32 } else { &X86_64 };
    regs.get(slot as usize).copied()
}
