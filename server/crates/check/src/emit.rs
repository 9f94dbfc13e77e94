//! `fevlint emit`: function-event definitions as mainline `kprobe_events` lines, for the
//! kernels in service (function_events never reached mainline).
//!
//! Each field is translated with the same [`fevlint_syntax::walk::walk`] the checker and
//! the executor use, over a walk whose values are kprobe fetch expressions: a slot is its
//! register (`%di`…, the raw register the function-event slot reads), a load is
//! `+OFF(…)`, an array or string copies from the address (`+OFF(…):x8[6]`,
//! `+OFF(…):string`), an absolute address is `@ADDR`/`@sym`. What a kprobe cannot express
//! (an address recorded without a read, a constant added to a value read, an array of
//! more than 64 elements) is a [`Problem`], never a different definition. Every line
//! produced is checked by fevlint-mainline's transcription of the kernel's parser for the
//! target's dialect.

use fevlint_mainline::Dialect;
use fevlint_syntax::machine::{AbsValue, Atom, Field, Parsed, Target};
use fevlint_syntax::walk::{self, Recorded, Walk};
use fevlint_syntax::Span;

/// The kernel's `MAX_ARRAY_LEN`.
pub const MAX_ARRAY_LEN: u64 = 64;

/// Why a definition has no mainline equivalent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub span: Span,
    pub message: String,
}

/// One definition's translation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Emitted {
    /// `p:fevlint/vfs_read vfs_read mode=+12(%di):x32 …`.
    pub line: String,
    pub event: String,
}

/// A fetch expression being built: `base` with `pending` bytes not yet applied.
#[derive(Clone, Debug)]
struct Fetch {
    base: String,
    pending: u64,
    /// An absolute address (`@…` form) rather than a value.
    absolute: bool,
}

struct KprobeWalk {
    /// The fetch base of each slot: `%di`… for kprobes, `$arg1`… for fprobes.
    bases: &'static [&'static str],
    problem: Option<Problem>,
}

const KPROBE_X86_64: [&str; 6] = ["%di", "%si", "%dx", "%cx", "%r8", "%r9"];
const KPROBE_I386: [&str; 3] = ["%ax", "%dx", "%cx"];
/// On x86 `$argN` is `regs_get_kernel_argument(N-1)`: the same registers, by position.
const ARGS: [&str; 6] = ["$arg1", "$arg2", "$arg3", "$arg4", "$arg5", "$arg6"];

fn offset(v: u64) -> String {
    let signed = v as i64;
    if signed < 0 {
        format!("-{}", signed.unsigned_abs())
    } else {
        format!("+{signed}")
    }
}

impl Walk for KprobeWalk {
    type Value = Fetch;
    type Error = Problem;

    fn param(&mut self, slot: u32) -> Result<Fetch, Problem> {
        let base = self.bases.get(slot as usize).ok_or_else(|| Problem {
            span: Span::new(0, 0),
            message: format!("slot {slot} has no register on this architecture"),
        })?;
        Ok(Fetch { base: (*base).to_owned(), pending: 0, absolute: false })
    }

    fn absolute(&mut self, value: &AbsValue, size: u32) -> Result<Fetch, Problem> {
        let at = match value {
            AbsValue::Address(a) => format!("@0x{a:x}"),
            AbsValue::Symbol(s) => format!("@{s}"),
        };
        // `size` 0: the address itself (arrays, strings); otherwise the value there,
        // which is what `@ADDR:type` fetches.
        let _ = size;
        Ok(Fetch { base: at, pending: 0, absolute: true })
    }

    fn add(&mut self, v: Fetch, bytes: u64, _span: Span) -> Result<Fetch, Problem> {
        Ok(Fetch { pending: v.pending.wrapping_add(bytes), ..v })
    }

    fn load_pointer(&mut self, addr: Fetch, span: Span) -> Result<Fetch, Problem> {
        self.load_value(addr, 0, span)
    }

    fn load_value(&mut self, addr: Fetch, _size: u32, _span: Span) -> Result<Fetch, Problem> {
        Ok(Fetch { base: format!("{}({})", offset(addr.pending), addr.base), pending: 0, absolute: false })
    }
}

/// The kprobe type of one element (`make_fmt()`'s printing, in the mainline names).
fn kprobe_type(field: &Field, target: Target) -> &'static str {
    let size = field.elem_size(target);
    let hex = matches!(field.atom, Atom::X8 | Atom::X16 | Atom::X32 | Atom::X64) && !field.unsigned;
    let signed = field.atom.signed() && !field.unsigned;
    match (size, hex, signed) {
        (1, true, _) => "x8",
        (2, true, _) => "x16",
        (4, true, _) => "x32",
        (_, true, _) => "x64",
        (1, _, true) => "s8",
        (2, _, true) => "s16",
        (4, _, true) => "s32",
        (_, _, true) => "s64",
        (1, _, _) => "u8",
        (2, _, _) => "u16",
        (4, _, _) => "u32",
        _ => "u64",
    }
}

fn fetch_arg(field: &Field, target: Target, bases: &'static [&'static str]) -> Result<String, Problem> {
    let mut w = KprobeWalk { bases, problem: None };
    let recorded = walk::walk(field, target, &mut w)?;
    if let Some(p) = w.problem {
        return Err(p);
    }
    let at_address = |f: &Fetch| {
        if f.absolute {
            if f.pending == 0 {
                f.base.clone()
            } else {
                format!("{}({})", offset(f.pending), f.base)
            }
        } else {
            format!("{}({})", offset(f.pending), f.base)
        }
    };
    let not_expressible = |why: &str| Problem { span: field.span, message: why.to_owned() };
    let (expr, ty) = match recorded {
        Recorded::Value(v) => {
            if v.pending != 0 {
                return Err(not_expressible(
                    "records an address plus a constant (no read, or `+N` after the last `[ ]`): a kprobe \
                     fetch argument cannot add a constant to a value",
                ));
            }
            let ty =
                if field.atom == Atom::Symbol { "symbol".to_owned() } else { kprobe_type(field, target).to_owned() };
            (v.base, ty)
        }
        Recorded::StringFrom(v) => (at_address(&v), "string".to_owned()),
        Recorded::CopyFrom { addr, .. } => {
            let n = field.array.map_or(0, |(n, _)| n);
            if field.atom == Atom::Char && !field.unsigned {
                // `char[N]` prints as a string in the function-event kernel.
                (at_address(&addr), "string".to_owned())
            } else if n > MAX_ARRAY_LEN {
                return Err(not_expressible(&format!(
                    "an array of {n} elements: kprobe arrays hold at most {MAX_ARRAY_LEN} (MAX_ARRAY_LEN)"
                )));
            } else {
                let elem = if field.atom == Atom::Symbol { "symbol" } else { kprobe_type(field, target) };
                (at_address(&addr), format!("{elem}[{n}]"))
            }
        }
    };
    Ok(format!("{}={expr}:{ty}", field.name))
}

/// Which mainline probe a definition becomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `p:` reading the slot registers: every 6.x kernel.
    Kprobe,
    /// `f:` (fprobe at the function's entry), naming members through BTF
    /// (`file->f_op->llseek`) where the checker resolved a plain member chain, which
    /// survives the member moves that offsets do not; `+OFF($argN)` elsewhere.
    Fprobe,
}

/// A C expression fprobe's BTF argument parser takes: a parameter, then `->`/`.` members.
fn btf_path(expr: &str) -> bool {
    let ident = |s: &str| {
        let n = s.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        (n > 0 && !s.as_bytes()[0].is_ascii_digit()).then_some(n)
    };
    let Some(n) = ident(expr) else { return false };
    let mut rest = &expr[n..];
    while !rest.is_empty() {
        let sep = if rest.starts_with("->") {
            2
        } else if rest.starts_with('.') {
            1
        } else {
            return false;
        };
        rest = &rest[sep..];
        let Some(n) = ident(rest) else { return false };
        rest = &rest[n..];
    }
    true
}

/// Translates one accepted definition for `target`, then checks the line with the
/// kernel's parser (fevlint-mainline) for `dialect`, asking `env` what the kernel would
/// (does the function exist, is it blacklisted, is it ftrace-able for `f:`: see
/// [`crate::dynevents::KernelEnv`]). `event` names the probe event.
/// `btf` gives, per field, the C expression the checker resolved it to (`Fprobe` only).
#[allow(clippy::too_many_arguments)]
pub fn emit(
    parsed: &Parsed,
    target: Target,
    dialect: &Dialect,
    env: &dyn fevlint_mainline::Env,
    event: &str,
    flavor: Flavor,
    btf: &[Option<BtfField>],
) -> Result<Emitted, Problem> {
    let bases: &'static [&'static str] = match (flavor, target.ptr_size) {
        (Flavor::Fprobe, _) => &ARGS,
        (Flavor::Kprobe, 4) => &KPROBE_I386,
        (Flavor::Kprobe, _) => &KPROBE_X86_64,
    };
    let (function, fspan) =
        parsed.function.as_ref().ok_or_else(|| Problem { span: Span::new(0, 0), message: "no function".to_owned() })?;
    let mut args = Vec::new();
    for (i, f) in parsed.fields.iter().enumerate() {
        match (flavor, btf.get(i).and_then(Option::as_ref)) {
            // A bare parameter is not memory: the kernel takes `:string` only on a member
            // (`file->…->name`); `filename:string` is "String accepts only memory
            // argument". Such fields keep the `+0($argN)` form.
            (Flavor::Fprobe, Some(b))
                if btf_path(&b.expr)
                    && f.array.is_none()
                    && !(f.atom == Atom::String && !b.expr.contains("->") && !b.expr.contains('.')) =>
            {
                let ty = match f.atom {
                    Atom::String => "string",
                    Atom::Symbol => "symbol",
                    _ => kprobe_type(f, target),
                };
                args.push(format!("{}={}:{ty}", f.name, b.expr));
            }
            _ => args.push(fetch_arg(f, target, bases)?),
        }
    }
    let prefix = match flavor {
        Flavor::Kprobe => "p",
        Flavor::Fprobe => "f",
    };
    let mut line = format!("{prefix}:fevlint/{event} {function}");
    for a in &args {
        line.push(' ');
        line.push_str(a);
    }
    match fevlint_mainline::check_line_with(dialect, env, &line) {
        Ok(_) => Ok(Emitted { line, event: event.to_owned() }),
        Err(r) => Err(Problem {
            span: *fspan,
            message: match r.logged() {
                Some(e) => format!("the kernel would reject `{line}`: {}", e.first().render().trim_end()),
                None => format!("the kernel would reject `{line}` ({r:?})"),
            },
        }),
    }
}

/// What the checker resolved a field to, for BTF names in `f:` lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfField {
    /// `file->f_path.dentry->d_name.name`: the value recorded (a string's pointer).
    pub expr: String,
}

/// The BTF expression of each field, from the checker's resolution: only values and
/// strings followed to the end without a problem (an address, an array copy or anything
/// the T rules question keeps its offset form).
pub fn btf_fields(resolution: &crate::resolve::Resolution) -> Vec<Option<BtfField>> {
    use crate::resolve::MeaningKind;
    resolution
        .fields
        .iter()
        .map(|f| {
            let m = f.recorded.as_ref()?;
            let ok = f.problems.is_empty() && matches!(m.kind, MeaningKind::Value | MeaningKind::String);
            ok.then(|| BtfField { expr: m.expr.clone() })
        })
        .collect()
}

/// A valid event name for `function`: the kernel's `is_good_name()` (a letter or `_`, then
/// letters, digits, `_`), made unique by `suffix` when the script traces the same
/// function twice.
pub fn event_name(function: &str, suffix: Option<usize>) -> String {
    let mut name: String =
        function.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        name.insert(0, '_');
    }
    if let Some(n) = suffix {
        name.push_str(&format!("_{n}"));
    }
    name
}
