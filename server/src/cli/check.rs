//! `fevlint check`: find the scripts, analyse each, render, set the exit status.

use super::{Arch, Format, EXIT_FINDINGS};
use crate::analysis;
use crate::diagnostic::Severity;
use crate::render::{self, FileReport};
use anyhow::Context as _;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Files, directories (searched recursively for `*.fev`), or `-` for stdin.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// A kernel to check against (repeatable): a fixture-style folder, BTF (plain or
    /// compressed), vmlinux, vmlinuz, a BTFHub tarball, or `running`.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL")]
    kernels: Vec<PathBuf>,
    /// Target architecture for slot limits and number widths (default: the kernel's, else x86_64).
    #[arg(long, value_enum, default_value_t = Arch::X86_64)]
    arch: Arch,
    /// Colour: auto (when stdout is a terminal), always, never.
    #[arg(long, default_value = "auto")]
    color: String,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let target = match args.arch {
        Arch::X86_64 => crate::syntax::Target::X86_64,
        Arch::X86_32 => crate::syntax::Target::X86_32,
    };
    let files = collect(&args.paths)?;
    let mut kernels = Vec::with_capacity(args.kernels.len());
    for path in &args.kernels {
        let k = crate::kernel::Kernel::open(path).with_context(|| format!("cannot open kernel {}", path.display()))?;
        for note in &k.notes {
            eprintln!("note: kernel {}: {note}", k.name);
        }
        kernels.push(k);
    }
    let kernel_refs: Vec<&crate::kernel::Kernel> = kernels.iter().collect();
    let mut parser = crate::syntax::Parser::new();
    let mut reports = Vec::with_capacity(files.len());
    for input in files {
        let (name, bytes) = match &input {
            Input::Stdin => {
                let mut buf = Vec::new();
                std::io::stdin().read_to_end(&mut buf).context("cannot read standard input")?;
                ("<stdin>".to_owned(), buf)
            }
            Input::File(path) => {
                let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
                (path.display().to_string(), bytes)
            }
        };
        let (text, diagnostics) = analysis::check_bytes_with(&mut parser, bytes, target, &kernel_refs);
        reports.push(FileReport { name, text, diagnostics });
    }
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stdout().is_terminal(),
    };
    let out = match args.format {
        Format::Human => {
            let mut s = render::text::render(&reports, color);
            s.push_str(&summary(&reports));
            s
        }
        Format::Json => render::json::render(&reports),
    };
    print!("{out}");
    let failed = reports.iter().flat_map(|r| &r.diagnostics).any(|d| d.severity == Severity::Error);
    Ok(if failed { ExitCode::from(EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}

fn summary(reports: &[FileReport]) -> String {
    let count = |s| reports.iter().flat_map(|r| &r.diagnostics).filter(|d| d.severity == s).count();
    let definitions: usize = reports.iter().map(|r| analysis::count_definitions(&r.text)).sum();
    format!(
        "checked {} file{}, {} definition{}: {} error{}, {} warning{}\n",
        reports.len(),
        plural(reports.len()),
        definitions,
        plural(definitions),
        count(Severity::Error),
        plural(count(Severity::Error)),
        count(Severity::Warning),
        plural(count(Severity::Warning)),
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

enum Input {
    Stdin,
    File(PathBuf),
}

/// Expands the arguments: directories recursively (`*.fev`, sorted), files as given.
fn collect(paths: &[PathBuf]) -> anyhow::Result<Vec<Input>> {
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() == "-" {
            out.push(Input::Stdin);
            continue;
        }
        let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
        if meta.is_dir() {
            let mut found = Vec::new();
            walk(p, &mut found)?;
            found.sort();
            out.extend(found.into_iter().map(Input::File));
        } else {
            out.push(Input::File(p.clone()));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("cannot read directory {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read directory {}", dir.display()))?;
        let path = entry.path();
        let kind = entry.file_type().with_context(|| format!("cannot stat {}", path.display()))?;
        if kind.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "fev") {
            out.push(path);
        }
    }
    Ok(())
}
