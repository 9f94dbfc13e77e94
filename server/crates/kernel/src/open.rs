//! `open(path)`: turns whatever the user passed as `--kernel` into [`KernelInputs`],
//! recording for each piece where it came from and how it was decoded.

use std::fmt;
use std::path::{Path, PathBuf};

use fevlint_load::blob::{Blob, BlobSlice};
use fevlint_load::bzimage;
use fevlint_load::cache::Cache;
use fevlint_load::decompress::{self, Content, Limits, Origin};
use fevlint_load::elf::{ftrace_function_names, is_elf, KernelElf};
use fevlint_load::error::LoadError;
use fevlint_load::symbols::{
    ErrorInjectionList, FilterFunctions, KernelConfig, KprobeBlacklist, SymbolFormat, SymbolTable, TraceEvents,
};
use fevlint_load::Codec;
use fevlint_types::Arch;

/// When to decompress and parse a kernel image (vmlinux/vmlinuz) found in a folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ImagePolicy {
    /// Only when it adds something the folder lacks: BTF, or the ftrace list (which
    /// the image's mcount table gives together with symbols).
    #[default]
    IfNeeded,
    Always,
    Never,
}

#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    pub limits: Limits,
    /// Where decompressions and private copies are kept (the edge decides; the default
    /// caches nothing).
    pub cache: Cache,
    pub image: ImagePolicy,
    /// Leave a folder's System.map/kallsyms unread (see [`KernelInputs::deferred_symbols`])
    /// when nothing else needs it now: parsing it is the slowest part of opening.
    pub defer_symbols: bool,
}

/// What wrapped a piece of data inside its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Container {
    /// The file's contents (after decompression, if `codec` is set).
    File,
    /// The payload of a bzImage, decompressed to an ELF.
    BzImage,
    /// A section of an ELF (e.g. `.BTF`).
    ElfSection(String),
    /// A member of a tar archive (BTFHub `.btf.tar.xz`), read in memory.
    TarMember(String),
    /// Derived from other inputs (e.g. the ftrace list from the mcount table).
    Computed(&'static str),
}

/// Where one piece of [`KernelInputs`] came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    pub path: PathBuf,
    /// The decompressor applied to the file (outermost), if any.
    pub codec: Option<Codec>,
    pub container: Container,
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(c) = self.codec {
            write!(f, " ({c})")?;
        }
        match &self.container {
            Container::File => Ok(()),
            Container::BzImage => write!(f, ", bzImage payload"),
            Container::ElfSection(s) => write!(f, ", section {s}"),
            Container::TarMember(m) => write!(f, ", member {m}"),
            Container::Computed(how) => write!(f, ", {how}"),
        }
    }
}

/// A value with its provenance.
#[derive(Debug)]
pub struct Loaded<T> {
    pub value: T,
    pub from: Provenance,
}

/// How the architecture was determined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchSource {
    ElfHeader,
    Config,
    /// Symbol addresses wider than 32 bits (or not).
    SymbolWidth,
}

/// Everything read for one kernel. Pieces that the input does not have are `None`.
#[derive(Debug, Default)]
pub struct KernelInputs {
    /// For messages: the folder name, `uname -r` of the running kernel, or the file
    /// name with the build-id.
    pub name: String,
    pub arch: Option<(Arch, ArchSource)>,
    /// The raw BTF blob (vmlinux), owned or a zero-copy slice of a mapped file.
    pub btf: Option<Loaded<BlobSlice>>,
    /// The CRC-32 of [`Self::btf`]'s bytes, when the cache already checked it as it read
    /// them (a whole cached file); else computed by whoever needs it.
    pub btf_crc: Option<u32>,
    /// The raw BTF left in the cache to be read by page, instead of [`Self::btf`]: a BTF
    /// file whose decompression a run before read whole (see `cached_btf`).
    pub btf_paged: Option<Loaded<crate::cached_btf::CachedBtf>>,
    /// Split BTF of modules, on top of [`Self::btf`] (see [`Self::add_module_btf`]).
    pub module_btf: Vec<Loaded<BlobSlice>>,
    /// The folder the modules' BTF was read from (a copy of `/sys/kernel/btf`): the
    /// modules [`Self::module_btf`] holds are all that were loaded. `None`: unknown.
    pub module_btf_dir: Option<PathBuf>,
    pub elf: Option<Loaded<KernelElf>>,
    pub symbols: Option<Loaded<SymbolTable>>,
    pub config: Option<Loaded<KernelConfig>>,
    pub filter_functions: Option<Loaded<FilterFunctions>>,
    pub kprobe_blacklist: Option<Loaded<KprobeBlacklist>>,
    /// `available_events` (`SYSTEM:EVENT` lines): the trace events and their systems.
    pub trace_events: Option<Loaded<TraceEvents>>,
    /// `error_injection_list` (a copy of /sys/kernel/debug/error_injection/list).
    pub error_injection: Option<Loaded<ErrorInjectionList>>,
    /// Things worth telling the user (a file skipped, a tracefs file not readable).
    pub notes: Vec<String>,
    /// The config, ftrace list and kprobe blacklist of a folder, found but not read yet
    /// (`OpenOptions::defer_symbols`): `Kernel` reads each when a question needs it.
    pub deferred: DeferredFiles,
    /// A symbol file found but not read yet (`OpenOptions::defer_symbols`): read it with
    /// [`read_symbols`] when needed.
    pub deferred_symbols: Option<DeferredSymbols>,
}

/// Folder files left for later.
#[derive(Clone, Debug, Default)]
pub struct DeferredFiles {
    /// The folder's image (vmlinux/vmlinuz), when its other files gave the rest: its
    /// code is read when a question needs it (instruction boundaries).
    pub image: Option<PathBuf>,
    pub config: Option<PathBuf>,
    pub filter_functions: Option<PathBuf>,
    pub kprobe_blacklist: Option<PathBuf>,
    pub trace_events: Option<PathBuf>,
    pub error_injection: Option<PathBuf>,
}

/// The kinds of text file a kernel folder holds, each with its own bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    Config,
    Symbols,
    FtraceList,
    Blacklist,
    EventList,
    InjectionList,
}

impl TextKind {
    /// The largest file of this kind (decompressed) fevlint reads: checked before the
    /// file is read (by its size) and while it is decompressed, so a 1 GB config or a
    /// 300 MB System.map is refused at once instead of costing gigabytes. Real ones are
    /// far smaller: Debian 6.12's config is 280 KB, its System.map 7 MB, its ftrace list
    /// 1.5 MB; an allyesconfig build's System.map is about 30 MB.
    pub const fn max_bytes(self) -> u64 {
        match self {
            TextKind::Config => 16 << 20,
            TextKind::Symbols => 128 << 20,
            TextKind::FtraceList | TextKind::Blacklist => 64 << 20,
            // Debian 6.12 lists 1,476 events (44 KB).
            TextKind::EventList => 16 << 20,
            // A few hundred functions.
            TextKind::InjectionList => 4 << 20,
        }
    }

    fn what(self) -> &'static str {
        match self {
            TextKind::Config => "a kernel config",
            TextKind::Symbols => "a symbol map (System.map, kallsyms)",
            TextKind::FtraceList => "an ftrace list",
            TextKind::Blacklist => "a kprobe blacklist",
            TextKind::EventList => "a trace event list (available_events)",
            TextKind::InjectionList => "an error-injection list",
        }
    }
}

/// Reads a deferred config.
pub fn read_config(path: &Path, opts: &OpenOptions) -> Result<Loaded<KernelConfig>, LoadError> {
    read_text(path, TextKind::Config, opts, KernelConfig::parse)
}

/// Reads a deferred ftrace list.
pub fn read_filter_functions(path: &Path, opts: &OpenOptions) -> Result<Loaded<FilterFunctions>, LoadError> {
    read_text(path, TextKind::FtraceList, opts, FilterFunctions::parse)
}

/// Reads a deferred kprobe blacklist.
pub fn read_kprobe_blacklist(path: &Path, opts: &OpenOptions) -> Result<Loaded<KprobeBlacklist>, LoadError> {
    read_text(path, TextKind::Blacklist, opts, KprobeBlacklist::parse)
}

/// Reads a deferred trace event list.
pub fn read_trace_events(path: &Path, opts: &OpenOptions) -> Result<Loaded<TraceEvents>, LoadError> {
    read_text(path, TextKind::EventList, opts, TraceEvents::parse)
}

/// Reads a deferred error-injection list.
pub fn read_error_injection(path: &Path, opts: &OpenOptions) -> Result<Loaded<ErrorInjectionList>, LoadError> {
    read_text(path, TextKind::InjectionList, opts, ErrorInjectionList::parse)
}

/// A System.map or kallsyms file left for later.
#[derive(Clone, Debug)]
pub struct DeferredSymbols {
    pub path: PathBuf,
    pub kallsyms: bool,
}

/// Reads a deferred symbol file.
pub fn read_symbols(d: &DeferredSymbols, opts: &OpenOptions) -> Result<Loaded<SymbolTable>, LoadError> {
    if d.kallsyms {
        read_text(&d.path, TextKind::Symbols, opts, SymbolTable::parse_kallsyms)
    } else {
        read_text(&d.path, TextKind::Symbols, opts, SymbolTable::parse_system_map)
    }
}

/// The bytes of a deferred symbol file, decompressed (mapped from the cache when it can
/// be), unparsed.
pub fn read_symbol_bytes(d: &DeferredSymbols, opts: &OpenOptions) -> Result<Blob, LoadError> {
    read_text_bytes(&d.path, TextKind::Symbols, opts).map(|(bytes, _)| bytes)
}

/// Reads a kernel image (vmlinux, vmlinuz, compressed or not) left for later.
pub fn read_image(path: &Path, opts: &OpenOptions) -> Result<Loaded<KernelElf>, LoadError> {
    let mut k = KernelInputs::default();
    let opts = OpenOptions { image: ImagePolicy::Always, defer_symbols: true, ..opts.clone() };
    read_image_or_btf(path, &opts, &mut k)?;
    k.elf.ok_or_else(|| LoadError::Unrecognized { path: path.to_owned(), message: "not a kernel image".into() })
}

/// The keyword for the running kernel.
pub const RUNNING: &str = "running";

/// [`open_with`] with default options.
pub fn open(path: &Path) -> Result<KernelInputs, LoadError> {
    open_with(path, &OpenOptions::default())
}

/// Reads a kernel given as: a raw BTF file (plain or compressed), an ELF vmlinux, a
/// bzImage, a BTFHub `.btf.tar.xz`, a folder holding any of those plus
/// `System.map`/`kallsyms`, `config`, `available_filter_functions`, `kprobe_blacklist`,
/// `available_events`, `error_injection_list`
/// (each possibly compressed), or the word `running` (write `./running` for a folder
/// of that name).
pub fn open_with(path: &Path, opts: &OpenOptions) -> Result<KernelInputs, LoadError> {
    let mut k = if path == Path::new(RUNNING) {
        open_running(opts)?
    } else if path.is_dir() {
        open_dir(path, opts)?
    } else {
        let mut k = KernelInputs::default();
        read_image_or_btf(path, opts, &mut k)?;
        k.name = file_display_name(path, &k);
        // A vmlinux with symbols carries its own ftrace call-site table.
        k.compute_ftrace();
        k
    };
    k.settle_arch();
    Ok(k)
}

impl KernelInputs {
    /// Whether the kernel's raw BTF was found ([`Self::btf`] or [`Self::btf_paged`]).
    pub fn has_btf(&self) -> bool {
        self.btf.is_some() || self.btf_paged.is_some()
    }

    /// The length of the kernel's raw BTF, when it has one.
    pub fn btf_len(&self) -> Option<usize> {
        self.btf.as_ref().map(|b| b.value.len()).or_else(|| self.btf_paged.as_ref().map(|b| b.value.len()))
    }

    /// Adds a module's split BTF (raw or compressed). The BTF parser reads it on top of
    /// [`Self::btf`].
    pub fn add_module_btf(&mut self, path: &Path, opts: &OpenOptions) -> Result<(), LoadError> {
        let (bytes, codec) = read_decompressed(path, Content::Btf, &opts.limits, &opts.cache)?;
        if !is_btf(&bytes) {
            return Err(LoadError::Unrecognized {
                path: path.to_owned(),
                message: "not a raw BTF blob (no 0xEB9F magic)".into(),
            });
        }
        self.module_btf.push(Loaded {
            value: bytes.whole(),
            from: Provenance { path: path.to_owned(), codec, container: Container::File },
        });
        Ok(())
    }

    /// Adds the split BTF of every module in `dir` (a copy of `/sys/kernel/btf`: one file
    /// per loaded module, named after it, beside `vmlinux`, which is skipped), in name
    /// order. A file that is not BTF is skipped with a note.
    pub fn add_module_btf_dir(&mut self, dir: &Path, opts: &OpenOptions) {
        let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
            Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect(),
            Err(e) => {
                self.notes.push(format!("{}: module BTF not read: {e}", dir.display()));
                return;
            }
        };
        files.retain(|p| p.file_name().is_some_and(|n| !n.to_string_lossy().starts_with("vmlinux")));
        files.sort();
        for f in files {
            if let Err(e) = self.add_module_btf(&f, opts) {
                self.notes.push(format!("module BTF skipped: {e}"));
            }
        }
        self.module_btf_dir = Some(dir.to_owned());
    }

    /// The ftrace call-site offset limit for this kernel (0, or 4 with IBT), when the
    /// config is known.
    pub fn ftrace_max_offset(&self) -> Option<u64> {
        self.config.as_ref().map(|c| c.value.ftrace_max_offset())
    }

    fn settle_arch(&mut self) {
        if let Some(e) = &self.elf {
            self.arch = Some((e.value.arch(), ArchSource::ElfHeader));
        } else if let Some(a) = self.config.as_ref().and_then(|c| c.value.arch()) {
            self.arch = Some((a, ArchSource::Config));
        } else if let Some(s) = &self.symbols {
            let max = s.value.iter().map(|s| s.addr.0).max().unwrap_or(0);
            if max > u64::from(u32::MAX) {
                self.arch = Some((Arch::X86_64, ArchSource::SymbolWidth));
            } else if max > 0 {
                self.arch = Some((Arch::X86_32, ArchSource::SymbolWidth));
            }
        }
    }

    /// Computes the ftrace list from the ELF's mcount table when there is no list.
    fn compute_ftrace(&mut self) {
        if self.filter_functions.is_some() || self.deferred.filter_functions.is_some() {
            return;
        }
        let Some(elf) = &self.elf else { return };
        let own = elf.value.symbols();
        let Some(symbols) = self.symbols.as_ref().map(|s| &s.value).or(own) else {
            return;
        };
        match elf.value.ftrace_sites(Some(symbols)) {
            Ok(sites) => {
                let max = self.ftrace_max_offset();
                // Without a config, an ELF with symbol sizes names by containment.
                let max = match (max, symbols.format()) {
                    (None, SymbolFormat::Elf) => None,
                    (m, _) => Some(m.unwrap_or(0)),
                };
                let names = ftrace_function_names(&sites.sites, symbols, max);
                self.filter_functions = Some(Loaded {
                    value: FilterFunctions::from_names(names.iter().map(String::as_str)),
                    from: Provenance {
                        path: elf.from.path.clone(),
                        codec: elf.from.codec,
                        container: Container::Computed("computed from the mcount table"),
                    },
                });
            }
            Err(e) => self.notes.push(format!("no ftrace list: {e}")),
        }
    }
}

fn is_btf(data: &[u8]) -> bool {
    data.starts_with(&[0x9F, 0xEB])
}

/// Reads a file and decompresses it if its magic says so (one level), stopping at once
/// when the first decompressed bytes are not `content`.
fn read_decompressed(
    path: &Path,
    content: Content,
    limits: &Limits,
    cache: &Cache,
) -> Result<(Blob, Option<Codec>), LoadError> {
    if let Some((codec, blob)) = cache.get(path) {
        return Ok((blob, Some(codec)));
    }
    let raw = Blob::read_in(path, cache.dir())?;
    if let Some(streamed) = decompress_into_cache(&raw, path, content, limits, cache) {
        return streamed;
    }
    match decompress::decompress_auto_as(&raw, content, limits, Origin::file(path))? {
        Some((codec, out)) => {
            cache.put(path, codec, &out);
            Ok((Blob::from_vec(out), Some(codec)))
        }
        None => Ok((raw, None)),
    }
}

/// Compressed inputs at least this large (their output is likely past
/// [`fevlint_load::blob::MMAP_THRESHOLD`]) are decompressed into the cache file, not memory.
const STREAM_THRESHOLD: usize = 4 << 20;

/// Decompresses a large compressed `raw` straight into its cache file and maps it, so
/// that the output never sits in memory as a whole. `None` when `raw` is small or not
/// compressed, or the cache is off or cannot be written: decompress in memory then.
fn decompress_into_cache(
    raw: &[u8],
    path: &Path,
    content: Content,
    limits: &Limits,
    cache: &Cache,
) -> Option<Result<(Blob, Option<Codec>), LoadError>> {
    if raw.len() < STREAM_THRESHOLD {
        return None;
    }
    let codec = decompress::detect(raw)?;
    let filled =
        cache.fill(path, codec, |w| decompress::decompress_to(raw, codec, content, limits, Origin::file(path), w))?;
    match filled {
        Ok(blob) => Some(Ok((blob, Some(codec)))),
        Err(decompress::ToError::Load(e)) => Some(Err(e)),
        // The cache file could not be written (a full disk): decompress in memory.
        Err(decompress::ToError::Write(_)) => None,
    }
}

/// A single file that is a kernel image or BTF: fills `btf` and/or `elf`.
fn read_image_or_btf(path: &Path, opts: &OpenOptions, k: &mut KernelInputs) -> Result<(), LoadError> {
    let prov = |codec, container| Provenance { path: path.to_owned(), codec, container };
    // A cached decompression of BTF, read by page when asked, first.
    if let Some(paged) = crate::cached_btf::CachedBtf::open(path, &opts.cache, &opts.limits) {
        let codec = opts.cache.peek(path).map(|(codec, _, _)| codec);
        k.btf_paged = Some(Loaded { value: paged, from: prov(codec, Container::File) });
        return Ok(());
    }
    // A cached decompression first: the compressed file need not even be read (only a
    // file that decompressed is ever cached, so never a bzImage).
    let mut crc = None;
    let (bytes, codec) = match opts.cache.get_checked(path) {
        Some((codec, blob, c)) => {
            crc = Some(c);
            (blob, Some(codec))
        }
        None => {
            let raw = Blob::read_in(path, opts.cache.dir())?;
            // A bzImage before any decompression: its boot sector is not a compression
            // magic, and its payload must be found through the header, not by scanning.
            if decompress::is_bzimage(&raw) {
                let (h, elf) = bzimage::extract_payload(&raw, path, Content::Elf, &opts.limits)?;
                return set_elf(k, Blob::from_vec(elf), path, Some(h.codec), Container::BzImage);
            }
            match decompress_into_cache(&raw, path, Content::KernelImage, &opts.limits, &opts.cache) {
                Some(streamed) => streamed?,
                None => {
                    match decompress::decompress_auto_as(&raw, Content::KernelImage, &opts.limits, Origin::file(path))?
                    {
                        Some((codec, out)) => {
                            opts.cache.put(path, codec, &out);
                            (Blob::from_vec(out), Some(codec))
                        }
                        None => (raw, None),
                    }
                }
            }
        }
    };
    if is_btf(&bytes) {
        k.btf = Some(Loaded { value: bytes.whole(), from: prov(codec, Container::File) });
        k.btf_crc = crc;
        return Ok(());
    }
    if codec.is_some() && decompress::is_bzimage(&bytes) {
        // A compressed bzImage (`vmlinuz.xz`): its payload, as for a plain one.
        let (h, elf) = bzimage::extract_payload(&bytes, path, Content::Elf, &opts.limits)?;
        return set_elf(k, Blob::from_vec(elf), path, Some(h.codec), Container::BzImage);
    }
    if is_elf(&bytes) {
        return set_elf(k, bytes, path, codec, Container::File);
    }
    if decompress::is_tar(&bytes) {
        let (member, range) = decompress::tar_member(&bytes, ".btf", path)?;
        let slice = bytes.slice(range).ok_or_else(|| LoadError::Tar {
            path: path.to_owned(),
            message: format!("member {member} is out of bounds"),
        })?;
        if !is_btf(&slice) {
            return Err(LoadError::Tar {
                path: path.to_owned(),
                message: format!("member {member} is not raw BTF (no 0xEB9F magic)"),
            });
        }
        k.btf = Some(Loaded { value: slice, from: prov(codec, Container::TarMember(member)) });
        return Ok(());
    }
    let head = &bytes[..bytes.len().min(512)];
    let found = if bytes.is_empty() {
        "an empty file".to_owned()
    } else if head.iter().all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace()) {
        let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
        format!("a text file starting with `{}`", String::from_utf8_lossy(&line[..line.len().min(40)]).trim_end())
    } else {
        format!("a file starting with {:02x?}", &bytes[..bytes.len().min(8)])
    };
    Err(LoadError::Unrecognized {
        path: path.to_owned(),
        message: format!(
            "{}not BTF, ELF, bzImage or a tar archive: {found}",
            codec.map(|c| format!("decompressed with {c}, but ")).unwrap_or_default(),
        ),
    })
}

fn set_elf(
    k: &mut KernelInputs,
    bytes: Blob,
    path: &Path,
    codec: Option<Codec>,
    container: Container,
) -> Result<(), LoadError> {
    let elf = KernelElf::parse(bytes, path)?;
    // A bzImage's payload is a kernel by construction; a file named as one is checked.
    if container == Container::File && !elf.could_be_kernel() {
        return Err(LoadError::Unrecognized {
            path: path.to_owned(),
            message: format!("{} without BTF, .debug_info or a kernel's symbols and sections", elf.describe()),
        });
    }
    if !k.has_btf() {
        if let Some(btf) = elf.btf() {
            k.btf = Some(Loaded {
                value: btf,
                from: Provenance {
                    path: path.to_owned(),
                    codec,
                    container: match &container {
                        Container::BzImage => Container::ElfSection(".BTF (bzImage payload)".into()),
                        _ => Container::ElfSection(".BTF".into()),
                    },
                },
            });
        }
    }
    k.elf = Some(Loaded { value: elf, from: Provenance { path: path.to_owned(), codec, container } });
    Ok(())
}

fn file_display_name(path: &Path, k: &KernelInputs) -> String {
    let file = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned());
    match k.elf.as_ref().and_then(|e| e.value.build_id_hex()) {
        Some(id) => format!("{file} (build-id {})", &id[..id.len().min(12)]),
        None => file,
    }
}

/// Finds `dir/NAME` or `dir/NAME.{zst,xz,gz,bz2,lz4,lzma}` (the codec is then taken from
/// the magic, not from the suffix).
fn find(dir: &Path, names: &[&str]) -> Option<PathBuf> {
    for name in names {
        for suffix in ["", ".zst", ".xz", ".gz", ".bz2", ".lz4", ".lzma"] {
            let p = dir.join(format!("{name}{suffix}"));
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The first file in `dir` whose name ends with `suffix` (sorted, for determinism).
fn find_suffix(dir: &Path, suffix: &str) -> Option<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n.to_string_lossy().ends_with(suffix)))
        .collect();
    v.sort();
    v.into_iter().next()
}

fn read_text<T>(
    path: &Path,
    kind: TextKind,
    opts: &OpenOptions,
    parse: impl FnOnce(&[u8], &Path) -> Result<T, LoadError>,
) -> Result<Loaded<T>, LoadError> {
    let (bytes, codec) = read_text_bytes(path, kind, opts)?;
    let value = parse(&bytes, path)?;
    Ok(Loaded { value, from: Provenance { path: path.to_owned(), codec, container: Container::File } })
}

/// A text file's bytes (decompressed), within the bound of its kind (or the limits'
/// `max_output`, when lower: tests lower it): a file over it is refused by its size,
/// before it is read; a compressed one stops decompressing at the bound.
fn read_text_bytes(path: &Path, kind: TextKind, opts: &OpenOptions) -> Result<(Blob, Option<Codec>), LoadError> {
    let max = kind.max_bytes().min(opts.limits.max_output);
    // procfs and sysfs files report size 0: the read itself is bounded below.
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > max {
        return Err(LoadError::Io {
            path: path.to_owned(),
            error: std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("{size} bytes is more than the limit of {max} bytes for {}", kind.what()),
            ),
        });
    }
    let limits = Limits { max_output: max, ..opts.limits };
    let (bytes, codec) = read_decompressed(path, Content::Text, &limits, &opts.cache)?;
    if bytes.len() as u64 > max {
        return Err(LoadError::Io {
            path: path.to_owned(),
            error: std::io::Error::new(
                std::io::ErrorKind::FileTooLarge,
                format!("more than the limit of {max} bytes for {}", kind.what()),
            ),
        });
    }
    Ok((bytes, codec))
}

fn open_dir(dir: &Path, opts: &OpenOptions) -> Result<KernelInputs, LoadError> {
    let mut k = KernelInputs {
        name: dir
            .canonicalize()
            .ok()
            .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| dir.display().to_string()),
        ..KernelInputs::default()
    };
    let symbol_file = if let Some(p) = find(dir, &["System.map"]).or_else(|| find_suffix(dir, "System.map")) {
        Some(DeferredSymbols { path: p, kallsyms: false })
    } else {
        find(dir, &["kallsyms"]).map(|p| DeferredSymbols { path: p, kallsyms: true })
    };
    let ftrace_list = find(dir, &["available_filter_functions"]);
    // Without the ftrace list, the symbols are needed now to compute it from an image.
    // A folder without an image either (BTF, a config and kallsyms: a kernel whose
    // tracefs was not copied) has nothing to compute, and the config (read now) tells
    // the architecture: its symbols too are read when a question needs them (the text
    // symbols K201 asks about are then kept in the cache).
    let computes_nothing = find(dir, &["vmlinux", "vmlinuz", "bzImage"]).is_none()
        && find(dir, &["config", ".config"]).is_some()
        && find(dir, &["vmlinux.btf", "btf"]).or_else(|| find_suffix(dir, ".btf")).is_some();
    let defer = opts.defer_symbols && (ftrace_list.is_some() || computes_nothing);
    match symbol_file {
        Some(d) if defer => k.deferred_symbols = Some(d),
        Some(d) => k.symbols = Some(read_symbols(&d, opts)?),
        None => {}
    }
    // With deferral, what only some questions need is read when one asks (a `kernel
    // type` reads the BTF alone).
    // (Without an ftrace list, the config is needed now: it says how to name the
    // image's mcount sites.)
    let lazy = opts.defer_symbols && ftrace_list.is_some();
    // The architecture comes from the config when nothing else tells it (no BTF to
    // give the pointer size): then the config is read now.
    let has_btf = find(dir, &["vmlinux.btf", "btf"]).or_else(|| find_suffix(dir, ".btf")).is_some();
    if let Some(p) = find(dir, &["config", ".config"]) {
        match lazy && has_btf {
            true => k.deferred.config = Some(p),
            false => k.config = Some(read_text(&p, TextKind::Config, opts, KernelConfig::parse)?),
        }
    }
    if let Some(p) = ftrace_list {
        match lazy {
            true => k.deferred.filter_functions = Some(p),
            false => k.filter_functions = Some(read_text(&p, TextKind::FtraceList, opts, FilterFunctions::parse)?),
        }
    }
    if let Some(p) = find(dir, &["kprobe_blacklist", "blacklist"]) {
        match lazy {
            true => k.deferred.kprobe_blacklist = Some(p),
            false => k.kprobe_blacklist = Some(read_text(&p, TextKind::Blacklist, opts, KprobeBlacklist::parse)?),
        }
    }
    if let Some(p) = find(dir, &["available_events"]) {
        match lazy {
            true => k.deferred.trace_events = Some(p),
            false => k.trace_events = Some(read_trace_events(&p, opts)?),
        }
    }
    if let Some(p) = find(dir, &["error_injection_list"]) {
        match lazy {
            true => k.deferred.error_injection = Some(p),
            false => k.error_injection = Some(read_error_injection(&p, opts)?),
        }
    }
    // `btf/`: a copy of `/sys/kernel/btf` (vmlinux and the loaded modules' split BTF).
    let sys_btf = dir.join("btf");
    let btf_file = find(dir, &["vmlinux.btf", "btf"])
        .or_else(|| find_suffix(dir, ".btf.tar.xz"))
        .or_else(|| find_suffix(dir, ".btf"))
        .or_else(|| find(&sys_btf, &["vmlinux"]));
    if let Some(p) = &btf_file {
        read_image_or_btf(p, opts, &mut k)?;
    }
    if sys_btf.is_dir() {
        k.add_module_btf_dir(&sys_btf, opts);
    }
    let image = find(dir, &["vmlinux", "vmlinuz", "bzImage"]);
    if let Some(p) = image {
        let has_ftrace = k.filter_functions.is_some() || k.deferred.filter_functions.is_some();
        let needed = !k.has_btf() || (!has_ftrace && k.symbols.is_some());
        match opts.image {
            ImagePolicy::Always => read_image_or_btf(&p, opts, &mut k)?,
            ImagePolicy::IfNeeded if needed => read_image_or_btf(&p, opts, &mut k)?,
            _ => k.deferred.image = Some(p),
        }
    }
    k.compute_ftrace();
    if !k.has_btf() && k.elf.is_none() && k.symbols.is_none() && k.deferred_symbols.is_none() {
        return Err(LoadError::Unrecognized {
            path: dir.to_owned(),
            message: "the folder has no BTF, vmlinux, vmlinuz, System.map or kallsyms".into(),
        });
    }
    Ok(k)
}

fn open_running(opts: &OpenOptions) -> Result<KernelInputs, LoadError> {
    let mut k = KernelInputs {
        name: std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| RUNNING.to_owned()),
        ..KernelInputs::default()
    };
    let btf = Path::new("/sys/kernel/btf/vmlinux");
    match Blob::read_in(btf, opts.cache.dir()) {
        Ok(b) if is_btf(&b) => {
            k.btf = Some(Loaded {
                value: b.whole(),
                from: Provenance { path: btf.to_owned(), codec: None, container: Container::File },
            })
        }
        Ok(_) => k.notes.push(format!("{}: not raw BTF", btf.display())),
        Err(e) => k.notes.push(format!("no BTF: {e}")),
    }
    if k.btf.is_some() {
        k.add_module_btf_dir(Path::new("/sys/kernel/btf"), opts);
    }
    let optional = |k: &mut KernelInputs, what: &str, r: Result<(), LoadError>| {
        if let Err(e) = r {
            k.notes.push(format!("no {what}: {e}"));
        }
    };
    let r = read_text(Path::new("/proc/kallsyms"), TextKind::Symbols, opts, SymbolTable::parse_kallsyms).map(|s| {
        if s.value.iter().all(|s| s.addr.0 == 0) {
            k.notes.push("/proc/kallsyms shows zero addresses (kptr_restrict): names only".into());
        }
        k.symbols = Some(s);
    });
    optional(&mut k, "kallsyms", r);
    let config = ["/proc/config.gz".to_owned(), format!("/boot/config-{}", k.name)]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file());
    if let Some(p) = config {
        let r = read_text(&p, TextKind::Config, opts, KernelConfig::parse).map(|c| k.config = Some(c));
        optional(&mut k, "config", r);
    }
    let tracefs = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];
    let aff = tracefs
        .iter()
        .map(|d| Path::new(d).join("available_filter_functions"))
        .find(|p| std::fs::File::open(p).is_ok());
    match aff {
        Some(p) => {
            let r =
                read_text(&p, TextKind::FtraceList, opts, FilterFunctions::parse).map(|f| k.filter_functions = Some(f));
            optional(&mut k, "ftrace list", r);
        }
        None => k.notes.push("no ftrace list: tracefs available_filter_functions is not readable".into()),
    }
    let events = tracefs.iter().map(|d| Path::new(d).join("available_events")).find(|p| std::fs::File::open(p).is_ok());
    if let Some(p) = events {
        let r = read_trace_events(&p, opts).map(|e| k.trace_events = Some(e));
        optional(&mut k, "trace event list", r);
    }
    let bl = Path::new("/sys/kernel/debug/kprobes/blacklist");
    if std::fs::File::open(bl).is_ok() {
        let r = read_text(bl, TextKind::Blacklist, opts, KprobeBlacklist::parse).map(|b| k.kprobe_blacklist = Some(b));
        optional(&mut k, "kprobe blacklist", r);
    }
    let eil = Path::new("/sys/kernel/debug/error_injection/list");
    if std::fs::File::open(eil).is_ok() {
        let r = read_error_injection(eil, opts).map(|l| k.error_injection = Some(l));
        optional(&mut k, "error-injection list", r);
    }
    Ok(k)
}
