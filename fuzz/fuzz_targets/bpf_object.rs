//! Fuzzes the BPF object reader (ELF, `.BTF`, `.BTF.ext`), libbpf's open-time refusals, the
//! tool-binary reader (`host`) and the CO-RE resolution over
//! every relocation, with the object's own BTF as the target, and the dead-code walk of
//! each program: errors, never a panic, a hang or an allocation sized by a count from the
//! input.
#![no_main]

use fevlint_bpf::core::Target;
use fevlint_bpf::BpfObject;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The same bytes as a tool binary that may embed objects.
    let _ = fevlint_bpf::host::calls_skeleton_attach(data);
    let Ok(obj) = BpfObject::parse("fuzz", data.to_vec()) else { return };
    let _ = fevlint_bpf::open::refusals(&obj);
    let Some(btf) = &obj.btf else { return };
    let target = Target::new(btf);
    let resolutions = fevlint_bpf::resolve(&obj, &target);
    for r in &resolutions {
        let _ = &r.source;
    }
    for p in &obj.programs {
        let _ = obj.program_at(&p.section, p.offset);
        // The verifier's walk, with read-only data read as constants.
        let _ = fevlint_bpf::flow::reachable(&obj, p, &resolutions);
    }
});
