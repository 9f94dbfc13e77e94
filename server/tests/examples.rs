//! Every definition in `examples/` parses cleanly (the kernel would accept it) and
//! draws no diagnostic; the rejected spec example is rejected as the kernel does.

use fevlint::analysis::{check, Options};
use fevlint::syntax::{Parser, Target};
use std::path::Path;

#[test]
fn examples_are_clean() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut parser = Parser::new();
    let mut definitions = 0;
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "fev") {
            continue;
        }
        files += 1;
        let text = std::fs::read_to_string(&path).expect("read example");
        let lines = parser.lines(&text, Target::X86_64);
        for l in &lines {
            if let Some(p) = &l.parsed {
                definitions += 1;
                assert!(p.rejection.is_none(), "{}:{}: rejected: {:?}", path.display(), l.number + 1, p.rejection);
            }
        }
        let diags = check(&mut parser, text.as_bytes().to_vec(), &Options::new(Target::X86_64)).1;
        // spec.fev collects the documentation's examples: several per function, and the
        // doc's own `x64 skb | int skb[32]` repeats a field name.
        let spec = path.ends_with("spec.fev");
        let diags: Vec<_> = diags.iter().filter(|d| !(spec && matches!(d.code, "N101" | "N102"))).collect();
        assert!(diags.is_empty(), "{}: {diags:?}", path.display());
        assert!(
            !parser.parse(&text, Target::X86_64, None).tree.root_node().has_error(),
            "{}: tree-sitter error",
            path.display()
        );
    }
    assert!(files >= 5 && definitions >= 80, "{files} files, {definitions} definitions");
}

#[test]
fn rejected_example_is_rejected_with_the_kernel_message() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/scripts/rejected.fev");
    let text = std::fs::read_to_string(path).expect("rejected.fev");
    let diags = check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64)).1;
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].notes[0], "kernel: Unexpected token 'x86' for COMMA state");
}

/// The language server's per-line kernel cache gives exactly what a full kernel check
/// gives, on a first run (all misses), a second run (all hits) and after an edit.
#[test]
fn kernel_line_cache_matches_the_full_check() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.12.117+deb12-amd64");
    let kernel = fevlint::kernel::Kernel::open(&path).expect("6.12 fixture");
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/spec.fev")).expect("spec");
    let cache = fevlint::analysis::KernelLineCache::default();
    let mut parser = Parser::new();
    let edited = spec.replacen("perm_addr+558", "perm_addr+831", 1) + "vfs_read(u32 mode+14[0])\n";
    for text in [&spec, &spec, &edited] {
        let parse = parser.parse(text, Target::X86_64, None);
        let full = fevlint::analysis::check_parse_kernel(&parse, text, &kernel);
        let cached = cache.check(&parse, text, &kernel, 1);
        assert!(!full.is_empty());
        assert_eq!(full, cached);
    }
}
