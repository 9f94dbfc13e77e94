//! `__ksym` externs (kernel variables with or without a type, kfuncs) resolved against a
//! kernel as libbpf 1.1 resolves them when it loads the object: `bpf_object__collect_externs`
//! (which extern is what, from the object's BTF), `bpf_object__resolve_ksym_var_btf_id` and
//! `bpf_object__resolve_ksym_func_btf_id` (the kernel's BTF: same name and kind, then
//! `bpf_core_types_are_compat` on the types), and the kallsyms pass for typeless variables
//! (answered by the caller, which holds the kernel's symbol map).
//!
//! libbpf resolves externs before it loads any program: one unresolved strong extern
//! refuses the whole object (`extern '...' (strong): not resolved`, `-ESRCH`/`-EINVAL`).

use fevlint_btf::{Btf, BtfKind};
use serde::Serialize;

use crate::btfx::{kind_str, View};
use crate::core::{types_compatible, Target};
use crate::object::{BpfObject, ElfExtern};

/// What an extern is, by its BTF (`EXT_KCFG`, `EXT_KSYM` typed or typeless, kfunc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum ExternKind {
    /// A `__kconfig` value (`CONFIG_*`, `LINUX_*`): not a kernel symbol.
    Kconfig,
    /// `extern const struct rq runqueues __ksym;`: the variable's type, modifiers skipped.
    TypedVar { type_id: u32 },
    /// `extern const void bpf_prog_active __ksym;`: an address from kallsyms.
    TypelessVar,
    /// `extern struct task_struct *bpf_task_acquire(...) __ksym;`: its FUNC_PROTO.
    Func { proto_id: u32 },
}

/// One extern of the object with what its BTF says.
#[derive(Clone, Debug)]
pub struct Extern<'o> {
    pub elf: &'o ElfExtern,
    /// Its VAR or FUNC in the object's BTF.
    pub btf_id: u32,
    pub kind: ExternKind,
}

/// How libbpf resolves one `__ksym` extern on a kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KsymOutcome {
    /// Found, with a compatible type: the kernel's BTF id.
    Resolved { kernel_id: u32 },
    /// A typeless variable: libbpf looks it up in `/proc/kallsyms`.
    Kallsyms,
    /// Not in the kernel; `__weak`, so libbpf leaves it zero and goes on.
    WeakMissing,
    /// libbpf refuses the object: its own message.
    Refused { message: String },
    /// Not in vmlinux's BTF, and the kernel's module BTF is not known: libbpf would look
    /// in each loaded module's BTF next, so whether it resolves is unknown.
    NotInVmlinux,
}

/// The object's externs as `bpf_object__collect_externs` classifies them; `Err` is the
/// message libbpf refuses the object with when it opens it.
pub fn externs(obj: &BpfObject) -> Result<Vec<Extern<'_>>, String> {
    if obj.externs.is_empty() {
        return Ok(Vec::new());
    }
    let Some(btf) = &obj.btf else {
        let first = &obj.externs[0].name;
        return Err(format!("failed to find BTF for extern '{first}': -3"));
    };
    let v = View::new(btf);
    let mut out = Vec::with_capacity(obj.externs.len().min(4096));
    for e in &obj.externs {
        let btf_id = find_extern_btf_id(&v, &e.name)?;
        let t = v.ty(btf_id).map_err(|x| x.to_string())?;
        let sec = find_extern_sec(&v, btf_id)?
            .ok_or_else(|| format!("failed to find BTF for extern '{}' [{btf_id}] section: -2", e.name))?;
        let kind = match sec.as_str() {
            ".kconfig" => ExternKind::Kconfig,
            ".ksyms" => {
                let (_, type_id) = v.skip_mods(t.size_or_type).map_err(|x| x.to_string())?;
                match (t.kind, type_id) {
                    (Some(BtfKind::Func), id) => ExternKind::Func { proto_id: id },
                    (_, 0) => ExternKind::TypelessVar,
                    (_, id) => ExternKind::TypedVar { type_id: id },
                }
            }
            other => return Err(format!("unrecognized extern section '{other}'")),
        };
        out.push(Extern { elf: e, btf_id, kind });
    }
    Ok(out)
}

/// `find_extern_btf_id`: the first VAR or FUNC of that name, which must be extern.
fn find_extern_btf_id(v: &View, name: &str) -> Result<u32, String> {
    for id in v.btf.own_ids() {
        let t = v.ty(id.0).map_err(|x| x.to_string())?;
        if !matches!(t.kind, Some(BtfKind::Var | BtfKind::Func)) || v.name(t.name_off).ok() != Some(name.as_bytes()) {
            continue;
        }
        // VAR linkage is its extra word (2: extern); FUNC linkage is its vlen (2: extern).
        let linkage = if t.is(BtfKind::Var) { v.extra(&t, 0).map_err(|x| x.to_string())? } else { u32::from(t.vlen) };
        if linkage != 2 {
            return Err(format!("failed to find BTF for extern '{name}': -22"));
        }
        return Ok(id.0);
    }
    Err(format!("failed to find BTF for extern '{name}': -2"))
}

/// `find_extern_sec_btf_id`: the name of the DATASEC that lists the extern.
fn find_extern_sec(v: &View, ext_id: u32) -> Result<Option<String>, String> {
    for id in v.btf.own_ids() {
        let t = v.ty(id.0).map_err(|x| x.to_string())?;
        if !t.is(BtfKind::Datasec) {
            continue;
        }
        for j in 0..usize::from(t.vlen) {
            if v.extra(&t, 3 * j).map_err(|x| x.to_string())? == ext_id {
                return Ok(Some(v.name_str(t.name_off)));
            }
        }
    }
    Ok(None)
}

/// How libbpf resolves `ext` against the kernel's BTF (`Kconfig` externs: `Resolved`, they
/// are not kernel symbols): vmlinux first, then, as `find_ksym_btf_id` does, each module's
/// split BTF in `modules` (the modules loaded on that kernel, in order; `None`: not known).
pub fn resolve(obj: &BpfObject, ext: &Extern, target: &Target, modules: Option<&[Btf]>) -> KsymOutcome {
    let Some(btf) = &obj.btf else { return KsymOutcome::Refused { message: "object has no BTF".into() } };
    let local = View::new(btf);
    let targ = target.view();
    let name = ext.elf.name.as_str();
    match ext.kind {
        ExternKind::Kconfig => KsymOutcome::Resolved { kernel_id: 0 },
        ExternKind::TypelessVar => KsymOutcome::Kallsyms,
        ExternKind::TypedVar { type_id } => {
            let module;
            let (targ, id) = match target.find(BtfKind::Var, name) {
                Some(id) => (targ, id),
                None => match find_in_modules(modules, BtfKind::Var, name) {
                    Found::In(btf, id) => {
                        module = View::new(btf);
                        (&module, id)
                    }
                    Found::Nowhere => {
                        return missing(ext, format!("extern (var ksym) '{name}': not found in kernel BTF"))
                    }
                    Found::Unknown => return KsymOutcome::NotInVmlinux,
                },
            };
            let targ_type = targ.ty(id).and_then(|t| targ.skip_mods(t.size_or_type));
            let Ok((tt, tid)) = targ_type else {
                return KsymOutcome::Refused { message: format!("extern (var ksym) '{name}': unreadable kernel type") };
            };
            match types_compatible(&local, type_id, targ, tid) {
                Ok(true) => KsymOutcome::Resolved { kernel_id: id },
                Ok(false) | Err(_) => {
                    let lt = local.ty(type_id).ok();
                    KsymOutcome::Refused {
                        message: format!(
                            "extern (var ksym) '{name}': incompatible types, expected [{type_id}] {} {}, but kernel has [{tid}] {} {}",
                            kind_str(lt.and_then(|t| t.kind)),
                            lt.map(|t| local.name_str(t.name_off)).unwrap_or_default(),
                            kind_str(tt.kind),
                            targ.name_str(tt.name_off),
                        ),
                    }
                }
            }
        }
        ExternKind::Func { proto_id } => {
            let module;
            let (targ, id) = match target.find(BtfKind::Func, name) {
                Some(id) => (targ, id),
                None => match find_in_modules(modules, BtfKind::Func, name) {
                    Found::In(btf, id) => {
                        module = View::new(btf);
                        (&module, id)
                    }
                    Found::Nowhere => {
                        return missing(ext, format!("extern (func ksym) '{name}': not found in kernel or module BTFs"))
                    }
                    Found::Unknown => return KsymOutcome::NotInVmlinux,
                },
            };
            let Ok(kproto) = targ.ty(id).map(|t| t.size_or_type) else {
                return KsymOutcome::Refused {
                    message: format!("extern (func ksym) '{name}': unreadable kernel type"),
                };
            };
            match types_compatible(&local, proto_id, targ, kproto) {
                Ok(true) => KsymOutcome::Resolved { kernel_id: id },
                Ok(false) | Err(_) => KsymOutcome::Refused {
                    message: format!(
                        "extern (func ksym) '{name}': func_proto [{proto_id}] incompatible with kernel [{kproto}]"
                    ),
                },
            }
        }
    }
}

/// Where a ksym missing from vmlinux is among the modules' BTF.
enum Found<'m> {
    In(&'m Btf, u32),
    Nowhere,
    /// The modules are not known.
    Unknown,
}

/// `btf__find_by_name_kind_own` over each module in order: the first of its own types of
/// that kind and name.
fn find_in_modules<'m>(modules: Option<&'m [Btf]>, kind: BtfKind, name: &str) -> Found<'m> {
    let Some(modules) = modules else { return Found::Unknown };
    for btf in modules {
        let v = View::new(btf);
        let hit = btf.own_ids().map(|id| id.0).find(|&id| {
            v.ty(id).is_ok_and(|t| t.kind == Some(kind) && v.name(t.name_off).is_ok_and(|n| n == name.as_bytes()))
        });
        if let Some(id) = hit {
            return Found::In(btf, id);
        }
    }
    Found::Nowhere
}

/// The first module in `modules` whose own BTF has a type of that kind and name (a
/// function, a tracepoint's `btf_trace_*` typedef): where libbpf finds an attach target
/// vmlinux lacks.
pub fn module_with<'m>(modules: &'m [Btf], kind: BtfKind, name: &str) -> Option<&'m Btf> {
    match find_in_modules(Some(modules), kind, name) {
        Found::In(btf, _) => Some(btf),
        Found::Nowhere | Found::Unknown => None,
    }
}

/// The answer for a ksym the kernel lacks.
pub fn missing(ext: &Extern, message: String) -> KsymOutcome {
    if ext.elf.weak {
        KsymOutcome::WeakMissing
    } else {
        KsymOutcome::Refused { message }
    }
}
