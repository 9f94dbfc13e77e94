//! The name index cache: written atomically under the cache directory keyed by
//! build-id, loaded when valid, rebuilt when corrupt, truncated or foreign.

mod dwarf_common;

use std::path::Path;

use dwarf_common::{compile_agree, scratch};
use fevlint::kernel::dwarf::{Dwarf, IndexOrigin};
use fevlint::kernel::model::{TypeNamespace, TypeSource};

fn fresh(bin: &Path, cache: &Path) -> Dwarf {
    Dwarf::open(bin).expect("open").with_cache_dir(Some(cache.to_path_buf()))
}

#[test]
fn cache_is_written_loaded_and_rebuilt_when_corrupt() {
    let dir = scratch("index");
    // A build-id makes the file cacheable (gcc's default on Debian, made explicit).
    let bin = compile_agree(&dir, "idx", &["-Wl,--build-id=sha1"]);
    let cache = dir.join("cache");

    let dw = fresh(&bin, &cache);
    let (idx, origin) = dw.ensure_index().expect("build");
    let n = idx.len();
    let IndexOrigin::Built { written: Some(file), write_error: None, replaced: None } = origin else {
        panic!("expected a fresh build, got {origin:?}")
    };
    let id = dw.elf().build_id_hex().expect("build-id");
    assert_eq!(file, cache.join(format!("{id}.dwidx")));
    // No temporary files left behind.
    let names: Vec<_> = std::fs::read_dir(&cache).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(names.len(), 1, "{names:?}");

    let dw = fresh(&bin, &cache);
    let (idx, origin) = dw.ensure_index().expect("load");
    assert_eq!(origin, IndexOrigin::Cache(file.clone()));
    assert_eq!(idx.len(), n);
    let t = dw.find_type(TypeNamespace::Struct, "holder").expect("holder");
    assert_eq!(t.len(), 1);
    assert_eq!(dw.functions("helper").expect("helper").len(), 2);

    let good = std::fs::read(&file).expect("read cache");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("flipped byte", {
            let mut b = good.clone();
            let mid = b.len() / 2;
            b[mid] ^= 0x40;
            b
        }),
        ("truncated", good[..good.len() - 5].to_vec()),
        ("bad magic", {
            let mut b = good.clone();
            b[0] = b'X';
            b
        }),
        ("other build-id", {
            let mut b = good.clone();
            b[16] ^= 1;
            b
        }),
        ("empty", Vec::new()),
    ];
    for (what, bytes) in cases {
        std::fs::write(&file, &bytes).expect("write");
        let dw = fresh(&bin, &cache);
        let (idx, origin) = dw.ensure_index().expect(what);
        match origin {
            IndexOrigin::Built { written: Some(_), replaced: Some(_), .. } => {}
            other => panic!("{what}: expected a rebuild, got {other:?}"),
        }
        assert_eq!(idx.len(), n, "{what}");
        assert_eq!(std::fs::read(&file).expect("rewritten"), good, "{what}: the rebuilt cache is identical");
    }
}

#[test]
fn no_cache_dir_still_indexes() {
    let dir = scratch("nocache");
    let bin = compile_agree(&dir, "nc", &[]);
    let dw = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    let (idx, origin) = dw.ensure_index().expect("build");
    assert!(idx.len() > 20);
    assert!(matches!(origin, IndexOrigin::Built { written: None, write_error: Some(_), .. }), "{origin:?}");
}

#[test]
fn cold_lookups_match_indexed_ones() {
    let dir = scratch("cold");
    let bin = compile_agree(&dir, "cold", &[]);
    let cold = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    // Cold: no index is built by type lookups or by functions that have a symbol.
    let s = cold.find_type(TypeNamespace::Struct, "nested").expect("cold");
    let f = cold.functions("take_struct").expect("cold fn");
    let h = cold.functions("helper").expect("cold helper");
    assert!(cold.index().is_none(), "a cold lookup built the index");
    assert_eq!(h.len(), 2, "both static helpers through .symtab and .debug_aranges");
    let warm = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    warm.ensure_index().expect("index");
    assert_eq!(warm.find_type(TypeNamespace::Struct, "nested").expect("warm"), s);
    assert_eq!(warm.functions("take_struct").expect("warm fn"), f);
    assert_eq!(cold.find_type(TypeNamespace::Struct, "no_such_struct").expect("none"), []);
    assert_eq!(cold.functions("no_such_function").expect("none"), []);
}

#[test]
fn cold_function_lookup_through_the_symbol_or_the_index() {
    let dir = scratch("coldfn");
    let bin = compile_agree(&dir, "coldfn", &[]);
    // `grid_sum` keeps its DWARF but loses its symbol: only the index can find it.
    let stripped = dir.join("coldfn-nosym");
    let st = std::process::Command::new("objcopy")
        .arg("--strip-symbol=grid_sum")
        .arg(&bin)
        .arg(&stripped)
        .status()
        .expect("objcopy runs (binutils)");
    assert!(st.success());
    let warm = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    warm.ensure_index().expect("index");

    let cold = Dwarf::open(&stripped).expect("open").with_cache_dir(None);
    // Two static `helper`s in two units, and a global, each found through .symtab
    // (searched by name, not read whole) and .debug_aranges, as the index finds them.
    for name in ["helper", "shared_fn", "main"] {
        assert_eq!(cold.functions(name).expect(name), warm.functions(name).expect(name), "{name}");
    }
    assert_eq!(cold.functions("helper").expect("helper").len(), 2);
    assert!(cold.index().is_none(), "a function with a symbol built the index");
    let g = cold.functions("grid_sum").expect("grid_sum");
    assert!(cold.index().is_some(), "a function without a symbol is looked up in the index");
    assert_eq!(g, warm.functions("grid_sum").expect("grid_sum"));
    assert_eq!(g.len(), 1);
}
