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
//!
//! The outside corpus ([`build_outside`]: Linux 6.12's BPF selftests' CO-RE programs and
//! cilium/ebpf's, `tests/bpf/outside/`) is loaded in the same boots, each of its 48
//! programs (30 objects) alone: on both kernels 34 are refused, 20 where a poisoned CO-RE
//! instruction is reached (the selftests' own `core_reloc_*` types, which only their
//! `btf__*` targets have; the module type `bpf_testmod_test_read_ctx`; cilium's `struct s`
//! read in a subprogram, which refuses the program that calls it), 14 because libbpf 1.1
//! knows no `socket/NAME` section; the others load, `core_kern.c`'s `tc` program too,
//! whose poisoned reads sit under a `const volatile` flag the verifier reads as 0. Socket
//! filters and `tc` programs are judged on loading alone (libbpf has no automatic attach
//! for them); no program is left out. The guest has each kernel's config in `/boot`, as a
//! Debian system does (`test_core_extern.c`'s `__kconfig` externs).
//!
//! In the same boots Debian's `bpftool prog loadall` loads each object whole (all 43:
//! every program, none attached): it loads exactly the objects where fevlint finds
//! nothing that refuses one of their programs at load time (an attach point a kprobe,
//! tracepoint or raw tracepoint lacks refuses at attach only; one of fentry, tp_btf, lsm
//! or iter at load). 28 of 43 refused on 6.1, 27 on 6.12, every one as fevlint says.
//!
//! Cost on this machine: two guest boots with KVM (about 30 s each under load; several
//! minutes under TCG), clang and gcc builds of a few seconds; the generated programs add
//! six clang builds (about 1 s each) and well under a second of loading per boot; the
//! outside corpus 27 clang builds (6.3 s at load 12) and its loading a few seconds per boot (the
//! whole test: 93 s at load 20; 112 s at load 14 on 2026-11-27; with the outside corpus
//! 81 s and 107 s at load 8-9).

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

/// The outside corpus (`tests/bpf/outside/`, its SOURCE.md): Linux 6.12's BPF selftests'
/// CO-RE programs and cilium/ebpf's CO-RE test programs, compiled here by clang 14 as the
/// libbpf judge compiles them (cilium's `relocs.c` by clang 15, which its `type_matches`
/// needs), and the four objects cilium/ebpf ships built by its own clang (`*-el.elf`).
/// Objects without programs (the selftests' `btf__core_reloc_*` target types,
/// `relocs_read_tgt`) are not built or loaded. Returns the objects' names (`sel_*`,
/// `cil_*`) and how many programs were left out because their program type cannot be
/// loaded in the guest for a reason that is neither CO-RE nor an attach point (none
/// today: socket filters and `tc` programs load; they are judged on loading alone, as
/// libbpf has no automatic attach for them).
fn build_outside(dir: &Path) -> (Vec<String>, usize) {
    let outside = repo().join("server/tests/bpf/outside");
    // The selftests include glibc's <stdint.h>, which wants the 32-bit stubs for `-target bpf`.
    std::fs::create_dir_all(dir.join("gnu")).expect("gnu dir");
    std::fs::write(dir.join("gnu/stubs-32.h"), "").expect("stubs");
    let compile = |clang: &str, src: &Path, obj: &str| {
        run(Command::new(clang)
            .args(["-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", "-w", "-I"])
            .arg(dir)
            .arg("-I/usr/include/x86_64-linux-gnu")
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(dir.join(obj)));
    };
    let mut names = Vec::new();
    let sel = outside.join("libbpf-selftests");
    let mut srcs: Vec<PathBuf> =
        std::fs::read_dir(&sel).expect("selftests").map(|e| e.expect("entry").path()).collect();
    srcs.sort();
    for src in srcs.iter().filter(|p| p.extension().is_some_and(|e| e == "c")) {
        let stem = src.file_stem().expect("stem").to_string_lossy().into_owned();
        if stem.starts_with("btf__") {
            continue; // target types for the selftests' own loader, no program
        }
        let obj = format!("sel_{stem}.o");
        compile("clang", src, &obj);
        names.push(obj);
    }
    let cil = outside.join("cilium-ebpf/btf/testdata");
    for (clang, stem) in [("clang-15", "relocs"), ("clang", "relocs_enum"), ("clang", "relocs_read")] {
        let obj = format!("cil_{stem}.o");
        compile(clang, &cil.join(format!("{stem}.c")), &obj);
        names.push(obj);
        let shipped = format!("cil_{stem}-el.o");
        std::fs::copy(cil.join(format!("{stem}-el.elf")), dir.join(&shipped)).expect("copy cilium's object");
        names.push(shipped);
    }
    // Every object has a program libbpf loads.
    for name in &names {
        let obj =
            fevlint_bpf::BpfObject::parse(name.clone(), std::fs::read(dir.join(name)).expect("object")).expect("reads");
        assert!(obj.programs.iter().any(|p| p.def.is_some() || p.section != ".text"), "{name}: no program");
    }
    (names, 0)
}

/// The programs libbpf loads but has no automatic attach for (`socket`, `tc`: the tool
/// attaches them to its own socket or qdisc): judged on loading alone.
fn load_only(dir: &Path, names: &[String]) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for name in names {
        let obj =
            fevlint_bpf::BpfObject::parse(name.clone(), std::fs::read(dir.join(name)).expect("object")).expect("reads");
        for p in &obj.programs {
            if p.def.is_some_and(|d| d.kind == fevlint_bpf::AttachKind::Other) {
                out.insert((name.clone(), p.name.clone()));
            }
        }
    }
    out
}

/// Whether an object is of the outside corpus ([`build_outside`]).
fn is_outside(object: &str) -> bool {
    object.starts_with("sel_") || object.starts_with("cil_")
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
fn boot(
    image: &Path,
    dir: &Path,
    load_only: &BTreeSet<(String, String)>,
) -> (BTreeMap<(String, String), Verdict>, Option<BTreeSet<String>>, BTreeMap<String, Verdict>) {
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
        let key = (f[1].to_owned(), f[2].to_owned());
        // libbpf's `bpf_program__attach()` is -EOPNOTSUPP for a section without attach.
        let attach = if load_only.contains(&key) && attach == -95 { 0 } else { attach };
        let v = if load == 0 && attach == 0 {
            Verdict::Runs
        } else if load != 0 {
            Verdict::Refused(format!("load {load}: {}", f[6]))
        } else {
            Verdict::Refused(format!("attach {attach}: {}", f[6]))
        };
        verdicts.insert(key, v);
    }
    // An object libbpf cannot open: each of its programs is refused (filled in by `agree`).
    for line in text.lines().filter(|l| l.starts_with("OPEN\t")) {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        assert_eq!(f.len(), 4, "{line}");
        verdicts.insert((f[1].to_owned(), String::new()), Verdict::Refused(format!("open {}: {}", f[2], f[3])));
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
    // `bpftool prog loadall` of each object whole.
    let mut whole = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("LOADALL\t")) {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        assert!(f.len() >= 3, "{line}");
        let v = if f[2] == "0" { Verdict::Runs } else { Verdict::Refused(f.get(3).unwrap_or(&"").to_string()) };
        whole.insert(f[1].to_owned(), v);
    }
    (verdicts, eil, whole)
}

/// fevlint's verdicts on kernel `k` (index among the kernels checked), and per object
/// every error or warning it has there (whatever program, or subprogram, it is about).
#[allow(clippy::type_complexity)]
fn fevlint_verdicts(
    dir: &Path,
    names: &[String],
    kernels: &[fevlint_kernel::Kernel],
    k: usize,
) -> (BTreeMap<(String, String), Verdict>, BTreeMap<String, Vec<String>>, BTreeMap<String, Verdict>) {
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
    let mut whole = BTreeMap::new();
    for (object, findings) in objects.iter().zip(found) {
        // Information (B602, what the kernel's files cannot decide) is no refusal.
        // A section libbpf does not recognize (B603, no kernel named) refuses on every kernel.
        let findings: Vec<_> = findings
            .into_iter()
            .filter(|f| match f.diagnostic.kernel.as_deref() {
                Some(name) => name == kernels[k].name,
                None => f.diagnostic.code == "B603",
            })
            .filter(|f| f.diagnostic.severity != fevlint_check::diagnostic::Severity::Info)
            .collect();
        any.insert(
            object.name.clone(),
            findings
                .iter()
                .map(|f| format!("{} {:?}: {}", f.diagnostic.code, f.program, f.diagnostic.message))
                .collect(),
        );
        // A program in a section libbpf 1.1 does not know is still one of its programs.
        for (i, p) in object.programs.iter().enumerate().filter(|(_, p)| p.def.is_some() || p.section != ".text") {
            // A finding about a subprogram refuses each program that calls it.
            let reached = object.reached_from(i);
            let mine = |name: &str| object.programs.iter().zip(&reached).any(|(q, r)| *r && q.name == name);
            let refusals: Vec<String> = findings
                .iter()
                .filter(|f| f.program.as_deref().is_none_or(mine))
                .filter(|f| matches!(f.diagnostic.code, "B601" | "B603" | "B604" | "B611" | "B612" | "B613"))
                .map(|f| format!("{} {} {}", f.diagnostic.code, f.diagnostic.message, f.diagnostic.notes.join(" / ")))
                .collect();
            let v = if refusals.is_empty() { Verdict::Runs } else { Verdict::Refused(refusals.join("\n")) };
            out.insert((object.name.clone(), p.name.clone()), v);
        }
        // `bpftool prog loadall`: every program loaded, none attached. What refuses a
        // program at attach only (a kprobe's, a tracepoint's or a raw tracepoint's missing
        // target) does not refuse the object; a BTF-typed target (fentry, tp_btf, lsm,
        // iter) is resolved at load.
        let loaded = object.loaded_programs();
        let at_attach_only = |f: &&fevlint_check::bpf::BpfFinding| {
            use fevlint_bpf::AttachKind as A;
            let def =
                f.program.as_deref().and_then(|n| object.programs.iter().find(|p| p.name == n)).and_then(|p| p.def);
            f.diagnostic.code == "B611"
                && def.is_some_and(|d| {
                    matches!(
                        d.kind,
                        A::Kprobe
                            | A::Kretprobe
                            | A::KprobeMulti
                            | A::Ksyscall
                            | A::Kretsyscall
                            | A::Uprobe
                            | A::Usdt
                            | A::Tracepoint
                            | A::RawTracepoint
                    )
                })
        };
        // Loaded code: entry programs (a section libbpf 1.1 does not know too) and what they call.
        let in_code = |name: &str| {
            object.programs.iter().zip(&loaded).any(|(q, l)| (*l || q.section != ".text") && q.name == name)
        };
        let refusals: Vec<String> = findings
            .iter()
            .filter(|f| f.program.as_deref().is_none_or(in_code))
            .filter(|f| matches!(f.diagnostic.code, "B601" | "B603" | "B604" | "B611" | "B612" | "B613"))
            .filter(|f| !at_attach_only(f))
            .map(|f| format!("{} {}", f.diagnostic.code, f.diagnostic.message))
            .collect();
        let v = if refusals.is_empty() { Verdict::Runs } else { Verdict::Refused(refusals.join("\n")) };
        whole.insert(object.name.clone(), v);
    }
    (out, any, whole)
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
    load_only: &BTreeSet<(String, String)>,
) -> (usize, usize, BTreeMap<(String, String), Verdict>) {
    let (mut real, eil, real_whole) = boot(image, dir, load_only);
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
    let (ours, any, ours_whole) = fevlint_verdicts(dir, names, kernels, k);
    // An object libbpf could not open refuses each of its programs.
    let unopened: Vec<(String, Verdict)> = real
        .iter()
        .filter(|((_, p), _)| p.is_empty())
        .map(|((o, _), v)| (o.trim_start_matches("./").to_owned(), v.clone()))
        .collect();
    real.retain(|(_, p), _| !p.is_empty());
    for (object, v) in unopened {
        for (key, _) in ours.iter().filter(|((o, _), _)| *o == object) {
            real.insert(key.clone(), v.clone());
        }
    }
    let mut bad = Vec::new();
    // An object the kernel runs whole: nothing fevlint says about it there may be an error.
    for (object, said) in &any {
        let runs = real.iter().filter(|((o, _), _)| o == object).all(|(_, v)| *v == Verdict::Runs);
        if runs && !said.is_empty() {
            bad.push(format!("(\"{object}\"): every program runs, yet fevlint says {said:?}"));
        }
    }
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
                // The reason fevlint gives is the kernel's (one of them, when it gives several).
                let consistent = said.lines().any(|said| {
                    if said.contains("B612 weak kfunc") {
                        // An unresolved weak kfunc: libbpf leaves `call #0`.
                        why.contains("call #0")
                    } else if said.contains("B612") {
                        why.contains("extern")
                    } else if said.contains("is not modifiable") {
                        why.contains("is not modifiable")
                    } else if said.contains("does not recognize section") {
                        why.contains("missing BPF prog type")
                    } else if said.contains("(no `btf_trace_") {
                        why.contains("failed to find kernel BTF type ID")
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
                    }
                });
                if !consistent {
                    bad.push(format!("{key:?}: refused for another reason:\n  kernel: {why}\n  fevlint: {said}"));
                }
            }
            _ => bad.push(format!("{key:?}:\n  kernel: {theirs:?}\n  fevlint: {mine:?}")),
        }
    }
    let generated = real.iter().filter(|((o, _), _)| o.starts_with("gen")).collect::<Vec<_>>();
    let generated_refused = generated.iter().filter(|(_, v)| **v != Verdict::Runs).count();
    // Each object whole: `bpftool prog loadall` loads it where fevlint finds nothing that
    // refuses one of its programs at load.
    assert_eq!(real_whole.len(), names.len(), "a LOADALL line per object: {real_whole:?}");
    let mut whole_refused = 0;
    for (object, theirs) in &real_whole {
        let mine = ours_whole.get(object);
        whole_refused += usize::from(*theirs != Verdict::Runs);
        if mine.map(|m| *m == Verdict::Runs) != Some(*theirs == Verdict::Runs) {
            bad.push(format!("(\"{object}\"): bpftool prog loadall: {theirs:?}\n  fevlint: {mine:?}"));
        }
    }
    let outside: Vec<_> = real.iter().filter(|((o, _), _)| is_outside(o)).collect();
    // What refused the outside programs, by fevlint's first rule and the kernel's words.
    let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
    for (key, theirs) in &outside {
        if let (Verdict::Refused(why), Some(Verdict::Refused(said))) = (theirs, ours.get(key)) {
            *reasons.entry(said.get(..4).unwrap_or(said)).or_default() += 1;
            let why: String = why.chars().take(160).collect();
            eprintln!("  {kernel} {key:?}: kernel {why} | fevlint {}", said.lines().next().unwrap_or_default());
        }
    }
    let outside_refused = outside.iter().filter(|(_, v)| **v != Verdict::Runs).count();
    let outside_objects: BTreeSet<&String> = outside.iter().map(|((o, _), _)| o).collect();
    let outside_bad = bad.iter().filter(|b| b.starts_with("(\"sel_") || b.starts_with("(\"cil_")).count();
    eprintln!(
        "{kernel}: {} programs ({} generated, {generated_refused} of them refused), {refused} refused, {} disagreements; \
         bpftool prog loadall: {} objects, {whole_refused} refused; \
         outside corpus: {} objects, {} programs, {outside_refused} refused ({reasons:?}), {} agree",
        real.len(),
        generated.len(),
        bad.len(),
        real_whole.len(),
        outside_objects.len(),
        outside.len(),
        outside.len() - outside_bad
    );
    assert_eq!(generated.len(), GENERATED.len(), "the generated programs ran in the guest");
    assert!(bad.is_empty(), "{kernel}:\n{}", bad.join("\n"));
    assert_eq!(real.len(), ours.len(), "programs: kernel {:?}\nfevlint {:?}", real.keys(), ours.keys());
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
    let own = build(&dir);
    let (outside, skipped) = build_outside(&dir);
    let names: Vec<String> = own.iter().chain(&outside).cloned().collect();
    let load_only = load_only(&dir, &names);
    let kernels: Vec<fevlint_kernel::Kernel> = ["6.1.0-56-amd64", "6.12.117+deb12-amd64"]
        .iter()
        .map(|k| fevlint_kernel::Kernel::open(&fixture(k)).expect("fixture"))
        .collect();
    let deb = run(Command::new("bash")
        .arg(repo().join("scripts/fetch-kernel-deb.sh"))
        .arg("linux-image-6.1.0-56-amd64-unsigned=6.1.192-2"));
    let deb = PathBuf::from(String::from_utf8_lossy(&deb.stdout).trim());
    // A Debian system has its kernel's config in /boot (libbpf reads `__kconfig` from it).
    for k in ["6.1.0-56-amd64", "6.12.117+deb12-amd64"] {
        let (_, config) = fevlint_testkit::kernel_fixture_file(k, "config");
        std::fs::write(dir.join(format!("config-{k}")), config).expect("config");
    }
    let (n61, r61, v61) = agree("6.1.0-56-amd64", &deb, &dir, &names, &kernels, 0, &load_only);
    let vmlinuz = fixture("6.12.117+deb12-amd64").join("vmlinuz");
    let (n612, r612, v612) = agree("6.12.117+deb12-amd64", &vmlinuz, &dir, &names, &kernels, 1, &load_only);
    eprintln!("outside corpus: {} objects built, {skipped} programs left out", outside.len());
    for v in [&v61, &v612] {
        let objects: BTreeSet<&String> = v.keys().map(|(o, _)| o).filter(|o| is_outside(o)).collect();
        assert_eq!(objects.len(), outside.len(), "every outside object's programs were loaded: {objects:?}");
    }
    // The generated programs met both verdicts.
    let generated: Vec<&Verdict> =
        v61.iter().chain(&v612).filter(|((o, _), _)| o.starts_with("gen")).map(|(_, v)| v).collect();
    assert!(
        generated.contains(&&Verdict::Runs) && generated.iter().any(|v| **v != Verdict::Runs),
        "generated: {generated:?}"
    );
    // The matrix names rows by program, which the outside objects repeat: the own objects.
    let own_only = |v: &BTreeMap<(String, String), Verdict>| {
        v.iter().filter(|((o, _), _)| !is_outside(o)).map(|(k, v)| (k.clone(), v.clone())).collect()
    };
    matrix_agrees(&dir, &own, &[own_only(&v61), own_only(&v612)]);
    // Both kinds of verdict were exercised on both kernels.
    assert!(r61 > 0 && r61 < n61 && r612 > 0 && r612 < n612, "6.1 {r61}/{n61}, 6.12 {r612}/{n612}");
    let _ = std::fs::remove_dir_all(&dir);
}
