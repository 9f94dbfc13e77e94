//! The kernel's error IDs and texts: the `ERRORS` table of `kernel/trace/trace_probe.h`,
//! copied from Debian's `linux-source-6.12` 6.12.117 (79 IDs) plus 6.1's `MAXACT_NO_KPROBE`.
//! 6.1.192 has 61 of them; 6.1.170 has 60 (no `EVENT_TOO_BIG`) and spells `BAD_VAR`
//! "Invalid $-valiable specified".

/// One `TP_ERR_*` of `trace_probe.h`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorId {
    /// `Failed to find the given file`
    FileNotFound,
    /// `Not a regular file`
    NoRegularFile,
    /// `Invalid reference counter offset`
    BadRefcnt,
    /// `Reference counter brace is not closed`
    RefcntOpenBrace,
    /// `Reference counter has wrong suffix`
    BadRefcntSuffix,
    /// `Invalid uprobe offset`
    BadUprobeOffs,
    /// `Maxactive is not for kprobe`
    MaxactNoKprobe,
    /// `Maxactive is only for function exit`
    BadMaxactType,
    /// `Invalid maxactive number`
    BadMaxact,
    /// `Maxactive is too big`
    MaxactTooBig,
    /// `Invalid probed address or symbol`
    BadProbeAddr,
    /// `The symbol is not unique`
    NonUniqSymbol,
    /// `Retprobe address must be an function entry`
    BadRetprobe,
    /// `Tracepoint is not found`
    NoTracepoint,
    /// `Invalid character in tracepoint name`
    BadTpName,
    /// `Invalid probed address suffix`
    BadAddrSuffix,
    /// `Group name is not specified`
    NoGroupName,
    /// `Group name is too long`
    GroupTooLong,
    /// `Group name must follow the same rules as C identifiers`
    BadGroupName,
    /// `Event name is not specified`
    NoEventName,
    /// `Event name is too long`
    EventTooLong,
    /// `Event name must follow the same rules as C identifiers`
    BadEventName,
    /// `Given group/event name is already used by another event`
    EventExist,
    /// `$retval is not available on probe`
    RetvalOnProbe,
    /// `This function returns 'void' type`
    NoRetval,
    /// `Invalid stack number`
    BadStackNum,
    /// `Invalid argument number`
    BadArgNum,
    /// `Invalid $-variable specified`
    BadVar,
    /// `Invalid register name`
    BadRegName,
    /// `Invalid memory address`
    BadMemAddr,
    /// `Invalid immediate value`
    BadImm,
    /// `String is not closed with '"'`
    ImmstrNoClose,
    /// `File offset is not available with kprobe`
    FileOnKprobe,
    /// `Invalid file offset value`
    BadFileOffs,
    /// `Symbol is not available with uprobe`
    SymOnUprobe,
    /// `Dereference is too much nested`
    TooManyOps,
    /// `Dereference needs a brace`
    DerefNeedBrace,
    /// `Invalid dereference offset`
    BadDerefOffs,
    /// `Dereference brace is not closed`
    DerefOpenBrace,
    /// `$comm can not be dereferenced`
    CommCantDeref,
    /// `Invalid fetch argument`
    BadFetchArg,
    /// `Array is not closed`
    ArrayNoClose,
    /// `Array has wrong suffix`
    BadArraySuffix,
    /// `Invalid array size`
    BadArrayNum,
    /// `Array number is too big`
    ArrayTooBig,
    /// `Unknown type is specified`
    BadType,
    /// `String accepts only memory argument`
    BadString,
    /// `Symbol String doesn't accept data/userdata`
    BadSymstring,
    /// `Invalid bitfield`
    BadBitfield,
    /// `Argument name is too long`
    ArgNameTooLong,
    /// `Argument name is not specified`
    NoArgName,
    /// `Argument name must follow the same rules as C identifiers`
    BadArgName,
    /// `This argument name is already used`
    UsedArgName,
    /// `Argument expression is too long`
    ArgTooLong,
    /// `No argument expression`
    NoArgBody,
    /// `Probe point is not an instruction boundary`
    BadInsnBndry,
    /// `Failed to register probe event`
    FailRegProbe,
    /// `Probe type is different from existing probe`
    DiffProbeType,
    /// `Argument type or name is different from existing probe`
    DiffArgType,
    /// `There is already the exact same probe event`
    SameProbe,
    /// `This requires both group and event name to attach`
    NoEventInfo,
    /// `Attached event does not exist`
    BadAttachEvent,
    /// `Attached event does not have this field`
    BadAttachArg,
    /// `No filter rule after 'if'`
    NoEpFilter,
    /// `BTF is not available or not supported`
    NosupBtfarg,
    /// `This variable is not found at this probe point`
    NoBtfarg,
    /// `No BTF entry for this probe point`
    NoBtfEntry,
    /// `$arg* must be an independent parameter without name etc.`
    BadVarArgs,
    /// `$arg* can be used only on function entry or exit`
    NofentryArgs,
    /// `$arg* can be used only once in the parameters`
    DoubleArgs,
    /// `$arg* failed because the argument list is too long`
    Args2long,
    /// `$argN index is too big`
    Argidx2big,
    /// `This is not a pointer to union/structure.`
    NoPtrStrct,
    /// `Non pointer structure/union argument is not supported.`
    NosupDatArg,
    /// `Failed to parse single hyphen. Forgot '>'?`
    BadHyphen,
    /// `This field is not found.`
    NoBtfField,
    /// `Failed to get BTF type info.`
    BadBtfTid,
    /// `This type does not fit for string.`
    BadType4str,
    /// `$comm and immediate-string only accepts string type`
    NeedStringType,
    /// `Event too big (too many fields?)`
    EventTooBig,
}

impl ErrorId {
    /// Every ID, in the order of the 6.12 table (6.1's `MAXACT_NO_KPROBE` where 6.12 has `BAD_MAXACT_TYPE`).
    pub const ALL: &'static [ErrorId] = &[
        ErrorId::FileNotFound,
        ErrorId::NoRegularFile,
        ErrorId::BadRefcnt,
        ErrorId::RefcntOpenBrace,
        ErrorId::BadRefcntSuffix,
        ErrorId::BadUprobeOffs,
        ErrorId::MaxactNoKprobe,
        ErrorId::BadMaxactType,
        ErrorId::BadMaxact,
        ErrorId::MaxactTooBig,
        ErrorId::BadProbeAddr,
        ErrorId::NonUniqSymbol,
        ErrorId::BadRetprobe,
        ErrorId::NoTracepoint,
        ErrorId::BadTpName,
        ErrorId::BadAddrSuffix,
        ErrorId::NoGroupName,
        ErrorId::GroupTooLong,
        ErrorId::BadGroupName,
        ErrorId::NoEventName,
        ErrorId::EventTooLong,
        ErrorId::BadEventName,
        ErrorId::EventExist,
        ErrorId::RetvalOnProbe,
        ErrorId::NoRetval,
        ErrorId::BadStackNum,
        ErrorId::BadArgNum,
        ErrorId::BadVar,
        ErrorId::BadRegName,
        ErrorId::BadMemAddr,
        ErrorId::BadImm,
        ErrorId::ImmstrNoClose,
        ErrorId::FileOnKprobe,
        ErrorId::BadFileOffs,
        ErrorId::SymOnUprobe,
        ErrorId::TooManyOps,
        ErrorId::DerefNeedBrace,
        ErrorId::BadDerefOffs,
        ErrorId::DerefOpenBrace,
        ErrorId::CommCantDeref,
        ErrorId::BadFetchArg,
        ErrorId::ArrayNoClose,
        ErrorId::BadArraySuffix,
        ErrorId::BadArrayNum,
        ErrorId::ArrayTooBig,
        ErrorId::BadType,
        ErrorId::BadString,
        ErrorId::BadSymstring,
        ErrorId::BadBitfield,
        ErrorId::ArgNameTooLong,
        ErrorId::NoArgName,
        ErrorId::BadArgName,
        ErrorId::UsedArgName,
        ErrorId::ArgTooLong,
        ErrorId::NoArgBody,
        ErrorId::BadInsnBndry,
        ErrorId::FailRegProbe,
        ErrorId::DiffProbeType,
        ErrorId::DiffArgType,
        ErrorId::SameProbe,
        ErrorId::NoEventInfo,
        ErrorId::BadAttachEvent,
        ErrorId::BadAttachArg,
        ErrorId::NoEpFilter,
        ErrorId::NosupBtfarg,
        ErrorId::NoBtfarg,
        ErrorId::NoBtfEntry,
        ErrorId::BadVarArgs,
        ErrorId::NofentryArgs,
        ErrorId::DoubleArgs,
        ErrorId::Args2long,
        ErrorId::Argidx2big,
        ErrorId::NoPtrStrct,
        ErrorId::NosupDatArg,
        ErrorId::BadHyphen,
        ErrorId::NoBtfField,
        ErrorId::BadBtfTid,
        ErrorId::BadType4str,
        ErrorId::NeedStringType,
        ErrorId::EventTooBig,
    ];

    /// The C name without `TP_ERR_`, e.g. `BAD_MAXACT`.
    pub fn name(self) -> &'static str {
        match self {
            ErrorId::FileNotFound => "FILE_NOT_FOUND",
            ErrorId::NoRegularFile => "NO_REGULAR_FILE",
            ErrorId::BadRefcnt => "BAD_REFCNT",
            ErrorId::RefcntOpenBrace => "REFCNT_OPEN_BRACE",
            ErrorId::BadRefcntSuffix => "BAD_REFCNT_SUFFIX",
            ErrorId::BadUprobeOffs => "BAD_UPROBE_OFFS",
            ErrorId::MaxactNoKprobe => "MAXACT_NO_KPROBE",
            ErrorId::BadMaxactType => "BAD_MAXACT_TYPE",
            ErrorId::BadMaxact => "BAD_MAXACT",
            ErrorId::MaxactTooBig => "MAXACT_TOO_BIG",
            ErrorId::BadProbeAddr => "BAD_PROBE_ADDR",
            ErrorId::NonUniqSymbol => "NON_UNIQ_SYMBOL",
            ErrorId::BadRetprobe => "BAD_RETPROBE",
            ErrorId::NoTracepoint => "NO_TRACEPOINT",
            ErrorId::BadTpName => "BAD_TP_NAME",
            ErrorId::BadAddrSuffix => "BAD_ADDR_SUFFIX",
            ErrorId::NoGroupName => "NO_GROUP_NAME",
            ErrorId::GroupTooLong => "GROUP_TOO_LONG",
            ErrorId::BadGroupName => "BAD_GROUP_NAME",
            ErrorId::NoEventName => "NO_EVENT_NAME",
            ErrorId::EventTooLong => "EVENT_TOO_LONG",
            ErrorId::BadEventName => "BAD_EVENT_NAME",
            ErrorId::EventExist => "EVENT_EXIST",
            ErrorId::RetvalOnProbe => "RETVAL_ON_PROBE",
            ErrorId::NoRetval => "NO_RETVAL",
            ErrorId::BadStackNum => "BAD_STACK_NUM",
            ErrorId::BadArgNum => "BAD_ARG_NUM",
            ErrorId::BadVar => "BAD_VAR",
            ErrorId::BadRegName => "BAD_REG_NAME",
            ErrorId::BadMemAddr => "BAD_MEM_ADDR",
            ErrorId::BadImm => "BAD_IMM",
            ErrorId::ImmstrNoClose => "IMMSTR_NO_CLOSE",
            ErrorId::FileOnKprobe => "FILE_ON_KPROBE",
            ErrorId::BadFileOffs => "BAD_FILE_OFFS",
            ErrorId::SymOnUprobe => "SYM_ON_UPROBE",
            ErrorId::TooManyOps => "TOO_MANY_OPS",
            ErrorId::DerefNeedBrace => "DEREF_NEED_BRACE",
            ErrorId::BadDerefOffs => "BAD_DEREF_OFFS",
            ErrorId::DerefOpenBrace => "DEREF_OPEN_BRACE",
            ErrorId::CommCantDeref => "COMM_CANT_DEREF",
            ErrorId::BadFetchArg => "BAD_FETCH_ARG",
            ErrorId::ArrayNoClose => "ARRAY_NO_CLOSE",
            ErrorId::BadArraySuffix => "BAD_ARRAY_SUFFIX",
            ErrorId::BadArrayNum => "BAD_ARRAY_NUM",
            ErrorId::ArrayTooBig => "ARRAY_TOO_BIG",
            ErrorId::BadType => "BAD_TYPE",
            ErrorId::BadString => "BAD_STRING",
            ErrorId::BadSymstring => "BAD_SYMSTRING",
            ErrorId::BadBitfield => "BAD_BITFIELD",
            ErrorId::ArgNameTooLong => "ARG_NAME_TOO_LONG",
            ErrorId::NoArgName => "NO_ARG_NAME",
            ErrorId::BadArgName => "BAD_ARG_NAME",
            ErrorId::UsedArgName => "USED_ARG_NAME",
            ErrorId::ArgTooLong => "ARG_TOO_LONG",
            ErrorId::NoArgBody => "NO_ARG_BODY",
            ErrorId::BadInsnBndry => "BAD_INSN_BNDRY",
            ErrorId::FailRegProbe => "FAIL_REG_PROBE",
            ErrorId::DiffProbeType => "DIFF_PROBE_TYPE",
            ErrorId::DiffArgType => "DIFF_ARG_TYPE",
            ErrorId::SameProbe => "SAME_PROBE",
            ErrorId::NoEventInfo => "NO_EVENT_INFO",
            ErrorId::BadAttachEvent => "BAD_ATTACH_EVENT",
            ErrorId::BadAttachArg => "BAD_ATTACH_ARG",
            ErrorId::NoEpFilter => "NO_EP_FILTER",
            ErrorId::NosupBtfarg => "NOSUP_BTFARG",
            ErrorId::NoBtfarg => "NO_BTFARG",
            ErrorId::NoBtfEntry => "NO_BTF_ENTRY",
            ErrorId::BadVarArgs => "BAD_VAR_ARGS",
            ErrorId::NofentryArgs => "NOFENTRY_ARGS",
            ErrorId::DoubleArgs => "DOUBLE_ARGS",
            ErrorId::Args2long => "ARGS_2LONG",
            ErrorId::Argidx2big => "ARGIDX_2BIG",
            ErrorId::NoPtrStrct => "NO_PTR_STRCT",
            ErrorId::NosupDatArg => "NOSUP_DAT_ARG",
            ErrorId::BadHyphen => "BAD_HYPHEN",
            ErrorId::NoBtfField => "NO_BTF_FIELD",
            ErrorId::BadBtfTid => "BAD_BTF_TID",
            ErrorId::BadType4str => "BAD_TYPE4STR",
            ErrorId::NeedStringType => "NEED_STRING_TYPE",
            ErrorId::EventTooBig => "EVENT_TOO_BIG",
        }
    }

    /// The ID of a C name (`BAD_MAXACT`), if there is one.
    pub fn from_name(name: &str) -> Option<ErrorId> {
        ErrorId::ALL.iter().copied().find(|e| e.name() == name)
    }

    /// The text (6.12 and 6.1.192 spelling; see [`crate::Dialect::message`]).
    pub fn text(self) -> &'static str {
        match self {
            ErrorId::FileNotFound => "Failed to find the given file",
            ErrorId::NoRegularFile => "Not a regular file",
            ErrorId::BadRefcnt => "Invalid reference counter offset",
            ErrorId::RefcntOpenBrace => "Reference counter brace is not closed",
            ErrorId::BadRefcntSuffix => "Reference counter has wrong suffix",
            ErrorId::BadUprobeOffs => "Invalid uprobe offset",
            ErrorId::MaxactNoKprobe => "Maxactive is not for kprobe",
            ErrorId::BadMaxactType => "Maxactive is only for function exit",
            ErrorId::BadMaxact => "Invalid maxactive number",
            ErrorId::MaxactTooBig => "Maxactive is too big",
            ErrorId::BadProbeAddr => "Invalid probed address or symbol",
            ErrorId::NonUniqSymbol => "The symbol is not unique",
            ErrorId::BadRetprobe => "Retprobe address must be an function entry",
            ErrorId::NoTracepoint => "Tracepoint is not found",
            ErrorId::BadTpName => "Invalid character in tracepoint name",
            ErrorId::BadAddrSuffix => "Invalid probed address suffix",
            ErrorId::NoGroupName => "Group name is not specified",
            ErrorId::GroupTooLong => "Group name is too long",
            ErrorId::BadGroupName => "Group name must follow the same rules as C identifiers",
            ErrorId::NoEventName => "Event name is not specified",
            ErrorId::EventTooLong => "Event name is too long",
            ErrorId::BadEventName => "Event name must follow the same rules as C identifiers",
            ErrorId::EventExist => "Given group/event name is already used by another event",
            ErrorId::RetvalOnProbe => "$retval is not available on probe",
            ErrorId::NoRetval => "This function returns 'void' type",
            ErrorId::BadStackNum => "Invalid stack number",
            ErrorId::BadArgNum => "Invalid argument number",
            ErrorId::BadVar => "Invalid $-variable specified",
            ErrorId::BadRegName => "Invalid register name",
            ErrorId::BadMemAddr => "Invalid memory address",
            ErrorId::BadImm => "Invalid immediate value",
            ErrorId::ImmstrNoClose => "String is not closed with '\"'",
            ErrorId::FileOnKprobe => "File offset is not available with kprobe",
            ErrorId::BadFileOffs => "Invalid file offset value",
            ErrorId::SymOnUprobe => "Symbol is not available with uprobe",
            ErrorId::TooManyOps => "Dereference is too much nested",
            ErrorId::DerefNeedBrace => "Dereference needs a brace",
            ErrorId::BadDerefOffs => "Invalid dereference offset",
            ErrorId::DerefOpenBrace => "Dereference brace is not closed",
            ErrorId::CommCantDeref => "$comm can not be dereferenced",
            ErrorId::BadFetchArg => "Invalid fetch argument",
            ErrorId::ArrayNoClose => "Array is not closed",
            ErrorId::BadArraySuffix => "Array has wrong suffix",
            ErrorId::BadArrayNum => "Invalid array size",
            ErrorId::ArrayTooBig => "Array number is too big",
            ErrorId::BadType => "Unknown type is specified",
            ErrorId::BadString => "String accepts only memory argument",
            ErrorId::BadSymstring => "Symbol String doesn't accept data/userdata",
            ErrorId::BadBitfield => "Invalid bitfield",
            ErrorId::ArgNameTooLong => "Argument name is too long",
            ErrorId::NoArgName => "Argument name is not specified",
            ErrorId::BadArgName => "Argument name must follow the same rules as C identifiers",
            ErrorId::UsedArgName => "This argument name is already used",
            ErrorId::ArgTooLong => "Argument expression is too long",
            ErrorId::NoArgBody => "No argument expression",
            ErrorId::BadInsnBndry => "Probe point is not an instruction boundary",
            ErrorId::FailRegProbe => "Failed to register probe event",
            ErrorId::DiffProbeType => "Probe type is different from existing probe",
            ErrorId::DiffArgType => "Argument type or name is different from existing probe",
            ErrorId::SameProbe => "There is already the exact same probe event",
            ErrorId::NoEventInfo => "This requires both group and event name to attach",
            ErrorId::BadAttachEvent => "Attached event does not exist",
            ErrorId::BadAttachArg => "Attached event does not have this field",
            ErrorId::NoEpFilter => "No filter rule after 'if'",
            ErrorId::NosupBtfarg => "BTF is not available or not supported",
            ErrorId::NoBtfarg => "This variable is not found at this probe point",
            ErrorId::NoBtfEntry => "No BTF entry for this probe point",
            ErrorId::BadVarArgs => "$arg* must be an independent parameter without name etc.",
            ErrorId::NofentryArgs => "$arg* can be used only on function entry or exit",
            ErrorId::DoubleArgs => "$arg* can be used only once in the parameters",
            ErrorId::Args2long => "$arg* failed because the argument list is too long",
            ErrorId::Argidx2big => "$argN index is too big",
            ErrorId::NoPtrStrct => "This is not a pointer to union/structure.",
            ErrorId::NosupDatArg => "Non pointer structure/union argument is not supported.",
            ErrorId::BadHyphen => "Failed to parse single hyphen. Forgot '>'?",
            ErrorId::NoBtfField => "This field is not found.",
            ErrorId::BadBtfTid => "Failed to get BTF type info.",
            ErrorId::BadType4str => "This type does not fit for string.",
            ErrorId::NeedStringType => "$comm and immediate-string only accepts string type",
            ErrorId::EventTooBig => "Event too big (too many fields?)",
        }
    }
}
