//! `fevlint emit`: a script's definitions as `kprobe_events` lines for a kernel in service
//! (the translation is `fevlint_check::emit`; this file picks the dialect and prints).

use anyhow::bail;
use clap::{Args, ValueEnum};
use fevlint_check::emit;
use fevlint_kernel::Kernel;
use fevlint_mainline::Dialect;
use fevlint_syntax::machine::Target;
use fevlint_types::Arch;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Flavor {
    /// `p:` kprobe events reading the slot registers (every 6.x kernel).
    Kprobe,
    /// `f:` fprobe events naming members through BTF (`file->f_op->llseek`) where the
    /// checker resolved a plain member chain (needs CONFIG_FPROBE_EVENTS and
    /// CONFIG_PROBE_EVENTS_BTF_ARGS: Debian 6.12, not 6.1).
    Fprobe,
    /// `f:` where the kernel has both options, else `p:`.
    Auto,
}

#[derive(Debug, Args)]
pub struct EmitArgs {
    /// The kernel the lines are for (a folder with its config: the release in the config
    /// header picks the dialect the lines are checked against); default the kernel of the
    /// nearest `fevlint.toml`, when it names one.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", value_parser = super::fetch::kernel_arg)]
    pub kernels: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "auto")]
    pub flavor: Flavor,
    /// Where kprobes on a function's entry sit: `image` (default) reads the function's
    /// first bytes from the kernel's image; `present`/`absent` assume ENDBR64 or not.
    #[arg(long, value_enum, value_name = "HOW", default_value = "image")]
    pub endbr: super::Endbr,
    /// Scripts: files, directories (searched recursively), or `-` for stdin.
    #[arg(required = true, value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

fn dialect(kernel: &Kernel) -> anyhow::Result<Dialect> {
    fevlint_check::dynevents::dialect_for(kernel).map_err(anyhow::Error::msg)
}

pub fn run(args: &EmitArgs) -> anyhow::Result<ExitCode> {
    let scripts = super::scripts::read(&args.paths, "emit")?;
    let kernel_path = super::scripts::one_kernel(&args.kernels, &scripts, "emit")?;
    let kernel = super::open_kernel(&kernel_path)?;
    let dialect = dialect(&kernel)?;
    let target = match kernel.arch {
        Arch::X86_64 => Target::X86_64,
        Arch::X86_32 => Target::X86_32,
    };
    let config = kernel.config().map(|c| &c.value);
    let fprobe_ok = dialect.fprobe
        && dialect.btf_args
        && config.is_some_and(|c| c.is_enabled("FPROBE_EVENTS") && c.is_enabled("PROBE_EVENTS_BTF_ARGS"));
    let flavor = match args.flavor {
        Flavor::Kprobe => emit::Flavor::Kprobe,
        Flavor::Fprobe if !fprobe_ok => bail!(
            "{} has no fprobe events with BTF arguments (CONFIG_FPROBE_EVENTS, CONFIG_PROBE_EVENTS_BTF_ARGS): use --flavor kprobe",
            kernel_path.display()
        ),
        Flavor::Fprobe => emit::Flavor::Fprobe,
        Flavor::Auto if fprobe_ok => emit::Flavor::Fprobe,
        Flavor::Auto => emit::Flavor::Kprobe,
    };
    let env = fevlint_check::dynevents::KernelEnv::new(&kernel, &dialect).with_endbr(args.endbr.model());
    let mut parser = fevlint_syntax::Parser::new();
    // Event names are unique across the scripts: they go to one `kprobe_events`.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut failed = 0;
    let mut out = String::new();
    for script in &scripts {
        if scripts.len() > 1 {
            // A comment line: `kprobe_events` and `dynamic_events` skip it.
            out.push_str(&format!("# {}\n", script.name));
        }
        let lines = parser.lines(&script.text, target);
        for lp in &lines {
            let Some(parsed) = &lp.parsed else { continue };
            let at = format!("{}:{}", script.name, lp.number + 1);
            if parsed.rejection.is_some() {
                eprintln!("{at}: the kernel's parser rejects this definition (run `fevlint check`); not emitted");
                failed += 1;
                continue;
            }
            let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
            let n = seen.entry(function.to_owned()).or_insert(0);
            *n += 1;
            let name = emit::event_name(function, (*n > 1).then_some(*n));
            let btf = match flavor {
                emit::Flavor::Fprobe => fevlint_check::resolve::resolve(&kernel, parsed, target)
                    .ok()
                    .flatten()
                    .map(|r| emit::btf_fields(&r))
                    .unwrap_or_default(),
                emit::Flavor::Kprobe => Vec::new(),
            };
            match emit::emit(parsed, target, &dialect, &env, &name, flavor, &btf) {
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
    }
    print!("{out}");
    Ok(if failed > 0 { ExitCode::from(super::EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}
