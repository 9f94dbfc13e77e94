#![no_main]
//! bpftrace scripts: any bytes parse without a panic, and every error and attach point
//! lies inside the script.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let p = fevlint_bpftrace::parse(&text);
    for e in &p.errors {
        assert!(e.span.start <= e.span.end && e.span.end <= text.len());
    }
    for probe in &p.program.probes {
        for ap in &probe.attach_points {
            assert!(ap.span.end <= text.len() && ap.func_span.end <= text.len());
        }
    }
});
