//! The kernel's code as `register_kprobe` sees it: where in a function of the image a
//! kprobe may sit, decided the way the kernel decides it (`arch_adjust_kprobe_addr`,
//! `check_kprobe_address_safe`, `arch_prepare_kprobe` with `can_probe` and
//! `prepare_emulation`, in arch/x86/kernel/kprobes/core.c and kernel/kprobes.c of 6.1 and
//! 6.12), from the image's bytes decoded with iced-x86 from the start of the symbol,
//! as the kernel's own instruction decoder walks them.
//!
//! The image is the code as linked; the kernel rewrites some of it at boot according to
//! the CPU (alternatives, retpolines, return thunks, paravirt calls) and to the number of
//! CPUs (lock prefixes). An address strictly inside a rewritten region, or on a lock
//! prefix, is answered "unknown", never guessed. What does not depend on the CPU: the
//! ENDBR64 test reads the function's first four bytes, which the boot either keeps or
//! seals to the 4-byte NOP `is_endbr()` still recognizes, on a CPU with IBT or without
//! (Debian's GCC-built kernels have no FineIBT, the only rewrite that moves them).
//!
//! Invariant: every table is read with bounds checks; a malformed image yields fewer
//! facts (and "unknown" answers), never a panic.

use fevlint_load::elf::KernelElf;
use fevlint_load::symbols::{BlacklistEntry, ErrorInjectionList, KprobeBlacklist, Symbol, SymbolTable, VirtAddr};
use iced_x86::{Decoder, DecoderOptions, OpKind};
use std::collections::HashSet;

/// The longest x86 instruction.
const MAX_INSN: usize = 15;
/// `CALL_INSN_SIZE`: a static call site's reserved bytes.
const CALL_INSN_SIZE: u64 = 5;
/// Decoding a function stops after this many bytes (the kernel walks any length; no
/// kernel function is near it, and an unbounded walk over a bad symbol map is not useful).
const MAX_WALK: u64 = 1 << 20;

/// Why `register_kprobe` refuses an address, with the errno it returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// -EILSEQ from `can_probe`: not at an instruction boundary (or, on 6.12, an INT/UD
    /// instruction, or bytes the decoder rejects). `prev`/`next` are the nearest
    /// boundaries around the address, as offsets from the symbol.
    NotBoundary { prev: Option<u64>, next: Option<u64> },
    /// -EINVAL from `check_kprobe_address_safe` or `__copy_instruction`.
    Invalid(&'static str),
    /// -EOPNOTSUPP from `prepare_emulation`: an instruction kprobes cannot single-step.
    Unsupported(&'static str),
}

/// The answer for one probe point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbePoint {
    /// Registered at `addr` (symbol + offset after the ENDBR adjustment).
    Accepted {
        addr: VirtAddr,
    },
    Refused(Refusal),
    /// What only the booted kernel knows (a region rewritten at boot, a lock prefix).
    Unknown(&'static str),
}

/// One decoded instruction of a function ([`Code::instructions`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Insn {
    /// From the symbol's start.
    pub offset: u64,
    pub len: u64,
    /// The mnemonic, with a branch's target symbol: `call __fentry__`.
    pub text: String,
    /// The ftrace call site (`__mcount_loc`): a kprobe there goes through ftrace.
    pub ftrace: bool,
}

/// Which kernel's rules: 6.12's `can_probe` refuses INT/UD instructions itself. And
/// whether functions start with ENDBR64 as their bytes say (`None`) or as assumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    pub refuses_exception_insns: bool,
    pub endbr: Option<bool>,
}

/// Address tables the kernel consults when it places a kprobe, read from the image.
#[derive(Debug, Default)]
pub struct Sites {
    /// `.smp_locks`: lock prefixes (`alternatives_text_reserved` on a one-CPU boot).
    smp_locks: HashSet<u64>,
    /// `__bug_table`: the `ud2` of each BUG/WARN (`find_bug`).
    bugs: HashSet<u64>,
    /// `__jump_table`: each jump label's code address (2 or 5 bytes reserved).
    jump_labels: Vec<u64>,
    /// `.static_call_sites`: each static call (5 bytes reserved).
    static_calls: Vec<u64>,
    /// Regions the boot may rewrite with other instructions: `[start, end)`, sorted.
    patched: Vec<(u64, u64)>,
    /// The return-thunk sites among them (`jmp __x86_return_thunk`), which the boot
    /// either keeps or rewrites to `ret; int3; int3; …`: inside one, no instruction
    /// starts but an INT3.
    returns: HashSet<u64>,
    /// The ftrace call sites (`__mcount_loc`).
    ftrace: HashSet<u64>,
    /// `_stext.._etext` (`core_kernel_text` once the init text is freed).
    text: (u64, u64),
}

/// The decoded image's code, its tables and its symbol map.
pub struct Code<'k> {
    pub(crate) elf: &'k KernelElf,
    pub(crate) symbols: &'k SymbolTable,
    pub(crate) sites: &'k Sites,
    pub(crate) blacklist: Option<&'k KprobeBlacklist>,
}

/// A table the linker script brackets with `start`/`end` symbols (`__start___jump_table`
/// lies inside `.data`), else the section of its own called `section`: its address and
/// bytes.
fn table<'e>(elf: &'e KernelElf, symbols: &SymbolTable, (start, end, section): Table) -> Option<(u64, &'e [u8])> {
    if let (Some(s), Some(e)) = (symbols.addr_of(start), symbols.addr_of(end)) {
        if e.0 >= s.0 {
            return Some((s.0, elf.read_virt(s, e.0 - s.0)?));
        }
    }
    let s = elf.section(section)?;
    Some((s.addr.0, elf.data().get(s.file_range.clone()?)?))
}

/// Start symbol, end symbol, section name.
type Table = (&'static str, &'static str, &'static str);
const SMP_LOCKS: Table = ("__smp_locks", "__smp_locks_end", ".smp_locks");
const BUGS: Table = ("__start___bug_table", "__stop___bug_table", "__bug_table");
const JUMP_LABELS: Table = ("__start___jump_table", "__stop___jump_table", "__jump_table");
const STATIC_CALLS: Table = ("__start_static_call_sites", "__stop_static_call_sites", ".static_call_sites");
const ALTERNATIVES: Table = ("__alt_instructions", "__alt_instructions_end", ".altinstructions");
const RETPOLINES: Table = ("__retpoline_sites", "__retpoline_sites_end", ".retpoline_sites");
const RETURNS: Table = ("__return_sites", "__return_sites_end", ".return_sites");
const PARAVIRT: Table = ("__parainstructions", "__parainstructions_end", ".parainstructions");

/// `(void *)s + *s`: the s32 self-relative addresses of a table's entries.
fn relative(elf: &KernelElf, symbols: &SymbolTable, t: Table, stride: usize) -> Vec<u64> {
    let Some((base, bytes)) = table(elf, symbols, t) else { return Vec::new() };
    let mut out = Vec::with_capacity(bytes.len() / stride.max(1));
    for (i, e) in bytes.chunks_exact(stride).enumerate() {
        let disp = i64::from(i32::from_le_bytes([e[0], e[1], e[2], e[3]]));
        out.push(base.wrapping_add((i * stride) as u64).wrapping_add_signed(disp));
    }
    out
}

impl Sites {
    /// Reads the tables of `elf`; `alt_instr_size` is 12 before 6.3, 14 since (the
    /// `flags` half-word).
    pub fn read(elf: &KernelElf, symbols: &SymbolTable, alt_instr_size: usize) -> Sites {
        let mut sites = Sites {
            smp_locks: relative(elf, symbols, SMP_LOCKS, 4).into_iter().collect(),
            // struct bug_entry: s32 bug_addr_disp, s32 file_disp, u16 line, u16 flags.
            bugs: relative(elf, symbols, BUGS, 12).into_iter().collect(),
            // struct jump_entry: s32 code, s32 target, long key.
            jump_labels: relative(elf, symbols, JUMP_LABELS, 16),
            // struct static_call_site: s32 addr, s32 key.
            static_calls: relative(elf, symbols, STATIC_CALLS, 8),
            ..Sites::default()
        };
        let mut patched = Vec::new();
        // struct alt_instr: s32 instr_offset, s32 repl_offset, cpuid[, flags], u8 instrlen.
        if let Some((base, bytes)) = table(elf, symbols, ALTERNATIVES) {
            let len_at = alt_instr_size - 2;
            for (i, e) in bytes.chunks_exact(alt_instr_size).enumerate() {
                let disp = i64::from(i32::from_le_bytes([e[0], e[1], e[2], e[3]]));
                let start = base.wrapping_add((i * alt_instr_size) as u64).wrapping_add_signed(disp);
                let len = u64::from(e[len_at]);
                if len > 0 {
                    patched.push((start, start + len));
                }
            }
        }
        // Retpoline and return-thunk sites: the instruction there is rewritten whole.
        for t in [RETPOLINES, RETURNS] {
            for at in relative(elf, symbols, t, 4) {
                if let Some(len) = elf.read_virt(VirtAddr(at), MAX_INSN as u64).and_then(|b| insn_len(b, at)) {
                    patched.push((at, at + len));
                    if t == RETURNS {
                        sites.returns.insert(at);
                    }
                }
            }
        }
        // 6.1's paravirt patch sites: struct paravirt_patch_site { u8 *instr; u8 type; u8 len; }.
        if let Some((_, bytes)) = table(elf, symbols, PARAVIRT) {
            for e in bytes.chunks_exact(16) {
                let start = u64::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]);
                patched.push((start, start.saturating_add(u64::from(e[9]))));
            }
        }
        patched.sort_unstable();
        sites.patched = patched;
        sites.jump_labels.sort_unstable();
        sites.static_calls.sort_unstable();
        if let Ok(f) = elf.ftrace_sites(Some(symbols)) {
            sites.ftrace = f.sites.iter().map(|a| a.0).collect();
        }
        if let (Some(s), Some(e)) = (symbols.addr_of("_stext"), symbols.addr_of("_etext")) {
            sites.text = (s.0, e.0);
        }
        sites
    }

    /// The rewritten regions strictly containing `addr` (not starting at it).
    fn inside_patched(&self, addr: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let i = self.patched.partition_point(|&(s, _)| s < addr);
        // Regions starting below addr: the nearest few (they may nest or overlap).
        self.patched[..i].iter().rev().take(8).copied().filter(move |&(s, e)| s < addr && addr < e)
    }
}

/// The length of the instruction at the start of `bytes` (at address `ip`).
fn insn_len(bytes: &[u8], ip: u64) -> Option<u64> {
    let mut d = Decoder::with_ip(64, bytes, ip, DecoderOptions::NONE);
    let i = d.decode();
    (!i.is_invalid()).then_some(i.len() as u64)
}

/// `is_endbr()`: ENDBR64, ENDBR32, or the seal's `osp nopl (%rax)`.
pub fn is_endbr(first: &[u8]) -> bool {
    matches!(first, [0xf3, 0x0f, 0x1e, 0xfa | 0xfb, ..] | [0x66, 0x0f, 0x1f, 0x00, ..])
}

impl Code<'_> {
    /// The code bytes at `addr`, up to `len`, clipped to the section holding them.
    fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let mut n = len;
        while n > 0 {
            if let Some(b) = self.elf.read_virt(VirtAddr(addr), n) {
                return Some(b);
            }
            n /= 2;
        }
        None
    }

    /// The start of the symbol `kallsyms_lookup_size_offset` finds for `addr`, and its name.
    fn containing(&self, addr: u64) -> Option<(u64, &str)> {
        let s = self.symbols.lookup_with(VirtAddr(addr), |s| s.is_text())?;
        Some((s.addr.0, s.name))
    }

    /// Whether the function at `start` begins with ENDBR64 (or its seal).
    pub fn starts_with_endbr(&self, start: VirtAddr) -> Option<bool> {
        Some(is_endbr(self.bytes(start.0, 4)?))
    }

    /// The instruction starts of the symbol at `start`, up to and including `until`
    /// (or the first past it); `Err(at)` when the decoder rejects the bytes at `at`, or
    /// `until` lies more than [`MAX_WALK`] bytes in.
    pub fn boundaries(&self, start: u64, until: u64) -> Result<Vec<u64>, u64> {
        if until.saturating_sub(start) >= MAX_WALK {
            return Err(start);
        }
        let mut out = Vec::new();
        let mut at = start;
        while at <= until {
            out.push(at);
            let b = self.bytes(at, MAX_INSN as u64).ok_or(at)?;
            at += insn_len(b, at).ok_or(at)?;
        }
        out.push(at);
        Ok(out)
    }

    /// The first `count` instructions of the symbol at `start` (fewer where the decoder
    /// stops), each with its offset, length and a short text (`endbr64`,
    /// `call __fentry__`, `push`), and whether it is the ftrace call site.
    pub fn instructions(&self, start: VirtAddr, count: usize) -> Vec<Insn> {
        let mut out = Vec::new();
        let mut at = start.0;
        while out.len() < count.min(64) {
            let Some(bytes) = self.bytes(at, MAX_INSN as u64) else { break };
            let mut d = Decoder::with_ip(64, bytes, at, DecoderOptions::NONE);
            let i = d.decode();
            if i.is_invalid() {
                break;
            }
            let mut text = format!("{:?}", i.mnemonic()).to_ascii_lowercase();
            if i.op_count() > 0
                && matches!(i.op0_kind(), OpKind::NearBranch64 | OpKind::NearBranch32 | OpKind::NearBranch16)
            {
                let target = i.near_branch_target();
                if let Some(s) = self.symbols.lookup_with(VirtAddr(target), |s| s.is_text()) {
                    text.push(' ');
                    text.push_str(s.name);
                    if target > s.addr.0 {
                        text.push_str(&format!("+{:#x}", target - s.addr.0));
                    }
                }
            }
            out.push(Insn { offset: at - start.0, len: i.len() as u64, text, ftrace: self.sites.ftrace.contains(&at) });
            at += i.len() as u64;
        }
        out
    }

    /// `kprobe_on_func_entry(NULL, symbol, offset)` for the symbol at `start`.
    pub fn on_func_entry(&self, start: VirtAddr, offset: u64) -> Option<bool> {
        let endbr = self.starts_with_endbr(start)?;
        Some(offset == 0 || (endbr && offset == 4))
    }

    /// `register_kprobe` for `symbol_addr + offset`.
    pub fn register(&self, symbol_addr: VirtAddr, offset: u64, rules: Rules) -> ProbePoint {
        let Some(addr) = symbol_addr.0.checked_add(offset) else {
            return ProbePoint::Refused(Refusal::Invalid("address overflow"));
        };
        // _kprobe_addr: re-split on the symbol kallsyms finds, then arch_adjust_kprobe_addr.
        let Some((start, name)) = self.containing(addr) else {
            return ProbePoint::Unknown("no symbol holds the address");
        };
        let mut off = addr - start;
        // An assumed ENDBR64 (or none): the entry is where the assumption puts it, not
        // where the bytes would.
        if let Some(endbr) = rules.endbr {
            if off == 0 || (endbr && off == 4) {
                return ProbePoint::Accepted { addr: VirtAddr(start + if endbr { 4 } else { 0 }) };
            }
        }
        match rules.endbr.or_else(|| self.starts_with_endbr(VirtAddr(start))) {
            Some(true) if off == 0 => off = 4,
            Some(_) => {}
            None => return ProbePoint::Unknown("no code bytes for the function"),
        }
        let addr = start + off;
        let sites = self.sites;
        // check_kprobe_address_safe.
        let ftrace = sites.ftrace.contains(&addr);
        if sites.text.1 > 0 && !(sites.text.0..sites.text.1).contains(&addr) {
            return ProbePoint::Refused(Refusal::Invalid("not in the kernel's text"));
        }
        if self.blacklist.is_some_and(|b| b.covering(VirtAddr(addr)).next().is_some()) {
            return ProbePoint::Refused(Refusal::Invalid("on the kprobe blacklist"));
        }
        let near = |v: &[u64], width: &dyn Fn(u64) -> u64| {
            let i = v.partition_point(|&s| s <= addr);
            v[..i].iter().rev().take(4).any(|&s| addr < s + width(s))
        };
        let jump_size = |s: u64| self.bytes(s, MAX_INSN as u64).and_then(|b| insn_len(b, s)).unwrap_or(5);
        if near(&sites.jump_labels, &jump_size) {
            return ProbePoint::Refused(Refusal::Invalid("a jump label's code"));
        }
        if near(&sites.static_calls, &|_| CALL_INSN_SIZE) {
            return ProbePoint::Refused(Refusal::Invalid("a static call site"));
        }
        if sites.bugs.contains(&addr) {
            return ProbePoint::Refused(Refusal::Invalid("a BUG/WARN site"));
        }
        if name.starts_with("__pfx_") || name.starts_with("__cfi_") {
            return ProbePoint::Refused(Refusal::Invalid("a function's padding"));
        }
        if ftrace {
            // arch_prepare_kprobe_ftrace: the ftrace call site, no decoding.
            return ProbePoint::Accepted { addr: VirtAddr(addr) };
        }
        let mut inside = sites.inside_patched(addr).peekable();
        if inside.peek().is_some() {
            // A return thunk's tail is its jump's bytes or INT3s: 6.12's can_probe
            // refuses both.
            if rules.refuses_exception_insns && inside.all(|(s, _)| sites.returns.contains(&s)) {
                return ProbePoint::Refused(Refusal::NotBoundary { prev: None, next: None });
            }
            return ProbePoint::Unknown("inside code the kernel rewrites at boot for its CPU");
        }
        if sites.smp_locks.contains(&addr) {
            return ProbePoint::Unknown("a lock prefix (refused when the kernel boots on one CPU)");
        }
        // can_probe: decode from the symbol's start.
        if addr - start >= MAX_WALK {
            return ProbePoint::Unknown("too far into the symbol to decode");
        }
        let walk = match self.boundaries(start, addr) {
            Ok(w) => w,
            Err(_) => return ProbePoint::Refused(Refusal::NotBoundary { prev: None, next: None }),
        };
        if !walk.contains(&addr) {
            let prev = walk.iter().rev().find(|&&a| a < addr).map(|a| a - start);
            let next = walk.iter().find(|&&a| a > addr).map(|a| a - start);
            return ProbePoint::Refused(Refusal::NotBoundary { prev, next });
        }
        let Some(bytes) = self.bytes(addr, MAX_INSN as u64) else {
            return ProbePoint::Unknown("no code bytes at the address");
        };
        let mut d = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
        let insn = d.decode();
        if insn.is_invalid() {
            return match rules.refuses_exception_insns {
                true => ProbePoint::Refused(Refusal::NotBoundary { prev: None, next: None }),
                false => ProbePoint::Refused(Refusal::Invalid("the instruction cannot be decoded")),
            };
        }
        let b = &bytes[..insn.len()];
        // Past the legacy and REX prefixes: the opcode bytes and ModRM.
        let p = b
            .iter()
            .position(|&x| {
                !matches!(x, 0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65 | 0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3 | 0x40..=0x4f)
            })
            .unwrap_or(0);
        let (op, op2, modrm) = (b[p], b.get(p + 1).copied().unwrap_or(0), b.get(p + 2).copied().unwrap_or(0));
        let exception = matches!(op, 0xcc | 0xcd | 0xce | 0xf1) || (op == 0x0f && matches!(op2, 0xff | 0xb9 | 0x0b));
        if exception && rules.refuses_exception_insns {
            return ProbePoint::Refused(Refusal::NotBoundary { prev: None, next: None });
        }
        // __copy_instruction: an INT3 (another subsystem's breakpoint), the emulate
        // prefix (`ud2` + "xen"/"kvm"), what masks exceptions (`mov` to %ss, `pop %ss`).
        let emulate_prefix =
            bytes.starts_with(&[0x0f, 0x0b, b'x', b'e', b'n']) || bytes.starts_with(&[0x0f, 0x0b, b'k', b'v', b'm']);
        if op == 0xcc || emulate_prefix || op == 0x17 || (op == 0x8e && (op2 >> 3) & 7 == 2) {
            return ProbePoint::Refused(Refusal::Invalid("an instruction kprobes cannot copy"));
        }
        // prepare_emulation.
        let unsupported = match op {
            0x9a | 0xea => Some("a far call or jump"),
            0xcf => Some("an `iret`"),
            0x0f if op2 == 0x01 && (modrm >> 3) & 7 == 0 && modrm >> 6 == 3 => Some("a `vmcall`-class instruction"),
            0xff => {
                let m = op2;
                match (m >> 3) & 7 {
                    3 | 5 => Some("a far indirect call or jump"),
                    2 | 4 if m >> 6 != 3 => Some("an indirect call or jump through memory"),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(why) = unsupported {
            return ProbePoint::Refused(Refusal::Unsupported(why));
        }
        ProbePoint::Accepted { addr: VirtAddr(addr) }
    }
}

/// scripts/kallsyms.c `is_ignored_symbol()` for x86 (what a System.map has and kallsyms
/// does not); a table decoded from the image's kallsyms has none of them.
fn kallsyms_ignores(s: &Symbol<'_>) -> bool {
    matches!(s.kind, b'U' | b'u' | b'N' | b'n' | b'A' | b'a')
        || s.name.starts_with("kallsyms_")
        || s.name.starts_with("__efistub_")
        || s.name.starts_with("__kcfi_typeid_")
}

/// `kallsyms_lookup_size_offset` over a symbol map: the start of the symbol holding an
/// address and its size (the distance to the next kallsyms address).
struct Kallsyms<'s> {
    symbols: &'s SymbolTable,
    /// The distinct addresses of kallsyms' symbols, ascending.
    addrs: Vec<u64>,
    /// `CONFIG_KALLSYMS_ALL`: data symbols too (else `_stext`.. `_etext` and init text).
    all: bool,
    text: [(u64, u64); 2],
    end: u64,
}

impl<'s> Kallsyms<'s> {
    fn new(symbols: &'s SymbolTable, all: bool) -> Option<Kallsyms<'s>> {
        let at = |n: &str| symbols.addr_of(n).map(|a| a.0);
        let text = [(at("_stext")?, at("_etext")?), (at("_sinittext")?, at("_einittext")?)];
        let end = if all { at("_end")? } else { text[0].1 };
        let mut k = Kallsyms { symbols, addrs: Vec::new(), all, text, end };
        let mut addrs: Vec<u64> = symbols.iter().filter(|s| k.kept(s)).map(|s| s.addr.0).collect();
        addrs.sort_unstable();
        addrs.dedup();
        k.addrs = addrs;
        Some(k)
    }

    /// scripts/kallsyms.c `symbol_valid()`.
    fn kept(&self, s: &Symbol<'_>) -> bool {
        if kallsyms_ignores(s) {
            return false;
        }
        self.all || self.text.iter().any(|&(lo, hi)| (lo..=hi).contains(&s.addr.0))
    }

    fn is_text(&self, addr: u64) -> bool {
        self.text.iter().any(|&(lo, hi)| (lo..hi).contains(&addr))
    }

    /// `kprobe_add_ksym_blacklist(entry)`: `[entry, entry + size)` named by `%ps`, or
    /// `None` (-EINVAL) outside the kernel's text.
    fn entry(&self, addr: u64) -> Option<BlacklistEntry> {
        if !self.is_text(addr) {
            return None;
        }
        let i = self.addrs.partition_point(|&a| a <= addr);
        let start = *self.addrs.get(i.checked_sub(1)?)?;
        let next = match self.addrs.get(i) {
            Some(&n) => n,
            None if (self.text[1].0..self.text[1].1).contains(&addr) => self.text[1].1,
            None => self.end,
        };
        let name = self.symbols.lookup_with(VirtAddr(addr), |s| self.kept(s))?.name.to_owned();
        Some(BlacklistEntry { start: VirtAddr(addr), end: VirtAddr(addr + (next - start)), name, module: None })
    }
}

/// The kprobe blacklist the kernel builds at boot (`populate_kprobe_blacklist` and x86's
/// `arch_populate_kprobe_blacklist`, 6.1 and 6.12), for an image whose booted kernel's
/// `kprobes/blacklist` is not at hand (a `debian:` kernel, a bare vmlinuz): one entry per
/// address of the `_kprobe_blacklist` table (`NOKPROBE_SYMBOL`, in `.init.data`) in the
/// kernel's text, then each kallsyms symbol of the `.kprobes.text`, noinstr and entry
/// text areas, each `[address, address + kallsyms size)`. `all_symbols` is
/// CONFIG_KALLSYMS_ALL. `None` when the table or the symbols it needs are missing.
pub fn derive_blacklist(elf: &KernelElf, symbols: &SymbolTable, all_symbols: bool) -> Option<KprobeBlacklist> {
    let ks = Kallsyms::new(symbols, all_symbols)?;
    let (start, end) = (symbols.addr_of("__start_kprobe_blacklist")?, symbols.addr_of("__stop_kprobe_blacklist")?);
    let width = elf.arch().pointer_size() as usize;
    let table = elf.read_virt(start, end.0.checked_sub(start.0)?)?;
    let mut entries = Vec::new();
    for e in table.chunks_exact(width) {
        let addr = match *e {
            [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
            _ => u64::from_le_bytes(e.try_into().ok()?),
        };
        entries.extend(ks.entry(addr));
    }
    for (lo, hi) in [
        ("__kprobes_text_start", "__kprobes_text_end"),
        ("__noinstr_text_start", "__noinstr_text_end"),
        ("__entry_text_start", "__entry_text_end"),
    ] {
        let (Some(lo), Some(hi)) = (symbols.addr_of(lo), symbols.addr_of(hi)) else { continue };
        // kprobe_add_area_blacklist: symbol after symbol (an alias's size 0 steps 1).
        let mut at = lo.0;
        while at < hi.0 {
            let e = ks.entry(at)?;
            at += (e.end.0 - e.start.0).max(1);
            entries.push(e);
        }
    }
    Some(KprobeBlacklist::from_entries(entries))
}

/// The error-injection list the kernel builds at boot (`populate_error_injection_list`,
/// lib/error-inject.c): each `struct error_injection_entry { unsigned long addr; int
/// etype; }` of the `_error_injection_whitelist` table, between
/// `__start_error_injection_whitelist` and `__stop_error_injection_whitelist`, names the
/// function at `addr` (the kernel keeps the entry only where kallsyms knows the address).
/// `None` when the table or its bounds are missing or cannot be read.
pub fn derive_error_injection(elf: &KernelElf, symbols: &SymbolTable) -> Option<ErrorInjectionList> {
    let start = symbols.addr_of("__start_error_injection_whitelist")?;
    let end = symbols.addr_of("__stop_error_injection_whitelist")?;
    let width = elf.arch().pointer_size() as usize;
    let table = elf.read_virt(start, end.0.checked_sub(start.0)?)?;
    // `addr` then `etype`, padded to the pointer's alignment.
    let names: Vec<&str> = table
        .chunks_exact(2 * width)
        .filter_map(|e| {
            let addr = match e[..width] {
                [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d])),
                ref w => u64::from_le_bytes(w.try_into().ok()?),
            };
            symbols.lookup_text(VirtAddr(addr)).filter(|s| s.addr.0 == addr).map(|s| s.name)
        })
        .collect();
    Some(ErrorInjectionList::from_names(names))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endbr_and_its_seal_are_both_endbr() {
        assert!(is_endbr(&[0xf3, 0x0f, 0x1e, 0xfa])); // endbr64
        assert!(is_endbr(&[0xf3, 0x0f, 0x1e, 0xfb])); // endbr32
        assert!(is_endbr(&[0x66, 0x0f, 0x1f, 0x00])); // the seal: osp nopl (%rax)
        assert!(!is_endbr(&[0xe8, 0x5b, 0xfd, 0xc3])); // call __fentry__
        assert!(!is_endbr(&[0xf3, 0x0f]));
    }

    #[test]
    fn lengths_as_the_kernel_decoder_walks_them() {
        // vfs_read on 6.12: endbr64, call __fentry__, push %r15, push %rbp.
        let code = [0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0xa7, 0xc7, 0xc3, 0xff, 0x41, 0x57, 0x55];
        let mut at = 0;
        let mut starts = Vec::new();
        while at < code.len() {
            starts.push(at);
            at += insn_len(&code[at..], 0xffff_ffff_8145_7340 + at as u64).expect("decodes") as usize;
        }
        assert_eq!(starts, [0, 4, 9, 11]);
        assert_eq!(insn_len(&[0x0f], 0), None, "a cut instruction is not one");
    }
}
