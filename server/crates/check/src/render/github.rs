//! `--format github`: GitHub Actions workflow commands (`::error file=…::message`), one
//! per diagnostic, which the runner turns into annotations on the changed lines.

use super::{char_span, relative_name, FileReport, LineIndex};
use crate::diagnostic::Severity;
use std::fmt::Write as _;
use std::path::Path;

/// Renders one command per diagnostic; file names are made relative to `base`.
pub fn render(files: &[FileReport], base: &Path) -> String {
    let mut out = String::new();
    for f in files {
        let index = LineIndex::new(&f.text);
        let file = escape_property(&relative_name(&f.name, base));
        for d in &f.diagnostics {
            let span = char_span(&f.text, d.span);
            let start = index.position(&f.text, span.start);
            let end = index.position(&f.text, span.end);
            let command = match d.severity {
                Severity::Error => "error",
                Severity::Warning => "warning",
                Severity::Info => "notice",
            };
            let mut message = d.message.to_string();
            if let Some(k) = &d.kernel {
                let _ = write!(message, " (on {k})");
            }
            for note in &d.notes {
                message.push('\n');
                message.push_str(note);
            }
            let _ = writeln!(
                out,
                "::{command} file={file},line={},col={},endLine={},endColumn={},title={}::{}",
                start.line,
                start.column,
                end.line,
                end.column,
                escape_property(&format!("{} {}", d.code, d.name)),
                escape_data(&message),
            );
        }
    }
    out
}

/// The message part: `%`, CR and LF are encoded (as `@actions/core` does).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// A property value: as data, plus `:` and `,`, which separate properties.
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_actions_toolkit() {
        assert_eq!(escape_data("50% a:b,c\r\nd"), "50%25 a:b,c%0D%0Ad");
        assert_eq!(escape_property("50% a:b,c\r\nd"), "50%25 a%3Ab%2Cc%0D%0Ad");
    }
}
