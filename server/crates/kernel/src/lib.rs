//! Facts about a target kernel (functions, parameters, types, traceability), read from
//! BTF, DWARF, symbol maps and ftrace lists: loaders and decompressors, the BTF and DWARF
//! readers, symbols, ftrace lists, layouts, the ABI and the kernel diff. Never sees a
//! script or a syntax node (it depends on no other fevlint crate), so other tools can use
//! it as a library: see `README.md`.

// Paths inside the crate keep their `crate::kernel::...` spelling from the single-crate days.
use crate as kernel;

pub mod abi;
pub mod btf;
pub mod diff;
pub mod dwarf;
pub mod facts;
pub mod layout;
pub mod load;
pub mod model;
pub mod names;
pub mod symbols;

pub use facts::{FunctionFacts, Kernel, KernelError, Trace};

/// The README's example, run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
