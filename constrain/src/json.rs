//! JSON Schema -> regular language: the JSON texts a schema admits, as regex-syntax HIR.
//!
//! Two modes ([`JsonOptions::mode`]): the strict structured-outputs subset, described here
//! (the default, the contract's reading), and general JSON Schema ([`SchemaMode::General`],
//! described in [`crate::general`]), whose languages may also refer to automata ([`Slots`],
//! spliced in by [`language_table`]).
//!
//! The language is a subset of the schema's valid instances, chosen so that generation can
//! follow it byte by byte:
//!
//! * objects write their declared properties in declaration order; required ones always,
//!   optional ones may be left out; no undeclared property is ever written (a property that
//!   is required but not declared is written with its `additionalProperties` schema);
//! * strings: any JSON string (every escape, surrogate pairs only as pairs); `enum` and
//!   `const` values in serde_json's compact encoding; `pattern` (ECMA-262, found anywhere in
//!   the string, as JSON Schema says) written with serde_json's escapes; formats `date`,
//!   `time`, `date-time` (RFC 3339 with upper-case `T`/`Z`, seconds 00-59, real month lengths
//!   and leap years) and `uuid` (lower-case hex);
//! * integers `-?(0|[1-9][0-9]{0,17})` (they fit in `i64`); numbers with at most 15 digits
//!   before and after the point and a two-digit exponent (finite in `f64`);
//! * `anyOf` as alternation; `$ref`/`$defs` followed, recursion unrolled
//!   [`JsonOptions::max_recursion`] times;
//! * a schema without a type (`{}`, `true`) admits any JSON value nested at most
//!   [`JsonOptions::any_depth`] levels;
//! * between JSON tokens at most [`JsonOptions::whitespace`] bytes of JSON whitespace
//!   (default 0: compact), so a model can never run on in whitespace.
//!
//! At the recursion limit, a recursive optional property, array item or `anyOf` branch is
//! not generated (the rest stays; an object whose required property is cut is itself not
//! generated there); when nothing is left (the recursion is needed) compiling fails with a
//! [`CompileError`] naming the required property: no required property is ever dropped.

use crate::dfa::Budget;
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Repetition};
use serde_json::{Map, Value};

use structured_outputs::schema::{check_subset, escape_token, Strictness, ANNOTATIONS};
use structured_outputs::types::{ref_pointer, type_keyword, JsonType};

/// How JSON is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JsonOptions {
    /// Most JSON whitespace bytes between two JSON tokens (default 0).
    pub whitespace: usize,
    /// How many times one `$ref` may be entered on one path (default 3).
    pub max_recursion: usize,
    /// Nesting levels of containers inside a value without a type (default 5: free-form
    /// `dict` arguments of function calls nest that deep; each level about doubles the
    /// shared reader, 4,843 states at 5).
    pub any_depth: usize,
    /// Most regex-syntax nodes one schema's language may have, checked before pieces are
    /// duplicated ([`Budget::SchemaNodes`]; default [`MAX_HIR_NODES`]). In general mode it
    /// also bounds the schema places one compile collects, at half of it (200,000 at the
    /// default; a `$ref` unrolled along many paths meets its places again on each).
    pub max_nodes: usize,
    /// Which JSON Schema is read: the strict subset (default) or general JSON Schema
    /// ([`SchemaMode`]).
    pub mode: SchemaMode,
    /// General mode: the most characters or items a `maxLength` or `maxItems` (or
    /// `maxContains`) is generated up to (default 256). A larger maximum is generated as
    /// this many (fewer instances, never an invalid one); a larger minimum is an error
    /// ([`Budget::SchemaNodes`]): each counted character or item is a copy in the automaton.
    pub max_count: u32,
    /// How values are spelled: JSON (default) or the Python literals the `python-call-list`
    /// content parser reads ([`Literals`]; strict mode only).
    pub literals: Literals,
}

/// How a strict-mode language spells its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Literals {
    /// JSON.
    #[default]
    Json,
    /// Python literals that the `python-call-list` content parser (and transformers 5.24's
    /// `_python_call_list`, which it follows) reads back into the same JSON value: JSON
    /// itself, which that parser reads (`true`, `null`, double-quoted strings with JSON's
    /// escapes, dicts with string keys), plus `True`/`False`/`None` and single-quoted strings
    /// (`'...'`, a `'` inside escaped as `\'`; `enum`/`const` strings too) where a string has
    /// no `pattern` or `format` (those, and dict keys, stay double-quoted). Integers have at most 15 digits (the parser refuses integers past
    /// 2^53 - 1); an `enum`/`const` value holding a larger integer is left out. Values without
    /// a type are refused: an untyped object could repeat a key, which the parser refuses.
    Python,
}

impl Default for JsonOptions {
    fn default() -> Self {
        Self {
            whitespace: 0,
            max_recursion: 3,
            any_depth: 5,
            max_nodes: MAX_HIR_NODES,
            mode: SchemaMode::Strict,
            max_count: 256,
            literals: Literals::Json,
        }
    }
}

/// Which JSON Schema a schema language reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaMode {
    /// The structured-outputs subset, checked by its gate (the contract the parser checks
    /// messages with): see the module documentation.
    #[default]
    Strict,
    /// General JSON Schema (draft 2020-12 and the draft 4/6/7 spellings), no gate; see
    /// `crate::general` for what is generated and what is refused.
    General {
        /// Objects without `additionalProperties` admit only the properties some schema
        /// declares (as strict tools close them); otherwise they are open.
        closed: bool,
        /// The draft read when the root has no `$schema` naming one.
        draft: Draft,
    },
}

impl SchemaMode {
    /// General mode, open objects, draft 2020-12 unless the schema says otherwise.
    pub fn general() -> Self {
        Self::General {
            closed: false,
            draft: Draft::Draft2020,
        }
    }
}

/// A JSON Schema draft, where general mode reads them differently: draft 4's `id`, boolean
/// `exclusiveMinimum`/`exclusiveMaximum` and integers by their written form; before 2019-09,
/// `$ref` replaces its whole schema and plain-name fragments in `$id` are anchors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Draft {
    /// Draft 4 (`http://json-schema.org/draft-04/schema#`).
    Draft4,
    /// Draft 6.
    Draft6,
    /// Draft 7.
    Draft7,
    /// Draft 2019-09.
    Draft2019,
    /// Draft 2020-12.
    #[default]
    Draft2020,
}

impl std::fmt::Display for Draft {
    /// The draft's name: `draft 4`, ..., `draft 2020-12`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Draft4 => "draft 4",
            Self::Draft6 => "draft 6",
            Self::Draft7 => "draft 7",
            Self::Draft2019 => "draft 2019-09",
            Self::Draft2020 => "draft 2020-12",
        })
    }
}

impl Draft {
    /// The draft a `$schema` URI names, if it names one: the meta-schema URIs exactly once
    /// normalized as Python's `jsonschema.validators.validator_for` looks them up
    /// ([`normalized_schema_uri`]: `HTTP://json-schema.org/draft-07/schema?#` is
    /// `http://json-schema.org/draft-07/schema`). Any other URI
    /// (`https://json-schema.org/draft-07/schema`, the scheme changed) names no draft:
    /// Python then reads the latest, and so does general mode unless told otherwise. Draft 3
    /// ([`is_draft3_uri`]) is no draft of this enum.
    pub fn from_schema_uri(uri: &str) -> Option<Self> {
        Some(match normalized_schema_uri(uri).as_str() {
            "http://json-schema.org/draft-04/schema" => Self::Draft4,
            "http://json-schema.org/draft-06/schema" => Self::Draft6,
            "http://json-schema.org/draft-07/schema" => Self::Draft7,
            "https://json-schema.org/draft/2019-09/schema" => Self::Draft2019,
            "https://json-schema.org/draft/2020-12/schema" => Self::Draft2020,
            _ => return None,
        })
    }
}

/// `uri` as Python's `urllib.parse.urlsplit(uri).geturl()` writes it, which is how
/// `jsonschema` keys its meta-schemas: leading C0 controls and spaces stripped, tabs and line
/// breaks removed anywhere, the scheme lowercased, an empty query (`?`) or fragment (`#`)
/// dropped (Python 3.11's `urllib`; cold review).
pub fn normalized_schema_uri(uri: &str) -> String {
    let uri: String = uri
        .trim_start_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\r' | '\n'))
        .collect();
    let (scheme, rest) = match uri.split_once(':') {
        Some((scheme, rest))
            if scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')) =>
        {
            (Some(scheme.to_ascii_lowercase()), rest)
        }
        _ => (None, uri.as_str()),
    };
    let (rest, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut out = String::with_capacity(uri.len());
    if let Some(scheme) = scheme {
        out.push_str(&scheme);
        out.push(':');
    }
    out.push_str(path);
    for (mark, part) in [('?', query), ('#', fragment)] {
        if !part.is_empty() {
            out.push(mark);
            out.push_str(part);
        }
    }
    out
}

/// Whether `uri` names draft 3's meta-schema (once normalized, [`normalized_schema_uri`]):
/// general mode refuses it (its `required: true`, `extends`, `disallow` and `divisibleBy` are
/// not read).
pub fn is_draft3_uri(uri: &str) -> bool {
    normalized_schema_uri(uri) == "http://json-schema.org/draft-03/schema"
}

/// `text` as an error message shows it: control characters (C0, DEL, C1), the line and
/// paragraph separators and the bidirectional controls (U+202A-U+202E, U+2066-U+2069), which
/// a terminal would act on or hide, written as `\u{XXXX}` (hexadecimal, at least four
/// digits); everything else as itself. Names in schemas are untrusted, so the `Display` of
/// [`CompileError`] and [`crate::template::ConstrainError`] show pointers and reasons this
/// way; their fields keep the exact text.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        c.is_control()
            || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A schema the generator cannot turn into a language. Its `Display` is `pointer: reason`,
/// each [`printable`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {}", printable(.pointer), printable(.reason))]
pub struct CompileError {
    /// JSON pointer into the schema (`""` for the root).
    pub pointer: String,
    /// Why.
    pub reason: String,
    /// The budget it passed, when a budget ended it ([`Budget::SchemaNodes`]).
    pub budget: Option<Budget>,
}

/// The byte that stands for "any JSON value" (a schema without a type) in a schema's HIR:
/// `0xFF` never occurs in UTF-8, so no JSON text holds it. [`schema_table`] replaces it with
/// the bounded-depth JSON reader of [`any_value_table`], built once and spliced in, instead of
/// the regex of every value nested [`JsonOptions::any_depth`] levels (which a DFA without
/// minimization duplicates at each level: 7,000 to 42,000 states, 40 to 300 ms).
pub const UNTYPED: u8 = 0xFF;

pub(crate) fn untyped() -> Hir {
    Hir::literal(&[UNTYPED][..])
}

/// The table of a schema's HIR (from [`SchemaLanguage::compile`], possibly inside a larger
/// HIR): [`crate::dfa::Table::from_hir`], then every [`UNTYPED`] placeholder replaced by a value of
/// [`any_value_table`] (`options.any_depth` levels, `options.whitespace`) with
/// [`crate::dfa::Table::splice`]. The any-value tables are cached per `(any_depth, whitespace)`.
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`, or regex-automata's errors.
pub fn schema_table(
    hir: &Hir,
    options: JsonOptions,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    language_table(hir, &Slots::default(), options, limits)
}

/// The byte that starts a slot placeholder in a schema language's HIR: [`SLOT`] and three
/// index bytes in `0x80..=0xBF` stand for a word of the slot's table ([`Slots`]). `0xFE`
/// never occurs in UTF-8.
pub const SLOT: u8 = 0xFE;

/// Whether `hir` may hold a placeholder ([`UNTYPED`], [`SLOT`]): a literal or a byte class
/// with `0xFE` or `0xFF`. A HIR without one means the same table in every schema and under
/// every [`JsonOptions`], so its table may be kept across compiles.
pub(crate) fn holds_placeholder(hir: &Hir) -> bool {
    placeholder_node(hir, true)
}

/// Whether a byte class in `hir` takes a placeholder's first byte ([`SLOT`] or
/// [`UNTYPED`]): its language would then read placeholders its literals do not name.
pub(crate) fn class_reaches_placeholders(hir: &Hir) -> bool {
    placeholder_node(hir, false)
}

/// Whether a node of `hir` takes a placeholder's first byte: a byte class, or with
/// `literals` a literal too.
fn placeholder_node(hir: &Hir, literals: bool) -> bool {
    use regex_syntax::hir::Class;
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Literal(l) if literals && l.0.iter().any(|&b| b >= SLOT) => return true,
            HirKind::Class(Class::Bytes(c)) if c.ranges().iter().any(|r| r.end() >= SLOT) => {
                return true
            }
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs.iter()),
            _ => {}
        }
    }
    false
}

/// Most slots one language may refer to (three index bytes of 64 values each).
pub const MAX_SLOTS: usize = 1 << 18;

/// Tables a schema language's HIR refers to through [`SLOT`] placeholders: languages built
/// as automata (intersections, differences, number and key languages) and spliced in when
/// the HIR becomes a table ([`language_table`]).
#[derive(Debug, Clone, Default)]
pub struct Slots {
    tables: Vec<std::sync::Arc<crate::dfa::Table>>,
}

impl Slots {
    /// How many tables.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// Adds a table; the placeholder that stands for it, or `None` past [`MAX_SLOTS`].
    pub(crate) fn push(&mut self, table: std::sync::Arc<crate::dfa::Table>) -> Option<Hir> {
        let index = self.tables.len();
        if index >= MAX_SLOTS {
            return None;
        }
        self.tables.push(table);
        Some(Hir::literal(slot_bytes(index).to_vec()))
    }

    /// Takes `other`'s tables over and returns its HIR with its placeholders renumbered to
    /// refer to them here (to put several languages in one HIR).
    ///
    /// Errors: past [`MAX_SLOTS`] tables in all.
    pub fn adopt(&mut self, other: SchemaHir) -> Result<Hir, CompileError> {
        let offset = self.tables.len();
        if offset + other.slots.len() > MAX_SLOTS {
            return Err(CompileError {
                budget: Some(Budget::SchemaNodes),
                ..err(
                    "",
                    format!("more than {MAX_SLOTS} automata in one language"),
                )
            });
        }
        self.tables.extend(other.slots.tables);
        Ok(if offset == 0 {
            other.hir
        } else {
            renumber(&other.hir, offset)
        })
    }
}

/// The slot index of a placeholder's three index bytes (those after [`SLOT`];
/// [`slot_bytes`]).
pub(crate) fn slot_index(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take(3)
        .fold(0, |index, &b| index << 6 | (b & 0x3F) as usize)
}

fn slot_bytes(index: usize) -> [u8; 4] {
    [
        SLOT,
        0x80 | (index >> 12 & 0x3F) as u8,
        0x80 | (index >> 6 & 0x3F) as u8,
        0x80 | (index & 0x3F) as u8,
    ]
}

/// `hir` with every slot index raised by `offset`.
fn renumber(hir: &Hir, offset: usize) -> Hir {
    match hir.kind() {
        HirKind::Literal(l) if l.0.contains(&SLOT) => {
            let mut out = Vec::with_capacity(l.0.len());
            let mut i = 0;
            while i < l.0.len() {
                if l.0[i] == SLOT && i + 3 < l.0.len() {
                    let index = slot_index(&l.0[i + 1..]);
                    out.extend(slot_bytes(index + offset));
                    i += 4;
                } else {
                    out.push(l.0[i]);
                    i += 1;
                }
            }
            Hir::literal(out)
        }
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            sub: Box::new(renumber(&r.sub, offset)),
            ..r.clone()
        }),
        HirKind::Capture(c) => renumber(&c.sub, offset),
        HirKind::Concat(hs) => cat(hs.iter().map(|h| renumber(h, offset)).collect()),
        HirKind::Alternation(hs) => alt(hs.iter().map(|h| renumber(h, offset)).collect()),
        _ => hir.clone(),
    }
}

/// A schema's language: HIR whose placeholders stand for untyped values ([`UNTYPED`]) and
/// for the tables of `slots` ([`SLOT`]).
#[derive(Debug, Clone)]
pub struct SchemaHir {
    /// The language, with placeholders.
    pub hir: Hir,
    /// The tables its slot placeholders stand for.
    pub slots: Slots,
}

impl SchemaHir {
    /// The language's table ([`language_table`]).
    ///
    /// Errors: as [`language_table`].
    pub fn table(
        &self,
        options: JsonOptions,
        limits: &crate::dfa::Limits,
    ) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
        language_table(&self.hir, &self.slots, options, limits)
    }

    /// [`Self::table`] built from the HIR in every case (also when it is one placeholder).
    ///
    /// Errors: as [`language_table`].
    pub fn shared_table(
        &self,
        options: JsonOptions,
        limits: &crate::dfa::Limits,
    ) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
        let table = crate::dfa::Table::from_hir(&self.hir, limits)?;
        splice_slots_with(table, &self.slots, options, limits, true)
    }
}

/// Values of at least this many states are shared rather than copied by [`language_table`]
/// ([`crate::dfa::Table::splice_shared`]). Measured on the corpus runner's corpora: at 16
/// rather than 64 (booleans, short enums and key tables read in place too) compile p50 and
/// p99 drop by a tenth on most of them (functions' p99 0.90 -> 0.79 ms) and masks cost the
/// same; at 4 nothing changes further.
pub const SHARE_FROM: usize = 16;

/// The table of a HIR holding schema languages: [`crate::dfa::Table::from_hir`], then each
/// [`UNTYPED`] placeholder replaced by an untyped value (the reader of [`any_value_table`],
/// or its general-mode form) and each [`SLOT`] placeholder by a word of its table in
/// `slots`, spliced in like [`crate::dfa::Table::splice`] does one value. Values of at least
/// [`SHARE_FROM`] states are read in place from one shared table rather than copied at each
/// place ([`crate::dfa::Table::splice_shared`]; intersections and differences keep them
/// shared where both sides read them in step).
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`, or regex-automata's errors.
pub fn language_table(
    hir: &Hir,
    slots: &Slots,
    options: JsonOptions,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    // A language that is one placeholder is its value's table.
    if let HirKind::Literal(l) = hir.kind() {
        if *l.0 == [UNTYPED] {
            let general = matches!(options.mode, SchemaMode::General { .. });
            let kind = ReaderKind::Value { general };
            let reader = cached_reader(kind, options.any_depth, options.whitespace, limits)?;
            return Ok(reader.as_ref().clone());
        }
        if l.0.len() == 4 && l.0[0] == SLOT {
            let index = slot_index(&l.0[1..]);
            if let Some(t) = slots.tables.get(index) {
                limits.check(t.budget_states())?;
                return Ok(t.as_ref().clone());
            }
        }
    }
    let table = crate::dfa::Table::from_hir(hir, limits)?;
    splice_slots(table, slots, options, limits)
}

/// [`language_table`] for a table already built from such a HIR (its placeholder words
/// are still transitions): each placeholder replaced by its value.
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`.
pub(crate) fn splice_slots(
    table: crate::dfa::Table,
    slots: &Slots,
    options: JsonOptions,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    splice_slots_with(table, slots, options, limits, true)
}

/// [`splice_slots`]; `share`: large values shared ([`SchemaHir::shared_table`]).
fn splice_slots_with(
    table: crate::dfa::Table,
    slots: &Slots,
    options: JsonOptions,
    limits: &crate::dfa::Limits,
    share: bool,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    use crate::dfa::DEAD;
    let states = 1..table.len() as u32;
    let untyped = states.clone().any(|s| table.next(s, UNTYPED) != DEAD);
    let slotted = !slots.is_empty() && states.into_iter().any(|s| table.next(s, SLOT) != DEAD);
    if !untyped && !slotted {
        return Ok(table);
    }
    let general = matches!(options.mode, SchemaMode::General { .. });
    // General mode: equivalent continuations merge before each gets its copy of a value.
    let table = if general && table.len() <= MINIMIZE_UP_TO {
        table.minimize()
    } else {
        table
    };
    let reader = if untyped {
        cached_reader(
            ReaderKind::Value { general },
            options.any_depth,
            options.whitespace,
            limits,
        )?
    } else {
        std::sync::Arc::new(crate::dfa::Table::literal(b""))
    };
    let mut values: Vec<&crate::dfa::Table> = vec![&reader];
    values.extend(slots.tables.iter().map(|t| t.as_ref()));
    let shared: Vec<std::sync::Arc<crate::dfa::Table>> = if share {
        std::iter::once(reader.clone())
            .chain(slots.tables.iter().cloned())
            .collect()
    } else {
        Vec::new()
    };
    if share {
        return table.splice_shared(&[UNTYPED, SLOT], placeholders, &shared, SHARE_FROM, limits);
    }
    table.splice_many(&[UNTYPED, SLOT], placeholders, &values, limits)
}

/// The placeholders `t` reads from state `s` and where each goes on: `(0, state)` for an
/// untyped value ([`UNTYPED`]), `(index + 1, state)` for slot `index`'s table.
fn placeholders(t: &crate::dfa::Table, s: u32) -> Vec<(usize, u32)> {
    use crate::dfa::DEAD;
    let mut out = Vec::new();
    let q = t.next(s, UNTYPED);
    if q != DEAD {
        out.push((0, q));
    }
    let t1 = t.next(s, SLOT);
    if t1 == DEAD {
        return out;
    }
    for b1 in 0x80..=0xBFu8 {
        let t2 = t.next(t1, b1);
        if t2 == DEAD {
            continue;
        }
        for b2 in 0x80..=0xBFu8 {
            let t3 = t.next(t2, b2);
            if t3 == DEAD {
                continue;
            }
            for b3 in 0x80..=0xBFu8 {
                let q = t.next(t3, b3);
                if q != DEAD {
                    let index = slot_index(&[b1, b2, b3]);
                    out.push((index + 1, q));
                }
            }
        }
    }
    out
}

/// Whether splicing `table`'s placeholders ([`splice_slots`]) would read a value side by
/// side with something else: a state where a value starts on a byte that the state also
/// reads otherwise, or that another value there starts on (an untyped value's first bytes:
/// any value's). Such a value is copied from that byte on, with what goes on beside it.
/// Only where one of the values starting there has at least [`CLASH_FROM`] states; `true`
/// where the untyped values' reader cannot be built.
pub(crate) fn values_clash(
    table: &crate::dfa::Table,
    slots: &Slots,
    options: JsonOptions,
    limits: &crate::dfa::Limits,
) -> bool {
    use crate::dfa::{DEAD, START};
    let general = matches!(options.mode, SchemaMode::General { .. });
    let kind = ReaderKind::Value { general };
    let Ok(reader) = cached_reader(kind, options.any_depth, options.whitespace, limits) else {
        return true;
    };
    let value = |k: usize| match k {
        0 => Some(reader.as_ref()),
        k => slots.tables.get(k - 1).map(|v| v.as_ref()),
    };
    let first = |k: usize, b: u8| value(k).is_some_and(|v| v.next(START, b) != DEAD);
    // Values of fewer states are cheap to copy side by side (an object's keys no declared
    // name takes, read next to the declared ones): a clash needs a large one.
    let large = |k: usize| value(k).is_some_and(|v| v.len() >= CLASH_FROM);
    // Two values with the same rows (a slot holding the untyped values' reader) go on
    // alike: read side by side, they are one.
    let differ = |j: usize, k: usize| match (value(j), value(k)) {
        (Some(a), Some(b)) => !std::ptr::eq(a, b) && !a.same_rows(b),
        _ => true,
    };
    (1..table.len() as u32).any(|s| {
        let values = placeholders(table, s);
        if values.is_empty() {
            return false;
        }
        (0..=255u8).filter(|&b| b != UNTYPED && b != SLOT).any(|b| {
            let starting: Vec<usize> = values
                .iter()
                .filter(|&&(k, _)| first(k, b))
                .map(|&(k, _)| k)
                .collect();
            starting.iter().any(|&k| large(k))
                && (table.next(s, b) != DEAD
                    || starting
                        .iter()
                        .any(|&j| starting.iter().any(|&k| j != k && differ(j, k))))
        })
    })
}

/// The fewest states of a value [`values_clash`] counts.
const CLASH_FROM: usize = 1_024;

/// General mode minimizes spliced tables up to this many states.
const MINIMIZE_UP_TO: usize = 100_000;

/// [`any_object_table`] (JSON mode), built once per `(levels, whitespace)` and cloned from a
/// cache after that (at most 8 tables are kept; past that, built anew).
///
/// Errors: as [`any_object_table`], or a cached table past `limits.max_states`.
pub fn json_mode_table(
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    cached_reader(ReaderKind::Object, levels, whitespace, limits).map(|t| t.as_ref().clone())
}

/// Which reader table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReaderKind {
    /// [`any_object_table`].
    Object,
    /// [`any_value_table`], or its general-mode form ([`general_value_table`]).
    Value { general: bool },
    /// [`typed_value_table`].
    Typed(u8),
}

/// The reader tables, cached per `(kind, levels, whitespace)`.
fn cached_reader(
    kind: ReaderKind,
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<std::sync::Arc<crate::dfa::Table>, crate::dfa::BuildError> {
    use std::sync::{Arc, Mutex, OnceLock};
    type Key = (ReaderKind, usize, usize);
    type Cache = Mutex<Vec<(Key, Arc<crate::dfa::Table>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
    let key = (kind, levels, whitespace);
    let found = cache
        .lock()
        .ok()
        .and_then(|c| c.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone()));
    let table = match found {
        Some(t) => t,
        None => {
            // Built within the default budgets at least (a reader's size depends on its
            // depth alone); the caller's state limit is checked below, on a cached reader
            // too, so that a compile's outcome does not depend on what is cached.
            let within = limits.at_least_default();
            let limits = &within;
            let built = Arc::new(match kind {
                ReaderKind::Object => any_object_table(levels, whitespace, limits)?,
                ReaderKind::Value { general: false } => {
                    any_value_table(levels, whitespace, limits)?
                }
                ReaderKind::Value { general: true } => {
                    general_value_table(levels, whitespace, limits)?
                }
                ReaderKind::Typed(types) if types & (TYPE_OBJECT | TYPE_ARRAY) != 0 => {
                    // Containers: the cached general reader, its first byte restricted
                    // (cheaper than determinizing the containers again).
                    let kind = ReaderKind::Value { general: true };
                    let any = cached_reader(kind, levels, whitespace, limits)?;
                    any.restrict_first(|b| types & type_of_first(b) != 0, limits)?
                        .minimize()
                }
                ReaderKind::Typed(types) => {
                    typed_reader_table(types, levels, whitespace, limits)?.minimize()
                }
            });
            if let Ok(mut c) = cache.lock() {
                if c.len() < READER_CACHE && !c.iter().any(|(k, _)| *k == key) {
                    c.push((key, built.clone()));
                }
            }
            built
        }
    };
    limits.check(table.len())?;
    Ok(table)
}

/// Most reader tables kept by [`cached_reader`].
const READER_CACHE: usize = 80;

pub(crate) fn err(pointer: &str, reason: impl Into<String>) -> CompileError {
    CompileError {
        pointer: pointer.to_string(),
        reason: reason.into(),
        budget: None,
    }
}

/// Parses one of this module's fixed patterns.
/// The HIR of one of this module's fixed patterns, parsed once per process and cloned after
/// that (strings, numbers and formats appear in most schemas, many times).
pub(crate) fn re(pattern: &str) -> Hir {
    use std::sync::{Mutex, OnceLock};
    static PARSED: OnceLock<Mutex<Vec<(String, Hir)>>> = OnceLock::new();
    let parsed = PARSED.get_or_init(|| Mutex::new(Vec::new()));
    if let Some(h) = parsed
        .lock()
        .ok()
        .and_then(|p| p.iter().find(|(k, _)| k == pattern).map(|(_, h)| h.clone()))
    {
        return h;
    }
    let h = match regex_syntax::Parser::new().parse(pattern) {
        Ok(h) => h,
        // The fixed patterns are tested; an error here is a bug in this file.
        Err(e) => unreachable!("fixed pattern {pattern:?}: {e}"),
    };
    if let Ok(mut p) = parsed.lock() {
        // Only fixed patterns come here (a few dozen at most).
        if p.len() < 64 {
            p.push((pattern.to_string(), h.clone()));
        }
    }
    h
}

pub(crate) fn lit(s: &str) -> Hir {
    Hir::literal(s.as_bytes())
}

pub(crate) fn cat(parts: Vec<Hir>) -> Hir {
    Hir::concat(parts)
}

pub(crate) fn alt(parts: Vec<Hir>) -> Hir {
    if parts.is_empty() {
        Hir::fail()
    } else {
        Hir::alternation(parts)
    }
}

pub(crate) fn repeat(sub: Hir, min: u32, max: Option<u32>) -> Hir {
    Hir::repetition(Repetition {
        min,
        max,
        greedy: true,
        sub: Box::new(sub),
    })
}

pub(crate) fn opt(sub: Hir) -> Hir {
    repeat(sub, 0, Some(1))
}

/// serde_json's escape of a character that must be escaped in a JSON string, if it must.
pub(crate) fn canonical_escape(c: char) -> Option<String> {
    Some(match c {
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\u{8}' => "\\b".into(),
        '\u{c}' => "\\f".into(),
        c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
        _ => return None,
    })
}

/// One character of a JSON string as written: an unescaped character or any escape.
fn string_char() -> Hir {
    re(concat!(
        r#"[^"\\\x00-\x1f]"#,
        r#"|\\["\\/bfnrt]"#,
        r"|\\u(?:[0-9a-cA-CefEF][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2})",
        r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}",
    ))
}

/// Any JSON string.
pub fn any_string() -> Hir {
    cat(vec![lit("\""), repeat(string_char(), 0, None), lit("\"")])
}

const INTEGER: &str = r"-?(?:0|[1-9][0-9]{0,17})";
/// [`Literals::Python`]'s integers: at most 15 digits, within the parser's 2^53 - 1.
const PYTHON_INTEGER: &str = r"-?(?:0|[1-9][0-9]{0,14})";
/// The largest integer magnitude [`Literals::Python`] writes in an `enum`/`const` (the
/// parser's bound).
const PYTHON_MAX_INTEGER: u64 = (1 << 53) - 1;

/// One character of a single-quoted Python string ([`Literals::Python`]): an unescaped
/// character (a raw `"` included) or an escape the parser reads as JSON does, `\'` too.
fn python_string_char() -> Hir {
    re(concat!(
        r#"[^'\\\x00-\x1f]"#,
        r#"|\\['"\\/bfnrt]"#,
        r"|\\u(?:[0-9a-cA-CefEF][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2})",
        r"|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}",
    ))
}

/// `s` as a single-quoted Python string ([`Literals::Python`]): `'` and `\\` escaped, control
/// characters escaped as serde_json escapes them, everything else raw.
fn python_single_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push('"'),
            c if (c as u32) < 0x20 => {
                // serde_json's escape of the control character, without its quotes.
                let json = Value::String(c.to_string()).to_string();
                out.push_str(&json[1..json.len() - 1]);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Whether every integer in `v` is within [`PYTHON_MAX_INTEGER`] (floats are read as floats).
fn python_integers(v: &Value) -> bool {
    match v {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u <= PYTHON_MAX_INTEGER,
            (None, Some(i)) => i.unsigned_abs() <= PYTHON_MAX_INTEGER,
            _ => true,
        },
        Value::Array(items) => items.iter().all(python_integers),
        Value::Object(members) => members.values().all(python_integers),
        _ => true,
    }
}

const NUMBER: &str = r"-?(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,15})?(?:[eE][+-]?[0-9]{1,2})?";
pub(crate) const DATE: &str = concat!(
    r"(?:[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])",
    r"|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))",
    r"|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)",
);
pub(crate) const TIME: &str = concat!(
    r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,9})?",
    r"(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
);
const UUID: &str = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

/// The string body (between the quotes) of a format.
fn format_body(format: &str) -> Option<Hir> {
    Some(match format {
        "date" => re(DATE),
        "time" => re(TIME),
        "date-time" => re(&format!("{DATE}T{TIME}")),
        "uuid" => re(UUID),
        _ => return None,
    })
}

/// A pattern's language over written JSON string text: what it matches in the decoded
/// string, with each character written as serde_json writes it.
pub(crate) fn encode_pattern(h: &Hir) -> Result<Hir, String> {
    Ok(match h.kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => {
            let text = std::str::from_utf8(&l.0).map_err(|_| "a byte-level literal")?;
            let mut out = String::new();
            for c in text.chars() {
                match canonical_escape(c) {
                    Some(e) => out.push_str(&e),
                    None => out.push(c),
                }
            }
            lit(&out)
        }
        HirKind::Class(Class::Unicode(class)) => encode_class(class),
        HirKind::Class(Class::Bytes(_)) => return Err("a byte-level class".into()),
        HirKind::Look(_) => return Err("an anchor or a word boundary".into()),
        HirKind::Repetition(r) => Hir::repetition(Repetition {
            min: r.min,
            max: r.max,
            greedy: r.greedy,
            sub: Box::new(encode_pattern(&r.sub)?),
        }),
        HirKind::Capture(c) => encode_pattern(&c.sub)?,
        HirKind::Concat(hs) => cat(hs.iter().map(encode_pattern).collect::<Result<_, _>>()?),
        HirKind::Alternation(hs) => alt(hs.iter().map(encode_pattern).collect::<Result<_, _>>()?),
    })
}

/// A character class over written JSON string text: the characters written as themselves,
/// plus the escapes of those that serde_json escapes.
fn encode_class(class: &ClassUnicode) -> Hir {
    let mut plain = class.clone();
    let mut escaped = ClassUnicode::new([
        ClassUnicodeRange::new('\0', '\u{1f}'),
        ClassUnicodeRange::new('"', '"'),
        ClassUnicodeRange::new('\\', '\\'),
    ]);
    plain.difference(&escaped);
    escaped.intersect(class);
    let mut parts = Vec::new();
    if !plain.ranges().is_empty() {
        parts.push(Hir::class(Class::Unicode(plain)));
    }
    for range in escaped.ranges() {
        for c in range.start()..=range.end() {
            if let Some(e) = canonical_escape(c) {
                parts.push(lit(&e));
            }
        }
    }
    alt(parts)
}

/// The default of [`JsonOptions::max_nodes`]: the most regex-syntax nodes one schema's
/// language may have (checked before pieces are duplicated, so a schema cannot exhaust memory
/// before the automaton limits apply).
pub const MAX_HIR_NODES: usize = 400_000;

/// The number of nodes of `hir`, counting at most to `cap`.
pub(crate) fn hir_size(hir: &Hir, cap: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![hir];
    while let Some(h) = stack.pop() {
        count += 1;
        if count > cap {
            break;
        }
        match h.kind() {
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs),
            _ => {}
        }
    }
    count
}

/// An estimate of the size of `hir`'s automaton, up to `cap`: its nodes, a bounded
/// repetition counted once per copy it expands to (`x{0,1024}` is 1,024 copies of `x`), an
/// unbounded one once per copy of its minimum and once more.
pub(crate) fn hir_weight(hir: &Hir, cap: usize) -> usize {
    let w = match hir.kind() {
        HirKind::Repetition(r) => {
            let copies = r.max.unwrap_or(r.min.saturating_add(1)).max(1) as usize;
            hir_weight(&r.sub, cap).saturating_mul(copies)
        }
        HirKind::Capture(c) => hir_weight(&c.sub, cap),
        HirKind::Concat(hs) | HirKind::Alternation(hs) => {
            let mut total = 0usize;
            for h in hs {
                total = total.saturating_add(hir_weight(h, cap));
                if total > cap {
                    break;
                }
            }
            total
        }
        _ => 1,
    };
    w.saturating_add(1).min(cap.saturating_add(1))
}

/// How JSON text is written in a schema's HIR: whitespace between tokens, and the size
/// bound of [`JsonOptions::max_nodes`]. Shared by the strict and the general compilers.
#[derive(Debug, Clone)]
pub(crate) struct Writer {
    /// The whitespace between tokens.
    pub ws: Hir,
    /// [`JsonOptions::max_nodes`].
    pub max_nodes: usize,
}

impl Writer {
    /// For `options`.
    pub fn new(options: &JsonOptions) -> Self {
        let ws = if options.whitespace == 0 {
            Hir::empty()
        } else {
            repeat(re(r"[ \t\n\r]"), 0, Some(options.whitespace as u32))
        };
        Self {
            ws,
            max_nodes: options.max_nodes,
        }
    }

    /// A key and its colon.
    pub fn key(&self, name: &str) -> Hir {
        self.key_hir(lit(&Value::String(name.to_string()).to_string()))
    }

    /// A key written by `key` (a JSON string's language) and its colon.
    pub fn key_hir(&self, key: Hir) -> Hir {
        cat(vec![key, self.ws.clone(), lit(":"), self.ws.clone()])
    }

    /// A comma between members or items.
    pub fn comma(&self) -> Hir {
        cat(vec![self.ws.clone(), lit(","), self.ws.clone()])
    }

    /// The members of an object, `(member text, required)` in order, written in that order
    /// (optional ones may be left out): the body between the braces, and whether it may be
    /// empty.
    ///
    /// Errors: [`Budget::SchemaNodes`] when only optional members make it quadratic past
    /// [`JsonOptions::max_nodes`].
    pub fn members(
        &self,
        members: Vec<(Hir, bool)>,
        pointer: &str,
    ) -> Result<(Hir, bool), CompileError> {
        let (body, may_be_empty) = match members.iter().position(|(_, needed)| *needed) {
            // Linear: optional members before the first required one are written with a
            // comma after them, the others with a comma before.
            Some(k) => {
                let mut parts = Vec::with_capacity(members.len());
                // Members are moved, not cloned: a clone per level would copy nested objects
                // once per level above them.
                for (i, (m, needed)) in members.into_iter().enumerate() {
                    parts.push(match i.cmp(&k) {
                        std::cmp::Ordering::Less => opt(cat(vec![m, self.comma()])),
                        std::cmp::Ordering::Equal => m,
                        std::cmp::Ordering::Greater => {
                            let item = cat(vec![self.comma(), m]);
                            if needed {
                                item
                            } else {
                                opt(item)
                            }
                        }
                    });
                }
                (cat(parts), false)
            }
            // Only optional members (schemas outside the contract rules): which one comes
            // first decides the commas, quadratic in the members.
            None => {
                self.check_size(
                    &members.iter().map(|(m, _)| m.clone()).collect::<Vec<_>>(),
                    members.len(),
                    pointer,
                )?;
                let n = members.len();
                let mut rest = vec![Hir::empty(); n + 1];
                for i in (0..n).rev() {
                    let item = cat(vec![self.comma(), members[i].0.clone()]);
                    rest[i] = cat(vec![opt(item), rest[i + 1].clone()]);
                }
                let first = (0..n)
                    .map(|i| cat(vec![members[i].0.clone(), rest[i + 1].clone()]))
                    .collect();
                (alt(first), true)
            }
        };
        Ok((body, may_be_empty))
    }

    /// `open body close` with whitespace inside both ends; when the container may be empty,
    /// `open close` with at most one whitespace run (not one on each side of an empty body).
    pub fn container(&self, open: &str, body: Hir, may_be_empty: bool, close: &str) -> Hir {
        let full = cat(vec![self.ws.clone(), body, self.ws.clone()]);
        let inside = if may_be_empty {
            alt(vec![full, self.ws.clone()])
        } else {
            full
        };
        cat(vec![lit(open), inside, lit(close)])
    }

    /// Fails when writing `parts` `copies` times would pass [`JsonOptions::max_nodes`]
    /// (nested arrays double their item per level; an object of only optional members is
    /// quadratic).
    pub fn check_size(
        &self,
        parts: &[Hir],
        copies: usize,
        pointer: &str,
    ) -> Result<(), CompileError> {
        let max = self.max_nodes;
        let cap = max / copies.max(1);
        let total: usize = parts.iter().map(|h| hir_size(h, cap + 1)).sum();
        if total > cap {
            return Err(CompileError {
                budget: Some(Budget::SchemaNodes),
                ..err(
                    pointer,
                    format!(
                        "the schema is too large to generate: more than {max} regex nodes \
                         (nested arrays double their items per level; budget {})",
                        Budget::SchemaNodes
                    ),
                )
            });
        }
        Ok(())
    }
}

/// The error for a schema without a value: at the required property cut at the recursion
/// limit, if one was.
pub(crate) fn no_value(cut: Option<String>, max_recursion: usize) -> CompileError {
    match cut {
        Some(at) => err(
            &at,
            format!(
                "this required property needs a value deeper than the recursion limit \
                 ({max_recursion} entries per $ref on a path) or admits none, so the schema \
                 admits no value"
            ),
        ),
        None => err("", "the schema admits no value"),
    }
}

/// Compiles a schema document (its `$ref`s resolve against it) into JSON-text languages.
pub struct SchemaLanguage<'a> {
    document: &'a Value,
    options: JsonOptions,
    /// `$ref` targets entered on the current path.
    path: Vec<String>,
    /// The whitespace between tokens.
    ws: Hir,
    /// The first required property found without a value (recursion cut, or none admitted).
    cut: Option<String>,
    /// Bounds for the automata general mode builds while compiling.
    limits: crate::dfa::Limits,
}

impl<'a> SchemaLanguage<'a> {
    /// A compiler for `document`.
    pub fn new(document: &'a Value, options: JsonOptions) -> Self {
        Self {
            document,
            options,
            path: Vec::new(),
            ws: Writer::new(&options).ws,
            cut: None,
            limits: crate::dfa::Limits::default(),
        }
    }

    /// Bounds for the automata general mode builds while compiling (default
    /// [`crate::dfa::Limits::default`]; `template::compile` passes its own, with its deadline).
    pub fn with_limits(mut self, limits: crate::dfa::Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The language of the whole document, in either mode ([`JsonOptions::mode`]): HIR plus
    /// the automata it refers to ([`SchemaHir::table`] builds its table).
    ///
    /// Errors: as [`Self::compile`] in strict mode; in general mode, a keyword or
    /// construct general mode does not generate, named with its JSON pointer (see
    /// `crate::general`), or a budget.
    pub fn compile_language(self) -> Result<SchemaHir, CompileError> {
        match self.options.mode {
            SchemaMode::Strict => self.compile().map(|hir| SchemaHir {
                hir,
                slots: Slots::default(),
            }),
            SchemaMode::General { closed, draft } => {
                crate::general::compile(self.document, self.options, closed, draft, &self.limits)
            }
        }
    }

    /// The language of the whole document as HIR alone (strict mode: a schema inside the
    /// structured-outputs subset; `uniqueItems` is not generated).
    ///
    /// Errors: the subset gate's errors (first one), a schema whose language is empty, or a
    /// construct generation does not cover (named with its pointer). In general mode, also
    /// a language that refers to automata (use [`Self::compile_language`]).
    pub fn compile(mut self) -> Result<Hir, CompileError> {
        if let SchemaMode::General { .. } = self.options.mode {
            let language = self.compile_language()?;
            if !language.slots.is_empty() {
                return Err(err(
                    "",
                    "this language refers to automata: compile it with compile_language",
                ));
            }
            return Ok(language.hir);
        }
        if let Err(e) = check_subset(self.document, Strictness::Strict) {
            let first = e.0.into_iter().next();
            return Err(first.map_or_else(
                || err("", "outside the supported subset"),
                |e| err(&e.pointer, format!("{}: {}", e.keyword, e.reason)),
            ));
        }
        let document = self.document;
        match self.value(document, "")? {
            Some(h) => Ok(h),
            None => Err(no_value(self.cut, self.options.max_recursion)),
        }
    }

    fn value(&mut self, schema: &Value, pointer: &str) -> Result<Option<Hir>, CompileError> {
        let map = match schema {
            Value::Bool(true) => return self.untyped(pointer).map(Some),
            Value::Bool(false) => return Ok(None),
            Value::Object(map) => map,
            _ => return Err(err(pointer, "a schema is an object or a boolean")),
        };
        let active: Vec<&str> = map
            .keys()
            .map(String::as_str)
            // Annotations never change the language; `$defs` is only a place for schemas.
            .filter(|k| !ANNOTATIONS.contains(k) && *k != "$defs")
            .collect();
        if map.contains_key("$ref") {
            if active.len() > 1 {
                return Err(err(
                    pointer,
                    format!(
                        "generation does not combine $ref with other keywords ({active:?}); \
                         make the $ref the whole schema"
                    ),
                ));
            }
            return self.reference(map, pointer);
        }
        if let Some(members) = map.get("anyOf").and_then(Value::as_array) {
            if active.len() > 1 {
                return Err(err(
                    pointer,
                    format!(
                        "generation does not combine anyOf with other keywords ({active:?}); \
                         move them into the branches"
                    ),
                ));
            }
            let mut branches = Vec::new();
            for (i, member) in members.iter().enumerate() {
                if let Some(h) = self.value(member, &format!("{pointer}/anyOf/{i}"))? {
                    branches.push(h);
                }
            }
            return Ok(if branches.is_empty() {
                None
            } else {
                Some(alt(branches))
            });
        }
        if map.contains_key("uniqueItems") {
            return Err(err(
                &format!("{pointer}/uniqueItems"),
                "uniqueItems is not generated",
            ));
        }
        let types = self.types(map);
        if map.contains_key("enum") || map.contains_key("const") {
            return self.literals(map, &types, pointer);
        }
        let python = self.options.literals == Literals::Python;
        let mut branches = Vec::new();
        for t in &types {
            let h = match *t {
                "string" => Some(self.string(map, pointer)?),
                "integer" if python => Some(re(PYTHON_INTEGER)),
                "integer" => Some(re(INTEGER)),
                "number" => Some(re(NUMBER)),
                "boolean" if python => Some(re("true|false|True|False")),
                "boolean" => Some(re("true|false")),
                "null" if python => Some(re("null|None")),
                "null" => Some(lit("null")),
                "object" => self.object(map, pointer)?,
                "array" => Some(self.array(map, pointer)?),
                "any" => Some(self.untyped(pointer)?),
                other => return Err(err(pointer, format!("unknown type {other:?}"))),
            };
            branches.extend(h);
        }
        Ok(if branches.is_empty() {
            None
        } else {
            Some(alt(branches))
        })
    }

    /// The types a schema's values may have: `type`, else guessed from its keywords (object
    /// keywords: object; `items`: array; `pattern`/`format`: string), else any.
    ///
    /// Reads `type` as everyone does ([`type_keyword`]); the guess from keywords is
    /// generation's own (a value must be written even where the schema names no type).
    fn types(&self, map: &Map<String, Value>) -> Vec<&'static str> {
        match type_keyword(map) {
            Some(types) => {
                let mut out: Vec<&str> = types.iter().map(JsonType::name).collect();
                // `integer` is inside `number`: keep one language for both.
                if out.contains(&"number") {
                    out.retain(|t| *t != "integer");
                }
                out
            }
            None => {
                if ["properties", "required", "additionalProperties"]
                    .iter()
                    .any(|k| map.contains_key(*k))
                {
                    vec!["object"]
                } else if map.contains_key("items") {
                    vec!["array"]
                } else if map.contains_key("pattern") || map.contains_key("format") {
                    vec!["string"]
                } else {
                    vec!["any"]
                }
            }
        }
    }

    fn reference(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let r = map.get("$ref").and_then(Value::as_str).unwrap_or("");
        let target = ref_pointer(r)
            .ok_or_else(|| err(pointer, format!("$ref {r:?} is not within the document")))?;
        let entered = self.path.iter().filter(|p| **p == target).count();
        if entered >= self.options.max_recursion {
            return Ok(None);
        }
        let document = self.document;
        let schema = document
            .pointer(&target)
            .ok_or_else(|| err(pointer, format!("$ref {r:?} points to nothing")))?;
        self.path.push(target.clone());
        let out = self.value(schema, &target);
        self.path.pop();
        let out = out?;
        if out.is_none() && entered + 1 >= self.options.max_recursion {
            // Recursion cut here; callers decide whether that is allowed.
            return Ok(None);
        }
        Ok(out)
    }

    /// An untyped value's placeholder ([`untyped`]); an error for [`Literals::Python`].
    fn untyped(&self, pointer: &str) -> Result<Hir, CompileError> {
        if self.options.literals == Literals::Python {
            return Err(err(
                pointer,
                "a value without a type is not generated as a Python literal (an untyped \
                 object could repeat a key, which python-call-list refuses)",
            ));
        }
        Ok(untyped())
    }

    /// `enum` and/or `const` as literals, keeping the values of the schema's types and, where
    /// the schema has other keywords (`format`, `pattern`, `properties`, `items`, ...), only the
    /// values the checker finds valid against the schema
    /// ([`structured_outputs::schema::check_at`]): `{"format": "date", "enum": ["first"]}`
    /// admits no value.
    ///
    /// Errors: a schema the checker cannot build for that test (named with its pointer).
    fn literals(
        &self,
        map: &Map<String, Value>,
        types: &[&str],
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let mut values: Vec<&Value> = match map.get("enum") {
            Some(Value::Array(values)) => values.iter().collect(),
            _ => Vec::new(),
        };
        if let Some(c) = map.get("const") {
            if map.contains_key("enum") {
                values.retain(|v| *v == c);
            } else {
                values.push(c);
            }
        }
        let fits = |v: &Value| {
            types.contains(&"any")
                || types.iter().any(|t| match (*t, v) {
                    ("string", Value::String(_)) => true,
                    ("null", Value::Null) => true,
                    ("boolean", Value::Bool(_)) => true,
                    ("integer", Value::Number(n)) => {
                        n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
                    }
                    ("number", Value::Number(_)) => true,
                    ("object", Value::Object(_)) => true,
                    ("array", Value::Array(_)) => true,
                    _ => false,
                })
        };
        let python = self.options.literals == Literals::Python;
        values.retain(|v| fits(v) && (!python || python_integers(v)));
        let others = map.keys().any(|k| {
            !["enum", "const", "type", "$defs"].contains(&k.as_str())
                && !ANNOTATIONS.contains(&k.as_str())
        });
        if others && !values.is_empty() {
            // The checker reads the schema's other keywords: test each value against it (the
            // values are the schema's own, so `enum`/`const` admit them).
            let verdicts = structured_outputs::schema::check_at(self.document, pointer, &values)
                .ok_or_else(|| {
                    err(
                        pointer,
                        "the checker cannot read this schema to test its enum/const values",
                    )
                })?;
            let mut verdicts = verdicts.into_iter();
            values.retain(|_| verdicts.next().unwrap_or(false));
        }
        // A set, not a list: `{"enum": [100,000 strings]}` was quadratic here (over 40 s).
        let mut seen = std::collections::HashSet::new();
        let mut parts = Vec::new();
        for v in values {
            let text = v.to_string();
            if !seen.contains(&text) {
                parts.push(lit(&text));
                if let (true, Value::String(s)) = (python, v) {
                    parts.push(lit(&python_single_quoted(s)));
                }
                seen.insert(text);
            }
        }
        Ok(if parts.is_empty() {
            None
        } else {
            Some(alt(parts))
        })
    }

    fn string(&self, map: &Map<String, Value>, pointer: &str) -> Result<Hir, CompileError> {
        let format = map.get("format").and_then(Value::as_str);
        let pattern = map.get("pattern").and_then(Value::as_str);
        let body = match (format, pattern) {
            (Some(_), Some(_)) => {
                return Err(err(
                    pointer,
                    "generation does not combine format and pattern in one string",
                ))
            }
            (Some(f), None) => format_body(f)
                .ok_or_else(|| err(&format!("{pointer}/format"), format!("format {f:?}")))?,
            (None, Some(p)) => {
                let at = format!("{pointer}/pattern");
                let translated = jsonschema_regex::to_rust_regex(p)
                    .map_err(|()| err(&at, untranslatable("the pattern", p)))?;
                let hir = regex_syntax::Parser::new()
                    .parse(&translated)
                    .map_err(|e| err(&at, format!("invalid pattern: {e}")))?;
                let encoded = encode_pattern(&hir)
                    .map_err(|what| err(&at, format!("the pattern has {what}")))?;
                let free = repeat(string_char(), 0, None);
                cat(vec![free.clone(), encoded, free])
            }
            (None, None) if self.options.literals == Literals::Python => {
                return Ok(alt(vec![
                    any_string(),
                    cat(vec![
                        lit("'"),
                        repeat(python_string_char(), 0, None),
                        lit("'"),
                    ]),
                ]));
            }
            (None, None) => repeat(string_char(), 0, None),
        };
        Ok(cat(vec![lit("\""), body, lit("\"")]))
    }

    fn writer(&self) -> Writer {
        Writer {
            ws: self.ws.clone(),
            max_nodes: self.options.max_nodes,
        }
    }

    fn key(&self, name: &str) -> Hir {
        self.writer().key(name)
    }

    fn comma(&self) -> Hir {
        self.writer().comma()
    }

    fn object(
        &mut self,
        map: &Map<String, Value>,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = map.get("properties").and_then(Value::as_object);
        let extra = map.get("additionalProperties");
        // (member text, required) in declaration order; required-but-undeclared last.
        let mut members: Vec<(Hir, bool)> = Vec::new();
        if let Some(properties) = properties {
            for (name, schema) in properties {
                let at = format!("{pointer}/properties/{}", escape_token(name));
                let needed = required.contains(&name.as_str());
                match self.value(schema, &at)? {
                    Some(v) => members.push((cat(vec![self.key(name), v]), needed)),
                    // The object has no value here (an anyOf branch holding it falls away);
                    // if nothing is left, compiling fails naming this property.
                    None if needed => {
                        self.cut.get_or_insert(at);
                        return Ok(None);
                    }
                    None => {}
                }
            }
        }
        for name in &required {
            if properties.is_some_and(|p| p.contains_key(*name)) {
                continue;
            }
            let at = format!("{pointer}/required");
            let schema = extra.cloned().unwrap_or(Value::Bool(true));
            match self.value(&schema, &format!("{pointer}/additionalProperties"))? {
                Some(v) => members.push((cat(vec![self.key(name), v]), true)),
                None => {
                    return Err(err(
                        &at,
                        format!("required property {name:?} is not allowed by the object"),
                    ))
                }
            }
        }
        if members.is_empty() {
            return Ok(Some(cat(vec![lit("{"), self.ws.clone(), lit("}")])));
        }
        let (body, may_be_empty) = self.writer().members(members, pointer)?;
        Ok(Some(self.container("{", body, may_be_empty, "}")))
    }

    fn container(&self, open: &str, body: Hir, may_be_empty: bool, close: &str) -> Hir {
        self.writer().container(open, body, may_be_empty, close)
    }

    fn check_size(&self, parts: &[Hir], copies: usize, pointer: &str) -> Result<(), CompileError> {
        self.writer().check_size(parts, copies, pointer)
    }

    fn array(&mut self, map: &Map<String, Value>, pointer: &str) -> Result<Hir, CompileError> {
        let item = match map.get("items") {
            Some(schema) => self.value(schema, &format!("{pointer}/items"))?,
            None => Some(self.untyped(pointer)?),
        };
        if let Some(item) = &item {
            self.check_size(std::slice::from_ref(item), 2, pointer)?;
        }
        Ok(self.array_of(item))
    }

    fn array_of(&self, item: Option<Hir>) -> Hir {
        match item {
            Some(item) => {
                let items = cat(vec![
                    item.clone(),
                    repeat(cat(vec![self.comma(), item]), 0, None),
                ]);
                self.container("[", items, true, "]")
            }
            None => cat(vec![lit("["), self.ws.clone(), lit("]")]),
        }
    }
}

/// A regex-syntax error's kind ("unclosed character class") and the byte offset where its
/// span starts; `None` for an error of another sort.
fn parse_failure(e: &regex_syntax::Error) -> Option<(String, usize)> {
    match e {
        regex_syntax::Error::Parse(e) => Some((e.kind().to_string(), e.span().start.offset)),
        regex_syntax::Error::Translate(e) => Some((e.kind().to_string(), e.span().start.offset)),
        _ => None,
    }
}

/// A regex-syntax error on one line: its kind ("backreferences are not supported"),
/// without the pattern and caret lines its `Display` adds. For a translated pattern, whose
/// positions are not the schema's (general mode's `plain_pattern`).
pub(crate) fn one_line(e: &regex_syntax::Error) -> String {
    parse_failure(e).map_or_else(
        || {
            e.to_string()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        },
        |(kind, _)| kind,
    )
}

/// Why `pattern` (ECMA-262) could not be translated, for an error: `what` and the reason
/// the regex parser gives for the pattern as written, on one line (an unclosed class or
/// group, a bad escape, at its 1-based character), or that it is no ECMA-262 regular
/// expression the translation takes.
pub(crate) fn untranslatable(what: &str, pattern: &str) -> String {
    let at = |offset: usize| pattern.get(..offset).map_or(0, |p| p.chars().count()) + 1;
    let reason = regex_syntax::Parser::new()
        .parse(pattern)
        .err()
        .and_then(|e| parse_failure(&e))
        .map_or_else(
            || "not an ECMA-262 regular expression".to_string(),
            |(kind, offset)| format!("{kind} at character {}", at(offset)),
        );
    format!("cannot translate {what}: {reason}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dfa::{Limits, Table};
    use serde_json::json;

    fn table(schema: Value) -> Table {
        let hir = SchemaLanguage::new(&schema, JsonOptions::default())
            .compile()
            .unwrap();
        schema_table(&hir, JsonOptions::default(), &Limits::default()).unwrap()
    }

    /// `values_clash` finds a value of at least `CLASH_FROM` states starting on a byte its
    /// place reads otherwise, or beside another such value of other rows; not a small one,
    /// not two alike, not values starting on different bytes.
    #[test]
    fn values_clash_where_a_large_value_is_read_beside_something_else() {
        use std::sync::Arc;
        let options = JsonOptions {
            mode: SchemaMode::General {
                closed: false,
                draft: Draft::Draft2020,
            },
            ..JsonOptions::default()
        };
        let limits = Limits::default();
        let string = |n: usize| {
            Arc::new(Table::from_hir(&re(&format!(r#""[a-z]{{0,{n}}}""#)), &limits).unwrap())
        };
        let mut slots = Slots::default();
        let large = slots.push(string(1_100)).unwrap();
        let small = slots.push(string(100)).unwrap();
        let other_large = slots.push(string(1_200)).unwrap();
        let large_again = slots.push(string(1_100)).unwrap();
        let array = slots
            .push(Arc::new(
                Table::from_hir(&re(r"\[[a-z]{0,1100}\]"), &limits).unwrap(),
            ))
            .unwrap();
        assert!(string(1_100).len() >= CLASH_FROM && string(100).len() < CLASH_FROM);
        let clash = |h: Hir| {
            let t = Table::from_hir(&h, &limits).unwrap();
            values_clash(&t, &slots, options, &limits)
        };
        // A large value beside a place's own `"`, beside another large one, beside an
        // untyped value (which starts on `"` too).
        assert!(clash(alt(vec![large.clone(), lit(r#""x""#)])));
        assert!(clash(alt(vec![large.clone(), other_large.clone()])));
        assert!(clash(alt(vec![large.clone(), untyped()])));
        assert!(clash(alt(vec![small.clone(), large.clone()])));
        // A small value; two values of the same rows; values starting on different bytes.
        assert!(!clash(alt(vec![small, lit(r#""x""#)])));
        assert!(!clash(alt(vec![large.clone(), large_again])));
        assert!(!clash(alt(vec![large, array, lit("x")])));
    }

    #[test]
    fn json_mode_reader() {
        let t = any_object_table(5, 0, &Limits::default()).unwrap();
        for ok in [
            r#"{}"#,
            r#"{"a":[1,-0.5e+12,true,null,"x\u00e9\n"],"b":{"c":{"d":{"e":[]}}}}"#,
            "{\"é\":\"日本\"}",
        ] {
            assert!(t.matches(ok.as_bytes()), "{ok}");
        }
        for bad in [
            r#"[]"#,
            r#"{"a":{"b":{"c":{"d":{"e":[1]}}}}}"#,
            r#"{"a":01}"#,
            r#"{"a":1,}"#,
            r#"{ "a":1}"#,
            r#"{"a":"\ud800"}"#,
            "{\"a\":\"\u{1}\"}",
            r#"{"a":tru}"#,
            r#"{"a":1}}"#,
        ] {
            assert!(!t.matches(bad.as_bytes()), "{bad}");
        }
        assert!(!t.matches(b"{\"a\":\"\xff\"}"));
        let ws = any_object_table(5, 1, &Limits::default()).unwrap();
        assert!(ws.matches(b"{ \"a\" : [1, 2] }") && !ws.matches(b"{  \"a\":1}"));
        assert!(t.len() < 10_000, "{} states", t.len());
    }

    /// Each typed reader, built from its restricted first byte on, is the general reader
    /// with its first byte restricted to the types, for every set of types.
    #[test]
    fn typed_readers_are_the_general_reader_restricted() {
        let limits = Limits::default();
        for (levels, whitespace) in [(1, 0), (3, 1)] {
            let any = general_value_table(levels, whitespace, &limits).unwrap();
            for types in 1..64u8 {
                let built = typed_reader_table(types, levels, whitespace, &limits).unwrap();
                let restricted = any
                    .restrict_first(|b| types & type_of_first(b) != 0, &limits)
                    .unwrap();
                assert!(
                    built.same_language(&restricted),
                    "types {types:#b} levels {levels} whitespace {whitespace}"
                );
            }
        }
        // Scalars never build the containers.
        let strings = typed_reader_table(TYPE_STRING, 5, 2, &limits).unwrap();
        assert!(strings.len() < 100, "{} states", strings.len());
    }

    #[test]
    fn reader_classes_are_the_readers() {
        // Each reader as built (one column per byte class) against the same reader stepped
        // on every byte: the same language from every start, depth and whitespace.
        let limits = Limits::default();
        for (start, general) in [
            (Lex::Top, false),
            (Lex::TopValue, false),
            (Lex::TopValue, true),
        ] {
            for (levels, whitespace) in [(1, 0), (2, 1), (3, 0), (4, 2)] {
                let built = reader_table(start, general, levels, whitespace, &limits).unwrap();
                let mut each = [0u8; 256];
                for (b, c) in each.iter_mut().enumerate() {
                    *c = b as u8;
                }
                let reader = Reader {
                    stack: Stack::default(),
                    lex: start,
                    ws: 0,
                    general,
                };
                let every = Table::determinize_keyed(
                    each,
                    256,
                    reader,
                    |r: &Reader, b| r.step(b, levels, whitespace),
                    Reader::complete,
                    &limits,
                    &mut Vec::new(),
                )
                .unwrap();
                assert!(
                    built.same_language(&every),
                    "{start:?} general {general} levels {levels} whitespace {whitespace}"
                );
                assert!(reader_classes().1 < 80, "{} columns", reader_classes().1);
            }
        }
    }

    #[test]
    fn fixed_patterns_parse() {
        for p in [INTEGER, NUMBER, DATE, TIME, UUID] {
            re(p);
        }
        string_char();
    }

    #[test]
    fn objects_keep_declared_order_and_required_members() {
        let t = table(json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
            "required": ["b"]}));
        for ok in [
            r#"{"b":""}"#,
            r#"{"a":1,"b":"x"}"#,
            r#"{"a":-3,"b":"x","c":true}"#,
            r#"{"b":"x","c":false}"#,
        ] {
            assert!(t.matches(ok.as_bytes()), "{ok}");
        }
        for bad in [
            r#"{}"#,
            r#"{"a":1}"#,
            r#"{"b":"x","a":1}"#,
            r#"{"b":"x",}"#,
            r#"{"b":"x","d":1}"#,
            r#"{ "b":"x"}"#,
        ] {
            assert!(!t.matches(bad.as_bytes()), "{bad}");
        }
    }

    #[test]
    fn strings_escapes_patterns_and_formats() {
        let s = table(json!({"type": "string"}));
        for ok in [r#""""#, r#""a\"b\\c\n\u00e9\ud83d\ude00""#, "\"é\""] {
            assert!(s.matches(ok.as_bytes()), "{ok}");
        }
        for bad in [r#""a"#, "\"a\nb\"", r#""\ud800""#, r#""\x""#] {
            assert!(!s.matches(bad.as_bytes()), "{bad}");
        }
        let p = table(json!({"type": "string", "pattern": "[0-9]{3}-\"x"}));
        assert!(p.matches(br#""call 555-\"x now""#));
        assert!(!p.matches(br#""call 55-\"x""#));
        let d = table(json!({"type": "string", "format": "date"}));
        assert!(d.matches(br#""2024-02-29""#) && !d.matches(br#""2023-02-29""#));
        assert!(d.matches(br#""2000-02-29""#) && !d.matches(br#""1900-02-29""#));
        assert!(!d.matches(br#""2024-04-31""#));
        let u = table(json!({"format": "uuid"}));
        assert!(u.matches(br#""123e4567-e89b-12d3-a456-426614174000""#));
    }

    #[test]
    fn recursion_is_unrolled_and_required_recursion_is_an_error() {
        let tree = json!({"$defs": {"node": {"type": "object", "properties": {
            "v": {"type": "integer"},
            "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["v"]}}, "$ref": "#/$defs/node"});
        let t = table(tree);
        assert!(t.matches(br#"{"v":1,"kids":[{"v":2,"kids":[{"v":3}]}]}"#));
        // Deeper than three nodes on one path is not generated.
        assert!(!t.matches(br#"{"v":1,"kids":[{"v":2,"kids":[{"v":3,"kids":[{"v":4}]}]}]}"#));
        let chain = json!({"$defs": {"n": {"type": "object", "properties": {
            "next": {"$ref": "#/$defs/n"}}, "required": ["next"]}}, "$ref": "#/$defs/n"});
        let e = SchemaLanguage::new(&chain, JsonOptions::default())
            .compile()
            .unwrap_err();
        assert!(e.reason.contains("recursion limit"), "{e}");
        // Recursion through anyOf with a branch that ends it: the recursive branch falls away
        // at the limit.
        let expr = json!({"$defs": {"f": {"anyOf": [
            {"type": "object", "properties": {"not": {"$ref": "#/$defs/f"}}, "required": ["not"]},
            {"type": "string"}]}}, "$ref": "#/$defs/f"});
        let t = table(expr);
        assert!(t.matches(br#"{"not":{"not":"x"}}"#) && t.matches(br#""x""#));
    }

    #[test]
    fn enum_values_the_rest_of_their_schema_refuses_are_not_generated() {
        // The checker (JSON Schema 2020-12, formats asserted) finds "first" no date and "cd"
        // without an "a": `enum` and the other keywords all apply (found by the schema fuzz
        // target in CI).
        let t = table(json!({"type": "object", "properties": {
            "d": {"type": "string", "format": "date", "enum": ["first", "2024-02-29", "2023-02-29"]},
            "a b/%~": {"enum": ["ab", "cd"], "pattern": "a"},
            "o": {"$ref": "#/$defs/o"}},
            "required": ["d", "a b/%~", "o"],
            "$defs": {"s": {"type": "string"}, "o": {"type": "object",
                "properties": {"k": {"$ref": "#/$defs/s"}},
                "enum": [{"k": "x"}, {"k": 1}], "additionalProperties": false}}}));
        assert!(t.matches(br#"{"d":"2024-02-29","a b/%~":"ab","o":{"k":"x"}}"#));
        for bad in [
            r#"{"d":"first","a b/%~":"ab","o":{"k":"x"}}"#,
            r#"{"d":"2023-02-29","a b/%~":"ab","o":{"k":"x"}}"#,
            r#"{"d":"2024-02-29","a b/%~":"cd","o":{"k":"x"}}"#,
            r#"{"d":"2024-02-29","a b/%~":"ab","o":{"k":1}}"#,
        ] {
            assert!(!t.matches(bad.as_bytes()), "{bad}");
        }
        // No value left: the schema's language is empty.
        let none = json!({"type": "string", "format": "uuid", "const": "x"});
        let e = SchemaLanguage::new(&none, JsonOptions::default())
            .compile()
            .unwrap_err();
        assert!(e.to_string().contains("no value"), "{e}");
    }

    #[test]
    fn enums_consts_any_of_and_whitespace() {
        let t = table(json!({"type": "object", "properties": {
            "u": {"enum": ["C", "F", 3]}, "k": {"const": null},
            "x": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "string"}}]}},
            "required": ["u", "k", "x"]}));
        assert!(t.matches(br#"{"u":"F","k":null,"x":[]}"#));
        assert!(t.matches(br#"{"u":3,"k":null,"x":["a","b"]}"#));
        assert!(!t.matches(br#"{"u":"K","k":null,"x":1}"#));
        let hir = SchemaLanguage::new(
            &json!({"type": "object", "properties": {"a": {}}, "required": ["a"]}),
            JsonOptions {
                whitespace: 2,
                ..JsonOptions::default()
            },
        )
        .compile()
        .unwrap();
        let options = JsonOptions {
            whitespace: 2,
            ..JsonOptions::default()
        };
        let ws = schema_table(&hir, options, &Limits::default()).unwrap();
        assert!(ws.matches(b"{ \"a\" : [1, {\"b\": null}] }"));
        // Empty containers hold one whitespace run, not one on each side of nothing.
        let options = JsonOptions {
            whitespace: 1,
            ..JsonOptions::default()
        };
        for (schema, good, bad) in [
            (
                json!({"type": "array", "items": {"type": "integer"}}),
                "[ ]",
                "[ \n]",
            ),
            (
                json!({"type": "object", "properties": {"a": {"type": "integer"}}}),
                "{ }",
                "{ \n}",
            ),
        ] {
            let hir = SchemaLanguage::new(&schema, options).compile().unwrap();
            let t = schema_table(&hir, options, &Limits::default()).unwrap();
            assert!(t.matches(good.as_bytes()), "{good}");
            assert!(!t.matches(bad.as_bytes()), "{bad}");
        }
        assert!(!ws.matches(b"{   \"a\":1}"));
    }

    #[test]
    fn untyped_values_are_spliced_in() {
        // A value at the top: numbers end where the next byte is not a digit, no whitespace
        // around, `any_depth` levels of containers.
        let v = any_value_table(2, 0, &Limits::default()).unwrap();
        for good in ["1", "-0.5e3", "\"x\"", "null", "[]", "{\"a\":[1]}", "[[2]]"] {
            assert!(v.matches(good.as_bytes()), "{good}");
        }
        for bad in [
            " 1",
            "1 ",
            "[[[1]]]",
            "01",
            "{\"a\":{\"b\":[]}}",
            "\"\\ud800\"",
        ] {
            assert!(!v.matches(bad.as_bytes()), "{bad}");
        }
        // An untyped property next to typed ones, an untyped array item, and an anyOf whose
        // branches overlap with the untyped value (a string, an object).
        let t = table(json!({"type": "object", "properties": {
            "a": {}, "n": {"type": "integer"}, "l": {"type": "array"},
            "o": {"anyOf": [{"type": "string", "format": "date"}, true, {"type": "object",
                "properties": {"k": {"type": "integer"}}, "required": ["k"]}]}},
            "required": ["a", "n", "o"]}));
        for good in [
            r#"{"a":12,"n":3,"o":"x"}"#,
            r#"{"a":{"b":[true]},"n":-1,"l":[1,"2",{"c":null}],"o":{"k":1}}"#,
            r#"{"a":"s","n":0,"o":{"other":[]}}"#,
            r#"{"a":[],"n":5,"l":[],"o":"2024-02-29"}"#,
        ] {
            assert!(t.matches(good.as_bytes()), "{good}");
        }
        for bad in [
            r#"{"a":12 ,"n":3,"o":"x"}"#,
            r#"{"n":3,"o":"x"}"#,
            r#"{"a":1,"n":3,"o":"x","l":[]}"#,
            r#"{"a":1,"n":3.5,"o":"x"}"#,
            "{\"a\":\"\u{1}\",\"n\":3,\"o\":1}",
        ] {
            assert!(!t.matches(bad.as_bytes()), "{bad}");
        }
        // Untyped values nest `any_depth` levels, not one more.
        let nested = |levels: usize| {
            let (open, close) = ("[".repeat(levels), "]".repeat(levels));
            format!(r#"{{"a":{open}1{close},"n":3,"o":"x"}}"#)
        };
        let depth = JsonOptions::default().any_depth;
        assert!(t.matches(nested(depth).as_bytes()));
        assert!(!t.matches(nested(depth + 1).as_bytes()));
        // The placeholder byte itself is never written.
        assert!(!t.matches(b"{\"a\":\xff,\"n\":3,\"o\":1}"));
        // Untyped values no longer unroll into a regex's states (7,000 to 42,000 at 3 levels
        // for one value): the three places hold copies of the reader at most.
        let reader = any_value_table(depth, 0, &Limits::default()).unwrap();
        assert!(t.len() < 4 * reader.len(), "{} states", t.len());
    }
}

/// Where a bounded-depth JSON reader is inside a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Lex {
    /// Only `{` (the top-level value is an object).
    Top,
    /// After `{`: a key or `}`.
    ObjectStart,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// A value.
    Value,
    /// After `[`: a value or `]`.
    ArrayStart,
    /// After a value: `,` or the container's close.
    After,
    /// Inside a string (`key`: it is a key).
    Str { key: bool, sub: StrSub },
    /// Inside a number.
    Num(NumSub),
    /// Inside a number of general mode's written forms.
    Written(crate::numeric::Written),
    /// Inside `true`, `false` or `null`: the literal and how many bytes were read.
    Lit(u8, u8),
    /// Before a value at the top ([`any_value_table`]): no whitespace before it.
    TopValue,
    /// The top-level value is complete.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum StrSub {
    Plain,
    Escape,
    /// `\u` and this many hex digits so far.
    Hex(u8),
    /// General mode's canonical `\u00XX` (a control character without a short escape):
    /// digits read and the third one.
    Canonical(u8, u8),
    /// UTF-8 continuation bytes still to come, and the range of the next one.
    Utf8(u8, u8, u8),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum NumSub {
    Minus,
    Zero,
    Int(u8),
    Dot,
    Frac(u8),
    E,
    ESign,
    Exp(u8),
}

const LITERALS: [&[u8]; 3] = [b"true", b"false", b"null"];

/// The open containers of a reader, innermost last: one bit each (set: `{`), at most
/// [`Stack::MAX`] (no heap, so reader states copy cheaply).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Stack {
    bits: u128,
    len: u8,
}

impl Stack {
    /// The most containers a reader nests.
    const MAX: usize = 128;

    fn len(&self) -> usize {
        self.len as usize
    }

    fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn last(&self) -> Option<u8> {
        (self.len > 0).then(|| {
            if self.bits >> (self.len - 1) & 1 == 1 {
                b'{'
            } else {
                b'['
            }
        })
    }

    fn push(&mut self, open: u8) {
        let bit = u128::from(open == b'{') << self.len;
        self.bits = (self.bits & !(1 << self.len)) | bit;
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
        self.bits &= (1u128 << self.len) - 1;
    }
}

/// The reader's state: the open containers (`{` or `[`), the lexer state, and the whitespace
/// bytes since the last token.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Reader {
    stack: Stack,
    lex: Lex,
    ws: u8,
    /// General mode: canonical strings (serde_json's escapes only) and the written number
    /// forms of [`crate::numeric`].
    general: bool,
}

impl Reader {
    fn with(&self, lex: Lex) -> Self {
        // A value completed at the top (a string, literal or number outside any container).
        let lex = if lex == Lex::After && self.stack.is_empty() {
            Lex::Done
        } else {
            lex
        };
        Self {
            stack: self.stack,
            lex,
            ws: 0,
            general: self.general,
        }
    }

    /// Whether the bytes read form a whole top-level value: a closed container or string, a
    /// literal, or a number that may also go on.
    fn complete(&self) -> bool {
        self.lex == Lex::Done
            || (self.stack.is_empty()
                && matches!(
                    self.lex,
                    Lex::Num(NumSub::Zero | NumSub::Int(_) | NumSub::Frac(_) | NumSub::Exp(_))
                ))
            || (self.stack.is_empty() && matches!(self.lex, Lex::Written(w) if w.complete()))
    }

    fn step(&self, b: u8, levels: usize, whitespace: usize) -> Option<Self> {
        let is_ws = matches!(b, b' ' | b'\t' | b'\n' | b'\r');
        let between = matches!(
            self.lex,
            Lex::ObjectStart | Lex::Key | Lex::Colon | Lex::Value | Lex::ArrayStart | Lex::After
        );
        if is_ws && between {
            return ((self.ws as usize) < whitespace).then(|| Self {
                ws: self.ws + 1,
                ..self.clone()
            });
        }
        match self.lex {
            Lex::Top => (b == b'{').then(|| self.push(b'{', levels)).flatten(),
            Lex::TopValue => self.value_start(b, levels),
            Lex::ObjectStart => match b {
                b'"' => Some(self.with(Lex::Str {
                    key: true,
                    sub: StrSub::Plain,
                })),
                b'}' => Some(self.pop()),
                _ => None,
            },
            Lex::Key => (b == b'"').then(|| {
                self.with(Lex::Str {
                    key: true,
                    sub: StrSub::Plain,
                })
            }),
            Lex::Colon => (b == b':').then(|| self.with(Lex::Value)),
            Lex::Value => self.value_start(b, levels),
            Lex::ArrayStart => match b {
                b']' => Some(self.pop()),
                _ => self.value_start(b, levels),
            },
            Lex::After => match (b, self.stack.last()) {
                (b',', Some(b'{')) => Some(self.with(Lex::Key)),
                (b',', Some(b'[')) => Some(self.with(Lex::Value)),
                (b'}', Some(b'{')) | (b']', Some(b'[')) => Some(self.pop()),
                _ => None,
            },
            Lex::Str { key, sub } => {
                let next = match sub {
                    StrSub::Plain => match b {
                        b'"' => return Some(self.with(if key { Lex::Colon } else { Lex::After })),
                        b'\\' => StrSub::Escape,
                        0..=0x1f => return None,
                        0x20..=0x7f => StrSub::Plain,
                        0xc2..=0xdf => StrSub::Utf8(1, 0x80, 0xbf),
                        0xe0 => StrSub::Utf8(2, 0xa0, 0xbf),
                        0xe1..=0xec | 0xee..=0xef => StrSub::Utf8(2, 0x80, 0xbf),
                        0xed => StrSub::Utf8(2, 0x80, 0x9f),
                        0xf0 => StrSub::Utf8(3, 0x90, 0xbf),
                        0xf1..=0xf3 => StrSub::Utf8(3, 0x80, 0xbf),
                        0xf4 => StrSub::Utf8(3, 0x80, 0x8f),
                        _ => return None,
                    },
                    StrSub::Utf8(rest, lo, hi) => {
                        if b < lo || b > hi {
                            return None;
                        }
                        if rest == 1 {
                            StrSub::Plain
                        } else {
                            StrSub::Utf8(rest - 1, 0x80, 0xbf)
                        }
                    }
                    StrSub::Escape if self.general => match b {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => StrSub::Plain,
                        b'u' => StrSub::Canonical(0, 0),
                        _ => return None,
                    },
                    StrSub::Escape => match b {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => StrSub::Plain,
                        b'u' => StrSub::Hex(0),
                        _ => return None,
                    },
                    // `\u00XX` for the control characters without a short escape, lower-case
                    // hex, as serde_json writes them.
                    StrSub::Canonical(n @ 0..=1, _) if b == b'0' => StrSub::Canonical(n + 1, 0),
                    StrSub::Canonical(2, _) if matches!(b, b'0' | b'1') => StrSub::Canonical(3, b),
                    StrSub::Canonical(3, b'0') if matches!(b, b'0'..=b'7' | b'b' | b'e' | b'f') => {
                        StrSub::Plain
                    }
                    StrSub::Canonical(3, b'1') if matches!(b, b'0'..=b'9' | b'a'..=b'f') => {
                        StrSub::Plain
                    }
                    StrSub::Canonical(..) => return None,
                    // `\u` escapes of surrogates (`\uD...`) are not written: lone ones are not
                    // JSON for serde_json, and every other character has a plain form.
                    StrSub::Hex(0) if b.is_ascii_hexdigit() && !matches!(b, b'd' | b'D') => {
                        StrSub::Hex(1)
                    }
                    StrSub::Hex(n @ 1..=2) if b.is_ascii_hexdigit() => StrSub::Hex(n + 1),
                    StrSub::Hex(3) if b.is_ascii_hexdigit() => StrSub::Plain,
                    StrSub::Hex(_) => return None,
                };
                Some(self.with(Lex::Str { key, sub: next }))
            }
            Lex::Num(sub) => {
                let next = match (sub, b) {
                    (NumSub::Minus, b'0') => Some(NumSub::Zero),
                    (NumSub::Minus, b'1'..=b'9') => Some(NumSub::Int(1)),
                    (NumSub::Int(n), b'0'..=b'9') if n < 15 => Some(NumSub::Int(n + 1)),
                    (NumSub::Zero | NumSub::Int(_), b'.') => Some(NumSub::Dot),
                    (NumSub::Dot, b'0'..=b'9') => Some(NumSub::Frac(1)),
                    (NumSub::Frac(n), b'0'..=b'9') if n < 15 => Some(NumSub::Frac(n + 1)),
                    (NumSub::Zero | NumSub::Int(_) | NumSub::Frac(_), b'e' | b'E') => {
                        Some(NumSub::E)
                    }
                    (NumSub::E, b'+' | b'-') => Some(NumSub::ESign),
                    (NumSub::E | NumSub::ESign, b'0'..=b'9') => Some(NumSub::Exp(1)),
                    (NumSub::Exp(1), b'0'..=b'9') => Some(NumSub::Exp(2)),
                    _ => None,
                };
                match next {
                    Some(n) => Some(self.with(Lex::Num(n))),
                    None if matches!(
                        sub,
                        NumSub::Zero | NumSub::Int(_) | NumSub::Frac(_) | NumSub::Exp(_)
                    ) =>
                    {
                        // The number ended: this byte comes after the value.
                        self.with(Lex::After).step(b, levels, whitespace)
                    }
                    None => None,
                }
            }
            Lex::Written(w) => match w.step(b, true) {
                Some(n) => Some(self.with(Lex::Written(n))),
                // The number ended: this byte comes after the value.
                None if w.complete() => self.with(Lex::After).step(b, levels, whitespace),
                None => None,
            },
            Lex::Lit(which, read) => {
                let word = LITERALS[which as usize];
                (word.get(read as usize) == Some(&b)).then(|| {
                    if read as usize + 1 == word.len() {
                        self.with(Lex::After)
                    } else {
                        self.with(Lex::Lit(which, read + 1))
                    }
                })
            }
            Lex::Done => None,
        }
    }

    fn value_start(&self, b: u8, levels: usize) -> Option<Self> {
        match b {
            b'"' => Some(self.with(Lex::Str {
                key: false,
                sub: StrSub::Plain,
            })),
            b'-' | b'0'..=b'9' if self.general => crate::numeric::Written::start_loose()
                .step(b, true)
                .map(|w| self.with(Lex::Written(w))),
            b'-' => Some(self.with(Lex::Num(NumSub::Minus))),
            b'0' => Some(self.with(Lex::Num(NumSub::Zero))),
            b'1'..=b'9' => Some(self.with(Lex::Num(NumSub::Int(1)))),
            b't' => Some(self.with(Lex::Lit(0, 1))),
            b'f' => Some(self.with(Lex::Lit(1, 1))),
            b'n' => Some(self.with(Lex::Lit(2, 1))),
            b'{' | b'[' => self.push(b, levels),
            _ => None,
        }
    }

    fn push(&self, open: u8, levels: usize) -> Option<Self> {
        if self.stack.len() >= levels.min(Stack::MAX) {
            return None;
        }
        let mut stack = self.stack;
        stack.push(open);
        Some(Self {
            stack,
            lex: if open == b'{' {
                Lex::ObjectStart
            } else {
                Lex::ArrayStart
            },
            ws: 0,
            general: self.general,
        })
    }

    fn pop(&self) -> Self {
        let mut stack = self.stack;
        stack.pop();
        let lex = if stack.is_empty() {
            Lex::Done
        } else {
            Lex::After
        };
        Self {
            stack,
            lex,
            ws: 0,
            general: self.general,
        }
    }
}

/// JSON mode's language built directly (a bounded-depth JSON reader determinized, no regex):
/// one JSON object nested at most `levels` levels (the object itself is level 1), at most
/// `whitespace` bytes between tokens, strings valid UTF-8 (no `\uD...` escapes), numbers as
/// in [`SchemaLanguage`].
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`.
pub fn any_object_table(
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    reader_table(Lex::Top, false, levels, whitespace, limits)
}

/// Any JSON value with at most `levels` levels of containers (`0`: strings, numbers,
/// `true`, `false`, `null` only), as the same reader builds it: what a schema without a type
/// admits ([`JsonOptions::any_depth`]). No whitespace before or after the value (the text
/// around it writes that), at most `whitespace` bytes between its tokens.
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`.
pub fn any_value_table(
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    reader_table(Lex::TopValue, false, levels, whitespace, limits)
}

/// [`any_value_table`] as general mode writes values: strings canonical (only the escapes
/// serde_json writes: `\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t` and lower-case `\u00XX`
/// for the other control characters) and numbers in the written forms of
/// [`crate::numeric`], with at most [`crate::numeric::LOOSE_INT_DIGITS`] (39) integer digits,
/// any number of fraction digits and exponents from -324 to the largest double's (untyped
/// numbers are compared with nothing, so their significant digits are not counted:
/// `0.30000000000000004`, `-2.5206876611146013`, `12345678901234567890`, `5e-324`,
/// `1.7976931348623157e+308` are written).
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`.
pub fn general_value_table(
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    reader_table(Lex::TopValue, true, levels, whitespace, limits).map(crate::dfa::Table::minimize)
}

/// JSON texts in which two different decimal numbers read as doubles are always different
/// doubles: every number with a fraction or an exponent has at most
/// [`crate::numeric::SIGNIFICANT_DIGITS`] (15) mantissa digits from its first non-zero one
/// (trailing zeros count; IEEE 754's 15 decimal digits that survive a round trip through a
/// double) and at most [`crate::numeric::LEADING_ZEROS`] (6) zeros after the point before
/// it, and exponents from -307 on (so no decimal reads as a subnormal or as zero). Integers
/// go from `i64::MIN` to `u64::MAX`, what their readers read exactly (general mode writes
/// longer ones, up to 39 digits, which a reader without big integers reads as doubles:
/// `99999999999999999999` as `1e20`; cold review). Bytes inside
/// strings are skipped (escapes included); a number is a run that starts with `-` or a
/// digit outside a string. Every state accepts: intersected with a language, it only cuts
/// the texts holding a longer number.
///
/// General mode intersects a difference of texts with it ([`crate::general`]: a negated
/// `const`/`enum` takes away the spellings of its values, which leaves
/// `1.00000000000000001`, the double `1.0`, in untyped values' loose numbers).
///
/// Errors: none in practice ([`crate::dfa::BuildError::TooLarge`] past `limits`).
pub fn doubles_distinct_table(
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    /// Where the lexer is.
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    enum At {
        Out,
        Str,
        Esc,
        /// In a number's mantissa.
        Mant(Mant),
        /// In a number's exponent (the mantissa was short enough): whether it is negative,
        /// its digits from the first non-zero one (capped one past [`LEAST_EXP`]'s) and
        /// their order against [`LEAST_EXP`]'s first ones.
        Exp(bool, u8, std::cmp::Ordering),
    }
    /// A number's mantissa so far.
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    struct Mant {
        /// Digits from the first non-zero one (capped one past the most an integer has).
        sig: u8,
        /// Zeros after the point before the first non-zero digit (capped one past the
        /// most).
        zeros: u8,
        /// A `.` was read.
        dot: bool,
        /// A `-` was read.
        neg: bool,
        /// The integer digits against the first ones of the largest integer of the sign
        /// read exactly (`u64::MAX`, `i64::MIN`).
        lim: std::cmp::Ordering,
    }
    const MOST: u8 = crate::numeric::SIGNIFICANT_DIGITS;
    const ZEROS: u8 = crate::numeric::LEADING_ZEROS;
    let fresh = |neg: bool| Mant {
        sig: 0,
        zeros: 0,
        dot: false,
        neg,
        lim: std::cmp::Ordering::Equal,
    };
    /// The digits of the most negative exponent kept (`1e-307`; `1e-308` is subnormal).
    const LEAST_EXP: &[u8] = b"307";
    let step = |at: &At, b: u8| -> Option<At> {
        use std::cmp::Ordering;
        let largest = |neg: bool| crate::numeric::LARGEST[neg as usize];
        let digit = |mut m: Mant| -> Option<At> {
            if m.sig > 0 || b != b'0' {
                if !m.dot {
                    // An integer part past the largest its sign's readers read exactly:
                    // a reader without big integers reads it as a double (`1e20` and
                    // `99999999999999999999` alike).
                    let l = largest(m.neg);
                    m.lim = crate::numeric::against(m.lim, l, m.sig as usize, b - b'0');
                    if m.lim == Ordering::Greater && m.sig as usize + 1 >= l.len() {
                        return None;
                    }
                }
                m.sig = (m.sig + 1).min(largest(false).len() as u8 + 1);
            } else if m.dot {
                m.zeros = (m.zeros + 1).min(ZEROS + 1);
            }
            if m.dot && (m.sig > MOST || m.zeros > ZEROS) {
                return None;
            }
            Some(At::Mant(m))
        };
        Some(match (*at, b) {
            (At::Str, b'\\') => At::Esc,
            (At::Str, b'"') => At::Out,
            (At::Str, _) | (At::Esc, _) => At::Str,
            (At::Mant(m), b'0'..=b'9') => return digit(m),
            (At::Mant(m), b'.') if m.sig <= MOST => At::Mant(Mant { dot: true, ..m }),
            (At::Mant(m), b'e' | b'E') if m.sig <= MOST => At::Exp(false, 0, Ordering::Equal),
            (At::Mant(..), b'.' | b'e' | b'E') => return None,
            (At::Exp(_, 0, _), b'-') => At::Exp(true, 0, Ordering::Equal),
            (At::Exp(neg, len, ord), b'0'..=b'9' | b'+') => {
                if b == b'+' || (len == 0 && b == b'0') {
                    // The sign, or Python's padding zero (`1e-05`).
                    At::Exp(neg, len, ord)
                } else if !neg {
                    // Positive exponents are not cut: one state for their digits.
                    At::Exp(false, 1, Ordering::Equal)
                } else {
                    let ord = crate::numeric::against(ord, LEAST_EXP, len as usize, b - b'0');
                    let len = (len + 1).min(LEAST_EXP.len() as u8 + 1);
                    if len as usize > LEAST_EXP.len()
                        || (len as usize == LEAST_EXP.len() && ord == Ordering::Greater)
                    {
                        return None;
                    }
                    At::Exp(true, len, ord)
                }
            }
            (At::Exp(..), b'-') => At::Out,
            // Anything else ends the number (or is outside one).
            (At::Mant(..) | At::Exp(..) | At::Out, b'"') => At::Str,
            (At::Mant(..) | At::Out, b'-') => At::Mant(fresh(true)),
            (At::Out, b'0'..=b'9') => return digit(fresh(false)),
            (At::Mant(..) | At::Exp(..) | At::Out, _) => At::Out,
        })
    };
    let mut classes = [0u8; 256];
    for (b, c) in classes.iter_mut().enumerate() {
        *c = b as u8;
    }
    let table = crate::dfa::Table::determinize_keyed(
        classes,
        256,
        At::Out,
        step,
        |_| true,
        limits,
        &mut Vec::new(),
    )?;
    Ok(table.compact())
}

/// [`typed_value_table`] types (bits of its `types`).
pub const TYPE_NULL: u8 = 1;
/// `true`, `false`.
pub const TYPE_BOOL: u8 = 2;
/// Objects.
pub const TYPE_OBJECT: u8 = 4;
/// Arrays.
pub const TYPE_ARRAY: u8 = 8;
/// Strings.
pub const TYPE_STRING: u8 = 16;
/// Numbers.
pub const TYPE_NUMBER: u8 = 32;

/// The type of a JSON value by its first byte (bits [`TYPE_NULL`] ... [`TYPE_NUMBER`]).
fn type_of_first(b: u8) -> u8 {
    match b {
        b'n' => TYPE_NULL,
        b't' | b'f' => TYPE_BOOL,
        b'{' => TYPE_OBJECT,
        b'[' => TYPE_ARRAY,
        b'"' => TYPE_STRING,
        _ => TYPE_NUMBER,
    }
}

/// [`general_value_table`] restricted to values whose type is in `types` (bits
/// [`TYPE_NULL`] ... [`TYPE_NUMBER`]): what general mode writes for the types a schema leaves
/// unconstrained, one cached reader instead of each type's structure. Cached per
/// `(types, levels, whitespace)`.
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`.
pub fn typed_value_table(
    types: u8,
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<std::sync::Arc<crate::dfa::Table>, crate::dfa::BuildError> {
    cached_reader(ReaderKind::Typed(types), levels, whitespace, limits)
}

/// The byte columns of the reader tables (classes, how many): every byte `Reader::step` or
/// `numeric::Written::step` names on its own (structure, whitespace, digits, signs, the
/// literals' and escapes' letters, hex digits), and between them runs of bytes both treat
/// alike (the UTF-8 lead and continuation ranges, control bytes, other printable ASCII). A
/// reader steps one byte per column instead of all 256 (`reader_classes_are_the_readers`
/// checks the tables against one column per byte).
fn reader_classes() -> ([u8; 256], usize) {
    const NAMED: &[u8] = b"\t\n\r \"\\/0123456789+-.eE,:{}[]truefalsnbABCDEFabcdef";
    /// Where a run of bytes treated alike begins (UTF-8: continuation bytes by the lead
    /// bytes' bounds 0x8f/0x9f, the invalid leads, the leads by length and bounds).
    const RUNS: &[u8] = &[
        0x00, 0x20, 0x80, 0x90, 0xa0, 0xc0, 0xc2, 0xe0, 0xe1, 0xed, 0xee, 0xf0, 0xf1, 0xf4, 0xf5,
    ];
    let mut starts = [false; 257];
    for &b in RUNS {
        starts[b as usize] = true;
    }
    for &b in NAMED {
        starts[b as usize] = true;
        starts[b as usize + 1] = true;
    }
    let mut classes = [0u8; 256];
    let mut n = 0usize;
    for (b, c) in classes.iter_mut().enumerate() {
        if starts[b] && b > 0 {
            n += 1;
        }
        *c = n as u8;
    }
    (classes, n + 1)
}

/// The general reader ([`general_value_table`]) of the values whose first byte is of a type
/// in `types` ([`type_of_first`]), determinized from that first byte on: only what such
/// values reach is built (a string or number reader is a few dozen states, never the
/// containers' thousands; `typed_readers_are_the_general_reader_restricted` checks every
/// `types` against the general reader restricted). `cached_reader` builds only the readers
/// of scalar types this way; for a set with objects or arrays it restricts the cached
/// general reader.
///
/// Errors: [`crate::dfa::BuildError::TooLarge`] past `limits`.
fn typed_reader_table(
    types: u8,
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    let first = |b| types & type_of_first(b) != 0;
    reader_table_from(Lex::TopValue, true, first, levels, whitespace, limits)
}

/// The reader determinized from `start` (`Lex::Top`: one object; `Lex::TopValue`: one value).
fn reader_table(
    start: Lex,
    general: bool,
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    reader_table_from(start, general, |_| true, levels, whitespace, limits)
}

/// [`reader_table`] with its first byte restricted to those `first` keeps (neither start
/// is stepped back to).
fn reader_table_from(
    start: Lex,
    general: bool,
    first: impl Fn(u8) -> bool,
    levels: usize,
    whitespace: usize,
    limits: &crate::dfa::Limits,
) -> Result<crate::dfa::Table, crate::dfa::BuildError> {
    let (classes, stride) = reader_classes();
    let start = Reader {
        stack: Stack::default(),
        lex: start,
        ws: 0,
        general,
    };
    let mut keys = Vec::new();
    let table = crate::dfa::Table::determinize_keyed(
        classes,
        stride,
        start.clone(),
        |r: &Reader, b| {
            if *r == start && !first(b) {
                return None;
            }
            r.step(b, levels, whitespace)
        },
        Reader::complete,
        limits,
        &mut keys,
    )?;
    Ok(table.compact())
}
