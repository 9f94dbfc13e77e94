//! Decoding BTF types into the shared model, and `impl TypeSource for Btf`.

use crate::index::Namespace;
use crate::raw::{INT_BOOL, INT_CHAR, INT_SIGNED};
use crate::{Btf, BtfKind, BtfTypeId, RawType, StrOffset, MAX_CHAIN};
use fevlint_types::model::{
    Composite, ForwardKind, FunctionInfo, Member, ModelError, NameList, Param, Prototype, Qualifier, Type,
    TypeNamespace, TypeRef, TypeSource,
};
use std::sync::Arc;

/// BTF FUNC linkage (`btf_func_linkage`), kept in the FUNC's vlen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    Static,
    Global,
    Extern,
}

/// The extra words of one record, read with one look at the blob ([`Btf::extra_words`]),
/// else one by one ([`Btf::extra_u32`], which says why one cannot be read).
struct Extra<'a> {
    btf: &'a Btf,
    raw: &'a RawType,
    bytes: Option<std::borrow::Cow<'a, [u8]>>,
}

impl<'a> Extra<'a> {
    fn new(btf: &'a Btf, raw: &'a RawType, words: usize) -> Extra<'a> {
        Extra { btf, raw, bytes: btf.extra_words(raw, words) }
    }

    fn word(&self, i: usize) -> Result<u32, ModelError> {
        match self.bytes.as_deref().and_then(|b| b.get(4 * i..4 * i + 4)) {
            Some(w) => Ok(self.btf.header.endian.u32([w[0], w[1], w[2], w[3]])),
            None => self.btf.extra_u32(self.raw, i),
        }
    }
}

impl Btf {
    /// A model `TypeRef` as a BTF id; ids beyond u32 cannot exist.
    pub fn id_of(&self, ty: TypeRef) -> Result<BtfTypeId, ModelError> {
        u32::try_from(ty.0)
            .map(BtfTypeId)
            .map_err(|_| ModelError::NoSuchType { source_name: self.source_name.clone(), ty })
    }

    fn opt_name(&self, off: StrOffset) -> Result<Option<String>, ModelError> {
        let s = self.string(off)?;
        Ok(if s.is_empty() { None } else { Some(s.to_string()) })
    }

    /// Members of a STRUCT or UNION, with bit offsets and bitfield widths decoded the
    /// way the kernel does: from the member's offset word when the kind_flag is set,
    /// otherwise from an INT member's own bit offset and width.
    pub fn members(&self, raw: &RawType) -> Result<Vec<Member>, ModelError> {
        let mut out = Vec::with_capacity(usize::from(raw.vlen));
        let extra = Extra::new(self, raw, 3 * usize::from(raw.vlen));
        for i in 0..usize::from(raw.vlen) {
            let name_off = StrOffset(extra.word(3 * i)?);
            let ty = extra.word(3 * i + 1)?;
            let offset = extra.word(3 * i + 2)?;
            let (mut bit_offset, mut bitfield_size) =
                if raw.kind_flag { (u64::from(offset & 0xff_ffff), offset >> 24) } else { (u64::from(offset), 0) };
            if !raw.kind_flag && ty != 0 {
                let target = self.raw(BtfTypeId(ty))?;
                if target.kind == BtfKind::Int {
                    let enc = self.extra_u32(&target, 0)?;
                    let (int_off, nr_bits) = ((enc >> 16) & 0xff, enc & 0xff);
                    if int_off != 0 || u64::from(nr_bits) != u64::from(target.size_or_type) * 8 {
                        bit_offset += u64::from(int_off);
                        bitfield_size = nr_bits;
                    }
                }
            }
            out.push(Member { name: self.opt_name(name_off)?, ty: TypeRef(u64::from(ty)), bit_offset, bitfield_size });
        }
        Ok(out)
    }

    /// The prototype of a FUNC_PROTO. A last parameter with type 0 means `...`.
    pub fn prototype(&self, raw: &RawType) -> Result<Prototype, ModelError> {
        if raw.kind != BtfKind::FuncProto {
            return Err(
                self.malformed(raw.offset, format!("type id {} is {}, not FUNC_PROTO", raw.id.0, raw.kind.name()))
            );
        }
        let mut params = Vec::with_capacity(usize::from(raw.vlen));
        let mut variadic = false;
        let extra = Extra::new(self, raw, 2 * usize::from(raw.vlen));
        for i in 0..usize::from(raw.vlen) {
            let name_off = StrOffset(extra.word(2 * i)?);
            let ty = extra.word(2 * i + 1)?;
            if ty == 0 {
                if i + 1 != usize::from(raw.vlen) {
                    return Err(self.malformed(raw.offset, format!("FUNC_PROTO {} has a void parameter {i}", raw.id.0)));
                }
                variadic = true;
                continue;
            }
            params.push(Param { name: self.opt_name(name_off)?, ty: TypeRef(u64::from(ty)) });
        }
        let ret = (raw.size_or_type != 0).then_some(TypeRef(u64::from(raw.size_or_type)));
        Ok(Prototype { ret, params, variadic })
    }

    fn enum_values(&self, raw: &RawType) -> Result<Vec<(String, i128)>, ModelError> {
        let mut values = Vec::with_capacity(usize::from(raw.vlen));
        for i in 0..usize::from(raw.vlen) {
            let (name_off, value) = if raw.kind == BtfKind::Enum {
                let v = self.extra_u32(raw, 2 * i + 1)?;
                let v = if raw.kind_flag { i128::from(v as i32) } else { i128::from(v) };
                (self.extra_u32(raw, 2 * i)?, v)
            } else {
                let lo = u64::from(self.extra_u32(raw, 3 * i + 1)?);
                let hi = u64::from(self.extra_u32(raw, 3 * i + 2)?);
                let v = (hi << 32) | lo;
                let v = if raw.kind_flag { i128::from(v as i64) } else { i128::from(v) };
                (self.extra_u32(raw, 3 * i)?, v)
            };
            values.push((self.string(StrOffset(name_off))?.to_string(), value));
        }
        Ok(values)
    }

    /// Linkage of a FUNC.
    pub fn linkage(&self, raw: &RawType) -> Result<Linkage, ModelError> {
        match raw.vlen {
            0 => Ok(Linkage::Static),
            1 => Ok(Linkage::Global),
            2 => Ok(Linkage::Extern),
            n => Err(self.malformed(raw.offset, format!("FUNC {} has unknown linkage {n}", raw.id.0))),
        }
    }

    /// The function of FUNC record `raw`, whose name the caller has read already (it
    /// looked the record up by it).
    fn function_info(&self, raw: &RawType, name: &str) -> Result<FunctionInfo, ModelError> {
        let proto = self.raw(BtfTypeId(raw.size_or_type))?;
        Ok(FunctionInfo {
            name: name.to_owned(),
            proto: self.prototype(&proto)?,
            is_static: self.linkage(raw)? == Linkage::Static,
            decl: None,
        })
    }

    fn decode(&self, id: BtfTypeId) -> Result<Type, ModelError> {
        if id.0 == 0 {
            return Ok(Type::Void);
        }
        let raw = self.raw(id)?;
        let target = TypeRef(u64::from(raw.size_or_type));
        let name = || -> Result<String, ModelError> { Ok(self.string(raw.name_off)?.to_string()) };
        Ok(match raw.kind {
            BtfKind::Int => {
                let enc = self.extra_u32(&raw, 0)? >> 24;
                let name = name()?;
                Type::Int {
                    is_char: enc & INT_CHAR != 0 || name.ends_with("char"),
                    is_bool: enc & INT_BOOL != 0,
                    signed: enc & INT_SIGNED != 0,
                    size: raw.size_or_type,
                    name,
                }
            }
            BtfKind::Float => Type::Float { name: name()?, size: raw.size_or_type },
            BtfKind::Ptr => Type::Pointer { target },
            BtfKind::Array => Type::Array {
                element: TypeRef(u64::from(self.extra_u32(&raw, 0)?)),
                len: u64::from(self.extra_u32(&raw, 2)?),
            },
            BtfKind::Struct | BtfKind::Union => {
                let c = Composite {
                    name: self.opt_name(raw.name_off)?,
                    size: u64::from(raw.size_or_type),
                    members: self.members(&raw)?.into(),
                };
                if raw.kind == BtfKind::Struct {
                    Type::Struct(c)
                } else {
                    Type::Union(c)
                }
            }
            // An enum without values is how BTF writes `enum x;` (libbpf does the same).
            BtfKind::Enum | BtfKind::Enum64 if raw.vlen == 0 && raw.name_off.0 != 0 => {
                Type::Forward { name: name()?, kind: ForwardKind::Enum }
            }
            BtfKind::Enum | BtfKind::Enum64 => Type::Enum {
                name: self.opt_name(raw.name_off)?,
                size: raw.size_or_type,
                signed: raw.kind_flag,
                values: self.enum_values(&raw)?,
            },
            BtfKind::Fwd => Type::Forward {
                name: name()?,
                kind: if raw.kind_flag { ForwardKind::Union } else { ForwardKind::Struct },
            },
            BtfKind::Typedef => Type::Typedef { name: name()?, target },
            BtfKind::Const => Type::Qualified { qualifier: Qualifier::Const, target },
            BtfKind::Volatile => Type::Qualified { qualifier: Qualifier::Volatile, target },
            BtfKind::Restrict => Type::Qualified { qualifier: Qualifier::Restrict, target },
            BtfKind::TypeTag => Type::Qualified { qualifier: Qualifier::TypeTag, target },
            BtfKind::FuncProto => Type::Function(self.prototype(&raw)?),
            // A FUNC is a function of its prototype's type.
            BtfKind::Func => Type::Function(self.prototype(&self.raw(BtfTypeId(raw.size_or_type))?)?),
            BtfKind::Var | BtfKind::Datasec | BtfKind::DeclTag => {
                return Err(self.malformed(
                    raw.offset,
                    format!("type id {} is a {}, which is not a C type", id.0, raw.kind.name()),
                ))
            }
        })
    }

    fn size_at_depth(&self, id: BtfTypeId, depth: usize) -> Result<Option<u64>, ModelError> {
        if depth > MAX_CHAIN {
            return Err(self.too_deep(id));
        }
        let id = self.skip_modifiers(id)?;
        if id.0 == 0 {
            return Ok(None);
        }
        let raw = self.raw(id)?;
        Ok(match raw.kind {
            BtfKind::Ptr => Some(u64::from(self.pointer_size)),
            BtfKind::Array => {
                let elem = BtfTypeId(self.extra_u32(&raw, 0)?);
                let n = u64::from(self.extra_u32(&raw, 2)?);
                match self.size_at_depth(elem, depth + 1)? {
                    Some(s) => Some(
                        s.checked_mul(n)
                            .ok_or_else(|| self.malformed(raw.offset, format!("array {} size overflows", id.0)))?,
                    ),
                    None => None,
                }
            }
            BtfKind::Enum | BtfKind::Enum64 if raw.vlen == 0 => None,
            BtfKind::Var => self.size_at_depth(BtfTypeId(raw.size_or_type), depth + 1)?,
            k if k.has_size() => Some(u64::from(raw.size_or_type)),
            _ => None,
        })
    }

    /// Every FUNC id, in id order (base first).
    pub fn function_ids(&self) -> Vec<BtfTypeId> {
        let mut ids = match &self.base {
            Some(b) => b.function_ids(),
            None => Vec::new(),
        };
        let start = ids.len();
        ids.extend(self.index_ids(Namespace::Func));
        ids[start..].sort_unstable();
        ids
    }
}

impl Btf {
    /// Member type → composites that start with it, over this BTF and its base, as
    /// `(member, composite)` pairs sorted (a composite's ids in id order for each member).
    /// Listing them reads every struct and union record of the blob, so for a blob without
    /// a base the list is kept in the index store ([`Btf::with_index_cache`]) and a later
    /// run reads it back instead.
    fn embedder_index(&self) -> &[(u32, u32)] {
        self.embedders.get_or_init(|| {
            let file = match (&self.base, &self.index_cache) {
                (None, Some((k, store))) => Some((format!("{k}.btfemb1"), store)),
                _ => None,
            };
            if let Some(pairs) = file.as_ref().and_then(|(f, store)| store.get(f)).and_then(|b| self.read_embedders(&b))
            {
                return pairs;
            }
            let pairs = self.list_embedders();
            if let Some((f, store)) = &file {
                let bytes: Vec<u8> =
                    pairs.iter().flat_map(|&(m, c)| [m.to_le_bytes(), c.to_le_bytes()]).flatten().collect();
                store.put(f, &bytes);
            }
            pairs
        })
    }

    /// A stored embedder list: `None` unless it is whole pairs of ids of this blob, in
    /// order (a damaged or foreign entry is listed again).
    fn read_embedders(&self, bytes: &crate::IndexBytes) -> Option<Vec<(u32, u32)>> {
        let bytes = (**bytes).as_ref();
        if bytes.len() % 8 != 0 {
            return None;
        }
        let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let pairs: Vec<(u32, u32)> = bytes.chunks_exact(8).map(|p| (word(&p[..4]), word(&p[4..]))).collect();
        let next = self.next_id();
        let valid = pairs.iter().all(|&(m, c)| m < next && c < next) && pairs.windows(2).all(|w| w[0] <= w[1]);
        valid.then_some(pairs)
    }

    /// Reads every struct and union record for the members at offset 0.
    fn list_embedders(&self) -> Vec<(u32, u32)> {
        let mut pairs = Vec::new();
        let first = self.base.as_ref().map_or(self.first_id, |b| b.first_id);
        for id in first..self.next_id() {
            let Ok(raw) = self.raw(BtfTypeId(id)) else { continue };
            if !matches!(raw.kind, BtfKind::Struct | BtfKind::Union) || raw.vlen == 0 {
                continue;
            }
            // Members at offset 0 (a bitfield's offset word is non-zero past bit 0
            // too, so the raw word decides), without decoding names.
            let leading = (0..usize::from(raw.vlen)).map_while(|i| {
                let ty = self.extra_u32(&raw, 3 * i + 1).ok()?;
                let offset = self.extra_u32(&raw, 3 * i + 2).ok()?;
                let bits = if raw.kind_flag { offset & 0xff_ffff } else { offset };
                (bits == 0).then_some(ty)
            });
            for ty in leading {
                // Look through typedefs and qualifiers to the embedded composite.
                let mut t = ty;
                for _ in 0..8 {
                    match self.raw(BtfTypeId(t)) {
                        Ok(r)
                            if matches!(
                                r.kind,
                                BtfKind::Typedef
                                    | BtfKind::Const
                                    | BtfKind::Volatile
                                    | BtfKind::Restrict
                                    | BtfKind::TypeTag
                            ) =>
                        {
                            t = r.size_or_type
                        }
                        _ => break,
                    }
                }
                pairs.push((t, id));
            }
        }
        // A composite holding the same type twice at offset 0 (a union's alternatives, a
        // zero-sized member first) is listed twice, as it always was.
        pairs.sort_unstable();
        pairs
    }
}

impl TypeSource for Btf {
    fn tag(&self, ty: TypeRef) -> Result<Option<(ForwardKind, Option<String>)>, ModelError> {
        // The record's kind and name, without decoding (and keeping) its members. An
        // enum without values decodes as a forward declaration, named the same.
        let id = self.id_of(ty)?;
        if id.0 == 0 {
            return Ok(None);
        }
        let raw = self.raw(id)?;
        let kind = match raw.kind {
            BtfKind::Struct => ForwardKind::Struct,
            BtfKind::Union => ForwardKind::Union,
            BtfKind::Enum | BtfKind::Enum64 => ForwardKind::Enum,
            _ => return Ok(None),
        };
        Ok(Some((kind, self.opt_name(raw.name_off)?)))
    }

    fn is_struct(&self, ty: TypeRef) -> Result<bool, ModelError> {
        // The record's kind, without decoding (and keeping) its members.
        let id = self.skip_modifiers(self.id_of(ty)?)?;
        Ok(id.0 != 0 && self.raw(id)?.kind == BtfKind::Struct)
    }

    fn embedders(&self, ty: TypeRef) -> Result<Vec<TypeRef>, ModelError> {
        let id = u32::try_from(ty.0).unwrap_or(u32::MAX);
        let pairs = self.embedder_index();
        let from = pairs.partition_point(|&(m, _)| m < id);
        Ok(pairs[from..].iter().take_while(|&&(m, _)| m == id).map(|&(_, c)| TypeRef(u64::from(c))).collect())
    }

    fn error_name(&self) -> String {
        format!("{}: {}", self.source_name(), self.describe())
    }

    fn describe(&self) -> String {
        let mb = self.len() as f64 / 1e6;
        match &self.base {
            None => format!("BTF ({mb:.1} MB, {} types)", self.own_type_count()),
            Some(b) => format!("split BTF ({mb:.1} MB, {} types) on {}", self.own_type_count(), b.describe()),
        }
    }

    fn get(&self, ty: TypeRef) -> Result<Type, ModelError> {
        Ok(Arc::unwrap_or_clone(self.get_shared(ty)?))
    }

    fn get_shared(&self, ty: TypeRef) -> Result<Arc<Type>, ModelError> {
        let id = self.id_of(ty)?;
        // A check reads the same types again and again (every access to `struct
        // task_struct` walks its members, every parameter its typedefs): keep the decoded
        // ones. A type that does not decode is not kept (its error is made again).
        let cache = self.decoded.get_or_init(Default::default);
        if let Some(t) = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&id.0) {
            return Ok(Arc::clone(t));
        }
        let t = Arc::new(self.decode(id)?);
        let mut c = cache.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if c.len() < crate::DECODED_MAX {
            c.insert(id.0, Arc::clone(&t));
        }
        Ok(t)
    }

    fn size_of(&self, ty: TypeRef) -> Result<Option<u64>, ModelError> {
        use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
        // In the cache: UNKNOWN until asked, NONE for sizeless types, else the size.
        const UNKNOWN: u32 = u32::MAX;
        const NONE: u32 = u32::MAX - 1;
        let id = self.id_of(ty)?;
        let Some(slot) = id.0.checked_sub(self.first_id).filter(|_| id.0 != 0) else {
            return self.size_at_depth(id, 0);
        };
        let cache = self.sizes.get_or_init(|| (0..self.own_type_count()).map(|_| AtomicU32::new(UNKNOWN)).collect());
        let Some(cell) = cache.get(slot as usize) else { return self.size_at_depth(id, 0) };
        match cell.load(Relaxed) {
            UNKNOWN => {
                let size = self.size_at_depth(id, 0)?;
                match size {
                    None => cell.store(NONE, Relaxed),
                    Some(s) if s < u64::from(NONE) => cell.store(s as u32, Relaxed),
                    Some(_) => {}
                }
                Ok(size)
            }
            NONE => Ok(None),
            s => Ok(Some(u64::from(s))),
        }
    }

    fn find_type(&self, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError> {
        let ns = match ns {
            TypeNamespace::Struct => Namespace::Struct,
            TypeNamespace::Union => Namespace::Union,
            TypeNamespace::Enum => Namespace::Enum,
            TypeNamespace::Ordinary => Namespace::Ordinary,
        };
        let mut hits = Vec::new();
        for raw in self.lookup_records(ns, name)? {
            let is_fwd =
                raw.kind == BtfKind::Fwd || (matches!(raw.kind, BtfKind::Enum | BtfKind::Enum64) && raw.vlen == 0);
            hits.push((is_fwd, TypeRef(u64::from(raw.id.0))));
        }
        // Complete definitions first, each group in id order (the sort is stable).
        hits.sort_by_key(|h| h.0);
        Ok(hits.into_iter().map(|h| h.1).collect())
    }

    fn functions(&self, name: &str) -> Result<Vec<FunctionInfo>, ModelError> {
        self.lookup_records(Namespace::Func, name)?.iter().map(|raw| self.function_info(raw, name)).collect()
    }

    fn function_names(&self) -> Result<Vec<String>, ModelError> {
        let mut names = Vec::new();
        for id in self.function_ids() {
            names.push(self.string(self.raw(id)?.name_off)?.to_string());
        }
        Ok(names)
    }

    fn pointer_size(&self) -> u32 {
        self.pointer_size
    }

    fn type_names_shared(&self, ns: TypeNamespace) -> Result<Arc<NameList>, ModelError> {
        let slot = match ns {
            TypeNamespace::Struct => 0,
            TypeNamespace::Union => 1,
            TypeNamespace::Ordinary => 2,
            TypeNamespace::Enum => return Ok(Arc::default()),
        };
        if let Some(names) = self.type_names[slot].get() {
            return Ok(Arc::clone(names));
        }
        let names: Arc<NameList> = match self.stored_type_names(slot) {
            Some(names) => Arc::new(names),
            None => {
                let names = self.type_names(ns)?;
                self.store_type_names(slot, &names);
                Arc::new(names.iter().collect())
            }
        };
        Ok(Arc::clone(self.type_names[slot].get_or_init(|| names)))
    }

    fn type_names(&self, ns: TypeNamespace) -> Result<Vec<String>, ModelError> {
        let (index_ns, kind) = match ns {
            TypeNamespace::Struct => (Namespace::Struct, BtfKind::Struct),
            TypeNamespace::Union => (Namespace::Union, BtfKind::Union),
            // Typedefs of anonymous structs and unions (`atomic_t`).
            TypeNamespace::Ordinary => (Namespace::Ordinary, BtfKind::Typedef),
            TypeNamespace::Enum => return Ok(Vec::new()),
        };
        let mut names = match &self.base {
            Some(b) => b.type_names(ns)?,
            None => Vec::new(),
        };
        for id in self.index_ids(index_ns) {
            let raw = self.raw(id)?;
            if raw.kind != kind {
                continue;
            }
            if kind == BtfKind::Typedef {
                let target = self.raw(self.skip_modifiers(BtfTypeId(raw.size_or_type))?);
                let anonymous_composite = target.is_ok_and(|t| {
                    matches!(t.kind, BtfKind::Struct | BtfKind::Union) && t.name_off.0 == 0 && t.vlen > 0
                });
                if !anonymous_composite {
                    continue;
                }
            }
            names.push(self.string(raw.name_off)?.to_string());
        }
        names.sort_unstable();
        names.dedup();
        Ok(names)
    }
}
