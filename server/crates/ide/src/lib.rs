//! Editor features over a parsed script, in byte offsets and plain data: hover,
//! completion, symbols, folding, highlighting, formatting and fixes.
//!
//! Like rust-analyzer's `ide` crate: it knows the syntax and the rules, never LSP. The
//! language server (`fevlint-lsp`) converts positions, calls one function here, and
//! converts the answer back. Kernel-aware features plug in here (a `kernel` argument
//! next to the `Parse`), so every editor gets them through the same conversion.

mod complete;
mod fix;
mod format;
mod highlight;
mod hover;
mod kernel_aware;
mod mainline;
mod outline;

pub use complete::{completion_reads_tree, completions, completions_with};
pub use fix::{fixes, fixes_with};
pub use format::format;
pub use highlight::{highlights, Highlight, HighlightKind};
pub use hover::{hover, hover_with, Hover};
pub use kernel_aware::{fuzzy_rank, inlay_hints, members, InlayHint, MemberInfo, FUNCTION_LIMIT};
pub use outline::{comment_folds, symbols, Symbol, SymbolKind};

/// Completion and hover for the mainline dialect (`*.dynevents`).
pub mod dynevents {
    pub use crate::mainline::{completions, place_hover};
}

use fevlint_syntax::Span;

/// What a completion item is (the editor's icon and sort group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompletionKind {
    Type,
    Keyword,
    /// A kernel function name.
    Function,
    /// A parameter name of the function, as a field name.
    Parameter,
    /// A struct member, inserted as its offset.
    Member,
    /// A literal (the `0` of `[0]`).
    Value,
}

/// One completion item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// What the list shows.
    pub label: String,
    /// What replaces `replace`.
    pub insert: String,
    /// What the client matches the typed word against.
    pub filter: String,
    pub kind: CompletionKind,
    /// One line: size, signedness, how it prints.
    pub detail: String,
    /// Markdown.
    pub documentation: String,
    /// The word being typed, which the completion replaces.
    pub replace: Span,
    /// Order within the answer (lower first), after `preferred`.
    pub rank: u32,
    /// Sorts before others (meaningful choices first).
    pub preferred: bool,
    /// Shown struck through (a function ftrace cannot attach to).
    pub deprecated: bool,
}

impl Completion {
    /// The one way to make a completion (both dialects, kernel-aware or not): it inserts
    /// its label and is matched by it, with no detail or documentation, at rank 0, neither
    /// preferred nor deprecated; the `with_*` methods and the fields say the rest.
    pub fn new(label: impl Into<String>, kind: CompletionKind, replace: Span) -> Completion {
        let label = label.into();
        Completion {
            insert: label.clone(),
            filter: label.clone(),
            label,
            kind,
            detail: String::new(),
            documentation: String::new(),
            replace,
            rank: 0,
            preferred: false,
            deprecated: false,
        }
    }

    pub fn with_detail(mut self, detail: String) -> Completion {
        self.detail = detail;
        self
    }

    pub fn with_documentation(mut self, documentation: String) -> Completion {
        self.documentation = documentation;
        self
    }

    pub fn with_rank(mut self, rank: u32) -> Completion {
        self.rank = rank;
        self
    }

    pub fn preferred(mut self, preferred: bool) -> Completion {
        self.preferred = preferred;
        self
    }
}

/// A fix of one diagnostic: edits, applied together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub title: String,
    /// The diagnostic it fixes (index into the slice passed to [`fixes`]).
    pub diagnostic: usize,
    pub edits: Vec<Edit>,
    /// The one fix an editor may apply without asking.
    pub preferred: bool,
}

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
pub fn slot_register(target: fevlint_syntax::Target, slot: u32) -> Option<&'static str> {
    const X86_64: [&str; 6] = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"];
    const X86_32: [&str; 3] = ["eax", "edx", "ecx"];
    let regs: &[&str] = if target == fevlint_syntax::Target::X86_32 { &X86_32 } else { &X86_64 };
    regs.get(slot as usize).copied()
}
