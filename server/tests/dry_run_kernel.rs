//! The dry run against the only judge that counts: a real kernel recording the same call.
//!
//! Debian's 6.12 kernel from the fixtures boots under QEMU (`tests/oracle/run-oracle.sh`,
//! TCG). A kprobe written by hand records member reads, a string and a symbol of one
//! `vfs_read` call (`dd bs=777` makes it the only call with `count == 777`); QEMU's gdb
//! stub stops the guest at that call's entry and `dump-guest-memory` writes the dump
//! there, as ELF and as QEMU's kdump-compressed file. `fevlint dry-run` of the
//! equivalent function-event definition over each dump, with the registers at the stop,
//! must print the values of the kernel's trace line, field for field.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RELEASE: &str = "6.12.117+deb12-amd64";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn need(tool: &str, package: &str) {
    let found =
        Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().is_ok_and(|o| o.status.success());
    assert!(found, "`{tool}` is needed: run scripts/install-test-deps.sh (apt-get install {package})");
}

fn system_map() -> HashMap<String, u64> {
    let map = root().join("fixtures/kernels").join(RELEASE).join("System.map.zst");
    let text = zstd::decode_all(std::fs::File::open(&map).expect("System.map.zst")).expect("zstd");
    String::from_utf8_lossy(&text)
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let addr = u64::from_str_radix(w.next()?, 16).ok()?;
            let _ = w.next()?;
            Some((w.next()?.to_owned(), addr))
        })
        .collect()
}

/// `name=value` pairs of a kprobe trace line (strings unquoted).
fn kprobe_fields(line: &str) -> Vec<(String, String)> {
    let body = line.split_once(") ").map_or("", |(_, b)| b);
    let mut out = Vec::new();
    let mut rest = body;
    while let Some((name, tail)) = rest.split_once('=') {
        let (value, next) = match tail.strip_prefix('"') {
            Some(q) => q.split_once("\" ").map_or((q.trim_end_matches('"'), ""), |(v, n)| (v, n)),
            None => tail.split_once(' ').unwrap_or((tail, "")),
        };
        out.push((name.trim().to_owned(), value.to_owned()));
        rest = next;
    }
    out
}

/// `name=value` pairs of a function-event trace line `caller->function(a=1, b=2)`.
fn event_fields(line: &str) -> Vec<(String, String)> {
    let inner = line.split_once('(').and_then(|(_, r)| r.strip_suffix(')')).unwrap_or("");
    inner.split(", ").filter_map(|f| f.split_once('=')).map(|(n, v)| (n.to_owned(), v.to_owned())).collect()
}

/// A kprobe value as the function-event printer prints it: hex without `0x`.
fn normalise(v: &str) -> String {
    v.strip_prefix("0x").map_or_else(|| v.to_owned(), str::to_owned)
}

#[test]
fn the_dry_run_equals_the_kernels_trace_for_the_same_call() {
    for (tool, package) in [
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("busybox", "busybox-static"),
        ("cpio", "cpio"),
        ("socat", "socat"),
        ("gdb", "gdb"),
    ] {
        need(tool, package);
    }
    let syms = system_map();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dry-run-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    // f_mode (+12), f_flags (+48), f_op->llseek (+16, then +16), the dentry's name
    // (f_path.dentry +72, d_name.name +40), count, *pos: offsets from the fixture's BTF.
    let kprobe = "p:kr vfs_read mode=+12($arg1):x32 flags=+48($arg1):x32 llseek=+16(+16($arg1)):symbol \
                  name=+0(+40(+72($arg1))):string count=$arg3:u64 pos=+0($arg4):s64";
    let definition =
        "vfs_read(x32 mode+12[0] | x32 flags+48[0] | symbol llseek+16[0]+16[0] | string name+72[0]+40[0], \
                      NULL, u64 count, s64 pos[0])\n";
    std::fs::write(dir.join("defs.txt"), format!("{kprobe}\n")).expect("defs");
    let stop = dir.join("stop.core");
    let out = Command::new("bash")
        .arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["-m", "160M", "--fwcfg-ko"])
        .arg(root().join("tests/oracle/qemu_fw_cfg-6.12.117+deb12-amd64.ko.xz"))
        .arg("--dump")
        .arg(dir.join("end.core"))
        .args(["-t", "dd if=/proc/version of=/dev/null bs=777 count=1"])
        .arg("--gdb-stop")
        .arg(format!("{:#x}", syms["vfs_read"]))
        .arg("$rdx == 777")
        .arg(&stop)
        .arg(root().join("fixtures/kernels").join(RELEASE).join("vmlinuz"))
        .arg(dir.join("defs.txt"))
        .output()
        .expect("run-oracle.sh");
    let text = String::from_utf8_lossy(&out.stdout);
    let _ = std::fs::remove_file(dir.join("end.core"));
    let line = text
        .lines()
        .find(|l| l.contains(" kr: (vfs_read+") && l.contains("count=777"))
        .unwrap_or_else(|| panic!("no trace line for the dd call:\n{text}\n{}", String::from_utf8_lossy(&out.stderr)));
    let kernel = kprobe_fields(line);
    assert_eq!(kernel.len(), 6, "{line}");

    let regs = std::fs::read_to_string(stop.with_extension("core.regs")).expect("gdb's registers at the stop");
    let cr3 = regs
        .lines()
        .find(|l| l.starts_with("cr3"))
        .and_then(|l| l.split_whitespace().nth(1))
        .expect("cr3 in gdb's registers")
        .to_owned();
    std::fs::write(dir.join("t.fev"), definition).expect("script");
    let kdump = stop.with_extension("core.kdump");
    // The ELF dump carries QEMU's CPU state (CR3); the kdump file does not, so its run
    // is given the CR3 gdb saw.
    for (core, extra) in [(&stop, None), (&kdump, Some(cr3.as_str()))] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fevlint"));
        cmd.arg("dry-run").arg("--kernel").arg(root().join("fixtures/kernels").join(RELEASE)).arg("--core").arg(core);
        if let Some(cr3) = extra {
            cmd.args(["--cr3", cr3]);
        }
        let run = cmd.arg(dir.join("t.fev")).output().expect("fevlint dry-run");
        let printed = String::from_utf8_lossy(&run.stdout);
        assert!(run.status.success(), "{}: {}", core.display(), String::from_utf8_lossy(&run.stderr));
        let first = printed.lines().next().unwrap_or_default();
        assert!(first.ends_with("->vfs_read(") || first.contains("->vfs_read("), "{printed}");
        let ours = event_fields(first);
        let theirs: Vec<(String, String)> = kernel.iter().map(|(n, v)| (n.clone(), normalise(v))).collect();
        assert_eq!(ours, theirs, "{}\nkernel: {line}\nfevlint: {printed}", core.display());
        assert_eq!(printed.lines().count(), 1, "no read faulted: {printed}");
        eprintln!("{}\n  kernel:  {line}\n  fevlint: {first}", core.display());
    }
    // The symbol is a real function, named with its size as the kernel's %pS names it.
    let llseek = &kernel.iter().find(|(n, _)| n == "llseek").expect("llseek").1;
    assert!(llseek.contains("+0x0/0x"), "{llseek}");
    let _ = std::fs::remove_dir_all(&dir);
}
