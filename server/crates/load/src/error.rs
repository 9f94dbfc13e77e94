//! The one error type of the kernel-input readers: every variant names the file and,
//! where it is known, the byte offset in that file.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::codec::Codec;

/// A byte offset inside a file as the user has it on disk (for a payload inside a
/// bzImage, the offset in the bzImage file, not in the payload).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileOffset(pub u64);

impl fmt::Display for FileOffset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:#x})", self.0, self.0)
    }
}

/// Why a kernel input could not be read. Every variant carries the path it is about.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The message includes the OS error, so it is not also a `source` (which would
    /// print it twice in an error chain).
    #[error("{path}: {error}")]
    Io { path: PathBuf, error: io::Error },
    #[error("{path}: corrupt {codec} stream at or before byte {offset}: {message}")]
    Corrupt { path: PathBuf, codec: Codec, offset: FileOffset, message: String },
    /// `rule` says how `limit` was reached: the size limit, or the ratio to the input.
    #[error("{path}: {codec} stream starting at byte {offset} decompresses to more than {rule}: a decompression bomb")]
    TooLarge { path: PathBuf, codec: Codec, offset: FileOffset, limit: u64, rule: String },
    #[error("{path}: {codec} stream at byte {offset}: {message}")]
    SizeMismatch { path: PathBuf, codec: Codec, offset: FileOffset, message: String },
    #[error("{path}: bzImage: {message} (byte {offset})")]
    BzImage { path: PathBuf, offset: FileOffset, message: String },
    #[error("{path}: ELF: {message}{}", fmt_offset(*.offset))]
    Elf { path: PathBuf, offset: Option<FileOffset>, message: String },
    #[error("{path}: tar: {message}")]
    Tar { path: PathBuf, message: String },
    #[error("{path}:{line}: {message} (byte {offset})")]
    Text { path: PathBuf, line: usize, offset: FileOffset, message: String },
    #[error("{path}: not a kernel input fevlint can read: {message}")]
    Unrecognized { path: PathBuf, message: String },
}

fn fmt_offset(offset: Option<FileOffset>) -> String {
    match offset {
        Some(o) => format!(" (byte {o})"),
        None => String::new(),
    }
}

impl LoadError {
    /// The file the error is about.
    pub fn path(&self) -> &std::path::Path {
        match self {
            LoadError::Io { path, .. }
            | LoadError::Corrupt { path, .. }
            | LoadError::TooLarge { path, .. }
            | LoadError::SizeMismatch { path, .. }
            | LoadError::BzImage { path, .. }
            | LoadError::Elf { path, .. }
            | LoadError::Tar { path, .. }
            | LoadError::Text { path, .. }
            | LoadError::Unrecognized { path, .. } => path,
        }
    }

    /// The byte offset in [`Self::path`] the error points at, when known.
    pub fn offset(&self) -> Option<FileOffset> {
        match self {
            LoadError::Corrupt { offset, .. }
            | LoadError::TooLarge { offset, .. }
            | LoadError::SizeMismatch { offset, .. }
            | LoadError::BzImage { offset, .. }
            | LoadError::Text { offset, .. } => Some(*offset),
            LoadError::Elf { offset, .. } => *offset,
            LoadError::Io { .. } | LoadError::Tar { .. } | LoadError::Unrecognized { .. } => None,
        }
    }
}
