//! BPF objects compiled for the tests that judge them (`server/tests/bpf_check.rs`,
//! `bpf_kernel.rs`): a `vmlinux.h` of a fixture kernel's BTF (bpftool) and clang's BPF
//! target, as a libbpf CO-RE project builds them.

use std::path::Path;
use std::process::Command;

use crate::{kernel_fixture_file, repo, run};

/// Writes `dir/vmlinux.h`, `bpftool btf dump ... format c` of the fixture kernel
/// `release`'s BTF (kept beside it as `dir/<release>.btf`).
pub fn vmlinux_h(release: &str, dir: &Path) {
    let (_, btf_bytes) = kernel_fixture_file(release, "vmlinux.btf");
    let btf = dir.join(format!("{release}.btf"));
    std::fs::write(&btf, btf_bytes).expect("write BTF");
    let h = run(Command::new("bpftool").args(["btf", "dump", "file"]).arg(&btf).args(["format", "c"]));
    std::fs::write(dir.join("vmlinux.h"), h.stdout).expect("vmlinux.h");
}

/// Copies `server/tests/bpf/<source>` into `dir` and compiles it there ([`clang`]).
pub fn compile(dir: &Path, source: &str) {
    std::fs::copy(repo().join("server/tests/bpf").join(source), dir.join(source)).expect("copy source");
    clang(dir, source);
}

/// Compiles `dir/<source>` with clang (`-g -O2 -target bpf`, x86 tracing macros) to
/// `<source without .c>.o` beside it.
pub fn clang(dir: &Path, source: &str) {
    let obj = source.replace(".c", ".o");
    run(Command::new("clang").current_dir(dir).args([
        "-g",
        "-O2",
        "-target",
        "bpf",
        "-D__TARGET_ARCH_x86",
        "-I.",
        "-c",
        source,
        "-o",
        &obj,
    ]));
}
