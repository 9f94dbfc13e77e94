//! The argument slots a BTF-typed tracing program (`fentry`, `fexit`, `fmod_ret`, `lsm`,
//! `tp_btf`) reads from its context, and how many the kernel's function gives it: the
//! verifier's `btf_ctx_access` refuses a read of slot `off / 8` past the function's
//! parameters (`func '%s' doesn't have %d-th argument`), except the slot right after them,
//! which is the return value for `fexit`, `fmod_ret` and `lsm`.
//!
//! The reads are found by a must-analysis over the program's control flow: a register holds
//! the context when it does on every path (`r1` at entry, copies of it by `mov`); anything
//! else written to it forgets that. A read through a spilled and reloaded context is not
//! seen (a missed finding, never a wrong one).
//!
//! Invariant: the analysis is a fixpoint over at most 11 bits per instruction: bounded.

use fevlint_btf::BtfKind;

use crate::core::Target;
use crate::object::{BpfObject, Insn, Program};
use crate::section::AttachKind;

/// One read of the context: the instruction (index in the program) and the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CtxRead {
    pub insn: usize,
    pub slot: u32,
}

/// The context reads of `program`; `None` when its bytes are unreadable.
pub fn ctx_reads(obj: &BpfObject, program: &Program) -> Option<Vec<CtxRead>> {
    let data = obj.section_data(obj.section(&program.section)?);
    let start = usize::try_from(program.offset).ok()?;
    let bytes = data.get(start..start.checked_add(usize::try_from(program.size).ok()?)?)?;
    let insns: Vec<Insn> = bytes.chunks_exact(8).filter_map(Insn::read).collect();
    let n = insns.len();
    // Per instruction, the registers that hold the context on entry to it on every path
    // seen so far (`None`: not reached yet).
    let mut state: Vec<Option<u16>> = vec![None; n];
    let mut work = vec![0usize];
    if n > 0 {
        state[0] = Some(1 << 1);
    }
    let mut reads = Vec::new();
    while let Some(pc) = work.pop() {
        let Some(mask) = state[pc] else { continue };
        let insn = insns[pc];
        let (dst, src) = (u16::from(insn.dst.min(10)), u16::from(insn.src.min(10)));
        let clear = |m: u16, r: u16| m & !(1 << r);
        let next = |to: usize, m: u16, state: &mut [Option<u16>], work: &mut Vec<usize>| {
            let Some(slot) = state.get_mut(to) else { return };
            let merged = slot.map_or(m, |old| old & m);
            if *slot != Some(merged) {
                *slot = Some(merged);
                work.push(to);
            }
        };
        let op = insn.code & 0xf0;
        match insn.class() {
            0x07 | 0x04 => {
                let m = if insn.code == 0xbf {
                    if mask & (1 << src) != 0 {
                        mask | (1 << dst)
                    } else {
                        clear(mask, dst)
                    }
                } else {
                    clear(mask, dst)
                };
                next(pc + 1, m, &mut state, &mut work);
            }
            0x05 | 0x06 => match op {
                0x90 => {}
                0x80 => next(pc + 1, mask & !0b11_1111, &mut state, &mut work),
                _ => {
                    let target = pc as i64 + 1 + i64::from(insn.off);
                    if let Ok(t) = usize::try_from(target) {
                        next(t, mask, &mut state, &mut work);
                    }
                    if op != 0x00 {
                        next(pc + 1, mask, &mut state, &mut work);
                    }
                }
            },
            0x00 if insn.is_ldimm64() => next(pc + 2, clear(mask, dst), &mut state, &mut work),
            0x01 => {
                if insn.code & 0xe0 == 0x60 && mask & (1 << src) != 0 && insn.off >= 0 && insn.off % 8 == 0 {
                    reads.push(CtxRead { insn: pc, slot: (insn.off / 8) as u32 });
                }
                next(pc + 1, clear(mask, dst), &mut state, &mut work);
            }
            0x00 => next(pc + 1, clear(mask, 0), &mut state, &mut work),
            _ => {
                let m =
                    if insn.class() == 0x03 && insn.code & 0xe0 == 0xc0 { clear(clear(mask, src), 0) } else { mask };
                next(pc + 1, m, &mut state, &mut work);
            }
        }
    }
    // A read recorded under a larger mask may have lost the context later: keep the reads
    // whose register still holds it in the final state.
    reads.retain(|r| {
        let i = insns[r.insn];
        state[r.insn].is_some_and(|m| m & (1 << i.src.min(10)) != 0)
    });
    reads.sort_by_key(|r| r.insn);
    reads.dedup();
    Some(reads)
}

/// What the kernel's function gives a program of this kind as its context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CtxArgs {
    /// What the slots come from (`vfs_read`, `btf_trace_sched_switch`, `bpf_lsm_file_open`).
    pub function: String,
    /// The parameters' names (`""` when unnamed), in order.
    pub params: Vec<String>,
    /// Per parameter, why the verifier refuses a read of it (`None`: it allows it).
    pub refused: Vec<Option<String>>,
    /// The slot after the parameters is the return value.
    pub ret_slot: bool,
}

impl CtxArgs {
    /// Whether the verifier lets the program read `slot`.
    pub fn allows(&self, slot: u32) -> bool {
        let n = self.params.len() as u32;
        match self.refused.get(slot as usize) {
            Some(why) => why.is_none(),
            None => self.ret_slot && slot == n,
        }
    }

    /// The verifier's message for a read of `slot` it refuses.
    pub fn refusal(&self, slot: u32) -> String {
        let func = self.function.strip_prefix("btf_trace_").unwrap_or(&self.function);
        match self.refused.get(slot as usize) {
            Some(Some(why)) => format!("func '{func}' arg{slot} {why}"),
            _ => format!("func '{func}' doesn't have {}-th argument", slot + 1),
        }
    }
}

/// Why `btf_ctx_access` (Linux 6.1) refuses a read of a parameter of type `id`: only
/// integers, enums, structs by value and pointers to void, integers or structs are read.
fn param_refusal(v: &crate::btfx::View, id: u32) -> Option<String> {
    let (t, _) = v.skip_mods(id).ok()?;
    match t.kind {
        Some(BtfKind::Int | BtfKind::Enum | BtfKind::Enum64 | BtfKind::Struct | BtfKind::Union) => None,
        Some(BtfKind::Ptr) => {
            if t.size_or_type == 0 {
                return None;
            }
            let (p, _) = v.skip_mods(t.size_or_type).ok()?;
            match p.kind {
                None | Some(BtfKind::Int | BtfKind::Struct | BtfKind::Union) => None,
                k => Some(format!("type {} is not a struct", crate::btfx::kind_str(k).to_uppercase())),
            }
        }
        k => Some(format!(
            "'{}' has type {}. Only pointer access is allowed",
            v.name_str(t.name_off),
            crate::btfx::kind_str(k).to_uppercase()
        )),
    }
}

/// The kernel's side of `btf_ctx_access` for a program of `kind` attached to `target`
/// (`None`: not a BTF-typed context, or the function is not there).
pub fn ctx_args(t: &Target, kind: AttachKind, target: &str) -> Option<CtxArgs> {
    let v = t.view();
    let (function, proto, skip, ret_slot) = match kind {
        AttachKind::Fentry | AttachKind::Fexit | AttachKind::FmodRet => {
            let f = v.ty(t.find(BtfKind::Func, target)?).ok()?;
            (target.to_owned(), f.size_or_type, 0, kind != AttachKind::Fentry)
        }
        AttachKind::Lsm => {
            let name = format!("bpf_lsm_{target}");
            let f = v.ty(t.find(BtfKind::Func, &name)?).ok()?;
            (name, f.size_or_type, 0, true)
        }
        AttachKind::TpBtf => {
            let name = format!("btf_trace_{target}");
            let td = v.ty(t.find(BtfKind::Typedef, &name)?).ok()?;
            let ptr = v.ty(td.size_or_type).ok()?;
            if !ptr.is(BtfKind::Ptr) {
                return None;
            }
            (name, ptr.size_or_type, 1, false)
        }
        _ => return None,
    };
    let p = v.ty(proto).ok()?;
    if !p.is(BtfKind::FuncProto) {
        return None;
    }
    let (mut params, mut refused) = (Vec::new(), Vec::new());
    for i in skip..usize::from(p.vlen) {
        let (name_off, ty) = v.param(&p, i).ok()?;
        params.push(v.name_str(name_off));
        refused.push(param_refusal(v, ty));
    }
    Some(CtxArgs { function, params, refused, ret_slot })
}
