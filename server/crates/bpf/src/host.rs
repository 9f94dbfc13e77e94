//! The tool binary a BPF object is embedded in (a libbpf skeleton): whether its code ever
//! asks libbpf to attach programs by their section names.
//!
//! `bpf_object__attach_skeleton()` (what a skeleton's `NAME_bpf__attach()` calls) attaches
//! every program by its `SEC()` name. A tool that never calls it attaches its programs
//! itself (`bpf_program__attach_uprobe()`, `_kprobe()` with a name of its own, or
//! `bpf_program__attach()` program by program). Where libbpf is linked dynamically the
//! import tells; where it is linked statically (Debian's libbpf-tools), the function is
//! the one whose code loads the address of libbpf's `failed to auto-attach` message, its
//! start is the `.eh_frame_hdr` entry at or below that load, and the tool calls it when
//! some `call`/`jmp rel32` of `.text` lands there.

use object::{Object, ObjectSection, ObjectSymbol};

use crate::object::{BpfObject, ObjectError};

/// The BPF objects embedded in `host` ([`crate::object::embedded`]), named
/// `NAME@OFFSET`, each told whether the host attaches programs by section
/// ([`BpfObject::host_attaches_by_section`]).
pub fn embedded_objects(name: &str, host: &[u8]) -> Result<Vec<BpfObject>, ObjectError> {
    let embedded = crate::object::embedded(host);
    if embedded.is_empty() {
        return Ok(Vec::new());
    }
    let by_section = calls_skeleton_attach(host);
    embedded
        .into_iter()
        .map(|(off, b)| {
            let mut o = BpfObject::parse(format!("{name}@{off:#x}"), b.to_vec())?;
            o.host_attaches_by_section = by_section;
            Ok(o)
        })
        .collect()
}

/// Whether the x86-64 ELF `host` ever calls `bpf_object__attach_skeleton()`: `None` when
/// its code cannot tell (not x86-64 ELF, no libbpf in it, no unwind table).
pub fn calls_skeleton_attach(host: &[u8]) -> Option<bool> {
    let file = object::File::parse(host).ok()?;
    if file.architecture() != object::Architecture::X86_64 {
        return None;
    }
    let imports: Vec<&str> =
        file.dynamic_symbols().filter(|s| s.is_undefined()).filter_map(|s| s.name().ok()).collect();
    if imports.contains(&"bpf_object__attach_skeleton") {
        return Some(true);
    }
    if imports.iter().any(|n| n.starts_with("bpf_object__")) {
        return Some(false); // libbpf is a shared library and the attach is not imported
    }
    let text = file.section_by_name(".text")?;
    let code = text.data().ok()?;
    let message = file.sections().find_map(|s| {
        let data = s.data().ok()?;
        let needle = b"failed to auto-attach";
        let at = data.windows(needle.len()).position(|w| w == needle)?;
        let start = data[..at].iter().rposition(|&b| b == 0).map_or(0, |p| p + 1);
        Some(s.address() + start as u64)
    })?;
    let loads = rip_relative_leas(code, text.address(), message);
    let hdr = file.section_by_name(".eh_frame_hdr")?;
    let starts = function_starts(hdr.data().ok()?, hdr.address())?;
    let mut attach: Vec<u64> =
        loads.iter().filter_map(|&at| starts.iter().copied().filter(|&s| s <= at).max()).collect();
    attach.sort_unstable();
    attach.dedup();
    if attach.is_empty() {
        return None;
    }
    Some(attach.iter().any(|&f| called(code, text.address(), f)))
}

/// The addresses of `lea reg, [rip + disp32]` instructions in `code` (at `base`) that
/// load `target`.
fn rip_relative_leas(code: &[u8], base: u64, target: u64) -> Vec<u64> {
    let mut out = Vec::new();
    for (i, w) in code.windows(7).enumerate() {
        if matches!(w[0], 0x48 | 0x4c) && w[1] == 0x8d && w[2] & 0xc7 == 0x05 {
            let disp = i32::from_le_bytes([w[3], w[4], w[5], w[6]]);
            let next = base.wrapping_add(i as u64 + 7);
            if next.wrapping_add_signed(i64::from(disp)) == target {
                out.push(base.wrapping_add(i as u64));
            }
        }
    }
    out
}

/// Whether some `call rel32` or `jmp rel32` in `code` (at `base`) lands on `function`.
fn called(code: &[u8], base: u64, function: u64) -> bool {
    code.windows(5).enumerate().any(|(i, w)| {
        matches!(w[0], 0xe8 | 0xe9) && {
            let rel = i32::from_le_bytes([w[1], w[2], w[3], w[4]]);
            base.wrapping_add(i as u64 + 5).wrapping_add_signed(i64::from(rel)) == function
        }
    })
}

/// The function start addresses of `.eh_frame_hdr`'s binary-search table (the usual
/// encodings: table entries `DW_EH_PE_datarel | sdata4`, count `udata4`).
fn function_starts(hdr: &[u8], address: u64) -> Option<Vec<u64>> {
    let (&version, rest) = hdr.split_first()?;
    let (ptr_enc, count_enc, table_enc) = (*rest.first()?, *rest.get(1)?, *rest.get(2)?);
    if version != 1 || ptr_enc != 0x1b || count_enc != 0x03 || table_enc != 0x3b {
        return None;
    }
    let word = |at: usize| hdr.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let count = word(8)? as usize;
    let table = hdr.get(12..)?;
    // Each entry is 8 bytes; a count the section cannot hold is refused, not allocated.
    if count > table.len() / 8 {
        return None;
    }
    Some((0..count).map(|i| address.wrapping_add_signed(i64::from(word(12 + i * 8).unwrap_or(0) as i32))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_or_foreign_table_is_no_answer() {
        assert_eq!(function_starts(&[1, 0x1b, 0x03, 0x3b, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f], 0), None);
        assert_eq!(function_starts(&[2, 0x1b, 0x03, 0x3b], 0), None);
        assert_eq!(calls_skeleton_attach(b"not an ELF"), None);
    }

    #[test]
    fn calls_and_loads_are_found_by_their_targets() {
        // call +0 at 0x1000 lands on 0x1005; lea rax, [rip + 0x10] at 0x1005 loads 0x101c.
        let code = [0xe8, 0, 0, 0, 0, 0x48, 0x8d, 0x05, 0x10, 0, 0, 0];
        assert!(called(&code, 0x1000, 0x1005));
        assert!(!called(&code, 0x1000, 0x1006));
        assert_eq!(rip_relative_leas(&code, 0x1000, 0x101c), [0x1005]);
    }
}
