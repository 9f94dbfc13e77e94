//! Test support shared by the workspace's test suites; a dev-dependency only, never
//! published and never linked into fevlint itself.
//!
//! The one switch for tests that need a real outside tool: QEMU and its kernels, objects
//! built by clang and judged by libbpf or bpftool, bpftrace, pahole, gdb, editors
//! (Neovim, Emacs, Vim, Kakoune, pytest-lsp), code-server, debootstrap, Node.js, network.
//! A crate's own `cargo test` runs without any of them; `.ci/run` sets
//! `FEVLINT_REAL_TOOLS=1` and then runs them all, and a missing tool is a failure.

use std::process::{Command, Stdio};

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
