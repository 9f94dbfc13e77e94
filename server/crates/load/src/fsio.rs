//! Reading and writing the user's own files safely: bounded reads that refuse devices,
//! FIFOs and sockets before reading a byte, and atomic writes that go through symlinks to
//! the file they point at, keep its mode and owner, and never leave a temporary file
//! behind.
//!
//! Every read of a file named by the user (scripts, `fevlint.toml`, `fevlint.lock`, kernel
//! inputs) and every write of one (`fix`, `lock`) goes through here.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The largest script `check`, `lock` and `fix` read. The kernel parses function-event
/// scripts one line at a time and takes at most a page (4096 bytes) per `write(2)` to
/// `function_events`, so no script it accepts needs more than a few MiB: 64 MiB is 16384
/// lines of the longest possible definition, or several million short ones. Not
/// configurable: a file this large is a mistake (a log, an image, `/dev/zero`), not a
/// script, and refusing it at once costs nothing.
pub const MAX_SCRIPT_BYTES: u64 = 64 << 20;
/// The largest `fevlint.toml`: a handful of keys; 1 MiB is far beyond any real one.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;
/// The largest `fevlint.lock`: about 1.2 KB per definition (the examples' 99 take 116
/// KiB), so 32 MiB holds about 28,000 definitions, far beyond any tooling repository. The TOML reader keeps every value
/// with its position while it reads, about 20 times the file in memory: a 200 MB lock
/// cost 4.7 GB; at this bound the peak stays under 1 GB.
pub const MAX_LOCK_BYTES: u64 = 32 << 20;

/// What kind of file a path turned out to be, for a refusal.
fn kind(ft: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        "a directory"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_fifo() {
        "a FIFO (named pipe)"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Why a bounded read failed. Displays with the file name.
#[derive(Debug)]
pub enum ReadError {
    Io {
        path: PathBuf,
        source: io::Error,
    },
    /// A device, FIFO, socket or directory: refused before reading.
    NotRegular {
        path: PathBuf,
        kind: &'static str,
    },
    /// Larger than `limit` bytes (by its size, or by reading past the limit).
    TooLarge {
        path: PathBuf,
        limit: u64,
        size: Option<u64>,
    },
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = match self {
            ReadError::Io { path, .. } | ReadError::NotRegular { path, .. } | ReadError::TooLarge { path, .. } => path,
        };
        write!(f, "cannot read {}: {}", path.display(), self.reason())
    }
}

/// No `source`: the message already includes the OS error.
impl std::error::Error for ReadError {}

impl ReadError {
    /// What went wrong, without the file name.
    pub fn reason(&self) -> String {
        match self {
            ReadError::Io { source, .. } => source.to_string(),
            ReadError::NotRegular { kind, .. } => format!("it is {kind}, not a regular file"),
            ReadError::TooLarge { limit, size: Some(size), .. } => {
                format!("{size} bytes is larger than the limit of {limit} bytes for this kind of file")
            }
            ReadError::TooLarge { limit, size: None, .. } => {
                format!("more than the limit of {limit} bytes for this kind of file")
            }
        }
    }

    /// The error as an `io::Error` of a fitting kind, keeping the message (for callers
    /// whose error types wrap `io::Error`).
    pub fn into_io(self) -> io::Error {
        let kind = match &self {
            ReadError::Io { source, .. } => source.kind(),
            ReadError::NotRegular { .. } => io::ErrorKind::InvalidInput,
            ReadError::TooLarge { .. } => io::ErrorKind::FileTooLarge,
        };
        match self {
            ReadError::Io { source, .. } => source,
            other => io::Error::new(kind, other.reason()),
        }
    }
}

/// Opens `path` for reading without blocking on a FIFO or a terminal, and refuses it
/// unless it is a regular file. Returns the file and its length.
pub fn open_regular(path: &Path) -> Result<(File, u64), ReadError> {
    let io = |source| ReadError::Io { path: path.to_owned(), source };
    // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever; it has no
    // effect on regular files. O_NOCTTY: a terminal never becomes our controlling one.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)
        .map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular { path: path.to_owned(), kind: kind(meta.file_type()) });
    }
    // A regular file after all: reads block as usual again (some network and FUSE file
    // systems would otherwise answer EAGAIN).
    clear_nonblocking(&file).map_err(io)?;
    Ok((file, meta.len()))
}

#[allow(unsafe_code)]
fn clear_nonblocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `len` bytes of `file` from `offset` (pread(2), the file position untouched), into memory
/// not cleared first: `vec![0; len]` is `calloc`, which clears every block it takes from a
/// heap grown before (the CLI grows it at start, `cli::process`): 27M instructions of
/// `memset` in a four-kernel check, for bytes the read overwrites. An error when the
/// file ends first.
#[allow(unsafe_code)]
pub fn read_exact_at(file: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut buf = Vec::<u8>::with_capacity(len);
    let mut filled = 0;
    while filled < len {
        let at = offset.checked_add(filled as u64).and_then(|a| libc::off_t::try_from(a).ok());
        let at = at.ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        // SAFETY: the destination is the `len - filled` bytes of `buf`'s capacity after
        // the part filled so far; pread writes at most that many bytes there.
        let n = unsafe { libc::pread(file.as_raw_fd(), buf.as_mut_ptr().add(filled).cast(), len - filled, at) };
        match n {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n if n > 0 => filled += n as usize,
            _ => match io::Error::last_os_error() {
                e if e.kind() == io::ErrorKind::Interrupted => {}
                e => return Err(e),
            },
        }
    }
    // SAFETY: pread wrote all `len` bytes (the loop ends only when `filled == len`).
    unsafe { buf.set_len(len) };
    Ok(buf)
}

/// Reads a regular file of at most `limit` bytes. Devices, FIFOs, sockets and directories
/// are refused before reading; a file whose size is over the limit is refused without
/// reading it; a file that grows (or a procfs file that reports size 0) is read at most
/// one byte past the limit.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let (file, len) = open_regular(path)?;
    if len > limit {
        return Err(ReadError::TooLarge { path: path.to_owned(), limit, size: Some(len) });
    }
    read_to_limit(file, len, limit).map_err(|e| match e {
        LimitedError::Io(source) => ReadError::Io { path: path.to_owned(), source },
        LimitedError::TooLarge => ReadError::TooLarge { path: path.to_owned(), limit, size: None },
    })
}

/// [`read_limited`] as UTF-8 text (for TOML files; scripts are checked as bytes).
pub fn read_limited_string(path: &Path, limit: u64) -> Result<String, ReadError> {
    let bytes = read_limited(path, limit)?;
    String::from_utf8(bytes).map_err(|e| ReadError::Io {
        path: path.to_owned(),
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()),
        ),
    })
}

/// Why [`read_to_limit`] stopped.
#[derive(Debug)]
pub enum LimitedError {
    Io(io::Error),
    TooLarge,
}

/// Reads `r` to its end, at most `limit` bytes: one more byte is an error, so memory
/// stays bounded by the limit whatever the source (a pipe, standard input, a file that
/// grows). `hint` sizes the buffer, up to `limit + 1` bytes: a hint of `limit + 1` asks
/// for the whole bound at once, so the buffer never grows (nor is copied) however much
/// the source has.
pub fn read_to_limit(r: impl Read, hint: u64, limit: u64) -> Result<Vec<u8>, LimitedError> {
    let mut buf = Vec::with_capacity(hint.min(limit.saturating_add(1)) as usize);
    let mut taken = r.take(limit.saturating_add(1));
    loop {
        match taken.read_to_end(&mut buf) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(LimitedError::Io(e)),
        }
    }
    if buf.len() as u64 > limit {
        return Err(LimitedError::TooLarge);
    }
    Ok(buf)
}

/// Follows `path` through symlinks (at most 40, as the kernel does) to the file they name,
/// which may not exist yet. Relative link targets are taken from the link's folder.
pub fn resolve_symlinks(path: &Path) -> io::Result<PathBuf> {
    let mut p = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            Ok(_) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::from_raw_os_error(libc::ELOOP))
}

/// Replaces the contents of `path` atomically with `bytes`.
///
/// - A symlink is followed (through any number of links, up to 40) and the file it names
///   is replaced; the link stays a link.
/// - The new contents go to an unnamed temporary file (`O_TMPFILE`) in the target's own
///   folder, are synced, get the target's mode and owner, and only then receive a name
///   (`linkat`) that is at once renamed over the target. A process killed while writing
///   leaves nothing behind: the unnamed file vanishes with it. On a file system without
///   `O_TMPFILE` a named temporary file is used, removed on every error; one left by a
///   process killed in the window is removed by the next write to the same file.
/// - A target that exists and is not a regular file (a device, a FIFO, a folder) is
///   refused: renaming over `/dev/null` would replace the device.
/// - When the write fails (a full disk, a file size limit), the target is untouched and
///   the temporary file is gone.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, |f| f.write_all(bytes))
}

/// [`write_atomic`], the contents written by `write` (which may stream them: a cache
/// entry, an index) to the temporary file.
pub fn write_atomic_with(path: &Path, write: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let target = resolve_symlinks(path)?;
    let existing = match std::fs::metadata(&target) {
        Ok(m) if m.file_type().is_file() => Some(m),
        Ok(m) => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is {}, not a regular file: not replaced", target.display(), kind(m.file_type())),
            ))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_owned(),
        _ => PathBuf::from("."),
    };
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.fevlint-");
    remove_stale_temporaries(&dir, &prefix);
    // Unique per call, so two threads writing one file do not share a temporary name.
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!("{prefix}{}-{serial}.tmp", std::process::id()));
    // The mode of the new file: the target's, or 0666 less the umask for a new file.
    let fill = |f: &mut File| -> io::Result<()> {
        write(f)?;
        if let Some(m) = &existing {
            f.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
            // Keep the owner too when we may (root fixing another user's file); an
            // ordinary user cannot give a file away, and then the file is theirs anyway.
            if std::os::unix::fs::fchown(&*f, Some(m.uid()), Some(m.gid())).is_err() {
                // Not permitted: the file keeps our ownership, as any editor would leave it.
            }
            // fchown may clear set-id bits: set the mode again.
            f.set_permissions(std::fs::Permissions::from_mode(m.mode() & 0o7777))?;
        }
        f.sync_all()
    };
    // Naming an unnamed file goes through /proc/self/fd: without /proc, use a named one.
    let unnamed = if Path::new("/proc/self/fd").is_dir() {
        unnamed_temporary(&dir)
    } else {
        Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP))
    };
    let result = match unnamed {
        Ok(mut f) => fill(&mut f).and_then(|()| link_unnamed(&f, &tmp)).and_then(|()| rename_over(&tmp, &target)),
        Err(e) if tmpfile_unsupported(&e) => remove_if_present(&tmp)
            .and_then(|()| {
                OpenOptions::new().write(true).create_new(true).mode(0o666).custom_flags(libc::O_CLOEXEC).open(&tmp)
            })
            .and_then(|mut f| fill(&mut f))
            .and_then(|()| rename_over(&tmp, &target)),
        Err(e) => Err(e),
    };
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Removes a leftover of this process id (a dead process that had the same id).
fn remove_if_present(p: &Path) -> io::Result<()> {
    match std::fs::remove_file(p) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Renames, then syncs the folder so that the new name is on disk.
fn rename_over(tmp: &Path, target: &Path) -> io::Result<()> {
    std::fs::rename(tmp, target)?;
    if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    Ok(())
}

/// An unnamed file in `dir` (`O_TMPFILE`): it has no name until [`link_unnamed`], so it
/// cannot be left behind.
fn unnamed_temporary(dir: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).mode(0o666).custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC).open(dir)
}

/// Whether opening with `O_TMPFILE` failed because the file system (or an old kernel)
/// does not offer it.
fn tmpfile_unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL))
}

/// Gives an `O_TMPFILE` file the name `to` (through `/proc/self/fd`, which needs no
/// privilege, unlike `AT_EMPTY_PATH`).
#[allow(unsafe_code)]
fn link_unnamed(f: &File, to: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let from = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd())).map_err(io::Error::other)?;
    let to = CString::new(to.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both pointers are to NUL-terminated strings alive for the whole call;
    // linkat reads them and keeps no reference.
    let r =
        unsafe { libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Removes `PREFIX<pid>-<serial>.tmp` files in `dir` whose process is gone: what a writer killed
/// between naming its temporary file and renaming it (a window of two system calls) or
/// one on a file system without `O_TMPFILE` leaves.
fn remove_stale_temporaries(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|n| n.strip_suffix(".tmp"))
            .and_then(|n| n.split_once('-'))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fevlint-fsio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("mkdir");
        d
    }

    /// The bytes at an offset, as `read_exact_at` of std reads them; past the end an error.
    #[test]
    fn read_exact_at_reads_the_range_or_fails() {
        let d = scratch("pread");
        let path = d.join("f");
        let bytes: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).expect("write");
        let file = File::open(&path).expect("open");
        assert_eq!(read_exact_at(&file, 0, 70_000).expect("all"), bytes);
        assert_eq!(read_exact_at(&file, 4096, 10_000).expect("middle"), &bytes[4096..14_096]);
        assert_eq!(read_exact_at(&file, 70_000, 0).expect("none"), b"");
        let past = read_exact_at(&file, 65_536, 4_465).expect_err("past the end");
        assert_eq!(past.kind(), io::ErrorKind::UnexpectedEof);
        assert!(read_exact_at(&file, u64::MAX, 1).is_err());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn devices_and_fifos_are_refused_without_reading() {
        let e = read_limited(Path::new("/dev/zero"), 10).expect_err("device");
        assert!(e.to_string().contains("/dev/zero: it is a character device"), "{e}");
        let d = scratch("fifo");
        let fifo = d.join("pipe");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        #[allow(unsafe_code)]
        // SAFETY: a NUL-terminated path, read during the call only.
        let r = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
        assert_eq!(r, 0);
        let e = read_limited(&fifo, 10).expect_err("fifo");
        assert!(e.to_string().contains("a FIFO"), "{e}");
        let e = read_limited(&d, 10).expect_err("dir");
        assert!(e.to_string().contains("a directory"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn limits_hold_for_files_and_streams() {
        let d = scratch("limit");
        let f = d.join("big");
        std::fs::write(&f, vec![b'a'; 11]).expect("write");
        assert!(matches!(read_limited(&f, 10), Err(ReadError::TooLarge { size: Some(11), .. })));
        assert_eq!(read_limited(&f, 11).expect("fits").len(), 11);
        let zero = std::fs::File::open("/dev/zero").expect("open");
        assert!(matches!(read_to_limit(zero, 0, 1 << 20), Err(LimitedError::TooLarge)));
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn writes_follow_symlinks_and_keep_the_mode() {
        let d = scratch("write");
        std::fs::create_dir_all(d.join("real")).expect("mkdir");
        let target = d.join("real/a.fev");
        std::fs::write(&target, "old\n").expect("write");
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        std::os::unix::fs::symlink("real/a.fev", d.join("link1")).expect("symlink");
        std::os::unix::fs::symlink("link1", d.join("link2")).expect("symlink");
        write_atomic(&d.join("link2"), b"new\n").expect("write");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "new\n");
        assert!(std::fs::symlink_metadata(d.join("link2")).expect("stat").file_type().is_symlink());
        assert!(std::fs::symlink_metadata(d.join("link1")).expect("stat").file_type().is_symlink());
        assert_eq!(std::fs::metadata(&target).expect("stat").mode() & 0o7777, 0o640);
        // A dangling link: the file is created where it points.
        std::os::unix::fs::symlink("real/new.lock", d.join("dangling")).expect("symlink");
        write_atomic(&d.join("dangling"), b"x").expect("write");
        assert_eq!(std::fs::read(d.join("real/new.lock")).expect("read"), b"x");
        // A loop is an error, and nothing is written.
        std::os::unix::fs::symlink("loop2", d.join("loop1")).expect("symlink");
        std::os::unix::fs::symlink("loop1", d.join("loop2")).expect("symlink");
        assert!(write_atomic(&d.join("loop1"), b"x").is_err());
        // A device is not replaced.
        let e = write_atomic(Path::new("/dev/null"), b"x").expect_err("device");
        assert!(e.to_string().contains("character device"), "{e}");
        let names: Vec<String> = std::fs::read_dir(d.join("real"))
            .expect("ls")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.contains("fevlint-")), "{names:?}");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed() {
        let d = scratch("stale");
        // A pid above the kernel's maximum (4194304) is never alive.
        let stale = d.join(".a.fev.fevlint-99999999-0.tmp");
        std::fs::write(&stale, "half").expect("write");
        write_atomic(&d.join("a.fev"), b"new").expect("write");
        assert!(!stale.exists());
        std::fs::remove_dir_all(&d).ok();
    }
}
