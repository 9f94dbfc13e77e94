//! `fevlint bpf relocations`: what every CO-RE relocation of compiled BPF objects becomes
//! on each kernel, as libbpf would resolve it at load time.

use anyhow::Context as _;
use clap::{Args, Subcommand};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

use fevlint_bpf::core::Target;
use fevlint_bpf::{BpfObject, Outcome, Resolution};
use fevlint_btf::Btf;
use fevlint_kernel::Kernel;

#[derive(Debug, Subcommand)]
pub enum BpfCommand {
    /// Every CO-RE relocation of the objects, resolved on each kernel (one record per
    /// relocation per kernel; libbpf's `relo #N` numbering).
    Relocations(RelocationsArgs),
}

#[derive(Debug, Args)]
pub struct RelocationsArgs {
    /// The kernels (repeatable): folders, BTF files, or `debian:VERSION`.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", required = true, value_parser = super::fetch::kernel_arg)]
    kernels: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "human")]
    format: super::Format,
    /// BPF objects (`*.bpf.o`).
    #[arg(required = true)]
    objects: Vec<PathBuf>,
}

pub fn run(cmd: &BpfCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        BpfCommand::Relocations(args) => relocations(args),
    }
}

/// One relocation on one kernel, as printed.
#[derive(Debug, Serialize)]
struct Record<'a> {
    object: String,
    kernel: &'a str,
    #[serde(flatten)]
    resolution: Resolution,
}

/// A kernel's BTF, for CO-RE.
pub(crate) struct KernelBtf {
    pub name: String,
    /// The kernel's own reader (its name indexes kept in the cache between runs).
    pub btf: std::sync::Arc<Btf>,
}

/// Opens the kernels and takes their BTF (a kernel without BTF is an error: CO-RE needs it).
pub(crate) fn kernel_btfs(paths: &[PathBuf]) -> anyhow::Result<Vec<KernelBtf>> {
    Kernel::open_all(paths, super::kernel_cache())
        .into_iter()
        .zip(paths)
        .map(|(k, p)| {
            let k = k.with_context(|| format!("cannot open kernel {}", p.display()))?;
            let btf = k.btf().cloned().with_context(|| {
                format!("kernel {} has no BTF: CO-RE relocations are resolved against BTF", p.display())
            })?;
            Ok(KernelBtf { name: k.name.clone(), btf })
        })
        .collect()
}

pub(crate) fn read_object(path: &std::path::Path) -> anyhow::Result<BpfObject> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(BpfObject::parse(path.display().to_string(), bytes)?)
}

fn relocations(args: &RelocationsArgs) -> anyhow::Result<ExitCode> {
    let kernels = kernel_btfs(&args.kernels)?;
    let objects = args.objects.iter().map(|p| read_object(p)).collect::<anyhow::Result<Vec<_>>>()?;
    let targets: Vec<Target> = kernels.iter().map(|k| Target::new(&k.btf)).collect();
    let mut records = Vec::new();
    for obj in &objects {
        for (k, t) in kernels.iter().zip(&targets) {
            for r in fevlint_bpf::resolve(obj, t) {
                records.push(Record { object: obj.name.clone(), kernel: &k.name, resolution: r });
            }
        }
    }
    let mut out = String::new();
    match args.format {
        super::Format::Json => {
            out = serde_json::to_string_pretty(&records)?;
            out.push('\n');
        }
        super::Format::Human => {
            for r in &records {
                let res = &r.resolution;
                let what = match &res.outcome {
                    Outcome::Value { value } => format!("= {value}"),
                    Outcome::Poisoned { reason } => format!("poisoned: {reason}"),
                    Outcome::Failed { reason, .. } => format!("error: {reason}"),
                };
                let at =
                    res.source.as_ref().map(|s| format!("  {}:{}:{}", s.file, s.line, s.column)).unwrap_or_default();
                out.push_str(&format!(
                    "{} {} {} relo #{} insn {}: {} {} {} {what}{at}\n",
                    r.object,
                    r.kernel,
                    res.section,
                    res.index,
                    res.insn_off / 8,
                    res.kind,
                    res.type_name,
                    res.access,
                ));
            }
        }
    }
    std::io::Write::write_all(&mut std::io::stdout(), out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}
