//! Look-behind for the DFA engine: a look-behind of one character at the start of a branch
//! (`(?<=\])`, `(?<![\w])`, `(?<!\\)`), read from the character before the match.
//!
//! A DFA with a context slot (docs/word-boundaries.md) first reads one byte for the character
//! before the walk's start ([`parser_runtime_core::tables::context_byte`]): an ASCII character
//! as itself, another one as its class ([`CONTEXT_WORD`], [`CONTEXT_OTHER`] by the `regex`
//! module's `\w`), and [`CONTEXT_START`] at the start of the text. A look-behind of one
//! character is exact as the set of slot bytes it admits, provided its class takes either all
//! or none of the non-ASCII word characters, and all or none of the other non-ASCII
//! characters (`\]`, `[^\\]`, `\w`, `\W`, `.`); a class that takes some of them (`é`,
//! `[一-龥]`, `\d`, `\s`) cannot be told apart by the slot and is refused, saying why.

use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

use parser_runtime_core::pychar::word_ranges;
use parser_runtime_core::tables::{CONTEXT_OTHER, CONTEXT_START, CONTEXT_WORD};

use super::ast::{collect_names, look_opener, Node, Span};
use super::emit::{emit, Target};
use super::{Construct, RegexIssue, RegexIssueKind};

/// How many items at the start of an alternative are look-behinds.
pub(super) fn leading(items: &[Node]) -> usize {
    items
        .iter()
        .take_while(|n| matches!(n, Node::Look { behind: true, .. }))
        .count()
}

/// The slot bytes (ascending) that the leading look-behinds `looks` (see [`leading`]) all
/// admit for the character before the match.
///
/// Errors ([`Construct::LookBehind`]): a look-behind that is not one character wide, whose
/// class takes only some non-ASCII characters of a class, or holds a named group.
pub(super) fn slot_bytes(pattern: &str, looks: &[Node]) -> Result<Vec<u8>, RegexIssue> {
    let mut allowed = [true; 256];
    for look in looks {
        let Node::Look {
            behind: true,
            negated,
            body,
            span,
        } = look
        else {
            continue;
        };
        let admits = one(pattern, *negated, body, *span)?;
        for (a, b) in allowed.iter_mut().zip(admits) {
            *a &= b;
        }
    }
    Ok(slot_alphabet().filter(|&b| allowed[b as usize]).collect())
}

/// Every byte a context slot can read.
fn slot_alphabet() -> impl Iterator<Item = u8> {
    (0..=0x7Fu8).chain([CONTEXT_OTHER, CONTEXT_WORD, CONTEXT_START])
}

/// The slot bytes one look-behind admits (indexed by byte).
fn one(pattern: &str, negated: bool, body: &Node, span: Span) -> Result<[bool; 256], RegexIssue> {
    let opener = look_opener(true, negated);
    let refuse = |why: String| {
        RegexIssue::new(
            RegexIssueKind::Unsupported(Construct::LookBehind),
            format!("look-behind `{opener}` {why}"),
            Some(span.0),
        )
    };
    let mut names = Vec::new();
    collect_names(body, &mut names);
    if let Some(name) = names.first() {
        return Err(refuse(format!(
            "holds the named group `{name}` (its capture cannot be extracted by the DFA engine)"
        )));
    }
    let text = emit(pattern, body, Target::Dfa)?;
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .dot_matches_new_line(true)
        .build()
        .parse(&text)
        .map_err(|e| refuse(format!("body `{text}` is refused by regex-syntax: {e}")))?;
    let class = match width_one(&hir) {
        Some(class) => class,
        None if matches!(hir.kind(), HirKind::Empty) => {
            // `(?<=)` holds everywhere, `(?<!)` nowhere.
            return Ok([!negated; 256]);
        }
        None => {
            return Err(refuse(
                "is supported by the DFA engine only for one character (it reads the single \
                 character before the match)"
                    .to_string(),
            ))
        }
    };
    let (word, other) = non_ascii_kinds(&class).ok_or_else(|| {
        let first = class
            .ranges()
            .iter()
            .find(|r| !r.end().is_ascii())
            .map(|r| r.start().max('\u{80}'));
        let named = first.map_or(String::new(), |c| {
            format!(" (such as U+{:04X} `{c}`)", u32::from(c))
        });
        refuse(format!(
            "takes some non-ASCII characters{named} of a kind and not others: the DFA engine \
             reads the character before the match as itself when it is ASCII and only as a \
             word or non-word character otherwise (a class of ASCII characters, `\\w`, `\\W` \
             or a negated ASCII class is supported)"
        ))
    })?;
    let mut admits = [false; 256];
    for b in 0..=0x7Fu8 {
        admits[b as usize] = holds(&class, char::from(b));
    }
    admits[CONTEXT_WORD as usize] = word;
    admits[CONTEXT_OTHER as usize] = other;
    if negated {
        for a in admits.iter_mut() {
            *a = !*a;
        }
    }
    Ok(admits)
}

/// The class of a body that reads exactly one character (a class, a one-character literal, in
/// unnamed groups), or `None`.
fn width_one(hir: &Hir) -> Option<ClassUnicode> {
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => Some(class.clone()),
        HirKind::Literal(lit) => {
            let text = std::str::from_utf8(&lit.0).ok()?;
            let mut chars = text.chars();
            let c = chars.next()?;
            chars
                .next()
                .is_none()
                .then(|| ClassUnicode::new([ClassUnicodeRange::new(c, c)]))
        }
        HirKind::Capture(cap) => width_one(&cap.sub),
        _ => None,
    }
}

fn holds(class: &ClassUnicode, c: char) -> bool {
    class
        .ranges()
        .iter()
        .any(|r| r.start() <= c && c <= r.end())
}

/// Whether `class` takes the non-ASCII word characters and the other non-ASCII characters:
/// `(word, other)`, or `None` when it takes only some of either kind. The word characters are
/// the `regex` module's (`pychar`); regex-syntax's own `\w` table (what a `\w` in the body is
/// translated to) counts as the same class.
fn non_ascii_kinds(class: &ClassUnicode) -> Option<(bool, bool)> {
    let non_ascii = ClassUnicode::new([ClassUnicodeRange::new('\u{80}', char::MAX)]);
    let mut taken = class.clone();
    taken.intersect(&non_ascii);
    if taken.ranges().is_empty() {
        return Some((false, false));
    }
    if taken == non_ascii {
        return Some((true, true));
    }
    for word in [python_word(), syntax_word()] {
        let mut word_na = word;
        word_na.intersect(&non_ascii);
        if taken == word_na {
            return Some((true, false));
        }
        let mut other_na = non_ascii.clone();
        other_na.difference(&word_na);
        if taken == other_na {
            return Some((false, true));
        }
    }
    None
}

/// The `regex` module's word characters as a class.
fn python_word() -> ClassUnicode {
    ClassUnicode::new(word_ranges().filter_map(|(lo, hi)| {
        let lo = char::from_u32(lo)?;
        let hi = char::from_u32(hi)?;
        Some(ClassUnicodeRange::new(lo, hi))
    }))
}

/// regex-syntax's Unicode `\w`.
fn syntax_word() -> ClassUnicode {
    match regex_syntax::parse(r"\w").map(|h| h.into_kind()) {
        Ok(HirKind::Class(Class::Unicode(class))) => class,
        _ => ClassUnicode::empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::to_dfa;
    use super::*;

    fn bytes(pattern: &str) -> Vec<u8> {
        let dp = to_dfa(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        dp.branches[0].behind.clone().expect("a look-behind")
    }

    fn ascii_except(skip: &[u8]) -> Vec<u8> {
        (0..=0x7Fu8).filter(|b| !skip.contains(b)).collect()
    }

    #[test]
    fn one_character_classes_become_slot_bytes() {
        assert_eq!(bytes(r"(?<=\])x"), vec![b']']);
        assert_eq!(bytes(r"(?<=\]|\))x"), vec![b')', b']']);
        let mut not_backslash = ascii_except(b"\\");
        not_backslash.extend([CONTEXT_OTHER, CONTEXT_WORD, CONTEXT_START]);
        assert_eq!(bytes(r#"(?<!\\)""#), not_backslash);
        // `[^\\]` takes every other character, but not the start of the text.
        assert_eq!(
            bytes(r#"(?<=[^\\])""#),
            not_backslash[..not_backslash.len() - 1]
        );
        let words: Vec<u8> = (0..=0x7Fu8)
            .filter(|&b| b.is_ascii_alphanumeric() || b == b'_')
            .collect();
        let mut not_word = ascii_except(&words);
        not_word.extend([CONTEXT_OTHER, CONTEXT_START]);
        assert_eq!(bytes(r"(?<![\w])x"), not_word);
        let mut word = words.clone();
        word.push(CONTEXT_WORD);
        assert_eq!(bytes(r"(?<=\w)x"), word);
        // ASCII mode: `\w` takes no non-ASCII character.
        assert_eq!(bytes(r"(?a)(?<=\w)x"), words);
        // Two look-behinds: both hold.
        assert_eq!(bytes(r"(?<=\w)(?<!_)x"), {
            let mut w = words.clone();
            w.retain(|&b| b != b'_');
            w.push(CONTEXT_WORD);
            w
        });
    }

    #[test]
    fn refusals_say_why() {
        for (pattern, why, at) in [
            (r"(?<=ab)x", "only for one character", 0),
            (r"(?<=é)x", "non-ASCII", 0),
            (r"(?<=\d)x", "non-ASCII", 0),
            (r"(?<=(?P<n>a))x", "named group", 0),
            (r"x(?<=x)", "at the start", 1),
            (r"(?:(?<=a)x)+", "at the start", 3),
        ] {
            let e = to_dfa(pattern).expect_err(pattern);
            assert_eq!(
                e.kind,
                RegexIssueKind::Unsupported(Construct::LookBehind),
                "{pattern}: {e}"
            );
            assert!(e.message.contains(why), "{pattern}: {e}");
            assert_eq!(e.offset, Some(at), "{pattern}: {e}");
        }
    }
}
