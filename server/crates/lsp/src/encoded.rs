//! Diagnostics in the form they go out in. Each line's findings are kept settled (the
//! severity and order a report gives them) with their ranges, line numbers counted from
//! the line's own (a [`Found`]): an edit settles again the lines it touched, and a publish
//! or a pull report writes every line's findings with their line numbers in. A kernel
//! finding is the document's own (`Arc<Diagnostic>`, shared), not a second copy as JSON. A hash over the
//! lines is the report's `resultId`, and tells when the findings did not change (no publish
//! then). Outline symbols are kept as their JSON (a [`Chunk`]).

use crate::convert::{itoa, Writer};
use crate::position::Positions;
use fevlint_check::diagnostic::{Diagnostic, Severity};
use std::hash::{Hash, Hasher};
use std::sync::Arc;
use tower_lsp_server::ls_types::Range;

/// The settled diagnostics of one line and what writing them takes. The first is kept
/// inline: most lines have one, and a line then costs one allocation of 64 bytes with the
/// allocator's header (a separate list took two, 96 bytes: a third of a finding's).
#[derive(Debug)]
pub struct Found {
    /// The first diagnostic (the document's own, shared: its span is from the line's
    /// start), its severity as the settings make it, and its range, the range's lines
    /// counted from the chunk's line.
    d: Arc<Diagnostic>,
    range: Range,
    severity: Severity,
    /// The others, in order.
    rest: Box<[Item]>,
    /// The length of their JSON array's inside without the line numbers.
    len: u32,
    /// Whether each note takes a range of its own (`relatedInformation`): the count of
    /// line numbers written.
    related: bool,
    /// A hash of their JSON and line offsets.
    hash: u64,
}

/// A diagnostic of a line after its first (see [`Found`]).
#[derive(Debug)]
struct Item {
    d: Arc<Diagnostic>,
    range: Range,
    severity: Severity,
}

impl Found {
    /// Settled diagnostics `found` (spans from the start of line `line`, at byte `start`;
    /// in order) with their severities; their JSON is written once, to measure and hash it.
    pub fn encode(
        w: &mut Writer<'_>,
        at: &Positions<'_>,
        line: u32,
        start: usize,
        found: Vec<(Arc<Diagnostic>, Severity)>,
    ) -> Encoded {
        if found.is_empty() {
            return Encoded::Empty;
        }
        let mut h = std::collections::hash_map::DefaultHasher::new();
        let mut scratch = Vec::with_capacity(512);
        let mut items = Vec::with_capacity(found.len());
        let mut len = found.len() - 1;
        for (d, severity) in found {
            let mut span = d.span;
            span.shift(start as isize);
            let mut r = at.range(span);
            r.start.line = r.start.line.saturating_sub(line);
            r.end.line = r.end.line.saturating_sub(line);
            scratch.clear();
            // Only string escapes can fail (never, for `str`): such a finding is left out.
            if w.write_as(&mut scratch, r, &d, severity, &mut |_, _| {}).is_err() {
                len = len.saturating_sub(1);
                continue;
            }
            scratch.hash(&mut h);
            (r.start.line, r.end.line).hash(&mut h);
            len += scratch.len();
            items.push(Item { d, range: r, severity });
        }
        let mut items = items.into_iter();
        let Some(Item { d, range, severity }) = items.next() else { return Encoded::Empty };
        Encoded::Found(Box::new(Found {
            d,
            range,
            severity,
            rest: items.collect(),
            // Over 4 GiB of JSON is not written: the frame's length is corrected then.
            len: u32::try_from(len).unwrap_or(u32::MAX),
            related: w.related_information(),
            hash: h.finish(),
        }))
    }

    /// Each diagnostic with its severity and range, in order.
    fn items(&self) -> impl Iterator<Item = (&Arc<Diagnostic>, Severity, Range)> {
        let rest = self.rest.iter().map(|i| (&i.d, i.severity, i.range));
        std::iter::once((&self.d, self.severity, self.range)).chain(rest)
    }

    /// The length of [`Found::write_to`]'s bytes.
    fn written_len(&self, line: u32) -> usize {
        let numbers = |(d, _, r): (&Arc<Diagnostic>, Severity, Range)| {
            let ranges = 1 + if self.related { d.notes.len() } else { 0 };
            ranges * (digits(line + r.start.line) + digits(line + r.end.line))
        };
        self.len as usize + self.items().map(numbers).sum::<usize>()
    }

    /// Appends the diagnostics whose first line (counted from the document's start, the
    /// chunk's line being `line`) is in `lines`, each after a comma unless `out` holds none yet
    /// (`*first`).
    fn write_within(
        &self,
        w: &mut Writer<'_>,
        out: &mut Vec<u8>,
        line: u32,
        lines: &std::ops::Range<u32>,
        first: &mut bool,
    ) {
        for (d, severity, r) in self.items() {
            if !lines.contains(&(line + r.start.line)) {
                continue;
            }
            if !std::mem::replace(first, false) {
                out.push(b',');
            }
            let _ = w.write_as(out, r, d, severity, &mut |out, l| itoa(out, line + l));
        }
    }

    /// Appends the diagnostics with their line numbers counted from `line`.
    fn write_to(&self, w: &mut Writer<'_>, out: &mut Vec<u8>, line: u32) {
        for (i, (d, severity, r)) in self.items().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let _ = w.write_as(out, r, d, severity, &mut |out, l| itoa(out, line + l));
        }
    }
}

/// The JSON of one line's outline symbols, their line numbers left open.
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
    /// Outline symbols as their JSON.
    Chunk(Box<Chunk>),
    /// Diagnostics.
    Found(Box<Found>),
}

impl Chunk {
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

/// Writes the JSON array of the outline chunks of `lines` (in line order), and returns
/// the report's hash.
pub fn report<'a>(out: &mut Vec<u8>, lines: impl Iterator<Item = &'a Encoded> + Clone) -> u64 {
    out.reserve_exact(report_len(lines.clone()));
    write(out, lines.clone(), None);
    report_id(lines)
}

/// The lines that have something to write, with their line numbers.
fn filled<'a>(lines: impl Iterator<Item = &'a Encoded>) -> impl Iterator<Item = (u32, &'a Encoded)> {
    lines.enumerate().filter_map(|(i, e)| match e {
        Encoded::Chunk(_) | Encoded::Found(_) => Some((u32::try_from(i).unwrap_or(u32::MAX), e)),
        _ => None,
    })
}

/// The report's hash (its `resultId`), from the lines' hashes: nothing is written.
pub fn report_id<'a>(lines: impl Iterator<Item = &'a Encoded>) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for (line, e) in filled(lines) {
        let hash = match e {
            Encoded::Chunk(c) => c.hash,
            Encoded::Found(f) => f.hash,
            _ => 0,
        };
        (line, hash).hash(&mut h);
    }
    h.finish()
}

/// The length of the JSON array [`write`] writes: a publish is allocated once, at its size.
pub fn report_len<'a>(lines: impl Iterator<Item = &'a Encoded>) -> usize {
    let (mut len, mut n) = (2, 0);
    for (line, e) in filled(lines) {
        len += match e {
            Encoded::Chunk(c) => c.written_len(line),
            Encoded::Found(f) => f.written_len(line),
            _ => 0,
        };
        n += 1;
    }
    len + n.max(1) - 1
}

/// Writes the JSON array of `lines` (in line order). Diagnostics are written by `w` (an
/// outline's chunks need none: without it, a line's diagnostics would be left out).
pub fn write<'a>(out: &mut Vec<u8>, lines: impl Iterator<Item = &'a Encoded>, mut w: Option<&mut Writer<'_>>) {
    out.push(b'[');
    for (i, (line, e)) in filled(lines).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match (e, w.as_deref_mut()) {
            (Encoded::Chunk(c), _) => c.write_to(out, line),
            (Encoded::Found(f), Some(w)) => f.write_to(w, out, line),
            _ => debug_assert!(false, "diagnostics written without their writer"),
        }
    }
    out.push(b']');
}

/// The lines' diagnostics cut into blocks of `block_lines` lines, as `fevlint/diagnosticBlocks`
/// sends them (see `crate::blocks`): a diagnostic is in the block of the line its range
/// starts on.
#[derive(Debug, Default)]
pub struct Blocks {
    /// Each block's hash, from its lines' hashes and line numbers (0: no diagnostic), up
    /// to the last block with one.
    pub hashes: Vec<u64>,
    /// The lines with diagnostics in each block (a line whose diagnostics start on lines of
    /// two blocks is in both, and its hash in both hashes).
    lines: Vec<Vec<u32>>,
}

impl Blocks {
    /// Cuts `lines` (after [`Found`]s were encoded for every line) into blocks: a walk over
    /// the lines and a hash of each line with diagnostics, no JSON written.
    pub fn cut<'a>(lines: impl Iterator<Item = &'a Encoded>, block_lines: u32) -> Blocks {
        let block_lines = block_lines.max(1);
        let mut hashers: Vec<Option<std::collections::hash_map::DefaultHasher>> = Vec::new();
        let mut out = Blocks::default();
        for (line, e) in filled(lines) {
            let Encoded::Found(f) = e else { continue };
            let mut last = None;
            for start in f.items().map(|(_, _, r)| line.saturating_add(r.start.line)) {
                let b = (start / block_lines) as usize;
                if last == Some(b) {
                    continue;
                }
                last = Some(b);
                if hashers.len() <= b {
                    hashers.resize_with(b + 1, || None);
                    out.lines.resize_with(b + 1, Vec::new);
                }
                if out.lines[b].last() == Some(&line) {
                    continue;
                }
                out.lines[b].push(line);
                let h = hashers[b].get_or_insert_with(Default::default);
                (line, f.hash).hash(h);
            }
        }
        out.hashes = hashers.into_iter().map(|h| h.map_or(0, |h| h.finish().max(1))).collect();
        out
    }

    /// Writes the JSON array of block `b`'s diagnostics, from the same `lines` as
    /// [`Blocks::cut`] read, with a writer of the same settings as encoded them.
    pub fn write(&self, out: &mut Vec<u8>, lines: &[Encoded], b: usize, block_lines: u32, w: &mut Writer<'_>) {
        let block_lines = block_lines.max(1);
        let start = u32::try_from(b).unwrap_or(u32::MAX).saturating_mul(block_lines);
        let within = start..start.saturating_add(block_lines);
        out.push(b'[');
        let mut first = true;
        for &line in self.lines.get(b).into_iter().flatten() {
            if let Some(Encoded::Found(f)) = lines.get(line as usize) {
                f.write_within(w, out, line, &within, &mut first);
            }
        }
        out.push(b']');
    }
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

#[cfg(test)]
mod tests {
    /// A line with one finding (most lines with any) costs one allocation of 56 bytes, 64
    /// with glibc's header: the `Found` with its first diagnostic inline, and an empty list
    /// of others (which allocates nothing).
    #[test]
    fn a_line_with_one_finding_is_one_small_allocation() {
        assert!(std::mem::size_of::<super::Found>() <= 56, "{} bytes", std::mem::size_of::<super::Found>());
        let none: Box<[super::Item]> = Vec::new().into();
        assert_eq!(std::mem::size_of_val(&*none), 0);
    }
}
