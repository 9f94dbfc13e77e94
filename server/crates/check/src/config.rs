//! `fevlint.toml`: the project configuration (kernels, rule selection, severities, arch),
//! found upward from each checked file, and the [`Settings`] one analysis runs with.
//! The CLI and the language server read the same file through [`Config`].

use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::REGISTRY;
use fevlint_types::Arch;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The name looked for in each folder from the checked file upward.
pub const FILE_NAME: &str = "fevlint.toml";

/// A parsed and validated `fevlint.toml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The file this was read from.
    pub path: PathBuf,
    /// Kernels to check against when the command line names none; relative paths are
    /// already joined to the config file's folder (`running` stays as it is).
    pub kernels: Vec<PathBuf>,
    /// Code prefixes to enable (`None`: every rule). Invariant: each matches a rule code.
    pub select: Option<Vec<String>>,
    /// Code prefixes to disable. Invariant: each matches a rule code.
    pub ignore: Vec<String>,
    /// Severity per rule code, sorted by code.
    pub severity: Vec<(&'static str, Severity)>,
    /// Architecture for checks without a kernel.
    pub arch: Option<Arch>,
    /// The ENDBR64 assumption for kprobe placement (`endbr = "image"`, the default).
    pub endbr: Option<crate::dynevents::Endbr>,
    /// Compiled BPF objects the project builds (files, or folders of `*.bpf.o`), joined
    /// to the config file's folder; the language server checks them.
    pub objects: Vec<PathBuf>,
    /// A core dump of one of the kernels, joined to the config file's folder: the
    /// language server shows each field's dry-run value from it (`fevlint dry-run` takes
    /// its core as an argument).
    pub core: Option<PathBuf>,
}

/// Why a config file cannot be used. Displays with the file, and line and column when
/// the mistake has a place.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// (`error`, not `source`: the message includes it, an error chain would repeat it.)
    #[error("cannot read {}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    #[error("{}:{line}:{column}: {message}", path.display())]
    Invalid { path: PathBuf, line: usize, column: usize, message: String },
    #[error("{}: {message}", path.display())]
    Unplaced { path: PathBuf, message: String },
}

/// The file as written; `deny_unknown_fields` makes a misspelt key an error.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    kernels: Vec<String>,
    select: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    severity: BTreeMap<String, Spanned<String>>,
    arch: Option<Spanned<String>>,
    endbr: Option<Spanned<String>>,
    #[serde(default)]
    objects: Vec<PathBuf>,
    core: Option<PathBuf>,
}

impl Config {
    /// Reads and validates one config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = fevlint_load::fsio::read_limited_string(path, fevlint_load::fsio::MAX_CONFIG_BYTES)
            .map_err(|e| ConfigError::Io { path: path.to_owned(), error: e.into_io() })?;
        Config::parse(path, &text)
    }

    /// The nearest `fevlint.toml` in `dir` or a folder above it.
    pub fn find(dir: &Path) -> Result<Option<Config>, ConfigError> {
        nearest_file(dir).map(|p| Config::load(&p)).transpose()
    }

    /// Parses config text; `path` names the file in errors and anchors relative kernels.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let invalid = |span: Option<Range<usize>>, message: String| match span {
            Some(span) => {
                let (line, column) = line_column(text, span.start);
                ConfigError::Invalid { path: path.to_owned(), line, column, message }
            }
            None => ConfigError::Unplaced { path: path.to_owned(), message },
        };
        // The toml crate's messages do not always name the key (`invalid type: …`):
        // quote the line it points at.
        let raw: RawConfig = toml::from_str(text).map_err(|e| {
            let quoted = e.span().and_then(|s| {
                let (line, _) = line_column(text, s.start);
                let source = text.lines().nth(line - 1)?.trim_end();
                Some(format!("\n  {line} | {source}"))
            });
            invalid(e.span(), format!("{}{}", e.message().trim(), quoted.unwrap_or_default()))
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        let kernels = raw
            .kernels
            .iter()
            .map(|k| if k == "running" || k.starts_with("debian:") { PathBuf::from(k) } else { base.join(k) })
            .collect();
        let prefixes = |key: &str, list: &[Spanned<String>]| -> Result<Vec<String>, ConfigError> {
            list.iter()
                .map(|p| parse_prefix(p.get_ref()).map_err(|m| invalid(Some(p.span()), format!("`{key}`: {m}"))))
                .collect()
        };
        let select = raw.select.as_deref().map(|l| prefixes("select", l)).transpose()?;
        let ignore = prefixes("ignore", &raw.ignore)?;
        let mut severity = Vec::new();
        for (key, value) in &raw.severity {
            let rule = crate::rules::by_code(key).ok_or_else(|| {
                invalid(Some(value.span()), format!("`severity`: unknown rule `{key}` (see `fevlint rule`)"))
            })?;
            let level = parse_severity(value.get_ref())
                .map_err(|m| invalid(Some(value.span()), format!("`severity.{key}`: {m}")))?;
            if severity.iter().any(|&(c, _)| c == rule.code) {
                return Err(invalid(Some(value.span()), format!("`severity`: `{}` is set twice", rule.code)));
            }
            severity.push((rule.code, level));
        }
        severity.sort_unstable();
        let arch = match &raw.arch {
            None => None,
            Some(a) => Some(parse_arch(a.get_ref()).map_err(|m| invalid(Some(a.span()), format!("`arch`: {m}")))?),
        };
        let endbr = match &raw.endbr {
            None => None,
            Some(e) => Some(
                crate::dynevents::Endbr::parse(e.get_ref())
                    .map_err(|m| invalid(Some(e.span()), format!("`endbr`: {m}")))?,
            ),
        };
        let objects = raw.objects.iter().map(|o| base.join(o)).collect();
        let core = raw.core.filter(|c| !c.as_os_str().is_empty()).map(|c| base.join(c));
        Ok(Config { path: path.to_owned(), kernels, select, ignore, severity, arch, endbr, objects, core })
    }

    /// The parser target `arch` names, if it names one.
    pub fn target(&self) -> Option<fevlint_syntax::Target> {
        self.arch.map(|a| match a {
            Arch::X86_64 => fevlint_syntax::Target::X86_64,
            Arch::X86_32 => fevlint_syntax::Target::X86_32,
        })
    }

    /// The rule selection and severities this config asks for.
    pub fn settings(&self) -> Settings {
        Settings { select: self.select.clone(), ignore: self.ignore.clone(), severity: self.severity.clone() }
    }
}

/// The path of the nearest `fevlint.toml` in `dir` (made absolute) or a folder above it.
pub fn nearest_file(dir: &Path) -> Option<PathBuf> {
    let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    dir.ancestors().map(|d| d.join(FILE_NAME)).find(|p| p.is_file())
}

/// Validates a code prefix (`S`, `K2`, `T404`): it must match at least one rule code.
/// Returns it uppercased.
pub fn parse_prefix(prefix: &str) -> Result<String, String> {
    let p = prefix.trim().to_ascii_uppercase();
    if !p.is_empty() && REGISTRY.iter().any(|r| r.code.starts_with(&p)) {
        Ok(p)
    } else {
        Err(format!("unknown rule code or prefix `{prefix}` (see `fevlint rule`)"))
    }
}

pub fn parse_severity(s: &str) -> Result<Severity, String> {
    match s {
        "error" => Ok(Severity::Error),
        "warning" => Ok(Severity::Warning),
        "info" => Ok(Severity::Info),
        _ => Err(format!("unknown severity `{s}` (expected `error`, `warning` or `info`)")),
    }
}

pub fn parse_arch(s: &str) -> Result<Arch, String> {
    match s {
        "x86_64" => Ok(Arch::X86_64),
        "x86_32" => Ok(Arch::X86_32),
        _ => Err(format!("unknown architecture `{s}` (expected `x86_64` or `x86_32`)")),
    }
}

/// 1-based line and character column of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = fevlint_syntax::floor_char_boundary(text, offset);
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (before.matches('\n').count() + 1, text[line_start..offset].chars().count() + 1)
}

/// Which rules run and at which severity they report: a config, possibly overridden
/// by the command line. The default enables every rule at its own severity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Settings {
    /// Prefixes to enable; `None` enables every rule.
    pub select: Option<Vec<String>>,
    /// Prefixes to disable.
    pub ignore: Vec<String>,
    /// Severity overrides by rule code.
    pub severity: Vec<(&'static str, Severity)>,
}

impl Settings {
    /// Whether a rule code is enabled. As in ruff, the more specific prefix wins between
    /// `select` and `ignore` (`select = ["T404"]` with `ignore = ["T"]` keeps `T404`
    /// only); on a tie `ignore` wins.
    pub fn enabled(&self, code: &str) -> bool {
        let longest = |list: &[String]| list.iter().filter(|p| code.starts_with(p.as_str())).map(String::len).max();
        let selected = match &self.select {
            None => Some(0),
            Some(list) => longest(list),
        };
        match (selected, longest(&self.ignore)) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(s), Some(i)) => s > i,
        }
    }

    /// The severity a diagnostic of `code` is reported with.
    pub fn severity(&self, code: &str, default: Severity) -> Severity {
        self.severity.iter().find(|&&(c, _)| c == code).map_or(default, |&(_, s)| s)
    }

    /// Whether a finding is reported (its rule is enabled) and at which severity: what
    /// the settings decide of each finding, for `fevlint check` and the language server
    /// (`analysis::report` adds the suppression comments and the order).
    pub fn settle(&self, d: &Diagnostic) -> Option<Severity> {
        self.enabled(d.code).then(|| self.severity(d.code, d.severity))
    }

    /// Drops diagnostics of disabled rules and applies the severity overrides
    /// ([`Settings::settle`] on each).
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain_mut(|d| match self.settle(d) {
            Some(severity) => {
                d.severity = severity;
                true
            }
            None => false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(select: Option<&[&str]>, ignore: &[&str]) -> Settings {
        let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        Settings { select: select.map(owned), ignore: owned(ignore), severity: Vec::new() }
    }

    #[test]
    fn the_more_specific_prefix_wins() {
        let s = settings(Some(&["T"]), &["T40"]);
        assert!(!s.enabled("T401") && !s.enabled("S001"));
        let s = settings(Some(&["T404"]), &["T"]);
        assert!(s.enabled("T404") && !s.enabled("T401"));
        let s = settings(None, &["S00"]);
        assert!(!s.enabled("S001") && s.enabled("N101"));
        let s = settings(Some(&["N1"]), &["N1"]);
        assert!(!s.enabled("N101"), "a tie goes to ignore");
    }

    #[test]
    fn errors_name_the_file_line_and_key() {
        let p = Path::new("/p/fevlint.toml");
        let e = Config::parse(p, "select = [\"S\"]\nkernal = []\n").expect_err("invalid").to_string();
        assert!(e.starts_with("/p/fevlint.toml:2:1: unknown field `kernal`"), "{e}");
        let e = Config::parse(p, "ignore = [\"S\",\n  \"Q9\"]\n").expect_err("invalid").to_string();
        assert_eq!(e, "/p/fevlint.toml:2:3: `ignore`: unknown rule code or prefix `Q9` (see `fevlint rule`)");
        let e = Config::parse(p, "[severity]\nT401 = \"fatal\"\n").expect_err("invalid").to_string();
        assert!(e.starts_with("/p/fevlint.toml:2:8: `severity.T401`: unknown severity `fatal`"), "{e}");
        let e = Config::parse(p, "[severity]\nT401 = \"error\"\nsize-mismatch = \"info\"\n")
            .expect_err("invalid")
            .to_string();
        assert!(e.contains("`T401` is set twice"), "{e}");
    }

    #[test]
    fn kernels_are_relative_to_the_file_and_names_resolve() {
        let c = Config::parse(
            Path::new("/repo/fevlint.toml"),
            "kernels = [\"k/6.12\", \"running\", \"/abs\"]\narch = \"x86_32\"\n[severity]\nduplicate-field = \"error\"\n",
        )
        .expect("valid");
        assert_eq!(c.kernels, [PathBuf::from("/repo/k/6.12"), PathBuf::from("running"), PathBuf::from("/abs")]);
        assert_eq!(c.arch, Some(Arch::X86_32));
        assert_eq!(c.severity, [("N102", Severity::Error)]);
        assert_eq!(c.settings().severity("N102", Severity::Warning), Severity::Error);
    }

    #[test]
    fn endbr_is_one_of_three() {
        let p = Path::new("/p/fevlint.toml");
        let c = Config::parse(p, "endbr = \"present\"\n").expect("valid");
        assert_eq!(c.endbr, Some(crate::dynevents::Endbr::Present));
        assert_eq!(Config::parse(p, "").expect("valid").endbr, None);
        let e = Config::parse(p, "endbr = \"cpu\"\n").expect_err("invalid").to_string();
        assert_eq!(e, "/p/fevlint.toml:1:9: `endbr`: unknown value `cpu` (expected `image`, `present` or `absent`)");
    }
}
