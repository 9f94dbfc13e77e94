//! Settings: `fevlint.toml` found upward from the file, read by `fevlint check`'s own
//! reader (`fevlint_check::config::Config`: the same keys, checks and messages), then
//! `initializationOptions`, then `workspace/didChangeConfiguration` (each later layer
//! overrides per key).
//!
//! ```toml
//! arch = "x86_64"            # or "x86_32": the parser's slot limit and `long` size
//! kernels = ["fixtures/kernels/6.12.117"]   # relative to this file; loaded by the kernel layer
//! select = ["S", "K", "T"]   # rule code prefixes, as `fevlint check` reads them
//! ignore = ["T4"]
//! core = "dumps/vmcore"      # a dump of the (first matching) kernel: dry-run values as inlay hints
//! objects = ["build"]        # compiled BPF objects (files, or folders of `*.bpf.o`): their
//!                            # findings go to the `.bpf.c` lines (`crate::objects`)
//!
//! [severity]
//! T401 = "error"
//! ```
//! JSON layers take `arch`, `kernels`, `ignore` (code prefixes), `core` and `objects`, at
//! the top level or under `"fevlint"`.

use fevlint_syntax::Target;
use serde::Deserialize;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "fevlint.toml";

/// What applies to one document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub target: Target,
    /// Kernels to check against (stored; the kernel layer loads them).
    pub kernels: Vec<PathBuf>,
    /// Which rules are reported, at which severity (`select`, `ignore`, `[severity]`):
    /// decided by `fevlint_check` as for `fevlint check`.
    pub rules: fevlint_check::config::Settings,
    /// A core dump of one of the kernels: each field's dry-run value is an inlay hint.
    pub core: Option<PathBuf>,
    /// The `fevlint.toml` that contributed, if any.
    pub file: Option<PathBuf>,
    /// Compiled BPF objects to check (files, or folders of `*.bpf.o`).
    pub objects: Vec<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            target: Target::X86_64,
            kernels: Vec::new(),
            rules: fevlint_check::config::Settings::default(),
            core: None,
            file: None,
            objects: Vec::new(),
        }
    }
}

/// One layer: only the keys it sets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub arch: Option<String>,
    pub kernels: Option<Vec<PathBuf>>,
    /// Rule code prefixes not reported (replacing the file's `ignore`, as `--ignore` does).
    pub ignore: Option<Vec<String>>,
    /// An empty string clears a core set by an earlier layer.
    pub core: Option<PathBuf>,
    pub objects: Option<Vec<PathBuf>>,
}

pub fn target(arch: &str) -> Option<Target> {
    match arch {
        "x86_64" | "x86-64" | "amd64" => Some(Target::X86_64),
        "x86_32" | "x86-32" | "i386" | "i686" => Some(Target::X86_32),
        _ => None,
    }
}

impl Layer {
    /// A JSON layer (`initializationOptions`, `settings`), with or without `"fevlint"`.
    pub fn from_json(value: &serde_json::Value) -> Result<Layer, String> {
        let value = value.get("fevlint").unwrap_or(value);
        if value.is_null() {
            return Ok(Layer::default());
        }
        serde_json::from_value(value.clone()).map_err(|e| e.to_string())
    }

    /// Applies this layer over `s`; an unknown `arch` is an error and changes nothing.
    pub fn apply(&self, s: &mut Settings) -> Result<(), String> {
        if let Some(arch) = &self.arch {
            s.target = target(arch).ok_or_else(|| format!("unknown arch `{arch}` (expected x86_64 or x86_32)"))?;
        }
        if let Some(k) = &self.kernels {
            s.kernels.clone_from(k);
        }
        if let Some(i) = &self.ignore {
            let prefixes = i.iter().map(|p| fevlint_check::config::parse_prefix(p)).collect::<Result<Vec<_>, _>>();
            s.rules.ignore = prefixes.map_err(|e| format!("`ignore`: {e}"))?;
        }
        if let Some(c) = &self.core {
            s.core = (!c.as_os_str().is_empty()).then(|| c.clone());
        }
        if let Some(o) = &self.objects {
            s.objects.clone_from(o);
        }
        Ok(())
    }
}

/// A setting that could not be used, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    /// The `fevlint.toml` at fault; `None` for the client's settings.
    pub file: Option<PathBuf>,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(file) => write!(f, "{}: {}", file.display(), self.message),
            None => write!(f, "client settings: {}", self.message),
        }
    }
}

/// The nearest `fevlint.toml` at or above `dir`.
pub fn find_file(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().map(|d| d.join(FILE_NAME)).find(|p| p.is_file())
}

/// Resolves the settings of a document at `path` (none for unsaved buffers) from the
/// file layer and the client's layers, with what could not be used. A `fevlint.toml`
/// that cannot be read contributes nothing (its problem says so).
pub fn resolve(path: Option<&Path>, client: &[&Layer]) -> (Settings, Vec<Problem>) {
    let mut s = Settings::default();
    let mut problems = Vec::new();
    if let Some(file) = path.and_then(Path::parent).and_then(find_file) {
        match fevlint_check::config::Config::load(&file) {
            Ok(c) => {
                if let Some(target) = c.target() {
                    s.target = target;
                }
                s.rules = c.settings();
                s.kernels = c.kernels;
                s.core = c.core;
                s.objects = c.objects;
            }
            Err(e) => {
                // The problem names the file: its message keeps the place only.
                let message = e.to_string();
                let message = message
                    .strip_prefix(&*file.to_string_lossy())
                    .map_or(message.as_str(), |m| m.trim_start_matches(':').trim_start());
                problems.push(Problem { file: Some(file.clone()), message: message.to_owned() });
            }
        }
        s.file = Some(file);
    }
    for layer in client {
        if let Err(e) = layer.apply(&mut s) {
            problems.push(Problem { file: None, message: e });
        }
    }
    (s, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_override_per_key() {
        let dir = std::env::temp_dir().join(format!("fevlint-config-{}", std::process::id()));
        let sub = dir.join("a/b");
        std::fs::create_dir_all(&sub).expect("mkdir");
        std::fs::write(dir.join(FILE_NAME), "arch = \"x86_32\"\nkernels = [\"k/6.12\"]\n").expect("write");
        let (s, problems) = resolve(Some(&sub.join("x.fev")), &[]);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(s.target, Target::X86_32);
        assert_eq!(s.kernels, vec![dir.join("k/6.12")]);
        let init = Layer::from_json(&serde_json::json!({"fevlint": {"arch": "x86_64"}})).expect("json");
        let (s, _) = resolve(Some(&sub.join("x.fev")), &[&init]);
        assert_eq!(s.target, Target::X86_64);
        assert_eq!(s.kernels, vec![dir.join("k/6.12")], "kernels kept from the file");
        let bad = Layer::from_json(&serde_json::json!({"arch": "arm64"})).expect("json");
        let (s, problems) = resolve(Some(&sub.join("x.fev")), &[&bad]);
        assert_eq!(s.target, Target::X86_32, "an unknown arch changes nothing");
        assert_eq!(problems.len(), 1);
        // The rule keys are `fevlint check`'s: prefixes, `[severity]`; the client's `ignore`
        // replaces the file's, checked the same way.
        let toml = "ignore = [\"t4\"]\ncore = \"dumps/vmcore\"\n[severity]\nK201 = \"info\"\n";
        std::fs::write(dir.join(FILE_NAME), toml).expect("write");
        let (s, problems) = resolve(Some(&sub.join("x.fev")), &[]);
        assert!(problems.is_empty(), "{problems:?}");
        assert!(!s.rules.enabled("T401") && s.rules.enabled("K201"));
        assert_eq!(
            s.rules.severity("K201", fevlint_check::diagnostic::Severity::Error),
            fevlint_check::diagnostic::Severity::Info
        );
        assert_eq!(s.core, Some(dir.join("dumps/vmcore")));
        let client = Layer::from_json(&serde_json::json!({"ignore": ["K2"]})).expect("json");
        let (s, _) = resolve(Some(&sub.join("x.fev")), &[&client]);
        assert!(s.rules.enabled("T401") && !s.rules.enabled("K201"));
        let bad = Layer::from_json(&serde_json::json!({"ignore": ["Q9"]})).expect("json");
        let (s, problems) = resolve(Some(&sub.join("x.fev")), &[&bad]);
        assert!(!s.rules.enabled("T401"), "a bad prefix changes nothing");
        assert!(problems[0].message.contains("`Q9`"), "{problems:?}");
        std::fs::write(dir.join(FILE_NAME), "[severity]\nT401 = \"loud\"\n").expect("write");
        let (_, problems) = resolve(Some(&sub.join("x.fev")), &[]);
        assert_eq!(problems[0].file, Some(dir.join(FILE_NAME)));
        assert!(problems[0].message.starts_with("2:8: `severity.T401`: unknown severity `loud`"), "{problems:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
