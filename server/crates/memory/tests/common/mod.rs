//! Writers of small synthetic dumps (compressed kdump, ELF cores) for the malformed-input
//! tests and the benchmark. The layouts follow makedumpfile's `diskdump_mod.h` and the ELF
//! core format; the real-dump tests check the reader against what makedumpfile and QEMU
//! actually write.
#![allow(dead_code)]

use std::collections::BTreeMap;

pub const BS: usize = 4096;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Raw,
    Zlib,
    Lzo,
    Snappy,
    Zstd,
}

impl Codec {
    fn flag(self) -> u32 {
        match self {
            Codec::Raw => 0,
            Codec::Zlib => 1,
            Codec::Lzo => 2,
            Codec::Snappy => 4,
            Codec::Zstd => 0x20,
        }
    }

    pub fn compress(self, page: &[u8]) -> Vec<u8> {
        match self {
            Codec::Raw => page.to_vec(),
            Codec::Zlib => {
                use std::io::Write;
                let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
                z.write_all(page).expect("zlib");
                z.finish().expect("zlib")
            }
            Codec::Lzo => lzokay::compress::compress(page).expect("lzo"),
            Codec::Snappy => snap::raw::Encoder::new().compress_vec(page).expect("snappy"),
            Codec::Zstd => zstd::bulk::compress(page, 1).expect("zstd"),
        }
    }
}

/// A compressed kdump file to write.
pub struct Kdump {
    pub version: i32,
    pub machine: &'static str,
    pub max_mapnr: u64,
    /// pfn -> page contents (BS bytes); pages in `ram` but not here are excluded.
    pub pages: BTreeMap<u64, Vec<u8>>,
    /// RAM page frames (the first bitmap); defaults to 0..max_mapnr.
    pub ram: Option<Vec<(u64, u64)>>,
    pub codec: Codec,
    pub vmcoreinfo: String,
    pub notes: Vec<u8>,
    pub phys_base: u64,
}

impl Kdump {
    pub fn new(max_mapnr: u64, codec: Codec) -> Kdump {
        Kdump {
            version: 6,
            machine: "x86_64",
            max_mapnr,
            pages: BTreeMap::new(),
            ram: None,
            codec,
            vmcoreinfo: String::new(),
            notes: Vec::new(),
            phys_base: 0,
        }
    }

    pub fn write(&self) -> Vec<u8> {
        let is64 = self.machine != "i386" && self.machine != "i686";
        let blocks = |n: usize| n.div_ceil(BS).max(1);
        let sub_len = 112 + self.vmcoreinfo.len() + self.notes.len();
        let sub_hdr_size = blocks(sub_len);
        let bitmap_half = blocks((self.max_mapnr as usize).div_ceil(8));
        let bitmap_blocks = 2 * bitmap_half;
        let mut out = vec![0u8; (1 + sub_hdr_size + bitmap_blocks) * BS];
        // disk_dump_header
        out[..8].copy_from_slice(b"KDUMP   ");
        out[8..12].copy_from_slice(&self.version.to_le_bytes());
        let uts = ["Linux", "synthetic", "6.12.117+deb12-amd64", "#1", self.machine, ""];
        for (i, s) in uts.iter().enumerate() {
            out[12 + i * 65..12 + i * 65 + s.len()].copy_from_slice(s.as_bytes());
        }
        let base = if is64 { 424 } else { 412 };
        let put32 = |o: &mut Vec<u8>, at: usize, v: u32| o[at..at + 4].copy_from_slice(&v.to_le_bytes());
        put32(&mut out, base, self.codec.flag());
        put32(&mut out, base + 4, BS as u32);
        put32(&mut out, base + 8, sub_hdr_size as u32);
        put32(&mut out, base + 12, bitmap_blocks as u32);
        put32(&mut out, base + 16, self.max_mapnr.min(u64::from(u32::MAX)) as u32);
        put32(&mut out, base + 36, 1);
        // kdump_sub_header, vmcoreinfo and notes after it
        let sub = BS;
        let vmci_off = (sub + 112) as u64;
        let note_off = vmci_off + self.vmcoreinfo.len() as u64;
        out[sub + 112..sub + 112 + self.vmcoreinfo.len()].copy_from_slice(self.vmcoreinfo.as_bytes());
        out[note_off as usize..note_off as usize + self.notes.len()].copy_from_slice(&self.notes);
        if is64 {
            out[sub..sub + 8].copy_from_slice(&self.phys_base.to_le_bytes());
            put32(&mut out, sub + 8, 31);
            out[sub + 32..sub + 40].copy_from_slice(&vmci_off.to_le_bytes());
            out[sub + 40..sub + 48].copy_from_slice(&(self.vmcoreinfo.len() as u64).to_le_bytes());
            out[sub + 48..sub + 56].copy_from_slice(&note_off.to_le_bytes());
            out[sub + 56..sub + 64].copy_from_slice(&(self.notes.len() as u64).to_le_bytes());
            out[sub + 96..sub + 104].copy_from_slice(&self.max_mapnr.to_le_bytes());
        } else {
            put32(&mut out, sub, self.phys_base as u32);
            put32(&mut out, sub + 4, 31);
            out[sub + 20..sub + 28].copy_from_slice(&vmci_off.to_le_bytes());
            put32(&mut out, sub + 28, self.vmcoreinfo.len() as u32);
            out[sub + 32..sub + 40].copy_from_slice(&note_off.to_le_bytes());
            put32(&mut out, sub + 40, self.notes.len() as u32);
            out[sub + 72..sub + 80].copy_from_slice(&self.max_mapnr.to_le_bytes());
        }
        // bitmaps
        let bm = (1 + sub_hdr_size) * BS;
        let half = bitmap_half * BS;
        let ram = self.ram.clone().unwrap_or_else(|| vec![(0, self.max_mapnr)]);
        for (lo, hi) in ram {
            for pfn in lo..hi {
                out[bm + (pfn / 8) as usize] |= 1 << (pfn % 8);
            }
        }
        for &pfn in self.pages.keys() {
            out[bm + half + (pfn / 8) as usize] |= 1 << (pfn % 8);
        }
        // page descriptors, then data; all-zero pages share one descriptor's data
        let desc = out.len();
        out.resize(desc + 24 * self.pages.len(), 0);
        let mut zero_at: Option<(u64, u32, u32)> = None;
        for (i, page) in self.pages.values().enumerate() {
            let (offset, size, flags) = if page.iter().all(|&b| b == 0) && zero_at.is_some() {
                zero_at.unwrap_or_default()
            } else {
                let c = self.codec.compress(page);
                let (data, flags) = if c.len() < BS { (c, self.codec.flag()) } else { (page.clone(), 0) };
                let at = (out.len() as u64, data.len() as u32, flags);
                out.extend_from_slice(&data);
                if page.iter().all(|&b| b == 0) {
                    zero_at = Some(at);
                }
                at
            };
            let d = desc + 24 * i;
            out[d..d + 8].copy_from_slice(&offset.to_le_bytes());
            out[d + 8..d + 12].copy_from_slice(&size.to_le_bytes());
            out[d + 12..d + 16].copy_from_slice(&flags.to_le_bytes());
        }
        out
    }
}

/// An ELF note.
pub fn note(name: &str, ty: u32, desc: &[u8]) -> Vec<u8> {
    let mut n = Vec::new();
    n.extend_from_slice(&(name.len() as u32 + 1).to_le_bytes());
    n.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    n.extend_from_slice(&ty.to_le_bytes());
    n.extend_from_slice(name.as_bytes());
    n.push(0);
    n.resize(n.len().next_multiple_of(4), 0);
    n.extend_from_slice(desc);
    n.resize(n.len().next_multiple_of(4), 0);
    n
}

/// An x86_64 NT_PRSTATUS descriptor with `pid` and registers `regs` (27 words).
pub fn prstatus(pid: i32, regs: &[u64; 27]) -> Vec<u8> {
    let mut d = vec![0u8; 336];
    d[32..36].copy_from_slice(&pid.to_le_bytes());
    for (i, r) in regs.iter().enumerate() {
        d[112 + i * 8..120 + i * 8].copy_from_slice(&r.to_le_bytes());
    }
    d
}

/// One PT_LOAD of an ELF core to write.
#[derive(Clone)]
pub struct Load {
    pub vaddr: u64,
    pub paddr: u64,
    pub data: Vec<u8>,
    pub memsz: u64,
}

/// An ELF64 x86_64 core: notes, then the segments' data.
pub fn elf_core(notes: &[u8], loads: &[Load]) -> Vec<u8> {
    let phnum = 1 + loads.len();
    let mut out = vec![0u8; 64 + 56 * phnum];
    out[..4].copy_from_slice(b"\x7fELF");
    out[4] = 2;
    out[5] = 1;
    out[6] = 1;
    out[16..18].copy_from_slice(&4u16.to_le_bytes());
    out[18..20].copy_from_slice(&62u16.to_le_bytes());
    out[20..24].copy_from_slice(&1u32.to_le_bytes());
    out[32..40].copy_from_slice(&64u64.to_le_bytes());
    out[52..54].copy_from_slice(&64u16.to_le_bytes());
    out[54..56].copy_from_slice(&56u16.to_le_bytes());
    out[56..58].copy_from_slice(&(phnum as u16).to_le_bytes());
    let mut ph = |i: usize, ty: u32, off: u64, vaddr: u64, paddr: u64, filesz: u64, memsz: u64| {
        let p = 64 + 56 * i;
        out[p..p + 4].copy_from_slice(&ty.to_le_bytes());
        out[p + 8..p + 16].copy_from_slice(&off.to_le_bytes());
        out[p + 16..p + 24].copy_from_slice(&vaddr.to_le_bytes());
        out[p + 24..p + 32].copy_from_slice(&paddr.to_le_bytes());
        out[p + 32..p + 40].copy_from_slice(&filesz.to_le_bytes());
        out[p + 40..p + 48].copy_from_slice(&memsz.to_le_bytes());
    };
    let mut off = (64 + 56 * phnum) as u64;
    ph(0, 4, off, 0, 0, notes.len() as u64, notes.len() as u64);
    off += notes.len() as u64;
    for (i, l) in loads.iter().enumerate() {
        ph(1 + i, 1, off, l.vaddr, l.paddr, l.data.len() as u64, l.memsz);
        off += l.data.len() as u64;
    }
    out.extend_from_slice(notes);
    for l in loads {
        out.extend_from_slice(&l.data);
    }
    out
}

/// The VMCOREINFO text of a kernel whose page tables start at physical `root`.
pub fn vmcoreinfo(root: u64) -> String {
    format!(
        "OSRELEASE=6.12.117+deb12-amd64\nPAGESIZE=4096\nSYMBOL(init_top_pgt)={:x}\nNUMBER(phys_base)=0\nNUMBER(pgtable_l5_enabled)=0\nKERNELOFFSET=0\n",
        0xffff_ffff_8000_0000u64 + root
    )
}
