//! `Kernel::function_exists` (what rename suggestions ask of each name they try) says
//! what `Kernel::function(name)?.exists()` says, for names the types know, names only the
//! ftrace list knows as clones, names only the symbol map knows, and names nobody knows;
//! with the symbol map parsed (no cache) and read from the cache's paged set, piecewise
//! and, after enough lookups, whole: the same answers each way.

use std::path::PathBuf;

use fevlint_kernel::Kernel;
use fevlint_load::cache::Cache;

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fevlint-exists-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// Names of every kind, and the names a rename suggestion derives from them.
fn names(k: &Kernel) -> Vec<String> {
    let mut out: Vec<String> = ["", "no_such_function", "vfs_read", "kmalloc", "SyS_openat"].map(String::from).to_vec();
    let known: Vec<String> = k.function_names().iter().step_by(211).map(str::to_owned).collect();
    // Clone bases (`name` of `name.isra.0`) and symbols only the map has.
    let ff = k.filter_functions().expect("ftrace list");
    out.extend(ff.value.dotted().step_by(37).filter_map(|n| n.split('.').next()).map(str::to_owned));
    let syms = k.symbols().expect("symbol map");
    out.extend(syms.value.iter().filter(|s| s.is_text()).step_by(509).map(|s| s.name.to_owned()));
    for n in known {
        for derived in [format!("{n}_noprof"), format!("__{n}"), format!("{n}_common")] {
            out.push(derived);
        }
        out.push(n);
    }
    out
}

#[test]
fn function_exists_is_what_function_says() {
    let fixture = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64");
    let dir = tempdir("cache");
    let cached = Cache::new(Some(dir.clone()));
    // Without a cache; then a first run filling the cache and a second reading it paged.
    let mut answers: Vec<Vec<(String, bool)>> = Vec::new();
    for cache in [Cache::off(), cached.clone(), cached] {
        let k = Kernel::open_cached(&fixture, &cache).unwrap_or_else(|e| panic!("{e}"));
        answers.push(names(&k).into_iter().map(|n| (n.clone(), k.function_exists(&n))).collect());
        let (mut yes, mut no, mut only_map, mut only_clones) = (0, 0, 0, 0);
        for n in names(&k) {
            let facts = k.function(&n).ok();
            let want = facts.as_ref().is_some_and(|f| f.exists());
            assert_eq!(k.function_exists(&n), want, "{n}");
            if want {
                yes += 1
            } else {
                no += 1
            }
            if let Some(f) = facts.filter(|f| f.exists()) {
                only_map += usize::from(f.prototypes.is_empty() && f.text_symbol == Some(true));
                only_clones += usize::from(matches!(f.trace, fevlint_kernel::Trace::OnlyClones(_)));
            }
        }
        assert!(yes > 100 && no > 100 && only_map > 0 && only_clones > 0, "{yes} {no} {only_map} {only_clones}");
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "the cached sets answer as the parsed map");
    let _ = std::fs::remove_dir_all(&dir);
}
