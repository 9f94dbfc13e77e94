//! What reading a cache entry privately costs against mapping it shared: each way, the
//! entry is opened and its CRC-32 computed over every byte (as `cache::get` does), 200
//! times; prints the median per read. `cargo run --release -p fevlint-load --example
//! cache_read_cost -- FILE`.

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[allow(unsafe_code)]
fn main() {
    let path = std::path::PathBuf::from(std::env::args().nth(1).expect("a cache file"));
    let (mut mapped, mut private) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        let t = std::time::Instant::now();
        let file = std::fs::File::open(&path).expect("open");
        // SAFETY: measurement only; nothing truncates the file meanwhile.
        let map = unsafe { memmap2::Mmap::map(&file) }.expect("map");
        std::hint::black_box(crc32fast::hash(&map));
        mapped.push(t.elapsed().as_secs_f64() * 1e3);
        let t = std::time::Instant::now();
        let blob = fevlint_load::Blob::read_private(&path).expect("read");
        std::hint::black_box(crc32fast::hash(&blob));
        private.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    println!(
        "{} ({len} bytes): shared map {:.3} ms, private read {:.3} ms (median of 200)",
        path.display(),
        median(mapped),
        median(private)
    );
}
