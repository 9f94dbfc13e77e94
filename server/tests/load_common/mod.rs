//! Helpers shared by the `load_*` integration tests: fixture paths and zstd reading.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use fevlint_load::decompress::decompress;
use fevlint_load::{Codec, Limits, Origin};

pub const KERNELS: [&str; 5] =
    ["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.1.0-50-686-pae", "6.18.44-fc-v769"];

pub fn kernel_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name)
}

/// A fixture file `kernels/<kernel>/<file>.zst`, decompressed.
pub fn kernel_file(kernel: &str, file: &str) -> (PathBuf, Vec<u8>) {
    let path = kernel_dir(kernel).join(format!("{file}.zst"));
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let out = decompress(&data, Codec::Zstd, &Limits::default(), Origin::file(&path)).unwrap_or_else(|e| panic!("{e}"));
    (path, out)
}

pub fn vmlinuz_612() -> (PathBuf, Vec<u8>) {
    let path = kernel_dir("6.12.117+deb12-amd64").join("vmlinuz");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, data)
}
