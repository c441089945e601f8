//! ASCII mode (`(?a)`, the module's `ASCII` flag), resolved while parsing: the nodes it makes
//! spell their characters out, so that neither target dialect needs a flag of its own.
//!
//! What the flag changes, as the module does it (checked by the truth cases):
//!
//! * `\w`, `\d`, `\s`, `\h`, `\p{..}` and POSIX classes match only their ASCII members; their
//!   negations (`\W`, `\P{L}`, `[:^alpha:]`) are the complement of that ASCII set, so `(?a)\W`
//!   matches `é`;
//! * case-insensitive matching folds ASCII letters only (`(?ai)k` does not match the Kelvin sign
//!   U+212A, `(?ai)é` does not match `É`); a character class is closed under that folding
//!   before it is negated, except a class of one property or POSIX class alone, which the
//!   module leaves unfolded (`(?ai)\p{Lu}` does not match `a`, `(?ai)[\p{Lu}x]` does);
//! * word boundaries use ASCII word characters ([`super::ast::AssertKind`]'s `Ascii*` kinds).

use std::borrow::Cow;

use super::ast::{Node, Perl, SetItem};

/// Sorted, merged, inclusive code-point ranges.
type Ranges = Vec<(char, char)>;

/// The last code point of ASCII.
const ASCII_MAX: char = '\x7f';

/// A literal `c`: case-insensitive only for an ASCII letter (as a two-character class).
pub(super) fn lit(c: char, ci: bool) -> Node {
    if ci && c.is_ascii_alphabetic() {
        return class(
            false,
            vec![
                (c.to_ascii_lowercase(), c.to_ascii_lowercase()),
                (c.to_ascii_uppercase(), c.to_ascii_uppercase()),
            ],
        );
    }
    Node::Lit { c, ci: false }
}

/// A character class `[..]` (`[^..]` when `negated`) of `items`, read in ASCII mode.
pub(super) fn set(negated: bool, items: &[SetItem], ci: bool) -> Node {
    let mut ranges: Ranges = items.iter().flat_map(item_ranges).collect();
    // The module folds a class made of one property or POSIX class alone (`(?ai)\p{Lu}`,
    // `(?ai)[[:upper:]]`, `(?ai)[^\p{Lu}]`) as if case did not matter to it; with more items
    // (`(?ai)[\p{Lu}x]`) it folds.
    let lone_property = matches!(items, [SetItem::Prop { .. } | SetItem::Ranges { .. }]);
    if ci && !lone_property {
        let folded: Ranges = ranges
            .iter()
            .flat_map(|&r| ascii_case_partners(r))
            .collect();
        ranges.extend(folded);
    }
    class(negated, ranges)
}

/// A class escape outside a set (`\w`, `\p{L}`), read in ASCII mode.
pub(super) fn item(item: SetItem, ci: bool) -> Node {
    set(false, &[item], ci)
}

fn class(negated: bool, ranges: Ranges) -> Node {
    Node::Set {
        negated,
        items: vec![SetItem::Ranges {
            negated: false,
            ranges: Cow::Owned(normalize(ranges)),
        }],
        ci: false,
    }
}

/// The code points of one set item in ASCII mode.
fn item_ranges(item: &SetItem) -> Ranges {
    let clipped = |negated: bool, ranges: Ranges| {
        let ascii = intersect_ascii(&normalize(ranges));
        if negated {
            complement(&ascii)
        } else {
            ascii
        }
    };
    match item {
        SetItem::Char(c) => vec![(*c, *c)],
        SetItem::Range(lo, hi) => vec![(*lo, *hi)],
        SetItem::Perl { kind, negated } => {
            let ranges = match kind {
                Perl::Digit => vec![('0', '9')],
                Perl::Word => vec![('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')],
                Perl::Space => vec![('\t', '\r'), (' ', ' ')],
            };
            clipped(*negated, ranges)
        }
        SetItem::Blank => vec![('\t', '\t'), (' ', ' ')],
        SetItem::Prop { negated, name } => clipped(*negated, property(name)),
        SetItem::Ranges { negated, ranges } => clipped(*negated, ranges.to_vec()),
    }
}

/// The code points of the Unicode property `\p{name}` (regex-syntax's tables; the parser only
/// makes property items of names regex-syntax knows).
fn property(name: &str) -> Ranges {
    use regex_syntax::hir::{Class, HirKind};
    let hir = regex_syntax::Parser::new().parse(&format!("\\p{{{name}}}"));
    match hir.as_ref().map(|h| h.kind()) {
        Ok(HirKind::Class(Class::Unicode(class))) => class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The ASCII letters of `(lo, hi)` in the other case.
fn ascii_case_partners((lo, hi): (char, char)) -> Ranges {
    let mut out = Vec::new();
    for (from_lo, from_hi, to_lo) in [('a', 'z', 'A'), ('A', 'Z', 'a')] {
        let (a, b) = (lo.max(from_lo), hi.min(from_hi));
        if a <= b {
            let shift = |c: char| (to_lo as u8 + (c as u8 - from_lo as u8)) as char;
            out.push((shift(a), shift(b)));
        }
    }
    out
}

fn intersect_ascii(ranges: &[(char, char)]) -> Ranges {
    ranges
        .iter()
        .filter(|(lo, _)| *lo <= ASCII_MAX)
        .map(|&(lo, hi)| (lo, hi.min(ASCII_MAX)))
        .collect()
}

/// Every scalar value outside `ranges` (sorted and merged).
fn complement(ranges: &[(char, char)]) -> Ranges {
    let mut out = Vec::new();
    let mut next = Some('\0');
    for &(lo, hi) in ranges {
        if let Some(start) = next {
            if start < lo {
                out.push((start, before(lo)));
            }
        }
        next = after(hi);
    }
    if let Some(start) = next {
        out.push((start, char::MAX));
    }
    out
}

/// The scalar value before `c` (`c` > NUL), skipping the surrogates.
fn before(c: char) -> char {
    match c {
        '\u{e000}' => '\u{d7ff}',
        c => char::from_u32(c as u32 - 1).unwrap_or('\0'),
    }
}

/// The scalar value after `c`, skipping the surrogates; `None` after `char::MAX`.
fn after(c: char) -> Option<char> {
    match c {
        '\u{d7ff}' => Some('\u{e000}'),
        c => char::from_u32(c as u32 + 1),
    }
}

/// `ranges` sorted, with overlapping and adjacent ranges merged.
fn normalize(mut ranges: Ranges) -> Ranges {
    ranges.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(ranges.len());
    for (lo, hi) in ranges {
        match out.last_mut() {
            Some(last) if after(last.1).is_none_or(|n| lo <= n) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn complement_skips_surrogates_and_ends() {
        assert_eq!(complement(&[]), vec![('\0', char::MAX)]);
        assert_eq!(
            complement(&[('\0', 'a'), ('\u{e000}', char::MAX)]),
            vec![('b', '\u{d7ff}')]
        );
        assert_eq!(
            normalize(vec![
                ('b', 'c'),
                ('a', 'a'),
                ('\u{d7ff}', '\u{d7ff}'),
                ('\u{e000}', '\u{e001}')
            ]),
            vec![('a', 'c'), ('\u{d7ff}', '\u{e001}')]
        );
    }

    #[test]
    fn case_partners_are_ascii_only() {
        assert_eq!(ascii_case_partners(('a', 'c')), vec![('A', 'C')]);
        assert_eq!(
            ascii_case_partners(('X', 'b')),
            vec![('A', 'B'), ('x', 'z')]
        );
        assert_eq!(ascii_case_partners(('é', 'é')), vec![]);
    }
}
