//! Every tool Debian's bpftrace 0.17 ships parses with no error, as bpftrace parses them,
//! and every probe and access in them is found.

use fevlint_bpftrace::{parse, ExprKind, ProbeKind};
use std::path::Path;

fn tools() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/bpftrace/debian-0.17-tools");
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("fixture folder")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "bt"))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read_to_string(e.path()).expect("read")))
        .collect();
    out.sort();
    out
}

#[test]
fn debian_tools_parse_without_error() {
    let tools = tools();
    assert_eq!(tools.len(), 38);
    let mut probes = 0;
    for (name, text) in &tools {
        let p = parse(text);
        assert_eq!(p.errors, vec![], "{name}");
        assert!(!p.program.probes.is_empty(), "{name}");
        for pr in &p.program.probes {
            for ap in &pr.attach_points {
                assert!(ap.kind.is_some(), "{name}: {}", ap.raw);
                assert_eq!(&text[ap.span.start..ap.span.end].replace(char::is_whitespace, ""), &ap.raw, "{name}");
                probes += 1;
            }
        }
    }
    assert!(probes > 100, "{probes}");
}

#[test]
fn tool_probes_and_accesses_are_read() {
    let text = tools().into_iter().find(|(n, _)| n == "tcpconnect.bt").expect("tcpconnect").1;
    let p = parse(&text);
    let probe = p.program.probes.iter().find(|pr| pr.attach_points[0].kind == Some(ProbeKind::Kprobe)).expect("kprobe");
    let ap = &probe.attach_points[0];
    assert_eq!((ap.kind, ap.func.as_str()), (Some(ProbeKind::Kprobe), "tcp_connect"));
    assert_eq!(&text[ap.func_span.start..ap.func_span.end], "tcp_connect");
    let mut casts = Vec::new();
    for s in &probe.body {
        s.walk(&mut |s| {
            for e in s.exprs() {
                e.walk(&mut |e| {
                    if let ExprKind::Cast { ty, pointers, .. } = &e.kind {
                        casts.push((ty.clone(), *pointers));
                    }
                })
            }
        });
    }
    assert_eq!(casts, [("struct sock".to_owned(), 1)]);
}

/// Random edits of the real tools (bytes inserted, deleted, replaced; truncations): the
/// parser never panics and every span lies inside the text. (The same property as the
/// `bpftrace` fuzz target, run here on every `cargo test`.)
#[test]
fn mutated_tools_never_panic() {
    let tools = tools();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    const ALPHABET: &[u8] = b"{}()[];:/*+-@$#\"\\'.,<>=!&|^~?0x9aZ_ \n\t\xff\xc3";
    for round in 0..3000 {
        let (_, text) = &tools[round % tools.len()];
        let mut b = text.as_bytes().to_vec();
        for _ in 0..1 + next() % 8 {
            let at = (next() as usize) % (b.len() + 1);
            let c = ALPHABET[(next() as usize) % ALPHABET.len()];
            match next() % 4 {
                0 => b.insert(at, c),
                1 if at < b.len() => {
                    b.remove(at);
                }
                2 if at < b.len() => b[at] = c,
                _ => b.truncate(at),
            }
        }
        let text = String::from_utf8_lossy(&b);
        let p = parse(&text);
        for e in &p.errors {
            assert!(e.span.start <= e.span.end && e.span.end <= text.len(), "round {round}: {e:?}");
        }
        for pr in &p.program.probes {
            for ap in &pr.attach_points {
                assert!(ap.span.end <= text.len() && ap.func_span.end <= text.len(), "round {round}");
            }
        }
    }
}
