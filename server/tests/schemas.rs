//! `fevlint check --format sarif` against the OASIS SARIF 2.1.0 JSON Schema, and
//! `--format json` against its own versioned schema (`docs/schemas/`), validated with
//! Python's `jsonschema` from the test venv (`scripts/install-test-deps.sh`). A damaged
//! copy of each document must fail, so the validation is known to bite.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

fn python() -> PathBuf {
    let venv = std::env::var_os("FEVLINT_TEST_VENV").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/fevlint-test-deps/venv")
    });
    let py = venv.join("bin/python");
    if !py.is_file() {
        panic!("{} is missing: run scripts/install-test-deps.sh (it installs jsonschema)", py.display());
    }
    py
}

fn fevlint(args: &[&str], stdin: &str) -> (Option<i32>, String) {
    use std::io::Write as _;
    let mut child = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run fevlint");
    child.stdin.take().expect("stdin").write_all(stdin.as_bytes()).expect("write stdin");
    let out = child.wait_with_output().expect("fevlint output");
    (out.status.code(), String::from_utf8(out.stdout).expect("utf-8 output"))
}

/// Validates `docs` (name, JSON) against `schema`; returns (success, report).
fn validate(schema: &str, docs: &[(&str, &Value)]) -> (bool, String) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("schemas-{}", schema.replace('/', "_")));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let mut cmd = Command::new(python());
    cmd.arg(root().join("tests/schemas/validate.py")).arg(root().join(schema));
    for (name, doc) in docs {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_string_pretty(doc).expect("json")).expect("write doc");
        cmd.arg(path);
    }
    let out = cmd.output().expect("run validate.py");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

const KERNEL: &str = "fixtures/kernels/6.12.117+deb12-amd64";

/// Real documents: a kernel check of every example (errors and warnings, kernel
/// properties), the kernel-less parser verdict on stdin, and a clean file (no results).
fn documents(format: &str) -> Vec<(&'static str, Value)> {
    let runs: [(&str, Vec<&str>, &str); 3] = [
        ("examples", vec!["check", "--format", format, "--kernel", KERNEL, "examples/"], ""),
        (
            "stdin",
            vec!["check", "--format", format, "-"],
            "ip_rcv(x64 skb, x86 dev)\ndo_IRQ(int counter+8=0xffffffff82354c18)\n",
        ),
        ("clean", vec!["check", "--format", format, "--kernel", KERNEL, "examples/vfs.fev"], ""),
    ];
    runs.into_iter()
        .map(|(name, args, stdin)| {
            let (code, out) = fevlint(&args, stdin);
            assert!(matches!(code, Some(0) | Some(1)), "fevlint {args:?} exited {code:?}:\n{out}");
            (name, serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}\n{out}")))
        })
        .collect()
}

#[test]
fn sarif_output_is_valid_sarif_2_1_0() {
    if !fevlint_testkit::real_tools("the test venv's Python (jsonschema)") {
        return;
    }
    let docs = documents("sarif");
    let results = |d: &Value| d["runs"][0]["results"].as_array().map_or(0, Vec::len);
    assert!(
        results(&docs[0].1) > 30 && results(&docs[1].1) == 2 && results(&docs[2].1) == 0,
        "unexpected result counts"
    );
    let refs: Vec<(&str, &Value)> = docs.iter().map(|(n, d)| (*n, d)).collect();
    let (ok, report) = validate("docs/schemas/sarif-2.1.0-rtm.5.json", &refs);
    assert!(ok && report.contains("3 passed, 0 failed"), "{report}");

    // Damaged copies fail: a result without its message, a level SARIF does not have.
    let mut no_message = docs[0].1.clone();
    no_message["runs"][0]["results"][0].as_object_mut().expect("result").remove("message");
    let mut bad_level = docs[1].1.clone();
    bad_level["runs"][0]["results"][0]["level"] = "fatal".into();
    let (ok, report) =
        validate("docs/schemas/sarif-2.1.0-rtm.5.json", &[("no-message", &no_message), ("bad-level", &bad_level)]);
    assert!(!ok && report.contains("0 passed, 2 failed"), "{report}");
}

#[test]
fn json_output_matches_its_versioned_schema() {
    if !fevlint_testkit::real_tools("the test venv's Python (jsonschema)") {
        return;
    }
    let docs = documents("json");
    for (name, d) in &docs {
        assert_eq!(d["version"], 1, "{name}: {d}");
    }
    assert!(docs[0].1["diagnostics"].as_array().is_some_and(|a| a.iter().any(|d| d["kernel"].is_string())));
    let refs: Vec<(&str, &Value)> = docs.iter().map(|(n, d)| (*n, d)).collect();
    let (ok, report) = validate("docs/schemas/check-json-v1.schema.json", &refs);
    assert!(ok && report.contains("3 passed, 0 failed"), "{report}");

    let mut damaged = docs[1].1.clone();
    damaged["diagnostics"][0]["line"] = 0.into();
    let (ok, report) = validate("docs/schemas/check-json-v1.schema.json", &[("line-0", &damaged)]);
    assert!(!ok && report.contains("0 passed, 1 failed"), "{report}");
}
