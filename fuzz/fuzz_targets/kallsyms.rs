//! Fuzzes the kallsyms decoder of a kernel image (`fevlint_load::kallsyms`): the input is
//! the image's `.rodata`, wrapped in a minimal ELF (with a `.text` address), where the
//! decoder searches the token table, the markers, the names and the offsets.
#![no_main]

use fevlint_load::elf::KernelElf;
use fevlint_load::kallsyms::kallsyms_text;
use fevlint_load::Blob;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

/// An ELF64 x86_64 file with sections: null, `.text` (NOBITS at the kernel's text
/// address), `.rodata` (the input), `.shstrtab`.
fn elf(rodata: &[u8]) -> Vec<u8> {
    let names = b"\0.text\0.rodata\0.shstrtab\0";
    let mut out = vec![0u8; 64];
    out[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    out[16..18].copy_from_slice(&2u16.to_le_bytes()); // ET_EXEC
    out[18..20].copy_from_slice(&62u16.to_le_bytes());
    out[20..24].copy_from_slice(&1u32.to_le_bytes());
    out[52..54].copy_from_slice(&64u16.to_le_bytes());
    out[58..60].copy_from_slice(&64u16.to_le_bytes()); // e_shentsize
    let rodata_at = out.len() as u64;
    out.extend_from_slice(rodata);
    let names_at = out.len() as u64;
    out.extend_from_slice(names);
    out.resize(out.len().next_multiple_of(8), 0);
    let shoff = out.len() as u64;
    let mut sh = |name: u32, ty: u32, flags: u64, addr: u64, off: u64, size: u64| {
        let mut s = vec![0u8; 64];
        s[..4].copy_from_slice(&name.to_le_bytes());
        s[4..8].copy_from_slice(&ty.to_le_bytes());
        s[8..16].copy_from_slice(&flags.to_le_bytes());
        s[16..24].copy_from_slice(&addr.to_le_bytes());
        s[24..32].copy_from_slice(&off.to_le_bytes());
        s[32..40].copy_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&s);
    };
    sh(0, 0, 0, 0, 0, 0);
    sh(1, 8, 6, 0xffff_ffff_8100_0000, 0, 0x100_0000);
    sh(7, 1, 2, 0xffff_ffff_8200_0000, rodata_at, rodata.len() as u64);
    sh(15, 3, 0, 0, names_at, names.len() as u64);
    out[40..48].copy_from_slice(&shoff.to_le_bytes());
    out[60..62].copy_from_slice(&4u16.to_le_bytes()); // e_shnum
    out[62..64].copy_from_slice(&3u16.to_le_bytes()); // e_shstrndx
    out
}

fuzz_target!(|data: &[u8]| {
    let Ok(image) = KernelElf::parse(Blob::from_vec(elf(data)), Path::new("fuzz.vmlinux")) else { return };
    for percpu in [None, Some(true), Some(false)] {
        if let Ok(text) = kallsyms_text(&image, percpu) {
            let _ = fevlint_load::symbols::SymbolTable::parse_kallsyms(text.as_bytes(), Path::new("fuzz"));
        }
    }
});
