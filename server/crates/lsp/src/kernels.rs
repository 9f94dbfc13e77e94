//! The kernels the open documents name, shared between documents: one entry per
//! canonical path, loaded in the background, reloaded when the files behind it change
//! (a watched-file event, or different modification times when the configuration
//! changes), dropped when no document names it any more.
//!
//! Invariant: an entry's `generation` grows with every load started for it; a finished
//! load is kept only when its generation is still the entry's (an older, slower load
//! never replaces a newer one).

use fevlint_kernel::Kernel;
use fevlint_load::cache::Cache;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

/// What a kernel path consists of on disk: each file with its modification time and
/// length (the folder's own entries for a fixture-style folder).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stamp(Vec<(PathBuf, Option<SystemTime>, u64)>);

impl Stamp {
    pub fn of(path: &Path) -> Stamp {
        let one = |p: &Path| {
            let m = std::fs::metadata(p).ok();
            (p.to_owned(), m.as_ref().and_then(|m| m.modified().ok()), m.map_or(0, |m| m.len()))
        };
        let mut files = vec![one(path)];
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(path) {
                files.extend(entries.flatten().map(|e| one(&e.path())));
            }
        }
        files.sort();
        Stamp(files)
    }
}

/// The key of a kernel path: canonical when it exists, else as written.
pub fn key(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_owned())
}

#[derive(Debug, Default)]
struct Entry {
    kernel: Option<Arc<Kernel>>,
    /// The last load's error (cleared by a successful load).
    error: Option<String>,
    loading: bool,
    generation: u64,
    /// The files as they were when the last load started.
    stamp: Stamp,
}

/// A load to start: read `key`, then report with `generation`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Load {
    pub key: PathBuf,
    pub generation: u64,
}

/// Where one kernel's load stands (a reload in progress is `Loading`).
#[derive(Debug)]
pub enum LoadState<'a> {
    Loading,
    Loaded(&'a Kernel),
    Failed(&'a str),
}

/// The kernels of one document, as far as they are loaded.
#[derive(Debug, Default)]
pub struct Available {
    pub kernels: Vec<Arc<Kernel>>,
    /// Some configured kernel has no loaded version yet (its load will re-check).
    pub waiting: bool,
}

#[derive(Debug, Default)]
pub struct Kernels {
    entries: HashMap<PathBuf, Entry>,
    /// Where the loads keep decompressions and indexes (the edge chose it).
    pub cache: Cache,
}

impl Kernels {
    /// No kernels yet; their loads will keep what they derive in `cache`.
    pub fn new(cache: Cache) -> Kernels {
        Kernels { entries: HashMap::new(), cache }
    }

    /// Makes the entries for `used` (all paths any open document names) exist, drops
    /// the others, and returns the loads to start: new paths, and with `recheck` those
    /// whose files changed since their last load started.
    pub fn sync(&mut self, used: &[PathBuf], recheck: bool) -> Vec<Load> {
        let keys: HashSet<PathBuf> = used.iter().map(|p| key(p)).collect();
        self.entries.retain(|k, _| keys.contains(k));
        let mut loads = Vec::new();
        for k in keys {
            let entry = self.entries.entry(k.clone()).or_default();
            let fresh = entry.generation == 0;
            if !fresh && !recheck {
                continue;
            }
            let stamp = Stamp::of(&k);
            if fresh || (stamp != entry.stamp) {
                entry.generation += 1;
                entry.loading = true;
                entry.stamp = stamp;
                loads.push(Load { key: k, generation: entry.generation });
            }
        }
        loads.sort_by(|a, b| a.key.cmp(&b.key));
        loads
    }

    /// Forces a reload of the kernels whose files include `changed`.
    pub fn touched(&mut self, changed: &[PathBuf]) -> Vec<Load> {
        let mut loads = Vec::new();
        for (k, entry) in &mut self.entries {
            if changed.iter().any(|c| c.starts_with(k) || key(c).starts_with(k)) {
                entry.generation += 1;
                entry.loading = true;
                entry.stamp = Stamp::of(k);
                loads.push(Load { key: k.clone(), generation: entry.generation });
            }
        }
        loads
    }

    /// Records a finished load; `false` when it is stale (a newer load started, or no
    /// document names the kernel any more).
    pub fn finish(&mut self, load: &Load, result: Result<Kernel, String>) -> bool {
        let Some(entry) = self.entries.get_mut(&load.key) else { return false };
        if entry.generation != load.generation {
            return false;
        }
        entry.loading = false;
        match result {
            Ok(k) => {
                entry.kernel = Some(Arc::new(k));
                entry.error = None;
            }
            // A kernel that fails to reload is gone: answering from stale files would
            // contradict what is on disk.
            Err(e) => {
                entry.kernel = None;
                entry.error = Some(e);
            }
        }
        true
    }

    /// The loaded kernels among `paths`, in their order.
    pub fn available(&self, paths: &[PathBuf]) -> Available {
        let mut out = Available::default();
        for p in paths {
            match self.entries.get(&key(p)) {
                Some(e) => match &e.kernel {
                    Some(k) => out.kernels.push(Arc::clone(k)),
                    None if e.loading || e.generation == 0 => out.waiting = true,
                    None => {} // failed: reported once, skipped
                },
                None => out.waiting = true,
            }
        }
        out
    }

    /// The loaded kernels among `paths`, each with the path it was configured as.
    pub fn loaded(&self, paths: &[PathBuf]) -> Vec<(PathBuf, Arc<Kernel>)> {
        paths
            .iter()
            .filter_map(|p| Some((p.clone(), Arc::clone(self.entries.get(&key(p))?.kernel.as_ref()?))))
            .collect()
    }

    /// Where the load of `path` stands.
    pub fn state(&self, path: &Path) -> LoadState<'_> {
        match self.entries.get(&key(path)) {
            Some(Entry { kernel: Some(k), loading: false, .. }) => LoadState::Loaded(k),
            Some(Entry { error: Some(e), loading: false, .. }) => LoadState::Failed(e),
            _ => LoadState::Loading,
        }
    }

    /// The error of the last load of `path`, if it failed.
    pub fn error(&self, path: &Path) -> Option<&str> {
        self.entries.get(&key(path)).and_then(|e| e.error.as_deref())
    }

    pub fn loaded_count(&self) -> usize {
        self.entries.values().filter(|e| e.kernel.is_some()).count()
    }
}

/// Opens a kernel and warms what completion and the rules read first (the sorted
/// function names, the clone index), off the request path.
pub fn open(path: &Path, cache: &Cache) -> Result<Kernel, String> {
    let k = Kernel::open_cached(path, cache).map_err(|e| e.to_string())?;
    k.load_deferred()?;
    let _ = k.function_names();
    let _ = k.function("");
    Ok(k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_once_per_path_and_again_when_files_change() {
        let dir = std::env::temp_dir().join(format!("fevlint-kernels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("vmlinux.btf"), b"x").expect("write");
        let mut ks = Kernels::default();
        let paths = vec![dir.clone(), dir.join(".")];
        let loads = ks.sync(&paths, false);
        assert_eq!(loads.len(), 1, "one entry for two spellings of the same folder");
        assert!(ks.available(&paths).waiting);
        assert!(ks.sync(&paths, true).is_empty(), "nothing changed");
        assert!(ks.finish(&loads[0], Err("bad".to_owned())));
        assert_eq!(ks.error(&dir), Some("bad"));
        assert!(!ks.available(&paths).waiting, "a failed kernel is not waited for");
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.join("vmlinux.btf"), b"xy").expect("write");
        let again = ks.sync(&paths, true);
        assert_eq!(again.len(), 1, "a changed file reloads");
        assert!(!ks.finish(&loads[0], Err("stale".to_owned())), "an older load is dropped");
        assert_eq!(ks.touched(&[dir.join("vmlinux.btf")]).len(), 1);
        assert!(ks.sync(&[], false).is_empty());
        assert_eq!(ks.loaded_count(), 0);
        assert!(ks.available(&paths).waiting, "dropped: unknown again");
        std::fs::remove_dir_all(&dir).ok();
    }
}
