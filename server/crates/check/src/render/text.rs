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
    let shown: Vec<Shown<'_>> = files.iter().map(|f| Shown::new(&f.text)).collect();
    for (f, shown) in files.iter().zip(&shown) {
        let id = db.add(f.name.as_str(), shown.text.as_ref());
        for d in &f.diagnostics {
            let span = shown.span(char_span(&f.text, d.span));
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

/// The most bytes of one line shown: a longer line (the kernel refuses anything over
/// 4094 bytes anyway) is cut there with `…`, so that a 60 MB line prints a few KiB, not
/// the line and as many carets.
const SHOWN_LINE_MAX: usize = 8192;

/// The text as shown, with over-long lines cut, and how offsets map into it.
struct Shown<'a> {
    text: std::borrow::Cow<'a, str>,
    /// For each cut line: (its start, where the cut is, the cut's offset in the shown
    /// text, the line's end without its newline), in order.
    cuts: Vec<(usize, usize, usize, usize)>,
}

impl<'a> Shown<'a> {
    fn new(text: &'a str) -> Shown<'a> {
        if text.len() <= SHOWN_LINE_MAX || text.split('\n').all(|l| l.len() <= SHOWN_LINE_MAX) {
            return Shown { text: text.into(), cuts: Vec::new() };
        }
        let mut out = String::new();
        let mut cuts = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let body = line.strip_suffix('\n').unwrap_or(line);
            if body.len() > SHOWN_LINE_MAX {
                let cut = start + fevlint_syntax::floor_char_boundary(body, SHOWN_LINE_MAX);
                out.push_str(&text[start..cut]);
                cuts.push((start, cut, out.len(), start + body.len()));
                out.push('…');
                out.push_str(&line[body.len()..]);
            } else {
                out.push_str(line);
            }
            start += line.len();
        }
        Shown { text: out.into(), cuts }
    }

    /// Where `offset` of the original text is in the shown one: in a cut part, just
    /// after the `…`.
    fn offset(&self, offset: usize) -> usize {
        let mut shift: isize = 0;
        for &(_, cut, at, end) in &self.cuts {
            if offset <= cut {
                break;
            }
            if offset <= end {
                return at + '…'.len_utf8();
            }
            // The cut part is gone and `…` stands for it.
            shift += (end - cut) as isize - '…'.len_utf8() as isize;
        }
        offset.saturating_add_signed(-shift)
    }

    fn span(&self, span: fevlint_syntax::Span) -> fevlint_syntax::Span {
        if self.cuts.is_empty() {
            return span;
        }
        fevlint_syntax::Span::new(self.offset(span.start), self.offset(span.end))
    }
}
