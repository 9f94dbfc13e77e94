//! Completion and hover for the mainline dialect (`*.dynevents`) in the language server,
//! on the real 6.12.117 fixture: probe kinds, function and tracepoint names, BTF
//! parameter names and members after `->`/`.`, registers and `$argN` with the parameter
//! each holds at the entry, the README's types; the hover on a probe's place shows its
//! prototype with each parameter's `$argN` and register; after `SYM+`, the offsets where
//! an instruction starts (from the image).

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name).canonicalize().expect("fixture")
}

/// Each line is completed at its end.
const LINES: [&str; 13] = [
    "f:fp/pos vfs_read pos=file->f_pos:u32",
    "f:x vfs_rea",
    "f:x vfs_read file->f_p",
    "f:x vfs_read file->f_path.",
    "p:x vfs_read a=%",
    "p:x vfs_read a=$ar",
    "p:x vfs_read a=%di:",
    "t:x pelt_cfs",
    "t:x pelt_cfs_tp cfs_rq->av",
    "t:x pelt_cfs_tp c",
    "t",
    "p:u/kk __x64_sys_openat f=+u0x68(%di):x64",
    "p:x vfs_read+",
];

fn labels(v: &Value) -> Vec<(String, String)> {
    v["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| (i["label"].as_str().unwrap_or("").to_owned(), i["detail"].as_str().unwrap_or("").to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynevents_document_completes_names_members_registers_types_and_hovers_prototypes() {
    let dir = std::env::temp_dir().join(format!("fevlint-lsp-dynevents-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let uri = format!("file://{}", dir.join("p.dynevents").display());
    let text = LINES.join("\n") + "\n";
    let mut c = Client::start();
    let options = json!({"fevlint": {"kernels": [kernel("6.12.117+deb12-amd64").display().to_string()]}});
    c.initialize(json!({}), options).await;
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "dynevents", "version": 1, "text": text}}),
    )
    .await;
    // The kernel is loaded once its findings arrive (line 1's T401).
    c.wait("kernel diagnostics", |v| {
        v["method"] == "textDocument/publishDiagnostics"
            && v["params"]["diagnostics"].as_array().into_iter().flatten().any(|d| d["code"] == "T401")
    })
    .await;
    let mut got = Vec::new();
    for (line, l) in LINES.iter().enumerate() {
        let v = c
            .request(
                "textDocument/completion",
                json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": l.len()}}),
            )
            .await;
        got.push(labels(&v));
    }
    let has = |i: usize, label: &str| got[i].iter().find(|(l, _)| l == label).map(|(_, d)| d.clone());
    // Function names; the BTF members after `->`, then after `.`.
    assert!(has(1, "vfs_read").is_some(), "{:?}", got[1]);
    let f_pos = has(2, "f_pos").unwrap_or_else(|| panic!("{:?}", got[2]));
    assert!(f_pos.starts_with("loff_t at +") && f_pos.contains("of `struct file`"), "{f_pos}");
    assert!(has(2, "f_path").is_some(), "{:?}", got[2]);
    assert!(has(3, "dentry").is_some() && has(3, "mnt").is_some(), "{:?}", got[3]);
    // Registers and `$argN` with the parameter each holds at the entry.
    let di = has(4, "di").unwrap_or_else(|| panic!("{:?}", got[4]));
    assert!(di.starts_with("`file` (`struct file *`) at the entry"), "{di}");
    let cx = has(4, "cx").unwrap_or_default();
    assert!(cx.starts_with("`pos` (`loff_t *`)"), "{cx}");
    let arg3 = has(5, "$arg3").unwrap_or_else(|| panic!("{:?}", got[5]));
    assert!(arg3.starts_with("`count` (`size_t`)"), "{arg3}");
    // The types 6.12's README lists.
    for t in ["u8", "x64", "string", "ustring", "symbol", "symstr", "char", "%pd"] {
        assert!(has(6, t).is_some(), "{t}: {:?}", got[6]);
    }
    // Tracepoints by their stubs; their parameters and members.
    assert!(has(7, "pelt_cfs_tp").is_some(), "{:?}", got[7]);
    assert!(has(8, "avg").is_some_and(|d| d.contains("of `struct cfs_rq`")), "{:?}", got[8]);
    assert!(has(9, "cfs_rq").is_some_and(|d| d.starts_with("struct cfs_rq * (parameter 1")), "{:?}", got[9]);
    assert!(has(10, "t:").is_some(), "{:?}", got[10]);
    // After `SYM+`: the instruction boundaries from the image, ENDBR64 and fentry explained.
    let offsets: Vec<&str> = got[12].iter().map(|(l, _)| l.as_str()).take(3).collect();
    assert_eq!(offsets, ["0", "4", "9"], "{:?}", got[12]);
    assert!(has(12, "0").is_some_and(|d| d.starts_with("endbr64: ENDBR64")), "{:?}", got[12]);
    assert!(has(12, "4").is_some_and(|d| d.starts_with("call __fentry__: the ftrace call site")), "{:?}", got[12]);
    // Hover on the place: the prototype, each parameter's `$argN` and register.
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 4, "character": 6}}))
        .await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(shown.contains("ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)"), "{shown}");
    assert!(shown.contains("- `$arg1`, `%di`: `file` (`struct file *`)"), "{shown}");
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 8, "character": 6}}))
        .await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(shown.starts_with("tracepoint `pelt_cfs_tp`"), "{shown}");
    assert!(
        shown.contains("void pelt_cfs_tp(struct cfs_rq *cfs_rq)") && shown.contains("- `$arg1`: `cfs_rq`"),
        "{shown}"
    );
    // An argument's hover is still what it reads.
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 25}}))
        .await;
    let shown = hover["contents"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(shown.contains("`file->f_pos`") && shown.contains("- `->f_pos` at +"), "{shown}");
    // T408's quick fix: the kernel fetch.
    let range = json!({"start": {"line": 11, "character": 27}, "end": {"line": 11, "character": 28}});
    let actions = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
        )
        .await;
    let edit = &actions[0]["edit"]["changes"][&uri][0];
    assert_eq!(edit["newText"], "0x68", "{actions:#}");
    assert_eq!(edit["range"]["start"], json!({"line": 11, "character": 27}), "{actions:#}");
    assert_eq!(edit["range"]["end"], json!({"line": 11, "character": 32}), "{actions:#}");
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}
