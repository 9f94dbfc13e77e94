//! The questions the kernel's parser asks its kernel while it parses, as a trait.
//!
//! This crate knows no kernel. A checker with a kernel model (BTF, System.map, ftrace
//! list, blacklist) implements [`Env`]; without one, [`NoKernel`] answers "unknown" and
//! the parser assumes the benign answer and records an [`crate::Assumption`]. The
//! kernel asks these in a fixed order (place before event name, each argument in turn),
//! so answering them here, not after parsing, keeps the kernel's first error first.

/// `kprobe_on_func_entry(NULL, sym, offs)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FuncEntry {
    /// 0: the address is the function's entry.
    Entry,
    /// -EINVAL: inside the function, not its entry.
    NotEntry,
    /// -ENOENT: no such symbol (registration reports it later).
    NoSymbol,
}

/// Why `register_kprobe` failed (what `__trace_kprobe_create` logs for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegisterError {
    /// -EILSEQ: BAD_INSN_BNDRY.
    NotInsnBoundary,
    /// -ENOENT: BAD_PROBE_ADDR.
    NoSymbol,
    /// Anything else (blacklisted, not text, ...): FAIL_REG_PROBE, -EINVAL.
    Failed,
    /// -EOPNOTSUPP from `prepare_emulation` (an `iret`, a far or memory-indirect call or
    /// jump): FAIL_REG_PROBE with that errno.
    Unsupported,
}

/// A BTF type after `btf_type_skip_modifiers` (typedef, const, volatile, restrict skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BtfKind {
    Void,
    /// A pointer to type id `target` (not yet resolved).
    Ptr {
        target: u32,
    },
    Struct,
    Union,
    /// `BTF_KIND_INT`: bit width, signedness, bit offset (`BTF_INT_OFFSET`).
    Int {
        bits: u32,
        signed: bool,
        offset: u32,
    },
    Enum,
    Enum64,
    /// Arrays, functions, floats, ...
    Other,
}

/// A member found by `btf_find_struct_member` (anonymous members looked through).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BtfMember {
    /// Bit offset from the start of the searched struct (anonymous offsets included).
    pub bit_offset: u32,
    /// Bitfield size when the containing struct has kflag set and this is a bitfield.
    pub bitfield_size: u32,
    /// Type id of the member.
    pub type_id: u32,
}

/// A function prototype found by `btf_find_func_proto`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BtfProto {
    /// Return type id, 0 for void.
    pub ret: u32,
    /// Parameter names and type ids.
    pub params: Vec<(String, u32)>,
}

/// BTF lookups the 6.12 parser makes.
pub trait Btf {
    /// `btf_find_func_proto(name)`.
    fn func_proto(&self, name: &str) -> Option<BtfProto>;
    /// `btf_type_skip_modifiers(id)`: the resolved id and its kind; None if `id` is bad.
    fn resolve(&self, id: u32) -> Option<(u32, BtfKind)>;
    /// `btf_find_struct_member(struct_id, name)`: `Err(())` when `struct_id` is not a
    /// struct or union (the kernel logs BAD_BTF_TID), `Ok(None)` when no member matches.
    #[allow(clippy::result_unit_err)]
    fn member(&self, struct_id: u32, name: &str) -> Result<Option<BtfMember>, ()>;
    /// `btf_type_is_char_ptr`.
    fn is_char_ptr(&self, id: u32) -> bool;
    /// `btf_type_is_char_array`.
    fn is_char_array(&self, id: u32) -> bool;
}

/// The kernel facts the parser consults. Every method may answer `None` (unknown).
pub trait Env {
    /// `kprobe_on_func_entry(NULL, symbol, offset)`.
    fn func_entry(&self, _symbol: &str, _offset: u64) -> Option<FuncEntry> {
        None
    }
    /// Kallsyms entries (kernel and modules) named `symbol`
    /// (`number_of_same_symbols` / `validate_probe_symbol`).
    fn symbol_count(&self, _symbol: &str) -> Option<u32> {
        None
    }
    /// Whether the tracepoint exists (`find_tracepoint`), and the name of its BTF
    /// probe stub function (`__probestub_<tp>`).
    fn tracepoint(&self, _name: &str) -> Option<Option<String>> {
        None
    }
    /// Whether `kallsyms_lookup_name(name)` finds `@SYM` when the probe registers.
    fn data_symbol(&self, _name: &str) -> Option<bool> {
        None
    }
    /// Whether `register_kprobe` accepts the probe point (`symbol`+`offset`, or the
    /// address `offset` when `symbol` is None): instruction boundary, kprobe blacklist,
    /// kernel text.
    fn register_kprobe(&self, _symbol: Option<&str>, _offset: u64) -> Option<Result<(), RegisterError>> {
        None
    }
    /// Whether `register_fprobe` finds `symbol` among the ftrace-able functions.
    fn ftrace_target(&self, _symbol: &str) -> Option<bool> {
        None
    }
    /// The kernel's BTF (6.12 with CONFIG_PROBE_EVENTS_BTF_ARGS).
    fn btf(&self) -> Option<&dyn Btf> {
        None
    }
}

/// No kernel: every answer is unknown.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKernel;

impl Env for NoKernel {}
