//! Positions through a real client exchange, in each encoding a client may negotiate
//! (`general.positionEncodings`): a character outside the Basic Multilingual Plane (an
//! emoji: 4 bytes, 2 UTF-16 units, 1 scalar) gets a range as wide as the character, as
//! `fevlint check` shows it (before: a one-byte span inside the emoji became an empty
//! range), and the client's positions are read in the encoding agreed on.

mod lsp_common;

use lsp_common::Client;
use serde_json::{json, Value};

/// The diagnostics of the publish of `version`, as (code, start, end) with positions
/// as (line, character).
type Found = Vec<(String, (u64, u64), (u64, u64))>;

fn found(publish: &Value) -> Found {
    let pos = |p: &Value| (p["line"].as_u64().unwrap_or(u64::MAX), p["character"].as_u64().unwrap_or(u64::MAX));
    publish["params"]["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| (d["code"].as_str().unwrap_or("").to_owned(), pos(&d["range"]["start"]), pos(&d["range"]["end"])))
        .collect()
}

fn is_publish(v: &Value, version: i64) -> bool {
    v["method"] == "textDocument/publishDiagnostics" && v["params"]["version"] == json!(version)
}

/// The emoji is the 14th character of line 0 and the first of line 1 (after `é`'s
/// line it is on).
const TEXT: &str = "vfs_read(x64 \u{1F600})\n\u{1F600}\n";

/// (offered encodings, the encoding the server must pick, the emoji's width in it).
const CASES: &[(Option<&[&str]>, &str, u64)] = &[
    (None, "utf-16", 2),
    (Some(&["utf-16"]), "utf-16", 2),
    (Some(&["utf-8", "utf-16"]), "utf-8", 4),
    (Some(&["utf-32", "utf-8", "utf-16"]), "utf-32", 1),
    (Some(&["utf-7", "utf-32"]), "utf-32", 1),
    (Some(&["latin-1"]), "utf-16", 2),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_bmp_character_has_its_width_in_every_negotiated_encoding() {
    for &(offered, picked, width) in CASES {
        let mut c = Client::start();
        let capabilities = match offered {
            Some(list) => json!({"general": {"positionEncodings": list}}),
            None => json!({}),
        };
        let init = c.request("initialize", json!({"capabilities": capabilities})).await;
        c.notify("initialized", json!({})).await;
        assert_eq!(init["capabilities"]["positionEncoding"], json!(picked), "offered {offered:?}");

        let uri = "file:///tmp/fevlint-positions/emoji.fev";
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": TEXT}}),
        )
        .await;
        let open = c.wait("the publish of version 1", |v| is_publish(v, 1)).await;
        let want: Found = vec![("S001".to_owned(), (0, 13), (0, 13 + width)), ("S001".to_owned(), (1, 0), (1, width))];
        assert_eq!(found(&open), want, "offered {offered:?}: {open:#}");

        // The emoji of line 0 replaced by `a`, its range given in the agreed encoding:
        // read in any other, the edit would cut the `)` or half the emoji.
        let change = json!({"range": {"start": {"line": 0, "character": 13}, "end": {"line": 0, "character": 13 + width}}, "text": "a"});
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]}),
        )
        .await;
        let edited = c.wait("the publish of version 2", |v| is_publish(v, 2)).await;
        assert_eq!(found(&edited), vec![("S001".to_owned(), (1, 0), (1, width))], "offered {offered:?}: {edited:#}");

        // A position after the emoji on line 1 (its end) is read as the end of the line:
        // typing there appends to the emoji's line.
        let change = json!({"range": {"start": {"line": 1, "character": width}, "end": {"line": 1, "character": width}}, "text": "(x64 b)"});
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": 3}, "contentChanges": [change]}),
        )
        .await;
        // Findings the edit leaves as they were are not published again: the reply to a
        // request sent after it comes after any publish of it, so the last publish seen then
        // is current.
        c.request("fevlint/noSuchMethod", json!({})).await;
        let typed = c.seen.iter().rev().find(|v| is_publish(v, 3)).cloned().unwrap_or(edited);
        assert_eq!(found(&typed), vec![("S001".to_owned(), (1, 0), (1, width))], "offered {offered:?}: {typed:#}");
        let hover = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": {"line": 0, "character": 2}}),
            )
            .await;
        if let Some(range) = hover.get("range") {
            assert_eq!(range["start"]["line"], json!(0), "{hover:#}");
        }
        c.finish().await;
    }
}
