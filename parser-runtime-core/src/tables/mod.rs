//! The compiled template: one table type, generic over its storage, that the compiler
//! (`template-build`) fills and every other crate reads.
//!
//! Like regex-automata's `dense::DFA<T: AsRef<[u32]>>`, a [`Template`] is one type with one set
//! of methods whether its data is owned ([`Owned`]: built at run time by
//! `template_build::compile`) or `'static` const data written by code generation
//! ([`Static`]: the `response_template!` macro and build scripts). Nothing here makes a decision
//! about a template; every field is filled in by the compiler.
//!
//! The storage decides the representation of strings, lists, JSON values, DFAs and regexes:
//!
//! | item | [`Static`] (no heap, const) | [`Owned`] (feature `alloc`) |
//! |---|---|---|
//! | string | `&'static str` | `String` |
//! | list | `&'static [T]` | `Vec<T>` |
//! | JSON value | [`StaticValue`] | `serde_json::Value` |
//! | DFA | [`DfaBytes`] (serialized, 4-byte aligned) | [`Dfa`] (walkable) |
//! | regex (start anchor, tag pattern, captures) | its pattern | the built regex |
//!
//! The router reads either through [`Routed`], the one implementation of
//! [`crate::router::Routes`]: a template plus the walkable DFAs ([`DfaTable`]) its branches name.

use core::fmt;
use core::ops::Deref;

use regex_automata::dfa::{dense, Automaton};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;

use crate::router::{BodyKind, DelimiterKind, RouteDfa, Routes};

mod content;
pub use content::{CallBrackets, Content};

#[cfg(feature = "alloc")]
use alloc::{borrow::ToOwned, boxed::Box, string::String, string::ToString, vec::Vec};
#[cfg(feature = "alloc")]
use serde_json::{Map, Number, Value};

// ------------------------------------------------------------------------------------------
// Storage.

/// How a [`Template`] holds its data: [`Static`] (`'static` const data, no heap) or [`Owned`]
/// (heap data built at run time). See the module docs for the table of representations.
pub trait Storage: fmt::Debug + Clone + Copy + 'static {
    /// A string.
    type Str: AsRef<str> + fmt::Debug + Clone + 'static;
    /// A list.
    type List<T: fmt::Debug + Clone + 'static>: AsRef<[T]> + fmt::Debug + Clone;
    /// A nested content parser (`value_parser`), held by reference.
    type Nested: Deref<Target = Content<Self>> + fmt::Debug + Clone;
    /// A JSON value (defaults, transforms).
    type Value: fmt::Debug + Clone;
    /// A JSON object (defaults), keys in template order.
    type Object: fmt::Debug + Clone;
    /// A DFA as the template holds it.
    type Dfa: fmt::Debug + Clone;
    /// A DFA the router can walk.
    type Walk: RouteDfa + fmt::Debug;
    /// A `fancy_regex` pattern (start anchor, `tag_pattern`: look-around allowed).
    type Fancy: fmt::Debug + Clone;
    /// A capture regex of a branch with named groups.
    type Captures: fmt::Debug + Clone;

    /// The walkable form of `dfa`: the DFA itself ([`Owned`]) or its entry in `walk`, the
    /// template's DFAs deserialized in order ([`Static`]).
    fn walk<'a>(dfa: &'a Self::Dfa, walk: &'a [Self::Walk]) -> &'a Self::Walk;
}

/// `'static` const data, as code generation writes it: usable without a heap.
#[derive(Debug, Clone, Copy)]
pub struct Static;

impl Storage for Static {
    type Str = &'static str;
    type List<T: fmt::Debug + Clone + 'static> = &'static [T];
    type Nested = &'static Content<Static>;
    type Value = StaticValue;
    type Object = &'static [(&'static str, StaticValue)];
    type Dfa = DfaBytes;
    type Walk = EmbeddedDfa;
    type Fancy = &'static str;
    type Captures = &'static str;

    #[inline]
    fn walk<'a>(dfa: &'a DfaBytes, walk: &'a [EmbeddedDfa]) -> &'a EmbeddedDfa {
        // `RouteCell` / `LazyTemplate` checked that every index is in the list.
        &walk[dfa.index]
    }
}

/// Heap data built at run time (feature `alloc`).
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, Copy)]
pub struct Owned;

#[cfg(feature = "alloc")]
impl Storage for Owned {
    type Str = String;
    type List<T: fmt::Debug + Clone + 'static> = Vec<T>;
    type Nested = Box<Content<Owned>>;
    type Value = Value;
    type Object = Map<String, Value>;
    type Dfa = Dfa;
    type Walk = Dfa;
    type Fancy = fancy_regex::Regex;
    type Captures = Captures;

    #[inline]
    fn walk<'a>(dfa: &'a Dfa, _: &'a [Dfa]) -> &'a Dfa {
        dfa
    }
}

// ------------------------------------------------------------------------------------------
// The tables.

/// A response template compiled to tables: the field table plus DFAs for every delimiter.
///
/// Built by `template_build::compile` ([`CompiledTemplate`], run time) or written as const data
/// by code generation (`Template<Static>`, inside a [`crate::statics::StaticTemplate`]).
#[derive(Debug, Clone)]
pub struct Template<S: Storage> {
    /// Keys always present in the message (`defaults`), in template order.
    pub defaults: S::Object,
    /// The start anchor: the prefix is cut after its last match (reference:
    /// `ResponseTemplate.truncate_past_last_anchor`).
    pub start_anchor: StartAnchor<S>,
    /// The fields, in template order (the order of the `fields` object).
    pub fields: S::List<Field<S>>,
    /// Index into `fields` of the implicit field (the one without an open delimiter), if any.
    pub implicit: Option<usize>,
    /// Each field's rank in name order: the last tie-break between delimiters that match at
    /// the same start with the same length (reference: `ResponseParser._scan` sort key).
    pub name_rank: S::List<u32>,
    /// The watch lists, decided by the compiler: index 0 outside any explicit region (and
    /// inside the implicit one), index `1 + f` inside field `f` (see [`Template::watch`]).
    pub watch: S::List<Watch<S>>,
}

impl<S: Storage> Template<S> {
    /// The watch list while `region` is open (`None`: no region, or before the first byte of
    /// the implicit one). Reference: `ResponseParser._watchlist`. The compiler writes one
    /// list per field plus the outside list; `None` only for tables without watch lists.
    pub fn watch(&self, region: Option<usize>) -> Option<&Watch<S>> {
        let lists = self.watch.as_ref();
        lists.get(region.map_or(0, |f| f + 1)).or(lists.first())
    }
}

/// What a field holds, decided by the compiler (`template_build::roles`) and read by the engine
/// and `constrain`: nothing after the compiler compares field names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The field named `tool_calls`: tool calls, typed by the request's tools and checked by
    /// strict tools. `family` says how a call is written, when it is one of the shapes
    /// constrained generation writes.
    ToolCalls {
        /// The tool-call family, if recognised.
        family: Option<ToolFamily>,
    },
    /// The reasoning region: the first of `reasoning_content`, `thinking`, `reasoning` with an
    /// open and a close delimiter and `text` content.
    Reasoning,
    /// The field named `content`.
    Content,
    /// Any other field.
    Other,
}

/// How a template writes one tool call (a region of the `tool_calls` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolFamily {
    /// `{"name": N, "arguments": {...}}` inside the delimiters (JSON content, transform
    /// `{"type": "function", "function": "{content}"}`, no `name` group).
    JsonCall,
    /// The name in the open delimiter's `name` group (the close has none: it would replace
    /// the open's), JSON arguments in the body.
    NamedJson,
    /// The name in the open delimiter, `<parameter=K>\nV\n</parameter>` tags in the body
    /// (Qwen3-Coder).
    XmlParameters,
    /// Several JSON call objects in one region, read by `json-call-list` (transform
    /// `function: {"name": "{name}", "arguments": "{arguments}"}` on each): Granite 3,
    /// Llama 3.1, Mistral before v11.
    JsonCallList,
    /// A JSON array of call objects read by `json` with `transform_each`, the transform's
    /// `function.name` and `function.arguments` each one top-level key of a call (Command A
    /// and R7B's `tool_name` / `parameters`, Phi-4-mini's `name` / `arguments`).
    JsonList,
    /// A list of Python keyword-argument calls, `[get_weather(city="Paris"), f()]`, read by
    /// `python-call-list` (transform `function: {"name": "{name}", "arguments":
    /// "{arguments}"}` on each): LFM2.
    PythonCallList,
    /// The name in the open delimiter (`<|tool_call_start|>[NAME(` or `, NAME(`), the call's
    /// keyword arguments `k=v` read by `xml-inline` tags whose values a `json` value parser
    /// reads again with `'` string delimiters and `allow_non_json` (LFM2.5).
    PythonKeywords,
}

/// One watched delimiter: the `kind` delimiter of `field`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watched {
    /// The field.
    pub field: usize,
    /// Open or close.
    pub kind: DelimiterKind,
}

/// The delimiters watched while the output is in one region, in priority order, with their
/// prefilter (see docs/internals.md, "Prefilter").
#[derive(Debug, Clone)]
pub struct Watch<S: Storage> {
    /// The watched delimiters: every explicit open then the implicit field's close outside a
    /// region; the region's own close inside an explicit one.
    pub delimiters: S::List<Watched>,
    /// The bytes with which a watched delimiter can start.
    pub first: ByteSet,
    /// The jump plan, when every watched branch has a prefilter and no `first` byte of one is
    /// a `lead` byte of another.
    pub jump: Option<JumpPlan>,
    /// Whether the region's body is JSON whose strings use `"` (a `json` content parser
    /// without `string_delims` or `allow_non_json`): in lenient mode the router starts no
    /// close delimiter inside a JSON string of the body (README, "Lenient mode"). False
    /// outside explicit regions.
    pub json_strings: bool,
}

/// A prefilter jump over a watch list: every match is a run of `lead` bytes then a `first`
/// byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JumpPlan {
    /// Union of the branches' lead bytes.
    pub lead: ByteSet,
    /// Union of the branches' first bytes.
    pub first: ByteSet,
    /// The `first` bytes when there are at most three (searched with memchr); else none.
    pub needles: [u8; 3],
    /// How many of `needles` are used (0: scan with the byte set).
    pub needle_count: u8,
}

/// A template compiled at run time (feature `alloc`).
#[cfg(feature = "alloc")]
pub type CompiledTemplate = Template<Owned>;
/// A field of a run-time template.
#[cfg(feature = "alloc")]
pub type FieldTable = Field<Owned>;
/// A content parser of a run-time template.
#[cfg(feature = "alloc")]
pub type ContentSpec = Content<Owned>;

/// The start anchor of a template, matched with Python's `finditer` semantics over the prefix.
#[derive(Debug, Clone)]
pub struct StartAnchor<S: Storage> {
    /// The anchor as written (a literal alternation or the pattern), for diagnostics.
    pub source: S::Str,
    /// The anchor as a full regex (look-around allowed), non-overlapping leftmost-first search.
    pub regex: S::Fancy,
}

/// Why the last start anchor in a prefix could not be found.
#[cfg(feature = "alloc")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnchorError {
    /// The search ran past its time budget (`ParserOptions::start_anchor_budget`): a
    /// `start_anchor_pattern` that backtracks (look-around, nested quantifiers) can take time
    /// quadratic or worse in the prefix's length.
    Budget {
        /// The budget, in milliseconds.
        millis: u64,
    },
    /// The regex engine gave up on one search (fancy-regex's backtracking limit).
    Regex(String),
}

#[cfg(feature = "alloc")]
impl core::fmt::Display for AnchorError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::Budget { millis } => write!(
                f,
                "finding the last start anchor in the prefix took longer than its budget of \
                 {millis} ms (ParserOptions::start_anchor_budget, rtpl --anchor-budget-ms)"
            ),
            Self::Regex(e) => write!(f, "finding the last start anchor in the prefix: {e}"),
        }
    }
}

#[cfg(feature = "alloc")]
impl StartAnchor<Owned> {
    /// The byte offset just past the last match of the anchor in `prefix` (non-overlapping
    /// matches, left to right), or 0 when the anchor does not occur: the reference then parses
    /// the whole prefix (`truncate_past_last_anchor`). No time budget; see
    /// [`Self::last_end_within`].
    ///
    /// Errors: [`AnchorError::Regex`] when the regex engine gives up on a search.
    pub fn last_end(&self, prefix: &str) -> Result<usize, AnchorError> {
        self.last_end_within(prefix, None)
    }

    /// [`Self::last_end`], stopping with [`AnchorError::Budget`] once the search has taken
    /// longer than `budget` (checked after each match; one search is bounded by fancy-regex's
    /// backtracking limit, or is linear for a pattern without look-around). Literal anchors
    /// and patterns without look-around or backreferences run on the regex crate's automata
    /// and take milliseconds on megabytes; a backtracking pattern can take time quadratic in
    /// the prefix (`a(?=.*z)`: each `a` scans to the end), which the budget bounds. Without
    /// the `std` feature there is no clock and `budget` is ignored.
    pub fn last_end_within(
        &self,
        prefix: &str,
        budget: Option<core::time::Duration>,
    ) -> Result<usize, AnchorError> {
        #[cfg(feature = "std")]
        let started = budget.map(|b| (std::time::Instant::now(), b));
        #[cfg(not(feature = "std"))]
        let _ = budget;
        let mut last = 0;
        for m in self.regex.find_iter(prefix) {
            last = m.map_err(|e| AnchorError::Regex(e.to_string()))?.end();
            #[cfg(feature = "std")]
            if let Some((at, b)) = started {
                if at.elapsed() > b {
                    return Err(AnchorError::Budget {
                        millis: b.as_millis().try_into().unwrap_or(u64::MAX),
                    });
                }
            }
        }
        Ok(last)
    }
}

/// One field (region) of the template. `D` is the delimiter type: compiled [`Delimiter`]s in
/// the tables, the template's own spelling in `template_build::model`.
#[derive(Debug, Clone)]
pub struct Field<S: Storage, D = Delimiter<S>> {
    /// The field name: the key of the message it fills.
    pub name: S::Str,
    /// What the field holds (decided by the compiler).
    pub role: Role,
    /// The open delimiter; `None` for the implicit field.
    pub open: Option<D>,
    /// The close delimiter; `None` when the region runs to the end of the output.
    pub close: Option<D>,
    /// The content parser of the region body.
    pub content: Content<S>,
    /// `repeats`: every match appends to a list.
    pub repeats: bool,
    /// `join`: repeated matches are concatenated with this separator (requires `repeats`).
    pub join: Option<S::Str>,
    /// `optional` (default true); `false` makes a missing field an error at finalize.
    pub optional: bool,
    /// `transform`: a JSON shape whose whole-string placeholders are replaced.
    pub transform: Option<S::Value>,
    /// `transform_each`: apply `transform` to every element of a list body.
    pub transform_each: bool,
}

impl<S: Storage, D> Field<S, D> {
    /// Whether region chunks of this field are `dirty` (structured parsers: json, xml-inline,
    /// kv-lines, python-call-list); reference: `STREAMABLE_PARSERS`.
    pub fn dirty(&self) -> bool {
        self.content.is_structured()
    }

    /// The field with its delimiters mapped by `f` (the compiler's model to tables step).
    pub fn map_delimiters<E, X>(
        self,
        mut f: impl FnMut(D, DelimiterKind) -> Result<E, X>,
    ) -> Result<Field<S, E>, X> {
        let open = self.open.map(|d| f(d, DelimiterKind::Open)).transpose()?;
        let close = self.close.map(|d| f(d, DelimiterKind::Close)).transpose()?;
        Ok(Field {
            name: self.name,
            role: self.role,
            open,
            close,
            content: self.content,
            repeats: self.repeats,
            join: self.join,
            optional: self.optional,
            transform: self.transform,
            transform_each: self.transform_each,
        })
    }
}

/// A set of bytes (256 bits: bit `b % 8` of byte `b / 8`): first bytes of a delimiter, the
/// lead and first bytes of a prefilter.
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct ByteSet(pub [u8; 32]);

impl ByteSet {
    /// No byte.
    pub const EMPTY: Self = Self([0; 32]);
    /// Every byte.
    pub const FULL: Self = Self([0xFF; 32]);

    /// Whether `b` is in the set.
    #[inline]
    pub const fn contains(&self, b: u8) -> bool {
        self.0[(b / 8) as usize] & (1 << (b % 8)) != 0
    }

    /// Adds `b`.
    #[inline]
    pub fn insert(&mut self, b: u8) {
        self.0[usize::from(b / 8)] |= 1 << (b % 8);
    }

    /// Adds every byte of `other`.
    pub fn union(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a |= b;
        }
    }

    /// Whether the two sets share a byte.
    pub fn intersects(&self, other: &Self) -> bool {
        self.0.iter().zip(other.0).any(|(a, b)| a & b != 0)
    }

    /// Whether the set has no byte.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 32]
    }

    /// The bytes in the set, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..=255u8).filter(|&b| self.contains(b))
    }
}

impl FromIterator<u8> for ByteSet {
    fn from_iter<I: IntoIterator<Item = u8>>(iter: I) -> Self {
        let mut set = Self::EMPTY;
        for b in iter {
            set.insert(b);
        }
        set
    }
}

impl fmt::Debug for ByteSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

/// Prefilter facts of one delimiter branch, computed by the compiler from the branch's main
/// pattern: every match is zero or more bytes of `lead` followed by a byte of `first`.
///
/// Example: `\s*<tool_call>` has `lead` = the bytes of whitespace (all non-ASCII bytes, as an
/// over-approximation of multi-byte spaces) and `first` = `{<}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefilter {
    /// Bytes of the leading run.
    pub lead: ByteSet,
    /// Bytes that can follow the leading run.
    pub first: ByteSet,
}

/// A delimiter (open or close) compiled to DFAs.
///
/// The pattern is split into top-level branches only when a branch ends in a look-ahead (or
/// Python's `$`, which is the look-ahead `(?=\n?\z)`); otherwise there is one branch. Branches
/// are tried in priority order at one start position, like Python's alternation.
#[derive(Debug, Clone)]
pub struct Delimiter<S: Storage> {
    /// The delimiter as written in the template (literal(s) or pattern), for diagnostics.
    pub source: S::Str,
    /// Whether it was given as literal(s) (`open`/`close`) rather than a pattern.
    pub literal: bool,
    /// The branches in priority order.
    pub branches: S::List<Branch<S>>,
    /// Names of the named groups of the pattern (resolved by the branches' captures).
    pub group_names: S::List<S::Str>,
    /// The bytes with which some branch can start a match (prefilter); every byte when a
    /// branch can match the empty string.
    pub first_bytes: ByteSet,
    /// Whether some branch can match the empty string at any position.
    pub can_be_empty: bool,
}

/// One top-level branch of a delimiter: the main DFA and an optional trailing look-ahead.
#[derive(Debug, Clone)]
pub struct Branch<S: Storage> {
    /// The main part, anchored, leftmost-first (Python's priority).
    pub dfa: S::Dfa,
    /// A trailing look-ahead, checked from the main match end.
    pub lookahead: Option<Lookahead<S>>,
    /// The capture regex of the main part, present when it has named groups; run anchored on
    /// the span the DFA found.
    pub captures: Option<S::Captures>,
    /// Prefilter facts of the main part (see [`Prefilter`]), when the compiler found some.
    pub prefilter: Option<Prefilter>,
}

/// A trailing look-ahead `(?=...)` (or `(?!...)` when `negated`).
#[derive(Debug, Clone)]
pub struct Lookahead<S: Storage> {
    /// `(?!...)` rather than `(?=...)`.
    pub negated: bool,
    /// The look-ahead body, anchored.
    pub dfa: S::Dfa,
}

/// A JSON value as const data (defaults and transforms of [`Static`] templates).
#[derive(Debug, Clone, Copy)]
pub enum StaticValue {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A negative integer.
    I64(i64),
    /// A non-negative integer.
    U64(u64),
    /// A float (finite; JSON has no other).
    F64(f64),
    /// A string.
    Str(&'static str),
    /// An array.
    Array(&'static [StaticValue]),
    /// An object, keys in template order.
    Object(&'static [(&'static str, StaticValue)]),
}

#[cfg(feature = "alloc")]
impl StaticValue {
    /// The `serde_json` value.
    pub fn to_value(&self) -> Value {
        match *self {
            StaticValue::Null => Value::Null,
            StaticValue::Bool(b) => Value::Bool(b),
            StaticValue::I64(i) => Value::Number(i.into()),
            StaticValue::U64(u) => Value::Number(u.into()),
            StaticValue::F64(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
            StaticValue::Str(s) => Value::String(s.to_owned()),
            StaticValue::Array(items) => Value::Array(items.iter().map(Self::to_value).collect()),
            StaticValue::Object(entries) => Value::Object(static_object(entries)),
        }
    }
}

/// A const object as a `serde_json` map.
#[cfg(feature = "alloc")]
pub fn static_object(entries: &[(&str, StaticValue)]) -> Map<String, Value> {
    entries
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.to_value()))
        .collect()
}

// ------------------------------------------------------------------------------------------
// DFAs.

/// What a DFA with a context slot reads at the start of the text (see [`context_byte`]).
pub const CONTEXT_START: u8 = 0xFF;
/// What a DFA with a context slot reads for a non-ASCII word character (see [`context_byte`]).
pub const CONTEXT_WORD: u8 = 0xFE;
/// What a DFA with a context slot reads for another non-ASCII character (see
/// [`context_byte`]).
pub const CONTEXT_OTHER: u8 = 0xFD;

/// The byte a DFA with a context slot ([`DfaTable::context`]) reads first, for the character
/// before a walk's start (`None`: the walk starts at the start of the text): an ASCII character
/// as itself, another one as its class by the Python `regex` module's `\w`
/// ([`crate::pychar::is_word_char`]: [`CONTEXT_WORD`] or [`CONTEXT_OTHER`]), and
/// [`CONTEXT_START`] for none. None of the three is an ASCII byte, so the slot reads one byte
/// whatever the character; see docs/word-boundaries.md.
pub fn context_byte(prev: Option<char>) -> u8 {
    match prev {
        None => CONTEXT_START,
        Some(c) if c.is_ascii() => c as u8,
        Some(c) if crate::pychar::is_word_char(c) => CONTEXT_WORD,
        Some(_) => CONTEXT_OTHER,
    }
}

/// A DFA as code generation embeds it: `dense::DFA` bytes in the target's byte order, 4-byte
/// aligned, and its edge facts; made walkable by [`DfaTable::from_bytes`].
#[derive(Debug, Clone, Copy)]
pub struct DfaBytes {
    /// Position of this DFA in the template's DFA list (fields in order, open before close,
    /// branches in order, main part before look-ahead).
    pub index: usize,
    /// `dense::DFA` bytes in the target's byte order, 4-byte aligned.
    pub bytes: &'static [u8],
    /// Edge facts `(state id, flags)`, sorted by state id.
    pub edge: &'static [(u32, u8)],
    /// Whether the DFA has a context slot (see [`DfaTable::context`]).
    pub context: bool,
}

/// A walkable DFA plus the per-state facts the router needs at the end of a buffer, generic
/// over its storage like regex-automata's `dense::DFA<T>`: owned (`Vec`) when built at run
/// time, borrowed from embedded bytes ([`EmbeddedDfa`]) otherwise. Both forms have the same
/// state ids, so the compiler's edge facts apply to either.
#[derive(Clone)]
pub struct DfaTable<T, E> {
    /// Anchored, leftmost-first dense DFA (regex-automata; matches are reported one byte late).
    dfa: dense::DFA<T>,
    /// Edge facts of the states that have any, sorted by state id (see
    /// [`crate::router::EDGE_GROW`], [`crate::router::EDGE_SURE`],
    /// [`crate::router::EDGE_REACH`]); states not listed have none.
    edge: E,
    /// The anchored start state for each look-behind byte (index 256: start of input;
    /// `u32::MAX`: none), so that starting a walk is one table read.
    starts: [u32; 257],
    /// Whether a walk first reads the character before its start (see [`DfaTable::context`]).
    context: bool,
}

/// A DFA built at run time.
#[cfg(feature = "alloc")]
pub type OwnedDfa = DfaTable<Vec<u32>, Vec<(u32, u8)>>;

/// A DFA deserialized in place from embedded bytes (no copy of its transition table).
pub type EmbeddedDfa = DfaTable<&'static [u32], &'static [(u32, u8)]>;

impl<T: AsRef<[u32]>, E: AsRef<[(u32, u8)]>> fmt::Debug for DfaTable<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DfaTable")
            .field("bytes", &self.dfa.memory_usage())
            .field("edge", &self.edge.as_ref())
            .finish()
    }
}

impl<T: AsRef<[u32]>, E: AsRef<[(u32, u8)]>> DfaTable<T, E> {
    /// A DFA with its edge facts (sorted by state id) and whether it has a context slot (see
    /// [`Self::context`]); computes the start-state table.
    pub fn new(dfa: dense::DFA<T>, edge: E, context: bool) -> Self {
        let mut starts = [u32::MAX; 257];
        for (i, slot) in starts.iter_mut().enumerate() {
            let config = start::Config::new()
                .anchored(regex_automata::Anchored::Yes)
                .look_behind(u8::try_from(i).ok());
            if let Ok(id) = dfa.start_state(&config) {
                *slot = id.as_u32();
            }
        }
        Self {
            dfa,
            edge,
            starts,
            context,
        }
    }

    /// Whether the DFA has a context slot: a walk starting at position `i` first steps it from
    /// the start state (at the start of input) over [`context_byte`] of the character before
    /// `i`, so that word boundaries see that character (docs/word-boundaries.md). Its edge
    /// facts, first bytes and prefilter describe the states after the slot.
    pub fn context(&self) -> bool {
        self.context
    }

    /// The DFA.
    pub fn dfa(&self) -> &dense::DFA<T> {
        &self.dfa
    }

    /// The edge facts `(state id, flags)`, sorted by state id.
    pub fn edges(&self) -> &[(u32, u8)] {
        self.edge.as_ref()
    }

    /// The DFA serialized in the given byte order, without the leading alignment padding:
    /// what code generation embeds.
    #[cfg(feature = "alloc")]
    pub fn to_bytes(&self, big_endian: bool) -> Vec<u8> {
        let (bytes, pad) = if big_endian {
            self.dfa.to_bytes_big_endian()
        } else {
            self.dfa.to_bytes_little_endian()
        };
        bytes[pad..].to_vec()
    }
}

impl EmbeddedDfa {
    /// Deserializes embedded DFA bytes in place (validating them) and computes the start
    /// states.
    ///
    /// Errors: [`TableReason::Dfa`] when the bytes are not a DFA of this regex-automata;
    /// [`TableReason::StateId`] when an edge fact names no state.
    pub fn from_bytes(d: &DfaBytes) -> Result<Self, TableReason> {
        let (dfa, _) =
            dense::DFA::from_bytes(d.bytes).map_err(|e| TableReason::Dfa(DfaMessage::of(&e)))?;
        for &(id, _) in d.edge {
            StateID::new(id as usize).map_err(|_| TableReason::StateId)?;
        }
        Ok(Self::new(dfa, d.edge, d.context))
    }
}

impl<T: AsRef<[u32]>, E: AsRef<[(u32, u8)]>> RouteDfa for DfaTable<T, E> {
    #[inline]
    fn next_state(&self, id: StateID, byte: u8) -> StateID {
        self.dfa.next_state(id, byte)
    }
    #[inline]
    fn next_eoi_state(&self, id: StateID) -> StateID {
        self.dfa.next_eoi_state(id)
    }
    #[inline]
    fn is_match_state(&self, id: StateID) -> bool {
        self.dfa.is_match_state(id)
    }
    #[inline]
    fn is_dead_state(&self, id: StateID) -> bool {
        self.dfa.is_dead_state(id) || self.dfa.is_quit_state(id)
    }
    #[inline]
    fn start(&self, look_behind: Option<u8>) -> Option<StateID> {
        let raw = self.starts[look_behind.map_or(256, usize::from)];
        // Every stored id came from `StateID::as_u32`.
        StateID::new(raw as usize).ok().filter(|_| raw != u32::MAX)
    }
    fn edge(&self, id: StateID) -> u8 {
        let edge = self.edge.as_ref();
        match edge.binary_search_by_key(&id.as_u32(), |&(s, _)| s) {
            Ok(i) => edge[i].1,
            Err(_) => 0,
        }
    }
    #[inline]
    fn context(&self) -> bool {
        self.context
    }
    #[inline]
    fn delayed(&self, id: StateID) -> bool {
        self.dfa.pattern_len() > 1 && self.dfa.match_pattern(id, 0).as_usize() == 1
    }
}

/// The DFA of a run-time template: built by the compiler, or embedded bytes deserialized in
/// place (a [`Static`] template made owned on first use, see
/// [`crate::statics::LazyTemplate`]).
#[cfg(feature = "alloc")]
#[derive(Debug, Clone)]
pub enum Dfa {
    /// Built by `template_build` at run time.
    Owned(OwnedDfa),
    /// Deserialized from static bytes (`response_template!`, build.rs).
    Embedded(EmbeddedDfa),
}

#[cfg(feature = "alloc")]
macro_rules! dispatch {
    ($self:ident, $d:ident => $e:expr) => {
        match $self {
            Dfa::Owned($d) => $e,
            Dfa::Embedded($d) => $e,
        }
    };
}

#[cfg(feature = "alloc")]
impl Dfa {
    /// The edge facts `(state id, flags)`, sorted by state id.
    pub fn edges(&self) -> &[(u32, u8)] {
        dispatch!(self, d => d.edges())
    }

    /// Whether the DFA has a context slot (see [`DfaTable::context`]).
    pub fn context(&self) -> bool {
        dispatch!(self, d => d.context)
    }

    /// The DFA serialized in the given byte order, without the leading alignment padding.
    pub fn to_bytes(&self, big_endian: bool) -> Vec<u8> {
        dispatch!(self, d => d.to_bytes(big_endian))
    }

    /// The anchored start state for `config`, or `None` when the DFA has none.
    pub fn start_state(&self, config: &start::Config) -> Option<StateID> {
        dispatch!(self, d => d.dfa.start_state(config).ok())
    }
}

#[cfg(feature = "alloc")]
impl RouteDfa for Dfa {
    #[inline]
    fn next_state(&self, id: StateID, byte: u8) -> StateID {
        dispatch!(self, d => d.next_state(id, byte))
    }
    #[inline]
    fn next_eoi_state(&self, id: StateID) -> StateID {
        dispatch!(self, d => d.next_eoi_state(id))
    }
    #[inline]
    fn is_match_state(&self, id: StateID) -> bool {
        dispatch!(self, d => d.is_match_state(id))
    }
    #[inline]
    fn is_dead_state(&self, id: StateID) -> bool {
        dispatch!(self, d => RouteDfa::is_dead_state(d, id))
    }
    #[inline]
    fn start(&self, look_behind: Option<u8>) -> Option<StateID> {
        dispatch!(self, d => d.start(look_behind))
    }
    fn edge(&self, id: StateID) -> u8 {
        dispatch!(self, d => d.edge(id))
    }
    #[inline]
    fn context(&self) -> bool {
        Dfa::context(self)
    }
    #[inline]
    fn delayed(&self, id: StateID) -> bool {
        dispatch!(self, d => d.delayed(id))
    }
}

/// The capture regex of a branch with named groups: the main part's regex-syntax pattern and
/// the regex built from it (a PikeVM-backed `meta::Regex`; run only on the span the DFA
/// found, once per committed delimiter).
#[cfg(feature = "alloc")]
#[derive(Debug, Clone)]
pub struct Captures {
    /// The main part as a regex-syntax pattern (what code generation embeds).
    pub pattern: String,
    /// The regex built from `pattern`.
    pub regex: regex_automata::meta::Regex,
    /// Whether `pattern` has a Unicode word assertion: the regex then needs the characters
    /// around the span (see `engine`'s capture resolution).
    pub word: bool,
}

#[cfg(feature = "alloc")]
impl Captures {
    /// Builds the capture regex for `pattern` (Unicode, UTF-8, `.` matches `\n`, NFA size
    /// limited to `nfa_size_limit` bytes). Errors: the builder's message.
    pub fn build(pattern: &str, nfa_size_limit: usize) -> Result<Self, String> {
        let regex = regex_automata::meta::Regex::builder()
            .syntax(
                regex_automata::util::syntax::Config::new()
                    .unicode(true)
                    .utf8(true)
                    .dot_matches_new_line(true),
            )
            .configure(regex_automata::meta::Config::new().nfa_size_limit(Some(nfa_size_limit)))
            .build(pattern)
            .map_err(|e| e.to_string())?;
        let word = regex_automata::util::syntax::parse(pattern)
            .is_ok_and(|hir| hir.properties().look_set().contains_word_unicode());
        Ok(Self {
            pattern: pattern.into(),
            regex,
            word,
        })
    }
}

// ------------------------------------------------------------------------------------------
// The router's view.

/// A template and its walkable DFAs: what the router reads (the one implementation of
/// [`Routes`]). For an [`Owned`] template the DFAs are in the template (`walk` is empty); for a
/// [`Static`] one they are the embedded DFAs deserialized in order. Cheap to copy (or, for an
/// `Arc`, to clone).
///
/// `H` is how the template is held: borrowed (`&'a Template<S>`, the default) or through any
/// other pointer to it, such as `Arc<CompiledTemplate>` for a router state that owns its
/// template (what `OwnedResponseParser` keeps, feature `alloc`). Every walk goes through the
/// same code.
#[derive(Debug)]
pub struct Routed<'a, S: Storage, H = &'a Template<S>> {
    template: H,
    walk: &'a [S::Walk],
}

impl<S: Storage, H: Clone> Clone for Routed<'_, S, H> {
    fn clone(&self) -> Self {
        Self {
            template: self.template.clone(),
            walk: self.walk,
        }
    }
}

impl<S: Storage, H: Copy> Copy for Routed<'_, S, H> {}

impl<'a, S: Storage, H: Deref<Target = Template<S>>> Routed<'a, S, H> {
    /// The view of `template` with its walkable DFAs (see the type docs).
    pub fn new(template: H, walk: &'a [S::Walk]) -> Self {
        Self { template, walk }
    }

    #[inline]
    fn delimiter(&self, field: usize, kind: DelimiterKind) -> Option<&Delimiter<S>> {
        let f = self.template.fields.as_ref().get(field)?;
        match kind {
            DelimiterKind::Open => f.open.as_ref(),
            DelimiterKind::Close => f.close.as_ref(),
        }
    }

    #[inline]
    fn branch(&self, field: usize, kind: DelimiterKind, branch: usize) -> &Branch<S> {
        // The router asks only for branches this template reported.
        match self
            .delimiter(field, kind)
            .and_then(|d| d.branches.as_ref().get(branch))
        {
            Some(b) => b,
            None => unreachable!("router asked for a branch the template does not have"),
        }
    }
}

impl<'a, S: Storage> Routed<'a, S> {
    /// The template.
    pub fn template(&self) -> &'a Template<S> {
        self.template
    }
}

#[cfg(feature = "alloc")]
impl Template<Owned> {
    /// The router's view of this template.
    pub fn routes(&self) -> Routed<'_, Owned> {
        Routed::new(self, &[])
    }
}

impl<S: Storage, H: Deref<Target = Template<S>>> Routes for Routed<'_, S, H> {
    type Dfa = S::Walk;
    fn watch(&self, region: Option<usize>) -> (&[Watched], ByteSet, Option<JumpPlan>) {
        match self.template.watch(region) {
            Some(w) => (w.delimiters.as_ref(), w.first, w.jump),
            None => (&[], ByteSet::EMPTY, None),
        }
    }
    fn json_strings(&self, region: Option<usize>) -> bool {
        self.template.watch(region).is_some_and(|w| w.json_strings)
    }
    fn field_count(&self) -> usize {
        self.template.fields.as_ref().len()
    }
    fn implicit(&self) -> Option<usize> {
        self.template.implicit
    }
    fn name_rank(&self, field: usize) -> u32 {
        self.template
            .name_rank
            .as_ref()
            .get(field)
            .copied()
            .unwrap_or(u32::MAX)
    }
    fn first_set(&self, field: usize, kind: DelimiterKind) -> ByteSet {
        match self.delimiter(field, kind) {
            Some(d) if d.can_be_empty => ByteSet::FULL,
            Some(d) => d.first_bytes,
            None => ByteSet::EMPTY,
        }
    }
    fn branch_count(&self, field: usize, kind: DelimiterKind) -> usize {
        self.delimiter(field, kind)
            .map_or(0, |d| d.branches.as_ref().len())
    }
    #[inline]
    fn main_dfa(&self, field: usize, kind: DelimiterKind, branch: usize) -> &S::Walk {
        S::walk(&self.branch(field, kind, branch).dfa, self.walk)
    }
    #[inline]
    fn lookahead(
        &self,
        field: usize,
        kind: DelimiterKind,
        branch: usize,
    ) -> Option<(bool, &S::Walk)> {
        let walk = self.walk;
        self.branch(field, kind, branch)
            .lookahead
            .as_ref()
            .map(|l| (l.negated, S::walk(&l.dfa, walk)))
    }
    fn body_kind(&self, field: usize) -> BodyKind {
        self.template
            .fields
            .as_ref()
            .get(field)
            .map_or(BodyKind::RAW, |f| f.content.body_kind())
    }
}

// ------------------------------------------------------------------------------------------
// Errors of embedded tables.

use regex_automata::util::wire::DeserializeError;

/// Embedded tables that cannot be used: a DFA that does not deserialize (e.g. generated for
/// another regex-automata version) or a regex that does not build. Never expected from
/// tables written by the generator of the same release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableError {
    /// The template's name.
    pub template: &'static str,
    /// Where in the tables.
    pub location: TableLocation,
    /// What went wrong.
    pub reason: TableReason,
}

/// Where in the embedded tables a [`TableError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableLocation {
    /// The start anchor.
    StartAnchor,
    /// A branch of a delimiter: `fields.NAME.open branch N`.
    Branch {
        /// The field name.
        field: &'static str,
        /// `open` or `close`.
        kind: DelimiterKind,
        /// The branch.
        branch: usize,
    },
    /// A field's content parser.
    Content {
        /// The field name.
        field: &'static str,
    },
    /// The DFA list as a whole (its length disagrees with the generated code).
    Dfas,
    /// The field list as a whole.
    Fields,
}

impl fmt::Display for TableLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::StartAnchor => f.write_str("start_anchor"),
            Self::Branch {
                field,
                kind,
                branch,
            } => {
                let kind = match kind {
                    DelimiterKind::Open => "open",
                    DelimiterKind::Close => "close",
                };
                write!(f, "fields.{field}.{kind} branch {branch}")
            }
            Self::Content { field } => write!(f, "fields.{field}.content"),
            Self::Dfas => f.write_str("DFA list"),
            Self::Fields => f.write_str("fields"),
        }
    }
}

/// The message of regex-automata's `DeserializeError` (kept only with `alloc`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DfaMessage(#[cfg(feature = "alloc")] pub String);

impl DfaMessage {
    fn of(e: &DeserializeError) -> Self {
        #[cfg(feature = "alloc")]
        return Self(e.to_string());
        #[cfg(not(feature = "alloc"))]
        {
            let _ = e;
            Self()
        }
    }
}

/// Why embedded tables are unusable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableReason {
    /// `dense::DFA::from_bytes` rejected the bytes.
    Dfa(DfaMessage),
    /// An edge-fact state id is out of range.
    StateId,
    /// The DFA list has a different length than the template's DFAs.
    DfaCount,
    /// The router cannot take the template (e.g. too many delimiters watched at once).
    Route(crate::router::RouteError),
    /// A regex (captures, start anchor, tag pattern) does not build.
    #[cfg(feature = "alloc")]
    Regex(String),
}

impl fmt::Display for TableReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(feature = "alloc")]
            Self::Dfa(e) => write!(f, "the DFA does not deserialize: {}", e.0),
            #[cfg(not(feature = "alloc"))]
            Self::Dfa(_) => f.write_str("the DFA does not deserialize"),
            Self::StateId => f.write_str("state id out of range"),
            Self::DfaCount => f.write_str("DFA count differs from the template's"),
            Self::Route(e) => write!(f, "{e}"),
            #[cfg(feature = "alloc")]
            Self::Regex(e) => f.write_str(e),
        }
    }
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "embedded tables of template {:?} ({}) are unusable: {}",
            self.template, self.location, self.reason
        )
    }
}

impl core::error::Error for TableError {}
