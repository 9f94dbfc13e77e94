//! The `LanguageServer` implementation: every handler converts its parameters, calls
//! one `ide`/analysis function on the document under a panic guard, converts back.
//!
//! Invariants:
//! - Document state changes only in `did_open`/`did_change`/`did_close` and
//!   configuration changes, synchronously before their first `.await`, so edits apply
//!   in the order the client sent them (tower-lsp-server first polls handlers in order).
//! - Published diagnostics carry the version they were computed for, and a result for
//!   an older version is never published (checked under `publish`).
//! - A panic in a handler becomes an error response and a log message, never a dead
//!   server; a panic while editing a document resynchronises it from its text.

use super::config::{self, Layer, Settings};
use super::convert::{self, RuleDocs};
use super::document::Document;
use super::position;
use crate::diagnostic::Diagnostic;
use crate::ide;
use crate::syntax::Parse;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tower_lsp_server::jsonrpc::{Error, Result};
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

/// Kernel-aware checks (BTF/DWARF, symbols) plug in here. They run after a debounce
/// on the latest text, off the typing path; their result is dropped when the document
/// changed meanwhile.
pub trait KernelCheck: Send + Sync + 'static {
    fn check(&self, text: &str, parse: &Parse, settings: &Settings) -> Vec<Diagnostic>;
}

/// How long the document must be still before kernel checks run.
pub const KERNEL_DEBOUNCE: Duration = Duration::from_millis(300);

#[derive(Default)]
struct State {
    docs: HashMap<Uri, Document>,
    /// `initializationOptions` and the last `didChangeConfiguration`.
    init: Layer,
    client: Layer,
    related_information: bool,
    rule_docs: RuleDocs,
}

struct Inner {
    client: Client,
    state: Mutex<State>,
    /// Held while checking a version is current and sending its diagnostics.
    publish: tokio::sync::Mutex<()>,
    kernel: Option<Arc<dyn KernelCheck>>,
    shutdown: Arc<AtomicBool>,
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

    async fn log(&self, typ: MessageType, message: String) {
        eprintln!("fevlint lsp: {message}");
        self.client.log_message(typ, message).await;
    }

    /// Publishes the diagnostics of `version`, unless the document moved on.
    async fn publish(&self, uri: Uri, version: i32) {
        let _order = self.publish.lock().await;
        let diagnostics = {
            let state = self.lock();
            let Some(doc) = state.docs.get(&uri) else { return };
            if doc.version != version {
                return;
            }
            let all = doc.diagnostics.iter().chain(doc.kernel_diagnostics.iter().flatten());
            guarded(|| {
                all.map(|d| convert::diagnostic(&doc.rope, &uri, d, &state.rule_docs, state.related_information))
                    .collect::<Vec<_>>()
            })
        };
        match diagnostics {
            Ok(d) => self.client.publish_diagnostics(uri, d, Some(version)).await,
            Err(p) => self.log(MessageType::ERROR, format!("converting diagnostics failed: {p}")).await,
        }
    }

    /// Starts the debounced kernel check of `version`, when kernel checks are configured.
    fn schedule_kernel(self: &Arc<Self>, uri: Uri, version: i32) {
        let Some(kernel) = self.kernel.clone() else { return };
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(KERNEL_DEBOUNCE).await;
            let done = {
                let mut state = inner.lock();
                let Some(doc) = state.docs.get_mut(&uri) else { return };
                if doc.version != version {
                    return; // stale: a newer version has its own check scheduled
                }
                match guarded(|| kernel.check(&doc.text, &doc.parse, &doc.settings)) {
                    Ok(mut found) => {
                        found.retain(|d| !doc.settings.ignore.iter().any(|c| c.eq_ignore_ascii_case(d.code)));
                        doc.kernel_diagnostics = Some(found);
                        Ok(())
                    }
                    Err(p) => Err(p),
                }
            };
            match done {
                Ok(()) => inner.publish(uri, version).await,
                Err(p) => inner.log(MessageType::ERROR, format!("kernel check failed: {p}")).await,
            }
        });
    }

    /// Runs a read-only request on an open document; unopened documents answer `R::default()`.
    async fn request<R: Default>(&self, what: &str, uri: &Uri, f: impl FnOnce(&State, &Document) -> R) -> Result<R> {
        let result = {
            let state = self.lock();
            let Some(doc) = state.docs.get(uri) else { return Ok(R::default()) };
            guarded(|| f(&state, doc))
        };
        match result {
            Ok(r) => Ok(r),
            Err(p) => {
                self.log(MessageType::ERROR, format!("{what} failed: {p}")).await;
                Err(Error::internal_error())
            }
        }
    }

    fn settings_for(state: &State, uri: &Uri) -> (Settings, Vec<String>) {
        let path = uri.to_file_path().map(|p| p.into_owned());
        config::resolve(path.as_deref(), &[&state.init, &state.client])
    }
}

impl Backend {
    pub fn new(client: Client, kernel: Option<Arc<dyn KernelCheck>>, shutdown: Arc<AtomicBool>) -> Backend {
        Backend(Arc::new(Inner {
            client,
            state: Mutex::new(State::default()),
            publish: tokio::sync::Mutex::new(()),
            kernel,
            shutdown,
        }))
    }
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
            trigger_characters: Some(vec!["(".to_owned(), ",".to_owned(), "|".to_owned()]),
            ..Default::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: convert::legend(),
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                ..Default::default()
            },
        )),
        document_formatting_provider: Some(OneOf::Left(true)),
        code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
            code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        ..Default::default()
    }
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
            state.related_information = params
                .capabilities
                .text_document
                .as_ref()
                .and_then(|t| t.publish_diagnostics.as_ref())
                .and_then(|p| p.related_information)
                .unwrap_or(false);
            state.rule_docs = RuleDocs::find(&roots(&params));
        }
        for p in problems {
            self.0.log(MessageType::WARNING, p).await;
        }
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "fevlint".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        self.0.shutdown.store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let (version, problems) = {
            let mut state = self.0.lock();
            let (settings, problems) = Inner::settings_for(&state, &doc.uri);
            let version = doc.version;
            match guarded(|| Document::new(doc.text, version, settings)) {
                Ok(d) => {
                    state.docs.insert(doc.uri.clone(), d);
                    (Some(version), problems)
                }
                Err(p) => (None, vec![format!("opening {} failed: {p}", doc.uri.as_str())]),
            }
        };
        for p in problems {
            self.0.log(MessageType::WARNING, p).await;
        }
        if let Some(v) = version {
            self.0.publish(doc.uri.clone(), v).await;
            self.0.schedule_kernel(doc.uri, v);
        }
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        let version = params.text_document.version;
        let outcome = {
            let mut state = self.0.lock();
            match state.docs.get_mut(&uri) {
                None => Err(format!("didChange for a document not open: {}", uri.as_str())),
                Some(doc) => match guarded(|| doc.apply(version, &params.content_changes)) {
                    Ok(()) => Ok(None),
                    Err(p) => {
                        // The text may be half-edited: make rope, tree and diagnostics
                        // agree with the rope again, from scratch.
                        doc.version = version;
                        let text = doc.rope.to_string();
                        doc.text = text;
                        let _ = guarded(|| doc.reparse(false));
                        Ok(Some(format!("applying a change failed: {p}")))
                    }
                },
            }
        };
        match outcome {
            Err(not_open) => {
                self.0.log(MessageType::WARNING, not_open).await;
                return;
            }
            Ok(Some(failure)) => self.0.log(MessageType::ERROR, failure).await,
            Ok(None) => {}
        }
        self.0.publish(uri.clone(), version).await;
        self.0.schedule_kernel(uri, version);
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let removed = self.0.lock().docs.remove(&params.text_document.uri).is_some();
        if removed {
            self.0.client.publish_diagnostics(params.text_document.uri, Vec::new(), None).await;
        }
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        let mut logs = Vec::new();
        let mut republish = Vec::new();
        {
            let mut state = self.0.lock();
            match Layer::from_json(&params.settings) {
                Ok(l) => state.client = l,
                Err(e) => logs.push(format!("settings: {e}")),
            }
            let uris: Vec<Uri> = state.docs.keys().cloned().collect();
            for uri in uris {
                let (settings, problems) = Inner::settings_for(&state, &uri);
                logs.extend(problems);
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
            self.0.log(MessageType::WARNING, l).await;
        }
        for (uri, v) in republish {
            self.0.publish(uri.clone(), v).await;
            self.0.schedule_kernel(uri, v);
        }
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let p = params.text_document_position_params;
        self.0
            .request("hover", &p.text_document.uri, |_, doc| {
                let offset = position::offset(&doc.rope, p.position);
                ide::hover(&doc.parse, &doc.text, offset).map(|h| convert::hover(&doc.rope, h))
            })
            .await
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let p = params.text_document_position;
        self.0
            .request("completion", &p.text_document.uri, |_, doc| {
                let offset = position::offset(&doc.rope, p.position);
                let items: Vec<CompletionItem> = ide::completions(&doc.parse, &doc.text, offset)
                    .into_iter()
                    .map(|c| convert::completion(&doc.rope, c))
                    .collect();
                (!items.is_empty()).then_some(CompletionResponse::Array(items))
            })
            .await
    }

    async fn document_symbol(&self, params: DocumentSymbolParams) -> Result<Option<DocumentSymbolResponse>> {
        self.0
            .request("documentSymbol", &params.text_document.uri, |_, doc| {
                let symbols = ide::symbols(&doc.parse, &doc.text);
                Some(DocumentSymbolResponse::Nested(
                    symbols.into_iter().map(|s| convert::symbol(&doc.rope, s)).collect(),
                ))
            })
            .await
    }

    async fn folding_range(&self, params: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        self.0
            .request("foldingRange", &params.text_document.uri, |_, doc| {
                Some(
                    ide::comment_folds(&doc.text)
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
        self.0
            .request("semanticTokens", &params.text_document.uri, |_, doc| {
                let highlights = ide::highlights(&doc.parse, &doc.text);
                Some(SemanticTokensResult::Tokens(convert::semantic_tokens(&doc.rope, &highlights)))
            })
            .await
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.0
            .request("formatting", &params.text_document.uri, |_, doc| {
                Some(ide::format(&doc.parse, &doc.text).iter().map(|e| convert::edit(&doc.rope, e)).collect())
            })
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
            .request("codeAction", &uri, |state, doc| {
                let span = position::span(&doc.rope, params.range);
                let all: Vec<Diagnostic> =
                    doc.diagnostics.iter().chain(doc.kernel_diagnostics.iter().flatten()).cloned().collect();
                let actions: Vec<CodeActionOrCommand> = ide::fixes(&doc.parse, &doc.text, &all, span)
                    .into_iter()
                    .map(|fix| {
                        let diagnostic = all.get(fix.diagnostic).map(|d| {
                            convert::diagnostic(&doc.rope, &uri, d, &state.rule_docs, state.related_information)
                        });
                        let edits = fix.edits.iter().map(|e| convert::edit(&doc.rope, e)).collect();
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
            })
            .await
    }
}
