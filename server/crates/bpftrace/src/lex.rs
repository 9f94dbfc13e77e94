//! bpftrace 0.17's lexer (`src/lexer.l`), transcribed: flex's longest match with rule
//! order breaking ties, the `STR`, `STRUCT`, `BRACE` and `COMMENT` start states, the
//! integer conversions of `ast/int_parser.cpp` and the identifier-macro expansion.
//!
//! Invariant: every token's span lies inside the script (a token a macro expanded to has
//! the span of the identifier that named the macro), and lexing ends on any input.

use crate::{Error, Span, Stage};
use std::collections::HashMap;

/// Token kinds, named as `parser.yy` names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    End,
    Colon,
    Semi,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LParen,
    RParen,
    Ques,
    EndPred,
    Comma,
    ParamCount,
    Assign,
    Eq,
    Ne,
    Le,
    Ge,
    Left,
    Right,
    Lt,
    Gt,
    LAnd,
    LOr,
    Plus,
    Increment,
    LeftAssign,
    RightAssign,
    PlusAssign,
    MinusAssign,
    MulAssign,
    DivAssign,
    ModAssign,
    BAndAssign,
    BOrAssign,
    BXorAssign,
    Minus,
    Decrement,
    Mul,
    Div,
    Mod,
    BAnd,
    BOr,
    BXor,
    LNot,
    BNot,
    Dot,
    Ptr,
    If,
    Else,
    Unroll,
    While,
    For,
    Return,
    Continue,
    Break,
    Builtin,
    Call,
    CallBuiltin,
    Ident,
    Path,
    CPreproc,
    StructDefn,
    String,
    Map,
    Var,
    Param,
    Int,
    StackMode,
}

impl Kind {
    /// How bison's verbose error messages name the token (`yytnamerr`: the alias with
    /// its quotes stripped unless it holds a `'`, a `,` or a backslash).
    pub fn display(self) -> &'static str {
        use Kind::*;
        match self {
            End => "end of file",
            Colon => ":",
            Semi => ";",
            LBrace => "{",
            RBrace => "}",
            LBracket => "[",
            RBracket => "]",
            LParen => "(",
            RParen => ")",
            Ques => "?",
            EndPred => "end predicate",
            Comma => "\",\"",
            ParamCount => "$#",
            Assign => "=",
            Eq => "==",
            Ne => "!=",
            Le => "<=",
            Ge => ">=",
            Left => "<<",
            Right => ">>",
            Lt => "<",
            Gt => ">",
            LAnd => "&&",
            LOr => "||",
            Plus => "+",
            Increment => "++",
            LeftAssign => "<<=",
            RightAssign => ">>=",
            PlusAssign => "+=",
            MinusAssign => "-=",
            MulAssign => "*=",
            DivAssign => "/=",
            ModAssign => "%=",
            BAndAssign => "&=",
            BOrAssign => "|=",
            BXorAssign => "^=",
            Minus => "-",
            Decrement => "--",
            Mul => "*",
            Div => "/",
            Mod => "%",
            BAnd => "&",
            BOr => "|",
            BXor => "^",
            LNot => "!",
            BNot => "~",
            Dot => ".",
            Ptr => "->",
            If => "if",
            Else => "else",
            Unroll => "unroll",
            While => "while",
            For => "for",
            Return => "return",
            Continue => "continue",
            Break => "break",
            Builtin => "builtin",
            Call => "call",
            CallBuiltin => "call_builtin",
            Ident => "identifier",
            Path => "path",
            CPreproc => "preprocessor directive",
            StructDefn => "struct definition",
            String => "string",
            Map => "map",
            Var => "variable",
            Param => "positional parameter",
            Int => "integer",
            StackMode => "stack_mode",
        }
    }
}

/// One token: its kind, where it is, and its value (the text for names, the decoded
/// bytes for strings, the canonical `struct T` for a cast's type).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub span: Span,
    pub text: String,
    /// For [`Kind::Int`]: the value.
    pub value: u64,
}

const BUILTINS: &[&str] = &[
    "args", "cgroup", "comm", "cpid", "numaid", "cpu", "ctx", "curtask", "elapsed", "func", "gid", "nsecs", "pid",
    "probe", "rand", "retval", "tid", "uid", "username",
];

const CALLS: &[&str] = &[
    "avg",
    "buf",
    "cat",
    "cgroupid",
    "clear",
    "count",
    "delete",
    "exit",
    "hist",
    "join",
    "kaddr",
    "kptr",
    "ksym",
    "lhist",
    "macaddr",
    "max",
    "min",
    "ntop",
    "override",
    "print",
    "printf",
    "cgroup_path",
    "reg",
    "signal",
    "sizeof",
    "stats",
    "str",
    "strerror",
    "strftime",
    "strncmp",
    "strcontains",
    "sum",
    "system",
    "time",
    "uaddr",
    "uptr",
    "usym",
    "zero",
    "path",
    "unwatch",
    "bswap",
    "skboutput",
    "pton",
    "debugf",
];

/// The kind a whole `[_a-zA-Z][_a-zA-Z0-9]*` run lexes as, by rule order (`bpftrace|perf`,
/// `{builtin}`, `{call}`, `{call_and_builtin}`, the keywords, `struct|union|enum`, `{ident}`).
pub fn word_kind(w: &str) -> Kind {
    let b = w.as_bytes();
    let arg_digit = |p: &str| w.len() == p.len() + 1 && w.starts_with(p) && b[p.len()].is_ascii_digit();
    if w == "bpftrace" || w == "perf" {
        Kind::StackMode
    } else if BUILTINS.contains(&w) || arg_digit("arg") || arg_digit("sarg") {
        Kind::Builtin
    } else if CALLS.contains(&w) {
        Kind::Call
    } else if w == "kstack" || w == "ustack" {
        Kind::CallBuiltin
    } else {
        match w {
            "if" => Kind::If,
            "else" => Kind::Else,
            "unroll" => Kind::Unroll,
            "while" => Kind::While,
            "for" => Kind::For,
            "return" => Kind::Return,
            "continue" => Kind::Continue,
            "break" => Kind::Break,
            _ => Kind::Ident,
        }
    }
}

fn is_ident_start(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphabetic()
}

fn is_ident(c: u8) -> bool {
    c == b'_' || c.is_ascii_alphanumeric()
}

fn is_path_char(c: u8) -> bool {
    matches!(c, b'_' | b'-' | b'.' | b'/' | b'#' | b'*') || c.is_ascii_alphanumeric()
}

/// Object-like macros (`#define NAME BODY`), as bpftrace collects them through clang:
/// the name is the first token and the value the following tokens' spellings joined
/// without spaces (`clang_parser.cpp`, `translateMacro`).
pub fn macros(defs: &[&str]) -> HashMap<String, String> {
    let mut out = HashMap::new();
    for d in defs {
        let rest = d.trim_start_matches('#').trim_start();
        let Some(rest) = rest.strip_prefix("define") else { continue };
        if !rest.starts_with([' ', '\t']) {
            continue;
        }
        let rest = rest.trim_start();
        let name_len = rest.bytes().take_while(|&c| is_ident(c)).count();
        if name_len == 0 || !is_ident_start(rest.as_bytes()[0]) {
            continue;
        }
        let name = &rest[..name_len];
        let body = &rest[name_len..];
        let body = body.split("//").next().unwrap_or("");
        let value: String = body.split_whitespace().collect();
        if !value.is_empty() {
            out.insert(name.to_owned(), value);
        }
    }
    out
}

/// Unput characters allowed without a plain identifier between them
/// (`lexer.l`: `unput_count >= 1000`).
const MACRO_LIMIT: usize = 1000;

struct Source {
    /// Shared: the string and struct states read ahead without copying the script.
    bytes: std::rc::Rc<[u8]>,
    pos: usize,
    /// Where tokens lexed from this source point: `None` for the script itself.
    origin: Option<Span>,
}

/// Lexes a whole script into tokens (ending with [`Kind::End`]) and the lexer's errors.
/// `macros` are expanded as bpftrace's second pass does (empty for the first pass).
pub fn lex(text: &str, macros: &HashMap<String, String>) -> (Vec<Token>, Vec<Error>) {
    let mut lx = Lexer {
        stack: vec![Source { bytes: std::rc::Rc::from(text.as_bytes()), pos: 0, origin: None }],
        tokens: Vec::new(),
        errors: Vec::new(),
        macros,
        unput: 0,
    };
    lx.run();
    (lx.tokens, lx.errors)
}

struct Lexer<'m> {
    stack: Vec<Source>,
    tokens: Vec<Token>,
    errors: Vec<Error>,
    macros: &'m HashMap<String, String>,
    unput: usize,
}

impl Lexer<'_> {
    fn span(&self, start: usize, end: usize) -> Span {
        match self.stack.last().and_then(|s| s.origin) {
            Some(o) => o,
            None => Span::new(start, end),
        }
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize, text: String) {
        let span = self.span(start, end);
        self.tokens.push(Token { kind, span, text, value: 0 });
    }

    fn error(&mut self, start: usize, end: usize, message: String) {
        let span = self.span(start, end);
        self.errors.push(Error { span, stage: Stage::Lexer, message });
    }

    fn run(&mut self) {
        while let Some(src) = self.stack.last() {
            if src.pos >= src.bytes.len() {
                if self.stack.len() == 1 {
                    break;
                }
                self.stack.pop();
                continue;
            }
            self.step();
        }
        let end = self.stack.first().map_or(0, |s| s.bytes.len());
        self.tokens.push(Token { kind: Kind::End, span: Span::new(end, end), text: String::new(), value: 0 });
    }

    /// One rule of the INITIAL state at the current position.
    fn step(&mut self) {
        let Some(src) = self.stack.last() else { return };
        let b = &src.bytes;
        let p = src.pos;
        let c = b[p];
        let at = |i: usize| b.get(i).copied();
        let line_start = p == 0 || b[p - 1] == b'\n';
        let mut n = 1; // bytes consumed
        let tok: Option<(Kind, String)> = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                n = b[p..].iter().take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r')).count();
                None
            }
            b'#' if line_start && at(p + 1) == Some(b'!') => {
                n = line_len(b, p);
                None
            }
            b'/' if at(p + 1) == Some(b'/') => {
                n = line_len(b, p);
                None
            }
            b'/' if at(p + 1) == Some(b'*') => {
                let start = p;
                match find(b, p + 2, b"*/") {
                    Some(e) => n = e + 2 - p,
                    None => {
                        n = b.len() - p;
                        let end = b.len();
                        self.error(start, end, "end of file during comment".into());
                    }
                }
                None
            }
            b'/' => {
                // `\//{space}*[\/\{]`: "/" followed by "/" or "{" ends a predicate.
                let q = p + 1 + b[p + 1..].iter().take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r')).count();
                if matches!(at(q), Some(b'/' | b'{')) {
                    Some((Kind::EndPred, String::new()))
                } else if at(p + 1) == Some(b'=') {
                    n = 2;
                    Some((Kind::DivAssign, String::new()))
                } else {
                    Some((Kind::Div, String::new()))
                }
            }
            b'"' => {
                self.string(p);
                return;
            }
            c if is_ident_start(c) => {
                n = b[p..].iter().take_while(|&&c| is_ident(c)).count();
                let w = std::str::from_utf8(&b[p..p + n]).unwrap_or("").to_owned();
                if matches!(w.as_str(), "struct" | "union" | "enum") {
                    self.struct_state(p, p + n, w);
                    return;
                }
                let kind = word_kind(&w);
                if kind == Kind::Ident {
                    if let Some(body) = self.macros.get(&w) {
                        if body != &w {
                            self.expand(p, n, &w, body.clone());
                            return;
                        }
                    }
                    self.unput = 0;
                }
                Some((kind, w))
            }
            b'0'..=b'9' => {
                n = number_len(b, p);
                let text = String::from_utf8_lossy(&b[p..p + n]).into_owned();
                self.advance(n);
                match to_uint(&text) {
                    Ok(v) => {
                        let span = self.span(p, p + n);
                        self.tokens.push(Token { kind: Kind::Int, span, text, value: v });
                    }
                    Err(e) => self.error(p, p + n, e),
                }
                return;
            }
            b'@' => {
                n = 1 + ident_len(b, p + 1);
                Some((Kind::Map, String::from_utf8_lossy(&b[p..p + n]).into_owned()))
            }
            b'$' => {
                let id = ident_len(b, p + 1);
                let digits = b[p + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
                if id > 0 {
                    n = 1 + id;
                    Some((Kind::Var, String::from_utf8_lossy(&b[p..p + n]).into_owned()))
                } else if digits > 0 {
                    n = 1 + digits;
                    Some((Kind::Param, String::from_utf8_lossy(&b[p..p + n]).into_owned()))
                } else if at(p + 1) == Some(b'#') {
                    n = 2;
                    Some((Kind::ParamCount, String::new()))
                } else {
                    self.invalid(p);
                    return;
                }
            }
            b':' => {
                let mut q = p + 1;
                loop {
                    match at(q) {
                        Some(b'\\') if q + 1 < b.len() && b[q + 1] != b'\n' => q += 2,
                        Some(c) if is_path_char(c) => q += 1,
                        _ => break,
                    }
                }
                if q > p + 1 {
                    n = q - p;
                    Some((Kind::Path, String::from_utf8_lossy(&b[p..q]).into_owned()))
                } else {
                    Some((Kind::Colon, String::new()))
                }
            }
            b'#' if at(p + 1).is_some_and(|c| c != b'!') => {
                // `"#"[^!].*`: the class takes a newline too, then the rest of that line.
                n = 2 + line_len(b, p + 2);
                Some((Kind::CPreproc, String::from_utf8_lossy(&b[p..p + n]).into_owned()))
            }
            _ => {
                let ops: &[(&str, Kind)] = &[
                    ("<<=", Kind::LeftAssign),
                    (">>=", Kind::RightAssign),
                    ("+=", Kind::PlusAssign),
                    ("-=", Kind::MinusAssign),
                    ("*=", Kind::MulAssign),
                    ("%=", Kind::ModAssign),
                    ("&=", Kind::BAndAssign),
                    ("|=", Kind::BOrAssign),
                    ("^=", Kind::BXorAssign),
                    ("==", Kind::Eq),
                    ("!=", Kind::Ne),
                    ("<=", Kind::Le),
                    (">=", Kind::Ge),
                    ("<<", Kind::Left),
                    (">>", Kind::Right),
                    ("&&", Kind::LAnd),
                    ("||", Kind::LOr),
                    ("++", Kind::Increment),
                    ("--", Kind::Decrement),
                    ("->", Kind::Ptr),
                    (";", Kind::Semi),
                    ("{", Kind::LBrace),
                    ("}", Kind::RBrace),
                    ("[", Kind::LBracket),
                    ("]", Kind::RBracket),
                    ("(", Kind::LParen),
                    (")", Kind::RParen),
                    (",", Kind::Comma),
                    ("=", Kind::Assign),
                    ("<", Kind::Lt),
                    (">", Kind::Gt),
                    ("+", Kind::Plus),
                    ("-", Kind::Minus),
                    ("*", Kind::Mul),
                    ("%", Kind::Mod),
                    ("&", Kind::BAnd),
                    ("|", Kind::BOr),
                    ("^", Kind::BXor),
                    ("!", Kind::LNot),
                    ("~", Kind::BNot),
                    (".", Kind::Dot),
                    ("?", Kind::Ques),
                ];
                match ops.iter().find(|(s, _)| b[p..].starts_with(s.as_bytes())) {
                    Some((s, k)) => {
                        n = s.len();
                        Some((*k, String::new()))
                    }
                    None => {
                        self.invalid(p);
                        return;
                    }
                }
            }
        };
        if let Some((kind, text)) = tok {
            self.push(kind, p, p + n, text);
        }
        self.advance(n);
    }

    fn advance(&mut self, n: usize) {
        if let Some(s) = self.stack.last_mut() {
            s.pos = (s.pos + n).min(s.bytes.len());
        }
    }

    /// `.`: one byte that no rule takes (a whole UTF-8 character is reported once).
    fn invalid(&mut self, p: usize) {
        let Some(src) = self.stack.last() else { return };
        let b = &src.bytes;
        let n = utf8_len(b, p);
        let shown = String::from_utf8_lossy(&b[p..p + n]).into_owned();
        self.error(p, p + n, format!("invalid character '{shown}'"));
        self.advance(n);
    }

    /// An identifier naming a macro: its value is lexed in its place.
    fn expand(&mut self, p: usize, n: usize, name: &str, body: String) {
        self.advance(n);
        let origin = self.span(p, p + n);
        self.unput += body.len();
        if self.unput >= MACRO_LIMIT || self.stack.len() > MACRO_LIMIT {
            self.errors.push(Error {
                span: origin,
                stage: Stage::Lexer,
                message: format!("Macro recursion limit reached: {name}, {body}"),
            });
            // `yyterminate()`: the input ends here.
            self.stack.truncate(1);
            if let Some(s) = self.stack.last_mut() {
                s.pos = s.bytes.len();
            }
            return;
        }
        self.stack.push(Source { bytes: std::rc::Rc::from(body.into_bytes()), pos: 0, origin: Some(origin) });
    }

    /// The `STR` state, from the opening quote.
    fn string(&mut self, start: usize) {
        let Some(src) = self.stack.last() else { return };
        let b = std::rc::Rc::clone(&src.bytes);
        let mut q = start + 1;
        let mut buf: Vec<u8> = Vec::new();
        loop {
            match b.get(q) {
                None => {
                    self.error(start, q, "unterminated string".into());
                    break;
                }
                Some(b'"') => {
                    q += 1;
                    let text = String::from_utf8_lossy(&buf).into_owned();
                    self.push(Kind::String, start, q, text);
                    break;
                }
                Some(b'\n') => {
                    self.error(start, q, "unterminated string".into());
                    q += 1;
                    break;
                }
                Some(b'\\') => {
                    let e = b.get(q + 1).copied();
                    match e {
                        Some(b'n') => buf.push(b'\n'),
                        Some(b't') => buf.push(b'\t'),
                        Some(b'r') => buf.push(b'\r'),
                        Some(b'"') => buf.push(b'"'),
                        Some(b'\\') => buf.push(b'\\'),
                        Some(b'0'..=b'7') => {
                            let len = b[q + 1..].iter().take(3).take_while(|c| (b'0'..=b'7').contains(c)).count();
                            let digits = std::str::from_utf8(&b[q + 1..q + 1 + len]).unwrap_or("0");
                            let v = u32::from_str_radix(digits, 8).unwrap_or(0);
                            if v > 255 {
                                self.error(q, q + 1 + len, format!("octal escape sequence out of range '\\{digits}'"));
                            }
                            buf.push(v as u8);
                            q += 1 + len;
                            continue;
                        }
                        Some(b'x' | b'X') if b.get(q + 2).is_some_and(u8::is_ascii_hexdigit) => {
                            let len = b[q + 2..].iter().take(2).take_while(|c| c.is_ascii_hexdigit()).count();
                            let digits = std::str::from_utf8(&b[q + 2..q + 2 + len]).unwrap_or("0");
                            buf.push(u8::from_str_radix(digits, 16).unwrap_or(0));
                            q += 2 + len;
                            continue;
                        }
                        Some(b'\n') | None => {
                            // `\\.` does not take a newline: the backslash alone is `.`,
                            // "invalid character", which also leaves the string.
                            self.error(q, q + 1, "invalid character".into());
                            q += 1;
                            break;
                        }
                        Some(_) => {
                            let n = utf8_len(&b, q + 1);
                            let shown = String::from_utf8_lossy(&b[q..q + 1 + n]).into_owned();
                            self.error(q, q + 1 + n, format!("invalid escape character '{shown}'"));
                            q += 1 + n;
                            continue;
                        }
                    }
                    q += 2;
                }
                Some(_) => {
                    let run = b[q..].iter().take_while(|c| !matches!(c, b'\\' | b'\n' | b'"')).count();
                    buf.extend_from_slice(&b[q..q + run]);
                    q += run;
                }
            }
        }
        let pos = self.stack.last().map_or(0, |s| s.pos);
        self.advance(q - pos);
    }

    /// The `STRUCT`/`BRACE` states after `struct`, `union` or `enum`: a cast's type name
    /// ends at `*` or `)` (left in the input); a definition ends at its closing brace.
    fn struct_state(&mut self, start: usize, word_end: usize, word: String) {
        let Some(src) = self.stack.last() else { return };
        let b = std::rc::Rc::clone(&src.bytes);
        let mut q = word_end;
        let mut depth = 0usize;
        let mut buf = String::new();
        loop {
            let Some(&c) = b.get(q) else {
                // No `<<EOF>>` rule in these states: the input just ends.
                self.advance(q - start);
                return;
            };
            match c {
                b'*' | b')' if depth == 0 => {
                    let name = format!("{word} {}", buf.trim_matches(|c: char| c == ' ' || c == '\t' || c == '\n'));
                    self.push(Kind::Ident, start, q, name);
                    self.advance(q - start);
                    return;
                }
                b'{' => {
                    depth += 1;
                    buf.push('{');
                    q += 1;
                }
                b'}' => {
                    buf.push('}');
                    q += 1;
                    if b.get(q) == Some(&b';') {
                        buf.push(';');
                        q += 1;
                    }
                    if depth <= 1 {
                        self.push(Kind::StructDefn, start, q, format!("{word}{buf}"));
                        self.advance(q - start);
                        return;
                    }
                    depth -= 1;
                }
                _ => {
                    let n = utf8_len(&b, q);
                    buf.push_str(&String::from_utf8_lossy(&b[q..q + n]));
                    q += n;
                }
            }
        }
    }
}

fn line_len(b: &[u8], p: usize) -> usize {
    b.get(p..).map_or(0, |r| r.iter().take_while(|&&c| c != b'\n').count())
}

fn ident_len(b: &[u8], p: usize) -> usize {
    match b.get(p) {
        Some(&c) if is_ident_start(c) => b[p..].iter().take_while(|&&c| is_ident(c)).count(),
        _ => 0,
    }
}

fn utf8_len(b: &[u8], p: usize) -> usize {
    let want = match b.get(p) {
        Some(c) if *c >= 0xf0 => 4,
        Some(c) if *c >= 0xe0 => 3,
        Some(c) if *c >= 0xc0 => 2,
        _ => 1,
    };
    let avail = b.len().saturating_sub(p).max(1);
    let n = want.min(avail);
    if std::str::from_utf8(b.get(p..p + n).unwrap_or(&[])).is_ok() {
        n
    } else {
        1
    }
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    b.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|i| i + from)
}

/// `{int}|{hex}|{exponent}`, longest: `[0-9]([0-9_]*[0-9])?{int_size}?`,
/// `0[xX][0-9a-fA-F]+`, `{int}[eE]{int}`.
fn number_len(b: &[u8], p: usize) -> usize {
    let int_core = |p: usize| -> usize {
        // [0-9]([0-9_]*[0-9])?
        if !b.get(p).is_some_and(u8::is_ascii_digit) {
            return 0;
        }
        let run = b[p..].iter().take_while(|c| c.is_ascii_digit() || **c == b'_').count();
        // back off to the last digit
        let mut n = run;
        while n > 1 && b[p + n - 1] == b'_' {
            n -= 1;
        }
        n
    };
    let size_len = |q: usize| -> usize {
        // ([uU])|([uU]?[lL]?[lL]), longest
        let g = |i: usize| b.get(q + i).copied().map(|c| c.to_ascii_lowercase());
        let mut best = 0;
        if g(0) == Some(b'u') {
            best = 1;
            if g(1) == Some(b'l') {
                best = 2;
                if g(2) == Some(b'l') {
                    best = 3;
                }
            }
        } else if g(0) == Some(b'l') {
            best = 1;
            if g(1) == Some(b'l') {
                best = 2;
            }
        }
        best
    };
    let core = int_core(p);
    let int = core + size_len(p + core);
    let hex = if b[p] == b'0' && matches!(b.get(p + 1), Some(b'x' | b'X')) {
        let h = b[p + 2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
        if h > 0 {
            2 + h
        } else {
            0
        }
    } else {
        0
    };
    let exp = if matches!(b.get(p + core), Some(b'e' | b'E')) {
        let e = int_core(p + core + 1);
        if e > 0 {
            let e2 = e + size_len(p + core + 1 + e);
            core + 1 + e2
        } else {
            0
        }
    } else {
        0
    };
    int.max(hex).max(exp)
}

/// `ast::int_parser::to_uint(text, 0)`: underscores removed; hex; `CeE` scientific;
/// else `std::stoull` with base 0 (a leading `0` is octal) and an optional `u`/`l`
/// suffix. Errors carry bpftrace's message.
pub fn to_uint(text: &str) -> Result<u64, String> {
    let n: String = text.chars().filter(|&c| c != '_').collect();
    if n.starts_with("0x") || n.starts_with("0X") {
        return stoull(&n);
    }
    if let Some(pos) = n.find(['e', 'E']) {
        let (coeff, exp) = (&n[..pos], &n[pos + 1..]);
        let c = stoull(coeff)
            .map_err(|e| format!("Coefficient part of scientific literal is not a valid number: {coeff}: {e}"))?;
        let e = stoull(exp)
            .map_err(|e| format!("Exponent part of scientific literal is not a valid number: {exp}: {e}"))?;
        if c > 9 {
            return Err(format!("Coefficient part of scientific literal must be in range (0,9), got: {coeff}"));
        }
        if e > 16 {
            return Err(format!("Exponent will overflow integer range: {exp}"));
        }
        return Ok(c * 10u64.pow(e as u32));
    }
    stoull(&n)
}

/// `std::stoull(s, &idx, 0)` and the suffix check of `_parse_int`.
fn stoull(s: &str) -> Result<u64, String> {
    let (radix, digits) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let len = digits.bytes().take_while(|c| (*c as char).is_digit(radix)).count();
    if len == 0 && radix != 8 {
        return Err("stoull".into());
    }
    let v = if len == 0 { 0 } else { u64::from_str_radix(&digits[..len], radix).map_err(|_| "stoull".to_owned())? };
    let trail = digits[len..].to_ascii_lowercase();
    if !trail.is_empty() && !matches!(trail.as_str(), "u" | "l" | "ll" | "ul" | "ull") {
        return Err("Found trailing non-numeric characters".into());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(Kind, String)> {
        lex(s, &HashMap::new()).0.into_iter().map(|t| (t.kind, t.text)).collect()
    }

    #[test]
    fn attach_points_lex_as_identifier_and_paths() {
        let k = kinds("kprobe:vfs_read+0x10 tracepoint:syscalls:sys_enter_*");
        assert_eq!(k[0], (Kind::Ident, "kprobe".into()));
        assert_eq!(k[1], (Kind::Path, ":vfs_read".into()));
        assert_eq!(k[2].0, Kind::Plus);
        assert_eq!(k[3].0, Kind::Int);
        assert_eq!(k[5], (Kind::Path, ":syscalls".into()));
        assert_eq!(k[6], (Kind::Path, ":sys_enter_*".into()));
    }

    #[test]
    fn predicate_end_and_division() {
        let k: Vec<Kind> = kinds("/a / 2/ {").into_iter().map(|t| t.0).collect();
        assert_eq!(k, [Kind::Div, Kind::Ident, Kind::Div, Kind::Int, Kind::EndPred, Kind::LBrace, Kind::End]);
    }

    #[test]
    fn cast_types_and_definitions() {
        let k = kinds("(struct  sock *) struct x { int a; struct { int b; } c; };");
        assert_eq!(k[1], (Kind::Ident, "struct sock".into()));
        assert_eq!(k[2].0, Kind::Mul);
        assert_eq!(k[4], (Kind::StructDefn, "struct x { int a; struct { int b; } c; };".into()));
    }

    #[test]
    fn numbers_follow_int_parser() {
        assert_eq!(to_uint("1_000"), Ok(1000));
        assert_eq!(to_uint("0x10"), Ok(16));
        assert_eq!(to_uint("010"), Ok(8));
        assert_eq!(to_uint("1e6"), Ok(1_000_000));
        assert_eq!(to_uint("10ul"), Ok(10));
        assert_eq!(to_uint("08"), Err("Found trailing non-numeric characters".into()));
        assert_eq!(to_uint("99999999999999999999"), Err("stoull".into()));
        assert_eq!(
            to_uint("10e2"),
            Err("Coefficient part of scientific literal must be in range (0,9), got: 10".into())
        );
    }

    #[test]
    fn errors_carry_bpftrace_messages() {
        let (_, e) = lex("\"abc\n ` /* x", &HashMap::new());
        let m: Vec<&str> = e.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(m, ["unterminated string", "invalid character '`'", "end of file during comment"]);
    }

    #[test]
    fn macros_expand_at_the_identifier() {
        let m = macros(&["#define FOO 1 + 2", "#define F(x) x"]);
        assert_eq!(m["FOO"], "1+2");
        let (t, _) = lex("@ = FOO;", &m);
        assert!(t.iter().filter(|t| t.kind == Kind::Int).all(|t| t.span == Span::new(4, 7)));
        let loopy = macros(&["#define A B", "#define B A"]);
        let (_, e) = lex("A", &loopy);
        assert!(e[0].message.starts_with("Macro recursion limit reached"));
    }
}
