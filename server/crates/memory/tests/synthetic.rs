//! Synthetic dumps: every page codec (snappy and zstd too, which Debian's makedumpfile
//! cannot write), the 32-bit kdump layout, header versions, page tables with huge pages,
//! loops and absurd entries, and malformed files (truncated, overlapping, absurd, missing
//! notes, bad bitmaps, corrupt pages): clear errors naming the file and offset, no panic.

mod common;

use common::{elf_core, note, prstatus, vmcoreinfo, Codec, Kdump, Load, BS};
use fevlint_memory::{Dump, Error, Fault, FaultKind, KdumpFile, Memory, PhysAddr, PhysMemory, Source, VirtAddr};
use std::path::Path;

const DIRECT: u64 = 0xffff_8880_0000_0000;
const VMALLOC: u64 = 0xffff_c900_0000_0000;
const PHYS_PAGES: u64 = 1024; // 4 MiB

fn idx(va: u64, level: u32) -> u64 {
    (va >> (12 + 9 * (level - 1))) & 511
}

/// 4 MiB of physical memory with x86_64 page tables rooted at 0x1000:
/// direct map = 1 GiB page at 0; VMALLOC -> 4 KiB page 0x7000; VMALLOC + 2 MiB -> 2 MiB
/// page at 0x200000; PML4[100] points back to the root (a loop); PML4[101] points outside
/// memory; pages 0x300..0x310 are "excluded" in kdump variants.
fn physical() -> Vec<u8> {
    let mut m = vec![0u8; (PHYS_PAGES * 4096) as usize];
    let mut set = |table: u64, i: u64, v: u64| {
        let at = (table + i * 8) as usize;
        m[at..at + 8].copy_from_slice(&v.to_le_bytes());
    };
    set(0x1000, idx(DIRECT, 4), 0x2000 | 3);
    set(0x2000, idx(DIRECT, 3), 0x83); // 1 GiB, PSE
    set(0x1000, idx(VMALLOC, 4), 0x3000 | 3);
    set(0x3000, idx(VMALLOC, 3), 0x4000 | 3);
    set(0x4000, idx(VMALLOC, 2), 0x5000 | 3);
    set(0x5000, idx(VMALLOC, 1), 0x7000 | 3);
    set(0x4000, idx(VMALLOC, 2) + 1, 0x20_0000 | 0x83); // 2 MiB, PSE
    set(0x1000, 100, 0x1000 | 3); // loop
    set(0x1000, 101, (1u64 << 45) | 3); // absurd: outside memory
    for (i, b) in m[0x7000..0x8000].iter_mut().enumerate() {
        *b = (i * 7 % 251) as u8;
    }
    for (i, b) in m[0x20_0000..0x40_0000].iter_mut().enumerate() {
        *b = (i % 253) as u8;
    }
    m[0x7000..0x7010].copy_from_slice(b"vmalloc page!\0\0\0");
    m
}

fn regs() -> [u64; 27] {
    let mut r = [0u64; 27];
    r[14] = 0xffff_8880_0000_7000; // di
    r[16] = 0xffff_ffff_8100_0000; // ip
    r
}

fn notes() -> Vec<u8> {
    let mut n = note("CORE", 1, &prstatus(42, &regs()));
    n.extend(note("VMCOREINFO", 0, vmcoreinfo(0x1000).as_bytes()));
    n
}

fn kdump(codec: Codec, mem: &[u8]) -> Kdump {
    let mut k = Kdump::new(PHYS_PAGES, codec);
    for pfn in 0..PHYS_PAGES {
        if !(0x300..0x310).contains(&pfn) {
            k.pages.insert(pfn, mem[(pfn * 4096) as usize..((pfn + 1) * 4096) as usize].to_vec());
        }
    }
    k.vmcoreinfo = vmcoreinfo(0x1000);
    k.notes = note("CORE", 1, &prstatus(42, &regs()));
    k
}

fn open_bytes(name: &str, bytes: Vec<u8>) -> Result<Dump, Error> {
    Dump::from_source(Source::from_vec(Path::new(name), bytes))
}

fn kernel(name: &str, bytes: Vec<u8>) -> fevlint_memory::KernelCore {
    match open_bytes(name, bytes) {
        Ok(Dump::Kernel(k)) => k,
        Ok(Dump::User(_)) => panic!("{name}: opened as a user core"),
        Err(e) => panic!("{name}: {e}"),
    }
}

fn reads(k: &dyn Memory) -> Vec<Result<Vec<u8>, Fault>> {
    let probes: [(u64, usize); 8] = [
        (VMALLOC, 16),
        (VMALLOC + 0x20_0000 + 0x1234, 64),
        (VMALLOC + 0x20_0000 + 0x1ff_ff0, 32), // crosses into the next 2 MiB: unmapped
        (DIRECT + 0x7000, 4096),
        (DIRECT + 0x1ff0, 0x30),                               // across pages
        (DIRECT + 0x30_0000, 8),                               // excluded in the kdump variants
        (100u64 << 39 | 100 << 30 | 100 << 21 | 100 << 12, 8), // loop: index 100 at every level
        (101u64 << 39, 8),                                     // absurd entry
    ];
    probes
        .iter()
        .map(|&(a, n)| {
            let mut b = vec![0u8; n];
            k.read(VirtAddr(a), &mut b).map(|()| b)
        })
        .collect()
}

#[test]
fn page_tables_huge_pages_loops_and_absurd_entries() {
    let mem = physical();
    let elf = kernel(
        "synthetic.elf",
        elf_core(&notes(), &[Load { vaddr: 0, paddr: 0, data: mem.clone(), memsz: mem.len() as u64 }]),
    );
    let r = reads(&elf);
    assert_eq!(&r[0].as_ref().expect("vmalloc")[..13], b"vmalloc page!");
    assert_eq!(r[1].as_ref().expect("2 MiB page")[..], mem[0x20_1234..0x20_1234 + 64]);
    assert_eq!(r[2], Err(Fault::new(VirtAddr(VMALLOC + 0x40_0000), FaultKind::Unmapped)));
    assert_eq!(r[3].as_ref().expect("direct map")[..], mem[0x7000..0x8000]);
    assert_eq!(r[4].as_ref().expect("across pages")[..], mem[0x1ff0..0x2020]);
    assert_eq!(r[5].as_ref().expect("full ELF")[..], mem[0x30_0000..0x30_0008]);
    // The loop: PML4[100] -> root, used as PDPT, PD and PT in turn: a walk of four reads
    // that ends in the root page itself, never a hang.
    assert_eq!(r[6].as_ref().expect("loop ends")[..], mem[0x1000..0x1008]);
    assert_eq!(r[7].as_ref().map_err(|f| f.kind), Err(FaultKind::OutsidePhysical));
    assert_eq!(elf.threads()[0].tid, 42);
    assert_eq!(elf.threads()[0].regs.get("di"), Some(DIRECT + 0x7000));
    // Every codec and both header layouts read the same; excluded pages are not in the dump.
    for codec in [Codec::Raw, Codec::Zlib, Codec::Lzo, Codec::Snappy, Codec::Zstd] {
        let k = kernel(&format!("{codec:?}.kdump"), kdump(codec, &mem).write());
        let got = reads(&k);
        for (i, (a, b)) in got.iter().zip(&r).enumerate() {
            if i == 5 {
                assert_eq!(a.as_ref().map_err(|f| f.kind), Err(FaultKind::NotInDump), "{codec:?}");
            } else {
                assert_eq!(a, b, "{codec:?} probe {i}");
            }
        }
        assert_eq!(k.threads()[0].regs, elf.threads()[0].regs);
        // Flattened: the same file cut into records, some rewritten later.
        let flat = flatten(&kdump(codec, &mem).write());
        let f = kernel(&format!("{codec:?}.flat"), flat);
        assert_eq!(reads(&f), got, "{codec:?} flattened");
    }
    // Header versions 1-5 (no max_mapnr_64; v1-2: no VMCOREINFO, so no page tables).
    for version in 3..=5 {
        let mut k = kdump(Codec::Zlib, &mem);
        k.version = version;
        let core = kernel("v.kdump", k.write());
        assert_eq!(reads(&core)[3], r[3], "version {version}");
    }
    let mut k = kdump(Codec::Zlib, &mem);
    k.version = 2;
    let err = open_bytes("v2.kdump", k.write()).expect_err("v2 has no VMCOREINFO");
    assert!(err.to_string().contains("v2.kdump: no VMCOREINFO"), "{err}");
}

#[test]
fn kdump_32bit_layout() {
    let mem = physical();
    let mut k = kdump(Codec::Snappy, &mem);
    k.machine = "i686";
    let bytes = k.write();
    let file = KdumpFile::parse(Source::from_vec(Path::new("i686.kdump"), bytes.clone())).expect("parse i686 kdump");
    assert!(!file.header().is_64);
    assert_eq!(file.header().max_mapnr, PHYS_PAGES);
    assert_eq!(file.vmcoreinfo().and_then(|v| v.osrelease()), Some("6.12.117+deb12-amd64"));
    let mut b = [0u8; 16];
    file.read_phys(PhysAddr(0x7000), &mut b).expect("page 7");
    assert_eq!(&b[..13], b"vmalloc page!");
    // An i386 kernel's tables are found through `SYMBOL(swapper_pg_dir)`, which this
    // x86_64 VMCOREINFO lacks: refused, clearly.
    let err = open_bytes("i686.kdump", bytes).expect_err("no i386 page tables");
    assert!(err.to_string().contains("cannot find the page tables"), "{err}");
}

const I386_TEXT: u64 = 0xc000_7000;
const I386_LARGE: u64 = 0xc040_6000;

/// 64 KiB of physical memory with i386 page tables mapping `I386_TEXT` (4 KiB page at
/// 0x5000) and `I386_LARGE` (a large page at 0): PAE (PDPT at 0x1000) or not (directory
/// at 0x1000).
fn i386_physical(pae: bool) -> Vec<u8> {
    let mut m = vec![0u8; 0x10000];
    let mut set = |at: u64, v: u64, wide: bool| {
        let at = at as usize;
        if wide {
            m[at..at + 8].copy_from_slice(&v.to_le_bytes());
        } else {
            m[at..at + 4].copy_from_slice(&(v as u32).to_le_bytes());
        }
    };
    if pae {
        set(0x1000 + 3 * 8, 0x2000 | 1, true);
        set(0x2000 + ((I386_TEXT >> 21) & 511) * 8, 0x3000 | 3, true);
        set(0x2000 + ((I386_LARGE >> 21) & 511) * 8, 0x83 | (1 << 63), true);
        set(0x3000 + ((I386_TEXT >> 12) & 511) * 8, 0x5000 | 3 | (1 << 63), true);
    } else {
        set(0x1000 + (I386_TEXT >> 22) * 4, 0x3000 | 3, false);
        set(0x1000 + (I386_LARGE >> 22) * 4, 0x83, false);
        set(0x3000 + ((I386_TEXT >> 12) & 1023) * 4, 0x5000 | 3, false);
    }
    m[0x5000..0x5009].copy_from_slice(b"i386 text");
    // The large page starts at 0: `I386_LARGE` is 0x6000 into it.
    m[0x6000..0x600a].copy_from_slice(b"large page");
    m
}

/// i386 kernel dumps: the tables of `SYMBOL(swapper_pg_dir)` (3G/1G split), PAE when
/// VMCOREINFO says `CONFIG_X86_PAE=y`, 2 MiB / 4 MiB pages; QEMU's 64-bit kdump layout
/// for an i686 machine (what `dump-guest-memory` writes for a guest whose memory map
/// reaches 4 GiB).
#[test]
fn i386_page_tables() {
    for pae in [true, false] {
        let mem = i386_physical(pae);
        let mut k = Kdump::new(16, Codec::Zlib);
        for pfn in 0..16u64 {
            k.pages.insert(pfn, mem[(pfn * 4096) as usize..((pfn + 1) * 4096) as usize].to_vec());
        }
        k.machine = "i686";
        k.vmcoreinfo = format!(
            "OSRELEASE=6.1.0-50-686-pae\nPAGESIZE=4096\nSYMBOL(swapper_pg_dir)=c0001000\n{}",
            if pae { "CONFIG_X86_PAE=y\n" } else { "" }
        );
        for (layout, bytes) in [("32-bit", k.write()), ("qemu 64-bit", qemu_i686(&k))] {
            let core = kernel("i686.kdump", bytes);
            let (t, _) = core.page_tables().expect("tables");
            assert_eq!((t.root, t.levels), (PhysAddr(0x1000), if pae { 3 } else { 2 }), "{layout}");
            assert_eq!(core.arch(), fevlint_memory::Arch::I386);
            let mut b = [0u8; 9];
            core.read(VirtAddr(I386_TEXT), &mut b).expect("4 KiB page");
            assert_eq!(&b, b"i386 text", "{layout} pae={pae}");
            let mut b = [0u8; 10];
            core.read(VirtAddr(I386_LARGE), &mut b).expect("large page");
            assert_eq!(&b, b"large page", "{layout} pae={pae}");
            // Unmapped, and beyond 32 bits: faults, never misreads.
            let err = core.read(VirtAddr(0xc080_0000), &mut b).expect_err("unmapped");
            assert_eq!(err.kind, FaultKind::Unmapped);
            assert_eq!(
                core.read(VirtAddr(0x1_c000_7000), &mut b).expect_err("not a 32-bit address").kind,
                FaultKind::Unmapped
            );
        }
    }
}

/// The same dump as QEMU writes it for an i386 guest: the 64-bit header layout with
/// `i686` as the machine.
fn qemu_i686(k: &Kdump) -> Vec<u8> {
    let mut wide = Kdump::new(k.max_mapnr, Codec::Zlib);
    wide.pages = k.pages.clone();
    wide.vmcoreinfo = k.vmcoreinfo.clone();
    let mut bytes = wide.write();
    let machine = 12 + 4 * 65;
    bytes[machine..machine + 65].fill(0);
    bytes[machine..machine + 4].copy_from_slice(b"i686");
    bytes
}

/// Rewrites a kdump file as a flattened stream: records of at most 3 pages, in reverse
/// order, then the header block written a second time (later writes win).
fn flatten(file: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 4096];
    out[..12].copy_from_slice(b"makedumpfile");
    out[16..24].copy_from_slice(&1i64.to_be_bytes());
    out[24..32].copy_from_slice(&1i64.to_be_bytes());
    let mut rec = |off: usize, data: &[u8]| {
        out.extend_from_slice(&(off as i64).to_be_bytes());
        out.extend_from_slice(&(data.len() as i64).to_be_bytes());
        out.extend_from_slice(data);
    };
    // A stale header first: overwritten by the last record.
    rec(0, &[0xee; 64]);
    let chunks: Vec<(usize, &[u8])> = file.chunks(3 * BS).enumerate().map(|(i, c)| (i * 3 * BS, c)).collect();
    for (off, c) in chunks.iter().rev() {
        rec(*off, c);
    }
    rec(0, &file[..64]);
    out.extend_from_slice(&(-1i64).to_be_bytes());
    out.extend_from_slice(&(-1i64).to_be_bytes());
    out
}

fn expect_err(name: &str, bytes: Vec<u8>, needle: &str) -> String {
    match open_bytes(name, bytes) {
        Ok(d) => panic!("{name}: opened as {} but should fail with {needle:?}", d.format()),
        Err(e) => {
            let s = e.to_string();
            assert!(s.starts_with(name), "{s}: names the file");
            assert!(s.contains(needle), "{name}: {s:?} lacks {needle:?}");
            s
        }
    }
}

#[test]
fn malformed_elf_cores() {
    let mem = physical();
    let loads = [Load { vaddr: 0, paddr: 0, data: mem[..0x10000].to_vec(), memsz: 0x10000 }];
    let good = elf_core(&notes(), &loads);
    // Truncated: the segment runs past the end of the file.
    let s = expect_err("trunc.core", good[..good.len() - 100].to_vec(), "truncated dump");
    assert!(s.contains("offset 0x78"), "{s}: names the program header's offset");
    // p_filesz > p_memsz.
    expect_err(
        "absurd.core",
        elf_core(&notes(), &[Load { memsz: 0x100, ..loads[0].clone() }]),
        "p_filesz 0x10000 > p_memsz 0x100",
    );
    // Overlapping virtual segments.
    let two = [
        Load { vaddr: 0x40_0000, paddr: u64::MAX, data: vec![1; 0x2000], memsz: 0x2000 },
        Load { vaddr: 0x40_1000, paddr: u64::MAX, data: vec![2; 0x2000], memsz: 0x2000 },
    ];
    expect_err("overlap.core", elf_core(&[], &two), "segments overlap: [0x400000, 0x402000) and [0x401000, 0x403000)");
    // A segment wrapping around the address space.
    expect_err(
        "wrap.core",
        elf_core(&[], &[Load { vaddr: u64::MAX - 0xfff, paddr: 0, data: vec![], memsz: 0x2000 }]),
        "wraps around",
    );
    // A note whose size runs past the notes.
    let mut bad_note = note("CORE", 1, &prstatus(1, &regs()));
    bad_note[4..8].copy_from_slice(&0x10000u32.to_le_bytes());
    expect_err("note.core", elf_core(&bad_note, &loads), "runs past the note area");
    // phnum far larger than the file.
    let mut big = good.clone();
    big[56..58].copy_from_slice(&0xfff0u16.to_le_bytes());
    expect_err("phnum.core", big, "program headers of 56 bytes run past the end of the file");
    // Not x86, not a core, not ELF at all.
    let mut arm = good.clone();
    arm[18] = 183;
    expect_err("arm.core", arm, "ELF machine 183");
    let mut exec = good.clone();
    exec[16] = 2;
    expect_err("exec.core", exec, "not a core file");
    expect_err("empty.core", Vec::new(), "not a core dump this reader knows");
    expect_err("text.core", b"hello world, not a dump".to_vec(), "not a core dump this reader knows");
    // A kernel ELF core without VMCOREINFO or QEMU notes and only physical segments opens
    // as a user core: there is nothing to find page tables with.
    let d = open_bytes("nonotes.core", elf_core(&[], &loads)).expect("opens");
    assert!(matches!(d, Dump::User(_)));
    assert_eq!(d.read_u64(VirtAddr(DIRECT)).map_err(|f| f.kind), Err(FaultKind::Unmapped));
}

#[test]
fn malformed_kdump_files() {
    let mem = physical();
    let good = kdump(Codec::Zlib, &mem).write();
    // Truncated: the page descriptors or data are cut.
    let s = expect_err("trunc.kdump", good[..5 * BS].to_vec(), "bad bitmap");
    assert!(s.contains("offset 0x"), "{s}");
    // The bitmap too small for max_mapnr.
    let mut k = kdump(Codec::Zlib, &mem);
    k.max_mapnr = 100_000;
    let mut bytes = k.write();
    bytes[424 + 12..424 + 16].copy_from_slice(&2u32.to_le_bytes());
    expect_err("bitmap.kdump", bytes, "bad bitmap: 100000 page frames need 12500 bytes, each bitmap has 4096");
    // Absurd block size, unknown version, sub-header past the end.
    let mut bs = good.clone();
    bs[428..432].copy_from_slice(&12345u32.to_le_bytes());
    expect_err("bs.kdump", bs, "block size 12345 is not a page size");
    let mut v = good.clone();
    v[8..12].copy_from_slice(&99i32.to_le_bytes());
    expect_err("v99.kdump", v, "kdump header version 99");
    let mut sub = good.clone();
    sub[432..436].copy_from_slice(&0x7fff_ffffu32.to_le_bytes());
    expect_err("sub.kdump", sub, "sub-header of 2147483647 blocks runs past the end of the file");
    // Missing VMCOREINFO: no page tables.
    let mut k = kdump(Codec::Zlib, &mem);
    k.vmcoreinfo.clear();
    expect_err("novmci.kdump", k.write(), "no VMCOREINFO with SYMBOL(init_top_pgt)");
    // A corrupt compressed page: an error for read_page, a Corrupt fault for memory reads.
    let mut bytes = kdump(Codec::Zlib, &mem).write();
    let file = KdumpFile::parse(Source::from_vec(Path::new("x"), bytes.clone())).expect("parse");
    let desc_off = (1 + file.header().sub_hdr_size + file.header().bitmap_blocks) as usize * BS;
    let d7 = desc_off + 7 * 24;
    let off7 = u64::from_le_bytes(bytes[d7..d7 + 8].try_into().expect("8")) as usize;
    bytes[off7 + 2..off7 + 12].fill(0xff);
    let file = KdumpFile::parse(Source::from_vec(Path::new("corrupt.kdump"), bytes.clone())).expect("parse");
    let mut page = vec![0u8; BS];
    let err = file.read_page(7, &mut page).expect_err("corrupt page");
    let s = err.to_string();
    assert!(s.starts_with("corrupt.kdump: offset 0x") && s.contains("page frame 0x7: zlib"), "{s}");
    let k = kernel("corrupt.kdump", bytes);
    assert_eq!(k.read_u64(VirtAddr(DIRECT + 0x7000)), Err(Fault::new(VirtAddr(DIRECT + 0x7000), FaultKind::Corrupt)));
    assert_eq!(k.read_u64(VirtAddr(VMALLOC)).map_err(|f| f.kind), Err(FaultKind::Corrupt));
    // A page descriptor pointing past the end of the file.
    let mut bytes = kdump(Codec::Zlib, &mem).write();
    bytes[d7..d7 + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let file = KdumpFile::parse(Source::from_vec(Path::new("desc.kdump"), bytes)).expect("parse");
    let s = file.read_page(7, &mut page).expect_err("bad descriptor").to_string();
    assert!(s.contains("page descriptor") && s.contains("0x10000000000"), "{s}");
    // Flattened: a negative record size, a record past the end.
    let mut flat = flatten(&good);
    let at = 4096 + 8;
    flat[at..at + 8].copy_from_slice(&(-5i64).to_be_bytes());
    expect_err("neg.flat", flat, "offset 0x1000: flattened record 0");
    let flat = flatten(&good);
    expect_err("cut.flat", flat[..flat.len() - 100].to_vec(), "past the end of the stream");
}

#[test]
fn every_truncation_of_small_dumps_is_an_error_or_a_dump_never_a_panic() {
    let mem = physical();
    let small = &mem[..0x8000];
    let mut k = Kdump::new(8, Codec::Zlib);
    for pfn in 0..8u64 {
        k.pages.insert(pfn, small[(pfn * 4096) as usize..((pfn + 1) * 4096) as usize].to_vec());
    }
    k.vmcoreinfo = vmcoreinfo(0x1000);
    k.notes = note("CORE", 1, &prstatus(1, &regs()));
    let files = [
        k.write(),
        flatten(&k.write()),
        elf_core(&notes(), &[Load { vaddr: 0, paddr: 0, data: small.to_vec(), memsz: 0x8000 }]),
    ];
    // `FEVLINT_FUZZ_SEEDS=dir` writes these files as seeds for fuzz/ (core_kdump, core_elf).
    if let Some(dir) = std::env::var_os("FEVLINT_FUZZ_SEEDS") {
        for (name, f) in ["kdump.seed", "flat.seed", "elf.seed"].iter().zip(&files) {
            std::fs::write(Path::new(&dir).join(name), f).expect("write seed");
        }
    }
    for f in files {
        for cut in (0..f.len()).step_by(7).chain([f.len()]) {
            if let Ok(d) = open_bytes("cut", f[..cut].to_vec()) {
                let mut b = [0u8; 64];
                let _ = d.read(VirtAddr(DIRECT + 0x7000), &mut b);
                let _ = d.threads();
            }
        }
    }
}

#[test]
fn proc_kcore_is_read_when_present() {
    // /proc/kcore needs CONFIG_PROC_KCORE and root; this machine's kernel may lack it.
    let path = Path::new("/proc/kcore");
    match std::fs::File::open(path) {
        Err(e) => {
            let err = Dump::open(path).expect_err("no kcore");
            assert!(matches!(&err, Error::Io { .. }), "{err}");
            assert!(err.to_string().starts_with("/proc/kcore: "), "{err}");
            eprintln!("/proc/kcore not readable here ({e}): asserted the error instead");
        }
        Ok(_) => {
            let d = Dump::open(path).expect("open /proc/kcore");
            let Dump::Kernel(k) = &d else { panic!("/proc/kcore opened as a user core") };
            let elf = k.elf().expect("ELF");
            assert!(elf.has_virtual(), "kcore has kernel-half segments");
            // The first kernel-text byte is readable through its segment.
            let text =
                elf.segments().iter().find(|s| s.vaddr >= VirtAddr(0xffff_ffff_8000_0000)).expect("text segment");
            let mut b = [0u8; 16];
            k.read(text.vaddr, &mut b).expect("read kernel text");
        }
    }
}

/// An i386 user core (ELF32): registers from the i386 `elf_prstatus` and memory by
/// virtual address.
#[test]
fn i386_user_core() {
    let mut desc = vec![0u8; 144];
    desc[24..28].copy_from_slice(&77i32.to_le_bytes()); // pr_pid
    let regs: [u32; 17] =
        [1, 2, 3, 4, 5, 6, 7, 0x7b, 0x7b, 0, 0x33, 0xffff_ffff, 0x0804_9000, 0x73, 0x246, 0xbfff_f000, 0x7b];
    for (i, r) in regs.iter().enumerate() {
        desc[72 + i * 4..76 + i * 4].copy_from_slice(&r.to_le_bytes());
    }
    let notes = note("CORE", 1, &desc);
    let data = b"i386 memory".to_vec();
    let mut out = vec![0u8; 52 + 2 * 32];
    out[..7].copy_from_slice(b"\x7fELF\x01\x01\x01");
    out[16] = 4; // ET_CORE
    out[18] = 3; // EM_386
    out[28] = 52; // e_phoff
    out[42] = 32; // e_phentsize
    out[44] = 2; // e_phnum
    let ph = |out: &mut Vec<u8>, i: usize, ty: u32, off: u32, vaddr: u32, size: u32| {
        let p = 52 + 32 * i;
        for (k, v) in [ty, off, vaddr, 0, size, size, 6, 4].iter().enumerate() {
            out[p + 4 * k..p + 4 * k + 4].copy_from_slice(&v.to_le_bytes());
        }
    };
    let notes_off = out.len() as u32;
    ph(&mut out, 0, 4, notes_off, 0, notes.len() as u32);
    ph(&mut out, 1, 1, notes_off + notes.len() as u32, 0x0804_a000, data.len() as u32);
    out.extend_from_slice(&notes);
    out.extend_from_slice(&data);
    let d = open_bytes("i386.core", out).expect("i386 core");
    assert!(matches!(d, Dump::User(_)));
    let t = &d.threads()[0];
    assert_eq!(t.tid, 77);
    assert_eq!(t.regs.arch(), fevlint_memory::Arch::I386);
    assert_eq!(t.regs.get("eax"), Some(7));
    assert_eq!(t.regs.get("%bx"), Some(1));
    assert_eq!(t.regs.ip(), 0x0804_9000);
    assert_eq!(t.regs.get("sp"), Some(0xbfff_f000));
    let mut b = [0u8; 11];
    d.read(VirtAddr(0x0804_a000), &mut b).expect("read");
    assert_eq!(&b, b"i386 memory");
    assert_eq!(
        d.read(VirtAddr(0x0804_a008), &mut b).map_err(|f| (f.addr, f.kind)),
        Err((VirtAddr(0x0804_a00b), FaultKind::Unmapped))
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(data).expect("gzip");
    z.finish().expect("gzip")
}

/// kdump-tools' `KDUMP_COMPRESSION=gzip` wraps the flattened stream once; twice is refused,
/// and so is a wrapper cut short.
#[test]
fn gzip_wrapped_dumps() {
    let mem = physical();
    let flat = flatten(&kdump(Codec::Lzo, &mem).write());
    let k = kernel("dump.gz", gzip(&flat));
    assert_eq!(reads(&k)[0].as_ref().map(|b| b[..13].to_vec()), Ok(b"vmalloc page!".to_vec()));
    expect_err("dump.gz.gz", gzip(&gzip(&flat)), "the gzip wrapper holds no core dump this reader knows");
    let g = gzip(&flat);
    expect_err("cut.gz", g[..g.len() / 2].to_vec(), "decompressing the outer gzip/xz wrapper");
}

/// A wrapper that expands to something that is not a dump is refused after its first
/// KiB, before the rest is decompressed to disk; one that starts as a dump and then
/// expands past the ratio bound (a bomb behind a valid header) stops at the bound.
#[test]
fn wrapped_bombs_are_refused_at_the_sniff_or_the_bound() {
    let zeros = vec![0u8; 8 << 20];
    let bomb = gzip(&zeros);
    let err = expect_err("zeros.gz", bomb.clone(), "the gzip wrapper holds no core dump this reader knows");
    assert!(err.contains("its first bytes are 00 00 00 00") && err.contains("refused before decompressing"), "{err}");
    // A real ELF core header, then megabytes of zeros: past 64 times its size and a
    // floor of 1 MiB, refused naming the bound.
    let mut core = elf_core(&note("CORE", 1, &prstatus(1, &regs())), &[]);
    core.extend_from_slice(&zeros);
    let wrapped = gzip(&core);
    let limits = fevlint_memory::WrapperLimits { ratio: 64, floor: 1 << 20 };
    let err = Dump::from_source_with(Source::from_vec(Path::new("bomb.gz"), wrapped.clone()), &limits)
        .map(|d| d.format())
        .expect_err("a bomb behind a valid header");
    let cap = (wrapped.len() as u64 * 64).max(1 << 20);
    assert!(err.to_string().contains(&format!("expands past {cap} bytes (64:1 past 1048576 bytes)")), "{err}");
    // With the default bounds the same file, which is a real (if padded) core, opens.
    assert!(Dump::from_source(Source::from_vec(Path::new("padded.gz"), wrapped)).is_ok());
}

/// A QEMU dump without VMCOREINFO (no `-device vmcoreinfo` or no fw_cfg driver): the page
/// tables come from CR3 in QEMU's CPU-state note.
#[test]
fn qemu_cr3_when_there_is_no_vmcoreinfo() {
    let mem = physical();
    let mut cpu = vec![0u8; 0x1b8];
    cpu[..4].copy_from_slice(&1u32.to_le_bytes());
    cpu[4..8].copy_from_slice(&0x1b8u32.to_le_bytes());
    let cr = 8 + 18 * 8 + 10 * 24;
    cpu[cr + 24..cr + 32].copy_from_slice(&(0x1000u64 | 0x5).to_le_bytes()); // CR3 with PCID bits
    let mut notes = note("CORE", 1, &prstatus(1, &regs()));
    notes.extend(note("QEMU", 0, &cpu));
    let k = kernel(
        "qemu-nocoreinfo.core",
        elf_core(&notes, &[Load { vaddr: 0, paddr: 0, data: mem.clone(), memsz: mem.len() as u64 }]),
    );
    assert!(k.vmcoreinfo().is_none());
    let (t, src) = k.page_tables().expect("page tables");
    assert_eq!((t.root, t.levels, src), (PhysAddr(0x1000), 4, fevlint_memory::RootSource::QemuCr3));
    assert_eq!(k.qemu_cpus()[0].cr3, 0x1005);
    let mut b = [0u8; 13];
    k.read(VirtAddr(VMALLOC), &mut b).expect("vmalloc through CR3");
    assert_eq!(&b, b"vmalloc page!");
    assert_eq!(k.format(), "QEMU ELF dump (physical)");
}

/// 5-level paging (`NUMBER(pgtable_l5_enabled)=1`): the direct map at ff11000000000000.
#[test]
fn five_level_page_tables() {
    let va: u64 = 0xff11_0000_0000_0000;
    let i = |level: u32| (va >> (12 + 9 * (level - 1))) & 511;
    let mut m = vec![0u8; 0x10000];
    let mut set = |table: usize, idx: u64, v: u64| {
        let at = table + idx as usize * 8;
        m[at..at + 8].copy_from_slice(&v.to_le_bytes());
    };
    set(0x1000, i(5), 0x2000 | 3);
    set(0x2000, i(4), 0x3000 | 3);
    set(0x3000, i(3), 0x83);
    m[0x7000..0x7005].copy_from_slice(b"five!");
    let info = vmcoreinfo(0x1000).replace("NUMBER(pgtable_l5_enabled)=0", "NUMBER(pgtable_l5_enabled)=1");
    let k = kernel(
        "l5.core",
        elf_core(
            &note("VMCOREINFO", 0, info.as_bytes()),
            &[Load { vaddr: 0, paddr: 0, data: m.clone(), memsz: m.len() as u64 }],
        ),
    );
    assert_eq!(k.page_tables().map(|(t, _)| t.levels), Some(5));
    let mut b = [0u8; 5];
    k.read(VirtAddr(va + 0x7000), &mut b).expect("5-level direct map");
    assert_eq!(&b, b"five!");
    // Canonical with 57 bits, not with 48: unmapped here (no entry), never misread.
    assert_eq!(k.read_u64(VirtAddr(0xff00_0000_0000_0000)).map_err(|f| f.kind), Err(FaultKind::Unmapped));
    assert_eq!(k.read_u64(VirtAddr(0x0100_0000_0000_0000)).map_err(|f| f.kind), Err(FaultKind::Unmapped));
}
