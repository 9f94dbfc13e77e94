//! Text inputs (System.map, kallsyms, ftrace lists, kprobe blacklist, config) on the
//! real fixture files, with the counts their SOURCE.md records.

use std::path::Path;

use fevlint_load::symbols::{
    clone_base, syscall_name, CloneKind, ConfigValue, FilterFunctions, KernelConfig, KprobeBlacklist, RawSymbol,
    SymbolFormat, SymbolTable, SyscallWrapper, VirtAddr,
};
use fevlint_load::LoadError;
use fevlint_types::Arch;

#[test]
fn available_filter_functions_counts_match_source_md() {
    // (kernel, lines, invalid lines, distinct names, names on more than one line)
    let want = [
        ("6.1.0-47-amd64", 38162, 597, 37261, 187),
        ("6.1.0-56-amd64", 38252, 597, 37350, 188),
        ("6.12.117+deb12-amd64", 42862, 0, 42514, 213),
        ("6.1.0-50-686-pae", 35078, 305, 34528, 148),
    ];
    for (kernel, lines, invalid, distinct, repeated) in want {
        let (path, text) = fevlint_testkit::kernel_fixture_file(kernel, "available_filter_functions");
        let ff = FilterFunctions::parse(&text, &path).expect("parses");
        assert_eq!(ff.len() + ff.invalid_lines(), lines, "{kernel}");
        assert_eq!(ff.invalid_lines(), invalid, "{kernel}");
        assert_eq!(ff.distinct(), distinct, "{kernel}");
        let mut names: Vec<&str> = ff.iter().map(|(n, _)| n).collect();
        names.sort_unstable();
        names.dedup();
        let rep = names.iter().filter(|n| ff.count(n) > 1).count();
        assert_eq!(rep, repeated, "{kernel}");
        assert!(ff.iter().all(|(_, m)| m.is_none()));
    }
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-56-amd64", "available_filter_functions");
    let ff = FilterFunctions::parse(&text, &path).expect("parses");
    assert_eq!(ff.count("type_show"), 17);
    assert!(ff.contains("vfs_read"));
    assert!(ff.contains("finish_task_switch.isra.0"));
    assert!(!ff.contains("finish_task_switch"));
    assert!(!ff.contains("__ftrace_invalid_address___4"));
}

#[test]
fn filter_functions_with_modules_and_errors() {
    let p = Path::new("aff");
    let ff = FilterFunctions::parse(b"vfs_read\n__ftrace_invalid_address___12\nfoo [ext4]\nfoo\r\nbar [xfs]\n", p)
        .expect("parses");
    assert_eq!(ff.len(), 4);
    assert_eq!(ff.invalid_lines(), 1);
    assert_eq!(ff.count("foo"), 2);
    let v: Vec<_> = ff.iter().collect();
    assert_eq!(v[1], ("foo", Some("ext4")));
    assert_eq!(v[2], ("foo", None));
    let err = FilterFunctions::parse(b"ok\nbad line here\n", p).expect_err("bad module");
    match err {
        LoadError::Text { line, offset, .. } => {
            assert_eq!(line, 2);
            assert_eq!(offset.0, 3);
        }
        e => panic!("{e}"),
    }
}

#[test]
fn system_map_lookups_on_6_1_0_56() {
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-56-amd64", "System.map");
    let map = SymbolTable::parse_system_map(&text, &path).expect("parses");
    assert_eq!(map.format(), SymbolFormat::SystemMap);
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    assert_eq!(map.len(), lines);
    let vfs_read = map.first("vfs_read").expect("vfs_read");
    assert_eq!(vfs_read.kind, b'T');
    // An address inside vfs_read names vfs_read.
    let inside = map.lookup_text(VirtAddr(vfs_read.addr.0 + 10)).expect("some symbol");
    assert_eq!(inside.name, "vfs_read");
    // Static duplicates: several addresses for one name.
    let type_show: Vec<_> = map.by_name("type_show").collect();
    assert!(type_show.len() >= 17, "{}", type_show.len());
    let mut addrs: Vec<_> = type_show.iter().map(|s| s.addr).collect();
    addrs.dedup();
    assert_eq!(addrs.len(), type_show.len());
    // The mcount table bounds the ftrace computation needs.
    assert!(map.addr_of("__start_mcount_loc").is_some());
    assert!(map.addr_of("__stop_mcount_loc").is_some());
    assert!(map.first("no_such_symbol_anywhere").is_none());
    assert!(map.lookup_text(VirtAddr(0)).is_none());
}

#[test]
fn system_map_pfx_symbols_6_12_and_i386_width() {
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", "System.map");
    let map = SymbolTable::parse_system_map(&text, &path).expect("parses");
    assert_eq!(map.iter().filter(|s| s.name.starts_with("__pfx_")).count(), 51656);

    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-50-686-pae", "System.map");
    let map = SymbolTable::parse_system_map(&text, &path).expect("parses");
    let max = map.iter().map(|s| s.addr.0).max().expect("non-empty");
    assert!(max <= u64::from(u32::MAX), "{max:#x}");
}

#[test]
fn kallsyms_6_18() {
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.18.44-fc-v769", "kallsyms");
    let ks = SymbolTable::parse_kallsyms(&text, &path).expect("parses");
    assert_eq!(ks.len(), 122159);
    assert_eq!(ks.iter().filter(|s| s.name.starts_with("__pfx_")).count(), 57848);
    assert!(ks.modules().is_empty());
    assert!(ks.first("vfs_read").is_some_and(|s| s.is_text()));
}

#[test]
fn kallsyms_module_column() {
    let text = b"ffffffff81000000 T _stext\nffffffffc0a01000 t ext4_foo\t[ext4]\n\
ffffffffc0b00000 t xfs_bar\t[xfs]\nffffffffc0a02000 T ext4_baz\t[ext4]\n";
    let ks = SymbolTable::parse_kallsyms(text, Path::new("kallsyms")).expect("parses");
    assert_eq!(ks.modules(), ["ext4", "xfs"]);
    assert_eq!(ks.first("ext4_baz").and_then(|s| s.module), Some("ext4"));
    assert_eq!(ks.first("_stext").and_then(|s| s.module), None);
    let err =
        SymbolTable::parse_kallsyms(b"ffffffff81000000 T a\nzzzz T b\n", Path::new("k")).expect_err("bad address");
    assert_eq!(err.offset().map(|o| o.0), Some(21));
    assert!(err.to_string().starts_with("k:2:"), "{err}");
}

#[test]
fn kallsyms_alias_preference() {
    // Same address: the weak one, the linker one and the more-underscored lose.
    let text = b"0000000000001000 W weak_one\n0000000000001000 T __start_foo\n\
0000000000001000 T __do_sys_fork\n0000000000001000 T __x64_sys_fork\n0000000000002000 T next\n";
    let ks = SymbolTable::parse_system_map(text, Path::new("m")).expect("parses");
    assert_eq!(ks.lookup_text(VirtAddr(0x1004)).map(|s| s.name), Some("__do_sys_fork"));
    assert_eq!(ks.lookup_text(VirtAddr(0x2000)).map(|s| s.name), Some("next"));
}

#[test]
fn kprobe_blacklists() {
    for (kernel, lines) in
        [("6.1.0-47-amd64", 425), ("6.1.0-56-amd64", 427), ("6.12.117+deb12-amd64", 723), ("6.1.0-50-686-pae", 247)]
    {
        let (path, text) = fevlint_testkit::kernel_fixture_file(kernel, "kprobe_blacklist");
        let bl = KprobeBlacklist::parse(&text, &path).expect("parses");
        assert_eq!(bl.len(), lines, "{kernel}");
        assert!(bl.entries().iter().all(|e| e.start < e.end), "{kernel}");
    }
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-50-686-pae", "kprobe_blacklist");
    let bl = KprobeBlacklist::parse(&text, &path).expect("parses");
    let thunk = bl.entries().iter().find(|e| e.name == "__x86_indirect_thunk_edi").expect("present");
    assert_eq!((thunk.start, thunk.end), (VirtAddr(0xc1933ee0), VirtAddr(0xc1da4000)));
    assert!(bl.contains_name("__x86_indirect_thunk_edi"));
    assert_eq!(bl.covering(VirtAddr(0xc1933ee0)).count(), 1);
    let err = KprobeBlacklist::parse(b"0x10-0x20 name\n", Path::new("bl")).expect_err("no tab");
    assert!(matches!(err, LoadError::Text { line: 1, .. }), "{err}");
}

#[test]
fn configs() {
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-56-amd64", "config");
    let c = KernelConfig::parse(&text, &path).expect("parses");
    assert_eq!(c.get("CONFIG_DEBUG_INFO_BTF"), Some(&ConfigValue::Yes));
    assert_eq!(c.get("DEBUG_INFO_BTF"), Some(&ConfigValue::Yes));
    assert_eq!(c.arch(), Some(Arch::X86_64));
    assert_eq!(c.ftrace_max_offset(), 0);
    assert!(c.is_enabled("FUNCTION_TRACER"));

    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-50-686-pae", "config");
    let c = KernelConfig::parse(&text, &path).expect("parses");
    assert_eq!(c.get("DEBUG_INFO_BTF"), Some(&ConfigValue::NotSet));
    assert_eq!(c.arch(), Some(Arch::X86_32));

    let (path, text) = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", "config");
    let c = KernelConfig::parse(&text, &path).expect("parses");
    assert_eq!(c.ftrace_max_offset(), 4);

    let (path, text) = fevlint_testkit::kernel_fixture_file("6.18.44-fc-v769", "config");
    let c = KernelConfig::parse(&text, &path).expect("parses");
    assert_eq!(c.get("KPROBES"), Some(&ConfigValue::NotSet));
    assert!(matches!(c.get("LOCALVERSION"), Some(ConfigValue::Other(_))));
    assert!(c.len() > 1000);

    // A name written twice answers its last line (as Kconfig reads it), and counts once.
    let text = b"# CONFIG_KPROBES is not set\nCONFIG_X=1\nCONFIG_KPROBES=y\nCONFIG_X=\"two\"\n";
    let c = KernelConfig::parse(text, Path::new("config")).expect("parses");
    assert_eq!(c.get("KPROBES"), Some(&ConfigValue::Yes));
    assert_eq!(c.get("CONFIG_X"), Some(&ConfigValue::Other("\"two\"".into())));
    assert_eq!((c.len(), c.get("Y")), (2, None));
}

/// The dotted names (compiler clones) are what a pass over every entry finds, in file
/// order, on a real list and one read back from its cached bytes.
#[test]
fn dotted_names_are_the_clones_in_file_order() {
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", "available_filter_functions");
    let ff = FilterFunctions::parse(&text, &path).expect("parses");
    let want: Vec<&str> = ff.iter().map(|(n, _)| n).filter(|n| n.contains('.')).collect();
    assert!(want.len() > 500, "{}", want.len());
    assert_eq!(ff.dotted().collect::<Vec<_>>(), want);
    let back = FilterFunctions::from_bytes(&ff.to_bytes()).expect("reads back");
    assert_eq!(back.dotted().collect::<Vec<_>>(), want);
    let small = FilterFunctions::parse(b"a.isra.0\nb\n.c [m]\nd.\nd.\n", Path::new("aff")).expect("parses");
    assert_eq!(small.dotted().collect::<Vec<_>>(), ["a.isra.0", ".c", "d.", "d."]);
}

#[test]
fn clone_and_syscall_names() {
    assert_eq!(clone_base("finish_task_switch.isra.0"), ("finish_task_switch", vec![CloneKind::Isra]));
    assert_eq!(clone_base("foo.constprop.0.isra.0"), ("foo", vec![CloneKind::Constprop, CloneKind::Isra]));
    assert_eq!(clone_base("bar.part.3"), ("bar", vec![CloneKind::Part]));
    assert_eq!(clone_base("baz.cold"), ("baz", vec![CloneKind::Cold]));
    assert_eq!(clone_base("vfs_read"), ("vfs_read", vec![]));
    assert_eq!(syscall_name("__x64_sys_read"), Some((SyscallWrapper::X64, "read")));
    assert_eq!(syscall_name("__ia32_sys_read"), Some((SyscallWrapper::Ia32, "read")));
    assert_eq!(syscall_name("__do_sys_fork"), Some((SyscallWrapper::Do, "fork")));
    assert_eq!(syscall_name("__se_sys_openat"), Some((SyscallWrapper::SignExtend, "openat")));
    assert_eq!(syscall_name("vfs_read"), None);
    assert_eq!(syscall_name("__x64_sys_"), None);
}

#[test]
fn first_by_scan_and_by_name_order_agree() {
    let (path, text) = fevlint_testkit::kernel_fixture_file("6.1.0-56-amd64", "System.map");
    let scanned = SymbolTable::parse_system_map(&text, &path).expect("parses");
    let sorted = SymbolTable::parse_system_map(&text, &path).expect("parses");
    // Builds the name order of `sorted`; `scanned` never needs it below.
    assert!(sorted.by_name("vfs_read").next().is_some());
    let names: Vec<&str> = scanned.iter().step_by(97).map(|s| s.name).collect();
    for name in names.iter().copied().chain(["type_show", "vfs_read", "no_such_symbol_anywhere", ""]) {
        assert_eq!(scanned.first(name), sorted.first(name), "{name}");
    }
    // Duplicates: the first in file order, as `by_name` lists them.
    assert_eq!(scanned.first("type_show"), sorted.by_name("type_show").next());
}

#[test]
fn containing_walks_past_small_functions_to_a_large_one() {
    let raw = |name, addr, kind, size| RawSymbol { name, addr, kind, size: Some(size) };
    let t = SymbolTable::from_raw([
        raw("big", 0x1000, b'T', 0x4000),
        raw("inner", 0x2000, b't', 0x10),
        raw("data", 0x2100, b'd', 0x10_0000),
        raw("unsized", 0x6000, b'T', 0),
        raw("last", 0x9000, b'T', 0x10),
    ]);
    let at = |a| t.containing(VirtAddr(a)).map(|s| s.name);
    assert_eq!(at(0x2008), Some("inner"));
    assert_eq!(at(0x3000), Some("big"), "past `inner` and a data symbol, within the largest size");
    assert_eq!(at(0x4fff), Some("big"));
    assert_eq!(at(0x5000), None);
    assert_eq!(at(0x6000), None, "a zero-size symbol contains nothing");
    assert_eq!(at(0x9008), Some("last"));
    assert_eq!(at(0x9010), None);
    assert_eq!(at(0xfff), None);
    assert_eq!(at(u64::MAX), None);
}

/// The stored form of a parsed ftrace list (the derived-data cache's) reads back as the
/// same list, on every fixture kernel's real file and on one with modules; a file cut
/// short or with a name range moved is refused, never trusted.
#[test]
fn filter_functions_bytes_read_back_and_refuse_damage() {
    let same = |a: &FilterFunctions, b: &FilterFunctions| {
        assert_eq!(a.len(), b.len());
        assert_eq!(a.invalid_lines(), b.invalid_lines());
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert!(a.iter().eq(b.iter()));
        for (name, _) in a.iter().step_by(97) {
            assert_eq!(a.count(name), b.count(name), "{name}");
        }
    };
    for kernel in ["6.1.0-56-amd64", "6.12.117+deb12-amd64"] {
        let (path, text) = fevlint_testkit::kernel_fixture_file(kernel, "available_filter_functions");
        let ff = FilterFunctions::parse(&text, &path).expect("parses");
        let back = FilterFunctions::from_bytes(&ff.to_bytes()).expect("reads back");
        same(&ff, &back);
        assert!(back.count("vfs_read") > 0);
    }
    let p = Path::new("aff");
    let ff = FilterFunctions::parse(b"vfs_read\n__ftrace_invalid_address___12\nfoo [ext4]\nfoo\nbar [xfs]\n", p)
        .expect("parses");
    let bytes = ff.to_bytes();
    same(&ff, &FilterFunctions::from_bytes(&bytes).expect("reads back"));
    for cut in [0, 7, 8, 31, bytes.len() - 1] {
        assert!(FilterFunctions::from_bytes(&bytes[..cut]).is_none(), "cut at {cut}");
    }
    // The first entry's start moved past the name text: refused.
    let mut moved = bytes.clone();
    let text_len = u32::from_le_bytes(moved[24..28].try_into().expect("four bytes")) as usize;
    let entry = 32 + text_len;
    moved[entry..entry + 4].copy_from_slice(&(text_len as u32).to_le_bytes());
    assert!(FilterFunctions::from_bytes(&moved).is_none());
}
