//! The Debian package (`scripts/build-deb.sh`, dpkg-deb): built from this test's fevlint,
//! installed with `apt-get install ./fevlint_*.deb` in a clean Debian 12 root (a minbase
//! debootstrap that `scripts/install-test-deps.sh` caches under
//! `~/.cache/fevlint-test-deps/debootstrap-bookworm`, used through an overlay or a copy),
//! then the README's main job run there with the installed binary: the same report and
//! exit status as on this machine. The man pages, completions and editor files are where
//! Debian puts them, and bash completes with the installed script.
//!
//! Needs root (chroot, mount) and the cached root; either missing fails the test and says
//! so. About a minute warm.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().expect("repository root")
}

fn cached_root() -> PathBuf {
    let home = PathBuf::from(std::env::var_os("HOME").expect("HOME is set"));
    std::env::var_os("FEVLINT_DEB_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".cache/fevlint-test-deps/debootstrap-bookworm"))
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    out
}

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The clean root for one run: an overlay over the cached root (nothing is written to
/// the cache), or a copy where overlays cannot be mounted. Unmounted and removed on drop.
struct Root {
    dir: PathBuf,
    merged: PathBuf,
    mounted: Vec<PathBuf>,
}

impl Root {
    fn new(cache: &Path) -> Root {
        let dir = std::env::temp_dir().join(format!("fevlint-deb-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (upper, work, merged) = (dir.join("upper"), dir.join("work"), dir.join("merged"));
        for d in [&upper, &work, &merged] {
            std::fs::create_dir_all(d).expect("mkdir");
        }
        let options = format!("lowerdir={},upperdir={},workdir={}", cache.display(), upper.display(), work.display());
        let overlay = run(Command::new("mount").args(["-t", "overlay", "overlay", "-o", &options]).arg(&merged));
        let mut root = Root { dir, merged, mounted: Vec::new() };
        if overlay.status.success() {
            root.mounted.push(root.merged.clone());
        } else {
            ok(Command::new("cp").arg("-a").arg(format!("{}/.", cache.display())).arg(&root.merged));
        }
        // dpkg and apt want /proc and /dev/null.
        for (fs, at) in [("proc", "proc"), ("devtmpfs", "dev")] {
            let at = root.merged.join(at);
            if run(Command::new("mount").args(["-t", fs, fs]).arg(&at)).status.success() {
                root.mounted.push(at);
            }
        }
        root
    }

    fn chroot(&self, script: &str) -> Output {
        run(Command::new("chroot")
            .arg(&self.merged)
            .args(["/usr/bin/env", "-i", "HOME=/root", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8"])
            .args(["DEBIAN_FRONTEND=noninteractive", "/bin/sh", "-c", script]))
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        for m in self.mounted.iter().rev() {
            let _ = Command::new("umount").arg("-l").arg(m).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[test]
fn the_deb_installs_with_apt_in_a_clean_debian_and_runs_the_main_job() {
    if !fevlint_testkit::real_tools("debootstrap and root") {
        return;
    }
    let uid = ok(Command::new("id").arg("-u"));
    assert_eq!(uid.trim(), "0", "the Debian package test needs root (chroot and mount), as in CI");
    let cache = cached_root();
    assert!(
        cache.join("usr/bin/apt-get").is_file(),
        "{} is not a Debian root: run scripts/install-test-deps.sh (it makes it with debootstrap)",
        cache.display()
    );
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deb");
    let _ = std::fs::remove_dir_all(&out);
    let deb = ok(Command::new(root().join("scripts/build-deb.sh"))
        .arg("--binary")
        .arg(env!("CARGO_BIN_EXE_fevlint"))
        .arg("--out")
        .arg(&out)
        .current_dir(root()));
    let deb = PathBuf::from(deb.trim());
    let name = deb.file_name().and_then(|n| n.to_str()).expect("a .deb name").to_owned();
    assert!(name.starts_with("fevlint_") && name.ends_with(".deb"), "{name}");

    let clean = Root::new(&cache);
    let absent = clean.chroot("command -v fevlint");
    assert!(!absent.status.success(), "the clean root already has fevlint");
    std::fs::copy(&deb, clean.merged.join("tmp").join(&name)).expect("copy the .deb in");
    let install = clean.chroot(&format!("apt-get install -y --no-install-recommends ./tmp/{name}"));
    let said = String::from_utf8_lossy(&install.stdout).into_owned() + &String::from_utf8_lossy(&install.stderr);
    assert!(install.status.success(), "apt-get install ./{name} failed:\n{said}");

    // Where Debian puts things.
    let files = String::from_utf8_lossy(&clean.chroot("dpkg -L fevlint").stdout).into_owned();
    for want in [
        "/usr/bin/fevlint",
        "/usr/share/man/man1/fevlint.1.gz",
        "/usr/share/man/man1/fevlint-check.1.gz",
        "/usr/share/bash-completion/completions/fevlint",
        "/usr/share/zsh/vendor-completions/_fevlint",
        "/usr/share/fish/vendor_completions.d/fevlint.fish",
        "/usr/share/nvim/site/lsp/fevlint.lua",
        "/usr/share/nvim/site/plugin/fevlint.lua",
        "/usr/share/vim/vimfiles/ftdetect/fev.vim",
        "/usr/share/vim/vimfiles/ale_linters/dynevents/fevlint.vim",
        "/usr/share/emacs/site-lisp/fev-mode.el",
        "/usr/share/kak/autoload/fev.kak",
        "/usr/share/doc/fevlint/copyright",
    ] {
        assert!(files.lines().any(|l| l == want), "{want} is not in the package:\n{files}");
    }
    let completes = clean.chroot(
        "bash --norc -c '. /usr/share/bash-completion/completions/fevlint; COMP_WORDS=(fevlint ch); COMP_CWORD=1; \
         _fevlint fevlint ch fevlint; printf \"%s\\n\" \"${COMPREPLY[@]}\"'",
    );
    let completed = String::from_utf8_lossy(&completes.stdout).into_owned();
    assert!(completed.lines().any(|l| l == "check"), "bash completion in the clean root: {completed:?} {completes:?}");

    // The README's main job, with the installed binary, on the data shipped here.
    let work = clean.merged.join("work");
    std::fs::create_dir_all(work.join("fixtures/kernels")).expect("mkdir");
    ok(Command::new("cp").arg("-a").arg(root().join("examples")).arg(&work));
    ok(Command::new("cp")
        .arg("-a")
        .arg(root().join("fixtures/kernels/6.12.117+deb12-amd64"))
        .arg(work.join("fixtures/kernels")));
    let job = "check --kernel fixtures/kernels/6.12.117+deb12-amd64 examples/";
    let installed = clean.chroot(&format!("cd /work && fevlint {job}"));
    let here = run(Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(job.split(' '))
        .current_dir(root())
        .env("FEVLINT_CACHE_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("deb-cache")));
    let report = String::from_utf8_lossy(&installed.stdout).into_owned();
    assert!(report.contains("checked "), "no summary from the installed fevlint:\n{report}\n{installed:?}");
    assert_eq!(report, String::from_utf8_lossy(&here.stdout), "the installed fevlint's report differs");
    assert_eq!(installed.status.code(), here.status.code(), "exit status: {installed:?}");
}
