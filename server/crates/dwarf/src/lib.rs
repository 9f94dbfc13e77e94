//! A lazy DWARF 4/5 reader (gimli) behind the same [`TypeSource`] interface as BTF.
//!
//! Opening reads only the unit headers (a few thousand for a kernel). Every question
//! then parses the one unit it needs: a type is decoded from its DIE on demand, a
//! function is found through `.symtab` → `.debug_aranges` → one unit, a type by name
//! by scanning units until a definition turns up, or through the full name index
//! ([`index`]) once it is built or loaded from its on-disk cache.
//!
//! A [`TypeRef`] is a [`DieOffset`]: the DIE's offset in `.debug_info`, with two
//! tags in unused high bits (see there).
//!
//! Relocations are never applied: a linked vmlinux's debug sections are final, and
//! Debian's `-dbg` images carry `.rela.debug_*` (from `--emit-relocs`) that must be
//! ignored. Relocatable objects (`.o`, `.ko`) are refused for that reason.
//!
//! Invariant: no input makes this module panic, loop without bound, or allocate by a
//! count read from the file; every error names the file and a `.debug_info` offset.

mod decode;
pub mod index;
mod scan;
mod toplevel;

use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use gimli::{EndianSlice, LittleEndian, SectionId, UnitType};
use rustc_hash::FxHashMap;

use fevlint_load::elf::KernelElf;
use fevlint_load::error::LoadError;
use fevlint_load::Blob;
use fevlint_types::model::{FunctionInfo, ModelError, Type, TypeNamespace, TypeRef, TypeSource};
pub use index::{IndexOrigin, NameIndex};

/// The reader type: slices of the mapped file.
pub(crate) type R<'a> = EndianSlice<'a, LittleEndian>;

/// How many reference hops (typedef chains, origins, nested arrays) a walk follows
/// before it reports a cycle. Real kernels need fewer than 20.
pub const MAX_CHAIN: usize = 64;
/// Units a cold type lookup scans before it turns to the name index.
const EARLY_UNITS: usize = 16;
/// Most dimensions an array type may have (the dimension lives in 8 bits of a ref).
pub const MAX_DIMS: usize = 255;

/// A DIE's identity, as handed out in [`TypeRef`]s.
///
/// Bits 0..48: the offset in `.debug_info` (or `.debug_types`). Bits 48..56: for an
/// array type, the first dimension this ref stands for (`int a[2][3]` is one DIE; its
/// element type `int[3]` is the same DIE at dimension 1). Bit 63: the DIE lives in a
/// DWARF 4 `.debug_types` section. Offset 0 is never a DIE (a unit header is there),
/// so `DieOffset(0)` is `void`, as in BTF.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DieOffset(pub u64);

impl DieOffset {
    const TYPES_BIT: u64 = 1 << 63;
    const DIM_SHIFT: u32 = 48;
    const OFFSET_MASK: u64 = (1 << 48) - 1;
    pub const VOID: DieOffset = DieOffset(0);

    pub fn info(offset: u64) -> DieOffset {
        DieOffset(offset & Self::OFFSET_MASK)
    }

    pub fn types(offset: u64) -> DieOffset {
        DieOffset((offset & Self::OFFSET_MASK) | Self::TYPES_BIT)
    }

    /// Offset inside its section.
    pub fn section_offset(self) -> u64 {
        self.0 & Self::OFFSET_MASK
    }

    pub fn in_types(self) -> bool {
        self.0 & Self::TYPES_BIT != 0
    }

    pub fn dim(self) -> usize {
        ((self.0 >> Self::DIM_SHIFT) & 0xff) as usize
    }

    /// The DIE itself, dimension tag cleared.
    pub fn die(self) -> DieOffset {
        DieOffset(self.0 & !(0xff << Self::DIM_SHIFT))
    }

    fn with_dim(self, dim: usize) -> DieOffset {
        DieOffset(self.die().0 | ((dim as u64 & 0xff) << Self::DIM_SHIFT))
    }

    fn same_section(self, offset: u64) -> DieOffset {
        if self.in_types() {
            DieOffset::types(offset)
        } else {
            DieOffset::info(offset)
        }
    }
}

impl From<DieOffset> for TypeRef {
    fn from(d: DieOffset) -> TypeRef {
        TypeRef(d.0)
    }
}

/// One unit header, as found at open time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct UnitEntry {
    /// Offset of the unit header in its section.
    pub offset: u64,
    /// One past its last byte.
    pub end: u64,
    pub in_types: bool,
    pub kind: UnitKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UnitKind {
    Compile,
    Type,
    Partial,
    /// Skeleton and split units: nothing for us in them.
    Other,
}

/// Why a DWARF file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Model(#[from] ModelError),
}

/// The DWARF debug information of one ELF file.
pub struct Dwarf {
    elf: Arc<KernelElf>,
    source_name: String,
    /// File ranges of the debug sections present, checked against the file's length.
    sections: Vec<(SectionId, Range<usize>)>,
    /// `.debug_info` units in offset order, then `.debug_types` units in offset order.
    units: Vec<UnitEntry>,
    info_units: usize,
    /// Type-unit signature → the type's DIE.
    signatures: FxHashMap<u64, DieOffset>,
    /// Parsed abbreviation tables by (section is types, offset in `.debug_abbrev`).
    abbrevs: Mutex<FxHashMap<u64, Arc<gimli::Abbreviations>>>,
    index: OnceLock<Arc<NameIndex>>,
    cache_dir: Option<PathBuf>,
    pointer_size: u32,
    max_version: u16,
}

impl fmt::Debug for Dwarf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dwarf")
            .field("source_name", &self.source_name)
            .field("units", &self.units.len())
            .field("indexed", &self.index.get().is_some())
            .finish()
    }
}

const SHF_COMPRESSED: u64 = 0x800;

impl Dwarf {
    /// Opens `path` (mapped when large) and reads its DWARF unit headers.
    pub fn open(path: &Path) -> Result<Dwarf, OpenError> {
        let blob = Blob::read(path)?;
        let elf = KernelElf::parse(blob, path)?;
        Ok(Dwarf::new(Arc::new(elf))?)
    }

    /// Reads the DWARF of an already parsed ELF: section ranges and unit headers only.
    pub fn new(elf: Arc<KernelElf>) -> Result<Dwarf, ModelError> {
        let source_name = elf.path().display().to_string();
        let malformed =
            |offset: u64, what: String| ModelError::Malformed { source_name: source_name.clone(), offset, what };
        // e_type at byte 16 (little-endian: KernelElf accepts only x86).
        let e_type = elf.data().get(16..18).map(|b| u16::from_le_bytes([b[0], b[1]]));
        if e_type == Some(object::elf::ET_REL) {
            return Err(malformed(
                0,
                "relocatable object: its DWARF needs relocations applied; pass a linked image".into(),
            ));
        }
        if !elf.has_dwarf() {
            return Err(malformed(0, "no .debug_info section".into()));
        }
        let mut sections = Vec::new();
        for id in [
            SectionId::DebugInfo,
            SectionId::DebugAbbrev,
            SectionId::DebugStr,
            SectionId::DebugStrOffsets,
            SectionId::DebugLine,
            SectionId::DebugLineStr,
            SectionId::DebugAddr,
            SectionId::DebugAranges,
            SectionId::DebugTypes,
        ] {
            let Some(info) = elf.section(id.name()) else { continue };
            if info.flags & SHF_COMPRESSED != 0 {
                return Err(malformed(
                    0,
                    format!("{} is compressed (SHF_COMPRESSED), which is not supported", id.name()),
                ));
            }
            if let Some(range) = elf.section_data(id.name()).map(|s| s.range()) {
                sections.push((id, range));
            } else if info.file_range.is_some() {
                return Err(malformed(0, format!("{} lies outside the file (truncated?)", id.name())));
            }
        }
        let mut dwarf = Dwarf {
            pointer_size: elf.arch().pointer_size(),
            elf,
            source_name,
            sections,
            units: Vec::new(),
            info_units: 0,
            signatures: FxHashMap::default(),
            abbrevs: Mutex::new(FxHashMap::default()),
            index: OnceLock::new(),
            cache_dir: None,
            max_version: 0,
        };
        dwarf.read_unit_headers()?;
        Ok(dwarf)
    }

    /// Where the name index is cached (`None`, the default: never cached). The kernel
    /// loader passes the directory the edge chose for every kernel cache, so turning the
    /// cache off or moving it applies to all of them.
    pub fn with_cache_dir(mut self, dir: Option<PathBuf>) -> Dwarf {
        self.cache_dir = dir;
        self
    }

    pub fn cache_dir(&self) -> Option<&Path> {
        self.cache_dir.as_deref()
    }

    pub fn elf(&self) -> &Arc<KernelElf> {
        &self.elf
    }

    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Number of units (compile, type and partial units; skeletons included).
    pub fn unit_count(&self) -> usize {
        self.units.len()
    }

    /// Highest DWARF version among the units.
    pub fn version(&self) -> u16 {
        self.max_version
    }

    /// The gimli view of the sections. Cheap (a handful of slices), so it is made per
    /// question instead of being stored next to the bytes it borrows.
    pub(crate) fn gimli(&self) -> gimli::Dwarf<R<'_>> {
        let data: &[u8] = self.elf.data();
        let mut d = gimli::Dwarf::load(|id| -> Result<R<'_>, std::convert::Infallible> {
            let bytes =
                self.sections.iter().find(|(s, _)| *s == id).and_then(|(_, r)| data.get(r.clone())).unwrap_or(&[]);
            Ok(EndianSlice::new(bytes, LittleEndian))
        })
        .unwrap_or_default();
        d.file_type = gimli::DwarfFileType::Main;
        d
    }

    pub(crate) fn section_len(&self, id: SectionId) -> u64 {
        self.sections.iter().find(|(s, _)| *s == id).map_or(0, |(_, r)| r.len() as u64)
    }

    pub(crate) fn malformed(&self, offset: DieOffset, what: impl Into<String>) -> ModelError {
        let section = if offset.in_types() { ".debug_types" } else { ".debug_info" };
        ModelError::Malformed {
            source_name: self.source_name.clone(),
            offset: offset.section_offset(),
            what: format!("{section}: {}", what.into()),
        }
    }

    pub(crate) fn gimli_error(&self, offset: DieOffset, e: gimli::Error) -> ModelError {
        self.malformed(offset, format!("{e}"))
    }

    fn read_unit_headers(&mut self) -> Result<(), ModelError> {
        let d = self.gimli();
        let mut units = Vec::new();
        let mut signatures = FxHashMap::default();
        let mut max_version = 0;
        let mut iter = d.debug_info.units();
        let mut next = 0u64;
        loop {
            let header = match iter.next() {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(e) => return Err(self.gimli_error(DieOffset::info(next), e)),
            };
            let offset = header.offset().as_debug_info_offset().map_or(next, |o| o.0 as u64);
            let end = offset + header.length_including_self() as u64;
            next = end;
            let kind = match header.type_() {
                UnitType::Compilation => UnitKind::Compile,
                UnitType::Partial => UnitKind::Partial,
                UnitType::Type { type_signature, type_offset } => {
                    signatures.insert(type_signature.0, DieOffset::info(offset + type_offset.0 as u64));
                    UnitKind::Type
                }
                _ => UnitKind::Other,
            };
            max_version = max_version.max(header.version());
            units.push(UnitEntry { offset, end, in_types: false, kind });
        }
        let info_units = units.len();
        let mut iter = d.debug_types.units();
        next = 0;
        loop {
            let header = match iter.next() {
                Ok(Some(h)) => h,
                Ok(None) => break,
                Err(e) => return Err(self.gimli_error(DieOffset::types(next), e)),
            };
            let offset = header.offset().as_debug_types_offset().map_or(next, |o| o.0 as u64);
            let end = offset + header.length_including_self() as u64;
            next = end;
            if let UnitType::Type { type_signature, type_offset } = header.type_() {
                signatures.insert(type_signature.0, DieOffset::types(offset + type_offset.0 as u64));
            }
            max_version = max_version.max(header.version());
            units.push(UnitEntry { offset, end, in_types: true, kind: UnitKind::Type });
        }
        if units.is_empty() {
            return Err(self.malformed(DieOffset::VOID, "no units"));
        }
        drop(d);
        self.info_units = info_units;
        self.units = units;
        self.signatures = signatures;
        self.max_version = max_version;
        Ok(())
    }

    /// The unit containing `die`.
    pub(crate) fn unit_of(&self, die: DieOffset) -> Result<&UnitEntry, ModelError> {
        let list = if die.in_types() { &self.units[self.info_units..] } else { &self.units[..self.info_units] };
        let off = die.section_offset();
        let i = list.partition_point(|u| u.offset <= off);
        match i.checked_sub(1).and_then(|i| list.get(i)) {
            Some(u) if off < u.end => Ok(u),
            _ => Err(self.malformed(die, "no unit contains this offset")),
        }
    }

    pub(crate) fn signature(&self, sig: u64) -> Option<DieOffset> {
        self.signatures.get(&sig).copied()
    }

    pub(crate) fn units(&self) -> &[UnitEntry] {
        &self.units
    }

    /// A gimli `Unit` for `u`: cached abbreviations, bases from the unit DIE, no line
    /// program (see [`Dwarf::line_program`]). The top-level walks
    /// ([`walk`](Dwarf::walk)) parse abbreviations themselves and come here only for
    /// what they leave to gimli.
    pub(crate) fn unit<'a>(&self, d: &gimli::Dwarf<R<'a>>, u: &UnitEntry) -> Result<gimli::Unit<R<'a>>, ModelError> {
        let at = if u.in_types { DieOffset::types(u.offset) } else { DieOffset::info(u.offset) };
        let err = |e| self.gimli_error(at, e);
        let header = if u.in_types {
            use gimli::Section as _;
            let rest = d.debug_types.reader().range_from(u.offset as usize..);
            let mut one = gimli::DebugTypes::from(rest).units();
            one.next().map_err(err)?.ok_or_else(|| self.malformed(at, "type unit vanished"))?
        } else {
            d.debug_info.header_from_offset(gimli::DebugInfoOffset(u.offset as usize)).map_err(err)?
        };
        let key = header.debug_abbrev_offset().0 as u64;
        let hit = self.abbrevs.lock().ok().and_then(|m| m.get(&key).cloned());
        let abbreviations = match hit {
            Some(a) => a,
            None => {
                let a = Arc::new(header.abbreviations(&d.debug_abbrev).map_err(err)?);
                if let Ok(mut m) = self.abbrevs.lock() {
                    m.insert(key, a.clone());
                }
                a
            }
        };
        let mut unit = gimli::Unit {
            header,
            abbreviations,
            name: None,
            comp_dir: None,
            low_pc: 0,
            str_offsets_base: gimli::DebugStrOffsetsBase(0),
            addr_base: gimli::DebugAddrBase(0),
            loclists_base: gimli::DebugLocListsBase(0),
            rnglists_base: gimli::DebugRngListsBase(0),
            line_program: None,
            dwo_id: None,
        };
        let root_off = {
            let mut raw = unit.entries_raw(None).map_err(err)?;
            let off = raw.next_offset();
            raw.read_abbreviation().map_err(err)?;
            off
        };
        let (mut sob, mut ab, mut low) = (unit.str_offsets_base, unit.addr_base, unit.low_pc);
        {
            let root = unit.entry(root_off).map_err(err)?;
            let mut attrs = root.attrs();
            while let Some(a) = attrs.next().map_err(err)? {
                match (a.name(), a.value()) {
                    (gimli::DW_AT_str_offsets_base, gimli::AttributeValue::DebugStrOffsetsBase(b)) => sob = b,
                    (gimli::DW_AT_addr_base | gimli::DW_AT_GNU_addr_base, gimli::AttributeValue::DebugAddrBase(b)) => {
                        ab = b
                    }
                    (gimli::DW_AT_low_pc, gimli::AttributeValue::Addr(a)) => low = a,
                    _ => {}
                }
            }
        }
        unit.str_offsets_base = sob;
        unit.addr_base = ab;
        unit.low_pc = low;
        Ok(unit)
    }

    /// The unit containing `die` and the DIE's offset inside it.
    pub(crate) fn locate<'a>(
        &self,
        d: &gimli::Dwarf<R<'a>>,
        die: DieOffset,
    ) -> Result<(UnitEntry, gimli::Unit<R<'a>>, gimli::UnitOffset), ModelError> {
        let u = *self.unit_of(die)?;
        let unit = self.unit(d, &u)?;
        let rel = die.section_offset() - u.offset;
        if rel < unit.header.header_size() as u64 {
            return Err(self.malformed(die, "offset points into a unit header"));
        }
        Ok((u, unit, gimli::UnitOffset(rel as usize)))
    }

    /// The index if built or loaded, else `None` (see [`Dwarf::ensure_index`]).
    pub fn index(&self) -> Option<&Arc<NameIndex>> {
        self.index.get()
    }

    /// Loads the name index from the cache, or builds it (in parallel) and caches it.
    pub fn ensure_index(&self) -> Result<(&Arc<NameIndex>, IndexOrigin), ModelError> {
        if let Some(i) = self.index.get() {
            return Ok((i, IndexOrigin::Memory));
        }
        let (idx, origin) = index::load_or_build(self)?;
        let _ = self.index.set(Arc::new(idx));
        let i = self.index.get().ok_or_else(|| self.malformed(DieOffset::VOID, "index vanished"))?;
        Ok((i, origin))
    }
}

impl TypeSource for Dwarf {
    fn describe(&self) -> String {
        format!("DWARF {} ({} units)", self.max_version, self.units.len())
    }

    fn get(&self, ty: TypeRef) -> Result<Type, ModelError> {
        self.decode(DieOffset(ty.0))
    }

    fn size_of(&self, ty: TypeRef) -> Result<Option<u64>, ModelError> {
        self.size_at(DieOffset(ty.0), 0)
    }

    fn find_type(&self, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError> {
        if let Some(i) = self.index.get() {
            return i.find_type(self, ns, name);
        }
        // The first units define the common types (pahole stops there too); a type
        // defined later is found through the name index, loaded from its cache by
        // build-id (built and cached by the first lookup that needs it), so a lookup
        // costs the same wherever its unit lies. Without a cache, units are scanned.
        if let Some(found) = self.scan_type_in(ns, name, EARLY_UNITS)? {
            return Ok(found);
        }
        if index::cache_path(self).is_some() {
            let (i, _) = self.ensure_index()?;
            return i.find_type(self, ns, name);
        }
        self.scan_type(ns, name)
    }

    fn functions(&self, name: &str) -> Result<Vec<FunctionInfo>, ModelError> {
        if self.index.get().is_none() {
            if let Some(found) = self.functions_by_symbol(name)? {
                return Ok(found);
            }
        }
        let (idx, _) = self.ensure_index()?;
        idx.functions(self, name)
    }

    fn function_names(&self) -> Result<Vec<String>, ModelError> {
        let (idx, _) = self.ensure_index()?;
        Ok(idx.function_names(self))
    }

    fn pointer_size(&self) -> u32 {
        self.pointer_size
    }
}
