//! The checker: a script's `Parse` plus optional kernels in, diagnostics out. Rules,
//! resolution of fields against kernel types, meanings, drift between kernels,
//! `fevlint.toml`, suppression comments, the lock file, and the renderers (text, json,
//! sarif, github).
//!
//! Knows the syntax and the kernel model; never knows LSP, UTF-16 positions, URIs or the
//! command line.

pub mod analysis;
pub mod bpf;
pub mod bpftrace;
pub mod bpftrace_complete;
pub mod bpftrace_facts;
pub mod config;
pub mod diagnostic;
pub mod drift;
pub mod dynevents;
pub mod emit;
pub mod lock;
pub mod meaning;
pub mod render;
pub mod resolve;
pub mod rules;
/// Suppression comments belong to the rules (N103 and N104 are about them).
pub use rules::suppress;

/// Writes a user's file atomically, through symlinks to the file they name, keeping its
/// mode, leaving no temporary file behind (see [`fevlint_load::fsio::write_atomic`]).
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    fevlint_load::fsio::write_atomic(path, bytes)
}
