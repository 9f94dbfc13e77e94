//! The symbol table a kernel image carries for itself: the compressed kallsyms tables in
//! `.rodata` (what `/proc/kallsyms` prints), found without symbols, as vmlinux-to-elf
//! and drgn find them. For images whose `System.map` is not at hand (Debian's image
//! packages ship an 83-byte stub).
//!
//! Layout (`scripts/kallsyms.c`, 6.1 to 6.14): `kallsyms_token_table` holds 256
//! NUL-terminated tokens, each character a script uses standing for itself at its own
//! code (so `"0\0" … "9\0"` follow each other: how the table is found);
//! `kallsyms_token_index` (256 × u16) follows it; `kallsyms_markers` (u32, the offset in
//! `kallsyms_names` of every 256th symbol) precedes it, and `kallsyms_names` (a length,
//! one byte or two when the high bit is set, then token indices; the first character is
//! the type) precedes that, after `kallsyms_num_syms`. `kallsyms_offsets` (i32) and
//! `kallsyms_relative_base` (u64) follow the token index (6.2 and later) or precede
//! `kallsyms_num_syms` (6.1). An address is `relative_base + offset` or, with
//! CONFIG_KALLSYMS_ABSOLUTE_PERCPU, `offset` when it is not negative and
//! `relative_base - 1 - offset` when it is.
//!
//! Invariant: every count read from the image is checked against the bytes before it
//! sizes anything, and every table is cross-checked (markers against the parsed names,
//! the token index against the token table) before it is believed.

use crate::elf::KernelElf;

/// The kallsyms of `elf`, as `/proc/kallsyms` lines (`ffffffff81000000 T _text`), in
/// the tables' (address) order; `absolute_percpu` from the config when known.
pub fn kallsyms_text(elf: &KernelElf, absolute_percpu: Option<bool>) -> Result<String, String> {
    let rodata = elf.section(".rodata").ok_or("the image has no .rodata section")?;
    let range = rodata.file_range.clone().ok_or(".rodata has no file contents")?;
    let data = elf.data().get(range).ok_or(".rodata lies past the end of the image")?;
    let data: &[u8] = data;
    let digits = b"0\x001\x002\x003\x004\x005\x006\x007\x008\x009\x00";
    let mut from = 0;
    while let Some(i) = find(&data[from..], digits) {
        let at = from + i;
        from = at + 1;
        if at == 0 || data[at - 1] != 0 {
            continue;
        }
        let text = elf.section(".text").map(|t| t.addr.0);
        if let Some(t) = Tables::locate(data, at, text) {
            return t.decode(data, absolute_percpu);
        }
    }
    Err("no kallsyms tables found in .rodata (a kernel built without CONFIG_KALLSYMS?)".to_owned())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn u16_at(d: &[u8], o: usize) -> Option<u16> {
    Some(u16::from_le_bytes(d.get(o..o.checked_add(2)?)?.try_into().ok()?))
}

fn u32_at(d: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(d.get(o..o.checked_add(4)?)?.try_into().ok()?))
}

fn u64_at(d: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(d.get(o..o.checked_add(8)?)?.try_into().ok()?))
}

/// Where each table is in `.rodata`.
struct Tables {
    tokens: Vec<(usize, usize)>,
    token_index_end: usize,
    names: usize,
    /// Where `kallsyms_num_syms` is.
    num_syms_at: usize,
    count: usize,
}

impl Tables {
    /// The tables around a token table whose `"0"` token starts at `zero`.
    fn locate(d: &[u8], zero: usize, text: Option<u64>) -> Option<Tables> {
        // Back 48 tokens to the start of the table.
        let mut start = zero;
        for _ in 0..48 {
            let end = start.checked_sub(1)?; // the previous token's NUL
            let begin = d[..end].iter().rposition(|&b| b == 0).map_or(0, |p| p + 1);
            if begin == end {
                return None; // tokens are never empty
            }
            start = begin;
        }
        let mut tokens = Vec::with_capacity(256);
        let mut p = start;
        for _ in 0..256 {
            let len = d.get(p..)?.iter().position(|&b| b == 0)?;
            if len == 0 || len > 64 {
                return None;
            }
            tokens.push((p, len));
            p += len + 1;
        }
        // The token index, at most 8 bytes of alignment after the table. It also says
        // where the table starts: the walk back can overshoot when the bytes before
        // the first token (`kallsyms_seqs_of_names`) end without a NUL.
        let (index_at, start) = (p..p + 8).find_map(|o| {
            let real = tokens[1].0.checked_sub(usize::from(u16_at(d, o + 2)?))?;
            let ok = u16_at(d, o) == Some(0)
                && real >= start
                && (1..256).all(|i| u16_at(d, o + 2 * i).map(usize::from) == Some(tokens[i].0 - real));
            ok.then_some((o, real))
        })?;
        tokens[0] = (start, tokens[1].0 - 1 - start);
        let token_index_end = index_at + 512;
        // The markers end at most 8 bytes before the token table (alignment zeros).
        // The last marker is never 0 (there are always more than 256 symbols): zero
        // words right before the token table are alignment.
        let mut end = start - start % 4;
        for _ in 0..2 {
            if end >= 4 && u32_at(d, end - 4) == Some(0) {
                end -= 4;
            }
        }
        let mut markers = Vec::new();
        let mut at = end;
        let mut backward_ok = true;
        loop {
            let Some(a) = at.checked_sub(4) else {
                backward_ok = false;
                break;
            };
            at = a;
            let Some(v) = u32_at(d, at) else {
                backward_ok = false;
                break;
            };
            markers.push(v);
            if v == 0 {
                break;
            }
            if markers.len() > 100_000 || markers.len() >= 2 && markers[markers.len() - 1] >= markers[markers.len() - 2]
            {
                backward_ok = false;
                break;
            }
        }
        markers.reverse();
        if !backward_ok || markers.len() < 2 {
            markers = vec![0, 0];
        }
        let markers_at = at;
        let m = markers.len();
        let last = *markers.last()? as usize;
        // Stable 6.1.y kernels put `kallsyms_seqs_of_names` between the markers and the
        // token table: then what precedes the table is not the markers. Anchor on
        // `kallsyms_relative_base` (the address of `_text`, 8-aligned), which
        // `kallsyms_num_syms` and `kallsyms_names` follow there.
        let tokens_found = |names: usize, num_at: usize, count: usize| Tables {
            tokens: tokens.clone(),
            token_index_end,
            names,
            num_syms_at: num_at,
            count,
        };
        let by_base = || -> Option<Tables> {
            let text = text?.to_le_bytes();
            let mut q = 0;
            while q + 16 <= start {
                if d[q..q + 8] == text {
                    let n = u32_at(d, q + 8)? as usize;
                    if n > 256 && n < 4_000_000 {
                        for names in [q + 16, q + 12] {
                            let Some(end) = walk_names(d, names, n, &[]) else { continue };
                            // The markers start after alignment padding (zeros, as is
                            // their first entry): try each aligned start.
                            for mk in (end..end + 8).filter(|o| o % 4 == 0) {
                                let count = n.div_ceil(256);
                                let ms: Option<Vec<u32>> = (0..count).map(|k| u32_at(d, mk + 4 * k)).collect();
                                if ms.is_some_and(|ms| walk_names(d, names, n, &ms).is_some()) {
                                    return Some(tokens_found(names, q + 8, n));
                                }
                            }
                        }
                    }
                }
                q += 8;
            }
            None
        };
        // kallsyms_names ends (up to 8 bytes of alignment) before the markers and starts
        // right after kallsyms_num_syms (4 or 8 bytes): find the start whose count and
        // parse agree with the markers.
        let lo = markers_at.saturating_sub(last + 256 * 256 + 8);
        let hi = markers_at.saturating_sub(last);
        for names in (lo..=hi).rev().filter(|_| markers.len() > 2 || markers[1] != 0) {
            for width in [8usize, 4] {
                let Some(num_at) = names.checked_sub(width) else { continue };
                let Some(n) = u32_at(d, num_at).map(|n| n as usize) else { continue };
                if n == 0 || n <= 256 * (m - 1) || n > 256 * m {
                    continue;
                }
                if let Some(names_end) = walk_names(d, names, n, &markers) {
                    if names_end <= markers_at && markers_at - names_end < 8 {
                        return Some(tokens_found(names, num_at, n));
                    }
                }
            }
        }
        by_base()
    }

    /// Names, types and addresses.
    fn decode(&self, d: &[u8], absolute_percpu: Option<bool>) -> Result<String, String> {
        let n = self.count;
        let mut names = Vec::with_capacity(n.min(d.len()));
        let mut p = self.names;
        for _ in 0..n {
            let (len, skip) = entry_len(d, p).ok_or("a kallsyms_names entry runs past .rodata")?;
            let body = d.get(p + skip..p + skip + len).ok_or("a kallsyms_names entry runs past .rodata")?;
            let mut s = Vec::new();
            for &t in body {
                let (o, l) = self.tokens[usize::from(t)];
                s.extend_from_slice(&d[o..o + l]);
            }
            names.push(s);
            p += skip + len;
        }
        // kallsyms_offsets and kallsyms_relative_base: after the token index (6.2+) or
        // before kallsyms_num_syms (6.1).
        let after = self.token_index_end.next_multiple_of(4);
        // (Up to 4 bytes of padding align the u64 base after an odd count of offsets.)
        let base_61 = self.num_syms_at.saturating_sub(8);
        let after8 = self.token_index_end.next_multiple_of(8);
        let candidates = [
            (after, (after + 4 * n).next_multiple_of(8)),
            (after8, (after8 + 4 * n).next_multiple_of(8)),
            (base_61.saturating_sub(4 * n), base_61),
            (base_61.saturating_sub(4 * n + 4), base_61),
        ];
        let text_index = names
            .iter()
            .position(|s| s.get(1..) == Some(b"_text".as_slice()) || s.get(1..) == Some(b"startup_64".as_slice()));
        for (offsets_at, base_at) in candidates {
            let Some(base) = u64_at(d, base_at) else { continue };
            if base >> 32 != 0xffff_ffff && base >> 32 != 0 {
                continue;
            }
            let offsets: Option<Vec<i32>> = (0..n).map(|i| u32_at(d, offsets_at + 4 * i).map(|v| v as i32)).collect();
            let Some(offsets) = offsets else { continue };
            let percpu = absolute_percpu.unwrap_or_else(|| offsets.iter().filter(|&&o| o < 0).count() > n / 2);
            let addr = |o: i32| -> u64 {
                if !percpu {
                    base.wrapping_add(u64::from(o as u32))
                } else if o >= 0 {
                    o as u64
                } else {
                    base.wrapping_sub(1).wrapping_sub(o as i64 as u64)
                }
            };
            // `_text` is the relative base on every layout seen, and the tables are
            // sorted by address: the checks that these offsets belong to these names.
            if let Some(t) = text_index {
                if addr(offsets[t]) != base {
                    continue;
                }
            }
            if offsets.windows(2).any(|w| addr(w[1]) < addr(w[0])) {
                continue;
            }
            let mut out = String::with_capacity(n * 40);
            for (s, &o) in names.iter().zip(&offsets) {
                let (Some(&ty), Some(name)) = (s.first(), s.get(1..)) else { continue };
                out.push_str(&format!("{:016x} {} {}\n", addr(o), char::from(ty), String::from_utf8_lossy(name)));
            }
            return Ok(out);
        }
        Err("found kallsyms_names but no kallsyms_offsets/kallsyms_relative_base that fit them".to_owned())
    }
}

/// A names entry's length and the bytes the length takes (one, or two with the high
/// bit set: "big" symbols, 6.1 and later).
fn entry_len(d: &[u8], p: usize) -> Option<(usize, usize)> {
    let b = *d.get(p)?;
    if b & 0x80 != 0 {
        Some((usize::from(b & 0x7f) | usize::from(*d.get(p + 1)?) << 7, 2))
    } else {
        Some((usize::from(b), 1))
    }
}

/// Walks `n` entries from `start`, checking each 256th against the markers (none given:
/// no check); the end.
fn walk_names(d: &[u8], start: usize, n: usize, markers: &[u32]) -> Option<usize> {
    let mut p = start;
    for i in 0..n {
        if !markers.is_empty() && i % 256 == 0 && markers.get(i / 256).map(|&m| m as usize) != Some(p - start) {
            return None;
        }
        let (len, skip) = entry_len(d, p)?;
        if len == 0 {
            return None;
        }
        p = p.checked_add(skip + len)?;
        if p > d.len() {
            return None;
        }
    }
    Some(p)
}
