//! Struct layouts over any [`TypeSource`]: a `pahole -C`-style printer, "which member
//! covers byte N", member paths by name, and C type names for messages.
//!
//! Everything here goes through the `TypeSource` trait, so BTF and DWARF answer the
//! same way. Walks are bounded by [`MAX_DEPTH`]; a cyclic source yields
//! [`ModelError::TooDeep`].

use std::fmt::Write as _;
use std::sync::Arc;

use crate::model::{Composite, ForwardKind, ModelError, Qualifier, Type, TypeRef, TypeSource};

pub use crate::model::MAX_DEPTH;
/// pahole's default cacheline size on x86_64.
pub const CACHELINE: u64 = 64;

fn too_deep(src: &dyn TypeSource, ty: TypeRef) -> ModelError {
    ModelError::TooDeep { source_name: src.error_name(), ty }
}

/// Follows typedefs and qualifiers; returns the first other type and its ref.
pub fn strip(src: &dyn TypeSource, ty: TypeRef) -> Result<(TypeRef, Type), ModelError> {
    let (ty, t) = strip_shared(src, ty)?;
    Ok((ty, Arc::unwrap_or_clone(t)))
}

/// [`strip`] with the type shared ([`TypeSource::get_shared`]): neither the typedefs
/// followed nor the type found are copied.
pub fn strip_shared(src: &dyn TypeSource, mut ty: TypeRef) -> Result<(TypeRef, Arc<Type>), ModelError> {
    for _ in 0..MAX_DEPTH {
        let t = src.get_shared(ty)?;
        match &*t {
            Type::Typedef { target, .. } | Type::Qualified { target, .. } => ty = *target,
            _ => return Ok((ty, t)),
        }
    }
    Err(too_deep(src, ty))
}

// ---------------------------------------------------------------------------------
// C type names for messages.

/// The C name of a type: `struct file *`, `const char *`, `char[16]`,
/// `int (*)(struct file *, ...)`.
pub fn type_name(src: &dyn TypeSource, ty: TypeRef) -> Result<String, ModelError> {
    declaration(src, ty, "")
}

/// A C declaration of `name` with type `ty`: `char comm[16]`, `void (*fn)(int)`.
pub fn declaration(src: &dyn TypeSource, ty: TypeRef, name: &str) -> Result<String, ModelError> {
    declare(src, ty, name.to_string(), 0)
}

fn join(left: &str, inner: &str) -> String {
    if inner.is_empty() {
        left.to_string()
    } else if inner.starts_with('[') {
        format!("{left}{inner}")
    } else {
        format!("{left} {inner}")
    }
}

fn declare(src: &dyn TypeSource, ty: TypeRef, inner: String, depth: usize) -> Result<String, ModelError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(src, ty));
    }
    // Shared: the types a name is printed from are only read.
    Ok(match &*src.get_shared(ty)? {
        &Type::Pointer { target } => {
            let mut s = format!("*{inner}");
            // A struct, union or enum pointed to is named without reading its members.
            if depth < MAX_DEPTH {
                if let Some((kind, name)) = src.tag(target)? {
                    return Ok(join(&tag_name(kind, name.as_deref().unwrap_or("{...}")), &s));
                }
            }
            if matches!(*src.get_shared(target)?, Type::Array { .. } | Type::Function(_)) {
                s = format!("({s})");
            }
            declare(src, target, s, depth + 1)?
        }
        &Type::Array { element, len } => declare(src, element, format!("{inner}[{len}]"), depth + 1)?,
        Type::Function(proto) => {
            let mut params = Vec::new();
            for p in &proto.params {
                params.push(declare(src, p.ty, String::new(), depth + 1)?);
            }
            if proto.variadic {
                params.push("...".into());
            }
            if params.is_empty() {
                params.push("void".into());
            }
            let s = format!("{inner}({})", params.join(", "));
            match proto.ret {
                Some(ret) => declare(src, ret, s, depth + 1)?,
                None => join("void", &s),
            }
        }
        &Type::Qualified { qualifier, target } => {
            let word = match qualifier {
                Qualifier::Const => "const",
                Qualifier::Volatile => "volatile",
                Qualifier::Restrict => "restrict",
                // `__rcu`, `__user`: not C, and BTF does not say which one through the model.
                Qualifier::TypeTag => return declare(src, target, inner, depth + 1),
            };
            if matches!(*src.get_shared(target)?, Type::Pointer { .. }) {
                declare(src, target, join(word, &inner), depth + 1)?
            } else {
                let base = declare(src, target, String::new(), depth + 1)?;
                join(&format!("{word} {base}"), &inner)
            }
        }
        leaf => join(&leaf_name(leaf), &inner),
    })
}

fn leaf_name(t: &Type) -> String {
    match t {
        Type::Void => "void".into(),
        Type::Int { name, .. } | Type::Float { name, .. } | Type::Typedef { name, .. } => name.clone(),
        Type::Struct(c) => tag_name(ForwardKind::Struct, c.name.as_deref().unwrap_or("{...}")),
        Type::Union(c) => tag_name(ForwardKind::Union, c.name.as_deref().unwrap_or("{...}")),
        Type::Enum { name, .. } => tag_name(ForwardKind::Enum, name.as_deref().unwrap_or("{...}")),
        Type::Forward { name, kind } => tag_name(*kind, name),
        // Handled by `declare`; kept total for safety.
        Type::Pointer { .. } | Type::Array { .. } | Type::Qualified { .. } | Type::Function(_) => "?".into(),
    }
}

/// `struct file`.
fn tag_name(kind: ForwardKind, name: &str) -> String {
    let word = match kind {
        ForwardKind::Struct => "struct",
        ForwardKind::Union => "union",
        ForwardKind::Enum => "enum",
    };
    format!("{word} {name}")
}

// ---------------------------------------------------------------------------------
// Member lookup.

/// Where a byte offset falls relative to the member reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The offset is the member's first byte.
    Start,
    /// The offset is `delta` bytes into the member.
    Inside { delta: u64 },
    /// No member covers the offset: it is in a hole or the tail padding of the
    /// composite named by `names`; `offset`/`size` of the [`MemberPath`] give the gap.
    Padding,
}

/// One answer of [`member_at`] or [`resolve_member`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberPath {
    /// Member names from the outer type inward, anonymous members left out (as C
    /// spells the access); array elements as `name[i]`.
    pub names: Vec<String>,
    /// Declared type of the member (for `Padding`: the composite holding the gap).
    pub ty: TypeRef,
    /// Byte offset from the start of the outer type (for bitfields: of the byte
    /// holding the first bit).
    pub offset: u64,
    /// Size in bytes (bitfields: bytes touched by the bits; padding: the gap).
    pub size: u64,
    /// Bit offset from the start of the outer type and bitfield width (0 if none).
    pub bit_offset: u64,
    pub bitfield_size: u32,
    pub place: Placement,
}

impl MemberPath {
    /// `f_path.dentry`, `cb[3]`, or empty for the outer type itself.
    pub fn dotted(&self) -> String {
        self.names.join(".")
    }

    /// The C expression that reads this member through the pointer `base`:
    /// `base->f_path.dentry`, `base[3]` for an element, `*base` for the outer type itself.
    pub fn through(&self, base: &str) -> String {
        let dotted = self.dotted();
        if dotted.is_empty() {
            format!("*{base}")
        } else if dotted.starts_with('[') {
            format!("{base}{dotted}")
        } else {
            format!("{base}->{dotted}")
        }
    }
}

/// The members covering byte `offset` of composite `ty`, descending through nested and
/// anonymous structs, unions and arrays to the innermost member. Several answers for
/// unions and for bitfields sharing a byte; one `Padding` answer for a gap; none when
/// `offset` is past the end (except into a trailing flexible array).
pub fn member_at(src: &dyn TypeSource, ty: TypeRef, offset: u64) -> Result<Vec<MemberPath>, ModelError> {
    let mut out = Vec::new();
    let (_, t) = strip_shared(src, ty)?;
    if let Type::Struct(c) | Type::Union(c) = &*t {
        walk_at(src, ty, c, 0, offset, &mut Vec::new(), &mut out, 0)?;
    }
    Ok(out)
}

fn member_bits(src: &dyn TypeSource, m: &crate::model::Member) -> Result<u64, ModelError> {
    if m.bitfield_size != 0 {
        return Ok(u64::from(m.bitfield_size));
    }
    Ok(src.size_of(m.ty)?.unwrap_or(0).saturating_mul(8))
}

#[allow(clippy::too_many_arguments)]
fn walk_at(
    src: &dyn TypeSource,
    comp_ty: TypeRef,
    c: &Composite,
    base_bits: u64,
    offset: u64,
    path: &mut Vec<String>,
    out: &mut Vec<MemberPath>,
    depth: usize,
) -> Result<(), ModelError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(src, comp_ty));
    }
    let target = offset.saturating_mul(8);
    let before = out.len();
    let n = c.members.len();
    for (i, m) in c.members.iter().enumerate() {
        let start = base_bits.saturating_add(m.bit_offset);
        if start > target.saturating_add(7) {
            // Starts after the byte: covers it in no case below (its size is not asked).
            continue;
        }
        let bits = member_bits(src, m)?;
        let covers = if m.bitfield_size != 0 {
            start < target + 8 && target < start.saturating_add(bits)
        } else if bits == 0 {
            // A trailing flexible array covers everything after it.
            i + 1 == n && matches!(*strip_shared(src, m.ty)?.1, Type::Array { len: 0, .. }) && target >= start
        } else {
            start <= target && target < start.saturating_add(bits)
        };
        if !covers {
            continue;
        }
        let pushed = if let Some(name) = &m.name {
            path.push(name.clone());
            true
        } else {
            false
        };
        if m.bitfield_size != 0 {
            let first = start / 8;
            out.push(MemberPath {
                names: path.clone(),
                ty: m.ty,
                offset: first,
                size: (start + bits).div_ceil(8) - first,
                bit_offset: start,
                bitfield_size: m.bitfield_size,
                place: if first == offset { Placement::Start } else { Placement::Inside { delta: offset - first } },
            });
        } else {
            descend(src, m.ty, start, offset, path, out, depth + 1)?;
        }
        if pushed {
            path.pop();
        }
    }
    if out.len() == before && target < base_bits.saturating_add(c.size.saturating_mul(8)) {
        // A gap: from the end of the last member before it to the next member's start.
        let (mut lo, mut hi) = (base_bits, base_bits + c.size * 8);
        for m in c.members.iter() {
            let s = base_bits + m.bit_offset;
            let e = s.saturating_add(member_bits(src, m)?);
            if e <= target && e > lo {
                lo = e;
            }
            if s > target && s < hi {
                hi = s;
            }
        }
        let (lo, hi) = (lo.div_ceil(8), hi / 8);
        out.push(MemberPath {
            names: path.clone(),
            ty: comp_ty,
            offset: lo,
            size: hi.saturating_sub(lo),
            bit_offset: lo * 8,
            bitfield_size: 0,
            place: Placement::Padding,
        });
    }
    Ok(())
}

fn descend(
    src: &dyn TypeSource,
    ty: TypeRef,
    start_bits: u64,
    offset: u64,
    path: &mut Vec<String>,
    out: &mut Vec<MemberPath>,
    depth: usize,
) -> Result<(), ModelError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(src, ty));
    }
    let (_, t) = strip_shared(src, ty)?;
    let start = start_bits / 8;
    match &*t {
        Type::Struct(c) | Type::Union(c) => walk_at(src, ty, c, start_bits, offset, path, out, depth + 1),
        &Type::Array { element, .. } => {
            let es = src.size_of(element)?.unwrap_or(0);
            if es == 0 {
                return leaf(src, ty, start_bits, offset, path, out);
            }
            let idx = (offset - start) / es;
            let saved = path.pop().unwrap_or_default();
            path.push(format!("{saved}[{idx}]"));
            let r = descend(src, element, start_bits + idx * es * 8, offset, path, out, depth + 1);
            path.pop();
            path.push(saved);
            r
        }
        _ => leaf(src, ty, start_bits, offset, path, out),
    }
}

fn leaf(
    src: &dyn TypeSource,
    ty: TypeRef,
    start_bits: u64,
    offset: u64,
    path: &[String],
    out: &mut Vec<MemberPath>,
) -> Result<(), ModelError> {
    let start = start_bits / 8;
    out.push(MemberPath {
        names: path.to_vec(),
        ty,
        offset: start,
        size: src.size_of(ty)?.unwrap_or(0),
        bit_offset: start_bits,
        bitfield_size: 0,
        place: if start == offset { Placement::Start } else { Placement::Inside { delta: offset - start } },
    });
    Ok(())
}

/// Resolves `a.b.c` (or `a[2].b`) inside composite `ty`, looking through anonymous
/// members as C does. `None` when a name does not exist or is not inside a composite.
pub fn resolve_member(src: &dyn TypeSource, ty: TypeRef, path: &str) -> Result<Option<MemberPath>, ModelError> {
    let mut cur = ty;
    let mut bits = 0u64;
    let mut names = Vec::new();
    let mut found: Option<crate::model::Member> = None;
    for part in path.split('.') {
        let (name, indexes) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        let Some((m, at)) = find_named(src, cur, name, 0)? else {
            return Ok(None);
        };
        bits += at;
        cur = m.ty;
        names.push(part.to_string());
        // `[i]` steps into array elements.
        let mut rest = indexes;
        while let Some(stripped) = rest.strip_prefix('[') {
            let Some(end) = stripped.find(']') else {
                return Ok(None);
            };
            let Ok(i) = stripped[..end].trim().parse::<u64>() else {
                return Ok(None);
            };
            let Type::Array { element, .. } = *strip_shared(src, cur)?.1 else {
                return Ok(None);
            };
            bits += i.saturating_mul(src.size_of(element)?.unwrap_or(0)).saturating_mul(8);
            cur = element;
            rest = &stripped[end + 1..];
        }
        found = Some(crate::model::Member { ty: cur, bit_offset: bits, ..m });
    }
    let Some(m) = found else { return Ok(None) };
    let size = if m.bitfield_size != 0 {
        (bits + u64::from(m.bitfield_size)).div_ceil(8) - bits / 8
    } else {
        src.size_of(cur)?.unwrap_or(0)
    };
    Ok(Some(MemberPath {
        names,
        ty: cur,
        offset: bits / 8,
        size,
        bit_offset: bits,
        bitfield_size: m.bitfield_size,
        place: Placement::Start,
    }))
}

/// A named member of composite `ty`, searching anonymous members; returns it with its
/// bit offset from the start of `ty`.
fn find_named(
    src: &dyn TypeSource,
    ty: TypeRef,
    name: &str,
    depth: usize,
) -> Result<Option<(crate::model::Member, u64)>, ModelError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(src, ty));
    }
    let (_, t) = strip_shared(src, ty)?;
    let (Type::Struct(c) | Type::Union(c)) = &*t else {
        return Ok(None);
    };
    for m in c.members.iter() {
        match &m.name {
            Some(n) if n == name => return Ok(Some((m.clone(), m.bit_offset))),
            None => {
                if let Some((inner, at)) = find_named(src, m.ty, name, depth + 1)? {
                    return Ok(Some((inner, m.bit_offset + at)));
                }
            }
            Some(_) => {}
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------
// Past the end of a type.

/// A type that an offset past the end of a pointer's declared type may be read in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Extension {
    /// The larger struct.
    pub container: TypeRef,
    /// What the offset reads there (innermost member starting there if any, else the
    /// innermost covering it).
    pub member: MemberPath,
    /// The outermost named member of `container` covering the offset (`sin6_addr` for a
    /// read of `sin6_addr.in6_u.u6_addr8[8]`).
    pub top: MemberPath,
    /// How it extends the declared type.
    pub how: Extends,
}

/// How an [`Extension`] relates to the declared type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extends {
    /// It embeds the declared type at offset 0, directly or through other structs
    /// (`struct tcp_sock` … `struct sock`): what `container_of`/`tcp_sk(sk)` casts to.
    Embeds,
    /// It is a struct of the same family: named after the declared type (`sockaddr_in6`,
    /// `__kernel_sockaddr_storage` for `sockaddr`) and starting with the same tag (an
    /// integer of the same size whose name ends alike: `sin6_family`, `sa_family`). The
    /// C idiom of a base "class" whose callers pass a larger struct.
    Family,
}

/// Most extensions returned.
const MAX_EXTENSIONS: usize = 64;

/// The structs an offset past the end of `obj` may be read in, likeliest first: the
/// declared type's family (see [`Extends::Family`]) when it has one, those read whole
/// by `want` bytes first, smaller first; then the structs that embed it at offset 0,
/// breadth-first. Unions are never extensions: a union holding `obj` holds its other
/// alternatives, not more of `obj`, at the same place.
pub fn past_end(src: &dyn TypeSource, obj: TypeRef, offset: u64, want: u64) -> Result<Vec<Extension>, ModelError> {
    past_end_with(src, obj, offset, want, &|name| Ok(family_names(src, name)?.into()), &|obj| {
        Ok(embedding_structs(src, obj)?.into())
    })
}

/// The structs that embed struct `obj` at offset 0, directly or through other structs
/// (`struct tcp_sock` … `struct sock`), breadth-first (nearest first), at most 6 levels
/// and 256 types deep: the candidates of [`Extends::Embeds`] in [`past_end`]. Unions
/// are left out, and not looked through.
pub fn embedding_structs(src: &dyn TypeSource, obj: TypeRef) -> Result<Vec<TypeRef>, ModelError> {
    let mut queue = std::collections::VecDeque::from([(obj, 0u32)]);
    let mut seen = std::collections::HashSet::from([obj]);
    let mut out = Vec::new();
    while let Some((t, depth)) = queue.pop_front() {
        if depth >= 6 || seen.len() > 256 {
            break;
        }
        for c in src.embedders(t)? {
            if !seen.insert(c) || !src.is_struct(c)? {
                continue;
            }
            queue.push_back((c, depth + 1));
            out.push(c);
        }
    }
    Ok(out)
}

/// The struct names named as a kind of `name` (`sockaddr_in6`, `__kernel_sockaddr_storage`
/// for `sockaddr`), in the order of the source's sorted list: the candidates of `name`'s
/// family in [`past_end`], found by scanning every struct name.
pub fn family_names(src: &dyn TypeSource, name: &str) -> Result<Vec<String>, ModelError> {
    // A name that extends `name` contains its first word: most names are skipped before
    // their words are split.
    let first_word = name.split('_').find(|w| !w.is_empty()).unwrap_or_default();
    let names = src.type_names_shared(crate::model::TypeNamespace::Struct)?;
    Ok(names
        .iter()
        .filter(|other| *other != name && other.contains(first_word) && extends_name(name, other))
        .map(str::to_owned)
        .collect())
}

/// What [`past_end_with`] asks for a struct's [`family_names`].
pub type FamilyNames<'a> = dyn Fn(&str) -> Result<std::sync::Arc<[String]>, ModelError> + 'a;

/// What [`past_end_with`] asks for the [`embedding_structs`] of a struct (given stripped
/// of typedefs and qualifiers).
pub type EmbeddingStructs<'a> = dyn Fn(TypeRef) -> Result<std::sync::Arc<[TypeRef]>, ModelError> + 'a;

/// [`past_end`] with `family` giving [`family_names`] and `embedding` giving
/// [`embedding_structs`] (a caller asking about many offsets keeps them).
pub fn past_end_with(
    src: &dyn TypeSource,
    obj: TypeRef,
    offset: u64,
    want: u64,
    family: &FamilyNames<'_>,
    embedding: &EmbeddingStructs<'_>,
) -> Result<Vec<Extension>, ModelError> {
    let mut out = Vec::new();
    let (obj, t) = strip(src, obj)?;
    let Type::Struct(c) = &t else { return Ok(out) };
    if offset < c.size {
        return Ok(out);
    }
    let fit = |container: TypeRef, how: Extends| -> Result<Option<Extension>, ModelError> {
        if src.size_of(container)?.is_none_or(|size| size <= offset) {
            return Ok(None);
        }
        let paths = member_at(src, container, offset)?;
        let Some(member) = paths
            .iter()
            .find(|p| p.place == Placement::Start && p.size == want)
            .or_else(|| paths.iter().find(|p| p.place == Placement::Start))
            .or_else(|| paths.iter().find(|p| p.place != Placement::Padding))
            .cloned()
        else {
            return Ok(None);
        };
        let top = match member.names.first() {
            Some(first) => {
                let name = first.split('[').next().unwrap_or(first);
                resolve_member(src, container, name)?.unwrap_or_else(|| member.clone())
            }
            None => member.clone(),
        };
        Ok(Some(Extension { container, member, top, how }))
    };
    // The family: named after `obj`, starting with the same tag. A struct with no tag
    // (its first member is not a named integer: `struct sock`) has no family, and its
    // name's would-be relatives are not read at all.
    let tag = match &c.name {
        Some(name) => first_leaf(src, obj)?.map(|tag| (name, tag)),
        None => None,
    };
    if let Some((name, (a_name, a_size))) = &tag {
        let names = family(name)?;
        let mut family = Vec::new();
        for other in names.iter() {
            for cand in src.find_type(crate::model::TypeNamespace::Struct, other)?.into_iter().take(1) {
                let same_tag = match first_leaf(src, cand)? {
                    Some((b_name, b_size)) => *a_size == b_size && last_word(a_name) == last_word(&b_name),
                    None => false,
                };
                if same_tag {
                    if let Some(e) = fit(cand, Extends::Family)? {
                        family.push(e);
                    }
                }
            }
            if family.len() >= MAX_EXTENSIONS {
                break;
            }
        }
        let whole = |e: &Extension| offset + want <= e.top.offset + e.top.size;
        let mut sized = Vec::with_capacity(family.len());
        for e in family {
            sized.push((!whole(&e), src.size_of(e.container)?.unwrap_or(u64::MAX), e));
        }
        sized.sort_by_key(|a| (a.0, a.1));
        out.extend(sized.into_iter().map(|(_, _, e)| e));
    }
    // The structs embedding it at offset 0.
    let mut embedded = Vec::new();
    for &c in embedding(obj)?.iter() {
        if let Some(e) = fit(c, Extends::Embeds)? {
            if e.member.place == Placement::Start {
                embedded.push(e);
            }
        }
    }
    // Prefer the container whose member has exactly the size read (stable otherwise).
    embedded.sort_by_key(|e| e.member.size != want);
    out.extend(embedded);
    out.truncate(MAX_EXTENSIONS);
    Ok(out)
}

/// The name and size of the first member at offset 0 (through anonymous composites, not
/// named ones), when it is an integer: a family's tag (`sa_family`).
fn first_leaf(src: &dyn TypeSource, ty: TypeRef) -> Result<Option<(String, u64)>, ModelError> {
    for p in member_at(src, ty, 0)? {
        if p.place == Placement::Start
            && p.bitfield_size == 0
            && p.names.len() == 1
            && matches!(*strip_shared(src, p.ty)?.1, Type::Int { .. })
        {
            if let Some(last) = p.names.last() {
                return Ok(Some((last.clone(), p.size)));
            }
        }
    }
    Ok(None)
}

/// `family` of `sin6_family`.
fn last_word(name: &str) -> &str {
    name.rsplit('_').next().unwrap_or(name)
}

/// Whether `other` is named as a kind of `name`: `name`'s words, then at least one more
/// (`sockaddr_in6`; `__kernel_sockaddr_storage`, the uapi spelling of
/// `sockaddr_storage`, for `sockaddr`).
fn extends_name(name: &str, other: &str) -> bool {
    let words: Vec<&str> = name.split('_').filter(|w| !w.is_empty()).collect();
    let mut theirs: Vec<&str> = other.split('_').filter(|w| !w.is_empty()).collect();
    if theirs.first() == Some(&"kernel") && words.first() != Some(&"kernel") {
        theirs.remove(0);
    }
    !words.is_empty() && theirs.len() > words.len() && theirs.starts_with(&words)
}

// ---------------------------------------------------------------------------------
// pahole-style printer.

/// Prints composite `ty` the way `pahole -C NAME` does (cachelines of 64 bytes):
/// members with `/* offset size */`, bitfields with `/* offset:bit size */`, holes,
/// nested anonymous structs/unions expanded with absolute offsets, and the summary.
///
/// Not reproduced: pahole's inferred `__attribute__((__aligned__(N)))` /
/// `__packed__` annotations and the `forced alignments` line (BTF has no alignment;
/// pahole guesses it).
pub fn print_struct(src: &dyn TypeSource, ty: TypeRef) -> Result<String, ModelError> {
    let (_, t) = strip(src, ty)?;
    let mut p = Printer { src, out: String::new(), cacheline: 0 };
    match &t {
        Type::Struct(c) => {
            p.class(c, ty, &Conf { indent: 0, ts: 26, ns: 23, base: 0, top: true, suffix: None, in_union: false }, 0)?;
        }
        Type::Union(c) => {
            p.union(c, &Conf { indent: 0, ts: 26, ns: 21, base: 0, top: true, suffix: None, in_union: false }, 0)?;
        }
        _ => {
            return Err(ModelError::Malformed {
                source_name: src.error_name(),
                offset: 0,
                what: format!("type {ty:?} is not a struct or union"),
            })
        }
    }
    p.out.push_str(";\n");
    Ok(p.out)
}

/// A function's prototype as `pfunct -P` prints it: `ssize_t vfs_read(struct file * file, ...);`
/// (pahole's spacing, e.g. `const char  *`), for comparing with pahole's tools.
pub fn pahole_prototype(src: &dyn TypeSource, f: &crate::model::FunctionInfo) -> Result<String, ModelError> {
    let mut out = String::with_capacity(96);
    write_prototype(src, f, &mut out)?;
    Ok(out)
}

/// Whether [`pahole_prototype`] prints `f`: the same reads in the same order (so the same
/// error), without the text.
pub fn prototype_prints(src: &dyn TypeSource, f: &crate::model::FunctionInfo) -> Result<(), ModelError> {
    write_prototype(src, f, &mut Nowhere)
}

/// The prototype written left to right: the reads happen in the order they did when each
/// part was a string of its own, so the first unreadable type is the same error.
fn write_prototype(
    src: &dyn TypeSource,
    f: &crate::model::FunctionInfo,
    out: &mut impl Text,
) -> Result<(), ModelError> {
    let p = Printer { src, out: String::new(), cacheline: 0 };
    match f.proto.ret {
        Some(r) => p.write_tag_name(r, 0, out)?,
        None => out.push_str("void"),
    }
    out.push_str(" ");
    out.push_str(&f.name);
    p.write_params(&f.proto, 0, out)?;
    out.push_str(";");
    Ok(())
}

/// Where [`Printer`]'s type names are written: a string, or [`Nowhere`].
trait Text {
    fn push_str(&mut self, s: &str);
    /// How much has been written.
    fn len(&self) -> usize;
    /// Spaces after what was written since `start` (a [`Text::len`]), up to `width`
    /// characters (printf's `%-*s`).
    fn pad_from(&mut self, start: usize, width: usize);
}

impl Text for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    fn len(&self) -> usize {
        String::len(self)
    }
    fn pad_from(&mut self, start: usize, width: usize) {
        let written = self.get(start..).map_or(0, |s| s.chars().count());
        self.extend(std::iter::repeat_n(' ', width.saturating_sub(written)));
    }
}

/// Text thrown away: whether something prints, without printing it.
struct Nowhere;

impl Text for Nowhere {
    fn push_str(&mut self, _: &str) {}
    fn len(&self) -> usize {
        0
    }
    fn pad_from(&mut self, _: usize, _: usize) {}
}

struct Conf<'a> {
    indent: usize,
    /// pahole's type_spacing / name_spacing: the offset comment starts at column
    /// `ts + ns` after the indentation.
    ts: i64,
    ns: i64,
    /// Absolute byte offset of the composite being printed.
    base: u64,
    top: bool,
    suffix: Option<&'a str>,
    /// Inside a union at any depth (pahole then prints `[0]`, never `[]`).
    in_union: bool,
}

/// One member with pahole's derived fields (byte offset of the storage unit for
/// bitfields, bit offset inside it).
struct Slot {
    m: crate::model::Member,
    byte_size: u64,
    byte_offset: u64,
    bitfield_offset: u64,
    bit_size: u64,
}

#[derive(Default)]
struct Holes {
    pre_hole: u64,
    pre_bit_hole: u64,
    hole: Vec<u64>,
    bit_hole: Vec<u64>,
    nr_holes: u64,
    nr_bit_holes: u64,
    padding: u64,
    bit_padding: u64,
}

struct Printer<'a> {
    src: &'a dyn TypeSource,
    out: String,
    cacheline: u64,
}

fn tabs(n: usize) -> String {
    "\t".repeat(n.min(16))
}

fn pad(s: &str, width: i64) -> String {
    // printf("%-*s") with a negative width left-justifies with its absolute value.
    let w = width.unsigned_abs() as usize;
    format!("{s:<w$}")
}

fn slots(src: &dyn TypeSource, c: &Composite) -> Result<Vec<Slot>, ModelError> {
    let mut out = Vec::with_capacity(c.members.len());
    for m in c.members.iter() {
        let (_, t) = strip(src, m.ty)?;
        let byte_size = src.size_of(m.ty)?.unwrap_or(0);
        let bit_size = byte_size * 8;
        let (byte_offset, bitfield_offset) = if m.bitfield_size != 0
            && bit_size != 0
            && matches!(t, Type::Int { .. } | Type::Enum { .. } | Type::Forward { .. })
        {
            let byte_offset = m.bit_offset / bit_size * bit_size / 8;
            (byte_offset, m.bit_offset - byte_offset * 8)
        } else {
            (m.bit_offset / 8, 0)
        };
        out.push(Slot { m: m.clone(), byte_size, byte_offset, bitfield_offset, bit_size });
    }
    Ok(out)
}

/// pahole's `class__find_holes`: byte and bit holes between members, tail padding.
fn find_holes(slots: &[Slot], size: u64) -> Holes {
    let mut h = Holes { hole: vec![0; slots.len()], bit_hole: vec![0; slots.len()], ..Holes::default() };
    let (mut last_seen_bit, mut cur_bitfield_end, mut cur_bitfield_size) = (0u64, 0u64, 0u64);
    let mut in_bitfield = false;
    for (i, s) in slots.iter().enumerate() {
        let bit_start = s.m.bit_offset;
        let bit_end = bit_start + if s.m.bitfield_size != 0 { u64::from(s.m.bitfield_size) } else { s.byte_size * 8 };
        let (mut bit_holes, mut byte_holes) = (0i64, 0i64);
        if in_bitfield {
            let bitfield_end = bit_start.min(cur_bitfield_end);
            bit_holes = bitfield_end as i64 - last_seen_bit as i64;
            last_seen_bit = bitfield_end;
        }
        if s.m.bitfield_size != 0 {
            let aligned_start = s.byte_offset * 8;
            if last_seen_bit < aligned_start && aligned_start <= bit_start {
                byte_holes = s.byte_offset as i64 - (last_seen_bit / 8) as i64;
                last_seen_bit = aligned_start;
            }
            bit_holes += bit_start as i64 - last_seen_bit as i64;
        } else {
            byte_holes = (bit_start / 8) as i64 - (last_seen_bit / 8) as i64;
        }
        let (bh, yh) = (bit_holes.max(0) as u64, byte_holes.max(0) as u64);
        if i == 0 {
            h.pre_bit_hole = bh;
            h.pre_hole = yh;
        } else {
            h.bit_hole[i - 1] = bh;
            h.hole[i - 1] = yh;
        }
        h.nr_bit_holes += u64::from(bh > 0);
        h.nr_holes += u64::from(yh > 0);
        in_bitfield = s.m.bitfield_size != 0;
        if in_bitfield {
            if bit_end > cur_bitfield_end || s.bit_size > cur_bitfield_size {
                cur_bitfield_size = s.bit_size;
                cur_bitfield_end = s.byte_offset * 8 + cur_bitfield_size;
                if bit_end > cur_bitfield_end {
                    cur_bitfield_end += cur_bitfield_size;
                }
            }
        } else {
            cur_bitfield_size = 0;
            cur_bitfield_end = bit_end;
        }
        last_seen_bit = last_seen_bit.max(bit_end);
    }
    if in_bitfield {
        let bitfield_end = (size * 8).min(cur_bitfield_end);
        h.bit_padding = bitfield_end.saturating_sub(last_seen_bit);
        last_seen_bit = bitfield_end;
    }
    h.padding = size.saturating_sub(last_seen_bit / 8);
    h
}

fn plural(n: u64) -> &'static str {
    if n != 1 {
        "s"
    } else {
        ""
    }
}

impl Printer<'_> {
    fn cacheline_boundary(&mut self, offset: u64, indent: usize) {
        let line = offset / CACHELINE;
        if line > self.cacheline {
            let pos = offset % CACHELINE;
            let bytes = offset - pos;
            if pos == 0 {
                let _ = writeln!(self.out, "/* --- cacheline {line} boundary ({bytes} bytes) --- */");
            } else {
                let _ = writeln!(
                    self.out,
                    "/* --- cacheline {line} boundary ({bytes} bytes) was {pos} byte{} ago --- */",
                    plural(pos)
                );
            }
            self.out.push_str(&tabs(indent));
            self.cacheline = line;
        }
    }

    /// pahole's `tag__name`: the type as a string, qualifiers with their odd spacing.
    fn tag_name(&self, ty: TypeRef, depth: usize) -> Result<String, ModelError> {
        let mut out = String::new();
        self.write_tag_name(ty, depth, &mut out)?;
        Ok(out)
    }

    /// [`Printer::tag_name`] appended to `out`.
    fn write_tag_name(&self, ty: TypeRef, depth: usize, out: &mut impl Text) -> Result<(), ModelError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(self.src, ty));
        }
        if ty.0 == 0 {
            out.push_str("void");
            return Ok(());
        }
        let t = self.src.get_shared(ty)?;
        self.write_tag_name_of(ty, &t, depth, out)
    }

    /// [`Printer::write_tag_name`] of `ty`, whose type `t` the caller has read already.
    fn write_tag_name_of(&self, ty: TypeRef, t: &Type, depth: usize, out: &mut impl Text) -> Result<(), ModelError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(self.src, ty));
        }
        if ty.0 == 0 {
            out.push_str("void");
            return Ok(());
        }
        match t {
            &Type::Pointer { target } => {
                if target.0 == 0 {
                    out.push_str("void *");
                    return Ok(());
                }
                let t = self.src.get_shared(target)?;
                if let Type::Qualified { qualifier: Qualifier::Const, target: inner } = *t {
                    if matches!(*self.src.get_shared(inner)?, Type::Pointer { .. }) {
                        self.write_tag_name(inner, depth + 1, out)?;
                        out.push_str(" const *");
                        return Ok(());
                    }
                }
                self.write_tag_name_of(target, &t, depth + 1, out)?;
                out.push_str(" *");
            }
            &Type::Qualified { qualifier, target } => match qualifier {
                Qualifier::Const => {
                    out.push_str("const ");
                    self.write_tag_name(target, depth + 1, out)?;
                    out.push_str(" ");
                }
                Qualifier::Volatile => {
                    out.push_str("volatile ");
                    self.write_tag_name(target, depth + 1, out)?;
                    out.push_str(" ");
                }
                Qualifier::Restrict => {
                    self.write_tag_name(target, depth + 1, out)?;
                    out.push_str(" restrict ");
                }
                Qualifier::TypeTag => self.write_tag_name(target, depth + 1, out)?,
            },
            &Type::Array { element, .. } => self.write_tag_name(element, depth + 1, out)?,
            Type::Function(proto) => {
                match proto.ret {
                    Some(r) => self.write_tag_name(r, depth + 1, out)?,
                    None => out.push_str("void"),
                }
                out.push_str(" ()");
                self.write_params(proto, depth + 1, out)?;
            }
            Type::Struct(c) => {
                out.push_str("struct ");
                out.push_str(c.name.as_deref().unwrap_or_default());
            }
            Type::Union(c) => {
                out.push_str("union ");
                out.push_str(c.name.as_deref().unwrap_or_default());
            }
            Type::Enum { name, .. } => {
                out.push_str("enum ");
                out.push_str(name.as_deref().unwrap_or_default());
            }
            Type::Int { name, .. } | Type::Float { name, .. } | Type::Typedef { name, .. } => out.push_str(name),
            leaf => out.push_str(&leaf_name(leaf)),
        }
        Ok(())
    }

    /// pahole's `ftype__fprintf_parms`, appended to `out`.
    fn write_params(
        &self,
        proto: &crate::model::Prototype,
        depth: usize,
        out: &mut impl Text,
    ) -> Result<(), ModelError> {
        out.push_str("(");
        for (i, p) in proto.params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            let name = p.name.as_deref();
            let ty = self.src.get_shared(p.ty)?;
            if let Type::Pointer { target } = *ty {
                if let Type::Function(inner) = &*self.src.get_shared(target)? {
                    self.write_ftype(inner, name, true, 0, depth + 1, out)?;
                    continue;
                }
            }
            if let Type::Function(inner) = &*ty {
                self.write_ftype(inner, name, false, 0, depth + 1, out)?;
                continue;
            }
            // What `tag_name` reads first, read once.
            if depth + 1 > MAX_DEPTH || p.ty.0 == 0 {
                self.write_tag_name(p.ty, depth + 1, out)?;
            } else {
                self.write_tag_name_of(p.ty, &ty, depth + 1, out)?;
            }
            if let Some(n) = name {
                out.push_str(" ");
                out.push_str(n);
            }
        }
        if proto.params.is_empty() {
            out.push_str("void");
        } else if proto.variadic {
            out.push_str(", ...");
        }
        out.push_str(")");
        Ok(())
    }

    /// pahole's `ftype__fprintf` for a prototype (`is_prototype` true).
    fn ftype(
        &self,
        proto: &crate::model::Prototype,
        name: Option<&str>,
        pointer: bool,
        ts: i64,
        depth: usize,
    ) -> Result<String, ModelError> {
        let mut out = String::new();
        self.write_ftype(proto, name, pointer, ts, depth, &mut out)?;
        Ok(out)
    }

    /// [`Printer::ftype`] appended to `out`.
    fn write_ftype(
        &self,
        proto: &crate::model::Prototype,
        name: Option<&str>,
        pointer: bool,
        ts: i64,
        depth: usize,
        out: &mut impl Text,
    ) -> Result<(), ModelError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(self.src, TypeRef(0)));
        }
        let start = out.len();
        match proto.ret {
            Some(r) => self.write_tag_name(r, depth + 1, out)?,
            None => out.push_str("void"),
        }
        // `pad`: left-justified to |ts| characters.
        out.pad_from(start, ts.unsigned_abs() as usize);
        out.push_str(" (");
        if pointer {
            out.push_str("*");
        }
        out.push_str(name.unwrap_or(""));
        out.push_str(")");
        self.write_params(proto, depth + 1, out)
    }

    /// pahole's `type__fprintf` for a member of a non-inline type.
    fn type_decl(
        &mut self,
        ty: TypeRef,
        name: &str,
        ts: i64,
        last: (bool, bool, bool),
        at: (&Conf<'_>, u64),
        depth: usize,
    ) -> Result<String, ModelError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(self.src, ty));
        }
        Ok(match self.src.get(ty)? {
            Type::Pointer { target } => {
                let mut t = target;
                // Type tags (`__rcu`) are skipped to find a function pointer.
                for _ in 0..MAX_DEPTH {
                    match self.src.get(t)? {
                        Type::Qualified { qualifier: Qualifier::TypeTag, target } => t = target,
                        _ => break,
                    }
                }
                if t.0 != 0 {
                    if let Type::Function(proto) = self.src.get(t)? {
                        return self.ftype(&proto, Some(name), true, ts, depth + 1);
                    }
                }
                format!("{} {name}", pad(&self.tag_name(ty, depth + 1)?, ts))
            }
            Type::Function(proto) => self.ftype(&proto, Some(name), false, ts, depth + 1)?,
            Type::Qualified { qualifier: Qualifier::Const, target } => {
                format!("const {}", self.type_decl(target, name, ts - 6, last, at, depth + 1)?)
            }
            Type::Qualified { qualifier: Qualifier::TypeTag, target } => {
                self.type_decl(target, name, ts, last, at, depth + 1)?
            }
            Type::Array { element, len } => {
                let (first, is_last, in_union) = last;
                let mut elem = element;
                if len == 0 {
                    if let Type::Qualified { qualifier: Qualifier::Const, target } = self.src.get(element)? {
                        elem = target;
                    }
                }
                let inner = match self.src.get(elem)? {
                    // An array of an anonymous struct/union is printed inline.
                    Type::Struct(c) | Type::Union(c) if c.name.is_none() => {
                        let is_struct = matches!(self.src.get(elem)?, Type::Struct(_));
                        let (conf, offset) = at;
                        let inner = Conf {
                            indent: conf.indent,
                            ts: ts - 8,
                            ns: conf.ns,
                            base: offset,
                            top: false,
                            suffix: Some(name),
                            in_union: conf.in_union,
                        };
                        let saved = std::mem::take(&mut self.out);
                        if is_struct {
                            self.class(&c, elem, &inner, depth + 1)?;
                        } else {
                            self.union(&c, &inner, depth + 1)?;
                        }
                        std::mem::replace(&mut self.out, saved)
                    }
                    _ => self.type_decl(elem, name, ts, last, at, depth + 1)?,
                };
                // pahole: `[]` only for a zero-length array that is the last of several members.
                if len != 0 || !is_last || first || in_union {
                    format!("{inner}[{len}]")
                } else {
                    format!("{inner}[]")
                }
            }
            Type::Struct(c) => format!("struct {} {name}", pad(c.name.as_deref().unwrap_or(""), ts - 7)),
            Type::Union(c) => format!("union {} {name}", pad(c.name.as_deref().unwrap_or(""), ts - 6)),
            Type::Enum { name: n, .. } => {
                format!("enum {} {name}", pad(n.as_deref().unwrap_or(""), ts - 5))
            }
            Type::Forward { name: n, kind } => {
                let (k, w) = match kind {
                    crate::model::ForwardKind::Struct => ("struct", 7),
                    crate::model::ForwardKind::Union => ("union", 6),
                    crate::model::ForwardKind::Enum => ("enum", 5),
                };
                format!("{k} {} {name}", pad(&n, ts - w))
            }
            _ => format!("{} {name}", pad(&self.tag_name(ty, depth + 1)?, ts)),
        })
    }

    /// pahole's `class_member__fprintf`: one member line (or an inline block).
    #[allow(clippy::too_many_arguments)]
    fn member(&mut self, s: &Slot, conf: &Conf<'_>, first: bool, last: bool, depth: usize) -> Result<(), ModelError> {
        let offset = conf.base + s.byte_offset;
        self.cacheline_boundary(offset, conf.indent);
        let m = &s.m;
        if let Type::Enum { name: None, size, signed, values } = self.src.get(m.ty)? {
            // pahole's `enumeration__fprintf` for an anonymous enum member.
            let width = values.iter().map(|v| v.0.len()).max().unwrap_or(0);
            self.out.push_str("enum {\n");
            for (n, v) in &values {
                let v = if signed { (*v as i64).to_string() } else { (*v as u64).to_string() };
                let _ = writeln!(self.out, "{}\t{n:<width$} = {v},", tabs(conf.indent));
            }
            let _ = write!(self.out, "{}}}", tabs(conf.indent));
            if size != 4 {
                self.out.push_str(" __attribute__((__packed__))");
            }
            let name = m.name.as_deref().unwrap_or("");
            let _ = write!(self.out, " {name}");
            if m.bitfield_size != 0 {
                let _ = write!(self.out, ":{}", m.bitfield_size);
            }
            self.out.push(';');
            let width = (conf.ts + conf.ns - name.len() as i64 - 3).max(1) as usize;
            let _ = write!(self.out, "{:width$}/* {offset:5}", " ");
            if m.bitfield_size != 0 {
                let _ = write!(self.out, ":{:2} {:2} */", s.bitfield_offset, s.byte_size);
            } else {
                let _ = write!(self.out, " {:5} */", s.byte_size);
            }
            return Ok(());
        }
        let inline = match self.src.get(m.ty)? {
            Type::Struct(c) if c.name.is_none() => Some((true, c)),
            Type::Union(c) if c.name.is_none() => Some((false, c)),
            _ => None,
        };
        if let Some((is_struct, c)) = inline {
            let inner = Conf {
                indent: conf.indent,
                ts: conf.ts - 8,
                ns: conf.ns,
                base: offset,
                top: false,
                suffix: m.name.as_deref(),
                in_union: conf.in_union,
            };
            if is_struct {
                self.class(&c, m.ty, &inner, depth + 1)?
            } else {
                self.union(&c, &inner, depth + 1)?
            }
            self.out.push(';');
            let slen = m.name.as_ref().map_or(-1, |n| n.len() as i64);
            let width = (conf.ts + conf.ns - slen - 3).max(1) as usize;
            let _ = write!(self.out, "{:width$}/* {offset:5} {:5} */", " ", s.byte_size);
            return Ok(());
        }
        let name = m.name.as_deref().unwrap_or("");
        let mut line = self.type_decl(m.ty, name, conf.ts, (first, last, conf.in_union), (conf, offset), depth + 1)?;
        if m.bitfield_size != 0 {
            let _ = write!(line, ":{}", m.bitfield_size);
        }
        line.push(';');
        // A block printed inline (array of an anonymous struct) leaves no room: one space.
        let spacing =
            if line.contains('\n') { 1 } else { (conf.ts + conf.ns - line.chars().count() as i64).max(1) as usize };
        self.out.push_str(&line);
        let _ = write!(self.out, "{:spacing$}/* {offset:5}", " ");
        if m.bitfield_size != 0 {
            let _ = write!(self.out, ":{:2} {:2} */", s.bitfield_offset, s.byte_size);
        } else {
            let _ = write!(self.out, " {:5} */", s.byte_size);
        }
        Ok(())
    }

    fn union(&mut self, c: &Composite, conf: &Conf<'_>, depth: usize) -> Result<(), ModelError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(self.src, TypeRef(0)));
        }
        match &c.name {
            Some(n) => {
                let _ = writeln!(self.out, "union {n} {{");
            }
            None => self.out.push_str("union {\n"),
        }
        let inner = Conf {
            indent: conf.indent + 1,
            ts: conf.ts,
            ns: conf.ns,
            base: conf.base,
            top: false,
            suffix: None,
            in_union: true,
        };
        let slots = slots(self.src, c)?;
        let saved = self.cacheline;
        let n = slots.len();
        for (i, s) in slots.iter().enumerate() {
            self.out.push_str(&tabs(inner.indent));
            self.member(s, &inner, i == 0, i + 1 == n, depth + 1)?;
            self.out.push('\n');
            self.cacheline = saved;
        }
        self.out.push_str(&tabs(conf.indent));
        self.out.push('}');
        if let Some(sfx) = conf.suffix {
            let _ = write!(self.out, " {sfx}");
        }
        Ok(())
    }

    fn class(&mut self, c: &Composite, ty: TypeRef, conf: &Conf<'_>, depth: usize) -> Result<(), ModelError> {
        if depth > MAX_DEPTH {
            return Err(too_deep(self.src, ty));
        }
        match &c.name {
            Some(n) => {
                let _ = writeln!(self.out, "struct {n} {{");
            }
            None => self.out.push_str("struct {\n"),
        }
        let ind = conf.indent + 1;
        let inner = Conf {
            indent: ind,
            ts: conf.ts,
            ns: conf.ns,
            base: conf.base,
            top: false,
            suffix: None,
            in_union: conf.in_union,
        };
        let slots = slots(self.src, c)?;
        let holes = find_holes(&slots, c.size);
        let mut newline = false;
        let (mut sum_bytes, mut sum_bits, mut sum_holes, mut sum_bit_holes) = (0u64, 0u64, 0u64, 0u64);
        let (mut nr_paddings, mut sum_paddings) = (0u64, 0u64);
        if holes.pre_bit_hole > 0 {
            newline = true;
            self.out.push('\n');
            let _ = writeln!(
                self.out,
                "{}/* XXX {} bit{} hole, try to pack */",
                tabs(ind),
                holes.pre_bit_hole,
                plural(holes.pre_bit_hole)
            );
            sum_bit_holes += holes.pre_bit_hole;
        }
        if holes.pre_hole > 0 {
            if !newline {
                self.out.push('\n');
            }
            newline = true;
            let _ = writeln!(
                self.out,
                "{}/* XXX {} byte{} hole, try to pack */",
                tabs(ind),
                holes.pre_hole,
                plural(holes.pre_hole)
            );
            sum_holes += holes.pre_hole;
        }
        let mut last: Option<&Slot> = None;
        let mut last_size = 0u64;
        let n = slots.len();
        for (i, s) in slots.iter().enumerate() {
            if let Some(l) = last {
                if last_size != 0 && i > 0 && holes.bit_hole[i - 1] != 0 && s.m.bitfield_size != 0 {
                    // pahole makes the bit hole explicit as an unnamed bitfield.
                    let mut width = holes.bit_hole[i - 1];
                    if l.byte_offset != s.byte_offset {
                        let _ = writeln!(self.out, "\n{}/* Force alignment to the next boundary: */", tabs(ind));
                        width = 0;
                    }
                    let ty_name = self.tag_name(s.m.ty, depth + 1)?;
                    let _ = writeln!(self.out, "{}{} :{width};", tabs(ind), pad(&ty_name, inner.ts));
                }
                if last_size != 0 {
                    let combined_prev = s.byte_offset < l.byte_offset
                        || (s.byte_offset == l.byte_offset && l.m.bitfield_size == 0 && s.m.bitfield_size != 0);
                    let combined_next =
                        !combined_prev && s.byte_offset > l.byte_offset && s.byte_offset - l.byte_offset < last_size;
                    if combined_prev || combined_next {
                        if !newline {
                            self.out.push('\n');
                        }
                        newline = true;
                        let which = if combined_prev { "previous" } else { "next" };
                        let _ = writeln!(self.out, "{}/* Bitfield combined with {which} fields */", tabs(ind));
                    }
                }
            }
            if newline {
                self.out.push('\n');
                newline = false;
            }
            self.out.push_str(&tabs(ind));
            self.member(s, &inner, i == 0, i + 1 == n, depth + 1)?;
            // Padding of a member whose type is directly a struct.
            if let Type::Struct(mc) = self.src.get(s.m.ty)? {
                let mh = find_holes(&slots_checked(self.src, &mc, depth)?, mc.size);
                if mh.padding > 0 {
                    nr_paddings += 1;
                    sum_paddings += mh.padding;
                    if !newline {
                        self.out.push('\n');
                    }
                    newline = true;
                    let _ = write!(
                        self.out,
                        "\n{}/* XXX last struct has {} byte{} of padding */",
                        tabs(ind),
                        mh.padding,
                        plural(mh.padding)
                    );
                }
            }
            if holes.bit_hole[i] > 0 {
                if !newline {
                    self.out.push('\n');
                }
                newline = true;
                let b = holes.bit_hole[i];
                let _ = write!(self.out, "\n{}/* XXX {b} bit{} hole, try to pack */", tabs(ind), plural(b));
                sum_bit_holes += b;
            }
            if holes.hole[i] > 0 {
                if !newline {
                    self.out.push('\n');
                }
                newline = true;
                let b = holes.hole[i];
                let _ = write!(self.out, "\n{}/* XXX {b} byte{} hole, try to pack */", tabs(ind), plural(b));
                sum_holes += b;
            }
            self.out.push('\n');
            if s.m.bitfield_size != 0 {
                sum_bits += u64::from(s.m.bitfield_size);
            } else {
                sum_bytes += s.byte_size;
            }
            match last {
                None => last_size = s.byte_size,
                Some(_) if last_size == 0 => last_size = s.byte_size,
                Some(l) if l.byte_offset != s.byte_offset => last_size = s.byte_size,
                Some(l) if l.m.bitfield_size == 0 && s.m.bitfield_size != 0 => last_size = s.byte_size,
                Some(_) => {}
            }
            last = Some(s);
        }
        if conf.top {
            let cachelines = c.size.div_ceil(CACHELINE);
            let _ =
                writeln!(self.out, "\n{}/* size: {}, cachelines: {cachelines}, members: {} */", tabs(ind), c.size, n);
            if sum_holes > 0 || sum_bit_holes > 0 {
                if sum_bytes > 0 {
                    let _ = write!(self.out, "{}/* sum members: {sum_bytes}", tabs(ind));
                    if sum_holes > 0 {
                        let _ = write!(self.out, ", holes: {}, sum holes: {sum_holes}", holes.nr_holes);
                    }
                    self.out.push_str(" */\n");
                }
                if sum_bits > 0 {
                    let _ = write!(self.out, "{}/* sum bitfield members: {sum_bits} bits", tabs(ind));
                    if sum_bit_holes > 0 {
                        let _ = write!(
                            self.out,
                            ", bit holes: {}, sum bit holes: {sum_bit_holes} bits",
                            holes.nr_bit_holes
                        );
                    } else {
                        let _ = write!(self.out, " ({} bytes)", sum_bits / 8);
                    }
                    self.out.push_str(" */\n");
                }
            }
            if holes.padding > 0 {
                let _ = writeln!(self.out, "{}/* padding: {} */", tabs(ind), holes.padding);
            }
            if nr_paddings > 0 {
                let _ = writeln!(self.out, "{}/* paddings: {nr_paddings}, sum paddings: {sum_paddings} */", tabs(ind));
            }
            if holes.bit_padding > 0 {
                let _ = writeln!(self.out, "{}/* bit_padding: {} bits */", tabs(ind), holes.bit_padding);
            }
            let last_line = c.size % CACHELINE;
            if last_line != 0 {
                let _ = writeln!(self.out, "{}/* last cacheline: {last_line} bytes */", tabs(ind));
            }
            let accounted =
                sum_bytes * 8 + sum_bits + sum_holes * 8 + sum_bit_holes + holes.padding * 8 + holes.bit_padding;
            if c.size * 8 != accounted && n != 0 {
                let diff = c.size as i64 * 8 - accounted as i64;
                let _ = writeln!(
                    self.out,
                    "\n{}/* BRAIN FART ALERT! {} bytes != {sum_bytes} (member bytes) + {sum_bits} (member bits) + {sum_holes} (byte holes) + {sum_bit_holes} (bit holes), diff = {diff} bits */",
                    tabs(ind),
                    c.size
                );
            }
        }
        self.out.push_str(&tabs(conf.indent));
        self.out.push('}');
        if let Some(sfx) = conf.suffix {
            let _ = write!(self.out, " {sfx}");
        }
        Ok(())
    }
}

fn slots_checked(src: &dyn TypeSource, c: &Composite, depth: usize) -> Result<Vec<Slot>, ModelError> {
    if depth > MAX_DEPTH {
        return Err(too_deep(src, TypeRef(0)));
    }
    slots(src, c)
}
