//! `--format sarif` and `--format github` as CI reads them: the SARIF 2.1.0 fields a
//! code-scanning service requires (checked structurally), UTF-16 columns, relative URIs;
//! GitHub workflow commands with their escaping.

use fevlint_check::rules::REGISTRY;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fevlint(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).current_dir(cwd).output().expect("run fevlint")
}

fn tmpdir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-formats-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    dir
}

fn kernel_arg() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.12.117+deb12-amd64").display().to_string()
}

fn str_of<'a>(v: &'a Value, what: &str) -> &'a str {
    v.as_str().unwrap_or_else(|| panic!("{what} is not a string: {v}"))
}

/// The 2.1.0 requirements fevlint relies on, checked on any log it writes.
fn assert_sarif_shape(log: &Value) {
    assert_eq!(
        log["$schema"],
        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    );
    assert_eq!(log["version"], "2.1.0");
    let runs = log["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run["columnKind"], "utf16CodeUnits");
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "fevlint");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    // Issue 21: no link to a placeholder host (`example.invalid`): fevlint has no public
    // home, so no `informationUri` or `helpUri` at all; the rule's doc travels in `help`.
    let log_text = log.to_string();
    assert!(!log_text.contains("example.invalid") && !log_text.contains("Uri\""), "a link: {log_text:.300}");
    let rules = driver["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), REGISTRY.len());
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules");
    for (r, rule) in rules.iter().zip(REGISTRY) {
        assert_eq!(r["id"], rule.code);
        assert_eq!(r["name"], rule.name);
        let short = str_of(&r["shortDescription"]["text"], "shortDescription");
        let full = str_of(&r["fullDescription"]["text"], "fullDescription");
        assert!(!short.is_empty() && full.starts_with(short), "{}: {short} / {full}", rule.code);
        assert!(!full.contains("##") && !full.contains("```"), "{}: {full}", rule.code);
        assert_eq!(str_of(&r["help"]["markdown"], "help"), rule.doc);
        assert_eq!(str_of(&r["help"]["text"], "help"), rule.doc);
        assert!(docs.join(format!("{}.md", rule.code)).is_file(), "{} has no doc page", rule.code);
        let level = match rule.severity.as_str() {
            "info" => "note",
            s => s,
        };
        assert_eq!(r["defaultConfiguration"]["level"], level);
    }
    for result in run["results"].as_array().expect("results") {
        let id = str_of(&result["ruleId"], "ruleId");
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], id, "ruleIndex points at the rule");
        assert!(["error", "warning", "note"].contains(&str_of(&result["level"], "level")));
        assert!(!str_of(&result["message"]["text"], "message").is_empty());
        let locations = result["locations"].as_array().expect("locations");
        assert_eq!(locations.len(), 1);
        let loc = &locations[0]["physicalLocation"];
        let uri = str_of(&loc["artifactLocation"]["uri"], "uri");
        assert!(!uri.is_empty() && !uri.contains(' ') && !uri.contains('\\'), "{uri}");
        let region = &loc["region"];
        for key in ["startLine", "startColumn", "endLine", "endColumn"] {
            assert!(region[key].as_u64().is_some_and(|n| n >= 1), "{key} in {region}");
        }
        let start = (region["startLine"].as_u64(), region["startColumn"].as_u64());
        let end = (region["endLine"].as_u64(), region["endColumn"].as_u64());
        assert!(start <= end, "{region}");
    }
}

fn sarif(dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let out = fevlint(dir, &[&["check", "--format", "sarif"], args].concat());
    let log = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    assert_sarif_shape(&log);
    (out.status.code(), log)
}

#[test]
fn sarif_with_no_findings_lists_the_rules() {
    let dir = tmpdir("clean");
    std::fs::write(dir.join("ok.fev"), "vfs_read(x64 file)\n").expect("write");
    let (status, log) = sarif(&dir, &["ok.fev"]);
    assert_eq!(status, Some(0));
    assert_eq!(log["runs"][0]["results"], serde_json::json!([]));
    let n101 =
        &log["runs"][0]["tool"]["driver"]["rules"][REGISTRY.iter().position(|r| r.code == "N101").expect("N101")];
    assert_eq!(n101["shortDescription"]["text"], "Finds a function that two definitions of the same script use.");
}

#[test]
fn sarif_results_carry_rule_level_notes_kernel_and_utf16_region() {
    let dir = tmpdir("results");
    std::fs::create_dir_all(dir.join("sub dir")).expect("mkdir");
    // 😀 is one character but two UTF-16 code units: SARIF columns count the latter.
    let script = "f(int a) # 😀 # fevlint: ignore[Q999]\nvfs_read(u32 mode+14[0])\nip_rcv(x64 skb, x86 dev)\n";
    std::fs::write(dir.join("sub dir/s.fev"), script).expect("write");
    let (status, log) = sarif(&dir, &["--kernel", &kernel_arg(), "sub dir"]);
    assert_eq!(status, Some(1));
    let results = log["runs"][0]["results"].as_array().expect("results");
    let summary: Vec<(&str, &str)> =
        results.iter().map(|r| (str_of(&r["ruleId"], "id"), str_of(&r["level"], "level"))).collect();
    assert_eq!(summary, [("K201", "error"), ("N104", "error"), ("T404", "error"), ("S001", "error")]);
    let n104 = &results[1];
    let loc = &n104["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], "sub%20dir/s.fev");
    assert_eq!(loc["region"], serde_json::json!({"startLine": 1, "startColumn": 33, "endLine": 1, "endColumn": 37}));
    // JSON counts characters: one less.
    let out = fevlint(&dir, &["check", "--format", "json", "sub dir/s.fev"]);
    let json: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        (json["diagnostics"][0]["column"].as_u64(), json["diagnostics"][0]["end_column"].as_u64()),
        (Some(32), Some(36))
    );
    // Kernel findings name the kernel; notes follow the message.
    assert_eq!(results[2]["properties"]["kernel"], "6.12.117+deb12-amd64");
    assert!(results[1]["properties"].is_null());
    let s001 = str_of(&results[3]["message"]["text"], "text");
    assert!(
        s001.starts_with("unexpected `x86` here\nkernel: Unexpected token 'x86' for COMMA state\nhelp: "),
        "{s001}"
    );
}

#[test]
fn sarif_levels_follow_the_configured_severity() {
    let dir = tmpdir("levels");
    std::fs::write(dir.join("fevlint.toml"), "[severity]\nS001 = \"info\"\n").expect("write");
    std::fs::write(dir.join("s.fev"), "f(int a) x\n").expect("write");
    let (status, log) = sarif(&dir, &["s.fev"]);
    assert_eq!(status, Some(0));
    assert_eq!(log["runs"][0]["results"][0]["level"], "note");
    // The rule's default stays in the rule list.
    let s001 = REGISTRY.iter().position(|r| r.code == "S001").expect("S001");
    assert_eq!(log["runs"][0]["tool"]["driver"]["rules"][s001]["defaultConfiguration"]["level"], "error");
}

#[test]
fn github_commands_are_escaped() {
    let dir = tmpdir("github");
    std::fs::write(dir.join("fevlint.toml"), "[severity]\nN102 = \"info\"\n").expect("write");
    std::fs::write(dir.join("50%,b:c.fev"), "ip_rcv(x64 skb, x86 dev)\nip_rcv(x64 skb | int skb[32])\ng(int a)\n")
        .expect("write");
    let out = fevlint(&dir, &["check", "--format", "github", "--kernel", &kernel_arg(), "."]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    expect_test::expect![[r#"
        ::error file=50%25%2Cb%3Ac.fev,line=1,col=17,endLine=1,endColumn=20,title=S001 syntax-error::unexpected `x86` here%0Akernel: Unexpected token 'x86' for COMMA state%0Ahelp: expected `NULL`, `unsigned` or a type: long int short char size_t u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 symbol string
        ::notice file=50%25%2Cb%3Ac.fev,line=2,col=22,endLine=2,endColumn=25,title=N102 duplicate-field::a field named `skb` already exists%0Athe first `skb` is `x64`; the event format would hold both%0Ahelp: give each field its own name
        ::warning file=50%25%2Cb%3Ac.fev,line=2,col=25,endLine=2,endColumn=29,title=T401 size-mismatch::a 4-byte field reads 3 bytes past it (over-read) (on 6.12.117+deb12-amd64)%0A`skb->pkt_type` is `__u8` (1 byte)%0Ahelp: use `u8`
        ::error file=50%25%2Cb%3Ac.fev,line=3,col=1,endLine=3,endColumn=2,title=K201 unknown-function::`g` does not exist in 6.12.117+deb12-amd64 (on 6.12.117+deb12-amd64)
    "#]]
    .assert_eq(&text);
}
