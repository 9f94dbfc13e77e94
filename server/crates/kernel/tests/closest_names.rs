//! `FunctionNames::closest` (K201's "similar names") finds exactly what comparing the
//! query with every name of the kernel finds, in the same order: real names of 6.12 asked
//! of 6.1 and 6.18 (many of them missing there, as K201 asks), the same names misspelt
//! (a byte replaced, dropped, doubled, two bytes swapped), short names and names of no
//! kernel; against the table built from the kernel and the same table read back from
//! its bytes (as the cache gives it).

use fevlint_kernel::names::FunctionNames;
use fevlint_kernel::Kernel;
use fevlint_load::cache::Cache;
use fevlint_load::Blob;
use fevlint_testkit::Rng;

/// The textbook edit distance (insertions, deletions, substitutions), row by row; `None`
/// once a whole row is above `max` (a row's smallest value never decreases below it).
fn levenshtein(a: &[u8], b: &[u8], max: usize, rows: &mut (Vec<usize>, Vec<usize>)) -> Option<usize> {
    let (prev, cur) = rows;
    prev.clear();
    prev.extend(0..=b.len());
    cur.clear();
    cur.resize(b.len() + 1, 0);
    for (i, &ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb)).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        if cur.iter().all(|&d| d > max) {
            return None;
        }
        std::mem::swap(prev, cur);
    }
    Some(prev[b.len()]).filter(|&d| d <= max)
}

/// What `closest` promises, the straightforward way: every name without a `.` (compiler
/// clones are not suggested) within `max(1, min(3, len / 4))` edits, closest first, then
/// alphabetically, the first `n`. Names whose lengths differ by more than `max` cannot be
/// within `max` edits and are not compared.
fn closest_by_scan<'a>(names: &[&'a str], q: &str, n: usize) -> Vec<&'a str> {
    let max = (q.len() / 4).clamp(1, 3);
    let mut rows = (Vec::new(), Vec::new());
    let mut found: Vec<(usize, &str)> = names
        .iter()
        .filter(|c| !c.contains('.') && c.len().abs_diff(q.len()) <= max)
        .filter_map(|c| Some((levenshtein(q.as_bytes(), c.as_bytes(), max, &mut rows)?, *c)))
        .collect();
    found.sort();
    found.into_iter().take(n).map(|(_, c)| c).collect()
}

/// `name` with one edit: a byte replaced, dropped or doubled, or two adjacent bytes swapped.
fn misspell(name: &str, rng: &mut Rng) -> String {
    let mut b = name.as_bytes().to_vec();
    if b.is_empty() {
        return "x".into();
    }
    let i = rng.below(b.len());
    match rng.below(4) {
        0 => b[i] = b"_aeiostxz"[rng.below(9)],
        1 => {
            b.remove(i);
        }
        2 => b.insert(i, b[i]),
        _ if i + 1 < b.len() => b.swap(i, i + 1),
        _ => b.push(b's'),
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// `name` with as many bytes replaced as `closest` allows edits, one in each of the
/// pieces it splits a query into but piece `keep` (the search relies on one piece
/// being whole): every piece's index lookup is needed to find `name` again.
fn all_pieces_but(name: &str, keep: usize) -> String {
    let max = (name.len() / 4).clamp(1, 3);
    let pieces = max + 1;
    let mut b = name.as_bytes().to_vec();
    for p in (0..pieces).filter(|&p| p != keep) {
        let mid = (p * b.len() / pieces + (p + 1) * b.len() / pieces) / 2;
        b[mid] = if b[mid] == b'Q' { b'J' } else { b'Q' };
    }
    String::from_utf8_lossy(&b).into_owned()
}

fn names_of(release: &str) -> FunctionNames {
    let k = Kernel::open_cached(&fevlint_testkit::kernel_fixture(release), &Cache::off())
        .unwrap_or_else(|e| panic!("{release}: {e}"));
    let t = k.function_names();
    FunctionNames::from_bytes(Blob::from_vec(t.as_bytes().to_vec()).whole()).expect("the table reads back")
}

#[test]
fn closest_is_what_a_scan_of_every_name_finds() {
    let asked = names_of("6.12.117+deb12-amd64");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut queries: Vec<String> =
        ["", "a", "ab", "vfs", "vfs_raed", "kmalloc", "kmallco", "SyS_openat", "zzzzzzzzzzzz"]
            .map(String::from)
            .to_vec();
    for name in asked.iter().step_by(1009) {
        queries.push(name.to_owned());
        queries.push(misspell(name, &mut rng));
        let twice = misspell(name, &mut rng);
        queries.push(misspell(&twice, &mut rng));
    }
    let mut compared = 0;
    for release in ["6.1.0-47-amd64", "6.18.44-fc-v769"] {
        let table = names_of(release);
        let all: Vec<&str> = table.iter().collect();
        assert!(all.len() > 40_000, "{release}: {} names", all.len());
        let mut with_suggestions = 0;
        // Names of this kernel, found again from each piece alone.
        let mut own: Vec<(String, String)> = Vec::new();
        for name in all.iter().filter(|n| n.len() >= 12 && n.is_ascii() && !n.contains('.')).step_by(2003) {
            own.extend((0..4).map(|keep| (all_pieces_but(name, keep), name.to_string())));
        }
        for (q, name) in &own {
            assert!(table.closest(q, usize::MAX).contains(&name.as_str()), "{release}: {q:?} lost {name}");
        }
        for q in queries.iter().chain(own.iter().map(|(q, _)| q)) {
            let want = closest_by_scan(&all, q, usize::MAX);
            assert_eq!(table.closest(q, usize::MAX), want, "{release}: {q:?}");
            assert_eq!(table.closest(q, 3), want[..want.len().min(3)], "{release}: {q:?}");
            with_suggestions += usize::from(!want.is_empty());
            compared += 1;
        }
        // The queries are near real names: most have suggestions, so the test compares lists.
        assert!(with_suggestions * 2 > queries.len(), "{release}: {with_suggestions} of {}", queries.len());
        assert!(own.len() > 50, "{release}: {} names found again", own.len());
    }
    assert!(compared > 300, "{compared} queries");
}

/// `name` with exactly `k` random edits (a byte replaced, dropped or inserted anywhere).
fn edited(name: &str, k: usize, rng: &mut Rng) -> String {
    let mut b = name.as_bytes().to_vec();
    for _ in 0..k {
        let i = rng.below(b.len() + 1);
        match rng.below(3) {
            0 if i < b.len() => b[i] = b"_aeiorstx"[rng.below(9)],
            1 if i < b.len() => {
                b.remove(i);
            }
            _ => b.insert(i, b"_aeiorstx"[rng.below(9)]),
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// Random real names of each kernel with as many random edits (anywhere) as the query
/// allows, or fewer, give what the scan of every name gives: the ranked lists compared
/// whole and cut to the three a rule asks for.
#[test]
fn closest_of_names_edited_at_random_is_the_scans() {
    let mut rng = Rng(0x0dd_ba11_5eed_cafe);
    for release in ["6.1.0-47-amd64", "6.18.44-fc-v769"] {
        let table = names_of(release);
        let all: Vec<&str> = table.iter().collect();
        let (mut compared, mut found) = (0, 0);
        for _ in 0..80 {
            let name = all[rng.below(all.len())];
            let max = (name.len() / 4).clamp(1, 3);
            let q = edited(name, 1 + rng.below(max), &mut rng);
            let want = closest_by_scan(&all, &q, usize::MAX);
            assert_eq!(table.closest(&q, usize::MAX), want, "{release}: {q:?} (from {name})");
            assert_eq!(table.closest(&q, 3), want[..want.len().min(3)], "{release}: {q:?}");
            compared += 1;
            found += usize::from(!name.contains('.') && want.contains(&name));
        }
        // Most edited names are found again (an edit can also lengthen the query's reach).
        assert!(found * 2 > compared, "{release}: {found} of {compared} found again");
    }
}
