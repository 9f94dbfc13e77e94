//! A fixture kernel booted under QEMU by `tests/oracle/run-oracle.sh` and stopped through
//! QEMU's gdb stub at the entry of one call, and reading what the kernel traced there: the
//! set-up the dry-run judges (`server/tests/dry_run_kernel.rs`, x86_64;
//! `server/tests/dry_run_i386.rs`, i386) share.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::repo;

/// One boot that writes `definitions` to the kernel, runs `trigger`, stops at the first
/// instruction at `at` where gdb's `condition` holds and dumps that moment to
/// `dir/stop.core` (gdb's registers to `stop.core.regs`, QEMU's kdump to
/// `stop.core.kdump`), then prints the trace.
pub struct GdbStop<'a> {
    /// The QEMU system emulator, when not `qemu-system-x86_64`.
    pub qemu: Option<&'a str>,
    /// A busybox of the guest's architecture, when not the host's.
    pub busybox: Option<&'a Path>,
    /// `qemu_fw_cfg.ko` of the kernel (for the VMCOREINFO note).
    pub fwcfg: &'a Path,
    pub image: &'a Path,
    pub definitions: &'a Path,
    pub trigger: &'a str,
    pub at: u64,
    pub condition: &'a str,
    pub dir: &'a Path,
}

/// What a [`GdbStop`] boot printed, and its dump.
pub struct Stopped {
    pub stdout: String,
    pub stderr: String,
    pub core: PathBuf,
}

impl GdbStop<'_> {
    /// Boots the guest (160 MB); the dump at the end of the run is removed.
    pub fn run(&self) -> Stopped {
        let core = self.dir.join("stop.core");
        let end = self.dir.join("end.core");
        let mut cmd = Command::new("bash");
        cmd.arg(repo().join("tests/oracle/run-oracle.sh"));
        if let Some(qemu) = self.qemu {
            cmd.args(["--qemu", qemu]);
        }
        if let Some(busybox) = self.busybox {
            cmd.arg("--busybox").arg(busybox);
        }
        cmd.args(["-m", "160M", "--fwcfg-ko"])
            .arg(self.fwcfg)
            .arg("--dump")
            .arg(&end)
            .args(["-t", self.trigger])
            .arg("--gdb-stop")
            .arg(format!("{:#x}", self.at))
            .arg(self.condition)
            .arg(&core)
            .arg(self.image)
            .arg(self.definitions);
        let out = cmd.output().expect("run-oracle.sh");
        let _ = std::fs::remove_file(&end);
        Stopped {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            core,
        }
    }
}

impl Stopped {
    /// CR3 at the stop as gdb printed it (`0x...`), from `stop.core.regs`.
    pub fn cr3(&self) -> String {
        let regs = std::fs::read_to_string(self.core.with_extension("core.regs")).expect("gdb's registers at the stop");
        regs.lines()
            .find(|l| l.starts_with("cr3"))
            .and_then(|l| l.split_whitespace().nth(1))
            .expect("cr3 in gdb's registers")
            .to_owned()
    }

    /// QEMU's kdump-compressed dump of the same stop.
    pub fn kdump(&self) -> PathBuf {
        self.core.with_extension("core.kdump")
    }
}

/// `name=value` pairs of a kprobe trace line, after its `(place) ` (strings unquoted).
pub fn kprobe_fields(line: &str) -> Vec<(String, String)> {
    let body = line.split_once(") ").map_or("", |(_, b)| b);
    let mut out = Vec::new();
    let mut rest = body;
    while let Some((name, tail)) = rest.split_once('=') {
        let (value, next) = match tail.strip_prefix('"') {
            Some(q) => q.split_once("\" ").map_or((q.trim_end_matches('"'), ""), |(v, n)| (v, n)),
            None => tail.split_once(' ').unwrap_or((tail, "")),
        };
        out.push((name.trim().to_owned(), value.to_owned()));
        rest = next;
    }
    out
}

/// `name=value` pairs of a function-event line `caller->function(a=1, b=2)`.
pub fn event_fields(line: &str) -> Vec<(String, String)> {
    let inner = line.split_once('(').and_then(|(_, r)| r.strip_suffix(')')).unwrap_or("");
    inner.split(", ").filter_map(|f| f.split_once('=')).map(|(n, v)| (n.to_owned(), v.to_owned())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_fields_split_as_the_kernel_prints_them() {
        let line = r#" kr: (vfs_read+0x0/0x180) mode=0x1d flags=0x8000 name="version" count=777"#;
        let got = kprobe_fields(line);
        assert_eq!(got[0], ("mode".to_owned(), "0x1d".to_owned()));
        assert_eq!(got[2], ("name".to_owned(), "version".to_owned()));
        assert_eq!(got.len(), 4);
        let ev = event_fields("ksys_read->vfs_read(mode=1d, count=777)");
        assert_eq!(ev, [("mode".to_owned(), "1d".to_owned()), ("count".to_owned(), "777".to_owned())]);
    }
}
