//! The kernel type model every reader answers through: [`model::TypeSource`] (BTF and
//! DWARF both implement it), member layouts and pahole-style printing ([`layout`]), the
//! calling convention ([`abi`]), and the name hash index the readers and symbol tables
//! share ([`hash_index`]). Pure: no IO, no kernel files.

pub mod abi;
pub mod hash_index;
pub mod layout;
pub mod model;

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
