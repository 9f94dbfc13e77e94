//! What a kernel given as its image derives from it. The kprobe blacklist of a kernel
//! given without one (a `debian:` kernel's folder: its vmlinuz, config and the System.map
//! decoded from the image; or the bare vmlinuz), built
//! from the image as `populate_kprobe_blacklist` builds it at boot, against the fixtures'
//! `kprobe_blacklist` (computed offline by regenerate.sh from the same build's vmlinux and
//! System.map, and cross-checked there against the `-dbg` vmlinux's own symbols).

use fevlint_kernel::Kernel;
use fevlint_load::symbols::BlacklistEntry;
use std::path::PathBuf;

fn entries(k: &Kernel) -> Vec<BlacklistEntry> {
    k.kprobe_blacklist().expect("a blacklist").value.entries().to_vec()
}

/// A folder laid out as `kernel fetch debian:` lays one out: no blacklist, no BTF file.
fn debian_like(release: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("debian-like-{release}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let fixture = fevlint_testkit::kernel_fixture(release);
    std::os::unix::fs::symlink(fixture.join("vmlinuz"), dir.join("vmlinuz")).expect("link");
    for f in ["config", "System.map", "available_filter_functions"] {
        std::fs::write(dir.join(f), fevlint_testkit::kernel_fixture_file(release, f).1).expect("copy");
    }
    dir
}

fn same_as_the_fixture(release: &str) {
    let fixture = Kernel::open(&fevlint_testkit::kernel_fixture(release)).expect("fixture");
    let want = entries(&fixture);
    assert!(want.len() > 300, "{}", want.len());
    let dir = debian_like(release);
    let folder = Kernel::open(&dir).expect("debian-like folder");
    let got = entries(&folder);
    assert!(folder.kprobe_blacklist().is_some_and(|b| b.from.to_string().contains("_kprobe_blacklist")));
    assert_eq!(got.len(), want.len(), "entries");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    // The bare image: its own kallsyms tables give the symbols.
    let bare = Kernel::open(&dir.join("vmlinuz")).expect("vmlinuz");
    assert_eq!(entries(&bare), want, "from the image alone");
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("{release}: {} entries, as the fixture's", want.len());
}

#[test]
fn the_blacklist_of_6_12_is_built_from_its_image() {
    same_as_the_fixture("6.12.117+deb12-amd64");
}

#[test]
fn the_blacklist_of_6_1_is_built_from_its_image() {
    same_as_the_fixture("6.1.0-56-amd64");
}

/// A bare vmlinuz has no System.map: the image's kallsyms give the functions' places.
#[test]
fn a_bare_image_has_its_own_symbols() {
    let dir = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64");
    let bare = Kernel::open(&dir.join("vmlinuz")).expect("vmlinuz");
    let map = fevlint_testkit::system_map("6.12.117+deb12-amd64");
    let symbols = &bare.symbols().expect("symbols from the image's kallsyms").value;
    for f in ["vfs_read", "do_sys_openat2", "kernel_clone", "_stext", "_etext"] {
        assert_eq!(symbols.addr_of(f).map(|a| a.0), map.get(f).copied(), "{f}");
    }
    assert!(bare.code().is_some(), "image, symbols and tables: the code is there");
}

/// A bare vmlinuz has no ftrace list and no symbols at open: its mcount table named with
/// its own kallsyms (ENDBR64's 4 bytes allowed, from the `__ibt_endbr_seal` table) is the
/// fixture's `available_filter_functions`, line for line.
#[test]
fn a_bare_image_names_its_ftrace_list() {
    for release in ["6.12.117+deb12-amd64", "6.1.0-56-amd64"] {
        let dir = fevlint_testkit::kernel_fixture(release);
        let fixture = Kernel::open(&dir).expect("fixture");
        let want = &fixture.filter_functions().expect("the fixture's list").value;
        let bare = Kernel::open(&dir.join("vmlinuz")).expect("vmlinuz");
        assert!(!bare.notes.iter().any(|n| n.contains("traceability is not checked")), "{:?}", bare.notes);
        let got = &bare.filter_functions().expect("named from the image").value;
        assert_eq!((got.len(), got.invalid_lines()), (want.len(), want.invalid_lines()), "{release}");
        assert!(got.iter().eq(want.iter()), "{release}: the names differ");
        eprintln!("{release}: {} traceable functions, {} invalid lines", got.len(), got.invalid_lines());
    }
}
