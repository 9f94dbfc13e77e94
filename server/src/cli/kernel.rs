//! `fevlint kernel info|fn|type|at`: what fevlint knows about a kernel, as text or JSON.

use super::Format;
use anyhow::{bail, Context as _};
use fevlint_kernel::{Kernel, Trace};
use fevlint_types::abi;
use fevlint_types::layout::{self, Placement};
use fevlint_types::model::{TypeNamespace, TypeRef, TypeSource};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Subcommand)]
pub enum KernelCommand {
    /// Download a kernel by version into the cache and print its folder:
    /// `debian:6.12.117+deb12-amd64` (through apt; the vmlinuz, whose payload carries
    /// BTF, and the config). `--kernel debian:VERSION` does this on first use.
    Fetch { spec: String },
    /// The kernel versions an archive offers (`debian`: what this machine's apt sees).
    List { archive: String },
    /// Summary: name, architecture, where types, symbols and ftrace data come from.
    Info {
        #[arg(value_parser = super::fetch::kernel_arg)]
        kernel: PathBuf,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// A function: signature, each parameter's register or stack slot, traceability.
    Fn {
        #[arg(value_parser = super::fetch::kernel_arg)]
        kernel: PathBuf,
        name: String,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// A type's layout with offsets, sizes and holes, as pahole prints it.
    Type {
        #[arg(value_parser = super::fetch::kernel_arg)]
        kernel: PathBuf,
        /// `struct file`, `union bpf_attr`, `enum pid_type` or a typedef such as `u64`.
        name: String,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
    /// The member path at a byte offset of a struct.
    At {
        #[arg(value_parser = super::fetch::kernel_arg)]
        kernel: PathBuf,
        name: String,
        offset: String,
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
    },
}

pub fn run(cmd: &KernelCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        KernelCommand::Fetch { spec } => {
            let Some(version) = spec.strip_prefix(super::fetch::DEBIAN) else {
                bail!("`{spec}`: give `debian:VERSION` (the only archive so far)")
            };
            println!("{}", super::fetch::fetch_debian(version)?.display());
            return Ok(ExitCode::SUCCESS);
        }
        KernelCommand::List { archive } => {
            if archive != "debian" {
                bail!("`{archive}`: the only archive so far is `debian`");
            }
            for (v, cached) in super::fetch::list_debian()? {
                println!("debian:{v}{}", if cached { "\t(cached)" } else { "" });
            }
            return Ok(ExitCode::SUCCESS);
        }
        _ => {}
    }
    let (path, format) = match cmd {
        KernelCommand::Fetch { .. } | KernelCommand::List { .. } => unreachable!("handled above"),
        KernelCommand::Info { kernel, format }
        | KernelCommand::Fn { kernel, format, .. }
        | KernelCommand::Type { kernel, format, .. }
        | KernelCommand::At { kernel, format, .. } => (kernel, *format),
    };
    // `type` and `at` need the types alone: the rest of a folder is not read for them.
    let k = match cmd {
        KernelCommand::Type { .. } | KernelCommand::At { .. } => Kernel::open_cached(path, super::kernel_cache())
            .with_context(|| format!("cannot open kernel {}", path.display()))?,
        _ => super::open_kernel(path)?,
    };
    let (text, value) = match cmd {
        KernelCommand::Info { .. } => info(&k),
        KernelCommand::Fn { name, .. } => function(&k, name)?,
        KernelCommand::Type { name, .. } => {
            let (src, ty) = find_type(&k, name)?;
            let layout = layout::print_struct(src, ty)?;
            let size = src.size_of(ty)?;
            (layout.clone(), json!({"kernel": k.name, "type": name, "size": size, "layout": layout}))
        }
        KernelCommand::At { name, offset, .. } => at(&k, name, offset)?,
        KernelCommand::Fetch { .. } | KernelCommand::List { .. } => unreachable!("handled above"),
    };
    match format {
        Format::Human => print!("{text}"),
        Format::Json => println!("{}", serde_json::to_string_pretty(&value)?),
    }
    Ok(ExitCode::SUCCESS)
}

fn arch_name(k: &Kernel) -> &'static str {
    match k.arch {
        fevlint_types::Arch::X86_64 => "x86_64",
        fevlint_types::Arch::X86_32 => "x86_32",
    }
}

fn info(k: &Kernel) -> (String, Value) {
    let i = k.inputs();
    let from = |p: Option<String>| p.unwrap_or_else(|| "none".to_owned());
    let ff = k.filter_functions();
    let bl = k.kprobe_blacklist();
    let cfg = k.config();
    let types = k.types().map(|t| t.describe());
    let symbols = i.deferred_symbols.as_ref().map(|d| d.path.display().to_string());
    let mut text = format!("kernel {}\n  arch: {} (from {})\n", k.name, arch_name(k), k.arch_from);
    text.push_str(&format!(
        "  types: {}\n",
        from(k.types_from.clone().map(|f| format!("{f}, {}", types.clone().unwrap_or_default())))
    ));
    text.push_str(&format!(
        "  ftrace: {}\n",
        from(ff.map(|f| format!(
            "{} traceable functions ({} names) from {}",
            f.value.len(),
            f.value.distinct(),
            f.from
        )))
    ));
    text.push_str(&format!(
        "  kprobe blacklist: {}\n",
        from(bl.map(|b| format!("{} entries from {}", b.value.len(), b.from)))
    ));
    text.push_str(&format!("  symbols: {}\n", from(symbols.clone().map(|s| format!("{s} (read when needed)")))));
    text.push_str(&format!("  config: {}\n", from(cfg.map(|c| format!("{} options from {}", c.value.len(), c.from)))));
    for n in &k.notes {
        text.push_str(&format!("  note: {n}\n"));
    }
    let value = json!({
        "kernel": k.name,
        "arch": arch_name(k),
        "arch_from": k.arch_from,
        "types": k.types_from,
        "types_summary": types,
        "traceable_functions": ff.map(|f| f.value.len()),
        "traceable_names": ff.map(|f| f.value.distinct()),
        "kprobe_blacklist_entries": bl.map(|b| b.value.len()),
        "symbols": symbols,
        "config_options": cfg.map(|c| c.value.len()),
        "notes": k.notes,
    });
    (text, value)
}

/// What `fevlint kernel fn NAME --format json` prints: the function's prototypes, each
/// parameter's location and slots, and what each slot's register holds.
pub fn function_value(k: &Kernel, name: &str) -> anyhow::Result<Value> {
    function(k, name).map(|(_, v)| v)
}

fn function(k: &Kernel, name: &str) -> anyhow::Result<(String, Value)> {
    let f = k.function(name)?;
    if !f.exists() {
        bail!("{}: no function `{name}`", k.name);
    }
    let regs = abi::arg_registers(k.arch);
    let mut text = format!("{name} on {} ({})\n", k.name, arch_name(k));
    let mut protos = Vec::new();
    for info in &f.prototypes {
        let src = k.types().context("prototypes come from a type source")?;
        let sig = layout::pahole_prototype(src, info)?;
        text.push_str(&format!("  {sig}\n"));
        if let Some((file, line)) = &info.decl {
            text.push_str(&format!("    declared at {file}:{line}\n"));
        }
        let locs = abi::locate(k.arch, src, &info.proto)?;
        let mut params = Vec::new();
        // A slot is a register: each parameter is read by the slots of its registers.
        for p in &locs {
            let ty = layout::type_name(src, p.ty)?;
            let slots = abi::slots_of(k.arch, &p.loc);
            text.push_str(&format!(
                "    {:<9} {:<8} {:<16} {}{}{}\n",
                abi::describe_slots(&slots),
                p.loc.describe(),
                p.name.as_deref().unwrap_or("?"),
                ty,
                p.size.map(|s| format!(" ({s} bytes)")).unwrap_or_default(),
                p.why.as_ref().map(|w| format!("  [{w}]")).unwrap_or_default(),
            ));
            params.push(json!({
                "index": p.index, "name": p.name, "type": ty, "size": p.size,
                "location": p.loc.describe(), "slots": slots, "why": p.why,
            }));
        }
        let holds = abi::slot_holds(k.arch, &locs);
        let slot_list: Vec<Value> = holds
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let p = h.as_ref().and_then(|h| locs.get(h.param).map(|p| (p, h)));
                json!({
                    "slot": i, "register": regs.get(i), "param": p.map(|(p, _)| p.index),
                    "name": p.and_then(|(p, _)| p.name.clone()),
                    "bytes": p.map(|(_, h)| [h.start, h.end]), "part": p.map(|(_, h)| h.part),
                })
            })
            .collect();
        if info.proto.variadic {
            text.push_str("    (variadic)\n");
        }
        protos.push(json!({"signature": sig, "static": info.is_static, "decl": info.decl, "variadic": info.proto.variadic, "params": params, "slots": slot_list}));
    }
    if f.prototypes.is_empty() {
        text.push_str("  (no prototype: the kernel has no type information for it)\n");
    }
    let (verdict, count) = match &f.trace {
        Trace::Traceable { count } => ("traceable", Some(*count)),
        Trace::NotTraceable => ("not traceable", None),
        Trace::OnlyClones(_) => ("only clones traceable", None),
        Trace::Unknown => ("unknown", None),
    };
    text.push_str(&format!(
        "  traceable: {verdict}{}{}\n",
        count.filter(|&c| c > 1).map(|c| format!(" ({c} functions of this name)")).unwrap_or_default(),
        f.trace_from.as_ref().map(|s| format!(", decided by {s}")).unwrap_or_default()
    ));
    if !f.clones.is_empty() {
        text.push_str(&format!("  clones: {}\n", f.clones.join(", ")));
    }
    if f.prototypes.len() > 1 {
        text.push_str(&format!("  duplicates: {} type entries share this name\n", f.prototypes.len()));
    }
    if f.kprobe_blacklisted {
        text.push_str("  kprobe blacklist: yes (kprobes refuse it; ftrace does not consult the list)\n");
    }
    if let Some((w, s)) = &f.syscall {
        text.push_str(&format!("  syscall: {s} ({w:?} layer)\n"));
    }
    let value = json!({
        "kernel": k.name, "arch": arch_name(k), "name": name, "prototypes": protos,
        "traceable": verdict, "traceable_count": count, "decided_by": f.trace_from.as_deref(),
        "clones": f.clones, "kprobe_blacklisted": f.kprobe_blacklisted,
        "syscall": f.syscall.as_ref().map(|(w, s)| json!({"layer": format!("{w:?}"), "name": s})),
    });
    Ok((text, value))
}

/// `struct file` → the complete definition of that struct.
pub fn find_type<'k>(k: &'k Kernel, name: &str) -> anyhow::Result<(&'k dyn TypeSource, TypeRef)> {
    let src = k.types().with_context(|| format!("{} has no type information (no BTF or DWARF)", k.name))?;
    let name = name.trim();
    let (ns, bare) = match name.split_once(char::is_whitespace) {
        Some(("struct", rest)) => (TypeNamespace::Struct, rest.trim()),
        Some(("union", rest)) => (TypeNamespace::Union, rest.trim()),
        Some(("enum", rest)) => (TypeNamespace::Enum, rest.trim()),
        _ => (TypeNamespace::Ordinary, name),
    };
    let found = src.find_type(ns, bare)?;
    let ty = *found.first().with_context(|| format!("{}: no type `{name}`", k.name))?;
    Ok((src, ty))
}

fn at(k: &Kernel, name: &str, offset: &str) -> anyhow::Result<(String, Value)> {
    let off = parse_number(offset).with_context(|| format!("`{offset}` is not a byte offset"))?;
    let (src, ty) = find_type(k, name)?;
    let paths = layout::member_at(src, ty, off)?;
    let mut text = String::new();
    let mut items = Vec::new();
    for p in &paths {
        let ty_name = layout::type_name(src, p.ty)?;
        let place = match p.place {
            Placement::Start => "start of".to_owned(),
            Placement::Inside { delta } => format!("{delta} bytes into"),
            Placement::Padding => "padding:".to_owned(),
        };
        text.push_str(&format!(
            "{name} +{off}: {place} {} ({ty_name}, offset {}, size {})\n",
            p.dotted(),
            p.offset,
            p.size
        ));
        items.push(json!({"member": p.dotted(), "type": ty_name, "offset": p.offset, "size": p.size, "place": place}));
    }
    if paths.is_empty() {
        text.push_str(&format!("{name} +{off}: past the end\n"));
    }
    Ok((text, json!({"kernel": k.name, "type": name, "offset": off, "members": items})))
}

/// Decimal, `0x` hex or `0` octal, like the scripts themselves.
pub fn parse_number(s: &str) -> Option<u64> {
    fevlint_syntax::lex::kstrtoul(s.trim().as_bytes(), 64)
}
