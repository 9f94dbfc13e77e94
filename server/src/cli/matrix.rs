//! `fevlint matrix`: on which kernels each definition is clean, and what it gets where it
//! is not, as a text summary, JSON, or a self-contained HTML report a tooling repo can
//! publish from CI. Each kernel is checked on its own (no drift baseline): a cell is that
//! kernel's errors and warnings on that line. A compiled BPF object (or a binary that
//! embeds some) gives a row per program: what that kernel says about the program or the
//! whole object (CO-RE, attach point, externs, arguments). A bpftrace script gives a row
//! per probe: what that kernel says about its attach points and accesses.

use super::check::{collect, is_dynevents, read_script_text, Input};
use anyhow::Context;
use clap::{Args, ValueEnum};
use fevlint_check::analysis;
use fevlint_check::diagnostic::{Diagnostic, Severity};
use fevlint_kernel::Kernel;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MatrixFormat {
    Human,
    Json,
    Html,
}

#[derive(Debug, Args)]
pub struct MatrixArgs {
    /// The kernels (repeatable): paths or `debian:VERSION`.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", required = true, value_parser = super::fetch::kernel_arg)]
    kernels: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "human")]
    format: MatrixFormat,
    /// Write the report here (atomically) instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    output: Option<PathBuf>,
    /// Scripts (`*.fev`, `*.dynevents`, `*.bt`), BPF objects or folders.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Succeed when the paths hold no script (by default no script is an error).
    #[arg(long)]
    allow_empty: bool,
}

#[derive(Debug, Serialize)]
struct Finding {
    code: &'static str,
    severity: &'static str,
    message: String,
}

#[derive(Debug, Serialize)]
struct Row {
    file: String,
    line: usize,
    text: String,
    /// Per kernel, in the order of `kernels`: its errors and warnings on this line.
    cells: Vec<Vec<Finding>>,
}

#[derive(Debug, Serialize)]
struct Matrix {
    version: u32,
    kernels: Vec<String>,
    definitions: Vec<Row>,
}

pub fn run(args: &MatrixArgs) -> anyhow::Result<ExitCode> {
    let kernels: Vec<Kernel> = super::open_kernels(&args.kernels)?;
    let mut parser = fevlint_syntax::Parser::new();
    let mut rows = Vec::new();
    let bpf_kernels: Vec<fevlint_check::bpf::BpfKernel> =
        kernels.iter().map(fevlint_check::bpf::BpfKernel::new).collect();
    let targets = analysis::bpf_targets(&bpf_kernels);
    for input in collect(&args.paths, args.allow_empty)? {
        let Input::File(path) = input else { anyhow::bail!("`-` (standard input) has no rows: name the files") };
        let name = path.display().to_string();
        let bytes = fevlint_load::fsio::read_limited(&path, fevlint_load::fsio::MAX_SCRIPT_BYTES)?;
        if bytes.starts_with(b"\x7fELF") {
            rows.extend(object_rows(&name, bytes, &bpf_kernels, &targets)?);
            continue;
        }
        let text = read_script_text(&path)?;
        if fevlint_check::bpftrace::is_bpftrace(&name) {
            rows.extend(bpftrace_rows(&name, &text, &kernels));
            continue;
        }
        let mainline = is_dynevents(&name);
        // Per kernel, the findings of the whole file.
        let per_kernel: Vec<Vec<Diagnostic>> = kernels
            .iter()
            .map(|k| {
                if mainline {
                    fevlint_check::dynevents::check(&text, &[k])
                } else {
                    let target = analysis::target_for(k);
                    analysis::check(
                        &mut parser,
                        text.as_bytes().to_vec(),
                        &analysis::Options::new(target).kernels(&[k]),
                    )
                    .1
                }
            })
            .collect();
        let mut start = 0;
        for (i, line) in text.split_inclusive('\n').enumerate() {
            let end = start + line.len();
            let code = line.split('#').next().unwrap_or("").trim();
            if !code.is_empty() {
                let cells = per_kernel
                    .iter()
                    .map(|ds| {
                        ds.iter()
                            .filter(|d| d.span.start >= start && d.span.start < end.max(start + 1))
                            .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
                            .map(|d| Finding {
                                code: d.code,
                                severity: d.severity.as_str(),
                                message: d.message.to_string(),
                            })
                            .collect()
                    })
                    .collect();
                rows.push(Row { file: name.clone(), line: i + 1, text: code.to_owned(), cells });
            }
            start = end;
        }
    }
    let matrix = Matrix { version: 1, kernels: kernels.iter().map(|k| k.name.clone()).collect(), definitions: rows };
    let out = match args.format {
        MatrixFormat::Human => human(&matrix),
        MatrixFormat::Json => serde_json::to_string_pretty(&matrix)? + "\n",
        MatrixFormat::Html => html(&matrix),
    };
    match &args.output {
        Some(p) => {
            fevlint_check::write_atomic(p, out.as_bytes()).with_context(|| format!("cannot write {}", p.display()))?
        }
        None => print!("{out}"),
    }
    let clean_everywhere = matrix.definitions.iter().all(|r| r.cells.iter().all(Vec::is_empty));
    Ok(if clean_everywhere { ExitCode::SUCCESS } else { ExitCode::from(super::EXIT_FINDINGS) })
}

/// One row per probe of a bpftrace script: per kernel, checked on its own, the errors
/// and warnings inside the probe (its attach points, predicate and body); a syntax
/// error bpftrace stops at is a row of its own.
fn bpftrace_rows(name: &str, text: &str, kernels: &[Kernel]) -> Vec<Row> {
    let probes = fevlint_check::bpftrace::probes(text);
    let per_kernel: Vec<Vec<Diagnostic>> = kernels.iter().map(|k| fevlint_check::bpftrace::check(text, &[k])).collect();
    let line_of = |at: usize| text[..at.min(text.len())].matches('\n').count() + 1;
    let cell = |ds: &[Diagnostic], inside: &dyn Fn(usize) -> bool| -> Vec<Finding> {
        ds.iter()
            .filter(|d| inside(d.span.start))
            .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
            .map(|d| Finding { code: d.code, severity: d.severity.as_str(), message: d.message.to_string() })
            .collect()
    };
    let mut rows = Vec::new();
    let within = |span: &fevlint_syntax::Span, at: usize| span.start <= at && at < span.end.max(span.start + 1);
    for (span, raw) in &probes {
        let inside = |at: usize| within(span, at);
        let cells = per_kernel.iter().map(|ds| cell(ds, &inside)).collect();
        rows.push(Row { file: name.to_owned(), line: line_of(span.start), text: raw.join(", "), cells });
    }
    // Findings outside every probe (a syntax error, a definition): one row for them.
    let outside = |at: usize| !probes.iter().any(|(span, _)| within(span, at));
    let rest: Vec<Vec<Finding>> = per_kernel.iter().map(|ds| cell(ds, &outside)).collect();
    if rest.iter().any(|c| !c.is_empty()) {
        let at = per_kernel.iter().flatten().map(|d| d.span.start).filter(|&a| outside(a)).min().unwrap_or(0);
        let line = text.lines().nth(line_of(at) - 1).unwrap_or("").trim().to_owned();
        rows.push(Row { file: name.to_owned(), line: line_of(at), text: line, cells: rest });
    }
    rows
}

/// One row per program of the object(s) in `bytes`: per kernel, the errors and warnings
/// about that program or the whole object there.
fn object_rows(
    name: &str,
    bytes: Vec<u8>,
    kernels: &[fevlint_check::bpf::BpfKernel],
    targets: &[Option<fevlint_bpf::core::Target>],
) -> anyhow::Result<Vec<Row>> {
    use fevlint_bpf::BpfObject;
    let objects: Vec<BpfObject> = match BpfObject::parse(name, bytes.clone()) {
        Ok(o) => vec![o],
        Err(e) => {
            let embedded = fevlint_bpf::host::embedded_objects(name, &bytes)?;
            if embedded.is_empty() {
                anyhow::bail!("{e}: not a BPF object, and no BPF object is embedded in it");
            }
            embedded
        }
    };
    // Checked together (a kfunc another kernel has in vmlinux is missing, not unknown),
    // then each kernel's own findings.
    let found = analysis::check_objects_with(&objects, kernels, targets, &|_| true);
    let per_kernel: Vec<Vec<Vec<&fevlint_check::bpf::BpfFinding>>> = kernels
        .iter()
        .map(|k| {
            found
                .iter()
                .map(|fs| {
                    fs.iter().filter(|f| f.diagnostic.kernel.as_deref().is_none_or(|n| n == k.kernel.name)).collect()
                })
                .collect()
        })
        .collect();
    let mut rows = Vec::new();
    for (i, object) in objects.iter().enumerate() {
        for p in object.programs.iter().filter(|p| p.def.is_some()) {
            let at = u32::try_from(p.offset).ok().and_then(|o| object.source(&p.section, o));
            let cells = per_kernel
                .iter()
                .map(|found| {
                    found[i]
                        .iter()
                        .filter(|f| f.program.as_deref().is_none_or(|q| q == p.name))
                        .filter(|f| matches!(f.diagnostic.severity, Severity::Error | Severity::Warning))
                        .map(|f| Finding {
                            code: f.diagnostic.code,
                            severity: f.diagnostic.severity.as_str(),
                            message: f.diagnostic.message.to_string(),
                        })
                        .collect()
                })
                .collect();
            rows.push(Row {
                file: at.as_ref().map_or_else(|| object.name.clone(), |s| s.file.clone()),
                line: at.as_ref().map_or(0, |s| s.line as usize),
                text: format!("SEC(\"{}\") {}", p.section, p.name),
                cells,
            });
        }
    }
    Ok(rows)
}

/// A cell's short form: `ok`, or its codes.
fn codes(cell: &[Finding]) -> String {
    if cell.is_empty() {
        return "ok".to_owned();
    }
    let mut c: Vec<&str> = cell.iter().map(|f| f.code).collect();
    c.dedup();
    c.join(",")
}

/// Per definition, the kernels grouped by what they say.
fn human(m: &Matrix) -> String {
    let mut out = String::new();
    let n = m.kernels.len();
    let mut clean = 0;
    for r in &m.definitions {
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        for (cell, k) in r.cells.iter().zip(&m.kernels) {
            let key = codes(cell);
            match groups.iter_mut().find(|(g, _)| *g == key) {
                Some((_, ks)) => ks.push(k),
                None => groups.push((key, vec![k])),
            }
        }
        let ok = groups.iter().find(|(g, _)| g == "ok").map_or(0, |(_, k)| k.len());
        clean += usize::from(ok == n);
        out.push_str(&format!("{}:{}: clean on {ok}/{n}  {}\n", r.file, r.line, r.text));
        for (g, ks) in groups.iter().filter(|(g, _)| g != "ok") {
            out.push_str(&format!("    {g}: {} ({})\n", ks.join(" "), ks.len()));
        }
    }
    out.push_str(&format!("{} definitions on {n} kernels: {clean} clean on every kernel\n", m.definitions.len()));
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A self-contained page: a table, definitions down, kernels across.
fn html(m: &Matrix) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>fevlint compatibility matrix</title>\n<style>\
         body{font:13px system-ui,sans-serif;margin:1em}table{border-collapse:collapse}\
         th,td{border:1px solid #ccc;padding:2px 4px}th.k{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal}\
         td.ok{background:#d7f5d7;text-align:center}td.w{background:#fff2c2}td.e{background:#f8d0d0}\
         td.def{font-family:monospace;white-space:nowrap;max-width:60em;overflow:hidden;text-overflow:ellipsis}</style></head><body>\n",
    );
    out.push_str(&format!(
        "<h1>Compatibility matrix</h1><p>{} definitions on {} kernels, checked by fevlint {}. Hover a cell for the findings.</p>\n<table><tr><th>definition</th>",
        m.definitions.len(),
        m.kernels.len(),
        env!("CARGO_PKG_VERSION")
    ));
    for k in &m.kernels {
        out.push_str(&format!("<th class=\"k\">{}</th>", escape(k)));
    }
    out.push_str("</tr>\n");
    for r in &m.definitions {
        out.push_str(&format!(
            "<tr><td class=\"def\" title=\"{}\">{}:{} {}</td>",
            escape(&r.text),
            escape(&r.file),
            r.line,
            escape(&r.text)
        ));
        for cell in &r.cells {
            if cell.is_empty() {
                out.push_str("<td class=\"ok\">✓</td>");
            } else {
                let class = if cell.iter().any(|f| f.severity == "error") { "e" } else { "w" };
                let tip: Vec<String> = cell.iter().map(|f| format!("{}: {}", f.code, f.message)).collect();
                out.push_str(&format!(
                    "<td class=\"{class}\" title=\"{}\">{}</td>",
                    escape(&tip.join("\n")),
                    codes(cell)
                ));
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></body></html>\n");
    out
}
