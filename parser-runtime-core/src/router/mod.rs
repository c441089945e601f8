//! The region router: the partial-match engine that splits output text into regions by walking
//! the delimiter DFAs of a compiled template. It needs no heap: it runs on tables it reads
//! through [`Routes`], keeps held text in a fixed-capacity hold buffer and reports regions as
//! [`RegionEvent`]s that borrow their text.
//!
//! Semantics follow the reference `ResponseParser` (transformers 5.24.0,
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
//!
//! Files: this one holds the public API ([`Router`], its events, values, errors and the traits
//! the tables implement); `walk` the scan (the `Core` engine: walks, candidates, prefilter
//! jumps, edge and end-of-input resolution, regions); `hold` the hold buffer and slot storage;
//! `driver` the feeding of text through the hold buffer. Region values are tracked by
//! `crate::values`.

mod driver;
mod hold;
mod memo;
mod walk;

use core::fmt;
use core::marker::PhantomData;

use regex_automata::util::primitives::StateID;

pub(crate) use driver::{Driver, Sink, Stop};

/// Edge fact: from this state a longer match than any seen so far may still come (some byte
/// leads to a live state from which a match is reachable).
pub const EDGE_GROW: u8 = 1;
/// Edge fact: every next byte reports a match ending exactly here, so a match ending at the
/// buffer end is certain whatever comes next.
pub const EDGE_SURE: u8 = 2;
/// Edge fact: some continuation (a byte or the end of input) can still report a match.
pub const EDGE_REACH: u8 = 4;
/// Edge fact, with [`EDGE_SURE`]: the certain match is a delayed one (see
/// [`RouteDfa::delayed`]): it ends at the start of the last character read.
pub const EDGE_DELAYED: u8 = 8;

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
    /// The edge facts of `id`: a combination of [`EDGE_GROW`], [`EDGE_SURE`], [`EDGE_REACH`],
    /// [`EDGE_DELAYED`].
    fn edge(&self, id: StateID) -> u8;
    /// Whether the DFA has a context slot: a walk starting at `i` first reads
    /// [`crate::tables::context_byte`] of the character before `i`, from the start state at the
    /// start of input (docs/word-boundaries.md).
    fn context(&self) -> bool;
    /// Whether the match state `id` reports a delayed match: one whose end is the start of
    /// the last character read (a word boundary at the end of a match is decided by the
    /// character after it), not the position where it is reported.
    fn delayed(&self, id: StateID) -> bool;
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
    /// Whether `region`'s body is JSON with `"` strings, whose closes lenient mode does not
    /// start inside a string (the compiler's `Watch::json_strings`).
    fn json_strings(&self, region: Option<usize>) -> bool;
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
    fn json_strings(&self, region: Option<usize>) -> bool {
        (**self).json_strings(region)
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

/// What the router computes for a region's value: the kind of value and whether the content
/// parser strips the body (from the field's content parser, see `tables::Content::body_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyKind {
    /// The value the router gives at close (see [`RegionValue`]).
    pub value: ValueKind,
    /// `strip` of the content parser (`false` for [`ValueKind::Raw`]).
    pub strip: bool,
}

impl BodyKind {
    /// A structured parser's body: the router gives the raw span.
    pub const RAW: Self = Self {
        value: ValueKind::Raw,
        strip: false,
    };
}

/// The kind of value the no-heap router computes for a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `text`: a span of the output.
    Text,
    /// `int`: Python's `int()`.
    Int,
    /// `float`: Python's `float()`.
    Float,
    /// `bool`: `true` or `1`, case-insensitive.
    Bool,
    /// A structured parser (`json`, `xml-inline`, `kv-lines`, `python-call-list`): the raw
    /// body.
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
        _before: Option<char>,
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
        self.usable()?;
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
        self.usable()?;
        self.finished = true;
        let mut sink = Adapter {
            on_event: &mut on_event,
            _field: PhantomData,
        };
        let result = self.driver.finish(&mut sink).map_err(route_error);
        self.failed = result.err();
        result
    }

    /// The error every call returns once the router failed or finished.
    fn usable(&self) -> Result<(), RouteError> {
        match (self.failed, self.finished) {
            (Some(e), _) => Err(e),
            (None, true) => Err(RouteError::Finished),
            (None, false) => Ok(()),
        }
    }

    /// Lenient mode's JSON-aware closes (off by default: the reference's routing): in a
    /// region whose body is JSON with `"` strings (the compiler marks it:
    /// [`crate::tables::Watch::json_strings`]), a close delimiter inside a JSON string of the
    /// body does not close the region. Costs no allocation: two flags and a position. Set it
    /// before the first [`Self::feed`].
    pub fn set_lenient(&mut self, on: bool) {
        self.driver.core.lenient = on;
        self.driver.core.json_reset();
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
