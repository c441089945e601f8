//! The scan: the `Core` engine that walks the delimiter DFAs over a buffer (live walks
//! deduplicated by DFA state, complete candidates, prefilter jumps, edge and end-of-input
//! resolution), commits delimiters and routes text into regions through a [`Sink`]. See the
//! `router` module docs and docs/internals.md, "Partial matching" and "Prefilter".

use arrayvec::ArrayVec;
use regex_automata::util::primitives::StateID;

use super::driver::{Sink, Stop};
use super::hold::Slots;
use super::memo::{Future, Key, Memo, NO_GROUP};
use super::{
    ByteSet, DelimiterKind, RegionValue, RouteDfa, RouteError, Routes, Span, EDGE_DELAYED,
    EDGE_GROW, EDGE_REACH, EDGE_SURE,
};
use crate::tables::context_byte;
use crate::values::Values;

#[derive(Debug, Clone, Copy)]
struct Watch {
    kind: DelimiterKind,
    field: usize,
    /// The delimiter's first-byte set.
    first: ByteSet,
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
    route: Route,
    /// The walk's cells in the memo (`NO_GROUP`: none).
    group: u32,
    start: usize,
    phase: Phase,
}

/// A watched delimiter (its index in the watch list: high half) and one of its branches (low
/// half), in one field: walks and candidates are copied whole through the step loop, and a
/// 32-bit read of two 16-bit fields just written stalls store forwarding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Route(u32);

impl Route {
    fn new(watch: usize, branch: usize) -> Self {
        Self(((watch as u32) << 16) | (branch as u32 & 0xFFFF))
    }

    #[inline]
    fn watch(self) -> u16 {
        (self.0 >> 16) as u16
    }

    #[inline]
    fn branch(self) -> u16 {
        self.0 as u16
    }
}

impl Walk {
    #[inline]
    fn watch(&self) -> u16 {
        self.route.watch()
    }

    #[inline]
    fn branch(&self) -> u16 {
        self.route.branch()
    }

    /// Whether the walk is in its look-ahead.
    #[inline]
    fn look(&self) -> bool {
        matches!(self.phase, Phase::Look { .. })
    }

    /// The end of the match the main part recorded (`None` in the look-ahead).
    #[inline]
    fn last_match(&self) -> Option<usize> {
        match self.phase {
            Phase::Main { last_match, .. } => last_match,
            Phase::Look { .. } => None,
        }
    }
}

/// A complete, final delimiter match.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    route: Route,
    start: usize,
    end: usize,
}

/// The prefilter of the current watch list (see the `router` module docs).
#[derive(Debug, Clone)]
struct Jump {
    lead: ByteSet,
    first: ByteSet,
    /// The `first` bytes when there are at most three (memchr), else empty.
    needles: ArrayVec<u8, 3>,
    /// The last hit: `(first-byte position, start of its lead run)`.
    hit: Option<(usize, usize)>,
    /// The last end-of-buffer check: `(buffer end, start of the trailing lead run)`.
    tail: Option<(usize, usize)>,
}

#[derive(Debug)]
struct Scan<const W: usize> {
    watch: Slots<Watch, W>,
    /// Union of the first-byte tables of the watched delimiters.
    first: ByteSet,
    jump: Option<Jump>,
    /// Absolute position of the next byte to scan.
    next: usize,
    walks: Slots<Walk, W>,
    /// Per watched delimiter, its preferred complete match: the leftmost start, and at one
    /// start the first branch (Python's alternation order), whatever the length.
    preferred: Slots<Option<Candidate>, W>,
    /// The best of the preferred matches (reference `_scan` key).
    best: Option<Candidate>,
}

/// What happened to a walk after a step.
#[derive(Clone, Copy)]
enum Step {
    Live(Walk),
    /// The walk ended: its candidate, if any, and the end of its main match (`None`: none).
    Done {
        cand: Option<Candidate>,
        end: Option<usize>,
    },
}

impl Step {
    /// A walk that ended without a match.
    const NONE: Step = Step::Done {
        cand: None,
        end: None,
    };
}

/// A walk at a checkpoint: ended by the memo, or going on.
enum Visit {
    Done(Step),
    Go(Walk),
}

/// Abandons the memo cells of a walk that is dropped before it ended.
fn abandon(memo: &mut Option<Memo>, w: &Walk) {
    if w.group != NO_GROUP {
        if let Some(memo) = memo.as_mut() {
            memo.abandon(w.group);
        }
    }
}

/// Checkpoint spacing of the memo, as a shift: a checkpoint every 128 bytes. A rescan after a
/// commit walks at most this far before it meets the cells of the first scan.
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
const MEMO_SHIFT: u32 = 7;

/// How many walks register a cell at one checkpoint: the first in the walk list, which are
/// the leftmost (the ones that hold commits back). This bounds the memo's memory to a few
/// bytes per byte held; walks past it only look cells up.
const MEMO_CELLS_PER_CHECKPOINT: usize = 4;

/// The router state without its hold buffer (so events can borrow the buffer while the state
/// changes).
#[derive(Debug)]
pub(crate) struct Core<R, const W: usize> {
    pub(crate) routes: R,
    /// Absolute position of the first byte of the buffer being scanned (the hold buffer, or
    /// the fed text when nothing is held).
    pub(super) base: usize,
    /// The character before `base` (`None` at the start of the text), for look-behind and the
    /// context slot of word boundaries: kept when the text before `base` is dropped.
    pub(super) before: Option<char>,
    /// Absolute position up to which text has been routed.
    pos: usize,
    current: Option<usize>,
    opened: bool,
    /// Whether text was routed into the current region.
    body_any: bool,
    body_start: usize,
    /// Span of the open delimiter of the current explicit region.
    open_span: Option<(usize, usize)>,
    /// Length of the replayed prefix: output offsets are absolute positions minus this.
    pub(crate) prefix_len: usize,
    /// Cap on held bytes.
    pub(crate) hold_limit: usize,
    scan: Scan<W>,
    values: Values,
    /// The outcome memo (alloc API; `memo.rs`): `None` in the no-heap router, whose hold
    /// buffer bounds what a rescan can cost.
    memo: Option<Memo>,
    /// The dedup index for long walk lists (alloc API).
    dedup: Dedup,
    /// Lenient mode: in a region whose body is JSON (`Routes::json_strings`), no close
    /// delimiter starts inside a JSON string.
    pub(crate) lenient: bool,
    /// The JSON string state of the open region's body (lenient mode).
    json: JsonStrings,
}

/// Where the body of a JSON region stands with respect to strings, tracked from the body's
/// start up to `at` (absolute): inside a `"` string, and just after a backslash in one. Only
/// the bytes `"` and `\` matter, so a close delimiter that a JSON string holds (`{"q": "what
/// does </tool_call> do"}`) is told apart from one that closes the value. Reference: none
/// (lenient mode, README); RFC 8259 section 7 for the string grammar.
#[derive(Debug, Clone, Copy, Default)]
struct JsonStrings {
    /// Whether the open region is tracked (lenient mode and a JSON region).
    on: bool,
    /// Absolute position up to which the body was read.
    at: usize,
    in_string: bool,
    escaped: bool,
}

impl JsonStrings {
    /// Reads `bytes` (the body from `at` on) and moves `at` to `end`, where they end.
    fn read(&mut self, bytes: &[u8], end: usize) {
        for &b in bytes {
            if self.escaped {
                self.escaped = false;
            } else if self.in_string {
                match b {
                    b'\\' => self.escaped = true,
                    b'"' => self.in_string = false,
                    _ => {}
                }
            } else if b == b'"' {
                self.in_string = true;
            }
        }
        self.at = end;
    }
}

impl<R: Routes, const W: usize> Core<R, W> {
    pub(super) fn with_slots(
        routes: R,
        heap: bool,
        hold_limit: usize,
        values: bool,
    ) -> Result<Self, RouteError> {
        let mut core = Self {
            current: routes.implicit(),
            routes,
            base: 0,
            before: None,
            pos: 0,
            opened: false,
            body_any: false,
            body_start: 0,
            open_span: None,
            prefix_len: 0,
            hold_limit,
            scan: Scan {
                watch: Slots::new(heap),
                first: ByteSet::EMPTY,
                jump: None,
                next: 0,
                walks: Slots::new(heap),
                preferred: Slots::new(heap),
                best: None,
            },
            values: Values::new(values),
            memo: new_memo(heap),
            dedup: Dedup::new(heap),
            lenient: false,
            json: JsonStrings::default(),
        };
        core.reset_scan()?;
        Ok(core)
    }

    fn end(&self, view: &str) -> usize {
        self.base + view.len()
    }

    /// Byte offset in the output of absolute position `abs` (0 for positions in the prefix).
    pub(crate) fn output_offset(&self, abs: usize) -> usize {
        abs.saturating_sub(self.prefix_len)
    }

    /// Where absolute position `abs` is: `(offset in the output, false)`, or `(offset in the
    /// prefix after its last start anchor, true)`.
    pub(crate) fn located(&self, abs: usize) -> (usize, bool) {
        if abs < self.prefix_len {
            (abs, true)
        } else {
            (abs - self.prefix_len, false)
        }
    }

    /// The first absolute position the buffer must keep after processing.
    pub(super) fn keep_from(&self) -> usize {
        self.scan
            .walks
            .as_slice()
            .iter()
            .map(|w| w.start)
            .min()
            .unwrap_or(self.pos)
            .min(self.pos)
    }

    /// The fast path for short pieces: when nothing is pending and no byte of `text` can begin
    /// a watched delimiter (with a prefilter: no `first` byte, and no `lead` byte at the end,
    /// where a run could still grow into a delimiter), all of `text` is routed at once.
    /// `None`: take the general path. `text` starts at `base`, and nothing is held.
    #[inline(always)]
    pub(super) fn fast<S: Sink>(
        &mut self,
        text: &str,
        sink: &mut S,
    ) -> Option<Result<(), Stop<S::Error>>> {
        const SHORT: usize = 64;
        if text.len() > SHORT
            || !self.scan.walks.as_slice().is_empty()
            || self.scan.best.is_some()
            || self.scan.next != self.base
            || self.pos != self.base
        {
            return None;
        }
        let bytes = text.as_bytes();
        let clear = match &self.scan.jump {
            Some(j) => {
                !bytes.iter().any(|&b| j.first.contains(b))
                    && bytes.last().is_none_or(|&b| !j.lead.contains(b))
            }
            None => !bytes.iter().any(|&b| self.scan.first.contains(b)),
        };
        if !clear {
            return None;
        }
        let end = self.base + text.len();
        let routed = self.accumulate(text, sink, self.pos, end);
        self.pos = end;
        self.scan.next = end;
        if let Some(last) = text.chars().next_back() {
            self.before = Some(last);
        }
        self.base = end;
        Some(routed)
    }

    /// Reference `_process`: commit delimiters while possible, then route what is safe.
    /// `view` holds the absolute positions `base..base + view.len()`.
    pub(crate) fn process<S: Sink>(
        &mut self,
        view: &str,
        eos: bool,
        sink: &mut S,
    ) -> Result<(), Stop<S::Error>> {
        loop {
            self.advance(view, eos)?;
            if self.committable().is_none() {
                if eos {
                    self.resolve_eoi(view);
                } else {
                    self.resolve_edge(view)?;
                }
            }
            if let Some(c) = self.committable() {
                if c.start > self.pos {
                    self.accumulate(view, sink, self.pos, c.start)?;
                }
                self.pos = c.end;
                let watch = self.scan.watch.as_slice()[usize::from(c.route.watch())];
                // Forget the committed candidate before closing: if the region fails to parse,
                // the next call goes on from `pos` like the reference, not from the stale match.
                self.restart_scan();
                match watch.kind {
                    DelimiterKind::Open => {
                        self.close_current(sink, c.start)?;
                        self.current = Some(watch.field);
                        self.values.reset(self.routes.body_kind(watch.field));
                        self.body_any = false;
                        self.body_start = c.end;
                        self.open_span = Some((c.start, c.end));
                        self.opened = true;
                        sink.open(
                            watch.field,
                            usize::from(c.route.branch()),
                            view,
                            (c.start - self.base, c.end - self.base),
                            self.before,
                        )
                        .map_err(Stop::Sink)?;
                    }
                    DelimiterKind::Close => {
                        let had_content = self.opened;
                        if c.start == c.end
                            && self.open_span == Some((c.start, c.start))
                            && !self.body_any
                        {
                            // A zero-width open and a zero-width close at one position would
                            // re-fire forever (the reference loops); fail instead.
                            let (offset, in_prefix) = self.located(c.start);
                            return Err(Stop::Route(RouteError::NoProgress {
                                field: watch.field,
                                offset,
                                in_prefix,
                            }));
                        }
                        if had_content {
                            sink.close_delimiter(
                                watch.field,
                                usize::from(c.route.branch()),
                                view,
                                (c.start - self.base, c.end - self.base),
                                self.before,
                            )
                            .map_err(Stop::Sink)?;
                        }
                        self.close_current(sink, c.start)?;
                        if !had_content && c.start == c.end {
                            // Reference: a zero-width close on an empty region stops this call.
                            self.reset_scan()?;
                            return Ok(());
                        }
                    }
                }
                self.reset_scan()?;
                continue;
            }
            let end = self.end(view);
            if eos {
                if self.pos < end {
                    self.accumulate(view, sink, self.pos, end)?;
                    self.pos = end;
                }
                self.close_current(sink, end)?;
                self.reset_scan()?;
                return Ok(());
            }
            let hold = self
                .scan
                .walks
                .as_slice()
                .iter()
                .map(|w| w.start)
                .min()
                .unwrap_or(end);
            if hold > self.pos {
                self.accumulate(view, sink, self.pos, hold)?;
                self.pos = hold;
            }
            if let Some(memo) = self.memo.as_mut() {
                memo.trim(self.pos);
            }
            if end - hold > self.hold_limit {
                return Err(Stop::Route(RouteError::HoldOverflow {
                    offset: self.output_offset(hold),
                    held: end - hold,
                    limit: self.hold_limit,
                }));
            }
            return Ok(());
        }
    }

    /// Drops every walk (their memo cells are abandoned) and the memo's checkpoints before
    /// `pos`, where no walk can be any more.
    fn drop_walks(&mut self) {
        if let Some(memo) = self.memo.as_mut() {
            for w in self.scan.walks.as_slice() {
                if w.group != NO_GROUP {
                    memo.abandon(w.group);
                }
            }
            memo.trim(self.pos);
        }
        self.scan.walks.clear();
    }

    /// Recomputes whether the open region's JSON strings are tracked (after `lenient`
    /// changed; call it before routing any text of the region).
    pub(crate) fn json_reset(&mut self) {
        self.json = JsonStrings {
            on: self.lenient && self.routes.json_strings(self.current),
            at: self.pos,
            ..JsonStrings::default()
        };
    }

    /// Turns the memo on or off (tests compare the two; it never changes a result).
    #[cfg(feature = "alloc")]
    pub(crate) fn set_memo(&mut self, on: bool) {
        for w in self.scan.walks.as_mut_slice() {
            w.group = NO_GROUP;
        }
        self.memo = if on { new_memo(true) } else { None };
    }

    /// A fresh scan from `pos` with the same watch list.
    fn restart_scan(&mut self) {
        self.drop_walks();
        let scan = &mut self.scan;
        scan.next = self.pos;
        for slot in scan.preferred.as_mut_slice() {
            *slot = None;
        }
        scan.best = None;
        if let Some(jump) = scan.jump.as_mut() {
            jump.hit = None;
            jump.tail = None;
        }
    }

    /// The watch list for the current region (reference `_watchlist`, compiled into the
    /// tables), and a fresh scan.
    fn reset_scan(&mut self) -> Result<(), RouteError> {
        self.drop_walks();
        let routes = &self.routes;
        let scan = &mut self.scan;
        scan.watch.clear();
        let (watched, first, jump) = routes.watch(self.current);
        for w in watched {
            let first = routes.first_set(w.field, w.kind);
            if !scan.watch.push(Watch {
                kind: w.kind,
                field: w.field,
                first,
            }) {
                return Err(RouteError::TooManyDelimiters {
                    limit: scan.watch.capacity(),
                });
            }
        }
        scan.jump = jump.map(|plan| Jump {
            lead: plan.lead,
            first: plan.first,
            needles: plan.needles[..usize::from(plan.needle_count)]
                .iter()
                .copied()
                .collect(),
            hit: None,
            tail: None,
        });
        scan.first = first;
        scan.next = self.pos;
        scan.preferred.clear();
        for _ in 0..scan.watch.as_slice().len() {
            // Same capacity as `watch`: fits.
            let _ = scan.preferred.push(None);
        }
        scan.best = None;
        // A region starts here (the watch list changes only when the region does): its body's
        // JSON string state starts outside a string.
        self.json_reset();
        Ok(())
    }

    #[inline]
    fn watch_of(&self, watch: u16) -> Watch {
        self.scan.watch.as_slice()[usize::from(watch)]
    }

    #[inline]
    fn main_dfa(&self, watch: u16, branch: u16) -> &R::Dfa {
        let w = self.watch_of(watch);
        self.routes.main_dfa(w.field, w.kind, usize::from(branch))
    }

    #[inline]
    fn lookahead(&self, watch: u16, branch: u16) -> Option<(bool, &R::Dfa)> {
        let w = self.watch_of(watch);
        self.routes.lookahead(w.field, w.kind, usize::from(branch))
    }

    /// The best candidate, if nothing pending starts at or before it.
    fn committable(&self) -> Option<Candidate> {
        let best = self.scan.best?;
        if self
            .scan
            .walks
            .as_slice()
            .iter()
            .all(|w| w.start > best.start)
        {
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
            self.watch_of(a.route.watch()),
            self.watch_of(b.route.watch()),
        );
        if wa.kind != wb.kind {
            return wa.kind == DelimiterKind::Open;
        }
        self.routes.name_rank(wa.field) < self.routes.name_rank(wb.field)
    }

    /// Records a complete match. Like the reference, each delimiter contributes only its own
    /// preferred match (what Python's `search` returns: leftmost, then first branch), and only
    /// then are delimiters compared; so a later, longer branch never beats another delimiter.
    fn offer(&mut self, c: Candidate) {
        let Some(slot) = self
            .scan
            .preferred
            .as_mut_slice()
            .get_mut(usize::from(c.route.watch()))
        else {
            return;
        };
        if let Some(p) = slot {
            if (p.start, p.route.branch()) <= (c.start, c.route.branch()) {
                return;
            }
        }
        *slot = Some(c);
        let mut best: Option<Candidate> = None;
        for cand in self.scan.preferred.as_slice().iter().flatten() {
            if best.is_none_or(|b| self.better(cand, &b)) {
                best = Some(*cand);
            }
        }
        self.scan.best = best;
    }

    /// Where scanning resumes when no walk is live: the next position that can start a match
    /// (`None`: nothing more in the buffer).
    fn skip(&mut self, view: &str, eos: bool) -> Option<usize> {
        let from = self.scan.next;
        let end = self.end(view);
        let bytes = view.as_bytes();
        let Some(jump) = self.scan.jump.as_mut() else {
            let first = &self.scan.first;
            return bytes[from - self.base..]
                .iter()
                .position(|&b| first.contains(b))
                .map(|n| from + n);
        };
        let lead_start = |at: usize, jump: &Jump| {
            let mut w = at;
            while w > from && jump.lead.contains(bytes[w - 1 - self.base]) {
                w -= 1;
            }
            w
        };
        let hit = match jump.hit {
            Some((i, w)) if i >= from => Some((i, w)),
            _ => {
                let hay = &bytes[from - self.base..];
                let n = match jump.needles.as_slice() {
                    [a] => memchr::memchr(*a, hay),
                    [a, b] => memchr::memchr2(*a, *b, hay),
                    [a, b, c] => memchr::memchr3(*a, *b, *c, hay),
                    _ => hay.iter().position(|&b| jump.first.contains(b)),
                };
                n.map(|n| {
                    let i = from + n;
                    (i, lead_start(i, jump))
                })
            }
        };
        jump.hit = hit;
        match hit {
            Some((_, w)) => Some(w.max(from)),
            None if eos => None,
            None => {
                // A match may still start in the trailing run of lead bytes.
                let w = match jump.tail {
                    Some((e, w)) if e == end => w,
                    _ => lead_start(end, jump),
                };
                jump.tail = Some((end, w));
                (w.max(from) < end).then_some(w.max(from))
            }
        }
    }

    /// Scans the unscanned bytes of the buffer, one at a time, until a candidate is committable.
    fn advance(&mut self, view: &str, eos: bool) -> Result<(), RouteError> {
        let end = self.end(view);
        while self.scan.next < end {
            if self.scan.walks.as_slice().is_empty() && self.scan.best.is_none() {
                match self.skip(view, eos) {
                    Some(p) => self.scan.next = p,
                    None => {
                        self.scan.next = end;
                        break;
                    }
                }
            }
            let p = self.scan.next;
            self.step(view, p)?;
            self.scan.next = p + 1;
            if self.committable().is_some() {
                break;
            }
        }
        Ok(())
    }

    fn byte_at(&self, view: &str, abs: usize) -> u8 {
        view.as_bytes()[abs - self.base]
    }

    fn look_behind(&self, view: &str, abs: usize) -> Option<u8> {
        if abs == 0 {
            None
        } else if abs > self.base {
            Some(self.byte_at(view, abs - 1))
        } else {
            // The last byte of the character's UTF-8 encoding.
            self.before.map(|c| {
                let mut buf = [0u8; 4];
                let n = c.encode_utf8(&mut buf).len();
                buf[n - 1]
            })
        }
    }

    /// The state in which a walk of `dfa` starting at `abs` reads its first byte: the start
    /// state for the byte before `abs` (`look_behind`, [`Self::look_behind`], computed once
    /// per position by the caller), or, for a DFA with a context slot, see
    /// [`Self::start_after_slot`]. `None`: no walk.
    #[inline(always)]
    fn start_at(
        &self,
        dfa: &R::Dfa,
        view: &str,
        abs: usize,
        look_behind: Option<u8>,
        slot: &mut Option<u8>,
    ) -> Option<StateID> {
        if dfa.context() {
            self.start_after_slot(dfa, view, abs, slot)
        } else {
            dfa.start(look_behind)
        }
    }

    /// The start state of a DFA with a context slot stepped over [`context_byte`] of the
    /// character before `abs` (kept in `slot` for the other walks starting at `abs`). `None`:
    /// no start state, or the slot leads nowhere. Out of line: the walk's hot path only tests
    /// whether a DFA has a slot.
    #[inline(never)]
    fn start_after_slot(
        &self,
        dfa: &R::Dfa,
        view: &str,
        abs: usize,
        slot: &mut Option<u8>,
    ) -> Option<StateID> {
        let byte = *slot.get_or_insert_with(|| {
            let prev = if abs == 0 {
                None
            } else if abs > self.base {
                // `base` is a char boundary, so the character ending at `abs` starts after it.
                let from = self.char_start_before(view, abs);
                view[from - self.base..abs - self.base].chars().next()
            } else {
                self.before
            };
            context_byte(prev)
        });
        let s = dfa.next_state(dfa.start(None)?, byte);
        (!dfa.is_dead_state(s)).then_some(s)
    }

    /// The start of the character that ends at `abs` (`abs > base`, a char boundary).
    #[inline]
    fn char_start_before(&self, view: &str, abs: usize) -> usize {
        let bytes = view.as_bytes();
        let mut q = abs - 1;
        while q > self.base && bytes[q - self.base] & 0xC0 == 0x80 {
            q -= 1;
        }
        q
    }

    /// Where a match reported by `dfa`'s match state `id` at `p` ends: `p`, or for a delayed
    /// match the start of the character before `p` (see [`RouteDfa::delayed`]).
    #[inline]
    fn match_end(&self, dfa: &R::Dfa, id: StateID, view: &str, p: usize) -> usize {
        if dfa.delayed(id) {
            self.char_start_before(view, p)
        } else {
            p
        }
    }

    /// Advances every walk by the byte at `p`, starting new walks at `p` first.
    fn step(&mut self, view: &str, p: usize) -> Result<(), RouteError> {
        let byte = self.byte_at(view, p);
        // New walks start only at char boundaries, and only if they could beat the best.
        let can_start = (byte & 0xC0) != 0x80 && self.scan.best.is_none_or(|b| p <= b.start);
        if can_start && self.scan.first.contains(byte) && !self.in_json_string(view, p) {
            self.start_walks(view, p, byte)?;
        }
        let checkpoint = self.memo.as_ref().is_some_and(|m| m.at_checkpoint(p));
        // Walks are stepped in place: survivors are compacted to the front, deduplicated.
        let n = self.scan.walks.as_slice().len();
        let indexed = self.dedup.begin(n);
        let mut write = 0;
        let mut registered = 0;
        for i in 0..n {
            let mut w = self.scan.walks.as_slice()[i];
            let mut done = None;
            if checkpoint {
                // At most twice: a walk told that its main part reports no further match may
                // go on in its look-ahead, whose own cell is then looked up.
                for _ in 0..2 {
                    match self.visit(view, w, p, &mut registered) {
                        Visit::Go(next) => {
                            let again = next.look() && !w.look();
                            w = next;
                            if !again {
                                break;
                            }
                        }
                        Visit::Done(d) => {
                            done = Some(d);
                            break;
                        }
                    }
                }
            }
            let step = match done {
                Some(d) => d,
                None => {
                    let (step, reported) = self.step_walk(view, w, p, byte);
                    self.settle(&w, step, reported)
                }
            };
            match step {
                Step::Live(w) => write = self.keep(write, w, indexed),
                Step::Done { cand, .. } => {
                    if let Some(c) = cand {
                        self.offer(c);
                    }
                }
            }
        }
        self.scan.walks.truncate(write);
        if let Some(best) = self.scan.best {
            // Walks that start after the best candidate can no longer matter.
            let memo = &mut self.memo;
            self.scan.walks.retain(|w| {
                let keep = w.start <= best.start;
                if !keep {
                    abandon(memo, w);
                }
                keep
            });
        }
        Ok(())
    }

    /// Lenient mode, in a JSON region: whether absolute position `p` is inside a JSON string
    /// of the body (a close delimiter cannot start there). The state is read forward from
    /// where it stands; `p` never goes back within a region (the scan restarts only when the
    /// region changes), and the bytes from the routed position on are in `view`.
    #[inline]
    fn in_json_string(&mut self, view: &str, p: usize) -> bool {
        if !self.json.on {
            return false;
        }
        if p > self.json.at {
            let from = self.json.at.max(self.base);
            self.json
                .read(&view.as_bytes()[from - self.base..p - self.base], p);
        }
        self.json.in_string
    }

    /// Starts a walk at `p` for every branch of every watched delimiter that can start with
    /// `byte`.
    fn start_walks(&mut self, view: &str, p: usize, byte: u8) -> Result<(), RouteError> {
        let look_behind = self.look_behind(view, p);
        let mut slot = None;
        for wi in 0..self.scan.watch.as_slice().len() {
            let w = self.scan.watch.as_slice()[wi];
            if !w.first.contains(byte) {
                continue;
            }
            for bi in 0..self.routes.branch_count(w.field, w.kind) {
                let dfa = self.routes.main_dfa(w.field, w.kind, bi);
                if let Some(state) = self.start_at(dfa, view, p, look_behind, &mut slot) {
                    let walk = Walk {
                        route: Route::new(wi, bi),
                        group: NO_GROUP,
                        start: p,
                        phase: Phase::Main {
                            state,
                            last_match: None,
                        },
                    };
                    if !self.scan.walks.push(walk) {
                        return Err(RouteError::TooManyWalks {
                            offset: self.output_offset(p),
                            limit: self.scan.walks.capacity(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Steps `w` over the byte at `p`. Also says whether its main part reported a match here
    /// (for the memo: see `settle`).
    #[inline(always)]
    fn step_walk(&self, view: &str, w: Walk, p: usize, byte: u8) -> (Step, bool) {
        match w.phase {
            Phase::Main { state, last_match } => {
                let dfa = self.main_dfa(w.watch(), w.branch());
                let next = dfa.next_state(state, byte);
                let matched = dfa.is_match_state(next);
                let last_match = if matched {
                    Some(self.match_end(dfa, next, view, p))
                } else {
                    last_match
                };
                // A match reported here from a state where no continuation can report another
                // is final now (one byte earlier than the dead state would tell).
                let dead = dfa.is_dead_state(next) || (matched && dfa.edge(next) & EDGE_REACH == 0);
                let step = if dead {
                    match last_match {
                        Some(e) => self.main_matched(view, w, e, p + 1),
                        None => Step::NONE,
                    }
                } else {
                    Step::Live(Walk {
                        phase: Phase::Main {
                            state: next,
                            last_match,
                        },
                        ..w
                    })
                };
                (step, matched)
            }
            Phase::Look { state, main_end } => {
                // Walks in this phase belong to a branch with a look-ahead.
                let Some((negated, dfa)) = self.lookahead(w.watch(), w.branch()) else {
                    return (Step::NONE, false);
                };
                let next = dfa.next_state(state, byte);
                let step = if dfa.is_match_state(next) {
                    self.look_done(w, main_end, !negated)
                } else if dfa.is_dead_state(next) {
                    self.look_done(w, main_end, negated)
                } else {
                    Step::Live(Walk {
                        phase: Phase::Look {
                            state: next,
                            main_end,
                        },
                        ..w
                    })
                };
                (step, false)
            }
        }
    }

    /// The end of a walk in its look-ahead: its candidate if `produced`.
    fn look_done(&self, w: Walk, main_end: usize, produced: bool) -> Step {
        Step::Done {
            cand: produced.then_some(Candidate {
                route: w.route,
                start: w.start,
                end: main_end,
            }),
            end: Some(main_end),
        }
    }

    /// The main part of a walk matched `[w.start, e)`; bytes up to `scanned` (exclusive) have
    /// been seen. Without a look-ahead that is a candidate; with one, walk the look-ahead over
    /// the seen bytes.
    fn main_matched(&self, view: &str, w: Walk, e: usize, scanned: usize) -> Step {
        let Some((_, dfa)) = self.lookahead(w.watch(), w.branch()) else {
            return self.look_done(w, e, true);
        };
        let Some(state) = self.start_at(dfa, view, e, self.look_behind(view, e), &mut None) else {
            return self.look_done(w, e, false);
        };
        let mut lw = Walk {
            phase: Phase::Look { state, main_end: e },
            ..w
        };
        for q in e..scanned {
            match self.step_walk(view, lw, q, self.byte_at(view, q)).0 {
                Step::Live(next) => lw = next,
                done => return done,
            }
        }
        Step::Live(lw)
    }

    /// At the end of the buffer (more output may come): settle the walks whose outcome is
    /// already certain.
    fn resolve_edge(&mut self, view: &str) -> Result<(), RouteError> {
        let end = self.end(view);
        let n = self.scan.walks.as_slice().len();
        let mut write = 0;
        for i in 0..n {
            let w = self.scan.walks.as_slice()[i];
            let (step, reported) = self.edge_walk(view, w, end);
            match self.settle(&w, step, reported) {
                Step::Live(w) => {
                    self.scan.walks.as_mut_slice()[write] = w;
                    write += 1;
                }
                Step::Done { cand, .. } => {
                    if let Some(c) = cand {
                        self.offer(c);
                    }
                }
            }
        }
        self.scan.walks.truncate(write);
        Ok(())
    }

    /// `w` at the end of the buffer: settled when its outcome no longer depends on what
    /// follows. Also says whether a match is reported here (a certain match at the edge).
    fn edge_walk(&self, view: &str, w: Walk, end: usize) -> (Step, bool) {
        match w.phase {
            Phase::Main { state, last_match } => {
                let facts = self.main_dfa(w.watch(), w.branch()).edge(state);
                if facts & EDGE_GROW != 0 {
                    (Step::Live(w), false)
                } else if facts & EDGE_SURE != 0 {
                    let e = if facts & EDGE_DELAYED != 0 {
                        self.char_start_before(view, end)
                    } else {
                        end
                    };
                    match self.main_matched(view, w, e, end) {
                        Step::Live(lw) => (self.edge_walk(view, lw, end).0, true),
                        done => (done, true),
                    }
                } else if facts & EDGE_REACH != 0 {
                    (Step::Live(w), false)
                } else {
                    match last_match {
                        Some(e) => match self.main_matched(view, w, e, end) {
                            Step::Live(lw) => self.edge_walk(view, lw, end),
                            done => (done, false),
                        },
                        None => (Step::NONE, false),
                    }
                }
            }
            Phase::Look { state, main_end } => {
                let Some((negated, dfa)) = self.lookahead(w.watch(), w.branch()) else {
                    return (Step::NONE, false);
                };
                let facts = dfa.edge(state);
                let step = if facts & EDGE_SURE != 0 {
                    self.look_done(w, main_end, !negated)
                } else if facts & EDGE_REACH != 0 {
                    Step::Live(w)
                } else {
                    self.look_done(w, main_end, negated)
                };
                (step, false)
            }
        }
    }

    /// At the end of output: every walk ends (`next_eoi_state`).
    fn resolve_eoi(&mut self, view: &str) {
        let end = self.end(view);
        // No walk starts at the end itself: like the reference (`_scan` commits only matches
        // starting before the buffer end), an empty match at the very end is never taken.
        let n = self.scan.walks.as_slice().len();
        for i in 0..n {
            let w = self.scan.walks.as_slice()[i];
            let (step, reported) = self.eoi_walk(view, w, end);
            if let Step::Done { cand: Some(c), .. } = self.settle(&w, step, reported) {
                self.offer(c);
            }
        }
        self.scan.walks.clear();
    }

    /// `w` at the end of output: always [`Step::Done`].
    fn eoi_walk(&self, view: &str, w: Walk, end: usize) -> (Step, bool) {
        match w.phase {
            Phase::Main { state, last_match } => {
                let dfa = self.main_dfa(w.watch(), w.branch());
                let eoi = dfa.next_eoi_state(state);
                let matched = dfa.is_match_state(eoi);
                let last_match = if matched {
                    Some(self.match_end(dfa, eoi, view, end))
                } else {
                    last_match
                };
                let Some(e) = last_match else {
                    return (Step::NONE, false);
                };
                match self.main_matched(view, w, e, end) {
                    Step::Live(lw) => (self.eoi_walk(view, lw, end).0, matched),
                    done => (done, matched),
                }
            }
            Phase::Look { state, main_end } => {
                let Some((negated, dfa)) = self.lookahead(w.watch(), w.branch()) else {
                    return (Step::NONE, false);
                };
                let matched = dfa.is_match_state(dfa.next_eoi_state(state));
                (self.look_done(w, main_end, matched != negated), false)
            }
        }
    }

    // ----------------------------------------------------------------------------------------
    // The outcome memo (alloc API; `memo.rs`) and the deduplication of walks.

    /// The memo's key for `w`.
    fn memo_key(&self, w: &Walk) -> Key {
        let watch = self.watch_of(w.watch());
        let (look, state) = match w.phase {
            Phase::Main { state, .. } => (false, state),
            Phase::Look { state, .. } => (true, state),
        };
        Key {
            field: watch.field as u32,
            close: watch.kind == DelimiterKind::Close,
            branch: w.branch(),
            look,
            state,
        }
    }

    /// `w` at checkpoint `p`, before it reads the byte there: it ends with a settled cell's
    /// outcome, or goes on (having registered a cell for its own outcome, if fewer than
    /// [`MEMO_CELLS_PER_CHECKPOINT`] walks did at `p` so far: `registered`).
    fn visit(&mut self, view: &str, w: Walk, p: usize, registered: &mut usize) -> Visit {
        let key = self.memo_key(&w);
        let Some(memo) = self.memo.as_mut() else {
            return Visit::Go(w);
        };
        let Some(future) = memo.lookup(key, p) else {
            let mut w = w;
            if *registered < MEMO_CELLS_PER_CHECKPOINT {
                *registered += 1;
                memo.register(&mut w.group, key, p);
            }
            return Visit::Go(w);
        };
        match (future, w.phase) {
            (Future::Verdict(produced), Phase::Look { main_end, .. }) => {
                let done = self.look_done(w, main_end, produced);
                Visit::Done(self.settle(&w, done, false))
            }
            (Future::Match { end, produced }, Phase::Main { .. }) => {
                let done = self.look_done(w, end, produced);
                Visit::Done(self.settle(&w, done, true))
            }
            (Future::NoMatch, Phase::Main { last_match, .. }) => {
                // No further match: the walk ends with the one it has, as if its DFA died here.
                let step = match last_match {
                    Some(e) => self.main_matched(view, w, e, p),
                    None => Step::NONE,
                };
                match self.settle(&w, step, false) {
                    Step::Live(next) => Visit::Go(next),
                    done => Visit::Done(done),
                }
            }
            // A key's phase is the walk's: not reached.
            _ => Visit::Go(w),
        }
    }

    /// Tells the memo what a step did to `before`'s cells: a match reported (`reported`), the
    /// move from the main part to the look-ahead, or the end of the walk.
    #[inline]
    fn settle(&mut self, before: &Walk, step: Step, reported: bool) -> Step {
        if before.group == NO_GROUP {
            return step;
        }
        let Some(memo) = self.memo.as_mut() else {
            return step;
        };
        if reported && !before.look() {
            memo.reported(before.group);
        }
        match step {
            Step::Live(w) => {
                if let (false, Phase::Look { main_end, .. }) = (before.look(), w.phase) {
                    memo.entered_look(before.group, main_end);
                }
            }
            Step::Done { cand, end } => memo.finish(before.group, cand.is_some(), end),
        }
        step
    }

    /// Keeps `w` (a walk that stays live) in `walks[..kept]`, unless a kept walk has the same
    /// future (same branch, phase and DFA state; see [`same_future`]): only the leftmost of
    /// such walks is kept, and the memo merges their cells. Returns the new count.
    ///
    /// A main walk with a recorded match and one without are kept apart: if the future brings
    /// no match, only the former has one. In a branch with a trailing look-ahead the recorded
    /// match end itself matters (the look-ahead is checked from it), so such walks merge only
    /// when it is equal, up to [`LOOKAHEAD_WALKS_PER_STATE`] per state; past that they merge
    /// into the leftmost (its match end is then used for all), which bounds the cost on
    /// patterns like `[ab](?:c[^d]*d)?(?=cx)` over long inputs.
    ///
    /// `walks[..kept]` are the walks kept so far; `w` comes from a later index, so
    /// `walks[kept]` is free to take it. With `indexed` (many walks, alloc API) the kept walks
    /// are found through the dedup index in constant time, else by a scan of the kept ones.
    fn keep(&mut self, kept: usize, w: Walk, indexed: bool) -> usize {
        let lookahead = self.lookahead(w.watch(), w.branch()).is_some();
        let target = if indexed {
            self.dedup
                .target(self.scan.walks.as_slice(), kept, &w, lookahead)
        } else {
            dedup_target(&self.scan.walks.as_slice()[..kept], &w, lookahead)
        };
        let list = self.scan.walks.as_mut_slice();
        let Some(i) = target else {
            list[kept] = w;
            return kept + 1;
        };
        let (mut survivor, loser) = if w.start < list[i].start {
            (w, list[i])
        } else {
            (list[i], w)
        };
        if let Some(memo) = self.memo.as_mut() {
            let survivor_match = survivor.last_match();
            memo.merge(
                &mut survivor.group,
                loser.group,
                loser.look(),
                loser.last_match(),
                survivor_match,
                lookahead,
            );
        }
        list[i] = survivor;
        kept
    }

    // ----------------------------------------------------------------------------------------
    // Regions (reference `_accumulate`, `_open_explicit`, `_close_current`).

    #[inline]
    fn accumulate<S: Sink>(
        &mut self,
        view: &str,
        sink: &mut S,
        from: usize,
        to: usize,
    ) -> Result<(), Stop<S::Error>> {
        if from >= to {
            return Ok(());
        }
        let Some(f) = self.current else {
            return Ok(());
        };
        if !self.opened {
            self.opened = true;
            self.body_start = from;
            self.values.reset(self.routes.body_kind(f));
            sink.open_implicit(f).map_err(Stop::Sink)?;
        }
        self.body_any = true;
        if self.json.on && to > self.json.at {
            // Routed text leaves the buffer: read it for the JSON string state first.
            let start = self.json.at.max(from);
            self.json
                .read(&view.as_bytes()[start - self.base..to - self.base], to);
        }
        let text = &view[from - self.base..to - self.base];
        self.values.track(text, from);
        sink.chunk(f, text).map_err(Stop::Sink)
    }

    /// Closes the open region (its body ends at absolute `body_end`) and returns to the
    /// implicit field.
    fn close_current<S: Sink>(
        &mut self,
        sink: &mut S,
        body_end: usize,
    ) -> Result<(), Stop<S::Error>> {
        let open = self.current.filter(|_| self.opened);
        if let Some(f) = open {
            let body = Span {
                start: self.output_offset(self.body_start),
                end: self.output_offset(body_end.max(self.body_start)),
            };
            let at = self.located(self.body_start);
            let value = if self.values.on() {
                self.values.value(self.routes.body_kind(f), body, |abs| {
                    self.output_offset(abs)
                })
            } else {
                RegionValue::Raw(body)
            };
            // On error the region stays open, like the reference (`_close_current` raises
            // before `_reset_to_implicit`).
            sink.close(f, body, value, at).map_err(Stop::Sink)?;
        }
        self.current = self.routes.implicit();
        self.open_span = None;
        self.body_any = false;
        self.opened = false;
        Ok(())
    }
}

/// How many walks of one look-ahead branch in one DFA state may carry distinct match ends
/// before they are merged anyway (keeps the walk list bounded; see `keep_dedup`).
const LOOKAHEAD_WALKS_PER_STATE: usize = 16;

/// Whether `a` and `b` have the same future: same delimiter branch, phase and DFA state, and,
/// for walks in the main part, both with or both without a recorded match.
#[inline]
fn same_future(a: &Walk, b: &Walk) -> bool {
    a.route == b.route
        && match (a.phase, b.phase) {
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
}

/// The kept walk `w` merges into, by a scan of `front` (see `Core::keep`).
fn dedup_target(front: &[Walk], w: &Walk, lookahead: bool) -> Option<usize> {
    if !lookahead {
        return front.iter().position(|a| same_future(a, w));
    }
    let exact = front
        .iter()
        .position(|a| same_future(a, w) && a.last_match() == w.last_match());
    exact.or_else(|| {
        let mut alike = front.iter().enumerate().filter(|(_, a)| same_future(a, w));
        let first = alike.next().map(|(i, _)| i);
        (alike.count() + 1 >= LOOKAHEAD_WALKS_PER_STATE)
            .then_some(first)
            .flatten()
    })
}

/// The memo of a router with growable storage (alloc API); none without a heap.
fn new_memo(heap: bool) -> Option<Memo> {
    #[cfg(feature = "alloc")]
    if heap {
        return Some(Memo::new(MEMO_SHIFT));
    }
    let _ = heap;
    None
}

/// Walk lists longer than this are deduplicated through the index ([`Dedup`]) rather than by
/// a scan of the kept walks (which costs the square of their number per byte: a counted
/// repetition such as `a{10000}` keeps one walk per count live).
#[cfg_attr(not(feature = "alloc"), allow(dead_code))]
const DEDUP_SCAN_MAX: usize = 16;

/// The dedup index (alloc API): the kept walks of one step by future, in an open-addressing
/// table that a generation stamp empties in constant time, so a step costs O(walks) however
/// many there are (at most the DFA's states per branch, after deduplication). Without a heap
/// the walk list is short (its capacity), and the scan is used.
#[derive(Debug)]
struct Dedup {
    /// The table (`None` without a heap), boxed: a router carries one pointer for it.
    #[cfg(feature = "alloc")]
    index: Option<alloc::boxed::Box<DedupTable>>,
}

/// The table of [`Dedup`] and the stamp of its current step.
#[cfg(feature = "alloc")]
#[derive(Debug)]
struct DedupTable {
    table: alloc::vec::Vec<Slot>,
    stamp: u32,
}

/// One entry of the dedup index: a future (`EXACT` set in `index`: and a recorded match end)
/// and the first kept walk with it, checked against that walk (`print` is a fingerprint of the
/// key, to skip most other entries without reading the walk list); for a future, how many
/// kept walks have it.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    stamp: u32,
    print: u32,
    index: u32,
    count: u32,
}

/// In [`Slot::index`]: the entry is an exact one (future and match end).
#[cfg(feature = "alloc")]
const EXACT: u32 = 1 << 31;

impl Dedup {
    fn new(heap: bool) -> Self {
        let _ = heap;
        Self {
            #[cfg(feature = "alloc")]
            index: heap.then(|| {
                alloc::boxed::Box::new(DedupTable {
                    table: alloc::vec::Vec::new(),
                    stamp: 0,
                })
            }),
        }
    }

    /// Starts a step over `n` walks; whether the index is used for it.
    #[inline]
    fn begin(&mut self, n: usize) -> bool {
        #[cfg(feature = "alloc")]
        if let (Some(d), true) = (self.index.as_mut(), n > DEDUP_SCAN_MAX) {
            let size = (n * 4).next_power_of_two();
            if d.table.len() < size {
                d.table = alloc::vec![Slot::default(); size];
                d.stamp = 0;
            }
            d.stamp = d.stamp.wrapping_add(1);
            if d.stamp == 0 {
                d.table.fill(Slot::default());
                d.stamp = 1;
            }
            return true;
        }
        let _ = n;
        false
    }

    /// The kept walk `w` merges into (as `dedup_target` would find it), or `None`, and then
    /// `w` is recorded as kept at index `kept`. Only after [`Self::begin`] returned `true`.
    #[cfg(feature = "alloc")]
    fn target(&mut self, list: &[Walk], kept: usize, w: &Walk, lookahead: bool) -> Option<usize> {
        match self.index.as_mut() {
            Some(d) => d.target(list, kept, w, lookahead),
            None => dedup_target(&list[..kept], w, lookahead),
        }
    }

    #[cfg(not(feature = "alloc"))]
    fn target(&mut self, _: &[Walk], _: usize, _: &Walk, _: bool) -> Option<usize> {
        None
    }
}

#[cfg(feature = "alloc")]
impl DedupTable {
    fn target(&mut self, list: &[Walk], kept: usize, w: &Walk, lookahead: bool) -> Option<usize> {
        let (state, look) = match w.phase {
            Phase::Main { state, .. } => (state, false),
            Phase::Look { state, .. } => (state, true),
        };
        let k1 = (u64::from(w.route.0) << 32) | u64::from(state.as_u32());
        let k2 = u64::from(look) | (u64::from(w.last_match().is_some()) << 1);
        let future = hash(k1, k2);
        if lookahead {
            let m = w.last_match().map_or(0, |m| m as u64 + 1);
            let exact = hash(k1, k2 | 4 | (m << 3));
            let same = |a: &Walk| same_future(a, w) && a.last_match() == w.last_match();
            if let Some(i) = self.find(exact, EXACT, list, same) {
                return Some((self.table[i].index & !EXACT) as usize);
            }
            match self.find(future, 0, list, |a| same_future(a, w)) {
                Some(i) => {
                    let slot = self.table[i];
                    if slot.count as usize + 1 > LOOKAHEAD_WALKS_PER_STATE {
                        return Some(slot.index as usize);
                    }
                    self.table[i].count += 1;
                }
                None => self.insert(future, kept as u32),
            }
            self.insert(exact, kept as u32 | EXACT);
            return None;
        }
        match self.find(future, 0, list, |a| same_future(a, w)) {
            Some(i) => Some(self.table[i].index as usize),
            None => {
                self.insert(future, kept as u32);
                None
            }
        }
    }

    /// The slot of this step whose entry is of `kind` (`EXACT` or 0) and whose walk `is`
    /// the one looked for.
    fn find(&self, h: u64, kind: u32, list: &[Walk], is: impl Fn(&Walk) -> bool) -> Option<usize> {
        let mask = self.table.len() - 1;
        let print = h as u32;
        let mut i = (h >> 32) as usize & mask;
        loop {
            let slot = &self.table[i];
            if slot.stamp != self.stamp {
                return None;
            }
            if slot.print == print
                && slot.index & EXACT == kind
                && is(&list[(slot.index & !EXACT) as usize])
            {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    fn insert(&mut self, h: u64, index: u32) {
        let mask = self.table.len() - 1;
        let mut i = (h >> 32) as usize & mask;
        while self.table[i].stamp == self.stamp {
            i = (i + 1) & mask;
        }
        self.table[i] = Slot {
            stamp: self.stamp,
            print: h as u32,
            index,
            count: 1,
        };
    }
}

/// A hash of a dedup key.
#[cfg(feature = "alloc")]
fn hash(k1: u64, k2: u64) -> u64 {
    (k1 ^ k2.rotate_left(29))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17)
        .wrapping_mul(0xD6E8_FEB8_6659_FD93)
}
