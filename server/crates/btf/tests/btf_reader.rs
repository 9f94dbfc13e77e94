//! The BTF reader against the real kernel blobs (counts from each SOURCE.md) and against
//! hand-made blobs for the cases the kernels do not show: split BTF, cycles, bad input.

mod btf_common;

use std::sync::Arc;
use std::time::Instant;

use btf_common::{btf, raw_btf, source_stats, Builder, KERNELS};
use fevlint_btf::{Btf, BtfKind, BtfTypeId};
use fevlint_types::model::{ForwardKind, ModelError, Qualifier, Type, TypeNamespace, TypeRef, TypeSource};

#[test]
fn kind_counts_match_source_md() {
    for kernel in KERNELS {
        let b = btf(kernel);
        let stats = source_stats(kernel);
        let stat = |k: &str| stats.iter().find(|s| s.0 == k).map(|s| s.1).unwrap_or(0);
        assert_eq!(b.len() as u64, stat("bytes"), "{kernel}");
        assert_eq!(b.own_type_count() as u64, stat("types"), "{kernel}");
        assert_eq!(u64::from(b.header().str_len), stat("strings_bytes"), "{kernel}");
        let counts = b.kind_counts().expect("counts");
        for kind in BtfKind::ALL {
            assert_eq!(counts[kind as usize - 1] as u64, stat(kind.name()), "{kernel} {}", kind.name());
        }
        assert_eq!(b.pointer_size(), 8, "{kernel}");
    }
}

#[test]
fn every_type_decodes_in_every_kernel() {
    for kernel in KERNELS {
        let b = btf(kernel);
        let mut non_c = 0;
        for id in b.own_ids() {
            let r = TypeRef(u64::from(id.0));
            match b.get(r) {
                Ok(_) => {
                    b.size_of(r).expect("size_of");
                }
                Err(ModelError::Malformed { what, .. }) if what.contains("not a C type") => non_c += 1,
                Err(e) => panic!("{kernel} {id}: {e}"),
            }
        }
        let s = source_stats(kernel);
        let stat = |k: &str| s.iter().find(|x| x.0 == k).map(|x| x.1).unwrap_or(0);
        assert_eq!(non_c as u64, stat("VAR") + stat("DATASEC") + stat("DECL_TAG"), "{kernel}");
    }
}

/// `is_struct` reads a record's kind only; it says what decoding the type and following
/// its typedefs and qualifiers says, for every type of a kernel (structs, unions,
/// forward declarations, typedefs of each).
#[test]
fn is_struct_agrees_with_the_decoded_type() {
    let b = btf("6.12.117+deb12-amd64");
    let mut structs = 0;
    for id in b.own_ids() {
        let r = TypeRef(u64::from(id.0));
        let Ok((_, t)) = fevlint_types::layout::strip(&*b, r) else { continue };
        let want = matches!(t, Type::Struct(_));
        assert_eq!(b.is_struct(r).expect("is_struct"), want, "{id}");
        structs += usize::from(want);
    }
    assert!(structs > 5000, "{structs}");
    assert!(!b.is_struct(TypeRef(0)).expect("void"));
}

#[test]
fn struct_file_and_friends() {
    let b = btf("6.12.117+deb12-amd64");
    let hits = b.find_type(TypeNamespace::Struct, "file").expect("lookup");
    assert_eq!(hits.len(), 1);
    assert_eq!(b.size_of(hits[0]).expect("size"), Some(184));
    let Type::Struct(c) = b.get(hits[0]).expect("get") else { panic!("not a struct") };
    assert_eq!(c.name.as_deref(), Some("file"));
    assert_eq!(c.members.len(), 19);
    let f_path = c.members.iter().find(|m| m.name.as_deref() == Some("f_path")).expect("f_path");
    assert_eq!(f_path.bit_offset, 64 * 8);
    // Anonymous union of f_pos_lock / f_pipe.
    assert!(c.members.iter().any(|m| m.name.is_none() && m.bit_offset == 80 * 8));

    // Bitfields (kind_flag struct): sk_buff.cloned is 1 bit at byte 126 bit 0.
    let skb = b.find_type(TypeNamespace::Struct, "sk_buff").expect("lookup")[0];
    let Type::Struct(c) = b.get(skb).expect("get") else { panic!() };
    let cloned = c.members.iter().find(|m| m.name.as_deref() == Some("cloned")).expect("cloned");
    assert_eq!((cloned.bit_offset, cloned.bitfield_size), (126 * 8, 1));

    assert!(b.find_type(TypeNamespace::Struct, "no_such_struct_xyz").expect("lookup").is_empty());
    assert!(b.find_type(TypeNamespace::Union, "file").expect("lookup").is_empty());
    let u64t = b.find_type(TypeNamespace::Ordinary, "u64").expect("lookup");
    assert_eq!(b.size_of(u64t[0]).expect("size"), Some(8));
    let int = b.find_type(TypeNamespace::Ordinary, "int").expect("lookup");
    assert!(matches!(b.get(int[0]).expect("int"), Type::Int { size: 4, signed: true, is_char: false, .. }));
    let uc = b.find_type(TypeNamespace::Ordinary, "unsigned char").expect("lookup");
    assert!(matches!(b.get(uc[0]).expect("uc"), Type::Int { size: 1, signed: false, is_char: true, .. }));
    let bool_t = b.find_type(TypeNamespace::Ordinary, "_Bool").expect("lookup");
    assert!(matches!(b.get(bool_t[0]).expect("bool"), Type::Int { is_bool: true, .. }));
}

#[test]
fn functions_keep_every_duplicate() {
    // Expected counts from `bpftool btf dump file X format raw`: names of several FUNCs.
    for (kernel, dups) in [("6.1.0-47-amd64", 498), ("6.1.0-56-amd64", 404)] {
        let b = btf(kernel);
        let ids = b.function_ids();
        let mut names: Vec<&str> = ids.iter().map(|&id| b.name(id).expect("name").expect("named")).collect();
        let funcs = source_stats(kernel).iter().find(|s| s.0 == "FUNC").map(|s| s.1).expect("FUNC count");
        assert_eq!(names.len() as u64, funcs);
        names.sort_unstable();
        let mut dup_names = 0;
        let mut extra_entries = 0;
        let mut i = 0;
        while i < names.len() {
            let j = names[i..].iter().take_while(|n| **n == names[i]).count();
            if j > 1 {
                dup_names += 1;
                let fns = b.functions(names[i]).expect("functions");
                assert_eq!(fns.len(), j, "{kernel} {}", names[i]);
                extra_entries += j - 1;
            }
            i += j;
        }
        assert_eq!(dup_names, dups, "{kernel}: names with several FUNC entries");
        // Every FUNC's name, repeats included; each name once after deduplication.
        let mut all = b.function_names().expect("names");
        assert_eq!(all.len(), names.len());
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), names.len() - extra_entries);
    }
    let b = btf("6.12.117+deb12-amd64");
    let vfs_read = b.functions("vfs_read").expect("vfs_read");
    assert_eq!(vfs_read.len(), 1);
    let f = &vfs_read[0];
    // pahole writes every vmlinux FUNC with linkage static (bpftool agrees:
    // `FUNC 'vfs_read' type_id=44123 linkage=static`), so BTF cannot tell here.
    assert!(f.is_static);
    let names: Vec<_> = f.proto.params.iter().map(|p| p.name.as_deref().unwrap_or("")).collect();
    assert_eq!(names, ["file", "buf", "count", "pos"]);
    assert_eq!(b.size_of(f.proto.ret.expect("ret")).expect("size"), Some(8));
    // printk is variadic.
    assert!(b.functions("_printk").expect("printk")[0].proto.variadic);
    assert!(b.functions("definitely_not_a_function").expect("none").is_empty());
}

#[test]
fn newer_kinds_in_6_18() {
    let b = btf("6.18.44-fc-v769");
    let mut tag = None;
    let mut enum64_signed_or_big = false;
    for id in b.own_ids() {
        let raw = b.raw(id).expect("raw");
        match raw.kind {
            BtfKind::TypeTag => tag = Some(id),
            BtfKind::Enum64 => {
                if let Type::Enum { size, values, .. } = b.get(TypeRef(u64::from(id.0))).expect("enum64") {
                    assert_eq!(size, 8);
                    enum64_signed_or_big |= values.iter().any(|v| v.1 > i128::from(u32::MAX) || v.1 < 0);
                }
            }
            _ => {}
        }
    }
    assert!(enum64_signed_or_big, "ENUM64 values beyond 32 bits decode");
    let tag = tag.expect("6.18 has a TYPE_TAG");
    assert!(matches!(
        b.get(TypeRef(u64::from(tag.0))).expect("tag"),
        Type::Qualified { qualifier: Qualifier::TypeTag, .. }
    ));
}

/// A split blob on top of a real vmlinux: ids and string offsets continue the base.
#[test]
fn split_btf_continues_the_base() {
    let base = btf("6.12.117+deb12-amd64");
    let file = base.find_type(TypeNamespace::Struct, "file").expect("file")[0].0 as u32;
    let int = base.find_type(TypeNamespace::Ordinary, "int").expect("int")[0].0 as u32;
    let base_next = base.next_id();
    let mut b = Builder::split(base.header().str_len);
    // [n] PTR -> struct file; [n+1] STRUCT my_mod { struct file *f; int x; int y:3; }
    b.ty(0, 2, false, 0, file, &[]);
    let (name, f, x, y) = (b.str("my_mod"), b.str("f"), b.str("x"), b.str("y"));
    b.ty(name, 4, true, 3, 16, &[f, base_next, 0, x, int, 64, y, int, (3 << 24) | 96]);
    // [n+2] FUNC_PROTO int (struct my_mod *, ...); [n+3] PTR my_mod; [n+4] FUNC my_fn
    let p = b.str("m");
    b.ty(0, 13, false, 2, int, &[p, base_next + 3, 0, 0]);
    b.ty(0, 2, false, 0, base_next + 1, &[]);
    let fname = b.str("vfs_read"); // same name as a base function
    b.ty(fname, 12, false, 0, base_next + 2, &[]);
    let split = Btf::parse_split("my_mod.ko", b.build(), base.clone()).expect("split parses");
    assert_eq!(split.first_id(), BtfTypeId(base_next));
    let my = split.find_type(TypeNamespace::Struct, "my_mod").expect("lookup");
    assert_eq!(my, [TypeRef(u64::from(base_next + 1))]);
    let Type::Struct(c) = split.get(my[0]).expect("get") else { panic!() };
    assert_eq!(c.members[2].bitfield_size, 3);
    assert_eq!(c.members[2].bit_offset, 96);
    // A base type through the split source.
    assert_eq!(split.find_type(TypeNamespace::Struct, "file").expect("file"), [TypeRef(u64::from(file))]);
    assert_eq!(split.size_of(TypeRef(u64::from(file))).expect("size"), Some(184));
    let fns = split.functions("vfs_read").expect("fns");
    assert_eq!(fns.len(), 2, "base vfs_read and the module's");
    assert!(fns[1].is_static && fns[1].proto.variadic);
    assert_eq!(fns[1].proto.params[0].name.as_deref(), Some("m"));
    assert!(matches!(split.get(TypeRef(u64::from(base_next + 5))), Err(ModelError::NoSuchType { .. })));
}

#[test]
fn cycles_are_too_deep_not_hangs() {
    let mut b = Builder::new();
    let t = b.str("loop_t");
    b.ty(t, 8, false, 0, 2, &[]); // [1] typedef -> [2]
    b.ty(0, 10, false, 0, 1, &[]); // [2] const -> [1]
    let a = b.str("arr");
    b.ty(0, 3, false, 0, 0, &[3, 0, 4]); // [3] array of itself
    let _ = a;
    let btf = Btf::parse("cycle", b.build()).expect("parses");
    assert!(matches!(btf.size_of(TypeRef(1)), Err(ModelError::TooDeep { .. })));
    assert!(matches!(btf.size_of(TypeRef(3)), Err(ModelError::TooDeep { .. })));
    let e = fevlint_types::layout::type_name(&btf, TypeRef(3)).expect_err("cycle");
    assert!(matches!(e, ModelError::TooDeep { .. }), "{e}");
}

#[test]
fn forward_declarations_come_after_definitions() {
    let mut b = Builder::new();
    let n = b.str("thing");
    b.ty(n, 7, false, 0, 0, &[]); // [1] struct thing;
    b.ty(n, 4, false, 0, 8, &[]); // [2] struct thing {} (size 8)
    b.ty(n, 7, true, 0, 0, &[]); // [3] union thing;
    b.ty(n, 6, false, 0, 4, &[]); // [4] enum thing; (no values)
    let btf = Btf::parse("fwd", b.build()).expect("parses");
    assert_eq!(btf.find_type(TypeNamespace::Struct, "thing").expect("s"), [TypeRef(2), TypeRef(1)]);
    assert_eq!(btf.find_type(TypeNamespace::Union, "thing").expect("u"), [TypeRef(3)]);
    assert!(matches!(btf.get(TypeRef(3)).expect("fwd"), Type::Forward { kind: ForwardKind::Union, .. }));
    assert!(matches!(btf.get(TypeRef(4)).expect("fwd"), Type::Forward { kind: ForwardKind::Enum, .. }));
    assert_eq!(btf.size_of(TypeRef(1)).expect("fwd"), None);
}

#[test]
fn malformed_headers_are_named_errors() {
    let good = Builder::new().build();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good[..10].to_vec(), "too short"),
        (
            {
                let mut v = good.clone();
                v[0] = 0;
                v
            },
            "bad magic",
        ),
        (
            {
                let mut v = good.clone();
                v[2] = 2;
                v
            },
            "version",
        ),
        (
            {
                let mut v = good.clone();
                v[4] = 200;
                v
            },
            "header length",
        ),
        (
            {
                let mut v = good.clone();
                v[20] = 99;
                v
            },
            "string section",
        ),
        (
            {
                let mut v = good.clone();
                v.push(1);
                v[20] = 2;
                v
            },
            "end with NUL",
        ),
    ];
    for (blob, want) in cases {
        let err = Btf::parse("bad.btf", blob).expect_err(want);
        let msg = err.to_string();
        assert!(msg.starts_with("bad.btf: ") && msg.contains(want) && msg.contains("offset 0x"), "{msg}");
    }
    // A struct claiming 65535 members in a 12-byte section.
    let mut b = Builder::new();
    b.ty(0, 4, false, 0xffff, 8, &[]);
    let err = Btf::parse("vlen.btf", b.build()).expect_err("absurd vlen");
    assert!(err.to_string().contains("runs past the end"), "{err}");
    let mut b = Builder::new();
    b.ty(0, 20, false, 0, 0, &[]);
    let err = Btf::parse("kind.btf", b.build()).expect_err("kind 20");
    assert!(err.to_string().contains("unknown BTF kind 20"), "{err}");
}

/// Walks the types near `around` through every query; must not panic.
fn poke(btf: &Btf, around: u32) {
    let lo = around.saturating_sub(300).max(1);
    for id in lo..(around + 300).min(btf.next_id() + 2) {
        let r = TypeRef(u64::from(id));
        let _ = btf.get(r);
        let _ = btf.size_of(r);
        let _ = fevlint_types::layout::type_name(btf, r);
        let _ = fevlint_types::layout::print_struct(btf, r);
        let _ = fevlint_types::layout::member_at(btf, r, 8);
    }
    let _ = btf.find_type(TypeNamespace::Struct, "file");
    let _ = btf.functions("vfs_read");
}

#[test]
fn damaged_real_blobs_never_panic() {
    let raw = raw_btf("6.12.117+deb12-amd64");
    let start = Instant::now();
    // Truncation: the header then claims more than there is.
    for cut in (0..raw.len()).step_by(raw.len() / 97).chain([1, 23, 24, 25, raw.len() - 1]) {
        let err = Btf::parse("cut", raw[..cut].to_vec()).expect_err("truncated blob must fail");
        assert!(matches!(err, ModelError::Malformed { .. }));
    }
    // Byte flips spread over the type section (deterministic LCG positions).
    let mut seed: u64 = 0x1234_5678;
    let mut opened = 0;
    for round in 0..40 {
        let mut blob = raw.to_vec();
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let pos = 24 + (seed >> 33) as usize % (blob.len() - 24);
        blob[pos] ^= [0xff, 0x80, 0x01, 0x7f][round % 4];
        if let Ok(b) = Btf::parse("flip", blob) {
            opened += 1;
            // Find the type the flip landed in (roughly: by scanning offsets).
            let id = b.own_ids().find(|id| b.raw(*id).map(|r| r.offset >= pos).unwrap_or(true)).map_or(1, |i| i.0);
            poke(&b, id);
        }
    }
    assert!(opened > 0, "some flips land in data the parser cannot validate up front");
    // Absurd vlen on a real STRUCT record: either past the end, or a misparse later.
    let b = btf("6.12.117+deb12-amd64");
    let file = b.find_type(TypeNamespace::Struct, "file").expect("file")[0];
    let rec = b.raw(BtfTypeId(file.0 as u32)).expect("raw").offset;
    let mut blob = raw.to_vec();
    blob[rec + 4] = 0xff;
    blob[rec + 5] = 0xff;
    if let Ok(b) = Btf::parse("vlen", blob) {
        poke(&b, file.0 as u32);
    }
    assert!(start.elapsed().as_secs() < 60, "damaged input handled quickly: {:?}", start.elapsed());
}

#[test]
fn zero_copy_owners() {
    let raw = raw_btf("6.1.0-56-amd64");
    let from_arc = Btf::parse("arc", raw.clone()).expect("Arc<[u8]>");
    let from_vec = Btf::parse("vec", raw.to_vec()).expect("Vec<u8>");
    assert_eq!(from_arc.bytes().map(<[u8]>::as_ptr), Some(raw.as_ptr()));
    assert_eq!(from_arc.own_type_count(), from_vec.own_type_count());
    let _: Arc<dyn TypeSource> = Arc::new(from_vec);
}

/// An index store in memory, counting what was put.
#[derive(Default)]
struct MemStore(std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>);

impl fevlint_btf::IndexStore for MemStore {
    fn get(&self, name: &str) -> Option<fevlint_btf::IndexBytes> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(name).map(|b| Box::new(b.clone()) as fevlint_btf::IndexBytes)
    }
    fn put(&self, name: &str, bytes: &[u8]) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_owned(), bytes.to_vec());
    }
}

/// The structs embedding a type at offset 0 (what an offset past a struct's end may be
/// read in) are listed once and kept in the index store: a later blob reads them back
/// and answers as the listing did; a damaged entry (cut short, an id past the blob, out
/// of order) is listed again, never believed.
#[test]
fn embedders_are_kept_in_the_index_store_and_checked() {
    use fevlint_btf::IndexStore;
    let kernel = "6.12.117+deb12-amd64";
    let bytes = btf_common::raw_btf(kernel);
    let store = std::sync::Arc::new(MemStore::default());
    let open = || {
        fevlint_btf::Btf::parse("vmlinux.btf", bytes.clone())
            .expect("parse")
            .with_index_cache("k".into(), store.clone())
    };
    let plain = btf_common::btf(kernel);
    let ids: Vec<TypeRef> = ["list_head", "sock", "sock_common", "inode", "file"]
        .iter()
        .map(|n| plain.find_type(TypeNamespace::Struct, n).expect("lookup")[0])
        .collect();
    let want: Vec<Vec<TypeRef>> = ids.iter().map(|&t| plain.embedders(t).expect("embedders")).collect();
    // `struct sock` starts with `struct sock_common` (tcp_sock and others embed sock).
    assert!(want[2].contains(&ids[1]), "{want:?}");
    let answers = |b: &fevlint_btf::Btf| ids.iter().map(|&t| b.embedders(t).expect("embedders")).collect::<Vec<_>>();
    assert_eq!(answers(&open()), want);
    let stored = store.0.lock().unwrap_or_else(|e| e.into_inner()).get("k.btfemb1").cloned().expect("stored");
    assert!(!stored.is_empty() && stored.len() % 8 == 0);
    assert_eq!(answers(&open()), want);
    let next = open().next_id();
    let mut cut = stored.clone();
    cut.pop();
    let mut wild = stored.clone();
    wild[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    let mut past = stored.clone();
    let n = past.len();
    past[n - 8..n - 4].copy_from_slice(&next.to_le_bytes());
    let reversed: Vec<u8> = stored.chunks_exact(8).rev().flatten().copied().collect();
    for bad in [cut, wild, past, reversed] {
        store.put("k.btfemb1", &bad);
        assert_eq!(answers(&open()), want);
        assert_eq!(store.0.lock().unwrap_or_else(|e| e.into_inner())["k.btfemb1"], stored, "listed again");
    }
}

/// An index store that reads name indexes a piece at a time ([`fevlint_btf::IndexStore::paged`]),
/// counting the bytes handed out, and that can be told to refuse every piece (a cache
/// file cut or changed under a live reader).
#[derive(Default)]
struct PagedStore {
    map: std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>,
    refuse: Arc<std::sync::atomic::AtomicBool>,
    read: Arc<std::sync::atomic::AtomicUsize>,
}

struct MemPages {
    bytes: Vec<u8>,
    refuse: Arc<std::sync::atomic::AtomicBool>,
    read: Arc<std::sync::atomic::AtomicUsize>,
}

impl fevlint_btf::PagedBytes for MemPages {
    fn len(&self) -> usize {
        self.bytes.len()
    }
    fn read(&self, range: std::ops::Range<usize>) -> Option<std::borrow::Cow<'_, [u8]>> {
        if self.refuse.load(std::sync::atomic::Ordering::Relaxed) {
            return None;
        }
        self.read.fetch_add(range.len(), std::sync::atomic::Ordering::Relaxed);
        self.bytes.get(range).map(std::borrow::Cow::Borrowed)
    }
}

impl fevlint_btf::IndexStore for PagedStore {
    fn get(&self, _: &str) -> Option<fevlint_btf::IndexBytes> {
        None
    }
    fn put(&self, _: &str, _: &[u8]) {}
    fn paged(&self) -> bool {
        true
    }
    fn get_paged(&self, name: &str) -> Option<fevlint_btf::IndexPages> {
        let bytes = self.map.lock().unwrap_or_else(|e| e.into_inner()).get(name)?.clone();
        Some(Box::new(MemPages { bytes, refuse: self.refuse.clone(), read: self.read.clone() }))
    }
    fn put_paged(&self, name: &str, bytes: &[u8]) {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_owned(), bytes.to_vec());
    }
}

/// Name indexes read a piece at a time answer as a fresh build: a few lookups read a
/// small part of the index, a script's worth reads it whole once, and a store that stops
/// vouching for its pieces mid-use is replaced by an index built from the type records.
#[test]
fn paged_name_indexes_answer_as_built_ones() {
    use std::sync::atomic::Ordering;
    let kernel = "6.12.117+deb12-amd64";
    let bytes = btf_common::raw_btf(kernel);
    let store = Arc::new(PagedStore::default());
    let open = || Btf::parse("vmlinux.btf", bytes.clone()).expect("parse").with_index_cache("k".into(), store.clone());
    let plain = btf(kernel);
    let funcs = ["vfs_read", "tcp_sendmsg", "no_such_function", "do_sys_openat2", "schedule"];
    let structs = ["file", "task_struct", "no_such_struct", "sock"];
    let answers = |b: &Btf| {
        let f: Vec<_> = funcs.iter().map(|n| b.functions(n).expect("functions").len()).collect();
        let s: Vec<_> = structs.iter().map(|n| b.find_type(TypeNamespace::Struct, n).expect("find")).collect();
        let e: Vec<Vec<BtfTypeId>> =
            ["task_struct___old", "file"].iter().map(|n| b.essential_candidates(n.as_bytes()).collect()).collect();
        (f, s, e)
    };
    let want = answers(&plain);
    assert_eq!(answers(&open()), want, "built and stored");
    let stored = store.map.lock().unwrap_or_else(|e| e.into_inner()).get("k-4.btfidx2").map(Vec::len).expect("stored");
    assert_eq!(answers(&open()), want, "read a piece at a time");
    let read = store.read.swap(0, Ordering::Relaxed);
    assert!(read > 0 && read < stored / 4, "{read} bytes of a {stored}-byte function index and the others");
    // Many lookups: the index is read a piece at a time still (the store keeps what it
    // read), and answers the same.
    let b = open();
    for _ in 0..100 {
        assert_eq!(b.functions("vfs_read").expect("functions").len(), want.0[0]);
    }
    assert_eq!(answers(&b), want);
    // The store stops vouching for its pieces: the lookups are answered from a rebuilt index.
    let b = open();
    assert_eq!(b.functions("vfs_read").expect("functions").len(), want.0[0]);
    store.refuse.store(true, Ordering::Relaxed);
    assert_eq!(answers(&b), want, "rebuilt after a refused piece");
    assert_eq!(b.function_ids().len(), plain.function_ids().len());
}

/// The kernel's types read whole: a source that tells no tag, so that a C name is
/// printed from the decoded type the pointer targets (as before `TypeSource::tag`).
#[derive(Debug)]
struct Whole<'a>(&'a Btf);

impl TypeSource for Whole<'_> {
    fn tag(&self, _ty: TypeRef) -> Result<Option<(ForwardKind, Option<String>)>, ModelError> {
        Ok(None)
    }
    fn describe(&self) -> String {
        self.0.describe()
    }
    fn get(&self, ty: TypeRef) -> Result<Type, ModelError> {
        self.0.get(ty)
    }
    fn get_shared(&self, ty: TypeRef) -> Result<Arc<Type>, ModelError> {
        self.0.get_shared(ty)
    }
    fn size_of(&self, ty: TypeRef) -> Result<Option<u64>, ModelError> {
        self.0.size_of(ty)
    }
    fn find_type(&self, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError> {
        self.0.find_type(ns, name)
    }
    fn functions(&self, name: &str) -> Result<Vec<fevlint_types::model::FunctionInfo>, ModelError> {
        self.0.functions(name)
    }
    fn function_names(&self) -> Result<Vec<String>, ModelError> {
        self.0.function_names()
    }
    fn pointer_size(&self) -> u32 {
        self.0.pointer_size()
    }
}

/// `Btf::tag` reads a struct's, union's or enum's kind and name from its record alone:
/// the same as the decoded type says (an enum without values decodes as a forward
/// declaration of that name), and every pointer's C name and every 10th function's
/// pahole prototype print the same as from the types read whole.
#[test]
fn a_tag_read_from_the_record_names_as_the_whole_type() {
    use fevlint_types::layout;
    for kernel in ["6.1.0-47-amd64", "6.18.44-fc-v769"] {
        let b = btf(kernel);
        let whole = Whole(&b);
        let (mut tagged, mut pointers) = (0, 0);
        for id in b.own_ids() {
            let ty = TypeRef(u64::from(id.0));
            let shallow = b.tag(ty).expect("tag");
            // VAR and DATASEC records are no C types.
            let Ok(t) = b.get(ty) else {
                assert_eq!(shallow, None, "{kernel} {ty:?}");
                continue;
            };
            let decoded = match t {
                Type::Struct(c) => Some((ForwardKind::Struct, c.name)),
                Type::Union(c) => Some((ForwardKind::Union, c.name)),
                Type::Enum { name, .. } => Some((ForwardKind::Enum, name)),
                Type::Forward { kind: ForwardKind::Enum, name } => Some((ForwardKind::Enum, Some(name))),
                _ => None,
            };
            assert_eq!(shallow, decoded, "{kernel} {ty:?}");
            tagged += usize::from(shallow.is_some());
            if b.raw(id).expect("record").kind == BtfKind::Ptr {
                pointers += 1;
                assert_eq!(layout::type_name(&*b, ty).ok(), layout::type_name(&whole, ty).ok(), "{kernel} {ty:?}");
            }
        }
        assert!(tagged > 10_000 && pointers > 1_000, "{kernel}: {tagged} tagged, {pointers} pointers");
        for name in b.function_names().expect("names").iter().step_by(10) {
            for f in b.functions(name).expect("functions") {
                assert_eq!(
                    layout::pahole_prototype(&*b, &f).ok(),
                    layout::pahole_prototype(&whole, &f).ok(),
                    "{kernel} {name}"
                );
            }
        }
    }
}
