//! Generated verdicts (issue 10): definitions with a known verdict, built from ground truth
//! that does not come from fevlint, checked against fixture kernels.
//!
//! - Parameters and registers: bpftool's raw BTF dump of each function's prototype and the
//!   types it needs (`reference/abi.bpftool.txt.zst`, recorded by
//!   `fixtures/kernels/record-abi-reference.py`), placed by a SysV classifier written here
//!   (kernel built without SSE: every eightbyte INTEGER, 9–16-byte structs in two
//!   registers, larger ones in memory, a value that does not fit the registers left on the
//!   stack). fevlint's `fevlint_types::abi` is not called.
//! - Members: pahole's layouts (`reference/structs.pahole.txt.zst`), union alternatives
//!   included; a named embedded struct is expanded with its own pahole layout.
//! - Traceability: the fixtures' `available_filter_functions` (names listed once).
//!
//! Correct definitions (parameters by register, halves of by-value structs, parameters
//! after them, members incl. union alternatives, strings of `char *`, symbols of
//! pointers, copies through pointers, `char[N]` of char arrays) must get no error or
//! warning; defective ones (a field named after a parameter in another register, a
//! register holding none, a dereferenced number, a string of a non-char pointer, an
//! offset inside a member or in padding) the expected code. The selection is
//! deterministic (a fixed-seed xorshift).
//!
//! The same cases, written as `kprobe_events` lines by `fevlint emit`, go through the
//! mainline dialect's checks (`fevlint_check::dynevents`): no correct definition may get
//! a finding there either, and the defective ones the kernel would misread are caught.

use fevlint_check::analysis::{check, target_for, Options};
use fevlint_check::diagnostic::Severity;
use fevlint_check::dynevents;
use fevlint_kernel::Kernel;
use fevlint_syntax::Parser;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

fn kernel_dir(kernel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(kernel)
}

fn unzstd(path: &std::path::Path) -> String {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let bytes = zstd::decode_all(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    String::from_utf8(bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------
// bpftool's raw dump.

struct Block {
    kind: String,
    name: String,
    head: String,
    /// Members (`'name' type_id=N bits_offset=B [bitfield_size=S]`) or parameters.
    items: Vec<Item>,
}

struct Item {
    name: String,
    type_id: u32,
    bits_offset: u64,
    bitfield: u64,
}

fn attr(line: &str, key: &str) -> Option<u64> {
    let at = line.find(&format!(" {key}="))? + key.len() + 2;
    let digits: String = line[at..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

struct Btf {
    blocks: HashMap<u32, Block>,
    typedefs: HashMap<String, u32>,
}

impl Btf {
    fn parse(text: &str) -> Btf {
        let mut blocks: HashMap<u32, Block> = HashMap::new();
        let mut cur = None;
        for line in text.lines() {
            if let Some(rest) = line.strip_prefix('[') {
                let (id, rest) = rest.split_once("] ").expect("[id] KIND");
                let (kind, rest) = rest.split_once(' ').expect("KIND 'name'");
                let name = rest.split('\'').nth(1).unwrap_or("").to_owned();
                let id: u32 = id.parse().expect("id");
                blocks.insert(id, Block { kind: kind.to_owned(), name, head: line.to_owned(), items: Vec::new() });
                cur = Some(id);
            } else if let (Some(id), Some(rest)) = (cur, line.trim_start().strip_prefix('\'')) {
                let (name, attrs) = rest.split_once('\'').expect("'name'");
                if let Some(type_id) = attr(attrs, "type_id") {
                    blocks.get_mut(&id).expect("block").items.push(Item {
                        name: name.to_owned(),
                        type_id: type_id as u32,
                        bits_offset: attr(attrs, "bits_offset").unwrap_or(0),
                        bitfield: attr(attrs, "bitfield_size").unwrap_or(0),
                    });
                }
            }
        }
        let typedefs =
            blocks.iter().filter(|(_, b)| b.kind == "TYPEDEF").map(|(id, b)| (b.name.clone(), *id)).collect();
        Btf { blocks, typedefs }
    }

    fn block(&self, id: u32) -> Option<&Block> {
        self.blocks.get(&id)
    }

    /// Through typedefs and qualifiers.
    fn base(&self, mut id: u32) -> u32 {
        for _ in 0..32 {
            match self.block(id) {
                Some(b) if matches!(b.kind.as_str(), "TYPEDEF" | "CONST" | "VOLATILE" | "RESTRICT" | "TYPE_TAG") => {
                    id = attr(&b.head, "type_id").unwrap_or(0) as u32;
                }
                _ => break,
            }
        }
        id
    }

    fn kind(&self, id: u32) -> &str {
        self.block(self.base(id)).map_or("VOID", |b| b.kind.as_str())
    }

    fn size(&self, id: u32) -> Option<u64> {
        let b = self.block(self.base(id))?;
        match b.kind.as_str() {
            "INT" | "STRUCT" | "UNION" | "ENUM" | "ENUM64" | "FLOAT" => attr(&b.head, "size"),
            "PTR" => Some(8),
            "ARRAY" => Some(attr(&b.head, "nr_elems")? * self.size(attr(&b.head, "type_id")? as u32)?),
            _ => None,
        }
    }

    /// Signedness of an integer or enum, from BTF's encoding (`SIGNED`); `None` otherwise.
    fn signed(&self, id: u32) -> Option<bool> {
        let b = self.block(self.base(id))?;
        match b.kind.as_str() {
            "INT" | "ENUM" | "ENUM64" => Some(b.head.contains("encoding=SIGNED")),
            _ => None,
        }
    }

    /// Signedness of a type named in C (`unsigned int`, `u32`, `enum x`).
    fn signed_named(&self, ty: &str) -> Option<bool> {
        if let Some(&id) = self.typedefs.get(ty) {
            return self.signed(id);
        }
        let (kind, name) = match ty.strip_prefix("enum ") {
            Some(n) => ("ENUM", n),
            None => ("INT", ty),
        };
        self.blocks
            .values()
            .find(|b| (b.kind == kind || b.kind == "ENUM64") && b.name == name)
            .map(|b| b.head.contains("encoding=SIGNED"))
    }

    fn pointee(&self, id: u32) -> Option<u32> {
        let b = self.block(self.base(id))?;
        (b.kind == "PTR").then(|| attr(&b.head, "type_id").unwrap_or(0) as u32)
    }

    /// `char *`-like: a pointer to a 1-byte integer, or `void *`.
    fn char_pointer(&self, id: u32) -> bool {
        match self.pointee(id) {
            Some(0) => true,
            Some(t) => self.kind(t) == "INT" && self.size(t) == Some(1),
            None => false,
        }
    }

    /// The struct a pointer points to, by name.
    fn pointee_struct(&self, id: u32) -> Option<&str> {
        let t = self.base(self.pointee(id)?);
        let b = self.block(t)?;
        (b.kind == "STRUCT" && !b.name.is_empty() && b.name != "(anon)").then_some(b.name.as_str())
    }

    /// Natural alignment in bytes: scalars their size, arrays their element's,
    /// composites their largest member's.
    fn align(&self, id: u32, depth: u32) -> u64 {
        let Some(b) = self.block(self.base(id)) else { return 1 };
        match b.kind.as_str() {
            "STRUCT" | "UNION" if depth < 16 => {
                b.items.iter().map(|m| self.align(m.type_id, depth + 1)).max().unwrap_or(1)
            }
            "ARRAY" => self.align(attr(&b.head, "type_id").unwrap_or(0) as u32, depth + 1),
            _ => self.size(id).unwrap_or(1).clamp(1, 16),
        }
    }

    /// A member (not a bitfield) off its natural alignment: the psABI passes the
    /// aggregate in memory.
    fn misaligned(&self, id: u32, base_bits: u64, depth: u32) -> bool {
        let Some(b) = self.block(self.base(id)) else { return false };
        if depth > 16 || !matches!(b.kind.as_str(), "STRUCT" | "UNION") {
            return false;
        }
        b.items.iter().any(|m| {
            let at = base_bits + m.bits_offset;
            m.bitfield == 0
                && (!at.is_multiple_of(self.align(m.type_id, 0) * 8) || self.misaligned(m.type_id, at, depth + 1))
        })
    }

    /// Sizes of the innermost members starting at byte `at` of composite `id`.
    fn leaves_at(&self, id: u32, at: u64, out: &mut Vec<u64>, depth: u32) {
        let Some(b) = self.block(self.base(id)) else { return };
        if depth > 8 || !matches!(b.kind.as_str(), "STRUCT" | "UNION") {
            return;
        }
        for m in &b.items {
            if m.bitfield != 0 || m.bits_offset % 8 != 0 {
                continue;
            }
            let off = m.bits_offset / 8;
            let Some(size) = self.size(m.type_id) else { continue };
            if off == at && size > 0 {
                match self.kind(m.type_id) {
                    "STRUCT" | "UNION" => self.leaves_at(m.type_id, 0, out, depth + 1),
                    "ARRAY" => {
                        let elem = attr(&self.block(self.base(m.type_id)).expect("array").head, "type_id").unwrap_or(0);
                        match self.kind(elem as u32) {
                            "STRUCT" | "UNION" => self.leaves_at(elem as u32, 0, out, depth + 1),
                            _ => out.extend(self.size(elem as u32)),
                        }
                    }
                    _ => out.push(size),
                }
            } else if off < at && at < off + size && matches!(self.kind(m.type_id), "STRUCT" | "UNION") {
                self.leaves_at(m.type_id, at - off, out, depth + 1);
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// The SysV classifier (x86_64, no SSE).

#[derive(Clone, Debug, PartialEq)]
enum Place {
    /// Argument registers (0 = rdi … 5 = r9), low part first.
    Regs(Vec<usize>),
    Stack,
}

/// Places each parameter; `None` when a parameter cannot be classified here (floating
/// point, unknown size, variadic).
fn place(btf: &Btf, params: &[Item]) -> Option<Vec<Place>> {
    let mut next = 0usize;
    let mut out = Vec::new();
    for p in params {
        if p.type_id == 0 {
            return None; // variadic
        }
        let size = btf.size(p.type_id)?;
        let words = match btf.kind(p.type_id) {
            "INT" | "ENUM" | "ENUM64" | "PTR" if size <= 8 => Some(1),
            "INT" if size == 16 => Some(2),
            "STRUCT" | "UNION" if size > 0 && size <= 16 && !btf.misaligned(p.type_id, 0, 0) => {
                Some(size.div_ceil(8) as usize)
            }
            "STRUCT" | "UNION" => None,
            _ => return None,
        };
        out.push(match words {
            Some(n) if next + n <= 6 => {
                next += n;
                Place::Regs((next - n..next).collect())
            }
            _ => Place::Stack,
        });
    }
    Some(out)
}

// ---------------------------------------------------------------------------------
// pahole's layouts.

#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// A pointer; `chars`: to a 1-byte integer or void; `structs`: to a struct.
    Ptr {
        chars: bool,
        to_struct: bool,
    },
    Scalar,
    /// An array; `chars`: of 1-byte integers; `ptrs`: of pointers.
    Array {
        esize: u64,
        len: u64,
        chars: bool,
        ptrs: bool,
    },
    /// A struct or union not expanded (no pahole layout of its own here).
    Composite,
    Bitfield,
    Unknown,
}

#[derive(Clone, Debug)]
struct Leaf {
    path: String,
    offset: u64,
    size: u64,
    kind: Kind,
    /// For integers and enums: signed, from BTF's encoding of the type pahole names.
    signed: Option<bool>,
    /// For `struct x *` pointers: `x`.
    points_to: Option<String>,
}

const CHARS: &[&str] = &["char", "signed char", "unsigned char", "u8", "__u8", "s8", "__s8", "_Bool", "bool", "void"];

fn strip_quals(s: &str) -> String {
    s.split_whitespace().filter(|w| !matches!(*w, "const" | "volatile")).collect::<Vec<_>>().join(" ")
}

/// Kind of a declaration's type text (`struct sk_buff *`, `atomic_t`, `char`).
fn kind_of(btf: &Btf, ty: &str) -> Kind {
    let ty = strip_quals(ty);
    if ty.contains('*') {
        let stars = ty.matches('*').count();
        let pointee = ty.replace('*', "").trim().to_owned();
        return Kind::Ptr {
            chars: stars == 1 && CHARS.contains(&pointee.as_str()),
            to_struct: stars == 1 && pointee.starts_with("struct "),
        };
    }
    if ty.starts_with("struct ") || ty.starts_with("union ") {
        return Kind::Composite;
    }
    if ty.starts_with("enum ") {
        return Kind::Scalar;
    }
    if let Some(&id) = btf.typedefs.get(&ty) {
        return match btf.kind(id) {
            "INT" | "ENUM" | "ENUM64" => Kind::Scalar,
            "PTR" => Kind::Ptr { chars: btf.char_pointer(id), to_struct: btf.pointee_struct(id).is_some() },
            "STRUCT" | "UNION" => Kind::Composite,
            _ => Kind::Unknown,
        };
    }
    let words: Vec<&str> = ty.split_whitespace().collect();
    if !words.is_empty()
        && words.iter().all(|w| matches!(*w, "int" | "char" | "long" | "short" | "unsigned" | "signed" | "_Bool"))
    {
        return Kind::Scalar;
    }
    Kind::Unknown
}

/// One declared member of a pahole layout: name, C type, offset, size, bitfield.
type Declared = (String, String, u64, u64, bool);

/// `struct name { … };` blocks of a pahole dump, as declared leaves with absolute offsets.
fn pahole_structs(text: &str) -> HashMap<String, Vec<Declared>> {
    let mut out = HashMap::new();
    let mut cur: Option<(String, Vec<Declared>)> = None;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix("struct ").and_then(|l| l.strip_suffix(" {")) {
            cur = Some((name.to_owned(), Vec::new()));
            continue;
        }
        if line.starts_with("};") {
            if let Some((n, v)) = cur.take() {
                out.insert(n, v);
            }
            continue;
        }
        let Some((_, members)) = cur.as_mut() else { continue };
        // `\tTYPE NAME;  /* OFF SIZE */` or `/* OFF: BIT SIZE */` for bitfields.
        let Some((decl, comment)) = line.split_once(';') else { continue };
        let decl = decl.trim();
        if decl.starts_with('}') || decl.starts_with("/*") {
            continue;
        }
        let Some(c) = comment.trim().strip_prefix("/*").and_then(|c| c.strip_suffix("*/")) else { continue };
        let bitfield = c.contains(':');
        let nums: Vec<u64> = c.replace(':', " ").split_whitespace().filter_map(|w| w.parse().ok()).collect();
        let (Some(&offset), Some(&size)) = (nums.first(), nums.last()) else { continue };
        let (ty, name) = split_decl(decl);
        members.push((name, ty, offset, size, bitfield));
    }
    out
}

/// `struct sk_buff * next` → (`struct sk_buff *`, `next`); arrays keep `[N]` on the type;
/// function pointers are `(*)`.
fn split_decl(decl: &str) -> (String, String) {
    if let Some(at) = decl.find("(*") {
        let name: String = decl[at + 2..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        return ("(*)".to_owned(), name);
    }
    let (head, dims) = match decl.find('[') {
        Some(i) => (&decl[..i], &decl[i..]),
        None => (decl, ""),
    };
    let head = head.trim_end();
    let cut = head.rfind([' ', '*']).map_or(0, |i| i + 1);
    (format!("{}{}", head[..cut].trim(), dims), head[cut..].to_owned())
}

fn leaves(
    btf: &Btf,
    pahole: &HashMap<String, Vec<Declared>>,
    name: &str,
    base: u64,
    prefix: &str,
    depth: u32,
    out: &mut Vec<Leaf>,
) {
    let Some(members) = pahole.get(name) else { return };
    for (mname, ty, offset, size, bitfield) in members {
        let path = format!("{prefix}{mname}");
        let offset = base + offset;
        let kind = if *bitfield {
            Kind::Bitfield
        } else if ty == "(*)" {
            Kind::Ptr { chars: false, to_struct: false }
        } else if let Some(i) = ty.find('[') {
            let dims: Vec<u64> = ty[i..].split(['[', ']']).filter_map(|d| d.trim().parse().ok()).collect();
            let elem = kind_of(btf, &ty[..i]);
            match (dims.as_slice(), elem) {
                ([n], Kind::Scalar | Kind::Ptr { .. }) if *n > 0 && size % n == 0 => {
                    let chars = CHARS.contains(&strip_quals(&ty[..i]).as_str());
                    let ptrs = strip_quals(&ty[..i]).contains('*');
                    Kind::Array { esize: size / n, len: *n, chars, ptrs }
                }
                _ => Kind::Unknown,
            }
        } else {
            kind_of(btf, ty)
        };
        if kind == Kind::Composite && depth < 3 {
            let inner = strip_quals(ty);
            if let Some(s) = inner.strip_prefix("struct ") {
                if pahole.contains_key(s) {
                    leaves(btf, pahole, s, offset, &format!("{path}."), depth + 1, out);
                    continue;
                }
            }
        }
        let signed = match kind {
            Kind::Scalar => btf.signed_named(&strip_quals(ty)),
            _ => None,
        };
        let points_to = strip_quals(ty)
            .strip_prefix("struct ")
            .and_then(|t| t.strip_suffix(" *").or_else(|| t.strip_suffix('*')))
            .map(|t| t.trim().to_owned())
            .filter(|t| !t.contains('*') && matches!(kind, Kind::Ptr { .. }));
        out.push(Leaf { path, offset, size: *size, kind, signed, points_to });
    }
}

// ---------------------------------------------------------------------------------
// Cases.

#[derive(Clone, Debug, PartialEq)]
enum Verdict {
    Clean,
    Code(&'static str),
}

struct Case {
    line: String,
    verdict: Verdict,
    why: String,
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn hex(size: u64) -> Option<&'static str> {
    match size {
        1 => Some("x8"),
        2 => Some("x16"),
        4 => Some("x32"),
        8 => Some("x64"),
        _ => None,
    }
}

/// A decimal field type of `size` bytes and that signedness (several spellings).
fn typed(size: u64, signed: bool, rng: &mut Rng) -> Option<&'static str> {
    let choices: &[&str] = match (size, signed) {
        (1, true) => &["s8"],
        (2, true) => &["s16", "short"],
        (4, true) => &["s32", "int"],
        (8, true) => &["s64", "long"],
        (1, false) => &["u8", "unsigned char"],
        (2, false) => &["u16", "unsigned short"],
        (4, false) => &["u32", "unsigned int"],
        (8, false) => &["u64", "size_t", "unsigned long"],
        _ => return None,
    };
    Some(choices[rng.below(choices.len())])
}

/// `f(NULL, NULL, field)`: `field` in slot `slot`.
fn line(func: &str, slot: usize, field: &str) -> String {
    let mut parts = vec!["NULL"; slot];
    parts.push(field);
    format!("{func}({})", parts.join(", "))
}

struct Function<'a> {
    name: &'a str,
    params: &'a [Item],
    places: Vec<Place>,
}

fn param_cases(btf: &Btf, f: &Function<'_>, rng: &mut Rng, out: &mut Vec<Case>) {
    let names: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
    let unique = |n: &str| !n.is_empty() && names.iter().filter(|x| **x == n).count() == 1;
    let syscall = f.name.contains("sys_");
    for (p, place) in f.params.iter().zip(&f.places) {
        let Place::Regs(regs) = place else { continue };
        let size = btf.size(p.type_id).unwrap_or(0);
        let kind = btf.kind(p.type_id);
        let name = if unique(&p.name) { p.name.clone() } else { format!("arg{}", regs[0]) };
        match kind {
            "STRUCT" | "UNION" => {
                for (part, &slot) in regs.iter().enumerate() {
                    let start = part as u64 * 8;
                    let mut sizes = Vec::new();
                    btf.leaves_at(p.type_id, start, &mut sizes, 0);
                    let rest = size - start;
                    let pick = sizes.iter().copied().find(|s| hex(*s).is_some() && *s <= rest).or(if rest >= 8 {
                        Some(8)
                    } else {
                        None
                    });
                    let Some(s) = pick else { continue };
                    let fname = if part == 0 { name.clone() } else { format!("{name}_part{part}") };
                    if part > 0 && names.contains(&fname.as_str()) {
                        continue;
                    }
                    out.push(Case {
                        line: line(f.name, slot, &format!("{} {fname}", hex(s).unwrap_or("x64"))),
                        verdict: Verdict::Clean,
                        why: format!("bytes {start}.. of a {size}-byte {kind} by value in register {slot}"),
                    });
                }
            }
            "PTR" => {
                let slot = regs[0];
                out.push(Case {
                    line: line(f.name, slot, &format!("x64 {name}")),
                    verdict: Verdict::Clean,
                    why: format!("pointer parameter in register {slot}"),
                });
                out.push(Case {
                    line: line(f.name, slot, &format!("x16 {name}")),
                    verdict: Verdict::Code("T401"),
                    why: format!("2 of the 8 bytes of a pointer in register {slot}"),
                });
                let (atom, why) = if btf.char_pointer(p.type_id) {
                    ("string", "string of a char pointer")
                } else {
                    ("symbol", "symbol of a pointer")
                };
                out.push(Case {
                    line: line(f.name, slot, &format!("{atom} {name}")),
                    verdict: Verdict::Clean,
                    why: format!("{why} in register {slot}"),
                });
            }
            "INT" | "ENUM" | "ENUM64" if regs.len() == 1 => {
                let slot = regs[0];
                if let Some(h) = hex(size) {
                    out.push(Case {
                        line: line(f.name, slot, &format!("{h} {name}")),
                        verdict: Verdict::Clean,
                        why: format!("{size}-byte integer parameter in register {slot}"),
                    });
                }
                if let Some(t) = btf.signed(p.type_id).and_then(|sg| typed(size, sg, rng)) {
                    out.push(Case {
                        line: line(f.name, slot, &format!("{t} {name}")),
                        verdict: Verdict::Clean,
                        why: format!("{size}-byte integer parameter (BTF: {}) in register {slot}", btf.kind(p.type_id)),
                    });
                }
                if !syscall {
                    out.push(Case {
                        line: line(f.name, slot, &format!("x64 {name}[0]")),
                        verdict: Verdict::Code("T405"),
                        why: format!("dereferences the {size}-byte integer in register {slot}"),
                    });
                    out.push(Case {
                        line: line(f.name, slot, &format!("x8[4] {name}")),
                        verdict: Verdict::Code("T405"),
                        why: format!("copies an array from the {size}-byte integer in register {slot}"),
                    });
                }
            }
            _ => {}
        }
    }
    // A raw field named after a parameter, in a register that holds another one (A301)
    // or none (A302); a register past the last one used (A302).
    let holder = |slot: usize| f.places.iter().position(|pl| matches!(pl, Place::Regs(r) if r.contains(&slot)));
    for (i, (p, place)) in f.params.iter().zip(&f.places).enumerate() {
        if !unique(&p.name) {
            continue;
        }
        let own: &[usize] = match place {
            Place::Regs(r) => r,
            Place::Stack => &[],
        };
        // The first register not holding this parameter, among 0..6.
        let Some(slot) = (0..6).find(|s| !own.contains(s) && (*s == i || holder(*s).is_some())) else { continue };
        // Named after a parameter that is elsewhere: A301, whatever the register holds.
        let verdict = Verdict::Code("A301");
        out.push(Case {
            line: line(f.name, slot, &format!("x64 {}", p.name)),
            verdict,
            why: format!("`{}` ({place:?}) read from register {slot}, which holds {:?}", p.name, holder(slot)),
        });
        break;
    }
    let last = f.places.iter().filter_map(|pl| if let Place::Regs(r) = pl { r.last().copied() } else { None }).max();
    let next = last.map_or(0, |l| l + 1);
    if next < 6 && !f.places.contains(&Place::Stack) {
        out.push(Case {
            line: line(f.name, next, "x64 stale_reg"),
            verdict: Verdict::Code("A302"),
            why: format!("register {next} is past the {next} the parameters take"),
        });
    }
}

/// A member this layout does not see into covers `at`.
fn opaque_at(all: &[Leaf], at: u64) -> bool {
    all.iter().any(|l| {
        l.offset <= at
            && at < l.offset + l.size.max(1)
            && (matches!(l.kind, Kind::Composite | Kind::Unknown | Kind::Bitfield) || l.offset != at)
    })
}

type Layouts = HashMap<String, (Vec<Leaf>, u64)>;

#[allow(clippy::too_many_arguments)]
fn member_cases(
    func: &str,
    slot: usize,
    sname: &str,
    all: &[Leaf],
    ssize: u64,
    layouts: &Layouts,
    rng: &mut Rng,
    out: &mut Vec<Case>,
) {
    let mut starts: BTreeMap<u64, Vec<&Leaf>> = BTreeMap::new();
    for l in all {
        starts.entry(l.offset).or_default().push(l);
    }
    let offsets: Vec<u64> = starts.keys().copied().collect();
    if offsets.is_empty() {
        return;
    }
    // Union offsets first (several members start there), then random ones.
    let mut chosen: Vec<u64> = offsets.iter().copied().filter(|o| starts[o].len() > 1).collect();
    rng.next();
    let unions = chosen.len();
    if unions > 2 {
        let keep = rng.below(unions);
        chosen = vec![chosen[keep], chosen[(keep + 1) % unions]];
    }
    for _ in 0..3 {
        chosen.push(offsets[rng.below(offsets.len())]);
    }
    chosen.sort_unstable();
    chosen.dedup();
    let covering = |at: u64| all.iter().filter(move |l| l.offset <= at && at < l.offset + l.size.max(1));
    for o in chosen {
        let here = &starts[&o];
        if here.iter().any(|l| matches!(l.kind, Kind::Bitfield | Kind::Unknown) || l.size == 0) {
            continue;
        }
        let names = here.iter().map(|l| l.path.as_str()).collect::<Vec<_>>().join(" | ");
        // A value read of one member (its element for an array).
        let c = here[rng.below(here.len())];
        let size = match c.kind {
            Kind::Array { esize, .. } => esize,
            _ => c.size,
        };
        if let Some(h) = hex(size) {
            out.push(Case {
                line: line(func, slot, &format!("{h} fld+{o}[0]")),
                verdict: Verdict::Clean,
                why: format!("`{}` of struct {sname} at {o} ({size} bytes); members there: {names}", c.path),
            });
        }
        if let Some(t) = c.signed.and_then(|sg| typed(c.size, sg, rng)) {
            out.push(Case {
                line: line(func, slot, &format!("{t} fld+{o}[0]")),
                verdict: Verdict::Clean,
                why: format!("`{}` of struct {sname} at {o} ({} bytes, signed {:?})", c.path, c.size, c.signed),
            });
        }
        // Every member of a union read with its own size, when each size is distinct.
        for l in here.iter().filter(|l| here.iter().filter(|m| m.size == l.size).count() == 1) {
            if let (Some(h), Kind::Scalar | Kind::Ptr { .. }) = (hex(l.size), &l.kind) {
                if here.len() > 1 {
                    out.push(Case {
                        line: line(func, slot, &format!("{h} fld+{o}[0]")),
                        verdict: Verdict::Clean,
                        why: format!("union member `{}` at {o} of struct {sname}: {names}", l.path),
                    });
                }
            }
        }
        // A 4-byte read of an 8-byte scalar or pointer, the only member there.
        if here.len() == 1 && c.size == 8 && matches!(c.kind, Kind::Scalar | Kind::Ptr { .. }) && !opaque_at(all, o) {
            out.push(Case {
                line: line(func, slot, &format!("x32 fld+{o}[0]")),
                verdict: Verdict::Code("T401"),
                why: format!("4 of the 8 bytes of `{}` at {o} of struct {sname}", c.path),
            });
        }
        // Something this layout does not see into covers the offset (a struct without a
        // pahole layout of its own, an array element): no verdict on pointers there.
        let opaque = covering(o).any(|l| {
            matches!(l.kind, Kind::Composite | Kind::Unknown)
                || (l.offset != o && !matches!(l.kind, Kind::Scalar | Kind::Ptr { .. }))
        });
        let pointer = here.iter().any(|l| matches!(l.kind, Kind::Ptr { .. } | Kind::Array { ptrs: true, .. }));
        let chars = here.iter().any(|l| matches!(l.kind, Kind::Ptr { chars: true, .. }));
        if let Some(l) = here.iter().find(|l| matches!(l.kind, Kind::Ptr { .. })) {
            out.push(Case {
                line: line(func, slot, &format!("symbol fld+{o}[0]")),
                verdict: Verdict::Clean,
                why: format!("symbol of pointer `{}` at {o} of struct {sname}: {names}", l.path),
            });
        }
        // Two levels: through a pointer here (one of several union alternatives, maybe)
        // to a member of the struct it points to.
        let pointers: Vec<&&Leaf> = here
            .iter()
            .filter(|l| {
                matches!(l.kind, Kind::Ptr { .. }) && l.points_to.as_ref().is_some_and(|t| layouts.contains_key(t))
            })
            .collect();
        if let (false, false) = (pointers.is_empty(), opaque_at(all, o)) {
            let p = pointers[rng.below(pointers.len())];
            if let Some((inner, _)) = p.points_to.as_ref().and_then(|t| layouts.get(t)) {
                let ok: Vec<&Leaf> = inner
                    .iter()
                    .filter(|l| {
                        matches!(l.kind, Kind::Scalar | Kind::Ptr { .. })
                            && hex(l.size).is_some()
                            && !opaque_at(inner, l.offset)
                            && inner.iter().filter(|m| m.offset == l.offset).count() == 1
                    })
                    .collect();
                if !ok.is_empty() {
                    let l = ok[rng.below(ok.len())];
                    out.push(Case {
                        line: line(func, slot, &format!("{} fld+{o}[0]+{}[0]", hex(l.size).unwrap_or("x64"), l.offset)),
                        verdict: Verdict::Clean,
                        why: format!(
                            "`{}` then `{}` of struct {}",
                            p.path,
                            l.path,
                            p.points_to.as_deref().unwrap_or("?")
                        ),
                    });
                }
            }
        }
        if pointer {
            out.push(Case {
                line: line(func, slot, &format!("x8[8] fld+{o}[0]")),
                verdict: Verdict::Clean,
                why: format!("copy through a pointer at {o} of struct {sname}: {names}"),
            });
        } else if !opaque && sname != "pt_regs" {
            out.push(Case {
                line: line(func, slot, &format!("x8[8] fld+{o}[0]")),
                verdict: Verdict::Code("T405"),
                why: format!("no pointer at {o} of struct {sname}: {names}"),
            });
        }
        if chars {
            out.push(Case {
                line: line(func, slot, &format!("string fld+{o}[0]")),
                verdict: Verdict::Clean,
                why: format!("string through a char pointer at {o} of struct {sname}: {names}"),
            });
        } else if pointer
            && !opaque
            && here.iter().all(|l| match l.kind {
                Kind::Ptr { to_struct, .. } => to_struct,
                Kind::Scalar => true,
                _ => false,
            })
        {
            out.push(Case {
                line: line(func, slot, &format!("string fld+{o}[0]")),
                verdict: Verdict::Code("T402"),
                why: format!("string through struct pointers at {o} of struct {sname}: {names}"),
            });
        }
        if let Some(l) = here.iter().find(|l| matches!(l.kind, Kind::Array { chars: true, esize: 1, .. })) {
            if let Kind::Array { len, .. } = l.kind {
                out.push(Case {
                    line: line(func, slot, &format!("char[{}] fld+{o}", len.min(16))),
                    verdict: Verdict::Clean,
                    why: format!("char array `{}` at {o} of struct {sname}", l.path),
                });
                out.push(Case {
                    line: line(func, slot, &format!("string fld+{o}")),
                    verdict: Verdict::Clean,
                    why: format!("string copied from the char array `{}` at {o} of struct {sname}", l.path),
                });
            }
        } else if !here.is_empty()
            && !opaque_at(all, o)
            && here.iter().all(|l| matches!(l.kind, Kind::Ptr { chars: true, .. }))
        {
            out.push(Case {
                line: line(func, slot, &format!("string fld+{o}")),
                verdict: Verdict::Code("T402"),
                why: format!("string copied from the bytes of the pointer {names} at {o} of struct {sname}"),
            });
        }
        // `symbol` on signed 8-byte numbers only (`long`, `loff_t`): not addresses.
        if !opaque_at(all, o) && here.iter().all(|l| l.kind == Kind::Scalar && l.size == 8 && l.signed == Some(true)) {
            out.push(Case {
                line: line(func, slot, &format!("symbol fld+{o}[0]")),
                verdict: Verdict::Code("T403"),
                why: format!("symbol of the signed number {names} at {o} of struct {sname}"),
            });
        }
        // One byte into a scalar or pointer, where nothing else starts or lies.
        let inside = o + 1;
        if here.iter().any(|l| l.size >= 2 && matches!(l.kind, Kind::Scalar | Kind::Ptr { .. }))
            && !starts.contains_key(&inside)
            && covering(inside).all(|l| matches!(l.kind, Kind::Scalar | Kind::Ptr { .. }) && l.size >= 2)
        {
            out.push(Case {
                line: line(func, slot, &format!("x8 fld+{inside}[0]")),
                verdict: Verdict::Code("T404"),
                why: format!("byte {inside} of struct {sname} is inside {names}"),
            });
        }
    }
    // A hole: no member covers the byte.
    if let Some(hole) = (0..ssize).find(|&b| covering(b).next().is_none()) {
        out.push(Case {
            line: line(func, slot, &format!("x8 fld+{hole}[0]")),
            verdict: Verdict::Code("T404"),
            why: format!("byte {hole} of struct {sname} is padding"),
        });
    }
}

fn cases_for(kernel: &str, seed: u64) -> Vec<Case> {
    let dir = kernel_dir(kernel);
    let btf = Btf::parse(&unzstd(&dir.join("reference/abi.bpftool.txt.zst")));
    let pahole = pahole_structs(&unzstd(&dir.join("reference/structs.pahole.txt.zst")));
    let ftrace = unzstd(&dir.join("available_filter_functions.zst"));
    let mut listed: HashMap<&str, usize> = HashMap::new();
    for l in ftrace.lines() {
        *listed.entry(l.split_whitespace().next().unwrap_or("")).or_default() += 1;
    }
    let mut funcs: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (id, b) in &btf.blocks {
        if b.kind == "FUNC" {
            funcs.entry(b.name.as_str()).or_default().push(*id);
        }
    }
    // struct name -> (leaves, size)
    let mut layouts: HashMap<String, (Vec<Leaf>, u64)> = HashMap::new();
    let sizes: HashMap<&str, u64> = btf
        .blocks
        .values()
        .filter(|b| b.kind == "STRUCT")
        .filter_map(|b| Some((b.name.as_str(), attr(&b.head, "size")?)))
        .collect();
    for name in pahole.keys() {
        let mut v = Vec::new();
        leaves(&btf, &pahole, name, 0, "", 0, &mut v);
        if let Some(&size) = sizes.get(name.as_str()) {
            layouts.insert(name.clone(), (v, size));
        }
    }
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    for (name, ids) in &funcs {
        // One type entry and one ftrace entry: no K203, traceable (no K202).
        if ids.len() != 1 || listed.get(name) != Some(&1) {
            continue;
        }
        let Some(func) = btf.block(ids[0]) else { continue };
        let Some(proto) = attr(&func.head, "type_id").and_then(|t| btf.block(t as u32)) else { continue };
        let Some(places) = place(&btf, &proto.items) else { continue };
        let f = Function { name, params: &proto.items, places };
        param_cases(&btf, &f, &mut rng, &mut out);
        for (p, place) in f.params.iter().zip(&f.places) {
            let Place::Regs(r) = place else { continue };
            let Some(s) = btf.pointee_struct(p.type_id) else { continue };
            if let Some((ls, size)) = layouts.get(s) {
                member_cases(name, r[0], s, ls, *size, &layouts, &mut rng, &mut out);
            }
        }
    }
    out
}

struct Outcome {
    correct: usize,
    defective: usize,
    false_positives: Vec<String>,
    missed: Vec<String>,
}

fn judge(kernel_name: &str, cases: &[Case]) -> Outcome {
    let k = Kernel::open(&kernel_dir(kernel_name)).unwrap_or_else(|e| panic!("open {kernel_name}: {e}"));
    let target = target_for(&k);
    let mut parser = Parser::new();
    let mut o = Outcome { correct: 0, defective: 0, false_positives: Vec::new(), missed: Vec::new() };
    for c in cases {
        let diags = check(&mut parser, c.line.as_bytes().to_vec(), &Options::new(target).kernels(&[&k])).1;
        let loud: Vec<String> = diags
            .iter()
            .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
            .map(|d| format!("{} {}", d.code, d.message))
            .collect();
        match c.verdict {
            Verdict::Clean => {
                o.correct += 1;
                if !loud.is_empty() {
                    o.false_positives.push(format!(
                        "{kernel_name}: {}  [{}]\n    got: {}",
                        c.line,
                        c.why,
                        loud.join("; ")
                    ));
                }
            }
            Verdict::Code(code) => {
                o.defective += 1;
                if !diags.iter().any(|d| d.code == code) {
                    o.missed.push(format!(
                        "{kernel_name}: {}  [{}]\n    want {code}, got: {}",
                        c.line,
                        c.why,
                        if loud.is_empty() { "nothing".to_owned() } else { loud.join("; ") }
                    ));
                }
            }
        }
    }
    o
}

const SEED: u64 = 0x9e37_79b9_7f4a_7c15;

#[test]
fn generated_definitions_get_their_known_verdicts() {
    let mut report = String::new();
    let mut total = (0usize, 0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for kernel in ["6.1.0-56-amd64", "6.12.117+deb12-amd64"] {
        let cases = cases_for(kernel, SEED);
        let o = judge(kernel, &cases);
        report.push_str(&format!(
            "{kernel}: {} correct definitions, {} false positives ({:.2}%); {} defective, {} missed\n",
            o.correct,
            o.false_positives.len(),
            100.0 * o.false_positives.len() as f64 / o.correct.max(1) as f64,
            o.defective,
            o.missed.len()
        ));
        total.0 += o.correct;
        total.1 += o.false_positives.len();
        total.2 += o.defective;
        total.3 += o.missed.len();
        failures.extend(o.false_positives.into_iter().map(|s| format!("false positive: {s}")));
        failures.extend(o.missed.into_iter().map(|s| format!("missed: {s}")));
    }
    eprintln!("{report}");
    assert!(total.0 >= 1000 && total.2 >= 300, "too few cases generated: {report}");
    assert!(
        failures.is_empty(),
        "{report}{} failure(s):\n{}",
        failures.len(),
        failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}

/// The cases as kprobe lines (one text, unique event names), judged by the mainline
/// checks: (false positives, defective lines emitted, of which caught, per expected code).
fn judge_mainline(kernel_name: &str, cases: &[Case]) -> (Vec<String>, BTreeMap<&'static str, (usize, usize)>, usize) {
    let k = Kernel::open(&kernel_dir(kernel_name)).unwrap_or_else(|e| panic!("open {kernel_name}: {e}"));
    let target = target_for(&k);
    let dialect = dynevents::dialect_for(&k).expect("dialect");
    let env = dynevents::KernelEnv::new(&k, &dialect);
    let mut parser = Parser::new();
    let mut text = String::new();
    let mut emitted: Vec<(usize, &Case)> = Vec::new(); // (line start, case)
    for (i, c) in cases.iter().enumerate() {
        let lines = parser.lines(&c.line, target);
        let Some(parsed) = lines.first().and_then(|l| l.parsed.as_ref()).filter(|p| p.rejection.is_none()) else {
            continue;
        };
        let name = format!("g{i}");
        let Ok(e) =
            fevlint_check::emit::emit(parsed, target, &dialect, &env, &name, fevlint_check::emit::Flavor::Kprobe, &[])
        else {
            continue;
        };
        emitted.push((text.len(), c));
        text.push_str(&e.line);
        text.push('\n');
    }
    let diags = dynevents::check(&text, &[&k]);
    let mut fps = Vec::new();
    let mut recall: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    for (n, (start, c)) in emitted.iter().enumerate() {
        let end = emitted.get(n + 1).map_or(text.len(), |e| e.0);
        let loud: Vec<String> = diags
            .iter()
            .filter(|d| d.span.start >= *start && d.span.start < end)
            .filter(|d| matches!(d.severity, Severity::Error | Severity::Warning))
            .map(|d| format!("{} {}", d.code, d.message))
            .collect();
        match c.verdict {
            Verdict::Clean if !loud.is_empty() => fps.push(format!(
                "{kernel_name}: {}  [{}]\n    as {}    got: {}",
                c.line,
                c.why,
                &text[*start..end],
                loud.join("; ")
            )),
            Verdict::Clean => {}
            Verdict::Code(code) => {
                let e = recall.entry(code).or_default();
                e.0 += 1;
                e.1 += usize::from(!loud.is_empty());
            }
        }
    }
    (fps, recall, emitted.len())
}

#[test]
fn generated_definitions_emitted_as_kprobe_lines_get_no_false_positives() {
    let mut report = String::new();
    let mut failures = Vec::new();
    for kernel in ["6.1.0-56-amd64", "6.12.117+deb12-amd64"] {
        let cases = cases_for(kernel, SEED);
        let (fps, recall, emitted) = judge_mainline(kernel, &cases);
        report.push_str(&format!("{kernel}: {emitted} lines emitted, {} false positives; caught:", fps.len()));
        for (code, (n, caught)) in &recall {
            report.push_str(&format!(" {code} {caught}/{n}"));
        }
        report.push('\n');
        failures.extend(fps);
        assert!(emitted >= 1000, "too few lines emitted: {report}");
        // What the kernel misreads and the mainline checks must catch: every dereference
        // of a number, offset inside a member or in padding, register with no argument.
        for code in ["T404", "T405", "A302"] {
            let (n, caught) = recall.get(code).copied().unwrap_or_default();
            assert!(n > 100 && caught == n, "{code}: {caught}/{n} caught\n{report}");
        }
    }
    eprintln!("{report}");
    assert!(
        failures.is_empty(),
        "{report}{} false positive(s):\n{}",
        failures.len(),
        failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
    );
}
