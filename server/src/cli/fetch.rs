//! Kernels by version: `debian:6.12.117+deb12-amd64` wherever a kernel path goes, and
//! `fevlint kernel fetch|list debian`.
//!
//! A Debian kernel is its image package, downloaded with `apt-get download` (so the
//! machine's own archive configuration, mirrors and proxies apply), from which the
//! vmlinuz (its payload carries `.BTF`) and the config are extracted into a folder of the
//! cache, the layout `fixtures/kernels/` uses. The folder is built beside its final
//! place and renamed into it: concurrent runs share one copy, an interrupted one leaves
//! nothing half-written. `FETCHED.md` records the package, its version and sha256.
//!
//! The package's `System.map` is an 83-byte stub: the symbols are decoded from the
//! image's own kallsyms tables (`fevlint_load::kallsyms`) and the ftrace list is named
//! from its mcount table with them, as `available_filter_functions` names it.

use anyhow::{bail, Context};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The archive prefix of a kernel spec.
pub const DEBIAN: &str = "debian:";

/// The cache folder of fetched kernels: `kernels` under [`super::cache_root`] (kept
/// with `FEVLINT_NO_CACHE`: a fetched kernel is an input, not a cache entry).
fn cache_root() -> anyhow::Result<PathBuf> {
    super::cache_root()
        .map(|d| d.join("kernels"))
        .context("no HOME to put the kernel cache in (set FEVLINT_CACHE_DIR to an absolute path)")
}

/// A kernel argument: a path as given, or a `debian:VERSION` fetched into the cache.
pub fn kernel_arg(s: &str) -> Result<PathBuf, String> {
    match s.strip_prefix(DEBIAN) {
        Some(version) => fetch_debian(version).map_err(|e| format!("{e:#}")),
        None => Ok(PathBuf::from(s)),
    }
}

/// `6.12.117+deb12-amd64`, `6.1.0-47-cloud-amd64`: what `uname -r` says, and the name
/// of the image package after `linux-image-`.
fn valid_version(v: &str) -> bool {
    !v.is_empty()
        && v.len() < 100
        && v.starts_with(|c: char| c.is_ascii_digit())
        && v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '~'))
}

fn run(cmd: &mut Command) -> anyhow::Result<String> {
    let shown = format!("{cmd:?}");
    let out = cmd.output().with_context(|| format!("cannot run {shown}"))?;
    if !out.status.success() {
        bail!("{shown} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The folder of Debian's kernel `version`, fetched on first use.
pub fn fetch_debian(version: &str) -> anyhow::Result<PathBuf> {
    if !valid_version(version) {
        bail!("`{version}` is not a Debian kernel version (like 6.12.117+deb12-amd64 or 6.1.0-47-amd64)");
    }
    let root = cache_root()?.join("debian");
    if complete(&root.join(version)) {
        return Ok(root.join(version));
    }
    // The full name before anything is downloaded: apt-get takes a name with `.` or `+`
    // that is no package's as a pattern, and `6.12.117` would fetch every flavour's
    // image (100 MB each) before the folder turned out to have no `vmlinuz-6.12.117`.
    let version = &resolve(version, &archive_versions()?).map_err(anyhow::Error::msg)?;
    let dir = root.join(version);
    if complete(&dir) {
        return Ok(dir);
    }
    std::fs::create_dir_all(&root).with_context(|| format!("cannot create {}", root.display()))?;
    // The unsigned package holds the same image as the signed one, without the
    // signature wrapper; older releases have only the plain package. A name apt knows
    // may still have no downloadable version: try each.
    let candidates = [format!("linux-image-{version}-unsigned"), format!("linux-image-{version}")];
    let work = tempfile_dir(&root)?;
    let result = (|| -> anyhow::Result<()> {
        // apt-get, as root, drops to the `_apt` user to write the download.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777))?;
        let mut errors = Vec::new();
        let package = candidates
            .iter()
            .find(|p| match run(Command::new("apt-get").args(["download", "-q", p.as_str()]).current_dir(&work)) {
                Ok(_) => true,
                Err(e) => {
                    errors.push(format!("{e:#}"));
                    false
                }
            })
            .with_context(|| {
                format!(
                    "Debian's archive has no downloadable linux-image-{version} (`fevlint kernel list debian` shows what it has, or run apt-get update): {}",
                    errors.join("; ")
                )
            })?;
        let deb = std::fs::read_dir(&work)?
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "deb"))
            .context("apt-get download wrote no .deb")?;
        let tree = work.join("tree");
        std::fs::create_dir_all(&tree)?;
        let tar = format!(
            "dpkg-deb --fsys-tarfile {} | tar -x -C {} --wildcards './boot/vmlinuz-*' './boot/config-*'",
            shell_quote(&deb),
            shell_quote(&tree)
        );
        run(Command::new("sh").args(["-c", &tar]))?;
        let out = work.join("kernel");
        std::fs::create_dir_all(&out)?;
        std::fs::rename(tree.join(format!("boot/vmlinuz-{version}")), out.join("vmlinuz"))
            .with_context(|| format!("{package} has no boot/vmlinuz-{version}"))?;
        std::fs::rename(tree.join(format!("boot/config-{version}")), out.join("config"))
            .with_context(|| format!("{package} has no boot/config-{version}"))?;
        let (symbols, ftrace) = derive_symbols(&out)?;
        let sha = run(Command::new("sha256sum").arg(&deb))?;
        let pkg_version = run(Command::new("dpkg-deb").args(["--field"]).arg(&deb).arg("Version"))?;
        std::fs::write(
            out.join("FETCHED.md"),
            format!(
                "# {version}\n\nFetched by `fevlint kernel fetch debian:{version}` with `apt-get download {package}` \
                 (version {}), sha256 {}.\n\n- `vmlinuz`: `boot/vmlinuz-{version}` (its payload carries `.BTF`)\n\
                 - `config`: `boot/config-{version}`\n\
                 - `System.map`: {symbols} symbols decoded from the image's own kallsyms tables (the package's System.map is a stub)\n\
                 - `available_filter_functions`: {ftrace} functions, named from the image's mcount table\n",
                pkg_version.trim(),
                sha.split_whitespace().next().unwrap_or("?")
            ),
        )?;
        // Another run may have finished first: its copy is as good as ours.
        match std::fs::rename(&out, &dir) {
            Ok(()) => Ok(()),
            Err(_) if complete(&dir) => Ok(()),
            // A folder from an older fevlint (or interrupted by hand): replace it.
            Err(_) => {
                std::fs::remove_dir_all(&dir).with_context(|| format!("cannot replace {}", dir.display()))?;
                std::fs::rename(&out, &dir).with_context(|| format!("cannot move the kernel into {}", dir.display()))
            }
        }
    })();
    let _ = std::fs::remove_dir_all(&work);
    result?;
    Ok(dir)
}

/// Writes `System.map` (from the image's kallsyms) and `available_filter_functions`
/// (from its mcount table, named with those symbols) into a fetched folder.
fn derive_symbols(dir: &Path) -> anyhow::Result<(usize, usize)> {
    use fevlint_kernel::Kernel;
    let image =
        Kernel::open_cached(&dir.join("vmlinuz"), super::kernel_cache()).context("cannot read the fetched vmlinuz")?;
    let elf = &image.inputs().elf.as_ref().context("the vmlinuz has no ELF payload")?.value;
    let percpu = image.config().map(|c| c.value.is_enabled("KALLSYMS_ABSOLUTE_PERCPU")).or_else(|| {
        let text = std::fs::read_to_string(dir.join("config")).ok()?;
        Some(text.lines().any(|l| l == "CONFIG_KALLSYMS_ABSOLUTE_PERCPU=y"))
    });
    let map = fevlint_load::kallsyms::kallsyms_text(elf, percpu)
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.join("vmlinuz").display()))?;
    fevlint_check::write_atomic(&dir.join("System.map"), map.as_bytes())?;
    let symbols = map.lines().count();
    // The folder now has an image, symbols and a config: the loader computes the
    // ftrace list from the mcount table.
    let folder = Kernel::open_cached(dir, super::kernel_cache()).context("cannot read the fetched kernel")?;
    let list = folder.filter_functions().context("no ftrace list could be computed from the image")?;
    let mut text = String::new();
    for (name, _) in list.value.iter() {
        text.push_str(name);
        text.push('\n');
    }
    fevlint_check::write_atomic(&dir.join("available_filter_functions"), text.as_bytes())?;
    Ok((symbols, list.value.len()))
}

/// Whether a cached folder has everything a fetch writes.
fn complete(dir: &Path) -> bool {
    ["vmlinuz", "config", "System.map", "available_filter_functions", "FETCHED.md"]
        .iter()
        .all(|f| dir.join(f).is_file())
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}

/// A fresh folder under `root` for one fetch.
fn tempfile_dir(root: &Path) -> anyhow::Result<PathBuf> {
    for n in 0..1000u32 {
        let p = root.join(format!(".fetch-{}-{n}", std::process::id()));
        if std::fs::create_dir(&p).is_ok() {
            return Ok(p);
        }
    }
    bail!("cannot create a temporary folder in {}", root.display())
}

/// The kernel versions Debian's archive (as this machine's apt sees it) offers, with
/// whether each is in the cache.
pub fn list_debian() -> anyhow::Result<Vec<(String, bool)>> {
    let versions = archive_versions()?;
    let root = cache_root()?.join("debian");
    Ok(versions.into_iter().map(|v| (v.clone(), complete(&root.join(&v)))).collect())
}

/// The kernel versions this machine's apt can download.
fn archive_versions() -> anyhow::Result<Vec<String>> {
    // `search` lists packages with a version to install (`pkgnames` also names ones
    // only referenced).
    Ok(parse_versions(&run(Command::new("apt-cache").args(["search", "--names-only", "^linux-image-"]))?))
}

/// The kernel versions in `apt-cache search --names-only ^linux-image-` output, sorted.
fn parse_versions(out: &str) -> Vec<String> {
    let mut versions: Vec<String> = out
        .lines()
        .filter_map(|l| l.split_whitespace().next()?.strip_prefix("linux-image-"))
        .map(|v| v.strip_suffix("-unsigned").unwrap_or(v))
        // `6.12-amd64` is a metapackage (no image): a build has three version numbers.
        .filter(|v| {
            valid_version(v)
                && !v.ends_with("-dbg")
                && v.split(['-', '+']).next().is_some_and(|n| n.matches('.').count() == 2)
        })
        .map(str::to_owned)
        .collect();
    versions.sort_by_key(|v| natural(v));
    versions.dedup();
    versions
}

/// `version` as the archive names it: itself when `known` has it, else the one known
/// version it begins (`6.1.0-56` for `6.1.0-56-amd64`, up to a `-`, `+` or `~`);
/// several, or none, is an error that names the candidates.
fn resolve(version: &str, known: &[String]) -> Result<String, String> {
    if known.iter().any(|k| k == version) {
        return Ok(version.to_owned());
    }
    if known.is_empty() {
        return Err(format!(
            "apt knows no Debian kernel (no linux-image package): run `apt-get update`, then fetch debian:{version} again"
        ));
    }
    let longer: Vec<&String> = known
        .iter()
        .filter(|k| k.strip_prefix(version).is_some_and(|rest| rest.starts_with(['-', '+', '~'])))
        .collect();
    match longer.as_slice() {
        [one] => {
            eprintln!("note: debian:{version} is debian:{one}");
            Ok((*one).clone())
        }
        [] => {
            // The versions of the same series (`6.12.`), if any, else the newest few.
            let series: Vec<&str> =
                version.split(['-', '+', '~']).next().unwrap_or(version).split('.').take(2).collect();
            let series = format!("{}.", series.join("."));
            let mut near: Vec<&String> = known.iter().filter(|k| k.starts_with(&series)).collect();
            if near.is_empty() {
                near = known.iter().rev().take(5).collect();
            }
            Err(format!(
                "Debian's archive (as apt sees it) has no kernel {version}; it has {} (`fevlint kernel list debian` shows all)",
                near.iter().take(8).map(|v| format!("debian:{v}")).collect::<Vec<_>>().join(", ")
            ))
        }
        several => Err(format!(
            "debian:{version} names {} kernels, give the full name: {}",
            several.len(),
            several.iter().map(|v| format!("debian:{v}")).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// `6.1.0-9` before `6.1.0-47`: numbers compared as numbers.
fn natural(s: &str) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    let mut num = String::new();
    let mut text = String::new();
    for c in s.chars() {
        if c.is_ascii_digit() {
            if !text.is_empty() {
                out.push((0, std::mem::take(&mut text)));
            }
            num.push(c);
        } else {
            if !num.is_empty() {
                out.push((num.parse().unwrap_or(u64::MAX), String::new()));
                num.clear();
            }
            text.push(c);
        }
    }
    if !num.is_empty() {
        out.push((num.parse().unwrap_or(u64::MAX), String::new()));
    }
    if !text.is_empty() {
        out.push((0, text));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `apt-cache search --names-only ^linux-image-` printed on a Debian 12 machine
    /// (an excerpt: signed and unsigned images, debug packages, metapackages).
    const APT_SEARCH: &str = "\
linux-image-6.1.0-47-amd64-dbg - Debug symbols for linux-image-6.1.0-47-amd64
linux-image-6.1.0-47-amd64-unsigned - Linux 6.1 for 64-bit PCs
linux-image-6.1.0-47-cloud-amd64-unsigned - Linux 6.1 for x86-64 cloud
linux-image-6.1.0-56-amd64 - Linux 6.1 for 64-bit PCs (signed)
linux-image-6.1.0-56-amd64-unsigned - Linux 6.1 for 64-bit PCs
linux-image-6.12.117+deb12-amd64 - Linux 6.12 for 64-bit PCs (signed)
linux-image-6.12.117+deb12-amd64-unsigned - Linux 6.12 for 64-bit PCs
linux-image-6.12.117+deb12-cloud-amd64-unsigned - Linux 6.12 for x86-64 cloud
linux-image-6.12.117+deb12-rt-amd64-unsigned - Linux 6.12 for 64-bit PCs, PREEMPT_RT
linux-image-6.12.57+deb12-amd64-unsigned - Linux 6.12 for 64-bit PCs
linux-image-amd64 - Linux for 64-bit PCs (meta-package)
linux-image-6.12-amd64 - Linux 6.12 for 64-bit PCs (meta-package)
";

    /// Issue 21: `--kernel debian:6.12.117` (no flavour) downloaded 100 MB and then
    /// failed. Now the name is resolved against the archive's list first: a full name
    /// stays, an abbreviation of one kernel becomes it, one of several is refused with
    /// the full names, and an unknown one with the versions the archive has.
    #[test]
    fn versions_resolve_before_any_download() {
        let known = parse_versions(APT_SEARCH);
        assert_eq!(
            known,
            [
                "6.1.0-47-amd64",
                "6.1.0-47-cloud-amd64",
                "6.1.0-56-amd64",
                "6.12.57+deb12-amd64",
                "6.12.117+deb12-amd64",
                "6.12.117+deb12-cloud-amd64",
                "6.12.117+deb12-rt-amd64",
            ]
        );
        assert_eq!(resolve("6.12.117+deb12-amd64", &known).as_deref(), Ok("6.12.117+deb12-amd64"));
        assert_eq!(resolve("6.1.0-56", &known).as_deref(), Ok("6.1.0-56-amd64"));
        let e = resolve("6.12.117", &known).expect_err("three flavours");
        assert_eq!(
            e,
            "debian:6.12.117 names 3 kernels, give the full name: debian:6.12.117+deb12-amd64, \
             debian:6.12.117+deb12-cloud-amd64, debian:6.12.117+deb12-rt-amd64"
        );
        let e = resolve("6.12.999", &known).expect_err("unknown");
        assert!(
            e.contains("has no kernel 6.12.999; it has debian:6.12.57+deb12-amd64, debian:6.12.117+deb12-amd64"),
            "{e}"
        );
        // A prefix must end at a separator: `6.1.0-4` is not `6.1.0-47-amd64`.
        assert!(resolve("6.1.0-4", &known).is_err());
        assert!(resolve("6.12.117", &[]).expect_err("no list").contains("apt-get update"));
    }
}
