//! Every definition in `examples/` parses cleanly (the kernel would accept it) and
//! draws no diagnostic; the rejected spec example is rejected as the kernel does.

use fevlint_check::analysis::{check, Options};
use fevlint_syntax::{Parser, Target};
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
    assert_eq!(&*diags[0].notes[0], "kernel: Unexpected token 'x86' for COMMA state");
}

/// The language server's per-line kernel cache gives exactly what a full kernel check
/// gives, on a first run (all misses), a second run (all hits) and after an edit.
#[test]
fn kernel_line_cache_matches_the_full_check() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.12.117+deb12-amd64");
    let kernel = fevlint_kernel::Kernel::open(&path).expect("6.12 fixture");
    let spec =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/spec.fev")).expect("spec");
    let cache = fevlint_check::analysis::KernelLineCache::default();
    let mut parser = Parser::new();
    let edited = spec.replacen("perm_addr+558", "perm_addr+831", 1) + "vfs_read(u32 mode+14[0])\n";
    for text in [&spec, &spec, &edited] {
        let parse = parser.parse(text, Target::X86_64, None);
        let full = fevlint_check::analysis::check_parse_kernel(&parse, text, &kernel);
        let cached = cache.check(&parse, text, &kernel, 1);
        assert!(!full.is_empty());
        assert_eq!(full, cached);
    }
}

/// `fevlint check` checks each distinct definition once per kernel and copies its
/// findings to the repeats: a script of every example repeated, shuffled with blank and
/// comment lines, gives on each line exactly what the lone line gives, against four
/// kernels with drift (every repeat of a drifting line drifts).
#[test]
fn repeated_definitions_get_the_findings_of_the_lone_definition() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let kernels: Vec<fevlint_kernel::Kernel> =
        ["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"]
            .iter()
            .map(|k| fevlint_kernel::Kernel::open(&root.join("fixtures/kernels").join(k)).expect("fixture"))
            .collect();
    let refs: Vec<&fevlint_kernel::Kernel> = kernels.iter().collect();
    let spec = std::fs::read_to_string(root.join("examples/spec.fev")).expect("spec");
    let defs: Vec<&str> = spec.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).collect();
    assert!(defs.len() > 10);
    let mut text = String::new();
    for i in 0..3 * defs.len() {
        text.push_str(defs[(i * 7) % defs.len()]);
        text.push('\n');
        if i % 5 == 0 {
            text.push_str("# a comment\n\n");
        }
    }
    let options = Options::new(Target::X86_64).kernels(&refs);
    let (_, all) = check(&mut Parser::new(), text.as_bytes().to_vec(), &options);
    let mut kernel_findings = 0;
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty() && !l.starts_with('#')) {
        let start: usize = text.lines().take(n).map(|l| l.len() + 1).sum();
        let mine: Vec<(&str, usize, &str, Option<&str>)> = all
            .iter()
            .filter(|d| d.span.start >= start && d.span.start <= start + line.len() && d.code != "N101")
            .map(|d| (d.code, d.span.start - start, &*d.message, d.kernel.as_deref()))
            .collect();
        let (_, alone) = check(&mut Parser::new(), format!("{line}\n").into_bytes(), &options);
        let alone: Vec<(&str, usize, &str, Option<&str>)> =
            alone.iter().map(|d| (d.code, d.span.start, &*d.message, d.kernel.as_deref())).collect();
        assert_eq!(mine, alone, "line {}: {line}", n + 1);
        kernel_findings += mine.iter().filter(|d| d.3.is_some()).count();
    }
    assert!(kernel_findings > 20, "{kernel_findings} kernel findings");
}
