//! The language server, `fevlint lsp`: the ONLY module that knows LSP types, UTF-16
//! positions and URIs. Handlers convert, call one `ide`/analysis function, convert back.
//!
//! - `transport`: stdio framing that survives malformed input, each body parsed once
//! - `dispatch`: the one reader, which gives tower-lsp-server's service each message in order
//! - `position`: the one place where (line, UTF-16 unit) meets byte offsets
//! - `document`: rope + text + tree + diagnostics, incremental edits and reparses
//! - `encoded`: each line's diagnostics kept as the JSON they go out as
//! - `blocks`: `fevlint/diagnosticBlocks`, an open document's diagnostics by block of
//!   lines, only the changed blocks after an edit (a client that declares it)
//! - `config`: `fevlint.toml`, `initializationOptions`, `didChangeConfiguration`
//! - `kernels`: the configured kernels, loaded in the background, shared, reloaded
//! - `cores`: the configured core dump, and its dry-run values as inlay hints
//! - `convert`: diagnostics, hovers, completions, symbols, tokens to LSP types
//! - `workspace`: the workspace's scripts on disk, checked and reported
//! - `objects`: the compiled BPF objects `fevlint.toml` names, checked; findings and
//!   hovers at their `.bpf.c` lines (the server's side: `server::bpf`)
//! - `server`: the handlers

mod blocks;
pub mod config;
mod convert;
pub mod cores;
mod dispatch;
mod document;
mod encoded;
pub mod kernels;
pub mod objects;
pub mod position;
mod server;
pub mod transport;
mod workspace;

pub use server::{
    capabilities, Backend, KernelCheck, KernelRules, KERNEL_DEBOUNCE, MAX_DOCUMENT_BYTES, MAX_DOCUMENT_LINES,
};

use fevlint_load::cache::Cache;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tower_lsp_server::LspService;

/// Serves one client on `input`/`output` until `exit` or end of input, caching nothing.
/// Returns whether `shutdown` came first (the protocol's exit code 0).
pub async fn serve<I, O>(input: I, output: O, kernel: Option<Arc<dyn KernelCheck>>) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    serve_cached(input, output, kernel, Cache::off()).await
}

/// [`serve`], kernels' decompressions and indexes kept in `cache` (the CLI decides it).
pub async fn serve_cached<I, O>(input: I, output: O, kernel: Option<Arc<dyn KernelCheck>>, cache: Cache) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&shutdown);
    let (frames, queue) = mpsc::unbounded_channel();
    let direct = frames.downgrade();
    let raw = transport::Raw::default();
    let results = raw.clone();
    let (service, socket) =
        LspService::new(move |client| Backend::new(client, kernel, flag, direct, results, cache.clone()));
    let writer = tokio::spawn(transport::write_frames(output, queue));
    dispatch::serve(input, service, socket, frames, raw).await;
    // The writer ends when the last answer is written and flushed.
    let _ = writer.await;
    shutdown.load(Ordering::SeqCst)
}

/// `fevlint lsp`: serves stdin/stdout, kernels cached in `cache`.
pub fn run(cache: Cache) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fevlint lsp: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let clean =
        runtime.block_on(serve_cached(tokio::io::stdin(), transport::Blocking::new(std::io::stdout()), None, cache));
    // The blocking stdin reader may still wait for input that will never come.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tokio::io::{AsyncWriteExt, BufReader};

    fn message(v: &Value) -> Vec<u8> {
        transport::frame(v.to_string().as_bytes())
    }

    /// The `initialize` answer's semantic tokens provider for a client's capabilities.
    async fn tokens_provider(capabilities: Value) -> Value {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server);
        let serve = tokio::spawn(serve(read, write, None));
        let (from_server, mut to_server) = tokio::io::split(client);
        let mut burst = message(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": capabilities}}),
        );
        burst.extend(message(&json!({"jsonrpc": "2.0", "id": 1, "method": "shutdown"})));
        burst.extend(message(&json!({"jsonrpc": "2.0", "method": "exit"})));
        to_server.write_all(&burst).await.expect("write");
        let mut read = BufReader::new(from_server);
        let mut provider = Value::Null;
        while let Ok(transport::Frame::Body(body)) = transport::read_frame(&mut read).await {
            let v: Value = serde_json::from_slice(&body).expect("json");
            if v["id"] == 0 {
                provider = v["result"]["capabilities"]["semanticTokensProvider"].clone();
            }
        }
        assert!(serve.await.expect("server"), "shutdown came first");
        provider
    }

    /// A client that asks by range (VS Code) is offered range requests only; one that
    /// cannot (Neovim 0.11) or says nothing, whole-document tokens and their deltas.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn semantic_tokens_by_range_for_the_clients_that_ask_by_range() {
        let tokens = |range: bool| {
            json!({"textDocument": {"semanticTokens": {"requests": {"range": range, "full": {"delta": true}},
                "tokenTypes": [], "tokenModifiers": [], "formats": ["relative"]}}})
        };
        let vscode = tokens_provider(tokens(true)).await;
        assert_eq!((vscode.get("full"), &vscode["range"]), (None, &json!(true)), "{vscode}");
        assert!(vscode["legend"]["tokenTypes"].as_array().is_some_and(|t| !t.is_empty()), "{vscode}");
        for caps in [tokens(false), json!({})] {
            let provider = tokens_provider(caps).await;
            assert_eq!((&provider["full"], &provider["range"]), (&json!({"delta": true}), &json!(true)), "{provider}");
        }
    }

    /// `workspace/symbol` finds an open script's definitions by the query's characters in
    /// order, case aside, also those past the outline's limit, in URI then line order.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn workspace_symbols_find_definitions_past_the_outline() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server);
        let serve = tokio::spawn(serve(read, write, None));
        let (from_server, mut to_server) = tokio::io::split(client);
        let big: String = (0..crate::document::OUTLINE_LIMIT).map(|i| format!("f{i}(x64 a0)\n")).collect::<String>()
            + "\tVfs_Read(x64 file)\n";
        let mut burst =
            message(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}));
        burst.extend(message(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})));
        for (uri, text) in
            [("file:///w/b.fev", big.as_str()), ("file:///w/a.fev", "# x\nvfs_read(x64 f)\nvfs_write()\n")]
        {
            burst.extend(message(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params":
                {"textDocument": {"uri": uri, "languageId": "fev", "version": 0, "text": text}}})));
        }
        for (id, query) in [(1, "vfsrd"), (2, "zzz"), (3, "")] {
            burst.extend(message(&json!({"jsonrpc": "2.0", "id": id, "method": "workspace/symbol",
                "params": {"query": query}})));
        }
        burst.extend(message(&json!({"jsonrpc": "2.0", "id": 4, "method": "shutdown"})));
        burst.extend(message(&json!({"jsonrpc": "2.0", "method": "exit"})));
        to_server.write_all(&burst).await.expect("write");
        let mut read = BufReader::new(from_server);
        let mut answers = std::collections::HashMap::new();
        while let Ok(transport::Frame::Body(body)) = transport::read_frame(&mut read).await {
            let v: Value = serde_json::from_slice(&body).expect("json");
            if let (Some(id), None) = (v["id"].as_u64(), v.get("method")) {
                answers.insert(id, v["result"].clone());
            }
        }
        assert!(serve.await.expect("server"), "shutdown came first");
        let found = |id: u64| -> Vec<(String, String, u64, u64, u64)> {
            answers[&id]
                .as_array()
                .expect("symbols")
                .iter()
                .map(|s| {
                    let r = &s["location"]["range"];
                    (
                        s["name"].as_str().unwrap_or("").to_owned(),
                        s["location"]["uri"].as_str().unwrap_or("").to_owned(),
                        r["start"]["line"].as_u64().unwrap_or(0),
                        r["start"]["character"].as_u64().unwrap_or(0),
                        r["end"]["character"].as_u64().unwrap_or(0),
                    )
                })
                .collect()
        };
        let limit = crate::document::OUTLINE_LIMIT as u64;
        assert_eq!(
            found(1),
            [
                ("vfs_read".to_owned(), "file:///w/a.fev".to_owned(), 1, 0, 8),
                ("Vfs_Read".to_owned(), "file:///w/b.fev".to_owned(), limit, 1, 9)
            ]
        );
        assert_eq!(found(2), []);
        assert_eq!(found(3).len(), super::server::WORKSPACE_SYMBOLS);
    }

    /// Edits and requests sent in one burst, without waiting for any answer: each
    /// request's answer is that of the text after exactly the edits sent before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_request_sees_exactly_the_edits_sent_before_it() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(server);
        let serve = tokio::spawn(serve(read, write, None));
        let (from_server, mut to_server) = tokio::io::split(client);
        let uri = "file:///nowhere/order.fev";
        let mut burst =
            message(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"capabilities": {}}}));
        burst.extend(message(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})));
        burst.extend(message(&json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params":
            {"textDocument": {"uri": uri, "languageId": "fev", "version": 0, "text": "f(x64 a)\n"}}})));
        const EDITS: usize = 200;
        for k in 1..=EDITS {
            // `f` grows by one `a` per edit.
            burst.extend(message(&json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": k},
                "contentChanges": [{"range": {"start": {"line": 0, "character": 1}, "end": {"line": 0, "character": 1}},
                    "text": "a"}]}})));
            burst.extend(message(&json!({"jsonrpc": "2.0", "id": k, "method": "textDocument/documentSymbol",
                "params": {"textDocument": {"uri": uri}}})));
        }
        burst.extend(message(&json!({"jsonrpc": "2.0", "id": EDITS + 1, "method": "shutdown"})));
        burst.extend(message(&json!({"jsonrpc": "2.0", "method": "exit"})));
        let writing = tokio::spawn(async move {
            to_server.write_all(&burst).await.expect("write");
            to_server
        });
        let mut read = BufReader::new(from_server);
        let mut names = vec![String::new(); EDITS + 1];
        loop {
            let Ok(transport::Frame::Body(body)) = transport::read_frame(&mut read).await else { break };
            let v: Value = serde_json::from_slice(&body).expect("json");
            let Some(k) = v["id"].as_u64().map(|k| k as usize).filter(|k| (1..=EDITS).contains(k)) else { continue };
            if v.get("method").is_none() {
                names[k] = v["result"][0]["name"].as_str().unwrap_or("no symbol").to_owned();
            }
        }
        drop(writing.await.expect("writer"));
        assert!(serve.await.expect("server"), "shutdown came first");
        for (k, name) in names.iter().enumerate().skip(1) {
            assert_eq!(*name, format!("f{}", "a".repeat(k)), "the answer to request {k}");
        }
    }
}
