//! Where each parameter of a function arrives at its entry, under the kernel's ABI:
//! x86_64 SysV (integer class in `rdi rsi rdx rcx r8 r9`, small structs split into
//! eightbytes, larger ones in memory) and i386 with `-mregparm=3` (`eax edx ecx`, 64-bit
//! values and structs up to 12 bytes in consecutive registers, nothing in registers for
//! variadic functions).
//!
//! Function events read raw registers: slot k is register k of [`arg_registers`]. This
//! module says which parameter (or which part of one) the ABI put in that register
//! ([`slot_holds`]): the checker, hover, inlay hints, `fevlint kernel fn`, the lock's
//! meanings and drift all map slots to parameters through it.
//!
//! The kernel is built without SSE (`-mno-sse -mno-mmx -mno-80387`): nothing is passed in
//! vector registers. An eightbyte with no member (BTF records a transparent union such as
//! 6.12's `release_pages_arg` with no members) is INTEGER, like the pointer a
//! transparent union is passed as.

use crate::layout::strip_shared;
use crate::model::{ModelError, Prototype, Type, TypeRef, TypeSource};
use crate::Arch;

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
    let mut stack = 0u64;
    let mut out = Vec::with_capacity(proto.params.len());
    for (index, p) in proto.params.iter().enumerate() {
        let size = src.size_of(p.ty)?;
        let (_, t) = strip_shared(src, p.ty)?;
        let mut why = None;
        let loc = match size {
            None => Loc::Unknown,
            Some(size) => {
                let composite = matches!(*t, Type::Struct(_) | Type::Union(_));
                let kind = if matches!(*t, Type::Union(_)) { "union" } else { "struct" };
                let mut classes = classify_x86_64(&t, size)?;
                // A field off its natural alignment (a packed struct) sends the whole
                // argument to memory (GCC's classify_argument; checked with GCC 12.2:
                // `struct __packed {char a; long b;}` by value is on the stack).
                if composite && misaligned(src, &t, 0, 0)? {
                    classes = vec![Class::Memory];
                    why = Some(format!(
                        "{} {size}-byte {kind} with a misaligned (packed) member goes on the stack",
                        article(size)
                    ));
                }
                let ints = classes.iter().filter(|c| **c == Class::Integer).count();
                if classes.contains(&Class::Memory) || classes.is_empty() {
                    if composite && why.is_none() {
                        why = Some(format!("{} {size}-byte {kind} passed by value goes on the stack", article(size)));
                    }
                    let at = align_up(stack, 8);
                    stack = at + align_up(size, 8);
                    Loc::Stack { offset: at }
                } else if next_gpr + ints > regs.len() {
                    why = Some("not enough registers left: passed on the stack".to_owned());
                    let at = align_up(stack, 8);
                    stack = at + align_up(size, 8);
                    Loc::Stack { offset: at }
                } else if ints == 1 {
                    if composite {
                        why = Some(if memberless(&t) {
                            format!(
                                "{} {size}-byte {kind} by value, with no members in the type information \
                                 (a transparent union): passed like its first member, in one register",
                                article(size)
                            )
                        } else {
                            format!("{} {size}-byte {kind} passed by value in one register", article(size))
                        });
                    }
                    next_gpr += 1;
                    Loc::Reg(regs[next_gpr - 1])
                } else {
                    why = Some(format!("{} {size}-byte value passed by value takes {ints} registers", article(size)));
                    let v = regs[next_gpr..next_gpr + ints].to_vec();
                    next_gpr += ints;
                    Loc::Regs(v)
                }
            }
        };
        out.push(ParamLoc { index, name: p.name.clone(), ty: p.ty, size, loc, why });
    }
    Ok(out)
}

/// `a` or `an` before a number of bytes (`an 8-byte`, `an 11-byte`, `a 16-byte`).
fn article(size: u64) -> &'static str {
    let digits = size.to_string();
    if digits.starts_with('8') || size == 11 || size == 18 {
        "an"
    } else {
        "a"
    }
}

/// Whether a member of composite `t` (at `base` bits) sits off its natural alignment
/// (bitfields excepted).
fn misaligned(src: &dyn TypeSource, t: &Type, base: u64, depth: u32) -> Result<bool, ModelError> {
    let (Type::Struct(c) | Type::Union(c)) = t else { return Ok(false) };
    if depth > 8 {
        return Ok(false);
    }
    for m in c.members.iter() {
        if m.bitfield_size != 0 {
            continue;
        }
        let at = base + m.bit_offset;
        let (_, mt) = strip_shared(src, m.ty)?;
        let align = alignment(src, &mt, m.ty, 0)?;
        if align > 0 && !at.is_multiple_of(align * 8) {
            return Ok(true);
        }
        if misaligned(src, &mt, at, depth + 1)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Natural alignment in bytes (scalars: their size; arrays: the element's; composites:
/// their largest member's), as the x86_64 psABI has it.
fn alignment(src: &dyn TypeSource, t: &Type, ty: TypeRef, depth: u32) -> Result<u64, ModelError> {
    if depth > 8 {
        return Ok(1);
    }
    Ok(match t {
        Type::Struct(c) | Type::Union(c) => {
            let mut a = 1;
            for m in c.members.iter() {
                let (_, mt) = strip_shared(src, m.ty)?;
                a = a.max(alignment(src, &mt, m.ty, depth + 1)?);
            }
            a
        }
        Type::Array { element, .. } => {
            let (_, et) = strip_shared(src, *element)?;
            alignment(src, &et, *element, depth + 1)?
        }
        _ => src.size_of(ty)?.unwrap_or(1).clamp(1, 16),
    })
}

/// A struct or union the type information records without members (BTF drops the
/// members of a `__transparent_union__` such as 6.12's `release_pages_arg`).
fn memberless(t: &Type) -> bool {
    matches!(t, Type::Struct(c) | Type::Union(c) if c.members.is_empty())
}

/// SysV classification of one argument into eightbyte classes, for a kernel built
/// without SSE: every eightbyte that is in registers is INTEGER.
fn classify_x86_64(t: &Type, size: u64) -> Result<Vec<Class>, ModelError> {
    Ok(match t {
        Type::Int { .. } | Type::Enum { .. } | Type::Pointer { .. } | Type::Float { .. } => {
            if size <= 8 {
                vec![Class::Integer]
            } else if size == 16 {
                vec![Class::Integer, Class::Integer]
            } else {
                vec![Class::Memory]
            }
        }
        Type::Struct(_) | Type::Union(_) | Type::Array { .. } => {
            if size > 16 || size == 0 {
                return Ok(vec![Class::Memory]);
            }
            // No SSE: every eightbyte, with or without members, is INTEGER.
            vec![Class::Integer; size.div_ceil(8) as usize]
        }
        _ => vec![Class::Memory],
    })
}

fn locate_i386(src: &dyn TypeSource, proto: &Prototype) -> Result<Vec<ParamLoc>, ModelError> {
    let regs = arg_registers(Arch::X86_32);
    // GCC's regparm: each argument (scalar or struct) takes `words` registers if that
    // many are left; otherwise it goes on the stack and the remaining registers are given up.
    let mut nregs = if proto.variadic { 0 } else { regs.len() };
    let mut regno = 0usize;
    let mut stack = 0u64;
    let mut out = Vec::with_capacity(proto.params.len());
    for (index, p) in proto.params.iter().enumerate() {
        let size = src.size_of(p.ty)?;
        let (_, t) = strip_shared(src, p.ty)?;
        let mut why = None;
        let loc = match size {
            None => Loc::Unknown,
            Some(size) => {
                let words = size.div_ceil(4).max(1) as usize;
                let composite = matches!(*t, Type::Struct(_) | Type::Union(_));
                let float = matches!(*t, Type::Float { .. });
                // GCC's function_arg_32: scalars and aggregates alike (BLKmode falls
                // through to the integer modes) take `words` registers when that many are
                // left; floats never do. Checked with `gcc -m32 -mregparm=3` (12.2):
                // `f(struct {int a,b;} s, int x)` takes s in eax:edx, x in ecx; a 12-byte
                // struct takes eax:edx:ecx; a 16-byte one goes on the stack and uses up
                // the registers (`x` after it is on the stack too).
                let place = if float {
                    why = Some("floating point goes on the stack".to_owned());
                    None
                } else if proto.variadic {
                    why = Some("a variadic function takes every argument on the stack".to_owned());
                    None
                } else if words <= nregs {
                    let v: Vec<&'static str> = regs[regno..regno + words].to_vec();
                    if words > 1 {
                        why = Some(if composite {
                            format!(
                                "{} {size}-byte struct passed by value takes the registers {}",
                                article(size),
                                v.join(":")
                            )
                        } else {
                            format!("{} {size}-byte value takes the register pair {}", article(size), v.join(":"))
                        });
                    } else if composite {
                        why = Some(format!("{} {size}-byte struct passed by value in one register", article(size)));
                    }
                    Some(if words == 1 { Loc::Reg(v[0]) } else { Loc::Regs(v) })
                } else {
                    why = Some(if composite {
                        format!("{} {size}-byte struct passed by value goes on the stack", article(size))
                    } else if nregs > 0 {
                        format!("{} {size}-byte value does not fit the {nregs} register(s) left", article(size))
                    } else {
                        "no argument registers left: passed on the stack".to_owned()
                    });
                    None
                };
                // Whatever does not fit still uses up its words of registers
                // (function_arg_advance_32): nothing after it goes in a register.
                if !float && !proto.variadic {
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

/// What one argument register holds at the function's entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// Index of the parameter in the prototype (and in [`locate`]'s result).
    pub param: usize,
    /// Which of the parameter's registers this is (0 for the low part).
    pub part: usize,
    /// How many registers the parameter takes (1 for a value wholly in one).
    pub parts: usize,
    /// The bytes of the parameter this register holds, `start..end`.
    pub start: u64,
    pub end: u64,
}

impl Held {
    /// `a` for a whole parameter, `a (bytes 8-15)` for a part.
    pub fn describe(&self, name: &str) -> String {
        if self.parts == 1 {
            name.to_owned()
        } else {
            format!("{name} (bytes {}-{})", self.start, self.end.saturating_sub(1))
        }
    }
}

/// The width of one argument register.
pub fn register_size(arch: Arch) -> u64 {
    match arch {
        Arch::X86_64 => 8,
        Arch::X86_32 => 4,
    }
}

/// What each slot's register holds, one entry per slot of [`arg_registers`]: the
/// parameter (or the part of a by-value struct or register pair) the ABI put there, or
/// `None` when no parameter is in that register.
pub fn slot_holds(arch: Arch, locs: &[ParamLoc]) -> Vec<Option<Held>> {
    let regs = arg_registers(arch);
    let width = register_size(arch);
    let mut out = vec![None; regs.len()];
    for (param, p) in locs.iter().enumerate() {
        let list: &[&'static str] = match &p.loc {
            Loc::Reg(r) => std::slice::from_ref(r),
            Loc::Regs(v) => v,
            _ => continue,
        };
        let size = p.size.unwrap_or(width * list.len() as u64);
        for (part, r) in list.iter().enumerate() {
            if let Some(slot) = regs.iter().position(|x| x == r) {
                let start = part as u64 * width;
                let end = (start + width).min(size.max(start + 1));
                out[slot] = Some(Held { param, part, parts: list.len(), start, end });
            }
        }
    }
    out
}

/// The slots (argument registers) a parameter arrives in: empty on the stack.
pub fn slots_of(arch: Arch, loc: &Loc) -> Vec<u32> {
    let regs = arg_registers(arch);
    let list: &[&'static str] = match loc {
        Loc::Reg(r) => std::slice::from_ref(r),
        Loc::Regs(v) => v,
        _ => &[],
    };
    list.iter().filter_map(|r| regs.iter().position(|x| x == r).map(|i| i as u32)).collect()
}

/// `slot 2`, `slots 0-1`, `no slot (stack+0)`.
pub fn describe_slots(slots: &[u32]) -> String {
    match slots {
        [] => "no slot".to_owned(),
        [one] => format!("slot {one}"),
        [first, .., last] => format!("slots {first}-{last}"),
    }
}
