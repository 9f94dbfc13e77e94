//! `fevlint dry-run` over a real core: a C program with kernel-shaped structs
//! (`tests/dry_run/prog.c`) is compiled here, stopped by gdb at the entry of
//! `target_read(file, buf, count, whence)` and dumped with `gcore`. The dry run must
//! print exactly the values the program printed itself, and `%pS` must name the
//! function pointers as `nm` places them. The language server, given the same core in
//! its settings, shows the same values as inlay hints.

mod lsp_common;

use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Core {
    dir: PathBuf,
    prog: PathBuf,
    core: PathBuf,
    printed: HashMap<String, String>,
}

fn make_core(test: &str) -> Core {
    make_core_with(test, &["-no-pie"])
}

fn make_core_with(test: &str, flags: &[&str]) -> Core {
    for (t, package) in [("gcc", "gcc"), ("gdb", "gdb"), ("nm", "binutils")] {
        fevlint_testkit::require_tool(t, package);
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("dry-run-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dry_run/prog.c");
    let prog = dir.join("prog");
    let core = dir.join("core");
    // -no-pie: symbol addresses are run-time addresses; a PIE's are shifted by its load
    // bias, which the dry run finds in the core's NT_FILE note.
    let st = Command::new("gcc").args(["-g", "-O1"]).args(flags).arg("-o").arg(&prog).arg(&src).status().expect("gcc");
    assert!(st.success(), "gcc failed");
    let out = Command::new("gdb")
        .args(["-q", "-batch", "-nx", "-ex", "set pagination off", "-ex", "break *target_read", "-ex", "run"])
        .args(["-ex", &format!("gcore {}", core.display())])
        .arg(&prog)
        .output()
        .expect("gdb");
    assert!(core.exists(), "gcore wrote no core: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let printed = stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect::<HashMap<_, _>>();
    assert!(printed.contains_key("file"), "the program printed nothing: {stdout}");
    Core { dir, prog, core, printed }
}

fn dry_run(c: &Core, script: &str, extra: &[&str]) -> (String, String, bool) {
    let path = c.dir.join("t.fev");
    std::fs::write(&path, script).expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .arg("dry-run")
        .arg("--kernel")
        .arg(&c.prog)
        .arg("--core")
        .arg(&c.core)
        .args(extra)
        .arg(&path)
        .output()
        .expect("fevlint");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// `name+0x0/0xSIZE` with SIZE the distance to the next symbol, as `nm -n` orders them.
fn nm_symbol(prog: &Path, name: &str) -> String {
    let out = Command::new("nm").arg("-n").arg(prog).output().expect("nm");
    let text = String::from_utf8_lossy(&out.stdout);
    let syms: Vec<(u64, &str)> = text
        .lines()
        .filter_map(|l| {
            let mut it = l.split_whitespace();
            let addr = u64::from_str_radix(it.next()?, 16).ok()?;
            let kind = it.next()?;
            let n = it.next()?;
            (!matches!(kind, "a" | "A" | "U" | "w" | "v") && addr != 0).then_some((addr, n))
        })
        .collect();
    let i = syms.iter().position(|(_, n)| *n == name).expect("symbol in nm");
    let start = syms[i].0;
    let next = syms[i..].iter().find(|(a, _)| *a > start).expect("a next symbol").0;
    format!("{name}+0x0/0x{:x}", next - start)
}

#[test]
fn the_dry_run_prints_what_the_program_printed() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("the_dry_run_prints_what_the_program_printed");
    let p = &c.printed;
    let script = "\
target_read(x64 file, x64 buf, u64 count, int whence)
target_read(x32 flags[0] | symbol read+8[0][0] | u64 ino+16[0][0] | int icount+16[0]+12[0] | char[16] name+24 | string path+40[0] | u32 mode+16[0]+8[0] | symbol write+8[0]+8[0] | x8[4] name4+24)
";
    let (out, err, ok) = dry_run(&c, script, &[]);
    assert!(ok, "dry-run failed: {err}");
    let lines: Vec<&str> = out.lines().collect();
    // The caller is `main`: the return address on the stack at the entry.
    assert_eq!(
        lines[0],
        format!("main->target_read(file={}, buf={}, count=777, whence={})", p["file"], p["buf"], p["whence"]),
        "{out}"
    );
    let name4: Vec<String> = p["name4"].split(':').map(str::to_owned).collect();
    assert_eq!(
        lines[1],
        format!(
            "main->target_read(flags={}, read={}, ino={}, icount={}, name={}, path={}, mode={}, write={}, name4={{{}}})",
            p["flags"],
            nm_symbol(&c.prog, "my_read"),
            p["ino"],
            p["icount"],
            p["name"],
            p["path"],
            p["mode"],
            nm_symbol(&c.prog, "my_write"),
            name4.join(":")
        ),
        "{out}"
    );
    assert_eq!(lines.len(), 2, "no notes expected: every read succeeds\n{out}");
}

/// A position-independent executable runs where the loader put it (ASLR under gdb is
/// off, but the bias is still 0x555555554000): symbols and read-only data are found at
/// the load bias the core's NT_FILE note gives.
#[test]
fn a_pie_is_read_at_its_load_bias() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core_with("a_pie_is_read_at_its_load_bias", &["-pie", "-fPIE"]);
    let p = &c.printed;
    let script = "target_read(symbol read+8[0][0] | string path+40[0] | u64 ino+16[0][0])\n";
    let (out, err, ok) = dry_run(&c, script, &[]);
    assert!(ok, "dry-run failed: {err}");
    // nm lists link-time addresses; the sizes (distance to the next symbol) are the same.
    assert_eq!(
        out.lines().next().unwrap_or_default(),
        format!("main->target_read(read={}, path={}, ino={})", nm_symbol(&c.prog, "my_read"), p["path"], p["ino"]),
        "{out}"
    );
}

#[test]
fn faulting_reads_record_zero_and_say_why() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("faulting_reads_record_zero_and_say_why");
    // Slot 3 holds `whence` (-7, in ecx: the upper half of rcx is zero, so 0xfffffff9):
    // reading through it faults, and so does a read near NULL.
    let (out, err, ok) = dry_run(&c, "target_read(NULL, NULL, NULL, u64 bad[0] | string s+64[0] | x8[3] a[0])\n", &[]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "main->target_read(bad=0, s=, a={0:0:0})", "{out}");
    assert!(lines.contains(&"  note: s recorded 0: read at 0x100000039: unmapped"), "{out}");
    assert!(lines.iter().filter(|l| l.contains("recorded 0: read at 0xfffffff9: unmapped")).count() == 2, "{out}");
}

#[test]
fn arguments_by_register_slot_and_parameter_name() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("arguments_by_register_slot_and_parameter_name");
    let script = "target_read(x64 file, x64 buf, u64 count, int whence)\n";
    let (out, err, ok) = dry_run(&c, script, &["--arg", "count=0x10", "--arg", "%rcx=5", "--arg", "slot1=0"]);
    assert!(ok, "{err}");
    assert_eq!(
        out.lines().next(),
        Some(format!("main->target_read(file={}, buf=0, count=16, whence=5)", c.printed["file"]).as_str())
    );
    // A parameter the function does not have is an error naming the ones it has.
    let (_, err, ok) = dry_run(&c, script, &["--arg", "nosuch=1"]);
    assert!(!ok && err.contains("has no parameter `nosuch`") && err.contains("count"), "{err}");
}

#[test]
fn the_format_file_lays_fields_out_as_the_kernel_does() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("the_format_file_lays_fields_out_as_the_kernel_does");
    let (out, err, ok) = dry_run(&c, "target_read(int a, char[3] n, string s, symbol f)\n", &["--show-format"]);
    assert!(ok, "{err}");
    assert!(out.contains("\tfield:int a;\toffset:24;\tsize:4;\tsigned:1;\n"), "{out}");
    assert!(out.contains("\tfield:char[3] n;\toffset:28;\tsize:3;\tsigned:1;\n"), "{out}");
    assert!(out.contains("\tfield:__data_loc char[] s;\toffset:32;\tsize:4;\tsigned:0;\n"), "{out}");
    assert!(out.contains("\tfield:symbol f;\toffset:40;\tsize:8;\tsigned:0;\n"), "{out}");
    assert!(
        out.contains("print fmt: \"%pS->%pS(a=%d, n=%s, s=%s, f=%pS)\", REC->__ip, REC->__parent_ip, REC->a, REC->n, __get_str(s), REC->f\n"),
        "{out}"
    );
}

#[test]
fn json_names_each_read_and_why_a_field_is_zero() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("json_names_each_read_and_why_a_field_is_zero");
    let script = "target_read(u64 ino+16[0][0] | u64 bad+4096[0][0])\n";
    let (out, err, ok) = dry_run(&c, script, &["--format", "json"]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["version"], 1);
    assert_eq!(v["dump_format"], "ELF user core");
    let fields = &v["events"][0]["event"]["fields"];
    // ino: two reads, a pointer (f_inode) then the 8-byte value, each with its bytes.
    let ino = &fields[0];
    assert_eq!(ino["printed"], c.printed["ino"].as_str());
    assert_eq!(ino["reads"].as_array().map(Vec::len), Some(2), "{ino}");
    assert_eq!(ino["reads"][1]["bytes"].as_array().map(Vec::len), Some(8), "{ino}");
    assert!(ino["zero_because"].is_null());
    // bad: the pointer at file+4096 (zeroed static data) is NULL; reading through it
    // faults, and the field records 0 saying so.
    let bad = &fields[1];
    assert_eq!(bad["printed"], "0");
    assert_eq!(bad["reads"][0]["bytes"], serde_json::json!([0, 0, 0, 0, 0, 0, 0, 0]), "{bad}");
    assert_eq!(bad["reads"][1]["fault"], "unmapped", "{bad}");
    assert_eq!(bad["zero_because"], "read at 0x0: NULL pointer (unmapped)", "{bad}");
    assert!(v["events"][0]["format"].as_str().is_some_and(|f| f.contains("print fmt:")));
}

/// `core = …` in the settings: each field's dry-run value as an inlay hint after it, the
/// same value the CLI prints; a definition of another function than the one the core is
/// stopped in gets no values for its arguments (the registers are not its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_language_server_shows_dry_run_values_as_inlay_hints() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("the_language_server_shows_dry_run_values_as_inlay_hints");
    let script = "target_read(x64 file, x64 buf, u64 count, int whence)\n\
                  target_read(char[16] name+24 | u64 ino+16[0][0])\n\
                  my_read(x64 file)\n";
    let file = c.dir.join("hints.fev");
    std::fs::write(&file, script).expect("script");
    let uri = format!("file://{}", file.display());
    let mut client = lsp_common::Client::start();
    let options = json!({"fevlint": {"kernels": [c.prog.display().to_string()], "core": c.core.display().to_string()}});
    client.initialize(json!({}), options).await;
    client
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "fev", "version": 1, "text": script}}),
        )
        .await;
    let range = json!({"start": {"line": 0, "character": 0}, "end": {"line": 3, "character": 0}});
    // The kernel (here the program) loads in the background: ask until it is there.
    let mut hints = serde_json::Value::Null;
    for _ in 0..100 {
        hints = client.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": range})).await;
        if hints.as_array().is_some_and(|h| h.iter().any(|h| h["label"].as_str().is_some_and(|l| l.starts_with('=')))) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let values: Vec<(u64, u64, String)> = hints
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|h| {
            let label = h["label"].as_str()?.strip_prefix("= ")?;
            Some((h["position"]["line"].as_u64()?, h["position"]["character"].as_u64()?, label.to_owned()))
        })
        .collect();
    let p = &c.printed;
    let at = |line: &str, field: &str| {
        script.lines().find(|l| *l == line).and_then(|l| l.find(field)).map(|i| (i + field.len()) as u64)
    };
    let l0 = script.lines().next().unwrap_or_default();
    let l1 = script.lines().nth(1).unwrap_or_default();
    assert_eq!(
        values,
        vec![
            (0, at(l0, "x64 file").unwrap_or(0), p["file"].clone()),
            (0, at(l0, "x64 buf").unwrap_or(0), p["buf"].clone()),
            (0, at(l0, "u64 count").unwrap_or(0), "777".to_owned()),
            (0, at(l0, "int whence").unwrap_or(0), p["whence"].clone()),
            (1, at(l1, "char[16] name+24").unwrap_or(0), p["name"].clone()),
            (1, at(l1, "u64 ino+16[0][0]").unwrap_or(0), p["ino"].clone()),
        ],
        "{hints:#}"
    );
    let tip = hints
        .as_array()
        .into_iter()
        .flatten()
        .find(|h| h["label"] == format!("= {}", p["ino"]))
        .and_then(|h| h["tooltip"]["value"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert!(tip.contains("ELF user core") && tip.contains("read 8 bytes at `0x"), "{tip}");
    assert!(tip.contains("the registers at `target_read+0x0`"), "{tip}");

    // A core that is not a dump of the configured kernel: told, and no values.
    client
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"fevlint": {"core": c.prog.display().to_string()}}}),
        )
        .await;
    let hints = client.request("textDocument/inlayHint", json!({"textDocument": {"uri": uri}, "range": range})).await;
    let shown = client.wait("a warning about the core", |v| v["method"] == "window/showMessage").await;
    let message = shown["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("cannot use core") && message.contains(&c.prog.display().to_string()), "{message}");
    let labels: Vec<&str> = hints.as_array().into_iter().flatten().filter_map(|h| h["label"].as_str()).collect();
    assert!(labels.iter().all(|l| !l.starts_with('=')), "{labels:?}");
    client.finish().await;
}

/// Rewrites the copy of a core at `to` with `edit` applied to its bytes.
fn edited_core(c: &Core, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(&c.core).expect("core");
    edit(&mut bytes);
    let to = c.dir.join(name);
    std::fs::write(&to, bytes).expect("write core");
    to
}

fn dry_run_core(c: &Core, kernel: &Path, core: &Path) -> (String, String, bool) {
    let path = c.dir.join("t.fev");
    std::fs::write(&path, "target_read(x64 file, x64 buf, u64 count, int whence)\n").expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["dry-run", "--format", "json", "--kernel"])
        .arg(kernel)
        .arg("--core")
        .arg(core)
        .arg(&path)
        .output()
        .expect("fevlint");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// A core that records no registers (no notes at all, no program headers, or only a
/// zeroed `NT_PRSTATUS`) has no arguments to read: it is refused as `--cpu 9` is, never
/// evaluated with every register 0.
#[test]
fn a_core_without_registers_is_refused() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("a_core_without_registers_is_refused");
    let bytes = std::fs::read(&c.core).expect("core");
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().expect("8")) as usize;
    let (phoff, phnum) = (u64_at(32), u16_at(56));
    let note = (0..phnum).map(|i| phoff + 56 * i).find(|&p| bytes[p] == 4).expect("a PT_NOTE");
    let (note_off, note_len) = (u64_at(note + 8), u64_at(note + 32));
    // e_phnum = 0: no segments, no notes.
    let no_phdrs = edited_core(&c, "no-phdrs", |b| b[56..58].copy_from_slice(&[0, 0]));
    // The PT_NOTE made a PT_NULL: memory but no notes.
    let no_notes = edited_core(&c, "no-notes", |b| b[note..note + 4].copy_from_slice(&[0; 4]));
    // Every NT_PRSTATUS's registers (pr_reg, 112 bytes into the descriptor) zeroed.
    let zeroed = edited_core(&c, "zeroed-prstatus", |b| {
        let mut off = note_off;
        while off + 12 <= note_off + note_len {
            let word = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().expect("4")) as usize;
            let (namesz, descsz, ty) = (word(off), word(off + 4), word(off + 8));
            let desc = off + 12 + namesz.next_multiple_of(4);
            if ty == 1 && &b[off + 12..off + 16] == b"CORE" {
                b[desc + 112..desc + 112 + 27 * 8].fill(0);
            }
            off = desc + descsz.next_multiple_of(4);
        }
    });
    for (core, says) in [
        (&no_phdrs, "records no CPU or thread registers"),
        (&no_notes, "records no CPU or thread registers"),
        (&zeroed, "records no registers for CPU/thread 0"),
    ] {
        let (out, err, ok) = dry_run_core(&c, &c.prog, core);
        assert!(!ok && out.is_empty() && err.contains(says), "{}: {out}{err}", core.display());
    }
    // The unedited core still reads.
    let (_, err, ok) = dry_run_core(&c, &c.prog, &c.core);
    assert!(ok, "{err}");
}

/// A user-space core read with another program's ELF, or with a kernel, is refused: the
/// program must be a file the core maps (`NT_FILE`), and the build-id the core holds must
/// be the program's.
#[test]
fn a_core_of_another_program_is_refused() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("a_core_of_another_program_is_refused");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dry_run/prog.c");
    // Another program: the same source built differently, under another name.
    let other = c.dir.join("other");
    let st = Command::new("gcc").args(["-g", "-O2", "-no-pie", "-o"]).arg(&other).arg(&src).status().expect("gcc");
    assert!(st.success());
    let (_, err, ok) = dry_run_core(&c, &other, &c.core);
    assert!(!ok && err.contains(&format!("is a user-space core of {}, not of", c.prog.display())), "{err}");
    // A kernel.
    let kernel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.12.117+deb12-amd64");
    let (_, err, ok) = dry_run_core(&c, &kernel, &c.core);
    assert!(!ok && err.contains("is not a program's ELF file"), "{err}");
    // The same name, another build, with the core's own program gone (a core moved to
    // another machine): the build-ids differ.
    let moved = c.dir.join("moved");
    std::fs::create_dir_all(&moved).expect("dir");
    std::fs::copy(&other, moved.join("prog")).expect("copy");
    let kept = c.dir.join("prog.kept");
    std::fs::rename(&c.prog, &kept).expect("rename");
    let (_, err, ok) = dry_run_core(&c, &moved.join("prog"), &c.core);
    assert!(!ok && err.contains("is a core of build") && err.contains("but"), "{err}");
    // The right program under the moved name reads.
    std::fs::copy(&kept, moved.join("prog")).expect("copy");
    let (_, err, ok) = dry_run_core(&c, &moved.join("prog"), &c.core);
    assert!(ok, "{err}");
}

/// `dry-run` takes paths as `check` does (files, folders, `-`) and `-k`: each script's
/// events in order, under a `==> NAME <==` line when there are several.
#[test]
fn the_dry_run_takes_paths_and_the_kernel_option_as_check_does() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let c = make_core("the_dry_run_takes_paths_and_the_kernel_option_as_check_does");
    let d = c.dir.join("scripts");
    std::fs::create_dir_all(d.join("sub")).expect("dir");
    std::fs::write(d.join("a.fev"), "target_read(NULL, NULL, u64 count)\n").expect("a");
    std::fs::write(d.join("sub/b.fev"), "target_read(NULL, NULL, NULL, int whence)\n").expect("b");
    let run = |args: &[&std::ffi::OsStr], stdin: &str| {
        use std::io::Write;
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .arg("dry-run")
            .arg("-k")
            .arg(&c.prog)
            .arg("--core")
            .arg(&c.core)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("fevlint");
        child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("stdin");
        let out = child.wait_with_output().expect("fevlint");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let out = run(&[d.as_os_str()], "");
    let expected = format!(
        "==> {a} <==\nmain->target_read(count=777)\n==> {b} <==\nmain->target_read(whence={w})\n",
        a = d.join("a.fev").display(),
        b = d.join("sub/b.fev").display(),
        w = c.printed["whence"]
    );
    assert_eq!(out, expected);
    let out = run(&[std::ffi::OsStr::new("-")], "target_read(NULL, NULL, u64 count)\n");
    assert_eq!(out, "main->target_read(count=777)\n");
}
