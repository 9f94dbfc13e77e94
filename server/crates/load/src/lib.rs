//! The files a kernel comes in, read safely: bounded and mapped reads and atomic writes
//! ([`fsio`], [`blob`]), decompression ([`decompress`], [`bzimage`]), ELF images (their
//! sections, symbols and mcount tables: [`elf`]), kallsyms tables ([`kallsyms`]), the text
//! symbol and ftrace lists ([`symbols`]), and the derived-data cache ([`cache`]) with its
//! sorted tables searched in place ([`table`]).
//!
//! Boundary: this crate produces bytes and parsed symbol/ftrace lists; it parses no BTF
//! or DWARF and does not choose which files make a kernel (`fevlint-kernel` does).

pub mod blob;
pub mod bzimage;
pub mod cache;
pub mod codec;
pub mod decompress;
pub mod elf;
pub mod error;
pub mod fsio;
pub mod kallsyms;
pub mod symbols;
pub mod table;

pub use blob::{Blob, BlobSlice};
pub use codec::Codec;
pub use decompress::{Content, Limits, Origin};
pub use error::{FileOffset, LoadError};
