//! Name indexes over one BTF blob, built lazily, one per namespace.
//!
//! An index is a sorted `(hash(name), id)` list: no string is copied, a lookup is a
//! binary search plus a name comparison per candidate (hash collisions are filtered
//! by the caller).

use super::{Btf, BtfKind, BtfTypeId};

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
}

impl Namespace {
    pub const COUNT: usize = 5;

    fn contains(self, kind: BtfKind, kind_flag: bool) -> bool {
        match self {
            Namespace::Struct => kind == BtfKind::Struct || (kind == BtfKind::Fwd && !kind_flag),
            Namespace::Union => kind == BtfKind::Union || (kind == BtfKind::Fwd && kind_flag),
            Namespace::Enum => matches!(kind, BtfKind::Enum | BtfKind::Enum64),
            Namespace::Ordinary => matches!(kind, BtfKind::Typedef | BtfKind::Int | BtfKind::Float),
            Namespace::Func => kind == BtfKind::Func,
        }
    }
}

/// A word-at-a-time multiplicative hash (FxHash's mixing step, with a final fold): names
/// are short and hashed by the hundred thousand. A hostile blob can at worst make one
/// lookup linear.
pub(crate) fn hash_name(name: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
    let mut chunks = name.chunks_exact(8);
    let mut h = name.len() as u64;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = mix(h, u64::from_le_bytes(w));
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut w = [0u8; 8];
        w[..rest.len()].copy_from_slice(rest);
        h = mix(h, u64::from_le_bytes(w));
    }
    h ^ h >> 29
}

/// Ids by a hash of their names: `(hash, id)` sorted. Lookups yield the ids of equal
/// names and of rare collisions, in id order; callers compare the names.
#[derive(Debug, Default)]
pub(crate) struct HashIndex {
    entries: Vec<(u64, u32)>,
}

impl HashIndex {
    pub fn new<'a>(names: impl Iterator<Item = (&'a [u8], u32)>) -> HashIndex {
        let mut entries: Vec<(u64, u32)> = names.map(|(n, id)| (hash_name(n), id)).collect();
        entries.sort_unstable();
        HashIndex { entries }
    }

    /// Ids whose name hashes like `name`, in id order.
    pub fn candidates(&self, name: &[u8]) -> impl Iterator<Item = u32> + '_ {
        let h = hash_name(name);
        let start = self.entries.partition_point(|e| e.0 < h);
        self.entries[start..].iter().take_while(move |e| e.0 == h).map(|e| e.1)
    }

    /// `(hash, id)`, sorted.
    pub fn entries(&self) -> &[(u64, u32)] {
        &self.entries
    }
}

/// The named types of one namespace. Types with unreadable names are left out (their
/// errors surface when the type itself is read).
#[derive(Debug, Default)]
pub(crate) struct NameIndex(HashIndex);

impl NameIndex {
    /// Indexes the named types of `btf`'s own blob (not its base) that fall in `ns`.
    pub fn build(btf: &Btf, ns: Namespace) -> NameIndex {
        NameIndex(HashIndex::new(btf.own_ids().filter_map(|id| {
            let raw = btf.raw(id).ok().filter(|r| ns.contains(r.kind, r.kind_flag))?;
            let name = btf.string_bytes(raw.name_off).ok().filter(|n| !n.is_empty())?;
            Some((name, id.0))
        })))
    }

    /// Ids whose name hashes like `name`, in id order.
    pub fn candidates(&self, name: &str) -> impl Iterator<Item = BtfTypeId> + '_ {
        self.0.candidates(name.as_bytes()).map(BtfTypeId)
    }

    pub fn ids(&self) -> impl Iterator<Item = BtfTypeId> + '_ {
        self.0.entries().iter().map(|e| BtfTypeId(e.1))
    }
}
