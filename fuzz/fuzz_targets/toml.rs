//! Fuzzes the `fevlint.toml` reader of the CLI and the language server, [`Config`] (with
//! line/column errors).
#![no_main]

use fevlint_check::config::Config;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = Config::parse(Path::new("/p/fevlint.toml"), text) {
        let _ = c.settings();
    }
});
