//! Check benchmark: 1,000 definitions against the 6.12.117 kernel fixture, kernel load
//! included, with a cold and a warm decompression cache; then 1,000 definitions against
//! four kernels (6.1.0-47 as the drift baseline, 6.1.0-56, 6.12.117, 6.18.44), loads
//! included. The script is the clean control script (fixtures/scripts/clean-6.12.fev)
//! plus one-field definitions of other traceable functions of 6.12, each name used once;
//! the four-kernel part also runs the clean script's 143 field-heavy definitions repeated
//! to 1,000 lines. `--write FILE` and `--write-repeated FILE` only write the scripts, for
//! whole-process timing of the release binary with hyperfine (README-check.md).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fevlint_check::analysis::{check, count_definitions, Options};
use fevlint_kernel::Kernel;
use fevlint_load::cache::Cache;
use fevlint_syntax::{Parser, Target};

const DEFINITIONS: usize = 1000;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
}

/// The clean script, then `name(x64 a0)` for further traceable names (in list order,
/// skipping clones, repeated names and names the clean script uses) up to 1,000.
fn script() -> Result<String, Box<dyn std::error::Error>> {
    let clean = std::fs::read_to_string(fixtures().join("scripts/clean-6.12.fev"))?;
    let mut text = clean.clone();
    let used: std::collections::HashSet<&str> =
        clean.lines().filter(|l| !l.starts_with('#')).filter_map(|l| l.split('(').next()).collect();
    let aff = fixtures().join("kernels/6.12.117+deb12-amd64/available_filter_functions.zst");
    let list = String::from_utf8(zstd::decode_all(std::fs::File::open(aff)?)?)?;
    let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for name in list.lines() {
        *count.entry(name).or_default() += 1;
    }
    let mut n = count_definitions(&text);
    for name in list.lines() {
        if n >= DEFINITIONS {
            break;
        }
        if name.contains('.') || count[name] != 1 || used.contains(name) {
            continue;
        }
        text.push_str(&format!("{name}(x64 a0)\n"));
        n += 1;
    }
    Ok(text)
}

/// The clean script's definitions repeated up to 1,000 lines: every line reads members.
fn repeated() -> Result<String, Box<dyn std::error::Error>> {
    let clean = std::fs::read_to_string(fixtures().join("scripts/clean-6.12.fev"))?;
    let lines: Vec<&str> = clean.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()).collect();
    Ok(lines.iter().cycle().take(DEFINITIONS).map(|l| format!("{l}\n")).collect())
}

/// Opens the four kernels side by side and checks `text` against them; returns (open,
/// check) times and the count of diagnostics.
fn run_four(text: &str, cache: &Cache) -> Run {
    let paths: Vec<PathBuf> = FOUR.iter().map(|k| fixtures().join("kernels").join(k)).collect();
    let t0 = Instant::now();
    let kernels = Kernel::open_all(&paths, cache).into_iter().collect::<Result<Vec<_>, _>>()?;
    let t1 = Instant::now();
    let refs: Vec<&Kernel> = kernels.iter().collect();
    let diags = check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&refs)).1;
    let t2 = Instant::now();
    Ok((t1 - t0, t2 - t1, diags.len()))
}

const FOUR: [&str; 4] = ["6.1.0-47-amd64", "6.1.0-56-amd64", "6.12.117+deb12-amd64", "6.18.44-fc-v769"];

type Run = Result<(Duration, Duration, usize), Box<dyn std::error::Error>>;

/// Runs `f` `RUNS` times and prints the medians of its (open, check) times and total.
fn report(what: &str, mut f: impl FnMut() -> Run) -> Result<(), Box<dyn std::error::Error>> {
    const RUNS: usize = 15;
    let (mut open, mut check, mut total, mut diags) = (vec![], vec![], vec![], 0);
    for _ in 0..RUNS {
        let (o, c, d) = f()?;
        open.push(o);
        check.push(c);
        total.push(o + c);
        diags = d;
    }
    println!(
        "{what} (median of {RUNS}): open {:?}, check {:?}, total {:?}; {diags} diagnostics",
        median(open),
        median(check),
        median(total)
    );
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Opens the kernel and checks the script; returns (open, check) times and the count of
/// diagnostics.
fn run(text: &str, cache: &Cache) -> Run {
    let t0 = Instant::now();
    let kernel = Kernel::open_cached(&fixtures().join("kernels/6.12.117+deb12-amd64"), cache)?;
    let t1 = Instant::now();
    let diags =
        check(&mut Parser::new(), text.as_bytes().to_vec(), &Options::new(Target::X86_64).kernels(&[&kernel])).1;
    let t2 = Instant::now();
    Ok((t1 - t0, t2 - t1, diags.len()))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let text = script()?;
    // Write every script asked for, then stop (scripts/bench.sh passes both flags at once;
    // returning after the first left `repeated-1000.fev` unwritten on a clean checkout).
    let mut wrote = false;
    for (flag, text) in [("--write", &text), ("--write-repeated", &repeated()?)] {
        if let Some(i) = args.iter().position(|a| a == flag) {
            let path = args.get(i + 1).ok_or("usage: check --write FILE | --write-repeated FILE")?;
            std::fs::write(path, text)?;
            println!("wrote {path}: {} definitions", count_definitions(text));
            wrote = true;
        }
    }
    if wrote {
        return Ok(());
    }
    println!("script: {} definitions, {} bytes", count_definitions(&text), text.len());

    let base = std::env::temp_dir().join(format!("fevlint-bench-check-{}", std::process::id()));
    // Cold: a fresh, empty decompression cache for every run.
    let mut i = 0;
    report("cold cache", || {
        i += 1;
        let dir = base.join(format!("cold-{i}"));
        std::fs::create_dir_all(&dir)?;
        run(&text, &Cache::new(Some(dir)))
    })?;
    // Warm: one cache directory, filled by a first run that is not counted.
    let dir = base.join("warm");
    std::fs::create_dir_all(&dir)?;
    let warm = Cache::new(Some(dir));
    run(&text, &warm)?;
    report("warm cache", || run(&text, &warm))?;
    // Four kernels, warm cache (the directory above), both scripts.
    report("four kernels, one-field + clean, warm cache", || run_four(&text, &warm))?;
    let repeated = repeated()?;
    report("four kernels, clean repeated, warm cache", || run_four(&repeated, &warm))?;
    std::fs::remove_dir_all(&base)?;
    Ok(())
}
