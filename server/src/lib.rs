//! fevlint: checks kernel function-event scripts against the kernel parser and real kernels.
//!
//! Layers (see ARCHITECTURE.md): `syntax` (text to tree, never fails), `kernel` (facts
//! about a target kernel), `rules` (diagnostics), `config` (`fevlint.toml`), `suppress`
//! (suppression comments), `render` (text, json, sarif, github), `ide` (editor features
//! in byte offsets), `lsp` (the language server), `cli`.

pub mod analysis;
pub mod cli;
pub mod config;
pub mod diagnostic;
pub mod ide;
pub mod kernel;
pub mod lsp;
pub mod render;
pub mod rules;
pub mod suppress;
pub mod syntax;
