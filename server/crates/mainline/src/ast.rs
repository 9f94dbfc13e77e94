//! What a parsed line is: the public, kernel-free model of one definition.

use std::ops::Range;

/// Byte range in the user's line.
pub type Span = Range<usize>;

/// Which kind of probe a definition makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// `p:` at a symbol+offset or address.
    Kprobe,
    /// `r:` or `p: SYM%return`.
    Kretprobe,
    /// `f:` on function entry.
    FprobeEntry,
    /// `f: SYM%return`, or an `f:` with `$retval` in an argument.
    FprobeExit,
    /// `t:` on a tracepoint.
    Tprobe,
}

impl ProbeKind {
    pub fn is_return(self) -> bool {
        matches!(self, ProbeKind::Kretprobe | ProbeKind::FprobeExit)
    }
}

/// Where a probe sits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// `[MOD:]SYM[+OFFS]` (kprobe), `[MOD:]SYM` (fprobe, may be a glob), `TP` (tprobe).
    Symbol { module: Option<String>, name: String, offset: u64, span: Span },
    /// A raw kernel address (kprobe only).
    Address { addr: u64, span: Span },
}

/// One step of a BTF member path (`->f_op`, `.dentry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// `->` (true) or `.` (false).
    pub arrow: bool,
    pub span: Span,
}

/// How a value is fetched: the kernel's fetch chain, as a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetch {
    /// `%ax`.
    Register { name: String },
    /// `$stackN`.
    Stack(u64),
    /// `$stack`.
    StackPointer,
    /// `$retval` (without BTF).
    Retval,
    /// `$comm` / `$COMM`.
    Comm,
    /// `$argN` (1-based) on function entry, or captured at entry by a return probe
    /// (`at_entry`).
    Arg { n: u32, at_entry: bool },
    /// `\IMM`.
    Immediate(u64),
    /// `\"text"`.
    ImmediateString(String),
    /// `@ADDR`.
    Address(u64),
    /// `@SYM[+|-OFFS]` (resolved through kallsyms when the probe registers).
    Symbol { name: String },
    /// `@+OFFS` (uprobe file offset; kept for completeness).
    FileOffset(i64),
    /// `+|-[u]OFFS(INNER)`.
    Deref {
        offset: i64,
        user: bool,
        inner: Box<Fetch>,
        /// The digits of OFFS (after the sign and the `u`) in the user's line; the
        /// argument's span when the kernel rewrote the text (`%pd`).
        offset_span: Span,
    },
    /// A BTF parameter name (or `$retval` with BTF) and its member path.
    Btf {
        /// The parameter name, or `$retval`.
        base: String,
        fields: Vec<Field>,
    },
    /// A tracepoint or event field (`t:` through BTF is `Btf`; this is for eprobes).
    EventField(String),
}

/// An argument's `:TYPE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgType {
    /// As written, without the array suffix (`u32`, `string`, `b4@2/8`, ...).
    pub name: String,
    /// `[N]`.
    pub array: Option<u32>,
    /// `b<width>@<offset>/<container>`.
    pub bitfield: Option<(u32, u32, u32)>,
    pub span: Span,
}

/// One `[NAME=]FETCHARG[:TYPE]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// The field name the kernel gives it (explicit, the BTF name, or `argN`).
    pub name: String,
    /// Whether `NAME=` was written.
    pub explicit_name: bool,
    /// The kernel's recorded text (`parg->comm`) after `$arg*`/`$argN`/`%pd` rewriting.
    pub text: String,
    pub fetch: Fetch,
    pub ty: Option<ArgType>,
    /// The storing type the kernel settles on (`x64` when none is written and no BTF).
    pub store_type: String,
    /// The whole word in the user's line (for arguments made by `$arg*`, that word).
    pub span: Span,
    /// The fetch expression (after `NAME=`, before `:TYPE`) in the user's line; the
    /// word's span when the text was rewritten.
    pub body_span: Span,
    /// Index of the word in the line (0 = the `p:...` head), or of the `$arg*` word.
    pub word: usize,
    /// Whether `text` is what the user wrote (false for `$arg*`, `$argN`, `%pd` rewrites).
    pub verbatim: bool,
}

/// A definition line the kernel would accept, as far as the parser can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub kind: ProbeKind,
    /// The group (`kprobes`, `fprobes`, `tracepoints` when not written).
    pub group: String,
    pub group_written: bool,
    /// The event name (generated like the kernel's when not written).
    pub event: String,
    pub event_written: bool,
    pub place: Place,
    /// `r<N>` / `f<N>`.
    pub maxactive: Option<u32>,
    pub args: Vec<Arg>,
    /// A `t:` on a tracepoint the kernel does not have (yet): with CONFIG_MODULES it is
    /// kept as a stub that fires once a module brings the tracepoint.
    pub tracepoint_stub: bool,
    /// Facts only a kernel can settle, assumed by the parser (see [`crate::Env`]).
    pub assumptions: Vec<Assumption>,
}

/// `-:[GRP/]EVENT [ARGS]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removal {
    pub group: Option<String>,
    pub event: String,
    pub span: Span,
}

/// One line of a `*.dynevents` file or a `kprobe_events` write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// Blank or comment only.
    Empty,
    Probe(Probe),
    Remove(Removal),
}

/// A question the parser had to answer without a kernel; a checker with a kernel
/// model verifies each (same order as the kernel would ask).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Assumption {
    /// The symbol exists once (kprobe: `number_of_same_symbols`/`validate_probe_symbol`).
    UniqueSymbol { name: String, span: Span },
    /// `kprobe_on_func_entry(sym, off)`: assumed at the function entry when the offset is 0.
    FunctionEntry { name: String, offset: u64, assumed_entry: bool, span: Span },
    /// The fprobe target is an ftrace-able function (`register_fprobe`).
    FtraceTarget { name: String, span: Span },
    /// The tracepoint exists (else, with modules, it is kept as a stub).
    Tracepoint { name: String, span: Span },
    /// A BTF name or `$argN` whose meaning needs the function's BTF prototype.
    BtfArg { function: String, arg: usize },
    /// `register_kprobe` must accept the point (instruction boundary, blacklist, text).
    Registers { symbol: Option<String>, offset: u64, span: Span },
    /// `@SYM` must resolve through kallsyms when the probe registers.
    DataSymbol { name: String, arg: usize },
}

impl std::fmt::Display for Fetch {
    /// The fetch in the kernel's syntax (what `emit` writes and the parser reads back).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fetch::Register { name } => write!(f, "%{name}"),
            Fetch::Stack(n) => write!(f, "$stack{n}"),
            Fetch::StackPointer => write!(f, "$stack"),
            Fetch::Retval => write!(f, "$retval"),
            Fetch::Comm => write!(f, "$comm"),
            Fetch::Arg { n, .. } => write!(f, "$arg{n}"),
            Fetch::Immediate(v) => write!(f, "\\{v}"),
            Fetch::ImmediateString(s) => write!(f, "\\\"{s}\""),
            Fetch::Address(a) => write!(f, "@0x{a:x}"),
            Fetch::Symbol { name } => write!(f, "@{name}"),
            Fetch::FileOffset(o) => write!(f, "@+{o}"),
            Fetch::Deref { offset, user, inner, .. } => {
                let sign = if *offset < 0 { "-" } else { "+" };
                let u = if *user { "u" } else { "" };
                write!(f, "{sign}{u}{}({inner})", offset.unsigned_abs())
            }
            Fetch::Btf { base, fields } => {
                write!(f, "{base}")?;
                for fl in fields {
                    write!(f, "{}{}", if fl.arrow { "->" } else { "." }, fl.name)?;
                }
                Ok(())
            }
            Fetch::EventField(n) => write!(f, "${n}"),
        }
    }
}
