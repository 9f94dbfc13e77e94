//! fevlint: checks kernel function-event scripts against the kernel parser and real kernels.
//!
//! This package is the `fevlint` binary and its command line (`cli`): it parses
//! arguments, decides IO policy and calls one library crate per command. The layers are
//! crates of their own (see ARCHITECTURE.md); tests, benches and fuzz targets use them
//! by their own names (`fevlint_kernel`, `fevlint_check`, ...).

pub mod cli;
