//! `fevlint dry-run`: what each definition would record, evaluated over a core dump.
//!
//! The evaluation is fevlint-exec's; this file only opens the dump (fevlint-memory) and
//! the kernel (fevlint-kernel, for symbol names and parameter placement), picks the
//! registers, and prints.

use super::check::read_script_text;
use super::Format;
use crate::kernel::abi;
use crate::kernel::load::elf::{is_elf, KernelElf};
use crate::kernel::load::Arch;
use crate::kernel::load::Blob;
use crate::kernel::symbols::VirtAddr;
use crate::kernel::Kernel;
use crate::syntax::machine::Target;
use anyhow::{bail, Context};
use clap::Args;
use fevlint_exec::{Frame, SymbolAt, Symbols};
use fevlint_memory::{Dump, Fault, FaultKind, Memory, PageTables, Regs};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct DryRunArgs {
    /// The kernel the dump was taken of (folder, BTF, vmlinux, vmlinuz): symbols for
    /// `%pS` and `$symbol`, prototypes for `--arg NAME=VALUE`. For a user-space core, the
    /// program's ELF (with its symbol table and DWARF).
    #[arg(long, value_name = "KERNEL")]
    pub kernel: PathBuf,
    /// The dump: kdump/vmcore ELF, QEMU `dump-guest-memory` (ELF or kdump-compressed),
    /// makedumpfile's compressed or flattened files, `/proc/kcore`, or a gdb `gcore`.
    #[arg(long, value_name = "CORE")]
    pub core: PathBuf,
    /// Registers of this CPU (kernel dump) or thread rank (user core); default the first.
    #[arg(long, value_name = "N", conflicts_with = "thread")]
    pub cpu: Option<usize>,
    /// Registers of the thread with this id (`pr_pid` of its `NT_PRSTATUS`).
    #[arg(long, value_name = "TID")]
    pub thread: Option<i32>,
    /// Set an argument: a register (`di=0x…`, `%rsi=…`), a slot (`slot2=…`) or a
    /// parameter name of the traced function (`file=0xffff…`), placed by the ABI.
    #[arg(long = "arg", value_name = "NAME=VALUE")]
    pub args: Vec<String>,
    /// Translate through these page tables (a CR3 value) instead of the CPU's own (QEMU's
    /// CPU-state note) or the kernel's (`init_top_pgt`): for a kdump file, which records
    /// no CR3, to read the task's user memory.
    #[arg(long, value_name = "ADDR", value_parser = parse_address)]
    pub cr3: Option<u64>,
    /// Print each event's `format` file too.
    #[arg(long)]
    pub show_format: bool,
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// The script.
    pub script: PathBuf,
}

/// Symbols of the kernel (or program), shifted by the dump's KASLR offset.
struct SymbolIndex {
    /// (address, name), sorted by address; every symbol but absolute ones.
    by_addr: Vec<(u64, String)>,
}

impl SymbolIndex {
    fn new(kernel: &Kernel, image: Option<&KernelElf>, offset: u64) -> SymbolIndex {
        let mut by_addr = Vec::new();
        let table = kernel.symbols().map(|t| &t.value).or_else(|| image?.symbols());
        if let Some(table) = table {
            for s in table.iter() {
                if matches!(s.kind, b'a' | b'A' | b'U' | b'u' | b'N' | b'n') || s.name.is_empty() || s.addr.0 == 0 {
                    continue;
                }
                by_addr.push((s.addr.0.wrapping_add(offset), s.name.to_owned()));
            }
        }
        by_addr.sort();
        SymbolIndex { by_addr }
    }
}

impl Symbols for SymbolIndex {
    fn symbolize(&self, addr: u64) -> Option<SymbolAt> {
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
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Fault> {
        match self.dump.read(addr, buf) {
            Err(f) if matches!(f.kind, FaultKind::Unmapped | FaultKind::NotInDump) => {
                let from_image =
                    self.image.and_then(|e| e.read_virt(VirtAddr(addr.wrapping_sub(self.bias)), buf.len() as u64));
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

/// A device or FIFO is never a core (and opening a FIFO would block): refused before
/// it is opened. `/proc/kcore` is a regular file.
fn refuse_special(path: &std::path::Path) -> anyhow::Result<()> {
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

fn parse_address(s: &str) -> Result<u64, String> {
    parse_number(s).map_err(|e| format!("{e:#}"))
}

fn parse_number(s: &str) -> anyhow::Result<u64> {
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

pub fn run(args: &DryRunArgs) -> anyhow::Result<ExitCode> {
    refuse_special(&args.core)?;
    let mut dump = Dump::open(&args.core).with_context(|| format!("cannot open core {}", args.core.display()))?;
    let kernel = Kernel::open(&args.kernel).with_context(|| format!("cannot load kernel {}", args.kernel.display()))?;
    let kaslr = match &dump {
        Dump::Kernel(k) => {
            if let (Some(info), Some(elf)) =
                (k.vmcoreinfo(), kernel.inputs().elf.as_ref().and_then(|e| e.value.build_id_hex()))
            {
                if let Some(dumped) = info.build_id() {
                    if !dumped.eq_ignore_ascii_case(&elf) {
                        bail!(
                            "{} is a dump of build {dumped} ({}), but {} is build {elf}",
                            args.core.display(),
                            info.osrelease().unwrap_or("unknown release"),
                            args.kernel.display()
                        );
                    }
                }
            }
            k.kernel_offset()
        }
        Dump::User(_) => 0,
    };
    let threads = dump.threads();
    let index = match (args.cpu, args.thread) {
        (Some(n), _) => {
            if n >= threads.len() {
                bail!("{} has {} CPUs/threads; there is no {n}", args.core.display(), threads.len());
            }
            Some(n)
        }
        (None, Some(tid)) => Some(
            threads
                .iter()
                .position(|t| t.tid == tid)
                .with_context(|| format!("{} has no thread {tid}", args.core.display()))?,
        ),
        (None, None) => (!threads.is_empty()).then_some(0),
    };
    // At a function's entry the CPU runs on its task's page tables, which map the task's
    // user memory (a `string` argument from user space) as well as the kernel: translate
    // through that CPU's CR3 when the dump records it (QEMU's CPU-state note).
    if let Dump::Kernel(k) = &mut dump {
        let from_note = index.and_then(|i| k.qemu_cpus().get(i).map(|q| (q.cr3, q.cr4 & (1 << 12) != 0)));
        let levels = |la57: bool| if la57 { 5 } else { 4 };
        match (args.cr3, from_note) {
            (Some(cr3), note) => k.set_page_tables(PageTables::new(cr3, levels(note.is_some_and(|n| n.1)))),
            (None, Some((cr3, la57))) if cr3 != 0 => k.set_page_tables(PageTables::new(cr3, levels(la57))),
            _ => {}
        }
    } else if args.cr3.is_some() {
        bail!("--cr3 applies to kernel dumps; {} is a user-space core", args.core.display());
    }
    let thread = index.and_then(|i| dump.threads().get(i));
    let arch = match thread.map(|t| t.regs) {
        Some(Regs::I386(_)) => Arch::X86_32,
        Some(Regs::X86_64(_)) => Arch::X86_64,
        None => kernel.arch,
    };
    let target = match arch {
        Arch::X86_64 => Target::X86_64,
        Arch::X86_32 => Target::X86_32,
    };
    let image = match Blob::read(&args.kernel) {
        Ok(blob) if is_elf(&blob.whole()) => KernelElf::parse(blob, &args.kernel).ok(),
        _ => None,
    };
    let symbols = SymbolIndex::new(&kernel, image.as_ref(), kaslr);
    let memory = DumpAndImage { dump: &dump, image: image.as_ref(), bias: kaslr };
    let text = read_script_text(&args.script)?;
    let mut parser = crate::syntax::Parser::new();
    let lines = parser.lines(&text, target);
    let registers = fevlint_exec::slot_registers(target);

    let mut out = String::new();
    let mut json = Vec::new();
    let mut rejected = 0;
    for lp in &lines {
        let Some(parsed) = &lp.parsed else { continue };
        if parsed.rejection.is_some() {
            rejected += 1;
            eprintln!(
                "{}:{}: the kernel rejects this line (run `fevlint check`); not evaluated",
                args.script.display(),
                lp.number + 1
            );
            continue;
        }
        let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
        let mut frame = Frame::default();
        if let Some(t) = thread {
            frame.slots = registers.iter().map(|r| t.regs.get(r).unwrap_or(0)).collect();
            let sp = t.regs.get("sp").unwrap_or(0);
            frame.return_address = read_pointer(&memory, sp, target);
            frame.function_address = Some(t.regs.ip());
        } else {
            frame.slots = vec![0; registers.len()];
        }
        for a in &args.args {
            set_arg(&mut frame, a, registers, &kernel, arch, function)?;
        }
        let event = fevlint_exec::evaluate(parsed, target, &frame, &memory, &symbols);
        match args.format {
            Format::Human => {
                out.push_str(&event.trace_line());
                out.push('\n');
                for f in event.fields.iter().filter(|f| f.zero_because.is_some()) {
                    out.push_str(&format!(
                        "  note: {} recorded 0: {}\n",
                        f.name,
                        f.zero_because.as_deref().unwrap_or_default()
                    ));
                }
                if args.show_format {
                    out.push_str(&fevlint_exec::format_file(parsed, target));
                }
            }
            Format::Json => json.push(serde_json::json!({
                "line": lp.number + 1,
                "definition": lp.line.span.text(&text).trim_end(),
                "trace": event.trace_line(),
                "event": event,
                "format": fevlint_exec::format_file(parsed, target),
            })),
        }
    }
    match args.format {
        Format::Human => print!("{out}"),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "version": 1,
                "core": args.core.display().to_string(),
                "dump_format": dump.format(),
                "kernel_offset": kaslr,
                "events": json,
            }))?
        ),
    }
    Ok(if rejected > 0 { ExitCode::from(super::EXIT_FINDINGS) } else { ExitCode::SUCCESS })
}

fn read_pointer(mem: &dyn Memory, addr: u64, target: Target) -> Option<u64> {
    if addr == 0 {
        return None;
    }
    let mut b = [0u8; 8];
    let n = target.ptr_size as usize;
    mem.read(addr, &mut b[..n]).ok()?;
    Some(u64::from_le_bytes(b))
}

/// `--arg NAME=VALUE`: a register, `slotN`, or a parameter of `function` placed by the ABI.
fn set_arg(
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
