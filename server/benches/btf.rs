//! BTF reader benchmark: open the 6.12 BTF from memory, look up `struct file`, print its
//! layout. `--once FILE STRUCT` does it once from a raw BTF file and prints the layout,
//! for whole-process timing against `pahole -F btf -C STRUCT FILE` with hyperfine.

use std::time::{Duration, Instant};

use fevlint_btf::Btf;
use fevlint_types::layout::print_struct;
use fevlint_types::model::{TypeNamespace, TypeSource};

fn once(path: &str, name: &str) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(path)?;
    let btf = Btf::parse(path, bytes)?;
    let ty = *btf.find_type(TypeNamespace::Struct, name)?.first().ok_or("no such struct")?;
    print!("{}", print_struct(&btf, ty)?);
    Ok(())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--once") {
        let (Some(path), Some(name)) = (args.get(i + 1), args.get(i + 2)) else {
            return Err("usage: btf --once FILE STRUCT".into());
        };
        return once(path, name);
    }
    let zst = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/kernels/6.12.117+deb12-amd64/vmlinux.btf.zst");
    let raw = zstd::decode_all(std::fs::File::open(zst)?)?;
    let raw: std::sync::Arc<[u8]> = raw.into();
    println!("6.12.117 BTF: {} bytes (decompressed beforehand, not timed)", raw.len());

    let runs = 30;
    let (mut open, mut lookup, mut print, mut total) = (vec![], vec![], vec![], vec![]);
    let mut text = String::new();
    for _ in 0..runs {
        let t0 = Instant::now();
        let btf = Btf::parse("6.12", raw.clone())?;
        let t1 = Instant::now();
        let ty = btf.find_type(TypeNamespace::Struct, "file")?[0];
        let t2 = Instant::now();
        text = print_struct(&btf, ty)?;
        let t3 = Instant::now();
        open.push(t1 - t0);
        lookup.push(t2 - t1);
        print.push(t3 - t2);
        total.push(t3 - t0);
        std::hint::black_box(&btf.own_type_count());
    }
    println!("median of {runs} runs:");
    println!(
        "  open (header + offsets of {} types): {:?}",
        Btf::parse("6.12", raw.clone())?.own_type_count(),
        median(open)
    );
    println!("  first find_type(struct file) (builds the struct index): {:?}", median(lookup));
    println!("  print_struct(file) ({} lines): {:?}", text.lines().count(), median(print));
    println!("  total: {:?}", median(total));

    // Warm lookups on one opened source.
    let btf = Btf::parse("6.12", raw.clone())?;
    btf.find_type(TypeNamespace::Struct, "file")?;
    btf.functions("vfs_read")?;
    let t = Instant::now();
    let n = 10_000;
    for _ in 0..n {
        std::hint::black_box(btf.find_type(TypeNamespace::Struct, "file")?);
        std::hint::black_box(btf.functions("vfs_read")?);
    }
    println!("  warm find_type(file) + functions(vfs_read): {:?} per pair", t.elapsed() / n);
    let t = Instant::now();
    let names = btf.function_names()?;
    println!("  function_names() ({} names, builds the FUNC index): {:?}", names.len(), t.elapsed());
    Ok(())
}
