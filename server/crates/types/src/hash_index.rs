//! Ids by a hash of their names: a sorted `(hash(name), id)` list. No string is copied; a
//! lookup is a binary search, and callers compare the names of the candidates (hash
//! collisions are theirs to filter). Shared by the BTF reader's name indexes and the
//! symbol tables.

/// A word-at-a-time multiplicative hash (FxHash's mixing step, with a final fold): names
/// are short and hashed by the hundred thousand. A hostile blob can at worst make one
/// lookup linear.
pub fn hash_name(name: &[u8]) -> u64 {
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
pub struct HashIndex {
    entries: Vec<(u64, u32)>,
}

impl HashIndex {
    pub fn new<'a>(names: impl Iterator<Item = (&'a [u8], u32)>) -> HashIndex {
        let mut entries: Vec<(u64, u32)> = names.map(|(n, id)| (hash_name(n), id)).collect();
        entries.sort_unstable();
        HashIndex { entries }
    }

    /// An index from its [`HashIndex::entries`] as stored earlier; `None` unless sorted.
    pub fn from_sorted(entries: Vec<(u64, u32)>) -> Option<HashIndex> {
        entries.windows(2).all(|w| w[0] <= w[1]).then_some(HashIndex { entries })
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
