//! A blob's bytes read a page at a time from a store the caller gives ([`BlobPages`]: a
//! kernel's cached BTF), each page kept once read, and the where-each-type-starts table
//! ([`Layout`]) that lets a blob be opened without walking every type record.
//!
//! A lookup of a few dozen types reads the few dozen pages they lie in, not the 5 MB of a
//! kernel's BTF. Pages are handed out as `&[u8]` that live as long as the blob: each page
//! slot is set once (`OnceLock`, no lock on the read path) and never freed.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::raw::{BtfKind, RawType, TYPE_RECORD_LEN};

/// The unit a [`BlobPages`] store reads and checks.
pub const BLOB_PAGE: usize = 4096;

/// Owner of a whole blob's bytes, read again when a page cannot be had.
pub type WholeBytes = Box<dyn AsRef<[u8]> + Send + Sync>;

/// Where the pages of a blob are read from (a cache file the caller checks page by page).
/// The reader does no IO of its own.
pub trait BlobPages: Send + Sync {
    /// The blob's length in bytes.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Page `i`: bytes `i * BLOB_PAGE ..` up to [`BLOB_PAGE`] of them (the last page
    /// shorter); `None` when the store cannot vouch for them (a page that fails its
    /// checksum, a file cut short or rewritten under the reader).
    fn page(&self, i: usize) -> Option<Vec<u8>>;
    /// Pages `range` in one read, each checked as [`BlobPages::page`] checks it: their bytes
    /// one after the other (the last page of the blob shorter), or `None` when any cannot
    /// be had. By default, page by page.
    fn pages(&self, range: std::ops::Range<usize>) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        for i in range {
            out.extend_from_slice(&self.page(i)?);
        }
        Some(out)
    }
    /// The whole blob, read again from where it came from, once a page could not be had:
    /// the same bytes (the store checks them), or `None` when they cannot be read.
    fn whole(&self) -> Option<WholeBytes>;
    /// How many pages are read one at a time before the pages not read yet are read in
    /// runs of up to [`RUN`] ([`BlobPages::pages`]); by default half of the blob's pages
    /// ([`runs_after`]).
    fn runs_after(&self) -> usize {
        runs_after(self.len())
    }
}

/// A blob read by page ([`BlobPages`]), each page read once and kept.
pub(crate) struct Paged {
    src: Box<dyn BlobPages>,
    len: usize,
    /// Invariant: a set slot holds exactly page `i`'s bytes (its length checked).
    pages: Box<[OnceLock<Box<[u8]>>]>,
    /// The string that runs past the end of page `i`, from the byte after the last NUL
    /// of page `i` (or the string section's start) through its NUL: a `&[u8]` for a name
    /// split by a page boundary.
    crossing: Box<[OnceLock<Box<[u8]>>]>,
    /// The whole blob, once a page could not be read (`None`: it could not be read either).
    whole: OnceLock<Option<WholeBytes>>,
    /// Pages read one at a time so far.
    reads: AtomicUsize,
    /// [`BlobPages::runs_after`].
    runs_after: usize,
}

/// Pages read one at a time before the pages not read yet are read in runs of up to
/// [`RUN`] (each page checked, none read twice): half of a blob of `len` bytes. A run
/// that asks about a few dozen types reads a few dozen pages (a BPF object's relocations
/// on a kernel, 20-40); one that asks about 1,000 functions' prototypes touches 27-52% of
/// a kernel's pages, scattered (read in runs of 16 they would be 70-100% of the blob, and
/// read whole after 128 pages, as before, 100% plus the 128: 21 MB for four kernels where
/// single pages read 7.8 MB); one that walks every type reads half the pages singly and
/// the rest a run at a time.
pub fn runs_after(len: usize) -> usize {
    len.div_ceil(BLOB_PAGE) / 2
}

/// The most pages read at once after [`runs_after`]: 64 KiB.
pub const RUN: usize = 16;

impl Paged {
    pub(crate) fn new(src: Box<dyn BlobPages>) -> Paged {
        let (len, runs_after) = (src.len(), src.runs_after());
        // Sized by the store's own length (a file on disk), one slot per 4 KiB.
        let n = len.div_ceil(BLOB_PAGE);
        Paged {
            src,
            len,
            pages: (0..n).map(|_| OnceLock::new()).collect(),
            crossing: (0..n).map(|_| OnceLock::new()).collect(),
            whole: OnceLock::new(),
            reads: AtomicUsize::new(0),
            runs_after,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The whole blob, once it was read whole (after a page that could not be read): then
    /// every read is served from it, as for a blob read whole at open.
    #[inline]
    pub(crate) fn whole_bytes(&self) -> Option<&[u8]> {
        self.whole.get()?.as_ref().map(|w| (**w).as_ref())
    }

    /// Page `i`; `None` when neither the store nor the whole blob read again has it.
    pub(crate) fn page(&self, i: usize) -> Option<&[u8]> {
        let slot = self.pages.get(i)?;
        if let Some(p) = slot.get() {
            return Some(p);
        }
        let range = i * BLOB_PAGE..((i + 1) * BLOB_PAGE).min(self.len);
        if let Some(Some(w)) = self.whole.get() {
            return (**w).as_ref().get(range);
        }
        let read = if self.reads.fetch_add(1, Ordering::Relaxed) < self.runs_after {
            self.src.page(i)
        } else {
            // A page of the run the store cannot vouch for: page `i` alone, as before.
            self.run(i).or_else(|| self.src.page(i))
        };
        match read {
            Some(p) if p.len() == range.len() => Some(slot.get_or_init(|| p.into_boxed_slice())),
            _ => {
                let whole = self.whole.get_or_init(|| self.src.whole().filter(|w| (**w).as_ref().len() == self.len));
                (**whole.as_ref()?).as_ref().get(range)
            }
        }
    }

    /// Page `i` (not held) and the pages after it up to [`RUN`] of them, stopping before
    /// the first one held, in one read: the pages after `i` are kept, page `i` returned.
    /// `None` when the store cannot vouch for them.
    fn run(&self, i: usize) -> Option<Vec<u8>> {
        let limit = (i + RUN).min(self.pages.len());
        let end = (i + 1..limit).find(|&j| self.pages[j].get().is_some()).unwrap_or(limit);
        let bytes = self.src.pages(i..end)?;
        if bytes.len() != (end * BLOB_PAGE).min(self.len) - i * BLOB_PAGE {
            return None;
        }
        let mut chunks = bytes.chunks(BLOB_PAGE);
        let first = chunks.next()?.to_vec();
        for (j, page) in (i + 1..end).zip(chunks) {
            self.pages[j].get_or_init(|| page.into());
        }
        Some(first)
    }

    /// Copies the bytes at `at` into `out`; `None` past the end or when a page cannot be had.
    pub(crate) fn read_into(&self, mut at: usize, out: &mut [u8]) -> Option<()> {
        let mut done = 0;
        while done < out.len() {
            let page = self.page(at / BLOB_PAGE)?;
            let from = at % BLOB_PAGE;
            let n = (page.len().checked_sub(from)?).min(out.len() - done);
            if n == 0 {
                return None;
            }
            out[done..done + n].copy_from_slice(&page[from..from + n]);
            done += n;
            at += n;
        }
        Some(())
    }

    /// The NUL-terminated string at absolute offset `at` of a string section `strs`
    /// (absolute bounds; the section ends with NUL, checked at open), without its NUL.
    pub(crate) fn string(&self, at: usize, strs: std::ops::Range<usize>) -> Option<&[u8]> {
        if at < strs.start || at >= strs.end {
            return None;
        }
        let i = at / BLOB_PAGE;
        let base = i * BLOB_PAGE;
        let page = self.page(i)?;
        let end = page.len().min(strs.end - base);
        let tail = page.get(at - base..end)?;
        if let Some(n) = memchr::memchr(0, tail) {
            return Some(&tail[..n]);
        }
        // The string runs into the next page: the one string crossing page `i`'s end.
        let start = match memchr::memrchr(0, page.get(..at - base)?) {
            Some(n) => base + n + 1,
            None => base.max(strs.start),
        };
        let crossing = match self.crossing.get(i)?.get() {
            Some(c) => c,
            None => {
                let mut s = page.get(start - base..end)?.to_vec();
                let mut j = i + 1;
                loop {
                    let next_base = j * BLOB_PAGE;
                    if next_base >= strs.end {
                        return None;
                    }
                    let next = self.page(j)?;
                    let next = next.get(..next.len().min(strs.end - next_base))?;
                    match memchr::memchr(0, next) {
                        Some(n) => {
                            s.extend_from_slice(&next[..n]);
                            break;
                        }
                        None => s.extend_from_slice(next),
                    }
                    j += 1;
                }
                self.crossing[i].get_or_init(|| s.into_boxed_slice())
            }
        };
        crossing.get(at - start..)
    }
}

/// Why bytes of a blob read by page are missing.
pub(crate) const UNREADABLE: &str = "the bytes here could not be read again (the cached file changed or was cut short)";

/// Types per group of a [`Layout`]: where every 16th type starts is stored; the others
/// are found by walking at most 15 records from there. A check of 1,000 definitions
/// touches a few hundred groups of each kernel's ~150,000 types: smaller groups walk
/// fewer records that are never asked for (the stored layout is 4 bytes per 16 types).
pub const LAYOUT_GROUP: usize = 16;
/// `01` was the layout with groups of 64: refused, and written again by a run that reads
/// the blob whole.
const LAYOUT_MAGIC: &[u8; 8] = b"BTFLAY02";

/// Where a blob's types start, kept so that a later run need not walk every record: the
/// count of types, the pointer size, and the offset of every [`LAYOUT_GROUP`]th type.
pub(crate) struct Layout {
    pub(crate) count: usize,
    pub(crate) pointer_size: u32,
    pub(crate) starts: Vec<u32>,
}

impl Layout {
    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(20 + 4 * self.starts.len());
        out.extend_from_slice(LAYOUT_MAGIC);
        out.extend_from_slice(&(self.count as u32).to_le_bytes());
        out.extend_from_slice(&self.pointer_size.to_le_bytes());
        for s in &self.starts {
            out.extend_from_slice(&s.to_le_bytes());
        }
        out
    }

    /// A stored layout for a type section `types` (absolute bounds); `None` unless it is
    /// one: a group start for every [`LAYOUT_GROUP`] types, each inside the section and after the
    /// one before, the first at the section's start.
    pub(crate) fn from_bytes(b: &[u8], types: std::ops::Range<usize>) -> Option<Layout> {
        let rest = b.strip_prefix(LAYOUT_MAGIC)?;
        let word = |i: usize| rest.get(4 * i..4 * i + 4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        let count = word(0)? as usize;
        let pointer_size = word(1)?;
        let words = rest.len() / 4;
        if rest.len() % 4 != 0 || words - 2 != count.div_ceil(LAYOUT_GROUP) || !matches!(pointer_size, 4 | 8) {
            return None;
        }
        // At least 12 bytes a type: a count the section cannot hold is refused.
        if count > types.len() / TYPE_RECORD_LEN {
            return None;
        }
        let starts: Vec<u32> = (2..words).map(word).collect::<Option<_>>()?;
        let ok_first = starts.first().is_none_or(|&s| s as usize == types.start);
        let ordered = starts.windows(2).all(|w| w[0] < w[1]);
        let inside = starts.iter().all(|&s| (s as usize) < types.end);
        (ok_first && ordered && inside).then_some(Layout { count, pointer_size, starts })
    }
}

/// The offsets of the types in group `g` of a layout, found by walking from its start:
/// `Err((offset, what))` when a record is not one or the walk does not end where the next
/// group (or the section) starts.
pub(crate) fn walk_group(
    read: impl Fn(usize) -> Option<u32>,
    layout: &Layout,
    g: usize,
    types: std::ops::Range<usize>,
) -> Result<Box<[u32]>, (usize, String)> {
    let n = LAYOUT_GROUP.min(layout.count - g * LAYOUT_GROUP);
    let mut off = layout.starts[g] as usize;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        if types.end - off < TYPE_RECORD_LEN {
            return Err((off, "truncated type record".into()));
        }
        let info = read(off + 4).ok_or_else(|| (off, UNREADABLE.to_string()))?;
        let (kind, _, vlen) = RawType::decode_info(info);
        let kind = BtfKind::from_raw(kind).ok_or_else(|| (off, format!("unknown BTF kind {kind}")))?;
        let len = TYPE_RECORD_LEN + kind.extra_len(vlen);
        if types.end - off < len {
            return Err((off, format!("{} with vlen {vlen} runs past the end of the type section", kind.name())));
        }
        out.push(off as u32);
        off += len;
    }
    let next = layout.starts.get(g + 1).map_or(types.end, |&s| s as usize);
    if off != next {
        return Err((off, format!("type group {g} ends at {off}, not at {next} where the next starts")));
    }
    Ok(out.into_boxed_slice())
}
