//! Shared helpers for the BTF tests: the real kernel blobs and a builder for tiny
//! hand-made blobs (cycles, split BTF, odd kinds).
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use fevlint_btf::Btf;

/// The four kernels with BTF, oldest first.
pub const KERNELS: [&str; 4] = ["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"];

pub fn kernel_dir(kernel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/kernels").join(kernel)
}

/// Decompresses a `.zst` fixture with the zstd crate.
pub fn unzstd(path: &std::path::Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zstd::decode_all(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Per-kernel values computed once per test binary.
type Cache<T> = OnceLock<Mutex<Vec<(String, T)>>>;

/// The raw BTF bytes of a kernel, decompressed once per test binary.
pub fn raw_btf(kernel: &str) -> Arc<[u8]> {
    static CACHE: Cache<Arc<[u8]>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, b)) = cache.iter().find(|(k, _)| k == kernel) {
        return b.clone();
    }
    let bytes: Arc<[u8]> = unzstd(&kernel_dir(kernel).join("vmlinux.btf.zst")).into();
    cache.push((kernel.to_string(), bytes.clone()));
    bytes
}

/// The parsed BTF of a kernel, once per test binary.
pub fn btf(kernel: &str) -> Arc<Btf> {
    static CACHE: Cache<Arc<Btf>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some((_, b)) = cache.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| k == kernel) {
        return b.clone();
    }
    let parsed = Arc::new(Btf::parse(format!("{kernel}/vmlinux.btf"), raw_btf(kernel)).expect("real BTF parses"));
    cache.lock().unwrap_or_else(|e| e.into_inner()).push((kernel.to_string(), parsed.clone()));
    parsed
}

/// Builds little-endian BTF blobs type by type.
pub struct Builder {
    types: Vec<u8>,
    strs: Vec<u8>,
    /// Added to every string offset (the base's string length, for split BTF).
    str_base: u32,
}

impl Builder {
    pub fn new() -> Builder {
        Builder { types: Vec::new(), strs: vec![0], str_base: 0 }
    }

    /// A split blob whose strings continue after `base_str_len` bytes of base strings.
    pub fn split(base_str_len: u32) -> Builder {
        Builder { types: Vec::new(), strs: vec![0], str_base: base_str_len }
    }

    pub fn str(&mut self, s: &str) -> u32 {
        let off = self.str_base + self.strs.len() as u32;
        self.strs.extend_from_slice(s.as_bytes());
        self.strs.push(0);
        off
    }

    /// Appends one type record and its extra words.
    pub fn ty(&mut self, name_off: u32, kind: u32, kind_flag: bool, vlen: u32, size_or_type: u32, extra: &[u32]) {
        let info = (u32::from(kind_flag) << 31) | (kind << 24) | vlen;
        for w in [name_off, info, size_or_type].iter().chain(extra) {
            self.types.extend_from_slice(&w.to_le_bytes());
        }
    }

    pub fn build(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&0xEB9Fu16.to_le_bytes());
        out.push(1);
        out.push(0);
        for w in [24u32, 0, self.types.len() as u32, self.types.len() as u32, self.strs.len() as u32] {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strs);
        out
    }
}

/// `KEY=VALUE` pairs of the "BTF statistics" block of a kernel's SOURCE.md.
pub fn source_stats(kernel: &str) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(kernel_dir(kernel).join("SOURCE.md")).expect("SOURCE.md");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("bytes=") || l.starts_with("INT=")) {
        for pair in line.split_whitespace() {
            if let Some((k, v)) = pair.split_once('=') {
                if let Ok(v) = v.parse() {
                    out.push((k.to_string(), v));
                }
            }
        }
    }
    out
}
