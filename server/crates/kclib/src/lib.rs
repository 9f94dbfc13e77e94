//! The C library pieces the kernel's parser leans on, with the kernel's own semantics:
//! `lib/ctype.c` (Latin-1 table, so `isalpha(0xc3)` is true), `lib/kstrtox.c`
//! (`kstrtoul`, `kstrtol`, `kstrtouint` with base 0 = C prefixes), `simple_strtoul`
//! (stops at the first bad digit), and `lib/argv_split.c` (words split at `isspace`).
//!
//! Everything works on bytes: the kernel never decodes UTF-8 here. One copy for both
//! dialects' parsers: `fevlint-syntax` (function events) and `fevlint-mainline`
//! (`kprobe_events`).

/// Linux `_ctype[]` classes for one byte (`include/linux/ctype.h`, `lib/ctype.c`).
const fn class(c: u8) -> u8 {
    const U: u8 = 0x01; // upper
    const L: u8 = 0x02; // lower
    const D: u8 = 0x04; // digit
    const S: u8 = 0x20; // space
    match c {
        b'A'..=b'Z' => U,
        b'a'..=b'z' => L,
        b'0'..=b'9' => D,
        9..=13 | b' ' | 160 => S,
        // Latin-1 letters: 192-214 and 216-222 upper, 223-246 and 248-255 lower.
        192..=214 | 216..=222 => U,
        223..=246 | 248..=255 => L,
        _ => 0,
    }
}

pub const fn isalpha(c: u8) -> bool {
    class(c) & 0x03 != 0
}

pub const fn isdigit(c: u8) -> bool {
    c.is_ascii_digit()
}

pub const fn isalnum(c: u8) -> bool {
    isalpha(c) || isdigit(c)
}

pub const fn isspace(c: u8) -> bool {
    class(c) & 0x20 != 0
}

const fn isxdigit(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

/// `argv_split()`: the words of `line` and the byte range of each in `line`.
pub fn argv_split(line: &[u8]) -> Vec<(usize, usize)> {
    let mut words = Vec::new();
    let mut i = 0;
    while i < line.len() {
        while i < line.len() && isspace(line[i]) {
            i += 1;
        }
        if i >= line.len() {
            break;
        }
        let start = i;
        while i < line.len() && !isspace(line[i]) {
            i += 1;
        }
        words.push((start, i));
    }
    words
}

/// `_parse_integer_fixup_radix`: the base and how many prefix bytes to skip.
fn fixup_radix(s: &[u8], base: u32) -> (u32, usize) {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    let mut base = base;
    if base == 0 {
        base = if at(0) == b'0' {
            if at(1).eq_ignore_ascii_case(&b'x') && isxdigit(at(2)) {
                16
            } else {
                8
            }
        } else {
            10
        };
    }
    let skip = if base == 16 && at(0) == b'0' && at(1).eq_ignore_ascii_case(&b'x') { 2 } else { 0 };
    (base, skip)
}

/// `_parse_integer_limit`: value (wrapping, as the kernel's arithmetic does on
/// overflow), digits consumed, overflow flag.
fn parse_integer(s: &[u8], base: u32) -> (u64, usize, bool) {
    let mut res: u64 = 0;
    let mut n = 0;
    let mut overflow = false;
    for &c in s {
        let lc = c | 0x20;
        let val = if c.is_ascii_digit() {
            u32::from(c - b'0')
        } else if (b'a'..=b'f').contains(&lc) {
            u32::from(lc - b'a') + 10
        } else {
            break;
        };
        if val >= base {
            break;
        }
        match res.checked_mul(u64::from(base)).and_then(|r| r.checked_add(u64::from(val))) {
            Some(r) => res = r,
            None => {
                overflow = true;
                res = res.wrapping_mul(u64::from(base)).wrapping_add(u64::from(val));
            }
        }
        n += 1;
    }
    (res, n, overflow)
}

/// Errors of the kstrto* family: -ERANGE on overflow, -EINVAL otherwise (the kernel
/// passes the code on as the write's errno in a few places).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseIntError {
    Invalid,
    Range,
}

fn kstrtoull_nosign(s: &[u8], base: u32) -> Result<u64, ParseIntError> {
    let (base, skip) = fixup_radix(s, base);
    let s = &s[skip.min(s.len())..];
    let (v, n, overflow) = parse_integer(s, base);
    if overflow {
        return Err(ParseIntError::Range);
    }
    if n == 0 {
        return Err(ParseIntError::Invalid);
    }
    let mut rest = &s[n..];
    if rest.first() == Some(&b'\n') {
        rest = &rest[1..];
    }
    if rest.is_empty() {
        Ok(v)
    } else {
        Err(ParseIntError::Invalid)
    }
}

/// `kstrtoull` / `kstrtoul` (64-bit).
pub fn kstrtoul(s: &[u8], base: u32) -> Result<u64, ParseIntError> {
    let s = s.strip_prefix(b"+").unwrap_or(s);
    kstrtoull_nosign(s, base)
}

/// `kstrtoll` / `kstrtol` (64-bit).
pub fn kstrtol(s: &[u8], base: u32) -> Result<i64, ParseIntError> {
    if let Some(rest) = s.strip_prefix(b"-") {
        let v = kstrtoull_nosign(rest, base)?;
        let neg = (v as i64).wrapping_neg();
        if neg > 0 {
            return Err(ParseIntError::Range);
        }
        Ok(neg)
    } else {
        let v = kstrtoul(s, base)?;
        i64::try_from(v).map_err(|_| ParseIntError::Range)
    }
}

/// `kstrtouint`.
pub fn kstrtouint(s: &[u8], base: u32) -> Result<u32, ParseIntError> {
    u32::try_from(kstrtoul(s, base)?).map_err(|_| ParseIntError::Range)
}

/// `simple_strtoul(s, &end, base)`: the value and the index of `end` in `s`.
pub fn simple_strtoul(s: &[u8], base: u32) -> (u64, usize) {
    let (base, skip) = fixup_radix(s, base);
    let skip = skip.min(s.len());
    let (v, n, _) = parse_integer(&s[skip..], base);
    (v, skip + n)
}

/// `__is_good_name` (`kernel/trace/trace.h`): a C identifier, plus `-` for group names.
pub fn is_good_name(name: &[u8], hyphen_ok: bool) -> bool {
    let ok_first = |c: u8| isalpha(c) || c == b'_' || (hyphen_ok && c == b'-');
    let ok = |c: u8| isalnum(c) || c == b'_' || (hyphen_ok && c == b'-');
    match name.split_first() {
        None => false,
        Some((&first, rest)) => ok_first(first) && rest.iter().all(|&c| ok(c)),
    }
}

/// `glob_match(pattern, str)` for the one pattern the kernel uses here, `*:%p[dD]`.
pub fn is_dentry_arg(arg: &[u8]) -> bool {
    arg.ends_with(b":%pd") || arg.ends_with(b":%pD")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kstrto_matches_kernel_rules() {
        assert_eq!(kstrtoul(b"0x10", 0), Ok(16));
        assert_eq!(kstrtoul(b"010", 0), Ok(8));
        assert_eq!(kstrtoul(b"+7", 0), Ok(7));
        assert!(kstrtoul(b"08", 0).is_err());
        assert!(kstrtoul(b"0x", 0).is_err());
        assert!(kstrtoul(b"", 0).is_err());
        assert!(kstrtoul(b"12345678abcde", 0).is_err());
        assert_eq!(kstrtol(b"-0x10", 0), Ok(-16));
        assert!(kstrtol(b"0ab1", 0).is_err());
        assert!(kstrtouint(b"4294967296", 0).is_err());
        assert_eq!(simple_strtoul(b"10@a/16", 0), (10, 2));
        assert_eq!(simple_strtoul(b"a/16", 0), (0, 0));
    }

    #[test]
    fn names_and_ctype() {
        assert!(is_good_name(b"foo_1", false));
        assert!(!is_good_name(b"foo.1", false));
        assert!(!is_good_name(b"1foo", false));
        assert!(is_good_name(b"-grp", true));
        assert!(isalpha(0xc3));
        assert!(isspace(0xa0));
    }
}
