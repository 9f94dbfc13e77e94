//! fevlint: checks kernel function-event scripts against the kernel parser and real kernels.
//!
//! This package is the `fevlint` binary and its command line (`cli`). The layers are
//! crates (see ARCHITECTURE.md): `fevlint-syntax` (text to tree, never fails),
//! `fevlint-kernel` (facts about a target kernel), `fevlint-check` (rules, config,
//! suppressions, lock, diagnostics, renderers), `fevlint-ide` (editor features in byte
//! offsets), `fevlint-lsp` (the language server). They are re-exported here under their
//! old module names, for the command line, tests, benches and fuzz targets.

pub mod cli;

pub use fevlint_check::{
    analysis, bpf, bpftrace, config, diagnostic, dynevents, emit, lock, render, rules, suppress, write_atomic,
};
pub use fevlint_ide as ide;
pub use fevlint_kernel as kernel;
pub use fevlint_lsp as lsp;
pub use fevlint_syntax as syntax;
