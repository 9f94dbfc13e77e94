//! The public model of a parsed line: kinds, names, fetch chains, types and spans, and
//! the version differences inside one stable series.

use fevlint_mainline::*;

fn probe(d: &Dialect, line: &str) -> Probe {
    match check_line(d, line) {
        Ok(Line::Probe(p)) => p,
        other => panic!("`{line}`: {other:?}"),
    }
}

fn logged(d: &Dialect, line: &str) -> KernelError {
    match check_line(d, line) {
        Err(Rejection::Logged(e)) => *e,
        other => panic!("`{line}`: {other:?}"),
    }
}

#[test]
fn kprobe_with_registers_derefs_and_types() {
    let d = Dialect::debian_6_1_192();
    let line = "p:myprobe do_sys_open dfd=%ax filename=+0(%si):string mode=+4($stack):u16";
    let p = probe(&d, line);
    assert_eq!(p.kind, ProbeKind::Kprobe);
    assert_eq!((p.group.as_str(), p.event.as_str()), ("kprobes", "myprobe"));
    assert!(!p.group_written && p.event_written);
    assert_eq!(p.place, Place::Symbol { module: None, name: "do_sys_open".into(), offset: 0, span: 10..21 });
    let names: Vec<&str> = p.args.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["dfd", "filename", "mode"]);
    assert_eq!(p.args[0].fetch, Fetch::Register { name: "ax".into() });
    let Fetch::Deref { offset: 0, user: false, inner, offset_span } = &p.args[1].fetch else {
        panic!("{:?}", p.args[1].fetch)
    };
    assert_eq!(**inner, Fetch::Register { name: "si".into() });
    assert_eq!(&line[offset_span.clone()], "0");
    assert_eq!(&line[p.args[1].body_span.clone()], "+0(%si)");
    // `-u16(`: the offset's digits, after the sign and the `u`.
    let line2 = "p:q vfs_read v=+8(-u16(%di)):u8";
    let q = probe(&d, line2);
    let Fetch::Deref { inner, offset_span, .. } = &q.args[0].fetch else { panic!() };
    assert_eq!(&line2[offset_span.clone()], "8");
    let Fetch::Deref { offset: -16, user: true, offset_span, .. } = &**inner else { panic!("{inner:?}") };
    assert_eq!(&line2[offset_span.clone()], "16");
    assert_eq!(p.args[1].store_type, "string");
    assert_eq!(p.args[2].ty.as_ref().map(|t| t.name.as_str()), Some("u16"));
    assert_eq!(&line[p.args[2].span.clone()], "mode=+4($stack):u16");
    assert_eq!(&line[p.args[2].ty.as_ref().map(|t| t.span.clone()).unwrap_or(0..0)], "u16");
    assert_eq!(p.args[0].store_type, "x64", "the default type is x<BITS_PER_LONG>");
}

#[test]
fn kretprobe_maxactive_and_auto_names() {
    let d = Dialect::debian_6_12_117();
    let p = probe(&d, "r16 vfs_read $retval");
    assert_eq!(p.kind, ProbeKind::Kretprobe);
    assert_eq!(p.maxactive, Some(16));
    assert_eq!(p.event, "r_vfs_read_0");
    assert_eq!(p.args[0].name, "arg1");
    let p = probe(&d, "p:grp/ev ext4:ext4_sync_file+0x10");
    assert_eq!(p.group, "grp");
    assert!(matches!(
        &p.place,
        Place::Symbol { module: Some(m), name, offset: 16, .. } if m == "ext4" && name == "ext4_sync_file"
    ));
}

#[test]
fn btf_member_paths_keep_their_spans() {
    let d = Dialect::debian_6_12_117();
    let line = "f:x vfs_read name=file->f_path.dentry->d_name.name:string";
    let p = probe(&d, line);
    assert_eq!(p.kind, ProbeKind::FprobeEntry);
    let Fetch::Btf { base, fields } = &p.args[0].fetch else { panic!("{:?}", p.args[0].fetch) };
    assert_eq!(base, "file");
    let got: Vec<(&str, bool, &str)> =
        fields.iter().map(|f| (f.name.as_str(), f.arrow, &line[f.span.clone()])).collect();
    assert_eq!(
        got,
        [("f_path", true, "f_path"), ("dentry", false, "dentry"), ("d_name", true, "d_name"), ("name", false, "name")]
    );
    // Without a kernel the BTF questions are assumptions, in the kernel's order.
    assert!(p.assumptions.iter().any(|a| matches!(a, Assumption::BtfArg { function, .. } if function == "vfs_read")));
    assert!(p.assumptions.iter().any(|a| matches!(a, Assumption::FtraceTarget { name, .. } if name == "vfs_read")));
}

#[test]
fn a_retval_argument_makes_an_fprobe_an_exit_probe() {
    let d = Dialect::debian_6_12_117();
    let p = probe(&d, "f vfs_read ret=$retval");
    assert_eq!(p.kind, ProbeKind::FprobeExit);
    assert_eq!(p.event, "vfs_read__exit");
}

#[test]
fn carets_map_back_through_tabs_and_runs_of_spaces() {
    let d = Dialect::debian_6_1_192();
    let line = "p  vfs_read\t\t v=$stack10000";
    let e = logged(&d, line);
    assert_eq!(e.id, ErrorId::BadStackNum);
    assert_eq!(e.command, "p vfs_read v=$stack10000");
    assert_eq!(e.caret, 13);
    assert_eq!(&line[e.byte..], "$stack10000");
    assert_eq!(
        e.render(),
        "trace_kprobe: error: Invalid stack number\n  Command: p vfs_read v=$stack10000\n                        ^\n"
    );
}

#[test]
fn the_dialect_moves_inside_6_1_y() {
    let old = Dialect::debian_6_1_170();
    let new = Dialect::debian_6_1_192();
    assert_eq!(logged(&old, "p vfs_read $nope").message, "Invalid $-valiable specified");
    assert_eq!(logged(&new, "p vfs_read $nope").message, "Invalid $-variable specified");
    // `\"` alone: 6.1.170 reads the opening quote as the closing one.
    assert!(check_line(&old, "p:a vfs_read s=\\\"").is_ok());
    assert_eq!(logged(&new, "p:a vfs_read s=\\\"").id, ErrorId::ImmstrNoClose);
    // The 3072-byte event limit came with a 2026 stable backport.
    let big = "p:b vfs_read a=+0(%ax):u64[64] b=+0(%ax):u64[64] c=+0(%ax):u64[64] \
               d=+0(%ax):u64[64] e=+0(%ax):u64[64] f=+0(%ax):u64[64] g=+0(%ax):u8";
    assert!(check_line(&old, big).is_ok());
    let e = logged(&new, big);
    assert_eq!((e.id, e.word), (ErrorId::EventTooBig, 8));
    assert!(!old.has_error(ErrorId::EventTooBig) && new.has_error(ErrorId::EventTooBig));
}

#[test]
fn fprobes_do_not_exist_on_6_1() {
    let d = Dialect::debian_6_1_192();
    assert!(!d.fprobe && !d.btf_args);
    assert!(matches!(check_line(&d, "f vfs_read"), Err(Rejection::Silent { errno: Errno::Einval, .. })));
    let d = Dialect::debian_6_12_117();
    assert!(d.fprobe && d.btf_args);
}

#[test]
fn files_see_earlier_lines() {
    let d = Dialect::debian_6_12_117();
    let text = "# two probe points on one event\n\
                p:grp/ev vfs_read a=%di\n\
                p:grp/ev vfs_write a=%di\n\
                p:grp/ev vfs_write a=%di\n\
                r:grp/ev vfs_read\n\
                -:grp/ev\n\
                r:grp/ev vfs_read\n";
    let lines = check_file(&d, &NoKernel, text);
    let ids: Vec<Option<ErrorId>> =
        lines.iter().map(|l| l.result.as_ref().err().and_then(|r| r.logged()).map(|e| e.id)).collect();
    assert_eq!(ids, [None, None, None, Some(ErrorId::SameProbe), Some(ErrorId::DiffProbeType), None, None, None]);
    assert_eq!(lines[1].start, 32);
}

#[test]
fn unmodelled_kinds_say_so() {
    let d = Dialect::debian_6_12_117();
    for l in ["e syscalls/sys_enter_openat", "p /bin/sh:10", "s:synth/x u64 a"] {
        assert!(matches!(check_line(&d, l), Err(Rejection::Unmodelled { .. })), "{l}");
    }
}

#[test]
fn dialects_come_from_readme_and_version() {
    let v = KernelVersion::parse("6.12.117+deb12-amd64").expect("version");
    assert_eq!(v, KernelVersion::new(6, 12, 117));
    let no_btf = readmes::DEBIAN_6_12_117_AMD64.replace("<argname>[->field", "<x>");
    let d = Dialect::new(v, &no_btf).expect("dialect");
    assert!(!d.btf_args);
    assert_eq!(
        logged(&d, "f vfs_read count").id,
        ErrorId::NosupBtfarg,
        "without CONFIG_PROBE_EVENTS_BTF_ARGS a bare name is NOSUP_BTFARG"
    );
    assert!(matches!(
        Dialect::new(KernelVersion::new(5, 15, 0), readmes::DEBIAN_6_1_192_AMD64),
        Err(DialectError::UnsupportedVersion(_))
    ));
}

#[test]
fn mainline_lines_are_recognised() {
    for l in ["p:a vfs_read", "r vfs_read", "f:x vfs_read", "t kfree", "-:a", "r10 x"] {
        assert!(is_mainline_line(l), "{l}");
    }
    for l in ["vfs_read(x64 file)", "__vfs_read(symbol read+40[0]+16)", "foo"] {
        assert!(!is_mainline_line(l), "{l}");
    }
}

#[test]
fn fetches_print_back_in_the_kernel_syntax() {
    let d = Dialect::debian_6_12_117();
    for (line, want) in [
        ("p vfs_read +8(+0(%di)):u32", "+8(+0(%di))"),
        ("p vfs_read -0x10(+u8($stack))", "-16(+u8($stack))"),
        ("f vfs_read file->f_path.dentry", "file->f_path.dentry"),
        ("p vfs_read @jiffies+8", "@jiffies+8"),
        ("p vfs_read \\\"hi\"", "\\\"hi\""),
    ] {
        let p = probe(&d, line);
        assert_eq!(p.args[0].fetch.to_string(), want, "{line}");
        // And what it prints parses back to itself.
        let again = probe(&d, &format!("p:x vfs_read {want}"));
        assert_eq!(again.args[0].fetch.to_string(), want, "{line}");
    }
}

#[test]
fn lines_longer_than_the_write_buffer_are_refused() {
    let d = Dialect::debian_6_12_117();
    let fits = format!("p:x vfs_read {}", "a".repeat(4094 - 13));
    assert_eq!(fits.len(), 4094);
    assert!(matches!(check_line(&d, &fits), Err(Rejection::Logged(_))), "parsed (and rejected by the parser)");
    let long = format!("{fits}a");
    assert!(matches!(check_line(&d, &long), Err(Rejection::Silent { errno: Errno::Einval, .. })));
}

#[test]
fn i386_has_its_own_registers_and_longs() {
    // From arch/x86/kernel/ptrace.c and BITS_PER_LONG = 32 (read, not yet run on a
    // real i386 kernel: the QEMU oracle boots amd64 images only).
    let d =
        Dialect::for_arch(Arch::I386, KernelVersion::new(6, 1, 192), readmes::DEBIAN_6_1_192_AMD64).expect("dialect");
    let p = probe(&d, "p:x vfs_read a=%ds b=+0(%ax):symbol");
    assert_eq!(p.args[0].store_type, "x32");
    assert_eq!(logged(&d, "p:x vfs_read a=%r8").id, ErrorId::BadRegName);
    let e = logged(&d, "p:x vfs_read a=@0x100000000");
    assert_eq!((e.id, e.errno), (ErrorId::BadMemAddr, Errno::Erange));
    assert!(check_line(&Dialect::debian_6_1_192(), "p:x vfs_read a=@0x100000000").is_ok());
}

/// The version and arch a fixture kernel's `.config` header names
/// (`# Linux/x86 6.1.192 Kernel Configuration`) and whether it is 64-bit.
fn fixture_kernel(dir: &str) -> (KernelVersion, bool) {
    let path = format!("{}/../../../fixtures/kernels/{dir}/config.zst", env!("CARGO_MANIFEST_DIR"));
    let config = zstd::decode_all(std::fs::read(&path).expect("config").as_slice()).expect("zstd");
    let text = String::from_utf8_lossy(&config);
    let header = text.lines().find(|l| l.starts_with("# Linux/")).expect("header");
    let version = KernelVersion::parse(header.split_whitespace().nth(2).expect("version")).expect("version");
    (version, text.lines().any(|l| l == "CONFIG_64BIT=y"))
}

#[test]
fn every_fixture_kernel_has_its_dialect_or_says_why_not() {
    let presets = [
        ("6.1.0-47-amd64", Dialect::debian_6_1_170()),
        ("6.1.0-50-686-pae", Dialect::debian_6_1_176_i386()),
        ("6.1.0-56-amd64", Dialect::debian_6_1_192()),
        ("6.12.117+deb12-amd64", Dialect::debian_6_12_117()),
    ];
    for (dir, d) in &presets {
        let (version, is64) = fixture_kernel(dir);
        assert_eq!(d.version, version, "{dir}");
        assert_eq!(d.arch.bits() == 64, is64, "{dir}");
    }
    // 6.1.176 sits between the backports: EVENT_TOO_BIG yes, the "valiable" fix no.
    let d = Dialect::debian_6_1_176_i386();
    assert!(d.has_error(ErrorId::EventTooBig) && d.bad_var_typo && d.empty_immstr_check);
    let (v, _) = fixture_kernel("6.18.44-fc-v769");
    assert!(matches!(Dialect::new(v, readmes::DEBIAN_6_12_117_AMD64), Err(DialectError::UnsupportedVersion(_))));
}
