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
use std::collections::HashMap;
use std::fs;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::scan::{Kind, FLAG_DECL, FLAG_TYPES};
use super::{DieOffset, Dwarf, UnitEntry, UnitKind};
use crate::kernel::model::{FunctionInfo, ModelError, TypeNamespace, TypeRef};

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

fn same(data: &[u8], a: &Entry, b: &Entry) -> bool {
    a.key() == b.key() && a.name(data) == b.name(data)
}

/// Order by where the name lies, not what it says: the linker merges `.debug_str`, so
/// equal names almost always share a position, and comparing integers is what makes
/// deduplicating millions of repeated DIEs cheap. Names stored inline in `.debug_info`
/// (gcc does that for very short ones) are caught by the final byte-wise pass.
fn cmp_pos(a: &Entry, b: &Entry) -> Ordering {
    (a.name_pos, a.name_len, a.key(), a.die).cmp(&(b.name_pos, b.name_len, b.key(), b.die))
}

fn same_pos(a: &Entry, b: &Entry) -> bool {
    (a.name_pos, a.name_len, a.key()) == (b.name_pos, b.name_len, b.key())
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
        let chosen = if defs.is_empty() { fns.into_iter().take(1).collect() } else { defs };
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

/// `$XDG_CACHE_HOME/fevlint`, else `$HOME/.cache/fevlint`.
pub fn default_cache_dir() -> Option<PathBuf> {
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").filter(|x| !x.is_empty()) {
        return Some(PathBuf::from(x).join("fevlint"));
    }
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".cache/fevlint"))
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

/// Builds the index in parallel over units (rayon), merging sorted per-unit lists.
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
    let mut entries = units.par_iter().map(|u| index_unit(dw, u)).try_reduce(Vec::new, |a, b| Ok(merge(a, b)))?;
    entries.par_sort_unstable_by(|a, b| cmp(data, a, b));
    entries.dedup_by(|b, a| same(data, a, b));
    entries.shrink_to_fit();
    Ok(NameIndex { entries })
}

fn index_unit(dw: &Dwarf, u: &UnitEntry) -> Result<Vec<Entry>, ModelError> {
    let d = dw.gimli();
    let unit = dw.unit_with(&d, u, false)?;
    let data: &[u8] = dw.elf().data();
    let base = data.as_ptr() as usize;
    let mut out = Vec::new();
    let mut hashes: HashMap<u64, u32> = HashMap::new();
    let mut program = None;
    let mut program_read = false;
    let at = if u.in_types { DieOffset::types(u.offset) } else { DieOffset::info(u.offset) };
    dw.walk_unit(&d, u, &unit, |t| {
        let Ok(name_len) = u16::try_from(t.name.len()) else { return Ok(true) };
        // Names are slices of the mapped file: their position is their identity.
        let name_pos = (t.name.as_ptr() as usize).wrapping_sub(base);
        let Ok(name_pos) = u32::try_from(name_pos) else { return Ok(true) };
        let file_hash = match t.decl_file {
            None => 0,
            Some(f) => match hashes.get(&f) {
                Some(h) => *h,
                None => {
                    if !program_read {
                        program_read = true;
                        program = dw.line_program(&d, &unit, at).ok().flatten();
                    }
                    let h = match &program {
                        Some(p) => match p.header().file(f) {
                            Some(file) => {
                                let name = dw.string(&d, &unit, at, file.path_name()).unwrap_or(b"");
                                let dir = match file.directory(p.header()) {
                                    Some(v) if file.directory_index() != 0 => dw.string(&d, &unit, at, v).ok(),
                                    _ => None,
                                };
                                let path = super::decode::join_path(
                                    dir.map(String::from_utf8_lossy).as_deref(),
                                    &String::from_utf8_lossy(name),
                                );
                                fnv32(path.as_bytes())
                            }
                            None => 0,
                        },
                        None => 0,
                    };
                    hashes.insert(f, h);
                    h
                }
            },
        };
        out.push(Entry {
            die: t.die.section_offset() as u32,
            name_pos,
            byte_size: t.byte_size,
            decl_line: t.decl_line,
            file_hash,
            name_len,
            kind: t.kind as u8,
            flags: t.flags,
        });
        Ok(true)
    })?;
    out.sort_unstable_by(cmp_pos);
    out.dedup_by(|b, a| same_pos(a, b));
    Ok(out)
}

/// Merges two lists sorted and deduplicated by [`cmp_pos`] into one.
fn merge(a: Vec<Entry>, b: Vec<Entry>) -> Vec<Entry> {
    if a.is_empty() {
        return b;
    }
    if b.is_empty() {
        return a;
    }
    let mut out: Vec<Entry> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let next = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) if cmp_pos(x, y) != Ordering::Greater => {
                i += 1;
                *x
            }
            (_, Some(y)) => {
                j += 1;
                *y
            }
            (Some(x), None) => {
                i += 1;
                *x
            }
            (None, None) => break,
        };
        if out.last().is_some_and(|l| same_pos(l, &next)) {
            continue;
        }
        out.push(next);
    }
    out
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
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let tmp = dir.join(format!(
        ".{}.{}.{nanos}.tmp",
        path.file_name().map_or("index".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    let result = (|| {
        let mut w = BufWriter::new(fs::File::create(&tmp)?);
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
        w.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
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
