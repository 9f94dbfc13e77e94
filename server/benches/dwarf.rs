//! DWARF reader benchmark on a Debian `-dbg` vmlinux: whole-process wall time and peak
//! RSS (GNU time) of one question per process, against pahole, gdb and drgn on the
//! same file. Prints a table for `benches/README-dwarf.md`.
//!
//! The vmlinux comes from `scripts/fetch-dbg-vmlinux.sh` (set `FEVLINT_DBG_VMLINUX`,
//! or leave it in `target/dbg-vmlinux/`). Without it the bench says so and exits 0.
//! Run: `cargo bench --bench dwarf` (builds the `dwarf_lookup` example in release).

use std::path::{Path, PathBuf};
use std::process::Command;

fn vmlinux(root: &Path) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FEVLINT_DBG_VMLINUX") {
        return Some(PathBuf::from(p));
    }
    let dir = root.join("target/dbg-vmlinux");
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "vmlinux"))
}

/// Runs `argv` under `/usr/bin/time -f`, `runs` times; returns the best wall time (s),
/// its peak RSS (MB) and whether it succeeded.
fn measure(argv: &[&str], runs: usize) -> Option<(f64, f64)> {
    let mut best: Option<(f64, f64)> = None;
    for _ in 0..runs {
        let out = Command::new("/usr/bin/time").arg("-f").arg("@@ %e %M").args(argv).output().ok()?;
        if !out.status.success() {
            eprintln!("  {argv:?} failed: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
            return None;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err.lines().rev().find(|l| l.starts_with("@@ "))?;
        let mut it = line[3..].split_whitespace();
        let wall: f64 = it.next()?.parse().ok()?;
        let rss_kb: f64 = it.next()?.parse().ok()?;
        if best.is_none_or(|(w, _)| wall < w) {
            best = Some((wall, rss_kb / 1024.0));
        }
    }
    best
}

fn row(name: &str, argv: &[&str], runs: usize) {
    match measure(argv, runs) {
        Some((wall, rss)) => println!("| {name:<46} | {:>9.3} | {rss:>8.0} |", wall),
        None => println!("| {name:<46} | {:>9} | {:>8} |", "failed", "-"),
    }
}

fn have(tool: &str) -> bool {
    Command::new("sh").arg("-c").arg(format!("command -v {tool} >/dev/null")).status().is_ok_and(|s| s.success())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let Some(vm) = vmlinux(&root) else {
        println!("no -dbg vmlinux: run scripts/fetch-dbg-vmlinux.sh target/dbg-vmlinux (or set FEVLINT_DBG_VMLINUX)");
        return;
    };
    if !Path::new("/usr/bin/time").exists() {
        println!("needs GNU time (/usr/bin/time): apt-get install -y time");
        return;
    }
    let status = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["build", "--release", "--quiet", "--example", "dwarf_lookup"])
        .status()
        .expect("cargo build");
    assert!(status.success(), "building the dwarf_lookup example failed");
    let exe = root.join("target/release/examples/dwarf_lookup");
    let exe = exe.to_str().expect("utf-8 path");
    let v = vm.to_str().expect("utf-8 path");
    let cache = std::env::temp_dir().join(format!("fevlint-dwarf-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let cache_s = cache.to_str().expect("utf-8 path");
    let meta = std::fs::metadata(&vm).map(|m| m.len()).unwrap_or(0);
    println!(
        "file: {} ({:.0} MB); page cache warm (each command runs 3 times, best shown)",
        vm.display(),
        meta as f64 / 1e6
    );
    println!();
    println!("| {:<46} | {:>9} | {:>8} |", "question (one process each)", "wall (s)", "RSS (MB)");
    println!("|{}|{}|{}|", "-".repeat(48), "-".repeat(11), "-".repeat(10));
    // Warm the page cache so every tool reads from memory.
    let _ = measure(&["cat", v], 1);

    row("fevlint cold: struct file", &[exe, v, "struct", "file", "--no-cache"], 3);
    row("fevlint cold: struct task_struct", &[exe, v, "struct", "task_struct", "--no-cache"], 3);
    row("fevlint cold: struct tcp_sock (late unit)", &[exe, v, "struct", "tcp_sock", "--no-cache"], 3);
    row("fevlint cold: func vfs_read (.symtab+aranges)", &[exe, v, "func", "vfs_read", "--no-cache"], 3);
    let env_cache = format!("XDG_CACHE_HOME={cache_s}");
    row("fevlint: full index build (no cache)", &["env", &env_cache, exe, v, "index", "--no-cache"], 3);
    row("fevlint: index build + cache write", &["env", &env_cache, exe, v, "index"], 1);
    row("fevlint: warm index load (cached)", &["env", &env_cache, exe, v, "index"], 3);
    row("fevlint: warm, func cpumask_next (no symbol)", &["env", &env_cache, exe, v, "func", "cpumask_next"], 3);
    if have("pahole") {
        row("pahole -F dwarf -C file", &["pahole", "-F", "dwarf", "-C", "file", v], 1);
    }
    if have("gdb") {
        row("gdb -batch -ex 'ptype struct file'", &["gdb", "-batch", "-nx", "-ex", "ptype struct file", v], 1);
    }
    let drgn = "import sys, drgn; p = drgn.Program(); p.load_debug_info([sys.argv[1]]); p.type('struct file')";
    if Command::new("/usr/bin/python3").args(["-c", "import drgn"]).status().is_ok_and(|s| s.success()) {
        row("drgn: load_debug_info + type('struct file')", &["/usr/bin/python3", "-c", drgn, v], 3);
    } else {
        println!("| {:<46} | {:>9} | {:>8} |", "drgn (python3-drgn not installed)", "-", "-");
    }
    let _ = std::fs::remove_dir_all(&cache);
}
