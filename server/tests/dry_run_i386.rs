//! i386 against a real i386 kernel: Debian's 6.1.0-50-686-pae (the kernel of
//! `fixtures/kernels/6.1.0-50-686-pae`, downloaded by `scripts/install-test-deps.sh`) boots
//! under `qemu-system-i386` (TCG) with an i386 busybox. The lines `fevlint emit` writes for
//! `server/tests/dry_run/vfs_read_i386.fev` (slots in `%ax %dx %cx`, `-mregparm=3`) are
//! each accepted by that kernel and record one `vfs_read` call (`dd bs=777` makes it the
//! only one with `count == 777`); QEMU's gdb stub stops the guest at that call's entry and
//! `dump-guest-memory` writes the stop as ELF and as QEMU's kdump file. Over each,
//! `fevlint dry-run --emitted` must print the kernel's trace line of every event, field for
//! field (PAE page tables, from QEMU's CR3 and from VMCOREINFO's `swapper_pg_dir`), and the
//! function-event dry run the same values; another kernel's model is refused.
//!
//! Cost on this machine (2 cores, TCG): one boot with a gdb-conditioned breakpoint, 25-40 s
//! wall, and two dumps of a 160 MB guest (190 MB of disk, removed at the end).
//! Runs only with FEVLINT_REAL_TOOLS=1.

use fevlint_testkit::oracle::{event_fields, kprobe_fields, GdbStop};
use std::path::{Path, PathBuf};
use std::process::Command;

const RELEASE: &str = "6.1.0-50-686-pae";

fn root() -> PathBuf {
    fevlint_testkit::repo()
}

/// The kernel image, its `qemu_fw_cfg.ko` and an i386 busybox, where
/// `scripts/install-test-deps.sh` puts them.
fn i386_deps() -> (PathBuf, PathBuf, PathBuf) {
    let dir = std::env::var_os("FEVLINT_I386_DEPS").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/fevlint-test-deps/i386")
    });
    let files = (dir.join(format!("vmlinuz-{RELEASE}")), dir.join("qemu_fw_cfg.ko"), dir.join("busybox"));
    for f in [&files.0, &files.1, &files.2] {
        assert!(f.is_file(), "{} is missing: run scripts/install-test-deps.sh", f.display());
    }
    files
}

fn fevlint(args: &[&str], paths: &[&Path]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).args(paths).output().expect("fevlint");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn an_i386_kernel_accepts_the_emitted_lines_and_its_trace_equals_the_dry_run() {
    if !fevlint_testkit::real_tools("QEMU (qemu-system-i386)") {
        return;
    }
    for (tool, package) in [
        ("qemu-system-i386", "qemu-system-x86"),
        ("cpio", "cpio"),
        ("socat", "socat"),
        ("gdb", "gdb"),
        ("xz", "xz-utils"),
    ] {
        fevlint_testkit::require_tool(tool, package);
    }
    let (vmlinuz, fwcfg, busybox) = i386_deps();
    let kernel = root().join("fixtures/kernels").join(RELEASE);
    let script = root().join("server/tests/dry_run/vfs_read_i386.fev");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dry-run-i386-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");

    let (ok, emitted, err) = fevlint(&["emit", "--kernel"], &[&kernel, &script]);
    assert!(ok, "{err}");
    let wanted =
        std::fs::read_to_string(&script).expect("script").lines().filter(|l| l.starts_with("vfs_read(")).count();
    assert_eq!(emitted.lines().count(), wanted, "{emitted}{err}");
    assert!(emitted.lines().all(|l| l.starts_with("p:fevlint/vfs_read")), "{emitted}");
    std::fs::write(dir.join("defs.txt"), &emitted).expect("defs");

    let syms = fevlint_testkit::system_map(RELEASE);
    let stopped = GdbStop {
        qemu: Some("qemu-system-i386"),
        busybox: Some(&busybox),
        fwcfg: &fwcfg,
        image: &vmlinuz,
        definitions: &dir.join("defs.txt"),
        trigger: "dd if=/proc/version of=/dev/null bs=777 count=1",
        at: syms["vfs_read"],
        condition: "$ecx == 777",
        dir: &dir,
    }
    .run();
    let stop = stopped.core.clone();
    let text = stopped.stdout.clone();
    assert!(text.contains(&format!("# kernel {RELEASE}")), "{text}\n{}", stopped.stderr);
    // Every emitted line is accepted by the i386 kernel.
    for line in emitted.lines() {
        assert!(text.lines().any(|l| l == format!("ACCEPT {line}")), "not accepted: {line}\n{text}");
    }
    // dd calls vfs_read once: each event has one line from dd.
    let traced = |event: &str| -> String {
        let at = format!(" {event}: (");
        let lines: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("dd-") && l.contains(&at)).collect();
        assert_eq!(lines.len(), 1, "one {event} line for the dd call:\n{text}");
        lines[0][lines[0].find(&at).map_or(0, |i| i + at.len() - 1)..].to_owned()
    };
    let cr3 = stopped.cr3();
    let kdump = stopped.kdump();

    // `--emitted`: the kernel's trace line of each event, over the ELF stop (CR3 from QEMU's
    // note), QEMU's kdump with the CR3 gdb saw, and the kdump alone (VMCOREINFO's
    // swapper_pg_dir: kernel memory only, which is all these lines read).
    for (core, cr3) in [(&stop, None), (&kdump, Some(cr3.as_str())), (&kdump, None)] {
        let mut args = vec!["dry-run", "--emitted", "--kernel"];
        let kernel_s = kernel.to_string_lossy().into_owned();
        let core_s = core.to_string_lossy().into_owned();
        args.extend([kernel_s.as_str(), "--core", core_s.as_str()]);
        if let Some(cr3) = cr3 {
            args.extend(["--cr3", cr3]);
        }
        let (ok, ours, err) = fevlint(&args, &[&script]);
        assert!(ok, "{}: {err}", core.display());
        assert_eq!(ours.lines().count(), wanted, "{ours}");
        for line in ours.lines() {
            let (event, rest) = line.split_once(": ").expect("event: (place) fields");
            let theirs = traced(event);
            assert_eq!(rest, theirs, "{} {event}\n  kernel:  {theirs}\n  fevlint: {rest}", core.display());
            eprintln!("{event}: {rest}");
        }
    }
    // The name read through two pointers is the file dd read.
    assert!(traced("vfs_read_2").contains("name=\"version\""), "{}", traced("vfs_read_2"));

    // The function-event dry run prints the same values as the kernel's fields.
    let (ok, ours, err) = fevlint(&["dry-run", "--kernel"], &[&kernel, Path::new("--core"), &stop, &script]);
    assert!(ok, "{err}");
    for (line, event) in
        ours.lines().zip(["vfs_read", "vfs_read_2", "vfs_read_3", "vfs_read_4", "vfs_read_5", "vfs_read_6"])
    {
        // The function-event printer's forms: hex without `0x`, arrays `{76:65}`, a NULL
        // symbol `  (null)`.
        let theirs: Vec<(String, String)> = kprobe_fields(&traced(event))
            .into_iter()
            .map(|(n, v)| {
                let v = if v.starts_with('{') { v.replace("0x", "").replace(',', ":") } else { v };
                (n, v.strip_prefix("0x").map_or_else(|| v.clone(), str::to_owned))
            })
            .collect();
        let ours: Vec<(String, String)> = event_fields(line)
            .into_iter()
            .map(|(n, v)| (n, if v == "  (null)" { "0".to_owned() } else { v }))
            .collect();
        assert_eq!(ours, theirs, "{event}\n  kernel:  {}\n  fevlint: {line}", traced(event));
    }

    // Another kernel's model (6.1 too, x86_64) is refused, naming the dumped kernel.
    let other = root().join("fixtures/kernels/6.1.0-56-amd64");
    let (ok, _, err) = fevlint(&["dry-run", "--kernel"], &[&other, Path::new("--core"), &stop, &script]);
    assert!(!ok && err.contains("dump of") && err.contains(RELEASE), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
