//! Fuzzes the readers of fevlint's own cache files, which another program may have
//! damaged: the decompression cache's header/payload pair and a derived file's trailer
//! (`fevlint_load::cache`), then the decoders of what they hold, the function-name table
//! (`FunctionNames::from_bytes`) and a BTF name index (what an `IndexStore` hands the BTF
//! reader). Each must answer "not valid" or a table whose lookups stay in bounds; never
//! panic.
#![no_main]

use fevlint_btf::{Btf, IndexBytes, IndexStore};
use fevlint_kernel::names::FunctionNames;
use fevlint_load::{cache, Blob};
use fevlint_types::model::{TypeNamespace, TypeSource};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// A store that holds the fuzz input under every name.
struct Store(Vec<u8>);

impl IndexStore for Store {
    fn get(&self, _: &str) -> Option<IndexBytes> {
        Some(Box::new(self.0.clone()))
    }
    fn put(&self, _: &str, _: &[u8]) {}
}

/// A small real BTF blob: `int`, `struct file { int f; }`, `int vfs_read(void)`.
fn btf_blob() -> Vec<u8> {
    let strings = b"\0int\0file\0f\0vfs_read\0";
    let words: [u32; 15] = [
        1, 1 << 24, 4, 0x0100_0020, // [1] INT int, 4 bytes, signed, 32 bits
        5, (4 << 24) | 1, 4, 10, 1, 0, // [2] STRUCT file { int f; }
        0, 13 << 24, 1, // [3] FUNC_PROTO int (void)
        12, (12 << 24) | 1, // [4] FUNC vfs_read (global) ...
    ];
    let mut types: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    types.extend_from_slice(&3u32.to_le_bytes()); // ... of type [3]
    let mut out = vec![0x9f, 0xeb, 1, 0];
    for w in [24u32, 0, types.len() as u32, types.len() as u32, strings.len() as u32] {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(&types);
    out.extend_from_slice(strings);
    out
}

/// One private cache directory per fuzzing process.
fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("fevlint-fuzz-cache-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("cache dir");
        d
    })
}

fn names(table: &FunctionNames) {
    for i in 0..table.len().min(64) {
        let _ = table.get(i);
    }
    let _ = table.get(table.len());
    let _ = table.contains("vfs_read");
    let _ = table.lower_bound("tcp");
    let _ = table.iter().take(64).count();
}

fuzz_target!(|data: &[u8]| {
    let d = dir();
    let cache = cache::Cache::new(Some(d.clone()));
    // A derived file as the cache stores it: the fuzz input is the whole file.
    std::fs::write(d.join("fuzz.names"), data).expect("write");
    if let Some(slice) = cache.get_derived("fuzz.names") {
        if let Some(t) = FunctionNames::from_bytes(slice.clone()) {
            names(&t);
        }
    }
    // The decoders on the raw bytes too (a CRC-valid file with absurd contents).
    let blob = Blob::from_vec(data.to_vec());
    if let Some(t) = FunctionNames::from_bytes(blob.whole()) {
        names(&t);
    }
    // A stored BTF name index: the reader checks it before use, else rebuilds.
    if let Ok(btf) = Btf::parse("fuzz", btf_blob()) {
        let btf = btf.with_index_cache("fuzz".to_owned(), Arc::new(Store(data.to_vec())));
        let _ = btf.find_type(TypeNamespace::Struct, "file");
        let _ = btf.find_type(TypeNamespace::Ordinary, "int");
        let _ = btf.functions("vfs_read");
        let _ = btf.function_names();
    }
    // A decompression-cache entry for a source file: header then payload, both from the
    // input (split at its first byte), keyed by the source's identity.
    let src = d.join("source.btf.zst");
    if !src.exists() {
        std::fs::write(&src, b"source").expect("source");
    }
    let split = usize::from(data.first().copied().unwrap_or(0)).min(data.len());
    for entry in std::fs::read_dir(d).expect("dir").flatten() {
        let p = entry.path();
        match p.extension().and_then(|e| e.to_str()) {
            Some("hdr") => std::fs::write(&p, &data[..split]).expect("hdr"),
            Some("bin") => std::fs::write(&p, &data[split..]).expect("bin"),
            _ => {}
        }
    }
    if cache.get(&src).is_none() && data.len() >= 64 * 1024 {
        // Seed one real entry (the payload must be large enough to be cached).
        cache.put(&src, fevlint_load::Codec::ALL[0], data);
    }
    let _ = cache.get(&src);
});
