//! Bad input never crashes or hangs the checker: random bytes, invalid UTF-8, huge
//! lines, endless redirects, NUL files. Each gets a diagnostic.

use fevlint_check::analysis::{check, Options};
use fevlint_syntax::{Parser, Target};

fn codes(bytes: Vec<u8>) -> Vec<&'static str> {
    let (_, diags) = check(&mut Parser::new(), bytes, &Options::new(Target::X86_64));
    diags.iter().map(|d| d.code).collect()
}

#[test]
fn random_bytes() {
    // A fixed xorshift stream: deterministic, no dependency.
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..200 {
        let len = (round * 37) % 3000;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect();
        let _ = codes(bytes);
    }
}

#[test]
fn invalid_utf8_is_reported() {
    let got = codes(b"f(int \xff\xfe a)\n".to_vec());
    assert_eq!(got[0], "S000");
    assert!(got.contains(&"S001"));
}

#[test]
fn a_one_megabyte_line() {
    let mut line = b"f(int a".to_vec();
    line.extend(std::iter::repeat_n(b'+', 1 << 20));
    line.extend_from_slice(b")\n");
    let got = codes(line);
    assert_eq!(got, ["S004"]);
}

#[test]
fn a_hundred_thousand_redirects() {
    let mut line = String::from("f(x64 a");
    for i in 0..100_000 {
        line.push_str(if i % 2 == 0 { "+8" } else { "[0]" });
    }
    line.push(')');
    let (_, diags) = check(&mut Parser::new(), line.clone().into_bytes(), &Options::new(Target::X86_64));
    assert_eq!(diags.iter().map(|d| d.code).collect::<Vec<_>>(), ["S004"]);
    // Under the kernel's limit, a long chain is fine.
    let short: String = format!("f(x64 a{})", "+8[0]".repeat(800));
    assert!(codes(short.into_bytes()).is_empty());
}

#[test]
fn a_file_of_nul_bytes() {
    let got = codes(vec![0u8; 100_000]);
    assert!(got.contains(&"S004") && got.contains(&"S005"), "{got:?}");
    let got = codes(b"f(int a)\0junk\n".to_vec());
    assert_eq!(got, ["S005"]);
}

#[test]
fn many_short_broken_lines() {
    let text: String = (0..20_000).map(|i| if i % 3 == 0 { "f(int a\n" } else { "(\n" }).collect();
    let got = codes(text.into_bytes());
    assert_eq!(got.len(), 20_000);
}

// ---------------------------------------------------------------------------------------
// The binary as a user runs it on hostile paths: each run is measured (wall time and peak
// RSS of the child, from wait4's rusage), its error must name the file, and nothing in
// the tree may change. Times are recorded, never asserted; memory bounds are generous.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One finished run of `fevlint`.
#[derive(Debug)]
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Peak resident set of the child, in KiB (`ru_maxrss`): an upper bound, see [`measure`].
    max_rss_kb: i64,
    /// The test process's own peak resident set (`VmHWM`) read after the child ended: at
    /// least what the forked child inherited, whatever the tests running beside it did.
    parent_peak_kb: i64,
    secs: f64,
}

impl Run {
    /// Whether the child's own peak stayed under `bound_kb`. `ru_maxrss` is the larger of
    /// the child's peak and the test process's resident set at the fork (which other tests
    /// in this binary grow); a figure not above the test process's own peak says nothing
    /// more of the child, so the child's peak is then under max(`bound_kb`, that peak).
    fn peak_within(&self, bound_kb: i64) -> bool {
        self.max_rss_kb < bound_kb || self.max_rss_kb <= self.parent_peak_kb
    }
}

/// The test process's peak resident set in KiB (`VmHWM` of /proc/self/status).
fn own_peak_kb() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/self/status")
}

/// A process that does not finish in this long is a hang, not a slow run.
const HANG: Duration = Duration::from_secs(60);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fevlint-hostile-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Runs `cmd` to its end (killing it after [`HANG`]) and measures it.
///
/// Linux keeps a process's peak RSS across `execve`, so the child's `ru_maxrss` includes
/// the memory of what it was before the exec. `posix_spawn` (std's default) shares the
/// test process's memory until the exec, and would report the test process's own peak;
/// a `pre_exec` hook makes std fork instead, so the figure is at most the test process's
/// resident memory at the fork (tens of MiB) or the child's own peak, whichever is more:
/// an upper bound of the child's.
fn measure(mut cmd: Command) -> Run {
    use std::os::unix::process::CommandExt;
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    #[allow(unsafe_code)]
    // SAFETY: the hook does nothing (it only makes std fork rather than posix_spawn).
    unsafe {
        cmd.pre_exec(|| Ok(()));
    }
    if cmd.get_program() == env!("CARGO_BIN_EXE_fevlint") {
        // No shared cache: each run decompresses what it reads, as on a first run.
        cmd.env("FEVLINT_NO_CACHE", "1");
    }
    let start = Instant::now();
    // Reaped by wait4 below (to get its rusage), not by `Child::wait`.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let t_out = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut s).ok();
        s
    });
    let t_err = std::thread::spawn(move || {
        let mut s = Vec::new();
        std::io::Read::read_to_end(&mut err, &mut s).ok();
        s
    });
    let killer = std::thread::spawn(move || {
        let deadline = Instant::now() + HANG;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            if std::path::Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            return;
        }
        // Still running: a hang. SIGKILL it, so wait4 below returns.
        #[allow(unsafe_code)]
        // SAFETY: kill(2) on a pid we spawned and have not reaped yet.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    });
    let mut status = 0;
    #[allow(unsafe_code)]
    // SAFETY: rusage is plain data, zero-initialised, written by wait4 for our child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    #[allow(unsafe_code)]
    // SAFETY: valid pointers to locals; `pid` is our unreaped child.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let secs = start.elapsed().as_secs_f64();
    let _ = killer.join();
    let code = if libc::WIFEXITED(status) { Some(libc::WEXITSTATUS(status)) } else { None };
    let run = Run {
        code,
        stdout: String::from_utf8_lossy(&t_out.join().expect("stdout thread")).into_owned(),
        stderr: String::from_utf8_lossy(&t_err.join().expect("stderr thread")).into_owned(),
        max_rss_kb: usage.ru_maxrss,
        parent_peak_kb: own_peak_kb(),
        secs,
    };
    assert!(secs < HANG.as_secs_f64(), "hung (killed after {HANG:?}): {cmd:?}");
    run
}

fn fevlint(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_fevlint"));
    c.args(args).stdin(Stdio::null());
    c
}

/// Every file under `dir` (not following symlinks) with its kind, mode and a hash of its
/// contents: two snapshots compare equal when nothing was written.
fn snapshot(dir: &Path) -> Vec<(PathBuf, String, u32, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            let meta = std::fs::symlink_metadata(&p).expect("lstat");
            let ft = meta.file_type();
            let (kind, bytes) = if ft.is_symlink() {
                ("link", std::fs::read_link(&p).expect("readlink").into_os_string().into_encoded_bytes())
            } else if ft.is_dir() {
                stack.push(p.clone());
                ("dir", Vec::new())
            } else if ft.is_file() && meta.len() > 64 << 20 {
                // Sparse test files: the size and times stand for the contents.
                ("big file", format!("{} {:?}", meta.len(), meta.modified().ok()).into_bytes())
            } else if ft.is_file() {
                ("file", std::fs::read(&p).expect("read"))
            } else {
                ("special", Vec::new())
            };
            let hash = {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                bytes.hash(&mut h);
                h.finish()
            };
            out.push((p, kind.to_owned(), meta.permissions().mode(), hash));
        }
    }
    out.sort();
    out
}

/// Makes a FIFO (named pipe) with no writer.
fn mkfifo(path: &Path) {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success());
}

const MB: i64 = 1024;

/// Issue 16: `check /dev/zero` read until killed (8.3 GB after 20 s). Now a device, a
/// FIFO or a file over the script limit is refused before it is read, and standard input
/// is read with the same bound.
#[test]
fn check_refuses_devices_fifos_and_huge_files_at_once() {
    let d = scratch("check-special");
    let fifo = d.join("pipe.fev");
    mkfifo(&fifo);
    let huge = d.join("huge.fev");
    // Sparse: 65 MiB on paper, nothing on disk.
    std::fs::File::create(&huge).expect("create").set_len((64 << 20) + 1).expect("truncate");
    let cases: [(&str, &Path, &str); 3] = [
        ("/dev/zero", Path::new("/dev/zero"), "character device"),
        ("fifo", &fifo, "FIFO"),
        ("huge", &huge, "larger than the limit of 67108864 bytes"),
    ];
    for (what, path, why) in cases {
        let r = measure(fevlint(&["check", path.to_str().expect("utf-8")]));
        eprintln!("check {what}: exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
        assert_eq!(r.code, Some(2), "{what}: {r:?}");
        assert!(r.stderr.contains(&path.display().to_string()) && r.stderr.contains(why), "{what}: {r:?}");
        assert!(r.peak_within(100 * MB), "{what}: {} KiB", r.max_rss_kb);
    }
    // Standard input from an endless source: streamed, stopped at the limit.
    let mut c = fevlint(&["check", "-"]);
    c.stdin(std::fs::File::open("/dev/zero").expect("open /dev/zero"));
    let r = measure(c);
    eprintln!("check - < /dev/zero: exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("standard input: more than the limit of 67108864 bytes"), "{r:?}");
    assert!(r.peak_within(100 * MB), "{} KiB", r.max_rss_kb);
    // A pipe that ends is still a script: `-` reads it.
    let mut c = fevlint(&["check", "-"]);
    c.stdin(std::fs::File::open(root().join("fixtures/scripts/clean-6.12.fev")).expect("open"));
    let r = measure(c);
    assert_eq!(r.code, Some(0), "{r:?}");
    std::fs::remove_dir_all(&d).ok();
}

/// The kernel fixture with a moved member between 6.1.0-56 and 6.12 (`f_count` of
/// `struct file`): `fix` rewrites `+56` to nothing.
const DRIFTING: &str = "vfs_fsync(s64 f_count+56[0])\n";
const DRIFT_FIXED: &str = "vfs_fsync(s64 f_count[0])\n";

fn kernel_dir(name: &str) -> String {
    root().join("fixtures/kernels").join(name).display().to_string()
}

/// Issue 16: `fix` on a symlink replaced the link with a regular file and left the file it
/// pointed to unfixed. Now the target is rewritten in its own folder, with its mode, and
/// the links (a chain of two, one relative, one absolute) stay links.
#[test]
fn fix_writes_through_symlinks_to_the_target() {
    let d = scratch("fix-symlink");
    std::fs::create_dir_all(d.join("real")).expect("mkdir");
    let target = d.join("real/probes.fev");
    std::fs::write(&target, DRIFTING).expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    std::os::unix::fs::symlink(&target, d.join("abs.fev")).expect("symlink");
    std::os::unix::fs::symlink("abs.fev", d.join("link.fev")).expect("symlink");
    let link = d.join("link.fev");
    let (old, new) = (kernel_dir("6.1.0-56-amd64"), kernel_dir("6.12.117+deb12-amd64"));
    let r = measure(fevlint(&["fix", "-k", &old, "-k", &new, link.to_str().expect("utf-8")]));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(r.stdout.contains("+vfs_fsync(s64 f_count[0])"), "{r:?}");
    assert_eq!(std::fs::read_to_string(&target).expect("read"), DRIFT_FIXED);
    for l in ["link.fev", "abs.fev"] {
        assert!(std::fs::symlink_metadata(d.join(l)).expect("lstat").file_type().is_symlink(), "{l}");
    }
    assert_eq!(std::fs::read_link(&link).expect("readlink"), Path::new("abs.fev"));
    assert_eq!(std::fs::metadata(&target).expect("stat").permissions().mode() & 0o7777, 0o640);
    let names: Vec<_> = snapshot(&d).into_iter().map(|s| s.0).collect();
    assert_eq!(names, [d.join("abs.fev"), d.join("link.fev"), d.join("real"), target.clone()]);
    // `lock -o` through a link writes the target too.
    let lock_target = d.join("real/fevlint.lock");
    std::os::unix::fs::symlink("real/fevlint.lock", d.join("fevlint.lock")).expect("symlink");
    let r = measure(fevlint(&[
        "lock",
        "-k",
        &new,
        "-o",
        d.join("fevlint.lock").to_str().expect("utf-8"),
        target.to_str().expect("utf-8"),
    ]));
    assert_eq!(r.code, Some(0), "{r:?}");
    assert!(std::fs::read_to_string(&lock_target).expect("lock written").contains("vfs_fsync"));
    assert!(std::fs::symlink_metadata(d.join("fevlint.lock")).expect("lstat").file_type().is_symlink());
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 16: a full disk. Simulated with RLIMIT_FSIZE (`ulimit -f`, SIGXFSZ ignored so
/// that the write fails with EFBIG instead of killing the process): the write of the
/// fixed script fails, `fix` says so and exits 2, the script is untouched and no
/// temporary file is left. (A real full tmpfs needs a mount, which CI containers may not
/// allow; EFBIG reaches the same error path as ENOSPC: a failed `write`.)
#[test]
fn fix_on_a_full_disk_leaves_the_script_and_no_temporary_file() {
    let d = scratch("fix-full");
    let script = d.join("big.fev");
    // Over 8 KiB, so the new contents cannot be written under `ulimit -f 8` (8 KiB in
    // bash's 1024-byte blocks, 4 KiB in POSIX 512-byte blocks).
    let padding: String = (0..300).map(|i| format!("# padding line {i:05} ........\n")).collect();
    std::fs::write(&script, format!("{padding}{DRIFTING}")).expect("write");
    let before = snapshot(&d);
    let (old, new) = (kernel_dir("6.1.0-56-amd64"), kernel_dir("6.12.117+deb12-amd64"));
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("ulimit -f 8; trap '' XFSZ; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_fevlint"))
        .args(["fix", "-k", &old, "-k", &new, script.to_str().expect("utf-8")])
        .env("FEVLINT_NO_CACHE", "1")
        .stdin(Stdio::null());
    let r = measure(c);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains(&format!("cannot write {}", script.display())), "{r:?}");
    assert!(r.stderr.contains("too large"), "the EFBIG of the write: {r:?}");
    assert_eq!(snapshot(&d), before, "the tree changed");
    std::fs::remove_dir_all(&d).ok();
}

/// The child of [`killed_writers_leave_no_temporary_file`]: rewrites a large file through
/// a symlink, forever, until killed. Does nothing unless the parent set the variable.
#[test]
fn atomic_writer_child() {
    let Some(dir) = std::env::var_os("FEVLINT_TEST_WRITER_DIR") else { return };
    let link = Path::new(&dir).join("link.fev");
    let a = vec![b'a'; 48 << 20];
    let b = vec![b'b'; 48 << 20];
    for i in 0.. {
        fevlint_check::write_atomic(&link, if i % 2 == 0 { &a } else { &b }).expect("write");
    }
}

/// Issue 16: killed mid-write, the writer leaves the file whole (old or new contents,
/// never a mix) and no temporary file: the contents go to an unnamed `O_TMPFILE` file
/// that vanishes with the process. Only between naming it and renaming it (two system
/// calls) can a kill leave a name, and the next write removes it: checked too.
#[test]
fn killed_writers_leave_no_temporary_file() {
    let d = scratch("killed");
    std::fs::create_dir_all(d.join("real")).expect("mkdir");
    let target = d.join("real/target.fev");
    std::fs::write(&target, b"original\n").expect("write");
    std::os::unix::fs::symlink("real/target.fev", d.join("link.fev")).expect("symlink");
    // Kill points spread over the writes (a 48 MiB write takes tens of milliseconds).
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut window_hits = 0;
    for round in 0..12 {
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", "atomic_writer_child", "--test-threads=1", "--nocapture"])
            .env("FEVLINT_TEST_WRITER_DIR", &d)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn writer");
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::thread::sleep(Duration::from_millis(100 + x % 900));
        child.kill().expect("SIGKILL");
        child.wait().expect("reap");
        let contents = std::fs::read(&target).expect("target readable");
        let whole = contents == b"original\n"
            || (contents.len() == 48 << 20
                && (contents.iter().all(|&c| c == b'a') || contents.iter().all(|&c| c == b'b')));
        assert!(whole, "round {round}: a torn file of {} bytes", contents.len());
        assert!(std::fs::symlink_metadata(d.join("link.fev")).expect("lstat").file_type().is_symlink());
        let leftovers: Vec<_> = snapshot(&d)
            .into_iter()
            .map(|s| s.0)
            .filter(|p| p != &target && p != &d.join("real") && p != &d.join("link.fev"))
            .collect();
        if !leftovers.is_empty() {
            // Killed between linkat and rename: the next write sweeps it.
            window_hits += 1;
            fevlint_check::write_atomic(&d.join("link.fev"), b"original\n").expect("write");
            let names: Vec<_> = snapshot(&d).into_iter().map(|s| s.0).collect();
            assert_eq!(names, [d.join("link.fev"), d.join("real"), target.clone()], "round {round}");
        }
    }
    eprintln!("12 kills, {window_hits} between naming and renaming");
    std::fs::remove_dir_all(&d).ok();
}

/// A zstd frame of `blocks` RLE blocks of 128 KiB of zeros each, after an optional raw
/// block of `head`: 4 bytes on disk per 128 KiB out, built in no time (what `zstd -19`
/// makes of zeros too). Window 128 KiB, no content size.
fn zstd_bomb(head: &[u8], blocks: usize) -> Vec<u8> {
    let mut v = vec![0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3];
    let block = |v: &mut Vec<u8>, last: bool, kind: u32, size: u32| {
        let h = u32::from(last) | (kind << 1) | (size << 3);
        v.extend_from_slice(&h.to_le_bytes()[..3]);
    };
    if !head.is_empty() {
        block(&mut v, false, 0, head.len() as u32);
        v.extend_from_slice(head);
    }
    for i in 0..blocks {
        block(&mut v, i + 1 == blocks, 1, 128 << 10);
        v.push(0);
    }
    v
}

/// Concatenated xz streams, `head` then zeros, `streams` x 8 MiB of zeros in all.
fn xz_bomb(head: &[u8], streams: usize) -> Vec<u8> {
    use std::io::Write;
    let xz = |bytes: &[u8]| {
        let mut w = lzma_rust2::XzWriter::new(Vec::new(), lzma_rust2::XzOptions::with_preset(0)).expect("xz");
        w.write_all(bytes).expect("xz");
        w.finish().expect("xz")
    };
    let zeros = vec![0u8; 8 << 20];
    let mut first = head.to_vec();
    first.extend_from_slice(&zeros[head.len()..]);
    let mut v = xz(&first);
    let rest = xz(&zeros);
    for _ in 1..streams {
        v.extend_from_slice(&rest);
    }
    v
}

/// The start of a valid BTF header (magic, version 1): a bomb that passes the first-bytes
/// check and must be stopped by the ratio bound.
const BTF_START: &[u8] = &[0x9F, 0xEB, 0x01, 0x00, 0x18, 0, 0, 0];

/// Issue 16: a 130 KB `.zst` took 2.1 GB and 3.5 s before the 2 GB limit stopped it, a
/// 2 GB `.xz` of zeros 14 s before "not BTF". Now the first decompressed bytes are judged
/// before the rest (zeros are not BTF, ELF, bzImage or tar: stop after 1 KiB), and a
/// stream that starts right is stopped by the ratio bound (64x its size, at least
/// 64 MiB): each under 200 MB. Also through a kernel folder, whose text files must
/// decompress to text.
#[test]
fn decompression_bombs_are_refused_early() {
    let d = scratch("bombs");
    let script = d.join("s.fev");
    std::fs::write(&script, "vfs_read(x64 file)\n").expect("write");
    // 2 GiB of zeros each.
    let bombs: [(&str, Vec<u8>, &str); 4] = [
        ("zeros.btf.zst", zstd_bomb(&[], 16384), "not BTF, ELF, bzImage or a tar archive"),
        ("btf.zst", zstd_bomb(BTF_START, 16384), "a decompression bomb"),
        ("zeros.btf.xz", xz_bomb(&[], 256), "not BTF, ELF, bzImage or a tar archive"),
        ("btf.xz", xz_bomb(BTF_START, 256), "a decompression bomb"),
    ];
    for (name, bytes, why) in &bombs {
        let p = d.join(name);
        std::fs::write(&p, bytes).expect("write");
        let before = snapshot(&d);
        let r = measure(fevlint(&["check", "-k", p.to_str().expect("utf-8"), script.to_str().expect("utf-8")]));
        eprintln!("{name} ({} bytes): exit {:?}, {:.3} s, {} KiB", bytes.len(), r.code, r.secs, r.max_rss_kb);
        assert_eq!(r.code, Some(2), "{name}: {r:?}");
        assert!(r.stderr.contains(&p.display().to_string()) && r.stderr.contains(why), "{name}: {r:?}");
        assert!(r.stderr.contains("byte 0"), "{name}: the stream's offset: {r:?}");
        assert!(r.peak_within(200 * MB), "{name}: {} KiB", r.max_rss_kb);
        assert_eq!(snapshot(&d), before, "{name}: the tree changed");
    }
    // A kernel folder whose System.map and config are bombs of zeros: not text.
    let k = d.join("kernel");
    std::fs::create_dir_all(&k).expect("mkdir");
    std::fs::write(k.join("System.map.zst"), &bombs[0].1).expect("write");
    std::fs::write(k.join("config.xz"), &bombs[2].1).expect("write");
    let r = measure(fevlint(&["kernel", "info", k.to_str().expect("utf-8")]));
    eprintln!("kernel folder of bombs: exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("not text (no NUL bytes)"), "{r:?}");
    assert!(r.peak_within(200 * MB), "{} KiB", r.max_rss_kb);
    std::fs::remove_dir_all(&d).ok();
}

// ---------------------------------------------------------------------------------------
// The hostile-input table: every command over every reader's bad inputs. Each row is one
// run of the binary; each must end (no hang: killed and failed after a minute), with the
// expected exit status, an error that names the file (and the byte offset for binary
// formats), under a memory bound, and without writing anything in the tree.
//
// "Unreadable" files: the tests run as root in CI, where chmod 000 stops nothing; a path
// through a regular file (`file.fev/x.fev`, ENOTDIR) and a symlink loop (ELOOP) stand in.
// `dry-run` and `emit` are being added by others: no rows for them yet (a slot to fill:
// the script rows below apply to them as to `check`).

/// What a row must end with.
#[derive(Clone, Copy, Debug)]
enum Want {
    /// Exit 2; stderr names the path and contains each string.
    Error(&'static [&'static str]),
    /// This exit status (diagnostics, not errors); stdout contains each string.
    Exit(i32, &'static [&'static str]),
}

/// The BTF of the 6.12 fixture, decompressed.
fn btf_612() -> Vec<u8> {
    let z = std::fs::read(root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinux.btf.zst")).expect("fixture");
    zstd::decode_all(&z[..]).expect("zstd")
}

/// A tiny BTF with cycles: a typedef naming itself, a struct containing itself, a
/// pointer and a typedef naming each other.
fn btf_cycles() -> Vec<u8> {
    let strings = b"\0loop\0s\0m\0p\0";
    let mut t: Vec<u32> = Vec::new();
    t.extend([1, 8 << 24, 1]); // 1: typedef loop -> 1
    t.extend([6, (4 << 24) | 1, 8, 8, 2, 0]); // 2: struct s { struct s m; }
    t.extend([0, 2 << 24, 4]); // 3: ptr -> 4
    t.extend([10, 8 << 24, 3]); // 4: typedef p -> 3
    let types: Vec<u8> = t.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut v = vec![0x9F, 0xEB, 1, 0];
    for w in [24u32, 0, types.len() as u32, types.len() as u32, strings.len() as u32] {
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.extend_from_slice(&types);
    v.extend_from_slice(strings);
    v
}

/// A ustar header for a member `name` claiming `size` bytes (octal), checksum filled.
fn tar_header(name: &str, size: u64) -> Vec<u8> {
    let mut h = vec![0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..108].copy_from_slice(b"0000644\0");
    h[124..136].copy_from_slice(format!("{size:011o}\0").as_bytes());
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| u32::from(b)).sum();
    h[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    h
}

#[test]
fn hostile_table() {
    let d = scratch("table");
    let k612 = kernel_dir("6.12.117+deb12-amd64");
    let k56 = kernel_dir("6.1.0-56-amd64");
    let p = |name: &str| d.join(name).display().to_string();
    let write = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).expect("write");
    let link = |name: &str, to: &str| std::os::unix::fs::symlink(to, d.join(name)).expect("symlink");

    // Good inputs, for the other arguments of each command.
    write("good.fev", DRIFTING.as_bytes());
    write("good.lock", b"");
    let r = measure(fevlint(&["lock", "-k", &k56, "-o", &p("good.lock"), &p("good.fev")]));
    assert_eq!(r.code, Some(0), "{r:?}");

    // Scripts.
    mkfifo(&d.join("fifo.fev"));
    link("loop.fev", "loop2.fev");
    link("loop2.fev", "loop.fev");
    std::fs::create_dir_all(d.join("walk")).expect("mkdir");
    link("walk/loop.fev", "loop.fev");
    write("bad-utf8.fev", b"vfs_read(x64 \xff\xfe file)\n");
    // A 100 MB line, sparse (NUL bytes, no newline): over the script limit.
    std::fs::File::create(d.join("line.fev")).expect("create").set_len(100 << 20).expect("truncate");
    let million: String = (0..1_000_000).map(|i| format!("f{i}(x64 file)\n")).collect();
    write("million.fev", million.as_bytes());
    drop(million);

    // Kernel inputs.
    let btf = btf_612();
    write("trunc.btf", &btf[..1000]);
    let mut inflated = btf.clone();
    inflated[12..16].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes()); // type_len
    write("count.btf", &inflated);
    let mut past = btf.clone();
    past[16..20].copy_from_slice(&(btf.len() as u32 * 2).to_le_bytes()); // str_off
    write("offset.btf", &past);
    drop((btf, inflated, past));
    write("cycles.btf", &btf_cycles());
    write("bomb.btf.zst", &zstd_bomb(&[], 16384));
    let z = std::fs::read(root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinux.btf.zst")).expect("fixture");
    write("trunc.btf.zst", &z[..z.len() / 2]);
    let vmlinuz = std::fs::read(root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinuz")).expect("fixture");
    write("trunc.vmlinuz", &vmlinuz[..200_000]);
    drop(vmlinuz);
    let mut tar = tar_header("vmlinux.btf", 0o777_7777_7777);
    tar.extend_from_slice(&[0u8; 1024]);
    write("huge-member.btf.tar", &tar);
    write("elf-header.vmlinux", b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x02\0\x3e\0\x01\0\0\0");
    std::fs::create_dir_all(d.join("emptykernel")).expect("mkdir");
    // Kernel folders whose text files are hostile (BTF good, copied from the fixture).
    for (dir, file, bytes) in [
        ("k-map-utf8", "System.map", &b"ffffffff81000000 T \xff\xfe\nffffffff81000010 T vfs_read\n"[..]),
        ("k-map-trunc", "System.map", &b"ffffffff8100"[..]),
        ("k-ftrace-bomb", "available_filter_functions.zst", &zstd_bomb(&[], 16384)[..]),
        ("k-config-nul", "config", &b"CONFIG_X86_64=y\n\0\0\0"[..]),
    ] {
        std::fs::create_dir_all(d.join(dir)).expect("mkdir");
        std::fs::copy(
            root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinux.btf.zst"),
            d.join(dir).join("vmlinux.btf.zst"),
        )
        .expect("copy");
        write(&format!("{dir}/{file}"), bytes);
    }

    // Lock files and configs.
    write("bad-utf8.lock", b"version = 1\n\xff\n");
    write("bad.lock", b"version = 1\n[kernel]\nname = 3\n");
    write("future.lock", b"version = 99\n[kernel]\nname = \"x\"\nid = \"y\"\narch = \"x86_64\"\n");
    write("bad.toml", b"kernels = [\"\xff\"]\n");
    write("typo.toml", b"kernel = [\"x\"]\n");
    mkfifo(&d.join("fifo.lock"));
    mkfifo(&d.join("fifo.toml"));

    let script_rows: Vec<(&str, String, Want)> = vec![
        ("device", "/dev/zero".into(), Want::Error(&["character device"])),
        ("fifo", p("fifo.fev"), Want::Error(&["FIFO"])),
        ("symlink loop", p("loop.fev"), Want::Error(&["Too many levels of symbolic links"])),
        ("loop found by a walk", p("walk"), Want::Error(&["Too many levels of symbolic links"])),
        ("unreadable (ENOTDIR)", p("good.fev/x.fev"), Want::Error(&["Not a directory"])),
        ("100 MB line", p("line.fev"), Want::Error(&["larger than the limit"])),
    ];
    let kernel_rows: Vec<(&str, String, Want)> = vec![
        ("device", "/dev/zero".into(), Want::Error(&["character device"])),
        ("fifo", p("fifo.fev"), Want::Error(&["FIFO"])),
        ("symlink loop", p("loop.fev"), Want::Error(&["Too many levels of symbolic links"])),
        ("unreadable (ENOTDIR)", p("good.fev/x.btf"), Want::Error(&["Not a directory"])),
        ("empty folder", p("emptykernel"), Want::Error(&["no BTF, vmlinux"])),
        ("truncated BTF", p("trunc.btf"), Want::Error(&["runs past the end", "offset 0xc"])),
        ("inflated BTF count", p("count.btf"), Want::Error(&["runs past the end", "offset 0xc"])),
        ("inflated BTF offset", p("offset.btf"), Want::Error(&["runs past the end", "offset 0x14"])),
        ("zstd bomb", p("bomb.btf.zst"), Want::Error(&["not BTF, ELF, bzImage or a tar archive", "byte 0"])),
        ("truncated zstd", p("trunc.btf.zst"), Want::Error(&["truncated", "byte "])),
        ("truncated bzImage", p("trunc.vmlinuz"), Want::Error(&["bzImage", "byte "])),
        ("tar member past the end", p("huge-member.btf.tar"), Want::Error(&["tar"])),
        ("truncated ELF", p("elf-header.vmlinux"), Want::Error(&["ELF"])),
        ("non-UTF-8 System.map", p("k-map-utf8"), Want::Error(&["System.map:1"])),
        ("truncated System.map", p("k-map-trunc"), Want::Error(&["System.map:1"])),
        ("ftrace list bomb", p("k-ftrace-bomb"), Want::Error(&["not text"])),
        ("config with NULs", p("k-config-nul"), Want::Error(&["config"])),
    ];
    let mut rows: Vec<(String, Vec<String>, String, Want)> = Vec::new();
    for (what, s, want) in &script_rows {
        rows.push((format!("check {what}"), vec!["check".into(), s.clone()], s.clone(), *want));
        rows.push((
            format!("lock {what}"),
            vec!["lock".into(), "-k".into(), k612.clone(), "-o".into(), p("out.lock"), s.clone()],
            s.clone(),
            *want,
        ));
        rows.push((
            format!("fix {what}"),
            vec!["fix".into(), "-k".into(), k56.clone(), "-k".into(), k612.clone(), s.clone()],
            s.clone(),
            *want,
        ));
        rows.push((
            format!("fix --lock {what}"),
            vec!["fix".into(), "--lock".into(), p("good.lock"), "-k".into(), k612.clone(), s.clone()],
            s.clone(),
            *want,
        ));
        // `emit` takes paths as `check` does: a folder is walked (and its loop found).
        rows.push((
            format!("emit {what}"),
            vec!["emit".into(), "--kernel".into(), k612.clone(), s.clone()],
            s.clone(),
            *want,
        ));
    }
    // Content that is a script, just a bad one: check reports it; lock and fix refuse it.
    rows.push((
        "check non-UTF-8".into(),
        vec!["check".into(), p("bad-utf8.fev")],
        String::new(),
        Want::Exit(1, &["S000"]),
    ));
    rows.push((
        "lock non-UTF-8".into(),
        vec!["lock".into(), "-k".into(), k612.clone(), "-o".into(), p("out.lock"), p("bad-utf8.fev")],
        p("bad-utf8.fev"),
        Want::Error(&["not UTF-8", "offset 13"]),
    ));
    rows.push((
        "fix non-UTF-8".into(),
        vec!["fix".into(), "-k".into(), k56.clone(), "-k".into(), k612.clone(), p("bad-utf8.fev")],
        p("bad-utf8.fev"),
        Want::Error(&["not UTF-8", "offset 13"]),
    ));
    rows.push((
        "check a million lines".into(),
        vec!["check".into(), p("million.fev")],
        String::new(),
        Want::Exit(0, &["1000000 definitions: 0 errors"]),
    ));
    for (what, k, want) in &kernel_rows {
        rows.push((
            format!("check -k {what}"),
            vec!["check".into(), "-k".into(), k.clone(), p("good.fev")],
            k.clone(),
            *want,
        ));
        rows.push((
            format!("lock -k {what}"),
            vec!["lock".into(), "-k".into(), k.clone(), "-o".into(), p("out.lock"), p("good.fev")],
            k.clone(),
            *want,
        ));
        rows.push((
            format!("fix -k {what}"),
            vec!["fix".into(), "-k".into(), k56.clone(), "-k".into(), k.clone(), p("good.fev")],
            k.clone(),
            *want,
        ));
        rows.push((format!("diff {what}"), vec!["diff".into(), k612.clone(), k.clone()], k.clone(), *want));
        rows.push((format!("kernel info {what}"), vec!["kernel".into(), "info".into(), k.clone()], k.clone(), *want));
        // `kernel type` reads the types alone: a broken ftrace list in the
        // folder does not stop it (every command that reads them reports them).
        let lazy = *what == "ftrace list bomb";
        rows.push((
            format!("kernel type {what}"),
            vec!["kernel".into(), "type".into(), k.clone(), "struct file".into()],
            k.clone(),
            if lazy { Want::Exit(0, &["struct file {"]) } else { *want },
        ));
    }
    // Core dumps for the dry run: refused before they are opened (a FIFO would block).
    mkfifo(&d.join("fifo.core"));
    for (what, c, want) in [
        ("device", "/dev/zero".to_owned(), Want::Error(&["character device"])),
        ("fifo", p("fifo.core"), Want::Error(&["FIFO"])),
        ("symlink loop", p("loop.fev"), Want::Error(&["Too many levels of symbolic links"])),
        ("not a core", p("trunc.vmlinuz"), Want::Error(&["not a core dump", "offset 0"])),
        ("ELF header only", p("elf-header.vmlinux"), Want::Error(&["elf-header.vmlinux"])),
    ] {
        rows.push((
            format!("dry-run --core {what}"),
            vec!["dry-run".into(), "--kernel".into(), k612.clone(), "--core".into(), c.clone(), p("good.fev")],
            c.clone(),
            want,
        ));
    }
    // Cycles: an answer or a clear error, never a hang or a stack overflow.
    let cyc = p("cycles.btf");
    for (args, want) in [
        (vec!["kernel", "type", &cyc, "loop"], Want::Error(&["too deep"])),
        (vec!["kernel", "type", &cyc, "p"], Want::Error(&["not a struct or union"])),
        (vec!["kernel", "at", &cyc, "struct s", "4"], Want::Error(&["too deep"])),
        (vec!["kernel", "type", &cyc, "struct s"], Want::Exit(0, &["struct s"])),
        (vec!["kernel", "fn", &cyc, "loop"], Want::Error(&["cycles.btf: no function `loop`"])),
    ] {
        rows.push((
            format!("{} cycles", args[..2].join(" ")),
            args.iter().map(|s| s.to_string()).collect(),
            "cycles.btf".to_owned(),
            want,
        ));
    }
    for (what, l, want) in [
        ("device", "/dev/zero".to_owned(), Want::Error(&["character device"])),
        ("fifo", p("fifo.lock"), Want::Error(&["FIFO"])),
        ("non-UTF-8", p("bad-utf8.lock"), Want::Error(&["not UTF-8", "offset 12"])),
        ("wrong type", p("bad.lock"), Want::Error(&["line 3"])),
        ("future version", p("future.lock"), Want::Error(&["lock version 99"])),
    ] {
        rows.push((
            format!("check --lock {what}"),
            vec!["check".into(), "--lock".into(), l.clone(), "-k".into(), k612.clone(), p("good.fev")],
            l.clone(),
            want,
        ));
        rows.push((
            format!("fix --lock {what}"),
            vec!["fix".into(), "--lock".into(), l.clone(), "-k".into(), k612.clone(), p("good.fev")],
            l.clone(),
            want,
        ));
    }
    for (what, c, want) in [
        ("device", "/dev/zero".to_owned(), Want::Error(&["character device"])),
        ("fifo", p("fifo.toml"), Want::Error(&["FIFO"])),
        ("non-UTF-8", p("bad.toml"), Want::Error(&["not UTF-8", "offset 12"])),
        ("unknown key", p("typo.toml"), Want::Error(&["1:1", "unknown field `kernel`"])),
    ] {
        rows.push((
            format!("check --config {what}"),
            vec!["check".into(), "--config".into(), c.clone(), p("good.fev")],
            c.clone(),
            want,
        ));
    }

    let before = snapshot(&d);
    let mut report = Vec::new();
    for (name, args, path, want) in &rows {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = measure(fevlint(&args));
        report.push(format!("{name:<44} exit {:>4?} {:>7.3} s {:>8} KiB", r.code, r.secs, r.max_rss_kb));
        match want {
            Want::Error(needles) => {
                assert_eq!(r.code, Some(2), "{name}: {r:?}");
                assert!(r.stderr.contains(path.as_str()), "{name}: the error must name {path}: {r:?}");
                for n in *needles {
                    assert!(r.stderr.contains(n), "{name}: `{n}` missing: {r:?}");
                }
                assert!(!r.stderr.contains("panicked"), "{name}: {r:?}");
            }
            Want::Exit(code, needles) => {
                assert_eq!(r.code, Some(*code), "{name}: {r:?}");
                for n in *needles {
                    assert!(r.stdout.contains(n), "{name}: `{n}` missing: {r:?}");
                }
            }
        }
        // A million lines costs about 550 bytes each (the parsed lines, kept for the
        // rules; 1.1 KB before their field lists were trimmed); everything else is
        // refused or read within a small bound.
        let bound = if name.contains("million") { 800 * MB } else { 300 * MB };
        assert!(r.peak_within(bound), "{name}: {} KiB", r.max_rss_kb);
        assert_eq!(snapshot(&d), before, "{name}: the tree changed");
    }
    eprintln!("{}", report.join("\n"));
    std::fs::remove_dir_all(&d).ok();
}

/// One LSP message in Content-Length framing.
fn lsp_frame(v: &serde_json::Value) -> Vec<u8> {
    let body = v.to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// The hostile table's `lsp` row: a `fevlint.toml` naming hostile kernels (a zstd bomb,
/// a device, a FIFO, a symlink loop) for an open document. The server must tell of each
/// (naming the file), keep answering, and shut down cleanly, without writing anything.
#[test]
fn lsp_with_hostile_kernels() {
    use std::io::{BufRead, BufReader, Read, Write};
    let d = scratch("lsp");
    std::fs::write(d.join("bomb.btf.zst"), zstd_bomb(&[], 16384)).expect("write");
    mkfifo(&d.join("fifo.btf"));
    std::os::unix::fs::symlink("loop.btf", d.join("loop.btf")).expect("symlink");
    std::fs::write(d.join("fevlint.toml"), "kernels = [\"bomb.btf.zst\", \"/dev/zero\", \"fifo.btf\", \"loop.btf\"]\n")
        .expect("write");
    let before = snapshot(&d);
    let mut cmd = fevlint(&["lsp"]);
    cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).env("FEVLINT_NO_CACHE", "1");
    let mut child = cmd.spawn().expect("spawn lsp");
    let mut stdin = child.stdin.take().expect("stdin");
    let (tx, rx) = std::sync::mpsc::channel::<serde_json::Value>();
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    std::thread::spawn(move || loop {
        let mut len = 0;
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                len = n.trim().parse().unwrap_or(0);
            } else if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; len];
        if out.read_exact(&mut body).is_err() {
            return;
        }
        let Ok(v) = serde_json::from_slice(&body) else { return };
        if tx.send(v).is_err() {
            return;
        }
    });
    let uri = format!("file://{}", d.join("a.fev").display());
    let send = |stdin: &mut std::process::ChildStdin, v: serde_json::Value| {
        stdin.write_all(&lsp_frame(&v)).expect("write to lsp");
        stdin.flush().expect("flush");
    };
    let wait_for = |pred: &dyn Fn(&serde_json::Value) -> bool, what: &str| -> Vec<serde_json::Value> {
        let mut seen = Vec::new();
        loop {
            let v = rx.recv_timeout(HANG).unwrap_or_else(|_| panic!("no {what} from the server: {seen:?}"));
            let done = pred(&v);
            seen.push(v);
            if done {
                return seen;
            }
        }
    };
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": null, "rootUri": format!("file://{}", d.display()), "capabilities": {}}}),
    );
    wait_for(&|v| v["id"] == 1, "initialize answer");
    send(&mut stdin, serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    send(
        &mut stdin,
        serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument":
            {"uri": uri, "languageId": "fev", "version": 1, "text": "vfs_read(x64 file)\n"}}}),
    );
    // Every hostile kernel is named in a message (they load one after another).
    let told = std::cell::RefCell::new(String::new());
    let wanted = [
        "bomb.btf.zst: not a kernel input",
        "/dev/zero: it is a character device",
        "fifo.btf: it is a FIFO",
        "loop.btf: Too many levels of symbolic links",
    ];
    let _ = wait_for(
        &|v| {
            if v["method"] == "window/logMessage" {
                told.borrow_mut().push_str(v["params"]["message"].as_str().unwrap_or_default());
            }
            wanted.iter().all(|w| told.borrow().contains(w))
        },
        "message for every hostile kernel",
    );
    send(&mut stdin, serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}));
    wait_for(&|v| v["id"] == 2, "shutdown answer");
    send(&mut stdin, serde_json::json!({"jsonrpc": "2.0", "method": "exit"}));
    drop(stdin);
    let status = child.wait().expect("lsp exit");
    assert!(status.success(), "{status:?}");
    assert_eq!(snapshot(&d), before, "the tree changed");
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 16: large compressed inputs are decompressed into the cache file, not memory,
/// and mapped from there; the result equals the in-memory decompression. A bomb on that
/// path stops at the same bounds and leaves no cache file (the unnamed temporary file
/// vanishes).
#[test]
fn large_payloads_are_decompressed_into_the_cache_file() {
    let d = scratch("stream");
    let cache = d.join("cache");
    // The 6.12 vmlinuz payload (the ELF, 57.6 MB), recompressed: over 4 MiB compressed.
    let vmlinuz = root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinuz");
    let image = std::fs::read(&vmlinuz).expect("fixture");
    let (_, elf) = fevlint_load::bzimage::extract_vmlinux(&image, &vmlinuz, &Default::default()).expect("payload");
    let z = zstd::encode_all(&elf[..], 1).expect("zstd");
    assert!(z.len() > 4 << 20, "{} bytes: below the streaming threshold", z.len());
    let input = d.join("vmlinux.zst");
    std::fs::write(&input, &z).expect("write");
    drop((image, z));
    let run = |cached: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fevlint"));
        c.args(["kernel", "info", input.to_str().expect("utf-8")]).stdin(Stdio::null());
        let r = if cached {
            // `measure` turns the cache off for the other tests; this one wants it.
            c.env("FEVLINT_CACHE_DIR", &cache).env_remove("FEVLINT_NO_CACHE");
            let mut sh = Command::new("sh");
            sh.arg("-c").arg("unset FEVLINT_NO_CACHE; exec \"$@\"").arg("sh").arg(c.get_program());
            sh.args(c.get_args()).env("FEVLINT_CACHE_DIR", &cache).stdin(Stdio::null());
            measure(sh)
        } else {
            measure(c)
        };
        eprintln!("kernel info vmlinux.zst (cache {cached}): exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
        assert_eq!(r.code, Some(0), "{r:?}");
        r.stdout
    };
    let in_memory = run(false);
    let streamed = run(true);
    assert_eq!(streamed, in_memory);
    let entries: Vec<(String, u64)> = std::fs::read_dir(&cache)
        .expect("cache dir")
        .map(|e| e.expect("entry"))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.metadata().expect("stat").len()))
        .collect();
    assert!(entries.iter().any(|(n, len)| n.ends_with(".bin") && *len == elf.len() as u64), "{entries:?}");
    // Opened again: from the cache, the same answer.
    assert_eq!(run(true), in_memory);
    drop(elf);
    // A bomb over the threshold (ELF magic, then 1M RLE blocks: 128 GiB of zeros in
    // 4 MiB): stopped by the ratio bound, no cache entry.
    let _ = std::fs::remove_dir_all(&cache);
    let bomb = d.join("bomb.zst");
    std::fs::write(&bomb, zstd_bomb(b"\x7fELF\x02\x01\x01\0", 1 << 20)).expect("write");
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("unset FEVLINT_NO_CACHE; exec \"$@\"")
        .arg("sh")
        .arg(env!("CARGO_BIN_EXE_fevlint"))
        .args(["kernel", "info", bomb.to_str().expect("utf-8")])
        .env("FEVLINT_CACHE_DIR", &cache)
        .stdin(Stdio::null());
    let r = measure(sh);
    eprintln!("streamed bomb: exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("bomb.zst") && r.stderr.contains("a decompression bomb"), "{r:?}");
    assert!(r.peak_within(200 * MB), "{} KiB", r.max_rss_kb);
    let left: Vec<_> = std::fs::read_dir(&cache).map(|r| r.flatten().map(|e| e.path()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 21: large inputs cost gigabytes before anything refused them: a 1 GB one-line
/// `config` (2.1 GB), a 300 MB `System.map` (708 MB), a 200 MB `fevlint.lock` (4.7 GB).
/// Each kind of file has a bound now, checked by its size before it is read, and the
/// error names the bound. The files are sparse (a size, no data): refusing them reads
/// nothing, so the real sizes cost nothing here.
#[test]
fn large_kernel_texts_and_locks_are_refused_by_their_bound() {
    let d = scratch("text-bounds");
    let btf = root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinux.btf.zst");
    let sparse = |p: &Path, len: u64| {
        std::fs::File::create(p).and_then(|f| f.set_len(len)).expect("sparse file");
    };
    std::fs::write(d.join("a.fev"), "vfs_read(x64 file)\n").expect("script");
    // A config of 1 GB; a System.map of 300 MB (no ftrace list: the symbols are read
    // at once to compute it).
    for (folder, file, len, bound) in [
        ("cfg", "config", 1 << 30, "more than the limit of 16777216 bytes for a kernel config"),
        ("map", "System.map", 300 << 20, "more than the limit of 134217728 bytes for a symbol map"),
    ] {
        let k = d.join(folder);
        std::fs::create_dir(&k).expect("mkdir");
        std::fs::copy(&btf, k.join("vmlinux.btf.zst")).expect("btf");
        sparse(&k.join(file), len);
        let r =
            measure(fevlint(&["check", "-k", k.to_str().expect("utf-8"), d.join("a.fev").to_str().expect("utf-8")]));
        eprintln!("{file} of {len} bytes: exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
        assert_eq!(r.code, Some(2), "{r:?}");
        assert!(r.stderr.contains(bound) && r.stderr.contains(file), "{r:?}");
        assert!(r.peak_within(200 * MB), "{file}: {} KiB", r.max_rss_kb);
    }
    // A lock of 200 MB.
    let lock = d.join("fevlint.lock");
    sparse(&lock, 200 << 20);
    let r =
        measure(fevlint(&["check", "--lock", lock.to_str().expect("utf-8"), d.join("a.fev").to_str().expect("utf-8")]));
    eprintln!("lock of 200 MB: exit {:?}, {:.3} s, {} KiB", r.code, r.secs, r.max_rss_kb);
    assert_eq!(r.code, Some(2), "{r:?}");
    assert!(r.stderr.contains("is larger than the limit of 33554432 bytes"), "{r:?}");
    assert!(r.peak_within(200 * MB), "{} KiB", r.max_rss_kb);
    // Under the bounds, real files still load (the fixture's config, System.map).
    let r = measure(fevlint(&[
        "check",
        "-k",
        &kernel_dir("6.12.117+deb12-amd64"),
        d.join("a.fev").to_str().expect("utf-8"),
    ]));
    assert_eq!(r.code, Some(0), "{r:?}");
    std::fs::remove_dir_all(&d).ok();
}

/// The bound of a kind of kernel text is also applied while a compressed file is
/// decompressed (its size on disk says little), through the injectable limit.
#[test]
fn a_compressed_config_stops_at_its_bound() {
    use fevlint_kernel::open::{open_with, OpenOptions};
    use fevlint_load::Limits;
    let d = scratch("text-bound-zst");
    std::fs::write(d.join("System.map"), "ffffffff81000000 T _stext\nffffffff81000100 T vfs_read\n").expect("map");
    // 2 MiB of config lines, zstd-compressed to a few KiB.
    let text = "CONFIG_X=y\n".repeat(200_000);
    std::fs::write(d.join("config.zst"), zstd::encode_all(text.as_bytes(), 3).expect("zstd")).expect("write");
    let opts = |max| OpenOptions { limits: Limits { max_output: max, ..Limits::default() }, ..OpenOptions::default() };
    let e = open_with(&d, &opts(1 << 20)).map(|_| ()).expect_err("over the bound");
    assert!(e.to_string().contains("config.zst"), "{e}");
    assert!(e.to_string().contains("1048576"), "{e}");
    assert!(open_with(&d, &opts(4 << 20)).is_ok());
    std::fs::remove_dir_all(&d).ok();
}

/// Issue 21: a 60 MB script line took 12.9 s and 2.3 GB: every byte was tokenized and
/// parsed, though the kernel refuses a line over 4094 bytes before reading a token of it,
/// and the report printed the line whole with as many carets. Now such a line is not
/// parsed, and the report shows at most 8 KiB of it.
#[test]
fn a_sixty_megabyte_line_is_refused_without_parsing_it() {
    let d = scratch("long-line");
    let script = d.join("long.fev");
    let mut line = b"f(x64 a".to_vec();
    line.extend("+8[0]".repeat(12_000_000).bytes());
    line.extend_from_slice(b")\n");
    std::fs::write(&script, &line).expect("write");
    drop(line);
    for format in ["human", "json"] {
        let r = measure(fevlint(&["check", "--format", format, script.to_str().expect("utf-8")]));
        eprintln!(
            "60 MB line, {format}: exit {:?}, {:.3} s, {} KiB, {} bytes out",
            r.code,
            r.secs,
            r.max_rss_kb,
            r.stdout.len()
        );
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stdout.contains("S004"), "{:.500}", r.stdout);
        assert!(r.stdout.len() < 64 << 10, "{} bytes of output", r.stdout.len());
        // The file itself (60 MB) and its text: a few times its size, not gigabytes.
        assert!(r.peak_within(400 * MB), "{format}: {} KiB", r.max_rss_kb);
    }
    std::fs::remove_dir_all(&d).ok();
}
