//! `fevlint emit`: a script's definitions as `kprobe_events` lines for a kernel in service
//! (the translation is `fevlint_check::emit`; this file picks the dialect and prints).

use super::check::read_script_text;
use crate::kernel::load::Arch;
use crate::kernel::Kernel;
use crate::syntax::machine::Target;
use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use fevlint_check::emit;
use fevlint_mainline::{Dialect, KernelVersion};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Flavor {
    /// `p:` kprobe events reading the slot registers (every 6.x kernel).
    Kprobe,
}

#[derive(Debug, Args)]
pub struct EmitArgs {
    /// The kernel the lines are for (a folder with its config: the release in the config
    /// header picks the dialect the lines are checked against).
    #[arg(long, value_name = "KERNEL")]
    pub kernel: PathBuf,
    #[arg(long, value_enum, default_value = "kprobe")]
    pub flavor: Flavor,
    /// The script.
    pub script: PathBuf,
}

fn dialect(kernel: &Kernel) -> anyhow::Result<Dialect> {
    let release = kernel
        .inputs()
        .config
        .as_ref()
        .and_then(|c| c.value.release())
        .context("cannot tell the kernel's release: give a kernel with its config (`config` in its folder)")?;
    let version = KernelVersion::parse(release).with_context(|| format!("release `{release}` is not a version"))?;
    let readme = match (version.major, version.minor) {
        (6, 1) => fevlint_mainline::readmes::DEBIAN_6_1_192_AMD64,
        (6, 12) => fevlint_mainline::readmes::DEBIAN_6_12_117_AMD64,
        _ => bail!("release {release}: only the 6.1.y and 6.12.y dialects are modelled"),
    };
    let arch = match kernel.arch {
        Arch::X86_64 => fevlint_mainline::Arch::X86_64,
        Arch::X86_32 => fevlint_mainline::Arch::I386,
    };
    Dialect::for_arch(arch, version, readme).map_err(|e| anyhow::anyhow!("release {release}: {e}"))
}

pub fn run(args: &EmitArgs) -> anyhow::Result<ExitCode> {
    let kernel = Kernel::open(&args.kernel).with_context(|| format!("cannot load kernel {}", args.kernel.display()))?;
    let dialect = dialect(&kernel)?;
    let target = match kernel.arch {
        Arch::X86_64 => Target::X86_64,
        Arch::X86_32 => Target::X86_32,
    };
    let text = read_script_text(&args.script)?;
    let mut parser = crate::syntax::Parser::new();
    let lines = parser.lines(&text, target);
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut failed = 0;
    let mut out = String::new();
    for lp in &lines {
        let Some(parsed) = &lp.parsed else { continue };
        let at = format!("{}:{}", args.script.display(), lp.number + 1);
        if parsed.rejection.is_some() {
            eprintln!("{at}: the kernel's parser rejects this definition (run `fevlint check`); not emitted");
            failed += 1;
            continue;
        }
        let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
        let n = seen.entry(function.to_owned()).or_insert(0);
        *n += 1;
        let name = emit::event_name(function, (*n > 1).then_some(*n));
        match emit::emit(parsed, target, &dialect, &name) {
            Ok(e) => {
                out.push_str(&e.line);
                out.push('\n');
            }
            Err(p) => {
                let col = p.span.start.saturating_sub(lp.line.span.start) + 1;
                eprintln!("{at}:{col}: cannot emit: {}", p.message);
                failed += 1;
            }
        }
    }
    print!("{out}");
    Ok(if failed > 0 { ExitCode::from(super::EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}
