//! Fuzzes BTFHub archives (`*.btf.tar`, `*.btf.tar.xz`): the tar reader that finds the
//! `.btf` member, then the BTF reader over it, end to end through the kernel loader (a
//! file on disk, the cache off) and directly.
#![no_main]

use fevlint_btf::Btf;
use fevlint_load::decompress;
use fevlint_types::model::TypeSource;
use libfuzzer_sys::fuzz_target;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn file(name: &str) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let d = DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("fevlint-fuzz-tar-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("dir");
        d
    });
    d.join(name)
}

fuzz_target!(|data: &[u8]| {
    if decompress::is_tar(data) {
        if let Ok((_, range)) = decompress::tar_member(data, ".btf", Path::new("fuzz.btf.tar")) {
            if let Ok(btf) = Btf::parse("fuzz", data[range].to_vec()) {
                let _ = btf.function_names();
                let _ = btf.functions("vfs_read");
            }
        }
    }
    // As the user would pass it: a plain archive, or the input as an xz/gzip file.
    let name = if data.starts_with(b"\xfd7zXZ\0") { "k.btf.tar.xz" } else { "k.btf.tar" };
    let path = file(name);
    std::fs::write(&path, data).expect("write");
    if let Ok(k) = fevlint_kernel::Kernel::open(&path) {
        let _ = k.function("vfs_read");
    }
});
