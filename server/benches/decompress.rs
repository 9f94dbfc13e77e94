//! Decompression and symbol-parsing speed against the reference tools (`zstd -d`,
//! `xz -d`, `gzip -d`, `bzip2 -d`, `lz4 -d`) in the same run.
//! `cargo bench -p fevlint --bench decompress`; results and commands are recorded in
//! benches/README-decompress.md.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fevlint_load::bzimage::extract_vmlinux;
use fevlint_load::decompress::is_bzimage;
use fevlint_load::decompress::{decompress, decompress_auto};
use fevlint_load::symbols::{FilterFunctions, SymbolTable};
use fevlint_load::{Codec, Limits, Origin};

const RUNS: usize = 7;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/kernels")
}

/// The best of `RUNS`: on a shared machine, other work only ever adds time.
fn time<T>(mut f: impl FnMut() -> T) -> (Duration, T) {
    let t = Instant::now();
    let mut last = f();
    let mut best = t.elapsed();
    for _ in 1..RUNS {
        let t = Instant::now();
        last = f();
        best = best.min(t.elapsed());
    }
    (best, last)
}

fn tool(args: &[&str], input: &Path) -> Option<Duration> {
    let ok = Command::new(args[0]).arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().ok()?;
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

/// `--once FILE`: decompresses one file (a bzImage's payload, or a stream known by its
/// magic) to stdout, as `zstd -d -c` does, for whole-process timing with hyperfine.
fn once(path: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let data = std::fs::read(path)?;
    let limits = Limits::default();
    let out = if is_bzimage(&data) {
        extract_vmlinux(&data, path, &limits)?.1
    } else {
        decompress_auto(&data, &limits, Origin::file(path))?.ok_or("no known compression")?.1
    };
    std::io::stdout().lock().write_all(&out)?;
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(file) = args.iter().position(|a| a == "--once").and_then(|i| args.get(i + 1)) {
        if let Err(e) = once(Path::new(file)) {
            eprintln!("{e}");
            std::process::exit(1);
        }
        return;
    }
    let scratch = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-decompress");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let limits = Limits::default();

    // 1. The vmlinuz zstd payload (what open() does for a bzImage: the trailer gives the
    //    size), and the same payload alone (no size known: streamed).
    let vmlinuz = fixtures().join("6.12.117+deb12-amd64/vmlinuz");
    let data = std::fs::read(&vmlinuz).expect("vmlinuz");
    let (ours, (_, elf)) = time(|| extract_vmlinux(&data, &vmlinuz, &limits).expect("extract"));
    let payload = scratch.join("payload.zst");
    // The payload without the kernel's 4-byte size trailer, for `zstd -d`.
    let zst = &data[21_196..21_196 + 11_838_000 - 4];
    std::fs::write(&payload, zst).expect("write");
    let r = tool(&["zstd", "-d", "-q", "-c"], &payload).map(|d| ("zstd -d", d));
    row("vmlinuz payload (zstd -22, 11.8 MB)", elf.len(), ours, r);
    let (ours, out) = time(|| decompress(zst, Codec::Zstd, &limits, Origin::file(&payload)).expect("payload"));
    assert!(out == elf);
    row("same payload, size not given (streamed)", out.len(), ours, r);

    // 2. The BTF fixtures (zstd -19).
    for k in ["6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"] {
        let p = fixtures().join(k).join("vmlinux.btf.zst");
        let z = std::fs::read(&p).expect("btf");
        let (ours, out) = time(|| decompress(&z, Codec::Zstd, &limits, Origin::file(&p)).expect("btf"));
        let r = tool(&["zstd", "-d", "-q", "-c"], &p);
        row(&format!("{k}/vmlinux.btf.zst"), out.len(), ours, r.map(|d| ("zstd -d", d)));
    }

    // 3. The vmlinux compressed as the kernel's Makefile.lib and scripts/xz_wrap.sh do
    //    (made once, cached between runs), each decoded by fevlint and the tool.
    let raw = scratch.join("vmlinux");
    std::fs::write(&raw, &elf).expect("write");
    let kernel_made: [(Codec, &str, &[&str], &[&str]); 4] = [
        (
            Codec::Xz,
            "vmlinux.x86.xz",
            &["xz", "-T1", "-c", "--format=xz", "--check=crc32", "--x86", "--lzma2=preset=6,dict=32MiB"],
            &["xz", "-d", "-q", "-c", "-T1"],
        ),
        (Codec::Gzip, "vmlinux.gz", &["gzip", "-n", "-9", "-c"], &["gzip", "-d", "-c"]),
        (Codec::Bzip2, "vmlinux.bz2", &["bzip2", "-9", "-c"], &["bzip2", "-d", "-c"]),
        (Codec::Lz4Legacy, "vmlinux.lz4", &["lz4", "-l", "-9", "-c"], &["lz4", "-d", "-c"]),
    ];
    for (codec, name, make, undo) in kernel_made {
        let path = scratch.join(name);
        if !path.exists() {
            let part = scratch.join(format!("{name}.part"));
            let made = Command::new(make[0])
                .args(&make[1..])
                .arg(&raw)
                .stdout(File::create(&part).expect("create"))
                .status()
                .is_ok_and(|s| s.success());
            if made {
                std::fs::rename(&part, &path).expect("rename");
            }
        }
        let Ok(z) = std::fs::read(&path) else {
            println!("{}: not available, {codec} row skipped", make[0]);
            continue;
        };
        let (ours, out) = time(|| decompress(&z, codec, &limits, Origin::file(&path)).expect("decode"));
        assert!(out == elf, "{codec}");
        let r = tool(undo, &path).map(|d| (format!("{} -d", undo[0]), d));
        let label = format!("{name} ({:.1} MB)", z.len() as f64 / 1e6);
        row(&label, out.len(), ours, r.as_ref().map(|(c, d)| (c.as_str(), *d)));
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
