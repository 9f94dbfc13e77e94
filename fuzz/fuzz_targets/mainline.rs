#![no_main]
//! The mainline-dialect parser on arbitrary lines and files, for every dialect: it must
//! not panic, and a logged error must point inside the line (the kernel's own caret may
//! pass the end of its command: offsets inside a `%pd` rewrite are added to the
//! original word's position, as the kernel does).

use fevlint_mainline::{check_file, check_line, Dialect, NoKernel, Rejection};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for d in [
        Dialect::debian_6_1_170(),
        Dialect::debian_6_1_192(),
        Dialect::debian_6_12_117(),
    ] {
        for line in text.split('\n') {
            if let Err(Rejection::Logged(e)) = check_line(&d, line) {
                assert!(e.byte <= line.len());
            }
        }
        let _ = check_file(&d, &NoKernel, &text);
    }
});
