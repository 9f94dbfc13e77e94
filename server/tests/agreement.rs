//! The agreement table (`agreement.txt`): fevlint accepts and rejects exactly what the
//! kernel's reference parser does, at the same token, with the kernel's message; and
//! the tree-sitter grammar never flags a line the kernel accepts.

use fevlint_syntax::machine::{RejectKind, Target};
use fevlint_syntax::{lex, Parser};

#[derive(Debug)]
enum Expect {
    Ok(u32),
    Skip,
    Reject { kind: RejectKind, state: Option<String>, token: Vec<u8>, nth: usize, slot_limit: bool, lenient: bool },
}

fn unescape(s: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && b.get(i + 1) == Some(&b'x') {
            let hex = std::str::from_utf8(&b[i + 2..i + 4]).expect("hex escape");
            out.push(u8::from_str_radix(hex, 16).expect("hex escape"));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    out
}

fn parse_expect(spec: &str) -> Expect {
    let words: Vec<&str> = spec.split_whitespace().collect();
    let flag = |f: &str| words.contains(&f);
    let token = |w: &str| -> (Vec<u8>, usize) {
        let (tok, nth) = match w.rfind("'@") {
            Some(at) => (&w[..=at], w[at + 2..].parse().expect("occurrence")),
            None => (w, 1),
        };
        (unescape(tok.trim_matches('\'')), nth)
    };
    match words[0] {
        "ok" => Expect::Ok(words[1].parse().expect("slot count")),
        "skip" => Expect::Skip,
        "ending" => Expect::Reject {
            kind: RejectKind::UnexpectedEnding,
            state: None,
            token: Vec::new(),
            nth: 0,
            slot_limit: false,
            lenient: flag("lenient"),
        },
        "unexpected" => {
            let (token, nth) = token(words[2]);
            Expect::Reject {
                kind: RejectKind::UnexpectedToken,
                state: Some(words[1].to_owned()),
                token,
                nth,
                slot_limit: flag("slot-limit"),
                lenient: flag("lenient"),
            }
        }
        "too-many" | "silent" => {
            let (token, nth) = token(words[1]);
            let kind = if words[0] == "silent" { RejectKind::Silent } else { RejectKind::TooManyArgs };
            Expect::Reject { kind, state: None, token, nth, slot_limit: flag("slot-limit"), lenient: flag("lenient") }
        }
        other => panic!("unknown expectation {other:?}"),
    }
}

/// Byte offset of the nth kernel token equal to `token`.
fn nth_token(line: &str, token: &[u8], nth: usize) -> Option<usize> {
    let mut toks = Vec::new();
    lex::tokens(line, fevlint_syntax::Span::new(0, line.find('#').unwrap_or(line.len())), &mut toks);
    toks.iter().filter(|t| &line.as_bytes()[t.span.start..t.span.end] == token).nth(nth - 1).map(|t| t.span.start)
}

#[test]
fn kernel_parser_agreement() {
    let table = include_str!("agreement.txt");
    let mut target = Target::X86_64;
    let mut parser = Parser::new();
    let mut pending: Option<&str> = None;
    let mut failures = Vec::new();
    let mut rows = 0;
    for raw in table.lines() {
        if raw.starts_with("%%") || raw.trim().is_empty() {
            continue;
        }
        match raw {
            "[x86_64]" => target = Target::X86_64,
            "[x86_32]" => target = Target::X86_32,
            _ if raw.starts_with("| ") || raw == "|" => pending = Some(raw.get(2..).unwrap_or("")),
            _ if raw.starts_with("= ") => {
                let line = pending.take().expect("expectation follows a line");
                rows += 1;
                if let Err(e) = check_row(&mut parser, line, target, &parse_expect(&raw[2..])) {
                    failures.push(format!("{line:?}: {e}"));
                }
            }
            _ => panic!("bad table line {raw:?}"),
        }
    }
    assert!(rows >= 150, "the table must hold at least 150 lines, has {rows}");
    assert!(failures.is_empty(), "{} of {rows} rows disagree:\n{}", failures.len(), failures.join("\n"));
}

fn check_row(parser: &mut Parser, line: &str, target: Target, expect: &Expect) -> Result<(), String> {
    let parse = parser.parse(line, target, None);
    let lp = &parse.lines[0];
    let ts_error = parse.tree.root_node().has_error();
    match (expect, &lp.parsed) {
        (Expect::Skip, None) => Ok(()),
        (Expect::Skip, Some(_)) => Err("expected the kernel to skip the line".into()),
        (_, None) => Err("the line was skipped".into()),
        (Expect::Ok(n), Some(p)) => {
            if let Some(r) = &p.rejection {
                return Err(format!("expected ok, got {:?} at {:?}", r.kind, r.at));
            }
            if p.slots != *n {
                return Err(format!("expected {n} slots, got {}", p.slots));
            }
            if ts_error {
                return Err(format!(
                    "tree-sitter flags a line the kernel accepts: {}",
                    parse.tree.root_node().to_sexp()
                ));
            }
            Ok(())
        }
        (Expect::Reject { kind, state, token, nth, slot_limit, lenient }, Some(p)) => {
            let Some(r) = &p.rejection else { return Err("expected a rejection, got ok".into()) };
            if &r.kind != kind {
                return Err(format!("expected {kind:?}, got {:?} ({:?} at {:?})", r.kind, r.state, r.at));
            }
            if let Some(state) = state {
                if r.state.kernel_name() != state {
                    return Err(format!("expected state {state}, got {}", r.state.kernel_name()));
                }
            }
            let want_at = if *kind == RejectKind::UnexpectedEnding {
                let code = line.find('#').unwrap_or(line.len());
                line[..code].trim_end().len()
            } else {
                nth_token(line, token, *nth).ok_or_else(|| format!("token {token:?} #{nth} not in line"))?
            };
            if r.at.start != want_at {
                return Err(format!("expected the error at byte {want_at}, got {:?}", r.at));
            }
            if r.slot_limit != *slot_limit {
                return Err(format!("slot_limit: expected {slot_limit}, got {}", r.slot_limit));
            }
            let msg = r.kernel_message(line, target);
            let want_msg = match kind {
                RejectKind::UnexpectedToken => Some(format!(
                    "Unexpected token '{}' for {} state",
                    String::from_utf8_lossy(token),
                    state.as_deref().unwrap_or("")
                )),
                RejectKind::UnexpectedEnding => Some("Unexpected ending".to_owned()),
                RejectKind::TooManyArgs => Some(format!("Error: Too many arguments (max of {})", target.max_args)),
                RejectKind::Silent => None,
            };
            if msg != want_msg {
                return Err(format!("message {msg:?}, expected {want_msg:?}"));
            }
            if *kind != RejectKind::Silent && r.error_log.is_none() {
                return Err("no kernel error log".into());
            }
            // The grammar flags every malformed shape; values are checked by the machine
            // only. A missing `)` is deliberately tolerated by the grammar.
            let missing_paren_only = *kind == RejectKind::UnexpectedEnding && !ts_error;
            if !lenient && !missing_paren_only && !ts_error && !*slot_limit && *kind != RejectKind::TooManyArgs {
                return Err(format!("tree-sitter accepts a malformed line: {}", parse.tree.root_node().to_sexp()));
            }
            if *lenient && ts_error {
                return Err("marked lenient, but tree-sitter flags it".into());
            }
            Ok(())
        }
    }
}
