//! The place kernel diagnostics plug in: `lsp::KernelCheck` runs after the debounce on
//! the latest version only, and its findings are published merged with the syntax
//! diagnostics, tagged with that version.

use fevlint_check::diagnostic::{Diagnostic, Severity};
use fevlint_kernel::Kernel;
use fevlint_lsp::config::Settings;
use fevlint_syntax::{Parse, Span};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// Reports K999 on the first definition and records which texts it saw.
struct Fake(Arc<Mutex<Vec<String>>>);

impl fevlint_lsp::KernelCheck for Fake {
    fn check(&self, text: &str, _parse: &Parse, _settings: &Settings, _kernels: &[Arc<Kernel>]) -> Vec<Diagnostic> {
        self.0.lock().expect("lock").push(text.to_owned());
        vec![Diagnostic {
            code: "K999",
            name: "fake-kernel",
            severity: Severity::Warning,
            span: Span::new(0, 6),
            message: "from the kernel check".into(),
            notes: Vec::new(),
            kernel: Some("test".into()),
        }]
    }
}

fn frame(v: Value) -> Vec<u8> {
    let body = v.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

async fn read<R: tokio::io::AsyncBufRead + Unpin>(r: &mut R) -> Value {
    let mut len = 0;
    loop {
        let mut line = String::new();
        r.read_line(&mut line).await.expect("read");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse().expect("length");
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).await.expect("body");
    serde_json::from_slice(&body).expect("json")
}

fn codes(v: &Value) -> Vec<String> {
    v["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["code"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kernel_diagnostics_come_after_the_debounce_for_the_latest_version_only() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = tokio::spawn(fevlint_lsp::serve(server_read, server_write, Some(Arc::new(Fake(Arc::clone(&seen))))));
    let (client_read, mut client_write) = tokio::io::split(client_io);
    let mut client_read = BufReader::new(client_read);

    client_write
        .write_all(&frame(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})))
        .await
        .expect("w");
    read(&mut client_read).await;
    let uri = "file:///k/test.fev";
    let open = json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": "ip_rcv(x64 skb, x86 dev)\n"}}});
    client_write.write_all(&frame(open)).await.expect("w");
    let first = read(&mut client_read).await;
    assert_eq!(
        (first["params"]["version"].clone(), codes(&first)),
        (json!(1), vec!["S001".to_owned()]),
        "syntax at once"
    );
    // Two quick edits inside the debounce: only version 3 is checked by the kernel.
    for (version, text) in [(2, "x"), (3, "y")] {
        let change = json!({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 1}}, "text": text}]}});
        client_write.write_all(&frame(change)).await.expect("w");
    }
    let mut published = Vec::new();
    let kernel = loop {
        let v =
            tokio::time::timeout(Duration::from_secs(5), read(&mut client_read)).await.expect("kernel publish in time");
        published.push((v["params"]["version"].clone(), codes(&v)));
        if codes(&v).contains(&"K999".to_owned()) {
            break v;
        }
    };
    assert_eq!(kernel["params"]["version"], 3, "published: {published:?}");
    // In the order `fevlint check` gives: by place (the K999 at the start of the text first).
    assert_eq!(codes(&kernel), ["K999", "S001", "S001"], "syntax and kernel diagnostics, in order");
    assert_eq!(*seen.lock().expect("lock"), ["ip_rcv(x64 skb, x86 dev)\ny"], "stale versions were never checked");

    client_write.write_all(&frame(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))).await.expect("w");
    read(&mut client_read).await;
    client_write.write_all(&frame(json!({"jsonrpc": "2.0", "method": "exit"}))).await.expect("w");
    assert!(
        tokio::time::timeout(Duration::from_secs(5), server).await.expect("server ends").expect("join"),
        "clean exit"
    );
}
