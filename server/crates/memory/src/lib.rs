//! Core-dump readers: memory by virtual address, and the registers of each CPU or thread.
//!
//! Formats: ELF kernel cores (`/proc/vmcore` saved by `cp` or `makedumpfile -E`, QEMU
//! `dump-guest-memory` with or without paging, `/proc/kcore`), makedumpfile's compressed
//! kdump (`KDUMP   `) and flattened (`-F`, possibly gzip/xz wrapped) files, and user-space
//! ELF cores (gdb `gcore`, kernel-written). Files are memory-mapped and read lazily: opening
//! parses headers and notes only, pages are found (and decompressed) when read.
//!
//! The executor sees only [`Memory`] and [`Thread`]/[`Regs`]; this crate knows nothing of
//! scripts, symbols or types (the caller applies `KERNELOFFSET` to its symbol addresses).
//!
//! Invariant: no input, however malformed, makes a reader panic, loop forever or
//! allocate more than a small multiple of the file's own size.

mod addr;
mod elf;
mod error;
mod kdump;
mod kernel_core;
mod notes;
mod regs;
mod source;
mod wrapped;
mod x86_64;

use std::path::Path;

pub use addr::{PhysAddr, VirtAddr};
pub use elf::{ElfCore, Segment};
pub use error::{Error, Fault, FaultKind};
pub use kdump::{Compression, KdumpFile, KdumpHeader};
pub use kernel_core::{KernelCore, RootSource, Translation};
pub use notes::{FileMapping, QemuCpuState, VmcoreInfo};
pub use regs::{Arch, I386Regs, Regs, Thread, X86_64Regs};
pub use source::FlatIndex;
pub use source::Source;
pub use wrapped::WrapperLimits;
pub use x86_64::{MappedPage, PageTables, START_KERNEL_MAP};

/// Physical memory of a dump.
pub trait PhysMemory {
    fn read_phys(&self, paddr: PhysAddr, buf: &mut [u8]) -> Result<(), Fault<PhysAddr>>;
    /// One past the highest physical address the dump describes.
    fn phys_end(&self) -> PhysAddr;
}

/// A source of memory by virtual address: what the executor reads through.
///
/// `read` fills `buf` entirely or reports why it could not, with the first address that
/// failed; bytes before that address may have been written.
pub trait Memory {
    fn read(&self, addr: VirtAddr, buf: &mut [u8]) -> Result<(), Fault>;

    /// Reads a little-endian `u64` (x86 byte order).
    fn read_u64(&self, addr: VirtAddr) -> Result<u64, Fault> {
        let mut b = [0u8; 8];
        self.read(addr, &mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    /// Reads a little-endian `u32`.
    fn read_u32(&self, addr: VirtAddr) -> Result<u32, Fault> {
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }
}

impl<M: Memory + ?Sized> Memory for &M {
    fn read(&self, addr: VirtAddr, buf: &mut [u8]) -> Result<(), Fault> {
        (**self).read(addr, buf)
    }
}

/// Any dump this crate reads, opened by content (not by file name).
#[derive(Debug)]
// One per open file, matched on every read: boxing would add an indirection for nothing.
#[allow(clippy::large_enum_variant)]
pub enum Dump {
    /// A user-space process core: memory by the process's virtual addresses.
    User(ElfCore),
    /// A kernel dump (any format): memory by kernel virtual addresses, translated
    /// through the dumped kernel's page tables where the dump holds physical memory.
    Kernel(KernelCore),
}

impl Dump {
    /// Opens `path`, recognising the format from its first bytes.
    pub fn open(path: &Path) -> Result<Dump, Error> {
        let src = Source::open(path)?;
        Self::from_source(src)
    }

    /// As [`Dump::open`], over an already opened source.
    pub fn from_source(src: Source) -> Result<Dump, Error> {
        Self::from_source_with(src, &WrapperLimits::default())
    }

    /// As [`Dump::from_source`], with other bounds on a gzip/xz wrapper.
    pub fn from_source_with(src: Source, limits: &WrapperLimits) -> Result<Dump, Error> {
        Self::from_source_at(src, 0, limits)
    }

    fn from_source_at(src: Source, depth: u32, limits: &WrapperLimits) -> Result<Dump, Error> {
        let mut magic = [0u8; 16];
        let n = src.len().min(16) as usize;
        src.read_exact_at(0, &mut magic[..n])?;
        let magic = &magic[..n];
        if magic.starts_with(b"\x7fELF") {
            let core = ElfCore::parse(src)?;
            if core.is_kernel() {
                Ok(Dump::Kernel(KernelCore::from_elf(core)?))
            } else {
                Ok(Dump::User(core))
            }
        } else if magic.starts_with(kdump::KDUMP_SIGNATURE) || magic.starts_with(b"DISKDUMP") {
            Ok(Dump::Kernel(KernelCore::from_kdump(KdumpFile::parse(src)?)?))
        } else if magic.starts_with(source::FLAT_SIGNATURE) {
            let flat = FlatIndex::build(src)?;
            Ok(Dump::Kernel(KernelCore::from_kdump(KdumpFile::parse(Source::flat(flat))?)?))
        } else if (magic.starts_with(&[0x1f, 0x8b]) || magic.starts_with(b"\xfd7zXZ\0")) && depth == 0 {
            // One wrapper (kdump-tools' KDUMP_COMPRESSION); a wrapped wrapper is refused.
            let inner = wrapped::unwrap_compressed(&src, limits)?;
            Self::from_source_at(inner, depth + 1, limits)
        } else {
            Err(Error::Unrecognized { path: src.path().to_path_buf() })
        }
    }

    /// The threads (user core) or CPUs (kernel core) in the dump's `NT_PRSTATUS` notes, in
    /// note order.
    pub fn threads(&self) -> &[Thread] {
        match self {
            Dump::User(c) => c.threads(),
            Dump::Kernel(k) => k.threads(),
        }
    }

    /// A short name of the format, for messages: `elf user core`, `kdump (zlib)`, ...
    pub fn format(&self) -> String {
        match self {
            Dump::User(_) => "ELF user core".to_string(),
            Dump::Kernel(k) => k.format(),
        }
    }
}

impl Memory for Dump {
    fn read(&self, addr: VirtAddr, buf: &mut [u8]) -> Result<(), Fault> {
        match self {
            Dump::User(c) => c.read(addr, buf),
            Dump::Kernel(k) => k.read(addr, buf),
        }
    }
}

// A dump is shared between the language server's threads.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Dump>();
};
