//! Command-line interface: clap commands, thin. Each command calls one analysis function.

mod bpf;
mod check;
mod diff;
mod drift;
mod dryrun;
mod emit;
mod fetch;
pub mod kernel;
mod matrix;
mod process;
mod scripts;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "fevlint",
    version,
    about = "Lint kernel function-event scripts against the kernel parser and real kernels"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check scripts: files, directories (recursively, `*.fev`) or `-` for stdin.
    Check(check::CheckArgs),
    /// Inspect a kernel: `info`, `fn NAME`, `type 'struct file'`, `at 'struct file' 40`.
    #[command(subcommand)]
    Kernel(kernel::KernelCommand),
    /// Record what each definition means on a kernel into `fevlint.lock`.
    Lock(drift::LockArgs),
    /// Rewrite offsets (and unambiguous renames) so definitions mean on a new kernel what
    /// they meant on the old one (or in the lock); prints a unified diff.
    Fix(drift::FixArgs),
    /// Signature and layout differences of two kernels: functions removed, added,
    /// renamed, re-typed or moved between registers; structs resized, members moved.
    Diff(diff::DiffArgs),
    /// What each definition would record, evaluated over a core dump (kdump, vmcore,
    /// QEMU dump, makedumpfile file, gcore) with the registers of a CPU or thread.
    DryRun(dryrun::DryRunArgs),
    /// Translate definitions into `kprobe_events` lines for a kernel in service, each
    /// checked by a transcription of that kernel's probe parser.
    Emit(emit::EmitArgs),
    /// On which kernels each definition is clean, and what it gets on the others: a
    /// summary, JSON, or a self-contained HTML report.
    Matrix(matrix::MatrixArgs),
    /// Compiled BPF CO-RE objects: `relocations` shows what each CO-RE relocation
    /// becomes on each kernel, as libbpf resolves it at load time.
    #[command(subcommand)]
    Bpf(bpf::BpfCommand),
    /// Print the documentation of a rule (or list all rules).
    Rule {
        /// Code (`S001`) or name (`syntax-error`).
        code: Option<String>,
    },
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    ///
    /// bash: `fevlint completions bash > ~/.local/share/bash-completion/completions/fevlint`
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a folder.
    ///
    /// `fevlint man | man -l -`, or `fevlint man --dir ~/.local/share/man/man1`.
    Man {
        /// Write `fevlint.1` and `fevlint-COMMAND.1` for every command into this folder.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
    /// Run the language server on stdin/stdout.
    Lsp {
        /// Accepted and ignored (editor clients pass it); stdio is the only transport.
        #[arg(long)]
        stdio: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Arch {
    #[value(name = "x86_64")]
    X86_64,
    #[value(name = "x86_32")]
    X86_32,
}

/// Where a kprobe on a function's entry sits, past ENDBR64 or not
/// (`fevlint_check::dynevents::Endbr`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Endbr {
    /// Read each function's first bytes from the kernel's image (default; without an
    /// image, assume ENDBR64 on CONFIG_X86_KERNEL_IBT kernels and say so).
    Image,
    /// Every function of an IBT kernel starts with ENDBR64.
    Present,
    /// No function starts with ENDBR64.
    Absent,
}

impl Endbr {
    pub fn model(self) -> fevlint_check::dynevents::Endbr {
        match self {
            Endbr::Image => fevlint_check::dynevents::Endbr::Image,
            Endbr::Present => fevlint_check::dynevents::Endbr::Present,
            Endbr::Absent => fevlint_check::dynevents::Endbr::Absent,
        }
    }
}

/// Exit status: 0 clean, 1 an error-severity diagnostic, 2 usage or IO error.
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_USAGE: u8 = 2;

/// Where fevlint keeps what it can rebuild (decompressed kernels, derived indexes,
/// fetched kernels), decided once from the environment: `$FEVLINT_CACHE_DIR`, else
/// `$XDG_CACHE_HOME/fevlint`, else `$HOME/.cache/fevlint`. A variable set but empty
/// counts as unset, and a relative `XDG_CACHE_HOME` or `HOME` is ignored (the XDG
/// convention), so no cache lands in the working directory unasked. `None` when none
/// applies.
pub fn cache_root() -> Option<std::path::PathBuf> {
    cache_root_from(&|name| std::env::var_os(name))
}

fn cache_root_from(var: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    if let Some(d) = var("FEVLINT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    let absolute = |name: &str| var(name).map(PathBuf::from).filter(|p| p.is_absolute());
    if let Some(d) = absolute("XDG_CACHE_HOME") {
        return Some(d.join("fevlint"));
    }
    absolute("HOME").map(|h| h.join(".cache/fevlint"))
}

/// The directory of the decompression and index caches: [`cache_root`] unless
/// `FEVLINT_NO_CACHE` is set to anything but `0` or empty.
fn derived_cache_dir() -> Option<std::path::PathBuf> {
    if std::env::var_os("FEVLINT_NO_CACHE").is_some_and(|v| !v.is_empty() && v != "0") {
        return None;
    }
    cache_root()
}

/// The cache every kernel this process opens is given ([`derived_cache_dir`]): decided
/// once, here at the edge, and passed down as a value; the libraries read no environment.
pub(crate) fn kernel_cache() -> &'static fevlint_load::cache::Cache {
    static CACHE: std::sync::OnceLock<fevlint_load::cache::Cache> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| fevlint_load::cache::Cache::new(derived_cache_dir()))
}

pub fn main() -> ExitCode {
    // A closed pipe (`fevlint check | head -1`) ends the program quietly, as it ends
    // `grep`: the default action of SIGPIPE, which Rust's runtime sets to "ignore" (every
    // print would then panic on EPIPE). The language server keeps ignoring it: a client
    // gone is an error it handles.
    set_sigpipe(libc::SIG_DFL);
    // Before anything allocates much or starts a thread (the arguments may fetch a
    // kernel); `lsp` is always the first argument when it is the command.
    if std::env::args_os().nth(1).is_none_or(|a| a != "lsp") {
        process::batch();
    }
    // Before the arguments: `--kernel debian:…` fetches while they are parsed.
    let cache = kernel_cache();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { ExitCode::from(EXIT_USAGE) } else { ExitCode::SUCCESS };
        }
    };
    let result = match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Rule { code } => rule(code.as_deref()),
        Command::Kernel(cmd) => kernel::run(&cmd),
        Command::Lock(args) => drift::lock(&args),
        Command::Fix(args) => drift::fix(&args),
        Command::Diff(args) => diff::run(&args),
        Command::Matrix(args) => matrix::run(&args),
        Command::DryRun(args) => dryrun::run(&args),
        Command::Emit(args) => emit::run(&args),
        Command::Bpf(cmd) => bpf::run(&cmd),
        Command::Completions { shell } => completions(shell),
        Command::Man { dir } => man(dir.as_deref()),
        Command::Lsp { stdio: _ } => {
            set_sigpipe(libc::SIG_IGN);
            return fevlint_lsp::run(cache.clone());
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

#[allow(unsafe_code)]
fn set_sigpipe(action: libc::sighandler_t) {
    // SAFETY: signal(2) with a constant disposition (no handler function) before any
    // thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, action);
    }
}

/// Completions and man pages come from the clap definition above, so they cannot drift.
fn completions(shell: clap_complete::Shell) -> anyhow::Result<ExitCode> {
    clap_complete::generate(shell, &mut Cli::command(), "fevlint", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

fn man(dir: Option<&std::path::Path>) -> anyhow::Result<ExitCode> {
    use anyhow::Context as _;
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            clap_mangen::generate_to(Cli::command(), dir)
                .with_context(|| format!("cannot write man pages into {}", dir.display()))?;
        }
        None => {
            let mut out = Vec::new();
            clap_mangen::Man::new(Cli::command()).render(&mut out)?;
            std::io::Write::write_all(&mut std::io::stdout(), &out)?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn rule(code: Option<&str>) -> anyhow::Result<ExitCode> {
    let Some(code) = code else {
        for r in fevlint_check::rules::REGISTRY {
            println!("{}  {:<24} {}", r.code, r.name, r.severity.as_str());
        }
        return Ok(ExitCode::SUCCESS);
    };
    match fevlint_check::rules::by_code(code) {
        Some(r) => {
            print!("{}", r.doc);
            Ok(ExitCode::SUCCESS)
        }
        None => anyhow::bail!("no rule `{code}` (see `fevlint rule` for the list)"),
    }
}

/// Opens a kernel for a command that uses the whole model: the files a folder leaves for
/// later (config, ftrace list, blacklist) are read now, so a broken one is an error here.
pub(crate) fn open_kernel(path: &std::path::Path) -> anyhow::Result<fevlint_kernel::Kernel> {
    use anyhow::Context;
    let k = fevlint_kernel::Kernel::open_cached(path, kernel_cache())
        .with_context(|| format!("cannot open kernel {}", path.display()))?;
    k.load_deferred().map_err(|e| anyhow::anyhow!("cannot open kernel {}: {e}", path.display()))?;
    Ok(k)
}

/// [`open_kernel`] for several, in parallel.
pub(crate) fn open_kernels(paths: &[std::path::PathBuf]) -> anyhow::Result<Vec<fevlint_kernel::Kernel>> {
    use anyhow::Context;
    fevlint_kernel::Kernel::open_all(paths, kernel_cache())
        .into_iter()
        .zip(paths)
        .map(|(k, p)| {
            let k = k.with_context(|| format!("cannot open kernel {}", p.display()))?;
            k.load_deferred().map_err(|e| anyhow::anyhow!("cannot open kernel {}: {e}", p.display()))?;
            Ok(k)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::cache_root_from;
    use std::path::PathBuf;

    fn root(vars: &[(&str, &str)]) -> Option<PathBuf> {
        cache_root_from(&|n| vars.iter().find(|(k, _)| *k == n).map(|(_, v)| v.into()))
    }

    #[test]
    fn empty_means_unset() {
        let home = ("HOME", "/home/u");
        assert_eq!(root(&[("FEVLINT_CACHE_DIR", ""), home]), Some("/home/u/.cache/fevlint".into()));
        assert_eq!(
            root(&[("FEVLINT_CACHE_DIR", ""), ("XDG_CACHE_HOME", ""), home]),
            Some("/home/u/.cache/fevlint".into())
        );
        assert_eq!(root(&[("XDG_CACHE_HOME", "/x"), home]), Some("/x/fevlint".into()));
        assert_eq!(root(&[("XDG_CACHE_HOME", "rel"), home]), Some("/home/u/.cache/fevlint".into()));
        assert_eq!(root(&[("FEVLINT_CACHE_DIR", "/c"), ("XDG_CACHE_HOME", "/x"), home]), Some("/c".into()));
        assert_eq!(root(&[("HOME", "")]), None);
        assert_eq!(root(&[]), None);
    }
}
