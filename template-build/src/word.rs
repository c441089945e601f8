//! Unicode word assertions (`\b`, `\B`, `\b{start}`, `\b{end}`, and their half forms) compiled
//! into DFAs with the Python `regex` module's word characters
//! ([`parser_runtime_core::pychar::word_ranges`]). See docs/word-boundaries.md.
//!
//! regex-automata's DFAs decide only ASCII word boundaries. Here the pattern's syntax tree is
//! first turned into a small NFA over characters ([`CharNfa`]); its states are then explored
//! together with the class of the previous character and the set of next characters the
//! assertions passed so far admit ([`Product`]), which removes every word assertion, and the
//! result is assembled as a Thompson NFA over bytes and determinized by regex-automata. A
//! condition left at a match is checked on the next character: such a match is reported one
//! character late, by the DFA's second pattern (its end is the start of the last character
//! read; the runtime corrects it, `RouteDfa::delayed`). A branch whose assertion can look before
//! the walk's start reads that character first (the context slot: one byte, see
//! [`parser_runtime_core::tables::context_byte`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use parser_runtime_core::pychar::word_ranges;
use parser_runtime_core::tables::{CONTEXT_OTHER, CONTEXT_START, CONTEXT_WORD};
use regex_automata::dfa::{dense, Automaton};
use regex_automata::nfa::thompson::{self, Transition};
use regex_automata::util::look::Look as NfaLook;
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use regex_automata::Anchored;
use regex_syntax::hir::{Class, Hir, HirKind, Look};
use regex_syntax::utf8::Utf8Sequences;

use crate::error::{Problem, TemplateErrorKind as Kind};

/// The most character-NFA states a pattern may expand to (counted repetitions are unrolled).
const MAX_CHAR_STATES: usize = 100_000;

/// Whether a syntax tree has an assertion only this module compiles (a Unicode word
/// assertion).
pub fn needs_product(hir: &Hir) -> bool {
    hir.properties().look_set().contains_word_unicode()
}

// ------------------------------------------------------------------------------------------
// The character NFA.

/// A state of the character NFA.
#[derive(Debug, Clone)]
enum Node {
    /// Reads one character of `ranges` (inclusive code points, ascending, disjoint).
    Class {
        ranges: Vec<(u32, u32)>,
        next: usize,
    },
    /// Epsilon transitions, in priority order.
    Split(Vec<usize>),
    /// A zero-width assertion.
    Look { look: Look, next: usize },
    /// The match.
    Match,
}

/// An NFA over characters built from a regex-syntax tree: Python's priority is the order of
/// each [`Node::Split`]'s alternatives. Captures are dropped.
struct CharNfa {
    nodes: Vec<Node>,
}

impl CharNfa {
    fn build(hir: &Hir) -> Result<(Self, usize), Problem> {
        let mut nfa = CharNfa {
            nodes: vec![Node::Match],
        };
        let start = nfa.compile(hir, 0)?;
        Ok((nfa, start))
    }

    fn push(&mut self, node: Node) -> Result<usize, Problem> {
        if self.nodes.len() >= MAX_CHAR_STATES {
            return Err(Problem::new(
                Kind::DfaTooLarge,
                format!(
                    "the pattern expands to more than {MAX_CHAR_STATES} states around its word \
                     boundaries"
                ),
            ));
        }
        self.nodes.push(node);
        Ok(self.nodes.len() - 1)
    }

    /// A state reading one character of `ranges`, then going to `next`.
    fn class(
        &mut self,
        ranges: impl Iterator<Item = (u32, u32)>,
        next: usize,
    ) -> Result<usize, Problem> {
        self.push(Node::Class {
            ranges: ranges.collect(),
            next,
        })
    }

    /// The start of `hir` followed by `next`.
    fn compile(&mut self, hir: &Hir, next: usize) -> Result<usize, Problem> {
        match hir.kind() {
            HirKind::Empty => Ok(next),
            HirKind::Literal(lit) => {
                let text =
                    std::str::from_utf8(&lit.0).map_err(|_| unsupported("a byte literal"))?;
                let mut cont = next;
                for c in text.chars().rev() {
                    let cp = u32::from(c);
                    cont = self.push(Node::Class {
                        ranges: vec![(cp, cp)],
                        next: cont,
                    })?;
                }
                Ok(cont)
            }
            HirKind::Class(Class::Unicode(class)) => {
                let ranges = class.ranges().iter().map(|r| (r.start(), r.end()));
                self.class(ranges.map(|(lo, hi)| (u32::from(lo), u32::from(hi))), next)
            }
            HirKind::Class(Class::Bytes(class)) => {
                if class.ranges().iter().any(|r| r.end() > 0x7F) {
                    return Err(unsupported("a non-ASCII byte class"));
                }
                let ranges = class.ranges().iter().map(|r| (r.start(), r.end()));
                self.class(ranges.map(|(lo, hi)| (u32::from(lo), u32::from(hi))), next)
            }
            HirKind::Look(look) => self.push(Node::Look { look: *look, next }),
            HirKind::Capture(cap) => self.compile(&cap.sub, next),
            HirKind::Concat(items) => {
                let mut cont = next;
                for item in items.iter().rev() {
                    cont = self.compile(item, cont)?;
                }
                Ok(cont)
            }
            HirKind::Alternation(alts) => {
                let starts = alts
                    .iter()
                    .map(|alt| self.compile(alt, next))
                    .collect::<Result<Vec<_>, _>>()?;
                self.push(Node::Split(starts))
            }
            HirKind::Repetition(rep) => {
                let order = |body: usize, exit: usize| {
                    if rep.greedy {
                        vec![body, exit]
                    } else {
                        vec![exit, body]
                    }
                };
                let mut cont = next;
                match rep.max {
                    None => {
                        let hub = self.push(Node::Split(Vec::new()))?;
                        let body = self.compile(&rep.sub, hub)?;
                        self.nodes[hub] = Node::Split(order(body, next));
                        cont = hub;
                    }
                    Some(max) => {
                        for _ in rep.min..max {
                            let body = self.compile(&rep.sub, cont)?;
                            cont = self.push(Node::Split(order(body, next)))?;
                        }
                    }
                }
                for _ in 0..rep.min {
                    cont = self.compile(&rep.sub, cont)?;
                }
                Ok(cont)
            }
        }
    }

    /// Per state: whether an assertion that reads the previous character is reachable from it
    /// without reading a character (`prev_looks` says which assertions do).
    fn prev_sensitive(&self, prev_looks: impl Fn(Look) -> bool) -> Vec<bool> {
        let n = self.nodes.len();
        let mut sensitive = vec![false; n];
        // Fixed point: few iterations (epsilon paths are short).
        loop {
            let mut changed = false;
            for i in 0..n {
                if sensitive[i] {
                    continue;
                }
                let now = match &self.nodes[i] {
                    Node::Look { look, next } => prev_looks(*look) || sensitive[*next],
                    Node::Split(alts) => alts.iter().any(|&a| sensitive[a]),
                    Node::Class { .. } | Node::Match => false,
                };
                if now {
                    sensitive[i] = true;
                    changed = true;
                }
            }
            if !changed {
                return sensitive;
            }
        }
    }
}

fn unsupported(what: &str) -> Problem {
    Problem::new(
        Kind::DfaUnsupported,
        format!("{what} is not supported in a pattern with a word boundary"),
    )
}

/// Whether an assertion reads the previous character (with a context slot, `\A` and `(?m:^)`
/// do too).
fn reads_prev(look: Look, context: bool) -> bool {
    match look {
        Look::WordUnicode
        | Look::WordUnicodeNegate
        | Look::WordStartUnicode
        | Look::WordEndUnicode
        | Look::WordStartHalfUnicode => true,
        Look::Start | Look::StartLF => context,
        _ => false,
    }
}

// ------------------------------------------------------------------------------------------
// The product.

/// The class of the previous character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Prev {
    /// The start of the text (only with a context slot and a `\A` or `(?m:^)`).
    Start,
    /// `\n` (only with a context slot and a `(?m:^)`).
    Newline,
    /// A word character.
    Word,
    /// Any other character (and, when not told apart, the start of the text and `\n`).
    Other,
}

impl Prev {
    fn is_word(self) -> bool {
        self == Prev::Word
    }
}

/// Next-character classes a condition admits: a word character, another character, the end.
const NEXT_WORD: u8 = 1;
const NEXT_OTHER: u8 = 2;
const NEXT_END: u8 = 4;
const NEXT_ANY: u8 = NEXT_WORD | NEXT_OTHER | NEXT_END;

/// Characters of one class: what `prev` becomes after one, and its next-character class.
struct Part {
    ranges: Vec<(u32, u32)>,
    prev: Prev,
    next: u8,
}

/// The word characters as code point ranges (pychar's table).
fn word_set() -> &'static [(u32, u32)] {
    static SET: OnceLock<Vec<(u32, u32)>> = OnceLock::new();
    SET.get_or_init(|| word_ranges().collect())
}

/// `ranges` intersected with `set` (both ascending, disjoint) or, `inside` false, with its
/// complement.
fn split_ranges(ranges: &[(u32, u32)], set: &[(u32, u32)], inside: bool) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &(lo, hi) in ranges {
        let mut at = lo;
        // The first set range that may overlap [lo, hi].
        let mut i = set.partition_point(|&(_, e)| e < lo);
        while at <= hi {
            match set.get(i) {
                Some(&(s, e)) if s <= hi => {
                    if s > at && !inside {
                        out.push((at, s - 1));
                    }
                    let (a, b) = (s.max(at), e.min(hi));
                    if inside && a <= b {
                        out.push((a, b));
                    }
                    if e >= hi {
                        break;
                    }
                    at = e + 1;
                    i += 1;
                }
                _ => {
                    if !inside {
                        out.push((at, hi));
                    }
                    break;
                }
            }
        }
    }
    out
}

/// The union of two range sets (each ascending, disjoint), ascending, adjacent ranges joined.
fn union(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut all: Vec<(u32, u32)> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(all.len());
    for (lo, hi) in all {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

/// `ranges` without `cp`.
fn without(ranges: &[(u32, u32)], cp: u32) -> Vec<(u32, u32)> {
    split_ranges(ranges, &[(cp, cp)], false)
}

/// Whether `ranges` holds `cp`.
fn holds(ranges: &[(u32, u32)], cp: u32) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= cp && cp <= hi)
}

/// A byte trie of UTF-8 sequences, its leaves NFA states.
#[derive(Default)]
struct Trie {
    children: Vec<(u8, u8, Child)>,
}

enum Child {
    Leaf(StateID),
    Node(Trie),
}

impl Trie {
    /// Adds every character of `ranges` with the leaf `target`.
    fn add(&mut self, ranges: &[(u32, u32)], target: StateID) {
        for &(lo, hi) in ranges {
            let Some((lo, hi)) = scalar_range(lo, hi) else {
                continue;
            };
            for seq in Utf8Sequences::new(lo, hi) {
                self.insert(seq.as_slice(), target);
            }
        }
    }

    /// Adds the byte range `lo..=hi` as a one-byte sequence with the leaf `target`.
    fn add_byte(&mut self, lo: u8, hi: u8, target: StateID) {
        self.children.push((lo, hi, Child::Leaf(target)));
    }

    fn insert(&mut self, seq: &[regex_syntax::utf8::Utf8Range], target: StateID) {
        let Some((first, rest)) = seq.split_first() else {
            return;
        };
        if rest.is_empty() {
            self.children
                .push((first.start, first.end, Child::Leaf(target)));
            return;
        }
        let found = self.children.iter_mut().find(|(lo, hi, child)| {
            (*lo, *hi) == (first.start, first.end) && matches!(child, Child::Node(_))
        });
        match found {
            Some((_, _, Child::Node(node))) => node.insert(rest, target),
            _ => {
                let mut node = Trie::default();
                node.insert(rest, target);
                self.children
                    .push((first.start, first.end, Child::Node(node)));
            }
        }
    }
}

/// The scalar values of the code points `lo..=hi` as a char range (`None` if there are none):
/// an end in the surrogates moves to the nearest scalar value inside the range.
fn scalar_range(lo: u32, hi: u32) -> Option<(char, char)> {
    let lo = if (0xD800..=0xDFFF).contains(&lo) {
        0xE000
    } else {
        lo
    };
    let hi = if (0xD800..=0xDFFF).contains(&hi) {
        0xD7FF
    } else {
        hi.min(0x10FFFF)
    };
    let (lo, hi) = (char::from_u32(lo)?, char::from_u32(hi)?);
    (lo <= hi).then_some((lo, hi))
}

/// Explores `(character NFA state, previous class, admitted next classes)` triples and
/// assembles the byte NFA.
struct Product<'a> {
    nodes: &'a [Node],
    /// Per node: whether the previous character's class matters there.
    sensitive: Vec<bool>,
    context: bool,
    /// The language form ([`language_nfa`]): a match reads the class byte of the next
    /// character (or of the end of the text) instead of the character itself.
    tail: bool,
    /// Prev classes told apart: `Start` (for `\A`, `(?m:^)`), `Newline` (for `(?m:^)`).
    split_start: bool,
    split_newline: bool,
    b: thompson::Builder,
    states: HashMap<(usize, Prev, u8), StateID>,
    work: Vec<(usize, Prev, u8, StateID)>,
    shared: HashMap<Vec<Transition>, StateID>,
    fail: StateID,
    match_now: StateID,
    /// Stands for the delayed match (patched once the second pattern exists).
    match_delayed: StateID,
    delayed_used: bool,
}

fn nfa_error(e: thompson::BuildError) -> Problem {
    match e.size_limit() {
        Some(limit) => Problem::new(
            Kind::DfaTooLarge,
            format!(
                "{e}: a delimiter's NFA may use at most {limit} bytes \
                 (compile::DFA_SIZE_LIMIT; in constrain, Limits::max_automaton_bytes)"
            ),
        ),
        None => Problem::new(Kind::DfaUnsupported, e.to_string()),
    }
}

impl Product<'_> {
    fn state(&mut self, node: usize, prev: Prev, next: u8) -> Result<StateID, Problem> {
        let prev = if self.sensitive[node] {
            prev
        } else {
            Prev::Other
        };
        let key = (node, prev, next);
        if let Some(&id) = self.states.get(&key) {
            return Ok(id);
        }
        let id = self.b.add_empty().map_err(nfa_error)?;
        self.states.insert(key, id);
        self.work.push((node, prev, next, id));
        Ok(id)
    }

    /// `ranges` split by the class of their characters (word, other, and `\n` when told
    /// apart).
    fn parts(&self, ranges: &[(u32, u32)]) -> Vec<Part> {
        let words = split_ranges(ranges, word_set(), true);
        let mut others = split_ranges(ranges, word_set(), false);
        let mut out = Vec::new();
        if self.split_newline && holds(&others, u32::from(b'\n')) {
            others = without(&others, u32::from(b'\n'));
            out.push(Part {
                ranges: vec![(0x0A, 0x0A)],
                prev: Prev::Newline,
                next: NEXT_OTHER,
            });
        }
        if !words.is_empty() {
            out.push(Part {
                ranges: words,
                prev: Prev::Word,
                next: NEXT_WORD,
            });
        }
        if !others.is_empty() {
            out.push(Part {
                ranges: others,
                prev: Prev::Other,
                next: NEXT_OTHER,
            });
        }
        out
    }

    /// The NFA state of a byte trie (equal subtrees shared).
    fn emit(&mut self, trie: Trie) -> Result<StateID, Problem> {
        let mut children = trie.children;
        children.sort_by_key(|&(lo, hi, _)| (lo, hi));
        let mut trans = Vec::with_capacity(children.len());
        for (lo, hi, child) in children {
            let next = match child {
                Child::Leaf(id) => id,
                Child::Node(node) => self.emit(node)?,
            };
            trans.push(Transition {
                start: lo,
                end: hi,
                next,
            });
        }
        // Adjacent ranges to one state are one range (a canonical form: equal subtrees are
        // then equal transition lists, and the DFA gets fewer byte classes).
        let mut merged: Vec<Transition> = Vec::with_capacity(trans.len());
        for t in trans {
            match merged.last_mut() {
                Some(last)
                    if last.next == t.next && u16::from(last.end) + 1 == u16::from(t.start) =>
                {
                    last.end = t.end;
                }
                _ => merged.push(t),
            }
        }
        let trans = merged;
        let disjoint = trans.windows(2).all(|w| w[0].end < w[1].start);
        if !disjoint {
            // Not expected (the parts are disjoint sets of characters): a union keeps it exact.
            let mut alts = Vec::with_capacity(trans.len());
            for t in trans {
                alts.push(self.b.add_range(t).map_err(nfa_error)?);
            }
            return self.b.add_union(alts).map_err(nfa_error);
        }
        if let Some(&id) = self.shared.get(&trans) {
            return Ok(id);
        }
        let id = self.b.add_sparse(trans.clone()).map_err(nfa_error)?;
        self.shared.insert(trans, id);
        Ok(id)
    }

    /// A state reading one character of `ranges` whose class is admitted by `next_ok`, going
    /// to `target(class)`.
    fn read(
        &mut self,
        ranges: &[(u32, u32)],
        next_ok: u8,
        mut target: impl FnMut(&mut Self, Prev) -> Result<StateID, Problem>,
    ) -> Result<StateID, Problem> {
        // Parts with the same target are read as one class, so that the trie is not cut where
        // the word table would cut it for nothing.
        let mut by_target: Vec<(StateID, Vec<(u32, u32)>)> = Vec::new();
        for part in self.parts(ranges) {
            if next_ok & part.next == 0 {
                continue;
            }
            let to = target(self, part.prev)?;
            match by_target.iter_mut().find(|(t, _)| *t == to) {
                Some((_, ranges)) => *ranges = union(ranges, &part.ranges),
                None => by_target.push((to, part.ranges)),
            }
        }
        if by_target.is_empty() {
            return Ok(self.fail);
        }
        let mut trie = Trie::default();
        for (to, ranges) in &by_target {
            trie.add(ranges, *to);
        }
        self.emit(trie)
    }

    fn process(
        &mut self,
        node: usize,
        prev: Prev,
        next_ok: u8,
        id: StateID,
    ) -> Result<(), Problem> {
        let to = match self.nodes[node].clone() {
            Node::Class { ranges, next } => {
                self.read(&ranges, next_ok, |p, class| p.state(next, class, NEXT_ANY))?
            }
            Node::Split(alts) => {
                let union = self.b.add_union(Vec::new()).map_err(nfa_error)?;
                for a in alts {
                    let to = self.state(a, prev, next_ok)?;
                    self.b.patch(union, to).map_err(nfa_error)?;
                }
                union
            }
            Node::Look { look, next } => self.look(look, next, prev, next_ok)?,
            Node::Match if self.tail => {
                // The language form: one class byte for what follows the match.
                let mut alts = Vec::new();
                for (bit, byte) in [
                    (NEXT_WORD, CONTEXT_WORD),
                    (NEXT_OTHER, CONTEXT_OTHER),
                    (NEXT_END, CONTEXT_START),
                ] {
                    if next_ok & bit != 0 {
                        let t = Transition {
                            start: byte,
                            end: byte,
                            next: self.match_now,
                        };
                        alts.push(self.b.add_range(t).map_err(nfa_error)?);
                    }
                }
                self.b.add_union(alts).map_err(nfa_error)?
            }
            Node::Match if next_ok == NEXT_ANY => self.match_now,
            Node::Match => {
                // A condition on the next character is left: read it, then match (one
                // character late), or match at the end of the text.
                let mut alts = Vec::new();
                if next_ok & (NEXT_WORD | NEXT_OTHER) != 0 {
                    self.delayed_used = true;
                    let delayed = self.match_delayed;
                    alts.push(self.read(&[(0, 0x10FFFF)], next_ok, |_, _| Ok(delayed))?);
                }
                if next_ok & NEXT_END != 0 {
                    let at_end = self
                        .b
                        .add_look(self.match_now, NfaLook::End)
                        .map_err(nfa_error)?;
                    alts.push(at_end);
                }
                self.b.add_union(alts).map_err(nfa_error)?
            }
        };
        self.b.patch(id, to).map_err(nfa_error)
    }

    /// An assertion from `(prev, next_ok)`: a condition on `prev` and a narrower `next_ok`, or
    /// one of regex-automata's own assertions.
    fn look(
        &mut self,
        look: Look,
        next: usize,
        prev: Prev,
        next_ok: u8,
    ) -> Result<StateID, Problem> {
        let word = prev.is_word();
        let (holds, narrowed) = match look {
            Look::WordUnicode => (
                true,
                if word {
                    NEXT_OTHER | NEXT_END
                } else {
                    NEXT_WORD
                },
            ),
            Look::WordUnicodeNegate => (
                true,
                if word {
                    NEXT_WORD
                } else {
                    NEXT_OTHER | NEXT_END
                },
            ),
            Look::WordStartUnicode => (!word, NEXT_WORD),
            Look::WordEndUnicode => (word, NEXT_OTHER | NEXT_END),
            Look::WordStartHalfUnicode => (!word, NEXT_ANY),
            Look::WordEndHalfUnicode => (true, NEXT_OTHER | NEXT_END),
            Look::Start if self.context => (prev == Prev::Start, NEXT_ANY),
            Look::StartLF if self.context => {
                (matches!(prev, Prev::Start | Prev::Newline), NEXT_ANY)
            }
            Look::Start | Look::StartLF => {
                let nfa_look = if look == Look::Start {
                    NfaLook::Start
                } else {
                    NfaLook::StartLF
                };
                let to = self.state(next, prev, next_ok)?;
                return self.b.add_look(to, nfa_look).map_err(nfa_error);
            }
            Look::End => {
                if next_ok & NEXT_END == 0 {
                    return Ok(self.fail);
                }
                let to = self.state(next, prev, NEXT_END)?;
                if self.tail {
                    // The tail byte says whether the text ends.
                    return Ok(to);
                }
                return self.b.add_look(to, NfaLook::End).map_err(nfa_error);
            }
            Look::EndLF if self.tail => {
                return Err(unsupported("a line end `(?m:$)` in a generated delimiter"));
            }
            Look::EndLF => {
                let ok = next_ok & (NEXT_OTHER | NEXT_END);
                if ok == 0 {
                    return Ok(self.fail);
                }
                let to = self.state(next, prev, ok)?;
                return self.b.add_look(to, NfaLook::EndLF).map_err(nfa_error);
            }
            other => {
                return Err(unsupported(&format!("the assertion {other:?}")));
            }
        };
        let narrowed = next_ok & narrowed;
        if !holds || narrowed == 0 {
            return Ok(self.fail);
        }
        self.state(next, prev, narrowed)
    }

    fn run(&mut self) -> Result<(), Problem> {
        while let Some((node, prev, next_ok, id)) = self.work.pop() {
            self.process(node, prev, next_ok, id)?;
        }
        Ok(())
    }
}

/// A DFA built by this module: regex-automata's dense DFA and whether it has a context slot.
pub struct WordDfa {
    /// Anchored, leftmost-first; pattern 1 (if any) is the delayed match.
    pub dfa: dense::DFA<Vec<u32>>,
    /// Whether the DFA first reads the byte `context_byte` gives for the character before the
    /// walk.
    pub context: bool,
}

/// Builds the DFA of a syntax tree with Unicode word assertions or a look-behind (anchored,
/// leftmost-first, `size_limit` on the NFA, the DFA and determinization). `behind`: the
/// context-slot bytes a leading look-behind admits ([`crate::pyregex::DfaBranch::behind`]);
/// with it the DFA always has a context slot, which reads no other byte.
///
/// Errors: [`Kind::DfaTooLarge`] past a size limit; [`Kind::DfaUnsupported`] for an assertion
/// the Python translation never writes next to a Unicode word assertion (ASCII word
/// boundaries, CRLF line anchors) or a non-ASCII byte class.
pub fn build(hir: &Hir, size_limit: usize, behind: Option<&[u8]>) -> Result<WordDfa, Problem> {
    let (nfa, context) = product(hir, size_limit, false, behind)?;
    let dfa = dense::Builder::new()
        .configure(crate::compile::dfa_config())
        .build_from_nfa(&nfa)
        .map_err(|e| crate::compile::build_problem(&e))?;
    Ok(WordDfa { dfa, context })
}

/// The *language* of a syntax tree with word assertions, for generating text around it
/// (crate `constrain`): a byte NFA (one pattern, anchored, no look-around left) whose words
/// are `ctx · d · tail`, where `d` is a whole match of `hir` when the character before it is
/// `ctx` and what follows it is `tail`. `ctx` is the context slot's byte
/// ([`parser_runtime_core::tables::context_byte`]: an ASCII character as itself,
/// [`CONTEXT_WORD`] or [`CONTEXT_OTHER`] for another one, [`CONTEXT_START`] at the start of
/// the text); `tail` is [`CONTEXT_WORD`] or [`CONTEXT_OTHER`] for the class of the next
/// character, [`CONTEXT_START`] for the end of the text. Neither byte is in UTF-8, so `d` is
/// read off unambiguously. The same product as [`build`]: every word assertion is exact, at
/// the edges as inside.
///
/// Errors: as [`build`]; also [`Kind::DfaUnsupported`] for a line end `(?m:$)` (the tail
/// byte does not tell `\n` apart).
pub fn language_nfa(hir: &Hir, size_limit: usize) -> Result<thompson::NFA, Problem> {
    product(hir, size_limit, true, None).map(|(nfa, _)| nfa)
}

/// The product NFA of `hir` and whether it has a context slot; `language`: the form of
/// [`language_nfa`] (always a slot, a tail byte after every match, no delayed match);
/// `behind`: the slot bytes a leading look-behind admits (see [`build`]).
fn product(
    hir: &Hir,
    size_limit: usize,
    language: bool,
    behind: Option<&[u8]>,
) -> Result<(thompson::NFA, bool), Problem> {
    let (chars, start) = CharNfa::build(hir)?;
    let context =
        language || behind.is_some() || chars.prev_sensitive(|l| reads_prev(l, false))[start];
    // The slot bytes the branch's look-behind admits (all without one).
    let admitted = |byte: u8| behind.is_none_or(|bytes| bytes.contains(&byte));
    let sensitive = chars.prev_sensitive(|l| reads_prev(l, context));
    let has = |l: Look| {
        chars
            .nodes
            .iter()
            .any(|n| matches!(n, Node::Look { look, .. } if *look == l))
    };
    let split_newline = context && has(Look::StartLF);
    let split_start = context && (split_newline || has(Look::Start));
    let mut b = thompson::Builder::new();
    b.set_size_limit(Some(size_limit)).map_err(nfa_error)?;
    b.set_utf8(false);
    b.start_pattern().map_err(nfa_error)?;
    let fail = b.add_fail().map_err(nfa_error)?;
    let match_now = b.add_match().map_err(nfa_error)?;
    let match_delayed = b.add_empty().map_err(nfa_error)?;
    let mut p = Product {
        nodes: &chars.nodes,
        sensitive,
        context,
        tail: language,
        split_start,
        split_newline,
        b,
        states: HashMap::new(),
        work: Vec::new(),
        shared: HashMap::new(),
        fail,
        match_now,
        match_delayed,
        delayed_used: false,
    };
    let entry = if context {
        // The context slot (`context_byte`): an ASCII previous character as itself, another
        // one as its class, or the start of the text.
        let mut trie = Trie::default();
        let at_start = if p.split_start {
            Prev::Start
        } else {
            Prev::Other
        };
        for part in p.parts(&[(0, 0x7F)]) {
            let to = p.state(start, part.prev, NEXT_ANY)?;
            for &(lo, hi) in &part.ranges {
                // ASCII: the slot byte is the character.
                for byte in (lo..=hi).filter_map(|b| u8::try_from(b).ok()) {
                    if admitted(byte) {
                        trie.add_byte(byte, byte, to);
                    }
                }
            }
        }
        for (byte, prev) in [
            (CONTEXT_OTHER, Prev::Other),
            (CONTEXT_WORD, Prev::Word),
            (CONTEXT_START, at_start),
        ] {
            if admitted(byte) {
                let to = p.state(start, prev, NEXT_ANY)?;
                trie.add_byte(byte, byte, to);
            }
        }
        p.run()?;
        p.emit(trie)?
    } else {
        let s = p.state(start, Prev::Other, NEXT_ANY)?;
        p.run()?;
        s
    };
    let delayed_used = p.delayed_used;
    let mut b = p.b;
    b.finish_pattern(entry).map_err(nfa_error)?;
    if delayed_used {
        b.start_pattern().map_err(nfa_error)?;
        let delayed = b.add_match().map_err(nfa_error)?;
        b.patch(match_delayed, delayed).map_err(nfa_error)?;
        b.finish_pattern(fail).map_err(nfa_error)?;
    } else {
        b.patch(match_delayed, fail).map_err(nfa_error)?;
    }
    let nfa = b.build(entry, entry).map_err(nfa_error)?;
    Ok((nfa, context))
}

/// The states a walk can be in before it reads its first character: the anchored start
/// states (by look-behind byte), or, for a DFA with a context slot, the states after the
/// slot (after every byte `context_byte` gives).
pub fn entry_states<A: Automaton>(dfa: &A, context: bool) -> Vec<StateID> {
    let config = |lb: Option<u8>| start::Config::new().anchored(Anchored::Yes).look_behind(lb);
    let mut out: Vec<StateID> = if context {
        match dfa.start_state(&config(None)) {
            Ok(s) => (0..=0x7Fu8)
                .chain([CONTEXT_OTHER, CONTEXT_WORD, CONTEXT_START])
                .map(|b| dfa.next_state(s, b))
                .collect(),
            Err(_) => Vec::new(),
        }
    } else {
        std::iter::once(None)
            .chain((0..=255u8).map(Some))
            .filter_map(|lb| dfa.start_state(&config(lb)).ok())
            .collect()
    };
    out.retain(|&s| !dfa.is_dead_state(s));
    out.sort();
    out.dedup();
    out
}

/// The live states reached from `from` by reading one whole character (any scalar value).
pub fn after_char<A: Automaton>(dfa: &A, from: &[StateID]) -> Vec<StateID> {
    let mut out = Vec::new();
    for seq in Utf8Sequences::new('\0', char::MAX) {
        let mut set: Vec<StateID> = from.to_vec();
        for r in seq.as_slice() {
            let mut next = Vec::new();
            for &s in &set {
                for b in r.start..=r.end {
                    let t = dfa.next_state(s, b);
                    if !dfa.is_dead_state(t) && !next.contains(&t) {
                        next.push(t);
                    }
                }
            }
            set = next;
        }
        for s in set {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// Whether the match state `id` is a delayed match (pattern 1: it ends one character before
/// where it is reported).
pub fn is_delayed<A: Automaton>(dfa: &A, id: StateID) -> bool {
    dfa.pattern_len() > 1 && dfa.match_pattern(id, 0).as_usize() == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::dfa_table;
    use parser_runtime_core::router::{RouteDfa, EDGE_DELAYED, EDGE_GROW, EDGE_REACH, EDGE_SURE};
    use parser_runtime_core::tables::OwnedDfa;

    /// The state after `text` from the entry state of a walk at the start of the text.
    fn walk(t: &OwnedDfa, text: &str) -> StateID {
        let mut s = t.start(None).unwrap();
        if t.context() {
            s = t.next_state(s, CONTEXT_START);
        }
        for &b in text.as_bytes() {
            s = t.next_state(s, b);
        }
        s
    }

    #[test]
    fn context_slot_only_where_an_assertion_can_see_before_the_walk() {
        for (pattern, context) in [
            (r"\bTHINK:", true),
            (r#"<invoke\b[^>]*?\bname="(?P<name>[^"]+)">"#, false),
            (r"x\b", false),
            (r"(?:^|\b)x", true),
            (r"(?:x|\B)y", true),
            (r"\b{end}", true),
            (r"x\b{start}", false),
        ] {
            assert_eq!(dfa_table(pattern).unwrap().context(), context, "{pattern}");
        }
    }

    #[test]
    fn a_condition_at_the_end_is_a_delayed_match() {
        let t = dfa_table(r"foo\b").unwrap();
        // After "foo" the next character decides: pending, a longer match may come.
        let s = walk(&t, "foo");
        assert_eq!(t.edge(s) & (EDGE_SURE | EDGE_DELAYED), 0);
        assert_ne!(t.edge(s) & EDGE_GROW, 0);
        assert!(t.is_match_state(t.next_eoi_state(s)));
        assert!(!t.delayed(t.next_eoi_state(s)));
        // After "foo " the match is certain, and it ends before the space.
        let s = walk(&t, "foo ");
        assert_eq!(t.edge(s), EDGE_SURE | EDGE_DELAYED | EDGE_REACH);
        let m = t.next_state(s, b'x');
        assert!(t.is_match_state(m) && t.delayed(m));
        // After "fooé": dead.
        assert!(t.is_dead_state(walk(&t, "fooé")));
        // No condition left: an ordinary match.
        let t = dfa_table(r"\bfoo").unwrap();
        let m = t.next_eoi_state(walk(&t, "foo"));
        assert!(t.is_match_state(m) && !t.delayed(m));
    }

    #[test]
    fn assertions_the_translation_never_writes_are_refused() {
        for p in [r"(?-u:\b)x\b", r"\bx(?Rm:^)"] {
            let e = dfa_table(p).err().unwrap();
            assert_eq!(e.kind, Kind::DfaUnsupported, "{p}: {}", e.reason);
            assert!(e.reason.contains("word boundary"), "{p}: {}", e.reason);
        }
    }

    #[test]
    fn size_limits_hold() {
        let started = std::time::Instant::now();
        let e = dfa_table(r"\b\w{5000}").err().unwrap();
        assert_eq!(e.kind, Kind::DfaTooLarge, "{}", e.reason);
        assert!(started.elapsed().as_secs() < 20);
    }

    #[test]
    fn sizes_stay_reasonable() {
        // A context slot reads one byte (`context_byte`), so a boundary before a literal
        // costs nothing; a boundary next to a class with non-ASCII characters costs the
        // word/non-word classifier of UTF-8 (about 340 states) where it is read.
        let size = |p: &str| dfa_table(p).unwrap().dfa().memory_usage();
        assert!(size(r"\bTHINK:") < 4 << 10, "{}", size(r"\bTHINK:"));
        assert!(size(r"foo\b") < 256 << 10, "{}", size(r"foo\b"));
        let invoke = size(r#"<invoke\b[^>]*?\bname="(?P<name>[^"]+)">"#);
        assert!(invoke < 1536 << 10, "{invoke}");
    }

    #[test]
    fn the_language_form_reads_a_class_byte_on_each_side() {
        let hir = regex_syntax::Parser::new().parse(r"\bfoo\b|x\z").unwrap();
        let nfa = language_nfa(&hir, 1 << 20).unwrap();
        let dfa = dense::Builder::new()
            .configure(
                dense::Config::new()
                    .match_kind(regex_automata::MatchKind::All)
                    .start_kind(regex_automata::dfa::StartKind::Anchored),
            )
            .build_from_nfa(&nfa)
            .unwrap();
        let whole = |bytes: &[u8]| {
            let config = start::Config::new().anchored(Anchored::Yes);
            let mut s = dfa.start_state(&config).unwrap();
            for &b in bytes {
                s = dfa.next_state(s, b);
            }
            dfa.is_match_state(dfa.next_eoi_state(s))
        };
        let (w, o, e) = (CONTEXT_WORD, CONTEXT_OTHER, CONTEXT_START);
        for (ctx, tail, holds) in [(e, o, true), (b' ', e, true), (o, w, false), (w, o, false)] {
            assert_eq!(whole(&[&[ctx][..], b"foo", &[tail]].concat()), holds);
        }
        assert!(whole(&[w, b'x', e]) && !whole(&[w, b'x', o]));
        // A line end is not told apart by the tail byte.
        let hir = regex_syntax::Parser::new().parse(r"(?m)\bfoo$").unwrap();
        assert_eq!(
            language_nfa(&hir, 1 << 20).err().unwrap().kind,
            Kind::DfaUnsupported
        );
    }

    #[test]
    fn range_sets() {
        let set = [(10, 20), (30, 40)];
        assert_eq!(split_ranges(&[(0, 50)], &set, true), [(10, 20), (30, 40)]);
        assert_eq!(
            split_ranges(&[(0, 50)], &set, false),
            [(0, 9), (21, 29), (41, 50)]
        );
        assert_eq!(split_ranges(&[(15, 35)], &set, true), [(15, 20), (30, 35)]);
        assert_eq!(split_ranges(&[(15, 35)], &set, false), [(21, 29)]);
        assert_eq!(split_ranges(&[(21, 29)], &set, true), []);
        assert_eq!(
            union(&[(0, 4), (10, 12)], &[(5, 6), (11, 20)]),
            [(0, 6), (10, 20)]
        );
        assert_eq!(without(&[(0, 10)], 0), [(1, 10)]);
        assert_eq!(scalar_range(0xD800, 0xDFFF), None);
        assert_eq!(scalar_range(0xD000, 0xE100), Some(('\u{D000}', '\u{E100}')));
        // The word table's ASCII part is `[0-9A-Z_a-z]`.
        let ascii = split_ranges(&[(0, 0x7F)], word_set(), true);
        assert_eq!(
            ascii,
            [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
        );
    }
}
