//! The `fevlint` binary as a user runs it: paths, stdin, formats, exit statuses.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn fevlint(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fevlint");
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin.unwrap_or_default()).expect("write stdin");
    drop(input);
    child.wait_with_output().expect("fevlint output")
}

fn tmpdir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

#[test]
fn clean_script_exits_zero() {
    let out = fevlint(&["check", "-"], Some(b"vfs_read(x64 file, x64 buf, u64 count)\n# comment\n\n"));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).contains("checked 1 file, 1 definition: 0 errors, 0 warnings"));
}

#[test]
fn syntax_error_is_rendered_with_the_kernel_message_and_exit_one() {
    let out = fevlint(&["check", "--color", "never", "-"], Some(b"ip_rcv(x64 skb, x86 dev)\n"));
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    expect_test::expect![[r#"
        error[S001[syntax-error]]: unexpected `x86` here
          ┌─ <stdin>:1:17
          │
        1 │ ip_rcv(x64 skb, x86 dev)
          │                 ^^^
          │
          = kernel: Unexpected token 'x86' for COMMA state
          = help: expected `NULL`, `unsigned` or a type: long int short char size_t u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 symbol string

        checked 1 file, 1 definition: 1 error, 0 warnings
    "#]]
    .assert_eq(&text);
}

#[test]
fn json_has_the_documented_schema() {
    let out = fevlint(&["check", "--format", "json", "-"], Some("# café\nf(int a) x\n".as_bytes()));
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let d = &doc["diagnostics"][0];
    assert_eq!(d["code"], "S001");
    assert_eq!(d["name"], "syntax-error");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["file"], "<stdin>");
    assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(2), Some(10)));
    assert_eq!((d["end_line"].as_u64(), d["end_column"].as_u64()), (Some(2), Some(11)));
    assert_eq!(d["notes"][0], "kernel: Unexpected token 'x' for END state");
    assert!(d["kernel"].is_null());
    assert_eq!(doc["diagnostics"].as_array().map(Vec::len), Some(1));
}

#[test]
fn columns_count_characters() {
    let out = fevlint(&["check", "--format", "json", "-"], Some("f(int é)\n".as_bytes()));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    // The kernel cuts é (c3 a9) after c3, which it counts as a letter: the error is at
    // the a9 byte, i.e. inside the 7th character.
    assert_eq!(doc["diagnostics"][0]["column"].as_u64(), Some(7));
}

#[test]
fn directories_are_searched_for_fev_files_in_order() {
    let dir = tmpdir("dirs");
    std::fs::create_dir_all(dir.join("sub")).expect("mkdir");
    std::fs::write(dir.join("b.fev"), "f(int a) junk\n").expect("write");
    std::fs::write(dir.join("sub/a.fev"), "g(\n").expect("write");
    std::fs::write(dir.join("notes.txt"), "not a script(\n").expect("write");
    let out = fevlint(&["check", "--format", "json", dir.to_str().expect("utf-8 path")], None);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let files: Vec<&str> =
        doc["diagnostics"].as_array().expect("array").iter().map(|d| d["file"].as_str().unwrap_or("")).collect();
    assert_eq!(files.len(), 2);
    assert!(files[0].ends_with("b.fev") && files[1].ends_with("sub/a.fev"), "{files:?}");
}

#[test]
fn missing_file_is_exit_two_with_its_name() {
    let out = fevlint(&["check", "/nonexistent/x.fev"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.fev"));
}

#[test]
fn bad_usage_is_exit_two() {
    assert_eq!(fevlint(&["check", "--format", "yaml", "-"], None).status.code(), Some(2));
    assert_eq!(fevlint(&["frobnicate"], None).status.code(), Some(2));
}

#[test]
fn arch_changes_the_slot_limit() {
    let script = b"f(x64 a, x64 b, x64 c, x64 d)\n";
    assert_eq!(fevlint(&["check", "-"], Some(script)).status.code(), Some(0));
    let out = fevlint(&["check", "--arch", "x86_32", "--format", "json", "-"], Some(script));
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    assert_eq!(doc["diagnostics"][0]["code"], "S002");
    assert_eq!(doc["diagnostics"][0]["notes"][0], "kernel: Error: Too many arguments (max of 3)");
}

#[test]
fn rule_prints_its_documentation() {
    let out = fevlint(&["rule", "S003"], None);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("# S003 ignored-offset"));
    assert_eq!(fevlint(&["rule", "Z999"], None).status.code(), Some(2));
}

/// A symbol map that does not parse is not silently dropped: K201 says existence was
/// decided without it, and where the map is malformed.
#[test]
fn a_malformed_symbol_map_is_named_where_it_mattered() {
    let dir = tmpdir("badmap");
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.1.0-47-amd64");
    for f in ["vmlinux.btf.zst", "available_filter_functions.zst"] {
        std::fs::copy(fixture.join(f), dir.join(f)).expect("copy fixture");
    }
    std::fs::write(dir.join("System.map"), b"ffffffff81000000 T vfs_read\nffffffff81000010 T\n").expect("map");
    let k = dir.to_str().expect("utf-8 path");
    let out = fevlint(&["check", "--color", "never", "-k", k, "-"], Some(b"no_such_function_xyz(x64 a0)\n"));
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("K201"), "{text}");
    assert!(text.contains("the symbol map was not read") && text.contains("System.map:2: no name"), "{text}");
}

#[test]
fn kernel_fn_says_which_register_holds_which_parameter() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/kernels/");
    // 6.1: struct tnum a (16 bytes) by value fills rdi:rsi, so size is in rdx (slot 2).
    let out = fevlint(&["kernel", "fn", &format!("{root}6.1.0-56-amd64"), "tnum_is_aligned", "--format", "json"], None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let p = &v["prototypes"][0];
    assert_eq!(p["params"][0]["location"], "rdi:rsi");
    assert_eq!(p["params"][0]["slots"], serde_json::json!([0, 1]));
    assert_eq!(p["params"][1]["location"], "rdx");
    assert_eq!(p["slots"][1]["name"], "a");
    assert_eq!(p["slots"][1]["bytes"], serde_json::json!([8, 16]));
    assert_eq!(p["slots"][2]["name"], "size");
    assert!(p["slots"][3]["param"].is_null());
    // 6.12: release_pages_arg is a transparent union BTF records without members: passed
    // like its first member, a pointer, in rdi (the kernel has no SSE: never xmm0).
    let out = fevlint(&["kernel", "fn", &format!("{root}6.12.117+deb12-amd64"), "release_pages"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("slot 0    rdi      arg"), "{text}");
    assert!(text.contains("slot 1    rsi      nr"), "{text}");
    assert!(!text.contains("xmm"), "{text}");
}

/// With one CPU the main thread is rayon's only worker (`cli::process`): the kernels'
/// checks run where they are called instead of on a pool thread. What a check reports
/// must not depend on it: three kernels (two checked in parallel against the first),
/// findings on each, byte for byte the same with one thread and with three.
#[test]
fn one_thread_reports_what_three_do() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/kernels/");
    let script = b"vfs_read(x64 file, x64 buf, u64 count)\nno_such_function_xyz(x64 a0)\n\
                   tcp_sendmsg(x64 sk, x64 msg, u64 size, x64 extra)\nvfs_write(u32 file)\n";
    let run = |threads: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .args(["check", "--format", "json"])
            .args(["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64"].map(|k| format!("--kernel={root}{k}")))
            .arg("-")
            .env("RAYON_NUM_THREADS", threads)
            .env("FEVLINT_NO_CACHE", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run fevlint");
        child.stdin.take().expect("stdin").write_all(script).expect("write stdin");
        child.wait_with_output().expect("fevlint output")
    };
    let one = run("1");
    let three = run("3");
    assert_eq!(one.status.code(), Some(1), "{}", String::from_utf8_lossy(&one.stderr));
    let text = String::from_utf8_lossy(&one.stdout);
    for code in ["K201", "A302", "T401"] {
        assert!(text.contains(code), "{code} in {text}");
    }
    assert_eq!(one.status.code(), three.status.code());
    assert!(one.stdout == three.stdout, "one thread:\n{text}\nthree:\n{}", String::from_utf8_lossy(&three.stdout));
    assert_eq!(one.stderr, three.stderr);
}
