//! The one interface the rules use to ask about a kernel's types and functions,
//! whatever source (BTF, DWARF) answers.
//!
//! Sources are lazy: they answer one question at a time and hand back small owned
//! values. Type identity is a [`TypeRef`], opaque to everyone but the source that
//! issued it (a BTF type id, a DWARF DIE offset).

use std::fmt;
use std::sync::Arc;

/// Bound on typedef chains, declarator nesting and composite nesting (what a
/// [`TypeSource`] walk follows before it answers [`ModelError::TooDeep`]).
pub const MAX_DEPTH: usize = 64;

/// An opaque handle to a type inside one [`TypeSource`]. Only meaningful for the
/// source that returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeRef(pub u64);

/// A type as a rule sees it: one level deep. Follow the `TypeRef`s for more.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Type {
    Void,
    /// Integers, `_Bool` and `char`; `size` in bytes.
    Int {
        name: String,
        size: u32,
        signed: bool,
        is_char: bool,
        is_bool: bool,
    },
    Float {
        name: String,
        size: u32,
    },
    Pointer {
        target: TypeRef,
    },
    Array {
        element: TypeRef,
        len: u64,
    },
    Struct(Composite),
    Union(Composite),
    Enum {
        name: Option<String>,
        size: u32,
        signed: bool,
        values: Vec<(String, i128)>,
    },
    /// A struct, union or enum declared but not defined here.
    Forward {
        name: String,
        kind: ForwardKind,
    },
    Typedef {
        name: String,
        target: TypeRef,
    },
    Qualified {
        qualifier: Qualifier,
        target: TypeRef,
    },
    Function(Prototype),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForwardKind {
    Struct,
    Union,
    Enum,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qualifier {
    Const,
    Volatile,
    Restrict,
    /// BTF_KIND_TYPE_TAG (e.g. `__user`, `__rcu`).
    TypeTag,
}

/// A struct or union with its members in declaration order. Members are shared: sources
/// cache decoded composites and hand out clones for every member access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composite {
    pub name: Option<String>,
    pub size: u64,
    pub members: Arc<[Member]>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// `None` for anonymous struct/union members.
    pub name: Option<String>,
    pub ty: TypeRef,
    /// Offset from the start of the enclosing composite, in bits.
    pub bit_offset: u64,
    /// Non-zero for bitfields: the width in bits.
    pub bitfield_size: u32,
}

/// A function prototype: return type and parameters in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prototype {
    pub ret: Option<TypeRef>,
    pub params: Vec<Param>,
    pub variadic: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Param {
    pub name: Option<String>,
    pub ty: TypeRef,
}

/// A function the type source knows (a BTF FUNC, a DWARF subprogram).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    pub name: String,
    pub proto: Prototype,
    /// `static` (BTF linkage 0, DWARF without DW_AT_external).
    pub is_static: bool,
    /// Declaration file and line, when the source has them (DWARF).
    pub decl: Option<(String, u32)>,
}

/// Which kind of named type to look up: `struct file`, `union bpf_attr`, `enum x`, `u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeNamespace {
    Struct,
    Union,
    Enum,
    /// Typedefs and base types (`u64`, `size_t`, `int`).
    Ordinary,
}

/// An error reading a type source. Always names the place.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{source_name}: {what} at offset {offset:#x}")]
    Malformed { source_name: String, offset: u64, what: String },
    #[error("{source_name}: type {ty:?} does not exist")]
    NoSuchType { source_name: String, ty: TypeRef },
    #[error("{source_name}: type chain too deep at {ty:?} (cycle?)")]
    TooDeep { source_name: String, ty: TypeRef },
}

/// Answers questions about types and functions. Implemented by BTF and DWARF readers.
///
/// Invariant: answers are the same for the same kernel whichever source is behind it.
pub trait TypeSource: Send + Sync + fmt::Debug {
    /// Short description for messages: "BTF (6.1 MB)", "DWARF 5 (2352 units)".
    fn describe(&self) -> String;
    /// For error messages: the file the types come from, when known, and
    /// [`Self::describe`].
    fn error_name(&self) -> String {
        self.describe()
    }
    /// Resolve one type, one level deep.
    fn get(&self, ty: TypeRef) -> Result<Type, ModelError>;
    /// [`TypeSource::get`], shared: a source that keeps the types it decoded (BTF) hands
    /// out the one it keeps, without copying its names and members. The same answer as
    /// `get`.
    fn get_shared(&self, ty: TypeRef) -> Result<Arc<Type>, ModelError> {
        Ok(Arc::new(self.get(ty)?))
    }
    /// Size in bytes of a type, following typedefs and qualifiers; `None` for void,
    /// functions and incomplete types.
    fn size_of(&self, ty: TypeRef) -> Result<Option<u64>, ModelError>;
    /// Named types in one namespace. Several hits are possible (BTF keeps duplicates
    /// of different shapes); complete definitions come before forward declarations.
    fn find_type(&self, ns: TypeNamespace, name: &str) -> Result<Vec<TypeRef>, ModelError>;
    /// Every function entry of that name (several for duplicate static functions).
    fn functions(&self, name: &str) -> Result<Vec<FunctionInfo>, ModelError>;
    /// All function names, for completion and fuzzy suggestions, in no particular order
    /// and possibly repeated. May be slow once.
    fn function_names(&self) -> Result<Vec<String>, ModelError>;
    /// Pointer size in bytes (8 on x86_64, 4 on x86_32).
    fn pointer_size(&self) -> u32;
    /// Structs and unions whose first member (at offset 0) is `ty`: the kernel's embedding
    /// idiom (`struct tcp_sock` starts with `struct inet_connection_sock`, which starts
    /// with … `struct sock`). Explains offsets past the end of a pointer's declared type
    /// when code casts it (`tcp_sk(sk)`, `container_of`). Sources that cannot answer
    /// cheaply return nothing.
    fn embedders(&self, _ty: TypeRef) -> Result<Vec<TypeRef>, ModelError> {
        Ok(Vec::new())
    }
    /// Whether `ty`, through typedefs and qualifiers, is a struct (not a union, not a
    /// forward declaration): what the walk over [`TypeSource::embedders`] asks of every
    /// container it meets. A source that can tell without decoding the members says so.
    fn is_struct(&self, mut ty: TypeRef) -> Result<bool, ModelError> {
        for _ in 0..MAX_DEPTH {
            match self.get(ty)? {
                Type::Typedef { target, .. } | Type::Qualified { target, .. } => ty = target,
                t => return Ok(matches!(t, Type::Struct(_))),
            }
        }
        Err(ModelError::TooDeep { source_name: self.error_name(), ty })
    }
    /// The kind and name of `ty` when it is a struct, union or enum (`None` for other
    /// types, and for anonymous ones' names): what [`crate::layout::type_name`] shows of
    /// the target of a pointer (`struct file *`). A forward declaration may answer either
    /// way (it is named the same). A source that can tell without decoding the members
    /// or values says so (naming a parameter's type then reads no member of its struct).
    fn tag(&self, ty: TypeRef) -> Result<Option<(ForwardKind, Option<String>)>, ModelError> {
        Ok(match &*self.get_shared(ty)? {
            Type::Struct(c) => Some((ForwardKind::Struct, c.name.clone())),
            Type::Union(c) => Some((ForwardKind::Union, c.name.clone())),
            Type::Enum { name, .. } => Some((ForwardKind::Enum, name.clone())),
            _ => None,
        })
    }
    /// The names of every complete struct (`ns` = `Struct`) or union (`Union`) this
    /// source defines, or (`Ordinary`) of every typedef of an anonymous struct or union
    /// (`atomic_t`), sorted and deduplicated: the universe `fevlint diff` compares.
    /// Sources that cannot list cheaply return nothing (then no type is compared).
    fn type_names(&self, _ns: TypeNamespace) -> Result<Vec<String>, ModelError> {
        Ok(Vec::new())
    }
    /// [`TypeSource::type_names`], shared: a source that keeps the list (BTF) hands out
    /// the same one to every caller instead of listing again (a check asks for the
    /// struct names once per member read past a struct's end).
    fn type_names_shared(&self, ns: TypeNamespace) -> Result<Arc<NameList>, ModelError> {
        Ok(Arc::new(self.type_names(ns)?.iter().collect()))
    }
}

/// Names kept in one buffer, in order: a list a source reads once and hands out shared
/// ([`TypeSource::type_names_shared`]), without a string per name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameList {
    text: String,
    /// Where each name ends in `text` (each a char boundary: only [`NameList::push`] adds).
    ends: Vec<usize>,
}

impl NameList {
    /// An empty list with room for `names` names of `bytes` bytes in all.
    pub fn with_capacity(names: usize, bytes: usize) -> NameList {
        NameList { text: String::with_capacity(bytes), ends: Vec::with_capacity(names) }
    }

    pub fn push(&mut self, name: &str) {
        self.text.push_str(name);
        self.ends.push(self.text.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Name `i`.
    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.text.get(start..end)
    }

    /// The names in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let name = self.text.get(start..end).unwrap_or_default();
            start = end;
            name
        })
    }
}

impl<S: AsRef<str>> FromIterator<S> for NameList {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> NameList {
        let mut list = NameList::default();
        for name in iter {
            list.push(name.as_ref());
        }
        list
    }
}

#[cfg(test)]
mod tests {
    use super::NameList;

    #[test]
    fn a_name_list_gives_back_its_names() {
        let names = ["", "file", "task_struct", "\u{e9}t\u{e9}", "x"];
        let list: NameList = names.iter().collect();
        assert_eq!(list.len(), names.len());
        assert_eq!(list.iter().collect::<Vec<_>>(), names);
        for (i, n) in names.iter().enumerate() {
            assert_eq!(list.get(i), Some(*n));
        }
        assert_eq!(list.get(names.len()), None);
        assert!(NameList::default().is_empty() && NameList::default().iter().next().is_none());
    }
}
