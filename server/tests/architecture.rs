//! ARCHITECTURE.md is a map a newcomer can trust: its crate graph (the block after
//! `<!-- crate-graph -->`) is the one `cargo metadata` reports, and every path it names
//! in backticks exists.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("server/ is in the repository")
}

fn architecture() -> String {
    std::fs::read_to_string(repo().join("ARCHITECTURE.md")).expect("read ARCHITECTURE.md")
}

/// The crate graph as ARCHITECTURE.md draws it: crate -> its fevlint dependencies.
fn drawn() -> BTreeMap<String, Vec<String>> {
    let text = architecture();
    let after = text.split_once("<!-- crate-graph -->").expect("the crate-graph marker").1;
    let block = after.split_once("```text\n").expect("a text block after the marker").1;
    let block = block.split_once("```").expect("the block ends").0;
    block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (name, deps) = l.split_once(':').expect("`crate: deps`");
            let deps = match deps.trim() {
                "(none)" => Vec::new(),
                d => d.split(',').map(|d| d.trim().to_owned()).collect(),
            };
            (name.trim().to_owned(), deps)
        })
        .collect()
}

/// The workspace's crates and their normal dependencies on fevlint crates and the grammar,
/// as `cargo metadata --no-deps` lists them.
fn metadata() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["metadata", "--no-deps", "--format-version", "1", "--offline"])
        .current_dir(repo())
        .output()
        .expect("run cargo metadata");
    assert!(out.status.success(), "cargo metadata: {}", String::from_utf8_lossy(&out.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("cargo metadata JSON");
    let ours = |n: &str| n.starts_with("fevlint") || n == "tree-sitter-fev";
    let mut graph = BTreeMap::new();
    for p in meta["packages"].as_array().expect("packages") {
        let name = p["name"].as_str().expect("name");
        if !name.starts_with("fevlint") {
            continue;
        }
        let mut deps: Vec<String> = p["dependencies"]
            .as_array()
            .expect("dependencies")
            .iter()
            .filter(|d| d["kind"].is_null())
            .filter_map(|d| d["name"].as_str())
            .filter(|d| ours(d))
            .map(str::to_owned)
            .collect();
        deps.sort();
        deps.dedup();
        graph.insert(name.to_owned(), deps);
    }
    graph
}

#[test]
fn the_crate_graph_drawn_is_the_one_cargo_reports() {
    let mut drawn_sorted = drawn();
    for deps in drawn_sorted.values_mut() {
        deps.sort();
    }
    let real = metadata();
    assert!(real.len() >= 17, "cargo metadata lists the workspace: {real:?}");
    for (name, deps) in &real {
        assert_eq!(
            drawn_sorted.get(name),
            Some(deps),
            "ARCHITECTURE.md's line for {name} (cargo metadata says {deps:?})"
        );
    }
    for name in drawn_sorted.keys() {
        assert!(real.contains_key(name), "ARCHITECTURE.md draws {name}, which the workspace does not have");
    }
}

/// Every repository path ARCHITECTURE.md names in backticks from the root (`server/...`,
/// `grammar/...`, `grammar-mainline/...`, `editors/...`, `fixtures/...`, `fuzz/...`) exists.
#[test]
fn every_path_the_map_names_exists() {
    let text = architecture();
    let mut missing = Vec::new();
    for quoted in text.split('`').skip(1).step_by(2) {
        // Paths from the repository root (a crate's own `tests/x.rs` is relative to it).
        let roots = ["server/", "grammar/", "grammar-mainline/", "editors/", "fixtures/", "fuzz/"];
        if !roots.iter().any(|r| quoted.starts_with(r)) || quoted.contains(['*', ' ', '<', '{']) {
            continue;
        }
        if !repo().join(quoted.trim_end_matches(['/', ':', ','])).exists() {
            missing.push(quoted.to_owned());
        }
    }
    assert!(missing.is_empty(), "ARCHITECTURE.md names paths that do not exist: {missing:?}");
}
