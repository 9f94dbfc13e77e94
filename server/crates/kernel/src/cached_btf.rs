//! A kernel's BTF read by page from its cached decompression: a run that asks about a few
//! dozen types (a BPF object's relocations, `kernel type`) reads the pages they lie in,
//! not the whole 5 MB, and never walks every type record.
//!
//! What makes it possible is kept beside the cache entry, as a derived entry named after
//! the BTF's CRC-32 and length (`*.btfpages1`, written by a run that read the BTF whole):
//! the CRC-32 of each 4 KiB page of the cached file (each page read is refused unless it
//! matches) and where every 16th type starts ([`Btf::layout`]). A page that cannot be read
//! or fails its checksum (the cache file cut short or rewritten under the reader) makes
//! the reader read the whole BTF again, from the cache entry checked whole or else from
//! the source file, and check it against the CRC-32 it was opened with.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fevlint_btf::{BlobPages, Btf, WholeBytes};
use fevlint_load::blob::Blob;
use fevlint_load::cache::{page_crcs, Cache, PagedEntry, PAGE};
use fevlint_load::decompress::{self, Content, Limits, Origin};
use fevlint_load::BlobSlice;
use fevlint_types::model::ModelError;

const _: () = assert!(PAGE == fevlint_btf::BLOB_PAGE, "the cache checks the pages the reader reads");

/// A kernel's raw BTF in the cache, opened to be read by page ([`CachedBtf::open`]).
#[derive(Clone, Debug)]
pub struct CachedBtf {
    pages: Arc<PagedEntry>,
    /// The stored [`Btf::layout`].
    layout: BlobSlice,
    len: u64,
    crc: u32,
    /// The file the BTF was decompressed from, read again when a page cannot be.
    source: PathBuf,
    cache: Cache,
    limits: Limits,
}

/// The derived entry that lets the BTF of CRC-32 `crc` and length `len` be read by page.
fn entry_name(crc: u32, len: u64) -> String {
    format!("{crc:08x}{len:08x}.btfpages1")
}

impl CachedBtf {
    /// The cached decompression of the BTF file `path`, to be read by page, when the cache
    /// holds it and a run that read it whole left its page checksums and layout; `None`
    /// otherwise (read it whole then). Reads the entry's header and the small derived
    /// entry, not the BTF.
    pub fn open(path: &Path, cache: &Cache, limits: &Limits) -> Option<CachedBtf> {
        let (_, len, crc) = cache.peek(path)?;
        let stored = cache.get_derived(&entry_name(crc, len))?;
        let n = u32::from_le_bytes(stored.get(..4)?.try_into().ok()?) as usize;
        let table_end = n.checked_mul(4)?.checked_add(4)?;
        let crcs = stored.get(4..table_end)?.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let pages = Arc::new(cache.open_pages(path, len, crcs.collect())?);
        let layout = stored.blob().slice(stored.range().start + table_end..stored.range().end)?;
        Some(CachedBtf { pages, layout, len, crc, source: path.to_owned(), cache: cache.clone(), limits: *limits })
    }

    /// The BTF's length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The CRC-32 of the BTF's bytes (the cache entry's header says it).
    pub fn crc(&self) -> u32 {
        self.crc
    }

    /// The reader over these pages, named `source_name` in errors: `Ok(None)` when the
    /// stored layout does not fit the BTF (read it whole then).
    pub fn to_btf(&self, source_name: String) -> Result<Option<Btf>, ModelError> {
        Btf::open_paged(source_name, Box::new(self.clone()), &self.layout)
    }

    /// The whole BTF, checked against the CRC-32 it was opened with: the cache entry read
    /// whole, else the source decompressed again (and cached again).
    pub fn read_whole(&self) -> Option<BlobSlice> {
        if let Some((_, blob, crc)) = self.cache.get_checked(&self.source) {
            if crc == self.crc && blob.len() as u64 == self.len {
                return Some(blob.whole());
            }
        }
        let raw = Blob::read_in(&self.source, self.cache.dir()).ok()?;
        let (codec, out) =
            decompress::decompress_auto_as(&raw, Content::KernelImage, &self.limits, Origin::file(&self.source))
                .ok()??;
        if out.len() as u64 != self.len || crc32fast::hash(&out) != self.crc {
            return None;
        }
        self.cache.put(&self.source, codec, &out);
        Some(Blob::from_vec(out).whole())
    }
}

impl BlobPages for CachedBtf {
    fn len(&self) -> usize {
        self.pages.len()
    }

    fn page(&self, i: usize) -> Option<Vec<u8>> {
        self.pages.read_page(i)
    }

    fn pages(&self, range: std::ops::Range<usize>) -> Option<Vec<u8>> {
        self.pages.read_pages(range)
    }

    fn whole(&self) -> Option<WholeBytes> {
        self.read_whole().map(|b| Box::new(b) as WholeBytes)
    }
}

/// Keeps what [`CachedBtf::open`] needs for the BTF `bytes` (CRC-32 `crc`) of the file
/// `path`, read whole and parsed as `btf`, when the cache holds them as the decompression
/// of `path` (a run reads a cached BTF whole only when there was nothing usable to read
/// it by page: the entry is written again).
pub fn remember(cache: &Cache, path: &Path, crc: u32, bytes: &[u8], btf: &Btf) {
    if cache.peek(path).is_none_or(|(_, len, c)| len != bytes.len() as u64 || c != crc) {
        return;
    }
    let name = entry_name(crc, bytes.len() as u64);
    let Some(layout) = btf.layout() else { return };
    let crcs = page_crcs(bytes);
    let mut out = Vec::with_capacity(4 + 4 * crcs.len() + layout.len());
    out.extend_from_slice(&(crcs.len() as u32).to_le_bytes());
    out.extend(crcs.iter().flat_map(|c| c.to_le_bytes()));
    out.extend_from_slice(&layout);
    cache.put_derived(&name, &out);
}
