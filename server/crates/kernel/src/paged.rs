//! A kernel folder's text facts (its ftrace list, config, kprobe blacklist and trace event
//! list) as tables kept in the cache and searched in place ([`fevlint_load::table`]): a
//! later run answers "is `vfs_read` traceable, and how many functions have that name",
//! "is `CONFIG_MODULES` set" or "is `do_exit` on the blacklist" from the few pages its
//! binary search reads, instead of reading and parsing the whole file. Each table is
//! stored under the file's [`Cache::source_key`] (path, length, modification time) and the
//! name of its form, written only from a file that parsed: a table found means the file
//! read cleanly. What needs a whole list (similar names, wildcards, `kernel info`) still
//! reads it.

use fevlint_load::cache::Cache;
use fevlint_load::symbols::{clone_base, ConfigValue, FilterFunctions, KernelConfig, KprobeBlacklist, TraceEvents};
use fevlint_load::table::{self, Table};
use fevlint_load::Codec;
use std::path::Path;

/// The file names of the tables (bump the number when a form changes: an old entry is
/// then never read as a new one).
pub(crate) const FTRACE: &str = "ftrace-tab2";
pub(crate) const CONFIG: &str = "config-tab2";
pub(crate) const BLACKLIST: &str = "kpbl-tab2";
pub(crate) const EVENTS: &str = "events-tab2";

/// The cache entry name of the table of kind `kind` for the file at `path`; `None` when
/// the cache is off or the file cannot be stat'ed.
pub(crate) fn entry_name(cache: &Cache, path: &Path, kind: &str) -> Option<String> {
    Some(format!("{:016x}.{kind}", cache.source_key(path)?))
}

/// An ftrace list's table: a row per name, and per base name of a compiler clone (value:
/// how many lines have the name, u32; the length of the module of its first `[module]`
/// line, u32, and the module; the names of its traceable clones in file order, each
/// ending in a newline), so that one search answers [`crate::Kernel::function`]. The
/// metadata holds the codec the file was decompressed with, whether any line names a
/// module, and the list's fingerprint ([`FilterFunctions::fingerprint`]).
pub(crate) struct Ftrace {
    table: Table,
    pub codec: Option<Codec>,
    pub fingerprint: u64,
    pub has_modules: bool,
}

/// What the ftrace list says of one name.
pub(crate) struct FtraceName {
    pub count: usize,
    pub module: Option<String>,
    /// Its traceable clones (`name.isra.0`, …), in file order.
    pub clones: Vec<String>,
}

impl Ftrace {
    pub fn build(ff: &FilterFunctions, codec: Option<Codec>) -> Option<Vec<u8>> {
        #[derive(Default)]
        struct Row<'a> {
            count: u32,
            module: Option<&'a str>,
            clones: Vec<&'a str>,
        }
        let mut rows: std::collections::HashMap<&str, Row<'_>> = Default::default();
        let mut has_modules = false;
        for (name, module) in ff.iter() {
            let r = rows.entry(name).or_default();
            r.count = r.count.saturating_add(1);
            r.module = r.module.or(module);
            has_modules |= module.is_some();
        }
        for name in ff.dotted() {
            let r = rows.entry(clone_base(name).0).or_default();
            if !r.clones.contains(&name) {
                r.clones.push(name);
            }
        }
        let rows: Vec<(&str, Vec<u8>)> = rows
            .into_iter()
            .map(|(name, r)| {
                let module = r.module.unwrap_or("");
                let mut v = Vec::with_capacity(8 + module.len());
                v.extend_from_slice(&r.count.to_le_bytes());
                v.extend_from_slice(&(module.len() as u32).to_le_bytes());
                v.extend_from_slice(module.as_bytes());
                for c in r.clones {
                    v.extend_from_slice(c.as_bytes());
                    v.push(b'\n');
                }
                (name, v)
            })
            .collect();
        let codec = codec.and_then(|c| Codec::ALL.iter().position(|&x| x == c)).map_or(0, |i| i as u8 + 1);
        let mut meta = vec![codec, u8::from(has_modules)];
        meta.extend_from_slice(&ff.fingerprint().to_le_bytes());
        table::build(&meta, &rows)
    }

    pub fn open(cache: &Cache, name: &str) -> Option<Ftrace> {
        let table = Table::open(cache, name)?;
        let meta = table.meta();
        let codec = match *meta.first()? {
            0 => None,
            c => Some(*Codec::ALL.get(usize::from(c) - 1)?),
        };
        let has_modules = match *meta.get(1)? {
            0 => false,
            1 => true,
            _ => return None,
        };
        let fingerprint = u64::from_le_bytes(meta.get(2..10)?.try_into().ok()?);
        (meta.len() == 10).then_some(Ftrace { table, codec, fingerprint, has_modules })
    }

    /// `None` when the table cannot be read there (damaged).
    pub fn name(&self, name: &str) -> Option<FtraceName> {
        let Some(v) = self.table.first(name.as_bytes())? else {
            return Some(FtraceName { count: 0, module: None, clones: Vec::new() });
        };
        let word = |at: usize| Some(u32::from_le_bytes(v.get(at..at + 4)?.try_into().ok()?) as usize);
        let (count, module_len) = (word(0)?, word(4)?);
        let text = std::str::from_utf8(v.get(8..)?).ok()?;
        let module = text.get(..module_len)?;
        let clones = text.get(module_len..)?;
        Some(FtraceName {
            count,
            module: (!module.is_empty()).then(|| module.to_owned()),
            clones: clones.split_terminator('\n').map(str::to_owned).collect(),
        })
    }
}

/// A config's table: a row per option name (as written, `CONFIG_X`) with the value of
/// its last line (`y`, `m`, `n` for not set, else `=` and the text); the metadata is the
/// release of the header (`1` and the text) or none (`0`).
pub(crate) struct Config {
    table: Table,
    pub release: Option<String>,
}

impl Config {
    pub fn build(config: &KernelConfig) -> Option<Vec<u8>> {
        let mut last: std::collections::HashMap<&str, &ConfigValue> = Default::default();
        for (name, value) in config.iter() {
            last.insert(name, value);
        }
        let rows: Vec<(&str, Vec<u8>)> = last
            .into_iter()
            .map(|(n, v)| {
                let v = match v {
                    ConfigValue::Yes => b"y".to_vec(),
                    ConfigValue::Module => b"m".to_vec(),
                    ConfigValue::NotSet => b"n".to_vec(),
                    ConfigValue::Other(s) => [b"=", s.as_bytes()].concat(),
                };
                (n, v)
            })
            .collect();
        let meta = match config.release() {
            Some(r) => [b"1", r.as_bytes()].concat(),
            None => b"0".to_vec(),
        };
        table::build(&meta, &rows)
    }

    pub fn open(cache: &Cache, name: &str) -> Option<Config> {
        let table = Table::open(cache, name)?;
        let release = match table.meta().split_first()? {
            (b'0', []) => None,
            (b'1', r) => Some(String::from_utf8(r.to_vec()).ok()?),
            _ => return None,
        };
        Some(Config { table, release })
    }

    /// The value of option `name` (the full name, `CONFIG_X`): `None` when the table
    /// cannot be read there, `Some(None)` when the config does not have it.
    pub fn get(&self, name: &str) -> Option<Option<ConfigValue>> {
        let Some(v) = self.table.first(name.as_bytes())? else { return Some(None) };
        Some(Some(match v.as_slice() {
            b"y" => ConfigValue::Yes,
            b"m" => ConfigValue::Module,
            b"n" => ConfigValue::NotSet,
            [b'=', rest @ ..] => ConfigValue::Other(String::from_utf8(rest.to_vec()).ok()?),
            _ => return None,
        }))
    }
}

/// A kprobe blacklist's table: a row per name (no value).
pub(crate) struct Blacklist(Table);

impl Blacklist {
    pub fn build(list: &KprobeBlacklist) -> Option<Vec<u8>> {
        let rows: Vec<(&str, &str)> = list.entries().iter().map(|e| (e.name.as_str(), "")).collect();
        table::build(b"kprobe blacklist", &rows)
    }

    pub fn open(cache: &Cache, name: &str) -> Option<Blacklist> {
        let table = Table::open(cache, name)?;
        (table.meta() == b"kprobe blacklist").then_some(Blacklist(table))
    }

    /// Whether `name` is on the list; `None` when the table cannot be read there.
    pub fn contains(&self, name: &str) -> Option<bool> {
        Some(self.0.first(name.as_bytes())?.is_some())
    }
}

/// A trace event list's table: a row per event (`e` + event: its system, in file order)
/// and per system (`s` + system, no value).
pub(crate) struct Events(Table);

impl Events {
    pub fn build(list: &TraceEvents) -> Option<Vec<u8>> {
        let mut rows: Vec<(Vec<u8>, &[u8])> =
            list.iter().map(|(system, event)| ([b"e", event.as_bytes()].concat(), system.as_bytes())).collect();
        let systems: std::collections::HashSet<&str> = list.iter().map(|(s, _)| s).collect();
        rows.extend(systems.into_iter().map(|s| ([b"s", s.as_bytes()].concat(), &b""[..])));
        table::build(b"trace events", &rows)
    }

    pub fn open(cache: &Cache, name: &str) -> Option<Events> {
        let table = Table::open(cache, name)?;
        (table.meta() == b"trace events").then_some(Events(table))
    }

    /// Whether any event belongs to `system`; `None` when the table cannot be read there.
    pub fn has_system(&self, system: &str) -> Option<bool> {
        Some(self.0.first(&[b"s", system.as_bytes()].concat())?.is_some())
    }

    /// The systems with an event called `event`, in file order.
    pub fn systems_of(&self, event: &str) -> Option<Vec<String>> {
        let found = self.0.find(&[b"e", event.as_bytes()].concat())?;
        found.into_iter().map(|v| String::from_utf8(v).ok()).collect()
    }
}

/// The tables of one kernel, each opened when first asked ([`crate::Kernel`]); `None`
/// where there is none (no such file, the cache off, the whole file read instead).
#[derive(Default)]
pub(crate) struct Tables {
    pub ftrace: std::sync::OnceLock<Option<Ftrace>>,
    pub config: std::sync::OnceLock<Option<Config>>,
    pub blacklist: std::sync::OnceLock<Option<Blacklist>>,
    pub events: std::sync::OnceLock<Option<Events>>,
}
