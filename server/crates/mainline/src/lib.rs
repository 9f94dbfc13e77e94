//! fevlint-mainline: the kernel's own probe-definition dialect (`kprobe_events`,
//! `dynamic_events`, `*.dynevents` files): `p:`, `r:`, `f:`, `t:` and `-:` lines.
//!
//! The parser is a transcription of `kernel/trace/trace_probe.c`, `trace_kprobe.c` and
//! `trace_fprobe.c` of Debian's 6.1.y and 6.12.y sources, so a rejected line gets the
//! kernel's own error (the `trace_probe.h` ERRORS ID and text) at the kernel's caret,
//! and an accepted line a [`Probe`] with every argument's fetch chain and spans.
//!
//! Boundary: this crate knows no kernel. Facts only a kernel can settle (does the
//! symbol exist, is the offset a function entry, what are the BTF parameters) are asked
//! through [`Env`]; [`NoKernel`] answers "unknown" and the parser records an
//! [`Assumption`] for a checker to verify.
//!
//! ```
//! use fevlint_mainline::{check_line, Dialect};
//!
//! let d = Dialect::debian_6_1_192();
//! let err = check_line(&d, "p:x vfs_read +0(+0(%di):u8").unwrap_err();
//! assert_eq!(
//!     err.logged().expect("an error_log entry").render(),
//!     "trace_kprobe: error: Dereference brace is not closed\n  \
//!      Command: p:x vfs_read +0(+0(%di):u8\n                                 ^\n"
//! );
//! ```

mod ast;
mod dialect;
mod env;
mod errors;
mod parse;
mod registry;
mod session;

pub use ast::*;
pub use dialect::{readme_from_image, readmes, Arch, Dialect, DialectError, Generation, KernelVersion};
pub use env::{Btf, BtfKind, BtfMember, BtfProto, Env, FuncEntry, NoKernel, RegisterError};
pub use errors::ErrorId;
pub use session::Session;

/// The errno a rejected write returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Errno {
    Einval,
    Enoent,
    E2big,
    Eaddrnotavail,
    Eopnotsupp,
    Eexist,
    Eilseq,
    Erange,
}

impl Errno {
    pub fn name(self) -> &'static str {
        match self {
            Errno::Einval => "EINVAL",
            Errno::Enoent => "ENOENT",
            Errno::E2big => "E2BIG",
            Errno::Eaddrnotavail => "EADDRNOTAVAIL",
            Errno::Eopnotsupp => "EOPNOTSUPP",
            Errno::Eexist => "EEXIST",
            Errno::Eilseq => "EILSEQ",
            Errno::Erange => "ERANGE",
        }
    }
}

/// One `error_log` entry, as the kernel writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelError {
    pub id: ErrorId,
    /// The kernel's text for `id` on this dialect.
    pub message: &'static str,
    /// `trace_kprobe` or `trace_fprobe`.
    pub subsystem: &'static str,
    /// The `Command:` echo: the words joined by single spaces.
    pub command: String,
    /// The caret's offset in `command`.
    pub caret: usize,
    /// The word the error is in (`trace_probe_log.index`); the word count when after
    /// the last word.
    pub word: usize,
    /// The caret as a byte offset in the user's line.
    pub byte: usize,
    pub errno: Errno,
    /// Entries the same write logged before this one (the kernel logs twice on a few
    /// paths, e.g. `%reg` on an fprobe: BAD_VAR, then BAD_FETCH_ARG).
    pub earlier: Vec<ErrorId>,
    /// The first entry of the same write when it logged more than one: `error_log` shows
    /// it first, and it is the kernel's word for the error (`first()`).
    pub first: Option<Box<KernelError>>,
}

impl KernelError {
    /// The entry `error_log` shows first for this write (this one when it logged once).
    pub fn first(&self) -> &KernelError {
        self.first.as_deref().unwrap_or(self)
    }

    /// The three lines `error_log` shows (without the timestamp).
    pub fn render(&self) -> String {
        format!(
            "{}: error: {}\n  Command: {}\n{}^\n",
            self.subsystem,
            self.message,
            self.command,
            " ".repeat(11 + self.caret)
        )
    }
}

/// Why a line is not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Rejected with an `error_log` entry.
    Logged(Box<KernelError>),
    /// Rejected with only an errno (no `error_log` entry).
    Silent { errno: Errno, why: &'static str },
    /// A kind of line this crate does not model (uprobes, eprobes, synthetic events).
    Unmodelled { what: &'static str },
}

impl Rejection {
    /// The logged error, if there is one.
    pub fn logged(&self) -> Option<&KernelError> {
        match self {
            Rejection::Logged(e) => Some(e),
            _ => None,
        }
    }
}

/// Parse one line as a write of it to `dynamic_events` would, without a kernel.
pub fn check_line(dialect: &Dialect, text: &str) -> Result<Line, Rejection> {
    check_line_with(dialect, &NoKernel, text)
}

/// Parse one line, asking `env` what only a kernel knows.
pub fn check_line_with(dialect: &Dialect, env: &dyn Env, text: &str) -> Result<Line, Rejection> {
    parse::run_command(dialect, env, None, text)
}

/// One line of a file, with where it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileLine {
    /// 1-based line number.
    pub number: usize,
    /// Byte offset of the line in the file.
    pub start: usize,
    pub result: Result<Line, Rejection>,
}

/// Parse a `*.dynevents` file as written line by line to `dynamic_events` (later lines
/// see the events of earlier ones, see [`Session`]); `#` comments. Spans in each result
/// are relative to its line.
pub fn check_file(dialect: &Dialect, env: &dyn Env, text: &str) -> Vec<FileLine> {
    let mut session = Session::new(dialect, env);
    let mut out = Vec::new();
    let mut start = 0;
    for (i, line) in text.split('\n').enumerate() {
        let l = line.strip_suffix('\r').unwrap_or(line);
        out.push(FileLine { number: i + 1, start, result: session.write(l) });
        start += line.len() + 1;
    }
    out
}

/// Whether a line looks like the mainline dialect (for routing mixed input).
pub fn is_mainline_line(text: &str) -> bool {
    let t = text.trim_start();
    let b = t.as_bytes();
    matches!(b.first(), Some(b'p' | b'r' | b'f' | b't' | b'-'))
        && b.iter().take_while(|c| !c.is_ascii_whitespace()).all(|&c| c != b'(')
        && (b.get(1).is_some_and(|c| *c == b':' || c.is_ascii_digit() || *c == b' ') || b.len() == 1)
}
