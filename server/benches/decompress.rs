//! Decompression and symbol-parsing speed against the reference tools (`zstd -d`,
//! `xz -d`) in the same run. `cargo bench -p fevlint --bench decompress`; results and
//! commands are recorded in benches/README-decompress.md.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fevlint::kernel::load::bzimage::extract_vmlinux;
use fevlint::kernel::load::decompress::decompress;
use fevlint::kernel::load::{Codec, Limits, Origin};
use fevlint::kernel::symbols::{FilterFunctions, SymbolTable};

const RUNS: usize = 5;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::with_capacity(RUNS);
    let mut last = None;
    for _ in 0..RUNS {
        let t = Instant::now();
        let r = f();
        times.push(t.elapsed());
        last = Some(r);
    }
    match last {
        Some(r) => (median(times), r),
        None => unreachable!("RUNS > 0"),
    }
}

fn tool(args: &[&str], input: &Path) -> Option<Duration> {
    let ok = Command::new(args[0]).arg("--version").stdout(Stdio::null()).status().ok()?;
    if !ok.success() {
        return None;
    }
    let (d, ok) = time(|| {
        Command::new(args[0]).args(&args[1..]).arg(input).stdout(Stdio::null()).status().is_ok_and(|s| s.success())
    });
    ok.then_some(d)
}

fn mbps(bytes: usize, d: Duration) -> f64 {
    bytes as f64 / d.as_secs_f64() / 1e6
}

fn row(what: &str, out_bytes: usize, ours: Duration, reference: Option<(&str, Duration)>) {
    let r = match reference {
        Some((cmd, d)) => format!(
            "{:>8.1} ms {:>7.0} MB/s  ({cmd}; ours/ref {:.2}x)",
            d.as_secs_f64() * 1e3,
            mbps(out_bytes, d),
            ours.as_secs_f64() / d.as_secs_f64()
        ),
        None => "reference tool not found".into(),
    };
    println!(
        "{what:<44} {:>6.1} MB out  ours {:>8.1} ms {:>7.0} MB/s | ref {r}",
        out_bytes as f64 / 1e6,
        ours.as_secs_f64() * 1e3,
        mbps(out_bytes, ours)
    );
}

fn main() {
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-decompress");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let limits = Limits::default();

    // 1. The vmlinuz zstd payload (what open() does for a bzImage).
    let vmlinuz = fixtures().join("6.12.117+deb12-amd64/vmlinuz");
    let data = std::fs::read(&vmlinuz).expect("vmlinuz");
    let (ours, (_, elf)) = time(|| extract_vmlinux(&data, &vmlinuz, &limits).expect("extract"));
    let payload = scratch.join("payload.zst");
    // The payload without the kernel's 4-byte size trailer, for `zstd -d`.
    std::fs::write(&payload, &data[21_196..21_196 + 11_838_000 - 4]).expect("write");
    let r = tool(&["zstd", "-d", "-q", "-c"], &payload);
    row("vmlinuz payload (zstd -22, 11.8 MB)", elf.len(), ours, r.map(|d| ("zstd -d", d)));

    // 2. The BTF fixtures (zstd -19).
    for k in ["6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"] {
        let p = fixtures().join(k).join("vmlinux.btf.zst");
        let z = std::fs::read(&p).expect("btf");
        let (ours, out) = time(|| decompress(&z, Codec::Zstd, &limits, Origin::file(&p)).expect("btf"));
        let r = tool(&["zstd", "-d", "-q", "-c"], &p);
        row(&format!("{k}/vmlinux.btf.zst"), out.len(), ours, r.map(|d| ("zstd -d", d)));
    }

    // 3. xz with the x86 BCJ filter, made from the vmlinux with the kernel's own options
    //    (scripts/xz_wrap.sh), cached between runs.
    let xz_path = scratch.join("vmlinux.x86.xz");
    if !xz_path.exists() {
        let raw = scratch.join("vmlinux");
        std::fs::write(&raw, &elf).expect("write");
        let ok = Command::new("xz")
            .args(["-T1", "-k", "-f", "--format=xz", "--check=crc32", "--x86"])
            .args(["--lzma2=preset=6,dict=32MiB"])
            .arg(&raw)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            std::fs::rename(scratch.join("vmlinux.xz"), &xz_path).expect("rename");
        }
    }
    if let Ok(x) = std::fs::read(&xz_path) {
        let (ours, out) = time(|| decompress(&x, Codec::Xz, &limits, Origin::file(&xz_path)).expect("xz"));
        assert_eq!(out, elf);
        let r = tool(&["xz", "-d", "-q", "-c", "-T1"], &xz_path);
        let label = format!("vmlinux xz --x86 ({:.1} MB)", x.len() as f64 / 1e6);
        row(&label, out.len(), ours, r.map(|d| ("xz -d", d)));
    } else {
        println!("xz not available: xz+BCJ row skipped");
    }

    // 4. Text parsing.
    let p = fixtures().join("6.12.117+deb12-amd64/System.map.zst");
    let z = std::fs::read(&p).expect("System.map");
    let text = decompress(&z, Codec::Zstd, &limits, Origin::file(&p)).expect("map");
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    let (d, t) = time(|| SymbolTable::parse_system_map(&text, &p).expect("parse"));
    println!(
        "parse System.map 6.12 ({lines} lines, {:.1} MB): {:.1} ms, {:.1} M lines/s, {} symbols",
        text.len() as f64 / 1e6,
        d.as_secs_f64() * 1e3,
        lines as f64 / d.as_secs_f64() / 1e6,
        t.len()
    );
    let p = fixtures().join("6.12.117+deb12-amd64/available_filter_functions.zst");
    let z = std::fs::read(&p).expect("aff");
    let text = decompress(&z, Codec::Zstd, &limits, Origin::file(&p)).expect("aff");
    let lines = text.iter().filter(|&&b| b == b'\n').count();
    let (d, _) = time(|| FilterFunctions::parse(&text, &p).expect("parse"));
    println!(
        "parse available_filter_functions 6.12 ({lines} lines): {:.1} ms, {:.1} M lines/s",
        d.as_secs_f64() * 1e3,
        lines as f64 / d.as_secs_f64() / 1e6
    );
}
