//! The mainline dialect (`*.dynevents` files, `kprobe_events`/`dynamic_events` lines)
//! checked against kernels, as `*.fev` scripts are.
//!
//! First the kernel's own parser (fevlint-mainline) runs with each kernel's dialect and a
//! [`KernelEnv`] that answers what that kernel would answer while parsing and registering
//! (symbols, function entries, the kprobe blacklist, the ftrace list, tracepoints, BTF):
//! a line the kernel refuses gets the kernel's `error_log` message at its caret. Then what
//! the kernel accepts but may not mean what its author meant: which parameter each
//! `$argN` or `%reg` holds at the entry (A302), which member each `+OFF(…)` reads and
//! whether it is a pointer (T404, T405), whether the `:TYPE` fits the member (T401–T403),
//! and, with several kernels, whether the same offsets read the same members (D503, with
//! the offset that reads it on the other kernel).
//!
//! Invariant: a diagnostic is only ever about a fact a kernel model settled; what no
//! kernel data can decide is left alone (a false positive costs more than a miss).

use crate::diagnostic::{Diagnostic, Severity};
use crate::rules::{self, Rule};
use fevlint_kernel::Kernel;
use fevlint_mainline::{
    Btf, BtfKind, BtfMember, BtfProto, Dialect, Env, Fetch, FuncEntry, KernelVersion, Line, Probe, ProbeKind,
    RegisterError, Rejection,
};
use fevlint_syntax::Span;
use fevlint_types::abi;
use fevlint_types::layout::{self, MemberPath, Placement};
use fevlint_types::model::{Composite, Type, TypeNamespace, TypeRef, TypeSource};
use fevlint_types::Arch;
use std::fmt::Write as _;

/// Deepest `+OFF(…)` nesting followed (the kernel allows 16 fetch steps).
const MAX_DEREFS: usize = 16;

/// The dialect of a kernel: its release from the config header (the sublevel decides
/// the stable backports), the bundled README of that series, `%pd`'s offsets from its BTF.
pub fn dialect_for(kernel: &Kernel) -> Result<Dialect, String> {
    let banner = image_banner(kernel);
    let release = kernel.config_release().or(banner).ok_or(
        "cannot tell the kernel's release: give a kernel with its config (`config` in its folder) or its image",
    )?;
    let release = release.as_str();
    let version = KernelVersion::parse(release).ok_or_else(|| format!("release `{release}` is not a version"))?;
    let readme = match (version.major, version.minor) {
        (6, 1) => fevlint_mainline::readmes::DEBIAN_6_1_192_AMD64,
        (6, 12) => fevlint_mainline::readmes::DEBIAN_6_12_117_AMD64,
        _ => return Err(format!("release {release}: only the 6.1.y and 6.12.y dialects are modelled")),
    };
    let arch = match kernel.arch {
        Arch::X86_64 => fevlint_mainline::Arch::X86_64,
        Arch::X86_32 => fevlint_mainline::Arch::I386,
    };
    // The kernel's own README text when its image is loaded (a vmlinux, a vmlinuz's
    // payload): the options it was built with decide what its parser accepts.
    let own = kernel.inputs().elf.as_ref().and_then(|e| {
        let s = e.value.section(".rodata")?;
        let bytes = e.value.data().get(s.file_range.clone()?)?;
        fevlint_mainline::readme_from_image(bytes).map(str::to_owned)
    });
    let mut d = match own.as_deref().map(|r| Dialect::for_arch(arch, version, r)) {
        Some(Ok(d)) => d,
        _ => Dialect::for_arch(arch, version, readme).map_err(|e| format!("release {release}: {e}"))?,
    };
    if let Some(types) = kernel.types() {
        let offset = |s: &str, path: &str| {
            let ty = types.find_type(TypeNamespace::Struct, s).ok()?.into_iter().next()?;
            let m = layout::resolve_member(types, ty, path).ok()??;
            u32::try_from(m.offset).ok()
        };
        if let (Some(name), Some(dentry)) = (offset("dentry", "d_name.name"), offset("file", "f_path.dentry")) {
            d.dentry_offsets = (name, dentry);
        }
    }
    if let Some(modules) = kernel.config_enabled("MODULES") {
        d.modules = modules;
    }
    Ok(d)
}

/// The upstream version in the image's `linux_banner` (`Linux version 6.1.0-56-amd64 (…)
/// #1 SMP … Debian 6.1.192-2`: the Debian part carries the sublevel when the release
/// does not), when the image is loaded.
fn image_banner(kernel: &Kernel) -> Option<String> {
    let e = &kernel.inputs().elf.as_ref()?.value;
    let s = e.section(".rodata")?;
    let bytes = e.data().get(s.file_range.clone()?)?;
    const START: &[u8] = b"Linux version ";
    let at = bytes.windows(START.len()).position(|w| w == START)? + START.len();
    let line = bytes[at..].split(|&b| b == b'\n' || b == 0).next()?;
    let line = std::str::from_utf8(line).ok()?;
    let debian = line.rsplit("Debian ").next().and_then(|r| r.split_whitespace().next());
    let release = line.split_whitespace().next()?;
    Some(debian.filter(|d| d.starts_with(|c: char| c.is_ascii_digit())).unwrap_or(release).to_owned())
}

/// Whether a function starts with ENDBR64, which decides where a probe on its entry
/// sits: `arch_adjust_kprobe_addr` moves `SYM` and `SYM+0` to `SYM+4` past an ENDBR64
/// (or the 4-byte NOP the boot seals it to: `is_endbr()` takes both, on a CPU with IBT
/// or without), and takes `SYM+4` as the entry too. Only kernels built with
/// CONFIG_X86_KERNEL_IBT have any; GCC leaves it out of static functions whose address
/// is never taken (`do_sys_openat2` on Debian's 6.12: the probe stays at `+0x0`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Endbr {
    /// Read the function's first bytes from the kernel image (the default). Without
    /// an image, every function of an IBT kernel is taken to start with one (most do),
    /// and the checks that need the answer say they assumed it.
    #[default]
    Image,
    /// Every function of an IBT kernel starts with ENDBR64 (no image is read for it).
    Present,
    /// No function starts with ENDBR64: probes stay at `+0`.
    Absent,
}

impl Endbr {
    /// `image`, `present` or `absent` (the `--endbr` and `endbr =` spellings).
    pub fn parse(s: &str) -> Result<Endbr, String> {
        match s {
            "image" => Ok(Endbr::Image),
            "present" => Ok(Endbr::Present),
            "absent" => Ok(Endbr::Absent),
            _ => Err(format!("unknown value `{s}` (expected `image`, `present` or `absent`)")),
        }
    }
}

/// One instruction start of a function, as a probe place ([`KernelEnv::probe_places`]).
#[derive(Clone, Debug)]
pub struct ProbePlace {
    pub offset: u64,
    /// `endbr64`, `call __fentry__`, `push`.
    pub text: String,
    /// What `register_kprobe` answers for `SYM+offset`.
    pub point: fevlint_kernel::code::ProbePoint,
    /// Why the place is special, if it is.
    pub note: Option<String>,
}

/// fevlint-kernel behind the parser's questions. "Don't know" is `None`, never a guess.
pub struct KernelEnv<'k> {
    kernel: &'k Kernel,
    btf: Option<KernelBtf<'k>>,
    /// CONFIG_X86_KERNEL_IBT: functions may start with ENDBR64 (`is_endbr()` is a stub
    /// returning false without it).
    ibt: bool,
    endbr: Endbr,
    /// 6.12's `can_probe` refuses INT/UD instructions itself.
    rules: fevlint_kernel::code::Rules,
}

impl<'k> KernelEnv<'k> {
    pub fn new(kernel: &'k Kernel, dialect: &Dialect) -> KernelEnv<'k> {
        let from_btf = kernel.types_from.as_deref().is_some_and(|s| s.contains("BTF"));
        let btf = match kernel.types() {
            Some(types) if dialect.btf_args && from_btf => Some(KernelBtf { types }),
            _ => None,
        };
        // Without a config, the image's bytes answer (an image built without IBT has none).
        let ibt = kernel.config_enabled("X86_KERNEL_IBT") != Some(false);
        let rules = fevlint_kernel::code::Rules {
            refuses_exception_insns: dialect.generation >= fevlint_mainline::Generation::Linux6_12,
            endbr: None,
        };
        KernelEnv { kernel, btf, ibt, endbr: Endbr::Image, rules }
    }

    /// The ENDBR64 assumption (`--endbr`).
    pub fn with_endbr(mut self, endbr: Endbr) -> KernelEnv<'k> {
        self.endbr = endbr;
        self.rules.endbr = match endbr {
            Endbr::Image => None,
            Endbr::Present => Some(self.ibt),
            Endbr::Absent => Some(false),
        };
        self
    }

    fn symbol_count_of(&self, name: &str) -> Option<usize> {
        Some(self.kernel.symbols()?.value.by_name(name).count())
    }

    /// Whether `symbol` starts with ENDBR64, and whether the image said so (`false`:
    /// assumed, by [`Endbr`]).
    pub fn starts_with_endbr(&self, symbol: &str) -> Option<(bool, bool)> {
        if !self.ibt {
            return Some((false, true));
        }
        match self.endbr {
            Endbr::Present => Some((true, false)),
            Endbr::Absent => Some((false, false)),
            Endbr::Image => {
                let read = (|| {
                    let addr = self.kernel.symbols()?.value.first(symbol)?.addr;
                    self.kernel.code()?.starts_with_endbr(addr)
                })();
                Some(read.map_or((true, false), |e| (e, true)))
            }
        }
    }

    /// Where a probe on `symbol`'s entry sits: 4 past an ENDBR64, else 0.
    pub fn entry_offset(&self, symbol: &str) -> u64 {
        match self.starts_with_endbr(symbol) {
            Some((true, _)) => 4,
            _ => 0,
        }
    }

    /// Whether `symbol+offset` lies in the kernel (`_stext` to `_end`), where
    /// `kallsyms_lookup_size_offset` finds a symbol for it (with CONFIG_KALLSYMS_ALL);
    /// elsewhere `_kprobe_addr` fails with -ENOENT. `None` without a symbol map.
    fn in_kernel(&self, symbol: &str, offset: u64) -> Option<bool> {
        let map = &self.kernel.symbols()?.value;
        let (start, end) = (map.addr_of("_stext")?.0, map.addr_of("_end")?.0);
        let addr = map.first(symbol)?.addr.0.checked_add(offset)?;
        Some((start..=end).contains(&addr))
    }

    /// Why the kernel's code could not settle a question about `symbol+offset`.
    pub fn why_unknown(&self, symbol: &str, offset: u64) -> String {
        match self.endbr {
            Endbr::Present | Endbr::Absent if offset == 4 => {
                return "`--endbr` says to assume it, not to read it".to_owned();
            }
            _ => {}
        }
        if self.kernel.symbols().is_none() {
            return "the kernel has no symbol map".to_owned();
        }
        if self.kernel.image().is_none() {
            return match self.kernel.image_error() {
                Some(e) => format!("its image cannot be read ({e})"),
                None => {
                    "no image of the kernel's code (give a folder with its vmlinuz, or `debian:VERSION`)".to_owned()
                }
            };
        }
        match self.probe_point(symbol, offset) {
            Some(fevlint_kernel::code::ProbePoint::Unknown(why)) => why.to_owned(),
            _ => "the kernel's code does not say".to_owned(),
        }
    }

    /// The instruction starts of `symbol` from its start to a little past `offset`
    /// (offsets from the symbol), from the image's code.
    pub fn instruction_starts(&self, symbol: &str, offset: u64) -> Option<Vec<u64>> {
        if offset > 1 << 16 {
            return None;
        }
        let addr = self.kernel.symbols()?.value.first(symbol)?.addr.0;
        let code = self.kernel.code()?;
        let starts = code.boundaries(addr, addr.checked_add(offset)?.checked_add(12)?).ok()?;
        let near: Vec<u64> = starts.iter().map(|a| a - addr).collect();
        // The last few before the offset and the first few after it.
        let i = near.partition_point(|&o| o <= offset);
        Some(near[i.saturating_sub(4)..(i + 3).min(near.len())].to_vec())
    }

    /// The first `count` instructions of `symbol` from the image's code, each with what
    /// `register_kprobe` answers for a probe at its start and why the place is special
    /// (the ENDBR64 a probe at `+0` is moved past, the ftrace call site).
    pub fn probe_places(&self, symbol: &str, count: usize) -> Option<Vec<ProbePlace>> {
        let addr = self.kernel.symbols()?.value.first(symbol)?.addr;
        let code = self.kernel.code()?;
        let endbr = self.ibt && matches!(self.starts_with_endbr(symbol), Some((true, _)));
        let places = code
            .instructions(addr, count)
            .into_iter()
            .map(|insn| {
                let point = code.register(addr, insn.offset, self.rules);
                let note = if insn.offset == 0 && endbr {
                    Some("ENDBR64: a probe on `+0` is moved past it, to `+4`".to_owned())
                } else if insn.ftrace {
                    Some("the ftrace call site: a kprobe here is put on ftrace, no breakpoint".to_owned())
                } else if insn.offset == 0 {
                    Some("the function's entry".to_owned())
                } else {
                    None
                };
                ProbePlace { offset: insn.offset, text: insn.text, point, note }
            })
            .collect();
        Some(places)
    }

    /// `register_kprobe` at `symbol+offset` from the image's code, when there is one.
    pub fn probe_point(&self, symbol: &str, offset: u64) -> Option<fevlint_kernel::code::ProbePoint> {
        let addr = self.kernel.symbols()?.value.first(symbol)?.addr;
        let code = self.kernel.code()?;
        Some(code.register(addr, offset, self.rules))
    }
}

impl Env for KernelEnv<'_> {
    fn func_entry(&self, symbol: &str, offset: u64) -> Option<FuncEntry> {
        if symbol.contains(':') {
            return None;
        }
        // The kernel reads the first 4 code bytes (`is_endbr`): from the image, or as
        // `Endbr` says; an assumption is not an answer.
        match self.symbol_count_of(symbol)? {
            0 => Some(FuncEntry::NoSymbol),
            _ if offset == 0 => Some(FuncEntry::Entry),
            _ if self.in_kernel(symbol, offset) == Some(false) => Some(FuncEntry::NoSymbol),
            _ if offset != 4 || !self.ibt => Some(FuncEntry::NotEntry),
            _ => match self.starts_with_endbr(symbol) {
                Some((true, true)) => Some(FuncEntry::Entry),
                Some((false, true)) => Some(FuncEntry::NotEntry),
                // Assumed (no image, or `--endbr present/absent`): the parser records
                // the assumption, as it did before images were read.
                Some((true, false)) if self.endbr == Endbr::Present => Some(FuncEntry::Entry),
                Some((false, false)) if self.endbr == Endbr::Absent => Some(FuncEntry::NotEntry),
                _ => None,
            },
        }
    }

    fn symbol_count(&self, symbol: &str) -> Option<u32> {
        if symbol.contains(':') {
            return None;
        }
        self.symbol_count_of(symbol).map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    }

    fn tracepoint(&self, name: &str) -> Option<Option<String>> {
        let types = self.kernel.types()?;
        let typedef = types.find_type(TypeNamespace::Ordinary, &format!("btf_trace_{name}")).ok()?;
        if typedef.is_empty() {
            // Not in vmlinux: a module's tracepoint, or none; the parser applies
            // CONFIG_MODULES.
            return Some(None);
        }
        Some(Some(format!("__probestub_{name}")))
    }

    fn data_symbol(&self, name: &str) -> Option<bool> {
        if name.contains(':') {
            return None;
        }
        self.symbol_count_of(name).map(|n| n > 0)
    }

    fn register_kprobe(&self, symbol: Option<&str>, offset: u64) -> Option<Result<(), RegisterError>> {
        let symbol = symbol.filter(|s| !s.contains(':'))?;
        if let Some(b) = self.kernel.kprobe_blacklist() {
            if b.value.contains_name(symbol) {
                return Some(Err(RegisterError::Failed));
            }
        }
        match self.symbol_count_of(symbol)? {
            0 => Some(Err(RegisterError::NoSymbol)),
            _ if offset == 0 && self.kernel.kprobe_blacklist().is_some() => Some(Ok(())),
            _ if self.in_kernel(symbol, offset) == Some(false) => Some(Err(RegisterError::NoSymbol)),
            // Inside the function: the image's code decides (instruction boundary, the
            // reserved sites, what kprobes cannot single-step).
            _ => {
                use fevlint_kernel::code::{ProbePoint, Refusal};
                match self.probe_point(symbol, offset)? {
                    ProbePoint::Accepted { .. } => Some(Ok(())),
                    ProbePoint::Refused(Refusal::NotBoundary { .. }) => Some(Err(RegisterError::NotInsnBoundary)),
                    ProbePoint::Refused(Refusal::Invalid(_)) => Some(Err(RegisterError::Failed)),
                    ProbePoint::Refused(Refusal::Unsupported(_)) => Some(Err(RegisterError::Unsupported)),
                    ProbePoint::Unknown(_) => None,
                }
            }
        }
    }

    fn ftrace_target(&self, symbol: &str) -> Option<bool> {
        let list = self.kernel.filter_functions()?;
        if symbol.contains(['*', '?', '[']) {
            return None;
        }
        // ftrace's filter takes a leading digit as an index into its records, counted
        // from 1 in available_filter_functions order (`add_rec_by_index`, kstrtoul).
        if symbol.starts_with(|c: char| c.is_ascii_digit()) {
            let records = list.value.len() + list.value.invalid_lines();
            return Some(kstrtoul(symbol).is_some_and(|i| i >= 1 && i <= records as u64));
        }
        // No function is named with a colon (`MOD:SYM` is not ftrace's `:mod:` syntax).
        Some(list.value.contains(symbol))
    }

    fn btf(&self) -> Option<&dyn Btf> {
        self.btf.as_ref().map(|b| b as &dyn Btf)
    }
}

/// The kernel's `kstrtoul(s, 0, …)`: `0x` hex, `0` octal, else decimal, all of `s`
/// (one trailing newline allowed), no sign.
fn kstrtoul(s: &str) -> Option<u64> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None if s.len() > 1 && s.starts_with('0') => (&s[1..], 8),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// The parser's BTF questions over fevlint-kernel's BTF (type ids are BTF ids).
struct KernelBtf<'k> {
    types: &'k dyn TypeSource,
}

fn id(t: TypeRef) -> u32 {
    u32::try_from(t.0).unwrap_or(u32::MAX)
}

impl KernelBtf<'_> {
    /// What the kernel's `type->type` reads: the target of a pointer, typedef, qualifier
    /// or function, the size of a sized kind (the field is a union of both).
    fn type_field(&self, t: u32) -> Option<u32> {
        Some(match self.types.get(TypeRef(u64::from(t))).ok()? {
            Type::Pointer { target } | Type::Typedef { target, .. } | Type::Qualified { target, .. } => id(target),
            Type::Int { size, .. } | Type::Float { size, .. } | Type::Enum { size, .. } => size,
            Type::Struct(c) | Type::Union(c) => u32::try_from(c.size).unwrap_or(u32::MAX),
            Type::Function(p) => p.ret.map_or(0, id),
            _ => return None,
        })
    }

    fn is_u8(&self, t: u32) -> bool {
        matches!(self.resolve(t), Some((_, BtfKind::Int { bits: 8, signed: false, .. })))
    }
}

impl Btf for KernelBtf<'_> {
    fn func_proto(&self, name: &str) -> Option<BtfProto> {
        let f = self.types.functions(name).ok()?.into_iter().next()?;
        Some(BtfProto {
            ret: f.proto.ret.map_or(0, id),
            params: f.proto.params.iter().map(|p| (p.name.clone().unwrap_or_default(), id(p.ty))).collect(),
        })
    }

    fn resolve(&self, t: u32) -> Option<(u32, BtfKind)> {
        let mut t = t;
        for _ in 0..32 {
            if t == 0 {
                return Some((0, BtfKind::Void));
            }
            let kind = match self.types.get(TypeRef(u64::from(t))).ok()? {
                Type::Typedef { target, .. } | Type::Qualified { target, .. } => {
                    t = id(target);
                    continue;
                }
                Type::Void => BtfKind::Void,
                Type::Pointer { target } => BtfKind::Ptr { target: id(target) },
                Type::Struct(_) => BtfKind::Struct,
                Type::Union(_) => BtfKind::Union,
                Type::Int { size, signed, .. } => BtfKind::Int { bits: size * 8, signed, offset: 0 },
                Type::Enum { size: 8, .. } => BtfKind::Enum64,
                Type::Enum { .. } => BtfKind::Enum,
                _ => BtfKind::Other,
            };
            return Some((t, kind));
        }
        None
    }

    fn member(&self, struct_id: u32, name: &str) -> Result<Option<BtfMember>, ()> {
        fn find(types: &dyn TypeSource, t: TypeRef, name: &str, base: u64, depth: usize) -> Option<BtfMember> {
            let (_, ty) = layout::strip(types, t).ok()?;
            let (Type::Struct(c) | Type::Union(c)) = ty else { return None };
            for m in c.members.iter() {
                match &m.name {
                    Some(n) if n == name => {
                        return Some(BtfMember {
                            bit_offset: u32::try_from(base + m.bit_offset).ok()?,
                            bitfield_size: m.bitfield_size,
                            type_id: id(m.ty),
                        })
                    }
                    None if depth < 32 => {
                        if let Some(found) = find(types, m.ty, name, base + m.bit_offset, depth + 1) {
                            return Some(found);
                        }
                    }
                    _ => {}
                }
            }
            None
        }
        match self.types.get(TypeRef(u64::from(struct_id))) {
            Ok(Type::Struct(_) | Type::Union(_)) => Ok(find(self.types, TypeRef(u64::from(struct_id)), name, 0, 0)),
            _ => Err(()),
        }
    }

    fn is_char_ptr(&self, t: u32) -> bool {
        self.type_field(t).is_some_and(|inner| self.is_u8(inner))
    }

    fn is_char_array(&self, t: u32) -> bool {
        match self.types.get(TypeRef(u64::from(t))) {
            Ok(Type::Array { element, .. }) => self.is_u8(id(element)),
            _ => false,
        }
    }
}

/// Every kernel's findings on a `*.dynevents` text, spans in the file. Without a
/// kernel, the 6.12.117 dialect's parser alone.
pub fn check(text: &str, kernels: &[&Kernel]) -> Vec<Diagnostic> {
    check_with(text, kernels, Endbr::default())
}

/// [`check`] with an ENDBR64 assumption other than the default.
pub fn check_with(text: &str, kernels: &[&Kernel], endbr: Endbr) -> Vec<Diagnostic> {
    let mut per_kernel: Vec<(Option<String>, Vec<Diagnostic>)> = Vec::new();
    let mut walks: Vec<(String, Vec<Walked>)> = Vec::new();
    if kernels.is_empty() {
        let d = Dialect::debian_6_12_117();
        per_kernel.push((None, parse_findings(text, &d, &fevlint_mainline::NoKernel).0));
    }
    for k in kernels {
        let dialect = match dialect_for(k) {
            Ok(d) => d,
            Err(e) => {
                let mut d = syntax(Severity::Info, Span::new(0, 0), format!("not checked against {}: {e}", k.name));
                d.kernel = Some(k.name.clone().into());
                per_kernel.push((Some(k.name.clone()), vec![d]));
                continue;
            }
        };
        let env = KernelEnv::new(k, &dialect).with_endbr(endbr);
        let (mut found, probes) = parse_findings(text, &dialect, &env);
        for (start, probe) in &probes {
            found.extend(unsettled(&env, probe, *start));
        }
        for d in found.iter_mut().filter(|d| d.message.ends_with("not an instruction boundary")) {
            if let Some(help) = nearest_boundaries(&env, &text[d.span.start..d.span.end]) {
                let on = if kernels.len() > 1 { format!(" on {}", k.name) } else { String::new() };
                d.notes.push(format!("help{on}: {help}").into());
            }
        }
        let mut walked = Vec::new();
        for (start, probe) in &probes {
            walked.extend(meaning(k, probe, *start, &mut found));
        }
        for d in &mut found {
            d.kernel = Some(k.name.clone().into());
        }
        per_kernel.push((Some(k.name.clone()), found));
        walks.push((k.name.clone(), walked));
    }
    let mut out = merge(per_kernel);
    drift(kernels, &walks, &mut out);
    // `# fevlint: ignore[T407]` works as in `*.fev` files: the kernel cuts each line at
    // its first `#` too.
    let suppressions = crate::rules::suppress::parse(text);
    crate::rules::suppress::apply(text, &suppressions, &mut out);
    out.sort_by_key(|d| (d.span.start, d.code));
    out
}

/// The instruction starts around a refused `SYM+OFF` (the place word).
fn nearest_boundaries(env: &KernelEnv<'_>, place: &str) -> Option<String> {
    let (symbol, offset) = place.split_once('+')?;
    let offset = kstrtoul(offset)?;
    let fevlint_kernel::code::ProbePoint::Refused(fevlint_kernel::code::Refusal::NotBoundary { prev, next }) =
        env.probe_point(symbol, offset)?
    else {
        return None;
    };
    let at = |o: u64| format!("`{symbol}+{o}`");
    match (prev, next) {
        (Some(p), Some(n)) => Some(format!("instructions start at {} and {}", at(p), at(n))),
        (Some(p), None) => Some(format!("an instruction starts at {}", at(p))),
        (None, Some(n)) => Some(format!("an instruction starts at {}", at(n))),
        (None, None) => None,
    }
}

/// What the kernel decides from its code and the model could not settle (no image, or
/// code the boot rewrites): an info diagnostic, as the parser's assumption.
fn unsettled(env: &KernelEnv<'_>, probe: &Probe, start: usize) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for a in &probe.assumptions {
        let (span, message) = match a {
            fevlint_mainline::Assumption::Registers { symbol: Some(s), offset, span } if *offset != 0 => (
                span,
                format!("not checked: whether the kernel can probe `{s}+{offset}`: {}", env.why_unknown(s, *offset)),
            ),
            fevlint_mainline::Assumption::FunctionEntry { name, offset: 4, span, .. } => (
                span,
                format!(
                    "not checked: whether `{name}` starts with ENDBR64 (then `+4` is its entry): {}",
                    env.why_unknown(name, 4)
                ),
            ),
            _ => continue,
        };
        out.push(syntax(Severity::Info, Span::new(start + span.start, start + span.end), message));
    }
    out
}

/// A diagnostic every kernel gave alike is reported once, without a kernel name.
fn merge(per_kernel: Vec<(Option<String>, Vec<Diagnostic>)>) -> Vec<Diagnostic> {
    let n = per_kernel.len();
    let mut out: Vec<Diagnostic> = Vec::new();
    let all: Vec<Diagnostic> = per_kernel.into_iter().flat_map(|(_, d)| d).collect();
    for d in &all {
        let same = |o: &Diagnostic| o.code == d.code && o.span == d.span && o.message == d.message;
        let count = all.iter().filter(|o| same(o)).count();
        if count == n && n > 1 {
            if !out.iter().any(|o| same(o) && o.kernel.is_none()) {
                let mut one = d.clone();
                one.kernel = None;
                // Notes that differ per kernel (each names its kernel) are all kept.
                for o in all.iter().filter(|o| same(o)) {
                    for note in &o.notes {
                        if !one.notes.contains(note) {
                            one.notes.push(note.clone());
                        }
                    }
                }
                out.push(one);
            }
        } else {
            out.push(d.clone());
        }
    }
    out
}

/// A finding under the `*.fev` rule of the same meaning (its registered name and
/// severity, so `fevlint.toml` severities and selections apply alike).
fn diag(rule: &Rule, span: Span, message: String) -> Diagnostic {
    Diagnostic::new(rule, span, message)
}

/// The parser's verdict on a line, as S001 with the verdict's own severity (a line the
/// transcription does not model is only information).
fn syntax(severity: Severity, span: Span, message: String) -> Diagnostic {
    Diagnostic { severity, ..Diagnostic::new(&rules::S001, span, message) }
}

/// The parser's verdict per line: rejections as diagnostics, accepted probes with
/// where their line starts.
fn parse_findings(text: &str, dialect: &Dialect, env: &dyn Env) -> (Vec<Diagnostic>, Vec<(usize, Probe)>) {
    let mut found = Vec::new();
    let mut probes = Vec::new();
    for fl in fevlint_mainline::check_file(dialect, env, text) {
        let line_len = text[fl.start..].split('\n').next().map_or(0, |l| l.trim_end_matches('\r').len());
        match fl.result {
            Ok(Line::Probe(p)) => probes.push((fl.start, p)),
            Ok(_) => {}
            Err(Rejection::Logged(last)) => {
                // The kernel's word is the first entry the write logged (a few paths log
                // a second, more generic one after it).
                let e = last.first();
                let at = fl.start + e.byte.min(line_len);
                let word_end = text[at..].find(|c: char| c.is_whitespace()).map_or(text.len(), |i| at + i).max(at + 1);
                let end = word_end.min(fl.start + line_len.max(1)).max(at);
                let mut d = syntax(
                    Severity::Error,
                    Span::new(at, end.max(at)),
                    format!("the kernel rejects this line: {}", e.message),
                );
                d.notes.push(format!("error_log: {}", e.render().lines().next().unwrap_or_default()).into());
                if last.first.is_some() {
                    d.notes.push(format!("then: {}", last.render().lines().next().unwrap_or_default()).into());
                }
                d.notes.push(format!("write(2) fails with {}", last.errno.name()).into());
                found.push(d);
            }
            Err(Rejection::Silent { errno, why }) => found.push(syntax(
                Severity::Error,
                Span::new(fl.start, fl.start + line_len),
                format!("the kernel rejects this line with {} and no error_log entry: {why}", errno.name()),
            )),
            Err(Rejection::Unmodelled { what }) => found.push(syntax(
                Severity::Info,
                Span::new(fl.start, fl.start + line_len),
                format!("not checked: {what}"),
            )),
        }
    }
    (found, probes)
}

/// What one argument reads on one kernel: the function, the parameter, the member path
/// of each dereference (for drift).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Walked {
    /// The probe's place and the argument's name: the same argument on another kernel.
    key: (String, String),
    /// Per `+OFF(…)`, innermost first: (offset span, offset, the member's dotted path
    /// from the struct, the struct's name).
    steps: Vec<(Span, i64, String, String)>,
    function: String,
    /// The whole argument in the file.
    span: Span,
    /// What the argument reads, in C (`file->f_path.dentry`), and its type.
    expr: String,
    ty: String,
    /// Per BTF member step (`->f_path`, `.dentry`): the member, its struct and its offset
    /// there on this kernel (for hovers; BTF names do not drift, offsets do).
    named: Vec<NamedStep>,
}

/// A BTF member step as written (`->f_path`), its struct, its offset there.
type NamedStep = (String, String, u64);

/// The base of a fetch chain: the parameter it holds at the entry, if settled.
fn base_param(
    kernel: &Kernel,
    probe: &Probe,
    fetch: &Fetch,
    arg_span: Span,
    found: &mut Vec<Diagnostic>,
) -> Option<(TypeRef, String)> {
    let types = kernel.types()?;
    let fevlint_mainline::Place::Symbol { name: function, offset: 0, module: None, .. } = &probe.place else {
        return None;
    };
    // A tprobe runs at the tracepoint's stub function, whose first parameter is the
    // probe's `void *__data`: `$argN` is the stub's parameter N+1 (trace_probe.c's
    // `code->param++` for TPARG_FL_TPOINT), registers are the stub's.
    let tracepoint = probe.kind == ProbeKind::Tprobe;
    let stub = format!("__probestub_{function}");
    let function = if tracepoint { &stub } else { function };
    let entry = matches!(probe.kind, ProbeKind::Kprobe | ProbeKind::FprobeEntry | ProbeKind::Tprobe);
    let slot = match fetch {
        Fetch::Arg { n, .. } if entry || probe.kind.is_return() => n.checked_sub(1)? as usize + usize::from(tracepoint),
        // `%di` names `pt_regs.di`: `rdi` (x86_64) or `edi`... as the ABI spells it.
        Fetch::Register { name } if entry => abi::arg_registers(kernel.arch)
            .iter()
            .position(|r| r.len() == name.len() + 1 && r.ends_with(name.as_str()) && !r[1..].starts_with('r'))
            .or_else(|| abi::arg_registers(kernel.arch).iter().position(|r| r == name))?,
        _ => return None,
    };
    let facts = kernel.function(function).ok()?;
    let info = facts.prototypes.first()?;
    let locs = abi::locate(kernel.arch, types, &info.proto).ok()?;
    let holds = abi::slot_holds(kernel.arch, &locs);
    let written = match fetch {
        Fetch::Arg { n, .. } => format!("$arg{n}"),
        Fetch::Register { name } => format!("%{name}"),
        _ => String::new(),
    };
    match holds.get(slot) {
        Some(Some(h)) if h.parts == 1 && h.start == 0 => {
            let p = &locs[h.param];
            Some((p.ty, p.name.clone().unwrap_or_else(|| format!("parameter {}", h.param + 1))))
        }
        // A part of a by-value struct or register pair: a raw register value, which is
        // what it is; nothing to follow.
        Some(Some(_)) => None,
        Some(None) if !info.proto.variadic => {
            let in_regs = holds.iter().flatten().count();
            found.push(
                diag(&rules::A302, arg_span,
                    format!(
                        "`{written}` reads a register with no argument in it: `{function}` has {in_regs} parameter{} in registers",
                        if in_regs == 1 { "" } else { "s" }
                    ),
                )
                .note(format!("on {}", kernel.name)),
            );
            None
        }
        // `$argN` past the registers reads the stack (`regs_get_kernel_argument`): an
        // argument only if that many parameters went to the stack.
        None if !info.proto.variadic => {
            let width = abi::register_size(kernel.arch);
            let nth = (slot - holds.len()) as u64;
            let on_stack = locs.iter().any(|l| matches!(l.loc, abi::Loc::Stack { offset } if offset / width == nth));
            if !on_stack && locs.iter().all(|l| !matches!(l.loc, abi::Loc::Unknown)) {
                found.push(diag(&rules::A302, arg_span,
                    format!(
                        "`{written}` reads the stack (`$stack{}`), but `{function}` has {} parameter{}, none passed there",
                        nth + 1,
                        locs.len(),
                        if locs.len() == 1 { "" } else { "s" }
                    ),
                ));
            }
            None
        }
        _ => None,
    }
}

/// One way of reading an argument's chain: the members named and what is wrong with it.
#[derive(Clone, Debug, Default)]
struct Reading {
    expr: String,
    steps: Vec<(Span, i64, String, String)>,
    found: Vec<Diagnostic>,
    /// The C type of what the last step reached.
    ty: String,
}

impl Reading {
    /// Nothing wrong (a read through a container, T407, is an assumption, not an error).
    fn fits(&self) -> bool {
        self.found.iter().all(|d| d.is(&rules::T407))
    }
}

/// What a walk over one argument needs.
struct ArgWalk<'a> {
    kernel: &'a Kernel,
    types: &'a dyn TypeSource,
    arg: &'a fevlint_mainline::Arg,
    /// (offset, its span in the file), innermost first.
    chain: Vec<(i64, Span)>,
    /// Where the probe's line starts in the file (the parser's spans are per line).
    line_start: usize,
}

/// Most readings tried per argument (union alternatives multiply).
const MAX_READINGS: usize = 64;

impl ArgWalk<'_> {
    /// Walks dereference `i` onwards from a value of type `ty` spelt `expr`: the first
    /// reading that fits, trying every union alternative (any member that fits is what
    /// the author may mean), else the first reading's findings.
    fn explore(&self, i: usize, ty: TypeRef, mut r: Reading, budget: &mut usize) -> Reading {
        let types = self.types;
        if i == self.chain.len() {
            return r;
        }
        *budget = budget.saturating_sub(1);
        let (offset, span) = (self.chain[i].0, self.chain[i].1);
        let Ok((_, t)) = layout::strip(types, ty) else { return r };
        let Type::Pointer { target } = t else {
            // A saved register (`regs->di` of a syscall wrapper's `struct pt_regs`) holds
            // a pointer as often as a number: the syscall's `filename`, a user pointer
            // the kernel reads through the user accessors on x86 (see `docs/
            // mainline-checks.md`, "User memory").
            if r.steps.last().is_some_and(|s| s.3 == "struct pt_regs") {
                return r;
            }
            let name = layout::type_name(types, ty).unwrap_or_default();
            r.found.push(diag(
                &rules::T405,
                span,
                format!("`+{offset}(…)` dereferences `{}`, which is a `{name}`, not a pointer", r.expr),
            ));
            return r;
        };
        let Ok((_, pointee)) = layout::strip(types, target) else { return r };
        let (Type::Struct(c) | Type::Union(c)) = &pointee else {
            return r; // char *, void *, arrays: nothing to name
        };
        // `struct file`, without the qualifiers of the pointer's target (`const`).
        let keyword = if matches!(pointee, Type::Union(_)) { "union" } else { "struct" };
        let struct_name = match &c.name {
            Some(n) => format!("{keyword} {n}"),
            None => layout::type_name(types, target).unwrap_or_default(),
        };
        let Ok(offset_u) = u64::try_from(offset) else { return r };
        let members = layout::member_at(types, target, offset_u).unwrap_or_default();
        let last = i + 1 == self.chain.len();
        // An array copies raw bytes from where the last dereference points: no member
        // is read there (`+0(p):x8[8]` over any struct, even an empty one).
        if last && self.arg.ty.as_ref().is_some_and(|t| t.array.is_some()) {
            return r;
        }
        let mut starts: Vec<MemberPath> = members.iter().filter(|m| m.place == Placement::Start).cloned().collect();
        if last {
            // The structs and arrays that start where a leaf starts are read too (8
            // bytes of an 8-byte `kernel_cap_t` whose first leaf is a `u32`).
            let mut outer = Vec::new();
            for m in &starts {
                for n in 1..m.names.len() {
                    let prefix = m.names[..n].join(".");
                    if let Ok(Some(p)) = layout::resolve_member(types, target, &prefix) {
                        if p.offset == m.offset && !starts.iter().chain(&outer).any(|q: &MemberPath| q.names == p.names)
                        {
                            outer.push(p);
                        }
                    }
                }
            }
            starts.extend(outer);
        }
        let mut exact: Vec<&MemberPath> = starts.iter().collect();
        if !exact.is_empty() {
            // Likeliest first: a pointer where another load follows; the size stored
            // on the last one.
            let want = if last { self.arg.ty.as_ref().and_then(|t| scalar_bytes(&t.name)) } else { None };
            let pointer = |m: &MemberPath| matches!(layout::strip(types, m.ty), Ok((_, Type::Pointer { .. })));
            exact.sort_by_key(|m| if last { Some(m.size) != want } else { !pointer(m) });
            let mut first: Option<Reading> = None;
            let mut assumed: Option<Reading> = None;
            for m in exact {
                if *budget == 0 && first.is_some() {
                    break;
                }
                let mut next = r.clone();
                next.expr = format!("{}->{}", r.expr, m.dotted());
                next.ty = layout::type_name(types, m.ty).unwrap_or_default();
                next.steps.push((span, offset, m.dotted(), struct_name.clone()));
                let done = self.finish(i, m.ty, self.explore(i + 1, m.ty, next, budget));
                if done.found.len() == r.found.len() {
                    return done; // nothing found on the way: what the author meant
                }
                if done.fits() {
                    assumed.get_or_insert(done);
                } else {
                    first.get_or_insert(done);
                }
            }
            return assumed.or(first).unwrap_or(r);
        }
        if offset_u >= c.size {
            let want = if last { self.arg.ty.as_ref().and_then(|t| scalar_bytes(&t.name)).unwrap_or(8) } else { 8 };
            let extensions = layout::past_end(types, target, offset_u, want).unwrap_or_default();
            if extensions.iter().any(|e| e.how == layout::Extends::Family) {
                // A base struct whose callers pass a larger one (`struct sockaddr *`
                // filled as a `sockaddr_in6`): which one is the caller's to know.
                r.found.push(
                    diag(
                        &rules::T407,
                        span,
                        format!(
                            "offset {offset} is past the end of `{struct_name}` ({} bytes): it fits {}",
                            c.size,
                            crate::resolve::extensions_list(types, &extensions)
                        ),
                    )
                    .note(format!(
                        "the probe assumes `{}` points to a larger struct that starts like `{struct_name}`",
                        r.expr
                    )),
                );
                return r;
            }
            if let Some(e) = extensions.into_iter().next() {
                let (container, m) = (e.container, e.member);
                // Past the end of the declared type, a member of a struct that embeds
                // it at offset 0 (`tcp_sk(sk)`): the fev rule T407's finding.
                let container_name = layout::type_name(types, container).unwrap_or_default();
                r.found.push(
                    diag(&rules::T407, span,
                        format!(
                            "offset {offset} is past the end of `{struct_name}` ({} bytes): `{}` of `{container_name}`, which embeds it",
                            c.size,
                            m.dotted()
                        ),
                    )
                    .note(format!("the probe assumes `{}` is inside a `{container_name}`", r.expr)),
                );
                r.expr = format!("(({container_name} *){})->{}", r.expr, m.dotted());
                r.ty = layout::type_name(types, m.ty).unwrap_or_default();
                r.steps.push((span, offset, m.dotted(), container_name));
                let next = self.explore(i + 1, m.ty, r, budget);
                return self.finish(i, m.ty, next);
            }
        }
        match members.first() {
            Some(m) if matches!(m.place, Placement::Inside { .. }) => {
                let delta = match m.place {
                    Placement::Inside { delta } => delta,
                    _ => 0,
                };
                let mty = layout::type_name(types, m.ty).unwrap_or_default();
                r.found.push(
                    diag(
                        &rules::T404,
                        span,
                        format!(
                            "offset {offset} lands {delta} byte{} into `{}` ({mty}, at {}) of `{struct_name}`",
                            if delta == 1 { "" } else { "s" },
                            m.dotted(),
                            m.offset
                        ),
                    )
                    .note(format!("{} is a `{struct_name} *` on {}", r.expr, self.kernel.name)),
                );
            }
            _ => {
                let why = if offset_u >= c.size {
                    format!("past the end of `{struct_name}` ({} bytes)", c.size)
                } else {
                    format!("in padding of `{struct_name}`")
                };
                r.found.push(diag(&rules::T404, span, format!("offset {offset} is {why}")));
            }
        }
        r
    }

    /// After the last dereference: whether the `:TYPE` fits the member reached.
    fn finish(&self, i: usize, ty: TypeRef, mut r: Reading) -> Reading {
        if i + 1 != self.chain.len() || !r.found.iter().all(|d| d.is(&rules::T407)) || r.steps.len() != self.chain.len()
        {
            return r;
        }
        if let (Some(t), Some(span)) = (&self.arg.ty, self.type_span()) {
            // The low bytes of a saved register are its narrower argument (`int flags`
            // in `regs->dx`): not a size mismatch.
            let register = r.steps.last().is_some_and(|s| s.3 == "struct pt_regs");
            if !(register && scalar_bytes(&t.name).is_some_and(|b| b <= 8)) {
                type_fits(self.types, ty, &r.expr, t, span, false, &mut r.found);
            }
        }
        r
    }

    fn type_span(&self) -> Option<Span> {
        self.arg.ty.as_ref().map(|t| self.chain_shift(&t.span))
    }

    fn chain_shift(&self, s: &std::ops::Range<usize>) -> Span {
        Span::new(self.line_start + s.start, self.line_start + s.end)
    }
}

/// The checks on an accepted probe that the kernel does not make.
fn meaning(kernel: &Kernel, probe: &Probe, start: usize, found: &mut Vec<Diagnostic>) -> Vec<Walked> {
    let mut out = Vec::new();
    let Some(types) = kernel.types() else { return out };
    let function = match &probe.place {
        fevlint_mainline::Place::Symbol { name, .. } => name.clone(),
        fevlint_mainline::Place::Address { .. } => return out,
    };
    for arg in &probe.args {
        let shift = |s: &std::ops::Range<usize>| Span::new(start + s.start, start + s.end);
        user_fetches(kernel, probe, arg, start, found);
        // Innermost first: the chain of dereferences down to the base.
        let mut chain = Vec::new();
        let mut f = &arg.fetch;
        while let Fetch::Deref { offset, inner, offset_span, .. } = f {
            let span = if arg.verbatim { shift(offset_span) } else { shift(&arg.span) };
            chain.push((*offset, span));
            f = inner;
            if chain.len() > MAX_DEREFS {
                break;
            }
        }
        chain.reverse();
        let (base, named) = match f {
            Fetch::Btf { base, fields } => match btf_base(kernel, types, probe, base, fields) {
                Some((ty, expr, named)) => (Some((ty, expr)), named),
                None => (None, Vec::new()),
            },
            _ => (base_param(kernel, probe, f, shift(&arg.body_span), found), Vec::new()),
        };
        let Some((ty, expr)) = base else {
            continue;
        };
        let ty_name = layout::type_name(types, ty).unwrap_or_default();
        let walk = ArgWalk { kernel, types, arg, chain, line_start: start };
        let reading = if walk.chain.is_empty() {
            let mut r = Reading { expr, ty: ty_name, ..Reading::default() };
            if let (Some(t), Some(span)) = (&arg.ty, walk.type_span()) {
                // A BTF `char *` or `char[]` is read as a string by the kernel itself
                // (`check_prepare_btf_string_fetch`); it refuses other types.
                type_fits(types, ty, &r.expr, t, span, true, &mut r.found);
            }
            r
        } else {
            walk.explore(0, ty, Reading { expr, ty: ty_name, ..Reading::default() }, &mut MAX_READINGS.clone())
        };
        found.extend(reading.found);
        out.push(Walked {
            key: (format!("{}/{}", probe.group, probe.event), arg.name.clone()),
            steps: reading.steps,
            function: function.clone(),
            span: shift(&arg.span),
            expr: reading.expr,
            ty: reading.ty,
            named,
        });
    }
    out
}

/// The edits that fix T408 in `text` within `span`: drop the `u` of `+u…(` or of
/// `:ustring` (the kernel fetch reads kernel memory, and user memory too on x86).
pub fn user_fetch_fixes(text: &str, span: Span, kernels: &[&Kernel]) -> Vec<(Span, String)> {
    let mut out: Vec<(Span, String)> = Vec::new();
    for d in check(text, kernels).into_iter().filter(|d| d.is(&rules::T408)) {
        if d.span.end < span.start || d.span.start > span.end || out.iter().any(|(s, _)| *s == d.span) {
            continue;
        }
        if let Some(rest) = text.get(d.span.start..d.span.end).and_then(|w| w.strip_prefix('u')) {
            out.push((d.span, rest.to_owned()));
        }
    }
    out
}

/// Where `fetch`'s value points when that is certainly kernel memory: the kernel stack,
/// a `struct pt_regs` (saved on the kernel stack), kernel data.
fn kernel_memory(kernel: &Kernel, probe: &Probe, fetch: &Fetch) -> Option<String> {
    let kernel_half = match kernel.arch {
        Arch::X86_64 => 0xffff_8000_0000_0000u64,
        Arch::X86_32 => 0xc000_0000,
    };
    match fetch {
        Fetch::StackPointer => Some("`$stack` is the kernel stack".to_owned()),
        Fetch::Register { name } if name == "sp" => Some("`%sp` is the kernel stack".to_owned()),
        Fetch::Symbol { name } => Some(format!("`@{name}` is kernel data")),
        Fetch::Address(a) if *a >= kernel_half => Some(format!("`@{a:#x}` is a kernel address")),
        Fetch::Register { .. } | Fetch::Arg { .. } => {
            let types = kernel.types()?;
            let (ty, name) = base_param(kernel, probe, fetch, Span::new(0, 0), &mut Vec::new())?;
            let Ok((_, Type::Pointer { target })) = layout::strip(types, ty) else { return None };
            let Ok((_, Type::Struct(c))) = layout::strip(types, target) else { return None };
            (c.name.as_deref() == Some("pt_regs"))
                .then(|| format!("`{name}` (`struct pt_regs *`) points to the saved registers on the kernel stack"))
        }
        _ => None,
    }
}

/// T408: user fetches (`+u…(`, `:ustring`) of memory that is certainly the kernel's,
/// which the user accessors refuse (0 or `(fault)` on the real 6.12).
fn user_fetches(
    kernel: &Kernel,
    probe: &Probe,
    arg: &fevlint_mainline::Arg,
    start: usize,
    found: &mut Vec<Diagnostic>,
) {
    if !arg.verbatim {
        return;
    }
    let shift = |s: &std::ops::Range<usize>| Span::new(start + s.start, start + s.end);
    let mut f = &arg.fetch;
    let mut outermost = true;
    for _ in 0..=MAX_DEREFS {
        let Fetch::Deref { offset, user, inner, offset_span } = f else { break };
        let ustring = outermost && arg.ty.as_ref().is_some_and(|t| t.name == "ustring" && t.array.is_none());
        if *user || ustring {
            if let Some(why) = kernel_memory(kernel, probe, inner) {
                let (what, records, span, help) = if *user {
                    let digits = shift(offset_span);
                    let u = Span::new(digits.start.saturating_sub(1), digits.end);
                    let sign = if *offset < 0 { "-" } else { "+" };
                    (
                        format!("`{sign}u…(…)` reads user memory"),
                        "0",
                        u,
                        "help: drop the `u` (a kernel fetch)".to_owned(),
                    )
                } else {
                    let t = arg.ty.as_ref().map(|t| shift(&t.span)).unwrap_or_else(|| shift(&arg.span));
                    ("`:ustring` reads user memory".to_owned(), "`(fault)`", t, "help: write `:string`".to_owned())
                };
                found.push(
                    diag(&rules::T408, span, format!("{what}, but {why}; the kernel records {records}")).note(help),
                );
            }
        }
        outermost = false;
        f = inner;
    }
}

/// The parameters a probe's BTF names and `$argN` stand for: the function's, or a
/// tracepoint's (its stub's without the leading `void *__data`, as the kernel hides it).
fn named_params(kernel: &Kernel, probe: &Probe) -> Option<fevlint_types::model::Prototype> {
    let fevlint_mainline::Place::Symbol { name, module: None, .. } = &probe.place else { return None };
    place_prototype(kernel, probe.kind == ProbeKind::Tprobe, name)
}

/// The prototype the arguments of a probe on `place` are named after: the function's,
/// or for a tracepoint (`tracepoint`) its stub's (`__probestub_<tp>`, which names the
/// parameters the `btf_trace_<tp>` typedef leaves unnamed) without `void *__data`.
pub fn place_prototype(kernel: &Kernel, tracepoint: bool, place: &str) -> Option<fevlint_types::model::Prototype> {
    if tracepoint {
        let mut proto = kernel.function(&format!("__probestub_{place}")).ok()?.prototypes.into_iter().next()?.proto;
        if proto.params.is_empty() {
            return None;
        }
        proto.params.remove(0);
        return Some(proto);
    }
    Some(kernel.function(place).ok()?.prototypes.into_iter().next()?.proto)
}

/// The type a BTF path written on `place` reaches (`file->f_path.` before a member is
/// typed), for completion: `base` is a parameter name or `$retval`, `fields` the steps
/// after it (`true` for `->`). `None` where BTF does not settle it.
pub fn path_type(
    kernel: &Kernel,
    tracepoint: bool,
    place: &str,
    base: &str,
    fields: &[(bool, String)],
) -> Option<TypeRef> {
    let types = kernel.types()?;
    let proto = place_prototype(kernel, tracepoint, place)?;
    let start =
        if base == "$retval" { proto.ret? } else { proto.params.iter().find(|p| p.name.as_deref() == Some(base))?.ty };
    let fields: Vec<fevlint_mainline::Field> = fields
        .iter()
        .map(|(arrow, name)| fevlint_mainline::Field { name: name.clone(), arrow: *arrow, span: 0..0 })
        .collect();
    walk_named(types, start, base, &fields).map(|(ty, _, _)| ty)
}

/// The type a BTF-named argument reaches (`file->f_path.dentry`): the parameter (or
/// `$retval`) by name, then each member by name as the kernel's `parse_btf_field`
/// walks them; with each member's place for the hover. `None` where the walk leaves
/// what BTF settles (the kernel refuses those lines itself).
fn btf_base(
    kernel: &Kernel,
    types: &dyn TypeSource,
    probe: &Probe,
    base: &str,
    fields: &[fevlint_mainline::Field],
) -> Option<(TypeRef, String, Vec<NamedStep>)> {
    let proto = named_params(kernel, probe)?;
    let ty =
        if base == "$retval" { proto.ret? } else { proto.params.iter().find(|p| p.name.as_deref() == Some(base))?.ty };
    walk_named(types, ty, base, fields)
}

/// Each member of `fields` by name from `ty`, as `parse_btf_field` walks them.
fn walk_named(
    types: &dyn TypeSource,
    mut ty: TypeRef,
    base: &str,
    fields: &[fevlint_mainline::Field],
) -> Option<(TypeRef, String, Vec<NamedStep>)> {
    let mut expr = base.to_owned();
    let mut named = Vec::new();
    for f in fields.iter().take(MAX_DEREFS) {
        let container = if f.arrow {
            match layout::strip(types, ty).ok()?.1 {
                Type::Pointer { target } => target,
                _ => return None,
            }
        } else {
            ty
        };
        let m = layout::resolve_member(types, container, &f.name).ok()??;
        let container_name = match layout::strip(types, container).ok()?.1 {
            Type::Struct(Composite { name: Some(n), .. }) => format!("struct {n}"),
            Type::Union(Composite { name: Some(n), .. }) => format!("union {n}"),
            _ => layout::type_name(types, container).unwrap_or_default(),
        };
        named.push((format!("{}{}", if f.arrow { "->" } else { "." }, f.name), container_name, m.offset));
        expr = format!("{expr}{}{}", if f.arrow { "->" } else { "." }, f.name);
        ty = m.ty;
    }
    Some((ty, expr, named))
}

/// The bytes a scalar `:TYPE` stores (`u16` → 2), or `None` (strings, arrays, bitfields).
fn scalar_bytes(t: &str) -> Option<u64> {
    match t {
        "symbol" => Some(8),
        _ => t
            .strip_prefix(['u', 's', 'x'])
            .and_then(|b| b.parse::<u64>().ok())
            .filter(|b| matches!(b, 8 | 16 | 32 | 64))
            .map(|b| b / 8),
    }
}

/// Whether `path` is an element of a byte array (`comm[0]`, `sa_data[2]`): a string or
/// a few raw bytes read from inside the array, not a mismatch.
fn in_byte_array(path: &str, ty: &Type) -> bool {
    path.ends_with(']') && matches!(ty, Type::Int { size: 1, .. })
}

/// T401–T403 on the `:TYPE` of an argument that reached a known type.
fn type_fits(
    types: &dyn TypeSource,
    ty: TypeRef,
    expr: &str,
    t: &fevlint_mainline::ArgType,
    span: Span,
    bare: bool,
    found: &mut Vec<Diagnostic>,
) {
    let Ok((_, resolved)) = layout::strip(types, ty) else { return };
    let name = layout::type_name(types, ty).unwrap_or_default();
    let size = types.size_of(ty).ok().flatten();
    match t.name.as_str() {
        // The last `+OFF(…)` of a string is not a load: the string is read *at* that
        // address, so the member there must hold the characters (`char name[32]`).
        "string" | "ustring" if !bare => {
            let one_byte = |t: TypeRef| matches!(layout::strip(types, t), Ok((_, Type::Int { size: 1, .. })));
            match &resolved {
                Type::Array { element, .. } if one_byte(*element) => {}
                t if in_byte_array(expr, t) => {}
                Type::Pointer { target } if one_byte(*target) => found.push(
                    diag(&rules::T402, span,
                        format!(
                            "`:{}` reads the characters stored at `{expr}`, which is a `{name}`: the pointer's own bytes, not its string",
                            t.name
                        ),
                    )
                    .note("help: dereference it once more: `+0(…)` around this argument's fetch"),
                ),
                _ => found.push(diag(&rules::T402, span,
                    format!("`:{}` reads the characters stored at `{expr}`, which is a `{name}`, not a `char` array", t.name),
                )),
            }
        }
        "symbol" if !matches!(resolved, Type::Pointer { .. }) => {
            if size.is_some_and(|s| s != 8) {
                found.push(diag(
                    &rules::T403,
                    span,
                    format!("`:symbol` prints an address, but `{expr}` is a `{name}` of {} bytes", size.unwrap_or(0)),
                ));
            }
        }
        other => {
            let bits: Option<u64> = other
                .strip_prefix(['u', 's', 'x'])
                .and_then(|b| b.parse().ok())
                .filter(|b| matches!(b, 8 | 16 | 32 | 64));
            if let (Some(bits), Some(size), None) = (bits, size, t.array) {
                let aggregate = matches!(resolved, Type::Struct(_) | Type::Union(_) | Type::Array { .. })
                    || in_byte_array(expr, &resolved);
                if bits / 8 != size && !aggregate {
                    found.push(diag(
                        &rules::T401,
                        span,
                        format!("`:{other}` records {} bytes, but `{expr}` is a `{name}` of {size} bytes", bits / 8),
                    ));
                }
            }
        }
    }
}

/// One `+OFF(…)` whose member (as read on the old kernel) is elsewhere on the new one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    /// The digits of the offset in the file.
    pub span: Span,
    pub old_offset: i64,
    /// Where the member is on the new kernel; `None` when it is gone.
    pub new_offset: Option<u64>,
    /// `struct file` and `f_path.dentry`.
    pub container: String,
    pub member: String,
    /// What the old offset reads on the new kernel, if anything.
    pub now_reads: Option<String>,
    /// The whole argument in the file.
    pub arg: Span,
}

/// Every `+OFF(…)` of `old`'s reading of `text` that names another place on `new`.
fn moves_from(old: &[Walked], new: &Kernel) -> Vec<Move> {
    let Some(types) = new.types() else { return Vec::new() };
    let mut out = Vec::new();
    for w in old {
        for (span, offset, member, container) in &w.steps {
            let (ns, bare) = match container.split_once(' ') {
                Some(("union", n)) => (TypeNamespace::Union, n),
                Some((_, n)) => (TypeNamespace::Struct, n),
                None => (TypeNamespace::Struct, container.as_str()),
            };
            let Some(ty) = types.find_type(ns, bare).ok().and_then(|v| v.into_iter().next()) else { continue };
            let new_offset = layout::resolve_member(types, ty, member).ok().flatten().map(|m| m.offset);
            if new_offset.and_then(|n| i64::try_from(n).ok()) == Some(*offset) {
                continue;
            }
            let now_reads = u64::try_from(*offset)
                .ok()
                .and_then(|o| layout::member_at(types, ty, o).ok())
                .and_then(|m| m.into_iter().find(|m| m.place == Placement::Start))
                .map(|m| m.dotted());
            out.push(Move {
                span: *span,
                old_offset: *offset,
                new_offset,
                container: container.clone(),
                member: member.clone(),
                now_reads,
                arg: w.span,
            });
        }
    }
    out
}

/// How `text` reads on `kernel`: each argument's dereferences with their members.
fn walk_all(text: &str, kernel: &Kernel) -> Vec<Walked> {
    let Ok(dialect) = dialect_for(kernel) else { return Vec::new() };
    let env = KernelEnv::new(kernel, &dialect);
    let (_, probes) = parse_findings(text, &dialect, &env);
    let mut sink = Vec::new();
    probes.iter().flat_map(|(start, p)| meaning(kernel, p, *start, &mut sink)).collect()
}

/// What the argument at `offset` reads on each kernel, for a hover: its span and a
/// Markdown text.
pub fn describe_at(text: &str, offset: usize, kernels: &[&Kernel]) -> Option<(Span, String)> {
    if let Some(place) = describe_place(text, offset, kernels) {
        return Some(place);
    }
    let mut span = None;
    let mut out = String::new();
    for k in kernels {
        let Some(w) = walk_all(text, k).into_iter().find(|w| w.span.start <= offset && offset <= w.span.end) else {
            continue;
        };
        span.get_or_insert(w.span);
        let _ = writeln!(
            out,
            "**{}** on {}: `{}` (`{}`) at the entry of `{}`\n",
            w.key.1, k.name, w.expr, w.ty, w.function
        );
        for (member, container, off) in &w.named {
            let _ = writeln!(out, "- `{member}` at +{off} of `{container}`");
        }
        for (_, off, member, container) in &w.steps {
            let _ = writeln!(out, "- `+{off}`: `{member}` of `{container}`");
        }
        out.push('\n');
    }
    Some((span?, out.trim_end().to_owned()))
}

/// On a kprobe's `SYM+OFF`: where the probe sits on each kernel, and the instruction
/// starts around it (what `register_kprobe` accepts), from the kernel's code.
fn describe_place(text: &str, offset: usize, kernels: &[&Kernel]) -> Option<(Span, String)> {
    use fevlint_kernel::code::{ProbePoint, Refusal};
    let (_, probes) = parse_findings(text, &Dialect::debian_6_12_117(), &fevlint_mainline::NoKernel);
    let (start, probe) = probes.iter().find(|(start, p)| match &p.place {
        fevlint_mainline::Place::Symbol { span, .. } => start + span.start <= offset && offset <= start + span.end,
        _ => false,
    })?;
    let fevlint_mainline::Place::Symbol { name, offset: off, span, module: None } = &probe.place else {
        return None;
    };
    if !matches!(probe.kind, ProbeKind::Kprobe | ProbeKind::Kretprobe) {
        return None;
    }
    let mut out = String::new();
    for k in kernels {
        let Ok(dialect) = dialect_for(k) else { continue };
        let env = KernelEnv::new(k, &dialect);
        let place = if *off == 0 {
            let entry = env.entry_offset(name);
            let why = match env.starts_with_endbr(name) {
                Some((true, true)) => " (past its ENDBR64)",
                Some((true, false)) => " (past the ENDBR64 assumed there: no image of the code)",
                _ => "",
            };
            format!("sits at `{name}+{entry:#x}`{why}")
        } else {
            match env.probe_point(name, *off) {
                Some(ProbePoint::Accepted { .. }) => "is accepted: an instruction starts there".to_owned(),
                Some(ProbePoint::Refused(Refusal::NotBoundary { .. })) => {
                    "is refused: not an instruction boundary".to_owned()
                }
                Some(ProbePoint::Refused(Refusal::Invalid(why) | Refusal::Unsupported(why))) => {
                    format!("is refused: {why}")
                }
                Some(ProbePoint::Unknown(why)) => format!("is not known: {why}"),
                None => format!("is not known: {}", env.why_unknown(name, *off)),
            }
        };
        let _ = writeln!(out, "**`{name}+{off}`** on {}: {place}\n", k.name);
        if let Some(starts) = env.instruction_starts(name, *off) {
            let list: Vec<String> =
                starts.iter().map(|o| if o == off { format!("**+{o}**") } else { format!("+{o}") }).collect();
            let _ = writeln!(out, "- instructions start at {}\n", list.join(", "));
            if *off != 0 {
                let _ = writeln!(out, "- {}\n", boundaries_around(&env, name, *off, &starts));
            }
        }
    }
    (!out.is_empty()).then(|| (Span::new(start + span.start, start + span.end), out.trim_end().to_owned()))
}

/// The instruction at `off` of `symbol`, or the nearest starts before and after it, with
/// the instructions there (`starts`: the instruction starts around `off`).
fn boundaries_around(env: &KernelEnv<'_>, symbol: &str, off: u64, starts: &[u64]) -> String {
    let places = env.probe_places(symbol, 64).unwrap_or_default();
    let show = |o: u64| match places.iter().find(|p| p.offset == o) {
        Some(p) => format!("`+{o}` (`{}`)", p.text),
        None => format!("`+{o}`"),
    };
    if starts.contains(&off) {
        let what = places.iter().find(|p| p.offset == off).map(|p| format!(": `{}`", p.text)).unwrap_or_default();
        return format!("an instruction starts here{what}");
    }
    let before = starts.iter().rev().find(|&&o| o < off).map_or_else(|| "none".to_owned(), |&o| show(o));
    let after = starts.iter().find(|&&o| o > off).map_or_else(|| "none".to_owned(), |&o| show(o));
    format!("nearest instruction boundaries: {before} before, {after} after")
}

/// What each member-reading argument of `text` reads on `kernel`, for `fevlint lock`.
pub fn lock_entries(text: &str, file: &str, kernel: &Kernel) -> Vec<crate::lock::LockedProbeArg> {
    walk_all(text, kernel)
        .into_iter()
        .filter(|w| !w.steps.is_empty())
        .map(|w| crate::lock::LockedProbeArg {
            file: file.to_owned(),
            line: u32::try_from(text[..w.span.start].matches('\n').count() + 1).unwrap_or(u32::MAX),
            event: w.key.0,
            arg: w.key.1,
            expr: w.expr,
            reads: w
                .steps
                .into_iter()
                .map(|(_, offset, member, container)| crate::lock::LockedRead { offset, container, member })
                .collect(),
        })
        .collect()
}

/// One argument's place in a text: (event, arg), its span, its offsets innermost first.
type ArgOffsets = ((String, String), Span, Vec<(i64, Span)>);

/// The offsets of each argument's `+OFF(…)` in `text`, innermost first, by (event, arg).
fn offset_spans(text: &str, dialect: &Dialect) -> Vec<ArgOffsets> {
    let mut out = Vec::new();
    let (_, probes) = parse_findings(text, dialect, &fevlint_mainline::NoKernel);
    for (start, probe) in probes {
        for arg in &probe.args {
            let shift = |s: &std::ops::Range<usize>| Span::new(start + s.start, start + s.end);
            let mut chain = Vec::new();
            let mut f = &arg.fetch;
            while let Fetch::Deref { offset, inner, offset_span, .. } = f {
                chain.push((*offset, if arg.verbatim { shift(offset_span) } else { shift(&arg.span) }));
                f = inner;
                if chain.len() > MAX_DEREFS {
                    break;
                }
            }
            chain.reverse();
            out.push(((format!("{}/{}", probe.group, probe.event), arg.name.clone()), shift(&arg.span), chain));
        }
    }
    out
}

/// The members a lock recorded for `text` that are elsewhere on `new` (the lock's kernel
/// is `locked_on`). An argument whose offsets were edited since the lock is left alone.
pub fn moves_from_lock(text: &str, locked: &[crate::lock::LockedProbeArg], new: &Kernel) -> Vec<Move> {
    let Ok(dialect) = dialect_for(new) else { return Vec::new() };
    let walked: Vec<Walked> = offset_spans(text, &dialect)
        .into_iter()
        .filter_map(|(key, span, chain)| {
            let l = locked.iter().find(|l| l.event == key.0 && l.arg == key.1)?;
            let same = chain.len() >= l.reads.len() && chain.iter().zip(&l.reads).all(|(c, r)| c.0 == r.offset);
            same.then(|| Walked {
                steps: chain
                    .iter()
                    .zip(&l.reads)
                    .map(|(c, r)| (c.1, c.0, r.member.clone(), r.container.clone()))
                    .collect(),
                key,
                function: String::new(),
                span,
                expr: l.expr.clone(),
                ty: String::new(),
                named: Vec::new(),
            })
        })
        .collect();
    moves_from(&walked, new)
}

/// D505 for mainline lines: what the lock recorded, read elsewhere on `new`.
pub fn lock_drift(
    text: &str,
    locked: &[crate::lock::LockedProbeArg],
    locked_on: &str,
    new: &Kernel,
) -> Vec<Diagnostic> {
    moves_from_lock(text, locked, new)
        .into_iter()
        .map(|m| {
            let reads = m.now_reads.as_deref().map_or_else(|| "no member".to_owned(), |r| format!("`{r}`"));
            let note = match m.new_offset {
                Some(n) => format!(
                    "help: `{}.{}` is at offset {n} on {}: write `+{n}(` (`fevlint fix --lock`)",
                    m.container, m.member, new.name
                ),
                None => format!("`{}.{}` is gone from {}", m.container, m.member, new.name),
            };
            let mut d = diag(
                &rules::D505,
                m.span,
                format!(
                    "offset {} read `{}.{}` when locked on {locked_on}, but reads {reads} of `{}` on {}",
                    m.old_offset, m.container, m.member, m.container, new.name
                ),
            )
            .note(note);
            d.kernel = Some(new.name.clone().into());
            d
        })
        .collect()
}

/// Adds D505 for `kernels` against a lock to `found`, dropping the T40x findings the
/// moved members cause (the move is the cause, as with D503).
pub fn apply_lock(
    text: &str,
    locked: &[crate::lock::LockedProbeArg],
    locked_on: &str,
    kernels: &[&Kernel],
    found: &mut Vec<Diagnostic>,
) {
    for k in kernels {
        let moved = moves_from_lock(text, locked, k);
        found.retain(|d| {
            !(d.code.starts_with("T40")
                && d.kernel.as_deref().is_none_or(|n| n == k.name)
                && moved.iter().any(|m| m.arg.start <= d.span.start && d.span.end <= m.arg.end))
        });
        found.extend(lock_drift(text, locked, locked_on, k));
    }
    found.sort_by_key(|d| (d.span.start, d.code));
}

/// `text` with the offsets a lock recorded moved to where their members are on `new`.
pub fn fix_from_lock(text: &str, locked: &[crate::lock::LockedProbeArg], new: &Kernel) -> (String, Vec<Move>) {
    apply_moves(text, moves_from_lock(text, locked, new))
}

/// The members `text` reads on `old` that moved on `new`.
pub fn moves(text: &str, old: &Kernel, new: &Kernel) -> Vec<Move> {
    moves_from(&walk_all(text, old), new)
}

/// `text` with every moved offset rewritten to the member's offset on `new` (in the
/// spelling of the original: decimal or `0x`), and the moves that cannot be fixed
/// (members gone from `new`).
pub fn fix(text: &str, old: &Kernel, new: &Kernel) -> (String, Vec<Move>) {
    apply_moves(text, moves(text, old, new))
}

fn apply_moves(text: &str, all: Vec<Move>) -> (String, Vec<Move>) {
    let (mut fixable, gone): (Vec<Move>, Vec<Move>) = all.into_iter().partition(|m| m.new_offset.is_some());
    fixable.sort_by_key(|m| std::cmp::Reverse(m.span.start));
    let mut out = text.to_owned();
    for m in &fixable {
        let Some(n) = m.new_offset else { continue };
        let old = &text[m.span.start..m.span.end];
        let new = if old.starts_with("0x") || old.starts_with("0X") { format!("0x{n:x}") } else { n.to_string() };
        out.replace_range(m.span.start..m.span.end, &new);
    }
    (out, gone)
}

/// D503 per later kernel against the first; the T4xx findings a move causes on that
/// kernel (the old offset now lands elsewhere) are left out: the move is the cause.
fn drift(kernels: &[&Kernel], walks: &[(String, Vec<Walked>)], found: &mut Vec<Diagnostic>) {
    let Some((first_kernel, first)) = walks.first() else { return };
    for k in kernels.iter().skip(1) {
        let moved = moves_from(first, k);
        found.retain(|d| {
            !(d.code.starts_with("T40")
                && d.kernel.as_deref() == Some(k.name.as_str())
                && moved.iter().any(|m| m.arg.start <= d.span.start && d.span.end <= m.arg.end))
        });
        for m in moved {
            let reads = m.now_reads.as_deref().map_or_else(|| "no member".to_owned(), |r| format!("`{r}`"));
            let notes = match m.new_offset {
                Some(n) => vec![format!(
                    "help: `{}.{}` is at offset {n} on {}: write `+{n}(` (`fevlint fix --kernel OLD --kernel NEW`)",
                    m.container, m.member, k.name
                )],
                None => vec![format!("`{}.{}` is gone from {}", m.container, m.member, k.name)],
            };
            // Through `diag`: the rule's registered severity (an error, as in `*.fev`).
            let mut d = diag(
                &rules::D503,
                m.span,
                format!(
                    "offset {} reads `{}.{}` on {first_kernel} but {reads} of `{}` on {}",
                    m.old_offset, m.container, m.member, m.container, k.name
                ),
            );
            d.notes = notes.into_iter().map(Into::into).collect();
            d.kernel = Some(k.name.clone().into());
            found.push(d);
        }
    }
}
