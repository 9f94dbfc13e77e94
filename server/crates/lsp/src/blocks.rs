//! Diagnostics by block, `fevlint/diagnosticBlocks`: a fevlint extension of the protocol
//! (as rust-analyzer has its own) for a client that declares
//! `capabilities.experimental.fevlintDiagnosticBlocks = true`.
//!
//! The protocol has no delta of a document's diagnostics: a publish or a pull report
//! carries all of them, and an editor decodes, converts and shows all of them again after
//! every edit (Neovim 0.11: at least 82 ms of its CPU for the 4,535 findings of a
//! 50,000-line script, whatever the server does). Such a client instead gets its open
//! documents' diagnostics in blocks of [`BLOCK_LINES`] lines, and after an edit only the
//! blocks whose diagnostics changed. The client keeps each block apart (Neovim: a
//! diagnostic namespace each) and replaces a block when it is sent again.
//!
//! ```json
//! {"uri": "file:///w/a.fev", "version": 7, "blockLines": 500, "blockCount": 100,
//!  "blocks": [{"index": 12, "diagnostics": [ ... ]}]}
//! ```
//!
//! - Block `k` holds the diagnostics whose `range.start.line` is in
//!   `[k * blockLines, (k + 1) * blockLines)`; positions are absolute, and each diagnostic
//!   is exactly what a publish to this client would carry.
//! - Each listed block replaces the client's diagnostics of that block; blocks not listed
//!   are unchanged; blocks at `blockCount` or after are dropped. `blockCount` is the
//!   document's number of blocks now (at least 1 while it is open); `0` clears the document
//!   (sent when it closes).
//! - The first notification after an open lists every block with diagnostics; it is sent
//!   even when there are none.
//! - An edit that inserts or deletes lines moves the findings after it: every block after
//!   the edit with a diagnostic changes and is sent again. That is the known cost (typing
//!   within a line, the common edit, sends one block).
//!
//! The client's other documents (the workspace's scripts on disk, a `.bpf.c`'s findings)
//! still come as `textDocument/publishDiagnostics`: a document's pushed diagnostics are
//! cleared when it opens and pushed again from disk when it closes. Such a client is not
//! offered pull diagnostics.

use tower_lsp_server::ls_types::Uri;

/// Lines per block. A one-character edit re-sends one block: at the density of a generated
/// script (one finding in 11 lines), 500 lines are about 45 findings, 27 KB for Neovim.
pub const BLOCK_LINES: u32 = 500;

/// The notification's method.
pub const METHOD: &str = "fevlint/diagnosticBlocks";

/// The capability a client declares under `capabilities.experimental`.
pub const CAPABILITY: &str = "fevlintDiagnosticBlocks";

/// What the client holds of one document: how many blocks, and each block's hash as last
/// sent (0: none, or empty).
#[derive(Debug, Default)]
pub struct Sent {
    count: usize,
    hashes: Vec<u64>,
}

/// The number of blocks of a document of `lines` lines whose last block with diagnostics
/// is `filled - 1`: at least one.
pub fn count(lines: usize, filled: usize, block_lines: u32) -> usize {
    lines.div_ceil(block_lines.max(1) as usize).max(filled).max(1)
}

/// The notification of what changed since `sent` (which it then records), or `None` when
/// nothing did. `hashes`: each block's hash (0: empty), up to the last block with
/// diagnostics; `write(k, out)` appends block `k`'s JSON array.
pub fn update(
    sent: &mut Sent,
    uri: &Uri,
    version: Option<i32>,
    block_lines: u32,
    count: usize,
    hashes: &[u64],
    write: &mut dyn FnMut(usize, &mut Vec<u8>),
) -> Option<Vec<u8>> {
    let hash = |v: &[u64], k: usize| v.get(k).copied().unwrap_or(0);
    let changed: Vec<usize> = (0..count).filter(|&k| hash(hashes, k) != hash(&sent.hashes, k)).collect();
    if changed.is_empty() && sent.count == count {
        return None;
    }
    let mut out = head(uri, version, block_lines, count);
    for (i, &k) in changed.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(br#"{"index":"#);
        crate::convert::itoa(&mut out, u32::try_from(k).unwrap_or(u32::MAX));
        out.extend_from_slice(br#","diagnostics":"#);
        write(k, &mut out);
        out.push(b'}');
    }
    out.extend_from_slice(b"]}}");
    sent.count = count;
    sent.hashes.clear();
    sent.hashes.extend((0..count).map(|k| hash(hashes, k)));
    while sent.hashes.last() == Some(&0) {
        sent.hashes.pop();
    }
    Some(out)
}

/// The notification that clears a document (`blockCount` 0).
pub fn clear(uri: &Uri, block_lines: u32) -> Vec<u8> {
    let mut out = head(uri, None, block_lines, 0);
    out.extend_from_slice(b"]}}");
    out
}

/// The notification's body up to its first block.
fn head(uri: &Uri, version: Option<i32>, block_lines: u32, count: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 << 12);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","method":""#);
    out.extend_from_slice(METHOD.as_bytes());
    out.extend_from_slice(br#"","params":{"uri":"#);
    // A `Uri` is a string: serialising one cannot fail.
    let _ = serde_json::to_writer(&mut out, uri.as_str());
    out.extend_from_slice(br#","version":"#);
    match version {
        Some(v) => out.extend_from_slice(v.to_string().as_bytes()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(br#","blockLines":"#);
    crate::convert::itoa(&mut out, block_lines);
    out.extend_from_slice(br#","blockCount":"#);
    crate::convert::itoa(&mut out, u32::try_from(count).unwrap_or(u32::MAX));
    out.extend_from_slice(br#","blocks":["#);
    out
}

/// Diagnostics written whole (a document that does not keep its lines encoded), cut into
/// blocks: each block's items, comma-separated, and their hashes.
#[derive(Debug, Default)]
pub struct Written {
    blocks: Vec<Vec<u8>>,
    pub hashes: Vec<u64>,
}

impl Written {
    /// Adds one diagnostic's JSON, written by `write`, to the block of `line`.
    pub fn push<E>(
        &mut self,
        line: u32,
        block_lines: u32,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let b = (line / block_lines.max(1)) as usize;
        if self.blocks.len() <= b {
            self.blocks.resize_with(b + 1, Vec::new);
        }
        let block = &mut self.blocks[b];
        if !block.is_empty() {
            block.push(b',');
        }
        write(block)
    }

    /// Hashes the blocks, once every diagnostic is in.
    pub fn finish(&mut self) {
        self.hashes =
            self.blocks.iter().map(|b| if b.is_empty() { 0 } else { crate::encoded::hash_bytes(b).max(1) }).collect();
    }

    /// Appends block `k`'s JSON array.
    pub fn write(&self, k: usize, out: &mut Vec<u8>) {
        out.push(b'[');
        if let Some(b) = self.blocks.get(k) {
            out.extend_from_slice(b);
        }
        out.push(b']');
    }
}

#[cfg(test)]
mod tests;
