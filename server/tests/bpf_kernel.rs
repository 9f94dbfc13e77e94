//! The real kernels judge what `fevlint check` says about compiled BPF programs: Debian's
//! 6.1.0-56 (its `.deb`, fetched through apt and cached) and 6.12.117 (the fixture's
//! vmlinuz) boot under QEMU, and a static libbpf 1.1 loader (`tests/bpf/loader.c`) loads
//! each program of each object alone and attaches it (`tests/oracle/run-bpf-load.sh`).
//! Per program and kernel, fevlint's verdict (runs; or refused: by libbpf for the object,
//! by the verifier, or at attach) must be the kernel's, and the refusals must be the ones
//! fevlint names (libbpf's extern message, the verifier's `doesn't have N-th argument`);
//! `fevlint matrix` over the objects has a clean cell exactly where the kernel ran the
//! program. Before loading, the guest prints `/sys/kernel/debug/error_injection/list`
//! (what `fmod_ret` may modify besides `security_` hooks), which must be the list fevlint
//! reads from the fixture folder (its image and symbol map), or absent where fevlint finds
//! none and the config leaves `CONFIG_FUNCTION_ERROR_INJECTION` out (both Debian kernels).
//!
//! The objects: `drift.bpf.c` (CO-RE drift, a guarded read, attach points that come and
//! go), `ksym.bpf.c` and `ksym_type.bpf.c` (kfuncs, typed and typeless `__ksym`),
//! `args.bpf.c` (fentry/fexit/tp_btf arguments, one read guarded by a CO-RE check),
//! `weak.bpf.c` (`__weak` kfuncs 6.1 lacks, called under a guard and without one); and
//! the [`GENERATED`] programs of the libbpf judge's generator (`crates/bpf/tests/gen/`,
//! without direct loads, which a kprobe's verifier refuses whatever CO-RE says): 6.1's
//! member chains, flavours, type and enum relocations, loaded where every reachable
//! relocation resolves and refused where one is poisoned. Also `attach.bpf.c`
//! (multi-kprobe patterns, `fmod_ret` targets, a syscall trace event) and `subprog_linked.bpf.o`,
//! linked by `bpftool gen object` from `subprog.bpf.c` and `subprog_strong.bpf.c` (a
//! `__weak` subprogram replaced at link time and a subprogram nothing calls, both with a
//! CO-RE read 6.12 poisons: libbpf skips the one and never loads the other). An object
//! whose programs all run on a kernel gets no error or warning there at all (a finding
//! about a subprogram counts too).
//!
//! Cost on this machine: two guest boots with KVM (about 30 s each under load; several
//! minutes under TCG), clang and gcc builds of a few seconds; the generated programs add
//! six clang builds (about 1 s each) and well under a second of loading per boot (the
//! whole test: 93 s at load 20; 112 s at load 14 on 2026-11-27).

#[path = "../crates/bpf/tests/gen/mod.rs"]
#[allow(dead_code)] // `generate` (with direct loads) is the libbpf judge's.
mod gen;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use fevlint_testkit::{repo, run};

fn fixture(name: &str) -> PathBuf {
    fevlint_testkit::kernel_fixture(name)
}

const SOURCES: &[&str] = &["drift.bpf.c", "ksym.bpf.c", "ksym_type.bpf.c", "args.bpf.c", "weak.bpf.c", "attach.bpf.c"];

/// Objects linked from several sources by `bpftool gen object`: (object, sources).
const LINKED: &[(&str, &[&str])] = &[("subprog_linked.bpf.o", &["subprog.bpf.c", "subprog_strong.bpf.c"])];

/// Programs made by the generator: (seed, accesses, with flavours). The first two are
/// the libbpf judge's first seeds; the others, without flavours (a renamed or retyped
/// member is refused everywhere) and shorter, resolve on the 6.1 they were built for.
const GENERATED: [(u64, usize, bool); 6] =
    [(1, 60, true), (2, 60, true), (5, 12, false), (6, 12, false), (7, 12, false), (8, 12, false)];

/// Compiles the objects (against a `vmlinux.h` of 6.1) and the static loader in `dir`;
/// returns the objects' names.
fn build(dir: &Path) -> Vec<String> {
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", dir);
    let bytes = std::fs::read(dir.join("6.1.0-56-amd64.btf")).expect("6.1's BTF");
    let btf = fevlint_btf::Btf::parse("6.1.0-56-amd64", bytes).expect("6.1's BTF");
    let view = fevlint_bpf::btfx::View::new(&btf);
    let mut sources: Vec<String> = SOURCES.iter().map(|s| (*s).to_owned()).collect();
    for src in SOURCES {
        fevlint_testkit::bpf::compile(dir, src);
    }
    let mut names: Vec<String> = Vec::new();
    for (obj, parts) in LINKED {
        let mut link = Command::new("bpftool");
        link.args(["gen", "object"]).arg(dir.join(obj));
        for part in *parts {
            fevlint_testkit::bpf::compile(dir, part);
            link.arg(dir.join(part.replace(".c", ".o")));
        }
        run(&mut link);
        names.push((*obj).to_owned());
    }
    for (seed, n, flavours) in GENERATED {
        // The libbpf judge's seed formula; each program named apart for the matrix.
        let options = gen::Options { type_matches: false, loads: false, flavours };
        let text = gen::generate_with(&view, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15), n, options)
            .replace("int gen(struct pt_regs", &format!("int gen{seed}(struct pt_regs"));
        let name = format!("gen{seed}.bpf.c");
        std::fs::write(dir.join(&name), text).expect("write generated program");
        fevlint_testkit::bpf::clang(dir, &name);
        sources.push(name);
    }
    run(Command::new("gcc")
        .current_dir(dir)
        .arg("-O2")
        .arg("-static")
        .arg(repo().join("server/tests/bpf/loader.c"))
        .args(["-o", "loader", "-lbpf", "-lelf", "-lz"]));
    // The parts of a linked object are not loaded on their own.
    for (_, parts) in LINKED {
        for part in *parts {
            std::fs::remove_file(dir.join(part.replace(".c", ".o"))).expect("remove a linked part");
        }
    }
    names.extend(sources.iter().map(|s| s.replace(".c", ".o")));
    names
}

/// What happens to one program on one kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Verdict {
    Runs,
    /// Refused, and what says why (libbpf's or the verifier's words, or fevlint's rule).
    Refused(String),
}

/// The kernel's verdicts: (object, program) -> verdict, from the loader's PROG lines;
/// and its error-injection list (`None`: /sys/kernel/debug/error_injection/list absent).
#[allow(clippy::type_complexity)]
fn boot(image: &Path, dir: &Path) -> (BTreeMap<(String, String), Verdict>, Option<BTreeSet<String>>) {
    let out = Command::new("bash")
        .arg(repo().join("tests/oracle/run-bpf-load.sh"))
        .arg(image)
        .arg(dir)
        .output()
        .expect("run-bpf-load.sh");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "guest did not finish:\n{text}\n{}", String::from_utf8_lossy(&out.stderr));
    let mut verdicts = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("PROG\t")) {
        let f: Vec<&str> = line.splitn(7, '\t').collect();
        assert_eq!(f.len(), 7, "{line}");
        let (load, attach) = (f[4].parse::<i32>().expect("errno"), f[5].parse::<i32>().expect("errno"));
        let v = if load == 0 && attach == 0 {
            Verdict::Runs
        } else if load != 0 {
            Verdict::Refused(format!("load {load}: {}", f[6]))
        } else {
            Verdict::Refused(format!("attach {attach}: {}", f[6]))
        };
        verdicts.insert((f[1].to_owned(), f[2].to_owned()), v);
    }
    assert!(!verdicts.is_empty(), "no PROG lines:\n{text}");
    assert!(text.lines().any(|l| l == "DEBUGFS"), "debugfs not mounted in the guest:\n{text}");
    let eil = (!text.lines().any(|l| l == "EIL-ABSENT")).then(|| {
        text.lines()
            .filter_map(|l| l.strip_prefix("EIL\t"))
            .filter_map(|l| l.split(['\t', ' ']).next())
            .map(str::to_owned)
            .collect()
    });
    (verdicts, eil)
}

/// fevlint's verdicts on kernel `k` (index among the kernels checked), and per object
/// every error or warning it has there (whatever program, or subprogram, it is about).
#[allow(clippy::type_complexity)]
fn fevlint_verdicts(
    dir: &Path,
    names: &[String],
    kernels: &[fevlint_kernel::Kernel],
    k: usize,
) -> (BTreeMap<(String, String), Verdict>, BTreeMap<String, Vec<String>>) {
    let objects: Vec<fevlint_bpf::BpfObject> = names
        .iter()
        .map(|name| {
            fevlint_bpf::BpfObject::parse(name.clone(), std::fs::read(dir.join(name)).expect("object")).expect("reads")
        })
        .collect();
    let bk: Vec<_> = kernels.iter().map(fevlint_check::bpf::BpfKernel::new).collect();
    let found = fevlint_check::analysis::check_objects(&objects, &bk, &|_| true);
    let mut out = BTreeMap::new();
    let mut any = BTreeMap::new();
    for (object, findings) in objects.iter().zip(found) {
        // Information (B602, what the kernel's files cannot decide) is no refusal.
        let findings: Vec<_> = findings
            .into_iter()
            .filter(|f| f.diagnostic.kernel.as_deref() == Some(kernels[k].name.as_str()))
            .filter(|f| f.diagnostic.severity != fevlint_check::diagnostic::Severity::Info)
            .collect();
        any.insert(
            object.name.clone(),
            findings
                .iter()
                .map(|f| format!("{} {:?}: {}", f.diagnostic.code, f.program, f.diagnostic.message))
                .collect(),
        );
        for p in object.programs.iter().filter(|p| p.def.is_some()) {
            let refusals: Vec<String> = findings
                .iter()
                .filter(|f| f.program.is_none() || f.program.as_deref() == Some(p.name.as_str()))
                .filter(|f| matches!(f.diagnostic.code, "B601" | "B603" | "B604" | "B611" | "B612" | "B613"))
                .map(|f| format!("{} {} {}", f.diagnostic.code, f.diagnostic.message, f.diagnostic.notes.join(" / ")))
                .collect();
            let v = if refusals.is_empty() { Verdict::Runs } else { Verdict::Refused(refusals.join("\n")) };
            out.insert((object.name.clone(), p.name.clone()), v);
        }
    }
    (out, any)
}

/// Every program's verdict on `kernel` agrees; the refusals fevlint explains are the ones
/// the kernel (or libbpf in it) gave. Returns (programs, refused).
fn agree(
    kernel: &str,
    image: &Path,
    dir: &Path,
    names: &[String],
    kernels: &[fevlint_kernel::Kernel],
    k: usize,
) -> (usize, usize, BTreeMap<(String, String), Verdict>) {
    let (real, eil) = boot(image, dir);
    // The error-injection list `fmod_ret` needs: the kernel's against fevlint's (from the
    // folder's image and symbol map; none where the config leaves it out).
    let theirs = &kernels[k];
    let ours_eil: Option<BTreeSet<String>> =
        theirs.error_injection().map(|l| l.value.iter().map(str::to_owned).collect());
    assert_eq!(eil, ours_eil, "{kernel}: the kernel's error-injection list against fevlint's");
    if eil.is_none() {
        let config = &theirs.config().expect("config").value;
        assert!(!config.is_enabled("FUNCTION_ERROR_INJECTION"), "{kernel}: no list, yet the config has one");
    }
    let (ours, any) = fevlint_verdicts(dir, names, kernels, k);
    // An object the kernel runs whole: nothing fevlint says about it there may be an error.
    for (object, said) in &any {
        let runs = real.iter().filter(|((o, _), _)| o == object).all(|(_, v)| *v == Verdict::Runs);
        assert!(!runs || said.is_empty(), "{kernel}: every program of {object} runs, yet fevlint says {said:?}");
    }
    let mut bad = Vec::new();
    let mut refused = 0;
    for (key, theirs) in &real {
        let Some(mine) = ours.get(key) else {
            bad.push(format!("{key:?}: the kernel ran it, fevlint does not know it"));
            continue;
        };
        match (theirs, mine) {
            (Verdict::Runs, Verdict::Runs) => {}
            (Verdict::Refused(why), Verdict::Refused(said)) => {
                refused += 1;
                // The reason fevlint gives is the kernel's.
                let consistent = if said.contains("B612 weak kfunc") {
                    // An unresolved weak kfunc: libbpf leaves `call #0`.
                    why.contains("call #0")
                } else if said.contains("B612") {
                    why.contains("extern")
                } else if said.contains("is not modifiable") {
                    why.contains("is not modifiable")
                } else if said.contains("CONFIG_FPROBE") {
                    why.contains("attach -95")
                } else if said.contains("(libbpf: `-ENOENT`)") {
                    why.contains("attach -2")
                } else if let Some(at) = said.find("verifier: ") {
                    // B613 quotes the verifier's own message.
                    let quoted = said[at + 10..].split(" / ").next().unwrap_or_default();
                    why.contains(quoted)
                } else if said.contains("B601") || said.contains("B604") {
                    why.contains("invalid func unknown#195896080")
                        || why.contains("CO-RE relocation")
                        || why.contains("relo #")
                } else {
                    true
                };
                if !consistent {
                    bad.push(format!("{key:?}: refused for another reason:\n  kernel: {why}\n  fevlint: {said}"));
                }
            }
            _ => bad.push(format!("{key:?}:\n  kernel: {theirs:?}\n  fevlint: {mine:?}")),
        }
    }
    assert_eq!(real.len(), ours.len(), "programs: kernel {:?}\nfevlint {:?}", real.keys(), ours.keys());
    let generated = real.iter().filter(|((o, _), _)| o.starts_with("gen")).collect::<Vec<_>>();
    let generated_refused = generated.iter().filter(|(_, v)| **v != Verdict::Runs).count();
    eprintln!(
        "{kernel}: {} programs ({} generated, {generated_refused} of them refused), {refused} refused, {} disagreements",
        real.len(),
        generated.len(),
        bad.len()
    );
    assert_eq!(generated.len(), GENERATED.len(), "the generated programs ran in the guest");
    assert!(bad.is_empty(), "{kernel}:\n{}", bad.join("\n"));
    (real.len(), refused, real)
}

/// `fevlint matrix` over the objects: per program and kernel, a clean cell exactly where
/// the kernel ran the program.
fn matrix_agrees(dir: &Path, objects: &[String], real: &[BTreeMap<(String, String), Verdict>]) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .current_dir(dir)
        .args(["matrix", "--format", "json", "-k"])
        .arg(fixture("6.1.0-56-amd64"))
        .arg("-k")
        .arg(fixture("6.12.117+deb12-amd64"))
        .args(objects)
        .output()
        .expect("fevlint matrix");
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rows = m["definitions"].as_array().expect("rows");
    let mut seen = 0;
    for (k, verdicts) in real.iter().enumerate() {
        for ((_, program), v) in verdicts {
            let row = rows
                .iter()
                .find(|r| r["text"].as_str().is_some_and(|t| t.ends_with(&format!(") {program}"))))
                .unwrap_or_else(|| panic!("no matrix row for `{program}`: {m}"));
            let clean = row["cells"][k].as_array().is_some_and(Vec::is_empty);
            assert_eq!(clean, *v == Verdict::Runs, "matrix cell of `{program}` on kernel {k}: {row}\nkernel: {v:?}");
            seen += 1;
        }
    }
    assert_eq!(seen, 2 * rows.len(), "one row per program");
}

#[test]
fn debian_6_1_and_6_12_load_the_programs_fevlint_says_they_load() {
    if !fevlint_testkit::real_tools("QEMU, clang, gcc, libbpf-dev and bpftool") {
        return;
    }
    for (tool, package) in [
        ("qemu-system-x86_64", "qemu-system-x86"),
        ("busybox", "busybox-static"),
        ("cpio", "cpio"),
        ("clang", "clang"),
        ("gcc", "gcc"),
        ("bpftool", "bpftool"),
    ] {
        fevlint_testkit::require_tool(tool, package);
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bpf-kernel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    let names = build(&dir);
    let kernels: Vec<fevlint_kernel::Kernel> = ["6.1.0-56-amd64", "6.12.117+deb12-amd64"]
        .iter()
        .map(|k| fevlint_kernel::Kernel::open(&fixture(k)).expect("fixture"))
        .collect();
    let deb = run(Command::new("bash")
        .arg(repo().join("scripts/fetch-kernel-deb.sh"))
        .arg("linux-image-6.1.0-56-amd64-unsigned=6.1.192-2"));
    let deb = PathBuf::from(String::from_utf8_lossy(&deb.stdout).trim());
    let (n61, r61, v61) = agree("6.1.0-56-amd64", &deb, &dir, &names, &kernels, 0);
    let vmlinuz = fixture("6.12.117+deb12-amd64").join("vmlinuz");
    let (n612, r612, v612) = agree("6.12.117+deb12-amd64", &vmlinuz, &dir, &names, &kernels, 1);
    // The generated programs met both verdicts.
    let generated: Vec<&Verdict> =
        v61.iter().chain(&v612).filter(|((o, _), _)| o.starts_with("gen")).map(|(_, v)| v).collect();
    assert!(
        generated.contains(&&Verdict::Runs) && generated.iter().any(|v| **v != Verdict::Runs),
        "generated: {generated:?}"
    );
    matrix_agrees(&dir, &names, &[v61, v612]);
    // Both kinds of verdict were exercised on both kernels.
    assert!(r61 > 0 && r61 < n61 && r612 > 0 && r612 < n612, "6.1 {r61}/{n61}, 6.12 {r612}/{n612}");
    let _ = std::fs::remove_dir_all(&dir);
}
