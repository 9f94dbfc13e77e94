//! The dry run against the only judge that counts: a real kernel recording the same call.
//!
//! Debian's 6.12 kernel from the fixtures boots under QEMU (`tests/oracle/run-oracle.sh`,
//! TCG). A kprobe written by hand records member reads, a string and a symbol of one
//! `vfs_read` call (`dd bs=777` makes it the only call with `count == 777`); QEMU's gdb
//! stub stops the guest at that call's entry and `dump-guest-memory` writes the dump
//! there, as ELF and as QEMU's kdump-compressed file, and Debian's makedumpfile converts
//! the ELF dump (`-c`, `-l`, `-F -c`). `fevlint dry-run` of the
//! equivalent function-event definition over each dump, with the registers at the stop,
//! must print the values of the kernel's trace line, field for field; so must the
//! language server's inlay hints with the dump as its `core`; and twelve more definitions,
//! written to the kernel as `fevlint emit` translates them, must each get the trace line
//! `fevlint dry-run --emitted` prints. The dump refuses a kernel
//! model that is not its kernel.

mod lsp_common;

use fevlint_testkit::oracle::{event_fields, kprobe_fields, GdbStop};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const RELEASE: &str = "6.12.117+deb12-amd64";

fn root() -> PathBuf {
    fevlint_testkit::repo()
}

/// Debian's makedumpfile over the relaid stop dump; `-d 0` keeps user pages (the string
/// argument lives there).
fn makedumpfile(src: &Path, args: &[&str], dst: &Path) {
    let mut cmd = Command::new("makedumpfile");
    cmd.args(args).arg(src);
    let out = if args.contains(&"-F") {
        cmd.stdout(Stdio::from(std::fs::File::create(dst).expect("create"))).output()
    } else {
        let _ = std::fs::remove_file(dst);
        cmd.arg(dst).output()
    }
    .expect("makedumpfile");
    assert!(out.status.success(), "makedumpfile {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// A kprobe value as the function-event printer prints it: hex without `0x`.
fn normalise(v: &str) -> String {
    v.strip_prefix("0x").map_or_else(|| v.to_owned(), str::to_owned)
}

#[test]
fn the_dry_run_equals_the_kernels_trace_for_the_same_call() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    for (tool, package) in [
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("busybox", "busybox-static"),
        ("cpio", "cpio"),
        ("socat", "socat"),
        ("gdb", "gdb"),
        ("makedumpfile", "makedumpfile"),
    ] {
        fevlint_testkit::require_tool(tool, package);
    }
    let syms = fevlint_testkit::system_map(RELEASE);
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dry-run-kernel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    // f_mode (+12), f_flags (+48), f_op->llseek (+16, then +16), the dentry's name
    // (f_path.dentry +72, d_name.name +40), count, *pos: offsets from the fixture's BTF.
    let kprobe = "p:kr vfs_read mode=+12($arg1):x32 flags=+48($arg1):x32 llseek=+16(+16($arg1)):symbol \
                  name=+0(+40(+72($arg1))):string count=$arg3:u64 pos=+0($arg4):s64";
    let definition =
        "vfs_read(x32 mode+12[0] | x32 flags+48[0] | symbol llseek+16[0]+16[0] | string name+72[0]+40[0], \
                      NULL, u64 count, s64 pos[0])\n";
    // Twelve more definitions, as `fevlint emit` writes them for this kernel, recorded
    // at the same call: `fevlint dry-run --emitted` must print their trace lines.
    let emitted_script = root().join("server/tests/dry_run/vfs_read_emitted.fev");
    let emitted = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["emit", "--flavor", "kprobe", "--kernel"])
        .arg(root().join("fixtures/kernels").join(RELEASE))
        .arg(&emitted_script)
        .output()
        .expect("fevlint emit");
    let emitted_lines = String::from_utf8_lossy(&emitted.stdout).into_owned();
    assert_eq!(emitted_lines.lines().count(), 12, "{}", String::from_utf8_lossy(&emitted.stderr));
    std::fs::write(dir.join("defs.txt"), format!("{kprobe}\n{emitted_lines}")).expect("defs");
    let stopped = GdbStop {
        qemu: None,
        busybox: None,
        fwcfg: &root().join("tests/oracle/qemu_fw_cfg-6.12.117+deb12-amd64.ko.xz"),
        image: &root().join("fixtures/kernels").join(RELEASE).join("vmlinuz"),
        definitions: &dir.join("defs.txt"),
        trigger: "dd if=/proc/version of=/dev/null bs=777 count=1",
        at: syms["vfs_read"],
        condition: "$rdx == 777",
        dir: &dir,
    }
    .run();
    let stop = stopped.core.clone();
    let text = &stopped.stdout;
    let line = text
        .lines()
        .find(|l| l.contains(" kr: (vfs_read+") && l.contains("count=777"))
        .unwrap_or_else(|| panic!("no trace line for the dd call:\n{text}\n{}", stopped.stderr));
    let kernel = kprobe_fields(line);
    assert_eq!(kernel.len(), 6, "{line}");

    let cr3 = stopped.cr3();
    std::fs::write(dir.join("t.fev"), definition).expect("script");
    let kdump = stopped.kdump();
    let plain = dir.join("plain.core");
    fevlint_testkit::relayout(&stop, &plain);
    let (md_c, md_l, md_f) = (dir.join("md-c.kdump"), dir.join("md-l.kdump"), dir.join("md-f.flat"));
    makedumpfile(&plain, &["-c", "-d", "0"], &md_c);
    makedumpfile(&plain, &["-l", "-d", "0"], &md_l);
    makedumpfile(&plain, &["-F", "-c", "-d", "0"], &md_f);
    let _ = std::fs::remove_file(&plain);
    // The ELF dump carries QEMU's CPU state (CR3); kdump files do not, so their runs are
    // given the CR3 gdb saw.
    let with_cr3 = Some(cr3.as_str());
    for (core, extra) in [(&stop, None), (&kdump, with_cr3), (&md_c, with_cr3), (&md_l, with_cr3), (&md_f, with_cr3)] {
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

    // The emitted lines: the kernel's trace of each, for the dd call, equals the dry run's.
    let run = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["dry-run", "--emitted", "--kernel"])
        .arg(root().join("fixtures/kernels").join(RELEASE))
        .arg("--core")
        .arg(&stop)
        .arg(&emitted_script)
        .output()
        .expect("fevlint dry-run --emitted");
    let ours = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    assert_eq!(ours.lines().count(), 12, "{ours}");
    for line in ours.lines() {
        let (event, rest) = line.split_once(": ").expect("event: (place) fields");
        let theirs = text
            .lines()
            .find(|l| l.contains(&format!(" {event}: (")) && l.contains("count=777"))
            .unwrap_or_else(|| panic!("no {event} line for the dd call:\n{text}"));
        let theirs = &theirs[theirs.find(&format!(" {event}: (")).map_or(0, |i| i + event.len() + 3)..];
        assert_eq!(rest, theirs, "{event}\n  kernel:  {theirs}\n  fevlint: {rest}");
        eprintln!("{event}: {rest}");
    }

    // Another kernel's model is refused: the symbols VMCOREINFO records are elsewhere.
    let other = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .arg("dry-run")
        .arg("--kernel")
        .arg(root().join("fixtures/kernels/6.1.0-56-amd64"))
        .arg("--core")
        .arg(&stop)
        .arg(dir.join("t.fev"))
        .output()
        .expect("fevlint dry-run");
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(!other.status.success() && err.contains("is not a dump of") && err.contains(RELEASE), "{err}");

    // The language server with the dump as its core: the same values, after each field.
    let theirs: Vec<String> = kernel.iter().map(|(_, v)| format!("= {}", normalise(v))).collect();
    let labels = tokio::runtime::Runtime::new().expect("runtime").block_on(value_hints(&dir.join("t.fev"), &stop));
    assert_eq!(labels, theirs, "inlay hints over {}", stop.display());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `= value` inlay hints of `script` with the 6.12 fixture and `core` configured.
async fn value_hints(script: &Path, core: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(script).expect("script");
    let uri = format!("file://{}", script.display());
    let mut client = lsp_common::Client::start();
    let kernel = root().join("fixtures/kernels").join(RELEASE);
    let options = json!({"fevlint": {"kernels": [kernel.display().to_string()], "core": core.display().to_string()}});
    client.initialize(json!({}), options).await;
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": text}}),
        )
        .await;
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}});
    let mut labels = Vec::new();
    for _ in 0..200 {
        let hints =
            client.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": range})).await;
        labels = hints
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| h["label"].as_str().filter(|l| l.starts_with("= ")).map(str::to_owned))
            .collect();
        if !labels.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    client.finish().await;
    labels
}
