//! A cache file truncated by another program while fevlint holds it must not kill
//! fevlint (SIGBUS on a shared mapping): what the cache hands out is fevlint's own (a
//! copy in memory, or a private unlinked copy for large entries), checked by its CRC-32.
//!
//! In-process, and alone in its binary: a SIGBUS would end the whole test process.

use fevlint_kernel::Kernel;
use fevlint_load::cache::Cache;
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
    // Every byte of the BTF the kernel holds is still readable, and lookups answer.
    let btf = &live.inputs().btf.as_ref().expect("BTF").value;
    let sum = btf.iter().fold(0u64, |a, &b| a.wrapping_add(u64::from(b)));
    assert!(sum > 0);
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
