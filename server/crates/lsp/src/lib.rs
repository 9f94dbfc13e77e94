//! The language server, `fevlint lsp`: the ONLY module that knows LSP types, UTF-16
//! positions and URIs. Handlers convert, call one `ide`/analysis function, convert back.
//!
//! - `transport`: stdio framing that survives malformed input, in front of tower-lsp-server
//! - `position`: the one place where (line, UTF-16 unit) meets byte offsets
//! - `document`: rope + text + tree + diagnostics, incremental edits and reparses
//! - `encoded`: each line's diagnostics kept as the JSON they go out as
//! - `config`: `fevlint.toml`, `initializationOptions`, `didChangeConfiguration`
//! - `kernels`: the configured kernels, loaded in the background, shared, reloaded
//! - `cores`: the configured core dump, and its dry-run values as inlay hints
//! - `convert`: diagnostics, hovers, completions, symbols, tokens to LSP types
//! - `workspace`: the workspace's scripts on disk, checked and reported
//! - `objects`: the compiled BPF objects `fevlint.toml` names, checked; findings and
//!   hovers at their `.bpf.c` lines (the server's side: `server::bpf`)
//! - `server`: the handlers

pub mod config;
mod convert;
pub mod cores;
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

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tower_lsp_server::{LspService, Server};

/// Serves one client on `input`/`output` until `exit` or end of input. Returns whether
/// `shutdown` came first (the protocol's exit code 0).
pub async fn serve<I, O>(input: I, output: O, kernel: Option<Arc<dyn KernelCheck>>) -> bool
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let shutdown = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&shutdown);
    let (frames_tx, frames_rx) = mpsc::unbounded_channel();
    let direct = frames_tx.downgrade();
    let raw = transport::Raw::default();
    let results = raw.clone();
    let (service, socket) = LspService::new(move |client| Backend::new(client, kernel, flag, direct, results));

    let (server_in, feed) = tokio::io::duplex(1 << 16);
    let (server_out, drain) = tokio::io::duplex(1 << 16);
    let writer = tokio::spawn(transport::write_frames(output, frames_rx));
    let out = tokio::spawn(transport::pump_output(drain, frames_tx.clone(), raw));
    let input_task = tokio::spawn(transport::pump_input(input, feed, frames_tx));

    Server::new(server_in, server_out, socket).serve(service).await;
    // The server dropped its ends: its output drains, then the writer flushes.
    let _ = out.await;
    input_task.abort();
    let _ = input_task.await;
    let _ = writer.await;
    shutdown.load(Ordering::SeqCst)
}

/// `fevlint lsp`: serves stdin/stdout.
pub fn run() -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("fevlint lsp: cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let clean = runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout(), None));
    // The blocking stdin reader may still wait for input that will never come.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
