//! x86 virtual-to-physical translation through the dumped kernel's page tables, as the
//! MMU does it: x86_64 (4- or 5-level, 1 GiB and 2 MiB pages) and i386 (PAE: 3 levels of
//! 8-byte entries, 2 MiB pages; without PAE: 2 levels of 4-byte entries, 4 MiB pages).
//!
//! Invariant: a walk reads at most one entry per level, so a page-table loop or an absurd
//! entry ends in a fault, never in a hang.

use crate::addr::{PhysAddr, VirtAddr};
use crate::error::{Fault, FaultKind};
use crate::regs::Arch;
use crate::PhysMemory;

/// `__START_KERNEL_map`: kernel text virtual base, mapped to physical `phys_base`.
pub const START_KERNEL_MAP: VirtAddr = VirtAddr(0xffff_ffff_8000_0000);
const PRESENT: u64 = 1;
const PSE: u64 = 0x80;
/// Bits 12..51 of an entry: the next table or the page frame.
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

/// The page-table root and mode of one address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageTables {
    /// Physical address of the top-level table (PML4 or PML5; i386: the PAE page-directory
    /// pointer table, or the page directory).
    pub root: PhysAddr,
    /// 4 or 5 (x86_64); 3 (i386 PAE) or 2 (i386 without PAE).
    pub levels: u32,
    /// Memory-encryption bit(s) to clear from entries (`NUMBER(sme_mask)`).
    pub sme_mask: u64,
}

/// A translated address: the physical address and the size of the page it falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MappedPage {
    pub paddr: PhysAddr,
    pub page_size: u64,
}

impl PageTables {
    /// x86_64 tables: `levels` 5 with LA57, else 4.
    pub fn new(root: PhysAddr, levels: u32) -> PageTables {
        PageTables { root: PhysAddr(root.0 & ADDR_MASK), levels: if levels == 5 { 5 } else { 4 }, sme_mask: 0 }
    }

    /// The tables a CPU of `arch` uses at `cr3`, its paging mode read from `cr4` when
    /// known (LA57, PAE); without CR4 an i386 kernel is taken to use PAE (Debian's
    /// `686-pae`).
    pub fn at_cr3(arch: Arch, cr3: u64, cr4: Option<u64>) -> PageTables {
        match arch {
            Arch::X86_64 => PageTables::new(PhysAddr(cr3), if cr4.is_some_and(|c| c & (1 << 12) != 0) { 5 } else { 4 }),
            Arch::I386 => PageTables::i386(PhysAddr(cr3), cr4.is_none_or(|c| c & (1 << 5) != 0)),
        }
    }

    /// i386 tables at CR3 `root`: PAE (CR4 bit 5) or not.
    pub fn i386(root: PhysAddr, pae: bool) -> PageTables {
        if pae {
            // CR3 holds the 32-byte aligned page-directory pointer table.
            PageTables { root: PhysAddr(root.0 & 0xffff_ffe0), levels: 3, sme_mask: 0 }
        } else {
            PageTables { root: PhysAddr(root.0 & 0xffff_f000), levels: 2, sme_mask: 0 }
        }
    }

    /// Whether `vaddr` is canonical for this paging mode (sign-extended from bit 47 or 56;
    /// i386: below 4 GiB).
    pub fn is_canonical(&self, vaddr: VirtAddr) -> bool {
        let vaddr = vaddr.0;
        if self.levels < 4 {
            return vaddr >> 32 == 0;
        }
        let bits = 12 + 9 * self.levels; // 48 or 57
        let top = (vaddr as i64) >> (bits - 1);
        top == 0 || top == -1
    }

    /// Translates `vaddr`, reading the tables from `phys`.
    pub fn translate(&self, phys: &dyn PhysMemory, vaddr: VirtAddr) -> Result<MappedPage, Fault> {
        if !self.is_canonical(vaddr) {
            return Err(Fault::new(vaddr, FaultKind::Unmapped));
        }
        let fault = |kind| Fault::new(vaddr, kind);
        let vaddr = vaddr.0;
        match self.levels {
            3 => return self.translate_pae(phys, vaddr),
            2 => return self.translate_i386(phys, vaddr),
            _ => {}
        }
        let mask = ADDR_MASK & !self.sme_mask;
        let mut table = self.root.0 & mask;
        for level in (1..=self.levels).rev() {
            let shift = 12 + 9 * (level - 1);
            let index = (vaddr >> shift) & 511;
            let mut e = [0u8; 8];
            // A table that is not in the dump (or outside memory) means the address cannot
            // be translated: report the virtual address with the physical fault's reason.
            phys.read_phys(PhysAddr(table + index * 8), &mut e).map_err(|f| fault(f.kind))?;
            let entry = u64::from_le_bytes(e);
            if entry & PRESENT == 0 {
                return Err(fault(FaultKind::Unmapped));
            }
            if (level == 2 || level == 3) && entry & PSE != 0 {
                let size = 1u64 << shift;
                let base = entry & mask & !(size - 1);
                return Ok(MappedPage { paddr: PhysAddr(base | (vaddr & (size - 1))), page_size: size });
            }
            table = entry & mask;
        }
        Ok(MappedPage { paddr: PhysAddr(table | (vaddr & 0xfff)), page_size: 4096 })
    }

    /// i386 PAE: a 4-entry pointer table (bits 31..30), then 512-entry directories (2 MiB
    /// pages) and tables, all of 8-byte entries.
    fn translate_pae(&self, phys: &dyn PhysMemory, vaddr: u64) -> Result<MappedPage, Fault> {
        let entry = |table: u64, index: u64| -> Result<u64, Fault> {
            let mut e = [0u8; 8];
            phys.read_phys(PhysAddr(table + index * 8), &mut e).map_err(|f| Fault::new(VirtAddr(vaddr), f.kind))?;
            let entry = u64::from_le_bytes(e);
            if entry & PRESENT == 0 {
                return Err(Fault::new(VirtAddr(vaddr), FaultKind::Unmapped));
            }
            Ok(entry)
        };
        let pdpte = entry(self.root.0, (vaddr >> 30) & 3)?;
        let pde = entry(pdpte & ADDR_MASK, (vaddr >> 21) & 511)?;
        if pde & PSE != 0 {
            let base = pde & ADDR_MASK & !0x1f_ffff;
            return Ok(MappedPage { paddr: PhysAddr(base | (vaddr & 0x1f_ffff)), page_size: 0x20_0000 });
        }
        let pte = entry(pde & ADDR_MASK, (vaddr >> 12) & 511)?;
        Ok(MappedPage { paddr: PhysAddr((pte & ADDR_MASK) | (vaddr & 0xfff)), page_size: 4096 })
    }

    /// i386 without PAE: a 1024-entry directory (4 MiB pages, PSE-36 high bits) and
    /// 1024-entry tables of 4-byte entries.
    fn translate_i386(&self, phys: &dyn PhysMemory, vaddr: u64) -> Result<MappedPage, Fault> {
        let entry = |table: u64, index: u64| -> Result<u64, Fault> {
            let mut e = [0u8; 4];
            phys.read_phys(PhysAddr(table + index * 4), &mut e).map_err(|f| Fault::new(VirtAddr(vaddr), f.kind))?;
            let entry = u64::from(u32::from_le_bytes(e));
            if entry & PRESENT == 0 {
                return Err(Fault::new(VirtAddr(vaddr), FaultKind::Unmapped));
            }
            Ok(entry)
        };
        let pde = entry(self.root.0, (vaddr >> 22) & 1023)?;
        if pde & PSE != 0 {
            // Bits 13..20 of a 4 MiB entry are physical address bits 32..39 (PSE-36).
            let base = (pde & 0xffc0_0000) | ((pde >> 13) & 0xff) << 32;
            return Ok(MappedPage { paddr: PhysAddr(base | (vaddr & 0x3f_ffff)), page_size: 0x40_0000 });
        }
        let pte = entry(pde & 0xffff_f000, (vaddr >> 12) & 1023)?;
        Ok(MappedPage { paddr: PhysAddr((pte & 0xffff_f000) | (vaddr & 0xfff)), page_size: 4096 })
    }
}
