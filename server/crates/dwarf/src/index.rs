//! The full name index: every named top-level type and subprogram DIE, built in
//! parallel over units, deduplicated, and cached on disk keyed by the ELF build-id.
//!
//! Entries hold no strings: a name is a (file position, length) pair pointing into the
//! ELF itself (`.debug_str`, `.debug_line_str`, or inline in `.debug_info`), so the
//! index and its cache stay small and loading the cache parses no text.
//!
//! Deduplication ("by shape where cheap"): every unit that includes `fs.h` repeats
//! `struct file`. Two DIEs are kept as one when they agree on name, kind, flags,
//! byte size, declaration line and declaration file (hashed). That is what one
//! definition in one header looks like from every unit including it; two different
//! types could only merge by having the same name declared on the same line of the same
//! file with the same size, which a header can't do twice.

use std::cmp::Ordering;
use std::fs;
use std::hash::Hasher;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use crate::scan::{Kind, FLAG_DECL, FLAG_TYPES};
use crate::toplevel::{FileTable, Plans, UnitWalk};
use crate::{DieOffset, Dwarf, UnitEntry, UnitKind};
use fevlint_types::model::{FunctionInfo, ModelError, TypeNamespace, TypeRef};

const MAGIC: &[u8; 8] = b"FEVDWIDX";
const VERSION: u32 = 1;
const ENTRY_LEN: usize = 24;

/// One named DIE. Invariant (checked when built or loaded): `die` lies inside its
/// section, `name_pos..name_pos+name_len` inside the file, `kind` is a [`Kind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    die: u32,
    name_pos: u32,
    byte_size: u32,
    decl_line: u32,
    /// FNV-1a of the declaration file's path (0: none).
    file_hash: u32,
    name_len: u16,
    kind: u8,
    flags: u8,
}

impl Entry {
    fn die_offset(&self) -> DieOffset {
        if self.flags & FLAG_TYPES != 0 {
            DieOffset::types(u64::from(self.die))
        } else {
            DieOffset::info(u64::from(self.die))
        }
    }

    fn name<'a>(&self, data: &'a [u8]) -> &'a [u8] {
        let start = self.name_pos as usize;
        data.get(start..start + usize::from(self.name_len)).unwrap_or(&[])
    }

    fn key(&self) -> (u8, u8, u32, u32, u32) {
        (self.kind, self.flags, self.byte_size, self.decl_line, self.file_hash)
    }

    fn to_bytes(self) -> [u8; ENTRY_LEN] {
        let mut b = [0u8; ENTRY_LEN];
        b[0..4].copy_from_slice(&self.die.to_le_bytes());
        b[4..8].copy_from_slice(&self.name_pos.to_le_bytes());
        b[8..12].copy_from_slice(&self.byte_size.to_le_bytes());
        b[12..16].copy_from_slice(&self.decl_line.to_le_bytes());
        b[16..20].copy_from_slice(&self.file_hash.to_le_bytes());
        b[20..22].copy_from_slice(&self.name_len.to_le_bytes());
        b[22] = self.kind;
        b[23] = self.flags;
        b
    }

    fn from_bytes(b: &[u8; ENTRY_LEN]) -> Entry {
        let u = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Entry {
            die: u(0),
            name_pos: u(4),
            byte_size: u(8),
            decl_line: u(12),
            file_hash: u(16),
            name_len: u16::from_le_bytes([b[20], b[21]]),
            kind: b[22],
            flags: b[23],
        }
    }
}

fn cmp(data: &[u8], a: &Entry, b: &Entry) -> Ordering {
    a.name(data).cmp(b.name(data)).then(a.key().cmp(&b.key())).then(a.die.cmp(&b.die))
}

/// The first eight bytes of a name as a big-endian number (zero-padded): ordering by it
/// agrees with ordering the names byte-wise, up to ties.
fn name_prefix(name: &[u8]) -> u64 {
    let mut key = [0u8; 8];
    let len = name.len().min(8);
    key[..len].copy_from_slice(&name[..len]);
    u64::from_be_bytes(key)
}

fn same(data: &[u8], a: &Entry, b: &Entry) -> bool {
    a.key() == b.key() && a.name(data) == b.name(data)
}

/// What makes two DIEs one entry, with the name by where it lies rather than what it
/// says: the linker merges `.debug_str`, so equal names almost always share a
/// position, and hashing integers is what makes deduplicating the 1.4 million named
/// top-level DIEs of a kernel cheap. Names stored inline in `.debug_info` (gcc does
/// that for very short ones) are caught by the final byte-wise pass.
///
/// Packed in three words, compared and hashed as such.
#[derive(Clone, Copy, PartialEq, Eq)]
struct PosKey {
    /// `name_pos | name_len << 32 | kind << 48 | flags << 56`.
    name: u64,
    /// `byte_size | decl_line << 32`.
    place: u64,
    file_hash: u32,
}

impl std::hash::Hash for PosKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.name);
        h.write_u64(self.place);
        h.write_u32(self.file_hash);
    }
}

impl PosKey {
    fn of(e: &Entry) -> PosKey {
        PosKey {
            name: u64::from(e.name_pos)
                | u64::from(e.name_len) << 32
                | u64::from(e.kind) << 48
                | u64::from(e.flags) << 56,
            place: u64::from(e.byte_size) | u64::from(e.decl_line) << 32,
            file_hash: e.file_hash,
        }
    }

    fn entry(self, die: u32) -> Entry {
        Entry {
            die,
            name_pos: self.name as u32,
            byte_size: self.place as u32,
            decl_line: (self.place >> 32) as u32,
            file_hash: self.file_hash,
            name_len: (self.name >> 32) as u16,
            kind: (self.name >> 48) as u8,
            flags: (self.name >> 56) as u8,
        }
    }
}

/// The distinct entries one worker has seen, each with its smallest DIE offset (so the
/// result does not depend on how units were split between workers).
type Shard = FxHashMap<PosKey, u32>;

fn shard_insert(shard: &mut Shard, e: Entry) {
    shard.entry(PosKey::of(&e)).and_modify(|d| *d = (*d).min(e.die)).or_insert(e.die);
}

/// Names → DIEs for a whole file, sorted by name.
#[derive(Debug)]
pub struct NameIndex {
    entries: Vec<Entry>,
}

/// Where [`Dwarf::ensure_index`] got its index from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IndexOrigin {
    /// Already in memory.
    Memory,
    /// Read from this cache file.
    Cache(PathBuf),
    /// Built now. `written`: the cache file written; `write_error`: why none was;
    /// `replaced`: why an existing cache file was rejected.
    Built { written: Option<PathBuf>, write_error: Option<String>, replaced: Option<String> },
}

impl NameIndex {
    /// Distinct named DIEs.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn range(&self, data: &[u8], name: &str) -> &[Entry] {
        let name = name.as_bytes();
        let lo = self.entries.partition_point(|e| e.name(data) < name);
        let hi = lo + self.entries[lo..].partition_point(|e| e.name(data) == name);
        &self.entries[lo..hi]
    }

    /// Definitions (deduplicated) before one forward declaration.
    pub(crate) fn find_type(&self, dw: &Dwarf, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError> {
        let data: &[u8] = dw.elf().data();
        let kind = Kind::of_namespace(ns) as u8;
        let hits = self.range(data, name).iter().filter(|e| e.kind == kind);
        let mut defs: Vec<TypeRef> = Vec::new();
        let mut forward: Option<TypeRef> = None;
        for e in hits {
            if e.flags & FLAG_DECL == 0 {
                defs.push(e.die_offset().into());
            } else {
                forward = forward.or(Some(e.die_offset().into()));
            }
        }
        if defs.is_empty() {
            defs.extend(forward);
        }
        Ok(defs)
    }

    /// Definitions of `name` (declarations only when there is no definition).
    pub(crate) fn functions(&self, dw: &Dwarf, name: &str) -> Result<Vec<FunctionInfo>, ModelError> {
        let data: &[u8] = dw.elf().data();
        let fns: Vec<&Entry> = self.range(data, name).iter().filter(|e| e.kind == Kind::Function as u8).collect();
        let defs: Vec<&Entry> = fns.iter().copied().filter(|e| e.flags & FLAG_DECL == 0).collect();
        let mut chosen: Vec<&Entry> = if defs.is_empty() { fns.into_iter().take(1).collect() } else { defs };
        // In DIE order, as a cold lookup finds them (the index orders by a hash).
        chosen.sort_by_key(|e| e.die_offset());
        let infos = chosen.into_iter().map(|e| dw.function_info(e.die_offset())).collect::<Result<Vec<_>, _>>()?;
        dw.dedup_functions(infos)
    }

    /// Every function name (defined or only declared), sorted, each once.
    pub(crate) fn function_names(&self, dw: &Dwarf) -> Vec<String> {
        let data: &[u8] = dw.elf().data();
        let mut out: Vec<String> = Vec::new();
        for e in self.entries.iter().filter(|e| e.kind == Kind::Function as u8) {
            let n = e.name(data);
            if out.last().map(|l| l.as_bytes()) != Some(n) {
                out.push(String::from_utf8_lossy(n).into_owned());
            }
        }
        out
    }
}

/// The cache file for `dw`, if it has a build-id and a cache directory.
pub fn cache_path(dw: &Dwarf) -> Option<PathBuf> {
    let id = dw.elf().build_id_hex()?;
    Some(dw.cache_dir()?.join(format!("{id}.dwidx")))
}

pub(crate) fn load_or_build(dw: &Dwarf) -> Result<(NameIndex, IndexOrigin), ModelError> {
    let path = cache_path(dw);
    let mut replaced = None;
    if let Some(p) = &path {
        match fs::File::open(p) {
            Ok(f) => match read_cache(dw, f) {
                Ok(idx) => return Ok((idx, IndexOrigin::Cache(p.clone()))),
                Err(why) => replaced = Some(why),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => replaced = Some(e.to_string()),
        }
    }
    let idx = build(dw)?;
    let (written, write_error) = match &path {
        Some(p) => match write_cache(dw, &idx, p) {
            Ok(()) => (Some(p.clone()), None),
            Err(e) => (None, Some(format!("{}: {e}", p.display()))),
        },
        None => (None, Some("no build-id or no cache directory".into())),
    };
    Ok((idx, IndexOrigin::Built { written, write_error, replaced }))
}

/// Builds the index in parallel over units (rayon): each worker deduplicates into its
/// own hash table, the tables are merged, then sorted by name.
pub fn build(dw: &Dwarf) -> Result<NameIndex, ModelError> {
    let file_len = dw.elf().data().len() as u64;
    if file_len > u64::from(u32::MAX)
        || dw.section_len(gimli::SectionId::DebugInfo) > u64::from(u32::MAX)
        || dw.section_len(gimli::SectionId::DebugTypes) > u64::from(u32::MAX)
    {
        return Err(dw.malformed(DieOffset::VOID, "files over 4 GiB cannot be indexed"));
    }
    let data: &[u8] = dw.elf().data();
    let units: Vec<&UnitEntry> = dw.units().iter().filter(|u| u.kind != UnitKind::Other).collect();
    let shards: Vec<Shard> = units
        .par_iter()
        .try_fold(
            || (Shard::default(), Carry::default()),
            |(mut shard, mut carry), u| index_unit(dw, u, &mut shard, &mut carry).map(|()| (shard, carry)),
        )
        .map(|r| r.map(|(shard, _)| shard))
        .collect::<Result<_, _>>()?;
    let total: usize = shards.iter().map(FxHashMap::len).sum();
    let mut shards = shards.into_iter();
    let mut all = shards.next().unwrap_or_default();
    all.reserve(total - all.len());
    for shard in shards {
        for (k, die) in shard {
            all.entry(k).and_modify(|d| *d = (*d).min(die)).or_insert(die);
        }
    }
    // Sorted by the first eight bytes of the name as a number first: each name is read
    // from the file once here, and most comparisons end at the number instead of two
    // reads of scattered strings.
    let strs = {
        use gimli::Section as _;
        dw.gimli().debug_str.reader().slice()
    };
    let str_start = (strs.as_ptr() as usize).wrapping_sub(data.as_ptr() as usize);
    let mut keyed: Vec<(u64, Entry)> = all
        .into_par_iter()
        .filter_map(|(k, die)| measure(dw, strs, str_start, k.entry(die)).transpose())
        .map(|e| e.map(|e| (name_prefix(e.name(data)), e)))
        .collect::<Result<_, _>>()?;
    keyed.par_sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| cmp(data, &a.1, &b.1)));
    let mut entries: Vec<Entry> = keyed.into_iter().map(|(_, e)| e).collect();
    entries.dedup_by(|b, a| same(data, a, b));
    entries.shrink_to_fit();
    Ok(NameIndex { entries })
}

/// The length of a name the walk left unmeasured ([`crate::scan::TopName::Str`]).
const UNMEASURED: u16 = u16::MAX;

/// Gives a `.debug_str` name its length, once per distinct entry rather than once per
/// DIE. `None`: too long to index (the walk skips such names too).
fn measure(dw: &Dwarf, strs: &[u8], str_start: usize, mut e: Entry) -> Result<Option<Entry>, ModelError> {
    if e.name_len != UNMEASURED {
        return Ok(Some(e));
    }
    let o = (e.name_pos as usize).wrapping_sub(str_start);
    let len = strs
        .get(o..)
        .and_then(|s| memchr::memchr(0, s))
        .ok_or_else(|| dw.malformed(e.die_offset(), format!("name at .debug_str offset {o:#x} is not a string")))?;
    match u16::try_from(len).ok().filter(|&n| n != UNMEASURED) {
        Some(n) => {
            e.name_len = n;
            Ok(Some(e))
        }
        None => Ok(None),
    }
}

/// What one worker carries from unit to unit: its compiled abbreviations, and the
/// hashes of the declaration files it has seen, by where their strings are
/// ([`UnitWalk::file_key`]): a header's path is read and hashed once, not in every unit.
#[derive(Default)]
struct Carry {
    plans: Plans,
    paths: FxHashMap<(u64, u64), u32>,
}

/// Adds the named top-level DIEs of one unit to `shard`.
fn index_unit(dw: &Dwarf, u: &UnitEntry, shard: &mut Shard, carry: &mut Carry) -> Result<(), ModelError> {
    let d = dw.gimli();
    let w = dw.walk_reusing(&d, u, std::mem::take(&mut carry.plans))?;
    let base = dw.elf().data().as_ptr() as usize;
    let mut files = FileHashes::default();
    w.top_dies(|t| {
        // Names are positions in the mapped file: the position is their identity, and a
        // `.debug_str` name is measured after deduplication.
        let name_len = match t.name.known_len() {
            None => UNMEASURED,
            Some(n) => match u16::try_from(n).ok().filter(|&n| n != UNMEASURED) {
                Some(n) => n,
                None => return Ok(true),
            },
        };
        let name_pos = (t.name.start() as usize).wrapping_sub(base);
        let Ok(name_pos) = u32::try_from(name_pos) else { return Ok(true) };
        let file_hash = match t.decl_file {
            None => 0,
            Some(f) => files.get(&w, f, &mut carry.paths),
        };
        shard_insert(
            shard,
            Entry {
                die: t.die.section_offset() as u32,
                name_pos,
                byte_size: t.byte_size,
                decl_line: t.decl_line,
                file_hash,
                name_len,
                kind: t.kind as u8,
                flags: t.flags,
            },
        );
        Ok(true)
    })?;
    carry.plans = w.recycle();
    Ok(())
}

/// The hashes of one unit's declaration files, by file index, computed on first use
/// from the unit's line program header.
#[derive(Default)]
struct FileHashes<'a> {
    source: Option<Files<'a>>,
    /// By file index; 0: not computed yet (a computed hash is never 0).
    hashes: Vec<u32>,
    /// Reused to join directory and name.
    path: Vec<u8>,
}

/// Where a unit's file names come from.
enum Files<'a> {
    /// Read directly (the DWARF 5 headers compilers write).
    Table(FileTable<'a>),
    /// Through gimli (`None`: no line program, or gimli could not read its header).
    Gimli(Option<gimli::IncompleteLineProgram<crate::R<'a>>>),
}

impl<'a> FileHashes<'a> {
    fn get(&mut self, w: &UnitWalk<'a, '_>, f: u64, seen: &mut FxHashMap<(u64, u64), u32>) -> u32 {
        let source = self.source.get_or_insert_with(|| {
            let mut table = FileTable::default();
            if w.file_table_v5(&mut table) {
                Files::Table(table)
            } else {
                Files::Gimli(w.line_program())
            }
        });
        if self.hashes.is_empty() {
            // Bounded by the file table already read (DWARF 4 counts from 1).
            let files = match source {
                Files::Table(t) => t.files(),
                Files::Gimli(Some(p)) => p.header().file_names().len(),
                Files::Gimli(None) => return 0,
            };
            self.hashes = vec![0; files + 1];
        }
        let slot = usize::try_from(f).ok().filter(|&i| i < self.hashes.len());
        if let Some(h) = slot.and_then(|i| self.hashes.get(i)).filter(|&&h| h != 0) {
            return *h;
        }
        let key = match source {
            Files::Table(t) => w.file_key(t, f),
            Files::Gimli(_) => None,
        };
        if let Some(h) = key.and_then(|k| seen.get(&k)) {
            if let Some(s) = slot.and_then(|i| self.hashes.get_mut(i)) {
                *s = *h;
            }
            return *h;
        }
        let path = match source {
            Files::Table(t) => w.file_path(t, f),
            Files::Gimli(None) => None,
            Files::Gimli(Some(p)) => gimli_file_path(w, p.header(), f),
        };
        let h = path.map_or(0, |(dir, name)| path_hash(&mut self.path, dir, name));
        if let Some(k) = key {
            seen.insert(k, h);
        }
        if let Some(s) = slot.and_then(|i| self.hashes.get_mut(i)) {
            *s = h;
        }
        h
    }
}

/// File `f`'s directory (none for directory 0) and name, as gimli's header gives them.
fn gimli_file_path<'a>(
    w: &UnitWalk<'a, '_>,
    header: &gimli::LineProgramHeader<crate::R<'a>>,
    f: u64,
) -> Option<(Option<&'a [u8]>, &'a [u8])> {
    let at = w.unit_at();
    let file = header.file(f)?;
    let name = w.string(at, file.path_name()).unwrap_or(b"");
    let dir = match file.directory(header) {
        Some(v) if file.directory_index() != 0 => w.string(at, v).ok(),
        _ => None,
    };
    Some((dir, name))
}

/// For every unit, the path hash of every file of its line table through the direct
/// DWARF 5 reader and through gimli's header parser; the files compared (those the
/// direct reader read), or the first that differs. For the tests: the index keys
/// declaration files by these hashes, and must key them as gimli reads the headers.
#[doc(hidden)]
pub fn check_file_tables(dw: &Dwarf) -> Result<usize, String> {
    let d = dw.gimli();
    let mut compared = 0;
    let mut buf = Vec::new();
    for u in dw.units().iter().filter(|u| u.kind != UnitKind::Other) {
        let w = dw.walk(&d, u).map_err(|e| e.to_string())?;
        let mut table = FileTable::default();
        if !w.file_table_v5(&mut table) {
            continue;
        }
        let program = w.line_program().ok_or_else(|| format!("unit {:#x}: gimli reads no header", u.offset))?;
        let header = program.header();
        if header.file_names().len() != table.files() {
            return Err(format!("unit {:#x}: {} files, gimli {}", u.offset, table.files(), header.file_names().len()));
        }
        for f in 0..table.files() as u64 {
            let ours = w.file_path(&table, f).map(|(dir, name)| path_hash(&mut buf, dir, name));
            let theirs = gimli_file_path(&w, header, f).map(|(dir, name)| path_hash(&mut buf, dir, name));
            if ours != theirs {
                return Err(format!("unit {:#x} file {f}: {ours:?}, gimli {theirs:?}", u.offset));
            }
            compared += 1;
        }
    }
    Ok(compared)
}

/// [`fnv32`] of [`crate::decode::join_path`]`(dir, name)`, without allocating when both
/// are UTF-8 (as kernel paths are); `buf` is scratch space.
fn path_hash(buf: &mut Vec<u8>, dir: Option<&[u8]>, name: &[u8]) -> u32 {
    let utf8 = |b: &[u8]| b.is_ascii() || std::str::from_utf8(b).is_ok();
    if !utf8(name) || !dir.is_none_or(utf8) {
        let path =
            crate::decode::join_path(dir.map(String::from_utf8_lossy).as_deref(), &String::from_utf8_lossy(name));
        return fnv32(path.as_bytes());
    }
    buf.clear();
    match dir {
        Some(dir) if !name.starts_with(b"/") && !dir.is_empty() => {
            buf.extend_from_slice(dir);
            buf.push(b'/');
            buf.extend_from_slice(name);
        }
        _ => buf.extend_from_slice(name),
    }
    let mut s = &buf[..];
    while let Some(rest) = s.strip_prefix(b"./") {
        s = rest;
    }
    fnv32(s)
}

fn fnv32(bytes: &[u8]) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for &b in bytes {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h.max(1)
}

/// FNV-1a, 64 bits: the cache checksum (against truncation and bit rot, not attacks:
/// a forged cache can only point lookups at other DIEs, which are decoded checked).
struct Fnv64(u64);

impl Fnv64 {
    fn new() -> Fnv64 {
        Fnv64(0xcbf2_9ce4_8422_2325)
    }
    fn update(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn header_bytes(dw: &Dwarf, count: u64) -> Vec<u8> {
    let id = dw.elf().build_id().unwrap_or(&[]);
    let mut h = Vec::with_capacity(64 + id.len());
    h.extend_from_slice(MAGIC);
    h.extend_from_slice(&VERSION.to_le_bytes());
    h.extend_from_slice(&(id.len() as u32).to_le_bytes());
    h.extend_from_slice(id);
    h.extend_from_slice(&(dw.elf().data().len() as u64).to_le_bytes());
    h.extend_from_slice(&dw.section_len(gimli::SectionId::DebugInfo).to_le_bytes());
    h.extend_from_slice(&count.to_le_bytes());
    h
}

/// Writes the index next to its final name and renames it into place, so a reader
/// never sees a partial file.
pub(crate) fn write_cache(dw: &Dwarf, idx: &NameIndex, path: &Path) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    // Through an unnamed temporary file: a process killed while writing leaves nothing.
    fevlint_load::fsio::write_atomic_with(path, |f| {
        let mut w = BufWriter::new(f);
        let mut sum = Fnv64::new();
        let header = header_bytes(dw, idx.entries.len() as u64);
        sum.update(&header);
        w.write_all(&header)?;
        for e in &idx.entries {
            let b = e.to_bytes();
            sum.update(&b);
            w.write_all(&b)?;
        }
        w.write_all(&sum.0.to_le_bytes())?;
        w.flush()
    })
}

/// Reads and validates a cache file: magic, version, build-id, file and section
/// lengths, exact total length, checksum, and every entry's bounds.
pub(crate) fn read_cache(dw: &Dwarf, mut f: fs::File) -> Result<NameIndex, String> {
    let header = header_bytes(dw, 0);
    let fixed = header.len() - 8;
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    let mut head = vec![0u8; header.len()];
    f.read_exact(&mut head).map_err(|_| "shorter than its header".to_string())?;
    if &head[..8] != MAGIC {
        return Err("bad magic".into());
    }
    if head[8..12] != header[8..12] {
        return Err("other format version".into());
    }
    if head[..fixed] != header[..fixed] {
        return Err("built for another file (build-id or sizes differ)".into());
    }
    let mut c = [0u8; 8];
    c.copy_from_slice(&head[fixed..]);
    let count = u64::from_le_bytes(c);
    let expect = (header.len() as u64)
        .checked_add(count.checked_mul(ENTRY_LEN as u64).ok_or("absurd entry count")?)
        .and_then(|x| x.checked_add(8))
        .ok_or("absurd entry count")?;
    if expect != len {
        return Err(format!("length {len} does not match {count} entries"));
    }
    // The length matched the file, so this allocation is bounded by the file's size.
    let mut body = vec![0u8; (len - header.len() as u64) as usize];
    f.read_exact(&mut body).map_err(|e| e.to_string())?;
    let (entries_bytes, sum_bytes) = body.split_at(body.len() - 8);
    let mut sum = Fnv64::new();
    sum.update(&head);
    sum.update(entries_bytes);
    c.copy_from_slice(sum_bytes);
    if sum.0 != u64::from_le_bytes(c) {
        return Err("checksum mismatch".into());
    }
    let file_len = dw.elf().data().len() as u64;
    let info_len = dw.section_len(gimli::SectionId::DebugInfo);
    let types_len = dw.section_len(gimli::SectionId::DebugTypes);
    let mut entries = Vec::with_capacity(count as usize);
    for chunk in entries_bytes.chunks_exact(ENTRY_LEN) {
        let mut b = [0u8; ENTRY_LEN];
        b.copy_from_slice(chunk);
        let e = Entry::from_bytes(&b);
        let limit = if e.flags & FLAG_TYPES != 0 { types_len } else { info_len };
        if Kind::from_u8(e.kind).is_none()
            || u64::from(e.die) >= limit
            || u64::from(e.name_pos) + u64::from(e.name_len) > file_len
        {
            return Err(format!("entry {} out of bounds", entries.len()));
        }
        entries.push(e);
    }
    let data: &[u8] = dw.elf().data();
    if entries.windows(2).any(|w| cmp(data, &w[0], &w[1]) != Ordering::Less) {
        return Err("entries out of order".into());
    }
    Ok(NameIndex { entries })
}
