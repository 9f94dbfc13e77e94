//! DWARF and BTF agree: the same C program, compiled with gcc (DWARF 5 and 4), read
//! through the DWARF reader and through the BTF that `pahole -J` makes from it, gives
//! the same answers for every struct, union, typedef, enum and function.

use std::path::Path;
use std::sync::Arc;

use fevlint_btf::{Btf, BtfKind};
use fevlint_dwarf::Dwarf;
use fevlint_load::elf::KernelElf;
use fevlint_load::Blob;
use fevlint_testkit::dwarf::{add_btf, compile_agree, scratch};
use fevlint_types::layout::{member_at, print_struct, resolve_member, type_name};
use fevlint_types::model::{FunctionInfo, Type, TypeNamespace, TypeRef, TypeSource};

fn open_both(path: &Path) -> (Dwarf, Btf) {
    let elf = KernelElf::parse(Blob::read(path).expect("read"), path).expect("elf");
    let btf_bytes = elf.btf().expect("pahole -J added no .BTF").to_vec();
    let btf = Btf::parse("btf", btf_bytes).expect("btf");
    let dwarf = Dwarf::new(Arc::new(elf)).expect("dwarf").with_cache_dir(None);
    (dwarf, btf)
}

/// Named BTF types of the kinds a lookup can ask for.
fn btf_named(btf: &Btf) -> Vec<(TypeNamespace, String)> {
    let mut out = Vec::new();
    for id in btf.own_ids() {
        let raw = btf.raw(id).expect("raw");
        let ns = match raw.kind {
            BtfKind::Struct => TypeNamespace::Struct,
            BtfKind::Union => TypeNamespace::Union,
            BtfKind::Enum | BtfKind::Enum64 => TypeNamespace::Enum,
            BtfKind::Typedef | BtfKind::Int | BtfKind::Float => TypeNamespace::Ordinary,
            _ => continue,
        };
        if let Some(name) = btf.name(id).expect("name") {
            out.push((ns, name.to_string()));
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1).then(format!("{:?}", a.0).cmp(&format!("{:?}", b.0))));
    out.dedup();
    out
}

/// A type one level deep with `TypeRef`s replaced by the C names they stand for.
fn shape(src: &dyn TypeSource, ty: TypeRef) -> String {
    let n = |t: TypeRef| type_name(src, t).expect("type_name");
    match src.get(ty).expect("get") {
        Type::Struct(c) | Type::Union(c) => {
            let members: Vec<String> = c
                .members
                .iter()
                .map(|m| format!("{:?} {} @{}:{}", m.name, n(m.ty), m.bit_offset, m.bitfield_size))
                .collect();
            format!("{:?} size {} [{}]", c.name, c.size, members.join(", "))
        }
        Type::Typedef { name, target } => format!("typedef {name} = {}", n(target)),
        Type::Enum { name, size, signed, values } => format!("enum {name:?} {size} signed={signed} {values:?}"),
        other => format!("{other:?}"),
    }
}

fn one(src: &dyn TypeSource, ns: TypeNamespace, name: &str) -> TypeRef {
    let hits = src.find_type(ns, name).unwrap_or_else(|e| panic!("{ns:?} {name}: {e}"));
    assert!(!hits.is_empty(), "{}: no {ns:?} {name}", src.describe());
    hits[0]
}

fn proto(src: &dyn TypeSource, f: &FunctionInfo) -> String {
    let params: Vec<String> =
        f.proto.params.iter().map(|p| format!("{:?}: {}", p.name, type_name(src, p.ty).expect("param type"))).collect();
    let ret = f.proto.ret.map_or("void".into(), |r| type_name(src, r).expect("ret"));
    format!("{ret} {}({}{})", f.name, params.join(", "), if f.proto.variadic { ", ..." } else { "" })
}

fn agree(extra: &[&str], expect_version: u16) {
    let dir = scratch("agree");
    let bin = compile_agree(&dir, "agree", extra);
    add_btf(&bin);
    let (dw, btf) = open_both(&bin);
    assert_eq!(dw.version(), expect_version, "gcc {extra:?} should emit DWARF {expect_version}");
    let named = btf_named(&btf);
    // The fixture's own types must all be there (guards against an empty comparison).
    for want in
        ["bits", "nested", "arrays", "callbacks", "quals", "holder", "value", "color", "sign", "big", "chained_t"]
    {
        assert!(named.iter().any(|(_, n)| n == want), "BTF lacks {want}");
    }
    let mut compared = 0;
    for (ns, name) in &named {
        if name == "grid" {
            continue; // checked below: pahole flattens its 2-D array
        }
        let (d, b) = (one(&dw, *ns, name), one(&btf, *ns, name));
        assert_eq!(shape(&dw, d), shape(&btf, b), "{ns:?} {name}");
        assert_eq!(dw.size_of(d).expect("size"), btf.size_of(b).expect("size"), "size of {name}");
        assert_eq!(type_name(&dw, d).expect("name"), type_name(&btf, b).expect("name"));
        if matches!(ns, TypeNamespace::Struct | TypeNamespace::Union) {
            assert_eq!(print_struct(&dw, d).expect("print"), print_struct(&btf, b).expect("print"), "layout of {name}");
            let size = btf.size_of(b).expect("size").unwrap_or(0);
            for off in 0..size + 2 {
                let key = |src: &dyn TypeSource, hits: Vec<fevlint_types::layout::MemberPath>| -> Vec<String> {
                    hits.iter()
                        .map(|h| {
                            let t = type_name(src, h.ty).expect("ty");
                            format!(
                                "{} {t} {} {} {}:{} {:?}",
                                h.dotted(),
                                h.offset,
                                h.size,
                                h.bit_offset,
                                h.bitfield_size,
                                h.place
                            )
                        })
                        .collect()
                };
                let dh = key(&dw, member_at(&dw, d, off).expect("member_at"));
                let bh = key(&btf, member_at(&btf, b, off).expect("member_at"));
                assert_eq!(dh, bh, "member_at({name}, {off})");
            }
            if let Type::Struct(c) | Type::Union(c) = dw.get(d).expect("get") {
                for m in c.members.iter().filter_map(|m| m.name.as_deref()) {
                    let dm = resolve_member(&dw, d, m).expect("resolve").map(|p| (p.offset, p.size, p.bit_offset));
                    let bm = resolve_member(&btf, b, m).expect("resolve").map(|p| (p.offset, p.size, p.bit_offset));
                    assert_eq!(dm, bm, "{name}.{m}");
                }
            }
        }
        compared += 1;
    }
    assert!(compared >= 15, "only {compared} types compared");

    // A declared-only struct is a forward declaration, in both readers.
    let fwd = |src: &dyn TypeSource| src.get(one(src, TypeNamespace::Struct, "opaque")).expect("opaque");
    assert_eq!(fwd(&dw), fwd(&btf));
    assert!(matches!(fwd(&dw), Type::Forward { .. }));

    // Multi-dimensional arrays: DWARF keeps the dimensions, pahole 1.24 flattens them.
    let (d, b) = (one(&dw, TypeNamespace::Struct, "grid"), one(&btf, TypeNamespace::Struct, "grid"));
    assert_eq!(
        shape(&dw, d),
        "Some(\"grid\") size 56 [Some(\"cells\") int[3][4] @0:0, Some(\"tail\") long int @384:0]"
    );
    assert_eq!(shape(&btf, b), "Some(\"grid\") size 56 [Some(\"cells\") int[12] @0:0, Some(\"tail\") long int @384:0]");
    let Type::Struct(c) = dw.get(d).expect("grid") else { panic!("grid is not a struct") };
    let Type::Array { element, len: 3 } = dw.get(c.members[0].ty).expect("cells") else { panic!("cells") };
    assert!(matches!(dw.get(element).expect("row"), Type::Array { len: 4, .. }));
    assert_eq!(dw.size_of(element).expect("row size"), Some(16));
    let at = member_at(&dw, d, 4 * 6 + 1).expect("member_at");
    assert_eq!(
        at.iter().map(|h| (h.dotted(), h.offset, h.size)).collect::<Vec<_>>(),
        [("cells[1][2]".to_string(), 24, 4)]
    );

    // Functions: every BTF FUNC has a DWARF definition with the same prototype. Linkage
    // is not compared: pahole 1.24 writes every FUNC as static; DWARF knows better.
    let mut funcs = 0;
    for id in btf.own_ids() {
        if btf.raw(id).expect("raw").kind != BtfKind::Func {
            continue;
        }
        let name = btf.name(id).expect("name").expect("FUNC name").to_string();
        let b = btf.functions(&name).expect("btf fns");
        let d = dw.functions(&name).expect("dwarf fns");
        let dp: Vec<String> = d.iter().map(|f| proto(&dw, f)).collect();
        for f in &b {
            assert!(dp.contains(&proto(&btf, f)), "{name}: BTF {} not among DWARF {dp:?}", proto(&btf, f));
        }
        for f in &d {
            let (file, line) = f.decl.clone().unwrap_or_else(|| panic!("{name} has no decl"));
            assert!(file.ends_with("agree_a.c") || file.ends_with("agree_b.c"), "{name} declared in {file}");
            assert!(line > 0);
        }
        funcs += 1;
    }
    assert!(funcs >= 6, "only {funcs} functions compared");

    // pahole keeps one `helper`; DWARF has the two static ones, from both units.
    let helpers = dw.functions("helper").expect("helper");
    let mut got: Vec<String> = helpers.iter().map(|f| proto(&dw, f)).collect();
    got.sort();
    assert_eq!(
        got,
        ["int helper(Some(\"x\"): int)", "long int helper(Some(\"s\"): const char *, Some(\"n\"): unsigned int)"]
    );
    assert!(helpers.iter().all(|f| f.is_static));
    for f in ["main", "shared_fn", "take_struct", "grid_sum"] {
        assert!(dw.functions(f).expect(f).iter().all(|f| !f.is_static), "{f} is extern");
    }
    let mut files: Vec<String> = helpers.iter().map(|f| f.decl.clone().expect("decl").0).collect();
    files.sort();
    assert!(files[0].ends_with("agree_a.c") && files[1].ends_with("agree_b.c"), "{files:?}");
    let sv = dw.functions("sum_values").expect("sum_values");
    assert!(sv.len() == 1 && sv[0].proto.variadic && !sv[0].is_static, "{sv:?}");
    assert_eq!(sv[0].decl.as_ref().map(|d| d.1), Some(7));

    // The same answers again through the full index (a different code path).
    let (idx, _) = dw.ensure_index().expect("index");
    assert!(idx.len() > 20);
    for (ns, name) in named.iter().filter(|(_, n)| n != "grid") {
        // Both units define these: the index keeps one (same name, size, file, line).
        assert_eq!(dw.find_type(*ns, name).expect("find").len(), 1, "{ns:?} {name}");
        let d = one(&dw, *ns, name);
        let b = one(&btf, *ns, name);
        assert_eq!(shape(&dw, d), shape(&btf, b), "indexed {ns:?} {name}");
    }
    assert_eq!(dw.functions("helper").expect("helper").len(), 2);
    assert!(matches!(fwd(&dw), Type::Forward { .. }));
    let names = dw.function_names().expect("names");
    for f in ["main", "helper", "sum_values", "take_struct", "shared_fn", "uses_quals"] {
        assert!(names.iter().any(|n| n == f), "{f} missing from {names:?}");
    }
}

#[test]
fn dwarf5_agrees_with_btf() {
    if !fevlint_testkit::real_tools("pahole") {
        return;
    }
    agree(&[], 5);
}

#[test]
fn dwarf4_agrees_with_btf() {
    if !fevlint_testkit::real_tools("pahole") {
        return;
    }
    agree(&["-gdwarf-4"], 4);
}
