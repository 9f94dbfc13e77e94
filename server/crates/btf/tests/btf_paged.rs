//! A blob read by page (`Btf::open_paged`, a kernel's cached BTF) answers exactly as the
//! same blob read whole, reads only the pages asked about, and a page its store cannot
//! vouch for is served from the whole blob read again, or is a clear error.

mod btf_common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use btf_common::{raw_btf, KERNELS};
use fevlint_btf::{BlobPages, Btf, BtfTypeId, WholeBytes, BLOB_PAGE, LAYOUT_GROUP};
use fevlint_types::model::{TypeNamespace, TypeRef, TypeSource};

/// Pages of `bytes`, counting the reads (one per call, a run of pages is one) and the
/// bytes read; page `bad` fails (alone or in a run), and the whole blob can be read
/// again only when `whole` says so, after a failed page; runs of pages after `many`.
struct Store {
    bytes: Arc<[u8]>,
    reads: Arc<AtomicUsize>,
    read_bytes: Arc<AtomicUsize>,
    bad: usize,
    whole: bool,
    many: usize,
}

impl BlobPages for Store {
    fn len(&self) -> usize {
        self.bytes.len()
    }

    fn page(&self, i: usize) -> Option<Vec<u8>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if i == self.bad {
            return None;
        }
        let end = ((i + 1) * BLOB_PAGE).min(self.bytes.len());
        let page = self.bytes.get(i * BLOB_PAGE..end).map(<[u8]>::to_vec)?;
        self.read_bytes.fetch_add(page.len(), Ordering::Relaxed);
        Some(page)
    }

    fn pages(&self, range: std::ops::Range<usize>) -> Option<Vec<u8>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        if range.contains(&self.bad) {
            return None;
        }
        let end = (range.end * BLOB_PAGE).min(self.bytes.len());
        let run = self.bytes.get(range.start * BLOB_PAGE..end).map(<[u8]>::to_vec)?;
        self.read_bytes.fetch_add(run.len(), Ordering::Relaxed);
        Some(run)
    }

    fn whole(&self) -> Option<WholeBytes> {
        self.whole.then(|| Box::new(self.bytes.clone()) as WholeBytes)
    }

    fn runs_after(&self) -> usize {
        self.many
    }
}

fn paged(kernel: &str, bad: usize, whole: bool, many: usize) -> (Btf, Arc<AtomicUsize>) {
    let (btf, reads, _) = paged_counted(kernel, bad, whole, many);
    (btf, reads)
}

/// [`paged`], with the count of the bytes read.
fn paged_counted(kernel: &str, bad: usize, whole: bool, many: usize) -> (Btf, Arc<AtomicUsize>, Arc<AtomicUsize>) {
    let bytes = raw_btf(kernel);
    let layout = Btf::parse(kernel, bytes.clone()).expect("parse").layout().expect("standalone");
    let (reads, read_bytes) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let store = Store { bytes, reads: reads.clone(), read_bytes: read_bytes.clone(), bad, whole, many };
    (Btf::open_paged(kernel, Box::new(store), &layout).expect("open").expect("layout fits"), reads, read_bytes)
}

/// Every type of every fixture kernel: the same record, name and model type.
#[test]
fn a_paged_blob_reads_every_type_as_the_whole_one() {
    for kernel in KERNELS {
        let whole = Btf::parse(kernel, raw_btf(kernel)).expect("parse");
        let (paged, reads) = paged(kernel, usize::MAX, false, usize::MAX);
        assert!(paged.is_paged());
        assert_eq!(paged.own_type_count(), whole.own_type_count(), "{kernel}");
        assert_eq!(paged.pointer_size(), whole.pointer_size(), "{kernel}");
        assert_eq!(paged.header(), whole.header(), "{kernel}");
        for id in whole.own_ids() {
            let (a, b) = (whole.raw(id).expect("raw"), paged.raw(id).expect("raw"));
            assert_eq!(a, b, "{kernel} {id}");
            assert_eq!(whole.name(id).expect("name"), paged.name(id).expect("name"), "{kernel} {id}");
            let t = TypeRef(u64::from(id.0));
            assert_eq!(format!("{:?}", whole.get(t)), format!("{:?}", paged.get(t)), "{kernel} {id}");
        }
        assert!(paged.raw(BtfTypeId(paged.next_id())).is_err());
        // Each page read once, however often asked for.
        assert_eq!(reads.load(Ordering::Relaxed), raw_btf(kernel).len().div_ceil(BLOB_PAGE), "{kernel}");
    }
}

/// `struct file` and a function read a few dozen pages of a 5 MB blob, not all of them.
#[test]
fn a_lookup_reads_a_few_pages() {
    let kernel = "6.12.117+deb12-amd64";
    let pages = raw_btf(kernel).len().div_ceil(BLOB_PAGE);
    // (Found by id: the name index, which a kernel's cache keeps, is built from every record.)
    let (btf, reads) = paged(kernel, usize::MAX, false, usize::MAX);
    let whole = Btf::parse(kernel, raw_btf(kernel)).expect("parse");
    let id = whole.find_type(TypeNamespace::Struct, "file").expect("lookup")[0];
    assert_eq!(format!("{:?}", btf.get(id)), format!("{:?}", whole.get(id)));
    let n = reads.load(Ordering::Relaxed);
    assert!(n < 40, "{n} pages read for one struct of {pages}");
}

/// A run that reads many pages (thousands of functions' prototypes, a walk of every type)
/// reads the pages not read yet in runs of up to `RUN` after a few: the same answers,
/// each page read once, never the whole blob again.
#[test]
fn many_pages_are_read_in_runs_each_once() {
    let kernel = "6.1.0-47-amd64";
    let bytes = raw_btf(kernel);
    let pages = bytes.len().div_ceil(BLOB_PAGE);
    assert_eq!(fevlint_btf::runs_after(bytes.len()), pages / 2);
    let whole = Btf::parse(kernel, bytes.clone()).expect("parse");
    // Every 7th type first (scattered pages), then all of them.
    let (btf, reads, read_bytes) = paged_counted(kernel, usize::MAX, false, 10);
    for id in whole.own_ids().step_by(7).chain(whole.own_ids()) {
        assert_eq!(whole.raw(id).expect("raw"), btf.raw(id).expect("raw"), "{id}");
        assert_eq!(whole.name(id).expect("name"), btf.name(id).expect("name"), "{id}");
    }
    assert_eq!(read_bytes.load(Ordering::Relaxed), bytes.len(), "each page read once");
    let n = reads.load(Ordering::Relaxed);
    assert!(n >= 10 + (pages - 10).div_ceil(fevlint_btf::RUN) && n < pages / 2, "{n} reads of {pages} pages");
}

/// A page the store cannot vouch for inside a run: the pages before it are still read,
/// page by page, and it is served from the whole blob read again, or is an error.
#[test]
fn a_bad_page_in_a_run_is_read_alone_then_whole_or_refused() {
    let kernel = "6.1.0-56-amd64";
    let whole = Btf::parse(kernel, raw_btf(kernel)).expect("parse");
    let on = |p: usize| -> Vec<BtfTypeId> {
        whole.own_ids().filter(|&id| whole.raw(id).expect("raw").offset / BLOB_PAGE == p).collect()
    };
    // (Page 90: a type's group, walked from its start, may reach the next pages.)
    let before = on(90);
    let at_100 = on(100)[0];
    for with_whole in [true, false] {
        let (btf, _) = paged(kernel, 100, with_whole, 0);
        for &id in &before {
            assert_eq!(whole.raw(id).expect("raw"), btf.raw(id).expect("raw"), "{id}");
        }
        match btf.raw(at_100) {
            Ok(raw) => assert!(with_whole && raw == whole.raw(at_100).expect("raw")),
            Err(e) => assert!(!with_whole && e.to_string().contains("could not be read"), "{e}"),
        }
    }
}

/// A page the store refuses (a cache file cut short or changed): the whole blob read
/// again answers, and when it cannot be read either the answer is a clear error, never a
/// wrong value.
#[test]
fn a_page_the_store_cannot_vouch_for_is_read_whole_or_refused() {
    let kernel = "6.1.0-56-amd64";
    let whole = Btf::parse(kernel, raw_btf(kernel)).expect("parse");
    let (btf, _) = paged(kernel, 100, true, usize::MAX);
    for id in whole.own_ids().step_by(97) {
        assert_eq!(whole.raw(id).expect("raw"), btf.raw(id).expect("raw"), "{id}");
        assert_eq!(whole.name(id).expect("name"), btf.name(id).expect("name"), "{id}");
    }
    let (btf, _) = paged(kernel, 100, false, usize::MAX);
    let on_100 = whole.own_ids().find(|&id| whole.raw(id).expect("raw").offset / BLOB_PAGE == 100).expect("a type");
    let err = btf.raw(on_100).map(|_| ()).expect_err("page 100 cannot be read");
    assert!(err.to_string().contains("could not be read"), "{err}");
    // The pages it could read still answer.
    assert_eq!(whole.raw(BtfTypeId(1)).expect("raw"), btf.raw(BtfTypeId(1)).expect("raw"));
}

/// Decoded types are kept (`get`): asked again, every type answers as the first time,
/// whether it was kept or not (a blob keeps 32,768), and a type on a page that cannot be
/// read is the same error every time, never a kept answer.
#[test]
fn a_type_asked_again_answers_as_the_first_time() {
    let kernel = "6.1.0-56-amd64";
    let whole = Btf::parse(kernel, raw_btf(kernel)).expect("parse");
    let ids: Vec<TypeRef> = whole.own_ids().map(|id| TypeRef(u64::from(id.0))).collect();
    assert!(ids.len() > 40_000, "more types than are kept");
    let ask = |b: &Btf| ids.iter().map(|&t| format!("{:?}", b.get(t))).collect::<Vec<_>>();
    let cold = ask(&whole);
    assert!(cold == ask(&whole), "asked again");
    let shared: Vec<String> = ids.iter().map(|&t| format!("{:?}", whole.get_shared(t))).collect();
    assert!(cold == shared, "get_shared answers as get");
    let (btf, _) = paged(kernel, 100, false, usize::MAX);
    let on_100 = whole.own_ids().find(|&id| whole.raw(id).expect("raw").offset / BLOB_PAGE == 100).expect("a type");
    let t = TypeRef(u64::from(on_100.0));
    let first = btf.get(t).map(|_| ()).expect_err("page 100 cannot be read").to_string();
    assert!(first.contains("could not be read"), "{first}");
    assert_eq!(btf.get(t).map(|_| ()).expect_err("still unreadable").to_string(), first);
    assert_eq!(format!("{:?}", btf.get(TypeRef(1))), cold[0]);
}

/// A stored layout of another blob, or not a layout, is not used: the caller reads whole.
#[test]
fn a_layout_that_does_not_fit_is_refused() {
    let bytes = raw_btf("6.1.0-56-amd64");
    let other = Btf::parse("x", raw_btf("6.12.117+deb12-amd64")).expect("parse").layout().expect("layout");
    let own = Btf::parse("x", bytes.clone()).expect("parse").layout().expect("layout");
    let store = || {
        Box::new(Store {
            bytes: bytes.clone(),
            reads: Default::default(),
            read_bytes: Default::default(),
            bad: usize::MAX,
            whole: false,
            many: usize::MAX,
        })
    };
    assert!(Btf::open_paged("x", store(), &other).expect("header fine").is_none());
    assert!(Btf::open_paged("x", store(), &own[..own.len() - 4]).expect("header fine").is_none());
    assert!(Btf::open_paged("x", store(), b"nonsense").expect("header fine").is_none());
    let mut shifted = own.clone();
    shifted[24] ^= 4; // the second group's start moved by a word
    let btf = Btf::open_paged("x", store(), &shifted).expect("header fine").expect("still ordered");
    // Its walk does not end where the next group starts: an error, not a wrong type.
    assert!(btf.raw(BtfTypeId(LAYOUT_GROUP as u32 + 5)).is_err());
}
