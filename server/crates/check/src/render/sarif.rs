//! `--format sarif`: one SARIF 2.1.0 log with one run, for code-scanning services.
//! Every rule is listed in `tool.driver.rules`; regions use 1-based lines and columns in
//! UTF-16 code units (SARIF's default `columnKind`, stated explicitly).

use super::{char_span, relative_name, FileReport, LineIndex};
use crate::diagnostic::Severity;
use crate::rules::{Rule, REGISTRY};
use serde_json::{json, Value};
use std::path::Path;

pub const SCHEMA: &str = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Renders the log; file names are made relative to `base` (the working directory).
pub fn render(files: &[FileReport], base: &Path) -> String {
    let mut results = Vec::new();
    for f in files {
        let index = LineIndex::new(&f.text);
        let uri = uri_reference(&relative_name(&f.name, base));
        for d in &f.diagnostics {
            let span = char_span(&f.text, d.span);
            let start = index.position_utf16(&f.text, span.start);
            let end = index.position_utf16(&f.text, span.end);
            let mut text = d.message.to_string();
            for note in &d.notes {
                text.push('\n');
                text.push_str(note);
            }
            let mut result = json!({
                "ruleId": d.code,
                "level": level(d.severity),
                "message": { "text": text },
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": { "uri": uri },
                        "region": {
                            "startLine": start.line,
                            "startColumn": start.column,
                            "endLine": end.line,
                            "endColumn": end.column,
                        },
                    },
                }],
            });
            if let Some(i) = REGISTRY.iter().position(|r| r.code == d.code) {
                result["ruleIndex"] = json!(i);
            }
            if let Some(k) = &d.kernel {
                result["properties"] = json!({ "kernel": k });
            }
            results.push(result);
        }
    }
    let log = json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "fevlint",
                    "version": env!("CARGO_PKG_VERSION"),
                    "rules": REGISTRY.iter().map(|r| rule(r)).collect::<Vec<_>>(),
                },
            },
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    });
    let mut out = serde_json::to_string_pretty(&log).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    out.push('\n');
    out
}

fn rule(r: &Rule) -> Value {
    let full = what_it_does(r.doc);
    json!({
        "id": r.code,
        "name": r.name,
        "shortDescription": { "text": first_sentence(&full) },
        "fullDescription": { "text": full },
        // No `helpUri`: fevlint has no public home to link to (a placeholder host would
        // be a dead link in every code-scanning alert). The whole rule doc goes with the
        // log instead, as `fevlint rule CODE` prints it.
        "help": { "text": r.doc, "markdown": r.doc },
        "defaultConfiguration": { "level": level(r.severity) },
    })
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The doc's `## What it does` section, each paragraph on one line.
pub fn what_it_does(doc: &str) -> String {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut inside = false;
    let mut current = String::new();
    for line in doc.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            if inside {
                break;
            }
            inside = h == "What it does";
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim().is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line.trim());
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    paragraphs.join("\n\n")
}

/// Up to and including the first `. ` (or the whole first paragraph).
fn first_sentence(text: &str) -> &str {
    let para = text.split("\n\n").next().unwrap_or(text);
    match para.find(". ") {
        Some(i) => &para[..=i],
        None => para,
    }
}

/// A path as a relative URI reference: `/`-separated, other reserved bytes
/// percent-encoded. An absolute path becomes a `file://` URI.
fn uri_reference(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    if path.starts_with('/') {
        out.push_str("file://");
    }
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_come_from_the_doc() {
        let doc = "# X\n\n## What it does\nFinds a thing. More\nwords.\n\nSecond.\n\n## Why is this bad?\nNo.\n";
        assert_eq!(what_it_does(doc), "Finds a thing. More words.\n\nSecond.");
        assert_eq!(first_sentence(&what_it_does(doc)), "Finds a thing.");
    }

    #[test]
    fn uris_are_encoded() {
        assert_eq!(uri_reference("a b/c%d.fev"), "a%20b/c%25d.fev");
        assert_eq!(uri_reference("/tmp/x.fev"), "file:///tmp/x.fev");
        assert_eq!(uri_reference("<stdin>"), "%3Cstdin%3E");
    }
}
