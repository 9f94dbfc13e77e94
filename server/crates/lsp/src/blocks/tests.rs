//! `fevlint/diagnosticBlocks` against the server's own pull report: a client that keeps
//! the blocks as the extension says (each listed block replaces its own, blocks at or past
//! `blockCount` dropped) holds, after any edits, exactly what a pulling client is given;
//! the workspace's scripts on disk are pushed while closed and never shown twice.

use crate::transport::{self, Frame};
use fevlint_testkit::Rng;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};

const BLOCKS: &str = r#"{"experimental": {"fevlintDiagnosticBlocks": true}}"#;
const PULL: &str = r#"{"textDocument": {"diagnostic": {"dynamicRegistration": false}},
    "workspace": {"diagnostics": {"refreshSupport": true}}}"#;

/// What a client shows: per document, its pushed diagnostics and its blocks.
#[derive(Default)]
struct Shown {
    pushed: HashMap<String, Vec<Value>>,
    blocks: HashMap<String, BTreeMap<u64, Vec<Value>>>,
    /// Blocks sent with the content the client already had (none should be).
    resent_unchanged: usize,
    /// Blocks listed per notification.
    listed: Vec<usize>,
}

impl Shown {
    fn take(&mut self, v: &Value) {
        let p = &v["params"];
        let uri = p["uri"].as_str().unwrap_or("").to_owned();
        if v["method"] == "textDocument/publishDiagnostics" {
            self.pushed.insert(uri, p["diagnostics"].as_array().cloned().unwrap_or_default());
        } else if v["method"] == super::METHOD {
            let count = p["blockCount"].as_u64().expect("blockCount");
            assert_eq!(p["blockLines"], super::BLOCK_LINES, "{v}");
            let held = self.blocks.entry(uri.clone()).or_default();
            let listed = p["blocks"].as_array().expect("blocks");
            self.listed.push(listed.len());
            for b in listed {
                let k = b["index"].as_u64().expect("index");
                assert!(k < count, "block {k} of {count}: {v}");
                let items = b["diagnostics"].as_array().cloned().expect("diagnostics");
                for d in &items {
                    let line = d["range"]["start"]["line"].as_u64().expect("line");
                    assert_eq!(line / u64::from(super::BLOCK_LINES), k, "a diagnostic in its line's block: {d}");
                }
                let before = held.get(&k).cloned().unwrap_or_default();
                self.resent_unchanged += usize::from(before == items);
                held.insert(k, items);
            }
            held.retain(|&k, _| k < count);
            if count == 0 {
                self.blocks.remove(&uri);
            }
        }
    }

    /// The document's diagnostics held by block, in block order.
    fn by_block(&self, uri: &str) -> Vec<Value> {
        self.blocks.get(uri).into_iter().flat_map(|b| b.values().flatten().cloned()).collect()
    }

    fn pushed(&self, uri: &str) -> Vec<Value> {
        self.pushed.get(uri).cloned().unwrap_or_default()
    }
}

struct Client {
    read: BufReader<ReadHalf<DuplexStream>>,
    write: WriteHalf<DuplexStream>,
    server: tokio::task::JoinHandle<bool>,
    next: i64,
    shown: Shown,
    /// Every notification's method, in order.
    methods: Vec<String>,
    /// Notifications and server requests not yet looked at by `wait`.
    unread: Vec<Value>,
}

impl Client {
    async fn start(capabilities: &str, root: Option<&std::path::Path>) -> (Client, Value) {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server);
        let server = tokio::spawn(crate::serve(server_read, server_write, None));
        let (read, write) = tokio::io::split(client);
        let mut c = Client {
            read: BufReader::new(read),
            write,
            server,
            next: 1,
            shown: Shown::default(),
            methods: Vec::new(),
            unread: Vec::new(),
        };
        let mut params = json!({"capabilities": serde_json::from_str::<Value>(capabilities).expect("caps")});
        if let Some(root) = root {
            let u = format!("file://{}", root.display());
            params["rootUri"] = json!(u);
            params["workspaceFolders"] = json!([{"uri": u, "name": "w"}]);
        }
        let init = c.request("initialize", params).await;
        c.notify("initialized", json!({})).await;
        (c, init)
    }

    async fn send(&mut self, v: Value) {
        self.write.write_all(&transport::frame(v.to_string().as_bytes())).await.expect("write");
    }

    async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params})).await;
    }

    /// Reads one message: a notification is shown, a server request answered with `null`.
    async fn read(&mut self) -> Value {
        let body = match tokio::time::timeout(Duration::from_secs(60), transport::read_frame(&mut self.read)).await {
            Ok(Ok(Frame::Body(body))) => body,
            other => panic!("no message from the server: {:?}", other.map(|r| r.map(|_| ()))),
        };
        let v: Value = serde_json::from_slice(&body).expect("json");
        if let Some(method) = v["method"].as_str() {
            if v.get("id").is_some() {
                self.send(json!({"jsonrpc": "2.0", "id": v["id"].clone(), "result": null})).await;
            } else {
                self.methods.push(method.to_owned());
                self.shown.take(&v);
            }
            self.unread.push(v.clone());
        }
        v
    }

    /// A request's answer; what came before it is read (each edit's diagnostics are queued
    /// before the server reads its next message).
    async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        loop {
            let v = self.read().await;
            if v["id"] == id && v.get("method").is_none() {
                return v["result"].clone();
            }
        }
    }

    /// Reads until a notification matching `pred` comes (those read before count too).
    async fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        loop {
            if let Some(i) = self.unread.iter().position(&pred) {
                let v = self.unread.remove(i);
                self.unread.clear();
                return v;
            }
            let deadline = Duration::from_secs(60);
            if tokio::time::timeout(deadline, self.read()).await.is_err() {
                panic!("no {what} within {deadline:?}");
            }
        }
    }

    async fn barrier(&mut self) {
        self.request("fevlint/noSuchMethod", json!({})).await;
    }

    async fn finish(mut self) {
        self.request("shutdown", Value::Null).await;
        self.notify("exit", Value::Null).await;
        let clean = tokio::time::timeout(Duration::from_secs(10), self.server).await.expect("exit").expect("join");
        assert!(clean, "clean exit");
    }
}

/// A line of a generated script: most without findings, some with a type error (S001), a
/// half-typed definition, duplicate events (N101), a suppression comment (the document is
/// then reported whole, not from its encoded lines).
fn line(rng: &mut Rng, i: usize) -> String {
    match rng.below(40) {
        0..=2 => format!("ip_rcv_{i}(x64 skb, x86 dev)"),
        3 => "vfs_read(x64 file)".to_owned(),
        4 => format!("f{i}("),
        5 => "# a comment".to_owned(),
        6 => String::new(),
        7 if rng.below(8) == 0 => "# fevlint: ignore[S001]".to_owned(),
        _ => format!("f{i}(x64 a0, u32 count+8[0])"),
    }
}

fn change(uri: &str, version: i64, from: (usize, usize), to: (usize, usize), text: &str) -> Value {
    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {
        "start": {"line": from.0, "character": from.1}, "end": {"line": to.0, "character": to.1}}, "text": text}]})
}

/// Random edits to a 2,300-line script (typing in a line, lines replaced, inserted and
/// deleted, suppression comments coming and going) sent to a client taking blocks and to
/// one pulling: after each, the blocks held equal the pull report, no unchanged block was
/// sent, and the blocks client got no `publishDiagnostics` for the open document but the
/// empty one that clears what was pushed before it opened. The pulling client is offered
/// pulls and gets no blocks; the blocks client is not offered pulls.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocks_held_after_random_edits_are_the_pull_report() {
    let (mut blocks, init) = Client::start(BLOCKS, None).await;
    assert!(init["capabilities"].get("diagnosticProvider").is_none(), "{init:#}");
    let (mut pull, init) = Client::start(PULL, None).await;
    assert!(init["capabilities"].get("diagnosticProvider").is_some(), "{init:#}");
    let uri = "file:///nowhere/blocks/a.fev";
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut lines: Vec<String> = (0..2_300).map(|i| line(&mut rng, i)).collect();
    let open = json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 0, "text": lines.join("\n")}});
    for c in [&mut blocks, &mut pull] {
        c.notify("textDocument/didOpen", open.clone()).await;
    }
    let mut compared_whole = 0;
    for version in 1..=200i64 {
        let l = rng.below(lines.len());
        let (from, to, text) = match rng.below(10) {
            // A character typed or deleted within a line.
            0..=4 => {
                let at = rng.below(lines[l].len() + 1);
                if rng.below(2) == 0 || lines[l].is_empty() {
                    lines[l].insert(at, 'x');
                    ((l, at), (l, at), "x".to_owned())
                } else {
                    let at = at.min(lines[l].len() - 1);
                    lines[l].remove(at);
                    ((l, at), (l, at + 1), String::new())
                }
            }
            // A line replaced.
            5..=6 => {
                let new = line(&mut rng, 10_000 + version as usize);
                let old = std::mem::replace(&mut lines[l], new.clone());
                ((l, 0), (l, old.len()), new)
            }
            // A line inserted.
            7..=8 => {
                let new = line(&mut rng, 20_000 + version as usize);
                lines.insert(l, new.clone());
                ((l, 0), (l, 0), new + "\n")
            }
            // A line deleted.
            _ if lines.len() > 1 && l + 1 < lines.len() => {
                lines.remove(l);
                ((l, 0), (l + 1, 0), String::new())
            }
            _ => ((l, 0), (l, 0), String::new()),
        };
        let edit = change(uri, version, from, to, &text);
        for c in [&mut blocks, &mut pull] {
            c.notify("textDocument/didChange", edit.clone()).await;
        }
        blocks.barrier().await;
        let report = pull.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}})).await;
        let want = report["items"].as_array().cloned().expect("a full report");
        let got = blocks.shown.by_block(uri);
        assert_eq!(got.len(), want.len(), "version {version}");
        assert!(got == want, "version {version}: the blocks held are the pull report");
        compared_whole += usize::from(lines.iter().any(|l| l.contains("fevlint:")));
        assert_eq!(blocks.shown.pushed(uri), Vec::<Value>::new());
    }
    assert!(compared_whole > 10, "the document reported whole (suppressions) in {compared_whole} versions");
    assert!(blocks.shown.listed.len() > 100, "a notification for most edits: {:?}", blocks.shown.listed);
    assert_eq!(blocks.shown.resent_unchanged, 0, "only changed blocks are sent");
    // Typing within a line without suppressions usually sends one block: what an edit
    // costs, not the document's findings.
    let one = blocks.shown.listed.iter().filter(|&&n| n <= 1).count();
    assert!(one * 2 > blocks.shown.listed.len(), "blocks listed per notification: {:?}", blocks.shown.listed);
    assert!(!pull.methods.iter().any(|m| m == super::METHOD), "{:?}", pull.methods);
    let pushes = blocks.methods.iter().filter(|m| *m == "textDocument/publishDiagnostics").count();
    assert!(pushes <= 1, "only the clearing push at the open: {:?}", blocks.methods);

    // A mainline document goes by block too (written whole, not from encoded lines).
    let dynevents = "file:///nowhere/blocks/b.dynevents";
    let text = "p:my vfs_read file=%di:x64 bad=+0(\n".repeat(3) + &"# c\n".repeat(600) + "p:ok vfs_read x=+0(\n";
    let open = json!({"textDocument": {"uri": dynevents, "languageId": "dynevents", "version": 0, "text": text}});
    for c in [&mut blocks, &mut pull] {
        c.notify("textDocument/didOpen", open.clone()).await;
    }
    blocks.barrier().await;
    let report = pull.request("textDocument/diagnostic", json!({"textDocument": {"uri": dynevents}})).await;
    let want = report["items"].as_array().cloned().expect("a full report");
    assert!(want.len() >= 2, "{report:#}");
    assert_eq!(blocks.shown.by_block(dynevents), want);
    assert!(blocks.shown.blocks[dynevents].len() == 2, "findings in two blocks");

    // Closed: cleared by block.
    for u in [uri, dynevents] {
        blocks.notify("textDocument/didClose", json!({"textDocument": {"uri": u}})).await;
    }
    blocks.barrier().await;
    assert!(blocks.shown.blocks.is_empty(), "cleared: {:?}", blocks.shown.blocks.keys());
    blocks.finish().await;
    pull.finish().await;
}

/// The workspace's scripts on disk are pushed to a client taking blocks while they are
/// closed: opening one clears its push and its open text's findings come by block;
/// closing it clears its blocks and pushes its findings on disk again. At each step the
/// client holds each finding once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_on_disk_is_pushed_while_closed_and_by_block_while_open() {
    let dir = std::env::temp_dir().join(format!("fevlint-blocks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    let dir = dir.canonicalize().expect("canonical");
    let path = dir.join("a.fev");
    std::fs::write(&path, "vfs_read(x64 file)\nvfs_read(x64 file)\n").expect("write");
    std::fs::write(dir.join("other.fev"), "ip_rcv(x64 skb, x86 dev)\n").expect("write");
    let uri = format!("file://{}", path.display());
    let other = format!("file://{}", dir.join("other.fev").display());
    let (mut c, _) = Client::start(BLOCKS, Some(&dir)).await;
    let is_push = |u: &str| {
        let u = u.to_owned();
        move |v: &Value| v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == u.as_str()
    };
    let on_disk = c.wait("the push of a.fev", is_push(&uri)).await["params"]["diagnostics"].clone();
    let codes = |items: &[Value]| items.iter().map(|d| d["code"].as_str().unwrap_or("").to_owned()).collect::<Vec<_>>();
    let on_disk = on_disk.as_array().cloned().expect("diagnostics");
    assert_eq!(codes(&on_disk), [fevlint_check::rules::N101.code]);
    c.wait("the push of other.fev", is_push(&other)).await;

    for round in 0..2 {
        // Opened with other text: its push is cleared, its findings come by block.
        let text = "ip_rcv(x64 skb, x86 dev)\n";
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
        )
        .await;
        c.barrier().await;
        assert_eq!(c.shown.pushed(&uri), Vec::<Value>::new(), "round {round}");
        assert_eq!(codes(&c.shown.by_block(&uri)), [fevlint_check::rules::S001.code], "round {round}");
        c.notify("textDocument/didChange", change(&uri, 2, (0, 0), (0, 0), "vfs_write(x64 f)\n")).await;
        c.barrier().await;
        assert_eq!(codes(&c.shown.by_block(&uri)), [fevlint_check::rules::S001.code], "round {round}");
        assert_eq!(c.shown.by_block(&uri)[0]["range"]["start"]["line"], 1);
        assert_eq!(c.shown.pushed(&uri), Vec::<Value>::new(), "round {round}");
        // Closed: its blocks are cleared, its findings on disk pushed again.
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}})).await;
        let again = c
            .wait("the push from disk after the close", |v| {
                is_push(&uri)(v) && v["params"]["diagnostics"].as_array().is_some_and(|d| !d.is_empty())
            })
            .await;
        assert_eq!(again["params"]["diagnostics"].as_array(), Some(&on_disk), "round {round}");
        assert!(!c.shown.blocks.contains_key(&uri), "round {round}: blocks cleared");
        assert_eq!(c.shown.pushed(&uri), on_disk, "round {round}");
    }
    // The other script was never touched: still pushed, never by block.
    assert!(!c.shown.pushed(&other).is_empty());
    assert!(!c.shown.blocks.contains_key(&other));
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}
