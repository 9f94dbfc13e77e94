//! Fuzzes the kernel-image readers: bzImage header and payload, ELF, decompressors.
#![no_main]

use fevlint::kernel::load::{bzimage, decompress, elf::KernelElf, Blob, Limits, Origin};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz");
    // A small cap: a decompression bomb must stop at it, not exhaust memory.
    let limits = Limits { max_output: 16 << 20, ..Limits::default() };
    let _ = bzimage::parse_header(data, path);
    let _ = bzimage::extract_vmlinux(data, path, &limits);
    let _ = decompress::decompress_auto(data, &limits, Origin::file(path));
    if let Ok(elf) = KernelElf::parse(Blob::from_vec(data.to_vec()), path) {
        let _ = elf.arch();
        let _ = elf.build_id();
        let _ = elf.btf();
        let _ = elf.ftrace_sites(None);
    }
});
