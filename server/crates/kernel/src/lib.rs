//! One kernel's facts (functions, parameters, types, traceability, symbols, ftrace lists)
//! from a folder, an image or the running kernel: [`open`] chooses and reads the files
//! (through `fevlint-load`), [`Kernel`] answers from them, with the types from BTF
//! (`fevlint-btf`) or DWARF (`fevlint-dwarf`) behind the one [`TypeSource`] interface.
//! Never sees a script or a syntax node, so other tools can use it as a library: see
//! `README.md`.
//!
//! [`TypeSource`]: fevlint_types::model::TypeSource

pub mod cached_btf;
pub mod code;
pub mod facts;
pub mod names;
pub mod open;
mod paged;
mod similar;

pub use facts::{FunctionFacts, Kernel, KernelError, SymbolEvents, Trace};

/// The README's example, run as a doctest.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
