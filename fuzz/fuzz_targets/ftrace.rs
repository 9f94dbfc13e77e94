//! Fuzzes the tracefs list readers: available_filter_functions and the kprobe blacklist.
#![no_main]

use fevlint_load::symbols::{FilterFunctions, KprobeBlacklist, VirtAddr};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz");
    if let Ok(f) = FilterFunctions::parse(data, path) {
        let _ = (f.len(), f.distinct(), f.invalid_lines());
        for (name, _) in f.iter().take(64) {
            assert!(f.contains(name) && f.count(name) >= 1);
        }
    }
    if let Ok(b) = KprobeBlacklist::parse(data, path) {
        for e in b.entries().iter().take(64) {
            let _ = b.contains_name(&e.name);
        }
        let _ = b.covering(VirtAddr(0xffff_ffff_8100_0000)).count();
    }
});
