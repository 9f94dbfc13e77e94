//! Attach points as bpftrace 0.17's `AttachPointParser` reads them
//! (`src/ast/attachpoint_parser.cpp`, the `PROBE_LIST` of `src/types.h`): the raw text
//! the grammar glued together is split at unquoted `:`, the probe type resolved from its
//! name or short alias, and each type's parts checked with bpftrace's own messages.

use crate::Span;

/// Probe types. `Fentry`, `Fexit` and `RawTracepoint` are the names later bpftrace
/// releases use; 0.17 refuses them ("Invalid probe type") but fevlint still checks them
/// against the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    Kprobe,
    Kretprobe,
    Uprobe,
    Uretprobe,
    Usdt,
    Begin,
    End,
    Tracepoint,
    Profile,
    Interval,
    Software,
    Hardware,
    Watchpoint,
    AsyncWatchpoint,
    Kfunc,
    Kretfunc,
    Iter,
    Fentry,
    Fexit,
    RawTracepoint,
}

/// `PROBE_LIST` of bpftrace 0.17: name, short alias, kind.
pub const PROBE_LIST: &[(&str, &str, ProbeKind)] = &[
    ("kprobe", "k", ProbeKind::Kprobe),
    ("kretprobe", "kr", ProbeKind::Kretprobe),
    ("uprobe", "u", ProbeKind::Uprobe),
    ("uretprobe", "ur", ProbeKind::Uretprobe),
    ("usdt", "U", ProbeKind::Usdt),
    ("BEGIN", "BEGIN", ProbeKind::Begin),
    ("END", "END", ProbeKind::End),
    ("tracepoint", "t", ProbeKind::Tracepoint),
    ("profile", "p", ProbeKind::Profile),
    ("interval", "i", ProbeKind::Interval),
    ("software", "s", ProbeKind::Software),
    ("hardware", "h", ProbeKind::Hardware),
    ("watchpoint", "w", ProbeKind::Watchpoint),
    ("asyncwatchpoint", "aw", ProbeKind::AsyncWatchpoint),
    ("kfunc", "f", ProbeKind::Kfunc),
    ("kretfunc", "fr", ProbeKind::Kretfunc),
    ("iter", "it", ProbeKind::Iter),
];

/// Names later releases added, which 0.17 does not know.
pub const LATER: &[(&str, &str, ProbeKind, &str)] = &[
    ("fentry", "fentry", ProbeKind::Fentry, "kfunc"),
    ("fexit", "fexit", ProbeKind::Fexit, "kretfunc"),
    ("rawtracepoint", "rt", ProbeKind::RawTracepoint, ""),
];

impl ProbeKind {
    /// A kernel function's entry or return (kprobe, kfunc and their later names).
    pub fn is_kernel_function(self) -> bool {
        matches!(
            self,
            ProbeKind::Kprobe
                | ProbeKind::Kretprobe
                | ProbeKind::Kfunc
                | ProbeKind::Kretfunc
                | ProbeKind::Fentry
                | ProbeKind::Fexit
        )
    }

    /// Attaches through BTF (fentry/fexit trampolines).
    pub fn is_btf_function(self) -> bool {
        matches!(self, ProbeKind::Kfunc | ProbeKind::Kretfunc | ProbeKind::Fentry | ProbeKind::Fexit)
    }

    /// On the function's return (`retval` is defined).
    pub fn is_return(self) -> bool {
        matches!(self, ProbeKind::Kretprobe | ProbeKind::Kretfunc | ProbeKind::Fexit | ProbeKind::Uretprobe)
    }

    pub fn name(self) -> &'static str {
        PROBE_LIST
            .iter()
            .map(|(n, _, k)| (*n, *k))
            .chain(LATER.iter().map(|(n, _, k, _)| (*n, *k)))
            .find(|(_, k)| *k == self)
            .map_or("", |(n, _)| n)
    }
}

/// One attach point, as written and as bpftrace reads it.
#[derive(Clone, Debug)]
pub struct AttachPoint {
    /// The text the grammar built (`kprobe:vfs_read+16`: integers printed in decimal).
    pub raw: String,
    pub span: Span,
    /// The parts between unquoted colons.
    pub parts: Vec<String>,
    /// Where each part is in the script (the closest token span when it was rewritten).
    pub part_spans: Vec<Span>,
    pub kind: Option<ProbeKind>,
    /// The probe type as written (`k`, `kprobe`, `fentry`).
    pub provider: String,
    /// Tracepoint category, uprobe binary, kfunc module.
    pub target: String,
    /// Function, tracepoint or USDT probe name (without any `+offset`).
    pub func: String,
    pub func_span: Span,
    /// `kprobe:f+0x10`.
    pub offset: Option<u64>,
    /// Holds `*` (or `?`, `[`): bpftrace expands it against the kernel.
    pub wildcard: bool,
    /// bpftrace 0.17's message when its attach-point parser refuses this one.
    pub error: Option<String>,
}

/// Pieces of the raw text and where each came from: `(raw range, token span, verbatim)`.
pub type Origins = Vec<(std::ops::Range<usize>, Span, bool)>;

fn has_wildcard(s: &str) -> bool {
    s.contains('*') || s.contains('?') || s.contains('[')
}

/// Reads one attach point.
pub fn parse_attach_point(raw: String, span: Span, origins: &Origins) -> AttachPoint {
    let (parts, ranges) = split(&raw);
    let part_spans = ranges.iter().map(|r| source_span(origins, r.clone(), span)).collect();
    let mut ap = AttachPoint {
        raw,
        span,
        parts,
        part_spans,
        kind: None,
        provider: String::new(),
        target: String::new(),
        func: String::new(),
        func_span: span,
        offset: None,
        wildcard: false,
        error: None,
    };
    if let Err(e) = read(&mut ap) {
        ap.error = Some(e);
    }
    ap
}

/// `lex_attachpoint`: parts split at unquoted `:`, quotes removed, `\x` unescaped inside
/// quotes. Positional parameters stay as written (their values are not known here).
fn split(raw: &str) -> (Vec<String>, Vec<std::ops::Range<usize>>) {
    let mut parts = Vec::new();
    let mut ranges = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let mut quoted = false;
    let b = raw.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = raw[i..].chars().next().unwrap_or('\0');
        if c == ':' && !quoted {
            parts.push(std::mem::take(&mut cur));
            ranges.push(start..i);
            start = i + 1;
        } else if c == '"' {
            quoted = !quoted;
        } else if quoted && c == '\\' && i + 1 < b.len() {
            let n = raw[i + 1..].chars().next().unwrap_or('\0');
            cur.push(n);
            i += 1 + n.len_utf8();
            continue;
        } else {
            cur.push(c);
        }
        i += c.len_utf8();
    }
    parts.push(cur);
    ranges.push(start..b.len());
    (parts, ranges)
}

/// The script span of a range of the raw text.
fn source_span(origins: &Origins, r: std::ops::Range<usize>, whole: Span) -> Span {
    let mut out: Option<Span> = None;
    for (o, s, verbatim) in origins {
        if o.end <= r.start || o.start >= r.end.max(r.start + 1) {
            continue;
        }
        let piece = if *verbatim {
            let a = r.start.max(o.start) - o.start;
            let b = r.end.min(o.end) - o.start;
            Span::new(s.start + a, s.start + b.max(a))
        } else {
            *s
        };
        out = Some(out.map_or(piece, |x| x.to(piece)));
    }
    out.unwrap_or(Span::new(whole.end, whole.end))
}

fn read(ap: &mut AttachPoint) -> Result<(), String> {
    let parts = ap.parts.clone();
    let first = parts.first().cloned().unwrap_or_default();
    if first.is_empty() {
        // "Do not fail on empty attach point, could be just a trailing comma".
        return Ok(());
    }
    ap.provider = first.clone();
    if has_wildcard(&first) {
        // Probe types expanded against the machine's probe types: left to bpftrace.
        ap.wildcard = true;
        return Ok(());
    }
    let kind = PROBE_LIST.iter().find(|(n, a, _)| *n == first || *a == first).map(|(_, _, k)| *k);
    let later = LATER.iter().find(|(n, a, _, _)| *n == first || *a == first);
    let kind = match (kind, later) {
        (Some(k), _) => k,
        (None, Some((_, _, k, _))) => {
            ap.kind = Some(*k);
            // Read as the later release would, then refuse as 0.17 does.
            let _ = by_kind(ap, *k, &parts);
            return Err(format!("Invalid probe type: {first}"));
        }
        (None, None) => return Err(format!("Invalid probe type: {first}")),
    };
    ap.kind = Some(kind);
    by_kind(ap, kind, &parts)
}

fn by_kind(ap: &mut AttachPoint, kind: ProbeKind, parts: &[String]) -> Result<(), String> {
    let name = kind.name();
    let n = parts.len();
    let span_of = |ap: &AttachPoint, i: usize| ap.part_spans.get(i).copied().unwrap_or(ap.span);
    match kind {
        ProbeKind::Begin | ProbeKind::End => {
            if !(n == 1 || n == 2 && parts[1] == "*") {
                return Err(format!("{name} probe type requires 0 arguments"));
            }
        }
        ProbeKind::Kprobe | ProbeKind::Kretprobe => {
            if n != 2 {
                return Err(format!("{name} probe type requires 1 argument"));
            }
            ap.func_span = span_of(ap, 1);
            function_offset(ap, &parts[1], kind == ProbeKind::Kprobe)?;
        }
        ProbeKind::Uprobe | ProbeKind::Uretprobe => {
            if n != 3 {
                return Err(format!("{name} probe type requires 2 arguments"));
            }
            ap.target = parts[1].clone();
            ap.func_span = span_of(ap, 2);
            let plus = parts[2].matches('+').count();
            if plus > 0 {
                function_offset(ap, &parts[2], kind == ProbeKind::Uprobe)?;
            } else {
                ap.func = parts[2].clone();
            }
            ap.wildcard = ap.target.contains('*') || ap.func.contains('*');
        }
        ProbeKind::Usdt => {
            if n != 3 && n != 4 {
                return Err(format!("{name} probe type requires 2 or 3 arguments"));
            }
            ap.target = parts[1].clone();
            ap.func = parts[n - 1].clone();
            ap.func_span = span_of(ap, n - 1);
        }
        ProbeKind::Tracepoint => {
            let mut parts = parts.to_vec();
            let mut spans = ap.part_spans.clone();
            if parts.len() == 2 && has_wildcard(&parts[1]) {
                parts.insert(1, "*".into());
                spans.insert(1, ap.span);
            }
            if parts.len() != 3 {
                return Err(format!("{name} probe type requires 2 arguments"));
            }
            ap.target = parts[1].clone();
            ap.func = parts[2].clone();
            ap.func_span = spans.get(2).copied().unwrap_or(ap.span);
            ap.wildcard = ap.target.contains('*') || ap.func.contains('*');
        }
        ProbeKind::RawTracepoint => {
            if n != 2 {
                return Err(format!("{name} probe type requires 1 argument"));
            }
            ap.func = parts[1].clone();
            ap.func_span = span_of(ap, 1);
            ap.wildcard = ap.func.contains('*');
        }
        ProbeKind::Profile | ProbeKind::Interval => {
            if n != 3 {
                return Err(format!("{name} probe type requires 2 arguments"));
            }
            ap.target = parts[1].clone();
            crate::lex::to_uint(&parts[2])?;
        }
        ProbeKind::Software | ProbeKind::Hardware => {
            if n != 2 && n != 3 {
                return Err(format!("{name} probe type requires 1 or 2 arguments"));
            }
            ap.target = parts[1].clone();
            if n == 3 && parts[2] != "*" {
                crate::lex::to_uint(&parts[2])?;
            }
        }
        ProbeKind::Watchpoint | ProbeKind::AsyncWatchpoint => {
            if n != 4 {
                return Err(format!("{name} probe type requires 3 arguments"));
            }
            if !parts[1].contains('+') {
                crate::lex::to_uint(&parts[1])?;
            } else {
                let pieces: Vec<&str> = parts[1].split('+').filter(|s| !s.is_empty()).collect();
                if pieces.len() != 2 {
                    return Err("Invalid function/address argument".into());
                }
                ap.func = pieces[0].to_owned();
                if pieces[1].len() <= 3 || !pieces[1].starts_with("arg") {
                    return Err("Invalid function argument".into());
                }
                crate::lex::to_uint(&pieces[1][3..])?;
            }
            crate::lex::to_uint(&parts[2])?;
        }
        ProbeKind::Kfunc | ProbeKind::Kretfunc | ProbeKind::Fentry | ProbeKind::Fexit => {
            if n != 2 && n != 3 {
                return Err(format!("{name} probe type requires 1 or 2 arguments"));
            }
            if n == 3 {
                ap.target = parts[1].clone();
            }
            ap.func = parts[n - 1].clone();
            ap.func_span = span_of(ap, n - 1);
            ap.wildcard = ap.func.contains('*') || ap.target.contains('*');
        }
        ProbeKind::Iter => {
            if n != 2 && n != 3 {
                return Err(format!("{name} probe type takes 2 arguments (1 optional)"));
            }
            if parts[1].contains('*') {
                return Err(format!("{name} probe type does not support wildcards"));
            }
            ap.func = parts[1].clone();
        }
    }
    Ok(())
}

/// `func+offset` of kprobes and uprobes (`kprobe_parser`, `uprobe_parser`).
fn function_offset(ap: &mut AttachPoint, part: &str, allow_offset: bool) -> Result<(), String> {
    let plus = part.matches('+').count();
    if plus == 0 {
        ap.func = part.to_owned();
    } else {
        if !allow_offset {
            return Err("Offset not allowed".into());
        }
        if plus != 1 {
            return Err("Cannot take more than one offset".into());
        }
        // split_string(.., '+', true): empty pieces are dropped.
        let pieces: Vec<&str> = part.split('+').filter(|s| !s.is_empty()).collect();
        if pieces.len() != 2 {
            return Err("Invalid offset".into());
        }
        ap.func = pieces[0].to_owned();
        let f_len = ap.func.len();
        if ap.func_span.end >= ap.func_span.start + f_len && part.starts_with(&ap.func) {
            ap.func_span = Span::new(ap.func_span.start, ap.func_span.start + f_len);
        }
        ap.offset = Some(crate::lex::to_uint(pieces[1])?);
    }
    ap.wildcard = ap.func.contains('*');
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ap(raw: &str) -> AttachPoint {
        let span = Span::new(0, raw.len());
        parse_attach_point(raw.into(), span, &vec![(0..raw.len(), span, true)])
    }

    #[test]
    fn kinds_aliases_and_parts() {
        let a = ap("k:vfs_read+16");
        assert_eq!((a.kind, a.func.as_str(), a.offset), (Some(ProbeKind::Kprobe), "vfs_read", Some(16)));
        assert_eq!(a.func_span, Span::new(2, 10));
        let t = ap("t:syscalls:sys_enter_*");
        assert_eq!((t.target.as_str(), t.func.as_str(), t.wildcard), ("syscalls", "sys_enter_*", true));
        let t = ap("tracepoint:*open*");
        assert_eq!((t.target.as_str(), t.func.as_str()), ("*", "*open*"));
        assert_eq!(ap("f:vmlinux:tcp_connect").target, "vmlinux");
    }

    #[test]
    fn refusals_carry_bpftrace_messages() {
        assert_eq!(ap("kretprobe:f+1").error.as_deref(), Some("Offset not allowed"));
        assert_eq!(ap("kprobe:f+1+2").error.as_deref(), Some("Cannot take more than one offset"));
        assert_eq!(ap("kprobe").error.as_deref(), Some("kprobe probe type requires 1 argument"));
        assert_eq!(ap("BEGIN:x").error.as_deref(), Some("BEGIN probe type requires 0 arguments"));
        assert_eq!(ap("fentry:vfs_read").error.as_deref(), Some("Invalid probe type: fentry"));
        assert_eq!(ap("fentry:vfs_read").kind, Some(ProbeKind::Fentry));
        assert_eq!(ap("interval:s:x").error.as_deref(), Some("stoull"));
    }
}
