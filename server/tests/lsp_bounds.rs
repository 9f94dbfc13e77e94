//! The language server's cost stays bounded (issue 21): a client that sends edits faster
//! than it reads gets the newest publish of a document, not one per superseded version
//! (10,000 edits of a 200 KB publish reached 1.7 GB), and a document over the size limit
//! is refused with a message and one diagnostic instead of costing gigabytes, while the
//! server keeps serving. The figures are in `scripts/bench-lsp-bounds.py`'s runs.

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};

fn is_publish(v: &Value, uri: &str) -> bool {
    v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri
}

fn edit(uri: &str, version: i64, line: u32, from: u32, to: u32, text: &str) -> Value {
    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [
        {"range": {"start": {"line": line, "character": from}, "end": {"line": line, "character": to}}, "text": text}]})
}

/// This process's CPU time in clock ticks (user + system, `/proc/self/stat`).
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    // The fields after the command name (which may hold spaces) in parentheses.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    field(11) + field(12)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_sent_without_reading_get_the_newest_publish_not_one_per_version() {
    // Pipes of 64 KiB, as an editor's: the client's writes wait for the server to read, and
    // while the client writes it does not read.
    let mut c = Client::start_with_pipe(64 << 10);
    c.initialize(json!({}), Value::Null).await;
    let uri = "file:///tmp/fevlint-bounds/flood.fev";
    // 499 N101: a publish of about 170 KB, more than the pipe holds.
    let text = "vfs_read(x64 file)\n".repeat(500);
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
    let edits = 2_000;
    for v in 2..edits + 2 {
        // Each edit changes the findings (an edit that does not is not published at all):
        // `xvfs_read` on the second line has no event in common with the others.
        let change = if v % 2 == 0 { edit(uri, v, 1, 0, 0, "x") } else { edit(uri, v, 1, 0, 1, "") };
        c.notify("textDocument/didChange", change).await;
    }
    // The client is busy elsewhere until the server has handled every edit (it has then
    // used no CPU for a second; it runs in this process).
    let mut quiet = 0;
    let mut before = cpu_ticks();
    while quiet < 5 {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let now = cpu_ticks();
        quiet = if now - before <= 2 { quiet + 1 } else { 0 };
        before = now;
    }
    let last = edits + 1;
    let mut publishes = Vec::new();
    loop {
        let v = c.wait("a publish", |v| is_publish(v, uri)).await;
        let version = v["params"]["version"].as_i64().unwrap_or(-1);
        publishes.push(version);
        if version == last {
            assert_eq!(v["params"]["diagnostics"].as_array().map(Vec::len), Some(499));
            break;
        }
    }
    assert!(publishes.windows(2).all(|w| w[0] < w[1]), "publishes in version order: {publishes:?}");
    // The first publish, the one the writer was sending when the pipe filled, and the
    // newest: not one per version.
    assert!(publishes.len() <= 3, "{} publishes for {edits} edits: {publishes:?}", publishes.len());
    c.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_over_the_size_limit_is_refused_and_the_server_keeps_serving() {
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null).await;
    let uri = "file:///tmp/fevlint-bounds/huge.fev";
    let lines = fevlint_lsp::MAX_DOCUMENT_LINES;
    // One line over the limit (the empty last line counts, as the protocol counts it).
    let text = "x\n".repeat(lines);
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
    let shown = c.wait("the refusal", |v| v["method"] == "window/showMessage").await;
    let message = shown["params"]["message"].as_str().unwrap_or("").to_owned();
    assert!(message.contains("not checked") && message.contains(&format!("{}", lines + 1)), "{message}");
    assert!(message.contains("fevlint check"), "{message}");
    let refused = c.wait("the refusal's diagnostic", |v| is_publish(v, uri)).await;
    let diagnostics = refused["params"]["diagnostics"].as_array().cloned().unwrap_or_default();
    assert_eq!(diagnostics.len(), 1, "{refused:#}");
    assert!(diagnostics[0]["message"].as_str().is_some_and(|m| m.contains("not checked")), "{refused:#}");
    let status = c.wait("its status", |v| v["method"] == "fevlint/status" && v["params"]["uri"] == uri).await;
    assert_eq!(status["params"]["checked"], false, "{status:#}");
    assert!(status["params"]["refused"].as_str().is_some_and(|m| m.contains("not checked")), "{status:#}");

    // Another document is checked meanwhile; requests on the refused one answer nothing.
    let small = "file:///tmp/fevlint-bounds/small.fev";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": small, "languageId": "fev", "version": 1, "text": "vfs_read(x64 a\n"}}),
    )
    .await;
    let checked = c.wait("the small document's publish", |v| is_publish(v, small)).await;
    assert_eq!(checked["params"]["diagnostics"][0]["code"], "S001", "{checked:#}");
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}))
        .await;
    assert_eq!(hover, Value::Null);

    // An edit that keeps it over the limit keeps the refusal, with its version.
    c.notify("textDocument/didChange", edit(uri, 2, 0, 0, 0, "y")).await;
    let still = c.wait("the refusal again", |v| is_publish(v, uri) && v["params"]["version"] == 2).await;
    assert!(still["params"]["diagnostics"][0]["message"].as_str().is_some_and(|m| m.contains("not checked")));
    // Deleting all but two lines brings it under: it is checked from then on.
    let cut = json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [
        {"range": {"start": {"line": 2, "character": 0}, "end": {"line": lines as u32, "character": 0}}, "text": ""}]});
    c.notify("textDocument/didChange", cut).await;
    let under = c.wait("the check of version 3", |v| is_publish(v, uri) && v["params"]["version"] == 3).await;
    let codes: Vec<&str> =
        under["params"]["diagnostics"].as_array().into_iter().flatten().filter_map(|d| d["code"].as_str()).collect();
    assert_eq!(codes, ["S001", "S001"], "`yx` and `x` are not definitions: {under:#}");
    // A paste that takes a checked document over the limit refuses it before it is read.
    let paste = json!({"textDocument": {"uri": small, "version": 2}, "contentChanges": [
        {"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}}, "text": "x\n".repeat(lines)}]});
    c.notify("textDocument/didChange", paste).await;
    let pasted = c.wait("the refusal after the paste", |v| is_publish(v, small) && v["params"]["version"] == 2).await;
    assert!(
        pasted["params"]["diagnostics"][0]["message"].as_str().is_some_and(|m| m.contains("not checked")),
        "{pasted:#}"
    );
    // Said once, when it happens, as on open; its status says it is not checked.
    let told = c.wait("the message after the paste", |v| v["method"] == "window/showMessage").await;
    assert!(told["params"]["message"].as_str().is_some_and(|m| m.contains("not checked")), "{told:#}");
    let status = c
        .wait("its status", |v| {
            v["method"] == "fevlint/status" && v["params"]["uri"] == small && v["params"]["checked"] == false
        })
        .await;
    assert!(status["params"]["refused"].as_str().is_some(), "{status:#}");
    c.finish().await;
}
