//! The VS Code extension (`editors/vscode/`): it compiles with `tsc`, packages offline into
//! a `.vsix` with `@vscode/vsce`, and in a real VS Code workbench (code-server 4.139.1 =
//! VS Code 1.139.1, in Debian's headless Chromium driven by Playwright:
//! `tests/editors/vscode/run-e2e.sh`) shows on `examples/spec.fev` against the Debian 6.12
//! fixture what `fevlint check` finds: the same diagnostics, squiggles, the Problems count
//! in the status bar, the kernel's name in the status bar, a hover (API and widget), and a
//! quick fix that applies; a `*.bt` script's kernel diagnostic; every finding of a script
//! with more than VS Code's 1,000 per collection and document in the Problems count (the
//! extension takes them by block). Screenshots and JSON land
//! in `target/tmp/vscode-e2e/`. A second workbench run opens a `.bpf.c` whose object is
//! compiled here (`target/tmp/vscode-e2e-bpf/`).
//!
//! Everything comes from `scripts/install-test-deps.sh`; a missing piece fails the test
//! and says so. `FEVLINT_SKIP_VSCODE=1` skips the browser part (not the build) for a quick
//! local run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const KERNEL: &str = "fixtures/kernels/6.12.117+deb12-amd64";
const SCRIPT: &str = "examples/spec.fev";
/// `skb` in `ip_rcv(x64 skb, x8[6] perm_addr+16[0]+558)` (0-based line:character).
const HOVER: &str = "39:11";
/// `__vfs_read` in `__vfs_read(symbol read+40[0]+16)`: K201 with a rename fix.
const FIX: (u64, u64) = (29, 0);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

/// Runs a command to completion (or kills it after `limit`), returning (success, output).
fn run(mut cmd: Command, limit: Duration) -> (bool, String) {
    cmd.current_dir(root()).stdin(Stdio::null());
    let out_path = std::env::temp_dir().join(format!("fevlint-vscode-{}-{:?}.out", std::process::id(), Instant::now()));
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

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// `fevlint.vsix`, built once for the tests of this file ([`build_vsix_now`]).
fn build_vsix() -> PathBuf {
    static VSIX: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    VSIX.get_or_init(build_vsix_now).clone()
}

/// One code-server at a time (two workbenches on two cores time each other out).
static WORKBENCH: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Builds `fevlint.vsix` with the extension's pinned tsc and vsce, without network.
fn build_vsix_now() -> PathBuf {
    let ext = root().join("editors/vscode");
    for tool in ["tsc", "vsce"] {
        if !ext.join("node_modules/.bin").join(tool).exists() {
            panic!("editors/vscode/node_modules/.bin/{tool} is missing: run scripts/install-test-deps.sh (it runs `npm ci` there)");
        }
    }
    let vsix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fevlint.vsix");
    let _ = std::fs::remove_file(&vsix);
    // Offline: in a network namespace of its own when the machine allows (root in CI).
    let offline = Command::new("unshare").args(["-n", "true"]).status().is_ok_and(|s| s.success());
    if !offline {
        eprintln!("unshare -n is not available: building the .vsix with the network visible");
    }
    let command = |program: &str| {
        if offline {
            let mut c = Command::new("unshare");
            c.args(["-n", program]);
            c
        } else {
            Command::new(program)
        }
    };
    let mut tsc = command(ext.join("node_modules/.bin/tsc").to_str().expect("utf-8 path"));
    tsc.args(["-p", "editors/vscode"]);
    let (ok, out) = run(tsc, Duration::from_secs(300));
    assert!(ok, "tsc failed:\n{out}");
    // vsce packages the folder it runs in.
    let mut vsce = command("sh");
    vsce.arg("-c")
        .arg("cd editors/vscode && exec node_modules/.bin/vsce package --allow-missing-repository --out \"$0\"")
        .arg(&vsix);
    let (ok, out) = run(vsce, Duration::from_secs(300));
    assert!(ok, "vsce package failed:\n{out}");
    assert!(vsix.is_file(), "vsce wrote no {}:\n{out}", vsix.display());
    vsix
}

fn vsix_entries(vsix: &Path) -> Vec<String> {
    let out = Command::new("python3")
        .args(["-c", "import sys, zipfile; print('\\n'.join(zipfile.ZipFile(sys.argv[1]).namelist()))"])
        .arg(vsix)
        .output()
        .expect("python3 lists the .vsix");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn vscode_extension_builds_and_works_in_a_real_workbench() {
    if !fevlint_testkit::real_tools("Node.js, code-server and Chromium") {
        return;
    }
    let vsix = build_vsix();
    let entries = vsix_entries(&vsix);
    for want in [
        "extension/package.json",
        "extension/out/extension.js",
        "extension/out/kernels.js",
        "extension/syntaxes/fev.tmLanguage.json",
        "extension/syntaxes/dynevents.tmLanguage.json",
        "extension/syntaxes/bpftrace.tmLanguage.json",
        "extension/language-configuration.json",
        "extension/node_modules/vscode-languageclient/package.json",
    ] {
        assert!(entries.iter().any(|e| e == want), "{want} is not in the .vsix: {entries:?}");
    }
    assert!(!entries.iter().any(|e| e.starts_with("extension/src/") || e.contains("node_modules/typescript/")));

    if std::env::var_os("FEVLINT_SKIP_VSCODE").is_some_and(|v| v == "1") {
        eprintln!("FEVLINT_SKIP_VSCODE=1: the .vsix was built and checked; the code-server run is skipped");
        return;
    }

    // What the CLI finds: the workbench must show exactly this.
    let fevlint = env!("CARGO_BIN_EXE_fevlint");
    let cli = Command::new(fevlint)
        .args(["check", "--format", "json", "--kernel", KERNEL, SCRIPT])
        .current_dir(root())
        .output()
        .expect("fevlint check");
    let cli: Value = serde_json::from_slice(&cli.stdout).expect("fevlint check --format json");
    let mut want: Vec<(String, u64, u64)> = cli["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().expect("number") - 1;
            (d["code"].as_str().expect("code").to_owned(), n("line"), n("column"))
        })
        .collect();
    want.sort();
    let errors = cli["diagnostics"].as_array().into_iter().flatten().filter(|d| d["severity"] == "error").count();
    let warnings = cli["diagnostics"].as_array().into_iter().flatten().filter(|d| d["severity"] == "warning").count();
    assert!(errors > 0 && warnings > 0, "the scenario needs errors and warnings: {cli}");

    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vscode-e2e");
    let _one = WORKBENCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut cmd = Command::new("tests/editors/vscode/run-e2e.sh");
    cmd.arg(&vsix).arg(fevlint).arg(SCRIPT).arg(KERNEL).arg(HOVER).arg(format!("{}:{}", FIX.0, FIX.1)).arg(&out);
    let (ok, output) = run(cmd, Duration::from_secs(600));
    let log = std::fs::read_to_string(out.join("code-server.log")).unwrap_or_default();
    assert!(ok, "the VS Code end-to-end run failed:\n{output}\n--- code-server.log ---\n{log}");
    eprintln!("VS Code end-to-end: screenshots and reports in {}", out.display());

    // 1. The extension host: the extension is active, the file is `fev`, the diagnostics
    //    are the CLI's.
    let diag = read_json(&out.join("diagnostics.json"));
    assert_eq!(diag["languageId"], "fev", "{diag}");
    assert_eq!(diag["extensionActive"], true, "{diag}");
    let mut have: Vec<(String, u64, u64)> = diag["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            assert_eq!(d["source"], "fevlint", "{d}");
            (
                d["code"].as_str().expect("code").to_owned(),
                d["line"].as_u64().expect("line"),
                d["character"].as_u64().expect("ch"),
            )
        })
        .collect();
    have.sort();
    assert_eq!(have, want, "VS Code's diagnostics are not `fevlint check`'s");

    // 2. The screen: squiggles, the Problems count, the kernel in the status bar.
    let browser = read_json(&out.join("browser.json"));
    let screen = &browser["diagnostics"];
    assert!(screen["squiggles"].as_u64().unwrap_or(0) > 0, "no squiggles rendered: {browser}");
    assert_eq!(
        screen["problems"].as_str(),
        Some(format!("Errors: {errors}, Warnings: {warnings}").as_str()),
        "Problems count in the status bar: {browser}"
    );
    let items: Vec<&str> =
        screen["statusItems"].as_array().expect("status items").iter().filter_map(Value::as_str).collect();
    assert!(items.contains(&"6.12.117+deb12-amd64"), "no status bar item names the kernel: {items:?}");

    // 3. Hover, through the API and as the widget on screen.
    let hover = read_json(&out.join("hover.json"));
    let text = hover["hover"].to_string();
    for want in ["slot 0", "`ip_rcv`", "`rdi`", "`struct sk_buff *`"] {
        assert!(text.contains(want), "hover lacks {want}: {text}");
    }
    let widget = browser["hoverWidget"].as_str().unwrap_or_default();
    assert!(widget.contains("slot 0, register rdi of ip_rcv"), "hover widget on screen: {browser}");

    // 4. The quick fix: rename `__vfs_read` (gone in 6.12) to `vfs_read`; the error goes,
    //    the file is changed in the editor only (not saved), the Problems count follows.
    let fixed = read_json(&out.join("fixed.json"));
    assert_eq!(fixed["target"]["code"], "K201", "{fixed}");
    assert_eq!(fixed["chosen"], "Rename to `vfs_read`", "{fixed}");
    assert_eq!(fixed["applied"], true, "{fixed}");
    assert_eq!(fixed["lineAfter"], "vfs_read(symbol read+40[0]+16)", "{fixed}");
    assert_eq!(fixed["dirty"], true, "{fixed}");
    let after = fixed["diagnostics"].as_array().expect("diagnostics after the fix");
    assert!(!after.iter().any(|d| d["line"] == FIX.0 && d["code"] == "K201"), "K201 still there: {fixed}");
    let after_errors = after.iter().filter(|d| d["severity"] == "Error").count();
    let after_warnings = after.iter().filter(|d| d["severity"] == "Warning").count();
    assert_eq!(
        browser["fixed"]["problems"].as_str(),
        Some(format!("Errors: {after_errors}, Warnings: {after_warnings}").as_str()),
        "Problems count after the fix: {browser}"
    );
    assert!(after_errors < errors, "the fix removed no error: {fixed}");
    let original = std::fs::read_to_string(root().join(SCRIPT)).expect("script");
    assert!(original.contains("\n__vfs_read(symbol read+40[0]+16)\n"), "the fix touched the repository's file");

    // 5. The commands run the CLI: kernel info for the configured kernel; emit runs
    //    `fevlint emit` (its output, or its error when this fevlint lacks the command).
    let commands = read_json(&out.join("commands.json"));
    let info = commands["kernelInfo"].as_str().unwrap_or_default();
    assert!(info.contains("# exit status: 0") && info.contains("kernel 6.12.117+deb12-amd64"), "{commands}");
    let emit = commands["emit"].as_str().unwrap_or_default();
    assert!(
        emit.lines().any(|l| l.starts_with("p:") || l.starts_with("f:")) || emit.contains("# fevlint emit --kernel"),
        "{commands}"
    );

    // Dry run: `fevlint dry-run --kernel K --core CORE SCRIPT` with the `fevlint.core`
    // setting (a core that does not exist here: the command's own error is shown).
    let dry = commands["dryRun"].as_str().unwrap_or_default();
    assert!(
        dry.starts_with("# fevlint dry-run --kernel ") && dry.contains("--core ") && dry.contains("no-such.core"),
        "{commands}"
    );
    assert!(!dry.contains("# exit status: 0"), "a dry run against a missing core cannot succeed: {dry}");

    // 6. Settings reach the server, and the server restarts with the same results.
    let settings = read_json(&out.join("settings.json"));
    assert!(settings["withN101"].as_u64().unwrap_or(0) > 0, "{settings}");
    assert_eq!(settings["afterIgnore"], 0, "fevlint.ignore = [N101] did not reach the server: {settings}");
    assert!(settings["afterIgnoreTotal"].as_u64().unwrap_or(0) > 0, "{settings}");
    assert_eq!(settings["restartedSame"], true, "after fevlint.restartServer: {settings}");
    let items = browser["restarted"]["statusItems"].as_array().expect("status items after the restart");
    assert!(items.iter().any(|i| i == "6.12.117+deb12-amd64"), "kernel status after the restart: {browser}");

    // 7. A bpftrace script (`tests/editors/kernel/kernel.bt`) is the `bpftrace` language
    //    and gets `fevlint check`'s K210 at `vfs_raed` (about a second of the run).
    let bt = read_json(&out.join("bpftrace.json"));
    assert_eq!(bt["languageId"], "bpftrace", "{bt}");
    let codes: Vec<(&str, u64, u64)> = bt["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (d["code"].as_str().unwrap_or(""), d["line"].as_u64().unwrap_or(0), d["character"].as_u64().unwrap_or(0))
        })
        .collect();
    assert_eq!(codes, [("K210", 2, 7)], "diagnostics of the .bt script: {bt}");

    // 8. A `*.dynevents` file is sent to the server and gets its diagnostics.
    let mainline = read_json(&out.join("dynevents.json"));
    assert_eq!(mainline["languageId"], "dynevents", "{mainline}");
    let codes: Vec<(&str, u64, u64)> = mainline["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (d["code"].as_str().unwrap_or(""), d["line"].as_u64().unwrap_or(0), d["character"].as_u64().unwrap_or(0))
        })
        .collect();
    assert_eq!(codes, [("S001", 1, 24)], "diagnostics of the .dynevents file: {mainline}");
    assert_eq!(mainline["status"]["dialect"], "dynevents", "{mainline}");

    // 9. The status comes from the server, per document: a malformed fevlint.toml is a
    //    problem of both documents (their kernels come from `fevlint.kernels`, still
    //    loaded), and the status bar says so.
    let status = read_json(&out.join("status.json"));
    for doc in ["script", "mainline"] {
        let before = &status["before"][doc];
        assert_eq!(before["problems"], serde_json::json!([]), "{doc} before: {status}");
        assert_eq!(before["kernels"][0]["state"], "loaded", "{doc} before: {status}");
        let after = &status["after"][doc];
        let problem = &after["problems"][0];
        assert!(problem["file"].as_str().is_some_and(|f| f.ends_with("/fevlint.toml")), "{doc} after: {status}");
        assert_eq!(after["kernels"][0]["name"], "6.12.117+deb12-amd64", "{doc} after: {status}");
    }
    let text = status["after"]["text"].as_str().unwrap_or("");
    assert!(text.contains("6.12.117+deb12-amd64") && text.contains("settings"), "status bar text: {status}");
    let items = browser["status"]["statusItems"].as_array().expect("status items after the broken fevlint.toml");
    assert!(
        items.iter().any(|i| i.as_str().is_some_and(|t| t.contains("settings"))),
        "status bar on screen: {browser}"
    );

    // 10. A script with more findings than VS Code forwards to the workbench from one
    //     collection for one document (1,000, then an "N more" entry): the extension gets
    //     them by block (`fevlint/diagnosticBlocks`), a collection per block, so the Problems
    //     count on screen is every error and warning the extension holds.
    let many = read_json(&out.join("many.json"));
    assert_eq!(many["findings"], 1500, "one S001 per line: {many}");
    assert_eq!(
        browser["many"]["problems"].as_str(),
        Some(format!("Errors: {}, Warnings: {}", many["errors"], many["warnings"]).as_str()),
        "Problems count with a 1,500-line script open: {browser}\n{many}"
    );

    for png in ["workbench.png", "hover.png", "fixed.png", "dynevents.png", "status.png"] {
        let size = std::fs::metadata(out.join(png)).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "{png} missing or empty ({size} bytes)");
    }
}

/// A compiled BPF object in VS Code: a workspace whose `prog/fevlint.toml` names
/// `hover.bpf.o` (built here by clang 14 from `server/tests/bpf/hover.bpf.c` against a
/// `vmlinux.h` of 6.1) and the 6.1 and 6.12 fixture kernels, opened in code-server with
/// the `.vsix` installed as a user installs it (activated by the workspace's fevlint.toml;
/// no `fevlint.kernels` setting). The `.bpf.c` gets the object's one finding (B604, at
/// `f_version`, the member's name), the hovers through the API and on screen say what
/// each access resolves to on each kernel, one relocation each, and the extension sends
/// the server only the `*.bpf.c` under a fevlint.toml that names objects (not a
/// `.bpf.c` elsewhere, not other C). Costs about 50 s on the 2-core machine when run alone
/// (the `.vsix` build, shared with the other workbench test, clang, code-server, the debug
/// server loading two kernels), about 30 s of it this test's own.
#[test]
fn vscode_shows_a_bpf_objects_findings_and_hovers_in_its_bpf_c() {
    if !fevlint_testkit::real_tools("Node.js, code-server, Chromium, clang, bpftool and libbpf") {
        return;
    }
    // Activation: a workspace with a fevlint.toml, or a fev/dynevents/bpftrace document;
    // never C as such.
    let package = read_json(&root().join("editors/vscode/package.json"));
    let events: Vec<&str> =
        package["activationEvents"].as_array().expect("activationEvents").iter().filter_map(Value::as_str).collect();
    assert_eq!(events, ["workspaceContains:**/fevlint.toml"], "{events:?}");
    let languages: Vec<&str> = package["contributes"]["languages"]
        .as_array()
        .expect("languages")
        .iter()
        .filter_map(|l| l["id"].as_str())
        .collect();
    assert!(!languages.contains(&"c"), "the extension must not contribute (and so activate on) C: {languages:?}");

    let vsix = build_vsix();
    let ws = std::env::temp_dir().join(format!("fevlint-vscode-bpf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&ws);
    let prog = ws.join("prog");
    std::fs::create_dir_all(&prog).expect("scratch");
    std::fs::create_dir_all(ws.join("other")).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &prog);
    fevlint_testkit::bpf::compile(&prog, "hover.bpf.c");
    let kernel = |name: &str| fevlint_testkit::kernel_fixture(name).canonicalize().expect("fixture kernel");
    let config = format!(
        "kernels = [{:?}, {:?}]\nobjects = [\"hover.bpf.o\"]\n",
        kernel("6.1.0-56-amd64").display().to_string(),
        kernel("6.12.117+deb12-amd64").display().to_string()
    );
    std::fs::write(prog.join("fevlint.toml"), config).expect("fevlint.toml");
    let text = std::fs::read_to_string(prog.join("hover.bpf.c")).expect("source");
    std::fs::write(ws.join("other/plain.bpf.c"), &text).expect("copy");
    std::fs::write(prog.join("util.c"), "int util(void) { return 0; }\n").expect("util.c");
    for scratch in ["vmlinux.h", "6.1.0-56-amd64.btf"] {
        std::fs::remove_file(prog.join(scratch)).expect("built with"); // the build's, not the workspace's
    }

    // 0-based (line, column) of `name` in the line holding `needle`.
    let at = |needle: &str, name: &str| -> (u64, u64) {
        let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains(needle)).expect("needle");
        (line as u64, (l.find(needle).expect("in line") + needle.find(name).expect("name")) as u64)
    };
    let exe_file = at("exe_file);", "exe_file");
    let f_version = at("f_version)", "f_version");
    let pid = at("pid +", "pid");
    let hovers = [exe_file, f_version, pid].map(|(l, c)| format!("{l}:{}", c + 1)).join(";");

    if std::env::var_os("FEVLINT_SKIP_VSCODE").is_some_and(|v| v == "1") {
        eprintln!("FEVLINT_SKIP_VSCODE=1: the code-server run is skipped");
        return;
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("vscode-e2e-bpf");
    let _one = WORKBENCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut cmd = Command::new("tests/editors/vscode/run-e2e.sh");
    cmd.arg(&vsix).arg(env!("CARGO_BIN_EXE_fevlint")).arg(&ws).arg("-").arg(&hovers).arg("-").arg(&out);
    cmd.env("FEVLINT_E2E_MODE", "bpf")
        .env("FEVLINT_E2E_OPEN", "prog/hover.bpf.c")
        .env("FEVLINT_E2E_C_FILES", "prog/hover.bpf.c;other/plain.bpf.c;prog/util.c");
    let (ok, output) = run(cmd, Duration::from_secs(600));
    let log = std::fs::read_to_string(out.join("code-server.log")).unwrap_or_default();
    assert!(ok, "the VS Code .bpf.c run failed:\n{output}\n--- code-server.log ---\n{log}");
    eprintln!("VS Code .bpf.c end-to-end: screenshots and reports in {}", out.display());

    // The object's finding, at the member's name, in the C document.
    let diag = read_json(&out.join("diagnostics.json"));
    assert_eq!(diag["languageId"], "c", "{diag}");
    assert_eq!(diag["extensionActive"], true, "{diag}");
    let found: Vec<(&str, u64, u64, u64, u64)> = diag["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().expect("number");
            (d["code"].as_str().unwrap_or(""), n("line"), n("character"), n("endLine"), n("endCharacter"))
        })
        .collect();
    assert_eq!(found, [("B604", f_version.0, f_version.1, f_version.0, f_version.1 + 9)], "{diag}");
    let message = diag["diagnostics"][0]["message"].as_str().unwrap_or("");
    assert!(message.contains("6.12.117+deb12-amd64") && message.contains("`struct file.f_version`"), "{message}");

    // Hovers: each access alone, with each kernel's value or failure, over its name.
    let hover = read_json(&out.join("hover.json"));
    let h = |i: usize| hover["hovers"][i]["hover"].to_string();
    let range = |i: usize| hover["hovers"][i]["ranges"].clone();
    let word = |(l, c): (u64, u64), len: u64| serde_json::json!([[l, c, l, c + len]]);
    assert!(h(0).contains("struct mm_struct.exe_file") && h(0).matches("CO-RE").count() == 1, "{hover}");
    assert!(h(0).contains("6.1.0-56-amd64`: = 944") && h(0).contains("6.12.117+deb12-amd64`: = 1168"), "{hover}");
    assert_eq!(range(0), word(exe_file, 8), "{hover}");
    assert!(h(1).contains("struct file.f_version") && h(1).matches("CO-RE").count() == 1, "{hover}");
    assert!(h(1).contains("6.1.0-56-amd64`: = 184"), "{hover}");
    assert!(h(1).contains("6.12.117+deb12-amd64`: poisoned: `struct file` has no member `f_version`"), "{hover}");
    assert_eq!(range(1), word(f_version, 9), "{hover}");
    assert!(h(2).contains("struct task_struct.pid") && h(2).matches("CO-RE").count() == 1, "{hover}");
    assert!(h(2).contains("= 2416") && h(2).contains("= 2432"), "{hover}");
    assert_eq!(range(2), word(pid, 3), "{hover}");
    let browser = read_json(&out.join("browser.json"));
    let widget = browser["hoverWidget"].as_str().unwrap_or_default();
    assert!(widget.contains("mm_struct.exe_file") && widget.contains("= 1168"), "hover widget on screen: {browser}");
    assert!(browser["diagnostics"]["squiggles"].as_u64().unwrap_or(0) > 0, "no squiggle on screen: {browser}");

    // Only the .bpf.c under the fevlint.toml that names objects is sent to the server.
    let sent = &hover["sent"];
    assert!(sent["prog/hover.bpf.c"]["score"].as_u64().unwrap_or(0) > 0, "{hover}");
    assert_eq!(sent["other/plain.bpf.c"]["score"], 0, "{hover}");
    assert_eq!(sent["prog/util.c"]["score"], 0, "{hover}");
    assert!(["prog/util.c", "other/plain.bpf.c"].iter().all(|f| sent[f]["languageId"] == "c"), "{hover}");
    for png in ["workbench.png", "hover.png"] {
        let size = std::fs::metadata(out.join(png)).map(|m| m.len()).unwrap_or(0);
        assert!(size > 10_000, "{png} missing or empty ({size} bytes)");
    }
    let _ = std::fs::remove_dir_all(&ws);
}
