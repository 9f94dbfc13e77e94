//! A core dump opened against the kernel (or program) it was taken of, ready to evaluate
//! definitions: what `fevlint dry-run` and the language server's value hints share.
//!
//! Opening checks that the dump and the kernel are the same build (VMCOREINFO's
//! `BUILD-ID`, else the `SYMBOL(…)` addresses it records, shifted by `KERNELOFFSET`),
//! picks the CPU or thread whose registers are the arguments, translates through that
//! CPU's page tables when the dump records them (QEMU's CPU-state note) and indexes the
//! kernel's symbols at their run-time addresses. Evaluation itself is fevlint-exec's.
//!
//! Invariant: a [`Core`] never reads the kernel's files again after [`Core::open`]; it
//! holds the dump (memory-mapped, read lazily) and the symbol index.

use anyhow::{bail, Context};
use fevlint_exec::{Event, Frame, SymbolAt, Symbols};
use fevlint_kernel::Kernel;
use fevlint_load::elf::{is_elf, KernelElf};
use fevlint_load::symbols::VirtAddr;
use fevlint_load::Blob;
use fevlint_memory::{Arch as MemArch, Dump, Fault, FaultKind, Memory, PageTables, Regs};
use fevlint_syntax::machine::{Parsed, Target};
use fevlint_types::abi;
use fevlint_types::Arch;
use std::path::{Path, PathBuf};

/// Whose registers are the arguments, and through which page tables to read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pick {
    /// This CPU (kernel dump) or thread rank (user core); default the first.
    pub cpu: Option<usize>,
    /// The thread with this id (`pr_pid` of its `NT_PRSTATUS`).
    pub thread: Option<i32>,
    /// Translate through these page tables (a CR3 value).
    pub cr3: Option<u64>,
}

/// How the dump was matched to the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Match {
    /// VMCOREINFO's build-id equals the kernel image's.
    BuildId(String),
    /// No build-id to compare (or a known-broken one): these many `SYMBOL(…)` addresses
    /// of VMCOREINFO agree with the kernel's symbol map.
    Symbols(usize),
    /// Nothing to compare (a user-space core, or a kernel model without symbols).
    Unchecked,
}

/// Symbols of the kernel (or program) at run-time addresses.
#[derive(Debug)]
struct SymbolIndex {
    /// (address, name), sorted by address; every symbol but absolute and undefined ones.
    by_addr: Vec<(u64, String)>,
    /// A kernel's `_stext` and `_end` (relocated), when the map has them.
    bounds: Option<(u64, u64)>,
}

/// Where a kernel's (or program's) symbols come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SymbolSource {
    /// The kernel model's System.map or kallsyms file.
    Map,
    /// The ELF's own symbol table (a vmlinux, a program).
    SymbolTable,
    /// The compressed kallsyms tables of the image (a `vmlinuz` alone): these many.
    ImageKallsyms(usize),
    /// None: `$symbol` reads and `%pS` names are unknown.
    Missing,
}

impl SymbolIndex {
    fn new(kernel: &Kernel, image: Option<&KernelElf>, offset: u64) -> (SymbolIndex, SymbolSource) {
        let mut by_addr = Vec::new();
        let mut source = SymbolSource::Missing;
        let decoded;
        let table = match (kernel.symbols(), image.and_then(KernelElf::symbols)) {
            (Some(t), _) => {
                source = SymbolSource::Map;
                Some(&t.value)
            }
            (None, Some(t)) => {
                source = SymbolSource::SymbolTable;
                Some(t)
            }
            (None, None) => {
                // A `vmlinuz` carries no symbol table but its kallsyms tables, which
                // `/proc/kallsyms` prints: decoded the way `kernel fetch debian:` does.
                let payload = kernel.inputs().elf.as_ref().map(|e| &e.value);
                let percpu = kernel.config().map(|c| c.value.is_enabled("KALLSYMS_ABSOLUTE_PERCPU"));
                decoded = payload.and_then(|elf| {
                    let text = fevlint_load::kallsyms::kallsyms_text(elf, percpu).ok()?;
                    fevlint_load::symbols::SymbolTable::parse_kallsyms(text.as_bytes(), elf.path()).ok()
                });
                if let Some(t) = &decoded {
                    source = SymbolSource::ImageKallsyms(t.len());
                }
                decoded.as_ref()
            }
        };
        if let Some(table) = table {
            for s in table.iter() {
                if matches!(s.kind, b'a' | b'A' | b'U' | b'u' | b'N' | b'n') || s.name.is_empty() || s.addr.0 == 0 {
                    continue;
                }
                by_addr.push((s.addr.0.wrapping_add(offset), s.name.to_owned()));
            }
        }
        by_addr.sort();
        // A kernel's kallsyms names addresses of its image only (`is_ksym_addr`: `_stext`
        // to `_end` with KALLSYMS_ALL): not per-CPU offsets, not the stack or heap.
        let named = |n: &str| by_addr.iter().find(|(_, s)| s == n).map(|(a, _)| *a);
        let bounds = match (named("_stext").or_else(|| named("_text")), named("_end")) {
            (Some(start), Some(end)) if start < end => Some((start, end)),
            _ => None,
        };
        if let Some((start, end)) = bounds {
            by_addr.retain(|(a, _)| (start..=end).contains(a));
        }
        (SymbolIndex { by_addr, bounds }, source)
    }
}

impl Symbols for SymbolIndex {
    fn symbolize(&self, addr: u64) -> Option<SymbolAt> {
        if self.bounds.is_some_and(|(start, end)| !(start..end).contains(&addr)) {
            return None;
        }
        let i = self.by_addr.partition_point(|(a, _)| *a <= addr);
        let (start, name) = self.by_addr.get(i.checked_sub(1)?)?;
        // kallsyms: the size runs to the next symbol at a higher address.
        let next = self.by_addr[i..].iter().find(|(a, _)| a > start)?.0;
        Some(SymbolAt { name: name.clone(), offset: addr - start, size: next - start })
    }

    fn address(&self, name: &str) -> Option<u64> {
        self.by_addr.iter().find(|(_, n)| n == name).map(|(a, _)| *a)
    }
}

/// The dump, and behind it the image's own file contents: a gcore leaves out read-only
/// file-backed mappings (`.text`, `.rodata`), which the executable still holds.
struct DumpAndImage<'a> {
    dump: &'a Dump,
    image: Option<&'a KernelElf>,
    bias: u64,
}

impl Memory for DumpAndImage<'_> {
    fn read(&self, addr: fevlint_memory::VirtAddr, buf: &mut [u8]) -> Result<(), Fault> {
        match self.dump.read(addr, buf) {
            Err(f) if matches!(f.kind, FaultKind::Unmapped | FaultKind::NotInDump) => {
                // The image's link-time address: the run-time one less the load bias.
                let linked = VirtAddr(addr.0.wrapping_sub(self.bias));
                let from_image = self.image.and_then(|e| e.read_virt(linked, buf.len() as u64));
                match from_image {
                    Some(bytes) => {
                        buf.copy_from_slice(bytes);
                        Ok(())
                    }
                    None => Err(f),
                }
            }
            r => r,
        }
    }
}

/// A dump opened against its kernel.
pub struct Core {
    path: PathBuf,
    dump: Dump,
    image: Option<KernelElf>,
    symbols: SymbolIndex,
    symbol_source: SymbolSource,
    kaslr: u64,
    /// The picked CPU or thread: [`Core::open`] refuses a dump without one, so every
    /// argument slot is a register the dump recorded.
    thread: usize,
    arch: Arch,
    matched: Match,
}

impl std::fmt::Debug for Core {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Core").field("path", &self.path).field("format", &self.dump.format()).finish()
    }
}

/// A device or FIFO is never a core (and opening a FIFO would block): refused before
/// it is opened. `/proc/kcore` is a regular file.
fn refuse_special(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    let t = meta.file_type();
    let what = if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_dir() {
        "a directory"
    } else {
        return Ok(());
    };
    bail!("cannot read {}: it is {what}, not a regular file", path.display())
}

/// `0x…`, decimal, or `-N` (two's complement).
pub fn parse_number(s: &str) -> anyhow::Result<u64> {
    let t = s.trim();
    let (neg, t) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let v = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    }
    .with_context(|| format!("`{s}` is not a number"))?;
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// Compares VMCOREINFO's `SYMBOL(name)=addr` with the kernel's symbol map shifted by
/// the KASLR offset: (agreeing, disagreeing, first disagreement). Only values inside the
/// kernel image count: some entries are a pointer's value, not an address
/// (`VMCOREINFO_SYMBOL_ARRAY(mem_section)` prints where `mem_section` points).
fn compare_symbols(
    info: &fevlint_memory::VmcoreInfo,
    kernel: &Kernel,
    kaslr: u64,
) -> (usize, usize, Option<(String, u64, u64)>) {
    let Some(table) = kernel.symbols().map(|t| &t.value) else { return (0, 0, None) };
    let text = ["_stext", "_text"].iter().find_map(|n| table.by_name(n).next()).map(|s| s.addr.0.wrapping_add(kaslr));
    let end = ["_end", "__bss_stop"].iter().find_map(|n| table.by_name(n).next()).map(|s| s.addr.0.wrapping_add(kaslr));
    let (Some(start), Some(end)) = (text, end) else { return (0, 0, None) };
    let (mut agree, mut differ, mut first) = (0, 0, None);
    for (key, value) in info.entries() {
        let Some(name) = key.strip_prefix("SYMBOL(").and_then(|k| k.strip_suffix(')')) else { continue };
        let Ok(dumped) = u64::from_str_radix(value.trim_start_matches("0x"), 16) else { continue };
        if !(start..=end).contains(&dumped) {
            continue;
        }
        let Some(sym) = table.by_name(name).next() else { continue };
        let expected = sym.addr.0.wrapping_add(kaslr);
        if expected == dumped {
            agree += 1;
        } else {
            differ += 1;
            first.get_or_insert((name.to_owned(), dumped, expected));
        }
    }
    (agree, differ, first)
}

/// Refuses a kernel model that is not the dump's kernel.
fn check_match(
    core: &Path,
    kernel_path: &Path,
    k: &fevlint_memory::KernelCore,
    kernel: &Kernel,
) -> anyhow::Result<Match> {
    let Some(info) = k.vmcoreinfo() else { return Ok(Match::Unchecked) };
    let kaslr = k.kernel_offset();
    let release = info.osrelease().unwrap_or("unknown release");
    let (agree, differ, first) = compare_symbols(info, kernel, kaslr);
    if let (true, Some((name, dumped, expected))) = (differ > agree, &first) {
        bail!(
            "{} is not a dump of {}: VMCOREINFO puts {name} at 0x{dumped:x}, the kernel's symbol map at 0x{expected:x} \
             (KASLR offset 0x{kaslr:x}); the dump is of {release}",
            core.display(),
            kernel_path.display()
        );
    }
    let ours = kernel.inputs().elf.as_ref().and_then(|e| e.value.build_id_hex());
    if let (Some(dumped), Some(ours)) = (info.build_id(), ours) {
        if dumped.eq_ignore_ascii_case(&ours) {
            return Ok(Match::BuildId(ours));
        }
        // Some stable kernels (6.1.113–118) carry a broken build-id backport: the note
        // disagrees with the image though both are the same build. Accept only when the
        // release agrees and the recorded symbols do.
        let same_release = kernel.config().and_then(|c| c.value.release()).is_some_and(|r| release.starts_with(r));
        if !(same_release && agree >= 3) {
            bail!(
                "{} is a dump of build {dumped} ({release}), but {} is build {ours}",
                core.display(),
                kernel_path.display()
            );
        }
    }
    if let Some(ours) = kernel.config().and_then(|c| c.value.release()) {
        // The config names the upstream release (`6.1.176`); Debian's 6.1 kernels are
        // named by ABI (`uname -r` 6.1.0-50-686-pae). Another name of the same series is
        // the same kernel when the symbols VMCOREINFO records agree.
        let series = |v: &str| v.split('.').take(2).map(str::to_owned).collect::<Vec<_>>();
        let renamed = |r: &str| series(r) == series(ours) && agree >= 3 && differ == 0;
        if info.osrelease().is_some_and(|r| !r.starts_with(ours) && !renamed(r)) {
            bail!("{} is a dump of {release}, but {} is {ours}", core.display(), kernel_path.display());
        }
    }
    Ok(if agree > 0 { Match::Symbols(agree) } else { Match::Unchecked })
}

impl Core {
    /// Opens `core` as a dump of `kernel` (loaded from `kernel_path`, which is read again
    /// for an ELF image's own bytes and symbol table).
    pub fn open(kernel: &Kernel, kernel_path: &Path, core: &Path, pick: &Pick) -> anyhow::Result<Core> {
        refuse_special(core)?;
        let mut dump = Dump::open(core).with_context(|| format!("cannot open core {}", core.display()))?;
        let image = match Blob::read_in(kernel_path, kernel.cache().dir()) {
            Ok(blob) if is_elf(&blob.whole()) => KernelElf::parse(blob, kernel_path).ok(),
            _ => None,
        };
        // The kernel's KASLR offset, or a program's load bias (a PIE runs where the
        // loader put it: the core's `NT_FILE` note says where its first page went).
        let index = pick_thread(core, &dump, pick)?;
        let (kaslr, matched) = match &dump {
            Dump::Kernel(k) => (k.kernel_offset(), check_match(core, kernel_path, k, kernel)?),
            Dump::User(u) => (check_program(core, kernel_path, u, image.as_ref())?, Match::Unchecked),
        };
        // At a function's entry the CPU runs on its task's page tables, which map the
        // task's user memory (a `string` argument from user space) as well as the kernel:
        // translate through that CPU's CR3 when the dump records it.
        if let Dump::Kernel(k) = &mut dump {
            let from_note = k.qemu_cpus().get(index).map(|q| (q.cr3, q.cr4));
            let arch = k.arch();
            // Without QEMU's note, an i386 dump's VMCOREINFO says whether it pages with PAE.
            let pae = |i: &fevlint_memory::VmcoreInfo| if i.get("CONFIG_X86_PAE") == Some("y") { 1 << 5 } else { 0 };
            let cr4 = from_note.map(|n| n.1).or_else(|| k.vmcoreinfo().filter(|_| arch == MemArch::I386).map(pae));
            match (pick.cr3, from_note) {
                (Some(cr3), _) => k.set_page_tables(PageTables::at_cr3(arch, cr3, cr4)),
                (None, Some((cr3, cr4))) if cr3 != 0 => k.set_page_tables(PageTables::at_cr3(arch, cr3, Some(cr4))),
                _ => {}
            }
        } else if pick.cr3.is_some() {
            bail!("--cr3 applies to kernel dumps; {} is a user-space core", core.display());
        }
        let arch = match dump.threads().get(index).map(|t| t.regs) {
            Some(Regs::I386(_)) => Arch::X86_32,
            Some(Regs::X86_64(_)) => Arch::X86_64,
            None => kernel.arch,
        };
        let (symbols, symbol_source) = SymbolIndex::new(kernel, image.as_ref(), kaslr);
        Ok(Core { path: core.to_owned(), dump, image, symbols, symbol_source, kaslr, thread: index, arch, matched })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The dump's format, as `fevlint-memory` names it (`ELF vmcore`, `kdump (zlib)`, …).
    pub fn format(&self) -> String {
        self.dump.format()
    }

    /// The KASLR offset applied to every symbol address.
    pub fn kernel_offset(&self) -> u64 {
        self.kaslr
    }

    /// Where `$symbol` addresses and `%pS` names come from.
    pub fn symbol_source(&self) -> &SymbolSource {
        &self.symbol_source
    }

    pub fn matched(&self) -> &Match {
        &self.matched
    }

    /// The target of the registers in the dump (else the kernel's).
    pub fn target(&self) -> Target {
        match self.arch {
            Arch::X86_64 => Target::X86_64,
            Arch::X86_32 => Target::X86_32,
        }
    }

    /// A short description for messages: the format and whose registers.
    pub fn describe(&self) -> String {
        let whose = match self.dump.threads().get(self.thread) {
            Some(t) => match &self.dump {
                Dump::Kernel(_) => format!("CPU {}", self.thread),
                Dump::User(_) => format!("thread {}", t.tid),
            },
            None => "no registers".to_owned(),
        };
        format!("{}, {whose}", self.dump.format())
    }

    /// The state at the traced function's entry: the picked CPU's registers as slots,
    /// `*(sp)` as the caller, then `args` (`NAME=VALUE`, see [`set_arg`]) over them.
    pub fn frame(&self, kernel: &Kernel, function: &str, args: &[String]) -> anyhow::Result<Frame> {
        let target = self.target();
        let registers = fevlint_exec::slot_registers(target);
        let mut frame = Frame::default();
        let t = self.dump.threads().get(self.thread).context("the picked thread is gone")?;
        frame.slots = registers.iter().map(|r| t.regs.get(r).unwrap_or(0)).collect();
        let sp = t.regs.get("sp").unwrap_or(0);
        frame.return_address = read_pointer(&self.memory(), sp, target);
        frame.function_address = Some(t.regs.ip());
        for a in args {
            set_arg(&mut frame, a, registers, kernel, self.arch, function)?;
        }
        Ok(frame)
    }

    /// The function (and offset) the picked CPU or thread is stopped in: a definition of
    /// that function finds its arguments in the dump's registers.
    pub fn stopped_at(&self) -> Option<SymbolAt> {
        let t = self.dump.threads().get(self.thread)?;
        self.symbols.symbolize(t.regs.ip())
    }

    /// `func+0x4/0x370` for an address, as `%pS` prints it.
    pub fn symbol_at(&self, addr: u64) -> String {
        match self.symbols.symbolize(addr) {
            Some(s) => format!("{}+0x{:x}/0x{:x}", s.name, s.offset, s.size),
            None => format!("0x{addr:x}"),
        }
    }

    /// The symbol index, for printing `%pS` fields.
    pub fn symbols(&self) -> &dyn Symbols {
        &self.symbols
    }

    /// What `parsed` records with `frame`.
    pub fn evaluate(&self, parsed: &Parsed, frame: &Frame) -> Event {
        fevlint_exec::evaluate(parsed, self.target(), frame, &self.memory(), &self.symbols)
    }

    fn memory(&self) -> DumpAndImage<'_> {
        DumpAndImage { dump: &self.dump, image: self.image.as_ref(), bias: self.kaslr }
    }
}

/// The CPU or thread whose registers are the arguments. A dump that records none (no
/// `NT_PRSTATUS` note, or only zeroed ones as `/proc/kcore` and offline CPUs have) is
/// refused as a missing `--cpu N` is: its "registers" would be printed as values.
fn pick_thread(core: &Path, dump: &Dump, pick: &Pick) -> anyhow::Result<usize> {
    let threads = dump.threads();
    let index = match (pick.cpu, pick.thread) {
        (Some(n), _) => {
            if n >= threads.len() {
                bail!("{} has {} CPUs/threads; there is no {n}", core.display(), threads.len());
            }
            n
        }
        (None, Some(tid)) => threads
            .iter()
            .position(|t| t.tid == tid)
            .with_context(|| format!("{} has no thread {tid}", core.display()))?,
        (None, None) => {
            if threads.is_empty() {
                bail!(
                    "{} records no CPU or thread registers (no `NT_PRSTATUS` note): there are no arguments to read",
                    core.display()
                );
            }
            0
        }
    };
    let recorded = |r: &Regs| match r {
        Regs::X86_64(r) => r.0.iter().any(|&v| v != 0),
        Regs::I386(r) => r.0.iter().any(|&v| v != 0),
    };
    if !threads.get(index).is_some_and(|t| recorded(&t.regs)) {
        bail!(
            "{} records no registers for CPU/thread {index} (its `NT_PRSTATUS` is all zeros): there are no arguments to read",
            core.display()
        );
    }
    Ok(index)
}

/// Checks that a user-space core is a core of the program at `path` and returns the
/// program's load bias: the start of the mapping of its file's first page (`NT_FILE`),
/// less the page of its lowest allocated address (0 for a PIE, 0x400000 for a classic
/// executable, whose bias is then 0).
///
/// The program must be one of the files the core maps (same file, or same name when the
/// core was moved from another machine), and when the core holds the page with the
/// program's build-id note, the build-ids must agree: a core is never read with the
/// symbols and read-only data of another program (or of a kernel).
fn check_program(
    core: &Path,
    path: &Path,
    dump: &fevlint_memory::ElfCore,
    image: Option<&KernelElf>,
) -> anyhow::Result<u64> {
    let program = dump.files().iter().find(|m| m.file_offset == 0).map(|m| m.path.as_str());
    let of = || match program {
        Some(p) => format!("a user-space core of {p}"),
        None => "a user-space core".to_owned(),
    };
    let Some(image) = image else {
        bail!(
            "{} is {}; {} is not a program's ELF file: give the program the core was taken of as --kernel",
            core.display(),
            of(),
            path.display()
        );
    };
    if dump.files().is_empty() {
        bail!(
            "{} records no mapped files (no `NT_FILE` note): cannot tell whether it is a core of {}",
            core.display(),
            path.display()
        );
    }
    let ours = path.canonicalize().ok();
    let name = path.file_name();
    let same = |p: &str| {
        let p = Path::new(p);
        match (&ours, p.canonicalize()) {
            (Some(a), Ok(b)) => *a == b,
            _ => p.file_name().is_some() && p.file_name() == name,
        }
    };
    let Some(mapping) = dump.files().iter().find(|m| m.file_offset == 0 && same(&m.path)) else {
        bail!("{} is {}, not of {}", core.display(), of(), path.display());
    };
    // The build-id note as the core holds it (gdb and the kernel dump a file's first
    // page, where the linker puts `.note.gnu.build-id`).
    if let (Some(theirs), Some(ours)) = (dumped_build_id(dump, mapping, image), image.build_id()) {
        if theirs != ours {
            let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            bail!(
                "{} is a core of build {} of {}, but {} is build {}",
                core.display(),
                hex(&theirs),
                mapping.path,
                path.display(),
                hex(ours)
            );
        }
    }
    let lowest = image
        .sections()
        .iter()
        .filter(|s| s.flags & 2 != 0 && s.addr.0 != 0) // SHF_ALLOC
        .map(|s| s.addr.0)
        .min()
        .unwrap_or(0);
    Ok(mapping.start.0.wrapping_sub(lowest & !0xfff))
}

/// The build-id the core holds at the file offset of the image's build-id note, when
/// that page of the mapping is in the core.
fn dumped_build_id(
    dump: &fevlint_memory::ElfCore,
    mapping: &fevlint_memory::FileMapping,
    image: &KernelElf,
) -> Option<Vec<u8>> {
    image.build_id()?;
    let note = image.section(".note.gnu.build-id")?;
    let at = note.file_range.as_ref()?.start as u64;
    let addr = mapping.start.checked_add(at.checked_sub(mapping.file_offset)?)?;
    if addr >= mapping.end {
        return None;
    }
    // Elf_Nhdr (12 bytes) and "GNU\0", then the descriptor.
    let mut head = [0u8; 16];
    dump.read(addr, &mut head).ok()?;
    let descsz = u32::from_le_bytes(head[4..8].try_into().ok()?) as usize;
    if &head[12..16] != b"GNU\0" || u32::from_le_bytes(head[8..12].try_into().ok()?) != 3 || descsz > 64 {
        // Not a build-id note where the image has one: another file.
        return Some(Vec::new()).filter(|_| head.iter().any(|&b| b != 0));
    }
    let mut desc = vec![0u8; descsz];
    dump.read(addr + 16, &mut desc).ok()?;
    Some(desc)
}

fn read_pointer(mem: &dyn Memory, addr: u64, target: Target) -> Option<u64> {
    if addr == 0 {
        return None;
    }
    let mut b = [0u8; 8];
    let n = target.ptr_size as usize;
    mem.read(fevlint_memory::VirtAddr(addr), &mut b[..n]).ok()?;
    Some(u64::from_le_bytes(b))
}

/// `NAME=VALUE`: a register (`di`, `%rsi`), `slotN`, or a parameter of `function`
/// placed in its register by the ABI.
pub fn set_arg(
    frame: &mut Frame,
    spec: &str,
    registers: &[&str],
    kernel: &Kernel,
    arch: Arch,
    function: &str,
) -> anyhow::Result<()> {
    let Some((name, value)) = spec.split_once('=') else { bail!("--arg {spec}: expected NAME=VALUE") };
    let value = parse_number(value)?;
    let bare = name.trim_start_matches('%');
    let reg_slot = |r: &str| {
        let short = r.trim_start_matches(['r', 'e']);
        registers.iter().position(|&x| x == r || x == short || (r.len() > 2 && x == &r[1..]))
    };
    if let Some(n) = bare.strip_prefix("slot").and_then(|n| n.parse::<usize>().ok()) {
        let slot = frame.slots.get_mut(n).with_context(|| format!("--arg {spec}: no slot {n}"))?;
        *slot = value;
        return Ok(());
    }
    if let Some(i) = reg_slot(bare) {
        frame.slots[i] = value;
        return Ok(());
    }
    // A parameter name: the register the ABI put it in.
    let facts = kernel.function(function).with_context(|| format!("--arg {spec}: no function `{function}`"))?;
    let (Some(info), Some(types)) = (facts.prototypes.first(), kernel.types()) else {
        bail!("--arg {spec}: no prototype for `{function}` on this kernel")
    };
    let locs = abi::locate(arch, types, &info.proto)?;
    let Some(loc) = locs.iter().find(|l| l.name.as_deref() == Some(name)) else {
        let names: Vec<&str> = locs.iter().filter_map(|l| l.name.as_deref()).collect();
        bail!("--arg {spec}: `{function}` has no parameter `{name}` (it has {})", names.join(", "))
    };
    let Some(reg) = loc.loc.first_register() else {
        bail!("--arg {spec}: `{name}` is not in a register ({}): no slot reads it", loc.loc.describe())
    };
    let i = reg_slot(reg).with_context(|| format!("--arg {spec}: register {reg} is not an argument slot"))?;
    frame.slots[i] = value;
    Ok(())
}
