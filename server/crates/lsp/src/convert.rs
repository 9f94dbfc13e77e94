//! Conversions between `ide`/`diagnostic` values (byte spans) and LSP types.

use super::position;
use crate::diagnostic::{Diagnostic, Severity};
use crate::ide;
use ropey::Rope;
use std::collections::HashMap;
use std::path::PathBuf;
use tower_lsp_server::ls_types as lsp;

/// Where the rule docs live, for `codeDescription`.
#[derive(Clone, Debug, Default)]
pub struct RuleDocs {
    /// A `docs/rules` folder of a fevlint checkout, when one was found.
    pub dir: Option<PathBuf>,
    /// Each rule's link, decided once: a publish of ten thousand diagnostics must not
    /// ask the file system ten thousand times.
    hrefs: HashMap<&'static str, Option<lsp::Uri>>,
}

/// Used when no checkout is found: stable, under the project URL.
pub const RULES_URL: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/rules/");

impl RuleDocs {
    /// The first `docs/rules` among the workspace roots, then the checkout this binary
    /// was built from.
    pub fn find(roots: &[PathBuf]) -> RuleDocs {
        let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../docs/rules");
        let dir = roots
            .iter()
            .map(|r| r.join("docs/rules"))
            .chain(std::iter::once(built))
            .find(|d| d.join("README.md").is_file() || d.join("S001.md").is_file())
            .and_then(|d| d.canonicalize().ok());
        let mut docs = RuleDocs { dir, hrefs: HashMap::new() };
        docs.hrefs = crate::rules::REGISTRY.iter().map(|r| (r.code, docs.locate(r.code))).collect();
        docs
    }

    pub fn href(&self, code: &str) -> Option<lsp::Uri> {
        match self.hrefs.get(code) {
            Some(h) => h.clone(),
            None => self.locate(code),
        }
    }

    fn locate(&self, code: &str) -> Option<lsp::Uri> {
        if let Some(dir) = &self.dir {
            let file = dir.join(format!("{code}.md"));
            if file.is_file() {
                return lsp::Uri::from_file_path(&file);
            }
        }
        format!("{RULES_URL}{code}.md").parse().ok()
    }
}

pub fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Info => lsp::DiagnosticSeverity::INFORMATION,
    }
}

/// A diagnostic for the client; notes become `relatedInformation` when the client
/// shows it, else lines appended to the message. With `label_kernel` (several kernels
/// configured) a kernel diagnostic names its kernel in the message.
pub fn diagnostic(
    at: &position::Positions<'_>,
    uri: &lsp::Uri,
    d: &Diagnostic,
    docs: &RuleDocs,
    related_information: bool,
    label_kernel: bool,
) -> lsp::Diagnostic {
    let range = at.range(d.span);
    let mut message = d.message.to_string();
    if let Some(k) = d.kernel.as_deref().filter(|k| label_kernel && !message.contains(k)) {
        message.push_str(&format!(" (on {k})"));
    }
    let related = if related_information && !d.notes.is_empty() {
        Some(
            d.notes
                .iter()
                .map(|n| lsp::DiagnosticRelatedInformation {
                    location: lsp::Location { uri: uri.clone(), range },
                    message: n.to_string(),
                })
                .collect(),
        )
    } else {
        for n in &d.notes {
            message.push('\n');
            message.push_str(n);
        }
        None
    };
    lsp::Diagnostic {
        range,
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.code.to_owned())),
        code_description: docs.href(d.code).map(|href| lsp::CodeDescription { href }),
        source: Some("fevlint".to_owned()),
        message,
        related_information: related,
        tags: None,
        data: None,
    }
}

pub fn hover(rope: &Rope, h: ide::Hover) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value: h.markdown }),
        range: Some(position::range(rope, h.span)),
    }
}

pub fn completion(rope: &Rope, c: ide::Completion) -> lsp::CompletionItem {
    lsp::CompletionItem {
        kind: Some(match c.kind {
            ide::CompletionKind::Type => lsp::CompletionItemKind::TYPE_PARAMETER,
            ide::CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
            ide::CompletionKind::Function => lsp::CompletionItemKind::FUNCTION,
            ide::CompletionKind::Parameter => lsp::CompletionItemKind::VARIABLE,
            ide::CompletionKind::Member => lsp::CompletionItemKind::FIELD,
            ide::CompletionKind::Value => lsp::CompletionItemKind::VALUE,
        }),
        detail: Some(c.detail),
        documentation: (!c.documentation.is_empty()).then_some(lsp::Documentation::MarkupContent(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: c.documentation,
        })),
        sort_text: Some(format!("{}{:05}{}", if c.preferred { 0 } else { 1 }, c.rank, c.label)),
        filter_text: Some(c.filter),
        tags: c.deprecated.then(|| vec![lsp::CompletionItemTag::DEPRECATED]),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: position::range(rope, c.replace),
            new_text: c.insert,
        })),
        label: c.label,
        ..Default::default()
    }
}

pub fn inlay_hint(rope: &Rope, h: ide::InlayHint) -> lsp::InlayHint {
    lsp::InlayHint {
        position: position::position(rope, h.at),
        label: lsp::InlayHintLabel::String(h.label),
        kind: Some(lsp::InlayHintKind::TYPE),
        text_edits: None,
        tooltip: Some(lsp::InlayHintTooltip::MarkupContent(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: h.tooltip,
        })),
        padding_left: Some(true),
        padding_right: None,
        data: None,
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be named to build the struct.
pub fn symbol(rope: &Rope, s: ide::Symbol) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: s.name,
        detail: (!s.detail.is_empty()).then_some(s.detail),
        kind: match s.kind {
            ide::SymbolKind::Definition => lsp::SymbolKind::FUNCTION,
            ide::SymbolKind::Field => lsp::SymbolKind::FIELD,
        },
        tags: None,
        deprecated: None,
        range: position::range(rope, s.span),
        selection_range: position::range(rope, s.selection),
        children: (!s.children.is_empty()).then(|| s.children.into_iter().map(|c| symbol(rope, c)).collect()),
    }
}

pub fn edit(rope: &Rope, e: &ide::Edit) -> lsp::TextEdit {
    lsp::TextEdit { range: position::range(rope, e.span), new_text: e.text.clone() }
}

/// The semantic token legend: indexes are `HighlightKind` mapped by [`token_type`].
pub fn legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend {
        token_types: vec![
            lsp::SemanticTokenType::COMMENT,
            lsp::SemanticTokenType::FUNCTION,
            lsp::SemanticTokenType::TYPE,
            lsp::SemanticTokenType::KEYWORD,
            lsp::SemanticTokenType::PARAMETER,
            lsp::SemanticTokenType::VARIABLE,
            lsp::SemanticTokenType::NUMBER,
            lsp::SemanticTokenType::OPERATOR,
        ],
        token_modifiers: vec![lsp::SemanticTokenModifier::DEFAULT_LIBRARY, lsp::SemanticTokenModifier::READONLY],
    }
}

/// (token type index, modifier bits) in [`legend`].
fn token_type(kind: ide::HighlightKind) -> (u32, u32) {
    match kind {
        ide::HighlightKind::Comment => (0, 0),
        ide::HighlightKind::Function => (1, 0),
        ide::HighlightKind::Type => (2, 1),
        ide::HighlightKind::Keyword => (3, 0),
        ide::HighlightKind::Parameter => (4, 0),
        ide::HighlightKind::Variable => (5, 0),
        ide::HighlightKind::Constant => (5, 2),
        ide::HighlightKind::Number => (6, 0),
        ide::HighlightKind::Operator => (7, 0),
    }
}

pub fn semantic_tokens(rope: &Rope, highlights: &[ide::Highlight]) -> lsp::SemanticTokens {
    let mut data = Vec::with_capacity(highlights.len());
    let (mut line, mut col) = (0u32, 0u32);
    for h in highlights {
        let start = position::position(rope, h.span.start);
        let end = position::position(rope, h.span.end);
        if end.line != start.line || end.character <= start.character {
            continue; // tokens are single-line
        }
        let (token_type, token_modifiers_bitset) = token_type(h.kind);
        let delta_line = start.line - line;
        let delta_start = if delta_line == 0 { start.character - col } else { start.character };
        data.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type,
            token_modifiers_bitset,
        });
        line = start.line;
        col = start.character;
    }
    lsp::SemanticTokens { result_id: None, data }
}
