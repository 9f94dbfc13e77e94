//! A cache file truncated by another program while fevlint holds it must not kill
//! fevlint (SIGBUS on a shared mapping): what the cache hands out is fevlint's own (a
//! copy in memory, or a private unlinked copy for large entries), checked by its CRC-32;
//! a kernel's BTF read by page from the cache (`cached_btf`) checks each page it reads,
//! and reads the BTF whole again (from the source when the cache entry is bad) rather
//! than hand out a byte it cannot vouch for.
//!
//! In-process, and alone in its binary: a SIGBUS would end the whole test process.

use fevlint_kernel::Kernel;
use fevlint_load::cache::Cache;
use fevlint_types::model::TypeSource;
use std::path::{Path, PathBuf};

fn fixture(release: &str) -> PathBuf {
    fevlint_testkit::kernel_fixture(release)
}

fn entries(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// What a check asks a kernel's types: layouts of structs and functions' prototypes.
fn answers(k: &Kernel) -> String {
    use fevlint_types::model::TypeNamespace;
    let types = k.types().expect("types");
    let mut out = String::new();
    for name in ["file", "task_struct", "sk_buff", "inode", "super_block"] {
        for t in types.find_type(TypeNamespace::Struct, name).expect("lookup") {
            out.push_str(&format!("{name}: {:?}\n", types.get(t)));
        }
    }
    for f in ["vfs_read", "tcp_sendmsg", "do_sys_openat2", "kmem_cache_alloc", "schedule"] {
        out.push_str(&format!("{f}: {:?}\n", k.function(f).map(|f| f.prototypes)));
    }
    out
}

fn scratch_cache(name: &str) -> (PathBuf, Cache) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("cache dir");
    let cache = Cache::new(Some(dir.clone()));
    (dir, cache)
}

/// A second run reads the BTF by page; a cache file cut short under it, or a page of it
/// changed before it is read, or its page checksums damaged: the same answers as a kernel
/// read without a cache, and the entry repaired for the next run.
#[test]
fn a_paged_btf_whose_cache_file_is_cut_or_changed_answers_the_same() {
    let kernel = fixture("6.1.0-56-amd64");
    let want = answers(&Kernel::open(&kernel).expect("open"));
    let (dir, cache) = scratch_cache("paged");
    let first = Kernel::open_cached(&kernel, &cache).expect("open");
    assert!(first.inputs().btf.is_some() && first.inputs().btf_paged.is_none(), "the first run reads whole");
    assert!(answers(&first) == want, "the answers differ from a kernel read without a cache");
    drop(first);
    let pages = entries(&dir, "btfpages1");
    assert_eq!(pages.len(), 1, "the first run keeps the BTF's page checksums and layout");
    let bins = entries(&dir, "bin");
    let bin = bins.iter().max_by_key(|p| p.metadata().map(|m| m.len()).unwrap_or(0)).expect("the BTF's entry").clone();
    let good = std::fs::read(&bin).expect("entry");
    let by_page = || {
        let k = Kernel::open_cached(&kernel, &cache).expect("open from the cache");
        assert!(k.inputs().btf_paged.is_some() && k.inputs().btf.is_none(), "read by page");
        k
    };
    // Cut short under a live reader that has read a few pages.
    let live = by_page();
    assert!(live.function("vfs_read").expect("lookup").exists());
    std::fs::OpenOptions::new().write(true).open(&bin).expect("open").set_len(4096 * 3).expect("truncate");
    assert!(answers(&live) == want, "the answers differ from a kernel read without a cache");
    drop(live);
    // The source decompressed again and cached again: the next run reads by page again.
    assert_eq!(std::fs::read(&bin).expect("entry"), good, "the entry is written again");
    let again = by_page();
    assert!(answers(&again) == want, "the answers differ from a kernel read without a cache");
    drop(again);
    // The size of `struct file` changed in place (same length): that page is refused.
    let whole = fevlint_btf::Btf::parse("x", good.clone()).expect("parse");
    let file = whole.find_type(fevlint_types::model::TypeNamespace::Struct, "file").expect("lookup")[0];
    let at = whole.raw(whole.id_of(file).expect("id")).expect("raw").offset + 8;
    let mut bad = good.clone();
    bad[at] ^= 0x55;
    std::fs::write(&bin, &bad).expect("write");
    let changed = by_page();
    assert!(answers(&changed) == want, "the answers differ from a kernel read without a cache");
    // Every page: none may come from the changed one.
    let btf = changed.btf().expect("BTF");
    for id in whole.own_ids().step_by(7) {
        assert_eq!(btf.raw(id).expect("raw"), whole.raw(id).expect("raw"));
        assert_eq!(btf.name(id).expect("name"), whole.name(id).expect("name"));
    }
    drop(changed);
    // The page checksums and layout damaged: read whole, and kept again.
    let mut stored = std::fs::read(&pages[0]).expect("entry");
    stored[10] ^= 1;
    std::fs::write(&pages[0], &stored).expect("write");
    let k = Kernel::open_cached(&kernel, &cache).expect("open");
    assert!(k.inputs().btf.is_some(), "a damaged entry is not used");
    assert!(answers(&k) == want, "the answers differ from a kernel read without a cache");
    drop(k);
    let k = by_page();
    assert!(answers(&k) == want, "the answers differ from a kernel read without a cache");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_cache_file_truncated_under_a_live_kernel_does_not_crash() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cache-truncated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("cache dir");
    let cache = Cache::new(Some(dir.clone()));
    let kernel = fixture("6.12.117+deb12-amd64");
    // A first open fills the cache (the decompressed BTF, its name indexes).
    let first = Kernel::open_cached(&kernel, &cache).expect("open");
    assert!(first.function("vfs_read").expect("lookup").exists());
    // The BTF as the first run read it whole.
    let btf = first.inputs().btf.as_ref().expect("BTF").value.to_vec();
    drop(first);
    assert!(!entries(&dir, "bin").is_empty(), "nothing cached in {}", dir.display());
    // A second open is served from the cache; then another program truncates every
    // cache file while the kernel is live.
    let live = Kernel::open_cached(&kernel, &cache).expect("open from the cache");
    // The ftrace list's and blacklist's tables (`*.ftrace-tab2`, `*.kpbl-tab2`) opened,
    // a few of their pages read, before they are cut.
    assert!(live.function("vfs_write").expect("lookup").exists());
    let tables = entries(&dir, "ftrace-tab2").into_iter().chain(entries(&dir, "kpbl-tab2"));
    assert_eq!(tables.clone().count(), 2);
    for p in entries(&dir, "bin").into_iter().chain(entries(&dir, "btfidx2")).chain(tables) {
        std::fs::OpenOptions::new().write(true).open(&p).expect("open cache file").set_len(0).expect("truncate");
    }
    // Every type of the BTF the kernel holds (read by page) is still readable, and
    // lookups answer.
    let whole = fevlint_btf::Btf::parse("x", btf).expect("parse");
    let live_btf = live.btf().expect("BTF");
    for id in whole.own_ids() {
        assert_eq!(live_btf.raw(id).expect("raw"), whole.raw(id).expect("raw"));
    }
    assert!(live.function("vfs_read").expect("lookup").exists());
    assert!(live.function("tcp_sendmsg").expect("lookup").exists());
    let fresh = Kernel::open(&kernel).expect("open without the cache");
    for name in ["zap_page_range_single", "do_sys_openat2", "kprobe_int3_handler", "a_name_no_kernel_has"] {
        let (a, b) = (live.function(name).expect("lookup"), fresh.function(name).expect("lookup"));
        assert_eq!((a.trace, a.clones, a.kprobe_blacklisted), (b.trace, b.clones, b.kprobe_blacklisted), "{name}");
    }
    // The truncated entries are noticed by the next open, which decompresses again.
    let again = Kernel::open_cached(&kernel, &cache).expect("open after truncation");
    assert!(again.function("vfs_read").expect("lookup").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
