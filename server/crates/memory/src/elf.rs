//! ELF cores: kernel (`/proc/vmcore`, `makedumpfile -E`, QEMU `dump-guest-memory`,
//! `/proc/kcore`) and user (gdb `gcore`, kernel-written). Program headers and notes are
//! parsed at open; segment contents are read on demand.

use crate::addr::{PhysAddr, VirtAddr};
use crate::error::{Error, Fault, FaultKind};
use crate::notes::{parse_notes, FileMapping, NoteSet, QemuCpuState, VmcoreInfo};
use crate::regs::{Arch, Thread};
use crate::source::Source;
use crate::Memory;

const PT_LOAD: u32 = 1;
const PT_NOTE: u32 = 4;
const EM_386: u16 = 3;
const EM_X86_64: u16 = 62;
const PN_XNUM: u64 = 0xffff;
const VSYSCALL: u64 = 0xffff_ffff_ff60_0000;
/// Notes larger than this are refused (a kdump with thousands of CPUs has a few MB).
const MAX_NOTES: u64 = 64 << 20;

/// One `PT_LOAD`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: VirtAddr,
    /// `None` when the writer did not know it (`p_paddr` of all ones: `/proc/kcore`
    /// vmalloc ranges).
    pub paddr: Option<PhysAddr>,
    pub offset: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub flags: u32,
}

/// A segment's physical address, for the list that holds only segments that have one.
fn phys_key(s: &Segment) -> u64 {
    s.paddr.map_or(0, |p| p.0)
}

/// A parsed ELF core file.
#[derive(Debug)]
pub struct ElfCore {
    src: Source,
    arch: Arch,
    /// Sorted by `vaddr`; segments with `vaddr == 0` (QEMU without paging) left out.
    by_vaddr: Vec<Segment>,
    /// Sorted by `paddr`; segments without a physical address left out.
    by_paddr: Vec<Segment>,
    segments: Vec<Segment>,
    notes: NoteSet,
}

fn rd16(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn rd32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}
fn rd64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

impl ElfCore {
    /// Parses the ELF header, program headers and notes of `src`.
    pub fn parse(src: Source) -> Result<ElfCore, Error> {
        let mut ident = [0u8; 64];
        let n = src.len().min(64) as usize;
        src.read_exact_at(0, &mut ident[..n])?;
        if n < 52 || &ident[..4] != b"\x7fELF" {
            return Err(src.malformed(0, "ELF header truncated"));
        }
        let class64 = match ident[4] {
            1 => false,
            2 => true,
            c => return Err(src.malformed(4, format!("ELF class {c} (neither 32 nor 64 bits)"))),
        };
        if ident[5] != 1 {
            return Err(src.malformed(5, "big-endian ELF: only little-endian (x86) cores are read"));
        }
        if class64 && n < 64 {
            return Err(src.malformed(0, "ELF64 header truncated"));
        }
        let e_type = rd16(&ident, 16);
        if e_type != 4 {
            return Err(src.malformed(16, format!("ELF type {e_type} is not a core file (ET_CORE = 4)")));
        }
        let machine = rd16(&ident, 18);
        let arch = match machine {
            EM_X86_64 => Arch::X86_64,
            EM_386 => Arch::I386,
            m => return Err(src.malformed(18, format!("ELF machine {m}: only x86_64 and i386 cores are read"))),
        };
        let (phoff, phentsize, mut phnum, shoff) = if class64 {
            (rd64(&ident, 32), u64::from(rd16(&ident, 54)), u64::from(rd16(&ident, 56)), rd64(&ident, 40))
        } else {
            (
                u64::from(rd32(&ident, 28)),
                u64::from(rd16(&ident, 42)),
                u64::from(rd16(&ident, 44)),
                u64::from(rd32(&ident, 32)),
            )
        };
        let want_ent = if class64 { 56 } else { 32 };
        if phnum == PN_XNUM {
            // More than 65534 program headers (QEMU with paging): the count is in the first
            // section header's sh_info.
            let info_off = shoff.checked_add(if class64 { 44 } else { 28 });
            phnum = match info_off {
                Some(o) => u64::from(src.u32_at(o, false)?),
                None => return Err(src.malformed(40, "e_shoff overflows")),
            };
        }
        if phnum > 0 && phentsize != want_ent {
            return Err(
                src.malformed(if class64 { 54 } else { 42 }, format!("e_phentsize {phentsize}, expected {want_ent}"))
            );
        }
        let table_len = phnum.checked_mul(phentsize).filter(|&l| phoff.checked_add(l).is_some_and(|e| e <= src.len()));
        let Some(table_len) = table_len else {
            return Err(src.malformed(
                phoff,
                format!(
                    "{phnum} program headers of {phentsize} bytes run past the end of the file ({} bytes)",
                    src.len()
                ),
            ));
        };
        let table = src.vec_at(phoff, table_len)?;
        let mut segments = Vec::new();
        let mut note_bytes = Vec::new();
        for (i, ph) in table.chunks_exact(phentsize.max(1) as usize).enumerate() {
            let at = phoff + i as u64 * phentsize;
            let (p_type, flags, offset, vaddr, paddr, filesz, memsz) = if class64 {
                (rd32(ph, 0), rd32(ph, 4), rd64(ph, 8), rd64(ph, 16), rd64(ph, 24), rd64(ph, 32), rd64(ph, 40))
            } else {
                let p = |o| u64::from(rd32(ph, o));
                let paddr = if rd32(ph, 12) == u32::MAX { u64::MAX } else { p(12) };
                (rd32(ph, 0), rd32(ph, 24), p(4), p(8), paddr, p(16), p(20))
            };
            if p_type != PT_LOAD && p_type != PT_NOTE {
                continue;
            }
            if offset.checked_add(filesz).is_none_or(|e| e > src.len()) {
                return Err(src.malformed(
                    at,
                    format!(
                        "program header {i}: {filesz:#x} bytes at file offset {offset:#x} run past the end of the file ({:#x} bytes): truncated dump",
                        src.len()
                    ),
                ));
            }
            if p_type == PT_NOTE {
                if note_bytes.len() as u64 + filesz > MAX_NOTES {
                    return Err(src.malformed(at, format!("notes larger than {MAX_NOTES} bytes")));
                }
                let mut part = src.vec_at(offset, filesz)?;
                // Each PT_NOTE is a whole number of 4-aligned notes.
                part.resize(part.len().next_multiple_of(4), 0);
                note_bytes.extend_from_slice(&part);
                continue;
            }
            if filesz > memsz {
                return Err(src.malformed(at, format!("program header {i}: p_filesz {filesz:#x} > p_memsz {memsz:#x}")));
            }
            if vaddr.checked_add(memsz).is_none() || (paddr != u64::MAX && paddr.checked_add(memsz).is_none()) {
                return Err(src.malformed(
                    at,
                    format!(
                        "program header {i}: segment at {vaddr:#x} (phys {paddr:#x}) of {memsz:#x} bytes wraps around"
                    ),
                ));
            }
            let paddr = Some(PhysAddr(paddr)).filter(|p| p.0 != u64::MAX);
            segments.push(Segment { vaddr: VirtAddr(vaddr), paddr, offset, filesz, memsz, flags });
        }
        let mut by_vaddr: Vec<Segment> = segments.iter().copied().filter(|s| s.vaddr.0 != 0 && s.memsz > 0).collect();
        by_vaddr.sort_by_key(|s| s.vaddr);
        for w in by_vaddr.windows(2) {
            if w[0].vaddr.0 + w[0].memsz > w[1].vaddr.0 {
                return Err(src.malformed(
                    phoff,
                    format!(
                        "segments overlap: [{:#x}, {:#x}) and [{:#x}, {:#x})",
                        w[0].vaddr,
                        w[0].vaddr.0 + w[0].memsz,
                        w[1].vaddr,
                        w[1].vaddr.0 + w[1].memsz
                    ),
                ));
            }
        }
        // Physical ranges may overlap in a kdump vmcore (the kernel-text segment repeats
        // part of a RAM segment); the lookup takes the first by address.
        let mut sorted: Vec<(PhysAddr, Segment)> =
            segments.iter().filter_map(|s| Some((s.paddr?, *s))).filter(|(_, s)| s.memsz > 0).collect();
        sorted.sort_by_key(|(p, s)| (*p, std::cmp::Reverse(s.memsz)));
        // Clip overlaps (QEMU with paging writes one segment per virtual mapping, so the
        // direct map, the kernel text and vmalloc pages repeat physical ranges): each
        // physical byte then has one segment, and a binary search finds it.
        let mut by_paddr: Vec<Segment> = Vec::with_capacity(sorted.len());
        let mut covered = 0u64;
        for (paddr, mut s) in sorted {
            let end = paddr.0 + s.memsz;
            if !by_paddr.is_empty() {
                if end <= covered {
                    continue;
                }
                let skip = covered.saturating_sub(paddr.0);
                s.paddr = Some(PhysAddr(paddr.0 + skip));
                s.memsz -= skip;
                s.offset += skip.min(s.filesz);
                s.filesz = s.filesz.saturating_sub(skip);
            }
            covered = covered.max(end);
            by_paddr.push(s);
        }
        let (notes, bad) = parse_notes(&note_bytes);
        if let Some((off, what)) = bad {
            // Notes are located by program headers, so the offset is within the notes.
            return Err(src.malformed(off as u64, format!("in the PT_NOTE data, byte {off}: {what}")));
        }
        let notes = NoteSet::collect(&notes, arch);
        Ok(ElfCore { src, arch, by_vaddr, by_paddr, segments, notes })
    }

    pub fn source(&self) -> &Source {
        &self.src
    }

    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// All `PT_LOAD` segments in file order.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    pub fn threads(&self) -> &[Thread] {
        &self.notes.threads
    }

    pub fn vmcoreinfo(&self) -> Option<&VmcoreInfo> {
        self.notes.vmcoreinfo.as_ref()
    }

    pub fn qemu_cpus(&self) -> &[QemuCpuState] {
        &self.notes.qemu
    }

    /// `NT_FILE`: the files mapped into a user process.
    pub fn files(&self) -> &[FileMapping] {
        &self.notes.files
    }

    /// Whether this is a kernel dump: it has `VMCOREINFO` or QEMU CPU notes, or its
    /// segments are in the x86_64 kernel half (`/proc/kcore` of a kernel without
    /// VMCOREINFO in kcore).
    pub fn is_kernel(&self) -> bool {
        self.notes.vmcoreinfo.is_some()
            || !self.notes.qemu.is_empty()
            || (self.arch == Arch::X86_64
                && self.notes.files.is_empty()
                // User cores carry the vsyscall page, the one kernel-half user mapping.
                && self.by_vaddr.iter().any(|s| s.vaddr.0 >= 0xffff_8000_0000_0000 && s.vaddr.0 != VSYSCALL))
    }

    /// Whether any segment carries a kernel virtual address (QEMU without paging writes
    /// `p_vaddr = p_paddr`, which is not one).
    pub fn has_virtual(&self) -> bool {
        self.by_vaddr.iter().any(|s| s.vaddr.0 >= 0xffff_8000_0000_0000 && s.vaddr.0 != VSYSCALL)
    }

    /// Reads `buf` from the segments `segs` sorted by `key`; on failure, the first
    /// address (in `key`'s space) that could not be read.
    fn read_segments(
        &self,
        segs: &[Segment],
        key: fn(&Segment) -> u64,
        addr: u64,
        buf: &mut [u8],
        absent: FaultKind,
    ) -> Result<(), Fault<u64>> {
        let mut done = 0usize;
        while done < buf.len() {
            let a = addr.wrapping_add(done as u64);
            let i = segs.partition_point(|s| key(s) <= a);
            let seg = i.checked_sub(1).map(|i| &segs[i]).filter(|s| a - key(s) < s.memsz);
            let Some(seg) = seg else { return Err(Fault::new(a, absent)) };
            let rel = a - key(seg);
            if rel >= seg.filesz {
                return Err(Fault::new(a, FaultKind::NotInDump));
            }
            let n = ((seg.filesz - rel) as usize).min(buf.len() - done);
            let out = &mut buf[done..done + n];
            match self.src.slice(seg.offset + rel, n as u64) {
                Some(s) => out.copy_from_slice(s),
                None => self.src.read_exact_at(seg.offset + rel, out).map_err(|_| Fault::new(a, FaultKind::Corrupt))?,
            }
            done += n;
        }
        Ok(())
    }

    /// Reads by virtual address through the segments' `p_vaddr` (user cores, kcore, QEMU
    /// with paging, the direct-map and text segments of a kdump vmcore).
    pub fn read_virtual(&self, addr: VirtAddr, buf: &mut [u8]) -> Result<(), Fault> {
        self.read_segments(&self.by_vaddr, |s| s.vaddr.0, addr.0, buf, FaultKind::Unmapped)
            .map_err(|f| Fault::new(VirtAddr(f.addr), f.kind))
    }

    /// Reads by physical address through the segments' `p_paddr`.
    pub fn read_physical(&self, addr: PhysAddr, buf: &mut [u8]) -> Result<(), Fault<PhysAddr>> {
        self.read_segments(&self.by_paddr, phys_key, addr.0, buf, FaultKind::OutsidePhysical)
            .map_err(|f| Fault::new(PhysAddr(f.addr), f.kind))
    }

    /// Whether a segment with a virtual address covers `addr`.
    pub(crate) fn covers_virtual(&self, addr: VirtAddr) -> bool {
        let i = self.by_vaddr.partition_point(|s| s.vaddr <= addr);
        i.checked_sub(1).is_some_and(|i| addr.offset_from(self.by_vaddr[i].vaddr) < self.by_vaddr[i].memsz)
    }

    /// The end of physical memory as the segments describe it.
    pub(crate) fn phys_end(&self) -> PhysAddr {
        PhysAddr(self.by_paddr.iter().map(|s| phys_key(s) + s.memsz).max().unwrap_or(0))
    }
}

impl Memory for ElfCore {
    fn read(&self, addr: VirtAddr, buf: &mut [u8]) -> Result<(), Fault> {
        self.read_virtual(addr, buf)
    }
}
