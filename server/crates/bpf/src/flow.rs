//! Which instructions of a program the verifier reaches once libbpf has patched the CO-RE
//! relocations of one kernel: a path-sensitive walk that tracks constant registers (the
//! patched `bpf_core_field_exists()` 0 or 1 and what is computed from it) and follows only
//! the side of a conditional jump the constants decide, as the verifier does. A poisoned
//! instruction the walk never reaches is dead code: libbpf's poisoning is harmless there.
//!
//! Invariant: the walk is bounded ([`MAX_STATES`]); past the bound every instruction of the
//! program counts as reachable (the conservative answer: a failure is reported).

use std::collections::{HashMap, HashSet};

use crate::core::{Outcome, Resolution};
use crate::object::{BpfObject, DataRef, Insn, Program};

/// How many (instruction, registers) states the walk visits at most.
const MAX_STATES: usize = 200_000;

/// A register's known value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Val {
    /// A constant.
    K(u64),
    /// The address of byte `offset` of a read-only data section (its index): a load
    /// through it reads the constant the object holds there, as the verifier reads a
    /// frozen read-only map (`bpf_map_direct_read`): a `const volatile` flag tested at run
    /// time decides a branch at load time.
    Ro { section: usize, offset: i64 },
}

/// Each register's value: known, or anything (`None`).
type Regs = [Option<Val>; 11];

/// The instructions of `program` the verifier visits on the kernel `resolutions` belong
/// to, by index in the program; `None` when the program's bytes are unreadable.
pub fn reachable(obj: &BpfObject, program: &Program, resolutions: &[Resolution]) -> Option<Vec<bool>> {
    walk(obj, program, resolutions, true)
}

/// [`reachable`] with every load from read-only data unknown: what the verifier reaches
/// when a loader has set the `const volatile` globals to other values than the object's.
pub fn reachable_whatever_read_only(
    obj: &BpfObject,
    program: &Program,
    resolutions: &[Resolution],
) -> Option<Vec<bool>> {
    walk(obj, program, resolutions, false)
}

fn walk(obj: &BpfObject, program: &Program, resolutions: &[Resolution], read_only: bool) -> Option<Vec<bool>> {
    let sec = obj.section(&program.section)?;
    let data = obj.section_data(sec);
    let start = usize::try_from(program.offset).ok()?;
    let end = start.checked_add(usize::try_from(program.size).ok()?)?;
    let bytes = data.get(start..end)?;
    let n = bytes.len() / 8;
    let mut insns: Vec<Insn> = (0..n).filter_map(|i| Insn::read(&bytes[i * 8..i * 8 + 8])).collect();
    // Patch what libbpf patches: relocated values, and poisoned instructions.
    let mut poisoned = HashSet::new();
    for r in resolutions.iter().filter(|r| r.section == program.section) {
        let Some(i) = (r.insn_off as usize).checked_sub(start).map(|o| o / 8).filter(|&i| i < n) else { continue };
        match &r.outcome {
            Outcome::Value { value } => {
                let insn = &mut insns[i];
                match insn.class() {
                    0x04 | 0x07 => insn.imm = *value as i32,
                    0x00 if insn.is_ldimm64() && i + 1 < n => {
                        insns[i].imm = *value as u32 as i32;
                        insns[i + 1].imm = (*value >> 32) as u32 as i32;
                    }
                    _ => {}
                }
            }
            Outcome::Poisoned { .. } => {
                poisoned.insert(i);
            }
            Outcome::Failed { .. } => {}
        }
    }
    let mut seen = vec![false; n];
    let mut visited: HashSet<(usize, Regs)> = HashSet::new();
    let mut work: Vec<(usize, Regs)> = vec![(0, [None; 11])];
    // Path counts per instruction, to fall back to merging when a loop unrolls constants.
    let mut per_insn: HashMap<usize, usize> = HashMap::new();
    while let Some((pc, mut regs)) = work.pop() {
        if pc >= n || !visited.insert((pc, regs)) {
            continue;
        }
        if visited.len() > MAX_STATES {
            return Some(vec![true; n]);
        }
        let c = per_insn.entry(pc).or_default();
        *c += 1;
        if *c > 64 {
            // A loop that keeps producing new constants: forget them.
            regs = [None; 11];
            if !visited.insert((pc, regs)) {
                continue;
            }
        }
        seen[pc] = true;
        if poisoned.contains(&pc) {
            // The verifier stops here with `invalid func unknown#195896080`.
            continue;
        }
        let insn = insns[pc];
        let dst = usize::from(insn.dst).min(10);
        let src = usize::from(insn.src).min(10);
        let op = insn.code & 0xf0;
        let from_reg = insn.code & 0x08 != 0;
        match insn.class() {
            // ALU64 and ALU
            class @ (0x07 | 0x04) => {
                let wide = class == 0x07;
                let operand = if from_reg { regs[src] } else { Some(Val::K(insn.imm as i64 as u64)) };
                let v = alu(op, regs[dst], operand);
                regs[dst] = match v {
                    Some(Val::K(v)) if !wide => Some(Val::K(v & 0xffff_ffff)),
                    Some(Val::Ro { .. }) if !wide => None,
                    v => v,
                };
                work.push((pc + 1, regs));
            }
            // JMP and JMP32
            class @ (0x05 | 0x06) => match op {
                0x90 => {} // exit
                0x80 => {
                    // A call: r0-r5 are clobbered.
                    for r in regs.iter_mut().take(6) {
                        *r = None;
                    }
                    work.push((pc + 1, regs));
                }
                _ => {
                    let target = (pc as i64 + 1 + i64::from(insn.off)) as usize;
                    if op == 0x00 {
                        work.push((target, regs));
                        continue;
                    }
                    let b = if from_reg { regs[src] } else { Some(Val::K(insn.imm as i64 as u64)) };
                    match (regs[dst], b) {
                        (Some(Val::K(a)), Some(Val::K(b))) => {
                            let (a, b) = if class == 0x06 { (a & 0xffff_ffff, b & 0xffff_ffff) } else { (a, b) };
                            match jump(op, a, b, class == 0x06) {
                                Some(true) => work.push((target, regs)),
                                Some(false) => work.push((pc + 1, regs)),
                                None => {
                                    work.push((target, regs));
                                    work.push((pc + 1, regs));
                                }
                            }
                        }
                        _ => {
                            work.push((target, regs));
                            work.push((pc + 1, regs));
                        }
                    }
                }
            },
            // LD: ld_imm64 takes two slots.
            0x00 if insn.is_ldimm64() => {
                let at = program.offset.saturating_add(8 * pc as u64);
                regs[dst] = match obj.data_ref(program.section_index, at, &insn) {
                    Some(DataRef::ReadOnly { section, offset }) if read_only => {
                        i64::try_from(offset).ok().map(|offset| Val::Ro { section, offset })
                    }
                    Some(_) => None,
                    None if insn.src == 0 && pc + 1 < n => {
                        Some(Val::K(u64::from(insn.imm as u32) | u64::from(insns[pc + 1].imm as u32) << 32))
                    }
                    None => None,
                };
                if pc + 1 < n {
                    seen[pc + 1] = true;
                }
                work.push((pc + 2, regs));
            }
            // LDX from read-only data at a known place: that constant (`BPF_MEM` zero-extends).
            0x01 if insn.code & 0xe0 == 0x60 => {
                regs[dst] = match (regs[src], insn.mem_size()) {
                    (Some(Val::Ro { section, offset }), Some(size)) => offset
                        .checked_add(i64::from(insn.off))
                        .and_then(|at| obj.read_data(section, at, size))
                        .map(Val::K),
                    _ => None,
                };
                work.push((pc + 1, regs));
            }
            // Other loads (sign-extending, legacy LD_ABS/IND): the destination is unknown.
            0x01 | 0x00 => {
                regs[dst] = None;
                if insn.class() == 0x00 {
                    regs[0] = None;
                }
                work.push((pc + 1, regs));
            }
            // ST, STX (atomics may write a register: forget it).
            _ => {
                if insn.class() == 0x03 && insn.code & 0xe0 == 0xc0 {
                    regs[src] = None;
                    regs[0] = None;
                }
                work.push((pc + 1, regs));
            }
        }
    }
    Some(seen)
}

fn alu(op: u8, a: Option<Val>, b: Option<Val>) -> Option<Val> {
    if op == 0xb0 {
        return b; // mov
    }
    let (a, b) = match (a?, b?) {
        (Val::K(a), Val::K(b)) => (a, b),
        // Pointer arithmetic within read-only data.
        (Val::Ro { section, offset }, Val::K(b)) if op == 0x00 || op == 0x10 => {
            let b = b as i64;
            let offset = if op == 0x00 { offset.checked_add(b) } else { offset.checked_sub(b) }?;
            return Some(Val::Ro { section, offset });
        }
        _ => return None,
    };
    Some(Val::K(match op {
        0x00 => a.wrapping_add(b),
        0x10 => a.wrapping_sub(b),
        0x20 => a.wrapping_mul(b),
        0x40 => a | b,
        0x50 => a & b,
        0x60 => a.wrapping_shl(b as u32),
        0x70 => a.wrapping_shr(b as u32),
        0x80 => a.wrapping_neg(),
        0xa0 => a ^ b,
        _ => return None,
    }))
}

/// Whether a conditional jump is taken, when it can be told.
fn jump(op: u8, a: u64, b: u64, narrow: bool) -> Option<bool> {
    let (sa, sb) = if narrow { (a as u32 as i32 as i64, b as u32 as i32 as i64) } else { (a as i64, b as i64) };
    Some(match op {
        0x10 => a == b,
        0x20 => a > b,
        0x30 => a >= b,
        0x40 => a & b != 0,
        0x50 => a != b,
        0x60 => sa > sb,
        0x70 => sa >= sb,
        0xa0 => a < b,
        0xb0 => a <= b,
        0xc0 => sa < sb,
        0xd0 => sa <= sb,
        _ => return None,
    })
}
