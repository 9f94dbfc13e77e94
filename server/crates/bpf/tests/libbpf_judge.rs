//! libbpf is the judge: real CO-RE programs (hand-written ones under `tests/judge/programs/`
//! and ones generated from the fixtures' BTF) are compiled with Debian's clang 14 against
//! a `vmlinux.h` of Debian 6.1, then every relocation fevlint resolves is compared with
//! what libbpf 1.1 itself does with it on every fixture kernel that has BTF: libbpf's
//! debug log of `bpf_object__load()` (`tests/judge/relo_judge.c`, linked with Debian's
//! `libbpf.a`, the `bpf()` syscall answered in-process) gives the local spec, the first
//! matching candidate, and the patched value, the poisoning or the failure of each;
//! `bpftool -d gen min_core_btf` (libbpf's offline relocation) gives the specs and
//! candidates again.
//!
//! Needs clang, gcc, libbpf-dev, libelf-dev, zlib1g-dev and bpftool
//! (`scripts/install-test-deps.sh`); a missing tool is a failure, not a skip.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod gen;

use fevlint_bpf::btfx::View;
use fevlint_bpf::core::Target;
use fevlint_bpf::{BpfObject, Outcome};
use fevlint_btf::Btf;
use gen::{generate, generate_with, Options};

const KERNELS: [&str; 4] = ["6.1.0-56-amd64", "6.1.0-47-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn run(cmd: &mut Command) -> std::process::Output {
    let out =
        cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e} (scripts/install-test-deps.sh installs it)"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    out
}

/// A scratch folder for one test run.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fevlint-bpf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// The raw BTF of a fixture kernel, decompressed by the kernel loader.
fn kernel_btf(name: &str) -> Vec<u8> {
    let k = fevlint_kernel::Kernel::open(&repo().join("fixtures/kernels").join(name)).expect("fixture kernel");
    k.inputs().btf.as_ref().expect("fixture has BTF").value.as_ref().to_vec()
}

/// What libbpf did with one relocation.
#[derive(Debug, Default, Clone, PartialEq)]
struct Judged {
    local_spec: Option<String>,
    first_match: Option<String>,
    outcome: Option<Outcome>,
}

/// Parses libbpf's debug log into (program, relo #N) -> what it did.
fn parse_log(log: &str) -> HashMap<(String, usize), Judged> {
    let mut out: HashMap<(String, usize), Judged> = HashMap::new();
    for line in log.lines() {
        // libbpf prints a failed candidate's spec in pieces, so its next message may follow a space.
        let Some(rest) = line.trim_start().strip_prefix("libbpf: prog '") else { continue };
        let Some((prog, rest)) = rest.split_once("': relo #") else { continue };
        let Some((n, msg)) = rest.split_once(": ") else { continue };
        let Ok(n) = n.parse::<usize>() else { continue };
        let j = out.entry((prog.to_owned(), n)).or_default();
        if let Some(spec) = msg.strip_prefix("matching candidate #") {
            if j.first_match.is_none() {
                j.first_match = spec.split_once(' ').map(|(_, s)| s.to_owned());
            }
        } else if msg.starts_with("patched insn #") && !msg.contains(" mem_sz ") {
            if j.outcome.is_none() {
                let v = msg.rsplit(" -> ").next().and_then(|v| v.trim().parse::<u64>().ok()).expect("patched value");
                j.outcome = Some(Outcome::Value { value: v });
            }
        } else if msg.starts_with("substituting insn #") {
            j.outcome = Some(Outcome::Poisoned { reason: String::new() });
        } else if msg.starts_with("failed to relocate: ") || msg.starts_with("failed to patch insn") {
            let errno = msg.rsplit(": ").next().and_then(|e| e.trim().parse::<i32>().ok()).unwrap_or(0);
            j.outcome = Some(Outcome::Failed { errno, reason: String::new() });
        } else if msg.starts_with('<') {
            j.local_spec = Some(msg.to_owned());
        }
    }
    out
}

struct Judge {
    dir: PathBuf,
    bin: PathBuf,
    kernels: Vec<(String, PathBuf, Btf)>,
    include: PathBuf,
}

impl Judge {
    fn new(name: &str) -> Judge {
        let dir = scratch(name);
        let bin = dir.join("relo_judge");
        let src = repo().join("server/crates/bpf/tests/judge/relo_judge.c");
        run(Command::new("gcc").arg("-O1").arg(&src).arg("-o").arg(&bin).args([
            "/usr/lib/x86_64-linux-gnu/libbpf.a",
            "-lelf",
            "-lz",
        ]));
        let mut kernels = Vec::new();
        for k in KERNELS {
            let bytes = kernel_btf(k);
            let path = dir.join(format!("{k}.btf"));
            std::fs::write(&path, &bytes).expect("write btf");
            kernels.push((k.to_owned(), path, Btf::parse(k, bytes).expect("kernel BTF")));
        }
        let include = dir.join("include");
        std::fs::create_dir_all(&include).expect("include dir");
        let h = run(Command::new("bpftool").args(["btf", "dump", "file"]).arg(&kernels[0].1).args(["format", "c"]));
        std::fs::write(include.join("vmlinux.h"), &h.stdout).expect("vmlinux.h");
        Judge { dir, bin, kernels, include }
    }

    fn compile(&self, src: &Path) -> PathBuf {
        self.compile_with("clang", src)
    }

    fn compile_with(&self, clang: &str, src: &Path) -> PathBuf {
        let obj = self.dir.join(src.file_name().expect("name")).with_extension("o");
        run(Command::new(clang)
            .args(["-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", "-Wno-unused-value", "-I"])
            .arg(&self.include)
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj));
        obj
    }

    /// Compares every relocation of `obj` on every kernel; returns how many were compared
    /// per kernel.
    fn compare(&self, obj_path: &Path, counts: &mut HashMap<String, usize>, mismatches: &mut Vec<String>) {
        self.compare_on(&self.kernels, obj_path, counts, mismatches);
    }

    /// Compares every relocation of `obj` on each target BTF (a kernel's raw BTF, or an
    /// object file whose `.BTF` libbpf's `btf__parse` reads).
    fn compare_on(
        &self,
        targets: &[(String, PathBuf, Btf)],
        obj_path: &Path,
        counts: &mut HashMap<String, usize>,
        mismatches: &mut Vec<String>,
    ) {
        let bytes = std::fs::read(obj_path).expect("object");
        let obj = BpfObject::parse(obj_path.display().to_string(), bytes).expect("our reader reads clang's object");
        for (kname, kpath, kbtf) in targets {
            let log = run(Command::new(&self.bin).arg(kpath).arg(obj_path)).stdout;
            let judged = parse_log(&String::from_utf8_lossy(&log));
            // bpftool's offline relocation (`gen min_core_btf`, the same libbpf code), whose
            // debug log names programs by section: the specs and candidates again.
            let min = Command::new("bpftool")
                .arg("-d")
                .args(["gen", "min_core_btf"])
                .arg(kpath)
                .arg(self.dir.join("min.btf"))
                .arg(obj_path)
                .output()
                .expect("bpftool (scripts/install-test-deps.sh installs it)");
            let mut bpftool_log = String::from_utf8_lossy(&min.stderr).into_owned();
            bpftool_log.push_str(&String::from_utf8_lossy(&min.stdout));
            let by_section = parse_log(&bpftool_log);
            let target = Target::new(kbtf);
            let ours = fevlint_bpf::resolve(&obj, &target);
            assert!(!ours.is_empty(), "{}: no relocations", obj_path.display());
            let mut stopped = false;
            for r in &ours {
                let prog = r.program.clone().expect("every relocation belongs to a program");
                let key = (prog.clone(), r.index);
                let Some(j) = judged.get(&key) else {
                    // libbpf relocates no program that does not load (`SEC("?...")`), and
                    // none when it stopped before CO-RE (an extern it cannot resolve):
                    // bpftool's offline relocation still judges the specs.
                    if r.section.starts_with('?') || !judged.keys().any(|(p, _)| *p == prog) && !stopped {
                        if let Some(b) = by_section.get(&(r.section.clone(), r.index)) {
                            if b.local_spec != r.local_spec || b.first_match != r.target_spec {
                                mismatches.push(format!(
                                    "{} on {kname}: {prog} relo #{}: bpftool gen min_core_btf says {:?} / {:?}, fevlint {:?} / {:?}",
                                    obj_path.display(),
                                    r.index,
                                    b.local_spec,
                                    b.first_match,
                                    r.local_spec,
                                    r.target_spec
                                ));
                            }
                            *counts.entry(format!("{kname} bpftool only")).or_default() += 1;
                            continue;
                        }
                    }
                    // libbpf stops at the first failure: nothing after it is judged.
                    assert!(
                        stopped,
                        "{} on {kname}: libbpf says nothing about {prog} relo #{} ({} {} {})",
                        obj_path.display(),
                        r.index,
                        r.kind,
                        r.type_name,
                        r.access
                    );
                    continue;
                };
                let what = format!(
                    "{} on {kname}: {prog} relo #{} {} {} {}",
                    obj_path.display(),
                    r.index,
                    r.kind,
                    r.type_name,
                    r.access
                );
                let same_outcome = match (&r.outcome, &j.outcome) {
                    (Outcome::Value { value: a }, Some(Outcome::Value { value: b })) => a == b,
                    (Outcome::Poisoned { .. }, Some(Outcome::Poisoned { .. })) => true,
                    (Outcome::Failed { .. }, Some(Outcome::Failed { .. })) => true,
                    _ => false,
                };
                if !same_outcome {
                    mismatches.push(format!("{what}: fevlint {:?}, libbpf {:?}", r.outcome, j.outcome));
                }
                if j.local_spec.is_some() && r.local_spec != j.local_spec {
                    mismatches.push(format!("{what}: local spec {:?}, libbpf {:?}", r.local_spec, j.local_spec));
                }
                if r.target_spec != j.first_match {
                    mismatches.push(format!("{what}: target spec {:?}, libbpf {:?}", r.target_spec, j.first_match));
                }
                match by_section.get(&(r.section.clone(), r.index)) {
                    Some(b) => {
                        if b.local_spec != r.local_spec || b.first_match != r.target_spec {
                            mismatches.push(format!(
                                "{what}: bpftool gen min_core_btf says {:?} / {:?}, fevlint {:?} / {:?}",
                                b.local_spec, b.first_match, r.local_spec, r.target_spec
                            ));
                        }
                        *counts.entry(format!("{kname} bpftool")).or_default() += 1;
                    }
                    None if !stopped => mismatches.push(format!("{what}: bpftool gen min_core_btf says nothing")),
                    None => {}
                }
                let class = match r.outcome {
                    Outcome::Value { .. } => "value",
                    Outcome::Poisoned { .. } => "poisoned",
                    Outcome::Failed { .. } => {
                        stopped = true;
                        "failed"
                    }
                };
                *counts.entry(format!("{kname} {class}")).or_default() += 1;
                *counts.entry(kname.clone()).or_default() += 1;
                if r.kind == "type_matches" {
                    *counts.entry(format!("{kname} type_matches")).or_default() += 1;
                }
            }
        }
    }
}

#[test]
fn hand_written_programs_relocate_as_libbpf_relocates_them() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let judge = Judge::new("hand");
    let mut counts = HashMap::new();
    let mut mismatches = Vec::new();
    let dir = repo().join("server/crates/bpf/tests/judge/programs");
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(&dir).expect("programs").map(|e| e.expect("entry").path()).collect();
    srcs.sort();
    for src in srcs.iter().filter(|p| p.to_string_lossy().ends_with(".bpf.c")) {
        let obj = judge.compile(src);
        judge.compare(&obj, &mut counts, &mut mismatches);
    }
    let mut shown: Vec<_> = counts.iter().collect();
    shown.sort();
    eprintln!("relocations compared with libbpf: {shown:?}");
    assert!(mismatches.is_empty(), "{} disagreements:\n{}", mismatches.len(), mismatches.join("\n"));
    for k in KERNELS {
        assert!(counts.get(k).copied().unwrap_or(0) >= 40, "{k}: {counts:?}");
    }
    let _ = std::fs::remove_dir_all(&judge.dir);
}

#[test]
fn generated_programs_relocate_as_libbpf_relocates_them() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let judge = Judge::new("gen");
    let view = View::new(&judge.kernels[0].2);
    let mut counts = HashMap::new();
    let mut mismatches = Vec::new();
    let programs: u64 = std::env::var("FEVLINT_BPF_GEN_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(12);
    for seed in 1..=programs {
        let src = judge.dir.join(format!("gen{seed}.bpf.c"));
        std::fs::write(&src, generate(&view, seed.wrapping_mul(0x9e37_79b9_7f4a_7c15), 60)).expect("write program");
        let obj = judge.compile(&src);
        judge.compare(&obj, &mut counts, &mut mismatches);
    }
    let mut shown: Vec<_> = counts.iter().collect();
    shown.sort();
    eprintln!("generated: relocations compared with libbpf: {shown:?}");
    assert!(
        mismatches.is_empty(),
        "{} disagreements (sources in {}):\n{}",
        mismatches.len(),
        judge.dir.display(),
        mismatches.join("\n")
    );
    for k in KERNELS {
        assert!(counts.get(k).copied().unwrap_or(0) >= 300, "{k}: {counts:?}");
    }
    let _ = std::fs::remove_dir_all(&judge.dir);
}

/// `bpf_core_type_matches()` (`type_matches` relocations): clang 14 cannot emit it, so these
/// programs are built by Debian's clang 15 (`clang-15`, install-test-deps.sh): real
/// structs, unions, enums and typedefs, and flavours with kept, retyped and renamed
/// members, each judged by libbpf on every fixture kernel.
#[test]
fn type_matches_relocations_resolve_as_libbpf_resolves_them() {
    if !fevlint_testkit::real_tools("clang-15, bpftool and libbpf") {
        return;
    }
    fevlint_testkit::require_tool("clang-15", "clang-15");
    let judge = Judge::new("matches");
    let view = View::new(&judge.kernels[0].2);
    let mut counts = HashMap::new();
    let mut mismatches = Vec::new();
    let mut matches = 0;
    for seed in 1..=4u64 {
        let src = judge.dir.join(format!("matches{seed}.bpf.c"));
        let options = Options { type_matches: true, loads: true, flavours: true };
        let text = generate_with(&view, seed.wrapping_mul(0x2545_f491_4f6c_dd1d), 80, options);
        matches += text.matches("bpf_core_type_matches(").count();
        std::fs::write(&src, text).expect("write program");
        let obj = judge.compile_with("clang-15", &src);
        judge.compare(&obj, &mut counts, &mut mismatches);
    }
    let mut shown: Vec<_> = counts.iter().collect();
    shown.sort();
    eprintln!("type_matches: {matches} calls; relocations compared with libbpf: {shown:?}");
    assert!(matches >= 20, "{matches} bpf_core_type_matches() calls generated");
    for (k, _, _) in &judge.kernels {
        assert!(counts.get(&format!("{k} type_matches")).is_some_and(|&n| n >= 20), "{k}: {shown:?}");
    }
    assert!(
        mismatches.is_empty(),
        "{} disagreements (sources in {}):\n{}",
        mismatches.len(),
        judge.dir.display(),
        mismatches.join("\n")
    );
}

/// `bpftool gen object` links `subprog.bpf.c` (a `__weak` subprogram and one nothing calls,
/// both reading a member 6.12 lacks) with `subprog_strong.bpf.c` (the strong definition):
/// the weak copy's code and `.BTF.ext` records stay in `.text` without a symbol. libbpf
/// skips those records ("belonging to eliminated weak subprogram") and fevlint leaves
/// them out; every other record gets libbpf's answer.
#[test]
fn records_of_an_eliminated_weak_subprogram_are_skipped_as_libbpf_skips_them() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let judge = Judge::new("weak-subprogram");
    let tests = repo().join("server/tests/bpf");
    let parts: Vec<PathBuf> =
        ["subprog.bpf.c", "subprog_strong.bpf.c"].iter().map(|s| judge.compile(&tests.join(s))).collect();
    let linked = judge.dir.join("subprog_linked.bpf.o");
    run(Command::new("bpftool").args(["gen", "object"]).arg(&linked).args(&parts));
    let obj = BpfObject::parse("linked", std::fs::read(&linked).expect("linked object")).expect("reads");
    let text_records =
        obj.ext.as_ref().expect(".BTF.ext").core_relo.iter().find(|s| s.name.as_deref() == Some(".text"));
    let total = text_records.expect(".text records").records.len();
    for (kname, kpath, kbtf) in &judge.kernels {
        let log = String::from_utf8_lossy(&run(Command::new(&judge.bin).arg(kpath).arg(&linked)).stdout).into_owned();
        // `sec '.text': skipping CO-RE relocation #N for insn #M belonging to eliminated weak subprogram`
        let skipped: Vec<usize> = log
            .lines()
            .filter(|l| l.contains("belonging to eliminated weak subprogram"))
            .filter_map(|l| l.split("relocation #").nth(1)?.split(' ').next()?.parse().ok())
            .collect();
        assert!(!skipped.is_empty(), "{kname}: libbpf skipped nothing:\n{log}");
        let ours: Vec<usize> = fevlint_bpf::resolve(&obj, &Target::new(kbtf))
            .iter()
            .filter(|r| r.section == ".text")
            .map(|r| r.index)
            .collect();
        assert!(
            skipped.iter().all(|i| !ours.contains(i)),
            "{kname}: fevlint resolves {ours:?}, libbpf skips {skipped:?}"
        );
        assert_eq!(ours.len() + skipped.len(), total, "{kname}: the other records are resolved");
    }
    let mut counts = HashMap::new();
    let mut mismatches = Vec::new();
    judge.compare(&linked, &mut counts, &mut mismatches);
    assert!(mismatches.is_empty(), "{} disagreements:\n{}", mismatches.len(), mismatches.join("\n"));
    let _ = std::fs::remove_dir_all(&judge.dir);
}

/// The BTF an object file carries, as a CO-RE target: libbpf's `btf__parse` reads an
/// object's `.BTF` the way the selftests and cilium/ebpf point it at one.
fn object_target(name: String, path: &Path) -> (String, PathBuf, Btf) {
    let obj = BpfObject::parse(path.display().to_string(), std::fs::read(path).expect("object")).expect("reads");
    (name, path.to_owned(), obj.btf.expect("the object has .BTF"))
}

/// CO-RE programs fevlint's authors did not write (`server/tests/bpf/outside/`, see its
/// SOURCE.md): libbpf's own selftests from Linux 6.12 (`test_core_reloc_*.c`, each judged on
/// the 4 fixture kernels and on every `btf__core_reloc_<group>*` target type of its group,
/// compiled here as the selftests compile them; `core_kern.c`, `test_core_extern.c`,
/// `test_core_autosize.c`, `test_core_read_macros.c`, `test_core_retro.c` on the
/// kernels), and cilium/ebpf's `btf/testdata/relocs*.c` (compiled here, `relocs.c` by
/// clang 15 for its `type_matches`, and the `-el.elf` objects cilium/ebpf ships), each
/// on the kernels, on its own BTF (as cilium/ebpf relocates them) and `relocs_read` on
/// `relocs_read_tgt`. About 75 s on this machine (debug build, load ~10).
#[test]
fn outside_programs_relocate_as_libbpf_relocates_them() {
    if !fevlint_testkit::real_tools("clang, clang-15, bpftool and libbpf") {
        return;
    }
    fevlint_testkit::require_tool("clang-15", "clang-15");
    let judge = Judge::new("outside");
    // The selftests include glibc's <stdint.h>, which wants the 32-bit stubs for `-target bpf`.
    std::fs::create_dir_all(judge.include.join("gnu")).expect("gnu dir");
    std::fs::write(judge.include.join("gnu/stubs-32.h"), "").expect("stubs");
    let outside = repo().join("server/tests/bpf/outside");
    let compile = |clang: &str, src: &Path| -> PathBuf {
        let stem = src.file_stem().expect("name").to_string_lossy();
        let obj = judge.dir.join(if clang == "clang" { format!("{stem}.o") } else { format!("{stem}.{clang}.o") });
        run(Command::new(clang)
            .args(["-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", "-w", "-I"])
            .arg(&judge.include)
            .arg("-I/usr/include/x86_64-linux-gnu")
            .arg("-c")
            .arg(src)
            .arg("-o")
            .arg(&obj));
        obj
    };
    let has_relocations = |path: &Path| {
        let obj = BpfObject::parse("o", std::fs::read(path).expect("object")).expect("reads");
        obj.ext.is_some_and(|e| e.core_relo_count() > 0)
    };
    let mut counts = HashMap::new();
    let mut mismatches = Vec::new();
    let mut objects = 0;

    let sel = outside.join("libbpf-selftests");
    let mut srcs: Vec<PathBuf> =
        std::fs::read_dir(&sel).expect("selftests").map(|e| e.expect("entry").path()).collect();
    srcs.sort();
    let name_of = |p: &Path| p.file_stem().expect("stem").to_string_lossy().into_owned();
    let mut groups: HashMap<String, Vec<(String, PathBuf, Btf)>> = HashMap::new();
    for src in srcs.iter().filter(|p| name_of(p).starts_with("btf__core_reloc_")) {
        let name = name_of(src);
        let rest = &name["btf__core_reloc_".len()..];
        let group = rest.split("__").next().expect("group").to_owned();
        // clang 15: the enum64 targets need it (clang 14 has no BTF enum64).
        let obj = compile("clang-15", src);
        groups.entry(group).or_default().push(object_target(name.clone(), &obj));
    }
    for src in srcs.iter().filter(|p| p.extension().is_some_and(|e| e == "c") && !name_of(p).starts_with("btf__")) {
        let name = name_of(src);
        // Both compilers: clang 15 also emits `type_matches` and enum64 relocations.
        for clang in ["clang", "clang-15"] {
            let obj = compile(clang, src);
            if !has_relocations(&obj) {
                continue;
            }
            objects += 1;
            judge.compare(&obj, &mut counts, &mut mismatches);
            let group = name
                .strip_prefix("test_core_reloc_")
                .map(|g| g.trim_end_matches("_direct").trim_end_matches("_probed"));
            if let Some(targets) = group.and_then(|g| groups.get(g)) {
                judge.compare_on(targets, &obj, &mut counts, &mut mismatches);
            }
        }
    }

    let cil = outside.join("cilium-ebpf/btf/testdata");
    let mut cilium = Vec::new();
    for (clang, name) in
        [("clang-15", "relocs"), ("clang", "relocs_enum"), ("clang", "relocs_read"), ("clang", "relocs_read_tgt")]
    {
        cilium.push(compile(clang, &cil.join(format!("{name}.c"))));
        cilium.push(cil.join(format!("{name}-el.elf")));
    }
    for obj in &cilium {
        if !has_relocations(obj) {
            continue;
        }
        objects += 1;
        judge.compare(obj, &mut counts, &mut mismatches);
        let mut targets = vec![object_target("itself".into(), obj)];
        if name_of(obj).starts_with("relocs_read-") || name_of(obj) == "relocs_read" {
            let tgt = if obj.extension().is_some_and(|e| e == "elf") {
                "relocs_read_tgt-el.elf"
            } else {
                "relocs_read_tgt.o"
            };
            let tgt = if tgt.ends_with(".elf") { cil.join(tgt) } else { judge.dir.join(tgt) };
            targets.push(object_target("relocs_read_tgt".into(), &tgt));
        }
        judge.compare_on(&targets, obj, &mut counts, &mut mismatches);
    }

    let mut shown: Vec<_> = counts.iter().collect();
    shown.sort();
    eprintln!("outside: {objects} objects; relocations compared with libbpf: {shown:?}");
    let selftest_targets = groups.values().flatten().filter(|(n, _, _)| counts.contains_key(n)).count();
    assert_eq!(selftest_targets, groups.values().map(Vec::len).sum::<usize>(), "every btf__ target judged: {shown:?}");
    assert!(objects >= 45, "{objects} objects with CO-RE relocations");
    for k in KERNELS {
        assert!(counts.get(k).copied().unwrap_or(0) >= 1_500, "{k}: {shown:?}");
    }
    assert!(
        mismatches.is_empty(),
        "{} disagreements (objects in {}):\n{}",
        mismatches.len(),
        judge.dir.display(),
        mismatches.join("\n")
    );
    let _ = std::fs::remove_dir_all(&judge.dir);
}
