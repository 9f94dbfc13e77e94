//! Generated bpftrace probes with known verdicts, per fixture kernel: built from the
//! kernels' own lists and independent tools' dumps (bpftool's raw BTF dump of functions
//! and structs in `reference/`, the raw `available_filter_functions`, `kprobe_blacklist`,
//! `System.map` and `available_events` text), each correct or with exactly one defect.
//! Shared by `bpftrace_generated.rs` (fevlint's verdicts) and `bpftrace_qemu.rs`
//! (bpftrace's on the real kernels).

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

pub fn kernel_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name)
}

pub fn zst(path: &Path) -> String {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut s = String::new();
    zstd::stream::read::Decoder::new(f).expect("zstd").read_to_string(&mut s).expect("read");
    s
}

/// One FUNC of bpftool's dump: name, parameter names and type ids.
struct Func {
    name: String,
    /// The FUNC_PROTO's `ret_type_id` (0: `void`).
    ret: u64,
    params: Vec<(String, u64)>,
}

fn funcs(dump: &str) -> Vec<Func> {
    let mut out: Vec<Func> = Vec::new();
    let mut in_proto = false;
    for line in dump.lines() {
        if let Some(rest) = line.split_once("] FUNC '") {
            let name = rest.1.split('\'').next().unwrap_or("").to_owned();
            out.push(Func { name, ret: u64::MAX, params: Vec::new() });
            in_proto = false;
        } else if line.contains("] FUNC_PROTO ") {
            in_proto = true;
            let ret = line.split("ret_type_id=").nth(1).and_then(|r| r.split(' ').next()).and_then(|r| r.parse().ok());
            if let (Some(f), Some(ret)) = (out.last_mut(), ret) {
                f.ret = ret;
            }
        } else if in_proto && line.starts_with('\t') {
            let mut it = line.trim().splitn(2, ' ');
            let name = it.next().unwrap_or("").trim_matches('\'').to_owned();
            let ty = it.next().and_then(|t| t.strip_prefix("type_id=")).and_then(|t| t.parse().ok()).unwrap_or(0);
            if let Some(f) = out.last_mut() {
                f.params.push((name, ty));
            }
        }
    }
    out
}

/// `[id] KIND` of every block in bpftool's raw dump.
fn kinds(dump: &str) -> HashMap<u64, String> {
    let mut out = HashMap::new();
    for line in dump.lines() {
        let Some(rest) = line.strip_prefix('[') else { continue };
        let Some((id, rest)) = rest.split_once("] ") else { continue };
        if let (Ok(id), Some(kind)) = (id.parse(), rest.split_whitespace().next()) {
            out.insert(id, kind.to_owned());
        }
    }
    out
}

/// `[id] KIND ... type_id=N` of every block: the kind and the type it refers to.
fn refs(dump: &str) -> HashMap<u64, (String, Option<u64>)> {
    let mut out = HashMap::new();
    for line in dump.lines() {
        let Some(rest) = line.strip_prefix('[') else { continue };
        let Some((id, rest)) = rest.split_once("] ") else { continue };
        let to = rest.split(" type_id=").nth(1).and_then(|t| t.split(' ').next()).and_then(|t| t.parse().ok());
        if let (Ok(id), Some(kind)) = (id.parse(), rest.split_whitespace().next()) {
            out.insert(id, (kind.to_owned(), to));
        }
    }
    out
}

/// Whether the verifier lets a tracing program read a value of type `id` (its rule for
/// pointers: to void, an integer, a struct or a union, modifiers and typedefs looked
/// through): `Some(false)` for a pointer to anything else, `None` when the dump does not
/// hold the blocks to tell.
fn ctx_readable(refs: &HashMap<u64, (String, Option<u64>)>, id: u64) -> Option<bool> {
    let skip = |mut id: u64| -> Option<u64> {
        for _ in 0..32 {
            if id == 0 {
                return Some(0);
            }
            let (kind, to) = refs.get(&id)?;
            match kind.as_str() {
                "CONST" | "VOLATILE" | "RESTRICT" | "TYPEDEF" | "TYPE_TAG" => id = (*to)?,
                _ => return Some(id),
            }
        }
        None
    };
    let id = skip(id)?;
    if id == 0 || refs.get(&id)?.0 != "PTR" {
        return Some(true);
    }
    let target = skip(refs.get(&id)?.1?)?;
    if target == 0 {
        return Some(true);
    }
    Some(matches!(refs.get(&target)?.0.as_str(), "INT" | "STRUCT" | "UNION"))
}

/// Struct name -> its top-level named members, from bpftool's STRUCT blocks.
fn structs(dump: &str) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for line in dump.lines() {
        if let Some(rest) = line.split_once("] STRUCT '") {
            out.push((rest.1.split('\'').next().unwrap_or("").to_owned(), Vec::new()));
        } else if line.starts_with('\t') {
            let name = line.trim().split(' ').next().unwrap_or("").trim_matches('\'').to_owned();
            if let Some(s) = out.last_mut() {
                if !name.is_empty() && name != "(anon)" {
                    s.1.push(name);
                }
            }
        }
    }
    out
}

pub struct Case {
    pub probe: String,
    /// The rule the defect must draw, or `None` for a correct probe.
    pub want: Option<&'static str>,
}

pub fn generate(kernel: &str) -> Vec<Case> {
    let dir = kernel_dir(kernel);
    let dump = zst(&dir.join("reference/functions.bpftool.txt.zst"));
    let abi = zst(&dir.join("reference/abi.bpftool.txt.zst"));
    let kinds = kinds(&abi);
    let refs = refs(&abi);
    let filter = zst(&dir.join("available_filter_functions.zst"));
    let traceable: HashMap<&str, usize> =
        filter.lines().filter_map(|l| l.split_whitespace().next()).fold(HashMap::new(), |mut m, n| {
            *m.entry(n).or_default() += 1;
            m
        });
    let clone_of: HashSet<&str> = traceable.keys().filter_map(|n| n.split_once('.').map(|(b, _)| b)).collect();
    let map = zst(&dir.join("System.map.zst"));
    let mut text: HashMap<&str, usize> = HashMap::new();
    let mut all_symbols: HashSet<&str> = HashSet::new();
    let mut events: Vec<&str> = Vec::new();
    for l in map.lines() {
        let mut it = l.split_whitespace();
        let (_, kind, name) = (it.next(), it.next().unwrap_or(""), it.next().unwrap_or(""));
        all_symbols.insert(name);
        if matches!(kind, "t" | "T") {
            *text.entry(name).or_default() += 1;
        }
        if let Some(e) = name.strip_prefix("__event_") {
            if !e.starts_with("enter__") && !e.starts_with("exit__") {
                events.push(e);
            }
        }
    }
    let blacklist_text = zst(&dir.join("kprobe_blacklist.zst"));
    let blacklist: HashSet<&str> = blacklist_text.lines().filter_map(|l| l.split_whitespace().nth(1)).collect();
    let funcs = funcs(&dump);
    let mut count: HashMap<&str, usize> = HashMap::new();
    for f in &funcs {
        *count.entry(f.name.as_str()).or_default() += 1;
    }
    let mut cases = Vec::new();
    for f in &funcs {
        let n = f.name.as_str();
        // One FUNC, one ftrace site, one text symbol, not blacklisted, named parameters.
        let plain = count[n] == 1
            && traceable.get(n) == Some(&1)
            && text.get(n) == Some(&1)
            && !blacklist.contains(n)
            && !f.params.is_empty()
            && f.params.iter().all(|(p, _)| !p.is_empty() && p != "(anon)");
        if plain {
            let (p, pt) = &f.params[0];
            // The verifier's rule for what a tracing program reads (unknown: no case).
            if ctx_readable(&refs, *pt) == Some(true) {
                cases.push(Case { probe: format!("kfunc:{n} {{ @[args->{p}] = count(); }}"), want: None });
            }
            // Every parameter the verifier refuses to read.
            for (q, qt) in &f.params {
                if ctx_readable(&refs, *qt) == Some(false) {
                    cases.push(Case { probe: format!("kfunc:{n} {{ @[args->{q}] = count(); }}"), want: Some("T414") });
                }
            }
            // `str()` of a parameter bpftool shows as a plain INT.
            if let Some((q, _)) = f.params.iter().find(|(_, t)| kinds.get(t).is_some_and(|k| k == "INT")) {
                cases.push(Case { probe: format!("kfunc:{n} {{ @[str(args->{q})] = count(); }}"), want: Some("T412") });
            }
            cases.push(Case { probe: format!("kfunc:{n} {{ @[args->{p}_zz] = count(); }}"), want: Some("T410") });
            // `retval` of a function returning `void` has no value.
            let want = match (f.ret, ctx_readable(&refs, f.ret)) {
                (0, _) => Some(Some("T413")),
                (_, Some(true)) => Some(None),
                (_, Some(false)) => Some(Some("T414")),
                (_, None) => None,
            };
            if let Some(want) = want {
                cases.push(Case { probe: format!("kretfunc:{n} {{ @ = retval; }}"), want });
            }
            cases.push(Case { probe: format!("kprobe:{n}_zz_gen {{ @ = count(); }}"), want: Some("K210") });
            // argN: only where every parameter is a pointer (one register each).
            let all_pointers = f.params.iter().all(|(_, t)| kinds.get(t).is_some_and(|k| k == "PTR"));
            if all_pointers && f.params.len() < 6 {
                let last = f.params.len() - 1;
                cases.push(Case { probe: format!("kprobe:{n} {{ @[arg{last}] = count(); }}"), want: None });
                cases.push(Case {
                    probe: format!("kprobe:{n} {{ @[arg{}] = count(); }}", f.params.len()),
                    want: Some("A310"),
                });
            }
        }
        // A BTF function ftrace cannot trace (no site, no clone site): kfunc refuses it.
        if count[n] == 1 && !traceable.contains_key(n) && !clone_of.contains(n) && text.get(n) == Some(&1) {
            cases.push(Case { probe: format!("kfunc:{n} {{ @ = count(); }}"), want: Some("K211") });
        }
    }
    // kprobes on the blacklist (a text symbol of that name, once).
    let mut bl: Vec<&str> = blacklist.iter().copied().filter(|n| text.get(n) == Some(&1)).collect();
    bl.sort();
    for n in bl.iter().step_by(7) {
        cases.push(Case { probe: format!("kprobe:{n} {{ @ = count(); }}"), want: Some("K211") });
    }
    // Casts to structs and their members (bpftool's STRUCT blocks).
    let sdump = zst(&dir.join("reference/structs.bpftool.txt.zst"));
    let anchor = funcs.iter().find(|f| f.name == "vfs_read").map(|_| "vfs_read").expect("vfs_read");
    for (s, members) in structs(&sdump) {
        let Some(m) = members.first() else { continue };
        cases.push(Case {
            probe: format!("kprobe:{anchor} {{ $p = (struct {s} *)arg0; @[$p->{m}] = count(); }}"),
            want: None,
        });
        cases.push(Case {
            probe: format!("kprobe:{anchor} {{ @[((struct {s} *)arg1)->{m}_zz] = count(); }}"),
            want: Some("T411"),
        });
    }
    // Trace events with their systems (the booted kernel's `available_events`): each
    // exists; a misspelt one does not, nor one under another system.
    let listed = zst(&dir.join("available_events.zst"));
    let mut by_event: HashMap<&str, Vec<&str>> = HashMap::new();
    for l in listed.lines() {
        let (sys, e) = l.split_once(':').expect("SYSTEM:EVENT");
        by_event.entry(e).or_default().push(sys);
    }
    events.sort();
    for (i, e) in events.iter().enumerate().step_by(5) {
        let Some(systems) = by_event.get(e) else { continue };
        let sys = systems[0];
        cases.push(Case { probe: format!("tracepoint:{sys}:{e} {{ @ = count(); }}"), want: None });
        cases.push(Case { probe: format!("tracepoint:{sys}:{e}_zz {{ @ = count(); }}"), want: Some("K210") });
        // Another event's system, which has no event of this name.
        let other = by_event.get(events[(i + 1) % events.len()]).map(|s| s[0]).unwrap_or("zz");
        if !systems.contains(&other) {
            cases.push(Case { probe: format!("tracepoint:{other}:{e} {{ @ = count(); }}"), want: Some("K210") });
        }
    }
    let _ = all_symbols;
    cases
}
