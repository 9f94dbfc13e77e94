//! `fevlint_kernel::open::open` on every fixture folder, single files, a BTFHub tarball, split
//! module BTF and the running kernel.

use std::io::Write;
use std::path::{Path, PathBuf};

use fevlint_kernel::open::{open, open_with, ArchSource, Container, ImagePolicy, OpenOptions};
use fevlint_load::symbols::SymbolFormat;
use fevlint_load::{Codec, LoadError};
use fevlint_types::Arch;

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fevlint-open-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

#[test]
fn debian_amd64_folders() {
    for (kernel, btf_len, aff_lines, bl) in
        [("6.1.0-47-amd64", 4_350_808, 38_162, 425), ("6.1.0-56-amd64", 4_359_789, 38_252, 427)]
    {
        let k = open(&fevlint_testkit::kernel_fixture(kernel)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(k.name, kernel);
        assert_eq!(k.arch, Some((Arch::X86_64, ArchSource::Config)));
        let btf = k.btf.as_ref().expect("btf");
        assert_eq!(btf.value.len(), btf_len);
        assert_eq!(&btf.value[..2], &[0x9f, 0xeb]);
        assert_eq!(btf.from.codec, Some(Codec::Zstd));
        assert_eq!(btf.from.container, Container::File);
        assert!(btf.from.path.ends_with("vmlinux.btf.zst"));
        let syms = k.symbols.as_ref().expect("System.map");
        assert_eq!(syms.value.format(), SymbolFormat::SystemMap);
        let ff = k.filter_functions.as_ref().expect("aff");
        assert_eq!(ff.value.len() + ff.value.invalid_lines(), aff_lines);
        assert_eq!(k.kprobe_blacklist.as_ref().map(|b| b.value.len()), Some(bl));
        assert!(k.config.is_some());
        assert!(k.elf.is_none());
    }
}

#[test]
fn folder_6_12_skips_its_vmlinuz_unless_asked() {
    let dir = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64");
    let k = open(&dir).expect("opens");
    assert!(k.elf.is_none());
    // Left for the questions that need code (instruction boundaries), not read at open.
    assert!(k.deferred.image.as_ref().is_some_and(|p| p.ends_with("vmlinuz")), "{:?}", k.deferred);
    assert_eq!(k.btf.as_ref().map(|b| b.value.len()), Some(4_918_287));

    let opts = OpenOptions { image: ImagePolicy::Always, ..OpenOptions::default() };
    let k = open_with(&dir, &opts).expect("opens");
    let elf = k.elf.as_ref().expect("vmlinuz read");
    assert_eq!(elf.from.container, Container::BzImage);
    assert_eq!(elf.from.codec, Some(Codec::Zstd));
    assert_eq!(k.arch, Some((Arch::X86_64, ArchSource::ElfHeader)));
    // The folder's own BTF file wins over the image's section; they are equal anyway.
    assert!(k.btf.as_ref().is_some_and(|b| b.from.path.ends_with("vmlinux.btf.zst")));
    assert!(*k.btf.as_ref().expect("btf").value == *elf.value.btf().expect(".BTF"));
}

#[test]
fn i386_folder_has_no_btf() {
    let k = open(&fevlint_testkit::kernel_fixture("6.1.0-50-686-pae")).expect("opens");
    assert!(k.btf.is_none());
    assert_eq!(k.arch, Some((Arch::X86_32, ArchSource::Config)));
    assert!(k.symbols.is_some() && k.filter_functions.is_some());
}

#[test]
fn running_snapshot_folder_6_18() {
    let k = open(&fevlint_testkit::kernel_fixture("6.18.44-fc-v769")).expect("opens");
    assert_eq!(k.btf.as_ref().map(|b| b.value.len()), Some(5_519_912));
    let syms = k.symbols.as_ref().expect("kallsyms");
    assert_eq!(syms.value.format(), SymbolFormat::Kallsyms);
    assert_eq!(syms.value.len(), 122_159);
    assert!(k.filter_functions.is_none());
    assert!(k.kprobe_blacklist.is_none());
    assert_eq!(k.arch.map(|a| a.0), Some(Arch::X86_64));
}

#[test]
fn single_files() {
    let dir = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64");
    let k = open(&dir.join("vmlinuz")).expect("vmlinuz");
    assert_eq!(k.arch, Some((Arch::X86_64, ArchSource::ElfHeader)));
    assert_eq!(k.name, "vmlinuz (build-id 764949bbe8b7)");
    let btf = k.btf.as_ref().expect(".BTF");
    assert!(matches!(btf.from.container, Container::ElfSection(_)));
    assert_eq!(btf.value.len(), 4_918_287);

    let k = open(&dir.join("vmlinux.btf.zst")).expect("btf");
    assert_eq!(k.btf.as_ref().and_then(|b| b.from.codec), Some(Codec::Zstd));
    assert!(k.arch.is_none());

    // Plain, uncompressed BTF and an uncompressed ELF vmlinux.
    let tmp = tempdir("single");
    let (_, btf) = fevlint_testkit::kernel_fixture_file("6.1.0-56-amd64", "vmlinux.btf");
    std::fs::write(tmp.join("vmlinux.btf"), &btf).expect("write");
    let k = open(&tmp.join("vmlinux.btf")).expect("raw btf");
    assert_eq!(k.btf.as_ref().map(|b| b.from.codec), Some(None));
    assert_eq!(*k.btf.as_ref().expect("btf").value, *btf);
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn folder_with_image_and_system_map_computes_the_ftrace_list() {
    let src = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64");
    let tmp = tempdir("compute");
    for f in ["vmlinuz", "System.map.zst", "config.zst"] {
        std::fs::copy(src.join(f), tmp.join(f)).expect("copy");
    }
    let k = open(&tmp).expect("opens");
    assert!(k.elf.is_some(), "image needed: no BTF file");
    let ff = k.filter_functions.as_ref().expect("computed");
    assert_eq!(ff.from.container, Container::Computed("computed from the mcount table"));
    assert_eq!(ff.value.len(), 42_862);
    assert_eq!(ff.value.distinct(), 42_514);
    assert!(k.btf.as_ref().is_some_and(|b| matches!(b.from.container, Container::ElfSection(_))));
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn btfhub_tarball_is_read_in_memory() {
    let (_, btf) = fevlint_testkit::kernel_fixture_file("6.1.0-56-amd64", "vmlinux.btf");
    let mut tar = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(btf.len() as u64);
    h.set_mode(0o644);
    h.set_cksum();
    tar.append_data(&mut h, "6.1.0-56-amd64.btf", &btf[..]).expect("tar");
    let tar = tar.into_inner().expect("tar");
    let mut xz = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(1)).expect("xz");
    xz.write_all(&tar).expect("xz");
    let xz = xz.finish().expect("xz");

    let tmp = tempdir("btfhub");
    let p = tmp.join("6.1.0-56-amd64.btf.tar.xz");
    std::fs::write(&p, xz).expect("write");
    let k = open(&p).expect("opens");
    let b = k.btf.as_ref().expect("btf");
    assert_eq!(b.from.codec, Some(Codec::Xz));
    assert_eq!(b.from.container, Container::TarMember("6.1.0-56-amd64.btf".into()));
    assert_eq!(*b.value, *btf);
    // No file was extracted next to it.
    assert_eq!(std::fs::read_dir(&tmp).expect("dir").count(), 1);

    // A folder holding only the tarball works too.
    let k = open(&tmp).expect("folder");
    assert!(k.btf.is_some());
    std::fs::remove_dir_all(&tmp).ok();
}

#[test]
fn module_btf_on_top() {
    let dir = fevlint_testkit::kernel_fixture("6.1.0-56-amd64");
    let mut k = open(&dir.join("vmlinux.btf.zst")).expect("opens");
    // Any BTF blob stands in for a module's split BTF here: what is checked is the
    // reading, not the split semantics (that is the BTF parser's).
    k.add_module_btf(
        &fevlint_testkit::kernel_fixture("6.1.0-47-amd64").join("vmlinux.btf.zst"),
        &OpenOptions::default(),
    )
    .expect("module btf");
    assert_eq!(k.module_btf.len(), 1);
    assert_eq!(k.module_btf[0].from.codec, Some(Codec::Zstd));
    let err = k.add_module_btf(&dir.join("config.zst"), &OpenOptions::default()).expect_err("not btf");
    assert!(matches!(err, LoadError::Unrecognized { .. }), "{err}");
}

#[test]
fn the_running_kernel() {
    let k = open(Path::new("running")).expect("running never fails as a whole");
    assert!(!k.name.is_empty());
    if std::fs::read("/sys/kernel/btf/vmlinux").is_ok() {
        let b = k.btf.as_ref().expect("btf");
        assert_eq!(&b.value[..2], &[0x9f, 0xeb]);
        assert_eq!(b.from.path, Path::new("/sys/kernel/btf/vmlinux"));
    } else {
        assert!(k.notes.iter().any(|n| n.starts_with("no BTF")), "{:?}", k.notes);
    }
    if std::fs::read("/proc/kallsyms").is_ok() {
        assert!(k.symbols.as_ref().is_some_and(|s| !s.value.is_empty()));
    }
}

#[test]
fn unusable_inputs_are_errors() {
    let tmp = tempdir("bad");
    let err = open(&tmp).expect_err("empty folder");
    assert!(matches!(err, LoadError::Unrecognized { .. }), "{err}");
    std::fs::write(tmp.join("random"), b"random bytes that are nothing").expect("write");
    let err = open(&tmp.join("random")).expect_err("random");
    assert!(err.to_string().contains("random"), "{err}");
    let err = open(&tmp.join("missing")).expect_err("missing");
    assert!(matches!(err, LoadError::Io { .. }), "{err}");
    std::fs::remove_dir_all(&tmp).ok();
}

/// Whether a symbol map can name modules is answered without reading a map left for
/// later: a System.map cannot (B611 used to parse 6.12's 7 MB map to learn so), kallsyms
/// can, and once read, kallsyms says whether it has any `[module]` entry.
#[test]
fn only_kallsyms_can_put_a_symbol_in_a_module() {
    let dir = std::env::temp_dir().join(format!("fevlint-symbols-modules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let folder = |name: &str, map: &str, text: &str| {
        let k = dir.join(name);
        std::fs::create_dir_all(&k).expect("kernel folder");
        for file in ["vmlinux.btf", "available_filter_functions"] {
            let bytes = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", file).1;
            std::fs::write(k.join(file), bytes).expect("copy");
        }
        std::fs::write(k.join(map), text).expect("symbol map");
        fevlint_kernel::Kernel::open(&k).expect("opens")
    };
    // A malformed System.map: reading it would be an error, and asking does not read it.
    let k = folder("system-map", "System.map", "not a symbol line\n");
    assert!(!k.symbols_name_modules());
    assert_eq!(k.symbols_error(), None, "the map was read");
    assert!(k.symbols().is_none() && k.symbols_error().is_some(), "reading it fails");
    let k = folder("kallsyms", "kallsyms", "ffffffff81000000 T vfs_read\nffffffffc0000000 t md_run\t[md_mod]\n");
    assert!(k.symbols_name_modules());
    assert_eq!(k.symbols().map(|s| s.value.modules().to_vec()), Some(vec!["md_mod".to_owned()]));
    assert!(k.symbols_name_modules());
    let k = folder("kallsyms-vmlinux", "kallsyms", "ffffffff81000000 T vfs_read\n");
    assert!(k.symbols().is_some());
    assert!(!k.symbols_name_modules(), "a kallsyms of the image alone names no module");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A fresh scratch directory (removed first) holding `kernel/` with 6.12's BTF and ftrace
/// list copied from the fixtures: `(the directory, the kernel folder)`.
fn fresh_6_12_folder(tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("fevlint-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let k = dir.join("kernel");
    std::fs::create_dir_all(&k).expect("kernel folder");
    for file in ["vmlinux.btf", "available_filter_functions"] {
        let bytes = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", file).1;
        std::fs::write(k.join(file), bytes).expect("copy");
    }
    (dir, k)
}

/// The module a kallsyms puts a symbol in, from the map, then from the cache without
/// reading the map (a later run: the map replaced by one that cannot be read, same path,
/// length and time, would be an error if it were read).
#[test]
fn a_symbols_module_is_kept_in_the_cache() {
    let (dir, k) = fresh_6_12_folder("module-symbols");
    let map = "ffffffff81000000 T vfs_read\nffffffffc0000000 t md_run\t[md_mod]\nffffffffc0001000 t kvm_exit\t[kvm]\n";
    std::fs::write(k.join("kallsyms"), map).expect("kallsyms");
    let cache = fevlint_load::cache::Cache::new(Some(dir.join("cache")));
    let open = || fevlint_kernel::Kernel::open_cached(&k, &cache).expect("opens");
    let first = open();
    assert_eq!(first.symbol_module("md_run"), Some("md_mod"));
    assert_eq!(first.symbol_module("kvm_exit"), Some("kvm"));
    assert_eq!(first.symbol_module("vfs_read"), None);
    assert!(first.symbols_have_modules());
    let time = std::fs::metadata(k.join("kallsyms")).and_then(|m| m.modified()).expect("time");
    let broken = map.replace("ffffffff81000000 T", "not-an-address!! T");
    assert_eq!(broken.len(), map.len());
    std::fs::write(k.join("kallsyms"), broken).expect("same length");
    std::fs::File::options().write(true).open(k.join("kallsyms")).and_then(|f| f.set_modified(time)).expect("time");
    let second = open();
    assert_eq!(second.symbol_module("kvm_exit"), Some("kvm"));
    assert_eq!(second.symbol_module("md_run"), Some("md_mod"));
    assert_eq!(second.symbols_error(), None, "the map was read");
    assert!(second.symbols().is_none() && second.symbols_error().is_some(), "reading the map fails");
    let _ = std::fs::remove_dir_all(&dir);
}

/// What a kernel folder's text files say, as the rules ask it (see
/// [`a_kernels_text_facts_are_answered_from_tables_in_the_cache`]).
fn text_facts(k: &fevlint_kernel::Kernel, names: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for n in names {
        let f = k.function(n).expect("lookup");
        out.push(format!("{n}: {:?} {:?} {:?} {}", f.trace, f.trace_from, f.clones, f.kprobe_blacklisted));
        out.push(format!("{n}: module {:?}", k.ftrace_module(n)));
    }
    out.push(format!("modules {}", k.ftrace_names_modules()));
    for c in ["MODULES", "CONFIG_FPROBE", "CONFIG_HZ", "CONFIG_CC_VERSION_TEXT", "CONFIG_NO_SUCH", "X86_KERNEL_IBT"] {
        out.push(format!("{c}: {:?} {:?}", k.config_value(c), k.config_enabled(c)));
    }
    out.push(format!("release {:?}", k.config_release()));
    for s in ["sched", "syscalls", "no_such_system", ""] {
        out.push(format!("system {s}: {:?}", k.trace_system_exists(s)));
    }
    for e in ["sched_switch", "sys_enter_openat", "no_such_event", ""] {
        out.push(format!("event {e}: {:?}", k.trace_event_systems(e)));
    }
    out
}

/// The ftrace list, config, kprobe blacklist and event list of a folder are answered, from
/// a later run on, from tables kept in the cache (`*.ftrace-tab2`, `*.config-tab2`,
/// `*.kpbl-tab2`, `*.events-tab2`) without reading the files: the files replaced by ones
/// that cannot be read (same path, length and time) answer the same, and
/// `load_deferred` does not read them. A damaged table is read around (the file answers)
/// and stored again; every answer equals the one the files give with no cache.
#[test]
fn a_kernels_text_facts_are_answered_from_tables_in_the_cache() {
    let dir = std::env::temp_dir().join(format!("fevlint-text-tables-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let k = dir.join("kernel");
    std::fs::create_dir_all(&k).expect("kernel folder");
    let files = ["vmlinux.btf", "available_filter_functions", "config", "kprobe_blacklist", "available_events"];
    let mut originals = Vec::new();
    for file in files {
        let mut bytes = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", file).1;
        if file == "available_filter_functions" {
            bytes.extend_from_slice(b"md_run [md_mod]\nmd_run [md_mod2]\n");
        }
        std::fs::write(k.join(file), &bytes).expect("copy");
        originals.push((file, bytes, std::fs::metadata(k.join(file)).and_then(|m| m.modified()).expect("time")));
    }
    let put = |file: &str, bytes: &[u8], time: std::time::SystemTime| {
        std::fs::write(k.join(file), bytes).expect("write");
        std::fs::File::options().write(true).open(k.join(file)).and_then(|f| f.set_modified(time)).expect("time");
    };
    // Names of every kind: traceable, several functions of one name, only clones
    // traceable, blacklisted, in a module, unknown.
    let plain = fevlint_kernel::Kernel::open(&k).expect("opens");
    let ff = &plain.filter_functions().expect("ftrace list").value;
    let mut names: Vec<String> = ["vfs_read", "md_run", "no_such_function", ""].map(str::to_owned).to_vec();
    names.extend(ff.iter().map(|(n, _)| n).find(|n| ff.count(n) > 1).map(str::to_owned));
    let only_clones = ff.dotted().map(|n| fevlint_load::symbols::clone_base(n).0).find(|b| !ff.contains(b));
    names.extend(only_clones.map(str::to_owned));
    names.extend(plain.kprobe_blacklist().expect("blacklist").value.entries().first().map(|e| e.name.clone()));
    assert_eq!(names.len(), 7, "{names:?}");
    let expected = text_facts(&plain, &names);
    assert!(expected.iter().any(|l| l.contains("OnlyClones")) && expected.iter().any(|l| l.ends_with(" true")));

    let cache = fevlint_load::cache::Cache::new(Some(dir.join("cache")));
    let open = || fevlint_kernel::Kernel::open_cached(&k, &cache).expect("opens");
    let first = open();
    assert_eq!(first.load_deferred(), Ok(()));
    assert_eq!(text_facts(&first, &names), expected, "first run (the files read)");
    drop(first);
    let tables = || {
        let mut t: Vec<PathBuf> = std::fs::read_dir(dir.join("cache"))
            .expect("cache")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e.to_string_lossy().ends_with("-tab2")))
            .collect();
        t.sort();
        t
    };
    assert_eq!(tables().len(), 4, "{:?}", tables());
    // The whole ftrace list kept beside its table would answer a whole read: removed.
    for e in std::fs::read_dir(dir.join("cache")).expect("cache").flatten() {
        if e.path().extension().is_some_and(|x| x == "ftrace1") {
            std::fs::remove_file(e.path()).expect("remove");
        }
    }
    for (file, bytes, time) in &originals[1..] {
        put(file, &vec![b'\n'; bytes.len() - 1].into_iter().chain(*b"!").collect::<Vec<u8>>(), *time);
    }
    let second = open();
    assert_eq!(second.load_deferred(), Ok(()), "a file kept as a table is not read again");
    assert_eq!(text_facts(&second, &names), expected, "second run (the tables)");
    assert!(second.config().is_none() && second.deferred_error().is_some(), "reading the config fails");

    // Damaged tables (a byte of every page but the first changed: each fails its
    // checksum) are read around, from the files, and stored again.
    for (file, bytes, time) in &originals[1..] {
        put(file, bytes, *time);
    }
    for t in tables() {
        let mut b = std::fs::read(&t).expect("table");
        let at = b.len() - 24;
        let len = u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes")) as usize;
        assert!(len > 4096, "{} has one page", t.display());
        for page in (4096..len).step_by(4096) {
            b[page] ^= 0x20;
        }
        std::fs::write(&t, b).expect("damage");
    }
    let third = open();
    assert_eq!(text_facts(&third, &names), expected, "damaged tables");
    drop(third);
    for (file, bytes, time) in &originals[1..] {
        put(file, &vec![b'\n'; bytes.len() - 1].into_iter().chain(*b"!").collect::<Vec<u8>>(), *time);
    }
    let fourth = open();
    assert_eq!(text_facts(&fourth, &names), expected, "the tables stored again");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Whether the symbol map has a symbol of any type (a typeless `__ksym` extern, B612):
/// from the map, then from the set of its names kept in the cache (`*.allsyms1`) without
/// reading the map (replaced by one that cannot be read, same path, length and time); a
/// damaged set is read around and stored again.
#[test]
fn a_symbol_of_any_type_is_found_from_the_cache() {
    let (dir, k) = fresh_6_12_folder("all-symbols");
    let mut map = String::new();
    for i in 0..3000 {
        map.push_str(&format!("ffffffff8{i:07x} T text_{i:04}\nffffffff9{i:07x} D data_{i:04}\n"));
    }
    std::fs::write(k.join("System.map"), &map).expect("System.map");
    let time = std::fs::metadata(k.join("System.map")).and_then(|m| m.modified()).expect("time");
    let put = |text: &str| {
        std::fs::write(k.join("System.map"), text).expect("write");
        std::fs::File::options()
            .write(true)
            .open(k.join("System.map"))
            .and_then(|f| f.set_modified(time))
            .expect("time");
    };
    let cache = fevlint_load::cache::Cache::new(Some(dir.join("cache")));
    let open = || fevlint_kernel::Kernel::open_cached(&k, &cache).expect("opens");
    let names = ["data_0000", "data_2999", "text_1500", "data_3000", "", "zzz"];
    let expected = [Some(true), Some(true), Some(true), Some(false), Some(false), Some(false)];
    let answers = |k: &fevlint_kernel::Kernel| names.map(|n| k.has_symbol(n));
    // The names with a prefix (B611's `kprobe.multi` patterns), sorted.
    let prefixed = |k: &fevlint_kernel::Kernel| {
        ["data_299", "text_0001", "t", "nothing", ""].map(|p| k.symbols_with_prefix(p).map(|v| (v.len(), v.concat())))
    };
    let ten: String = (2990..3000).map(|i| format!("data_{i}")).collect();
    let want = prefixed(&open());
    assert_eq!(want[0], Some((10, ten)));
    assert_eq!(want[1].as_ref().map(|w| w.0), Some(1));
    assert_eq!(want[2].as_ref().map(|w| w.0), Some(3000));
    assert_eq!(want[3], Some((0, String::new())));
    assert_eq!(want[4].as_ref().map(|w| w.0), Some(6000));
    assert_eq!(prefixed(&open()), want, "from the set");
    // Past the first lookups the set is searched whole, in memory: the same names.
    let many = open();
    for _ in 0..10 {
        assert_eq!(prefixed(&many), want, "from the set read whole");
    }
    assert_eq!(answers(&open()), expected, "from the map");
    put(&map.replace("ffffffff8", "not-a-hex"));
    let second = open();
    assert_eq!(answers(&second), expected, "from the set");
    assert_eq!(prefixed(&second), want, "from the set, the map unreadable");
    assert_eq!(second.symbols_error(), None, "the map was read");
    assert!(second.symbols().is_none(), "reading the map fails");
    put(&map);
    let set = std::fs::read_dir(dir.join("cache"))
        .expect("cache")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "allsyms1"))
        .expect("the set is stored");
    let good = std::fs::read(&set).expect("set");
    let mut bad = good.clone();
    for page in (0..bad.len() - 4096).step_by(4096) {
        bad[page + 100] ^= 0x20;
    }
    std::fs::write(&set, &bad).expect("damage");
    assert_eq!(answers(&open()), expected, "a damaged set");
    assert_eq!(std::fs::read(&set).expect("set"), good, "stored again");
    let _ = std::fs::remove_dir_all(&dir);
}
