//! The indexes a kernel derives and keeps in the cache (its function names with their
//! similarity index, `*.names`, and the similar names it gave, `*.similar1`; the text
//! symbols of its symbol map, `*.textsyms2`; the parsed ftrace list, `*.ftrace1`; the
//! BTF's name indexes by namespace, `*.btfidx2`; the sorted struct, union and typedef
//! names an offset past a struct's end is looked up in, `*.btfnames1`; the page checksums
//! and type layout a cached BTF is read by page with, `*.btfpages1`; the tables of the
//! ftrace list, config and kprobe blacklist searched in place, `*.ftrace-tab2`,
//! `*.config-tab2`, `*.kpbl-tab2`): a run that builds them, a run that maps them and a run
//! without any cache say the same, and a damaged entry is noticed, not believed, and
//! written again (the text-symbol set and the name indexes, read a page at a time, when a
//! lookup reads the damaged page).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Misspelt, vanished and renamed functions: K201 asks for similar names (the names
/// index) and for text symbols (the symbol map) on both kernels; an offset past the end
/// of `struct file` is looked for in the structs that embed it (the struct names).
const SCRIPT: &str = "vfs_raed(x64 file)\nkmalloc_noprof(u64 size)\ntcp_sendmgs(x64 sk)\n\
                      __x64_sys_openat(x64 regs)\nnot_a_function_at_all(x64 a)\nvfs_read(x64 file)\n\
                      vfs_read(x64 file | u64 file+4000[0])\n";

fn check(dir: &Path, cache: Option<&Path>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fevlint"));
    c.args(["check", "--format", "json", "--color", "never"]);
    for k in ["6.1.0-47-amd64", "6.18.44-fc-v769"] {
        c.arg("--kernel").arg(root().join("fixtures/kernels").join(k));
    }
    c.arg(dir.join("s.fev")).current_dir(dir);
    match cache {
        Some(p) => c.env("FEVLINT_CACHE_DIR", p).env_remove("FEVLINT_NO_CACHE"),
        None => c.env("FEVLINT_NO_CACHE", "1"),
    };
    let out = c.output().expect("run fevlint");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// The entries read whole.
const WHOLE: &[&str] = &["names", "similar1", "textsyms2", "ftrace1", "btfidx2", "btfnames1", "btfpages1"];
/// The text facts' tables (`kernel/src/paged.rs`), read a page at a time.
const TABLES: &[&str] = &["ftrace-tab2", "config-tab2", "kpbl-tab2"];

fn derived(cache: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(cache)
        .expect("cache dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| TABLES.iter().chain(WHOLE).any(|k| e == *k)))
        .collect();
    v.sort();
    v
}

#[test]
fn derived_indexes_answer_as_a_fresh_build_and_damage_is_rebuilt() {
    let dir = std::env::temp_dir().join(format!("fevlint-derived-{}", std::process::id()));
    let cache = dir.join("cache");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("s.fev"), SCRIPT).expect("write script");

    let uncached = check(&dir, None);
    assert!(uncached.contains("similar names: `vfs_read`"), "{uncached}");
    let cold = check(&dir, Some(&cache));
    assert_eq!(cold, uncached, "building the indexes changes nothing");
    let files = derived(&cache);
    let kinds = |ext: &str| files.iter().filter(|p| p.extension().is_some_and(|e| e == ext)).count();
    // Each folder's symbol map (6.1's System.map; 6.18's kallsyms: its folder has no
    // ftrace list and no image to compute one from) is left for K201, which maps its
    // text-symbol set.
    assert_eq!((kinds("names"), kinds("textsyms2")), (2, 2), "{files:?}");
    // The similar names each kernel gave, remembered for the next run.
    assert_eq!(kinds("similar1"), 2, "{files:?}");
    // 6.1's ftrace list, parsed once (6.18's folder has none), and the tables of its
    // ftrace list, config and blacklist (6.18's config is read at open: it has no table).
    assert_eq!(kinds("ftrace1"), 1, "{files:?}");
    for table in TABLES {
        assert_eq!(kinds(table), 1, "{table}: {files:?}");
    }
    // At least the function index of each kernel's BTF.
    assert!(kinds("btfidx2") >= 2, "{files:?}");
    // The struct names of a kernel's BTF, listed for the family of `struct file` that
    // `file+4000` is looked for in: on 6.18, whose `struct file` starts with `f_lock`
    // (a named integer at its end, the family's tag); 6.1's starts with an anonymous
    // union, no tag, so no family to list (ff28c46).
    assert!(kinds("btfnames1") >= 1, "{files:?}");
    // What lets each kernel's cached BTF be read by page by the next run.
    assert_eq!(kinds("btfpages1"), 2, "{files:?}");
    let stamps: Vec<_> =
        files.iter().map(|p| std::fs::metadata(p).and_then(|m| m.modified()).expect("mtime")).collect();
    assert_eq!(check(&dir, Some(&cache)), uncached, "mapped from the cache");
    let again: Vec<_> = files.iter().map(|p| std::fs::metadata(p).and_then(|m| m.modified()).expect("mtime")).collect();
    assert_eq!(again, stamps, "a warm run reads the entries, it does not write them");
    // The remembered similar names answer a warm run without the names tables: removed,
    // they are not built again.
    let names: Vec<&PathBuf> = files.iter().filter(|p| p.extension().is_some_and(|e| e == "names")).collect();
    let tables: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).expect("read")).collect();
    for p in &names {
        std::fs::remove_file(p).expect("remove");
    }
    assert_eq!(check(&dir, Some(&cache)), uncached, "answered by the remembered similar names");
    assert!(names.iter().all(|p| !p.exists()), "the names tables were built again");
    for (p, t) in names.iter().zip(&tables) {
        std::fs::write(p, t).expect("restore");
    }

    // Damage, each kind on some entry over two rounds: a flipped byte in the middle, a
    // cut, an emptied file, a foreign file.
    let good: Vec<Vec<u8>> = files.iter().map(|p| std::fs::read(p).expect("read")).collect();
    for round in 0..2 {
        for (i, p) in files.iter().enumerate() {
            let mut bytes = good[i].clone();
            match (i + 2 * round) % 4 {
                0 => {
                    let mid = bytes.len() / 2;
                    bytes[mid] ^= 0x5a;
                }
                1 => bytes.truncate(bytes.len() - 7),
                2 => bytes.clear(),
                _ => bytes = b"FEVNAME1 not a table at all".to_vec(),
            }
            std::fs::write(p, bytes).expect("damage");
        }
        assert_eq!(check(&dir, Some(&cache)), uncached, "damaged entries are not believed");
        for (i, p) in files.iter().enumerate() {
            // The text-symbol set and the BTF name indexes are read a page at a time, each
            // page checked by its CRC-32 (`Cache::open_paged`): a flipped byte in a page no
            // lookup reads is never handed out, and the entry is written again only once a
            // lookup meets it.
            // So are the tables; and the whole ftrace list is read (and written again) only
            // when something needs the whole list, which the tables now answer for.
            let ext = |k: &str| p.extension().is_some_and(|e| e == k);
            let paged_flip = (i + 2 * round) % 4 == 0 && ["textsyms2", "btfidx2"].iter().chain(TABLES).any(|k| ext(k));
            if (paged_flip || ext("ftrace1")) && std::fs::read(p).expect("read") != good[i] {
                std::fs::write(p, &good[i]).expect("restore");
                continue;
            }
            assert_eq!(std::fs::read(p).expect("read"), good[i], "{} is written again", p.display());
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `FEVLINT_CACHE_DIR=` (set but empty) means unset, as in the XDG convention: the cache
/// goes under `$HOME/.cache/fevlint`, and nothing is written into the working directory.
#[test]
fn an_empty_cache_variable_means_unset() {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("empty-cache-var-{}", std::process::id()));
    let (work, home) = (base.join("work"), base.join("home"));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&work).expect("work dir");
    std::fs::create_dir_all(&home).expect("home dir");
    std::fs::write(work.join("s.fev"), "vfs_read(x64 file)\n").expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["check", "--kernel"])
        .arg(root().join("fixtures/kernels/6.12.117+deb12-amd64"))
        .arg("s.fev")
        .current_dir(&work)
        .env("FEVLINT_CACHE_DIR", "")
        .env("XDG_CACHE_HOME", "")
        .env("HOME", &home)
        .env_remove("FEVLINT_NO_CACHE")
        .output()
        .expect("run fevlint");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let left: Vec<_> = std::fs::read_dir(&work).expect("work").flatten().map(|e| e.file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("s.fev")], "written into the working directory");
    let cached = std::fs::read_dir(home.join(".cache/fevlint")).map(|d| d.count()).unwrap_or(0);
    assert!(cached > 0, "nothing cached under $HOME/.cache/fevlint");
    let _ = std::fs::remove_dir_all(&base);
}
