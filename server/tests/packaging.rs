//! Shell completions and man pages generated from the clap definition: bash really
//! completes with the script (`_fevlint` run the way bash's programmable completion runs
//! it), and the man pages render with `man` (Debian's man-db + groff).

use std::path::Path;
use std::process::Command;

fn fevlint(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).output().expect("fevlint");
    assert!(out.status.success(), "fevlint {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("utf-8")
}

/// What bash's completion offers for the words typed so far (the last one being completed).
fn bash_complete(script: &Path, words: &[&str]) -> Vec<String> {
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{}'; COMP_POINT=${{#COMP_LINE}}; _fevlint fevlint '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        words.join(" "),
        words[words.len() - 1],
        words.get(words.len().wrapping_sub(2)).copied().unwrap_or(""),
    );
    let out = Command::new("bash").args(["--norc", "-c", &program]).output().expect("bash");
    assert!(out.status.success(), "bash: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn bash_completion_completes_commands_and_options() {
    let script = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fevlint.bash");
    std::fs::write(&script, fevlint(&["completions", "bash"])).expect("write completion script");
    let commands = bash_complete(&script, &["fevlint", "c"]);
    assert!(commands.contains(&"check".to_owned()) && commands.contains(&"completions".to_owned()), "{commands:?}");
    assert!(!commands.contains(&"lsp".to_owned()), "{commands:?}");
    let options = bash_complete(&script, &["fevlint", "check", "--f"]);
    assert!(options.contains(&"--format".to_owned()), "{options:?}");
    let formats = bash_complete(&script, &["fevlint", "check", "--format", ""]);
    for f in ["human", "json", "sarif", "github"] {
        assert!(formats.contains(&f.to_owned()), "--format values {formats:?}");
    }
}

#[test]
fn completions_for_every_shell_name_every_command() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = fevlint(&["completions", shell]);
        for command in ["check", "kernel", "lock", "fix", "diff", "rule", "lsp", "completions", "man"] {
            assert!(script.contains(command), "{shell} completions lack {command}");
        }
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_fevlint")).args(["completions", "tcsh"]).output().expect("fevlint");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn man_pages_render() {
    let page = fevlint(&["man"]);
    assert!(page.contains(".TH fevlint 1") && page.contains(".SH SYNOPSIS"), "{page}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("man1");
    let _ = std::fs::remove_dir_all(&dir);
    fevlint(&["man", "--dir", dir.to_str().expect("utf-8 path")]);
    for name in
        ["fevlint.1", "fevlint-check.1", "fevlint-kernel.1", "fevlint-kernel-fn.1", "fevlint-fix.1", "fevlint-lsp.1"]
    {
        assert!(dir.join(name).is_file(), "{name} not written");
    }
    if !fevlint_testkit::real_tools("man (to render the pages)") {
        return;
    }
    if Command::new("man").arg("--version").output().is_err() {
        panic!("`man` is not installed (Debian man-db): the pages cannot be rendered");
    }
    let out = Command::new("man")
        .arg("-l")
        .arg(dir.join("fevlint-check.1"))
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .expect("man -l");
    // man overstrikes bold text (`N\x08N`) when writing to a pipe: keep what is seen.
    let mut text = String::new();
    for c in String::from_utf8_lossy(&out.stdout).chars() {
        if c == '\u{8}' {
            text.pop();
        } else {
            text.push(c);
        }
    }
    assert!(out.status.success(), "man -l: {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("NAME") && text.contains("--format") && text.contains("sarif"), "{text}");
}
