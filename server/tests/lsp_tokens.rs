//! Semantic tokens by delta and by range (issue 26): after any edits, the previous full
//! tokens with each `semanticTokens/full/delta` answer applied are the full tokens of the
//! same text opened afresh, and a range's tokens are the full tokens of its lines.

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};

fn numbers(v: &Value) -> Vec<u64> {
    v.as_array().into_iter().flatten().filter_map(Value::as_u64).collect()
}

/// (line, start, length, type, modifiers) of each token.
fn absolute(data: &[u64]) -> Vec<[u64; 5]> {
    let (mut line, mut start) = (0, 0);
    data.chunks_exact(5)
        .map(|t| {
            if t[0] > 0 {
                start = 0;
            }
            line += t[0];
            start += t[1];
            [line, start, t[2], t[3], t[4]]
        })
        .collect()
}

fn script() -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut names: Vec<_> = std::fs::read_dir(&dir).expect("examples/").flatten().map(|e| e.path()).collect();
    names.sort();
    let mut text = String::new();
    for p in names.iter().filter(|p| p.extension().is_some_and(|e| e == "fev")) {
        text.push_str(&std::fs::read_to_string(p).expect("example"));
    }
    text
}

async fn open(c: &mut Client, uri: &str, text: &str) {
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deltas_applied_are_the_full_tokens_and_ranges_are_their_lines() {
    let mut c = Client::start();
    c.initialize(json!({}), Value::Null).await;
    let uri = "file:///tmp/fevlint-tokens/a.fev";
    let mut text = script();
    open(&mut c, uri, &text).await;
    let full = c.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": uri}})).await;
    let mut data = numbers(&full["data"]);
    let mut id = full["resultId"].as_str().expect("resultId").to_owned();
    assert!(data.len() > 500, "the examples have tokens: {}", data.len());

    let pieces = ["x", "(", "x64 a", ")", "\n", "# c ", "", "+8", "é"];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for version in 2..200 {
        let lines: Vec<&str> = text.split('\n').collect();
        let line = (next() % lines.len() as u64) as usize;
        let chars: Vec<char> = lines[line].chars().collect();
        let at = (next() % (chars.len() as u64 + 1)) as usize;
        let end = (at + (next() % 3) as usize).min(chars.len());
        let piece = pieces[(next() % pieces.len() as u64) as usize];
        let utf16 = |n: usize| chars[..n].iter().map(|c| c.len_utf16()).sum::<usize>();
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [
            {"range": {"start": {"line": line, "character": utf16(at)}, "end": {"line": line, "character": utf16(end)}},
             "text": piece}]}),
        )
        .await;
        let mut new_lines: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
        let edited: String =
            chars[..at].iter().chain(piece.chars().collect::<Vec<_>>().iter()).chain(&chars[end..]).collect();
        new_lines[line] = edited;
        text = new_lines.join("\n");

        let delta = c
            .request(
                "textDocument/semanticTokens/full/delta",
                json!({"textDocument": {"uri": uri}, "previousResultId": id}),
            )
            .await;
        let edits = delta["edits"].as_array().unwrap_or_else(|| panic!("a delta, not full tokens: {delta}"));
        assert!(edits.len() <= 1, "{delta}");
        for e in edits.iter().rev() {
            let start = e["start"].as_u64().expect("start") as usize;
            let count = e["deleteCount"].as_u64().expect("deleteCount") as usize;
            data.splice(start..start + count, numbers(&e["data"]));
        }
        id = delta["resultId"].as_str().expect("resultId").to_owned();

        if version % 40 == 0 {
            // The same text opened afresh: its full tokens.
            let fresh = format!("file:///tmp/fevlint-tokens/fresh{version}.fev");
            open(&mut c, &fresh, &text).await;
            let want = c.request("textDocument/semanticTokens/full", json!({"textDocument": {"uri": fresh}})).await;
            assert_eq!(data, numbers(&want["data"]), "version {version}");
            // A range: the full tokens of its lines.
            let (from, to) = (line.saturating_sub(3) as u64, line as u64 + 3);
            let range = c
                .request(
                    "textDocument/semanticTokens/range",
                    json!({"textDocument": {"uri": uri},
                    "range": {"start": {"line": from, "character": 0}, "end": {"line": to, "character": 0}}}),
                )
                .await;
            let expected: Vec<[u64; 5]> = absolute(&data).into_iter().filter(|t| t[0] >= from && t[0] <= to).collect();
            assert_eq!(absolute(&numbers(&range["data"])), expected, "version {version}");
        }
    }
    // An unknown previous result: the full tokens.
    let full = c
        .request(
            "textDocument/semanticTokens/full/delta",
            json!({"textDocument": {"uri": uri}, "previousResultId": "nope"}),
        )
        .await;
    assert_eq!(numbers(&full["data"]), data);
    c.finish().await;
}
