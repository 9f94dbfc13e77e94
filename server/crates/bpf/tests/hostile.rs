//! Bad input: every truncation and thousands of corruptions of a real clang-built object
//! (`data/moved.bpf.o`) are read and resolved without a panic or a hang; targeted damage
//! (absurd record counts, access strings past a type's members) gives errors that name the
//! file and the offset, or libbpf's failure for that relocation.

use std::path::Path;

use fevlint_bpf::core::Target;
use fevlint_bpf::{BpfObject, Outcome};
use fevlint_btf::Btf;

fn object() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/moved.bpf.o")).expect("fixture object")
}

fn kernel() -> Btf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/kernels/6.1.0-56-amd64");
    let k = fevlint_kernel::Kernel::open(&dir).expect("fixture kernel");
    let b = k.inputs().btf.as_ref().expect("BTF");
    Btf::parse("6.1.0-56-amd64", b.value.clone()).expect("kernel BTF")
}

fn section_range(data: &[u8], name: &str) -> (usize, usize) {
    let obj = BpfObject::parse("x", data.to_vec()).expect("valid");
    let (off, size) = obj.section(name).and_then(|s| s.file_range).expect("section");
    (off as usize, size as usize)
}

#[test]
fn the_fixture_object_reads_and_resolves() {
    let obj = BpfObject::parse("moved.bpf.o", object()).expect("valid object");
    assert_eq!(
        obj.programs.iter().map(|p| p.section.as_str()).collect::<Vec<_>>(),
        ["kprobe/vfs_read", "kprobe/do_unlinkat"]
    );
    let btf = kernel();
    let target = Target::new(&btf);
    let rs = fevlint_bpf::resolve(&obj, &target);
    assert_eq!(rs.len(), obj.ext.as_ref().expect("ext").core_relo_count());
    // `task_struct___old.state` is gone on 6.1 (renamed `__state` in 5.14): guarded read.
    let state = rs.iter().find(|r| r.type_name == "struct task_struct___old" && r.kind == "byte_off").expect("relo");
    assert!(matches!(state.outcome, Outcome::Poisoned { .. }), "{state:?}");
    let src = state.source.as_ref().expect("line info");
    assert_eq!((src.file.ends_with("moved.bpf.c"), src.line), (true, 24));
}

#[test]
fn every_truncation_is_an_error_naming_the_file() {
    let data = object();
    let mut step = 1;
    let mut n = 0;
    while n < data.len() {
        match BpfObject::parse("moved.bpf.o", data[..n].to_vec()) {
            Err(e) => assert!(e.to_string().starts_with("moved.bpf.o: "), "{e}"),
            Ok(obj) => {
                let _ = fevlint_bpf::open::refusals(&obj);
            }
        }
        // A truncated object read as a tool binary: no answer, never a panic.
        let _ = fevlint_bpf::host::calls_skeleton_attach(&data[..n]);
        if n > 4096 {
            step = 97;
        }
        n += step;
    }
}

#[test]
fn corrupted_btf_and_btf_ext_never_panic() {
    let data = object();
    let btf = kernel();
    let target = Target::new(&btf);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (ranges, mut resolved) = ([section_range(&data, ".BTF.ext"), section_range(&data, ".BTF")], 0);
    for round in 0..600 {
        let mut d = data.clone();
        let (off, size) = ranges[round % 2];
        for _ in 0..1 + next() % 4 {
            let at = off + (next() as usize) % size;
            d[at] = next() as u8;
        }
        let Ok(obj) = BpfObject::parse("bad.bpf.o", d) else { continue };
        let _ = fevlint_bpf::open::refusals(&obj);
        resolved += fevlint_bpf::resolve(&obj, &target).len();
        if let Some(own) = &obj.btf {
            let _ = fevlint_bpf::resolve(&obj, &Target::new(own));
        }
    }
    assert!(resolved > 1000, "the corruptions left objects to resolve: {resolved}");
}

#[test]
fn absurd_record_counts_name_the_offset() {
    let mut data = object();
    let (off, _) = section_range(&data, ".BTF.ext");
    // core_relo block: header word 6 (offset 24) is its offset after the header.
    let word = |d: &[u8], at: usize| u32::from_le_bytes([d[at], d[at + 1], d[at + 2], d[at + 3]]) as usize;
    let hdr_len = word(&data, off + 4);
    let block = off + hdr_len + word(&data, off + 24);
    // The first section's num_info (after rec_size and sec_name_off).
    data[block + 8..block + 12].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = BpfObject::parse("moved.bpf.o", data).expect_err("absurd count");
    assert_eq!(e.offset as usize, block + 8, "{e}");
    assert!(e.to_string().contains("run past the end of the block"), "{e}");
}

#[test]
fn an_access_string_past_the_members_fails_the_relocation() {
    let mut data = object();
    let (off, size) = section_range(&data, ".BTF");
    // `0:119` is `task_struct.comm`; `0:999` is past task_struct's members.
    let at = data[off..off + size].windows(6).position(|w| w == b"\x000:119").expect("access string") + off + 1;
    data[at..at + 5].copy_from_slice(b"0:999");
    let obj = BpfObject::parse("moved.bpf.o", data).expect("still an object");
    let btf = kernel();
    let rs = fevlint_bpf::resolve(&obj, &Target::new(&btf));
    let r = rs.iter().find(|r| r.access == "0:999").expect("the damaged relocation");
    match &r.outcome {
        Outcome::Failed { errno, reason } => {
            assert_eq!(*errno, -22);
            assert!(reason.contains("member index 999 past the"), "{reason}");
        }
        o => panic!("{o:?}"),
    }
}
