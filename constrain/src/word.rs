//! Delimiters with Unicode word assertions (`\b`, `\B`, `\m`, `\M`, with the Python `regex`
//! module's word characters): their exact languages, and the classes of the characters
//! around them. See docs/word-boundaries.md, "Generating around word boundaries".
//!
//! An assertion inside a delimiter (both neighbouring characters are the delimiter's own) is
//! decided by the delimiter's language alone. One at an edge reads the character before the
//! delimiter (the last one of the text before it, or the start of the text) or the one after
//! it (the first one of what follows, or the end of the text). The language of such a
//! delimiter is built by template-build's product construction
//! ([`template_build::word::language_nfa`], the one the parser's DFAs come from) with a class
//! byte on each side: `ctx · d · tail`. Where the language really depends on a side, the
//! segment's table keeps that byte ([`Marks`]) and the segment graph supplies it from the
//! text actually written ([`crate::graph::Machine::build`] tracks the class of the last
//! character, [`Tracker`], and a pending condition on the next one): the edges are exact too.

use std::sync::OnceLock;

use parser_runtime_core::pychar::word_ranges;
use parser_runtime_core::tables::{CONTEXT_OTHER, CONTEXT_START, CONTEXT_WORD};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

use crate::dfa::{BuildError, Limits, Table, DEAD, START};

/// Bits of a set of classes of the next character: a word character.
pub const NEXT_WORD: u8 = 1;
/// Another character.
pub const NEXT_OTHER: u8 = 2;
/// The end of the text.
pub const NEXT_END: u8 = 4;
/// Anything may follow.
pub const NEXT_ANY: u8 = NEXT_WORD | NEXT_OTHER | NEXT_END;

/// The tail bytes of a language `ctx · d · tail`, with the next-class bit each stands for.
pub const TAILS: [(u8, u8); 3] = [
    (CONTEXT_WORD, NEXT_WORD),
    (CONTEXT_OTHER, NEXT_OTHER),
    (CONTEXT_START, NEXT_END),
];

/// The class bytes of the character before a delimiter ([`Prev::byte`]).
const PREV_BYTES: [u8; 4] = [CONTEXT_START, CONTEXT_WORD, CONTEXT_OTHER, b'\n'];

/// What a segment's table reads besides text: the class byte of the character before its
/// words (`before`: the table's first byte, one of [`Prev::byte`]) and of what follows them
/// (`after`: its last byte, one of [`TAILS`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Marks {
    /// The first byte is the previous character's class.
    pub before: bool,
    /// The last byte is the next character's class (or the end of the text).
    pub after: bool,
}

impl Marks {
    /// Whether the table reads a class byte at all.
    pub fn any(self) -> bool {
        self.before || self.after
    }
}

/// The class of the character before a position, as the product tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prev {
    /// None: the start of the text.
    Start,
    /// A word character.
    Word,
    /// Another character but `\n`.
    Other,
    /// `\n` (which `(?m:^)` reads).
    Newline,
}

impl Prev {
    /// Its byte in a context slot (`tables::context_byte` of such a character).
    pub fn byte(self) -> u8 {
        match self {
            Prev::Start => CONTEXT_START,
            Prev::Word => CONTEXT_WORD,
            Prev::Other => CONTEXT_OTHER,
            Prev::Newline => b'\n',
        }
    }

    /// The class of `c` (`None`: the start of the text).
    pub fn of(c: Option<char>) -> Prev {
        match c {
            None => Prev::Start,
            Some('\n') => Prev::Newline,
            Some(c) if parser_runtime_core::pychar::is_word_char(c) => Prev::Word,
            Some(_) => Prev::Other,
        }
    }

    /// Its bit as a next character ([`NEXT_WORD`] or [`NEXT_OTHER`]; the start is none).
    pub fn next_bit(self) -> u8 {
        match self {
            Prev::Start => 0,
            Prev::Word => NEXT_WORD,
            Prev::Other | Prev::Newline => NEXT_OTHER,
        }
    }
}

/// Whether `byte` is a class byte (no UTF-8 text holds one).
pub fn is_marker(byte: u8) -> bool {
    byte >= CONTEXT_OTHER
}

/// Whether `hir` has a Unicode word assertion (what [`exact`] is for).
pub fn has_word_assertion(hir: &Hir) -> bool {
    template_build::word::needs_product(hir)
}

/// Whether `hir` has an ASCII word assertion (`(?a)\b`: `(?-u:\b)` after translation).
pub fn has_ascii_word_assertion(hir: &Hir) -> bool {
    let looks = hir.properties().look_set();
    looks.contains_word_ascii()
}

/// `hir` with every Unicode word assertion replaced by the empty match: every match of `hir`
/// is one of the result (texts that must hold no match of `hir` may hold none of it).
pub fn relaxed(hir: &Hir) -> Hir {
    match hir.kind() {
        HirKind::Look(look) if has_word_assertion(&Hir::look(*look)) => Hir::empty(),
        HirKind::Repetition(r) => {
            let mut r = r.clone();
            r.sub = Box::new(relaxed(&r.sub));
            Hir::repetition(r)
        }
        HirKind::Capture(c) => {
            let mut c = c.clone();
            c.sub = Box::new(relaxed(&c.sub));
            Hir::capture(c)
        }
        HirKind::Concat(hs) => Hir::concat(hs.iter().map(relaxed).collect()),
        HirKind::Alternation(hs) => Hir::alternation(hs.iter().map(relaxed).collect()),
        _ => hir.clone(),
    }
}

/// The exact language of a delimiter with word assertions, matched as a whole: a table
/// keeping only the class bytes its words depend on, and which.
///
/// Errors: [`BuildError::Regex`] for what the product refuses (a line end `(?m:$)`, ASCII
/// word assertions next to Unicode ones), [`BuildError::TooLarge`] past `limits`.
pub fn exact(hir: &Hir, limits: &Limits) -> Result<(Table, Marks), BuildError> {
    let nfa = template_build::word::language_nfa(hir, limits.max_automaton_bytes).map_err(|p| {
        if p.kind == template_build::TemplateErrorKind::DfaTooLarge {
            BuildError::TooLarge {
                budget: crate::dfa::Budget::AutomatonBytes,
                what: p.reason,
            }
        } else {
            BuildError::Regex(p.reason)
        }
    })?;
    let full = Table::from_nfa(&nfa, limits)?;
    let tails: Vec<u8> = TAILS.iter().map(|&(b, _)| b).collect();
    // A side matters when fixing its byte gives different languages.
    let differs = |tables: Vec<Table>| {
        tables
            .windows(2)
            .any(|pair| !pair[0].same_language(&pair[1]))
    };
    let by_prev = PREV_BYTES
        .iter()
        .map(|&p| fix(&full, Some(&[p]), None, limits))
        .collect::<Result<Vec<_>, _>>()?;
    let by_next = tails
        .iter()
        .map(|&t| fix(&full, None, Some(&[t]), limits))
        .collect::<Result<Vec<_>, _>>()?;
    let marks = Marks {
        before: differs(by_prev),
        after: differs(by_next),
    };
    // A side that does not matter is fixed to any of its bytes.
    let table = fix(
        &full,
        (!marks.before).then_some(&[CONTEXT_OTHER][..]),
        (!marks.after).then_some(&[CONTEXT_OTHER][..]),
        limits,
    )?;
    Ok((table, marks))
}

/// The texts of a table with `marks`: its words without their class bytes, for any class.
///
/// Errors: [`BuildError::TooLarge`] past `limits`.
pub fn text(table: &Table, marks: Marks, limits: &Limits) -> Result<Table, BuildError> {
    let tails: Vec<u8> = TAILS.iter().map(|&(b, _)| b).collect();
    fix(
        table,
        marks.before.then_some(&PREV_BYTES[..]),
        marks.after.then_some(&tails[..]),
        limits,
    )
}

/// `table` (whose words may start with a class byte and end with one) with the first byte
/// read as any of `ctx` and the last as any of `tail` (`None`: that byte stays in the words).
fn fix(
    table: &Table,
    ctx: Option<&[u8]>,
    tail: Option<&[u8]>,
    limits: &Limits,
) -> Result<Table, BuildError> {
    let mut bytes = PREV_BYTES.to_vec();
    bytes.extend(TAILS.iter().map(|&(b, _)| b));
    let (classes, stride) = table.classes_with(&bytes);
    // Keys: the table's states, and whether the first byte is still to come.
    let start = match ctx {
        Some(list) => (states(list.iter().map(|&b| table.next(START, b))), false),
        None => (vec![START], true),
    };
    let mut keys = Vec::new();
    Table::determinize_keyed(
        classes,
        stride,
        start,
        |(set, first): &(Vec<u32>, bool), byte| {
            if !first && tail.is_some() && is_marker(byte) {
                return None;
            }
            let next = states(set.iter().map(|&s| table.next(s, byte)));
            (!next.is_empty()).then_some((next, false))
        },
        |(set, first): &(Vec<u32>, bool)| {
            !first
                && set.iter().any(|&s| match tail {
                    Some(list) => list.iter().any(|&t| table.is_accepting(table.next(s, t))),
                    None => table.is_accepting(s),
                })
        },
        limits,
        &mut keys,
    )
}

/// The live states among `it`, sorted, without duplicates.
fn states(it: impl Iterator<Item = u32>) -> Vec<u32> {
    let mut out: Vec<u32> = it.filter(|&s| s != DEAD).collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// `text` (a text language) with the class bytes of `marks` around it: any previous class
/// before, any next class after.
///
/// Errors: [`BuildError::TooLarge`] past `limits`.
pub fn wrap(text: &Table, marks: Marks, limits: &Limits) -> Result<Table, BuildError> {
    if !marks.any() {
        return Ok(text.clone());
    }
    let mut bytes = PREV_BYTES.to_vec();
    bytes.extend(TAILS.iter().map(|&(b, _)| b));
    let (classes, stride) = text.classes_with(&bytes);
    // Keys: (phase, state): 0 before the class byte, 1 in the text, 2 after the tail byte.
    let start = if marks.before {
        (0u8, START)
    } else {
        (1, START)
    };
    let mut keys = Vec::new();
    Table::determinize_keyed(
        classes,
        stride,
        start,
        |&(phase, state): &(u8, u32), byte| match phase {
            0 => PREV_BYTES.contains(&byte).then_some((1, START)),
            1 if is_marker(byte) => (marks.after && text.is_accepting(state)).then_some((2, START)),
            1 => {
                let t = text.next(state, byte);
                (t != DEAD).then_some((1, t))
            }
            _ => None,
        },
        |&(phase, state): &(u8, u32)| match phase {
            1 => !marks.after && text.is_accepting(state),
            2 => true,
            _ => false,
        },
        limits,
        &mut keys,
    )
}

/// One character of the word class, and one of any class: walked side by side from a
/// character's first byte, they tell when it ends and whether it is a word character.
fn classifiers() -> &'static (Table, Table) {
    &classifier_data().0
}

/// [`classifiers`], and the any-character table's distances to its end.
fn classifier_data() -> &'static ((Table, Table), Vec<u32>) {
    static TABLES: OnceLock<((Table, Table), Vec<u32>)> = OnceLock::new();
    TABLES.get_or_init(|| {
        let ranges = word_ranges().filter_map(|(lo, hi)| {
            let lo = char::from_u32(lo).or_else(|| char::from_u32(0xE000))?;
            let hi = char::from_u32(hi).or_else(|| char::from_u32(0xD7FF))?;
            (lo <= hi).then(|| ClassUnicodeRange::new(lo, hi))
        });
        let word = Hir::class(Class::Unicode(ClassUnicode::new(ranges)));
        let any = Hir::dot(regex_syntax::hir::Dot::AnyChar);
        let limits = Limits::default();
        let any = Table::from_hir(&any, &limits).expect("any character");
        let distances = any.distances();
        (
            (
                Table::from_hir(&word, &limits).expect("the word class"),
                any,
            ),
            distances,
        )
    })
}

/// The tables [`Tracker`] reads, for merging byte classes.
pub(crate) fn tracker_tables() -> [&'static Table; 2] {
    let (word, any) = classifiers();
    [word, any]
}

/// What the segment graph knows of the text read so far, for class bytes: the class of the
/// last character, or how far into a character it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tracker {
    /// At a character boundary; the previous character's class (`None`: not tracked).
    At(Option<Prev>),
    /// Inside a character, its bytes so far walked by the two [`classifiers`].
    Inside {
        /// State in the word-character table.
        word: u32,
        /// State in the any-character table.
        any: u32,
    },
    /// Inside a character whose class is not tracked: continuation bytes still to come.
    Skip(u8),
}

impl Tracker {
    /// After `byte`; with the class of the character it ends, if it ends one (`Some(None)`:
    /// one whose class was not tracked).
    pub fn step(self, byte: u8) -> (Tracker, Option<Option<Prev>>) {
        let (word_t, any_t) = classifiers();
        let ended = |c: Prev| (Tracker::At(Some(c)), Some(Some(c)));
        match self {
            Tracker::At(_) if byte < 0x80 => ended(Prev::of(Some(byte as char))),
            Tracker::At(_) => {
                let (word, any) = (word_t.next(START, byte), any_t.next(START, byte));
                (Tracker::Inside { word, any }, None)
            }
            Tracker::Inside { word, any } => {
                let (word, any) = (word_t.next(word, byte), any_t.next(any, byte));
                if any == DEAD {
                    // Not UTF-8 (no table of the graph reads it).
                    (Tracker::At(None), Some(None))
                } else if any_t.is_accepting(any) {
                    let word = word != DEAD && word_t.is_accepting(word);
                    ended(if word { Prev::Word } else { Prev::Other })
                } else {
                    (Tracker::Inside { word, any }, None)
                }
            }
            Tracker::Skip(0) | Tracker::Skip(1) => (Tracker::At(None), Some(None)),
            Tracker::Skip(n) => (Tracker::Skip(n - 1), None),
        }
    }

    /// The same position with the class forgotten (when nothing will read it).
    pub fn forget(self) -> Tracker {
        match self {
            Tracker::At(_) => Tracker::At(None),
            Tracker::Inside { any, .. } => {
                // Continuation bytes left: the any-character table's distance to its end.
                let left = classifier_data().1[any as usize];
                Tracker::Skip(left.min(3) as u8)
            }
            skip => skip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &str) -> Hir {
        regex_syntax::Parser::new().parse(p).unwrap()
    }

    fn lang(p: &str) -> (Table, Marks) {
        exact(&parse(p), &Limits::default()).unwrap()
    }

    /// Whether `text` is a word of `table` with `prev` before it and `next` after it.
    fn holds(t: &(Table, Marks), prev: Prev, text: &str, next: u8) -> bool {
        let (table, marks) = t;
        let mut s = START;
        if marks.before {
            s = table.next(s, prev.byte());
        }
        s = table.walk(s, text.as_bytes());
        if marks.after {
            s = table.next(s, next);
        }
        s != DEAD && table.is_accepting(s)
    }

    #[test]
    fn only_the_sides_that_matter_are_marked() {
        let (w, o, e) = (CONTEXT_WORD, CONTEXT_OTHER, CONTEXT_START);
        let t = lang(r"\bTHINK:");
        let marks = |before, after| Marks { before, after };
        assert_eq!(t.1, marks(true, false));
        assert!(holds(&t, Prev::Start, "THINK:", w) && holds(&t, Prev::Other, "THINK:", w));
        assert!(!holds(&t, Prev::Word, "THINK:", o));
        let t = lang(r"END\b");
        assert_eq!(t.1, marks(false, true));
        assert!(holds(&t, Prev::Word, "END", o) && holds(&t, Prev::Word, "END", e));
        assert!(!holds(&t, Prev::Word, "END", w));
        // Interior assertions only: no class byte, the language is exact by itself.
        let t = lang(r#"<invoke\b[^>]*?\bname="f">"#);
        assert_eq!(t.1, marks(false, false));
        assert!(holds(&t, Prev::Word, r#"<invoke name="f">"#, w));
        assert!(holds(&t, Prev::Word, r#"<invoke id="1" name="f">"#, w));
        assert!(!holds(&t, Prev::Word, r#"<invoke_x name="f">"#, w));
        assert!(!holds(&t, Prev::Word, r#"<invoke xname="f">"#, w));
        assert!(!holds(&t, Prev::Word, r#"<invokeé name="f">"#, w));
        assert!(holds(&t, Prev::Word, r#"<invoke é name="f">"#, w));
        assert!(!holds(&t, Prev::Word, r#"<invoke éname="f">"#, w));
        assert!(holds(&t, Prev::Word, r#"<invoke 東·name="f">"#, w));
        let t = lang(r"\B--\B");
        assert!(holds(&t, Prev::Start, "--", e) && holds(&t, Prev::Other, "--", o));
        assert!(!holds(&t, Prev::Word, "--", o) && !holds(&t, Prev::Other, "--", w));
        let t = lang(r"(?m)^\bTODO");
        assert!(holds(&t, Prev::Newline, "TODO", o) && holds(&t, Prev::Start, "TODO", o));
        assert!(!holds(&t, Prev::Other, "TODO", o));
    }

    #[test]
    fn text_and_wrap_undo_each_other() {
        let limits = Limits::default();
        let (t, marks) = lang(r"\bEND\b|x\B");
        let plain = text(&t, marks, &limits).unwrap();
        assert!(plain.matches(b"END") && plain.matches(b"x") && !plain.matches(b"ENDx"));
        let wrapped = wrap(&plain, marks, &limits).unwrap();
        let both = wrapped.intersect(&t, &limits).unwrap();
        // The same words after each class byte the graph writes.
        for p in PREV_BYTES {
            let after = |t: &Table| fix(t, Some(&[p]), None, &limits).unwrap();
            assert!(after(&both).same_language(&after(&t)), "{p:#x}");
        }
    }

    #[test]
    fn the_tracker_classifies_characters() {
        let classes = |text: &str| {
            let mut t = Tracker::At(Some(Prev::Start));
            let mut out = Vec::new();
            for &b in text.as_bytes() {
                let (next, ended) = t.step(b);
                t = next;
                if let Some(c) = ended {
                    out.push(c);
                }
            }
            out
        };
        let (w, o) = (Some(Prev::Word), Some(Prev::Other));
        assert_eq!(
            classes("aé 東·\n_"),
            [w, w, o, w, o, Some(Prev::Newline), w]
        );
        // Forgotten inside a character: its end is still found.
        let (t, _) = Tracker::At(None).step("東".as_bytes()[0]);
        let (t, e) = t.forget().step("東".as_bytes()[1]);
        assert_eq!(e, None);
        let (t, e) = t.step("東".as_bytes()[2]);
        assert_eq!((t, e), (Tracker::At(None), Some(None)));
    }
}
