//! Where each parameter of a function arrives at its entry, under the kernel's ABI:
//! x86_64 SysV (integer class in `rdi rsi rdx rcx r8 r9`, small structs split into
//! eightbytes, larger ones in memory) and i386 with `-mregparm=3` (`eax edx ecx`, 64-bit
//! values in register pairs, nothing in registers for variadic functions).
//!
//! Function events read raw registers: slot k is register k of [`arg_registers`]. This
//! module says whether that register really holds parameter k.

use super::layout::strip;
use super::load::Arch;
use super::model::{ModelError, Prototype, Type, TypeRef, TypeSource};

/// The registers `arch_get_func_args()` copies into slots 0, 1, 2, ….
pub fn arg_registers(arch: Arch) -> &'static [&'static str] {
    match arch {
        Arch::X86_64 => &["rdi", "rsi", "rdx", "rcx", "r8", "r9"],
        Arch::X86_32 => &["eax", "edx", "ecx"],
    }
}

/// Where a parameter is at the function's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loc {
    /// Wholly in one general-purpose register.
    Reg(&'static str),
    /// Split over registers, low part first (64-bit values on i386, 9–16-byte structs
    /// on x86_64).
    Regs(Vec<&'static str>),
    /// On the stack, `offset` bytes into the argument area (0 is the first stack
    /// argument, just above the return address).
    Stack { offset: u64 },
    /// In an SSE register (floating point; the kernel rarely has any).
    Sse(u32),
    /// The type's size is unknown (incomplete type): cannot be placed.
    Unknown,
}

impl Loc {
    /// The first general-purpose register holding (part of) the value.
    pub fn first_register(&self) -> Option<&'static str> {
        match self {
            Loc::Reg(r) => Some(r),
            Loc::Regs(v) => v.first().copied(),
            _ => None,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Loc::Reg(r) => r.to_string(),
            Loc::Regs(v) => v.join(":"),
            Loc::Stack { offset } => format!("stack+{offset}"),
            Loc::Sse(n) => format!("xmm{n}"),
            Loc::Unknown => "unknown".to_owned(),
        }
    }
}

/// One parameter with its place and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLoc {
    pub index: usize,
    pub name: Option<String>,
    pub ty: TypeRef,
    pub size: Option<u64>,
    pub loc: Loc,
    /// Why it is not simply the next register, when it is not.
    pub why: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    Integer,
    Sse,
    /// Passed in memory regardless of registers left.
    Memory,
}

/// Places every parameter of `proto` on `arch`.
pub fn locate(arch: Arch, src: &dyn TypeSource, proto: &Prototype) -> Result<Vec<ParamLoc>, ModelError> {
    match arch {
        Arch::X86_64 => locate_x86_64(src, proto),
        Arch::X86_32 => locate_i386(src, proto),
    }
}

fn align_up(v: u64, a: u64) -> u64 {
    v.div_ceil(a) * a
}

fn locate_x86_64(src: &dyn TypeSource, proto: &Prototype) -> Result<Vec<ParamLoc>, ModelError> {
    let regs = arg_registers(Arch::X86_64);
    let mut next_gpr = 0usize;
    let mut next_sse = 0u32;
    let mut stack = 0u64;
    let mut out = Vec::with_capacity(proto.params.len());
    for (index, p) in proto.params.iter().enumerate() {
        let size = src.size_of(p.ty)?;
        let (_, t) = strip(src, p.ty)?;
        let mut why = None;
        let loc = match size {
            None => Loc::Unknown,
            Some(size) => {
                let classes = classify_x86_64(src, &t, size)?;
                let ints = classes.iter().filter(|c| **c == Class::Integer).count();
                let sses = classes.iter().filter(|c| **c == Class::Sse).count() as u32;
                let composite = matches!(t, Type::Struct(_) | Type::Union(_));
                if classes.contains(&Class::Memory) || classes.is_empty() {
                    if composite {
                        why = Some(format!("a {size}-byte struct passed by value goes on the stack"));
                    }
                    let at = align_up(stack, 8);
                    stack = at + align_up(size, 8);
                    Loc::Stack { offset: at }
                } else if next_gpr + ints > regs.len() || next_sse + sses > 8 {
                    why = Some("not enough registers left: passed on the stack".to_owned());
                    let at = align_up(stack, 8);
                    stack = at + align_up(size, 8);
                    Loc::Stack { offset: at }
                } else if ints == 1 && sses == 0 {
                    if composite {
                        why = Some(format!("a {size}-byte struct passed by value in one register"));
                    }
                    next_gpr += 1;
                    Loc::Reg(regs[next_gpr - 1])
                } else if ints == 0 && sses >= 1 {
                    next_sse += sses;
                    Loc::Sse(next_sse - sses)
                } else {
                    why = Some(format!("a {size}-byte value passed by value takes {ints} registers"));
                    let v = regs[next_gpr..next_gpr + ints].to_vec();
                    next_gpr += ints;
                    next_sse += sses;
                    Loc::Regs(v)
                }
            }
        };
        out.push(ParamLoc { index, name: p.name.clone(), ty: p.ty, size, loc, why });
    }
    Ok(out)
}

/// SysV classification of one argument into eightbyte classes.
fn classify_x86_64(src: &dyn TypeSource, t: &Type, size: u64) -> Result<Vec<Class>, ModelError> {
    Ok(match t {
        Type::Int { .. } | Type::Enum { .. } | Type::Pointer { .. } => {
            if size <= 8 {
                vec![Class::Integer]
            } else if size == 16 {
                vec![Class::Integer, Class::Integer]
            } else {
                vec![Class::Memory]
            }
        }
        Type::Float { .. } => {
            if size <= 8 {
                vec![Class::Sse]
            } else {
                vec![Class::Memory] // long double: x87 class, in memory
            }
        }
        Type::Struct(_) | Type::Union(_) | Type::Array { .. } => {
            if size > 16 || size == 0 {
                return Ok(vec![Class::Memory]);
            }
            let n = size.div_ceil(8) as usize;
            let mut classes = vec![None; n];
            scalars(src, t, 0, &mut |offset, is_float| {
                let i = (offset / 8) as usize;
                if let Some(c) = classes.get_mut(i) {
                    *c = Some(match (*c, is_float) {
                        (Some(Class::Integer), _) | (_, false) => Class::Integer,
                        _ => Class::Sse,
                    });
                }
            })?;
            classes.into_iter().map(|c| c.unwrap_or(Class::Sse)).collect()
        }
        _ => vec![Class::Memory],
    })
}

/// Calls `f(byte_offset, is_float)` for every scalar inside a composite.
fn scalars(src: &dyn TypeSource, t: &Type, base: u64, f: &mut dyn FnMut(u64, bool)) -> Result<(), ModelError> {
    match t {
        Type::Struct(c) | Type::Union(c) => {
            for m in c.members.iter() {
                let (_, mt) = strip(src, m.ty)?;
                scalars(src, &mt, base + m.bit_offset / 8, f)?;
            }
        }
        Type::Array { element, len } => {
            let (_, et) = strip(src, *element)?;
            let esize = src.size_of(*element)?.unwrap_or(0).max(1);
            for i in 0..(*len).min(16) {
                scalars(src, &et, base + i * esize, f)?;
            }
        }
        Type::Float { .. } => f(base, true),
        _ => f(base, false),
    }
    Ok(())
}

fn locate_i386(src: &dyn TypeSource, proto: &Prototype) -> Result<Vec<ParamLoc>, ModelError> {
    let regs = arg_registers(Arch::X86_32);
    // GCC's regparm: each argument takes `words` registers if that many are left;
    // otherwise it goes on the stack and the remaining registers are given up.
    let mut nregs = if proto.variadic { 0 } else { regs.len() };
    let mut regno = 0usize;
    let mut stack = 0u64;
    let mut out = Vec::with_capacity(proto.params.len());
    for (index, p) in proto.params.iter().enumerate() {
        let size = src.size_of(p.ty)?;
        let (_, t) = strip(src, p.ty)?;
        let mut why = None;
        let loc = match size {
            None => Loc::Unknown,
            Some(size) => {
                let words = size.div_ceil(4).max(1) as usize;
                let composite = matches!(t, Type::Struct(_) | Type::Union(_));
                let float = matches!(t, Type::Float { .. });
                let place = if composite || float {
                    why = Some(if composite {
                        format!("a {size}-byte struct passed by value goes on the stack")
                    } else {
                        "floating point goes on the stack".to_owned()
                    });
                    None
                } else if proto.variadic {
                    why = Some("a variadic function takes every argument on the stack".to_owned());
                    None
                } else if words <= nregs {
                    let v: Vec<&'static str> = regs[regno..regno + words].to_vec();
                    if words > 1 {
                        why = Some(format!("a {size}-byte value takes the register pair {}", v.join(":")));
                    }
                    Some(if words == 1 { Loc::Reg(v[0]) } else { Loc::Regs(v) })
                } else {
                    if nregs > 0 {
                        why = Some(format!("a {size}-byte value does not fit the {nregs} register(s) left"));
                    }
                    None
                };
                // Floats use no general registers; a struct on the stack still uses up
                // its words of registers (GCC's function_arg_advance_32) [inferred].
                if composite || (!float && !proto.variadic) {
                    nregs = nregs.saturating_sub(words);
                    regno = (regno + words).min(regs.len());
                    if nregs == 0 {
                        regno = regs.len();
                    }
                }
                place.unwrap_or_else(|| {
                    let at = stack;
                    stack += words as u64 * 4;
                    Loc::Stack { offset: at }
                })
            }
        };
        out.push(ParamLoc { index, name: p.name.clone(), ty: p.ty, size, loc, why });
    }
    Ok(out)
}
