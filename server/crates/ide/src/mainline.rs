//! Completion and hover for the mainline dialect (`*.dynevents`, `kprobe_events` lines),
//! from the text before the cursor and the kernels: the probe kinds, function and
//! tracepoint names, registers and `$` variables with the parameter each holds at the
//! entry, BTF parameter names and members after `->`/`.`, and the `:TYPE`s the kernel's
//! README lists; the hover on a probe's place shows its prototype on each kernel.
//!
//! The line is read the way the kernel splits it (`argv_split`: words at blanks, a `#`
//! ends the line); what each word means comes from its position, as in
//! `__trace_kprobe_create`: the head, the place, then `NAME=FETCH:TYPE` arguments.

use crate::kernel_aware::{fuzzy_rank, members};
use crate::{Completion, CompletionKind, Hover};
use fevlint_check::dynevents;
use fevlint_kernel::Kernel;
use fevlint_syntax::Span;
use fevlint_types::abi;
use fevlint_types::layout;
use fevlint_types::model::{Prototype, Type};

/// The `:TYPE`s of the kernel's README (`type: s8/16/32/64, …`), with what each records.
const TYPES: &[(&str, &str)] = &[
    ("u8", "1 byte, unsigned decimal"),
    ("u16", "2 bytes, unsigned decimal"),
    ("u32", "4 bytes, unsigned decimal"),
    ("u64", "8 bytes, unsigned decimal"),
    ("s8", "1 byte, signed decimal"),
    ("s16", "2 bytes, signed decimal"),
    ("s32", "4 bytes, signed decimal"),
    ("s64", "8 bytes, signed decimal"),
    ("x8", "1 byte, hexadecimal"),
    ("x16", "2 bytes, hexadecimal"),
    ("x32", "4 bytes, hexadecimal"),
    ("x64", "8 bytes, hexadecimal"),
    ("char", "1 byte, as a character"),
    ("string", "the NUL-terminated string at the address (kernel or, on x86, user memory)"),
    ("ustring", "the NUL-terminated string at the address, through the user accessors"),
    ("symbol", "an address, printed as `symbol+offset`"),
    ("symstr", "an address, stored as the `symbol+offset` string"),
    ("%pd", "the name of the `struct dentry *`"),
    ("%pD", "the name of the `struct file *`'s dentry"),
];

/// The `$` variables of the README, with where they are allowed.
const VARIABLES: &[(&str, &str)] = &[
    ("$retval", "the return value (return probes)"),
    ("$stack", "the kernel stack pointer"),
    ("$stack0", "the Nth entry of the kernel stack (`$stack0` is the return address at the entry)"),
    ("$comm", "the current task's `comm`"),
    ("$arg*", "every parameter, named as in BTF (6.12)"),
];

/// The x86_64 `pt_regs` names a fetch can use, the argument registers first.
const REGISTERS: &[&str] = &[
    "di", "si", "dx", "cx", "r8", "r9", "ax", "bx", "bp", "sp", "ip", "flags", "r10", "r11", "r12", "r13", "r14", "r15",
];

/// The words of one line before `offset`: (words with their start, where the line starts).
fn words_before(text: &str, offset: usize) -> (Vec<(usize, &str)>, usize) {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[line_start..offset];
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        if c == ' ' || c == '\t' {
            if let Some(s) = start.take() {
                words.push((line_start + s, &line[s..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    match start {
        Some(s) => words.push((line_start + s, &line[s..])),
        None => words.push((offset, "")),
    }
    (words, line_start)
}

fn item(
    label: &str,
    kind: CompletionKind,
    detail: String,
    documentation: String,
    replace: Span,
    rank: u32,
) -> Completion {
    Completion::new(label, kind, replace).with_detail(detail).with_documentation(documentation).with_rank(rank)
}

/// What the probe's place names: (whether it is a tracepoint, the place).
fn place_of<'t>(words: &[(usize, &'t str)]) -> Option<(bool, &'t str, u8)> {
    let head = words.first()?.1.as_bytes().first().copied()?;
    let place = words.get(1)?.1;
    let place = place.split(['+', '%']).next().unwrap_or(place);
    Some((head == b't', place, head))
}

/// Completions at `offset` of a mainline-dialect text (empty where there is nothing to
/// offer). Kernel-free items (probe kinds, types, variables) come without a kernel too.
pub fn completions(text: &str, offset: usize, kernels: &[&Kernel]) -> Vec<Completion> {
    let offset = fevlint_syntax::floor_char_boundary(text, offset);
    let (words, line_start) = words_before(text, offset);
    if text[line_start..offset].contains('#') {
        return Vec::new();
    }
    let Some(&(word_start, word)) = words.last() else { return Vec::new() };
    let index = words.len() - 1;
    match index {
        0 => heads(word, Span::new(word_start, offset)),
        1 => {
            if let Some((name, typed)) = word.split_once('+') {
                let head = words[0].1.as_bytes().first().copied();
                if matches!(head, Some(b'p' | b'r')) && !name.contains(':') {
                    let replace = Span::new(word_start + name.len() + 1, offset);
                    return boundaries(kernels, head == Some(b'r'), name, typed, replace);
                }
            }
            if word.contains(['+', '%', ':']) || kernels.is_empty() {
                return Vec::new();
            }
            let tracepoint = words[0].1.starts_with('t');
            places(kernels, tracepoint, word, Span::new(word_start, offset))
        }
        _ => argument(&words, word_start, word, offset, kernels),
    }
}

/// How many instructions of a function `SYM+` offers.
const BOUNDARIES: usize = 12;

/// After `SYM+`: the offsets where an instruction of `SYM` starts and a kprobe is
/// accepted on some kernel (a return probe: its entry only), the first few, with the
/// instruction there and what is special about it (ENDBR64, the ftrace call site).
fn boundaries(kernels: &[&Kernel], retprobe: bool, symbol: &str, typed: &str, replace: Span) -> Vec<Completion> {
    use fevlint_kernel::code::{ProbePoint, Refusal};
    let hex = typed.starts_with("0x") || typed.starts_with("0X");
    let dialects: Vec<_> = kernels.iter().filter_map(|k| Some((*k, dynevents::dialect_for(k).ok()?))).collect();
    let envs: Vec<(&Kernel, dynevents::KernelEnv<'_>)> =
        dialects.iter().map(|(k, d)| (*k, dynevents::KernelEnv::new(k, d))).collect();
    // Every kernel's first instructions: the offsets offered (the first kernel's words).
    let mut offsets: Vec<dynevents::ProbePlace> = Vec::new();
    for (_, env) in &envs {
        for p in env.probe_places(symbol, BOUNDARIES).unwrap_or_default() {
            if !offsets.iter().any(|o| o.offset == p.offset) {
                offsets.push(p);
            }
        }
    }
    offsets.sort_by_key(|p| p.offset);
    let mut out = Vec::new();
    for place in offsets {
        let label = if hex { format!("{:#x}", place.offset) } else { place.offset.to_string() };
        if !label.starts_with(typed) {
            continue;
        }
        // What each kernel answers for a probe there.
        let (mut yes, mut no) = (Vec::new(), Vec::new());
        for (k, env) in &envs {
            let why = match env.probe_point(symbol, place.offset) {
                _ if retprobe => (place.offset != env.entry_offset(symbol) && place.offset != 0)
                    .then(|| "a return probe must be on the entry".to_owned()),
                Some(ProbePoint::Accepted { .. }) => None,
                Some(ProbePoint::Refused(Refusal::Invalid(why) | Refusal::Unsupported(why))) => Some(why.to_owned()),
                Some(ProbePoint::Refused(Refusal::NotBoundary { .. })) => {
                    Some("not an instruction boundary there".to_owned())
                }
                Some(ProbePoint::Unknown(why)) => Some(format!("not known: {why}")),
                None => Some(format!("not known: {}", env.why_unknown(symbol, place.offset))),
            };
            match why {
                None => yes.push(k.name.clone()),
                Some(why) => no.push(format!("{}: {why}", k.name)),
            }
        }
        if yes.is_empty() {
            continue;
        }
        let detail = match &place.note {
            Some(n) => format!("{}: {n}", place.text),
            None => place.text.clone(),
        };
        let mut doc = format!("`{symbol}+{label}`: accepted on {}", yes.join(", "));
        if !no.is_empty() {
            doc.push_str(&format!("\n\nnot accepted on {}", no.join("; ")));
        }
        let rank = out.len() as u32;
        let mut c = item(&label, CompletionKind::Value, detail, doc, replace, rank);
        c.preferred = no.is_empty();
        out.push(c);
    }
    out
}

fn heads(word: &str, replace: Span) -> Vec<Completion> {
    let all = [
        ("p:", "a kprobe at `[MOD:]SYM[+OFFS]` or an address"),
        ("r:", "a kretprobe: at the function's return"),
        ("f:", "an fprobe at a function's entry (`%return`: its exit); 6.12"),
        ("t:", "a tprobe on a tracepoint, typed from its BTF prototype; 6.12"),
        ("-:", "removes an event"),
    ];
    all.iter()
        .enumerate()
        .filter(|(_, (h, _))| h.starts_with(word) && word.len() < h.len())
        .map(|(i, (h, d))| item(h, CompletionKind::Keyword, (*d).to_owned(), String::new(), replace, i as u32))
        .collect()
}

/// Function names (`p:`, `r:`, `f:`) or tracepoint names (`t:`: those with a stub).
fn places(kernels: &[&Kernel], tracepoint: bool, typed: &str, replace: Span) -> Vec<Completion> {
    if !tracepoint {
        return crate::kernel_aware::function_completions(kernels, typed, replace);
    }
    let mut found: Vec<(u8, usize, String)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for k in kernels {
        for name in k.function_names().iter() {
            let Some(tp) = name.strip_prefix("__probestub_") else { continue };
            let Some(rank) = fuzzy_rank(tp, typed) else { continue };
            if seen.insert(tp.to_owned()) {
                found.push((rank, tp.len(), tp.to_owned()));
            }
        }
    }
    found.sort_unstable();
    found.truncate(crate::FUNCTION_LIMIT);
    found
        .into_iter()
        .enumerate()
        .map(|(i, (_, _, tp))| {
            let (detail, doc) = prototype_doc(kernels, true, &tp);
            let mut c = item(&tp, CompletionKind::Function, detail, doc, replace, i as u32);
            c.preferred = true;
            c
        })
        .collect()
}

/// `name(params)` on the first kernel that has it, and every kernel's in Markdown.
fn prototype_doc(kernels: &[&Kernel], tracepoint: bool, place: &str) -> (String, String) {
    let mut detail = String::new();
    let mut doc = String::new();
    for k in kernels {
        let Some(types) = k.types() else { continue };
        let Some(proto) = dynevents::place_prototype(k, tracepoint, place) else {
            doc.push_str(&format!("### {}\nnot in this kernel's BTF\n\n", k.name));
            continue;
        };
        let sig = c_prototype(types, place, &proto);
        if detail.is_empty() {
            detail.clone_from(&sig);
        }
        doc.push_str(&format!("### {}\n```c\n{sig}\n```\n", k.name));
        if let Ok(locs) = abi::locate(k.arch, types, &proto) {
            for (i, l) in locs.iter().enumerate() {
                let at = match (&l.loc, tracepoint) {
                    (_, true) => format!("`$arg{}`", i + 1),
                    (abi::Loc::Reg(r), false) => format!("`$arg{}`, `%{}`", i + 1, r.trim_start_matches('r')),
                    _ => format!("`$arg{}`", i + 1),
                };
                let name = l.name.clone().unwrap_or_default();
                let ty = layout::type_name(types, l.ty).unwrap_or_default();
                doc.push_str(&format!("- {at}: `{name}` (`{ty}`)\n"));
            }
        }
        doc.push('\n');
    }
    (detail, doc.trim_end().to_owned())
}

fn c_prototype(types: &dyn fevlint_types::model::TypeSource, name: &str, proto: &Prototype) -> String {
    let ret = proto.ret.map_or_else(|| "void".to_owned(), |r| layout::type_name(types, r).unwrap_or_default());
    let params: Vec<String> = proto
        .params
        .iter()
        .map(|p| layout::declaration(types, p.ty, p.name.as_deref().unwrap_or("")).unwrap_or_default())
        .collect();
    format!("{ret} {name}({})", params.join(", "))
}

/// Inside an argument: its fetch (registers, variables, BTF names, members) or its type.
fn argument(
    words: &[(usize, &str)],
    word_start: usize,
    word: &str,
    offset: usize,
    kernels: &[&Kernel],
) -> Vec<Completion> {
    // `NAME=` first; a `:` after the fetch starts the type.
    let body_at = word.find('=').map_or(0, |i| i + 1);
    let body = &word[body_at..];
    if let Some(colon) = body.rfind(':') {
        if !body[colon..].contains([')', '(']) {
            let typed = &body[colon + 1..];
            let replace = Span::new(word_start + body_at + colon + 1, offset);
            return types(kernels, typed, replace);
        }
    }
    // The innermost fetch being typed: after the last `(`.
    let inner_at = body.rfind('(').map_or(0, |i| i + 1);
    let inner = &body[inner_at..];
    let inner_start = word_start + body_at + inner_at;
    let place = place_of(words);
    if let Some(rest) = inner.strip_prefix('%') {
        let replace = Span::new(inner_start + 1, offset);
        return registers(kernels, place, rest, replace);
    }
    if inner.starts_with('$') {
        let replace = Span::new(inner_start, offset);
        return variables(kernels, place, inner, replace);
    }
    if inner.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        // `base->a.b` so far: the members of what it reaches, else the parameter names.
        let cut = inner.rfind("->").map(|i| (i, 2)).into_iter().chain(inner.rfind('.').map(|i| (i, 1))).max();
        return match cut {
            Some((at, len)) => {
                let typed = &inner[at + len..];
                let replace = Span::new(inner_start + at + len, offset);
                member_names(kernels, place, &inner[..at + len], typed, replace)
            }
            None => params(kernels, place, inner, Span::new(inner_start, offset)),
        };
    }
    Vec::new()
}

/// The dialect of the first kernel that has one (its README decides the types).
fn readme(kernels: &[&Kernel]) -> Option<String> {
    kernels.iter().find_map(|k| dynevents::dialect_for(k).ok()).map(|d| d.readme)
}

fn types(kernels: &[&Kernel], typed: &str, replace: Span) -> Vec<Completion> {
    let readme = readme(kernels);
    TYPES
        .iter()
        .filter(|(t, _)| t.starts_with(typed))
        .filter(|(t, _)| match &readme {
            // What the README's `type:` lines list (6.1 has no `char`, `symstr`, `%pd`).
            Some(r) => {
                let listed = r.lines().skip_while(|l| !l.trim_start().starts_with("type:")).take(3).collect::<String>();
                match *t {
                    "char" | "symstr" | "ustring" | "string" | "symbol" => listed.contains(t),
                    "%pd" | "%pD" => listed.contains("%pd"),
                    _ => true,
                }
            }
            None => true,
        })
        .enumerate()
        .map(|(i, (t, d))| item(t, CompletionKind::Type, (*d).to_owned(), String::new(), replace, i as u32))
        .collect()
}

/// The parameters of the probe's place on `k`, with their ABI places at the entry.
fn located(k: &Kernel, place: Option<(bool, &str, u8)>) -> Option<(Vec<abi::ParamLoc>, bool)> {
    let (tracepoint, name, _) = place?;
    let types = k.types()?;
    let proto = dynevents::place_prototype(k, tracepoint, name)?;
    Some((abi::locate(k.arch, types, &proto).ok()?, tracepoint))
}

fn registers(kernels: &[&Kernel], place: Option<(bool, &str, u8)>, typed: &str, replace: Span) -> Vec<Completion> {
    let at_entry = place.is_some_and(|(tp, _, head)| !tp && matches!(head, b'p' | b'f'));
    let located = kernels.first().and_then(|k| located(k, place).map(|l| (k, l)));
    REGISTERS
        .iter()
        .filter(|r| r.starts_with(typed))
        .enumerate()
        .map(|(i, r)| {
            let holds = located.as_ref().filter(|_| at_entry).and_then(|(k, (locs, _))| {
                let types = k.types()?;
                let l = locs.iter().find(
                    |l| matches!(&l.loc, abi::Loc::Reg(x) if x.trim_start_matches('r') == *r || *x == format!("r{r}")),
                )?;
                Some(format!(
                    "`{}` (`{}`) at the entry on {}",
                    l.name.clone().unwrap_or_default(),
                    layout::type_name(types, l.ty).unwrap_or_default(),
                    k.name
                ))
            });
            let mut c = item(
                r,
                CompletionKind::Keyword,
                holds.clone().unwrap_or_else(|| "a register".to_owned()),
                String::new(),
                replace,
                i as u32,
            );
            c.preferred = holds.is_some();
            c
        })
        .collect()
}

fn variables(kernels: &[&Kernel], place: Option<(bool, &str, u8)>, typed: &str, replace: Span) -> Vec<Completion> {
    let mut out = Vec::new();
    // `$argN` with the parameter each is.
    if let Some((k, (locs, _))) = kernels.first().and_then(|k| located(k, place).map(|l| (k, l))) {
        if let Some(types) = k.types() {
            for (i, l) in locs.iter().enumerate() {
                let label = format!("$arg{}", i + 1);
                if !label.starts_with(typed) {
                    continue;
                }
                let detail = format!(
                    "`{}` (`{}`) on {}",
                    l.name.clone().unwrap_or_default(),
                    layout::type_name(types, l.ty).unwrap_or_default(),
                    k.name
                );
                let mut c = item(&label, CompletionKind::Parameter, detail, String::new(), replace, i as u32);
                c.preferred = true;
                out.push(c);
            }
        }
    }
    let retprobe = place.is_some_and(|(_, _, head)| head == b'r');
    for (i, (v, d)) in VARIABLES.iter().enumerate() {
        if !v.starts_with(typed) || (*v == "$retval" && !retprobe && place.is_some_and(|(_, _, h)| h == b'p')) {
            continue;
        }
        out.push(item(v, CompletionKind::Keyword, (*d).to_owned(), String::new(), replace, 100 + i as u32));
    }
    out
}

/// BTF parameter names (6.12 dialects with `<argname>`).
fn params(kernels: &[&Kernel], place: Option<(bool, &str, u8)>, typed: &str, replace: Span) -> Vec<Completion> {
    let Some((tracepoint, name, _)) = place else { return Vec::new() };
    for k in kernels {
        if !dynevents::dialect_for(k).is_ok_and(|d| d.btf_args) {
            continue;
        }
        let (Some(types), Some(proto)) = (k.types(), dynevents::place_prototype(k, tracepoint, name)) else { continue };
        return proto
            .params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| {
                let n = p.name.as_deref()?;
                fuzzy_rank(n, typed)?;
                let ty = layout::type_name(types, p.ty).unwrap_or_default();
                let mut c = item(
                    n,
                    CompletionKind::Parameter,
                    format!("{ty} (parameter {} on {})", i + 1, k.name),
                    String::new(),
                    replace,
                    i as u32,
                );
                c.preferred = true;
                Some(c)
            })
            .collect();
    }
    Vec::new()
}

/// The members after `base->a.` (the text up to and including the last `->` or `.`).
fn member_names(
    kernels: &[&Kernel],
    place: Option<(bool, &str, u8)>,
    path: &str,
    typed: &str,
    replace: Span,
) -> Vec<Completion> {
    let Some((tracepoint, name, _)) = place else { return Vec::new() };
    // `file->f_path.` → base `file`, steps [(->, f_path)], then the separator typed last.
    let (path, arrow) = match path.strip_suffix("->") {
        Some(p) => (p, true),
        None => (path.strip_suffix('.').unwrap_or(path), false),
    };
    let mut steps: Vec<(bool, String)> = Vec::new();
    let mut rest = path;
    let base_end = rest.find(['-', '.']).unwrap_or(rest.len());
    let base = &rest[..base_end];
    rest = &rest[base_end..];
    while !rest.is_empty() {
        let (is_arrow, after) = match rest.strip_prefix("->") {
            Some(a) => (true, a),
            None => (false, rest.strip_prefix('.').unwrap_or("")),
        };
        let end = after.find(['-', '.']).unwrap_or(after.len());
        if end == 0 {
            return Vec::new();
        }
        steps.push((is_arrow, after[..end].to_owned()));
        rest = &after[end..];
    }
    for k in kernels {
        let Some(types) = k.types() else { continue };
        let Some(ty) = dynevents::path_type(k, tracepoint, name, base, &steps) else { continue };
        let container = if arrow {
            match layout::strip(types, ty).map(|(_, t)| t) {
                Ok(Type::Pointer { target }) => target,
                _ => return Vec::new(),
            }
        } else {
            ty
        };
        let Ok(list) = members(types, container) else { continue };
        let container_name = layout::type_name(types, container).unwrap_or_default();
        let mut out = Vec::new();
        for m in list.iter().filter(|m| !m.name.contains('.') && !m.name.contains('[')) {
            let Some(rank) = fuzzy_rank(&m.name, typed) else { continue };
            let mut c = item(
                &m.name,
                CompletionKind::Member,
                format!("{} at +{} ({} bytes) of `{container_name}` on {}", m.ty, m.offset, m.size, k.name),
                String::new(),
                replace,
                u32::from(rank) * 10_000 + out.len() as u32,
            );
            c.preferred = rank == 0;
            out.push(c);
        }
        return out;
    }
    Vec::new()
}

/// The hover on a probe's place (the word after the head): its prototype on each kernel
/// with the `$argN` and register each parameter is in at the entry.
pub fn place_hover(text: &str, offset: usize, kernels: &[&Kernel]) -> Option<Hover> {
    if kernels.is_empty() {
        return None;
    }
    let offset = fevlint_syntax::floor_char_boundary(text, offset);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = &text[line_start..line_end];
    let mut words = Vec::new();
    let mut pos = 0;
    for w in line.split([' ', '\t']) {
        if !w.is_empty() {
            words.push((line_start + pos, w));
        }
        pos += w.len() + 1;
        if words.len() == 2 {
            break;
        }
    }
    let (start, word) = *words.get(1)?;
    if offset < start || offset > start + word.len() || words[0].1.starts_with(['-', '#']) {
        return None;
    }
    let tracepoint = words[0].1.starts_with('t');
    let name = word.split(['+', '%']).next().unwrap_or(word);
    let name = name.rsplit(':').next().unwrap_or(name);
    let (_, doc) = prototype_doc(kernels, tracepoint, name);
    if doc.is_empty() {
        return None;
    }
    let title = if tracepoint { format!("tracepoint `{name}`") } else { format!("`{name}`") };
    Some(Hover { span: Span::new(start, start + word.len()), markdown: format!("{title}\n\n{doc}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kernel(name: &str) -> Kernel {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/kernels").join(name);
        Kernel::open(&path).expect("fixture kernel")
    }

    fn shown(items: &[Completion]) -> Vec<(String, String)> {
        items.iter().map(|c| (c.label.clone(), c.detail.clone())).collect()
    }

    /// After `SYM+`: the instruction starts of `vfs_read` in each fixture's image, the
    /// ENDBR64 and the ftrace call site explained; a return probe gets its entry only.
    #[test]
    fn offsets_after_a_symbol_are_its_instruction_boundaries() {
        let k612 = kernel("6.12.117+deb12-amd64");
        let text = "p:demo/a vfs_read+";
        let items = completions(text, text.len(), &[&k612]);
        let got = shown(&items);
        eprintln!("{got:#?}");
        assert_eq!(items[0].replace, Span::new(text.len(), text.len()));
        let labels: Vec<&str> = got.iter().map(|(l, _)| l.as_str()).take(4).collect();
        assert_eq!(labels, ["0", "4", "9", "11"]);
        assert_eq!(got[0].1, "endbr64: ENDBR64: a probe on `+0` is moved past it, to `+4`");
        assert_eq!(got[1].1, "call __fentry__: the ftrace call site: a kprobe here is put on ftrace, no breakpoint");
        assert_eq!(got[2].1, "push");
        // 6.1 has no ENDBR64: the fentry call is at +0.
        let k61 = kernel("6.1.0-56-amd64");
        let items = completions(text, text.len(), &[&k61]);
        let got = shown(&items);
        assert_eq!(got[0].0, "0");
        assert!(got[0].1.starts_with("call __fentry__: the ftrace call site"), "{got:?}");
        assert_eq!(got[1].0, "5");
        // Both kernels: `+4` is offered, and said to be refused on 6.1.
        let items = completions(text, text.len(), &[&k612, &k61]);
        let four = items.iter().find(|c| c.label == "4").expect("+4");
        assert!(
            four.documentation.contains("not accepted on 6.1.0-56-amd64: not an instruction boundary there"),
            "{four:?}"
        );
        assert!(!four.preferred);
        // Typed digits and hex.
        let text = "p:demo/a vfs_read+1";
        let labels: Vec<String> = completions(text, text.len(), &[&k612]).into_iter().map(|c| c.label).collect();
        assert!(labels.iter().all(|l| l.starts_with('1')) && labels.contains(&"11".to_owned()), "{labels:?}");
        let text = "p:demo/a vfs_read+0x";
        let labels: Vec<String> = completions(text, text.len(), &[&k612]).into_iter().map(|c| c.label).collect();
        assert_eq!(labels[..3], ["0x0", "0x4", "0x9"]);
        // A return probe: the entry only.
        let text = "r:demo/r vfs_read+";
        let labels: Vec<String> = completions(text, text.len(), &[&k612]).into_iter().map(|c| c.label).collect();
        assert_eq!(labels, ["0", "4"]);
    }
}
