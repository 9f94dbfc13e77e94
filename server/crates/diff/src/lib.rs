//! What changed between two kernels, in the terms fevlint's checks use: functions
//! (removed, added, renamed, traceability, each parameter's C type, size and register
//! or stack slot, the return type) and struct/union layouts (size, members removed,
//! added, renamed, moved, resized, retyped). The drift rules build on these results.
//!
//! A type's report covers its own members and the members of its *anonymous*
//! sub-structs and unions (dotted paths through named members of anonymous type,
//! plain names through unnamed ones, as C spells them). A member whose type is a
//! *named* composite (`struct path f_path`) is one entry: a change inside `struct path`
//! is reported under `struct path`, once, not again in every type that embeds it.
//! [`member_moved`] answers for any path, `f_path.dentry` included.

use fevlint_kernel::{Kernel, Trace};
use fevlint_load::symbols::{clone_base, syscall_name};
use fevlint_types::abi;
use fevlint_types::layout::{self, strip, type_name, MAX_DEPTH};
use fevlint_types::model::{Composite, FunctionInfo, ModelError, Type, TypeNamespace, TypeRef, TypeSource};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// A diff could not be made: a name the user gave exists in neither kernel, or a type
/// source failed.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    #[error(transparent)]
    Model(#[from] ModelError),
    #[error("{kernel}: no type information (no BTF or DWARF): types cannot be compared")]
    NoTypes { kernel: String },
    #[error("no function `{name}` in {old} or {new}")]
    UnknownFunction { name: String, old: String, new: String },
    #[error("no struct, union or typedef of one `{name}` in {old} or {new}")]
    UnknownType { name: String, old: String, new: String },
    #[error("`{name}` is not a struct or union name (write `struct file` or `union bpf_attr`)")]
    BadTypeName { name: String },
}

/// Everything that changed from `old` to `new`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelDiff {
    pub old: String,
    pub new: String,
    pub summary: Summary,
    /// Sorted by name. In a full diff only changed functions; with a filter every
    /// requested name (empty `changes` = unchanged).
    pub functions: Vec<FunctionDiff>,
    /// Sorted by (`struct`, `union`, typedef of an anonymous struct/union), then name,
    /// with the same rule as `functions`.
    pub types: Vec<TypeDiff>,
    /// Limits of this comparison (a missing ftrace list, no type source).
    pub notes: Vec<String>,
}

/// Counts over what was compared.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    /// Function names present in both kernels.
    pub functions_compared: usize,
    pub functions_removed: usize,
    pub functions_added: usize,
    /// Present in both, with a different prototype (parameters, return type).
    pub functions_signature_changed: usize,
    /// Present in both, with a different ftrace verdict.
    pub functions_traceability_changed: usize,
    pub types_compared: usize,
    pub types_removed: usize,
    pub types_added: usize,
    /// Present in both with any change (size, members).
    pub types_changed: usize,
    /// Present in both with a different size.
    pub types_resized: usize,
}

/// One function name and what changed about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FunctionDiff {
    pub name: String,
    pub changes: Vec<FunctionChange>,
}

/// A parameter as scripts see it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParamSig {
    pub index: usize,
    pub name: Option<String>,
    /// C type (`struct file *`).
    pub ty: String,
    /// Bytes; `None` for incomplete types.
    pub size: Option<u64>,
    /// `rdi`, `rdx:rcx`, `stack+8` (see [`abi::Loc::describe`]).
    pub location: String,
}

/// Where a removed function went, when that can be told from names.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Successor {
    /// Only compiler clones of it are left (`name.isra.0`).
    Clones { names: Vec<String> },
    /// A known rename to a name the old kernel did not have (`__kmalloc` →
    /// `__kmalloc_noprof`).
    Renamed { name: String },
    /// Another known form of the same function that both kernels have (`__do_sys_X`
    /// gone, `__x64_sys_X` still there).
    Alias { name: String },
}

/// The ftrace verdict, as the diff reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TraceState {
    Traceable { count: usize },
    NotTraceable,
    OnlyClones { clones: Vec<String> },
}

impl TraceState {
    fn from_trace(t: &Trace) -> Option<TraceState> {
        match t {
            Trace::Traceable { count } => Some(TraceState::Traceable { count: *count }),
            Trace::NotTraceable => Some(TraceState::NotTraceable),
            Trace::OnlyClones(c) => Some(TraceState::OnlyClones { clones: c.clone() }),
            Trace::Unknown => None,
        }
    }

    pub fn describe(&self) -> String {
        match self {
            TraceState::Traceable { count: 1 } => "traceable".to_owned(),
            TraceState::Traceable { count } => format!("traceable ({count} functions of that name)"),
            TraceState::NotTraceable => "not traceable".to_owned(),
            TraceState::OnlyClones { clones } => format!("only clones traceable ({})", clones.join(", ")),
        }
    }
}

/// One change to a function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FunctionChange {
    Removed {
        successor: Option<Successor>,
    },
    /// `predecessor`: the old name, for a known rename.
    Added {
        predecessor: Option<String>,
    },
    Traceability {
        old: TraceState,
        new: TraceState,
    },
    /// The number of prototypes in the type source (0: only in the ftrace list; more
    /// than 1: static functions of the same name). Signatures are compared when both
    /// have one; the first prototype of each is compared.
    Prototypes {
        old: usize,
        new: usize,
    },
    ParamCount {
        old: usize,
        new: usize,
    },
    ParamRemoved {
        param: ParamSig,
    },
    ParamAdded {
        param: ParamSig,
    },
    ParamName {
        index: usize,
        old: Option<String>,
        new: Option<String>,
    },
    ParamType {
        index: usize,
        name: Option<String>,
        old: String,
        new: String,
    },
    ParamSize {
        index: usize,
        name: Option<String>,
        old: Option<u64>,
        new: Option<u64>,
    },
    /// The register or stack slot changed: slot k of a script no longer holds it.
    ParamLocation {
        index: usize,
        name: Option<String>,
        old: String,
        new: String,
    },
    Return {
        old: String,
        new: String,
    },
    Variadic {
        old: bool,
        new: bool,
    },
}

impl FunctionChange {
    /// Part of the prototype (not existence or traceability).
    pub fn is_signature(&self) -> bool {
        !matches!(
            self,
            FunctionChange::Removed { .. } | FunctionChange::Added { .. } | FunctionChange::Traceability { .. }
        )
    }
}

/// One struct or union and what changed about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TypeDiff {
    /// `struct file`, `union bpf_attr`, or a typedef's name for an anonymous struct or
    /// union (`atomic_t`).
    pub name: String,
    pub changes: Vec<TypeChange>,
}

impl TypeDiff {
    pub fn size_change(&self) -> Option<(u64, u64)> {
        self.changes.iter().find_map(|c| match c {
            TypeChange::Size { old, new } => Some((*old, *new)),
            _ => None,
        })
    }

    pub fn members(&self) -> impl Iterator<Item = &MemberChange> + '_ {
        self.changes.iter().filter_map(|c| match c {
            TypeChange::Member { change } => Some(change),
            _ => None,
        })
    }
}

/// One change to a struct or union.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TypeChange {
    Removed {
        size: u64,
    },
    Added {
        size: u64,
    },
    /// Bytes.
    Size {
        old: u64,
        new: u64,
    },
    /// Complete definitions of that name (BTF keeps differently shaped duplicates,
    /// e.g. a struct defined in two files); the first of each is compared.
    Duplicates {
        old: usize,
        new: usize,
    },
    Member {
        change: MemberChange,
    },
}

/// A member as a layout shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MemberInfo {
    /// Dotted through named members of anonymous type; plain through unnamed ones.
    pub path: String,
    /// Bytes from the start of the type (the byte holding the first bit, for bitfields).
    pub offset: u64,
    /// Bits from the start of the type.
    pub bit_offset: u64,
    /// Bytes (the bytes touched, for bitfields).
    pub size: u64,
    /// Width in bits, for bitfields.
    pub bitfield: Option<u32>,
    /// C type.
    pub ty: String,
}

/// One change to a member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MemberChange {
    Removed {
        member: MemberInfo,
    },
    Added {
        member: MemberInfo,
    },
    /// Same offset, size and type, another name.
    Renamed {
        old: MemberInfo,
        new: MemberInfo,
    },
    /// Same name, another offset (bytes; bits for bitfields).
    Moved {
        path: String,
        old_offset: u64,
        new_offset: u64,
        old_bit_offset: u64,
        new_bit_offset: u64,
    },
    /// Same name, another size (bytes) or bitfield width.
    Resized {
        path: String,
        old_size: u64,
        new_size: u64,
        old_bitfield: Option<u32>,
        new_bitfield: Option<u32>,
    },
    /// Same name, another C type.
    Retyped {
        path: String,
        old: String,
        new: String,
    },
}

impl MemberChange {
    pub fn path(&self) -> &str {
        match self {
            MemberChange::Removed { member } | MemberChange::Added { member } => &member.path,
            MemberChange::Renamed { new, .. } => &new.path,
            MemberChange::Moved { path, .. }
            | MemberChange::Resized { path, .. }
            | MemberChange::Retyped { path, .. } => path,
        }
    }
}

/// What to compare.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only these functions (each reported, changed or not).
    pub functions: Vec<String>,
    /// Only these types (`struct file`, `union bpf_attr`; a bare name tries struct, union,
    /// then a typedef of an anonymous struct or union).
    pub types: Vec<String>,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.functions.is_empty() && self.types.is_empty()
    }
}

/// The full diff (empty filter) or only the requested names.
pub fn diff(a: &Kernel, b: &Kernel, filter: &Filter) -> Result<KernelDiff, DiffError> {
    let mut notes = Vec::new();
    if a.filter_functions().is_none() || b.filter_functions().is_none() {
        notes.push("one kernel has no ftrace list: traceability changes are not reported".to_owned());
    }
    let mut summary = Summary::default();
    let full = filter.is_empty();
    let (functions, types) = if full {
        rayon::join(|| all_functions(a, b), || all_types(a, b))
    } else {
        let f = filter.functions.iter().map(|n| diff_function(a, b, n)).collect::<Result<Vec<_>, _>>();
        let t = filter.types.iter().map(|n| diff_named_type(a, b, n)).collect::<Result<Vec<_>, _>>();
        (f.map(|f| (f, None)), t.map(|t| (t, None)))
    };
    let (functions, fcount) = functions?;
    let (types, tcount) = types?;
    if full && (a.types().is_none() || b.types().is_none()) {
        notes.push("one kernel has no type information: signatures and layouts are not compared".to_owned());
    }
    for f in &functions {
        if f.changes.iter().any(|c| matches!(c, FunctionChange::Removed { .. })) {
            summary.functions_removed += 1;
        } else if f.changes.iter().any(|c| matches!(c, FunctionChange::Added { .. })) {
            summary.functions_added += 1;
        }
        if f.changes.iter().any(FunctionChange::is_signature) {
            summary.functions_signature_changed += 1;
        }
        if f.changes.iter().any(|c| matches!(c, FunctionChange::Traceability { .. })) {
            summary.functions_traceability_changed += 1;
        }
    }
    summary.functions_compared = fcount.unwrap_or_else(|| {
        let exists_in_both = |f: &&FunctionDiff| {
            !f.changes.iter().any(|c| matches!(c, FunctionChange::Removed { .. } | FunctionChange::Added { .. }))
        };
        functions.iter().filter(exists_in_both).count()
    });
    for t in &types {
        match t.changes.first() {
            Some(TypeChange::Removed { .. }) => summary.types_removed += 1,
            Some(TypeChange::Added { .. }) => summary.types_added += 1,
            Some(_) => {
                summary.types_changed += 1;
                if t.size_change().is_some() {
                    summary.types_resized += 1;
                }
            }
            None => {}
        }
    }
    summary.types_compared = tcount.unwrap_or_else(|| {
        types
            .iter()
            .filter(|t| !matches!(t.changes.first(), Some(TypeChange::Removed { .. } | TypeChange::Added { .. })))
            .count()
    });
    Ok(KernelDiff { old: a.name.clone(), new: b.name.clone(), summary, functions, types, notes })
}

// ---------------------------------------------------------------------------------
// Per-thread memo of C type names: the same few thousand types (`struct sock *`, `u32`)
// name most parameters and members, and naming a struct decodes all its members.

struct Names<'a> {
    src: &'a dyn TypeSource,
    names: HashMap<TypeRef, String>,
    /// Whether a type (through typedefs and qualifiers) is an anonymous struct/union.
    anon: HashMap<TypeRef, bool>,
}

impl<'a> Names<'a> {
    fn new(src: &'a dyn TypeSource) -> Self {
        Names { src, names: HashMap::new(), anon: HashMap::new() }
    }

    fn name(&mut self, ty: TypeRef) -> Result<String, ModelError> {
        if let Some(n) = self.names.get(&ty) {
            return Ok(n.clone());
        }
        let n = type_name(self.src, ty)?;
        self.names.insert(ty, n.clone());
        Ok(n)
    }

    /// The members of an anonymous struct/union type; `None` for any other type.
    fn anonymous(&mut self, ty: TypeRef) -> Result<Option<Composite>, ModelError> {
        if self.anon.get(&ty) == Some(&false) {
            return Ok(None);
        }
        let found = match composite(self.src, ty)? {
            Some((_, c)) if c.name.is_none() => Some(c),
            _ => None,
        };
        self.anon.insert(ty, found.is_some());
        Ok(found)
    }
}

// ---------------------------------------------------------------------------------
// Functions.

/// The names a diff compares: type-source functions and ftrace names, without compiler
/// clones (they are reported through their base name) and without the placeholders
/// ftrace prints for overridden weak functions.
fn universe(k: &Kernel) -> Vec<&str> {
    k.function_names().iter().filter(|n| !n.contains('.') && !n.starts_with("__ftrace_invalid_address___")).collect()
}

fn contains(sorted: &[&str], name: &str) -> bool {
    sorted.binary_search(&name).is_ok()
}

/// Names a function is known to be renamed to or from.
fn rename_candidates(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    match name.strip_suffix("_noprof") {
        Some(base) => out.push(base.to_owned()),
        None => out.push(format!("{name}_noprof")),
    }
    if let Some((_, sys)) = syscall_name(name) {
        for p in ["__x64_sys_", "__do_sys_", "__se_sys_", "sys_"] {
            let n = format!("{p}{sys}");
            if n != name {
                out.push(n);
            }
        }
    }
    out
}

/// Traceable clones of `name` in a kernel (`name.isra.0`), from its sorted name list.
fn clones_of(k: &Kernel, name: &str) -> Vec<String> {
    let names = k.function_names();
    let prefix = format!("{name}.");
    (names.lower_bound(&prefix)..names.len())
        .map(|i| names.get(i))
        .take_while(|n| n.starts_with(&prefix))
        .filter(|n| clone_base(n).0 == name)
        .map(str::to_owned)
        .collect()
}

/// Every function that changed (sorted by name), and how many names both kernels have.
pub fn all_functions(a: &Kernel, b: &Kernel) -> Result<(Vec<FunctionDiff>, Option<usize>), DiffError> {
    let ua = universe(a);
    let ub = universe(b);
    let mut removed = Vec::new();
    let mut added = Vec::new();
    let mut common = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < ua.len() || j < ub.len() {
        match (ua.get(i), ub.get(j)) {
            (Some(x), Some(y)) if x == y => {
                common.push(*x);
                i += 1;
                j += 1;
            }
            (Some(x), Some(y)) if x < y => {
                removed.push(*x);
                i += 1;
            }
            (Some(x), None) => {
                removed.push(*x);
                i += 1;
            }
            (_, Some(y)) => {
                added.push(*y);
                j += 1;
            }
            (None, None) => break,
        }
    }
    let compared = common.len();
    let mut out: Vec<FunctionDiff> = common
        .par_iter()
        .map_init(|| caches(a, b), |c, name| compare_function(a, b, name, c))
        .filter(|r| !matches!(r, Ok(f) if f.changes.is_empty()))
        .collect::<Result<_, _>>()?;
    for name in removed {
        out.push(FunctionDiff { name: name.to_owned(), changes: vec![removed_change(&ua, b, &ub, name)] });
    }
    for name in added {
        out.push(FunctionDiff { name: name.to_owned(), changes: vec![added_change(&ua, &ub, name)] });
    }
    out.sort_by(|x, y| x.name.cmp(&y.name));
    Ok((out, Some(compared)))
}

fn removed_change(ua: &[&str], b: &Kernel, ub: &[&str], name: &str) -> FunctionChange {
    let candidates: Vec<String> = rename_candidates(name).into_iter().filter(|n| contains(ub, n)).collect();
    let successor = candidates
        .iter()
        .find(|n| !contains(ua, n))
        .map(|n| Successor::Renamed { name: n.clone() })
        .or_else(|| candidates.first().map(|n| Successor::Alias { name: n.clone() }))
        .or_else(|| {
            let names = clones_of(b, name);
            (!names.is_empty()).then_some(Successor::Clones { names })
        });
    FunctionChange::Removed { successor }
}

fn added_change(ua: &[&str], ub: &[&str], name: &str) -> FunctionChange {
    let predecessor = rename_candidates(name).into_iter().find(|n| contains(ua, n) && !contains(ub, n));
    FunctionChange::Added { predecessor }
}

/// One function, changed or not. An error when neither kernel knows the name.
pub fn diff_function(a: &Kernel, b: &Kernel, name: &str) -> Result<FunctionDiff, DiffError> {
    let (ua, ub) = (universe(a), universe(b));
    match (contains(&ua, name), contains(&ub, name)) {
        (true, true) => Ok(compare_function(a, b, name, &mut caches(a, b))?),
        (true, false) => Ok(FunctionDiff { name: name.to_owned(), changes: vec![removed_change(&ua, b, &ub, name)] }),
        (false, true) => Ok(FunctionDiff { name: name.to_owned(), changes: vec![added_change(&ua, &ub, name)] }),
        (false, false) => {
            Err(DiffError::UnknownFunction { name: name.to_owned(), old: a.name.clone(), new: b.name.clone() })
        }
    }
}

/// A prototype with its parameters placed.
struct Sig {
    params: Vec<ParamSig>,
    ret: String,
    variadic: bool,
}

fn caches<'k>(a: &'k Kernel, b: &'k Kernel) -> Option<(Names<'k>, Names<'k>)> {
    Some((Names::new(a.types()?), Names::new(b.types()?)))
}

fn signature(k: &Kernel, names: &mut Names<'_>, f: &FunctionInfo) -> Result<Sig, ModelError> {
    let locs = abi::locate(k.arch, names.src, &f.proto)?;
    let mut params = Vec::with_capacity(locs.len());
    for p in locs {
        params.push(ParamSig {
            index: p.index,
            name: p.name,
            ty: names.name(p.ty)?,
            size: p.size,
            location: p.loc.describe(),
        });
    }
    let ret = match f.proto.ret {
        Some(r) => names.name(r)?,
        None => "void".to_owned(),
    };
    Ok(Sig { params, ret, variadic: f.proto.variadic })
}

fn compare_function(
    a: &Kernel,
    b: &Kernel,
    name: &str,
    caches: &mut Option<(Names<'_>, Names<'_>)>,
) -> Result<FunctionDiff, ModelError> {
    let fa = a.function(name)?;
    let fb = b.function(name)?;
    let mut changes = Vec::new();
    if let (Some(old), Some(new)) = (TraceState::from_trace(&fa.trace), TraceState::from_trace(&fb.trace)) {
        if old != new {
            changes.push(FunctionChange::Traceability { old, new });
        }
    }
    // Without a type source on one side every count differs: nothing to tell.
    if caches.is_some() && fa.prototypes.len() != fb.prototypes.len() {
        changes.push(FunctionChange::Prototypes { old: fa.prototypes.len(), new: fb.prototypes.len() });
    }
    if let (Some(pa), Some(pb), Some((na, nb))) = (fa.prototypes.first(), fb.prototypes.first(), caches.as_mut()) {
        let old = signature(a, na, pa)?;
        let new = signature(b, nb, pb)?;
        compare_signatures(&old, &new, &mut changes);
    }
    Ok(FunctionDiff { name: name.to_owned(), changes })
}

fn compare_signatures(old: &Sig, new: &Sig, changes: &mut Vec<FunctionChange>) {
    if old.params.len() != new.params.len() {
        changes.push(FunctionChange::ParamCount { old: old.params.len(), new: new.params.len() });
    }
    for (o, n) in old.params.iter().zip(&new.params) {
        let index = o.index;
        if o.name != n.name {
            changes.push(FunctionChange::ParamName { index, old: o.name.clone(), new: n.name.clone() });
        }
        let name = n.name.clone();
        if o.ty != n.ty {
            changes.push(FunctionChange::ParamType { index, name: name.clone(), old: o.ty.clone(), new: n.ty.clone() });
        }
        if o.size != n.size {
            changes.push(FunctionChange::ParamSize { index, name: name.clone(), old: o.size, new: n.size });
        }
        if o.location != n.location {
            changes.push(FunctionChange::ParamLocation {
                index,
                name,
                old: o.location.clone(),
                new: n.location.clone(),
            });
        }
    }
    for p in old.params.iter().skip(new.params.len()) {
        changes.push(FunctionChange::ParamRemoved { param: p.clone() });
    }
    for p in new.params.iter().skip(old.params.len()) {
        changes.push(FunctionChange::ParamAdded { param: p.clone() });
    }
    if old.ret != new.ret {
        changes.push(FunctionChange::Return { old: old.ret.clone(), new: new.ret.clone() });
    }
    if old.variadic != new.variadic {
        changes.push(FunctionChange::Variadic { old: old.variadic, new: new.variadic });
    }
}

// ---------------------------------------------------------------------------------
// Types.

/// `struct file` → (Struct, "file"); a bare name is `None` (try both).
pub fn parse_type_name(name: &str) -> Result<(Option<TypeNamespace>, &str), DiffError> {
    let name = name.trim();
    let (ns, rest) = if let Some(r) = name.strip_prefix("struct ") {
        (Some(TypeNamespace::Struct), r.trim())
    } else if let Some(r) = name.strip_prefix("union ") {
        (Some(TypeNamespace::Union), r.trim())
    } else {
        (None, name)
    };
    if rest.is_empty() || !rest.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return Err(DiffError::BadTypeName { name: name.to_owned() });
    }
    Ok((ns, rest))
}

fn ns_word(ns: TypeNamespace) -> &'static str {
    match ns {
        TypeNamespace::Union => "union",
        _ => "struct",
    }
}

/// The complete definitions of a struct/union name, in the source's order.
fn definitions(src: &dyn TypeSource, ns: TypeNamespace, name: &str) -> Result<Vec<(TypeRef, u64)>, ModelError> {
    let mut out = Vec::new();
    for ty in src.find_type(ns, name)? {
        match (ns, src.get(ty)?) {
            (TypeNamespace::Struct, Type::Struct(c)) | (TypeNamespace::Union, Type::Union(c)) => out.push((ty, c.size)),
            (TypeNamespace::Ordinary, Type::Typedef { .. }) => match strip(src, ty)?.1 {
                Type::Struct(c) | Type::Union(c) if c.name.is_none() => out.push((ty, c.size)),
                _ => {}
            },
            _ => {}
        }
    }
    Ok(out)
}

fn compare_type(
    na: &mut Names<'_>,
    nb: &mut Names<'_>,
    ns: TypeNamespace,
    name: &str,
) -> Result<Option<TypeDiff>, ModelError> {
    let (a, b) = (na.src, nb.src);
    let da = definitions(a, ns, name)?;
    let db = definitions(b, ns, name)?;
    let full = match ns {
        TypeNamespace::Ordinary => name.to_owned(),
        _ => format!("{} {name}", ns_word(ns)),
    };
    let changes = match (da.first(), db.first()) {
        (None, None) => return Ok(None),
        (Some(&(_, size)), None) => vec![TypeChange::Removed { size }],
        (None, Some(&(_, size))) => vec![TypeChange::Added { size }],
        (Some(&(ta, _)), Some(&(tb, _))) => {
            let mut changes = diff_type_with(na, ta, nb, tb)?;
            if (da.len() > 1 || db.len() > 1) && !changes.is_empty() {
                changes.insert(0, TypeChange::Duplicates { old: da.len(), new: db.len() });
            }
            changes
        }
    };
    Ok(Some(TypeDiff { name: full, changes }))
}

/// Every struct/union that changed, and how many both kernels define.
pub fn all_types(a: &Kernel, b: &Kernel) -> Result<(Vec<TypeDiff>, Option<usize>), DiffError> {
    let (Some(sa), Some(sb)) = (a.types(), b.types()) else {
        return Ok((Vec::new(), Some(0)));
    };
    let mut work: Vec<(TypeNamespace, String)> = Vec::new();
    let mut compared = 0;
    for ns in [TypeNamespace::Struct, TypeNamespace::Union, TypeNamespace::Ordinary] {
        let na = sa.type_names(ns)?;
        let nb = sb.type_names(ns)?;
        let setb: HashSet<&str> = nb.iter().map(String::as_str).collect();
        compared += na.iter().filter(|n| setb.contains(n.as_str())).count();
        let mut names: Vec<String> = na.into_iter().chain(nb).collect();
        names.sort_unstable();
        names.dedup();
        work.extend(names.into_iter().map(|n| (ns, n)));
    }
    let out: Vec<TypeDiff> = work
        .par_iter()
        .map_init(|| (Names::new(sa), Names::new(sb)), |(na, nb), (ns, name)| compare_type(na, nb, *ns, name))
        .filter_map(|r| match r {
            Ok(Some(t)) if t.changes.is_empty() => None,
            Ok(Some(t)) => Some(Ok(t)),
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        })
        .collect::<Result<_, _>>()?;
    // `work` is sorted by (struct, union) then name, and par_iter keeps the order.
    Ok((out, Some(compared)))
}

/// One named struct or union (`struct file`), changed or not. An error when neither
/// kernel defines it.
pub fn diff_named_type(a: &Kernel, b: &Kernel, name: &str) -> Result<TypeDiff, DiffError> {
    let (ns, bare) = parse_type_name(name)?;
    let sa = a.types().ok_or_else(|| DiffError::NoTypes { kernel: a.name.clone() })?;
    let sb = b.types().ok_or_else(|| DiffError::NoTypes { kernel: b.name.clone() })?;
    let spaces = match ns {
        Some(ns) => vec![ns],
        None => vec![TypeNamespace::Struct, TypeNamespace::Union, TypeNamespace::Ordinary],
    };
    for ns in spaces {
        if let Some(t) = compare_type(&mut Names::new(sa), &mut Names::new(sb), ns, bare)? {
            return Ok(t);
        }
    }
    Err(DiffError::UnknownType { name: name.to_owned(), old: a.name.clone(), new: b.name.clone() })
}

/// A member of the flattened layout.
struct Flat {
    info: MemberInfo,
    /// Index (in the same list) of the named member of anonymous type holding it.
    parent: Option<usize>,
}

fn composite(src: &dyn TypeSource, ty: TypeRef) -> Result<Option<(bool, Composite)>, ModelError> {
    Ok(match strip(src, ty)?.1 {
        Type::Struct(c) => Some((false, c)),
        Type::Union(c) => Some((true, c)),
        _ => None,
    })
}

fn flatten(
    names: &mut Names<'_>,
    c: &Composite,
    base_bits: u64,
    prefix: &str,
    parent: Option<usize>,
    out: &mut Vec<Flat>,
    depth: usize,
) -> Result<(), ModelError> {
    let src = names.src;
    if depth > MAX_DEPTH {
        return Err(ModelError::TooDeep { source_name: src.error_name(), ty: TypeRef(0) });
    }
    for m in c.members.iter() {
        let start = base_bits.saturating_add(m.bit_offset);
        let anon = names.anonymous(m.ty)?;
        match (&m.name, anon) {
            (None, Some(inner)) => flatten(names, &inner, start, prefix, parent, out, depth + 1)?,
            (None, None) => {} // `int :3;` padding
            (Some(name), anon) => {
                let path = format!("{prefix}{name}");
                let (size, bitfield) = if m.bitfield_size != 0 {
                    let first = start / 8;
                    ((start + u64::from(m.bitfield_size)).div_ceil(8) - first, Some(m.bitfield_size))
                } else {
                    (src.size_of(m.ty)?.unwrap_or(0), None)
                };
                let info = MemberInfo {
                    path: path.clone(),
                    offset: start / 8,
                    bit_offset: start,
                    size,
                    bitfield,
                    ty: names.name(m.ty)?,
                };
                out.push(Flat { info, parent });
                let me = out.len() - 1;
                if let Some(inner) = anon {
                    flatten(names, &inner, start, &format!("{path}."), Some(me), out, depth + 1)?;
                }
            }
        }
    }
    Ok(())
}

/// Size and member changes from `a_ty` (in `a_src`) to `b_ty` (in `b_src`); both must
/// be structs or unions (typedefs and qualifiers are looked through). Empty when the
/// layouts agree.
pub fn diff_type(
    a_src: &dyn TypeSource,
    a_ty: TypeRef,
    b_src: &dyn TypeSource,
    b_ty: TypeRef,
) -> Result<Vec<TypeChange>, ModelError> {
    diff_type_with(&mut Names::new(a_src), a_ty, &mut Names::new(b_src), b_ty)
}

fn diff_type_with(
    na: &mut Names<'_>,
    a_ty: TypeRef,
    nb: &mut Names<'_>,
    b_ty: TypeRef,
) -> Result<Vec<TypeChange>, ModelError> {
    let (Some((_, ca)), Some((_, cb))) = (composite(na.src, a_ty)?, composite(nb.src, b_ty)?) else {
        return Ok(Vec::new());
    };
    let mut changes = Vec::new();
    if ca.size != cb.size {
        changes.push(TypeChange::Size { old: ca.size, new: cb.size });
    }
    let mut fa = Vec::new();
    let mut fb = Vec::new();
    flatten(na, &ca, 0, "", None, &mut fa, 0)?;
    flatten(nb, &cb, 0, "", None, &mut fb, 0)?;
    let mut members = diff_members(&fa, &fb);
    members.sort_by_key(|(key, _)| *key);
    changes.extend(members.into_iter().map(|(_, change)| TypeChange::Member { change }));
    Ok(changes)
}

/// Member changes with a sort key: (bit offset, rank of the kind, position).
fn diff_members(fa: &[Flat], fb: &[Flat]) -> Vec<((u64, u8, usize), MemberChange)> {
    let index_b: std::collections::HashMap<&str, usize> =
        fb.iter().enumerate().map(|(i, f)| (f.info.path.as_str(), i)).collect();
    let index_a: std::collections::HashMap<&str, usize> =
        fa.iter().enumerate().map(|(i, f)| (f.info.path.as_str(), i)).collect();
    let mut out = Vec::new();
    let mut removed = Vec::new();
    for (i, x) in fa.iter().enumerate() {
        let Some(&j) = index_b.get(x.info.path.as_str()) else {
            removed.push(i);
            continue;
        };
        let (o, n) = (&x.info, &fb[j].info);
        let key = n.bit_offset;
        if o.bit_offset != n.bit_offset {
            // A member of a named sub-struct that moved with it is reported once, there.
            let delta = |p: &MemberInfo, q: &MemberInfo| q.bit_offset as i128 - p.bit_offset as i128;
            let with_parent = match (x.parent, fb[j].parent) {
                (Some(pa), Some(pb)) => {
                    fa[pa].info.path == fb[pb].info.path && delta(&fa[pa].info, &fb[pb].info) == delta(o, n)
                }
                _ => false,
            };
            if !with_parent {
                out.push((
                    (key, 1, j),
                    MemberChange::Moved {
                        path: o.path.clone(),
                        old_offset: o.offset,
                        new_offset: n.offset,
                        old_bit_offset: o.bit_offset,
                        new_bit_offset: n.bit_offset,
                    },
                ));
            }
        }
        if o.size != n.size || o.bitfield != n.bitfield {
            out.push((
                (key, 2, j),
                MemberChange::Resized {
                    path: o.path.clone(),
                    old_size: o.size,
                    new_size: n.size,
                    old_bitfield: o.bitfield,
                    new_bitfield: n.bitfield,
                },
            ));
        }
        if o.ty != n.ty {
            out.push((
                (key, 3, j),
                MemberChange::Retyped { path: o.path.clone(), old: o.ty.clone(), new: n.ty.clone() },
            ));
        }
    }
    let mut added: Vec<usize> = (0..fb.len()).filter(|j| !index_a.contains_key(fb[*j].info.path.as_str())).collect();
    for i in removed {
        let o = &fa[i].info;
        let same = added.iter().position(|&j| {
            let n = &fb[j].info;
            n.bit_offset == o.bit_offset && n.size == o.size && n.bitfield == o.bitfield && n.ty == o.ty
        });
        match same {
            Some(k) => {
                let j = added.remove(k);
                out.push(((o.bit_offset, 0, j), MemberChange::Renamed { old: o.clone(), new: fb[j].info.clone() }));
            }
            None => out.push(((o.bit_offset, 0, usize::MAX - i), MemberChange::Removed { member: o.clone() })),
        }
    }
    for j in added {
        let n = &fb[j].info;
        out.push(((n.bit_offset, 0, j), MemberChange::Added { member: n.clone() }));
    }
    out
}

// ---------------------------------------------------------------------------------
// Helpers for the drift rules.

/// The first complete definition of `struct X` / `union X` in a kernel.
pub fn find_composite(k: &Kernel, name: &str) -> Result<Option<TypeRef>, DiffError> {
    let (ns, bare) = parse_type_name(name)?;
    let Some(src) = k.types() else { return Ok(None) };
    let spaces = match ns {
        Some(ns) => vec![ns],
        None => vec![TypeNamespace::Struct, TypeNamespace::Union, TypeNamespace::Ordinary],
    };
    for ns in spaces {
        if let Some(&(ty, _)) = definitions(src, ns, bare)?.first() {
            return Ok(Some(ty));
        }
    }
    Ok(None)
}

/// Byte offsets of member `path` (`f_op`, `f_path.dentry`, `sk.__sk_common.skc_daddr`)
/// of a struct in both kernels, when it exists in both.
pub fn member_offsets(a: &Kernel, b: &Kernel, ty: &str, path: &str) -> Result<Option<(u64, u64)>, DiffError> {
    let found = |k: &Kernel| -> Result<Option<layout::MemberPath>, DiffError> {
        match (k.types(), find_composite(k, ty)?) {
            (Some(src), Some(t)) => Ok(layout::resolve_member(src, t, path)?),
            _ => Ok(None),
        }
    };
    Ok(match (found(a)?, found(b)?) {
        (Some(x), Some(y)) => Some((x.offset, y.offset)),
        _ => None,
    })
}

/// `Some((old, new))` byte offsets when member `path` of `ty` is at another offset in
/// `b` than in `a`; `None` when it did not move (or is missing from either kernel).
pub fn member_moved(a: &Kernel, b: &Kernel, ty: &str, path: &str) -> Result<Option<(u64, u64)>, DiffError> {
    Ok(member_offsets(a, b, ty, path)?.filter(|(x, y)| x != y))
}

/// `Some((old, new))` when struct/union `ty` has another size in `b`.
pub fn type_resized(a: &Kernel, b: &Kernel, ty: &str) -> Result<Option<(u64, u64)>, DiffError> {
    let size = |k: &Kernel| -> Result<Option<u64>, DiffError> {
        match (k.types(), find_composite(k, ty)?) {
            (Some(src), Some(t)) => Ok(src.size_of(t)?),
            _ => Ok(None),
        }
    };
    Ok(match (size(a)?, size(b)?) {
        (Some(x), Some(y)) if x != y => Some((x, y)),
        _ => None,
    })
}
