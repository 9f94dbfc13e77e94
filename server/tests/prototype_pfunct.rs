//! `fevlint_types::layout::pahole_prototype` prints every function of the 6.12 fixture's
//! BTF as `pfunct -P` prints it (function pointers, `const` pointers, variadics):
//! each of pfunct's lines is one of ours. Needs pfunct (Debian: dwarves) and zstd:
//! `FEVLINT_REAL_TOOLS=1`; about 10 s.

use fevlint_kernel::Kernel;
use std::collections::HashSet;
use std::path::Path;
use std::process::Command;

#[test]
fn every_prototype_is_pfuncts() {
    if std::env::var_os("FEVLINT_REAL_TOOLS").is_none() {
        eprintln!("skipped: set FEVLINT_REAL_TOOLS=1");
        return;
    }
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels/6.12.117+deb12-amd64");
    let dir = std::env::temp_dir().join(format!("fevlint-pfunct-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let raw = dir.join("vmlinux.btf");
    let z = Command::new("zstd").arg("-dqf").arg(folder.join("vmlinux.btf.zst")).arg("-o").arg(&raw).status();
    assert!(z.expect("zstd").success());
    let out = Command::new("pfunct").args(["-P", "-F", "btf"]).arg(&raw).output().expect("pfunct");
    assert!(out.status.success());
    let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
    let k = Kernel::open(&folder).unwrap_or_else(|e| panic!("{e}"));
    let src = k.types().expect("types");
    let mut ours = HashSet::new();
    for name in src.function_names().expect("names") {
        for f in src.functions(&name).expect("functions") {
            ours.insert(fevlint_types::layout::pahole_prototype(src, &f).expect("prototype"));
        }
    }
    let missing: Vec<&str> = theirs.lines().filter(|l| !ours.contains(*l)).collect();
    assert!(theirs.lines().count() > 40_000);
    assert!(
        missing.is_empty(),
        "{} of pfunct's lines not printed: {:#?}",
        missing.len(),
        &missing[..missing.len().min(20)]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
