//! The region router: the partial-match engine that splits output text into regions by walking
//! the delimiter DFAs of a compiled template. It needs no heap: it runs on tables it reads
//! through [`Routes`], keeps held text in a fixed-capacity hold buffer and reports regions as
//! [`RegionEvent`]s that borrow their text.
//!
//! Semantics follow the reference `ResponseParser` (transformers 5.23.0,
//! `chat_parsing/response_parser.py`, `_process`, `_scan`, `_watchlist`): while an explicit
//! region is open only its close is watched; otherwise every explicit open and the implicit
//! field's close are. Among complete matches the earliest start wins, then the longest, then
//! opens before closes, then the field name; a complete match is committed only when no
//! still-pending delimiter starts at or before it. Bytes that may still become a delimiter are
//! held back.
//!
//! Partial matching is incremental: the router keeps a set of live DFA walks (one per candidate
//! start, deduplicated by DFA state so that only the leftmost start of equal futures is kept)
//! and advances each by one byte per input byte, so the cost is linear in the output length
//! whatever the chunking; held text is never rescanned on a later feed.
//!
//! Prefilter: when every watched delimiter branch has compiler-computed [`Prefilter`] facts
//! (its matches are a run of `lead` bytes, such as the `\s*` of `\s*<tool_call>`, then a byte
//! of `first`), and no `first` byte is a `lead` byte, the router jumps with `memchr` from one
//! `first` byte to the next, and walks only the run of `lead` bytes before it.
//!
//! Two front ends use this router: [`Router`] (no heap; events with borrowed text and a typed
//! field id) and, with the `alloc` feature, `ResponseParser` (the message, content parsers,
//! transforms and tool typing).

use core::fmt;
use core::marker::PhantomData;

use arrayvec::{ArrayString, ArrayVec};
use regex_automata::util::primitives::StateID;

/// Edge fact: from this state a longer match than any seen so far may still come (some byte
/// leads to a live state from which a match is reachable).
pub const EDGE_GROW: u8 = 1;
/// Edge fact: every next byte reports a match ending exactly here, so a match ending at the
/// buffer end is certain whatever comes next.
pub const EDGE_SURE: u8 = 2;
/// Edge fact: some continuation (a byte or the end of input) can still report a match.
pub const EDGE_REACH: u8 = 4;

/// A DFA as the router walks it: an anchored, leftmost-first dense DFA (regex-automata; matches
/// are reported one byte late) plus the start states and edge facts the compiler computed.
pub trait RouteDfa {
    /// The transition from `id` on `byte`.
    fn next_state(&self, id: StateID, byte: u8) -> StateID;
    /// The transition from `id` at the end of input.
    fn next_eoi_state(&self, id: StateID) -> StateID;
    /// Whether `id` is a match state.
    fn is_match_state(&self, id: StateID) -> bool;
    /// Whether `id` is the dead state (or a quit state, which the compiler never configures).
    fn is_dead_state(&self, id: StateID) -> bool;
    /// The anchored start state after `look_behind` (`None`: at the start of the output), or
    /// `None` when the DFA has none.
    fn start(&self, look_behind: Option<u8>) -> Option<StateID>;
    /// The edge facts of `id`: a combination of [`EDGE_GROW`], [`EDGE_SURE`], [`EDGE_REACH`].
    fn edge(&self, id: StateID) -> u8;
}

/// Open or close delimiter of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelimiterKind {
    /// The open delimiter.
    Open,
    /// The close delimiter.
    Close,
}

pub use crate::tables::{ByteSet, JumpPlan, Prefilter, Watched};

/// The tables the router reads: fields, their delimiters and the delimiters' DFAs. Implemented
/// by the run-time `CompiledTemplate` (feature `alloc`) and by [`crate::statics::StaticRoutes`]
/// (embedded tables, no heap). Field indices are `0..field_count()` in template order; every
/// other argument is one the implementation reported (a field with that delimiter, a branch
/// below `branch_count`).
pub trait Routes {
    /// The DFA type.
    type Dfa: RouteDfa;
    /// The watch list while `region` is open (`None`: outside any region): the watched
    /// delimiters in priority order, the union of their first bytes, and the prefilter jump
    /// plan (decided by the compiler).
    fn watch(&self, region: Option<usize>) -> (&[Watched], ByteSet, Option<JumpPlan>);
    /// Number of fields.
    fn field_count(&self) -> usize;
    /// The implicit field (the one without an open delimiter), if any.
    fn implicit(&self) -> Option<usize>;
    /// The rank of `field` in name order (last tie-break between equal matches).
    fn name_rank(&self, field: usize) -> u32;
    /// The bytes with which some branch of the delimiter can start a match (256-bit set: bit
    /// `b % 8` of byte `b / 8`; every byte when the delimiter can match the empty string).
    fn first_set(&self, field: usize, kind: DelimiterKind) -> ByteSet;
    /// Number of branches of the delimiter (tried in priority order at one start).
    fn branch_count(&self, field: usize, kind: DelimiterKind) -> usize;
    /// The main DFA of a branch.
    fn main_dfa(&self, field: usize, kind: DelimiterKind, branch: usize) -> &Self::Dfa;
    /// The trailing look-ahead of a branch: `(negated, body DFA)`.
    fn lookahead(
        &self,
        field: usize,
        kind: DelimiterKind,
        branch: usize,
    ) -> Option<(bool, &Self::Dfa)>;
    /// How the router computes the field's [`RegionValue`].
    fn body_kind(&self, field: usize) -> BodyKind;
}

impl<T: Routes + ?Sized> Routes for &T {
    type Dfa = T::Dfa;
    fn watch(&self, region: Option<usize>) -> (&[Watched], ByteSet, Option<JumpPlan>) {
        (**self).watch(region)
    }
    fn field_count(&self) -> usize {
        (**self).field_count()
    }
    fn implicit(&self) -> Option<usize> {
        (**self).implicit()
    }
    fn name_rank(&self, field: usize) -> u32 {
        (**self).name_rank(field)
    }
    fn first_set(&self, field: usize, kind: DelimiterKind) -> ByteSet {
        (**self).first_set(field, kind)
    }
    fn branch_count(&self, field: usize, kind: DelimiterKind) -> usize {
        (**self).branch_count(field, kind)
    }
    fn main_dfa(&self, field: usize, kind: DelimiterKind, branch: usize) -> &Self::Dfa {
        (**self).main_dfa(field, kind, branch)
    }
    fn lookahead(
        &self,
        field: usize,
        kind: DelimiterKind,
        branch: usize,
    ) -> Option<(bool, &Self::Dfa)> {
        (**self).lookahead(field, kind, branch)
    }
    fn body_kind(&self, field: usize) -> BodyKind {
        (**self).body_kind(field)
    }
}

/// A typed field id: generated field enums implement it (`FIELDS[index]`); `usize` is the
/// plain index.
pub trait FieldId: Copy {
    /// The field at `index` (template order; always below the template's field count).
    fn from_index(index: usize) -> Self;
}

impl FieldId for usize {
    fn from_index(index: usize) -> Self {
        index
    }
}

/// A span of the output, in bytes: `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Span {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// What the router computes for a region's value (from the field's content parser, decided by
/// the compiler): see [`RegionValue`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyKind {
    /// `text`.
    Text {
        /// `strip`.
        strip: bool,
    },
    /// `int`.
    Int {
        /// `strip`.
        strip: bool,
    },
    /// `float`.
    Float {
        /// `strip`.
        strip: bool,
    },
    /// `bool`.
    Bool {
        /// `strip`.
        strip: bool,
    },
    /// A structured parser (`json`, `xml-inline`, `kv-lines`): the raw body.
    Raw,
}

/// The longest `int`/`float`/`bool` text, in bytes (without the whitespace its parser ignores at
/// both ends), the router parses itself.
pub const SCALAR_MAX: usize = 64;

/// The value of a closed region as the no-heap router gives it: the content parser's result
/// for `text`, `int`, `float` and `bool` (reference `content_parsers.py` `_text`, `_int`,
/// `_float`, `_bool`, with Python's `str.strip`, `int`, `float`), and the raw body of
/// structured parsers. Transforms, `join` and `repeats` are message-level (the alloc API).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegionValue {
    /// `text`: the body's span, stripped of Python whitespace when `strip` is set.
    Text(Span),
    /// `int`: the value.
    Int(i64),
    /// `float`: the value (Python's `float()`: `inf` and `nan` included).
    Float(f64),
    /// `bool`: whether the (stripped) body lowercased is `true` or `1`.
    Bool(bool),
    /// A structured parser's raw body (parse it with the alloc API).
    Raw(Span),
    /// `int`/`float`: not a Python literal (the reference raises `ValueError`); the (stripped)
    /// body's span.
    Invalid(Span),
    /// `int`/`float`: past the router's limits (longer than [`SCALAR_MAX`] bytes without the
    /// whitespace the parser ignores at its ends, or an integer outside `i64`); the
    /// (stripped) body's span.
    Unsupported(Span),
}

/// One event of the [`Router`]: what the reference reports as `region_open`, `region_chunk` and
/// `region_close`, with borrowed text and a typed field id.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RegionEvent<'a, F> {
    /// A region opened: an explicit region at its open delimiter (`delimiter` is the matched
    /// text), the implicit region on its first byte (`delimiter` is empty).
    Open {
        /// The field.
        field: F,
        /// The text the open delimiter matched.
        delimiter: &'a str,
    },
    /// Text routed into the open region (a whole number of chars; chunk boundaries depend on
    /// the feeding and the hold buffer, not on the content).
    Chunk {
        /// The field.
        field: F,
        /// The text.
        text: &'a str,
    },
    /// A region closed. `body` is the raw body in output bytes (between the delimiters).
    Close {
        /// The field.
        field: F,
        /// The body's span in the output (bytes, prefix excluded).
        body: Span,
        /// The region's value.
        value: RegionValue,
    },
}

/// An error of the [`Router`] (and the routing errors of `ResponseParser`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteError {
    /// More text is held back (a delimiter may still match) than the hold buffer takes.
    HoldOverflow {
        /// Output byte where the held text starts.
        offset: usize,
        /// Bytes that would have to be held (at least).
        held: usize,
        /// The hold buffer's capacity or limit, in bytes.
        limit: usize,
    },
    /// More delimiter walks are live at once than the router's walk capacity.
    TooManyWalks {
        /// Output byte being scanned.
        offset: usize,
        /// The capacity.
        limit: usize,
    },
    /// The template watches more delimiters at once (explicit opens plus the implicit close)
    /// than the router's `WALKS` capacity.
    TooManyDelimiters {
        /// The capacity.
        limit: usize,
    },
    /// A field's open and close both match the empty string at one position, so no progress
    /// is possible (the reference loops forever here).
    NoProgress {
        /// The field index.
        field: usize,
        /// Output byte (or prefix byte when `in_prefix`).
        offset: usize,
        /// Whether the position is in the prefix.
        in_prefix: bool,
    },
    /// `feed` or `finish` after `finish`.
    Finished,
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::HoldOverflow {
                offset,
                held,
                limit,
            } => write!(
                f,
                "{held} bytes held back from byte {offset} while a delimiter may still match, \
                 over the limit of {limit}"
            ),
            Self::TooManyWalks { offset, limit } => write!(
                f,
                "more than {limit} delimiter matches pending at byte {offset}; use a router \
                 with more walk capacity"
            ),
            Self::TooManyDelimiters { limit } => write!(
                f,
                "the template watches more than {limit} delimiters at once; use a router with \
                 more walk capacity"
            ),
            Self::NoProgress {
                field,
                offset,
                in_prefix,
            } => write!(
                f,
                "field #{field}: open and close delimiters both match the empty string at byte \
                 {offset} of the {}; the template cannot make progress",
                if in_prefix {
                    "prefix after its last start anchor"
                } else {
                    "output"
                }
            ),
            Self::Finished => f.write_str("router already finished"),
        }
    }
}

impl core::error::Error for RouteError {}

// ------------------------------------------------------------------------------------------
// Storage: fixed capacity (no heap) or growable (feature `alloc`).

#[derive(Debug)]
enum Slots<T, const N: usize> {
    Fixed(ArrayVec<T, N>),
    #[cfg(feature = "alloc")]
    Heap(alloc::vec::Vec<T>),
}

impl<T, const N: usize> Slots<T, N> {
    /// Empty; growable when `heap` (and the `alloc` feature is on), else of capacity `N`.
    fn new(heap: bool) -> Self {
        #[cfg(feature = "alloc")]
        if heap {
            return Self::Heap(alloc::vec::Vec::new());
        }
        let _ = heap;
        Self::Fixed(ArrayVec::new())
    }
    fn truncate(&mut self, n: usize) {
        match self {
            Self::Fixed(v) => v.truncate(n),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v.truncate(n),
        }
    }
    fn as_slice(&self) -> &[T] {
        match self {
            Self::Fixed(v) => v,
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v,
        }
    }
    fn as_mut_slice(&mut self) -> &mut [T] {
        match self {
            Self::Fixed(v) => v,
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v,
        }
    }
    fn clear(&mut self) {
        match self {
            Self::Fixed(v) => v.clear(),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v.clear(),
        }
    }
    /// Pushes; `false` when full.
    #[must_use]
    fn push(&mut self, t: T) -> bool {
        match self {
            Self::Fixed(v) => v.try_push(t).is_ok(),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => {
                v.push(t);
                true
            }
        }
    }
    fn retain(&mut self, f: impl FnMut(&mut T) -> bool) {
        match self {
            Self::Fixed(v) => v.retain(f),
            #[cfg(feature = "alloc")]
            Self::Heap(v) => v.retain_mut(f),
        }
    }
    fn capacity(&self) -> usize {
        match self {
            Self::Fixed(_) => N,
            #[cfg(feature = "alloc")]
            Self::Heap(_) => usize::MAX,
        }
    }
}

/// Moves `buf[start..]` to the front. Out of line and cold: the temporary is as large as
/// the buffer, and a caller's stack frame should not be.
#[cold]
#[inline(never)]
fn compact<const N: usize>(buf: &mut ArrayString<N>, start: usize) {
    let mut front = ArrayString::<N>::new();
    // The held part fits: it is shorter than the buffer.
    let _ = front.try_push_str(buf.get(start..).unwrap_or(""));
    *buf = front;
}

/// The hold buffer: text not yet released.
#[derive(Debug)]
enum Hold<const N: usize> {
    /// `buf[start..]` is held; released text at the front is dropped by moving `start`, and
    /// the buffer is compacted only when an append needs the room (amortized O(1) per byte).
    Fixed { buf: ArrayString<N>, start: usize },
    #[cfg(feature = "alloc")]
    Heap(alloc::string::String),
}

impl<const N: usize> Hold<N> {
    fn as_str(&self) -> &str {
        match self {
            Self::Fixed { buf, start } => buf.get(*start..).unwrap_or(""),
            #[cfg(feature = "alloc")]
            Self::Heap(s) => s,
        }
    }
    fn len(&self) -> usize {
        self.as_str().len()
    }
    fn room(&self) -> usize {
        match self {
            Self::Fixed { buf, start } => buf.remaining_capacity() + start,
            #[cfg(feature = "alloc")]
            Self::Heap(_) => usize::MAX,
        }
    }
    /// Appends `s`; `false` (nothing appended) when it does not fit.
    fn push_str(&mut self, s: &str) -> bool {
        match self {
            Self::Fixed { buf, start } => {
                if buf.remaining_capacity() < s.len() && *start > 0 {
                    compact(buf, *start);
                    *start = 0;
                }
                buf.try_push_str(s).is_ok()
            }
            #[cfg(feature = "alloc")]
            Self::Heap(h) => {
                h.push_str(s);
                true
            }
        }
    }
    /// Drops the first `n` held bytes (a char boundary).
    fn drop_front(&mut self, n: usize) {
        match self {
            Self::Fixed { buf, start } => {
                *start += n;
                if *start >= buf.len() {
                    buf.clear();
                    *start = 0;
                }
            }
            #[cfg(feature = "alloc")]
            Self::Heap(h) => {
                h.drain(..n.min(h.len()));
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// The scan.

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

/// The prefilter of the current watch list (see the module docs).
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
enum Step {
    Live(Walk),
    Done(Option<Candidate>),
}

/// Why processing stopped early: a routing error or the sink's error.
#[derive(Debug)]
pub(crate) enum Stop<E> {
    Route(RouteError),
    Sink(E),
}

impl<E> From<RouteError> for Stop<E> {
    fn from(e: RouteError) -> Self {
        Stop::Route(e)
    }
}

/// Receiver of the router's raw events (absolute positions, the buffer being scanned).
pub(crate) trait Sink {
    type Error;
    /// An explicit region opened: delimiter branch `branch` matched `hay[range]`.
    fn open(
        &mut self,
        field: usize,
        branch: usize,
        hay: &str,
        range: (usize, usize),
    ) -> Result<(), Self::Error>;
    /// The implicit region opened (its first byte is about to be routed).
    fn open_implicit(&mut self, field: usize) -> Result<(), Self::Error>;
    /// Text routed into the open region.
    fn chunk(&mut self, field: usize, text: &str) -> Result<(), Self::Error>;
    /// The open region closed; `body` in output bytes; `at`: where the body starts, as
    /// `(offset, in_prefix)` (see `Core::located`).
    fn close(
        &mut self,
        field: usize,
        body: Span,
        value: RegionValue,
        at: (usize, bool),
    ) -> Result<(), Self::Error>;
}

/// What the router tracks of the open region to give its [`RegionValue`].
#[derive(Debug)]
struct Values {
    /// Whether values are computed (the no-heap router; the alloc API parses bodies itself).
    on: bool,
    /// Absolute start of the first non-space char of the body.
    text_start: Option<usize>,
    /// Absolute end of the last non-space char of the body.
    text_end: usize,
    /// For `int`/`float`/`bool`: the body without the whitespace its parser ignores at both
    /// ends (see [`Values::skippable`]); whitespace seen after the last kept char waits in
    /// `pending` and is kept only when more text follows it.
    scalar: ArrayString<SCALAR_MAX>,
    pending: ArrayString<SCALAR_MAX>,
    /// `scalar` (or `pending`, then followed by text) overflowed.
    scalar_full: bool,
    pending_full: bool,
    /// The open region's body kind.
    kind: BodyKind,
}

impl Values {
    fn reset(&mut self, kind: BodyKind) {
        self.kind = kind;
        self.text_start = None;
        self.text_end = 0;
        self.scalar.clear();
        self.pending.clear();
        self.scalar_full = false;
        self.pending_full = false;
    }

    /// Whether the parser of `kind` ignores `c` at either end of the body: with `strip`,
    /// Python whitespace (`str.strip`); without, what `int()`/`float()` strip themselves (C
    /// whitespace, and non-ASCII whitespace, which they turn into a space); `bool` without
    /// `strip` compares the raw body.
    fn skippable(kind: BodyKind, c: char) -> bool {
        match kind {
            BodyKind::Int { strip: true }
            | BodyKind::Float { strip: true }
            | BodyKind::Bool { strip: true } => crate::pynum::py_is_space(c),
            BodyKind::Int { strip: false } | BodyKind::Float { strip: false } => {
                matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
                    || (!c.is_ascii() && crate::pynum::py_is_space(c))
            }
            _ => false,
        }
    }

    /// Tracks the text `text`, at absolute `from`, of the open region.
    fn track(&mut self, text: &str, from: usize) {
        if !self.on {
            return;
        }
        match self.kind {
            BodyKind::Raw | BodyKind::Text { strip: false } => {}
            BodyKind::Text { strip: true } => self.track_strip(text, from),
            kind => {
                self.track_strip(text, from);
                self.track_scalar(kind, text);
            }
        }
    }

    fn track_scalar(&mut self, kind: BodyKind, text: &str) {
        for c in text.chars() {
            if Self::skippable(kind, c) {
                if !self.scalar.is_empty() && self.pending.try_push(c).is_err() {
                    self.pending_full = true;
                }
                continue;
            }
            if self.pending_full {
                self.scalar_full = true;
            } else if !self.pending.is_empty() {
                if self.scalar.try_push_str(&self.pending).is_err() {
                    self.scalar_full = true;
                }
                self.pending.clear();
            }
            if self.scalar.try_push(c).is_err() {
                self.scalar_full = true;
            }
            self.pending_full = false;
        }
    }

    fn track_strip(&mut self, text: &str, from: usize) {
        if self.text_start.is_none() {
            if let Some((i, _)) = text
                .char_indices()
                .find(|&(_, c)| !crate::pynum::py_is_space(c))
            {
                self.text_start = Some(from + i);
            }
        }
        // Usually the last byte is an ASCII non-space: the text ends there.
        match text.as_bytes().last() {
            Some(&b) if b.is_ascii() && !crate::pynum::py_is_space(char::from(b)) => {
                self.text_end = from + text.len();
            }
            _ => {
                if let Some((i, c)) = text
                    .char_indices()
                    .rev()
                    .find(|&(_, c)| !crate::pynum::py_is_space(c))
                {
                    self.text_end = from + i + c.len_utf8();
                }
            }
        }
    }

    /// The value of a body that spans `raw` (output offsets; `shift` turns absolute positions
    /// into output offsets).
    fn value(&self, kind: BodyKind, raw: Span, shift: impl Fn(usize) -> usize) -> RegionValue {
        let stripped = match self.text_start {
            Some(start) => Span {
                start: shift(start),
                end: shift(self.text_end).max(shift(start)),
            },
            None => Span {
                start: raw.end,
                end: raw.end,
            },
        };
        let span = match kind {
            BodyKind::Raw => return RegionValue::Raw(raw),
            BodyKind::Text { strip } => {
                return RegionValue::Text(if strip { stripped } else { raw });
            }
            BodyKind::Int { strip } | BodyKind::Float { strip } | BodyKind::Bool { strip } => {
                if strip {
                    stripped
                } else {
                    raw
                }
            }
        };
        // Without the whitespace the parser ignores at the ends (`track_scalar`).
        let text = self.scalar.as_str();
        let mut digits = ArrayString::<SCALAR_MAX>::new();
        match kind {
            BodyKind::Bool { .. } => {
                // A body (without its ignored ends) longer than the buffer is not `true`/`1`.
                RegionValue::Bool(!self.scalar_full && crate::pynum::py_true_word(text))
            }
            _ if self.scalar_full => RegionValue::Unsupported(span),
            BodyKind::Int { .. } => match crate::pynum::py_int_digits(text, &mut digits) {
                Ok((negative, d)) => {
                    let magnitude = d.parse::<i128>().ok();
                    let value = magnitude
                        .map(|m| if negative { -m } else { m })
                        .and_then(|v| i64::try_from(v).ok());
                    value.map_or(RegionValue::Unsupported(span), RegionValue::Int)
                }
                Err(crate::pynum::NumError::Invalid) => RegionValue::Invalid(span),
                Err(crate::pynum::NumError::TooLong) => RegionValue::Unsupported(span),
            },
            _ => match crate::pynum::py_float_in(text, &mut digits) {
                Ok(f) => RegionValue::Float(f),
                Err(crate::pynum::NumError::Invalid) => RegionValue::Invalid(span),
                Err(crate::pynum::NumError::TooLong) => RegionValue::Unsupported(span),
            },
        }
    }
}

/// The router state without its hold buffer (so events can borrow the buffer while the state
/// changes).
#[derive(Debug)]
pub(crate) struct Core<R, const W: usize> {
    pub(crate) routes: R,
    /// Absolute position of the first byte of the buffer being scanned (the hold buffer, or
    /// the fed text when nothing is held).
    base: usize,
    /// The byte before `base`, for look-behind.
    before: Option<u8>,
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
}

impl<R: Routes, const W: usize> Core<R, W> {
    fn with_slots(
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
            values: Values {
                on: values,
                text_start: None,
                text_end: 0,
                scalar: ArrayString::new(),
                pending: ArrayString::new(),
                scalar_full: false,
                pending_full: false,
                kind: BodyKind::Raw,
            },
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
    fn keep_from(&self) -> usize {
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
    fn fast<S: Sink>(&mut self, text: &str, sink: &mut S) -> Option<Result<(), Stop<S::Error>>> {
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
        if let Some(&last) = bytes.last() {
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
                let watch = self.scan.watch.as_slice()[usize::from(c.watch)];
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
                            usize::from(c.branch),
                            view,
                            (c.start - self.base, c.end - self.base),
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

    /// A fresh scan from `pos` with the same watch list.
    fn restart_scan(&mut self) {
        let scan = &mut self.scan;
        scan.next = self.pos;
        scan.walks.clear();
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
        scan.walks.clear();
        scan.preferred.clear();
        for _ in 0..scan.watch.as_slice().len() {
            // Same capacity as `watch`: fits.
            let _ = scan.preferred.push(None);
        }
        scan.best = None;
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
        let (wa, wb) = (self.watch_of(a.watch), self.watch_of(b.watch));
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
            .get_mut(usize::from(c.watch))
        else {
            return;
        };
        if let Some(p) = slot {
            if (p.start, p.branch) <= (c.start, c.branch) {
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
            self.before
        }
    }

    /// Advances every walk by the byte at `p`, starting new walks at `p` first.
    fn step(&mut self, view: &str, p: usize) -> Result<(), RouteError> {
        let byte = self.byte_at(view, p);
        // New walks start only at char boundaries, and only if they could beat the best.
        let can_start = (byte & 0xC0) != 0x80 && self.scan.best.is_none_or(|b| p <= b.start);
        if can_start && self.scan.first.contains(byte) {
            self.start_walks(view, p, byte)?;
        }
        // Walks are stepped in place: survivors are compacted to the front, deduplicated.
        let n = self.scan.walks.as_slice().len();
        let mut write = 0;
        for i in 0..n {
            let w = self.scan.walks.as_slice()[i];
            match self.step_walk(view, w, p, byte) {
                Step::Live(w) => {
                    let has_lookahead = self.lookahead(w.watch, w.branch).is_some();
                    write = keep_dedup(self.scan.walks.as_mut_slice(), write, w, has_lookahead);
                }
                Step::Done(Some(c)) => self.offer(c),
                Step::Done(None) => {}
            }
        }
        self.scan.walks.truncate(write);
        if let Some(best) = self.scan.best {
            // Walks that start after the best candidate can no longer matter.
            self.scan.walks.retain(|w| w.start <= best.start);
        }
        Ok(())
    }

    /// Starts a walk at `p` for every branch of every watched delimiter that can start with
    /// `byte`.
    fn start_walks(&mut self, view: &str, p: usize, byte: u8) -> Result<(), RouteError> {
        let look_behind = self.look_behind(view, p);
        for wi in 0..self.scan.watch.as_slice().len() {
            let w = self.scan.watch.as_slice()[wi];
            if !w.first.contains(byte) {
                continue;
            }
            for bi in 0..self.routes.branch_count(w.field, w.kind) {
                let dfa = self.routes.main_dfa(w.field, w.kind, bi);
                if let Some(state) = dfa.start(look_behind) {
                    let walk = Walk {
                        watch: wi as u16,
                        branch: bi as u16,
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

    #[inline(always)]
    fn step_walk(&self, view: &str, w: Walk, p: usize, byte: u8) -> Step {
        match w.phase {
            Phase::Main { state, last_match } => {
                let dfa = self.main_dfa(w.watch, w.branch);
                let next = dfa.next_state(state, byte);
                let last_match = if dfa.is_match_state(next) {
                    Some(p)
                } else {
                    last_match
                };
                if dfa.is_dead_state(next) {
                    match last_match {
                        Some(e) => self.main_matched(view, w, e, p + 1),
                        None => Step::Done(None),
                    }
                } else if last_match == Some(p) && dfa.edge(next) & EDGE_REACH == 0 {
                    // A match ends here and no continuation can report another: it is final
                    // now (one byte earlier than the dead state would tell).
                    self.main_matched(view, w, p, p + 1)
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
                // Walks in this phase belong to a branch with a look-ahead.
                let Some((negated, dfa)) = self.lookahead(w.watch, w.branch) else {
                    return Step::Done(None);
                };
                let next = dfa.next_state(state, byte);
                let cand = Candidate {
                    watch: w.watch,
                    branch: w.branch,
                    start: w.start,
                    end: main_end,
                };
                if dfa.is_match_state(next) {
                    Step::Done(if negated { None } else { Some(cand) })
                } else if dfa.is_dead_state(next) {
                    Step::Done(if negated { Some(cand) } else { None })
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
    fn main_matched(&self, view: &str, w: Walk, e: usize, scanned: usize) -> Step {
        let cand = Candidate {
            watch: w.watch,
            branch: w.branch,
            start: w.start,
            end: e,
        };
        let Some((_, dfa)) = self.lookahead(w.watch, w.branch) else {
            return Step::Done(Some(cand));
        };
        let Some(state) = dfa.start(self.look_behind(view, e)) else {
            return Step::Done(None);
        };
        let mut lw = Walk {
            phase: Phase::Look { state, main_end: e },
            ..w
        };
        for q in e..scanned {
            match self.step_walk(view, lw, q, self.byte_at(view, q)) {
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
            match self.edge_walk(view, w, end) {
                Step::Live(w) => {
                    self.scan.walks.as_mut_slice()[write] = w;
                    write += 1;
                }
                Step::Done(Some(c)) => self.offer(c),
                Step::Done(None) => {}
            }
        }
        self.scan.walks.truncate(write);
        Ok(())
    }

    fn edge_walk(&self, view: &str, w: Walk, end: usize) -> Step {
        match w.phase {
            Phase::Main { state, last_match } => {
                let facts = self.main_dfa(w.watch, w.branch).edge(state);
                if facts & EDGE_GROW != 0 {
                    Step::Live(w)
                } else if facts & EDGE_SURE != 0 {
                    match self.main_matched(view, w, end, end) {
                        Step::Live(lw) => self.edge_walk(view, lw, end),
                        done => done,
                    }
                } else if facts & EDGE_REACH != 0 {
                    Step::Live(w)
                } else {
                    match last_match {
                        Some(e) => match self.main_matched(view, w, e, end) {
                            Step::Live(lw) => self.edge_walk(view, lw, end),
                            done => done,
                        },
                        None => Step::Done(None),
                    }
                }
            }
            Phase::Look { state, main_end } => {
                let Some((negated, dfa)) = self.lookahead(w.watch, w.branch) else {
                    return Step::Done(None);
                };
                let facts = dfa.edge(state);
                let cand = Candidate {
                    watch: w.watch,
                    branch: w.branch,
                    start: w.start,
                    end: main_end,
                };
                if facts & EDGE_SURE != 0 {
                    Step::Done(if negated { None } else { Some(cand) })
                } else if facts & EDGE_REACH != 0 {
                    Step::Live(w)
                } else {
                    Step::Done(if negated { Some(cand) } else { None })
                }
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
            if let Some(c) = self.eoi_walk(view, w, end) {
                self.offer(c);
            }
        }
        self.scan.walks.clear();
    }

    fn eoi_walk(&self, view: &str, w: Walk, end: usize) -> Option<Candidate> {
        match w.phase {
            Phase::Main { state, last_match } => {
                let dfa = self.main_dfa(w.watch, w.branch);
                let eoi = dfa.next_eoi_state(state);
                let last_match = if dfa.is_match_state(eoi) {
                    Some(end)
                } else {
                    last_match
                };
                let e = last_match?;
                match self.main_matched(view, w, e, end) {
                    Step::Live(lw) => self.eoi_walk(view, lw, end),
                    Step::Done(c) => c,
                }
            }
            Phase::Look { state, main_end } => {
                let (negated, dfa) = self.lookahead(w.watch, w.branch)?;
                let matched = dfa.is_match_state(dfa.next_eoi_state(state));
                let cand = Candidate {
                    watch: w.watch,
                    branch: w.branch,
                    start: w.start,
                    end: main_end,
                };
                (matched != negated).then_some(cand)
            }
        }
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
            let value = if self.values.on {
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

/// Keeps only the leftmost of walks with the same future (same branch, phase and DFA state).
/// A main walk with a recorded match and one without are kept apart: if the future brings no
/// match, only the former has one. In a branch with a trailing look-ahead the recorded match end
/// itself matters (the look-ahead is checked from it), so such walks merge only when it is
/// equal, up to [`LOOKAHEAD_WALKS_PER_STATE`] per state; past that they merge into the leftmost
/// (its match end is then used for all), which bounds the cost on patterns like
/// `[ab](?:c[^d]*d)?(?=cx)` over long inputs.
///
/// `list[..kept]` are the walks kept so far; `w` comes from a later index, so `list[kept]` is
/// free to take it. Returns the new count.
fn keep_dedup(list: &mut [Walk], kept: usize, w: Walk, has_lookahead: bool) -> usize {
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
    let front = &list[..kept];
    let target = if has_lookahead {
        let exact = front.iter().position(|a| same_state(a) && same_end(a));
        exact.or_else(|| {
            let mut alike = front.iter().enumerate().filter(|(_, a)| same_state(a));
            let first = alike.next().map(|(i, _)| i);
            (alike.count() + 1 >= LOOKAHEAD_WALKS_PER_STATE)
                .then_some(first)
                .flatten()
        })
    } else {
        front.iter().position(same_state)
    };
    match target {
        Some(i) => {
            if w.start < list[i].start {
                list[i] = w;
            }
            kept
        }
        None => {
            list[kept] = w;
            kept + 1
        }
    }
}

// ------------------------------------------------------------------------------------------
// The router with its hold buffer.

/// The driver shared by [`Router`] and `ResponseParser`: the core plus the hold buffer.
#[derive(Debug)]
pub(crate) struct Driver<R, const H: usize, const W: usize> {
    pub(crate) core: Core<R, W>,
    hold: Hold<H>,
}

impl<R: Routes, const H: usize, const W: usize> Driver<R, H, W> {
    fn fixed(routes: R) -> Result<Self, RouteError> {
        Ok(Self {
            core: Core::with_slots(routes, false, H, true)?,
            hold: Hold::Fixed {
                buf: ArrayString::new(),
                start: 0,
            },
        })
    }

    /// A driver with growable buffers (`hold_limit` caps the held bytes).
    #[cfg(feature = "alloc")]
    pub(crate) fn heap(routes: R, hold_limit: usize) -> Result<Self, RouteError> {
        Ok(Self {
            core: Core::with_slots(routes, true, hold_limit, false)?,
            hold: Hold::Heap(alloc::string::String::new()),
        })
    }

    /// Routes `text` (more may follow).
    pub(crate) fn feed<S: Sink>(&mut self, text: &str, sink: &mut S) -> Result<(), Stop<S::Error>> {
        let mut rest = text;
        loop {
            if self.hold.len() == 0 {
                // Matched rather than returned as is: moving the whole result copies the error
                // payload's bytes (overlapping moves that stall store forwarding).
                match self.core.fast(rest, sink) {
                    Some(Ok(())) => return Ok(()),
                    Some(Err(e)) => return Err(e),
                    None => {}
                }
                // Nothing held: scan the fed text in place, then keep its unreleased tail.
                let result = self.core.process(rest, false, sink);
                // Kept even after an error (a region that fails to parse), so a caller that
                // goes on sees the same buffer as the reference.
                let kept = self.keep_tail(rest);
                return result.and(kept);
            }
            // Append what fits (whole chars) and scan the hold buffer.
            let mut n = rest.len().min(self.hold.room());
            while !rest.is_char_boundary(n) {
                n -= 1;
            }
            let appended = n > 0 && self.hold.push_str(&rest[..n]);
            if appended {
                rest = &rest[n..];
            }
            self.core.process(self.hold.as_str(), false, sink)?;
            self.trim();
            if rest.is_empty() {
                return Ok(());
            }
            let next_char = rest.chars().next().map_or(0, char::len_utf8);
            if !appended && self.hold.room() < next_char {
                let keep = self.core.keep_from();
                return Err(Stop::Route(RouteError::HoldOverflow {
                    offset: self.core.output_offset(keep),
                    held: self.hold.len() + next_char,
                    limit: self.core.hold_limit.min(H),
                }));
            }
        }
    }

    /// Ends the output: routes what is held and closes the open region.
    pub(crate) fn finish<S: Sink>(&mut self, sink: &mut S) -> Result<(), Stop<S::Error>> {
        self.core.process(self.hold.as_str(), true, sink)?;
        self.trim();
        Ok(())
    }

    /// After scanning `text` in place: move its unreleased tail into the hold buffer.
    fn keep_tail<E>(&mut self, text: &str) -> Result<(), Stop<E>> {
        let keep = self.core.keep_from();
        let rel = keep - self.core.base;
        if rel > 0 {
            self.core.before = Some(text.as_bytes()[rel - 1]);
        }
        let tail = &text[rel..];
        self.core.base = keep;
        if !tail.is_empty() && !self.hold.push_str(tail) {
            return Err(Stop::Route(RouteError::HoldOverflow {
                offset: self.core.output_offset(keep),
                held: tail.len(),
                limit: H,
            }));
        }
        Ok(())
    }

    /// Drops released text from the front of the hold buffer.
    fn trim(&mut self) {
        let keep = self.core.keep_from();
        let rel = keep - self.core.base;
        if rel == 0 {
            return;
        }
        let held = self.hold.as_str();
        // Large heap buffers shrink only in big steps (amortized); fixed ones always.
        if matches!(self.hold, Hold::Fixed { .. }) || rel == held.len() || rel >= 4096 {
            self.core.before = Some(held.as_bytes()[rel - 1]);
            self.hold.drop_front(rel);
            self.core.base = keep;
        }
    }
}

/// The no-heap streaming router: feed output text, get [`RegionEvent`]s.
///
/// `HOLD` is the hold buffer's capacity in bytes: text that may still become a delimiter is
/// kept there (a delimiter such as `[^<]*<\|x\|>` can hold a lot; past the capacity `feed`
/// fails with [`RouteError::HoldOverflow`], nothing is dropped). `WALKS` is the most candidate
/// delimiter matches pending at once ([`RouteError::TooManyWalks`] past it; templates with
/// literal delimiters need a few).
///
/// No heap allocation happens in `new`, `feed` or `finish`. What the router leaves to the
/// `alloc` API (`ResponseParser`): the prefix replay (start anchors may use look-around),
/// content parsers, transforms, named-group captures and tool typing; a `Close` event gives the
/// raw body span for them.
///
/// ```text
/// let mut router = SmolLm3::router::<256>()?;        // generated by response_template!
/// for chunk in stream {
///     router.feed(chunk, |event| match event {
///         RegionEvent::Chunk { field: SmolLm3::Content, text } => show(text),
///         _ => {}
///     })?;
/// }
/// router.finish(|event| ...)?;
/// ```
///
/// The `parser-runtime` crate documentation has a complete example.
#[derive(Debug)]
pub struct Router<R, F = usize, const HOLD: usize = 4096, const WALKS: usize = 64> {
    driver: Driver<R, HOLD, WALKS>,
    finished: bool,
    /// The first error: every later call returns it.
    failed: Option<RouteError>,
    fed: usize,
    _field: PhantomData<fn() -> F>,
}

struct Adapter<'f, C, F> {
    on_event: &'f mut C,
    _field: PhantomData<fn() -> F>,
}

impl<C: FnMut(RegionEvent<'_, F>), F: FieldId> Sink for Adapter<'_, C, F> {
    type Error = core::convert::Infallible;
    fn open(
        &mut self,
        field: usize,
        _branch: usize,
        hay: &str,
        range: (usize, usize),
    ) -> Result<(), Self::Error> {
        (self.on_event)(RegionEvent::Open {
            field: F::from_index(field),
            delimiter: &hay[range.0..range.1],
        });
        Ok(())
    }
    fn open_implicit(&mut self, field: usize) -> Result<(), Self::Error> {
        (self.on_event)(RegionEvent::Open {
            field: F::from_index(field),
            delimiter: "",
        });
        Ok(())
    }
    fn chunk(&mut self, field: usize, text: &str) -> Result<(), Self::Error> {
        (self.on_event)(RegionEvent::Chunk {
            field: F::from_index(field),
            text,
        });
        Ok(())
    }
    fn close(
        &mut self,
        field: usize,
        body: Span,
        value: RegionValue,
        _at: (usize, bool),
    ) -> Result<(), Self::Error> {
        (self.on_event)(RegionEvent::Close {
            field: F::from_index(field),
            body,
            value,
        });
        Ok(())
    }
}

fn route_error(stop: Stop<core::convert::Infallible>) -> RouteError {
    match stop {
        Stop::Route(e) => e,
        Stop::Sink(never) => match never {},
    }
}

impl<R: Routes, F: FieldId, const HOLD: usize, const WALKS: usize> Router<R, F, HOLD, WALKS> {
    /// A router over `routes`, starting in the implicit region.
    ///
    /// Errors: [`RouteError::TooManyDelimiters`] when a watch list exceeds `WALKS`.
    pub fn new(routes: R) -> Result<Self, RouteError> {
        Ok(Self {
            driver: Driver::fixed(routes)?,
            finished: false,
            failed: None,
            fed: 0,
            _field: PhantomData,
        })
    }

    /// Routes the next piece of output; `on_event` receives the events it causes, in order.
    ///
    /// Errors: [`RouteError::HoldOverflow`] when text that may still become a delimiter does
    /// not fit the hold buffer; [`RouteError::TooManyWalks`]; [`RouteError::NoProgress`];
    /// [`RouteError::Finished`] after [`Self::finish`]. An error is final: the events given so
    /// far stand, and every later call returns the same error (nothing is routed after it).
    pub fn feed(
        &mut self,
        text: &str,
        mut on_event: impl FnMut(RegionEvent<'_, F>),
    ) -> Result<(), RouteError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.finished {
            return Err(RouteError::Finished);
        }
        self.fed += text.len();
        let mut sink = Adapter {
            on_event: &mut on_event,
            _field: PhantomData,
        };
        let result = self.driver.feed(text, &mut sink).map_err(route_error);
        self.failed = result.err();
        result
    }

    /// Ends the output: routes the held text and closes the open region.
    ///
    /// Errors: as [`Self::feed`].
    pub fn finish(
        &mut self,
        mut on_event: impl FnMut(RegionEvent<'_, F>),
    ) -> Result<(), RouteError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        if self.finished {
            return Err(RouteError::Finished);
        }
        self.finished = true;
        let mut sink = Adapter {
            on_event: &mut on_event,
            _field: PhantomData,
        };
        let result = self.driver.finish(&mut sink).map_err(route_error);
        self.failed = result.err();
        result
    }

    /// Output bytes fed so far.
    pub fn fed(&self) -> usize {
        self.fed
    }

    /// Bytes currently held back (a delimiter may still match them).
    pub fn held(&self) -> usize {
        self.driver.hold.len()
    }
}
