//! Which dialect a kernel speaks: chosen from its tracing README (`readme_msg`, what
//! `/sys/kernel/tracing/README` shows and what the image embeds) and its version with
//! the stable sublevel, never from major.minor alone.

use crate::errors::ErrorId;

/// The parser's code generation: the shape of `trace_probe.c` being transcribed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Generation {
    /// 6.1.y: no fprobe, no BTF, `MAXACT_NO_KPROBE`, `$argN` only at function entry.
    Linux6_1,
    /// 6.12.y: fprobe/tprobe, BTF arguments, `$argN` on return probes, `%pd`.
    Linux6_12,
}

/// A kernel release, `6.1.192` (the Debian ABI name `6.1.0-56` is not a release).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct KernelVersion {
    pub major: u32,
    pub minor: u32,
    pub sublevel: u32,
}

impl KernelVersion {
    pub fn new(major: u32, minor: u32, sublevel: u32) -> KernelVersion {
        KernelVersion { major, minor, sublevel }
    }

    /// Parse `6.12.117` (anything after the third number, like `+deb12-amd64`, is ignored).
    pub fn parse(s: &str) -> Option<KernelVersion> {
        let mut it = s.split(|c: char| !c.is_ascii_digit());
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let sublevel = it.next().and_then(|x| x.parse().ok()).unwrap_or(0);
        Some(KernelVersion::new(major, minor, sublevel))
    }
}

impl std::fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.sublevel)
    }
}

/// Why a dialect could not be chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialectError {
    /// Only the 6.1.y and 6.12.y parsers are transcribed.
    UnsupportedVersion(KernelVersion),
    /// The README text has no probe-event section (no `kprobe_events`).
    NoProbeEvents,
}

impl std::fmt::Display for DialectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DialectError::UnsupportedVersion(v) => {
                write!(f, "kernel {v}: only the 6.1.y and 6.12.y probe parsers are modelled")
            }
            DialectError::NoProbeEvents => {
                write!(f, "the tracing README has no probe-event section (CONFIG_KPROBE_EVENTS off?)")
            }
        }
    }
}

impl std::error::Error for DialectError {}

/// Architecture facts the parser needs (`regs_query_register_offset`, `THREAD_SIZE`,
/// `BITS_PER_LONG`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arch {
    X86_64,
    /// 32-bit x86 (`i386`, Debian's `686-pae`).
    I386,
}

impl Arch {
    /// `regoffset_table` of `arch/x86/kernel/ptrace.c`.
    pub fn registers(self) -> &'static [&'static str] {
        match self {
            Arch::X86_64 => &[
                "r15", "r14", "r13", "r12", "r11", "r10", "r9", "r8", "bx", "cx", "dx", "si", "di", "bp", "ax",
                "orig_ax", "ip", "cs", "flags", "sp", "ss",
            ],
            Arch::I386 => &[
                "bx", "cx", "dx", "si", "di", "bp", "ax", "ds", "es", "fs", "gs", "orig_ax", "ip", "cs", "flags", "sp",
                "ss",
            ],
        }
    }

    /// `PARAM_MAX_STACK` = `THREAD_SIZE / sizeof(long)` (16 KiB stacks on x86_64, 8 KiB
    /// on i386).
    pub fn param_max_stack(self) -> u64 {
        match self {
            Arch::X86_64 => 16384 / 8,
            Arch::I386 => 8192 / 4,
        }
    }

    /// `BITS_PER_LONG`.
    pub fn bits(self) -> u32 {
        match self {
            Arch::X86_64 => 64,
            Arch::I386 => 32,
        }
    }
}

/// What one kernel's probe parser accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialect {
    pub version: KernelVersion,
    pub generation: Generation,
    pub arch: Arch,
    /// README has the `f[:[<group>/][<event>]]` line (CONFIG_FPROBE_EVENTS).
    pub fprobe: bool,
    /// README lists `$arg<N>` (CONFIG_HAVE_FUNCTION_ARG_ACCESS_API).
    pub arg_access: bool,
    /// README lists `<argname>[->field...]` (CONFIG_PROBE_EVENTS_BTF_ARGS).
    pub btf_args: bool,
    /// README lists `%return` in the kretprobe place.
    pub return_suffix: bool,
    /// `MAX_PROBE_EVENT_SIZE` check (`EVENT_TOO_BIG`), a 2026 stable backport.
    pub event_size_limit: bool,
    /// `\"` with nothing after it is `IMMSTR_NO_CLOSE` (older 6.1.y read `str[-1]`).
    pub empty_immstr_check: bool,
    /// `BAD_VAR` is spelt "valiable" (6.1.y before the fix).
    pub bad_var_typo: bool,
    /// CONFIG_MODULES: an unknown tracepoint is kept as a stub for a future module.
    pub modules: bool,
    /// What `%pd`/`%pD` expand to: `offsetof(struct dentry, d_name.name)` and
    /// `offsetof(struct file, f_path.dentry)` of the kernel build (x86_64 Debian 6.12.117:
    /// 0x28 and 0x48, as its `dynamic_events` shows the rewritten arguments).
    pub dentry_offsets: (u32, u32),
    /// The README text the flags came from.
    pub readme: String,
}

/// README texts (the probe section of `/sys/kernel/tracing/README`) of the kernels the
/// fixtures hold, read from the booted Debian kernels.
pub mod readmes {
    /// Debian `linux-image-6.1.0-56-amd64` (6.1.192-2).
    pub const DEBIAN_6_1_192_AMD64: &str = include_str!("../data/readme-6.1.192-amd64.txt");
    /// Debian `linux-image-6.12.117+deb12-amd64` (6.12.117-1~deb12u1).
    pub const DEBIAN_6_12_117_AMD64: &str = include_str!("../data/readme-6.12.117-amd64.txt");
}

/// The tracing README (`readme_msg`) inside an uncompressed kernel image (a vmlinux, or
/// the decompressed payload of a bzImage): the NUL-terminated string that starts with
/// `tracing mini-HOWTO:`. Byte-identical to what `/sys/kernel/tracing/README` shows.
pub fn readme_from_image(image: &[u8]) -> Option<&str> {
    const START: &[u8] = b"tracing mini-HOWTO:\n";
    let at = image.windows(START.len()).position(|w| w == START)?;
    let len = image[at..].iter().position(|&c| c == 0)?;
    std::str::from_utf8(&image[at..at + len]).ok()
}

impl Dialect {
    /// The x86_64 dialect of `version` whose README is `readme`.
    pub fn new(version: KernelVersion, readme: &str) -> Result<Dialect, DialectError> {
        Dialect::for_arch(Arch::X86_64, version, readme)
    }

    /// The dialect of `version` on `arch` whose README is `readme`.
    pub fn for_arch(arch: Arch, version: KernelVersion, readme: &str) -> Result<Dialect, DialectError> {
        let generation = match (version.major, version.minor) {
            (6, 1) => Generation::Linux6_1,
            (6, 12) => Generation::Linux6_12,
            _ => return Err(DialectError::UnsupportedVersion(version)),
        };
        if !readme.contains("kprobe_events") && !readme.contains("place: [<module>:]") {
            return Err(DialectError::NoProbeEvents);
        }
        let g61 = generation == Generation::Linux6_1;
        // Stable backports into 6.1.y, from Debian's sources: 6.1.170 has none of them;
        // 6.1.176 has the EVENT_TOO_BIG check and the empty-`\"` check but still spells
        // BAD_VAR "valiable"; 6.1.187, 6.1.190 and 6.1.192 have all three. Sublevels
        // between those read are taken as the older one (171-175 as 170, 177-186 as 176).
        let sub = version.sublevel;
        let backports = !g61 || sub >= 176;
        let typo_fixed = !g61 || sub >= 187;
        Ok(Dialect {
            version,
            generation,
            arch,
            fprobe: !g61 && readme.contains("f[:[<group>/][<event>]]"),
            arg_access: readme.contains("$arg<N>"),
            btf_args: !g61 && readme.contains("<argname>[->field"),
            return_suffix: readme.contains("%return"),
            event_size_limit: backports,
            empty_immstr_check: backports,
            bad_var_typo: !typo_fixed,
            modules: true,
            dentry_offsets: (0x28, 0x48),
            readme: readme.to_owned(),
        })
    }

    /// Debian bookworm's 6.1.0-56-amd64 (6.1.192).
    pub fn debian_6_1_192() -> Dialect {
        Dialect::new(KernelVersion::new(6, 1, 192), readmes::DEBIAN_6_1_192_AMD64)
            .unwrap_or_else(|e| unreachable!("bundled README: {e}"))
    }

    /// Debian bookworm's 6.1.0-47-amd64 (6.1.170; same README as 6.1.192).
    pub fn debian_6_1_170() -> Dialect {
        Dialect::new(KernelVersion::new(6, 1, 170), readmes::DEBIAN_6_1_192_AMD64)
            .unwrap_or_else(|e| unreachable!("bundled README: {e}"))
    }

    /// Debian bookworm's 6.1.0-50-686-pae (6.1.176, i386). Its README is taken to be
    /// 6.1.192's: `readme_msg` is the same text in 6.1.170 and 6.1.192, and the config
    /// switches it depends on (KPROBE_EVENTS, UPROBE_EVENTS, HIST_TRIGGERS,
    /// HAVE_FUNCTION_ARG_ACCESS_API) are set alike in both configs. Not booted (the QEMU
    /// oracle runs amd64 images only).
    pub fn debian_6_1_176_i386() -> Dialect {
        Dialect::for_arch(Arch::I386, KernelVersion::new(6, 1, 176), readmes::DEBIAN_6_1_192_AMD64)
            .unwrap_or_else(|e| unreachable!("bundled README: {e}"))
    }

    /// Debian bookworm's 6.12.117+deb12-amd64.
    pub fn debian_6_12_117() -> Dialect {
        Dialect::new(KernelVersion::new(6, 12, 117), readmes::DEBIAN_6_12_117_AMD64)
            .unwrap_or_else(|e| unreachable!("bundled README: {e}"))
    }

    /// Whether this kernel's `ERRORS` table has `id`.
    pub fn has_error(&self, id: ErrorId) -> bool {
        use ErrorId::*;
        match self.generation {
            Generation::Linux6_1 => match id {
                BadMaxactType | NoTracepoint | BadTpName | NoRetval | NosupBtfarg | NoBtfarg | NoBtfEntry
                | BadVarArgs | NofentryArgs | DoubleArgs | Args2long | Argidx2big | NoPtrStrct | NosupDatArg
                | BadHyphen | NoBtfField | BadBtfTid | BadType4str | NeedStringType => false,
                EventTooBig => self.event_size_limit,
                _ => true,
            },
            Generation::Linux6_12 => id != MaxactNoKprobe,
        }
    }

    /// The text this kernel prints for `id`.
    pub fn message(&self, id: ErrorId) -> &'static str {
        if id == ErrorId::BadVar && self.bad_var_typo {
            return "Invalid $-valiable specified";
        }
        id.text()
    }

    /// The README gate of the ftrace selftests: does the README contain `needle`?
    pub fn readme_has(&self, needle: &str) -> bool {
        self.readme.contains(needle)
    }
}
