//! A kernel dump of any format as memory by kernel virtual address: virtual segments when
//! the dump has them (kcore, vmcore direct map and text, QEMU with paging), otherwise the
//! dumped kernel's page tables over its physical memory.

use crate::addr::{PhysAddr, VirtAddr};
use crate::elf::ElfCore;
use crate::error::{Error, Fault, FaultKind};
use crate::kdump::KdumpFile;
use crate::notes::{QemuCpuState, VmcoreInfo};
use crate::regs::{Arch, Thread};
use crate::x86_64::{PageTables, START_KERNEL_MAP};
use crate::{Memory, PhysMemory};
use std::collections::HashMap;
use std::sync::Mutex;

impl PhysMemory for ElfCore {
    fn read_phys(&self, paddr: PhysAddr, buf: &mut [u8]) -> Result<(), Fault<PhysAddr>> {
        self.read_physical(paddr, buf)
    }
    fn phys_end(&self) -> PhysAddr {
        ElfCore::phys_end(self)
    }
}

#[derive(Debug)]
enum Backing {
    Elf(ElfCore),
    Kdump(KdumpFile),
}

/// How a virtual address was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Translation {
    /// A `PT_LOAD` with this virtual address covers it.
    Segment,
    /// The page tables map it to this physical address.
    Physical(PhysAddr),
}

/// Where the page-table root came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootSource {
    /// `SYMBOL(init_top_pgt)` or `SYMBOL(swapper_pg_dir)` - `__START_KERNEL_map` + `phys_base`.
    Vmcoreinfo,
    /// CR3 of the first vCPU in QEMU's CPU-state note.
    QemuCr3,
    /// Given by the caller.
    Explicit,
}

const TLB_MAX: usize = 1 << 14;
const KERNEL_HALF: VirtAddr = VirtAddr(0xffff_8000_0000_0000);
/// `__PAGE_OFFSET` of an i386 kernel with `CONFIG_VMSPLIT_3G`.
const I386_PAGE_OFFSET: u64 = 0xc000_0000;

/// A kernel dump.
#[derive(Debug)]
pub struct KernelCore {
    backing: Backing,
    vmcoreinfo: Option<VmcoreInfo>,
    tables: Option<(PageTables, RootSource)>,
    phys_base: Option<u64>,
    /// Virtual 4 KiB page -> physical page (or the fault), for repeated walks.
    tlb: Mutex<HashMap<VirtAddr, Result<PhysAddr, FaultKind>>>,
}

impl KernelCore {
    pub fn from_elf(core: ElfCore) -> Result<KernelCore, Error> {
        let arch = core.arch();
        let info = core.vmcoreinfo().cloned();
        let qemu = core.qemu_cpus().first().copied();
        let mut k = KernelCore::new(Backing::Elf(core), info, None, arch);
        if k.tables.is_none() {
            if let Some(q) = qemu.filter(|q| q.cr3 != 0) {
                k.tables = Some((PageTables::at_cr3(arch, q.cr3, Some(q.cr4)), RootSource::QemuCr3));
            }
        }
        Ok(k)
    }

    pub fn from_kdump(file: KdumpFile) -> Result<KernelCore, Error> {
        let arch = file.arch();
        let info = file.vmcoreinfo().cloned();
        let phys_base = Some(file.header().phys_base);
        let k = KernelCore::new(Backing::Kdump(file), info, phys_base, arch);
        if k.tables.is_none() {
            return Err(Error::Missing {
                path: k.path().to_path_buf(),
                what: "no VMCOREINFO with SYMBOL(init_top_pgt) or SYMBOL(swapper_pg_dir): cannot find the page tables"
                    .into(),
            });
        }
        Ok(k)
    }

    fn new(backing: Backing, vmcoreinfo: Option<VmcoreInfo>, header_phys_base: Option<u64>, arch: Arch) -> KernelCore {
        let phys_base = vmcoreinfo.as_ref().and_then(VmcoreInfo::phys_base).or(header_phys_base);
        let tables = vmcoreinfo.as_ref().and_then(|info| {
            if arch == Arch::I386 {
                // __pa_symbol() on i386 is `x - PAGE_OFFSET`; VMCOREINFO does not record
                // PAGE_OFFSET, so this is Debian's (and the default) 3G/1G split.
                let root = PhysAddr(info.symbol("swapper_pg_dir")?.0.checked_sub(I386_PAGE_OFFSET)?);
                let pae = info.get("CONFIG_X86_PAE") == Some("y");
                return Some((PageTables::i386(root, pae), RootSource::Vmcoreinfo));
            }
            let sym = info.symbol("init_top_pgt").or_else(|| info.symbol("swapper_pg_dir"))?;
            // __pa_symbol(): phys_base is negative (two's complement) when KASLR moved the
            // kernel down physically less than virtually, so this wraps by design.
            let root = PhysAddr(sym.0.checked_sub(START_KERNEL_MAP.0)?.wrapping_add(phys_base.unwrap_or(0)));
            let levels = if info.number("pgtable_l5_enabled") == Some(1) { 5 } else { 4 };
            let mut t = PageTables::new(root, levels);
            t.sme_mask = info.number("sme_mask").map(|m| m as u64).unwrap_or(0);
            Some((t, RootSource::Vmcoreinfo))
        });
        KernelCore { backing, vmcoreinfo, tables, phys_base, tlb: Mutex::new(HashMap::new()) }
    }

    /// The dumped machine: x86_64 or i386.
    pub fn arch(&self) -> Arch {
        match &self.backing {
            Backing::Elf(e) => e.arch(),
            Backing::Kdump(k) => k.arch(),
        }
    }

    pub fn path(&self) -> &std::path::Path {
        match &self.backing {
            Backing::Elf(e) => e.source().path(),
            Backing::Kdump(k) => k.source().path(),
        }
    }

    /// A short description of the format.
    pub fn format(&self) -> String {
        match &self.backing {
            Backing::Elf(e) if !e.qemu_cpus().is_empty() => {
                format!("QEMU ELF dump ({})", if e.has_virtual() { "paging" } else { "physical" })
            }
            Backing::Elf(_) => "ELF vmcore".to_string(),
            Backing::Kdump(k) => {
                format!("kdump ({:?}, dump level {})", k.header().compression(), k.header().dump_level)
            }
        }
    }

    pub fn elf(&self) -> Option<&ElfCore> {
        match &self.backing {
            Backing::Elf(e) => Some(e),
            Backing::Kdump(_) => None,
        }
    }

    pub fn kdump(&self) -> Option<&KdumpFile> {
        match &self.backing {
            Backing::Kdump(k) => Some(k),
            Backing::Elf(_) => None,
        }
    }

    pub fn vmcoreinfo(&self) -> Option<&VmcoreInfo> {
        self.vmcoreinfo.as_ref()
    }

    /// `KERNELOFFSET`: add it to every vmlinux/System.map address (0 without KASLR or
    /// without VMCOREINFO).
    pub fn kernel_offset(&self) -> u64 {
        self.vmcoreinfo.as_ref().and_then(VmcoreInfo::kernel_offset).unwrap_or(0)
    }

    pub fn phys_base(&self) -> Option<u64> {
        self.phys_base
    }

    pub fn page_tables(&self) -> Option<(PageTables, RootSource)> {
        self.tables
    }

    /// Uses another address space (a task's CR3 / `mm->pgd`, already physical).
    pub fn set_page_tables(&mut self, tables: PageTables) {
        self.tables = Some((tables, RootSource::Explicit));
        self.tlb.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    pub fn threads(&self) -> &[Thread] {
        match &self.backing {
            Backing::Elf(e) => e.threads(),
            Backing::Kdump(k) => k.threads(),
        }
    }

    pub fn qemu_cpus(&self) -> &[QemuCpuState] {
        match &self.backing {
            Backing::Elf(e) => e.qemu_cpus(),
            Backing::Kdump(_) => &[],
        }
    }

    fn phys(&self) -> &dyn PhysMemory {
        match &self.backing {
            Backing::Elf(e) => e,
            Backing::Kdump(k) => k,
        }
    }

    /// Translates through the page tables only (no segment shortcut).
    pub fn walk(&self, vaddr: VirtAddr) -> Result<PhysAddr, Fault> {
        let Some((t, _)) = self.tables else { return Err(Fault::new(vaddr, FaultKind::Unmapped)) };
        t.translate(self.phys(), vaddr).map(|w| w.paddr)
    }

    /// How `vaddr` is read: from a virtual segment, or at a physical address.
    pub fn translate(&self, vaddr: VirtAddr) -> Result<Translation, Fault> {
        if let Backing::Elf(e) = &self.backing {
            // Only kernel-half segments: QEMU without paging writes p_vaddr = p_paddr.
            if vaddr >= KERNEL_HALF && e.covers_virtual(vaddr) {
                return Ok(Translation::Segment);
            }
        }
        let page = vaddr.page_start();
        let hit = self.tlb.lock().unwrap_or_else(|p| p.into_inner()).get(&page).copied();
        let r = match hit {
            Some(r) => r,
            None => {
                let r = self.walk(page).map_err(|f| f.kind);
                let mut tlb = self.tlb.lock().unwrap_or_else(|p| p.into_inner());
                if tlb.len() >= TLB_MAX {
                    tlb.clear();
                }
                tlb.insert(page, r);
                r
            }
        };
        r.map(|p| Translation::Physical(PhysAddr(p.0 | vaddr.page_offset()))).map_err(|k| Fault::new(vaddr, k))
    }
}

impl PhysMemory for KernelCore {
    fn read_phys(&self, paddr: PhysAddr, buf: &mut [u8]) -> Result<(), Fault<PhysAddr>> {
        self.phys().read_phys(paddr, buf)
    }
    fn phys_end(&self) -> PhysAddr {
        self.phys().phys_end()
    }
}

impl Memory for KernelCore {
    fn read(&self, addr: VirtAddr, buf: &mut [u8]) -> Result<(), Fault> {
        let mut done = 0usize;
        while done < buf.len() {
            let a = addr.wrapping_add(done as u64);
            let n = ((0x1000 - a.page_offset()) as usize).min(buf.len() - done);
            let out = &mut buf[done..done + n];
            match self.translate(a)? {
                Translation::Segment => {
                    if let Backing::Elf(e) = &self.backing {
                        e.read_virtual(a, out)?;
                    }
                }
                Translation::Physical(p) => self
                    .phys()
                    .read_phys(p, out)
                    .map_err(|f| Fault::new(a.wrapping_add(f.addr.offset_from(p)), f.kind))?,
            }
            done += n;
        }
        Ok(())
    }
}
