//! Prints what a dump holds: format, VMCOREINFO basics, page tables, CPUs/threads, and
//! optionally bytes at addresses: `dumpinfo FILE [ADDR[:LEN]]...` (hex addresses).

use fevlint_memory::{Dump, Memory, VirtAddr};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: dumpinfo FILE [ADDR[:LEN]]...");
        std::process::exit(2);
    };
    let t = std::time::Instant::now();
    let dump = match Dump::open(Path::new(path)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    println!("opened in {:?}: {}", t.elapsed(), dump.format());
    if let Dump::Kernel(k) = &dump {
        if let Some(info) = k.vmcoreinfo() {
            println!(
                "OSRELEASE={:?} BUILD-ID={:?} KERNELOFFSET={:#x}",
                info.osrelease(),
                info.build_id(),
                k.kernel_offset()
            );
        } else {
            println!("no VMCOREINFO");
        }
        println!("phys_base={:x?} page tables={:x?}", k.phys_base(), k.page_tables());
        if let Some(kd) = k.kdump() {
            println!("{:?}, {} dumped pages", kd.header(), kd.dumped_pages());
        }
        if let Some(e) = k.elf() {
            println!("{} PT_LOADs, first {:x?}", e.segments().len(), e.segments().iter().take(3).collect::<Vec<_>>());
        }
    }
    for t in dump.threads() {
        println!("thread {} tid {} ip {:#x}", t.index, t.tid, t.regs.ip());
    }
    for a in &args[1..] {
        let (addr, len) = a.split_once(':').unwrap_or((a, "16"));
        let addr = VirtAddr(u64::from_str_radix(addr.trim_start_matches("0x"), 16).unwrap_or(0));
        let mut b = vec![0u8; len.parse().unwrap_or(16)];
        match dump.read(addr, &mut b) {
            Ok(()) => {
                let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
                let text: String = b.iter().map(|&c| if (0x20..0x7f).contains(&c) { c as char } else { '.' }).collect();
                println!("{addr:#x}: {}  {text}", hex.join(" "));
            }
            Err(f) => println!("{addr:#x}: fault {f}"),
        }
    }
}
