//! What each field of a definition reads on one kernel: the parameter its slot lands
//! on, the member each redirect reaches, the C expression of the recorded value, and
//! everything that does not fit. Computed once per definition and kernel; the A and T
//! rules report its problems, hover and drift read its steps.

use std::sync::{Arc, Mutex};

use fevlint_kernel::{FunctionFacts, Kernel};
use fevlint_syntax::machine::{AbsValue, Atom, Field, Parsed};
use fevlint_syntax::walk::{self, Recorded, Walk};
use fevlint_syntax::{Span, Target};
use fevlint_types::abi::{self, Held, ParamLoc};
use fevlint_types::layout::{self, MemberPath, Placement};
use fevlint_types::model::{FunctionInfo, ModelError, Prototype, Type, TypeRef, TypeSource};
use rustc_hash::FxHashMap;

/// A definition resolved against one kernel.
#[derive(Clone, Debug)]
pub struct Resolution {
    pub function: FunctionFacts,
    /// Each parameter's register or stack slot (shared by the definitions of functions
    /// with the same prototype: [`Memo`]).
    pub params: Arc<[ParamLoc]>,
    /// What each slot's register holds (one entry per argument register): the parameter,
    /// or the part of a by-value struct or 64-bit pair, the ABI put there.
    pub slots: Arc<[Option<Held>]>,
    /// One per field of the definition, in order.
    pub fields: Vec<FieldMeaning>,
}

impl Resolution {
    /// The prototype used (the first, when there are several), `None` without types.
    pub fn proto(&self) -> Option<&FunctionInfo> {
        self.function.prototypes.first()
    }
}

/// What one field reads.
#[derive(Clone, Debug, Default)]
pub struct FieldMeaning {
    /// Each member reached by a redirect, in order.
    pub steps: Vec<Access>,
    /// The recorded value, when it could be followed to the end.
    pub recorded: Option<Meaning>,
    pub problems: Vec<Problem>,
}

/// A redirect that reached a member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    pub span: Span,
    /// `struct file`.
    pub container: String,
    /// `f_op` (dotted path through nested members), or `[3]` for array elements.
    pub member: String,
    /// The other members starting at the same offset (union alternatives), as
    /// `` `name` (type) ``: the read matched `member` among them.
    pub others: Vec<String>,
    /// Byte offset of the member in the container.
    pub offset: u64,
    pub size: u64,
    /// C type of the member.
    pub ty: String,
    /// The C expression of the member (`file->f_op`).
    pub expr: String,
}

/// The value that ends up in the record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meaning {
    /// `file->f_op->read`, or `&file->f_op->read` when an address is recorded.
    pub expr: String,
    /// C type of the value read, when known.
    pub ty: Option<String>,
    pub size: Option<u64>,
    pub signed: Option<bool>,
    pub kind: MeaningKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeaningKind {
    Value,
    Address,
    CopyFrom,
    String,
}

/// Something wrong with a field on this kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A301: the field reads the raw register and is named after parameter `param`, but
    /// the register holds another parameter, part of one, or nothing.
    SlotNotParameter {
        span: Span,
        slot: u32,
        register: &'static str,
        param: String,
        loc: String,
        why: String,
        /// What the register holds instead (`file`, `uattr (bytes 8-15)`), if anything.
        holds: Option<String>,
    },
    /// A302: the slot's register holds no parameter (and the field is not named after one).
    SlotBeyondParameters {
        span: Span,
        slot: u32,
        register: &'static str,
        params: usize,
        /// Where each parameter is (`a: rdi:rsi, size: rdx`).
        placed: String,
        /// Where the parameter the field is named after is, if it is named after one.
        named: Option<String>,
    },
    /// T404: an offset lands in padding, inside a member, or past the end.
    OffsetNotMember { span: Span, container: String, offset: u64, what: String, nearby: Vec<String> },
    /// T405: `[n]` dereferences something that is not a pointer (a member, or the
    /// parameter itself). `others`: the other union members at that offset, none a pointer.
    DerefNonPointer { span: Span, expr: String, ty: String, array: bool, others: Vec<String> },
    /// T401: the field's size differs from the value it reads.
    SizeMismatch { span: Span, expr: String, ty: String, value_size: u64, field_size: u64, detail: String },
    /// T402: `string`/`char[N]` on something that is not `char *`/`char[]`.
    /// `others`: the other union members at that offset, none a `char *` or `char[]`.
    StringNotChar { span: Span, expr: String, ty: String, others: Vec<String> },
    /// T403: `symbol` on a value that is not a pointer.
    SymbolNotPointer { span: Span, expr: String, ty: String },
    /// T406: the field records an address, not the value there.
    AddressNotValue { span: Span, expr: String, member: Option<String> },
    /// T407: an offset past the end of the declared type is a member of a struct that
    /// embeds it at offset 0 (the code casts: `tcp_sk(sk)`).
    ViaContainer { span: Span, declared: String, container: String, member: String, others: Vec<String> },
    /// T407: an offset past the end of a family's base struct (`struct sockaddr`), which
    /// the members of the family extend (`sockaddr_in6`): `fits` names them.
    PastEndFits { span: Span, declared: String, size: u64, fits: String },
}

/// What an offset past the end of the declared type reads.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Past {
    /// A member of the struct embedding it (`tcp_sock`), read on from there.
    Read(TypeRef, MemberPath),
    /// One of a family's structs, which one the caller knows.
    Fits,
    Nothing,
}

/// `struct sockaddr_in6` (8 bytes into `sin6_addr`), `struct sockaddr_un` (…), and
/// how many more: the structs an offset past the end fits, for a message.
pub(crate) fn extensions_list(src: &dyn TypeSource, found: &[layout::Extension]) -> String {
    const SHOWN: usize = 4;
    let mut parts: Vec<String> = found
        .iter()
        .take(SHOWN)
        .map(|e| {
            let name = layout::type_name(src, e.container).unwrap_or_default();
            let top = e.top.dotted();
            let at = e.member.offset
                + match e.member.place {
                    Placement::Inside { delta } => delta,
                    _ => 0,
                };
            if at == e.top.offset {
                format!("`{name}` (`{top}`)")
            } else {
                let d = at - e.top.offset;
                format!("`{name}` ({d} byte{} into `{top}`)", if d == 1 { "" } else { "s" })
            }
        })
        .collect();
    if found.len() > SHOWN {
        parts.push(format!("and {} more", found.len() - SHOWN));
    }
    parts.join(", ")
}

/// One kind of question asked of a kernel's types, each answered once.
type Kept<K, V> = Mutex<FxHashMap<K, V>>;

/// The answer kept for `key`, else `answer()`'s, kept when it is not an error.
fn kept<K: std::hash::Hash + Eq, V: Clone, E>(
    memo: &Kept<K, V>,
    key: K,
    answer: impl FnOnce() -> Result<V, E>,
) -> Result<V, E> {
    let memo = || memo.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(found) = memo().get(&key) {
        return Ok(found.clone());
    }
    let found = answer()?;
    memo().insert(key, found.clone());
    Ok(found)
}

/// Where a prototype's parameters are ([`abi::locate`]) and what each argument register
/// holds ([`abi::slot_holds`]).
type Placed = (Arc<[ParamLoc]>, Arc<[Option<Held>]>);

/// What resolving asks of one kernel's types more than once, kept for the definitions
/// resolved against that kernel together (a [`crate::rules::Context`]'s): the structs an
/// offset past a struct's end may be read in ([`layout::past_end`]), by (type, offset,
/// bytes read), with what it asks per struct; the members at an offset; C type names;
/// where the parameters of a prototype are. Definitions read the same members of the
/// same structs, functions share prototypes (`int (struct perf_event *event)`), and a
/// walk retried through union alternatives asks the same again. A memo is made for one
/// kernel and answers only for it ([`resolve_with`] takes the kernel from it): type ids
/// of another mean other types. An error is never kept (it is asked again).
#[derive(Debug)]
pub struct Memo<'k> {
    /// The kernel every answer here is about.
    kernel: &'k Kernel,
    past_end: Kept<(TypeRef, u64, u64), Vec<layout::Extension>>,
    /// [`layout::family_names`] by struct name (each a scan of every struct name).
    families: Kept<String, Arc<[String]>>,
    /// [`layout::embedding_structs`] by struct (a walk over the embedders of each).
    embedding: Kept<TypeRef, Arc<[TypeRef]>>,
    /// [`layout::type_name`] by type (`?` when unreadable).
    names: Kept<TypeRef, String>,
    /// [`layout::member_at`] by (composite, offset).
    members: Kept<(TypeRef, u64), Arc<[MemberPath]>>,
    /// [`Placed`] by prototype: its parameters' names and types (a name is part of the
    /// answer: A301 reports a field named after a parameter) and whether it is variadic.
    placed: Kept<Prototype, Placed>,
}

impl<'k> Memo<'k> {
    /// An empty memo for the definitions resolved against `kernel`.
    pub fn new(kernel: &'k Kernel) -> Memo<'k> {
        Memo {
            kernel,
            past_end: Kept::default(),
            families: Kept::default(),
            embedding: Kept::default(),
            names: Kept::default(),
            members: Kept::default(),
            placed: Kept::default(),
        }
    }

    /// The kernel this memo is about.
    pub fn kernel(&self) -> &'k Kernel {
        self.kernel
    }

    /// [`Placed`] of `proto` on this memo's kernel, whose types are `src`.
    fn placed(&self, src: &dyn TypeSource, proto: &Prototype) -> Result<Placed, ModelError> {
        let memo = || self.placed.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = memo().get(proto) {
            return Ok(found.clone());
        }
        let params: Arc<[ParamLoc]> = abi::locate(self.kernel.arch, src, proto)?.into();
        let slots: Arc<[Option<Held>]> = abi::slot_holds(self.kernel.arch, &params).into();
        memo().insert(proto.clone(), (Arc::clone(&params), Arc::clone(&slots)));
        Ok((params, slots))
    }
    /// [`layout::past_end`].
    fn past_end(
        &self,
        src: &dyn TypeSource,
        obj: TypeRef,
        offset: u64,
        want: u64,
    ) -> Result<Vec<layout::Extension>, ModelError> {
        kept(&self.past_end, (obj, offset, want), || {
            layout::past_end_with(
                src,
                obj,
                offset,
                want,
                &|name| kept(&self.families, name.to_owned(), || Ok(layout::family_names(src, name)?.into())),
                &|obj| kept(&self.embedding, obj, || Ok(layout::embedding_structs(src, obj)?.into())),
            )
        })
    }

    /// [`layout::type_name`], `?` when the type cannot be read.
    fn type_name(&self, src: &dyn TypeSource, ty: TypeRef) -> String {
        let name = kept(&self.names, ty, || {
            Ok::<_, std::convert::Infallible>(layout::type_name(src, ty).unwrap_or_else(|_| "?".to_owned()))
        });
        match name {
            Ok(name) => name,
        }
    }

    /// [`layout::member_at`].
    fn member_at(&self, src: &dyn TypeSource, ty: TypeRef, offset: u64) -> Result<Arc<[MemberPath]>, ModelError> {
        kept(&self.members, (ty, offset), || Ok(layout::member_at(src, ty, offset)?.into()))
    }
}

/// Resolves a definition's fields. `None` when the kernel has no such function or no
/// type information (the K rules report that).
pub fn resolve(kernel: &Kernel, parsed: &Parsed, target: Target) -> Result<Option<Resolution>, ModelError> {
    resolve_with(&Memo::new(kernel), parsed, target)
}

/// [`resolve`] on `memo`'s kernel, with what was asked of its types before.
pub fn resolve_with(memo: &Memo<'_>, parsed: &Parsed, target: Target) -> Result<Option<Resolution>, ModelError> {
    let kernel = memo.kernel;
    let Some((name, _)) = &parsed.function else { return Ok(None) };
    let function = kernel.function(name)?;
    let Some(src) = kernel.types() else {
        return Ok(Some(Resolution { function, params: Arc::new([]), slots: Arc::new([]), fields: Vec::new() }));
    };
    let (params, slots) = match function.prototypes.first() {
        Some(p) => memo.placed(src, &p.proto)?,
        // What `slot_holds` says of no parameters: every register holds nothing.
        None => (Arc::from([]), abi::slot_holds(kernel.arch, &[]).into()),
    };
    let proto = function.prototypes.first();
    // Syscall wrappers take their arguments as `long`s (`__se_sys_openat(long dfd, long
    // filename, …)`): a pointer-sized integer there is an address as often as a number.
    let syscall = function.syscall.is_some();
    let mut fields = Vec::with_capacity(parsed.fields.len());
    for f in &parsed.fields {
        fields.push(match proto {
            Some(p) => resolve_field(kernel, src, memo, p, &params, &slots, syscall, f, target)?,
            None => FieldMeaning::default(),
        });
    }
    Ok(Some(Resolution { function, params, slots, fields }))
}

#[allow(clippy::too_many_arguments)]
fn resolve_field(
    kernel: &Kernel,
    src: &dyn TypeSource,
    memo: &Memo<'_>,
    proto: &FunctionInfo,
    params: &[ParamLoc],
    slots: &[Option<Held>],
    syscall: bool,
    field: &Field,
    target: Target,
) -> Result<FieldMeaning, ModelError> {
    let mut w = TypeWalker {
        src,
        memo,
        params,
        slots,
        syscall,
        target,
        field,
        ptr_size: target.ptr_size,
        out: FieldMeaning::default(),
        last_add: None,
        choice: Vec::new(),
        alternatives: Vec::new(),
    };
    let regs = abi::arg_registers(kernel.arch);
    if let Some(slot) = field.slot() {
        let register = regs.get(slot as usize).copied().unwrap_or("?");
        let held = slots.get(slot as usize).cloned().flatten();
        let pname = |p: &ParamLoc| p.name.clone().unwrap_or_else(|| format!("#{}", p.index));
        // A field that reads the raw register and is named like a parameter means that
        // parameter (with redirects, the name usually says what they reach:
        // `s64 pos+104[0]` on `file`).
        let raw =
            matches!(&field.source, fevlint_syntax::machine::Source::Param { redirects, .. } if redirects.is_empty());
        let named = params.iter().find(|p| raw && p.name.as_deref() == Some(field.name.as_str()));
        let where_is = |n: &ParamLoc| {
            format!("{} ({})", n.loc.describe(), abi::describe_slots(&abi::slots_of(kernel.arch, &n.loc)))
        };
        match (&held, named) {
            (Some(h), Some(n)) if h.param == n.index => {}
            (held, Some(n)) => w.out.problems.push(Problem::SlotNotParameter {
                span: field.name_span,
                slot,
                register,
                param: pname(n),
                loc: where_is(n),
                why: n.why.clone().unwrap_or_default(),
                holds: held.as_ref().and_then(|h| params.get(h.param).map(|p| h.describe(&pname(p)))),
            }),
            (Some(_), None) => {}
            (None, named) => w.out.problems.push(Problem::SlotBeyondParameters {
                span: field.name_span,
                slot,
                register,
                params: if proto.proto.variadic { usize::MAX } else { params.len() },
                placed: params
                    .iter()
                    .map(|p| format!("`{}` in {}", pname(p), p.loc.describe()))
                    .collect::<Vec<_>>()
                    .join(", "),
                named: named.map(|n| format!("`{}` is in {}", pname(n), where_is(n))),
            }),
        }
    }
    let blocked = w
        .out
        .problems
        .iter()
        .any(|p| matches!(p, Problem::SlotNotParameter { .. } | Problem::SlotBeyondParameters { .. }));
    if blocked {
        return Ok(w.out);
    }
    let pairs = match &field.source {
        fevlint_syntax::machine::Source::Param { redirects, .. } => fevlint_syntax::machine::fold_redirects(redirects),
        _ => Vec::new(),
    };
    let start = w.out.clone();
    let run = |w: &mut TypeWalker<'_>| -> Result<(), ModelError> {
        let recorded = walk::walk(field, target, w)?;
        w.finish(recorded, walk::ending(&pairs))
    };
    run(&mut w)?;
    // Union alternatives: when a step had several members that fit and the walk ends in a
    // problem, a later step may fit through another of them (`list.next` rather than
    // `next` at sk_buff +0). Try the other choices, last step first, a bounded number of
    // times; the first clean walk wins, else the first walk's findings stand.
    let mut choice = Vec::new();
    let mut alternatives = w.alternatives.clone();
    for _ in 0..16 {
        if w.out.problems.is_empty() {
            return Ok(w.out);
        }
        let Some(i) =
            (0..alternatives.len()).rev().find(|&i| choice.get(i).copied().unwrap_or(0) + 1 < alternatives[i])
        else {
            break;
        };
        choice.resize(i + 1, 0);
        choice[i] += 1;
        let mut t = TypeWalker {
            out: start.clone(),
            last_add: None,
            choice: choice.clone(),
            alternatives: Vec::new(),
            ..w.clone_setup()
        };
        run(&mut t)?;
        if t.out.problems.is_empty() {
            return Ok(t.out);
        }
        alternatives = t.alternatives.clone();
    }
    Ok(w.out)
}

/// A value in the type domain.
#[derive(Clone, Debug)]
enum TVal {
    /// A value of C type `ty`, written `expr`.
    Val { ty: TypeRef, expr: String },
    /// The address `delta` bytes into an object of type `obj` that `expr` points to.
    Addr { obj: TypeRef, delta: u64, expr: String },
    /// A value of non-pointer type `ty` used as an address (`nr+0`): reading there is T405.
    NotAddr { ty: TypeRef, expr: String },
    /// Not followed further (an earlier problem, or no types for it).
    Lost,
}

struct TypeWalker<'a> {
    src: &'a dyn TypeSource,
    memo: &'a Memo<'a>,
    params: &'a [ParamLoc],
    slots: &'a [Option<Held>],
    /// The function is a syscall wrapper (see [`TypeWalker::address_param`]).
    syscall: bool,
    target: Target,
    field: &'a Field,
    ptr_size: u32,
    out: FieldMeaning,
    /// The span of the last `+N` applied (where an address-only result came from).
    last_add: Option<Span>,
    /// For the k-th member lookup, which of the members that fit to take (0: the first).
    choice: Vec<usize>,
    /// For each member lookup so far, how many members there fit the read.
    alternatives: Vec<usize>,
}

impl<'a> TypeWalker<'a> {
    /// The same walker's inputs, with empty results.
    fn clone_setup(&self) -> TypeWalker<'a> {
        TypeWalker {
            src: self.src,
            memo: self.memo,
            params: self.params,
            slots: self.slots,
            syscall: self.syscall,
            target: self.target,
            field: self.field,
            ptr_size: self.ptr_size,
            out: FieldMeaning::default(),
            last_add: None,
            choice: Vec::new(),
            alternatives: Vec::new(),
        }
    }

    fn type_name(&self, ty: TypeRef) -> String {
        self.memo.type_name(self.src, ty)
    }

    /// `struct file_operations` (qualifiers and typedefs of the container dropped).
    fn container_name(&self, ty: TypeRef) -> String {
        match layout::strip_shared(self.src, ty) {
            Ok((t, _)) => self.type_name(t),
            Err(_) => self.type_name(ty),
        }
    }

    /// Whether member type `ty` of `container` suits a read that needs `fit`.
    fn fits(&self, container: TypeRef, ty: TypeRef, fit: Fit) -> Result<bool, ModelError> {
        Ok(match fit {
            Fit::Any => true,
            Fit::Pointer => self.address_like(container, ty)?,
            Fit::CharPointer => match self.is_pointer(ty)? {
                Some(t) => self.is_char(t)? || matches!(*layout::strip_shared(self.src, t)?.1, Type::Void),
                None => self.address_like(container, ty)?,
            },
            Fit::Chars => match *layout::strip_shared(self.src, ty)?.1 {
                Type::Array { element, .. } => self.is_char(element)?,
                _ => self.is_char(ty)?,
            },
            Fit::Signed(signed) => self.signed(ty)?.is_none_or(|s| s == signed),
        })
    }

    /// The member at `delta` of `obj`, or a problem. `want` is the size the read takes;
    /// among union members starting there, the first that `fit`s is taken (and the others
    /// are named in the step).
    fn member(
        &mut self,
        obj: TypeRef,
        delta: u64,
        expr: &str,
        span: Span,
        want: u64,
        fit: Fit,
    ) -> Result<Option<(MemberPath, String)>, ModelError> {
        let (_, t) = layout::strip_shared(self.src, obj)?;
        let container = self.container_name(obj);
        let mut others = Vec::new();
        let path = match &*t {
            Type::Struct(_) | Type::Union(_) => {
                let paths = self.memo.member_at(self.src, obj, delta)?;
                let Some(first) = paths.first() else {
                    let past = self.through_container(obj, delta, want, span)?;
                    if let Past::Read(container, path) = past {
                        let cexpr = format!("(({} *){expr})", self.type_name(container));
                        let member_expr = path.through(&cexpr);
                        self.out.steps.push(Access {
                            span,
                            container: self.container_name(container),
                            member: path.dotted(),
                            others: Vec::new(),
                            offset: path.offset,
                            size: path.size,
                            ty: self.type_name(path.ty),
                            expr: member_expr.clone(),
                        });
                        return Ok(Some((path, member_expr)));
                    }
                    if past == Past::Fits {
                        return Ok(None);
                    }
                    let size = self.src.size_of(obj)?.unwrap_or(0);
                    let nearby = self.nearby(obj, delta)?;
                    self.out.problems.push(Problem::OffsetNotMember {
                        span,
                        container: container.clone(),
                        offset: delta,
                        what: format!("past the end of `{container}` ({size} bytes)"),
                        nearby,
                    });
                    return Ok(None);
                };
                // Among union alternatives, prefer one that starts here, suits the read and
                // has the size read; then one that suits it; then the size alone.
                let starts: Vec<&MemberPath> = paths.iter().filter(|p| p.place == Placement::Start).collect();
                let mut suits = Vec::with_capacity(starts.len());
                for p in &starts {
                    suits.push(self.fits(obj, p.ty, fit)?);
                }
                let by = |sized: bool, suited: bool| {
                    starts
                        .iter()
                        .zip(&suits)
                        .find(|(p, s)| (!sized || p.size == want) && (!suited || **s))
                        .map(|(p, _)| (*p).clone())
                };
                // A `char *` is wanted, else any pointer (T402 then says it is not `char *`).
                let mut weaker = Vec::with_capacity(starts.len());
                for p in &starts {
                    weaker.push(fit == Fit::CharPointer && self.fits(obj, p.ty, Fit::Pointer)?);
                }
                let by_weaker = |sized: bool| {
                    starts
                        .iter()
                        .zip(&weaker)
                        .find(|(p, s)| (!sized || p.size == want) && **s)
                        .map(|(p, _)| (*p).clone())
                };
                // The members that fit, best first; `choice` may ask for another of them.
                let fitting: Vec<&MemberPath> = starts
                    .iter()
                    .zip(&suits)
                    .filter(|(p, s)| **s && p.size == want)
                    .chain(starts.iter().zip(&suits).filter(|(p, s)| **s && p.size != want))
                    .map(|(p, _)| *p)
                    .collect();
                let k = self.alternatives.len();
                self.alternatives.push(fitting.len());
                let chosen = self.choice.get(k).and_then(|&c| fitting.get(c)).map(|p| (*p).clone());
                let pick = chosen
                    .or_else(|| by(true, true))
                    .or_else(|| by(false, true))
                    .or_else(|| by_weaker(true))
                    .or_else(|| by_weaker(false))
                    .or_else(|| by(true, false))
                    .or_else(|| by(false, false))
                    .unwrap_or_else(|| first.clone());
                others = starts
                    .iter()
                    .filter(|p| p.names != pick.names)
                    .map(|p| format!("`{}` ({})", p.dotted(), self.type_name(p.ty)))
                    .collect();
                match pick.place {
                    Placement::Start => pick,
                    Placement::Inside { delta: into } => {
                        let nearby = self.nearby(obj, delta)?;
                        self.out.problems.push(Problem::OffsetNotMember {
                            span,
                            container: container.clone(),
                            offset: delta,
                            what: format!(
                                "{into} bytes into `{}` ({}, offset {}, size {})",
                                pick.dotted(),
                                self.type_name(pick.ty),
                                pick.offset,
                                pick.size
                            ),
                            nearby,
                        });
                        return Ok(None);
                    }
                    Placement::Padding => {
                        let nearby = self.nearby(obj, delta)?;
                        self.out.problems.push(Problem::OffsetNotMember {
                            span,
                            container: container.clone(),
                            offset: delta,
                            what: format!("in padding ({} bytes at offset {})", pick.size, pick.offset),
                            nearby,
                        });
                        return Ok(None);
                    }
                }
            }
            Type::Void | Type::Forward { .. } | Type::Function(_) => return Ok(None),
            _ => {
                // A pointer to a scalar or an array: element `delta / size`.
                let (elem, esize) = match &*t {
                    Type::Array { element, .. } => (*element, self.src.size_of(*element)?.unwrap_or(0)),
                    _ => (obj, self.src.size_of(obj)?.unwrap_or(0)),
                };
                if esize == 0 {
                    return Ok(None);
                }
                if !delta.is_multiple_of(esize) {
                    self.out.problems.push(Problem::OffsetNotMember {
                        span,
                        container: container.clone(),
                        offset: delta,
                        what: format!(
                            "{} bytes into element {} of `{}` ({esize} bytes each)",
                            delta % esize,
                            delta / esize,
                            container
                        ),
                        nearby: Vec::new(),
                    });
                    return Ok(None);
                }
                let i = delta / esize;
                MemberPath {
                    names: if i == 0 && !matches!(*t, Type::Array { .. }) {
                        Vec::new()
                    } else {
                        vec![format!("[{i}]")]
                    },
                    ty: elem,
                    offset: delta,
                    size: esize,
                    bit_offset: delta * 8,
                    bitfield_size: 0,
                    place: Placement::Start,
                }
            }
        };
        let member_expr = path.through(expr);
        self.out.steps.push(Access {
            span,
            container,
            member: path.dotted(),
            others,
            offset: path.offset,
            size: path.size,
            ty: self.type_name(path.ty),
            expr: member_expr.clone(),
        });
        Ok(Some((path, member_expr)))
    }

    /// An offset past the end of `obj`: the member it is in a struct that embeds `obj`
    /// at offset 0, searched breadth-first through nested embeddings; or, when `obj` is
    /// the base of a family (`struct sockaddr`), the family's structs it fits, and no
    /// single reading (`Past::Fits`).
    fn through_container(&mut self, obj: TypeRef, delta: u64, want: u64, span: Span) -> Result<Past, ModelError> {
        let found = self.memo.past_end(self.src, obj, delta, want)?;
        if found.iter().any(|e| e.how == layout::Extends::Family) {
            self.out.problems.push(Problem::PastEndFits {
                span,
                declared: self.type_name(obj),
                size: self.src.size_of(obj)?.unwrap_or(0),
                fits: extensions_list(self.src, &found),
            });
            return Ok(Past::Fits);
        }
        let Some(first) = found.first() else { return Ok(Past::Nothing) };
        let (container, path) = (first.container, first.member.clone());
        let others = found[1..]
            .iter()
            .take(4)
            .map(|e| format!("`{}` in `{}`", e.member.dotted(), self.type_name(e.container)))
            .collect();
        self.out.problems.push(Problem::ViaContainer {
            span,
            declared: self.type_name(obj),
            container: self.type_name(container),
            member: path.dotted(),
            others,
        });
        Ok(Past::Read(container, path))
    }

    /// A read of `size` bytes starting at element `path` of a byte array (`char sa_data[]`,
    /// `u8 cb[48]`) that stays inside the array: raw bytes, not an over-read.
    fn inside_byte_array(&self, obj: TypeRef, path: &MemberPath, size: u64) -> Result<bool, ModelError> {
        let Some((last, parent)) = path.names.split_last() else { return Ok(false) };
        // Element paths read `name[i]` (or `[i]` for a nested array).
        let Some((array_name, _)) = last.rsplit_once('[') else { return Ok(false) };
        if path.size != 1 {
            return Ok(false);
        }
        let mut names = parent.to_vec();
        if !array_name.is_empty() {
            names.push(array_name.to_owned());
        }
        let joined = names.join(".");
        let Some(array) = layout::resolve_member(self.src, obj, &joined)? else { return Ok(false) };
        Ok(matches!(*layout::strip_shared(self.src, array.ty)?.1, Type::Array { .. })
            && path.offset + size <= array.offset + array.size)
    }

    /// A read of `size` bytes that covers exactly a named member enclosing `path` and
    /// starting where it does (`x32` on an `atomic_t`, `x64` on a 2×u32 struct): the
    /// read takes that member whole, raw bytes, not a mismatched scalar.
    fn whole_enclosing(&self, obj: TypeRef, path: &MemberPath, size: u64) -> Result<bool, ModelError> {
        if path.size == size {
            return Ok(false);
        }
        for n in (1..path.names.len()).rev() {
            let joined = path.names[..n].join(".");
            if let Some(m) = layout::resolve_member(self.src, obj, &joined)? {
                if m.offset == path.offset && m.size == size {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Up to two members around an offset, for help text.
    fn nearby(&self, obj: TypeRef, delta: u64) -> Result<Vec<String>, ModelError> {
        let mut out = Vec::new();
        let (_, t) = layout::strip_shared(self.src, obj)?;
        if let Type::Struct(c) | Type::Union(c) = &*t {
            let before = c.members.iter().rfind(|m| m.bit_offset / 8 <= delta);
            let after = c.members.iter().find(|m| m.bit_offset / 8 > delta);
            for m in [before, after].into_iter().flatten() {
                let size = self.src.size_of(m.ty)?.unwrap_or(0);
                out.push(format!(
                    "`{}` at offset {} ({}, {size} bytes)",
                    m.name.as_deref().unwrap_or("<anonymous>"),
                    m.bit_offset / 8,
                    self.type_name(m.ty)
                ));
            }
        }
        Ok(out)
    }

    fn is_pointer(&self, ty: TypeRef) -> Result<Option<TypeRef>, ModelError> {
        Ok(match *layout::strip_shared(self.src, ty)?.1 {
            Type::Pointer { target } => Some(target),
            _ => None,
        })
    }

    /// A pointer, or a register saved in `struct pt_regs` (an `unsigned long` that holds
    /// whatever the register held: `regs->si` is the second syscall argument, often a
    /// user pointer). Other `unsigned long`s (`i_ino`) are numbers.
    fn address_like(&self, container: TypeRef, ty: TypeRef) -> Result<bool, ModelError> {
        if self.is_pointer(ty)?.is_some() {
            return Ok(true);
        }
        let register = matches!(*layout::strip_shared(self.src, container)?.1, Type::Struct(ref s) if s.name.as_deref() == Some("pt_regs"));
        Ok(register
            && matches!(*self.src.get_shared(ty)?, Type::Int { signed: false, size, .. } if size == self.ptr_size))
    }

    /// `regs->si`-style expressions: values read from a saved register.
    fn is_register(&self, expr: &str) -> bool {
        self.out.steps.last().is_some_and(|s| s.container.ends_with("struct pt_regs") && s.expr == expr)
    }

    fn is_char(&self, ty: TypeRef) -> Result<bool, ModelError> {
        Ok(matches!(
            *layout::strip_shared(self.src, ty)?.1,
            Type::Int { is_char: true, .. } | Type::Int { size: 1, .. }
        ))
    }

    fn signed(&self, ty: TypeRef) -> Result<Option<bool>, ModelError> {
        Ok(match *layout::strip_shared(self.src, ty)?.1 {
            Type::Int { signed, .. } | Type::Enum { signed, .. } => Some(signed),
            Type::Pointer { .. } => Some(false),
            _ => None,
        })
    }

    /// Checks the value's size against the field's (T401).
    fn check_size(&mut self, ty: TypeRef, expr: &str, span: Span) -> Result<(), ModelError> {
        let atom = self.field.atom;
        if matches!(atom, Atom::String) || self.field.array.is_some() {
            return Ok(());
        }
        let field_size = u64::from(atom.size(self.ptr_size));
        let Some(value_size) = self.src.size_of(ty)? else { return Ok(()) };
        let (_, t) = layout::strip_shared(self.src, ty)?;
        if matches!(*t, Type::Struct(_) | Type::Union(_) | Type::Array { .. }) {
            self.out.problems.push(Problem::SizeMismatch {
                span,
                expr: expr.to_owned(),
                ty: self.type_name(ty),
                value_size,
                field_size,
                detail: format!("`{expr}` is a {value_size}-byte aggregate, not a scalar"),
            });
            return Ok(());
        }
        let detail = if value_size > field_size {
            format!("reads only the low {field_size} of its {value_size} bytes (truncation)")
        } else if value_size < field_size {
            let n = field_size - value_size;
            format!("reads {n} byte{} past it (over-read)", if n == 1 { "" } else { "s" })
        } else {
            let field_signed = atom.signed() && !self.field.unsigned;
            match self.signed(ty)? {
                Some(s)
                    if s != field_signed
                        && !matches!(atom, Atom::X8 | Atom::X16 | Atom::X32 | Atom::X64 | Atom::Symbol) =>
                {
                    format!(
                        "is {} but `{}` prints it as {}",
                        if s { "signed" } else { "unsigned" },
                        self.field.type_string(),
                        if field_signed { "signed" } else { "unsigned" }
                    )
                }
                _ => return Ok(()),
            }
        };
        self.out.problems.push(Problem::SizeMismatch {
            span,
            expr: expr.to_owned(),
            ty: self.type_name(ty),
            value_size,
            field_size,
            detail,
        });
        Ok(())
    }

    fn finish(&mut self, recorded: Recorded<TVal>, ending: walk::Ending) -> Result<(), ModelError> {
        let f = self.field;
        let type_span = f.type_span;
        let meaning = match recorded {
            Recorded::Value(TVal::Val { ty, expr }) => {
                if f.atom == Atom::Symbol && self.is_pointer(ty)?.is_none() {
                    // A plain `unsigned long` is how the kernel spells an address
                    // (`unsigned long ip`); a typedef of it (`size_t`) is a number.
                    let t = self.src.get(ty)?;
                    if !matches!(t, Type::Int { signed: false, size, .. } if size == self.ptr_size) {
                        self.out.problems.push(Problem::SymbolNotPointer {
                            span: type_span,
                            expr: expr.clone(),
                            ty: self.type_name(ty),
                        });
                    }
                }
                if ending == walk::Ending::Raw {
                    self.check_size(ty, &expr, type_span)?;
                }
                Meaning {
                    ty: Some(self.type_name(ty)),
                    size: self.src.size_of(ty)?,
                    signed: self.signed(ty)?,
                    expr,
                    kind: MeaningKind::Value,
                }
            }
            Recorded::Value(TVal::Addr { obj, delta, expr }) => {
                let member = self
                    .memo
                    .member_at(self.src, obj, delta)?
                    .iter()
                    .find(|p| p.place == Placement::Start)
                    .map(|p| p.through(&expr));
                let shown = member.clone().unwrap_or_else(|| format!("(void *){expr} + {delta}"));
                let span = self.out.steps.last().map_or(type_span, |s| s.span);
                self.out.problems.push(Problem::AddressNotValue { span, expr: shown.clone(), member: member.clone() });
                Meaning { expr: format!("&{shown}"), ty: None, size: None, signed: None, kind: MeaningKind::Address }
            }
            Recorded::StringFrom(v) | Recorded::CopyFrom { addr: v, .. } => {
                let string = f.atom == Atom::String;
                let chars = string || f.atom == Atom::Char;
                let (expr, ty, ok) = match &v {
                    TVal::Val { ty, expr } => {
                        let ok = match self.is_pointer(*ty)? {
                            Some(t) => {
                                !chars
                                    || self.is_char(t)?
                                    || matches!(*layout::strip_shared(self.src, t)?.1, Type::Void)
                            }
                            // An address kept in an `unsigned long`: what it points to is unknown.
                            None if self.is_register(expr) || self.address_param(*ty)? => true,
                            // An array copied from a number's value (`x8[4] nr`): T405.
                            None if !chars
                                && matches!(
                                    *layout::strip_shared(self.src, *ty)?.1,
                                    Type::Int { .. } | Type::Enum { .. }
                                ) =>
                            {
                                self.deref_non_pointer(type_span, expr.clone(), *ty)?;
                                return Ok(());
                            }
                            None => false,
                        };
                        (expr.clone(), Some(*ty), ok)
                    }
                    TVal::Addr { obj, delta, expr } => {
                        let span = self.last_add.unwrap_or(type_span);
                        let fit = if chars { Fit::Chars } else { Fit::Any };
                        match self.member(*obj, *delta, expr, span, 1, fit)?.map(|(p, _)| p) {
                            Some(p) => {
                                let (_, mt) = layout::strip_shared(self.src, p.ty)?;
                                // `member_at` names the innermost element (`comm[0]`): a copy
                                // from there copies the array.
                                let ok = match *mt {
                                    Type::Array { element, .. } => !chars || self.is_char(element)?,
                                    _ if chars => self.is_char(p.ty)?,
                                    _ => true,
                                };
                                let e = p.through(expr);
                                let e = e.strip_suffix("[0]").map(str::to_owned).unwrap_or(e);
                                (e, Some(p.ty), ok)
                            }
                            // `member` said why (T404, T407), or the layout is unknown.
                            None => return Ok(()),
                        }
                    }
                    TVal::NotAddr { ty, expr } => {
                        let span = self.last_add.unwrap_or(type_span);
                        self.deref_non_pointer(span, expr.clone(), *ty)?;
                        return Ok(());
                    }
                    TVal::Lost => return Ok(()),
                };
                if chars && !ok {
                    let tn = ty.map(|t| self.type_name(t)).unwrap_or_else(|| "?".to_owned());
                    let others =
                        self.out.steps.last().filter(|s| s.expr == expr).map(|s| s.others.clone()).unwrap_or_default();
                    self.out.problems.push(Problem::StringNotChar {
                        span: type_span,
                        expr: expr.clone(),
                        ty: tn,
                        others,
                    });
                }
                Meaning {
                    expr,
                    ty: ty.map(|t| self.type_name(t)),
                    size: None,
                    signed: None,
                    kind: if string { MeaningKind::String } else { MeaningKind::CopyFrom },
                }
            }
            // `nr+8` on a number records `nr + 8`: arithmetic, no read.
            Recorded::Value(TVal::Lost | TVal::NotAddr { .. }) => return Ok(()),
        };
        self.out.recorded = Some(meaning);
        Ok(())
    }
}

impl TypeWalker<'_> {
    /// T405 on a value that is not a pointer but is read through.
    fn deref_non_pointer(&mut self, span: Span, expr: String, ty: TypeRef) -> Result<(), ModelError> {
        let array = matches!(*layout::strip_shared(self.src, ty)?.1, Type::Array { .. });
        let others = self.out.steps.last().filter(|s| s.expr == expr).map(|s| s.others.clone()).unwrap_or_default();
        self.out.problems.push(Problem::DerefNonPointer { span, expr, ty: self.type_name(ty), array, others });
        Ok(())
    }

    /// A parameter that may hold an address although its type is not a pointer: the
    /// `long`s of syscall wrappers (`__se_sys_openat(long dfd, long filename, …)`).
    fn address_param(&self, ty: TypeRef) -> Result<bool, ModelError> {
        Ok(self.syscall
            && matches!(*layout::strip_shared(self.src, ty)?.1, Type::Int { size, .. } if size == self.ptr_size))
    }

    /// The bytes `h` of a by-value struct in a register: the member starting there that
    /// the field's read suits, or `Lost` when the field reads the register's bytes whole.
    fn param_part(&self, p: &ParamLoc, h: &Held, name: &str) -> Result<TVal, ModelError> {
        let want = if self.field.array.is_some() || self.field.atom == Atom::String {
            u64::from(self.ptr_size)
        } else {
            u64::from(self.field.elem_size(self.target))
        };
        let fit = if self.field.array.is_some() || self.field.atom == Atom::String || self.derefs() {
            Fit::Pointer
        } else if matches!(self.field.atom, Atom::X8 | Atom::X16 | Atom::X32 | Atom::X64 | Atom::Symbol) {
            Fit::Any
        } else {
            Fit::Signed(self.field.atom.signed() && !self.field.unsigned)
        };
        let paths = self.memo.member_at(self.src, p.ty, h.start)?;
        let starts: Vec<&MemberPath> = paths.iter().filter(|m| m.place == Placement::Start).collect();
        let mut pick = None;
        for m in &starts {
            if m.size == want && self.fits(p.ty, m.ty, fit)? {
                pick = Some(*m);
                break;
            }
        }
        let pick = pick.or_else(|| starts.iter().find(|m| m.size == want).copied());
        let pick = match pick {
            Some(m) => m,
            // The field reads the register as a whole (several members, or none in BTF).
            None if want == h.end - h.start || starts.is_empty() => return Ok(TVal::Lost),
            None => starts[0],
        };
        let dotted = pick.dotted();
        let expr = if dotted.starts_with('[') { format!("{name}{dotted}") } else { format!("{name}.{dotted}") };
        Ok(TVal::Val { ty: pick.ty, expr })
    }

    /// The field's redirects dereference the slot's value (`[n]` somewhere).
    fn derefs(&self) -> bool {
        matches!(&self.field.source, fevlint_syntax::machine::Source::Param { redirects, .. }
            if fevlint_syntax::machine::fold_redirects(redirects).iter().any(|p| p.index.is_some()))
    }
}

impl Walk for TypeWalker<'_> {
    type Value = TVal;
    type Error = ModelError;

    fn param(&mut self, slot: u32) -> Result<TVal, ModelError> {
        let Some(Some(h)) = self.slots.get(slot as usize) else { return Ok(TVal::Lost) };
        let Some(p) = self.params.get(h.param) else { return Ok(TVal::Lost) };
        let name = p.name.clone().unwrap_or_else(|| format!("arg{}", h.param));
        Ok(match *layout::strip_shared(self.src, p.ty)?.1 {
            Type::Struct(_) | Type::Union(_) => self.param_part(p, h, &name)?,
            // The high half of a 64-bit value in a register pair: no C type for it.
            _ if h.part > 0 => TVal::Lost,
            _ => TVal::Val { ty: p.ty, expr: name },
        })
    }

    fn absolute(&mut self, _value: &AbsValue, _size: u32) -> Result<TVal, ModelError> {
        Ok(TVal::Lost)
    }

    fn add(&mut self, v: TVal, bytes: u64, span: Span) -> Result<TVal, ModelError> {
        self.last_add = Some(span);
        Ok(match v {
            TVal::Val { ty, expr } => match self.is_pointer(ty)? {
                Some(target) if !matches!(*layout::strip_shared(self.src, target)?.1, Type::Void) => {
                    TVal::Addr { obj: target, delta: bytes, expr }
                }
                Some(_) => TVal::Lost,
                // A number used as an address, unless it is one in disguise: a saved
                // register (`regs->si`) or a syscall wrapper's `long`.
                None if self.is_register(&expr) || self.address_param(ty)? => TVal::Lost,
                None if matches!(*layout::strip_shared(self.src, ty)?.1, Type::Int { .. } | Type::Enum { .. }) => {
                    TVal::NotAddr { ty, expr }
                }
                None => TVal::Lost,
            },
            TVal::Addr { obj, delta, expr } => TVal::Addr { obj, delta: delta.wrapping_add(bytes), expr },
            TVal::NotAddr { ty, expr } => TVal::NotAddr { ty, expr },
            TVal::Lost => TVal::Lost,
        })
    }

    fn load_pointer(&mut self, addr: TVal, span: Span) -> Result<TVal, ModelError> {
        let (obj, delta, expr) = match addr {
            TVal::Addr { obj, delta, expr } => (obj, delta, expr),
            TVal::NotAddr { ty, expr } => {
                self.deref_non_pointer(span, expr, ty)?;
                return Ok(TVal::Lost);
            }
            _ => return Ok(TVal::Lost),
        };
        let Some((path, mexpr)) = self.member(obj, delta, &expr, span, u64::from(self.ptr_size), Fit::Pointer)? else {
            return Ok(TVal::Lost);
        };
        if !self.address_like(obj, path.ty)? {
            self.deref_non_pointer(span, mexpr, path.ty)?;
            return Ok(TVal::Lost);
        }
        Ok(TVal::Val { ty: path.ty, expr: mexpr })
    }

    fn load_value(&mut self, addr: TVal, size: u32, span: Span) -> Result<TVal, ModelError> {
        let (obj, delta, expr) = match addr {
            TVal::Addr { obj, delta, expr } => (obj, delta, expr),
            TVal::NotAddr { ty, expr } => {
                self.deref_non_pointer(span, expr, ty)?;
                return Ok(TVal::Lost);
            }
            _ => return Ok(TVal::Lost),
        };
        let pointer_read = self.field.array.is_some() || self.field.atom == Atom::String;
        let chars = matches!(self.field.atom, Atom::String | Atom::Char);
        let fit = match (pointer_read, chars) {
            (true, true) => Fit::CharPointer,
            (true, false) => Fit::Pointer,
            (false, _) if self.field.atom == Atom::Symbol => Fit::Pointer,
            // Hex types print any signedness; decimal ones match a member of theirs.
            (false, _) if matches!(self.field.atom, Atom::X8 | Atom::X16 | Atom::X32 | Atom::X64) => Fit::Any,
            (false, _) => Fit::Signed(self.field.atom.signed() && !self.field.unsigned),
        };
        let Some((path, mexpr)) = self.member(obj, delta, &expr, span, u64::from(size), fit)? else {
            return Ok(TVal::Lost);
        };
        if pointer_read && !self.address_like(obj, path.ty)? {
            // Arrays and strings read a pointer here and copy from where it points.
            self.deref_non_pointer(span, mexpr, path.ty)?;
            return Ok(TVal::Lost);
        }
        if !pointer_read
            && !self.inside_byte_array(obj, &path, u64::from(size))?
            && !self.whole_enclosing(obj, &path, u64::from(size))?
        {
            self.check_size(path.ty, &mexpr, span)?;
        }
        Ok(TVal::Val { ty: path.ty, expr: mexpr })
    }
}

/// What a read needs of the member it lands on (to choose among union alternatives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fit {
    Any,
    /// A pointer (or a saved register): it is followed.
    Pointer,
    /// A `char *` (or `void *`): a string or `char[N]` is copied from where it points.
    CharPointer,
    /// `char` or a `char` array: a string or `char[N]` copied from right here.
    Chars,
    /// A scalar of that signedness (a decimal field prints it so).
    Signed(bool),
}
