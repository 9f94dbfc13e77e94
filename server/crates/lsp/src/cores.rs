//! The core dump a document's settings name (`core = "…"`), opened against the first of
//! its loaded kernels that the dump is of, and the dry-run values it gives as inlay
//! hints. One entry per canonical core path; reopened when the file changes or the
//! kernels it could be matched against do.

use crate::kernels::Stamp;
use fevlint_dryrun::{Core, Pick};
use fevlint_ide::InlayHint;
use fevlint_kernel::Kernel;
use fevlint_syntax::{Parse, Span};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Longest value shown in a hint's label; the tooltip has the whole value.
const LABEL_CHARS: usize = 40;

/// A core opened against one kernel.
#[derive(Clone, Debug)]
pub struct Opened {
    pub core: Arc<Core>,
    pub kernel: Arc<Kernel>,
}

#[derive(Debug)]
struct Entry {
    stamp: Stamp,
    /// The kernels (by load identity) it was matched against.
    kernels: Vec<usize>,
    result: Result<Opened, String>,
}

#[derive(Debug, Default)]
pub struct Cores {
    entries: HashMap<PathBuf, Entry>,
}

fn ids(kernels: &[(PathBuf, Arc<Kernel>)]) -> Vec<usize> {
    kernels.iter().map(|(_, k)| Arc::as_ptr(k) as usize).collect()
}

impl Cores {
    /// The opened core, if the entry for `core` is current for these kernels; `None`
    /// when it must be (re)opened.
    pub fn get(&self, core: &Path, kernels: &[(PathBuf, Arc<Kernel>)]) -> Option<Result<Opened, String>> {
        let key = crate::kernels::key(core);
        let e = self.entries.get(&key)?;
        (e.kernels == ids(kernels) && e.stamp == Stamp::of(&key)).then(|| e.result.clone())
    }

    /// Records an open.
    pub fn put(&mut self, core: &Path, kernels: &[(PathBuf, Arc<Kernel>)], result: Result<Opened, String>) {
        let key = crate::kernels::key(core);
        let stamp = Stamp::of(&key);
        self.entries.insert(key, Entry { stamp, kernels: ids(kernels), result });
    }

    /// Drops the cores no setting names any more.
    pub fn retain(&mut self, used: &[PathBuf]) {
        let keys: Vec<PathBuf> = used.iter().map(|p| crate::kernels::key(p)).collect();
        self.entries.retain(|k, _| keys.contains(k));
    }
}

/// Opens `core` against the first kernel it is a dump of (IO: run off the async threads).
pub fn open(core: &Path, kernels: &[(PathBuf, Arc<Kernel>)]) -> Result<Opened, String> {
    let mut errors = Vec::new();
    for (path, kernel) in kernels {
        match Core::open(kernel, path, core, &Pick::default()) {
            Ok(c) => return Ok(Opened { core: Arc::new(c), kernel: Arc::clone(kernel) }),
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    if errors.is_empty() {
        return Err(format!("{}: no kernel is loaded to read it with", core.display()));
    }
    Err(errors.join("; "))
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= LABEL_CHARS {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(LABEL_CHARS - 1).collect();
    out.push('…');
    out
}

/// After each field of the accepted definitions overlapping `range`, the value the dry
/// run over `opened` gives it. Definitions of another function than the one the dump's
/// CPU is stopped in get values only for fields that read no argument: the registers
/// are that other function's.
pub fn value_hints(parse: &Parse, range: Span, opened: &Opened) -> Vec<InlayHint> {
    let Opened { core, kernel } = opened;
    let mut out = Vec::new();
    let stopped = core.stopped_at();
    let at_entry = stopped.as_ref().map(|s| s.name.as_str());
    for (line, parsed) in parse.definitions() {
        if line.line.span.end < range.start || line.line.span.start > range.end || parsed.rejection.is_some() {
            continue;
        }
        let function = parsed.function.as_ref().map_or("", |(f, _)| f.as_str());
        let own_registers = at_entry == Some(function);
        let Ok(frame) = core.frame(kernel, function, &[]) else { continue };
        let event = core.evaluate(parsed, &frame);
        for (field, value) in parsed.fields.iter().zip(&event.fields) {
            if field.slot().is_some() && !own_registers {
                continue;
            }
            let mut tip = format!("**dry run** over `{}` ({})\n\n", core.path().display(), core.describe());
            let _ = writeln!(tip, "`{}` = `{}`\n", value.name, value.printed);
            for r in &value.reads {
                match &r.fault {
                    Some(f) => {
                        let _ = writeln!(tip, "- read {} bytes at `0x{:x}`: {f}", r.size, r.addr);
                    }
                    None => {
                        let bytes: String = r.bytes.iter().map(|b| format!("{b:02x}")).collect();
                        let _ = writeln!(tip, "- read {} bytes at `0x{:x}`: `{bytes}`", r.size, r.addr);
                    }
                }
            }
            if let Some(why) = &value.zero_because {
                let _ = writeln!(tip, "\nThe kernel records 0 here: {why}.");
            }
            if field.slot().is_some() {
                if let Some(s) = &stopped {
                    let _ = writeln!(tip, "\nArguments: the registers at `{}+0x{:x}`.", s.name, s.offset);
                }
            }
            out.push(InlayHint { at: field.span.end, label: format!("= {}", shorten(&value.printed)), tooltip: tip });
        }
    }
    out
}
