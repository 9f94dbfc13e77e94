//! A BPF ELF object: its sections, programs (by `SEC()` name and function symbol),
//! `.BTF` and `.BTF.ext`, and the instructions the CO-RE records point at.

use std::sync::Arc;

use fevlint_btf::{Btf, StrOffset};
use object::{Object, ObjectSection, ObjectSymbol, RelocationTarget, SectionFlags, SectionKind, SymbolKind};

use crate::ext::{BtfExt, LineInfo};
use crate::section::SectionDef;

/// `EM_BPF`.
const EM_BPF: u16 = 247;
/// `SHF_EXECINSTR`.
const SHF_EXECINSTR: u64 = 4;

/// An object that cannot be read: the file and the byte offset in it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {what} (at offset {offset:#x})")]
pub struct ObjectError {
    pub file: String,
    pub offset: u64,
    pub what: String,
}

/// An ELF section of the object.
#[derive(Clone, Debug)]
pub struct Section {
    pub index: usize,
    pub name: String,
    /// Holds instructions (`SHF_EXECINSTR`).
    pub executable: bool,
    /// Where its bytes are in the file, when it has any.
    pub file_range: Option<(u64, u64)>,
}

/// A program: a global or static function symbol in an executable section.
#[derive(Clone, Debug)]
pub struct Program {
    pub name: String,
    /// The ELF section (`kprobe/do_unlinkat`, `.text` for subprograms).
    pub section: String,
    pub section_index: usize,
    /// Byte offset of its first instruction in the section, and its size.
    pub offset: u64,
    pub size: u64,
    /// libbpf's definition of the section (`None` for `.text` and unknown sections).
    pub def: Option<&'static SectionDef>,
    /// A `static` function (`STB_LOCAL`): libbpf 1.1 refuses one outside `.text`.
    pub local: bool,
}

/// A function pointer of a variable in `.struct_ops`: the relocation that sets it.
#[derive(Clone, Debug)]
pub struct StructOpsSlot {
    /// The variable (libbpf's struct_ops map) the slot is in, if a symbol names it.
    pub map: Option<String>,
    /// Byte offset of the slot in `.struct_ops`.
    pub offset: u64,
    /// The function it points at: its symbol's name, section index and value.
    pub function: String,
    pub section_index: usize,
    pub value: u64,
}

/// An extern symbol of the object (`sym_is_extern`: undefined, global or weak, no type):
/// a `__ksym` variable or kfunc, or a `__kconfig` value; which one its BTF says.
#[derive(Clone, Debug)]
pub struct ElfExtern {
    pub name: String,
    /// `__weak`: libbpf leaves it zero when the kernel lacks it.
    pub weak: bool,
    /// The instructions that refer to it: `(section, byte offset)` of each relocation.
    pub uses: Vec<(String, u32)>,
}

/// A source position from line_info.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SourcePos {
    pub file: String,
    pub line: u32,
    pub column: u32,
}

/// A parsed BPF object.
#[derive(Debug)]
pub struct BpfObject {
    /// Names the object in errors and output (a path, or `binary!object@0x1234`).
    pub name: String,
    data: Arc<[u8]>,
    pub sections: Vec<Section>,
    pub programs: Vec<Program>,
    /// The object's own types; `None` when it has no `.BTF` (then it has no CO-RE).
    pub btf: Option<Btf>,
    pub ext: Option<BtfExt>,
    /// In symbol table order.
    pub externs: Vec<ElfExtern>,
    /// Relocations of executable sections against a symbol in an executable section
    /// (subprogram calls and callback addresses): (section index, byte offset of the
    /// instruction) -> (the symbol's section index, its value).
    code_relocs: std::collections::HashMap<(usize, u64), (usize, u64)>,
    /// For an object embedded in a tool's binary: whether the tool ever attaches programs
    /// by their section names ([`crate::host::calls_skeleton_attach`]); `None` for a plain
    /// object, or when the binary's code does not tell. Set by whoever found the object.
    pub host_attaches_by_section: Option<bool>,
    /// The function pointers set in `.struct_ops`, in relocation order.
    pub struct_ops: Vec<StructOpsSlot>,
    /// Relocations of executable sections against a symbol defined in a data section
    /// (`ld_imm64` of a global's or a map's address): (section index, byte offset of the
    /// instruction) -> (the symbol's section index, its value).
    data_relocs: std::collections::HashMap<(usize, u64), (usize, u64)>,
}

/// Where an `ld_imm64` points once libbpf has relocated it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataRef {
    /// Into a read-only data section (`.rodata`, `.rodata.*`: a `const` global), at this
    /// byte offset of it: libbpf freezes that map, so the verifier reads such a load as
    /// the constant the object holds.
    ReadOnly { section: usize, offset: u64 },
    /// Into any other data (a map, `.data`, `.bss`): not a constant.
    Other,
}

impl BpfObject {
    /// Parses `data` as a BPF object; `name` names it in errors.
    pub fn parse(name: impl Into<String>, data: impl Into<Arc<[u8]>>) -> Result<BpfObject, ObjectError> {
        let name = name.into();
        let data: Arc<[u8]> = data.into();
        let err = |offset: u64, what: String| ObjectError { file: name.clone(), offset, what };
        let file = object::File::parse(&*data).map_err(|e| err(0, format!("not an ELF object: {e}")))?;
        if data.len() >= 20 && u16::from_le_bytes([data[18], data[19]]) != EM_BPF {
            let m = u16::from_le_bytes([data[18], data[19]]);
            return Err(err(18, format!("ELF machine {m}, not BPF ({EM_BPF})")));
        }
        if !file.is_little_endian() {
            return Err(err(5, "big-endian BPF objects are not supported".into()));
        }
        let mut sections = Vec::new();
        let mut btf_bytes = None;
        let mut ext_bytes = None;
        for s in file.sections() {
            let sname = s.name_bytes().map(|n| String::from_utf8_lossy(n).into_owned()).unwrap_or_default();
            let executable = matches!(s.flags(), SectionFlags::Elf { sh_flags } if sh_flags & SHF_EXECINSTR != 0);
            let file_range = if s.kind() == SectionKind::UninitializedData { None } else { s.file_range() };
            if let Some((off, size)) = file_range {
                if off.checked_add(size).is_none_or(|end| end > data.len() as u64) {
                    return Err(err(off, format!("section `{sname}` ({size} bytes) runs past the end of the file")));
                }
            }
            match sname.as_str() {
                ".BTF" => btf_bytes = file_range,
                ".BTF.ext" => ext_bytes = file_range,
                _ => {}
            }
            sections.push(Section { index: s.index().0, name: sname, executable, file_range });
        }
        let btf = match btf_bytes {
            Some((off, size)) => {
                let bytes = data[off as usize..(off + size) as usize].to_vec();
                Some(Btf::parse(format!("{name} .BTF"), bytes).map_err(|e| err(off, format!("bad .BTF: {e}")))?)
            }
            None => None,
        };
        let ext = match (ext_bytes, &btf) {
            (Some((off, size)), Some(btf)) => {
                let bytes = &data[off as usize..(off + size) as usize];
                let mut ext = BtfExt::parse(bytes)
                    .map_err(|e| err(off + e.offset as u64, format!("bad .BTF.ext: {}", e.what)))?;
                ext.name_sections(|o| btf.string(StrOffset(o)).ok().map(str::to_owned));
                Some(ext)
            }
            (Some((off, _)), None) => return Err(err(off, ".BTF.ext without .BTF".into())),
            _ => None,
        };
        let mut programs = Vec::new();
        for sym in file.symbols() {
            if sym.kind() != SymbolKind::Text {
                continue;
            }
            let Some(idx) = sym.section_index() else { continue };
            let Some(sec) = sections.iter().find(|s| s.index == idx.0 && s.executable) else { continue };
            let pname = sym.name().unwrap_or("").to_owned();
            if pname.is_empty() {
                continue;
            }
            let def = if sec.name == ".text" { None } else { SectionDef::find(&sec.name) };
            programs.push(Program {
                name: pname,
                section: sec.name.clone(),
                section_index: sec.index,
                offset: sym.address(),
                size: sym.size(),
                def,
                local: sym.is_local(),
            });
        }
        programs.sort_by_key(|p| (p.section_index, p.offset));
        let mut externs = Vec::new();
        let mut extern_of = std::collections::HashMap::new();
        for sym in file.symbols() {
            let is_extern =
                sym.is_undefined() && (sym.is_global() || sym.is_weak()) && sym.kind() == SymbolKind::Unknown;
            let ename = sym.name().unwrap_or("");
            if !is_extern || ename.is_empty() {
                continue;
            }
            extern_of.insert(sym.index().0, externs.len());
            externs.push(ElfExtern { name: ename.to_owned(), weak: sym.is_weak(), uses: Vec::new() });
        }
        let mut struct_ops = Vec::new();
        if let Some(ops) = file.section_by_name(".struct_ops") {
            let vars: Vec<(u64, u64, String)> = file
                .symbols()
                .filter(|v| v.section_index() == Some(ops.index()) && v.kind() == SymbolKind::Data)
                .map(|v| (v.address(), v.size(), v.name().unwrap_or("").to_owned()))
                .collect();
            for (off, rel) in ops.relocations() {
                let RelocationTarget::Symbol(i) = rel.target() else { continue };
                let Ok(sym) = file.symbol_by_index(i) else { continue };
                let Some(t) = sym.section_index() else { continue };
                let map = vars.iter().find(|(at, size, _)| off >= *at && off < at.saturating_add(*size));
                struct_ops.push(StructOpsSlot {
                    map: map.map(|(_, _, n)| n.clone()),
                    offset: off,
                    function: sym.name().unwrap_or("").to_owned(),
                    section_index: t.0,
                    value: sym.address(),
                });
            }
        }
        let mut code_relocs = std::collections::HashMap::new();
        let mut data_relocs = std::collections::HashMap::new();
        for s in file.sections() {
            let Some(sec) = sections.iter().find(|x| x.index == s.index().0 && x.executable) else { continue };
            for (off, rel) in s.relocations() {
                let RelocationTarget::Symbol(i) = rel.target() else { continue };
                if let Some(&e) = extern_of.get(&i.0) {
                    let Ok(off) = u32::try_from(off) else { continue };
                    externs[e].uses.push((sec.name.clone(), off));
                } else if let Ok(sym) = file.symbol_by_index(i) {
                    let in_code = sym
                        .section_index()
                        .and_then(|t| sections.iter().find(|x| x.index == t.0 && x.executable))
                        .map(|t| t.index);
                    if let Some(t) = in_code {
                        code_relocs.insert((sec.index, off), (t, sym.address()));
                    } else if let Some(t) = sym.section_index() {
                        data_relocs.insert((sec.index, off), (t.0, sym.address()));
                    }
                }
            }
        }
        Ok(BpfObject {
            name,
            data,
            sections,
            programs,
            btf,
            ext,
            externs,
            code_relocs,
            data_relocs,
            host_attaches_by_section: None,
            struct_ops,
        })
    }

    /// The raw bytes of the object.
    pub fn bytes(&self) -> &[u8] {
        &self.data
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The section's bytes (empty for NOBITS).
    pub fn section_data(&self, s: &Section) -> &[u8] {
        match s.file_range {
            // In bounds: checked at parse time.
            Some((off, size)) => &self.data[off as usize..(off + size) as usize],
            None => &[],
        }
    }

    /// What the `ld_imm64` at `insn_off` of section `section_index` (its first half
    /// `insn`) points at, when the ELF relocates it against a defined data symbol.
    pub fn data_ref(&self, section_index: usize, insn_off: u64, insn: &Insn) -> Option<DataRef> {
        let &(target, value) = self.data_relocs.get(&(section_index, insn_off))?;
        let sec = self.sections.iter().find(|s| s.index == target)?;
        let read_only = sec.name == ".rodata" || sec.name.starts_with(".rodata.");
        // libbpf: the offset into the map value is the symbol's value plus the immediate.
        let offset = value.checked_add_signed(i64::from(insn.imm));
        Some(match offset {
            Some(offset) if read_only => DataRef::ReadOnly { section: target, offset },
            _ => DataRef::Other,
        })
    }

    /// `size` bytes (1, 2, 4 or 8) at `offset` of section `section_index`, little-endian;
    /// `None` past its data (NOBITS has none).
    pub fn read_data(&self, section_index: usize, offset: i64, size: u32) -> Option<u64> {
        let sec = self.sections.iter().find(|s| s.index == section_index)?;
        let data = self.section_data(sec);
        let at = usize::try_from(offset).ok()?;
        let bytes = data.get(at..at.checked_add(size as usize)?)?;
        Some(bytes.iter().rev().fold(0u64, |v, &b| v << 8 | u64::from(b)))
    }

    /// The 8-byte instruction at `insn_off` of section `name`, and the one after it (for
    /// `ld_imm64`), when they are there.
    pub fn insn(&self, section: &str, insn_off: u32) -> Option<(Insn, Option<Insn>)> {
        let data = self.section_data(self.section(section)?);
        let at = usize::try_from(insn_off).ok()?;
        let first = Insn::read(data.get(at..at.checked_add(8)?)?)?;
        let second = data.get(at + 8..at + 16).and_then(Insn::read);
        Some((first, second))
    }

    /// Per program (index in [`Self::programs`]), whether libbpf ever loads its code: an
    /// entry program (its section names a program type) always; a subprogram only when
    /// an entry program calls it or takes its address (a callback), directly or through
    /// other subprograms, as `bpf_object__reloc_code` appends it.
    pub fn loaded_programs(&self) -> Vec<bool> {
        self.reached(self.programs.iter().map(|p| p.def.is_some()).collect())
    }

    /// Per program, whether its code is part of what the kernel verifies for entry
    /// program `entry` (index in [`Self::programs`]): the entry itself and the subprograms
    /// it calls or takes the address of, directly or through others. A subprogram's
    /// failure refuses each entry program that reaches it.
    pub fn reached_from(&self, entry: usize) -> Vec<bool> {
        self.reached((0..self.programs.len()).map(|i| i == entry).collect())
    }

    /// `used` and every program its programs call or take the address of.
    fn reached(&self, mut used: Vec<bool>) -> Vec<bool> {
        let mut work: Vec<usize> = (0..self.programs.len()).filter(|&i| used[i]).collect();
        while let Some(i) = work.pop() {
            let p = &self.programs[i];
            let Some(sec) = self.sections.iter().find(|s| s.index == p.section_index) else { continue };
            let data = self.section_data(sec);
            let start = usize::try_from(p.offset).unwrap_or(usize::MAX);
            let end = usize::try_from(p.offset.saturating_add(p.size)).unwrap_or(usize::MAX).min(data.len());
            let Some(code) = data.get(start..end) else { continue };
            for (n, raw) in code.chunks_exact(8).enumerate() {
                let Some(insn) = Insn::read(raw) else { continue };
                let off = p.offset + 8 * n as u64;
                // BPF_JMP|BPF_CALL with BPF_PSEUDO_CALL; BPF_LD|BPF_IMM|BPF_DW with BPF_PSEUDO_FUNC.
                let call = insn.code == 0x85 && insn.src == 1;
                let func = insn.code == 0x18 && insn.src == 2;
                if !call && !func {
                    continue;
                }
                let imm = i64::from(insn.imm);
                let target = match self.code_relocs.get(&(p.section_index, off)) {
                    Some(&(tsec, value)) if call => (tsec, (value as i64 / 8 + imm + 1) * 8),
                    Some(&(tsec, value)) => (tsec, (value as i64 + imm) / 8 * 8),
                    None => (p.section_index, (off as i64 / 8 + imm + 1) * 8),
                };
                let Ok(toff) = u64::try_from(target.1) else { continue };
                let hit = self.programs.iter().position(|q| {
                    q.section_index == target.0 && toff >= q.offset && toff < q.offset.saturating_add(q.size.max(1))
                });
                if let Some(j) = hit.filter(|&j| !used[j]) {
                    used[j] = true;
                    work.push(j);
                }
            }
        }
        used
    }

    /// The program a section offset belongs to (`find_prog_by_sec_insn`).
    pub fn program_at(&self, section: &str, insn_off: u64) -> Option<&Program> {
        self.programs
            .iter()
            .filter(|p| p.section == section)
            .find(|p| insn_off >= p.offset && insn_off < p.offset.saturating_add(p.size.max(1)))
    }

    /// The source position line_info gives the instruction at `insn_off` of `section`:
    /// the record at that offset, else the last one before it (records of line 0, which
    /// clang emits for code of no particular line, are passed over).
    pub fn source(&self, section: &str, insn_off: u32) -> Option<SourcePos> {
        let (ext, btf) = (self.ext.as_ref()?, self.btf.as_ref()?);
        let sec = ext.line_info.iter().find(|s| s.name.as_deref() == Some(section))?;
        let rec: &LineInfo =
            sec.records.iter().filter(|r| r.insn_off <= insn_off && r.line() != 0).max_by_key(|r| r.insn_off)?;
        Some(SourcePos {
            file: btf.string(StrOffset(rec.file_name_off)).ok()?.to_owned(),
            line: rec.line(),
            column: rec.column(),
        })
    }

    /// The source position of the first line_info record after `insn_off` in `section`
    /// (of a line other than 0) within the same program: where the code an instruction was
    /// scheduled ahead of begins (clang hoists a CO-RE offset load above the line record
    /// of its access).
    pub fn source_after(&self, section: &str, insn_off: u32) -> Option<SourcePos> {
        let (ext, btf) = (self.ext.as_ref()?, self.btf.as_ref()?);
        let sec = ext.line_info.iter().find(|s| s.name.as_deref() == Some(section))?;
        let rec: &LineInfo =
            sec.records.iter().filter(|r| r.insn_off > insn_off && r.line() != 0).min_by_key(|r| r.insn_off)?;
        let program = |off: u32| self.program_at(section, u64::from(off)).map(|p| p.offset);
        if program(rec.insn_off) != program(insn_off) {
            return None; // another program's code
        }
        Some(SourcePos {
            file: btf.string(StrOffset(rec.file_name_off)).ok()?.to_owned(),
            line: rec.line(),
            column: rec.column(),
        })
    }
}

/// One BPF instruction (`struct bpf_insn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Insn {
    pub code: u8,
    pub dst: u8,
    pub src: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    pub(crate) fn read(b: &[u8]) -> Option<Insn> {
        let b: &[u8; 8] = b.get(..8)?.try_into().ok()?;
        Some(Insn {
            code: b[0],
            dst: b[1] & 0x0f,
            src: b[1] >> 4,
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        })
    }
    pub fn class(&self) -> u8 {
        self.code & 0x07
    }
    pub fn is_ldimm64(&self) -> bool {
        self.code == 0x18
    }
    /// Bytes a load/store moves (`BPF_SIZE`).
    pub fn mem_size(&self) -> Option<u32> {
        match self.code & 0x18 {
            0x18 => Some(8),
            0x00 => Some(4),
            0x08 => Some(2),
            0x10 => Some(1),
            _ => None,
        }
    }
}

/// BPF objects embedded in another file (a libbpf skeleton keeps the whole object as a
/// byte array in the tool's binary): `(offset, bytes)` of each 64-bit little-endian ELF
/// with `e_machine` EM_BPF, cut at the end of its section header table.
pub fn embedded(data: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut at = 1;
    while let Some(pos) = data.get(at..).and_then(|d| d.windows(4).position(|w| w == b"\x7fELF")) {
        let off = at + pos;
        at = off + 4;
        let Some(h) = data.get(off..off + 64) else { break };
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        if h[4] != 2 || h[5] != 1 || u16_at(18) != EM_BPF {
            continue;
        }
        let shoff = u64::from_le_bytes([h[40], h[41], h[42], h[43], h[44], h[45], h[46], h[47]]);
        let end = shoff.checked_add(u64::from(u16_at(58)) * u64::from(u16_at(60)));
        let Some(end) = end.and_then(|e| usize::try_from(e).ok()).filter(|&e| e >= 64 && off + e <= data.len()) else {
            continue;
        };
        out.push((off, &data[off..off + end]));
        at = off + end;
    }
    out
}
