//! Bad input never panics: the oracle corpus, mutated byte by byte with the characters
//! the parser cares about, through every dialect and through the real-kernel env; every
//! span it reports lies inside the line.

mod common;

use fevlint_mainline::{check_line, check_line_with, Dialect, Fetch, Line, Rejection};

/// xorshift64*: a fixed sequence, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const ALPHABET: &[u8] = b"+-()[]:=%@$\\\"./*, \t0x9azbu>_\xc3\xa0#";

fn mutate(rng: &mut Rng, line: &str) -> String {
    let mut b = line.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(3) {
            0 => b.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
            1 if at < b.len() => {
                b.remove(at);
            }
            _ if at < b.len() => b[at] = ALPHABET[rng.below(ALPHABET.len())],
            _ => {}
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn check(d: &Dialect, env: Option<&common::FixtureKernel>, line: &str) {
    let r = match env {
        Some(e) => check_line_with(d, e, line),
        None => check_line(d, line),
    };
    match r {
        Err(Rejection::Logged(e)) => assert!(e.byte <= line.len(), "`{line}`: byte {}", e.byte),
        Ok(Line::Probe(p)) => {
            let ok = |s: &std::ops::Range<usize>| s.start <= s.end && s.end <= line.len();
            for a in &p.args {
                assert!(ok(&a.span) && ok(&a.body_span), "`{line}`: {a:?}");
                assert!(a.ty.as_ref().is_none_or(|t| ok(&t.span)), "`{line}`: {a:?}");
                let mut stack = vec![&a.fetch];
                while let Some(f) = stack.pop() {
                    match f {
                        Fetch::Deref { inner, offset_span, .. } => {
                            assert!(ok(offset_span), "`{line}`: {f:?}");
                            stack.push(inner);
                        }
                        Fetch::Btf { fields, .. } => {
                            assert!(fields.iter().all(|x| ok(&x.span)), "`{line}`: {f:?}")
                        }
                        _ => {}
                    }
                }
            }
        }
        _ => {}
    }
}

#[test]
fn mutated_corpus_lines_never_panic() {
    let corpus: Vec<&str> = include_str!("oracle/mainline-corpus.txt").lines().collect();
    let kernel = common::FixtureKernel::load("6.12.117+deb12-amd64");
    let dialects = [Dialect::debian_6_1_170(), Dialect::debian_6_1_192(), Dialect::debian_6_12_117()];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // FEVLINT_ROBUST_ITERS raises the count for a longer local run (default 20,000).
    let iters = std::env::var("FEVLINT_ROBUST_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    for _ in 0..iters {
        let pick = corpus[rng.below(corpus.len())];
        let line = mutate(&mut rng, pick);
        for d in &dialects {
            check(d, None, &line);
        }
        check(&dialects[2], Some(&kernel), &line);
    }
    // Deep nesting and long words stay bounded.
    let deep = format!("p vfs_read {}%ax{}", "+0(".repeat(5000), ")".repeat(5000));
    check(&dialects[1], None, &deep);
    let long = format!("f vfs_read {}", "file->f_op".repeat(1000));
    check(&dialects[2], Some(&kernel), &long);
}
