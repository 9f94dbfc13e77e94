//! `fevlint diff` against abidiff: struct sizes and member offsets that changed, as
//! abidiff 2.2 reported them for the fixture pairs. The reports are recorded in
//! `fixtures/kernels/diff-reference/` by its `record.sh` (abidiff is not needed here).

use fevlint_diff::{Filter, KernelDiff, MemberChange, TypeChange};
use fevlint_kernel::Kernel;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels")
}

/// One struct/union as abidiff's `--leaf-changes-only` report shows it.
#[derive(Debug, Default)]
struct AbiType {
    /// `Some((old, new))` for "type size changed from A to B (in bytes)".
    size: Option<(u64, u64)>,
    /// "type size hasn't changed".
    same_size: bool,
    /// Direct members: "'u32 rcv_nxt' offset changed from A to B (in bytes)".
    moved: BTreeMap<String, (u64, u64)>,
}

fn read_report(name: &str) -> String {
    let path = fixtures().join("diff-reference").join(name);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let out = zstd::decode_all(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8(out).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The member name at the end of a C declaration (`u32 rcv_nxt`, `char comm[16]`);
/// `None` for anonymous members and function pointers.
fn decl_name(decl: &str) -> Option<&str> {
    if decl.contains(['{', '(']) {
        return None;
    }
    let mut decl = decl;
    while let Some(open) = decl.strip_suffix(']').and_then(|d| d.rfind('[')) {
        decl = &decl[..open];
    }
    let start = decl.rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))? + 1;
    Some(&decl[start..]).filter(|n| !n.is_empty())
}

/// Changed types by `struct NAME`; blocks that say "details were reported earlier"
/// are left out.
fn parse(report: &str) -> BTreeMap<String, AbiType> {
    let mut out = BTreeMap::new();
    let mut current: Option<(String, AbiType)> = None;
    let flush = |cur: &mut Option<(String, AbiType)>, out: &mut BTreeMap<String, AbiType>| {
        if let Some((name, t)) = cur.take() {
            if t.size.is_some() || t.same_size {
                out.insert(name, t);
            }
        }
    };
    for line in report.lines() {
        if let Some(rest) = line.strip_prefix("  [") {
            flush(&mut current, &mut out);
            let Some(q) = rest.strip_prefix("C] '").and_then(|r| r.strip_suffix("' changed:")) else { continue };
            if q.starts_with("struct ") || q.starts_with("union ") {
                current = Some((q.to_owned(), AbiType::default()));
            }
            continue;
        }
        let Some((_, t)) = current.as_mut() else { continue };
        if let Some(r) = line.strip_prefix("    type size changed from ") {
            let nums: Vec<u64> = r.split(' ').filter_map(|w| w.parse().ok()).collect();
            t.size = Some((nums[0], nums[1]));
        } else if line == "    type size hasn't changed" {
            t.same_size = true;
        } else if let Some(r) = line.strip_prefix("      '") {
            let Some((decl, rest)) = r.split_once("' offset changed from ") else { continue };
            let nums: Vec<u64> = rest.split(' ').take(3).filter_map(|w| w.parse().ok()).collect();
            if let (Some(name), &[a, b]) = (decl_name(decl), &nums[..]) {
                t.moved.insert(name.to_owned(), (a, b));
            }
        }
    }
    flush(&mut current, &mut out);
    out
}

/// Types whose layout the BTF → C → DWARF path behind the abidiff reports did not
/// keep, from the recorded btfdiff of one kernel: every struct named in a hunk (6.12's
/// 1-byte packed enums come out of bpftool's C as 4-byte ones; `NAME___2` renames).
fn round_trip_differs(kernel: &str) -> BTreeSet<String> {
    let report = read_report(&format!("btfdiff-{kernel}.txt.zst"));
    let mut out = BTreeSet::new();
    for line in report.lines() {
        let text = match line.split_once("@@ ").and_then(|(_, r)| r.split_once("@@ ")) {
            Some((_, header)) => header,
            None if line.starts_with([' ', '+', '-']) => &line[1..],
            None => continue,
        };
        for kw in ["struct ", "union "] {
            if let Some(name) = text.strip_prefix(kw).and_then(|r| r.strip_suffix(" {")) {
                out.insert(format!("{kw}{name}"));
            }
        }
    }
    out
}

fn agree(old: &str, new: &str) {
    let report = read_report(&format!("abidiff-{old}-vs-{new}.txt.zst"));
    let inexact: BTreeSet<String> = round_trip_differs(old).into_iter().chain(round_trip_differs(new)).collect();
    let abi = parse(&report);
    let a = Kernel::open(&fixtures().join(old)).expect("fixture kernels");
    let b = Kernel::open(&fixtures().join(new)).expect("fixture kernels");
    let d: KernelDiff = fevlint_diff::diff(&a, &b, &Filter::default()).expect("fixture kernels");
    let ours: BTreeMap<&str, _> = d.types.iter().map(|t| (t.name.as_str(), t)).collect();
    // bpftool renames same-named types `NAME___2`; those and fevlint's own duplicates
    // ("the first is compared") may pair different definitions: left out.
    let dup = |name: &str| {
        name.contains("___")
            || name.contains('{')
            || inexact.contains(name)
            || report.contains(&format!("{name}___"))
            || ours.get(name).is_some_and(|t| t.changes.iter().any(|c| matches!(c, TypeChange::Duplicates { .. })))
    };
    let mut checked = 0;
    let mut offsets = 0;
    for (name, t) in abi.iter().filter(|(n, _)| !dup(n)) {
        // abidiff calls `typedef struct {...} atomic_t` 'struct atomic_t'.
        let bare = name.split_once(' ').map_or(name.as_str(), |(_, n)| n);
        let Some(ours) = ours.get(name.as_str()).or_else(|| ours.get(bare)) else {
            // abidiff counts a change of a member's type as a change of the container; fevlint
            // reports it under the member's type only (a resize or move shows in both).
            assert!(t.size.is_none() && t.moved.is_empty(), "{name}: abidiff {t:?}, fevlint: no change");
            continue;
        };
        assert_eq!(ours.size_change(), t.size, "{name}: size");
        for (member, offs) in &t.moved {
            let found = ours.members().find_map(|m| match m {
                // abidiff gives bitfields' offsets in bits even with --show-bytes.
                MemberChange::Moved { path, old_offset, new_offset, old_bit_offset, new_bit_offset }
                    if path == member =>
                {
                    let bitfield = old_bit_offset % 8 != 0 || new_bit_offset % 8 != 0;
                    Some(if bitfield { (*old_bit_offset, *new_bit_offset) } else { (*old_offset, *new_offset) })
                }
                _ => None,
            });
            assert_eq!(found, Some(*offs), "{name}.{member}: offset");
            offsets += 1;
        }
        if t.size.is_some() || !t.moved.is_empty() {
            checked += 1;
        }
    }
    // The other way round: every struct fevlint finds resized, abidiff reports changed.
    let abi_names: BTreeSet<&str> =
        report.lines().filter_map(|l| l.strip_prefix("  [C] '").and_then(|r| r.strip_suffix("' changed:"))).collect();
    let mut missing = Vec::new();
    for t in &d.types {
        let abi_name = if t.name.contains(' ') { t.name.clone() } else { format!("struct {}", t.name) };
        let union_name = format!("union {}", t.name);
        let known = abi_names.contains(abi_name.as_str()) || abi_names.contains(union_name.as_str());
        if t.size_change().is_some() && !dup(&t.name) && !known {
            missing.push(t.name.clone());
        }
    }
    assert!(missing.is_empty(), "resized in fevlint, not in abidiff: {missing:?}");
    eprintln!(
        "{old} → {new}: {checked} changed structs and {offsets} member offsets agree with abidiff \
         ({} types left out: inexact C round trip per btfdiff)",
        inexact.len()
    );
    assert!(checked >= 50, "only {checked} structs compared");
}

#[test]
fn sizes_and_offsets_agree_with_abidiff_6_1_0_47_to_56() {
    agree("6.1.0-47-amd64", "6.1.0-56-amd64");
}

#[test]
fn sizes_and_offsets_agree_with_abidiff_6_1_0_56_to_6_12() {
    agree("6.1.0-56-amd64", "6.12.117+deb12-amd64");
}

#[test]
fn decl_names() {
    assert_eq!(decl_name("u32 rcv_nxt"), Some("rcv_nxt"));
    assert_eq!(decl_name("char comm[16]"), Some("comm"));
    assert_eq!(decl_name("u32 stored_l2[131]"), Some("stored_l2"));
    assert_eq!(decl_name("u8 x[2][3]"), Some("x"));
    assert_eq!(decl_name("void* ops"), Some("ops"));
    assert_eq!(decl_name("union {int a; int b;}"), None);
}
