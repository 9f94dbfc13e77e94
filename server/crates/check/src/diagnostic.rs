//! A finding about a script: code, severity, byte span, message and notes.

use crate::syntax::Span;

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

/// One diagnostic. Byte spans only: renderers and the language server convert.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub span: Span,
    /// Lowercase, states the fact, quotes code in backticks.
    pub message: String,
    /// Evidence and help (`help: …`), one string each.
    pub notes: Vec<String>,
    /// The kernel this diagnostic is about, when it comes from a kernel check.
    pub kernel: Option<String>,
}

impl Diagnostic {
    pub fn new(rule: &impl Origin, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code: rule.code(),
            name: rule.name(),
            severity: rule.severity(),
            span,
            message: message.into(),
            notes: Vec::new(),
            kernel: None,
        }
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
}
