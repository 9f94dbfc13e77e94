//! The scripts and the kernel of a command that works on one kernel (`emit`, `dry-run`):
//! paths as `check` takes them (files, folders searched for scripts, `-` for stdin;
//! expanded by `check::collect`), and `--kernel`/`-k` as in `check`, else the nearest
//! `fevlint.toml`'s kernel.

use super::check::{collect, is_dynevents, read_script_text, Input};
use anyhow::{bail, Context};
use fevlint_load::fsio;
use std::path::{Path, PathBuf};

/// One script to work on.
pub(super) struct Script {
    /// For messages: the path as given, or `<stdin>`.
    pub name: String,
    pub text: String,
    /// The folder its `fevlint.toml` is searched from.
    pub dir: PathBuf,
}

/// Standard input as a script: streamed with the same bound as a file (`- < /dev/zero`
/// stops at the limit). The buffer is asked for the whole bound (and the byte past it) at
/// once: memory the system gives only as it is written, and a buffer that never moves.
/// Grown by doubling instead, its last copy held twice the limit (143 MB peak for
/// `- < /dev/zero` under the batch heap of `process`, whose 64 MiB heap top serves the
/// block up to 64 MiB and then copies it to a map of its own).
pub(super) fn read_stdin() -> anyhow::Result<Vec<u8>> {
    let whole = fsio::MAX_SCRIPT_BYTES + 1;
    match fsio::read_to_limit(std::io::stdin().lock(), whole, fsio::MAX_SCRIPT_BYTES) {
        Ok(b) => Ok(b),
        Err(fsio::LimitedError::Io(e)) => Err(e).context("cannot read standard input"),
        Err(fsio::LimitedError::TooLarge) => {
            bail!("cannot read standard input: more than the limit of {} bytes for a script", fsio::MAX_SCRIPT_BYTES)
        }
    }
}

/// Reads every script `paths` name, in order. A `.dynevents` file (the kernel's own
/// syntax) is refused naming what `command` reads, before any output.
pub(super) fn read(paths: &[PathBuf], command: &str) -> anyhow::Result<Vec<Script>> {
    let mut out = Vec::new();
    for input in collect(paths, false)? {
        let script = match input {
            Input::Stdin => {
                let bytes = read_stdin()?;
                let text = String::from_utf8(bytes).map_err(|e| {
                    anyhow::anyhow!(
                        "cannot read standard input: not UTF-8 text (invalid byte at offset {})",
                        e.utf8_error().valid_up_to()
                    )
                })?;
                Script { name: "<stdin>".to_owned(), text, dir: PathBuf::from(".") }
            }
            Input::File(path) => {
                let name = path.display().to_string();
                if is_dynevents(&name) {
                    bail!(
                        "{name}: `fevlint {command}` reads function-event scripts (`*.fev`); this file is already in \
                         the kernel's `dynamic_events` syntax{}",
                        if command == "emit" {
                            ": write it to `dynamic_events` as it is (`fevlint check` checks it against the kernel)"
                        } else {
                            ", which the dry run does not evaluate: run `fevlint check` on it"
                        }
                    );
                }
                let text = read_script_text(&path)?;
                let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
                Script { name, text, dir }
            }
        };
        out.push(script);
    }
    Ok(out)
}

/// The one kernel `command` works on: `--kernel` as given (once), else the only kernel of
/// the `fevlint.toml` nearest to the first script (or the working directory).
pub(super) fn one_kernel(kernels: &[PathBuf], scripts: &[Script], command: &str) -> anyhow::Result<PathBuf> {
    match kernels {
        [one] => return Ok(one.clone()),
        [] => {}
        more => bail!("`fevlint {command}` works on one kernel, and {} were given: run it once per kernel", more.len()),
    }
    let dir = scripts.first().map_or(Path::new("."), |s| s.dir.as_path());
    let Some(file) = fevlint_check::config::nearest_file(dir) else {
        bail!("no kernel: give one with --kernel (or name it in a fevlint.toml)")
    };
    let config = fevlint_check::config::Config::load(&file)?;
    match &config.kernels[..] {
        [one] => match one.to_str().filter(|s| s.starts_with(super::fetch::DEBIAN)) {
            Some(spec) => super::fetch::kernel_arg(spec).map_err(anyhow::Error::msg),
            None => Ok(one.clone()),
        },
        [] => bail!("no kernel: give one with --kernel ({} names none)", file.display()),
        more => bail!(
            "{} names {} kernels and `fevlint {command}` works on one: choose it with --kernel",
            file.display(),
            more.len()
        ),
    }
}
