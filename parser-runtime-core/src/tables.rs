//! Compiled template tables: the plain data the compiler (`template-build`) produces and the
//! engine walks. Nothing here makes a decision about a template; every field is filled in by the
//! compiler (see `template_build::compile`).

use alloc::boxed::Box;
use alloc::string::{String, ToString};
use alloc::vec::Vec;

use regex_automata::dfa::{dense, Automaton};
use regex_automata::util::primitives::StateID;
use regex_automata::util::start;
use serde_json::{Map, Value};

use crate::router::{BodyKind, DelimiterKind, Prefilter, RouteDfa, Routes};

/// A response template compiled to tables: DFAs for every delimiter plus the field table.
///
/// Built by `template_build::compile` (run time) or emitted as static data by code generation.
#[derive(Debug, Clone)]
pub struct CompiledTemplate {
    /// Keys always present in the message (`defaults`), in template order.
    pub defaults: Map<String, Value>,
    /// The start anchor: the prefix is cut after its last match (reference:
    /// `ResponseTemplate.truncate_past_last_anchor`).
    pub start_anchor: StartAnchor,
    /// The fields, in template order (the order of the `fields` object).
    pub fields: Vec<FieldTable>,
    /// Index into `fields` of the implicit field (the one without an open delimiter), if any.
    pub implicit: Option<usize>,
    /// Field indices sorted by field name: the last tie-break between delimiters that match at
    /// the same start with the same length (reference: `ResponseParser._scan` sort key).
    pub name_rank: Vec<u32>,
}

/// The start anchor of a template, matched with Python's `finditer` semantics over the prefix.
#[derive(Debug, Clone)]
pub struct StartAnchor {
    /// The anchor as written (a literal alternation or the pattern), for diagnostics.
    pub source: String,
    /// The anchor as a full regex (look-around allowed), non-overlapping leftmost-first search.
    pub regex: fancy_regex::Regex,
}

impl StartAnchor {
    /// The byte offset just past the last match of the anchor in `prefix` (non-overlapping
    /// matches, left to right), or 0 when the anchor does not occur: the reference then parses
    /// the whole prefix (`truncate_past_last_anchor`).
    pub fn last_end(&self, prefix: &str) -> usize {
        let mut last = 0;
        for m in self.regex.find_iter(prefix) {
            match m {
                Ok(m) => last = m.end(),
                Err(_) => break,
            }
        }
        last
    }
}

/// One field (region) of the template.
#[derive(Debug, Clone)]
pub struct FieldTable {
    /// The field name: the key of the message it fills.
    pub name: String,
    /// The open delimiter; `None` for the implicit field.
    pub open: Option<Delimiter>,
    /// The close delimiter; `None` when the region runs to the end of the output.
    pub close: Option<Delimiter>,
    /// The content parser of the region body.
    pub content: ContentSpec,
    /// `repeats`: every match appends to a list.
    pub repeats: bool,
    /// `join`: repeated matches are concatenated with this separator (requires `repeats`).
    pub join: Option<String>,
    /// `optional` (default true); `false` makes a missing field an error at finalize.
    pub optional: bool,
    /// `transform`: a JSON shape whose whole-string placeholders are replaced.
    pub transform: Option<Value>,
    /// `transform_each`: apply `transform` to every element of a list body.
    pub transform_each: bool,
}

impl FieldTable {
    /// Whether region chunks of this field are `dirty` (structured parsers: json, xml-inline,
    /// kv-lines); reference: `STREAMABLE_PARSERS`.
    pub fn dirty(&self) -> bool {
        self.content.is_structured()
    }
}

/// A delimiter (open or close) compiled to DFAs.
///
/// The pattern is split into top-level branches only when a branch ends in a look-ahead (or
/// Python's `$`, which is the look-ahead `(?=\n?\z)`); otherwise there is one branch. Branches
/// are tried in priority order at one start position, like Python's alternation.
#[derive(Debug, Clone)]
pub struct Delimiter {
    /// The delimiter as written in the template (literal(s) or pattern), for diagnostics.
    pub source: String,
    /// Whether it was given as literal(s) (`open`/`close`) rather than a pattern.
    pub literal: bool,
    /// The branches in priority order.
    pub branches: Vec<Branch>,
    /// Names of the named groups of the pattern (resolved by `Branch::captures`).
    pub group_names: Vec<String>,
    /// For each byte value, whether some branch can start a match with it (prefilter).
    /// A branch that can match the empty string makes every byte a candidate.
    pub first_bytes: Box<[bool; 256]>,
    /// Whether some branch can match the empty string at any position.
    pub can_be_empty: bool,
}

/// One top-level branch of a delimiter: the main DFA and an optional trailing look-ahead.
#[derive(Debug, Clone)]
pub struct Branch {
    /// The main part, anchored, leftmost-first (Python's priority).
    pub dfa: DfaTable,
    /// A trailing look-ahead, checked from the main match end.
    pub lookahead: Option<Lookahead>,
    /// A capture engine for the main part, present when it has named groups; run anchored on
    /// the span the DFA found.
    pub captures: Option<Captures>,
    /// Prefilter facts of the main part (see [`Prefilter`]), when the compiler found some.
    pub prefilter: Option<Prefilter>,
}

/// The capture engine of a branch with named groups: the main part's regex-syntax pattern and
/// the regex built from it (a PikeVM-backed `meta::Regex`; run only on the span the DFA
/// found, once per committed delimiter).
#[derive(Debug, Clone)]
pub struct Captures {
    /// The main part as a regex-syntax pattern (what code generation embeds).
    pub pattern: String,
    /// The regex built from `pattern`.
    pub regex: regex_automata::meta::Regex,
}

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
        Ok(Self {
            pattern: pattern.into(),
            regex,
        })
    }
}

/// A trailing look-ahead `(?=...)` (or `(?!...)` when `negated`).
#[derive(Debug, Clone)]
pub struct Lookahead {
    /// `(?!...)` rather than `(?=...)`.
    pub negated: bool,
    /// The look-ahead body, anchored.
    pub dfa: DfaTable,
}

/// A DFA plus the per-state facts the engine needs at the end of a buffer.
#[derive(Debug, Clone)]
pub struct DfaTable {
    /// Anchored, leftmost-first dense DFA (regex-automata; matches are reported one byte late).
    pub dfa: Dfa,
    /// Edge facts of the states that have any, sorted by state id (see [`EDGE_GROW`],
    /// [`EDGE_SURE`], [`EDGE_REACH`]); states not listed have none.
    pub edge: Vec<(StateID, u8)>,
    /// The anchored start state for each look-behind byte (index 256: start of input), so that
    /// starting a walk is one table read.
    starts: Box<[Option<StateID>; 257]>,
}

/// A dense DFA, either built at run time (owned transition table) or deserialized in place from
/// bytes embedded in the binary by code generation (`dense::DFA::from_bytes`, no copy).
///
/// Both forms have the same state ids, so the edge facts computed by the compiler apply to
/// either.
#[derive(Debug, Clone)]
pub enum Dfa {
    /// Built by `template_build` at run time.
    Owned(dense::DFA<Vec<u32>>),
    /// Deserialized from static bytes (`response_template!`, build.rs).
    Static(dense::DFA<&'static [u32]>),
}

macro_rules! dispatch {
    ($self:ident, $d:ident => $e:expr) => {
        match $self {
            Dfa::Owned($d) => $e,
            Dfa::Static($d) => $e,
        }
    };
}

impl Dfa {
    /// The transition from `id` on `byte`.
    #[inline]
    pub fn next_state(&self, id: StateID, byte: u8) -> StateID {
        dispatch!(self, d => d.next_state(id, byte))
    }

    /// The transition from `id` at the end of input.
    #[inline]
    pub fn next_eoi_state(&self, id: StateID) -> StateID {
        dispatch!(self, d => d.next_eoi_state(id))
    }

    /// Whether `id` is a match state (matches are reported one byte late).
    #[inline]
    pub fn is_match_state(&self, id: StateID) -> bool {
        dispatch!(self, d => d.is_match_state(id))
    }

    /// Whether `id` is the dead state.
    #[inline]
    pub fn is_dead_state(&self, id: StateID) -> bool {
        dispatch!(self, d => d.is_dead_state(id))
    }

    /// Whether `id` is a quit state (never produced: no quit bytes are configured).
    #[inline]
    pub fn is_quit_state(&self, id: StateID) -> bool {
        dispatch!(self, d => d.is_quit_state(id))
    }

    /// The anchored start state for `config`, or `None` when the DFA has none.
    pub fn start_state(&self, config: &start::Config) -> Option<StateID> {
        dispatch!(self, d => d.start_state(config).ok())
    }

    /// The DFA serialized in the target's byte order, without the leading alignment padding
    /// (`dense::DFA::to_bytes_native_endian`): what code generation embeds.
    pub fn to_bytes(&self, big_endian: bool) -> Vec<u8> {
        let (bytes, pad) = match (self, big_endian) {
            (Dfa::Owned(d), false) => d.to_bytes_little_endian(),
            (Dfa::Owned(d), true) => d.to_bytes_big_endian(),
            (Dfa::Static(d), false) => d.to_bytes_little_endian(),
            (Dfa::Static(d), true) => d.to_bytes_big_endian(),
        };
        bytes[pad..].to_vec()
    }
}

pub use crate::router::{EDGE_GROW, EDGE_REACH, EDGE_SURE};

impl DfaTable {
    /// A DFA with its edge facts; computes the start-state table.
    pub fn new(dfa: Dfa, edge: Vec<(StateID, u8)>) -> Self {
        let mut starts = Box::new([None; 257]);
        for (i, slot) in starts.iter_mut().enumerate() {
            let look_behind = u8::try_from(i).ok();
            let config = start::Config::new()
                .anchored(regex_automata::Anchored::Yes)
                .look_behind(look_behind);
            *slot = dfa.start_state(&config);
        }
        Self { dfa, edge, starts }
    }

    /// The anchored start state after `look_behind` (`None`: at the start of the input).
    #[inline]
    pub fn start(&self, look_behind: Option<u8>) -> Option<StateID> {
        self.starts[look_behind.map_or(256, usize::from)]
    }

    /// The edge facts of state `id` (a combination of the `EDGE_*` bits).
    pub fn edge(&self, id: StateID) -> u8 {
        match self.edge.binary_search_by_key(&id, |&(s, _)| s) {
            Ok(i) => self.edge[i].1,
            Err(_) => 0,
        }
    }
}

/// A content parser with its arguments, validated and compiled by the compiler.
///
/// Reference: `transformers/utils/chat_parsing/content_parsers.py` (`CONTENT_PARSERS`).
#[derive(Debug, Clone)]
pub enum ContentSpec {
    /// `text`: the body, stripped of surrounding whitespace unless `strip` is false.
    Text {
        /// `strip` (default true).
        strip: bool,
    },
    /// `int`: Python's `int()` of the (stripped) body.
    Int {
        /// `strip` (default true).
        strip: bool,
    },
    /// `float`: Python's `float()` of the (stripped) body.
    Float {
        /// `strip` (default true).
        strip: bool,
    },
    /// `bool`: true when the (stripped) body lowercased is `true` or `1`.
    Bool {
        /// `strip` (default true).
        strip: bool,
    },
    /// `json`, with the dialect knobs of the reference's `_json`.
    Json {
        /// `unquoted_keys`: quote bare-identifier keys after `{` or `,`.
        unquoted_keys: bool,
        /// `string_delims`: custom string quote pairs `(open, close)`.
        string_delims: Vec<(String, String)>,
        /// `allow_non_json`: fall back to the (stripped) text when parsing fails.
        allow_non_json: bool,
        /// `strip`, used by the `allow_non_json` fallback (default true).
        strip: bool,
    },
    /// `xml-inline`: every match of `tag_pattern` gives a `key` and a `value`.
    XmlInline {
        /// The compiled `tag_pattern`; `None` when the template gives none (the reference
        /// raises when such a region is parsed).
        tag_pattern: Option<fancy_regex::Regex>,
        /// The pattern as written, for messages.
        tag_pattern_source: Option<String>,
        /// `value_parser`: the parser applied to each value.
        value_parser: Option<Box<ContentSpec>>,
        /// `merge_duplicates`: collect repeated keys into a list.
        merge_duplicates: bool,
    },
    /// `kv-lines`: `key<kv_sep>value` lines.
    KvLines {
        /// `line_sep` (default `"\n"`).
        line_sep: String,
        /// `kv_sep` (default `":"`), split at its first occurrence.
        kv_sep: String,
        /// `strip` (default true).
        strip: bool,
        /// `value_parser`: the parser applied to each value.
        value_parser: Option<Box<ContentSpec>>,
    },
}

impl ContentSpec {
    /// Whether the parser is structured (json, xml-inline, kv-lines): its chunks stream with
    /// `dirty: true`.
    pub fn is_structured(&self) -> bool {
        matches!(
            self,
            Self::Json { .. } | Self::XmlInline { .. } | Self::KvLines { .. }
        )
    }
}

impl RouteDfa for DfaTable {
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
        DfaTable::start(self, look_behind)
    }
    fn edge(&self, id: StateID) -> u8 {
        DfaTable::edge(self, id)
    }
}

impl CompiledTemplate {
    #[inline]
    fn delimiter(&self, field: usize, kind: DelimiterKind) -> Option<&Delimiter> {
        let f = self.fields.get(field)?;
        match kind {
            DelimiterKind::Open => f.open.as_ref(),
            DelimiterKind::Close => f.close.as_ref(),
        }
    }

    #[inline]
    fn branch(&self, field: usize, kind: DelimiterKind, branch: usize) -> &Branch {
        // The router asks only for branches this template reported.
        match self
            .delimiter(field, kind)
            .and_then(|d| d.branches.get(branch))
        {
            Some(b) => b,
            None => unreachable!("router asked for a branch the template does not have"),
        }
    }
}

/// The router reads the run-time tables directly.
impl Routes for CompiledTemplate {
    type Dfa = DfaTable;
    fn field_count(&self) -> usize {
        self.fields.len()
    }
    fn implicit(&self) -> Option<usize> {
        self.implicit
    }
    fn name_rank(&self, field: usize) -> u32 {
        self.name_rank.get(field).copied().unwrap_or(u32::MAX)
    }
    fn has_delimiter(&self, field: usize, kind: DelimiterKind) -> bool {
        self.delimiter(field, kind).is_some()
    }
    fn first_set(&self, field: usize, kind: DelimiterKind) -> [u8; 32] {
        let mut set = [0u8; 32];
        if let Some(d) = self.delimiter(field, kind) {
            for (b, _) in d.first_bytes.iter().enumerate().filter(|(_, &on)| on) {
                set[b / 8] |= 1 << (b % 8);
            }
        }
        set
    }
    fn branch_count(&self, field: usize, kind: DelimiterKind) -> usize {
        self.delimiter(field, kind).map_or(0, |d| d.branches.len())
    }
    #[inline]
    fn main_dfa(&self, field: usize, kind: DelimiterKind, branch: usize) -> &DfaTable {
        &self.branch(field, kind, branch).dfa
    }
    #[inline]
    fn lookahead(
        &self,
        field: usize,
        kind: DelimiterKind,
        branch: usize,
    ) -> Option<(bool, &DfaTable)> {
        self.branch(field, kind, branch)
            .lookahead
            .as_ref()
            .map(|l| (l.negated, &l.dfa))
    }
    fn prefilter(&self, field: usize, kind: DelimiterKind, branch: usize) -> Option<Prefilter> {
        self.branch(field, kind, branch).prefilter
    }
    fn body_kind(&self, field: usize) -> BodyKind {
        match self.fields.get(field).map(|f| &f.content) {
            Some(ContentSpec::Text { strip }) => BodyKind::Text { strip: *strip },
            Some(ContentSpec::Int { strip }) => BodyKind::Int { strip: *strip },
            Some(ContentSpec::Float { strip }) => BodyKind::Float { strip: *strip },
            Some(ContentSpec::Bool { strip }) => BodyKind::Bool { strip: *strip },
            _ => BodyKind::Raw,
        }
    }
}
