//! Program section names (`SEC("...")`) as libbpf 1.1 reads them: `section_defs[]` in
//! `src/libbpf.c`, matched by `sec_def_matches` (first match in table order; `type+`
//! is `type` alone or `type/extras`, `type/` needs the slash, others are exact).

use serde::Serialize;

/// What a program section attaches to, as far as fevlint checks it against a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AttachKind {
    Kprobe,
    Kretprobe,
    KprobeMulti,
    Ksyscall,
    Kretsyscall,
    Uprobe,
    Usdt,
    Tracepoint,
    RawTracepoint,
    TpBtf,
    Fentry,
    Fexit,
    FmodRet,
    Freplace,
    Lsm,
    LsmCgroup,
    Iter,
    StructOps,
    /// Networking, cgroup, perf_event, syscall ... : nothing named in the kernel to check.
    Other,
}

/// One row of `section_defs[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionDef {
    pub prefix: &'static str,
    pub kind: AttachKind,
    pub sleepable: bool,
}

const fn def(prefix: &'static str, kind: AttachKind) -> SectionDef {
    SectionDef { prefix, kind, sleepable: false }
}
const fn sleepable(prefix: &'static str, kind: AttachKind) -> SectionDef {
    SectionDef { prefix, kind, sleepable: true }
}

use AttachKind as A;

/// libbpf 1.1.2 `section_defs[]`, in order.
pub const SECTION_DEFS: &[SectionDef] = &[
    def("socket", A::Other),
    def("sk_reuseport/migrate", A::Other),
    def("sk_reuseport", A::Other),
    def("kprobe+", A::Kprobe),
    def("uprobe+", A::Uprobe),
    sleepable("uprobe.s+", A::Uprobe),
    def("kretprobe+", A::Kretprobe),
    def("uretprobe+", A::Uprobe),
    sleepable("uretprobe.s+", A::Uprobe),
    def("kprobe.multi+", A::KprobeMulti),
    def("kretprobe.multi+", A::KprobeMulti),
    def("ksyscall+", A::Ksyscall),
    def("kretsyscall+", A::Kretsyscall),
    def("usdt+", A::Usdt),
    def("tc", A::Other),
    def("classifier", A::Other),
    def("action", A::Other),
    def("tracepoint+", A::Tracepoint),
    def("tp+", A::Tracepoint),
    def("raw_tracepoint+", A::RawTracepoint),
    def("raw_tp+", A::RawTracepoint),
    def("raw_tracepoint.w+", A::RawTracepoint),
    def("raw_tp.w+", A::RawTracepoint),
    def("tp_btf+", A::TpBtf),
    def("fentry+", A::Fentry),
    def("fmod_ret+", A::FmodRet),
    def("fexit+", A::Fexit),
    sleepable("fentry.s+", A::Fentry),
    sleepable("fmod_ret.s+", A::FmodRet),
    sleepable("fexit.s+", A::Fexit),
    def("freplace+", A::Freplace),
    def("lsm+", A::Lsm),
    sleepable("lsm.s+", A::Lsm),
    def("lsm_cgroup+", A::LsmCgroup),
    def("iter+", A::Iter),
    sleepable("iter.s+", A::Iter),
    sleepable("syscall", A::Other),
    def("xdp.frags/devmap", A::Other),
    def("xdp/devmap", A::Other),
    def("xdp.frags/cpumap", A::Other),
    def("xdp/cpumap", A::Other),
    def("xdp.frags", A::Other),
    def("xdp", A::Other),
    def("perf_event", A::Other),
    def("lwt_in", A::Other),
    def("lwt_out", A::Other),
    def("lwt_xmit", A::Other),
    def("lwt_seg6local", A::Other),
    def("sockops", A::Other),
    def("sk_skb/stream_parser", A::Other),
    def("sk_skb/stream_verdict", A::Other),
    def("sk_skb", A::Other),
    def("sk_msg", A::Other),
    def("lirc_mode2", A::Other),
    def("flow_dissector", A::Other),
    def("cgroup_skb/ingress", A::Other),
    def("cgroup_skb/egress", A::Other),
    def("cgroup/skb", A::Other),
    def("cgroup/sock_create", A::Other),
    def("cgroup/sock_release", A::Other),
    def("cgroup/sock", A::Other),
    def("cgroup/post_bind4", A::Other),
    def("cgroup/post_bind6", A::Other),
    def("cgroup/bind4", A::Other),
    def("cgroup/bind6", A::Other),
    def("cgroup/connect4", A::Other),
    def("cgroup/connect6", A::Other),
    def("cgroup/sendmsg4", A::Other),
    def("cgroup/sendmsg6", A::Other),
    def("cgroup/recvmsg4", A::Other),
    def("cgroup/recvmsg6", A::Other),
    def("cgroup/getpeername4", A::Other),
    def("cgroup/getpeername6", A::Other),
    def("cgroup/getsockname4", A::Other),
    def("cgroup/getsockname6", A::Other),
    def("cgroup/sysctl", A::Other),
    def("cgroup/getsockopt", A::Other),
    def("cgroup/setsockopt", A::Other),
    def("cgroup/dev", A::Other),
    def("struct_ops+", A::StructOps),
    def("sk_lookup", A::Other),
];

impl SectionDef {
    /// `sec_def_matches`.
    pub fn matches(&self, sec_name: &str) -> bool {
        let p = self.prefix;
        if p.ends_with('/') {
            return sec_name.starts_with(p);
        }
        if let Some(stem) = p.strip_suffix('+') {
            return match sec_name.strip_prefix(stem) {
                Some(rest) => rest.is_empty() || rest.starts_with('/'),
                None => false,
            };
        }
        sec_name == p
    }

    /// The program's target: what follows `prefix/` (`do_sys_open` of `kprobe/do_sys_open`).
    pub fn target<'s>(&self, sec_name: &'s str) -> Option<&'s str> {
        let stem = self.prefix.trim_end_matches(['+', '/']);
        sec_name.strip_prefix(stem)?.strip_prefix('/').filter(|t| !t.is_empty())
    }

    /// The libbpf definition a section name falls under (`find_sec_def`), if any.
    pub fn find(sec_name: &str) -> Option<&'static SectionDef> {
        SECTION_DEFS.iter().find(|d| d.matches(sec_name))
    }
}

/// Which naming convention marks a section's target as a placeholder the tool replaces
/// at run time (bcc's libbpf-tools: `kprobe/dummy_file_read`, `fentry/dummy_fentry`,
/// `kprobe/foo`). A name only reads as one; whether the kernels lack it is the caller's.
/// A target that is merely the program's own name (bcc's `kprobe/handle_entry`, attached
/// as a uprobe by name) is not one: `fentry/md_flush_request` in program
/// `md_flush_request` names a real function the same way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placeholder {
    /// A `_`-separated part of the name is `dummy` or `placeholder`.
    Dummy,
    /// The whole name is a metasyntactic word (`foo`, `bar`, `baz`, `qux`).
    Metasyntactic,
}

impl Placeholder {
    /// `target`, when its name follows a placeholder convention.
    pub fn of(target: &str) -> Option<Placeholder> {
        if target.split('_').any(|w| w.eq_ignore_ascii_case("dummy") || w.eq_ignore_ascii_case("placeholder")) {
            return Some(Placeholder::Dummy);
        }
        ["foo", "bar", "baz", "qux"].contains(&target).then_some(Placeholder::Metasyntactic)
    }

    /// How the convention reads, for a message.
    pub fn describe(self) -> &'static str {
        match self {
            Placeholder::Dummy => "named as a placeholder (`dummy`)",
            Placeholder::Metasyntactic => "a placeholder name",
        }
    }
}

/// The pattern of a `kprobe.multi/PATTERN` or `kretprobe.multi/PATTERN` section as
/// libbpf 1.1's `attach_kprobe_multi` reads it (`sscanf("%m[a-zA-Z0-9_.*?]")`: the
/// leading run of those characters); `None` when the run is empty (libbpf: "pattern is
/// invalid") or the section has no pattern (no auto-attach).
pub fn multi_pattern(target: &str) -> Option<&str> {
    let end = target
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '*' | '?')))
        .unwrap_or(target.len());
    Some(&target[..end]).filter(|p| !p.is_empty())
}

/// libbpf 1.1's `glob_match` (adapted from perf): `?` one character, `*` any run; no
/// classes, no escapes. Iterative, so a hostile pattern costs at most
/// `name.len() * pattern.len()` steps.
pub fn glob_match(name: &str, pattern: &str) -> bool {
    let (s, p) = (name.as_bytes(), pattern.as_bytes());
    let (mut i, mut j) = (0, 0);
    // Where the last `*` was, and the name position it is matched up to.
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if j < p.len() && (p[j] == b'?' || p[j] == s[i]) {
            i += 1;
            j += 1;
        } else if j < p.len() && p[j] == b'*' {
            star = Some((j, i));
            j += 1;
        } else if let Some((sj, si)) = star {
            j = sj + 1;
            i = si + 1;
            star = Some((sj, si + 1));
        } else {
            return false;
        }
    }
    p[j..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names_find_libbpf_definitions_in_table_order() {
        let k = SectionDef::find("kprobe/do_sys_open").expect("kprobe");
        assert_eq!((k.kind, k.target("kprobe/do_sys_open")), (A::Kprobe, Some("do_sys_open")));
        assert_eq!(SectionDef::find("kprobe").map(|d| d.kind), Some(A::Kprobe));
        assert_eq!(SectionDef::find("kprobe.multi/vfs_*").map(|d| d.kind), Some(A::KprobeMulti));
        assert_eq!(SectionDef::find("kprobex"), None);
        let tp = SectionDef::find("tp/sched/sched_switch").expect("tp");
        assert_eq!((tp.kind, tp.target("tp/sched/sched_switch")), (A::Tracepoint, Some("sched/sched_switch")));
        let s = SectionDef::find("fentry.s/do_unlinkat").expect("sleepable");
        assert!(s.sleepable && s.kind == A::Fentry);
        assert_eq!(s.target("fentry.s/do_unlinkat"), Some("do_unlinkat"));
        assert_eq!(SectionDef::find("xdp").map(|d| d.kind), Some(A::Other));
        assert_eq!(SectionDef::find(".text"), None);
    }

    #[test]
    fn placeholder_targets_by_convention() {
        use Placeholder as P;
        for (target, want) in [
            ("dummy_file_read", Some(P::Dummy)),
            ("dummy_kprobe", Some(P::Dummy)),
            ("dummy", Some(P::Dummy)),
            ("my_placeholder_fn", Some(P::Dummy)),
            ("foo", Some(P::Metasyntactic)),
            // Real names: `dummycon_init` is one word, `food` is not `foo`; a program's
            // own name is no convention (`md_flush_request` is real).
            ("dummycon_init", None),
            ("food", None),
            ("handle_entry", None),
            ("md_flush_request", None),
        ] {
            assert_eq!(Placeholder::of(target), want, "{target}");
        }
    }

    #[test]
    fn multi_patterns_and_globs_as_libbpf_reads_them() {
        assert_eq!(multi_pattern("vfs_rea*"), Some("vfs_rea*"));
        assert_eq!(multi_pattern("tcp_v?_conn*+0x10"), Some("tcp_v?_conn*"));
        assert_eq!(multi_pattern("+x"), None);
        for (name, pat, want) in [
            ("vfs_read", "vfs_rea*", true),
            ("vfs_read", "vfs_read", true),
            ("vfs_read", "vfs_rea", false),
            ("vfs_read", "vfs_rea?", true),
            ("vfs_readv", "vfs_rea?", false),
            ("vfs_readv", "*read*", true),
            ("vfs_write", "*read*", false),
            ("a", "**", true),
            ("", "*", true),
            ("", "?", false),
            ("abcabd", "*abd", true),
            ("abcabc", "*abd", false),
            ("x.cold", "*.cold", true),
        ] {
            assert_eq!(glob_match(name, pat), want, "{name} {pat}");
        }
        // No blow-up on a pattern built to backtrack.
        let name = "a".repeat(5000);
        assert!(!glob_match(&name, &format!("{}b", "*a".repeat(200))));
    }
}
