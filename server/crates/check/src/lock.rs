//! `fevlint.lock`: what each definition meant on the kernel it was written for, so a
//! later check needs only the lock and the target kernel to find every definition whose
//! meaning changed (D505). TOML, sorted by file and line, one table per definition.

use crate::meaning::DefinitionMeaning;
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

    /// Writes atomically (a temporary file renamed over the target), sorted by file and
    /// line. Streamed: each definition's TOML goes to the file as it is made, in the
    /// order of a sorted list of references, so writing costs no copy of the lock and no
    /// document-sized string (40,000 definitions, 29.7 MB: 1,655 ms with a clone, the
    /// whole text and a copy of it with the header; see the `lock_write_cost` example).
    pub fn write(&self, path: &Path) -> Result<(), LockError> {
        use std::io::Write;
        let p = path.display().to_string();
        let mut definitions: Vec<&LockedDefinition> = self.definitions.iter().collect();
        definitions.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        let mut probes: Vec<&LockedProbeArg> = self.probes.iter().collect();
        probes.sort_by(|a, b| (&a.file, a.line, &a.arg).cmp(&(&b.file, b.line, &b.arg)));
        let header = "# fevlint.lock: what each definition meant when it was locked. Written by `fevlint lock`.\n";
        fevlint_load::fsio::write_atomic_with(path, |f| {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
            w.write_all(header.as_bytes())?;
            self.write_toml(&definitions, &probes, &mut w)?;
            w.flush()
        })
        .map_err(|error| LockError::Write { path: p, error })
    }

    /// The lock as TOML, the same text as `toml::to_string(self)` (see [`Lock::write_toml`]).
    pub fn to_toml(&self) -> Result<String, toml::ser::Error> {
        let definitions: Vec<&LockedDefinition> = self.definitions.iter().collect();
        let probes: Vec<&LockedProbeArg> = self.probes.iter().collect();
        let mut out = Vec::new();
        if let Err(e) = self.write_toml(&definitions, &probes, &mut out) {
            // Writing into memory fails only where the serializer did.
            return Err(<toml::ser::Error as serde::ser::Error>::custom(e));
        }
        Ok(String::from_utf8(out).unwrap_or_default())
    }

    /// Writes this lock's head and the given definitions and probes (in that order) as
    /// TOML, the same text as `toml::to_string` of a lock holding them, but one definition
    /// at a time: the toml serializer's cost grows with the square of the document's
    /// tables (each inserted into one string), 8.6 s for 40,000 definitions; this is
    /// linear. A serializer error comes back as an `io::Error` of kind `Other`.
    pub fn write_toml(
        &self,
        definitions: &[&LockedDefinition],
        probes: &[&LockedProbeArg],
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
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
        let toml = |r: Result<String, toml::ser::Error>| r.map_err(std::io::Error::other);
        if definitions.is_empty() && probes.is_empty() {
            // `definition = []`
            let empty = Lock {
                version: self.version,
                kernel: self.kernel.clone(),
                definitions: Vec::new(),
                probes: Vec::new(),
            };
            return out.write_all(toml(toml::to_string(&empty))?.as_bytes());
        }
        out.write_all(toml(toml::to_string(&Head { version: self.version, kernel: &self.kernel }))?.as_bytes())?;
        for d in definitions {
            out.write_all(b"\n")?;
            out.write_all(toml(toml::to_string(&One { definition: [*d] }))?.as_bytes())?;
        }
        for p in probes {
            out.write_all(b"\n")?;
            out.write_all(toml(toml::to_string(&Probe { probe: [*p] }))?.as_bytes())?;
        }
        Ok(())
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

    /// `write` streams the same bytes as the header and `toml::to_string` of the sorted
    /// lock (what it wrote when it built the whole text).
    #[test]
    fn the_streamed_file_is_the_sorted_document() {
        let mut lock = Lock::parse(Path::new("fevlint.lock"), LOCK).expect("parse");
        lock.definitions.reverse();
        let dir = std::env::temp_dir().join(format!("fevlint-lock-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("fevlint.lock");
        lock.write(&path).expect("write");
        let written = std::fs::read_to_string(&path).expect("read");
        lock.definitions.reverse();
        let header = "# fevlint.lock: what each definition meant when it was locked. Written by `fevlint lock`.\n";
        assert_eq!(written, format!("{header}{}", toml::to_string(&lock).expect("toml")));
        let empty = Lock { definitions: Vec::new(), ..lock };
        empty.write(&path).expect("write");
        let written = std::fs::read_to_string(&path).expect("read");
        assert_eq!(written, format!("{header}{}", toml::to_string(&empty).expect("toml")));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
