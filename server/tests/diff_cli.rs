//! `fevlint diff A B` as a user runs it: human text, JSON (schema pinned), filters, and
//! names neither kernel has (exit 2 with a clear message).

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

fn kernel(name: &str) -> String {
    format!("{}/../fixtures/kernels/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn fevlint(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint")).args(args).output().expect("run fevlint");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn filtered_human_output() {
    let (old, new) = (kernel("6.1.0-56-amd64"), kernel("6.12.117+deb12-amd64"));
    let (code, out, err) = fevlint(&[
        "diff",
        &old,
        &new,
        "--function",
        "vfs_read",
        "--function",
        "__kmalloc",
        "--function",
        "PageHuge",
        "--type",
        "struct path",
        "--type",
        "struct fown_struct",
    ]);
    assert_eq!(code, 0, "{err}");
    expect_test::expect![[r#"
        6.1.0-56-amd64 → 6.12.117+deb12-amd64
        functions: 2 in both, 1 removed, 0 added, 1 with signature changes, 1 with traceability changes
        types: 2 structs/unions in both, 0 removed, 0 added, 1 changed (1 resized)

        functions:
          vfs_read: unchanged
          __kmalloc: removed (renamed to __kmalloc_noprof?)
          PageHuge:
            traceability: traceable → not traceable
            param 0 `page`: type struct page * → const struct page *
            return type int → bool

        types:
          struct path: unchanged
          struct fown_struct: size 32 → 40
            file added (struct file * at 0, 8 bytes)
            lock moved 0 → 8
            pid moved 8 → 16
            pid_type moved 16 → 24
            uid moved 20 → 28
            euid moved 24 → 32
            signum moved 28 → 36
    "#]]
    .assert_eq(&out);
}

#[test]
fn json_of_a_filtered_diff() {
    let (old, new) = (kernel("6.1.0-47-amd64"), kernel("6.1.0-56-amd64"));
    let (code, out, err) = fevlint(&[
        "diff",
        &old,
        &new,
        "--function",
        "__bpf_trampoline_link_prog",
        "--type",
        "struct blkg_policy_data",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    expect_test::expect_file!["diff_cli.json"].assert_eq(&out);
}

/// Every object shape in the full JSON diff, by its `kind` (or its parent key): a
/// renamed or dropped field fails here.
#[test]
fn json_schema_of_the_full_diff() {
    let (old, new) = (kernel("6.1.0-56-amd64"), kernel("6.12.117+deb12-amd64"));
    let (code, out, err) = fevlint(&["diff", &old, &new, "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("fixture kernels");
    let mut shapes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    fn walk(v: &serde_json::Value, at: &str, shapes: &mut BTreeMap<String, BTreeSet<String>>) {
        match v {
            serde_json::Value::Object(m) => {
                let label = match m.get("kind").and_then(|k| k.as_str()) {
                    Some(k) => format!("{at}:{k}"),
                    None => at.to_owned(),
                };
                shapes.entry(label.clone()).or_default().extend(m.keys().cloned());
                for (k, x) in m {
                    walk(x, &format!("{at}.{k}"), shapes);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, at, shapes)),
            _ => {}
        }
    }
    walk(&v, "", &mut shapes);
    let text: String =
        shapes.iter().map(|(k, v)| format!("{k}: {}\n", v.iter().cloned().collect::<Vec<_>>().join(" "))).collect();
    expect_test::expect![[r#"
        : functions new notes old summary types
        .functions: changes name
        .functions.changes.new:not_traceable: kind
        .functions.changes.new:traceable: count kind
        .functions.changes.old:not_traceable: kind
        .functions.changes.old:traceable: count kind
        .functions.changes.param: index location name size ty
        .functions.changes.successor:alias: kind name
        .functions.changes.successor:clones: kind names
        .functions.changes.successor:renamed: kind name
        .functions.changes:added: kind predecessor
        .functions.changes:param_added: kind param
        .functions.changes:param_count: kind new old
        .functions.changes:param_location: index kind name new old
        .functions.changes:param_name: index kind new old
        .functions.changes:param_removed: kind param
        .functions.changes:param_size: index kind name new old
        .functions.changes:param_type: index kind name new old
        .functions.changes:prototypes: kind new old
        .functions.changes:removed: kind successor
        .functions.changes:return: kind new old
        .functions.changes:traceability: kind new old
        .summary: functions_added functions_compared functions_removed functions_signature_changed functions_traceability_changed types_added types_changed types_compared types_removed types_resized
        .types: changes name
        .types.changes.change.member: bit_offset bitfield offset path size ty
        .types.changes.change.new: bit_offset bitfield offset path size ty
        .types.changes.change.old: bit_offset bitfield offset path size ty
        .types.changes.change:added: kind member
        .types.changes.change:moved: kind new_bit_offset new_offset old_bit_offset old_offset path
        .types.changes.change:removed: kind member
        .types.changes.change:renamed: kind new old
        .types.changes.change:resized: kind new_bitfield new_size old_bitfield old_size path
        .types.changes.change:retyped: kind new old path
        .types.changes:added: kind size
        .types.changes:duplicates: kind new old
        .types.changes:member: change kind
        .types.changes:removed: kind size
        .types.changes:size: kind new old
    "#]]
    .assert_eq(&text);
}

#[test]
fn unknown_names_exit_2_with_a_message() {
    let (old, new) = (kernel("6.1.0-47-amd64"), kernel("6.1.0-56-amd64"));
    let (code, out, err) = fevlint(&["diff", &old, &new, "--function", "no_such_function_x"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(err.trim(), "error: no function `no_such_function_x` in 6.1.0-47-amd64 or 6.1.0-56-amd64");
    let (code, _, err) = fevlint(&["diff", &old, &new, "--type", "struct no_such_struct_x"]);
    assert_eq!(code, 2);
    assert_eq!(
        err.trim(),
        "error: no struct, union or typedef of one `struct no_such_struct_x` in 6.1.0-47-amd64 or 6.1.0-56-amd64"
    );
    let (code, _, err) = fevlint(&["diff", &old, &new, "--type", "struct file *"]);
    assert_eq!(code, 2);
    assert!(err.contains("is not a struct or union name"), "{err}");
    let (code, _, err) = fevlint(&["diff", &old, "/no/such/kernel"]);
    assert_eq!(code, 2);
    assert!(err.contains("cannot open kernel /no/such/kernel"), "{err}");
}

#[test]
fn full_human_output_starts_with_the_summary_and_is_deterministic() {
    let (old, new) = (kernel("6.1.0-47-amd64"), kernel("6.1.0-56-amd64"));
    let (code, first, err) = fevlint(&["diff", &old, &new]);
    assert_eq!(code, 0, "{err}");
    let (_, second, _) = fevlint(&["diff", &old, &new]);
    assert_eq!(first, second);
    let head: Vec<&str> = first.lines().take(3).collect();
    expect_test::expect![[r#"
        6.1.0-47-amd64 → 6.1.0-56-amd64
        functions: 43966 in both, 80 removed, 169 added, 569 with signature changes, 0 with traceability changes
        types: 8011 structs/unions in both, 3 removed, 17 added, 229 changed (175 resized)"#]]
    .assert_eq(&head.join("\n"));
    assert!(first.contains("\n  struct tcp_sock: size 2240 → 2280\n    inet_conn resized 1400 → 1440 bytes\n    tcp_header_len moved 1400 → 1440\n"));
}

#[test]
fn a_kernel_without_types_compares_names_and_traceability_only() {
    let (old, new) = (kernel("6.1.0-50-686-pae"), kernel("6.1.0-56-amd64"));
    let (code, out, err) = fevlint(&["diff", &old, &new]);
    assert_eq!(code, 0, "{err}");
    let head: Vec<&str> = out.lines().take(4).collect();
    expect_test::expect![[r#"
        6.1.0-50-686-pae → 6.1.0-56-amd64
        functions: 33319 in both, 439 removed, 10816 added, 0 with signature changes, 58 with traceability changes
        types: 0 structs/unions in both, 0 removed, 0 added, 0 changed (0 resized)
        note: one kernel has no type information: signatures and layouts are not compared"#]]
    .assert_eq(&head.join("\n"));
}
