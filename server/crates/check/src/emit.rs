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
    registers: &'static [&'static str],
    problem: Option<Problem>,
}

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
        let reg = self.registers.get(slot as usize).ok_or_else(|| Problem {
            span: Span::new(0, 0),
            message: format!("slot {slot} has no register on this architecture"),
        })?;
        Ok(Fetch { base: format!("%{reg}"), pending: 0, absolute: false })
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

fn fetch_arg(field: &Field, target: Target, registers: &'static [&'static str]) -> Result<String, Problem> {
    let mut w = KprobeWalk { registers, problem: None };
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

/// Translates one accepted definition for `target`, then checks the line with the
/// kernel's parser (fevlint-mainline) for `dialect`. `event` names the kprobe event.
pub fn emit(parsed: &Parsed, target: Target, dialect: &Dialect, event: &str) -> Result<Emitted, Problem> {
    let registers: &'static [&'static str] =
        if target.ptr_size == 4 { &["ax", "dx", "cx"] } else { &["di", "si", "dx", "cx", "r8", "r9"] };
    let (function, fspan) =
        parsed.function.as_ref().ok_or_else(|| Problem { span: Span::new(0, 0), message: "no function".to_owned() })?;
    let mut args = Vec::new();
    for f in &parsed.fields {
        args.push(fetch_arg(f, target, registers)?);
    }
    let mut line = format!("p:fevlint/{event} {function}");
    for a in &args {
        line.push(' ');
        line.push_str(a);
    }
    match fevlint_mainline::check_line(dialect, &line) {
        Ok(_) => Ok(Emitted { line, event: event.to_owned() }),
        Err(r) => Err(Problem {
            span: *fspan,
            message: match r.logged() {
                Some(e) => format!("the kernel would reject `{line}`: {}", e.render().trim_end()),
                None => format!("the kernel would reject `{line}` ({r:?})"),
            },
        }),
    }
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
