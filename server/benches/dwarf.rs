//! DWARF reader benchmark on a Debian `-dbg` vmlinux: whole-process wall time, CPU
//! time and peak RSS of one question per process (the `dwarf_lookup` example and the
//! `fevlint kernel` CLI), against pahole, gdb and drgn on the same file; the full index
//! and drgn run alternately. Prints a table for `benches/README-dwarf.md`.
//!
//! The vmlinux comes from `scripts/fetch-dbg-vmlinux.sh` (set `FEVLINT_DBG_VMLINUX`,
//! or leave it in `target/dbg-vmlinux/`). Without it the bench says so and exits 0.
//! Run: `cargo bench --bench dwarf` (builds the example and the binary in release).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

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

/// One process: wall time (measured here, so it includes GNU time's own exec, about
/// 1 ms), CPU time (user + system, in GNU time's 10 ms ticks) and peak RSS.
#[derive(Clone, Copy)]
struct Run {
    wall_ms: f64,
    cpu_ms: f64,
    rss_mb: f64,
}

fn run_once(argv: &[&str]) -> Option<Run> {
    let t = Instant::now();
    let out = Command::new("/usr/bin/time").arg("-f").arg("@@ %U %S %M").args(argv).output().ok()?;
    let wall_ms = t.elapsed().as_secs_f64() * 1e3;
    if !out.status.success() {
        eprintln!("  {argv:?} failed: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().rev().find(|l| l.starts_with("@@ "))?;
    let v: Vec<f64> = line[3..].split_whitespace().filter_map(|x| x.parse().ok()).collect();
    let [user, sys, rss_kb] = v[..] else { return None };
    Some(Run { wall_ms, cpu_ms: (user + sys) * 1e3, rss_mb: rss_kb / 1024.0 })
}

/// The minimum of each column over the runs (the least disturbed by other load).
fn best(runs: &[Run]) -> Option<Run> {
    let min = |f: fn(&Run) -> f64| runs.iter().map(f).fold(f64::INFINITY, f64::min);
    (!runs.is_empty()).then(|| Run {
        wall_ms: min(|r| r.wall_ms),
        cpu_ms: min(|r| r.cpu_ms),
        rss_mb: min(|r| r.rss_mb),
    })
}

fn print_row(name: &str, r: Option<Run>) {
    match r {
        Some(r) => {
            // GNU time counts CPU in 10 ms ticks.
            let cpu = if r.cpu_ms < 10.0 { "<10".to_owned() } else { format!("{:.0}", r.cpu_ms) };
            println!("| {name:<52} | {:>9.1} | {cpu:>8} | {:>8.0} |", r.wall_ms, r.rss_mb)
        }
        None => println!("| {name:<52} | {:>9} | {:>8} | {:>8} |", "failed", "-", "-"),
    }
}

fn row(name: &str, argv: &[&str], runs: usize) {
    let all: Vec<Run> = (0..runs).filter_map(|_| run_once(argv)).collect();
    print_row(name, if all.len() == runs { best(&all) } else { None });
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
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
        .args(["build", "--release", "--quiet", "--example", "dwarf_lookup", "--bin", "fevlint"])
        .status()
        .expect("cargo build");
    assert!(status.success(), "building the dwarf_lookup example failed");
    let exe = root.join("target/release/examples/dwarf_lookup");
    let exe = exe.to_str().expect("utf-8 path");
    let cli = root.join("target/release/fevlint");
    let cli = cli.to_str().expect("utf-8 path");
    let v = vm.to_str().expect("utf-8 path");
    let cache = std::env::temp_dir().join(format!("fevlint-dwarf-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&cache);
    let cache_s = cache.to_str().expect("utf-8 path");
    let meta = std::fs::metadata(&vm).map(|m| m.len()).unwrap_or(0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!("file: {} ({:.0} MB); page cache warm; {cores} CPUs ({cpu})", vm.display(), meta as f64 / 1e6);
    println!("load average at start: {}", loadavg());
    println!("each row: the minimum of each column over the runs shown");
    println!();
    println!("| {:<52} | {:>9} | {:>8} | {:>8} |", "question (one process each)", "wall (ms)", "CPU (ms)", "RSS (MB)");
    println!("|{}|{}|{}|{}|", "-".repeat(54), "-".repeat(11), "-".repeat(10), "-".repeat(10));
    // Warm the page cache so every tool reads from memory.
    let _ = run_once(&["cat", v]);

    row("fevlint cold: struct file (x10)", &[exe, v, "struct", "file", "--no-cache"], 10);
    row("fevlint cold: struct task_struct (x10)", &[exe, v, "struct", "task_struct", "--no-cache"], 10);
    row("fevlint cold: struct tcp_sock, late unit (x5)", &[exe, v, "struct", "tcp_sock", "--no-cache"], 5);
    row("fevlint cold: func vfs_read, .symtab+aranges (x10)", &[exe, v, "func", "vfs_read", "--no-cache"], 10);
    let no_cache = "FEVLINT_NO_CACHE=1";
    row(
        "CLI: fevlint kernel type V 'struct file' (x5)",
        &["env", no_cache, cli, "kernel", "type", v, "struct file"],
        5,
    );
    row("CLI: fevlint kernel fn V vfs_read (x5)", &["env", no_cache, cli, "kernel", "fn", v, "vfs_read"], 5);
    // The full index against drgn, alternating so both see the same load.
    // drgn's Python: `FEVLINT_BENCH_PYTHON` (scripts/bench.sh installs drgn in a venv).
    let python = std::env::var("FEVLINT_BENCH_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".to_owned());
    let python = python.as_str();
    let drgn_ok = Command::new(python).args(["-c", "import drgn"]).status().is_ok_and(|s| s.success());
    let drgn = "import sys, drgn; p = drgn.Program(); p.load_debug_info([sys.argv[1]]); p.type('struct file')";
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        ours.extend(run_once(&[exe, v, "index", "--no-cache"]));
        if drgn_ok {
            theirs.extend(run_once(&[python, "-c", drgn, v]));
        }
    }
    print_row("fevlint: full index build, no cache (x5)", best(&ours));
    if drgn_ok {
        print_row("drgn: load_debug_info + type('struct file') (x5)", best(&theirs));
        row("python: start-up and `import drgn` only (x5)", &[python, "-c", "import drgn"], 5);
    } else {
        println!("| {:<52} | {:>9} | {:>8} | {:>8} |", "drgn (python3-drgn not installed)", "-", "-", "-");
    }
    let env_cache = format!("FEVLINT_CACHE_DIR={cache_s}");
    row("fevlint: index build + cache write", &["env", &env_cache, exe, v, "index"], 1);
    row("fevlint: warm index load, cached (x5)", &["env", &env_cache, exe, v, "index"], 5);
    row("fevlint: warm, func cpumask_next, no symbol (x5)", &["env", &env_cache, exe, v, "func", "cpumask_next"], 5);
    // A cold process per question, with the name index cached by build-id (as above):
    // a type of a late unit costs what an early one does.
    for (label, name) in [
        ("fevlint cold, index cached: struct file (x10)", "file"),
        ("fevlint cold, index cached: struct tcp_sock, late (x10)", "tcp_sock"),
        ("fevlint cold, index cached: struct bpf_prog_aux (x10)", "bpf_prog_aux"),
    ] {
        row(label, &["env", &env_cache, exe, v, "struct", name], 10);
    }
    if have("pahole") {
        row("pahole -F dwarf -C file", &["pahole", "-F", "dwarf", "-C", "file", v], 1);
    }
    if have("gdb") {
        row("gdb -batch -ex 'ptype struct file'", &["gdb", "-batch", "-nx", "-ex", "ptype struct file", v], 1);
    }
    println!();
    println!("load average at end: {}", loadavg());
    let _ = std::fs::remove_dir_all(&cache);
}
