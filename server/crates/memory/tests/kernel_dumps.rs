//! Real kernel dumps: the Debian 6.12 kernel from fixtures/ boots under QEMU (TCG) through
//! `tests/oracle/run-oracle.sh`, which pauses it and writes, in the same pause, an ELF dump
//! without paging (physical PT_LOADs), one with paging (virtual PT_LOADs) and QEMU's
//! flattened `kdump-zlib`. Debian's makedumpfile converts the ELF dump to compressed kdump
//! (`-c`, `-l`, none; `-d 31` and `-d 0`), ELF (`-E`) and flattened (`-F`, then gzip and xz).
//! Every reader must give the same bytes for the same kernel virtual addresses, taken from
//! the fixture's System.map: `init_uts_ns` (release "6.12.117+deb12-amd64"),
//! `linux_banner`, a page-table page, the module list (module area), the direct map, the
//! vmemmap. A second boot with KASLR checks `KERNELOFFSET` and `page_offset_base`.
//! The first boot also stops, through QEMU's gdb stub, at the entry of the very
//! `do_sys_openat2` call that a kprobe records (`dfd=$arg1:s32 path=+0($arg2):string`) and
//! dumps that moment: the registers and the user string read from the dump must be what
//! the kernel's trace line says.

use fevlint_memory::{
    Dump, FaultKind, KernelCore, Memory, PageTables, PhysAddr, PhysMemory, RootSource, Translation, VirtAddr,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const RELEASE: &str = "6.12.117+deb12-amd64";
const BUILD_ID: &str = "764949bbe8b7a9241512fbf3b0d66d0ba34686a8";
/// Bump to regenerate cached dumps after changing how they are made.
const STAMP: &str = "dumps v4";

fn root() -> PathBuf {
    fevlint_testkit::repo()
}

struct Dumps {
    dir: PathBuf,
    kaslr_dir: PathBuf,
    syms: HashMap<String, u64>,
}

impl Dumps {
    fn sym(&self, name: &str) -> VirtAddr {
        VirtAddr(*self.syms.get(name).unwrap_or_else(|| panic!("{name} not in System.map")))
    }
}

fn oracle(dir: &Path, kaslr: bool, extra: &[(&str, &str)], gdb_stop: Option<u64>) {
    let kernel = root().join("fixtures/kernels").join(RELEASE).join("vmlinuz");
    let defs = dir.join("defs.txt");
    std::fs::write(&defs, "p:kp do_sys_openat2 dfd=$arg1:s32 path=+0($arg2):string\n").expect("defs");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["-m", "192M", "--fwcfg-ko"])
        .arg(root().join("tests/oracle/qemu_fw_cfg-6.12.117+deb12-amd64.ko.xz"))
        .arg("--dump")
        .arg(dir.join("elf.core"))
        .args(["-t", "cat /proc/version"]);
    if kaslr {
        cmd.arg("--kaslr");
    }
    for (fmt, file) in extra {
        cmd.arg("--dump-also").arg(format!("{fmt}:{}", dir.join(file).display()));
    }
    if let Some(addr) = gdb_stop {
        // Stop at the trigger's own call: its filename starts with "/proc/ve".
        cmd.arg("--gdb-stop").arg(format!("{addr:#x}")).arg("*(unsigned long*)$rsi == 0x65762f636f72702f");
        cmd.arg(dir.join("gdbstop.core"));
    }
    let out = fevlint_testkit::run(cmd.arg(&kernel).arg(&defs));
    let text = String::from_utf8_lossy(&out.stdout);
    std::fs::write(dir.join("oracle.out"), text.as_bytes()).expect("write oracle.out");
    assert!(text.contains("qemu_fw_cfg: ok"), "the guest did not load qemu_fw_cfg (no VMCOREINFO):\n{text}");
    assert!(dir.join("elf.core").exists(), "no dump written:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
}

fn makedumpfile(dir: &Path, args: &[&str], out: &str) {
    let mut cmd = Command::new("makedumpfile");
    cmd.args(args).arg(dir.join("plain.core"));
    if args.contains(&"-F") {
        let file = std::fs::File::create(dir.join(out)).expect("create");
        fevlint_testkit::run(cmd.stdout(Stdio::from(file)));
    } else {
        let _ = std::fs::remove_file(dir.join(out));
        fevlint_testkit::run(cmd.arg(dir.join(out)));
    }
}

fn dumps() -> &'static Dumps {
    static D: OnceLock<Dumps> = OnceLock::new();
    D.get_or_init(|| {
        let syms = fevlint_testkit::system_map(RELEASE);
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel_dumps");
        let dir = base.join("nokaslr");
        let kaslr_dir = base.join("kaslr");
        let stamp = base.join("stamp");
        if std::fs::read_to_string(&stamp).ok().as_deref() != Some(STAMP) {
            for t in [("qemu-system-x86_64", "qemu-system-x86"), ("busybox", "busybox-static"), ("cpio", "cpio")] {
                fevlint_testkit::require_tool(t.0, t.1);
            }
            fevlint_testkit::require_tool("socat", "socat");
            fevlint_testkit::require_tool("makedumpfile", "makedumpfile");
            fevlint_testkit::require_tool("xz", "xz-utils");
            fevlint_testkit::require_tool("gzip", "gzip");
            let _ = std::fs::remove_dir_all(&base);
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::create_dir_all(&kaslr_dir).expect("mkdir");
            fevlint_testkit::require_tool("gdb", "gdb");
            let openat2 = *syms.get("do_sys_openat2").expect("do_sys_openat2 in System.map");
            oracle(&dir, false, &[("elf-paging", "paging.core"), ("kdump-zlib", "qemu-zlib.flat")], Some(openat2));
            oracle(&kaslr_dir, true, &[("kdump-zlib", "qemu-zlib.flat")], None);
            fevlint_testkit::relayout(&dir.join("elf.core"), &dir.join("plain.core"));
            makedumpfile(&dir, &["-c", "-d", "31"], "md-c.kdump");
            makedumpfile(&dir, &["-l", "-d", "31"], "md-l.kdump");
            makedumpfile(&dir, &["-d", "31"], "md-raw.kdump");
            makedumpfile(&dir, &["-c", "-d", "0"], "md-c0.kdump");
            makedumpfile(&dir, &["-E", "-d", "31"], "md-e.elf");
            makedumpfile(&dir, &["-F", "-c", "-d", "31"], "md-f.flat");
            for (tool, ext) in [("gzip", "gz"), ("xz", "xz")] {
                let out = std::fs::File::create(dir.join(format!("md-f.flat.{ext}"))).expect("create");
                fevlint_testkit::run(
                    Command::new(tool).args(["-1", "-c"]).arg(dir.join("md-f.flat")).stdout(Stdio::from(out)),
                );
            }
            // The relaid copy is only makedumpfile's input: 200 MB less on disk.
            std::fs::remove_file(dir.join("plain.core")).expect("rm plain.core");
            std::fs::write(&stamp, STAMP).expect("stamp");
        }
        Dumps { dir, kaslr_dir, syms }
    })
}

fn open(path: &Path) -> KernelCore {
    match Dump::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display())) {
        Dump::Kernel(k) => k,
        Dump::User(_) => panic!("{} opened as a user core", path.display()),
    }
}

fn cstr(b: &[u8]) -> &str {
    std::str::from_utf8(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]).expect("utf8")
}

/// The addresses every reader must agree on, with the bytes read from the reference.
fn probes(d: &Dumps, k: &KernelCore) -> Vec<(String, VirtAddr, usize)> {
    let modules_next = k.read_u64(d.sym("modules")).expect("modules.next");
    let mem_section = k.vmcoreinfo().and_then(|v| v.symbol("mem_section")).expect("SYMBOL(mem_section)");
    let uts_phys = k.walk(d.sym("init_uts_ns")).expect("walk init_uts_ns");
    vec![
        ("init_uts_ns".into(), d.sym("init_uts_ns"), 390),
        ("linux_banner".into(), d.sym("linux_banner"), 160),
        ("page_offset_base".into(), d.sym("page_offset_base"), 24),
        ("init_top_pgt (a page-table page)".into(), d.sym("init_top_pgt"), 4096),
        ("jiffies_64".into(), d.sym("jiffies_64"), 8),
        // struct module: state, list, name[56]: the list entry is at +8, the name at +24.
        ("qemu_fw_cfg's struct module (module area)".into(), VirtAddr(modules_next - 8), 256),
        ("mem_section (direct map)".into(), mem_section, 64),
        ("_text through the direct map".into(), VirtAddr(0xffff_8880_0000_0000 + 0x100_0000), 4096),
        ("_text".into(), d.sym("_text"), 4096),
        ("struct page of init_uts_ns (vmemmap)".into(), VirtAddr(0xffff_ea00_0000_0000 + (uts_phys.0 >> 12) * 64), 64),
        ("a read across a page boundary".into(), d.sym("init_uts_ns") - 100 + 4096 * 2, 200),
    ]
}

fn read_all(k: &KernelCore, probes: &[(String, VirtAddr, usize)]) -> Vec<Vec<u8>> {
    probes
        .iter()
        .map(|(what, addr, len)| {
            let mut b = vec![0u8; *len];
            k.read(*addr, &mut b).unwrap_or_else(|f| panic!("{}: {what} at {addr:#x}: {f}", k.path().display()));
            b
        })
        .collect()
}

#[test]
fn qemu_elf_dump_reads_the_kernel() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    let d = dumps();
    let k = open(&d.dir.join("elf.core"));
    assert_eq!(k.format(), "QEMU ELF dump (physical)");
    let info = k.vmcoreinfo().expect("VMCOREINFO note");
    assert_eq!(info.osrelease(), Some(RELEASE));
    assert_eq!(info.build_id(), Some(BUILD_ID));
    assert_eq!(info.kernel_offset(), Some(0));
    assert_eq!(k.kernel_offset(), 0);
    assert_eq!(k.phys_base(), Some(0));
    let (t, src) = k.page_tables().expect("page tables");
    assert_eq!(src, RootSource::Vmcoreinfo);
    assert_eq!(t.levels, 4);
    assert_eq!(t.root, PhysAddr(d.sym("init_top_pgt").0 - 0xffff_ffff_8000_0000));

    let mut uts = [0u8; 390];
    k.read(d.sym("init_uts_ns"), &mut uts).expect("init_uts_ns");
    assert_eq!(cstr(&uts[..65]), "Linux");
    assert_eq!(cstr(&uts[130..195]), RELEASE);
    let mut banner = [0u8; 64];
    k.read(d.sym("linux_banner"), &mut banner).expect("linux_banner");
    assert!(cstr(&banner).starts_with(&format!("Linux version {RELEASE}")), "{}", cstr(&banner));
    assert_eq!(k.read_u64(d.sym("page_offset_base")), Ok(0xffff_8880_0000_0000));
    assert_eq!(k.read_u64(d.sym("vmemmap_base")), Ok(0xffff_ea00_0000_0000));
    // The module area, through 4 KiB page-table entries.
    let m = k.read_u64(d.sym("modules")).expect("modules.next");
    assert!(m >= 0xffff_ffff_a000_0000, "module at {m:#x}");
    let mut name = [0u8; 56];
    k.read(VirtAddr(m - 8 + 24), &mut name).expect("module name");
    assert_eq!(cstr(&name), "qemu_fw_cfg");

    // One vCPU: NT_PRSTATUS and QEMU's CPU state; CR3 gives the same translations.
    assert_eq!(k.threads().len(), 1);
    assert_eq!(k.qemu_cpus().len(), 1);
    let q = k.qemu_cpus()[0];
    assert_eq!(q.rip, k.threads()[0].regs.ip());
    let mut by_cr3 = open(&d.dir.join("elf.core"));
    by_cr3.set_page_tables(PageTables::new(PhysAddr(q.cr3), 4));
    let p = probes(d, &k);
    assert_eq!(read_all(&by_cr3, &p), read_all(&k, &p), "CR3 and init_top_pgt translate alike");

    // Faults say why.
    let fault = |a: u64| k.read_u64(VirtAddr(a)).map_err(|f| f.kind);
    assert_eq!(fault(0x0000_8000_0000_0000), Err(FaultKind::Unmapped), "non-canonical");
    assert_eq!(fault(0xffff_c8ff_ffff_0000), Err(FaultKind::Unmapped), "the hole below vmalloc");
    assert_eq!(fault(0), Err(FaultKind::Unmapped), "NULL");
    let mut b = [0u8; 8];
    assert_eq!(k.read_phys(PhysAddr(1 << 40), &mut b).map_err(|f| f.kind), Err(FaultKind::OutsidePhysical));
}

#[test]
fn every_format_reads_the_same_bytes() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    let d = dumps();
    let reference = open(&d.dir.join("elf.core"));
    let p = probes(d, &reference);
    let want = read_all(&reference, &p);
    let regs = reference.threads()[0].regs;
    for (file, format) in [
        ("paging.core", "QEMU ELF dump (paging)"),
        ("qemu-zlib.flat", "kdump (Zlib, dump level 1)"),
        ("md-c.kdump", "kdump (Zlib, dump level 31)"),
        ("md-l.kdump", "kdump (Lzo, dump level 31)"),
        ("md-raw.kdump", "kdump (None, dump level 31)"),
        ("md-c0.kdump", "kdump (Zlib, dump level 0)"),
        ("md-e.elf", "QEMU ELF dump (physical)"), // makedumpfile keeps the QEMU notes and p_vaddr
        ("md-f.flat", "kdump (Zlib, dump level 31)"),
        ("md-f.flat.gz", "kdump (Zlib, dump level 31)"),
        ("md-f.flat.xz", "kdump (Zlib, dump level 31)"),
    ] {
        let k = open(&d.dir.join(file));
        assert_eq!(k.format(), format, "{file}");
        let got = read_all(&k, &p);
        for (i, (what, addr, _)) in p.iter().enumerate() {
            assert!(got[i] == want[i], "{file}: {what} at {addr:#x} differs from the QEMU ELF dump");
        }
        let info = k.vmcoreinfo().unwrap_or_else(|| panic!("{file}: no VMCOREINFO"));
        assert_eq!(info.osrelease(), Some(RELEASE), "{file}");
        assert_eq!(info.build_id(), Some(BUILD_ID), "{file}");
        assert_eq!(k.threads().len(), 1, "{file}: CPUs");
        assert_eq!(k.threads()[0].regs, regs, "{file}: NT_PRSTATUS registers");
    }
}

#[test]
fn paging_dump_segments_agree_with_the_page_tables() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    let d = dumps();
    let k = open(&d.dir.join("paging.core"));
    let elf = k.elf().expect("ELF");
    let kernel_segments = elf.segments().iter().filter(|s| s.vaddr >= VirtAddr(0xffff_8000_0000_0000)).count();
    assert!(kernel_segments > 100, "{kernel_segments} kernel PT_LOADs");
    for (what, addr, _) in probes(d, &k) {
        assert_eq!(k.translate(addr), Ok(Translation::Segment), "{what}");
        // QEMU's p_paddr for the segment = the walk's physical address.
        let seg =
            elf.segments().iter().find(|s| s.vaddr <= addr && addr.offset_from(s.vaddr) < s.memsz).expect("segment");
        let paddr = seg.paddr.expect("QEMU writes p_paddr");
        assert_eq!(k.walk(addr), Ok(paddr + addr.offset_from(seg.vaddr)), "{what}");
    }
}

#[test]
fn excluded_pages_are_not_in_the_dump() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    let d = dumps();
    let full = open(&d.dir.join("elf.core"));
    let k = open(&d.dir.join("md-c.kdump"));
    let kd = k.kdump().expect("kdump");
    assert_eq!(kd.header().header_version, 6);
    assert_eq!(kd.header().release, RELEASE);
    assert_eq!(kd.header().machine, "x86_64");
    assert!(kd.dumped_pages() > 1000 && kd.dumped_pages() < 192 * 256, "{} pages", kd.dumped_pages());
    // The first RAM page above 16 MiB that -d 31 left out (a free or user page).
    let mut b = [0u8; 8];
    let excluded = |pfn: u64| {
        let mut b = [0u8; 8];
        k.read_phys(PhysAddr(pfn << 12), &mut b).map_err(|f| f.kind) == Err(FaultKind::NotInDump)
    };
    let pfn = (0x1000..192 * 256u64).find(|&p| excluded(p)).expect("an excluded page");
    full.read_phys(PhysAddr(pfn << 12), &mut b).expect("the ELF dump has every page");
    let va = VirtAddr(0xffff_8880_0000_0000 + (pfn << 12));
    assert_eq!(k.read_u64(va), Err(fevlint_memory::Fault::new(va, FaultKind::NotInDump)));
    assert!(full.read_u64(va).is_ok());
    assert_eq!(k.read_phys(PhysAddr(1 << 40), &mut b).map_err(|f| f.kind), Err(FaultKind::OutsidePhysical));
    // makedumpfile -E keeps runs of fewer than 256 excluded pages (PFN_EXCLUDED) and drops
    // longer ones (p_memsz > p_filesz): inside a run of 512, the page is not in the dump.
    let run = (0x1000..192 * 256u64 - 512)
        .step_by(64)
        .find(|&p| (p..p + 512).all(excluded))
        .expect("a run of 512 excluded pages");
    let e = open(&d.dir.join("md-e.elf"));
    let va = VirtAddr(0xffff_8880_0000_0000 + ((run + 256) << 12));
    assert_eq!(e.read_u64(va).map_err(|f| f.kind), Err(FaultKind::NotInDump), "makedumpfile -E, pfn {:#x}", run + 256);
    assert!(full.read_u64(va).is_ok());
}

#[test]
fn kaslr_offset_and_direct_map_base_come_from_the_dump() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    let d = dumps();
    for file in ["elf.core", "qemu-zlib.flat"] {
        let k = open(&d.kaslr_dir.join(file));
        let off = k.kernel_offset();
        assert_eq!(off % 0x20_0000, 0, "{file}: KERNELOFFSET {off:#x} is 2 MiB-aligned");
        let mut uts = [0u8; 390];
        k.read(d.sym("init_uts_ns") + off, &mut uts).expect("init_uts_ns + KERNELOFFSET");
        assert_eq!(cstr(&uts[130..195]), RELEASE, "{file}");
        // The direct map's base is randomized too: read it from the dump, and find the
        // same bytes through it.
        let pob = k.read_u64(d.sym("page_offset_base") + off).expect("page_offset_base");
        assert!(pob >= 0xffff_8880_0000_0000, "{file}: page_offset_base {pob:#x}");
        let phys = k.walk(d.sym("init_uts_ns") + off).expect("walk");
        let mut alias = [0u8; 390];
        // The direct map: virtual `page_offset_base + physical`, written out.
        k.read(VirtAddr(pob + phys.0), &mut alias).expect("init_uts_ns through the direct map");
        assert_eq!(alias, uts, "{file}");
    }
}

#[test]
fn the_same_call_as_the_kernel_recorded() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    let d = dumps();
    let trace = std::fs::read_to_string(d.dir.join("oracle.out")).expect("oracle.out");
    // cat-137 [000] .N... 4.111462: kp: (do_sys_openat2+0x0/0xe0) dfd=-100 path="/proc/version"
    let line = trace.lines().find(|l| l.contains(" kp: (do_sys_openat2+0x0/")).expect("the kprobe's trace line");
    let dfd: i32 =
        line.split("dfd=").nth(1).and_then(|r| r.split(' ').next()).and_then(|v| v.parse().ok()).expect("dfd");
    let path = line.split("path=\"").nth(1).and_then(|r| r.strip_suffix('"')).expect("path");
    assert_eq!(path, "/proc/version");

    let core = d.dir.join("gdbstop.core");
    let mut k = open(&core);
    let t = &k.threads()[0];
    assert_eq!(t.regs.ip(), d.sym("do_sys_openat2").0, "stopped at the function's first instruction");
    // $arg1:s32 is the low half of %di.
    assert_eq!(t.regs.get("di").map(|v| v as u32 as i32), Some(dfd));
    let rsi = t.regs.get("si").expect("si");
    // gdb's own view of the registers at the stop.
    let gdb = std::fs::read_to_string(d.dir.join("gdbstop.core.regs")).expect("gdb registers");
    let mut seen = 0;
    for l in gdb.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let (Some(name), Some(v)) = (w.first(), w.get(1).and_then(|v| v.strip_prefix("0x"))) else { continue };
        let Ok(v) = u64::from_str_radix(v, 16) else { continue };
        let name = if *name == "eflags" { "flags" } else { name };
        if let Some(ours) = t.regs.get(name) {
            if name.len() <= 3 || name.starts_with('r') {
                assert_eq!(ours, v, "{name} (gdb {v:#x})");
                seen += 1;
            }
        }
    }
    assert!(seen >= 17, "compared {seen} registers with gdb");
    // The filename is user memory: the kernel's own tables (init_top_pgt) do not map it,
    // the stopped task's CR3 (QEMU's CPU-state note) does.
    let rsi = VirtAddr(rsi);
    assert_eq!(k.read_u64(rsi).map_err(|f| f.kind), Err(FaultKind::Unmapped));
    let cr3 = k.qemu_cpus()[0].cr3;
    k.set_page_tables(PageTables::new(PhysAddr(cr3), 4));
    let mut b = [0u8; 64];
    k.read(rsi, &mut b).expect("+0($arg2) through the task's CR3");
    assert_eq!(cstr(&b), path, "the string the kprobe recorded");
}
