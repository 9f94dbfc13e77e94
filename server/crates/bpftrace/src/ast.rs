//! The tree `parser.yy` builds, with byte spans: a program is its C definitions and its
//! probes; a probe is its attach points, an optional predicate and a block.

use crate::probe::AttachPoint;
use crate::Span;

#[derive(Clone, Debug, Default)]
pub struct Program {
    /// `#include`, `#define` and other preprocessor lines, in order.
    pub preprocessor: Vec<(String, Span)>,
    /// `struct`/`union`/`enum` definitions before the probes.
    pub definitions: Vec<Definition>,
    pub probes: Vec<Probe>,
}

/// A C type defined in the script (`struct foo { ... }`): it takes precedence over the
/// kernel's type of the same name, as bpftrace's clang pass makes it.
#[derive(Clone, Debug)]
pub struct Definition {
    /// `struct foo`, `union u`, `enum e` (as written, one space).
    pub name: Option<String>,
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Probe {
    pub attach_points: Vec<AttachPoint>,
    pub predicate: Option<Expr>,
    pub body: Vec<Stmt>,
    /// From the first attach point to the closing brace.
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    Expr(Expr),
    /// `@m = e`, `$v = e`, and the compound forms (`op` is the operator before `=`).
    Assign {
        target: Expr,
        op: Option<&'static str>,
        value: Expr,
        span: Span,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
        span: Span,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    Unroll {
        count: Expr,
        body: Vec<Stmt>,
        span: Span,
    },
    Jump {
        kind: &'static str,
        span: Span,
    },
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(i128),
    Str(String),
    /// A bare identifier (an enum value, a macro name, a type name in `sizeof`).
    Ident(String),
    /// `pid`, `arg0`, `args`, `retval`, `kstack`, ...
    Builtin(String),
    StackMode(String),
    /// `$1`; `None` for `$#`.
    Param(Option<u64>),
    Var(String),
    Map {
        name: String,
        keys: Vec<Expr>,
    },
    Call {
        name: String,
        name_span: Span,
        args: Vec<Expr>,
    },
    /// `e.field` (`arrow` false) or `e->field` (`arrow` true).
    Field {
        base: Box<Expr>,
        field: String,
        field_span: Span,
        arrow: bool,
    },
    /// `e.0` on a tuple.
    TupleIndex {
        base: Box<Expr>,
        index: u64,
    },
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `(type) e`, `(type *) e`, `(type **) e`.
    Cast {
        ty: String,
        ty_span: Span,
        pointers: u8,
        expr: Box<Expr>,
    },
    Unary {
        op: &'static str,
        expr: Box<Expr>,
    },
    /// `@x++`, `$x--`.
    Postfix {
        op: &'static str,
        expr: Box<Expr>,
    },
    Binary {
        op: &'static str,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Tuple(Vec<Expr>),
}

impl Expr {
    /// Calls `f` on this expression and every expression inside it, parents first.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Map { keys, .. } => keys.iter().for_each(|k| k.walk(f)),
            ExprKind::Call { args, .. } | ExprKind::Tuple(args) => args.iter().for_each(|a| a.walk(f)),
            ExprKind::Field { base, .. } | ExprKind::TupleIndex { base, .. } => base.walk(f),
            ExprKind::Index { base, index } => {
                base.walk(f);
                index.walk(f);
            }
            ExprKind::Cast { expr, .. } | ExprKind::Unary { expr, .. } | ExprKind::Postfix { expr, .. } => expr.walk(f),
            ExprKind::Binary { lhs, rhs, .. } => {
                lhs.walk(f);
                rhs.walk(f);
            }
            ExprKind::Ternary { cond, then, otherwise } => {
                cond.walk(f);
                then.walk(f);
                otherwise.walk(f);
            }
            _ => {}
        }
    }
}

impl Stmt {
    /// Calls `s` on this statement and every statement nested in it, in order.
    pub fn walk<'a>(&'a self, s: &mut dyn FnMut(&'a Stmt)) {
        s(self);
        match self {
            Stmt::If { then, otherwise, .. } => then.iter().chain(otherwise).for_each(|t| t.walk(s)),
            Stmt::While { body, .. } | Stmt::Unroll { body, .. } => body.iter().for_each(|t| t.walk(s)),
            _ => {}
        }
    }

    /// The expressions directly in this statement (not in nested statements).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Stmt::Expr(e) => vec![e],
            Stmt::Assign { target, value, .. } => vec![target, value],
            Stmt::If { cond, .. } | Stmt::While { cond, .. } => vec![cond],
            Stmt::Unroll { count, .. } => vec![count],
            Stmt::Jump { .. } => Vec::new(),
        }
    }
}
