//! bzImage extraction and the ELF view, on the real 6.12 vmlinuz and on small
//! binaries compiled here with gcc.

use std::path::{Path, PathBuf};
use std::process::Command;

use fevlint_load::blob::Blob;
use fevlint_load::bzimage::{extract_vmlinux, parse_header};
use fevlint_load::elf::{ftrace_function_names, KernelElf};
use fevlint_load::symbols::{KernelConfig, SymbolTable};
use fevlint_load::{Codec, Limits, LoadError};
use fevlint_types::Arch;

const K612: &str = "6.12.117+deb12-amd64";

fn vmlinux_612() -> (PathBuf, KernelElf) {
    let (path, data) = fevlint_testkit::vmlinuz_612();
    let (_, elf) = extract_vmlinux(&data, &path, &Limits::default()).expect("extracts");
    let elf = KernelElf::parse(Blob::from_vec(elf), &path).expect("parses");
    (path, elf)
}

#[test]
fn bzimage_header_of_the_real_vmlinuz() {
    let (path, data) = fevlint_testkit::vmlinuz_612();
    let h = parse_header(&data, &path).expect("header");
    assert_eq!(h.protocol, (2, 15));
    assert_eq!(h.setup_sects, 39);
    assert_eq!(h.payload_offset, 716);
    assert_eq!(h.payload_length, 11_838_000);
    assert_eq!(h.payload_file_offset, 21_196);
    assert_eq!(h.codec, Codec::Zstd);
    assert_eq!(h.trailer_size, Some(57_647_116));
}

#[test]
fn vmlinuz_extracts_to_the_vmlinux_with_btf_and_build_id() {
    let (_, elf) = vmlinux_612();
    assert_eq!(elf.data().len(), 57_647_116);
    assert_eq!(elf.arch(), Arch::X86_64);
    assert_eq!(elf.build_id_hex().as_deref(), Some("764949bbe8b7a9241512fbf3b0d66d0ba34686a8"));
    let btf = elf.btf().expect(".BTF");
    assert_eq!(btf.len(), 4_918_287);
    let (_, want) = fevlint_testkit::kernel_fixture_file(K612, "vmlinux.btf");
    assert!(*btf == *want, ".BTF differs from vmlinux.btf");
    assert!(elf.symbols().is_none(), "the vmlinuz ELF is stripped");
    assert!(!elf.has_dwarf());
    assert!(!elf.has_debug_relocations());
    assert_eq!(elf.section(".text").map(|s| s.size), Some(16_777_216));
    assert!(elf.section(".init.data").is_some());
}

#[test]
fn ftrace_list_from_vmlinuz_and_system_map_equals_the_fixture() {
    let (_, elf) = vmlinux_612();
    let (map_path, map) = fevlint_testkit::kernel_fixture_file(K612, "System.map");
    let map = SymbolTable::parse_system_map(&map, &map_path).expect("System.map");
    let (cfg_path, cfg) = fevlint_testkit::kernel_fixture_file(K612, "config");
    let cfg = KernelConfig::parse(&cfg, &cfg_path).expect("config");

    let sites = elf.ftrace_sites(Some(&map)).expect("mcount table");
    // SOURCE.md: 45,925 entries, 664 zero, 2,399 in init.
    assert_eq!(sites.entries, 45_925);
    assert_eq!(sites.zero, 664);
    assert_eq!(sites.init_dropped, 2_399);
    let names = ftrace_function_names(&sites.sites, &map, Some(cfg.ftrace_max_offset()));

    let (_, want) = fevlint_testkit::kernel_fixture_file(K612, "available_filter_functions");
    let want: Vec<&str> = std::str::from_utf8(&want).expect("utf8").lines().collect();
    assert_eq!(names.len(), want.len());
    let diffs: Vec<_> = names.iter().zip(&want).enumerate().filter(|(_, (a, b))| a != b).take(5).collect();
    assert!(diffs.is_empty(), "first differences: {diffs:?}");
}

#[test]
fn without_symbols_a_stripped_vmlinux_has_no_ftrace_table() {
    let (_, elf) = vmlinux_612();
    let err = elf.ftrace_sites(None).expect_err("no symbols");
    assert!(err.to_string().contains("no ftrace table"), "{err}");
}

fn gcc() -> bool {
    Command::new("gcc").arg("--version").output().is_ok_and(|o| o.status.success())
}

const PROGRAM: &str = r#"
__asm__(".globl __fentry__\n.type __fentry__,@function\n__fentry__: ret\n.size __fentry__,1\n");
static int __attribute__((noinline)) helper(int x) { return x * 3 + 1; }
int __attribute__((noinline)) traced_one(int a) { return helper(a) + 2; }
int __attribute__((noinline)) traced_two(int a, int b) { return traced_one(a) * b; }
int __attribute__((noinline, no_instrument_function)) not_traced(int a) { return a - 1; }
int main(int argc, char **argv) { (void)argv; return traced_two(argc, 2) + not_traced(argc); }
"#;

/// Compiles PROGRAM with `-pg -mfentry -mrecord-mcount` into `dir`; returns (object, exe).
fn compile(dir: &Path) -> (PathBuf, PathBuf) {
    let c = dir.join("t.c");
    std::fs::write(&c, PROGRAM).expect("write");
    let o = dir.join("t.o");
    let exe = dir.join("t");
    let st = Command::new("gcc")
        .args(["-O2", "-pg", "-mfentry", "-mrecord-mcount", "-c"])
        .arg(&c)
        .arg("-o")
        .arg(&o)
        .status()
        .expect("gcc runs");
    assert!(st.success());
    // Linked without -pg (no gcrt1/profiling runtime); non-PIE so the table holds
    // absolute addresses.
    let st = Command::new("gcc").arg("-no-pie").arg("-o").arg(&exe).arg(&o).status().expect("gcc");
    assert!(st.success());
    (o, exe)
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fevlint-load-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

#[test]
fn gcc_mcount_table_named_by_symbol_containment() {
    // FIXME(load): needs gcc; every dev machine and CI image of this project has it.
    assert!(gcc(), "gcc is required for this test");
    let dir = tempdir("elf");
    let (obj, exe) = compile(&dir);
    let elf = KernelElf::parse(Blob::read(&exe).expect("read"), &exe).expect("parses");
    assert_eq!(elf.arch(), Arch::X86_64);
    assert!(elf.build_id().is_some_and(|b| b.len() == 20));
    let syms = elf.symbols().expect("not stripped");
    let t1 = syms.first("traced_one").expect("traced_one");
    assert!(t1.is_text() && t1.kind == b'T' && t1.size.is_some_and(|s| s > 0));
    assert_eq!(syms.first("helper").map(|s| s.kind), Some(b't'));

    let sites = elf.ftrace_sites(None).expect("__mcount_loc section");
    assert_eq!(sites.zero, 0);
    let mut names = ftrace_function_names(&sites.sites, syms, None);
    names.sort();
    assert_eq!(names, ["helper", "main", "traced_one", "traced_two"]);

    // A relocatable object: the table is relocations; refused with a clear error.
    let o = KernelElf::parse(Blob::read(&obj).expect("read"), &obj).expect("parses");
    let err = o.ftrace_sites(None).expect_err("relocatable");
    assert!(err.to_string().contains("relocatable"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn garbage_and_truncated_elves_are_errors() {
    let p = Path::new("junk.elf");
    let mut junk = b"\x7fELF\x02\x01\x01".to_vec();
    let mut x: u32 = 12345;
    for _ in 0..4096 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        junk.push((x >> 16) as u8);
    }
    let err = KernelElf::parse(Blob::from_vec(junk), p).expect_err("junk");
    assert!(matches!(err, LoadError::Elf { .. }), "{err}");
    assert!(err.to_string().starts_with("junk.elf: ELF:"), "{err}");

    let err = KernelElf::parse(Blob::from_vec(b"not an elf".to_vec()), p).expect_err("magic");
    assert_eq!(err.offset().map(|o| o.0), Some(0));

    // The real vmlinux cut in half: section headers (at the end) are gone.
    let (path, data) = fevlint_testkit::vmlinuz_612();
    let (_, elf) = extract_vmlinux(&data, &path, &Limits::default()).expect("extracts");
    let half = elf[..elf.len() / 2].to_vec();
    let err = KernelElf::parse(Blob::from_vec(half), &path).expect_err("truncated");
    assert!(matches!(err, LoadError::Elf { .. }), "{err}");
}

#[test]
fn symbols_named_agrees_with_the_full_table() {
    // FIXME(load): needs gcc; every dev machine and CI image of this project has it.
    assert!(gcc(), "gcc is required for this test");
    let dir = tempdir("named");
    let (_, exe) = compile(&dir);
    let mut bytes = std::fs::read(&exe).expect("read");
    // Point `traced_two`'s name at the tail of its own string: a symbol called `two`
    // whose name is shared with a longer one, as a linker merging string tails makes.
    let elf = KernelElf::parse(Blob::from_vec(bytes.clone()), &exe).expect("parses");
    let symtab = elf.section(".symtab").and_then(|s| s.file_range.clone()).expect(".symtab");
    let strtab = elf.section(".strtab").and_then(|s| s.file_range.clone()).expect(".strtab");
    let name_at = |b: &[u8], off: usize| {
        let s = &b[strtab.start + off..strtab.end];
        s[..s.iter().position(|&c| c == 0).expect("NUL")].to_vec()
    };
    let entry = (symtab.start..symtab.end)
        .step_by(24)
        .find(|&e| {
            let off = u32::from_le_bytes(bytes[e..e + 4].try_into().expect("4 bytes")) as usize;
            name_at(&bytes, off) == b"traced_two"
        })
        .expect("traced_two in .symtab");
    let off = u32::from_le_bytes(bytes[entry..entry + 4].try_into().expect("4 bytes"));
    bytes[entry..entry + 4].copy_from_slice(&(off + 7).to_le_bytes());

    let lazy = KernelElf::parse(Blob::from_vec(bytes.clone()), &exe).expect("parses");
    let full = KernelElf::parse(Blob::from_vec(bytes), &exe).expect("parses");
    let table = full.symbols().expect("not stripped");
    let mut names: Vec<&str> = table.iter().map(|s| s.name).collect();
    names.extend(["traced_two", "two", "elper", "no_such_symbol", ""]);
    for name in names {
        let want: Vec<_> = table.by_name(name).collect();
        assert_eq!(lazy.symbols_named(name).as_deref(), Some(&want[..]), "{name}");
    }
    let two = lazy.symbols_named("two").expect("symtab");
    assert!(two.len() == 1 && two[0].is_text(), "{two:?}");
    assert_eq!(lazy.symbols_named("traced_two"), Some(vec![]));
    // Reading the whole table changes nothing.
    lazy.symbols();
    assert_eq!(lazy.symbols_named("two"), Some(two));

    // A stripped image has no table either way.
    let stripped = dir.join("t.stripped");
    let st = Command::new("strip").arg("-o").arg(&stripped).arg(&exe).status().expect("strip runs");
    assert!(st.success());
    let elf = KernelElf::parse(Blob::read(&stripped).expect("read"), &stripped).expect("parses");
    assert_eq!(elf.symbols_named("main"), None);
    std::fs::remove_dir_all(&dir).ok();
}
