//! Fuzzes the `fevlint.toml` readers: the CLI's [`Config`] (with line/column errors) and
//! the language server's layer.
#![no_main]

use fevlint_check::config::Config;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(c) = Config::parse(Path::new("/p/fevlint.toml"), text) {
        let _ = c.settings();
    }
    let _ = fevlint_lsp::config::Layer::from_toml(text, Path::new("/p"));
});
