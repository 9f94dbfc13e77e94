//! A finding about a script: code, severity, byte span, message and notes.

use fevlint_syntax::Span;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// What a diagnostic is an instance of: a rule's code, name and severity. Implemented by
/// `rules::Rule`; declared here so that diagnostics sit below the rules, not beside them.
pub trait Origin {
    fn code(&self) -> &'static str;
    fn name(&self) -> &'static str;
    fn severity(&self) -> Severity;
}

/// One diagnostic. Byte spans only: renderers and the language server convert. Its texts
/// are shared: the copies of a finding (a repeated definition's) cost no string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub span: Span,
    /// Lowercase, states the fact, quotes code in backticks.
    pub message: Arc<str>,
    /// Evidence and help (`help: …`), one string each.
    pub notes: Vec<Arc<str>>,
    /// The kernel this diagnostic is about, when it comes from a kernel check.
    pub kernel: Option<Arc<str>>,
}

impl Diagnostic {
    pub fn new(rule: &impl Origin, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code: rule.code(),
            name: rule.name(),
            severity: rule.severity(),
            span,
            message: Arc::from(message.into()),
            notes: Vec::new(),
            kernel: None,
        }
    }

    /// Whether this is a finding of `rule` (`d.is(&rules::T407)`).
    pub fn is(&self, rule: &impl Origin) -> bool {
        self.code == rule.code()
    }

    /// (A shared `Arc<str>` is kept as is: a rule that repeats a note thousands of times
    /// stores it once.)
    pub fn note(mut self, note: impl Into<Arc<str>>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}
