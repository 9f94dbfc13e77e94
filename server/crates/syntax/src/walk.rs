//! How a field's value is computed (`__get_arg()` of the reference parser), written once
//! and generic over what it walks: kernel types in the checker, memory in the executor.
//! So the two can never disagree about what a field reads.
//!
//! For a parameter field with raw value `p`, redirects fold into pairs (`+a+b[n]`):
//!
//! ```text
//! addr = p
//! for each pair i:
//!     addr += offset_i
//!     if pair i has no [n]: result = addr (no read); stop
//!     addr += n_i * size(field type)
//!     if pair i+1 also has [n]: addr = *(unsigned long *)addr
//!     else: value = *(field-sized *)addr   (pointer-sized for arrays and strings)
//!           value += offset_{i+1}          (a trailing +N after the last [ ])
//!           result = value; stop
//! no redirects: result = p
//! ```
//!
//! Arrays then copy `N × size` bytes from the result, strings a NUL-terminated string.

use super::machine::{fold_redirects, AbsValue, Atom, Field, RedirectPair, Source, Target};
use super::Span;

/// One walk's operations. `span` is the redirect pair (or trailing offset) responsible.
pub trait Walk {
    type Value;
    type Error;
    /// The raw value of argument slot `slot`.
    fn param(&mut self, slot: u32) -> Result<Self::Value, Self::Error>;
    /// The value of an absolute-address field: `size` bytes read at the address.
    fn absolute(&mut self, value: &AbsValue, size: u32) -> Result<Self::Value, Self::Error>;
    /// `value + bytes`: address arithmetic, no memory access.
    fn add(&mut self, value: Self::Value, bytes: u64, span: Span) -> Result<Self::Value, Self::Error>;
    /// An intermediate dereference: a pointer-sized read at `addr`.
    fn load_pointer(&mut self, addr: Self::Value, span: Span) -> Result<Self::Value, Self::Error>;
    /// The final read: `size` bytes at `addr`.
    fn load_value(&mut self, addr: Self::Value, size: u32, span: Span) -> Result<Self::Value, Self::Error>;
}

/// What ends up in the event record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recorded<V> {
    /// A scalar: the value, truncated to the field's size.
    Value(V),
    /// An array field: `bytes` copied from the address.
    CopyFrom { addr: V, bytes: u64 },
    /// A `string` field: a NUL-terminated string (at most 512 bytes) from the address.
    StringFrom(V),
}

impl<V> Recorded<V> {
    pub fn value(&self) -> &V {
        match self {
            Recorded::Value(v) | Recorded::CopyFrom { addr: v, .. } | Recorded::StringFrom(v) => v,
        }
    }
}

/// Shape of a walk, without walking: useful for rules that only need the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// No redirect: the raw parameter.
    Raw,
    /// `p + N` with no read: records an address.
    AddressOnly,
    /// A read, then a trailing `+N` added to the value read.
    ReadPlus,
    /// A read.
    Read,
}

pub fn ending(pairs: &[RedirectPair]) -> Ending {
    match pairs {
        [] => Ending::Raw,
        [only] if only.index.is_none() => Ending::AddressOnly,
        [.., last] if last.index.is_none() => Ending::ReadPlus,
        _ => Ending::Read,
    }
}

/// Walks one field and returns what it records.
pub fn walk<W: Walk>(field: &Field, target: Target, w: &mut W) -> Result<Recorded<W::Value>, W::Error> {
    let elem = field.elem_size(target);
    let is_array = field.array.is_some();
    let is_string = field.atom == Atom::String;
    let result = match &field.source {
        Source::Absolute { value, .. } => {
            // `read_address(arg->index, arg->size)`; arrays and strings use the address.
            return Ok(if is_array || is_string {
                let v = w.absolute(value, 0)?;
                finish(field, elem, is_string, v)
            } else {
                Recorded::Value(w.absolute(value, elem)?)
            });
        }
        Source::Param { slot, redirects } => {
            let mut v = w.param(*slot)?;
            let pairs = fold_redirects(redirects);
            for (i, pair) in pairs.iter().enumerate() {
                let Some(n) = pair.index else {
                    // Only the last pair can lack an index: the result is an address.
                    v = w.add(v, pair.offset, pair.span)?;
                    break;
                };
                let bytes = pair.offset.wrapping_add(n.wrapping_mul(u64::from(elem)));
                v = w.add(v, bytes, pair.span)?;
                match pairs.get(i + 1) {
                    Some(next) if next.index.is_some() => v = w.load_pointer(v, pair.span)?,
                    next => {
                        let size = if is_array || is_string { target.ptr_size } else { elem };
                        v = w.load_value(v, size, pair.span)?;
                        if let Some(trailing) = next {
                            v = w.add(v, trailing.offset, trailing.span)?;
                        }
                        break;
                    }
                }
            }
            v
        }
    };
    Ok(finish(field, elem, is_string, result))
}

fn finish<V>(field: &Field, elem: u32, is_string: bool, v: V) -> Recorded<V> {
    match field.array {
        Some((n, _)) => Recorded::CopyFrom { addr: v, bytes: n.wrapping_mul(u64::from(elem)) },
        None if is_string => Recorded::StringFrom(v),
        None => Recorded::Value(v),
    }
}
