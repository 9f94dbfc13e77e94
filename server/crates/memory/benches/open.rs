//! Opening dumps and evaluating a field chain, against drgn in the same run.
//!
//! `cargo bench -p fevlint-memory --bench open` after `cargo test -p fevlint-memory --test
//! kernel_dumps` (which boots the 6.12 kernel under QEMU and writes the dumps into
//! target/tmp/kernel_dumps). drgn is measured when `FEVLINT_DRGN_PYTHON` (or `python3`)
//! imports it (`pip install drgn`). Also times the open of 4 GiB sparse dumps (ELF and
//! compressed kdump) written here.
//!
//! The chain is `prb->desc_ring.descs->state_var` (the printk ring buffer), with the symbol
//! and offsets from the dump's own VMCOREINFO: three dependent 8-byte loads through the
//! page tables, as the executor does for `prb->desc_ring.descs->state_var`.

use fevlint_memory::{Dump, Memory, VirtAddr};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Chain {
    prb: VirtAddr,
    descs: u64,
    state: u64,
}

fn chain_of(d: &Dump) -> Chain {
    let Dump::Kernel(k) = d else { panic!("not a kernel dump") };
    let info = k.vmcoreinfo().expect("VMCOREINFO");
    let off = |k: &str| info.get(&format!("OFFSET({k})")).and_then(|v| v.parse::<u64>().ok()).expect(k);
    Chain {
        prb: info.symbol("prb").expect("SYMBOL(prb)"),
        descs: off("printk_ringbuffer.desc_ring") + off("prb_desc_ring.descs"),
        state: off("prb_desc.state_var"),
    }
}

fn eval(d: &Dump, c: &Chain) -> u64 {
    let p = d.read_u64(c.prb).unwrap_or(0);
    let descs = d.read_u64(VirtAddr(p + c.descs)).unwrap_or(0);
    d.read_u64(VirtAddr(descs + c.state)).unwrap_or(0)
}

fn bench_file(path: &Path) -> (Duration, f64, u64) {
    let mut opens = Vec::new();
    for _ in 0..21 {
        let t = Instant::now();
        let d = Dump::open(path).expect("open");
        opens.push(t.elapsed());
        drop(d);
    }
    let d = Dump::open(path).expect("open");
    let c = chain_of(&d);
    let value = eval(&d, &c);
    let mut n = 0u64;
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(500) {
        for _ in 0..1000 {
            assert_eq!(std::hint::black_box(eval(&d, &c)), value);
        }
        n += 1000;
    }
    (median(opens), n as f64 / t.elapsed().as_secs_f64(), value)
}

const DRGN: &str = r#"
import drgn, sys, time
prb, descs, state = (int(x) for x in sys.argv[1:4])
for path in sys.argv[4:]:
    try:
        drgn.Program().set_core_dump(path)
    except Exception as e:
        print("%s\terror: %s" % (path, e)); continue
    opens = []
    for _ in range(21):
        t = time.perf_counter(); p = drgn.Program(); p.set_core_dump(path); opens.append(time.perf_counter() - t)
    opens.sort()
    p = drgn.Program(); p.set_core_dump(path)
    def ev():
        q = p.read_u64(prb); d = p.read_u64(q + descs); return p.read_u64(d + state)
    v = ev(); n = 0; t = time.perf_counter()
    while time.perf_counter() - t < 0.5:
        for _ in range(1000): ev()
        n += 1000
    print("%s\t%.3f\t%.0f\t%d" % (path, opens[10] * 1000, n / (time.perf_counter() - t), v))
"#;

fn sparse_dumps(dir: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).expect("mkdir");
    const GIB4: u64 = 4 << 30;
    // ELF: one 4 GiB physical PT_LOAD, data never written (a hole), VMCOREINFO note.
    let vmci = "OSRELEASE=6.12.117+deb12-amd64\nPAGESIZE=4096\nSYMBOL(init_top_pgt)=ffffffff80001000\nNUMBER(phys_base)=0\nKERNELOFFSET=0\n";
    let mut note = Vec::new();
    note.extend_from_slice(&11u32.to_le_bytes());
    note.extend_from_slice(&(vmci.len() as u32).to_le_bytes());
    note.extend_from_slice(&0u32.to_le_bytes());
    note.extend_from_slice(b"VMCOREINFO\0\0");
    note.extend_from_slice(vmci.as_bytes());
    note.resize(note.len().next_multiple_of(4), 0);
    let mut h = vec![0u8; 64 + 2 * 56];
    h[..7].copy_from_slice(b"\x7fELF\x02\x01\x01");
    h[16] = 4;
    h[18] = 62;
    h[32] = 64;
    h[52] = 64;
    h[54] = 56;
    h[56] = 2;
    let ph = |h: &mut Vec<u8>, i: usize, ty: u32, off: u64, size: u64| {
        let p = 64 + 56 * i;
        h[p..p + 4].copy_from_slice(&ty.to_le_bytes());
        h[p + 8..p + 16].copy_from_slice(&off.to_le_bytes());
        h[p + 32..p + 40].copy_from_slice(&size.to_le_bytes());
        h[p + 40..p + 48].copy_from_slice(&size.to_le_bytes());
    };
    let data = 4096u64;
    let note_off = h.len() as u64;
    ph(&mut h, 0, 4, note_off, note.len() as u64);
    ph(&mut h, 1, 1, data, GIB4);
    h.extend_from_slice(&note);
    let elf = dir.join("sparse-4g.elf");
    let f = std::fs::File::create(&elf).expect("create");
    use std::io::Write;
    (&f).write_all(&h).expect("write");
    f.set_len(data + GIB4).expect("set_len");
    // kdump: 4 GiB of RAM (max_mapnr 1 Mi), 1024 pages dumped; descriptors after bitmaps.
    let bs = 4096usize;
    let max_mapnr = GIB4 / 4096;
    let half = (max_mapnr / 8) as usize;
    let mut k = vec![0u8; bs * 2 + 2 * half];
    k[..8].copy_from_slice(b"KDUMP   ");
    k[8..12].copy_from_slice(&6i32.to_le_bytes());
    k[12 + 4 * 65..12 + 4 * 65 + 6].copy_from_slice(b"x86_64");
    k[428..432].copy_from_slice(&(bs as u32).to_le_bytes());
    k[432..436].copy_from_slice(&1u32.to_le_bytes());
    k[436..440].copy_from_slice(&((2 * half / bs) as u32).to_le_bytes());
    let sub = bs;
    let vo = (sub + 112) as u64;
    k[sub + 112..sub + 112 + vmci.len()].copy_from_slice(vmci.as_bytes());
    k[sub + 32..sub + 40].copy_from_slice(&vo.to_le_bytes());
    k[sub + 40..sub + 48].copy_from_slice(&(vmci.len() as u64).to_le_bytes());
    k[sub + 96..sub + 104].copy_from_slice(&max_mapnr.to_le_bytes());
    let bm = 2 * bs;
    k[bm..bm + half].fill(0xff);
    k[bm + half..bm + half + 128].fill(0xff);
    let desc = k.len();
    k.resize(desc + 1024 * 24, 0);
    let zero = k.len() as u64;
    k.resize(k.len() + bs, 0);
    for i in 0..1024 {
        let d = desc + 24 * i;
        k[d..d + 8].copy_from_slice(&zero.to_le_bytes());
        k[d + 8..d + 12].copy_from_slice(&(bs as u32).to_le_bytes());
    }
    let kd = dir.join("sparse-4g.kdump");
    std::fs::write(&kd, k).expect("write");
    vec![elf, kd]
}

fn main() {
    let dumps = Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernel_dumps/nokaslr");
    let files: Vec<PathBuf> = ["elf.core", "md-e.elf", "md-c.kdump", "md-l.kdump", "md-f.flat", "qemu-zlib.flat"]
        .iter()
        .map(|f| dumps.join(f))
        .collect();
    if !files.iter().all(|f| f.exists()) {
        eprintln!("no dumps in {}: run `cargo test -p fevlint-memory --test kernel_dumps` first", dumps.display());
        std::process::exit(1);
    }
    println!("{:<16} {:>12} {:>14} {:>12}", "dump", "open (med)", "chains/s", "bytes");
    let mut values = Vec::new();
    let chain = chain_of(&Dump::open(&files[0]).expect("open"));
    for f in &files {
        let (open, rate, v) = bench_file(f);
        let size = std::fs::metadata(f).map(|m| m.len()).unwrap_or(0);
        println!(
            "{:<16} {:>9.3} ms {:>14.0} {:>12}",
            f.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
            open.as_secs_f64() * 1e3,
            rate,
            size
        );
        values.push(v);
    }
    assert!(values.windows(2).all(|w| w[0] == w[1]), "every format evaluates the chain alike: {values:x?}");
    let python = std::env::var("FEVLINT_DRGN_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut drgn = std::process::Command::new(&python);
    drgn.arg("-c").arg(DRGN).args([chain.prb.0, chain.descs, chain.state].map(|v| v.to_string()));
    match drgn.args(&files).output() {
        Ok(o) if o.status.success() => {
            for line in String::from_utf8_lossy(&o.stdout).lines() {
                let c: Vec<&str> = line.split('\t').collect();
                let name = Path::new(c[0]).file_name().and_then(|n| n.to_str()).unwrap_or("?");
                if c.len() < 4 {
                    println!("drgn {name:<11} {}", c.get(1).unwrap_or(&""));
                    continue;
                }
                println!("drgn {:<11} {:>9} ms {:>14} {:>12}", name, c[1], c[2], "");
                assert_eq!(c[3].parse::<u64>().ok(), Some(values[0]), "drgn reads the same value");
            }
        }
        Ok(o) => println!(
            "drgn not measured ({python}): {}",
            String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("")
        ),
        Err(e) => println!("drgn not measured ({python}): {e}"),
    }
    let sparse = sparse_dumps(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("sparse"));
    for f in &sparse {
        let mut opens = Vec::new();
        for _ in 0..21 {
            let t = Instant::now();
            let d = Dump::open(f).expect("open sparse dump");
            opens.push(t.elapsed());
            drop(d);
        }
        println!(
            "{:<16} {:>9.3} ms  (4 GiB of RAM described, file {} bytes)",
            f.file_name().and_then(|n| n.to_str()).unwrap_or("?"),
            median(opens).as_secs_f64() * 1e3,
            std::fs::metadata(f).map(|m| m.len()).unwrap_or(0)
        );
    }
}
