//! The dialect from the kernel image itself: the README string (`readme_msg`) embedded in
//! the fixtures' Debian 6.12.117 vmlinuz equals the README the booted kernel printed
//! (`data/readme-6.12.117-amd64.txt`), and gives the same dialect.

use fevlint_mainline::{readme_from_image, readmes, Dialect, KernelVersion};

/// The zstd payload of a bzImage (`payload_offset`/`payload_length` of the setup header),
/// decompressed.
fn vmlinux(bz: &[u8]) -> Vec<u8> {
    let u32_at = |o: usize| u32::from_le_bytes([bz[o], bz[o + 1], bz[o + 2], bz[o + 3]]) as usize;
    let setup_sects = match bz[0x1f1] {
        0 => 4,
        n => usize::from(n),
    };
    let start = (setup_sects + 1) * 512 + u32_at(0x248);
    let payload = &bz[start..start + u32_at(0x24c)];
    assert_eq!(&payload[..4], &[0x28, 0xb5, 0x2f, 0xfd], "a zstd payload");
    let mut out = Vec::new();
    let mut d = zstd::stream::read::Decoder::new(payload).expect("zstd").single_frame();
    std::io::copy(&mut d, &mut out).expect("decompress");
    out
}

#[test]
fn the_image_carries_the_readme_the_kernel_prints() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../fixtures/kernels/6.12.117+deb12-amd64/vmlinuz");
    let image = vmlinux(&std::fs::read(path).expect("vmlinuz"));
    let readme = readme_from_image(&image).expect("readme_msg in the image");
    assert_eq!(readme, readmes::DEBIAN_6_12_117_AMD64);
    let d = Dialect::new(KernelVersion::new(6, 12, 117), readme).expect("dialect");
    assert_eq!(d, Dialect::debian_6_12_117());
}
