//! Reading everything a user may pass as `--kernel`: raw or compressed BTF, an ELF
//! vmlinux, a bzImage, a BTFHub tarball, a kernel folder, or the running kernel.
//!
//! Boundary: this module produces bytes and parsed symbol/ftrace lists; it does not
//! parse BTF (the BTF reader takes [`KernelInputs::btf`]).

pub mod blob;
pub mod bzimage;
pub mod cache;
pub mod decompress;
pub mod elf;
pub mod error;
pub mod fsio;
pub mod kallsyms;
pub mod open;

pub use blob::{Blob, BlobSlice};
pub use decompress::{Codec, Content, Limits, Origin};
pub use error::{FileOffset, LoadError};
pub use open::{
    open, open_with, read_config, read_filter_functions, read_kprobe_blacklist, read_symbol_bytes, read_symbols,
    ArchSource, Container, DeferredFiles, DeferredSymbols, ImagePolicy, KernelInputs, Loaded, OpenOptions, Provenance,
};

/// The instruction set of a kernel, where it can be told (ELF header, config, pointer
/// width of the symbol addresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arch {
    X86_64,
    X86_32,
}

impl Arch {
    pub fn pointer_size(self) -> u32 {
        match self {
            Arch::X86_64 => 8,
            Arch::X86_32 => 4,
        }
    }
}
