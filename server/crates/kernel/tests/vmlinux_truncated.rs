//! A user's vmlinux (at least `MMAP_THRESHOLD`, 16 MiB, so not read into memory)
//! truncated by another program while fevlint holds the kernel must not kill fevlint:
//! a shared map of it would fault (SIGBUS) on the next read. fevlint reads large inputs
//! through a private copy (`Blob::read`), so every byte stays readable.
//!
//! In-process, and alone in its binary: a SIGBUS would end the whole test process.

use fevlint_kernel::Kernel;
use fevlint_load::{blob::MMAP_THRESHOLD, bzimage, Limits};
use std::path::PathBuf;

#[test]
fn a_vmlinux_truncated_under_a_live_kernel_does_not_crash() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("vmlinux-truncated-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    // No cache (`Kernel::open`): the file itself is what the kernel reads (the private
    // copy goes beside it).
    let vmlinuz = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64").join("vmlinuz");
    let image = std::fs::read(&vmlinuz).expect("vmlinuz");
    let (_, elf) = bzimage::extract_vmlinux(&image, &vmlinuz, &Limits::default()).expect("the payload");
    assert!(elf.len() as u64 >= MMAP_THRESHOLD, "{} bytes: too small to be mapped", elf.len());
    let vmlinux = dir.join("vmlinux");
    std::fs::write(&vmlinux, &elf).expect("write vmlinux");
    let live = Kernel::open(&vmlinux).expect("open the vmlinux");
    assert!(live.function("vfs_read").expect("lookup").exists());
    // Another program truncates the file (a rebuild, `make clean`) while the kernel is live.
    std::fs::OpenOptions::new().write(true).open(&vmlinux).expect("open").set_len(0).expect("truncate");
    let btf = &live.inputs().btf.as_ref().expect("BTF").value;
    let sum = btf.iter().fold(0u64, |a, &b| a.wrapping_add(u64::from(b)));
    assert!(sum > 0);
    assert!(live.function("tcp_sendmsg").expect("lookup").exists());
    assert!(live.function("vfs_write").expect("lookup").exists());
    // The private copy is unnamed: nothing is left beside the file.
    let names: Vec<_> = std::fs::read_dir(&dir).expect("dir").flatten().map(|e| e.file_name()).collect();
    assert_eq!(names, vec![std::ffi::OsString::from("vmlinux")]);
    let _ = std::fs::remove_dir_all(&dir);
}
