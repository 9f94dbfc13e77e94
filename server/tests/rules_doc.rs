//! Rule documentation is executed and published: each rule fires on its `Example` and
//! stays quiet on `Use instead`; `docs/rules/*.md` is generated from the docs and must
//! not be stale (regenerate with `UPDATE_EXPECT=1 cargo test --test rules_doc`).

use fevlint_check::rules::{doc_examples, REGISTRY};
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parser, Target};
use std::sync::OnceLock;

/// Kernel rules run their examples against the Debian 6.12 fixture.
fn kernel() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| open("6.12.117+deb12-amd64"))
}

/// Drift rules compare Debian 6.1.0-56 (the baseline) with 6.12.
fn baseline() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| open("6.1.0-56-amd64"))
}

fn open(name: &str) -> Kernel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name);
    Kernel::open(&path).expect("fixture kernel opens")
}

/// The codes a BPF program draws (the `B` rules' examples are C): compiled by clang 14
/// against a `vmlinux.h` of 6.1.0-56, checked on 6.1.0-56 and 6.12.
fn bpf_codes(text: &str) -> Vec<&'static str> {
    use std::process::Command;
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("fevlint-rules-doc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let btf = dir.join("6.1.btf");
        let raw = baseline().inputs().btf.as_ref().expect("BTF").value.as_ref().to_vec();
        std::fs::write(&btf, raw).expect("write BTF");
        let h = Command::new("bpftool").args(["btf", "dump", "file"]).arg(&btf).args(["format", "c"]).output();
        let h = h.expect("bpftool (scripts/install-test-deps.sh installs it)");
        assert!(h.status.success(), "bpftool: {}", String::from_utf8_lossy(&h.stderr));
        std::fs::write(dir.join("vmlinux.h"), h.stdout).expect("vmlinux.h");
        dir
    });
    static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let i = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let src = dir.join(format!("example{i}.bpf.c"));
    let obj = src.with_extension("o");
    std::fs::write(&src, text).expect("write example");
    let out = Command::new("clang")
        .args(["-g", "-O2", "-target", "bpf", "-D__TARGET_ARCH_x86", "-I"])
        .arg(dir)
        .arg("-c")
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .expect("clang (scripts/install-test-deps.sh installs it)");
    assert!(out.status.success(), "clang:\n{}\n{text}", String::from_utf8_lossy(&out.stderr));
    let object = fevlint_bpf::BpfObject::parse("example", std::fs::read(&obj).expect("object")).expect("object reads");
    let kernels = [fevlint_check::bpf::BpfKernel::new(baseline()), fevlint_check::bpf::BpfKernel::new(kernel())];
    let found = fevlint_check::analysis::check_objects(std::slice::from_ref(&object), &kernels, &|_| true);
    found.into_iter().flatten().map(|f| f.diagnostic.code).collect()
}

/// The codes a script draws: drift rules against 6.1.0-56 → 6.12 (D505 through a lock
/// made on 6.1.0-56), kernel rules on 6.12, file rules alone.
fn codes(rule: &fevlint_check::rules::Rule, text: &str) -> Vec<&'static str> {
    if rule.code.starts_with('B') {
        return bpf_codes(text);
    }
    if fevlint_check::rules::is_mainline(rule) {
        // Mainline rules: the example as a `*.dynevents` file on 6.12.
        return fevlint_check::dynevents::check(text, &[kernel()]).iter().map(|d| d.code).collect();
    }
    let mut parser = Parser::new();
    let settings = fevlint_check::config::Settings::default();
    let diags = if fevlint_check::rules::is_bpftrace(rule) {
        // bpftrace rules: the script as a `*.bt`, on the same kernels.
        let kernels: Vec<&Kernel> = if rule.needs_baseline() {
            vec![baseline(), kernel()]
        } else if rule.needs_kernel() {
            vec![kernel()]
        } else {
            vec![]
        };
        fevlint_check::bpftrace::check(text, &kernels)
    } else if rule.code == "D505" {
        let locked: Vec<_> =
            fevlint_check::analysis::meanings(&mut parser, text, baseline()).into_iter().map(|(_, _, m)| m).collect();
        let name = baseline().name.clone();
        fevlint_check::analysis::check(
            &mut parser,
            text.as_bytes().to_vec(),
            &fevlint_check::analysis::Options::new(Target::X86_64)
                .kernels(&[kernel()])
                .settings(&settings)
                .lock(Some((name.as_str(), locked.as_slice()))),
        )
        .1
    } else if rule.needs_baseline() {
        fevlint_check::analysis::check(
            &mut parser,
            text.as_bytes().to_vec(),
            &fevlint_check::analysis::Options::new(Target::X86_64).kernels(&[baseline(), kernel()]),
        )
        .1
    } else if rule.needs_kernel() {
        fevlint_check::analysis::check(
            &mut parser,
            text.as_bytes().to_vec(),
            &fevlint_check::analysis::Options::new(Target::X86_64).kernels(&[kernel()]),
        )
        .1
    } else {
        fevlint_check::analysis::check(
            &mut parser,
            text.as_bytes().to_vec(),
            &fevlint_check::analysis::Options::new(Target::X86_64),
        )
        .1
    };
    diags.iter().map(|d| d.code).collect()
}

/// Expands the doc notation for bytes Markdown cannot show: `\0` is a NUL byte and
/// `{N × "s"}` is `s` repeated N times.
fn expand(src: &str) -> String {
    let mut s = src.replace("\\0", "\0");
    while let Some(start) = s.find('{') {
        let Some(len) = s[start..].find("\"}") else { break };
        let inner = &s[start + 1..start + len + 1];
        let (n, rest) = inner.split_once(" × \"").expect("{N × \"s\"}");
        let times: usize = n.parse().expect("count");
        s = format!("{}{}{}", &s[..start], rest.repeat(times), &s[start + len + 2..]);
    }
    s
}

/// Each rule of `rules` fires on its `Example` and not on its `Use instead`.
fn examples_fire(rules: &[&fevlint_check::rules::Rule]) {
    let mut parser = Parser::new();
    for rule in rules {
        let (example, instead) = doc_examples(rule.doc);
        assert!(!example.is_empty() && !instead.is_empty(), "{}: doc needs Example and Use instead", rule.code);
        let fired = |text: &str| codes(rule, &expand(text)).contains(&rule.code);
        let _ = &mut parser;
        assert!(fired(&example), "{} does not fire on its Example:\n{example}", rule.code);
        assert!(!fired(&instead), "{} fires on its Use instead:\n{instead}", rule.code);
        for heading in ["## What it does", "## Why is this bad?", "## Example", "## Use instead"] {
            assert!(rule.doc.contains(heading), "{}: doc lacks {heading}", rule.code);
        }
    }
}

#[test]
fn every_rule_fires_on_its_example_and_not_on_the_fix() {
    let script_rules: Vec<_> = REGISTRY.iter().copied().filter(|r| !fevlint_check::rules::is_bpf_object(r)).collect();
    examples_fire(&script_rules);
}

/// The `B` rules' examples are C, compiled by clang against bpftool's `vmlinux.h`.
#[test]
fn every_bpf_object_rule_fires_on_its_compiled_example_and_not_on_the_fix() {
    if !fevlint_testkit::real_tools("clang and bpftool") {
        return;
    }
    let object_rules: Vec<_> = REGISTRY.iter().copied().filter(|r| fevlint_check::rules::is_bpf_object(r)).collect();
    assert!(!object_rules.is_empty());
    examples_fire(&object_rules);
}

#[test]
fn registry_is_sorted_and_unique() {
    let codes: Vec<&str> = REGISTRY.iter().map(|r| r.code).collect();
    let mut sorted = codes.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(codes, sorted);
}

#[test]
fn docs_rules_are_generated() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/rules");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut index = String::from("# Rules\n\nGenerated from the rule sources by `UPDATE_EXPECT=1 cargo test --test rules_doc`.\n\n| code | name | severity |\n|---|---|---|\n");
    let mut stale = Vec::new();
    for rule in REGISTRY {
        index.push_str(&format!("| [{0}]({0}.md) | {1} | {2} |\n", rule.code, rule.name, rule.severity.as_str()));
        let path = dir.join(format!("{}.md", rule.code));
        compare(&path, rule.doc, update, &mut stale);
    }
    compare(&dir.join("README.md"), &index, update, &mut stale);
    assert!(stale.is_empty(), "stale generated docs (run UPDATE_EXPECT=1 cargo test --test rules_doc): {stale:?}");
}

fn compare(path: &std::path::Path, want: &str, update: bool, stale: &mut Vec<String>) {
    let have = std::fs::read_to_string(path).unwrap_or_default();
    if have == want {
        return;
    }
    if update {
        std::fs::create_dir_all(path.parent().expect("docs dir")).expect("create docs/rules");
        std::fs::write(path, want).expect("write generated doc");
    } else {
        stale.push(path.display().to_string());
    }
}
