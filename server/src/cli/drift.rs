//! `fevlint lock` and `fevlint fix`: record what definitions mean, and rewrite the ones
//! whose members moved so they mean on a new kernel what they meant on the baseline.

use crate::analysis;
use crate::kernel::Kernel;
use crate::lock::{Lock, LockedDefinition};
use crate::rules::drift::{Change, Edit};
use crate::rules::Baseline;
use anyhow::{bail, Context as _};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, clap::Args)]
pub struct LockArgs {
    /// The kernel the scripts are written for.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", value_parser = super::fetch::kernel_arg)]
    kernel: PathBuf,
    /// Where to write the lock.
    #[arg(long, short = 'o', default_value = "fevlint.lock")]
    output: PathBuf,
    /// Scripts or directories.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct FixArgs {
    /// `--kernel OLD --kernel NEW`, or one `--kernel NEW` with `--lock`.
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", value_parser = super::fetch::kernel_arg)]
    kernels: Vec<PathBuf>,
    /// Restore the meanings recorded in this lock instead of an old kernel's.
    #[arg(long)]
    lock: Option<PathBuf>,
    /// Show the diff without writing.
    #[arg(long)]
    dry_run: bool,
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
}

pub fn lock(args: &LockArgs) -> anyhow::Result<ExitCode> {
    let k = super::open_kernel(&args.kernel)?;
    let mut lock = Lock::new(&k);
    let mut parser = crate::syntax::Parser::new();
    for path in super::check::script_paths(&args.paths)? {
        let text = super::check::read_script_text(&path)?;
        if super::check::is_dynevents(&path.display().to_string()) {
            lock.probes.extend(crate::dynevents::lock_entries(&text, &path.display().to_string(), &k));
            continue;
        }
        for (line, code, meaning) in analysis::meanings(&mut parser, &text, &k) {
            lock.definitions.push(LockedDefinition {
                file: path.display().to_string(),
                line: line + 1,
                text: code,
                meaning,
            });
        }
    }
    let n = lock.definitions.len();
    let p = lock.probes.len();
    lock.write(&args.output)?;
    let probes =
        if p > 0 { format!(" and {p} mainline argument{}", if p == 1 { "" } else { "s" }) } else { String::new() };
    println!(
        "locked {n} definition{}{probes} on {} into {}",
        if n == 1 { "" } else { "s" },
        k.name,
        args.output.display()
    );
    Ok(ExitCode::SUCCESS)
}

pub fn fix(args: &FixArgs) -> anyhow::Result<ExitCode> {
    let lock = args.lock.as_ref().map(|p| Lock::read(p)).transpose()?;
    let kernels: Vec<Kernel> = super::open_kernels(&args.kernels)?;
    let (old, new) = match (&lock, kernels.as_slice()) {
        (None, [old, new]) => (Some(old), new),
        (Some(_), [new]) => (None, new),
        _ => bail!("give `--kernel OLD --kernel NEW`, or `--lock FILE --kernel NEW`"),
    };
    let mut parser = crate::syntax::Parser::new();
    let mut changed_files = 0;
    let mut left = 0;
    for path in super::check::script_paths(&args.paths)? {
        let name = path.display().to_string();
        let text = super::check::read_script_text(&path)?;
        if super::check::is_dynevents(&name) {
            // The mainline dialect: every `+OFF(` whose member moved gets its new offset.
            let (fixed, gone) = match (old, &lock) {
                (Some(old), _) => crate::dynevents::fix(&text, old, new),
                (None, Some(l)) => crate::dynevents::fix_from_lock(&text, &l.probes_for(&name), new),
                (None, None) => unreachable!("checked above"),
            };
            for m in &gone {
                let line = text[..m.span.start].matches('\n').count() + 1;
                eprintln!("{name}:{line}: not fixed: `{}.{}` no longer exists on {}", m.container, m.member, new.name);
            }
            left += gone.len();
            if fixed != text {
                print!("{}", unified_diff(&name, &text, &fixed));
                changed_files += 1;
                if !args.dry_run {
                    crate::write_atomic(&path, fixed.as_bytes()).with_context(|| format!("cannot write {name}"))?;
                }
            }
            continue;
        }
        let entries = lock.as_ref().map(|l| l.for_file(&name)).unwrap_or_default();
        // What each original line meant: on the old kernel, or as locked. Every round of
        // fixes is checked against this, so renames and moved members stay matched.
        let mut by_line: Vec<Option<crate::rules::meaning::DefinitionMeaning>> = vec![None; text.lines().count() + 1];
        let base_name = match (old, &lock) {
            (Some(k), _) => {
                for (line, _, m) in analysis::meanings(&mut parser, &text, k) {
                    if let Some(slot) = by_line.get_mut(line as usize) {
                        *slot = Some(m);
                    }
                }
                k.name.clone()
            }
            (None, Some(l)) => {
                for lp in parser.lines(&text, analysis::target_for(new)) {
                    let Some((f, _)) = lp.parsed.as_ref().and_then(|p| p.function.as_ref()) else { continue };
                    if let (Some(slot), Some(m)) =
                        (by_line.get_mut(lp.number as usize), entries.iter().find(|e| &e.function == f))
                    {
                        *slot = Some(m.clone());
                    }
                }
                l.kernel.name.clone()
            }
            (None, None) => unreachable!("checked above"),
        };
        let baseline = Baseline::Lines { kernel: &base_name, lines: &by_line };
        // A moved member can hide the next one (`f_op` moved, then `read` inside it):
        // fix, re-check, repeat until nothing more can be fixed.
        let mut current = text.clone();
        let mut unfixable: Vec<(u32, Vec<String>)> = Vec::new();
        for _round in 0..8 {
            let drift = analysis::drift(&mut parser, &current, new, baseline);
            let mut edits: Vec<Edit> = Vec::new();
            unfixable.clear();
            for (line, changes) in &drift {
                let (fixable, reasons) = plan(new, changes);
                if fixable.is_empty() || !reasons.is_empty() {
                    unfixable
                        .push((*line, if reasons.is_empty() { vec!["no exact rewrite".to_owned()] } else { reasons }));
                } else {
                    edits.extend(fixable);
                }
            }
            if edits.is_empty() {
                break;
            }
            current = apply(&current, &mut edits);
        }
        for (line, reasons) in &unfixable {
            for r in reasons {
                eprintln!("{name}:{}: not fixed: {r}", line + 1);
            }
        }
        left += unfixable.len();
        if current == text {
            continue;
        }
        // Keep only the lines whose rewrite restores the meaning completely.
        let still: Vec<u32> = unfixable.iter().map(|(l, _)| *l).collect();
        let fixed: String = text
            .split_inclusive('\n')
            .zip(current.split_inclusive('\n'))
            .enumerate()
            .map(|(i, (a, b))| if still.contains(&(i as u32)) { a } else { b })
            .collect();
        if fixed == text {
            continue;
        }
        print!("{}", unified_diff(&name, &text, &fixed));
        changed_files += 1;
        if !args.dry_run {
            crate::write_atomic(&path, fixed.as_bytes()).with_context(|| format!("cannot write {name}"))?;
        }
    }
    eprintln!(
        "{} {changed_files} file{}; {left} definition{} left for you",
        if args.dry_run { "would fix" } else { "fixed" },
        if changed_files == 1 { "" } else { "s" },
        if left == 1 { "" } else { "s" }
    );
    Ok(if left > 0 { ExitCode::from(super::EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}

/// The edits that restore a definition, or why it cannot be fixed with certainty.
fn plan(new: &Kernel, changes: &[Change]) -> (Vec<Edit>, Vec<String>) {
    let mut edits = Vec::new();
    let mut reasons = Vec::new();
    for c in changes {
        match c {
            Change::Member { fix: Some(e), .. } => edits.push(e.clone()),
            Change::Member { old, new_offset: None, .. } => {
                reasons.push(format!("`{}.{}` no longer exists on {}", old.container, old.member, new.name))
            }
            Change::Member { old, .. } => reasons.push(format!(
                "`{}.{}` moved, but the redirect cannot be rewritten exactly",
                old.container, old.member
            )),
            Change::FunctionGone { span, renames } if renames.len() == 1 => {
                edits.push(Edit { span: *span, replacement: renames[0].clone() });
            }
            Change::FunctionGone { renames, .. } => reasons.push(if renames.is_empty() {
                "the function is gone and nothing replaces it".to_owned()
            } else {
                format!("the function is gone; several candidates: {}", renames.join(", "))
            }),
            Change::Param { old, .. } => {
                reasons.push(format!("the parameter at slot {} changed: the slots need a person", old.slot))
            }
            Change::Value { field, .. } => {
                reasons.push(format!("the value `{field}` reads changed size or sign: choose the field type"))
            }
        }
    }
    (edits, reasons)
}

/// Applies non-overlapping edits, last first.
fn apply(text: &str, edits: &mut [Edit]) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut out = text.to_owned();
    let mut floor = usize::MAX;
    for e in edits.iter() {
        if e.span.end > floor {
            continue; // overlapping: keep the later one only
        }
        out.replace_range(e.span.start..e.span.end, &e.replacement);
        floor = e.span.start;
    }
    out
}

/// A unified diff with one hunk per changed line (edits never add or remove lines).
pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    let mut out = String::new();
    for (i, (a, b)) in old.lines().zip(new.lines()).enumerate() {
        if a != b {
            if out.is_empty() {
                out.push_str(&format!("--- a/{name}\n+++ b/{name}\n"));
            }
            out.push_str(&format!("@@ -{n},1 +{n},1 @@\n-{a}\n+{b}\n", n = i + 1));
        }
    }
    out
}
