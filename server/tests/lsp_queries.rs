//! The editor plugins' copies of the tree-sitter queries are what `grammar/queries/`
//! holds (`scripts/sync-queries.sh` copies them).

use std::path::Path;

#[test]
fn nvim_queries_are_fresh_copies_of_grammar_queries() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for entry in std::fs::read_dir(root.join("grammar/queries")).expect("grammar/queries") {
        let src = entry.expect("entry").path();
        if src.extension().is_none_or(|e| e != "scm") {
            continue;
        }
        let name = src.file_name().expect("file name");
        let copy = root.join("editors/nvim/queries/fev").join(name);
        let want = std::fs::read_to_string(&src).expect("read query");
        let have = std::fs::read_to_string(&copy).unwrap_or_default();
        assert!(want == have, "{} is stale: run scripts/sync-queries.sh", copy.display());
        checked += 1;
    }
    assert!(checked > 0, "no queries in grammar/queries");
}
