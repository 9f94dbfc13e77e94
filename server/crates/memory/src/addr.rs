//! Typed addresses, as gimli types its offsets: a virtual address and a physical address
//! are different types, so passing one where the other is meant does not compile. The
//! conversion between them is a page-table walk ([`crate::PageTables::translate`]) or a
//! known linear map written out where it is used (`__pa_symbol()`).
//!
//! A virtual address handed to a physical read is refused by the compiler:
//!
//! ```compile_fail
//! use fevlint_memory::{PhysMemory, VirtAddr};
//! fn read(m: &dyn PhysMemory, v: VirtAddr) {
//!     let _ = m.read_phys(v, &mut [0u8; 8]);
//! }
//! ```
//!
//! and so is a physical address handed to a virtual read:
//!
//! ```compile_fail
//! use fevlint_memory::{Memory, PhysAddr};
//! fn read(m: &dyn Memory, p: PhysAddr) {
//!     let _ = m.read(p, &mut [0u8; 8]);
//! }
//! ```
//!
//! while the right address in the right space compiles:
//!
//! ```
//! use fevlint_memory::{Memory, PhysAddr, PhysMemory, VirtAddr};
//! fn read(m: &dyn Memory, p: &dyn PhysMemory, v: VirtAddr, a: PhysAddr) {
//!     let _ = m.read(v, &mut [0u8; 8]);
//!     let _ = p.read_phys(a, &mut [0u8; 8]);
//! }
//! ```

use std::fmt;

/// An address in a virtual address space (the kernel's, or a user process's).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VirtAddr(pub u64);

/// An address in the machine's physical memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PhysAddr(pub u64);

macro_rules! address {
    ($t:ident) => {
        impl $t {
            /// `self + n`, wrapping at the top of the address space (a read that runs
            /// off the end faults at the wrapped address, as the CPU would).
            pub fn wrapping_add(self, n: u64) -> $t {
                $t(self.0.wrapping_add(n))
            }

            pub fn checked_add(self, n: u64) -> Option<$t> {
                self.0.checked_add(n).map($t)
            }

            /// How far `self` lies past `base` (wrapping: callers check `base <= self`).
            pub fn offset_from(self, base: $t) -> u64 {
                self.0.wrapping_sub(base.0)
            }

            /// The offset inside its 4 KiB page.
            pub fn page_offset(self) -> u64 {
                self.0 & 0xfff
            }

            /// The start of its 4 KiB page.
            pub fn page_start(self) -> $t {
                $t(self.0 & !0xfff)
            }
        }

        /// An address `n` bytes further on, in the same space (overflow is a bug, as
        /// with `u64`; reads that may run off the end use [`Self::wrapping_add`]).
        impl std::ops::Add<u64> for $t {
            type Output = $t;
            fn add(self, n: u64) -> $t {
                $t(self.0 + n)
            }
        }

        impl std::ops::Sub<u64> for $t {
            type Output = $t;
            fn sub(self, n: u64) -> $t {
                $t(self.0 - n)
            }
        }

        impl fmt::LowerHex for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::LowerHex::fmt(&self.0, f)
            }
        }
    };
}

address!(VirtAddr);
address!(PhysAddr);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_formatting_is_the_number_s() {
        assert_eq!(format!("{:#x}", VirtAddr(0xffff_8000_0000_1000)), "0xffff800000001000");
        assert_eq!(format!("{:x}", PhysAddr(0x1f)), "1f");
        assert_eq!(format!("{:#018x}", PhysAddr(0x1000)), "0x0000000000001000");
    }

    #[test]
    fn arithmetic_stays_in_its_space() {
        let v = VirtAddr(u64::MAX - 1);
        assert_eq!(v.wrapping_add(3), VirtAddr(1));
        assert_eq!(v.checked_add(2), None);
        assert_eq!(VirtAddr(0x1234).page_start(), VirtAddr(0x1000));
        assert_eq!(VirtAddr(0x1234).page_offset(), 0x234);
        assert_eq!(PhysAddr(0x1010).offset_from(PhysAddr(0x1000)), 0x10);
    }
}
