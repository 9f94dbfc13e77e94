//! The committed parser is exactly what `tree-sitter generate` makes of `grammar.js`:
//! regenerated here with the CLI's own library (tree-sitter-generate, same version as the
//! CLI, embedded QuickJS), so the check runs under `cargo test` on any machine.

use std::path::Path;
use tree_sitter_generate::{generate_parser_in_directory, OptLevel};

/// The ABI `tree-sitter generate` writes by default (tree-sitter-cli 0.27: 15).
const ABI: usize = tree_sitter::LANGUAGE_VERSION;

#[test]
fn committed_parser_matches_grammar_js() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("bpftrace-regenerate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("temp dir");
    let mut diagnostics = Vec::new();
    generate_parser_in_directory(
        root,
        Some(&out),
        Some(root.join("grammar.js")),
        ABI,
        None,
        Some("native"),
        true,
        OptLevel::default(),
        &mut diagnostics,
    )
    .expect("grammar.js generates");
    let mut stale = Vec::new();
    for file in ["parser.c", "grammar.json", "node-types.json"] {
        let fresh = std::fs::read_to_string(out.join(file)).expect("generated file");
        let committed = std::fs::read_to_string(root.join("src").join(file)).unwrap_or_default();
        if fresh != committed {
            if std::env::var_os("FEVLINT_REGENERATE").is_some() {
                std::fs::write(root.join("src").join(file), &fresh).expect("write src/");
            } else {
                stale.push(file);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        stale.is_empty(),
        "grammar/src is stale for {stale:?}: run `tree-sitter generate --js-runtime native` (tree-sitter-cli 0.27.1) in grammar-bpftrace/, or FEVLINT_REGENERATE=1 cargo test -p tree-sitter-bpftrace --test regenerate and commit"
    );
}
