//! `fevlint diff` benchmark: the full signature + layout diff of 6.1.0-56 against
//! 6.12.117, with the two kernel loads (fixture folders: zstd BTF, ftrace lists)
//! included and excluded. Prints medians for `README-diff.md`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use fevlint_diff::Filter;
use fevlint_kernel::Kernel;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/kernels"));
    let (old, new) = (dir.join("6.1.0-56-amd64"), dir.join("6.12.117+deb12-amd64"));
    let runs: usize = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(7);
    println!(
        "fevlint diff 6.1.0-56-amd64 6.12.117+deb12-amd64, {runs} runs, rayon threads: {}",
        rayon::current_num_threads()
    );
    let (mut load, mut cold, mut warm, mut total) = (vec![], vec![], vec![], vec![]);
    let mut summary = None;
    for _ in 0..runs {
        let t0 = Instant::now();
        let (a, b) = rayon::join(|| Kernel::open(&old), || Kernel::open(&new));
        let (a, b) = (a?, b?);
        let t1 = Instant::now();
        let d = fevlint_diff::diff(&a, &b, &Filter::default())?;
        let t2 = Instant::now();
        // Again on the same kernels: name indexes and the clone index are built.
        let d2 = fevlint_diff::diff(&a, &b, &Filter::default())?;
        let t3 = Instant::now();
        assert_eq!(d, d2);
        load.push(t1 - t0);
        cold.push(t2 - t1);
        warm.push(t3 - t2);
        total.push(t2 - t0);
        summary = Some(d.summary);
    }
    println!("{:?}", summary.ok_or("no run")?);
    let (a, b) = (Kernel::open(&old)?, Kernel::open(&new)?);
    let t0 = Instant::now();
    let f = fevlint_diff::all_functions(&a, &b)?;
    let t1 = Instant::now();
    let t = fevlint_diff::all_types(&a, &b)?;
    let t2 = Instant::now();
    println!(
        "alone, cold: functions {} ({} changed), types {} ({} changed)",
        ms(t1 - t0),
        f.0.len(),
        ms(t2 - t1),
        t.0.len()
    );
    println!("load both kernels (in parallel)     {}", ms(median(load)));
    println!("diff, first on freshly loaded kernels {}", ms(median(cold)));
    println!("diff, again on the same kernels     {}", ms(median(warm)));
    println!("total, loads included               {}", ms(median(total)));
    Ok(())
}
