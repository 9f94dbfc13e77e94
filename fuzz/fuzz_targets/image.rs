//! Fuzzes the kernel-image readers: bzImage header and payload, ELF, decompressors.
#![no_main]

use fevlint_load::{bzimage, decompress, elf::KernelElf, Blob, Content, Limits, Origin};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz");
    // A small cap: a decompression bomb must stop at it, not exhaust memory.
    let limits = Limits { max_output: 16 << 20, ..Limits::default() };
    let _ = bzimage::parse_header(data, path);
    let _ = bzimage::extract_vmlinux(data, path, &limits);
    let _ = decompress::decompress_auto(data, &limits, Origin::file(path));
    // With the first-bytes checks the loader uses.
    for content in [Content::KernelImage, Content::Text, Content::Btf] {
        let _ = decompress::decompress_auto_as(data, content, &limits, Origin::file(path));
    }
    let _ = bzimage::extract_payload(data, path, Content::Elf, &limits);
    // Streamed (as into the cache file) rather than into memory.
    if let Some(codec) = decompress::detect(data) {
        let _ = decompress::decompress_to(
            data,
            codec,
            Content::KernelImage,
            &limits,
            Origin::file(path),
            &mut std::io::sink(),
        );
    }
    if let Ok(elf) = KernelElf::parse(Blob::from_vec(data.to_vec()), path) {
        let _ = elf.arch();
        let _ = elf.build_id();
        let _ = elf.btf();
        let _ = elf.ftrace_sites(None);
    }
});
