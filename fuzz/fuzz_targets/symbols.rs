//! Fuzzes the symbol-table readers (System.map, /proc/kallsyms) and their lookups: errors
//! naming the line, never a panic or an allocation sized by the input's numbers.
#![no_main]

use fevlint_load::symbols::{SymbolTable, VirtAddr};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz");
    for table in [SymbolTable::parse_system_map(data, path), SymbolTable::parse_kallsyms(data, path)] {
        let Ok(t) = table else { continue };
        let _ = t.len();
        let _ = t.modules();
        for s in t.iter().take(64) {
            let _ = t.first(s.name);
            let _ = t.addr_of(s.name);
            let _ = t.lookup_text(s.addr);
            let _ = t.containing(VirtAddr(s.addr.0.wrapping_add(1)));
        }
        let _ = t.iter_by_addr().count();
        let _ = t.by_name("vfs_read").count();
        let _ = t.containing(VirtAddr(u64::MAX));
    }
});
