//! makedumpfile's compressed kdump format (`KDUMP   `, header versions 1-6, 32- and
//! 64-bit layouts; makedumpfile `diskdump_mod.h`): header, sub-header (phys_base,
//! VMCOREINFO, notes), the two bitmaps, page descriptors, and per-page zlib, LZO,
//! snappy or zstd data.
//!
//! A page frame is *outside physical memory* when it is past `max_mapnr` or clear in the
//! first bitmap (not RAM), *not in the dump* when it is RAM but clear in the second
//! bitmap (excluded by the dump level), and otherwise found by its rank among the set
//! bits of the second bitmap.

use crate::addr::PhysAddr;
use crate::error::{Error, Fault, FaultKind};
use crate::notes::{parse_notes, NoteSet, VmcoreInfo};
use crate::regs::{Arch, Thread};
use crate::source::Source;
use crate::PhysMemory;
use std::io::Read;
use std::sync::Mutex;

pub(crate) const KDUMP_SIGNATURE: &[u8] = b"KDUMP   ";
const DUMP_DH_COMPRESSED_ZLIB: u32 = 0x1;
const DUMP_DH_COMPRESSED_LZO: u32 = 0x2;
const DUMP_DH_COMPRESSED_SNAPPY: u32 = 0x4;
const DUMP_DH_COMPRESSED_INCOMPLETE: u32 = 0x8;
const DUMP_DH_COMPRESSED_ZSTD: u32 = 0x20;
const PAGE_DESC_SIZE: u64 = 24;
/// Bits per prefix-count entry of the dump bitmap.
const RANK_CHUNK_BITS: u64 = 4096;
const CACHE_PAGES: usize = 64;
const MAX_BLOCK_SIZE: u32 = 1 << 20;

/// How a page is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Zlib,
    Lzo,
    Snappy,
    Zstd,
}

/// The fields of `disk_dump_header` and `kdump_sub_header` the reader uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KdumpHeader {
    pub header_version: i32,
    /// 64-bit layout (`timeval` and `unsigned long` of 8 bytes).
    pub is_64: bool,
    pub machine: String,
    pub release: String,
    pub status: u32,
    pub block_size: u32,
    pub sub_hdr_size: u32,
    pub bitmap_blocks: u32,
    pub max_mapnr: u64,
    pub nr_cpus: i32,
    pub phys_base: u64,
    pub dump_level: i32,
    pub split: bool,
}

impl KdumpHeader {
    /// The compression the header announces (pages say their own).
    pub fn compression(&self) -> Compression {
        compression_of(self.status)
    }

    /// makedumpfile stopped before the end (disk full, `-D`): some pages are missing.
    pub fn incomplete(&self) -> bool {
        self.status & DUMP_DH_COMPRESSED_INCOMPLETE != 0
    }
}

fn compression_of(flags: u32) -> Compression {
    if flags & DUMP_DH_COMPRESSED_ZLIB != 0 {
        Compression::Zlib
    } else if flags & DUMP_DH_COMPRESSED_LZO != 0 {
        Compression::Lzo
    } else if flags & DUMP_DH_COMPRESSED_SNAPPY != 0 {
        Compression::Snappy
    } else if flags & DUMP_DH_COMPRESSED_ZSTD != 0 {
        Compression::Zstd
    } else {
        Compression::None
    }
}

/// A compressed kdump file.
#[derive(Debug)]
pub struct KdumpFile {
    src: Source,
    header: KdumpHeader,
    arch: Arch,
    /// Offset of the first (RAM) bitmap; the second (dumped) follows at `+ bitmap_half`.
    bitmap_off: u64,
    bitmap_half: u64,
    desc_off: u64,
    /// Set bits of the dump bitmap before each `RANK_CHUNK_BITS` chunk.
    rank: Vec<u64>,
    dumped_pages: u64,
    notes: NoteSet,
    vmcoreinfo: Option<VmcoreInfo>,
    cache: Mutex<PageCache>,
}

#[derive(Debug, Default)]
struct PageCache {
    pages: Vec<(u64, Box<[u8]>)>,
    next: usize,
}

fn cstr(b: &[u8]) -> String {
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..n]).into_owned()
}

fn le32(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn le64(b: &[u8], o: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[o..o + 8]);
    u64::from_le_bytes(a)
}

impl KdumpFile {
    /// Parses the headers, notes, VMCOREINFO and bitmaps (not the pages).
    pub fn parse(src: Source) -> Result<KdumpFile, Error> {
        // disk_dump_header: signature[8], header_version, utsname (6 x 65), timeval, ...
        let mut h = [0u8; 464];
        let n = src.len().min(464) as usize;
        src.read_exact_at(0, &mut h[..n])?;
        if n < 452 {
            return Err(src.malformed(0, "kdump header truncated"));
        }
        if &h[..8] != KDUMP_SIGNATURE {
            return Err(src.malformed(0, "old `DISKDUMP` dumps are not supported (only makedumpfile's `KDUMP   `)"));
        }
        let header_version = le32(&h, 8) as i32;
        let uts = |i: usize| cstr(&h[12 + i * 65..12 + (i + 1) * 65]);
        let release = uts(2);
        let machine = uts(4);
        let machine_32 =
            matches!(machine.as_str(), "i386" | "i486" | "i586" | "i686" | "x86" | "arm" | "ppc" | "s390" | "mips");
        let arch = if machine_32 { Arch::I386 } else { Arch::X86_64 };
        // After utsname (ends at 402): timeval aligned to 8 on 64-bit (408 + 16), to 4 on
        // 32-bit (404 + 8). QEMU writes the 64-bit layout for an i386 guest whose memory
        // reaches 4 GiB (its BIOS ROM ends there), so the machine alone does not say
        // which: a 32-bit layout whose block size is no page size is the 64-bit one.
        let page_size_at = |base: usize| {
            let b = le32(&h, base + 4);
            b.is_power_of_two() && (512..=MAX_BLOCK_SIZE).contains(&b)
        };
        let is_64 = !machine_32 || (!page_size_at(412) && page_size_at(424));
        let base = if is_64 { 424 } else { 412 };
        let status = le32(&h, base);
        let block_size = le32(&h, base + 4);
        let sub_hdr_size = le32(&h, base + 8);
        let bitmap_blocks = le32(&h, base + 12);
        let max_mapnr32 = le32(&h, base + 16);
        let nr_cpus = le32(&h, base + 36) as i32;
        if !(1..=6).contains(&header_version) {
            return Err(src.malformed(8, format!("kdump header version {header_version} (this reader knows 1 to 6)")));
        }
        if !block_size.is_power_of_two() || !(512..=MAX_BLOCK_SIZE).contains(&block_size) {
            return Err(src.malformed(base as u64 + 4, format!("block size {block_size} is not a page size")));
        }
        let bs = u64::from(block_size);
        // kdump_sub_header at block 1.
        let sub = bs;
        let sub_len = u64::from(sub_hdr_size).saturating_mul(bs);
        if sub_hdr_size == 0 || sub.checked_add(sub_len).is_none_or(|e| e > src.len()) {
            return Err(src.malformed(
                base as u64 + 8,
                format!("sub-header of {sub_hdr_size} blocks runs past the end of the file"),
            ));
        }
        let mut s = [0u8; 104];
        src.read_exact_at(sub, &mut s[..(sub_len.min(104) as usize)])?;
        let w = |o: usize| if is_64 { le64(&s, o) } else { u64::from(le32(&s, o)) };
        // (64-bit offsets, 32-bit offsets) of each field.
        let (phys_base, dump_level, split) = if is_64 {
            (le64(&s, 0), le32(&s, 8) as i32, le32(&s, 12))
        } else {
            (w(0), le32(&s, 4) as i32, le32(&s, 8))
        };
        // off_t is 64 bits in both layouts; unsigned long follows the layout.
        let (vmci_off, vmci_size, note_off, note_size) = if is_64 {
            (le64(&s, 32), le64(&s, 40), le64(&s, 48), le64(&s, 56))
        } else {
            (le64(&s, 20), w(28), le64(&s, 32), w(40))
        };
        let max_mapnr = if header_version >= 6 {
            if is_64 {
                le64(&s, 96)
            } else {
                le64(&s, 72)
            }
        } else {
            u64::from(max_mapnr32)
        };
        let header = KdumpHeader {
            header_version,
            is_64,
            machine,
            release,
            status,
            block_size,
            sub_hdr_size,
            bitmap_blocks,
            max_mapnr,
            nr_cpus,
            phys_base,
            dump_level,
            split: split != 0,
        };
        // VMCOREINFO (v3+) and notes (v4+), both located by file offset.
        let mut vmcoreinfo = None;
        if header_version >= 3 && vmci_size > 0 {
            if vmci_size > 1 << 20 {
                return Err(src.malformed(sub + 40, format!("VMCOREINFO of {vmci_size} bytes")));
            }
            vmcoreinfo = Some(VmcoreInfo::parse(&src.vec_at(vmci_off, vmci_size)?));
        }
        let mut notes = NoteSet::default();
        if header_version >= 4 && note_size > 0 {
            if note_size > 64 << 20 {
                return Err(src.malformed(sub + 56, format!("notes of {note_size} bytes")));
            }
            let raw = src.vec_at(note_off, note_size)?;
            let (list, bad) = parse_notes(&raw);
            if let Some((o, what)) = bad {
                return Err(src.malformed(note_off + o as u64, what));
            }
            notes = NoteSet::collect(&list, arch);
        }
        if vmcoreinfo.is_none() {
            vmcoreinfo = notes.vmcoreinfo.clone();
        }
        // Bitmaps.
        let bitmap_off = (1 + u64::from(sub_hdr_size)) * bs;
        let bitmap_len = u64::from(bitmap_blocks) * bs;
        if bitmap_blocks == 0 || bitmap_off.checked_add(bitmap_len).is_none_or(|e| e > src.len()) {
            return Err(src.malformed(
                base as u64 + 12,
                format!(
                    "bitmap of {bitmap_blocks} blocks at {bitmap_off:#x} runs past the end of the file ({:#x})",
                    src.len()
                ),
            ));
        }
        let bitmap_half = bitmap_len / 2;
        if max_mapnr.div_ceil(8) > bitmap_half {
            return Err(src.malformed(
                bitmap_off,
                format!(
                    "bad bitmap: {max_mapnr} page frames need {} bytes, each bitmap has {bitmap_half}",
                    max_mapnr.div_ceil(8)
                ),
            ));
        }
        let desc_off = bitmap_off + bitmap_len;
        // Rank table: one count per chunk of the dump bitmap, read in chunk-sized pieces.
        let used = max_mapnr.div_ceil(8);
        let chunk_bytes = RANK_CHUNK_BITS / 8;
        let mut rank = Vec::with_capacity(used.div_ceil(chunk_bytes) as usize);
        let mut total = 0u64;
        let mut buf = vec![0u8; chunk_bytes as usize];
        let mut at = 0u64;
        while at < used {
            rank.push(total);
            let n = (used - at).min(chunk_bytes) as usize;
            let piece = match src.slice(bitmap_off + bitmap_half + at, n as u64) {
                Some(p) => p,
                None => {
                    src.read_exact_at(bitmap_off + bitmap_half + at, &mut buf[..n])?;
                    &buf[..n]
                }
            };
            // Bits past max_mapnr in the last byte do not count.
            let mut c: u64 = piece.iter().map(|b| u64::from(b.count_ones())).sum();
            if at + n as u64 == used && max_mapnr % 8 != 0 {
                let last = piece[n - 1];
                c -= u64::from((last >> (max_mapnr % 8)).count_ones());
            }
            total += c;
            at += n as u64;
        }
        if desc_off.checked_add(total.saturating_mul(PAGE_DESC_SIZE)).is_none_or(|e| e > src.len()) {
            return Err(src.malformed(
                bitmap_off + bitmap_half,
                format!(
                    "bad bitmap: {total} dumped pages need {} bytes of page descriptors at {desc_off:#x}, past the end of the file ({:#x})",
                    total.saturating_mul(PAGE_DESC_SIZE),
                    src.len()
                ),
            ));
        }
        Ok(KdumpFile {
            src,
            header,
            arch,
            bitmap_off,
            bitmap_half,
            desc_off,
            rank,
            dumped_pages: total,
            notes,
            vmcoreinfo,
            cache: Mutex::new(PageCache::default()),
        })
    }

    pub fn header(&self) -> &KdumpHeader {
        &self.header
    }

    pub fn arch(&self) -> Arch {
        self.arch
    }

    pub fn source(&self) -> &Source {
        &self.src
    }

    pub fn threads(&self) -> &[Thread] {
        &self.notes.threads
    }

    pub fn vmcoreinfo(&self) -> Option<&VmcoreInfo> {
        self.vmcoreinfo.as_ref()
    }

    /// The number of pages with data in the file.
    pub fn dumped_pages(&self) -> u64 {
        self.dumped_pages
    }

    fn bit(&self, second: bool, pfn: u64) -> Result<bool, Error> {
        let off = self.bitmap_off + if second { self.bitmap_half } else { 0 } + pfn / 8;
        let mut b = [0u8; 1];
        self.src.read_exact_at(off, &mut b)?;
        Ok(b[0] & (1 << (pfn % 8)) != 0)
    }

    /// The rank of `pfn` among the dumped pages (`pfn`'s bit is set).
    fn rank_of(&self, pfn: u64) -> Result<u64, Error> {
        let chunk = pfn / RANK_CHUNK_BITS;
        let mut r = self.rank.get(chunk as usize).copied().unwrap_or(self.dumped_pages);
        let start = chunk * RANK_CHUNK_BITS / 8;
        let nbytes = (pfn / 8 - start) as usize;
        let off = self.bitmap_off + self.bitmap_half + start;
        let mut buf = [0u8; (RANK_CHUNK_BITS / 8) as usize];
        let piece = match self.src.slice(off, nbytes as u64 + 1) {
            Some(p) => p,
            None => {
                self.src.read_exact_at(off, &mut buf[..=nbytes])?;
                &buf[..=nbytes]
            }
        };
        r += piece[..nbytes].iter().map(|b| u64::from(b.count_ones())).sum::<u64>();
        r += u64::from((piece[nbytes] & ((1u8 << (pfn % 8)) - 1)).count_ones());
        Ok(r)
    }

    /// Reads page frame `pfn` into `out` (one block), or says why it cannot.
    pub fn read_page(&self, pfn: u64, out: &mut [u8]) -> Result<Result<(), FaultKind>, Error> {
        let bs = self.header.block_size as usize;
        if out.len() != bs {
            return Err(self.src.malformed(0, format!("page buffer of {} bytes, block size {bs}", out.len())));
        }
        if pfn >= self.header.max_mapnr {
            return Ok(Err(FaultKind::OutsidePhysical));
        }
        if !self.bit(true, pfn)? {
            return Ok(Err(if self.bit(false, pfn)? { FaultKind::NotInDump } else { FaultKind::OutsidePhysical }));
        }
        let rank = self.rank_of(pfn)?;
        let doff = self.desc_off + rank * PAGE_DESC_SIZE;
        let mut d = [0u8; PAGE_DESC_SIZE as usize];
        self.src.read_exact_at(doff, &mut d)?;
        let offset = le64(&d, 0);
        let size = le32(&d, 8);
        let flags = le32(&d, 12);
        if size == 0 && self.header.incomplete() {
            // makedumpfile stopped (ENOSPC) before writing this page's data.
            return Ok(Err(FaultKind::NotInDump));
        }
        let corrupt =
            |what: String| Error::CorruptPage { path: self.src.path().to_path_buf(), offset: doff, pfn, what };
        if size as usize > bs || offset.checked_add(u64::from(size)).is_none_or(|e| e > self.src.len()) {
            return Err(corrupt(format!(
                "page descriptor: {size} bytes at {offset:#x} (block size {bs}, file {:#x} bytes)",
                self.src.len()
            )));
        }
        let tmp;
        let data: &[u8] = match self.src.slice(offset, u64::from(size)) {
            Some(s) => s,
            None => {
                tmp = self.src.vec_at(offset, u64::from(size))?;
                &tmp
            }
        };
        let comp = compression_of(flags);
        if size as usize == bs && comp == Compression::None {
            out.copy_from_slice(data);
            return Ok(Ok(()));
        }
        let got = match comp {
            Compression::None => return Err(corrupt(format!("{size} bytes stored uncompressed, block size {bs}"))),
            Compression::Zlib => {
                let mut z = flate2::read::ZlibDecoder::new(data);
                let mut n = 0;
                loop {
                    match z.read(&mut out[n..]) {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        Err(e) => return Err(corrupt(format!("zlib: {e}"))),
                    }
                    if n == bs {
                        // More output than a page is corruption too.
                        let mut extra = [0u8; 1];
                        if matches!(z.read(&mut extra), Ok(k) if k > 0) {
                            return Err(corrupt("zlib data inflates past one page".into()));
                        }
                        break;
                    }
                }
                n
            }
            Compression::Lzo => lzokay::decompress::decompress(data, out).map_err(|e| corrupt(format!("lzo: {e}")))?,
            Compression::Snappy => {
                match snap::raw::decompress_len(data) {
                    Ok(n) if n == bs => {}
                    Ok(n) => return Err(corrupt(format!("snappy page of {n} bytes, block size {bs}"))),
                    Err(e) => return Err(corrupt(format!("snappy: {e}"))),
                }
                snap::raw::Decoder::new().decompress(data, out).map_err(|e| corrupt(format!("snappy: {e}")))?
            }
            Compression::Zstd => {
                zstd::bulk::decompress_to_buffer(data, out).map_err(|e| corrupt(format!("zstd: {e}")))?
            }
        };
        if got != bs {
            return Err(corrupt(format!("{comp:?} page decompressed to {got} bytes, block size {bs}")));
        }
        Ok(Ok(()))
    }

    fn with_page<R>(&self, pfn: u64, f: impl FnOnce(&[u8]) -> R) -> Result<R, FaultKind> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, p)) = cache.pages.iter().find(|(k, _)| *k == pfn) {
            return Ok(f(p));
        }
        let mut page = vec![0u8; self.header.block_size as usize].into_boxed_slice();
        match self.read_page(pfn, &mut page) {
            Ok(Ok(())) => {}
            Ok(Err(kind)) => return Err(kind),
            Err(_) => return Err(FaultKind::Corrupt),
        }
        let r = f(&page);
        if cache.pages.len() < CACHE_PAGES {
            cache.pages.push((pfn, page));
        } else {
            let i = cache.next;
            cache.pages[i] = (pfn, page);
            cache.next = (i + 1) % CACHE_PAGES;
        }
        Ok(r)
    }
}

impl PhysMemory for KdumpFile {
    fn read_phys(&self, paddr: PhysAddr, buf: &mut [u8]) -> Result<(), Fault<PhysAddr>> {
        let bs = u64::from(self.header.block_size);
        let mut done = 0usize;
        while done < buf.len() {
            let a = paddr.wrapping_add(done as u64);
            let in_page = (a.0 % bs) as usize;
            let n = (bs as usize - in_page).min(buf.len() - done);
            let out = &mut buf[done..done + n];
            self.with_page(a.0 / bs, |p| out.copy_from_slice(&p[in_page..in_page + n]))
                .map_err(|k| Fault::new(a, k))?;
            done += n;
        }
        Ok(())
    }

    fn phys_end(&self) -> PhysAddr {
        PhysAddr(self.header.max_mapnr.saturating_mul(u64::from(self.header.block_size)))
    }
}
