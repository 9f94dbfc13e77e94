//! Fuzzes gzip/xz-wrapped dumps (kdump-tools' `KDUMP_COMPRESSION`): the first-KiB sniff,
//! the expansion bound and the readers behind them. The input is used twice: as the
//! wrapped file itself (the decoders on hostile compressed bytes), and as the content of
//! a wrapper made here with gzip (the sniff and the inner readers on hostile dumps).
#![no_main]

use fevlint_memory::{Dump, Memory, Source, VirtAddr, WrapperLimits};
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use std::path::Path;

/// Small bounds: a bomb stops at a few MiB, not at the default 64 MiB floor.
const LIMITS: WrapperLimits = WrapperLimits { ratio: 64, floor: 4 << 20 };

fn exercise(name: &str, bytes: Vec<u8>) {
    let Ok(d) = Dump::from_source_with(Source::from_vec(Path::new(name), bytes), &LIMITS) else { return };
    let _ = d.threads().len();
    let mut b = [0u8; 32];
    for a in [0x40_0000u64, 0xffff_8880_0000_0000, 0xffff_ffff_8100_0000] {
        let _ = d.read(VirtAddr(a), &mut b);
    }
}

fuzz_target!(|data: &[u8]| {
    exercise("fuzz.gz", data.to_vec());
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    if z.write_all(data).is_ok() {
        if let Ok(wrapped) = z.finish() {
            exercise("fuzz-wrapped.gz", wrapped);
        }
    }
});
