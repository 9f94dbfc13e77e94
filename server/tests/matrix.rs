//! `fevlint matrix`: per definition, on which kernels it is clean. Checked on the two
//! fixture kernels, with one row checked by hand against pahole's layouts
//! (`fixtures/kernels/*/reference/structs.pahole.txt.zst`, not fevlint's reader).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn matrix(format: &str) -> (String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["matrix", "-k", "fixtures/kernels/6.1.0-56-amd64", "-k", "fixtures/kernels/6.12.117+deb12-amd64"])
        .args(["--format", format, "examples/vfs.fev", "examples/vfs.dynevents"])
        .current_dir(root())
        .output()
        .expect("fevlint matrix");
    (String::from_utf8_lossy(&out.stdout).into_owned(), out.status.code())
}

/// `struct NAME`'s member at `offset` in a pahole dump: (member, type).
fn pahole_member(kernel: &str, name: &str, offset: u64) -> Option<(String, String)> {
    let raw =
        std::fs::read(root().join("fixtures/kernels").join(kernel).join("reference/structs.pahole.txt.zst")).ok()?;
    let text = String::from_utf8(zstd::decode_all(raw.as_slice()).ok()?).ok()?;
    let body = text.split(&format!("\nstruct {name} {{\n")).nth(1)?.split("\n};").next()?;
    body.lines().filter(|l| l.starts_with('\t') && !l.starts_with("\t\t")).find_map(|l| {
        let (decl, comment) = l.split_once("/*")?;
        let off: u64 = comment.split_whitespace().next()?.parse().ok()?;
        let decl = decl.trim().trim_end_matches(';');
        let (ty, member) = decl.rsplit_once(char::is_whitespace)?;
        (off == offset).then(|| (member.trim_start_matches('*').to_owned(), ty.trim().to_owned()))
    })
}

#[test]
fn the_matrix_says_where_each_definition_is_clean() {
    let (json, code) = matrix("json");
    assert_eq!(code, Some(1), "not clean everywhere");
    let v: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(v["version"], 1);
    assert_eq!(v["kernels"], serde_json::json!(["6.1.0-56-amd64", "6.12.117+deb12-amd64"]));
    let rows = v["definitions"].as_array().expect("rows");
    assert_eq!(rows.len(), 15 + 5, "every definition of both files");
    // vfs.fev:12 reads the dentry name through `+72`: on 6.12 that is `f_path.dentry`,
    // on 6.1 `f_pos_lock`, a struct mutex, not a pointer (pahole says so): T405 there.
    assert_eq!(pahole_member("6.12.117+deb12-amd64", "file", 72), None, "72 is inside f_path on 6.12");
    assert_eq!(pahole_member("6.12.117+deb12-amd64", "file", 64).map(|m| m.0), Some("f_path".to_owned()));
    assert_eq!(pahole_member("6.1.0-56-amd64", "file", 72), Some(("f_pos_lock".to_owned(), "struct mutex".to_owned())));
    let row = rows.iter().find(|r| r["file"] == "examples/vfs.fev" && r["line"] == 12).expect("vfs.fev:12");
    assert_eq!(row["cells"][1], serde_json::json!([]), "clean on 6.12: {row:#}");
    let on61: Vec<&str> = row["cells"][0].as_array().into_iter().flatten().filter_map(|f| f["code"].as_str()).collect();
    assert_eq!(on61, ["T405"], "{row:#}");
    // The fprobe line: 6.1 has no fprobe events.
    let f =
        rows.iter().find(|r| r["text"].as_str().is_some_and(|t| t.starts_with("f:vfs/read_names"))).expect("f: row");
    assert_eq!(f["cells"][0][0]["code"], "S001");
    assert_eq!(f["cells"][1], serde_json::json!([]));

    let (text, _) = matrix("human");
    assert!(text.contains("examples/vfs.fev:12: clean on 1/2"), "{text}");
    assert!(text.contains("    T405: 6.1.0-56-amd64 (1)"), "{text}");
    assert!(text.ends_with("20 definitions on 2 kernels: 12 clean on every kernel\n"), "{text}");

    let (html, _) = matrix("html");
    assert!(html.starts_with("<!doctype html>") && html.trim_end().ends_with("</html>"));
    assert!(!html.contains("http://") && !html.contains("https://") && !html.contains("<script"), "self-contained");
    assert_eq!(html.matches("<tr><td class=\"def\"").count(), 20);
    assert!(html.contains("title=\"T405: "), "findings in the cells' titles");
}

/// A bpftrace script gives a row per probe: the Debian tool `biolatency.bt` kprobes
/// `blk_account_io_start` and `__blk_account_io_start` in one probe; 6.1.0-56 has neither
/// (K210 for each), 6.12 only the first (K210 for the second); its BEGIN/END rows are
/// clean everywhere.
#[test]
fn bpftrace_scripts_get_a_row_per_probe() {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["matrix", "-k", "fixtures/kernels/6.1.0-56-amd64", "-k", "fixtures/kernels/6.12.117+deb12-amd64"])
        .args(["--format", "json", "fixtures/bpftrace/debian-0.17-tools/biolatency.bt"])
        .current_dir(root())
        .output()
        .expect("fevlint matrix");
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let rows = v["definitions"].as_array().expect("rows");
    let row = |text: &str| rows.iter().find(|r| r["text"] == text).unwrap_or_else(|| panic!("no row {text}: {v}"));
    assert_eq!(rows.len(), 4, "{v}");
    for clean in ["BEGIN", "END"] {
        assert!(row(clean)["cells"].as_array().expect("cells").iter().all(|c| c.as_array().is_some_and(Vec::is_empty)));
    }
    let start = row("kprobe:blk_account_io_start, kprobe:__blk_account_io_start");
    assert_eq!(start["line"], 19);
    for cell in start["cells"].as_array().expect("cells") {
        assert!(cell.as_array().expect("cell").iter().all(|f| f["code"] == "K210"), "{cell}");
    }
}
