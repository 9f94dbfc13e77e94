//! `fevlint.lock`: what each definition meant on the kernel it was written for, so a
//! later check needs only the lock and the target kernel to find every definition whose
//! meaning changed (D505). TOML, sorted by file and line, one table per definition.

use crate::kernel::Kernel;
use crate::rules::meaning::DefinitionMeaning;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub version: u32,
    pub kernel: LockKernel,
    #[serde(default, rename = "definition")]
    pub definitions: Vec<LockedDefinition>,
}

/// The kernel the meanings were resolved on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockKernel {
    pub name: String,
    /// `btf-crc32:…` of the raw BTF (or `unknown`): tells two builds of one version apart.
    pub id: String,
    pub arch: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockedDefinition {
    /// The script, as given on the command line (relative paths stay relative).
    pub file: String,
    /// 1-based line, for people; definitions are matched by function name.
    pub line: u32,
    /// The definition as written.
    pub text: String,
    pub meaning: DefinitionMeaning,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: lock version {found}, this fevlint reads version {VERSION}")]
    Version { path: String, found: u32 },
    #[error("cannot write {path}: {source}")]
    Write { path: String, source: std::io::Error },
}

impl Lock {
    pub fn new(kernel: &Kernel) -> Lock {
        Lock {
            version: VERSION,
            kernel: LockKernel {
                name: kernel.name.clone(),
                id: kernel.identity(),
                arch: match kernel.arch {
                    crate::kernel::load::Arch::X86_64 => "x86_64".to_owned(),
                    crate::kernel::load::Arch::X86_32 => "x86_32".to_owned(),
                },
            },
            definitions: Vec::new(),
        }
    }

    pub fn read(path: &Path) -> Result<Lock, LockError> {
        let p = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| LockError::Read { path: p.clone(), source })?;
        let lock: Lock =
            toml::from_str(&text).map_err(|e| LockError::Parse { path: p.clone(), message: e.to_string() })?;
        if lock.version != VERSION {
            return Err(LockError::Version { path: p, found: lock.version });
        }
        Ok(lock)
    }

    /// Writes atomically (a temporary file renamed over the target).
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        let p = path.display().to_string();
        let mut sorted = self.clone();
        sorted.definitions.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        let text =
            toml::to_string(&sorted).map_err(|e| LockError::Parse { path: p.clone(), message: e.to_string() })?;
        let header = "# fevlint.lock: what each definition meant when it was locked. Written by `fevlint lock`.\n";
        crate::write_atomic(path, format!("{header}{text}").as_bytes())
            .map_err(|source| LockError::Write { path: p, source })
    }

    /// The meanings recorded for one script.
    pub fn for_file(&self, file: &str) -> Vec<DefinitionMeaning> {
        let norm = |s: &str| s.trim_start_matches("./").to_owned();
        self.definitions.iter().filter(|d| norm(&d.file) == norm(file)).map(|d| d.meaning.clone()).collect()
    }
}
