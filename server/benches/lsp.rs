//! Language-server latency: `fevlint lsp` driven over stdio like an editor would, on a
//! 5,000-line script built from `examples/*.fev` (with some broken lines). For each of
//! 1,000 single-character edits it measures the time from writing the `didChange` to
//! reading the `publishDiagnostics` of that version, and prints p50/p90/p99/max, the
//! open time and the server's peak RSS (`VmHWM`).
//!
//! Then the same with the 6.12.117 BTF kernel configured: each edit gets two publishes,
//! the syntax one at once and the one including the kernel rules after the debounce
//! (`FEVLINT_KERNEL_DEBOUNCE_MS`, set short here and subtracted). Last, the RSS with the
//! 6.12.117 and 6.1.0-56 kernels both loaded.
//!
//!   cargo bench -p fevlint --bench lsp            # results in benches/README-lsp.md

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LINES: usize = 5_000;
const EDITS: usize = 1_000;

fn script() -> String {
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
    let mut s = String::new();
    for i in 0..LINES {
        s.push_str(&source[i % source.len()]);
        s.push('\n');
    }
    s
}

fn frame(v: &Value) -> Vec<u8> {
    let body = v.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fn read(r: &mut impl BufRead) -> Value {
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
    serde_json::from_slice(&body).expect("json")
}

fn wait_version(r: &mut impl BufRead, version: i64) -> usize {
    loop {
        let v = read(r);
        if v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == json!(version) {
            return v["params"]["diagnostics"].as_array().map_or(0, Vec::len);
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// The kernel debounce the kernel run uses (subtracted from its times).
const DEBOUNCE_MS: u64 = 20;

fn kernel(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name).display().to_string()
}

struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Server {
    fn start(options: Value) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .arg("lsp")
            .env("FEVLINT_KERNEL_DEBOUNCE_MS", DEBOUNCE_MS.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start fevlint lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server { child, stdin, stdout };
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

    fn status(&self, key: &str) -> String {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let line = status.lines().find(|l| l.starts_with(key)).unwrap_or("? ?").to_owned();
        line.split_whitespace().skip(1).collect::<Vec<_>>().join(" ")
    }

    fn stop(mut self) {
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
        read(&mut self.stdout);
        self.send(json!({"jsonrpc": "2.0", "method": "exit"}));
        let _ = self.child.wait();
    }
}

/// Edits spread over the file: type a character into a definition, then delete it
/// (every other edit), so the document stays the same size.
struct Edits<'a> {
    lines: Vec<&'a str>,
    state: u64,
    pending: Option<(u64, u64)>,
}

impl Edits<'_> {
    fn next(&mut self) -> Value {
        match self.pending.take() {
            Some((line, ch)) => {
                json!({"range": {"start": {"line": line, "character": ch}, "end": {"line": line, "character": ch + 1}}, "text": ""})
            }
            None => {
                self.state ^= self.state << 13;
                self.state ^= self.state >> 7;
                self.state ^= self.state << 17;
                let line = self.state % LINES as u64;
                let ch = (self.state >> 32) % (self.lines[line as usize].len() as u64 + 1);
                self.pending = Some((line, ch));
                json!({"range": {"start": {"line": line, "character": ch}, "end": {"line": line, "character": ch}}, "text": "x"})
            }
        }
    }
}

fn summary(times: &mut [Duration]) -> String {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(percentile(times, 0.50)),
        ms(percentile(times, 0.90)),
        ms(percentile(times, 0.99)),
        ms(times[times.len() - 1])
    )
}

fn main() {
    let text = script();
    let lines: Vec<&str> = text.lines().collect();
    let uri = "file:///bench/big.fev";
    let ms = |d: Duration| d.as_secs_f64() * 1e3;

    // 1. No kernel: syntax diagnostics only.
    let mut server = Server::start(Value::Null);
    let t = Instant::now();
    server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}}));
    let first = wait_version(&mut server.stdout, 1);
    let open = t.elapsed();
    let mut edits = Edits { lines: lines.clone(), state: 0x2545_f491_4f6c_dd1d, pending: None };
    let mut times = Vec::with_capacity(EDITS);
    for i in 0..EDITS {
        let version = i as i64 + 2;
        let change = edits.next();
        let t = Instant::now();
        server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}}));
        wait_version(&mut server.stdout, version);
        times.push(t.elapsed());
    }
    let hwm = server.status("VmHWM");
    server.stop();
    println!("script: {LINES} lines, {} bytes, {first} diagnostics on open", text.len());
    println!("no kernel: open (didOpen -> publishDiagnostics v1): {:.2} ms", ms(open));
    println!("no kernel: {EDITS} edits, didChange -> publishDiagnostics of that version: {}", summary(&mut times));
    println!("no kernel: server peak RSS: {hwm}");

    // 2. The 6.12.117 BTF kernel: syntax publish, then the publish with kernel diagnostics.
    let mut server = Server::start(json!({"kernels": [kernel("6.12.117+deb12-amd64")]}));
    let t = Instant::now();
    server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}}));
    wait_version(&mut server.stdout, 1);
    let with_kernel = wait_version(&mut server.stdout, 1);
    let open = t.elapsed();
    let debounce = Duration::from_millis(DEBOUNCE_MS);
    let mut edits = Edits { lines, state: 0x2545_f491_4f6c_dd1d, pending: None };
    let (mut syntax, mut kernel_times) = (Vec::with_capacity(EDITS), Vec::with_capacity(EDITS));
    for i in 0..EDITS {
        let version = i as i64 + 2;
        let change = edits.next();
        let t = Instant::now();
        server.send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}}));
        wait_version(&mut server.stdout, version);
        syntax.push(t.elapsed());
        wait_version(&mut server.stdout, version);
        kernel_times.push(t.elapsed().saturating_sub(debounce));
    }
    let rss_one = server.status("VmHWM");
    println!("6.12.117 BTF: open, load and first kernel publish: {:.2} ms ({with_kernel} diagnostics)", ms(open));
    println!("6.12.117 BTF: {EDITS} edits, didChange -> syntax publish: {}", summary(&mut syntax));
    println!(
        "6.12.117 BTF: {EDITS} edits, didChange -> publish with kernel diagnostics, minus the {DEBOUNCE_MS} ms debounce: {}",
        summary(&mut kernel_times)
    );
    println!("6.12.117 BTF: server peak RSS: {rss_one}");

    // 3. Two BTF kernels loaded.
    server.send(json!({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings":
        {"kernels": [kernel("6.12.117+deb12-amd64"), kernel("6.1.0-56-amd64")]}}}));
    let version = EDITS as i64 + 1;
    wait_version(&mut server.stdout, version); // syntax, republished
    let both = wait_version(&mut server.stdout, version); // both kernels' findings
    println!(
        "6.12.117 + 6.1.0-56 BTF: {both} diagnostics; RSS {}, peak RSS {}",
        server.status("VmRSS"),
        server.status("VmHWM")
    );
    server.stop();
}
