//! The server's side of compiled BPF objects ([`crate::objects`]): found when the
//! workspace is scanned and whenever settings change, checked off the request path once
//! their kernels have loaded (again when an object or a kernel changes on disk), their
//! findings pushed to the `.bpf.c` sources (or given to a pulling client), hovers there.
//!
//! Invariant: `Inner::objects` is taken after `state`, `kernels` and `workspace` when
//! held with them.

use super::{guarded, Inner, State};
use crate::convert;
use crate::objects::{self, Checked, Configured};
use crate::position;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, MutexGuard};
use tower_lsp_server::ls_types::{Hover, MessageType, Position, Uri};

#[derive(Debug, Default)]
struct Entry {
    configured: Option<Configured>,
    stale: bool,
    running: bool,
    checked: Option<Checked>,
}

/// What was last reported for one source file.
#[derive(Debug, Default)]
struct Report {
    items: Vec<u8>,
    id: u64,
    pushed: bool,
    /// The client pulled it (`textDocument/diagnostic`): no longer pushed.
    pulled: bool,
}

/// The workspace's objects and what they say about their sources.
#[derive(Debug, Default)]
pub(super) struct Objects {
    entries: BTreeMap<PathBuf, Entry>,
    reports: BTreeMap<PathBuf, Report>,
    /// Object paths and folders with a registered file watcher.
    watched: HashSet<PathBuf>,
    /// The folders the configs name: a new `*.bpf.o` there is found by a new scan.
    folders: Vec<PathBuf>,
}

impl Objects {
    /// Every source's report (for `workspace/diagnostic`).
    pub(super) fn reports(&self) -> impl Iterator<Item = (&PathBuf, &[u8], u64)> {
        self.reports.iter().map(|(p, r)| (p, r.items.as_slice(), r.id))
    }
}

impl Inner {
    pub(super) fn objects(&self) -> MutexGuard<'_, Objects> {
        self.objects.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Reads the objects the `fevlint.toml` files name (off the async threads), then
    /// loads their kernels and checks them.
    pub(super) fn scan_objects(self: &Arc<Self>) {
        let (roots, layers) = {
            let state = self.lock();
            (state.roots.clone(), [state.init.clone(), state.client.clone()])
        };
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            let (found, _, folders) = tokio::task::spawn_blocking(move || {
                let refs: Vec<&config::Layer> = layers.iter().collect();
                objects::configured(&roots, &refs)
            })
            .await
            .unwrap_or_default();
            let (watch, new_watches) = {
                let mut state = inner.lock();
                let mut kernels: Vec<PathBuf> = found.iter().flat_map(|c| c.kernels.iter().cloned()).collect();
                kernels.sort();
                kernels.dedup();
                state.object_kernels = kernels;
                let watch = state.watch;
                let mut objects = inner.objects();
                let keep: HashSet<&PathBuf> = found.iter().map(|c| &c.path).collect();
                objects.entries.retain(|p, _| keep.contains(p));
                let mut new_watches = Vec::new();
                for f in &folders {
                    if watch && objects.watched.insert(f.clone()) {
                        new_watches.push(format!("{}/**/*.bpf.o", f.display()));
                    }
                }
                objects.folders = folders;
                for c in found {
                    if watch && objects.watched.insert(c.path.clone()) {
                        new_watches.push(c.path.display().to_string());
                    }
                    let e = objects.entries.entry(c.path.clone()).or_default();
                    if e.configured.as_ref() != Some(&c) {
                        e.configured = Some(c);
                        e.stale = true;
                    }
                }
                (watch, new_watches)
            };
            if watch && !new_watches.is_empty() {
                inner.register_watchers(new_watches).await;
            }
            inner.sync_kernels(false);
            inner.publish_objects().await;
            inner.check_objects();
        });
    }

    /// Marks the objects that `changed` (files on disk) or a kernel at `kernel` concern
    /// as stale, and checks them again.
    pub(super) fn objects_touched(self: &Arc<Self>, changed: &[PathBuf], kernel: Option<&Path>) {
        let new = {
            let objects = self.objects();
            changed.iter().any(|c| {
                !objects.entries.contains_key(c)
                    && c.to_str().is_some_and(|n| n.ends_with(".bpf.o"))
                    && objects.folders.iter().any(|f| c.starts_with(f))
            })
        };
        if new {
            self.scan_objects(); // a new object in a folder the configs name
        }
        let any = {
            let mut objects = self.objects();
            let mut any = false;
            for (path, e) in objects.entries.iter_mut() {
                let by_kernel = kernel.is_some_and(|k| {
                    e.configured.as_ref().is_some_and(|c| c.kernels.iter().any(|p| crate::kernels::key(p) == k))
                });
                if by_kernel || changed.iter().any(|c| c == path) {
                    e.stale = true;
                    any = true;
                }
            }
            any
        };
        if any {
            self.check_objects();
        }
    }

    /// Checks the stale objects whose kernels have loaded, one batch per set of kernels
    /// (each kernel's BTF is prepared once per batch), then reports their sources.
    fn check_objects(self: &Arc<Self>) {
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let mut batches: Vec<(Vec<Arc<fevlint_kernel::Kernel>>, Vec<Configured>)> = Vec::new();
                {
                    let kernels = inner.kernels();
                    let mut objects = inner.objects();
                    for e in objects.entries.values_mut() {
                        let Some(c) = e.configured.as_ref().filter(|_| e.stale && !e.running) else { continue };
                        let available = kernels.available(&c.kernels);
                        if available.waiting {
                            continue; // checked when its kernels have loaded
                        }
                        e.stale = false;
                        e.running = true;
                        let ids: Vec<usize> = available.kernels.iter().map(|k| Arc::as_ptr(k) as usize).collect();
                        match batches
                            .iter_mut()
                            .find(|(ks, _)| ks.iter().map(|k| Arc::as_ptr(k) as usize).collect::<Vec<_>>() == ids)
                        {
                            Some((_, cs)) => cs.push(c.clone()),
                            None => batches.push((available.kernels, vec![c.clone()])),
                        }
                    }
                }
                if batches.is_empty() {
                    break;
                }
                let roots = inner.lock().roots.clone();
                for (kernels, configured) in batches {
                    let (cs, rs) = (configured.clone(), roots.clone());
                    let result =
                        tokio::task::spawn_blocking(move || guarded(|| objects::check(&cs, &kernels, &rs))).await;
                    let checked: Vec<Checked> = match result {
                        Ok(Ok(c)) => c,
                        Ok(Err(p)) => {
                            vec![
                                Checked { error: Some(format!("checking panicked: {p}")), ..Default::default() };
                                configured.len()
                            ]
                        }
                        Err(e) => vec![Checked { error: Some(e.to_string()), ..Default::default() }; configured.len()],
                    };
                    let mut errors = Vec::new();
                    {
                        let mut objects = inner.objects();
                        for (c, done) in configured.iter().zip(checked) {
                            if let Some(e) = &done.error {
                                errors.push(format!("BPF object {}: {e}", c.path.display()));
                            }
                            if let Some(entry) = objects.entries.get_mut(&c.path) {
                                entry.running = false;
                                entry.checked = Some(done);
                            }
                        }
                    }
                    for e in errors {
                        inner.log(MessageType::WARNING, e).await;
                    }
                    inner.publish_objects().await;
                }
            }
        });
    }

    /// Encodes every source's findings (all objects' together); pushes those that
    /// changed to a client that does not pull, or asks a pulling one to pull again.
    async fn publish_objects(&self) {
        let (docs, related, encoding, pulled, refresh) = {
            let state = self.lock();
            (
                state.rule_docs.clone(),
                state.related_information,
                state.encoding,
                state.workspace_pulled,
                state.diagnostic_refresh,
            )
        };
        let mut pushes = Vec::new();
        let mut changed = false;
        let mut pulled_changed = false;
        {
            let mut objects = self.objects();
            let Objects { entries, reports, .. } = &mut *objects;
            let mut merged: BTreeMap<&PathBuf, (Arc<str>, Vec<&fevlint_check::diagnostic::Diagnostic>, bool)> =
                BTreeMap::new();
            for e in entries.values() {
                let (Some(c), Some(checked)) = (&e.configured, &e.checked) else { continue };
                for (path, s) in &checked.sources {
                    let m = merged.entry(path).or_insert_with(|| (s.text.clone(), Vec::new(), false));
                    m.1.extend(&s.diagnostics);
                    m.2 |= c.kernels.len() > 1;
                }
            }
            for (path, r) in reports.iter_mut() {
                if !merged.contains_key(path) && r.id != 0 {
                    // No object reports there any more.
                    *r = Report { items: b"[]".to_vec(), id: 0, pushed: r.pushed, pulled: r.pulled };
                    changed = true;
                    if let (true, Some(uri)) = (r.pushed, Uri::from_file_path(path)) {
                        r.pushed = false;
                        pushes.push((uri, r.items.clone()));
                    }
                }
            }
            for (path, (text, mut found, several)) in merged {
                let Some(uri) = Uri::from_file_path(path) else { continue };
                found.sort_by(|a, b| fevlint_check::rules::order(a, b));
                found.dedup();
                let found: Vec<fevlint_check::diagnostic::Diagnostic> = found.into_iter().cloned().collect();
                let mut w = convert::Writer::new(&uri, &docs, related, several);
                let Ok((items, id)) = guarded(|| crate::workspace::encode(&mut w, &text, encoding, &found))
                    .unwrap_or_else(|_| Ok((b"[]".to_vec(), 0)))
                else {
                    continue;
                };
                let r = reports.entry(path.clone()).or_default();
                if r.id == id && !r.items.is_empty() {
                    continue;
                }
                changed = true;
                pulled_changed |= r.pulled;
                r.id = id;
                if !pulled && !r.pulled && (items.len() > 2 || r.pushed) {
                    r.pushed = items.len() > 2;
                    pushes.push((uri, items.clone()));
                }
                r.items = items;
            }
        }
        for (uri, items) in pushes {
            if let Ok(body) = convert::publish_frame_body(&uri, None, &items) {
                self.send_publish(&uri, &body);
            }
        }
        if refresh && changed && (pulled || pulled_changed) {
            self.refresh_diagnostics();
        }
    }

    /// The report of a source the objects point at (a pulled `.bpf.c`); from now on it
    /// is not pushed, and what was pushed is cleared (the client keeps pulled and pushed
    /// diagnostics apart: both would show).
    pub(super) fn object_report(&self, uri: &Uri) -> Option<(Vec<u8>, u64)> {
        let path = uri.to_file_path()?;
        let mut objects = self.objects();
        let r = objects.reports.get_mut(path.as_ref())?;
        r.pulled = true;
        if std::mem::take(&mut r.pushed) {
            if let Ok(body) = convert::publish_frame_body(uri, None, b"[]") {
                self.send_publish(uri, &body);
            }
        }
        Some((r.items.clone(), r.id))
    }

    /// What the relocations and attach points at `position` of a source resolve to on
    /// each kernel.
    pub(super) fn object_hover(&self, state: &State, uri: &Uri, position: Position) -> Option<Hover> {
        let path = uri.to_file_path()?.into_owned();
        let objects = self.objects();
        let sources: Vec<&objects::Source> = objects
            .entries
            .values()
            .filter_map(|e| e.checked.as_ref()?.sources.get(&path))
            .filter(|s| !s.hovers.is_empty())
            .collect();
        let text = sources.first()?.text.clone();
        let rope = ropey::Rope::from_str(&text);
        let at = position::Text::new(&rope, state.encoding);
        let (span, markdown) = objects::hover_at(sources.into_iter(), at.offset(position))?;
        Some(convert::hover(at, fevlint_ide::Hover { span, markdown }))
    }
}

use crate::config;
