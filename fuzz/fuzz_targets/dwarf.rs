//! Fuzzes the ELF reader and the DWARF reader behind it: unit headers, the name index,
//! type and function lookups (no index cache on disk).
#![no_main]

use fevlint_dwarf::Dwarf;
use fevlint_load::{elf::KernelElf, Blob};
use fevlint_types::model::{TypeNamespace, TypeRef, TypeSource};
use libfuzzer_sys::fuzz_target;
use std::path::Path;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let Ok(elf) = KernelElf::parse(Blob::from_vec(data.to_vec()), Path::new("fuzz")) else { return };
    let _ = elf.symbols();
    let Ok(dwarf) = Dwarf::new(Arc::new(elf)) else { return };
    let dwarf = dwarf.with_cache_dir(None);
    let _ = dwarf.describe();
    if let Ok(types) = dwarf.find_type(TypeNamespace::Struct, "file") {
        for t in types.into_iter().take(8) {
            let _ = dwarf.get(t);
            let _ = dwarf.size_of(t);
        }
    }
    let _ = dwarf.get(TypeRef(0x10));
    let _ = dwarf.functions("vfs_read");
    if let Ok(names) = dwarf.function_names() {
        for n in names.iter().take(8) {
            let _ = dwarf.functions(n);
        }
    }
});
