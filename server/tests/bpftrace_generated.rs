//! Generated bpftrace scripts with known verdicts, per fixture kernel: probes built from
//! the kernels' own lists and independent tools' dumps (bpftool's raw BTF dump of
//! functions and structs in `reference/`, the raw `available_filter_functions`,
//! `kprobe_blacklist` and `System.map` text), each correct or with exactly one defect.
//! fevlint must report exactly the defect's rule on each defective probe and nothing on
//! each correct one: 0 false positives, 0 misses.

use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};

fn kernel_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name)
}

fn zst(path: &Path) -> String {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut s = String::new();
    zstd::stream::read::Decoder::new(f).expect("zstd").read_to_string(&mut s).expect("read");
    s
}

/// One FUNC of bpftool's dump: name, parameter names and type ids.
struct Func {
    name: String,
    params: Vec<(String, u64)>,
}

fn funcs(dump: &str) -> Vec<Func> {
    let mut out: Vec<Func> = Vec::new();
    let mut in_proto = false;
    for line in dump.lines() {
        if let Some(rest) = line.split_once("] FUNC '") {
            let name = rest.1.split('\'').next().unwrap_or("").to_owned();
            out.push(Func { name, params: Vec::new() });
            in_proto = false;
        } else if line.contains("] FUNC_PROTO ") {
            in_proto = true;
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

struct Case {
    probe: String,
    /// The rule the defect must draw, or `None` for a correct probe.
    want: Option<&'static str>,
}

fn generate(kernel: &str) -> Vec<Case> {
    let dir = kernel_dir(kernel);
    let dump = zst(&dir.join("reference/functions.bpftool.txt.zst"));
    let abi = zst(&dir.join("reference/abi.bpftool.txt.zst"));
    let kinds = kinds(&abi);
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
            let p = &f.params[0].0;
            cases.push(Case { probe: format!("kfunc:{n} {{ @[args->{p}] = count(); }}"), want: None });
            // `str()` of a parameter bpftool shows as a plain INT.
            if let Some((q, _)) = f.params.iter().find(|(_, t)| kinds.get(t).is_some_and(|k| k == "INT")) {
                cases.push(Case { probe: format!("kfunc:{n} {{ @[str(args->{q})] = count(); }}"), want: Some("T412") });
            }
            cases.push(Case { probe: format!("kfunc:{n} {{ @[args->{p}_zz] = count(); }}"), want: Some("T410") });
            cases.push(Case { probe: format!("kretfunc:{n} {{ @ = retval; }}"), want: None });
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

fn judge(kernel: &str) -> (usize, String, Vec<String>) {
    let k = fevlint_kernel::Kernel::open(&kernel_dir(kernel)).expect("kernel");
    let cases = generate(kernel);
    // One script: each probe on its own line; findings go back to their probe by line.
    let text: String = cases.iter().map(|c| format!("{}\n", c.probe)).collect();
    let starts: Vec<usize> =
        std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).take(cases.len()).collect();
    let diags = fevlint_check::bpftrace::check(&text, &[&k]);
    let mut by_case: Vec<Vec<&'static str>> = vec![Vec::new(); cases.len()];
    for d in &diags {
        let i = starts.partition_point(|&s| s <= d.span.start) - 1;
        by_case[i].push(d.code);
    }
    let mut bad = Vec::new();
    let mut per_rule: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in &cases {
        *per_rule.entry(c.want.unwrap_or("correct")).or_default() += 1;
    }
    let defects = format!("{per_rule:?}");
    for (c, got) in cases.iter().zip(&by_case) {
        let want: Vec<&str> = c.want.into_iter().collect();
        if *got != want {
            bad.push(format!("{kernel}: {}\n  want {want:?}, got {got:?}", c.probe));
        }
    }
    for (code, n) in &per_rule {
        assert!(*n >= 20, "{kernel}: only {n} cases for {code}");
    }
    (cases.len(), defects, bad)
}

#[test]
fn generated_scripts_agree_on_debian_6_1_and_6_12() {
    let mut report = Vec::new();
    let mut bad = Vec::new();
    for kernel in ["6.1.0-56-amd64", "6.12.117+deb12-amd64"] {
        let (n, defects, b) = judge(kernel);
        assert!(n > 1000, "{kernel}: only {n} cases");
        report.push(format!("{kernel}: {n} probes {defects}, {} disagree", b.len()));
        bad.extend(b);
    }
    eprintln!("{}", report.join("\n"));
    assert!(bad.is_empty(), "{} disagree:\n{}", bad.len(), bad.iter().take(40).cloned().collect::<Vec<_>>().join("\n"));
}
