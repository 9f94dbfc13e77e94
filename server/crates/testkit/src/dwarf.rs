//! The DWARF tests' helpers (the reader's own, and its agreement with BTF): compile the C fixtures of `fixtures/dwarf/` with
//! the system gcc into a fresh temporary directory, and add BTF with pahole.
//!
//! Missing tools fail the test with a message saying what to install; nothing is skipped.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub fn fixtures() -> PathBuf {
    crate::repo().join("fixtures/dwarf")
}

/// A fresh directory under the system's temporary directory, removed and recreated.
pub fn scratch(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "fevlint-dwarf-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("{what}: cannot run {:?}: {e}. Install it (Debian: apt-get install -y gcc dwarves)", cmd.get_program())
    });
    assert!(
        out.status.success(),
        "{what} failed ({}): {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Compiles the agreement fixture (two units) with `gcc -g -O0 <extra>` into `dir/name`.
pub fn compile_agree(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let f = fixtures();
    let out = dir.join(name);
    let mut cmd = Command::new("gcc");
    cmd.args(["-g", "-O0", "-fno-eliminate-unused-debug-types"])
        .args(extra)
        .arg("-o")
        .arg(&out)
        .arg(f.join("agree_a.c"))
        .arg(f.join("agree_b.c"));
    run(&mut cmd, "gcc");
    out
}

/// Adds a `.BTF` section converted from the file's own DWARF (`pahole -J --btf_gen_floats`, in place).
pub fn add_btf(path: &Path) {
    // `--btf_gen_floats` as the kernel build passes it: otherwise floats become INTs.
    run(Command::new("pahole").args(["-J", "--btf_gen_floats"]).arg(path), "pahole -J");
}
