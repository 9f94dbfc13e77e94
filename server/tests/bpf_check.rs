//! `fevlint check` and `fevlint bpf relocations` on compiled BPF objects: a program built
//! here by clang 14 (`tests/bpf/drift.bpf.c`, against a `vmlinux.h` of Debian 6.1) and a
//! libbpf-skeleton tool embedding it (`tests/bpf/host.c`), checked against the 6.1 and 6.12
//! fixtures: findings at the `.bpf.c` lines (text, JSON, SARIF), exit status, and the
//! relocation records. Needs clang, gcc, bpftool and libbpf-dev (install-test-deps.sh).

use std::path::{Path, PathBuf};
use std::process::Command;

use fevlint_testkit::{repo, run};

fn kernel(name: &str) -> PathBuf {
    fevlint_testkit::kernel_fixture(name)
}

/// Builds drift.bpf.o (and the skeleton host) in a scratch folder.
fn build(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "drift.bpf.c");
    std::fs::copy(repo().join("server/tests/bpf/host.c"), dir.join("host.c")).expect("copy source");
    let skel = run(Command::new("bpftool").current_dir(&dir).args(["gen", "skeleton", "drift.bpf.o"]));
    std::fs::write(dir.join("drift.skel.h"), skel.stdout).expect("skeleton");
    run(Command::new("gcc").current_dir(&dir).args(["-I.", "host.c", "-o", "host", "-lbpf"]));
    dir
}

fn fevlint(dir: &Path, args: &[&str]) -> std::process::Output {
    let (path, words) = args.split_last().expect("a path");
    Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .current_dir(dir)
        .args(words)
        .args(["-k"])
        .arg(kernel("6.1.0-56-amd64"))
        .args(["-k"])
        .arg(kernel("6.12.117+deb12-amd64"))
        .arg(path)
        .output()
        .expect("fevlint runs")
}

/// The line of `drift.bpf.c` that contains `needle`.
fn line_of(dir: &Path, needle: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join("drift.bpf.c")).expect("source");
    text.lines().position(|l| l.contains(needle)).expect("needle") as u64 + 1
}

#[test]
fn objects_and_skeleton_binaries_are_checked_at_their_source_lines() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = build("check");
    let out = fevlint(&dir, &["check", "--format", "json", "drift.bpf.o"]);
    assert_eq!(out.status.code(), Some(1), "errors found: {}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let diags = json["diagnostics"].as_array().expect("diagnostics");
    let find = |code: &str, what: &str| {
        diags
            .iter()
            .filter(|d| d["code"] == code && d["message"].as_str().is_some_and(|m| m.contains(what)))
            .collect::<Vec<_>>()
    };
    // f_version: in 6.1's struct file, gone in 6.12 (drift, named with both kernels).
    let drift = find("B604", "f_version");
    assert_eq!(drift.len(), 1, "{diags:#?}");
    assert_eq!(drift[0]["kernel"], "6.12.117+deb12-amd64");
    assert!(drift[0]["message"].as_str().expect("message").contains("resolves on 6.1.0-56-amd64 but not on"));
    assert!(drift[0]["file"].as_str().expect("file").ends_with("drift.bpf.c"));
    // At the member it reads (line info gives the program's first lines: clang schedules
    // the offset load ahead of the read's own line).
    assert_eq!(drift[0]["line"].as_u64(), Some(line_of(&dir, "BPF_CORE_READ(file, f_version)")));
    // Attach points: a kprobe on a function renamed in 6.12, a tracepoint nobody has.
    let alloc = find("B611", "__alloc_pages");
    assert_eq!(alloc.len(), 1, "{diags:#?}");
    assert_eq!(alloc[0]["line"].as_u64(), Some(line_of(&dir, "SEC(\"kprobe/__alloc_pages\")")));
    assert_eq!(find("B611", "no_such_tracepoint").len(), 2);
    assert!(find("B611", "sched_switch").is_empty() && find("B611", "do_sys_open").is_empty());
    // The guarded `state` read is dead code on both kernels: information, not an error.
    assert_eq!(find("B602", "task_struct___old.state").len(), 2);
    assert!(find("B601", "").is_empty() && find("B603", "").is_empty(), "{diags:#?}");

    // SARIF points at the C source.
    let out = fevlint(&dir, &["check", "--format", "sarif", "drift.bpf.o"]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SARIF");
    let uris: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].as_str())
        .collect();
    assert!(!uris.is_empty() && uris.iter().all(|u| u.ends_with("drift.bpf.c")), "{uris:?}");

    // The skeleton tool: the object is found inside the executable, with the same findings.
    let out = fevlint(&dir, &["check", "--format", "json", "host"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let codes: Vec<&str> =
        json["diagnostics"].as_array().expect("diags").iter().filter_map(|d| d["code"].as_str()).collect();
    let mut want: Vec<&str> = diags.iter().filter_map(|d| d["code"].as_str()).collect();
    let mut got = codes.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want);
    let text = fevlint(&dir, &["check", "--color", "never", "host"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("checked 1 BPF object (7 programs"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn relocations_are_listed_per_kernel() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = build("relocations");
    let out = fevlint(&dir, &["bpf", "relocations", "--format", "json", "drift.bpf.o"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let records: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let records = records.as_array().expect("records");
    let per_kernel = |k: &str| records.iter().filter(|r| r["kernel"] == k).count();
    assert!(per_kernel("6.1.0-56-amd64") > 0);
    assert_eq!(per_kernel("6.1.0-56-amd64"), per_kernel("6.12.117+deb12-amd64"));
    for r in records {
        for field in ["kernel", "section", "index", "insn_off", "kind", "type", "access", "source"] {
            assert!(!r[field].is_null(), "{field} missing: {r}");
        }
        assert!(r["value"].is_u64() != r["error"].is_string(), "value or error: {r}");
    }
    let version = |k: &str| {
        records
            .iter()
            .find(|r| {
                r["kernel"] == k
                    && r["type"] == "struct file"
                    && r["local_spec"].as_str().is_some_and(|s| s.contains(".f_version "))
            })
            .unwrap_or_else(|| panic!("f_version on {k}"))
            .clone()
    };
    assert_eq!(version("6.1.0-56-amd64")["value"], 184);
    assert_eq!(version("6.12.117+deb12-amd64")["outcome"], "poisoned");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kfunc of a module (`tests/bpf/module_kfunc.bpf.c`: nf_conntrack's
/// `bpf_skb_ct_lookup`, a module on Debian 6.1): with the module's split BTF in the kernel
/// folder's `btf/` (nf_conntrack.ko's `.BTF` from Debian's own 6.1.0-56 package, as
/// `/sys/kernel/btf/nf_conntrack` holds it) it resolves, as libbpf resolves it there;
/// without, it is information, never an error (vmlinux's BTF alone cannot say). libbpf's
/// own reading of the module's BTF (`bpftool btf dump -B`) confirms both kfuncs are there.
#[test]
fn a_module_kfunc_resolves_in_the_module_btf_and_is_unknown_without_it() {
    if !fevlint_testkit::real_tools("clang, bpftool, binutils and Debian's 6.1.0-56 package") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-module-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "module_kfunc.bpf.c");
    let deb = run(Command::new("bash")
        .arg(repo().join("scripts/fetch-kernel-deb.sh"))
        .arg("linux-image-6.1.0-56-amd64-unsigned=6.1.192-2"));
    let deb = PathBuf::from(String::from_utf8_lossy(&deb.stdout).trim());
    let ko = "./lib/modules/6.1.0-56-amd64/kernel/net/netfilter/nf_conntrack.ko";
    let tar = run(Command::new("dpkg-deb").arg("--fsys-tarfile").arg(&deb)).stdout;
    std::fs::write(dir.join("image.tar"), tar).expect("tar");
    run(Command::new("tar").current_dir(&dir).args(["-xf", "image.tar", ko]));
    // The kernel folder: the fixture's files, and `btf/` as /sys/kernel/btf has it.
    let folder = dir.join("6.1.0-56-amd64");
    std::fs::create_dir_all(folder.join("btf")).expect("btf/");
    for e in std::fs::read_dir(kernel("6.1.0-56-amd64")).expect("fixture") {
        let e = e.expect("entry");
        std::os::unix::fs::symlink(e.path(), folder.join(e.file_name())).expect("link");
    }
    let module = folder.join("btf/nf_conntrack");
    run(Command::new("objcopy")
        .arg(format!("--dump-section=.BTF={}", module.display()))
        .arg(dir.join(ko))
        .arg(dir.join("ko.out")));
    let dump = run(Command::new("bpftool")
        .args(["btf", "dump", "-B"])
        .arg(dir.join("6.1.0-56-amd64.btf"))
        .arg("file")
        .arg(&module));
    let dump = String::from_utf8_lossy(&dump.stdout);
    for f in ["bpf_skb_ct_lookup", "bpf_ct_release"] {
        assert!(dump.contains(&format!("FUNC '{f}'")), "libbpf does not see {f} in nf_conntrack's BTF");
    }
    let check = |k: &Path| {
        let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .current_dir(&dir)
            .args(["check", "--format", "json", "-k"])
            .arg(k)
            .arg("module_kfunc.bpf.o")
            .output()
            .expect("fevlint runs");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let b612: Vec<String> = json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "B612")
            .map(|d| format!("{} {}", d["severity"], d["message"]))
            .collect();
        (out.status.code(), b612)
    };
    let (status, with) = check(&folder);
    assert_eq!((status, with.clone()), (Some(0), Vec::new()), "with the module's BTF: {with:?}");
    let (status, without) = check(&kernel("6.1.0-56-amd64"));
    assert_eq!(status, Some(0), "without the module's BTF: {without:?}");
    assert_eq!(without.len(), 2, "{without:?}");
    assert!(without.iter().all(|d| d.starts_with("\"info\"") && d.contains("loaded module")), "{without:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Attach points in modules (`module_attach.bpf.c`: md_mod's `md_flush_request`, kvm's
/// `kvm_exit` tracepoint by BTF and by tracefs, xfs's `xfs_file_read_iter`) and a name
/// nothing has. On the 6.1 fixture (vmlinux only, `CONFIG_MODULES=y`) each is a warning
/// that says the image lacks it and a loaded module may provide it (it was an error
/// saying the function does not exist); with the folder's `btf/` holding the modules'
/// BTF (from Debian's own 6.1.0-56 package, as /sys/kernel/btf has it with the modules
/// loaded; libbpf's reading, `bpftool btf dump -B`, sees each target there) the four
/// resolve and the fifth is an error that says no loaded module has it either; beside
/// that folder, the plain fixture's warnings name the module; on 6.18, built without
/// `CONFIG_MODULES` (kvm and xfs built in), what it lacks is an error.
/// A B611 finding: severity, kernel, message, notes (JSON).
type B611Finding = (String, String, String, String);

#[test]
fn module_attach_points_are_warnings_without_module_information() {
    if !fevlint_testkit::real_tools("clang, bpftool, binutils and Debian's 6.1.0-56 package") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-module-attach-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "module_attach.bpf.c");
    let deb = run(Command::new("bash")
        .arg(repo().join("scripts/fetch-kernel-deb.sh"))
        .arg("linux-image-6.1.0-56-amd64-unsigned=6.1.192-2"));
    let deb = PathBuf::from(String::from_utf8_lossy(&deb.stdout).trim());
    let base = "./lib/modules/6.1.0-56-amd64/kernel/";
    // (module as /sys/kernel/btf names it, its file in the package, what libbpf must see)
    let modules = [
        ("md_mod", "drivers/md/md-mod.ko", "FUNC 'md_flush_request'"),
        ("kvm", "arch/x86/kvm/kvm.ko", "TYPEDEF 'btf_trace_kvm_exit'"),
        ("xfs", "fs/xfs/xfs.ko", "FUNC 'xfs_file_read_iter'"),
    ];
    let tar = run(Command::new("dpkg-deb").arg("--fsys-tarfile").arg(&deb)).stdout;
    std::fs::write(dir.join("image.tar"), tar).expect("tar");
    let mut untar = Command::new("tar");
    untar.current_dir(&dir).arg("-xf").arg("image.tar");
    for (_, ko, _) in &modules {
        untar.arg(format!("{base}{ko}"));
    }
    run(&mut untar);
    let loaded = dir.join("6.1.0-56-amd64-loaded");
    std::fs::create_dir_all(loaded.join("btf")).expect("btf/");
    for e in std::fs::read_dir(kernel("6.1.0-56-amd64")).expect("fixture") {
        let e = e.expect("entry");
        std::os::unix::fs::symlink(e.path(), loaded.join(e.file_name())).expect("link");
    }
    for (name, ko, sees) in &modules {
        let module = loaded.join("btf").join(name);
        run(Command::new("objcopy")
            .arg(format!("--dump-section=.BTF={}", module.display()))
            .arg(dir.join(format!("{base}{ko}")))
            .arg(dir.join("ko.out")));
        let dump = run(Command::new("bpftool")
            .args(["btf", "dump", "-B"])
            .arg(dir.join("6.1.0-56-amd64.btf"))
            .arg("file")
            .arg(&module));
        assert!(String::from_utf8_lossy(&dump.stdout).contains(sees), "libbpf does not see {sees} in {name}");
    }
    let check = |kernels: &[PathBuf]| -> (Option<i32>, Vec<B611Finding>) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fevlint"));
        cmd.current_dir(&dir).args(["check", "--format", "json"]);
        for k in kernels {
            cmd.arg("-k").arg(k);
        }
        let out = cmd.arg("module_attach.bpf.o").output().expect("fevlint runs");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let found = json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "B611")
            .map(|d| {
                let s = |k: &str| d[k].as_str().unwrap_or("").to_owned();
                (s("severity"), s("kernel"), s("message"), d["notes"].to_string())
            })
            .collect();
        (out.status.code(), found)
    };
    let sections = [
        "fentry/md_flush_request",
        "tp_btf/kvm_exit",
        "tp/kvm/kvm_exit",
        "kprobe/xfs_file_read_iter",
        "kprobe/fevlint_no_such_function",
    ];
    let about = |found: &[B611Finding], section: &str| -> Vec<B611Finding> {
        found.iter().filter(|f| f.2.starts_with(&format!("`{section}`"))).cloned().collect()
    };

    // The fixture alone: warnings, no error.
    let (status, plain) = check(&[kernel("6.1.0-56-amd64")]);
    assert_eq!(status, Some(0), "{plain:#?}");
    assert_eq!(plain.len(), 5, "{plain:#?}");
    for section in sections {
        let f = about(&plain, section);
        assert_eq!(f.len(), 1, "{section}: {plain:#?}");
        assert_eq!(f[0].0, "warning", "{section}: {f:#?}");
        assert!(f[0].2.contains("is not in the kernel image (vmlinux) of 6.1.0-56-amd64"), "{f:#?}");
        assert!(f[0].2.contains("it attaches only if a loaded module provides it"), "{f:#?}");
    }
    assert!(about(&plain, "tp/kvm/kvm_exit")[0].2.contains("tracepoint `kvm_exit`"), "{plain:#?}");

    // With the modules' BTF: the four resolve, the fifth is an error.
    let (status, with) = check(std::slice::from_ref(&loaded));
    assert_eq!(status, Some(1), "{with:#?}");
    assert_eq!(with.len(), 1, "{with:#?}");
    let nowhere = &with[0];
    assert_eq!((nowhere.0.as_str(), nowhere.1.as_str()), ("error", "6.1.0-56-amd64-loaded"), "{with:#?}");
    assert!(nowhere.2.contains("`fevlint_no_such_function` does not exist"), "{with:#?}");
    assert!(nowhere.3.contains("no module loaded on 6.1.0-56-amd64-loaded has it either"), "{with:#?}");

    // Beside it, the plain fixture's warnings name the module.
    let (_, both) = check(&[kernel("6.1.0-56-amd64"), loaded.clone()]);
    for (section, module) in [
        ("fentry/md_flush_request", "md_mod"),
        ("tp_btf/kvm_exit", "kvm"),
        ("tp/kvm/kvm_exit", "kvm"),
        ("kprobe/xfs_file_read_iter", "xfs"),
    ] {
        let f = about(&both, section);
        assert_eq!(f.len(), 1, "{section}: {both:#?}");
        assert_eq!((f[0].0.as_str(), f[0].1.as_str()), ("warning", "6.1.0-56-amd64"), "{f:#?}");
        assert!(f[0].3.contains(&format!("module `{module}` has it on 6.1.0-56-amd64-loaded")), "{f:#?}");
    }

    // A kernel that cannot have modules (kvm and xfs are built in): what it lacks is an error.
    let (status, monolithic) = check(&[kernel("6.18.44-fc-v769")]);
    assert_eq!(status, Some(1), "{monolithic:#?}");
    let lacks: Vec<&str> = monolithic.iter().map(|f| f.2.split('`').nth(1).unwrap_or("")).collect();
    assert_eq!(lacks, ["fentry/md_flush_request", "kprobe/fevlint_no_such_function"], "{monolithic:#?}");
    assert!(monolithic.iter().all(|f| f.0 == "error"), "{monolithic:#?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kprobe program whose section names no kernel function (`hand_attached.bpf.c`, as
/// Debian's libbpf-tools `gethostlatency` writes `SEC("kprobe/handle_entry")` and attaches
/// it to libc with `bpf_program__attach_uprobe()`), inside tools built here from
/// `hand_attached_tool.c` with libbpf linked dynamically and statically: where the tool
/// never attaches by section (no `bpf_object__attach_skeleton()`), the program's target is
/// one note, not a finding per kernel; where it does (`-DBY_SECTION`), and in the bare
/// object, the misspelt `kprobe/vfs_raed` stays what it was: an error on a kernel without
/// modules (6.18), a warning that names `vfs_read` on Debian's 6.1 (a module could have
/// it). Debian's own gethostlatency gets its two notes and nothing else (it had four errors).
#[test]
fn programs_a_tool_attaches_itself_are_a_note_and_misspelt_targets_stay() {
    if !fevlint_testkit::real_tools("clang, gcc, bpftool, libbpf and Debian's libbpf-tools") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-hand-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "hand_attached.bpf.c");
    let skel = run(Command::new("bpftool").current_dir(&dir).args(["gen", "skeleton", "hand_attached.bpf.o"]));
    std::fs::write(dir.join("hand_attached.skel.h"), skel.stdout).expect("skeleton");
    std::fs::copy(repo().join("server/tests/bpf/hand_attached_tool.c"), dir.join("tool.c")).expect("copy source");
    let static_libbpf = ["/usr/lib/x86_64-linux-gnu/libbpf.a", "-lelf", "-lz"];
    for (out, by_section, libs) in [
        ("by_hand_dynamic", false, &["-lbpf"][..]),
        ("by_hand_static", false, &static_libbpf[..]),
        ("by_section_dynamic", true, &["-lbpf"][..]),
        ("by_section_static", true, &static_libbpf[..]),
    ] {
        let mut gcc = Command::new("gcc");
        gcc.current_dir(&dir).args(["-O2", "-I.", "tool.c", "-o", out]);
        if by_section {
            gcc.arg("-DBY_SECTION");
        }
        run(gcc.args(libs));
    }
    let b611 = |path: &str| -> Vec<B611Finding> {
        let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .current_dir(&dir)
            .args(["check", "--format", "json", "-k"])
            .arg(kernel("6.1.0-56-amd64"))
            .arg("-k")
            .arg(kernel("6.18.44-fc-v769"))
            .arg(path)
            .output()
            .expect("fevlint runs");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let mut found: Vec<_> = json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "B611")
            .map(|d| {
                let s = |k: &str| d[k].as_str().unwrap_or("").to_owned();
                let section = s("message").split('`').nth(1).unwrap_or("").to_owned();
                (section, s("severity"), s("kernel"), format!("{} {}", s("message"), d["notes"]))
            })
            .collect();
        found.sort();
        found
    };
    let shape = |found: &[B611Finding]| -> Vec<(String, String, String)> {
        found.iter().map(|(a, b, c, _)| (a.clone(), b.clone(), c.clone())).collect()
    };
    let t = |a: &str, b: &str, c: &str| (a.to_owned(), b.to_owned(), c.to_owned());
    for tool in ["by_hand_dynamic", "by_hand_static"] {
        let found = b611(tool);
        assert_eq!(
            shape(&found),
            [t("kprobe/handle_entry", "info", ""), t("kprobe/vfs_raed", "info", "")],
            "{tool}: {found:#?}"
        );
        assert!(found[0].3.contains("never calls `bpf_object__attach_skeleton()`"), "{found:#?}");
    }
    for tool in ["by_section_dynamic", "by_section_static", "hand_attached.bpf.o"] {
        let found = b611(tool);
        assert_eq!(
            shape(&found),
            [
                t("kprobe/handle_entry", "error", "6.18.44-fc-v769"),
                t("kprobe/handle_entry", "warning", "6.1.0-56-amd64"),
                t("kprobe/vfs_raed", "error", "6.18.44-fc-v769"),
                t("kprobe/vfs_raed", "warning", "6.1.0-56-amd64"),
            ],
            "{tool}: {found:#?}"
        );
        assert!(found[3].3.contains("similar names in vmlinux: `vfs_read`"), "{tool}: {found:#?}");
    }
    let real = b611("/usr/sbin/gethostlatency");
    assert_eq!(
        shape(&real),
        [t("kprobe/handle_entry", "info", ""), t("kretprobe/handle_return", "info", "")],
        "{real:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Placeholder attach targets (`tests/bpf/placeholder.bpf.c`, and Debian's own
/// libbpf-tools): a `dummy_*` or `foo` target no kernel of the run has is one note for
/// the program (the tool sets the target at run time), a bare `SEC("kprobe")` is nothing,
/// and real missing functions stay findings: a name no kernel has (a warning on these
/// kernels, which may have modules), a `dummy` name one kernel has (error on the other),
/// and libbpf-tools 0.26's `kmem_cache_alloc`, which 6.12 renamed.
#[test]
fn placeholder_attach_targets_are_information_and_missing_functions_errors() {
    if !fevlint_testkit::real_tools("clang, bpftool, libbpf and Debian's libbpf-tools") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-placeholder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "placeholder.bpf.c");
    let b611 = |args: &[&str]| -> Vec<(String, String, String)> {
        let out = fevlint(&dir, args);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "B611")
            .map(|d| {
                let s = |k: &str| d[k].as_str().unwrap_or("").to_owned();
                (s("severity"), s("kernel"), s("message"))
            })
            .collect()
    };
    let found = b611(&["check", "--format", "json", "placeholder.bpf.o"]);
    let about = |section: &str| -> Vec<(String, String)> {
        let quoted = format!("`{section}`");
        found.iter().filter(|(_, _, m)| m.contains(&quoted)).map(|(s, k, _)| (s.clone(), k.clone())).collect()
    };
    for placeholder in ["kprobe/dummy_file_read", "fentry/dummy_file_read", "kretprobe/foo"] {
        assert_eq!(about(placeholder), [("info".to_owned(), String::new())], "{placeholder}: {found:#?}");
    }
    assert!(about("kprobe").is_empty(), "{found:#?}");
    assert_eq!(about("kprobe/alloc_netdev_dummy"), [("error".to_owned(), "6.1.0-56-amd64".to_owned())]);
    // No kernel has it, and both may have modules: a warning each (module_attach_points_...).
    assert_eq!(about("fentry/fevlint_gone_function").iter().filter(|(s, _)| s == "warning").count(), 2);
    assert_eq!(found.len(), 6, "{found:#?}");
    let note = found.iter().find(|(_, _, m)| m.contains("`kprobe/dummy_file_read`")).expect("note");
    assert!(note.2.contains("set at run time") && note.2.contains("any of the 2 kernels"), "{}", note.2);

    // Debian's tools: fsdist's 20 placeholders are notes, slabratetop's rename an error.
    let fsdist = b611(&["check", "--format", "json", "/usr/sbin/fsdist"]);
    assert_eq!(fsdist.len(), 20, "{fsdist:#?}");
    assert!(fsdist.iter().all(|(s, k, m)| s == "info" && k.is_empty() && m.contains("dummy_")), "{fsdist:#?}");
    let slab = b611(&["check", "--format", "json", "/usr/sbin/slabratetop"]);
    assert_eq!(slab.len(), 1, "{slab:#?}");
    assert_eq!((slab[0].0.as_str(), slab[0].1.as_str()), ("error", "6.12.117+deb12-amd64"));
    assert!(slab[0].2.contains("`kmem_cache_alloc` does not exist"), "{}", slab[0].2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fmod_ret` targets against the error-injection list a kernel folder carries
/// (`error_injection_list`, a copy of /sys/kernel/debug/error_injection/list). Debian's
/// kernels are built without the list (`bpf_kernel.rs` boots them: the file is absent and
/// `fmod_ret/vfs_fsync` is refused), so this folder is 6.12's files with the config line
/// turned on: it checks how a list is read and used, not a kernel's answer. With the list,
/// a function on it is modifiable and one off it is an error naming the list; without it
/// the verdict is unknown (information), never a guess; `security_` hooks need no list.
#[test]
fn fmod_ret_targets_are_judged_by_the_folders_error_injection_list() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-eil-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "attach.bpf.c");
    let release = "6.12.117+deb12-amd64";
    let k = dir.join("k");
    std::fs::create_dir_all(&k).expect("kernel folder");
    for file in ["vmlinux.btf", "System.map", "available_filter_functions", "kprobe_blacklist"] {
        std::fs::write(k.join(file), fevlint_testkit::kernel_fixture_file(release, file).1).expect("copy");
    }
    let config = String::from_utf8(fevlint_testkit::kernel_fixture_file(release, "config").1).expect("config");
    assert!(config.contains("# CONFIG_FUNCTION_ERROR_INJECTION is not set"));
    let config = config.replace("# CONFIG_FUNCTION_ERROR_INJECTION is not set", "CONFIG_FUNCTION_ERROR_INJECTION=y");
    std::fs::write(k.join("config"), config).expect("config");
    let modret = |list: Option<&str>| -> Vec<(String, String)> {
        let path = k.join("error_injection_list");
        match list {
            Some(text) => std::fs::write(&path, text).expect("list"),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
        let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .current_dir(&dir)
            .args(["check", "--format", "json", "-k"])
            .arg(&k)
            .arg("attach.bpf.o")
            .output()
            .expect("fevlint runs");
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["code"] == "B611" && d["message"].as_str().is_some_and(|m| m.contains("fmod_ret/")))
            .map(|d| (d["severity"].as_str().unwrap_or("").to_owned(), d["message"].as_str().unwrap_or("").to_owned()))
            .collect()
    };
    let off = modret(Some("should_failslab\tERRNO\nopen_ctree [btrfs]\tERRNO\n"));
    assert_eq!(off.len(), 1, "{off:#?}");
    assert_eq!(off[0].0, "error", "{off:#?}");
    assert!(
        off[0].1.contains("`fmod_ret/vfs_fsync`")
            && off[0].1.contains("is not on it (`")
            && off[0].1.contains("error_injection_list`, 2 functions)"),
        "{}",
        off[0].1
    );
    let on = modret(Some("should_failslab\tERRNO\nvfs_fsync\tERRNO\n"));
    assert!(on.is_empty(), "{on:#?}");
    let unknown = modret(None);
    assert_eq!(unknown.len(), 1, "{unknown:#?}");
    assert_eq!(unknown[0].0, "info", "{unknown:#?}");
    assert!(unknown[0].1.contains("cannot tell whether `vfs_fsync`"), "{}", unknown[0].1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// An object libbpf cannot open (an undefined function that is neither `__ksym` nor
/// `__kconfig`: `unlinked.bpf.c` calls into an object it was never linked with, as
/// Linux's selftest `linked_funcs1.c` does) is refused on every kernel, and libbpf is the
/// judge: `bpftool gen skeleton` (`bpf_object__open_mem`) refuses it with the same words.
/// fevlint said nothing about such an object before.
#[test]
fn an_object_libbpf_cannot_open_is_refused_on_every_kernel() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-unlinked-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "unlinked.bpf.c");
    let libbpf = Command::new("bpftool")
        .current_dir(&dir)
        .args(["gen", "skeleton", "unlinked.bpf.o"])
        .output()
        .expect("bpftool (scripts/install-test-deps.sh installs it)");
    assert!(!libbpf.status.success(), "libbpf opened it");
    let said = String::from_utf8_lossy(&libbpf.stderr).into_owned();
    let words = "failed to find BTF for extern 'count_elsewhere' [";
    assert!(said.contains(words), "{said}");
    let out = fevlint(&dir, &["check", "--format", "json", "unlinked.bpf.o"]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let refused: Vec<_> =
        json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B603").collect();
    let kernels: Vec<_> = refused.iter().map(|d| d["kernel"].as_str().expect("kernel")).collect();
    assert_eq!(kernels, ["6.1.0-56-amd64", "6.12.117+deb12-amd64"], "{json:#}");
    for d in &refused {
        assert!(d["message"].as_str().expect("message").contains("`count_elsewhere`"), "{d:#}");
        assert!(d["notes"].to_string().contains(words), "{d:#}");
        let line = d["line"].as_u64().expect("line");
        let text = std::fs::read_to_string(dir.join("unlinked.bpf.c")).expect("source");
        assert!(text.lines().nth(line as usize - 1).expect("line").contains("count_elsewhere(1)"), "{d:#}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Objects libbpf 1.1 refuses whatever the kernel, with libbpf itself as the judge
/// (`relo_judge.c` linked with Debian's `libbpf.a` opens each with the 6.1.0-56 BTF and
/// loads it offline): a `static` entry program and an invalid `pinning` value and a
/// `.struct_ops` slot pointing at a kprobe program (open), the only function of an
/// object in `.text` (load); and their controls, which libbpf loads: two `.text`
/// functions, a `.struct_ops` of struct_ops programs. fevlint said nothing about any of
/// them; now each refused object is a B603 error on every kernel whose note is libbpf's
/// own log line, and the controls get nothing.
#[test]
fn objects_libbpf_refuses_whatever_the_kernel_are_errors_in_its_words() {
    if !fevlint_testkit::real_tools("clang, gcc, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-open-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    let judge = dir.join("relo_judge");
    run(Command::new("gcc")
        .arg("-O1")
        .arg(repo().join("server/crates/bpf/tests/judge/relo_judge.c"))
        .arg("-o")
        .arg(&judge)
        .args(["/usr/lib/x86_64-linux-gnu/libbpf.a", "-lelf", "-lz"]));
    // (source, libbpf refuses it, at open)
    let cases = [
        ("open_static.bpf.c", true, true),
        ("open_pinning.bpf.c", true, true),
        ("open_struct_ops.bpf.c", true, true),
        ("text_only.bpf.c", true, false),
        ("text_two.bpf.c", false, false),
        ("open_struct_ops_ok.bpf.c", false, false),
    ];
    for (source, refused, at_open) in cases {
        fevlint_testkit::bpf::compile(&dir, source);
        let object = source.replace(".c", ".o");
        // The judge exits non-zero where libbpf refuses: its log is the answer.
        let log = Command::new(&judge).arg(dir.join("6.1.0-56-amd64.btf")).arg(dir.join(&object)).output();
        let log = String::from_utf8_lossy(&log.expect("relo_judge runs").stdout).into_owned();
        let libbpf_refused = !log.contains("JUDGE: load returned 0");
        assert_eq!(libbpf_refused, refused, "{source}: libbpf says {log}");
        assert_eq!(log.contains("JUDGE: open failed"), at_open, "{source}: {log}");
        let out = fevlint(&dir, &["check", "--format", "json", &object]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let found: Vec<_> =
            json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B603").collect();
        if !refused {
            assert!(found.is_empty(), "{source}: {json:#}");
            assert_eq!(out.status.code(), Some(0), "{source}: {json:#}");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{source}: {json:#}");
        let kernels: Vec<_> = found.iter().map(|d| d["kernel"].as_str().unwrap_or("")).collect();
        assert_eq!(kernels, ["6.1.0-56-amd64", "6.12.117+deb12-amd64"], "{source}: {json:#}");
        for d in &found {
            assert_eq!(d["severity"], "error", "{d:#}");
            let stage = if at_open { "libbpf cannot open the object" } else { "libbpf refuses to load the object" };
            assert!(d["message"].as_str().expect("message").starts_with(stage), "{d:#}");
            let note = d["notes"][0].as_str().expect("note");
            let words = note.strip_prefix("libbpf: ").expect("libbpf's words");
            assert!(log.contains(&format!("libbpf: {words}")), "{source}: libbpf did not say {words:?}: {log}");
            assert!(d["file"].as_str().expect("file").ends_with(source), "{source}: {d:#}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `.struct_ops` types and members, which libbpf 1.1 looks up in each kernel's BTF at
/// load: libbpf is the judge, per kernel (`relo_judge.c` with `JUDGE_KERNEL_BTF`, so that
/// libbpf reads the fixture's BTF where it would read /sys/kernel/btf/vmlinux). A
/// `struct bpf_dummy_ops` built against 6.12 (its `test_sleepable` member is new) is
/// refused on 6.1 and loads on 6.12; a type no kernel has is refused on both; a
/// `struct tcp_congestion_ops` loads on both. fevlint's B603 errors are on exactly the
/// kernels libbpf refuses, in libbpf's words; it said nothing before.
#[test]
fn struct_ops_types_are_judged_on_each_kernel_as_libbpf_loads_them() {
    if !fevlint_testkit::real_tools("clang, gcc, bpftool and libbpf") {
        return;
    }
    let root = std::env::temp_dir().join(format!("fevlint-bpf-struct-ops-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let kernels = ["6.1.0-56-amd64", "6.12.117+deb12-amd64"];
    let judge = root.join("relo_judge");
    std::fs::create_dir_all(&root).expect("scratch");
    run(Command::new("gcc")
        .arg("-O1")
        .arg(repo().join("server/crates/bpf/tests/judge/relo_judge.c"))
        .arg("-o")
        .arg(&judge)
        .args(["/usr/lib/x86_64-linux-gnu/libbpf.a", "-lelf", "-lz"]));
    // (source, the vmlinux.h it is built against, the kernels libbpf refuses it on)
    let cases: [(&str, &str, &[&str]); 3] = [
        ("struct_ops_member.bpf.c", "6.12.117+deb12-amd64", &["6.1.0-56-amd64"]),
        ("struct_ops_unknown.bpf.c", "6.1.0-56-amd64", &kernels),
        ("open_struct_ops_ok.bpf.c", "6.1.0-56-amd64", &[]),
    ];
    for (source, built, refused_on) in cases {
        let dir = root.join(source.replace(".bpf.c", ""));
        std::fs::create_dir_all(&dir).expect("scratch");
        fevlint_testkit::bpf::vmlinux_h(built, &dir);
        fevlint_testkit::bpf::compile(&dir, source);
        let object = dir.join(source.replace(".c", ".o"));
        let mut logs = Vec::new();
        for k in kernels {
            let btf = root.join(format!("{k}.btf"));
            std::fs::write(&btf, fevlint_testkit::kernel_fixture_file(k, "vmlinux.btf").1).expect("BTF");
            let out = Command::new(&judge).env("JUDGE_KERNEL_BTF", &btf).arg(&btf).arg(&object).output();
            let log = String::from_utf8_lossy(&out.expect("relo_judge runs").stdout).into_owned();
            let refused = !log.contains("JUDGE: load returned 0");
            assert_eq!(refused, refused_on.contains(&k), "{source} on {k}: libbpf says {log}");
            logs.push((k, log));
        }
        let out = fevlint(&dir, &["check", "--format", "json", &source.replace(".c", ".o")]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let found: Vec<_> =
            json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B603").collect();
        let on: Vec<&str> = found.iter().map(|d| d["kernel"].as_str().unwrap_or("")).collect();
        assert_eq!(on, refused_on, "{source}: {json:#}");
        for d in &found {
            assert_eq!(d["severity"], "error", "{d:#}");
            let k = d["kernel"].as_str().expect("kernel");
            let words = d["notes"][0].as_str().and_then(|n| n.strip_prefix("libbpf: ")).expect("libbpf's words");
            let log = &logs.iter().find(|(n, _)| *n == k).expect("judged").1;
            assert!(log.contains(&format!("libbpf: {words}")), "{source} on {k}: libbpf did not say {words:?}: {log}");
            assert!(d["file"].as_str().expect("file").ends_with(source), "{d:#}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A program in a section libbpf 1.1 does not recognize (`tc/ingress`, a name of libbpf
/// 1.3) makes `bpf_object__load()` refuse the object: libbpf 1.1 itself is the judge
/// (`relo_judge.c` linked with Debian's `libbpf.a` loads it offline). fevlint warns (a
/// loader may set the type itself, and newer libbpf knows the name); it said nothing before.
#[test]
fn a_section_libbpf_does_not_recognize_is_a_warning() {
    if !fevlint_testkit::real_tools("clang, gcc, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-newer-section-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "newer_section.bpf.c");
    let judge = dir.join("relo_judge");
    run(Command::new("gcc")
        .arg("-O1")
        .arg(repo().join("server/crates/bpf/tests/judge/relo_judge.c"))
        .arg("-o")
        .arg(&judge)
        .args(["/usr/lib/x86_64-linux-gnu/libbpf.a", "-lelf", "-lz"]));
    let log = run(Command::new(&judge).arg(dir.join("6.1.0-56-amd64.btf")).arg(dir.join("newer_section.bpf.o")));
    let log = String::from_utf8_lossy(&log.stdout).into_owned();
    assert!(log.contains("unrecognized ELF section name 'tc/ingress'"), "{log}");
    assert!(log.contains("JUDGE: load returned -22"), "{log}");
    let out = fevlint(&dir, &["check", "--format", "json", "newer_section.bpf.o"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let found: Vec<_> =
        json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B603").collect();
    assert_eq!(found.len(), 1, "{json:#}");
    assert_eq!(found[0]["severity"], "warning");
    assert!(found[0]["message"].as_str().expect("message").contains("`tc/ingress`"), "{json:#}");
    assert!(found[0]["notes"].to_string().contains("unrecognized ELF section name 'tc/ingress'"), "{json:#}");
    let text = std::fs::read_to_string(dir.join("newer_section.bpf.c")).expect("source");
    let line = found[0]["line"].as_u64().expect("line") as usize;
    assert!(text.lines().nth(line - 1).expect("line").contains("SEC(\"tc/ingress\")"), "{json:#}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every output puts a CO-RE finding where the language server does: at the name its
/// access ends in. `tests/bpf/hover.bpf.c` reads `f_version` as the second
/// `BPF_CORE_READ` of its line (clang 14's line info gives the macro's column): the drift
/// on 6.12 is at `f_version` in the human output, JSON and SARIF (as `lsp_bpf.rs`'s
/// `each_access_of_a_line_has_its_own_hover_and_range` asserts for the editor). A source
/// that no longer spells the member falls back to line info's line and column.
#[test]
fn a_relocation_finding_is_at_the_member_it_reads_in_every_format() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-place-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "hover.bpf.c");
    let text = std::fs::read_to_string(dir.join("hover.bpf.c")).expect("source");
    let (line, l) = text.lines().enumerate().find(|(_, l)| l.contains("f_version")).expect("f_version");
    let (line, column) = (line as u64 + 1, l.find("f_version").expect("member") as u64 + 1);
    // Where clang's line info puts the f_version read (the first macro's column).
    let out = fevlint(&dir, &["bpf", "relocations", "--format", "json", "hover.bpf.o"]);
    let records: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let record = records
        .as_array()
        .expect("records")
        .iter()
        .find(|r| r["local_spec"].as_str().is_some_and(|s| s.contains(".f_version ")))
        .expect("the f_version relocation");
    let clang = (record["source"]["line"].as_u64(), record["source"]["column"].as_u64());
    assert_eq!(clang.0, Some(line), "{record}");
    assert_ne!(clang.1, Some(column), "clang 14 gives the macro's column: {record}");

    let out = fevlint(&dir, &["check", "--format", "json", "hover.bpf.o"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let drift: Vec<&serde_json::Value> =
        json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B604").collect();
    assert_eq!(drift.len(), 1, "{json:#}");
    assert_eq!((drift[0]["line"].as_u64(), drift[0]["column"].as_u64()), (Some(line), Some(column)), "{json:#}");

    let out = fevlint(&dir, &["check", "--format", "sarif", "hover.bpf.o"]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).expect("SARIF");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let drift: Vec<&serde_json::Value> = results.iter().filter(|r| r["ruleId"] == "B604").collect();
    assert_eq!(drift.len(), 1, "{sarif:#}");
    let region = &drift[0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!((region["startLine"].as_u64(), region["startColumn"].as_u64()), (Some(line), Some(column)));
    assert_eq!(region["endColumn"].as_u64(), Some(column + "f_version".len() as u64), "{region}");

    let out = fevlint(&dir, &["check", "--color", "never", "hover.bpf.o"]);
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(human.contains(&format!("hover.bpf.c:{line}:{column}")), "{human}");

    // The source edited since the build (the member renamed): line info's place.
    std::fs::write(dir.join("hover.bpf.c"), text.replace("f_version", "f_renamed")).expect("edit");
    let out = fevlint(&dir, &["check", "--format", "json", "hover.bpf.o"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let drift: Vec<&serde_json::Value> =
        json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B604").collect();
    assert_eq!((drift[0]["line"].as_u64(), drift[0]["column"].as_u64()), clang, "{json:#}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A poisoned CO-RE read under a `const volatile` flag (`tests/bpf/rodata.bpf.c`): with
/// the flag 0 in `.rodata`, which libbpf freezes and the verifier reads as a constant, the
/// read is dead code (information, B602); built with the flag 1 it is reached (B601). The
/// kernels' own verdict on such a read: `bpf_kernel.rs` (the selftests' `core_kern.c`).
#[test]
fn a_read_only_flag_guards_a_relocation_as_the_verifier_reads_it() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-rodata-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    fevlint_testkit::bpf::compile(&dir, "rodata.bpf.c");
    let text = std::fs::read_to_string(dir.join("rodata.bpf.c")).expect("source");
    std::fs::write(dir.join("set.bpf.c"), text.replace("never = 0", "never = 1")).expect("variant");
    fevlint_testkit::bpf::clang(&dir, "set.bpf.c");
    let codes = |object: &str| {
        let out = fevlint(&dir, &["check", "--format", "json", object]);
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let mut codes: Vec<String> = json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .filter(|d| d["message"].as_str().is_some_and(|m| m.contains("gone___local.len")))
            .map(|d| d["code"].as_str().expect("code").to_owned())
            .collect();
        codes.sort();
        codes
    };
    assert_eq!(codes("rodata.bpf.o"), ["B602", "B602"], "flag 0: dead code on both kernels");
    // Said to hang on the flag, which a loader may set before loading.
    let out = fevlint(&dir, &["check", "--format", "json", "rodata.bpf.o"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    for d in json["diagnostics"].as_array().expect("diagnostics").iter().filter(|d| d["code"] == "B602") {
        assert!(d["notes"].to_string().contains("read-only global"), "{d}");
        let message = d["message"].as_str().expect("message");
        assert!(message.ends_with("a read-only global's value in the object guards it"), "{d}");
    }
    assert_eq!(codes("set.bpf.o"), ["B601", "B601"], "flag 1: reached on both kernels");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A compiled object reads only the kernel files its programs ask about: a kernel folder
/// whose config does not parse still checks an object whose attach points all exist (no
/// rule needs the config for them), while a script against the same folder, and the
/// object against a folder whose ftrace list (which its kprobe needs) does not parse, are
/// refused as before.
#[test]
fn an_object_reads_only_the_kernel_files_it_needs() {
    if !fevlint_testkit::real_tools("clang, bpftool and libbpf") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("fevlint-bpf-lazy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch");
    fevlint_testkit::bpf::vmlinux_h("6.1.0-56-amd64", &dir);
    std::fs::write(
        dir.join("present.bpf.c"),
        "#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n\nSEC(\"kprobe/vfs_read\")\nint probe(void *ctx)\n{\n\treturn 0;\n}\n\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n",
    )
    .expect("source");
    fevlint_testkit::bpf::clang(&dir, "present.bpf.c");
    std::fs::write(dir.join("probe.fev"), "vfs_read(x64 file)\n").expect("script");
    let release = "6.12.117+deb12-amd64";
    let folder = |name: &str, broken: &str| {
        let k = dir.join(name);
        std::fs::create_dir_all(&k).expect("kernel folder");
        for file in ["vmlinux.btf", "System.map", "available_filter_functions", "kprobe_blacklist", "config"] {
            let bytes = fevlint_testkit::kernel_fixture_file(release, file).1;
            let bytes = if file == broken { b"this line is not a config line\n".to_vec() } else { bytes };
            std::fs::write(k.join(file), bytes).expect("copy");
        }
        k
    };
    let check = |k: &Path, input: &str| {
        Command::new(env!("CARGO_BIN_EXE_fevlint"))
            .current_dir(&dir)
            .args(["check", "--format", "json", "-k"])
            .arg(k)
            .arg(input)
            .output()
            .expect("fevlint runs")
    };
    let bad_config = folder("bad-config", "config");
    let out = check(&bad_config, "present.bpf.o");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(json["diagnostics"].as_array().map(Vec::len), Some(0), "{json:#}");
    let out = check(&bad_config, "probe.fev");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot open kernel") && err.contains("config"), "{err}");
    let bad_ftrace = folder("bad-ftrace", "available_filter_functions");
    std::fs::write(bad_ftrace.join("available_filter_functions"), [0xffu8, 0xfe, b'\n']).expect("broken list");
    let out = check(&bad_ftrace, "present.bpf.o");
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot open kernel") && err.contains("available_filter_functions"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
