//! `--format json`: one stable document, `{"version": 1, "diagnostics": [...]}`, documented
//! in `docs/json-output.md` with its JSON Schema (`docs/schemas/check-json-v1.schema.json`).
//! `version` changes only when a field is removed or changes meaning; new fields may be
//! added within a version.

use super::{char_span, FileReport, LineIndex};

/// The version of the `--format json` document.
pub const VERSION: u32 = 1;

pub fn render(files: &[FileReport]) -> String {
    let mut out = Vec::new();
    // Writing into memory does not fail.
    let _ = write(&mut out, files);
    String::from_utf8_lossy(&out).into_owned()
}

/// Writes the document diagnostic by diagnostic (a run with 300,000 findings holds no
/// copy of its 150 MB of output): the bytes `serde_json::to_string_pretty` gives for the
/// whole document, written directly (each diagnostic is an object of the same keys in the
/// same order; `tests::same_bytes_as_serde_json` holds the two together).
pub fn write(out: &mut dyn std::io::Write, files: &[FileReport]) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let _ = std::io::Write::write_fmt(&mut buf, format_args!("{{\n  \"version\": {VERSION},\n  \"diagnostics\": ["));
    let mut first = true;
    for f in files {
        let index = LineIndex::new(&f.text);
        for d in &f.diagnostics {
            let span = char_span(&f.text, d.span);
            let start = index.position(&f.text, span.start);
            let end = index.position(&f.text, span.end);
            buf.extend_from_slice(if first { b"\n    {" } else { b",\n    {" });
            first = false;
            string_field(&mut buf, "code", d.code);
            buf.push(b',');
            string_field(&mut buf, "name", d.name);
            buf.push(b',');
            string_field(&mut buf, "severity", d.severity.as_str());
            buf.push(b',');
            string_field(&mut buf, "file", &f.name);
            buf.push(b',');
            number_field(&mut buf, "line", start.line);
            buf.push(b',');
            number_field(&mut buf, "column", start.column);
            buf.push(b',');
            number_field(&mut buf, "end_line", end.line);
            buf.push(b',');
            number_field(&mut buf, "end_column", end.column);
            buf.push(b',');
            string_field(&mut buf, "message", &d.message);
            buf.push(b',');
            key(&mut buf, "notes");
            if d.notes.is_empty() {
                buf.extend_from_slice(b"[]");
            } else {
                buf.push(b'[');
                for (i, n) in d.notes.iter().enumerate() {
                    buf.extend_from_slice(if i == 0 { b"\n        " } else { b",\n        " });
                    string(&mut buf, n);
                }
                buf.extend_from_slice(b"\n      ]");
            }
            buf.push(b',');
            key(&mut buf, "kernel");
            match d.kernel.as_deref() {
                Some(k) => string(&mut buf, k),
                None => buf.extend_from_slice(b"null"),
            }
            buf.extend_from_slice(b"\n    }");
            if buf.len() >= 8192 {
                out.write_all(&buf)?;
                buf.clear();
            }
        }
    }
    buf.extend_from_slice(if first { b"]\n}\n" } else { b"\n  ]\n}\n" });
    out.write_all(&buf)
}

/// A key of a diagnostic object, on its own line (pretty-printed, inside the array).
fn key(buf: &mut Vec<u8>, name: &str) {
    buf.extend_from_slice(b"\n      \"");
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b"\": ");
}

fn string_field(buf: &mut Vec<u8>, name: &str, value: &str) {
    key(buf, name);
    string(buf, value);
}

fn number_field(buf: &mut Vec<u8>, name: &str, value: usize) {
    key(buf, name);
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut v = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
}

/// A JSON string as serde_json writes it: `"` and `\\` escaped, the control characters
/// below U+0020 as `\b \t \n \f \r` or `\u00XX` (lowercase hex), everything else as is.
fn string(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    let bytes = s.as_bytes();
    let mut from = 0;
    let mut i = 0;
    while i < bytes.len() {
        // Eight bytes at a time while none of them needs an escape (most text).
        if let Some(word) = bytes.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            if !any_escape(u64::from_le_bytes(w)) {
                i += 8;
                continue;
            }
        }
        let end = (i + 8).min(bytes.len());
        for (at, &b) in bytes[i..end].iter().enumerate() {
            if let Some(e) = escape(b) {
                buf.extend_from_slice(&bytes[from..i + at]);
                buf.extend_from_slice(e.as_slice());
                from = i + at + 1;
            }
        }
        i = end;
    }
    buf.extend_from_slice(&bytes[from..]);
    buf.push(b'"');
}

/// Whether any byte of `w` is below 0x20, `"` or `\\`.
fn any_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    below(w, 0x20) | below(w ^ (ONES * u64::from(b'"')), 1) | below(w ^ (ONES * u64::from(b'\\')), 1) != 0
}

/// The escape of one byte, if it needs one.
fn escape(b: u8) -> Option<Escape> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = |c: u8| Some(Escape { bytes: [b'\\', c, 0, 0, 0, 0], len: 2 });
    match b {
        b'"' => short(b'"'),
        b'\\' => short(b'\\'),
        0x08 => short(b'b'),
        0x09 => short(b't'),
        0x0a => short(b'n'),
        0x0c => short(b'f'),
        0x0d => short(b'r'),
        0x00..=0x1f => Some(Escape {
            bytes: [b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]],
            len: 6,
        }),
        _ => None,
    }
}

struct Escape {
    bytes: [u8; 6],
    len: usize,
}

impl Escape {
    fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Diagnostic;
    use fevlint_syntax::Span;
    use serde::Serialize;

    /// The document as `write` wrote it before it wrote bytes directly: each diagnostic
    /// pretty-printed by serde_json, indented into the array.
    fn by_serde(files: &[FileReport]) -> String {
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
        let mut out = format!("{{\n  \"version\": {VERSION},\n  \"diagnostics\": [");
        let mut first = true;
        for f in files {
            let index = LineIndex::new(&f.text);
            for d in &f.diagnostics {
                let span = char_span(&f.text, d.span);
                let (start, end) = (index.position(&f.text, span.start), index.position(&f.text, span.end));
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
                out.push_str(if first { "\n" } else { ",\n" });
                first = false;
                let text = serde_json::to_string_pretty(&json).expect("serializable");
                let lines: Vec<String> = text.lines().map(|l| format!("    {l}")).collect();
                out.push_str(&lines.join("\n"));
            }
        }
        out.push_str(if first { "]\n}\n" } else { "\n  ]\n}\n" });
        out
    }

    #[test]
    fn strings_as_serde_json() {
        // Each byte that needs an escape at each place of an 8-byte word, beside text
        // beyond ASCII and DEL.
        for special in
            ["\"", "\\", "\u{0}", "\u{8}", "\t", "\n", "\u{b}", "\u{c}", "\r", "\u{1f}", "\u{7f}", "\u{e9}", " "]
        {
            for before in 0..20 {
                for after in [0, 1, 7, 8, 9] {
                    let s = format!("{}{special}{}", "a".repeat(before), "\u{2028}".repeat(after));
                    let mut buf = Vec::new();
                    string(&mut buf, &s);
                    assert_eq!(
                        String::from_utf8(buf).expect("UTF-8"),
                        serde_json::to_string(&s).expect("serializable"),
                        "{s:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn same_bytes_as_serde_json() {
        // Every byte below 0x80 in a message, a note, a file name and a kernel name, and
        // text beyond ASCII (columns count characters).
        let ascii: String = (0u8..0x80).map(char::from).collect();
        let text = "vfs_read(x64 file)\n\u{e9}t\u{e9}(x64 a\u{1F600})\r\n\u{7f}\n".to_owned();
        let rule = &crate::rules::K201;
        let mut diagnostics = vec![
            Diagnostic::new(rule, Span::new(0, 8), "plain `vfs_read`"),
            Diagnostic::new(rule, Span::new(20, 30), ascii.clone()).note(ascii.clone()).note("help: \u{2028} \"q\""),
            Diagnostic::new(rule, Span::new(text.len(), text.len() + 4), "past the end"),
        ];
        diagnostics[1].kernel = Some(format!("6.1 {ascii}").into());
        diagnostics[2].kernel = Some("6.12".into());
        let files = [
            FileReport { name: format!("dir/\\{ascii}.fev"), text, diagnostics },
            FileReport { name: "empty.fev".into(), text: String::new(), diagnostics: Vec::new() },
            FileReport {
                name: "b.fev".into(),
                text: "x\n".into(),
                diagnostics: vec![Diagnostic::new(rule, Span::new(0, 1), "")],
            },
        ];
        assert_eq!(render(&files), by_serde(&files));
        assert_eq!(render(&files[1..2]), by_serde(&files[1..2]));
        assert_eq!(render(&[]), "{\n  \"version\": 1,\n  \"diagnostics\": []\n}\n");
    }
}
