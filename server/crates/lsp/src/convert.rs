//! Conversions between `ide`/`diagnostic` values (byte spans) and LSP types.

use super::position;
use fevlint_check::diagnostic::{Diagnostic, Severity};
use std::collections::HashMap;
use std::path::PathBuf;
use tower_lsp_server::ls_types as lsp;

/// Where the rule docs live, for `codeDescription`: a `file:` link to a rule's page in a
/// `docs/rules` folder on this machine, or no link at all. fevlint has no public web home,
/// so there is no URL to fall back to (a placeholder host would be a dead link); without
/// a local copy the client shows the code alone, and `fevlint rule CODE` prints the page.
#[derive(Clone, Debug, Default)]
pub struct RuleDocs {
    /// A `docs/rules` folder of a fevlint checkout, when one was found.
    pub dir: Option<PathBuf>,
    /// Each rule's link, decided once: a publish of ten thousand diagnostics must not
    /// ask the file system ten thousand times.
    hrefs: HashMap<&'static str, Option<lsp::Uri>>,
}

/// Where the Debian package (`scripts/build-deb.sh`) installs the rule pages.
pub const INSTALLED_RULES: &str = "/usr/share/doc/fevlint/rules";

impl RuleDocs {
    /// The first `docs/rules` among the workspace roots, then the checkout this binary
    /// was built from, then the installed package's copy.
    pub fn find(roots: &[PathBuf]) -> RuleDocs {
        let built = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../docs/rules");
        let dir = roots
            .iter()
            .map(|r| r.join("docs/rules"))
            .chain([built, PathBuf::from(INSTALLED_RULES)])
            .find(|d| d.join("README.md").is_file() || d.join("S001.md").is_file())
            .and_then(|d| d.canonicalize().ok());
        let mut docs = RuleDocs { dir, hrefs: HashMap::new() };
        docs.hrefs = fevlint_check::rules::REGISTRY.iter().map(|r| (r.code, docs.locate(r.code))).collect();
        docs
    }

    pub fn href(&self, code: &str) -> Option<lsp::Uri> {
        match self.hrefs.get(code) {
            Some(h) => h.clone(),
            None => self.locate(code),
        }
    }

    fn locate(&self, code: &str) -> Option<lsp::Uri> {
        let file = self.dir.as_ref()?.join(format!("{code}.md"));
        file.is_file().then(|| lsp::Uri::from_file_path(&file)).flatten()
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

/// The whole `publishDiagnostics` notification for `diagnostics`, as a JSON body: the
/// same JSON as [`diagnostic`] serialised through the protocol types, written straight
/// from the findings. A publish of ten thousand findings then costs their bytes, not
/// ten thousand trees of strings built and dropped.
pub fn publish_body<'d>(
    at: &position::Positions<'_>,
    uri: &lsp::Uri,
    version: Option<i32>,
    diagnostics: impl IntoIterator<Item = &'d Diagnostic>,
    docs: &RuleDocs,
    related_information: bool,
    label_kernel: bool,
) -> serde_json::Result<Vec<u8>> {
    let mut items = Vec::with_capacity(1 << 12);
    items.push(b'[');
    let mut w = Writer::new(uri, docs, related_information, label_kernel);
    for (i, d) in diagnostics.into_iter().enumerate() {
        if i > 0 {
            items.push(b',');
        }
        w.write(&mut items, at.range(d.span), d, &mut |out, line| itoa(out, line))?;
    }
    items.push(b']');
    publish_frame_body(uri, version, &items)
}

/// A `publishDiagnostics` body around `items`, the JSON array of the diagnostics.
pub fn publish_frame_body(uri: &lsp::Uri, version: Option<i32>, items: &[u8]) -> serde_json::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(items.len() + 256);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#);
    serde_json::to_writer(&mut out, uri.as_str())?;
    out.extend_from_slice(br#","diagnostics":"#);
    out.extend_from_slice(items);
    if let Some(v) = version {
        itoa_str(&mut out, r#","version":"#, i64::from(v));
    }
    out.extend_from_slice(b"}}");
    Ok(out)
}

/// A whole `publishDiagnostics` frame, header and body, around the JSON array of the
/// diagnostics that `items` writes, `len` bytes long: one allocation at its size (a
/// publish of thousands of findings is megabytes, and copies and growth were most of its
/// cost and, in the allocator's free lists, of the server's memory).
pub fn publish_frame(
    uri: &lsp::Uri,
    version: Option<i32>,
    len: usize,
    items: impl FnOnce(&mut Vec<u8>),
) -> serde_json::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(br#"{"jsonrpc":"2.0","method":"textDocument/publishDiagnostics","params":{"uri":"#);
    serde_json::to_writer(&mut head, uri.as_str())?;
    head.extend_from_slice(br#","diagnostics":"#);
    let mut tail = Vec::new();
    if let Some(v) = version {
        itoa_str(&mut tail, r#","version":"#, i64::from(v));
    }
    tail.extend_from_slice(b"}}");
    let header = format!("Content-Length: {}\r\n\r\n", head.len() + len + tail.len());
    let mut out = Vec::with_capacity(header.len() + head.len() + len + tail.len());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(&head);
    items(&mut out);
    out.extend_from_slice(&tail);
    if out.len() != header.len() + head.len() + len + tail.len() {
        // `len` was wrong: the header must still count the body.
        return Ok(crate::transport::frame(&out[header.len()..]));
    }
    Ok(out)
}

/// Writes a number in decimal.
pub fn itoa(out: &mut Vec<u8>, n: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    let mut n = n;
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn itoa_str(out: &mut Vec<u8>, before: &str, n: i64) {
    use std::io::Write;
    let _ = write!(out, "{before}{n}");
}

/// Writes diagnostics as the protocol's JSON; line numbers go through a callback, so that
/// a line's findings can be kept encoded with their line left open (see `encoded`).
pub struct Writer<'a> {
    uri: &'a lsp::Uri,
    docs: &'a RuleDocs,
    related_information: bool,
    label_kernel: bool,
    message: String,
    hrefs: HashMap<&'static str, Option<lsp::Uri>>,
}

impl<'a> Writer<'a> {
    pub fn new(uri: &'a lsp::Uri, docs: &'a RuleDocs, related_information: bool, label_kernel: bool) -> Writer<'a> {
        Writer { uri, docs, related_information, label_kernel, message: String::new(), hrefs: HashMap::new() }
    }

    /// Whether notes go out as `relatedInformation` (each with a range of its own).
    pub fn related_information(&self) -> bool {
        self.related_information
    }

    /// One diagnostic at `r`; `line` writes each line number of a range.
    pub fn write(
        &mut self,
        out: &mut Vec<u8>,
        r: lsp::Range,
        d: &Diagnostic,
        line: &mut dyn FnMut(&mut Vec<u8>, u32),
    ) -> serde_json::Result<()> {
        self.write_as(out, r, d, d.severity, line)
    }

    /// [`Writer::write`] at the severity `severity` (what the settings made of the finding's).
    pub fn write_as(
        &mut self,
        out: &mut Vec<u8>,
        r: lsp::Range,
        d: &Diagnostic,
        severity: Severity,
        line: &mut dyn FnMut(&mut Vec<u8>, u32),
    ) -> serde_json::Result<()> {
        let range = |out: &mut Vec<u8>, line: &mut dyn FnMut(&mut Vec<u8>, u32)| {
            out.extend_from_slice(br#"{"start":{"line":"#);
            line(out, r.start.line);
            out.extend_from_slice(br#","character":"#);
            itoa(out, r.start.character);
            out.extend_from_slice(br#"},"end":{"line":"#);
            line(out, r.end.line);
            out.extend_from_slice(br#","character":"#);
            itoa(out, r.end.character);
            out.extend_from_slice(b"}}");
        };
        out.extend_from_slice(br#"{"range":"#);
        range(out, line);
        out.extend_from_slice(br#","severity":"#);
        itoa(out, severity_number(severity));
        out.extend_from_slice(br#","code":"#);
        serde_json::to_writer(&mut *out, d.code)?;
        let docs = self.docs;
        if let Some(href) = self.hrefs.entry(d.code).or_insert_with(|| docs.href(d.code)) {
            out.extend_from_slice(br#","codeDescription":{"href":"#);
            serde_json::to_writer(&mut *out, href.as_str())?;
            out.push(b'}');
        }
        out.extend_from_slice(br#","source":"fevlint","message":"#);
        let message = &mut self.message;
        message.clear();
        message.push_str(&d.message);
        if let Some(k) = d.kernel.as_deref().filter(|k| self.label_kernel && !d.message.contains(k)) {
            message.push_str(" (on ");
            message.push_str(k);
            message.push(')');
        }
        let related = self.related_information && !d.notes.is_empty();
        if !related {
            for n in &d.notes {
                message.push('\n');
                message.push_str(n);
            }
        }
        serde_json::to_writer(&mut *out, &*message)?;
        if related {
            out.extend_from_slice(br#","relatedInformation":["#);
            for (j, n) in d.notes.iter().enumerate() {
                if j > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(br#"{"location":{"uri":"#);
                serde_json::to_writer(&mut *out, self.uri.as_str())?;
                out.extend_from_slice(br#","range":"#);
                range(out, line);
                out.extend_from_slice(br#"},"message":"#);
                serde_json::to_writer(&mut *out, &**n)?;
                out.push(b'}');
            }
            out.push(b']');
        }
        out.push(b'}');
        Ok(())
    }
}

fn severity_number(s: Severity) -> u32 {
    match s {
        Severity::Error => 1,
        Severity::Warning => 2,
        Severity::Info => 3,
    }
}

pub fn hover(at: position::Text<'_>, h: fevlint_ide::Hover) -> lsp::Hover {
    lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value: h.markdown }),
        range: Some(at.range(h.span)),
    }
}

pub fn completion(at: position::Text<'_>, c: fevlint_ide::Completion) -> lsp::CompletionItem {
    lsp::CompletionItem {
        kind: Some(match c.kind {
            fevlint_ide::CompletionKind::Type => lsp::CompletionItemKind::TYPE_PARAMETER,
            fevlint_ide::CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
            fevlint_ide::CompletionKind::Function => lsp::CompletionItemKind::FUNCTION,
            fevlint_ide::CompletionKind::Parameter => lsp::CompletionItemKind::VARIABLE,
            fevlint_ide::CompletionKind::Member => lsp::CompletionItemKind::FIELD,
            fevlint_ide::CompletionKind::Value => lsp::CompletionItemKind::VALUE,
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
            range: at.range(c.replace),
            new_text: c.insert,
        })),
        label: c.label,
        ..Default::default()
    }
}

pub fn inlay_hint(at: position::Text<'_>, h: fevlint_ide::InlayHint) -> lsp::InlayHint {
    lsp::InlayHint {
        position: at.position(h.at),
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
pub fn symbol(at: position::Text<'_>, s: fevlint_ide::Symbol) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: s.name,
        detail: (!s.detail.is_empty()).then_some(s.detail),
        kind: match s.kind {
            fevlint_ide::SymbolKind::Definition => lsp::SymbolKind::FUNCTION,
            fevlint_ide::SymbolKind::Field => lsp::SymbolKind::FIELD,
        },
        tags: None,
        deprecated: None,
        range: at.range(s.span),
        selection_range: at.range(s.selection),
        children: (!s.children.is_empty()).then(|| s.children.into_iter().map(|c| symbol(at, c)).collect()),
    }
}

pub fn edit(at: position::Text<'_>, e: &fevlint_ide::Edit) -> lsp::TextEdit {
    lsp::TextEdit { range: at.range(e.span), new_text: e.text.clone() }
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
pub fn token_type(kind: fevlint_ide::HighlightKind) -> (u32, u32) {
    match kind {
        fevlint_ide::HighlightKind::Comment => (0, 0),
        fevlint_ide::HighlightKind::Function => (1, 0),
        fevlint_ide::HighlightKind::Type => (2, 1),
        fevlint_ide::HighlightKind::Keyword => (3, 0),
        fevlint_ide::HighlightKind::Parameter => (4, 0),
        fevlint_ide::HighlightKind::Variable => (5, 0),
        fevlint_ide::HighlightKind::Constant => (5, 2),
        fevlint_ide::HighlightKind::Number => (6, 0),
        fevlint_ide::HighlightKind::Operator => (7, 0),
    }
}

pub fn semantic_tokens(at: position::Text<'_>, highlights: &[fevlint_ide::Highlight]) -> lsp::SemanticTokens {
    let mut data = Vec::with_capacity(highlights.len());
    let (mut line, mut col) = (0u32, 0u32);
    for h in highlights {
        let start = at.position(h.span.start);
        let end = at.position(h.span.end);
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

#[cfg(test)]
mod tests {
    use super::*;
    use fevlint_syntax::Span;
    use ropey::Rope;

    /// The body written straight from the findings is the JSON the protocol types give,
    /// with notes as related information or in the message, kernels labelled or not.
    #[test]
    fn publish_body_is_what_the_protocol_types_serialize() {
        let text = "vfs_read(x64 file)\n# é \"quoted\" 😀\nvfs_read(u32 \\t\\\\ x)\n";
        let rope = Rope::from_str(text);
        let lines = fevlint_syntax::Parser::new().lines(text, fevlint_syntax::Target::default());
        let at = position::Positions::new(position::Text::new(&rope, position::Encoding::Utf16), text, &lines);
        use fevlint_check::rules::{K201, N101, S001, T401};
        let mut labelled =
            Diagnostic::new(&K201, Span::new(0, 8), "`vfs_read` is \"gone\"\ttab").note("help: é 😀").note("two");
        labelled.kernel = Some("6.12.117+deb12-amd64".into());
        let mut named = Diagnostic::new(&T401, Span::new(44, 47), "on 6.1.0-47-amd64 only");
        named.kernel = Some("6.1.0-47-amd64".into());
        let found = vec![
            Diagnostic::new(&N101, Span::new(39, 47), "`vfs_read` already has an event (line 1)")
                .note("the kernel names events after the function")
                .note("help: merge"),
            labelled,
            named,
            Diagnostic::new(&S001, Span::new(text.len(), text.len() + 9), "past the end"),
            Diagnostic::new(&S001, Span::new(22, 21), "reversed, inside `é`"),
        ];
        let uri: lsp::Uri = "file:///tmp/a%20b/%C3%A9.fev".parse().expect("uri");
        for docs in [RuleDocs::default(), RuleDocs::find(&[])] {
            for related in [false, true] {
                for label in [false, true] {
                    let body = publish_body(&at, &uri, Some(7), &found, &docs, related, label).expect("body");
                    let got: serde_json::Value = serde_json::from_slice(&body).expect("json");
                    let params = lsp::PublishDiagnosticsParams {
                        uri: uri.clone(),
                        diagnostics: found.iter().map(|d| diagnostic(&at, &uri, d, &docs, related, label)).collect(),
                        version: Some(7),
                    };
                    let want = serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                        "params": serde_json::to_value(params).expect("value")});
                    assert_eq!(got, want, "related {related}, label {label}");
                }
            }
        }
        // Without a local copy of the rule pages there is no link (no placeholder host).
        let body = publish_body(&at, &uri, None, &found, &RuleDocs::default(), false, false).expect("body");
        assert!(!String::from_utf8_lossy(&body).contains("codeDescription"));
        let with_docs = publish_body(&at, &uri, None, &found, &RuleDocs::find(&[]), false, false).expect("body");
        assert!(String::from_utf8_lossy(&with_docs).contains(r#""codeDescription":{"href":"file:///"#));
        // A whole frame allocated at its size is the body framed; a wrong size is corrected.
        let items = br#"[{"range":1,"message":"\u00e9"}]"#;
        for (version, len) in [(Some(3), items.len()), (None, items.len()), (Some(-1), items.len() + 5), (None, 0)] {
            let frame = publish_frame(&uri, version, len, |out| out.extend_from_slice(items)).expect("frame");
            let body = publish_frame_body(&uri, version, items).expect("body");
            assert_eq!(frame, crate::transport::frame(&body), "{version:?} {len}");
        }
        let empty = publish_body(&at, &uri, None, &[], &RuleDocs::default(), false, false).expect("body");
        let empty: serde_json::Value = serde_json::from_slice(&empty).expect("json");
        assert_eq!(empty["params"], serde_json::json!({"uri": uri.as_str(), "diagnostics": []}));
    }
}
