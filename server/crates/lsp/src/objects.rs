//! Compiled BPF objects the workspace builds: the `objects` of each `fevlint.toml` in or
//! above the workspace folders, checked against that config's kernels as `fevlint check`
//! checks an object (the same `B` rules, `fevlint_check::analysis::check_objects_with`),
//! their findings placed at the `.bpf.c` (and header) lines the objects' `.BTF.ext` line
//! info names, and what each CO-RE relocation and attach point resolves to on each kernel,
//! kept for hovers at those lines.
//!
//! A source file line info names relatively is looked for beside the object, then beside
//! its `fevlint.toml`, then in each workspace folder (the CLI looks in the current folder
//! and beside the object); an absolute name that does not exist here (an object built in a
//! container) by its last components in the same places, before the path itself elsewhere. A
//! finding whose source is not found stays on the object itself, with a note naming the
//! place.
//!
//! Cost is bounded: at most [`MAX_OBJECTS`] objects of at most
//! [`fevlint_load::fsio::MAX_SCRIPT_BYTES`] each, and sources of that size too.

use crate::config::{self, Layer, Problem};
use fevlint_bpf::{AttachKind, BpfObject, Outcome};
use fevlint_check::bpf::{place_finding, place_relocation, BpfKernel, How, Relocated};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_check::rules;
use fevlint_kernel::Kernel;
use fevlint_syntax::Span;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Finds a source file line info names, and its text.
type SourceOf<'a> = dyn FnMut(&str) -> Option<(PathBuf, Arc<str>)> + 'a;

/// Objects read at most.
pub const MAX_OBJECTS: usize = 1_000;

/// Whether a document is C (a `.bpf.c` or a header): never read as a probe script.
pub fn is_c(path: &str, language: &str) -> bool {
    matches!(language, "c" | "cpp" | "objective-c") || [".c", ".h"].iter().any(|e| path.ends_with(e))
}

/// One object to check, with the settings of the `fevlint.toml` that names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Configured {
    pub path: PathBuf,
    /// The folder of that `fevlint.toml`.
    pub config_dir: PathBuf,
    pub kernels: Vec<PathBuf>,
    /// Which findings are reported, at which severity (as `fevlint check` decides).
    pub rules: fevlint_check::config::Settings,
}

/// The objects the `fevlint.toml` files in and above `roots` name (a folder stands for
/// the `*.bpf.o` under it), with their settings (`layers` over each file), sorted; the
/// problems of those files; and the folders they name (where new objects may appear).
pub fn configured(roots: &[PathBuf], layers: &[&Layer]) -> (Vec<Configured>, Vec<Problem>, Vec<PathBuf>) {
    let mut files: Vec<PathBuf> = roots.iter().filter_map(|r| config::find_file(r)).collect();
    files.extend(crate::workspace::scan_for(roots, &|p| p.file_name().is_some_and(|n| n == config::FILE_NAME)));
    files.sort();
    files.dedup();
    let mut out: Vec<Configured> = Vec::new();
    let mut problems = Vec::new();
    let mut folders = Vec::new();
    for file in files {
        let (settings, found) = config::resolve(Some(&file), layers);
        problems.extend(found);
        let config_dir = file.parent().unwrap_or(Path::new(".")).to_owned();
        for o in &settings.objects {
            let paths = if o.is_dir() {
                folders.push(o.clone());
                crate::workspace::scan_for(std::slice::from_ref(o), &|p| {
                    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".bpf.o"))
                })
            } else {
                vec![o.clone()]
            };
            for path in paths {
                if out.len() < MAX_OBJECTS && !out.iter().any(|c| c.path == path) {
                    let (kernels, rules) = (settings.kernels.clone(), settings.rules.clone());
                    out.push(Configured { path, config_dir: config_dir.clone(), kernels, rules });
                }
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    problems.sort_by_key(ToString::to_string);
    problems.dedup();
    folders.sort();
    folders.dedup();
    (out, problems, folders)
}

/// What one object says about one source file.
#[derive(Clone, Debug, Default)]
pub struct Source {
    /// The file's text as it was read (positions are counted in it).
    pub text: Arc<str>,
    pub diagnostics: Vec<Diagnostic>,
    pub hovers: Vec<Fact>,
}

/// What a CO-RE relocation or attach point at `span` resolves to on each kernel.
#[derive(Clone, Debug)]
pub struct Fact {
    pub span: Span,
    pub markdown: String,
}

/// One object checked: per source file (the object's own path for findings without a
/// source), or why it could not be read.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    pub sources: BTreeMap<PathBuf, Source>,
    pub error: Option<String>,
}

/// Checks `objects` (sharing one set of `kernels`) as `fevlint check` does.
pub fn check(objects: &[Configured], kernels: &[Arc<Kernel>], roots: &[PathBuf]) -> Vec<Checked> {
    let bpf_kernels: Vec<BpfKernel> = kernels.iter().map(|k| BpfKernel::new(k)).collect();
    let targets = fevlint_check::analysis::bpf_targets(&bpf_kernels);
    let mut texts: HashMap<PathBuf, Arc<str>> = HashMap::new();
    objects
        .iter()
        .map(|c| {
            let parsed = read(&c.path);
            let objects = match parsed {
                Ok(o) => o,
                Err(e) => return Checked { sources: BTreeMap::new(), error: Some(e) },
            };
            let findings = fevlint_check::analysis::check_objects_with(&objects, &bpf_kernels, &targets, &|_| true);
            let mut out = Checked::default();
            let dir = c.path.parent().unwrap_or(Path::new(".")).to_owned();
            let bases: Vec<&Path> =
                [dir.as_path(), c.config_dir.as_path()].into_iter().chain(roots.iter().map(PathBuf::as_path)).collect();
            let mut source_of = |file: &str| -> Option<(PathBuf, Arc<str>)> {
                let path = find_source(Path::new(file), &bases)?;
                let text = texts
                    .entry(path.clone())
                    .or_insert_with(|| {
                        std::fs::read(&path)
                            .ok()
                            .filter(|b| b.len() as u64 <= fevlint_load::fsio::MAX_SCRIPT_BYTES)
                            .map(|b| Arc::from(String::from_utf8_lossy(&b).as_ref()))
                            .unwrap_or_else(|| Arc::from(""))
                    })
                    .clone();
                (!text.is_empty()).then_some((path, text))
            };
            for (obj, found) in objects.iter().zip(findings) {
                facts(obj, &bpf_kernels, &targets, &found, &mut source_of, &mut out.sources);
                for f in &found {
                    let Some(severity) = c.rules.settle(&f.diagnostic) else { continue };
                    let mut d = f.diagnostic.clone();
                    d.severity = severity;
                    let placed = f.source.as_ref().and_then(|s| Some((s, source_of(&s.file)?)));
                    let (path, text) = match placed {
                        Some((_, (path, text))) => {
                            d.span = f.span_in(&text);
                            (path, text)
                        }
                        None => {
                            if let Some(src) = &f.source {
                                d = d.note(format!("at {}:{}:{} (source not found)", src.file, src.line, src.column));
                            }
                            (c.path.clone(), Arc::from(""))
                        }
                    };
                    let s = out.sources.entry(path).or_default();
                    s.text = text;
                    s.diagnostics.push(d);
                }
            }
            for s in out.sources.values_mut() {
                fevlint_check::rules::sort(&mut s.diagnostics);
                s.diagnostics.dedup();
            }
            out
        })
        .collect()
}

/// Where the source line info names as `file` is: itself when it exists under one of
/// `bases`; else `file` (relative) under one of them; else its last components (at most
/// four, longest first) under one of them (an object built in a container or another
/// checkout); else itself when it exists elsewhere.
fn find_source(file: &Path, bases: &[&Path]) -> Option<PathBuf> {
    let exists = file.is_absolute() && file.is_file();
    if exists && bases.iter().any(|b| file.starts_with(b)) {
        return Some(file.to_owned());
    }
    let parts: Vec<_> = file.components().filter(|c| matches!(c, std::path::Component::Normal(_))).collect();
    let mut tails: Vec<PathBuf> = Vec::new();
    if file.is_relative() {
        tails.push(file.to_owned());
    }
    for n in (1..=parts.len().min(4)).rev() {
        tails.push(parts[parts.len() - n..].iter().collect());
    }
    let found = tails.iter().flat_map(|t| bases.iter().map(move |b| b.join(t))).find(|p| p.is_file());
    found.or_else(|| exists.then(|| file.to_owned()))
}

/// The object at `path`, or the objects a binary embeds (libbpf skeletons).
fn read(path: &Path) -> Result<Vec<BpfObject>, String> {
    let bytes = fevlint_load::fsio::read_limited(path, fevlint_load::fsio::MAX_SCRIPT_BYTES)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let name = path.display().to_string();
    match BpfObject::parse(name.clone(), bytes.clone()) {
        Ok(o) => Ok(vec![o]),
        Err(e) => {
            let embedded = fevlint_bpf::host::embedded_objects(&name, &bytes).map_err(|e| e.to_string())?;
            if embedded.is_empty() {
                return Err(format!("{e}: not a BPF object, and no BPF object is embedded in it"));
            }
            Ok(embedded)
        }
    }
}

/// The hover facts of one object: each CO-RE relocation (its outcome on each kernel) and
/// each program's attach point (each kernel's verdict, from the findings), each at the
/// place its findings are put ([`fevlint_check::bpf::BpfFinding::span_in`]).
fn facts(
    obj: &BpfObject,
    kernels: &[BpfKernel<'_>],
    targets: &[Option<fevlint_bpf::core::Target<'_>>],
    found: &[fevlint_check::bpf::BpfFinding],
    source_of: &mut SourceOf<'_>,
    sources: &mut BTreeMap<PathBuf, Source>,
) {
    let per_kernel: Vec<Option<Vec<fevlint_bpf::Resolution>>> =
        targets.iter().map(|t| t.as_ref().map(|t| fevlint_bpf::resolve(obj, t))).collect();
    let Some(first) = per_kernel.iter().flatten().next() else {
        return program_facts(obj, kernels, found, source_of, sources);
    };
    for (i, r) in first.iter().enumerate() {
        let Some(src) = &r.source else { continue };
        let Some((path, text)) = source_of(&src.file) else { continue };
        let at = Relocated::of(obj, r);
        let (span, how) = place_relocation(&text, &at.kind, &at.subject, src, at.next.as_ref());
        let mut md = format!(
            "**CO-RE** `{}` of `{}` (relo #{} of `{}`, insn {})\n",
            r.kind,
            r.subject(),
            r.index,
            r.section,
            r.insn_off / 8
        );
        for (k, rs) in kernels.iter().zip(&per_kernel) {
            let outcome = match rs.as_ref().and_then(|rs| rs.get(i)).map(|r| &r.outcome) {
                Some(Outcome::Value { value }) => format!("= {value}"),
                Some(Outcome::Poisoned { reason }) => format!("poisoned: {reason}"),
                Some(Outcome::Failed { reason, .. }) => format!("libbpf fails: {reason}"),
                None => "no BTF: not resolved".to_owned(),
            };
            md.push_str(&format!("- `{}`: {outcome}\n", k.kernel.name));
        }
        if how == How::Line {
            md.push_str("\n_line info gives no column here: shown on the whole line_\n");
        }
        let s = sources.entry(path).or_default();
        s.text = text;
        s.hovers.push(Fact { span, markdown: md });
    }
    program_facts(obj, kernels, found, source_of, sources);
}

fn program_facts(
    obj: &BpfObject,
    kernels: &[BpfKernel<'_>],
    found: &[fevlint_check::bpf::BpfFinding],
    source_of: &mut SourceOf<'_>,
    sources: &mut BTreeMap<PathBuf, Source>,
) {
    for p in &obj.programs {
        let Some(def) = p.def else { continue };
        let Some(target) = def.target(&p.section) else { continue };
        let Some(src) = u32::try_from(p.offset).ok().and_then(|off| obj.source(&p.section, off)) else { continue };
        let Some((path, text)) = source_of(&src.file) else { continue };
        let anchor = format!("\"{}\"", p.section);
        let mut md = format!("**attach point** `{}` (program `{}`)\n", p.section, p.name);
        for k in kernels {
            let verdict = match def.kind {
                AttachKind::Uprobe | AttachKind::Usdt => "user space: not the kernel's to check".to_owned(),
                AttachKind::Other | AttachKind::StructOps | AttachKind::Freplace | AttachKind::KprobeMulti => {
                    "nothing named in the kernel to check".to_owned()
                }
                _ => {
                    let problems: Vec<&str> = found
                        .iter()
                        .filter(|f| {
                            (f.diagnostic.is(&rules::B611) || f.diagnostic.is(&rules::B613))
                                // A placeholder target's note is about every kernel (no kernel named).
                                && f.diagnostic.kernel.as_deref().is_none_or(|n| n == k.kernel.name)
                                && (f.anchor.as_deref() == Some(anchor.as_str())
                                    || f.program.as_deref() == Some(p.name.as_str()))
                        })
                        .map(|f| {
                            let m = &*f.diagnostic.message;
                            let said = format!("`{}` cannot attach on {}: ", p.section, k.kernel.name);
                            m.strip_prefix(said.as_str()).unwrap_or(m)
                        })
                        .collect();
                    if problems.is_empty() {
                        format!("`{target}` found")
                    } else {
                        problems.join("; ")
                    }
                }
            };
            md.push_str(&format!("- `{}`: {verdict}\n", k.kernel.name));
        }
        let span = place_finding(&text, Some(&anchor), src.line, src.column);
        let s = sources.entry(path).or_default();
        s.text = text;
        s.hovers.push(Fact { span, markdown: md });
    }
}

/// The facts at byte `offset` of a source: those whose span holds it (a relocation at
/// the name it reads, or on its whole line when line info gives no column), with the
/// narrowest of their spans.
pub fn hover_at<'a>(sources: impl Iterator<Item = &'a Source>, offset: usize) -> Option<(Span, String)> {
    let hit: Vec<&Fact> =
        sources.flat_map(|s| &s.hovers).filter(|f| f.span.start <= offset && offset < f.span.end).collect();
    let span = hit.iter().map(|f| f.span).min_by_key(|s| s.end - s.start)?;
    let mut md: Vec<&str> = hit.iter().map(|f| f.markdown.as_str()).collect();
    md.dedup();
    Some((span, md.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_built_elsewhere_is_found_by_its_last_components() {
        let dir = std::env::temp_dir().join(format!("fevlint-objects-src-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("ws/src")).expect("mkdir");
        std::fs::write(dir.join("ws/src/p.bpf.c"), "int x;\n").expect("write");
        let base = dir.join("ws");
        let bases = [base.as_path()];
        let found = |f: &str| find_source(Path::new(f), &bases);
        assert_eq!(found("src/p.bpf.c"), Some(dir.join("ws/src/p.bpf.c")));
        assert_eq!(found("/build/ci/repo/src/p.bpf.c"), Some(dir.join("ws/src/p.bpf.c")));
        assert_eq!(found("/elsewhere/q.bpf.c"), None);
        let existing = dir.join("ws/src/p.bpf.c").display().to_string();
        assert_eq!(found(&existing), Some(dir.join("ws/src/p.bpf.c")));
        // The workspace's copy comes before the one the object was built from.
        std::fs::create_dir_all(dir.join("built/src")).expect("mkdir");
        std::fs::write(dir.join("built/src/p.bpf.c"), "int x;\n").expect("write");
        let built = dir.join("built/src/p.bpf.c").display().to_string();
        assert_eq!(found(&built), Some(dir.join("ws/src/p.bpf.c")));
        std::fs::write(dir.join("built/src/q.bpf.c"), "int x;\n").expect("write");
        let elsewhere = dir.join("built/src/q.bpf.c");
        assert_eq!(found(&elsewhere.display().to_string()), Some(elsewhere));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn configs_name_objects_by_file_and_by_folder() {
        let dir = std::env::temp_dir().join(format!("fevlint-objects-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for f in ["a/build/x.bpf.o", "a/build/sub/y.bpf.o", "a/build/z.o", "a/one.bpf.o"] {
            let p = dir.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "").expect("write");
        }
        std::fs::write(
            dir.join("a").join(config::FILE_NAME),
            "kernels = [\"k\"]\nobjects = [\"build\", \"one.bpf.o\"]\n",
        )
        .expect("write");
        let (found, problems, folders) = configured(std::slice::from_ref(&dir), &[]);
        assert_eq!(folders, [dir.join("a/build")]);
        assert!(problems.is_empty(), "{problems:?}");
        let names: Vec<String> =
            found.iter().map(|c| c.path.strip_prefix(&dir).expect("inside").display().to_string()).collect();
        assert_eq!(names, ["a/build/sub/y.bpf.o", "a/build/x.bpf.o", "a/one.bpf.o"]);
        assert!(found.iter().all(|c| c.kernels == [dir.join("a/k")] && c.config_dir == dir.join("a")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_hover_takes_the_facts_under_the_cursor_only() {
        let text: Arc<str> = Arc::from("int x;\n\tout = BPF_CORE_READ(f, g); y = 1;\n");
        let fact = |start, end, md: &str| Fact { span: Span::new(start, end), markdown: md.to_owned() };
        let line = fact(8, 38, "line");
        let s = Source { text, diagnostics: Vec::new(), hovers: vec![fact(30, 31, "relo"), fact(0, 3, "prog")] };
        assert_eq!(hover_at([&s].into_iter(), 30), Some((Span::new(30, 31), "relo".to_owned())));
        assert_eq!(hover_at([&s].into_iter(), 15), None, "elsewhere on the line");
        assert_eq!(hover_at([&s].into_iter(), 1), Some((Span::new(0, 3), "prog".to_owned())));
        let mut s = s;
        s.hovers.push(line);
        assert_eq!(hover_at([&s].into_iter(), 15), Some((Span::new(8, 38), "line".to_owned())));
        assert_eq!(hover_at([&s].into_iter(), 30), Some((Span::new(30, 31), "relo\nline".to_owned())));
        let empty = Source::default();
        assert_eq!(hover_at([&empty].into_iter(), 0), None);
    }
}
