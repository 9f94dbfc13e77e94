//! Generated bpftrace scripts with known verdicts, per fixture kernel: probes built from
//! the kernels' own lists and independent tools' dumps (bpftool's raw BTF dump of
//! functions and structs in `reference/`, the raw `available_filter_functions`,
//! `kprobe_blacklist` and `System.map` text), each correct or with exactly one defect.
//! fevlint must report exactly the defect's rule on each defective probe and nothing on
//! each correct one: 0 false positives, 0 misses.

mod bpftrace_cases;

use bpftrace_cases::{generate, kernel_dir};

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
