//! Boundaries inside a crate that Cargo cannot express (ARCHITECTURE.md), checked by
//! reading the imports, and the grammar's node names used by the code checked against the
//! grammar itself. Boundaries between crates are their dependencies in `Cargo.toml`: the
//! syntax and the kernel model do not depend on each other, only `fevlint-lsp` depends on
//! tower-lsp-server.

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

/// Every `src` folder of the workspace's fevlint packages.
fn roots() -> Vec<std::path::PathBuf> {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![server.join("src")];
    for entry in std::fs::read_dir(server.join("crates")).expect("read crates") {
        roots.push(entry.expect("entry").path().join("src"));
    }
    roots
}

/// A folder of the checker crate, `fevlint-check`.
fn module(name: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/check/src").join(name);
    if dir.is_dir() {
        sources(&dir, &mut out);
    }
    out
}

fn forbid(name: &str, banned: &[&str]) {
    for (path, text) in module(name) {
        for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for b in banned {
                assert!(!line.contains(b), "{path}: `{name}` must not use `{b}`: {line}");
            }
        }
    }
}

/// The `fevlint` crates a package of the workspace depends on, and whether it depends on `dep`.
fn manifest(krate: &str) -> toml::Table {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates").join(krate).join("Cargo.toml");
    toml::from_str(&std::fs::read_to_string(&path).expect("read Cargo.toml")).expect("Cargo.toml is TOML")
}

fn depends(krate: &str, dep: &str) -> bool {
    let m = manifest(krate);
    ["dependencies", "dev-dependencies"].iter().any(|t| m.get(*t).and_then(|d| d.get(dep)).is_some())
}

// Cargo enforces these arrows; this pins them, so that adding the wrong one is a test
// failure and not a silent change of architecture.
#[test]
fn the_layers_depend_only_downwards() {
    for (krate, forbidden) in [
        ("syntax", &["fevlint-kernel", "fevlint-check", "fevlint-ide", "fevlint-lsp"][..]),
        ("kernel", &["fevlint-syntax", "fevlint-check", "fevlint-ide", "fevlint-lsp", "tree-sitter"][..]),
        // The readers under the kernel model: the BTF reader stands on the type model
        // alone (BPF objects carry BTF too), the type model on nothing.
        ("types", &["fevlint-load", "fevlint-btf", "fevlint-dwarf", "fevlint-kernel", "fevlint-syntax"][..]),
        ("btf", &["fevlint-load", "fevlint-dwarf", "fevlint-kernel", "fevlint-syntax"][..]),
        ("load", &["fevlint-btf", "fevlint-dwarf", "fevlint-kernel", "fevlint-syntax"][..]),
        ("dwarf", &["fevlint-btf", "fevlint-kernel", "fevlint-syntax"][..]),
        ("diff", &["fevlint-syntax", "fevlint-check", "fevlint-ide", "fevlint-lsp"][..]),
        ("check", &["fevlint-ide", "fevlint-lsp"][..]),
        ("ide", &["fevlint-lsp"][..]),
        // The dump readers know nothing of scripts, kernels' types or the checker.
        (
            "memory",
            &["fevlint-syntax", "fevlint-kernel", "fevlint-check", "fevlint-ide", "fevlint-lsp", "fevlint-exec"][..],
        ),
        // The executor: syntax and memory only, never the checker's rules or the editors.
        ("exec", &["fevlint-kernel", "fevlint-check", "fevlint-ide", "fevlint-lsp"][..]),
        // A core opened against its kernel: no rules, no editors.
        ("dryrun", &["fevlint-check", "fevlint-ide", "fevlint-lsp"][..]),
        // Compiled BPF objects: the BTF reader only; no scripts, rules or editors.
        (
            "bpf",
            &["fevlint-syntax", "fevlint-check", "fevlint-ide", "fevlint-lsp", "fevlint-memory", "fevlint-mainline"][..],
        ),
        // The mainline dialect's syntax knows no kernel.
        ("mainline", &["fevlint-kernel", "fevlint-check", "fevlint-ide", "fevlint-lsp", "fevlint-memory"][..]),
        // The kernel's C library pieces stand on nothing: both dialects' parsers share them.
        ("kclib", &["fevlint-syntax", "fevlint-mainline", "fevlint-kernel", "fevlint-types"][..]),
        // The two dialects' parsers do not depend on each other.
        ("syntax", &["fevlint-mainline"][..]),
        ("mainline", &["fevlint-syntax"][..]),
    ] {
        for dep in forbidden {
            assert!(!depends(krate, dep), "fevlint-{krate} must not depend on {dep}");
        }
    }
    for krate in [
        "syntax", "types", "btf", "load", "dwarf", "kernel", "diff", "check", "ide", "memory", "exec", "dryrun",
        "mainline", "bpf",
    ] {
        assert!(!depends(krate, "tower-lsp-server"), "only fevlint-lsp may depend on tower-lsp-server");
    }
    assert!(depends("lsp", "tower-lsp-server"));
}

#[test]
fn rules_do_not_render_or_speak_lsp() {
    forbid("rules", &["codespan", "serde_json", "crate::render"]);
}

#[test]
fn every_source_file_says_what_it_is_for() {
    let mut all = Vec::new();
    for root in roots() {
        sources(&root, &mut all);
    }
    assert!(all.len() > 50, "the walk found the sources");
    for (path, text) in all {
        assert!(text.starts_with("//!"), "{path} must start with a //! line");
    }
}

#[test]
fn node_kinds_exist_in_the_grammar() {
    let types: serde_json::Value = serde_json::from_str(tree_sitter_fev::NODE_TYPES).expect("NODE_TYPES is JSON");
    let nodes = types.as_array().expect("array");
    let named: Vec<&str> = nodes.iter().filter(|n| n["named"] == true).filter_map(|n| n["type"].as_str()).collect();
    for kind in fevlint_syntax::kinds::ALL {
        assert!(named.contains(kind), "node kind `{kind}` is not in the grammar");
    }
    let fields: Vec<&str> =
        nodes.iter().filter_map(|n| n["fields"].as_object()).flat_map(|f| f.keys().map(String::as_str)).collect();
    for field in fevlint_syntax::kinds::field::ALL {
        assert!(fields.contains(field), "field `{field}` is not in the grammar");
    }
}

/// Every Rust package of the workspace with a `src` folder: the `fevlint` package
/// (`server/`) and each crate under `server/crates/`.
fn packages() -> Vec<(String, std::path::PathBuf)> {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = vec![("fevlint".to_owned(), server.join("src"))];
    for entry in std::fs::read_dir(server.join("crates")).expect("read crates") {
        let dir = entry.expect("entry").path();
        if dir.join("src").is_dir() {
            out.push((dir.file_name().expect("name").to_string_lossy().into_owned(), dir.join("src")));
        }
    }
    out.sort();
    out
}

/// The names a crate's root re-exports (`pub use m::{A, B};`, `pub use m::A;`), each
/// with the top-level module it comes from: `crate::A` is a use of `m`.
fn root_reexports(root: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut rest = root;
    while let Some(at) = rest.find("pub use ") {
        let stmt = &rest[at + "pub use ".len()..];
        let end = stmt.find(';').unwrap_or(stmt.len());
        let stmt = &stmt[..end];
        rest = &rest[at + end..];
        let Some((module, names)) = stmt.split_once("::") else { continue };
        for name in names.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|n| !n.is_empty()) {
            out.insert(name.to_owned(), module.trim().to_owned());
        }
    }
    out
}

/// The names a file gives the crate itself (`use crate as kernel;`, `pub(crate) use crate
/// as k;`, `extern crate self as k;`): paths through them are paths through `crate::`.
fn crate_aliases(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").or_else(|| l.strip_prefix("pub(crate) ")).unwrap_or(l);
            l.strip_prefix("use crate as ").or_else(|| l.strip_prefix("extern crate self as "))?.strip_suffix(';')
        })
        .map(|a| format!("{}::", a.trim()))
        .collect()
}

/// The first path segment after `crate::`: `x` of `x::y`, or each item's of `{x, y::z}`.
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| s.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let Some(group) = rest.strip_prefix('{') else { return vec![ident(rest)] };
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                out.push(ident(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(ident(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out
}

/// The top-level modules of one crate and the modules of the same crate each refers to:
/// `crate::x` (or an alias of `crate`), `super::x` from a top-level file, or a name the
/// root re-exports from `x`.
fn module_graph(src: &Path) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
    let mut modules = std::collections::BTreeMap::new();
    let mut root = String::new();
    for entry in std::fs::read_dir(src).expect("read src") {
        let path = entry.expect("entry").path();
        let name = path.file_stem().expect("name").to_string_lossy().into_owned();
        if name == "lib" || name == "main" {
            root.push_str(&std::fs::read_to_string(&path).expect("read root"));
        } else if path.is_dir() || path.extension().is_some_and(|e| e == "rs") {
            modules.insert(name, path);
        }
    }
    let reexports = root_reexports(&root);
    let root_aliases = crate_aliases(&root);
    let mut graph = std::collections::BTreeMap::new();
    for (name, path) in &modules {
        let mut files = Vec::new();
        if path.is_dir() {
            sources(path, &mut files);
        } else {
            files.push((path.display().to_string(), std::fs::read_to_string(path).expect("read source")));
        }
        let mut uses = std::collections::BTreeSet::new();
        for (file, text) in files {
            let top = !path.is_dir() || file.ends_with("/mod.rs");
            let mut prefixes = vec!["crate::".to_owned()];
            if top {
                prefixes.push("super::".to_owned());
            }
            prefixes.extend(root_aliases.iter().cloned());
            prefixes.extend(crate_aliases(&text));
            let code: String =
                text.lines().filter(|l| !l.trim_start().starts_with("//")).flat_map(|l| [l, "\n"]).collect();
            for prefix in &prefixes {
                for (at, _) in code.match_indices(prefix.as_str()) {
                    if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
                        continue;
                    }
                    for word in first_segments(&code[at + prefix.len()..]) {
                        let word = reexports.get(&word).cloned().unwrap_or(word);
                        if modules.contains_key(&word) && word != *name {
                            uses.insert(word);
                        }
                    }
                }
            }
        }
        graph.insert(name.clone(), uses);
    }
    graph
}

// Cargo forbids circles between crates; inside a crate, this does: a module never
// depends, even indirectly, on a module that depends on it.
#[test]
fn no_import_circle_inside_a_crate() {
    let packages = packages();
    assert!(packages.len() >= 15, "found the workspace's packages: {packages:?}");
    for (krate, src) in &packages {
        let graph = module_graph(src);
        // Depth-first search for a back edge.
        fn visit<'a>(
            m: &'a str,
            graph: &'a std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
            path: &mut Vec<&'a str>,
            done: &mut std::collections::BTreeSet<&'a str>,
        ) -> Option<Vec<String>> {
            if let Some(i) = path.iter().position(|p| *p == m) {
                let mut circle: Vec<String> = path[i..].iter().map(|s| s.to_string()).collect();
                circle.push(m.to_owned());
                return Some(circle);
            }
            if !done.insert(m) {
                return None;
            }
            path.push(m);
            for next in &graph[m] {
                if let Some(c) = visit(next, graph, path, done) {
                    return Some(c);
                }
            }
            path.pop();
            None
        }
        let mut done = std::collections::BTreeSet::new();
        for m in graph.keys() {
            if let Some(circle) = visit(m, &graph, &mut Vec::new(), &mut done) {
                panic!("{krate}: import circle {}", circle.join(" -> "));
            }
        }
    }
}

/// Readers and analysis take their IO policy from the edge: no environment variable and
/// no home directory below the CLI (`server/src`) and the language server (`crates/lsp`),
/// which decide the cache directory once and pass it in. (`fevlint-testkit`, a
/// dev-dependency only, reads the real-tool switch.)
#[test]
fn only_the_edges_read_the_environment() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates");
    for entry in std::fs::read_dir(&crates).expect("read crates") {
        let dir = entry.expect("entry").path();
        if dir.file_name().is_some_and(|n| n == "lsp" || n == "testkit") {
            continue;
        }
        let mut files = Vec::new();
        sources(&dir.join("src"), &mut files);
        for (path, text) in files {
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for b in ["env::var", "var_os(", "home_dir("] {
                    assert!(!line.contains(b), "{path}: a library reads the environment (`{b}`): {line}");
                }
            }
        }
    }
}

/// Lines of Rust in every `.rs` file under `dir`.
fn rust_lines(dir: &Path) -> usize {
    let mut files = Vec::new();
    if dir.is_dir() {
        sources(dir, &mut files);
    }
    files.iter().map(|(_, text)| text.lines().count()).sum()
}

/// Each crate is one kind of thing: none holds more than a quarter of the workspace's
/// code (the Rust lines of every package's `src/`; tests, benches and examples are not
/// counted, as they are not what a crate is). `fevlint-kernel` was 28% before the split.
#[test]
fn no_crate_holds_a_quarter_of_the_code() {
    let sizes: Vec<(String, usize)> = packages().into_iter().map(|(name, src)| (name, rust_lines(&src))).collect();
    let total: usize = sizes.iter().map(|(_, n)| n).sum();
    assert!(total > 20_000, "counted the workspace: {sizes:?}");
    let table: Vec<String> =
        sizes.iter().map(|(name, n)| format!("{name}: {n} lines, {:.1}%", 100.0 * *n as f64 / total as f64)).collect();
    for (name, n) in &sizes {
        assert!(n * 4 <= total, "{name} holds more than a quarter of the code ({total} lines):\n{}", table.join("\n"));
    }
}

/// The cache's location chosen or kept below the edge: a global directory (a static or
/// a setter), a library reading it from somewhere, or building its own [`Cache`] from a
/// path; or a cache write through a module-level function instead of the `Cache` value
/// the edge handed down (`cache.put(..)` on that value is how a library writes).
///
/// [`Cache`]: fevlint_load::cache::Cache
const CACHE_MARKERS: [&str; 7] =
    ["static DIR", "set_dir(", "cache::dir()", "Cache::new(", "cache::put(", "cache::put_derived(", "cache::fill("];

/// The exceptions below the edge, each with why it is still there. Each must still be
/// found (a removed one fails the test, so this list cannot go stale) and nothing else
/// may be. None is left: the CLI decides the directory once (`cli::kernel_cache`) and
/// passes a `Cache` value down (the kernel's `OpenOptions`, `fevlint_lsp::run`).
const KNOWN_CACHE_WRITES: [(&str, &str, &str); 0] = [];

/// Readers and analysis neither choose the cache's location nor write it on their own:
/// only the edges (the CLI, `server/src`; the language server, `crates/lsp`) do, and hand
/// the directory down. What is still below the edge is listed, with its reason, in
/// [`KNOWN_CACHE_WRITES`].
#[test]
fn only_the_edges_place_and_write_the_cache() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = std::collections::BTreeSet::new();
    for (name, src) in packages() {
        if name == "fevlint" || name == "lsp" || name == "testkit" {
            continue;
        }
        let mut files = Vec::new();
        sources(&src, &mut files);
        for (path, text) in files {
            let rel = Path::new(&path).strip_prefix(server).map_or(path.clone(), |p| p.display().to_string());
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for m in CACHE_MARKERS {
                    if line.contains(m) {
                        found.insert((rel.clone(), m));
                    }
                }
            }
        }
    }
    let known: std::collections::BTreeSet<(String, &str)> =
        KNOWN_CACHE_WRITES.iter().map(|(f, m, _)| ((*f).to_owned(), *m)).collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(new.is_empty(), "a library places or writes the cache (hand it the directory from the edge): {new:?}");
    let stale: Vec<_> = known.difference(&found).collect();
    assert!(stale.is_empty(), "gone from the code, so remove from KNOWN_CACHE_WRITES (and ARCHITECTURE.md): {stale:?}");
}

/// `rules/` holds rules: one file per rule (`<code>_<name>.rs`), the registry (`mod.rs`),
/// and `suppress.rs`, which is there because suppression comments are parsed against the
/// registry and N103/N104 are rules over them (beside `rules` the two modules would
/// import each other; `rules/mod.rs` says so where it declares it).
#[test]
fn rules_holds_only_rules() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/check/src/rules");
    let mut others = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("read rules/") {
        let name = entry.expect("entry").file_name().to_string_lossy().into_owned();
        let b = name.as_bytes();
        let rule = b.len() > 5
            && b"snkatdxb".contains(&b[0])
            && b[1..4].iter().all(u8::is_ascii_digit)
            && b[4] == b'_'
            && name.ends_with(".rs");
        if !rule && name != "mod.rs" && name != "suppress.rs" {
            others.push(name);
        }
    }
    assert!(others.is_empty(), "not rules, in rules/: {others:?}");
    let registry = std::fs::read_to_string(dir.join("mod.rs")).expect("rules/mod.rs");
    assert!(registry.contains("pub mod suppress;"), "suppress.rs is still declared by the registry");
}

/// One name, one meaning: a module, file or folder called `kernel` is the kernel model
/// (the crate `crates/kernel`) or the command over it (`src/cli/kernel.rs`), and `walk` is
/// the field walk (`crates/syntax/src/walk.rs`, the kernel's `__get_arg()`). The dump
/// reader's kernel core is `kernel_core`, the DWARF reader's DIE walker `toplevel`.
#[test]
fn kernel_and_walk_each_name_one_thing() {
    let server = Path::new(env!("CARGO_MANIFEST_DIR"));
    fn visit(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.file_name().is_some_and(|n| n == "target") {
                continue;
            }
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let module = path.is_dir() || path.extension().is_some_and(|e| e == "rs");
            if module && (stem == "kernel" || stem == "walk") {
                out.push(path.clone());
            }
            if path.is_dir() {
                visit(&path, out);
            }
        }
    }
    let mut found = Vec::new();
    for dir in ["src", "crates"] {
        visit(&server.join(dir), &mut found);
    }
    let mut found: Vec<String> =
        found.iter().map(|p| p.strip_prefix(server).expect("inside server/").display().to_string()).collect();
    found.sort();
    assert_eq!(found, ["crates/kernel", "crates/syntax/src/walk.rs", "src/cli/kernel.rs"]);
    for (name, src) in packages() {
        let mut files = Vec::new();
        sources(&src, &mut files);
        for (path, text) in files {
            for line in text.lines().map(str::trim) {
                let declares = |m: &str| {
                    line.strip_prefix("pub ").or_else(|| line.strip_prefix("pub(crate) ")).unwrap_or(line)
                        == format!("mod {m};")
                };
                let allowed = (name == "fevlint" && path.ends_with("cli/mod.rs")) || name == "syntax";
                assert!(allowed || !(declares("kernel") || declares("walk")), "{path}: {line}");
            }
        }
    }
}

/// The circle search sees through what hid circles before: a file's `use crate as x`
/// alias, a `crate::{a, b}` group, and a name the root re-exports from a module.
#[test]
fn the_circle_search_sees_aliases_groups_and_reexports() {
    let dir = std::env::temp_dir().join(format!("fevlint-tidy-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(&src).expect("tmp src");
    let write = |name: &str, text: &str| std::fs::write(src.join(name), text).expect("write");
    write("lib.rs", "//! root\nmod a;\nmod b;\nmod c;\nmod e;\npub use c::{Gamma, Delta};\n");
    write("a.rs", "//! a\nuse crate as kernel;\nuse kernel::b::Beta;\n");
    write("e.rs", "//! e\nextern crate self as me;\nfn f() -> me::a::Alpha {}\n");
    write("b.rs", "//! b\nuse crate::{c::Gamma, d};\n");
    write("c.rs", "//! c\nfn f() -> crate::Delta {}\n");
    let graph = module_graph(&src);
    assert_eq!(graph["a"].iter().collect::<Vec<_>>(), ["b"], "the alias is crate");
    assert_eq!(graph["e"].iter().collect::<Vec<_>>(), ["a"], "`extern crate self as` is an alias too");
    assert_eq!(graph["b"].iter().collect::<Vec<_>>(), ["c"], "a group's items");
    assert!(graph["c"].is_empty(), "a re-export of the module itself is no edge");
    write("c.rs", "//! c\nuse crate::Alpha;\n");
    write("lib.rs", "//! root\nmod a;\nmod b;\nmod c;\nmod e;\npub use a::Alpha;\n");
    let graph = module_graph(&src);
    assert_eq!(graph["c"].iter().collect::<Vec<_>>(), ["a"], "a root re-export names its module");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// fevlint has no public web home: no file of the repository links to a placeholder
/// host (the reserved example domains sent editors, SARIF and the language server's
/// rule links to a dead address). Rule pages are local (`fevlint rule CODE`, `docs/rules/`).
#[test]
fn no_placeholder_hosts_anywhere() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let out = std::process::Command::new("git")
        .args(["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
        .current_dir(&root)
        .output()
        .expect("git ls-files");
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    // Spelled in pieces so that this file does not find itself.
    let hosts = [["example", ".invalid"].concat(), ["example", ".com"].concat(), ["example", ".org"].concat()];
    let mut found = Vec::new();
    for path in out.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let path = root.join(String::from_utf8_lossy(path).as_ref());
        let Ok(text) = std::fs::read(&path) else { continue };
        let text = String::from_utf8_lossy(&text);
        for (n, line) in text.lines().enumerate() {
            if hosts.iter().any(|h| line.contains(h.as_str())) {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    // formats.rs names the host to assert that SARIF output does not contain it.
    found.retain(|f| !f.contains("server/tests/formats.rs"));
    assert!(found.is_empty(), "placeholder hosts:\n{}", found.join("\n"));
}

/// The string literals of `line` that are exactly a rule code (`"T401"`).
fn rule_code_literals(line: &str) -> Vec<&str> {
    let b = line.as_bytes();
    (0..b.len().saturating_sub(5))
        .filter(|&i| {
            b[i] == b'"'
                && b"SNKATDXB".contains(&b[i + 1])
                && b[i + 2..i + 5].iter().all(u8::is_ascii_digit)
                && b[i + 5] == b'"'
                && (i == 0 || b[i - 1] != b'\\')
        })
        .map(|i| &line[i + 1..i + 5])
        .collect()
}

/// A rule owns its code: code elsewhere names a rule by its constant (`rules::T407`,
/// `d.is(&rules::T407)`), never by its code as a string, so renaming or renumbering a
/// rule is one edit that the compiler checks. Test modules (`#[cfg(test)]` onwards) may
/// write codes as a user's `fevlint.toml` does.
#[test]
fn rule_codes_are_string_literals_only_in_their_rule() {
    let rules_dir = Path::new("crates/check/src/rules");
    let mut found = Vec::new();
    for root in roots() {
        let mut files = Vec::new();
        sources(&root, &mut files);
        for (path, text) in files {
            if Path::new(&path).strip_prefix(env!("CARGO_MANIFEST_DIR")).is_ok_and(|p| p.starts_with(rules_dir)) {
                continue;
            }
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (n, line) in code.lines().enumerate().filter(|(_, l)| !l.trim_start().starts_with("//")) {
                for c in rule_code_literals(line) {
                    found.push(format!("{path}:{}: \"{c}\": name the rule by its constant (`rules::{c}`)", n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "rule codes as strings outside rules/:\n{}", found.join("\n"));
}

#[test]
fn the_rule_code_search_sees_literals_and_not_other_strings() {
    assert_eq!(rule_code_literals(r#"if d.code == "T407" || x == "S001" {"#), ["T407", "S001"]);
    assert!(rule_code_literals(r#"format!("ignore[T407]"), "T4071", "Q123", "T40""#).is_empty());
}
