//! Name indexes over one BTF blob, built lazily, one per namespace.
//!
//! An index is a sorted `(hash(name), id)` list: no string is copied, a lookup is a
//! binary search plus a name comparison per candidate (hash collisions are filtered
//! by the caller).

use fevlint_types::hash_index::{hash_name, HashIndex};

use crate::{Btf, BtfKind, BtfTypeId, IndexBytes, IndexPages};

/// The namespaces the reader can look names up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Namespace {
    /// STRUCT, and FWD without kind_flag.
    Struct = 0,
    /// UNION, and FWD with kind_flag.
    Union = 1,
    /// ENUM and ENUM64.
    Enum = 2,
    /// TYPEDEF, INT, FLOAT.
    Ordinary = 3,
    /// FUNC.
    Func = 4,
    /// Every named type, keyed by its essential name (libbpf's CO-RE candidates:
    /// `task_struct___old` is under `task_struct`).
    Essential = 5,
}

impl Namespace {
    pub const COUNT: usize = 6;

    fn contains(self, kind: BtfKind, kind_flag: bool) -> bool {
        match self {
            Namespace::Essential => true,
            Namespace::Struct => kind == BtfKind::Struct || (kind == BtfKind::Fwd && !kind_flag),
            Namespace::Union => kind == BtfKind::Union || (kind == BtfKind::Fwd && kind_flag),
            Namespace::Enum => matches!(kind, BtfKind::Enum | BtfKind::Enum64),
            Namespace::Ordinary => matches!(kind, BtfKind::Typedef | BtfKind::Int | BtfKind::Float),
            Namespace::Func => kind == BtfKind::Func,
        }
    }
}

/// The named types of one namespace. Types with unreadable names are left out (their
/// errors surface when the type itself is read).
pub(crate) enum NameIndex {
    Built(HashIndex),
    /// [`NameIndex::to_bytes`] as the cache maps it, read in place: 12 bytes per entry,
    /// checked when mapped ([`NameIndex::from_bytes`]).
    Mapped(IndexBytes),
    /// [`NameIndex::to_bytes`] as the store reads it a piece at a time (each piece
    /// checked by the store, [`crate::IndexStore::get_paged`]): a lookup reads the entries
    /// its binary search touches, not the whole index. Every id is checked to lie in the
    /// blob (`ids`) as it is read; a piece that cannot be had fails the lookup.
    Paged(Paged),
}

/// A stored index read a piece at a time ([`NameIndex::Paged`]), the store keeping the
/// pieces it read: a lookup reads the entries its binary search touches, a script's worth
/// of lookups each piece once (1,000 functions touch all of a kernel's 500-680 KB function
/// index; read whole after 64 lookups it was read once by piece and once whole). Read
/// whole only for every id ([`NameIndex::ids`]).
pub(crate) struct Paged {
    pages: IndexPages,
    ids: std::ops::Range<u32>,
    /// The whole index, once read (`None`: the store could not vouch for all of it).
    whole: std::sync::OnceLock<Option<Vec<u8>>>,
}

impl Paged {
    fn entry(&self, i: usize) -> Option<(u64, u32)> {
        let at = i.checked_mul(ENTRY_BYTES)?;
        let end = at.checked_add(ENTRY_BYTES)?;
        let e = match self.whole.get() {
            Some(whole) => mapped_entry(whole.as_deref()?.get(at..end)?, 0),
            None => mapped_entry(self.pages.read(at..end)?.get(..ENTRY_BYTES)?, 0),
        };
        self.ids.contains(&e.1).then_some(e)
    }

    fn read_whole(&self) {
        self.whole.get_or_init(|| self.pages.read(0..self.pages.len()).map(std::borrow::Cow::into_owned));
    }
}

impl std::fmt::Debug for NameIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NameIndex::Built(h) => f.debug_tuple("Built").field(h).finish(),
            NameIndex::Mapped(b) => f.debug_tuple("Mapped").field(&(**b).as_ref().len()).finish(),
            NameIndex::Paged(p) => f.debug_tuple("Paged").field(&p.pages.len()).finish(),
        }
    }
}

impl NameIndex {
    /// Indexes the named types of `btf`'s own blob (not its base) that fall in `ns`.
    pub fn build(btf: &Btf, ns: Namespace) -> NameIndex {
        NameIndex::Built(HashIndex::new(btf.own_ids().filter_map(|id| {
            let raw = btf.raw(id).ok().filter(|r| ns.contains(r.kind, r.kind_flag))?;
            let name = btf.string_bytes(raw.name_off).ok().filter(|n| !n.is_empty())?;
            let name = if ns == Namespace::Essential { essential_name(name) } else { name };
            Some((name, id.0))
        })))
    }

    fn len(&self) -> usize {
        match self {
            NameIndex::Built(h) => h.entries().len(),
            NameIndex::Mapped(b) => (**b).as_ref().len() / ENTRY_BYTES,
            NameIndex::Paged(p) => p.pages.len() / ENTRY_BYTES,
        }
    }

    /// Entry `i`; `None` when a piece of a paged index cannot be had or names an id
    /// outside the blob.
    fn entry(&self, i: usize) -> Option<(u64, u32)> {
        match self {
            NameIndex::Built(h) => h.entries().get(i).copied(),
            NameIndex::Mapped(b) => Some(mapped_entry((**b).as_ref(), i)),
            NameIndex::Paged(p) => p.entry(i),
        }
    }

    /// Ids whose name hashes like `name`, in id order; `None` when a paged index fails.
    pub fn candidates(&self, name: &[u8]) -> Option<Vec<BtfTypeId>> {
        let h = hash_name(name);
        // Straight from the entries when they are in memory (a lookup per definition of
        // a script, per kernel): the same search as below, without a dispatch per entry.
        match self {
            NameIndex::Built(index) => {
                let e = index.entries();
                let lo = e.partition_point(|x| x.0 < h);
                return Some(e[lo..].iter().take_while(|x| x.0 == h).map(|x| BtfTypeId(x.1)).collect());
            }
            NameIndex::Mapped(b) => return search((**b).as_ref(), self.len(), h, None),
            NameIndex::Paged(p) => {
                if let Some(Some(whole)) = p.whole.get() {
                    return search(whole, self.len(), h, Some(&p.ids));
                }
            }
        }
        // The first entry whose hash is not below `h`.
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.entry(mid)?.0 < h {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        let mut out = Vec::new();
        for i in lo..self.len() {
            let e = self.entry(i)?;
            if e.0 != h {
                break;
            }
            out.push(BtfTypeId(e.1));
        }
        Some(out)
    }

    /// Every id of the index; `None` when a paged index fails.
    pub fn ids(&self) -> Option<Vec<BtfTypeId>> {
        if let NameIndex::Paged(p) = self {
            p.read_whole();
        }
        (0..self.len()).map(|i| self.entry(i).map(|e| BtfTypeId(e.1))).collect()
    }

    /// The entries as bytes (12 each, little-endian), for the cache.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len() * ENTRY_BYTES);
        for (h, id) in (0..self.len()).map_while(|i| self.entry(i)) {
            out.extend_from_slice(&h.to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
        }
        out
    }

    /// An index [`NameIndex::to_bytes`] wrote for a blob whose own ids are `ids`, read
    /// in place: `None` unless every id is in `ids` and the entries are in order (then
    /// lookups behave as on a built index; callers compare names anyway).
    pub fn from_bytes(owner: IndexBytes, ids: std::ops::Range<u32>) -> Option<NameIndex> {
        let bytes: &[u8] = (*owner).as_ref();
        if !bytes.len().is_multiple_of(ENTRY_BYTES) {
            return None;
        }
        let mut last = None;
        for i in 0..bytes.len() / ENTRY_BYTES {
            let e = mapped_entry(bytes, i);
            if !ids.contains(&e.1) || last.is_some_and(|l| l >= e) {
                return None;
            }
            last = Some(e);
        }
        Some(NameIndex::Mapped(owner))
    }

    /// An index [`NameIndex::to_bytes`] wrote for a blob whose own ids are `ids`, read a
    /// piece at a time: `None` unless it is a whole number of entries. Its order and ids
    /// are the store's to keep (it checks every piece it hands out against the checksum
    /// it stored with it) and each id is checked as it is read.
    pub fn from_pages(pages: IndexPages, ids: std::ops::Range<u32>) -> Option<NameIndex> {
        let paged = Paged { pages, ids, whole: Default::default() };
        paged.pages.len().is_multiple_of(ENTRY_BYTES).then_some(NameIndex::Paged(paged))
    }
}

const ENTRY_BYTES: usize = 12;

/// [`NameIndex::candidates`] over `len` stored entries in `b`, each id checked to lie in
/// `ids` when given: `None` when an entry it reads is missing or names another id.
fn search(b: &[u8], len: usize, h: u64, ids: Option<&std::ops::Range<u32>>) -> Option<Vec<BtfTypeId>> {
    let entry = |i: usize| -> Option<(u64, u32)> {
        let at = i.checked_mul(ENTRY_BYTES)?;
        let e = mapped_entry(b.get(at..at.checked_add(ENTRY_BYTES)?)?, 0);
        ids.is_none_or(|ids| ids.contains(&e.1)).then_some(e)
    };
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if entry(mid)?.0 < h {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    let mut out = Vec::new();
    for i in lo..len {
        let e = entry(i)?;
        if e.0 != h {
            break;
        }
        out.push(BtfTypeId(e.1));
    }
    Some(out)
}

/// libbpf's `bpf_core_essential_name_len`: the length of `name` without its flavour, the
/// part from the last `___` separator (three underscores with no underscore on either
/// side) on.
pub fn essential_name_len(name: &[u8]) -> usize {
    let n = name.len();
    if n >= 5 {
        let mut i = n - 5;
        loop {
            let s = &name[i..];
            if s[0] != b'_' && s[1] == b'_' && s[2] == b'_' && s[3] == b'_' && s[4] != b'_' {
                return i + 1;
            }
            if i == 0 {
                break;
            }
            i -= 1;
        }
    }
    n
}

/// `name` without its flavour ([`essential_name_len`]).
pub fn essential_name(name: &[u8]) -> &[u8] {
    &name[..essential_name_len(name)]
}

/// Entry `i` of a mapped index (in bounds: `i < len / 12`).
fn mapped_entry(b: &[u8], i: usize) -> (u64, u32) {
    let e = &b[i * ENTRY_BYTES..(i + 1) * ENTRY_BYTES];
    let h = u64::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]);
    (h, u32::from_le_bytes([e[8], e[9], e[10], e[11]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapped(bytes: Vec<u8>, ids: std::ops::Range<u32>) -> Option<NameIndex> {
        NameIndex::from_bytes(Box::new(bytes), ids)
    }

    #[test]
    fn a_mapped_index_answers_as_the_built_one_and_bad_bytes_are_refused() {
        let names: Vec<String> = (0..500).map(|i| format!("name_{}", i % 180)).collect();
        let built =
            NameIndex::Built(HashIndex::new(names.iter().enumerate().map(|(i, n)| (n.as_bytes(), i as u32 + 1))));
        let bytes = built.to_bytes();
        let index = mapped(bytes.clone(), 1..501).expect("valid bytes map");
        assert!(matches!(index, NameIndex::Mapped(_)));
        assert_eq!(index.ids(), built.ids());
        for n in names.iter().take(200).chain([&"absent".to_owned()]) {
            let n = n.as_bytes();
            assert_eq!(index.candidates(n), built.candidates(n), "{n:?}");
        }
        assert!(mapped(bytes.clone(), 1..400).is_none(), "an id outside the blob");
        assert!(mapped(bytes[..bytes.len() - 5].to_vec(), 1..501).is_none(), "a cut entry");
        let mut swapped = bytes.clone();
        let (a, b) = swapped.split_at_mut(ENTRY_BYTES);
        a.swap_with_slice(&mut b[..ENTRY_BYTES]);
        assert!(mapped(swapped, 1..501).is_none(), "entries out of order");
        assert!(mapped(Vec::new(), 1..501).is_some_and(|i| i.ids() == Some(Vec::new())), "an empty index is one");
    }
}
