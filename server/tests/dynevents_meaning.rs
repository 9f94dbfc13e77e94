//! What `*.dynevents` arguments mean on a kernel, beyond the kernel's own verdict (issue
//! 25): reads past the end of a family's base struct (`struct sockaddr`), typed `t:`
//! probes on bare tracepoints, BTF-named arguments, saved registers of syscall wrappers,
//! and no finding at all on generated reads that stay inside their structs.
//!
//! With `FEVLINT_REAL_TOOLS=1`, one boot of Debian's 6.12 under QEMU (TCG, about 15 s on
//! this 2-core machine) judges the claims about what the kernel accepts and records: the
//! typed `t:` lines fevlint calls clean are accepted, their `$argN`+offset form records
//! what the BTF-named form records, and kernel fetches (`+0`, `:string`) of user
//! pointers record what the user fetches (`+u0`, `:ustring`) record.

use fevlint_check::diagnostic::Diagnostic;
use fevlint_check::dynevents;
use fevlint_kernel::Kernel;
use fevlint_types::layout;
use fevlint_types::model::{Type, TypeRef, TypeSource};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kernel(name: &str) -> Kernel {
    Kernel::open(&root().join("fixtures/kernels").join(name)).expect("fixture kernel")
}

fn line_of(text: &str, d: &Diagnostic) -> usize {
    text[..d.span.start].matches('\n').count() + 1
}

fn show(text: &str, found: &[Diagnostic]) -> String {
    found.iter().map(|d| format!("{}:{} {}\n", line_of(text, d), d.code, d.message)).collect()
}

/// auditbeat's `tcp6_connect_in`: `uaddr` is a `struct sockaddr *` the caller fills as a
/// `sockaddr_in6`. Offset 16 is past `struct sockaddr`; it was reported as
/// `ifru_map.base_addr` of an unrelated union (`struct ifreq`'s `ifr_ifru`).
#[test]
fn a_read_past_a_family_base_names_the_structs_it_fits() {
    let text = "p:kprobes/tcp6_connect_in tcp_v6_connect sock=%di size=%dx af=+0(%si):u16 \
                addra=+8(%si):u64 addrb=+16(%si):u64 port=+2(%si):u16\n";
    for name in ["6.12.117+deb12-amd64", "6.1.0-56-amd64"] {
        let k = kernel(name);
        let found = dynevents::check(text, &[&k]);
        assert_eq!(found.len(), 1, "{name}: {}", show(text, &found));
        let d = &found[0];
        assert_eq!(d.code, "T407", "{name}: {}", show(text, &found));
        assert_eq!(&text[d.span.start..d.span.end], "16");
        assert!(
            d.message.starts_with(
                "offset 16 is past the end of `struct sockaddr` (16 bytes): it fits `struct sockaddr_in6` (8 bytes into `sin6_addr`)"
            ),
            "{name}: {}",
            d.message
        );
        assert!(!d.message.contains("union") && !d.message.contains("ifru"), "{}", d.message);
    }
    // The same read in a function event: the same structs, no size mismatch against a
    // member of a guessed container.
    let dir = std::env::temp_dir().join(format!("fevlint-family-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("t.fev"), "tcp_v6_connect(NULL, u64 addrb+16[0])\n").expect("script");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["check", "--kernel"])
        .arg(root().join("fixtures/kernels/6.12.117+deb12-amd64"))
        .arg("t.fev")
        .current_dir(&dir)
        .output()
        .expect("fevlint");
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.contains(
            "past the end of `struct sockaddr` (16 bytes): it fits `struct sockaddr_in6` (8 bytes into `sin6_addr`)"
        ),
        "{out}"
    );
    assert!(!out.contains("T401") && !out.contains("ifru"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
    // An embedding struct is still read on (`tcp_sk(sk)`), a union is not a container.
    let text = "p:kprobes/cwnd tcp_retransmit_skb cwnd=+1500(%di):u32\n";
    let found = dynevents::check(text, &[&kernel("6.12.117+deb12-amd64")]);
    assert!(
        found
            .iter()
            .any(|d| d.code == "T407" && d.message.contains("`snd_cwnd` of `struct tcp_sock`, which embeds it")),
        "{}",
        show(text, &found)
    );
}

/// The members a generated read may take: scalars and pointers inside `ty`, through
/// nested structs and unions (every union alternative), up to `depth`.
fn leaves(types: &dyn TypeSource, ty: TypeRef, base: u64, depth: u32, out: &mut Vec<(u64, u64, bool)>) {
    let Ok((_, t)) = layout::strip(types, ty) else { return };
    let (Type::Struct(c) | Type::Union(c)) = t else { return };
    for m in c.members.iter() {
        if m.bitfield_size != 0 || m.bit_offset % 8 != 0 {
            continue;
        }
        let at = base + m.bit_offset / 8;
        match layout::strip(types, m.ty).map(|(_, t)| t) {
            Ok(Type::Int { size, .. } | Type::Enum { size, .. }) if matches!(size, 1 | 2 | 4 | 8) => {
                out.push((at, u64::from(size), false));
            }
            Ok(Type::Pointer { .. }) => out.push((at, 8, true)),
            Ok(Type::Struct(_) | Type::Union(_)) if depth > 0 => leaves(types, m.ty, at, depth - 1, out),
            _ => {}
        }
    }
}

/// Reads that stay inside the struct a parameter points to, one line per function:
/// the member at each offset with its own size. None of them may get a type finding.
fn in_bounds_lines(k: &Kernel, functions: usize) -> (String, usize) {
    let types = k.types().expect("BTF");
    let mut names = types.function_names().expect("names");
    names.sort();
    names.dedup();
    let (mut text, mut reads, mut lines) = (String::new(), 0, 0);
    // Every 7th name: a spread over the whole kernel, the same on every run.
    for name in names.iter().step_by(7) {
        if lines == functions {
            break;
        }
        let Ok(f) = k.function(name) else { continue };
        let Some(info) = f.prototypes.first() else { continue };
        let Some(p) = info.proto.params.first() else { continue };
        let Ok((_, Type::Pointer { target })) = layout::strip(types, p.ty) else { continue };
        let mut found = Vec::new();
        leaves(types, target, 0, 2, &mut found);
        if found.is_empty() {
            continue;
        }
        let step = found.len().div_ceil(10).max(1);
        let args: Vec<String> = found
            .iter()
            .step_by(step)
            .take(10)
            .enumerate()
            .map(|(i, (at, size, ptr))| {
                let ty = if *ptr { "x64".to_owned() } else { format!("u{}", size * 8) };
                format!("a{i}=+{at}($arg1):{ty}")
            })
            .collect();
        reads += args.len();
        lines += 1;
        text.push_str(&format!("p:gen/g{lines} {name} {}\n", args.join(" ")));
    }
    (text, reads)
}

#[test]
fn generated_in_bounds_reads_get_no_type_finding() {
    for name in ["6.12.117+deb12-amd64", "6.1.0-56-amd64"] {
        let k = kernel(name);
        let (text, reads) = in_bounds_lines(&k, 400);
        let found = dynevents::check(&text, &[&k]);
        let refused: std::collections::HashSet<usize> =
            found.iter().filter(|d| d.code == "S001").map(|d| line_of(&text, d)).collect();
        let accepted = text.lines().count() - refused.len();
        assert!(accepted >= 200 && reads >= 2000, "{name}: {accepted} lines accepted, {reads} reads");
        let typed: Vec<&Diagnostic> = found.iter().filter(|d| d.code.starts_with('T')).collect();
        assert!(
            typed.is_empty(),
            "{name}: {} findings on in-bounds reads:\n{}",
            typed.len(),
            typed
                .iter()
                .take(20)
                .map(|d| format!("{} {}: {}", text.lines().nth(line_of(&text, d) - 1).unwrap_or(""), d.code, d.message))
                .collect::<Vec<_>>()
                .join("\n")
        );
        eprintln!("{name}: {accepted} generated lines accepted, {reads} reads, no type finding");
    }
}

/// `t:` probes attach to bare tracepoints (`DECLARE_TRACE` without a trace event, which
/// only modules could hook before tprobes): their arguments are typed from the
/// tracepoint's stub (`__probestub_pelt_cfs_tp(void *__data, struct cfs_rq *cfs_rq)`,
/// the parameters the `btf_trace_*` typedef carries unnamed), so `$argN`, offsets and
/// BTF names are checked as for `f:`.
const TYPED_T: &str =
    "t:tp/cfs pelt_cfs_tp util=cfs_rq->avg.util_avg:u64 w=+8($arg1):u32 far=+99999($arg1):u32 z=+0(+8($arg1)):u64\n\
                       t:tp/nr sched_update_nr_running_tp change=$arg2:s32 q=+4($arg1):u64 r=rq->nr_running:u16\n\
                       t:tp/ou sched_overutilized_tp o=overutilized:u8 bad=rd->nosuch\n\
                       f:fp/pos vfs_read pos=file->f_pos:u32\n";

#[test]
fn tprobe_arguments_are_typed_from_the_tracepoint() {
    let k = kernel("6.12.117+deb12-amd64");
    let found = dynevents::check(TYPED_T, &[&k]);
    let got: Vec<(usize, &str, String)> =
        found.iter().map(|d| (line_of(TYPED_T, d), d.code, d.message.to_string())).collect();
    let want: Vec<(usize, &str, &str)> = vec![
        (1, "T404", "offset 99999 is past the end of `struct cfs_rq` (512 bytes)"),
        (1, "T405", "`+0(…)` dereferences `cfs_rq->load.inv_weight`, which is a `u32`, not a pointer"),
        (2, "T401", "`:u64` records 8 bytes, but `rq->nr_running` is a `unsigned int` of 4 bytes"),
        (2, "T401", "`:u16` records 2 bytes, but `rq->nr_running` is a `unsigned int` of 4 bytes"),
        (3, "S001", "the kernel rejects this line: This field is not found."),
        (4, "T401", "`:u32` records 4 bytes, but `file->f_pos` is a `loff_t` of 8 bytes"),
    ];
    assert_eq!(got.len(), want.len(), "{}", show(TYPED_T, &found));
    for ((l, c, m), (wl, wc, wm)) in got.iter().zip(&want) {
        assert_eq!((*l, *c), (*wl, *wc), "{}", show(TYPED_T, &found));
        assert_eq!(m, wm);
    }
    // The first line's `util`, `w` (`cfs_rq->load.inv_weight`) are what they say.
    let hover = dynevents::describe_at(TYPED_T, TYPED_T.find("w=+8").expect("w"), &[&k]).expect("hover");
    assert!(hover.1.contains("`cfs_rq->load.inv_weight` (`u32`)"), "{}", hover.1);
    let hover = dynevents::describe_at(TYPED_T, TYPED_T.find("util=").expect("util"), &[&k]).expect("hover");
    assert!(hover.1.contains("- `->avg` at +") && hover.1.contains("of `struct cfs_rq`"), "{}", hover.1);
    assert!(hover.1.contains("- `.util_avg` at +") && hover.1.contains("of `struct sched_avg`"), "{}", hover.1);
}

/// auditbeat's syscall probes read the syscall's arguments from the wrapper's saved
/// registers (`+0x70(%di)` is `regs->di`, an `unsigned long` holding `filename`):
/// dereferencing one, or reading its low bytes, is not a type error.
#[test]
fn saved_registers_hold_pointers_and_narrower_arguments() {
    let text = "p:sys/open __x64_sys_openat path=+0(+0x68(%di)):string upath=+0(+0x68(%di)):ustring \
                c=+u0(+0x68(%di)):u8 flags=+0x60(%di):x32\n\
                p:sys/exec __x64_sys_execve path=+0(+0x70(%di)):string\n";
    for name in ["6.12.117+deb12-amd64", "6.1.0-56-amd64"] {
        let found = dynevents::check(text, &[&kernel(name)]);
        assert!(found.is_empty(), "{name}: {}", show(text, &found));
    }
    // The register itself is still not a string.
    let text = "p:sys/open __x64_sys_openat path=+0x68(%di):string\n";
    let found = dynevents::check(text, &[&kernel("6.12.117+deb12-amd64")]);
    assert!(found.iter().any(|d| d.code == "T402"), "{}", show(text, &found));
}

/// The reverse of auditbeat's habit is the real mistake: a user fetch (`+u`, `:ustring`)
/// of kernel memory, which the user accessors refuse (T408).
const KERNEL_MEMORY: &str =
    "p:u/kk __x64_sys_openat f=+u0x68(%di):x64 g=+0x68(%di):x64 r=+0($stack):ustring j=+u0(@jiffies):u64\n";

#[test]
fn user_fetches_of_kernel_memory_are_reported_with_their_fix() {
    let k = kernel("6.12.117+deb12-amd64");
    let found = dynevents::check(KERNEL_MEMORY, &[&k]);
    let got: Vec<(&str, &str)> = found.iter().map(|d| (d.code, &KERNEL_MEMORY[d.span.start..d.span.end])).collect();
    assert_eq!(got, [("T408", "u0x68"), ("T408", "ustring"), ("T408", "u0")], "{}", show(KERNEL_MEMORY, &found));
    assert_eq!(
        &*found[0].message,
        "`+u…(…)` reads user memory, but `regs` (`struct pt_regs *`) points to the saved registers on the kernel stack; the kernel records 0"
    );
    assert_eq!(
        &*found[1].message,
        "`:ustring` reads user memory, but `$stack` is the kernel stack; the kernel records `(fault)`"
    );
    let whole = fevlint_syntax::Span::new(0, KERNEL_MEMORY.len());
    let fixes = dynevents::user_fetch_fixes(KERNEL_MEMORY, whole, &[&k]);
    let texts: Vec<&str> = fixes.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(texts, ["0x68", "string", "0"]);
    // The user fetches of user memory and the kernel fetches of anything stay quiet.
    let quiet = "p:u/ok do_sys_openat2 p=+0(%si):ustring c=+u0(%si):u8 k=+0(%dx):u64\n";
    assert!(dynevents::check(quiet, &[&k]).is_empty());
}

// ---------------------------------------------------------------------------------
// Under QEMU.

fn real_tools() -> bool {
    if !fevlint_testkit::real_tools("QEMU and Debian's 6.12 image") {
        return false;
    }
    for (tool, package) in [("qemu-system-x86_64", "qemu-system-x86"), ("busybox", "busybox-static"), ("cpio", "cpio")]
    {
        fevlint_testkit::require_tool(tool, package);
    }
    true
}

/// `name=value` pairs of a trace line, quotes dropped.
fn values(line: &str) -> Vec<(String, String)> {
    let body = line.split_once(") ").map_or(line, |(_, b)| b);
    let body = body.split_once(": ").map_or(body, |(_, b)| b);
    body.split_whitespace()
        .filter_map(|w| w.split_once('='))
        .map(|(n, v)| (n.to_owned(), v.trim_matches('"').to_owned()))
        .collect()
}

#[test]
fn the_real_6_12_kernel_accepts_typed_tprobes_and_reads_user_memory_with_kernel_fetches() {
    if !real_tools() {
        return;
    }
    let k = kernel("6.12.117+deb12-amd64");
    // Typed tprobes: each line twice, through BTF names and through fevlint's `$argN` and
    // offsets for the same members; both clean for fevlint.
    let types = k.types().expect("BTF");
    // `struct rq` as the stub's parameter has it (BTF holds more than one `struct rq`).
    let stub = k.function("__probestub_sched_update_nr_running_tp").expect("stub");
    let param = stub.prototypes[0].proto.params[1].ty;
    let Ok((_, Type::Pointer { target: rq })) = layout::strip(types, param) else { panic!("rq is a pointer") };
    let off = |path: &str| layout::resolve_member(types, rq, path).expect("rq").expect(path).offset;
    let tprobes = format!(
        "t:tp/tnr sched_update_nr_running_tp change=change:s32 nr=rq->nr_running:u32 cpu=rq->cpu:s32\n\
         p:kp/knr __probestub_sched_update_nr_running_tp change=$arg3:s32 nr=+{}(%si):u32 cpu=+{}(%si):s32\n",
        off("nr_running"),
        off("cpu")
    );
    let user = "p:u/k do_sys_openat2 path=+0(%si):string c=+0(%si):u8\n\
                p:u/u do_sys_openat2 path=+0(%si):ustring c=+u0(%si):u8\n\
                p:u/sk __x64_sys_openat path=+0(+0x68(%di)):string c=+0(+0x68(%di)):u8\n\
                p:u/su __x64_sys_openat path=+u0(+0x68(%di)):string c=+u0(+0x68(%di)):u8\n";
    let found = dynevents::check(&format!("{tprobes}{user}"), &[&k]);
    assert!(found.is_empty(), "fevlint calls these clean: {}", show(&format!("{tprobes}{user}"), &found));
    let defs = format!("{tprobes}{user}{KERNEL_MEMORY}");

    let dir = std::env::temp_dir().join(format!("fevlint-meaning-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("defs.txt"), &defs).expect("defs");
    let out = Command::new("bash")
        .arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["--tsv", "-m", "200M", "--timeout", "120", "-t", "cat /proc/version"])
        .arg(root().join("fixtures/kernels/6.12.117+deb12-amd64/vmlinuz"))
        .arg(dir.join("defs.txt"))
        .output()
        .expect("run-oracle.sh");
    let _ = std::fs::remove_dir_all(&dir);
    let tsv = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows = |p: &str| tsv.lines().filter(|l| l.starts_with(p)).map(str::to_owned).collect::<Vec<_>>();
    let (verdicts, trace) = (rows("DEF\t"), rows("TRACE\t"));
    assert_eq!(verdicts.len(), defs.lines().count(), "{tsv}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(verdicts.iter().all(|l| l.split('\t').nth(2) == Some("ACCEPT")), "{verdicts:#?}");

    // The tprobe and the kprobe on the tracepoint's stub record the same values.
    let fired = |event: &str| -> Vec<Vec<(String, String)>> {
        trace.iter().filter(|l| l.contains(&format!(" {event}: "))).map(|l| values(l)).collect()
    };
    let (t, p) = (fired("tnr"), fired("knr"));
    assert!(!t.is_empty(), "sched_update_nr_running_tp did not fire:\n{trace:#?}");
    for v in &t {
        assert!(p.contains(v), "the tprobe recorded {v:?}, the stub's kprobe never did:\n{trace:#?}");
    }

    // Kernel fetches of user pointers record what user fetches record: x86 routes an
    // address below TASK_SIZE to the user accessors (CONFIG_ARCH_HAS_NON_OVERLAPPING_
    // ADDRESS_SPACE), so fevlint warns about neither.
    for (kernel_fetch, user_fetch) in [("k", "u"), ("sk", "su")] {
        let get = |e: &str| {
            trace
                .iter()
                .find(|l| l.contains(&format!(" {e}: ")) && l.contains("/proc/version"))
                .map(|l| values(l))
                .unwrap_or_else(|| panic!("no {e} for /proc/version:\n{trace:#?}"))
        };
        assert_eq!(get(kernel_fetch), get(user_fetch));
        assert!(get(kernel_fetch).contains(&("c".to_owned(), "47".to_owned())), "'/' is 47");
    }
    // T408's claims: `+u` of the saved registers and of kernel data records 0 where the
    // kernel fetch records the pointer, a `:ustring` of the kernel stack `(fault)`.
    let kk = trace.iter().find(|l| l.contains(" kk: ")).map(|l| values(l)).expect("kk fired");
    let get = |n: &str| kk.iter().find(|(k, _)| k == n).map(|(_, v)| v.as_str()).unwrap_or("missing");
    assert_eq!((get("f"), get("r"), get("j")), ("0x0", "(fault)", "0"), "{kk:?}");
    assert!(get("g").starts_with("0x7f"), "the filename pointer: {kk:?}");
}
