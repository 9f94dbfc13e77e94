//! Language-server latency at scale: `fevlint lsp` driven over stdio like an editor would,
//! with the 6.12.117 kernel configured (kernel rules on), on two kinds of script at
//! 5,000 and 50,000 lines:
//!
//! - `realistic`: one definition per traceable 6.12 function (the clean control script,
//!   then `name(x64 a0)` for unique names), a comment line every fifth line: few
//!   diagnostics;
//! - `noisy`: `examples/*.fev` repeated with three broken lines per repetition: every
//!   repeated definition draws N101, thousands of diagnostics.
//!
//! For each, four edit patterns: single characters at random lines (type, then delete),
//! typing a definition at the end, typing one in the middle, and pasting 1,000 lines in
//! the middle (then deleting them). Each edit is one incremental `didChange`, timed to
//! the `publishDiagnostics` of that version, read and parsed as JSON into the protocol's
//! types (every field of every diagnostic, as an LSP client library does). The server
//! re-checks the lines an edit touched against the kernel at once and publishes once,
//! kernel findings included; the open is checked after the kernel debounce
//! (`FEVLINT_KERNEL_DEBOUNCE_MS`, 0 here) and timed to that second publish. Every pattern leaves the text as it found it, and the
//! bench asserts that the last publish equals the one after the open (the findings kept
//! line by line are the whole check's). Prints p50/p99/max per pattern, the open time,
//! and the server's peak RSS (`VmHWM`).
//!
//!   cargo bench -p fevlint --bench lsp                       # everything
//!   cargo bench -p fevlint --bench lsp -- 5000 realistic     # a selection
//!
//! `FEVLINT_BENCH_WRITE=DIR` only writes the scripts (`realistic-5000.fev`, …) there.
//! `FEVLINT_CACHE_DIR` is pointed at a private directory, so every open is cold.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Edits per typing pattern; pastes are fewer (each is 1,000 lines).
const EDITS: usize = 300;
const PASTES: usize = 20;
/// The kernel debounce the server uses here (only the open waits for it).
const DEBOUNCE_MS: u64 = 0;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

fn kernel(name: &str) -> String {
    fixtures().join("kernels").join(name).display().to_string()
}

fn realistic(lines: usize) -> String {
    let clean = std::fs::read_to_string(fixtures().join("scripts/clean-6.12.fev")).expect("clean script");
    let mut out: Vec<String> = clean.lines().map(str::to_owned).collect();
    let used: std::collections::HashSet<String> =
        out.iter().filter(|l| !l.starts_with('#')).filter_map(|l| l.split('(').next()).map(str::to_owned).collect();
    let aff = fixtures().join("kernels/6.12.117+deb12-amd64/available_filter_functions.zst");
    let list = String::from_utf8(zstd::decode_all(std::fs::File::open(aff).expect("ftrace list")).expect("zstd"))
        .expect("utf-8");
    let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for name in list.lines() {
        *count.entry(name).or_default() += 1;
    }
    let k = fevlint_kernel::Kernel::open(&fixtures().join("kernels/6.12.117+deb12-amd64")).expect("6.12 kernel");
    let mut names = list.lines().filter(|n| !n.contains('.') && count[n] == 1 && !used.contains(*n));
    while out.len() < lines {
        if out.len() % 5 == 4 {
            out.push(format!("# group {}", out.len() / 5));
            continue;
        }
        match names.next() {
            Some(name) => out.extend(definition(&k, name)),
            None => out.push(String::new()),
        }
    }
    out.truncate(lines);
    out.iter().map(|l| format!("{l}\n")).collect()
}

/// A definition of `name` as its author would write it: its first parameter (when it is
/// a scalar or pointer), typed by its size; none when the prototype is unknown.
fn definition(k: &fevlint_kernel::Kernel, name: &str) -> Option<String> {
    let facts = k.function(name).ok()?;
    let [info] = facts.prototypes.as_slice() else { return None };
    let Some(p) = info.proto.params.first() else { return Some(format!("{name}()")) };
    let size = k.types()?.size_of(p.ty).ok()??;
    let ty = match size {
        1 => "x8",
        2 => "x16",
        4 => "x32",
        8 => "x64",
        _ => return None,
    };
    Some(format!("{name}({ty} {})", p.name.as_deref().unwrap_or("a0")))
}

fn noisy(lines: usize) -> String {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut source = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(&dir).expect("examples/").flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries.iter().filter(|p| p.extension().is_some_and(|e| e == "fev")) {
        source.extend(std::fs::read_to_string(p).expect("read example").lines().map(str::to_owned));
    }
    source.push("ip_rcv(x64 skb, x86 dev)".to_owned());
    source.push("do_IRQ(int counter+8=0xffffffff82354c18)".to_owned());
    source.push("vfs_read(int fd, x".to_owned());
    (0..lines).map(|i| format!("{}\n", source[i % source.len()])).collect()
}

fn frame(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn read(r: &mut impl BufRead) -> Value {
    serde_json::from_slice(&read_body(r)).expect("json")
}

/// One message's body.
fn read_body(r: &mut impl BufRead) -> Vec<u8> {
    let mut len = 0;
    loop {
        let mut line = String::new();
        assert!(r.read_line(&mut line).expect("read") > 0, "server closed stdout");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            len = v.parse().expect("length");
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).expect("body");
    body
}

/// A message from the server: its method, and its params left unparsed until the
/// method says what they are (as a client library dispatches).
#[derive(serde::Deserialize)]
struct Incoming<'a> {
    method: Option<String>,
    id: Option<i64>,
    #[serde(borrow)]
    params: Option<&'a serde_json::value::RawValue>,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct PublishParams {
    uri: String,
    version: Option<i64>,
    diagnostics: Vec<Diag>,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
struct Diag {
    range: Range,
    severity: Option<u8>,
    code: Option<String>,
    code_description: Option<Href>,
    source: Option<String>,
    message: String,
    related_information: Option<Vec<Related>>,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Range {
    start: Pos,
    end: Pos,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Pos {
    line: u32,
    character: u32,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Href {
    href: String,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Related {
    location: Location,
    message: String,
}

#[derive(serde::Deserialize, Debug, PartialEq)]
struct Location {
    uri: String,
    range: Range,
}

struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    uri: String,
    version: i64,
    /// The diagnostics of the last publish.
    last: Vec<Diag>,
    /// The id of the last barrier request (see [`Server::edit`]).
    barrier: i64,
}

impl Server {
    fn start(options: Value, cache: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .arg("lsp")
            .env("FEVLINT_KERNEL_DEBOUNCE_MS", DEBOUNCE_MS.to_string())
            .env("FEVLINT_CACHE_DIR", cache)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start fevlint lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server {
            child,
            stdin,
            stdout,
            uri: "file:///bench/big.fev".to_owned(),
            version: 1,
            last: Vec::new(),
            barrier: 1_000,
        };
        s.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"capabilities": {}, "initializationOptions": options}}));
        read(&mut s.stdout);
        s.send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        s
    }

    fn send(&mut self, v: Value) {
        self.stdin.write_all(&frame(&v)).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// The diagnostics of the `nth` publish of the current version, and when that
    /// message had been read and parsed (what the bench does with it after is not the
    /// server's time).
    fn wait_publish(&mut self, nth: usize) -> (Vec<Diag>, Instant) {
        let mut seen = 0;
        loop {
            let body = read_body(&mut self.stdout);
            let m: Incoming = serde_json::from_slice(&body).expect("a JSON-RPC message");
            let (Some("textDocument/publishDiagnostics"), Some(params)) = (m.method.as_deref(), m.params) else {
                continue;
            };
            let p: PublishParams = serde_json::from_str(params.get()).expect("publishDiagnostics params");
            let parsed = Instant::now();
            if p.version == Some(self.version) && p.uri == self.uri {
                seen += 1;
                if seen == nth {
                    return (p.diagnostics, parsed);
                }
            }
        }
    }

    /// Opens the text; the time to the publish with the kernel's findings, and those.
    fn open(&mut self, text: &str) -> (Duration, Vec<Diag>) {
        let t = Instant::now();
        let uri = self.uri.clone();
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}}));
        let (found, parsed) = self.wait_publish(2);
        (parsed - t, found)
    }

    /// Sends one change and times it to the kernel publish of its version. An edit that
    /// leaves the findings as they were is not published: a request the server does not
    /// know, sent after the edit, is answered after any publish of it, and then ends the
    /// wait.
    fn edit(&mut self, range: [u64; 4], text: &str) -> Duration {
        self.version += 1;
        let uri = self.uri.clone();
        let change = json!({"range": {"start": {"line": range[0], "character": range[1]},
            "end": {"line": range[2], "character": range[3]}}, "text": text});
        let t = Instant::now();
        self.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [change]}}));
        self.barrier += 1;
        let barrier = self.barrier;
        self.send(json!({"jsonrpc": "2.0", "id": barrier, "method": "fevlint/benchBarrier"}));
        let mut done = None;
        loop {
            let body = read_body(&mut self.stdout);
            let m: Incoming = serde_json::from_slice(&body).expect("a JSON-RPC message");
            if m.method.is_none() && m.id == Some(barrier) {
                return done.unwrap_or_else(|| t.elapsed());
            }
            let (Some("textDocument/publishDiagnostics"), Some(params)) = (m.method.as_deref(), m.params) else {
                continue;
            };
            let p: PublishParams = serde_json::from_str(params.get()).expect("publishDiagnostics params");
            let parsed = Instant::now();
            if p.version == Some(self.version) && p.uri == self.uri {
                self.last = p.diagnostics;
                done = Some(parsed - t);
            }
        }
    }

    fn status(&self, key: &str) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with(key)).unwrap_or("? ?").to_owned();
        line.split_whitespace().skip(1).collect::<Vec<_>>().join(" ")
    }

    fn stop(mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
        loop {
            if read(&mut self.stdout)["id"] == json!(2) {
                break;
            }
        }
        self.send(json!({"jsonrpc": "2.0", "method": "exit"}));
        let _ = self.child.wait();
    }
}

/// An edit pattern: the times of its edits.
type Pattern<'a> = dyn Fn(&mut Server) -> Vec<Duration> + 'a;

fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let pct = |p: f64| ms(times[((times.len() as f64 - 1.0) * p).round() as usize]);
    format!("p50 {:6.2} ms  p99 {:6.2} ms  max {:6.2} ms", pct(0.50), pct(0.99), ms(times[times.len() - 1]))
}

/// xorshift, so every run makes the same edits.
fn rng(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

/// Types `definition` character by character at (line, 0), then deletes it again
/// character by character: `EDITS` edits, the document the same at the end.
fn typing(s: &mut Server, line: u64) -> Vec<Duration> {
    let text = "vfs_write(x64 file, x64 buf+0, u32 count)\n";
    let mut times = Vec::with_capacity(EDITS);
    let mut typed: Vec<char> = Vec::new();
    let mut forward = true;
    while times.len() < EDITS {
        if forward {
            let c = text.chars().nth(typed.len()).expect("char");
            let (l, ch) = position(line, &typed);
            times.push(s.edit([l, ch, l, ch], &c.to_string()));
            typed.push(c);
            forward = typed.len() < text.len();
        } else {
            let c = typed.pop().expect("typed");
            let (l, ch) = position(line, &typed);
            let end = if c == '\n' { (l + 1, 0) } else { (l, ch + 1) };
            times.push(s.edit([l, ch, end.0, end.1], ""));
            forward = typed.is_empty();
        }
    }
    // Leave the document as it was.
    while let Some(c) = typed.pop() {
        let (l, ch) = position(line, &typed);
        let end = if c == '\n' { (l + 1, 0) } else { (l, ch + 1) };
        s.edit([l, ch, end.0, end.1], "");
    }
    times
}

/// The position after `typed` inserted at the start of `line`.
fn position(line: u64, typed: &[char]) -> (u64, u64) {
    let newlines = typed.iter().filter(|&&c| c == '\n').count() as u64;
    let col = typed.iter().rev().take_while(|&&c| c != '\n').count() as u64;
    (line + newlines, col)
}

fn random(s: &mut Server, lines: &[&str]) -> Vec<Duration> {
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut times = Vec::with_capacity(EDITS);
    while times.len() < EDITS {
        let line = rng(&mut state) % lines.len() as u64;
        let ch = (rng(&mut state) >> 32) % (lines[line as usize].len() as u64 + 1);
        times.push(s.edit([line, ch, line, ch], "x"));
        times.push(s.edit([line, ch, line, ch + 1], ""));
    }
    times
}

fn paste(s: &mut Server, lines: &[&str]) -> Vec<Duration> {
    let block: String = lines.iter().take(1000).map(|l| format!("{l}\n")).collect();
    let at = lines.len() as u64 / 2;
    let mut times = Vec::with_capacity(2 * PASTES);
    for _ in 0..PASTES {
        times.push(s.edit([at, 0, at, 0], &block));
        times.push(s.edit([at, 0, at + 1000, 0], ""));
    }
    times
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    // Arguments narrow the runs: a size, a kind, or both.
    let sizes: Vec<&String> = args.iter().filter(|a| a.parse::<usize>().is_ok()).collect();
    let kinds: Vec<&String> = args.iter().filter(|a| a.parse::<usize>().is_err()).collect();
    let selected = |size: usize, kind: &str| {
        (sizes.is_empty() || sizes.iter().any(|s| **s == size.to_string()))
            && (kinds.is_empty() || kinds.iter().any(|k| *k == kind))
    };
    let cache = std::env::temp_dir().join(format!("fevlint-bench-lsp-{}", std::process::id()));
    let options = json!({"kernels": [kernel("6.12.117+deb12-amd64")]});
    for size in [5_000, 50_000] {
        for (kind, make) in [("realistic", realistic as fn(usize) -> String), ("noisy", noisy)] {
            if !selected(size, kind) {
                continue;
            }
            let text = make(size);
            if let Some(dir) = std::env::var_os("FEVLINT_BENCH_WRITE") {
                let path = Path::new(&dir).join(format!("{kind}-{size}.fev"));
                std::fs::write(&path, &text).expect("write script");
                println!("wrote {}", path.display());
                continue;
            }
            let lines: Vec<&str> = text.lines().collect();
            let _ = std::fs::remove_dir_all(&cache);
            let mut server = Server::start(options.clone(), &cache);
            let (open, found) = server.open(&text);
            println!(
                "{kind} {size} lines ({} KB, {} diagnostics with 6.12): open to kernel publish {:.1} ms",
                text.len() / 1024,
                found.len(),
                open.as_secs_f64() * 1e3
            );
            let patterns: [(&str, &Pattern); 4] = [
                ("random characters", &|s| random(s, &lines)),
                ("typing at the end", &|s| typing(s, lines.len() as u64)),
                ("typing in the middle", &|s| typing(s, lines.len() as u64 / 2)),
                ("1,000-line paste", &|s| paste(s, &lines)),
            ];
            for (name, pattern) in patterns {
                let mut times = pattern(&mut server);
                println!("  {name:<21} {}", summary(&mut times));
                assert_eq!(server.last, found, "{name}: the findings after the edits differ from a whole check");
            }
            println!("  server peak RSS {}", server.status("VmHWM"));
            server.stop();
        }
    }
    let _ = std::fs::remove_dir_all(&cache);
}
