//! `fevlint lock` and `fevlint fix`: record what definitions mean, and rewrite the ones
//! whose members moved so they mean on a new kernel what they meant on the baseline.

use anyhow::{bail, Context as _};
use fevlint_check::analysis;
use fevlint_check::drift::{Change, Edit};
use fevlint_check::lock::{Lock, LockedDefinition};
use fevlint_check::rules::Baseline;
use fevlint_kernel::Kernel;
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
    /// Succeed when the paths hold no script (by default no script is an error).
    #[arg(long)]
    allow_empty: bool,
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
    /// Scripts or directories; each file is fixed once, however many paths reach it.
    #[arg(default_value = ".")]
    paths: Vec<PathBuf>,
    /// Succeed when the paths hold no script (by default no script is an error).
    #[arg(long)]
    allow_empty: bool,
}

pub fn lock(args: &LockArgs) -> anyhow::Result<ExitCode> {
    let k = super::open_kernel(&args.kernel)?;
    let mut lock = Lock::new(&k);
    let mut parser = fevlint_syntax::Parser::new();
    for path in super::check::script_paths(&args.paths, args.allow_empty)? {
        let text = super::check::read_script_text(&path)?;
        if super::check::is_dynevents(&path.display().to_string()) {
            lock.probes.extend(fevlint_check::dynevents::lock_entries(&text, &path.display().to_string(), &k));
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
    let mut parser = fevlint_syntax::Parser::new();
    let mut changed_files = 0;
    let mut left = 0;
    // (file, new text): written at the end, once every file is known to be replaceable.
    let mut writes: Vec<(PathBuf, String)> = Vec::new();
    for path in super::check::script_paths(&args.paths, args.allow_empty)? {
        let name = path.display().to_string();
        let text = super::check::read_script_text(&path)?;
        if super::check::is_dynevents(&name) {
            // The mainline dialect: every `+OFF(` whose member moved gets its new offset.
            let (fixed, gone) = match (old, &lock) {
                (Some(old), _) => fevlint_check::dynevents::fix(&text, old, new),
                (None, Some(l)) => fevlint_check::dynevents::fix_from_lock(&text, &l.probes_for(&name), new),
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
                writes.push((path.clone(), fixed));
            }
            continue;
        }
        let entries = lock.as_ref().map(|l| l.for_file(&name)).unwrap_or_default();
        // What each original line meant: on the old kernel, or as locked. Every round of
        // fixes is checked against this, so renames and moved members stay matched.
        let mut by_line: Vec<Option<fevlint_check::meaning::DefinitionMeaning>> = vec![None; text.lines().count() + 1];
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
        writes.push((path.clone(), fixed));
    }
    if !args.dry_run {
        // Every file is checked before any is written: a refused one leaves all as they were.
        let refused: Vec<String> = writes.iter().filter_map(|(p, _)| replaceable(p).err()).collect();
        if !refused.is_empty() {
            for r in &refused {
                eprintln!("error: {r}");
            }
            bail!(
                "nothing written: {} of {} file{} cannot be replaced",
                refused.len(),
                writes.len(),
                plural(writes.len())
            );
        }
        for (path, fixed) in &writes {
            fevlint_check::write_atomic(path, fixed.as_bytes())
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    eprintln!(
        "{} {changed_files} file{}; {left} definition{} left for you",
        if args.dry_run { "would fix" } else { "fixed" },
        if changed_files == 1 { "" } else { "s" },
        if left == 1 { "" } else { "s" }
    );
    if changed_files > 0 {
        // The fixed scripts are written for the new kernel now: the old one is no longer
        // their baseline, and the same `fix` again would read the new offsets as old ones.
        let paths: Vec<String> = args.paths.iter().map(|p| shell_word(&p.display().to_string())).collect();
        let paths = paths.join(" ");
        let new_arg = shell_word(&new.path.display().to_string());
        let next = match old {
            Some(old) => format!(
                "the fixed definitions now mean on {new} what they meant on {old}, so `check -k OLD -k NEW` \
                 reports their new offsets as drift from {old}\n  \
                 check them on the new kernel alone:  fevlint check -k {new_arg} {paths}\n  \
                 keep this meaning for later kernels: fevlint lock -k {new_arg} {paths}   (then `check --lock fevlint.lock -k LATER`)\n  \
                 do not run this `fix` again: it would take the new offsets for {old}'s",
                new = new.name,
                old = old.name,
            ),
            None => format!(
                "the fixed definitions now mean on {new} what the lock records\n  \
                 check them:                         fevlint check --lock LOCK -k {new_arg} {paths}\n  \
                 make {new} the baseline: fevlint lock -k {new_arg} {paths}",
                new = new.name,
            ),
        };
        eprintln!("{} {next}", if args.dry_run { "once written," } else { "next:" });
    }
    Ok(if left > 0 { ExitCode::from(super::EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}

/// Whether `fix` may replace `path`: refused when the file is read-only (its mode has no
/// write bit, or this user may not write it: the rename would go around the protection)
/// or has several hard links (the rename would leave the other names with the old text).
fn replaceable(path: &std::path::Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt as _;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot write {shown}: {e}"))?;
    let writable = {
        use std::os::unix::ffi::OsStrExt as _;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|e| format!("{shown}: {e}"))?;
        // SAFETY: a NUL-terminated path, read during the call only.
        #[allow(unsafe_code)]
        let r = unsafe { libc::access(c.as_ptr(), libc::W_OK) };
        r == 0
    };
    if meta.permissions().readonly() || !writable {
        return Err(format!(
            "cannot write {shown}: it is read-only (mode {:o}); fevlint does not replace a file you protected: \
             make it writable (`chmod u+w`) to fix it",
            meta.mode() & 0o7777
        ));
    }
    if meta.nlink() > 1 {
        return Err(format!(
            "cannot write {shown}: it has {} hard links, and replacing it would leave the other names with the old \
             text: fix a copy and `cp` it back over this name (`cp` writes in place, so every name sees it)",
            meta.nlink()
        ));
    }
    Ok(())
}

/// `s` quoted for a shell when it needs quoting.
fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:=@,".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
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
