//! What libbpf 1.1 refuses in an object before any kernel is asked: at
//! `bpf_object__open()` (a static entry program, an invalid `pinning` value, a
//! `.struct_ops` slot pointing at a program that is not struct_ops) or at
//! `bpf_object__load()` whatever the kernel (the only function of the object in `.text`,
//! which libbpf then takes for a program without a type). Each refusal carries libbpf's
//! own log line.

use fevlint_btf::BtfKind;

use crate::btfx::View;
use crate::object::BpfObject;
use crate::section::AttachKind;

/// When libbpf refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `bpf_object__open()` fails.
    Open,
    /// `bpf_object__load()` fails, on every kernel.
    Load,
}

/// One thing libbpf refuses, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub stage: Stage,
    /// What is wrong, for a message (code in backticks).
    pub what: String,
    /// libbpf's log line, as `libbpf_set_print` receives it (without `libbpf: `).
    pub libbpf: String,
    /// The program it is about, when it is about one.
    pub program: Option<String>,
    /// The map (a `.maps` or `.struct_ops` variable) it is about, when it is about one.
    pub map: Option<String>,
}

/// Every refusal, in the order libbpf meets them (it stops at the first).
pub fn refusals(obj: &BpfObject) -> Vec<Refusal> {
    let mut out = Vec::new();
    // `bpf_object__add_programs`: entry programs must be global.
    for p in obj.programs.iter().filter(|p| p.local && p.section != ".text") {
        out.push(Refusal {
            stage: Stage::Open,
            what: format!("program `{}` in `{}` is `static`", p.name, p.section),
            libbpf: format!("sec '{}': program '{}' is static and not supported", p.section, p.name),
            program: Some(p.name.clone()),
            map: None,
        });
    }
    out.extend(pinning(obj));
    // `bpf_object__collect_st_ops_relos`: a struct_ops slot needs a struct_ops program.
    for slot in &obj.struct_ops {
        let map = slot.map.clone().unwrap_or_else(|| "<?>".into());
        let prog = obj.programs.iter().find(|p| {
            p.section_index == slot.section_index
                && slot.value >= p.offset
                && slot.value < p.offset.saturating_add(p.size.max(1))
        });
        let Some(p) = prog else { continue };
        if p.def.is_some_and(|d| d.kind == AttachKind::StructOps) {
            continue;
        }
        out.push(Refusal {
            stage: Stage::Open,
            what: format!(
                "`.struct_ops` variable `{map}` points at program `{}` of `{}`, not a struct_ops program",
                p.name, p.section
            ),
            libbpf: format!("struct_ops reloc {map}: prog {} is not struct_ops BPF program", p.name),
            program: Some(p.name.clone()),
            map: Some(map),
        });
    }
    // `prog_is_subprog`: `.text` code is a subprogram only when the object has more than
    // one function; alone, it is a program whose section gives no type.
    if let [p] = obj.programs.as_slice() {
        if p.section == ".text" {
            out.push(Refusal {
                stage: Stage::Load,
                what: format!(
                    "the object's only function, `{}`, is in `.text`, so libbpf takes it for a program without a type",
                    p.name
                ),
                libbpf: format!("prog '{}': missing BPF prog type, check ELF section name '.text'", p.name),
                program: Some(p.name.clone()),
                map: None,
            });
        }
    }
    out
}

/// `parse_btf_map_def`: a `.maps` variable's `pinning` must be `LIBBPF_PIN_NONE` (0) or
/// `LIBBPF_PIN_BY_NAME` (1). The value is the element count of the array the member
/// points at (`__uint(pinning, N)` is `int (*pinning)[N]`).
fn pinning(obj: &BpfObject) -> Vec<Refusal> {
    let Some(btf) = &obj.btf else { return Vec::new() };
    let v = View::new(btf);
    let mut out = Vec::new();
    for id in btf.own_ids() {
        let Ok(sec) = v.ty(id.0) else { continue };
        if !sec.is(BtfKind::Datasec) || v.name(sec.name_off).ok() != Some(b".maps".as_slice()) {
            continue;
        }
        for j in 0..usize::from(sec.vlen) {
            let Ok(var) = v.extra(&sec, 3 * j).and_then(|t| v.ty(t)) else { continue };
            if !var.is(BtfKind::Var) {
                continue;
            }
            let Ok((def, _)) = v.skip_mods(var.size_or_type) else { continue };
            if !def.is(BtfKind::Struct) {
                continue;
            }
            for i in 0..usize::from(def.vlen) {
                let Ok(m) = v.member(&def, i) else { continue };
                if v.name(m.name_off).ok() != Some(b"pinning".as_slice()) {
                    continue;
                }
                let Ok((ptr, _)) = v.skip_mods(m.ty) else { continue };
                let Ok((arr, _)) = v.skip_mods(ptr.size_or_type) else { continue };
                if !ptr.is(BtfKind::Ptr) || !arr.is(BtfKind::Array) {
                    continue; // libbpf refuses this too, with another message
                }
                let Ok((_, _, value)) = v.array(&arr) else { continue };
                if value > 1 {
                    let name = v.name_str(var.name_off);
                    out.push(Refusal {
                        stage: Stage::Open,
                        what: format!("map `{name}` has `pinning` {value}, which is neither `LIBBPF_PIN_NONE` (0) nor `LIBBPF_PIN_BY_NAME` (1)"),
                        libbpf: format!("map '{name}': invalid pinning value {value}."),
                        program: None,
                        map: Some(name),
                    });
                }
            }
        }
    }
    out
}

/// `bpf_map__init_kern_struct_ops`, at `bpf_object__load()` on one kernel: each
/// `.struct_ops` variable's type `T` needs `struct T` and `struct bpf_struct_ops_T` in
/// the kernel's BTF, and every member of the object's `T` a member of that name in the
/// kernel's (libbpf 1.1 checks them all, set or not).
pub fn struct_ops_on(obj: &BpfObject, target: &crate::core::Target) -> Vec<Refusal> {
    let Some(btf) = &obj.btf else { return Vec::new() };
    let v = View::new(btf);
    let k = target.view();
    let mut out = Vec::new();
    for id in btf.own_ids() {
        let Ok(sec) = v.ty(id.0) else { continue };
        if !sec.is(BtfKind::Datasec) || v.name(sec.name_off).ok() != Some(b".struct_ops".as_slice()) {
            continue;
        }
        for j in 0..usize::from(sec.vlen) {
            let Ok(var) = v.extra(&sec, 3 * j).and_then(|t| v.ty(t)) else { continue };
            let Ok((local, _)) = v.skip_mods(var.size_or_type) else { continue };
            if !var.is(BtfKind::Var) || !local.is(BtfKind::Struct) {
                continue;
            }
            let map = v.name_str(var.name_off);
            let tname = v.name_str(local.name_off);
            let refusal = |what: String, libbpf: String| Refusal {
                stage: Stage::Load,
                what,
                libbpf,
                program: None,
                map: Some(map.clone()),
            };
            let Some(kern) = target.find(BtfKind::Struct, &tname) else {
                out.push(refusal(
                    format!("`.struct_ops` variable `{map}` is a `struct {tname}`, which the kernel does not have"),
                    format!("struct_ops init_kern: struct {tname} is not found in kernel BTF"),
                ));
                continue;
            };
            let value = format!("bpf_struct_ops_{tname}");
            if target.find(BtfKind::Struct, &value).is_none() {
                out.push(refusal(
                    format!("the kernel has no `struct {value}`: it cannot run a `struct {tname}` from BPF"),
                    format!("struct_ops init_kern: struct {value} is not found in kernel BTF"),
                ));
                continue;
            }
            let Ok(kt) = k.ty(kern) else { continue };
            let kernel_has = |name: &[u8]| {
                (0..usize::from(kt.vlen)).any(|i| k.member(&kt, i).is_ok_and(|m| k.name(m.name_off).ok() == Some(name)))
            };
            for i in 0..usize::from(local.vlen) {
                let Ok(m) = v.member(&local, i) else { continue };
                let Ok(name) = v.name(m.name_off) else { continue };
                if !kernel_has(name) {
                    let name = String::from_utf8_lossy(name);
                    out.push(refusal(
                        format!("`.struct_ops` variable `{map}`: the kernel's `struct {tname}` has no member `{name}`"),
                        format!("struct_ops init_kern {map}: Cannot find member {name} in kernel BTF"),
                    ));
                    break;
                }
            }
        }
    }
    out
}
