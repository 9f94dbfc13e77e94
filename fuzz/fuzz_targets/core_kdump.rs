//! Fuzzes the compressed kdump reader (headers, bitmaps, descriptors, zlib/lzo/snappy/zstd
//! pages) and the flattened-stream index, with the page-table walk on top.
#![no_main]

use fevlint_memory::{FlatIndex, KdumpFile, KernelCore, Memory, PhysAddr, PhysMemory, Source, VirtAddr};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fn exercise(src: Source) {
    let Ok(k) = KdumpFile::parse(src) else { return };
    let mut page = vec![0u8; k.header().block_size as usize];
    for pfn in 0..k.header().max_mapnr.min(16) {
        let _ = k.read_page(pfn, &mut page);
    }
    let mut b = [0u8; 64];
    let _ = k.read_phys(PhysAddr(0x1ff0), &mut b);
    if let Ok(core) = KernelCore::from_kdump(k) {
        for a in [0xffff_8880_0000_0000u64, 0xffff_ffff_8100_0000, 0xffff_c900_0000_0000] {
            let _ = core.read(VirtAddr(a), &mut b);
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let src = Source::from_vec(Path::new("fuzz.kdump"), data.to_vec());
    if let Ok(flat) = FlatIndex::build(src.clone()) {
        exercise(Source::flat(flat));
    }
    exercise(src);
});
