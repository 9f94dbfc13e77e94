//! fevlint: checks kernel function-event scripts against the kernel parser and real kernels.
//!
//! Layers (see ARCHITECTURE.md): `syntax` (text to tree, never fails), `kernel` (facts
//! about a target kernel), `rules` (diagnostics), `render` (text, json), `ide`
//! (editor features in byte offsets), `lsp` (the language server), `cli`.

pub mod analysis;
pub mod cli;
pub mod diagnostic;
pub mod ide;
pub mod kernel;
pub mod lsp;
pub mod render;
pub mod rules;
pub mod syntax;
