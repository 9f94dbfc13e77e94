//! A real user core: `tests/data/fileops.c` compiled with gcc, stopped by gdb at the first
//! instruction of `target_read(file, buf, count, pos)` and dumped with `gcore`. The reader
//! must give back the registers at the stop and the values the program printed, through
//! pointer chains (`file->f_op->read`, `file->f_inode->i_ino`), a name array and flags.

use fevlint_memory::{Dump, FaultKind, Memory, Regs, VirtAddr};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Gcore {
    core: PathBuf,
    printed: HashMap<String, String>,
    gdb_regs: HashMap<String, u64>,
    prog: PathBuf,
}

fn tool(name: &str) {
    let ok = Command::new(name).arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(ok, "`{name}` is needed by this test: run scripts/install-test-deps.sh (apt-get install {name})");
}

fn make_core(dir: &Path) -> Gcore {
    tool("gcc");
    tool("gdb");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fileops.c");
    let prog = dir.join("fileops");
    let st = Command::new("gcc").args(["-g", "-O0", "-o"]).arg(&prog).arg(&src).status().expect("run gcc");
    assert!(st.success(), "gcc failed on {}", src.display());
    let out = dir.join("fileops.out");
    let core = dir.join("fileops.core");
    let _ = std::fs::remove_file(&core);
    let gdb = Command::new("gdb")
        .args(["-batch", "-nx", "-ex", "set confirm off", "-ex", "set pagination off"])
        .args(["-ex", "break *target_read"])
        .args(["-ex", &format!("run > {}", out.display())])
        .args(["-ex", &format!("gcore {}", core.display())])
        .args(["-ex", "info registers rdi rsi rdx rcx rip rsp"])
        .args(["-ex", "kill"])
        .arg(&prog)
        .output()
        .expect("run gdb");
    let stdout = String::from_utf8_lossy(&gdb.stdout).into_owned();
    assert!(core.exists(), "gdb wrote no core:\n{stdout}\n{}", String::from_utf8_lossy(&gdb.stderr));
    let mut gdb_regs = HashMap::new();
    for line in stdout.lines() {
        let mut w = line.split_whitespace();
        if let (Some(name), Some(hex)) = (w.next(), w.next()) {
            if let Some(h) = hex.strip_prefix("0x") {
                if let Ok(v) = u64::from_str_radix(h, 16) {
                    gdb_regs.insert(name.to_string(), v);
                }
            }
        }
    }
    let printed = std::fs::read_to_string(&out)
        .expect("program output")
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect();
    Gcore { core, printed, gdb_regs, prog }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("not hex: {s}"))
}

#[test]
fn gcore_values_read_back() {
    if !fevlint_testkit::real_tools("gdb (gcore)") {
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("user_core");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let g = make_core(&dir);
    let p = |k: &str| g.printed.get(k).unwrap_or_else(|| panic!("program did not print {k}: {:?}", g.printed)).clone();
    let off = |k: &str| p(k).parse::<u64>().expect("offset");

    let dump = Dump::open(&g.core).expect("open gcore core");
    let Dump::User(core) = &dump else { panic!("gcore core opened as {}", dump.format()) };
    assert_eq!(dump.format(), "ELF user core");

    // Registers at the stop: the four arguments and the ip at the function's first byte.
    let threads = dump.threads();
    assert_eq!(threads.len(), 1, "one thread");
    let Regs::X86_64(r) = threads[0].regs else { panic!("not x86_64 registers") };
    let file = VirtAddr(hex(&p("file")));
    assert_eq!(r.get("di"), Some(file.0));
    assert_eq!(r.get("%rsi"), Some(hex(&p("buf"))));
    assert_eq!(r.get("rdx"), Some(p("count").parse().expect("count")));
    assert_eq!(r.get("cx"), Some(hex(&p("pos"))));
    assert_eq!(r.ip(), hex(&p("target_read")));
    assert_eq!(g.gdb_regs.len(), 6, "gdb printed rdi rsi rdx rcx rip rsp: {:?}", g.gdb_regs);
    for (name, v) in &g.gdb_regs {
        assert_eq!(r.get(name), Some(*v), "{name} as gdb printed it");
    }
    assert!(threads[0].tid > 0);

    // file->f_op->read and ->write: the functions' addresses.
    let f_op = VirtAddr(dump.read_u64(file + off("off_f_op")).expect("file->f_op"));
    assert_eq!(dump.read_u64(f_op + off("off_read")), Ok(hex(&p("my_read"))));
    assert_eq!(dump.read_u64(f_op + off("off_write")), Ok(hex(&p("my_write"))));
    // file->f_flags, file->f_pos, file->f_name, file->f_inode->{i_ino, i_size, i_mode}.
    assert_eq!(dump.read_u32(file + off("off_f_flags")), Ok(0x8002));
    assert_eq!(dump.read_u64(file + off("off_f_pos")), Ok(99));
    let mut name = [0u8; 32];
    dump.read(file + off("off_f_name"), &mut name).expect("f_name");
    assert_eq!(&name[..10], b"hello.txt\0");
    let inode = VirtAddr(dump.read_u64(file + off("off_f_inode")).expect("f_inode"));
    assert_eq!(dump.read_u64(inode + off("off_i_ino")), Ok(424242));
    assert_eq!(dump.read_u64(inode + off("off_i_size")), Ok(1234567890123));
    let mut mode = [0u8; 2];
    dump.read(inode + off("off_i_mode"), &mut mode).expect("i_mode");
    assert_eq!(u16::from_le_bytes(mode), 0o100644);
    // *pos on the stack.
    assert_eq!(dump.read_u64(VirtAddr(hex(&p("pos")))), Ok(7));

    // NULL and an address no segment covers: unmapped.
    assert_eq!(dump.read_u64(VirtAddr(0)).map_err(|f| f.kind), Err(FaultKind::Unmapped));
    assert_eq!(
        dump.read_u64(VirtAddr(0xdead_0000_0000)).map_err(|f| (f.addr, f.kind)),
        Err((VirtAddr(0xdead_0000_0000), FaultKind::Unmapped))
    );

    // NT_FILE names the program.
    let prog = std::fs::canonicalize(&g.prog).expect("canonical");
    assert!(
        core.files().iter().any(|m| Path::new(&m.path) == prog),
        "NT_FILE lacks {}: {:?}",
        prog.display(),
        core.files()
    );
}
