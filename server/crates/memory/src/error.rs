//! Errors opening a dump (file + offset + what is wrong) and faults reading memory (why a
//! byte is not there).

use std::fmt;
use std::path::PathBuf;

use crate::addr::VirtAddr;

/// A dump that cannot be opened, or a structure in it that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a core dump this reader knows (no ELF, `KDUMP   `, `makedumpfile` or gzip/xz magic at offset 0)", path.display())]
    Unrecognized { path: PathBuf },
    /// A structure is truncated, overlapping, absurd or inconsistent.
    #[error("{}: offset {offset:#x}: {what}", path.display())]
    Malformed { path: PathBuf, offset: u64, what: String },
    /// Something the reader needs is absent from the dump (a note, a VMCOREINFO key).
    #[error("{}: {what}", path.display())]
    Missing { path: PathBuf, what: String },
    /// A compressed page that does not decompress to one page.
    #[error("{}: offset {offset:#x}: page frame {pfn:#x}: {what}", path.display())]
    CorruptPage { path: PathBuf, offset: u64, pfn: u64, what: String },
}

/// Why a virtual (or physical) address could not be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The page exists in the machine but its contents were left out of the dump
    /// (excluded by makedumpfile's dump level, or `p_filesz < p_memsz`).
    NotInDump,
    /// No mapping: the page tables have no present entry for it (kernel), or no segment
    /// covers it (user core), or it is not canonical.
    Unmapped,
    /// The physical address is outside the machine's memory as the dump describes it.
    OutsidePhysical,
    /// The dump holds the page but it is corrupt (bad compressed data, truncated file).
    Corrupt,
}

/// A failed read: the first address that could not be read, and why. `A` is the
/// address space read: virtual for [`crate::Memory`], [`crate::PhysAddr`] for
/// [`crate::PhysMemory`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fault<A = VirtAddr> {
    pub addr: A,
    pub kind: FaultKind,
}

impl<A> Fault<A> {
    pub fn new(addr: A, kind: FaultKind) -> Fault<A> {
        Fault { addr, kind }
    }
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FaultKind::NotInDump => "not in the dump",
            FaultKind::Unmapped => "unmapped",
            FaultKind::OutsidePhysical => "outside physical memory",
            FaultKind::Corrupt => "corrupt page in the dump",
        })
    }
}

impl<A: fmt::LowerHex> fmt::Display for Fault<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}: {}", self.addr, self.kind)
    }
}

impl<A: fmt::LowerHex + fmt::Debug> std::error::Error for Fault<A> {}
