//! Rename suggestions remembered: the answers of [`FunctionNames::closest`] a kernel has
//! given, kept in the cache beside its names (`*.similar1`) so that a later run asking
//! the same names reads a few kilobytes instead of searching (and reading) the whole
//! names table, 3-4 MB a kernel. A script checked again asks again for the functions it
//! names that the kernel lacks; a run that checks it against four kernels asks hundreds.
//!
//! Keyed by what the names table is computed from (its contents, never a path: two
//! kernels with the same functions share one memo), so an answer is served only for the
//! table that gave it; the memo remembers the first [`KEPT`] names of each answer, which
//! answer any request for that many or fewer (a longer request searches). At most
//! [`CAPACITY`] names are kept, the newest: a long-lived editor session that tries many
//! misspellings does not grow the file without bound.
//!
//! Layout (little-endian): `magic "FEVSIM01"`, the table's key (u64), [`KEPT`] (u32),
//! the entry count (u32), then each entry, oldest first: the name asked (u16 length, its
//! bytes), the count of names answered (u8, at most [`KEPT`]), each answer (u16 length,
//! its bytes). Stored through the cache's CRC-checked derived entries; a memo that is
//! absent, damaged, for another table or not exactly this layout is not used (and is
//! written again), so it can make an answer cheaper, never different.

use crate::names::FunctionNames;
use fevlint_load::cache::Cache;
use std::collections::HashMap;
use std::sync::Mutex;

const MAGIC: &[u8; 8] = b"FEVSIM01";
/// How many names of each answer are kept (rules ask for 3).
pub(crate) const KEPT: usize = 3;
/// How many names asked are kept, the newest.
const CAPACITY: usize = 8192;

/// The answers known for one kernel: read from the cache when first asked for, added to
/// as names are searched, stored again after a batch added any.
#[derive(Default)]
pub(crate) struct Memo {
    state: Mutex<Option<Answers>>,
}

/// Answers by name, in the order they were first given (oldest first).
#[derive(Default, Debug, PartialEq)]
struct Answers {
    entries: Vec<(String, Vec<String>)>,
    at: HashMap<String, usize>,
}

impl Answers {
    fn insert(&mut self, name: String, found: Vec<String>) {
        match self.at.get(&name) {
            Some(&i) => self.entries[i].1 = found,
            None => {
                self.at.insert(name.clone(), self.entries.len());
                self.entries.push((name, found));
            }
        }
    }

    /// Forgets all but the newest [`CAPACITY`] names (a long-lived language server asks
    /// for many).
    fn trim(&mut self) {
        if self.entries.len() > CAPACITY {
            self.entries.drain(..self.entries.len() - CAPACITY);
            self.at = self.entries.iter().enumerate().map(|(i, (name, _))| (name.clone(), i)).collect();
        }
    }

    fn get(&self, name: &str) -> Option<&[String]> {
        self.at.get(name).map(|&i| self.entries[i].1.as_slice())
    }

    /// The stored form (at most the newest [`CAPACITY`] entries); names or answers longer
    /// than a `u16` are left out (no kernel function is).
    fn to_bytes(&self, key: u64) -> Vec<u8> {
        let fits = |s: &str| s.len() <= usize::from(u16::MAX);
        let kept: Vec<&(String, Vec<String>)> = self
            .entries
            .iter()
            .filter(|(n, found)| fits(n) && found.len() <= KEPT && found.iter().all(|f| fits(f)))
            .collect();
        let kept = &kept[kept.len().saturating_sub(CAPACITY)..];
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&key.to_le_bytes());
        out.extend_from_slice(&(KEPT as u32).to_le_bytes());
        out.extend_from_slice(&(kept.len() as u32).to_le_bytes());
        let text = |out: &mut Vec<u8>, s: &str| {
            out.extend_from_slice(&(s.len() as u16).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        };
        for (name, found) in kept {
            text(&mut out, name);
            out.push(found.len() as u8);
            for f in found {
                text(&mut out, f);
            }
        }
        out
    }

    /// A stored memo read back: `None` unless it is for the table `key`, keeps [`KEPT`]
    /// names an answer, and is exactly the entries its count says (valid UTF-8 each).
    fn from_bytes(d: &[u8], key: u64) -> Option<Answers> {
        let mut r = Reader(d);
        if r.take(8)? != MAGIC || r.u64()? != key || r.u32()? != KEPT as u32 {
            return None;
        }
        let count = r.u32()?;
        let mut answers = Answers::default();
        for _ in 0..count {
            let name = r.text()?;
            let k = usize::from(r.take(1)?[0]);
            if k > KEPT {
                return None;
            }
            let found = (0..k).map(|_| r.text()).collect::<Option<Vec<String>>>()?;
            answers.insert(name, found);
        }
        r.0.is_empty().then_some(answers)
    }
}

/// Reads the stored memo front to back, each read bounds-checked.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4)?.try_into().ok().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8)?.try_into().ok().map(u64::from_le_bytes)
    }

    fn text(&mut self) -> Option<String> {
        let len = u16::from_le_bytes(self.take(2)?.try_into().ok()?);
        String::from_utf8(self.take(usize::from(len))?.to_vec()).ok()
    }
}

impl Memo {
    /// Up to `n` names close to each of `names` ([`FunctionNames::closest`] of the table
    /// `table` gives, keyed `key` in `cache`): remembered answers where the memo has them,
    /// else searched and remembered; the memo is stored again when any were added.
    pub(crate) fn closest<'t>(
        &self,
        cache: &Cache,
        key: u64,
        table: impl Fn() -> &'t FunctionNames,
        names: &[&str],
        n: usize,
    ) -> Vec<Vec<String>> {
        let search = |name: &str, n: usize| table().closest(name, n).into_iter().map(str::to_owned).collect();
        if n > KEPT {
            return names.iter().map(|name| search(name, n)).collect();
        }
        let file = format!("{key:016x}.similar1");
        let mut state = self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let answers = state.get_or_insert_with(|| {
            cache.get_derived(&file).and_then(|d| Answers::from_bytes(&d, key)).unwrap_or_default()
        });
        let mut added = false;
        let out = names
            .iter()
            .map(|&name| {
                let found = match answers.get(name) {
                    Some(found) => found.to_vec(),
                    None => {
                        let found: Vec<String> = search(name, KEPT);
                        answers.insert(name.to_owned(), found.clone());
                        added = true;
                        found
                    }
                };
                found.into_iter().take(n).collect()
            })
            .collect();
        if added {
            answers.trim();
            cache.put_derived(&file, &answers.to_bytes(key));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fevlint_testkit::Rng;
    use std::cell::Cell;

    fn scratch(name: &str) -> Cache {
        let dir = std::env::temp_dir().join(format!("fevlint-similar-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Cache::new(Some(dir))
    }

    fn table() -> FunctionNames {
        FunctionNames::build([
            "vfs_read",
            "vfs_readv",
            "vfs_write",
            "vfs_writev",
            "kernel_read",
            "kernel_write",
            "vfs_read.cold",
            "do_sys_open",
            "do_sys_openat2",
            "tcp_sendmsg",
            "udp_sendmsg",
            "tcp_recvmsg",
        ])
    }

    /// The table, counting how often it is asked for.
    fn counted<'t>(t: &'t FunctionNames, asked: &'t Cell<usize>) -> impl Fn() -> &'t FunctionNames + 't {
        move || {
            asked.set(asked.get() + 1);
            t
        }
    }

    const ASKED: [&str; 8] = ["vfs_raed", "vfs_wirte", "tcp_sendmgs", "zzzzzz", "do_sys_opn", "", "vfs_read", "x"];

    /// What the memo answers, cold (searched and stored) and warm (read back by a new
    /// memo, the table never asked), is what the search gives, for every count asked.
    #[test]
    fn cold_and_warm_answers_are_the_searchs() {
        let t = table();
        let want = |n: usize| -> Vec<Vec<String>> {
            ASKED.iter().map(|q| t.closest(q, n).into_iter().map(str::to_owned).collect()).collect()
        };
        for n in [0, 1, 2, 3, 5] {
            let cache = scratch(&format!("same{n}"));
            let cold = Memo::default();
            assert_eq!(cold.closest(&cache, 7, || &t, &ASKED, n), want(n), "cold {n}");
            let warm = Memo::default();
            let asked = Cell::new(0);
            let got = warm.closest(&cache, 7, counted(&t, &asked), &ASKED, n);
            assert_eq!(got, want(n), "warm {n}");
            if n <= KEPT {
                assert_eq!(asked.get(), 0, "a warm memo answers {n} without the table");
            }
            let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
        }
        let cache = scratch("same");
        Memo::default().closest(&cache, 7, || &t, &ASKED, 3);
        // Another table's key does not read this memo.
        let other = Memo::default();
        let asked = Cell::new(0);
        other.closest(&cache, 8, counted(&t, &asked), &ASKED[..1], 3);
        assert_eq!(asked.get(), 1);
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }

    /// A stored memo that is cut, grown, changed in any byte, or for another table or
    /// answer count is refused whole; one byte changed in the file fails the cache's CRC,
    /// and the answers are searched again (the same as cold).
    #[test]
    fn a_damaged_memo_is_refused() {
        let t = table();
        let mut answers = Answers::default();
        for q in ASKED {
            answers.insert(q.to_owned(), t.closest(q, KEPT).into_iter().map(str::to_owned).collect());
        }
        let good = answers.to_bytes(42);
        assert_eq!(Answers::from_bytes(&good, 42), Some(answers));
        assert_eq!(Answers::from_bytes(&good, 43), None);
        for cut in 0..good.len() {
            assert_eq!(Answers::from_bytes(&good[..cut], 42), None, "cut at {cut}");
        }
        let mut grown = good.clone();
        grown.push(0);
        assert_eq!(Answers::from_bytes(&grown, 42), None);
        let mut kept = good.clone();
        kept[16] = KEPT as u8 + 1;
        assert_eq!(Answers::from_bytes(&kept, 42), None);
        // Random overwrites never panic; what reads back is entries of the same shape.
        let mut rng = Rng(0x5eed_0123_4567_89ab);
        for _ in 0..2000 {
            let mut bad = good.clone();
            let at = 24 + rng.below(bad.len() - 24);
            bad[at] = rng.below(256) as u8;
            if let Some(a) = Answers::from_bytes(&bad, 42) {
                assert!(a.entries.iter().all(|(_, f)| f.len() <= KEPT));
            }
        }
        // Through the cache: the file with a byte changed is refused by its CRC and the
        // answers are the search's.
        let cache = scratch("damaged");
        let memo = Memo::default();
        let want = memo.closest(&cache, 9, || &t, &ASKED, 3);
        let path = cache.dir().expect("dir").join(format!("{:016x}.similar1", 9));
        let mut file = std::fs::read(&path).expect("stored");
        let at = file.len() / 2;
        file[at] ^= 0x20;
        std::fs::write(&path, &file).expect("write");
        let asked = Cell::new(0);
        let again = Memo::default().closest(&cache, 9, counted(&t, &asked), &ASKED, 3);
        assert_eq!(again, want);
        assert!(asked.get() > 0, "the damaged memo was not used");
        let _ = std::fs::remove_dir_all(cache.dir().expect("dir"));
    }

    /// Only the newest [`CAPACITY`] names are stored.
    #[test]
    fn the_memo_keeps_the_newest_names() {
        let mut answers = Answers::default();
        for i in 0..CAPACITY + 10 {
            answers.insert(format!("f{i}"), vec![format!("g{i}")]);
        }
        let back = Answers::from_bytes(&answers.to_bytes(1), 1).expect("reads back");
        assert_eq!(back.entries.len(), CAPACITY);
        assert_eq!(back.entries[0].0, "f10");
        assert_eq!(back.get(&format!("f{}", CAPACITY + 9)), Some(&[format!("g{}", CAPACITY + 9)][..]));
        assert_eq!(back.get("f9"), None);
        // In memory too, once stored.
        answers.trim();
        assert_eq!(answers, back);
    }
}
