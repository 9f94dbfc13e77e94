//! Fuzzes the whole syntax layer: bytes in, diagnostics and a tree out, never a panic.
#![no_main]

use fevlint_syntax::{machine, Parser, Target};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let target = if data.first().is_some_and(|b| b & 1 == 1) { Target::X86_32 } else { Target::X86_64 };
    let mut parser = Parser::new();
    let (text, diagnostics) =
        fevlint_check::analysis::check(&mut parser, data.to_vec(), &fevlint_check::analysis::Options::new(target));
    for d in &diagnostics {
        assert!(d.span.start <= d.span.end && d.span.end <= text.len() + 1);
    }
    let parse = parser.parse(&text, target, None);
    for (_, parsed) in parse.definitions() {
        let _ = machine::echo(parsed, target, true);
        for f in &parsed.fields {
            if let machine::Source::Param { redirects, .. } = &f.source {
                let _ = machine::fold_redirects(redirects);
            }
        }
    }
    let _ = fevlint_check::render::json::render(&[fevlint_check::render::FileReport { name: "fuzz".into(), text, diagnostics }]);
});
