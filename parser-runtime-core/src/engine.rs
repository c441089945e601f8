//! The streaming engine: routes output text into regions by walking the delimiter DFAs of a
//! [`CompiledTemplate`], and builds the message.
//!
//! Semantics follow the reference `ResponseParser` (transformers 5.23.0,
//! `chat_parsing/response_parser.py`): while an explicit region is open only its close is
//! watched; otherwise every explicit open and the implicit field's close are. Among complete
//! matches the earliest start wins, then the longest, then opens before closes, then the field
//! name; a complete match is committed only when no still-pending delimiter starts at or before
//! it. Bytes that may still become a delimiter are held back.
//!
//! Partial matching is incremental: the engine keeps a set of live DFA walks (one per candidate
//! start, deduplicated by DFA state so that only the leftmost start of equal futures is kept) and
//! advances each by one byte per input byte, so streaming cost is linear in the output length
//! whatever the chunking; held text is never rescanned on a later feed.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use regex_automata::util::primitives::StateID;
use regex_automata::{Anchored, Input};
use serde_json::{Map, Value};

use crate::error::ParseError;
use crate::event::Event;
use crate::tables::{Branch, CompiledTemplate, Delimiter, EDGE_GROW, EDGE_REACH, EDGE_SURE};
use crate::tools::ToolSchemas;
use crate::transform::{process_field, py_type_name};

/// The message: the assistant-message object (`{"role": ..., "content": ..., ...}`).
pub type Message = Map<String, Value>;

/// Open or close delimiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Open,
    Close,
}

/// One watched delimiter: a field's open or close.
#[derive(Debug, Clone, Copy)]
struct Watch {
    kind: Kind,
    field: usize,
}

/// Where a walk is: in the main part of a branch, or in its trailing look-ahead.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Walking the main DFA; `last_match` is the end of the preferred match seen so far.
    Main {
        state: StateID,
        last_match: Option<usize>,
    },
    /// The main part matched `[start, main_end)`; walking the look-ahead from `main_end`.
    Look { state: StateID, main_end: usize },
}

/// A live DFA walk from one candidate start.
#[derive(Debug, Clone, Copy)]
struct Walk {
    watch: u16,
    branch: u16,
    start: usize,
    phase: Phase,
}

/// A complete, final delimiter match.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    watch: u16,
    branch: u16,
    start: usize,
    end: usize,
}

/// Incremental scan state for the current watch list.
#[derive(Debug, Default)]
struct Scan {
    /// The watched delimiters (depends on the current region).
    watch: Vec<Watch>,
    /// Union of the first-byte tables of the watched delimiters.
    first: Option<[bool; 256]>,
    /// Absolute position of the next byte to scan.
    next: usize,
    walks: Vec<Walk>,
    /// Spare buffer for `walks` (reused so stepping does not allocate).
    spare: Vec<Walk>,
    /// Per watched delimiter, its preferred complete match: the leftmost start, and at one
    /// start the first branch (Python's alternation order), whatever the length.
    preferred: Vec<Option<Candidate>>,
    /// The best of the preferred matches (reference `_scan` key).
    best: Option<Candidate>,
}

/// What happened to a walk after a step.
enum Step {
    Live(Walk),
    Done(Option<Candidate>),
}

/// A streaming response parser: one per generated sequence.
///
/// Reference: `ResponseParser` (transformers 5.23.0, `chat_parsing/response_parser.py`).
///
/// ```text
/// let mut parser = ResponseParser::new(&template, prefix)?;
/// handle(parser.initial_events());
/// for chunk in stream { handle(&parser.feed(chunk)?); }
/// let (message, events) = parser.finalize()?;
/// ```
#[derive(Debug)]
pub struct ResponseParser<'t> {
    tpl: &'t CompiledTemplate,
    tools: ToolSchemas,
    /// Text not yet released: `buf[0]` is absolute position `base`.
    buf: String,
    base: usize,
    /// Absolute position up to which text has been routed.
    pos: usize,
    current: Option<usize>,
    opened: bool,
    body: String,
    body_start: usize,
    captures: Vec<(String, String)>,
    output: Message,
    finalized: bool,
    scan: Scan,
    utf8_tail: Vec<u8>,
    fed_bytes: usize,
    hold_limit: usize,
    /// Length of the replayed prefix tail: output offsets are absolute positions minus this.
    prefix_len: usize,
    /// Span of the open delimiter of the current explicit region.
    open_span: Option<(usize, usize)>,
    initial_events: Vec<Event>,
}

/// The default cap, in bytes, on text held back because it may still become a delimiter
/// (see [`ResponseParser::set_hold_limit`]).
pub const DEFAULT_HOLD_LIMIT: usize = 64 << 20;

impl<'t> ResponseParser<'t> {
    /// A parser for one output. `prefix` is the chat prompt the model saw (it is cut after the
    /// last start anchor and replayed; its events are [`Self::initial_events`]); pass `""` to
    /// opt out explicitly.
    ///
    /// Errors: a region opened and closed inside the prefix that fails to parse.
    pub fn new(template: &'t CompiledTemplate, prefix: &str) -> Result<Self, ParseError> {
        Self::with_tools(template, prefix, &[])
    }

    /// Like [`Self::new`], with the request's tools (OpenAI tool JSON): tool-call arguments are
    /// cast by each tool's JSON Schema when a region closes (reference `_coerce_tool_calls`).
    pub fn with_tools(
        template: &'t CompiledTemplate,
        prefix: &str,
        tools: &[Value],
    ) -> Result<Self, ParseError> {
        let mut parser = Self {
            tpl: template,
            tools: ToolSchemas::from_tools(tools),
            buf: String::new(),
            base: 0,
            pos: 0,
            current: template.implicit,
            opened: false,
            body: String::new(),
            body_start: 0,
            captures: Vec::new(),
            output: template.defaults.clone(),
            finalized: false,
            scan: Scan::default(),
            utf8_tail: Vec::new(),
            fed_bytes: 0,
            hold_limit: DEFAULT_HOLD_LIMIT,
            prefix_len: 0,
            open_span: None,
            initial_events: Vec::new(),
        };
        parser.reset_scan();
        if !prefix.is_empty() {
            let cut = template.start_anchor.last_end(prefix);
            let truncated = &prefix[cut..];
            if !truncated.is_empty() {
                parser.prefix_len = truncated.len();
                parser.buf.push_str(truncated);
                let mut events = Vec::new();
                let result = parser.process(&mut events, false);
                parser.initial_events = events;
                result?;
            }
        }
        Ok(parser)
    }

    /// Caps the text held back while a delimiter may still match (bytes; default
    /// [`DEFAULT_HOLD_LIMIT`]). A template whose delimiter can run on (`[^<]*<\|x\|>`, a
    /// whole-pattern look-ahead such as `(?=[\s\S]*?</think>)`) holds text until it resolves;
    /// past the cap, `feed` fails with [`ParseError::HoldOverflow`] instead of growing without
    /// bound. Nothing is dropped or misrouted.
    pub fn set_hold_limit(&mut self, bytes: usize) {
        self.hold_limit = bytes;
    }

    /// The events produced while replaying the prefix (regions the chat template opened).
    pub fn initial_events(&self) -> &[Event] {
        &self.initial_events
    }

    /// Feeds the next piece of output; returns the events it causes.
    ///
    /// Errors: [`ParseError::Finalized`] after [`Self::finalize`]; [`ParseError::Content`] when
    /// a region that closes cannot be parsed; [`ParseError::InvalidUtf8`] when bytes held by
    /// [`Self::feed_bytes`] are incomplete.
    pub fn feed(&mut self, text: &str) -> Result<Vec<Event>, ParseError> {
        if self.finalized {
            return Err(ParseError::Finalized);
        }
        if !self.utf8_tail.is_empty() {
            return Err(ParseError::InvalidUtf8 {
                offset: self.fed_bytes - self.utf8_tail.len(),
            });
        }
        self.fed_bytes += text.len();
        self.buf.push_str(text);
        let mut events = Vec::new();
        self.process(&mut events, false)?;
        Ok(events)
    }

    /// Feeds arbitrary bytes: an incomplete UTF-8 sequence at the end is held until the next
    /// call completes it. Errors: [`ParseError::InvalidUtf8`] with the byte offset (in the
    /// output) of invalid UTF-8; otherwise as [`Self::feed`].
    pub fn feed_bytes(&mut self, bytes: &[u8]) -> Result<Vec<Event>, ParseError> {
        if self.finalized {
            return Err(ParseError::Finalized);
        }
        let start_offset = self.fed_bytes - self.utf8_tail.len();
        let mut pending = core::mem::take(&mut self.utf8_tail);
        pending.extend_from_slice(bytes);
        let (valid, tail) = match core::str::from_utf8(&pending) {
            Ok(_) => (pending.len(), 0),
            Err(e) => {
                if e.error_len().is_some() {
                    return Err(ParseError::InvalidUtf8 {
                        offset: start_offset + e.valid_up_to(),
                    });
                }
                (e.valid_up_to(), pending.len() - e.valid_up_to())
            }
        };
        let text =
            core::str::from_utf8(&pending[..valid]).map_err(|e| ParseError::InvalidUtf8 {
                offset: start_offset + e.valid_up_to(),
            })?;
        self.fed_bytes = start_offset + valid;
        self.buf.push_str(text);
        self.fed_bytes += tail;
        self.utf8_tail = pending[valid..].to_vec();
        let mut events = Vec::new();
        self.process(&mut events, false)?;
        Ok(events)
    }

    /// Ends the output: closes every open region, checks `optional: false` fields, drops empty
    /// values (`null`, `""`, `[]`, `{}`) whose key is not in `defaults`, and returns the message
    /// with the final events. Reference: `ResponseParser.finalize`.
    pub fn finalize(&mut self) -> Result<(Message, Vec<Event>), ParseError> {
        if self.finalized {
            return Err(ParseError::Finalized);
        }
        if !self.utf8_tail.is_empty() {
            return Err(ParseError::InvalidUtf8 {
                offset: self.fed_bytes - self.utf8_tail.len(),
            });
        }
        let mut events = Vec::new();
        self.process(&mut events, true)?;
        let missing: Vec<String> = self
            .tpl
            .fields
            .iter()
            .filter(|f| !f.optional && !self.output.contains_key(&f.name))
            .map(|f| f.name.clone())
            .collect();
        if !missing.is_empty() {
            return Err(ParseError::MissingRequired(missing));
        }
        let defaults = &self.tpl.defaults;
        let output = core::mem::take(&mut self.output);
        let message: Message = output
            .into_iter()
            .filter(|(k, v)| defaults.contains_key(k) || !is_empty(v))
            .collect();
        self.finalized = true;
        Ok((message, events))
    }

    // ----------------------------------------------------------------------------------------
    // The router.

    fn end(&self) -> usize {
        self.base + self.buf.len()
    }

    fn byte_at(&self, abs: usize) -> u8 {
        self.buf.as_bytes()[abs - self.base]
    }

    fn slice(&self, from: usize, to: usize) -> &str {
        &self.buf[from - self.base..to - self.base]
    }

    /// Reference `_process`: commit delimiters while possible, then route what is safe.
    fn process(&mut self, events: &mut Vec<Event>, eos: bool) -> Result<(), ParseError> {
        loop {
            self.advance();
            if self.committable().is_none() {
                if eos {
                    self.resolve_eoi();
                } else {
                    self.resolve_edge();
                }
            }
            if let Some(c) = self.committable() {
                if c.start > self.pos {
                    self.accumulate(events, self.pos, c.start);
                }
                self.pos = c.end;
                let watch = self.scan.watch[c.watch as usize];
                // Forget the committed candidate before closing: if the region fails to parse,
                // the next call goes on from `pos` like the reference, not from the stale match.
                self.reset_scan();
                match watch.kind {
                    Kind::Open => {
                        let captures = self.resolve_captures(&c);
                        self.close_current(events)?;
                        self.open_explicit(events, watch.field, &c, captures);
                    }
                    Kind::Close => {
                        let had_content = self.opened;
                        if c.start == c.end
                            && self.open_span == Some((c.start, c.start))
                            && self.body.is_empty()
                        {
                            // A zero-width open and a zero-width close at one position would
                            // re-fire forever (the reference loops); fail instead.
                            let (offset, in_prefix) = self.located(c.start);
                            return Err(ParseError::NoProgress {
                                field: self.tpl.fields[watch.field].name.clone(),
                                offset,
                                in_prefix,
                            });
                        }
                        self.close_current(events)?;
                        if !had_content && c.start == c.end {
                            // Reference: a zero-width close on an empty region stops this call.
                            self.reset_scan();
                            return Ok(());
                        }
                    }
                }
                self.reset_scan();
                continue;
            }
            let end = self.end();
            if eos {
                if self.pos < end {
                    self.accumulate(events, self.pos, end);
                    self.pos = end;
                }
                self.close_current(events)?;
                self.reset_scan();
                return Ok(());
            }
            let hold = self.scan.walks.iter().map(|w| w.start).min().unwrap_or(end);
            if hold > self.pos {
                self.accumulate(events, self.pos, hold);
                self.pos = hold;
            }
            if end - hold > self.hold_limit {
                return Err(ParseError::HoldOverflow {
                    offset: self.output_offset(hold),
                    held: end - hold,
                    limit: self.hold_limit,
                });
            }
            self.trim();
            return Ok(());
        }
    }

    /// Drops released text from the front of the buffer, keeping what live walks and the
    /// look-behind byte of the next start need.
    fn trim(&mut self) {
        let keep_from = self
            .scan
            .walks
            .iter()
            .map(|w| w.start)
            .min()
            .unwrap_or(self.pos)
            .min(self.pos);
        // Keep one char before for look-behind assertions.
        let mut cut = keep_from.saturating_sub(4).max(self.base);
        while cut > self.base && !self.buf.is_char_boundary(cut - self.base) {
            cut -= 1;
        }
        let drop = cut - self.base;
        if drop >= 4096 && drop * 2 >= self.buf.len() {
            self.buf.drain(..drop);
            self.base = cut;
        }
    }

    /// The watch list for the current region (reference `_watchlist`).
    fn reset_scan(&mut self) {
        let tpl = self.tpl;
        let mut watch = Vec::new();
        match self.current {
            Some(f) if Some(f) != tpl.implicit => {
                if tpl.fields[f].close.is_some() {
                    watch.push(Watch {
                        kind: Kind::Close,
                        field: f,
                    });
                }
            }
            _ => {
                for (i, field) in tpl.fields.iter().enumerate() {
                    if field.open.is_some() {
                        watch.push(Watch {
                            kind: Kind::Open,
                            field: i,
                        });
                    }
                }
                if let Some(i) = tpl.implicit {
                    if tpl.fields[i].close.is_some() {
                        watch.push(Watch {
                            kind: Kind::Close,
                            field: i,
                        });
                    }
                }
            }
        }
        let mut first = [false; 256];
        for w in &watch {
            let d = self.delimiter(*w);
            for (slot, &b) in first.iter_mut().zip(d.first_bytes.iter()) {
                *slot |= b;
            }
        }
        self.scan.watch = watch;
        self.scan.first = Some(first);
        self.scan.next = self.pos;
        self.scan.walks.clear();
        self.scan.preferred.clear();
        self.scan.preferred.resize(self.scan.watch.len(), None);
        self.scan.best = None;
    }

    fn delimiter(&self, w: Watch) -> &'t Delimiter {
        let field = &self.tpl.fields[w.field];
        let d = match w.kind {
            Kind::Open => field.open.as_ref(),
            Kind::Close => field.close.as_ref(),
        };
        // The watch list only holds delimiters that exist.
        d.unwrap_or_else(|| unreachable!("watched delimiter exists"))
    }

    fn branch(&self, watch: u16, branch: u16) -> &'t Branch {
        let w = self.scan.watch[watch as usize];
        &self.delimiter(w).branches[branch as usize]
    }

    /// The best candidate, if nothing pending starts at or before it.
    fn committable(&self) -> Option<Candidate> {
        let best = self.scan.best?;
        if self.scan.walks.iter().all(|w| w.start > best.start) {
            Some(best)
        } else {
            None
        }
    }

    /// Orders the preferred matches of two different delimiters (reference `_scan` key):
    /// earliest start, then longest, then opens before closes, then field name.
    fn better(&self, a: &Candidate, b: &Candidate) -> bool {
        if a.start != b.start {
            return a.start < b.start;
        }
        let (la, lb) = (a.end - a.start, b.end - b.start);
        if la != lb {
            return la > lb;
        }
        let (wa, wb) = (
            self.scan.watch[a.watch as usize],
            self.scan.watch[b.watch as usize],
        );
        if wa.kind != wb.kind {
            return wa.kind == Kind::Open;
        }
        self.tpl.name_rank[wa.field] < self.tpl.name_rank[wb.field]
    }

    /// Records a complete match. Like the reference, each delimiter contributes only its own
    /// preferred match (what Python's `search` returns: leftmost, then first branch), and only
    /// then are delimiters compared; so a later, longer branch never beats another delimiter.
    fn offer(&mut self, c: Candidate) {
        let Some(slot) = self.scan.preferred.get_mut(c.watch as usize) else {
            return;
        };
        if let Some(p) = slot {
            if (p.start, p.branch) <= (c.start, c.branch) {
                return;
            }
        }
        *slot = Some(c);
        let mut best: Option<Candidate> = None;
        for cand in self.scan.preferred.iter().flatten() {
            if best.is_none_or(|b| self.better(cand, &b)) {
                best = Some(*cand);
            }
        }
        self.scan.best = best;
    }

    /// Scans the unscanned bytes of the buffer, one at a time, until a candidate is committable.
    fn advance(&mut self) {
        let end = self.end();
        while self.scan.next < end {
            if self.scan.walks.is_empty() && self.scan.best.is_none() {
                // Skip bytes that cannot start any watched delimiter.
                let first = self.scan.first.unwrap_or([true; 256]);
                let from = self.scan.next - self.base;
                let skip = self.buf.as_bytes()[from..]
                    .iter()
                    .position(|&b| first[b as usize]);
                match skip {
                    Some(n) => self.scan.next += n,
                    None => {
                        self.scan.next = end;
                        break;
                    }
                }
            }
            let p = self.scan.next;
            self.step(p);
            self.scan.next = p + 1;
            if self.committable().is_some() {
                break;
            }
        }
    }

    /// Advances every walk by the byte at `p`, starting new walks at `p` first.
    fn step(&mut self, p: usize) {
        let byte = self.byte_at(p);
        // New walks start only at char boundaries, and only if they could beat the best.
        let can_start = (byte & 0xC0) != 0x80 && self.scan.best.is_none_or(|b| p <= b.start);
        if can_start && self.scan.first.is_none_or(|f| f[byte as usize]) {
            self.start_walks(p, |d| d.first_bytes[byte as usize]);
        }
        // Double-buffered walk lists: no allocation per byte once capacity is reached.
        let mut walks = core::mem::take(&mut self.scan.walks);
        let mut kept = core::mem::take(&mut self.scan.spare);
        kept.clear();
        for w in walks.drain(..) {
            match self.step_walk(w, p, byte) {
                Step::Live(w) => {
                    let has_lookahead = self.branch(w.watch, w.branch).lookahead.is_some();
                    push_dedup(&mut kept, w, has_lookahead)
                }
                Step::Done(Some(c)) => self.offer(c),
                Step::Done(None) => {}
            }
        }
        self.scan.walks = kept;
        self.scan.spare = walks;
        if let Some(best) = self.scan.best {
            // Walks that start after the best candidate can no longer matter.
            self.scan.walks.retain(|w| w.start <= best.start);
        }
    }

    /// Starts a walk at `p` for every branch of every watched delimiter that `wanted` accepts.
    fn start_walks(&mut self, p: usize, wanted: impl Fn(&Delimiter) -> bool) {
        let look_behind = if p == 0 {
            None
        } else {
            Some(self.byte_at(p - 1))
        };
        for wi in 0..self.scan.watch.len() {
            let d = self.delimiter(self.scan.watch[wi]);
            if !wanted(d) {
                continue;
            }
            for (bi, br) in d.branches.iter().enumerate() {
                if let Some(state) = br.dfa.start(look_behind) {
                    self.scan.walks.push(Walk {
                        watch: wi as u16,
                        branch: bi as u16,
                        start: p,
                        phase: Phase::Main {
                            state,
                            last_match: None,
                        },
                    });
                }
            }
        }
    }

    fn step_walk(&self, w: Walk, p: usize, byte: u8) -> Step {
        let br = self.branch(w.watch, w.branch);
        match w.phase {
            Phase::Main { state, last_match } => {
                let dfa = &br.dfa.dfa;
                let next = dfa.next_state(state, byte);
                let last_match = if dfa.is_match_state(next) {
                    Some(p)
                } else {
                    last_match
                };
                if dfa.is_dead_state(next) || dfa.is_quit_state(next) {
                    match last_match {
                        Some(e) => self.main_matched(w, e, p + 1),
                        None => Step::Done(None),
                    }
                } else {
                    Step::Live(Walk {
                        phase: Phase::Main {
                            state: next,
                            last_match,
                        },
                        ..w
                    })
                }
            }
            Phase::Look { state, main_end } => {
                // `br.lookahead` exists for walks in this phase.
                let Some(la) = br.lookahead.as_ref() else {
                    return Step::Done(None);
                };
                let dfa = &la.dfa.dfa;
                let next = dfa.next_state(state, byte);
                let cand = Candidate {
                    watch: w.watch,
                    branch: w.branch,
                    start: w.start,
                    end: main_end,
                };
                if dfa.is_match_state(next) {
                    Step::Done(if la.negated { None } else { Some(cand) })
                } else if dfa.is_dead_state(next) || dfa.is_quit_state(next) {
                    Step::Done(if la.negated { Some(cand) } else { None })
                } else {
                    Step::Live(Walk {
                        phase: Phase::Look {
                            state: next,
                            main_end,
                        },
                        ..w
                    })
                }
            }
        }
    }

    /// The main part of a walk matched `[w.start, e)`; bytes up to `scanned` (exclusive) have
    /// been seen. Without a look-ahead that is a candidate; with one, walk the look-ahead over
    /// the seen bytes.
    fn main_matched(&self, w: Walk, e: usize, scanned: usize) -> Step {
        let br = self.branch(w.watch, w.branch);
        let cand = Candidate {
            watch: w.watch,
            branch: w.branch,
            start: w.start,
            end: e,
        };
        let Some(la) = br.lookahead.as_ref() else {
            return Step::Done(Some(cand));
        };
        let look_behind = if e == 0 {
            None
        } else {
            Some(self.byte_at(e - 1))
        };
        let Some(state) = la.dfa.start(look_behind) else {
            return Step::Done(None);
        };
        let mut lw = Walk {
            phase: Phase::Look { state, main_end: e },
            ..w
        };
        for q in e..scanned {
            match self.step_walk(lw, q, self.byte_at(q)) {
                Step::Live(next) => lw = next,
                done => return done,
            }
        }
        Step::Live(lw)
    }

    /// At the end of the buffer (more output may come): settle the walks whose outcome is
    /// already certain.
    fn resolve_edge(&mut self) {
        let end = self.end();
        let mut walks = core::mem::take(&mut self.scan.walks);
        let mut kept = core::mem::take(&mut self.scan.spare);
        kept.clear();
        for w in walks.drain(..) {
            match self.edge_walk(w, end) {
                Step::Live(w) => kept.push(w),
                Step::Done(Some(c)) => self.offer(c),
                Step::Done(None) => {}
            }
        }
        self.scan.walks = kept;
        self.scan.spare = walks;
    }

    fn edge_walk(&self, w: Walk, end: usize) -> Step {
        let br = self.branch(w.watch, w.branch);
        match w.phase {
            Phase::Main { state, last_match } => {
                let facts = br.dfa.edge(state);
                if facts & EDGE_GROW != 0 {
                    Step::Live(w)
                } else if facts & EDGE_SURE != 0 {
                    match self.main_matched(w, end, end) {
                        Step::Live(lw) => self.edge_walk(lw, end),
                        done => done,
                    }
                } else if facts & EDGE_REACH != 0 {
                    Step::Live(w)
                } else {
                    match last_match {
                        Some(e) => match self.main_matched(w, e, end) {
                            Step::Live(lw) => self.edge_walk(lw, end),
                            done => done,
                        },
                        None => Step::Done(None),
                    }
                }
            }
            Phase::Look { state, main_end } => {
                let Some(la) = br.lookahead.as_ref() else {
                    return Step::Done(None);
                };
                let facts = la.dfa.edge(state);
                let cand = Candidate {
                    watch: w.watch,
                    branch: w.branch,
                    start: w.start,
                    end: main_end,
                };
                if facts & EDGE_SURE != 0 {
                    Step::Done(if la.negated { None } else { Some(cand) })
                } else if facts & EDGE_REACH != 0 {
                    Step::Live(w)
                } else {
                    Step::Done(if la.negated { Some(cand) } else { None })
                }
            }
        }
    }

    /// At the end of output: every walk ends (`next_eoi_state`).
    fn resolve_eoi(&mut self) {
        let end = self.end();
        // No walk starts at the end itself: like the reference (`_scan` commits only matches
        // starting before the buffer end), an empty match at the very end is never taken.
        let walks = core::mem::take(&mut self.scan.walks);
        for w in walks {
            if let Some(c) = self.eoi_walk(w, end) {
                self.offer(c);
            }
        }
    }

    fn eoi_walk(&self, w: Walk, end: usize) -> Option<Candidate> {
        let br = self.branch(w.watch, w.branch);
        match w.phase {
            Phase::Main { state, last_match } => {
                let dfa = &br.dfa.dfa;
                let eoi = dfa.next_eoi_state(state);
                let last_match = if dfa.is_match_state(eoi) {
                    Some(end)
                } else {
                    last_match
                };
                let e = last_match?;
                match self.main_matched(w, e, end) {
                    Step::Live(lw) => self.eoi_walk(lw, end),
                    Step::Done(c) => c,
                }
            }
            Phase::Look { state, main_end } => {
                let la = br.lookahead.as_ref()?;
                let dfa = &la.dfa.dfa;
                let matched = dfa.is_match_state(dfa.next_eoi_state(state));
                let cand = Candidate {
                    watch: w.watch,
                    branch: w.branch,
                    start: w.start,
                    end: main_end,
                };
                (matched != la.negated).then_some(cand)
            }
        }
    }

    // ----------------------------------------------------------------------------------------
    // Regions (reference `_accumulate`, `_open_explicit`, `_close_current`).

    fn accumulate(&mut self, events: &mut Vec<Event>, from: usize, to: usize) {
        if from >= to {
            return;
        }
        let Some(f) = self.current else { return };
        let field = &self.tpl.fields[f];
        if !self.opened {
            events.push(Event::RegionOpen {
                field: field.name.clone(),
            });
            self.opened = true;
            self.body_start = from;
        }
        let text = self.slice(from, to).to_string();
        self.body.push_str(&text);
        events.push(Event::RegionChunk {
            field: field.name.clone(),
            text,
            dirty: field.dirty(),
        });
    }

    fn open_explicit(
        &mut self,
        events: &mut Vec<Event>,
        f: usize,
        c: &Candidate,
        captures: Vec<(String, String)>,
    ) {
        let field = &self.tpl.fields[f];
        self.current = Some(f);
        self.captures = captures;
        self.body.clear();
        self.body_start = c.end;
        self.open_span = Some((c.start, c.end));
        self.opened = true;
        events.push(Event::RegionOpen {
            field: field.name.clone(),
        });
    }

    /// Byte offset in the output of absolute position `abs` (0 for positions in the prefix).
    fn output_offset(&self, abs: usize) -> usize {
        abs.saturating_sub(self.prefix_len)
    }

    /// Where absolute position `abs` is: `(offset in the output, false)`, or `(offset in the
    /// prefix after its last start anchor, true)`.
    fn located(&self, abs: usize) -> (usize, bool) {
        if abs < self.prefix_len {
            (abs, true)
        } else {
            (abs - self.prefix_len, false)
        }
    }

    /// Named groups of the open delimiter, resolved on the span the DFA found.
    fn resolve_captures(&self, c: &Candidate) -> Vec<(String, String)> {
        let br = self.branch(c.watch, c.branch);
        let Some(re) = br.captures.as_ref().map(|c| &c.regex) else {
            return Vec::new();
        };
        let hay = self.buf.as_bytes();
        let input = Input::new(hay)
            .range(c.start - self.base..c.end - self.base)
            .anchored(Anchored::Yes);
        let mut caps = re.create_captures();
        re.search_captures(&input, &mut caps);
        let mut out = Vec::new();
        let names: Vec<(usize, &str)> = caps
            .group_info()
            .pattern_names(regex_automata::PatternID::ZERO)
            .enumerate()
            .filter_map(|(i, n)| n.map(|n| (i, n)))
            .collect();
        for (i, name) in names {
            if let Some(span) = caps.get_group(i) {
                out.push((name.to_string(), self.buf[span.start..span.end].to_string()));
            }
        }
        out
    }

    fn close_current(&mut self, events: &mut Vec<Event>) -> Result<(), ParseError> {
        let Some(f) = self.current.filter(|_| self.opened) else {
            self.reset_to_implicit();
            return Ok(());
        };
        let field = &self.tpl.fields[f];
        let (offset, in_prefix) = self.located(self.body_start);
        let content_error = |source| ParseError::Content {
            field: field.name.clone(),
            offset,
            in_prefix,
            source,
        };
        let mut value = process_field(&self.body, field, &self.captures).map_err(content_error)?;
        if !self.tools.is_empty() {
            self.tools.coerce(&mut value);
        }
        if let Some(join) = &field.join {
            let Value::String(s) = &value else {
                return Err(content_error(crate::ContentError::JoinNotString {
                    found: py_type_name(&value).into(),
                }));
            };
            // Reference: `value if previous is None else previous + join + value`.
            let joined = match self.output.get(&field.name) {
                None | Some(Value::Null) => s.clone(),
                Some(Value::String(prev)) => {
                    let mut out = prev.clone();
                    out.push_str(join);
                    out.push_str(s);
                    out
                }
                Some(other) => {
                    return Err(content_error(crate::ContentError::JoinTargetNotString {
                        found: py_type_name(other).into(),
                    }))
                }
            };
            self.output
                .insert(field.name.clone(), Value::String(joined));
        } else if field.repeats {
            // Reference: `setdefault(name, []).append(value)`.
            match self.output.get_mut(&field.name) {
                Some(Value::Array(list)) => list.push(value.clone()),
                None => {
                    self.output
                        .insert(field.name.clone(), Value::Array(alloc::vec![value.clone()]));
                }
                Some(other) => {
                    return Err(content_error(crate::ContentError::RepeatsTargetNotList {
                        found: py_type_name(other).into(),
                    }))
                }
            }
        } else {
            self.output.insert(field.name.clone(), value.clone());
        }
        events.push(Event::RegionClose {
            field: field.name.clone(),
            value,
        });
        self.reset_to_implicit();
        Ok(())
    }

    fn reset_to_implicit(&mut self) {
        self.current = self.tpl.implicit;
        self.open_span = None;
        self.captures.clear();
        self.body.clear();
        self.opened = false;
    }
}

/// How many walks of one look-ahead branch in one DFA state may carry distinct match ends
/// before they are merged anyway (keeps the walk list bounded; see `push_dedup`).
const LOOKAHEAD_WALKS_PER_STATE: usize = 16;

/// Keeps only the leftmost of walks with the same future (same branch, phase and DFA state).
/// A main walk with a recorded match and one without are kept apart: if the future brings no
/// match, only the former has one. In a branch with a trailing look-ahead the recorded match end
/// itself matters (the look-ahead is checked from it), so such walks merge only when it is
/// equal, up to [`LOOKAHEAD_WALKS_PER_STATE`] per state; past that they merge into the leftmost
/// (its match end is then used for all), which bounds the cost on patterns like
/// `[ab](?:c[^d]*d)?(?=cx)` over long inputs.
fn push_dedup(kept: &mut Vec<Walk>, w: Walk, has_lookahead: bool) {
    let same_state = |a: &Walk| {
        a.watch == w.watch
            && a.branch == w.branch
            && match (a.phase, w.phase) {
                (
                    Phase::Main {
                        state: s1,
                        last_match: m1,
                    },
                    Phase::Main {
                        state: s2,
                        last_match: m2,
                    },
                ) => s1 == s2 && m1.is_some() == m2.is_some(),
                (Phase::Look { state: s1, .. }, Phase::Look { state: s2, .. }) => s1 == s2,
                _ => false,
            }
    };
    let same_end = |a: &Walk| match (a.phase, w.phase) {
        (Phase::Main { last_match: m1, .. }, Phase::Main { last_match: m2, .. }) => m1 == m2,
        _ => true,
    };
    let target = if has_lookahead {
        let exact = kept.iter().position(|a| same_state(a) && same_end(a));
        exact.or_else(|| {
            let mut alike = kept.iter().enumerate().filter(|(_, a)| same_state(a));
            let first = alike.next().map(|(i, _)| i);
            (alike.count() + 1 >= LOOKAHEAD_WALKS_PER_STATE)
                .then_some(first)
                .flatten()
        })
    } else {
        kept.iter().position(same_state)
    };
    match target {
        Some(i) => {
            if w.start < kept[i].start {
                kept[i] = w;
            }
        }
        None => kept.push(w),
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Parses one complete output (reference `parse_response`): feeds `text` in one piece and
/// finalizes.
pub fn parse_response(
    template: &CompiledTemplate,
    text: &str,
    prefix: &str,
    tools: &[Value],
) -> Result<Message, ParseError> {
    let mut parser = ResponseParser::with_tools(template, prefix, tools)?;
    // The whole output is already in memory: holding it back costs nothing more.
    parser.set_hold_limit(usize::MAX);
    parser.feed(text)?;
    Ok(parser.finalize()?.0)
}

/// The prefixes of a batch: one for all outputs, or one per output.
#[derive(Debug, Clone, Copy)]
pub enum Prefixes<'a> {
    /// The same prefix for every output.
    Broadcast(&'a str),
    /// One prefix per output (same length as the outputs).
    PerOutput(&'a [&'a str]),
}

/// Parses a batch of outputs. Errors: [`ParseError::BatchLengthMismatch`] when
/// `Prefixes::PerOutput` has a different length than `texts`; otherwise the first error of an
/// output.
pub fn parse_responses(
    template: &CompiledTemplate,
    texts: &[&str],
    prefixes: Prefixes<'_>,
    tools: &[Value],
) -> Result<Vec<Message>, ParseError> {
    if let Prefixes::PerOutput(list) = prefixes {
        if list.len() != texts.len() {
            return Err(ParseError::BatchLengthMismatch {
                outputs: texts.len(),
                prefixes: list.len(),
            });
        }
    }
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let prefix = match prefixes {
                Prefixes::Broadcast(p) => p,
                Prefixes::PerOutput(list) => list[i],
            };
            parse_response(template, text, prefix, tools)
        })
        .collect()
}
