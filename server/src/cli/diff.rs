//! `fevlint diff A B`: signature and layout differences of two kernels, as text for a
//! kernel engineer or as JSON (the serialized [`KernelDiff`]).

use super::Format;
use anyhow::Context as _;
use fevlint_diff::{
    Filter, FunctionChange, FunctionDiff, KernelDiff, MemberChange, MemberInfo, ParamSig, Successor, TypeChange,
    TypeDiff,
};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The old kernel (anything `fevlint kernel` accepts).
    #[arg(value_parser = super::fetch::kernel_arg)]
    pub old: PathBuf,
    /// The new kernel.
    #[arg(value_parser = super::fetch::kernel_arg)]
    pub new: PathBuf,
    /// Only this function (repeatable); reported even when unchanged.
    #[arg(long = "function", value_name = "NAME")]
    pub functions: Vec<String>,
    /// Only this struct or union (`'struct file'`, repeatable); reported even when unchanged.
    #[arg(long = "type", value_name = "TYPE")]
    pub types: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
}

pub fn run(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let open = |p: &PathBuf| super::open_kernel(p);
    let (a, b) = rayon::join(|| open(&args.old), || open(&args.new));
    let (a, b) = (a?, b?);
    let filter = Filter { functions: args.functions.clone(), types: args.types.clone() };
    let d = fevlint_diff::diff(&a, &b, &filter)?;
    let text = match args.format {
        Format::Human => human(&d, filter.is_empty()),
        Format::Json => serde_json::to_string_pretty(&d)? + "\n",
    };
    // A full diff is long: `fevlint diff A B | head` closing the pipe is not an error.
    match std::io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("writing the diff"),
        _ => Ok(ExitCode::SUCCESS),
    }
}

fn opt_name(n: &Option<String>) -> String {
    n.as_deref().map_or_else(|| "(unnamed)".to_owned(), |n| format!("`{n}`"))
}

fn size(s: Option<u64>) -> String {
    s.map_or_else(|| "?".to_owned(), |s| s.to_string())
}

fn param(p: &ParamSig) -> String {
    format!("{} {} ({} bytes, {})", p.ty, opt_name(&p.name), size(p.size), p.location)
}

/// One line per change; an empty list is "unchanged".
pub fn function_lines(f: &FunctionDiff) -> Vec<String> {
    if f.changes.is_empty() {
        return vec!["unchanged".to_owned()];
    }
    f.changes
        .iter()
        .map(|c| match c {
            FunctionChange::Removed { successor: None } => "removed".to_owned(),
            FunctionChange::Removed { successor: Some(Successor::Renamed { name }) } => {
                format!("removed (renamed to {name}?)")
            }
            FunctionChange::Removed { successor: Some(Successor::Alias { name }) } => {
                format!("removed (still exists as {name})")
            }
            FunctionChange::Removed { successor: Some(Successor::Clones { names }) } => {
                format!("removed (still traceable as clone {})", names.join(", "))
            }
            FunctionChange::Added { predecessor: None } => "added".to_owned(),
            FunctionChange::Added { predecessor: Some(p) } => format!("added (renamed from {p}?)"),
            FunctionChange::Traceability { old, new } => {
                format!("traceability: {} → {}", old.describe(), new.describe())
            }
            FunctionChange::Prototypes { old, new } => format!("prototypes in BTF: {old} → {new}"),
            FunctionChange::ParamCount { old, new } => format!("parameters: {old} → {new}"),
            FunctionChange::ParamRemoved { param: p } => format!("param {} removed: {}", p.index, param(p)),
            FunctionChange::ParamAdded { param: p } => format!("param {} added: {}", p.index, param(p)),
            FunctionChange::ParamName { index, old, new } => {
                format!("param {index} renamed {} → {}", opt_name(old), opt_name(new))
            }
            FunctionChange::ParamType { index, name, old, new } => {
                format!("param {index} {}: type {old} → {new}", opt_name(name))
            }
            FunctionChange::ParamSize { index, name, old, new } => {
                format!("param {index} {}: size {} → {} bytes", opt_name(name), size(*old), size(*new))
            }
            FunctionChange::ParamLocation { index, name, old, new } => {
                format!("param {index} {}: moved {old} → {new}", opt_name(name))
            }
            FunctionChange::Return { old, new } => format!("return type {old} → {new}"),
            FunctionChange::Variadic { old, new } => format!("variadic {old} → {new}"),
        })
        .collect()
}

fn offset(m: &MemberInfo) -> String {
    match m.bitfield {
        Some(w) => format!("{}:{} ({w}-bit field)", m.offset, m.bit_offset % 8),
        None => m.offset.to_string(),
    }
}

fn member_line(c: &MemberChange) -> String {
    match c {
        MemberChange::Removed { member: m } => {
            format!("{} removed ({} at {}, {} bytes)", m.path, m.ty, offset(m), m.size)
        }
        MemberChange::Added { member: m } => format!("{} added ({} at {}, {} bytes)", m.path, m.ty, offset(m), m.size),
        MemberChange::Renamed { old, new } => {
            format!("{} renamed to {} ({} at {})", old.path, new.path, new.ty, offset(new))
        }
        MemberChange::Moved { path, old_offset, new_offset, old_bit_offset, new_bit_offset } => {
            if old_bit_offset % 8 == 0 && new_bit_offset % 8 == 0 {
                format!("{path} moved {old_offset} → {new_offset}")
            } else {
                format!("{path} moved {old_offset}:{} → {new_offset}:{}", old_bit_offset % 8, new_bit_offset % 8)
            }
        }
        MemberChange::Resized { path, old_size, new_size, old_bitfield, new_bitfield } => {
            match (old_bitfield, new_bitfield) {
                (None, None) => format!("{path} resized {old_size} → {new_size} bytes"),
                _ => format!(
                    "{path} resized {} → {} bits",
                    old_bitfield.map_or(old_size * 8, u64::from),
                    new_bitfield.map_or(new_size * 8, u64::from)
                ),
            }
        }
        MemberChange::Retyped { path, old, new } => format!("{path} retyped {old} → {new}"),
    }
}

/// The type's changes in words: the head line (size) and one line per member change.
pub fn type_lines(t: &TypeDiff) -> (String, Vec<String>) {
    let mut head = Vec::new();
    let mut members = Vec::new();
    for c in &t.changes {
        match c {
            TypeChange::Removed { size } => head.push(format!("removed (was {size} bytes)")),
            TypeChange::Added { size } => head.push(format!("added ({size} bytes)")),
            TypeChange::Size { old, new } => head.push(format!("size {old} → {new}")),
            TypeChange::Duplicates { old, new } => {
                head.push(format!("{old} → {new} definitions of that name, the first compared"))
            }
            TypeChange::Member { change } => members.push(member_line(change)),
        }
    }
    if t.changes.is_empty() {
        head.push("unchanged".to_owned());
    } else if head.is_empty() {
        head.push("same size".to_owned());
    }
    (head.join("; "), members)
}

pub fn human(d: &KernelDiff, full: bool) -> String {
    let s = &d.summary;
    let mut out = String::new();
    let _ = writeln!(out, "{} → {}", d.old, d.new);
    let _ = writeln!(
        out,
        "functions: {} in both, {} removed, {} added, {} with signature changes, {} with traceability changes",
        s.functions_compared,
        s.functions_removed,
        s.functions_added,
        s.functions_signature_changed,
        s.functions_traceability_changed
    );
    let _ = writeln!(
        out,
        "types: {} structs/unions in both, {} removed, {} added, {} changed ({} resized)",
        s.types_compared, s.types_removed, s.types_added, s.types_changed, s.types_resized
    );
    for n in &d.notes {
        let _ = writeln!(out, "note: {n}");
    }
    if !d.functions.is_empty() {
        let _ = writeln!(out, "\nfunctions:");
    }
    for f in &d.functions {
        let lines = function_lines(f);
        if lines.len() == 1 {
            let _ = writeln!(out, "  {}: {}", f.name, lines[0]);
        } else {
            let _ = writeln!(out, "  {}:", f.name);
            for l in lines {
                let _ = writeln!(out, "    {l}");
            }
        }
    }
    if !d.types.is_empty() {
        let _ = writeln!(out, "\ntypes:");
    }
    for t in &d.types {
        let (head, members) = type_lines(t);
        let _ = writeln!(out, "  {}: {head}", t.name);
        for m in members {
            let _ = writeln!(out, "    {m}");
        }
    }
    if full && d.functions.is_empty() && d.types.is_empty() {
        let _ = writeln!(out, "\nno differences");
    }
    out
}
