//! An ELF vmlinux as fevlint needs it: architecture, build-id, the `.BTF` bytes
//! (zero-copy), which DWARF sections exist, the `.symtab`, and the ftrace call-site
//! table (`__mcount_loc`) named by symbol.
//!
//! Debian's `-dbg` vmlinux carries `.rela.debug_*` sections (from `--emit-relocs`);
//! its debug sections are already relocated, so those relocations must never be
//! applied. This module only reports that they exist.

use std::ops::Range;
use std::path::{Path, PathBuf};

use object::elf;
use object::read::elf::{FileHeader, SectionHeader, Sym};
use object::Endianness;

use crate::blob::{Blob, BlobSlice};
use crate::error::{FileOffset, LoadError};
use crate::symbols::{RawSymbol, Symbol, SymbolTable, VirtAddr};
use fevlint_types::Arch;

/// One section header, with its bytes' place in the file (`None` for `SHT_NOBITS`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionInfo {
    pub name: String,
    pub addr: VirtAddr,
    pub size: u64,
    pub file_range: Option<Range<usize>>,
    pub flags: u64,
}

/// A parsed ELF kernel image. Holds the file's bytes (owned or mapped).
pub struct KernelElf {
    path: PathBuf,
    data: Blob,
    arch: Arch,
    e_type: u16,
    build_id: Option<Vec<u8>>,
    sections: Vec<SectionInfo>,
    /// Read on first use ([`KernelElf::symbols`]).
    symbols: std::sync::OnceLock<Option<SymbolTable>>,
    class64: bool,
}

impl std::fmt::Debug for KernelElf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KernelElf")
            .field("path", &self.path)
            .field("arch", &self.arch)
            .field("build_id", &self.build_id_hex())
            .field("sections", &self.sections.len())
            .field("symbols", &self.symbols.get().map(|s| s.as_ref().map(SymbolTable::len)))
            .finish()
    }
}

/// Whether `data` starts with the ELF magic.
pub fn is_elf(data: &[u8]) -> bool {
    data.starts_with(b"\x7fELF")
}

/// The result of reading the `__mcount_loc` table.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FtraceSites {
    /// Entries in the table, zeros included.
    pub entries: usize,
    /// Zero entries, skipped as `ftrace_process_locs()` does (overridden weak functions
    /// on builds that zero them).
    pub zero: usize,
    /// Entries in `__init_begin..__init_end`, dropped: the kernel frees them after boot.
    pub init_dropped: usize,
    /// The remaining call sites, in table order.
    pub sites: Vec<VirtAddr>,
}

impl KernelElf {
    /// Parses the ELF headers, sections, notes and symbols of `data`.
    pub fn parse(data: Blob, path: &Path) -> Result<KernelElf, LoadError> {
        let err = |message: String, offset: Option<u64>| LoadError::Elf {
            path: path.to_owned(),
            offset: offset.map(FileOffset),
            message,
        };
        if !is_elf(&data) {
            return Err(err("no ELF magic".into(), Some(0)));
        }
        let parsed = match data.get(4) {
            Some(&elf::ELFCLASS64) => parse_generic::<elf::FileHeader64<Endianness>>(&data),
            Some(&elf::ELFCLASS32) => parse_generic::<elf::FileHeader32<Endianness>>(&data),
            other => return Err(err(format!("bad ELF class {other:?}"), Some(4))),
        }
        .map_err(|(m, o)| err(m, o))?;
        let arch = match (parsed.machine, parsed.class64) {
            (elf::EM_X86_64, true) => Arch::X86_64,
            (elf::EM_386, false) => Arch::X86_32,
            (m, c) => {
                return Err(err(
                    format!("e_machine {m} ({}-bit) is not an x86 kernel", if c { 64 } else { 32 }),
                    Some(0x12),
                ))
            }
        };
        Ok(KernelElf {
            path: path.to_owned(),
            data,
            arch,
            e_type: parsed.e_type,
            build_id: parsed.build_id,
            sections: parsed.sections,
            class64: parsed.class64,
            symbols: std::sync::OnceLock::new(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn arch(&self) -> Arch {
        self.arch
    }

    /// The whole file.
    pub fn data(&self) -> &Blob {
        &self.data
    }

    /// The GNU build-id note (`.notes` in a vmlinux, `.note.gnu.build-id` elsewhere).
    pub fn build_id(&self) -> Option<&[u8]> {
        self.build_id.as_deref()
    }

    pub fn build_id_hex(&self) -> Option<String> {
        self.build_id.as_ref().map(|b| b.iter().map(|x| format!("{x:02x}")).collect())
    }

    pub fn sections(&self) -> &[SectionInfo] {
        &self.sections
    }

    pub fn section(&self, name: &str) -> Option<&SectionInfo> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// A section's bytes, zero-copy. `None` if absent or `SHT_NOBITS`.
    pub fn section_data(&self, name: &str) -> Option<BlobSlice> {
        let range = self.section(name)?.file_range.clone()?;
        self.data.slice(range)
    }

    /// The raw BTF blob (the `.BTF` section), zero-copy.
    pub fn btf(&self) -> Option<BlobSlice> {
        self.section_data(".BTF")
    }

    /// The DWARF sections present (`.debug_info`, `.debug_abbrev`, ...).
    pub fn dwarf_sections(&self) -> Vec<&str> {
        self.sections
            .iter()
            .filter(|s| s.name.starts_with(".debug_") || s.name.starts_with(".zdebug_"))
            .map(|s| s.name.as_str())
            .collect()
    }

    /// Whether this ELF can be a kernel's: it carries types (`.BTF`, `.debug_info`), or
    /// what only a kernel (or a module) has: the export, exception or mcount tables,
    /// per-CPU data, init text, or the `linux_banner` symbol. A user program has none of
    /// these, and opened as a kernel it would only yield a page of "unknown function".
    pub fn could_be_kernel(&self) -> bool {
        const KERNEL_SECTIONS: &[&str] = &[
            ".BTF",
            ".debug_info",
            "__ksymtab",
            "__ksymtab_gpl",
            "__ex_table",
            "__mcount_loc",
            ".data..percpu",
            ".init.text",
            ".modinfo",
        ];
        KERNEL_SECTIONS.iter().any(|n| self.section(n).is_some())
            || self.symbols_named("linux_banner").is_some_and(|v| !v.is_empty())
    }

    /// What kind of ELF this is, for a refusal: "an ELF executable for x86-64".
    pub fn describe(&self) -> String {
        let kind = match self.e_type {
            elf::ET_REL => "an ELF object file",
            elf::ET_EXEC => "an ELF executable",
            elf::ET_DYN => "an ELF shared object or position-independent executable",
            elf::ET_CORE => "an ELF core dump",
            _ => "an ELF file",
        };
        let arch = match self.arch {
            Arch::X86_64 => "x86-64",
            Arch::X86_32 => "i386",
        };
        format!("{kind} for {arch}")
    }

    pub fn has_dwarf(&self) -> bool {
        self.section(".debug_info").is_some()
    }

    /// Whether `.rela.debug_*` sections exist (Debian `-dbg`, `--emit-relocs`). The debug
    /// sections are already relocated: a DWARF reader must not apply these.
    pub fn has_debug_relocations(&self) -> bool {
        self.sections.iter().any(|s| s.name.starts_with(".rela.debug_"))
    }

    /// The `.symtab`, if the image is not stripped.
    pub fn symbols(&self) -> Option<&SymbolTable> {
        self.symbols
            .get_or_init(|| {
                let r = if self.class64 {
                    symbols_generic::<elf::FileHeader64<Endianness>>(&self.data, &self.sections)
                } else {
                    symbols_generic::<elf::FileHeader32<Endianness>>(&self.data, &self.sections)
                };
                r.ok().flatten()
            })
            .as_ref()
    }

    /// The `.symtab` symbols called `name`, in table order: what
    /// `symbols()?.by_name(name)` gives, without building the table or its name order.
    /// The string table is searched for `name` followed by a NUL (memchr's `memmem`),
    /// and only symbols whose name offset is one of those places are decoded, so a
    /// vmlinux's 92k symbols cost one pass over two sections (about 1 ms) and no
    /// allocation per symbol. `None` if the image has no `.symtab`.
    pub fn symbols_named(&self, name: &str) -> Option<Vec<Symbol<'_>>> {
        let r = if self.class64 {
            symbols_named_generic::<elf::FileHeader64<Endianness>>(&self.data, &self.sections, name)
        } else {
            symbols_named_generic::<elf::FileHeader32<Endianness>>(&self.data, &self.sections, name)
        };
        r.ok().flatten()
    }

    /// The file bytes at virtual addresses `addr..addr+len`, if one allocated section
    /// with file contents covers them.
    pub fn read_virt(&self, addr: VirtAddr, len: u64) -> Option<&[u8]> {
        let end = addr.0.checked_add(len)?;
        let s = self.sections.iter().find(|s| {
            s.flags & u64::from(elf::SHF_ALLOC) != 0
                && s.file_range.is_some()
                && s.addr.0 <= addr.0
                && end <= s.addr.0.saturating_add(s.size)
        })?;
        let r = s.file_range.as_ref()?;
        let start = r.start.checked_add(usize::try_from(addr.0 - s.addr.0).ok()?)?;
        self.data.get(start..start.checked_add(usize::try_from(len).ok()?)?)
    }

    /// Reads the ftrace call-site table.
    ///
    /// Supported: a vmlinux, stripped or not, where `__start_mcount_loc` and
    /// `__stop_mcount_loc` come from `symbols` (System.map, kallsyms) or the ELF's own
    /// `.symtab`, and a linked executable with a `__mcount_loc` section (`gcc -pg
    /// -mfentry -mrecord-mcount`, non-PIE). Not supported: relocatable objects (`.o`),
    /// whose table entries are relocations against `.text`, and PIE executables, whose
    /// entries are dynamic relocations.
    ///
    /// Entries are absolute little-endian addresses (8 bytes on x86-64, 4 on i386);
    /// zeros are skipped and entries inside `__init_begin..__init_end` are dropped.
    pub fn ftrace_sites(&self, symbols: Option<&SymbolTable>) -> Result<FtraceSites, LoadError> {
        let err = |message: String, offset: Option<usize>| LoadError::Elf {
            path: self.path.clone(),
            offset: offset.map(|o| FileOffset(o as u64)),
            message,
        };
        let own = self.symbols();
        let find = |name: &str| symbols.and_then(|s| s.addr_of(name)).or_else(|| own.and_then(|s| s.addr_of(name)));
        let width = self.arch.pointer_size() as usize;
        let table: &[u8] = match (find("__start_mcount_loc"), find("__stop_mcount_loc")) {
            (Some(start), Some(stop)) => {
                if stop < start {
                    return Err(err(format!("__stop_mcount_loc {stop} < __start_mcount_loc {start}"), None));
                }
                self.read_virt(start, stop.0 - start.0).ok_or_else(|| {
                    err(format!("mcount table {start}..{stop} is not in any section with file contents"), None)
                })?
            }
            _ => match self.section("__mcount_loc") {
                Some(s) if self.e_type == elf::ET_REL => {
                    return Err(err(
                        format!(
                            "{} is a relocatable object: its __mcount_loc entries are relocations, not addresses",
                            self.path.display()
                        ),
                        s.file_range.as_ref().map(|r| r.start),
                    ))
                }
                Some(s) => {
                    let r = s.file_range.clone().ok_or_else(|| err("__mcount_loc has no contents".into(), None))?;
                    self.data
                        .get(r.clone())
                        .ok_or_else(|| err("__mcount_loc is past the end of the file".into(), Some(r.start)))?
                }
                None => return Err(err(
                    "no ftrace table: neither __start_mcount_loc/__stop_mcount_loc symbols nor a __mcount_loc section"
                        .into(),
                    None,
                )),
            },
        };
        let init = match (find("__init_begin"), find("__init_end")) {
            (Some(b), Some(e)) => b.0..e.0,
            _ => 0..0,
        };
        let mut out = FtraceSites { entries: table.len() / width, ..FtraceSites::default() };
        out.sites.reserve(out.entries);
        for chunk in table.chunks_exact(width) {
            let a = match width {
                8 => u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])),
                _ => u64::from(u32::from_le_bytes(chunk.try_into().unwrap_or([0; 4]))),
            };
            if a == 0 {
                out.zero += 1;
            } else if init.contains(&a) {
                out.init_dropped += 1;
            } else {
                out.sites.push(VirtAddr(a));
            }
        }
        Ok(out)
    }
}

/// Names ftrace call sites the way `available_filter_functions` does.
///
/// With `max_offset = Some(n)` (`FTRACE_MCOUNT_MAX_OFFSET`: 0, or 4 with
/// `CONFIG_X86_KERNEL_IBT`), the name is the kallsyms-preferred code symbol at or below
/// the site, and a site more than `n` bytes past it gives the kernel's
/// `__ftrace_invalid_address___<offset>` line. With `None`, the site is named by the
/// ELF function whose `[value, value+size)` contains it (needs symbol sizes), and a
/// site in no function is skipped.
pub fn ftrace_function_names(sites: &[VirtAddr], symbols: &SymbolTable, max_offset: Option<u64>) -> Vec<String> {
    let mut out = Vec::with_capacity(sites.len());
    for &site in sites {
        match max_offset {
            Some(max) => match symbols.lookup_text(site) {
                Some(s) if site.0 - s.addr.0 <= max => out.push(s.name.to_owned()),
                Some(s) => out.push(format!("{}{}", crate::symbols::FTRACE_INVALID_PREFIX, site.0 - s.addr.0)),
                None => {}
            },
            None => {
                if let Some(s) = symbols.containing(site) {
                    out.push(s.name.to_owned());
                }
            }
        }
    }
    out
}

struct Parsed {
    class64: bool,
    machine: u16,
    e_type: u16,
    build_id: Option<Vec<u8>>,
    sections: Vec<SectionInfo>,
}

type ParseResult<T> = Result<T, (String, Option<u64>)>;

fn parse_generic<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> ParseResult<Parsed> {
    let e = |m: object::Error| (m.to_string(), None);
    let header = Elf::parse(data).map_err(|m| (m.to_string(), Some(0)))?;
    let endian = header.endian().map_err(|m| (m.to_string(), Some(5)))?;
    if endian != Endianness::Little {
        return Err(("big-endian ELF is not an x86 kernel".into(), Some(5)));
    }
    let table = header.sections(endian, data).map_err(e)?;
    let mut sections = Vec::with_capacity(table.len().min(data.len() / 40));
    let mut build_id = None;
    for sh in table.iter() {
        let name = table.section_name(endian, sh).map_err(e)?;
        let name = String::from_utf8_lossy(name).into_owned();
        let file_range = if sh.sh_type(endian) == elf::SHT_NOBITS {
            None
        } else {
            let off: u64 = sh.sh_offset(endian).into();
            let size: u64 = sh.sh_size(endian).into();
            let end = off
                .checked_add(size)
                .filter(|&end| end <= data.len() as u64)
                .ok_or_else(|| (format!("section {name} ({off}+{size}) runs past the end of the file"), Some(off)))?;
            Some(off as usize..end as usize)
        };
        if build_id.is_none() && sh.sh_type(endian) == elf::SHT_NOTE {
            if let Some(mut notes) = sh.notes(endian, data).map_err(e)? {
                while let Some(note) = notes.next().map_err(e)? {
                    if note.name() == elf::ELF_NOTE_GNU && note.n_type(endian) == elf::NT_GNU_BUILD_ID {
                        build_id = Some(note.desc().to_vec());
                        break;
                    }
                }
            }
        }
        sections.push(SectionInfo {
            name,
            addr: VirtAddr(sh.sh_addr(endian).into()),
            size: sh.sh_size(endian).into(),
            file_range,
            flags: sh.sh_flags(endian).into(),
        });
    }
    Ok(Parsed {
        class64: header.is_class_64(),
        machine: header.e_machine(endian),
        e_type: header.e_type(endian),
        build_id,
        sections,
    })
}

/// The `.symtab` (read on first use: a vmlinux has ~100k symbols and most questions
/// need none of them).
fn symbols_generic<Elf: FileHeader<Endian = Endianness>>(
    data: &[u8],
    sections: &[SectionInfo],
) -> ParseResult<Option<SymbolTable>> {
    let e = |m: object::Error| (m.to_string(), None);
    let header = Elf::parse(data).map_err(|m| (m.to_string(), Some(0)))?;
    let endian = header.endian().map_err(|m| (m.to_string(), Some(5)))?;
    let table = header.sections(endian, data).map_err(e)?;
    let symtab = table.symbols(endian, data, elf::SHT_SYMTAB).map_err(e)?;
    let symbols = if symtab.is_empty() {
        None
    } else {
        let strings = symtab.strings();
        let mut raw = Vec::with_capacity(symtab.len());
        for sym in symtab.iter() {
            let st_type = sym.st_type();
            if matches!(st_type, elf::STT_SECTION | elf::STT_FILE) {
                continue;
            }
            let Ok(name) = sym.name(endian, strings) else {
                continue;
            };
            let Ok(name) = std::str::from_utf8(name) else {
                continue;
            };
            if name.is_empty() {
                continue;
            }
            let kind = nm_letter(sym, endian, sections);
            raw.push(RawSymbol {
                name,
                addr: sym.st_value(endian).into(),
                kind,
                size: Some(sym.st_size(endian).into()),
            });
        }
        Some(SymbolTable::from_raw(raw))
    };
    Ok(symbols)
}

/// The symbols called `name` (see [`KernelElf::symbols_named`]), filtered as
/// [`symbols_generic`] filters them.
fn symbols_named_generic<'d, Elf: FileHeader<Endian = Endianness>>(
    data: &'d [u8],
    sections: &[SectionInfo],
    name: &str,
) -> ParseResult<Option<Vec<Symbol<'d>>>> {
    let e = |m: object::Error| (m.to_string(), None);
    let header = Elf::parse(data).map_err(|m| (m.to_string(), Some(0)))?;
    let endian = header.endian().map_err(|m| (m.to_string(), Some(5)))?;
    let table = header.sections(endian, data).map_err(e)?;
    let symtab = table.symbols(endian, data, elf::SHT_SYMTAB).map_err(e)?;
    if symtab.is_empty() {
        return Ok(None);
    }
    let strings = table.section(symtab.string_section()).and_then(|s| s.data(endian, data)).map_err(e)?;
    if name.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut needle = Vec::with_capacity(name.len() + 1);
    needle.extend_from_slice(name.as_bytes());
    needle.push(0);
    // Every place the string table holds `name\0`, ascending: the linker may store a
    // name once, several times, or as the tail of a longer one ("vfs_read" inside
    // "__vfs_read"); a symbol is called `name` exactly when its offset is one of them.
    let at: Vec<u32> = memchr::memmem::find_iter(strings, &needle).filter_map(|p| u32::try_from(p).ok()).collect();
    if at.is_empty() {
        return Ok(Some(Vec::new()));
    }
    let mut out = Vec::new();
    for sym in symtab.symbols() {
        if at.binary_search(&sym.st_name(endian)).is_err() || matches!(sym.st_type(), elf::STT_SECTION | elf::STT_FILE)
        {
            continue;
        }
        // The name checked above is `name` itself; take it from the file so the
        // result borrows the image like a table lookup does.
        let Ok(Ok(found)) = sym.name(endian, symtab.strings()).map(std::str::from_utf8) else { continue };
        out.push(Symbol {
            name: found,
            addr: VirtAddr(sym.st_value(endian).into()),
            kind: nm_letter(sym, endian, sections),
            size: Some(sym.st_size(endian).into()),
            module: None,
        });
    }
    Ok(Some(out))
}

/// The letter `nm` prints for an ELF symbol.
fn nm_letter<S: Sym<Endian = Endianness>>(sym: &S, endian: Endianness, sections: &[SectionInfo]) -> u8 {
    let shndx = sym.st_shndx(endian);
    let bind = sym.st_bind();
    let lower = match shndx {
        elf::SHN_UNDEF => return if bind == elf::STB_WEAK { b'w' } else { b'U' },
        elf::SHN_ABS => b'a',
        elf::SHN_COMMON => return b'C',
        i => match sections.get(usize::from(i)) {
            Some(s) if s.flags & u64::from(elf::SHF_EXECINSTR) != 0 => b't',
            Some(s) if s.file_range.is_none() => b'b',
            Some(s) if s.flags & u64::from(elf::SHF_WRITE) != 0 => b'd',
            Some(_) => b'r',
            None => b'?',
        },
    };
    if bind == elf::STB_WEAK {
        return if lower == b't' { b'W' } else { b'V' };
    }
    if bind == elf::STB_GLOBAL {
        lower.to_ascii_uppercase()
    } else {
        lower
    }
}
