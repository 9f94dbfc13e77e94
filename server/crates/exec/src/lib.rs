//! The shared executor: what a function-event definition records at a function's entry,
//! computed from memory and registers instead of a live kernel (the dry run).
//!
//! It knows the syntax (a [`Parsed`] definition, walked with the same
//! [`fevlint_syntax::walk::walk`] the checker walks kernel types with, so the two cannot
//! disagree about what a field reads) and asks for memory through
//! [`fevlint_memory::Memory`] and for symbol names through [`Symbols`]. It never does IO
//! itself and knows nothing of rules, kernels' types, rendering or LSP.
//!
//! Semantics (`function-events.md` §4–§5): pair folding, `[n]` scaled by the final field
//! type, pointer-sized intermediate loads, a trailing `+N` added to the value read,
//! `string` up to 512 bytes, arrays `N × size` zero-filled on a fault, `char[N]` printed
//! as a string, and any faulting read recorded as 0.

use fevlint_memory::{Fault, Memory, VirtAddr};
use fevlint_syntax::machine::{AbsValue, Atom, Field, Parsed, Source, Target};
use fevlint_syntax::walk::{self, Recorded, Walk};
use fevlint_syntax::Span;
use serde::Serialize;

/// `string` fields copy at most this many bytes (the reference's limit).
pub const MAX_STRING: usize = 512;
/// Array fields larger than this are truncated (the kernel's ring-buffer events are at
/// most a page; a script's `N` is never allowed to size an allocation by itself).
pub const MAX_ARRAY_BYTES: u64 = 64 * 1024;

/// Names for addresses: `%pS`/`%ps` and `$symbol` fields.
pub trait Symbols {
    /// The symbol containing `addr`: its name, `addr - start`, and its size (the distance
    /// to the next symbol, as kallsyms computes it).
    fn symbolize(&self, addr: u64) -> Option<SymbolAt>;
    /// The (run-time, relocated) address of a symbol.
    fn address(&self, name: &str) -> Option<u64>;
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SymbolAt {
    pub name: String,
    pub offset: u64,
    pub size: u64,
}

/// The machine state at the traced function's entry.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Slot values, in order (`arch_get_func_args()`: x86_64 rdi rsi rdx rcx r8 r9,
    /// x86_32 eax edx ecx).
    pub slots: Vec<u64>,
    /// The traced function's address (`ip` at its entry), for `%ps`.
    pub function_address: Option<u64>,
    /// The caller's return address (`*(sp)` at the entry), for `caller->`.
    pub return_address: Option<u64>,
}

/// The register names that hold the slots, in slot order.
pub fn slot_registers(target: Target) -> &'static [&'static str] {
    if target.ptr_size == 4 {
        &["ax", "dx", "cx"]
    } else {
        &["di", "si", "dx", "cx", "r8", "r9"]
    }
}

/// One read the walk made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Read {
    pub addr: u64,
    pub size: u32,
    /// The bytes read, little-endian as in memory; empty when the read faulted.
    pub bytes: Vec<u8>,
    /// Why the read failed (`not in the dump`, `unmapped`, …), if it did.
    pub fault: Option<String>,
}

/// What one field recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Value {
    /// A scalar, truncated to the field's size (sign-extended for signed types).
    Scalar { raw: u64 },
    /// An array field's bytes (zero-filled on a fault).
    Array { bytes: Vec<u8> },
    /// A `string` field's bytes, without the NUL.
    String { bytes: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldValue {
    pub name: String,
    /// The kernel's type string (`unsigned int`, `x8[6]`, `string`).
    #[serde(rename = "type")]
    pub type_string: String,
    pub slot: Option<u32>,
    pub value: Value,
    /// The value as the trace line prints it.
    pub printed: String,
    /// Every memory read, in order.
    pub reads: Vec<Read>,
    /// Why the field recorded 0 (or zero bytes), when it did because of a fault.
    pub zero_because: Option<String>,
}

/// One definition evaluated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    pub function: String,
    pub caller: String,
    pub fields: Vec<FieldValue>,
}

impl Event {
    /// The event part of the trace line: `caller->function(name=value, …)`.
    pub fn trace_line(&self) -> String {
        let args: Vec<String> = self.fields.iter().map(|f| format!("{}={}", f.name, f.printed)).collect();
        format!("{}->{}({})", self.caller, self.function, args.join(", "))
    }
}

/// Evaluates an accepted definition.
pub fn evaluate(parsed: &Parsed, target: Target, frame: &Frame, mem: &dyn Memory, syms: &dyn Symbols) -> Event {
    let function = parsed.function.as_ref().map(|(f, _)| f.clone()).unwrap_or_default();
    let caller = match frame.return_address {
        Some(ra) => syms.symbolize(ra).map_or_else(|| format!("0x{ra:x}"), |s| s.name),
        None => "?".to_string(),
    };
    let fields = parsed.fields.iter().map(|f| evaluate_field(f, target, frame, mem, syms)).collect();
    Event { function, caller, fields }
}

struct MemWalk<'a> {
    target: Target,
    frame: &'a Frame,
    mem: &'a dyn Memory,
    syms: &'a dyn Symbols,
    reads: Vec<Read>,
}

/// A walk stops at the first fault (or an unknown `$symbol`): the field records 0.
#[derive(Debug)]
enum Stop {
    Fault(Fault),
    MissingSlot(u32),
    UnknownSymbol(String),
}

impl Stop {
    fn describe(&self) -> String {
        match self {
            Stop::Fault(f) if f.addr.0 < 4096 => format!("read at 0x{:x}: NULL pointer ({})", f.addr, f.kind),
            Stop::Fault(f) => format!("read at 0x{:x}: {}", f.addr, f.kind),
            Stop::MissingSlot(s) => format!("no value for slot {s}"),
            Stop::UnknownSymbol(s) => format!("no symbol `{s}`"),
        }
    }
}

impl MemWalk<'_> {
    fn read(&mut self, addr: u64, size: u32) -> Result<u64, Stop> {
        let mut buf = [0u8; 8];
        let n = (size as usize).min(8);
        match self.mem.read(VirtAddr(addr), &mut buf[..n]) {
            Ok(()) => {
                self.reads.push(Read { addr, size, bytes: buf[..n].to_vec(), fault: None });
                Ok(u64::from_le_bytes(buf))
            }
            Err(f) => {
                self.reads.push(Read { addr, size, bytes: Vec::new(), fault: Some(f.kind.to_string()) });
                Err(Stop::Fault(f))
            }
        }
    }

    fn mask(&self, v: u64) -> u64 {
        if self.target.ptr_size == 4 {
            v & 0xffff_ffff
        } else {
            v
        }
    }
}

impl Walk for MemWalk<'_> {
    type Value = u64;
    type Error = Stop;

    fn param(&mut self, slot: u32) -> Result<u64, Stop> {
        self.frame.slots.get(slot as usize).copied().ok_or(Stop::MissingSlot(slot))
    }

    fn absolute(&mut self, value: &AbsValue, size: u32) -> Result<u64, Stop> {
        let addr = match value {
            AbsValue::Address(a) => *a,
            AbsValue::Symbol(s) => self.syms.address(s).ok_or_else(|| Stop::UnknownSymbol(s.clone()))?,
        };
        if size == 0 {
            Ok(addr)
        } else {
            self.read(addr, size)
        }
    }

    fn add(&mut self, value: u64, bytes: u64, _span: Span) -> Result<u64, Stop> {
        Ok(self.mask(value.wrapping_add(bytes)))
    }

    fn load_pointer(&mut self, addr: u64, _span: Span) -> Result<u64, Stop> {
        let size = self.target.ptr_size;
        self.read(addr, size)
    }

    fn load_value(&mut self, addr: u64, size: u32, _span: Span) -> Result<u64, Stop> {
        self.read(addr, size)
    }
}

fn evaluate_field(field: &Field, target: Target, frame: &Frame, mem: &dyn Memory, syms: &dyn Symbols) -> FieldValue {
    let mut w = MemWalk { target, frame, mem, syms, reads: Vec::new() };
    let elem = field.elem_size(target);
    let walked = walk::walk(field, target, &mut w);
    let mut zero_because = None;
    let value = match walked {
        Ok(Recorded::Value(v)) => Value::Scalar { raw: truncate(v, elem, field.atom.signed() && !field.unsigned) },
        Ok(Recorded::CopyFrom { addr, bytes }) => {
            let len = bytes.min(MAX_ARRAY_BYTES) as usize;
            let mut buf = vec![0u8; len];
            match mem.read(VirtAddr(addr), &mut buf) {
                Ok(()) => w.reads.push(Read { addr, size: len as u32, bytes: buf.clone(), fault: None }),
                Err(f) => {
                    // The kernel zero-fills the whole array when the copy faults.
                    buf.iter_mut().for_each(|b| *b = 0);
                    w.reads.push(Read { addr, size: len as u32, bytes: Vec::new(), fault: Some(f.kind.to_string()) });
                    zero_because = Some(Stop::Fault(f).describe());
                }
            }
            Value::Array { bytes: buf }
        }
        Ok(Recorded::StringFrom(addr)) => {
            let (bytes, fault) = read_string(mem, addr);
            w.reads.push(Read {
                addr,
                size: bytes.len() as u32,
                bytes: bytes.clone(),
                fault: fault.map(|f| f.kind.to_string()),
            });
            if let Some(f) = fault {
                zero_because = Some(Stop::Fault(f).describe());
            }
            Value::String { bytes }
        }
        Err(stop) => {
            zero_because = Some(stop.describe());
            match (&field.array, field.atom) {
                (Some((n, _)), _) => {
                    Value::Array { bytes: vec![0; n.saturating_mul(u64::from(elem)).min(MAX_ARRAY_BYTES) as usize] }
                }
                (None, Atom::String) => Value::String { bytes: Vec::new() },
                (None, _) => Value::Scalar { raw: 0 },
            }
        }
    };
    let printed = print_value(field, target, &value, syms);
    FieldValue {
        name: field.name.clone(),
        type_string: field.type_string(),
        slot: field.slot(),
        value,
        printed,
        reads: w.reads,
        zero_because,
    }
}

/// A NUL-terminated string of at most [`MAX_STRING`] bytes (the NUL included), read a
/// page piece at a time so a string ending just before an unreadable page still reads.
fn read_string(mem: &dyn Memory, addr: u64) -> (Vec<u8>, Option<Fault>) {
    let mut out = Vec::new();
    let mut at = VirtAddr(addr);
    while out.len() < MAX_STRING - 1 {
        let to_page_end = (4096 - at.page_offset()) as usize;
        let want = to_page_end.min(MAX_STRING - 1 - out.len());
        let mut buf = vec![0u8; want];
        if mem.read(at, &mut buf).is_err() {
            // The kernel copies byte by byte up to the NUL: a string that ends before
            // an unreadable byte (or a section's end) still reads.
            for i in 0..want as u64 {
                let mut b = [0u8; 1];
                if let Err(f) = mem.read(at.wrapping_add(i), &mut b) {
                    return (out, Some(f));
                }
                if b[0] == 0 {
                    return (out, None);
                }
                out.push(b[0]);
            }
            at = at.wrapping_add(want as u64);
            continue;
        }
        if let Some(nul) = buf.iter().position(|&b| b == 0) {
            out.extend_from_slice(&buf[..nul]);
            return (out, None);
        }
        out.extend_from_slice(&buf);
        at = at.wrapping_add(want as u64);
    }
    (out, None)
}

/// Truncates a loaded value to `size` bytes, sign-extending when `signed`.
fn truncate(v: u64, size: u32, signed: bool) -> u64 {
    if size >= 8 {
        return v;
    }
    let bits = size * 8;
    let masked = v & ((1u64 << bits) - 1);
    if signed && masked >> (bits - 1) & 1 == 1 {
        masked | !((1u64 << bits) - 1)
    } else {
        masked
    }
}

/// The printk conversion of one element (`make_fmt()`): 8-byte types get `ll`, a type
/// string starting with `x` prints hex, else signedness picks `d`/`u`; `char` is `%c`,
/// `symbol` `%pS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Conv {
    Signed,
    Unsigned,
    Hex,
    Char,
    Symbol,
}

fn conversion(field: &Field) -> Conv {
    match field.atom {
        Atom::Symbol => Conv::Symbol,
        Atom::Char if !field.unsigned => Conv::Char,
        _ if field.unsigned => Conv::Unsigned,
        Atom::X8 | Atom::X16 | Atom::X32 | Atom::X64 => Conv::Hex,
        a if a.signed() => Conv::Signed,
        _ => Conv::Unsigned,
    }
}

fn print_scalar(conv: Conv, raw: u64, size: u32, target: Target, syms: &dyn Symbols) -> String {
    let masked = truncate(raw, size, false);
    match conv {
        Conv::Signed => (truncate(raw, size, true) as i64).to_string(),
        Conv::Unsigned => masked.to_string(),
        Conv::Hex => format!("{masked:x}"),
        Conv::Char => char::from(masked as u8).to_string(),
        Conv::Symbol => print_symbol(masked, target, syms),
    }
}

/// `%pS`: `func+0x10/0x40`; NULL is `(null)` right-aligned in the pointer's width; an
/// address in no symbol prints as a hex pointer.
pub fn print_symbol(addr: u64, target: Target, syms: &dyn Symbols) -> String {
    if addr == 0 {
        let width = 2 * target.ptr_size as usize;
        return format!("{:>width$}", "(null)");
    }
    match syms.symbolize(addr) {
        Some(s) => format!("{}+0x{:x}/0x{:x}", s.name, s.offset, s.size),
        None => format!("0x{addr:x}"),
    }
}

fn print_value(field: &Field, target: Target, value: &Value, syms: &dyn Symbols) -> String {
    let elem = field.elem_size(target);
    match value {
        Value::Scalar { raw } => print_scalar(conversion(field), *raw, elem, target, syms),
        Value::String { bytes } => String::from_utf8_lossy(bytes).into_owned(),
        Value::Array { bytes } if field.atom == Atom::Char => {
            // `char[N]` is a static string: `%s` up to the first NUL.
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        }
        Value::Array { bytes } => {
            let conv = conversion(field);
            let parts: Vec<String> = bytes
                .chunks(elem.max(1) as usize)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    print_scalar(conv, u64::from_le_bytes(b), elem, target, syms)
                })
                .collect();
            format!("{{{}}}", parts.join(":"))
        }
    }
}

/// The event's `format` file, as the function-event kernel lays the record out: the
/// common header, `__parent_ip` (the traced function) and `__ip` (the caller), then each
/// field at `ALIGN(offset, sizeof(T))`.
pub fn format_file(parsed: &Parsed, target: Target) -> String {
    let p = target.ptr_size;
    let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
    let mut out = format!("name: {function}\nformat:\n");
    out.push_str("\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n");
    out.push_str("\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n");
    out.push_str("\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n");
    out.push_str("\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n");
    let header = 8u64;
    out.push_str(&format!("\tfield:unsigned long __parent_ip;\toffset:{header};\tsize:{p};\tsigned:0;\n"));
    out.push_str(&format!("\tfield:unsigned long __ip;\toffset:{};\tsize:{p};\tsigned:0;\n", header + u64::from(p)));
    let mut offset = header + 2 * u64::from(p);
    let mut fmts = Vec::new();
    let mut args = Vec::new();
    for f in &parsed.fields {
        let elem = u64::from(f.elem_size(target));
        offset = offset.div_ceil(elem.max(1)) * elem.max(1);
        let (ty, size) = match (f.atom, f.array) {
            (Atom::String, _) => ("__data_loc char[]".to_string(), 4),
            (_, Some((n, _))) => (f.type_string(), elem.saturating_mul(n)),
            _ => (f.type_string(), elem),
        };
        let signed = u8::from(f.atom.signed() && !f.unsigned && f.atom != Atom::String);
        out.push_str(&format!("\tfield:{ty} {};\toffset:{offset};\tsize:{size};\tsigned:{signed};\n", f.name));
        offset = offset.saturating_add(size);
        let one = match conversion(f) {
            Conv::Signed if elem == 8 => "%lld",
            Conv::Signed => "%d",
            Conv::Unsigned if elem == 8 => "%llu",
            Conv::Unsigned => "%u",
            Conv::Hex if elem == 8 => "%llx",
            Conv::Hex => "%x",
            Conv::Char => "%c",
            Conv::Symbol => "%pS",
        };
        match (f.atom, f.array) {
            (Atom::String, _) => {
                fmts.push(format!("{}=%s", f.name));
                args.push(format!("__get_str({})", f.name));
            }
            (Atom::Char, Some(_)) => {
                fmts.push(format!("{}=%s", f.name));
                args.push(format!("REC->{}", f.name));
            }
            (_, Some((n, _))) => {
                let n = n.min(MAX_ARRAY_BYTES);
                fmts.push(format!("{}={{{}}}", f.name, vec![one; n as usize].join(":")));
                args.extend((0..n).map(|i| format!("REC->{}[{i}]", f.name)));
            }
            _ => {
                fmts.push(format!("{}={one}", f.name));
                args.push(format!("REC->{}", f.name));
            }
        }
    }
    let mut all = vec!["REC->__ip".to_string(), "REC->__parent_ip".to_string()];
    all.extend(args);
    out.push_str(&format!("\nprint fmt: \"%pS->%pS({})\", {}\n", fmts.join(", "), all.join(", ")));
    out
}

/// Whether the definition reads a slot at all (absolute-address fields do not).
pub fn reads_slots(parsed: &Parsed) -> bool {
    parsed.fields.iter().any(|f| matches!(f.source, Source::Param { .. }))
}

/// How a `kprobe_events`/`dynamic_events` event prints one field whose type the line
/// gives as `ty` (`x32`, `u64`, `s16`, `char`, `string`, `symbol`, an array `u8[4]`):
/// the print functions of `trace_probe.c` (`0x%x`, `%u`, `%d`, `'%c'`, `"%s"` or
/// `(fault)`, `%pS` with NULL as `0x0`, arrays as `{a,b}`). `value` is what the walk read.
pub fn kprobe_value(ty: &str, value: &FieldValue, syms: &dyn Symbols) -> String {
    let (base, count) = match ty.split_once('[') {
        Some((b, n)) => (b, n.trim_end_matches(']').parse::<usize>().ok()),
        None => (ty, None),
    };
    let bits: u32 = base.trim_start_matches(['x', 'u', 's']).parse().unwrap_or(64);
    let size = match base {
        "char" => 1,
        "symbol" => 8,
        _ => (bits / 8).max(1),
    };
    let one = |raw: u64| -> String {
        let masked = truncate(raw, size, false);
        match base {
            "symbol" if masked == 0 => "0x0".to_owned(),
            "symbol" => match syms.symbolize(masked) {
                Some(s) => format!("{}+0x{:x}/0x{:x}", s.name, s.offset, s.size),
                None => format!("0x{masked:x}"),
            },
            "char" => format!("'{}'", char::from(masked as u8)),
            b if b.starts_with('x') => format!("0x{masked:x}"),
            b if b.starts_with('s') => (truncate(raw, size, true) as i64).to_string(),
            _ => masked.to_string(),
        }
    };
    match (&value.value, count) {
        (Value::String { bytes }, _) if value.zero_because.is_some() && bytes.is_empty() => "(fault)".to_owned(),
        (Value::String { bytes }, _) => format!("\"{}\"", String::from_utf8_lossy(bytes)),
        (Value::Array { bytes }, _) if base == "string" => {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            format!("\"{}\"", String::from_utf8_lossy(&bytes[..end]))
        }
        (Value::Array { bytes }, _) => {
            let parts: Vec<String> = bytes
                .chunks(size as usize)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b[..c.len()].copy_from_slice(c);
                    one(u64::from_le_bytes(b))
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        (Value::Scalar { raw }, _) => one(*raw),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_sign_extends_signed_types_only() {
        assert_eq!(truncate(0xffff_ff9c, 4, true) as i64, -100);
        assert_eq!(truncate(0xffff_ff9c, 4, false), 0xffff_ff9c);
        assert_eq!(truncate(0x1_0000_0001, 4, false), 1);
    }
}
