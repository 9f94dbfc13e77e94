//! `--format json`: one stable document, `{"version": 1, "diagnostics": [...]}`, documented
//! in `docs/json-output.md` with its JSON Schema (`docs/schemas/check-json-v1.schema.json`).
//! `version` changes only when a field is removed or changes meaning; new fields may be
//! added within a version.

use super::{char_span, FileReport, LineIndex};
use serde::Serialize;

/// The version of the `--format json` document.
pub const VERSION: u32 = 1;

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    diagnostics: Vec<JsonDiagnostic<'a>>,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'a str,
    name: &'a str,
    severity: &'a str,
    file: &'a str,
    line: usize,
    column: usize,
    end_line: usize,
    end_column: usize,
    message: &'a str,
    notes: &'a [String],
    kernel: Option<&'a str>,
}

pub fn render(files: &[FileReport]) -> String {
    let mut diagnostics = Vec::new();
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let span = char_span(&f.text, d.span);
            let start = index.position(&f.text, span.start);
            let end = index.position(&f.text, span.end);
            diagnostics.push(JsonDiagnostic {
                code: d.code,
                name: d.name,
                severity: d.severity.as_str(),
                file: &f.name,
                line: start.line,
                column: start.column,
                end_line: end.line,
                end_column: end.column,
                message: &d.message,
                notes: &d.notes,
                kernel: d.kernel.as_deref(),
            });
        }
    }
    let mut out = serde_json::to_string_pretty(&Document { version: VERSION, diagnostics })
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    out.push('\n');
    out
}
