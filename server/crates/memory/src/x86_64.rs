//! x86_64 virtual-to-physical translation through the dumped kernel's page tables
//! (4- or 5-level, 1 GiB and 2 MiB pages), as the MMU does it.
//!
//! Invariant: a walk reads at most one entry per level, so a page-table loop or an absurd
//! entry ends in a fault, never in a hang.

use crate::error::{Fault, FaultKind};
use crate::PhysMemory;

/// `__START_KERNEL_map`: kernel text virtual base, mapped to physical `phys_base`.
pub const START_KERNEL_MAP: u64 = 0xffff_ffff_8000_0000;
const PRESENT: u64 = 1;
const PSE: u64 = 0x80;
/// Bits 12..51 of an entry: the next table or the page frame.
const ADDR_MASK: u64 = 0x000f_ffff_ffff_f000;

/// The page-table root and mode of one address space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageTables {
    /// Physical address of the top-level table (PML4 or PML5).
    pub root: u64,
    /// 4 or 5.
    pub levels: u32,
    /// Memory-encryption bit(s) to clear from entries (`NUMBER(sme_mask)`).
    pub sme_mask: u64,
}

/// The result of a walk: the physical address and the size of the page it falls in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walk {
    pub paddr: u64,
    pub page_size: u64,
}

impl PageTables {
    pub fn new(root: u64, levels: u32) -> PageTables {
        PageTables { root: root & ADDR_MASK, levels: if levels == 5 { 5 } else { 4 }, sme_mask: 0 }
    }

    /// Whether `vaddr` is canonical for this paging mode (sign-extended from bit 47 or 56).
    pub fn is_canonical(&self, vaddr: u64) -> bool {
        let bits = 12 + 9 * self.levels; // 48 or 57
        let top = (vaddr as i64) >> (bits - 1);
        top == 0 || top == -1
    }

    /// Translates `vaddr`, reading the tables from `phys`.
    pub fn translate(&self, phys: &dyn PhysMemory, vaddr: u64) -> Result<Walk, Fault> {
        if !self.is_canonical(vaddr) {
            return Err(Fault::new(vaddr, FaultKind::Unmapped));
        }
        let mask = ADDR_MASK & !self.sme_mask;
        let mut table = self.root & mask;
        for level in (1..=self.levels).rev() {
            let shift = 12 + 9 * (level - 1);
            let index = (vaddr >> shift) & 511;
            let mut e = [0u8; 8];
            // A table that is not in the dump (or outside memory) means the address cannot
            // be translated: report the virtual address with the physical fault's reason.
            phys.read_phys(table + index * 8, &mut e).map_err(|f| Fault::new(vaddr, f.kind))?;
            let entry = u64::from_le_bytes(e);
            if entry & PRESENT == 0 {
                return Err(Fault::new(vaddr, FaultKind::Unmapped));
            }
            if (level == 2 || level == 3) && entry & PSE != 0 {
                let size = 1u64 << shift;
                let base = entry & mask & !(size - 1);
                return Ok(Walk { paddr: base | (vaddr & (size - 1)), page_size: size });
            }
            table = entry & mask;
        }
        Ok(Walk { paddr: table | (vaddr & 0xfff), page_size: 4096 })
    }
}
