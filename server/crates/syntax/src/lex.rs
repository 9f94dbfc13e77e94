//! The kernel's view of a script: lines, comment cutting, argv words and tokens, byte for byte.
//!
//! `trace_parse_run_command()` splits a write at `\n`, cuts each line at its first `#`,
//! and `argv_split()` splits the rest at `isspace()`. The function-event parser then cuts
//! each word with `next_token()`: a maximal run of `isalnum()`/`_` bytes, or one other
//! byte. All character classes are the kernel's own (`lib/ctype.c`, Latin-1), not Unicode.

use super::Span;
use memchr::memchr;

/// The kernel's `WRITE_BUFSIZE`; a line plus its newline and NUL must fit in it.
pub const WRITE_BUFSIZE: usize = 4096;
/// Longest line the kernel accepts (`WRITE_BUFSIZE - 2`: room for `\n` and NUL).
pub const MAX_LINE_LEN: usize = WRITE_BUFSIZE - 2;

/// The kernel's `isspace()` (`lib/ctype.c`: Latin-1, so 0xa0 is a space).
pub const fn is_space(b: u8) -> bool {
    fevlint_kclib::isspace(b)
}

/// The kernel's `isalpha()` (Latin-1 letters included).
pub const fn is_alpha(b: u8) -> bool {
    fevlint_kclib::isalpha(b)
}

/// The kernel's `isalnum()`.
pub const fn is_alnum(b: u8) -> bool {
    fevlint_kclib::isalnum(b)
}

/// A byte that `next_token()` keeps inside a run.
pub const fn is_word_byte(b: u8) -> bool {
    is_alnum(b) || b == b'_'
}

/// One line of the file as the kernel sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// The whole line, without its `\n`.
    pub span: Span,
    /// The part before the first `#` (what the kernel parses).
    pub code: Span,
    /// The comment, from `#` to the end of the line.
    pub comment: Option<Span>,
}

/// Splits text into lines at `\n` and cuts each at its first `#`.
pub fn lines(text: &str) -> impl Iterator<Item = Line> + '_ {
    let bytes = text.as_bytes();
    let mut start = 0usize;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let rest = &bytes[start..];
        let len = memchr(b'\n', rest).unwrap_or_else(|| {
            done = true;
            rest.len()
        });
        if done && len == 0 && start > 0 {
            // The text ended with a newline: no empty last line.
            return None;
        }
        let span = Span::new(start, start + len);
        let code_len = memchr(b'#', &rest[..len]).unwrap_or(len);
        let comment = (code_len < len).then(|| Span::new(start + code_len, start + len));
        let line = Line { span, code: Span::new(start, start + code_len), comment };
        start += len + 1;
        Some(line)
    })
}

/// A token as `next_token()` cuts it, with its argv word index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub span: Span,
    /// Index of the whitespace-separated word holding the token (argv index).
    pub word: u32,
}

/// Cuts the code part of a line into tokens. `base` is the line's offset in the file.
pub fn tokens(text: &str, code: Span, out: &mut Vec<Token>) {
    out.clear();
    let bytes = &text.as_bytes()[code.start..code.end];
    let mut i = 0usize;
    let mut word = 0u32;
    while i < bytes.len() {
        while i < bytes.len() && is_space(bytes[i]) {
            i += 1;
        }
        if i == bytes.len() {
            break;
        }
        let word_start = i;
        while i < bytes.len() && !is_space(bytes[i]) {
            i += 1;
        }
        let mut t = word_start;
        while t < i {
            let start = t;
            if is_word_byte(bytes[t]) {
                while t < i && is_word_byte(bytes[t]) {
                    t += 1;
                }
            } else {
                t += 1;
            }
            out.push(Token { span: Span::new(code.start + start, code.start + t), word });
        }
        word += 1;
    }
}

/// The kernel's `kstrtoul(token, 0, &val)` for an `unsigned long` of `ulong_bits` bits.
///
/// `0x` (any case of `x`) followed by a hex digit selects hex, a leading `0` octal,
/// anything else decimal; the whole token must be consumed; overflow is an error.
pub fn kstrtoul(token: &[u8], ulong_bits: u32) -> Option<u64> {
    let value = fevlint_kclib::kstrtoul(token, 0).ok()?;
    (ulong_bits >= 64 || value >> ulong_bits == 0).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(line: &str) -> Vec<&str> {
        let mut out = Vec::new();
        tokens(line, Span::new(0, line.len()), &mut out);
        out.iter().map(|t| &line[t.span.start..t.span.end]).collect()
    }

    #[test]
    fn tokens_are_runs_or_single_bytes() {
        assert_eq!(
            toks("x8[6] perm_addr+16[0]+558"),
            ["x8", "[", "6", "]", "perm_addr", "+", "16", "[", "0", "]", "+", "558"]
        );
        assert_eq!(toks("  a  (\t)  "), ["a", "(", ")"]);
        assert_eq!(toks("9f(int a)"), ["9f", "(", "int", "a", ")"]);
        assert_eq!(toks("0xffffffff82354c18"), ["0xffffffff82354c18"]);
    }

    #[test]
    fn kstrtoul_follows_the_kernel() {
        assert_eq!(kstrtoul(b"0", 64), Some(0));
        assert_eq!(kstrtoul(b"010", 64), Some(8));
        assert_eq!(kstrtoul(b"0x10", 64), Some(16));
        assert_eq!(kstrtoul(b"0X1f", 64), Some(31));
        assert_eq!(kstrtoul(b"08", 64), None);
        assert_eq!(kstrtoul(b"0x", 64), None);
        assert_eq!(kstrtoul(b"0xg", 64), None);
        assert_eq!(kstrtoul(b"9f", 64), None);
        assert_eq!(kstrtoul(b"", 64), None);
        assert_eq!(kstrtoul(b"18446744073709551615", 64), Some(u64::MAX));
        assert_eq!(kstrtoul(b"18446744073709551616", 64), None);
        assert_eq!(kstrtoul(b"0x100000000", 32), None);
        assert_eq!(kstrtoul(b"0xffffffff", 32), Some(0xffff_ffff));
    }

    #[test]
    fn lines_cut_comments() {
        let text = "a() # c\n\n# only\nb(";
        let got: Vec<_> = lines(text).map(|l| (&text[l.code.start..l.code.end], l.comment.is_some())).collect();
        assert_eq!(got, [("a() ", true), ("", false), ("", true), ("b(", false)]);
        assert_eq!(lines("a()\n").count(), 1);
        assert_eq!(lines("").count(), 1);
    }

    #[test]
    fn latin1_classes_match_the_kernel_table() {
        assert!(is_space(0xa0));
        assert!(is_alpha(0xc3) && !is_alpha(0xd7) && !is_alpha(0xf7) && is_alpha(0xdf));
        assert!(!is_alnum(0xa9) && !is_alnum(0x85));
    }
}
