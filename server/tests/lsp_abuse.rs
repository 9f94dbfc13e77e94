//! Protocol abuse: the `fevlint lsp` binary over stdio with raw JSON-RPC framing.
//! 10,000 random edits (deterministic PRNG) with positions beyond the document and
//! inside surrogate pairs, huge numbers, reversed ranges, full replacements; between
//! them unknown methods, malformed JSON, bad `Content-Length` headers and requests for
//! unopened documents. The server must keep answering, and its last diagnostics must
//! equal a fresh `check_text` of the text the edits produce — computed here by a second,
//! independent implementation of the clamping rules (`lsp::position` documents them).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

// --- the model: LSP positions over a String, written independently of the server ----

/// (start, content end, next line start) of each line; breaks are `\n`, `\r\n`, `\r`.
fn lines(text: &str) -> Vec<(usize, usize, usize)> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut i) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push((start, i, i + 1));
                start = i + 1;
            }
            b'\r' if b.get(i + 1) == Some(&b'\n') => {
                out.push((start, i, i + 2));
                i += 1;
                start = i + 1;
            }
            b'\r' => {
                out.push((start, i, i + 1));
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    out.push((start, b.len(), b.len()));
    out
}

fn model_offset(text: &str, line: u64, character: u64) -> usize {
    let ls = lines(text);
    let Some(&(start, end, _)) = ls.get(line as usize) else { return text.len() };
    let mut units = 0u64;
    for (i, c) in text[start..end].char_indices() {
        let w = c.len_utf16() as u64;
        if units + w > character {
            return start + i;
        }
        units += w;
    }
    end
}

fn model_position(text: &str, offset: usize) -> (u64, u64) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let ls = lines(text);
    let line = ls
        .iter()
        .position(|&(s, _, next)| s <= offset && (offset < next || next == text.len()))
        .unwrap_or(ls.len() - 1);
    let start = ls[line].0;
    (line as u64, text[start..offset].encode_utf16().count() as u64)
}

// --- the wire ------------------------------------------------------------------------

struct Server {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .args(["lsp", "--stdio"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fevlint lsp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length: ") {
                        len = v.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.expect("server sends Content-Length")];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let value: Value = serde_json::from_slice(&body).expect("server sends JSON");
                if tx.send(value).is_err() {
                    return;
                }
            }
        });
        Server { child, stdin, rx, next_id: 1 }
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write to server");
    }

    fn send(&mut self, v: Value) {
        self.raw(&frame(v.to_string().as_bytes()));
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Waits for the response to `id`, keeping the other messages seen meanwhile.
    fn response(&mut self, id: i64, seen: &mut Vec<Value>) -> Value {
        self.stdin.flush().expect("flush");
        loop {
            let v =
                self.rx.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| panic!("no response to request {id}"));
            if v.get("id") == Some(&json!(id)) && v.get("method").is_none() {
                return v;
            }
            seen.push(v);
        }
    }
}

const URI: &str = "file:///abuse/test.fev";

fn pieces() -> Vec<&'static str> {
    vec![
        "ip_rcv(",
        "x64 skb",
        ", ",
        "x86 dev",
        ")",
        "\n",
        "\r\n",
        "\r",
        "# note ",
        "😀",
        "é",
        "|",
        "NULL",
        "unsigned ",
        "int",
        " a+8=0x1000",
        "[0]",
        "+40",
        "symbol read+40[0]+16",
        "string name",
        "$jiffies",
        "0x",
        "do_IRQ(int counter+8=0xffffffff82354c18)\n",
        "f(x64 a, x64 b, x64 c, x64 d, x64 e, x64 g, x64 h)\n",
        "",
        "   ",
        "\t",
        "(",
        ",",
        "x8[6] perm_addr+16[0]+558",
        "\u{0}",
        "=",
    ]
}

#[test]
fn ten_thousand_hostile_edits_and_the_server_still_agrees_with_check_text() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut server = Server::start();
    let mut seen = Vec::new();
    let id = server.request("initialize", json!({"processId": null, "rootUri": null, "capabilities": {}}));
    let init = server.response(id, &mut seen);
    assert!(init["result"]["capabilities"]["textDocumentSync"].is_object(), "{init}");
    server.notify("initialized", json!({}));

    let mut text = "ip_rcv(x64 skb, x86 dev)\n__vfs_read(symbol read+40[0]+16)\n".to_owned();
    server.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "fev", "version": 1, "text": text}}),
    );
    let pieces = pieces();
    let mut version = 1;
    let mut edits = 0;
    let mut null_id_errors = 0;
    let mut notifications = 0;
    while edits < 10_000 {
        notifications += 1;
        version += 1;
        let n = 1 + rng.below(3);
        let mut changes = Vec::new();
        for _ in 0..n {
            edits += 1;
            if rng.below(400) == 0 {
                text = (0..rng.below(6)).map(|_| rng.pick(&pieces)).collect();
                changes.push(json!({"text": text}));
                continue;
            }
            let nlines = lines(&text).len() as u64;
            let pos = |rng: &mut Rng| -> (u64, u64) {
                let line = match rng.below(20) {
                    0 => nlines + rng.below(3),
                    1 => u64::from(u32::MAX),
                    _ => rng.below(nlines),
                };
                let character = match rng.below(20) {
                    0 => u64::from(u32::MAX),
                    1 => 1000 + rng.below(1000),
                    _ => rng.below(40),
                };
                (line, character)
            };
            let (l0, c0) = pos(&mut rng);
            let (l1, c1) = if text.len() > 3000 || rng.below(3) == 0 { pos(&mut rng) } else { (l0, c0) };
            let insert: String =
                if text.len() > 3000 { String::new() } else { (0..rng.below(4)).map(|_| rng.pick(&pieces)).collect() };
            // The model: clamp both ends; a reversed range is empty at its start.
            let start = model_offset(&text, l0, c0);
            let end = model_offset(&text, l1, c1).max(start);
            text.replace_range(start..end, &insert);
            changes.push(json!({
                "range": {"start": {"line": l0, "character": c0}, "end": {"line": l1, "character": c1}},
                "text": insert,
            }));
        }
        server.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": changes}),
        );
        if notifications % 97 == 0 {
            // Malformed traffic; each is followed by a request that must be answered.
            let junk: Vec<Vec<u8>> = vec![
                b"Content-Length: abc\r\n\r\n".to_vec(),
                b"Content-Length: 99999999999999999999\r\n\r\n".to_vec(),
                b"X-Nothing: 1\r\n\r\n".to_vec(),
                frame(b"{oops"),
                frame(br#"{"jsonrpc":"2.0","id":{},"method":5}"#),
                frame(b"[1,2,3]"),
                b"Content-Length: 10\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\",\"params\":{}}".to_vec(),
                b"garbage without a newline ".to_vec(),
                frame(&[0xff, 0xfe, 0x00]),
            ];
            let which = rng.below(junk.len() as u64) as usize;
            server.raw(&junk[which]);
            let unknown = server.request("fevlint/noSuchMethod", json!({}));
            let reply = server.response(unknown, &mut seen);
            assert_eq!(reply["error"]["code"], -32601, "unknown method after junk #{which}: {reply}");
            server.notify("fevlint/noSuchNotification", json!({"x": 1}));
            let nope = "file:///abuse/not-open.fev";
            for (method, params) in [
                ("textDocument/hover", json!({"textDocument": {"uri": nope}, "position": {"line": 0, "character": 0}})),
                (
                    "textDocument/completion",
                    json!({"textDocument": {"uri": nope}, "position": {"line": 9, "character": 9}}),
                ),
                ("textDocument/documentSymbol", json!({"textDocument": {"uri": nope}})),
            ] {
                let id = server.request(method, params);
                let reply = server.response(id, &mut seen);
                assert_eq!(reply["result"], Value::Null, "{method} on an unopened document: {reply}");
            }
            // Features on the live document at random (clamped) positions.
            let line = rng.below(200);
            let character = if rng.below(2) == 0 { u64::from(u32::MAX) } else { rng.below(50) };
            let at = json!({"textDocument": {"uri": URI}, "position": {"line": line, "character": character}});
            let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": line, "character": character}});
            for (method, params) in [
                ("textDocument/hover", at.clone()),
                ("textDocument/completion", at),
                ("textDocument/semanticTokens/full", json!({"textDocument": {"uri": URI}})),
                ("textDocument/documentSymbol", json!({"textDocument": {"uri": URI}})),
                ("textDocument/foldingRange", json!({"textDocument": {"uri": URI}})),
                (
                    "textDocument/formatting",
                    json!({"textDocument": {"uri": URI}, "options": {"tabSize": 4, "insertSpaces": true}}),
                ),
                (
                    "textDocument/codeAction",
                    json!({"textDocument": {"uri": URI}, "range": range, "context": {"diagnostics": []}}),
                ),
                (
                    "textDocument/hover",
                    json!({"textDocument": {"uri": URI}, "position": {"line": -1, "character": "x"}}),
                ),
            ] {
                let id = server.request(method, params);
                let reply = server.response(id, &mut seen);
                let bad_params =
                    method == "textDocument/hover" && reply.get("error").is_some_and(|e| e["code"] == -32602);
                assert!(reply.get("error").is_none() || bad_params, "{method}: {reply}");
            }
        }
    }
    // Everything sent: the last diagnostics must match the last version's text (an edit
    // that leaves the findings as they were is not published again). The reply to a
    // request sent after the last edit comes after any publish of it.
    let id = server.request("fevlint/noSuchMethod", json!({}));
    server.response(id, &mut seen);
    let last = seen
        .iter()
        .rev()
        .find(|v| v["method"] == "textDocument/publishDiagnostics")
        .cloned()
        .unwrap_or_else(|| panic!("no diagnostics published (final version {version})"));
    null_id_errors += seen.iter().filter(|v| v.get("id") == Some(&Value::Null) && v.get("error").is_some()).count();
    assert!(null_id_errors > 0, "malformed input is answered with JSON-RPC errors");
    let versions: Vec<i64> = seen
        .iter()
        .filter(|v| v["method"] == "textDocument/publishDiagnostics")
        .filter_map(|v| v["params"]["version"].as_i64())
        .collect();
    assert!(versions.windows(2).all(|w| w[0] <= w[1]), "diagnostics are published in version order");

    let mut parser = fevlint_syntax::Parser::new();
    let want: Vec<Value> = fevlint_check::analysis::check(
        &mut parser,
        text.as_bytes().to_vec(),
        &fevlint_check::analysis::Options::new(fevlint_syntax::Target::X86_64),
    )
    .1
    .iter()
    .map(|d| {
        let (l0, c0) = model_position(&text, d.span.start);
        // An end inside a character covers it (the range is never narrower than it).
        let mut end = d.span.end.max(d.span.start).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        let (l1, c1) = model_position(&text, end);
        let mut message = d.message.to_string();
        for n in &d.notes {
            message.push('\n');
            message.push_str(n);
        }
        json!([d.code, l0, c0, l1, c1, message])
    })
    .collect();
    let have: Vec<Value> = last["params"]["diagnostics"]
        .as_array()
        .expect("diagnostics array")
        .iter()
        .map(|d| {
            let r = &d["range"];
            json!([
                d["code"],
                r["start"]["line"],
                r["start"]["character"],
                r["end"]["line"],
                r["end"]["character"],
                d["message"]
            ])
        })
        .collect();
    assert_eq!(have, want, "final text ({} bytes):\n{text:?}", text.len());
    assert!(!want.is_empty(), "the final text should have some problems to compare");

    let id = server.request("shutdown", Value::Null);
    server.response(id, &mut seen);
    server.notify("exit", Value::Null);
    server.stdin.flush().expect("flush");
    let status = server.child.wait().expect("wait");
    assert!(status.success(), "exit after shutdown: {status}");
    eprintln!("{edits} edits in {notifications} notifications, final text {} bytes", text.len());
}
