//! The mainline dialect (`*.dynevents`) in `fevlint check` and `fevlint fix`, judged by
//! real kernels.
//!
//! - The kernel's parser with the kernel model behind it (`fevlint_check::dynevents::
//!   KernelEnv` over the fixture kernels, not the test reader fevlint-mainline's own tests
//!   use) gives every verdict, message, caret and errno the real 6.1.170, 6.1.192 and
//!   6.12.117 kernels gave for the 360-line corpus.
//! - A script written for 6.1 (offsets from 6.1's BTF) checked against 6.1 and 6.12
//!   reports each moved member with its new offset; `fevlint fix` rewrites them.
//! - Under QEMU: Debian's 6.1 kernel (the `.deb` fetched through apt and cached)
//!   accepts the 6.1 script and every line `fevlint emit` writes for the examples, and
//!   records `name="version"` for a `dd` of /proc/version; Debian's 6.12 accepts the
//!   fixed script, which records what an fprobe naming the same members through BTF
//!   records for the same call, and every line of `examples/vfs.dynevents`, whose events
//!   fire.

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

const ORACLE: &str = "server/crates/mainline/tests/oracle";

/// The corpus against one kernel's recorded verdicts, through the kernel model.
fn agrees(kernel: &str, tsv: &str) {
    agrees_on(kernel, "mainline-corpus.txt", tsv);
}

/// A corpus against one kernel's recorded verdicts, through the kernel model.
fn agrees_on(kernel: &str, corpus: &str, tsv: &str) {
    let k = Kernel::open(&fixture(kernel)).expect("fixture kernel");
    let dialect = dynevents::dialect_for(&k).expect("dialect");
    let env = KernelEnv::new(&k, &dialect);
    let corpus = std::fs::read_to_string(root().join(ORACLE).join(corpus)).expect("corpus");
    let lines: Vec<&str> = corpus.lines().collect();
    let verdicts = std::fs::read_to_string(root().join(ORACLE).join(tsv)).expect("verdicts");
    let mut session = Session::new(&dialect, &env);
    let (mut rows, mut bad, mut decided) = (0, Vec::new(), 0);
    for row in verdicts.lines().filter(|l| l.starts_with("DEF\t")) {
        let f: Vec<&str> = row.split('\t').collect();
        let (n, accept) = (f[1].parse::<usize>().expect("line number"), f[2] == "ACCEPT");
        let (message, caret, errno) = (f[f.len() - 3], f[f.len() - 2].parse::<usize>().ok(), f[f.len() - 1]);
        rows += 1;
        let got = session.write(lines[n - 1]);
        let ok = match (&got, accept) {
            (Ok(Line::Probe(_) | Line::Remove(_)), true) => true,
            (Err(Rejection::Silent { errno: e, .. }), false) => message == "(no error_log entry)" && e.name() == errno,
            (Err(Rejection::Logged(e)), false) => {
                let first = e.earlier.first().copied().unwrap_or(e.id);
                let sane = caret.is_some_and(|c| c <= e.command.len() + 1);
                if message.ends_with("Failed to register probe event") {
                    decided += 1; // the blacklist, answered by the kernel model
                }
                format!("{}: error: {}", e.subsystem, dialect.message(first)) == message
                    && (!sane || caret == Some(e.caret))
                    && e.errno.name() == errno
            }
            // What only code bytes decide (an instruction boundary) stays an assumption.
            (Ok(Line::Probe(p)), false) => {
                (message.ends_with("Failed to register probe event")
                    || message.ends_with("Probe point is not an instruction boundary"))
                    && p.assumptions.iter().any(|a| matches!(a, Assumption::Registers { .. }))
            }
            _ => false,
        };
        // An event the kernel refused but the model kept would make its removal differ.
        if let (Ok(Line::Probe(p)), false) = (&got, accept) {
            let _ = session.write(&format!("-:{}/{}", p.group, p.event));
        }
        if !ok {
            bad.push(format!("line {n} `{}`: kernel {message} {caret:?} {errno}; fevlint {got:?}", lines[n - 1]));
        }
    }
    assert!(rows >= lines.len().min(100), "{rows} rows");
    eprintln!("{kernel}: {rows} lines, {} disagreements, {decided} registration failures decided", bad.len());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_kernel_model_answers_as_debian_6_1_170_did() {
    agrees("6.1.0-47-amd64", "mainline-verdicts-6.1.170.tsv");
}

#[test]
fn the_kernel_model_answers_as_debian_6_1_192_did() {
    agrees("6.1.0-56-amd64", "mainline-verdicts-6.1.192.tsv");
}

#[test]
fn the_kernel_model_answers_as_debian_6_12_117_did() {
    agrees("6.12.117+deb12-amd64", "mainline-verdicts-6.12.117.tsv");
}

/// Every argument of the corpus under every probe flavour, and probe places (offsets,
/// non-unique and unknown symbols, a module symbol, an address) under each
/// (`oracle/generate-corpus.py`), with the kernel model and the fixture's image behind it.
/// perf-tools' kprobe lines (its `kprobe` tool's examples, execsnoop, killsnoop,
/// opensnoop's getname probe, tcpretrans), as written and on the current syscall wrappers,
/// recorded from the real kernels under QEMU (`perf-tools-corpus.txt`'s header).
#[test]
fn the_kernel_model_answers_perf_tools_lines_as_debian_6_12_117_did() {
    agrees_on("6.12.117+deb12-amd64", "perf-tools-corpus.txt", "perf-tools-verdicts-6.12.117.tsv");
}

#[test]
fn the_kernel_model_answers_perf_tools_lines_as_debian_6_1_192_did() {
    agrees_on("6.1.0-56-amd64", "perf-tools-corpus.txt", "perf-tools-verdicts-6.1.192.tsv");
}

/// auditbeat's socket probes (x-pack/auditbeat/module/system/socket/kprobes.go and its
/// guesses) with their templates filled in for x86_64 (syscall wrappers' `pt_regs`,
/// `struct sock` offsets), recorded from the real kernels (`auditbeat-corpus.txt`).
#[test]
fn the_kernel_model_answers_auditbeat_lines_as_debian_6_12_117_did() {
    agrees_on("6.12.117+deb12-amd64", "auditbeat-corpus.txt", "auditbeat-verdicts-6.12.117.tsv");
}

#[test]
fn the_kernel_model_answers_auditbeat_lines_as_debian_6_1_192_did() {
    agrees_on("6.1.0-56-amd64", "auditbeat-corpus.txt", "auditbeat-verdicts-6.1.192.tsv");
}

#[test]
fn the_kernel_model_answers_the_generated_corpus_as_debian_6_12_117_did() {
    agrees_on("6.12.117+deb12-amd64", "generated-corpus.txt", "generated-verdicts-6.12.117.tsv");
}

#[test]
fn the_kernel_model_answers_the_generated_corpus_as_debian_6_1_192_did() {
    agrees_on("6.1.0-56-amd64", "generated-corpus.txt", "generated-verdicts-6.1.192.tsv");
}

#[test]
fn the_kernel_model_answers_the_generated_corpus_as_debian_6_1_170_did() {
    agrees_on("6.1.0-47-amd64", "generated-corpus.txt", "generated-verdicts-6.1.170.tsv");
}

/// Written for Debian 6.1 from its BTF: `f_flags` +64, `f_mode` +68, `f_op` +40 then
/// `llseek` +8, `f_path.dentry` +24 then `d_name.name` +40.
const WRITTEN_FOR_6_1: &str = "p:drift/read61 vfs_read flags=+64($arg1):x32 mode=+68($arg1):x32 \
                               llseek=+8(+40($arg1)):symbol name=+0(+40(+24($arg1))):string count=$arg3:u64\n";
/// The same members on 6.12.
const FIXED_FOR_6_12: &str = "p:drift/read61 vfs_read flags=+48($arg1):x32 mode=+12($arg1):x32 \
                              llseek=+16(+16($arg1)):symbol name=+0(+40(+72($arg1))):string count=$arg3:u64\n";

fn fevlint(args: &[&str], dir: &Path) -> (String, String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).current_dir(dir).output().expect("fevlint");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn temp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dynevents-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

#[test]
fn a_6_1_script_drifts_on_6_12_and_fix_restores_its_members() {
    let dir = temp("drift");
    std::fs::write(dir.join("vfs.dynevents"), WRITTEN_FOR_6_1).expect("script");
    let (k61, k612) = (fixture("6.1.0-56-amd64"), fixture("6.12.117+deb12-amd64"));
    let (k61, k612) = (k61.to_str().unwrap_or_default(), k612.to_str().unwrap_or_default());
    // Clean on the kernel it was written for.
    let (out, err, code) = fevlint(&["check", "--kernel", k61, "vfs.dynevents"], &dir);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("1 definition") && !out.contains("warning["), "{out}");
    // Against both: each moved member, where it went, nothing else.
    let (out, _, _) = fevlint(&["check", "--kernel", k61, "--kernel", k612, "--format", "json", "vfs.dynevents"], &dir);
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let found: Vec<(String, String)> = v["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| (d["code"].as_str().unwrap_or("").to_owned(), d["message"].as_str().unwrap_or("").to_owned()))
        .collect();
    let codes: Vec<&str> = found.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(codes, ["D503", "D503", "D503", "D503", "D503"], "{found:#?}");
    // Issue 21: one rule, one severity in both dialects. D503 was a warning here (exit
    // 0) and an error in `*.fev`: every finding now has its rule's registered severity.
    for d in v["diagnostics"].as_array().into_iter().flatten() {
        let code = d["code"].as_str().unwrap_or_default();
        let rule = fevlint_check::rules::by_code(code).expect("a registered rule");
        assert_eq!(d["severity"].as_str(), Some(rule.severity.as_str()), "{code}: {d}");
    }
    let (out, _, code) = fevlint(&["check", "--kernel", k61, "--kernel", k612, "vfs.dynevents"], &dir);
    assert_eq!(code, Some(1), "drift fails the check as in `*.fev`: {out}");
    for want in [
        "offset 64 reads `struct file.f_flags` on 6.1.0-56-amd64 but `f_path.mnt` of `struct file` on 6.12.117+deb12-amd64",
        "offset 8 reads `struct file_operations.llseek`",
        "offset 24 reads `struct file.f_path.dentry`",
    ] {
        assert!(found.iter().any(|(_, m)| m.starts_with(want)), "{want}\n{found:#?}");
    }
    // The fix: every offset rewritten to the same member on 6.12; then clean there.
    let (diff, err, code) = fevlint(&["fix", "--kernel", k61, "--kernel", k612, "vfs.dynevents"], &dir);
    assert_eq!(code, Some(0), "{diff}{err}");
    assert_eq!(std::fs::read_to_string(dir.join("vfs.dynevents")).expect("fixed"), FIXED_FOR_6_12, "{diff}");
    let (out, err, code) = fevlint(&["check", "--kernel", k612, "vfs.dynevents"], &dir);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!out.contains("warning["), "{out}");

    // The same through a lock recorded on 6.1: only the lock and 6.12 are needed.
    std::fs::write(dir.join("vfs.dynevents"), WRITTEN_FOR_6_1).expect("script");
    let (out, err, code) = fevlint(&["lock", "--kernel", k61, "-o", "fevlint.lock", "vfs.dynevents"], &dir);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("4 mainline arguments"), "{out}");
    let lock = std::fs::read_to_string(dir.join("fevlint.lock")).expect("lock");
    assert!(lock.contains("event = \"drift/read61\"") && lock.contains("member = \"f_path.dentry\""), "{lock}");
    let (out, _, code) = fevlint(&["check", "--lock", "fevlint.lock", "--kernel", k612, "vfs.dynevents"], &dir);
    assert_eq!(code, Some(1), "{out}");
    assert_eq!(out.matches("[D505[").count(), 5, "{out}");
    assert!(!out.contains("[T40"), "the moves explain the rest: {out}");
    let (diff, err, code) = fevlint(&["fix", "--lock", "fevlint.lock", "--kernel", k612, "vfs.dynevents"], &dir);
    assert_eq!(code, Some(0), "{diff}{err}");
    assert_eq!(std::fs::read_to_string(dir.join("vfs.dynevents")).expect("fixed"), FIXED_FOR_6_12, "{diff}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_example_file_is_clean_on_the_kernel_it_is_written_for() {
    let k612 = fixture("6.12.117+deb12-amd64");
    let (out, err, code) =
        fevlint(&["check", "--kernel", k612.to_str().unwrap_or_default(), "examples/vfs.dynevents"], &root());
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("5 definitions: 0 errors, 0 warnings"), "{out}");
}

#[test]
fn the_kernels_refusals_and_what_they_accept_but_misread() {
    let dir = temp("rules");
    let script = "p:vfs/oops vfs_raed\n\
                  p:vfs/brace vfs_read +0(+0(%di):u8\n\
                  p:vfs/odd vfs_read x=+4($arg1):u64 y=+0($arg3):u64 z=$arg7:u64 s=+0(+16($arg1)):string t=+0(+40(+72($arg1))):string u=+40(+72($arg1)):string\n\
                  f:vfs/ok vfs_read name=file->f_path.dentry->d_name.name:string\n";
    std::fs::write(dir.join("x.dynevents"), script).expect("script");
    let k612 = fixture("6.12.117+deb12-amd64");
    let (out, _, code) = fevlint(&["check", "--kernel", k612.to_str().unwrap_or_default(), "x.dynevents"], &dir);
    assert_eq!(code, Some(1), "{out}");
    for want in [
        "x.dynevents:1:12",
        "the kernel rejects this line: Invalid probed address or symbol",
        "x.dynevents:2:31",
        "the kernel rejects this line: Dereference brace is not closed",
        "offset 4 lands 4 bytes into `f_count.counter` (s64, at 0) of `struct file`",
        "`+0(…)` dereferences `count`, which is a `size_t`, not a pointer",
        "`$arg7` reads the stack (`$stack1`), but `vfs_read` has 4 parameters, none passed there",
        "`:string` reads the characters stored at `file->f_op->owner`, which is a `struct module *`, not a `char` array",
        "`:string` reads the characters stored at `file->f_path.dentry->d_name.name`, which is a `const unsigned char *`: the pointer's own bytes",
    ] {
        assert!(out.contains(want), "missing {want:?}:\n{out}");
    }
    assert!(!out.contains("x.dynevents:4:"), "the BTF-named fprobe is fine:\n{out}");
    // `t=` reads the name the dentry points to: nothing to say.
    assert_eq!(out.matches("[T402[").count(), 2, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn need_qemu() {
    for (tool, package) in [("qemu-system-x86_64", "qemu-system-x86"), ("busybox", "busybox-static"), ("cpio", "cpio")]
    {
        fevlint_testkit::require_tool(tool, package);
    }
}

/// Boots `image` with `defs`, runs a `dd` of /proc/version: (verdict rows, trace rows).
fn boot(image: &Path, defs: &str, name: &str) -> (Vec<String>, Vec<String>) {
    need_qemu();
    let dir = temp(name);
    std::fs::write(dir.join("defs.txt"), defs).expect("defs");
    let out = Command::new("bash")
        .arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["--tsv", "-m", "200M", "-t", "dd if=/proc/version of=/dev/null bs=777 count=1; cat /proc/version"])
        .arg(image)
        .arg(dir.join("defs.txt"))
        .output()
        .expect("run-oracle.sh");
    let tsv = String::from_utf8_lossy(&out.stdout).into_owned();
    let _ = std::fs::remove_dir_all(&dir);
    let rows = |p: &str| tsv.lines().filter(|l| l.starts_with(p)).map(str::to_owned).collect::<Vec<_>>();
    let (defs_seen, trace) = (rows("DEF\t"), rows("TRACE\t"));
    assert!(!defs_seen.is_empty(), "no verdicts: {tsv}\n{}", String::from_utf8_lossy(&out.stderr));
    (defs_seen, trace)
}

/// `name=value` pairs of a kprobe trace line, quotes dropped.
fn values(line: &str) -> Vec<(String, String)> {
    let body = line.split_once(") ").map_or("", |(_, b)| b);
    body.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(n, v)| (n.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

#[test]
fn the_real_6_1_kernel_accepts_the_script_and_every_emitted_line() {
    if !fevlint_testkit::real_tools("QEMU and apt (a Debian kernel package)") {
        return;
    }
    let deb = Command::new("bash")
        .arg(root().join("scripts/fetch-kernel-deb.sh"))
        .arg("linux-image-6.1.0-56-amd64-unsigned=6.1.192-2")
        .output()
        .expect("fetch-kernel-deb.sh");
    assert!(deb.status.success(), "cannot fetch the 6.1 image: {}", String::from_utf8_lossy(&deb.stderr));
    let image = PathBuf::from(String::from_utf8_lossy(&deb.stdout).trim());
    let mut defs = WRITTEN_FOR_6_1.to_owned();
    let (mut emitted, mut refused) = (0, 0);
    for script in ["vfs.fev", "net.fev", "sched.fev", "mm.fev", "block.fev"] {
        let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .args(["emit", "--kernel"])
            .arg(fixture("6.1.0-56-amd64"))
            .arg(root().join("examples").join(script))
            .output()
            .expect("fevlint emit");
        // The examples are written for 6.12: the functions 6.1 lacks are not emitted
        // (the kernel's own refusal, said on stderr), everything else is.
        let stderr = String::from_utf8_lossy(&out.stderr);
        let not = stderr.lines().filter(|l| l.contains(": cannot emit: ")).count();
        assert!(
            stderr
                .lines()
                .filter(|l| l.contains(": cannot emit: "))
                .all(|l| l.contains("Invalid probed address or symbol")),
            "{script}: {stderr}"
        );
        assert_eq!(out.status.code(), Some(if not > 0 { 1 } else { 0 }), "{script}: {stderr}");
        let text = String::from_utf8_lossy(&out.stdout);
        emitted += text.lines().count();
        refused += not;
        defs.push_str(&text);
    }
    assert!(emitted >= 50 && refused <= 10, "{emitted} emitted, {refused} refused");
    let (verdicts, trace) = boot(&image, &defs, "boot-6.1");
    assert_eq!(verdicts.len(), 1 + emitted, "one verdict per line");
    let rejected: Vec<&String> = verdicts.iter().filter(|l| l.split('\t').nth(2) != Some("ACCEPT")).collect();
    assert!(rejected.is_empty(), "6.1 rejected:\n{rejected:#?}");
    let ours =
        trace.iter().find(|l| l.contains(" read61: (vfs_read+") && l.contains("count=777")).expect("the dd call");
    let v = values(ours);
    assert!(v.contains(&("name".to_owned(), "version".to_owned())), "{ours}");
    assert!(v.iter().any(|(n, s)| n == "llseek" && s.starts_with("proc_reg_llseek+0x0/")), "{ours}");
    assert!(v.contains(&("flags".to_owned(), "0x8000".to_owned())), "{ours}");
}

#[test]
fn the_real_6_12_kernel_accepts_the_fixed_script_and_it_reads_the_same_members() {
    if !fevlint_testkit::real_tools("QEMU") {
        return;
    }
    // The fixed line, and an fprobe naming the members through 6.12's BTF: both record
    // the same call.
    // And the example file, which `fevlint check` calls clean on 6.12.
    let example = std::fs::read_to_string(root().join("examples/vfs.dynevents")).expect("example");
    let defs = format!(
        "{FIXED_FOR_6_12}f:vfs/names vfs_read flags=file->f_flags:x32 mode=file->f_mode:x32 \
         llseek=file->f_op->llseek:symbol name=file->f_path.dentry->d_name.name:string count=count:u64\n{example}"
    );
    let (verdicts, trace) = boot(&fixture("6.12.117+deb12-amd64").join("vmlinuz"), &defs, "boot-6.12");
    let lines = defs.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')).count();
    assert_eq!(verdicts.len(), lines, "one verdict per line: {verdicts:#?}");
    assert!(verdicts.iter().all(|l| l.split('\t').nth(2) == Some("ACCEPT")), "{verdicts:#?}");
    for event in ["read_names", "read_ret", "openat2", "write"] {
        assert!(trace.iter().any(|l| l.contains(&format!(" {event}: "))), "{event} did not fire:\n{trace:#?}");
    }
    let find = |event: &str| {
        trace
            .iter()
            .find(|l| l.contains(&format!(" {event}: (vfs_read+")) && l.contains("count=777"))
            .unwrap_or_else(|| panic!("no {event} for the dd call:\n{trace:#?}"))
            .clone()
    };
    let (fixed, names) = (find("read61"), find("names"));
    assert_eq!(values(&fixed), values(&names), "\nfixed: {fixed}\nnames: {names}");
    assert!(values(&fixed).contains(&("name".to_owned(), "version".to_owned())), "{fixed}");
}

/// With its image loaded, a kernel's dialect comes from the README its image carries
/// (the fixture's 6.12 vmlinuz carries the one the booted kernel printed).
#[test]
fn the_dialect_comes_from_the_image_when_it_is_loaded() {
    let k = Kernel::open(&fixture("6.12.117+deb12-amd64").join("vmlinuz")).expect("vmlinuz");
    assert!(k.inputs().elf.is_some(), "the payload is loaded");
    let d = dynevents::dialect_for(&k).expect("dialect");
    assert_eq!(d.readme, fevlint_mainline::readmes::DEBIAN_6_12_117_AMD64);
    assert!(d.fprobe && d.btf_args);
}

/// Hover on a kprobe's `SYM+OFF`: where the probe sits on each kernel and the
/// instruction starts around it, read from each fixture's image.
#[test]
fn hover_on_a_probe_place_shows_the_instructions_around_it() {
    let (k61, k612) = (
        Kernel::open(&fixture("6.1.0-56-amd64")).expect("6.1"),
        Kernel::open(&fixture("6.12.117+deb12-amd64")).expect("6.12"),
    );
    let text = "p:demo/a vfs_read+3\np:demo/e do_sys_openat2\np:demo/v vfs_read\n";
    let (span, md) = dynevents::describe_at(text, 12, &[&k61, &k612]).expect("hover on the place");
    eprintln!("{md}");
    assert_eq!(&text[span.start..span.end], "vfs_read+3");
    assert!(md.contains("**`vfs_read+3`** on 6.12.117+deb12-amd64: is refused: not an instruction boundary"), "{md}");
    assert!(md.contains("- instructions start at +0, +4, +9, +11"), "{md}");
    assert!(md.contains("- instructions start at +0, +5, "), "{md}");
    // The nearest boundaries, with the instructions there.
    assert!(
        md.contains("- nearest instruction boundaries: `+0` (`endbr64`) before, `+4` (`call __fentry__`) after"),
        "{md}"
    );
    assert!(
        md.contains("- nearest instruction boundaries: `+0` (`call __fentry__`) before, `+5` (`push`) after"),
        "{md}"
    );
    let (_, md) = dynevents::describe_at("p:demo/a vfs_read+9\n", 12, &[&k612]).expect("hover on a boundary");
    assert!(md.contains("- an instruction starts here: `push`"), "{md}");
    let at = text.find("do_sys_openat2").expect("line 2") + 3;
    let (_, md) = dynevents::describe_at(text, at, &[&k612]).expect("hover on the entry");
    assert!(md.contains("sits at `do_sys_openat2+0x0`"), "{md}");
    let at = text.rfind("vfs_read").expect("line 3") + 3;
    let (_, md) = dynevents::describe_at(text, at, &[&k61, &k612]).expect("hover on the entry");
    assert!(md.contains("on 6.12.117+deb12-amd64: sits at `vfs_read+0x4` (past its ENDBR64)"), "{md}");
    assert!(md.contains("on 6.1.0-56-amd64: sits at `vfs_read+0x0`"), "{md}");
}

/// A bare vmlinuz (no System.map beside it): the image's own kallsyms give the
/// functions' addresses and sizes, so `SYM+OFF` is checked as in the fixture's folder (it
/// said "the kernel has no symbol map" before), its blacklist is built from the image, and
/// its ftrace list named from its mcount table ("traceability is not checked" before).
#[test]
fn a_bare_image_checks_instruction_boundaries_and_its_blacklist() {
    let dir = temp("bare-image");
    let script = "p:demo/a vfs_read+3\np:demo/b vfs_read+4\np:demo/c kernel_clone+1\np:demo/d do_int3\n";
    std::fs::write(dir.join("k.dynevents"), script).expect("script");
    let image = fixture("6.12.117+deb12-amd64").join("vmlinuz");
    let (out, _, code) = fevlint(&["check", "--kernel", image.to_str().unwrap_or_default(), "k.dynevents"], &dir);
    assert_eq!(code, Some(1), "{out}");
    assert!(!out.contains("no symbol map"), "{out}");
    for line in [1, 3] {
        assert!(out.contains(&format!("k.dynevents:{line}:10")), "line {line}: {out}");
    }
    assert!(out.contains("help: instructions start at `vfs_read+0` and `vfs_read+4`"), "{out}");
    assert!(out.contains("help: instructions start at `kernel_clone+0` and `kernel_clone+4`"), "{out}");
    assert!(!out.contains("k.dynevents:2:"), "vfs_read+4 is the entry past ENDBR64: {out}");
    // `do_int3` is NOKPROBE_SYMBOL: the blacklist built from the image refuses it.
    assert!(out.contains("k.dynevents:4:10") && out.contains("Failed to register probe event"), "{out}");
    assert_eq!(out.matches("Probe point is not an instruction boundary").count(), 4, "{out}");
    // Its ftrace list, named from its mcount table: `__bitmap_and` (lib/, no fentry) is
    // no fprobe target, as in the fixture's folder.
    std::fs::write(dir.join("f.dynevents"), "f:demo/f __bitmap_and\nf:demo/g vfs_read\n").expect("script");
    let (out, _, code) = fevlint(&["check", "--kernel", image.to_str().unwrap_or_default(), "f.dynevents"], &dir);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("f.dynevents:1:10") && out.contains("trace_fprobe: error: Failed to register probe event"));
    assert!(!out.contains("f.dynevents:2:") && !out.contains("traceability is not checked"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Where a probe on a function's entry sits, from the function's own first bytes: 6.12's
/// `do_sys_openat2` (static, never address-taken) has no ENDBR64, so `dry-run --emitted`
/// prints `+0x0` there, as the real kernel records; `--endbr present` assumes one.
#[test]
fn the_entry_offset_comes_from_the_functions_bytes_unless_assumed() {
    use fevlint_check::dynevents::Endbr;
    let k = Kernel::open(&fixture("6.12.117+deb12-amd64")).expect("6.12");
    let d = dynevents::dialect_for(&k).expect("dialect");
    let env = KernelEnv::new(&k, &d);
    assert_eq!((env.entry_offset("do_sys_openat2"), env.entry_offset("vfs_read")), (0, 4));
    let present = KernelEnv::new(&k, &d).with_endbr(Endbr::Present);
    assert_eq!((present.entry_offset("do_sys_openat2"), present.entry_offset("vfs_read")), (4, 4));
    let absent = KernelEnv::new(&k, &d).with_endbr(Endbr::Absent);
    assert_eq!((absent.entry_offset("do_sys_openat2"), absent.entry_offset("vfs_read")), (0, 0));
    // `r SYM+4` is a return probe on the entry only past an ENDBR64.
    let dir = temp("endbr");
    std::fs::write(dir.join("r.dynevents"), "r:demo/d do_sys_openat2+4\n").expect("script");
    let k612 = fixture("6.12.117+deb12-amd64");
    let k612 = k612.to_str().unwrap_or_default();
    let (out, _, code) = fevlint(&["check", "--kernel", k612, "r.dynevents"], &dir);
    assert!(out.contains("Retprobe address must be an function entry") && code == Some(1), "{out}");
    let (out, _, code) = fevlint(&["check", "--kernel", k612, "--endbr", "present", "r.dynevents"], &dir);
    assert!(!out.contains("error[") && code == Some(0), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
