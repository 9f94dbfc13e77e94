//! Pull diagnostics and the whole workspace (issue 26): `textDocument/diagnostic` answers
//! "unchanged" for an unchanged document and the full report otherwise, and a document
//! pulled is no longer pushed; `workspace/diagnostic` reports every script of the
//! workspace in every dialect with the findings `fevlint check` gives, re-sends only what
//! changed, and follows the files on disk (`workspace/didChangeWatchedFiles`); a client
//! that does not pull gets the scripts on disk pushed, and so does a client that pulls but
//! cannot be asked to pull again.

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const PULL: &str = r#"{"textDocument": {"diagnostic": {"dynamicRegistration": false}},
    "workspace": {"diagnostics": {"refreshSupport": true}, "didChangeWatchedFiles": {"dynamicRegistration": true}}}"#;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-lsp-pull-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir.canonicalize().expect("canonical")
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

fn codes(items: &Value) -> Vec<String> {
    items.as_array().into_iter().flatten().filter_map(|d| d["code"].as_str().map(str::to_owned)).collect()
}

/// `fevlint check`'s codes for a script, in its order.
fn check_codes(path: &Path) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["check", "--format", "json"])
        .arg(path)
        .output()
        .expect("run fevlint check");
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", path.display(), String::from_utf8_lossy(&out.stderr)));
    codes(&v["diagnostics"])
}

fn change(uri: &str, version: i64, line: u32, from: u32, to: u32, text: &str) -> Value {
    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [
        {"range": {"start": {"line": line, "character": from}, "end": {"line": line, "character": to}}, "text": text}]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulled_document_answers_unchanged_until_its_findings_change() {
    let mut c = Client::start();
    c.initialize(serde_json::from_str(PULL).expect("caps"), Value::Null).await;
    let uri = "file:///tmp/fevlint-pull/a.fev";
    let text = "vfs_read(x64 file)\nvfs_read(x64 file)\n# fevlint is here\nip_rcv(x64 skb, x86 dev)\n";
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
    let doc = json!({"textDocument": {"uri": uri}});
    let full = c.request("textDocument/diagnostic", doc.clone()).await;
    assert_eq!(full["kind"], "full", "{full:#}");
    assert_eq!(codes(&full["items"]), ["N101", "S001"], "{full:#}");
    let id = full["resultId"].as_str().expect("resultId").to_owned();
    assert!(!id.starts_with("fevlint-raw"), "the placeholder was replaced: {id}");

    let again =
        c.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}, "previousResultId": id})).await;
    assert_eq!(again, json!({"kind": "unchanged", "resultId": id}));

    // An edit that leaves the findings as they were: still unchanged.
    c.notify("textDocument/didChange", change(uri, 2, 2, 2, 2, "x")).await;
    let same =
        c.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}, "previousResultId": id})).await;
    assert_eq!(same["kind"], "unchanged", "{same:#}");
    // One that changes them: the full report, with the positions of the new text.
    c.notify("textDocument/didChange", change(uri, 3, 0, 0, 0, "# moved\n")).await;
    let moved =
        c.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}, "previousResultId": id})).await;
    assert_eq!(moved["kind"], "full", "{moved:#}");
    assert_ne!(moved["resultId"], json!(id));
    assert_eq!(codes(&moved["items"]), ["N101", "S001"]);
    assert_eq!(moved["items"][0]["range"]["start"]["line"], 2, "{moved:#}");
    assert_eq!(moved["items"][1]["range"]["start"]["line"], 4, "{moved:#}");

    // Pulled documents are not pushed: only the publish before the first pull (and the
    // empty one clearing it) were sent.
    let id = c.request("fevlint/noSuchMethod", json!({})).await;
    assert_eq!(id, Value::Null);
    let pushed: Vec<usize> = c
        .seen
        .iter()
        .filter(|v| v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri)
        .map(|v| v["params"]["diagnostics"].as_array().map_or(0, Vec::len))
        .collect();
    // The empty publish replaces the open's when that one still waits in the output queue
    // (a newer publish of a document replaces the queued one): which, is the scheduler's.
    assert!(
        matches!(pushed.as_slice(), [2, 0] | [0]),
        "the open's publish, then the empty one after the first pull: {pushed:?}"
    );
    c.finish().await;
}

/// A diagnostic carries the rule's link (`codeDescription`) and its notes as related
/// information only for a client that declares it takes them (VS Code does, Neovim and
/// Eglot do not take the link), pushed or pulled; otherwise the notes are in the message.
/// Neovim 0.11 declares related information but never shows it: by its name (clientInfo),
/// it gets the notes in the message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_diagnostic_carries_what_the_client_declares_it_shows() {
    let text = "vfs_read(x64 file)\nvfs_read(x64 file)\n";
    let vscode = json!({"relatedInformation": true, "codeDescriptionSupport": true});
    let neovim = json!({"relatedInformation": true, "dataSupport": true});
    let eglot = json!({"relatedInformation": false, "codeDescriptionSupport": false});
    for (name, publish, pull) in [
        ("vscode", &vscode, false),
        ("neovim", &neovim, false),
        ("eglot", &eglot, false),
        ("none", &json!({}), false),
        ("pull 3.18", &json!({}), true),
        ("Neovim", &neovim, false),
    ] {
        let mut caps = json!({"textDocument": {"publishDiagnostics": publish}});
        if pull {
            caps["textDocument"]["diagnostic"] = vscode.clone();
        }
        let mut c = Client::start();
        let info = json!({"name": name, "version": "0.11.4"});
        c.request("initialize", json!({"capabilities": caps, "clientInfo": info})).await;
        c.notify("initialized", json!({})).await;
        let uri = "file:///tmp/fevlint-pull/links.fev";
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
        )
        .await;
        let d = if pull {
            c.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}})).await["items"][0].clone()
        } else {
            let p = c.wait("publish", |v| v["method"] == "textDocument/publishDiagnostics").await;
            p["params"]["diagnostics"][0].clone()
        };
        assert_eq!((d["code"].as_str(), d["source"].as_str()), (Some("N101"), Some("fevlint")), "{name}: {d:#}");
        let links = pull || publish["codeDescriptionSupport"] == true;
        let href = d["codeDescription"]["href"].as_str();
        assert_eq!(href.is_some_and(|h| h.ends_with("/docs/rules/N101.md")), links, "{name}: {d:#}");
        assert_eq!(d.get("codeDescription").is_some(), links, "{name}: {d:#}");
        let related = name != "Neovim" && (pull || publish["relatedInformation"] == true);
        let message = d["message"].as_str().unwrap_or("");
        assert_eq!(d.get("relatedInformation").is_some(), related, "{name}: {d:#}");
        assert_eq!(message.contains('\n'), !related, "{name}: the notes go in the message: {d:#}");
        c.finish().await;
    }
}

/// A workspace of every dialect, no kernels.
fn workspace(name: &str) -> (PathBuf, Vec<PathBuf>) {
    let dir = temp_dir(name);
    let files = [
        ("probes/a.fev", "vfs_read(x64 file)\nvfs_read(x64 file)\n"),
        ("probes/clean.fev", "vfs_read(x64 file)\n"),
        ("probes/b.dynevents", "p:my vfs_read file=%di:x64 bad=+0(\n"),
        ("kprobe_events", "p:ok vfs_read\n"),
        ("tools/c.bt", "kprobe:vfs_read { printf(\"%d\\n\", arg0 }\n"),
        (".git/hidden.fev", "x(\n"),
    ];
    let mut paths = Vec::new();
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, text).expect("write");
        if !name.starts_with('.') {
            paths.push(p);
        }
    }
    paths.sort();
    (dir, paths)
}

async fn start_in(dir: &Path, caps: Value) -> Client {
    let mut c = Client::start();
    let params = json!({"capabilities": caps, "rootUri": uri(dir),
        "workspaceFolders": [{"uri": uri(dir), "name": "w"}]});
    c.request("initialize", params).await;
    c.notify("initialized", json!({})).await;
    c
}

fn by_uri(report: &Value) -> std::collections::BTreeMap<String, Value> {
    report["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["uri"].as_str().unwrap_or("").to_owned(), i.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workspace_report_holds_every_script_and_follows_the_disk() {
    let (dir, paths) = workspace("report");
    let mut c = start_in(&dir, serde_json::from_str(PULL).expect("caps")).await;
    let report = c.request("workspace/diagnostic", json!({"previousResultIds": []})).await;
    let items = by_uri(&report);
    let want: Vec<String> = paths.iter().map(|p| uri(p)).collect();
    assert_eq!(items.keys().cloned().collect::<Vec<_>>(), want, "every script, no hidden folder: {report:#}");
    for p in &paths {
        let item = &items[&uri(p)];
        assert_eq!(item["kind"], "full", "{item:#}");
        assert_eq!(item["version"], Value::Null);
        assert_eq!(codes(&item["items"]), check_codes(p), "{}: as `fevlint check`", p.display());
    }
    assert_eq!(codes(&items[&uri(&dir.join("probes/a.fev"))]["items"]), ["N101"]);

    // Asked again with the result ids: nothing is re-sent.
    let previous: Vec<Value> = items.values().map(|i| json!({"uri": i["uri"], "value": i["resultId"]})).collect();
    let again = c.request("workspace/diagnostic", json!({"previousResultIds": previous})).await;
    assert!(by_uri(&again).values().all(|i| i["kind"] == "unchanged" && i.get("items").is_none()), "{again:#}");

    // A file changes on disk, one is deleted, one is created.
    let changed = dir.join("probes/clean.fev");
    std::fs::write(&changed, "vfs_read(x64 file)\nip_rcv(x64 skb, x86 dev)\n").expect("write");
    let deleted = dir.join("kprobe_events");
    std::fs::remove_file(&deleted).expect("rm");
    let created = dir.join("tools/new.fev");
    std::fs::write(&created, "x(\n").expect("write");
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [
        {"uri": uri(&changed), "type": 2}, {"uri": uri(&deleted), "type": 3}, {"uri": uri(&created), "type": 1}]}),
    )
    .await;
    let after = c.request("workspace/diagnostic", json!({"previousResultIds": previous})).await;
    let after = by_uri(&after);
    assert!(!after.contains_key(&uri(&deleted)), "the deleted file is gone");
    let full: Vec<&String> = after.iter().filter(|(_, i)| i["kind"] == "full").map(|(u, _)| u).collect();
    assert_eq!(full, [&uri(&changed), &uri(&created)], "only what changed is re-sent");
    assert_eq!(codes(&after[&uri(&changed)]["items"]), check_codes(&changed));
    assert_eq!(codes(&after[&uri(&created)]["items"]), ["S001"]);

    // An open document is reported from its text, with its version.
    let open = uri(&dir.join("probes/a.fev"));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": open, "languageId": "fev", "version": 7,
        "text": "vfs_read(x64 file)\n"}}),
    )
    .await;
    let with_open = by_uri(&c.request("workspace/diagnostic", json!({"previousResultIds": []})).await);
    assert_eq!(with_open[&open]["version"], 7);
    assert_eq!(codes(&with_open[&open]["items"]), Vec::<String>::new());
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_pull_gets_the_scripts_on_disk_pushed() {
    let (dir, paths) = workspace("push");
    let mut c = start_in(&dir, json!({})).await;
    for p in &paths {
        let want = check_codes(p);
        if want.is_empty() {
            continue;
        }
        let u = uri(p);
        let got = c
            .wait("a publish of a script on disk", |v| {
                v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == u.as_str()
            })
            .await;
        assert_eq!(codes(&got["params"]["diagnostics"]), want, "{}", p.display());
        assert!(got["params"].get("version").is_none(), "no version for a file on disk: {got:#}");
    }
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A script on disk that is opened and closed again gets its findings on disk pushed
/// again: the close clears what the open text drew, and the file, unchanged on disk, must
/// not be taken for one whose findings the client already has.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_script_gets_its_findings_on_disk_pushed_again() {
    let (dir, paths) = workspace("push-close");
    let p = paths.iter().find(|p| p.ends_with("probes/a.fev")).expect("a.fev");
    let want = check_codes(p);
    assert!(!want.is_empty(), "a.fev draws findings on disk");
    let u = uri(p);
    let mut c = start_in(&dir, json!({})).await;
    let is_publish = |v: &Value, u: &str| v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == u;
    let first = c.wait("the push from disk", |v| is_publish(v, u.as_str())).await;
    assert_eq!(codes(&first["params"]["diagnostics"]), want);
    for round in 0..2 {
        // Opened with a text that draws nothing: its publish replaces the file's.
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": u, "languageId": "fev", "version": 1, "text": "vfs_read(x64 file)\n"}}),
        )
        .await;
        let open =
            c.wait("the open text's publish", |v| is_publish(v, u.as_str()) && v["params"]["version"] == 1).await;
        assert_eq!(codes(&open["params"]["diagnostics"]), Vec::<String>::new(), "round {round}");
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}})).await;
        let again = c
            .wait("the findings on disk pushed again after the close", |v| {
                is_publish(v, u.as_str()) && !v["params"]["diagnostics"].as_array().is_some_and(Vec::is_empty)
            })
            .await;
        assert_eq!(codes(&again["params"]["diagnostics"]), want, "round {round}");
    }
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Neovim 0.11 pulls after its own edits but declares no
/// `workspace.diagnostics.refreshSupport`: findings that change later (a kernel that loads,
/// a file changed on disk) would never reach it. The server offers it no pull, so it takes
/// pushes; a client that can be asked again is offered pull diagnostics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_cannot_be_asked_to_pull_again_is_offered_pushes() {
    let dir = temp_dir("no-refresh");
    let pulls_only = json!({"textDocument": {"diagnostic": {"dynamicRegistration": false}}});
    for (caps, offered) in [(pulls_only, false), (serde_json::from_str(PULL).expect("caps"), true)] {
        let mut c = Client::start();
        let init = c.request("initialize", json!({"capabilities": caps, "rootUri": uri(&dir)})).await;
        assert_eq!(init["capabilities"].get("diagnosticProvider").is_some(), offered, "{caps}: {init:#}");
        c.notify("initialized", json!({})).await;
        if !offered {
            let u = uri(&dir.join("a.fev"));
            c.notify(
                "textDocument/didOpen",
                json!({"textDocument": {"uri": u, "languageId": "fev", "version": 1, "text": "x(\n"}}),
            )
            .await;
            let got = c
                .wait("a publish", |v| {
                    v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == u.as_str()
                })
                .await;
            assert!(!codes(&got["params"]["diagnostics"]).is_empty(), "{got:#}");
        }
        c.finish().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
