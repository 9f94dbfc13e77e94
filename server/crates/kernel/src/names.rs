//! The function names of one kernel (its types' and its ftrace list's), sorted, with an
//! index for the names within a small edit distance of a misspelt or vanished one: fast
//! enough to ask for hundreds of names against a kernel's 60,000 functions. The table is
//! one buffer, stored in the cache under a key of what it was computed from, so a later
//! run maps it instead of building it.
//!
//! Two filters run before any distance is computed:
//! - Runs: choose `max + 1` three-byte runs of the query with no byte in common, those
//!   whose postings are fewest; each edit touches at most one, so a name within `max`
//!   edits holds one of them unchanged. An index from three-byte runs to names gives the
//!   candidates. Queries too short for `max + 1` such runs scan the names of a close length.
//! - Fingerprints: each name keeps two 64-bit sets, of its bytes and of its pairs of
//!   adjacent bytes. One edit removes at most one byte and two pairs, so a name whose
//!   sets differ from the query's in more places than `max` edits explain is skipped.
//!
//! The distance itself is computed a column of the matrix per word operation (`Pattern`,
//! for queries of up to 64 bytes; the banded matrix for longer ones).
//!
//! Layout (little-endian), `n` names, `m` of them searched (compiler clones such as
//! `.isra.0` are not suggested), `p` bytes of postings:
//!
//! ```text
//! magic "FEVNAME2", n, m, p, text length    (u32 each after the magic)
//! starts    u32 x (n + 1)   name i is text[starts[i]..starts[i + 1]]; names sorted
//! order     u32 x m         the searched names, by length then name
//! pairs     u64 x m         their fingerprints, in that order
//! bytes     u64 x m
//! runs      u32 x (B + 1)   bucket b's postings are postings[runs[b]..runs[b + 1]];
//!                           absent when m = 0 (a set for membership alone)
//! postings  u8 x p          positions in `order`, ascending within a bucket, each as
//!                           its distance from the previous one (from 0 for the first)
//!                           in LEB128: about a third of the four bytes a position takes
//! text
//! ```
//!
//! The table is read whole from the cache on every run that suggests a name, so its size
//! is time: `FEVNAME1` stored each posting as a `u32` (7.0 MB for 6.18's 56,327 names,
//! 4.2 MB of it postings).
//!
//! Invariant: every read of the table is bounds-checked, so a table that passed the
//! cache's CRC but is inconsistent gives wrong suggestions, never a panic; the header's
//! sizes must add up to the buffer's length or the table is not used.

use fevlint_load::{Blob, BlobSlice};
use std::ops::Range;

const MAGIC: &[u8; 8] = b"FEVNAME2";
const HEADER: usize = MAGIC.len() + 4 * 4;
/// Hash buckets of three-byte runs.
const RUN_BITS: u32 = 16;
const BUCKETS: usize = 1 << RUN_BITS;

/// A kernel's function names and their similarity index (see the module docs).
pub struct FunctionNames {
    table: BlobSlice,
    at: Layout,
}

/// Where each section starts, from the header's counts.
#[derive(Clone, Copy, Debug)]
struct Layout {
    n: usize,
    m: usize,
    starts: usize,
    order: usize,
    pairs: usize,
    bytes: usize,
    runs: usize,
    postings: usize,
    text: usize,
    end: usize,
}

impl Layout {
    fn new(n: usize, m: usize, p: usize, text_len: usize) -> Option<Layout> {
        let after = |start: usize, count: usize, size: usize| start.checked_add(count.checked_mul(size)?);
        let starts = HEADER;
        let order = after(starts, n.checked_add(1)?, 4)?;
        let pairs = after(order, m, 4)?;
        let bytes = after(pairs, m, 8)?;
        let runs = after(bytes, m, 8)?;
        let postings = after(runs, if m == 0 { 0 } else { BUCKETS + 1 }, 4)?;
        let text = after(postings, p, 1)?;
        let end = text.checked_add(text_len)?;
        Some(Layout { n, m, starts, order, pairs, bytes, runs, postings, text, end })
    }
}

impl FunctionNames {
    /// Sorts, deduplicates and indexes `names`. Names past 4 GiB of text are dropped
    /// (no kernel comes near).
    pub fn build<'a>(names: impl IntoIterator<Item = &'a str>) -> FunctionNames {
        FunctionNames::build_with(names, true)
    }

    /// A sorted set of `names` without the similarity index ([`closest`](Self::closest)
    /// finds nothing): for membership alone.
    pub fn build_set<'a>(names: impl IntoIterator<Item = &'a str>) -> FunctionNames {
        FunctionNames::build_with(names, false)
    }

    fn build_with<'a>(names: impl IntoIterator<Item = &'a str>, searched: bool) -> FunctionNames {
        // Sorted by the first eight bytes as a number first: most comparisons end there,
        // without comparing strings.
        let prefix = |n: &str| {
            let mut key = [0u8; 8];
            let len = n.len().min(8);
            key[..len].copy_from_slice(&n.as_bytes()[..len]);
            u64::from_be_bytes(key)
        };
        let mut all: Vec<(u64, &str)> = names.into_iter().map(|n| (prefix(n), n)).collect();
        all.sort_unstable();
        all.dedup();
        let mut total = 0usize;
        let names: Vec<&str> = all
            .iter()
            .map(|&(_, s)| s)
            .take_while(|s| {
                total += s.len();
                total <= u32::MAX as usize
            })
            .collect();
        drop(all);
        let text_len: usize = names.iter().map(|s| s.len()).sum();
        let mut search: Vec<(usize, u32)> = (0..names.len() as u32)
            .filter(|&i| searched && !names[i as usize].contains('.'))
            .map(|i| (names[i as usize].len(), i))
            .collect();
        search.sort_unstable();
        // Each bucket's positions, ascending (the searched names are visited in order).
        // (A set searched for nothing has no buckets and no runs.)
        let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); if search.is_empty() { 0 } else { BUCKETS }];
        for (pos, &(_, i)) in search.iter().enumerate() {
            for w in names[i as usize].as_bytes().windows(3) {
                buckets[run_bucket(w)].push(pos as u32);
            }
        }
        let mut runs = Vec::with_capacity(BUCKETS + 1);
        let mut postings = Vec::new();
        for b in &buckets {
            runs.push(postings.len() as u32);
            let mut prev = 0;
            for &pos in b {
                leb128(&mut postings, pos - prev);
                prev = pos;
            }
        }
        if !search.is_empty() {
            runs.push(postings.len() as u32);
        }
        drop(buckets);
        let p = postings.len();
        let at = Layout::new(names.len(), search.len(), p, text_len).expect("sizes of an in-memory table fit");
        let mut out = Vec::with_capacity(at.end);
        out.extend_from_slice(MAGIC);
        for v in [names.len(), search.len(), p, text_len] {
            out.extend_from_slice(&(v as u32).to_le_bytes());
        }
        let mut start = 0u32;
        out.extend_from_slice(&start.to_le_bytes());
        for s in &names {
            start += s.len() as u32;
            out.extend_from_slice(&start.to_le_bytes());
        }
        for &(_, i) in &search {
            out.extend_from_slice(&i.to_le_bytes());
        }
        for &(_, i) in &search {
            out.extend_from_slice(&pair_set(names[i as usize].as_bytes()).to_le_bytes());
        }
        for &(_, i) in &search {
            out.extend_from_slice(&byte_set(names[i as usize].as_bytes()).to_le_bytes());
        }
        for r in &runs {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&postings);
        for s in &names {
            out.extend_from_slice(s.as_bytes());
        }
        debug_assert_eq!(out.len(), at.end);
        FunctionNames { table: Blob::from_vec(out).whole(), at }
    }

    /// A table read back (from the cache): `None` unless the header's sizes add up to
    /// the buffer's length. The text is not checked here: each name read is (a name that
    /// is not UTF-8 reads as empty), which costs less than checking megabytes of names a
    /// run mostly never reads.
    pub fn from_bytes(table: BlobSlice) -> Option<FunctionNames> {
        let d: &[u8] = &table;
        if d.get(..MAGIC.len())? != MAGIC {
            return None;
        }
        let count = |i: usize| Some(u32_at(d, MAGIC.len(), i)? as usize);
        let at = Layout::new(count(0)?, count(1)?, count(2)?, count(3)?)?;
        if at.end != d.len() {
            return None;
        }
        Some(FunctionNames { table, at })
    }

    /// The table's bytes, to store.
    pub fn as_bytes(&self) -> &[u8] {
        &self.table
    }

    pub fn len(&self) -> usize {
        self.at.n
    }

    pub fn is_empty(&self) -> bool {
        self.at.n == 0
    }

    /// Name `i` in sorted order (empty when `i` is out of range).
    pub fn get(&self, i: usize) -> &str {
        View::of(self).name(i)
    }

    /// All names, sorted.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let v = View::of(self);
        (0..self.at.n).map(move |i| v.name(i))
    }

    /// The first position whose name is not below `name`.
    pub fn lower_bound(&self, name: &str) -> usize {
        let v = View::of(self);
        partition(0..self.at.n, |i| v.name_bytes(i) < name.as_bytes())
    }

    pub fn contains(&self, name: &str) -> bool {
        let i = self.lower_bound(name);
        i < self.at.n && self.get(i) == name
    }

    /// [`FunctionNames::contains`] over a table of `len` bytes read piecewise by `read` (a
    /// byte range of the table; `None` when it cannot be had): only the places a binary
    /// search touches are read, not the whole table (a symbol map's text symbols are 3 MB
    /// for one name). `None` when the bytes are not such a table or a read fails.
    pub fn contains_in<B: AsRef<[u8]>>(
        len: usize,
        read: impl Fn(Range<usize>) -> Option<B>,
        name: &str,
    ) -> Option<bool> {
        let (n, lo, name_at) = FunctionNames::search_in(len, &read, name)?;
        Some(lo < n && name_at(lo)?.as_ref() == name.as_bytes())
    }

    /// The names starting with `prefix`, sorted, over a table read piecewise (see
    /// [`FunctionNames::contains_in`]): the binary search, then the names from there on.
    pub fn prefixed_in<B: AsRef<[u8]>>(
        len: usize,
        read: impl Fn(Range<usize>) -> Option<B>,
        prefix: &str,
    ) -> Option<Vec<String>> {
        let (n, lo, name_at) = FunctionNames::search_in(len, &read, prefix)?;
        let mut out = Vec::new();
        for i in lo..n {
            let name = name_at(i)?;
            if !name.as_ref().starts_with(prefix.as_bytes()) {
                break;
            }
            out.push(String::from_utf8(name.as_ref().to_vec()).ok()?);
        }
        Some(out)
    }

    /// The binary search of a table read piecewise: its name count, the position of the
    /// first name not below `name`, and a reader of the name at a position. The reader's
    /// pieces are read as they come (`B`: owned, or lent by a store that keeps them).
    #[allow(clippy::type_complexity)]
    fn search_in<'r, B: AsRef<[u8]> + 'r>(
        len: usize,
        read: &'r impl Fn(Range<usize>) -> Option<B>,
        name: &str,
    ) -> Option<(usize, usize, Box<dyn Fn(usize) -> Option<B> + 'r>)> {
        let head = read(0..HEADER.min(len))?;
        let head = head.as_ref();
        if head.get(..MAGIC.len())? != MAGIC {
            return None;
        }
        let count = |i: usize| Some(u32_at(head, MAGIC.len(), i)? as usize);
        let at = Layout::new(count(0)?, count(1)?, count(2)?, count(3)?)?;
        if at.end != len {
            return None;
        }
        let name_at = move |i: usize| -> Option<B> {
            let from = at.starts.checked_add(i.checked_mul(4)?)?;
            let span = read(from..from.checked_add(8)?)?;
            let (a, b) = (u32_at(span.as_ref(), 0, 0)? as usize, u32_at(span.as_ref(), 0, 1)? as usize);
            if a > b {
                return None;
            }
            read(at.text.checked_add(a)?..at.text.checked_add(b)?)
        };
        let (mut lo, mut hi) = (0, at.n);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if name_at(mid)?.as_ref() < name.as_bytes() {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Some((at.n, lo, Box::new(name_at)))
    }

    /// Up to `n` names within a small edit distance of `name`, closest first, then
    /// alphabetically; compiler clones left out.
    ///
    /// Each candidate the run index gives is tested where it is read (fingerprints, then
    /// the distance): no list of candidates is built or merged. A name that holds two
    /// pieces unchanged is met twice; it is scored the same both times, and the repeat
    /// (the same position) is dropped after sorting.
    pub fn closest(&self, name: &str, n: usize) -> Vec<&str> {
        let v = View::of(self);
        let q = name.as_bytes();
        let max = (q.len() / 4).clamp(1, 3);
        let (bytes, pairs) = (byte_set(q), pair_set(q));
        // Names of a length within `max` of the query's are positions lo..hi.
        if self.at.m == 0 {
            return Vec::new();
        }
        let len_at = |pos: usize| v.len(v.order(pos));
        let lo = partition(0..self.at.m, |pos| len_at(pos) < q.len().saturating_sub(max));
        let hi = partition(lo..self.at.m, |pos| len_at(pos) <= q.len() + max);
        let within =
            |a: u64, b: u64, max: usize| (a & !b).count_ones() as usize <= max && (b & !a).count_ones() as usize <= max;
        // The fingerprint sections, each a u64 per searched name (0 past the end).
        let section = |at: usize| self.table.get(at..at.saturating_add(8 * self.at.m)).unwrap_or_default();
        let (pair_sets, byte_sets) = (section(self.at.pairs), section(self.at.bytes));
        let set = |sets: &[u8], pos: usize| {
            sets.get(8 * pos..8 * pos + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).map_or(0, u64::from_le_bytes)
        };
        // The positions whose fingerprints pass (tested as the index gives them), then
        // their distances.
        let mut passed: Vec<usize> = Vec::new();
        let mut test = |pos: usize| {
            if within(pairs, set(pair_sets, pos), 2 * max) && within(bytes, set(byte_sets, pos), max) {
                passed.push(pos);
            }
        };
        if !v.candidates(q, max, lo..hi, &mut test) {
            (lo..hi).for_each(test);
        }
        let pattern = Pattern::new(q);
        let mut rows = (Vec::new(), Vec::new());
        // (distance, name, position): sorted, equal triples are one name met twice.
        let mut scored: Vec<(usize, &str, usize)> = Vec::new();
        for pos in passed {
            let c = v.name(v.order(pos));
            let d = match &pattern {
                Some(p) => Some(p.distance(c.as_bytes())).filter(|&d| d <= max),
                None => distance(q, c.as_bytes(), max, &mut rows),
            };
            if let Some(d) = d {
                scored.push((d, c, pos));
            }
        }
        scored.sort_unstable();
        scored.dedup();
        scored.into_iter().take(n).map(|(_, c, _)| c).collect()
    }
}

/// Bounds-checked reads of the table.
#[derive(Clone, Copy)]
struct View<'a> {
    d: &'a [u8],
    at: Layout,
}

impl<'a> View<'a> {
    fn of(t: &'a FunctionNames) -> View<'a> {
        View { d: &t.table, at: t.at }
    }

    fn u32(&self, section: usize, i: usize) -> usize {
        u32_at(self.d, section, i).unwrap_or(0) as usize
    }

    /// The length of name `i` in bytes (0 when `i` is out of range), without reading it.
    fn len(&self, i: usize) -> usize {
        if i >= self.at.n {
            return 0;
        }
        self.u32(self.at.starts, i + 1).saturating_sub(self.u32(self.at.starts, i))
    }

    fn name(&self, i: usize) -> &'a str {
        std::str::from_utf8(self.name_bytes(i)).unwrap_or("")
    }

    /// The bytes of name `i` (empty when `i` or its offsets are out of range): what
    /// [`View::name`] reads, compared without checking it is UTF-8 (the names sort the
    /// same as bytes and as text).
    fn name_bytes(&self, i: usize) -> &'a [u8] {
        if i >= self.at.n {
            return &[];
        }
        let (a, b) = (self.at.text + self.u32(self.at.starts, i), self.at.text + self.u32(self.at.starts, i + 1));
        self.d.get(a..b).unwrap_or_default()
    }

    /// The sorted position of the `pos`th searched name.
    fn order(&self, pos: usize) -> usize {
        if pos >= self.at.m {
            return usize::MAX;
        }
        self.u32(self.at.order, pos)
    }

    fn posting(&self, b: usize) -> Range<usize> {
        let (s, e) = (self.u32(self.at.runs, b), self.u32(self.at.runs, b + 1));
        s..e.max(s)
    }

    /// Calls `found` with each position in `range` of a name holding one of `max + 1`
    /// three-byte runs of `q` that have no byte in common, ascending within a run (a
    /// position may come once per run); `false`, calling nothing, when `max + 1` such runs
    /// do not fit in `q`. Each edit touches at most one of the runs, so a name within `max`
    /// edits holds one of them; the runs are the ones whose postings take the fewest bytes
    /// in all ([`rarest_runs`]). Any such runs would do: the distance decides.
    fn candidates(&self, q: &[u8], max: usize, range: Range<usize>, found: &mut impl FnMut(usize)) -> bool {
        let runs: Vec<Range<usize>> = q.windows(3).map(|w| self.posting(run_bucket(w))).collect();
        let Some(chosen) = rarest_runs(&runs, max + 1) else {
            return false;
        };
        let bytes = self.d.get(self.at.postings..self.at.text).unwrap_or_default();
        for r in chosen {
            let mut rest = bytes.get(r).unwrap_or_default();
            let mut pos = 0usize;
            loop {
                // Most deltas are one byte.
                let (delta, used) = match rest.first() {
                    Some(&b) if b < 0x80 => (u32::from(b), 1),
                    _ => match read_leb128(rest) {
                        Some(d) => d,
                        None => break,
                    },
                };
                rest = &rest[used..];
                pos = pos.saturating_add(delta as usize);
                if pos >= range.end {
                    break;
                }
                if pos >= range.start {
                    found(pos);
                }
            }
        }
        true
    }
}

/// Of the postings of a query's three-byte runs (`runs[i]`: the run at byte `i`), the `k`
/// runs with no byte in common that take the fewest bytes in all; `None` when `k` runs do
/// not fit. By dynamic programming over where each run starts: `best[j][i]` is the fewest
/// bytes of `j` runs starting at `i` or after (`usize::MAX` when they do not fit), and the
/// choices are walked back from `best[k][0]`. Reading the rarest run of each of `k` fixed
/// pieces instead (as `FEVNAME2` tables were first searched) read twice the postings and
/// tested 1.8 times as many names for the 628 names K201 asks in the benchmark's
/// 1,000 definitions x 4 kernels.
fn rarest_runs(runs: &[Range<usize>], k: usize) -> Option<Vec<Range<usize>>> {
    // best[j * stride + i], i up to runs.len() + 2 (past the end: no run fits).
    let stride = runs.len() + 3;
    let mut best = vec![usize::MAX; (k + 1) * stride];
    best[..stride].fill(0);
    let take = |best: &[usize], j: usize, i: usize| best[(j - 1) * stride + i + 3].saturating_add(runs[i].len());
    for j in 1..=k {
        for i in (0..runs.len()).rev() {
            best[j * stride + i] = best[j * stride + i + 1].min(take(&best, j, i));
        }
    }
    if k == 0 || best[k * stride] == usize::MAX {
        return None;
    }
    let mut chosen = Vec::with_capacity(k);
    let (mut j, mut i) = (k, 0);
    while j > 0 && i < runs.len() {
        if take(&best, j, i) == best[j * stride + i] {
            chosen.push(runs[i].clone());
            j -= 1;
            i += 3;
        } else {
            i += 1;
        }
    }
    (j == 0).then_some(chosen)
}

/// Appends `v` in LEB128 (seven bits a byte, low first, the high bit set on all but the last).
fn leb128(out: &mut Vec<u8>, mut v: u32) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The LEB128 value at the start of `b` and the bytes it took; `None` at the end of `b`
/// or past five bytes (not one [`leb128`] writes).
fn read_leb128(b: &[u8]) -> Option<(u32, usize)> {
    let mut v = 0u32;
    for (i, &byte) in b.iter().take(5).enumerate() {
        v |= u32::from(byte & 0x7f).checked_shl(7 * i as u32).unwrap_or(0);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

fn u32_at(d: &[u8], section: usize, i: usize) -> Option<u32> {
    let o = section.checked_add(i.checked_mul(4)?)?;
    d.get(o..o.checked_add(4)?).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(u32::from_le_bytes)
}

/// The first index in `range` where `below` is false (`below` true then false).
fn partition(range: Range<usize>, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (range.start, range.end.max(range.start));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
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

/// A query of 1 to 64 bytes, set up to measure its Levenshtein distance to many names a
/// column of the matrix at a time, as bits of one word (Myers 1999, in Hyyrö's form for
/// the distance between whole strings, 2001): about a dozen word operations per byte
/// of the name, where the banded [`distance`] computes up to `2 * max + 1` cells.
struct Pattern {
    /// Bit `i` of `eq[c]` is set when byte `i` of the query is `c`.
    eq: [u64; 256],
    /// The bit of the query's last byte.
    last: u64,
    len: usize,
}

impl Pattern {
    fn new(q: &[u8]) -> Option<Pattern> {
        if q.is_empty() || q.len() > 64 {
            return None;
        }
        let mut eq = [0u64; 256];
        for (i, &c) in q.iter().enumerate() {
            eq[usize::from(c)] |= 1 << i;
        }
        Some(Pattern { eq, last: 1 << (q.len() - 1), len: q.len() })
    }

    /// The edit distance from the query to `b`. The vertical differences of the current
    /// column (`pv`: +1, `mv`: -1, down the query) are kept as bits; `score` follows the
    /// bottom cell, starting at the query's length (its distance to the empty string).
    /// Bits above the query's last are never read: sums carry upward only.
    fn distance(&self, b: &[u8]) -> usize {
        let (mut pv, mut mv, mut score) = (u64::MAX, 0u64, self.len);
        for &c in b {
            let eq = self.eq[usize::from(c)];
            let xv = eq | mv;
            let xh = ((eq & pv).wrapping_add(pv) ^ pv) | eq;
            let mut ph = mv | !(xh | pv);
            let mut mh = pv & xh;
            if ph & self.last != 0 {
                score += 1;
            } else if mh & self.last != 0 {
                score -= 1;
            }
            // The top row is 0, 1, 2, …: its horizontal difference is +1 at every column.
            ph = ph << 1 | 1;
            mh <<= 1;
            pv = mh | !(xv | ph);
            mv = ph & xv;
        }
        score
    }
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

    /// The word-at-a-time distance agrees with the full matrix: every pair of the words,
    /// and random strings over a few bytes (many near each other) of 1 to 64 bytes against
    /// 0 to 80.
    #[test]
    fn bit_parallel_distance_agrees_with_the_full_matrix() {
        for a in WORDS.iter().filter(|a| !a.is_empty()) {
            let p = Pattern::new(a.as_bytes()).expect("1 to 64 bytes");
            for b in WORDS {
                assert_eq!(p.distance(b.as_bytes()), full(a.as_bytes(), b.as_bytes()), "{a:?} {b:?}");
            }
        }
        assert!(Pattern::new(b"").is_none() && Pattern::new(&[b'a'; 65]).is_none());
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        for _ in 0..3000 {
            let a: Vec<u8> = (0..1 + next(64)).map(|_| b"ab_\xff"[next(4)]).collect();
            let b: Vec<u8> = match next(3) {
                0 => (0..next(81)).map(|_| b"ab_\xff"[next(4)]).collect(),
                // A few edits of `a`.
                _ => {
                    let mut b = a.clone();
                    for _ in 0..next(5) {
                        let i = next(b.len() + 1);
                        match next(3) {
                            0 if i < b.len() => b[i] = b'z',
                            1 if i < b.len() => {
                                b.remove(i);
                            }
                            _ => b.insert(i, b'a'),
                        }
                    }
                    b
                }
            };
            let p = Pattern::new(&a).expect("1 to 64 bytes");
            assert_eq!(p.distance(&b), full(&a, &b), "{a:?} {b:?}");
        }
    }

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

    fn near_names() -> Vec<String> {
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
        names
    }

    /// The run index and the fingerprints only ever skip names the distance would
    /// reject: the search finds exactly what comparing with every name finds, built
    /// fresh and read back from its bytes.
    #[test]
    fn the_index_finds_what_a_full_scan_finds() {
        let names = near_names();
        let built = FunctionNames::build(names.iter().map(String::as_str));
        let read = FunctionNames::from_bytes(Blob::from_vec(built.as_bytes().to_vec()).whole()).expect("table");
        let mut sorted = names.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(read.iter().collect::<Vec<_>>(), sorted);
        let mut rows = (Vec::new(), Vec::new());
        for q in names.iter().map(String::as_str).chain([
            "vfs_raed",
            "tcp_sendmgs",
            "kmallco",
            "zzzz",
            "securty_file_permision",
            "do_sys_opnat",
        ]) {
            let max = (q.len() / 4).clamp(1, 3);
            let mut want: Vec<(usize, &str)> = sorted
                .iter()
                .filter(|c| !c.contains('.'))
                .filter_map(|c| Some((distance(q.as_bytes(), c.as_bytes(), max, &mut rows)?, c.as_str())))
                .collect();
            want.sort();
            let want: Vec<&str> = want.into_iter().map(|(_, c)| c).collect();
            assert_eq!(built.closest(q, usize::MAX), want, "{q}");
            assert_eq!(read.closest(q, usize::MAX), want, "{q}");
        }
    }

    #[test]
    fn closest_first_then_alphabetical_and_no_clones() {
        let names = FunctionNames::build(["vfs_write", "kernel_read", "vfs_read", "vfs_read.cold", "vfs_readv"]);
        assert_eq!(names.closest("vfs_raed", 3), ["vfs_read"]);
        assert_eq!(names.closest("vfs_reade", 3), ["vfs_read", "vfs_readv"]);
        assert_eq!(names.closest("vfs_reade", 1), ["vfs_read"]);
        assert!(names.contains("vfs_read.cold") && !names.contains("vfs_rea"));
        assert_eq!(names.get(names.lower_bound("vfs_read.")), "vfs_read.cold");
    }

    /// The runs chosen are `k` runs with no byte in common whose postings take the fewest
    /// bytes of any such choice: against every choice, for random posting sizes (many
    /// equal) of queries of 0 to 20 bytes.
    #[test]
    fn the_rarest_runs_are_the_cheapest_apart() {
        /// The fewest bytes of `k` runs with no byte in common from run `i` on, trying all.
        fn cheapest(len: &[usize], k: usize, i: usize) -> Option<usize> {
            if k == 0 {
                return Some(0);
            }
            let take = (i < len.len()).then(|| cheapest(len, k - 1, i + 3).map(|c| c + len[i])).flatten();
            let skip = (i < len.len()).then(|| cheapest(len, k, i + 1)).flatten();
            take.into_iter().chain(skip).min()
        }
        let mut rng = fevlint_testkit::Rng(0x7a11_0f0d_d5e5);
        for _ in 0..3000 {
            let len: Vec<usize> = (0..rng.below(19)).map(|_| rng.below(6)).collect();
            // Run `i`'s postings start at `100 * i`, so a range names its run.
            let runs: Vec<Range<usize>> = len.iter().enumerate().map(|(i, &l)| 100 * i..100 * i + l).collect();
            for k in 1..=5 {
                let got = rarest_runs(&runs, k);
                let want = cheapest(&len, k, 0);
                let Some(chosen) = got else {
                    assert_eq!(want, None, "{len:?} {k}");
                    continue;
                };
                assert_eq!(chosen.len(), k, "{len:?}");
                assert_eq!(Some(chosen.iter().map(Range::len).sum()), want, "{len:?} {k}");
                // Apart: the runs' starts are at least 3 bytes apart.
                let starts: Vec<usize> = chosen.iter().map(|r| r.start / 100).collect();
                assert!(starts.windows(2).all(|w| w[1] >= w[0] + 3), "{len:?} {k}: {starts:?}");
            }
        }
    }

    /// A set for membership alone stores no run index (the text symbols of a symbol map
    /// are read on every run that asks): it reads back, answers `contains`, suggests nothing.
    #[test]
    fn a_membership_set_has_no_run_index() {
        let names = near_names();
        let set = FunctionNames::build_set(names.iter().map(String::as_str));
        let text: usize = set.iter().map(str::len).sum();
        assert_eq!(set.as_bytes().len(), HEADER + 4 * (set.len() + 1) + text);
        let read = FunctionNames::from_bytes(Blob::from_vec(set.as_bytes().to_vec()).whole()).expect("table");
        assert!(names.iter().all(|n| read.contains(n)) && !read.contains("vfs_rea"));
        assert!(read.closest("vfs_raed", 5).is_empty());
    }

    /// Membership read piecewise gives what the whole table gives, for every name and for
    /// names it lacks; a table that is not one, or a read that fails, is no answer; damaged
    /// offsets never panic.
    #[test]
    fn piecewise_membership_is_the_whole_tables() {
        let names = near_names();
        let set = FunctionNames::build_set(names.iter().map(String::as_str));
        let bytes = set.as_bytes().to_vec();
        let read = |b: &[u8], r: Range<usize>| b.get(r).map(<[u8]>::to_vec);
        for q in names.iter().map(String::as_str).chain(["", "a", "zzzz", "vfs_rea", "vfs_read.", "\u{e9}t\u{e9}"]) {
            assert_eq!(FunctionNames::contains_in(bytes.len(), |r| read(&bytes, r), q), Some(set.contains(q)), "{q}");
        }
        assert_eq!(FunctionNames::contains_in(bytes.len() + 1, |r| read(&bytes, r), "vfs_read"), None);
        assert_eq!(FunctionNames::contains_in(bytes.len(), |_| None::<Vec<u8>>, "vfs_read"), None);
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..200 {
            let mut bad = bytes.clone();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let o = HEADER + (state as usize % (bad.len() - HEADER - 4));
            bad[o..o + 4].copy_from_slice(&(state >> 32).to_le_bytes()[..4]);
            let _ = FunctionNames::contains_in(bad.len(), |r| read(&bad, r), "vfs_read");
        }
    }

    /// A table cut short, grown, or with its counts or offsets overwritten is refused or
    /// answers without panicking.
    #[test]
    fn damaged_tables_never_panic() {
        let names = near_names();
        let good = FunctionNames::build(names.iter().map(String::as_str)).as_bytes().to_vec();
        let table = |b: Vec<u8>| FunctionNames::from_bytes(Blob::from_vec(b).whole());
        assert!(table(good[..good.len() - 1].to_vec()).is_none());
        assert!(table(good[..HEADER - 1].to_vec()).is_none());
        assert!(table(Vec::new()).is_none());
        let mut grown = good.clone();
        grown.push(b'x');
        assert!(table(grown).is_none());
        // Overwrite words across the sections (offsets, order, runs, postings) with
        // large values: every answer is still a name of the table or nothing.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..200 {
            let mut bad = good.clone();
            for _ in 0..8 {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let o = HEADER + (state as usize % (bad.len() - HEADER - 4));
                bad[o..o + 4].copy_from_slice(&(state >> 32).to_le_bytes()[..4]);
            }
            let Some(t) = table(bad) else { continue };
            for q in ["vfs_raed", "tcp_sendmgs", "x", "security_file_permision"] {
                let _ = t.closest(q, 5);
                let _ = t.contains(q);
            }
            let _ = t.iter().count();
        }
    }
}
