//! The reference parser's state machine (`process_event()` in the 2018
//! `kernel/trace/trace_event_ftrace.c`), transcribed branch for branch.
//!
//! It decides whether the kernel accepts a line, which token it fails on and with
//! which message, and what the kernel records for each field: its slot, type,
//! folded redirects and absolute address. The checker and the executor read fields
//! from here, so they see exactly what the kernel would run.

use super::lex::{self, kstrtoul, Token};
use super::Span;

/// Parser states, named as the kernel names them in its error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Init,
    Func,
    Param,
    Bracket,
    BracketEnd,
    Indirect,
    Unsigned,
    Addr,
    Equal,
    Pipe,
    Plus,
    Type,
    Array,
    ArraySize,
    ArrayEnd,
    Symbol,
    Var,
    Comma,
    Null,
    End,
    Error,
}

impl State {
    /// The name the kernel prints (`func_state_names[]`).
    pub fn kernel_name(self) -> &'static str {
        match self {
            State::Init => "INIT",
            State::Func => "FUNC",
            State::Param => "PARAM",
            State::Bracket => "BRACKET",
            State::BracketEnd => "BRACKET_END",
            State::Indirect => "INDIRECT",
            State::Unsigned => "UNSIGNED",
            State::Addr => "ADDR",
            State::Equal => "EQUAL",
            State::Pipe => "PIPE",
            State::Plus => "PLUS",
            State::Type => "TYPE",
            State::Array => "ARRAY",
            State::ArraySize => "ARRAY_SIZE",
            State::ArrayEnd => "ARRAY_END",
            State::Symbol => "SYMBOL",
            State::Var => "VAR",
            State::Comma => "COMMA",
            State::Null => "NULL",
            State::End => "END",
            State::Error => "ERROR",
        }
    }
}

/// The field types of `FUNC_TYPES`, in the kernel's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Atom {
    Long,
    Int,
    Short,
    Char,
    SizeT,
    U64,
    S64,
    X64,
    U32,
    S32,
    X32,
    U16,
    S16,
    X16,
    U8,
    S8,
    X8,
    Symbol,
    String,
}

impl Atom {
    pub const ALL: [Atom; 19] = [
        Atom::Long,
        Atom::Int,
        Atom::Short,
        Atom::Char,
        Atom::SizeT,
        Atom::U64,
        Atom::S64,
        Atom::X64,
        Atom::U32,
        Atom::S32,
        Atom::X32,
        Atom::U16,
        Atom::S16,
        Atom::X16,
        Atom::U8,
        Atom::S8,
        Atom::X8,
        Atom::Symbol,
        Atom::String,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Atom::Long => "long",
            Atom::Int => "int",
            Atom::Short => "short",
            Atom::Char => "char",
            Atom::SizeT => "size_t",
            Atom::U64 => "u64",
            Atom::S64 => "s64",
            Atom::X64 => "x64",
            Atom::U32 => "u32",
            Atom::S32 => "s32",
            Atom::X32 => "x32",
            Atom::U16 => "u16",
            Atom::S16 => "s16",
            Atom::X16 => "x16",
            Atom::U8 => "u8",
            Atom::S8 => "s8",
            Atom::X8 => "x8",
            Atom::Symbol => "symbol",
            Atom::String => "string",
        }
    }

    pub fn from_name(name: &[u8]) -> Option<Atom> {
        Atom::ALL.into_iter().find(|a| a.name().as_bytes() == name)
    }

    /// `sizeof` of the type on a kernel whose `long` and pointers are `ptr_size` bytes.
    pub fn size(self, ptr_size: u32) -> u32 {
        match self {
            Atom::Long | Atom::SizeT | Atom::Symbol => ptr_size,
            Atom::Int | Atom::U32 | Atom::S32 | Atom::X32 | Atom::String => 4,
            Atom::Short | Atom::U16 | Atom::S16 | Atom::X16 => 2,
            Atom::Char | Atom::U8 | Atom::S8 | Atom::X8 => 1,
            Atom::U64 | Atom::S64 | Atom::X64 => 8,
        }
    }

    /// `is_signed_type()` of the C type (`char` is signed on x86).
    pub fn signed(self) -> bool {
        matches!(self, Atom::Long | Atom::Int | Atom::Short | Atom::Char | Atom::S64 | Atom::S32 | Atom::S16 | Atom::S8)
    }
}

/// What the parser needs to know about the target: argument slots and `long` width.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    /// `arch_get_func_args(NULL, …)`: 6 on x86_64, 3 on x86_32, 0 elsewhere.
    pub max_args: u32,
    /// Width of `unsigned long` (what `kstrtoul` can hold) and of pointers, in bytes.
    pub ptr_size: u32,
}

impl Target {
    pub const X86_64: Target = Target { max_args: 6, ptr_size: 8 };
    pub const X86_32: Target = Target { max_args: 3, ptr_size: 4 };
}

impl Default for Target {
    fn default() -> Self {
        Target::X86_64
    }
}

/// One `+N` or `[N]` as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirect {
    /// `+N`: `value` is N, `span` covers `+` and the number.
    Plus { value: u64, span: Span },
    /// `[N]`: `value` is N (not yet scaled), `span` covers the brackets.
    Index { value: u64, span: Span },
}

impl Redirect {
    fn shift(&mut self, delta: isize) {
        match self {
            Redirect::Plus { span, .. } | Redirect::Index { span, .. } => span.shift(delta),
        }
    }

    pub fn span(self) -> Span {
        match self {
            Redirect::Plus { span, .. } | Redirect::Index { span, .. } => span,
        }
    }
}

/// A run of `+a+b` closed by an optional `[n]`, as `add_redirect()` folds them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RedirectPair {
    /// Sum of the `+` offsets, in bytes.
    pub offset: u64,
    /// The `[n]` closing the pair, not yet scaled by the field size.
    pub index: Option<u64>,
    /// From the first `+` (or the `[`) to the closing `]` (or the last number).
    pub span: Span,
}

/// Folds redirects the way `add_redirect()` does: a new pair starts only after a pair
/// that has an index.
pub fn fold_redirects(redirects: &[Redirect]) -> Vec<RedirectPair> {
    let mut pairs: Vec<RedirectPair> = Vec::new();
    for r in redirects {
        match pairs.last_mut() {
            Some(last) if last.index.is_none() => {
                last.span = last.span.cover(r.span());
                match *r {
                    Redirect::Plus { value, .. } => last.offset = last.offset.wrapping_add(value),
                    Redirect::Index { value, .. } => last.index = Some(value),
                }
            }
            _ => pairs.push(match *r {
                Redirect::Plus { value, span } => RedirectPair { offset: value, index: None, span },
                Redirect::Index { value, span } => RedirectPair { offset: 0, index: Some(value), span },
            }),
        }
    }
    pairs
}

/// Where a field's value comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A function parameter (slot `slot`), then the redirects.
    Param { slot: u32, redirects: Vec<Redirect> },
    /// An absolute address; `ignored` are `+N` written before `=`, which the kernel
    /// stores and never uses.
    Absolute { value: AbsValue, value_span: Span, ignored: Vec<Redirect> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AbsValue {
    Address(u64),
    /// `$name`, resolved through kallsyms when the line is written.
    Symbol(String),
}

/// A field as the kernel records it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// From `unsigned`/the type to the end of the target.
    pub span: Span,
    pub unsigned: bool,
    pub atom: Atom,
    pub type_span: Span,
    /// `T[N]`: N as written and where.
    pub array: Option<(u64, Span)>,
    /// The field name: the identifier, or the literal/symbol for bare addresses.
    pub name: String,
    pub name_span: Span,
    pub source: Source,
}

impl Field {
    fn shift(&mut self, delta: isize) {
        let Field { span, unsigned: _, atom: _, type_span, array, name: _, name_span, source } = self;
        for s in [Some(span), Some(type_span), array.as_mut().map(|(_, s)| s), Some(name_span)].into_iter().flatten() {
            s.shift(delta);
        }
        match source {
            Source::Param { slot: _, redirects } => redirects.iter_mut().for_each(|r| r.shift(delta)),
            Source::Absolute { value: _, value_span, ignored } => {
                value_span.shift(delta);
                ignored.iter_mut().for_each(|r| r.shift(delta));
            }
        }
    }

    /// `sizeof(T)` of one element.
    pub fn elem_size(&self, target: Target) -> u32 {
        self.atom.size(target.ptr_size)
    }

    /// The kernel's type string (`unsigned int`, `x8[6]`, `string`).
    pub fn type_string(&self) -> String {
        let mut s = String::new();
        if self.unsigned {
            s.push_str("unsigned ");
        }
        s.push_str(self.atom.name());
        if let Some((n, _)) = self.array {
            // kasprintf("%s[%d]", type, (unsigned)val)
            s.push_str(&format!("[{}]", n as u32 as i32));
        }
        s
    }

    /// The slot this field reads, if it reads a parameter.
    pub fn slot(&self) -> Option<u32> {
        match self.source {
            Source::Param { slot, .. } => Some(slot),
            Source::Absolute { .. } => None,
        }
    }
}

/// Why the kernel refuses a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RejectKind {
    /// `Unexpected token '<tok>' for <STATE> state`.
    UnexpectedToken,
    /// The line ended before `)`: `Unexpected ending`.
    UnexpectedEnding,
    /// `Error: Too many arguments (max of N)`.
    TooManyArgs,
    /// The first token is not a name: the kernel rejects without any message.
    Silent,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub kind: RejectKind,
    /// The state before the failing token (what the kernel names).
    pub state: State,
    /// The failing token; for `UnexpectedEnding`, an empty span after the last token.
    pub at: Span,
    /// True when the cause is the architecture's slot limit (`add_arg()` refused).
    pub slot_limit: bool,
    /// The three lines `cat function_events` would show, when the kernel logs one.
    pub error_log: Option<String>,
}

impl Rejection {
    /// The kernel's one-line message (third line of the error log).
    pub fn kernel_message(&self, text: &str, target: Target) -> Option<String> {
        Some(match self.kind {
            RejectKind::UnexpectedToken => {
                format!("Unexpected token '{}' for {} state", lossy(text, self.at), self.state.kernel_name())
            }
            RejectKind::UnexpectedEnding => "Unexpected ending".to_owned(),
            RejectKind::TooManyArgs => format!("Error: Too many arguments (max of {})", target.max_args),
            RejectKind::Silent => return None,
        })
    }
}

/// What the kernel makes of one line.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Parsed {
    pub function: Option<(String, Span)>,
    /// Fields in order, including a half-parsed last one when the line was rejected.
    pub fields: Vec<Field>,
    /// Slots the event fetches (`arg_cnt`).
    pub slots: u32,
    /// `None` when the kernel accepts the line.
    pub rejection: Option<Rejection>,
}

impl Parsed {
    pub(crate) fn shift(&mut self, delta: isize) {
        let Parsed { function, fields, slots: _, rejection } = self;
        if let Some((_, span)) = function {
            span.shift(delta);
        }
        fields.iter_mut().for_each(|f| f.shift(delta));
        if let Some(Rejection { kind: _, state: _, at, slot_limit: _, error_log: _ }) = rejection {
            at.shift(delta);
        }
    }
}

/// The kernel's error text buffer (`ERR_SIZE`): 256 bytes less a list head and a pointer.
fn err_size(target: Target) -> usize {
    256 - 3 * target.ptr_size as usize
}

/// A field under construction.
struct Building {
    start: usize,
    unsigned: bool,
    atom: Atom,
    type_span: Span,
    array: Option<(u64, Span)>,
    name: Option<(String, Span)>,
    /// `arg->arg`: the slot, or -1 for absolute addresses.
    arg: i64,
    redirects: Vec<Redirect>,
    absolute: Option<(AbsValue, Span)>,
    /// Start of the current `+`/`[` redirect or array size.
    open: Option<usize>,
    /// The number read inside an open `[`, waiting for its `]`.
    pending: u64,
    end: usize,
}

/// Runs the state machine over the tokens of one line (`toks` as cut by [`lex::tokens`]).
pub fn parse_line(text: &str, toks: &[Token], target: Target) -> Parsed {
    let mut m = Machine {
        text,
        target,
        out: Parsed::default(),
        cur: None,
        update_arg: false,
        unsign: false,
        unsigned_start: 0,
        arg_cnt: 0,
    };
    let mut state = State::Init;
    let mut last_state = state;
    let mut failed_at = None;
    for (i, tok) in toks.iter().enumerate() {
        last_state = state;
        state = m.step(state, *tok);
        if state == State::Error {
            failed_at = Some(i);
            break;
        }
    }
    m.finish_field();
    // Kept for the whole file: without this, a one-field line holds room for four
    // (about 700 bytes; 700 MB for a million lines).
    m.out.fields.shrink_to_fit();
    m.out.slots = m.arg_cnt;
    if state != State::End {
        let end = toks.last().map_or(0, |t| t.span.end);
        let (kind, at) = match failed_at {
            Some(i) if m.out.function.is_none() => (RejectKind::Silent, toks[i].span),
            Some(i) => {
                let too_many = matches!(last_state, State::Comma | State::Param) && m.arg_cnt >= target.max_args;
                (if too_many { RejectKind::TooManyArgs } else { RejectKind::UnexpectedToken }, toks[i].span)
            }
            None if m.out.function.is_none() => (RejectKind::Silent, Span::new(end, end)),
            None => (RejectKind::UnexpectedEnding, Span::new(end, end)),
        };
        let mut rejection = Rejection {
            kind,
            state: last_state,
            at,
            slot_limit: m.slot_limit_hit(last_state, failed_at.map(|i| toks[i])),
            error_log: None,
        };
        if m.out.function.is_some() {
            rejection.error_log = Some(m.error_log(&rejection, last_state, failed_at, toks));
        }
        m.out.rejection = Some(rejection);
    }
    m.out
}

struct Machine<'t> {
    text: &'t str,
    target: Target,
    out: Parsed,
    cur: Option<Building>,
    /// The kernel's `static bool update_arg`: the slot being parsed read a parameter.
    update_arg: bool,
    unsign: bool,
    unsigned_start: usize,
    arg_cnt: u32,
}

impl Machine<'_> {
    fn tok(&self, t: Token) -> &[u8] {
        &self.text.as_bytes()[t.span.start..t.span.end]
    }

    fn valid_name(tok: &[u8]) -> bool {
        tok.first().is_some_and(|&b| lex::is_alpha(b) || b == b'_')
    }

    fn number(&self, tok: &[u8]) -> Option<u64> {
        kstrtoul(tok, self.target.ptr_size * 8)
    }

    /// `add_arg()`: refuses when the slot limit is reached.
    fn add_arg(&mut self, atom: Atom, span: Span) -> bool {
        if self.arg_cnt >= self.target.max_args {
            return false;
        }
        self.finish_field();
        self.cur = Some(Building {
            start: if self.unsign { self.unsigned_start } else { span.start },
            unsigned: self.unsign,
            atom,
            type_span: span,
            array: None,
            name: None,
            arg: 0,
            redirects: Vec::new(),
            absolute: None,
            open: None,
            pending: 0,
            end: span.end,
        });
        true
    }

    fn finish_field(&mut self) {
        let Some(b) = self.cur.take() else { return };
        let (name, name_span) = b.name.unwrap_or_else(|| (String::new(), Span::new(b.end, b.end)));
        let source = match b.absolute {
            Some((value, value_span)) if b.arg < 0 => Source::Absolute { value, value_span, ignored: b.redirects },
            _ => Source::Param { slot: u32::try_from(b.arg.max(0)).unwrap_or(0), redirects: b.redirects },
        };
        self.out.fields.push(Field {
            span: Span::new(b.start, b.end),
            unsigned: b.unsigned,
            atom: b.atom,
            type_span: b.type_span,
            array: b.array,
            name,
            name_span,
            source,
        });
    }

    fn slot_limit_hit(&self, last_state: State, tok: Option<Token>) -> bool {
        let Some(tok) = tok else { return false };
        matches!(last_state, State::Comma | State::Param | State::Pipe | State::Unsigned)
            && Atom::from_name(self.tok(tok)).is_some()
            && self.arg_cnt >= self.target.max_args
    }

    fn step(&mut self, state: State, t: Token) -> State {
        let text = self.text;
        let tok = &text.as_bytes()[t.span.start..t.span.end];
        let first = tok.first().copied().unwrap_or(0);
        let mut state = state;
        // The C code falls through from one case to the next; loop to emulate it.
        loop {
            match state {
                State::Init => {
                    self.unsign = false;
                    self.update_arg = false;
                    if !Self::valid_name(tok) {
                        return State::Error;
                    }
                    self.out.function = Some((lossy(self.text, t.span), t.span));
                    return State::Func;
                }
                State::Func => return if first == b'(' { State::Param } else { State::Error },
                State::Param => {
                    if first == b')' {
                        return State::End;
                    }
                    state = State::Comma;
                }
                State::Comma => {
                    if self.update_arg {
                        self.arg_cnt += 1;
                    }
                    self.update_arg = false;
                    state = State::Pipe;
                }
                State::Pipe => {
                    if tok == b"NULL" {
                        return State::Null;
                    }
                    if tok == b"unsigned" {
                        self.unsign = true;
                        self.unsigned_start = t.span.start;
                        return State::Unsigned;
                    }
                    state = State::Unsigned;
                }
                State::Unsigned => {
                    let Some(atom) = Atom::from_name(tok) else { return State::Error };
                    let ok = self.add_arg(atom, t.span);
                    self.unsign = false;
                    return if ok { State::Type } else { State::Error };
                }
                State::Type => {
                    let is_string = self.cur.as_ref().is_some_and(|b| b.atom == Atom::String);
                    if first == b'[' {
                        if is_string {
                            return State::Error;
                        }
                        self.extend(t.span);
                        if let Some(b) = self.cur.as_mut() {
                            b.open = Some(t.span.start);
                        }
                        return State::Array;
                    }
                    state = State::ArrayEnd;
                }
                State::ArrayEnd => {
                    if first == b'$' {
                        self.extend(t.span);
                        return State::Symbol;
                    }
                    let name = (lossy(self.text, t.span), t.span);
                    if tok.starts_with(b"0x") {
                        if let Some(b) = self.cur.as_mut() {
                            b.name = Some(name);
                        }
                        return self.equal(t);
                    }
                    if !Self::valid_name(tok) {
                        return State::Error;
                    }
                    self.extend(t.span);
                    if let Some(b) = self.cur.as_mut() {
                        b.name = Some(name);
                    }
                    self.update_arg = true;
                    return State::Var;
                }
                State::Var => {
                    if first == b'=' {
                        self.extend(t.span);
                        return State::Equal;
                    }
                    if let Some(b) = self.cur.as_mut() {
                        // update_arg_arg(): its limit check cannot fail here (add_arg checked).
                        b.arg = i64::from(self.arg_cnt);
                    }
                    self.update_arg = true;
                    return self.after_target(first, t);
                }
                State::BracketEnd => return self.after_target(first, t),
                State::Array | State::Bracket => {
                    let Some(val) = self.number(tok) else { return State::Error };
                    if state == State::Array && val == 0 {
                        return State::Error;
                    }
                    self.extend(t.span);
                    if let Some(b) = self.cur.as_mut() {
                        b.pending = val;
                    }
                    return if state == State::Bracket { State::Indirect } else { State::ArraySize };
                }
                State::ArraySize | State::Indirect => {
                    if first != b']' {
                        return State::Error;
                    }
                    self.extend(t.span);
                    if let Some(b) = self.cur.as_mut() {
                        let open = b.open.take().unwrap_or(t.span.start);
                        let span = Span::new(open, t.span.end);
                        if state == State::ArraySize {
                            b.array = Some((b.pending, span));
                        } else {
                            b.redirects.push(Redirect::Index { value: b.pending, span });
                        }
                    }
                    return if state == State::ArraySize { State::ArrayEnd } else { State::BracketEnd };
                }
                State::Plus => {
                    let Some(value) = self.number(tok) else { return State::Error };
                    self.extend(t.span);
                    if let Some(b) = self.cur.as_mut() {
                        let open = b.open.take().unwrap_or(t.span.start);
                        b.redirects.push(Redirect::Plus { value, span: Span::new(open, t.span.end) });
                    }
                    return State::Var;
                }
                State::Symbol => {
                    if !Self::valid_name(tok) {
                        return State::Error;
                    }
                    return self.equal(t);
                }
                State::Addr => {
                    return match first {
                        b')' => self.end(),
                        b',' => State::Comma,
                        b'|' => State::Pipe,
                        _ => State::Error,
                    };
                }
                State::Equal => {
                    if first == b'$' {
                        self.extend(t.span);
                        return State::Symbol;
                    }
                    if !tok.starts_with(b"0x") {
                        return State::Error;
                    }
                    return self.equal(t);
                }
                State::Null => {
                    return match first {
                        b')' => self.end(),
                        b',' => {
                            self.update_arg = true;
                            State::Comma
                        }
                        _ => State::Error,
                    };
                }
                State::End | State::Error => return State::Error,
            }
        }
    }

    /// `)`, `,`, `|`, `+`, `[` after a parameter name or a `]`.
    fn after_target(&mut self, first: u8, t: Token) -> State {
        match first {
            b')' => self.end(),
            b',' => State::Comma,
            b'|' => State::Pipe,
            b'+' | b'[' => {
                self.extend(t.span);
                if let Some(b) = self.cur.as_mut() {
                    b.open = Some(t.span.start);
                }
                if first == b'+' {
                    State::Plus
                } else {
                    State::Bracket
                }
            }
            _ => State::Error,
        }
    }

    /// The `equal:` label: an absolute address or a `$symbol`.
    fn equal(&mut self, t: Token) -> State {
        let text = self.text;
        let tok = &text.as_bytes()[t.span.start..t.span.end];
        let value = if Self::valid_name(tok) {
            // get_symbol(): kallsyms is the kernel's business; syntax assumes it resolves.
            let name = lossy(self.text, t.span);
            if let Some(b) = self.cur.as_mut() {
                if b.name.is_none() {
                    b.name = Some((name.clone(), t.span));
                }
            }
            AbsValue::Symbol(name)
        } else {
            match self.number(tok) {
                Some(v) => AbsValue::Address(v),
                None => return State::Error,
            }
        };
        self.extend(t.span);
        self.update_arg = false;
        if let Some(b) = self.cur.as_mut() {
            // A `$` right before a symbol belongs to the value.
            let start =
                if matches!(value, AbsValue::Symbol(_)) { dollar_before(self.text, t.span) } else { t.span.start };
            b.absolute = Some((value, Span::new(start, t.span.end)));
            b.arg = -1;
        }
        State::Addr
    }

    fn end(&mut self) -> State {
        if self.update_arg {
            self.arg_cnt += 1;
        }
        State::End
    }

    fn extend(&mut self, span: Span) {
        if let Some(b) = self.cur.as_mut() {
            b.end = span.end;
        }
    }

    /// `add_failure()`: the canonical echo of what was parsed, the rest of the line
    /// re-tokenised, a caret line and the message, cut to the kernel's buffer size.
    fn error_log(&self, r: &Rejection, state: State, failed_at: Option<usize>, toks: &[Token]) -> String {
        let mut s = echo(&self.out, self.target, false);
        match state {
            State::Pipe => s.push_str(" | "),
            State::Comma => s.push_str(", "),
            State::Plus => s.push('+'),
            State::Bracket | State::Array => s.push('['),
            State::Unsigned => s.push_str("unsigned "),
            State::Indirect | State::ArraySize => {
                s.pop();
            }
            _ => {}
        }
        s.push(' ');
        let width = s.len() + 1;
        let Some(i) = failed_at else {
            let mut out = s;
            out.push_str(&format!("\n{:>width$}\nUnexpected ending", "^"));
            return cut(out, err_size(self.target));
        };
        let fail = toks[i];
        s.push_str(&lossy(self.text, fail.span));
        s.push(' ');
        // Finish the failing word token by token, then the remaining words as they are.
        let mut j = i + 1;
        while j < toks.len() && toks[j].word == fail.word {
            let tok = lossy(self.text, toks[j].span);
            if tok.starts_with('|') {
                s.push(' ');
            }
            s.push_str(&tok);
            if tok.starts_with(',') || tok.starts_with('|') {
                s.push(' ');
            }
            j += 1;
        }
        let mut word_start = j;
        while word_start < toks.len() {
            let word = toks[word_start].word;
            let mut k = word_start;
            while k < toks.len() && toks[k].word == word {
                k += 1;
            }
            s.push_str(&lossy(self.text, Span::new(toks[word_start].span.start, toks[k - 1].span.end)));
            s.push(' ');
            word_start = k;
        }
        s.push_str(&format!("\n{:>width$}\n", "^"));
        s.push_str(&r.kernel_message(self.text, self.target).unwrap_or_default());
        cut(s, err_size(self.target))
    }
}

/// Token text as the kernel prints it; a token may end inside a UTF-8 sequence because
/// the kernel cuts bytes by its Latin-1 classes.
pub fn lossy(text: &str, span: Span) -> String {
    String::from_utf8_lossy(text.as_bytes().get(span.start..span.end).unwrap_or_default()).into_owned()
}

fn cut(mut s: String, err_size: usize) -> String {
    if s.len() > err_size - 1 {
        let mut n = err_size - 1;
        while !s.is_char_boundary(n) {
            n -= 1;
        }
        s.truncate(n);
    }
    s
}

fn dollar_before(text: &str, span: Span) -> usize {
    let before = text[..span.start].trim_end_matches(|c: char| c.is_ascii() && lex::is_space(c as u8));
    if before.ends_with('$') {
        before.len() - 1
    } else {
        span.start
    }
}

/// `show_func_event()`: the canonical form the kernel echoes for a definition, without
/// the closing `)` (which `func_event_seq_show()` adds for accepted events).
pub fn echo(parsed: &Parsed, target: Target, close: bool) -> String {
    let mut s = String::new();
    let Some((func, _)) = &parsed.function else { return s };
    s.push_str(func);
    s.push('(');
    let mut comma = false;
    let mut last_arg: i64 = 0;
    for f in &parsed.fields {
        let arg: i64 = match f.source {
            Source::Param { slot, .. } => i64::from(slot),
            Source::Absolute { .. } => -1,
        };
        if comma {
            if last_arg == arg {
                s.push_str(" | ");
            } else {
                while last_arg < arg - 1 {
                    last_arg += 1;
                    s.push_str(", NULL");
                }
                s.push_str(", ");
            }
        } else {
            while last_arg < arg {
                last_arg += 1;
                s.push_str("NULL, ");
            }
        }
        last_arg = arg;
        comma = true;
        let name = if f.name.is_empty() { "(null)" } else { f.name.as_str() };
        s.push_str(&format!("{} {}", f.type_string(), name));
        let size = i64::from(f.elem_size(target)).max(1);
        let redirects = match &f.source {
            Source::Absolute { value, ignored, .. } => {
                match value {
                    AbsValue::Address(a) => s.push_str(&format!("=0x{a:x}")),
                    AbsValue::Symbol(sym) => s.push_str(&format!("=${sym}")),
                }
                ignored
            }
            Source::Param { redirects, .. } => redirects,
        };
        for pair in fold_redirects(redirects) {
            // The kernel keeps offsets in an `int`, prints "+%d" and "[%d]".
            let index = pair.offset as i32;
            if index != 0 {
                s.push_str(&format!("+{index}"));
            }
            if let Some(n) = pair.index {
                let scaled = (n.wrapping_mul(size as u64) as i32) ^ 0x1000_0000;
                if scaled != 0 {
                    s.push_str(&format!("[{}]", i64::from(scaled ^ 0x1000_0000) / size));
                }
            }
        }
    }
    if close {
        s.push(')');
    }
    s
}
