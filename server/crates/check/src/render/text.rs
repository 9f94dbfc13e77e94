//! Human output through codespan-reporting: code, message, the line, carets, notes.

use super::{char_span, FileReport};
use crate::diagnostic::Severity;
use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label, Severity as CsSeverity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::Buffer};

/// Renders all files' diagnostics; `color` adds ANSI colours.
pub fn render(files: &[FileReport], color: bool) -> String {
    let mut db = SimpleFiles::new();
    let mut buffer = if color { Buffer::ansi() } else { Buffer::no_color() };
    let config = term::Config::default();
    for f in files {
        let id = db.add(f.name.as_str(), f.text.as_str());
        for d in &f.diagnostics {
            let span = char_span(&f.text, d.span);
            let severity = match d.severity {
                Severity::Error => CsSeverity::Error,
                Severity::Warning => CsSeverity::Warning,
                Severity::Info => CsSeverity::Note,
            };
            let mut label = Label::primary(id, span.start..span.end);
            if let Some(k) = &d.kernel {
                label = label.with_message(format!("on {k}"));
            }
            let diagnostic = CsDiagnostic::new(severity)
                .with_code(format!("{}[{}]", d.code, d.name))
                .with_message(&d.message)
                .with_labels(vec![label])
                .with_notes(d.notes.iter().map(|n| n.to_string()).collect());
            if let Err(e) = term::emit(&mut buffer, &config, &db, &diagnostic) {
                return format!("error: cannot render diagnostics for {}: {e}\n", f.name);
            }
        }
    }
    String::from_utf8_lossy(buffer.as_slice()).into_owned()
}
