//! The name index cache: written atomically under the cache directory keyed by
//! build-id, loaded when valid, rebuilt when corrupt, truncated or foreign.

use std::path::Path;

use fevlint_dwarf::{Dwarf, IndexOrigin};
use fevlint_testkit::dwarf::{compile_agree, scratch};
use fevlint_types::model::{TypeNamespace, TypeSource};

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

fn uleb(b: &[u8], pos: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let x = b[*pos];
        *pos += 1;
        v |= u64::from(x & 0x7f) << shift;
        if x & 0x80 == 0 {
            return v;
        }
        shift += 7;
    }
}

/// Rewrites every `DW_AT_decl_line` of form `DW_FORM_data1` in `.debug_abbrev` to
/// `DW_FORM_flag` (also one byte, so no offset moves): a wanted attribute in a form the
/// fast walker leaves to gimli. Returns how many were rewritten.
fn decl_line_as_flag(bytes: &mut [u8], path: &Path) -> usize {
    let elf = fevlint_load::elf::KernelElf::parse(fevlint_load::Blob::from_vec(bytes.to_vec()), path).expect("elf");
    let r = elf.section(".debug_abbrev").and_then(|s| s.file_range.clone()).expect(".debug_abbrev");
    let (b, mut pos, mut n) = (&mut bytes[r], 0, 0);
    while pos < b.len() {
        if uleb(b, &mut pos) == 0 {
            continue; // the end of one unit's table
        }
        uleb(b, &mut pos); // tag
        pos += 1; // children
        loop {
            let name = uleb(b, &mut pos);
            let form_at = pos;
            let form = uleb(b, &mut pos);
            if name == 0 && form == 0 {
                break;
            }
            if form == 0x21 {
                uleb(b, &mut pos); // DW_FORM_implicit_const's value (an sleb, same length rule)
            }
            if name == 0x3b && form == 0x0b {
                b[form_at] = 0x0c;
                n += 1;
            }
        }
    }
    n
}

#[test]
fn forms_the_walker_leaves_to_gimli_give_the_same_answers() {
    let dir = scratch("fallback");
    let bin = compile_agree(&dir, "fb", &[]);
    let mut bytes = std::fs::read(&bin).expect("read");
    assert!(decl_line_as_flag(&mut bytes, &bin) > 0, "no data1 DW_AT_decl_line to rewrite");
    let patched = dir.join("fb-patched");
    std::fs::write(&patched, &bytes).expect("write");

    let plain = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    plain.ensure_index().expect("index");
    let odd = Dwarf::open(&patched).expect("open").with_cache_dir(None);
    let cold = Dwarf::open(&patched).expect("open").with_cache_dir(None);
    odd.ensure_index().expect("index");
    assert_eq!(odd.function_names().expect("names"), plain.function_names().expect("names"));
    for (ns, name) in [
        (TypeNamespace::Struct, "holder"),
        (TypeNamespace::Struct, "nested"),
        (TypeNamespace::Union, "value"),
        (TypeNamespace::Enum, "sign"),
        (TypeNamespace::Ordinary, "chained_t"),
    ] {
        let want = plain.find_type(ns, name).expect(name);
        assert!(!want.is_empty(), "{name}");
        assert_eq!(odd.find_type(ns, name).expect(name), want, "{name}, indexed");
        assert_eq!(cold.find_type(ns, name).expect(name)[0], want[0], "{name}, cold");
    }
    assert!(cold.index().is_none());
}

/// `twice` is inlined into `main` and has its address taken, so gcc -O2 emits an
/// abstract instance and an out-of-line copy that is named only through
/// `DW_AT_abstract_origin`; `holder` is a struct beside them.
const INLINED: &str = r#"
struct holder { int a; long b; };
static int twice(int x) { return x * 2; }
int (*volatile fp)(int) = twice;
int main(int argc, char **argv) {
	struct holder h = { argc, (long)argv };
	return twice(argc) + fp(argc) + (int)h.b;
}
"#;

#[test]
fn definitions_named_through_their_abstract_origin() {
    let dir = scratch("origin");
    let c = dir.join("inlined.c");
    std::fs::write(&c, INLINED).expect("write");
    let bin = dir.join("inlined");
    gcc(&["-g", "-O2", "-fno-eliminate-unused-debug-types"], &bin, &[c]);
    let cold = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    let warm = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    warm.ensure_index().expect("index");
    let f = cold.functions("twice").expect("cold");
    assert!(cold.index().is_none(), "found through .symtab and .debug_aranges");
    assert_eq!(f, warm.functions("twice").expect("warm"));
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].decl.as_ref().map(|(_, line)| *line), Some(3), "{f:?}");
    assert!(warm.function_names().expect("names").iter().any(|n| n == "twice"));
    assert_eq!(
        cold.find_type(TypeNamespace::Struct, "holder").expect("cold"),
        warm.find_type(TypeNamespace::Struct, "holder").expect("warm")
    );
}

/// A type defined only in a late unit (the 24th of 24) is found through the name index,
/// built and cached by the first lookup that scans past the early units; the next process
/// loads it from the cache. The answer equals a scan of every unit (no cache), and a type
/// of the first unit is answered by the scan without building anything.
#[test]
fn a_late_type_is_found_through_the_lazily_cached_index() {
    let dir = scratch("late");
    let mut sources = Vec::new();
    for i in 0..24 {
        let src = dir.join(format!("u{i}.c"));
        let body = if i == 23 {
            "struct late_only { long a; char name[12]; struct late_only *next; };\nstruct late_only late_var;\n"
                .to_owned()
        } else {
            format!("struct common_{i} {{ int x; }};\nstruct common_{i} common_var_{i};\n")
        };
        let main = if i == 0 { "int main(void) { return 0; }\n" } else { "" };
        std::fs::write(&src, format!("{body}{main}")).expect("write");
        sources.push(src);
    }
    let bin = dir.join("late");
    gcc(&["-g", "-O0", "-Wl,--build-id=sha1"], &bin, &sources);
    let cache = dir.join("cache");

    let dw = fresh(&bin, &cache);
    assert!(dw.unit_count() >= 24, "{} units", dw.unit_count());
    let early = dw.find_type(TypeNamespace::Struct, "common_0").expect("common_0");
    assert_eq!(early.len(), 1);
    assert!(dw.index().is_none(), "an early type needs no index");
    let late = dw.find_type(TypeNamespace::Struct, "late_only").expect("late_only");
    assert!(dw.index().is_some(), "a late type goes through the index");
    let id = dw.elf().build_id_hex().expect("build-id");
    assert!(cache.join(format!("{id}.dwidx")).is_file(), "the index is cached");

    let again = fresh(&bin, &cache);
    let from_cache = again.find_type(TypeNamespace::Struct, "late_only").expect("late_only");
    let scanned = Dwarf::open(&bin).expect("open").with_cache_dir(None);
    let by_scan = scanned.find_type(TypeNamespace::Struct, "late_only").expect("late_only");
    assert!(scanned.index().is_none(), "without a cache, units are scanned");
    assert_eq!(late.len(), 1);
    assert_eq!(late, from_cache);
    assert_eq!(late, by_scan);
    assert_eq!(again.size_of(late[0]).expect("size"), Some(32));
}

/// The index keys declaration files by a hash of their paths, read from DWARF 5 line
/// headers directly (gimli builds far more than that needs): for every file of every
/// unit, the direct reader's path is gimli's. DWARF 4 headers go through gimli itself.
#[test]
fn line_table_paths_are_read_as_gimli_reads_them() {
    let dir = scratch("linetab");
    let mut sources = Vec::new();
    for i in 0..3 {
        let src = dir.join(format!("t{i}.c"));
        let main = if i == 0 { "int main(void) { return 0; }\n" } else { "" };
        std::fs::write(
            &src,
            format!(
                "#include <stdio.h>\n#include <sys/stat.h>\nstruct s{i} {{ FILE *f; struct stat st; }} v{i};\n{main}"
            ),
        )
        .expect("write");
        sources.push(src);
    }
    for (flags, version) in [(&["-gdwarf-5"][..], 5), (&["-gdwarf-4"][..], 4)] {
        let bin = dir.join(format!("linetab{version}"));
        gcc(&[&["-g", "-O0", "-fno-eliminate-unused-debug-types"][..], flags].concat(), &bin, &sources);
        let dw = Dwarf::open(&bin).expect("open").with_cache_dir(None);
        let compared = fevlint_dwarf::index::check_file_tables(&dw).expect("the same paths as gimli");
        if version == 5 {
            assert!(compared >= 3 * 10, "{compared} files compared");
        } else {
            assert_eq!(compared, 0, "DWARF 4 headers are left to gimli");
        }
    }
}

/// Compiles `sources` into `out` with gcc and `args`.
fn gcc(args: &[&str], out: &std::path::Path, sources: &[std::path::PathBuf]) {
    let run = std::process::Command::new("gcc").args(args).arg("-o").arg(out).args(sources).output().expect("gcc runs");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
}
