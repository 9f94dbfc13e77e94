//! Suppression comments: `# fevlint: ignore[T404, N102]`, or a bare `# fevlint: ignore`
//! for every rule, at the end of a definition line or on its own line directly above one.
//! The kernel cuts each line at its first `#`, so a suppression never changes what the
//! kernel sees. N103 reports suppressions that dropped nothing, N104 unknown codes.

use crate::diagnostic::Diagnostic;
use crate::rules::Rule;
use fevlint_syntax::lex;
use fevlint_syntax::Span;

/// One `fevlint: ignore` directive.
#[derive(Clone, Debug)]
pub struct Suppression {
    /// 0-based line of the comment.
    pub line: u32,
    /// The directive, from `fevlint:` to the closing `]` (or the end of `ignore`).
    pub span: Span,
    /// 0-based line whose diagnostics it drops; `None` for a suppression on its own line
    /// that no definition follows directly.
    pub target: Option<u32>,
    /// The codes listed; `None` for a bare `ignore` (every rule).
    pub codes: Option<Vec<Code>>,
}

/// A code (or rule name) listed in a suppression.
#[derive(Clone, Debug)]
pub struct Code {
    pub text: String,
    pub span: Span,
    /// `None` when no rule has this code or name (N104).
    pub rule: Option<&'static Rule>,
}

/// Diagnostics about suppressions themselves; no comment suppresses them.
pub const UNSUPPRESSIBLE: [&str; 2] = ["N103", "N104"];

/// Every suppression in a text, in line order. Only the lines holding `fevlint:` are
/// lexed (and, for a directive on its own line, the lines after it up to its target):
/// the rest of a 50,000-line script is counted, not split. A line longer than the
/// kernel's write buffer holds no directive: the kernel refuses it whole (S004), and
/// reading one there would let a single line ask for a finding per listed code, each
/// quoting the whole line.
pub fn parse(text: &str) -> Vec<Suppression> {
    let bytes = text.as_bytes();
    let blank = |l: &lex::Line| l.code.text(text).bytes().all(lex::is_space);
    // The lines of `text[from..]`, with spans in `text`.
    let lines_from = |from: usize| {
        lex::lines(text.get(from..).unwrap_or_default()).map(move |mut l| {
            let by = from as isize;
            l.span.shift(by);
            l.code.shift(by);
            if let Some(c) = &mut l.comment {
                c.shift(by);
            }
            l
        })
    };
    let finder = memchr::memmem::Finder::new(b"fevlint:");
    let mut out = Vec::new();
    let (mut number, mut counted, mut from) = (0usize, 0usize, 0usize);
    while let Some(found) = finder.find(&bytes[from..]) {
        let at = from + found;
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        number += memchr::memchr_iter(b'\n', &bytes[counted..start]).count();
        counted = start;
        from = (end + 1).min(bytes.len());
        let Some(line) = lines_from(start).next() else { continue };
        if line.span.len() > lex::MAX_LINE_LEN {
            continue;
        }
        let Some(comment) = line.comment else { continue };
        let Some((span, codes)) = directive(comment.text(text), comment.start, &mut 0) else { continue };
        let target = if blank(&line) {
            // Own line: the next line that is not a comment line, if it is a definition.
            let after = if end < bytes.len() { Some(lines_from(end + 1)) } else { None };
            after
                .into_iter()
                .flatten()
                .enumerate()
                .find(|(_, l)| !(blank(l) && l.comment.is_some()))
                .filter(|(_, l)| !blank(l))
                .map(|(j, _)| number + 1 + j)
        } else {
            Some(number)
        };
        out.push(Suppression::new(number, span, target, codes));
    }
    out
}

impl Suppression {
    /// The directive at `span` on 0-based `line`, its codes looked up among the rules.
    fn new(line: usize, span: Span, target: Option<usize>, codes: Option<Vec<(String, Span)>>) -> Suppression {
        Suppression {
            line: line as u32,
            span,
            target: target.map(|t| t as u32),
            codes: codes.map(|list| {
                list.into_iter().map(|(text, span)| Code { rule: crate::rules::by_code(&text), text, span }).collect()
            }),
        }
    }
}

type Directive = (Span, Option<Vec<(String, Span)>>);

/// Finds `fevlint: ignore[…]` after any `#` of a comment starting at byte `base`.
/// Linear in the comment: `scanned` counts the bytes looked at (a test holds the bound),
/// and the search for a list's `]` resumes where the previous one stopped (a comment of
/// many `#fevlint:ignore[` without a `]` once cost the square of its length).
fn directive(comment: &str, base: usize, scanned: &mut usize) -> Option<Directive> {
    let skip_ws = |s: &str, mut at: usize, scanned: &mut usize| {
        while s[at..].starts_with([' ', '\t']) {
            at += 1;
            *scanned += 1;
        }
        at
    };
    // The first `]` at or after the previous list's `[`, once looked for (`Some(None)`:
    // there is none). Lists start further right each time, so each byte is searched once.
    let mut close_after: Option<Option<usize>> = None;
    for (hash, _) in comment.match_indices('#') {
        let start = skip_ws(comment, hash + 1, scanned);
        let Some(rest) = comment[start..].strip_prefix("fevlint:") else { continue };
        let at = skip_ws(comment, comment.len() - rest.len(), scanned);
        let Some(rest) = comment[at..].strip_prefix("ignore") else { continue };
        let after = comment.len() - rest.len();
        *scanned += after - hash;
        match rest.chars().next() {
            None | Some(' ' | '\t' | '#' | '\r') => return Some((Span::new(base + start, base + after), None)),
            Some('[') => {
                let found = match close_after {
                    Some(Some(c)) if c >= after => Some(c),
                    Some(None) => None,
                    _ => {
                        let found = comment[after..].find(']').map(|i| after + i);
                        *scanned += found.map_or(comment.len(), |c| c + 1) - after;
                        found
                    }
                };
                close_after = Some(found);
                let Some(close) = found.map(|c| c - after) else { continue };
                let mut codes = Vec::new();
                let mut offset = after + 1;
                for part in rest[1..close].split(',') {
                    let lead = part.len() - part.trim_start().len();
                    let code = part.trim();
                    if !code.is_empty() {
                        let s = base + offset + lead;
                        codes.push((code.to_owned(), Span::new(s, s + code.len())));
                    }
                    offset += part.len() + 1;
                }
                if codes.is_empty() {
                    continue;
                }
                return Some((Span::new(base + start, base + after + close + 1), Some(codes)));
            }
            Some(_) => continue,
        }
    }
    None
}

/// What each suppression dropped: per suppression, one flag per listed code (one flag
/// for a bare `ignore`).
pub type Usage = Vec<Vec<bool>>;

/// Drops the diagnostics the suppressions cover and records which suppression (and
/// which code of it) dropped something.
pub fn apply(text: &str, suppressions: &[Suppression], diagnostics: &mut Vec<Diagnostic>) -> Usage {
    let (keep, usage) = decide(text, suppressions, diagnostics);
    let mut keep = keep.into_iter();
    diagnostics.retain(|_| keep.next().unwrap_or(true));
    usage
}

/// [`apply`] without touching the findings: whether each is kept, and the usage.
pub fn decide<D: std::borrow::Borrow<Diagnostic>>(
    text: &str,
    suppressions: &[Suppression],
    diagnostics: &[D],
) -> (Vec<bool>, Usage) {
    let mut usage: Usage = suppressions.iter().map(|s| vec![false; s.codes.as_ref().map_or(1, Vec::len)]).collect();
    if suppressions.is_empty() {
        return (vec![true; diagnostics.len()], usage);
    }
    let starts: Vec<usize> = lex::lines(text).map(|l| l.span.start).collect();
    // (target line, suppression): a finding meets only its own line's suppressions.
    let mut by_target: Vec<(u32, usize)> =
        suppressions.iter().enumerate().filter_map(|(i, s)| Some((s.target?, i))).collect();
    by_target.sort_unstable();
    let keep = diagnostics
        .iter()
        .map(|d| {
            let d = d.borrow();
            if UNSUPPRESSIBLE.contains(&d.code) {
                return true;
            }
            let line = (starts.partition_point(|&s| s <= d.span.start).max(1) - 1) as u32;
            let mut keep = true;
            let from = by_target.partition_point(|&(t, _)| t < line);
            for &(_, i) in by_target[from..].iter().take_while(|&&(t, _)| t == line) {
                let (s, used) = (&suppressions[i], &mut usage[i]);
                match &s.codes {
                    None => {
                        used[0] = true;
                        keep = false;
                    }
                    Some(codes) => {
                        for (c, u) in codes.iter().zip(used.iter_mut()) {
                            if c.rule.is_some_and(|r| r.code == d.code) {
                                *u = true;
                                keep = false;
                            }
                        }
                    }
                }
            }
            keep
        })
        .collect();
    (keep, usage)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The plain reading: every line lexed, each comment tried.
    fn parse_every_line(text: &str) -> Vec<Suppression> {
        let lines: Vec<lex::Line> = lex::lines(text).collect();
        let blank = |l: &lex::Line| l.code.text(text).bytes().all(lex::is_space);
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let Some(comment) = line.comment else { continue };
            let Some((span, codes)) = directive(comment.text(text), comment.start, &mut 0) else { continue };
            let target = if blank(line) {
                lines[i + 1..]
                    .iter()
                    .position(|l| !(blank(l) && l.comment.is_some()))
                    .map(|j| i + 1 + j)
                    .filter(|&j| !blank(&lines[j]))
            } else {
                Some(i)
            };
            out.push(Suppression::new(i, span, target, codes));
        }
        out
    }

    /// Lexing only the lines that hold `fevlint:` finds what lexing every line finds, on
    /// texts assembled at random from lines that stress it (own-line directives before
    /// comments, blanks and the end; two directives on a line; `fevlint:` in code).
    #[test]
    fn scanning_for_directives_agrees_with_reading_every_line() {
        const PIECES: [&str; 12] = [
            "vfs_read(x64 file)",
            "vfs_read(x64 file)  # fevlint: ignore[N101]",
            "# fevlint: ignore[T404, offset-not-member]",
            "# fevlint: ignore",
            "   # just a comment",
            "",
            "   ",
            "x(u32 a) # fevlint: ignore[N012] # fevlint: ignore[N101]",
            "fevlint: ignore[N101] not a comment",
            "# fevlint:ignore[S001]",
            "ip_rcv(x64 skb) # fevlint: ignore[",
            "\u{e9}(x64 a) # fevlint: ignore[N101]",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..3000 {
            let mut text = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            for k in 0..(state % 9) {
                text.push_str(PIECES[((state >> (4 * k + 8)) % 12) as usize]);
                if (state >> (k + 40)) & 3 != 0 {
                    text.push('\n');
                }
            }
            let (got, want) = (parse(&text), parse_every_line(&text));
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{text:?}");
        }
    }

    fn codes(s: &Suppression, text: &str) -> Option<Vec<String>> {
        s.codes.as_ref().map(|c| c.iter().map(|c| format!("{}={}", c.text, c.span.text(text))).collect())
    }

    #[test]
    fn directives_and_their_targets() {
        let text = "f(int a) # fevlint: ignore[T404, n102]\n\
                    # fevlint: ignore\n# why\ng(int b)\n\
                    #fevlint:ignore[ S001 ] reason # more\n\nh()\n\
                    i() # fevlint: ignored\nj() # note # fevlint: ignore[]\nk() # x # fevlint: ignore[T999,]\n";
        let got: Vec<_> = parse(text).iter().map(|s| (s.line, s.target, s.span.text(text), codes(s, text))).collect();
        assert_eq!(
            got,
            [
                (0, Some(0), "fevlint: ignore[T404, n102]", Some(vec!["T404=T404".into(), "n102=n102".into()])),
                (1, Some(3), "fevlint: ignore", None),
                (4, None, "fevlint:ignore[ S001 ]", Some(vec!["S001=S001".into()])),
                (9, Some(9), "fevlint: ignore[T999,]", Some(vec!["T999=T999".into()])),
            ]
        );
        let s = parse(text);
        assert_eq!(s[0].codes.as_ref().map(|c| c[1].rule.map(|r| r.code)), Some(Some("N102")));
        assert_eq!(s[3].codes.as_ref().map(|c| c[0].rule.is_none()), Some(true));
    }

    /// The directive search looks at each byte of a comment a bounded number of times,
    /// whatever the comment holds: many `#fevlint:ignore[` without a `]` cost the square
    /// of the comment's length before (80,000 of them: seconds per check and per edit).
    #[test]
    fn the_directive_search_is_linear_in_the_comment() {
        for piece in ["#fevlint:ignore[", "# fevlint: ignore[S001", "#fevlint:ignore[]#", "##  #fevlint:"] {
            for n in [100, 1_000, 10_000] {
                let comment = piece.repeat(n);
                let mut scanned = 0;
                let _ = directive(&comment, 0, &mut scanned);
                assert!(
                    scanned <= 2 * comment.len(),
                    "{piece:?} x {n}: {scanned} bytes looked at for {}",
                    comment.len()
                );
            }
        }
        // The same answers as a search from each `[` (a later list's `]`, none at all).
        let text = "#fevlint:ignore[ #fevlint:ignore[N101]";
        let (span, codes) = directive(text, 0, &mut 0).expect("a directive");
        assert_eq!(span.text(text), "fevlint:ignore[ #fevlint:ignore[N101]");
        assert_eq!(
            codes.map(|c| c.into_iter().map(|(c, _)| c).collect::<Vec<_>>()),
            Some(vec!["#fevlint:ignore[N101".to_owned()])
        );
        assert!(directive("#fevlint:ignore[#fevlint:ignore[", 0, &mut 0).is_none());
    }

    /// A line the kernel refuses whole (longer than its write buffer, S004) holds no
    /// directive: 20,000 listed codes on one 100 KB line were 20,000 N103 findings, each
    /// quoting the line (324 MB of human output, 5.4 s, 670 MB).
    #[test]
    fn an_over_long_line_holds_no_directive() {
        let long = format!("# fevlint: ignore[{}]\nvfs_read(x64 file)\n", "S001,".repeat(20_000));
        assert!(parse(&long).is_empty());
        let fits = format!("# fevlint: ignore[{}]\nvfs_read(x64 file)\n", "S001,".repeat(800));
        assert!(fits.lines().next().is_some_and(|l| l.len() <= lex::MAX_LINE_LEN));
        assert_eq!(parse(&fits).first().and_then(|s| s.codes.as_ref()).map(Vec::len), Some(800));
    }
}
