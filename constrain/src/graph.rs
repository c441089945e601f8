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

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::dfa::{BuildError, Limits, Table, DEAD, START};

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
        self.segments.push(Segment {
            table: Arc::new(table),
            next: Vec::new(),
            last: false,
            kind,
            name: name.into(),
        });
        self.segments.len() - 1
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

/// The determinized graph: one table over bytes, and for each of its states the pairs it
/// stands for.
#[derive(Debug)]
pub struct Machine {
    /// The language of whole responses (trimmed: every live state can still finish).
    pub table: Table,
    /// The `(segment, state)` pairs of table state `s` (sorted):
    /// `elements[offsets[s]..offsets[s + 1]]`.
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
            if graph.starts == [0] && only.next.is_empty() && only.last {
                // One segment (a schema alone): its table, trimmed, is the machine, and the
                // segment keeps the same trimmed table so that state `s` is pair `(0, s)`.
                let was_trimmed = only.table.is_trimmed();
                let table = only.table.as_ref().clone().trim();
                let n = table.len() as u32;
                let mut graph = graph;
                if !was_trimmed {
                    graph.segments[0].table = Arc::new(table.clone());
                }
                return Ok(Self {
                    elements: (0..n).map(|s| (0, s)).collect(),
                    offsets: (0..=n).collect(),
                    table,
                    graph,
                });
            }
        }
        let tables: Vec<&Table> = graph.segments.iter().map(|s| s.table.as_ref()).collect();
        let (classes, stride) = Table::merged_classes(&tables);
        let reps = crate::dfa::representatives(&classes, stride);
        let mut start: Vec<Element> = graph.starts.iter().map(|&s| (s as u32, START)).collect();
        closure(&graph, &mut start);
        let mut sets = Sets {
            single: graph
                .segments
                .iter()
                .map(|s| vec![DEAD; s.table.len()])
                .collect(),
            multi: FxHashMap::default(),
            keys: vec![Vec::new()],
            accept: vec![false],
        };
        sets.id(&graph, start);
        let mut trans = vec![DEAD; 2 * stride];
        let mut s = 1usize;
        while s < sets.keys.len() {
            for (c, &byte) in reps.iter().enumerate() {
                let target = match sets.keys[s][..] {
                    // One pair whose next state needs no closure: found without building a
                    // set (most states of a response are inside one segment).
                    [(seg, state)] => {
                        let segment = &graph.segments[seg as usize];
                        let t = segment.table.next(state, byte);
                        if t == DEAD {
                            DEAD
                        } else if segment.next.is_empty() || !segment.table.is_accepting(t) {
                            sets.id(&graph, vec![(seg, t)])
                        } else {
                            let mut next = vec![(seg, t)];
                            closure(&graph, &mut next);
                            sets.id(&graph, next)
                        }
                    }
                    _ => {
                        let mut next: Vec<Element> = sets.keys[s]
                            .iter()
                            .filter_map(|&(seg, state)| {
                                let t = graph.segments[seg as usize].table.next(state, byte);
                                (t != DEAD).then_some((seg, t))
                            })
                            .collect();
                        if next.is_empty() {
                            DEAD
                        } else {
                            closure(&graph, &mut next);
                            sets.id(&graph, next)
                        }
                    }
                };
                trans[s * stride + c] = target;
            }
            if sets.keys.len() > limits.max_states + 1 {
                return Err(BuildError::TooLarge {
                    what: format!("more than {} states", limits.max_states),
                });
            }
            trans.resize(sets.keys.len() * stride, DEAD);
            s += 1;
        }
        let table = Table::from_parts(classes, stride, trans, sets.accept, false);
        let (table, order) = table.trim_map();
        let mut elements = Vec::new();
        let mut offsets = vec![0u32, 0];
        for old in order {
            elements.extend_from_slice(&sets.keys[old as usize]);
            offsets.push(elements.len() as u32);
        }
        Ok(Self {
            table,
            elements,
            offsets,
            graph,
        })
    }

    /// The `(segment, state)` pairs a table state stands for.
    pub fn elements(&self, state: u32) -> &[Element] {
        match (
            self.offsets.get(state as usize),
            self.offsets.get(state as usize + 1),
        ) {
            (Some(&a), Some(&b)) => &self.elements[a as usize..b as usize],
            _ => &[],
        }
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

/// The sets of pairs found so far, each a state: index = state id (0: dead).
struct Sets {
    /// Per segment and state: the id of the set holding that pair alone.
    single: Vec<Vec<u32>>,
    multi: FxHashMap<Vec<Element>, u32>,
    keys: Vec<Vec<Element>>,
    accept: Vec<bool>,
}

impl Sets {
    /// The id of `set` (sorted, closed), added if new.
    fn id(&mut self, graph: &Graph, set: Vec<Element>) -> u32 {
        let found = match set[..] {
            [(seg, state)] => self.single[seg as usize][state as usize],
            _ => self.multi.get(&set).copied().unwrap_or(DEAD),
        };
        if found != DEAD {
            return found;
        }
        let id = self.keys.len() as u32;
        match set[..] {
            [(seg, state)] => self.single[seg as usize][state as usize] = id,
            _ => {
                self.multi.insert(set.clone(), id);
            }
        }
        self.accept.push(set.iter().any(|&(seg, state)| {
            let s = &graph.segments[seg as usize];
            s.last && s.table.is_accepting(state)
        }));
        self.keys.push(set);
        id
    }
}

/// Adds, for every pair in an accepting state, the start of each following segment
/// (repeatedly), then sorts and deduplicates.
fn closure(graph: &Graph, set: &mut Vec<Element>) {
    let mut i = 0;
    while i < set.len() {
        let (seg, state) = set[i];
        let segment = &graph.segments[seg as usize];
        if segment.table.is_accepting(state) {
            for &n in &segment.next {
                let e = (n as u32, START);
                if !set.contains(&e) {
                    set.push(e);
                }
            }
        }
        i += 1;
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
