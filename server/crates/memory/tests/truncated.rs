//! A dump truncated by another program while fevlint reads it (a rotation, a copy being
//! rewritten) must not kill fevlint: a shared map of the file would fault (SIGBUS) on the
//! next read. Dumps are read with `pread`, so a read past the new end is a fault the
//! reader reports, and what was read before stays valid.
//!
//! In-process, and alone in its binary: a SIGBUS would end the whole test process.

mod common;

use common::{elf_core, note, prstatus, vmcoreinfo, Codec, Kdump, Load};
use fevlint_memory::{Dump, Memory, VirtAddr};
use std::path::PathBuf;

const DIRECT: u64 = 0xffff_8880_0000_0000;
const PAGES: u64 = 8192; // 32 MiB: past any threshold below which a file is read whole

fn memory() -> Vec<u8> {
    let mut m: Vec<u8> = (0..PAGES * 4096).map(|i| (i % 251) as u8).collect();
    // Page tables at 0x1000: the direct map as one 1 GiB page at 0.
    m[0x1000..0x2000].fill(0);
    m[0x2000..0x3000].fill(0);
    let pml4 = 0x1000 + ((DIRECT >> 39) & 511) as usize * 8;
    m[pml4..pml4 + 8].copy_from_slice(&(0x2000u64 | 3).to_le_bytes());
    let pdpt = 0x2000 + ((DIRECT >> 30) & 511) as usize * 8;
    m[pdpt..pdpt + 8].copy_from_slice(&0x83u64.to_le_bytes());
    m
}

fn truncate_while_open(name: &str, bytes: &[u8], mem: &[u8]) {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("truncated-dump-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write dump");
    let Dump::Kernel(k) = Dump::open(&path).unwrap_or_else(|e| panic!("{name}: {e}")) else {
        panic!("{name}: not a kernel dump")
    };
    let last = (PAGES - 1) * 4096;
    let mut buf = vec![0u8; 4096];
    k.read(VirtAddr(DIRECT + last), &mut buf).unwrap_or_else(|f| panic!("{name}: {f:?}"));
    assert_eq!(buf[..], mem[last as usize..][..4096]);
    // Another program truncates the dump to its first pages while it is open.
    std::fs::OpenOptions::new().write(true).open(&path).expect("open").set_len(64 << 10).expect("truncate");
    // (Another page than the one read above, which a reader may keep.)
    let gone = k.read(VirtAddr(DIRECT + last - 4096), &mut buf);
    assert!(gone.is_err(), "{name}: a read past the new end is a fault: {gone:?}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_dump_truncated_while_open_faults_instead_of_crashing() {
    let mem = memory();
    let mut notes = note("CORE", 1, &prstatus(1, &[0; 27]));
    notes.extend(note("VMCOREINFO", 0, vmcoreinfo(0x1000).as_bytes()));
    let elf = elf_core(&notes, &[Load { vaddr: 0, paddr: 0, data: mem.clone(), memsz: mem.len() as u64 }]);
    truncate_while_open("vmcore.elf", &elf, &mem);
    let mut kdump = Kdump::new(PAGES, Codec::Raw);
    for pfn in 0..PAGES {
        kdump.pages.insert(pfn, mem[(pfn * 4096) as usize..][..4096].to_vec());
    }
    kdump.vmcoreinfo = vmcoreinfo(0x1000);
    kdump.notes = note("CORE", 1, &prstatus(1, &[0; 27]));
    truncate_while_open("vmcore.kdump", &kdump.write(), &mem);
}
