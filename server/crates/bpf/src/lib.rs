//! fevlint-bpf: compiled BPF CO-RE objects (`*.bpf.o`, or embedded in a tool's binary).
//!
//! [`BpfObject::parse`] reads the ELF (sections, programs by `SEC()` name), the object's
//! own `.BTF` (with the project's BTF reader) and `.BTF.ext` (func_info, line_info,
//! core_relo). [`core::resolve`] resolves every CO-RE relocation against a kernel's BTF
//! the way libbpf 1.1's `relo_core.c` does (candidates, spec matching, compatibility,
//! ambiguity, poisoning, the instruction patch checks).
//!
//! Sans-IO: bytes in, answers out; no environment, no files.
//!
//! Invariant: no input makes this crate panic, loop without bound, or allocate more than
//! a small multiple of the input's size.

pub mod args;
pub mod btfx;
pub mod core;
pub mod ext;
pub mod flow;
pub mod host;
pub mod ksym;
pub mod object;
pub mod open;
pub mod section;

pub use crate::core::{resolve, Outcome, Resolution};
pub use crate::ext::{BtfExt, CoreRelo, ExtSection, FuncInfo, LineInfo, ReloKind};
pub use crate::object::{BpfObject, ObjectError, Program};
pub use crate::section::{AttachKind, Placeholder, SectionDef};

/// The BTF reader this crate shares with the kernel model.
pub use fevlint_btf as btf;
