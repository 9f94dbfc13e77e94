//! A real kernel behind [`fevlint_mainline::Env`], for tests: the fixtures' BTF,
//! System.map and ftrace list (`fixtures/kernels/*`), read with a small BTF reader that
//! answers exactly what `trace_btf.c` answers (`btf_find_func_proto`,
//! `btf_type_skip_modifiers`, `btf_find_struct_member` with its anonymous stack).
//!
//! The checker crate will implement `Env` over fevlint-kernel; this one exists so the
//! parser's kernel-dependent branches are tested against real data, not a fake.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::PathBuf;

use fevlint_mainline::{Btf, BtfKind, BtfMember, BtfProto, Env, FuncEntry};

pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../fixtures/kernels")
}

fn read_zst(path: &PathBuf) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    zstd::decode_all(raw.as_slice()).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

struct Type {
    kind: u32,
    name: u32,
    vlen: u32,
    kflag: bool,
    size_type: u32,
    /// INT encoding word, or the member/param records (name, type, offset).
    int: u32,
    members: Vec<(u32, u32, u32)>,
    /// Offset of the record in `raw` (for `btf_type_int`, which reads the 4 bytes after
    /// any record's header, whatever its kind).
    raw_off: usize,
}

pub struct KernelBtf {
    raw: Vec<u8>,
    strings: Vec<u8>,
    types: Vec<Type>, // index = id; 0 = void
    funcs: HashMap<String, u32>,
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

impl KernelBtf {
    pub fn parse(b: &[u8]) -> KernelBtf {
        assert_eq!(&b[..2], &[0x9f, 0xeb], "BTF magic");
        let hdr_len = u32_at(b, 4) as usize;
        let type_off = u32_at(b, 8) as usize;
        let type_len = u32_at(b, 12) as usize;
        let str_off = u32_at(b, 16) as usize;
        let str_len = u32_at(b, 20) as usize;
        let strings = b[hdr_len + str_off..hdr_len + str_off + str_len].to_vec();
        let tb = &b[hdr_len + type_off..hdr_len + type_off + type_len];
        let mut types = vec![Type {
            kind: 0,
            name: 0,
            vlen: 0,
            kflag: false,
            size_type: 0,
            int: 0,
            members: Vec::new(),
            raw_off: 0,
        }];
        let mut o = 0;
        while o < tb.len() {
            let raw_off = o;
            let name = u32_at(tb, o);
            let info = u32_at(tb, o + 4);
            let size_type = u32_at(tb, o + 8);
            o += 12;
            let kind = (info >> 24) & 0x1f;
            let vlen = info & 0xffff;
            let kflag = info >> 31 == 1;
            let mut t = Type { kind, name, vlen, kflag, size_type, int: 0, members: Vec::new(), raw_off };
            match kind {
                1 => {
                    t.int = u32_at(tb, o);
                    o += 4;
                }
                3 => {
                    t.int = u32_at(tb, o); // the element type
                    o += 12;
                }
                4 | 5 => {
                    for _ in 0..vlen {
                        t.members.push((u32_at(tb, o), u32_at(tb, o + 4), u32_at(tb, o + 8)));
                        o += 12;
                    }
                }
                6 => o += 8 * vlen as usize,
                13 => {
                    for _ in 0..vlen {
                        t.members.push((u32_at(tb, o), u32_at(tb, o + 4), 0));
                        o += 8;
                    }
                }
                14 => o += 4,
                15 => o += 12 * vlen as usize,
                17 => o += 4,
                19 => o += 12 * vlen as usize,
                _ => {}
            }
            types.push(t);
        }
        let mut k = KernelBtf { raw: tb.to_vec(), strings, types, funcs: HashMap::new() };
        for id in 1..k.types.len() {
            if k.types[id].kind == 12 {
                let n = k.name(k.types[id].name).to_owned();
                k.funcs.entry(n).or_insert(id as u32);
            }
        }
        k
    }

    fn name(&self, off: u32) -> &str {
        let s = &self.strings[off as usize..];
        let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
        std::str::from_utf8(&s[..end]).unwrap_or("")
    }

    fn skip_modifiers(&self, mut id: u32) -> Option<u32> {
        loop {
            let t = self.types.get(id as usize)?;
            match t.kind {
                8..=11 | 18 => id = t.size_type,
                _ => return Some(id),
            }
        }
    }

    fn is_struct(&self, id: u32) -> bool {
        matches!(self.types.get(id as usize).map(|t| t.kind), Some(4 | 5))
    }
}

impl Btf for KernelBtf {
    fn func_proto(&self, name: &str) -> Option<BtfProto> {
        let id = *self.funcs.get(name)?;
        let proto = self.types.get(self.types[id as usize].size_type as usize)?;
        if proto.kind != 13 {
            return None;
        }
        Some(BtfProto {
            ret: proto.size_type,
            params: proto.members.iter().map(|&(n, t, _)| (self.name(n).to_owned(), t)).collect(),
        })
    }

    fn resolve(&self, id: u32) -> Option<(u32, BtfKind)> {
        let rid = self.skip_modifiers(id)?;
        let t = &self.types[rid as usize];
        let kind = match t.kind {
            0 => BtfKind::Void,
            1 => BtfKind::Int { bits: t.int & 0xff, signed: (t.int >> 24) & 1 == 1, offset: (t.int >> 16) & 0xff },
            2 => BtfKind::Ptr { target: t.size_type },
            4 => BtfKind::Struct,
            5 => BtfKind::Union,
            6 => BtfKind::Enum,
            19 => BtfKind::Enum64,
            _ => BtfKind::Other,
        };
        Some((rid, kind))
    }

    fn member(&self, struct_id: u32, name: &str) -> Result<Option<BtfMember>, ()> {
        if !self.is_struct(struct_id) {
            return Err(());
        }
        let mut stack: Vec<(u32, u32)> = Vec::new();
        let mut cur = struct_id;
        let mut cur_off = 0u32;
        loop {
            let t = &self.types[cur as usize];
            let bitoff = |off: u32| if t.kflag { off & 0xff_ffff } else { off };
            for &(n, ty, off) in &t.members {
                if n == 0 {
                    if let Some(mid) = self.skip_modifiers(ty) {
                        if self.is_struct(mid) && stack.len() < 16 {
                            stack.push((mid, cur_off + bitoff(off)));
                        }
                    }
                } else if self.name(n) == name {
                    let (bit_offset, bitfield_size) = if t.kflag { (off & 0xff_ffff, off >> 24) } else { (off, 0) };
                    return Ok(Some(BtfMember { bit_offset: cur_off + bit_offset, bitfield_size, type_id: ty }));
                }
            }
            match stack.pop() {
                Some((id, off)) => {
                    cur = id;
                    cur_off = off;
                }
                None => return Ok(None),
            }
        }
    }

    /// As trace_probe.c's: `type->type` is read whatever the kind (for an INT it is
    /// its size), and the target must be an unsigned 8-bit INT.
    fn is_char_ptr(&self, id: u32) -> bool {
        let Some(t) = self.types.get(id as usize) else {
            return false;
        };
        match self.skip_modifiers(t.size_type).and_then(|r| self.types.get(r as usize)) {
            Some(r) if r.kind == 1 => {
                let enc = r.int;
                (enc >> 24) & 1 == 0 && (enc & 0xff) == 8
            }
            _ => false,
        }
    }

    /// As trace_probe.c's: no INT check on the element; `btf_type_int` reads the 4
    /// bytes after the element's header.
    fn is_char_array(&self, id: u32) -> bool {
        let Some(t) = self.types.get(id as usize) else {
            return false;
        };
        if t.kind != 3 {
            return false;
        }
        let Some(rid) = self.skip_modifiers(t.int) else {
            return false;
        };
        let enc = if rid == 0 {
            0 // void: the kernel's static btf_void is followed by zeroes
        } else {
            u32_at(&self.raw, self.types[rid as usize].raw_off + 12)
        };
        (enc >> 24) & 1 == 0 && (enc & 0xff) == 8
    }
}

/// One fixture kernel as an [`Env`].
pub struct FixtureKernel {
    /// x86 IBT (CONFIG_X86_KERNEL_IBT): functions start with ENDBR64 and
    /// `kprobe_on_func_entry` also takes offset 4 as the entry.
    pub ibt: bool,
    pub symbols: HashMap<String, u32>,
    pub ftrace: HashMap<String, u32>,
    /// Lines of available_filter_functions (ftrace's records).
    pub ftrace_records: u64,
    pub btf: Option<KernelBtf>,
}

impl FixtureKernel {
    pub fn load(dir: &str) -> FixtureKernel {
        let d = fixtures().join(dir);
        let mut symbols = HashMap::new();
        for line in String::from_utf8_lossy(&read_zst(&d.join("System.map.zst"))).lines() {
            if let Some(name) = line.split_whitespace().nth(2) {
                *symbols.entry(name.to_owned()).or_insert(0) += 1;
            }
        }
        let mut ftrace = HashMap::new();
        let mut ftrace_records = 0;
        for line in String::from_utf8_lossy(&read_zst(&d.join("available_filter_functions.zst"))).lines() {
            *ftrace.entry(line.trim().to_owned()).or_insert(0) += 1;
            ftrace_records += 1;
        }
        let btf_path = d.join("vmlinux.btf.zst");
        let btf = btf_path.exists().then(|| KernelBtf::parse(&read_zst(&btf_path)));
        let config = String::from_utf8_lossy(&read_zst(&d.join("config.zst"))).into_owned();
        FixtureKernel {
            ibt: config.lines().any(|l| l == "CONFIG_X86_KERNEL_IBT=y"),
            symbols,
            ftrace,
            ftrace_records,
            btf,
        }
    }
}

impl Env for FixtureKernel {
    fn func_entry(&self, symbol: &str, offset: u64) -> Option<FuncEntry> {
        if symbol.contains(':') {
            return None;
        }
        if !self.symbols.contains_key(symbol) {
            return Some(FuncEntry::NoSymbol);
        }
        // arch_adjust_kprobe_addr: offset 0, or 4 past an ENDBR64 (assumed present
        // on IBT kernels; this fixture has no code bytes to look at).
        Some(if offset == 0 || (self.ibt && offset == 4) { FuncEntry::Entry } else { FuncEntry::NotEntry })
    }

    fn symbol_count(&self, symbol: &str) -> Option<u32> {
        if symbol.contains(':') {
            return None;
        }
        Some(self.symbols.get(symbol).copied().unwrap_or(0))
    }

    fn tracepoint(&self, name: &str) -> Option<Option<String>> {
        let btf = self.btf.as_ref()?;
        let stub = format!("__probestub_{name}");
        Some(btf.funcs.contains_key(&stub).then_some(stub))
    }

    fn data_symbol(&self, name: &str) -> Option<bool> {
        Some(self.symbols.contains_key(name))
    }

    fn ftrace_target(&self, symbol: &str) -> Option<bool> {
        if symbol.contains('*') {
            return None;
        }
        // A leading digit is an index into ftrace's records (`add_rec_by_index`).
        if symbol.starts_with(|c: char| c.is_ascii_digit()) {
            let index = match symbol.strip_prefix("0x") {
                Some(h) => u64::from_str_radix(h, 16).ok(),
                None => symbol.parse().ok(),
            };
            return Some(index.is_some_and(|i| i >= 1 && i <= self.ftrace_records));
        }
        Some(self.ftrace.contains_key(symbol))
    }

    fn btf(&self) -> Option<&dyn Btf> {
        self.btf.as_ref().map(|b| b as &dyn Btf)
    }
}
