//! Names within a small edit distance of a misspelt or vanished one, fast enough to ask
//! for hundreds of names against a kernel's 60,000 functions.
//!
//! Two filters run before any distance is computed:
//! - Pieces: split the query into `max + 1` pieces; each edit touches at most one, so a
//!   name within `max` edits contains one piece unchanged, and with it that piece's
//!   rarest three-byte run. An index from three-byte runs to names gives the candidates.
//!   The index is built at a kernel's 32nd query; before that, and for queries too short
//!   for three-byte pieces, the names of a close length are scanned.
//! - Fingerprints: each name keeps two 64-bit sets, of its bytes and of its pairs of
//!   adjacent bytes. One edit removes at most one byte and two pairs, so a name whose
//!   sets differ from the query's in more places than `max` edits explain is skipped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Hash buckets of three-byte runs.
const RUN_BITS: u32 = 16;

/// Queries answered by scanning before the run index is built: a check that asks for a
/// handful of names does not pay for indexing 60,000.
const SCAN_QUERIES: usize = 32;

/// The function names of one kernel, ordered by length, with their fingerprints and
/// (from the `SCAN_QUERIES`th query on) an index of their three-byte runs. Positions
/// below are positions in this order.
pub struct NameSearch {
    lens: Vec<usize>,
    pairs: Vec<u64>,
    bytes: Vec<u64>,
    /// Index into the names this was built from.
    index: Vec<u32>,
    runs: OnceLock<RunIndex>,
    asked: AtomicUsize,
}

/// The positions of the names containing a run of bucket `b` are
/// `postings[starts[b]..starts[b + 1]]`, ascending.
struct RunIndex {
    starts: Vec<u32>,
    postings: Vec<u32>,
}

impl NameSearch {
    /// Indexes `names`, skipping compiler clones (`.isra.0`, `.cold`).
    pub fn new(names: &[String]) -> NameSearch {
        let mut order: Vec<(usize, u32)> =
            names.iter().enumerate().filter(|(_, n)| !n.contains('.')).map(|(i, n)| (n.len(), i as u32)).collect();
        order.sort_unstable();
        let name = |i: u32| names[i as usize].as_bytes();
        NameSearch {
            lens: order.iter().map(|e| e.0).collect(),
            pairs: order.iter().map(|e| pair_set(name(e.1))).collect(),
            bytes: order.iter().map(|e| byte_set(name(e.1))).collect(),
            index: order.iter().map(|e| e.1).collect(),
            runs: OnceLock::new(),
            asked: AtomicUsize::new(0),
        }
    }

    /// Up to `n` of `names` (the list this was built from) within a small edit distance
    /// of `name`, closest first, then alphabetically.
    pub fn closest<'a>(&self, names: &'a [String], name: &str, n: usize) -> Vec<&'a str> {
        let q = name.as_bytes();
        let max = (q.len() / 4).clamp(1, 3);
        let (bytes, pairs) = (byte_set(q), pair_set(q));
        // Names of a length within `max` of the query's are positions lo..hi.
        let lo = self.lens.partition_point(|&l| l < q.len().saturating_sub(max));
        let hi = self.lens.partition_point(|&l| l <= q.len() + max);
        let within =
            |a: u64, b: u64, max: usize| (a & !b).count_ones() as usize <= max && (b & !a).count_ones() as usize <= max;
        let indexed = self.asked.fetch_add(1, Ordering::Relaxed) >= SCAN_QUERIES;
        let candidates = indexed
            .then(|| self.runs.get_or_init(|| RunIndex::new(names, &self.index)).candidates(q, max, lo..hi))
            .flatten()
            .unwrap_or_else(|| (lo..hi).collect());
        let mut rows = (Vec::new(), Vec::new());
        let mut scored: Vec<(usize, &str)> = candidates
            .into_iter()
            .filter(|&i| within(pairs, self.pairs[i], 2 * max) && within(bytes, self.bytes[i], max))
            .filter_map(|i| {
                let c = names.get(*self.index.get(i)? as usize)?;
                Some((distance(q, c.as_bytes(), max, &mut rows)?, c.as_str()))
            })
            .collect();
        scored.sort_unstable();
        scored.into_iter().take(n).map(|(_, c)| c).collect()
    }
}

impl RunIndex {
    /// Built in two passes (count, then fill) over the names at each position. A run that
    /// occurs twice in a name is listed twice: harmless, candidates are deduplicated.
    fn new(names: &[String], order: &[u32]) -> RunIndex {
        let name = |i: u32| names.get(i as usize).map_or(&b""[..], |n| n.as_bytes());
        let mut starts = vec![0u32; (1 << RUN_BITS) + 1];
        for &i in order {
            for w in name(i).windows(3) {
                starts[run_bucket(w) + 1] += 1;
            }
        }
        for b in 1..starts.len() {
            starts[b] += starts[b - 1];
        }
        let mut fill = starts.clone();
        let mut postings = vec![0u32; starts[starts.len() - 1] as usize];
        for (pos, &i) in order.iter().enumerate() {
            for w in name(i).windows(3) {
                let b = run_bucket(w);
                postings[fill[b] as usize] = pos as u32;
                fill[b] += 1;
            }
        }
        RunIndex { starts, postings }
    }

    /// Positions in `range` of the names holding the rarest run of some piece of `q`,
    /// sorted; `None` when a piece is shorter than a run.
    fn candidates(&self, q: &[u8], max: usize, range: std::ops::Range<usize>) -> Option<Vec<usize>> {
        let pieces = max + 1;
        if q.len() < 3 * pieces {
            return None;
        }
        let posting = |b: usize| &self.postings[self.starts[b] as usize..self.starts[b + 1] as usize];
        let mut out = Vec::new();
        for p in 0..pieces {
            let piece = &q[p * q.len() / pieces..(p + 1) * q.len() / pieces];
            let rarest = piece.windows(3).map(|w| posting(run_bucket(w))).min_by_key(|l| l.len())?;
            let from = rarest.partition_point(|&i| (i as usize) < range.start);
            let to = rarest.partition_point(|&i| (i as usize) < range.end);
            out.extend(rarest[from..to].iter().map(|&i| i as usize));
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }
}

/// The bucket of a three-byte run.
fn run_bucket(w: &[u8]) -> usize {
    let v = u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2]);
    (v.wrapping_mul(0x9E37_79B1) >> (32 - RUN_BITS)) as usize
}

/// The bytes of `s`, folded onto 64 bits.
fn byte_set(s: &[u8]) -> u64 {
    s.iter().fold(0, |set, &b| set | 1 << (b & 63))
}

/// The pairs of adjacent bytes of `s`, hashed onto 64 bits.
fn pair_set(s: &[u8]) -> u64 {
    s.windows(2).fold(0, |set, w| {
        let h = (u32::from(w[0]) << 8 | u32::from(w[1])).wrapping_mul(0x9E37_79B1) >> 26;
        set | 1 << h
    })
}

/// Levenshtein distance, `None` when above `max`. Only the diagonal band of width
/// `2 * max + 1` can stay within `max`, so only it is computed; `rows` is scratch space.
fn distance(a: &[u8], b: &[u8], max: usize, rows: &mut (Vec<usize>, Vec<usize>)) -> Option<usize> {
    let over = max + 1;
    let (prev, cur) = rows;
    prev.clear();
    prev.extend((0..=b.len()).map(|j| j.min(over)));
    cur.clear();
    cur.resize(b.len() + 1, over);
    for (i, &ca) in a.iter().enumerate().map(|(i, c)| (i + 1, c)) {
        let lo = i.saturating_sub(max).max(1);
        let hi = (i + max).min(b.len());
        cur[lo - 1] = if lo == 1 { i.min(over) } else { over };
        let mut row_min = cur[lo - 1];
        for j in lo..=hi {
            let d = (prev[j - 1] + usize::from(ca != b[j - 1])).min(prev[j] + 1).min(cur[j - 1] + 1).min(over);
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if hi < b.len() {
            cur[hi + 1] = over;
        }
        if row_min > max {
            return None;
        }
        std::mem::swap(prev, cur);
    }
    (prev[b.len()] <= max).then_some(prev[b.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The textbook full-matrix distance, to check the banded one against.
    fn full(a: &[u8], b: &[u8]) -> usize {
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, &ca) in a.iter().enumerate() {
            let mut cur = vec![i + 1; b.len() + 1];
            for (j, &cb) in b.iter().enumerate() {
                cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
            }
            prev = cur;
        }
        prev[b.len()]
    }

    const WORDS: [&str; 18] = [
        "",
        "a",
        "ab",
        "ba",
        "vfs_read",
        "vfs_write",
        "vfs_readv",
        "fs_read",
        "vfs_raed",
        "do_sys_open",
        "do_sys_openat2",
        "kmalloc",
        "kmalloc_noprof",
        "tcp_sendmsg",
        "tcp_sendpage",
        "udp_sendmsg",
        "xyz",
        "aaaaaaaabbbb",
    ];

    #[test]
    fn banded_distance_agrees_with_the_full_matrix() {
        let mut rows = (Vec::new(), Vec::new());
        for a in WORDS {
            for b in WORDS {
                let want = full(a.as_bytes(), b.as_bytes());
                for max in 1..=3 {
                    let got = distance(a.as_bytes(), b.as_bytes(), max, &mut rows);
                    assert_eq!(got, (want <= max).then_some(want), "{a:?} {b:?} max {max}");
                }
            }
        }
    }

    /// The fingerprints only ever skip names the distance would reject: the search finds
    /// exactly what comparing with every name finds.
    #[test]
    fn the_index_finds_what_a_full_scan_finds() {
        let mut names: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        // Every single and double edit of a few names, so that many are near each other.
        for w in ["vfs_read", "tcp_sendmsg", "kmalloc", "do_sys_openat2", "security_file_permission"] {
            for i in 0..w.len() {
                for c in [b'_', b'x', b'a'] {
                    let mut s = w.as_bytes().to_vec();
                    s[i] = c;
                    names.push(String::from_utf8_lossy(&s).into_owned());
                    s.remove((i + 3) % s.len());
                    names.push(String::from_utf8_lossy(&s).into_owned());
                }
            }
        }
        names.push("vfs_read.cold".into());
        names.sort();
        names.dedup();
        let search = NameSearch::new(&names);
        let mut rows = (Vec::new(), Vec::new());
        // More queries than SCAN_QUERIES: both the scan and the run index answer.
        for q in names.iter().map(String::as_str).chain([
            "vfs_raed",
            "tcp_sendmgs",
            "kmallco",
            "zzzz",
            "securty_file_permision",
            "do_sys_opnat",
        ]) {
            let max = (q.len() / 4).clamp(1, 3);
            let mut want: Vec<(usize, &str)> = names
                .iter()
                .filter(|c| !c.contains('.'))
                .filter_map(|c| Some((distance(q.as_bytes(), c.as_bytes(), max, &mut rows)?, c.as_str())))
                .collect();
            want.sort();
            let want: Vec<&str> = want.into_iter().map(|(_, c)| c).collect();
            assert_eq!(search.closest(&names, q, usize::MAX), want, "{q}");
        }
    }

    #[test]
    fn closest_first_then_alphabetical_and_no_clones() {
        let names: Vec<String> =
            ["kernel_read", "vfs_read", "vfs_read.cold", "vfs_readv", "vfs_write"].map(String::from).to_vec();
        let search = NameSearch::new(&names);
        assert_eq!(search.closest(&names, "vfs_raed", 3), ["vfs_read"]);
        assert_eq!(search.closest(&names, "vfs_reade", 3), ["vfs_read", "vfs_readv"]);
        assert_eq!(search.closest(&names, "vfs_reade", 1), ["vfs_read"]);
    }
}
