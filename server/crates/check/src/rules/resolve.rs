//! What each field of a definition reads on one kernel: the parameter its slot lands
//! on, the member each redirect reaches, the C expression of the recorded value, and
//! everything that does not fit. Computed once per definition and kernel; the A and T
//! rules report its problems, hover and drift read its steps.

use crate::kernel::abi::{self, ParamLoc};
use crate::kernel::layout::{self, MemberPath, Placement};
use crate::kernel::model::{FunctionInfo, ModelError, Type, TypeRef, TypeSource};
use crate::kernel::{FunctionFacts, Kernel};
use crate::syntax::machine::{AbsValue, Atom, Field, Parsed};
use crate::syntax::walk::{self, Recorded, Walk};
use crate::syntax::{Span, Target};

/// A definition resolved against one kernel.
#[derive(Clone, Debug)]
pub struct Resolution {
    pub function: FunctionFacts,
    /// The prototype used (the first, when there are several).
    pub proto: Option<FunctionInfo>,
    /// Each parameter's register or stack slot.
    pub params: Vec<ParamLoc>,
    /// One per field of the definition, in order.
    pub fields: Vec<FieldMeaning>,
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
    /// A301: the slot's register does not carry that parameter.
    SlotNotParameter { span: Span, slot: u32, register: &'static str, param: String, loc: String, why: String },
    /// A302: the slot is past the last parameter.
    SlotBeyondParameters { span: Span, slot: u32, register: &'static str, params: usize },
    /// T404: an offset lands in padding, inside a member, or past the end.
    OffsetNotMember { span: Span, container: String, offset: u64, what: String, nearby: Vec<String> },
    /// T405: `[n]` dereferences something that is not a pointer.
    DerefNonPointer { span: Span, expr: String, ty: String, array: bool },
    /// T401: the field's size differs from the value it reads.
    SizeMismatch { span: Span, expr: String, ty: String, value_size: u64, field_size: u64, detail: String },
    /// T402: `string`/`char[N]` on something that is not `char *`/`char[]`.
    StringNotChar { span: Span, expr: String, ty: String },
    /// T403: `symbol` on a value that is not a pointer.
    SymbolNotPointer { span: Span, expr: String, ty: String },
    /// T406: the field records an address, not the value there.
    AddressNotValue { span: Span, expr: String, member: Option<String> },
    /// T407: an offset past the end of the declared type is a member of a struct that
    /// embeds it at offset 0 (the code casts: `tcp_sk(sk)`).
    ViaContainer { span: Span, declared: String, container: String, member: String, others: Vec<String> },
}

/// Resolves a definition's fields. `None` when the kernel has no such function or no
/// type information (the K rules report that).
pub fn resolve(kernel: &Kernel, parsed: &Parsed, target: Target) -> Result<Option<Resolution>, ModelError> {
    let Some((name, _)) = &parsed.function else { return Ok(None) };
    let function = kernel.function(name)?;
    let Some(src) = kernel.types() else {
        return Ok(Some(Resolution { function, proto: None, params: Vec::new(), fields: Vec::new() }));
    };
    let proto = function.prototypes.first().cloned();
    let params = match &proto {
        Some(p) => abi::locate(kernel.arch, src, &p.proto)?,
        None => Vec::new(),
    };
    let mut fields = Vec::with_capacity(parsed.fields.len());
    for f in &parsed.fields {
        fields.push(match &proto {
            Some(p) => resolve_field(kernel, src, p, &params, f, target)?,
            None => FieldMeaning::default(),
        });
    }
    Ok(Some(Resolution { function, proto, params, fields }))
}

fn resolve_field(
    kernel: &Kernel,
    src: &dyn TypeSource,
    proto: &FunctionInfo,
    params: &[ParamLoc],
    field: &Field,
    target: Target,
) -> Result<FieldMeaning, ModelError> {
    let mut w =
        TypeWalker { src, params, field, ptr_size: target.ptr_size, out: FieldMeaning::default(), last_add: None };
    let regs = abi::arg_registers(kernel.arch);
    if let Some(slot) = field.slot() {
        let register = regs.get(slot as usize).copied().unwrap_or("?");
        match params.get(slot as usize) {
            None => w.out.problems.push(Problem::SlotBeyondParameters {
                span: field.name_span,
                slot,
                register,
                params: if proto.proto.variadic { usize::MAX } else { params.len() },
            }),
            // A value split over registers starting at the slot's register is read in part
            // (its low eightbyte): only a different register is a wrong parameter.
            Some(p) if p.loc.first_register() != Some(register) => w.out.problems.push(Problem::SlotNotParameter {
                span: field.name_span,
                slot,
                register,
                param: p.name.clone().unwrap_or_else(|| format!("#{}", p.index)),
                loc: p.loc.describe(),
                why: p.why.clone().unwrap_or_default(),
            }),
            Some(_) => {}
        }
    }
    let blocked = w.out.problems.iter().any(|p| matches!(p, Problem::SlotNotParameter { .. }));
    if blocked {
        return Ok(w.out);
    }
    let recorded = walk::walk(field, target, &mut w)?;
    let pairs = match &field.source {
        crate::syntax::machine::Source::Param { redirects, .. } => crate::syntax::machine::fold_redirects(redirects),
        _ => Vec::new(),
    };
    w.finish(recorded, walk::ending(&pairs))?;
    Ok(w.out)
}

/// A value in the type domain.
#[derive(Clone, Debug)]
enum TVal {
    /// A value of C type `ty`, written `expr`.
    Val { ty: TypeRef, expr: String },
    /// The address `delta` bytes into an object of type `obj` that `expr` points to.
    Addr { obj: TypeRef, delta: u64, expr: String },
    /// Not followed further (an earlier problem, or no types for it).
    Lost,
}

struct TypeWalker<'a> {
    src: &'a dyn TypeSource,
    params: &'a [ParamLoc],
    field: &'a Field,
    ptr_size: u32,
    out: FieldMeaning,
    /// The span of the last `+N` applied (where an address-only result came from).
    last_add: Option<Span>,
}

impl TypeWalker<'_> {
    fn type_name(&self, ty: TypeRef) -> String {
        layout::type_name(self.src, ty).unwrap_or_else(|_| "?".to_owned())
    }

    /// `struct file_operations` (qualifiers and typedefs of the container dropped).
    fn container_name(&self, ty: TypeRef) -> String {
        match layout::strip(self.src, ty) {
            Ok((t, _)) => self.type_name(t),
            Err(_) => self.type_name(ty),
        }
    }

    /// `expr->member` for a pointer base, `expr[i]` for elements.
    fn member_expr(base: &str, path: &MemberPath) -> String {
        let dotted = path.dotted();
        if dotted.is_empty() {
            format!("*{base}")
        } else if dotted.starts_with('[') {
            format!("{base}{dotted}")
        } else {
            format!("{base}->{dotted}")
        }
    }

    /// The member at `delta` of `obj`, or a problem. `want` is the size the read takes.
    fn member(
        &mut self,
        obj: TypeRef,
        delta: u64,
        expr: &str,
        span: Span,
        want: u64,
    ) -> Result<Option<(MemberPath, String)>, ModelError> {
        let (_, t) = layout::strip(self.src, obj)?;
        let container = self.container_name(obj);
        let path = match &t {
            Type::Struct(_) | Type::Union(_) => {
                let paths = layout::member_at(self.src, obj, delta)?;
                let nearby = self.nearby(obj, delta)?;
                let Some(first) = paths.first() else {
                    if let Some((container, path)) = self.through_container(obj, delta, want, span)? {
                        let cexpr = format!("(({} *){expr})", self.type_name(container));
                        let member_expr = Self::member_expr(&cexpr, &path);
                        self.out.steps.push(Access {
                            span,
                            container: self.container_name(container),
                            member: path.dotted(),
                            offset: path.offset,
                            size: path.size,
                            ty: self.type_name(path.ty),
                            expr: member_expr.clone(),
                        });
                        return Ok(Some((path, member_expr)));
                    }
                    let size = self.src.size_of(obj)?.unwrap_or(0);
                    self.out.problems.push(Problem::OffsetNotMember {
                        span,
                        container: container.clone(),
                        offset: delta,
                        what: format!("past the end of `{container}` ({size} bytes)"),
                        nearby,
                    });
                    return Ok(None);
                };
                // Prefer, among union alternatives, the one that starts here with the size read.
                let pick = paths
                    .iter()
                    .find(|p| p.place == Placement::Start && p.size == want)
                    .or_else(|| paths.iter().find(|p| p.place == Placement::Start))
                    .unwrap_or(first)
                    .clone();
                match pick.place {
                    Placement::Start => pick,
                    Placement::Inside { delta: into } => {
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
                let (elem, esize) = match &t {
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
                    names: if i == 0 && !matches!(t, Type::Array { .. }) { Vec::new() } else { vec![format!("[{i}]")] },
                    ty: elem,
                    offset: delta,
                    size: esize,
                    bit_offset: delta * 8,
                    bitfield_size: 0,
                    place: Placement::Start,
                }
            }
        };
        let member_expr = Self::member_expr(expr, &path);
        self.out.steps.push(Access {
            span,
            container,
            member: path.dotted(),
            offset: path.offset,
            size: path.size,
            ty: self.type_name(path.ty),
            expr: member_expr.clone(),
        });
        Ok(Some((path, member_expr)))
    }

    /// An offset past the end of `obj`: the member it is in a struct that embeds `obj`
    /// at offset 0, searched breadth-first through nested embeddings.
    fn through_container(
        &mut self,
        obj: TypeRef,
        delta: u64,
        want: u64,
        span: Span,
    ) -> Result<Option<(TypeRef, MemberPath)>, ModelError> {
        let mut queue = std::collections::VecDeque::from([(obj, 0u32)]);
        let mut seen = std::collections::HashSet::from([obj]);
        let mut found: Vec<(TypeRef, MemberPath)> = Vec::new();
        while let Some((t, depth)) = queue.pop_front() {
            if depth >= 6 || seen.len() > 256 {
                break;
            }
            for c in self.src.embedders(t)? {
                if !seen.insert(c) {
                    continue;
                }
                queue.push_back((c, depth + 1));
                if self.src.size_of(c)?.is_some_and(|size| size > delta) {
                    let paths = layout::member_at(self.src, c, delta)?;
                    if let Some(p) = paths
                        .iter()
                        .find(|p| p.place == Placement::Start && p.size == want)
                        .or_else(|| paths.iter().find(|p| p.place == Placement::Start))
                    {
                        found.push((c, p.clone()));
                    }
                }
            }
        }
        // Prefer the container whose member has exactly the size read.
        found.sort_by_key(|(_, p)| p.size != want);
        let Some((container, path)) = found.first().cloned() else { return Ok(None) };
        let others =
            found[1..].iter().take(4).map(|(c, p)| format!("`{}` in `{}`", p.dotted(), self.type_name(*c))).collect();
        self.out.problems.push(Problem::ViaContainer {
            span,
            declared: self.type_name(obj),
            container: self.type_name(container),
            member: path.dotted(),
            others,
        });
        Ok(Some((container, path)))
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
        Ok(matches!(layout::strip(self.src, array.ty)?.1, Type::Array { .. })
            && path.offset + size <= array.offset + array.size)
    }

    /// Up to two members around an offset, for help text.
    fn nearby(&self, obj: TypeRef, delta: u64) -> Result<Vec<String>, ModelError> {
        let mut out = Vec::new();
        let (_, t) = layout::strip(self.src, obj)?;
        if let Type::Struct(c) | Type::Union(c) = &t {
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
        Ok(match layout::strip(self.src, ty)?.1 {
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
        let register = matches!(layout::strip(self.src, container)?.1, Type::Struct(ref s) if s.name.as_deref() == Some("pt_regs"));
        Ok(register && matches!(self.src.get(ty)?, Type::Int { signed: false, size, .. } if size == self.ptr_size))
    }

    /// `regs->si`-style expressions: values read from a saved register.
    fn is_register(&self, expr: &str) -> bool {
        self.out.steps.last().is_some_and(|s| s.container.ends_with("struct pt_regs") && s.expr == expr)
    }

    fn is_char(&self, ty: TypeRef) -> Result<bool, ModelError> {
        Ok(matches!(layout::strip(self.src, ty)?.1, Type::Int { is_char: true, .. } | Type::Int { size: 1, .. }))
    }

    fn signed(&self, ty: TypeRef) -> Result<Option<bool>, ModelError> {
        Ok(match layout::strip(self.src, ty)?.1 {
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
        let (_, t) = layout::strip(self.src, ty)?;
        if matches!(t, Type::Struct(_) | Type::Union(_) | Type::Array { .. }) {
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
                let member = layout::member_at(self.src, obj, delta)?
                    .into_iter()
                    .find(|p| p.place == Placement::Start)
                    .map(|p| Self::member_expr(&expr, &p));
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
                            Some(t) => !chars || self.is_char(t)? || matches!(self.src.get(t)?, Type::Void),
                            // An address kept in an `unsigned long`: what it points to is unknown.
                            None => self.is_register(expr),
                        };
                        (expr.clone(), Some(*ty), ok)
                    }
                    TVal::Addr { obj, delta, expr } => {
                        let span = self.last_add.unwrap_or(type_span);
                        match self.member(*obj, *delta, expr, span, 1)?.map(|(p, _)| p) {
                            Some(p) => {
                                let (_, mt) = layout::strip(self.src, p.ty)?;
                                // `member_at` names the innermost element (`comm[0]`): a copy
                                // from there copies the array.
                                let ok = match mt {
                                    Type::Array { element, .. } => !chars || self.is_char(element)?,
                                    _ if chars => self.is_char(p.ty)?,
                                    _ => true,
                                };
                                let e = Self::member_expr(expr, &p);
                                let e = e.strip_suffix("[0]").map(str::to_owned).unwrap_or(e);
                                (e, Some(p.ty), ok)
                            }
                            // `member` said why (T404, T407), or the layout is unknown.
                            None => return Ok(()),
                        }
                    }
                    TVal::Lost => return Ok(()),
                };
                if chars && !ok {
                    let tn = ty.map(|t| self.type_name(t)).unwrap_or_else(|| "?".to_owned());
                    self.out.problems.push(Problem::StringNotChar { span: type_span, expr: expr.clone(), ty: tn });
                }
                Meaning {
                    expr,
                    ty: ty.map(|t| self.type_name(t)),
                    size: None,
                    signed: None,
                    kind: if string { MeaningKind::String } else { MeaningKind::CopyFrom },
                }
            }
            Recorded::Value(TVal::Lost) => return Ok(()),
        };
        self.out.recorded = Some(meaning);
        Ok(())
    }
}

impl Walk for TypeWalker<'_> {
    type Value = TVal;
    type Error = ModelError;

    fn param(&mut self, slot: u32) -> Result<TVal, ModelError> {
        Ok(match self.params.get(slot as usize) {
            Some(p) => TVal::Val { ty: p.ty, expr: p.name.clone().unwrap_or_else(|| format!("arg{slot}")) },
            None => TVal::Lost,
        })
    }

    fn absolute(&mut self, _value: &AbsValue, _size: u32) -> Result<TVal, ModelError> {
        Ok(TVal::Lost)
    }

    fn add(&mut self, v: TVal, bytes: u64, span: Span) -> Result<TVal, ModelError> {
        self.last_add = Some(span);
        Ok(match v {
            TVal::Val { ty, expr } => match self.is_pointer(ty)? {
                Some(target) if !matches!(layout::strip(self.src, target)?.1, Type::Void) => {
                    TVal::Addr { obj: target, delta: bytes, expr }
                }
                _ => TVal::Lost,
            },
            TVal::Addr { obj, delta, expr } => TVal::Addr { obj, delta: delta.wrapping_add(bytes), expr },
            TVal::Lost => TVal::Lost,
        })
    }

    fn load_pointer(&mut self, addr: TVal, span: Span) -> Result<TVal, ModelError> {
        let TVal::Addr { obj, delta, expr } = addr else { return Ok(TVal::Lost) };
        let Some((path, mexpr)) = self.member(obj, delta, &expr, span, u64::from(self.ptr_size))? else {
            return Ok(TVal::Lost);
        };
        if !self.address_like(obj, path.ty)? {
            let array = matches!(layout::strip(self.src, path.ty)?.1, Type::Array { .. });
            self.out.problems.push(Problem::DerefNonPointer { span, expr: mexpr, ty: self.type_name(path.ty), array });
            return Ok(TVal::Lost);
        }
        Ok(TVal::Val { ty: path.ty, expr: mexpr })
    }

    fn load_value(&mut self, addr: TVal, size: u32, span: Span) -> Result<TVal, ModelError> {
        let TVal::Addr { obj, delta, expr } = addr else { return Ok(TVal::Lost) };
        let Some((path, mexpr)) = self.member(obj, delta, &expr, span, u64::from(size))? else {
            return Ok(TVal::Lost);
        };
        let pointer_read = self.field.array.is_some() || self.field.atom == Atom::String;
        if pointer_read && !self.address_like(obj, path.ty)? {
            // Arrays and strings read a pointer here and copy from where it points.
            let array = matches!(layout::strip(self.src, path.ty)?.1, Type::Array { .. });
            self.out.problems.push(Problem::DerefNonPointer { span, expr: mexpr, ty: self.type_name(path.ty), array });
            return Ok(TVal::Lost);
        }
        if !pointer_read && !self.inside_byte_array(obj, &path, u64::from(size))? {
            self.check_size(path.ty, &mexpr, span)?;
        }
        Ok(TVal::Val { ty: path.ty, expr: mexpr })
    }
}
