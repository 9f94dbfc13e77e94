//! bpftrace itself as the judge, on the real kernels: Debian's bpftrace 0.17 (with every
//! library it links) runs generated scripts in a QEMU guest booted from Debian's 6.1.0-56
//! and 6.12.117 kernels (`tests/oracle/run-bpftrace.sh`), and whether each script
//! attaches (every probe and access compiled and attached) must agree with fevlint's
//! verdict on that kernel's fixture.
//!
//! - One script holds correct probes of every kind plus the cases bpftrace compiles
//!   though they read garbage (A310 `argN` past the last parameter, T412 `str()` of an
//!   integer): bpftrace attaches all of them; fevlint refuses none and warns exactly on
//!   the A310/T412 lines.
//! - Each defect class (a missing kprobe, a kfunc ftrace cannot trace, a blacklisted
//!   kprobe, `args->field` a kfunc lacks, a member a struct lacks, a misspelt tracepoint,
//!   a tracepoint under another system, `retval` of a kretfunc returning `void`) gets a script of its own, since bpftrace stops at
//!   the first failure: bpftrace refuses it, naming the same function, field, member or
//!   event, and fevlint refuses the same line.
//!
//! Cost (FEVLINT_REAL_TOOLS=1): two boots under TCG with an initramfs of about 200 MB
//! (LLVM and clang are in it), eleven scripts each, 2-14 s per script in the guest:
//! 5 min 16 s for both kernels on this 2-core machine under load (about 2.5 min each);
//! the 6.1 `.deb` (71 MB) is fetched through apt once and cached in `target/kernel-debs`.

mod bpftrace_cases;

use bpftrace_cases::{generate, kernel_dir, Case};
use fevlint_check::diagnostic::Severity;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The probe's class: the rule it must draw and the probe kind, tracepoints split into
/// a misspelt event and one under another system.
fn class(c: &Case) -> String {
    let kind = c.probe.split(':').next().unwrap_or("");
    match c.want {
        Some("K210") if kind == "tracepoint" && c.probe.contains("_zz ") => "K210 tracepoint misspelt".into(),
        Some("K210") if kind == "tracepoint" => "K210 tracepoint system".into(),
        Some(w) => format!("{w} {kind}"),
        None => format!("correct {kind}"),
    }
}

/// Each map named after its probe, so probes of one script do not share a map's types.
fn own_maps(probe: &str, i: usize) -> String {
    probe.replace("@[", &format!("@m{i}[")).replace("@ =", &format!("@m{i} ="))
}

/// What bpftrace did with one script: its exit status and output.
struct Run {
    rc: i32,
    out: Vec<String>,
}

/// Boots `image` with the scripts of `dir` and returns what each did, and the events.
fn boot(image: &Path, dir: &Path) -> (BTreeMap<String, Run>, usize) {
    let out = Command::new("bash")
        .arg(fevlint_testkit::repo().join("tests/oracle/run-bpftrace.sh"))
        .arg(image)
        .arg(dir)
        .output()
        .expect("run-bpftrace.sh");
    let tsv = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "the guest did not finish:\n{tsv}\n{}", String::from_utf8_lossy(&out.stderr));
    let mut runs: BTreeMap<String, Run> = BTreeMap::new();
    let mut events = 0;
    for line in tsv.lines() {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        match f[..] {
            ["RUN", name, rc, ..] => {
                runs.insert(name.to_owned(), Run { rc: rc.parse().unwrap_or(-1), out: Vec::new() });
            }
            ["OUT", name, text] | ["OUT", name, text, _] => {
                if let Some(r) = runs.get_mut(name) {
                    r.out.push(text.to_owned());
                }
            }
            ["EVENT", ..] => events += 1,
            _ => {}
        }
    }
    (runs, events)
}

/// What must appear in bpftrace's refusal of a defective probe: the name it is about.
fn named(c: &Case) -> String {
    let p = &c.probe;
    let inner =
        |open: &str| p.split(open).nth(1).and_then(|s| s.split([']', ')', ' ']).next()).unwrap_or("").to_owned();
    match c.want {
        Some("T410") => inner("args->"),
        Some("T411") => inner("->"),
        // bpftrace names no function: `retval` has no type (`none`).
        Some("T413") => "Invalid expression for assignment: none".to_owned(),
        Some("K210") if p.starts_with("tracepoint:") => {
            p.split(' ').next().unwrap_or("").trim_start_matches("tracepoint:").to_owned()
        }
        _ => p.split(' ').next().unwrap_or("").split(':').nth(1).unwrap_or("").to_owned(),
    }
}

fn judge(kernel: &str, image: &Path) {
    let k = fevlint_kernel::Kernel::open(&kernel_dir(kernel)).expect("fixture kernel");
    let cases = generate(kernel);
    let mut by_class: BTreeMap<String, Vec<&Case>> = BTreeMap::new();
    for c in &cases {
        by_class.entry(class(c)).or_default().push(c);
    }
    // A few of each class, spread over the list (deterministic).
    fn pick<'c>(v: &[&'c Case], n: usize) -> Vec<&'c Case> {
        let n = n.min(v.len());
        (0..n).map(|i| v[(i * 2 + 1) * v.len() / (2 * n)]).collect()
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bt-qemu-{kernel}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    const EXIT: &str = "interval:s:1 { exit(); }\n";
    // The script bpftrace must attach: correct probes and the A310/T412 cases.
    let mut accepted: Vec<&Case> = Vec::new();
    for (cls, v) in &by_class {
        let n = if cls.starts_with("correct") {
            6
        } else if cls.starts_with("A310") || cls.starts_with("T412") {
            3
        } else {
            0
        };
        accepted.extend(pick(v, n));
    }
    let text: String =
        accepted.iter().enumerate().map(|(i, c)| own_maps(&c.probe, i) + "\n").collect::<String>() + EXIT;
    std::fs::write(dir.join("accepted.bt"), &text).expect("write");
    let mut scripts: Vec<(String, &Case)> = Vec::new();
    for (cls, v) in &by_class {
        if cls.starts_with("correct") || cls.starts_with("A310") || cls.starts_with("T412") {
            continue;
        }
        for (j, c) in pick(v, 1).into_iter().enumerate() {
            let name = format!("{}-{j}.bt", cls.replace(' ', "-"));
            std::fs::write(dir.join(&name), format!("{}\n{EXIT}", c.probe)).expect("write");
            scripts.push((name, c));
        }
    }
    let (runs, events) = boot(image, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(events > 1000, "{kernel}: {events} events listed");
    let refuses = |d: &fevlint_check::diagnostic::Diagnostic| d.severity == Severity::Error || d.code == "K210";
    let mut bad = Vec::new();
    // The accepted script.
    let run = runs.get("accepted.bt").expect("accepted.bt ran");
    let attached = run.out.iter().any(|l| l.starts_with(&format!("Attaching {} probes", accepted.len() + 1)));
    if run.rc != 0 || !attached {
        bad.push(format!("{kernel}: bpftrace refused accepted.bt (rc {}):\n{}\n{text}", run.rc, run.out.join("\n")));
    }
    let diags = fevlint_check::bpftrace::check(&text, &[&k]);
    let line_of = |at: usize| text[..at].matches('\n').count();
    for d in &diags {
        let i = line_of(d.span.start);
        let want = accepted.get(i).and_then(|c| c.want);
        if refuses(d) || want != Some(d.code) {
            bad.push(format!(
                "{kernel}: accepted.bt line {}: fevlint {} {} ({want:?} expected)",
                i + 1,
                d.code,
                d.message
            ));
        }
    }
    let warned: std::collections::HashSet<usize> = diags.iter().map(|d| line_of(d.span.start)).collect();
    for (i, c) in accepted.iter().enumerate() {
        if c.want.is_some() && !warned.contains(&i) {
            bad.push(format!("{kernel}: accepted.bt line {}: fevlint says nothing, {:?} expected", i + 1, c.want));
        }
    }
    // Each defect: bpftrace refuses it, naming what fevlint names.
    for (name, c) in &scripts {
        let run = runs.get(name.as_str()).unwrap_or_else(|| panic!("{name} did not run"));
        let what = named(c);
        let says = run.out.iter().any(|l| l.contains("ERROR") && l.contains(&what));
        if run.rc == 0 || !says {
            bad.push(format!(
                "{kernel}: {name}: bpftrace rc {} without an error naming `{what}`:\n{}\n{}",
                run.rc,
                c.probe,
                run.out.join("\n")
            ));
        }
        let diags = fevlint_check::bpftrace::check(&format!("{}\n{EXIT}", c.probe), &[&k]);
        let ours: Vec<&str> = diags.iter().filter(|d| refuses(d)).map(|d| d.code).collect();
        if ours != c.want.into_iter().collect::<Vec<_>>() {
            bad.push(format!("{kernel}: {name}: fevlint {ours:?}, {:?} expected: {}", c.want, c.probe));
        }
    }
    eprintln!(
        "{kernel}: accepted.bt {} probes attached (rc {}); {} defect scripts: {}; {} disagreements",
        accepted.len(),
        run.rc,
        scripts.len(),
        scripts
            .iter()
            .map(|(n, _)| format!("{n} rc {}", runs.get(n.as_str()).map_or(-1, |r| r.rc)))
            .collect::<Vec<_>>()
            .join(", "),
        bad.len()
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn need_tools() {
    for (tool, package) in [
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("busybox", "busybox-static"),
        ("cpio", "cpio"),
        ("bpftrace", "bpftrace"),
    ] {
        fevlint_testkit::require_tool(tool, package);
    }
}

#[test]
fn bpftrace_on_debian_6_12_agrees_with_fevlint() {
    if !fevlint_testkit::real_tools("QEMU and bpftrace") {
        return;
    }
    need_tools();
    judge("6.12.117+deb12-amd64", &kernel_dir("6.12.117+deb12-amd64").join("vmlinuz"));
}

#[test]
fn bpftrace_on_debian_6_1_agrees_with_fevlint() {
    if !fevlint_testkit::real_tools("QEMU, bpftrace and apt (a Debian kernel package)") {
        return;
    }
    need_tools();
    let deb = Command::new("bash")
        .arg(fevlint_testkit::repo().join("scripts/fetch-kernel-deb.sh"))
        .arg("linux-image-6.1.0-56-amd64-unsigned=6.1.192-2")
        .output()
        .expect("fetch-kernel-deb.sh");
    assert!(deb.status.success(), "cannot fetch the 6.1 image: {}", String::from_utf8_lossy(&deb.stderr));
    judge("6.1.0-56-amd64", &PathBuf::from(String::from_utf8_lossy(&deb.stdout).trim()));
}
