//! Field evaluations per second over a real kernel dump: the `do_sys_openat2` stop dump
//! that `cargo test -p fevlint-memory --test kernel_dumps` writes (Debian 6.12 under
//! QEMU, stopped at the call's entry), read through the task's CR3.
//!
//! `cargo bench -p fevlint-exec --bench eval` (after that test has run once).

use fevlint_exec::{evaluate, Frame, SymbolAt, Symbols};
use fevlint_memory::{Dump, PageTables, PhysAddr};
use fevlint_syntax::machine::Target;
use std::path::Path;
use std::time::Instant;

struct NoSymbols;

impl Symbols for NoSymbols {
    fn symbolize(&self, _: u64) -> Option<SymbolAt> {
        None
    }
    fn address(&self, _: &str) -> Option<u64> {
        None
    }
}

fn main() {
    let core = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../target/tmp/kernel_dumps/nokaslr/gdbstop.core");
    let opened = Instant::now();
    let mut dump = match Dump::open(&core) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}: run `cargo test -p fevlint-memory --test kernel_dumps` first");
            std::process::exit(2);
        }
    };
    let open_time = opened.elapsed();
    if let Dump::Kernel(k) = &mut dump {
        if let Some(cr3) = k.qemu_cpus().first().map(|q| q.cr3) {
            k.set_page_tables(PageTables::new(PhysAddr(cr3), 4));
        }
    }
    let regs = dump.threads()[0].regs;
    let frame = Frame {
        slots: ["di", "si", "dx", "cx", "r8", "r9"].iter().map(|r| regs.get(r).unwrap_or(0)).collect(),
        function_address: Some(regs.ip()),
        return_address: None,
    };
    let text = "do_sys_openat2(int dfd, string path, x64 flags[0] | u64 mode+8[0] | u64 resolve+16[0])\n";
    let mut parser = fevlint_syntax::Parser::new();
    let lines = parser.lines(text, Target::X86_64);
    let parsed = lines[0].parsed.as_ref().expect("parsed");
    let fields = parsed.fields.len();
    let first = evaluate(parsed, Target::X86_64, &frame, &dump, &NoSymbols);
    println!("{}", first.trace_line());
    for round in 0..3 {
        let n = 200_000;
        let start = Instant::now();
        let mut sink = 0usize;
        for _ in 0..n {
            sink += evaluate(parsed, Target::X86_64, &frame, &dump, &NoSymbols).fields.len();
        }
        let secs = start.elapsed().as_secs_f64();
        assert_eq!(sink, n * fields);
        println!(
            "round {round}: {n} events x {fields} fields in {secs:.3} s: {:.2} M field evaluations/s (one string of 13 bytes, four member reads)",
            (n * fields) as f64 / secs / 1e6
        );
    }
    println!("open: {open_time:?}");
}
