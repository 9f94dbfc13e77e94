//! Fuzzes the `fevlint.lock` reader: TOML, the schema, the version check.
#![no_main]

use fevlint_check::lock::Lock;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(lock) = Lock::parse(Path::new("fevlint.lock"), text) {
        let _ = lock.for_file("a.fev");
    }
});
