//! The workspace's scripts, open or not: found under the workspace folders at start-up,
//! checked in the background against their kernels as `fevlint check` checks them, kept
//! current as files change on disk (`workspace/didChangeWatchedFiles`), and reported by
//! `workspace/diagnostic` (or pushed to a client that does not pull).
//!
//! Cost is bounded: at most [`MAX_FILES`] scripts of at most
//! [`crate::MAX_DOCUMENT_BYTES`] each are read; hidden folders, `target` and
//! `node_modules` are not entered. Open documents are reported from their open text
//! (checked first, as they are opened); a file on disk is checked once per change.

use crate::convert::Writer;
use crate::position;
use fevlint_check::diagnostic::Diagnostic;
use fevlint_kernel::Kernel;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Scripts read at most: a folder with more (a kernel tree) is reported in part.
pub const MAX_FILES: usize = 5_000;
/// Folders entered at most this deep.
const MAX_DEPTH: usize = 32;

/// The dialects fevlint reads, by file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    Fev,
    /// `*.dynevents`, `kprobe_events`, `dynamic_events`: the kernel's own syntax.
    Mainline,
    Bpftrace,
}

impl Dialect {
    pub fn of(path: &Path) -> Option<Dialect> {
        let name = path.file_name()?.to_str()?;
        if name.ends_with(".fev") {
            Some(Dialect::Fev)
        } else if name.ends_with(".dynevents") || matches!(name, "kprobe_events" | "dynamic_events") {
            Some(Dialect::Mainline)
        } else if name.ends_with(".bt") {
            Some(Dialect::Bpftrace)
        } else {
            None
        }
    }
}

/// The globs the client is asked to watch.
pub const GLOBS: [&str; 5] = ["**/*.fev", "**/*.dynevents", "**/*.bt", "**/kprobe_events", "**/dynamic_events"];

/// The scripts under `roots`, sorted, at most [`MAX_FILES`] (symlinks are not followed).
pub fn scan(roots: &[PathBuf]) -> Vec<PathBuf> {
    scan_for(roots, &|p| Dialect::of(p).is_some())
}

/// The files under `roots` that `wanted` takes, sorted, at most [`MAX_FILES`], found as
/// [`scan`] finds scripts.
pub fn scan_for(roots: &[PathBuf], wanted: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for root in roots {
        walk(root, 0, &mut out, wanted);
    }
    out.sort();
    out.dedup();
    out.truncate(MAX_FILES);
    out
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>, wanted: &dyn Fn(&Path) -> bool) {
    if depth > MAX_DEPTH || out.len() >= MAX_FILES {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                walk(&path, depth + 1, out, wanted);
            }
        } else if kind.is_file() && wanted(&path) {
            out.push(path);
            if out.len() >= MAX_FILES {
                return;
            }
        }
    }
}

/// One script on disk and its report.
#[derive(Debug, Default)]
pub struct File {
    /// The JSON array of its diagnostics, once checked.
    pub items: Option<Vec<u8>>,
    /// Hash of `items` (the `resultId`).
    pub id: u64,
    /// To check (again): it changed on disk, or its kernels or settings did.
    pub stale: bool,
    /// A check of it is under way.
    pub running: bool,
    /// Its diagnostics were pushed (a client that does not pull).
    pub pushed: bool,
    /// The kernels its settings name.
    pub kernels: Vec<PathBuf>,
}

/// The workspace's scripts on disk, by path.
#[derive(Debug, Default)]
pub struct Workspace {
    pub files: BTreeMap<PathBuf, File>,
    /// The folders were scanned.
    pub scanned: bool,
}

impl Workspace {
    /// Every file has a report (the first full report can be given).
    pub fn settled(&self) -> bool {
        self.scanned && self.files.values().all(|f| f.items.is_some() && !f.stale && !f.running)
    }
}

/// Checks one script as `fevlint check` does (its dialect's checks, each kernel's, the
/// suppression comments, the rule selection and severities of `rules`).
pub fn check(
    dialect: Dialect,
    text: &str,
    target: fevlint_syntax::Target,
    rules: &fevlint_check::config::Settings,
    kernels: &[&Kernel],
) -> Vec<Diagnostic> {
    let mut found = match dialect {
        Dialect::Bpftrace => fevlint_check::bpftrace::check(text, kernels),
        Dialect::Mainline => fevlint_check::dynevents::check(text, kernels),
        Dialect::Fev => {
            let mut parser = fevlint_syntax::Parser::new();
            let options = fevlint_check::analysis::Options::new(target).kernels(kernels).settings(rules);
            fevlint_check::analysis::check(&mut parser, text.as_bytes().to_vec(), &options).1
        }
    };
    rules.apply(&mut found);
    found.sort_by(fevlint_check::rules::order);
    found
}

/// The JSON array of `found` in `text` (positions in `encoding`), and its hash.
pub fn encode(
    w: &mut Writer<'_>,
    text: &str,
    encoding: position::Encoding,
    found: &[Diagnostic],
) -> serde_json::Result<(Vec<u8>, u64)> {
    let rope = ropey::Rope::from_str(text);
    let at = position::Positions::new(position::Text::new(&rope, encoding), text, &[]);
    let mut items = vec![b'['];
    for (i, d) in found.iter().enumerate() {
        if i > 0 {
            items.push(b',');
        }
        w.write(&mut items, at.range(d.span), d, &mut |out, line| crate::convert::itoa(out, line))?;
    }
    items.push(b']');
    let id = crate::encoded::hash_bytes(&items);
    Ok((items, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scan_finds_every_dialect_and_skips_hidden_and_build_folders() {
        let dir = std::env::temp_dir().join(format!("fevlint-ws-scan-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in ["a.fev", "b/c.dynevents", "b/kprobe_events", "b/d.bt", "b/e.txt", ".git/x.fev", "target/y.fev"] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
        }
        let found: Vec<String> = scan(std::slice::from_ref(&dir))
            .iter()
            .map(|p| p.strip_prefix(&dir).expect("inside").display().to_string())
            .collect();
        assert_eq!(found, ["a.fev", "b/c.dynevents", "b/d.bt", "b/kprobe_events"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
