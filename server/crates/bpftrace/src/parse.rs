//! bpftrace 0.17's grammar (`src/parser.yy`) as a recursive-descent parser over the
//! tokens of [`crate::lex`]. It accepts exactly the LALR grammar's language, with bison's
//! conflict resolutions (shift wins): `( IDENT )` and `( IDENT *` always start a cast,
//! `- INT` is a negative literal, `@m[` always opens the map's keys. Like bison without
//! `error` rules it stops at the first syntax error, reported at the same token as
//! `syntax error, unexpected X`; the actions' own errors keep their messages.
//!
//! Then, as `Driver::parse` does, the attach-point parser reads every attach point; and
//! when the C definitions `#define` macros, the script is lexed and parsed again with
//! them expanded (bpftrace's second pass after clang).

use crate::ast::*;
use crate::lex::{self, Kind, Token};
use crate::probe::{self, Origins};
use crate::{Error, Span, Stage};
use std::collections::HashMap;

/// Nesting deeper than this is refused: bison's C++ stack grows without bound, a
/// recursive parser must stop before the thread's stack does. No real script nests
/// expressions or blocks this deep.
const MAX_DEPTH: usize = 100;

/// A parsed script: the program (as far as it parsed) and every error bpftrace reports.
#[derive(Clone, Debug, Default)]
pub struct Parse {
    pub program: Program,
    pub errors: Vec<Error>,
}

impl Parse {
    /// bpftrace accepts the script (lexer, grammar and attach points).
    pub fn accepted(&self) -> bool {
        self.errors.is_empty()
    }
}

/// Parses a script as bpftrace 0.17 does before it looks at any kernel.
pub fn parse(text: &str) -> Parse {
    let first = parse_pass(text, &HashMap::new());
    let defines: Vec<&str> = first.program.preprocessor.iter().map(|(s, _)| s.as_str()).collect();
    let macros = lex::macros(&defines);
    if !first.accepted() || macros.is_empty() {
        return first;
    }
    parse_pass(text, &macros)
}

fn parse_pass(text: &str, macros: &HashMap<String, String>) -> Parse {
    let (tokens, lex_errors) = lex::lex(text, macros);
    let mut p = Parser { toks: &tokens, pos: 0, depth: 0, program: Program::default() };
    let result = p.program();
    // How far the lexer had read when the parser stopped: up to its lookahead token.
    let read_to = p.peek().span.start;
    let program = p.program;
    let mut errors = Vec::new();
    match result {
        Err(e) => {
            // The lexer reports as the parser pulls tokens: only what it read before
            // the parser stopped.
            errors.extend(lex_errors.into_iter().filter(|l| l.span.start < read_to.max(e.span.start)));
            errors.push(e);
        }
        Ok(()) => {
            errors.extend(lex_errors);
            if errors.is_empty() {
                for pr in &program.probes {
                    for ap in &pr.attach_points {
                        if let Some(m) = &ap.error {
                            errors.push(Error { span: ap.span, stage: Stage::AttachPoint, message: m.clone() });
                        }
                    }
                    if pr.attach_points.iter().all(|a| a.parts.first().is_none_or(|p| p.is_empty())) {
                        errors.push(Error {
                            span: pr.span,
                            stage: Stage::AttachPoint,
                            message: "No attach points for probe".into(),
                        });
                    }
                }
            }
        }
    }
    // In the order bpftrace prints them: the lexer's as tokens are pulled, then the
    // parser's, then the attach points'.
    Parse { program, errors }
}

struct Parser<'t> {
    toks: &'t [Token],
    pos: usize,
    depth: usize,
    program: Program,
}

type R<T> = Result<T, Error>;

fn is_ident(k: Kind) -> bool {
    matches!(k, Kind::Ident | Kind::Builtin | Kind::Call | Kind::CallBuiltin | Kind::StackMode)
}

fn compound(k: Kind) -> Option<&'static str> {
    Some(match k {
        Kind::LeftAssign => "<<",
        Kind::RightAssign => ">>",
        Kind::PlusAssign => "+",
        Kind::MinusAssign => "-",
        Kind::MulAssign => "*",
        Kind::DivAssign => "/",
        Kind::ModAssign => "%",
        Kind::BAndAssign => "&",
        Kind::BOrAssign => "|",
        Kind::BXorAssign => "^",
        _ => return None,
    })
}

impl<'t> Parser<'t> {
    fn peek(&self) -> &'t Token {
        let i = self.pos.min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn peek_at(&self, n: usize) -> &'t Token {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn kind(&self) -> Kind {
        self.peek().kind
    }

    fn bump(&mut self) -> &'t Token {
        let t = self.peek();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn unexpected(&self) -> Error {
        let t = self.peek();
        Error { span: t.span, stage: Stage::Parser, message: format!("syntax error, unexpected {}", t.kind.display()) }
    }

    fn expect(&mut self, k: Kind) -> R<&'t Token> {
        if self.kind() == k {
            Ok(self.bump())
        } else {
            Err(self.unexpected())
        }
    }

    fn action_error(span: Span, message: impl Into<String>) -> Error {
        Error { span, stage: Stage::Parser, message: message.into() }
    }

    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Self::action_error(
                self.peek().span,
                format!("nesting deeper than {MAX_DEPTH} levels: fevlint does not read further"),
            ));
        }
        Ok(())
    }

    /// `program: c_definitions probes END`
    fn program(&mut self) -> R<()> {
        loop {
            match self.kind() {
                Kind::CPreproc => {
                    let t = self.bump();
                    self.program.preprocessor.push((t.text.clone(), t.span));
                }
                Kind::StructDefn => {
                    let t = self.bump();
                    let head = t.text.split('{').next().unwrap_or("");
                    let name = head.split_whitespace().collect::<Vec<_>>();
                    let name = (name.len() >= 2).then(|| format!("{} {}", name[0], name[1]));
                    self.program.definitions.push(Definition { name, text: t.text.clone(), span: t.span });
                }
                _ => break,
            }
        }
        loop {
            let probe = self.probe()?;
            self.program.probes.push(probe);
            if self.kind() == Kind::End {
                return Ok(());
            }
        }
    }

    /// `probe: attach_points pred block | attach_points END`
    fn probe(&mut self) -> R<Probe> {
        let start = self.peek().span;
        let mut aps = Vec::new();
        loop {
            aps.push(self.attach_point()?);
            if self.kind() == Kind::Comma {
                self.bump();
            } else {
                break;
            }
        }
        let predicate = if self.kind() == Kind::Div {
            self.bump();
            let e = self.expr()?;
            self.expect(Kind::EndPred)?;
            Some(e)
        } else {
            None
        };
        if self.kind() == Kind::End && predicate.is_none() {
            let span = start.to(self.peek().span);
            return Err(Self::action_error(span, "unexpected end of file, expected {"));
        }
        self.expect(Kind::LBrace)?;
        let body = self.stmt_list()?;
        let close = self.expect(Kind::RBrace)?;
        Ok(Probe { attach_points: aps, predicate, body, span: start.to(close.span) })
    }

    /// `attach_point_def`: identifiers, strings, paths, integers, `:`, `.`, `+`, `*`,
    /// `[`, `]` and positional parameters, glued.
    fn attach_point(&mut self) -> R<probe::AttachPoint> {
        let mut raw = String::new();
        let mut origins: Origins = Vec::new();
        let mut span: Option<Span> = None;
        loop {
            let t = self.peek();
            let piece: String = match t.kind {
                k if is_ident(k) => t.text.clone(),
                Kind::String => format!("\"{}\"", t.text.replace('"', "\\\"")),
                Kind::Path => t.text.clone(),
                Kind::Int => (t.value as i64).to_string(),
                Kind::Colon => ":".into(),
                Kind::Dot => ".".into(),
                Kind::Plus => "+".into(),
                Kind::Mul => "*".into(),
                Kind::LBracket => "[".into(),
                Kind::RBracket => "]".into(),
                Kind::ParamCount => {
                    let s = span.map_or(t.span, |s| s.to(t.span));
                    return Err(Self::action_error(s, "Not a positional parameter"));
                }
                Kind::Param => {
                    let n = param_value(t)?;
                    format!("${n}")
                }
                _ => break,
            };
            let verbatim = piece.len() == t.span.end - t.span.start;
            origins.push((raw.len()..raw.len() + piece.len(), t.span, verbatim));
            raw.push_str(&piece);
            span = Some(span.map_or(t.span, |s| s.to(t.span)));
            self.bump();
        }
        let span = span.unwrap_or_else(|| Span::new(self.peek().span.start, self.peek().span.start));
        Ok(probe::parse_attach_point(raw, span, &origins))
    }

    /// `stmt_list`: expression statements separated by `;` (the last may omit it),
    /// block statements (`if`, `while`, `unroll`) not followed by one.
    fn stmt_list(&mut self) -> R<Vec<Stmt>> {
        let mut out = Vec::new();
        loop {
            match self.kind() {
                Kind::RBrace => break,
                Kind::If => out.push(self.if_stmt()?),
                Kind::While | Kind::Unroll => out.push(self.loop_stmt()?),
                _ => {
                    out.push(self.expr_stmt()?);
                    if self.kind() == Kind::Semi {
                        self.bump();
                    } else {
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    fn block(&mut self) -> R<(Vec<Stmt>, Span)> {
        self.enter()?;
        let open = self.expect(Kind::LBrace)?;
        let body = self.stmt_list()?;
        let close = self.expect(Kind::RBrace)?;
        self.depth -= 1;
        Ok((body, open.span.to(close.span)))
    }

    fn if_stmt(&mut self) -> R<Stmt> {
        let kw = self.expect(Kind::If)?;
        self.expect(Kind::LParen)?;
        let cond = self.expr()?;
        self.expect(Kind::RParen)?;
        let (then, mut span) = self.block()?;
        span = kw.span.to(span);
        let mut otherwise = Vec::new();
        if self.kind() == Kind::Else {
            self.bump();
            if self.kind() == Kind::If {
                self.enter()?;
                let s = self.if_stmt()?;
                self.depth -= 1;
                otherwise.push(s);
            } else {
                let (b, s) = self.block()?;
                span = span.to(s);
                otherwise = b;
            }
        }
        Ok(Stmt::If { cond, then, otherwise, span })
    }

    fn loop_stmt(&mut self) -> R<Stmt> {
        let kw = self.bump();
        self.expect(Kind::LParen)?;
        if kw.kind == Kind::Unroll {
            let count = match self.kind() {
                Kind::Param | Kind::ParamCount => self.primary()?,
                Kind::Int => self.primary()?,
                Kind::Minus if self.peek_at(1).kind == Kind::Int => self.primary()?,
                _ => return Err(self.unexpected()),
            };
            self.expect(Kind::RParen)?;
            let (body, s) = self.block()?;
            Ok(Stmt::Unroll { count, body, span: kw.span.to(s) })
        } else {
            let cond = self.expr()?;
            self.expect(Kind::RParen)?;
            let (body, s) = self.block()?;
            Ok(Stmt::While { cond, body, span: kw.span.to(s) })
        }
    }

    /// `expr_stmt: expr | jump_stmt | assign_stmt`
    fn expr_stmt(&mut self) -> R<Stmt> {
        let t = self.peek();
        let jump = match t.kind {
            Kind::Break => Some("break"),
            Kind::Continue => Some("continue"),
            Kind::Return => Some("return"),
            _ => None,
        };
        if let Some(kind) = jump {
            self.bump();
            return Ok(Stmt::Jump { kind, span: t.span });
        }
        let lhs = self.expr()?;
        let op_tok = self.peek();
        let op = if op_tok.kind == Kind::Assign { Some(None) } else { compound(op_tok.kind).map(Some) };
        let Some(op) = op else { return Ok(Stmt::Expr(lhs)) };
        match &lhs.kind {
            ExprKind::Map { .. } | ExprKind::Var(_) => {
                self.bump();
                let value = self.expr()?;
                let span = lhs.span.to(value.span);
                Ok(Stmt::Assign { target: lhs, op, value, span })
            }
            ExprKind::TupleIndex { .. } if op.is_none() && lhs.span.end <= op_tok.span.start => {
                self.bump();
                let value = self.expr()?;
                Err(Self::action_error(
                    lhs.span.to(value.span),
                    "Tuples are immutable once created. Consider creating a new tuple and assigning it instead.",
                ))
            }
            _ => Err(self.unexpected()),
        }
    }

    fn expr(&mut self) -> R<Expr> {
        self.enter()?;
        let e = self.conditional();
        self.depth -= 1;
        e
    }

    /// `logical_or_expr QUES expr COLON conditional_expr`
    fn conditional(&mut self) -> R<Expr> {
        let cond = self.binary(0)?;
        if self.kind() != Kind::Ques {
            return Ok(cond);
        }
        self.bump();
        let then = self.expr()?;
        self.expect(Kind::Colon)?;
        self.enter()?;
        let otherwise = self.conditional()?;
        self.depth -= 1;
        let span = cond.span.to(otherwise.span);
        Ok(Expr { kind: ExprKind::Ternary { cond: cond.into(), then: then.into(), otherwise: otherwise.into() }, span })
    }

    /// The left-associative binary levels, loosest first.
    fn binary(&mut self, level: usize) -> R<Expr> {
        const LEVELS: &[&[(Kind, &str)]] = &[
            &[(Kind::LOr, "||")],
            &[(Kind::LAnd, "&&")],
            &[(Kind::BOr, "|")],
            &[(Kind::BXor, "^")],
            &[(Kind::BAnd, "&")],
            &[(Kind::Eq, "=="), (Kind::Ne, "!=")],
            &[(Kind::Le, "<="), (Kind::Ge, ">="), (Kind::Lt, "<"), (Kind::Gt, ">")],
            &[(Kind::Left, "<<"), (Kind::Right, ">>")],
            &[(Kind::Plus, "+"), (Kind::Minus, "-")],
            &[(Kind::Mul, "*"), (Kind::Div, "/"), (Kind::Mod, "%")],
        ];
        if level == LEVELS.len() {
            return self.cast();
        }
        let mut lhs = self.binary(level + 1)?;
        while let Some((_, op)) = LEVELS[level].iter().find(|(k, _)| *k == self.kind()) {
            self.bump();
            let rhs = self.binary(level + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary { op, lhs: lhs.into(), rhs: rhs.into() }, span };
        }
        Ok(lhs)
    }

    /// `cast_expr: unary_expr | ( IDENT ) cast_expr | ( IDENT * ) cast_expr | ( IDENT * * ) cast_expr`
    fn cast(&mut self) -> R<Expr> {
        self.enter()?;
        let r = self.cast_inner();
        self.depth -= 1;
        r
    }

    fn cast_inner(&mut self) -> R<Expr> {
        if self.kind() == Kind::LParen
            && self.peek_at(1).kind == Kind::Ident
            && matches!(self.peek_at(2).kind, Kind::RParen | Kind::Mul)
        {
            let open = self.bump();
            let ty = self.bump();
            let mut pointers = 0u8;
            while self.kind() == Kind::Mul && pointers < 2 {
                self.bump();
                pointers += 1;
            }
            self.expect(Kind::RParen)?;
            let expr = self.cast()?;
            let span = open.span.to(expr.span);
            return Ok(Expr {
                kind: ExprKind::Cast { ty: ty.text.clone(), ty_span: ty.span, pointers, expr: expr.into() },
                span,
            });
        }
        self.unary()
    }

    /// `unary_expr`
    fn unary(&mut self) -> R<Expr> {
        let t = self.peek();
        let op = match t.kind {
            Kind::Mul => Some("*"),
            Kind::BNot => Some("~"),
            Kind::LNot => Some("!"),
            Kind::Minus if self.peek_at(1).kind != Kind::Int => Some("-"),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let e = self.cast()?;
            let span = t.span.to(e.span);
            return Ok(Expr { kind: ExprKind::Unary { op, expr: e.into() }, span });
        }
        if matches!(t.kind, Kind::Increment | Kind::Decrement) {
            let op = if t.kind == Kind::Increment { "++" } else { "--" };
            let next = self.peek_at(1);
            if matches!(next.kind, Kind::Map | Kind::Var) {
                self.bump();
                let e = self.map_or_var()?;
                let span = t.span.to(e.span);
                return Ok(Expr { kind: ExprKind::Unary { op, expr: e.into() }, span });
            }
            if is_ident(next.kind) {
                return Err(Self::action_error(
                    t.span,
                    format!("The {op} operator must be applied to a map or variable"),
                ));
            }
            self.bump();
            return Err(self.unexpected());
        }
        if is_ident(t.kind) && matches!(self.peek_at(1).kind, Kind::Increment | Kind::Decrement) {
            let op = if self.peek_at(1).kind == Kind::Increment { "++" } else { "--" };
            return Err(Self::action_error(t.span, format!("The {op} operator must be applied to a map or variable")));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> R<Expr> {
        let mut e = self.primary()?;
        loop {
            match self.kind() {
                Kind::Dot => {
                    self.bump();
                    let f = self.peek();
                    if f.kind == Kind::Int {
                        self.bump();
                        let span = e.span.to(f.span);
                        e = Expr { kind: ExprKind::TupleIndex { base: e.into(), index: f.value }, span };
                    } else if is_ident(f.kind) {
                        self.bump();
                        let span = e.span.to(f.span);
                        e = Expr {
                            kind: ExprKind::Field {
                                base: e.into(),
                                field: f.text.clone(),
                                field_span: f.span,
                                arrow: false,
                            },
                            span,
                        };
                    } else {
                        return Err(self.unexpected());
                    }
                }
                Kind::Ptr => {
                    self.bump();
                    let f = self.peek();
                    if !is_ident(f.kind) {
                        return Err(self.unexpected());
                    }
                    self.bump();
                    let span = e.span.to(f.span);
                    e = Expr {
                        kind: ExprKind::Field {
                            base: e.into(),
                            field: f.text.clone(),
                            field_span: f.span,
                            arrow: true,
                        },
                        span,
                    };
                }
                Kind::LBracket => {
                    self.bump();
                    let i = self.expr()?;
                    let close = self.expect(Kind::RBracket)?;
                    let span = e.span.to(close.span);
                    e = Expr { kind: ExprKind::Index { base: e.into(), index: i.into() }, span };
                }
                Kind::Increment | Kind::Decrement if matches!(e.kind, ExprKind::Map { .. } | ExprKind::Var(_)) => {
                    let t = self.bump();
                    let op = if t.kind == Kind::Increment { "++" } else { "--" };
                    let span = e.span.to(t.span);
                    e = Expr { kind: ExprKind::Postfix { op, expr: e.into() }, span };
                }
                _ => return Ok(e),
            }
        }
    }

    fn map_or_var(&mut self) -> R<Expr> {
        let t = self.bump();
        match t.kind {
            Kind::Var => Ok(Expr { kind: ExprKind::Var(t.text.clone()), span: t.span }),
            Kind::Map => {
                let mut keys = Vec::new();
                let mut span = t.span;
                if self.kind() == Kind::LBracket {
                    self.bump();
                    keys = self.vargs()?;
                    span = span.to(self.expect(Kind::RBracket)?.span);
                }
                Ok(Expr { kind: ExprKind::Map { name: t.text.clone(), keys }, span })
            }
            _ => {
                self.pos -= 1;
                Err(self.unexpected())
            }
        }
    }

    fn vargs(&mut self) -> R<Vec<Expr>> {
        let mut out = vec![self.expr()?];
        while self.kind() == Kind::Comma {
            self.bump();
            out.push(self.expr()?);
        }
        Ok(out)
    }

    fn primary(&mut self) -> R<Expr> {
        let t = self.peek();
        let leaf = |kind| Ok(Expr { kind, span: t.span });
        match t.kind {
            Kind::Call | Kind::CallBuiltin | Kind::Ident | Kind::Builtin | Kind::StackMode
                if self.peek_at(1).kind == Kind::LParen =>
            {
                self.bump();
                self.bump();
                let args = if self.kind() == Kind::RParen { Vec::new() } else { self.vargs()? };
                let close = self.expect(Kind::RParen)?;
                if !matches!(t.kind, Kind::Call | Kind::CallBuiltin) {
                    return Err(Self::action_error(t.span, format!("Unknown function: {}", t.text)));
                }
                let span = t.span.to(close.span);
                Ok(Expr { kind: ExprKind::Call { name: t.text.clone(), name_span: t.span, args }, span })
            }
            Kind::Ident => {
                self.bump();
                leaf(ExprKind::Ident(t.text.clone()))
            }
            Kind::Int => {
                self.bump();
                leaf(ExprKind::Int(t.value as i64 as i128))
            }
            Kind::Minus if self.peek_at(1).kind == Kind::Int => {
                self.bump();
                let i = self.bump();
                let v = (!i.value).wrapping_add(1) as i64;
                Ok(Expr { kind: ExprKind::Int(v as i128), span: t.span.to(i.span) })
            }
            Kind::String => {
                self.bump();
                leaf(ExprKind::Str(t.text.clone()))
            }
            Kind::StackMode => {
                self.bump();
                leaf(ExprKind::StackMode(t.text.clone()))
            }
            Kind::Builtin | Kind::CallBuiltin => {
                self.bump();
                leaf(ExprKind::Builtin(t.text.clone()))
            }
            Kind::Param => {
                self.bump();
                let n = param_value(t)?;
                leaf(ExprKind::Param(Some(n)))
            }
            Kind::ParamCount => {
                self.bump();
                leaf(ExprKind::Param(None))
            }
            Kind::Map | Kind::Var => self.map_or_var(),
            Kind::LParen => {
                self.bump();
                let first = self.expr()?;
                if self.kind() == Kind::Comma {
                    self.bump();
                    let mut items = vec![first];
                    items.extend(self.vargs()?);
                    let close = self.expect(Kind::RParen)?;
                    return Ok(Expr { kind: ExprKind::Tuple(items), span: t.span.to(close.span) });
                }
                let close = self.expect(Kind::RParen)?;
                Ok(Expr { kind: first.kind, span: t.span.to(close.span) })
            }
            _ => Err(self.unexpected()),
        }
    }
}

/// `param: PARAM`: `$0` and values past `long` are refused.
fn param_value(t: &Token) -> R<u64> {
    let digits = &t.text[1..];
    match digits.parse::<i64>() {
        Ok(n) if n > 0 => Ok(n as u64),
        _ => Err(Error {
            span: t.span,
            stage: Stage::Parser,
            message: format!("param {} is out of integer range [1, {}]", t.text, i64::MAX),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(s: &str) -> Vec<String> {
        parse(s).errors.into_iter().map(|e| e.message).collect()
    }

    #[test]
    fn accepts_the_language() {
        for s in [
            "BEGIN { printf(\"hi\\n\"); exit(); }",
            "kprobe:vfs_read,kretprobe:vfs_read /pid == 1/ { @[comm] = count(); }",
            "k:f+0x10 { $s = (struct sock *)arg0; @x = $s->__sk_common.skc_daddr }",
            "#include <linux/sched.h>\nstruct foo { int a; }\nt:sched:sched_switch { if (args->prev_pid) { @a++ } else if (1) { } }",
            "i:s:1 { unroll(3) { @i++; } while ($i < 2) { $i++; break } @t = (1, \"a\"); print(@t.0) }",
            "BEGIN { $x = -1; @a[1,2] = 3; @a[1,2] += 1; $p = (uint8 **)0; $c = cpu ? 1 : 2; @s = sizeof(struct task_struct) }",
            "BEGIN { @[kstack] = count(); @[ustack(perf, 3)] = count(); delete(@x[1]); }",
            "uprobe:/bin/bash:readline { @ = $1 }",
            "BEGIN { $x = 1 } // c\n/* block */ END { }",
        ] {
            assert_eq!(errors(s), Vec::<String>::new(), "{s}");
        }
    }

    #[test]
    fn bison_conflicts_resolve_as_shift() {
        // `( IDENT )` is a cast: a binary operator cannot follow it.
        assert_eq!(errors("BEGIN { $x = (a) + 1 }"), ["syntax error, unexpected +"]);
        assert_eq!(errors("BEGIN { $x = (a * 2) }"), ["syntax error, unexpected integer"]);
        assert_eq!(errors("BEGIN { $x = (a + 2) }"), Vec::<String>::new());
    }

    #[test]
    fn refusals_carry_bpftrace_messages() {
        assert_eq!(errors("kprobe:f { @x = ; }"), ["syntax error, unexpected ;"]);
        assert_eq!(errors("kprobe:f"), ["unexpected end of file, expected {"]);
        assert_eq!(errors("BEGIN { foo() }"), ["Unknown function: foo"]);
        assert_eq!(errors("BEGIN { pid++ }"), ["The ++ operator must be applied to a map or variable"]);
        assert_eq!(
            errors("BEGIN { $t = (1,2); $t.0 = 1 }")[0],
            "Tuples are immutable once created. Consider creating a new tuple and assigning it instead."
        );
        assert_eq!(errors("BEGIN { $0 }"), ["param $0 is out of integer range [1, 9223372036854775807]"]);
        assert_eq!(errors("foo:bar { }"), ["Invalid probe type: foo"]);
        assert_eq!(errors("BEGIN { if (1) { } ; }"), ["syntax error, unexpected ;"]);
        assert_eq!(errors("{ }"), ["No attach points for probe"]);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let s = format!("BEGIN {{ $x = {}1{} }}", "(".repeat(100_000), ")".repeat(100_000));
        assert_eq!(errors(&s), ["nesting deeper than 100 levels: fevlint does not read further"]);
    }
}
