//! The transcription: `__trace_kprobe_create` (trace_kprobe.c), `__trace_fprobe_create`
//! (trace_fprobe.c) and the argument parser of trace_probe.c, for 6.1.y and 6.12.y,
//! branch for branch, on byte strings. Comments name the C function each part follows.
//!
//! The fetch-instruction buffer (`FETCH_INSN_MAX` = 16 slots, the last preset to END) is
//! simulated slot by slot: `TOO_MANY_OPS` depends on exactly how many slots a chain uses.

use crate::ast::*;
use crate::dialect::{Dialect, Generation};
use crate::env::{BtfKind, Env, FuncEntry};
use crate::errors::ErrorId;
use crate::registry::{Conflict, Registry};
use crate::{Errno, KernelError, Rejection};
use fevlint_kclib::*;

const MAX_TRACE_ARGS: usize = 128;
const MAX_ARGSTR_LEN: usize = 63;
const MAX_ARRAY_LEN: u32 = 64;
const MAX_ARG_NAME_LEN: usize = 32;
const MAX_BTF_ARGS_LEN: usize = 128;
const MAX_PROBE_EVENT_SIZE: usize = 3072;
const MAX_EVENT_NAME_LEN: usize = 64;
const FETCH_INSN_MAX: usize = 16;
const MAXACTIVE_MAX: u32 = 4096;
const RESERVED_FIELD_NAMES: &[&[u8]] = &[
    b"common_type",
    b"common_flags",
    b"common_preempt_count",
    b"common_pid",
    b"common_tgid",
    b"__probe_ip",
    b"__probe_ret_ip",
    b"__probe_func",
];

/// `enum fetch_op`, only as far as the parser inspects it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Nop,
    Reg,
    Stack,
    StackP,
    Retval,
    Imm,
    Comm,
    Arg,
    Foffs,
    Data,
    Edata,
    Deref,
    Uderef,
    StRaw,
    StMem,
    StUmem,
    StString,
    StUstring,
    StSymstr,
    ModBf,
    LpArray,
    TpArg,
    End,
    NopSymbol,
}

// Ops the transcribed checks name but only uprobes and eprobes produce.
#[allow(dead_code)]
const UNPRODUCED: [Op; 2] = [Op::Foffs, Op::TpArg];

/// `TPARG_FL_*`.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    ret: bool,
    fentry: bool,
    fprobe: bool,
    tpoint: bool,
}

impl Flags {
    /// `tparg_is_function_entry` (6.12) / `(flags & TPARG_FL_MASK) == KERNEL|FENTRY` (6.1).
    fn is_entry(self) -> bool {
        self.fentry && !self.ret
    }
    fn is_return(self) -> bool {
        self.ret && !self.fentry
    }
}

/// `struct fetch_type`: name, size, is_string.
#[derive(Debug, Clone, Copy)]
struct FetchType {
    name: &'static str,
    size: usize,
    is_string: bool,
}

fn find_fetch_type(d: &Dialect, ty: Option<&[u8]>) -> Option<FetchType> {
    // DEFAULT_FETCH_TYPE: x<BITS_PER_LONG>.
    let ty: &[u8] = ty.unwrap_or(if d.arch.bits() == 32 { b"x32" } else { b"x64" });
    if ty.first() == Some(&b'b') {
        let slash = ty.iter().position(|&c| c == b'/')?;
        let bs = ul(d, &ty[slash + 1..], 0).ok()?;
        return match bs {
            8 => find_fetch_type(d, Some(b"u8")),
            16 => find_fetch_type(d, Some(b"u16")),
            32 => find_fetch_type(d, Some(b"u32")),
            64 => find_fetch_type(d, Some(b"u64")),
            _ => None,
        };
    }
    let (name, size, is_string): (&'static str, usize, bool) = match ty {
        b"string" => ("string", 4, true),
        b"ustring" => ("ustring", 4, true),
        b"symstr" => ("symstr", 4, true),
        b"u8" => ("u8", 1, false),
        b"u16" => ("u16", 2, false),
        b"u32" => ("u32", 4, false),
        b"u64" => ("u64", 8, false),
        b"s8" => ("s8", 1, false),
        b"s16" => ("s16", 2, false),
        b"s32" => ("s32", 4, false),
        b"s64" => ("s64", 8, false),
        b"x8" => ("x8", 1, false),
        b"x16" => ("x16", 2, false),
        b"x32" => ("x32", 4, false),
        b"x64" => ("x64", 8, false),
        b"char" if d.generation >= Generation::Linux6_12 => ("char", 1, false),
        b"symbol" => ("symbol", (d.arch.bits() / 8) as usize, false),
        _ => return None,
    };
    Some(FetchType { name, size, is_string })
}

fn find(s: &[u8], c: u8) -> Option<usize> {
    s.iter().position(|&x| x == c)
}

fn rfind(s: &[u8], c: u8) -> Option<usize> {
    s.iter().rposition(|&x| x == c)
}

fn lossy(s: &[u8]) -> String {
    String::from_utf8_lossy(s).into_owned()
}

/// The parse of one line: the kernel's `trace_probe_log` plus what the parser learns.
struct Parser<'a> {
    d: &'a Dialect,
    env: &'a dyn Env,
    line: &'a [u8],
    /// The original argv (what the error log shows), as spans of `line`.
    words: Vec<(usize, usize)>,
    subsystem: &'static str,
    /// `trace_probe_log.index`.
    index: usize,
    /// Entries written to error_log so far (a few paths write two).
    logged: Vec<KernelError>,
    assumptions: Vec<Assumption>,
    /// Events defined by earlier lines (for `-EEXIST` and the append rules).
    registry: Option<&'a Registry>,
}

/// State of one argument list (`struct traceprobe_parse_context`).
struct Ctx {
    flags: Flags,
    funcname: Option<String>,
    /// `query_btf_context` done: `Some(Ok(proto))`, `Some(Err(()))` when it failed.
    btf: Option<Result<crate::env::BtfProto, ()>>,
    offset: usize,
    last_type: Option<u32>,
    last_bitoffs: u32,
    last_bitsize: u32,
    /// The event's size so far (`tp->size`).
    size: usize,
}

type PResult<T> = Result<T, Rejection>;

impl<'a> Parser<'a> {
    fn word(&self, i: usize) -> &'a [u8] {
        let (s, e) = self.words[i];
        &self.line[s..e]
    }

    fn command(&self) -> String {
        let parts: Vec<String> = (0..self.words.len()).map(|i| lossy(self.word(i))).collect();
        parts.join(" ")
    }

    /// `__trace_probe_log_err(offset, id)`: log it and return the rejection.
    fn log(&mut self, offset: usize, id: ErrorId, errno: Errno) -> Rejection {
        let argc = self.words.len();
        let mut pos = 0;
        let mut len = 0;
        for i in 0..argc {
            if i == self.index {
                pos = len;
            }
            len += self.word(i).len() + 1;
        }
        let (caret, byte) = if self.index >= argc {
            (len, self.line.len())
        } else {
            let (s, _) = self.words[self.index];
            (pos + offset, (s + offset).min(self.line.len()))
        };
        let err = KernelError {
            id,
            message: self.d.message(id),
            subsystem: self.subsystem,
            command: self.command(),
            caret,
            word: self.index,
            byte,
            errno,
            earlier: self.logged.iter().map(|e| e.id).collect(),
            first: self.logged.first().map(|e| Box::new(e.clone())),
        };
        self.logged.push(err.clone());
        Rejection::Logged(Box::new(err))
    }

    fn span_of(&self, i: usize) -> Span {
        let (s, e) = self.words[i];
        s..e
    }

    /// `traceprobe_parse_event_name`.
    fn parse_event_name(&mut self, ev: &[u8], offset: usize) -> PResult<(Option<String>, Option<String>)> {
        let slash = find(ev, b'/').or_else(|| find(ev, b'.'));
        let mut offset = offset;
        let mut group = None;
        let mut event = ev;
        if let Some(sl) = slash {
            if sl == 0 {
                return Err(self.log(offset, ErrorId::NoGroupName, Errno::Einval));
            }
            if sl + 1 > MAX_EVENT_NAME_LEN {
                return Err(self.log(offset, ErrorId::GroupTooLong, Errno::Einval));
            }
            if !is_good_name(&ev[..sl], true) {
                return Err(self.log(offset, ErrorId::BadGroupName, Errno::Einval));
            }
            group = Some(lossy(&ev[..sl]));
            event = &ev[sl + 1..];
            offset += sl + 1;
        }
        if event.is_empty() {
            if slash.is_some() {
                return Ok((group, None));
            }
            return Err(self.log(offset, ErrorId::NoEventName, Errno::Einval));
        } else if event.len() >= MAX_EVENT_NAME_LEN {
            return Err(self.log(offset, ErrorId::EventTooLong, Errno::Einval));
        }
        if !is_good_name(event, false) {
            return Err(self.log(offset, ErrorId::BadEventName, Errno::Einval));
        }
        Ok((group, Some(lossy(event))))
    }

    /// The maxactive digits after `r`/`f` (both parsers share the code).
    fn parse_maxactive(&mut self, head: &[u8], colon: Option<usize>) -> PResult<u32> {
        let end = colon.unwrap_or(head.len());
        let digits = &head[1..end];
        if digits.len() > MAX_EVENT_NAME_LEN - 1 {
            return Err(self.log(1, ErrorId::BadMaxact, Errno::Einval));
        }
        match kstrtouint(digits, 0) {
            Ok(n) if n != 0 => {
                if n > MAXACTIVE_MAX {
                    return Err(self.log(1, ErrorId::MaxactTooBig, Errno::Einval));
                }
                Ok(n)
            }
            _ => Err(self.log(1, ErrorId::BadMaxact, Errno::Einval)),
        }
    }

    /// `__trace_kprobe_create`.
    fn kprobe(&mut self) -> PResult<Option<Probe>> {
        let g612 = self.d.generation >= Generation::Linux6_12;
        let head = self.word(0);
        let mut is_return = head[0] == b'r';
        if self.words.len() < 2 {
            return Ok(None); // -ECANCELED
        }
        self.subsystem = "trace_kprobe";
        let colon = find(&head[1..], b':').map(|i| i + 1);
        let mut maxactive = None;
        if head.len() > 1 && isdigit(head[1]) {
            if !is_return {
                let id = if g612 { ErrorId::BadMaxactType } else { ErrorId::MaxactNoKprobe };
                return Err(self.log(1, id, Errno::Einval));
            }
            maxactive = Some(self.parse_maxactive(head, colon)?);
        }

        let place_word = self.word(1);
        let mut flags = Flags::default();
        let mut symbol: Option<Vec<u8>> = None;
        let mut offset: u64 = 0;
        let mut addr: u64 = 0;
        match ul(self.d, place_word, 0) {
            Ok(a) => addr = a,
            Err(_) => {
                self.index = 1;
                if find(place_word, b'/').is_some() && find(place_word, b':').is_some() {
                    return Ok(None); // a uprobe: -ECANCELED
                }
                let mut sym = place_word.to_vec();
                if let Some(p) = find(&sym, b'%') {
                    if &sym[p..] == b"%return" {
                        sym.truncate(p);
                        is_return = true;
                    } else {
                        return Err(self.log(p, ErrorId::BadAddrSuffix, Errno::Einval));
                    }
                }
                // traceprobe_split_symbol_offset
                if let Some(p) = sym.iter().position(|&c| c == b'+' || c == b'-') {
                    match l(self.d, &sym[p..], 0) {
                        Ok(o) if (0..=i64::from(u32::MAX)).contains(&o) => {
                            offset = o as u64;
                            sym.truncate(p);
                        }
                        _ => return Err(self.log(0, ErrorId::BadProbeAddr, Errno::Einval)),
                    }
                }
                let name = lossy(&sym);
                let span = self.span_of(1);
                if g612 {
                    self.check_symbol_count(&name, span.clone(), Errno::Einval)?;
                }
                flags.ret = is_return;
                let entry = self.env.func_entry(&name, offset);
                let is_entry = match entry {
                    Some(e) => e == FuncEntry::Entry,
                    None => {
                        self.assumptions.push(Assumption::FunctionEntry {
                            name: name.clone(),
                            offset,
                            assumed_entry: offset == 0,
                            span: span.clone(),
                        });
                        offset == 0
                    }
                };
                if is_entry && (!g612 || !is_return) {
                    flags.fentry = true;
                }
                let not_entry = entry == Some(FuncEntry::NotEntry) || (entry.is_none() && offset != 0);
                if not_entry && is_return {
                    return Err(self.log(0, ErrorId::BadRetprobe, Errno::Einval));
                }
                if !g612 && find(&sym, b':').is_none() {
                    self.check_symbol_count(&name, span, Errno::Enoent)?;
                }
                symbol = Some(sym);
            }
        }

        self.index = 0;
        let (mut group, mut event) = (None, None);
        if let Some(c) = colon {
            let (g, e) = self.parse_event_name(&head[c + 1..], c + 1)?;
            group = g;
            event = e;
        }
        let event_written = event.is_some();
        let event = event.unwrap_or_else(|| {
            let name = match &symbol {
                Some(s) => format!("{}_{}_{}", if is_return { 'r' } else { 'p' }, lossy(s), offset),
                None => format!("{}_0x{:x}", if is_return { 'r' } else { 'p' }, addr),
            };
            sanitize_event_name(&name, false)
        });
        let place = match &symbol {
            Some(s) => {
                let (module, name) = match find(s, b':') {
                    Some(c) => (Some(lossy(&s[..c])), lossy(&s[c + 1..])),
                    None => (None, lossy(s)),
                };
                Place::Symbol { module, name, offset, span: self.span_of(1) }
            }
            None => Place::Address { addr, span: self.span_of(1) },
        };
        let mut ctx = Ctx {
            flags,
            funcname: symbol.as_deref().map(lossy),
            btf: None,
            offset: 0,
            last_type: None,
            last_bitoffs: 0,
            last_bitsize: 0,
            size: 0,
        };
        let args = self.parse_args(&mut ctx)?;
        let kind = if is_return { ProbeKind::Kretprobe } else { ProbeKind::Kprobe };
        let group_written = group.is_some();
        let mut probe = Probe {
            kind,
            group: group.unwrap_or_else(|| "kprobes".into()),
            group_written,
            event,
            event_written,
            place,
            maxactive,
            args,
            tracepoint_stub: false,
            assumptions: Vec::new(),
        };
        // register_trace_kprobe: the append rules, then __register_trace_kprobe.
        self.check_registry(&probe)?;
        for (i, a) in probe.args.iter().enumerate() {
            self.check_data_symbols(&a.fetch, i)?;
        }
        // register_kprobe itself: instruction boundary, blacklist, text checks.
        let (sym, off) = match &probe.place {
            Place::Symbol { name, offset, .. } => (Some(name.clone()), *offset),
            Place::Address { addr, .. } => (None, *addr),
        };
        // `MOD:SYM` waits for its module (registered when it loads): what the kernel
        // knows of the module's code is not the vmlinux model's to answer.
        let in_module = matches!(&probe.place, Place::Symbol { module: Some(_), .. });
        let registered = if in_module { None } else { self.env.register_kprobe(sym.as_deref(), off) };
        match registered {
            Some(Ok(())) => {}
            Some(Err(e)) => {
                self.index = 1;
                let (id, errno) = match e {
                    crate::env::RegisterError::NotInsnBoundary => (ErrorId::BadInsnBndry, Errno::Eilseq),
                    crate::env::RegisterError::NoSymbol => (ErrorId::BadProbeAddr, Errno::Enoent),
                    crate::env::RegisterError::Failed => (ErrorId::FailRegProbe, Errno::Einval),
                    crate::env::RegisterError::Unsupported => (ErrorId::FailRegProbe, Errno::Eopnotsupp),
                };
                return Err(self.log(0, id, errno));
            }
            None => self.assumptions.push(Assumption::Registers { symbol: sym, offset: off, span: self.span_of(1) }),
        }
        probe.assumptions = std::mem::take(&mut self.assumptions);
        Ok(Some(probe))
    }

    /// The append rules of `register_trace_kprobe` / `register_trace_fprobe`.
    fn check_registry(&mut self, probe: &Probe) -> PResult<()> {
        let Some(reg) = self.registry else {
            return Ok(());
        };
        match reg.conflict(probe) {
            None => Ok(()),
            Some(Conflict::EventExist) => {
                self.index = 0;
                Err(self.log(0, ErrorId::EventExist, Errno::Eexist))
            }
            Some(Conflict::DiffProbeType) => {
                self.index = 0;
                Err(self.log(0, ErrorId::DiffProbeType, Errno::Eexist))
            }
            Some(Conflict::DiffArgType(k)) => {
                self.index = k + 1;
                Err(self.log(0, ErrorId::DiffArgType, Errno::Eexist))
            }
            Some(Conflict::SameProbe) => {
                self.index = 0;
                Err(self.log(0, ErrorId::SameProbe, Errno::Eexist))
            }
            Some(Conflict::TracepointBusy) => Err(Rejection::Silent {
                errno: Errno::Eexist,
                why: "the tracepoint already has a tprobe (tracepoint_probe_register: -EEXIST, no error_log entry)",
            }),
        }
    }

    /// `number_of_same_symbols` (6.1) / `validate_probe_symbol` (6.12). `errno` is what
    /// the write fails with: 6.1 returns -EADDRNOTAVAIL or -ENOENT itself, 6.12 logs the
    /// same entries and leaves through `parse_error` (-EINVAL for both).
    fn check_symbol_count(&mut self, name: &str, span: Span, errno: Errno) -> PResult<()> {
        let plain = !name.contains(':');
        let g612 = self.d.generation >= Generation::Linux6_12;
        let not_unique = if g612 { errno } else { Errno::Eaddrnotavail };
        match self.env.symbol_count(name) {
            Some(n) if n > 1 && plain => Err(self.log(0, ErrorId::NonUniqSymbol, not_unique)),
            Some(0) => Err(self.log(0, ErrorId::BadProbeAddr, errno)),
            Some(_) => Ok(()),
            None => {
                self.assumptions.push(Assumption::UniqueSymbol { name: name.to_owned(), span });
                Ok(())
            }
        }
    }

    /// `traceprobe_update_arg` at registration: every `@SYM` must resolve.
    fn check_data_symbols(&mut self, f: &Fetch, arg: usize) -> PResult<()> {
        match f {
            Fetch::Symbol { name } => {
                let base: &str = name.split(['+', '-']).next().unwrap_or(name);
                match self.env.data_symbol(base) {
                    Some(true) => Ok(()),
                    Some(false) => {
                        self.index = 1;
                        Err(self.log(0, ErrorId::BadProbeAddr, Errno::Enoent))
                    }
                    None => {
                        self.assumptions.push(Assumption::DataSymbol { name: base.to_owned(), arg });
                        Ok(())
                    }
                }
            }
            Fetch::Deref { inner, .. } => self.check_data_symbols(inner, arg),
            _ => Ok(()),
        }
    }

    /// `__trace_fprobe_create` (6.12).
    fn fprobe(&mut self) -> PResult<Option<Probe>> {
        let head = self.word(0);
        let is_tracepoint = head[0] == b't';
        if self.words.len() < 2 {
            return Ok(None);
        }
        self.subsystem = "trace_fprobe";
        let colon = find(&head[1..], b':').map(|i| i + 1);
        let mut maxactive = None;
        if head.len() > 1 && isdigit(head[1]) {
            maxactive = Some(self.parse_maxactive(head, colon)?);
        }
        self.index = 1;
        // parse_symbol_and_return
        let place_word = self.word(1);
        let mut is_return = false;
        let symbol: Vec<u8> = match find(place_word, b'%') {
            Some(p) => {
                if !is_tracepoint && &place_word[p..] == b"%return" {
                    is_return = true;
                } else {
                    return Err(self.log(p, ErrorId::BadAddrSuffix, Errno::Einval));
                }
                place_word[..p].to_vec()
            }
            None => place_word.to_vec(),
        };
        if !is_return {
            if is_tracepoint {
                if let Some(p) = symbol.iter().position(|&c| !(isalnum(c) || c == b'_')) {
                    return Err(self.log(p, ErrorId::BadTpName, Errno::Einval));
                }
            }
            for i in 2..self.words.len() {
                let w = self.word(i);
                if let Some(p) = w.windows(7).position(|x| x == b"$retval") {
                    let next = w.get(p + 7).copied().unwrap_or(0);
                    if !isalnum(next) && next != b'_' {
                        if is_tracepoint {
                            self.index = i;
                            return Err(self.log(p, ErrorId::RetvalOnProbe, Errno::Einval));
                        }
                        is_return = true;
                        break;
                    }
                }
            }
        }
        if !is_return && maxactive.is_some() {
            self.index = 0;
            return Err(self.log(1, ErrorId::BadMaxactType, Errno::Einval));
        }
        self.index = 0;
        let (mut group, mut event) = (None, None);
        if let Some(c) = colon {
            let (g, e) = self.parse_event_name(&head[c + 1..], c + 1)?;
            group = g;
            event = e;
        }
        let event_written = event.is_some();
        let name = lossy(&symbol);
        let event = event.unwrap_or_else(|| {
            let n = if is_tracepoint {
                format!("{}{}", if symbol.first().copied().is_some_and(isdigit) { "_" } else { "" }, name)
            } else {
                format!("{}__{}", name, if is_return { "exit" } else { "entry" })
            };
            sanitize_event_name(&n, true)
        });
        let mut flags = Flags { fprobe: true, ..Flags::default() };
        if is_return {
            flags.ret = true;
        } else {
            flags.fentry = true;
        }
        let span = self.span_of(1);
        let mut funcname = Some(name.clone());
        let mut stub = false;
        if is_tracepoint {
            flags.tpoint = true;
            match self.env.tracepoint(&name) {
                Some(Some(stub)) => funcname = Some(stub),
                Some(None) => {
                    if !self.d.modules {
                        self.index = 1;
                        return Err(self.log(0, ErrorId::NoTracepoint, Errno::Einval));
                    }
                    stub = true;
                }
                None => self.assumptions.push(Assumption::Tracepoint { name: name.clone(), span: span.clone() }),
            }
        }
        let mut ctx =
            Ctx { flags, funcname, btf: None, offset: 0, last_type: None, last_bitoffs: 0, last_bitsize: 0, size: 0 };
        let args = self.parse_args(&mut ctx)?;
        let (module, sym) = match find(&symbol, b':') {
            Some(c) if !is_tracepoint => (Some(lossy(&symbol[..c])), lossy(&symbol[c + 1..])),
            _ => (None, name.clone()),
        };
        let kind = if is_tracepoint {
            ProbeKind::Tprobe
        } else if is_return {
            ProbeKind::FprobeExit
        } else {
            ProbeKind::FprobeEntry
        };
        let group_written = group.is_some();
        let mut probe = Probe {
            kind,
            group: group.unwrap_or_else(|| if is_tracepoint { "tracepoints".into() } else { "fprobes".into() }),
            group_written,
            event,
            event_written,
            place: Place::Symbol { module, name: sym, offset: 0, span: span.clone() },
            maxactive,
            args,
            tracepoint_stub: stub,
            assumptions: Vec::new(),
        };
        // register_trace_fprobe: the append rules, then __register_trace_fprobe
        // (traceprobe_update_arg, then register_fprobe).
        self.check_registry(&probe)?;
        for (i, a) in probe.args.iter().enumerate() {
            self.check_data_symbols(&a.fetch, i)?;
        }
        if !is_tracepoint {
            // register_fprobe fails (not with -ENOENT) when no ftrace-able function
            // matches: FAIL_REG_PROBE, as the Debian 6.12.117 kernel answers.
            match self.env.ftrace_target(&name) {
                Some(true) => {}
                Some(false) => {
                    self.index = 1;
                    return Err(self.log(0, ErrorId::FailRegProbe, Errno::Einval));
                }
                None => self.assumptions.push(Assumption::FtraceTarget { name, span }),
            }
        }
        probe.assumptions = std::mem::take(&mut self.assumptions);
        Ok(Some(probe))
    }

    /// `query_btf_context`: Ok(true) when BTF with at least one parameter is known,
    /// Ok(false) when BTF is known to be missing, Err(()) when unknown (no kernel).
    fn query_btf(&mut self, ctx: &mut Ctx) -> Result<bool, ()> {
        if let Some(b) = &ctx.btf {
            return Ok(b.as_ref().is_ok_and(|p| !p.params.is_empty()));
        }
        if !self.d.btf_args {
            ctx.btf = Some(Err(()));
            return Ok(false);
        }
        let Some(btf) = self.env.btf() else {
            return Err(());
        };
        let Some(func) = ctx.funcname.clone() else {
            ctx.btf = Some(Err(()));
            return Ok(false);
        };
        match btf.func_proto(&func) {
            None => {
                ctx.btf = Some(Err(()));
                Ok(false)
            }
            Some(mut proto) => {
                if ctx.flags.tpoint && !proto.params.is_empty() {
                    proto.params.remove(0);
                }
                let has = !proto.params.is_empty();
                ctx.btf = Some(Ok(proto));
                Ok(has)
            }
        }
    }

    /// `traceprobe_expand_meta_args` + `traceprobe_expand_dentry_args` + the argument loop.
    fn parse_args(&mut self, ctx: &mut Ctx) -> PResult<Vec<Arg>> {
        let g612 = self.d.generation >= Generation::Linux6_12;
        // (text, original word index, verbatim)
        let mut argv: Vec<(Vec<u8>, usize, bool)> =
            (2..self.words.len()).map(|i| (self.word(i).to_vec(), i, true)).collect();
        if g612 {
            argv = self.expand_meta_args(argv, ctx)?;
            if argv.len() > MAX_TRACE_ARGS {
                return Err(Rejection::Silent {
                    errno: Errno::E2big,
                    why: "more than 128 arguments (MAX_TRACE_ARGS, no error_log entry)",
                });
            }
            for a in argv.iter_mut() {
                if is_dentry_arg(&a.0) {
                    a.0 = expand_dentry(&a.0, self.d.dentry_offsets);
                    a.2 = false;
                }
            }
        } else if argv.len() > MAX_TRACE_ARGS {
            // 6.1 parses the first 128 and silently drops the rest.
            argv.truncate(MAX_TRACE_ARGS);
        }
        let mut args: Vec<Arg> = Vec::with_capacity(argv.len());
        for (i, (text, word, verbatim)) in argv.iter().enumerate() {
            self.index = i + 2;
            ctx.offset = 0;
            let arg = self.parse_probe_arg_named(ctx, &args, i, text, *word, *verbatim)?;
            args.push(arg);
        }
        Ok(args)
    }

    /// `argv_has_var_arg` + `traceprobe_expand_meta_args` (6.12).
    fn expand_meta_args(
        &mut self,
        argv: Vec<(Vec<u8>, usize, bool)>,
        ctx: &mut Ctx,
    ) -> PResult<Vec<(Vec<u8>, usize, bool)>> {
        let mut found = false;
        let mut args_idx: Option<usize> = None;
        for (i, (a, _, _)) in argv.iter().enumerate() {
            if a.starts_with(b"$arg") {
                self.index = i + 2;
                if !ctx.flags.is_entry() && !ctx.flags.is_return() {
                    return Err(self.log(0, ErrorId::NofentryArgs, Errno::Einval));
                }
                let c = a.get(4).copied().unwrap_or(0);
                if isdigit(c) {
                    found = true;
                    continue;
                }
                if c != b'*' {
                    return Err(self.log(0, ErrorId::BadVar, Errno::Einval));
                }
                if args_idx.is_some() {
                    return Err(self.log(0, ErrorId::DoubleArgs, Errno::Einval));
                }
                found = true;
                args_idx = Some(i);
            }
        }
        if !found {
            return Ok(argv);
        }
        let params = match self.query_btf(ctx) {
            Ok(true) => match &ctx.btf {
                Some(Ok(p)) => p.params.clone(),
                _ => Vec::new(),
            },
            Ok(false) => {
                if args_idx.is_some() {
                    return Err(self.log(0, ErrorId::NosupBtfarg, Errno::Eopnotsupp));
                }
                return Ok(argv);
            }
            Err(()) => {
                // No kernel: `$arg*` cannot be expanded; `$argN` stays a register fetch.
                if let Some(i) = args_idx {
                    self.assumptions
                        .push(Assumption::BtfArg { function: ctx.funcname.clone().unwrap_or_default(), arg: i });
                    let mut v = argv;
                    v.remove(i);
                    return Ok(v);
                }
                return Ok(argv);
            }
        };
        let mut out = Vec::new();
        let mut used = 0usize;
        for (i, (a, word, verbatim)) in argv.into_iter().enumerate() {
            self.index = i + 2;
            if Some(i) == args_idx {
                for (name, _) in &params {
                    let text = name.as_bytes().to_vec();
                    if used + text.len() >= MAX_BTF_ARGS_LEN {
                        return Err(self.log(0, ErrorId::Args2long, Errno::E2big));
                    }
                    used += text.len() + 1;
                    out.push((text, word, false));
                }
                continue;
            }
            if a.starts_with(b"$arg") {
                let (n, end) = simple_strtoul(&a[4..], 10);
                let ty = &a[4 + end..];
                if !(ty.is_empty() || ty[0] == b':') {
                    return Err(self.log(0, ErrorId::BadVar, Errno::Enoent));
                }
                if n == 0 {
                    return Err(self.log(0, ErrorId::BadArgNum, Errno::Einval));
                }
                let idx = (n - 1) as usize;
                if idx >= params.len() {
                    return Err(self.log(0, ErrorId::NoBtfarg, Errno::Enoent));
                }
                let mut text = params[idx].0.as_bytes().to_vec();
                text.extend_from_slice(ty);
                if used + text.len() >= MAX_BTF_ARGS_LEN {
                    return Err(self.log(0, ErrorId::Args2long, Errno::E2big));
                }
                used += text.len() + 1;
                out.push((text, word, false));
            } else {
                out.push((a, word, verbatim));
            }
        }
        Ok(out)
    }

    /// `traceprobe_parse_probe_arg`: the `NAME=` part.
    fn parse_probe_arg_named(
        &mut self,
        ctx: &mut Ctx,
        prev: &[Arg],
        i: usize,
        arg: &[u8],
        word: usize,
        verbatim: bool,
    ) -> PResult<Arg> {
        let g612 = self.d.generation >= Generation::Linux6_12;
        let (name, explicit, body_off) = match find(arg, b'=') {
            Some(eq) => {
                if eq > MAX_ARG_NAME_LEN {
                    return Err(self.log(0, ErrorId::ArgNameTooLong, Errno::Einval));
                } else if eq == 0 {
                    return Err(self.log(0, ErrorId::NoArgName, Errno::Einval));
                }
                (arg[..eq].to_vec(), true, eq + 1)
            }
            None => {
                let mut name = None;
                if g612 && self.d.btf_args {
                    let end = find(arg, b':').unwrap_or(arg.len());
                    if is_good_name(&arg[..end], false) {
                        name = Some(arg[..end].to_vec());
                    }
                }
                (name.unwrap_or_else(|| format!("arg{}", i + 1).into_bytes()), false, 0)
            }
        };
        if !is_good_name(&name, false) {
            return Err(self.log(0, ErrorId::BadArgName, Errno::Einval));
        }
        if RESERVED_FIELD_NAMES.contains(&name.as_slice()) || prev.iter().any(|a| a.name.as_bytes() == name.as_slice())
        {
            return Err(self.log(0, ErrorId::UsedArgName, Errno::Einval));
        }
        ctx.offset = body_off;
        let body = &arg[body_off..];
        let wspan = self.span_of(word);
        let base = if verbatim { Some(wspan.start + body_off) } else { None };
        let (fetch, ty, store_type) = self.parse_body(ctx, body, base, &wspan)?;
        let body_span = match base {
            Some(b) => b..b + find(body, b':').unwrap_or(body.len()),
            None => wspan.clone(),
        };
        Ok(Arg {
            name: lossy(&name),
            explicit_name: explicit,
            text: lossy(body),
            fetch,
            ty,
            store_type,
            span: wspan,
            body_span,
            word,
            verbatim,
        })
    }

    /// `traceprobe_parse_probe_arg_body` (+ 6.12's `parse_probe_arg_type` and
    /// `finalize_fetch_insn`).
    fn parse_body(
        &mut self,
        ctx: &mut Ctx,
        argv: &[u8],
        base: Option<usize>,
        wspan: &Span,
    ) -> PResult<(Fetch, Option<ArgType>, String)> {
        let g612 = self.d.generation >= Generation::Linux6_12;
        let offset0 = ctx.offset;
        if argv.len() > MAX_ARGSTR_LEN {
            // 6.1 returns the -EINVAL it set before the check; 6.12 -E2BIG.
            let errno = if g612 { Errno::E2big } else { Errno::Einval };
            return Err(self.log(offset0, ErrorId::ArgTooLong, errno));
        } else if argv.is_empty() {
            return Err(self.log(offset0, ErrorId::NoArgBody, Errno::Einval));
        }
        let span_at = |a: usize, b: usize| match base {
            Some(s) => s + a..s + b,
            None => wspan.clone(),
        };
        // The type part.
        let mut arg: &[u8] = argv;
        let mut t: Option<(usize, Vec<u8>)> = None; // (offset of type in arg, type text w/o [N])
        let mut count: u32 = 0;
        if let Some(c) = find(argv, b':') {
            arg = &argv[..c];
            let tstart = c + 1;
            let mut tt = &argv[tstart..];
            if let Some(b) = find(tt, b'[') {
                let t2 = tstart + b + 1; // index of the count in argv
                let rest = &argv[t2..];
                match find(rest, b']') {
                    None => return Err(self.log(offset0 + t2 + rest.len(), ErrorId::ArrayNoClose, Errno::Einval)),
                    Some(r) if t2 + r + 1 != argv.len() => {
                        return Err(self.log(offset0 + t2 + r + 1, ErrorId::BadArraySuffix, Errno::Einval))
                    }
                    Some(r) => {
                        match kstrtouint(&rest[..r], 0) {
                            Ok(n) if n != 0 => count = n,
                            _ => return Err(self.log(offset0 + t2, ErrorId::BadArrayNum, Errno::Einval)),
                        }
                        if count > MAX_ARRAY_LEN {
                            return Err(self.log(offset0 + t2, ErrorId::ArrayTooBig, Errno::Einval));
                        }
                    }
                }
                tt = &argv[tstart..tstart + b];
            }
            t = Some((tstart, tt.to_vec()));
        }
        let toff = t.as_ref().map_or(0, |(o, _)| *o);
        let mut ftype;
        if arg == b"$comm" || arg == b"$COMM" || arg.starts_with(b"\\\"") {
            if count != 0 || t.as_ref().is_some_and(|(_, s)| s != b"string") {
                if g612 {
                    return Err(self.log(offset0 + toff, ErrorId::NeedStringType, Errno::Einval));
                }
                return Err(Rejection::Silent {
                    errno: Errno::Einval,
                    why: "$comm and immediate strings take only the string type (6.1 logs nothing)",
                });
            }
            ftype = find_fetch_type(self.d, Some(b"string"));
        } else {
            ftype = find_fetch_type(self.d, t.as_ref().map(|(_, s)| s.as_slice()));
        }
        let Some(mut ft) = ftype.take() else {
            return Err(self.log(offset0 + toff, ErrorId::BadType, Errno::Einval));
        };
        if !g612 {
            self.event_size(ctx, ft, count, offset0)?;
        }

        // The fetch chain.
        let mut code = [Op::Nop; FETCH_INSN_MAX];
        code[FETCH_INSN_MAX - 1] = Op::End;
        let mut pc = 0usize;
        ctx.last_type = None;
        let fetch = self.parse_probe_arg(ctx, arg, &mut code, &mut pc, 0, &span_at)?;
        if !g612 {
            // 6.1 passes the offset by value: later errors use the body start.
            ctx.offset = offset0;
        }
        let err_off = ctx.offset;
        if g612 && ctx.last_type.is_some() {
            match &t {
                None => {
                    if let Some(name) = self.fetch_type_from_btf(ctx) {
                        if let Some(x) = find_fetch_type(self.d, Some(name.as_bytes())) {
                            ft = x;
                        }
                    }
                }
                Some((_, ts)) if ts.windows(6).any(|w| w == b"string") => {
                    self.check_prepare_btf_string_fetch(ctx, ts, &mut code, &mut pc)?;
                }
                _ => {}
            }
        }
        if g612 {
            self.event_size(ctx, ft, count, err_off)?;
        }
        // finalize_fetch_insn
        let cur = code[pc];
        if ft.is_string {
            if ft.name == "symstr" {
                if !matches!(cur, Op::Reg | Op::Stack | Op::Retval | Op::Arg | Op::Deref | Op::TpArg) {
                    return Err(self.log(err_off + toff, ErrorId::BadSymstring, Errno::Einval));
                }
            } else if !matches!(cur, Op::Deref | Op::Uderef | Op::Imm | Op::Comm | Op::Data | Op::TpArg) {
                return Err(self.log(err_off + toff, ErrorId::BadString, Errno::Einval));
            }
            if ft.name == "symstr" || matches!(cur, Op::Imm | Op::Comm | Op::Data | Op::TpArg) || count != 0 {
                pc += 1;
                if code[pc] != Op::Nop {
                    return Err(self.log(err_off, ErrorId::TooManyOps, Errno::Einval));
                }
            }
            code[pc] = if ft.name == "ustring" || code[pc] == Op::Uderef {
                Op::StUstring
            } else if ft.name == "symstr" {
                Op::StSymstr
            } else {
                Op::StString
            };
        } else if cur == Op::Deref {
            code[pc] = Op::StMem;
        } else if cur == Op::Uderef {
            code[pc] = Op::StUmem;
        } else {
            pc += 1;
            if code[pc] != Op::Nop {
                return Err(self.log(err_off, ErrorId::TooManyOps, Errno::E2big));
            }
            code[pc] = Op::StRaw;
        }
        let scode = code[pc];
        let mut bitfield = None;
        if let Some((_, ts)) = &t {
            match parse_bitfield(ts, ft, &mut code, &mut pc) {
                Ok(bf) => bitfield = bf,
                Err(()) => return Err(self.log(err_off + toff, ErrorId::BadBitfield, Errno::Einval)),
            }
        } else if g612 && ctx.last_type.is_some() {
            // parse_btf_bitfield
            if !(ctx.last_bitsize.is_multiple_of(8) && ctx.last_bitoffs == 0) {
                pc += 1;
                if code[pc] != Op::Nop {
                    return Err(self.log(err_off, ErrorId::TooManyOps, Errno::Einval));
                }
                code[pc] = Op::ModBf;
            }
        }
        if count != 0 {
            if !matches!(scode, Op::StMem | Op::StString | Op::StUstring) {
                return Err(self.log(err_off + toff, ErrorId::BadString, Errno::Einval));
            }
            pc += 1;
            if code[pc] != Op::Nop {
                return Err(self.log(err_off, ErrorId::TooManyOps, Errno::E2big));
            }
            code[pc] = Op::LpArray;
        }
        debug_assert!(pc < FETCH_INSN_MAX && code[pc] != Op::Nop);
        let ty = t.map(|(o, s)| ArgType {
            name: lossy(&s),
            array: (count != 0).then_some(count),
            bitfield,
            span: span_at(o, argv.len()),
        });
        Ok((fetch, ty, ft.name.to_owned()))
    }

    /// `*size += type->size * count; if (*size > MAX_PROBE_EVENT_SIZE) EVENT_TOO_BIG`.
    fn event_size(&mut self, ctx: &mut Ctx, ft: FetchType, count: u32, off: usize) -> PResult<()> {
        ctx.size += ft.size * (count.max(1) as usize);
        if self.d.event_size_limit && ctx.size > MAX_PROBE_EVENT_SIZE {
            return Err(self.log(off, ErrorId::EventTooBig, Errno::E2big));
        }
        Ok(())
    }

    /// `parse_probe_arg` (recursive). `depth` only guards the Rust stack; the kernel's
    /// own limit (16 instructions) is hit long before.
    #[allow(clippy::too_many_arguments)]
    fn parse_probe_arg(
        &mut self,
        ctx: &mut Ctx,
        arg: &[u8],
        code: &mut [Op; FETCH_INSN_MAX],
        pc: &mut usize,
        rel: usize,
        span_at: &dyn Fn(usize, usize) -> Span,
    ) -> PResult<Fetch> {
        let g612 = self.d.generation >= Generation::Linux6_12;
        let end = FETCH_INSN_MAX - 1;
        let start = *pc;
        let c0 = arg.first().copied().unwrap_or(0);
        let c1 = arg.get(1).copied().unwrap_or(0);
        let mut fetch: Option<Fetch> = None;
        let mut logged = false;
        match c0 {
            b'$' => {
                fetch = Some(self.parse_probe_vars(ctx, arg, code, pc, rel, span_at)?);
            }
            b'%' => {
                if ctx.flags.tpoint && !g612 || g612 && ctx.flags.fprobe {
                    self.log(ctx.offset, ErrorId::BadVar, Errno::Einval);
                    logged = true;
                } else {
                    let name = &arg[1..];
                    if self.d.arch.registers().iter().any(|r| r.as_bytes() == name) {
                        code[start] = Op::Reg;
                        fetch = Some(Fetch::Register { name: lossy(name) });
                    } else {
                        return Err(self.log(ctx.offset, ErrorId::BadRegName, Errno::Einval));
                    }
                }
            }
            b'@' => {
                let inner;
                if isdigit(c1) {
                    match ul(self.d, &arg[1..], 0) {
                        Ok(v) => {
                            code[*pc] = Op::Imm;
                            inner = Fetch::Address(v);
                        }
                        Err(e) => return Err(self.log(ctx.offset, ErrorId::BadMemAddr, errno_of(e))),
                    }
                } else if c1 == b'+' {
                    return Err(self.log(ctx.offset, ErrorId::FileOnKprobe, Errno::Einval));
                } else {
                    code[*pc] = Op::NopSymbol;
                    *pc += 1;
                    if *pc == end {
                        return Err(self.log(ctx.offset, ErrorId::TooManyOps, Errno::Einval));
                    }
                    code[*pc] = Op::Imm;
                    inner = Fetch::Symbol { name: lossy(&arg[1..]) };
                }
                *pc += 1;
                if *pc == end {
                    return Err(self.log(ctx.offset, ErrorId::TooManyOps, Errno::Einval));
                }
                code[*pc] = Op::Deref;
                fetch = Some(inner);
            }
            b'+' | b'-' => {
                // `+u` / `-u`: arg[1] = arg[0]; arg++  (then '+' is skipped).
                let mut user = false;
                let mut s: Vec<u8> = arg.to_vec();
                if c1 == b'u' {
                    user = true;
                    s[1] = s[0];
                    s.remove(0);
                }
                if s[0] == b'+' {
                    s.remove(0);
                }
                let Some(lp) = find(&s, b'(') else {
                    return Err(self.log(ctx.offset, ErrorId::DerefNeedBrace, Errno::Einval));
                };
                let off = match l(self.d, &s[..lp], 0) {
                    Ok(o) => o,
                    Err(e) => return Err(self.log(ctx.offset, ErrorId::BadDerefOffs, errno_of(e))),
                };
                ctx.offset += lp + 1 + usize::from(s[0] != b'-');
                // Where the inner text sits in `arg` (the kernel's idea is `ctx.offset`,
                // which is one byte short after a `u`; spans use the real place).
                let inner_start = arg.len() - (s.len() - lp - 1);
                let rest = &arg[inner_start..];
                let Some(rp) = rfind(rest, b')') else {
                    return Err(self.log(ctx.offset + rest.len(), ErrorId::DerefOpenBrace, Errno::Einval));
                };
                let cur_offs = ctx.offset;
                let inner = self.parse_probe_arg(ctx, &rest[..rp], code, pc, rel + inner_start, span_at)?;
                ctx.offset = cur_offs;
                if matches!(code[*pc], Op::Comm | Op::Data) {
                    return Err(self.log(ctx.offset, ErrorId::CommCantDeref, Errno::Einval));
                }
                *pc += 1;
                if *pc == end {
                    return Err(self.log(ctx.offset, ErrorId::TooManyOps, Errno::Einval));
                }
                code[*pc] = if user { Op::Uderef } else { Op::Deref };
                ctx.last_type = None;
                let digits = 1 + usize::from(user);
                let lp_arg = find(arg, b'(').unwrap_or(arg.len());
                fetch = Some(Fetch::Deref {
                    offset: off,
                    user,
                    inner: Box::new(inner),
                    offset_span: span_at(rel + digits.min(lp_arg), rel + lp_arg),
                });
            }
            b'\\' => {
                if c1 == b'"' {
                    let s = &arg[2..];
                    let closed = if self.d.empty_immstr_check {
                        s.last() == Some(&b'"')
                    } else {
                        // `str[len - 1]` with len 0 reads the opening quote.
                        s.is_empty() || s.last() == Some(&b'"')
                    };
                    if !closed {
                        return Err(self.log(ctx.offset + 2 + s.len(), ErrorId::ImmstrNoClose, Errno::Einval));
                    }
                    code[*pc] = Op::Data;
                    fetch = Some(Fetch::ImmediateString(lossy(&s[..s.len().saturating_sub(1)])));
                } else {
                    match str_to_immediate(self.d, &arg[1..]) {
                        Ok(v) => {
                            code[*pc] = Op::Imm;
                            fetch = Some(Fetch::Immediate(v));
                        }
                        Err(e) => return Err(self.log(ctx.offset + 1, ErrorId::BadImm, errno_of(e))),
                    }
                }
            }
            _ => {
                if g612 && (isalpha(c0) || c0 == b'_') {
                    if !ctx.flags.is_entry() && !ctx.flags.is_return() {
                        return Err(self.log(ctx.offset, ErrorId::NosupBtfarg, Errno::Einval));
                    }
                    fetch = Some(self.parse_btf_arg(ctx, arg, code, pc, rel, span_at)?);
                }
            }
        }
        if code[start] == Op::Nop {
            // Parsed, but no fetch method found.
            let _ = logged;
            return Err(self.log(ctx.offset, ErrorId::BadFetchArg, Errno::Einval));
        }
        Ok(fetch.unwrap_or(Fetch::Immediate(0)))
    }

    /// `parse_probe_vars`: `$retval`, `$stack[N]`, `$comm`, `$argN`.
    fn parse_probe_vars(
        &mut self,
        ctx: &mut Ctx,
        orig: &[u8],
        code: &mut [Op; FETCH_INSN_MAX],
        pc: &mut usize,
        rel: usize,
        span_at: &dyn Fn(usize, usize) -> Span,
    ) -> PResult<Fetch> {
        let g612 = self.d.generation >= Generation::Linux6_12;
        let arg = &orig[1..];
        let max = self.d.arch.param_max_stack();
        let inval = |p: &mut Self, id: ErrorId, off: usize| Err(p.log(off, id, Errno::Einval));
        let off = ctx.offset;
        let is_retval = if g612 { arg.starts_with(b"retval") } else { arg == b"retval" };
        if is_retval {
            if !ctx.flags.ret {
                return inval(self, ErrorId::RetvalOnProbe, off);
            }
            if !g612 || !self.d.btf_args {
                code[*pc] = Op::Retval;
                return Ok(Fetch::Retval);
            }
            return self.parse_btf_arg(ctx, orig, code, pc, rel, span_at);
        }
        if let Some(rest) = arg.strip_prefix(b"stack") {
            if rest.is_empty() {
                code[*pc] = Op::StackP;
                return Ok(Fetch::StackPointer);
            }
            if isdigit(rest[0]) {
                let Ok(n) = ul(self.d, rest, 10) else {
                    return inval(self, ErrorId::BadVar, off);
                };
                if n > max {
                    return inval(self, ErrorId::BadStackNum, off);
                }
                code[*pc] = Op::Stack;
                return Ok(Fetch::Stack(n));
            }
            return inval(self, ErrorId::BadVar, off);
        }
        if arg == b"comm" || arg == b"COMM" {
            code[*pc] = Op::Comm;
            return Ok(Fetch::Comm);
        }
        if self.d.arg_access {
            if let Some(rest) = arg.strip_prefix(b"arg") {
                let entry_ok = if g612 { true } else { ctx.flags.fentry && !ctx.flags.ret };
                if entry_ok {
                    let Ok(n) = ul(self.d, rest, 10) else {
                        return inval(self, ErrorId::BadVar, off);
                    };
                    if n == 0 || n > max {
                        return inval(self, ErrorId::BadArgNum, off);
                    }
                    let n32 = n as u32;
                    if ctx.flags.is_entry() {
                        code[*pc] = Op::Arg;
                        return Ok(Fetch::Arg { n: n32, at_entry: false });
                    } else if g612 && ctx.flags.is_return() {
                        code[*pc] = Op::Edata;
                        return Ok(Fetch::Arg { n: n32, at_entry: true });
                    } else if g612 {
                        return inval(self, ErrorId::NofentryArgs, off);
                    }
                }
            }
        }
        inval(self, ErrorId::BadVar, off)
    }

    /// `split_next_field`: Ok(Some((is_arrow, field start))) / Ok(None).
    fn split_next_field(&mut self, ctx: &Ctx, s: &[u8]) -> PResult<Option<(bool, usize, usize)>> {
        match s.iter().position(|&c| c == b'.' || c == b'-') {
            None => Ok(None),
            Some(p) => {
                if s[p] == b'-' && s.get(p + 1) == Some(&b'>') {
                    Ok(Some((true, p, p + 2)))
                } else if s[p] == b'.' {
                    Ok(Some((false, p, p + 1)))
                } else {
                    Err(self.log(ctx.offset + p, ErrorId::BadHyphen, Errno::Einval))
                }
            }
        }
    }

    /// `parse_btf_arg` + `parse_btf_field` (6.12).
    fn parse_btf_arg(
        &mut self,
        ctx: &mut Ctx,
        varname: &[u8],
        code: &mut [Op; FETCH_INSN_MAX],
        pc: &mut usize,
        rel: usize,
        span_at: &dyn Fn(usize, usize) -> Span,
    ) -> PResult<Fetch> {
        if !self.d.btf_args {
            return Err(self.log(ctx.offset, ErrorId::NosupBtfarg, Errno::Eopnotsupp));
        }
        if ctx.funcname.is_none() {
            return Err(Rejection::Silent { errno: Errno::Einval, why: "BTF argument without a function name" });
        }
        let first = self.split_next_field(ctx, varname)?;
        let (name, mut field_at, mut arrow) = match first {
            Some((arrow, cut, next)) => (&varname[..cut], Some(next), arrow),
            None => (varname, None, false),
        };
        if let (Some(next), false) = (field_at, arrow) {
            return Err(self.log(ctx.offset + next, ErrorId::NosupDatArg, Errno::Eopnotsupp));
        }
        let fname = ctx.funcname.clone().unwrap_or_default();
        let arg_index = self.index.saturating_sub(2);
        let known = self.query_btf(ctx);
        let mut tid: Option<u32> = None;
        if ctx.flags.ret && name == b"$retval" {
            code[*pc] = Op::Retval;
            match (&known, &ctx.btf) {
                (Ok(_), Some(Ok(proto))) => {
                    if proto.ret == 0 {
                        return Err(self.log(ctx.offset, ErrorId::NoRetval, Errno::Enoent));
                    }
                    tid = Some(proto.ret);
                }
                (Err(()), _) => {
                    self.assumptions.push(Assumption::BtfArg { function: fname.clone(), arg: arg_index });
                }
                _ => {
                    if let Some(next) = field_at {
                        return Err(self.log(ctx.offset + next, ErrorId::NoBtfEntry, Errno::Enoent));
                    }
                    return Ok(Fetch::Retval);
                }
            }
        } else {
            match (&known, &ctx.btf) {
                (Ok(true), Some(Ok(proto))) => {
                    let Some(i) = proto.params.iter().position(|(n, _)| n.as_bytes() == name) else {
                        return Err(self.log(ctx.offset, ErrorId::NoBtfarg, Errno::Enoent));
                    };
                    code[*pc] = if ctx.flags.is_entry() { Op::Arg } else { Op::Edata };
                    tid = Some(proto.params[i].1);
                }
                (Err(()), _) => {
                    code[*pc] = if ctx.flags.is_entry() { Op::Arg } else { Op::Edata };
                    self.assumptions.push(Assumption::BtfArg { function: fname.clone(), arg: arg_index });
                }
                _ => return Err(self.log(ctx.offset, ErrorId::NoBtfEntry, Errno::Enoent)),
            }
        }
        let base = lossy(name);
        // found:
        let mut ty = None;
        if let Some(t) = tid {
            let Some((rid, kind)) = self.env.btf().and_then(|b| b.resolve(t)) else {
                return Err(self.log(ctx.offset, ErrorId::BadBtfTid, Errno::Einval));
            };
            ctx.last_type = Some(rid);
            ctx.last_bitoffs = 0;
            ctx.last_bitsize = 0;
            ty = Some(kind);
        }
        let mut fields = Vec::new();
        let Some(mut at) = field_at.take() else {
            return Ok(Fetch::Btf { base, fields });
        };
        ctx.offset += at;
        // parse_btf_field: the outer loop walks `->`, the inner one `.`.
        let end = FETCH_INSN_MAX - 1;
        loop {
            if let Some(kind) = ty {
                let BtfKind::Ptr { target } = kind else {
                    return Err(self.log(ctx.offset, ErrorId::NoPtrStrct, Errno::Einval));
                };
                let Some((sid, skind)) = self.env.btf().and_then(|b| b.resolve(target)) else {
                    return Err(self.log(ctx.offset, ErrorId::BadBtfTid, Errno::Einval));
                };
                ty = Some(skind);
                tid = Some(sid);
            }
            let mut bitoffs = 0u32;
            loop {
                let s = &varname[at..];
                let next = self.split_next_field(ctx, s)?;
                let (fname_end, next_at, is_ptr) = match next {
                    Some((a, cut, n)) => (cut, Some(at + n), a),
                    None => (s.len(), None, false),
                };
                let member = &s[..fname_end];
                fields.push(Field { name: lossy(member), arrow, span: span_at(rel + at, rel + at + fname_end) });
                if let (Some(t), Some(btf)) = (tid, self.env.btf()) {
                    let m = match btf.member(t, &lossy(member)) {
                        Ok(Some(m)) => m,
                        Ok(None) => return Err(self.log(ctx.offset, ErrorId::NoBtfField, Errno::Enoent)),
                        Err(()) => return Err(self.log(ctx.offset, ErrorId::BadBtfTid, Errno::Einval)),
                    };
                    bitoffs += m.bit_offset;
                    ctx.last_bitsize = m.bitfield_size;
                    let Some((mid, mkind)) = btf.resolve(m.type_id) else {
                        return Err(self.log(ctx.offset, ErrorId::BadBtfTid, Errno::Einval));
                    };
                    tid = Some(mid);
                    ty = Some(mkind);
                    let _ = &mkind;
                }
                arrow = is_ptr;
                match next_at {
                    Some(n) => {
                        ctx.offset += n - at;
                        at = n;
                    }
                    None => {
                        // `ctx->offset += next - fieldname` with next == NULL: the kernel
                        // adds a garbage amount here, but nothing logs after a full walk.
                        at = varname.len();
                    }
                }
                if is_ptr || next_at.is_none() {
                    break;
                }
            }
            *pc += 1;
            if *pc == end {
                return Err(self.log(ctx.offset, ErrorId::TooManyOps, Errno::Einval));
            }
            code[*pc] = Op::Deref;
            ctx.last_bitoffs = bitoffs % 8;
            ctx.last_type = tid;
            if at >= varname.len() {
                break;
            }
        }
        Ok(Fetch::Btf { base, fields })
    }

    /// `fetch_type_from_btf_type`.
    fn fetch_type_from_btf(&mut self, ctx: &mut Ctx) -> Option<&'static str> {
        let btf = self.env.btf()?;
        let (_, kind) = btf.resolve(ctx.last_type?)?;
        match kind {
            BtfKind::Enum => Some("s32"),
            BtfKind::Enum64 => Some("s64"),
            BtfKind::Ptr { .. } => Some(if self.d.arch.bits() == 32 { "x32" } else { "x64" }),
            BtfKind::Int { bits, signed, offset } => {
                let s = match (signed, bits) {
                    (true, 8) => "s8",
                    (true, 16) => "s16",
                    (true, 32) => "s32",
                    (true, 64) => "s64",
                    (false, 8) => "u8",
                    (false, 16) => "u16",
                    (false, 32) => "u32",
                    (false, 64) => "u64",
                    (true, _) => return None,
                    (false, _) => {
                        ctx.last_bitsize = bits;
                        ctx.last_bitoffs += offset;
                        "u64"
                    }
                };
                Some(s)
            }
            _ => None,
        }
    }

    /// `check_prepare_btf_string_fetch`.
    fn check_prepare_btf_string_fetch(
        &mut self,
        ctx: &mut Ctx,
        typename: &[u8],
        code: &mut [Op; FETCH_INSN_MAX],
        pc: &mut usize,
    ) -> PResult<()> {
        let Some(btf) = self.env.btf() else {
            return Ok(());
        };
        let Some(t) = ctx.last_type else {
            return Ok(());
        };
        if btf.is_char_array(t) {
            return Ok(());
        }
        if btf.is_char_ptr(t) {
            if code[*pc + 1] == Op::End {
                return Err(self.log(ctx.offset, ErrorId::TooManyOps, Errno::E2big));
            }
            *pc += 1;
            code[*pc] = if typename.first() == Some(&b'u') { Op::Uderef } else { Op::Deref };
            return Ok(());
        }
        Err(self.log(ctx.offset, ErrorId::BadType4str, Errno::Einval))
    }
}

/// `str_to_immediate`.
fn str_to_immediate(d: &Dialect, s: &[u8]) -> Result<u64, ParseIntError> {
    match s.first() {
        Some(c) if isdigit(*c) => ul(d, s, 0),
        Some(b'-') => l(d, s, 0).map(|v| v as u64),
        Some(b'+') => l(d, &s[1..], 0).map(|v| v as u64),
        _ => Err(ParseIntError::Invalid),
    }
}

/// `kstrtoul` for the target's `unsigned long`.
fn ul(d: &Dialect, s: &[u8], base: u32) -> Result<u64, ParseIntError> {
    let v = kstrtoul(s, base)?;
    if d.arch.bits() == 32 && v > u64::from(u32::MAX) {
        return Err(ParseIntError::Range);
    }
    Ok(v)
}

/// `kstrtol` for the target's `long`.
fn l(d: &Dialect, s: &[u8], base: u32) -> Result<i64, ParseIntError> {
    let v = kstrtol(s, base)?;
    if d.arch.bits() == 32 && i32::try_from(v).is_err() {
        return Err(ParseIntError::Range);
    }
    Ok(v)
}

/// The errno a failed `kstrto*` passes on.
fn errno_of(e: ParseIntError) -> Errno {
    match e {
        ParseIntError::Invalid => Errno::Einval,
        ParseIntError::Range => Errno::Erange,
    }
}

/// `__parse_bitfield_probe_arg`: Ok(None) when not a bitfield type.
fn parse_bitfield(
    bf: &[u8],
    t: FetchType,
    code: &mut [Op; FETCH_INSN_MAX],
    pc: &mut usize,
) -> Result<Option<(u32, u32, u32)>, ()> {
    if bf.first() != Some(&b'b') {
        return Ok(None);
    }
    let (bw, n) = simple_strtoul(&bf[1..], 0);
    let tail = 1 + n;
    if bw == 0 || bf.get(tail) != Some(&b'@') {
        return Err(());
    }
    let bo_start = tail + 1;
    let (bo, n2) = simple_strtoul(&bf[bo_start..], 0);
    if n2 == 0 || bf.get(bo_start + n2) != Some(&b'/') {
        return Err(());
    }
    if code[*pc + 1] != Op::Nop {
        return Err(());
    }
    *pc += 1;
    code[*pc] = Op::ModBf;
    let bits = (t.size * 8) as u64;
    if bits < bw.wrapping_add(bo) || bw.checked_add(bo).is_none() {
        return Err(());
    }
    Ok(Some((bw as u32, bo as u32, bits as u32)))
}

/// `traceprobe_expand_dentry_args` for one argument. `offsets` are the kernel build's
/// `offsetof(struct dentry, d_name.name)` and `offsetof(struct file, f_path.dentry)`.
fn expand_dentry(arg: &[u8], offsets: (u32, u32)) -> Vec<u8> {
    let eq = find(arg, b'=');
    let body_end = arg.len() - 4;
    let (name, body) = match eq {
        Some(e) => (&arg[..e + 1], &arg[e + 1..body_end]),
        None => (&arg[..0], &arg[..body_end]),
    };
    let b = lossy(body);
    let n = lossy(name);
    if arg[arg.len() - 1] == b'd' {
        format!("{n}+0x0(+0x{:x}({b})):string", offsets.0).into_bytes()
    } else {
        format!("{n}+0x0(+0x{:x}(+0x{:x}({b}))):string", offsets.0, offsets.1).into_bytes()
    }
}

/// `sanitize_event_name` (6.12 also turns `*` into `_`). Like the C loop, the first
/// character is never changed.
fn sanitize_event_name(name: &str, star: bool) -> String {
    let mut out = String::with_capacity(name.len());
    for (i, c) in name.chars().enumerate() {
        if i > 0 && (c == ':' || c == '.' || (star && c == '*')) {
            out.push('_');
        } else {
            out.push(c);
        }
    }
    // snprintf into MAX_EVENT_NAME_LEN bytes.
    let mut cut = out.len().min(MAX_EVENT_NAME_LEN - 1);
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    out.truncate(cut);
    out
}

/// `trace_parse_run_command` for one line written with its newline (as `echo` does):
/// a line that does not fit the 4096-byte write buffer with its `\n` and the NUL (or
/// that holds a NUL, which ends the kernel's `strlen` early) is refused before any
/// parser sees it; a `#` starts a comment.
pub(crate) fn run_command(
    d: &Dialect,
    env: &dyn Env,
    registry: Option<&Registry>,
    text: &str,
) -> Result<Line, Rejection> {
    const WRITE_BUFSIZE: usize = 4096;
    let bytes = text.as_bytes();
    if bytes.len() + 1 > WRITE_BUFSIZE - 1 || bytes.contains(&0) {
        return Err(Rejection::Silent {
            errno: Errno::Einval,
            why:
                "line too long for the kernel's write buffer (at most 4094 bytes; \"Line length is too long\" in dmesg)",
        });
    }
    let end = bytes.iter().position(|&c| c == b'#').unwrap_or(bytes.len());
    parse_command(d, env, registry, &bytes[..end])
}

/// Parse one command, as a write of it to `dynamic_events` would.
fn parse_command(d: &Dialect, env: &dyn Env, registry: Option<&Registry>, line: &[u8]) -> Result<Line, Rejection> {
    let words = argv_split(line);
    if words.is_empty() {
        return Ok(Line::Empty);
    }
    if line[0] == b'-' || line[0] == b'!' {
        return parse_removal(line, &words);
    }
    let mut p = Parser {
        d,
        env,
        line,
        words,
        subsystem: "trace_kprobe",
        index: 0,
        logged: Vec::new(),
        assumptions: Vec::new(),
        registry,
    };
    let head0 = p.word(0)[0];
    let r = match head0 {
        b'p' | b'r' => p.kprobe(),
        b'f' | b't' if d.fprobe => p.fprobe(),
        b'e' => return Err(Rejection::Unmodelled { what: "event probes (e:) are not modelled" }),
        b's' => return Err(Rejection::Unmodelled { what: "synthetic events (s:) are not modelled" }),
        _ => Ok(None),
    };
    match r? {
        Some(probe) => Ok(Line::Probe(probe)),
        None => {
            let (s, e) = p.words[1.min(p.words.len() - 1)];
            let w1 = &line[s..e];
            if (head0 == b'p' || head0 == b'r')
                && p.words.len() >= 2
                && find(w1, b'/').is_some()
                && find(w1, b':').is_some()
            {
                return Err(Rejection::Unmodelled { what: "uprobes (PATH:OFFSET) are not modelled" });
            }
            Err(Rejection::Silent {
                errno: Errno::Einval,
                why: "no probe type accepts this command (-ECANCELED from every parser)",
            })
        }
    }
}

/// `dyn_event_release`: `-:[GRP/]EVENT`.
fn parse_removal(line: &[u8], words: &[(usize, usize)]) -> Result<Line, Rejection> {
    let (s, e) = words[0];
    let w = &line[s..e];
    let ev_at = if w[0] == b'-' {
        if w.get(1) != Some(&b':') {
            return Err(Rejection::Silent { errno: Errno::Einval, why: "a removal is written -:[GROUP/]EVENT" });
        }
        2
    } else {
        match find(w, b':') {
            Some(c) => c + 1,
            None => {
                return Err(Rejection::Silent { errno: Errno::Einval, why: "a removal is written -:[GROUP/]EVENT" })
            }
        }
    };
    let ev = &w[ev_at..];
    let (group, event) = match find(ev, b'/') {
        Some(sl) => (Some(lossy(&ev[..sl])), lossy(&ev[sl + 1..])),
        None => (None, lossy(ev)),
    };
    if group.is_none() && event.is_empty() {
        return Err(Rejection::Silent { errno: Errno::Einval, why: "a removal needs an event name" });
    }
    Ok(Line::Remove(Removal { group, event, span: s..e }))
}
