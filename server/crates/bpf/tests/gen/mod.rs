//! The generator of CO-RE programs from a kernel's BTF, shared by the libbpf judge
//! (`libbpf_judge.rs`) and the real kernels' judge (`server/tests/bpf_kernel.rs`): field
//! accesses through random member chains, flavours with retyped and renamed members,
//! type and enum relocations, from a deterministic seed.

use fevlint_bpf::btfx::View;
use fevlint_btf::BtfKind;
use fevlint_testkit::Rng;
use std::collections::HashMap;

/// What a generated access ends on.
struct Leaf {
    expr: String,
    /// An INT or ENUM member (signedness and shifts apply).
    integer: bool,
    /// A 1/2/4/8-byte INT, ENUM or PTR member that is not a bitfield (a direct load).
    scalar: bool,
    /// Ends on an array element `[k]` (only offset, size and existence apply).
    element: bool,
}

/// Named structs, unions, enums and typedefs that occur once in `btf` (the names
/// `vmlinux.h` prints without a `___N` suffix).
/// Type ids with their names.
type Named = Vec<(u32, String)>;

fn unique_names(view: &View) -> (Named, Named, Named) {
    let mut seen: HashMap<(u8, String), (u32, usize)> = HashMap::new();
    let btf = view.btf;
    for id in btf.own_ids() {
        let Ok(t) = view.ty(id.0) else { continue };
        let class = match t.kind {
            Some(BtfKind::Struct | BtfKind::Union | BtfKind::Fwd) => 0,
            Some(BtfKind::Enum | BtfKind::Enum64) => 1,
            Some(BtfKind::Typedef) => 2,
            _ => continue,
        };
        let name = view.name_str(t.name_off);
        if name.is_empty() {
            continue;
        }
        let e = seen.entry((class, name)).or_insert((id.0, 0));
        e.1 += 1;
    }
    let mut out = (Vec::new(), Vec::new(), Vec::new());
    let mut all: Vec<_> = seen.into_iter().filter(|(_, (_, n))| *n == 1).collect();
    all.sort_by_key(|(_, (id, _))| *id);
    for ((class, name), (id, _)) in all {
        let Ok(t) = view.ty(id) else { continue };
        match class {
            0 if t.is_composite() && t.vlen > 0 => out.0.push((id, name)),
            1 if t.vlen > 0 => out.1.push((id, name)),
            2 => out.2.push((id, name)),
            _ => {}
        }
    }
    out
}

fn c_type(view: &View, id: u32) -> String {
    let t = view.ty(id).expect("type");
    let kw = if t.is(BtfKind::Union) { "union" } else { "struct" };
    format!("{kw} {}", view.name_str(t.name_off))
}

/// A random member chain inside `root` (through anonymous members, nested structs and
/// array elements): the C expression after `p`.
fn chain(view: &View, root: u32, rng: &mut Rng) -> Option<Leaf> {
    let mut id = root;
    let mut expr = String::new();
    for _ in 0..8 {
        let (t, _) = view.skip_mods(id).ok()?;
        if !t.is_composite() || t.vlen == 0 {
            return None;
        }
        let m = view.member(&t, rng.below(usize::from(t.vlen))).ok()?;
        let name = view.name_str(m.name_off);
        let (mt, _) = view.skip_mods(m.ty).ok()?;
        if name.is_empty() {
            if mt.is_composite() {
                id = m.ty;
                continue;
            }
            return None;
        }
        expr.push_str(if expr.is_empty() { "->" } else { "." });
        expr.push_str(&name);
        let bitfield = View::member_bitfield_size(&t, &m) > 0;
        if mt.is_composite() && rng.chance(60) {
            id = m.ty;
            continue;
        }
        if mt.is(BtfKind::Array) {
            let (elem, _, n) = view.array(&mt).ok()?;
            if n == 0 {
                return None;
            }
            expr.push_str(&format!("[{}]", rng.below(n as usize)));
            let (et, _) = view.skip_mods(elem).ok()?;
            if et.is_composite() && rng.chance(50) {
                id = elem;
                continue;
            }
            return Some(Leaf { expr, integer: false, scalar: false, element: true });
        }
        let integer = mt.is(BtfKind::Int) || mt.is_any_enum();
        let sized = matches!(view.resolve_size(m.ty).ok()?.ok()?, 1 | 2 | 4 | 8);
        let scalar = !bitfield && sized && (integer || mt.is(BtfKind::Ptr));
        return Some(Leaf { expr, integer, scalar, element: false });
    }
    None
}

/// One generated program: field accesses (all six field kinds, direct loads), flavours
/// with retyped and renamed members, type and enum relocations.
pub fn generate(view: &View, seed: u64, n: usize) -> String {
    generate_with(view, seed, n, Options { type_matches: false, loads: true, flavours: true })
}

/// What a generated program may contain beyond the field-info, type and enum relocations.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// `bpf_core_type_matches()` of real types and of the flavours (clang 15 and later
    /// emit it).
    pub type_matches: bool,
    /// Direct loads through the pointer (`(long)p->a.b`): libbpf relocates them, but the
    /// kernel's verifier refuses a kprobe's plain load of a kernel pointer, so programs
    /// a kernel is to load leave them out.
    pub loads: bool,
    /// `___flavour` types with kept, retyped and renamed members (a renamed or retyped
    /// member is poisoned on every kernel).
    pub flavours: bool,
}

/// [`generate`], with `options`.
pub fn generate_with(view: &View, seed: u64, n: usize, options: Options) -> String {
    let Options { type_matches, loads, flavours } = options;
    let mut rng = Rng(seed | 1);
    let (composites, enums, typedefs) = unique_names(view);
    // Enumerator names that occur once in all enums (`vmlinux.h` renames the others).
    let mut enumerators: HashMap<String, usize> = HashMap::new();
    for id in view.btf.own_ids() {
        let Ok(t) = view.ty(id.0) else { continue };
        if t.is_any_enum() {
            for i in 0..usize::from(t.vlen) {
                let n = view.enumerator(&t, i).map(|e| view.name_str(e.name_off)).unwrap_or_default();
                *enumerators.entry(n).or_default() += 1;
            }
        }
    }
    let mut decls = String::new();
    let mut body = String::new();
    let mut k = 0usize;
    let mut emit = |body: &mut String, e: String| {
        body.push_str(&format!("\tout[{k}] = {e};\n"));
        k += 1;
    };
    const FIELD_KINDS: [&str; 6] = [
        "BPF_FIELD_BYTE_OFFSET",
        "BPF_FIELD_BYTE_SIZE",
        "BPF_FIELD_EXISTS",
        "BPF_FIELD_SIGNED",
        "BPF_FIELD_LSHIFT_U64",
        "BPF_FIELD_RSHIFT_U64",
    ];
    for i in 0..n {
        match rng.below(10) {
            0..=5 => {
                let (id, _) = &composites[rng.below(composites.len())];
                let Some(leaf) = chain(view, *id, &mut rng) else { continue };
                let base = format!("(({} *)p)", c_type(view, *id));
                let kinds = if leaf.integer && !leaf.element { 6 } else { 3 };
                emit(
                    &mut body,
                    format!("__builtin_preserve_field_info({base}{}, {})", leaf.expr, FIELD_KINDS[rng.below(kinds)]),
                );
                if loads && leaf.scalar && rng.chance(50) {
                    emit(&mut body, format!("(long){base}{}", leaf.expr));
                }
            }
            6 if flavours => {
                // A flavour of a real struct: some members kept, retyped, or renamed.
                let (id, name) = &composites[rng.below(composites.len())];
                let t = view.ty(*id).expect("type");
                let kw = if t.is(BtfKind::Union) { "union" } else { "struct" };
                let flavour = format!("{name}___gen{i}");
                let mut fields = Vec::new();
                for _ in 0..1 + rng.below(3) {
                    let m = view.member(&t, rng.below(usize::from(t.vlen))).expect("member");
                    let mname = view.name_str(m.name_off);
                    if mname.is_empty() || fields.iter().any(|(n, _): &(String, &str)| *n == mname) {
                        continue;
                    }
                    let mname = if rng.chance(15) { format!("{mname}_renamed") } else { mname };
                    let ty = ["int", "long", "unsigned short", "unsigned long", "void *", "char"][rng.below(6)];
                    fields.push((mname, ty));
                }
                if fields.is_empty() {
                    continue;
                }
                decls.push_str(&format!("{kw} {flavour} {{\n"));
                for (n, ty) in &fields {
                    decls.push_str(&format!("\t{ty} {n};\n"));
                }
                decls.push_str("} __attribute__((preserve_access_index));\n");
                for (n, _) in &fields {
                    let base = format!("(({kw} {flavour} *)p)->{n}");
                    emit(&mut body, format!("__builtin_preserve_field_info({base}, {})", FIELD_KINDS[rng.below(3)]));
                    if loads {
                        emit(&mut body, format!("(long){base}"));
                    }
                }
                emit(&mut body, format!("bpf_core_type_exists({kw} {flavour})"));
                if type_matches {
                    emit(&mut body, format!("bpf_core_type_matches({kw} {flavour})"));
                }
            }
            7 => {
                let (id, _) = &composites[rng.below(composites.len())];
                let ty = c_type(view, *id);
                let m =
                    ["bpf_core_type_exists", "bpf_core_type_size", "bpf_core_type_id_kernel", "bpf_core_type_id_local"]
                        [rng.below(4)];
                emit(&mut body, format!("{m}({ty})"));
                if type_matches {
                    emit(&mut body, format!("bpf_core_type_matches({ty})"));
                }
            }
            8 => {
                let (id, name) = &enums[rng.below(enums.len())];
                let t = view.ty(*id).expect("enum");
                let e = view.enumerator(&t, rng.below(usize::from(t.vlen))).expect("enumerator");
                if enumerators.get(&view.name_str(e.name_off)) != Some(&1) {
                    continue;
                }
                let m = if rng.chance(50) { "bpf_core_enum_value_exists" } else { "bpf_core_enum_value" };
                emit(&mut body, format!("{m}(enum {name}, {})", view.name_str(e.name_off)));
            }
            _ => {
                let (id, name) = &typedefs[rng.below(typedefs.len())];
                // A typedef of a function has no size: libbpf refuses the whole object.
                let sized = view.resolve_size(*id).is_ok_and(|s| s.is_ok());
                let m = if !sized || rng.chance(50) { "bpf_core_type_exists" } else { "bpf_core_type_size" };
                emit(&mut body, format!("{m}({name})"));
                if type_matches {
                    emit(&mut body, format!("bpf_core_type_matches({name})"));
                }
            }
        }
    }
    format!(
        "// Generated by libbpf_judge.rs, seed {seed}.\n#include \"vmlinux.h\"\n#include <bpf/bpf_helpers.h>\n\
         #include <bpf/bpf_core_read.h>\n#include <bpf/bpf_tracing.h>\n\n{decls}\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n\
         long out[{k}];\n\nSEC(\"kprobe/vfs_read\")\nint gen(struct pt_regs *ctx)\n{{\n\tvoid *p = (void *)ctx->di;\n{body}\treturn 0;\n}}\n",
        k = k.max(1)
    )
}
