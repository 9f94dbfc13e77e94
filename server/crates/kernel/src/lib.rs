//! Facts about a target kernel (functions, parameters, types, traceability), read from
//! BTF, DWARF, symbol maps and ftrace lists. Never sees a syntax node.

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
pub mod similar;
pub mod symbols;

pub use facts::{FunctionFacts, Kernel, KernelError, Trace};
