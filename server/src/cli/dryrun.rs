//! `fevlint dry-run`: what each definition would record, evaluated over a core dump.
//!
//! The evaluation is fevlint-exec's and the dump's opening against its kernel
//! fevlint-dryrun's (shared with the language server's value hints); this file reads the
//! arguments and prints.

use super::Format;
use clap::Args;
use fevlint_check::emit;
use fevlint_dryrun::{Core, Pick};
use fevlint_exec::{Event, Frame};
use fevlint_kernel::Kernel;
use fevlint_syntax::machine::{Parsed, Target};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DryRunArgs {
    /// The kernel the dump was taken of (folder, BTF, vmlinux, vmlinuz): symbols for
    /// `%pS` and `$symbol`, prototypes for `--arg NAME=VALUE`. For a user-space core, the
    /// program's ELF (with its symbol table and DWARF).
    /// Default the kernel of the nearest `fevlint.toml`, when it names one.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", value_parser = super::fetch::kernel_arg)]
    pub kernels: Vec<PathBuf>,
    /// The dump: kdump/vmcore ELF, QEMU `dump-guest-memory` (ELF or kdump-compressed),
    /// makedumpfile's compressed or flattened files, `/proc/kcore`, or a gdb `gcore`.
    #[arg(long, value_name = "CORE")]
    pub core: PathBuf,
    /// Registers of this CPU (kernel dump) or thread rank (user core); default the first.
    #[arg(long, value_name = "N", conflicts_with = "thread")]
    pub cpu: Option<usize>,
    /// Registers of the thread with this id (`pr_pid` of its `NT_PRSTATUS`).
    #[arg(long, value_name = "TID")]
    pub thread: Option<i32>,
    /// Set an argument: a register (`di=0x…`, `%rsi=…`), a slot (`slot2=…`) or a
    /// parameter name of the traced function (`file=0xffff…`), placed by the ABI.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Translate through these page tables (a CR3 value) instead of the CPU's own (QEMU's
    /// CPU-state note) or the kernel's (`init_top_pgt`): for a kdump file, which records
    /// no CR3, to read the task's user memory.
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub cr3: Option<u64>,
    /// Print each event's `format` file too.
    #[arg(long)]
    pub show_format: bool,
    /// Print what the `kprobe_events` line `fevlint emit --flavor kprobe` makes of each
    /// definition records, as that kernel's trace prints it
    /// (`vfs_read: (vfs_read+0x4/0x370) mode=0x40a800d name="version"`).
    #[arg(long, conflicts_with = "show_format")]
    pub emitted: bool,
    /// With `--emitted`: where the kprobe on a function's entry sits, so which
    /// `func+0x…` the trace line shows. `image` (default) reads the function's first
    /// bytes from the kernel's image (`+0x4` past ENDBR64, else `+0x0`); `present` and
    /// `absent` assume ENDBR64 on every function of an IBT kernel, or on none.
    #[arg(long, value_enum, value_name = "HOW", default_value = "image")]
    pub endbr: super::Endbr,
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Scripts: files, directories (searched recursively), or `-` for stdin.
    #[arg(required = true, value_name = "PATHS")]
    pub paths: Vec<PathBuf>,
}

fn parse_address(s: &str) -> Result<u64, String> {
    fevlint_dryrun::parse_number(s).map_err(|e| format!("{e:#}"))
}

pub fn run(args: &DryRunArgs) -> anyhow::Result<ExitCode> {
    let scripts = super::scripts::read(&args.paths, "dry-run")?;
    let kernel_path = super::scripts::one_kernel(&args.kernels, &scripts, "dry-run")?;
    let kernel = super::open_kernel(&kernel_path)?;
    let pick = Pick { cpu: args.cpu, thread: args.thread, cr3: args.cr3 };
    let core = Core::open(&kernel, &kernel_path, &args.core, &pick)?;
    if *core.symbol_source() == fevlint_dryrun::SymbolSource::Missing {
        eprintln!(
            "warning: {} has no symbols (no System.map, kallsyms, symbol table or kallsyms tables in the image): \
             every `$symbol` read is unknown and `%pS` prints bare addresses",
            kernel_path.display()
        );
    }
    let target = core.target();
    let mut parser = fevlint_syntax::Parser::new();
    let mut out = String::new();
    let mut json = Vec::new();
    let mut rejected = 0;
    let mainline = if args.emitted { Some(Mainline::new(&kernel, args.endbr.model())?) } else { None };
    // Event names as `emit` gives them: unique across the scripts.
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for script in &scripts {
        if scripts.len() > 1 && args.format == Format::Human {
            out.push_str(&format!("==> {} <==\n", script.name));
        }
        let text = &script.text;
        let lines = parser.lines(text, target);
        for lp in &lines {
            let Some(parsed) = &lp.parsed else { continue };
            if parsed.rejection.is_some() {
                rejected += 1;
                eprintln!(
                    "{}:{}: the kernel rejects this line (run `fevlint check`); not evaluated",
                    script.name,
                    lp.number + 1
                );
                continue;
            }
            let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
            let frame = core.frame(&kernel, function, &args.args)?;
            let event = core.evaluate(parsed, &frame);
            if let Some(m) = &mainline {
                let n = seen.entry(function.to_owned()).or_insert(0);
                *n += 1;
                let name = emit::event_name(function, (*n > 1).then_some(*n));
                match m.line(parsed, target, &name, &frame, &event, &core) {
                    Ok(line) => {
                        if args.format == Format::Json {
                            let mut e = serde_json::json!({"line": lp.number + 1, "trace": line, "event": event});
                            if scripts.len() > 1 {
                                e["file"] = script.name.clone().into();
                            }
                            json.push(e);
                        } else {
                            out.push_str(&line);
                            out.push('\n');
                        }
                    }
                    Err(e) => {
                        eprintln!("{}:{}: not emitted: {e}", script.name, lp.number + 1);
                        rejected += 1;
                    }
                }
                continue;
            }
            match args.format {
                Format::Human => {
                    out.push_str(&event.trace_line());
                    out.push('\n');
                    for f in event.fields.iter().filter(|f| f.zero_because.is_some()) {
                        out.push_str(&format!(
                            "  note: {} recorded 0: {}\n",
                            f.name,
                            f.zero_because.as_deref().unwrap_or_default()
                        ));
                    }
                    if args.show_format {
                        out.push_str(&fevlint_exec::format_file(parsed, target));
                    }
                }
                Format::Json => {
                    let mut e = serde_json::json!({
                        "line": lp.number + 1,
                        "definition": lp.line.span.text(text).trim_end(),
                        "trace": event.trace_line(),
                        "event": event,
                        "format": fevlint_exec::format_file(parsed, target),
                    });
                    if scripts.len() > 1 {
                        e["file"] = script.name.clone().into();
                    }
                    json.push(e);
                }
            }
        }
    }
    match args.format {
        Format::Human => print!("{out}"),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "version": 1,
                "core": args.core.display().to_string(),
                "dump_format": core.format(),
                "kernel_offset": core.kernel_offset(),
                "events": json,
            }))?
        ),
    }
    Ok(if rejected > 0 { ExitCode::from(super::EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}

/// `--emitted`: each definition as the kprobe line emit makes of it, printed as that
/// kernel's trace prints the event.
struct Mainline<'k> {
    kernel: &'k Kernel,
    dialect: fevlint_mainline::Dialect,
    /// Whether the probe sits past ENDBR64 (`arch_adjust_kprobe_addr`).
    endbr: fevlint_check::dynevents::Endbr,
}

impl<'k> Mainline<'k> {
    fn new(kernel: &'k Kernel, endbr: fevlint_check::dynevents::Endbr) -> anyhow::Result<Mainline<'k>> {
        let dialect = fevlint_check::dynevents::dialect_for(kernel).map_err(anyhow::Error::msg)?;
        Ok(Mainline { kernel, dialect, endbr })
    }

    fn line(
        &self,
        parsed: &Parsed,
        target: Target,
        name: &str,
        frame: &Frame,
        event: &Event,
        core: &Core,
    ) -> anyhow::Result<String> {
        let env = fevlint_check::dynevents::KernelEnv::new(self.kernel, &self.dialect).with_endbr(self.endbr);
        let emitted = emit::emit(parsed, target, &self.dialect, &env, name, emit::Flavor::Kprobe, &[])
            .map_err(|p| anyhow::anyhow!("{}", p.message))?;
        let Ok(fevlint_mainline::Line::Probe(probe)) = fevlint_mainline::check_line(&self.dialect, &emitted.line)
        else {
            anyhow::bail!("the emitted line `{}` does not parse", emitted.line);
        };
        let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
        let at = frame
            .function_address
            .map(|ip| core.symbol_at(ip + env.entry_offset(function)))
            .unwrap_or_else(|| "?".to_owned());
        let mut line = format!("{}: ({at})", probe.event);
        for (arg, value) in probe.args.iter().zip(&event.fields) {
            let ty = match &arg.ty {
                Some(t) => match t.array {
                    Some(n) => format!("{}[{n}]", t.name),
                    None => t.name.clone(),
                },
                None => arg.store_type.clone(),
            };
            line.push_str(&format!(" {}={}", arg.name, fevlint_exec::kprobe_value(&ty, value, core.symbols())));
        }
        Ok(line)
    }
}
