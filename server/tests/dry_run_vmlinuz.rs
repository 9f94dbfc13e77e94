//! The dry run with a bare `vmlinuz` as the kernel: the image carries no symbol table,
//! but its own kallsyms tables (what `/proc/kallsyms` prints) name `$symbol` addresses
//! and `%pS` values. The dump is a small ELF vmcore written here for Debian's 6.12.117
//! (fixture): its VMCOREINFO has the image's build-id, one segment holds the bytes at
//! `linux_banner`, and the CPU's `%di` points into `vfs_read`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RELEASE: &str = "6.12.117+deb12-amd64";

fn kernel_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(RELEASE)
}

fn system_map() -> HashMap<String, u64> {
    fevlint_testkit::system_map(RELEASE)
}

fn note(name: &str, ty: u32, desc: &[u8]) -> Vec<u8> {
    let mut n = Vec::new();
    n.extend_from_slice(&(name.len() as u32 + 1).to_le_bytes());
    n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    n.extend_from_slice(&ty.to_le_bytes());
    n.extend_from_slice(name.as_bytes());
    n.push(0);
    n.resize(n.len().next_multiple_of(4), 0);
    n.extend_from_slice(desc);
    n.resize(n.len().next_multiple_of(4), 0);
    n
}

/// An ELF64 x86_64 core: one PT_NOTE, then one PT_LOAD of `data` at `vaddr`.
fn elf_core(notes: &[u8], vaddr: u64, data: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 64 + 2 * 56];
    out[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    out[16..18].copy_from_slice(&4u16.to_le_bytes());
    out[18..20].copy_from_slice(&62u16.to_le_bytes());
    out[20..24].copy_from_slice(&1u32.to_le_bytes());
    out[32..40].copy_from_slice(&64u64.to_le_bytes());
    out[52..54].copy_from_slice(&64u16.to_le_bytes());
    out[54..56].copy_from_slice(&56u16.to_le_bytes());
    out[56..58].copy_from_slice(&2u16.to_le_bytes());
    let notes_at = out.len() as u64;
    let data_at = notes_at + notes.len() as u64;
    for (i, (ty, off, va, len)) in
        [(4u32, notes_at, 0, notes.len()), (1, data_at, vaddr, data.len())].into_iter().enumerate()
    {
        let p = 64 + 56 * i;
        out[p..p + 4].copy_from_slice(&ty.to_le_bytes());
        out[p + 8..p + 16].copy_from_slice(&off.to_le_bytes());
        out[p + 16..p + 24].copy_from_slice(&va.to_le_bytes());
        out[p + 24..p + 32].copy_from_slice(&u64::MAX.to_le_bytes());
        out[p + 32..p + 40].copy_from_slice(&(len as u64).to_le_bytes());
        out[p + 40..p + 48].copy_from_slice(&(len as u64).to_le_bytes());
    }
    out.extend_from_slice(notes);
    out.extend_from_slice(data);
    out
}

#[test]
fn a_vmlinuz_names_symbols_from_its_own_kallsyms() {
    let vmlinuz = kernel_dir().join("vmlinuz");
    let kernel = fevlint_kernel::Kernel::open(&vmlinuz).expect("vmlinuz");
    let build_id = kernel.inputs().elf.as_ref().and_then(|e| e.value.build_id_hex()).expect("a build-id");
    let map = system_map();
    let (banner, vfs_read) = (map["linux_banner"], map["vfs_read"]);
    let info = format!("OSRELEASE={RELEASE}\nBUILD-ID={build_id}\nPAGESIZE=4096\nKERNELOFFSET=0\n");
    let mut regs = [0u64; 27];
    regs[14] = vfs_read + 4; // di
    regs[16] = vfs_read; // ip
    regs[19] = banner + 0x100; // sp: a return address there reads as 0
    let mut prstatus = vec![0u8; 336];
    prstatus[32..36].copy_from_slice(&1i32.to_le_bytes());
    for (i, r) in regs.iter().enumerate() {
        prstatus[112 + i * 8..120 + i * 8].copy_from_slice(&r.to_le_bytes());
    }
    let mut notes = note("CORE", 1, &prstatus);
    notes.extend(note("VMCOREINFO", 0, info.as_bytes()));
    let mut page = vec![0u8; 0x200];
    page[..8].copy_from_slice(&0x1122_3344_5566_7788u64.to_le_bytes());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dry-run-vmlinuz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let core = dir.join("vmcore");
    std::fs::write(&core, elf_core(&notes, banner, &page)).expect("core");
    let script = dir.join("t.fev");
    std::fs::write(&script, "vfs_read(symbol f, x64 banner=$linux_banner)\n").expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["dry-run", "--kernel"])
        .arg(&vmlinuz)
        .arg("--core")
        .arg(&core)
        .arg(&script)
        .output()
        .expect("fevlint");
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    // `%pS` of `%di` names the function as the kernel's kallsyms does, and `$linux_banner`
    // is the address the image's tables give (the bytes the dump holds there).
    let line = stdout.lines().next().unwrap_or_default();
    assert!(line.contains("(f=vfs_read+0x4/0x"), "{stdout}{stderr}");
    assert!(line.contains("banner=1122334455667788)"), "{stdout}{stderr}");
    assert!(!stdout.contains("note:") && !stderr.contains("warning"), "{stdout}{stderr}");
}

/// A kernel model with no symbols at all (BTF alone) is named as such before any
/// output, not left to print `$symbol` reads as 0 silently.
#[test]
fn a_kernel_without_symbols_says_so_up_front() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dry-run-nosyms-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let btf = dir.join("vmlinux.btf");
    let raw = std::fs::read(kernel_dir().join("vmlinux.btf.zst")).expect("btf");
    std::fs::write(&btf, zstd::decode_all(raw.as_slice()).expect("zstd")).expect("btf");
    let info = format!("OSRELEASE={RELEASE}\nPAGESIZE=4096\nKERNELOFFSET=0\n");
    let mut prstatus = vec![0u8; 336];
    prstatus[112 + 14 * 8..120 + 14 * 8].copy_from_slice(&0xffff_ffff_8100_0000u64.to_le_bytes());
    let mut notes = note("CORE", 1, &prstatus);
    notes.extend(note("VMCOREINFO", 0, info.as_bytes()));
    let core = dir.join("vmcore");
    std::fs::write(&core, elf_core(&notes, 0xffff_ffff_8100_0000, &[0u8; 0x100])).expect("core");
    let script = dir.join("t.fev");
    std::fs::write(&script, "vfs_read(x64 banner=$linux_banner)\n").expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["dry-run", "--kernel"])
        .arg(&btf)
        .arg("--core")
        .arg(&core)
        .arg(&script)
        .output()
        .expect("fevlint");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with(&format!("warning: {} has no symbols", btf.display())), "{stderr}");
}
