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
pub mod lock;
pub mod lsp;
pub mod render;
pub mod rules;
pub mod suppress;
pub mod syntax;

/// Writes a user's file atomically, through symlinks to the file they name, keeping its
/// mode, leaving no temporary file behind (see [`kernel::load::fsio::write_atomic`]).
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    kernel::load::fsio::write_atomic(path, bytes)
}
