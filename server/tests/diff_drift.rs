//! `fevlint_diff` on real drift between the fixture kernels. Every offset asserted here
//! was read with `pahole -F btf -C NAME` on the same raw BTF (pahole 1.24).

use fevlint_diff::{Filter, FunctionChange, KernelDiff, MemberChange, Successor, TraceState, TypeChange, TypeDiff};
use fevlint_kernel::Kernel;
use std::path::PathBuf;
use std::sync::OnceLock;

fn kernel(name: &str) -> Kernel {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels").join(name);
    Kernel::open(&dir).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn k47() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| kernel("6.1.0-47-amd64"))
}
fn k56() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| kernel("6.1.0-56-amd64"))
}
fn k612() -> &'static Kernel {
    static K: OnceLock<Kernel> = OnceLock::new();
    K.get_or_init(|| kernel("6.12.117+deb12-amd64"))
}

fn full_47_56() -> &'static KernelDiff {
    static D: OnceLock<KernelDiff> = OnceLock::new();
    D.get_or_init(|| fevlint_diff::diff(k47(), k56(), &Filter::default()).expect("diff"))
}
fn full_56_612() -> &'static KernelDiff {
    static D: OnceLock<KernelDiff> = OnceLock::new();
    D.get_or_init(|| fevlint_diff::diff(k56(), k612(), &Filter::default()).expect("diff"))
}

fn ty<'d>(d: &'d KernelDiff, name: &str) -> &'d TypeDiff {
    d.types.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("{name} not in the diff"))
}

fn moved(t: &TypeDiff, path: &str) -> Option<(u64, u64)> {
    t.members().find_map(|m| match m {
        MemberChange::Moved { path: p, old_offset, new_offset, .. } if p == path => Some((*old_offset, *new_offset)),
        _ => None,
    })
}

fn function<'d>(d: &'d KernelDiff, name: &str) -> &'d [FunctionChange] {
    &d.functions.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("{name} not in the diff")).changes
}

#[test]
fn tcp_sock_grows_by_40_bytes_because_inet_connection_sock_does() {
    let d = full_47_56();
    let t = ty(d, "struct tcp_sock");
    assert_eq!(t.size_change(), Some((2240, 2280)));
    assert!(t.members().any(|m| matches!(m,
        MemberChange::Resized { path, old_size: 1400, new_size: 1440, .. } if path == "inet_conn")));
    // pahole: tcp_header_len 1400 → 1440, rcv_nxt 1424 → 1464, srtt_us 1632 → 1672.
    assert_eq!(moved(t, "tcp_header_len"), Some((1400, 1440)));
    assert_eq!(moved(t, "rcv_nxt"), Some((1424, 1464)));
    assert_eq!(moved(t, "srtt_us"), Some((1632, 1672)));
    assert_eq!(moved(t, "compressed_ack_rcv_nxt"), Some((1488, 1528)));
    // Every member after inet_conn moved by exactly 40 bytes; none was added or removed.
    for m in t.members() {
        match m {
            MemberChange::Moved { old_offset, new_offset, .. } => assert_eq!(new_offset - old_offset, 40, "{m:?}"),
            MemberChange::Resized { path, .. } => assert_eq!(path, "inet_conn"),
            other => panic!("unexpected {other:?}"),
        }
    }

    // The cause, reported once under the type that changed (pahole: a union of two
    // timer_lists at 1176 pushes icsk_rto from 1176 to 1216).
    let icsk = ty(d, "struct inet_connection_sock");
    assert_eq!(icsk.size_change(), Some((1400, 1440)));
    assert!(icsk.members().any(|m| matches!(m,
        MemberChange::Added { member } if member.path == "icsk_keepalive_timer" && member.offset == 1176 && member.size == 40)));
    assert_eq!(moved(icsk, "icsk_rto"), Some((1176, 1216)));
    assert_eq!(moved(icsk, "icsk_ca_ops"), Some((1192, 1232)));

    // The helpers the drift rules use.
    assert_eq!(
        fevlint_diff::member_moved(k47(), k56(), "struct tcp_sock", "srtt_us").expect("fixture kernels"),
        Some((1632, 1672))
    );
    assert_eq!(
        fevlint_diff::member_moved(k47(), k56(), "struct tcp_sock", "inet_conn").expect("fixture kernels"),
        None
    );
    assert_eq!(
        fevlint_diff::type_resized(k47(), k56(), "struct tcp_sock").expect("fixture kernels"),
        Some((2240, 2280))
    );
    let alone = fevlint_diff::diff_named_type(k47(), k56(), "struct tcp_sock").expect("fixture kernels");
    assert_eq!(&alone, t);
}

#[test]
fn struct_file_is_reshuffled_between_6_1_and_6_12() {
    let d = full_56_612();
    let t = ty(d, "struct file");
    // pahole: size 232 → 184; f_op 40 → 16, f_inode 32 → 40, f_path 16 → 64, f_count 56 → 0.
    assert_eq!(t.size_change(), Some((232, 184)));
    assert_eq!(moved(t, "f_op"), Some((40, 16)));
    assert_eq!(moved(t, "f_inode"), Some((32, 40)));
    assert_eq!(moved(t, "f_path"), Some((16, 64)));
    assert_eq!(moved(t, "f_count"), Some((56, 0)));
    // f_llist is inside an anonymous union in both: 0 → 152.
    assert_eq!(moved(t, "f_llist"), Some((0, 152)));
    assert!(t.members().any(|m| matches!(m, MemberChange::Removed { member } if member.path == "f_version")));
    assert!(t.members().any(|m| matches!(m,
        MemberChange::Retyped { path, old, new } if path == "f_owner" && old == "struct fown_struct" && new == "struct fown_struct *")));
    // Members of the named `struct path` are not repeated here …
    assert!(!t.members().any(|m| m.path().starts_with("f_path.")));
    // … but the helper answers for any path (pahole: struct path { mnt 0; dentry 8 }).
    assert_eq!(
        fevlint_diff::member_moved(k56(), k612(), "struct file", "f_path.dentry").expect("fixture kernels"),
        Some((24, 72))
    );
    assert_eq!(
        fevlint_diff::member_moved(k56(), k612(), "struct file", "f_op").expect("fixture kernels"),
        Some((40, 16))
    );
}

#[test]
fn noprof_renames_and_removed_functions() {
    let d = full_56_612();
    assert_eq!(
        function(d, "__kmalloc"),
        &[FunctionChange::Removed { successor: Some(Successor::Renamed { name: "__kmalloc_noprof".into() }) }]
    );
    assert_eq!(
        function(d, "kmem_cache_alloc"),
        &[FunctionChange::Removed { successor: Some(Successor::Renamed { name: "kmem_cache_alloc_noprof".into() }) }]
    );
    assert_eq!(function(d, "__kmalloc_noprof"), &[FunctionChange::Added { predecessor: Some("__kmalloc".into()) }]);
    // Gone without a successor the names tell (6.12 calls it __kmalloc_cache_noprof).
    assert_eq!(function(d, "kmalloc_trace"), &[FunctionChange::Removed { successor: None }]);
    // Only a clone is left.
    assert!(matches!(function(d, "__init_zone_device_page"),
        [FunctionChange::Removed { successor: Some(Successor::Clones { names }) }] if names == &["__init_zone_device_page.constprop.0"]));
    // A syscall layer gone while another form of it stays.
    assert_eq!(
        function(d, "__do_sys_sched_setattr"),
        &[FunctionChange::Removed { successor: Some(Successor::Alias { name: "__x64_sys_sched_setattr".into() }) }]
    );
    assert!(d.summary.functions_removed > 2000 && d.summary.functions_added > 8000, "{:?}", d.summary);
}

#[test]
fn parameters_moving_between_registers_and_the_stack() {
    let d = full_56_612();
    // optval became a 16-byte sockptr_t: it takes rcx:r8, and everything after shifts.
    let c = function(d, "__cgroup_bpf_run_filter_setsockopt");
    let has = |want: &FunctionChange| c.contains(want);
    assert!(
        has(&FunctionChange::ParamType {
            index: 3,
            name: Some("optval".into()),
            old: "char *".into(),
            new: "sockptr_t".into()
        }),
        "{c:?}"
    );
    assert!(has(&FunctionChange::ParamLocation {
        index: 3,
        name: Some("optval".into()),
        old: "rcx".into(),
        new: "rcx:r8".into()
    }));
    assert!(has(&FunctionChange::ParamLocation {
        index: 5,
        name: Some("kernel_optval".into()),
        old: "r9".into(),
        new: "stack+0".into()
    }));
    // Traceability and a return type.
    let c = function(d, "PageHuge");
    assert!(c.contains(&FunctionChange::Traceability {
        old: TraceState::Traceable { count: 1 },
        new: TraceState::NotTraceable
    }));
    assert!(c.contains(&FunctionChange::Return { old: "int".into(), new: "bool".into() }));
}

#[test]
fn filters_report_unchanged_names_and_refuse_unknown_ones() {
    let filter = Filter { functions: vec!["vfs_read".into()], types: vec!["struct path".into()] };
    let d = fevlint_diff::diff(k56(), k612(), &filter).expect("fixture kernels");
    assert_eq!(d.functions.len(), 1);
    assert!(d.functions[0].changes.is_empty(), "{:?}", d.functions[0]);
    assert_eq!(d.types.len(), 1);
    assert!(d.types[0].changes.is_empty());
    let e = fevlint_diff::diff(k56(), k612(), &Filter { functions: vec!["no_such_fn".into()], types: vec![] })
        .expect_err("must fail");
    assert_eq!(e.to_string(), "no function `no_such_fn` in 6.1.0-56-amd64 or 6.12.117+deb12-amd64");
    let e = fevlint_diff::diff_named_type(k56(), k612(), "struct no_such").expect_err("must fail");
    assert_eq!(
        e.to_string(),
        "no struct, union or typedef of one `struct no_such` in 6.1.0-56-amd64 or 6.12.117+deb12-amd64"
    );
    assert!(fevlint_diff::diff_named_type(k56(), k612(), "struct file *").is_err());
    // A bare name finds the struct.
    assert_eq!(fevlint_diff::diff_named_type(k56(), k612(), "file").expect("fixture kernels").name, "struct file");
}

#[test]
fn a_kernel_against_itself_has_no_differences() {
    let d = fevlint_diff::diff(k47(), k47(), &Filter::default()).expect("fixture kernels");
    assert!(d.functions.is_empty() && d.types.is_empty(), "{:?}", d.summary);
    assert!(d.summary.functions_compared > 40_000 && d.summary.types_compared > 7_000);
}

#[test]
fn summary_counts_agree_with_the_lists() {
    let d = full_47_56();
    let s = &d.summary;
    let removed = d.functions.iter().filter(|f| matches!(f.changes[..], [FunctionChange::Removed { .. }])).count();
    assert_eq!(s.functions_removed, removed);
    let resized = d.types.iter().filter(|t| t.changes.iter().any(|c| matches!(c, TypeChange::Size { .. }))).count();
    assert_eq!(s.types_resized, resized);
    // Deterministic order: sorted by name.
    assert!(d.functions.windows(2).all(|w| w[0].name < w[1].name));
}
