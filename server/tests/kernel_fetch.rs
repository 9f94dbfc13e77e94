//! Kernels by version: `fevlint kernel fetch debian:6.1.0-56-amd64` downloads the image
//! package through apt into a private cache; `--kernel debian:…` then works where a path
//! does, and reads what the fixture folder made from the same build reads: the same
//! types (BTF), every text symbol at System.map's address (decoded from the image's
//! kallsyms), the same ftrace list (from its mcount table), the same findings.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fevlint(cache: &Path, args: &[&str]) -> (String, String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(args)
        .env("FEVLINT_CACHE_DIR", cache)
        .current_dir(root())
        .output()
        .expect("fevlint");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn findings(out: &str) -> Vec<String> {
    let mut v: Vec<String> =
        out.lines().filter(|l| l.starts_with("error[") || l.starts_with("warning[")).map(str::to_owned).collect();
    v.sort();
    v
}

#[test]
fn a_debian_kernel_by_version_reads_like_its_fixture() {
    if !fevlint_testkit::real_tools("apt and the network") {
        return;
    }
    // Shared between runs of this test (the download is the slow part), never the user's.
    let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("kernel-fetch-cache");
    // 6.1.170 lays its tables out otherwise than 6.1.192 (padding before the base).
    let (out, err, code) = fevlint(&cache, &["kernel", "fetch", "debian:6.1.0-47-amd64"]);
    assert_eq!(code, Some(0), "{err}");
    symbols_and_ftrace_match(&PathBuf::from(out.trim()), &root().join("fixtures/kernels/6.1.0-47-amd64"));
    let (out, err, code) = fevlint(&cache, &["kernel", "fetch", "debian:6.1.0-56-amd64"]);
    assert_eq!(code, Some(0), "{err}");
    let dir = PathBuf::from(out.trim());
    assert_eq!(dir, cache.join("kernels/debian/6.1.0-56-amd64"));
    for f in ["vmlinuz", "config", "FETCHED.md"] {
        assert!(dir.join(f).is_file(), "{f} missing in {}", dir.display());
    }
    let fetched = std::fs::read_to_string(dir.join("FETCHED.md")).expect("FETCHED.md");
    assert!(fetched.contains("linux-image-6.1.0-56-amd64-unsigned") && fetched.contains("6.1.192-2"), "{fetched}");
    // Cached: a second fetch is the same folder, and nothing is left half-written.
    let (again, _, _) = fevlint(&cache, &["kernel", "fetch", "debian:6.1.0-56-amd64"]);
    assert_eq!(again, out);
    let stray: Vec<_> = std::fs::read_dir(cache.join("kernels/debian"))
        .expect("cache")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".fetch-"))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");

    // The same BTF as the fixture made from the same package.
    let fixture = root().join("fixtures/kernels/6.1.0-56-amd64");
    let fixture = fixture.to_str().unwrap_or_default();
    for ty in ["struct file", "struct sk_buff", "struct task_struct"] {
        let (a, _, _) = fevlint(&cache, &["kernel", "type", "debian:6.1.0-56-amd64", ty]);
        let (b, _, _) = fevlint(&cache, &["kernel", "type", fixture, ty]);
        assert!(a.starts_with(&format!("{ty} {{")), "{a}");
        assert_eq!(a, b, "{ty}");
    }
    symbols_and_ftrace_match(&dir, Path::new(fixture));
    // So the examples get exactly the fixture's findings.
    let (a, _, _) = fevlint(&cache, &["check", "--kernel", "debian:6.1.0-56-amd64", "examples/"]);
    let (b, _, _) = fevlint(&cache, &["check", "--kernel", fixture, "examples/"]);
    assert_eq!(findings(&a), findings(&b));
    assert!(findings(&a).len() > 20, "{a}");

    // In a fevlint.toml too.
    let project = cache.join("project");
    std::fs::create_dir_all(&project).expect("project dir");
    std::fs::write(project.join("fevlint.toml"), "kernels = [\"debian:6.1.0-56-amd64\"]\n").expect("toml");
    std::fs::copy(root().join("examples/vfs.fev"), project.join("vfs.fev")).expect("copy");
    let (c, _, _) = fevlint(&cache, &["check", project.join("vfs.fev").to_str().unwrap_or_default()]);
    let (d, _, _) = fevlint(&cache, &["check", "--kernel", fixture, "examples/vfs.fev"]);
    assert_eq!(findings(&c).len(), findings(&d).len(), "{c}\n{d}");
    assert!(!findings(&c).is_empty());

    // What the archive offers, with what is cached.
    let (list, err, code) = fevlint(&cache, &["kernel", "list", "debian"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(list.lines().any(|l| l == "debian:6.1.0-56-amd64\t(cached)"), "{list}");
    assert!(
        list.lines().any(|l| l == "debian:6.12.117+deb12-amd64" || l.starts_with("debian:6.12.117+deb12-amd64\t")),
        "{list}"
    );
    // A version that is not one is refused before apt runs.
    let (_, err, code) = fevlint(&cache, &["kernel", "fetch", "debian:../../etc"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("is not a Debian kernel version"), "{err}");
}

/// The symbols decoded from the image's kallsyms: every text symbol where the build's
/// real System.map (fixture) puts it; the ftrace list named from the mcount table with
/// them: the running kernel's available_filter_functions (fixture), line for line.
fn symbols_and_ftrace_match(dir: &Path, fixture: &Path) {
    let unzstd = |p: PathBuf| {
        String::from_utf8(zstd::decode_all(std::fs::read(p).expect("fixture").as_slice()).expect("zstd"))
            .expect("utf-8")
    };
    let map = unzstd(fixture.join("System.map.zst"));
    let real: std::collections::HashSet<(&str, &str)> = map
        .lines()
        .filter_map(|l| {
            let v: Vec<&str> = l.split_whitespace().collect();
            Some((*v.get(2)?, *v.first()?))
        })
        .collect();
    let decoded = std::fs::read_to_string(dir.join("System.map")).expect("decoded System.map");
    let text: Vec<(&str, &str)> = decoded
        .lines()
        .filter_map(|l| {
            let v: Vec<&str> = l.split_whitespace().collect();
            matches!(*v.get(1)?, "T" | "t").then(|| (v[2], v[0]))
        })
        .collect();
    assert!(text.len() > 40_000, "{}", text.len());
    let wrong: Vec<_> = text.iter().filter(|s| !real.contains(s)).take(5).collect();
    assert!(wrong.is_empty(), "{}: decoded symbols not in System.map: {wrong:?}", dir.display());
    let mut ours: Vec<String> = std::fs::read_to_string(dir.join("available_filter_functions"))
        .expect("list")
        .lines()
        .map(str::to_owned)
        .collect();
    let mut theirs: Vec<String> = unzstd(fixture.join("available_filter_functions.zst"))
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| !n.starts_with("__ftrace_invalid_address___"))
        .map(str::to_owned)
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours.len(), theirs.len(), "{}", dir.display());
    assert!(ours == theirs, "the ftrace lists differ: {}", dir.display());
}
