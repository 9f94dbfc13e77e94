//! member_at / resolve_member / C type names on real kernels, with offsets taken from
//! pahole's recorded layouts of 6.12 (fixtures/kernels/6.12.117+deb12-amd64/reference).

mod btf_common;

use btf_common::btf;
use fevlint_types::layout::{declaration, member_at, resolve_member, type_name, Placement};
use fevlint_types::model::{Type, TypeNamespace, TypeRef, TypeSource};

const K: &str = "6.12.117+deb12-amd64";

fn st(name: &str) -> TypeRef {
    btf(K).find_type(TypeNamespace::Struct, name).expect("lookup")[0]
}

#[test]
fn member_at_descends_into_nested_members() {
    let b = btf(K);
    let hits = member_at(b.as_ref(), st("file"), 72).expect("member_at");
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].dotted(), "f_path.dentry");
    assert_eq!((hits[0].offset, hits[0].size, &hits[0].place), (72, 8, &Placement::Start));
    assert_eq!(type_name(b.as_ref(), hits[0].ty).expect("name"), "struct dentry *");

    let hits = member_at(b.as_ref(), st("file"), 13).expect("member_at");
    assert_eq!(hits[0].dotted(), "f_mode");
    assert_eq!(hits[0].place, Placement::Inside { delta: 1 });

    // The anonymous union at 80: both alternatives, the union itself left out of the path.
    let hits = member_at(b.as_ref(), st("file"), 80).expect("member_at");
    let paths: Vec<_> = hits.iter().map(|h| h.dotted()).collect();
    assert_eq!(paths, ["f_pos_lock.owner.counter", "f_pipe"]);
    // 88 is inside f_pos_lock (32 bytes) but past f_pipe (8 bytes).
    // (f_pos_lock.wait_lock is a spinlock whose arch lock is itself a union.)
    let hits = member_at(b.as_ref(), st("file"), 88).expect("member_at");
    assert!(!hits.is_empty());
    for h in &hits {
        assert!(h.dotted().starts_with("f_pos_lock.wait_lock."), "{h:?}");
        assert_eq!(h.place, Placement::Start);
    }

    assert!(member_at(b.as_ref(), st("file"), 184).expect("past end").is_empty());
}

#[test]
fn member_at_bitfields_arrays_and_holes() {
    let b = btf(K);
    let skb = st("sk_buff");
    // Byte 126 holds seven bitfields (cloned:1 .. pp_recycle:1).
    let hits = member_at(b.as_ref(), skb, 126).expect("member_at");
    let names: Vec<_> = hits.iter().map(|h| h.dotted()).collect();
    assert_eq!(names, ["cloned", "nohdr", "fclone", "peeked", "head_frag", "pfmemalloc", "pp_recycle"]);
    assert_eq!((hits[2].bit_offset, hits[2].bitfield_size), (126 * 8 + 2, 2));

    // char cb[48] at 40.
    let hits = member_at(b.as_ref(), skb, 50).expect("member_at");
    assert_eq!(hits[0].dotted(), "cb[10]");
    assert_eq!((hits[0].offset, hits[0].size, &hits[0].place), (50, 1, &Placement::Start));

    // pahole: end at 192 (4 bytes), "XXX 4 bytes hole", head at 200.
    let hits = member_at(b.as_ref(), skb, 197).expect("member_at");
    assert_eq!(hits.len(), 1);
    assert_eq!((hits[0].offset, hits[0].size, &hits[0].place), (196, 4, &Placement::Padding));
}

#[test]
fn resolve_member_by_name() {
    let b = btf(K);
    let m = resolve_member(b.as_ref(), st("file"), "f_path.dentry").expect("resolve").expect("found");
    assert_eq!((m.offset, m.size), (72, 8));
    let m = resolve_member(b.as_ref(), st("file"), "f_pos_lock").expect("resolve").expect("through anon union");
    assert_eq!((m.offset, m.size), (80, 32));
    let m = resolve_member(b.as_ref(), st("sk_buff"), "cb[3]").expect("resolve").expect("array element");
    assert_eq!((m.offset, m.size), (43, 1));
    let m = resolve_member(b.as_ref(), st("sk_buff"), "fclone").expect("resolve").expect("bitfield");
    assert_eq!((m.bit_offset, m.bitfield_size, m.offset), (126 * 8 + 2, 2, 126));
    assert!(resolve_member(b.as_ref(), st("file"), "f_path.nope").expect("resolve").is_none());
    assert!(resolve_member(b.as_ref(), st("file"), "f_mode.x").expect("resolve").is_none());
}

#[test]
fn c_type_names() {
    let b = btf(K);
    let src: &dyn TypeSource = b.as_ref();
    let f = &b.functions("vfs_read").expect("vfs_read")[0];
    let params: Vec<_> = f.proto.params.iter().map(|p| type_name(src, p.ty).expect("name")).collect();
    assert_eq!(params, ["struct file *", "char *", "size_t", "loff_t *"]);
    let f_op = resolve_member(src, st("file"), "f_op").expect("resolve").expect("f_op");
    assert_eq!(type_name(src, f_op.ty).expect("name"), "const struct file_operations *");
    let cb = resolve_member(src, st("sk_buff"), "cb").expect("resolve").expect("cb");
    assert_eq!(type_name(src, cb.ty).expect("name"), "char[48]");
    assert_eq!(declaration(src, cb.ty, "cb").expect("decl"), "char cb[48]");
    let d = resolve_member(src, st("sk_buff"), "destructor").expect("resolve").expect("destructor");
    assert_eq!(type_name(src, d.ty).expect("name"), "void (*)(struct sk_buff *)");
    assert_eq!(declaration(src, d.ty, "destructor").expect("decl"), "void (*destructor)(struct sk_buff *)");
    let printk = &b.functions("_printk").expect("printk")[0];
    assert_eq!(type_name(src, printk.proto.params[0].ty).expect("name"), "const char *");
    // A const pointer (not pointer to const): `struct file_operations` has none, so build one.
    let Type::Pointer { target } = src.get(f_op.ty).expect("ptr") else { panic!() };
    assert!(matches!(src.get(target).expect("const"), Type::Qualified { .. }));
}
