//! An open document: rope (for positions and edits), text, tree and the kernel's view,
//! kept in step through incremental changes.
//!
//! An edit costs the edit: the kernel's view is read again only on the lines it touched
//! (the others move), and the tree-sitter tree is edited at once but reparsed only when a
//! request reads it (diagnostics never do). Reparsing a flat 50,000-line tree costs tens
//! of milliseconds even when incremental, since its root is rebuilt.

use super::encoded::{self, Encoded, Found};
use super::position;
use crate::config::Settings;
use fevlint_check::diagnostic::Diagnostic;
use fevlint_syntax::{LineParse, Parse, Parser, Span};
use ropey::Rope;
use std::sync::Arc;
use tower_lsp_server::ls_types::TextDocumentContentChangeEvent;
use tree_sitter::{InputEdit, Point};

/// The most symbols (definitions and their fields) an outline lists, whole lines from the
/// document's start: VS Code asks for the outline after every pause in typing (for the
/// breadcrumbs and sticky scroll), and its extension host spent 1.6 s of its one thread on
/// the 80,000 symbols (18 MB) of a generated 50,000-line script each time, holding the
/// next keystroke's squiggle back. VS Code's own JSON outline stops at the same number
/// (`json.maxItemsComputed`). `workspace/symbol` finds any definition.
pub const OUTLINE_LIMIT: usize = 5_000;

/// Per-line kernel findings, and the kernel loads they were made with.
#[derive(Debug)]
struct KernelLines {
    kernels: Vec<usize>,
    /// Shared with the lines' encoded form ([`Found`]).
    lines: Vec<Option<Vec<Arc<Diagnostic>>>>,
    /// How many of `lines` are `None` (not checked yet).
    missing: usize,
}

pub struct Document {
    pub version: i32,
    pub rope: Rope,
    /// Invariant: equal to `rope.to_string()`.
    pub text: String,
    /// Its lines are current; its tree is current unless `tree_stale` (see
    /// [`Document::refresh_tree`]). Cheap to clone for a kernel check running off the lock.
    pub parse: Parse,
    tree_stale: bool,
    /// A mainline or bpftrace document's diagnostics from its own parser (a `*.fev`
    /// document keeps its findings per line: [`Document::diagnostics`]).
    dialect: Vec<Diagnostic>,
    /// The per-line rules' findings of each line, parallel to `parse.lines`, spans from
    /// the line's start: an edit re-runs them on the lines it touched only.
    line_findings: Vec<Vec<Diagnostic>>,
    /// Each line's [`fevlint_check::analysis::event_key`], parallel to `parse.lines`, and how many
    /// lines have each key: N101 reads the whole file, and runs only when some key is
    /// counted twice (`repeated` keys), so an edit to a file without repeats costs the
    /// edit.
    event_keys: Vec<Option<u64>>,
    event_counts: std::collections::HashMap<u64, u32>,
    repeated: usize,
    /// The whole-file rule's findings (N101) of each line, parallel to `parse.lines`,
    /// spans from the line's start, and how many lines have some.
    whole_lines: Vec<Vec<Diagnostic>>,
    whole_found: usize,
    /// Whether each line holds a `fevlint:` directive, parallel to `parse.lines`, and how
    /// many do: suppressions are decided over the whole file (see [`Document::encodes_lines`]).
    directive_lines: Vec<bool>,
    directives: usize,
    /// Each line's diagnostics as they go out, parallel to `parse.lines` (see
    /// [`encoded`]): a line whose findings change is marked stale and encoded again.
    encoded: Vec<Encoded>,
    /// The lines of `encoded` that may be stale (a range holding every `Encoded::Stale`):
    /// a report looks at these only.
    stale: std::ops::Range<usize>,
    /// The `resultId` of the last publish: a publish of the same findings is skipped.
    pub published: Option<u64>,
    /// The client pulls this document's diagnostics (`textDocument/diagnostic`): they
    /// are no longer pushed.
    pub pulled: bool,
    /// The `resultId` of the last pull's answer.
    pub pulled_id: Option<u64>,
    /// Each line's semantic tokens, parallel to `parse.lines`, `None` until asked for
    /// (and after an edit of the line): see [`Document::semantic_tokens`].
    line_tokens: Vec<Option<Box<[Token]>>>,
    /// Each line's outline symbols as they go out, with how many they are (fields
    /// counted), parallel to `parse.lines`.
    line_symbols: Vec<(Encoded, u32)>,
    /// Whether the client was told that this document's outline is cut at
    /// [`OUTLINE_LIMIT`] (once per document).
    pub outline_cut_told: bool,
    /// The last semantic tokens sent whole, for `full/delta`: (result id, data).
    pub sent_tokens: Option<(u64, Vec<u32>)>,
    /// Kernel diagnostics of `version` from a check of the whole text (mainline,
    /// bpftrace, or a kernel check that does not read lines), once it has run.
    kernel_whole: Option<Vec<Diagnostic>>,
    /// The kernel findings of each line (spans from the line's start) for the loaded
    /// kernels `KernelLines::kernels`, when the kernel check reads one line at a time;
    /// `None` for a line an edit touched and that is not checked again yet.
    kernel_lines: Option<KernelLines>,
    pub settings: Settings,
    /// A `kprobe_events`/`*.dynevents` document: the mainline dialect, checked by
    /// `fevlint_check::dynevents` (the `*.fev` parse is kept for the positions only).
    pub mainline: bool,
    /// A bpftrace script (`*.bt`): checked by `fevlint_check::bpftrace` (with `mainline`
    /// also set: the `*.fev` features stay off).
    pub bpftrace: bool,
    /// What the client's positions count (negotiated at `initialize`).
    pub encoding: position::Encoding,
    parser: Parser,
}

impl std::fmt::Debug for Document {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document").field("version", &self.version).field("len", &self.text.len()).finish()
    }
}

/// tree-sitter's point of a byte offset, from the lines of the same text: rows count `\n`
/// only, columns are bytes.
fn point(lines: &[LineParse], offset: usize) -> Point {
    let row = fevlint_syntax::line_index(lines, offset);
    let col = lines.get(row).map_or(0, |l| offset.saturating_sub(l.line.span.start));
    Point::new(row, col)
}

impl Document {
    #[cfg(test)]
    pub fn new(text: String, version: i32, settings: Settings) -> Document {
        Document::with_dialects(text, version, settings, false, false)
    }

    /// A document in the mainline dialect when `mainline`, a bpftrace script when `bpftrace`.
    pub fn with_dialects(text: String, version: i32, settings: Settings, mainline: bool, bpftrace: bool) -> Document {
        let mainline = mainline || bpftrace;
        let mut parser = Parser::new();
        let parse = parser.parse(&text, settings.target, None);
        let mut doc = Document {
            version,
            rope: Rope::from_str(&text),
            text,
            parse,
            tree_stale: false,
            dialect: Vec::new(),
            line_findings: Vec::new(),
            event_keys: Vec::new(),
            event_counts: std::collections::HashMap::new(),
            repeated: 0,
            whole_lines: Vec::new(),
            whole_found: 0,
            directive_lines: Vec::new(),
            directives: 0,
            encoded: Vec::new(),
            stale: 0..0,
            published: None,
            line_tokens: Vec::new(),
            line_symbols: Vec::new(),
            outline_cut_told: false,
            sent_tokens: None,
            pulled: false,
            pulled_id: None,
            kernel_whole: None,
            kernel_lines: None,
            settings,
            mainline,
            bpftrace,
            encoding: position::Encoding::default(),
            parser,
        };
        doc.check_all_lines();
        doc.check();
        doc
    }

    /// Applies the changes of one `didChange`, in order: each edits the text, the rope and
    /// the tree, and reads again the lines it touched.
    pub fn apply(&mut self, version: i32, changes: &[TextDocumentContentChangeEvent]) {
        let target = self.settings.target;
        for change in changes {
            match change.range {
                Some(range) => {
                    let span = self.at().span(range);
                    let (start, old_end) = (span.start, span.end);
                    let start_position = point(&self.parse.lines, start);
                    let old_end_position = point(&self.parse.lines, old_end);
                    let start_char = self.rope.byte_to_char(start);
                    let end_char = self.rope.byte_to_char(old_end);
                    self.rope.remove(start_char..end_char);
                    self.rope.insert(start_char, &change.text);
                    self.text.replace_range(start..old_end, &change.text);
                    let new_end = start + change.text.len();
                    // A kernel check holding the old lines keeps them: they are copied then.
                    let lines = Arc::make_mut(&mut self.parse.lines);
                    let reread =
                        self.parser.relines(lines, &self.text, Span::new(start, old_end), change.text.len(), target);
                    let (at, removed, new) = (reread.new.start, reread.removed, reread.new.clone());
                    let found = line_findings(&self.text, &lines[new.clone()], target, self.mainline);
                    resplice(&mut self.line_findings, at, removed, found);
                    let keys: Vec<Option<u64>> =
                        lines[new.clone()].iter().map(fevlint_check::analysis::event_key).collect();
                    for k in keys.iter().flatten() {
                        count_event(&mut self.event_counts, &mut self.repeated, *k, true);
                    }
                    for k in resplice(&mut self.event_keys, at, removed, keys).into_iter().flatten() {
                        count_event(&mut self.event_counts, &mut self.repeated, k, false);
                    }
                    let directive: Vec<bool> =
                        lines[new.clone()].iter().map(|l| has_directive(l, &self.text)).collect();
                    self.directives += directive.iter().filter(|&&d| d).count();
                    self.directives -=
                        resplice(&mut self.directive_lines, at, removed, directive).iter().filter(|&&d| d).count();
                    let n = new.len();
                    resplice(&mut self.encoded, at, removed, std::iter::repeat_with(|| Encoded::Stale).take(n));
                    // The stale lines after the edit move with it.
                    let moved = |x: usize| match x {
                        x if x <= at => x,
                        x if x >= at + removed => x - removed + n,
                        _ => at + n,
                    };
                    self.stale =
                        if self.stale.is_empty() { at..at + n } else { moved(self.stale.start)..moved(self.stale.end) };
                    self.stale = union(&self.stale, at..at + n);
                    let gone = resplice(&mut self.whole_lines, at, removed, std::iter::repeat_with(Vec::new).take(n));
                    self.whole_found -= gone.iter().filter(|w| !w.is_empty()).count();
                    resplice(&mut self.line_tokens, at, removed, std::iter::repeat_with(|| None).take(n));
                    resplice(
                        &mut self.line_symbols,
                        at,
                        removed,
                        std::iter::repeat_with(|| (Encoded::Stale, 0)).take(n),
                    );
                    if let Some(k) = &mut self.kernel_lines {
                        k.missing += n;
                        k.missing -= resplice(&mut k.lines, at, removed, std::iter::repeat_n(None, n))
                            .iter()
                            .filter(|l| l.is_none())
                            .count();
                    }
                    let edit = InputEdit {
                        start_byte: start,
                        old_end_byte: old_end,
                        new_end_byte: new_end,
                        start_position,
                        old_end_position,
                        new_end_position: point(lines, new_end),
                    };
                    self.parse.tree.edit(&edit);
                    self.tree_stale = true;
                }
                None => {
                    self.rope = Rope::from_str(&change.text);
                    self.text.clone_from(&change.text);
                    self.parse = self.parser.parse(&self.text, target, None);
                    self.tree_stale = false;
                    self.check_all_lines();
                    self.kernel_lines = None;
                }
            }
        }
        self.version = version;
        self.check();
    }

    /// The rope with the client's encoding, for conversions.
    pub fn at(&self) -> position::Text<'_> {
        position::Text::new(&self.rope, self.encoding)
    }

    /// Positions of many offsets (a publish), through the parse's line index.
    pub fn positions(&self) -> position::Positions<'_> {
        position::Positions::new(self.at(), &self.text, &self.parse.lines)
    }

    /// Reparses the tree when edits left it behind the text (requests call this first).
    pub fn refresh_tree(&mut self) {
        if self.tree_stale {
            self.parse.tree = self.parser.tree(&self.text, Some(&self.parse.tree));
            self.tree_stale = false;
        }
    }

    /// Reparses (incrementally over the current tree, or from scratch, e.g. when the
    /// target changed).
    pub fn reparse(&mut self, incremental: bool) {
        let old = (incremental && !self.tree_stale).then_some(&self.parse.tree);
        self.parse = self.parser.parse(&self.text, self.settings.target, old);
        self.tree_stale = false;
        self.check_all_lines();
        self.kernel_lines = None;
        self.check();
    }

    pub fn set_settings(&mut self, settings: Settings) {
        let full = settings.target != self.settings.target;
        self.settings = settings;
        self.reparse(!full);
    }

    fn check_all_lines(&mut self) {
        self.line_findings = line_findings(&self.text, &self.parse.lines, self.settings.target, self.mainline);
        let n = self.parse.lines.len();
        self.encoded = std::iter::repeat_with(|| Encoded::Stale).take(n).collect();
        self.stale = 0..n;
        self.whole_lines = vec![Vec::new(); n];
        self.whole_found = 0;
        self.directive_lines = self.parse.lines.iter().map(|l| has_directive(l, &self.text)).collect();
        self.directives = self.directive_lines.iter().filter(|&&d| d).count();
        self.line_tokens = std::iter::repeat_with(|| None).take(n).collect();
        self.line_symbols = std::iter::repeat_with(|| (Encoded::Stale, 0)).take(n).collect();
        self.event_keys = self.parse.lines.iter().map(fevlint_check::analysis::event_key).collect();
        self.event_counts.clear();
        self.repeated = 0;
        for k in self.event_keys.iter().flatten() {
            count_event(&mut self.event_counts, &mut self.repeated, *k, true);
        }
    }

    /// The syntax diagnostics: each line's findings are kept as edits come; the rules
    /// that read the whole file (duplicate events) run again, and the lines whose
    /// findings they changed are marked for encoding.
    fn check(&mut self) {
        // A check of the whole text is for the version it read.
        self.kernel_whole = None;
        if self.mainline {
            let mut found = if self.bpftrace {
                // bpftrace's parser alone until the kernels' check replaces these.
                fevlint_check::bpftrace::check(&self.text, &[])
            } else {
                // The parser alone until the kernels' check replaces these (per kernel).
                fevlint_check::dynevents::check(&self.text, &[])
            };
            // As `fevlint check` reports this dialect: the settings decide, nothing else.
            self.settings.rules.apply(&mut found);
            self.dialect = found;
            return;
        }
        if self.repeated == 0 {
            // No function has two events: N101 finds nothing, and only the lines that had
            // its findings change.
            if self.whole_found > 0 {
                for (i, (w, e)) in self.whole_lines.iter_mut().zip(&mut self.encoded).enumerate() {
                    if !w.is_empty() {
                        w.clear();
                        *e = Encoded::Stale;
                        self.stale = union(&self.stale, i..i + 1);
                    }
                }
                self.whole_found = 0;
            }
            return;
        }
        let mut whole =
            fevlint_check::analysis::check_whole_file(&self.text, &self.parse.lines, self.settings.target, true);
        // N104 is found on its own line (see `line_findings`).
        whole.retain(|d| d.is(&fevlint_check::rules::N101));
        whole.sort_by_key(|d| d.span.start);
        let lines = &self.parse.lines;
        let n = lines.len().min(self.whole_lines.len()).min(self.encoded.len());
        let mut next = whole.into_iter().peekable();
        self.whole_found = 0;
        for i in 0..n {
            let end = if i + 1 == n { usize::MAX } else { lines[i].line.span.end };
            let start = lines[i].line.span.start;
            let mut group = Vec::new();
            while let Some(mut d) = next.next_if(|d| d.span.start <= end) {
                d.span.shift(-(start as isize));
                group.push(d);
            }
            self.whole_found += usize::from(!group.is_empty());
            if group != self.whole_lines[i] {
                self.whole_lines[i] = group;
                self.encoded[i] = Encoded::Stale;
                self.stale = union(&self.stale, i..i + 1);
            }
        }
    }

    /// The syntax diagnostics of this version as the settings report them (rule
    /// selection, severities), in order.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        if self.mainline {
            return self.dialect.clone();
        }
        let mut all = self.flatten(self.line_findings.iter().zip(&self.whole_lines).map(|(a, b)| a.iter().chain(b)));
        self.settings.rules.apply(&mut all);
        fevlint_check::rules::sort(&mut all);
        all
    }

    /// The kernel diagnostics of this version, once a kernel check ran (with per-line
    /// kernel findings, an edit keeps those of the lines it did not touch at once).
    pub fn kernel_diagnostics(&self) -> Option<Vec<Diagnostic>> {
        match &self.kernel_lines {
            Some(k) => {
                let mut flat = self.flatten(k.lines.iter().map(|l| l.iter().flatten().map(|d| &**d)));
                fevlint_check::rules::sort(&mut flat);
                Some(flat)
            }
            None => self.kernel_whole.clone(),
        }
    }

    /// Sets the kernel diagnostics of a check of the whole text.
    pub fn set_kernel_whole(&mut self, found: Vec<Diagnostic>) {
        self.kernel_lines = None;
        self.kernel_whole = Some(found);
        self.encoded.iter_mut().for_each(|e| *e = Encoded::Stale);
        self.stale = 0..self.encoded.len();
    }

    /// Whether [`Document::report`] can copy the lines' encoded findings: a `*.fev`
    /// document whose kernel findings (if any) are kept per line and that has no
    /// suppression comment (those are decided over the whole file).
    pub fn encodes_lines(&self) -> bool {
        !self.mainline && self.kernel_whole.is_none() && self.directives == 0
    }

    /// Encodes the stale lines, writes the JSON array of every line's diagnostics to
    /// `out` and returns its hash (the `resultId`). Only when [`Document::encodes_lines`].
    #[cfg(test)]
    pub fn report(&mut self, w: &mut crate::convert::Writer<'_>, out: &mut Vec<u8>) -> u64 {
        let id = self.encode(w);
        out.reserve_exact(self.items_len());
        self.write_items(w, out);
        id
    }

    /// The length of the JSON array [`Document::write_items`] writes.
    pub fn items_len(&self) -> usize {
        encoded::report_len(self.encoded.iter())
    }

    /// Writes the JSON array of every line's encoded diagnostics (after [`Document::encode`],
    /// with a writer of the same settings).
    pub fn write_items(&self, w: &mut crate::convert::Writer<'_>, out: &mut Vec<u8>) {
        encoded::write(out, self.encoded.iter(), Some(w));
    }

    /// The encoded lines cut into blocks of `block_lines` lines (after [`Document::encode`]).
    pub fn blocks(&self, block_lines: u32) -> encoded::Blocks {
        encoded::Blocks::cut(self.encoded.iter(), block_lines)
    }

    /// Writes the JSON array of block `b` of `blocks` ([`Document::blocks`]).
    pub fn write_block(
        &self,
        blocks: &encoded::Blocks,
        b: usize,
        block_lines: u32,
        w: &mut crate::convert::Writer<'_>,
        out: &mut Vec<u8>,
    ) {
        blocks.write(out, &self.encoded, b, block_lines, w);
    }

    /// Encodes the stale lines and returns the report's hash (the `resultId`), without
    /// writing the report: a publish of the same findings is skipped before it is written.
    pub fn encode(&mut self, w: &mut crate::convert::Writer<'_>) -> u64 {
        let mut encoded = std::mem::take(&mut self.encoded);
        if encoded.len() != self.parse.lines.len() {
            self.stale = union(&self.stale, encoded.len().min(self.parse.lines.len())..self.parse.lines.len());
            encoded.resize_with(self.parse.lines.len(), Encoded::default);
        }
        let stale = std::mem::replace(&mut self.stale, 0..0);
        {
            let at = self.positions();
            let lines = stale.start.min(encoded.len())..stale.end.min(encoded.len());
            for (i, e) in encoded.iter_mut().enumerate().skip(lines.start).take(lines.len()) {
                if !matches!(e, Encoded::Stale) {
                    continue;
                }
                let Some(line) = self.parse.lines.get(i) else { continue };
                let mut found: Vec<(Arc<Diagnostic>, fevlint_check::diagnostic::Severity)> = Vec::new();
                let kernel = self.kernel_lines.as_ref().and_then(|k| k.lines.get(i)).into_iter().flatten().flatten();
                let syntax = self.line_findings.get(i).into_iter().flatten();
                let whole = self.whole_lines.get(i).into_iter().flatten();
                // Without suppression comments, what `analysis::report` decides of each
                // finding is `settle`'s. The kernel's findings are shared, not copied
                // (there are thousands; the per-line rules' are few).
                let own = syntax.chain(whole).map(|d| (None, d));
                for (shared, d) in own.chain(kernel.map(|d| (Some(d), &**d))) {
                    let Some(severity) = self.settings.rules.settle(d) else { continue };
                    found.push((shared.map_or_else(|| Arc::new(d.clone()), Arc::clone), severity));
                }
                // All spans are from the line's start: their order is the absolute one.
                found.sort_by(|a, b| fevlint_check::rules::order(&a.0, &b.0));
                *e = Found::encode(w, &at, line.number, line.line.span.start, found);
            }
        }
        self.encoded = encoded;
        encoded::report_id(self.encoded.iter())
    }

    /// Absolute diagnostics from per-line ones (lines not checked yet have none).
    fn flatten<'a, L: IntoIterator<Item = &'a Diagnostic>>(&self, lines: impl Iterator<Item = L>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (line, found) in self.parse.lines.iter().zip(lines) {
            out.extend(found.into_iter().map(|d| {
                let mut d = d.clone();
                d.span.shift(line.line.span.start as isize);
                d
            }));
        }
        out
    }

    /// The semantic tokens of the lines `lines` (all of them for `0..usize::MAX`), encoded
    /// as the protocol wants them (relative to the previous token, from the document's
    /// start). Each line's tokens come from a parse of that line alone (the grammar ends
    /// a definition at its line's end), kept until the line is edited: a request after an
    /// edit highlights the edited lines, not the document. `None` for a text with a
    /// carriage return, whose lines the protocol may count otherwise (the caller
    /// highlights the whole tree then).
    pub fn semantic_tokens(&mut self, lines: std::ops::Range<usize>) -> Option<Vec<u32>> {
        if self.mainline || self.text.contains('\r') {
            return None;
        }
        let n = self.parse.lines.len();
        self.line_tokens.resize_with(n, || None);
        let lines = lines.start.min(n)..lines.end.min(n);
        let mut data = Vec::new();
        let (mut last_line, mut last_start) = (0u32, 0u32);
        for i in lines {
            let Some(line) = self.parse.lines.get(i) else { break };
            let tokens = match &self.line_tokens[i] {
                Some(t) => t,
                None => {
                    let text = line.line.span.text(&self.text);
                    let found = line_tokens(&mut self.parser, text, self.settings.target, self.encoding);
                    self.line_tokens[i].insert(found)
                }
            };
            let number = line.number;
            for &[start, length, kind, modifiers] in tokens.iter() {
                let delta_line = number - last_line;
                let delta_start = if delta_line == 0 { start - last_start } else { start };
                data.extend_from_slice(&[delta_line, delta_start, length, kind, modifiers]);
                (last_line, last_start) = (number, start);
            }
        }
        Some(data)
    }

    /// The outline (`textDocument/documentSymbol`) as the JSON array of its symbols, kept
    /// per line as the tokens are ([`Document::semantic_tokens`]), and the first line left
    /// out when the outline stops at [`OUTLINE_LIMIT`] symbols. `None` when the caller must
    /// read the whole tree (a mainline document, carriage returns).
    pub fn symbols_json(&mut self) -> Option<(Vec<u8>, Option<u32>)> {
        if self.mainline || self.text.contains('\r') {
            return None;
        }
        let n = self.parse.lines.len();
        self.line_symbols.resize_with(n, Default::default);
        let (mut listed, mut end, mut cut) = (0usize, n, None);
        for (i, (slot, count)) in self.line_symbols.iter_mut().enumerate() {
            let Some(line) = self.parse.lines.get(i) else { break };
            if matches!(slot, Encoded::Stale) {
                let text = line.line.span.text(&self.text);
                (*slot, *count) = if line.parsed.is_none() {
                    (Encoded::Empty, 0) // blank or comment-only: no definition
                } else {
                    let parse = self.parser.parse(text, self.settings.target, None);
                    let symbols = fevlint_ide::symbols(&parse, text);
                    let count = symbols.iter().map(|s| 1 + s.children.len()).sum::<usize>();
                    (encoded::symbols(&symbols, text, self.encoding), u32::try_from(count).unwrap_or(u32::MAX))
                };
            }
            if listed + *count as usize > OUTLINE_LIMIT {
                (end, cut) = (i, Some(line.number));
                break;
            }
            listed += *count as usize;
        }
        let mut out = Vec::new();
        encoded::report(&mut out, self.line_symbols[..end].iter().map(|(e, _)| e));
        Some((out, cut))
    }

    /// Runs of two or more comment-only lines, as (first, last) line numbers: what
    /// `fevlint_ide::comment_folds` finds, from the lines kept.
    pub fn folds(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        let mut run: Option<(u32, u32)> = None;
        for l in self.parse.lines.iter() {
            let comment_only =
                l.line.comment.is_some() && l.line.code.text(&self.text).bytes().all(fevlint_syntax::lex::is_space);
            run = match (run, comment_only) {
                (Some((a, _)), true) => Some((a, l.number)),
                (None, true) => Some((l.number, l.number)),
                (Some((a, b)), false) => {
                    if b > a {
                        out.push((a, b));
                    }
                    None
                }
                (None, false) => None,
            };
        }
        if let Some((a, b)) = run.filter(|(a, b)| b > a) {
            out.push((a, b));
        }
        out
    }

    /// Whether the kernel findings are complete for this version.
    pub fn kernel_complete(&self) -> bool {
        match &self.kernel_lines {
            Some(k) => k.missing == 0,
            None => self.kernel_whole.is_some(),
        }
    }

    /// The lines whose kernel findings an edit left to do, when the findings of the
    /// others were made with the loads `kernels`: indexes into `parse.lines`.
    pub fn kernel_lines_to_check(&self, kernels: &[usize]) -> Option<Vec<usize>> {
        let k = self.kernel_lines.as_ref().filter(|k| k.kernels == kernels)?;
        Some(k.lines.iter().enumerate().filter(|(_, f)| f.is_none()).map(|(i, _)| i).take(k.missing).collect())
    }

    /// Stores the kernel findings of the lines `checked` (absolute spans), made with
    /// `kernels` on this version; `checked` is every line after a whole check.
    pub fn set_kernel_findings(&mut self, kernels: &[usize], checked: &[usize], found: Vec<Diagnostic>) {
        let n = self.parse.lines.len();
        let mut k = match self.kernel_lines.take() {
            Some(k) if k.kernels == kernels && k.lines.len() == n => k,
            _ => {
                self.encoded.iter_mut().for_each(|e| *e = Encoded::Stale);
                self.stale = 0..self.encoded.len();
                KernelLines { kernels: kernels.to_vec(), lines: vec![None; n], missing: n }
            }
        };
        self.kernel_whole = None;
        for &i in checked {
            if let Some(slot) = k.lines.get_mut(i) {
                k.missing -= usize::from(slot.is_none());
                *slot = Some(Vec::new());
            }
            if let Some(e) = self.encoded.get_mut(i) {
                *e = Encoded::Stale;
                self.stale = union(&self.stale, i..i + 1);
            }
        }
        let lines = &self.parse.lines;
        // Thousands of findings repeat a few notes and kernel names: one copy of each.
        let mut texts: std::collections::HashSet<Arc<str>> = std::collections::HashSet::new();
        let mut share = |t: &mut Arc<str>| match texts.get(t) {
            Some(kept) => *t = Arc::clone(kept),
            None => {
                texts.insert(Arc::clone(t));
            }
        };
        for mut d in found {
            // A line's findings lie within it or at its end.
            let i = fevlint_syntax::line_index(lines, d.span.start).min(n.saturating_sub(1));
            let (Some(line), Some(Some(list))) = (lines.get(i), k.lines.get_mut(i)) else { continue };
            d.span.shift(-(line.line.span.start as isize));
            d.notes.iter_mut().for_each(&mut share);
            d.kernel.iter_mut().for_each(&mut share);
            d.notes.shrink_to_fit();
            list.push(Arc::new(d));
        }
        for &i in checked {
            if let Some(Some(list)) = k.lines.get_mut(i) {
                list.shrink_to_fit();
            }
        }
        self.kernel_lines = Some(k);
    }
}

/// A semantic token of a line: its start and length (in the client's encoding, from the
/// line's start), its type and modifiers in the legend.
type Token = [u32; 4];

/// The semantic tokens of one line's text, from a parse of that line alone.
fn line_tokens(
    parser: &mut Parser,
    text: &str,
    target: fevlint_syntax::Target,
    encoding: position::Encoding,
) -> Box<[Token]> {
    if text.trim().is_empty() {
        return Box::new([]);
    }
    let parse = parser.parse(text, target, None);
    let mut out = Vec::new();
    for h in fevlint_ide::highlights(&parse, text) {
        let (Some(before), Some(token)) = (text.get(..h.span.start), text.get(h.span.start..h.span.end)) else {
            continue;
        };
        let length = encoding.width(token);
        if length == 0 {
            continue;
        }
        let (kind, modifiers) = crate::convert::token_type(h.kind);
        let start = u32::try_from(encoding.width(before)).unwrap_or(u32::MAX);
        out.push([start, u32::try_from(length).unwrap_or(u32::MAX), kind, modifiers]);
    }
    out.into()
}

/// The smallest range holding both (an empty one holds nothing).
fn union(a: &std::ops::Range<usize>, b: std::ops::Range<usize>) -> std::ops::Range<usize> {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b,
        (_, true) => a.clone(),
        _ => a.start.min(b.start)..a.end.max(b.end),
    }
}

/// Replaces the `removed` entries at `at` of a vector kept parallel to the lines (clamped
/// to its length) by `new`, and returns the entries removed.
fn resplice<T>(v: &mut Vec<T>, at: usize, removed: usize, new: impl IntoIterator<Item = T>) -> Vec<T> {
    let at = at.min(v.len());
    let end = (at + removed).min(v.len());
    v.splice(at..end, new).collect()
}

/// Whether a line holds a `fevlint:` directive (a suppression comment, or the start of
/// one): such a line's findings depend on the whole file's suppressions.
fn has_directive(line: &LineParse, text: &str) -> bool {
    line.line.span.text(text).contains("fevlint:")
}

/// Counts one line's event key in or out; `repeated`: the keys counted twice or more.
fn count_event(counts: &mut std::collections::HashMap<u64, u32>, repeated: &mut usize, key: u64, add: bool) {
    let n = counts.entry(key).or_insert(0);
    if add {
        *n += 1;
        if *n == 2 {
            *repeated += 1;
        }
    } else {
        if *n == 2 {
            *repeated -= 1;
        }
        *n = n.saturating_sub(1);
        if *n == 0 {
            counts.remove(&key);
        }
    }
}

/// The per-line rules' findings on `lines`, one list per line, spans from the line's
/// start (none for a mainline document, whose parser is another). N104 (unknown codes in
/// a suppression) is read from the directive's own line, so it is found here too.
fn line_findings(
    text: &str,
    lines: &[LineParse],
    target: fevlint_syntax::Target,
    mainline: bool,
) -> Vec<Vec<Diagnostic>> {
    if mainline {
        return vec![Vec::new(); lines.len()];
    }
    let mut found = fevlint_check::analysis::by_line(lines, fevlint_check::analysis::check_lines(text, lines, target));
    for (line, found) in lines.iter().zip(&mut found) {
        if has_directive(line, text) {
            // The directive's line alone: spans from its start. Only N104 runs without repeats.
            let own = line.line.span.text(text);
            found.extend(fevlint_check::analysis::check_whole_file(own, &[], target, false));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_lsp_server::ls_types::{Position, Range};

    fn change(l0: u32, c0: u32, l1: u32, c1: u32, text: &str) -> TextDocumentContentChangeEvent {
        TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: text.to_owned(),
        }
    }

    /// The semantic tokens and outline kept per line equal those of `fresh`, a parse of
    /// the whole text (one without syntax errors).
    fn assert_kept_per_line_is_the_whole_trees(doc: &mut Document, fresh: &Parse, version: i32) {
        let rope = Rope::from_str(&doc.text);
        let at = position::Text::new(&rope, doc.encoding);
        let whole = crate::convert::semantic_tokens(at, &fevlint_ide::highlights(fresh, &doc.text));
        let flat: Vec<u32> = whole
            .data
            .iter()
            .flat_map(|t| [t.delta_line, t.delta_start, t.length, t.token_type, t.token_modifiers_bitset])
            .collect();
        assert_eq!(doc.semantic_tokens(0..usize::MAX), Some(flat), "version {version}: {:?}", doc.text);
        let want: Vec<serde_json::Value> = fevlint_ide::symbols(fresh, &doc.text)
            .into_iter()
            .map(|s| serde_json::to_value(crate::convert::symbol(at, s)))
            .collect::<Result<_, _>>()
            .expect("json");
        let (json, cut) = doc.symbols_json().expect("symbols");
        assert_eq!(cut, None);
        let got: serde_json::Value = serde_json::from_slice(&json).expect("json");
        assert_eq!(got, serde_json::Value::Array(want), "version {version}: {:?}", doc.text);
    }

    #[test]
    fn several_changes_apply_in_order_and_the_tree_matches_a_fresh_parse() {
        let mut doc = Document::new("ip_rcv(x64 skb, x86 dev)\n".to_owned(), 1, Settings::default());
        assert_eq!(doc.diagnostics().len(), 1);
        doc.apply(2, &[change(0, 16, 0, 19, "x64"), change(0, 0, 0, 0, "# é😀\n"), change(9, 9, 99, 0, "\nf(")]);
        assert_eq!(doc.text, "# é😀\nip_rcv(x64 skb, x64 dev)\n\nf(");
        assert_eq!(doc.rope.to_string(), doc.text);
        let fresh = fevlint_syntax::parse(&doc.text);
        doc.refresh_tree();
        assert_eq!(doc.parse.tree.root_node().to_sexp(), fresh.tree.root_node().to_sexp());
        assert_eq!(doc.parse.lines, fresh.lines);
        let diagnostics = doc.diagnostics();
        assert!(
            diagnostics.len() == 1 && diagnostics[0].is(&fevlint_check::rules::S001),
            "only the half-typed `f(` is left: {diagnostics:?}"
        );
        assert_eq!(doc.version, 2);
    }

    #[test]
    fn after_any_edits_the_diagnostics_equal_a_fresh_check() {
        let pieces = [
            "vfs_read(x64 file, u32 count+8[0])",
            "\n",
            "vfs_read(x64 a, x64 a)\n",
            "# fevlint: ignore[N101, X999]\n",
            "ip_rcv(x64 skb, ",
            ")",
            "do_IRQ(int counter+8=0xffffffff82354c18)\n",
            "x",
            "\0",
            "é😀",
            "",
        ];
        let mut doc =
            Document::new("a(int x)\n# c\nb(x64 y+8[0], char z[4])\n\nc(string s".to_owned(), 1, Settings::default());
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as usize
        };
        let mut compared = 0;
        for version in 2..1_500 {
            let lines: Vec<&str> = doc.text.split('\n').collect();
            let l0 = next() % lines.len();
            let c0 = next() % (lines[l0].chars().count() + 1);
            let l1 = (l0 + next() % 3).min(lines.len() - 1);
            let c1 = if l1 == l0 {
                c0 + (next() % 4).min(lines[l0].chars().count() - c0)
            } else {
                next() % (lines[l1].chars().count() + 1)
            };
            let utf16 = |l: usize, c: usize| lines[l].chars().take(c).map(char::len_utf16).sum::<usize>() as u32;
            let piece = pieces[next() % pieces.len()];
            doc.apply(version, &[change(l0 as u32, utf16(l0, c0), l1 as u32, utf16(l1, c1), piece)]);
            assert_eq!(doc.rope.to_string(), doc.text);
            let fresh = fevlint_syntax::parse(&doc.text);
            assert_eq!(doc.parse.lines, fresh.lines, "version {version}: {:?}", doc.text);
            let want = fevlint_check::analysis::check_parse(&fresh, &doc.text);
            assert_eq!(format!("{:?}", doc.diagnostics()), format!("{want:?}"), "version {version}: {:?}", doc.text);
            // The lines' encoded findings, copied, are the JSON of the fresh check's.
            let uri: tower_lsp_server::ls_types::Uri = "file:///t/a.fev".parse().expect("uri");
            let docs = crate::convert::RuleDocs::default();
            let mut w = crate::convert::Writer::new(&uri, &docs, true, false);
            let mut got = Vec::new();
            let id = doc.report(&mut w, &mut got);
            assert_eq!(got.len(), doc.items_len(), "the length a publish is allocated at");
            let rope = Rope::from_str(&doc.text);
            let at = position::Positions::new(position::Text::new(&rope, doc.encoding), &doc.text, &fresh.lines);
            let mut items = vec![b'['];
            for (i, d) in want.iter().enumerate() {
                if i > 0 {
                    items.push(b',');
                }
                w.write(&mut items, at.range(d.span), d, &mut |o, l| crate::convert::itoa(o, l)).expect("json");
            }
            items.push(b']');
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&items), "version {version}");
            let mut again = Vec::new();
            assert_eq!(doc.report(&mut w, &mut again), id, "the same findings, the same result id");
            assert_eq!(doc.folds(), fevlint_ide::comment_folds(&doc.text), "version {version}");
            // The tokens kept per line are the whole tree's, where the tree has no error (on a
            // broken line its error recovery may run into the next line; the kernel, and
            // the tokens kept per line, read each line alone).
            if !doc.text.contains('\r') && !fresh.tree.root_node().has_error() {
                compared += 1;
                assert_kept_per_line_is_the_whole_trees(&mut doc, &fresh, version);
            }
            // The event counts kept through the edits are a fresh count's.
            let keys: Vec<Option<u64>> = fresh.lines.iter().map(fevlint_check::analysis::event_key).collect();
            assert_eq!(doc.event_keys, keys, "version {version}");
            let mut counts = std::collections::HashMap::new();
            keys.iter().flatten().for_each(|k| *counts.entry(*k).or_insert(0u32) += 1);
            assert_eq!(doc.event_counts, counts, "version {version}");
            assert_eq!(doc.repeated, counts.values().filter(|&&n| n >= 2).count(), "version {version}");
            // Every line left to encode is within the range a report looks at.
            let stale: Vec<usize> =
                doc.encoded.iter().enumerate().filter(|(_, e)| matches!(e, Encoded::Stale)).map(|(i, _)| i).collect();
            assert!(stale.is_empty(), "version {version}: lines {stale:?} were not encoded");
            // So are the counts of lines with directives and with N101 findings.
            assert_eq!(doc.directives, doc.text.split('\n').filter(|l| l.contains("fevlint:")).count(), "{version}");
            assert_eq!(doc.whole_found, doc.whole_lines.iter().filter(|w| !w.is_empty()).count(), "{version}");
            if doc.text.len() > 3_000 {
                let all = doc.text.split('\n').count() as u32;
                doc.apply(version, &[change(0, 0, all, 0, "")]);
            }
        }
        assert!(compared > 10, "{compared} versions without a syntax error");
    }

    /// A generated script of more symbols than the outline lists: whole lines from the
    /// start up to the limit, as the whole tree's outline cut there; the lines after the
    /// first one left out are never parsed for the outline; an edit above the cut moves it.
    #[test]
    fn the_outline_stops_at_its_limit_on_a_whole_line() {
        let defs = OUTLINE_LIMIT / 2 + 10; // two symbols each: the function and its field
        let text: String = (0..defs).map(|i| format!("f{i}(x64 a0)\n# c\n")).collect();
        let mut doc = Document::new(text.clone(), 1, Settings::default());
        let (json, cut) = doc.symbols_json().expect("symbols");
        let got: Vec<serde_json::Value> = serde_json::from_slice(&json).expect("json");
        assert_eq!(got.len(), OUTLINE_LIMIT / 2);
        assert_eq!(got.iter().map(|s| 1 + s["children"].as_array().map_or(0, Vec::len)).sum::<usize>(), OUTLINE_LIMIT);
        assert_eq!(got.last().expect("last")["name"], format!("f{}", OUTLINE_LIMIT / 2 - 1));
        assert_eq!(cut, Some(OUTLINE_LIMIT as u32)); // the line of `f2500`: two lines a definition
        let listed = cut.expect("cut") as usize;
        assert!(doc.line_symbols[listed + 1..].iter().all(|(e, _)| matches!(e, Encoded::Stale)));
        let rope = Rope::from_str(&doc.text);
        let at = position::Text::new(&rope, doc.encoding);
        let whole: Vec<serde_json::Value> = fevlint_ide::symbols(&fevlint_syntax::parse(&text), &text)
            .into_iter()
            .take(OUTLINE_LIMIT / 2)
            .map(|s| serde_json::to_value(crate::convert::symbol(at, s)).expect("json"))
            .collect();
        assert_eq!(got, whole);
        // A line's fields grow: the cut comes a definition earlier.
        doc.apply(2, &[change(0, 0, 0, 10, "f0(x64 a0, x64 a1)")]);
        let (json, cut) = doc.symbols_json().expect("symbols");
        let got: Vec<serde_json::Value> = serde_json::from_slice(&json).expect("json");
        assert_eq!(got.len(), OUTLINE_LIMIT / 2 - 1);
        assert_eq!(cut, Some(OUTLINE_LIMIT as u32 - 2));
    }

    /// Whole lines replaced, inserted and deleted at random in a script without syntax
    /// errors: the tokens, symbols and folds kept per line are the whole tree's.
    #[test]
    fn the_outline_and_tokens_kept_per_line_are_the_whole_trees() {
        let pieces = [
            "vfs_read(x64 file, u32 count+8[0])",
            "# a comment",
            "# another",
            "",
            "ip_rcv(x64 skb, x64 dev) # trailing é😀",
            "do_IRQ(int counter+8=0xffffffff82354c18)",
            "tcp_sendmsg(u64 sk, char c[4], x32 len+8, symbol f+16[0])",
            "f()",
        ];
        let mut doc = Document::new(
            "f()
# c
"
            .to_owned(),
            1,
            Settings::default(),
        );
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as usize
        };
        for version in 2..400 {
            let lines = doc.text.split('\n').count();
            let l0 = next() % lines;
            let l1 = (l0 + next() % 2).min(lines - 1);
            let piece = pieces[next() % pieces.len()];
            let text = if next() % 3 == 0 { format!("{piece}\n") } else { piece.to_owned() };
            let end = doc.text.split('\n').nth(l1).map_or(0, |l| l.encode_utf16().count()) as u32;
            doc.apply(version, &[change(l0 as u32, 0, l1 as u32, end, &text)]);
            let fresh = fevlint_syntax::parse(&doc.text);
            assert!(!fresh.tree.root_node().has_error(), "{:?}", doc.text);
            assert_kept_per_line_is_the_whole_trees(&mut doc, &fresh, version);
            assert_eq!(doc.folds(), fevlint_ide::comment_folds(&doc.text), "version {version}");
        }
    }
}
