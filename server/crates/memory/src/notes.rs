//! ELF notes shared by every format: `NT_PRSTATUS`, `VMCOREINFO`, QEMU's CPU state,
//! `NT_FILE`. Compressed kdump files carry the same notes in their sub-header.

use crate::addr::VirtAddr;
use crate::regs::{parse_prstatus, Arch, Thread};
use std::collections::BTreeMap;

pub(crate) const NT_PRSTATUS: u32 = 1;
pub(crate) const NT_FILE: u32 = 0x4649_4c45;

/// One note: name without the NUL, type, descriptor, and the descriptor's offset within
/// the note area (for messages).
pub(crate) struct Note<'a> {
    pub name: &'a [u8],
    pub ty: u32,
    pub desc: &'a [u8],
}

/// Iterates notes in `data`; stops (returning the offset) at the first malformed one.
pub(crate) fn parse_notes(data: &[u8]) -> (Vec<Note<'_>>, Option<(usize, String)>) {
    let mut out = Vec::new();
    let mut off = 0usize;
    let align = |n: usize| n.checked_add(3).map(|v| v & !3);
    while off < data.len() {
        let Some(head) = data.get(off..off + 12) else {
            return (out, Some((off, "note header truncated".into())));
        };
        let namesz = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
        let descsz = u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize;
        let ty = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
        if namesz == 0 && descsz == 0 && ty == 0 {
            // Padding at the end of a note segment (kdump pads per-CPU note buffers).
            break;
        }
        let name_off = off + 12;
        let Some(desc_off) = align(namesz).and_then(|n| name_off.checked_add(n)) else {
            return (out, Some((off, "note name size overflows".into())));
        };
        let Some(end) = align(descsz).and_then(|n| desc_off.checked_add(n)) else {
            return (out, Some((off, "note descriptor size overflows".into())));
        };
        if desc_off.checked_add(descsz).is_none_or(|e| e > data.len()) {
            return (
                out,
                Some((off, format!("note of {namesz}+{descsz} bytes runs past the note area ({} bytes)", data.len()))),
            );
        }
        let mut name = &data[name_off..name_off + namesz];
        while let [rest @ .., 0] = name {
            name = rest;
        }
        out.push(Note { name, ty, desc: &data[desc_off..desc_off + descsz] });
        off = end.min(data.len());
    }
    (out, None)
}

/// What the notes of a dump say.
#[derive(Clone, Debug, Default)]
pub(crate) struct NoteSet {
    pub threads: Vec<Thread>,
    pub vmcoreinfo: Option<VmcoreInfo>,
    pub qemu: Vec<QemuCpuState>,
    pub files: Vec<FileMapping>,
}

impl NoteSet {
    pub fn collect(notes: &[Note<'_>], arch: Arch) -> NoteSet {
        let mut set = NoteSet::default();
        for n in notes {
            match (n.name, n.ty) {
                (b"CORE", NT_PRSTATUS) => {
                    let index = set.threads.len();
                    if let Some(t) = parse_prstatus(n.desc, arch, index) {
                        set.threads.push(t);
                    }
                }
                (b"VMCOREINFO", _) => set.vmcoreinfo = Some(VmcoreInfo::parse(n.desc)),
                (b"QEMU", _) => {
                    if let Some(q) = QemuCpuState::parse(n.desc) {
                        set.qemu.push(q);
                    }
                }
                (b"CORE", NT_FILE) => set.files = parse_nt_file(n.desc, arch),
                _ => {}
            }
        }
        set
    }
}

/// The `VMCOREINFO` note: `KEY=value` lines written by the crashed kernel.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VmcoreInfo {
    entries: BTreeMap<String, String>,
}

impl VmcoreInfo {
    /// Parses the note text; lines without `=` are ignored, later keys win.
    pub fn parse(text: &[u8]) -> VmcoreInfo {
        let mut entries = BTreeMap::new();
        let text = match text.iter().position(|&b| b == 0) {
            Some(n) => &text[..n],
            None => text,
        };
        for line in text.split(|&b| b == b'\n') {
            let Some(eq) = line.iter().position(|&b| b == b'=') else { continue };
            let key = String::from_utf8_lossy(&line[..eq]).into_owned();
            let value = String::from_utf8_lossy(&line[eq + 1..]).trim_end().to_string();
            entries.insert(key, value);
        }
        VmcoreInfo { entries }
    }

    /// The raw value of `key` (`OSRELEASE`, `SYMBOL(swapper_pg_dir)`, ...).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }

    pub fn entries(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn osrelease(&self) -> Option<&str> {
        self.get("OSRELEASE")
    }

    /// `BUILD-ID` as lowercase hex (trust it with care: some stable kernels carry a broken
    /// backport, e.g. 6.1.113-6.1.118).
    pub fn build_id(&self) -> Option<&str> {
        self.get("BUILD-ID")
    }

    /// `KERNELOFFSET` (hex, no prefix): the KASLR slide to add to vmlinux addresses.
    pub fn kernel_offset(&self) -> Option<u64> {
        u64::from_str_radix(self.get("KERNELOFFSET")?, 16).ok()
    }

    pub fn page_size(&self) -> Option<u64> {
        self.get("PAGESIZE")?.parse().ok()
    }

    /// `SYMBOL(name)`: a runtime address (KASLR applied), hex.
    pub fn symbol(&self, name: &str) -> Option<VirtAddr> {
        u64::from_str_radix(self.get(&format!("SYMBOL({name})"))?, 16).ok().map(VirtAddr)
    }

    /// `NUMBER(name)`: decimal, possibly negative (two's complement kept).
    pub fn number(&self, name: &str) -> Option<i64> {
        let v = self.get(&format!("NUMBER({name})"))?;
        v.parse::<i64>().ok().or_else(|| v.parse::<u64>().ok().map(|u| u as i64))
    }

    /// `phys_base` as x86_64 writes it (`NUMBER(phys_base)`).
    pub fn phys_base(&self) -> Option<u64> {
        self.number("phys_base").map(|n| n as u64)
    }
}

/// QEMU's per-vCPU `QEMU` note (`QEMUCPUState`, x86): the registers a kdump would not have,
/// notably CR3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QemuCpuState {
    pub version: u32,
    pub rip: u64,
    pub rsp: u64,
    pub cr0: u64,
    pub cr3: u64,
    pub cr4: u64,
}

impl QemuCpuState {
    fn parse(d: &[u8]) -> Option<QemuCpuState> {
        // QEMU writes the same 64-bit layout for i386 and x86_64 guests
        // (target/i386/arch_dump.c): version, size, 16 GPRs (rax rbx rcx rdx rsi rdi rsp
        // rbp r8-r15), rip, rflags, 10 segments of 24 bytes (cs ds es fs gs ss ldt tr gdt
        // idt), cr[5].
        let u32_at = |o: usize| d.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        let u64_at = |o: usize| d.get(o..o + 8).and_then(|b| b.try_into().ok()).map(u64::from_le_bytes);
        let cr = 8 + 18 * 8 + 10 * 24;
        Some(QemuCpuState {
            version: u32_at(0)?,
            rip: u64_at(8 + 16 * 8)?,
            rsp: u64_at(8 + 6 * 8)?,
            cr0: u64_at(cr)?,
            cr3: u64_at(cr + 3 * 8)?,
            cr4: u64_at(cr + 4 * 8)?,
        })
    }
}

/// One `NT_FILE` entry: a file mapped into the process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMapping {
    /// The mapping covers `start..end` of the process's address space.
    pub start: VirtAddr,
    pub end: VirtAddr,
    /// Offset in the file, in bytes.
    pub file_offset: u64,
    pub path: String,
}

fn parse_nt_file(d: &[u8], arch: Arch) -> Vec<FileMapping> {
    let w = if arch == Arch::X86_64 { 8 } else { 4 };
    let word = |o: usize| -> Option<u64> {
        let b = d.get(o..o + w)?;
        Some(if w == 8 {
            u64::from_le_bytes(b.try_into().ok()?)
        } else {
            u64::from(u32::from_le_bytes(b.try_into().ok()?))
        })
    };
    let (Some(count), Some(page_size)) = (word(0), word(w)) else { return Vec::new() };
    // The count is untrusted: at most as many entries as fit in the note.
    let count = count.min((d.len() / (3 * w)) as u64) as usize;
    let mut names = d.get(2 * w + count * 3 * w..).unwrap_or(&[]).split(|&b| b == 0);
    let mut out = Vec::new();
    for i in 0..count {
        let o = 2 * w + i * 3 * w;
        let (Some(start), Some(end), Some(pgoff)) = (word(o), word(o + w), word(o + 2 * w)) else { break };
        let path = names.next().map(|n| String::from_utf8_lossy(n).into_owned()).unwrap_or_default();
        out.push(FileMapping {
            start: VirtAddr(start),
            end: VirtAddr(end),
            file_offset: pgoff.saturating_mul(page_size),
            path,
        });
    }
    out
}
