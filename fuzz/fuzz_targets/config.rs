//! Fuzzes the kernel config reader (`.config`, /proc/config.gz contents).
#![no_main]

use fevlint_load::symbols::KernelConfig;
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let Ok(c) = KernelConfig::parse(data, Path::new("fuzz")) else { return };
    let _ = (c.len(), c.arch(), c.ftrace_max_offset());
    let _ = c.get("CONFIG_X86_64");
    let _ = c.is_enabled("CONFIG_X86_KERNEL_IBT");
});
