//! `fevlint check`: find the scripts and the config of each, analyse, render, set the exit
//! status.

use super::{Arch, EXIT_FINDINGS};
use anyhow::Context as _;
use fevlint_check::analysis;
use fevlint_check::config::{self, Config};
use fevlint_check::diagnostic::Severity;
use fevlint_check::render::{self, FileReport};
use fevlint_kernel::Kernel;
use fevlint_load::fsio;
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// How `check` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

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
    #[arg(long = "kernel", short = 'k', value_name = "KERNEL", value_parser = super::fetch::kernel_arg)]
    kernels: Vec<PathBuf>,
    /// A lock written by `fevlint lock`: report definitions whose meaning on the kernels
    /// differs from the recorded one (D505).
    #[arg(long)]
    lock: Option<PathBuf>,
    /// Target architecture for slot limits and number widths (default: the kernel's, else
    /// `arch` of fevlint.toml, else x86_64).
    #[arg(long, value_enum)]
    arch: Option<Arch>,
    /// Use this config file instead of the nearest `fevlint.toml` above each script.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
    /// Rule code prefixes to enable, comma-separated (replaces `select` of the config).
    #[arg(long, value_delimiter = ',', value_name = "PREFIXES")]
    select: Option<Vec<String>>,
    /// Rule code prefixes to disable, comma-separated (replaces `ignore` of the config).
    #[arg(long, value_delimiter = ',', value_name = "PREFIXES")]
    ignore: Option<Vec<String>>,
    /// Colour: auto (when stdout is a terminal), always, never.
    #[arg(long, default_value = "auto")]
    color: String,
    /// Succeed when the paths hold no script (by default no script is an error: a
    /// mistyped path must not pass as "checked 0 files").
    #[arg(long)]
    allow_empty: bool,
    /// Where kprobes on a function's entry sit (`*.dynevents`): `image` reads the
    /// function's first bytes from the kernel's image (default, or `endbr` of
    /// fevlint.toml); `present`/`absent` assume ENDBR64 on every function or none.
    #[arg(long, value_enum, value_name = "HOW")]
    endbr: Option<super::Endbr>,
}

pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let prefixes = |list: &Option<Vec<String>>| -> anyhow::Result<Option<Vec<String>>> {
        let Some(list) = list else { return Ok(None) };
        let parsed: Result<Vec<String>, String> = list.iter().map(|p| config::parse_prefix(p)).collect();
        parsed.map(Some).map_err(anyhow::Error::msg)
    };
    let (select, ignore) = (prefixes(&args.select).context("--select")?, prefixes(&args.ignore).context("--ignore")?);
    let explicit = args.config.as_deref().map(Config::load).transpose()?;
    let files = collect(&with_objects(&args.paths, explicit.as_ref())?, args.allow_empty)?;
    let mut configs = Configs::default();
    let mut kernels = Kernels::default();
    let lock = args.lock.as_ref().map(|p| fevlint_check::lock::Lock::read(p)).transpose()?;
    let mut parser = fevlint_syntax::Parser::new();
    let mut reports = Vec::with_capacity(files.len());
    let mut bpf_inputs = Vec::new();
    for input in files {
        let (name, bytes, dir) = match &input {
            Input::Stdin => ("<stdin>".to_owned(), super::scripts::read_stdin()?, PathBuf::from(".")),
            Input::File(path) => {
                let bytes = fsio::read_limited(path, fsio::MAX_SCRIPT_BYTES)?;
                let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                (path.display().to_string(), bytes, dir.to_owned())
            }
        };
        let config = match &explicit {
            Some(c) => Some(c),
            None => configs.nearest(&dir)?,
        };
        // Command-line flags override the config.
        let kernel_paths =
            if args.kernels.is_empty() { config.map_or(&[][..], |c| &c.kernels[..]) } else { &args.kernels[..] };
        // A compiled object reads only the kernel files its programs ask about (see
        // `check_bpf`); a script's checks use the whole model.
        let object = bytes.starts_with(b"\x7fELF");
        let kernel_refs = kernels.open(kernel_paths, !object)?;
        let arch = args.arch.map(|a| match a {
            Arch::X86_64 => fevlint_types::Arch::X86_64,
            Arch::X86_32 => fevlint_types::Arch::X86_32,
        });
        let target = match arch.or(config.and_then(|c| c.arch)) {
            Some(fevlint_types::Arch::X86_32) => fevlint_syntax::Target::X86_32,
            _ => fevlint_syntax::Target::X86_64,
        };
        let mut settings = config.map(Config::settings).unwrap_or_default();
        if let Some(s) = &select {
            settings.select = Some(s.clone());
        }
        if let Some(i) = &ignore {
            settings.ignore = i.clone();
        }
        if object {
            // A compiled BPF object, or a binary that embeds some (libbpf skeletons):
            // checked after the scripts, all objects of one kernel set together.
            bpf_inputs.push(BpfInput { name, bytes, dir, kernels: kernel_paths.to_vec(), settings });
            continue;
        }
        let bt_stdin = matches!(input, Input::Stdin)
            && fevlint_check::bpftrace::looks_like_bpftrace(&String::from_utf8_lossy(&bytes));
        if fevlint_check::bpftrace::is_bpftrace(&name) || bt_stdin {
            // A bpftrace script: bpftrace 0.17's parser, then each kernel's probes and
            // accesses (fevlint_check::bpftrace).
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let mut diagnostics = fevlint_check::bpftrace::check(&text, &kernel_refs);
            settings.apply(&mut diagnostics);
            reports.push(FileReport { name, text, diagnostics });
            continue;
        }
        if is_dynevents(&name) {
            // The mainline dialect: the kernel's own parser per kernel, then the checks
            // it does not make (fevlint_check::dynevents).
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let endbr = args.endbr.map(super::Endbr::model).or(config.and_then(|c| c.endbr)).unwrap_or_default();
            let mut diagnostics = fevlint_check::dynevents::check_with(&text, &kernel_refs, endbr);
            if let Some(l) = &lock {
                let locked = l.probes_for(&name);
                fevlint_check::dynevents::apply_lock(&text, &locked, &l.kernel.name, &kernel_refs, &mut diagnostics);
            }
            settings.apply(&mut diagnostics);
            reports.push(FileReport { name, text, diagnostics });
            continue;
        }
        let entries = lock.as_ref().map(|l| l.for_file(&name)).unwrap_or_default();
        let baseline = lock.as_ref().map(|l| (l.kernel.name.as_str(), entries.as_slice()));
        let (text, diagnostics) = analysis::check(
            &mut parser,
            bytes,
            &analysis::Options::new(target).kernels(&kernel_refs).settings(&settings).lock(baseline),
        );
        reports.push(FileReport { name, text, diagnostics });
    }
    let bpf = check_bpf(bpf_inputs, &kernels, &mut reports)?;
    let color = match args.color.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stdout().is_terminal(),
    };
    let base = std::env::current_dir().unwrap_or_default();
    let failed = reports.iter().flat_map(|r| &r.diagnostics).any(|d| d.severity == Severity::Error);
    // The kernels are not dropped: freeing their tables, indexes and symbol maps one
    // allocation at a time is work the process exit does at once (a compiled object
    // checked against four kernels spent 7% of its time there).
    std::mem::forget(kernels);
    if let Format::Json = args.format {
        // Streamed: a large run's document is never held whole in memory.
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        render::json::write(&mut out, &reports).and_then(|()| std::io::Write::flush(&mut out))?;
        return Ok(if failed { ExitCode::from(EXIT_FINDINGS) } else { ExitCode::SUCCESS });
    }
    let out = match args.format {
        Format::Human => {
            let mut s = render::text::render(&reports, color);
            s.push_str(&summary(&reports, &bpf));
            s
        }
        Format::Json => render::json::render(&reports),
        Format::Sarif => render::sarif::render(&reports, &base),
        Format::Github => render::github::render(&reports, &base),
    };
    print!("{out}");
    Ok(if failed { ExitCode::from(EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}

/// `paths` and, for each folder among them, the compiled objects its `fevlint.toml`
/// (`--config`, else the nearest) lists inside that folder (`objects = [...]`: files, or
/// folders searched for `*.bpf.o`).
fn with_objects(paths: &[PathBuf], explicit: Option<&Config>) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = paths.to_vec();
    for p in paths.iter().filter(|p| p.is_dir()) {
        let found = match explicit {
            Some(_) => None,
            None => Config::find(p)?,
        };
        let Some(config) = explicit.or(found.as_ref()) else { continue };
        let dir = std::path::absolute(p).unwrap_or_else(|_| p.clone());
        for o in &config.objects {
            if std::path::absolute(o).unwrap_or_else(|_| o.clone()).starts_with(&dir) {
                out.push(o.clone());
            }
        }
    }
    Ok(out)
}

/// The nearest config of each folder, read once.
#[derive(Default)]
struct Configs {
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
    loaded: HashMap<PathBuf, Config>,
}

impl Configs {
    fn nearest(&mut self, dir: &Path) -> anyhow::Result<Option<&Config>> {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
        if !self.by_dir.contains_key(&dir) {
            let found = config::nearest_file(&dir);
            if let Some(path) = &found {
                if !self.loaded.contains_key(path) {
                    self.loaded.insert(path.clone(), Config::load(path)?);
                }
            }
            self.by_dir.insert(dir.clone(), found);
        }
        Ok(self.by_dir.get(&dir).and_then(Option::as_ref).and_then(|p| self.loaded.get(p)))
    }
}

/// Kernels opened once each, whichever configs name them.
#[derive(Default)]
struct Kernels {
    open: HashMap<PathBuf, Kernel>,
}

impl Kernels {
    /// The kernels at `paths`, opened now if they are not yet. `whole`: every file the
    /// kernel folder left for later is read now too ([`Kernel::load_deferred`]), so a broken
    /// one is an error before anything is checked; otherwise only what a check asks for is
    /// read, and [`Kernels::read_errors`] reports a broken one after the check.
    fn open(&mut self, paths: &[PathBuf], whole: bool) -> anyhow::Result<Vec<&Kernel>> {
        let mut seen = std::collections::HashSet::new();
        let new: Vec<&PathBuf> = paths.iter().filter(|p| !self.open.contains_key(*p) && seen.insert(*p)).collect();
        // `debian:VERSION` in a fevlint.toml: fetched (once) like on the command line.
        let resolved: Vec<PathBuf> = new
            .iter()
            .map(|p| match p.to_str().filter(|s| s.starts_with(super::fetch::DEBIAN)) {
                Some(spec) => super::fetch::kernel_arg(spec).map_err(anyhow::Error::msg),
                None => Ok((*p).clone()),
            })
            .collect::<anyhow::Result<_>>()?;
        for (path, k) in new.iter().zip(Kernel::open_all(&resolved, super::kernel_cache())) {
            let k = k.with_context(|| format!("cannot open kernel {}", path.display()))?;
            if whole {
                k.load_deferred().map_err(|e| anyhow::anyhow!("cannot open kernel {}: {e}", path.display()))?;
            }
            for note in &k.notes {
                eprintln!("note: kernel {}: {note}", k.name);
            }
            self.open.insert((*path).clone(), k);
        }
        let open: Vec<&Kernel> = paths.iter().filter_map(|p| self.open.get(p)).collect();
        if whole {
            // Opened earlier for an object: the rest of its files now.
            for (path, k) in paths.iter().zip(&open) {
                k.load_deferred().map_err(|e| anyhow::anyhow!("cannot open kernel {}: {e}", path.display()))?;
            }
        }
        Ok(open)
    }

    /// The first file left for later that a check read and could not (see
    /// [`Kernels::open`]), as the error [`Kernel::load_deferred`] gives at open.
    fn read_errors(&self, paths: &[PathBuf]) -> anyhow::Result<()> {
        for path in paths {
            if let Some(e) = self.open.get(path).and_then(Kernel::deferred_error) {
                anyhow::bail!("cannot open kernel {}: {e}", path.display());
            }
        }
        Ok(())
    }
}

fn summary(reports: &[FileReport], bpf: &BpfSummary) -> String {
    let count = |s| reports.iter().flat_map(|r| &r.diagnostics).filter(|d| d.severity == s).count();
    let scripts = reports.len() - bpf.reports;
    let definitions: usize = reports[..scripts]
        .iter()
        .map(|r| {
            if fevlint_check::bpftrace::is_bpftrace(&r.name) {
                // A bpftrace script's "definitions" are its attach points.
                fevlint_bpftrace_count(&r.text)
            } else {
                analysis::count_definitions(&r.text)
            }
        })
        .sum();
    let objects = if bpf.objects == 0 {
        String::new()
    } else {
        format!(
            ", {} BPF object{} ({} program{}, {} CO-RE relocation{})",
            bpf.objects,
            plural(bpf.objects),
            bpf.programs,
            plural(bpf.programs),
            bpf.relocations,
            plural(bpf.relocations)
        )
    };
    let checked = if scripts == 0 && bpf.objects > 0 {
        objects.trim_start_matches(", ").to_owned()
    } else {
        format!("{} file{}, {} definition{}{objects}", scripts, plural(scripts), definitions, plural(definitions))
    };
    format!(
        "checked {checked}: {} error{}, {} warning{}\n",
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

/// A file that starts like an ELF: a BPF object, or a binary embedding some.
struct BpfInput {
    name: String,
    bytes: Vec<u8>,
    dir: PathBuf,
    kernels: Vec<PathBuf>,
    settings: config::Settings,
}

/// What the BPF part of a run covered, for the summary. Its reports come last.
#[derive(Default)]
struct BpfSummary {
    reports: usize,
    objects: usize,
    programs: usize,
    relocations: usize,
}

/// Checks the BPF inputs (grouped by kernel set) and appends their reports: one per C
/// source file the findings point at (line info), one per object without findings.
fn check_bpf(inputs: Vec<BpfInput>, kernels: &Kernels, reports: &mut Vec<FileReport>) -> anyhow::Result<BpfSummary> {
    use fevlint_bpf::BpfObject;
    use fevlint_check::analysis::check_objects_with;
    use fevlint_check::bpf::BpfKernel;
    let mut summary = BpfSummary::default();
    let first = reports.len();
    let mut groups: Vec<(Vec<PathBuf>, Vec<BpfInput>)> = Vec::new();
    for input in inputs {
        match groups.iter_mut().find(|(k, _)| *k == input.kernels) {
            Some((_, g)) => g.push(input),
            None => groups.push((input.kernels.clone(), vec![input])),
        }
    }
    let mut sources: HashMap<String, FileReport> = HashMap::new();
    for (paths, inputs) in groups {
        let refs: Vec<&Kernel> = paths.iter().filter_map(|p| kernels.open.get(p)).collect();
        let bpf_kernels: Vec<BpfKernel> = refs.iter().map(|k| BpfKernel::new(k)).collect();
        for k in bpf_kernels.iter().filter(|k| k.btf.is_none()) {
            eprintln!("note: kernel {}: no BTF: CO-RE relocations are not checked there", k.kernel.name);
        }
        let targets = fevlint_check::analysis::bpf_targets(&bpf_kernels);
        for input in inputs {
            let objects: Vec<BpfObject> = match BpfObject::parse(input.name.clone(), input.bytes.clone()) {
                Ok(o) => vec![o],
                Err(e) => {
                    let embedded = fevlint_bpf::host::embedded_objects(&input.name, &input.bytes)?;
                    if embedded.is_empty() {
                        anyhow::bail!("{e}: not a BPF object, and no BPF object is embedded in it");
                    }
                    embedded
                }
            };
            let findings = check_objects_with(&objects, &bpf_kernels, &targets, &|_| true);
            for (obj, found) in objects.iter().zip(findings) {
                summary.objects += 1;
                summary.programs += obj.programs.iter().filter(|p| p.def.is_some()).count();
                summary.relocations += obj.ext.as_ref().map_or(0, |e| e.core_relo_count());
                let mut own = FileReport { name: obj.name.clone(), text: String::new(), diagnostics: Vec::new() };
                for f in found {
                    let Some(src) = &f.source else {
                        own.diagnostics.push(f.diagnostic);
                        continue;
                    };
                    let path = [PathBuf::from(&src.file), input.dir.join(&src.file)].into_iter().find(|p| p.is_file());
                    let key = path.as_ref().map_or_else(|| src.file.clone(), |p| p.display().to_string());
                    let report = sources.entry(key.clone()).or_insert_with(|| {
                        let text = path
                            .as_ref()
                            .and_then(|p| fsio::read_limited(p, fsio::MAX_SCRIPT_BYTES).ok())
                            .map(|b| String::from_utf8_lossy(&b).into_owned())
                            .unwrap_or_default();
                        FileReport { name: key, text, diagnostics: Vec::new() }
                    });
                    // Each source is read once, by the first finding that points at it.
                    let d = if report.text.is_empty() {
                        let at = format!("at {}:{}:{} (source not found)", src.file, src.line, src.column);
                        f.diagnostic.note(at)
                    } else {
                        let span = f.span_in(&report.text);
                        let mut d = f.diagnostic;
                        d.span = span;
                        d
                    };
                    report.diagnostics.push(d);
                }
                input.settings.apply(&mut own.diagnostics);
                reports.push(own);
            }
            for r in sources.values_mut() {
                input.settings.apply(&mut r.diagnostics);
            }
        }
        kernels.read_errors(&paths)?;
    }
    let mut sources: Vec<FileReport> = sources.into_values().collect();
    sources.sort_by(|a, b| a.name.cmp(&b.name));
    for r in &mut sources {
        fevlint_check::rules::sort(&mut r.diagnostics);
        r.diagnostics.dedup();
    }
    reports.extend(sources);
    summary.reports = reports.len() - first;
    Ok(summary)
}

pub(super) enum Input {
    Stdin,
    File(PathBuf),
}

/// Whether a file is in the mainline dialect: `*.dynevents`, or named like the tracefs
/// files it is written to (`kprobe_events`, `dynamic_events`).
pub(super) fn is_dynevents(name: &str) -> bool {
    let base = Path::new(name).file_name().and_then(|n| n.to_str()).unwrap_or(name);
    base.ends_with(".dynevents") || matches!(base, "kprobe_events" | "dynamic_events")
}

/// Expands the arguments: directories recursively (`*.fev`, `*.dynevents`, `*.bt`, `*.bpf.o`,
/// sorted),
/// files as given.
///
/// Each file is taken once, whatever the number of ways it is reached (the same path
/// twice, a symlink beside its target, two hard links, a folder and a file inside it):
/// files are keyed by the device and inode of the file a path resolves to. A file keeps
/// the place where it was first met and the first name that is not a symlink (the
/// symlink's name when only links reach it). `fix` relies on this: a file read twice
/// would be fixed twice, the second time from its own output.
///
/// No file at all is an error (a mistyped path in CI must not pass as "checked 0
/// files") unless `allow_empty`.
pub(super) fn collect(paths: &[PathBuf], allow_empty: bool) -> anyhow::Result<Vec<Input>> {
    use std::os::unix::fs::MetadataExt as _;
    /// A file's identity: device and inode.
    type Key = (u64, u64);
    // (input, the key of a file, whether this name is a symlink)
    let mut met: Vec<(Input, Option<Key>, bool)> = Vec::new();
    let mut stdin = false;
    for p in paths {
        if p.as_os_str() == "-" {
            if !std::mem::replace(&mut stdin, true) {
                met.push((Input::Stdin, None, false));
            }
            continue;
        }
        let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
        let mut found = Vec::new();
        if meta.is_dir() {
            walk(p, &mut found)?;
            found.sort();
        } else {
            found.push(p.clone());
        }
        for f in found {
            let meta = std::fs::metadata(&f).with_context(|| format!("cannot read {}", f.display()))?;
            let link = std::fs::symlink_metadata(&f).is_ok_and(|m| m.file_type().is_symlink());
            met.push((Input::File(f), Some((meta.dev(), meta.ino())), link));
        }
    }
    let mut out: Vec<Input> = Vec::new();
    let mut at: HashMap<Key, (usize, bool)> = HashMap::new();
    for (input, key, link) in met {
        let Some(key) = key else {
            out.push(input);
            continue;
        };
        match at.get_mut(&key) {
            None => {
                at.insert(key, (out.len(), link));
                out.push(input);
            }
            // A later real name replaces a symlink's name, in the first one's place.
            Some((i, first_is_link)) if *first_is_link && !link => {
                out[*i] = input;
                *first_is_link = false;
            }
            Some(_) => {}
        }
    }
    if out.is_empty() && !allow_empty {
        let shown: Vec<String> = paths.iter().map(|p| format!("`{}`", p.display())).collect();
        anyhow::bail!(
            "no script to read: {} {} no `*.fev` or `*.dynevents` file (pass `--allow-empty` if that is expected)",
            shown.join(", "),
            if paths.len() == 1 { "holds" } else { "hold" }
        );
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
        } else if path.extension().is_some_and(|e| e == "fev" || e == "dynevents" || e == "bt")
            || path.to_str().is_some_and(|p| p.ends_with(".bpf.o"))
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Script files named by `paths` (directories searched for `*.fev`), each file once
/// (see [`collect`]); no stdin.
pub(super) fn script_paths(paths: &[PathBuf], allow_empty: bool) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for input in collect(paths, allow_empty)? {
        match input {
            // bpftrace scripts are checked, not locked or fixed.
            Input::File(p) if p.extension().is_some_and(|e| e == "bt") => {}
            Input::File(p) => out.push(p),
            Input::Stdin => anyhow::bail!("`-` (standard input) cannot be locked or fixed: name the files"),
        }
    }
    Ok(out)
}

/// A script as UTF-8 text, read with the script bound (for `lock` and `fix`, which
/// rewrite text; `check` reads bytes and reports bad UTF-8 as a diagnostic).
pub(super) fn read_script_text(path: &Path) -> anyhow::Result<String> {
    let bytes = fsio::read_limited(path, fsio::MAX_SCRIPT_BYTES)?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!(
            "cannot read {}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        )
    })
}

/// Attach points of a bpftrace script, for the summary line.
fn fevlint_bpftrace_count(text: &str) -> usize {
    fevlint_check::bpftrace::attach_point_count(text)
}
