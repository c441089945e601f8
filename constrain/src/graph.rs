//! Segment graphs: a whole response as a graph of byte languages, determinized into one
//! [`Table`].
//!
//! A [`Segment`] is a language (a [`Table`]) plus the segments that may follow it: once the
//! bytes read in a segment form one of its words, the next segment may start. A response is a
//! path through the graph from a start segment to a segment marked `last`. [`Machine::build`]
//! determinizes the graph (subset construction over `(segment, state)` pairs, all of them
//! deterministic tables, so the sets stay small) into a single trimmed [`Table`], and keeps for
//! each of its states the pairs it stands for, so that special tokens can be allowed only
//! where a delimiter (or glue between regions) is being written.
//!
//! A delimiter with a word assertion at an edge (`\bTHINK:`, `END\b`) has a table that reads
//! class bytes besides its text ([`Marks`], [`crate::word`]). The determinization supplies
//! them: it tracks the class of the last character written where a segment that reads it may
//! start ([`Tracker`]), and keeps with each pair the classes its next character may have
//! when a delimiter before it ended with a condition on it.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::dfa::{BuildError, Limits, Table, DEAD, START};
pub use crate::word::Marks;
use crate::word::{is_marker, Prev, Tracker, NEXT_ANY, NEXT_END, NEXT_OTHER, NEXT_WORD, TAILS};

/// What a segment's bytes are, for special tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SegmentKind {
    /// A delimiter (open, close, end of turn): special tokens may write it.
    Delimiter,
    /// Text between regions that the template ignores (templates without an implicit field):
    /// special tokens may be written there.
    Glue,
    /// Region content (free text, JSON, parameters): never a special token.
    Body,
}

/// One language of the graph and where it leads.
#[derive(Debug, Clone)]
pub struct Segment {
    /// What may be written in the segment.
    pub table: Arc<Table>,
    /// Segments that may follow once the segment's bytes are a word of its language.
    pub next: Vec<usize>,
    /// The response may end after this segment.
    pub last: bool,
    /// What the bytes are.
    pub kind: SegmentKind,
    /// A short name for diagnostics (e.g. `tool_calls.open(get_weather)`).
    pub name: String,
    /// The class bytes the table reads besides text.
    pub marks: Marks,
    /// A look-ahead the segment's words end with: what follows one must begin with a word
    /// of this table (a delimiter ending in `(?=...)`, whose text the next segments write).
    pub ahead: Option<Arc<Table>>,
}

impl Segment {
    /// The state where the segment's words start after a character of class `prev` (`None`:
    /// not known, which a table reading the class cannot start from).
    pub fn entry(&self, prev: Option<Prev>) -> u32 {
        match (self.marks.before, prev) {
            (false, _) => START,
            (true, Some(p)) => self.table.next(START, p.byte()),
            (true, None) => DEAD,
        }
    }

    /// The classes of next character (bits of [`crate::word::NEXT_ANY`]) before which a word
    /// of the segment may end at `state`: all or none, unless the table reads the next class.
    pub fn ends(&self, state: u32) -> u8 {
        if !self.marks.after {
            return if self.table.is_accepting(state) {
                NEXT_ANY
            } else {
                0
            };
        }
        TAILS
            .iter()
            .filter(|&&(byte, _)| self.table.is_accepting(self.table.next(state, byte)))
            .fold(0, |mask, &(_, bit)| mask | bit)
    }

    /// The state after a byte of text from `state`.
    #[inline]
    pub fn step(&self, state: u32, byte: u8) -> u32 {
        if self.marks.any() && is_marker(byte) {
            DEAD
        } else {
            self.table.next(state, byte)
        }
    }
}

/// A graph of segments; see the module documentation.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// The segments, referred to by index.
    pub segments: Vec<Segment>,
    /// Where a response starts.
    pub starts: Vec<usize>,
}

impl Graph {
    /// Adds a segment (without successors) and returns its index.
    pub fn add(&mut self, name: impl Into<String>, kind: SegmentKind, table: Table) -> usize {
        self.add_marked(name, kind, table, Marks::default())
    }

    /// Adds a segment whose table reads the class bytes of `marks`.
    pub fn add_marked(
        &mut self,
        name: impl Into<String>,
        kind: SegmentKind,
        table: Table,
        marks: Marks,
    ) -> usize {
        self.segments.push(Segment {
            table: Arc::new(table),
            next: Vec::new(),
            last: false,
            kind,
            name: name.into(),
            marks,
            ahead: None,
        });
        self.segments.len() - 1
    }

    /// What follows a word of segment `seg` must begin with a word of `ahead`.
    pub fn set_ahead(&mut self, seg: usize, ahead: Table) {
        self.segments[seg].ahead = Some(Arc::new(ahead));
    }

    /// `from` may be followed by `to`.
    pub fn link(&mut self, from: usize, to: usize) {
        if !self.segments[from].next.contains(&to) {
            self.segments[from].next.push(to);
        }
    }
}

/// A `(segment, state)` pair.
type Element = (u32, u32);

/// A pair with the classes its next character may have (bits of [`NEXT_ANY`]): all, but
/// right after a delimiter whose words end with a condition on what follows; and the
/// look-ahead still to be satisfied by the text that follows ([`Ahead`]).
type Item = (u32, u32, u8, Ahead);

/// A pending look-ahead: the segment whose [`Segment::ahead`] it is and the state of that
/// table, or [`NO_AHEAD`].
type Ahead = (u32, u32);

/// No look-ahead pending.
const NO_AHEAD: Ahead = (u32::MAX, 0);

/// The pending look-ahead `ahead` after one more byte: `None` when the byte breaks it,
/// [`NO_AHEAD`] once it has matched.
fn step_ahead(graph: &Graph, ahead: Ahead, byte: u8) -> Option<Ahead> {
    if ahead == NO_AHEAD {
        return Some(NO_AHEAD);
    }
    let table = graph.segments[ahead.0 as usize].ahead.as_ref()?;
    match table.next(ahead.1, byte) {
        DEAD => None,
        t if table.is_accepting(t) => Some(NO_AHEAD),
        t => Some((ahead.0, t)),
    }
}

/// The look-ahead pending after a word of `seg` ends, when `ahead` was pending in it:
/// `None` when both the segment and the text before it impose one (not generated).
fn ahead_after(graph: &Graph, seg: u32, ahead: Ahead) -> Option<Ahead> {
    match &graph.segments[seg as usize].ahead {
        None => Some(ahead),
        Some(_) if ahead != NO_AHEAD => None,
        Some(table) if table.is_accepting(START) => Some(NO_AHEAD),
        Some(_) => Some((seg, START)),
    }
}

/// The determinized graph: one table over bytes, and for each of its states the pairs it
/// stands for.
#[derive(Debug)]
pub struct Machine {
    /// The language of whole responses (trimmed: every live state can still finish). A
    /// schema alone shares it with its one segment.
    pub table: Arc<Table>,
    /// The `(segment, state)` pairs of table state `s` (sorted):
    /// `elements[offsets[s]..offsets[s + 1]]`; both empty for a schema alone (one segment
    /// whose table is the machine's: state `s` is pair `(0, s)`).
    elements: Vec<Element>,
    offsets: Vec<u32>,
    /// The graph.
    pub graph: Graph,
}

impl Machine {
    /// Determinizes `graph`.
    ///
    /// Errors: [`BuildError::TooLarge`] past `limits.max_states`.
    pub fn build(graph: Graph, limits: &Limits) -> Result<Self, BuildError> {
        if let [only] = &graph.segments[..] {
            if graph.starts == [0] && only.next.is_empty() && only.last && !only.marks.any() {
                // One segment (a schema alone): its table, trimmed, is the machine, and the
                // segment keeps the same trimmed table so that state `s` is pair `(0, s)`.
                let table = if only.table.is_trimmed() {
                    only.table.clone()
                } else {
                    Arc::new(only.table.as_ref().clone().trim())
                };
                let mut graph = graph;
                graph.segments[0].table = table.clone();
                return Ok(Self {
                    elements: Vec::new(),
                    offsets: Vec::new(),
                    table,
                    graph,
                });
            }
        }
        // Class bytes: the class of the last character is tracked (and the bytes that tell it
        // get columns of their own) only in graphs with a segment that reads one.
        let tracking = graph.segments.iter().any(|s| s.marks.any());
        let mut tables: Vec<&Table> = graph.segments.iter().map(|s| s.table.as_ref()).collect();
        if tracking {
            tables.extend(crate::word::tracker_tables());
        }
        let (classes, stride) = Table::merged_classes(&tables);
        let (classes, stride) = if tracking {
            let markers: Vec<u8> = TAILS.iter().map(|&(b, _)| b).collect();
            Table::merge_columns(classes, &markers)
        } else {
            (classes, stride)
        };
        let reps = crate::dfa::representatives(&classes, stride);
        let ends = Ends::of(&graph, tracking);
        let first = if tracking {
            Tracker::At(Some(Prev::Start))
        } else {
            Tracker::At(None)
        };
        let mut start: Vec<Item> = graph
            .starts
            .iter()
            .map(|&s| {
                (
                    s as u32,
                    graph.segments[s].entry(Some(Prev::Start)),
                    NEXT_ANY,
                    NO_AHEAD,
                )
            })
            .filter(|&(_, state, _, _)| state != DEAD)
            .collect();
        closure(&graph, &ends, &mut start, Some(Prev::Start), false);
        let first = settle(first, &start, &ends.tracked);
        let mut sets = Sets {
            single: graph
                .segments
                .iter()
                .map(|s| vec![DEAD; s.table.len()])
                .collect(),
            multi: FxHashMap::default(),
            keys: vec![(Vec::new(), Tracker::At(None))],
            accept: vec![false],
        };
        sets.id(&graph, start, first);
        let mut trans = vec![DEAD; 2 * stride];
        let mut s = 1usize;
        while s < sets.keys.len() {
            for (c, &byte) in reps.iter().enumerate() {
                let tracker = sets.keys[s].1;
                let target = match sets.keys[s].0[..] {
                    // One pair whose next state needs no closure: found without building a
                    // set (most states of a response are inside one segment).
                    [(seg, state, NEXT_ANY, NO_AHEAD)] if !tracking => {
                        let segment = &graph.segments[seg as usize];
                        let t = segment.table.next(state, byte);
                        if t == DEAD {
                            DEAD
                        } else if segment.next.is_empty() || !segment.table.is_accepting(t) {
                            sets.id(&graph, vec![(seg, t, NEXT_ANY, NO_AHEAD)], tracker)
                        } else {
                            let mut next = vec![(seg, t, NEXT_ANY, NO_AHEAD)];
                            closure(&graph, &ends, &mut next, None, true);
                            sets.id(&graph, next, tracker)
                        }
                    }
                    _ => {
                        let (tracker, ended) = if tracking {
                            tracker.step(byte)
                        } else {
                            (tracker, None)
                        };
                        let next: Vec<Item> = sets.keys[s]
                            .0
                            .iter()
                            .filter_map(|&(seg, state, need, ahead)| {
                                let t = graph.segments[seg as usize].step(state, byte);
                                let need = pending(need, ended)?;
                                let ahead = step_ahead(&graph, ahead, byte)?;
                                (t != DEAD).then_some((seg, t, need, ahead))
                            })
                            .collect();
                        if next.is_empty() {
                            DEAD
                        } else {
                            let mut next = next;
                            let prev = match tracker {
                                Tracker::At(prev) => prev,
                                _ => None,
                            };
                            closure(&graph, &ends, &mut next, prev, true);
                            let tracker = settle(tracker, &next, &ends.tracked);
                            sets.id(&graph, next, tracker)
                        }
                    }
                };
                trans[s * stride + c] = target;
            }
            limits.check_row(s, sets.keys.len().saturating_sub(1))?;
            trans.resize(sets.keys.len() * stride, DEAD);
            s += 1;
        }
        let table = Table::from_parts(classes, stride, trans, sets.accept, false);
        let (table, order) = table.trim_map();
        let mut elements = Vec::new();
        let mut offsets = vec![0u32, 0];
        for old in order {
            let items = &sets.keys.get(old as usize).map_or(&[][..], |k| &k.0[..]);
            elements.extend(items.iter().map(|&(seg, state, _, _)| (seg, state)));
            offsets.push(elements.len() as u32);
        }
        Ok(Self {
            table: Arc::new(table),
            elements,
            offsets,
            graph,
        })
    }

    /// The `(segment, state)` pairs a table state stands for.
    pub fn elements(&self, state: u32) -> std::borrow::Cow<'_, [Element]> {
        if self.offsets.is_empty() {
            return if (state as usize) < self.table.len() {
                std::borrow::Cow::Owned(vec![(0, state)])
            } else {
                std::borrow::Cow::Borrowed(&[])
            };
        }
        std::borrow::Cow::Borrowed(
            match (
                self.offsets.get(state as usize),
                self.offsets.get(state as usize + 1),
            ) {
                (Some(&a), Some(&b)) => &self.elements[a as usize..b as usize],
                _ => &[],
            },
        )
    }

    /// Whether a special token with text `text` may be written from `state`: some pair of the
    /// state is in (or may start) a delimiter or glue segment, and `text` stays inside that
    /// segment's language.
    pub fn special_allowed(&self, state: u32, text: &[u8]) -> bool {
        if text.is_empty() || self.table.walk(state, text) == DEAD {
            return false;
        }
        self.elements(state).iter().any(|&(seg, s)| {
            let segment = &self.graph.segments[seg as usize];
            segment.kind != SegmentKind::Body && segment.table.walk(s, text) != DEAD
        })
    }
}

/// The classes a pair's next character may have after one more byte (`ended`: the class of
/// the character that byte ends, if it ends one); `None` when the pair is out.
fn pending(need: u8, ended: Option<Option<Prev>>) -> Option<u8> {
    if need == NEXT_ANY {
        return Some(NEXT_ANY);
    }
    match ended {
        // A character: its class must be one of them.
        Some(Some(class)) => (need & class.next_bit() != 0).then_some(NEXT_ANY),
        // Not tracked (a condition keeps its set tracked, so not expected): out, to be safe.
        Some(None) => None,
        // Inside a character: the text goes on, so it does not end here.
        None => {
            let need = need & (NEXT_WORD | NEXT_OTHER);
            (need != 0).then_some(need)
        }
    }
}

/// What the determinization knows of how segments end, for segments that read the class of
/// the character before them.
struct Ends {
    /// Per segment: the class of the last character of every word, when it is one class
    /// (ASCII last characters of one class, no empty word: `}`, `</think>`, `END`).
    fixed: Vec<Option<Prev>>,
    /// Per segment: whether the class of its last character must be tracked (it has no fixed
    /// class, and a segment that reads it may follow, directly or after segments that may be
    /// empty).
    tracked: Vec<bool>,
}

impl Ends {
    fn of(graph: &Graph, tracking: bool) -> Ends {
        let segments = &graph.segments;
        if !tracking {
            return Ends {
                fixed: vec![None; segments.len()],
                tracked: vec![false; segments.len()],
            };
        }
        let prevs = [Prev::Start, Prev::Word, Prev::Other, Prev::Newline];
        // `\n` is a class of its own only for a segment with `(?m:^)` at its start.
        let newline_apart = segments
            .iter()
            .any(|s| s.marks.before && s.entry(Some(Prev::Newline)) != s.entry(Some(Prev::Other)));
        let may_be_empty: Vec<bool> = segments
            .iter()
            .map(|s| {
                prevs
                    .iter()
                    .any(|&p| s.entry(Some(p)) != DEAD && s.ends(s.entry(Some(p))) != 0)
            })
            .collect();
        let fixed = segments
            .iter()
            .zip(&may_be_empty)
            .map(|(s, &empty)| {
                if empty {
                    None
                } else {
                    fixed_end(s, newline_apart)
                }
            })
            .collect::<Vec<_>>();
        // Segments the class reaches: ones that read it, and empty ones before them.
        let mut wanted: Vec<bool> = segments.iter().map(|s| s.marks.before).collect();
        loop {
            let mut changed = false;
            for i in 0..segments.len() {
                if !wanted[i] && may_be_empty[i] && segments[i].next.iter().any(|&n| wanted[n]) {
                    wanted[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let tracked = segments
            .iter()
            .zip(&fixed)
            .map(|(s, f)| f.is_none() && s.next.iter().any(|&n| wanted[n]))
            .collect();
        Ends { fixed, tracked }
    }
}

/// The class of the last character of every non-empty word of `segment`, if it is one: every
/// byte that ends a word is ASCII, of one class (`\n` one of its own if `newline_apart`).
fn fixed_end(segment: &Segment, newline_apart: bool) -> Option<Prev> {
    let table = &segment.table;
    let mut class = None;
    for state in 1..table.len() as u32 {
        if segment.marks.before && state == START {
            // The previous character's class byte.
            continue;
        }
        for byte in 0..=255u8 {
            let t = segment.step(state, byte);
            if t == DEAD || segment.ends(t) == 0 {
                continue;
            }
            if !byte.is_ascii() {
                return None;
            }
            let c = match Prev::of(Some(byte as char)) {
                Prev::Newline if !newline_apart => Prev::Other,
                c => c,
            };
            match class {
                None => class = Some(c),
                Some(k) if k == c => {}
                Some(_) => return None,
            }
        }
    }
    class
}

/// `tracker`, forgetting the class when no pair of `items` can have it read.
fn settle(tracker: Tracker, items: &[Item], reads_class: &[bool]) -> Tracker {
    let read = items
        .iter()
        .any(|&(seg, _, need, _)| need != NEXT_ANY || reads_class[seg as usize]);
    if read {
        tracker
    } else {
        tracker.forget()
    }
}

/// The sets of pairs found so far, each a state: index = state id (0: dead).
struct Sets {
    /// Per segment and state: the id of the set holding that pair alone (any next class, the
    /// class of the last character not tracked).
    single: Vec<Vec<u32>>,
    multi: FxHashMap<(Vec<Item>, Tracker), u32>,
    keys: Vec<(Vec<Item>, Tracker)>,
    accept: Vec<bool>,
}

impl Sets {
    /// The id of `set` (sorted, closed) with `tracker`, added if new.
    fn id(&mut self, graph: &Graph, set: Vec<Item>, tracker: Tracker) -> u32 {
        let single = match (&set[..], tracker) {
            ([(seg, state, NEXT_ANY, NO_AHEAD)], Tracker::At(None)) => Some((*seg, *state)),
            _ => None,
        };
        let found = match single {
            Some((seg, state)) => self.single[seg as usize][state as usize],
            None => self
                .multi
                .get(&(set.clone(), tracker))
                .copied()
                .unwrap_or(DEAD),
        };
        if found != DEAD {
            return found;
        }
        let id = self.keys.len() as u32;
        match single {
            Some((seg, state)) => self.single[seg as usize][state as usize] = id,
            None => {
                self.multi.insert((set.clone(), tracker), id);
            }
        }
        self.accept
            .push(set.iter().any(|&(seg, state, need, ahead)| {
                let s = &graph.segments[seg as usize];
                ahead == NO_AHEAD && s.last && s.ends(state) & need & NEXT_END != 0
            }));
        self.keys.push((set, tracker));
        id
    }
}

/// Adds, for every pair whose segment may end in its state, the start of each following
/// segment (repeatedly), with the classes the next character may have; then sorts, and merges
/// the items of one pair. A segment that reads the previous character's class starts after
/// the class of the last character: `prev` (the tracker's), or, for the pairs of `set` when
/// they have just `read` a byte, the fixed class their segment's words end with; segments
/// entered without a character pass theirs on.
fn closure(graph: &Graph, ends: &Ends, set: &mut Vec<Item>, prev: Option<Prev>, read: bool) {
    let ending = |&(seg, state, need, _): &Item| {
        let segment = &graph.segments[seg as usize];
        !segment.next.is_empty() && segment.ends(state) & need != 0
    };
    if !set.iter().any(ending) {
        set.sort_unstable();
        set.dedup();
        return;
    }
    let mut work: Vec<(Item, Option<Prev>)> = set
        .iter()
        .map(|&item| {
            let fixed = if read {
                ends.fixed[item.0 as usize]
            } else {
                None
            };
            (item, fixed.or(prev))
        })
        .collect();
    // Sets are small: a list is the cheapest memory of what was done.
    let mut seen: Vec<(Item, Option<Prev>)> = work.clone();
    while let Some(((seg, state, need, ahead), prev)) = work.pop() {
        let segment = &graph.segments[seg as usize];
        let carry = segment.ends(state) & need;
        if carry == 0 {
            continue;
        }
        let Some(ahead) = ahead_after(graph, seg, ahead) else {
            continue;
        };
        for &n in &segment.next {
            let entry = graph.segments[n].entry(prev);
            if entry == DEAD {
                continue;
            }
            match set
                .iter_mut()
                .find(|&&mut (s, e, _, a)| (s, e, a) == (n as u32, entry, ahead))
            {
                Some(item) => item.2 |= carry,
                None => set.push((n as u32, entry, carry, ahead)),
            }
            let item = (n as u32, entry, carry, ahead);
            if !seen.contains(&(item, prev)) {
                seen.push((item, prev));
                work.push((item, prev));
            }
        }
    }
    set.sort_unstable();
    set.dedup();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> Table {
        Table::from_hir(
            &regex_syntax::Parser::new().parse(p).unwrap(),
            &Limits::default(),
        )
        .unwrap()
    }

    #[test]
    fn paths_through_the_graph() {
        // <think> free </think> then text, or straight text; then <end>.
        let mut g = Graph::default();
        let open = g.add("open", SegmentKind::Delimiter, Table::literal(b"<think>"));
        let body = g.add(
            "body",
            SegmentKind::Body,
            Table::avoiding(
                &regex_syntax::Parser::new().parse("</think>").unwrap(),
                &Limits::default(),
            )
            .unwrap(),
        );
        let close = g.add("close", SegmentKind::Delimiter, Table::literal(b"</think>"));
        let text = g.add("text", SegmentKind::Body, re("[a-z ]*"));
        let end = g.add("end", SegmentKind::Delimiter, Table::literal(b"<end>"));
        g.link(open, body);
        g.link(body, close);
        g.link(close, text);
        g.link(text, end);
        g.segments[end].last = true;
        g.starts = vec![open, text];
        let m = Machine::build(g, &Limits::default()).unwrap();
        assert!(m.table.matches(b"<think>a<b</think>hi there<end>"));
        assert!(m.table.matches(b"hello<end>") && m.table.matches(b"<end>"));
        assert!(!m.table.matches(b"<think>a</think>b</think>x<end>"));
        assert!(!m.table.matches(b"hello"));
        // Special tokens only where a delimiter is written.
        let s = m.table.walk(START, b"<think>");
        assert!(!m.special_allowed(s, b"<end>"));
        let s = m.table.walk(START, b"hi");
        assert!(m.special_allowed(s, b"<end>"));
        let s = m.table.walk(START, b"<think>x");
        assert!(m.special_allowed(s, b"</think>"));
        assert!(!m.special_allowed(s, b"<think>"));
    }
}
