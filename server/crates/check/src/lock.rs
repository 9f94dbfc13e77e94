//! `fevlint.lock`: what each definition meant on the kernel it was written for, so a
//! later check needs only the lock and the target kernel to find every definition whose
//! meaning changed (D505). TOML, sorted by file and line, one table per definition.

use crate::rules::meaning::DefinitionMeaning;
use fevlint_kernel::Kernel;
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    pub version: u32,
    pub kernel: LockKernel,
    #[serde(default, rename = "definition")]
    pub definitions: Vec<LockedDefinition>,
    /// The arguments of mainline (`*.dynevents`) lines that dereference members.
    #[serde(default, rename = "probe", skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<LockedProbeArg>,
}

/// One argument of a mainline probe line: the member each of its `+OFF(…)` read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockedProbeArg {
    pub file: String,
    pub line: u32,
    /// `group/event`: the probe, matched by name.
    pub event: String,
    /// The argument's field name.
    pub arg: String,
    /// What it reads in C, for people.
    pub expr: String,
    /// Innermost dereference first.
    #[serde(rename = "read")]
    pub reads: Vec<LockedRead>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockedRead {
    pub offset: i64,
    /// `struct file`.
    pub container: String,
    /// `f_path.dentry`.
    pub member: String,
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
    /// (`error`, not `source`: the message includes it, an error chain would repeat it.)
    #[error("cannot read {path}: {error}")]
    Read { path: String, error: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: lock version {found}, this fevlint reads version {VERSION}")]
    Version { path: String, found: u32 },
    #[error("cannot write {path}: {error}")]
    Write { path: String, error: std::io::Error },
}

impl Lock {
    pub fn new(kernel: &Kernel) -> Lock {
        Lock {
            version: VERSION,
            kernel: LockKernel {
                name: kernel.name.clone(),
                id: kernel.identity(),
                arch: match kernel.arch {
                    fevlint_types::Arch::X86_64 => "x86_64".to_owned(),
                    fevlint_types::Arch::X86_32 => "x86_32".to_owned(),
                },
            },
            definitions: Vec::new(),
            probes: Vec::new(),
        }
    }

    pub fn read(path: &Path) -> Result<Lock, LockError> {
        let p = path.display().to_string();
        let text = fevlint_load::fsio::read_limited_string(path, fevlint_load::fsio::MAX_LOCK_BYTES)
            .map_err(|e| LockError::Read { path: p.clone(), error: e.into_io() })?;
        Lock::parse(path, &text)
    }

    /// Parses lock text; `path` names the file in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Lock, LockError> {
        let p = path.display().to_string();
        let lock: Lock =
            toml::from_str(text).map_err(|e| LockError::Parse { path: p.clone(), message: e.to_string() })?;
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
        sorted.probes.sort_by(|a, b| (&a.file, a.line, &a.arg).cmp(&(&b.file, b.line, &b.arg)));
        let text = sorted.to_toml().map_err(|e| LockError::Parse { path: p.clone(), message: e.to_string() })?;
        let header = "# fevlint.lock: what each definition meant when it was locked. Written by `fevlint lock`.\n";
        crate::write_atomic(path, format!("{header}{text}").as_bytes())
            .map_err(|error| LockError::Write { path: p, error })
    }

    /// The lock as TOML, the same text as `toml::to_string(self)`, but built one
    /// definition at a time: the toml serializer's cost grows with the square of the
    /// document's tables (each inserted into one string), 8.6 s for 40,000 definitions;
    /// this is linear.
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        #[derive(Serialize)]
        struct Head<'a> {
            version: u32,
            kernel: &'a LockKernel,
        }
        #[derive(Serialize)]
        struct One<'a> {
            definition: [&'a LockedDefinition; 1],
        }
        #[derive(Serialize)]
        struct Probe<'a> {
            probe: [&'a LockedProbeArg; 1],
        }
        if self.definitions.is_empty() && self.probes.is_empty() {
            return toml::to_string(self); // `definition = []`
        }
        let mut out = toml::to_string(&Head { version: self.version, kernel: &self.kernel })?;
        for d in &self.definitions {
            out.push('\n');
            out.push_str(&toml::to_string(&One { definition: [d] })?);
        }
        for p in &self.probes {
            out.push('\n');
            out.push_str(&toml::to_string(&Probe { probe: [p] })?);
        }
        Ok(out)
    }

    /// The mainline arguments recorded for one file.
    pub fn probes_for(&self, file: &str) -> Vec<LockedProbeArg> {
        let norm = |s: &str| s.trim_start_matches("./").to_owned();
        self.probes.iter().filter(|d| norm(&d.file) == norm(file)).cloned().collect()
    }

    /// The meanings recorded for one script.
    pub fn for_file(&self, file: &str) -> Vec<DefinitionMeaning> {
        let norm = |s: &str| s.trim_start_matches("./").to_owned();
        self.definitions.iter().filter(|d| norm(&d.file) == norm(file)).map(|d| d.meaning.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written by `fevlint lock` on the 6.12 fixture: a definition with a parameter and a
    /// field, and one with a member redirect.
    const LOCK: &str = r#"version = 1

[kernel]
name = "6.12.117+deb12-amd64"
id = "btf-crc32:78eae1aa"
arch = "x86_64"

[[definition]]
file = "lk.fev"
line = 1
text = "vfs_read(x64 file)"

[definition.meaning]
function = "vfs_read"
exists = true
signature = "ssize_t vfs_read(struct file * file, char * buf, size_t count, loff_t * pos);"
schema = "93a3a5371367a96e"

[[definition.meaning.param]]
slot = 0
name = "file"
type = "struct file *"
size = 8
location = "rdi"
canonical = "struct file *"

[[definition.meaning.field]]
name = "file"
type = "x64"
value = "file"
value_type = "struct file *"
value_size = 8
value_signed = false

[[definition]]
file = "lk.fev"
line = 2
text = "vfs_fsync(s64 f_count[0])"

[definition.meaning]
function = "vfs_fsync"
exists = true
signature = "int vfs_fsync(struct file * file, int datasync);"
schema = "97fa2529318e95ce"

[[definition.meaning.param]]
slot = 0
name = "file"
type = "struct file *"
size = 8
location = "rdi"
canonical = "struct file *"

[[definition.meaning.field]]
name = "f_count"
type = "s64"
value = "file->f_count.counter"
value_type = "s64"
value_size = 8
value_signed = true

[[definition.meaning.field.step]]
container = "struct file"
member = "f_count.counter"
offset = 0
size = 8
type = "s64"
"#;

    #[test]
    fn one_definition_at_a_time_is_the_whole_document() {
        let lock = Lock::parse(Path::new("fevlint.lock"), LOCK).expect("parse");
        assert_eq!(lock.definitions.len(), 2);
        let whole = toml::to_string(&lock).expect("toml");
        assert_eq!(lock.to_toml().expect("toml"), whole);
        assert_eq!(whole, LOCK);
        let empty = Lock { definitions: Vec::new(), ..lock };
        assert_eq!(empty.to_toml().expect("toml"), toml::to_string(&empty).expect("toml"));
    }
}
