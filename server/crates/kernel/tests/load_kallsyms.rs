//! The kallsyms tables of a real image, read without its symbols: Debian 6.12.117's
//! vmlinuz (fixture) against the System.map of the same build (fixture, from the `-dbg`
//! package's build).

use fevlint_kernel::Kernel;
use fevlint_load::kallsyms::kallsyms_text;
use std::collections::HashMap;

#[test]
fn the_image_kallsyms_agree_with_system_map() {
    let dir = fevlint_testkit::kernel_fixture("6.12.117+deb12-amd64");
    let k = Kernel::open(&dir.join("vmlinuz")).expect("vmlinuz");
    let elf = &k.inputs().elf.as_ref().expect("the payload ELF").value;
    let start = std::time::Instant::now();
    let text = kallsyms_text(elf, Some(true)).expect("kallsyms");
    eprintln!("decoded in {:?}", start.elapsed());
    let (_, raw) = fevlint_testkit::kernel_fixture_file("6.12.117+deb12-amd64", "System.map");
    let map = String::from_utf8(raw).expect("utf-8");
    let by_name: HashMap<&str, Vec<u64>> = map.lines().fold(HashMap::new(), |mut m, l| {
        let mut it = l.split_whitespace();
        if let (Some(a), Some(_), Some(n)) = (it.next(), it.next(), it.next()) {
            m.entry(n).or_default().push(u64::from_str_radix(a, 16).unwrap_or(0));
        }
        m
    });
    let (mut total, mut text_syms, mut matched, mut missing) = (0, 0, 0, Vec::new());
    for l in text.lines() {
        let mut it = l.split_whitespace();
        let (Some(a), Some(t), Some(n)) = (it.next(), it.next(), it.next()) else { continue };
        total += 1;
        if !matches!(t, "T" | "t") {
            continue;
        }
        text_syms += 1;
        let a = u64::from_str_radix(a, 16).expect("hex");
        if by_name.get(n).is_some_and(|v| v.contains(&a)) {
            matched += 1;
        } else if missing.len() < 10 {
            missing.push(l.to_owned());
        }
    }
    eprintln!("{total} symbols, {text_syms} text, {matched} at System.map's address");
    assert!(total > 100_000, "{total}");
    assert_eq!(matched, text_syms, "first mismatches: {missing:#?}");
}
