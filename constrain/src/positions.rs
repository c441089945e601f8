//! HIR -> DFA through the position automaton (Glushkov), for [`crate::dfa::Table::from_hir`].
//!
//! Every byte range of the pattern (a literal byte, a byte class range, one range of a UTF-8
//! sequence of a Unicode class) is a *position*; the pattern's structure gives, for each
//! position, the positions that may follow it (`follow`), which positions may start a match
//! (`first`) and which may end one (`last`). The automaton reading position `p` next moves
//! to the positions of `follow(p)` whose range holds the byte; determinizing it (subset
//! construction over sets of positions) gives the DFA of the whole pattern, matched
//! anchored at both ends.
//!
//! Why our own construction: schema languages are large, nearly deterministic patterns
//! (declared keys, strings, numbers), and the subset construction of their position
//! automaton mostly meets one-position sets. Those are found by an array lookup, and the
//! transitions of a set are computed by one sweep over the byte classes its candidate
//! ranges start and end at, instead of one step per byte class. On the benchmark's tool
//! schemas this is several times faster than regex-automata's Thompson NFA and dense
//! determinizer (measured by `cargo run --release -p constrain --example compile_profile`),
//! which stays in use for patterns with look-around assertions (which positions cannot
//! express) and for unanchored searches ([`crate::dfa::Table::avoiding`]).
//!
//! Counted repetitions are unrolled (`a{2,4}` is `a a (a (a)?)?`): the follow entries are
//! linear in the copies when the repeated part cannot match the empty text, quadratic when
//! it can (`(?:a?){n}`), and a repeated class of many UTF-8 sequences (`\p{L}+`) links each
//! sequence's end to every sequence's start. Two budgets bound the work: the estimated heap
//! of positions and follow entries (`limits.max_automaton_bytes / 4`) and the follow entries
//! and candidates read while determinizing (`limits.max_work`). Past the first,
//! [`Refusal::Budget`] sends the pattern to regex-automata, bounded to 16 MiB so that it fails
//! within about a second; past the second, [`Refusal::Work`] sends it there bounded to 1 MiB
//! (its determinizer is slower still on such sets: `.{1000}` inside a string took 40 s to fail
//! at 16 MiB). Past `limits.max_states` states the construction fails with
//! [`BuildError::TooLarge`].

use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::utf8::Utf8Sequences;
use rustc_hash::FxHashMap;

use crate::dfa::{BuildError, Limits, Table, DEAD};

/// Why the construction did not give a table.
pub(crate) enum Refusal {
    /// The pattern holds a look-around assertion: positions cannot express it.
    Look,
    /// Past the memory budget: regex-automata may still build it.
    Budget,
    /// Past the work budget (`limits.max_work`): regex-automata may build it only if it is
    /// small.
    Work,
    /// Past the limits.
    Build(BuildError),
}

/// The default of `Limits::max_work`: most follow entries and candidates read while
/// determinizing one pattern (about 0.1 s of work); schema languages read a few tens of
/// thousands.
pub const WORK_BUDGET: usize = 16 << 20;

/// Estimated heap bytes of one position (its range, follow list header, follow-class entry),
/// beside 4 bytes per follow entry.
const POSITION_BYTES: usize = 80;

/// A piece of the pattern: where it may start and end, and whether it matches the empty
/// text.
struct Frag {
    first: Vec<u32>,
    last: Vec<u32>,
    nullable: bool,
}

impl Frag {
    fn empty() -> Self {
        Self {
            first: Vec::new(),
            last: Vec::new(),
            nullable: true,
        }
    }

    /// The empty language.
    fn fail() -> Self {
        Self {
            first: Vec::new(),
            last: Vec::new(),
            nullable: false,
        }
    }
}

struct Positions {
    /// Per position: its byte range (position 0, the start, has none).
    ranges: Vec<(u8, u8)>,
    follow: Vec<Vec<u32>>,
    /// An empty class (the empty language) was met: some states may be unable to finish.
    has_fail: bool,
    /// Estimated heap bytes so far, and the budget.
    bytes: usize,
    max_bytes: usize,
}

impl Positions {
    fn position(&mut self, lo: u8, hi: u8) -> Result<u32, Refusal> {
        self.grow(POSITION_BYTES)?;
        self.ranges.push((lo, hi));
        self.follow.push(Vec::new());
        Ok(self.ranges.len() as u32 - 1)
    }

    /// Counts `bytes` more of estimated heap; past the budget, [`Refusal::Budget`].
    fn grow(&mut self, bytes: usize) -> Result<(), Refusal> {
        self.bytes += bytes;
        if self.bytes > self.max_bytes {
            return Err(Refusal::Budget);
        }
        Ok(())
    }

    /// `a` then `b`.
    fn concat(&mut self, a: Frag, b: Frag) -> Result<Frag, Refusal> {
        for &p in &a.last {
            self.grow(4 * b.first.len())?;
            self.follow[p as usize].extend_from_slice(&b.first);
        }
        let mut first = a.first;
        if a.nullable {
            first.extend_from_slice(&b.first);
        }
        let mut last = b.last;
        if b.nullable {
            last.extend_from_slice(&a.last);
        }
        Ok(Frag {
            first,
            last,
            nullable: a.nullable && b.nullable,
        })
    }

    /// A chain of byte ranges (a literal, one UTF-8 sequence).
    fn chain(&mut self, ranges: impl Iterator<Item = (u8, u8)>) -> Result<Frag, Refusal> {
        let mut frag = Frag::empty();
        for (lo, hi) in ranges {
            let p = self.position(lo, hi)?;
            frag = self.concat(
                frag,
                Frag {
                    first: vec![p],
                    last: vec![p],
                    nullable: false,
                },
            )?;
        }
        Ok(frag)
    }

    fn alternation(&mut self, parts: Vec<Frag>) -> Frag {
        // No alternative at all (an empty class): the empty language.
        self.has_fail |= parts.is_empty();
        let mut out = Frag::fail();
        for f in parts {
            out.first.extend(f.first);
            out.last.extend(f.last);
            out.nullable |= f.nullable;
        }
        out
    }

    /// `f` or nothing.
    fn optional(mut f: Frag) -> Frag {
        f.nullable = true;
        f
    }

    /// `f` any number of times (`f` built once: its last positions loop to its first).
    fn star(&mut self, f: Frag) -> Result<Frag, Refusal> {
        for &p in &f.last {
            self.grow(4 * f.first.len())?;
            self.follow[p as usize].extend_from_slice(&f.first);
        }
        Ok(Self::optional(f))
    }

    fn build(&mut self, hir: &Hir) -> Result<Frag, Refusal> {
        match hir.kind() {
            HirKind::Empty => Ok(Frag::empty()),
            HirKind::Literal(lit) => self.chain(lit.0.iter().map(|&b| (b, b))),
            HirKind::Class(Class::Bytes(class)) => {
                let mut parts = Vec::new();
                for r in class.iter() {
                    parts.push(self.chain(std::iter::once((r.start(), r.end())))?);
                }
                Ok(self.alternation(parts))
            }
            HirKind::Class(Class::Unicode(class)) => {
                let mut parts = Vec::new();
                for r in class.iter() {
                    for seq in Utf8Sequences::new(r.start(), r.end()) {
                        parts.push(self.chain(seq.as_slice().iter().map(|r| (r.start, r.end)))?);
                    }
                }
                Ok(self.alternation(parts))
            }
            HirKind::Look(_) => Err(Refusal::Look),
            HirKind::Capture(c) => self.build(&c.sub),
            HirKind::Concat(items) => {
                let mut frag = Frag::empty();
                for item in items {
                    let next = self.build(item)?;
                    frag = self.concat(frag, next)?;
                }
                Ok(frag)
            }
            HirKind::Alternation(items) => {
                let mut parts = Vec::with_capacity(items.len());
                for item in items {
                    parts.push(self.build(item)?);
                }
                Ok(self.alternation(parts))
            }
            HirKind::Repetition(rep) => {
                let mut frag = Frag::empty();
                for _ in 0..rep.min {
                    let copy = self.build(&rep.sub)?;
                    frag = self.concat(frag, copy)?;
                }
                match rep.max {
                    None => {
                        let copy = self.build(&rep.sub)?;
                        let star = self.star(copy)?;
                        self.concat(frag, star)
                    }
                    Some(max) => {
                        // Nested optional copies: `(a (a (a)?)?)?`, linear follow entries.
                        let mut tail = Frag::empty();
                        for _ in rep.min..max {
                            let copy = self.build(&rep.sub)?;
                            let inner = self.concat(copy, tail)?;
                            tail = Self::optional(inner);
                        }
                        self.concat(frag, tail)
                    }
                }
            }
        }
    }
}

/// The anchored DFA of `hir` (not yet trimmed), or why positions cannot give it.
pub(crate) fn table(hir: &Hir, limits: &Limits) -> Result<Table, Refusal> {
    let mut pos = Positions {
        ranges: vec![(0, 0)],
        follow: vec![Vec::new()],
        has_fail: false,
        bytes: 0,
        max_bytes: limits.max_automaton_bytes / 4,
    };
    let root = pos.build(hir)?;
    let n = pos.ranges.len();
    pos.follow[0] = root.first;
    let mut is_last = vec![false; n];
    for &p in &root.last {
        is_last[p as usize] = true;
    }
    is_last[0] = root.nullable;

    // Byte classes: the bytes between two range boundaries act alike everywhere.
    let mut boundary = [false; 257];
    boundary[0] = true;
    for &(lo, hi) in &pos.ranges[1..] {
        boundary[lo as usize] = true;
        boundary[hi as usize + 1] = true;
    }
    let mut classes = [0u8; 256];
    let mut stride = 0usize;
    for b in 0..256 {
        if boundary[b] && b > 0 {
            stride += 1;
        }
        classes[b] = stride as u8;
    }
    stride += 1;
    // Each position's range as a span of classes.
    let spans: Vec<(u16, u16)> = pos
        .ranges
        .iter()
        .map(|&(lo, hi)| (classes[lo as usize] as u16, classes[hi as usize] as u16))
        .collect();

    // Positions with the same follow set and the same `is_last` have the same future: they
    // share a follow class, and a DFA state is a set of follow classes (the states of the
    // plain subset construction that differ only in which of such positions was read, e.g.
    // after an ASCII byte or after the last byte of a UTF-8 sequence in a string, are one).
    let mut follow_class: Vec<u32> = vec![0; n];
    let mut class_rep: Vec<u32> = Vec::new();
    {
        let mut ids: FxHashMap<(&[u32], bool), u32> = FxHashMap::default();
        for f in pos.follow.iter_mut() {
            f.sort_unstable();
            f.dedup();
        }
        for p in 0..n {
            let next = class_rep.len() as u32;
            let id = *ids.entry((&pos.follow[p][..], is_last[p])).or_insert(next);
            if id == next {
                class_rep.push(p as u32);
            }
            follow_class[p] = id;
        }
    }

    // Subset construction over follow classes. State ids from 1 (0 is dead); a state holds
    // one position per follow class it stands for. Sets of one class are found through
    // `single`, larger ones through `multi`.
    let mut states: Vec<Box<[u32]>> = vec![Box::new([]), Box::new([0])];
    let mut single: Vec<u32> = vec![DEAD; class_rep.len()];
    single[follow_class[0] as usize] = 1;
    let mut multi: FxHashMap<Box<[u32]>, u32> = FxHashMap::default();
    let mut trans: Vec<u32> = vec![DEAD; 2 * stride];
    let mut accept = vec![false, is_last[0]];
    let mut stamp: Vec<u32> = vec![u32::MAX; n];
    let mut events: Vec<(u16, u32)> = Vec::new();
    let mut active: Vec<u32> = Vec::new();
    let mut slot: Vec<u32> = vec![0; n];
    let mut key: Vec<u32> = Vec::new();
    let mut work = 0usize;
    let mut s = 1usize;
    while s < states.len() {
        // Candidates: the positions that may follow one of the state's, each once; an event
        // where its span starts (`q`) and just past its end (`q | END`).
        const END: u32 = 1 << 31;
        events.clear();
        for &p in states[s].iter() {
            work += pos.follow[p as usize].len();
            if work > limits.max_work {
                return Err(Refusal::Work);
            }
            for &q in &pos.follow[p as usize] {
                if stamp[q as usize] != s as u32 {
                    stamp[q as usize] = s as u32;
                    let (lo, hi) = spans[q as usize];
                    events.push((lo, q));
                    events.push((hi + 1, q | END));
                }
            }
        }
        events.sort_unstable();
        active.clear();
        let mut e = 0;
        let mut c = 0usize;
        while c < stride {
            while e < events.len() && events[e].0 as usize == c {
                let (_, q) = events[e];
                // `slot[q]`: where `q` is in `active` (its start event comes before its
                // end), so that removing it is constant time (a search of `active` made
                // `.{1000}` inside a string quadratic in the candidates per state).
                if q & END != 0 {
                    let i = slot[(q & !END) as usize] as usize;
                    active.swap_remove(i);
                    if let Some(&moved) = active.get(i) {
                        slot[moved as usize] = i as u32;
                    }
                } else {
                    slot[q as usize] = active.len() as u32;
                    active.push(q);
                }
                e += 1;
            }
            let until = events
                .get(e)
                .map_or(stride, |ev| (ev.0 as usize).min(stride));
            key.clear();
            key.extend(active.iter().map(|&q| follow_class[q as usize]));
            if key.len() > 1 {
                key.sort_unstable();
                key.dedup();
            }
            let target = match key.len() {
                0 => DEAD,
                1 => {
                    let fc = key[0] as usize;
                    if single[fc] == DEAD {
                        single[fc] = states.len() as u32;
                        let q = class_rep[fc];
                        states.push(Box::new([q]));
                        accept.push(is_last[q as usize]);
                    }
                    single[fc]
                }
                _ => match multi.get(&key[..]) {
                    Some(&id) => id,
                    None => {
                        let id = states.len() as u32;
                        let reps: Box<[u32]> =
                            key.iter().map(|&fc| class_rep[fc as usize]).collect();
                        accept.push(reps.iter().any(|&q| is_last[q as usize]));
                        multi.insert(key.clone().into_boxed_slice(), id);
                        states.push(reps);
                        id
                    }
                },
            };
            if target != DEAD {
                trans[s * stride + c..s * stride + until].fill(target);
            }
            c = until;
        }
        limits
            .check_row(s, states.len() - 1)
            .map_err(Refusal::Build)?;
        trans.resize(states.len() * stride, DEAD);
        s += 1;
    }
    // Without an empty class every position can reach the end of a match, so every state can
    // finish; states were numbered in discovery order, breadth first: already trimmed.
    Ok(Table::from_parts(
        classes,
        stride,
        trans,
        accept,
        !pos.has_fail,
    ))
}
