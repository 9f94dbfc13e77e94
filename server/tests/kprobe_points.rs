//! Where a kprobe may sit, asked of the real kernels: Debian's 6.12.117 and 6.1.192
//! (the fixtures' own `vmlinuz`) boot under QEMU and are given `p:` lines at many offsets
//! of many functions (a generator over each kernel's ftrace list, not hand-picked), each
//! followed by its removal; fevlint's kernel model (the fixture folder: System.map,
//! blacklist, and the image's code decoded with iced-x86) must give the kernel's verdict,
//! message and errno on every line it decides, and may leave only a few undecided
//! (offsets inside code the boot rewrites for its CPU). A probe on each function's entry
//! is kept and the kernel's `kprobes/list` says where it sat (`+0x0`, or `+0x4` past
//! ENDBR64): fevlint's entry offset must match each.
//!
//! The guest's CPU is QEMU 7.2's TCG `qemu64`, and `max` for the entries (both without
//! IBT: QEMU 7.2 has no CET feature flag at all; KVM, which could pass a host's IBT
//! through, does not run here): the "with IBT" kind cannot be presented on this machine.
//! The sources say what it would change for these kernels: nothing (see
//! `fevlint_kernel::code`). The `max` run: 40 lines per kernel, 80 s for both.
//!
//! Needs FEVLINT_REAL_TOOLS=1, qemu-system-x86, busybox-static, cpio. Cost on this
//! 2-core machine (TCG, shared with other jobs): 1,800 writes per kernel, 3 min for one
//! kernel, 4.3 min for both run side by side. Last run: 6.12.117 1,797 of 1,800 lines
//! decided (1,309 refusals), 3 unknown, 0 disagreements; 6.1.192 1,769 decided (1,265
//! refusals), 31 unknown, 0 disagreements; 40 of 40 entries placed on each.

use fevlint_check::dynevents::{self, KernelEnv};
use fevlint_kernel::Kernel;
use fevlint_mainline::{Assumption, Line, Rejection, Session};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixture(name: &str) -> PathBuf {
    root().join("fixtures/kernels").join(name)
}

/// Functions per kernel, and offsets per function (the first bytes, then spread).
const FUNCTIONS: usize = 40;
const FIRST_BYTES: u64 = 16;
const SPREAD: usize = 6;

/// The probe points: `(function, offset)`, from the kernel's ftrace list in file order
/// at an even stride (unique, not blacklisted, at least 32 bytes long).
fn points(k: &Kernel) -> Vec<(String, u64)> {
    let list = k.filter_functions().expect("ftrace list");
    let map = &k.symbols().expect("System.map").value;
    let blacklist = k.kprobe_blacklist().expect("blacklist");
    let names: Vec<&str> = list.value.iter().map(|(n, _)| n).collect();
    let stride = names.len() / (FUNCTIONS * 2);
    let mut out = Vec::new();
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut taken = 0;
    for name in names.iter().step_by(stride.max(1)) {
        if taken == FUNCTIONS {
            break;
        }
        if map.by_name(name).count() != 1 || blacklist.value.contains_name(name) || name.contains('.') {
            continue;
        }
        let Some(addr) = map.addr_of(name) else { continue };
        // The next symbol: where kallsyms ends this one.
        let size = map.iter_by_addr().find(|s| s.addr.0 > addr.0).map_or(0, |s| s.addr.0 - addr.0);
        if size < 32 {
            continue;
        }
        taken += 1;
        out.push((name.to_string(), 0));
        for off in 1..=FIRST_BYTES {
            out.push((name.to_string(), off));
        }
        for _ in 0..SPREAD {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            out.push((name.to_string(), FIRST_BYTES + 1 + (seed >> 33) % (size - FIRST_BYTES - 1)));
        }
    }
    assert_eq!(taken, FUNCTIONS, "not enough functions in the ftrace list");
    out
}

struct Verdict {
    accept: bool,
    message: String,
    errno: String,
}

/// Boots `image` with `defs` (quick mode), returns the verdicts by line and the
/// trigger's output.
fn boot(image: &Path, defs: &str, trigger: &str, name: &str, cpu: Option<&str>) -> (Vec<Verdict>, String) {
    for (tool, package) in [("qemu-system-x86_64", "qemu-system-x86"), ("busybox", "busybox-static"), ("cpio", "cpio")]
    {
        fevlint_testkit::require_tool(tool, package);
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("kprobe-points-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    std::fs::write(dir.join("defs.txt"), defs).expect("defs");
    let keep = dir.join("keep");
    let out = Command::new("bash")
        .arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["--tsv", "--quick", "--timeout", "1500", "-m", "256M", "-t", trigger, "--keep"])
        .arg(&keep)
        .args(cpu.map(|c| ["--cpu", c]).into_iter().flatten())
        .arg(image)
        .arg(dir.join("defs.txt"))
        .output()
        .expect("run-oracle.sh");
    let tsv = String::from_utf8_lossy(&out.stdout).into_owned();
    let result = std::fs::read_to_string(keep.join("result.log")).unwrap_or_default();
    let tout: String = result
        .lines()
        .filter_map(|l| l.trim_end_matches('\r').strip_prefix("@@O TOUT "))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut verdicts = Vec::new();
    for row in tsv.lines().filter(|l| l.starts_with("DEF\t")) {
        let f: Vec<&str> = row.split('\t').collect();
        verdicts.push(Verdict {
            accept: f[2] == "ACCEPT",
            message: f[f.len() - 3].to_owned(),
            errno: f[f.len() - 1].to_owned(),
        });
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!verdicts.is_empty(), "no verdicts:\n{tsv}\n{}", String::from_utf8_lossy(&out.stderr));
    (verdicts, tout)
}

/// `offsets`: also the offsets inside each function (else the entries alone).
fn real_kernel_agrees(folder: &str, cpu: Option<&str>, offsets: bool) {
    if !fevlint_testkit::real_tools("QEMU and Debian's kernels") {
        return;
    }
    let k = Kernel::open(&fixture(folder)).expect("fixture kernel");
    let dialect = dynevents::dialect_for(&k).expect("dialect");
    let env = KernelEnv::new(&k, &dialect);
    let mut points = points(&k);
    points.retain(|(_, off)| offsets || *off == 0);
    let mut defs = String::new();
    let mut entries = Vec::new();
    for (i, (f, off)) in points.iter().enumerate() {
        if *off == 0 {
            // Kept: the kernel's list says where it sat.
            defs.push_str(&format!("p:entry/e{i} {f}\n"));
            entries.push(f.clone());
        } else {
            defs.push_str(&format!("p:points/e{i} {f}+{off}\n-:points/e{i}\n"));
        }
    }
    let trigger = "mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null; cat /sys/kernel/debug/kprobes/list";
    let name = format!("{folder}-{}", cpu.unwrap_or("qemu64"));
    let (verdicts, list) = boot(&fixture(folder).join("vmlinuz"), &defs, trigger, &name, cpu);
    let lines: Vec<&str> = defs.lines().collect();
    assert_eq!(verdicts.len(), lines.len(), "one verdict per line");
    let mut session = Session::new(&dialect, &env);
    let (mut decided, mut unknown, mut refused) = (0, Vec::new(), 0);
    let mut bad = Vec::new();
    for (line, kernel) in lines.iter().zip(&verdicts) {
        let got = session.write(line);
        let ours = match &got {
            Ok(Line::Probe(p)) if p.assumptions.iter().any(|a| matches!(a, Assumption::Registers { .. })) => {
                unknown.push(format!("{line}: kernel {} {}", kernel.message, kernel.errno));
                // Keep the session's events as the kernel's.
                if !kernel.accept {
                    let _ = session.write(&format!("-:{}/{}", p.group, p.event));
                }
                continue;
            }
            Ok(_) => Verdict { accept: true, message: String::new(), errno: String::new() },
            Err(Rejection::Logged(e)) => Verdict {
                accept: false,
                message: format!("{}: error: {}", e.first().subsystem, e.first().message),
                errno: e.errno.name().to_owned(),
            },
            Err(Rejection::Silent { errno, .. }) => {
                Verdict { accept: false, message: "(no error_log entry)".into(), errno: errno.name().to_owned() }
            }
            Err(other) => panic!("{line}: {other:?}"),
        };
        decided += 1;
        refused += usize::from(!kernel.accept);
        if ours.accept != kernel.accept
            || (!ours.accept && (ours.message != kernel.message || ours.errno != kernel.errno))
        {
            bad.push(format!(
                "`{line}`: kernel {} {} {}; fevlint {} {} {}",
                if kernel.accept { "ACCEPT" } else { "REJECT" },
                kernel.message,
                kernel.errno,
                if ours.accept { "ACCEPT" } else { "REJECT" },
                ours.message,
                ours.errno
            ));
        }
    }
    // Where each entry probe sat: `ffffffff81457344  k  vfs_read+0x4    [DISABLED][FTRACE]`.
    let mut entry_bad = Vec::new();
    for f in &entries {
        let at = list
            .lines()
            .find_map(|l| l.split_whitespace().nth(2).filter(|w| w.split('+').next() == Some(f.as_str())))
            .unwrap_or_else(|| panic!("{f} is not in kprobes/list:\n{list}"));
        let off = at.split('+').nth(1).and_then(|o| u64::from_str_radix(o.trim_start_matches("0x"), 16).ok());
        if off != Some(env.entry_offset(f)) {
            entry_bad.push(format!("{f}: the kernel put it at {at}, fevlint says +{:#x}", env.entry_offset(f)));
        }
    }
    eprintln!(
        "{folder} on {}: {} lines, {decided} decided ({refused} refused by the kernel), {} left unknown, {} disagreements; {} entries placed, {} misplaced",
        cpu.unwrap_or("qemu64"),
        lines.len(),
        unknown.len(),
        bad.len(),
        entries.len(),
        entry_bad.len()
    );
    for u in &unknown {
        eprintln!("  unknown: {u}");
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(entry_bad.is_empty(), "{}", entry_bad.join("\n"));
    assert!(unknown.len() * 20 <= lines.len(), "{} of {} left unknown", unknown.len(), lines.len());
    assert!(!offsets || refused * 4 >= decided, "the generator must reach refusals too: {refused} of {decided}");
}

#[test]
fn debian_6_12_117_places_kprobes_where_fevlint_says() {
    real_kernel_agrees("6.12.117+deb12-amd64", None, true);
}

#[test]
fn debian_6_1_192_places_kprobes_where_fevlint_says() {
    real_kernel_agrees("6.1.0-56-amd64", None, true);
}

/// The other CPU kind TCG offers: `max` (every feature TCG emulates; still no IBT, which
/// QEMU 7.2 cannot present at all). The entries sit where they sat on `qemu64`, where
/// fevlint says: the boot's rewrites for this CPU do not move them.
#[test]
fn entries_sit_in_the_same_place_on_the_max_cpu() {
    real_kernel_agrees("6.12.117+deb12-amd64", Some("max"), false);
    real_kernel_agrees("6.1.0-56-amd64", Some("max"), false);
}
