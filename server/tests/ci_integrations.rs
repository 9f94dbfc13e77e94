//! The CI integrations run as a user's CI would run them, on `examples/`:
//! - `action.yml`'s steps (`scripts/action-check.sh`, the same script the composite action
//!   runs, with the environment it sets): SARIF written and valid, annotations, the
//!   outputs and the step summary, the gate;
//! - the pre-commit hook from `.pre-commit-hooks.yaml`, through `pre-commit try-repo`
//!   (pre-commit from the test venv, `scripts/install-test-deps.sh`) in a fresh git
//!   repository holding the examples.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const KERNEL: &str = "fixtures/kernels/6.12.117+deb12-amd64";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

fn venv_bin(name: &str) -> PathBuf {
    let venv = std::env::var_os("FEVLINT_TEST_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/fevlint-test-deps/venv")
    });
    let bin = venv.join("bin").join(name);
    if !bin.is_file() {
        panic!("{} is missing: run scripts/install-test-deps.sh", bin.display());
    }
    bin
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

fn copy_examples(to: &Path) {
    std::fs::create_dir_all(to.join("examples")).expect("mkdir");
    for e in std::fs::read_dir(root().join("examples")).expect("examples") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "fev") {
            std::fs::copy(&p, to.join("examples").join(p.file_name().expect("name"))).expect("copy");
        }
    }
}

/// The CLI's own counts for the same check.
fn cli_counts(dir: &Path, args: &[&str]) -> (usize, usize) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).current_dir(dir).output().expect("fevlint");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let ds = doc["diagnostics"].as_array().expect("diagnostics");
    let count = |s: &str| ds.iter().filter(|d| d["severity"] == s).count();
    (count("error"), count("warning"))
}

#[test]
fn action_yml_declares_what_its_steps_use() {
    if !fevlint_testkit::real_tools("the test venv's Python (PyYAML)") {
        return;
    }
    // YAML parsed by PyYAML (pre-commit's dependency) into JSON.
    let out = Command::new(venv_bin("python"))
        .args(["-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))"])
        .arg(root().join("action.yml"))
        .output()
        .expect("python");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let action: Value = serde_json::from_slice(&out.stdout).expect("action.yml as JSON");
    assert_eq!(action["runs"]["using"], "composite");
    let inputs = action["inputs"].as_object().expect("inputs");
    let text = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    for used in text.split("inputs.").skip(1) {
        let name: String = used.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect();
        assert!(inputs.contains_key(&name), "action.yml uses inputs.{name}, which it does not declare");
    }
    let steps = action["runs"]["steps"].as_array().expect("steps");
    for step in steps {
        if let Some(run) = step["run"].as_str() {
            for script in run.split('"').filter(|s| s.contains("/scripts/")) {
                let rel = script.split("/scripts/").nth(1).expect("script");
                assert!(root().join("scripts").join(rel).is_file(), "step runs scripts/{rel}, which does not exist");
            }
            assert!(step["shell"] == "bash", "composite run steps need a shell: {step}");
        }
    }
    assert!(steps
        .iter()
        .any(|s| s["uses"].as_str().is_some_and(|u| u.starts_with("github/codeql-action/upload-sarif@"))));
}

#[test]
fn action_check_script_on_the_examples() {
    if !fevlint_testkit::real_tools("the test venv's Python (jsonschema)") {
        return;
    }
    let dir = fresh_dir("action-check");
    copy_examples(&dir);
    let output = dir.join("github_output");
    let summary = dir.join("step_summary");
    std::fs::write(&output, "").expect("output file");
    std::fs::write(&summary, "").expect("summary file");
    let run = Command::new("bash")
        .arg(root().join("scripts/action-check.sh"))
        .current_dir(&dir)
        .env("FEVLINT", env!("CARGO_BIN_EXE_fevlint"))
        .env("FEVLINT_PATHS", "examples")
        .env("FEVLINT_KERNELS", format!("\n  {}  \n", root().join(KERNEL).display()))
        .env("FEVLINT_SARIF", "reports/fevlint.sarif")
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .output()
        .expect("action-check.sh");
    let log = format!("{}{}", String::from_utf8_lossy(&run.stdout), String::from_utf8_lossy(&run.stderr));
    assert!(run.status.success(), "the check step must not fail before the upload:\n{log}");

    let (errors, warnings) = cli_counts(
        &dir,
        &["check", "--format", "json", "--kernel", &root().join(KERNEL).to_string_lossy(), "examples"],
    );
    assert!(errors > 0 && warnings > 0);
    let outputs = std::fs::read_to_string(&output).expect("outputs");
    assert_eq!(
        outputs,
        format!("exit-code=1\nerrors={errors}\nwarnings={warnings}\nsarif-file=reports/fevlint.sarif\n"),
        "{log}"
    );
    let annotations = log
        .lines()
        .filter(|l| {
            l.starts_with("::error file=examples/spec.fev,") || l.starts_with("::warning file=examples/spec.fev,")
        })
        .count();
    assert_eq!(annotations, errors + warnings, "{log}");
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reports/fevlint.sarif")).expect("sarif"))
            .expect("sarif json");
    assert_eq!(sarif["runs"][0]["results"].as_array().map(Vec::len), Some(errors + warnings));
    assert_eq!(
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "examples/spec.fev"
    );
    let validate = Command::new(venv_bin("python"))
        .arg(root().join("tests/schemas/validate.py"))
        .arg(root().join("docs/schemas/sarif-2.1.0-rtm.5.json"))
        .arg(dir.join("reports/fevlint.sarif"))
        .output()
        .expect("validate");
    assert!(validate.status.success(), "{}", String::from_utf8_lossy(&validate.stdout));
    let summary = std::fs::read_to_string(&summary).expect("summary");
    assert!(summary.starts_with(&format!("### fevlint: {errors} errors, {warnings} warnings")), "{summary}");

    // The gate step, as action.yml runs it after the upload.
    let gate = |fail_on: &str, exit: &str, warnings: &str| {
        Command::new("bash")
            .arg(root().join("scripts/action-check.sh"))
            .arg("--gate")
            .env("FEVLINT_FAIL_ON", fail_on)
            .env("FEVLINT_EXIT", exit)
            .env("FEVLINT_ERRORS", "0")
            .env("FEVLINT_WARNINGS", warnings)
            .status()
            .expect("gate")
            .code()
    };
    assert_eq!(gate("error", "1", "0"), Some(1));
    assert_eq!(gate("never", "1", "0"), Some(0));
    assert_eq!(gate("error", "0", "3"), Some(0));
    assert_eq!(gate("warning", "0", "3"), Some(1));
    assert_eq!(gate("sometimes", "0", "0"), Some(2));

    // A script that cannot be read is exit status 2 and fails the step at once.
    let bad = Command::new("bash")
        .arg(root().join("scripts/action-check.sh"))
        .current_dir(&dir)
        .env("FEVLINT", env!("CARGO_BIN_EXE_fevlint"))
        .env("FEVLINT_PATHS", "no-such-dir")
        .env("GITHUB_OUTPUT", &output)
        .output()
        .expect("action-check.sh");
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn action_install_script_modes() {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_fevlint")).parent().expect("bin dir").to_owned();
    let install = |version: &str, path: &str| {
        Command::new("bash")
            .arg(root().join("scripts/action-install.sh"))
            .env("FEVLINT_VERSION", version)
            .env("PATH", path)
            .env_remove("GITHUB_PATH")
            .output()
            .expect("action-install.sh")
    };
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let out = install("installed", &path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("fevlint "), "prints the version");
    let out = install("installed", "/usr/bin:/bin");
    assert_eq!(out.status.code(), Some(2), "no fevlint on PATH");
    let out = install("1.2.3", &path);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stdout).contains("::error::unknown version '1.2.3'"));
}

#[test]
fn pre_commit_hook_on_the_examples() {
    if !fevlint_testkit::real_tools("pre-commit (the test venv)") {
        return;
    }
    let dir = fresh_dir("pre-commit");
    let repo = dir.join("repo");
    copy_examples(&repo);
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(&repo)
            .output()
            .expect("git");
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-qm", "examples"]);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_fevlint")).parent().expect("bin dir").to_owned();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let hook = |files: &[&str], args: &[&str]| {
        // try-repo runs the hooks of a repository (here: this checkout, committed or not)
        // exactly as a .pre-commit-config.yaml pointing at it would.
        let out = Command::new(venv_bin("pre-commit"))
            .arg("try-repo")
            .arg(root())
            .arg("fevlint")
            .arg("--files")
            .args(files)
            .args(args)
            .current_dir(&repo)
            .env("PATH", &path)
            .env("PRE_COMMIT_HOME", dir.join("cache"))
            .env("PRE_COMMIT_COLOR", "never")
            .output()
            .expect("pre-commit");
        (out.status.code(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
    };
    // Clean scripts pass; without a kernel only the parser and name rules run.
    let (code, out) = hook(&["examples/vfs.fev", "examples/net.fev"], &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("fevlint") && out.contains("Passed"), "{out}");
    // spec.fev repeats functions: the kernel refuses a second event of the same name (N101).
    let (code, out) = hook(&["examples/spec.fev"], &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("N101[duplicate-event]") && out.contains("examples/spec.fev:34:1"), "{out}");
    // A script with a syntax error fails the hook and shows the kernel's message.
    std::fs::write(repo.join("examples/bad.fev"), "ip_rcv(x64 skb, x86 dev)\n").expect("write");
    git(&["add", "examples/bad.fev"]);
    let (code, out) = hook(&["examples/bad.fev"], &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("Failed") && out.contains("Unexpected token 'x86' for COMMA state"), "{out}");
    // Issue 21: the hook skipped `*.dynevents` (its `files` was `\.fev$`): the mainline
    // dialect is checked too, and a line the kernel rejects fails the hook.
    std::fs::write(repo.join("examples/bad.dynevents"), "p:bad vfs_read +0($arg1):x99\n").expect("write");
    git(&["add", "examples/bad.dynevents"]);
    let (code, out) = hook(&["examples/bad.dynevents"], &[]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("Failed") && out.contains("examples/bad.dynevents:1:"), "{out}");
    std::fs::copy(root().join("examples/vfs.dynevents"), repo.join("examples/good.dynevents")).expect("copy");
    git(&["add", "examples/good.dynevents"]);
    let (code, out) = hook(&["examples/good.dynevents"], &[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("Passed"), "{out}");
}
