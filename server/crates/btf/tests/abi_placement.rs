//! Where `fevlint_types::abi` places parameters, on hand-built BTF, against what GCC 12.2 does.
//!
//! i386 (`-mregparm=3`), from `gcc -m32 -mregparm=3 -O2 -S` of these prototypes (the
//! callee's loads show each argument's register or stack offset):
//!   f8(int x, struct s8 s)          x eax, s edx:ecx
//!   f8b(struct s8 s, int x)         s eax:edx, x ecx
//!   f12(struct s12 s, int x)        s eax:edx:ecx, x stack+0
//!   f16(struct s16 s, int x)        s stack+0, x stack+16 (the struct uses up the registers)
//!   fll(int a, long long b, int c)  a eax, b edx:ecx, c stack+0
//!   fll2(long long b, long long c)  b eax:edx, c stack+0
//!   fp5(struct __packed {char a; int b;} s, int x)    s eax:edx, x ecx (no alignment rule)
//! x86_64 (SysV, the kernel built without SSE):
//!   tnum(struct {u64 value, mask} a, u64 size)   a rdi:rsi, size rdx
//!   big(struct s24 s, int x)                     s stack+0, x rdi
//!   fp9(struct __packed {char a; long b;} s, long x)  s stack+0, x rdi (a misaligned
//!   fp5(struct __packed {char a; int b;} s, int x)    s stack+0, x rdi  member sends
//!                                                the struct to memory)
//!   empty(union {} (8 bytes) arg, int nr)        arg rdi, nr rsi (a transparent union
//!                                                BTF records without members, 6.12's
//!                                                release_pages_arg)

mod btf_common;

use btf_common::Builder;
use fevlint_btf::Btf;
use fevlint_types::abi::{self, Held};
use fevlint_types::model::TypeSource;
use fevlint_types::Arch;

const INT: u32 = 1;
const STRUCT: u32 = 4;
const UNION: u32 = 5;
const FUNC: u32 = 12;
const FUNC_PROTO: u32 = 13;

struct Types {
    b: Builder,
    next: u32,
}

impl Types {
    fn add(&mut self, name: &str, kind: u32, vlen: u32, size_or_type: u32, extra: &[u32]) -> u32 {
        let n = if name.is_empty() { 0 } else { self.b.str(name) };
        self.b.ty(n, kind, false, vlen, size_or_type, extra);
        self.next += 1;
        self.next
    }
    fn int(&mut self, name: &str, size: u32, signed: bool) -> u32 {
        self.add(name, INT, 0, size, &[(u32::from(signed) << 24) | (size * 8)])
    }
    /// A struct or union of `(name, type, bit offset)` members.
    fn composite(&mut self, kind: u32, name: &str, size: u32, members: &[(&str, u32, u32)]) -> u32 {
        let mut extra = Vec::new();
        for (m, ty, bits) in members {
            extra.extend([self.b.str(m), *ty, *bits]);
        }
        self.add(name, kind, members.len() as u32, size, &extra)
    }
    fn func(&mut self, name: &str, params: &[(&str, u32)], ret: u32) {
        let mut extra = Vec::new();
        for (p, ty) in params {
            extra.extend([self.b.str(p), *ty]);
        }
        let proto = self.add("", FUNC_PROTO, params.len() as u32, ret, &extra);
        self.add(name, FUNC, 1, proto, &[]);
    }
}

fn btf() -> Btf {
    let mut t = Types { b: Builder::new(), next: 0 };
    let int = t.int("int", 4, true);
    let char_ = t.int("char", 1, true);
    let ll = t.int("long long int", 8, true);
    let u64_ = t.int("long long unsigned int", 8, false);
    let s8 = t.composite(STRUCT, "s8", 8, &[("a", int, 0), ("b", int, 32)]);
    let s12 = t.composite(STRUCT, "s12", 12, &[("a", int, 0), ("b", int, 32), ("c", int, 64)]);
    let s16 = t.composite(STRUCT, "s16", 16, &[("a", int, 0), ("b", int, 32), ("c", int, 64), ("d", int, 96)]);
    let s24 = t.composite(STRUCT, "s24", 24, &[("a", u64_, 0), ("b", u64_, 64), ("c", u64_, 128)]);
    let tnum = t.composite(STRUCT, "tnum", 16, &[("value", u64_, 0), ("mask", u64_, 64)]);
    let empty = t.composite(UNION, "", 8, &[]);
    let long = t.int("long int", 8, true);
    let p9 = t.composite(STRUCT, "p9", 9, &[("a", char_, 0), ("b", long, 8)]);
    let p5 = t.composite(STRUCT, "p5", 5, &[("a", char_, 0), ("b", int, 8)]);
    t.func("f8", &[("x", int), ("s", s8)], int);
    t.func("f8b", &[("s", s8), ("x", int)], int);
    t.func("f12", &[("s", s12), ("x", int)], int);
    t.func("f16", &[("s", s16), ("x", int)], int);
    t.func("fll", &[("a", int), ("b", ll), ("c", int)], int);
    t.func("fll2", &[("b", ll), ("c", ll)], int);
    t.func("tnum_is_aligned", &[("a", tnum), ("size", u64_)], int);
    t.func("big", &[("s", s24), ("x", int)], int);
    t.func("empty", &[("arg", empty), ("nr", int)], int);
    t.func("fp9", &[("s", p9), ("x", long)], int);
    t.func("fp5", &[("s", p5), ("x", int)], int);
    Btf::parse("hand-built", t.b.build()).expect("hand-built BTF parses")
}

fn places(btf: &Btf, arch: Arch, name: &str) -> Vec<String> {
    let f = btf.functions(name).expect("lookup").into_iter().next().expect("function");
    abi::locate(arch, btf, &f.proto).expect("placed").iter().map(|p| p.loc.describe()).collect()
}

#[test]
fn i386_regparm_places_structs_and_pairs_like_gcc() {
    let btf = btf();
    let cases: &[(&str, &[&str])] = &[
        ("f8", &["eax", "edx:ecx"]),
        ("f8b", &["eax:edx", "ecx"]),
        ("f12", &["eax:edx:ecx", "stack+0"]),
        ("f16", &["stack+0", "stack+16"]),
        ("fll", &["eax", "edx:ecx", "stack+0"]),
        ("fll2", &["eax:edx", "stack+0"]),
        ("fp5", &["eax:edx", "ecx"]),
    ];
    for (f, want) in cases {
        assert_eq!(places(&btf, Arch::X86_32, f), *want, "{f} on i386");
    }
}

#[test]
fn x86_64_no_sse_places_structs_in_eightbytes() {
    let btf = btf();
    let cases: &[(&str, &[&str])] = &[
        ("tnum_is_aligned", &["rdi:rsi", "rdx"]),
        ("big", &["stack+0", "rdi"]),
        ("empty", &["rdi", "rsi"]),
        ("f8", &["rdi", "rsi"]),
        ("fp9", &["stack+0", "rdi"]),
        ("fp5", &["stack+0", "rdi"]),
    ];
    for (f, want) in cases {
        assert_eq!(places(&btf, Arch::X86_64, f), *want, "{f} on x86_64");
    }
}

#[test]
fn slots_hold_parameters_and_their_parts() {
    let btf = btf();
    let holds = |arch, name| {
        let f = btf.functions(name).expect("lookup").into_iter().next().expect("function");
        abi::slot_holds(arch, &abi::locate(arch, &btf, &f.proto).expect("placed"))
    };
    let h = |param, part, parts, start, end| Some(Held { param, part, parts, start, end });
    assert_eq!(
        holds(Arch::X86_64, "tnum_is_aligned"),
        [h(0, 0, 2, 0, 8), h(0, 1, 2, 8, 16), h(1, 0, 1, 0, 8), None, None, None]
    );
    assert_eq!(holds(Arch::X86_64, "big"), [h(1, 0, 1, 0, 4), None, None, None, None, None]);
    assert_eq!(holds(Arch::X86_32, "fll"), [h(0, 0, 1, 0, 4), h(1, 0, 2, 0, 4), h(1, 1, 2, 4, 8)]);
    assert_eq!(holds(Arch::X86_32, "f12"), [h(0, 0, 3, 0, 4), h(0, 1, 3, 4, 8), h(0, 2, 3, 8, 12)]);
    assert_eq!(holds(Arch::X86_32, "f16"), [None, None, None]);
}
