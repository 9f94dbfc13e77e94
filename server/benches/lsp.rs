//! Language-server latency: `fevlint lsp` driven over stdio like an editor would, on a
//! 5,000-line script built from `examples/*.fev` (with some broken lines). For each of
//! 1,000 single-character edits it measures the time from writing the `didChange` to
//! reading the `publishDiagnostics` of that version, and prints p50/p90/p99/max, the
//! open time and the server's peak RSS (`VmHWM`).
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

fn main() {
    let text = script();
    let lines: Vec<&str> = text.lines().collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start fevlint lsp");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |v: Value| {
        stdin.write_all(&frame(&v)).expect("write");
        stdin.flush().expect("flush");
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
    read(&mut stdout);
    send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let uri = "file:///bench/big.fev";
    let t = Instant::now();
    send(json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
        "params": {"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}}));
    let first = wait_version(&mut stdout, 1);
    let open = t.elapsed();

    // Edits spread over the file: type a character into a definition, then delete it
    // (every other edit), so the document stays the same size.
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut times = Vec::with_capacity(EDITS);
    let mut pending: Option<(u64, u64)> = None;
    for i in 0..EDITS {
        let version = i as i64 + 2;
        let change = match pending.take() {
            Some((line, ch)) => {
                json!({"range": {"start": {"line": line, "character": ch}, "end": {"line": line, "character": ch + 1}}, "text": ""})
            }
            None => {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let line = state % LINES as u64;
                let ch = (state >> 32) % (lines[line as usize].len() as u64 + 1);
                pending = Some((line, ch));
                json!({"range": {"start": {"line": line, "character": ch}, "end": {"line": line, "character": ch}}, "text": "x"})
            }
        };
        let t = Instant::now();
        send(json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}}));
        wait_version(&mut stdout, version);
        times.push(t.elapsed());
    }
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let hwm = status.lines().find(|l| l.starts_with("VmHWM")).unwrap_or("VmHWM: ?").to_owned();
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    read(&mut stdout);
    send(json!({"jsonrpc": "2.0", "method": "exit"}));
    let _ = child.wait();

    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!("script: {LINES} lines, {} bytes, {first} diagnostics on open", text.len());
    println!("open (didOpen -> publishDiagnostics v1): {:.2} ms", ms(open));
    println!(
        "{EDITS} edits, didChange -> publishDiagnostics of that version: p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        ms(percentile(&times, 0.50)),
        ms(percentile(&times, 0.90)),
        ms(percentile(&times, 0.99)),
        ms(times[times.len() - 1])
    );
    println!("server peak RSS: {}", hwm.split_whitespace().skip(1).collect::<Vec<_>>().join(" "));
}
