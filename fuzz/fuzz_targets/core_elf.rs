//! Fuzzes the ELF core reader (kernel and user cores, notes, segments) and the kernel
//! page-table walk over whatever physical memory the input describes.
#![no_main]

use fevlint_memory::{Dump, ElfCore, KernelCore, Memory, PhysMemory, Source, VirtAddr};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let src = Source::from_vec(Path::new("fuzz.core"), data.to_vec());
    if let Ok(core) = ElfCore::parse(src.clone()) {
        let mut b = [0u8; 64];
        for s in core.segments().iter().take(4) {
            let _ = core.read(s.vaddr, &mut b);
            if let Some(p) = s.paddr {
                let _ = core.read_phys(p, &mut b);
            }
        }
        let _ = core.threads();
        let _ = core.files();
        if let Ok(k) = KernelCore::from_elf(core) {
            for a in [0xffff_8880_0000_0000u64, 0xffff_ffff_8100_0000, 0xffff_c900_0000_0000, 0x40_0000] {
                let _ = k.read(VirtAddr(a), &mut b);
            }
        }
    }
    let _ = Dump::from_source(src);
});
