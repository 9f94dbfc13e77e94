//! For every function of a fixture kernel, `fevlint kernel fn`, the function hover and
//! `check` agree on which register (slot) holds which parameter (issue 10).
//!
//! Each function is read with a field in every slot (`f(x64 zz_slot0, …, x64 zz_slot5)`):
//! - `kernel fn --format json` lists each slot with the parameter its register holds;
//! - the hover lists each parameter with its slots and the fields that read them;
//! - `check` resolves each field to a parameter, and reports A302 exactly on the slots
//!   whose register holds none (non-variadic functions);
//! - the lock's meanings (what drift compares) name the parameter of each slot.

use fevlint_check::analysis::{check, target_for, Options};
use fevlint_check::resolve;
use fevlint_kernel::Kernel;
use fevlint_syntax::Parser;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn kernel(name: &str) -> Kernel {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name);
    Kernel::open(&dir).unwrap_or_else(|e| panic!("open {}: {e}", dir.display()))
}

/// `slots 0-1` → [0, 1]; `slot 2` → [2]; `no slot` → [].
fn parse_slots(s: &str) -> Option<Vec<u32>> {
    if s == "no slot" {
        return Some(Vec::new());
    }
    if let Some(n) = s.strip_prefix("slot ") {
        return Some(vec![n.parse().ok()?]);
    }
    let (a, b) = s.strip_prefix("slots ")?.split_once('-')?;
    Some((a.parse().ok()?..=b.parse().ok()?).collect())
}

fn agree_on(kernel_name: &str) -> (usize, Vec<String>) {
    let k = kernel(kernel_name);
    let target = target_for(&k);
    let slots = target.max_args;
    let mut parser = Parser::new();
    let names: BTreeSet<String> =
        k.types().expect("BTF").function_names().expect("function names").into_iter().collect();
    let mut bad = Vec::new();
    let mut checked = 0;
    for name in &names {
        let Ok(value) = fevlint::cli::kernel::function_value(&k, name) else { continue };
        let Some(proto) = value["prototypes"].get(0) else { continue };
        checked += 1;
        let variadic = proto["variadic"].as_bool().unwrap_or(false);
        // kernel fn: slot -> parameter index
        let by_fn: Vec<Option<u64>> = (0..slots as usize).map(|i| proto["slots"][i]["param"].as_u64()).collect();
        // kernel fn: parameter -> slots, consistent with the slot list
        for (i, p) in proto["params"].as_array().into_iter().flatten().enumerate() {
            let listed: Vec<u64> = p["slots"].as_array().into_iter().flatten().filter_map(|v| v.as_u64()).collect();
            let from_slots: Vec<u64> =
                by_fn.iter().enumerate().filter(|(_, h)| **h == Some(i as u64)).map(|(s, _)| s as u64).collect();
            if listed != from_slots {
                bad.push(format!(
                    "{name}: kernel fn lists param {i} in slots {listed:?}, its slot list says {from_slots:?}"
                ));
            }
        }
        let fields: Vec<String> = (0..slots).map(|i| format!("x64 zz_slot{i}")).collect();
        let text = format!("{name}({})", fields.join(", "));
        let parse = parser.parse(&text, target, None);
        let Some((_, parsed)) = parse.definitions().next() else {
            bad.push(format!("{name}: `{text}` does not parse"));
            continue;
        };
        // check (resolve): slot -> parameter index
        let r = match resolve::resolve(&k, parsed, target) {
            Ok(Some(r)) => r,
            other => {
                bad.push(format!("{name}: resolve gave {:?}", other.map(|o| o.is_some())));
                continue;
            }
        };
        let by_check: Vec<Option<u64>> =
            (0..slots as usize).map(|i| r.slots.get(i).cloned().flatten().map(|h| h.param as u64)).collect();
        if by_check != by_fn {
            bad.push(format!("{name}: kernel fn says {by_fn:?}, check resolves {by_check:?}"));
        }
        // The lock's meanings (and so drift): the parameter each used slot holds.
        let meaning = fevlint_check::meaning::summarize(&k, parsed, &r, target);
        let by_lock: Vec<Option<String>> = (0..slots)
            .map(|i| meaning.params.iter().find(|p| p.slot == i).map(|p| p.name.clone().unwrap_or_default()))
            .collect();
        let want_names: Vec<Option<String>> = (0..slots as usize)
            .map(|i| by_fn[i].map(|_| proto["slots"][i]["name"].as_str().map(str::to_owned).unwrap_or_default()))
            .collect();
        if by_lock != want_names {
            bad.push(format!("{name}: kernel fn slot names {want_names:?}, lock meanings {by_lock:?}"));
        }
        // check (diagnostics): A302 exactly where no parameter is held.
        let diags = check(&mut parser, text.as_bytes().to_vec(), &Options::new(target).kernels(&[&k])).1;
        let a302: Vec<bool> = (0..slots)
            .map(|i| {
                let field = format!("zz_slot{i}");
                diags.iter().any(|d| d.code == "A302" && text[d.span.start..d.span.end] == field)
            })
            .collect();
        let want: Vec<bool> = by_fn.iter().map(|h| h.is_none() && !variadic).collect();
        if a302 != want {
            bad.push(format!("{name}: A302 on slots {a302:?}, kernel fn says none held at {want:?}"));
        }
        if diags.iter().any(|d| d.code == "A301") {
            bad.push(format!("{name}: A301 on fields named after no parameter"));
        }
        // hover: parameter -> slots, and the fields that read them.
        let doc = fevlint_ide::hover_with(&parse, &text, 0, &[&k]).map(|h| h.markdown).unwrap_or_default();
        let mut by_hover: Vec<Option<u64>> = vec![None; slots as usize];
        for (index, line) in doc.lines().skip_while(|l| *l != "registers at entry:").skip(1).enumerate() {
            let index = index as u64;
            let Some(rest) = line.strip_prefix("- ") else { break };
            if rest == "(variadic)" {
                break;
            }
            let Some((head, tail)) = rest.split_once(" `") else { break };
            let Some(list) = parse_slots(head) else {
                bad.push(format!("{name}: hover line `{line}`"));
                break;
            };
            for s in &list {
                if let Some(h) = by_hover.get_mut(*s as usize) {
                    *h = Some(index);
                }
                if !tail.contains(&format!("`x64 zz_slot{s}` (slot {s})")) {
                    bad.push(format!("{name}: hover does not say field zz_slot{s} reads param {index}: `{line}`"));
                }
            }
        }
        if by_hover != by_fn {
            bad.push(format!("{name}: kernel fn says {by_fn:?}, hover says {by_hover:?}"));
        }
    }
    (checked, bad)
}

#[test]
fn kernel_fn_hover_and_check_agree_on_every_function() {
    let name = "6.12.117+deb12-amd64";
    let (checked, bad) = agree_on(name);
    assert!(checked > 40_000, "{name}: only {checked} functions with a prototype");
    assert!(
        bad.is_empty(),
        "{name}: {} of {checked} functions disagree:\n{}",
        bad.len(),
        bad.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}
