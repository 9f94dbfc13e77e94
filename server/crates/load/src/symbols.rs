//! Kernel symbol and ftrace text inputs (System.map, /proc/kallsyms,
//! available_filter_functions, kprobe blacklist, kernel config): fast parsers, compact
//! storage, lookups by name and by address, and the naming helpers (compiler clones,
//! syscall wrappers) the rules need.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

use crate::{FileOffset, LoadError};
use fevlint_types::hash_index::HashIndex;
use fevlint_types::Arch;

/// A kernel virtual address (link-time for System.map and ELF, KASLR-shifted for a live
/// /proc/kallsyms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VirtAddr(pub u64);

impl fmt::Display for VirtAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// Where a [`SymbolTable`] was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SymbolFormat {
    SystemMap,
    Kallsyms,
    /// An ELF `.symtab`.
    Elf,
}

/// One symbol, borrowed from its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbol<'a> {
    pub name: &'a str,
    pub addr: VirtAddr,
    /// The `nm` type letter: `T`/`t` text, `W`/`w` weak, `D`/`d` data, `B`/`b` bss,
    /// `R`/`r` read-only data, `A` absolute, ...
    pub kind: u8,
    /// `Some(size)` for ELF symbols; text formats carry no size.
    pub size: Option<u64>,
    /// The module for kallsyms lines with a `[module]` column.
    pub module: Option<&'a str>,
}

impl Symbol<'_> {
    /// Code: `t`, `T`, `w`, `W`.
    pub fn is_text(&self) -> bool {
        matches!(self.kind, b't' | b'T' | b'w' | b'W')
    }

    pub fn is_weak(&self) -> bool {
        matches!(self.kind, b'w' | b'W' | b'v' | b'V')
    }
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    addr: u64,
    /// Byte range of the name in `SymbolTable::names`.
    name_start: u32,
    name_len: u32,
    kind: u8,
    /// 0 for vmlinux, else 1 + index into `modules`.
    module: u32,
    /// `u64::MAX` when unknown.
    size: u64,
}

/// A symbol list, stored as one name arena and fixed-size entries (about 32 bytes per
/// symbol plus the name), indexed by address and by name.
pub struct SymbolTable {
    format: SymbolFormat,
    names: String,
    /// In input order.
    entries: Vec<Entry>,
    /// Entry indices by (address, input order), built on first use.
    by_addr: OnceLock<Vec<u32>>,
    /// Entry indices by a hash of the name, built on first use: most runs look up a few
    /// names in a table of 150,000.
    by_name: OnceLock<HashIndex>,
    modules: Vec<String>,
    /// The largest size of a code symbol (0 when none has one): no code symbol more
    /// than this far below an address can contain it.
    max_text_size: u64,
}

impl fmt::Debug for SymbolTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SymbolTable")
            .field("format", &self.format)
            .field("symbols", &self.entries.len())
            .field("modules", &self.modules.len())
            .finish()
    }
}

/// A symbol to add to a table built from something other than text (an ELF symtab).
#[derive(Clone, Debug)]
pub struct RawSymbol<'a> {
    pub name: &'a str,
    pub addr: u64,
    pub kind: u8,
    pub size: Option<u64>,
}

struct Builder {
    names: String,
    entries: Vec<Entry>,
    modules: Vec<String>,
    module_ids: HashMap<String, u32>,
}

impl Builder {
    fn new(size_hint: usize, count_hint: usize) -> Builder {
        Builder {
            names: String::with_capacity(size_hint),
            entries: Vec::with_capacity(count_hint),
            modules: Vec::new(),
            module_ids: HashMap::new(),
        }
    }

    fn push(&mut self, name: &str, addr: u64, kind: u8, size: Option<u64>, module: Option<&str>) {
        let module = match module {
            None => 0,
            Some(m) => match self.module_ids.get(m) {
                Some(&id) => id,
                None => {
                    self.modules.push(m.to_owned());
                    let id = self.modules.len() as u32;
                    self.module_ids.insert(m.to_owned(), id);
                    id
                }
            },
        };
        let name_start = self.names.len() as u32;
        self.names.push_str(name);
        self.entries.push(Entry {
            addr,
            name_start,
            name_len: name.len() as u32,
            kind,
            module,
            size: size.unwrap_or(u64::MAX),
        });
    }

    fn finish(self, format: SymbolFormat) -> SymbolTable {
        let max_text_size = self
            .entries
            .iter()
            .filter(|e| matches!(e.kind, b't' | b'T' | b'w' | b'W') && e.size != u64::MAX)
            .map(|e| e.size)
            .max()
            .unwrap_or(0);
        SymbolTable {
            format,
            names: self.names,
            entries: self.entries,
            max_text_size,
            by_addr: OnceLock::new(),
            by_name: OnceLock::new(),
            modules: self.modules,
        }
    }
}

impl SymbolTable {
    /// Parses a System.map (`nm -n` output: `ADDRESS TYPE NAME`).
    pub fn parse_system_map(text: &[u8], path: &Path) -> Result<SymbolTable, LoadError> {
        parse_nm_like(text, path, SymbolFormat::SystemMap)
    }

    /// Parses /proc/kallsyms (`ADDRESS TYPE NAME[\t[MODULE]]`). With `kptr_restrict`
    /// all addresses read as zero; they are kept as zero.
    pub fn parse_kallsyms(text: &[u8], path: &Path) -> Result<SymbolTable, LoadError> {
        parse_nm_like(text, path, SymbolFormat::Kallsyms)
    }

    /// Builds a table from ELF symbols (or any other source), in the given order.
    pub fn from_raw<'a>(symbols: impl IntoIterator<Item = RawSymbol<'a>>) -> SymbolTable {
        let mut b = Builder::new(0, 0);
        for s in symbols {
            b.push(s.name, s.addr, s.kind, s.size, None);
        }
        b.finish(SymbolFormat::Elf)
    }

    pub fn format(&self) -> SymbolFormat {
        self.format
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The modules named in a kallsyms `[module]` column, in order of appearance.
    pub fn modules(&self) -> &[String] {
        &self.modules
    }

    fn name_of(&self, i: u32) -> &str {
        let e = &self.entries[i as usize];
        &self.names[e.name_start as usize..(e.name_start + e.name_len) as usize]
    }

    fn symbol(&self, i: u32) -> Symbol<'_> {
        let e = &self.entries[i as usize];
        Symbol {
            name: self.name_of(i),
            addr: VirtAddr(e.addr),
            kind: e.kind,
            size: (e.size != u64::MAX).then_some(e.size),
            module: match e.module {
                0 => None,
                m => self.modules.get(m as usize - 1).map(String::as_str),
            },
        }
    }

    /// All symbols in input order.
    pub fn iter(&self) -> impl Iterator<Item = Symbol<'_>> + '_ {
        (0..self.entries.len() as u32).map(|i| self.symbol(i))
    }

    /// Entry indices by address; equal addresses keep input order, which kallsyms'
    /// tie-break uses.
    fn by_addr(&self) -> &[u32] {
        self.by_addr.get_or_init(|| {
            let mut v: Vec<u32> = (0..self.entries.len() as u32).collect();
            v.sort_by_key(|&i| self.entries[i as usize].addr);
            v
        })
    }

    /// All symbols in address order (aliases in input order).
    pub fn iter_by_addr(&self) -> impl Iterator<Item = Symbol<'_>> + '_ {
        self.by_addr().iter().map(|&i| self.symbol(i))
    }

    /// Every symbol called `name` (static functions of the same name in different
    /// files each have one), in input order.
    pub fn by_name<'s, 'n>(&'s self, name: &'n str) -> impl Iterator<Item = Symbol<'s>> + use<'s, 'n> {
        let by_name = self
            .by_name
            .get_or_init(|| HashIndex::new((0..self.entries.len() as u32).map(|i| (self.name_of(i).as_bytes(), i))));
        by_name.candidates(name.as_bytes()).filter(move |&i| self.name_of(i) == name).map(|i| self.symbol(i))
    }

    /// The first symbol called `name` (in input order). Before anything has needed the
    /// name index, a linear scan: cheaper than indexing for a few lookups (opening a
    /// vmlinux needs the mcount table bounds).
    pub fn first(&self, name: &str) -> Option<Symbol<'_>> {
        if self.by_name.get().is_some() {
            return self.by_name(name).next();
        }
        (0..self.entries.len() as u32).find(|&i| self.name_of(i) == name).map(|i| self.symbol(i))
    }

    /// The address of the first symbol called `name`.
    pub fn addr_of(&self, name: &str) -> Option<VirtAddr> {
        self.first(name).map(|s| s.addr)
    }

    /// The symbol `kallsyms_lookup()` would name `addr` with: the greatest address at
    /// or below `addr` among the symbols `accept` takes, and among aliases there the one
    /// scripts/kallsyms sorts first (non-weak, then not a linker-script `__start_*`
    /// style name, then fewer leading underscores, then input order).
    pub fn lookup_with(&self, addr: VirtAddr, accept: impl Fn(&Symbol<'_>) -> bool) -> Option<Symbol<'_>> {
        self.lookup_above(addr, 0, accept)
    }

    /// [`Self::lookup_with`] among symbols at or above `floor`.
    fn lookup_above(&self, addr: VirtAddr, floor: u64, accept: impl Fn(&Symbol<'_>) -> bool) -> Option<Symbol<'_>> {
        let by_addr = self.by_addr();
        let mut hi = by_addr.partition_point(|&i| self.entries[i as usize].addr <= addr.0);
        // Walk down to the greatest accepted address.
        let found_addr = loop {
            if hi == 0 || self.entries[by_addr[hi - 1] as usize].addr < floor {
                return None;
            }
            hi -= 1;
            let s = self.symbol(by_addr[hi]);
            if accept(&s) {
                break s.addr.0;
            }
        };
        let mut best: Option<Symbol<'_>> = None;
        let mut j = hi + 1;
        while j > 0 {
            j -= 1;
            let s = self.symbol(by_addr[j]);
            if s.addr.0 != found_addr {
                break;
            }
            if !accept(&s) {
                continue;
            }
            // Walking backwards: on an equal key the earlier (in input order) wins.
            best = match best {
                Some(b) if kallsyms_rank(&b) < kallsyms_rank(&s) => Some(b),
                _ => Some(s),
            };
        }
        best
    }

    /// [`Self::lookup_with`] over code symbols only.
    pub fn lookup_text(&self, addr: VirtAddr) -> Option<Symbol<'_>> {
        self.lookup_with(addr, |s| s.is_text())
    }

    /// The STT_FUNC-style containing symbol: the greatest code symbol at or below
    /// `addr` whose `[addr, addr+size)` holds it (ELF tables only; text formats have no
    /// sizes, use [`Self::lookup_text`]).
    pub fn containing(&self, addr: VirtAddr) -> Option<Symbol<'_>> {
        // Below `floor` no code symbol is large enough to reach `addr`: an address in
        // no function (558 ftrace sites of a 6.1 vmlinux) stops there instead of
        // walking down to the first symbol.
        let floor = addr.0.saturating_sub(self.max_text_size);
        self.lookup_above(addr, floor, |s| {
            s.is_text() && s.size.is_some_and(|size| addr.0 < s.addr.0.saturating_add(size))
        })
    }
}

/// scripts/kallsyms.c `compare_symbols()` after the address: smaller is preferred.
fn kallsyms_rank(s: &Symbol<'_>) -> (bool, bool, usize) {
    let underscores = s.name.bytes().take_while(|&b| b == b'_').count();
    (s.is_weak(), may_be_linker_script_provided(s.name), underscores)
}

/// scripts/kallsyms.c `may_be_linker_script_provide_symbol()`.
fn may_be_linker_script_provided(name: &str) -> bool {
    let b = name.as_bytes();
    if b.len() < 8 || !name.starts_with("__") {
        return false;
    }
    let rest = &name[2..];
    rest.starts_with("start_")
        || rest.starts_with("stop_")
        || rest.starts_with("end_")
        || name.ends_with("_start")
        || name.ends_with("_end")
}

/// Iterates lines with their 1-based number and byte offset; a final line without
/// a newline is included; `\r` before the newline is dropped.
fn lines(text: &[u8]) -> impl Iterator<Item = (usize, usize, &[u8])> + '_ {
    let mut pos = 0usize;
    let mut no = 0usize;
    std::iter::from_fn(move || {
        if pos >= text.len() {
            return None;
        }
        let start = pos;
        let end = memchr::memchr(b'\n', &text[pos..]).map_or(text.len(), |i| pos + i);
        pos = end + 1;
        no += 1;
        let mut line = &text[start..end];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        Some((no, start, line))
    })
}

fn text_err(path: &Path, line: usize, offset: usize, message: impl Into<String>) -> LoadError {
    LoadError::Text { path: path.to_owned(), line, offset: FileOffset(offset as u64), message: message.into() }
}

fn parse_hex(s: &[u8]) -> Option<u64> {
    let s = s.strip_prefix(b"0x").unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

fn utf8<'a>(s: &'a [u8], path: &Path, line: usize, offset: usize) -> Result<&'a str, LoadError> {
    std::str::from_utf8(s).map_err(|_| text_err(path, line, offset, "name is not UTF-8"))
}

fn parse_nm_like(text: &[u8], path: &Path, format: SymbolFormat) -> Result<SymbolTable, LoadError> {
    // About 40 bytes per line in practice; the hint is bounded by the input size.
    let mut b = Builder::new(text.len() / 2, text.len() / 40);
    // UTF-8 is checked once for the whole text when it can be; names are then slices of
    // it (the delimiters are ASCII). Otherwise each name is checked, to say which is bad.
    let whole = std::str::from_utf8(text).ok();
    for (no, off, line) in lines(text) {
        if line.is_empty() {
            continue;
        }
        let bad = |m: &str| text_err(path, no, off, format!("{m}: expected `ADDRESS TYPE NAME`"));
        let str_at = |start: usize, end: usize| match whole {
            Some(w) => Ok(&w[off + start..off + end]),
            None => utf8(&line[start..end], path, no, off),
        };
        let sp1 = memchr::memchr(b' ', line).ok_or_else(|| bad("no space"))?;
        let addr = parse_hex(&line[..sp1]).ok_or_else(|| bad("bad address"))?;
        let kind = *line.get(sp1 + 1).ok_or_else(|| bad("no type"))?;
        if line.get(sp1 + 2) != Some(&b' ') {
            return Err(bad("no name"));
        }
        let name_start = sp1 + 3;
        let (name, module) = match memchr::memchr(b'\t', &line[name_start..]) {
            Some(tab) => {
                let m = &line[name_start + tab + 1..];
                if !(m.starts_with(b"[") && m.ends_with(b"]") && m.len() >= 2) {
                    return Err(bad("module column is not `[name]`"));
                }
                (str_at(name_start, name_start + tab)?, Some(str_at(name_start + tab + 2, line.len() - 1)?))
            }
            None => (str_at(name_start, line.len())?, None),
        };
        if name.is_empty() {
            return Err(bad("empty name"));
        }
        b.push(name, addr, kind, None, module);
    }
    Ok(b.finish(format))
}

/// A compact list of names with duplicates kept and a sorted index for lookups.
#[derive(Default)]
struct NameList {
    names: String,
    /// (start, len, module id: 0 = none, else 1 + index)
    entries: Vec<(u32, u32, u32)>,
    /// Entry indices by a hash of the name.
    sorted: HashIndex,
    modules: Vec<String>,
}

impl NameList {
    fn name(&self, i: u32) -> &str {
        let (s, l, _) = self.entries[i as usize];
        &self.names[s as usize..(s + l) as usize]
    }

    fn module(&self, i: u32) -> Option<&str> {
        match self.entries[i as usize].2 {
            0 => None,
            m => self.modules.get(m as usize - 1).map(String::as_str),
        }
    }

    fn push(&mut self, name: &str, module: Option<&str>) {
        let m = match module {
            None => 0,
            Some(m) => match self.modules.iter().rposition(|x| x == m) {
                Some(i) => i as u32 + 1,
                None => {
                    self.modules.push(m.to_owned());
                    self.modules.len() as u32
                }
            },
        };
        let s = self.names.len() as u32;
        self.names.push_str(name);
        self.entries.push((s, name.len() as u32, m));
    }

    fn index(&mut self) {
        self.sorted = HashIndex::new((0..self.entries.len() as u32).map(|i| (self.name(i).as_bytes(), i)));
    }

    fn count(&self, name: &str) -> usize {
        self.sorted.candidates(name.as_bytes()).filter(|&i| self.name(i) == name).count()
    }
}

/// `available_filter_functions`: the functions ftrace can attach to, in the kernel's
/// order, one line per traceable call site. A name appears once per traceable function
/// that has it (static functions in different files), so counts matter.
/// `__ftrace_invalid_address___N` lines are not functions and are only counted.
pub struct FilterFunctions {
    list: NameList,
    invalid: usize,
}

impl fmt::Debug for FilterFunctions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilterFunctions")
            .field("lines", &self.list.entries.len())
            .field("invalid", &self.invalid)
            .finish()
    }
}

/// The first bytes of [`FilterFunctions::to_bytes`].
const FTRACE_MAGIC: &[u8; 8] = b"FEVFTR01";

/// The placeholder the kernel prints for the mcount entry of an overridden weak function.
pub const FTRACE_INVALID_PREFIX: &str = "__ftrace_invalid_address___";

impl FilterFunctions {
    /// Parses the tracefs file: `NAME` or `NAME [MODULE]` per line.
    pub fn parse(text: &[u8], path: &Path) -> Result<FilterFunctions, LoadError> {
        let mut list = NameList {
            names: String::with_capacity(text.len()),
            entries: Vec::with_capacity(text.len() / 16),
            ..NameList::default()
        };
        let mut invalid = 0;
        let whole = std::str::from_utf8(text).ok();
        for (no, off, line) in lines(text) {
            if line.is_empty() {
                continue;
            }
            let line = match whole {
                Some(w) => &w[off..off + line.len()],
                None => utf8(line, path, no, off)?,
            };
            let (name, module) = match line.split_once(' ') {
                Some((n, m)) => {
                    let m = m
                        .strip_prefix('[')
                        .and_then(|m| m.strip_suffix(']'))
                        .ok_or_else(|| text_err(path, no, off, "expected `NAME` or `NAME [MODULE]`"))?;
                    (n, Some(m))
                }
                None => (line, None),
            };
            if name.starts_with(FTRACE_INVALID_PREFIX) {
                invalid += 1;
                continue;
            }
            list.push(name, module);
        }
        list.index();
        Ok(FilterFunctions { list, invalid })
    }

    /// Builds the list from names in order (e.g. computed from an ELF's mcount table).
    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> FilterFunctions {
        let mut list = NameList::default();
        let mut invalid = 0;
        for n in names {
            if n.starts_with(FTRACE_INVALID_PREFIX) {
                invalid += 1;
            } else {
                list.push(n, None);
            }
        }
        list.index();
        FilterFunctions { list, invalid }
    }

    /// Lines that name a function (invalid-address lines excluded).
    pub fn len(&self) -> usize {
        self.list.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.entries.is_empty()
    }

    /// The number of `__ftrace_invalid_address___N` lines skipped.
    pub fn invalid_lines(&self) -> usize {
        self.invalid
    }

    /// How many traceable functions are called `name`.
    pub fn count(&self, name: &str) -> usize {
        self.list.count(name)
    }

    pub fn contains(&self, name: &str) -> bool {
        self.count(name) > 0
    }

    /// `(name, module)` in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, Option<&str>)> + '_ {
        (0..self.list.entries.len() as u32).map(|i| (self.list.name(i), self.list.module(i)))
    }

    /// The names holding a `.` (compiler clones such as `name.isra.0`), in file order:
    /// found by searching the names' text for the byte, not by visiting every entry.
    pub fn dotted(&self) -> impl Iterator<Item = &str> + '_ {
        let l = &self.list;
        let mut last = None;
        memchr::memchr_iter(b'.', l.names.as_bytes()).filter_map(move |at| {
            // The entry whose name holds byte `at`: the last one starting at or before it
            // (names are stored one after another, in entry order).
            let i = l.entries.partition_point(|&(start, _, _)| start as usize <= at).checked_sub(1)?;
            let (start, len, _) = l.entries[i];
            if !(start as usize..start as usize + len as usize).contains(&at) || last == Some(i) {
                return None;
            }
            last = Some(i);
            Some(l.name(i as u32))
        })
    }

    /// A checksum of the names and modules in order: equal lists, equal fingerprints.
    pub fn fingerprint(&self) -> u64 {
        let mut h = crc32fast::Hasher::new();
        h.update(self.list.names.as_bytes());
        for &(start, len, module) in &self.list.entries {
            h.update(&[start, len, module].map(u32::to_le_bytes).concat());
        }
        (u64::from(h.finalize()) << 32) ^ self.list.entries.len() as u64
    }

    /// The parsed list as bytes, for the derived-data cache ([`FilterFunctions::from_bytes`]
    /// reads them back without parsing the text or building the index again).
    ///
    /// Layout (little-endian): magic `FEVFTR01`, invalid lines (u64), entries `n`, index
    /// entries `h`, name text length, module text length (u32 each); the name text;
    /// `n` x (start, length, module) u32; `h` x (hash u64, entry u32); the module names,
    /// each followed by a newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let l = &self.list;
        let modules: String = l.modules.iter().flat_map(|m| [m.as_str(), "\n"]).collect();
        let index = l.sorted.entries();
        let mut out = Vec::with_capacity(32 + l.names.len() + l.entries.len() * 12 + index.len() * 12 + modules.len());
        out.extend_from_slice(FTRACE_MAGIC);
        out.extend_from_slice(&(self.invalid as u64).to_le_bytes());
        for n in [l.entries.len(), index.len(), l.names.len(), modules.len()] {
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
        out.extend_from_slice(l.names.as_bytes());
        for &(start, len, module) in &l.entries {
            for v in [start, len, module] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        for &(hash, id) in index {
            out.extend_from_slice(&hash.to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
        }
        out.extend_from_slice(modules.as_bytes());
        out
    }

    /// Reads what [`FilterFunctions::to_bytes`] wrote; `None` when the bytes are not a
    /// consistent list (every name range inside the text and on character boundaries,
    /// every module and index entry in range, the index sorted), so a bad file is rebuilt,
    /// never trusted. Nothing is allocated beyond what the bytes hold.
    pub fn from_bytes(b: &[u8]) -> Option<FilterFunctions> {
        let body = b.strip_prefix(FTRACE_MAGIC)?;
        let u32_at = |at: usize| Some(u32::from_le_bytes(body.get(at..at + 4)?.try_into().ok()?) as usize);
        let invalid = usize::try_from(u64::from_le_bytes(body.get(..8)?.try_into().ok()?)).ok()?;
        let (n, h, text, mods) = (u32_at(8)?, u32_at(12)?, u32_at(16)?, u32_at(20)?);
        let rest = body.get(24..)?;
        let sizes = [text, n.checked_mul(12)?, h.checked_mul(12)?, mods];
        if sizes.iter().try_fold(0usize, |a, &s| a.checked_add(s))? != rest.len() {
            return None;
        }
        let (names, rest) = rest.split_at(text);
        let (entries, rest) = rest.split_at(n * 12);
        let (index, modules) = rest.split_at(h * 12);
        let names = std::str::from_utf8(names).ok()?.to_owned();
        let modules: Vec<String> = match std::str::from_utf8(modules).ok()? {
            "" => Vec::new(),
            m => m.strip_suffix('\n')?.split('\n').map(str::to_owned).collect(),
        };
        let word = |c: &[u8]| u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        let mut list = Vec::with_capacity(n);
        for e in entries.chunks_exact(12) {
            let (start, len, module) = (word(&e[..4]), word(&e[4..8]), word(&e[8..]));
            let end = start.checked_add(len)? as usize;
            if end > names.len() || !names.is_char_boundary(start as usize) || !names.is_char_boundary(end) {
                return None;
            }
            if module as usize > modules.len() {
                return None;
            }
            list.push((start, len, module));
        }
        let mut sorted = Vec::with_capacity(h);
        for e in index.chunks_exact(12) {
            let id = word(&e[8..]);
            if id as usize >= n {
                return None;
            }
            sorted.push((u64::from_le_bytes(e[..8].try_into().ok()?), id));
        }
        let sorted = HashIndex::from_sorted(sorted)?;
        Some(FilterFunctions { list: NameList { names, entries: list, sorted, modules }, invalid })
    }

    /// The number of different names.
    pub fn distinct(&self) -> usize {
        // Count each name at its first entry within its group of equal hashes.
        let s = self.list.sorted.entries();
        let name = |k: usize| self.list.name(s[k].1);
        (0..s.len()).filter(|&k| (0..k).rev().take_while(|&j| s[j].0 == s[k].0).all(|j| name(j) != name(k))).count()
    }
}

/// `available_events`: every trace event the kernel has, as `SYSTEM:EVENT` lines (what
/// tracefs lists; events of modules not loaded are absent).
#[derive(Debug, Default)]
pub struct TraceEvents {
    /// Event name -> the systems that have an event of that name.
    by_event: HashMap<String, Vec<String>>,
    systems: HashMap<String, usize>,
}

impl TraceEvents {
    /// Parses `SYSTEM:EVENT` lines.
    pub fn parse(text: &[u8], path: &Path) -> Result<TraceEvents, LoadError> {
        let mut ev = TraceEvents::default();
        for (no, off, line) in lines(text) {
            if line.is_empty() {
                continue;
            }
            let line = utf8(line, path, no, off)?;
            let (system, event) = line
                .split_once(':')
                .filter(|(s, e)| !s.is_empty() && !e.is_empty() && !e.contains([':', ' ', '\t']))
                .ok_or_else(|| text_err(path, no, off, "expected `SYSTEM:EVENT`"))?;
            ev.by_event.entry(event.to_owned()).or_default().push(system.to_owned());
            *ev.systems.entry(system.to_owned()).or_default() += 1;
        }
        Ok(ev)
    }

    /// Whether `system:event` exists.
    pub fn contains(&self, system: &str, event: &str) -> bool {
        self.by_event.get(event).is_some_and(|s| s.iter().any(|s| s == system))
    }

    /// The systems that have an event named `event`.
    pub fn systems_of(&self, event: &str) -> &[String] {
        self.by_event.get(event).map_or(&[], Vec::as_slice)
    }

    /// Whether any event belongs to `system`.
    pub fn has_system(&self, system: &str) -> bool {
        self.systems.contains_key(system)
    }

    /// Every `(system, event)`, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.by_event.iter().flat_map(|(e, s)| s.iter().map(move |s| (s.as_str(), e.as_str())))
    }

    pub fn len(&self) -> usize {
        self.systems.values().sum()
    }

    pub fn is_empty(&self) -> bool {
        self.systems.is_empty()
    }
}

/// The error-injection list (`ALLOW_ERROR_INJECTION`): the functions besides `security_`
/// hooks whose return value `fmod_ret` programs (and `bpf_override_return`) may change.
/// Read from a copy of /sys/kernel/debug/error_injection/list or built from an image's
/// `_error_injection_whitelist` table.
#[derive(Debug, Default)]
pub struct ErrorInjectionList {
    names: std::collections::HashSet<String>,
}

impl ErrorInjectionList {
    /// Parses the kernel's `FUNCTION\tTYPE` lines (`ei_seq_show`: `%ps\t%s`; a module's
    /// function reads `FUNCTION [MODULE]`).
    pub fn parse(text: &[u8], path: &Path) -> Result<ErrorInjectionList, LoadError> {
        let mut names = std::collections::HashSet::new();
        for (no, off, line) in lines(text) {
            if line.is_empty() {
                continue;
            }
            let line = utf8(line, path, no, off)?;
            let (name, _type) = line
                .split_once('\t')
                .and_then(|(f, t)| Some((f.split(' ').next()?, t)))
                .filter(|(f, t)| !f.is_empty() && !t.is_empty())
                .ok_or_else(|| text_err(path, no, off, "expected `FUNCTION<TAB>TYPE`"))?;
            names.insert(name.to_owned());
        }
        Ok(ErrorInjectionList { names })
    }

    pub fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> ErrorInjectionList {
        ErrorInjectionList { names: names.into_iter().map(str::to_owned).collect() }
    }

    /// Whether `fmod_ret` may modify function `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The function names, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One line of /sys/kernel/debug/kprobes/blacklist.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlacklistEntry {
    pub start: VirtAddr,
    /// Exclusive.
    pub end: VirtAddr,
    pub name: String,
    pub module: Option<String>,
}

/// The kprobe blacklist: functions and address ranges kprobes refuse.
#[derive(Debug, Default)]
pub struct KprobeBlacklist {
    entries: Vec<BlacklistEntry>,
    by_name: HashMap<String, Vec<usize>>,
}

impl KprobeBlacklist {
    /// Parses `0xSTART-0xEND\tNAME` lines (an optional `\t[MODULE]` or ` [MODULE]` may
    /// follow the name).
    pub fn parse(text: &[u8], path: &Path) -> Result<KprobeBlacklist, LoadError> {
        let mut bl = KprobeBlacklist::default();
        for (no, off, line) in lines(text) {
            if line.is_empty() {
                continue;
            }
            let bad = || text_err(path, no, off, "expected `0xSTART-0xEND<TAB>NAME`");
            let line = utf8(line, path, no, off)?;
            let (range, rest) = line.split_once('\t').ok_or_else(bad)?;
            let (s, e) = range.split_once('-').ok_or_else(bad)?;
            let start = parse_hex(s.as_bytes()).ok_or_else(bad)?;
            let end = parse_hex(e.as_bytes()).ok_or_else(bad)?;
            let (name, module) = match rest.split_once(['\t', ' ']) {
                Some((n, m)) => {
                    let m = m.strip_prefix('[').and_then(|m| m.strip_suffix(']'));
                    (n, Some(m.ok_or_else(bad)?.to_owned()))
                }
                None => (rest, None),
            };
            bl.by_name.entry(name.to_owned()).or_default().push(bl.entries.len());
            bl.entries.push(BlacklistEntry {
                start: VirtAddr(start),
                end: VirtAddr(end),
                name: name.to_owned(),
                module,
            });
        }
        Ok(bl)
    }

    /// A blacklist from its entries, in the kernel's list order (one derived from an
    /// image rather than read from the kernel).
    pub fn from_entries(entries: Vec<BlacklistEntry>) -> KprobeBlacklist {
        let mut bl = KprobeBlacklist { entries, by_name: HashMap::new() };
        for (i, e) in bl.entries.iter().enumerate() {
            bl.by_name.entry(e.name.clone()).or_default().push(i);
        }
        bl
    }

    pub fn entries(&self) -> &[BlacklistEntry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn contains_name(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// The entries whose `[start, end)` holds `addr`.
    pub fn covering(&self, addr: VirtAddr) -> impl Iterator<Item = &BlacklistEntry> + '_ {
        self.entries.iter().filter(move |e| e.start <= addr && addr < e.end)
    }
}

/// A value in a kernel `.config`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigValue {
    Yes,
    Module,
    /// `# CONFIG_X is not set`
    NotSet,
    /// Numbers and strings, as written (strings keep their quotes).
    Other(String),
}

/// A kernel `.config` (also /proc/config.gz once decompressed).
#[derive(Debug, Default)]
pub struct KernelConfig {
    /// The option names, one after another (no string per option).
    names: String,
    /// `(start, length)` of each option's name in `names`, and its value, in file order.
    entries: Vec<(u32, u32, ConfigValue)>,
    /// Entry indices by a hash of the name; a name written twice answers its last line.
    index: HashIndex,
    /// The release in the `# Linux/x86 6.1.170 Kernel Configuration` header, if any.
    release: Option<String>,
}

impl KernelConfig {
    /// Parses `CONFIG_X=y|m|VALUE` and `# CONFIG_X is not set`; other comments and
    /// blank lines are skipped.
    pub fn parse(text: &[u8], path: &Path) -> Result<KernelConfig, LoadError> {
        let mut config = KernelConfig::default();
        let mut release = None;
        // UTF-8 is checked once for the whole text when it can be (see `parse_nm_like`).
        let whole = std::str::from_utf8(text).ok();
        for (no, off, line) in lines(text) {
            if line.is_empty() {
                continue;
            }
            let line = match whole {
                Some(w) => &w[off..off + line.len()],
                None => utf8(line, path, no, off)?,
            };
            if let Some(c) = line.strip_prefix("# ") {
                if let Some(head) = c.strip_suffix(" Kernel Configuration") {
                    if release.is_none() {
                        release = head.rsplit(' ').next().map(str::to_owned);
                    }
                }
                if let Some(name) = c.strip_suffix(" is not set") {
                    if name.starts_with("CONFIG_") {
                        config.push(name, ConfigValue::NotSet);
                    }
                }
                continue;
            }
            if line.starts_with('#') {
                continue;
            }
            let (name, value) = line
                .split_once('=')
                .ok_or_else(|| text_err(path, no, off, "expected `CONFIG_NAME=VALUE` or a `#` comment"))?;
            let value = match value {
                "y" => ConfigValue::Yes,
                "m" => ConfigValue::Module,
                "n" => ConfigValue::NotSet,
                v => ConfigValue::Other(v.to_owned()),
            };
            config.push(name, value);
        }
        config.release = release;
        config.index = HashIndex::new((0..config.entries.len() as u32).map(|i| (config.name(i).as_bytes(), i)));
        Ok(config)
    }

    fn push(&mut self, name: &str, value: ConfigValue) {
        // Names past 4 GiB of text are dropped (no config comes near; the text is bounded).
        let Ok(start) = u32::try_from(self.names.len()) else { return };
        self.names.push_str(name);
        self.entries.push((start, name.len() as u32, value));
    }

    fn name(&self, i: u32) -> &str {
        let (s, l, _) = &self.entries[i as usize];
        self.names.get(*s as usize..(*s + *l) as usize).unwrap_or("")
    }

    /// The last entry called `name` (a later line overrides an earlier one, as Kconfig reads it).
    fn find(&self, name: &str) -> Option<&ConfigValue> {
        let last = self.index.candidates(name.as_bytes()).filter(|&i| self.name(i) == name).max()?;
        Some(&self.entries[last as usize].2)
    }

    /// The kernel release the config header names (`6.1.170`), if it has the header.
    pub fn release(&self) -> Option<&str> {
        self.release.as_deref()
    }

    /// The value of `name`, with or without the `CONFIG_` prefix.
    pub fn get(&self, name: &str) -> Option<&ConfigValue> {
        if name.starts_with("CONFIG_") {
            self.find(name)
        } else {
            self.find(&format!("CONFIG_{name}"))
        }
    }

    /// `=y` or `=m`.
    pub fn is_enabled(&self, name: &str) -> bool {
        matches!(self.get(name), Some(ConfigValue::Yes | ConfigValue::Module))
    }

    /// Every line's option and value, in file order (a name written twice comes twice).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ConfigValue)> + '_ {
        (0..self.entries.len() as u32).map(|i| (self.name(i), &self.entries[i as usize].2))
    }

    /// The number of different options.
    pub fn len(&self) -> usize {
        // Count each name at its first entry within its group of equal hashes.
        let s = self.index.entries();
        let name = |k: usize| self.name(s[k].1);
        (0..s.len()).filter(|&k| (0..k).rev().take_while(|&j| s[j].0 == s[k].0).all(|j| name(j) != name(k))).count()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The architecture the config builds for, if it says.
    pub fn arch(&self) -> Option<Arch> {
        if self.is_enabled("X86_64") {
            Some(Arch::X86_64)
        } else if self.is_enabled("X86_32") {
            Some(Arch::X86_32)
        } else {
            None
        }
    }

    /// How far a function's ftrace call site may sit from its symbol
    /// (`FTRACE_MCOUNT_MAX_OFFSET`): 4 bytes after ENDBR with `CONFIG_X86_KERNEL_IBT`.
    pub fn ftrace_max_offset(&self) -> u64 {
        if self.is_enabled("X86_KERNEL_IBT") {
            4
        } else {
            0
        }
    }
}

/// A compiler-made copy of a function (GCC's IPA clones and split parts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CloneKind {
    /// `.isra.N`: parameters scalarised or removed.
    Isra,
    /// `.constprop.N`: constant arguments propagated in.
    Constprop,
    /// `.part.N`: a partially inlined tail.
    Part,
    /// `.cold`: the unlikely-path part.
    Cold,
    /// `.llvm.N` (Clang ThinLTO promotion).
    Llvm,
    /// Any other `.suffix`.
    Other,
}

/// Splits a kallsyms name into its base name and the clone suffixes after it:
/// `finish_task_switch.isra.0` gives `("finish_task_switch", [Isra])`,
/// `foo.constprop.0.isra.0` gives `("foo", [Constprop, Isra])`.
pub fn clone_base(name: &str) -> (&str, Vec<CloneKind>) {
    let Some(dot) = name.find('.') else {
        return (name, Vec::new());
    };
    let (base, suffix) = name.split_at(dot);
    let mut kinds = Vec::new();
    for part in suffix[1..].split('.') {
        if part.is_empty() || part.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        kinds.push(match part {
            "isra" => CloneKind::Isra,
            "constprop" => CloneKind::Constprop,
            "part" => CloneKind::Part,
            "cold" => CloneKind::Cold,
            "llvm" => CloneKind::Llvm,
            _ => CloneKind::Other,
        });
    }
    (base, kinds)
}

/// Whether `name` is a compiler clone of some function (has a `.` suffix).
pub fn is_clone(name: &str) -> bool {
    name.contains('.')
}

/// The layer of the syscall machinery a symbol belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyscallWrapper {
    /// `__x64_sys_X`: the x86-64 entry, takes `struct pt_regs *`.
    X64,
    /// `__ia32_sys_X`: the 32-bit compat entry, takes `struct pt_regs *`.
    Ia32,
    /// `__ia32_compat_sys_X` / `__x64_compat_sys_X`.
    Compat,
    /// `__se_sys_X`: sign-extending shim with `long` arguments.
    SignExtend,
    /// `__do_sys_X`: the body with the real argument types.
    Do,
    /// `sys_X`: the plain name (i386 and older kernels).
    Plain,
}

/// Recognises syscall wrapper names: `__x64_sys_read` gives `(X64, "read")`.
pub fn syscall_name(name: &str) -> Option<(SyscallWrapper, &str)> {
    const PREFIXES: &[(&str, SyscallWrapper)] = &[
        ("__x64_sys_", SyscallWrapper::X64),
        ("__ia32_sys_", SyscallWrapper::Ia32),
        ("__ia32_compat_sys_", SyscallWrapper::Compat),
        ("__x64_compat_sys_", SyscallWrapper::Compat),
        ("__se_sys_", SyscallWrapper::SignExtend),
        ("__do_sys_", SyscallWrapper::Do),
        ("sys_", SyscallWrapper::Plain),
    ];
    PREFIXES.iter().find_map(|&(p, w)| name.strip_prefix(p).filter(|rest| !rest.is_empty()).map(|rest| (w, rest)))
}

#[cfg(test)]
mod trace_event_tests {
    use super::TraceEvents;
    use std::path::Path;

    #[test]
    fn events_by_system_and_a_bad_line_named() {
        let ev =
            TraceEvents::parse(b"sched:sched_switch\nsyscalls:sys_enter_read\nfoo:sched_switch\n", Path::new("ae"))
                .expect("parse");
        assert!(ev.contains("sched", "sched_switch") && ev.contains("foo", "sched_switch"));
        assert!(!ev.contains("block", "sched_switch") && ev.has_system("syscalls"));
        assert_eq!(ev.systems_of("sys_enter_read"), ["syscalls"]);
        assert_eq!(ev.len(), 3);
        let e = TraceEvents::parse(b"sched:a\nno colon\n", Path::new("ae")).expect_err("refused");
        assert!(e.to_string().contains("ae") && e.to_string().contains('2'), "{e}");
    }
}

#[cfg(test)]
mod error_injection_tests {
    use super::*;

    #[test]
    fn the_kernels_list_format_reads_with_modules_and_bad_lines_refused() {
        // `ei_seq_show`: `%ps\t%s`, a module's function with ` [MODULE]`.
        let text = b"should_failslab\tERRNO\nopen_ctree [btrfs]\tERRNO\n\nfunc_null\tNULL\n";
        let list = ErrorInjectionList::parse(text, Path::new("list")).expect("parses");
        assert_eq!(list.len(), 3);
        assert!(list.contains("should_failslab") && list.contains("open_ctree") && !list.contains("vfs_fsync"));
        let err = ErrorInjectionList::parse(b"should_failslab\tERRNO\nno type here\n", Path::new("list"))
            .expect_err("refused");
        assert!(err.to_string().contains("list") && err.to_string().contains('2'), "{err}");
    }
}
