//! Bad input never crashes or hangs the checker: random bytes, invalid UTF-8, huge
//! lines, endless redirects, NUL files. Each gets a diagnostic.

use fevlint::analysis::{check, Options};
use fevlint::syntax::{Parser, Target};

fn codes(bytes: Vec<u8>) -> Vec<&'static str> {
    let (_, diags) = check(&mut Parser::new(), bytes, &Options::new(Target::X86_64));
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn random_bytes() {
    // A fixed xorshift stream: deterministic, no dependency.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..200 {
        let len = (round * 37) % 3000;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let _ = codes(bytes);
    }
}

#[test]
fn invalid_utf8_is_reported() {
    let got = codes(b"f(int \xff\xfe a)\n".to_vec());
    assert_eq!(got[0], "S000");
    assert!(got.contains(&"S001"));
}

#[test]
fn a_one_megabyte_line() {
    let mut line = b"f(int a".to_vec();
    line.extend(std::iter::repeat_n(b'+', 1 << 20));
    line.extend_from_slice(b")\n");
    let got = codes(line);
    assert_eq!(got, ["S004"]);
}

#[test]
fn a_hundred_thousand_redirects() {
    let mut line = String::from("f(x64 a");
    for i in 0..100_000 {
        line.push_str(if i % 2 == 0 { "+8" } else { "[0]" });
    }
    line.push(')');
    let (_, diags) = check(&mut Parser::new(), line.clone().into_bytes(), &Options::new(Target::X86_64));
    assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), ["S004"]);
    // Under the kernel's limit, a long chain is fine.
    let short: String = format!("f(x64 a{})", "+8[0]".repeat(800));
    assert!(codes(short.into_bytes()).is_empty());
}

#[test]
fn a_file_of_nul_bytes() {
    let got = codes(vec![0u8; 100_000]);
    assert!(got.contains(&"S004") && got.contains(&"S005"), "{got:?}");
    let got = codes(b"f(int a)\0junk\n".to_vec());
    assert_eq!(got, ["S005"]);
}

#[test]
fn many_short_broken_lines() {
    let text: String = (0..20_000).map(|i| if i % 3 == 0 { "f(int a\n" } else { "(\n" }).collect();
    let got = codes(text.into_bytes());
    assert_eq!(got.len(), 20_000);
}
