//! Fixes for diagnostics: S003 (drop the ignored offset, or move it into the address)
//! and, for every rule, a suppression comment above the line.

use crate::{Edit, Fix};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_kernel::Kernel;
use fevlint_syntax::machine::{AbsValue, Source};
use fevlint_syntax::{Parse, Span};

/// Fixes for the diagnostics touching `range`.
pub fn fixes(parse: &Parse, text: &str, diagnostics: &[Diagnostic], range: Span) -> Vec<Fix> {
    fixes_with(parse, text, diagnostics, range, &[])
}

/// [`fixes`] plus the fixes kernel diagnostics allow (T406, K201, T404).
pub fn fixes_with(parse: &Parse, text: &str, diagnostics: &[Diagnostic], range: Span, kernels: &[&Kernel]) -> Vec<Fix> {
    let mut out = Vec::new();
    for (i, d) in diagnostics.iter().enumerate() {
        let touches = d.span.start <= range.end && range.start <= d.span.end;
        if !touches {
            continue;
        }
        if d.is(&fevlint_check::rules::S003) {
            s003(parse, text, d, i, &mut out);
        }
        out.extend(crate::kernel_aware::fixes(parse, text, d, i, kernels));
        if let Some(line) = parse.line_at(d.span.start) {
            let start = line.line.span.start;
            let indent: String =
                text[start..line.line.span.end].chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            out.push(Fix {
                title: format!("Suppress {} on this line", d.code),
                diagnostic: i,
                edits: vec![Edit {
                    span: Span::new(start, start),
                    text: format!("{indent}# fevlint: ignore[{}]\n", d.code),
                }],
                preferred: false,
            });
        }
    }
    out
}

fn s003(parse: &Parse, text: &str, d: &Diagnostic, index: usize, out: &mut Vec<Fix>) {
    let written = d.span.text(text);
    out.push(Fix {
        title: format!("Remove `{written}`, which the kernel ignores"),
        diagnostic: index,
        edits: vec![Edit { span: d.span, text: String::new() }],
        preferred: true,
    });
    // What the author probably meant: the offset added to the address.
    let Some(parsed) = parse.line_at(d.span.start).and_then(|l| l.parsed.as_ref()) else { return };
    for f in &parsed.fields {
        let Source::Absolute { value: AbsValue::Address(addr), value_span, ignored } = &f.source else { continue };
        if !ignored.iter().any(|r| d.span.contains(r.span().start)) {
            continue;
        }
        let sum = ignored
            .iter()
            .map(|r| match r {
                fevlint_syntax::machine::Redirect::Plus { value, .. } => *value,
                fevlint_syntax::machine::Redirect::Index { .. } => 0,
            })
            .fold(0u64, u64::wrapping_add);
        let Some(new) = addr.checked_add(sum) else { continue };
        out.push(Fix {
            title: format!("Move `{written}` into the address ({new:#x})"),
            diagnostic: index,
            edits: vec![
                Edit { span: d.span, text: String::new() },
                Edit { span: *value_span, text: format!("{new:#x}") },
            ],
            preferred: false,
        });
    }
}
