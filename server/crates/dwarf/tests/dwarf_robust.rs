//! Malformed DWARF never panics or hangs: compiled test binaries with corrupted
//! `.debug_info` / `.debug_abbrev` give `ModelError::Malformed` naming the file and a
//! `.debug_info` offset.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fevlint_dwarf::Dwarf;
use fevlint_load::elf::KernelElf;
use fevlint_load::Blob;
use fevlint_testkit::dwarf::{compile_agree, scratch};
use fevlint_types::layout::print_struct;
use fevlint_types::model::{ModelError, TypeNamespace, TypeSource};

fn section(bytes: &[u8], path: &Path, name: &str) -> std::ops::Range<usize> {
    let elf = KernelElf::parse(Blob::from_vec(bytes.to_vec()), path).expect("elf");
    elf.section(name).and_then(|s| s.file_range.clone()).expect("section")
}

fn open(bytes: Vec<u8>, path: &Path) -> Result<Dwarf, ModelError> {
    let elf = KernelElf::parse(Blob::from_vec(bytes), path).expect("elf");
    Dwarf::new(Arc::new(elf)).map(|d| d.with_cache_dir(None))
}

fn build() -> (PathBuf, Vec<u8>) {
    let dir = scratch("robust");
    let bin = compile_agree(&dir, "robust", &[]);
    let bytes = std::fs::read(&bin).expect("read");
    (bin, bytes)
}

/// Everything a rule could ask, errors allowed, panics and hangs not.
fn exercise(dw: &Dwarf) -> Vec<ModelError> {
    let mut errs = Vec::new();
    for (ns, name) in [
        (TypeNamespace::Struct, "holder"),
        (TypeNamespace::Struct, "bits"),
        (TypeNamespace::Union, "value"),
        (TypeNamespace::Enum, "sign"),
        (TypeNamespace::Ordinary, "chained_t"),
    ] {
        match dw.find_type(ns, name) {
            Ok(hits) => {
                for h in hits {
                    if let Err(e) = dw.size_of(h) {
                        errs.push(e);
                    }
                    if let Err(e) = print_struct(dw, h) {
                        errs.push(e);
                    }
                }
            }
            Err(e) => errs.push(e),
        }
    }
    for f in ["helper", "shared_fn", "sum_values"] {
        if let Err(e) = dw.functions(f) {
            errs.push(e);
        }
    }
    if let Err(e) = dw.ensure_index() {
        errs.push(e);
    }
    errs
}

fn assert_malformed(e: &ModelError, path: &Path) {
    match e {
        ModelError::Malformed { source_name, what, .. } => {
            assert_eq!(source_name, &path.display().to_string());
            assert!(what.starts_with(".debug_info") || what.starts_with(".debug_types"), "{what}");
        }
        other => panic!("expected Malformed, got {other}"),
    }
}

#[test]
fn truncated_unit_length_is_rejected_at_open() {
    let (path, mut bytes) = build();
    let info = section(&bytes, &path, ".debug_info");
    // The first unit claims to run far past the end of the section.
    bytes[info.start..info.start + 4].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let err = open(bytes, &path).expect_err("must fail");
    assert_malformed(&err, &path);
    assert!(err.to_string().contains("at offset 0x0"), "{err}");
}

#[test]
fn truncated_section_gives_errors_not_panics() {
    let (path, bytes) = build();
    let info = section(&bytes, &path, ".debug_info");
    // Keep the unit headers but zero the second half of the section: DIEs end early.
    let mut b = bytes.clone();
    let mid = info.start + (info.end - info.start) / 2;
    for x in &mut b[mid..info.end] {
        *x = 0;
    }
    if let Ok(dw) = open(b, &path) {
        let _ = exercise(&dw);
    }
}

#[test]
fn bad_abbreviation_code_names_the_offset() {
    let (path, mut bytes) = build();
    let info = section(&bytes, &path, ".debug_info");
    // DWARF 5 compile unit header is 12 bytes; the unit DIE's abbreviation code follows.
    bytes[info.start + 12] = 0x7e;
    let dw = open(bytes, &path).expect("headers are intact");
    let errs = exercise(&dw);
    assert!(!errs.is_empty());
    for e in &errs {
        assert_malformed(e, &path);
    }
    assert!(errs.iter().any(|e| e.to_string().contains("abbreviation")), "{errs:?}");
}

/// Finds the typedef `chained_t` and points its DW_AT_type (a ref4) at itself.
fn make_typedef_cycle(path: &Path, bytes: &mut [u8]) {
    use gimli::{EndianSlice, LittleEndian};
    let info = section(bytes, path, ".debug_info");
    let abbrev = section(bytes, path, ".debug_abbrev");
    let strs = section(bytes, path, ".debug_str");
    let line_str = section(bytes, path, ".debug_line_str");
    let line = section(bytes, path, ".debug_line");
    let mut patch = None;
    {
        let sec = |r: &std::ops::Range<usize>| EndianSlice::new(&bytes[r.clone()], LittleEndian);
        let dwarf = gimli::Dwarf {
            debug_info: sec(&info).into(),
            debug_abbrev: sec(&abbrev).into(),
            debug_str: sec(&strs).into(),
            debug_line_str: sec(&line_str).into(),
            debug_line: sec(&line).into(),
            ..Default::default()
        };
        let mut units = dwarf.units();
        'outer: while let Some(h) = units.next().expect("unit") {
            let unit = dwarf.unit(h).expect("unit");
            let mut entries = unit.entries();
            while let Some((_, e)) = entries.next_dfs().expect("dfs") {
                if e.tag() != gimli::DW_TAG_typedef {
                    continue;
                }
                let name = e.attr_value(gimli::DW_AT_name).expect("attr").expect("name");
                if dwarf.attr_string(&unit, name).expect("str").slice() != b"chained_t" {
                    continue;
                }
                let Some(gimli::AttributeValue::UnitRef(_)) = e.attr_value(gimli::DW_AT_type).expect("attr") else {
                    continue;
                };
                // gcc writes typedefs as name (strp), decl_file, decl_line, decl_column,
                // type (ref4): the ref4 is the last 4 bytes of the DIE.
                let die_off = e.offset().0;
                let unit_off = h.offset().as_debug_info_offset().expect("info").0;
                let mut attrs = e.attrs();
                let mut last_is_type = false;
                while let Some(a) = attrs.next().expect("attrs") {
                    last_is_type = a.name() == gimli::DW_AT_type;
                }
                assert!(last_is_type, "DW_AT_type is not the last attribute");
                let mut next = unit.entries_at_offset(e.offset()).expect("cursor");
                next.next_dfs().expect("self");
                next.next_dfs().expect("next");
                let end = next.current().map(|n| n.offset().0).expect("a DIE follows the typedef");
                patch = Some((info.start + unit_off + end - 4, die_off as u32));
                break 'outer;
            }
        }
    }
    let (at, target) = patch.expect("typedef chained_t found");
    bytes[at..at + 4].copy_from_slice(&target.to_le_bytes());
}

#[test]
fn typedef_cycle_is_malformed_not_a_hang() {
    let (path, mut bytes) = build();
    make_typedef_cycle(&path, &mut bytes);
    let dw = open(bytes, &path).expect("open");
    let t = dw.find_type(TypeNamespace::Ordinary, "chained_t").expect("lookup")[0];
    let err = dw.size_of(t).expect_err("cycle");
    assert_malformed(&err, &path);
    assert!(err.to_string().contains("cycle"), "{err}");
    // Through layout (which bounds its own walks) it fails too, and ends.
    let h = dw.find_type(TypeNamespace::Struct, "holder").expect("holder")[0];
    assert!(print_struct(&dw, h).is_err());
}

#[test]
fn random_byte_flips_never_panic() {
    let (path, bytes) = build();
    let info = section(&bytes, &path, ".debug_info");
    let abbrev = section(&bytes, &path, ".debug_abbrev");
    // A small deterministic generator: the same mutations on every run.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut failures = 0;
    for round in 0..160 {
        let mut b = bytes.clone();
        let target = if round % 4 == 3 { &abbrev } else { &info };
        for _ in 0..(1 + next() % 4) {
            let at = target.start + (next() as usize) % (target.end - target.start);
            b[at] = next() as u8;
        }
        match open(b, &path) {
            Ok(dw) => failures += exercise(&dw).len(),
            Err(e) => {
                assert_malformed(&e, &path);
                failures += 1;
            }
        }
    }
    // Most flips land somewhere that matters.
    assert!(failures > 20, "only {failures} errors from 160 corrupted files");
}

/// The index reads `.debug_line` headers and `.debug_str` names itself: corrupted bytes
/// there give errors or answers, never a panic, and the line tables it still reads give
/// the paths gimli gives.
#[test]
fn line_table_and_string_flips_never_panic() {
    let (path, bytes) = build();
    let line = section(&bytes, &path, ".debug_line");
    let strs = section(&bytes, &path, ".debug_str");
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut compared = 0;
    for round in 0..120 {
        let mut b = bytes.clone();
        // Mostly the line tables' headers (their first bytes), sometimes anywhere.
        let target = if round % 3 == 2 { &strs } else { &line };
        for _ in 0..(1 + next() % 3) {
            let span = if round % 2 == 0 { 64.min(target.end - target.start) } else { target.end - target.start };
            let at = target.start + (next() as usize) % span;
            b[at] = next() as u8;
        }
        match open(b, &path) {
            Ok(dw) => {
                let _ = exercise(&dw);
                compared +=
                    fevlint_dwarf::index::check_file_tables(&dw).unwrap_or_else(|e| panic!("round {round}: {e}"));
            }
            Err(e) => assert_malformed(&e, &path),
        }
    }
    assert!(compared > 0, "no line table survived to be compared");
}
