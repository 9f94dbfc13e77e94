//! The checker: a script's `Parse` plus optional kernels in, diagnostics out. Rules,
//! resolution of fields against kernel types, meanings, drift between kernels,
//! `fevlint.toml`, suppression comments, the lock file, and the renderers (text, json,
//! sarif, github).
//!
//! Knows the syntax and the kernel model; never knows LSP, UTF-16 positions, URIs or the
//! command line.

pub mod analysis;
pub mod config;
pub mod diagnostic;
pub mod lock;
pub mod render;
pub mod rules;
/// Suppression comments belong to the rules (N103 and N104 are about them).
pub use rules::suppress;

pub use fevlint_kernel as kernel;
pub use fevlint_syntax as syntax;

/// Writes a file atomically: a temporary file in the same folder, synced, then renamed.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.fevlint-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            // Keep the permissions of the file being replaced.
            std::fs::set_permissions(&tmp, meta.permissions())?;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
