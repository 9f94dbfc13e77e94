//! One DWARF question per process, for timing cold lookups from the shell:
//! `dwarf_lookup FILE (struct NAME | func NAME | index | cached-index | check-files) [--print] [--no-cache]`.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context};
use fevlint_dwarf::Dwarf;
use fevlint_types::layout;
use fevlint_types::model::{TypeNamespace, TypeSource};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let print = args.iter().any(|a| a == "--print");
    let no_cache = args.iter().any(|a| a == "--no-cache");
    let args: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let [file, what, rest @ ..] = args.as_slice() else {
        bail!("usage: dwarf_lookup FILE (struct NAME | func NAME | index) [--print] [--no-cache]")
    };
    let t = Instant::now();
    let mut dw = Dwarf::open(&PathBuf::from(file)).with_context(|| format!("opening {file}"))?;
    if no_cache {
        dw = dw.with_cache_dir(None);
    }
    let opened = t.elapsed();
    match (what.as_str(), rest) {
        ("struct", [name]) => {
            let hits = dw.find_type(TypeNamespace::Struct, name)?;
            let Some(first) = hits.first() else { bail!("no struct {name}") };
            let size = dw.size_of(*first)?;
            eprintln!("struct {name}: {} hit(s), size {size:?}", hits.len());
            if print {
                print!("{}", layout::print_struct(&dw, *first)?);
            }
        }
        ("func", [name]) => {
            let fns = dw.functions(name)?;
            eprintln!("{} definition(s) of {name}", fns.len());
            for f in &fns {
                let decl = f.decl.as_ref().map(|(f, l)| format!("{f}:{l}")).unwrap_or_default();
                eprintln!(
                    "  {}  // {decl}{}",
                    layout::pahole_prototype(&dw, f)?,
                    if f.is_static { " static" } else { "" }
                );
            }
        }
        ("check-files", []) => {
            let n = fevlint_dwarf::index::check_file_tables(&dw).map_err(anyhow::Error::msg)?;
            eprintln!("{n} files: the direct line-table reader agrees with gimli");
        }
        ("index", []) => {
            let (idx, origin) = dw.ensure_index()?;
            eprintln!("index: {} entries, {origin:?}", idx.len());
        }
        _ => bail!("unknown question"),
    }
    eprintln!("open {:.1} ms, total {:.1} ms", opened.as_secs_f64() * 1e3, t.elapsed().as_secs_f64() * 1e3);
    Ok(())
}
