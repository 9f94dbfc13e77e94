//! One kernel, as the rules see it: its types (BTF or DWARF, behind [`TypeSource`]),
//! its functions with their traceability decided from real ftrace data, and its
//! architecture. Slow pieces (the symbol map, the clone index) load on first use.

use crate::names::FunctionNames;
use crate::open::{self as load, KernelInputs, Loaded, OpenOptions, Provenance};
use crate::paged;
use fevlint_btf::Btf;
use fevlint_load::cache::Cache;
use fevlint_load::symbols::{
    clone_base, syscall_name, ConfigValue, ErrorInjectionList, FilterFunctions, KernelConfig, KprobeBlacklist, Symbol,
    SymbolTable, SyscallWrapper, TraceEvents,
};
use fevlint_types::model::{FunctionInfo, ModelError, TypeSource};
use fevlint_types::Arch;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A stored symbol set as a query reads it: its length and a reader of byte ranges (a
/// page at a time).
type SetReader<'a> = (usize, &'a dyn Fn(std::ops::Range<usize>) -> Option<std::borrow::Cow<'a, [u8]>>);

/// A set of a symbol map's names kept in the cache ([`Kernel::has_symbol`], the text
/// symbols): read a piece at a time, each page once (the entry keeps the pages it read:
/// 1,000 lookups touch 27-54% of a 1.2-3.4 MB set, which was read whole after 32).
struct SymbolSet {
    entry: fevlint_load::cache::PagedEntry,
}

/// Opening a kernel failed: the message names the file (and offset, where known).
#[derive(Debug, thiserror::Error)]
pub enum KernelError {
    #[error(transparent)]
    Load(#[from] fevlint_load::LoadError),
    #[error(transparent)]
    Types(#[from] ModelError),
}

/// Trace event names read from a symbol map ([`Kernel::symbol_events`]).
#[derive(Debug)]
pub struct SymbolEvents {
    pub names: std::collections::HashSet<String>,
    /// Whether the syscall events (`sys_enter_*`, `sys_exit_*`) are among them.
    pub syscalls: bool,
}

/// The symbols a kallsyms puts in modules, as `NAME\tMODULE\n` lines sorted by name
/// (the form they are cached in), with where each line starts.
struct ModuleSymbols {
    text: String,
    lines: Vec<u32>,
}

impl ModuleSymbols {
    fn from_table(table: &SymbolTable) -> ModuleSymbols {
        let mut pairs: Vec<(&str, &str)> = table.iter().filter_map(|s| Some((s.name, s.module?))).collect();
        pairs.sort_unstable();
        pairs.dedup_by(|a, b| a.0 == b.0);
        let text = pairs.iter().map(|(n, m)| format!("{n}\t{m}\n")).collect();
        ModuleSymbols::from_text(text).unwrap_or(ModuleSymbols { text: String::new(), lines: Vec::new() })
    }

    /// `None` when `text` is not such lines, sorted (a damaged or foreign cached entry).
    fn from_text(text: String) -> Option<ModuleSymbols> {
        let mut lines = Vec::new();
        let (mut at, mut last) = (0, "");
        for line in text.split_inclusive('\n') {
            let (name, _) = line.strip_suffix('\n')?.split_once('\t')?;
            if name <= last && !lines.is_empty() {
                return None;
            }
            lines.push(u32::try_from(at).ok()?);
            (at, last) = (at + line.len(), name);
        }
        Some(ModuleSymbols { text, lines })
    }

    fn module_of(&self, name: &str) -> Option<&str> {
        let i = self.lines.binary_search_by(|&at| self.line_at(at).0.cmp(name)).ok()?;
        Some(self.line_at(self.lines[i]).1)
    }

    fn line_at(&self, at: u32) -> (&str, &str) {
        let line = self.text[at as usize..].split('\n').next().unwrap_or("");
        line.split_once('\t').unwrap_or((line, ""))
    }
}

/// A target kernel.
pub struct Kernel {
    /// Display name: the folder name, `uname -r`, or the file with its build-id.
    pub name: String,
    /// What `--kernel` was given.
    pub path: PathBuf,
    pub arch: Arch,
    /// How the architecture was decided.
    pub arch_from: String,
    types: Option<Arc<dyn TypeSource>>,
    /// The same source when it is BTF, as BTF (compiled BPF objects relocate against it).
    btf: Option<Arc<Btf>>,
    /// DWARF beside BTF (a `-dbg` vmlinux has both): BTF answers, DWARF adds declaration
    /// file and line.
    dwarf: Option<Arc<fevlint_dwarf::Dwarf>>,
    /// Where the types came from (`vmlinux.btf.zst (zstd)`).
    pub types_from: Option<String>,
    inputs: KernelInputs,
    /// How the files left for later are read (the cache the edge chose).
    opts: OpenOptions,
    /// The symbol map, or why the deferred one could not be read.
    symbols: OnceLock<Option<Result<Loaded<SymbolTable>, String>>>,
    /// The config, ftrace list and blacklist: read at open, or when first asked for.
    config: OnceLock<Option<Result<Loaded<KernelConfig>, String>>>,
    filter_functions: OnceLock<Option<Result<Loaded<FilterFunctions>, String>>>,
    kprobe_blacklist: OnceLock<Option<Result<Loaded<KprobeBlacklist>, String>>>,
    trace_events: OnceLock<Option<Result<Loaded<TraceEvents>, String>>>,
    /// The error-injection list: a folder's file, the running kernel's, or the image's.
    error_injection: OnceLock<Option<Result<Loaded<ErrorInjectionList>, String>>>,
    clones: OnceLock<HashMap<String, Vec<String>>>,
    names: OnceLock<FunctionNames>,
    /// [`Kernel::similar_functions`]'s answers, kept in the cache ([`crate::similar`]).
    similar: crate::similar::Memo,
    /// [`Kernel::ftrace_from_text`]'s texts: from the ftrace table, from the parsed list.
    ftrace_from: [OnceLock<Option<Arc<str>>>; 2],
    /// CRC-32 of the raw BTF, computed once: the key of what is cached from it.
    btf_crc: Option<u32>,
    text_symbols: OnceLock<Option<SymbolSet>>,
    /// The set of all the symbol map's names, kept the same way ([`Kernel::has_symbol`]).
    all_symbols: OnceLock<Option<SymbolSet>>,
    /// The symbol map's module symbols, built once ([`Kernel::symbol_module`]).
    module_symbols: OnceLock<Option<ModuleSymbols>>,
    /// Trace event names from the symbol map, built once ([`Kernel::symbol_events`]).
    symbol_events: OnceLock<Option<SymbolEvents>>,
    /// The folder's text facts as tables kept in the cache ([`crate::paged`]).
    tables: paged::Tables,
    /// A folder's image left unread at open, read when code is first asked for.
    image: OnceLock<Option<Result<Loaded<fevlint_load::elf::KernelElf>, String>>>,
    /// The image's kprobe-relevant tables ([`crate::code::Sites`]).
    sites: OnceLock<Option<crate::code::Sites>>,
    /// Things worth telling the user once (a missing piece, a deferred file that failed).
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel").field("name", &self.name).field("arch", &self.arch).finish_non_exhaustive()
    }
}

/// Which form of the ftrace list answered [`Kernel::ftrace_of`]: the folder's table kept
/// in the cache, or the parsed list.
#[derive(Clone, Copy)]
enum FtraceFrom {
    Table,
    List,
}

/// Whether ftrace can attach to a function, and what decided it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trace {
    /// Listed in the ftrace call-site table (`count` functions of that name).
    Traceable { count: usize },
    /// The function exists but has no ftrace call site (notrace, noinstr, `__init`,
    /// inlined everywhere, built without `-pg`).
    NotTraceable,
    /// Only compiler clones of it are traceable, under their own names.
    OnlyClones(Vec<String>),
    /// The kernel has no ftrace list: cannot tell.
    Unknown,
}

/// Everything known about one function name.
#[derive(Clone, Debug)]
pub struct FunctionFacts {
    pub name: String,
    /// Prototypes from the type source (several for duplicate static functions).
    pub prototypes: Vec<FunctionInfo>,
    pub trace: Trace,
    /// The source that decided `trace` (`available_filter_functions (…/6.12…)`), one
    /// text per kernel and source shared by every function's facts.
    pub trace_from: Option<Arc<str>>,
    /// Traceable clones of this function (`name.isra.0`, …).
    pub clones: Vec<String>,
    /// Whether the symbol map has a text symbol of that name, when it was consulted.
    pub text_symbol: Option<bool>,
    /// On the kprobe blacklist (kprobes refuse it; ftrace does not consult this list).
    pub kprobe_blacklisted: bool,
    /// Syscall wrapper layer and syscall name, when the name is one.
    pub syscall: Option<(SyscallWrapper, String)>,
}

impl FunctionFacts {
    /// The kernel knows the name in any form (types, ftrace list or symbols).
    pub fn exists(&self) -> bool {
        !self.prototypes.is_empty()
            || matches!(self.trace, Trace::Traceable { .. } | Trace::OnlyClones(_))
            || self.text_symbol == Some(true)
    }
}

impl Kernel {
    /// Opens several kernels side by side (one thread each: decompression and parsing
    /// are independent), results in the order of `paths`.
    pub fn open_all<P: AsRef<Path> + Sync>(paths: &[P], cache: &Cache) -> Vec<Result<Kernel, KernelError>> {
        use rayon::prelude::*;
        paths.par_iter().map(|p| Kernel::open_cached(p.as_ref(), cache)).collect()
    }

    /// Opens whatever `--kernel` names (see [`load::open_with`]), caching nothing.
    pub fn open(path: &Path) -> Result<Kernel, KernelError> {
        Kernel::open_cached(path, &Cache::off())
    }

    /// [`Kernel::open`], decompressions and indexes kept in (and mapped from) `cache`.
    pub fn open_cached(path: &Path, cache: &Cache) -> Result<Kernel, KernelError> {
        let opts = OpenOptions { defer_symbols: true, cache: cache.clone(), ..OpenOptions::default() };
        let mut inputs = load::open_with(path, &opts)?;
        let dwarf_cache = || cache.dir().map(Path::to_owned);
        let mut notes = inputs.notes.clone();
        let btf_crc = inputs.btf.as_ref().map(|b| inputs.btf_crc.unwrap_or_else(|| crc32fast::hash(&b.value)));
        let btf_crc = btf_crc.or_else(|| inputs.btf_paged.as_ref().map(|b| b.value.crc()));
        let mut dwarf = None;
        let mut btf_types = None;
        let whole = open_btf(&mut inputs, btf_crc, cache)?;
        let (types, types_from): (Option<Arc<dyn TypeSource>>, Option<String>) = match whole {
            Some((btf, from)) => {
                let key = format!("{:08x}{:08x}", btf_crc.unwrap_or(0), inputs.btf_len().unwrap_or(0));
                let btf = btf.with_index_cache(key, Arc::new(DerivedCache(cache.clone())));
                if let Some(e) = inputs.elf.take_if(|e| e.value.has_dwarf()) {
                    dwarf = fevlint_dwarf::Dwarf::new(Arc::new(e.value))
                        .ok()
                        .map(|d| Arc::new(d.with_cache_dir(dwarf_cache())));
                }
                let btf = Arc::new(btf);
                btf_types = Some(btf.clone());
                (Some(btf), Some(format!("BTF from {from}")))
            }
            None => match inputs.elf.take_if(|e| e.value.has_dwarf()) {
                Some(e) => {
                    // The ELF moves into the DWARF reader (it maps the debug sections).
                    let desc = format!("DWARF from {}", e.from);
                    let dwarf = fevlint_dwarf::Dwarf::new(Arc::new(e.value))?.with_cache_dir(dwarf_cache());
                    (Some(Arc::new(dwarf)), Some(desc))
                }
                None => {
                    notes.push("no type information (no BTF or DWARF): type and layout checks are off".to_owned());
                    (None, None)
                }
            },
        };
        let (arch, arch_from) = match (&inputs.arch, &types) {
            (Some((a, how)), _) => (*a, format!("{how:?}")),
            (None, Some(t)) if t.pointer_size() == 4 => (Arch::X86_32, "BTF pointer size".to_owned()),
            (None, Some(_)) => (Arch::X86_64, "BTF pointer size".to_owned()),
            (None, None) => {
                notes.push("architecture unknown: assuming x86_64".to_owned());
                (Arch::X86_64, "assumed".to_owned())
            }
        };
        // An image loaded at open names its ftrace list when first asked ([`Self::filter_functions`]).
        if inputs.filter_functions.is_none() && inputs.deferred.filter_functions.is_none() && inputs.elf.is_none() {
            notes.push("no available_filter_functions or mcount table: traceability is not checked".to_owned());
        }
        let symbols = OnceLock::new();
        // Without a symbol map, an image's own kallsyms tables are decoded when first asked.
        let from_image = inputs.elf.is_some() || inputs.deferred.image.is_some();
        if inputs.deferred_symbols.is_none() && (inputs.symbols.is_some() || !from_image) {
            let _ = symbols.set(inputs.symbols.take().map(Ok));
        }
        let (config, filter_functions, kprobe_blacklist) = (OnceLock::new(), OnceLock::new(), OnceLock::new());
        if inputs.deferred.config.is_none() {
            let _ = config.set(inputs.config.take().map(Ok));
        }
        if inputs.deferred.filter_functions.is_none() && (inputs.filter_functions.is_some() || inputs.elf.is_none()) {
            let _ = filter_functions.set(inputs.filter_functions.take().map(Ok));
        }
        // Without a blacklist file, an image read at open gives it ([`Self::kprobe_blacklist`]).
        if inputs.deferred.kprobe_blacklist.is_none() && (inputs.kprobe_blacklist.is_some() || inputs.elf.is_none()) {
            let _ = kprobe_blacklist.set(inputs.kprobe_blacklist.take().map(Ok));
        }
        let trace_events = OnceLock::new();
        if inputs.deferred.trace_events.is_none() {
            let _ = trace_events.set(inputs.trace_events.take().map(Ok));
        }
        // Without a list file, the image's table gives it when first asked.
        let error_injection = OnceLock::new();
        if let Some(l) = inputs.error_injection.take() {
            let _ = error_injection.set(Some(Ok(l)));
        }
        Ok(Kernel {
            name: inputs.name.clone(),
            path: path.to_owned(),
            arch,
            arch_from,
            types,
            btf: btf_types,
            dwarf,
            types_from,
            inputs,
            opts,
            symbols,
            config,
            filter_functions,
            kprobe_blacklist,
            trace_events,
            error_injection,
            clones: OnceLock::new(),
            names: OnceLock::new(),
            similar: Default::default(),
            ftrace_from: Default::default(),
            btf_crc,
            text_symbols: OnceLock::new(),
            all_symbols: OnceLock::new(),
            module_symbols: OnceLock::new(),
            symbol_events: OnceLock::new(),
            tables: Default::default(),
            image: OnceLock::new(),
            sites: OnceLock::new(),
            notes,
        })
    }

    /// Identifies this build: a checksum of the raw BTF, or `unknown`.
    pub fn identity(&self) -> String {
        match self.btf_crc {
            Some(crc) => format!("btf-crc32:{crc:08x}"),
            None => "unknown".to_owned(),
        }
    }

    /// The kernel's BTF (vmlinux), when its types come from BTF: the reader the type
    /// checks use, with its name indexes (kept in the cache between runs).
    pub fn btf(&self) -> Option<&Arc<Btf>> {
        self.btf.as_ref()
    }

    /// The type source, when the kernel has one.
    pub fn types(&self) -> Option<&dyn TypeSource> {
        self.types.as_deref()
    }

    pub fn pointer_size(&self) -> u32 {
        self.arch.pointer_size()
    }

    pub fn inputs(&self) -> &KernelInputs {
        &self.inputs
    }

    /// The cache this kernel was opened with (reads of its files later use it too).
    pub fn cache(&self) -> &Cache {
        &self.opts.cache
    }

    /// The ftrace list: read on first use from a folder, else, for a kernel opened from
    /// its image without one (a bare vmlinuz: no symbols at open), named from the image's
    /// mcount table with its own kallsyms, as `available_filter_functions` names it. A
    /// folder's list is parsed once, then kept in the cache under [`Cache::source_key`] of
    /// the file and read back without parsing.
    pub fn filter_functions(&self) -> Option<&Loaded<FilterFunctions>> {
        let path = self.inputs.deferred.filter_functions.as_deref();
        self.filter_functions
            .get_or_init(|| match path {
                Some(p) => Some(read_filter_functions_cached(p, &self.opts).map_err(|e| e.to_string())),
                None => self.image_filter_functions().map(Ok),
            })
            .as_ref()?
            .as_ref()
            .ok()
    }

    /// The ftrace list named from the image loaded at open and the symbol map.
    fn image_filter_functions(&self) -> Option<Loaded<FilterFunctions>> {
        let elf = self.inputs.elf.as_ref()?;
        let symbols = &self.symbols()?.value;
        let sites = elf.value.ftrace_sites(Some(symbols)).ok()?;
        // FTRACE_MCOUNT_MAX_OFFSET: 4 past an ENDBR64 with CONFIG_X86_KERNEL_IBT, whose
        // linker script places the `__ibt_endbr_seal` table.
        let max = match self.config_enabled("X86_KERNEL_IBT") {
            Some(ibt) => u64::from(ibt) * 4,
            None if self.arch == Arch::X86_64 && symbols.addr_of("__ibt_endbr_seal").is_some() => 4,
            None => 0,
        };
        let names = fevlint_load::elf::ftrace_function_names(&sites.sites, symbols, Some(max));
        let container = load::Container::Computed("named from the image's mcount table and kallsyms");
        Some(Loaded {
            value: FilterFunctions::from_names(names.iter().map(String::as_str)),
            from: Provenance { container, ..elf.from.clone() },
        })
    }

    /// The kprobe blacklist: read on first use from a folder, else, for a kernel opened
    /// from its image (a bare vmlinuz, a `debian:` kernel), built from the image as the
    /// kernel builds it at boot ([`crate::code::derive_blacklist`]).
    pub fn kprobe_blacklist(&self) -> Option<&Loaded<KprobeBlacklist>> {
        let path = self.inputs.deferred.kprobe_blacklist.as_deref();
        self.kprobe_blacklist
            .get_or_init(|| match path {
                Some(p) => Some(load::read_kprobe_blacklist(p, &self.opts).map_err(|e| e.to_string())),
                None => self.image_blacklist().map(Ok),
            })
            .as_ref()?
            .as_ref()
            .ok()
    }

    /// The blacklist built from the image loaded at open and the symbol map.
    fn image_blacklist(&self) -> Option<Loaded<KprobeBlacklist>> {
        let elf = self.inputs.elf.as_ref()?;
        if self.config_enabled("KPROBES") == Some(false) {
            return None;
        }
        let all = self.config_enabled("KALLSYMS_ALL") != Some(false);
        let value = crate::code::derive_blacklist(&elf.value, &self.symbols()?.value, all)?;
        let container = load::Container::Computed("built from the image's _kprobe_blacklist table and text areas");
        Some(Loaded { value, from: Provenance { container, ..elf.from.clone() } })
    }

    /// The trace events with their systems (`available_events`, read on first use from a
    /// folder).
    pub fn trace_events(&self) -> Option<&Loaded<TraceEvents>> {
        let path = self.inputs.deferred.trace_events.as_deref();
        lazy(&self.trace_events, path, &self.opts, load::read_trace_events)?.as_ref().ok()
    }

    /// The functions `fmod_ret` may modify besides `security_` hooks (the error-injection
    /// list, `ALLOW_ERROR_INJECTION`): a folder's `error_injection_list` (a copy of
    /// /sys/kernel/debug/error_injection/list; the running kernel's, read live), else the
    /// image's `_error_injection_whitelist` table named through the symbol map
    /// ([`crate::code::derive_error_injection`]). `None`: unknown (no list, no image, or
    /// an image without the table, as one built without CONFIG_FUNCTION_ERROR_INJECTION).
    pub fn error_injection(&self) -> Option<&Loaded<ErrorInjectionList>> {
        let path = self.inputs.deferred.error_injection.as_deref();
        self.error_injection
            .get_or_init(|| match path {
                Some(p) => Some(load::read_error_injection(p, &self.opts).map_err(|e| e.to_string())),
                None => self.image_error_injection().map(Ok),
            })
            .as_ref()?
            .as_ref()
            .ok()
    }

    /// The list built from the image (read now if the folder left it for later).
    fn image_error_injection(&self) -> Option<Loaded<ErrorInjectionList>> {
        let symbols = &self.symbols()?.value;
        // Only a kernel built with the list has these; do not decompress an image to learn it has none.
        symbols.addr_of("__start_error_injection_whitelist")?;
        let elf = self.image()?;
        let value = crate::code::derive_error_injection(elf, symbols)?;
        let from = match (&self.inputs.elf, self.image.get()) {
            (Some(e), _) => e.from.clone(),
            (None, Some(Some(Ok(e)))) => e.from.clone(),
            _ => return None,
        };
        let container = load::Container::Computed("built from the image's _error_injection_whitelist table");
        Some(Loaded { value, from: Provenance { container, ..from } })
    }

    /// The kernel config (read on first use from a folder).
    pub fn config(&self) -> Option<&Loaded<KernelConfig>> {
        let path = self.inputs.deferred.config.as_deref();
        lazy(&self.config, path, &self.opts, load::read_config)?.as_ref().ok()
    }

    /// The table of a folder file left for later ([`crate::paged`]), opened from the cache
    /// unless the whole file is read already (`read`): the whole file answers then. When
    /// none is stored, `bytes` builds it from the whole file (read now, so it answers this
    /// run) and it is stored for the next run.
    fn table<'a, T>(
        &self,
        cell: &'a OnceLock<Option<T>>,
        path: Option<&Path>,
        kind: &str,
        read: bool,
        open: fn(&Cache, &str) -> Option<T>,
        bytes: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Option<&'a T> {
        cell.get_or_init(|| {
            let cache = &self.opts.cache;
            let name = paged::entry_name(cache, path?, kind)?;
            match open(cache, &name) {
                Some(t) if !read => return Some(t),
                Some(_) => return None,
                None => {}
            }
            if let Some(b) = bytes() {
                cache.put_paged(&name, &b);
            }
            None
        })
        .as_ref()
    }

    /// Stores again the table of a file whose stored table could not be read (a damaged
    /// page): the whole file answers this lookup.
    fn restore_table(&self, path: Option<&Path>, kind: &str, bytes: Option<Vec<u8>>) {
        let cache = &self.opts.cache;
        if let (Some(name), Some(b)) = (path.and_then(|p| paged::entry_name(cache, p, kind)), bytes) {
            cache.put_paged(&name, &b);
        }
    }

    fn ftrace_table(&self) -> Option<&paged::Ftrace> {
        let path = self.inputs.deferred.filter_functions.as_deref();
        let read = self.filter_functions.get().is_some();
        self.table(&self.tables.ftrace, path, paged::FTRACE, read, paged::Ftrace::open, || self.ftrace_bytes())
    }

    fn ftrace_bytes(&self) -> Option<Vec<u8>> {
        let ff = self.filter_functions()?;
        paged::Ftrace::build(&ff.value, ff.from.codec)
    }

    /// How many traceable functions the ftrace list has called `name`, its traceable
    /// clones, and where the list came from; `None` without a list (or one that cannot be
    /// read). A folder's list answers from its table where one is stored.
    fn ftrace_of(&self, name: &str) -> Option<(usize, Vec<String>, FtraceFrom)> {
        if let Some(t) = self.ftrace_table() {
            if let Some(n) = t.name(name) {
                self.inputs.deferred.filter_functions.as_ref()?;
                return Some((n.count, n.clones, FtraceFrom::Table));
            }
            self.restore_table(self.inputs.deferred.filter_functions.as_deref(), paged::FTRACE, self.ftrace_bytes());
        }
        let clones = self.clone_index().get(name).cloned().unwrap_or_default();
        let ff = self.filter_functions()?;
        Some((ff.value.count(name), clones, FtraceFrom::List))
    }

    /// `available_filter_functions (PROVENANCE)` for what [`Self::ftrace_of`] answered
    /// from, formatted once per kernel and source (the table's file and codec, or the
    /// list's provenance, neither of which changes once read): [`Self::function`] asks
    /// for it on every name.
    fn ftrace_from_text(&self, from: FtraceFrom) -> Option<Arc<str>> {
        let text = match from {
            FtraceFrom::Table => self.ftrace_from[0].get_or_init(|| {
                let path = self.inputs.deferred.filter_functions.clone()?;
                let codec = self.ftrace_table()?.codec;
                let from = Provenance { path, codec, container: load::Container::File };
                Some(format!("available_filter_functions ({from})").into())
            }),
            FtraceFrom::List => self.ftrace_from[1]
                .get_or_init(|| Some(format!("available_filter_functions ({})", self.filter_functions()?.from).into())),
        };
        text.clone()
    }

    /// The module of the first `NAME [MODULE]` line of the ftrace list for `name`, if any.
    pub fn ftrace_module(&self, name: &str) -> Option<String> {
        if let Some(t) = self.ftrace_table() {
            if let Some(n) = t.name(name) {
                return n.module;
            }
            self.restore_table(self.inputs.deferred.filter_functions.as_deref(), paged::FTRACE, self.ftrace_bytes());
        }
        let ff = &self.filter_functions()?.value;
        ff.iter().find(|(n, m)| *n == name && m.is_some()).and_then(|(_, m)| m.map(str::to_owned))
    }

    /// Whether any line of the ftrace list names a module (`NAME [MODULE]`).
    pub fn ftrace_names_modules(&self) -> bool {
        match self.ftrace_table() {
            Some(t) => t.has_modules,
            None => self.filter_functions().is_some_and(|f| f.value.iter().any(|(_, m)| m.is_some())),
        }
    }

    fn config_table(&self) -> Option<&paged::Config> {
        let path = self.inputs.deferred.config.as_deref();
        let read = self.config.get().is_some();
        self.table(&self.tables.config, path, paged::CONFIG, read, paged::Config::open, || {
            paged::Config::build(&self.config()?.value)
        })
    }

    /// The value of config option `name` (with or without `CONFIG_`): `None` without a
    /// config (or one that cannot be read), `Some(None)` when it does not have the option.
    /// A folder's config answers from its table where one is stored.
    pub fn config_value(&self, name: &str) -> Option<Option<ConfigValue>> {
        let full = match name.starts_with("CONFIG_") {
            true => std::borrow::Cow::Borrowed(name),
            false => std::borrow::Cow::Owned(format!("CONFIG_{name}")),
        };
        if let Some(t) = self.config_table() {
            if let Some(v) = t.get(&full) {
                return Some(v);
            }
            let bytes = self.config().and_then(|c| paged::Config::build(&c.value));
            self.restore_table(self.inputs.deferred.config.as_deref(), paged::CONFIG, bytes);
        }
        Some(self.config()?.value.get(&full).cloned())
    }

    /// The release the config's header names (`6.1.170`); `None` without a config or
    /// without the header.
    pub fn config_release(&self) -> Option<String> {
        match self.config_table() {
            Some(t) => t.release.clone(),
            None => self.config()?.value.release().map(str::to_owned),
        }
    }

    /// Whether config option `name` is `=y` or `=m`; `None` without a config.
    pub fn config_enabled(&self, name: &str) -> Option<bool> {
        self.config_value(name).map(|v| matches!(v, Some(ConfigValue::Yes | ConfigValue::Module)))
    }

    fn blacklist_table(&self) -> Option<&paged::Blacklist> {
        let path = self.inputs.deferred.kprobe_blacklist.as_deref();
        let read = self.kprobe_blacklist.get().is_some();
        self.table(&self.tables.blacklist, path, paged::BLACKLIST, read, paged::Blacklist::open, || {
            paged::Blacklist::build(&self.kprobe_blacklist()?.value)
        })
    }

    /// Whether `name` is on the kprobe blacklist (a folder's answers from its table where
    /// one is stored); `false` without one.
    pub fn kprobe_blacklisted(&self, name: &str) -> bool {
        if let Some(t) = self.blacklist_table() {
            if let Some(found) = t.contains(name) {
                return found;
            }
            let bytes = self.kprobe_blacklist().and_then(|b| paged::Blacklist::build(&b.value));
            self.restore_table(self.inputs.deferred.kprobe_blacklist.as_deref(), paged::BLACKLIST, bytes);
        }
        self.kprobe_blacklist().is_some_and(|b| b.value.contains_name(name))
    }

    fn events_table(&self) -> Option<&paged::Events> {
        let path = self.inputs.deferred.trace_events.as_deref();
        let read = self.trace_events.get().is_some();
        self.table(&self.tables.events, path, paged::EVENTS, read, paged::Events::open, || {
            paged::Events::build(&self.trace_events()?.value)
        })
    }

    fn restore_events(&self) {
        let bytes = self.trace_events().and_then(|e| paged::Events::build(&e.value));
        self.restore_table(self.inputs.deferred.trace_events.as_deref(), paged::EVENTS, bytes);
    }

    /// Whether any trace event belongs to `system`; `None` without an event list. A
    /// folder's list answers from its table where one is stored.
    pub fn trace_system_exists(&self, system: &str) -> Option<bool> {
        if let Some(t) = self.events_table() {
            if let Some(found) = t.has_system(system) {
                return Some(found);
            }
            self.restore_events();
        }
        Some(self.trace_events()?.value.has_system(system))
    }

    /// The systems that have a trace event called `event`, in the list's order; `None`
    /// without an event list.
    pub fn trace_event_systems(&self, event: &str) -> Option<Vec<String>> {
        if let Some(t) = self.events_table() {
            if let Some(found) = t.systems_of(event) {
                return Some(found);
            }
            self.restore_events();
        }
        Some(self.trace_events()?.value.systems_of(event).to_vec())
    }

    /// Reads every file left for later (config, ftrace list, blacklist) and returns the
    /// first that cannot be read: commands that use the whole model call this, so a
    /// broken file is an error, as if it had been read at open.
    /// A file kept as a table ([`crate::paged`]) read cleanly when it was stored and is not
    /// read again.
    pub fn load_deferred(&self) -> Result<(), String> {
        if self.config_table().is_none() {
            let _ = self.config();
        }
        if self.ftrace_table().is_none() {
            let _ = self.filter_functions();
        }
        if self.blacklist_table().is_none() {
            let _ = self.kprobe_blacklist();
        }
        if self.events_table().is_none() {
            let _ = self.trace_events();
        }
        if self.inputs.deferred.error_injection.is_some() {
            let _ = self.error_injection();
        }
        match self.deferred_error() {
            Some(e) => Err(e.to_owned()),
            None => Ok(()),
        }
    }

    /// Why the first of the files left for later that has been read so far could not be
    /// read (in [`Self::load_deferred`]'s order): a command that reads only what it asks
    /// for (a compiled object's check) calls this at the end, so a broken file it used is
    /// the same error as if it had been read at open, and one it never needed is no error.
    pub fn deferred_error(&self) -> Option<&str> {
        [
            self.error_injection.get().and_then(|r| r.as_ref()?.as_ref().err()),
            self.config.get().and_then(|r| r.as_ref()?.as_ref().err()),
            self.filter_functions.get().and_then(|r| r.as_ref()?.as_ref().err()),
            self.kprobe_blacklist.get().and_then(|r| r.as_ref()?.as_ref().err()),
            self.trace_events.get().and_then(|r| r.as_ref()?.as_ref().err()),
        ]
        .into_iter()
        .flatten()
        .next()
        .map(String::as_str)
    }

    /// The symbol map, read on first use.
    pub fn symbols(&self) -> Option<&Loaded<SymbolTable>> {
        self.symbols_read()?.as_ref().ok()
    }

    /// Whether the symbol map can put a symbol in a module, answered without reading a map
    /// left for later: only kallsyms has the `[module]` column (a System.map, an image's
    /// own tables and ELF symbols are the image's alone). B611 asks the map which module
    /// has a name only then, instead of parsing a 7 MB System.map that cannot say.
    pub fn symbols_name_modules(&self) -> bool {
        match self.symbols.get() {
            Some(read) => read.as_ref().and_then(|r| r.as_ref().ok()).is_some_and(|t| !t.value.modules().is_empty()),
            None => self.inputs.deferred_symbols.as_ref().is_some_and(|d| d.kallsyms),
        }
    }

    /// The module the symbol map puts `name` in (kallsyms' `[module]` column). The module
    /// symbols of a kallsyms left for later are kept in the cache (keyed by the file's
    /// path, length and modification time), so a later run answers without parsing it.
    pub fn symbol_module(&self, name: &str) -> Option<&str> {
        self.module_symbols()?.module_of(name)
    }

    /// Whether the symbol map puts any symbol in a module (kallsyms of a machine with
    /// modules loaded); see [`Self::symbol_module`].
    pub fn symbols_have_modules(&self) -> bool {
        self.module_symbols().is_some_and(|m| !m.lines.is_empty())
    }

    fn module_symbols(&self) -> Option<&ModuleSymbols> {
        self.module_symbols
            .get_or_init(|| {
                if !self.symbols_name_modules() {
                    return None;
                }
                let cache = &self.opts.cache;
                let file = self
                    .inputs
                    .deferred_symbols
                    .as_ref()
                    .and_then(|d| Some(format!("{:016x}.modsyms1", cache.source_key(&d.path)?)));
                if let (None, Some(f)) = (self.symbols.get(), &file) {
                    let cached = cache.get_derived(f).and_then(|b| String::from_utf8(b.to_vec()).ok());
                    if let Some(m) = cached.and_then(ModuleSymbols::from_text) {
                        return Some(m);
                    }
                }
                let m = ModuleSymbols::from_table(&self.symbols()?.value);
                if let Some(f) = &file {
                    cache.put_derived(f, m.text.as_bytes());
                }
                Some(m)
            })
            .as_ref()
    }

    /// Why the symbol map could not be read (a malformed line, an unreadable file), once
    /// something needed it: without it, existence is decided from types and ftrace alone.
    pub fn symbols_error(&self) -> Option<&str> {
        self.symbols.get()?.as_ref()?.as_ref().err().map(String::as_str)
    }

    fn symbols_read(&self) -> Option<&Result<Loaded<SymbolTable>, String>> {
        self.symbols
            .get_or_init(|| match self.inputs.deferred_symbols.as_ref() {
                Some(d) => Some(load::read_symbols(d, &self.opts).map_err(|e| e.to_string())),
                None => self.image_kallsyms(),
            })
            .as_ref()
    }

    /// The trace events the symbol map's `__event_*` entries name (`sched_switch`, and
    /// `sys_enter_openat` for `__event_enter__openat`), built on first use and kept: a
    /// pass over every symbol. `None` without a symbol map, or one with fewer than 100
    /// events (kallsyms without data symbols), which settles nothing.
    pub fn symbol_events(&self) -> Option<&SymbolEvents> {
        self.symbol_events
            .get_or_init(|| {
                let mut events = SymbolEvents { names: Default::default(), syscalls: false };
                for sym in self.symbols()?.value.iter() {
                    let Some(n) = sym.name.strip_prefix("__event_") else { continue };
                    if let Some(sc) = n.strip_prefix("enter__") {
                        events.names.insert(format!("sys_enter_{sc}"));
                        events.syscalls = true;
                    } else if let Some(sc) = n.strip_prefix("exit__") {
                        events.names.insert(format!("sys_exit_{sc}"));
                        events.syscalls = true;
                    } else {
                        events.names.insert(n.to_owned());
                    }
                }
                (events.names.len() >= 100).then_some(events)
            })
            .as_ref()
    }

    /// The symbols an image carries for itself (its kallsyms tables, what `/proc/kallsyms`
    /// prints), for a kernel given as an image without a System.map: the addresses and
    /// (as the distance to the next symbol) the sizes of its functions.
    fn image_kallsyms(&self) -> Option<Result<Loaded<SymbolTable>, String>> {
        let elf = self.image()?;
        let from = match &self.inputs.elf {
            Some(e) => e.from.clone(),
            None => {
                Provenance { path: self.inputs.deferred.image.clone()?, codec: None, container: load::Container::File }
            }
        };
        let percpu = self.config_enabled("KALLSYMS_ABSOLUTE_PERCPU");
        // An image without the tables (CONFIG_KALLSYMS off) has no symbol map: absent, not broken.
        let text = fevlint_load::kallsyms::kallsyms_text(elf, percpu).ok()?;
        let value = SymbolTable::parse_kallsyms(text.as_bytes(), elf.path()).ok()?;
        let from = Provenance { container: load::Container::Computed("the image's kallsyms tables"), ..from };
        Some(Ok(Loaded { value, from }))
    }

    /// Whether the symbol map has a text symbol called `name`; `None` without a symbol
    /// map (or one that cannot be read).
    fn text_symbol(&self, name: &str) -> Option<bool> {
        if self.symbols.get().is_none() {
            if let Some(found) = self.text_symbol_cached(name) {
                return Some(found);
            }
        }
        self.symbols().map(|s| s.value.by_name(name).any(|s| s.is_text()))
    }

    /// Whether the set of the text symbols of a symbol map not read yet has `name`: the
    /// set is kept in the cache (keyed by the file's path, length and modification time,
    /// [`Cache::source_key`]) and read a page at a time ([`Cache::open_paged`]: a lookup
    /// reads the few pages of the 3 MB set its binary search touches, each checked by its
    /// CRC-32), so a later run answers without reading the map or the whole set. `None`
    /// when there is no stored set (the map is parsed, answers, and the set is stored:
    /// a hit means the same file parsed before) or a page of it is damaged (stored again).
    fn text_symbol_cached(&self, name: &str) -> Option<bool> {
        self.symbol_set_cached(&self.text_symbols, "textsyms2", |s| s.is_text(), name)
    }

    /// Whether the symbol map has a symbol (of any type) called `name`, as libbpf resolves
    /// a typeless `__ksym` extern; `None` without a symbol map (or one that cannot be
    /// read). The set of its names is kept in the cache (`*.allsyms1`, as the text
    /// symbols are), so a later run answers without parsing the map.
    pub fn has_symbol(&self, name: &str) -> Option<bool> {
        if self.symbols.get().is_none() {
            if let Some(found) = self.symbol_set_cached(&self.all_symbols, "allsyms1", |_| true, name) {
                return Some(found);
            }
        }
        self.symbols().map(|s| s.value.by_name(name).next().is_some())
    }

    /// The names of the symbol map (of any type) starting with `prefix`, sorted, each
    /// once; `None` without a symbol map. From the set of its names kept in the cache
    /// (see [`Self::has_symbol`]) while the map is not read: B611 expands a
    /// `kprobe.multi` pattern over them as libbpf 1.1 does over kallsyms.
    pub fn symbols_with_prefix(&self, prefix: &str) -> Option<Vec<String>> {
        if self.symbols.get().is_none() {
            let query = |(len, read): SetReader<'_>| FunctionNames::prefixed_in(len, read, prefix);
            if let Some(found) = self.symbol_set_query(&self.all_symbols, "allsyms1", |_| true, query) {
                return Some(found);
            }
        }
        let mut names: Vec<String> =
            self.symbols()?.value.iter().filter(|s| s.name.starts_with(prefix)).map(|s| s.name.to_owned()).collect();
        names.sort_unstable();
        names.dedup();
        Some(names)
    }

    /// Whether the set of the names of a symbol map not read yet that `keep` keeps has
    /// `name`, from the set stored as `ext` (see [`Self::text_symbol_cached`]).
    fn symbol_set_cached(
        &self,
        cell: &OnceLock<Option<SymbolSet>>,
        ext: &str,
        keep: fn(&Symbol<'_>) -> bool,
        name: &str,
    ) -> Option<bool> {
        let query = |(len, read): SetReader<'_>| FunctionNames::contains_in(len, read, name);
        self.symbol_set_query(cell, ext, keep, query)
    }

    /// `query` over the set stored as `ext` (stored now, from the map, when there is
    /// none, and stored again when `query` meets a damaged page); `None` when there is
    /// no stored set or `query` fails.
    fn symbol_set_query<T>(
        &self,
        cell: &OnceLock<Option<SymbolSet>>,
        ext: &str,
        keep: fn(&Symbol<'_>) -> bool,
        query: impl FnOnce(SetReader<'_>) -> Option<T>,
    ) -> Option<T> {
        let cache = &self.opts.cache;
        let d = self.inputs.deferred_symbols.as_ref()?;
        let file = || Some(format!("{:016x}{:02x}.{ext}", cache.source_key(&d.path)?, u8::from(d.kallsyms)));
        let entry = cell.get_or_init(|| {
            let file = file()?;
            if let Some(entry) = cache.open_paged(&file) {
                return Some(SymbolSet { entry });
            }
            self.store_symbol_set(&file, keep);
            None
        });
        let set = entry.as_ref()?;
        let e = &set.entry;
        // A page that fails its check fails the query, and the set is stored again.
        let found = query((e.len(), &|r| e.get(r)));
        if found.is_none() {
            if let Some(f) = file() {
                self.store_symbol_set(&f, keep);
            }
        }
        found
    }

    /// How many traceable functions the ftrace list has called `name` (a folder's list
    /// answers from its table); `None` without a list.
    pub fn traceable_count(&self, name: &str) -> Option<usize> {
        self.ftrace_of(name).map(|f| f.0)
    }

    /// Stores the set of the names of the symbol map's symbols `keep` keeps as `file`
    /// (parsing the map).
    fn store_symbol_set(&self, file: &str, keep: fn(&Symbol<'_>) -> bool) {
        if let Some(table) = self.symbols() {
            let t = FunctionNames::build_set(table.value.iter().filter(|s| keep(s)).map(|s| s.name));
            self.opts.cache.put_paged(file, t.as_bytes());
        }
    }

    /// The kernel image (its code), when there is one: the image the kernel was opened
    /// from, or a folder's image, read on first use (decompressing a vmlinuz costs about
    /// 0.3 s). `None` without an image, or when it cannot be read ([`Self::image_error`]).
    pub fn image(&self) -> Option<&fevlint_load::elf::KernelElf> {
        if let Some(e) = &self.inputs.elf {
            return Some(&e.value);
        }
        self.image_read()?.as_ref().ok().map(|e| &e.value)
    }

    /// Why the folder's image could not be read, once something needed it.
    pub fn image_error(&self) -> Option<&str> {
        self.image.get()?.as_ref()?.as_ref().err().map(String::as_str)
    }

    fn image_read(&self) -> Option<&Result<Loaded<fevlint_load::elf::KernelElf>, String>> {
        self.image
            .get_or_init(|| {
                let p = self.inputs.deferred.image.as_deref()?;
                Some(load::read_image(p, &self.opts).map_err(|e| e.to_string()))
            })
            .as_ref()
    }

    /// The kernel's code for kprobe placement: the image, its tables and the symbol map
    /// (all three needed). `None` when any is missing.
    pub fn code(&self) -> Option<crate::code::Code<'_>> {
        let elf = self.image()?;
        let symbols = &self.symbols()?.value;
        let sites = self
            .sites
            .get_or_init(|| {
                // struct alt_instr gained a 16-bit `flags` in 6.3 (12 -> 14 bytes).
                let release = self.config_release();
                let v = release.as_deref().map(|r| {
                    let mut it = r.split(|c: char| !c.is_ascii_digit()).map(|x| x.parse::<u32>().unwrap_or(0));
                    (it.next().unwrap_or(0), it.next().unwrap_or(0))
                });
                let alt = match v {
                    Some(v) if v >= (6, 3) => 14,
                    Some(_) => 12,
                    None => {
                        let size = elf.section(".altinstructions").map_or(0, |s| s.size);
                        if size % 14 == 0 && size % 12 != 0 {
                            14
                        } else {
                            12
                        }
                    }
                };
                Some(crate::code::Sites::read(elf, symbols, alt))
            })
            .as_ref()?;
        let blacklist = self.kprobe_blacklist().map(|b| &b.value);
        Some(crate::code::Code { elf, symbols, sites, blacklist })
    }

    /// Traceable clones by base name (`finish_task_switch` → `finish_task_switch.isra.0`).
    fn clone_index(&self) -> &HashMap<String, Vec<String>> {
        self.clones.get_or_init(|| {
            let mut map: HashMap<String, Vec<String>> = HashMap::new();
            if let Some(ff) = self.filter_functions() {
                for name in ff.value.dotted() {
                    let (base, _) = clone_base(name);
                    let v = map.entry(base.to_owned()).or_default();
                    if !v.iter().any(|n| n == name) {
                        v.push(name.to_owned());
                    }
                }
            }
            map
        })
    }

    /// What the kernel knows about a function name.
    pub fn function(&self, name: &str) -> Result<FunctionFacts, ModelError> {
        let mut prototypes = match self.types() {
            Some(t) => t.functions(name)?,
            None => Vec::new(),
        };
        if let Some(d) = &self.dwarf {
            // Declaration lines from DWARF, matched by parameter names.
            if let Ok(found) = d.functions(name) {
                for p in prototypes.iter_mut().filter(|p| p.decl.is_none()) {
                    let names = |f: &FunctionInfo| f.proto.params.iter().map(|x| x.name.clone()).collect::<Vec<_>>();
                    if let Some(m) = found.iter().find(|f| names(f) == names(p)) {
                        p.decl.clone_from(&m.decl);
                    }
                }
            }
        }
        let ftrace = self.ftrace_of(name);
        let clones = ftrace.as_ref().map(|f| f.1.clone()).unwrap_or_default();
        let (trace, trace_from) = match ftrace {
            Some((count, _, from)) => {
                let trace = if count > 0 {
                    Trace::Traceable { count }
                } else if !clones.is_empty() {
                    Trace::OnlyClones(clones.clone())
                } else {
                    Trace::NotTraceable
                };
                (trace, self.ftrace_from_text(from))
            }
            None => (Trace::Unknown, None),
        };
        // The symbol map settles existence when neither types nor ftrace know the name.
        let known = !prototypes.is_empty() || !matches!(trace, Trace::NotTraceable | Trace::Unknown);
        let text_symbol = if known { None } else { self.text_symbol(name) };
        let kprobe_blacklisted = self.kprobe_blacklisted(name);
        let syscall = syscall_name(name).map(|(w, n)| (w, n.to_owned()));
        Ok(FunctionFacts {
            name: name.to_owned(),
            prototypes,
            trace,
            trace_from,
            clones,
            text_symbol,
            kprobe_blacklisted,
            syscall,
        })
    }

    /// [`FunctionFacts::exists`] of [`Kernel::function`] (`false` where it fails), without
    /// building the facts: no prototype decoded past the lookup, no declaration line, no
    /// provenance text, no blacklist lookup (it does not decide existence). What a rename
    /// suggestion asks of each name it tries, most of which the kernel does not have. Types,
    /// ftrace list and symbol map are asked as `function` asks them.
    pub fn function_exists(&self, name: &str) -> bool {
        let prototypes = match self.types().map(|t| t.functions(name)) {
            Some(Ok(p)) => !p.is_empty(),
            Some(Err(_)) => return false,
            None => false,
        };
        // Traceable, or only its clones are: `Trace::Traceable` or `Trace::OnlyClones`.
        let traced = || self.ftrace_of(name).is_some_and(|(count, clones, _)| count > 0 || !clones.is_empty());
        // The symbol map is asked only when neither types nor ftrace know the name.
        prototypes || traced() || self.text_symbol(name) == Some(true)
    }

    /// Every function name the kernel knows (types and ftrace list), sorted, for
    /// suggestions and completion. Built once per kernel and kept in the cache (keyed by
    /// the BTF's and the ftrace list's contents): a later run maps it.
    pub fn function_names(&self) -> &FunctionNames {
        self.names.get_or_init(|| {
            let file = self.names_key().map(|k| format!("{k:016x}.names"));
            let cache = &self.opts.cache;
            if let Some(t) = file.as_deref().and_then(|f| cache.get_derived(f)).and_then(FunctionNames::from_bytes) {
                return t;
            }
            let typed: Vec<String> = self.types().and_then(|t| t.function_names().ok()).unwrap_or_default();
            let traced = self.filter_functions().into_iter().flat_map(|ff| ff.value.iter().map(|(n, _)| n));
            let t = FunctionNames::build(typed.iter().map(String::as_str).chain(traced));
            if let Some(f) = &file {
                cache.put_derived(f, t.as_bytes());
            }
            t
        })
    }

    /// What the function names are computed from: the raw BTF and the ftrace list, by
    /// content. `None` for types from DWARF (its own index is cached by build-id).
    fn names_key(&self) -> Option<u64> {
        let types = match (self.inputs.btf_len(), self.types()) {
            (Some(len), _) => (u64::from(self.btf_crc.unwrap_or(0)) << 32) ^ len as u64,
            (None, Some(_)) => return None,
            (None, None) => 0,
        };
        let traced = match self.ftrace_table() {
            Some(t) => t.fingerprint,
            None => self.filter_functions().map_or(0, |ff| ff.value.fingerprint()),
        };
        let mut h = crc32fast::Hasher::new();
        h.update(b"function-names 2");
        h.update(&types.to_le_bytes());
        h.update(&traced.to_le_bytes());
        Some(u64::from(h.finalize()) << 32 ^ types.rotate_left(17) ^ traced)
    }

    /// Up to `n` function names within a small edit distance of `name`, closest first
    /// (compiler clones left out).
    pub fn similar_functions(&self, name: &str, n: usize) -> Vec<String> {
        self.similar_functions_of(&[name], n).pop().unwrap_or_default()
    }

    /// [`Kernel::similar_functions`] of each of `names`: the answers are remembered in the
    /// cache beside the function names ([`crate::similar`]), so a later run asking the same
    /// names neither searches nor reads the names table.
    pub fn similar_functions_of(&self, names: &[&str], n: usize) -> Vec<Vec<String>> {
        // The key is a CRC of the ftrace list where the cache holds no table of it: not
        // computed for a batch with nothing to ask (every check of a script whose
        // functions all exist).
        if names.is_empty() {
            return Vec::new();
        }
        match self.names_key() {
            Some(key) => self.similar.closest(&self.opts.cache, key, || self.function_names(), names, n),
            None => names
                .iter()
                .map(|name| self.function_names().closest(name, n).into_iter().map(str::to_owned).collect())
                .collect(),
        }
    }
}

/// A file read at most once: what the open read, else the deferred file when asked.
fn lazy<'a, T>(
    cell: &'a OnceLock<Option<Result<Loaded<T>, String>>>,
    path: Option<&std::path::Path>,
    opts: &OpenOptions,
    read: fn(&std::path::Path, &OpenOptions) -> Result<Loaded<T>, fevlint_load::LoadError>,
) -> Option<&'a Result<Loaded<T>, String>> {
    cell.get_or_init(|| Some(read(path?, opts).map_err(|e| e.to_string()))).as_ref()
}

/// [`load::read_filter_functions`] through the derived-data cache: the parsed list (and
/// the codec the file was decompressed with, for its provenance) stored under the file's
/// [`Cache::source_key`]; a stored list that does not read back is parsed again.
fn read_filter_functions_cached(
    path: &Path,
    opts: &OpenOptions,
) -> Result<Loaded<FilterFunctions>, fevlint_load::LoadError> {
    let cache = &opts.cache;
    let Some(name) = cache.source_key(path).map(|k| format!("{k:016x}.ftrace1")) else {
        return load::read_filter_functions(path, opts);
    };
    let from = |codec| load::Provenance { path: path.to_owned(), codec, container: load::Container::File };
    if let Some(b) = cache.get_derived(&name) {
        let codec = match b.first() {
            Some(&0) => Some(None),
            Some(&c) => fevlint_load::Codec::ALL.get(usize::from(c) - 1).map(|&c| Some(c)),
            None => None,
        };
        if let (Some(codec), Some(value)) = (codec, FilterFunctions::from_bytes(&b[1..])) {
            return Ok(Loaded { value, from: from(codec) });
        }
    }
    let read = load::read_filter_functions(path, opts)?;
    let codec = read.from.codec.and_then(|c| fevlint_load::Codec::ALL.iter().position(|&x| x == c));
    let mut bytes = vec![codec.map_or(0, |i| i as u8 + 1)];
    bytes.extend_from_slice(&read.value.to_bytes());
    cache.put_derived(&name, &bytes);
    Ok(read)
}

/// The BTF reader's name indexes kept in the derived-data cache ([`Cache::get_derived`]).
struct DerivedCache(Cache);

impl fevlint_btf::IndexStore for DerivedCache {
    fn get(&self, name: &str) -> Option<fevlint_btf::IndexBytes> {
        self.0.get_derived(name).map(|b| Box::new(b) as fevlint_btf::IndexBytes)
    }

    fn put(&self, name: &str, bytes: &[u8]) {
        self.0.put_derived(name, bytes)
    }

    fn paged(&self) -> bool {
        true
    }

    fn get_paged(&self, name: &str) -> Option<fevlint_btf::IndexPages> {
        self.0.open_paged(name).map(|e| Box::new(Pages(e)) as fevlint_btf::IndexPages)
    }

    fn put_paged(&self, name: &str, bytes: &[u8]) {
        self.0.put_paged(name, bytes)
    }
}

/// A paged cache entry as the BTF reader reads its name indexes.
struct Pages(fevlint_load::cache::PagedEntry);

impl fevlint_btf::PagedBytes for Pages {
    fn len(&self) -> usize {
        self.0.len()
    }

    fn read(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        self.0.get(range)
    }
}

/// The kernel's BTF reader from its raw BTF ([`KernelInputs::btf_paged`], else
/// [`KernelInputs::btf`]), with where it came from; `None` when it has none. A paged one
/// whose stored layout does not fit is read whole; one read whole from the cached
/// decompression of a file leaves what lets the next run read it by page ([`crate::cached_btf::remember`]).
fn open_btf(
    inputs: &mut KernelInputs,
    crc: Option<u32>,
    cache: &Cache,
) -> Result<Option<(Btf, Provenance)>, ModelError> {
    if let Some(p) = inputs.btf_paged.take() {
        if let Some(btf) = p.value.to_btf(p.from.to_string())? {
            let from = p.from.clone();
            inputs.btf_paged = Some(p);
            return Ok(Some((btf, from)));
        }
        let whole = p.value.read_whole().ok_or_else(|| ModelError::Malformed {
            source_name: p.from.to_string(),
            offset: 0,
            what: "the cached BTF could not be read again".into(),
        })?;
        inputs.btf = Some(Loaded { value: whole, from: p.from });
    }
    let Some(b) = &inputs.btf else { return Ok(None) };
    let btf = Btf::parse(b.from.to_string(), b.value.clone())?;
    if let (Some(crc), Some(_), load::Container::File) = (crc, b.from.codec, &b.from.container) {
        crate::cached_btf::remember(cache, &b.from.path, crc, &b.value, &btf);
    }
    Ok(Some((btf, b.from.clone())))
}
