//! Fuzzes a compressed kdump's bitmaps and page descriptors behind a valid header: a
//! 64-page dump is written with the memory tests' writer (`tests/common`), then its two
//! bitmaps and its descriptor table are replaced by the input (the rest of the input, if
//! any, overwrites the page data), and every page is read.
#![no_main]

#[path = "../../server/crates/memory/tests/common/mod.rs"]
mod common;

use common::{Codec, Kdump, BS};
use fevlint_memory::{KdumpFile, KernelCore, Memory, PhysAddr, PhysMemory, Source, VirtAddr};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::OnceLock;

/// The dump, and where its bitmaps start (their two halves and the descriptors follow).
fn template() -> &'static (Vec<u8>, usize) {
    static T: OnceLock<(Vec<u8>, usize)> = OnceLock::new();
    T.get_or_init(|| {
        let mut k = Kdump::new(64, Codec::Zlib);
        for pfn in [0u64, 1, 2, 9, 63] {
            k.pages.insert(pfn, vec![pfn as u8; BS]);
        }
        // Header block, one sub-header block: the bitmaps start at block 2.
        (k.write(), 2 * BS)
    })
}

fuzz_target!(|data: &[u8]| {
    let (dump, bitmaps) = template();
    let mut bytes = dump.clone();
    let end = (bitmaps + data.len()).min(bytes.len());
    bytes[*bitmaps..end].copy_from_slice(&data[..end - bitmaps]);
    let Ok(k) = KdumpFile::parse(Source::from_vec(Path::new("fuzz.kdump"), bytes)) else { return };
    let mut page = vec![0u8; BS];
    for pfn in 0..64 {
        let _ = k.read_page(pfn, &mut page);
    }
    let mut b = [0u8; 64];
    let _ = k.read_phys(PhysAddr(0x1ff0), &mut b);
    if let Ok(core) = KernelCore::from_kdump(k) {
        let _ = core.read(VirtAddr(0xffff_8880_0000_0000), &mut b);
    }
});
