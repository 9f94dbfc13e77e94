//! `fevlint/status`: what decides a document's checks, per document, from the server's
//! state (issue 21: the VS Code status bar read log lines and said a kernel was loaded
//! after a malformed `fevlint.toml` had dropped it). A configuration error is shown with
//! `window/showMessageRequest` and an "Open fevlint.toml" action that opens the file
//! (`window/showDocument`), once while it lasts, and again when it comes back.

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name).canonicalize().expect("fixture")
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn status_of<'a>(uri: &'a str, pred: impl Fn(&Value) -> bool + 'a) -> impl Fn(&Value) -> bool + 'a {
    move |v: &Value| v["method"] == "fevlint/status" && v["params"]["uri"] == uri && pred(&v["params"])
}

fn kernel_states(status: &Value) -> Vec<String> {
    status["kernels"].as_array().into_iter().flatten().map(|k| k["state"].as_str().unwrap_or("").to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_follows_the_server_per_document_and_config_errors_are_shown() {
    let dir = std::env::temp_dir().join(format!("fevlint-lsp-status-{}", std::process::id()));
    let (with, without) = (dir.join("with"), dir.join("without"));
    std::fs::create_dir_all(&with).expect("mkdir");
    std::fs::create_dir_all(&without).expect("mkdir");
    let toml = with.join("fevlint.toml");
    let good = format!("kernels = [{:?}]\n", kernel("6.12.117+deb12-amd64").display().to_string());
    std::fs::write(&toml, &good).expect("write");
    let (a, b) = (uri(&with.join("a.fev")), uri(&without.join("b.dynevents")));

    let mut c = Client::start();
    c.answers.push(("window/showMessageRequest".to_owned(), json!({"title": "Open fevlint.toml"})));
    c.answers.push(("window/showDocument".to_owned(), json!({"success": true})));
    c.initialize(json!({"window": {"showDocument": {"support": true}}}), Value::Null).await;
    let text = "vfs_read(x64 file)\n";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": a, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": b, "languageId": "dynevents", "version": 1, "text": "p:x vfs_read\n"}}),
    )
    .await;

    // Per document: `a` has the kernel of its fevlint.toml, loaded; `b` none.
    let loaded = c.wait("a's kernel loaded", status_of(&a, |s| kernel_states(s) == ["loaded"])).await;
    let s = &loaded["params"];
    assert_eq!(s["kernels"][0]["name"], "6.12.117+deb12-amd64", "{s:#}");
    assert_eq!(s["config"], json!(toml.display().to_string()), "{s:#}");
    assert_eq!((s["dialect"].as_str(), s["checked"].as_bool()), (Some("fev"), Some(true)), "{s:#}");
    assert_eq!(s["problems"], json!([]), "{s:#}");
    let other = c.wait("b's status", status_of(&b, |_| true)).await;
    let s = &other["params"];
    assert_eq!(
        (s["kernels"].clone(), s["config"].clone(), s["dialect"].as_str()),
        (json!([]), Value::Null, Some("dynevents"))
    );

    // A malformed fevlint.toml: the kernel is dropped, and the status says so.
    std::fs::write(&toml, "kernels = [\n").expect("write");
    let changed = json!({"changes": [{"uri": uri(&toml), "type": 2}]});
    c.notify("workspace/didChangeWatchedFiles", changed.clone()).await;
    let broken = c
        .wait("a's status with the error", status_of(&a, |s| !s["problems"].as_array().is_some_and(Vec::is_empty)))
        .await;
    let s = &broken["params"];
    assert_eq!(s["kernels"], json!([]), "the dropped kernel is not reported as loaded: {s:#}");
    assert_eq!(s["problems"][0]["file"], json!(toml.display().to_string()), "{s:#}");
    let asked = c.wait("the error shown", |v| v["method"] == "window/showMessageRequest").await;
    let message = asked["params"]["message"].as_str().unwrap_or("");
    assert!(message.contains("fevlint.toml") && message.contains("not used"), "{asked:#}");
    assert_eq!(asked["params"]["actions"], json!([{"title": "Open fevlint.toml"}]), "{asked:#}");
    let shown = c.wait("fevlint.toml opened", |v| v["method"] == "window/showDocument").await;
    assert_eq!(shown["params"]["uri"], json!(uri(&toml)), "{shown:#}");

    // Unchanged: not shown again. Fixed: the kernel is back. Broken again: shown again.
    c.notify("workspace/didChangeWatchedFiles", changed.clone()).await;
    std::fs::write(&toml, &good).expect("write");
    c.notify("workspace/didChangeWatchedFiles", changed.clone()).await;
    c.wait("a's kernel back", status_of(&a, |s| kernel_states(s) == ["loaded"] && s["problems"] == json!([]))).await;
    let asked_twice = c.seen.iter().filter(|v| v["method"] == "window/showMessageRequest").count();
    assert_eq!(asked_twice, 0, "the same error was shown twice: {:#?}", c.seen);
    std::fs::write(&toml, "kernels = 3\n").expect("write");
    c.notify("workspace/didChangeWatchedFiles", changed).await;
    let again = c.wait("the new error shown", |v| v["method"] == "window/showMessageRequest").await;
    assert!(again["params"]["message"].as_str().is_some_and(|m| m.contains("fevlint.toml")), "{again:#}");
    c.finish().await;
    std::fs::remove_dir_all(&dir).ok();
}
