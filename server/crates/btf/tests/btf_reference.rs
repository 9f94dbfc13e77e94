//! fevlint's BTF reader and layout printer against outputs recorded once from
//! independent tools (bpftool 7.1, pahole/pfunct 1.24) into
//! fixtures/kernels/<kernel>/reference/ (see the README there). No tool runs here.

mod btf_common;

use std::collections::BTreeMap;

use btf_common::{btf, kernel_dir, unzstd, KERNELS};
use fevlint_btf::Btf;
use fevlint_types::layout;
use fevlint_types::model::{Type, TypeNamespace, TypeRef, TypeSource};

fn reference(kernel: &str, file: &str) -> String {
    let bytes = unzstd(&kernel_dir(kernel).join("reference").join(file));
    String::from_utf8(bytes).expect("reference is UTF-8")
}

/// `[id] KIND 'name' k=v ...` followed by indented `'name' k=v` lines.
struct RawBlock {
    id: u64,
    kind: String,
    name: String,
    attrs: BTreeMap<String, u64>,
    items: Vec<(String, BTreeMap<String, u64>)>,
}

fn kv(s: &str) -> BTreeMap<String, u64> {
    s.split_whitespace()
        .filter_map(|p| p.split_once('='))
        .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
        .collect()
}

fn parse_raw(text: &str) -> Vec<RawBlock> {
    let mut out: Vec<RawBlock> = Vec::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('[') {
            let (id, rest) = rest.split_once("] ").expect("id");
            let (kind, rest) = rest.split_once(' ').expect("kind");
            let rest = rest.strip_prefix('\'').expect("quote");
            let (name, rest) = rest.split_once('\'').expect("name");
            out.push(RawBlock {
                id: id.parse().expect("id"),
                kind: kind.into(),
                name: name.into(),
                attrs: kv(rest),
                items: Vec::new(),
            });
        } else if let Some(rest) = line.trim_start().strip_prefix('\'') {
            let (name, rest) = rest.split_once('\'').expect("member name");
            out.last_mut().expect("block").items.push((name.into(), kv(rest)));
        }
    }
    out
}

#[test]
fn struct_members_match_bpftool() {
    for kernel in KERNELS {
        let b = btf(kernel);
        let blocks = parse_raw(&reference(kernel, "structs.bpftool.txt.zst"));
        assert!(blocks.len() >= 200, "{kernel}: {} structs", blocks.len());
        let mut members = 0;
        for blk in &blocks {
            let hits = b.find_type(TypeNamespace::Struct, &blk.name).expect("lookup");
            assert_eq!(hits.first(), Some(&TypeRef(blk.id)), "{kernel} struct {}", blk.name);
            let Type::Struct(c) = b.get(hits[0]).expect("get") else { panic!("{kernel} {} not a struct", blk.name) };
            assert_eq!(c.size, blk.attrs["size"], "{kernel} {} size", blk.name);
            assert_eq!(c.members.len(), blk.items.len(), "{kernel} {} members", blk.name);
            for (m, (name, attrs)) in c.members.iter().zip(&blk.items) {
                let ctx = format!("{kernel} {}.{name}", blk.name);
                assert_eq!(m.name.as_deref().unwrap_or("(anon)"), name, "{ctx}");
                assert_eq!(m.ty, TypeRef(attrs["type_id"]), "{ctx}");
                assert_eq!(m.bit_offset, attrs["bits_offset"], "{ctx}");
                assert_eq!(u64::from(m.bitfield_size), attrs.get("bitfield_size").copied().unwrap_or(0), "{ctx}");
                members += 1;
            }
        }
        eprintln!("{kernel}: {} structs, {members} members match bpftool", blocks.len());
    }
}

#[test]
fn function_prototypes_match_bpftool() {
    for kernel in KERNELS {
        let b = btf(kernel);
        let blocks = parse_raw(&reference(kernel, "functions.bpftool.txt.zst"));
        let mut by_name: BTreeMap<&str, Vec<(&RawBlock, &RawBlock)>> = BTreeMap::new();
        for pair in blocks.chunks(2) {
            let [func, proto] = pair else { panic!("FUNC without FUNC_PROTO") };
            assert_eq!((func.kind.as_str(), proto.kind.as_str()), ("FUNC", "FUNC_PROTO"));
            assert_eq!(func.attrs["type_id"], proto.id);
            by_name.entry(&func.name).or_default().push((func, proto));
        }
        assert!(by_name.len() >= 1000, "{kernel}: {} functions", by_name.len());
        let mut params = 0;
        for (name, want) in &by_name {
            let got = b.functions(name).expect("functions");
            assert_eq!(got.len(), want.len(), "{kernel} {name}: FUNC entries");
            for (f, (_, proto)) in got.iter().zip(want) {
                let ctx = format!("{kernel} {name}");
                assert_eq!(f.proto.ret.map_or(0, |r| r.0), proto.attrs["ret_type_id"], "{ctx} ret");
                let mut items: Vec<_> = proto.items.iter().collect();
                let variadic = items.last().is_some_and(|(_, a)| a["type_id"] == 0);
                if variadic {
                    items.pop();
                }
                assert_eq!(f.proto.variadic, variadic, "{ctx} variadic");
                assert_eq!(f.proto.params.len(), items.len(), "{ctx} params");
                for (p, (pname, attrs)) in f.proto.params.iter().zip(items) {
                    assert_eq!(p.name.as_deref().unwrap_or("(anon)"), pname, "{ctx}");
                    assert_eq!(p.ty, TypeRef(attrs["type_id"]), "{ctx} {pname}");
                    params += 1;
                }
            }
        }
        eprintln!("{kernel}: {} functions, {params} parameters match bpftool", by_name.len());
    }
}

/// pfunct prints each FUNC in pahole's C spelling; fevlint's renderer of the same
/// prototype must give the identical line.
#[test]
fn function_prototypes_match_pfunct() {
    for kernel in KERNELS {
        let b = btf(kernel);
        let list = std::fs::read_to_string(kernel_dir(kernel).join("reference/functions.list")).expect("list");
        let mut want: Vec<String> = reference(kernel, "functions.pfunct.txt.zst").lines().map(String::from).collect();
        let mut got = Vec::new();
        for name in list.lines() {
            for f in b.functions(name).expect("functions") {
                got.push(layout::pahole_prototype(b.as_ref(), &f).expect("prototype"));
            }
        }
        want.sort();
        got.sort();
        let missing: Vec<_> = want.iter().filter(|w| got.binary_search(w).is_err()).take(5).collect();
        assert!(missing.is_empty(), "{kernel}: pfunct lines fevlint does not produce: {missing:#?}");
        assert_eq!(got, want, "{kernel}");
        eprintln!("{kernel}: {} prototypes identical to pfunct", got.len());
    }
}

/// Splits pahole output into `struct NAME { ... };` blocks.
fn pahole_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in text.lines() {
        if cur.is_none() {
            if let Some(name) = line.strip_prefix("struct ").and_then(|l| l.strip_suffix(" {")) {
                cur = Some((name.to_string(), String::new()));
            } else {
                continue;
            }
        }
        if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
        if line.starts_with('}') {
            out.extend(cur.take());
        }
    }
    out
}

/// `(offset, bit, size, name)` of every line with an offset comment, nested ones too.
fn offsets(block: &str) -> Vec<(u64, Option<u64>, u64, String)> {
    let mut out = Vec::new();
    for line in block.lines() {
        let line = strip_attributes(line);
        let Some(i) = line.rfind("/*") else { continue };
        let comment = line[i + 2..].trim_end().trim_end_matches("*/").trim();
        let decl = line[..i].trim();
        if !decl.ends_with(';') {
            continue;
        }
        let spaced = comment.replace(':', " : ");
        let toks: Vec<&str> = spaced.split_whitespace().collect();
        let (off, bit, size) = match toks[..] {
            [off, size] => (off, None, size),
            [off, ":", bit, size] => (off, Some(bit.parse().expect("bit")), size),
            _ => continue,
        };
        let (Ok(off), Ok(size)) = (off.parse(), size.parse()) else {
            continue;
        };
        let name = decl.trim_end_matches(';').rsplit(|c: char| c.is_whitespace() || c == '*').next().unwrap_or("");
        out.push((off, bit, size, name.to_string()));
    }
    out
}

/// Drops what the printer deliberately does not reproduce (see `print_struct`) and
/// whitespace runs, which shift with those attributes.
fn strip_attributes(line: &str) -> String {
    let l = line.replace(" __attribute__((__packed__))", "");
    (0..=12).map(|p| 1u64 << p).fold(l, |l, a| l.replace(&format!(" __attribute__((__aligned__({a})))"), ""))
}

fn normalize(block: &str) -> String {
    block
        .lines()
        .filter(|l| !l.trim_start().starts_with("/* forced alignments"))
        .map(|l| strip_attributes(l).split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn printed(b: &Btf, name: &str) -> String {
    let ty = b.find_type(TypeNamespace::Struct, name).expect("lookup")[0];
    layout::print_struct(b, ty).expect("print")
}

/// Structs whose pahole 1.24 text differs for a reason that is pahole's, each checked
/// against bpftool: (kernel, struct, why).
const EXPLAINED: [(&str, &str, &str); 1] = [(
    "6.18.44-fc-v769",
    "H2250LogicalChannelAckParameters",
    "its anonymous ENUM has kind_flag set (signed, bpftool: `encoding=SIGNED`, \
     `val=-2147483648`); pahole 1.24 predates signed enums and prints 2147483648",
)];

#[test]
fn layouts_match_pahole() {
    for kernel in KERNELS {
        let b = btf(kernel);
        let blocks = pahole_blocks(&reference(kernel, "structs.pahole.txt.zst"));
        assert!(blocks.len() >= 200, "{kernel}: {} structs", blocks.len());
        let (mut exact, mut normalized, mut lines) = (0, 0, 0);
        let mut differ = Vec::new();
        let mut bad_offsets = Vec::new();
        for (name, want) in &blocks {
            let got = printed(&b, name);
            // Every offset and size pahole shows, nested members included.
            let (w, g) = (offsets(want), offsets(&got));
            lines += w.len();
            if g != w {
                bad_offsets.push(name.clone());
            }
            if got == *want {
                exact += 1;
            }
            if normalize(&got) == normalize(want) {
                normalized += 1;
            } else {
                differ.push(name.clone());
                // Both texts for `diff -u`, in the test's scratch directory.
                let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("btf-layouts").join(kernel);
                std::fs::create_dir_all(&dir).expect("scratch dir");
                std::fs::write(dir.join(format!("{name}.pahole")), want).expect("write");
                std::fs::write(dir.join(format!("{name}.fevlint")), &got).expect("write");
            }
        }
        eprintln!(
            "{kernel}: {} structs, {lines} member lines with identical offsets/sizes; text identical {exact}, identical without alignment attributes {normalized}; differ: {differ:?}",
            blocks.len()
        );
        assert!(bad_offsets.is_empty(), "{kernel}: offsets/sizes differ for {bad_offsets:?}");
        let explained: Vec<_> = EXPLAINED.iter().filter(|e| e.0 == kernel).map(|e| e.1.to_string()).collect();
        assert_eq!(differ, explained, "{kernel}: text differs (beyond {EXPLAINED:?})");
    }
}

#[test]
fn printer_matches_pahole_exactly_for_struct_file() {
    let b = btf("6.12.117+deb12-amd64");
    let blocks = pahole_blocks(&reference("6.12.117+deb12-amd64", "structs.pahole.txt.zst"));
    for name in ["file", "sk_buff", "path"] {
        let (_, want) = blocks.iter().find(|(n, _)| n == name).expect("recorded");
        assert_eq!(printed(&b, name), *want, "struct {name}");
    }
}
