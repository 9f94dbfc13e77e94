//! Evidence that drift reports are exactly right, beyond the caret corpus:
//!
//! - **fix round-trip**: a script written for 6.1.0-56 whose members moved in 6.12 is
//!   rewritten with the `D503` fixes (from `fevlint_check::drift::compare`) until nothing moves;
//!   the result must mean on 6.12 what the original meant on 6.1.0-56 (the same C
//!   expression, size and signedness per field), and a lock of the original must find
//!   no drift in it (`D505` silent), while it does find the original drifted.
//! - **control**: `fixtures/scripts/drift-control-6.1.fev`, definitions that are correct
//!   on 6.1.0-47 and mean the same on 6.1.0-56 (verified with pahole/pfunct), gives no
//!   diagnostic with both kernels; the same file against 6.12 does drift (so the rules
//!   did run).

use fevlint_check::analysis::{check, Options};
use fevlint_check::diagnostic::Diagnostic;
use fevlint_check::drift::{compare, Change, Edit};
use fevlint_check::meaning::{summarize, DefinitionMeaning};
use fevlint_check::resolve::resolve;
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parsed, Parser, Target};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

const K47: &str = "6.1.0-47-amd64";
const K56: &str = "6.1.0-56-amd64";
const K612: &str = "6.12.117+deb12-amd64";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn kernel(name: &str) -> &'static Kernel {
    static KERNELS: OnceLock<Mutex<HashMap<String, &'static Kernel>>> = OnceLock::new();
    let mut map = KERNELS.get_or_init(Default::default).lock().expect("kernel cache lock");
    map.entry(name.to_owned()).or_insert_with(|| {
        let path = root().join("fixtures/kernels").join(name);
        let k = Kernel::open(&path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
        Box::leak(Box::new(k))
    })
}

/// One definition per line (no comments), each parsed and accepted.
fn parse_all(text: &str) -> Vec<Parsed> {
    Parser::new()
        .lines(text, Target::X86_64)
        .into_iter()
        .filter_map(|l| l.parsed)
        .inspect(|p| assert!(p.rejection.is_none(), "rejected: {p:?}"))
        .collect()
}

/// What each definition of `text` means on `k`.
fn meanings(k: &Kernel, text: &str) -> Vec<DefinitionMeaning> {
    parse_all(text)
        .iter()
        .map(|p| {
            let r = resolve(k, p, Target::X86_64)
                .unwrap_or_else(|e| panic!("resolve on {}: {e:?}", k.name))
                .unwrap_or_else(|| panic!("no resolution on {}", k.name));
            summarize(k, p, &r, Target::X86_64)
        })
        .collect()
}

/// The changes from `old` (the original's meanings on the baseline) to `text` on `k`.
fn changes(k: &Kernel, text: &str, old: &[DefinitionMeaning]) -> Vec<Change> {
    let parsed = parse_all(text);
    let new = meanings(k, text);
    assert_eq!(parsed.len(), old.len());
    parsed
        .iter()
        .zip(old)
        .zip(&new)
        .flat_map(|((p, o), n)| compare(text, p, o, n, k, &|f| k.function_exists(f)))
        .collect()
}

fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.span.start));
    let mut out = text.to_owned();
    for e in edits {
        out.replace_range(e.span.start..e.span.end, &e.replacement);
    }
    out
}

/// Members that moved between 6.1.0-56 and 6.12.117 (pahole on both BTF blobs), one
/// moved step per field: struct file f_flags 64->48, f_mode 68->12, f_pos 104->112,
/// f_inode 32->40 (inode.i_ino stays at 64), private_data 200->32 (0xc8->0x20), f_count
/// 56->0; struct task_struct pid 2416->2432, tgid 2420->2436, mm 2272->2304; struct inode
/// i_generation 592->124; struct net_device mtu 224->56; struct sock sk_rcvbuf 280->244,
/// sk_sndbuf 332->372.
const MOVED: &str = "\
vfs_read(x64 file | u32 flags+64[0] | x32 mode+68[0] | s64 pos+104[0])
vfs_write(u64 ino+32[0]+64[0] | x64 priv+0xc8[0])
vfs_fsync(s64 f_count+56[0])
wake_up_new_task(int pid+2416[0] | int tgid+2420[0])
__put_task_struct(x64 mm+2272[0])
iput(u32 gen+592[0] | u64 ino+64[0])
dev_set_mtu(x64 dev | u32 old_mtu+224[0], int new_mtu)
tcp_sendmsg(x64 sk | int rcvbuf+280[0] | int sndbuf+332[0])
";

/// pahole for 6.12: where each field of [`MOVED`] is.
const FIXED: &str = "\
vfs_read(x64 file | u32 flags+48[0] | x32 mode+12[0] | s64 pos+112[0])
vfs_write(u64 ino+40[0]+64[0] | x64 priv+0x20[0])
vfs_fsync(s64 f_count[0])
wake_up_new_task(int pid+2432[0] | int tgid+2436[0])
__put_task_struct(x64 mm+2304[0])
iput(u32 gen+124[0] | u64 ino+64[0])
dev_set_mtu(x64 dev | u32 old_mtu+56[0], int new_mtu)
tcp_sendmsg(x64 sk | int rcvbuf+244[0] | int sndbuf+372[0])
";

/// A field's name, the C expression it records, and the value's size and signedness.
type FieldValue = (String, Option<String>, Option<u64>, Option<bool>);

/// What the round trip compares per field.
fn fields(m: &DefinitionMeaning) -> Vec<FieldValue> {
    m.fields.iter().map(|f| (f.name.clone(), f.value.clone(), f.value_size, f.value_signed)).collect()
}

fn d_codes(diags: &[Diagnostic]) -> Vec<String> {
    diags.iter().filter(|d| d.code.starts_with('D')).map(|d| format!("{} {}", d.code, d.message)).collect()
}

/// The `D503` fixes for `text` (meaning `old` on the baseline) on `k`; panics on any
/// other change.
fn fixes(k: &Kernel, text: &str, old: &[DefinitionMeaning]) -> Vec<Edit> {
    changes(k, text, old)
        .into_iter()
        .map(|c| match c {
            Change::Member { fix: Some(e), .. } => e,
            other => panic!("a change without a fix: {other:?}"),
        })
        .collect()
}

fn lock_check(k: &Kernel, script: &str, lock: &[DefinitionMeaning]) -> Vec<Diagnostic> {
    let (_, d) = check(
        &mut Parser::new(),
        script.as_bytes().to_vec(),
        &Options::new(Target::X86_64).kernels(&[k]).lock(Some((K56, lock))),
    );
    d
}

#[test]
fn fixes_restore_the_baseline_meaning() {
    let (k56, k612) = (kernel(K56), kernel(K612));
    let old = meanings(k56, MOVED);
    // The original means something on 6.1.0-56: every field is followed to a value.
    for m in &old {
        assert!(m.exists, "{} missing on {K56}", m.function);
        for f in &m.fields {
            assert!(f.value.is_some(), "{}: field `{}` has no value on {K56}", m.function, f.name);
        }
    }
    let edits = fixes(k612, MOVED, &old);
    assert_eq!(edits.len(), 13, "{edits:#?}");
    let text = apply(MOVED, edits);
    assert_eq!(text, FIXED);
    // The fixed script means on 6.12 what the original meant on 6.1.0-56.
    let new = meanings(k612, &text);
    for (o, n) in old.iter().zip(&new) {
        assert_eq!(fields(o), fields(n), "{} means something else after the fix:\n{text}", o.function);
        assert_eq!(o.schema, n.schema, "{}: the event's format changed", o.function);
    }
    // Two kernels: 6.12 has nothing to say about the fixed script on its own, and the
    // original drifts from 6.1.0-56 to 6.12 exactly where the fixes went.
    let own = check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&[k612])).1;
    assert!(own.is_empty(), "{own:#?}");
    let both =
        check(&mut Parser::new(), MOVED.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&[k56, k612])).1;
    assert_eq!(d_codes(&both).len(), 13, "{:#?}", d_codes(&both));
    assert!(d_codes(&both).iter().all(|d| d.starts_with("D503 ")), "{:#?}", d_codes(&both));
}

/// A lock of the original (its meaning on 6.1.0-56) finds the original drifted on 6.12,
/// once per definition, with one note per moved member.
#[test]
fn lock_finds_the_original_drifted() {
    let old = meanings(kernel(K56), MOVED);
    let before = lock_check(kernel(K612), MOVED, &old);
    let d505: Vec<&Diagnostic> = before.iter().filter(|d| d.code == "D505").collect();
    assert_eq!(d505.len(), old.len(), "{:#?}", d_codes(&before));
    assert!(d505.iter().all(|d| d.message.contains("than in the lock (the lock's 6.1.0-56-amd64)")), "{d505:#?}");
    let vfs_read = d505.iter().find(|d| d.message.starts_with("`vfs_read`")).expect("D505 on vfs_read");
    for note in [
        "`flags`: `struct file.f_flags` moved from offset 64 to 48",
        "`mode`: `struct file.f_mode` moved from offset 68 to 12",
        "`pos`: `struct file.f_pos` moved from offset 104 to 112",
    ] {
        assert!(vfs_read.notes.iter().any(|n| **n == *note), "missing note {note:?} in {:#?}", vfs_read.notes);
    }
    // The lock's own kernel agrees with the lock.
    assert!(lock_check(kernel(K56), MOVED, &old).is_empty());
}

/// The fixed script reads on 6.12 what the lock recorded (same members, same values), so
/// the lock finds no drift in it: steps are matched by member, not by offset.
#[test]
fn lock_on_the_fixed_script() {
    let old = meanings(kernel(K56), MOVED);
    let after = lock_check(kernel(K612), FIXED, &old);
    assert!(after.is_empty(), "the fixed script should mean what the lock recorded: {:#?}", d_codes(&after));
}

/// When a field crosses two moved members, both are reported and fixed in one round
/// (`file_operations.llseek` 8->16 behind `f_op` 40->16, `task_struct.tgid` 2420->2436
/// behind `real_parent` 2432->2448).
#[test]
fn two_moved_steps_in_one_field() {
    let (k56, k612) = (kernel(K56), kernel(K612));
    let multi = "vfs_llseek(symbol llseek+40[0]+8[0])\nwake_up_new_task(int ppid+2432[0]+2420[0])\n";
    let old = meanings(k56, multi);
    let once = apply(multi, fixes(k612, multi, &old));
    let right = "vfs_llseek(symbol llseek+16[0]+16[0])\nwake_up_new_task(int ppid+2448[0]+2436[0])\n";
    assert_eq!(once, right);
    for (o, n) in old.iter().zip(&meanings(k612, right)) {
        assert_eq!(fields(o), fields(n), "pahole's offsets do not restore {}", o.function);
    }
}

fn control() -> (String, Vec<Parsed>) {
    let text = std::fs::read_to_string(root().join("fixtures/scripts/drift-control-6.1.fev"))
        .expect("fixtures/scripts/drift-control-6.1.fev");
    assert!(text.contains(&format!("# baseline: {K47}\n# kernel: {K56}\n")));
    let parsed = parse_all(&text);
    (text, parsed)
}

#[test]
fn control_script_does_not_drift_between_6_1_47_and_6_1_56() {
    let (text, parsed) = control();
    assert!(parsed.len() >= 100, "the control script has {} definitions, want at least 100", parsed.len());
    let (k47, k56) = (kernel(K47), kernel(K56));
    // Each definition resolves on both kernels and follows every redirect to a value,
    // so the comparison below compares something.
    for k in [k47, k56] {
        for m in meanings(k, &strip_comments(&text)) {
            assert!(m.exists, "{} missing on {}", m.function, k.name);
            for f in &m.fields {
                assert!(f.value.is_some(), "{}.{} has no value on {}", m.function, f.name, k.name);
            }
        }
    }
    let diags =
        check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&[k47, k56])).1;
    let shown: Vec<String> =
        diags.iter().map(|d| format!("{} {:?} {} @{}", d.code, d.kernel, d.message, d.span.start)).collect();
    assert!(diags.is_empty(), "{} diagnostic(s) on the control script:\n{}", diags.len(), shown.join("\n"));
}

/// The control is no vacuous pass: against 6.12 the same file does drift (struct file,
/// struct task_struct and the allocators changed), so the drift rules did run on it.
#[test]
fn control_script_drifts_on_6_12() {
    let (text, _) = control();
    let diags = check(
        &mut Parser::new(),
        text.as_bytes().to_vec(),
        &Options::new(Target::X86_64).kernels(&[kernel(K56), kernel(K612)]),
    )
    .1;
    let d = d_codes(&diags);
    for expected in [
        "D503 `struct file.f_flags` moved from offset 64 to 48",
        "D503 `struct task_struct.pid` moved from offset 2416 to 2432",
        "D501 `kmalloc_large` exists on 6.1.0-56-amd64 but not on 6.12.117+deb12-amd64",
    ] {
        assert!(d.iter().any(|m| m.starts_with(expected)), "no {expected:?} in {d:#?}");
    }
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(|l| format!("{l}\n"))
        .collect()
}

/// A check compares the target's resolution in place (`meaning::OnKernel`), `fevlint
/// fix` and these tests compare summaries: both sides must read the same meaning. Over
/// the control and the clean 6.12 script, each way between the 6.1 and 6.12 kernels
/// (functions gone, parameters and members changed, and unchanged definitions).
#[test]
fn the_target_read_in_place_is_its_summary() {
    use fevlint_check::meaning::{summarize_with, OnKernel, TypeNames};
    let mut compared = 0;
    let mut changed = 0;
    for script in ["drift-control-6.1.fev", "clean-6.12.fev"] {
        let text =
            strip_comments(&std::fs::read_to_string(root().join("fixtures/scripts").join(script)).expect(script));
        let parsed = parse_all(&text);
        for (base, target) in [(K47, K612), (K56, K612), (K612, K47), (K47, K56)] {
            let (base, target) = (kernel(base), kernel(target));
            let names = TypeNames::default();
            for p in &parsed {
                let (Some(old), Some(new)) = (
                    resolve(base, p, Target::X86_64).ok().flatten(),
                    resolve(target, p, Target::X86_64).ok().flatten(),
                ) else {
                    continue;
                };
                let old = summarize(base, p, &old, Target::X86_64);
                let summary = summarize_with(target, p, &new, Target::X86_64, &names);
                let in_place = OnKernel { kernel: target, parsed: p, resolution: &new, names: &names };
                let exists = |f: &str| target.function_exists(f);
                let by_summary = compare(&text, p, &old, &summary, target, &exists);
                assert_eq!(by_summary, compare(&text, p, &old, &in_place, target, &exists), "{p:?}");
                compared += 1;
                changed += usize::from(!by_summary.is_empty());
            }
        }
    }
    assert!(compared > 400 && changed > 40, "{compared} compared, {changed} changed");
}
