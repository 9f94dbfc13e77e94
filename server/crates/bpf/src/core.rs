//! CO-RE relocations resolved against a kernel's BTF as libbpf 1.1 resolves them.
//!
//! A transcription of libbpf's `src/relo_core.c` (`bpf_core_parse_spec`,
//! `bpf_core_spec_match`, `bpf_core_match_member`, `bpf_core_fields_are_compat`,
//! `__bpf_core_types_are_compat`, `__bpf_core_types_match`, `bpf_core_calc_*_relo`,
//! `bpf_core_calc_relo_insn`, `bpf_core_patch_insn`) and of the candidate search and cache
//! in `src/libbpf.c` (`bpf_core_find_cands`, `bpf_core_add_cands`,
//! `bpf_object__relocate_core`), statement for statement where the order matters: the
//! candidate list of a local type is shared by all its relocations, in record order, and
//! pruned to the candidates that matched, so one relocation's match decides what the next
//! one sees. Where libbpf reads past an array in C, this returns an error instead.

use std::collections::HashMap;

use fevlint_btf::{Btf, BtfKind};
use fevlint_types::model::ModelError;
use serde::Serialize;

use crate::btfx::{essential_name, essential_name_len, kind_str, Ty, View};
use crate::ext::{CoreRelo, ReloKind};
use crate::object::{BpfObject, Insn, SourcePos};

/// `BPF_CORE_SPEC_MAX_LEN`.
const SPEC_MAX_LEN: usize = 64;

const EINVAL: i32 = -22;
const E2BIG: i32 = -7;
const ERANGE: i32 = -34;
const EOPNOTSUPP: i32 = -95;
/// libbpf's "poison this instruction" signal.
const EUCLEAN: i32 = -117;

/// A libbpf error: the errno it returns and the message it (or we) would print.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fail {
    errno: i32,
    msg: String,
}

impl Fail {
    fn new(errno: i32, msg: impl Into<String>) -> Fail {
        Fail { errno, msg: msg.into() }
    }
}

impl From<ModelError> for Fail {
    fn from(e: ModelError) -> Fail {
        Fail::new(EINVAL, e.to_string())
    }
}

type R<T> = Result<T, Fail>;

/// `struct bpf_core_accessor`.
#[derive(Clone, Debug)]
struct Acc<'a> {
    type_id: u32,
    idx: i32,
    name: Option<&'a [u8]>,
}

/// `struct bpf_core_spec`.
#[derive(Clone, Debug)]
struct Spec<'a> {
    root_type_id: u32,
    kind: ReloKind,
    spec: Vec<Acc<'a>>,
    raw: Vec<i32>,
    bit_offset: u32,
}

impl<'a> Spec<'a> {
    fn new(root_type_id: u32, kind: ReloKind) -> Spec<'a> {
        Spec { root_type_id, kind, spec: Vec::new(), raw: Vec::new(), bit_offset: 0 }
    }
}

/// What a relocation becomes on one kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum Outcome {
    /// The instruction is patched with this value (the existence kinds give 0 or 1).
    Value { value: u64 },
    /// libbpf replaces the instruction with an invalid call: the verifier rejects the
    /// program if that instruction is reachable.
    Poisoned {
        #[serde(rename = "error")]
        reason: String,
    },
    /// libbpf refuses the whole object (`failed to relocate`, `failed to patch`).
    Failed {
        errno: i32,
        #[serde(rename = "error")]
        reason: String,
    },
}

impl Outcome {
    pub fn value(&self) -> Option<u64> {
        match self {
            Outcome::Value { value } => Some(*value),
            _ => None,
        }
    }
}

/// One CO-RE relocation record resolved against one target BTF.
#[derive(Clone, Debug, Serialize)]
pub struct Resolution {
    /// The ELF section of the instruction.
    pub section: String,
    /// Position among that section's CO-RE records (libbpf's `relo #N`).
    pub index: usize,
    pub insn_off: u32,
    /// libbpf's kind name, or `unknown(N)`.
    pub kind: String,
    #[serde(skip)]
    pub relo_kind: Option<ReloKind>,
    pub type_id: u32,
    /// The local type: `struct task_struct___old`.
    #[serde(rename = "type")]
    pub type_name: String,
    pub access: String,
    /// libbpf's debug rendering of the local spec (`<byte_off> [5] struct s.f (0:1 @ offset 4)`).
    pub local_spec: Option<String>,
    /// libbpf's rendering of the spec of the first matching candidate.
    pub target_spec: Option<String>,
    /// How many candidates of the (pruned) list matched.
    pub matches: usize,
    #[serde(flatten)]
    pub outcome: Outcome,
    pub source: Option<SourcePos>,
    /// The program the instruction belongs to.
    pub program: Option<String>,
}

impl Resolution {
    /// What the relocation reads, in C-like form: `struct task_struct___old.state`,
    /// `enum bpf_func_id::BPF_FUNC_ktime_get_ns`, `struct file` (from libbpf's spec text).
    pub fn subject(&self) -> String {
        let Some(spec) = &self.local_spec else { return self.type_name.clone() };
        let s = spec.split_once("] ").map_or(spec.as_str(), |x| x.1);
        let s = s.split(" (").next().unwrap_or(s);
        s.split(" = ").next().unwrap_or(s).to_owned()
    }
}

/// A target BTF ready for candidate searches: named types by essential name, in id order
/// (the order of libbpf's linear scan).
#[derive(Debug)]
pub struct Target<'k> {
    view: View<'k>,
}

impl<'k> Target<'k> {
    /// Nothing is read or built here: the candidates of a local type are found through
    /// the BTF's essential-name index, built on first use (or mapped from the index
    /// cache of a kernel opened with one), so a check that needs a handful of types
    /// never walks the kernel's hundred thousand.
    pub fn new(btf: &'k Btf) -> Target<'k> {
        Target { view: View::new(btf) }
    }

    pub fn btf(&self) -> &'k Btf {
        self.view.btf
    }

    pub(crate) fn view(&self) -> &View<'k> {
        &self.view
    }

    /// Own types whose essential name equals `name`'s, in id order.
    fn by_essential<'a>(&'a self, name: &'a [u8]) -> impl Iterator<Item = u32> + 'a {
        let ess = essential_name(name);
        self.view.btf.essential_candidates(name).map(|id| id.0).filter(move |&id| {
            self.view.ty(id).is_ok_and(|t| self.view.name(t.name_off).is_ok_and(|n| essential_name(n) == ess))
        })
    }

    /// `btf__find_by_name_kind`: the first type (in id order) of this kind and exact name.
    pub fn find(&self, kind: BtfKind, name: &str) -> Option<u32> {
        self.by_essential(name.as_bytes()).find(|&id| {
            self.view
                .ty(id)
                .is_ok_and(|t| t.kind == Some(kind) && self.view.name(t.name_off).is_ok_and(|n| n == name.as_bytes()))
        })
    }

    /// Whether the BTF has a type of this kind and exact name.
    pub fn has(&self, kind: BtfKind, name: &str) -> bool {
        self.find(kind, name).is_some()
    }

    /// `bpf_core_add_cands` over vmlinux: same kind (any enum for enums), same essential name.
    fn candidates(&self, local_t: &Ty, local_name: &[u8]) -> R<Vec<u32>> {
        let mut out = Vec::new();
        for id in self.by_essential(local_name) {
            let t = self.view.ty(id)?;
            if t.core_compat(local_t) {
                out.push(id);
            }
        }
        Ok(out)
    }
}

/// Resolves every CO-RE record of `obj` against `target`, in libbpf's order (sections of
/// `.BTF.ext`, then records), with libbpf's shared candidate cache.
///
/// A record whose instruction belongs to no function of the object is left out, as
/// libbpf's `bpf_object__relocate_core` skips it ("belonging to eliminated weak
/// subprogram": the static linker keeps a `__weak` subprogram's `.BTF.ext` records when
/// another object's definition replaces it), before it could touch the candidate cache.
pub fn resolve(obj: &BpfObject, target: &Target) -> Vec<Resolution> {
    let (Some(btf), Some(ext)) = (&obj.btf, &obj.ext) else { return Vec::new() };
    let local = View::new(btf);
    let mut cache: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut out = Vec::with_capacity(ext.core_relo_count());
    for sec in &ext.core_relo {
        let sec_name = sec.name.clone().unwrap_or_else(|| format!("<string {}>", sec.name_off));
        for (index, rec) in sec.records.iter().enumerate() {
            if rec.insn_off.is_multiple_of(8) && obj.program_at(&sec_name, u64::from(rec.insn_off)).is_none() {
                continue;
            }
            out.push(resolve_one(obj, &local, target, &mut cache, &sec_name, index, rec));
        }
    }
    out
}

fn resolve_one(
    obj: &BpfObject,
    local: &View,
    target: &Target,
    cache: &mut HashMap<u32, Vec<u32>>,
    section: &str,
    index: usize,
    rec: &CoreRelo,
) -> Resolution {
    let relo_kind = ReloKind::from_raw(rec.kind);
    let type_name = match local.ty(rec.type_id) {
        Ok(t) => {
            let n = local.name_str(t.name_off);
            format!("{} {}", kind_str(t.kind), if n.is_empty() { "<anon>".into() } else { n })
        }
        Err(_) => format!("[{}]", rec.type_id),
    };
    let access = local.name_str(rec.access_str_off);
    let mut r = Resolution {
        section: section.to_owned(),
        index,
        insn_off: rec.insn_off,
        kind: relo_kind.map_or_else(|| format!("unknown({})", rec.kind), |k| k.name().to_owned()),
        relo_kind,
        type_id: rec.type_id,
        type_name,
        access,
        local_spec: None,
        target_spec: None,
        matches: 0,
        outcome: Outcome::Value { value: 0 },
        source: obj.source(section, rec.insn_off),
        program: obj.program_at(section, u64::from(rec.insn_off)).map(|p| p.name.clone()),
    };
    r.outcome = match compute(obj, local, target, cache, section, rec, &mut r) {
        Ok(o) => o,
        Err(f) => Outcome::Failed { errno: f.errno, reason: f.msg },
    };
    r
}

/// `bpf_core_relo_res`.
#[derive(Clone, Debug, Default)]
struct Res {
    orig_val: u64,
    new_val: u64,
    poison: bool,
    validate: bool,
    fail_memsz_adjust: bool,
    orig_sz: u32,
    new_sz: u32,
    orig_type_id: u32,
    new_type_id: u32,
    /// Why the instruction is poisoned (ours, for the message).
    why: Option<String>,
}

fn compute(
    obj: &BpfObject,
    local: &View,
    target: &Target,
    cache: &mut HashMap<u32, Vec<u32>>,
    section: &str,
    rec: &CoreRelo,
    r: &mut Resolution,
) -> R<Outcome> {
    if !rec.insn_off.is_multiple_of(8) {
        return Err(Fail::new(EINVAL, format!("instruction offset {} is not a multiple of 8", rec.insn_off)));
    }
    // bpf_core_resolve_relo
    let local_t = local.ty(rec.type_id)?;
    let local_name = local.name(local_t.name_off)?;
    let kind = ReloKind::from_raw(rec.kind);
    if kind != Some(ReloKind::TypeIdLocal) && !cache.contains_key(&rec.type_id) {
        if local_name.is_empty() {
            return Err(Fail::new(
                EINVAL,
                format!(
                    "target candidate search failed for [{}] {} <anon>: anonymous types have no candidates",
                    rec.type_id,
                    kind_str(local_t.kind)
                ),
            ));
        }
        let cands = target.candidates(&local_t, local_name)?;
        cache.insert(rec.type_id, cands);
    }
    // bpf_core_calc_relo_insn
    let Some(kind) = kind else {
        return Err(Fail::new(EINVAL, format!("unrecognized CO-RE relocation kind {}", rec.kind)));
    };
    let local_spec = parse_spec(local, rec, kind).map_err(|f| {
        Fail::new(EINVAL, format!("parsing [{}] {} + {} failed: {}", rec.type_id, r.type_name, r.access, f.msg))
    })?;
    r.local_spec = Some(format_spec(local, &local_spec));
    let tview = &target.view;
    let mut res;
    if kind == ReloKind::TypeIdLocal {
        res = Res {
            orig_val: u64::from(local_spec.root_type_id),
            new_val: u64::from(local_spec.root_type_id),
            ..Res::default()
        };
    } else {
        if local_name.is_empty() {
            return Err(Fail::new(EOPNOTSUPP, format!("<{}> relocation doesn't support anonymous types", kind.name())));
        }
        let cands = cache.get(&rec.type_id).cloned().unwrap_or_default();
        let mut kept = Vec::new();
        let mut targ: Option<(Res, Spec)> = None;
        let mut deepest: Option<(usize, u32)> = None;
        for &cand in &cands {
            let (matched, cand_spec) = spec_match(local, &local_spec, tview, cand)?;
            if !matched {
                let reached = cand_spec.spec.len();
                if deepest.is_none_or(|(d, _)| reached > d) {
                    deepest = Some((reached, cand));
                }
                continue;
            }
            if r.target_spec.is_none() {
                // libbpf logs the match before it computes (and maybe fails on) it.
                r.target_spec = Some(format_spec(tview, &cand_spec));
            }
            let cand_res = calc_relo(local, tview, kind, &local_spec, Some(&cand_spec))?;
            match &targ {
                None => {
                    targ = Some((cand_res, cand_spec));
                }
                Some((t_res, t_spec)) => {
                    if cand_spec.bit_offset != t_spec.bit_offset {
                        return Err(Fail::new(
                            EINVAL,
                            format!("field offset ambiguity: {} != {}", cand_spec.bit_offset, t_spec.bit_offset),
                        ));
                    }
                    if cand_res.poison != t_res.poison || cand_res.new_val != t_res.new_val {
                        let d = |p: bool| if p { "failure" } else { "success" };
                        return Err(Fail::new(
                            EINVAL,
                            format!(
                                "relocation decision ambiguity: {} {} != {} {}",
                                d(cand_res.poison),
                                cand_res.new_val,
                                d(t_res.poison),
                                t_res.new_val
                            ),
                        ));
                    }
                }
            }
            kept.push(cand);
        }
        r.matches = kept.len();
        if !kept.is_empty() {
            cache.insert(rec.type_id, kept);
        }
        res = match targ {
            Some((res, _)) => res,
            None => {
                let mut res = calc_relo(local, tview, kind, &local_spec, None)?;
                if res.poison {
                    res.why = Some(explain_miss(local, &local_spec, tview, &r.type_name, cands.len(), deepest));
                }
                res
            }
        };
    }
    // bpf_core_patch_insn
    let Some((insn, next)) = obj.insn(section, rec.insn_off) else {
        return Err(Fail::new(EINVAL, format!("no instruction at offset {} of `{section}`", rec.insn_off)));
    };
    patch(&insn, next.as_ref(), &mut res)
}

/// Why no candidate matched: the type is missing, or the first access step that no
/// candidate has.
fn explain_miss(
    local: &View,
    local_spec: &Spec,
    _target: &View,
    type_name: &str,
    cands: usize,
    deepest: Option<(usize, u32)>,
) -> String {
    if cands == 0 {
        return format!("`{}` does not exist", strip_flavour(type_name));
    }
    let Some((reached, _)) = deepest else { return format!("no `{type_name}` matches") };
    if local_spec.kind.is_enumval_based() {
        let name = local_spec.spec.first().and_then(|a| a.name).unwrap_or_default();
        return format!(
            "`{}` has no enumerator `{}`",
            strip_flavour(type_name),
            String::from_utf8_lossy(essential_name(name))
        );
    }
    match local_spec.spec.get(reached) {
        Some(acc) => {
            // The kernel's name for the type: the local one without its `___flavour`.
            let owner = local
                .ty(acc.type_id)
                .map(|t| {
                    let name = local.name(t.name_off).unwrap_or_default();
                    format!("{} {}", kind_str(t.kind), String::from_utf8_lossy(essential_name(name)))
                })
                .unwrap_or_default();
            match acc.name {
                Some(n) => format!("`{owner}` has no member `{}` of a compatible type", String::from_utf8_lossy(n)),
                None => format!("index [{}] is out of bounds", acc.idx),
            }
        }
        None => format!("`{type_name}` does not match"),
    }
}

/// `struct task_struct___old` -> `struct task_struct`.
fn strip_flavour(type_name: &str) -> String {
    match type_name.split_once(' ') {
        Some((kind, name)) => format!("{kind} {}", String::from_utf8_lossy(essential_name(name.as_bytes()))),
        None => type_name.to_owned(),
    }
}

/// `bpf_core_parse_spec`.
fn parse_spec<'a>(btf: &View<'a>, relo: &CoreRelo, kind: ReloKind) -> R<Spec<'a>> {
    let spec_str = btf.name(relo.access_str_off)?;
    if spec_str.is_empty() || spec_str[0] == b':' {
        return Err(Fail::new(EINVAL, "empty or malformed access string"));
    }
    let mut spec = Spec::new(relo.type_id, kind);
    if kind.is_type_based() {
        if spec_str != b"0" {
            return Err(Fail::new(EINVAL, "a type relocation's access string must be `0`"));
        }
        return Ok(spec);
    }
    let mut s = spec_str;
    while !s.is_empty() {
        if s[0] == b':' {
            s = &s[1..];
        }
        let (n, used) = scan_int(s).ok_or_else(|| Fail::new(EINVAL, "access string is not `N:N:...`"))?;
        if spec.raw.len() == SPEC_MAX_LEN {
            return Err(Fail::new(E2BIG, "access string longer than 64 steps"));
        }
        s = &s[used..];
        spec.raw.push(n);
    }
    if spec.raw.is_empty() {
        return Err(Fail::new(EINVAL, "empty access string"));
    }
    let (t, mut id) = btf.skip_mods(relo.type_id)?;
    let access_idx = spec.raw[0];
    spec.spec.push(Acc { type_id: id, idx: access_idx, name: None });

    if kind.is_enumval_based() {
        if !t.is_any_enum() || spec.raw.len() > 1 || access_idx < 0 || access_idx >= i32::from(t.vlen) {
            return Err(Fail::new(EINVAL, "enumerator index out of range"));
        }
        let e = btf.enumerator(&t, access_idx as usize)?;
        spec.spec[0].name = Some(btf.name(e.name_off)?);
        return Ok(spec);
    }
    if !kind.is_field_based() {
        return Err(Fail::new(EINVAL, "unknown relocation kind"));
    }
    let sz = size(btf, id)?;
    spec.bit_offset = (i64::from(access_idx).wrapping_mul(sz).wrapping_mul(8)) as u32;
    for i in 1..spec.raw.len() {
        let (t, tid) = btf.skip_mods(id)?;
        id = tid;
        let access_idx = spec.raw[i];
        if t.is_composite() {
            if access_idx < 0 || access_idx >= i32::from(t.vlen) {
                return Err(Fail::new(
                    EINVAL,
                    format!("member index {access_idx} past the {} members of [{id}]", t.vlen),
                ));
            }
            let m = btf.member(&t, access_idx as usize)?;
            spec.bit_offset = spec.bit_offset.wrapping_add(View::member_bit_offset(&t, &m));
            if m.name_off != 0 {
                let name = btf.name(m.name_off)?;
                if name.is_empty() {
                    return Err(Fail::new(EINVAL, "member with an empty name"));
                }
                spec.spec.push(Acc { type_id: id, idx: access_idx, name: Some(name) });
            }
            id = m.ty;
        } else if t.is(BtfKind::Array) {
            let (elem, _, nelems) = btf.array(&t)?;
            let (_, eid) = btf.skip_mods(elem)?;
            id = eid;
            let flex = match spec.spec.last() {
                Some(prev) => is_flex_arr(btf, prev, nelems)?,
                None => false,
            };
            if !flex && (access_idx as u32) >= nelems {
                return Err(Fail::new(EINVAL, format!("array index {access_idx} past {nelems} elements")));
            }
            if spec.spec.len() == SPEC_MAX_LEN {
                return Err(Fail::new(E2BIG, "access string longer than 64 steps"));
            }
            spec.spec.push(Acc { type_id: id, idx: access_idx, name: None });
            let sz = size(btf, id)?;
            spec.bit_offset =
                spec.bit_offset.wrapping_add((i64::from(access_idx).wrapping_mul(sz).wrapping_mul(8)) as u32);
        } else {
            return Err(Fail::new(
                EINVAL,
                format!("step {i} of the access string reaches [{id}] of unexpected kind {}", kind_str(t.kind)),
            ));
        }
    }
    Ok(spec)
}

/// `sscanf(s, "%d%n")`: optional whitespace and sign, then digits (wrapping like glibc's
/// `long` conversion truncated to `int`).
fn scan_int(s: &[u8]) -> Option<(i32, usize)> {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r') {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add(i64::from(s[i] - b'0'));
        i += 1;
    }
    if i == start {
        return None;
    }
    Some(((if neg { -v } else { v }) as i32, i))
}

/// `btf__resolve_size` as an error when it fails.
fn size(btf: &View, id: u32) -> R<i64> {
    match btf.resolve_size(id)? {
        Ok(s) => Ok(s as i64),
        Err(e) => Err(Fail::new(e, format!("cannot size type [{id}]"))),
    }
}

/// `is_flex_arr`: a zero-length array that is the last member of the struct that holds it.
fn is_flex_arr(btf: &View, acc: &Acc, nelems: u32) -> R<bool> {
    if acc.name.is_none() || nelems > 0 {
        return Ok(false);
    }
    let t = btf.ty(acc.type_id)?;
    Ok(acc.idx == i32::from(t.vlen) - 1)
}

/// `bpf_core_fields_are_compat`.
fn fields_are_compat(local: &View, mut lid: u32, targ: &View, mut tid: u32) -> R<bool> {
    for _ in 0..SPEC_MAX_LEN {
        let (lt, _) = local.skip_mods(lid)?;
        let (tt, _) = targ.skip_mods(tid)?;
        if lt.is_composite() && tt.is_composite() {
            return Ok(true);
        }
        if !lt.core_compat(&tt) {
            return Ok(false);
        }
        match lt.kind {
            Some(BtfKind::Ptr | BtfKind::Float) => return Ok(true),
            Some(BtfKind::Fwd | BtfKind::Enum | BtfKind::Enum64) => {
                let ln = local.name(lt.name_off)?;
                let tn = targ.name(tt.name_off)?;
                let (ll, tl) = (essential_name_len(ln), essential_name_len(tn));
                return Ok(ll == 0 || tl == 0 || (ll == tl && ln[..ll] == tn[..tl]));
            }
            Some(BtfKind::Int) => return Ok(local.int(&lt)?.1 == 0 && targ.int(&tt)?.1 == 0),
            Some(BtfKind::Array) => {
                lid = local.array(&lt)?.0;
                tid = targ.array(&tt)?.0;
            }
            _ => return Ok(false),
        }
    }
    Err(Fail::new(EINVAL, "array of arrays nested too deep"))
}

/// `__bpf_core_types_are_compat`.
fn types_are_compat(local: &View, mut lid: u32, targ: &View, mut tid: u32, level: i32) -> R<bool> {
    let (lt0, tt0) = (local.ty(lid)?, targ.ty(tid)?);
    if !lt0.core_compat(&tt0) {
        return Ok(false);
    }
    let mut depth = 32;
    loop {
        depth -= 1;
        if depth < 0 {
            return Err(Fail::new(EINVAL, "type chain deeper than 32"));
        }
        let (lt, _) = local.skip_mods(lid)?;
        let (tt, _) = targ.skip_mods(tid)?;
        if !lt.core_compat(&tt) {
            return Ok(false);
        }
        match lt.kind {
            None | Some(BtfKind::Struct | BtfKind::Union | BtfKind::Enum | BtfKind::Fwd | BtfKind::Enum64) => {
                return Ok(true)
            }
            Some(BtfKind::Int) => return Ok(local.int(&lt)?.1 == 0 && targ.int(&tt)?.1 == 0),
            Some(BtfKind::Ptr) => {
                lid = lt.size_or_type;
                tid = tt.size_or_type;
            }
            Some(BtfKind::Array) => {
                lid = local.array(&lt)?.0;
                tid = targ.array(&tt)?.0;
            }
            Some(BtfKind::FuncProto) => {
                if lt.vlen != tt.vlen {
                    return Ok(false);
                }
                for i in 0..usize::from(lt.vlen) {
                    if level <= 0 {
                        return Err(Fail::new(EINVAL, "function prototypes nested too deep"));
                    }
                    let (_, lp) = local.skip_mods(local.param(&lt, i)?.1)?;
                    let (_, tp) = targ.skip_mods(targ.param(&tt, i)?.1)?;
                    if !types_are_compat(local, lp, targ, tp, level - 1)? {
                        return Ok(false);
                    }
                }
                lid = local.skip_mods(lt.size_or_type)?.1;
                tid = targ.skip_mods(tt.size_or_type)?.1;
            }
            _ => return Ok(false),
        }
    }
}

/// `bpf_core_types_are_compat` for callers outside the relocation code (externs): `Err`
/// carries why the walk could not finish (libbpf's `-EINVAL`).
pub(crate) fn types_compatible(local: &View, lid: u32, targ: &View, tid: u32) -> Result<bool, String> {
    types_are_compat(local, lid, targ, tid, 32).map_err(|f| f.msg)
}

/// `bpf_core_names_match`.
fn names_match(local: &View, loff: u32, targ: &View, toff: u32) -> R<bool> {
    let ln = local.name(loff)?;
    let tn = targ.name(toff)?;
    if tn.is_empty() {
        return Ok(ln.is_empty());
    }
    let (tl, ll) = (essential_name_len(tn), essential_name_len(ln));
    Ok(tl == ll && ln[..ll] == tn[..tl])
}

/// `bpf_core_enums_match`.
fn enums_match(local: &View, lt: &Ty, targ: &View, tt: &Ty) -> R<bool> {
    if lt.size_or_type != tt.size_or_type || lt.vlen > tt.vlen {
        return Ok(false);
    }
    for i in 0..usize::from(lt.vlen) {
        let ln = local.enumerator(lt, i)?.name_off;
        let mut matched = false;
        for j in 0..usize::from(tt.vlen) {
            if names_match(local, ln, targ, targ.enumerator(tt, j)?.name_off)? {
                matched = true;
                break;
            }
        }
        if !matched {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `bpf_core_composites_match`.
fn composites_match(local: &View, lt: &Ty, targ: &View, tt: &Ty, behind_ptr: bool, level: i32) -> R<bool> {
    if lt.vlen > tt.vlen {
        return Ok(false);
    }
    for i in 0..usize::from(lt.vlen) {
        let lm = local.member(lt, i)?;
        let mut matched = false;
        for j in 0..usize::from(tt.vlen) {
            let tm = targ.member(tt, j)?;
            if !names_match(local, lm.name_off, targ, tm.name_off)? {
                continue;
            }
            if types_match(local, lm.ty, targ, tm.ty, behind_ptr, level - 1)? {
                matched = true;
                break;
            }
        }
        if !matched {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `__bpf_core_types_match`.
fn types_match(local: &View, mut lid: u32, targ: &View, mut tid: u32, mut behind_ptr: bool, level: i32) -> R<bool> {
    if level <= 0 {
        return Err(Fail::new(EINVAL, "types nested too deep to match"));
    }
    let mut depth = 32;
    loop {
        depth -= 1;
        if depth < 0 {
            return Err(Fail::new(EINVAL, "type chain deeper than 32"));
        }
        let (lt, _) = local.skip_mods(lid)?;
        let (tt, _) = targ.skip_mods(tid)?;
        if !names_match(local, lt.name_off, targ, tt.name_off)? {
            return Ok(false);
        }
        let (lk, tk) = (lt.kind, tt.kind);
        match lk {
            None => return Ok(tk.is_none()),
            Some(BtfKind::Fwd) => {
                let lf = lt.kflag;
                return Ok(if behind_ptr {
                    if lk == tk {
                        lf == tt.kflag
                    } else {
                        (tk == Some(BtfKind::Struct) && !lf) || (tk == Some(BtfKind::Union) && lf)
                    }
                } else {
                    lk == tk && lf == tt.kflag
                });
            }
            Some(BtfKind::Enum | BtfKind::Enum64) => {
                if !tt.is_any_enum() {
                    return Ok(false);
                }
                return enums_match(local, &lt, targ, &tt);
            }
            Some(BtfKind::Struct | BtfKind::Union) => {
                if behind_ptr {
                    if lk == tk {
                        return Ok(true);
                    }
                    if tk != Some(BtfKind::Fwd) {
                        return Ok(false);
                    }
                    return Ok((lk == Some(BtfKind::Union)) == tt.kflag);
                }
                if lk != tk {
                    return Ok(false);
                }
                return composites_match(local, &lt, targ, &tt, behind_ptr, level);
            }
            Some(BtfKind::Int) => {
                if lk != tk {
                    return Ok(false);
                }
                let ls = local.int(&lt)?.0 & 1;
                let ts = targ.int(&tt)?.0 & 1;
                return Ok(lt.size_or_type == tt.size_or_type && ls == ts);
            }
            Some(BtfKind::Ptr) => {
                if lk != tk {
                    return Ok(false);
                }
                behind_ptr = true;
                lid = lt.size_or_type;
                tid = tt.size_or_type;
            }
            Some(BtfKind::Array) => {
                if lk != tk {
                    return Ok(false);
                }
                let (le, _, ln) = local.array(&lt)?;
                let (te, _, tn) = targ.array(&tt)?;
                if ln != tn {
                    return Ok(false);
                }
                lid = le;
                tid = te;
            }
            Some(BtfKind::FuncProto) => {
                if lk != tk || lt.vlen != tt.vlen {
                    return Ok(false);
                }
                for i in 0..usize::from(lt.vlen) {
                    if !types_match(local, local.param(&lt, i)?.1, targ, targ.param(&tt, i)?.1, behind_ptr, level - 1)?
                    {
                        return Ok(false);
                    }
                }
                lid = lt.size_or_type;
                tid = tt.size_or_type;
            }
            _ => return Ok(false),
        }
    }
}

/// `bpf_core_match_member`: finds the local accessor's member by name in target type
/// `targ_id`, through anonymous members, extending `spec` as libbpf does (including what
/// libbpf leaves behind on an incompatible match inside an anonymous member).
fn match_member<'t>(
    local: &View,
    local_acc: &Acc,
    targ: &View<'t>,
    targ_id: u32,
    spec: &mut Spec<'t>,
    next_targ_id: &mut u32,
) -> R<bool> {
    let (tt, targ_id) = targ.skip_mods(targ_id)?;
    if !tt.is_composite() {
        return Ok(false);
    }
    let lt = local.ty(local_acc.type_id)?;
    let lm = local.member(&lt, local_acc.idx.max(0) as usize)?;
    let lname = local.name(lm.name_off)?;
    for i in 0..usize::from(tt.vlen) {
        let m = targ.member(&tt, i)?;
        let bit_offset = View::member_bit_offset(&tt, &m);
        if spec.raw.len() == SPEC_MAX_LEN {
            return Err(Fail::new(E2BIG, "struct/union nesting deeper than 64"));
        }
        spec.bit_offset = spec.bit_offset.wrapping_add(bit_offset);
        spec.raw.push(i as i32);
        let tname = targ.name(m.name_off)?;
        if tname.is_empty() {
            if match_member(local, local_acc, targ, m.ty, spec, next_targ_id)? {
                return Ok(true);
            }
        } else if lname == tname {
            spec.spec.push(Acc { type_id: targ_id, idx: i as i32, name: Some(tname) });
            *next_targ_id = m.ty;
            let found = fields_are_compat(local, lm.ty, targ, m.ty)?;
            if !found {
                spec.spec.pop();
            }
            return Ok(found);
        }
        spec.bit_offset = spec.bit_offset.wrapping_sub(bit_offset);
        spec.raw.pop();
    }
    Ok(false)
}

/// `bpf_core_spec_match`: whether the local spec matches candidate `targ_id`, and the
/// target spec (partial when it does not).
fn spec_match<'t>(local: &View, lspec: &Spec, targ: &View<'t>, mut targ_id: u32) -> R<(bool, Spec<'t>)> {
    let mut ts = Spec::new(targ_id, lspec.kind);
    if lspec.kind.is_type_based() {
        let m = if lspec.kind == ReloKind::TypeMatches {
            types_match(local, lspec.root_type_id, targ, targ_id, false, 32)?
        } else {
            types_are_compat(local, lspec.root_type_id, targ, targ_id, 32)?
        };
        return Ok((m, ts));
    }
    if lspec.kind.is_enumval_based() {
        let (tt, tid) = targ.skip_mods(targ_id)?;
        if !tt.is_any_enum() {
            return Ok((false, ts));
        }
        let lname = lspec.spec[0].name.unwrap_or_default();
        let lel = essential_name_len(lname);
        for i in 0..usize::from(tt.vlen) {
            let tname = targ.name(targ.enumerator(&tt, i)?.name_off)?;
            if essential_name_len(tname) != lel {
                continue;
            }
            if lname[..lel] == tname[..lel] {
                ts.spec.push(Acc { type_id: tid, idx: i as i32, name: Some(tname) });
                ts.raw.push(i as i32);
                return Ok((true, ts));
            }
        }
        return Ok((false, ts));
    }
    if !lspec.kind.is_field_based() {
        return Err(Fail::new(EINVAL, "unknown relocation kind"));
    }
    for (i, lacc) in lspec.spec.iter().enumerate() {
        let (tt, tid) = targ.skip_mods(targ_id)?;
        targ_id = tid;
        if lacc.name.is_some() {
            let mut next = targ_id;
            let matched = match_member(local, lacc, targ, targ_id, &mut ts, &mut next)?;
            targ_id = next;
            if !matched {
                return Ok((false, ts));
            }
        } else {
            if i > 0 {
                if !tt.is(BtfKind::Array) {
                    return Ok((false, ts));
                }
                let (elem, _, nelems) = targ.array(&tt)?;
                let flex = match ts.spec.get(i - 1) {
                    Some(prev) => is_flex_arr(targ, prev, nelems)?,
                    None => false,
                };
                if !flex && (lacc.idx as u32) >= nelems {
                    return Ok((false, ts));
                }
                targ_id = targ.skip_mods(elem)?.1;
            }
            if ts.raw.len() == SPEC_MAX_LEN {
                return Err(Fail::new(E2BIG, "struct/union/array nesting deeper than 64"));
            }
            ts.spec.push(Acc { type_id: targ_id, idx: lacc.idx, name: None });
            ts.raw.push(lacc.idx);
            let sz = size(targ, targ_id)?;
            // libbpf computes `int * int * 8` here.
            let add = lacc.idx.wrapping_mul(sz as i32).wrapping_mul(8);
            ts.bit_offset = ts.bit_offset.wrapping_add(add as u32);
        }
    }
    Ok((true, ts))
}

/// `bpf_core_calc_field_relo`: (value, field size, field type id, validate).
fn calc_field_relo(btf: &View, kind: ReloKind, spec: Option<&Spec>) -> R<(u64, u32, u32, bool)> {
    if kind == ReloKind::FieldExists {
        return Ok((u64::from(spec.is_some()), 0, 0, true));
    }
    let Some(spec) = spec else { return Err(Fail::new(EUCLEAN, "poison")) };
    let Some(acc) = spec.spec.last() else { return Err(Fail::new(EINVAL, "empty spec")) };
    let t = btf.ty(acc.type_id)?;
    if acc.name.is_none() {
        let sz = btf.resolve_size(acc.type_id)?.map_err(|_| Fail::new(EINVAL, "cannot size array element"))?;
        return match kind {
            ReloKind::FieldByteOffset => Ok((u64::from(spec.bit_offset / 8), sz as u32, acc.type_id, true)),
            ReloKind::FieldByteSize => Ok((sz, 0, 0, true)),
            _ => Err(Fail::new(EINVAL, format!("relocation {} can't be applied to array access", kind.name()))),
        };
    }
    let m = btf.member(&t, acc.idx.max(0) as usize)?;
    let (mt, field_type_id) = btf.skip_mods(m.ty)?;
    let bit_off = spec.bit_offset;
    let mut bit_sz = View::member_bitfield_size(&t, &m);
    let bitfield = bit_sz > 0;
    let (byte_off, byte_sz);
    if bitfield {
        let mut bsz = mt.size_or_type;
        if bsz == 0 {
            return Err(Fail::new(EINVAL, "bitfield of a zero-sized type"));
        }
        let mut boff = bit_off / 8 / bsz * bsz;
        while u64::from(bit_off) + u64::from(bit_sz) - u64::from(boff) * 8 > u64::from(bsz) * 8 {
            if bsz >= 8 {
                return Err(Fail::new(E2BIG, "bitfield can't be read with a 64-bit load"));
            }
            bsz *= 2;
            boff = bit_off / 8 / bsz * bsz;
        }
        byte_sz = bsz;
        byte_off = boff;
    } else {
        let sz = btf.resolve_size(field_type_id)?.map_err(|_| Fail::new(EINVAL, "cannot size the field"))?;
        byte_sz = sz as u32;
        byte_off = spec.bit_offset / 8;
        bit_sz = byte_sz.wrapping_mul(8);
    }
    let mut validate = !bitfield;
    let (mut field_sz, mut type_id) = (0, 0);
    let val = match kind {
        ReloKind::FieldByteOffset => {
            if !bitfield {
                field_sz = byte_sz;
                type_id = field_type_id;
            }
            u64::from(byte_off)
        }
        ReloKind::FieldByteSize => u64::from(byte_sz),
        ReloKind::FieldSigned => {
            validate = true;
            u64::from((mt.is_any_enum() && mt.kflag) || (btf.int(&mt)?.0 & 1) != 0)
        }
        ReloKind::FieldLshiftU64 => {
            64u64.wrapping_sub(u64::from(bit_off.wrapping_add(bit_sz).wrapping_sub(byte_off.wrapping_mul(8))))
                & 0xffff_ffff
        }
        ReloKind::FieldRshiftU64 => {
            validate = true;
            u64::from(64u32.wrapping_sub(bit_sz))
        }
        _ => return Err(Fail::new(EOPNOTSUPP, "not a field relocation")),
    };
    Ok((val, field_sz, type_id, validate))
}

/// `bpf_core_calc_type_relo`.
fn calc_type_relo(btf: &View, kind: ReloKind, spec: Option<&Spec>) -> R<(u64, bool)> {
    let Some(spec) = spec else { return Ok((0, true)) };
    match kind {
        ReloKind::TypeIdTarget => Ok((u64::from(spec.root_type_id), false)),
        ReloKind::TypeExists | ReloKind::TypeMatches => Ok((1, true)),
        ReloKind::TypeSize => Ok((size(btf, spec.root_type_id)? as u64, true)),
        _ => Err(Fail::new(EOPNOTSUPP, "not a type relocation")),
    }
}

/// `bpf_core_calc_enumval_relo`.
fn calc_enumval_relo(btf: &View, kind: ReloKind, spec: Option<&Spec>) -> R<u64> {
    match kind {
        ReloKind::EnumvalExists => Ok(u64::from(spec.is_some())),
        ReloKind::EnumvalValue => {
            let Some(spec) = spec else { return Err(Fail::new(EUCLEAN, "poison")) };
            let acc = &spec.spec[0];
            let t = btf.ty(acc.type_id)?;
            Ok(btf.enumerator(&t, acc.idx.max(0) as usize)?.value)
        }
        _ => Err(Fail::new(EOPNOTSUPP, "not an enum relocation")),
    }
}

/// `bpf_core_calc_relo`.
fn calc_relo(local: &View, targ: &View, kind: ReloKind, lspec: &Spec, tspec: Option<&Spec>) -> R<Res> {
    let mut res = Res { validate: true, ..Res::default() };
    let err: R<()> = (|| {
        if kind.is_field_based() {
            let (ov, osz, otid, validate) = calc_field_relo(local, kind, Some(lspec))?;
            res.orig_val = ov;
            res.orig_sz = osz;
            res.orig_type_id = otid;
            res.validate = validate;
            let (nv, nsz, ntid, _) = calc_field_relo(targ, kind, tspec)?;
            res.new_val = nv;
            res.new_sz = nsz;
            res.new_type_id = ntid;
            if res.orig_sz != res.new_sz {
                let ot = local.ty(res.orig_type_id)?;
                let nt = targ.ty(res.new_type_id)?;
                if ot.is(BtfKind::Ptr) && nt.is(BtfKind::Ptr) {
                    return Ok(());
                }
                if ot.is(BtfKind::Int) && nt.is(BtfKind::Int) && local.int(&ot)?.0 != 1 && targ.int(&nt)?.0 != 1 {
                    return Ok(());
                }
                res.fail_memsz_adjust = true;
            }
        } else if kind.is_type_based() {
            let (ov, validate) = calc_type_relo(local, kind, Some(lspec))?;
            res.orig_val = ov;
            res.validate = validate;
            res.new_val = calc_type_relo(targ, kind, tspec)?.0;
        } else {
            res.orig_val = calc_enumval_relo(local, kind, Some(lspec))?;
            res.new_val = calc_enumval_relo(targ, kind, tspec)?;
        }
        Ok(())
    })();
    match err {
        Ok(()) => Ok(res),
        Err(f) if f.errno == EUCLEAN => {
            res.poison = true;
            Ok(res)
        }
        Err(f) => Err(f),
    }
}

/// `bpf_core_patch_insn`: the checks libbpf makes before it writes the value.
fn patch(insn: &Insn, next: Option<&Insn>, res: &mut Res) -> R<Outcome> {
    let poisoned =
        |res: &Res| Outcome::Poisoned { reason: res.why.clone().unwrap_or_else(|| "no matching target".into()) };
    if res.poison {
        return Ok(poisoned(res));
    }
    let (orig, new) = (res.orig_val, res.new_val);
    match insn.class() {
        // BPF_ALU, BPF_ALU64
        0x04 | 0x07 => {
            if insn.code & 0x08 != 0 {
                return Err(Fail::new(EINVAL, "relocated ALU instruction does not take an immediate"));
            }
            if res.validate && i64::from(insn.imm) as u64 != orig {
                return Err(Fail::new(
                    EINVAL,
                    format!("unexpected insn (ALU/ALU64) value: got {}, exp {orig} -> {new}", insn.imm as u32),
                ));
            }
        }
        // BPF_LDX, BPF_ST, BPF_STX
        0x01..=0x03 => {
            if res.validate && i64::from(insn.off) as u64 != orig {
                return Err(Fail::new(
                    EINVAL,
                    format!("unexpected insn (LDX/ST/STX) value: got {}, exp {orig} -> {new}", insn.off as u16 as u32),
                ));
            }
            if new > i16::MAX as u64 {
                return Err(Fail::new(ERANGE, format!("insn (LDX/ST/STX) value too big: {new}")));
            }
            if res.fail_memsz_adjust {
                res.why = Some(format!(
                    "the field is {} bytes here but {} in the program, and not a pointer or unsigned integer",
                    res.new_sz, res.orig_sz
                ));
                return Ok(poisoned(res));
            }
            if res.new_sz != res.orig_sz {
                if insn.mem_size() != Some(res.orig_sz) {
                    return Err(Fail::new(
                        EINVAL,
                        format!("insn (LDX/ST/STX) unexpected mem size, expected {}", res.orig_sz),
                    ));
                }
                if !matches!(res.new_sz, 1 | 2 | 4 | 8) {
                    return Err(Fail::new(EINVAL, format!("insn (LDX/ST/STX) invalid new mem size: {}", res.new_sz)));
                }
            }
        }
        // BPF_LD
        0x00 => {
            let Some(next) = next.filter(|n| {
                insn.is_ldimm64()
                    && insn.src == 0
                    && insn.off == 0
                    && n.code == 0
                    && n.dst == 0
                    && n.src == 0
                    && n.off == 0
            }) else {
                return Err(Fail::new(EINVAL, "insn (LDIMM64) has unexpected form"));
            };
            let imm = u64::from(insn.imm as u32) | (u64::from(next.imm as u32) << 32);
            if res.validate && imm != orig {
                return Err(Fail::new(
                    EINVAL,
                    format!("unexpected insn (LDIMM64) value: got {imm}, exp {orig} -> {new}"),
                ));
            }
        }
        _ => return Err(Fail::new(EINVAL, format!("trying to relocate unrecognized insn, code {:#x}", insn.code))),
    }
    Ok(Outcome::Value { value: new })
}

/// `bpf_core_format_spec`: libbpf's rendering, for comparing with its debug log.
fn format_spec(btf: &View, spec: &Spec) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let t = btf.ty(spec.root_type_id).ok();
    let name = t.map(|t| btf.name_str(t.name_off)).unwrap_or_default();
    let _ = write!(
        s,
        "<{}> [{}] {} {}",
        spec.kind.name(),
        spec.root_type_id,
        kind_str(t.and_then(|t| t.kind)),
        if name.is_empty() { "<anon>" } else { &name }
    );
    if spec.kind.is_type_based() {
        return s;
    }
    if spec.kind.is_enumval_based() {
        if let (Ok((t, _)), Some(&i)) = (btf.skip_mods(spec.root_type_id), spec.raw.first()) {
            if let Ok(e) = btf.enumerator(&t, i.max(0) as usize) {
                let n = btf.name_str(e.name_off);
                let v = match (t.is(BtfKind::Enum), t.kflag) {
                    (true, true) => format!("{}", e.value as i32),
                    (true, false) => format!("{}", e.value as u32),
                    (false, true) => format!("{}", e.value as i64),
                    (false, false) => format!("{}", e.value),
                };
                let _ = write!(s, "::{n} = {v}");
            }
        }
        return s;
    }
    for (i, a) in spec.spec.iter().enumerate() {
        match a.name {
            Some(n) => {
                let _ = write!(s, ".{}", String::from_utf8_lossy(n));
            }
            None if i > 0 || a.idx > 0 => {
                let _ = write!(s, "[{}]", a.idx as u32);
            }
            None => {}
        }
    }
    s.push_str(" (");
    for (i, r) in spec.raw.iter().enumerate() {
        let _ = write!(s, "{}{}", if i == 0 { "" } else { ":" }, r);
    }
    if !spec.bit_offset.is_multiple_of(8) {
        let _ = write!(s, " @ offset {}.{})", spec.bit_offset / 8, spec.bit_offset % 8);
    } else {
        let _ = write!(s, " @ offset {})", spec.bit_offset / 8);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_strings_scan_like_sscanf() {
        assert_eq!(scan_int(b"12:3"), Some((12, 2)));
        assert_eq!(scan_int(b"-1"), Some((-1, 2)));
        assert_eq!(scan_int(b" 7"), Some((7, 2)));
        assert_eq!(scan_int(b":1"), None);
        assert_eq!(scan_int(b""), None);
    }
}
