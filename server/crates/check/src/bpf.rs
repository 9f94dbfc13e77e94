//! Checking compiled BPF objects against kernels: every CO-RE relocation resolved as
//! libbpf resolves it (fevlint-bpf), every program's attach point against the kernel's
//! facts, and the findings of the `B` rules at the `.bpf.c` line and column the object's
//! line info gives.

use std::sync::Arc;

use crate::diagnostic::{Diagnostic, Origin};
use fevlint_bpf::btf::Btf;
use fevlint_bpf::core::Target;
use fevlint_bpf::object::SourcePos;
use fevlint_bpf::{BpfObject, Outcome, Program, Resolution};
use fevlint_kernel::Kernel;
use fevlint_syntax::Span;

/// A kernel ready for CO-RE: its facts and its BTF (none: CO-RE cannot be decided there).
#[derive(Debug)]
pub struct BpfKernel<'k> {
    pub kernel: &'k Kernel,
    pub btf: Option<Arc<Btf>>,
    /// The split BTF of the modules loaded on that kernel (its folder's `btf/`, a copy of
    /// `/sys/kernel/btf`), on top of [`Self::btf`]; `None` when the kernel's files do not
    /// say which modules it has (a kfunc missing from vmlinux may then be a module's).
    pub modules: Option<Vec<Btf>>,
}

impl<'k> BpfKernel<'k> {
    /// The kernel's own BTF reader (no second parse; its candidate index comes from the
    /// cache when a run built it before), and its modules' split BTF when it has them (a
    /// module that does not parse is left out).
    pub fn new(kernel: &'k Kernel) -> BpfKernel<'k> {
        let inputs = kernel.inputs();
        let btf = kernel.btf().cloned();
        let modules = match (&btf, &inputs.module_btf_dir) {
            (Some(base), Some(_)) => Some(
                inputs
                    .module_btf
                    .iter()
                    .filter_map(|m| {
                        Btf::parse_split(m.from.path.display().to_string(), m.value.clone(), base.clone()).ok()
                    })
                    .collect(),
            ),
            _ => None,
        };
        BpfKernel { kernel, btf, modules }
    }
}

/// One kernel's view of one object.
#[derive(Debug)]
pub struct PerKernel<'a> {
    pub kernel: &'a Kernel,
    pub target: Option<&'a Target<'a>>,
    /// [`BpfKernel::modules`].
    pub modules: Option<&'a [Btf]>,
    /// Every CO-RE record in `.BTF.ext` order (empty without BTF).
    pub resolutions: Vec<Resolution>,
    /// Per resolution: its instruction is dead code on this kernel once the existence
    /// checks are patched (the verifier never reaches it), so a poisoning is harmless.
    pub dead: Vec<bool>,
    /// Per resolution: dead only because of a read-only global's value in the object (a
    /// `const volatile` flag in `.rodata`, which a loader may set before loading).
    pub dead_by_read_only: Vec<bool>,
}

/// What the `B` rules look at.
#[derive(Debug)]
pub struct BpfContext<'a> {
    pub object: &'a BpfObject,
    /// Per program of the object, whether libbpf loads its code
    /// ([`BpfObject::loaded_programs`]).
    pub loaded: Vec<bool>,
    /// In the order the kernels were given.
    pub kernels: Vec<PerKernel<'a>>,
}

/// A finding and where in the C source it is.
#[derive(Clone, Debug)]
pub struct BpfFinding {
    pub source: Option<SourcePos>,
    /// Text to point at when the source has it (a program's `SEC("...")` string, which
    /// line info does not locate), searched before `source` takes over.
    pub anchor: Option<String>,
    /// The program it is about (its function name); `None` for the whole object.
    pub program: Option<String>,
    /// The CO-RE relocation it is about: it goes at the name the access ends in.
    pub relocation: Option<Relocated>,
    /// Its span is empty until [`BpfFinding::span_in`] puts it in the source text.
    pub diagnostic: Diagnostic,
}

impl BpfFinding {
    /// Where the finding goes in `text`, the source its [`Self::source`] names: its anchor
    /// when the text has it; a relocation at the name its access ends in
    /// ([`place_relocation`]); else the line and column line info gives. Every output (the
    /// CLI's formats and the language server) places a finding with this.
    pub fn span_in(&self, text: &str) -> Span {
        if let Some(at) = self.anchor.as_deref().and_then(|a| text.find(a).map(|at| Span::new(at, at + a.len()))) {
            return at;
        }
        let Some(src) = &self.source else { return Span::new(0, 0) };
        match &self.relocation {
            Some(r) => place_relocation(text, &r.kind, &r.subject, src, r.next.as_ref()).0,
            None => place(text, src.line, src.column),
        }
    }
}

/// What puts a CO-RE relocation at the name its access ends in: its kind, what it reads
/// ([`Resolution::subject`]) and the line-info record after its instruction in the same
/// program and file (clang schedules an offset load ahead of its line's record).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relocated {
    pub kind: String,
    pub subject: String,
    pub next: Option<SourcePos>,
}

impl Relocated {
    pub fn of(object: &BpfObject, r: &Resolution) -> Relocated {
        let next =
            r.source.as_ref().and_then(|s| object.source_after(&r.section, r.insn_off).filter(|a| a.file == s.file));
        Relocated { kind: r.kind.clone(), subject: r.subject(), next }
    }
}

impl BpfContext<'_> {
    /// A diagnostic of `rule` about `kernel`, at `source`.
    pub fn finding(
        &self,
        rule: &impl Origin,
        kernel: Option<&Kernel>,
        source: Option<SourcePos>,
        message: String,
    ) -> BpfFinding {
        let mut d = Diagnostic::new(rule, Span::new(0, 0), message);
        d.kernel = kernel.map(|k| Arc::from(k.name.as_str()));
        BpfFinding { source, anchor: None, program: None, relocation: None, diagnostic: d }
    }

    /// A diagnostic of `rule` about relocation `r` on `kernel`, at the name its access
    /// ends in; about `r`'s program.
    pub fn relocation_finding(
        &self,
        rule: &impl Origin,
        kernel: Option<&Kernel>,
        r: &Resolution,
        message: String,
    ) -> BpfFinding {
        let mut f = self.finding(rule, kernel, r.source.clone(), message);
        f.relocation = Some(Relocated::of(self.object, r));
        f
    }

    /// Whether a failing relocation is guarded on kernel `k` (index in [`Self::kernels`]):
    /// its instruction is unreachable once libbpf has patched the existence checks
    /// (`bpf_core_field_exists()` and friends) there, as the verifier walks the program.
    pub fn guarded(&self, k: usize, i: usize) -> bool {
        self.kernels.get(k).and_then(|pk| pk.dead.get(i)).copied().unwrap_or(false)
    }

    /// Whether [`Self::guarded`] holds only through a read-only global's value in the
    /// object ([`PerKernel::dead_by_read_only`]).
    pub fn guarded_by_read_only(&self, k: usize, i: usize) -> bool {
        self.kernels.get(k).and_then(|pk| pk.dead_by_read_only.get(i)).copied().unwrap_or(false)
    }

    /// Whether a relocation lies in a subprogram no program calls: libbpf relocates it but
    /// never loads it, so only a failure that refuses the whole object matters there.
    pub fn never_loaded(&self, r: &Resolution) -> bool {
        self.object
            .programs
            .iter()
            .position(|p| Some(&p.name) == r.program.as_ref() && p.section == r.section)
            .is_some_and(|at| self.loaded.get(at) == Some(&false))
    }

    /// The source position of a program's first instruction.
    pub fn program_source(&self, p: &Program) -> Option<SourcePos> {
        u32::try_from(p.offset).ok().and_then(|off| self.object.source(&p.section, off))
    }
}

/// Per resolution, whether the verifier never reaches its instruction on that kernel.
///
/// A subprogram no program calls is never loaded (libbpf appends a subprogram's code only
/// to the programs that call it): all of it is dead.
/// `loaded` is [`BpfObject::loaded_programs`].
pub fn dead_code(object: &BpfObject, loaded: &[bool], resolutions: &[Resolution]) -> Vec<bool> {
    let mut reach: std::collections::HashMap<&str, Option<Vec<bool>>> = std::collections::HashMap::new();
    dead_with(object, loaded, resolutions, &mut reach, fevlint_bpf::flow::reachable)
}

/// Per resolution, whether it is dead code ([`dead_code`]) only because the walk reads
/// the object's read-only globals as constants: with them unknown it is reached.
pub fn dead_by_read_only(object: &BpfObject, loaded: &[bool], resolutions: &[Resolution], dead: &[bool]) -> Vec<bool> {
    if !dead.iter().zip(resolutions).any(|(d, r)| *d && !matches!(r.outcome, Outcome::Value { .. })) {
        return vec![false; resolutions.len()];
    }
    let mut reach: std::collections::HashMap<&str, Option<Vec<bool>>> = std::collections::HashMap::new();
    let without = dead_with(object, loaded, resolutions, &mut reach, fevlint_bpf::flow::reachable_whatever_read_only);
    dead.iter().zip(without).map(|(d, w)| *d && !w).collect()
}

type Walk = fn(&BpfObject, &Program, &[Resolution]) -> Option<Vec<bool>>;

fn dead_with<'o>(
    object: &'o BpfObject,
    loaded: &[bool],
    resolutions: &[Resolution],
    reach: &mut std::collections::HashMap<&'o str, Option<Vec<bool>>>,
    walk: Walk,
) -> Vec<bool> {
    resolutions
        .iter()
        .map(|r| {
            let Some((at, p)) = object
                .programs
                .iter()
                .enumerate()
                .find(|(_, p)| Some(&p.name) == r.program.as_ref() && p.section == r.section)
            else {
                return false;
            };
            // A subprogram is walked from its own entry, its arguments unknown (the walk
            // does not follow calls): an existence check inside it still decides.
            if p.def.is_none() && loaded.get(at) == Some(&false) {
                return true;
            }
            let seen = reach.entry(p.name.as_str()).or_insert_with(|| walk(object, p, resolutions));
            let i = (u64::from(r.insn_off).saturating_sub(p.offset) / 8) as usize;
            seen.as_ref().is_some_and(|s| s.get(i) == Some(&false))
        })
        .collect()
}

/// The byte span of 1-based `line`:`column` in `text`: the identifier (or character)
/// that starts there; the line's start when the column is past it.
pub fn place(text: &str, line: u32, column: u32) -> Span {
    let Some(start) = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1) as usize)
        .map(str::len)
        .try_fold(0usize, |a, l| a.checked_add(l))
    else {
        return Span::new(0, 0);
    };
    if start >= text.len() {
        return Span::new(text.len(), text.len());
    }
    let line_text = text[start..].split('\n').next().unwrap_or("");
    let col = (column.max(1) - 1) as usize;
    if col >= line_text.len() || !line_text.is_char_boundary(col) {
        let first = line_text.len() - line_text.trim_start().len();
        return Span::new(start + first, start + line_text.len());
    }
    let rest = &line_text[col..];
    let word = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(rest.len());
    let len = if word == 0 { rest.chars().next().map_or(0, char::len_utf8) } else { word };
    Span::new(start + col, start + col + len)
}

/// [`place`], or the first occurrence of `anchor` in `text` when there is one.
pub fn place_finding(text: &str, anchor: Option<&str>, line: u32, column: u32) -> Span {
    match anchor.and_then(|a| text.find(a).map(|at| (at, a.len()))) {
        Some((at, len)) => Span::new(at, at + len),
        None => place(text, line, column),
    }
}

/// Whether the text before a name (trimmed) is what precedes such a name in C.
type Precedes = fn(&str) -> bool;

/// How a relocation's place was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// The name its access ends in, on the line of its line info record (or of the next
    /// record: clang schedules a CO-RE offset load ahead of its line's record).
    Name,
    /// That name is not there (a macro's access): the identifier at the record's column.
    Column,
    /// Neither the name nor a column (0): the line.
    Line,
}

/// What a relocation's access names, as the source spells it (`subject` is
/// [`Resolution::subject`]): an enum's enumerator, a field access's last
/// member, or a type relocation's type; and whether a name there is preceded by what
/// precedes such a name in C (`->`, `.` or `,` before a member; `,` or `(` before an
/// enumerator; `struct`/`union`/`enum`, `(` or `,` before a type).
fn access_name(subject: &str) -> Option<(&str, Precedes)> {
    let ident = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if let Some((_, e)) = subject.split_once("::") {
        return ident(e).then_some((e, |before: &str| before.ends_with(',') || before.ends_with('(')));
    }
    let rest = subject.split_once(' ').map_or(subject, |x| x.1);
    match rest.split_once('.') {
        Some((_, members)) => {
            let last = members.rsplit('.').next()?.split('[').next()?;
            ident(last).then_some((last, |b: &str| b.ends_with("->") || b.ends_with('.') || b.ends_with(',')))
        }
        None => {
            let ty = rest.split('[').next()?;
            let before = |b: &str| {
                let word = b.rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next().unwrap_or("");
                matches!(word, "struct" | "union" | "enum") || b.ends_with('(') || b.ends_with(',')
            };
            ident(ty).then_some((ty, before))
        }
    }
}

/// Where a relocation sits in `text`: the name its access ends in ([`access_name`]) on
/// the line of its record `src`, else on the line of the `next` record; of several there,
/// the one at the record's column, else the first after it, else the first; for a kind
/// only a macro emits ([`macro_of`]), one inside that macro's call first (a line that
/// tests `bpf_core_enum_value_exists(E, V)` above one that reads `bpf_core_enum_value(E,
/// V)`). Else the identifier at the column, else (no column) the line.
pub fn place_relocation(
    text: &str,
    kind: &str,
    subject: &str,
    src: &SourcePos,
    next: Option<&SourcePos>,
) -> (Span, How) {
    let line_at = |line: u32| {
        let start = place(text, line, 1).start;
        let end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        (start, &text[start..end])
    };
    let Some((name, fits)) = access_name(subject) else { return place_unnamed(text, src) };
    // The name inside the macro of libbpf's headers that emits this kind (for a kind no
    // such macro emits, outside all of them), else anywhere.
    let first = match macro_of(kind) {
        Some(m) => Within::Macro(m),
        None => Within::NoMacro,
    };
    for within in [first, Within::Anywhere] {
        for pos in std::iter::once(src).chain(next) {
            if pos.line == 0 {
                continue;
            }
            let (start, line) = line_at(pos.line);
            let is_word = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
            let at: Vec<usize> = line
                .match_indices(name)
                .map(|(i, _)| i)
                .filter(|&i| {
                    !is_word(line[..i].bytes().last()) && !is_word(line.as_bytes().get(i + name.len()).copied())
                })
                .filter(|&i| fits(line[..i].trim_end()))
                .filter(|&i| match within {
                    Within::Macro(m) => in_call(&line[..i], m),
                    Within::NoMacro => !MACROS.iter().any(|m| in_call(&line[..i], m)),
                    Within::Anywhere => true,
                })
                .collect();
            let col = pos.column.saturating_sub(1) as usize;
            let best = at.iter().find(|&&i| i == col).or_else(|| at.iter().find(|&&i| pos.column > 0 && i > col));
            if let Some(&i) = best.or(at.first()) {
                return (Span::new(start + i, start + i + name.len()), How::Name);
            }
        }
    }
    place_unnamed(text, src)
}

/// Where a relocation's name is looked for on a line, in [`place_relocation`]'s passes.
#[derive(Clone, Copy)]
enum Within {
    /// Inside a call of this macro.
    Macro(&'static str),
    /// Inside none of [`MACROS`]' calls: a plain read is not the access a
    /// `bpf_core_field_exists(t->state)` above it tests.
    NoMacro,
    Anywhere,
}

/// The macros of [`macro_of`].
const MACROS: [&str; 9] = [
    "bpf_core_field_exists",
    "bpf_core_field_size",
    "bpf_core_type_exists",
    "bpf_core_type_size",
    "bpf_core_type_matches",
    "bpf_core_type_id_local",
    "bpf_core_type_id_kernel",
    "bpf_core_enum_value_exists",
    "bpf_core_enum_value",
];

/// Whether the end of `before` is inside the parentheses of a call of `name` (the last
/// `name(` in it, not closed since).
fn in_call(before: &str, name: &str) -> bool {
    let call = format!("{name}(");
    let Some(at) = before.rfind(&call) else { return false };
    if before[..at].bytes().last().is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return false;
    }
    let mut depth = 1i32;
    for b in before[at + call.len()..].bytes() {
        match b {
            b'(' => depth += 1,
            b')' => depth -= 1,
            _ => {}
        }
        if depth == 0 {
            return false;
        }
    }
    true
}

/// The macro of `bpf_core_read.h` whose builtin emits a relocation of `kind`, for the
/// kinds that only such a macro emits.
fn macro_of(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "field_exists" => "bpf_core_field_exists",
        "byte_sz" => "bpf_core_field_size",
        "type_exists" => "bpf_core_type_exists",
        "type_size" => "bpf_core_type_size",
        "type_matches" => "bpf_core_type_matches",
        "local_type_id" => "bpf_core_type_id_local",
        "target_type_id" => "bpf_core_type_id_kernel",
        "enumval_exists" => "bpf_core_enum_value_exists",
        "enumval_value" => "bpf_core_enum_value",
        _ => return None,
    })
}

/// A relocation whose name is not found: at the identifier at its column, else (no
/// column) on its line.
fn place_unnamed(text: &str, src: &SourcePos) -> (Span, How) {
    let start = place(text, src.line, 1).start;
    let line = text[start..].split('\n').next().unwrap_or("");
    if src.column == 0 || src.column as usize > line.len() {
        let first = line.len() - line.trim_start().len();
        return (Span::new(start + first, start + line.len()), How::Line);
    }
    (place(text, src.line, src.column), How::Column)
}

/// The relocation's outcome in words, for notes.
pub fn outcome_text(r: &Resolution) -> String {
    match &r.outcome {
        Outcome::Value { value } => format!("= {value}"),
        Outcome::Poisoned { reason } => format!("poisoned: {reason}"),
        Outcome::Failed { reason, .. } => format!("libbpf fails: {reason}"),
    }
}

/// Where a relocation is, for notes: `relo #3 of kprobe/vfs_read (insn 16, read_probe)`.
pub fn relo_place(r: &Resolution) -> String {
    let prog = r.program.as_deref().map(|p| format!(", `{p}`")).unwrap_or_default();
    format!("relo #{} of `{}` (insn {}{prog})", r.index, r.section, r.insn_off / 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_become_the_identifier_there() {
        let text = "int a;\n\tout[1] = BPF_CORE_READ(t, state);\n";
        let s = place(text, 2, 11);
        assert_eq!(&text[s.start..s.end], "BPF_CORE_READ");
        let s = place(text, 2, 99);
        assert_eq!(&text[s.start..s.end], "out[1] = BPF_CORE_READ(t, state);");
        assert_eq!(place(text, 40, 1), Span::new(text.len(), text.len()));
        assert_eq!(place("", 0, 0), Span::new(0, 0));
    }

    #[test]
    fn a_relocation_sits_at_the_name_its_access_ends_in() {
        let text = "int x;\n\tout[0] = (long)BPF_CORE_READ(task, mm, exe_file);\n\tout[1] = task->pid + task->tgid;\n";
        let pos = |line, column| SourcePos { file: String::new(), line, column };
        let at = |subject: &str, src: SourcePos, next: Option<SourcePos>| {
            let (span, how) = place_relocation(text, "byte_off", subject, &src, next.as_ref());
            (&text[span.start..span.end], how)
        };
        // Column of the macro: the member found by name.
        assert_eq!(at("struct mm_struct.exe_file", pos(2, 17), None), ("exe_file", How::Name));
        // Scheduled ahead of its line's record: found on the next record's line.
        assert_eq!(at("struct task_struct.mm", pos(1, 5), Some(pos(2, 17))), ("mm", How::Name));
        // Two accesses on one line: each at its own member.
        assert_eq!(at("struct task_struct.pid", pos(3, 17), None), ("pid", How::Name));
        assert_eq!(at("struct task_struct.tgid", pos(3, 29), None), ("tgid", How::Name));
        // Not spelled there: the identifier at the column, else the line.
        assert_eq!(at("struct file.f_version", pos(2, 17), None), ("BPF_CORE_READ", How::Column));
        let line = "out[0] = (long)BPF_CORE_READ(task, mm, exe_file);";
        assert_eq!(at("struct file.f_version", pos(2, 0), None), (line, How::Line));
        // A variable of the member's name is not the member.
        assert_eq!(at("struct s.task", pos(2, 17), None), ("BPF_CORE_READ", How::Column));
        // Of two macros naming the same enumerator, the one of the relocation's kind.
        let text = "\tx = bpf_core_enum_value_exists(enum e___new, V___new);\n\ty = bpf_core_enum_value(enum e___new, V___new);\n";
        let (span, how) =
            place_relocation(text, "enumval_value", "enum e___new::V___new", &pos(1, 5), Some(&pos(2, 5)));
        assert_eq!((span.start, how), (text.rfind("V___new").expect("name"), How::Name));
        let (span, _) = place_relocation(text, "enumval_exists", "enum e___new::V___new", &pos(1, 5), Some(&pos(2, 5)));
        assert_eq!(span.start, text.find("V___new").expect("name"));
        // A read on the line after the existence check of the same member (drift.bpf.c's
        // `guarded`, hoisted to the check's line): at the read, not inside the check.
        let text =
            "\tif (bpf_core_field_exists(((struct o *)t)->state))\n\t\tx = BPF_CORE_READ((struct o *)t, state);\n";
        let (span, how) = place_relocation(text, "byte_off", "struct o.state", &pos(1, 6), Some(&pos(2, 7)));
        assert_eq!((span.start, how), (text.rfind("state").expect("name"), How::Name));
        let (span, _) = place_relocation(text, "field_exists", "struct o.state", &pos(1, 6), Some(&pos(2, 7)));
        assert_eq!(span.start, text.find("state").expect("name"));
        // With no read elsewhere, the name inside a check is still the best place.
        let (span, _) = place_relocation(text, "byte_off", "struct o.state", &pos(1, 6), None);
        assert_eq!(span.start, text.find("state").expect("name"));
        assert!(in_call("a(bpf_core_field_exists(x->", "bpf_core_field_exists"));
        assert!(!in_call("bpf_core_field_exists(x->y) && x->", "bpf_core_field_exists"));
        assert!(!in_call("my_bpf_core_field_exists(x->", "bpf_core_field_exists"));
        assert_eq!(access_name("enum e___new::V___new").map(|x| x.0), Some("V___new"));
        assert_eq!(access_name("struct s.a[3]").map(|x| x.0), Some("a"));
        assert_eq!(access_name("struct task_struct___old").map(|x| x.0), Some("task_struct___old"));
    }
}
