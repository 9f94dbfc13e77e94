//! fevlint's register and offset arithmetic against the kernel's own, at scale.
//!
//! A generator reads the 6.12 fixture's BTF (through fevlint's type model) and, for every
//! traceable, uniquely named function whose parameters include a pointer to a struct or
//! union, picks scalar members one level deep (`file->f_flags`, through anonymous and
//! embedded members: `file->f_path.mnt`) and two levels deep (`file->f_inode->i_ino`). For
//! each function it writes a function-event definition of those members (fevlint places
//! the parameter in its slot and computes every offset), which `fevlint emit --flavor
//! kprobe` turns into a `p:` line, and a second line naming the same members
//! (`f0=file->f_inode->i_ino`), which the kernel resolves from its BTF with the code its
//! `f:` lines use (`parse_btf_arg()`). Debian's 6.12 kernel boots under QEMU (TCG); a
//! first pass of a workload (files on tmpfs, pipes, loopback ICMP/TCP/HTTP, fork/exec,
//! sleep, nice, page cache and compaction) under the function tracer says which
//! candidates it calls; those lines are written, the workload runs again, and at every
//! call both lines recorded (paired by the stack address `$stack` each also records)
//! every field must be equal.
//!
//! The kernel's side is a kprobe, not an `f:` line: each `f:` line registers an ftrace
//! ops of its own (a trampoline, code patched), and under TCG 2,800 lines had not
//! finished registering after 14 minutes; kprobes at one address share one. Both kinds
//! record the same `$stack` and values at the same call (checked by hand on `vfs_read`).
//!
//! Cost on this machine (2 cores, TCG, 512 MB guest, load 15-20): one boot of 4-6
//! minutes (registering 3,200 events is 2 of them), and a few seconds of generation. Runs only with FEVLINT_REAL_TOOLS=1.

use fevlint_kernel::Kernel;
use fevlint_types::abi::{self, Loc};
use fevlint_types::model::{Qualifier, Type, TypeRef, TypeSource};
use fevlint_types::Arch;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

const RELEASE: &str = "6.12.117+deb12-amd64";
/// Functions whose events are written: enough for 1,000 to fire, few enough to enable
/// in a minute or two.
const MAX_FUNCTIONS: usize = 1600;
/// The fewest distinct functions whose values must be compared.
const MIN_COMPARED: usize = 1000;
/// Calls compared per function.
const CALLS: usize = 3;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One member read: the C expression the kernel resolves and the offsets fevlint computed.
#[derive(Clone, Debug)]
struct Field {
    /// `file->f_inode->i_ino`
    expr: String,
    /// Byte offsets from the parameter: one per dereference.
    offsets: Vec<u64>,
    size: u64,
}

#[derive(Debug)]
struct Candidate {
    function: String,
    /// Slot (register index) of each parameter read, and its fields.
    slots: BTreeMap<usize, Vec<Field>>,
    /// The name of the parameter in each slot.
    params: BTreeMap<usize, String>,
}

/// Follows typedefs and qualifiers to the type below; `None` through a type tag (a
/// `__user` or `__percpu` pointer is not kernel memory either side can read alike).
fn strip_untagged(src: &dyn TypeSource, mut ty: TypeRef) -> Option<Type> {
    for _ in 0..32 {
        match src.get(ty).ok()? {
            Type::Typedef { target, .. } => ty = target,
            Type::Qualified { qualifier: Qualifier::TypeTag, .. } => return None,
            Type::Qualified { target, .. } => ty = target,
            other => return Some(other),
        }
    }
    None
}

/// The struct or union a pointer type points at (stripped), when it has members.
fn pointee(src: &dyn TypeSource, ty: TypeRef) -> Option<TypeRef> {
    let Type::Pointer { target } = strip_untagged(src, ty)? else { return None };
    let mut ty = target;
    for _ in 0..32 {
        match src.get(ty).ok()? {
            Type::Typedef { target, .. } => ty = target,
            Type::Qualified { qualifier: Qualifier::TypeTag, .. } => return None,
            Type::Qualified { target, .. } => ty = target,
            Type::Struct(c) | Type::Union(c) if !c.members.is_empty() => return Some(ty),
            _ => return None,
        }
    }
    None
}

/// Size of a scalar the kernel prints as one value: integers, enums, pointers.
fn scalar_size(src: &dyn TypeSource, ty: TypeRef) -> Option<u64> {
    match strip_untagged(src, ty)? {
        Type::Int { size, is_bool: false, .. } if [1, 2, 4, 8].contains(&size) => Some(u64::from(size)),
        Type::Enum { size, .. } if [1, 2, 4, 8].contains(&size) => Some(u64::from(size)),
        Type::Pointer { .. } => Some(8),
        _ => None,
    }
}

/// Members of `c` reachable by name (through anonymous members, and `.` into embedded
/// named ones, two deep): (C path, byte offset, type).
fn members(src: &dyn TypeSource, c: &fevlint_types::model::Composite, depth: u32) -> Vec<(String, u64, TypeRef)> {
    let mut out = Vec::new();
    for m in c.members.iter() {
        if m.bitfield_size != 0 || m.bit_offset % 8 != 0 {
            continue;
        }
        let off = m.bit_offset / 8;
        let inner = match strip_untagged(src, m.ty) {
            Some(Type::Struct(c) | Type::Union(c)) => Some(c),
            _ => None,
        };
        match (&m.name, inner) {
            (None, Some(inner)) => {
                for (n, o, t) in members(src, &inner, depth) {
                    out.push((n, off + o, t));
                }
            }
            (Some(name), Some(inner)) if depth < 2 => {
                for (n, o, t) in members(src, &inner, depth + 1) {
                    out.push((format!("{name}.{n}"), off + o, t));
                }
            }
            (Some(name), None) => out.push((name.clone(), off, m.ty)),
            _ => {}
        }
    }
    out
}

/// What a composite offers, computed once per type: its scalar members (path, offset,
/// size) and its pointer members to composites (path, offset, pointee).
#[derive(Default)]
struct Shapes {
    scalars: HashMap<TypeRef, Scalars>,
    pointers: HashMap<TypeRef, Pointers>,
}

/// (C path, byte offset, size) of each scalar member.
type Scalars = std::rc::Rc<Vec<(String, u64, u64)>>;
/// (C path, byte offset, pointee) of each pointer-to-composite member.
type Pointers = std::rc::Rc<Vec<(String, u64, TypeRef)>>;
/// A trace line's `name=value` fields.
type Fields = Vec<(String, String)>;

impl Shapes {
    fn fill(&mut self, src: &dyn TypeSource, ty: TypeRef) {
        if self.scalars.contains_key(&ty) {
            return;
        }
        let ms = match src.get(ty) {
            Ok(Type::Struct(c) | Type::Union(c)) => members(src, &c, 0),
            _ => Vec::new(),
        };
        let scalars = ms.iter().filter_map(|(n, o, t)| Some((n.clone(), *o, scalar_size(src, *t)?))).collect();
        let pointers = ms.iter().filter_map(|(n, o, t)| Some((n.clone(), *o, pointee(src, *t)?))).collect();
        self.scalars.insert(ty, std::rc::Rc::new(scalars));
        self.pointers.insert(ty, std::rc::Rc::new(pointers));
    }

    fn scalars(&mut self, src: &dyn TypeSource, ty: TypeRef) -> Scalars {
        self.fill(src, ty);
        self.scalars[&ty].clone()
    }

    fn pointers(&mut self, src: &dyn TypeSource, ty: TypeRef) -> Pointers {
        self.fill(src, ty);
        self.pointers[&ty].clone()
    }
}

/// A small deterministic hash, to spread the picks over each struct's members.
fn mix(s: &str, salt: u64) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325 ^ salt, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// The candidates: every function of the kernel's ftrace list (one entry of that name,
/// not blacklisted for kprobes, one BTF prototype) with a named pointer-to-composite
/// parameter in one of the six argument registers; for each such parameter (two at most)
/// two scalar members one level deep and one two levels deep, picked by a hash of the
/// function's name.
fn generate(kernel: &Kernel) -> Vec<Candidate> {
    let src = kernel.types().expect("the fixture has BTF");
    let ff = &kernel.filter_functions().expect("available_filter_functions").value;
    let regs = abi::arg_registers(Arch::X86_64);
    let mut shapes = Shapes::default();
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (name, _) in ff.iter() {
        if !seen.insert(name.to_owned()) || name.contains('.') || name.len() > 56 || ff.count(name) != 1 {
            continue;
        }
        let facts = kernel.function(name).expect("function facts");
        if facts.kprobe_blacklisted || facts.prototypes.len() != 1 {
            continue;
        }
        let Ok(locs) = abi::locate(Arch::X86_64, src, &facts.prototypes[0].proto) else { continue };
        let mut slots = BTreeMap::new();
        let mut params = BTreeMap::new();
        for l in &locs {
            // The kernel's BTF arguments number parameters, not registers (`$argN` is
            // register N): after a struct passed in two registers (`timestamp_truncate(
            // struct timespec64 t, struct inode *inode)`: inode in %dx, the kernel reads
            // %si) or on the stack, its names are off by one. fevlint places them right;
            // such functions are left out rather than compared with a wrong judge.
            if !matches!(l.loc, Loc::Reg(_)) {
                break;
            }
            let (Loc::Reg(r), Some(pname)) = (&l.loc, &l.name) else { continue };
            let Some(slot) = regs.iter().position(|x| x == r) else { continue };
            let Some(c) = pointee(src, l.ty) else { continue };
            let scalars = shapes.scalars(src, c);
            let mut fields: Vec<Field> = Vec::new();
            for k in 0..2 {
                let Some((n, o, size)) = scalars.get((mix(name, k) as usize) % scalars.len().max(1)) else { break };
                if !fields.iter().any(|f| f.offsets == [*o]) {
                    fields.push(Field { expr: format!("{pname}->{n}"), offsets: vec![*o], size: *size });
                }
            }
            let pointers = shapes.pointers(src, c);
            if let Some((n, o, c2)) = pointers.get((mix(name, 7) as usize) % pointers.len().max(1)) {
                let s2 = shapes.scalars(src, *c2);
                if let Some((n2, o2, size)) = s2.get((mix(name, 9) as usize) % s2.len().max(1)) {
                    fields.push(Field { expr: format!("{pname}->{n}->{n2}"), offsets: vec![*o, *o2], size: *size });
                }
            }
            // The kernel refuses an argument longer than MAX_ARGSTR_LEN (63): "Argument
            // expression is too long".
            fields.retain(|f| f.expr.len() + 4 <= 63);
            if !fields.is_empty() {
                slots.insert(slot, fields);
                params.insert(slot, pname.clone());
            }
            if slots.len() == 2 {
                break;
            }
        }
        if !slots.is_empty() {
            out.push(Candidate { function: name.to_owned(), slots, params });
        }
    }
    out
}

impl Candidate {
    fn fields(&self) -> impl Iterator<Item = &Field> {
        self.slots.values().flatten()
    }

    /// The function-event definition: `f<i>` names, hex types of the member's size.
    fn definition(&self) -> String {
        let last = *self.slots.keys().last().expect("a slot");
        let mut i = 0;
        let mut groups = Vec::new();
        for slot in 0..=last {
            match self.slots.get(&slot) {
                None => groups.push("NULL".to_owned()),
                Some(fields) => {
                    // The parameter itself, as `a<slot>`.
                    let mut g = vec![format!("x64 a{slot}")];
                    for f in fields {
                        let path: String = f.offsets.iter().map(|o| format!("+{o}[0]")).collect();
                        g.push(format!("x{} f{i}{path}", f.size * 8));
                        if f.offsets.len() == 2 {
                            // The pointer the member is read through, as `p<i>`.
                            g.push(format!("x64 p{i}+{}[0]", f.offsets[0]));
                        }
                        i += 1;
                    }
                    groups.push(g.join(" | "));
                }
            }
        }
        format!("{}({})", self.function, groups.join(", "))
    }

    /// The kernel's side: the same members by name, which the kernel resolves from its
    /// BTF (`parse_btf_arg()`, the code `f:` lines use), on a kprobe at the entry.
    fn btf_line(&self) -> String {
        let mut line = format!("p:fbtf/btf__{0} {0}", self.function);
        for (slot, name) in &self.params {
            let _ = write!(line, " a{slot}={name}:x64");
        }
        for (i, f) in self.fields().enumerate() {
            let _ = write!(line, " f{i}={}:x{}", f.expr, f.size * 8);
            if let Some((through, _)) = f.expr.rsplit_once("->").filter(|_| f.offsets.len() == 2) {
                let _ = write!(line, " p{i}={through}:x64");
            }
        }
        line + " sp=$stack"
    }
}

/// `event` and `name=value` fields of a trace line `task-pid [cpu] flags ts: event: (at) a=1 b=2`.
fn parse_trace(line: &str) -> Option<(&str, Vec<(&str, &str)>)> {
    let (_, rest) = line.split_once("]")?;
    let (_, rest) = rest.split_once(": ")?;
    let (event, rest) = rest.split_once(": ")?;
    let (_, body) = rest.split_once(") ")?;
    Some((event, body.split(' ').filter_map(|f| f.split_once('=')).collect()))
}

/// The workload, in four parts (files, network, scheduler, memory), run by both passes.
fn workload() -> [&'static str; 4] {
    [
        r#"mkdir -p /tmp/w; mount -t tmpfs tmpfs /tmp/w
for i in 1 2 3 4; do echo $i > /tmp/w/f$i; cat /tmp/w/f$i > /dev/null; mv /tmp/w/f$i /tmp/w/g$i; ln -s /tmp/w/g$i /tmp/w/l$i; chmod 600 /tmp/w/g$i; stat /tmp/w/l$i > /dev/null; done
mkdir /tmp/w/d; rmdir /tmp/w/d; ls -laR /tmp/w /proc/self/ > /dev/null
dd if=/dev/zero of=/tmp/w/big bs=64k count=32 2>/dev/null; sync; cp /tmp/w/big /tmp/w/big2; rm -f /tmp/w/big /tmp/w/g1
find /sys/kernel/mm -maxdepth 2 > /dev/null; cat /proc/meminfo /proc/stat /proc/interrupts /proc/self/maps > /dev/null
echo data | cat | wc -c > /dev/null; umount /tmp/w
"#,
        r#"ip link set lo up; mkdir -p /tmp/www; echo hello > /tmp/www/index.html
httpd -p 127.0.0.1:8080 -h /tmp/www
ping -c 2 -i 0.2 127.0.0.1 > /dev/null
wget -q -O /dev/null http://127.0.0.1:8080/index.html
nc -l -p 9000 > /tmp/recv & sleep 0.2; echo payload | nc 127.0.0.1 9000; wait
kill $(pidof httpd) 2>/dev/null
"#,
        r#"for i in 1 2 3 4 5 6; do sh -c true; done; sleep 0.1; nice -n 10 true; taskset 1 true
(sleep 0.1 & sleep 0.1 & wait)
"#,
        r#"dd if=/dev/zero of=/dev/null bs=4M count=2 2>/dev/null
echo 3 > /proc/sys/vm/drop_caches; echo 1 > /proc/sys/vm/compact_memory
"#,
    ]
}

/// Guest side of the first pass: trace the candidates (by their index in
/// available_filter_functions) while each part of the workload runs, with a small ring
/// buffer (the last calls of each part) and one function name per line; then keep the
/// definitions of the functions it called, at most MAX_FUNCTIONS of them, and write them.
fn prelude() -> String {
    format!(
        r#"o NOTE "prelude at $(cut -d' ' -f1 /proc/uptime) s"
awk 'NR == FNR {{ want[$1] = 1; next }} ($1 in want) {{ print FNR }}' /cands.names $T/available_filter_functions > /tmp/idx
while read -r i; do echo "$i"; done < /tmp/idx > $T/set_ftrace_filter
echo 4096 > $T/buffer_size_kb
echo 0 > $T/options/print-parent; echo 0 > $T/options/context-info
: > /tmp/fired
for part in 1 2 3 4; do
  echo function > $T/current_tracer
  echo 1 > $T/tracing_on
  sh /workload$part > /dev/null 2>&1
  echo 0 > $T/tracing_on
  awk '!/^#/ && !seen[$1]++ {{ print $1 }}' $T/trace >> /tmp/fired
  echo nop > $T/current_tracer
done
echo 1 > $T/options/print-parent; echo 1 > $T/options/context-info
echo > $T/set_ftrace_filter
o NOTE "first pass: $(awk '!s[$1]++' /tmp/fired | wc -l) of $(wc -l < /tmp/idx) candidates called, at $(cut -d' ' -f1 /proc/uptime) s"
awk -F '\t' 'NR == FNR {{ fired[$1] = 1; next }} ($1 in fired) && n < {MAX_FUNCTIONS} {{ n++; print $2; print $3 }}' /tmp/fired /cands.tsv > /tmp/sel
echo 16384 > $T/buffer_size_kb
# One write registers them all (the kernel parses it line by line); if a line fails,
# one write per line says which.
if ! cat /tmp/sel >> $T/dynamic_events 2>/dev/null; then
  while IFS= read -r l; do
    grep -qF "${{l%% *}} " $T/dynamic_events && continue
    echo "$l" >> $T/dynamic_events 2>/dev/null || {{ o NOTE "REJECT $l :: $(grep error: $T/error_log | tail -1)"; echo > $T/error_log; }}
  done < /tmp/sel
fi
o NOTE "registered $(wc -l < $T/dynamic_events) events at $(cut -d' ' -f1 /proc/uptime) s"
echo 1 > $T/events/fevlint/enable
echo 1 > $T/events/fbtf/enable
o NOTE "enabled at $(cut -d' ' -f1 /proc/uptime) s"
# The second pass, part by part (a part's calls fit the ring buffer), each part's trace
# trimmed by /trace.awk.
for part in 1 2 3 4; do
  echo > $T/trace
  echo 1 > $T/tracing_on
  sh /workload$part > /dev/null 2>&1
  echo 0 > $T/tracing_on
  o TRACE_BEGIN
  awk -f /trace.awk $T/trace >&3
  o TRACE_END
done
o NOTE "second pass done at $(cut -d' ' -f1 /proc/uptime) s"
echo > $T/trace
"#
    )
}

/// Prints, for each function, the trace lines until `CALLS` calls are complete (its `p:`
/// and BTF lines balance), so that a hot function does not flood the serial line.
fn trace_awk() -> String {
    format!(
        r#"/^#/ {{ next }}
{{
  ev = ""
  for (i = 1; i < NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) {{ ev = $(i + 1); break }}
  sub(/:$/, "", ev)
  f = ev; isf = sub(/^btf__/, "", f)
  if (done[f] >= {CALLS}) next
  bal[f] += isf ? 1 : -1
  if (bal[f] == 0) done[f]++
  print
}}
"#
    )
}

#[test]
fn fevlint_offsets_equal_the_kernels_btf_resolution_at_scale() {
    if std::env::var_os("FEVLINT_REAL_TOOLS").is_none() {
        eprintln!("skipped: set FEVLINT_REAL_TOOLS=1");
        return;
    }
    let kdir = root().join("fixtures/kernels").join(RELEASE);
    let kernel = Kernel::open(&kdir).expect("6.12 fixture");
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("values-at-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let cands = generate(&kernel);
    eprintln!("generated {} candidate functions", cands.len());
    assert!(cands.len() > 5 * MIN_COMPARED, "{} candidates", cands.len());

    // fevlint's side: the definitions, as `fevlint emit` writes them for this kernel.
    let fev: String = cands.iter().map(|c| c.definition() + "\n").collect();
    std::fs::write(dir.join("gen.fev"), &fev).expect("gen.fev");
    let out = Command::new(env!("CARGO_BIN_EXE_fevlint"))
        .args(["emit", "--flavor", "kprobe", "--kernel"])
        .arg(&kdir)
        .arg(dir.join("gen.fev"))
        .output()
        .expect("fevlint emit");
    let emitted = String::from_utf8_lossy(&out.stdout);
    let mut by_function: HashMap<&str, &str> = HashMap::new();
    for line in emitted.lines() {
        let function = line.split(' ').nth(1).expect("p:event function fields");
        by_function.insert(function, line);
    }
    // emit refuses what the kernel would (a name kallsyms holds twice: "The symbol is not
    // unique"); every other definition is emitted.
    let refused = String::from_utf8_lossy(&out.stderr);
    let not_unique =
        refused.lines().filter(|l| l.contains("cannot emit") && l.contains("The symbol is not unique")).count();
    assert_eq!(by_function.len() + not_unique, cands.len(), "every definition is emitted: {refused}");
    let mut tsv = String::new();
    let mut names = String::new();
    for c in &cands {
        let Some(p) = by_function.get(c.function.as_str()) else { continue };
        let _ = writeln!(tsv, "{}\t{p} sp=$stack\t{}", c.function, c.btf_line());
        let _ = writeln!(names, "{}", c.function);
    }
    // The guest's files: candidates, workload, prelude and trace filter ride in the
    // initramfs next to the definitions file (written by the prelude).
    let extra = dir.join("extra");
    std::fs::create_dir_all(&extra).expect("extra");
    std::fs::write(extra.join("cands.tsv"), tsv).expect("tsv");
    std::fs::write(extra.join("cands.names"), names).expect("names");
    for (i, part) in workload().iter().enumerate() {
        std::fs::write(extra.join(format!("workload{}", i + 1)), part).expect("workload");
    }
    let prelude = format!("cp /extra/* /\n{}", prelude());
    std::fs::write(dir.join("prelude.sh"), prelude).expect("prelude");
    std::fs::write(dir.join("trace.awk"), trace_awk()).expect("awk");
    std::fs::write(dir.join("defs.txt"), "").expect("defs");
    let out = Command::new("bash")
        .arg(root().join("tests/oracle/run-oracle.sh"))
        .args(["-m", "512M", "--all-pids", "--timeout", "1500", "--tsv", "--extra"])
        .arg(&extra)
        .arg("--prelude")
        .arg(dir.join("prelude.sh"))
        .arg("--trace-awk")
        .arg(dir.join("trace.awk"))
        .args(["-t", "true"])
        .arg(kdir.join("vmlinuz"))
        .arg(dir.join("defs.txt"))
        .output()
        .expect("run-oracle.sh");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    std::fs::write(dir.join("oracle.out"), &text).expect("keep the output");
    assert!(out.status.success(), "{}\n{}", &text[..text.len().min(4000)], String::from_utf8_lossy(&out.stderr));
    let rejected: Vec<&str> = text.lines().filter(|l| l.starts_with("NOTE\tREJECT ")).collect();
    for note in text.lines().filter(|l| l.starts_with("NOTE\t")) {
        eprintln!("{note}");
    }

    // Each function's lines, by CPU, in the order the trace has them: (is the BTF line, fields).
    let mut lines: HashMap<String, BTreeMap<String, Vec<(bool, Fields)>>> = HashMap::new();
    for l in text.lines().filter_map(|l| l.strip_prefix("TRACE\t")) {
        let Some((event, fields)) = parse_trace(l) else { continue };
        let Some(cpu) = l.split_once('[').and_then(|(_, r)| r.split_once(']')).map(|(c, _)| c.to_owned()) else {
            continue;
        };
        let fields: Fields = fields.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect();
        let (function, btf) = match event.strip_prefix("btf__") {
            Some(f) => (f, true),
            None => (event, false),
        };
        lines.entry(function.to_owned()).or_default().entry(cpu).or_default().push((btf, fields));
    }
    let slots_of: HashMap<&str, Vec<usize>> = cands
        .iter()
        .map(|c| (c.function.as_str(), c.slots.iter().flat_map(|(s, fs)| fs.iter().map(move |_| *s)).collect()))
        .collect();
    let exprs: HashMap<&str, Vec<String>> =
        cands.iter().map(|c| (c.function.as_str(), c.fields().map(|f| f.expr.clone()).collect())).collect();
    // The kernel runs the handlers of one address in one order: the order of the two lines
    // of a call is the one most neighbours with the same stack and parameters show.
    let call_key = |v: &Fields| {
        v.iter().filter(|(n, _)| n == "sp" || n.starts_with('a')).map(|(n, s)| format!("{n}={s}")).collect::<Vec<_>>()
    };
    let (mut btf_then_p, mut p_then_btf) = (0usize, 0usize);
    for seq in lines.values().flat_map(|by_cpu| by_cpu.values()) {
        for w in seq.windows(2) {
            if w[0].0 != w[1].0 && call_key(&w[0].1) == call_key(&w[1].1) {
                *(if w[0].0 { &mut btf_then_p } else { &mut p_then_btf }) += 1;
            }
        }
    }
    let btf_first = btf_then_p >= p_then_btf;
    eprintln!("neighbouring lines of one call: BTF line first {btf_then_p}, kprobe line first {p_then_btf}");
    let (mut functions, mut compared, mut calls, mut not_comparable) = (0usize, 0usize, 0usize, 0usize);
    let mut mismatches = Vec::new();
    for (function, by_cpu) in &lines {
        let Some(exprs) = exprs.get(function.as_str()) else { continue };
        // The two lines of one call are recorded by one kprobe hit, one after the other on
        // its CPU, in the handlers' order (a hit while another runs is missed whole): they
        // are neighbours in the function's lines of that CPU, in that order, and carry the
        // same stack address and parameters (`sp`, `a<slot>`). A line whose partner the
        // trace lacks (tracing switched on between the two) stands alone and is skipped:
        // pairing it with the next call's line compared a counter such as
        // `cpu_base->nr_events` across two calls.
        let mut calls_here = Vec::new();
        for seq in by_cpu.values() {
            let mut i = 0;
            while i + 1 < seq.len() {
                let ((a_btf, a), (b_btf, b)) = (&seq[i], &seq[i + 1]);
                if *a_btf == btf_first && *b_btf != btf_first && call_key(a) == call_key(b) {
                    calls_here.push(if *a_btf { (b, a) } else { (a, b) });
                    i += 2;
                } else {
                    i += 1;
                }
            }
        }
        let mut paired = 0;
        for (p, f) in calls_here {
            paired += 1;
            let value_of = |line: &Fields, name: &str| line.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
            for (name, value) in p.iter().filter(|(n, _)| n != "sp") {
                let theirs = f.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
                // A member read through a pointer that is not a kernel address (NULL, an
                // uninitialised or poisoned field) faults, and a kprobe then records the
                // ring buffer's stale bytes (the field is not zeroed): not comparable.
                let through = value_of(p, &format!("p{}", name.trim_start_matches('f')));
                let kernel_pointer = |v: &str| {
                    u64::from_str_radix(v.trim_start_matches("0x"), 16)
                        .is_ok_and(|a| (0xffff_8880_0000_0000..0xffff_ffff_ff60_0000).contains(&a) && a % 4 == 0)
                };
                // The parameter the member is read from (NULL is a legal argument).
                let index: usize = name[1..].parse().unwrap_or(usize::MAX);
                let param = slots_of.get(function.as_str()).and_then(|v| v.get(index)).map(|s| format!("a{s}"));
                let base = param.and_then(|a| value_of(p, &a));
                if (name.starts_with('f') || name.starts_with('p'))
                    && (through.as_deref().is_some_and(|t| !kernel_pointer(t))
                        || base.as_deref().is_some_and(|b| !kernel_pointer(b)))
                {
                    not_comparable += 1;
                    continue;
                }
                compared += 1;
                if theirs != Some(value.as_str()) {
                    let i: usize = name[1..].parse().unwrap_or(0);
                    mismatches.push(format!(
                        "{function} {name} ({}): fevlint {value}, kernel {}",
                        exprs.get(i).map_or("?", String::as_str),
                        theirs.unwrap_or("(missing)")
                    ));
                }
            }
        }
        if paired > 0 {
            functions += 1;
            calls += paired;
        }
    }
    let fired = text.lines().find_map(|l| l.strip_prefix("NOTE\tfirst pass: ")).unwrap_or("?");
    eprintln!(
        "{} candidates; first pass: {fired}; {} definitions rejected; compared {compared} fields at {calls} calls of {functions} functions ({not_comparable} more read through a pointer that is not a kernel address); {} mismatches",
        cands.len(),
        rejected.len(),
        mismatches.len()
    );
    for m in mismatches.iter().take(40) {
        eprintln!("  {m}");
    }
    assert!(rejected.is_empty(), "the kernel rejected:\n{}", rejected.join("\n"));
    assert!(mismatches.is_empty(), "{} fields differ:\n{}", mismatches.len(), mismatches.join("\n"));
    assert!(functions >= MIN_COMPARED, "only {functions} functions compared (need {MIN_COMPARED})");
    let _ = std::fs::remove_dir_all(&dir);
}
