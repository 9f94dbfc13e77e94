//! `fevlint.toml` as a user meets it: found upward from each script (nearest wins),
//! kernels relative to the file, select/ignore/severity/arch, command-line overrides, and
//! a clear exit 2 naming the file for a bad config.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fevlint(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).current_dir(cwd).output().expect("run fevlint")
}

fn tmpdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-config-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn fixture_kernel(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name)
}

/// `(file, code, severity, kernel)` of each diagnostic of a JSON report.
fn findings(out: &Output) -> Vec<(String, String, String, Option<String>)> {
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    doc["diagnostics"]
        .as_array()
        .expect("array")
        .iter()
        .map(|d| {
            let s = |k: &str| d[k].as_str().unwrap_or_default().to_owned();
            (s("file"), s("code"), s("severity"), d["kernel"].as_str().map(str::to_owned))
        })
        .collect()
}

fn codes(out: &Output) -> Vec<String> {
    findings(out).into_iter().map(|f| f.1).collect()
}

const IGNORED_OFFSET: &str = "do_IRQ(int counter+8=0xffffffff82354c18)\n";
const NOT_A_MEMBER: &str = "vfs_read(u32 mode+14[0])\n";
const SEVEN_SLOTS: &str = "f(x64 a, x64 b, x64 c, x64 d, x64 e, x64 g, x64 h)\n";

#[test]
fn the_nearest_config_wins_and_kernels_are_relative_to_it() {
    let dir = tmpdir("nearest");
    write(&dir.join("fevlint.toml"), "ignore = [\"S003\"]\n");
    write(&dir.join("sub/fevlint.toml"), "# a kernel next to this file\nkernels = [\"k\"]\n");
    std::os::unix::fs::symlink(fixture_kernel("6.12.117+deb12-amd64"), dir.join("sub/k")).expect("symlink");
    write(&dir.join("a.fev"), IGNORED_OFFSET);
    write(&dir.join("sub/b.fev"), &format!("{IGNORED_OFFSET}{NOT_A_MEMBER}"));
    write(&dir.join("sub/deeper/c.fev"), NOT_A_MEMBER);
    // Run from the top: `k` must be found next to sub/fevlint.toml, not in the cwd.
    let out = fevlint(&dir, &["check", "--format", "json", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let k = Some("6.12.117+deb12-amd64".to_owned());
    let got: Vec<_> = findings(&out).into_iter().map(|(f, c, _, k)| (f, c, k)).collect();
    assert_eq!(
        got,
        [
            // a.fev: S003 ignored by the top config. sub/: its own config (S003 on, and
            // a kernel, on which `do_IRQ` does not exist).
            ("./sub/b.fev".to_owned(), "K201".to_owned(), k.clone()),
            ("./sub/b.fev".to_owned(), "S003".to_owned(), None),
            ("./sub/b.fev".to_owned(), "T404".to_owned(), k.clone()),
            ("./sub/deeper/c.fev".to_owned(), "T404".to_owned(), k.clone()),
        ]
    );
    // From inside a nested folder, with a relative path, the same config applies.
    let out = fevlint(&dir.join("sub/deeper"), &["check", "--format", "json", "c.fev"]);
    assert_eq!(codes(&out), ["T404"]);
    // Only the top config for a.fev: no kernel.
    let out = fevlint(&dir, &["check", "--format", "json", "a.fev"]);
    assert_eq!((out.status.code(), codes(&out)), (Some(0), vec![]));
}

#[test]
fn command_line_flags_override_the_config() {
    let dir = tmpdir("override");
    write(
        &dir.join("fevlint.toml"),
        &format!("kernels = [{:?}]\narch = \"x86_32\"\nselect = [\"S\"]\n", fixture_kernel("6.12.117+deb12-amd64")),
    );
    write(&dir.join("s.fev"), NOT_A_MEMBER);
    // select = ["S"] turns the T rules off, even with a kernel.
    assert_eq!(codes(&fevlint(&dir, &["check", "--format", "json", "s.fev"])), Vec::<String>::new());
    let out = fevlint(&dir, &["check", "--format", "json", "--select", "T4", "s.fev"]);
    assert_eq!(findings(&out)[0].3.as_deref(), Some("6.12.117+deb12-amd64"));
    // --kernel replaces the config's kernels.
    let other = fixture_kernel("6.1.0-47-amd64");
    let out = fevlint(
        &dir,
        &["check", "--format", "json", "--select", "T", "--kernel", other.to_str().expect("utf-8"), "s.fev"],
    );
    let kernels: Vec<_> = findings(&out).into_iter().map(|f| f.3).collect();
    assert!(
        !kernels.is_empty() && kernels.iter().all(|k| k.as_deref().is_some_and(|k| k.starts_with("6.1.0"))),
        "{kernels:?}"
    );
    // --config replaces discovery; arch from that config applies without a kernel.
    write(&dir.join("other.toml"), "arch = \"x86_32\"\n");
    write(&dir.join("four.fev"), "f(x64 a, x64 b, x64 c, x64 d)\n");
    let out = fevlint(&dir, &["check", "--format", "json", "--config", "other.toml", "four.fev"]);
    assert_eq!((out.status.code(), codes(&out)), (Some(1), vec!["S002".to_owned()]));
    let out = fevlint(&dir, &["check", "--format", "json", "--config", "other.toml", "--arch", "x86_64", "four.fev"]);
    assert_eq!((out.status.code(), codes(&out)), (Some(0), vec![]));
    // A bad prefix on the command line is a usage error.
    let out = fevlint(&dir, &["check", "--ignore", "S,Q1", "four.fev"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("`Q1`"));
}

#[test]
fn select_ignore_and_severity_change_output_and_exit_status() {
    let dir = tmpdir("select");
    let script = format!("{SEVEN_SLOTS}{IGNORED_OFFSET}ip_rcv(x64 skb | int skb[32])\n");
    write(&dir.join("s.fev"), &script);
    let run = |config: &str| {
        write(&dir.join("fevlint.toml"), config);
        let out = fevlint(&dir, &["check", "--format", "json", "s.fev"]);
        let got: Vec<_> = findings(&out).into_iter().map(|f| format!("{} {}", f.1, f.2)).collect();
        (out.status.code(), got)
    };
    assert_eq!(run(""), (Some(1), vec!["S002 error".into(), "S003 warning".into(), "N102 warning".into()]));
    // An error downgraded to a warning no longer fails the run; names work as keys.
    assert_eq!(
        run("[severity]\nS002 = \"warning\"\nduplicate-field = \"info\"\n"),
        (Some(0), vec!["S002 warning".into(), "S003 warning".into(), "N102 info".into()])
    );
    // And a warning raised to an error does.
    assert_eq!(
        run("ignore = [\"S002\"]\n[severity]\nN102 = \"error\"\n"),
        (Some(1), vec!["S003 warning".into(), "N102 error".into()])
    );
    assert_eq!(run("select = [\"N\"]\n"), (Some(0), vec!["N102 warning".into()]));
    // The more specific prefix wins.
    assert_eq!(run("select = [\"S003\"]\nignore = [\"S\"]\n"), (Some(0), vec!["S003 warning".into()]));
    assert_eq!(run("ignore = [\"S00\", \"n1\"]\n"), (Some(0), vec![]));
}

#[test]
fn bad_configs_exit_two_naming_the_file_the_key_and_the_line() {
    let dir = tmpdir("bad");
    write(&dir.join("s.fev"), "f(int a)\n");
    let cases = [
        ("select = [\"S\"]\nkernal = [\"x\"]\n", ":2:1: unknown field `kernal`"),
        ("select = [\"S\", \"Z12\"]\n", ":1:16: `select`: unknown rule code or prefix `Z12`"),
        ("\n[severity]\nT401 = \"loud\"\n", ":3:8: `severity.T401`: unknown severity `loud`"),
        ("[severity]\nT499 = \"error\"\n", ":2:8: `severity`: unknown rule `T499`"),
        ("arch = \"arm64\"\n", ":1:8: `arch`: unknown architecture `arm64`"),
        ("select = \"S\"\n", ":1:10: invalid type: string \"S\", expected a sequence"),
        ("select = [\"S\"\n", ":1:"),
    ];
    for (config, want) in cases {
        write(&dir.join("fevlint.toml"), config);
        let out = fevlint(&dir, &["check", "s.fev"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{config}: {err}");
        let path = dir.join("fevlint.toml");
        assert!(err.contains(&format!("{}{want}", path.display())), "{config}: want {want}, got {err}");
        assert!(out.stdout.is_empty());
    }
    let out = fevlint(&dir, &["check", "--config", "missing.toml", "s.fev"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read missing.toml"));
}

#[test]
fn the_library_finds_the_same_config_for_the_language_server() {
    let dir = tmpdir("find");
    write(&dir.join("fevlint.toml"), "select = [\"S\"]\n");
    write(&dir.join("sub/fevlint.toml"), "kernels = [\"k\"]\n");
    std::fs::create_dir_all(dir.join("sub/deeper")).expect("mkdir");
    let found = fevlint_check::config::Config::find(&dir.join("sub/deeper")).expect("valid").expect("found");
    assert_eq!(found.path, dir.join("sub/fevlint.toml"));
    assert_eq!(found.kernels, [dir.join("sub/k")]);
    let top = fevlint_check::config::Config::find(&dir).expect("valid").expect("found");
    assert_eq!(top.settings().select, Some(vec!["S".to_owned()]));
}

#[test]
fn a_folder_takes_the_objects_its_config_lists_inside_it() {
    let dir = tmpdir("objects");
    write(&dir.join("scripts/a.fev"), "vfs_read(int a)\n");
    // Not a BPF object: reading it is an error naming it, so the run shows it was taken.
    write(&dir.join("build/tool.o"), "\x7fELF not really");
    write(&dir.join("fevlint.toml"), "objects = [\"build/tool.o\"]\n");
    let out = fevlint(&dir, &["check", "."]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tool.o") && err.contains("not a BPF object"), "{err}");
    // A folder that does not hold it does not take it.
    let out = fevlint(&dir, &["check", "scripts"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
