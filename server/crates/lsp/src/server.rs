//! The `LanguageServer` implementation: every handler converts its parameters, calls
//! one `ide`/analysis function on the document under a panic guard, converts back.
//!
//! Invariants:
//! - Document state changes only in `did_open`/`did_change`/`did_close` and
//!   configuration changes, synchronously before their first `.await` (std mutexes
//!   only), and an edit's publish is queued there too: `dispatch` polls each handler
//!   once before it reads the next message, so edits apply in the order the client sent
//!   them and a request sees the edits sent before it.
//! - Published diagnostics carry the version they were computed for, and a result for
//!   an older version is never published (checked under `publish`).
//! - A panic in a handler becomes an error response and a log message, never a dead
//!   server; a panic while editing a document resynchronises it from its text.

use super::blocks;
use super::config::{self, Layer, Settings};
use super::convert::{self, RuleDocs};
use super::cores::{self, Cores};
use super::document::Document;
use super::kernels::{self, Kernels, Load};
use super::position;
use super::workspace::{self, Dialect, Workspace};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_kernel::Kernel;
use fevlint_syntax::{LineParse, Parse, Target};
use std::collections::{HashMap, HashSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

mod bpf;

/// The action of a `fevlint.toml` problem's message.
const OPEN_CONFIG: &str = "Open fevlint.toml";

/// Kernel-aware checks plug in here. They run after a debounce on the latest text, off
/// the typing path and off the state lock, with the document's kernels that are loaded;
/// their result is dropped when the document changed meanwhile.
pub trait KernelCheck: Send + Sync + 'static {
    fn check(&self, text: &str, parse: &Parse, settings: &Settings, kernels: &[Arc<Kernel>]) -> Vec<Diagnostic>;
    /// The findings of some lines of `text` only (absolute spans), for a check that reads
    /// one line at a time: an edit then re-checks the lines it touched at once, without
    /// the debounce. `None` (the default): the whole text is checked after the debounce.
    fn check_lines(
        &self,
        _text: &str,
        _lines: &[LineParse],
        _target: Target,
        _kernels: &[Arc<Kernel>],
    ) -> Option<Vec<Diagnostic>> {
        None
    }

    /// Whether [`KernelCheck::check_lines`] answers (asked with no lines).
    fn reads_lines(&self) -> bool {
        self.check_lines("", &[], Target::default(), &[]).is_some()
    }
    /// Whether documents with these settings are checked at all.
    fn wants(&self, _settings: &Settings) -> bool {
        true
    }
}

/// The server's own kernel check: the kernel rules, once per configured kernel, each
/// diagnostic labelled with its kernel.
#[derive(Debug, Default)]
pub struct KernelRules {
    /// Findings per (kernel, line text): an edit re-checks only the lines it changed.
    cache: fevlint_check::analysis::KernelLineCache,
}

impl KernelCheck for KernelRules {
    fn check(&self, text: &str, parse: &Parse, _settings: &Settings, kernels: &[Arc<Kernel>]) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for k in kernels {
            // The `Arc`'s address identifies this load: a reload is a new `Arc`.
            let id = Arc::as_ptr(k) as usize;
            out.extend(self.cache.check(parse, text, k, id));
        }
        out
    }

    fn check_lines(
        &self,
        text: &str,
        lines: &[LineParse],
        target: Target,
        kernels: &[Arc<Kernel>],
    ) -> Option<Vec<Diagnostic>> {
        let mut out = Vec::new();
        for k in kernels {
            out.extend(self.cache.check_lines(lines, target, text, k, Arc::as_ptr(k) as usize));
        }
        Some(out)
    }

    fn wants(&self, settings: &Settings) -> bool {
        !settings.kernels.is_empty()
    }
}

/// Lines an edit may leave to re-check at once; more (a large paste of new text) wait
/// for the debounced check, off the typing path.
const INLINE_KERNEL_LINES: usize = 2_000;

/// What identifies the loaded kernels a check used.
fn kernel_ids(kernels: &[Arc<Kernel>]) -> Vec<usize> {
    kernels.iter().map(|k| Arc::as_ptr(k) as usize).collect()
}

/// How long the workspace's scripts on disk wait for their first check when the client
/// does not ask for them first.
const WORKSPACE_DELAY: Duration = Duration::from_secs(1);

/// How long the document must be still before kernel checks run.
pub const KERNEL_DEBOUNCE: Duration = Duration::from_millis(300);

/// `FEVLINT_KERNEL_DEBOUNCE_MS` overrides [`KERNEL_DEBOUNCE`] (benchmarks measure the
/// check itself with a short debounce).
fn debounce() -> Duration {
    std::env::var("FEVLINT_KERNEL_DEBOUNCE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(KERNEL_DEBOUNCE, Duration::from_millis)
}

/// `FEVLINT_BLOCK_LINES` overrides [`blocks::BLOCK_LINES`] (benchmarks compare sizes).
fn block_lines() -> u32 {
    std::env::var("FEVLINT_BLOCK_LINES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &u32| n > 0)
        .unwrap_or(blocks::BLOCK_LINES)
}

/// The largest document the server checks, in bytes and in lines: a larger one gets one
/// diagnostic and a `window/showMessage` saying so, and is checked again once edits bring
/// it under both (`fevlint check` has no such limit). Just under the limit, a script whose
/// every line draws a diagnostic (99,999 N101) publishes in under 3 s and 300 MB (release
/// build, `scripts/bench-lsp-bounds.py limit`); above it the cost grew with the document
/// (1,000,000 such lines, 19 MB: 36 s and 2.4 GB here, 7.7 GB in the issue's run).
pub const MAX_DOCUMENT_BYTES: usize = 4 << 20;
pub const MAX_DOCUMENT_LINES: usize = 100_000;

/// Why a text is too large to check, when it is.
fn too_large(rope: &ropey::Rope) -> Option<String> {
    let (bytes, lines) = (rope.len_bytes(), rope.len_lines());
    if bytes <= MAX_DOCUMENT_BYTES && lines <= MAX_DOCUMENT_LINES {
        return None;
    }
    Some(format!(
        "not checked: the document has {lines} lines ({:.1} MiB), over the language server's limit of \
         {MAX_DOCUMENT_LINES} lines and {} MiB; `fevlint check` checks it",
        bytes as f64 / f64::from(1 << 20),
        MAX_DOCUMENT_BYTES >> 20,
    ))
}

/// `fevlint/status`, a notification the server sends for each open document when what
/// decides its checks changes (opened, settings or `fevlint.toml` changed, a kernel
/// loaded or failed): the settings file, each configured kernel's state, the settings
/// problems, and whether the document is checked at all. Editors show it per document
/// instead of reading log lines.
///
/// ```json
/// {"uri": "file:///w/a.fev", "dialect": "fev", "checked": true, "config": "/w/fevlint.toml",
///  "kernels": [{"path": "/k/6.12", "state": "loaded", "name": "6.12.117+deb12-amd64", "types": "BTF"}],
///  "problems": [{"file": "/w/fevlint.toml", "message": "..."}]}
/// ```
///
/// `state` is `loading`, `loaded` (with `name`, `types`) or `failed` (with `error`);
/// `checked` is false for a document over the size limit (`refused` says why).
pub enum Status {}

impl tower_lsp_server::ls_types::notification::Notification for Status {
    type Params = serde_json::Value;
    const METHOD: &'static str = "fevlint/status";
}

/// What an edit did to a document over the size limit (or taken over it).
enum LargeEdit {
    /// Still over the limit; `newly` when this edit took a checked document over it.
    Refused {
        why: String,
        newly: bool,
    },
    /// Under the limit again: checked from now on.
    Checked,
    Failed(String),
}

/// An open document over the size limit: only its text is kept, so that edits can bring
/// it under the limit.
struct Large {
    rope: ropey::Rope,
    settings: Settings,
    mainline: bool,
    bpftrace: bool,
}

#[derive(Default)]
struct State {
    docs: HashMap<Uri, Document>,
    /// Open documents over the size limit (never also in `docs`).
    large: HashMap<Uri, Large>,
    /// The settings problems of each open document (see [`Status`]).
    problems: HashMap<Uri, Vec<config::Problem>>,
    /// Problems already shown with `window/showMessageRequest`: each is shown once while
    /// it lasts, and again if it comes back after a fix.
    shown: HashSet<config::Problem>,
    /// `initializationOptions` and the last `didChangeConfiguration`.
    init: Layer,
    client: Layer,
    related_information: bool,
    rule_docs: RuleDocs,
    /// The client shows `$/progress` (window.workDoneProgress).
    progress: bool,
    /// The client takes `workspace/didChangeWatchedFiles` registrations.
    watch: bool,
    /// The client takes `workspace/inlayHint/refresh`.
    inlay_refresh: bool,
    /// The client takes `workspace/diagnostic/refresh`.
    diagnostic_refresh: bool,
    /// What positions count, negotiated at `initialize`.
    encoding: position::Encoding,
    /// Kernel paths with a registered file watcher.
    watched: HashSet<std::path::PathBuf>,
    /// The workspace folders.
    roots: Vec<PathBuf>,
    /// The kernels the workspace's scripts on disk name (loaded as the open documents').
    workspace_kernels: Vec<PathBuf>,
    /// The client pulls the workspace's diagnostics (`workspace/diagnostic`): the
    /// scripts on disk are no longer pushed.
    workspace_pulled: bool,
    /// The kernels the workspace's BPF objects are checked against.
    object_kernels: Vec<PathBuf>,
    /// The client takes its open documents' diagnostics by block (`fevlint/diagnosticBlocks`,
    /// see [`blocks`]): `Some(lines per block)`.
    block_lines: Option<u32>,
    /// What such a client holds of each open document (also one over the size limit).
    sent_blocks: HashMap<Uri, blocks::Sent>,
}

struct Inner {
    client: Client,
    state: Mutex<State>,
    /// Held while checking a version is current and queueing its diagnostics (a
    /// synchronous lock: an edit's publish is queued before the next message is read).
    publish: Mutex<()>,
    check: Arc<dyn KernelCheck>,
    /// Invariant: taken after `state` when both are held, never before.
    kernels: Mutex<Kernels>,
    /// Invariant: taken after `state` and `kernels` when held with them.
    cores: Mutex<Cores>,
    debounce: Duration,
    shutdown: Arc<AtomicBool>,
    /// Numbers progress tokens and registrations.
    serial: std::sync::atomic::AtomicU64,
    /// The transport's frame queue: diagnostics are serialized straight to a frame
    /// there (see [`Inner::publish`]). Weak: the queue closes, and the writer
    /// ends, when the transport's own senders are gone.
    frames: tokio::sync::mpsc::WeakUnboundedSender<crate::transport::Out>,
    /// Large results written by the handlers themselves (see [`crate::transport::Raw`]).
    raw: crate::transport::Raw,
    /// The workspace's scripts on disk. Invariant: taken after `state` when both are held.
    workspace: Mutex<Workspace>,
    /// Woken when the workspace's scripts all have a report.
    settled: tokio::sync::Notify,
    /// Woken by the first `workspace/diagnostic`: the scripts on disk are checked now.
    wanted: tokio::sync::Notify,
    /// The workspace's compiled BPF objects ([`bpf`]).
    objects: Mutex<bpf::Objects>,
}

/// A script on disk checked: its report and hash, or why there is none.
type Checked = std::result::Result<serde_json::Result<(Vec<u8>, u64)>, String>;

/// A script on disk to check, with what it is checked with.
#[derive(Clone)]
struct WorkspaceJob {
    path: PathBuf,
    uri: Uri,
    dialect: Dialect,
    settings: Settings,
    kernels: Vec<Arc<Kernel>>,
}

impl WorkspaceJob {
    /// Reads and checks the script: its report and `resultId` hash (an unreadable or
    /// oversized file has none).
    fn run(&self, docs: &RuleDocs, related: bool, encoding: position::Encoding) -> serde_json::Result<(Vec<u8>, u64)> {
        let text = match std::fs::metadata(&self.path) {
            Ok(m) if m.len() <= MAX_DOCUMENT_BYTES as u64 => match std::fs::read(&self.path) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => String::new(),
            },
            _ => String::new(),
        };
        let refs: Vec<&Kernel> = self.kernels.iter().map(|k| k.as_ref()).collect();
        let found = workspace::check(self.dialect, &text, self.settings.target, &self.settings.rules, &refs);
        let mut w = convert::Writer::new(&self.uri, docs, related, self.settings.kernels.len() > 1);
        workspace::encode(&mut w, &text, encoding, &found)
    }
}

pub struct Backend(Arc<Inner>);

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("lsp::Backend")
    }
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

/// Runs `f`, turning a panic into its message.
fn guarded<R>(f: impl FnOnce() -> R) -> std::result::Result<R, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()))
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic is caught inside the lock, so poisoning only means "a handler failed".
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn kernels(&self) -> MutexGuard<'_, Kernels> {
        self.kernels.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn cores(&self) -> MutexGuard<'_, Cores> {
        self.cores.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The core a document's settings name, opened against its loaded kernels (off the
    /// async threads, once per core file and set of kernels); an error is told once.
    async fn core_for(&self, uri: &Uri) -> Option<cores::Opened> {
        let (path, loaded) = {
            let state = self.lock();
            let doc = state.docs.get(uri)?;
            let path = doc.settings.core.clone()?;
            let loaded = self.kernels().loaded(&doc.settings.kernels);
            (path, loaded)
        };
        if loaded.is_empty() {
            return None;
        }
        if let Some(r) = self.cores().get(&path, &loaded) {
            return r.ok();
        }
        let (p, k) = (path.clone(), loaded.clone());
        let result = match tokio::task::spawn_blocking(move || guarded(|| cores::open(&p, &k))).await {
            Ok(Ok(r)) => r,
            Ok(Err(panic)) => Err(format!("opening the core panicked: {panic}")),
            Err(e) => Err(e.to_string()),
        };
        match &result {
            Ok(o) => self.log(MessageType::INFO, format!("core {}: {}", path.display(), o.core.describe())).await,
            Err(e) => {
                let message = format!("fevlint: cannot use core {}: {e}", path.display());
                self.log(MessageType::WARNING, message.clone()).await;
                self.client.show_message(MessageType::WARNING, message).await;
            }
        }
        self.cores().put(&path, &loaded, result.clone());
        result.ok()
    }

    /// The loaded kernels of a document's settings.
    fn kernels_of(&self, settings: &Settings) -> Vec<Arc<Kernel>> {
        self.kernels().available(&settings.kernels).kernels
    }

    async fn log(&self, typ: MessageType, message: String) {
        eprintln!("fevlint lsp: {message}");
        self.client.log_message(typ, message).await;
    }

    /// Queues the publish of `uri` the server wrote itself (see [`Inner::publish`]); it
    /// replaces one of the same document the client has not read yet.
    fn send_publish(&self, uri: &Uri, body: &[u8]) {
        self.send_publish_frame(uri, crate::transport::frame(body));
    }

    /// Queues a `fevlint/diagnosticBlocks` notification: never replaced by a later one
    /// (each says what changed since the one before).
    fn send_blocks(&self, body: &[u8]) {
        if let Some(frames) = self.frames.upgrade() {
            let _ = frames.send(crate::transport::Out::new(crate::transport::frame(body)));
        }
    }

    /// [`Inner::send_publish`] of a whole frame (header and body).
    fn send_publish_frame(&self, uri: &Uri, frame: Vec<u8>) {
        if let Some(frames) = self.frames.upgrade() {
            let _ = frames.send(crate::transport::Out { frame, replaces: Some(uri.as_str().to_owned()) });
        }
    }

    /// The `fevlint/status` of an open document.
    fn status(&self, state: &State, uri: &Uri) -> Option<serde_json::Value> {
        let (settings, mainline, bpftrace, refused) = match (state.docs.get(uri), state.large.get(uri)) {
            (Some(d), _) => (&d.settings, d.mainline, d.bpftrace, None),
            (None, Some(l)) => (&l.settings, l.mainline, l.bpftrace, too_large(&l.rope)),
            (None, None) => return None,
        };
        let kernels = self.kernels();
        let kernels: Vec<serde_json::Value> = settings
            .kernels
            .iter()
            .map(|p| match kernels.state(p) {
                kernels::LoadState::Loading => serde_json::json!({"path": p, "state": "loading"}),
                kernels::LoadState::Loaded(k) => serde_json::json!({"path": p, "state": "loaded", "name": k.name,
                    "types": k.types_from.as_deref().unwrap_or("no types")}),
                kernels::LoadState::Failed(e) => serde_json::json!({"path": p, "state": "failed", "error": e}),
            })
            .collect();
        let problems: Vec<serde_json::Value> = state
            .problems
            .get(uri)
            .into_iter()
            .flatten()
            .map(|p| serde_json::json!({"file": p.file, "message": p.message}))
            .collect();
        let mut status = serde_json::json!({
            "uri": uri.as_str(),
            "dialect": if bpftrace { "bpftrace" } else if mainline { "dynevents" } else { "fev" },
            "checked": refused.is_none(),
            "config": settings.file,
            "kernels": kernels,
            "problems": problems,
        });
        if let Some(why) = refused {
            status["refused"] = serde_json::Value::String(why);
        }
        Some(status)
    }

    /// Sends the `fevlint/status` of each of `uris` still open.
    async fn send_status(&self, uris: &[Uri]) {
        let all: Vec<serde_json::Value> = {
            let state = self.lock();
            uris.iter().filter_map(|u| self.status(&state, u)).collect()
        };
        for status in all {
            self.client.send_notification::<Status>(status).await;
        }
    }

    /// Records the settings problems of `uri`, logs them, and shows each new one with
    /// `window/showMessageRequest`: a `fevlint.toml` at fault gets an "Open fevlint.toml"
    /// action, which opens it (`window/showDocument`).
    async fn tell_problems(self: &Arc<Self>, uri: &Uri, problems: Vec<config::Problem>) {
        let new: Vec<config::Problem> = {
            let mut state = self.lock();
            let new = problems.iter().filter(|p| !state.shown.contains(*p)).cloned().collect();
            state.shown.extend(problems.iter().cloned());
            if problems.is_empty() {
                state.problems.remove(uri);
            } else {
                state.problems.insert(uri.clone(), problems);
            }
            new
        };
        for p in new {
            self.log(MessageType::WARNING, p.to_string()).await;
            let inner = Arc::clone(self);
            tokio::spawn(async move {
                let message = format!("fevlint: {p}; these settings are not used");
                let open = p
                    .file
                    .as_ref()
                    .map(|_| MessageActionItem { title: OPEN_CONFIG.to_owned(), properties: HashMap::new() });
                let chosen =
                    inner.client.show_message_request(MessageType::WARNING, message, open.map(|o| vec![o])).await;
                if let (Ok(Some(item)), Some(file)) = (chosen, &p.file) {
                    if item.title == OPEN_CONFIG {
                        if let Some(uri) = Uri::from_file_path(file) {
                            let params =
                                ShowDocumentParams { uri, external: None, take_focus: Some(true), selection: None };
                            let _ = inner.client.show_document(params).await;
                        }
                    }
                }
            });
        }
    }

    /// Forgets shown problems no open document has any more (so they are shown again
    /// if they come back).
    fn forget_fixed_problems(&self) {
        let mut state = self.lock();
        let current: HashSet<config::Problem> = state.problems.values().flatten().cloned().collect();
        state.shown.retain(|p| current.contains(p));
    }

    /// Applies an edit to a document over the size limit, or to one the edit may take over
    /// it; `None` for any other.
    fn change_large(&self, uri: &Uri, version: i32, changes: &[TextDocumentContentChangeEvent]) -> Option<LargeEdit> {
        let mut state = self.lock();
        let mut was_checked = false;
        let encoding = state.encoding;
        // A checked document an edit may take over the limit (a 19 MB paste) leaves the
        // checks before the edit is read: at most this many bytes and lines are added.
        if let Some(doc) = state.docs.get(uri) {
            let bytes: usize = changes.iter().map(|c| c.text.len()).sum();
            let lines: usize =
                changes.iter().map(|c| c.text.bytes().filter(|&b| b == b'\n' || b == b'\r').count()).sum();
            if doc.text.len() + bytes <= MAX_DOCUMENT_BYTES && doc.rope.len_lines() + lines <= MAX_DOCUMENT_LINES {
                return None;
            }
            let doc = state.docs.remove(uri)?;
            was_checked = true;
            state.large.insert(
                uri.clone(),
                Large { rope: doc.rope, settings: doc.settings, mainline: doc.mainline, bpftrace: doc.bpftrace },
            );
        }
        let large = state.large.get_mut(uri)?;
        for change in changes {
            match change.range {
                Some(range) => {
                    let span = position::Text::new(&large.rope, encoding).span(range);
                    let (start, end) = (large.rope.byte_to_char(span.start), large.rope.byte_to_char(span.end));
                    large.rope.remove(start..end);
                    large.rope.insert(start, &change.text);
                }
                None => large.rope = ropey::Rope::from_str(&change.text),
            }
        }
        if let Some(why) = too_large(&large.rope) {
            return Some(LargeEdit::Refused { why, newly: was_checked });
        }
        let large = state.large.remove(uri)?;
        let text = large.rope.to_string();
        Some(match guarded(|| Document::with_dialects(text, version, large.settings, large.mainline, large.bpftrace)) {
            Ok(mut d) => {
                d.encoding = encoding;
                state.docs.insert(uri.clone(), d);
                LargeEdit::Checked
            }
            Err(p) => LargeEdit::Failed(format!("opening {} failed: {p}", uri.as_str())),
        })
    }

    /// Publishes the one diagnostic of a document over the size limit.
    fn publish_refusal(&self, uri: &Uri, version: i32, why: &str) {
        let diagnostic = tower_lsp_server::ls_types::Diagnostic {
            range: Range::default(),
            severity: Some(DiagnosticSeverity::WARNING),
            source: Some("fevlint".to_owned()),
            message: why.to_owned(),
            ..Default::default()
        };
        {
            let _order = self.publish.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let mut state = self.lock();
            if let Some(block_lines) = state.block_lines {
                let lines = state.large.get(uri).map_or(1, |l| l.rope.len_lines());
                let item = serde_json::to_vec(&[diagnostic]).unwrap_or_else(|_| b"[]".to_vec());
                let hashes = [crate::encoded::hash_bytes(&item).max(1)];
                let count = blocks::count(lines, 1, block_lines);
                let sent = state.sent_blocks.entry(uri.clone()).or_default();
                let body = blocks::update(sent, uri, Some(version), block_lines, count, &hashes, &mut |_, out| {
                    out.extend_from_slice(&item);
                });
                if let Some(body) = body {
                    self.send_blocks(&body);
                }
                return;
            }
        }
        let params =
            PublishDiagnosticsParams { uri: uri.clone(), diagnostics: vec![diagnostic], version: Some(version) };
        let body = serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics", "params": params});
        self.send_publish(uri, body.to_string().as_bytes());
    }

    /// Publishes the diagnostics of `version`, unless the document moved on or its
    /// findings are the ones last published.
    async fn publish(&self, uri: Uri, version: i32) {
        let order = self.publish.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let body = {
            let mut state = self.lock();
            let State { docs, rule_docs, related_information, diagnostic_refresh, block_lines, sent_blocks, .. } =
                &mut *state;
            let diagnostic_refresh = *diagnostic_refresh;
            let Some(doc) = docs.get_mut(&uri) else { return };
            if doc.version != version {
                return;
            }
            if let Some(block_lines) = *block_lines {
                let sent = sent_blocks.entry(uri.clone()).or_default();
                match guarded(|| changed_blocks(doc, &uri, rule_docs, *related_information, sent, block_lines)) {
                    Ok(Ok(Some(body))) => return self.send_blocks(&body),
                    Ok(Ok(None)) => return,
                    Ok(Err(e)) => Ok(Err(e)),
                    Err(p) => Err(Some(p)),
                }
            } else {
                match guarded(|| prepare(doc, &uri, rule_docs, *related_information)) {
                    Ok(Ok(r)) if doc.pulled => {
                        // The client pulls: it is told to ask again when what it has is old.
                        if doc.pulled_id != Some(r.id) && diagnostic_refresh {
                            Err(None)
                        } else {
                            return;
                        }
                    }
                    Ok(Ok(r)) => {
                        if doc.published == Some(r.id) {
                            return;
                        }
                        doc.published = Some(r.id);
                        let mut w = writer(doc, &uri, rule_docs, *related_information);
                        Ok(convert::publish_frame(&uri, Some(version), r.len(doc), |out| r.write(doc, &mut w, out)))
                    }
                    Ok(Err(e)) => Ok(Err(e)),
                    Err(p) => Err(Some(p)),
                }
            }
        };
        let body = body.map(|b| b.map(|frame| self.send_publish_frame(&uri, frame)));
        drop(order);
        match body {
            Ok(Ok(())) => {}
            Ok(Err(e)) => self.log(MessageType::ERROR, format!("serializing diagnostics failed: {e}")).await,
            Err(None) => self.refresh_diagnostics(),
            Err(Some(p)) => self.log(MessageType::ERROR, format!("converting diagnostics failed: {p}")).await,
        }
    }

    /// Asks the client to pull diagnostics again (`workspace/diagnostic/refresh`), off the
    /// caller's path.
    fn refresh_diagnostics(&self) {
        let client = self.client.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(5), client.workspace_diagnostic_refresh()).await;
        });
    }

    /// A pull report of an open document (`textDocument/diagnostic`): "unchanged" when
    /// its findings are those of `previous`, else the full report, written from the
    /// encoded findings (see [`crate::transport::Raw`]). A document pulled once is no
    /// longer pushed; what was pushed for it is cleared.
    fn pull(&self, uri: &Uri, previous: Option<&str>) -> std::result::Result<DocumentDiagnosticReportResult, String> {
        let mut state = self.lock();
        let State { docs, rule_docs, related_information, .. } = &mut *state;
        let Some(doc) = docs.get_mut(uri) else {
            // A `.bpf.c` a workspace's objects point at: their findings.
            let Some((items, id)) = self.object_report(uri) else {
                return Ok(full_report(Some(String::new()), Vec::new()));
            };
            let result_id = format!("{id:016x}");
            let mut body = Vec::with_capacity(items.len() + 64);
            body.extend_from_slice(br#"{"kind":"full","resultId":""#);
            body.extend_from_slice(result_id.as_bytes());
            body.extend_from_slice(br#"","items":"#);
            body.extend_from_slice(&items);
            body.push(b'}');
            return Ok(full_report(Some(self.raw.put(body)), Vec::new()));
        };
        let r = match guarded(|| prepare(doc, uri, rule_docs, *related_information)) {
            Ok(Ok(r)) => r,
            Ok(Err(e)) => return Err(format!("serializing diagnostics failed: {e}")),
            Err(p) => return Err(format!("converting diagnostics failed: {p}")),
        };
        let id = r.id;
        let first = !std::mem::replace(&mut doc.pulled, true);
        doc.pulled_id = Some(id);
        let result_id = format!("{id:016x}");
        if first && doc.published.is_some() {
            // What was pushed stays in the client's other collection until cleared.
            doc.published = None;
            if let Ok(body) = convert::publish_frame_body(uri, None, b"[]") {
                self.send_publish(uri, &body);
            }
        }
        if previous == Some(result_id.as_str()) {
            return Ok(DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Unchanged(
                RelatedUnchangedDocumentDiagnosticReport {
                    related_documents: None,
                    unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id },
                },
            )));
        }
        let mut body = Vec::with_capacity(r.len(doc) + 64);
        body.extend_from_slice(br#"{"kind":"full","resultId":""#);
        body.extend_from_slice(result_id.as_bytes());
        body.extend_from_slice(br#"","items":"#);
        r.write(doc, &mut writer(doc, uri, rule_docs, *related_information), &mut body);
        body.push(b'}');
        Ok(full_report(Some(self.raw.put(body)), Vec::new()))
    }

    /// Re-checks against the kernels the lines an edit touched, at once, when the other
    /// lines' findings were made with the same loaded kernels and the check reads one line
    /// at a time. False when the debounced whole check must run instead (also for a
    /// document no kernel check applies to: it then returns at once).
    fn recheck_lines(&self, doc: &mut Document) -> bool {
        if doc.mainline || !self.check.wants(&doc.settings) {
            return false;
        }
        let available = self.kernels().available(&doc.settings.kernels);
        if available.waiting {
            return false;
        }
        let ids = kernel_ids(&available.kernels);
        let Some(todo) = doc.kernel_lines_to_check(&ids) else { return false };
        if todo.len() > INLINE_KERNEL_LINES {
            return false;
        }
        let lines: Vec<LineParse> = todo.iter().map(|&i| doc.parse.lines[i].clone()).collect();
        let Some(mut found) = self.check.check_lines(&doc.text, &lines, doc.parse.target, &available.kernels) else {
            return false;
        };
        found.retain(|d| doc.settings.rules.enabled(d.code));
        doc.set_kernel_findings(&ids, &todo, found);
        true
    }

    /// Starts the debounced kernel check of `version`, when kernel checks apply.
    fn schedule_kernel(self: &Arc<Self>, uri: Uri, version: i32) {
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(inner.debounce).await;
            let (text, parse, settings, mainline, bpftrace) = {
                let state = inner.lock();
                let Some(doc) = state.docs.get(&uri) else { return };
                if doc.version != version || (!doc.mainline && !inner.check.wants(&doc.settings)) {
                    return; // stale: a newer version has its own check scheduled
                }
                if doc.mainline && doc.settings.kernels.is_empty() {
                    return;
                }
                (doc.text.clone(), doc.parse.clone(), doc.settings.clone(), doc.mainline, doc.bpftrace)
            };
            let available = inner.kernels().available(&settings.kernels);
            if available.waiting {
                return; // a kernel is loading: its end schedules the check again
            }
            let check = Arc::clone(&inner.check);
            let rules = settings.rules.clone();
            let ids = kernel_ids(&available.kernels);
            let per_line = !mainline && inner.check.reads_lines();
            let job = tokio::task::spawn_blocking(move || {
                guarded(|| {
                    if bpftrace {
                        let refs: Vec<&Kernel> = available.kernels.iter().map(|k| k.as_ref()).collect();
                        fevlint_check::bpftrace::check(&text, &refs)
                    } else if mainline {
                        let refs: Vec<&Kernel> = available.kernels.iter().map(|k| k.as_ref()).collect();
                        fevlint_check::dynevents::check(&text, &refs)
                    } else {
                        check.check(&text, &parse, &settings, &available.kernels)
                    }
                })
            });
            let done = match job.await {
                Ok(Ok(mut found)) => {
                    found.retain(|d| rules.enabled(d.code));
                    let mut state = inner.lock();
                    let Some(doc) = state.docs.get_mut(&uri) else { return };
                    if doc.version != version {
                        return; // the document changed while the check ran
                    }
                    if per_line {
                        let every: Vec<usize> = (0..doc.parse.lines.len()).collect();
                        doc.set_kernel_findings(&ids, &every, found);
                    } else {
                        doc.set_kernel_whole(found);
                    }
                    Ok(())
                }
                Ok(Err(p)) => Err(p),
                Err(e) => Err(e.to_string()),
            };
            match done {
                Ok(()) => inner.publish(uri, version).await,
                Err(p) => inner.log(MessageType::ERROR, format!("kernel check failed: {p}")).await,
            }
        });
    }

    /// Every kernel path an open document names.
    fn kernel_paths(state: &State) -> Vec<std::path::PathBuf> {
        let mut paths: Vec<_> = state.docs.values().flat_map(|d| d.settings.kernels.iter().cloned()).collect();
        paths.extend(state.workspace_kernels.iter().cloned());
        paths.extend(state.object_kernels.iter().cloned());
        paths.sort();
        paths.dedup();
        paths
    }

    /// Starts loading the kernels the documents name and do not have yet (and, with
    /// `recheck`, those whose files changed).
    fn sync_kernels(self: &Arc<Self>, recheck: bool) {
        let loads = {
            let state = self.lock();
            let paths = Self::kernel_paths(&state);
            self.kernels().sync(&paths, recheck)
        };
        for load in loads {
            self.start_load(load);
        }
    }

    /// Loads one kernel in the background, with `$/progress` when the client shows it;
    /// then re-checks the documents naming it.
    fn start_load(self: &Arc<Self>, load: Load) {
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            let n = inner.serial.fetch_add(1, Ordering::SeqCst);
            let key = load.key.clone();
            let cache = inner.kernels().cache.clone();
            let job = tokio::task::spawn_blocking(move || kernels::open(&key, &cache));
            let (progress, watch) = {
                let state = inner.lock();
                (state.progress, state.watch && !state.watched.contains(&load.key))
            };
            let shown = load.key.display().to_string();
            let ongoing = if progress {
                let token = ProgressToken::String(format!("fevlint/kernel/{n}"));
                let created =
                    tokio::time::timeout(Duration::from_secs(2), inner.client.create_work_done_progress(token.clone()))
                        .await;
                match created {
                    Ok(Ok(())) => Some(
                        inner
                            .client
                            .progress(token, "fevlint: loading kernel")
                            .with_message(shown.clone())
                            .begin()
                            .await,
                    ),
                    _ => None,
                }
            } else {
                None
            };
            let result = match job.await {
                Ok(r) => r,
                Err(e) => Err(format!("loading panicked: {e}")),
            };
            let summary = match &result {
                Ok(k) => format!("{} loaded ({})", k.name, k.types_from.as_deref().unwrap_or("no types")),
                Err(e) => format!("failed: {e}"),
            };
            let error = result.as_ref().err().cloned();
            let accepted = inner.kernels().finish(&load, result);
            if let Some(p) = ongoing {
                p.finish_with_message(summary.clone()).await;
            }
            if !accepted {
                return;
            }
            match error {
                Some(e) => {
                    let message = format!("fevlint: cannot load kernel {shown}: {e}");
                    inner.log(MessageType::WARNING, message.clone()).await;
                    inner.client.show_message(MessageType::WARNING, message).await;
                }
                None => inner.log(MessageType::INFO, format!("kernel {shown}: {summary}")).await,
            }
            if watch {
                inner.watch_kernel(&load.key).await;
            }
            let (docs, refresh) = {
                let state = inner.lock();
                let docs: Vec<(Uri, i32)> = state
                    .docs
                    .iter()
                    .filter(|(_, d)| d.settings.kernels.iter().any(|p| kernels::key(p) == load.key))
                    .map(|(u, d)| (u.clone(), d.version))
                    .collect();
                (docs, state.inlay_refresh)
            };
            let uris: Vec<Uri> = docs.iter().map(|(u, _)| u.clone()).collect();
            for (uri, version) in docs {
                inner.schedule_kernel(uri, version);
            }
            inner.send_status(&uris).await;
            // The scripts on disk that name it are checked (again) with it.
            {
                let mut ws = inner.workspace();
                for f in ws.files.values_mut() {
                    if f.kernels.iter().any(|p| kernels::key(p) == load.key) {
                        f.stale = true;
                    }
                }
            }
            inner.check_workspace();
            inner.objects_touched(&[], Some(&load.key));
            if refresh {
                let _ = inner.client.inlay_hint_refresh().await;
            }
        });
    }

    /// Registers a file watcher for a kernel's files (its folder, or the file itself).
    async fn watch_kernel(&self, key: &std::path::Path) {
        if !self.lock().watched.insert(key.to_owned()) {
            return;
        }
        let glob = if key.is_dir() { format!("{}/**", key.display()) } else { key.display().to_string() };
        self.register_watchers(vec![glob]).await;
    }

    async fn register_watchers(&self, globs: Vec<String>) {
        let n = self.serial.fetch_add(1, Ordering::SeqCst);
        let options = DidChangeWatchedFilesRegistrationOptions {
            watchers: globs
                .into_iter()
                .map(|g| FileSystemWatcher { glob_pattern: GlobPattern::String(g), kind: None })
                .collect(),
        };
        let registration = Registration {
            id: format!("fevlint/watch/{n}"),
            method: "workspace/didChangeWatchedFiles".to_owned(),
            register_options: serde_json::to_value(options).ok(),
        };
        let sent = tokio::time::timeout(Duration::from_secs(2), self.client.register_capability(vec![registration]));
        if let Ok(Err(e)) = sent.await {
            self.log(MessageType::WARNING, format!("cannot register file watchers: {e}")).await;
        }
    }

    /// Settings changed (client layer or a `fevlint.toml`): resolves every document's
    /// settings again, re-checks, and reloads kernels whose files changed.
    async fn reconfigure(self: &Arc<Self>, mut logs: Vec<String>) {
        let mut republish = Vec::new();
        let mut problems = Vec::new();
        {
            let mut state = self.lock();
            let uris: Vec<Uri> = state.docs.keys().chain(state.large.keys()).cloned().collect();
            for uri in uris {
                let (settings, found) = Inner::settings_for(&state, &uri);
                problems.push((uri.clone(), found));
                if let Some(large) = state.large.get_mut(&uri) {
                    large.settings = settings;
                    continue;
                }
                if let Some(doc) = state.docs.get_mut(&uri) {
                    if doc.settings != settings {
                        if let Err(p) = guarded(|| doc.set_settings(settings)) {
                            logs.push(format!("re-checking {} failed: {p}", uri.as_str()));
                        }
                    }
                    republish.push((uri, doc.version));
                }
            }
        }
        for l in logs {
            self.log(MessageType::WARNING, l).await;
        }
        {
            let mut state = self.lock();
            for (uri, found) in &problems {
                state.problems.insert(uri.clone(), found.clone());
            }
        }
        self.forget_fixed_problems();
        let uris: Vec<Uri> = problems.iter().map(|(u, _)| u.clone()).collect();
        for (uri, found) in problems {
            self.tell_problems(&uri, found).await;
        }
        self.sync_kernels(true);
        self.send_status(&uris).await;
        let used: Vec<PathBuf> = self.lock().docs.values().filter_map(|d| d.settings.core.clone()).collect();
        self.cores().retain(&used);
        if self.lock().inlay_refresh {
            let _ = self.client.inlay_hint_refresh().await;
        }
        for (uri, v) in republish {
            self.publish(uri.clone(), v).await;
            self.schedule_kernel(uri, v);
        }
        self.scan_objects();
    }

    fn workspace(&self) -> MutexGuard<'_, Workspace> {
        self.workspace.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Finds the workspace's scripts (off the async threads), then checks them: at once
    /// when the client asks for them (`workspace/diagnostic`), else after
    /// [`WORKSPACE_DELAY`], so that the documents opened with the editor come first.
    fn scan_workspace(self: &Arc<Self>) {
        let roots = self.lock().roots.clone();
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            let found = tokio::task::spawn_blocking(move || workspace::scan(&roots)).await.unwrap_or_default();
            {
                let mut ws = inner.workspace();
                for path in found {
                    ws.files.entry(path).or_default().stale = true;
                }
                ws.scanned = true;
            }
            let _ = tokio::time::timeout(WORKSPACE_DELAY, inner.wanted.notified()).await;
            inner.check_workspace();
        });
    }

    /// Checks the workspace's stale scripts on disk whose kernels are loaded, in the
    /// background, two at a time; pushes their diagnostics to a client that does not
    /// pull, or asks a pulling client to pull again. Open documents are reported from
    /// their text, not from disk.
    fn check_workspace(self: &Arc<Self>) {
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let (jobs, sync) = inner.workspace_jobs();
                if sync {
                    inner.sync_kernels(false);
                }
                if jobs.is_empty() {
                    break;
                }
                let (docs, related, encoding) = {
                    let state = inner.lock();
                    (state.rule_docs.clone(), state.related_information, state.encoding)
                };
                // Two workers take the next script as each finishes (scripts differ in
                // size: halves fixed in advance left one core idle while the other
                // finished its half); the reports are kept in the scripts' order.
                let jobs = Arc::new(jobs);
                let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                let mut parts = Vec::new();
                for _ in 0..jobs.len().min(2) {
                    let (jobs, next, docs) = (Arc::clone(&jobs), Arc::clone(&next), docs.clone());
                    parts.push(tokio::task::spawn_blocking(move || {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(job) = jobs.get(i) else { break };
                            done.push((i, job.path.clone(), guarded(|| job.run(&docs, related, encoding))));
                        }
                        done
                    }));
                }
                let mut done = Vec::new();
                for p in parts {
                    done.extend(p.await.unwrap_or_default());
                }
                done.sort_by_key(|&(i, _, _)| i);
                inner.workspace_results(done.into_iter().map(|(_, path, result)| (path, result)).collect()).await;
            }
            let settled = inner.workspace().settled();
            if settled {
                inner.settled.notify_waiters();
            }
        });
    }

    /// The next scripts to check (at most a batch), and whether the kernels they name
    /// must be loaded first.
    fn workspace_jobs(&self) -> (Vec<WorkspaceJob>, bool) {
        let state = self.lock();
        let mut ws = self.workspace();
        let mut jobs = Vec::new();
        let mut sync = false;
        let mut names = Vec::new();
        for (path, f) in ws.files.iter_mut() {
            if !f.stale || f.running || jobs.len() >= 64 {
                continue;
            }
            let Some(uri) = Uri::from_file_path(path) else { continue };
            let Some(dialect) = Dialect::of(path) else { continue };
            if state.docs.contains_key(&uri) || state.large.contains_key(&uri) {
                // Reported from the open text; checked from disk again when closed.
                f.stale = false;
                f.items.get_or_insert_with(|| b"[]".to_vec());
                continue;
            }
            let (settings, _) = Inner::settings_for(&state, &uri);
            if f.kernels != settings.kernels {
                f.kernels = settings.kernels.clone();
                sync = true;
            }
            names.extend(settings.kernels.iter().cloned());
            let available = self.kernels().available(&settings.kernels);
            if available.waiting {
                sync = true;
                continue; // checked when its kernels have loaded
            }
            f.stale = false;
            f.running = true;
            jobs.push(WorkspaceJob { path: path.clone(), uri, dialect, settings, kernels: available.kernels });
        }
        drop(ws);
        drop(state);
        if sync {
            let mut state = self.lock();
            let ws = self.workspace();
            let mut all: Vec<PathBuf> = ws.files.values().flat_map(|f| f.kernels.iter().cloned()).collect();
            all.sort();
            all.dedup();
            state.workspace_kernels = all;
        }
        (jobs, sync)
    }

    /// Stores the reports of checked scripts; pushes them or asks for a pull.
    ///
    /// A script opened while its check from disk ran is not pushed: the open text's
    /// publish owns its diagnostics, and a later one of the same document would replace
    /// it in the client's queue (seen as a kernel finding that never arrived for
    /// `version` 1). The state lock is held until the pushes are queued, so an open
    /// cannot fall between the test and the push.
    async fn workspace_results(&self, done: Vec<(PathBuf, Checked)>) {
        let mut failures = Vec::new();
        let mut changed = false;
        let (pulled, refresh) = {
            let state = self.lock();
            let (pulled, refresh) = (state.workspace_pulled, state.diagnostic_refresh);
            let mut pushes = Vec::new();
            let mut ws = self.workspace();
            for (path, result) in done {
                let Some(f) = ws.files.get_mut(&path) else { continue };
                f.running = false;
                let (items, id) = match result {
                    Ok(Ok(r)) => r,
                    Ok(Err(e)) => {
                        failures.push(format!("{}: serializing diagnostics failed: {e}", path.display()));
                        (b"[]".to_vec(), 0)
                    }
                    Err(p) => {
                        failures.push(format!("checking {} failed: {p}", path.display()));
                        (b"[]".to_vec(), 0)
                    }
                };
                if f.items.is_some() && f.id == id {
                    continue;
                }
                let Some(uri) = Uri::from_file_path(&path) else { continue };
                if state.docs.contains_key(&uri) || state.large.contains_key(&uri) {
                    // Opened meanwhile: reported from the open text; checked again when closed.
                    f.items.get_or_insert_with(|| b"[]".to_vec());
                    continue;
                }
                changed = true;
                f.id = id;
                if !pulled && (items.len() > 2 || f.pushed) {
                    f.pushed = items.len() > 2;
                    pushes.push((uri, items.clone()));
                }
                f.items = Some(items);
            }
            drop(ws);
            for (uri, items) in pushes {
                if let Ok(body) = convert::publish_frame_body(&uri, None, &items) {
                    self.send_publish(&uri, &body);
                }
            }
            drop(state);
            (pulled, refresh)
        };
        for f in failures {
            self.log(MessageType::ERROR, f).await;
        }
        if pulled && refresh && changed {
            self.refresh_diagnostics();
        }
    }

    /// The `workspace/diagnostic` report: every script of the workspace, open or on
    /// disk, once all have been checked; "unchanged" for those whose findings are those
    /// of `previous`.
    async fn workspace_report(self: &Arc<Self>, previous: &[PreviousResultId]) -> std::result::Result<String, String> {
        let pushed: Vec<Uri> = {
            self.wanted.notify_one();
            let mut state = self.lock();
            state.workspace_pulled = true;
            let mut ws = self.workspace();
            ws.files
                .iter_mut()
                .filter_map(|(p, f)| std::mem::take(&mut f.pushed).then_some(p))
                .filter_map(Uri::from_file_path)
                .collect()
        };
        for uri in pushed {
            if let Ok(body) = convert::publish_frame_body(&uri, None, b"[]") {
                self.send_publish(&uri, &body);
            }
        }
        // The first report waits for the scripts' checks (bounded).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let wait = self.settled.notified();
            if self.workspace().settled() || tokio::time::Instant::now() >= deadline {
                break;
            }
            let _ = tokio::time::timeout_at(deadline, wait).await;
        }
        let previous: HashMap<&str, &str> = previous.iter().map(|p| (p.uri.as_str(), p.value.as_str())).collect();
        let mut out = Vec::with_capacity(1 << 16);
        out.extend_from_slice(br#"{"items":["#);
        let mut first = true;
        let mut item = |out: &mut Vec<u8>, uri: &Uri, version: Option<i32>, id: u64, items: &[u8]| {
            if !first {
                out.push(b',');
            }
            first = false;
            let result_id = format!("{id:016x}");
            let unchanged = previous.get(uri.as_str()) == Some(&result_id.as_str());
            out.extend_from_slice(if unchanged {
                br#"{"kind":"unchanged","uri":"#
            } else {
                br#"{"kind":"full","uri":"#
            });
            let _ = serde_json::to_writer(&mut *out, uri.as_str());
            out.extend_from_slice(br#","version":"#);
            match version {
                Some(v) => out.extend_from_slice(v.to_string().as_bytes()),
                None => out.extend_from_slice(b"null"),
            }
            out.extend_from_slice(br#","resultId":""#);
            out.extend_from_slice(result_id.as_bytes());
            out.push(b'"');
            if !unchanged {
                out.extend_from_slice(br#","items":"#);
                out.extend_from_slice(items);
            }
            out.push(b'}');
        };
        let mut state = self.lock();
        let State { docs, rule_docs, related_information, .. } = &mut *state;
        let mut open = HashSet::new();
        for (uri, doc) in docs.iter_mut() {
            let (items, id) = match guarded(|| report(doc, uri, rule_docs, *related_information)) {
                Ok(Ok(r)) => r,
                Ok(Err(e)) => return Err(format!("serializing diagnostics failed: {e}")),
                Err(p) => return Err(format!("converting diagnostics failed: {p}")),
            };
            item(&mut out, uri, Some(doc.version), id, &items);
            open.insert(uri.clone());
        }
        let ws = self.workspace();
        for (path, f) in &ws.files {
            let (Some(uri), Some(items)) = (Uri::from_file_path(path), &f.items) else { continue };
            if !open.contains(&uri) {
                item(&mut out, &uri, None, f.id, items);
            }
        }
        drop(ws);
        for (path, items, id) in self.objects().reports() {
            if let Some(uri) = Uri::from_file_path(path) {
                item(&mut out, &uri, None, id, items);
            }
        }
        out.extend_from_slice(b"]}");
        Ok(self.raw.put(out))
    }

    /// Runs `f` on an open document without bringing its tree up to date (for answers
    /// kept per line); `None` for a document not open.
    async fn with_doc<R>(
        &self,
        what: &str,
        uri: &Uri,
        f: impl FnOnce(&mut Document) -> Option<R>,
    ) -> Result<Option<R>> {
        let result = {
            let mut state = self.lock();
            match state.docs.get_mut(uri) {
                Some(doc) => guarded(|| f(doc)),
                None => Ok(None),
            }
        };
        match result {
            Ok(r) => Ok(r),
            Err(p) => {
                self.log(MessageType::ERROR, format!("{what} failed: {p}")).await;
                Err(Error::internal_error())
            }
        }
    }

    /// Keeps `data` as the document's last full semantic tokens and writes the response
    /// (see [`crate::transport::Raw`]); the placeholder token.
    fn sent_tokens(&self, doc: &mut Document, data: Vec<u32>) -> String {
        let id = self.serial.fetch_add(1, Ordering::SeqCst);
        let mut body = Vec::with_capacity(data.len() * 3 + 32);
        body.extend_from_slice(br#"{"resultId":""#);
        convert::itoa(&mut body, id as u32);
        body.extend_from_slice(br#"","data":["#);
        for (i, n) in data.iter().enumerate() {
            if i > 0 {
                body.push(b',');
            }
            convert::itoa(&mut body, *n);
        }
        body.extend_from_slice(b"]}");
        doc.sent_tokens = Some((u64::from(id as u32), data));
        self.raw.put(body)
    }

    /// Runs a read-only request on an open document with its loaded kernels; unopened
    /// documents answer `R::default()`.
    /// Answers a request from the document and its kernels. `reads_tree` says whether `f`
    /// reads the syntax tree: edits leave it behind (diagnostics do not read it), and
    /// reparsing the tree of a 50,000-line script costs 50-300 ms after every edit, so it
    /// is brought up to date only for a request that reads it (hover, completion after a
    /// field's start, the outline and tokens' fallbacks), never for code actions (asked
    /// by VS Code after every edit), formatting or inlay hints, which read the lines.
    async fn request<R: Default>(
        &self,
        what: &str,
        uri: &Uri,
        reads_tree: impl FnOnce(&Document) -> bool,
        f: impl FnOnce(&State, &Document, &[&Kernel]) -> R,
    ) -> Result<R> {
        let result = {
            let mut state = self.lock();
            let Some(doc) = state.docs.get_mut(uri) else { return Ok(R::default()) };
            let refreshed = if reads_tree(doc) { guarded(|| doc.refresh_tree()) } else { Ok(()) };
            let state = &*state;
            let Some(doc) = state.docs.get(uri) else { return Ok(R::default()) };
            // The `*.fev` features read the function-event parse: a mainline document
            // has its own hover, completion and fixes only.
            if doc.mainline && !matches!(what, "hover" | "codeAction" | "completion") {
                return Ok(R::default());
            }
            let kernels = self.kernels_of(&doc.settings);
            let refs: Vec<&Kernel> = kernels.iter().map(|k| k.as_ref()).collect();
            refreshed.and_then(|()| guarded(|| f(state, doc, &refs)))
        };
        match result {
            Ok(r) => Ok(r),
            Err(p) => {
                self.log(MessageType::ERROR, format!("{what} failed: {p}")).await;
                Err(Error::internal_error())
            }
        }
    }

    fn settings_for(state: &State, uri: &Uri) -> (Settings, Vec<config::Problem>) {
        let path = uri.to_file_path().map(|p| p.into_owned());
        config::resolve(path.as_deref(), &[&state.init, &state.client])
    }
}

impl Backend {
    /// A server; `kernel` replaces the kernel rules ([`KernelRules`]) as the kernel check.
    /// `frames`: the transport's output queue, where diagnostics go directly. Kernels
    /// keep their decompressions and indexes in `cache`.
    pub fn new(
        client: Client,
        kernel: Option<Arc<dyn KernelCheck>>,
        shutdown: Arc<AtomicBool>,
        frames: tokio::sync::mpsc::WeakUnboundedSender<crate::transport::Out>,
        raw: crate::transport::Raw,
        cache: fevlint_load::cache::Cache,
    ) -> Backend {
        Backend(Arc::new(Inner {
            client,
            state: Mutex::new(State::default()),
            publish: Mutex::new(()),
            check: kernel.unwrap_or_else(|| Arc::new(KernelRules::default())),
            kernels: Mutex::new(Kernels::new(cache)),
            cores: Mutex::new(Cores::default()),
            debounce: debounce(),
            shutdown,
            serial: std::sync::atomic::AtomicU64::new(0),
            frames,
            raw,
            workspace: Mutex::new(Workspace::default()),
            settled: tokio::sync::Notify::new(),
            wanted: tokio::sync::Notify::new(),
            objects: Mutex::new(bpf::Objects::default()),
        }))
    }
}

/// The JSON array of a document's diagnostics as they go out (kernel findings and
/// suppression comments applied), and its `resultId` hash. A `*.fev` document without
/// suppression comments copies its lines' encoded findings ([`Document::report`]);
/// others are converted whole.
fn report(
    doc: &mut Document,
    uri: &Uri,
    docs: &RuleDocs,
    related_information: bool,
) -> serde_json::Result<(Vec<u8>, u64)> {
    let r = prepare(doc, uri, docs, related_information)?;
    match r.items {
        Some(items) => Ok((items, r.id)),
        None => {
            let mut items = Vec::with_capacity(doc.items_len());
            doc.write_items(&mut writer(doc, uri, docs, related_information), &mut items);
            Ok((items, r.id))
        }
    }
}

/// A document's report before it is written out: its `resultId` hash, and its JSON
/// array when the document does not keep its lines encoded (those are written from the
/// document, [`Report::write`], once it is known that they must be sent).
struct Report {
    id: u64,
    items: Option<Vec<u8>>,
}

impl Report {
    fn len(&self, doc: &Document) -> usize {
        self.items.as_ref().map_or_else(|| doc.items_len(), Vec::len)
    }

    /// `w`: a [`writer`] of the document, as [`prepare`] made.
    fn write(&self, doc: &Document, w: &mut convert::Writer<'_>, out: &mut Vec<u8>) {
        match &self.items {
            Some(items) => out.extend_from_slice(items),
            None => doc.write_items(w, out),
        }
    }
}

/// What writes a document's diagnostics (the client's capabilities, the kernels' labels).
fn writer<'a>(doc: &Document, uri: &'a Uri, docs: &'a RuleDocs, related_information: bool) -> convert::Writer<'a> {
    convert::Writer::new(uri, docs, related_information, doc.settings.kernels.len() > 1)
}

/// [`report`] up to the writing: what a publish that may be skipped needs.
fn prepare(doc: &mut Document, uri: &Uri, docs: &RuleDocs, related_information: bool) -> serde_json::Result<Report> {
    let mut w = writer(doc, uri, docs, related_information);
    let mut items = Vec::with_capacity(1 << 12);
    // The kernels' findings arriving is news even when there are none: a client waiting
    // for them gets that publish.
    let complete = if doc.kernel_complete() { 0x9e37_79b9_7f4a_7c15 } else { 0 };
    if doc.encodes_lines() {
        return Ok(Report { id: doc.encode(&mut w) ^ complete, items: None });
    }
    let all = settled(doc);
    let at = doc.positions();
    items.push(b'[');
    for (i, d) in all.iter().enumerate() {
        if i > 0 {
            items.push(b',');
        }
        w.write(&mut items, at.range(d.span), d, &mut |out, line| convert::itoa(out, line))?;
    }
    items.push(b']');
    let id = crate::encoded::hash_bytes(&items);
    Ok(Report { id: id ^ complete, items: Some(items) })
}

/// The `fevlint/diagnosticBlocks` notification of the blocks of `doc` whose diagnostics
/// changed since `sent` (see [`blocks`]), or `None` when none did.
fn changed_blocks(
    doc: &mut Document,
    uri: &Uri,
    docs: &RuleDocs,
    related_information: bool,
    sent: &mut blocks::Sent,
    block_lines: u32,
) -> serde_json::Result<Option<Vec<u8>>> {
    let mut w = writer(doc, uri, docs, related_information);
    let lines = doc.rope.len_lines();
    let version = Some(doc.version);
    if doc.encodes_lines() {
        doc.encode(&mut w);
        let cut = doc.blocks(block_lines);
        let count = blocks::count(lines, cut.hashes.len(), block_lines);
        let doc = &*doc;
        return Ok(blocks::update(sent, uri, version, block_lines, count, &cut.hashes, &mut |k, out| {
            doc.write_block(&cut, k, block_lines, &mut w, out)
        }));
    }
    let all = settled(doc);
    let at = doc.positions();
    let mut written = blocks::Written::default();
    for d in &all {
        let r = at.range(d.span);
        written.push(r.start.line, block_lines, |out| w.write(out, r, d, &mut |out, line| convert::itoa(out, line)))?;
    }
    written.finish();
    let count = blocks::count(lines, written.hashes.len(), block_lines);
    Ok(blocks::update(sent, uri, version, block_lines, count, &written.hashes, &mut |k, out| written.write(k, out)))
}

/// The diagnostics of a document that does not keep its lines encoded, as a report has
/// them: settled and in order.
fn settled(doc: &Document) -> Vec<Diagnostic> {
    let kernel = doc.kernel_diagnostics();
    // A mainline document's kernel check runs the kernel's parser per kernel: it
    // replaces the kernel-less parse's findings.
    let syntax = if doc.mainline && kernel.is_some() { Vec::new() } else { doc.diagnostics() };
    let mut all = syntax;
    all.extend(kernel.into_iter().flatten());
    // What is reported, at which severity and in which order is fevlint-check's decision,
    // as in `fevlint check`: for a script, suppression comments and the settings; for the
    // other dialects, the settings.
    if doc.mainline {
        doc.settings.rules.apply(&mut all);
        fevlint_check::rules::sort(&mut all);
        all
    } else {
        let kernel = doc.kernel_complete() && !doc.settings.kernels.is_empty();
        fevlint_check::analysis::report(
            &doc.text,
            all,
            &fevlint_check::analysis::Ran { settings: &doc.settings.rules, kernel },
        )
    }
}

/// A full document report (`items` are left to the raw result when `result_id` names one).
fn full_report(
    result_id: Option<String>,
    items: Vec<tower_lsp_server::ls_types::Diagnostic>,
) -> DocumentDiagnosticReportResult {
    DocumentDiagnosticReportResult::Report(DocumentDiagnosticReport::Full(RelatedFullDocumentDiagnosticReport {
        related_documents: None,
        full_document_diagnostic_report: FullDocumentDiagnosticReport { result_id, items },
    }))
}

/// Quick fixes of a mainline document: each offset whose member moved between the first
/// configured kernel and another gets that member's offset there (D503).
fn mainline_fixes(
    doc: &Document,
    uri: &Uri,
    span: fevlint_syntax::Span,
    kernels: &[&Kernel],
) -> Option<Vec<CodeActionOrCommand>> {
    let (old, rest) = kernels.split_first()?;
    let mut actions = Vec::new();
    // T408: a user fetch of kernel memory; the kernel fetch is what reads it.
    for (at, text) in fevlint_check::dynevents::user_fetch_fixes(&doc.text, span, kernels) {
        let edit = TextEdit { range: doc.at().range(at), new_text: text.clone() };
        actions.push(CodeActionOrCommand::CodeAction(CodeAction {
            title: format!("Read kernel memory with a kernel fetch: `{text}`"),
            kind: Some(CodeActionKind::QUICKFIX),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                ..Default::default()
            }),
            is_preferred: Some(true),
            ..Default::default()
        }));
    }
    for new in rest {
        for m in fevlint_check::dynevents::moves(&doc.text, old, new) {
            let Some(offset) = m.new_offset else { continue };
            if m.span.end < span.start || m.span.start > span.end {
                continue;
            }
            let was = &doc.text[m.span.start..m.span.end];
            let replacement = if was.starts_with("0x") { format!("0x{offset:x}") } else { offset.to_string() };
            let edit = TextEdit { range: doc.at().range(m.span), new_text: replacement.clone() };
            actions.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("Read `{}.{}` at its offset on {}: {replacement}", m.container, m.member, new.name),
                kind: Some(CodeActionKind::QUICKFIX),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..Default::default()
                }),
                is_preferred: Some(true),
                ..Default::default()
            }));
        }
    }
    (!actions.is_empty()).then_some(actions)
}

/// Quick fixes in a bpftrace script: the renames and systems the findings' help names,
/// for the findings at `span`.
fn bpftrace_fixes(
    doc: &Document,
    uri: &Uri,
    span: fevlint_syntax::Span,
    kernels: &[&Kernel],
) -> Option<Vec<CodeActionOrCommand>> {
    let diagnostics = fevlint_check::bpftrace::check(&doc.text, kernels);
    let mut seen = HashSet::new();
    let actions: Vec<CodeActionOrCommand> = fevlint_check::bpftrace::fixes(&doc.text, &diagnostics)
        .into_iter()
        .filter(|f| f.span.end >= span.start && f.span.start <= span.end)
        .filter(|f| seen.insert((f.span.start, f.replacement.clone())))
        .map(|f| {
            let edit = TextEdit { range: doc.at().range(f.span), new_text: f.replacement };
            CodeActionOrCommand::CodeAction(CodeAction {
                title: f.title,
                kind: Some(CodeActionKind::QUICKFIX),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..Default::default()
                }),
                is_preferred: Some(f.preferred),
                ..Default::default()
            })
        })
        .collect();
    (!actions.is_empty()).then_some(actions)
}

/// Completions in a bpftrace script (probe kinds, functions, trace systems and events,
/// `args` fields, members), as the editor's completion items.
fn bpftrace_completions(doc: &Document, offset: usize, kernels: &[&Kernel]) -> Option<CompletionResponse> {
    use fevlint_check::bpftrace_complete::{complete_at, BtItemKind, MAX_FUNCTIONS};
    let (found, _) = complete_at(&doc.text, offset, kernels);
    let cut = found.iter().filter(|c| c.kind == BtItemKind::Function).count() >= MAX_FUNCTIONS;
    let items: Vec<CompletionItem> = found
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let kind = match c.kind {
                BtItemKind::ProbeKind | BtItemKind::System => fevlint_ide::CompletionKind::Keyword,
                BtItemKind::Function | BtItemKind::Event => fevlint_ide::CompletionKind::Function,
                BtItemKind::Field => fevlint_ide::CompletionKind::Parameter,
                BtItemKind::Member => fevlint_ide::CompletionKind::Member,
            };
            let item = fevlint_ide::Completion {
                insert: c.label.clone(),
                filter: c.label.clone(),
                label: c.label,
                kind,
                detail: c.detail,
                documentation: String::new(),
                replace: c.replace,
                rank: u32::try_from(i).unwrap_or(u32::MAX),
                preferred: false,
                deprecated: false,
            };
            convert::completion(doc.at(), item)
        })
        .collect();
    (!items.is_empty()).then_some(CompletionResponse::List(CompletionList { is_incomplete: cut, items }))
}

/// Whether a document is a bpftrace script: the `bpftrace` language or a `*.bt` file.
fn is_bpftrace(uri: &Uri, language: &str) -> bool {
    language == "bpftrace" || uri.path().as_str().ends_with(".bt")
}

/// Whether a document is in the mainline dialect: VS Code's `dynevents` language, a
/// `*.dynevents` file, or one named like the tracefs files (`kprobe_events`).
fn is_mainline(uri: &Uri, language: &str) -> bool {
    let path = uri.path().as_str();
    let base = path.rsplit('/').next().unwrap_or(path);
    language == "dynevents" || base.ends_with(".dynevents") || matches!(base, "kprobe_events" | "dynamic_events")
}

fn roots(params: &InitializeParams) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = params
        .workspace_folders
        .iter()
        .flatten()
        .filter_map(|f| f.uri.to_file_path().map(|p| p.into_owned()))
        .collect();
    #[allow(deprecated)] // root_uri is what older clients (Eglot 1.9) send.
    if let Some(p) = params.root_uri.as_ref().and_then(|u| u.to_file_path()) {
        out.push(p.into_owned());
    }
    out
}

pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(TextDocumentSyncKind::INCREMENTAL),
            ..Default::default()
        })),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        completion_provider: Some(CompletionOptions {
            // `%`, `$`, `:`, `>` and `.` for the mainline dialect (registers, variables, types,
            // members after `->`) and bpftrace (`kprobe:`, `args->`, `.`).
            trigger_characters: Some(["(", ",", "|", "+", "[", "%", "$", ":", ">", "."].map(str::to_owned).to_vec()),
            ..Default::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        workspace_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: convert::legend(),
                full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                range: Some(true),
                ..Default::default()
            },
        )),
        document_formatting_provider: Some(OneOf::Left(true)),
        inlay_hint_provider: Some(OneOf::Left(true)),
        // Pull diagnostics for the clients that ask (LSP 3.17); the others get pushes.
        diagnostic_provider: Some(DiagnosticServerCapabilities::Options(DiagnosticOptions {
            identifier: Some("fevlint".to_owned()),
            inter_file_dependencies: false,
            workspace_diagnostics: true,
            work_done_progress_options: WorkDoneProgressOptions::default(),
        })),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        ..Default::default()
    }
}

impl Backend {
    /// Semantic tokens from the whole tree (a text with carriage returns), of the lines
    /// `range` covers when given.
    async fn whole_tokens(&self, uri: &Uri, range: Option<Range>) -> Result<Option<SemanticTokensResult>> {
        self.0
            .request(
                "semanticTokens",
                uri,
                |_| true,
                |_, doc, _| {
                    let mut highlights = fevlint_ide::highlights(&doc.parse, &doc.text);
                    if let Some(r) = range {
                        let span =
                            doc.at().span(Range::new(Position::new(r.start.line, 0), Position::new(r.end.line + 1, 0)));
                        highlights
                            .retain(|h| h.span.start >= span.start && h.span.start < span.end.max(span.start + 1));
                    }
                    Some(SemanticTokensResult::Tokens(convert::semantic_tokens(doc.at(), &highlights)))
                },
            )
            .await
    }
}

/// The most definitions a `workspace/symbol` answer lists (as rust-analyzer bounds its own).
pub(crate) const WORKSPACE_SYMBOLS: usize = 256;

/// The definitions of an open script whose function name holds the query's characters in
/// order, case aside (as VS Code filters them again), at most `limit`: how a definition past
/// the outline's [`crate::document::OUTLINE_LIMIT`] is found.
fn workspace_symbols<'d>(doc: &'d Document, query: &str, limit: usize) -> Vec<(&'d str, fevlint_syntax::Span)> {
    let query: Vec<char> = query.chars().flat_map(char::to_lowercase).collect();
    let matches = |name: &str| {
        let mut want = query.iter().peekable();
        for c in name.chars().flat_map(char::to_lowercase) {
            if want.peek() == Some(&&c) {
                want.next();
            }
        }
        want.peek().is_none()
    };
    doc.parse
        .lines
        .iter()
        .filter_map(|l| l.parsed.as_ref()?.function.as_ref())
        .filter(|(name, _)| matches(name))
        .take(limit)
        .map(|(name, span)| (name.as_str(), *span))
        .collect()
}

/// The one edit from `old` to `new` (their common start and end kept), none when equal.
fn token_edit(old: &[u32], new: &[u32]) -> Option<SemanticTokensEdit> {
    // Whole tokens only (five numbers each).
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count() / 5 * 5;
    let room = old.len().min(new.len()) - prefix;
    let suffix = old.iter().rev().zip(new.iter().rev()).take(room).take_while(|(a, b)| a == b).count() / 5 * 5;
    if prefix == old.len() && prefix == new.len() {
        return None;
    }
    Some(SemanticTokensEdit {
        start: prefix as u32,
        delete_count: (old.len() - prefix - suffix) as u32,
        data: Some(tokens_of(&new[prefix..new.len() - suffix])),
    })
}

/// Encoded numbers as the protocol type's tokens.
fn tokens_of(data: &[u32]) -> Vec<SemanticToken> {
    data.chunks_exact(5)
        .map(|t| SemanticToken {
            delta_line: t[0],
            delta_start: t[1],
            length: t[2],
            token_type: t[3],
            token_modifiers_bitset: t[4],
        })
        .collect()
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let mut problems = Vec::new();
        {
            let mut state = self.0.lock();
            if let Some(opts) = &params.initialization_options {
                match Layer::from_json(opts) {
                    Ok(l) => state.init = l,
                    Err(e) => problems.push(format!("initializationOptions: {e}")),
                }
            }
            // What the client shows of a diagnostic, from its pushed and (LSP 3.18) pulled
            // diagnostics' capabilities: a field it does not take is not sent.
            let text = params.capabilities.text_document.as_ref();
            let publish = text.and_then(|t| t.publish_diagnostics.as_ref());
            let pull = text.and_then(|t| t.diagnostic.as_ref());
            // Neovim (0.11) declares `relatedInformation` but shows only a diagnostic's
            // message: `vim.diagnostic` keeps the related information in `user_data`, where
            // nothing displays it. Its notes go in the message, where it shows them.
            let shows_related = params.client_info.as_ref().is_none_or(|c| c.name != "Neovim");
            state.related_information = shows_related
                && (publish.and_then(|p| p.related_information).unwrap_or(false)
                    || pull.and_then(|p| p.related_information).unwrap_or(false));
            state.roots = roots(&params);
            // The rule's link (`codeDescription`, about 80 bytes a finding) goes only to a
            // client that shows it (VS Code); Neovim and Eglot do not take it.
            let links = publish.and_then(|p| p.code_description_support).unwrap_or(false)
                || pull.and_then(|p| p.code_description_support).unwrap_or(false);
            state.rule_docs = if links { RuleDocs::find(&state.roots) } else { RuleDocs::default() };
            let caps = &params.capabilities;
            state.encoding =
                position::Encoding::negotiate(caps.general.as_ref().and_then(|g| g.position_encodings.as_deref()));
            state.progress = caps.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
            state.watch = caps
                .workspace
                .as_ref()
                .and_then(|w| w.did_change_watched_files.as_ref())
                .and_then(|d| d.dynamic_registration)
                .unwrap_or(false);
            state.diagnostic_refresh = caps
                .workspace
                .as_ref()
                .and_then(|w| w.diagnostics.as_ref())
                .and_then(|d| d.refresh_support)
                .unwrap_or(false);
            state.inlay_refresh = caps
                .workspace
                .as_ref()
                .and_then(|w| w.inlay_hint.as_ref())
                .and_then(|i| i.refresh_support)
                .unwrap_or(false);
            let by_block = caps.experimental.as_ref().and_then(|e| e.get(blocks::CAPABILITY));
            state.block_lines = (by_block == Some(&serde_json::Value::Bool(true))).then(block_lines);
        }
        for p in problems {
            self.0.log(MessageType::WARNING, p).await;
        }
        let (encoding, refresh, by_block) = {
            let state = self.0.lock();
            (state.encoding, state.diagnostic_refresh, state.block_lines.is_some())
        };
        let mut capabilities = ServerCapabilities { position_encoding: Some(encoding.kind()), ..capabilities() };
        let text = params.capabilities.text_document.as_ref();
        if text.and_then(|t| t.semantic_tokens.as_ref()).and_then(|s| s.requests.range).unwrap_or(false) {
            // A client that highlights its viewport by range gets tokens that way only, as
            // VS Code's own TypeScript does: VS Code applies a whole document's tokens (a
            // `full` or `full/delta` answer) as a change of every line's tokens, and its
            // bracket-pair colouring parses the whole document again after each one
            // (1.1 s of the workbench's thread per answer on a 50,000-line script).
            // Clients without range requests (Neovim 0.11) keep `full` and its deltas.
            capabilities.semantic_tokens_provider =
                Some(SemanticTokensServerCapabilities::SemanticTokensOptions(SemanticTokensOptions {
                    legend: convert::legend(),
                    full: None,
                    range: Some(true),
                    ..Default::default()
                }));
        }
        if !refresh || by_block {
            // A client that takes diagnostics by block is not offered pulls.
            // Findings change without an edit (a kernel loads, a file changes on disk). A client
            // that pulls but cannot be asked to pull again (Neovim 0.11 pulls only after its own
            // edits) would keep what it pulled before: it is offered pushes only.
            capabilities.diagnostic_provider = None;
        }
        Ok(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo {
                name: "fevlint".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        let watch = self.0.lock().watch;
        if watch {
            let mut globs = vec![format!("**/{}", config::FILE_NAME)];
            globs.extend(workspace::GLOBS.iter().map(|g| (*g).to_owned()));
            self.0.register_watchers(globs).await;
        }
        self.0.scan_workspace();
        self.0.scan_objects();
    }

    async fn shutdown(&self) -> Result<()> {
        self.0.shutdown.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        if crate::objects::is_c(doc.uri.path().as_str(), &doc.language_id) {
            return; // C: the objects built from it report there (`bpf`), nothing parses it.
        }
        // Ok(checked), Err(why it is too large); with the problems to log.
        let (opened, problems, failure) = {
            let mut state = self.0.lock();
            let (settings, problems) = Inner::settings_for(&state, &doc.uri);
            let version = doc.version;
            let bpftrace = is_bpftrace(&doc.uri, &doc.language_id);
            let mainline = is_mainline(&doc.uri, &doc.language_id) || bpftrace;
            state.docs.remove(&doc.uri);
            state.large.remove(&doc.uri);
            if state.block_lines.is_some() {
                // Its diagnostics come by block from now on: what was pushed from disk is
                // cleared, and pushed again when it closes (checked from disk then, even if
                // the file did not change).
                if let Some(path) = doc.uri.to_file_path() {
                    if let Some(f) = self.0.workspace().files.get_mut(&*path) {
                        (f.pushed, f.items, f.id) = (false, None, 0);
                    }
                }
                if let Ok(body) = convert::publish_frame_body(&doc.uri, None, b"[]") {
                    self.0.send_publish(&doc.uri, &body);
                }
            }
            let rope = ropey::Rope::from_str(&doc.text);
            if let Some(why) = too_large(&rope) {
                state.large.insert(doc.uri.clone(), Large { rope, settings, mainline, bpftrace });
                (Err(why), problems, None)
            } else {
                drop(rope);
                match guarded(|| Document::with_dialects(doc.text, version, settings, mainline, bpftrace)) {
                    Ok(mut d) => {
                        d.encoding = state.encoding;
                        state.docs.insert(doc.uri.clone(), d);
                        (Ok(true), problems, None)
                    }
                    Err(p) => (Ok(false), problems, Some(format!("opening {} failed: {p}", doc.uri.as_str()))),
                }
            }
        };
        if let Some(failure) = failure {
            self.0.log(MessageType::ERROR, failure).await;
        }
        self.0.tell_problems(&doc.uri, problems).await;
        match opened {
            Ok(false) => {}
            Ok(true) => {
                self.0.sync_kernels(false);
                self.0.publish(doc.uri.clone(), doc.version).await;
                self.0.schedule_kernel(doc.uri.clone(), doc.version);
            }
            Err(why) => {
                self.0.log(MessageType::WARNING, format!("{}: {why}", doc.uri.as_str())).await;
                self.0.publish_refusal(&doc.uri, doc.version, &why);
                self.0.client.show_message(MessageType::WARNING, format!("fevlint: {why}")).await;
            }
        }
        self.0.send_status(std::slice::from_ref(&doc.uri)).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        if crate::objects::is_c(uri.path().as_str(), "") {
            return;
        }
        match self.0.change_large(&uri, version, &params.content_changes) {
            None => {}
            Some(LargeEdit::Refused { why, newly }) => {
                self.0.publish_refusal(&uri, version, &why);
                if newly {
                    self.0.client.show_message(MessageType::WARNING, format!("fevlint: {why}")).await;
                    self.0.send_status(std::slice::from_ref(&uri)).await;
                }
                return;
            }
            Some(LargeEdit::Failed(failure)) => return self.0.log(MessageType::ERROR, failure).await,
            Some(LargeEdit::Checked) => {
                self.0.sync_kernels(false);
                self.0.publish(uri.clone(), version).await;
                self.0.schedule_kernel(uri.clone(), version);
                self.0.send_status(&[uri]).await;
                return;
            }
        }
        // Ok((kernel findings complete, a failure to log)), or the document is not open.
        let mut pulled = false;
        let outcome = {
            let mut state = self.0.lock();
            match state.docs.get_mut(&uri) {
                None => Err(format!("didChange for a document not open: {}", uri.as_str())),
                Some(doc) => match guarded(|| {
                    pulled = doc.pulled;
                    doc.apply(version, &params.content_changes)
                }) {
                    Ok(()) => match guarded(|| self.0.recheck_lines(doc)) {
                        Ok(complete) => Ok((complete, None)),
                        Err(p) => Ok((false, Some(format!("re-checking the edited lines failed: {p}")))),
                    },
                    Err(p) => {
                        // The text may be half-edited: make rope, tree and diagnostics
                        // agree with the rope again, from scratch.
                        doc.version = version;
                        let text = doc.rope.to_string();
                        doc.text = text;
                        let _ = guarded(|| doc.reparse(false));
                        Ok((false, Some(format!("applying a change failed: {p}"))))
                    }
                },
            }
        };
        let complete = match outcome {
            Err(not_open) => {
                self.0.log(MessageType::WARNING, not_open).await;
                return;
            }
            Ok((complete, failure)) => {
                if let Some(failure) = failure {
                    self.0.log(MessageType::ERROR, failure).await;
                }
                complete
            }
        };
        // A client that pulls asks after its edit.
        if !pulled {
            self.0.publish(uri.clone(), version).await;
        }
        if !complete {
            self.0.schedule_kernel(uri, version);
        }
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let removed = {
            let mut state = self.0.lock();
            state.problems.remove(&params.text_document.uri);
            let large = state.large.remove(&params.text_document.uri).is_some();
            state.docs.remove(&params.text_document.uri).is_some() || large
        };
        self.0.forget_fixed_problems();
        let on_disk = params.text_document.uri.to_file_path().map(|p| p.into_owned());
        // A client that takes pushes had the file's findings replaced by the open text's,
        // which the close clears: what the file on disk draws is pushed again, even if
        // the file did not change (its stored result is forgotten).
        let pushes = removed && !self.0.lock().workspace_pulled;
        let in_workspace = on_disk.is_some_and(|p| {
            let mut ws = self.0.workspace();
            let Some(f) = ws.files.get_mut(&p) else { return false };
            f.stale = true;
            if pushes {
                (f.pushed, f.items, f.id) = (false, None, 0);
            }
            true
        });
        let by_block = {
            let mut state = self.0.lock();
            state.sent_blocks.remove(&params.text_document.uri);
            state.block_lines
        };
        if let (true, Some(block_lines)) = (removed, by_block) {
            // Cleared by block; its findings on disk are pushed again (the check below).
            let _order = self.0.publish.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            self.0.send_blocks(&blocks::clear(&params.text_document.uri, block_lines));
        } else if removed {
            // An empty publish clears the closed document's diagnostics.
            let uri = params.text_document.uri;
            let rope = ropey::Rope::new();
            let nothing = position::Positions::new(position::Text::new(&rope, position::Encoding::default()), "", &[]);
            let body = convert::publish_body(&nothing, &uri, None, [], &self.0.lock().rule_docs, false, false);
            match body {
                Ok(body) => self.0.send_publish(&uri, &body),
                Err(e) => self.0.log(MessageType::ERROR, format!("serializing diagnostics failed: {e}")).await,
            }
        }
        if in_workspace {
            self.0.check_workspace();
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let mut logs = Vec::new();
        {
            let mut state = self.0.lock();
            match Layer::from_json(&params.settings) {
                Ok(l) => state.client = l,
                Err(e) => logs.push(format!("settings: {e}")),
            }
        }
        self.0.reconfigure(logs).await;
    }

    async fn did_change_watched_files(&self, params: DidChangeWatchedFilesParams) {
        let changed: Vec<std::path::PathBuf> =
            params.changes.iter().filter_map(|c| c.uri.to_file_path().map(|p| p.into_owned())).collect();
        let loads = self.0.kernels().touched(&changed);
        for load in loads {
            self.0.start_load(load);
        }
        self.0.objects_touched(&changed, None);
        // Scripts on disk: checked again, or forgotten when deleted.
        let mut gone = Vec::new();
        let mut scripts = false;
        {
            let roots = self.0.lock().roots.clone();
            let mut ws = self.0.workspace();
            for c in &params.changes {
                let Some(path) = c.uri.to_file_path().map(|p| p.into_owned()) else { continue };
                if Dialect::of(&path).is_none() || !roots.iter().any(|r| path.starts_with(r)) {
                    continue;
                }
                scripts = true;
                if c.typ == FileChangeType::DELETED {
                    if ws.files.remove(&path).is_some_and(|f| f.pushed) {
                        gone.push(c.uri.clone());
                    }
                } else if ws.files.len() < workspace::MAX_FILES || ws.files.contains_key(&path) {
                    ws.files.entry(path).or_default().stale = true;
                }
            }
        }
        for uri in gone {
            if let Ok(body) = convert::publish_frame_body(&uri, None, b"[]") {
                self.0.send_publish(&uri, &body);
            }
        }
        if scripts {
            self.0.check_workspace();
        }
        if changed.iter().any(|p| p.file_name().is_some_and(|n| n == config::FILE_NAME)) {
            self.0.reconfigure(Vec::new()).await;
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        if crate::objects::is_c(p.text_document.uri.path().as_str(), "") {
            let state = self.0.lock();
            return Ok(guarded(|| self.0.object_hover(&state, &p.text_document.uri, p.position)).ok().flatten());
        }
        self.0
            .request(
                "hover",
                &p.text_document.uri,
                |_| true,
                |_, doc, kernels| {
                    let offset = doc.at().offset(p.position);
                    if doc.bpftrace {
                        let text = fevlint_check::bpftrace::describe_at(&doc.text, offset, kernels)?;
                        return Some(convert::hover(doc.at(), fevlint_ide::Hover { span: text.0, markdown: text.1 }));
                    }
                    if doc.mainline {
                        let Some(text) = fevlint_check::dynevents::describe_at(&doc.text, offset, kernels) else {
                            // The place: its prototype on each kernel.
                            let h = fevlint_ide::dynevents::place_hover(&doc.text, offset, kernels)?;
                            return Some(convert::hover(doc.at(), h));
                        };
                        return Some(convert::hover(doc.at(), fevlint_ide::Hover { span: text.0, markdown: text.1 }));
                    }
                    fevlint_ide::hover_with(&doc.parse, &doc.text, offset, kernels).map(|h| convert::hover(doc.at(), h))
                },
            )
            .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        self.0
            .request(
                "completion",
                &p.text_document.uri,
                |doc| {
                    doc.bpftrace
                        || doc.mainline
                        || fevlint_ide::completion_reads_tree(&doc.text, doc.at().offset(p.position))
                },
                |_, doc, kernels| {
                    let offset = doc.at().offset(p.position);
                    if doc.bpftrace {
                        return bpftrace_completions(doc, offset, kernels);
                    }
                    let found = if doc.mainline {
                        fevlint_ide::dynevents::completions(&doc.text, offset, kernels)
                    } else {
                        fevlint_ide::completions_with(&doc.parse, &doc.text, offset, kernels)
                    };
                    // Function names are cut at a limit: the client asks again as the word grows.
                    let incomplete = found.iter().any(|c| c.kind == fevlint_ide::CompletionKind::Function);
                    let items: Vec<CompletionItem> =
                        found.into_iter().map(|c| convert::completion(doc.at(), c)).collect();
                    (!items.is_empty())
                        .then_some(CompletionResponse::List(CompletionList { is_incomplete: incomplete, items }))
                },
            )
            .await
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        let uri = &params.text_document.uri;
        let kept = self.0.with_doc("documentSymbol", uri, |doc| {
            let (json, cut) = doc.symbols_json()?;
            let tell = cut.filter(|_| !std::mem::replace(&mut doc.outline_cut_told, true));
            Some((self.0.raw.put(json), tell))
        });
        if let Some((token, tell)) = kept.await? {
            if let Some(line) = tell {
                let message = format!(
                    "the outline of {} lists its first {} symbols (to line {line}); workspace symbols find the others",
                    uri.as_str(),
                    crate::document::OUTLINE_LIMIT,
                );
                self.0.log(MessageType::INFO, message).await;
            }
            // A placeholder the transport replaces with the JSON kept per line.
            #[allow(deprecated)] // `DocumentSymbol::deprecated` must be named to build the struct.
            let placeholder = DocumentSymbol {
                name: token,
                detail: None,
                kind: SymbolKind::FUNCTION,
                tags: None,
                deprecated: None,
                range: Range::default(),
                selection_range: Range::default(),
                children: None,
            };
            return Ok(Some(DocumentSymbolResponse::Nested(vec![placeholder])));
        }
        self.0
            .request(
                "documentSymbol",
                uri,
                |_| true,
                |_, doc, _| {
                    let mut listed = 0;
                    let symbols = fevlint_ide::symbols(&doc.parse, &doc.text).into_iter().take_while(|s| {
                        listed += 1 + s.children.len();
                        listed <= crate::document::OUTLINE_LIMIT
                    });
                    Some(DocumentSymbolResponse::Nested(symbols.map(|s| convert::symbol(doc.at(), s)).collect()))
                },
            )
            .await
    }

    async fn symbol(&self, params: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> {
        let found = {
            let state = self.0.lock();
            guarded(|| {
                let mut docs: Vec<(&Uri, &Document)> = state.docs.iter().filter(|(_, d)| !d.mainline).collect();
                docs.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
                let mut out = Vec::new();
                for (uri, doc) in docs {
                    for (name, span) in workspace_symbols(doc, &params.query, WORKSPACE_SYMBOLS - out.len()) {
                        #[allow(deprecated)] // `SymbolInformation::deprecated` must be named to build the struct.
                        out.push(SymbolInformation {
                            name: name.to_owned(),
                            kind: SymbolKind::FUNCTION,
                            tags: None,
                            deprecated: None,
                            location: Location::new(uri.clone(), doc.at().range(span)),
                            container_name: None,
                        });
                    }
                }
                out
            })
        };
        match found {
            Ok(found) => Ok(Some(WorkspaceSymbolResponse::Flat(found))),
            Err(p) => {
                self.0.log(MessageType::ERROR, format!("workspace/symbol failed: {p}")).await;
                Err(Error::internal_error())
            }
        }
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.0
            .with_doc("foldingRange", &params.text_document.uri, |doc| {
                if doc.mainline {
                    return None;
                }
                Some(
                    doc.folds()
                        .into_iter()
                        .map(|(start_line, end_line)| FoldingRange {
                            start_line,
                            end_line,
                            kind: Some(FoldingRangeKind::Comment),
                            ..Default::default()
                        })
                        .collect(),
                )
            })
            .await
    }

    async fn semantic_tokens_full(&self, params: SemanticTokensParams) -> Result<Option<SemanticTokensResult>> {
        let uri = &params.text_document.uri;
        let raw = self.0.with_doc("semanticTokens", uri, |doc| {
            let data = doc.semantic_tokens(0..usize::MAX)?;
            Some(self.0.sent_tokens(doc, data))
        });
        match raw.await? {
            Some(token) => {
                Ok(Some(SemanticTokensResult::Tokens(SemanticTokens { result_id: Some(token), data: vec![] })))
            }
            None => self.whole_tokens(uri, None).await,
        }
    }

    async fn semantic_tokens_full_delta(
        &self,
        params: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = &params.text_document.uri;
        let previous = params.previous_result_id;
        let answer = self.0.with_doc("semanticTokens/full/delta", uri, |doc| {
            let data = doc.semantic_tokens(0..usize::MAX)?;
            let old = doc.sent_tokens.take().filter(|(id, _)| format!("{id}") == previous);
            let Some((_, old)) = old else { return Some(Err(self.0.sent_tokens(doc, data))) };
            let id = self.0.serial.fetch_add(1, Ordering::SeqCst);
            let edit = token_edit(&old, &data);
            doc.sent_tokens = Some((id, data));
            Some(Ok(SemanticTokensDelta { result_id: Some(id.to_string()), edits: edit.into_iter().collect() }))
        });
        match answer.await? {
            Some(Ok(delta)) => Ok(Some(SemanticTokensFullDeltaResult::TokensDelta(delta))),
            Some(Err(token)) => {
                Ok(Some(SemanticTokensFullDeltaResult::Tokens(SemanticTokens { result_id: Some(token), data: vec![] })))
            }
            None => Ok(self.whole_tokens(uri, None).await?.map(|t| match t {
                SemanticTokensResult::Tokens(t) => SemanticTokensFullDeltaResult::Tokens(t),
                SemanticTokensResult::Partial(p) => SemanticTokensFullDeltaResult::PartialTokensDelta {
                    edits: vec![SemanticTokensEdit { start: 0, delete_count: 0, data: Some(p.data) }],
                },
            })),
        }
    }

    async fn semantic_tokens_range(
        &self,
        params: SemanticTokensRangeParams,
    ) -> Result<Option<SemanticTokensRangeResult>> {
        let uri = &params.text_document.uri;
        let (from, to) = (params.range.start.line as usize, params.range.end.line as usize);
        let data = self.0.with_doc("semanticTokens/range", uri, |doc| doc.semantic_tokens(from..to.saturating_add(1)));
        match data.await? {
            Some(data) => {
                Ok(Some(SemanticTokensRangeResult::Tokens(SemanticTokens { result_id: None, data: tokens_of(&data) })))
            }
            None => Ok(self.whole_tokens(uri, Some(params.range)).await?.map(|t| match t {
                SemanticTokensResult::Tokens(t) => SemanticTokensRangeResult::Tokens(t),
                SemanticTokensResult::Partial(p) => SemanticTokensRangeResult::Partial(p),
            })),
        }
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.0
            .request(
                "formatting",
                &params.text_document.uri,
                |_| false,
                |_, doc, _| {
                    Some(
                        fevlint_ide::format(&doc.parse, &doc.text).iter().map(|e| convert::edit(doc.at(), e)).collect(),
                    )
                },
            )
            .await
    }

    async fn code_action(&self, params: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        if let Some(only) = &params.context.only {
            if !only.iter().any(|k| CodeActionKind::QUICKFIX.as_str().starts_with(k.as_str())) {
                return Ok(None);
            }
        }
        let uri = params.text_document.uri;
        self.0
            .request(
                "codeAction",
                &uri,
                |_| false,
                |state, doc, kernels| {
                    let span = doc.at().span(params.range);
                    if doc.bpftrace {
                        return bpftrace_fixes(doc, &uri, span, kernels);
                    }
                    if doc.mainline {
                        return mainline_fixes(doc, &uri, span, kernels);
                    }
                    let all: Vec<Diagnostic> =
                        doc.diagnostics().into_iter().chain(doc.kernel_diagnostics().into_iter().flatten()).collect();
                    let several = doc.settings.kernels.len() > 1;
                    let actions: Vec<CodeActionOrCommand> =
                        fevlint_ide::fixes_with(&doc.parse, &doc.text, &all, span, kernels)
                            .into_iter()
                            .map(|fix| {
                                let diagnostic = all.get(fix.diagnostic).map(|d| {
                                    convert::diagnostic(
                                        &doc.positions(),
                                        &uri,
                                        d,
                                        &state.rule_docs,
                                        state.related_information,
                                        several,
                                    )
                                });
                                let edits = fix.edits.iter().map(|e| convert::edit(doc.at(), e)).collect();
                                CodeActionOrCommand::CodeAction(CodeAction {
                                    title: fix.title,
                                    kind: Some(CodeActionKind::QUICKFIX),
                                    diagnostics: diagnostic.map(|d| vec![d]),
                                    edit: Some(WorkspaceEdit {
                                        changes: Some(HashMap::from([(uri.clone(), edits)])),
                                        ..Default::default()
                                    }),
                                    is_preferred: Some(fix.preferred),
                                    ..Default::default()
                                })
                            })
                            .collect();
                    (!actions.is_empty()).then_some(actions)
                },
            )
            .await
    }

    async fn diagnostic(&self, params: DocumentDiagnosticParams) -> Result<DocumentDiagnosticReportResult> {
        match self.0.pull(&params.text_document.uri, params.previous_result_id.as_deref()) {
            Ok(r) => Ok(r),
            Err(e) => {
                self.0.log(MessageType::ERROR, format!("textDocument/diagnostic: {e}")).await;
                Err(Error::internal_error())
            }
        }
    }

    async fn workspace_diagnostic(&self, params: WorkspaceDiagnosticParams) -> Result<WorkspaceDiagnosticReportResult> {
        match self.0.workspace_report(&params.previous_result_ids).await {
            Ok(token) => Ok(WorkspaceDiagnosticReportResult::Report(WorkspaceDiagnosticReport {
                items: vec![WorkspaceDocumentDiagnosticReport::Unchanged(WorkspaceUnchangedDocumentDiagnosticReport {
                    uri: "file:///fevlint-raw".parse().map_err(|_| Error::internal_error())?,
                    version: None,
                    unchanged_document_diagnostic_report: UnchangedDocumentDiagnosticReport { result_id: token },
                })],
            })),
            Err(e) => {
                self.0.log(MessageType::ERROR, format!("workspace/diagnostic: {e}")).await;
                Err(Error::internal_error())
            }
        }
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        // The one request that may wait before it reads the document (a core opened the
        // first time): an edit that came meanwhile makes its range stale.
        let version = |inner: &Inner| inner.lock().docs.get(&params.text_document.uri).map(|d| d.version);
        let asked = version(&self.0);
        let core = self.0.core_for(&params.text_document.uri).await;
        if version(&self.0) != asked {
            return Err(Error::content_modified());
        }
        self.0
            .request(
                "inlayHint",
                &params.text_document.uri,
                |_| false,
                |_, doc, kernels| {
                    if kernels.is_empty() {
                        return None;
                    }
                    let span = doc.at().span(params.range);
                    let mut hints = fevlint_ide::inlay_hints(&doc.parse, span, kernels);
                    if let Some(core) = &core {
                        hints.extend(cores::value_hints(&doc.parse, span, core));
                        hints.sort_by_key(|h| h.at);
                    }
                    Some(hints.into_iter().map(|h| convert::inlay_hint(doc.at(), h)).collect())
                },
            )
            .await
    }
}
