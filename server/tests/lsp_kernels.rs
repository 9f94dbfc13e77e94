//! Kernels in the language server, on the real 6.12.117 and 6.1.0-56 fixtures: loaded in
//! the background with `$/progress`, kernel diagnostics after the debounce, hover,
//! completion, inlay hints and the T406 fix; a broken kernel path is a warning and the
//! server keeps answering; a configuration change loads the new kernel.

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name).canonicalize().expect("fixture")
}

fn codes(v: &Value) -> Vec<String> {
    v["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["code"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn messages(v: &Value) -> Vec<String> {
    v["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d["message"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn is_publish(v: &Value, version: i64, pred: impl Fn(&[String]) -> bool) -> bool {
    v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == json!(version) && pred(&codes(v))
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-lsp-kernels-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    dir
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

const SCRIPT: &str = "vfs_raed(x64 file)\nvfs_read(symbol llseek+16[0]+16)\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kernel_from_fevlint_toml_drives_diagnostics_hover_completion_hints_and_fixes() {
    let dir = temp_dir("toml");
    std::fs::write(
        dir.join("fevlint.toml"),
        format!("kernels = [{:?}]\n", kernel("6.12.117+deb12-amd64").display().to_string()),
    )
    .expect("write");
    let file = dir.join("probe.fev");
    let uri = uri(&file);
    let mut c = Client::start();
    let caps = json!({"window": {"workDoneProgress": true},
        "textDocument": {"publishDiagnostics": {"codeDescriptionSupport": true}}});
    c.initialize(caps, Value::Null).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": SCRIPT}}),
    )
    .await;

    // Syntax at once, then the kernel's findings once it is loaded and the debounce passed.
    let kernel_publish = c.wait("kernel diagnostics", |v| is_publish(v, 1, |c| c.iter().any(|x| x == "K201"))).await;
    assert_eq!(codes(&kernel_publish), ["K201", "T406"], "{kernel_publish:#}");
    let k201 = &kernel_publish["params"]["diagnostics"][0];
    assert!(k201["codeDescription"]["href"].as_str().is_some_and(|h| h.ends_with("K201.md")), "{k201}");
    assert!(k201["message"].as_str().unwrap_or("").contains("6.12.117+deb12-amd64"));
    // The load was reported as progress (create request, begin, end).
    let create = c.seen.iter().any(|v| v["method"] == "window/workDoneProgress/create");
    let kinds: Vec<&str> = c
        .seen
        .iter()
        .filter(|v| v["method"] == "$/progress")
        .filter_map(|v| v["params"]["value"]["kind"].as_str())
        .collect();
    assert!(create && kinds == ["begin", "end"], "progress: {create} {kinds:?}");

    // Hover on the function: signature, registers, traceability.
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 3}}))
        .await;
    let text = hover["contents"]["value"].as_str().unwrap_or("").to_owned();
    for want in [
        "ssize_t vfs_read(struct file * file, char * buf, size_t count, loff_t * pos);",
        "slot 0 `rdi`: `struct file *` file (8 bytes)",
        "slot 3 `rcx`: `loff_t *` pos",
        "traceable, decided by available_filter_functions",
    ] {
        assert!(text.contains(want), "hover lacks {want:?}:\n{text}");
    }
    // Hover on the field: the C expression on this kernel.
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 17}}))
        .await;
    let text = hover["contents"]["value"].as_str().unwrap_or("").to_owned();
    assert!(text.contains("records the address `&file->f_op->llseek`"), "{text}");
    assert!(text.contains("`file->f_op`: `f_op` at offset 16 in `struct file`"), "{text}");

    // Inlay hints: the member each redirect reaches.
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}}),
        )
        .await;
    let labels: Vec<(u64, u64, &str)> = hints
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            (
                h["position"]["line"].as_u64().unwrap_or(9),
                h["position"]["character"].as_u64().unwrap_or(0),
                h["label"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(labels, [(1, 28, "→ f_op")], "{hints:#}");

    // The T406 fix adds `[0]`; after it the warning is gone.
    let t406 = kernel_publish["params"]["diagnostics"][1].clone();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": t406["range"], "context": {"diagnostics": [t406]}}),
        )
        .await;
    let add = actions
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["title"].as_str().is_some_and(|t| t.starts_with("Add `[0]`")))
        .unwrap_or_else(|| panic!("no T406 fix in {actions:#}"))
        .clone();
    assert_eq!(add["isPreferred"], true);
    let edits = add["edit"]["changes"][&uri].clone();
    assert_eq!(edits[0]["newText"], "[0]");
    assert_eq!(edits[0]["range"]["start"], json!({"line": 1, "character": 31}));
    let changes: Vec<Value> =
        edits.as_array().into_iter().flatten().map(|e| json!({"range": e["range"], "text": e["newText"]})).collect();
    c.notify("textDocument/didChange", json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": changes}))
        .await;
    let after = c.wait("kernel publish of v2", |v| is_publish(v, 2, |c| c.iter().any(|x| x == "K201"))).await;
    assert_eq!(codes(&after), ["K201"], "{after:#}");

    // The K201 fix renames to the suggestion.
    let k201 = after["params"]["diagnostics"][0].clone();
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": k201["range"], "context": {"diagnostics": [k201]}}),
        )
        .await;
    let titles: Vec<&str> = actions.as_array().into_iter().flatten().filter_map(|a| a["title"].as_str()).collect();
    assert!(titles.contains(&"Rename to `vfs_read`"), "{titles:?}");

    // Completion: function names (prefix first, traceable first), members after `+`, `0` after `[`.
    let line = "vfs_rea\nvfs_read(x64 file+\nvfs_read(x64 file+40[\nvfs_read(int fd, x64 \n";
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": format!("{SCRIPT}{line}")}]}),
    )
    .await;
    let complete = |l: u32, ch: u32| json!({"textDocument": {"uri": uri}, "position": {"line": l, "character": ch}});
    let functions = c.request("textDocument/completion", complete(2, 7)).await;
    assert_eq!(functions["isIncomplete"], true);
    let mut items: Vec<Value> = functions["items"].as_array().cloned().unwrap_or_default();
    assert!(items.len() <= 100 && items.len() > 3, "{}", items.len());
    items.sort_by_key(|i| i["sortText"].as_str().unwrap_or("").to_owned());
    assert_eq!(items[0]["label"], "vfs_read", "{:#}", items[0]);
    assert!(items[0]["detail"].as_str().unwrap_or("").starts_with("ssize_t vfs_read("), "{:#}", items[0]);
    let members = c.request("textDocument/completion", complete(3, 18)).await;
    let items = members["items"].as_array().cloned().unwrap_or_default();
    let f_op = items
        .iter()
        .find(|i| i["label"] == "f_op (16, const struct file_operations *)")
        .unwrap_or_else(|| panic!("no f_op in {members:#}"));
    assert_eq!(f_op["textEdit"]["newText"], "16");
    let zero = c.request("textDocument/completion", complete(4, 21)).await;
    let labels: Vec<&str> =
        zero["items"].as_array().into_iter().flatten().filter_map(|i| i["label"].as_str()).collect();
    assert_eq!(labels, ["0"], "{zero:#}");
    let names = c.request("textDocument/completion", complete(5, 21)).await;
    let labels: Vec<&str> =
        names["items"].as_array().into_iter().flatten().filter_map(|i| i["label"].as_str()).collect();
    assert_eq!(labels, ["buf"], "slot 1 of vfs_read is `buf`: {names:#}");

    c.finish().await;
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_kernel_is_a_warning_and_a_configuration_change_loads_another() {
    let dir = temp_dir("reload");
    let file = dir.join("probe.fev");
    let uri = uri(&file);
    let missing = dir.join("no-such-kernel");
    let mut c = Client::start();
    c.initialize(json!({}), json!({"kernels": [missing]})).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": SCRIPT}}),
    )
    .await;
    let shown = c.wait("showMessage", |v| v["method"] == "window/showMessage").await;
    assert_eq!(shown["params"]["type"], 2, "a warning: {shown}");
    let message = shown["params"]["message"].as_str().unwrap_or("");
    assert!(message.contains(&missing.display().to_string()), "names the path: {message}");
    // The server keeps serving syntax features.
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 11}}))
        .await;
    assert!(hover["contents"]["value"].as_str().is_some_and(|v| v.starts_with("`symbol`")), "{hover}");
    let symbols = c.request("textDocument/documentSymbol", json!({"textDocument": {"uri": uri}})).await;
    assert_eq!(symbols.as_array().map(Vec::len), Some(2));

    // Point the client settings at 6.1: it loads and its findings arrive.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"fevlint": {"kernels": [kernel("6.1.0-56-amd64")]}}}),
    )
    .await;
    let on_61 = c
        .wait("6.1 diagnostics", |v| {
            is_publish(v, 1, |c| c.contains(&"K201".to_owned()))
                && messages(v).iter().any(|m| m.contains("6.1.0-56-amd64"))
        })
        .await;
    assert_eq!(codes(&on_61), ["K201", "T406"], "{on_61:#}");

    // Both kernels: each finding names its kernel.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"kernels": [kernel("6.1.0-56-amd64"), kernel("6.12.117+deb12-amd64")]}}),
    )
    .await;
    let both = c.wait("two kernels", |v| is_publish(v, 1, |c| c.iter().filter(|x| *x == "T406").count() == 2)).await;
    let t406: Vec<String> = messages(&both)
        .into_iter()
        .filter_map(|m| m.lines().next().map(str::to_owned))
        .filter(|m| m.contains("records the address"))
        .collect();
    // The kernels disagree: offset 16 of `struct file` is `f_path` on 6.1, `f_op` on 6.12.
    assert_eq!(
        t406,
        [
            "this records the address `&file->f_path.mnt->mnt_flags`, not its value (on 6.1.0-56-amd64)",
            "this records the address `&file->f_op->llseek`, not its value (on 6.12.117+deb12-amd64)"
        ]
    );
    let hints = c
        .request(
            "textDocument/inlayHint",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 0}}}),
        )
        .await;
    assert_eq!(hints[0]["label"], "→ f_path.mnt (6.1.0) · f_op (6.12.117)", "{hints:#}");
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 3}}))
        .await;
    let text = hover["contents"]["value"].as_str().unwrap_or("");
    assert!(text.contains("### 6.1.0-56-amd64") && text.contains("### 6.12.117+deb12-amd64"), "{text}");
    c.finish().await;
    std::fs::remove_dir_all(&dir).ok();
}

/// A `*.dynevents` document: the kernel's parser at once (no kernel: the 6.12 dialect),
/// then each configured kernel's verdicts and the drift between them, a hover naming
/// what an argument reads on each kernel, and the fix that moves an offset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynevents_document_gets_the_kernels_verdicts_drift_hover_and_fixes() {
    let dir = temp_dir("dynevents");
    let file = dir.join("vfs.dynevents");
    let uri = uri(&file);
    let text =
        "p:vfs/read vfs_read flags=+64($arg1):x32 name=+0(+40(+24($arg1))):string\np:vfs/bad vfs_read +0(+0(%di):u8\n";
    let mut c = Client::start();
    let kernels = [kernel("6.1.0-56-amd64"), kernel("6.12.117+deb12-amd64")];
    let options = json!({"fevlint": {"kernels": kernels.iter().map(|k| k.display().to_string()).collect::<Vec<_>>()}});
    c.initialize(json!({}), options).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "dynevents", "version": 1, "text": text}}),
    )
    .await;
    // At once: the parser's refusal, the kernel's own words at its caret.
    let first = c.wait("syntax diagnostics", |v| is_publish(v, 1, |c| c == ["S001"])).await;
    let d = &first["params"]["diagnostics"][0];
    let m = d["message"].as_str().unwrap_or_default();
    assert!(
        m.starts_with(
            "the kernel rejects this line: Dereference brace is not closed
"
        ),
        "{d}"
    );
    assert_eq!(d["range"]["start"], json!({"line": 1, "character": 28}), "{d}");
    // With the kernels: the drift of the 6.1 offsets on 6.12, and still the refusal.
    let kernel = c.wait("kernel diagnostics", |v| is_publish(v, 1, |c| c.iter().any(|x| x == "D503"))).await;
    let msgs = messages(&kernel);
    assert_eq!(codes(&kernel), ["D503", "D503", "S001"], "{msgs:#?}");
    assert!(msgs[0].contains("offset 64 reads `struct file.f_flags` on 6.1.0-56-amd64"), "{msgs:#?}");
    // Hover on `name=`: the C expression on each kernel.
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 45}}))
        .await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(shown.contains("on 6.1.0-56-amd64: `file->f_path.dentry->d_name.name`"), "{shown}");
    assert!(shown.contains("on 6.12.117+deb12-amd64: `file->f_mapping->"), "{shown}");
    // The fix at `+64`: f_flags is at 48 on 6.12.
    let range = json!({"start": {"line": 0, "character": 27}, "end": {"line": 0, "character": 29}});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
        )
        .await;
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "48", "{actions:#}");
    assert_eq!(edit["range"]["start"], json!({"line": 0, "character": 27}), "{actions:#}");
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `*.bt` document: bpftrace's parser at once, then each kernel's probe and access
/// findings with the drift between them, a hover with the probe's prototype per kernel,
/// completion of a tracepoint's fields, and a quick fix renaming a function.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bpftrace_document_gets_syntax_kernel_findings_drift_and_hover() {
    let dir = temp_dir("bpftrace");
    let file = dir.join("old.bt");
    let uri = uri(&file);
    let text = "kprobe:swap_readpage { @ = count(); }\ntracepoint:sched:sched_switch { @[args->prev_task] = count(); }\nkprobe:vfs_read { @x = ; }\n";
    let mut c = Client::start();
    let kernels = [kernel("6.1.0-56-amd64"), kernel("6.12.117+deb12-amd64")];
    let options = json!({"fevlint": {"kernels": kernels.iter().map(|k| k.display().to_string()).collect::<Vec<_>>()}});
    c.initialize(json!({}), options).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "bpftrace", "version": 1, "text": text}}),
    )
    .await;
    let first = c.wait("syntax diagnostics", |v| is_publish(v, 1, |c| c == ["S010"])).await;
    let d = &first["params"]["diagnostics"][0];
    assert_eq!(d["range"]["start"], json!({"line": 2, "character": 23}), "{d}");
    // Fixed: the kernels' findings.
    let fixed = text.replace("@x = ;", "@x = count();");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]}),
    )
    .await;
    let kernel = c.wait("kernel diagnostics", |v| is_publish(v, 2, |c| c.iter().any(|x| x == "D510"))).await;
    let msgs = messages(&kernel);
    assert_eq!(codes(&kernel), ["D510", "T410", "T410"], "{msgs:#?}");
    assert!(msgs[0].contains("exists on 6.1.0-56-amd64 but not on 6.12.117+deb12-amd64"), "{msgs:#?}");
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 2, "character": 10}}))
        .await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(shown.contains("on 6.12.117+deb12-amd64: `ssize_t vfs_read(struct file *file"), "{shown}");
    // Completion of the tracepoint's fields after `args->prev_` (line 1, column 45).
    let list = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": 1, "character": 45}}),
        )
        .await;
    let labels: Vec<&str> = list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{list:#}"))
        .iter()
        .filter_map(|i| i["label"].as_str())
        .collect();
    assert_eq!(labels, ["prev_comm", "prev_pid", "prev_prio", "prev_state"], "{list:#}");
    assert_eq!(list["items"][0]["textEdit"]["range"]["start"], json!({"line": 1, "character": 40}), "{list:#}");
    // A quick fix for the function 6.12 lost: its similar name there.
    let range = json!({"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 8}});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
        )
        .await;
    let titles: Vec<&str> = actions.as_array().into_iter().flatten().filter_map(|a| a["title"].as_str()).collect();
    assert!(titles.contains(&"Rename to `swap_read_page`"), "{actions:#}");
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Suppression comments hold in the editor as in `fevlint check`: a suppressed kernel
/// finding is not shown, and a suppression that drops nothing is N103 once the kernel
/// rules have run (not before: their silence proves nothing then).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn suppression_comments_drop_what_they_name_as_the_cli_does() {
    let dir = temp_dir("suppress");
    let file = dir.join("probe.fev");
    let text = "vfs_raed(x64 file)  # fevlint: ignore[K201]\n# fevlint: ignore[T401]\nvfs_read(x64 file)\n";
    std::fs::write(&file, text).expect("write");
    let uri = uri(&file);
    let mut c = Client::start();
    c.initialize(json!({}), json!({"kernels": [kernel("6.12.117+deb12-amd64")]})).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
    let first = c.wait("syntax publish", |v| is_publish(v, 1, |_| true)).await;
    assert_eq!(codes(&first), Vec::<String>::new(), "{first:#}");
    let kernel_publish = c.wait("kernel publish", |v| is_publish(v, 1, |c| !c.is_empty())).await;
    assert_eq!(codes(&kernel_publish), ["N103"], "{kernel_publish:#}");
    let cli = std::process::Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["check", "--format", "json", "--kernel"])
        .arg(kernel("6.12.117+deb12-amd64"))
        .arg(&file)
        .output()
        .expect("fevlint check");
    let report: Value = serde_json::from_slice(&cli.stdout).expect("json");
    let cli_codes: Vec<&str> =
        report["diagnostics"].as_array().expect("list").iter().map(|d| d["code"].as_str().unwrap_or("")).collect();
    assert_eq!(cli_codes, ["N103"], "{report:#}");
    c.finish().await;
}

/// An edit re-checks only the lines it touched against the kernel, at once, and publishes
/// once: after each of many random edits (characters, lines, pastes, deletions across
/// lines) the published diagnostics equal `fevlint check` on the same text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_each_edit_the_editor_shows_what_fevlint_check_says() {
    let dir = temp_dir("edits");
    let file = dir.join("probe.fev");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut text = String::new();
    for name in ["vfs.fev", "net.fev"] {
        text.push_str(&std::fs::read_to_string(examples.join(name)).expect("example"));
    }
    text.push_str("vfs_raed(x64 file)\nip_rcv(x64 skb, x86 dev)\nvfs_read(x64 file)  # fevlint: ignore[T401]\n");
    let uri = uri(&file);
    let k = kernel("6.12.117+deb12-amd64");
    let mut c = Client::start();
    c.initialize(json!({}), json!({"kernels": [k]})).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
    let mut last_publish =
        c.wait("kernel publish", |v| is_publish(v, 1, |c| c.iter().any(|x| x.starts_with('K')))).await;
    let pieces = ["x", "", "\n", "vfs_write(x64 file, u32 count)\n", "tcp_sendmsg(x64 sk+24[0])", ")", "# c\n"];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    for version in 2..=60 {
        let lines: Vec<&str> = text.split('\n').collect();
        let l0 = next() % lines.len();
        let c0 = next() % (lines[l0].len() + 1);
        let l1 = (l0 + next() % 2).min(lines.len() - 1);
        let c1 = if l1 == l0 { (c0 + next() % 5).min(lines[l0].len()) } else { next() % (lines[l1].len() + 1) };
        let piece = pieces[next() % pieces.len()];
        let start: usize = lines[..l0].iter().map(|l| l.len() + 1).sum::<usize>() + c0;
        let end: usize = lines[..l1].iter().map(|l| l.len() + 1).sum::<usize>() + c1;
        text.replace_range(start..end, piece);
        let change = json!({"range": {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}}, "text": piece});
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}),
        )
        .await;
        // An edit that leaves the findings as they were is not published: the reply to a
        // request sent after it comes after any publish of it (the edited lines are
        // re-checked against the kernel at once), so the last publish seen then is current.
        c.request("fevlint/noSuchMethod", json!({})).await;
        let latest = c.seen.iter().rposition(|v| v["method"] == "textDocument/publishDiagnostics");
        if let Some(i) = latest {
            last_publish = c.seen.remove(i);
            c.seen.clear();
        }
        let publish = last_publish.clone();
        if version % 10 != 0 && version != 2 {
            continue;
        }
        std::fs::write(&file, &text).expect("write");
        let cli = std::process::Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .args(["check", "--format", "json", "--kernel"])
            .arg(&k)
            .arg(&file)
            .output()
            .expect("fevlint check");
        let report: Value = serde_json::from_slice(&cli.stdout).expect("json");
        let want: Vec<(String, u64, u64)> = report["diagnostics"]
            .as_array()
            .expect("list")
            .iter()
            .map(|d| {
                let code = d["code"].as_str().unwrap_or("").to_owned();
                (code, d["line"].as_u64().unwrap_or(0) - 1, d["column"].as_u64().unwrap_or(0) - 1)
            })
            .collect();
        let mut want = want;
        want.sort();
        if version == 2 {
            assert!(want.iter().any(|(code, ..)| code.starts_with('K')), "a kernel finding to keep: {want:?}");
        }
        let mut got: Vec<(String, u64, u64)> = publish["params"]["diagnostics"]
            .as_array()
            .expect("list")
            .iter()
            .map(|d| {
                let code = d["code"].as_str().unwrap_or("").to_owned();
                let at = &d["range"]["start"];
                (code, at["line"].as_u64().unwrap_or(0), at["character"].as_u64().unwrap_or(0))
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "version {version}:\n{text}");
    }
    c.finish().await;
}

/// `(code, line, LSP severity)` of each diagnostic of a publish.
fn findings(publish: &Value) -> Vec<(String, u64, u64)> {
    publish["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let code = d["code"].as_str().unwrap_or("").to_owned();
            (code, d["range"]["start"]["line"].as_u64().unwrap_or(u64::MAX), d["severity"].as_u64().unwrap_or(0))
        })
        .collect()
}

/// `fevlint check --format json` of `file` as `findings` gives them.
fn cli_findings(file: &Path) -> Vec<(String, u64, u64)> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["check", "--format", "json"])
        .arg(file)
        .output()
        .expect("run fevlint check");
    let report: Value = serde_json::from_slice(&out.stdout).expect("json report");
    report["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let severity = match d["severity"].as_str() {
                Some("error") => 1,
                Some("warning") => 2,
                _ => 3,
            };
            (d["code"].as_str().unwrap_or("").to_owned(), d["line"].as_u64().unwrap_or(0) - 1, severity)
        })
        .collect()
}

/// The rule selection and severities of `fevlint.toml` are fevlint-check's decision in the
/// editor as on the command line: `ignore = ["T4"]` is a prefix (T401 goes), `[severity]`
/// changes what the diagnostics carry, with or without suppression comments (the lines'
/// kept findings, and the whole-text report). Before, the server read `ignore` as exact
/// codes and refused a `fevlint.toml` with `[severity]` as a whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fevlint_toml_selects_and_grades_findings_as_fevlint_check_does() {
    let dir = temp_dir("rules");
    let toml = format!(
        "kernels = [{:?}]\nignore = [\"T4\"]\n\n[severity]\nK201 = \"info\"\nN102 = \"error\"\n",
        kernel("6.12.117+deb12-amd64").display().to_string()
    );
    std::fs::write(dir.join("fevlint.toml"), toml).expect("write");
    let plain = "vfs_read(x64 file, x64 buf, u32 count)\nvfs_raed(x64 file)\nip_rcv(x64 skb, x64 skb)\n";
    let suppressed = format!("{plain}# fevlint: ignore[K201]\ndo_sys_opn(int dfd)\n");
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null).await;
    for (name, text) in [("plain.fev", plain.to_owned()), ("suppressed.fev", suppressed)] {
        let file = dir.join(name);
        std::fs::write(&file, &text).expect("write");
        let want = cli_findings(&file);
        assert!(want.iter().all(|(code, _, _)| !code.starts_with("T4")), "{name}: {want:?}");
        assert!(want.iter().any(|(code, _, _)| code == "N102"), "{name}: {want:?}");
        let uri = uri(&file);
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
        )
        .await;
        let got = c
            .wait(&format!("{name}'s findings as fevlint check reports them: {want:?}"), |v| {
                v["method"] == "textDocument/publishDiagnostics"
                    && v["params"]["uri"] == json!(uri)
                    && findings(v) == want
            })
            .await;
        let got = findings(&got);
        assert!(got.contains(&("N102".to_owned(), 2, 1)), "{name}: N102 as an error: {got:?}");
        if name == "plain.fev" {
            assert!(got.contains(&("K201".to_owned(), 1, 3)), "K201 as information: {got:?}");
        }
    }
    c.finish().await;
    std::fs::remove_dir_all(&dir).ok();
}
