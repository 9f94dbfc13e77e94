//! `fevlint-lsp` is the only crate that knows LSP types, URIs and UTF-16; `fevlint-ide`
//! (editor features in byte offsets) knows the syntax and rules but never LSP.
//!
//! Cargo holds the dependencies (only `fevlint-lsp` depends on tower-lsp-server and
//! ropey, `fevlint-ide` has no serde_json or codespan); this checks what it cannot: no
//! other crate counts UTF-16 units or handles URIs on its own.

use std::path::Path;

fn sources(dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push((path.display().to_string(), std::fs::read_to_string(&path).expect("read source")));
        }
    }
}

#[test]
fn only_lsp_speaks_lsp() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    sources(&server.join("src"), &mut all);
    sources(&server.join("crates"), &mut all);
    let lsp_dir = server.join("crates/lsp").display().to_string();
    let mut checked = 0;
    for (path, text) in &all {
        if path.starts_with(&lsp_dir) {
            continue;
        }
        checked += 1;
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for banned in ["ls_types", "utf16", "Uri"] {
                // SARIF 2.1.0 counts columns in UTF-16 code units too: the renderer (and the
                // line index it uses) may compute them.
                // (and names its fields `uri`, `informationUri`, `helpUri`).
                let sarif = matches!(banned, "utf16" | "Uri")
                    && (path.ends_with("render/sarif.rs") || path.ends_with("render/mod.rs"));
                assert!(sarif || !line.contains(banned), "{path}: only `lsp` may use `{banned}`: {line}");
            }
        }
    }
    assert!(checked > 10, "the walk found the sources");
}

#[test]
fn ide_does_not_render_or_use_json() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/ide/src"), &mut files);
    assert!(!files.is_empty());
    for (path, text) in files {
        assert!(text.starts_with("//!"), "{path} must start with a //! line");
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            // Rendering is the CLI's and the language server's job, not the editor features'.
            assert!(!line.contains("render::"), "{path}: `ide` must not render: {line}");
        }
    }
}
