//! One analysis entry point shared by the CLI and the language server: bytes or text in,
//! diagnostics out. Never fails: everything wrong with the input is a diagnostic.

use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{self, Context};
use crate::syntax::{Parser, Span, Target};

/// Checks one script given as raw bytes. Invalid UTF-8 is replaced (and reported), so the
/// returned text is what the spans index.
pub fn check_bytes(parser: &mut Parser, bytes: Vec<u8>, target: Target) -> (String, Vec<Diagnostic>) {
    let (text, bad_utf8) = match String::from_utf8(bytes) {
        Ok(text) => (text, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(at))
        }
    };
    let mut diagnostics = check_text(parser, &text, target);
    if let Some(at) = bad_utf8 {
        let end = crate::render::char_span(&text, Span::new(at, at + 1)).end;
        diagnostics.insert(
            0,
            Diagnostic {
                code: "S000",
                name: "not-utf8",
                severity: Severity::Warning,
                span: Span::new(at, end),
                message: format!("the file is not valid UTF-8 from byte {at}"),
                notes: vec!["fevlint shows invalid bytes as U+FFFD; the kernel would see the raw bytes".to_owned()],
                kernel: None,
            },
        );
    }
    (text, diagnostics)
}

/// Checks one script.
pub fn check_text(parser: &mut Parser, text: &str, target: Target) -> Vec<Diagnostic> {
    let lines = parser.lines(text, target);
    rules::check(&Context { text, lines: &lines, target })
}

/// Checks a script already parsed (the language server keeps its `Parse` between
/// edits); the same diagnostics as [`check_text`] on `text`.
pub fn check_parse(parse: &crate::syntax::Parse, text: &str) -> Vec<Diagnostic> {
    rules::check(&Context { text, lines: &parse.lines, target: parse.target })
}

/// Definitions (non-blank, non-comment lines) in a text.
pub fn count_definitions(text: &str) -> usize {
    crate::syntax::lex::lines(text)
        .filter(|l| l.code.text(text).bytes().any(|b| !crate::syntax::lex::is_space(b)))
        .count()
}
