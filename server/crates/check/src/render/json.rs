//! `--format json`: one stable document, `{"version": 1, "diagnostics": [...]}`, documented
//! in `docs/json-output.md` with its JSON Schema (`docs/schemas/check-json-v1.schema.json`).
//! `version` changes only when a field is removed or changes meaning; new fields may be
//! added within a version.

use super::{char_span, FileReport, LineIndex};
use serde::Serialize;

/// The version of the `--format json` document.
pub const VERSION: u32 = 1;

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
    notes: &'a [std::sync::Arc<str>],
    kernel: Option<&'a str>,
}

pub fn render(files: &[FileReport]) -> String {
    let mut out = Vec::new();
    // Writing into memory fails only with a value serde cannot encode, which these are not.
    let _ = write(&mut out, files);
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes the document diagnostic by diagnostic (a run with 300,000 findings holds no
/// copy of its 150 MB of output), the same bytes as pretty-printing it whole.
pub fn write(out: &mut dyn std::io::Write, files: &[FileReport]) -> std::io::Result<()> {
    write!(out, "{{\n  \"version\": {VERSION},\n  \"diagnostics\": [")?;
    let mut first = true;
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let span = char_span(&f.text, d.span);
            let start = index.position(&f.text, span.start);
            let end = index.position(&f.text, span.end);
            let json = JsonDiagnostic {
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
            };
            let text = serde_json::to_string_pretty(&json).map_err(std::io::Error::other)?;
            out.write_all(if first { b"\n" } else { b",\n" })?;
            first = false;
            for (i, line) in text.lines().enumerate() {
                if i > 0 {
                    out.write_all(b"\n")?;
                }
                write!(out, "    {line}")?;
            }
        }
    }
    out.write_all(if first { b"]\n}\n" } else { b"\n  ]\n}\n" })
}
