//! Register sets from `NT_PRSTATUS` (x86_64 `user_regs_struct`, whose first 21 words are
//! `struct pt_regs` in order; i386 `user_regs_struct`), and the threads/CPUs they belong to.

/// The machine a dump was taken on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    I386,
}

/// x86_64 `user_regs_struct` (`elf_gregset_t`), 27 words; `pt_regs` is its prefix up to `ss`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct X86_64Regs(pub [u64; 27]);

/// i386 `user_regs_struct`, 17 words.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct I386Regs(pub [u32; 17]);

const X86_64_NAMES: [&str; 27] = [
    "r15", "r14", "r13", "r12", "bp", "bx", "r11", "r10", "r9", "r8", "ax", "cx", "dx", "si", "di", "orig_ax", "ip",
    "cs", "flags", "sp", "ss", "fs_base", "gs_base", "ds", "es", "fs", "gs",
];

const I386_NAMES: [&str; 17] =
    ["bx", "cx", "dx", "si", "di", "bp", "ax", "ds", "es", "fs", "gs", "orig_ax", "ip", "cs", "flags", "sp", "ss"];

/// Strips an `r`/`e` prefix the way the kernel's register names (`%di`, `%rdi`, `%edi`)
/// all mean the same slot.
fn canonical(name: &str, arch: Arch) -> &str {
    let n = name.strip_prefix('%').unwrap_or(name);
    let legacy = ["ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "ip", "flags"];
    let prefix = if arch == Arch::X86_64 { 'r' } else { 'e' };
    if let Some(rest) = n.strip_prefix(prefix) {
        if legacy.contains(&rest) {
            return rest;
        }
    }
    if n == "eflags" || n == "rflags" {
        return "flags";
    }
    n
}

impl X86_64Regs {
    pub const NAMES: [&'static str; 27] = X86_64_NAMES;

    /// The register by its kernel name (`di`, `%di`, `rdi`, `r8`, `ip`, `orig_ax`, ...).
    pub fn get(&self, name: &str) -> Option<u64> {
        let n = canonical(name, Arch::X86_64);
        X86_64_NAMES.iter().position(|&k| k == n).map(|i| self.0[i])
    }

    pub fn set(&mut self, name: &str, value: u64) -> bool {
        let n = canonical(name, Arch::X86_64);
        match X86_64_NAMES.iter().position(|&k| k == n) {
            Some(i) => {
                self.0[i] = value;
                true
            }
            None => false,
        }
    }

    /// Decodes `user_regs_struct` (216 bytes, little-endian); `None` when too short.
    pub fn from_bytes(b: &[u8]) -> Option<X86_64Regs> {
        let b = b.get(..27 * 8)?;
        let mut r = [0u64; 27];
        for (i, w) in b.chunks_exact(8).enumerate() {
            r[i] = u64::from_le_bytes(w.try_into().ok()?);
        }
        Some(X86_64Regs(r))
    }

    pub fn ip(&self) -> u64 {
        self.0[16]
    }
    pub fn sp(&self) -> u64 {
        self.0[19]
    }
}

impl I386Regs {
    pub const NAMES: [&'static str; 17] = I386_NAMES;

    pub fn get(&self, name: &str) -> Option<u32> {
        let n = canonical(name, Arch::I386);
        let n = match n {
            "xds" | "xes" | "xfs" | "xgs" | "xcs" | "xss" => &n[1..],
            "orig_eax" => "orig_ax",
            n => n,
        };
        I386_NAMES.iter().position(|&k| k == n).map(|i| self.0[i])
    }

    pub fn from_bytes(b: &[u8]) -> Option<I386Regs> {
        let b = b.get(..17 * 4)?;
        let mut r = [0u32; 17];
        for (i, w) in b.chunks_exact(4).enumerate() {
            r[i] = u32::from_le_bytes(w.try_into().ok()?);
        }
        Some(I386Regs(r))
    }

    pub fn ip(&self) -> u32 {
        self.0[12]
    }
}

/// One register set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regs {
    X86_64(X86_64Regs),
    I386(I386Regs),
}

impl Regs {
    /// A register by name, widened to 64 bits.
    pub fn get(&self, name: &str) -> Option<u64> {
        match self {
            Regs::X86_64(r) => r.get(name),
            Regs::I386(r) => r.get(name).map(u64::from),
        }
    }

    pub fn ip(&self) -> u64 {
        match self {
            Regs::X86_64(r) => r.ip(),
            Regs::I386(r) => u64::from(r.ip()),
        }
    }

    pub fn arch(&self) -> Arch {
        match self {
            Regs::X86_64(_) => Arch::X86_64,
            Regs::I386(_) => Arch::I386,
        }
    }
}

/// A thread (user core) or CPU (kernel core) from one `NT_PRSTATUS` note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thread {
    /// Position among the dump's `NT_PRSTATUS` notes: the CPU number in a kernel dump
    /// (the notes are written in CPU order), the thread's rank in a user core.
    pub index: usize,
    /// `pr_pid`: the thread id (user core) or the pid of the task running on the CPU
    /// (kdump; QEMU writes the vCPU's index + 1).
    pub tid: i32,
    /// `pr_cursig`.
    pub signal: u16,
    pub regs: Regs,
}

/// Decodes an `NT_PRSTATUS` note's descriptor.
pub(crate) fn parse_prstatus(desc: &[u8], arch: Arch, index: usize) -> Option<Thread> {
    // struct elf_prstatus: elf_siginfo (12) + short pr_cursig (+2 pad) + sigpend + sighold
    // (longs) + pid/ppid/pgrp/sid (ints) + 4 timevals + pr_reg.
    let (pid_off, reg_off) = match arch {
        Arch::X86_64 => (32, 112),
        Arch::I386 => (24, 72),
    };
    let signal = u16::from_le_bytes(desc.get(12..14)?.try_into().ok()?);
    let tid = i32::from_le_bytes(desc.get(pid_off..pid_off + 4)?.try_into().ok()?);
    let regs = match arch {
        Arch::X86_64 => Regs::X86_64(X86_64Regs::from_bytes(desc.get(reg_off..)?)?),
        Arch::I386 => Regs::I386(I386Regs::from_bytes(desc.get(reg_off..)?)?),
    };
    Some(Thread { index, tid, signal, regs })
}
