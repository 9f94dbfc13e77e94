//! The outline: one symbol per definition with its fields, and folds for comment blocks.

use fevlint_syntax::lex;
use fevlint_syntax::tree;
use fevlint_syntax::{Parse, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolKind {
    Definition,
    Field,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// The type of a field; accepted/rejected and slots for a definition.
    pub detail: String,
    pub kind: SymbolKind,
    /// The whole construct.
    pub span: Span,
    /// The name, inside `span`.
    pub selection: Span,
    pub children: Vec<Symbol>,
}

/// Definitions with their fields, from the tree (so broken lines are listed too).
pub fn symbols(parse: &Parse, text: &str) -> Vec<Symbol> {
    let root = parse.tree.root_node();
    let mut out = Vec::new();
    for def in tree::definitions(root) {
        let span = def.span();
        let Some(function) = def.function() else { continue };
        let selection = tree::span(function);
        let name = selection.text(text).to_owned();
        if name.is_empty() {
            continue;
        }
        let detail = match parse.line_at(span.start).and_then(|l| l.parsed.as_ref()) {
            Some(p) if p.rejection.is_none() => format!("{} slot{}", p.slots, if p.slots == 1 { "" } else { "s" }),
            Some(_) => "rejected by the kernel".to_owned(),
            None => String::new(),
        };
        let mut children = Vec::new();
        for field in def.fields() {
            let fspan = field.span();
            let Some(target) = field.target() else { continue };
            let name_node = target.name().unwrap_or(target.node());
            let fsel = tree::span(name_node);
            let fname = fsel.text(text).to_owned();
            if fname.is_empty() {
                continue;
            }
            let mut detail = String::new();
            if field.unsigned().is_some() {
                detail.push_str("unsigned ");
            }
            if let Some(t) = field.type_node() {
                detail.push_str(tree::span(t).text(text));
            }
            if let Some(c) = field.array_count() {
                detail.push_str(&format!("[{}]", tree::span(c).text(text)));
            }
            children.push(Symbol {
                name: fname,
                detail,
                kind: SymbolKind::Field,
                span: fspan,
                selection: fsel,
                children: Vec::new(),
            });
        }
        out.push(Symbol { name, detail, kind: SymbolKind::Definition, span, selection, children });
    }
    out
}

/// Runs of two or more comment-only lines, as 0-based (first, last) line numbers.
pub fn comment_folds(text: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    for (i, line) in lex::lines(text).enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        let comment_only = line.comment.is_some() && line.code.text(text).bytes().all(lex::is_space);
        run = match (run, comment_only) {
            (Some((a, _)), true) => Some((a, i)),
            (None, true) => Some((i, i)),
            (Some((a, b)), false) => {
                if b > a {
                    out.push((a, b));
                }
                None
            }
            (None, false) => None,
        };
    }
    if let Some((a, b)) = run {
        if b > a {
            out.push((a, b));
        }
    }
    out
}
