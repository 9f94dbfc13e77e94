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
    /// Its span is empty until [`place`] puts it in the source text.
    pub diagnostic: Diagnostic,
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
        BpfFinding { source, anchor: None, program: None, diagnostic: d }
    }

    /// Whether a failing relocation is guarded on kernel `k` (index in [`Self::kernels`]):
    /// its instruction is unreachable once libbpf has patched the existence checks
    /// (`bpf_core_field_exists()` and friends) there, as the verifier walks the program.
    pub fn guarded(&self, k: usize, i: usize) -> bool {
        self.kernels.get(k).and_then(|pk| pk.dead.get(i)).copied().unwrap_or(false)
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
            let seen =
                reach.entry(p.name.as_str()).or_insert_with(|| fevlint_bpf::flow::reachable(object, p, resolutions));
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
}
