//! Formatting: each definition the kernel accepts becomes the canonical form the kernel
//! echoes back (`show_func_event()`); comments, blank lines and rejected lines stay.

use super::Edit;
use fevlint_syntax::lex::is_space;
use fevlint_syntax::machine::echo;
use fevlint_syntax::{Parse, Parser, Span};

/// Edits turning every accepted definition into its canonical echo.
pub fn format(parse: &Parse, text: &str) -> Vec<Edit> {
    let mut out = Vec::new();
    let mut checker = None::<Parser>;
    for line in parse.lines.iter() {
        let Some(parsed) = &line.parsed else { continue };
        if parsed.rejection.is_some() || line.nul.is_some() || line.too_long() {
            continue;
        }
        let code = line.line.code;
        let bytes = text.as_bytes();
        let mut end = code.end;
        while end > code.start && is_space(bytes[end - 1]) {
            end -= 1;
        }
        let span = Span::new(line.line.span.start, end);
        let canonical = echo(parsed, parse.target, true);
        if canonical.is_empty() || span.text(text) == canonical {
            continue;
        }
        // The echo is what the kernel shows, not always what it accepts back (an offset
        // over `INT_MAX` echoes as a negative number): only offer a form that parses to
        // the same fields.
        let again = checker.get_or_insert_with(Parser::new).lines(&canonical, parse.target);
        let same = again
            .first()
            .and_then(|l| l.parsed.as_ref())
            .is_some_and(|p| p.rejection.is_none() && p.slots == parsed.slots && p.fields.len() == parsed.fields.len());
        if same {
            out.push(Edit { span, text: canonical });
        }
    }
    out
}
