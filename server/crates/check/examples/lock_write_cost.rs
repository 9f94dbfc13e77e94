//! What writing a lock costs against the size of the file written: reads a lock (as
//! `fevlint lock` wrote it), then writes it again 5 times, printing the median time,
//! the MB/s and the peak RSS (VmHWM) before and after the writes. `cargo run --release
//! -p fevlint-check --example lock_write_cost -- fevlint.lock`.

fn hwm_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).expect("a lock file"));
    let lock = fevlint_check::lock::Lock::read(&path).expect("read the lock");
    let before = hwm_kb();
    let out = std::env::temp_dir().join(format!("lock-write-cost-{}.lock", std::process::id()));
    let mut times = Vec::new();
    for _ in 0..5 {
        let t = std::time::Instant::now();
        lock.write(&out).expect("write");
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let size = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_file(&out);
    println!(
        "{} definitions, {:.1} MB written: median {:.0} ms ({:.0} MB/s); peak RSS {:.0} MB after reading, {:.0} MB after writing (+{:.1}x the file)",
        lock.definitions.len(),
        size as f64 / 1e6,
        times[2] * 1e3,
        size as f64 / 1e6 / times[2],
        before as f64 / 1024.0,
        hwm_kb() as f64 / 1024.0,
        (hwm_kb() - before) as f64 * 1024.0 / size as f64
    );
}
