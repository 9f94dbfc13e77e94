//! A zero-copy reader for raw BTF blobs (`/sys/kernel/btf/vmlinux`, a vmlinux `.BTF`
//! section, or a module's split BTF on top of its vmlinux base).
//!
//! Opening validates the header and makes one linear pass that records the byte offset
//! of every type; everything else (names, members, indexes) is decoded on demand. A blob
//! kept by the caller (a kernel's cached BTF) can instead be opened by page
//! ([`Btf::open_paged`]) with the layout a whole read left ([`Btf::layout`]): no pass,
//! and only the pages a lookup touches are read.
//!
//! Invariant: no input makes this module panic, loop without bound, or allocate more
//! than a small multiple of the blob's own size.

pub(crate) mod index;
mod paged;
mod raw;
mod source;

use std::fmt;
use std::sync::{Arc, OnceLock};

pub use index::{essential_name, essential_name_len};
pub use paged::{runs_after, BlobPages, WholeBytes, BLOB_PAGE, LAYOUT_GROUP, RUN};
pub use raw::{BtfKind, BtfTypeId, Endian, Header, RawType, StrOffset, BTF_MAGIC};
pub use source::Linkage;

use fevlint_types::model::{ModelError, TypeRef};
use index::{NameIndex, Namespace};
use paged::{Layout, Paged};
use raw::{read_u32, HEADER_LEN, TYPE_RECORD_LEN};

/// How many typedef/qualifier/array hops (or nested composites) a walk follows before it
/// gives up with [`ModelError::TooDeep`]. Real kernels need fewer than 20.
pub const MAX_CHAIN: usize = 64;

/// How many decoded types a blob keeps ([`Btf::decoded`]); later ones are decoded each time.
const DECODED_MAX: usize = 1 << 15;

/// A map keyed by type id, hashed by one multiplication (ids are not chosen by anyone
/// who gains from collisions: at worst a lookup is slower).
type IdMap<V> = std::collections::HashMap<u32, V, std::hash::BuildHasherDefault<IdHasher>>;

#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u32(u32::from(b));
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.0 = (self.0.rotate_left(5) ^ u64::from(n)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// Owner of the raw bytes: a `Vec<u8>`, an `Arc<[u8]>`, a memory map.
type Bytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// Owner of a stored name index's bytes (a memory map of a cache file, a `Vec<u8>`).
pub type IndexBytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// Where a blob's name indexes are kept between runs. The reader does no IO of its own:
/// the caller decides where (and whether) indexes are stored, and the reader only asks
/// for one by name and offers the ones it built. A stored index is checked before use
/// (every id in the blob, entries in order), so a stale or damaged one is rebuilt.
pub trait IndexStore: Send + Sync {
    /// The bytes stored under `name`, if any.
    fn get(&self, name: &str) -> Option<IndexBytes>;
    /// Keeps `bytes` under `name` (best effort: a failure only costs a rebuild later).
    fn put(&self, name: &str, bytes: &[u8]);
    /// Whether the store reads name indexes a piece at a time ([`IndexStore::get_paged`],
    /// [`IndexStore::put_paged`]) rather than whole.
    fn paged(&self) -> bool {
        false
    }
    /// The bytes stored under `name` by [`IndexStore::put_paged`], to be read a piece at
    /// a time, each piece checked by the store before it hands it out.
    fn get_paged(&self, _name: &str) -> Option<IndexPages> {
        None
    }
    /// Keeps `bytes` under `name` for [`IndexStore::get_paged`] (best effort).
    fn put_paged(&self, _name: &str, _bytes: &[u8]) {}
}

/// Stored bytes read a piece at a time ([`IndexStore::get_paged`]).
pub trait PagedBytes: Send + Sync {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bytes in `range` (lent when the store holds them in one piece); `None` when
    /// out of bounds or when the store cannot vouch for them (a piece that fails its
    /// checksum, a file cut short).
    fn read(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>>;
}

/// Owner of a stored name index read a piece at a time.
pub type IndexPages = Box<dyn PagedBytes>;

/// Where a blob's bytes are: all in memory, or read a page at a time when asked.
enum Data {
    Whole(Bytes),
    Paged(Paged),
}

/// Where each type's record starts.
enum Offsets {
    /// Every type's offset, from one walk over the type section at open.
    All(Vec<u32>),
    /// Every [`LAYOUT_GROUP`]th type's offset (a stored [`Layout`]); a group's others
    /// found by walking its records when one of them is first asked for.
    Sparse { layout: Layout, groups: Box<[OnceLock<Box<[u32]>>]> },
}

impl Offsets {
    fn count(&self) -> usize {
        match self {
            Offsets::All(v) => v.len(),
            Offsets::Sparse { layout, .. } => layout.count,
        }
    }
}

/// One BTF blob, possibly split on top of a base.
pub struct Btf {
    source_name: String,
    data: Data,
    header: Header,
    /// Absolute start of the string section in `data`.
    str_start: usize,
    /// Absolute byte offset in `data` of each type of this blob; entry `i` is type id
    /// `first_id + i`. Invariant: every record and its extra data lie inside the type
    /// section (checked by the walk that found it), so decoding a listed type never
    /// reads out of bounds.
    offsets: Offsets,
    /// The base of a split BTF: ids below `first_id` and string offsets below
    /// `first_str` belong to it.
    base: Option<Arc<Btf>>,
    first_id: u32,
    first_str: u32,
    pointer_size: u32,
    indexes: [OnceLock<NameIndex>; Namespace::COUNT],
    /// An index built from the type records after a stored one read piecewise failed a
    /// check mid-use ([`Btf::candidates`]).
    rebuilt: [OnceLock<NameIndex>; Namespace::COUNT],
    /// Where the name indexes are kept between runs: a name naming this blob's contents
    /// and the store holding it ([`Btf::with_index_cache`]); none, built every run.
    index_cache: Option<(String, Arc<dyn IndexStore>)>,
    /// `(member type id, composite id)` for each composite holding that type at offset 0,
    /// sorted (from the index store, else built on first use: [`Btf::embedder_index`]).
    embedders: OnceLock<Vec<(u32, u32)>>,
    /// Sizes of this blob's own types by `id - first_id`, filled as they are asked for
    /// (a check asks for the sizes of the same members over and over).
    sizes: OnceLock<Vec<std::sync::atomic::AtomicU32>>,
    /// Decoded types (at most [`DECODED_MAX`]), by id: a check reads the same members,
    /// typedefs and pointers over and over.
    decoded: OnceLock<std::sync::Mutex<IdMap<Arc<fevlint_types::model::Type>>>>,
    /// `type_names` of the struct, union and typedef namespaces, listed on first use.
    type_names: [OnceLock<Arc<fevlint_types::model::NameList>>; 3],
}

impl fmt::Debug for Btf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Btf")
            .field("source_name", &self.source_name)
            .field("bytes", &self.len())
            .field("types", &self.own_type_count())
            .field("first_id", &self.first_id)
            .field("split", &self.base.is_some())
            .finish()
    }
}

impl Btf {
    /// Parses a standalone BTF blob (vmlinux). `source_name` names the blob in errors.
    pub fn parse(
        source_name: impl Into<String>,
        data: impl AsRef<[u8]> + Send + Sync + 'static,
    ) -> Result<Btf, ModelError> {
        Btf::open(source_name.into(), Box::new(data), None)
    }

    /// Parses a split BTF blob (a kernel module's) whose ids and strings continue `base`.
    pub fn parse_split(
        source_name: impl Into<String>,
        data: impl AsRef<[u8]> + Send + Sync + 'static,
        base: Arc<Btf>,
    ) -> Result<Btf, ModelError> {
        Btf::open(source_name.into(), Box::new(data), Some(base))
    }

    fn open(source_name: String, data: Bytes, base: Option<Arc<Btf>>) -> Result<Btf, ModelError> {
        let bytes: &[u8] = (*data).as_ref();
        let malformed = |offset: usize, what: String| ModelError::Malformed {
            source_name: source_name.clone(),
            offset: offset as u64,
            what,
        };
        let header = parse_header(bytes).map_err(|(off, what)| malformed(off, what))?;
        let hdr_len = header.hdr_len as usize;
        let type_start = hdr_len + header.type_off as usize;
        let type_end = type_start + header.type_len as usize;
        let str_start = hdr_len + header.str_off as usize;
        let str_end = str_start + header.str_len as usize;
        let strs = &bytes[str_start..str_end];
        match &base {
            None => {
                if strs.first() != Some(&0) {
                    return Err(malformed(str_start, "string section does not start with NUL".into()));
                }
            }
            Some(b) if b.header.endian != header.endian => {
                return Err(malformed(0, "split BTF and its base differ in byte order".into()));
            }
            Some(_) => {}
        }
        if !strs.is_empty() && strs.last() != Some(&0) {
            return Err(malformed(str_end - 1, "string section does not end with NUL".into()));
        }
        let (first_id, first_str) = match &base {
            None => (1, 0),
            Some(b) => (b.next_id(), b.next_str()),
        };

        // One pass over the type section. At most one entry per 12 bytes of section,
        // so the capacity is bounded by the blob's size, not by any count it claims.
        let mut offsets = Vec::with_capacity(header.type_len as usize / TYPE_RECORD_LEN);
        let mut off = type_start;
        while off < type_end {
            if type_end - off < TYPE_RECORD_LEN {
                return Err(malformed(off, "truncated type record".into()));
            }
            let info = read_u32(bytes, off + 4, header.endian)
                .ok_or_else(|| malformed(off, "truncated type record".into()))?;
            let (kind, _, vlen) = RawType::decode_info(info);
            let kind = BtfKind::from_raw(kind).ok_or_else(|| {
                malformed(off, format!("unknown BTF kind {kind} for type id {}", first_id as usize + offsets.len()))
            })?;
            let len = TYPE_RECORD_LEN + kind.extra_len(vlen);
            if type_end - off < len {
                return Err(malformed(
                    off,
                    format!("{} with vlen {vlen} runs past the end of the type section", kind.name()),
                ));
            }
            let rec = u32::try_from(off).map_err(|_| malformed(off, "blob larger than 4 GiB".into()))?;
            offsets.push(rec);
            off += len;
        }
        if u64::from(first_id) + offsets.len() as u64 > u64::from(u32::MAX) {
            return Err(malformed(type_start, "too many types".into()));
        }
        let pointer_size = base.as_ref().map(|b| b.pointer_size).unwrap_or(8);
        let mut btf = Btf {
            source_name,
            data: Data::Whole(data),
            header,
            str_start,
            offsets: Offsets::All(offsets),
            base,
            first_id,
            first_str,
            pointer_size,
            indexes: Default::default(),
            rebuilt: Default::default(),
            index_cache: None,
            embedders: OnceLock::new(),
            sizes: OnceLock::new(),
            decoded: OnceLock::new(),
            type_names: Default::default(),
        };
        btf.pointer_size = btf.guess_pointer_size().unwrap_or(btf.pointer_size);
        Ok(btf)
    }

    /// Opens a standalone blob (vmlinux) read a page at a time from `pages`, with the
    /// [`Btf::layout`] a run that read it whole kept: no type record is read until asked
    /// for. `None` when `layout` is not a layout of this blob's type section (then read the
    /// blob whole); an error when the blob's header or string section is malformed, as
    /// [`Btf::parse`] says.
    pub fn open_paged(
        source_name: impl Into<String>,
        pages: Box<dyn BlobPages>,
        layout: &[u8],
    ) -> Result<Option<Btf>, ModelError> {
        let source_name = source_name.into();
        let data = Paged::new(pages);
        let total = data.len();
        let malformed = |offset: usize, what: String| ModelError::Malformed {
            source_name: source_name.clone(),
            offset: offset as u64,
            what,
        };
        let unreadable = |offset: usize| malformed(offset, paged::UNREADABLE.into());
        let head = data.page(0).ok_or_else(|| unreadable(0))?;
        let header = parse_header_of(head, total).map_err(|(off, what)| malformed(off, what))?;
        let hdr_len = header.hdr_len as usize;
        let type_start = hdr_len + header.type_off as usize;
        let types = type_start..type_start + header.type_len as usize;
        let str_start = hdr_len + header.str_off as usize;
        let str_end = str_start + header.str_len as usize;
        let Some(layout) = Layout::from_bytes(layout, types) else { return Ok(None) };
        if u64::from(1u32) + layout.count as u64 > u64::from(u32::MAX) {
            return Err(malformed(type_start, "too many types".into()));
        }
        let byte_at = |at: usize| {
            let mut b = [0u8];
            data.read_into(at, &mut b).map(|()| b[0]).ok_or_else(|| unreadable(at))
        };
        if str_end == str_start || byte_at(str_start)? != 0 {
            return Err(malformed(str_start, "string section does not start with NUL".into()));
        }
        if byte_at(str_end - 1)? != 0 {
            return Err(malformed(str_end - 1, "string section does not end with NUL".into()));
        }
        let groups = (0..layout.starts.len()).map(|_| OnceLock::new()).collect();
        let pointer_size = layout.pointer_size;
        Ok(Some(Btf {
            source_name,
            data: Data::Paged(data),
            header,
            str_start,
            offsets: Offsets::Sparse { layout, groups },
            base: None,
            first_id: 1,
            first_str: 0,
            pointer_size,
            indexes: Default::default(),
            rebuilt: Default::default(),
            index_cache: None,
            embedders: OnceLock::new(),
            sizes: OnceLock::new(),
            decoded: OnceLock::new(),
            type_names: Default::default(),
        }))
    }

    /// Where this blob's types start, to be kept for [`Btf::open_paged`] (a standalone
    /// blob only: `None` for a split one).
    pub fn layout(&self) -> Option<Vec<u8>> {
        if self.base.is_some() {
            return None;
        }
        let starts = match &self.offsets {
            Offsets::All(v) => v.iter().step_by(LAYOUT_GROUP).copied().collect(),
            Offsets::Sparse { layout, .. } => layout.starts.clone(),
        };
        let layout = Layout { count: self.own_type_count(), pointer_size: self.pointer_size, starts };
        Some(layout.to_bytes())
    }

    /// Whether this blob is read a page at a time ([`Btf::open_paged`]).
    pub fn is_paged(&self) -> bool {
        matches!(self.data, Data::Paged(_))
    }

    /// The name given at open time, used in every error.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// The length in bytes of this blob (without its base).
    pub fn len(&self) -> usize {
        match &self.data {
            Data::Whole(b) => (**b).as_ref().len(),
            Data::Paged(p) => p.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw bytes of this blob (without its base) when they are all in memory; `None`
    /// for a blob read by page ([`Btf::open_paged`]).
    pub fn bytes(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Whole(b) => Some((**b).as_ref()),
            Data::Paged(_) => None,
        }
    }

    /// `N` bytes at `off` of this blob; `None` past its end or when a page of a blob read
    /// by page cannot be had.
    #[inline]
    fn read_array<const N: usize>(&self, off: usize) -> Option<[u8; N]> {
        if let Some(b) = self.in_memory() {
            return b.get(off..off.checked_add(N)?)?.try_into().ok();
        }
        // Read by page, not (yet) read whole.
        let Data::Paged(p) = &self.data else { return None };
        let from = off % BLOB_PAGE;
        if from + N <= BLOB_PAGE {
            return p.page(off / BLOB_PAGE)?.get(from..from + N)?.try_into().ok();
        }
        let mut out = [0u8; N];
        p.read_into(off, &mut out)?;
        Some(out)
    }

    /// All of the blob's bytes, when they are in memory: read whole at open, or by page
    /// until the rest was read whole.
    #[inline]
    fn in_memory(&self) -> Option<&[u8]> {
        match &self.data {
            Data::Whole(b) => Some((**b).as_ref()),
            Data::Paged(p) => p.whole_bytes(),
        }
    }

    fn read_word(&self, off: usize) -> Option<u32> {
        self.read_array::<4>(off).map(|b| self.header.endian.u32(b))
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The base of a split BTF.
    pub fn base(&self) -> Option<&Arc<Btf>> {
        self.base.as_ref()
    }

    /// Types defined in this blob (a split blob does not count its base's).
    pub fn own_type_count(&self) -> usize {
        self.offsets.count()
    }

    /// The first type id of this blob: 1, or the base's next id for a split BTF.
    pub fn first_id(&self) -> BtfTypeId {
        BtfTypeId(self.first_id)
    }

    /// One past the last valid type id, counting the base.
    pub fn next_id(&self) -> u32 {
        // Fits: checked at open time.
        self.first_id + self.own_type_count() as u32
    }

    fn next_str(&self) -> u32 {
        self.first_str + self.header.str_len
    }

    /// Every type id this blob defines (not the base's), in order.
    pub fn own_ids(&self) -> impl Iterator<Item = BtfTypeId> + '_ {
        (self.first_id..self.next_id()).map(BtfTypeId)
    }

    fn malformed(&self, offset: usize, what: impl Into<String>) -> ModelError {
        ModelError::Malformed { source_name: self.source_name.clone(), offset: offset as u64, what: what.into() }
    }

    fn no_such(&self, id: BtfTypeId) -> ModelError {
        ModelError::NoSuchType { source_name: self.source_name.clone(), ty: TypeRef(u64::from(id.0)) }
    }

    pub(crate) fn too_deep(&self, id: BtfTypeId) -> ModelError {
        ModelError::TooDeep { source_name: self.source_name.clone(), ty: TypeRef(u64::from(id.0)) }
    }

    /// The blob that defines `id` (self or a base) and the record's offset in it.
    fn locate(&self, id: BtfTypeId) -> Result<(&Btf, usize), ModelError> {
        if id.0 < self.first_id {
            return match &self.base {
                Some(base) => base.locate(id),
                None => Err(self.no_such(id)),
            };
        }
        let idx = (id.0 - self.first_id) as usize;
        match &self.offsets {
            Offsets::All(v) => match v.get(idx) {
                Some(&off) => Ok((self, off as usize)),
                None => Err(self.no_such(id)),
            },
            Offsets::Sparse { layout, groups } => {
                if idx >= layout.count {
                    return Err(self.no_such(id));
                }
                let g = idx / LAYOUT_GROUP;
                let slot = &groups[g];
                let group = match slot.get() {
                    Some(group) => group,
                    None => {
                        let types = self.type_range();
                        // Read straight from the bytes once the blob is in memory: a group
                        // is LAYOUT_GROUP records, walked for the first type asked of it.
                        let walked = match self.in_memory() {
                            Some(b) => {
                                let endian = self.header.endian;
                                let word =
                                    |at: usize| Some(endian.u32(b.get(at..at.checked_add(4)?)?.try_into().ok()?));
                                paged::walk_group(word, layout, g, types)
                            }
                            None => paged::walk_group(|at| self.read_word(at), layout, g, types),
                        }
                        .map_err(|(off, what)| self.malformed(off, what))?;
                        slot.get_or_init(|| walked)
                    }
                };
                Ok((self, group[idx % LAYOUT_GROUP] as usize))
            }
        }
    }

    /// Absolute bounds of the type section.
    fn type_range(&self) -> std::ops::Range<usize> {
        let start = self.header.hdr_len as usize + self.header.type_off as usize;
        start..start + self.header.type_len as usize
    }

    /// Absolute bounds of the string section.
    fn str_range(&self) -> std::ops::Range<usize> {
        self.str_start..self.str_start + self.header.str_len as usize
    }

    /// The decoded `btf_type` record of a type. Id 0 (void) has none.
    pub fn raw(&self, id: BtfTypeId) -> Result<RawType, ModelError> {
        let (owner, off) = self.locate(id)?;
        // One look at the bytes for the whole record: this runs for every type a check
        // or an index touches.
        let Some(rec) = owner.read_array::<TYPE_RECORD_LEN>(off) else { return Err(owner.truncated(off)) };
        let word = |at: usize| owner.header.endian.u32([rec[at], rec[at + 1], rec[at + 2], rec[at + 3]]);
        let (kind, kind_flag, vlen) = RawType::decode_info(word(4));
        let Some(kind) = BtfKind::from_raw(kind) else { return Err(owner.unknown_kind(off, kind)) };
        Ok(RawType { id, kind, kind_flag, vlen, name_off: StrOffset(word(0)), size_or_type: word(8), offset: off })
    }

    #[cold]
    fn unreadable(&self, off: usize) -> ModelError {
        self.malformed(off, paged::UNREADABLE)
    }

    #[cold]
    fn truncated(&self, off: usize) -> ModelError {
        if matches!(self.data, Data::Paged(_)) {
            return self.unreadable(off);
        }
        self.malformed(off, "truncated type record")
    }

    #[cold]
    fn unknown_kind(&self, off: usize, kind: u32) -> ModelError {
        self.malformed(off, format!("unknown BTF kind {kind}"))
    }

    /// The `i`th u32 of the extra data after the record of `raw` (bounds checked at
    /// open time, checked again here so a bad caller gets an error, not a panic).
    pub fn extra_u32(&self, raw: &RawType, i: usize) -> Result<u32, ModelError> {
        let owner = self.locate(raw.id)?.0;
        let at = raw.offset + TYPE_RECORD_LEN + 4 * i;
        owner.read_word(at).ok_or_else(|| owner.truncated(at))
    }

    /// The first `n` u32s of the extra data after the record of `raw`, as bytes, read with
    /// one look at the blob (borrowed when they lie in memory or in one page); `None` when
    /// they cannot be read so (then [`Btf::extra_u32`] reads them one by one and says why).
    pub(crate) fn extra_words(&self, raw: &RawType, n: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        use std::borrow::Cow;
        let owner = self.locate(raw.id).ok()?.0;
        let at = raw.offset.checked_add(TYPE_RECORD_LEN)?;
        let end = at.checked_add(n.checked_mul(4)?)?;
        if let Some(b) = owner.in_memory() {
            return b.get(at..end).map(Cow::Borrowed);
        }
        let Data::Paged(p) = &owner.data else { return None };
        if at / BLOB_PAGE == (end.max(at + 1) - 1) / BLOB_PAGE {
            let from = at % BLOB_PAGE;
            return p.page(at / BLOB_PAGE)?.get(from..from + (end - at)).map(Cow::Borrowed);
        }
        // Bounded by the record's vlen (u16): at most 64 KiB words.
        let mut out = vec![0u8; end - at];
        p.read_into(at, &mut out)?;
        Some(Cow::Owned(out))
    }

    /// The NUL-terminated string at `off` of the combined (base + split) string section.
    pub fn string(&self, off: StrOffset) -> Result<&str, ModelError> {
        let bytes = self.string_bytes(off)?;
        std::str::from_utf8(bytes).map_err(|_| {
            let owner = if off.0 < self.first_str { self.base.as_deref().unwrap_or(self) } else { self };
            owner.malformed(owner.str_start + (off.0 - owner.first_str) as usize, "string is not UTF-8")
        })
    }

    /// [`Btf::string`] without the UTF-8 check, for hashing and comparing names.
    pub fn string_bytes(&self, off: StrOffset) -> Result<&[u8], ModelError> {
        if off.0 < self.first_str {
            return match &self.base {
                Some(base) => base.string_bytes(off),
                None => Err(self.malformed(self.str_start, format!("string offset {} out of range", off.0))),
            };
        }
        let local = (off.0 - self.first_str) as usize;
        let out_of_range = || self.malformed(self.str_start, format!("string offset {} out of range", off.0));
        if let Some(b) = self.in_memory() {
            let strs = b.get(self.str_range()).ok_or_else(out_of_range)?;
            let tail = strs.get(local..).ok_or_else(out_of_range)?;
            // The section ends with NUL (checked at open), so a terminator exists.
            return Ok(&tail[..memchr::memchr(0, tail).unwrap_or(tail.len())]);
        }
        // Read by page, not (yet) read whole.
        let Data::Paged(p) = &self.data else { return Err(out_of_range()) };
        let at = self.str_start.checked_add(local).ok_or_else(out_of_range)?;
        if at >= self.str_range().end {
            return Err(out_of_range());
        }
        p.string(at, self.str_range()).ok_or_else(|| self.unreadable(at))
    }

    /// The name of a type, `None` for anonymous types and void.
    pub fn name(&self, id: BtfTypeId) -> Result<Option<&str>, ModelError> {
        if id.0 == 0 {
            return Ok(None);
        }
        let raw = self.raw(id)?;
        let name = self.string(raw.name_off)?;
        Ok(if name.is_empty() { None } else { Some(name) })
    }

    /// How many types of each kind this blob defines, indexed by kind number - 1.
    pub fn kind_counts(&self) -> Result<[usize; 19], ModelError> {
        let mut counts = [0; 19];
        for id in self.own_ids() {
            counts[self.raw(id)?.kind as usize - 1] += 1;
        }
        Ok(counts)
    }

    /// Follows typedefs, qualifiers and type tags to the underlying type.
    pub fn skip_modifiers(&self, mut id: BtfTypeId) -> Result<BtfTypeId, ModelError> {
        for _ in 0..MAX_CHAIN {
            if id.0 == 0 {
                return Ok(id);
            }
            let raw = self.raw(id)?;
            match raw.kind {
                BtfKind::Typedef | BtfKind::Volatile | BtfKind::Const | BtfKind::Restrict | BtfKind::TypeTag => {
                    id = BtfTypeId(raw.size_or_type)
                }
                _ => return Ok(id),
            }
        }
        Err(self.too_deep(id))
    }

    /// Keeps this blob's name indexes in `store` under `key`, which must name the blob's
    /// contents (its checksum): a later run maps an index instead of reading every type
    /// record (60,000 functions in a kernel).
    pub fn with_index_cache(mut self, key: String, store: Arc<dyn IndexStore>) -> Btf {
        self.index_cache = Some((key, store));
        self
    }

    /// The name index of `ns` over this blob's own types: from the cache, else built
    /// (and then cached).
    pub(crate) fn index(&self, ns: Namespace) -> &NameIndex {
        self.indexes[ns as usize].get_or_init(|| {
            let ids = self.first_id..self.first_id.saturating_add(self.own_type_count() as u32);
            if let Some((f, store)) = self.index_file(ns) {
                let found = match store.paged() {
                    true => store.get_paged(&f).and_then(|p| NameIndex::from_pages(p, ids)),
                    false => store.get(&f).and_then(|b| NameIndex::from_bytes(b, ids)),
                };
                if let Some(index) = found {
                    return index;
                }
            }
            self.build_index(ns)
        })
    }

    /// Where the name index of `ns` is kept: `*.btfidx1` read whole, `*.btfidx2` read a
    /// piece at a time ([`IndexStore::paged`]).
    fn index_file(&self, ns: Namespace) -> Option<(String, &Arc<dyn IndexStore>)> {
        let (k, store) = self.index_cache.as_ref()?;
        let version = if store.paged() { 2 } else { 1 };
        Some((format!("{k}-{}.btfidx{version}", ns as usize), store))
    }

    /// The name index of `ns` built from the type records, and stored.
    fn build_index(&self, ns: Namespace) -> NameIndex {
        let index = NameIndex::build(self, ns);
        if let Some((f, store)) = self.index_file(ns) {
            match store.paged() {
                true => store.put_paged(&f, &index.to_bytes()),
                false => store.put(&f, &index.to_bytes()),
            }
        }
        index
    }

    /// Own ids of `ns` whose name hashes like `name`, in id order: from the index, or,
    /// when a stored index read a piece at a time cannot vouch for a piece, from one
    /// built now (and stored again).
    pub(crate) fn candidates(&self, ns: Namespace, name: &[u8]) -> Vec<BtfTypeId> {
        match self.index(ns).candidates(name) {
            Some(ids) => ids,
            None => self.rebuilt_index(ns).candidates(name).unwrap_or_default(),
        }
    }

    /// Every own id of `ns` (see [`Btf::candidates`]).
    pub(crate) fn index_ids(&self, ns: Namespace) -> Vec<BtfTypeId> {
        match self.index(ns).ids() {
            Some(ids) => ids,
            None => self.rebuilt_index(ns).ids().unwrap_or_default(),
        }
    }

    fn rebuilt_index(&self, ns: Namespace) -> &NameIndex {
        self.rebuilt[ns as usize].get_or_init(|| self.build_index(ns))
    }

    /// Where the sorted list of `type_names` of namespace `slot` is kept (only for a blob
    /// without a base: a split blob's list includes its base's).
    fn type_names_file(&self, slot: usize) -> Option<(String, &Arc<dyn IndexStore>)> {
        if self.base.is_some() {
            return None;
        }
        self.index_cache.as_ref().map(|(k, store)| (format!("{k}-{slot}.btfnames1"), store))
    }

    /// A stored `type_names` list (names separated by NUL, which no BTF string holds):
    /// `None` when absent, not UTF-8, or not strictly sorted (a damaged or foreign entry:
    /// the list is then made again from the type records).
    pub(crate) fn stored_type_names(&self, slot: usize) -> Option<fevlint_types::model::NameList> {
        let (file, store) = self.type_names_file(slot)?;
        let bytes = store.get(&file)?;
        let bytes = (*bytes).as_ref();
        if bytes.is_empty() {
            return Some(Default::default());
        }
        // NUL is one byte in UTF-8: the names are UTF-8 when the whole list is.
        let text = std::str::from_utf8(bytes).ok()?;
        // One name per NUL, plus the last: sized by the bytes read, not by a count in them.
        let count = memchr::memchr_iter(0, bytes).count() + 1;
        let mut names = fevlint_types::model::NameList::with_capacity(count, bytes.len());
        let mut last: Option<&str> = None;
        let mut start = 0;
        for end in memchr::memchr_iter(0, bytes).chain([bytes.len()]) {
            // NUL is ASCII: `start` and `end` are char boundaries.
            let name = text.get(start..end)?;
            if last.is_some_and(|last| last >= name) {
                return None;
            }
            last = Some(name);
            names.push(name);
            start = end + 1;
        }
        Some(names)
    }

    /// Keeps a `type_names` list for later runs (see [`Btf::stored_type_names`]).
    pub(crate) fn store_type_names(&self, slot: usize, names: &[String]) {
        let Some((file, store)) = self.type_names_file(slot) else { return };
        if names.iter().any(String::is_empty) {
            return; // would not read back apart from an empty list
        }
        store.put(&file, names.join("\0").as_bytes());
    }

    /// This blob's own named types (not its base's) whose essential name
    /// ([`essential_name`]) hashes like `name`'s, in id order: libbpf's CO-RE candidates
    /// for a local type called `name`, and rare collisions, which callers filter by
    /// comparing names. The index is built on first use (or read from the index cache).
    pub fn essential_candidates(&self, name: &[u8]) -> impl Iterator<Item = BtfTypeId> + '_ {
        self.candidates(Namespace::Essential, essential_name(name)).into_iter()
    }

    /// The records of the types in one namespace with that name, in id order (base
    /// first): read to compare their names, and what the caller decodes next.
    fn lookup_records(&self, ns: Namespace, name: &str) -> Result<Vec<RawType>, ModelError> {
        let mut hits = match &self.base {
            Some(base) => base.lookup_records(ns, name)?,
            None => Vec::new(),
        };
        for id in self.candidates(ns, name.as_bytes()) {
            let raw = self.raw(id)?;
            if self.string_bytes(raw.name_off)? == name.as_bytes() {
                hits.push(raw);
            }
        }
        Ok(hits)
    }

    /// libbpf's rule: the size of the first `long`-like integer; pointers themselves do
    /// not carry a size in BTF.
    fn guess_pointer_size(&self) -> Option<u32> {
        const LONGS: [&str; 5] = ["long", "long int", "unsigned long", "long unsigned int", "unsigned long int"];
        for id in self.own_ids() {
            let raw = self.raw(id).ok()?;
            if raw.kind != BtfKind::Int {
                continue;
            }
            let name = self.string(raw.name_off).ok()?;
            if LONGS.contains(&name) && matches!(raw.size_or_type, 4 | 8) {
                return Some(raw.size_or_type);
            }
        }
        None
    }
}

/// Validates `struct btf_header` and the section bounds; errors carry (offset, what).
fn parse_header(bytes: &[u8]) -> Result<Header, (usize, String)> {
    parse_header_of(bytes, bytes.len())
}

/// [`parse_header`] of a blob `total` bytes long whose first bytes are `bytes` (at least
/// its header, when it has one).
fn parse_header_of(bytes: &[u8], total: usize) -> Result<Header, (usize, String)> {
    if total < HEADER_LEN || bytes.len() < HEADER_LEN {
        return Err((0, format!("{} bytes is too short for a BTF header", bytes.len())));
    }
    let endian = match [bytes[0], bytes[1]] {
        [0x9f, 0xeb] => Endian::Little,
        [0xeb, 0x9f] => Endian::Big,
        m => return Err((0, format!("bad magic {:#06x}, expected {BTF_MAGIC:#06x}", u16::from_le_bytes(m)))),
    };
    let version = bytes[2];
    if version != 1 {
        return Err((2, format!("unsupported BTF version {version}")));
    }
    let flags = bytes[3];
    let word = |at: usize| read_u32(bytes, at, endian).ok_or((at, "truncated header".to_string()));
    let header = Header {
        endian,
        version,
        flags,
        hdr_len: word(4)?,
        type_off: word(8)?,
        type_len: word(12)?,
        str_off: word(16)?,
        str_len: word(20)?,
    };
    let hdr_len = header.hdr_len as usize;
    if hdr_len < HEADER_LEN || hdr_len > total {
        return Err((4, format!("header length {hdr_len} outside 24..={total}")));
    }
    if hdr_len > bytes.len() {
        return Err((4, format!("header length {hdr_len} longer than the first page")));
    }
    // A newer, longer header is acceptable only if the fields we do not know are zero.
    if let Some(pos) = bytes[HEADER_LEN..hdr_len].iter().position(|&b| b != 0) {
        return Err((HEADER_LEN + pos, "unknown non-zero header field".into()));
    }
    let body = (total - hdr_len) as u64;
    let (t_off, t_len) = (u64::from(header.type_off), u64::from(header.type_len));
    let (s_off, s_len) = (u64::from(header.str_off), u64::from(header.str_len));
    if t_off % 4 != 0 {
        return Err((8, format!("type section offset {t_off} is not 4-byte aligned")));
    }
    if t_off + t_len > body {
        return Err((12, format!("type section {t_off}+{t_len} runs past the end ({body} bytes after the header)")));
    }
    if s_off + s_len > body {
        return Err((20, format!("string section {s_off}+{s_len} runs past the end ({body} bytes after the header)")));
    }
    if t_off < s_off + s_len && s_off < t_off + t_len {
        return Err((16, "type and string sections overlap".into()));
    }
    Ok(header)
}
