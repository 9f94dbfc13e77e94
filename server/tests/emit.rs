//! `fevlint emit`: the examples as `kprobe_events` lines, accepted by fevlint-mainline's
//! transcription of each kernel's probe parser and by the real Debian 6.12 kernel booted
//! under QEMU (`tests/oracle/run-oracle.sh`, one boot for every line).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn emit(kernel: &str, script: &str) -> Output {
    emit_flavor(kernel, script, "auto")
}

fn emit_flavor(kernel: &str, script: &str, flavor: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["emit", "--flavor", flavor, "--kernel"])
        .arg(root().join("fixtures/kernels").join(kernel))
        .arg(root().join("examples").join(script))
        .output()
        .expect("fevlint emit")
}

const CLEAN: [&str; 5] = ["vfs.fev", "net.fev", "sched.fev", "mm.fev", "block.fev"];

fn definitions(script: &str) -> usize {
    let text = std::fs::read_to_string(root().join("examples").join(script)).expect("example");
    text.lines().filter(|l| !l.split('#').next().unwrap_or("").trim().is_empty()).count()
}

#[test]
fn every_clean_example_emits_one_accepted_line_per_definition() {
    // `auto`: kprobes on 6.1 (no fprobe there), fprobes with BTF names on 6.12.
    for (kernel, flavor, prefix) in [
        ("6.1.0-56-amd64", "auto", "p:fevlint/"),
        ("6.12.117+deb12-amd64", "auto", "f:fevlint/"),
        ("6.12.117+deb12-amd64", "kprobe", "p:fevlint/"),
    ] {
        for script in CLEAN {
            let out = emit_flavor(kernel, script, flavor);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            // The examples are written for 6.12; on 6.1 the functions it lacks are not
            // emitted, with the kernel's own refusal (checked by the parser with the
            // kernel model behind it), and nothing else is left out.
            let refused = stderr.lines().filter(|l| l.contains(": cannot emit: ")).count();
            assert!(
                stderr
                    .lines()
                    .filter(|l| l.contains(": cannot emit: "))
                    .all(|l| kernel.starts_with("6.1.") && l.contains("Invalid probed address or symbol")),
                "{kernel} {script}: {stderr}"
            );
            assert_eq!(out.status.code(), Some(if refused > 0 { 1 } else { 0 }), "{kernel} {script}: {stderr}");
            assert_eq!(stdout.lines().count() + refused, definitions(script), "{kernel} {script}:\n{stdout}");
            assert!(stdout.lines().all(|l| l.starts_with(prefix)), "{stdout}");
        }
    }
    // Known translations: member chains, a string through two pointers, registers; and
    // the same definition with BTF names, `*pos` keeping its offset form.
    let out = emit_flavor("6.12.117+deb12-amd64", "vfs.fev", "kprobe");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l
            == "p:fevlint/vfs_read vfs_read file=%di:x64 ino=+64(+40(%di)):u64 name=+0(+40(+72(%di))):string \
                buf=%si:x64 count=%dx:u64 pos=+0(%cx):s64"),
        "{stdout}"
    );
    let out = emit("6.12.117+deb12-amd64", "vfs.fev");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l
            == "f:fevlint/vfs_read vfs_read file=file:x64 ino=file->f_inode->i_ino:u64 \
                name=file->f_path.dentry->d_name.name:string buf=buf:x64 count=count:u64 pos=+0($arg4):s64"),
        "{stdout}"
    );
    // 6.1 has no fprobe events: asking for them is an error, not a kprobe in disguise.
    let out = emit_flavor("6.1.0-56-amd64", "vfs.fev", "fprobe");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no fprobe events"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn what_a_kprobe_cannot_express_is_a_diagnostic_not_another_definition() {
    let out = emit("6.12.117+deb12-amd64", "spec.fev");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // `__vfs_read(symbol read+40[0]+16)` records an address plus 16: no kprobe equivalent.
    assert!(stderr.contains("spec.fev:30:12: cannot emit: records an address plus a constant"), "{stderr}");
    // A duplicate field name: the kernel's own message, from the transcribed parser.
    assert!(stderr.contains("This argument name is already used"), "{stderr}");
    // Nothing is emitted in place of a definition that cannot be: one line per definition
    // that could be, and none for the others.
    let failed = stderr.lines().filter(|l| l.contains(": cannot emit: ") || l.contains("not emitted")).count();
    assert!(failed >= 2, "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), definitions("spec.fev") - failed, "{stderr}");
}

#[test]
fn the_real_6_12_kernel_accepts_every_emitted_kprobe_line() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    real_kernel_accepts("kprobe");
}

#[test]
fn the_real_6_12_kernel_accepts_every_emitted_fprobe_line() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    real_kernel_accepts("fprobe");
}

fn real_kernel_accepts(flavor: &str) {
    for (tool, package) in [("qemu-system-x86_64", "qemu-system-x86"), ("busybox", "busybox-static"), ("cpio", "cpio")]
    {
        fevlint_testkit::require_tool(tool, package);
    }
    let mut lines = String::new();
    for script in CLEAN {
        let out = emit_flavor("6.12.117+deb12-amd64", script, flavor);
        assert!(out.status.success());
        lines.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("emit-{flavor}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    std::fs::write(dir.join("defs.txt"), &lines).expect("defs");
    let out = Command::new("bash")
        .arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["--tsv", "-m", "160M"])
        .arg(root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinuz"))
        .arg(dir.join("defs.txt"))
        .output()
        .expect("run-oracle.sh");
    let tsv = String::from_utf8_lossy(&out.stdout);
    let verdicts: Vec<&str> = tsv.lines().filter(|l| l.starts_with("DEF\t")).collect();
    assert_eq!(
        verdicts.len(),
        lines.lines().count(),
        "one verdict per line:\n{tsv}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rejected: Vec<&&str> =
        verdicts.iter().filter(|l| !l.contains("\tACCEPT\t") && !l.ends_with("\tACCEPT")).collect();
    assert!(
        rejected.is_empty(),
        "the kernel rejected emitted lines:\n{}",
        rejected.iter().map(|l| l.to_string()).collect::<Vec<_>>().join("\n")
    );
    // The events fired: the default workload (cat, ls, head) traces through vfs_read & co.
    assert!(
        tsv.lines().any(|l| l.starts_with("TRACE\t") && l.contains("vfs_read")),
        "no vfs_read event traced:\n{tsv}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

fn fevlint(args: &[&str], dir: &std::path::Path, stdin: Option<&str>) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fevlint");
    if let Some(text) = stdin {
        child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("fevlint")
}

/// `emit` takes paths as `check` does (files, folders, `-`) and `-k` or the kernel of the
/// nearest `fevlint.toml`; event names stay unique across the scripts. A `.dynevents`
/// file is refused saying what `emit` reads, not "the kernel rejects this line".
#[test]
fn emit_takes_paths_and_the_kernel_option_as_check_does() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("emit-paths-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("d/sub")).expect("dir");
    std::fs::write(dir.join("d/a.fev"), "vfs_read(x64 file)\n").expect("a");
    std::fs::write(dir.join("d/sub/b.fev"), "vfs_read(u64 count)\n").expect("b");
    let kernel = root().join("fixtures/kernels/6.12.117+deb12-amd64");
    let k = kernel.to_str().expect("utf-8 path");
    let out = fevlint(&["emit", "-k", k, "--flavor", "kprobe", "d"], &dir, None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{stdout}");
    assert_eq!(lines[0], "# d/a.fev");
    assert!(lines[1].starts_with("p:fevlint/vfs_read vfs_read "), "{stdout}");
    assert_eq!(lines[2], "# d/sub/b.fev");
    assert!(lines[3].starts_with("p:fevlint/vfs_read_2 vfs_read "), "{stdout}");
    // `-` reads the script from stdin; one script prints no `#` line.
    let out = fevlint(&["emit", "-k", k, "--flavor", "kprobe", "-"], &dir, Some("vfs_read(x64 file)\n"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), lines[1].to_owned() + "\n");
    // No -k: the kernel of the nearest fevlint.toml.
    std::fs::write(dir.join("fevlint.toml"), format!("kernels = [\"{k}\"]\n")).expect("toml");
    let out = fevlint(&["emit", "--flavor", "kprobe", "d/a.fev"], &dir, None);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        lines[1].to_owned() + "\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A .dynevents file: refused, saying what emit reads.
    std::fs::write(dir.join("x.dynevents"), "p:vfs/r vfs_read\n").expect("dynevents");
    for command in ["emit", "dry-run"] {
        let mut args = vec![command, "-k", k];
        if command == "dry-run" {
            args.extend(["--core", "x.dynevents"]);
        }
        args.push("x.dynevents");
        let out = fevlint(&args, &dir, None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains("reads function-event scripts (`*.fev`)") && !stderr.contains("rejects"),
            "{command}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
