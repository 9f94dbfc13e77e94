//! Diagnostics in the form they go out in. Each line's findings are kept as the
//! protocol's JSON with their line numbers left open (a [`Chunk`]): an edit re-encodes
//! the lines it touched, and a publish or a pull report copies the other lines' bytes and
//! writes their line numbers in. A hash over the lines' chunks is the report's
//! `resultId`, and tells when the findings did not change (no publish then).

use crate::convert::{itoa, Writer};
use crate::position::Positions;
use fevlint_check::diagnostic::Diagnostic;
use std::hash::{Hash, Hasher};

/// The encoded diagnostics of one line.
#[derive(Debug)]
pub struct Chunk {
    /// The diagnostics' JSON objects, comma-separated, without their line numbers.
    bytes: Box<[u8]>,
    /// Where each line number goes: (offset into `bytes`, lines after the chunk's own).
    holes: Box<[(u32, u32)]>,
    /// A hash of `bytes` and `holes`.
    hash: u64,
}

/// A line's state in the encoded form.
#[derive(Debug, Default)]
pub enum Encoded {
    /// To encode again (the line was edited, or its findings changed).
    #[default]
    Stale,
    /// No diagnostics.
    Empty,
    Chunk(Box<Chunk>),
}

impl Chunk {
    /// Encodes the diagnostics `found` (absolute spans, in order) of line `line`.
    pub fn encode(w: &mut Writer<'_>, at: &Positions<'_>, line: u32, found: &[&Diagnostic]) -> Encoded {
        if found.is_empty() {
            return Encoded::Empty;
        }
        let mut bytes = Vec::with_capacity(256 * found.len());
        let mut holes = Vec::new();
        for (i, d) in found.iter().enumerate() {
            if i > 0 {
                bytes.push(b',');
            }
            let range = at.range(d.span);
            let mut hole = |out: &mut Vec<u8>, l: u32| {
                holes.push((out.len() as u32, l.saturating_sub(line)));
            };
            // Only string escapes can fail (never, for `str`): such a finding is left out.
            let mark = bytes.len();
            if w.write(&mut bytes, range, d, &mut hole).is_err() {
                bytes.truncate(mark);
            }
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        bytes.hash(&mut h);
        holes.hash(&mut h);
        Encoded::Chunk(Box::new(Chunk { bytes: bytes.into(), holes: holes.into(), hash: h.finish() }))
    }

    /// The length of [`Chunk::write_to`]'s bytes.
    fn written_len(&self, line: u32) -> usize {
        self.bytes.len() + self.holes.iter().map(|&(_, delta)| digits(line + delta)).sum::<usize>()
    }

    /// Appends the chunk with its line numbers counted from `line`.
    pub fn write_to(&self, out: &mut Vec<u8>, line: u32) {
        let mut from = 0;
        for &(at, delta) in self.holes.iter() {
            out.extend_from_slice(&self.bytes[from..at as usize]);
            itoa(out, line + delta);
            from = at as usize;
        }
        out.extend_from_slice(&self.bytes[from..]);
    }
}

/// Writes the JSON array of the chunks of `lines` (in line order), and returns the
/// report's hash (its `resultId`).
pub fn report<'a>(out: &mut Vec<u8>, lines: impl Iterator<Item = &'a Encoded> + Clone) -> u64 {
    out.reserve_exact(report_len(lines.clone()));
    write(out, lines.clone());
    report_id(lines)
}

/// The chunks with their line numbers.
fn chunks<'a>(lines: impl Iterator<Item = &'a Encoded>) -> impl Iterator<Item = (u32, &'a Chunk)> {
    lines.enumerate().filter_map(|(i, e)| match e {
        Encoded::Chunk(c) => Some((u32::try_from(i).unwrap_or(u32::MAX), &**c)),
        _ => None,
    })
}

/// The report's hash (its `resultId`), from the chunks' hashes: nothing is written.
pub fn report_id<'a>(lines: impl Iterator<Item = &'a Encoded>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (line, c) in chunks(lines) {
        (line, c.hash).hash(&mut h);
    }
    h.finish()
}

/// The length of the JSON array [`write`] writes: a publish is allocated once, at its size.
pub fn report_len<'a>(lines: impl Iterator<Item = &'a Encoded>) -> usize {
    let (mut len, mut n) = (2, 0);
    for (line, c) in chunks(lines) {
        len += c.written_len(line);
        n += 1;
    }
    len + n.max(1) - 1
}

/// Writes the JSON array of the chunks of `lines` (in line order).
pub fn write<'a>(out: &mut Vec<u8>, lines: impl Iterator<Item = &'a Encoded>) {
    out.push(b'[');
    for (i, (line, c)) in chunks(lines).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        c.write_to(out, line);
    }
    out.push(b']');
}

/// How many decimal digits `n` has.
fn digits(n: u32) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The hash of an encoded array written otherwise (a document checked whole).
pub fn hash_bytes(items: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    items.hash(&mut h);
    h.finish()
}

/// The outline symbols of one line as the protocol's `DocumentSymbol` JSON (the same
/// fields as the protocol type serialises), their line numbers left open. `text` is the
/// line's text, the symbols' spans are from its start.
pub fn symbols(symbols: &[fevlint_ide::Symbol], text: &str, encoding: crate::position::Encoding) -> Encoded {
    if symbols.is_empty() {
        return Encoded::Empty;
    }
    let mut bytes = Vec::with_capacity(128 * symbols.len());
    let mut holes = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        if i > 0 {
            bytes.push(b',');
        }
        write_symbol(&mut bytes, &mut holes, s, text, encoding);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    Encoded::Chunk(Box::new(Chunk { bytes: bytes.into(), holes: holes.into(), hash: h.finish() }))
}

fn write_symbol(
    out: &mut Vec<u8>,
    holes: &mut Vec<(u32, u32)>,
    s: &fevlint_ide::Symbol,
    text: &str,
    encoding: crate::position::Encoding,
) {
    let character = |offset: usize| encoding.width(text.get(..offset.min(text.len())).unwrap_or(text)) as u32;
    let mut range = |out: &mut Vec<u8>, span: fevlint_syntax::Span| {
        out.extend_from_slice(br#"{"start":{"line":"#);
        holes.push((out.len() as u32, 0));
        out.extend_from_slice(br#","character":"#);
        itoa(out, character(span.start));
        out.extend_from_slice(br#"},"end":{"line":"#);
        holes.push((out.len() as u32, 0));
        out.extend_from_slice(br#","character":"#);
        itoa(out, character(span.end));
        out.extend_from_slice(b"}}");
    };
    out.extend_from_slice(br#"{"name":"#);
    let _ = serde_json::to_writer(&mut *out, &s.name);
    if !s.detail.is_empty() {
        out.extend_from_slice(br#","detail":"#);
        let _ = serde_json::to_writer(&mut *out, &s.detail);
    }
    out.extend_from_slice(match s.kind {
        fevlint_ide::SymbolKind::Definition => br#","kind":12"#,
        fevlint_ide::SymbolKind::Field => br#","kind":8"#,
    });
    out.extend_from_slice(br#","range":"#);
    range(out, s.span);
    out.extend_from_slice(br#","selectionRange":"#);
    range(out, s.selection);
    if !s.children.is_empty() {
        out.extend_from_slice(br#","children":["#);
        for (i, c) in s.children.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            write_symbol(out, holes, c, text, encoding);
        }
        out.push(b']');
    }
    out.push(b'}');
}
