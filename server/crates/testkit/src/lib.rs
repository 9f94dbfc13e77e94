//! Test support shared by the workspace's test suites; a dev-dependency only, never
//! published and never linked into fevlint itself.
//!
//! The one switch for tests that need a real outside tool: QEMU and its kernels, objects
//! built by clang and judged by libbpf or bpftool, bpftrace, pahole, gdb, editors
//! (Neovim, Emacs, Vim, Kakoune, pytest-lsp), code-server, debootstrap, Node.js, network.
//! A crate's own `cargo test` runs without any of them; `.ci/run` sets
//! `FEVLINT_REAL_TOOLS=1` and then runs them all, and a missing tool is a failure.
//!
//! Beside it, helpers several suites had copied: the repository's paths, the fixture
//! kernels' `System.map`, running a command that must succeed, re-laying a QEMU ELF
//! dump for makedumpfile, ([`oracle`]) a kernel under QEMU stopped at one call, and
//! ([`bpf`]) BPF objects built by clang against a fixture's `vmlinux.h`.

pub mod bpf;
pub mod dwarf;
pub mod oracle;

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A small deterministic generator (xorshift), for tests that generate their cases: a
/// failure reproduces from the seed.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// The environment variable that turns the real-tool tests on.
pub const REAL_TOOLS: &str = "FEVLINT_REAL_TOOLS";

/// Whether tests that need real outside tools run: `FEVLINT_REAL_TOOLS=1` (`.ci/run`
/// sets it). When it is not set this prints a line saying what was skipped and why, and
/// returns false; call it first in such a test:
///
/// ```
/// if !fevlint_testkit::real_tools("QEMU") {
///     return;
/// }
/// ```
pub fn real_tools(needs: &str) -> bool {
    let on = std::env::var_os(REAL_TOOLS).is_some_and(|v| !v.is_empty() && v != "0");
    if !on {
        eprintln!("skipped: needs {needs}; set {REAL_TOOLS}=1 to run it (.ci/run does)");
    }
    on
}

/// Whether `tool` is a command on `PATH`.
pub fn has_tool(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Fails the test, naming the Debian package to install, when `tool` is not on `PATH`.
/// With the switch set a missing tool is a failure, never a silent skip.
pub fn require_tool(tool: &str, package: &str) {
    assert!(has_tool(tool), "`{tool}` is not installed (Debian package `{package}`): run scripts/install-test-deps.sh");
}

/// The repository's root (this crate is `server/crates/testkit/`).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

/// A fixture kernel's folder, `fixtures/kernels/<release>`.
pub fn kernel_fixture(release: &str) -> PathBuf {
    repo().join("fixtures/kernels").join(release)
}

/// A fixture kernel's `System.map.zst`: every symbol's name and address.
pub fn system_map(release: &str) -> HashMap<String, u64> {
    let map = kernel_fixture(release).join("System.map.zst");
    let file = std::fs::File::open(&map).unwrap_or_else(|e| panic!("{}: {e}", map.display()));
    let text = zstd::decode_all(file).unwrap_or_else(|e| panic!("{}: {e}", map.display()));
    String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let addr = u64::from_str_radix(w.next()?, 16).ok()?;
            let _type = w.next()?;
            Some((w.next()?.to_owned(), addr))
        })
        .collect()
}

/// Runs `cmd`, failing the test with its output unless it succeeds.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// QEMU 7.2 writes section headers before the program headers; Debian's makedumpfile
/// 1.7.2 expects the program headers right after the ELF header. Writes the same
/// segments to `dst` in that layout (only the headers move; the bytes are QEMU's).
pub fn relayout(src: &Path, dst: &Path) {
    let mut f = std::fs::File::open(src).expect("open dump");
    let mut eh = [0u8; 64];
    f.read_exact(&mut eh).expect("ehdr");
    let phoff = u64::from_le_bytes(eh[32..40].try_into().expect("8"));
    let phnum = u16::from_le_bytes([eh[56], eh[57]]) as usize;
    f.seek(SeekFrom::Start(phoff)).expect("seek");
    let mut ph = vec![0u8; 56 * phnum];
    f.read_exact(&mut ph).expect("phdrs");
    eh[32..40].copy_from_slice(&64u64.to_le_bytes());
    eh[40..48].copy_from_slice(&0u64.to_le_bytes());
    eh[52..54].copy_from_slice(&64u16.to_le_bytes());
    eh[58..64].copy_from_slice(&[64, 0, 0, 0, 0, 0]);
    let mut off = 64 + 56 * phnum as u64;
    let mut parts = Vec::new();
    for p in ph.chunks_exact_mut(56) {
        let o = u64::from_le_bytes(p[8..16].try_into().expect("8"));
        let n = u64::from_le_bytes(p[32..40].try_into().expect("8"));
        parts.push((o, n));
        p[8..16].copy_from_slice(&off.to_le_bytes());
        off += n;
    }
    let mut out = std::io::BufWriter::new(std::fs::File::create(dst).expect("create"));
    out.write_all(&eh).expect("write");
    out.write_all(&ph).expect("write");
    for (o, n) in parts {
        f.seek(SeekFrom::Start(o)).expect("seek");
        std::io::copy(&mut (&mut f).take(n), &mut out).expect("copy");
    }
    out.flush().expect("flush");
}

/// A fixture kernel's `<file>.zst` (`System.map`, `vmlinux`, ...), decompressed: its path
/// and bytes.
pub fn kernel_fixture_file(release: &str, file: &str) -> (PathBuf, Vec<u8>) {
    let path = kernel_fixture(release).join(format!("{file}.zst"));
    let data = std::fs::File::open(&path).and_then(zstd::decode_all);
    (path.clone(), data.unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// The Debian 6.12.117 fixture's compressed image: its path and bytes.
pub fn vmlinuz_612() -> (PathBuf, Vec<u8>) {
    let path = kernel_fixture("6.12.117+deb12-amd64").join("vmlinuz");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, data)
}
