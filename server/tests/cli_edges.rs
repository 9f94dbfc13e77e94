//! The edges a user meets on the command line (issue 21): a file reached twice is read and
//! fixed once, a closed pipe ends the program quietly, no input is an error, a file
//! `fix` may not replace is refused before anything is written, and `fix` says what to
//! run next.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kernel_dir(name: &str) -> String {
    root().join("fixtures/kernels").join(name).display().to_string()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fevlint-edges-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn fevlint(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(args)
        .current_dir(dir)
        .env("FEVLINT_NO_CACHE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run fevlint")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The README's drift example: `struct file.f_inode` is at 32 on 6.1 and at 40 on 6.12,
/// where 16 is `f_op`. Fixed once it reads `+40`; fixed twice (the `+40` of the first
/// fix taken for 6.1's `f_op`) it reads `+16`, the wrong member.
const OLD: &str = "# Written for Debian 6.1.0-56\nvfs_write(u64 ino+32[0]+64[0])\n";
const FIXED: &str = "# Written for Debian 6.1.0-56\nvfs_write(u64 ino+40[0]+64[0])\n";

fn fix(dir: &Path, paths: &[&str]) -> Output {
    let (old, new) = (kernel_dir("6.1.0-56-amd64"), kernel_dir("6.12.117+deb12-amd64"));
    let mut args = vec!["fix", "-k", &old, "-k", &new];
    args.extend_from_slice(paths);
    fevlint(dir, &args)
}

/// Issue 21: a file reached twice (a symlink beside its target, the same path twice, a
/// file and a link to it, a folder and a file in it) was fixed twice, the second time
/// from its own output: `+32` became `+40` and then `+16`. Now every file is read once,
/// by the device and inode of what the path resolves to.
#[test]
fn a_file_reached_twice_is_fixed_once() {
    let cases: &[(&str, &[&str])] = &[
        ("symlink in the folder", &["d/"]),
        ("same path twice", &["d/p.fev", "d/p.fev"]),
        ("file and link", &["d/p.fev", "d/c.fev"]),
        ("link and file", &["d/c.fev", "d/p.fev"]),
        ("folder and file", &["d", "./d/p.fev"]),
    ];
    for (what, paths) in cases {
        let dir = scratch("twice");
        std::fs::create_dir(dir.join("d")).expect("mkdir");
        std::fs::write(dir.join("d/p.fev"), OLD).expect("write");
        std::os::unix::fs::symlink("p.fev", dir.join("d/c.fev")).expect("symlink");
        let out = fix(&dir, paths);
        assert_eq!(out.status.code(), Some(0), "{what}: {}", text(&out));
        assert_eq!(std::fs::read_to_string(dir.join("d/p.fev")).expect("read"), FIXED, "{what}: {}", text(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.matches("+++ b/").count(), 1, "{what}: one diff: {}", text(&out));
        // The real name, not the link's, when both are given.
        assert!(stdout.contains("+++ b/d/p.fev") || stdout.contains("+++ b/./d/p.fev"), "{what}: {}", text(&out));
        assert!(std::fs::symlink_metadata(dir.join("d/c.fev")).expect("lstat").file_type().is_symlink());
        std::fs::remove_dir_all(&dir).ok();
    }
    // `check` and `lock` read each file once too.
    let dir = scratch("twice-check");
    std::fs::create_dir(dir.join("d")).expect("mkdir");
    std::fs::write(dir.join("d/p.fev"), OLD).expect("write");
    std::os::unix::fs::symlink("p.fev", dir.join("d/c.fev")).expect("symlink");
    std::fs::hard_link(dir.join("d/p.fev"), dir.join("d/h.fev")).expect("link");
    let out = fevlint(&dir, &["check", "d", "d/p.fev"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("checked 1 file, 1 definition"), "{}", text(&out));
    let new = kernel_dir("6.12.117+deb12-amd64");
    let out = fevlint(&dir, &["lock", "-k", &new, "d"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("locked 1 definition "), "{}", text(&out));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: `fix` replaced a read-only file (the rename goes around the mode) and split
/// hard links (the other names kept the old text). Both are refused now, every file is
/// checked before any is written, so a refused run writes nothing; `--dry-run` still
/// shows the diff.
#[test]
fn fix_refuses_read_only_files_and_hard_links_and_writes_nothing() {
    let dir = scratch("refuse");
    std::fs::create_dir(dir.join("d")).expect("mkdir");
    std::fs::write(dir.join("d/a.fev"), OLD).expect("write");
    std::fs::write(dir.join("d/b.fev"), OLD).expect("write");
    std::fs::set_permissions(dir.join("d/b.fev"), std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let out = fix(&dir, &["d"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot write d/b.fev: it is read-only (mode 444)"), "{}", text(&out));
    assert!(stderr.contains("nothing written"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(dir.join("d/a.fev")).expect("read"), OLD, "a.fev was written");
    assert_eq!(std::fs::metadata(dir.join("d/b.fev")).expect("stat").permissions().mode() & 0o777, 0o444);
    let out = fix(&dir, &["--dry-run", "d"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).matches("+++ b/").count(), 2, "{}", text(&out));

    std::fs::remove_file(dir.join("d/b.fev")).expect("rm");
    std::fs::hard_link(dir.join("d/a.fev"), dir.join("elsewhere.fev")).expect("link");
    let out = fix(&dir, &["d"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write d/a.fev: it has 2 hard links"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(dir.join("d/a.fev")).expect("read"), OLD);
    std::fs::remove_file(dir.join("elsewhere.fev")).expect("rm");
    let out = fix(&dir, &["d"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(dir.join("d/a.fev")).expect("read"), FIXED);
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: after `check -k OLD -k NEW` and `fix`, the same `check` still fails (the old
/// kernel stays the baseline, and the fixed offsets are drift from it). `fix` says what
/// to run next, and what it says is right: the new kernel alone is clean.
#[test]
fn fix_says_what_to_run_next() {
    let dir = scratch("next");
    std::fs::write(dir.join("old.fev"), OLD).expect("write");
    let out = fix(&dir, &["old.fev"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let new = kernel_dir("6.12.117+deb12-amd64");
    let suggested = format!("fevlint check -k {new} old.fev");
    assert!(stderr.contains(&suggested), "{}", text(&out));
    assert!(stderr.contains("do not run this `fix` again"), "{}", text(&out));
    let out = fevlint(&dir, &["check", "-k", &new, "old.fev"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: `check` on a folder without scripts, an empty folder, or bare `check` in
/// one printed "checked 0 files" and passed: a mistyped CI path was a green build. No
/// input is an error now (exit 2), for every command that reads scripts, unless
/// `--allow-empty`.
#[test]
fn no_input_is_an_error_unless_allowed() {
    let dir = scratch("empty");
    std::fs::create_dir(dir.join("empty")).expect("mkdir");
    std::fs::write(dir.join("notes.txt"), "not a script\n").expect("write");
    let new = kernel_dir("6.12.117+deb12-amd64");
    for args in [
        &["check"][..],
        &["check", "empty"],
        &["check", "."],
        &["lock", "-k", &new, "-o", "x.lock", "empty"],
        &["fix", "-k", &new, "-k", &new, "empty"],
        &["matrix", "-k", &new, "empty"],
    ] {
        let out = fevlint(&dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no `*.fev` or `*.dynevents` file"),
            "{args:?}: {}",
            text(&out)
        );
    }
    assert!(!dir.join("x.lock").exists(), "an empty lock was written");
    let out = fevlint(&dir, &["check", "--allow-empty", "empty"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("checked 0 files"), "{}", text(&out));
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: `fevlint check ... | head -1` panicked with "failed printing to stdout:
/// Broken pipe" (exit 101). A closed pipe ends the program quietly now, as it ends
/// `grep`: killed by SIGPIPE, nothing on stderr. Every command that prints: the report
/// in each format, rule listings, completions.
#[test]
fn a_closed_pipe_ends_the_program_quietly() {
    use std::io::Read as _;
    use std::os::unix::process::ExitStatusExt as _;
    let dir = scratch("pipe");
    // Far more than a pipe holds (64 KiB): the writer meets the closed pipe.
    std::fs::write(dir.join("many.fev"), "ip_rcv(x64 skb, x86 dev)\n".repeat(5000)).expect("write");
    for args in [
        &["check", "many.fev"][..],
        &["check", "--format", "json", "many.fev"],
        &["check", "--format", "sarif", "many.fev"],
        &["check", "--format", "github", "many.fev"],
        &["completions", "bash"],
        &["man"],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let mut first = [0u8; 16];
        child.stdout.as_mut().expect("stdout").read_exact(&mut first).expect("some output");
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked") && !stderr.contains("Broken pipe"), "{args:?}: {stderr}");
        assert!(
            out.status.signal() == Some(libc::SIGPIPE) || out.status.code() == Some(0),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: any ELF was accepted as a kernel (`check -k /bin/ls` printed a page of K201,
/// one per definition). A file or folder that is not a kernel gets one error saying what
/// was found; real kernels (fixture folders, a BTF blob, a vmlinuz) still load.
#[test]
fn a_file_that_is_not_a_kernel_gets_one_clear_error() {
    let dir = scratch("not-kernel");
    std::fs::write(dir.join("a.fev"), "vfs_read(x64 file)\nvfs_write(x64 file)\n").expect("write");
    std::fs::write(dir.join("notes.txt"), "# my kernel notes\n").expect("write");
    std::fs::write(dir.join("empty"), "").expect("write");
    std::fs::create_dir(dir.join("folder")).expect("mkdir");
    std::fs::write(dir.join("folder/readme"), "nothing here\n").expect("write");
    for (kernel, want) in [
        ("/bin/ls", "an ELF shared object or position-independent executable for x86-64 without BTF, .debug_info or a kernel's symbols"),
        ("notes.txt", "not BTF, ELF, bzImage or a tar archive: a text file starting with `# my kernel notes`"),
        ("empty", "an empty file"),
        ("folder", "the folder has no BTF, vmlinux, vmlinuz, System.map or kallsyms"),
    ] {
        let out = fevlint(&dir, &["check", "-k", kernel, "a.fev"]);
        assert_eq!(out.status.code(), Some(2), "{kernel}: {}", text(&out));
        assert!(out.stdout.is_empty(), "{kernel}: {}", text(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{kernel}: one error: {stderr}");
        assert!(stderr.contains(want), "{kernel}: {stderr}");
    }
    let k = root().join("fixtures/kernels/6.12.117+deb12-amd64");
    for kernel in [k.clone(), k.join("vmlinuz"), k.join("vmlinux.btf.zst")] {
        let out = fevlint(&dir, &["check", "-k", kernel.to_str().expect("utf-8"), "a.fev"]);
        assert_eq!(out.status.code(), Some(0), "{}: {}", kernel.display(), text(&out));
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Issue 21: the README's summary line of the main job said "checked 6 files, 90
/// definitions" while the command printed 7 files and 95. The README's main-job command
/// (its first code block) is run as written, and its last line must be the README's.
#[test]
fn the_readme_main_job_summary_is_what_the_command_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let command = readme
        .lines()
        .find(|l| l.starts_with("cargo run --release -p fevlint -- check"))
        .expect("the main job in the README's first lines");
    let args: Vec<&str> = command
        .split(" -- ")
        .nth(1)
        .expect("arguments")
        .split('#')
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    let shown = format!("$ fevlint {}", args.join(" "));
    let block = readme.split(&shown).nth(1).unwrap_or_else(|| panic!("no `{shown}` console block in the README"));
    let summary = block.lines().find(|l| l.starts_with("checked ")).expect("a summary line after the command");
    let out = fevlint(&root(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.lines().last(), Some(summary), "{}", text(&out));
}
