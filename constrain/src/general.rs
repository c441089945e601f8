//! General JSON Schema -> regular language: the general mode of [`crate::json`]
//! ([`crate::json::SchemaMode::General`]).
//!
//! A schema is read as draft 2020-12 with the spellings of drafts 4, 6 and 7 (`definitions`,
//! `id`, `dependencies`, array-form `items` with `additionalItems`, boolean
//! `exclusiveMinimum`/`exclusiveMaximum`); the root's `$schema` picks the draft where they
//! differ (else the mode's draft). Unknown keywords and annotations are ignored, so are
//! keywords newer than that draft (`const` under draft 4, `if` under draft 6,
//! `dependentRequired` or `unevaluatedProperties` under draft 7, `prefixItems` under
//! 2019-09), as that draft's validators ignore them.
//!
//! Every schema place is first *collected* into a node: the conjunction of its keywords,
//! of the schemas `allOf` and `$ref` apply at the same place (merged structurally: object
//! properties keep their first order of appearance, as llguidance merges them), and of
//! disjunctions (`anyOf`, `oneOf`, `if`/`then`/`else`, `not`, dependencies) kept for later.
//! Sub-schemas (properties, items) stay unread until their place is generated, so recursion
//! is unrolled only as deep as generation goes ([`JsonOptions::max_recursion`] entries of one
//! `$ref` target per path, as in strict mode). Then each node is *generated*: disjunctions
//! are expanded (each alternative merged into the node), and each JSON type the node admits
//! becomes a language, as HIR where a regular expression says it, or as an automaton
//! ([`crate::dfa::Table`]) in a slot ([`crate::json::Slots`]) where it takes intersection or
//! difference.
//!
//! What is written (the language is a subset of the valid instances; where it is smaller,
//! it says so here):
//!
//! * strings are written canonically, as serde_json writes them (escapes only for `"`, `\`
//!   and control characters): so keys, patterns and negations are exact over them.
//!   `minLength`/`maxLength` count characters (an escape is one); a maximum above
//!   [`JsonOptions::max_count`] is generated as that many. `pattern` is ECMA-262 found
//!   anywhere in the string; `^` at the start and `$` at the end of the pattern (or of a
//!   top-level alternative, also after alternations holding anchors are distributed:
//!   `^(?:in|out)$`, `^a|^b$`) anchor it, and negative look-aheads right after a leading
//!   `^` (`^(?!A)R`) are a difference of automata (other anchors, look-around and word
//!   boundaries are refused).
//!   Formats of [`crate::formats`] are asserted (as subsets of their RFC grammars); other
//!   formats are annotations;
//! * numbers in the written forms of [`crate::numeric`] (what `u64`/`i64`/`f64` readers
//!   read exactly), with exact bounds (any size), integer-ness (draft 4: by form) and
//!   `multipleOf` (then without the scientific form, except for integer values when every
//!   integer is a multiple; with a fractional `multipleOf`, within ±2^53, where doubles hold
//!   every integer); formats `int32`/`int64` bound integers;
//! * objects: the declared properties (`properties` in order of first appearance, then
//!   `required` names not declared there, in `required` order), each optional one may be
//!   left out at any position; then, in any order and number, members whose keys are not
//!   declared: keys matching `patternProperties` with those schemas, other keys with
//!   `additionalProperties` (absent: any value, or none when the mode's `closed` is set).
//!   This is llguidance's order (docs/json_schema.md, "Property order"), so the same
//!   instances are accepted. Undeclared keys are never repeated names of declared ones; they
//!   may repeat among themselves. `propertyNames` restricts every key;
//!   `dependentRequired`, `dependentSchemas` and `dependencies` are alternatives (the
//!   property absent, or present with what it requires: those names after `required`);
//! * arrays: `prefixItems` (or array `items`), `items` (or `additionalItems`), `minItems`,
//!   `maxItems` (above [`JsonOptions::max_count`]: that many), `contains` with
//!   `minContains`/`maxContains`; `uniqueItems` is **not enforced** (arrays with repeated
//!   items are written);
//! * `enum`/`const`: the values with every written spelling of their numbers, objects in
//!   their own key order;
//! * `anyOf` as alternation; `oneOf` exclusive where each pair of branches is provably
//!   disjoint (different types, different constants, a required property with different
//!   constants) or the other branch can be negated, and **otherwise as `anyOf`** (an instance
//!   valid for two branches is written); `allOf` merged; `not` and `if`/`then`/`else` where
//!   the negated schema is a conjunction of negatable keywords (types, `enum`/`const` of
//!   scalars and of objects with at most one member, string lengths and patterns, numeric
//!   bounds and `multipleOf`, `required`, array lengths, nested `not`/`anyOf`/`allOf`);
//!   a property's schema inside such a negation ("present, and not this") that cannot be
//!   negated itself (`items`, `contains`, formats, ...) leaves out that alternative only
//!   (**fewer instances**: e.g. a `oneOf` branch is not written with that property's value
//!   outside the other branch's schema);
//! * untyped values (`{}`, `true`, missing `items`, additional properties) nested at most
//!   [`JsonOptions::any_depth`] levels.
//!
//! Refused, with a [`CompileError`] whose pointer ends with the keyword: `$dynamicRef`,
//! `$recursiveRef`, `unevaluatedProperties`/`unevaluatedItems` (unless `true`),
//! `minProperties` above 0 and `maxProperties`, references to other documents, `not` or
//! `if` of what cannot be negated, patterns with inner anchors, look-around (but for
//! leading negative look-aheads) or backreferences, and budgets.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use regex_syntax::hir::{Hir, HirKind, Look};
use serde_json::{Map, Value};

use structured_outputs::schema::escape_token;

use crate::dfa::{Budget, BuildError, Limits, Table};
use crate::json::{
    alt, cat, encode_pattern, err, lit, no_value, opt, repeat, untyped, CompileError, Draft,
    JsonOptions, SchemaHir, Slots, Writer,
};
use crate::numeric::{Bound, Decimal, NumberError, NumberSpec};
use crate::refs::{Refs, DEFAULT_BASE};

const NULL: u8 = 1;
const BOOL: u8 = 2;
const OBJECT: u8 = 4;
const ARRAY: u8 = 8;
const STRING: u8 = 16;
const INTEGER: u8 = 32;
const FRACTION: u8 = 64;
const NUMBER: u8 = INTEGER | FRACTION;
const ALL: u8 = 127;

/// Most alternatives one disjunction expansion may give (products of `anyOf`s, negations,
/// dependencies).
const MAX_ALTERNATIVES: usize = 256;
/// Most key classes of one object (from overlapping `patternProperties`).
const MAX_KEY_CLASSES: usize = 64;
/// Most multiples of a too fine `multipleOf` enumerated in a bounded range.
const MAX_MULTIPLES: usize = 256;
/// Slot tables are minimized up to this many states.
const MINIMIZE_UP_TO: usize = 100_000;
/// The tables of strings with several constraints ([`General::gen_string`]), kept
/// process-wide: at most 256 of them and 64 MiB, 16 MiB each.
static STRING_TABLES: crate::dfa::KeptTables = crate::dfa::KeptTables::new(256, 64 << 20, 4);
/// The tables of values read from slots ([`General::slot_of_value`]), kept process-wide by
/// [`General::content_key`]: at most 4,096 of them and 128 MiB, 8 MiB each.
static VALUE_TABLES: crate::dfa::KeptTables = crate::dfa::KeptTables::new(4096, 128 << 20, 16);
/// The objects of optional members ([`General::optional_members`]), kept process-wide by
/// [`General::content_key`] of their skeleton's HIR: at most 4,096 of them and 128 MiB,
/// 8 MiB each.
static OBJECT_TABLES: crate::dfa::KeptTables<Spliced> =
    crate::dfa::KeptTables::new(4096, 128 << 20, 16);
/// The keys of an object no declared name takes, per list of names ([`General::key_classes`]),
/// kept process-wide: an object generated in many places takes the same difference each
/// time (the Store's `tox.json`: 19,186 differences of 11 lists, 0.57 s, before child
/// places were reused), and schemas of one family declare the same objects (Kubernetes'
/// metadata in every resource). At most 256 tables and 16 MiB, 1 MiB each.
static KEY_UNIVERSES: crate::dfa::KeptTables = crate::dfa::KeptTables::new(256, 16 << 20, 16);
/// Meta-schemas outside json-schema.org known to extend a draft without changing what its
/// keywords mean, by a part of their URI, and the draft they extend: Snowplow's Iglu
/// self-describing schemas (`http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/
/// schema/jsonschema/1-0-0#`, draft 4 plus the `self` keyword, an annotation here).
const EXTENSIONS: &[(&str, Draft)] = &[(
    "iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/",
    Draft::Draft4,
)];
/// The draft a `$schema` URI names: a meta-schema read as an extension of a draft
/// ([`EXTENSIONS`]), else a draft's own ([`Draft::from_schema_uri`]).
fn named_draft(uri: &str) -> Option<Draft> {
    EXTENSIONS
        .iter()
        .find(|(prefix, _)| uri.contains(prefix))
        .map(|&(_, draft)| draft)
        .or_else(|| Draft::from_schema_uri(uri))
}

/// Regex nodes (a bounded repetition counted once per copy) past which a property's or an
/// item's value is built as its own automaton ([`General::large_as_slot`]).
const SLOT_FROM: usize = 2_000;
/// The estimated automaton size ([`crate::json::hir_weight`]) past which an object's values
/// are not all written into its automaton: the heaviest ones are read from slots of their
/// own until the rest fit ([`General::gen_object`]).
const OBJECT_WEIGHT: usize = 5_000;
/// The estimated automaton size of an array item's copies (the first item and the
/// repetition of the others: two for an unbounded array) past which the item is read from
/// a slot of its own outside alternatives of disjunctions ([`General::items_weight`]).
/// Written inline, each copy is determinized apart until the table is minimized, so
/// arrays nested in arrays double their items' states per level (Kubernetes'
/// `ResourceClaim`: a toleration object under three levels of arrays, 5,097 states
/// minimized to 737).
const ITEMS_ALONE_WEIGHT: usize = 300;

/// How many times the states of the objects [`General::merge_objects`] merges together
/// (their tables with values, or an inline object's skeleton) their merged table may have;
/// past it, they are kept apart.
const MERGED_GROWTH: usize = 2;

/// The most states of an inline object's skeleton [`General::merge_objects`] merges.
const INLINE_SKELETON_UP_TO: usize = 4_096;

/// A string's language (one bound, format or pattern) weighing more than this
/// ([`crate::json::hir_weight`]: a `maxLength` counts each character it may write, so
/// `maxLength` from about 100 on, and formats such as `email`, `uri` or `hostname`) is one
/// minimized table, kept process-wide (`STRING_TABLES`) and read in place wherever a schema
/// reads it, rather than HIR that each schema determinizes and minimizes again (as a slot
/// of its own, or as states of the object that holds it): `maxLength: 4096` (cut to
/// `JsonOptions::max_count` characters) minimizes from about 12,800 states to 3,600, once
/// per process. Snowplow's compile p50 2.5-3.0 -> 0.8-1.0 ms.
const STRING_SLOT_FROM: usize = 1_000;
/// Regex nodes up to which an object of optional members is written in the quadratic form
/// ([`General::quadratic`]) inside an alternative of a disjunction (`oneOf`, `anyOf`,
/// `if`/`then`/`else`, dependencies, the complements of a `not`; at any depth): there,
/// objects whose values are slots of their own are read side by side with the other
/// alternatives' where the union reads one key in both, and copied with every value they
/// call (the Store's `host.json`, a `oneOf` of two versions: 41 -> 155-200 ms with the
/// lower bound below).
const QUADRATIC_UP_TO: usize = 4_096;
/// Regex nodes up to which an object of optional members is written in the quadratic form
/// outside alternatives. The quadratic form writes member j j + 1 times; its determinized
/// table is several times the minimal one until minimized (Kubernetes' `EphemeralContainer`
/// skeleton: 11,228 states, 2,840 minimized; its `Probe` values, ten optional members, are
/// written three times). Warm compiles (`coldwarm`, two interleaved runs, sum over the
/// corpus) against 4,096: Kubernetes 726-774 -> 508-510 ms (its slowest 10% from 5.9-6.3
/// ms on -> 3.85), Snowplow 730-737 -> 612 ms; functions and the suite level.
const QUADRATIC_ALONE_UP_TO: usize = 512;

/// Most nested values generated (bounds the stack).
const MAX_DEPTH: usize = 96;

/// The draft that introduced keyword `key` (of those read here; draft 4 for the others): a
/// schema of an earlier draft ignores it, as that draft's validators do (Python
/// `jsonschema`'s per-draft keyword tables).
fn since(key: &str) -> Draft {
    match key {
        "const" | "contains" | "propertyNames" => Draft::Draft6,
        "if" => Draft::Draft7,
        "dependentRequired"
        | "dependentSchemas"
        | "minContains"
        | "maxContains"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "$recursiveRef" => Draft::Draft2019,
        "prefixItems" | "$dynamicRef" => Draft::Draft2020,
        _ => Draft::Draft4,
    }
}

/// How one JSON type of a node is generated.
type Generator<'a> = fn(&mut General<'a>, &Node<'a>, &str) -> Result<Option<Hir>, CompileError>;

/// A schema place: the schema, its JSON pointer, the base URI of its parent.
#[derive(Debug, Clone)]
struct At<'a> {
    schema: &'a Value,
    pointer: String,
    base: Rc<str>,
}

/// A schema a place must meet (`Is`) or must not meet (`Not`: a negated property schema).
#[derive(Debug, Clone)]
enum Sub<'a> {
    Is(At<'a>),
    Not(At<'a>),
}

#[derive(Debug, Clone, Default)]
struct Strs {
    min: u64,
    max: Option<u64>,
    /// Where `min` and `max` were set (`.../minLength`; a negated bound's keyword).
    min_at: Option<String>,
    max_at: Option<String>,
    /// `(pattern, pointer)`.
    patterns: Vec<(String, String)>,
    not_patterns: Vec<(String, String)>,
    /// Asserted formats (names).
    formats: Vec<String>,
    /// A format that cannot be negated was collected (its pointer).
    format_at: Option<String>,
}

#[derive(Debug, Clone, Default)]
struct Nums {
    lo: Option<Bound>,
    hi: Option<Bound>,
    multiple_of: Vec<(Decimal, String)>,
    not_multiple_of: Vec<(Decimal, String)>,
}

#[derive(Debug, Clone)]
struct Contains<'a> {
    schema: At<'a>,
    min: u64,
    max: Option<u64>,
    /// Pointer of `maxContains` (for errors).
    pointer: String,
}

impl Contains<'_> {
    /// Whether the array counts its items meeting the schema (`minContains` above 0 or a
    /// `maxContains`): `minContains: 0` alone holds for every array.
    fn counts(&self) -> bool {
        self.min > 0 || self.max.is_some()
    }
}

#[derive(Debug, Clone, Default)]
struct Arrs<'a> {
    /// Per position, the schemas it must meet (`prefixItems`, array `items`).
    prefix: Vec<Vec<At<'a>>>,
    /// Schemas every position past the prefixes meets (`items`, `additionalItems`).
    rest: Vec<At<'a>>,
    /// Some schema's prefix ends without a rest schema for what follows: `false` there.
    min: u64,
    max: Option<u64>,
    /// Where `min` and `max` were set (`.../minItems`; a negated bound's keyword).
    min_at: Option<String>,
    max_at: Option<String>,
    contains: Vec<Contains<'a>>,
    /// Where a keyword that cannot be negated was collected.
    structure_at: Option<String>,
}

/// One schema's object keywords that apply to keys it does not declare.
#[derive(Debug, Clone)]
struct Group<'a> {
    declared: Vec<String>,
    patterns: Vec<(String, At<'a>)>,
    /// `additionalProperties` (`None`: absent).
    additional: Option<At<'a>>,
}

#[derive(Debug, Clone, Default)]
struct Objs<'a> {
    /// Declared properties in order of first appearance, with every schema declaring them.
    props: Vec<(String, Vec<Sub<'a>>)>,
    required: Vec<String>,
    forbidden: Vec<String>,
    groups: Vec<Group<'a>>,
    names: Vec<At<'a>>,
    /// `minProperties`, `maxProperties`.
    min: u64,
    max: Option<u64>,
    /// Where `min` and `max` were set (`.../minProperties`; a negated bound's keyword).
    min_at: Option<String>,
    max_at: Option<String>,
    /// Where a keyword that cannot be negated was collected.
    structure_at: Option<String>,
}

/// An object's skeleton kept with its slot ([`General::skeleton_kept`]).
#[derive(Debug, Clone)]
struct Kept {
    /// The object's table before its values were spliced in.
    skeleton: Skeleton,
    /// The budget states of the table with them ([`Table::budget_states`]).
    states: usize,
    /// Merged again only under [`General::merge_objects`]'s bound: a counted object's
    /// ([`General::slot_of_both`]) or a merge holding counted or inline objects; else one
    /// of optional members ([`General::optional_members`]) or their merge.
    bounded: bool,
}

/// An object's skeleton ([`Kept`]): its table, whose placeholders are this compile's slot
/// numbers, or, for an object of optional members, what builds it
/// ([`General::optional_skeleton`], when [`General::merge_objects`] needs it). A kept
/// object ([`OBJECT_TABLES`]) found in another compile has its skeleton built from this
/// compile's HIR: the skeleton that compile built reads its own slot numbers.
#[derive(Debug, Clone)]
enum Skeleton {
    Built(Arc<Table>),
    Optional {
        written: Hir,
        count: Option<(u64, Option<u64>)>,
        may_be_empty: bool,
    },
}

/// An object's table with its values spliced in and minimized, with its budget states
/// before ([`Table::budget_states`]): what [`OBJECT_TABLES`] keeps (no skeleton: see
/// [`Skeleton`]).
#[derive(Clone)]
struct Spliced {
    table: Arc<Table>,
    states: usize,
}

impl Spliced {
    /// `spliced` minimized, with its budget states.
    fn of(spliced: Table) -> Self {
        Spliced {
            states: spliced.budget_states(),
            table: Arc::new(General::minimized(spliced)),
        }
    }
}

impl crate::dfa::Keepable for Spliced {
    fn memory(&self) -> usize {
        self.table.memory()
    }
}

/// The constraints collected at one place of the value; see the module documentation.
#[derive(Debug, Clone)]
struct Node<'a> {
    types: u8,
    /// `enum`/`const`: the only values (`None`: any).
    literals: Option<Vec<Value>>,
    /// Values ruled out (negated `enum`/`const`).
    excluded: Vec<Value>,
    string: Strs,
    number: Nums,
    array: Arrs<'a>,
    object: Objs<'a>,
    /// Disjunctions: each list is an `or`, the lists are `and`ed.
    disj: Vec<Vec<Alt<'a>>>,
    /// `$ref` targets entered at this place.
    refs: Vec<String>,
}

/// One alternative of a disjunction: a node to merge and schemas to collect.
#[derive(Debug, Clone)]
struct Alt<'a> {
    node: Node<'a>,
    schemas: Vec<At<'a>>,
}

impl<'a> Alt<'a> {
    fn schema(at: At<'a>) -> Self {
        Self {
            node: Node::any(),
            schemas: vec![at],
        }
    }

    fn node(node: Node<'a>) -> Self {
        Self {
            node,
            schemas: Vec::new(),
        }
    }
}

impl<'a> Node<'a> {
    fn any() -> Self {
        Self::of(ALL)
    }

    fn of(types: u8) -> Self {
        Self {
            types,
            literals: None,
            excluded: Vec::new(),
            string: Strs::default(),
            number: Nums::default(),
            array: Arrs::default(),
            object: Objs::default(),
            disj: Vec::new(),
            refs: Vec::new(),
        }
    }

    /// Whether nothing but the types constrains the node.
    fn only_types(&self) -> bool {
        self.literals.is_none()
            && self.excluded.is_empty()
            && self.disj.is_empty()
            && self.string_free()
            && self.number_free()
            && self.array_free()
            && self.object_free()
    }

    fn string_free(&self) -> bool {
        let s = &self.string;
        s.min == 0
            && s.max.is_none()
            && s.patterns.is_empty()
            && s.not_patterns.is_empty()
            && s.formats.is_empty()
    }

    fn number_free(&self) -> bool {
        let n = &self.number;
        n.lo.is_none() && n.hi.is_none() && n.multiple_of.is_empty() && n.not_multiple_of.is_empty()
    }

    fn array_free(&self) -> bool {
        let a = &self.array;
        a.prefix.is_empty()
            && a.rest.is_empty()
            && a.min == 0
            && a.max.is_none()
            && a.contains.is_empty()
    }

    fn object_free(&self) -> bool {
        let o = &self.object;
        o.props.is_empty()
            && o.required.is_empty()
            && o.forbidden.is_empty()
            && o.groups.is_empty()
            && o.names.is_empty()
            && o.min == 0
            && o.max.is_none()
    }

    /// The types every value of which meets `self` (bits of [`ALL`]; numbers count as one
    /// type: both bits or neither): none where `self` lists values, rules some out, or
    /// holds a disjunction (`anyOf`, `oneOf`, `not`, `if`, dependencies). `closed`: a
    /// closed compile writes `self`'s objects closed, so not every object meets it.
    fn total_types(&self, closed: bool) -> u8 {
        if self.literals.is_some() || !self.excluded.is_empty() || !self.disj.is_empty() {
            return 0;
        }
        let free = [
            (NULL, true),
            (BOOL, true),
            (
                OBJECT,
                !closed && self.object_free() && self.object.structure_at.is_none(),
            ),
            (
                ARRAY,
                self.array_free() && self.array.structure_at.is_none(),
            ),
            (
                STRING,
                self.string_free() && self.string.format_at.is_none(),
            ),
            (NUMBER, self.number_free()),
        ];
        free.iter()
            .filter(|&&(t, free)| free && self.types & t == t)
            .fold(0, |all, &(t, _)| all | t)
    }

    /// The conjunction of `self` and `other`.
    fn merge(&mut self, other: Node<'a>) {
        self.types &= other.types;
        if let Some(theirs) = other.literals {
            self.restrict_literals(theirs);
        }
        self.excluded.extend(other.excluded);
        let (s, o) = (&mut self.string, other.string);
        raise_min(&mut s.min, &mut s.min_at, o.min, o.min_at);
        lower_max(&mut s.max, &mut s.max_at, o.max, o.max_at);
        s.patterns.extend(o.patterns);
        s.not_patterns.extend(o.not_patterns);
        s.formats.extend(o.formats);
        s.format_at = s.format_at.take().or(o.format_at);
        let (n, o) = (&mut self.number, other.number);
        if let Some(lo) = o.lo {
            n.lo = Some(tighter(n.lo.take(), lo, std::cmp::Ordering::Greater));
        }
        if let Some(hi) = o.hi {
            n.hi = Some(tighter(n.hi.take(), hi, std::cmp::Ordering::Less));
        }
        n.multiple_of.extend(o.multiple_of);
        n.not_multiple_of.extend(o.not_multiple_of);
        let o = other.array;
        self.merge_items(o.prefix, o.rest);
        let a = &mut self.array;
        raise_min(&mut a.min, &mut a.min_at, o.min, o.min_at);
        lower_max(&mut a.max, &mut a.max_at, o.max, o.max_at);
        a.contains.extend(o.contains);
        a.structure_at = a.structure_at.take().or(o.structure_at);
        let o = other.object;
        for (name, schemas) in o.props {
            self.add_property(name, schemas);
        }
        let ob = &mut self.object;
        for r in o.required {
            if !ob.required.contains(&r) {
                ob.required.push(r);
            }
        }
        for f in o.forbidden {
            if !ob.forbidden.contains(&f) {
                ob.forbidden.push(f);
            }
        }
        ob.groups.extend(o.groups);
        ob.names.extend(o.names);
        raise_min(&mut ob.min, &mut ob.min_at, o.min, o.min_at);
        lower_max(&mut ob.max, &mut ob.max_at, o.max, o.max_at);
        ob.structure_at = ob.structure_at.take().or(o.structure_at);
        self.disj.extend(other.disj);
        for r in other.refs {
            if !self.refs.contains(&r) {
                self.refs.push(r);
            }
        }
    }

    fn restrict_literals(&mut self, theirs: Vec<Value>) {
        self.literals = Some(match self.literals.take() {
            None => theirs,
            Some(mine) => mine
                .into_iter()
                .filter(|v| theirs.iter().any(|t| same_value(v, t)))
                .collect(),
        });
    }

    fn add_property(&mut self, name: String, schemas: Vec<Sub<'a>>) {
        match self.object.props.iter_mut().find(|(n, _)| *n == name) {
            Some((_, list)) => list.extend(schemas),
            None => self.object.props.push((name, schemas)),
        }
    }

    /// One schema's positional items (`prefix`, then `rest` for every later position;
    /// `rest` `None`: no constraint past the prefix).
    fn merge_items(&mut self, prefix: Vec<Vec<At<'a>>>, rest: Vec<At<'a>>) {
        let a = &mut self.array;
        let old = a.prefix.len();
        if prefix.len() > old {
            for _ in old..prefix.len() {
                a.prefix.push(a.rest.clone());
            }
        }
        for k in 0..a.prefix.len() {
            match prefix.get(k) {
                Some(p) => a.prefix[k].extend(p.iter().cloned()),
                None => a.prefix[k].extend(rest.iter().cloned()),
            }
        }
        a.rest.extend(rest);
    }
}

/// The tighter of two bounds: `keep` is the order of the value that wins (greater for lower
/// bounds); on a tie the exclusive one.
fn tighter(current: Option<Bound>, new: Bound, keep: std::cmp::Ordering) -> Bound {
    match current {
        None => new,
        Some(cur) => match new.0.cmp_value(&cur.0) {
            o if o == keep => new,
            std::cmp::Ordering::Equal => (cur.0, cur.1 || new.1),
            _ => cur,
        },
    }
}

/// JSON Schema equality: numbers by value, objects without regard to member order.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (Decimal::of(x), Decimal::of(y)) {
            (Some(x), Some(y)) => x.cmp_value(&y) == std::cmp::Ordering::Equal,
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// The type bit of a value (numbers: by value).
fn type_of(v: &Value) -> u8 {
    match v {
        Value::Null => NULL,
        Value::Bool(_) => BOOL,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
        Value::Number(n) => match Decimal::of(n) {
            Some(d) if d.is_integer() => INTEGER,
            _ => FRACTION,
        },
    }
}

/// Whether every instance equal to `v` is one of its spellings (no object with two or more
/// members: their other orders are not written).
fn spelled_exactly(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.len() <= 1 && m.values().all(spelled_exactly),
        Value::Array(items) => items.iter().all(spelled_exactly),
        _ => true,
    }
}

/// The general-mode compiler of one document.
struct General<'a> {
    doc: &'a Value,
    options: JsonOptions,
    closed: bool,
    draft: Draft,
    limits: Limits,
    refs: Refs,
    writer: Writer,
    slots: Slots,
    /// `$ref` targets entered on the current generation path.
    path: Vec<String>,
    /// The first required property without a value.
    cut: Option<String>,
    work: usize,
    depth: usize,
    /// Schemas being collected into one another (`$ref` chains, nested `allOf`).
    collecting: usize,
    /// Negations being built ([`Self::negate`]): inside one, keywords general mode applies
    /// beyond the schema's draft (`dependencies` from 2019-09 on) are ignored, as that draft's
    /// validators ignore them, so a complement never admits what they would refuse.
    negating: usize,
    /// Negations being complemented within one another ([`Self::complement`]).
    complementing: usize,
    numbers: HashMap<NumberSpec, Hir>,
    /// Slots of typed untyped values ([`Self::typed_value`]).
    typed: HashMap<u8, Hir>,
    /// Slots of values ([`Self::slot_of_value`]) by their [`Self::content_key`], else the
    /// digest of their HIR ([`crate::dfa::digest`], however large the HIR): the same value
    /// in many places is one table (a key bounded by the HIR's printed length built the Store's `hatch.json`
    /// value of 24,432 states 96 times).
    values: HashMap<(u64, u64), Option<Hir>>,
    /// Per slot (by index), the key of what determines its table, when known
    /// ([`Self::content_key`]): a value's HIR with each slot it reads written as that slot's
    /// key, or the parts of a string's table. A slot without one makes every value that
    /// reads it unkept across compiles.
    slot_keys: Vec<Option<(u64, u64)>>,
    /// The JSON options as [`Self::content_key`] writes them (their `Debug` text: every
    /// field).
    options_key: String,
    /// Slots by their tables ([`Table::rows_hash`]): the same automaton is one slot.
    by_rows: HashMap<u64, Vec<(Arc<Table>, Hir)>>,
    /// Per slot of a whole object built by [`Self::optional_members`] or counted
    /// ([`Self::slot_of_both`]; by its placeholder's bytes): its table before the values
    /// were spliced in (keys, value placeholders, commas), the budget states of the table
    /// with them ([`Table::budget_states`]), and whether it is counted, so that
    /// alternatives of such objects are one table ([`Self::merge_objects`]).
    skeletons: HashMap<Vec<u8>, Kept>,
    matchers: HashMap<String, Option<regex_automata::meta::Regex>>,
    /// The languages of child places already generated ([`Self::child_language`]), by
    /// [`Self::child_key`]: a place met again in the same state (an object in each
    /// alternative of a disjunction, a `$ref` unrolled along paths that enter the same
    /// references in another order) is generated once (the Store's `tox.json`: 142,169
    /// child places, 15,300 distinct).
    children: HashMap<(u64, u64), Child>,
    /// HIR nodes held by `children` ([`crate::json::hir_size`]), at most [`CHILDREN_NODES`].
    children_nodes: usize,
    /// How many alternatives of disjunctions (of two or more) the value being generated is
    /// inside, at any depth: objects of optional members there are written quadratically
    /// up to [`QUADRATIC_UP_TO`], elsewhere up to [`QUADRATIC_ALONE_UP_TO`]. Either form
    /// has the same language, so a child language generated inside one and reused outside
    /// ([`Self::child_language`]) is the same language too. The smaller automaton can let
    /// `template::with_shallow_retry`'s first try (untyped values five levels deep, within a
    /// quarter of the state limit) fit where the quadratic form failed it and the schema
    /// was built again three levels deep: such a schema now takes its untyped values nested
    /// four and five levels deep too (more of its valid documents, never an invalid one).
    within_alternatives: usize,
}

/// A value's HIR keyed by what it means ([`General::content_key`]).
struct Content<'k> {
    hir: &'k Hir,
    keys: &'k [Option<(u64, u64)>],
    /// [`General::options_key`].
    options: &'k str,
    /// Set when a placeholder's slot has no key.
    unknown: std::cell::Cell<bool>,
}

impl crate::dfa::DigestKey for Content<'_> {
    fn write_key(&self, out: &mut crate::dfa::KeyWriter) {
        self.options.write_key(out);
        out.bytes(&[u8::from(crate::dfa::sharing())]);
        crate::dfa::write_hir_key(self.hir, out, &mut |l, out| {
            // Runs of plain bytes (tag 0, length, bytes) and slots (tag 1, the slot's key),
            // then tag 2.
            let mut i = 0;
            while i < l.len() {
                let run = l[i..].iter().position(|&b| b == crate::json::SLOT);
                let end = run.map_or(l.len(), |r| i + r);
                if end > i {
                    out.bytes(&[0]);
                    out.len_of(end - i);
                    out.bytes(&l[i..end]);
                }
                if end == l.len() {
                    break;
                }
                let key = l
                    .get(end + 1..end + 4)
                    .map(crate::json::slot_index)
                    .and_then(|index| self.keys.get(index).copied().flatten());
                match key {
                    Some(k) => {
                        out.bytes(&[1]);
                        k.write_key(out);
                    }
                    None => self.unknown.set(true),
                }
                i = end + 4;
            }
            out.bytes(&[2]);
        });
    }
}

/// A child place's language as [`General::child_language`] generated it, and the schema
/// places generating it collected (`General::work`), counted again when the language is
/// reused, so that the place budget ([`General::max_places`]) ends a compile exactly where
/// generating everything again would. (The other thing generating does besides, noting the first
/// required property without a value in `General::cut`, needs nothing: once noted it is
/// never cleared, so generating the place again would change nothing.)
struct Child {
    value: Option<Hir>,
    work: usize,
}

/// Most HIR nodes [`General::child_language`] keeps for reuse in one compile (each
/// language is at most [`SLOT_FROM`] nodes: a larger one is a slot).
const CHILDREN_NODES: usize = 1 << 20;

/// Compiles `document` in general mode (see the module documentation).
///
/// Errors: a keyword general mode does not generate, or a budget; see the module
/// documentation.
pub(crate) fn compile(
    document: &Value,
    options: JsonOptions,
    closed: bool,
    draft: Draft,
    limits: &Limits,
) -> Result<SchemaHir, CompileError> {
    let meta = match document.get("$schema") {
        None => None,
        Some(Value::String(uri)) => Some(uri.as_str()),
        // Python's `validator_for` fails on it.
        Some(_) => return Err(err("/$schema", "must be a string")),
    };
    let named = meta.and_then(named_draft);
    if let (Some(uri), None) = (meta, named) {
        if crate::json::is_draft3_uri(uri) {
            return Err(err(
                "/$schema",
                "draft 3 is not generated (its required: true, extends, disallow and \
                 divisibleBy are not read); use draft 4 or later",
            ));
        }
        if !uri.to_ascii_lowercase().contains("json-schema.org") {
            return Err(err(
                "/$schema",
                format!(
                    "$schema {uri:?} is not a json-schema.org meta-schema (a custom meta-schema \
                     may change what the keywords mean)"
                ),
            ));
        }
    }
    let draft = named.unwrap_or(draft);
    let mut g = General::new(document, options, closed, draft, limits);
    let root = At {
        schema: document,
        pointer: String::new(),
        base: Rc::from(DEFAULT_BASE),
    };
    let mut node = Node::any();
    g.collect(&mut node, &root)?;
    let hir = g
        .gen(node, "")?
        .ok_or_else(|| no_value(g.cut.take(), options.max_recursion))?;
    g.writer.check_size(std::slice::from_ref(&hir), 1, "")?;
    Ok(SchemaHir {
        hir,
        slots: g.slots,
    })
}

fn budget(pointer: &str, reason: impl Into<String>) -> CompileError {
    CompileError {
        budget: Some(Budget::SchemaNodes),
        ..err(pointer, reason)
    }
}

/// Table operations whose errors name the schema place.
trait TableOps {
    fn and_in(&self, other: &Table, limits: &Limits, pointer: &str) -> Result<Table, CompileError>;
    fn minus_in(
        &self,
        other: &Table,
        limits: &Limits,
        pointer: &str,
    ) -> Result<Table, CompileError>;
}

impl TableOps for Table {
    fn and_in(&self, other: &Table, limits: &Limits, pointer: &str) -> Result<Table, CompileError> {
        self.intersect(other, limits)
            .map_err(|e| build_error(pointer, e))
    }

    fn minus_in(
        &self,
        other: &Table,
        limits: &Limits,
        pointer: &str,
    ) -> Result<Table, CompileError> {
        self.difference(other, limits)
            .map_err(|e| build_error(pointer, e))
    }
}

fn build_error(pointer: &str, e: BuildError) -> CompileError {
    let budget = match &e {
        BuildError::TooLarge { budget, .. } => Some(*budget),
        BuildError::Regex(_) => None,
    };
    CompileError {
        budget,
        ..err(pointer, e.to_string())
    }
}

fn keyword(pointer: &str, key: &str) -> String {
    format!("{pointer}/{}", escape_token(key))
}

/// A non-negative integer keyword value (saturating).
fn count(v: &Value, at: &str) -> Result<u64, CompileError> {
    let d = v
        .as_number()
        .and_then(Decimal::of)
        .filter(|d| d.is_integer() && !d.is_negative())
        .ok_or_else(|| err(at, "must be a non-negative integer"))?;
    Ok(d.to_u64_saturating())
}

fn number(v: &Value, at: &str) -> Result<Decimal, CompileError> {
    v.as_number()
        .and_then(Decimal::of)
        .ok_or_else(|| err(at, "must be a number"))
}

impl<'a> General<'a> {
    /// Most schema places one compile collects: half of [`JsonOptions::max_nodes`]
    /// (200,000 at the default), so that raising that budget (`rtpl constrain
    /// --max-schema-nodes`), which the place budget's errors name, raises this one too.
    fn max_places(&self) -> usize {
        self.options.max_nodes / 2
    }

    fn tick(&mut self, pointer: &str) -> Result<(), CompileError> {
        self.work += 1;
        let max = self.max_places();
        if self.work > max {
            return Err(budget(
                pointer,
                format!(
                    "more than {max} schema places collected (half of the regex node budget, \
                     budget {})",
                    Budget::SchemaNodes
                ),
            ));
        }
        if self.work.is_multiple_of(256) {
            self.limits.check(0).map_err(|e| build_error(pointer, e))?;
        }
        Ok(())
    }

    fn child(&self, parent: &At<'a>, base: &Rc<str>, schema: &'a Value, tail: &str) -> At<'a> {
        At {
            schema,
            pointer: format!("{}{tail}", parent.pointer),
            base: base.clone(),
        }
    }

    // ---------------------------------------------------------------- collecting

    /// Adds the constraints of `at` to `node`.
    fn collect(&mut self, node: &mut Node<'a>, at: &At<'a>) -> Result<(), CompileError> {
        if self.collecting >= MAX_DEPTH {
            return Err(budget(
                &at.pointer,
                format!("schemas applied within one another deeper than {MAX_DEPTH}"),
            ));
        }
        self.collecting += 1;
        let out = self.collect_in(node, at);
        self.collecting -= 1;
        out
    }

    fn collect_in(&mut self, node: &mut Node<'a>, at: &At<'a>) -> Result<(), CompileError> {
        self.tick(&at.pointer)?;
        let map = match at.schema {
            Value::Bool(true) => return Ok(()),
            Value::Bool(false) => {
                node.types = 0;
                return Ok(());
            }
            Value::Object(map) => map,
            _ => return Err(err(&at.pointer, "a schema is an object or a boolean")),
        };
        let base: Rc<str> = Rc::from(self.refs.own_base(map, &at.base));
        let p = at.pointer.as_str();
        if self.draft <= Draft::Draft7 {
            if let Some(r) = map.get("$ref") {
                // Before 2019-09 the reference replaces the whole schema.
                let here = keyword(p, "$ref");
                let r = r.as_str().ok_or_else(|| err(&here, "must be a string"))?;
                return self.follow(node, r, &base, &here);
            }
        }
        let mut items_done = false;
        let mut object_done = false;
        for (key, v) in map {
            if self.draft < since(key) {
                // Unknown to the schema's draft: its validators ignore it (inside `not`
                // too, where applying it would let invalid instances through).
                continue;
            }
            if key == "dependencies" && self.draft >= Draft::Draft2019 && self.negating > 0 {
                // Draft 7's spelling, applied from 2019-09 on where it only refuses more
                // (README); inside a negation it would admit more, so there it is ignored as
                // Python's Draft202012Validator ignores it.
                continue;
            }
            let here = keyword(p, key);
            match key.as_str() {
                "type" => node.types &= self.type_bits(v, &here)?,
                "$schema" if !p.is_empty() => self.nested_schema_uri(v, &here)?,
                // In its place among the keywords: object properties keep their order of
                // appearance.
                "$ref" => {
                    let r = v.as_str().ok_or_else(|| err(&here, "must be a string"))?;
                    self.follow(node, r, &base, &here)?;
                }
                "enum" => {
                    let values = v.as_array().ok_or_else(|| err(&here, "must be an array"))?;
                    node.restrict_literals(values.clone());
                }
                "const" => node.restrict_literals(vec![v.clone()]),
                "minLength" => {
                    let s = &mut node.string;
                    raise_min(&mut s.min, &mut s.min_at, count(v, &here)?, Some(here));
                }
                "maxLength" => {
                    let s = &mut node.string;
                    lower_max(
                        &mut s.max,
                        &mut s.max_at,
                        Some(count(v, &here)?),
                        Some(here),
                    );
                }
                "pattern" => {
                    let text = v.as_str().ok_or_else(|| err(&here, "must be a string"))?;
                    node.string.patterns.push((text.to_string(), here));
                }
                "format" => self.format(node, v, &here),
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                    self.bound(node, map, key, v, &here)?
                }
                "multipleOf" => {
                    let q = number(v, &here)?;
                    if q.is_zero() || q.is_negative() {
                        return Err(err(&here, "must be greater than 0"));
                    }
                    node.number.multiple_of.push((q, here));
                }
                "items" | "prefixItems" | "additionalItems" if !items_done => {
                    items_done = true;
                    self.items(node, map, at, &base);
                }
                "minItems" => {
                    let a = &mut node.array;
                    raise_min(&mut a.min, &mut a.min_at, count(v, &here)?, Some(here));
                }
                "maxItems" => {
                    let a = &mut node.array;
                    lower_max(
                        &mut a.max,
                        &mut a.max_at,
                        Some(count(v, &here)?),
                        Some(here),
                    );
                }
                // Not enforced (module documentation).
                "uniqueItems" if v.as_bool() == Some(true) => {
                    node.array.structure_at.get_or_insert(here);
                }
                "contains" => {
                    let bound = |key: &str| map.get(key).filter(|_| self.draft >= since(key));
                    let min = match bound("minContains") {
                        Some(m) => count(m, &keyword(p, "minContains"))?,
                        None => 1,
                    };
                    let max = match bound("maxContains") {
                        Some(m) => Some(count(m, &keyword(p, "maxContains"))?),
                        None => None,
                    };
                    node.array.contains.push(Contains {
                        schema: self.child(at, &base, v, "/contains"),
                        min,
                        max,
                        pointer: keyword(p, "maxContains"),
                    });
                    node.array.structure_at.get_or_insert(here);
                }
                "properties" | "patternProperties" | "additionalProperties" if !object_done => {
                    object_done = true;
                    self.object_side(node, map, at, &base)?;
                }
                "required" => {
                    let names = v.as_array().ok_or_else(|| err(&here, "must be an array"))?;
                    for n in names {
                        let n = n.as_str().ok_or_else(|| err(&here, "must list strings"))?;
                        if !node.object.required.iter().any(|r| r == n) {
                            node.object.required.push(n.to_string());
                        }
                    }
                }
                "propertyNames" => {
                    node.object
                        .names
                        .push(self.child(at, &base, v, "/propertyNames"));
                    node.object.structure_at.get_or_insert(here);
                }
                "dependentRequired" | "dependentSchemas" | "dependencies" => {
                    self.dependencies(node, v, at, &base, key)?
                }
                "minProperties" => {
                    let o = &mut node.object;
                    raise_min(&mut o.min, &mut o.min_at, count(v, &here)?, Some(here));
                }
                "maxProperties" => {
                    let o = &mut node.object;
                    lower_max(
                        &mut o.max,
                        &mut o.max_at,
                        Some(count(v, &here)?),
                        Some(here),
                    );
                }
                "allOf" => {
                    let list = v.as_array().ok_or_else(|| err(&here, "must be an array"))?;
                    for (i, member) in list.iter().enumerate() {
                        let member = self.child(at, &base, member, &format!("/allOf/{i}"));
                        self.collect(node, &member)?;
                    }
                }
                "anyOf" => {
                    let list = v.as_array().ok_or_else(|| err(&here, "must be an array"))?;
                    let alts = list
                        .iter()
                        .enumerate()
                        .map(|(i, m)| Alt::schema(self.child(at, &base, m, &format!("/anyOf/{i}"))))
                        .collect();
                    node.disj.push(alts);
                }
                "oneOf" => {
                    let list = v.as_array().ok_or_else(|| err(&here, "must be an array"))?;
                    let members: Vec<At<'a>> = list
                        .iter()
                        .enumerate()
                        .map(|(i, m)| self.child(at, &base, m, &format!("/oneOf/{i}")))
                        .collect();
                    let alts = self.one_of(&members)?;
                    node.disj.push(alts);
                }
                "not" => {
                    let inner = self.child(at, &base, v, "/not");
                    let alts = self.negate(&inner).map_err(|e| refused(&here, "not", e))?;
                    node.disj.push(alts);
                }
                "if" => {
                    let then = map.get("then").map(|t| self.child(at, &base, t, "/then"));
                    let otherwise = map.get("else").map(|e| self.child(at, &base, e, "/else"));
                    if then.is_some() || otherwise.is_some() {
                        let cond = self.child(at, &base, v, "/if");
                        let mut yes = Alt::schema(cond.clone());
                        yes.schemas.extend(then);
                        let mut alts = vec![yes];
                        for mut no in self.negate(&cond).map_err(|e| refused(&here, "if", e))? {
                            no.schemas.extend(otherwise.clone());
                            alts.push(no);
                        }
                        node.disj.push(alts);
                    }
                }
                "$dynamicRef" | "$recursiveRef" => {
                    return Err(err(&here, format!("{key} is not generated")))
                }
                "unevaluatedProperties" | "unevaluatedItems"
                    if !(v == &Value::Bool(true) || v.as_object().is_some_and(Map::is_empty)) =>
                {
                    return Err(err(&here, format!("{key} is not generated")));
                }
                // Annotations, places for schemas ($defs, definitions), identifiers, the
                // keywords read with others (then, else, minContains, ...), unknown ones.
                _ => {}
            }
        }
        Ok(())
    }

    fn type_bits(&self, v: &Value, at: &str) -> Result<u8, CompileError> {
        let one = |name: &str| -> Result<u8, CompileError> {
            Ok(match name {
                "null" => NULL,
                "boolean" => BOOL,
                "object" => OBJECT,
                "array" => ARRAY,
                "string" => STRING,
                "integer" => INTEGER,
                "number" => NUMBER,
                "any" => ALL,
                other => return Err(err(at, format!("unknown type {other:?}"))),
            })
        };
        match v {
            Value::String(s) => one(s),
            Value::Array(list) => {
                let mut bits = 0;
                for t in list {
                    bits |= one(t.as_str().ok_or_else(|| err(at, "must list type names"))?)?;
                }
                Ok(bits)
            }
            _ => Err(err(at, "must be a type name or a list of them")),
        }
    }

    fn format(&mut self, node: &mut Node<'a>, v: &Value, at: &str) {
        let Some(name) = v.as_str() else {
            return;
        };
        if crate::formats::string_format(name).is_some() {
            node.string.formats.push(name.to_string());
            node.string.format_at.get_or_insert_with(|| at.to_string());
        } else if let Some((lo, hi)) = crate::formats::integer_format(name) {
            let (lo, hi) = (Decimal::parse(lo), Decimal::parse(hi));
            if let (Some(lo), Some(hi)) = (lo, hi) {
                let n = &mut node.number;
                n.lo = Some(tighter(
                    n.lo.take(),
                    (lo, false),
                    std::cmp::Ordering::Greater,
                ));
                n.hi = Some(tighter(n.hi.take(), (hi, false), std::cmp::Ordering::Less));
            }
        }
        // Other formats are annotations.
    }

    fn bound(
        &mut self,
        node: &mut Node<'a>,
        map: &Map<String, Value>,
        key: &str,
        v: &Value,
        at: &str,
    ) -> Result<(), CompileError> {
        // Draft 4's `exclusiveMinimum`/`exclusiveMaximum` only modify `minimum`/`maximum`
        // (read with them), by truthiness as Python's `Draft4Validator` reads them: a number
        // there is no bound of its own (cold review).
        // From draft 6 on they are bounds of their own, and Python compares a boolean there
        // as the integer it is (`exclusiveMinimum: true` is "above 1"), so a draft 4 spelling
        // in a later draft's schema is read as Python reads it (cold review).
        let draft4 = self.draft == Draft::Draft4;
        let modifies = |k: &str| {
            draft4
                && match map.get(k) {
                    Some(Value::Bool(b)) => *b,
                    Some(Value::Number(n)) => n.as_f64() != Some(0.0),
                    Some(Value::String(s)) => !s.is_empty(),
                    Some(Value::Array(a)) => !a.is_empty(),
                    Some(Value::Object(o)) => !o.is_empty(),
                    _ => false,
                }
        };
        let as_integer;
        let v = match v {
            Value::Bool(b) if !draft4 => {
                as_integer = Value::from(u8::from(*b));
                &as_integer
            }
            v => v,
        };
        let (lower, exclusive, value) = match key {
            "minimum" => (true, modifies("exclusiveMinimum"), v),
            "maximum" => (false, modifies("exclusiveMaximum"), v),
            "exclusiveMinimum" | "exclusiveMaximum" if draft4 => return Ok(()),
            "exclusiveMinimum" => (true, true, v),
            _ => (false, true, v),
        };
        let mut d = number(value, at)?;
        let mut exclusive = exclusive;
        // An integral double from 2^64 up or from -2^63 down may stand for an integer text
        // that serde_json could only read as the nearest double, while Python's
        // `jsonschema` compares the text's integer exactly (cold review: under `maximum:
        // -9223372036854775809`, read as -2^63, the text `-9223372036854775808` was
        // written). Every integer reading as that double lies beyond the next double
        // inward, so the bound becomes that one, inclusive: values the text admits near it
        // may be refused, none it refuses is written. A float text (`1e300`, which Python
        // reads as this very double) cannot be told apart from an integer text here, so it
        // moves too (cold review: a 40-digit `minimum` admitted `1e39` while it was kept
        // exact past 2^128).
        let read = value
            .as_number()
            .filter(|n| n.is_f64())
            .and_then(|n| n.as_f64());
        if let Some(f) = read.filter(|f| {
            f.is_finite()
                && f.fract() == 0.0
                && (*f >= 18_446_744_073_709_551_616.0 || *f <= -9_223_372_036_854_775_808.0)
        }) {
            let inward = if lower { f.next_up() } else { f.next_down() };
            if let Some(moved) = Decimal::of_integral_f64(inward) {
                d = moved;
                exclusive = false;
            }
        }
        let n = &mut node.number;
        if lower {
            n.lo = Some(tighter(
                n.lo.take(),
                (d, exclusive),
                std::cmp::Ordering::Greater,
            ));
        } else {
            n.hi = Some(tighter(
                n.hi.take(),
                (d, exclusive),
                std::cmp::Ordering::Less,
            ));
        }
        Ok(())
    }

    /// A `$schema` below the root: Python's validators switch to the draft it names
    /// (`Validator.evolve` calls `validator_for` on each subschema), so one naming another
    /// draft than the schema's (or draft 3) is refused; an unknown URI keeps the draft, as
    /// there (cold review).
    fn nested_schema_uri(&self, v: &Value, here: &str) -> Result<(), CompileError> {
        let uri = v.as_str().ok_or_else(|| err(here, "must be a string"))?;
        match named_draft(uri) {
            Some(d) if d == self.draft => Ok(()),
            None if !crate::json::is_draft3_uri(uri) => Ok(()),
            _ => Err(err(
                here,
                format!(
                    "a $schema below the root naming another draft ({uri:?}; the schema is read \
                     as {}) is not generated",
                    self.draft
                ),
            )),
        }
    }

    fn items(
        &mut self,
        node: &mut Node<'a>,
        map: &'a Map<String, Value>,
        at: &At<'a>,
        base: &Rc<str>,
    ) {
        let list = |key: &str, v: &'a Value, me: &Self| -> Vec<Vec<At<'a>>> {
            v.as_array()
                .map(|items| {
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, s)| vec![me.child(at, base, s, &format!("/{key}/{i}"))])
                        .collect()
                })
                .unwrap_or_default()
        };
        let prefix_items = map
            .get("prefixItems")
            .filter(|_| self.draft >= since("prefixItems"));
        let (prefix, rest) = match (prefix_items, map.get("items")) {
            (Some(p), items) => (
                list("prefixItems", p, self),
                items
                    .filter(|i| !i.is_array())
                    .map(|i| self.child(at, base, i, "/items")),
            ),
            (None, Some(items)) if items.is_array() => (
                list("items", items, self),
                map.get("additionalItems")
                    .map(|a| self.child(at, base, a, "/additionalItems")),
            ),
            (None, Some(items)) => (Vec::new(), Some(self.child(at, base, items, "/items"))),
            (None, None) => (Vec::new(), None),
        };
        if !prefix.is_empty() || rest.is_some() {
            node.array
                .structure_at
                .get_or_insert_with(|| keyword(&at.pointer, "items"));
        }
        node.merge_items(prefix, rest.into_iter().collect());
    }

    fn object_side(
        &mut self,
        node: &mut Node<'a>,
        map: &'a Map<String, Value>,
        at: &At<'a>,
        base: &Rc<str>,
    ) -> Result<(), CompileError> {
        let mut declared = Vec::new();
        if let Some(props) = map.get("properties") {
            let props = props
                .as_object()
                .ok_or_else(|| err(&keyword(&at.pointer, "properties"), "must be an object"))?;
            for (name, schema) in props {
                let child = self.child(
                    at,
                    base,
                    schema,
                    &format!("/properties/{}", escape_token(name)),
                );
                node.add_property(name.clone(), vec![Sub::Is(child)]);
                declared.push(name.clone());
            }
        }
        let mut patterns = Vec::new();
        if let Some(pp) = map.get("patternProperties") {
            let pp = pp.as_object().ok_or_else(|| {
                err(
                    &keyword(&at.pointer, "patternProperties"),
                    "must be an object",
                )
            })?;
            for (pattern, schema) in pp {
                let child = self.child(
                    at,
                    base,
                    schema,
                    &format!("/patternProperties/{}", escape_token(pattern)),
                );
                patterns.push((pattern.clone(), child));
            }
        }
        let additional = map
            .get("additionalProperties")
            .map(|a| self.child(at, base, a, "/additionalProperties"));
        node.object
            .structure_at
            .get_or_insert_with(|| keyword(&at.pointer, "properties"));
        if !patterns.is_empty() || additional.is_some() {
            node.object.groups.push(Group {
                declared,
                patterns,
                additional,
            });
        }
        Ok(())
    }

    fn dependencies(
        &mut self,
        node: &mut Node<'a>,
        v: &'a Value,
        at: &At<'a>,
        base: &Rc<str>,
        key: &str,
    ) -> Result<(), CompileError> {
        let here = keyword(&at.pointer, key);
        let entries = v
            .as_object()
            .ok_or_else(|| err(&here, "must be an object"))?;
        for (name, dep) in entries {
            let mut present = Node::of(OBJECT);
            let mut schemas = Vec::new();
            match dep {
                Value::Array(names) => {
                    if names.is_empty() {
                        continue;
                    }
                    for n in names {
                        let n = n.as_str().ok_or_else(|| err(&here, "must list strings"))?;
                        present.object.required.push(n.to_string());
                    }
                }
                Value::Bool(true) => continue,
                Value::Bool(false) => present.types = 0,
                Value::Object(m) if m.is_empty() => continue,
                Value::Object(_) => schemas.push(self.child(
                    at,
                    base,
                    dep,
                    &format!("/{}/{}", escape_token(key), escape_token(name)),
                )),
                _ => return Err(err(&here, "must map names to lists or schemas")),
            }
            // Required names first, the property itself after them.
            present.object.required.push(name.clone());
            let mut absent = Node::of(OBJECT);
            absent.object.forbidden.push(name.clone());
            let alts = vec![
                Alt::node(Node::of(ALL & !OBJECT)),
                Alt::node(absent),
                Alt {
                    node: present,
                    schemas,
                },
            ];
            node.disj.push(alts);
        }
        Ok(())
    }

    /// Follows a `$ref` from a schema whose base URI is `base`.
    fn follow(
        &mut self,
        node: &mut Node<'a>,
        reference: &str,
        base: &Rc<str>,
        at: &str,
    ) -> Result<(), CompileError> {
        let target = self
            .refs
            .resolve(base, reference)
            .map_err(|reason| err(at, reason))?;
        if node.refs.contains(&target) {
            // Applying a schema twice at one place adds nothing.
            return Ok(());
        }
        let entered = self.path.iter().filter(|p| **p == target).count();
        if entered >= self.options.max_recursion {
            node.types = 0;
            return Ok(());
        }
        let schema = self
            .doc
            .pointer(&target)
            .ok_or_else(|| err(at, format!("$ref {reference:?} points to nothing")))?;
        node.refs.push(target.clone());
        let parent = target.rsplit_once('/').map_or("", |(p, _)| p);
        let place = At {
            schema,
            pointer: target.clone(),
            base: Rc::from(self.refs.base_of(parent)),
        };
        self.collect(node, &place)
    }

    // ---------------------------------------------------------------- disjunctions

    /// The alternatives of `oneOf`: each member with the negation of every other member it
    /// is not provably disjoint from; where a member cannot be negated, without it (as
    /// `anyOf` for that pair).
    fn one_of(&mut self, members: &[At<'a>]) -> Result<Vec<Alt<'a>>, CompileError> {
        let mut negated: Vec<Option<Vec<Alt<'a>>>> = Vec::new();
        let mut nodes = Vec::new();
        for m in members {
            let mut n = Node::any();
            self.collect(&mut n, m)?;
            nodes.push(n);
            negated.push(match self.negate(m) {
                Ok(alts) => Some(alts),
                Err(e) if e.budget.is_some() => return Err(e),
                Err(_) => None,
            });
        }
        let mut out = Vec::new();
        for (i, m) in members.iter().enumerate() {
            let mut alts = vec![Alt::schema(m.clone())];
            for j in 0..members.len() {
                if i == j || disjoint(&nodes[i], &nodes[j], 2, self.draft) {
                    continue;
                }
                if let Some(neg) = &negated[j] {
                    alts = product(alts, neg, &m.pointer)?;
                }
            }
            out.extend(alts);
        }
        Ok(out)
    }

    /// The negation of a schema as alternatives.
    ///
    /// Errors: a keyword that cannot be negated (named by the pointer), or a budget.
    fn negate(&mut self, at: &At<'a>) -> Result<Vec<Alt<'a>>, CompileError> {
        self.negating += 1;
        let mut n = Node::any();
        let out = match self.collect(&mut n, at) {
            Ok(()) => self.complement(n, &at.pointer),
            Err(e) => Err(e),
        };
        self.negating -= 1;
        out
    }

    /// The alternatives of the values not meeting `n`, its disjunctions negated in turn.
    ///
    /// Errors: a part that cannot be negated, or negations nested [`MAX_DEPTH`] deep: an
    /// alternative that reads its own `anyOf` again (`{"anyOf": [..., {"$ref": "#"}]}`
    /// under a `not`) would be negated without end (the stack overflowed). Neither is a
    /// budget, so where a negation is only needed to tell `oneOf` branches apart or to
    /// leave a property out, that alternative is left out, as for any part that cannot
    /// be negated.
    fn complement(&mut self, n: Node<'a>, pointer: &str) -> Result<Vec<Alt<'a>>, CompileError> {
        if self.complementing >= MAX_DEPTH {
            return Err(err(
                pointer,
                format!(
                    "a $ref cycle through anyOf/oneOf (negations nested deeper than \
                     {MAX_DEPTH}) cannot be negated"
                ),
            ));
        }
        self.complementing += 1;
        let out = self.complement_nested(n, pointer);
        self.complementing -= 1;
        out
    }

    /// [`Self::complement`], one level.
    fn complement_nested(
        &mut self,
        mut n: Node<'a>,
        pointer: &str,
    ) -> Result<Vec<Alt<'a>>, CompileError> {
        let disj = std::mem::take(&mut n.disj);
        let mut out = complement_atoms(&n, pointer)?;
        // not (base and (a1 or a2 ...) and ...) = not base, or (not a1 and not a2 ...), ...
        for alts in disj {
            let mut conj = vec![Alt::node(Node::any())];
            for a in alts {
                let mut m = a.node;
                for s in &a.schemas {
                    self.collect(&mut m, s)?;
                }
                let neg = self.complement(m, pointer)?;
                conj = product(conj, &neg, pointer)?;
            }
            out.extend(conj);
            if out.len() > MAX_ALTERNATIVES {
                return Err(budget(pointer, "too many alternatives in a negation"));
            }
        }
        Ok(out)
    }

    // ---------------------------------------------------------------- generating

    /// The language of the values meeting `node` (`None`: no value).
    fn gen(&mut self, mut node: Node<'a>, pointer: &str) -> Result<Option<Hir>, CompileError> {
        if node.types == 0 {
            return Ok(None);
        }
        if node.disj.is_empty() {
            return self.gen_flat(node, pointer);
        }
        let disj = std::mem::take(&mut node.disj);
        let mut total: usize = 1;
        for d in &disj {
            total = total.saturating_mul(d.len());
        }
        if total == 0 {
            return Ok(None);
        }
        if total > MAX_ALTERNATIVES {
            return Err(budget(
                pointer,
                format!("more than {MAX_ALTERNATIVES} alternatives to generate"),
            ));
        }
        let mut parts = Vec::new();
        for mut k in 0..total {
            let mut n = node.clone();
            for d in &disj {
                let a = &d[k % d.len()];
                k /= d.len();
                // The alternative's own schemas first, then what it adds (the negations of
                // other `oneOf` branches): properties keep the branch's own order first.
                // An alternative of no common type is not read at all.
                if n.types & a.node.types == 0 {
                    n.types = 0;
                    break;
                }
                for s in &a.schemas {
                    self.collect(&mut n, s)?;
                }
                n.merge(a.node.clone());
                if n.types == 0 {
                    break;
                }
            }
            let types = n.types;
            let within = usize::from(total > 1);
            self.within_alternatives += within;
            let h = self.gen(n, pointer);
            self.within_alternatives -= within;
            if let Some(h) = h? {
                parts.push((h, types));
            }
        }
        let parts = self.merge_objects(parts, pointer)?;
        Ok((!parts.is_empty()).then(|| alt(parts)))
    }

    /// Runs `f` one level deeper, with `refs` entered on the path.
    fn nested<T>(
        &mut self,
        refs: &[String],
        pointer: &str,
        f: impl FnOnce(&mut Self) -> Result<T, CompileError>,
    ) -> Result<T, CompileError> {
        if self.depth >= MAX_DEPTH {
            return Err(budget(
                pointer,
                format!("values nested deeper than {MAX_DEPTH}"),
            ));
        }
        self.depth += 1;
        let before = self.path.len();
        self.path.extend(refs.iter().cloned());
        let out = f(self);
        self.path.truncate(before);
        self.depth -= 1;
        out
    }

    /// The language of a child place: `schemas` met (or not) after `refs` were entered.
    fn child_language(
        &mut self,
        schemas: &[Sub<'a>],
        refs: &[String],
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let key = self.child_key(schemas, refs);
        if let Some(c) = self.children.get(&key) {
            // Past the budget, generated again: the error then names the place where
            // generating everything would have passed it.
            if self.work + c.work <= self.max_places() {
                self.work += c.work;
                return Ok(c.value.clone());
            }
        }
        let work = self.work;
        let value = self.child_language_once(schemas, refs, pointer)?;
        let nodes = value
            .as_ref()
            .map_or(1, |h| crate::json::hir_size(h, SLOT_FROM + 1));
        if self.children_nodes + nodes <= CHILDREN_NODES {
            self.children_nodes += nodes;
            let child = Child {
                value: value.clone(),
                work: self.work - work,
            };
            self.children.insert(key, child);
        }
        Ok(value)
    }

    /// What the language of a child place depends on besides the compile's options, as a
    /// digest ([`crate::dfa::digest`]): its schemas (where each is and whether it is
    /// negated), the `$ref`s entered on the path with `refs` (how often each, which is all
    /// [`Self::follow`] reads of the path), the nesting depth and schemas collected into
    /// one another (the budgets [`MAX_DEPTH`] bounds), and whether a negation is being
    /// built.
    fn child_key(&self, schemas: &[Sub<'a>], refs: &[String]) -> (u64, u64) {
        let mut path: Vec<&str> = self.path.iter().chain(refs).map(String::as_str).collect();
        path.sort_unstable();
        let subs: Vec<(String, (&str, &str))> = schemas
            .iter()
            .map(|s| {
                let (sign, at) = match s {
                    Sub::Is(at) => ('+', at),
                    Sub::Not(at) => ('-', at),
                };
                let id = format!("{sign}{:p}", at.schema);
                (id, (at.pointer.as_str(), &*at.base))
            })
            .collect();
        let state = format!("{} {} {}", self.depth, self.collecting, self.negating > 0);
        crate::dfa::digest(&(state, (subs, path)))
    }

    /// [`Self::child_language`], generated.
    fn child_language_once(
        &mut self,
        schemas: &[Sub<'a>],
        refs: &[String],
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        self.nested(refs, pointer, |me| {
            let mut n = Node::any();
            for s in schemas {
                match s {
                    Sub::Is(at) => me.collect(&mut n, at)?,
                    // A place that must not meet a schema (a property's part of a negation:
                    // `not`, the other branches of `oneOf`, `if` failing): where that schema
                    // cannot be negated, no value is generated here, so the alternative that
                    // needs one is left out (a subset of the valid instances, never a
                    // superset: negations are complemented structurally before anything is
                    // generated, so a generated `Not` is never negated again).
                    Sub::Not(at) => match me.negate(at) {
                        Ok(alts) => n.disj.push(alts),
                        Err(e) if e.budget.is_none() => return Ok(None),
                        Err(e) => return Err(refused(&at.pointer, "not", e)),
                    },
                }
            }
            let value = me.gen(n, pointer)?;
            me.large_as_slot(value, pointer)
        })
    }

    /// `value`, or a slot for its table when its HIR is estimated past [`SLOT_FROM`] nodes
    /// ([`crate::json::hir_weight`]: a bounded repetition once per copy): the
    /// automaton of a large schema is then built in parts (regex-automata's NFA of one HIR
    /// holding every value ran past its heap limit), and the part is read in place where
    /// large ([`crate::json::SHARE_FROM`]).
    ///
    /// Errors: the value's automaton past the limits.
    fn large_as_slot(
        &mut self,
        value: Option<Hir>,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        match value {
            Some(h) if crate::json::hir_size(&h, SLOT_FROM + 1) > SLOT_FROM => {
                self.slot_of_value(h, pointer)
            }
            other => Ok(other),
        }
    }

    /// The key of what determines the table of `value` ([`Self::slot_of_value`]): the
    /// [`crate::dfa::digest`] of the JSON options (how untyped values are read), whether
    /// values are shared ([`crate::dfa::sharing`]) and the HIR, each slot placeholder in it
    /// written as its slot's key ([`Self::slot_keys`]). `None` when a slot it reads has no
    /// key, or a byte class reaches the placeholder bytes. The size budgets are the kept
    /// table's key besides ([`crate::dfa::KeptTables`]).
    fn content_key(&self, value: &Hir) -> Option<(u64, u64)> {
        if crate::json::class_reaches_placeholders(value) {
            return None;
        }
        let content = Content {
            hir: value,
            keys: &self.slot_keys,
            options: &self.options_key,
            unknown: std::cell::Cell::new(false),
        };
        let key = crate::dfa::digest(&content);
        (!content.unknown.get()).then_some(key)
    }

    /// A slot for `value`'s language: `value` itself when it is one slot placeholder
    /// already, else a new slot for its table (`None` when the language is empty).
    ///
    /// Errors: the automaton past the limits.
    fn slot_of_value(&mut self, value: Hir, pointer: &str) -> Result<Option<Hir>, CompileError> {
        if let HirKind::Literal(l) = value.kind() {
            if (l.0.len() == 4 && l.0[0] == crate::json::SLOT) || *l.0 == [crate::json::UNTYPED] {
                return Ok(Some(value));
            }
        }
        // Its key: what determines its table where known (equal keys are equal tables),
        // else its HIR as written here.
        let content = self.content_key(&value);
        let key = content.unwrap_or_else(|| crate::dfa::digest(&value));
        if let Some(found) = self.values.get(&key) {
            return Ok(found.clone());
        }
        let build = || Ok(Self::minimized(self.table_of(&value, pointer)?));
        // The same value in another schema (a definition many schemas share, such as
        // Kubernetes' `ObjectMeta`) is one table, built once per process.
        let table = match content {
            Some(k) => VALUE_TABLES.get_or_build(&k, &self.limits, build)?,
            None => Arc::new(build()?),
        };
        let slot = self.slot_keyed(table, content, pointer)?;
        self.values.insert(key, slot.clone());
        Ok(slot)
    }

    fn gen_flat(&mut self, node: Node<'a>, pointer: &str) -> Result<Option<Hir>, CompileError> {
        if node.types == 0 {
            return Ok(None);
        }
        if node.types == ALL && node.only_types() {
            return Ok(Some(untyped()));
        }
        if let Some(values) = node.literals.clone() {
            return self.gen_literals(&node, &values, pointer);
        }
        let mut parts = Vec::new();
        // The types the node leaves free are one untyped value restricted to them.
        let free = self.free_types(&node);
        if free != 0 {
            parts.push(self.typed_value(free, pointer)?);
        }
        let mut node = node;
        node.types &= !free;
        let excluded = |t: u8| -> Vec<&Value> {
            node.excluded
                .iter()
                .filter(|v| type_of(v) & t != 0)
                .collect()
        };
        if node.types & NULL != 0 && excluded(NULL).is_empty() {
            parts.push(lit("null"));
        }
        if node.types & BOOL != 0 {
            for (word, b) in [("true", true), ("false", false)] {
                if !node.excluded.contains(&Value::Bool(b)) {
                    parts.push(lit(word));
                }
            }
        }
        let kinds: [(u8, Generator<'a>); 4] = [
            (STRING, Self::gen_string),
            (NUMBER, Self::gen_number),
            (ARRAY, Self::gen_array),
            (OBJECT, Self::gen_object),
        ];
        for (t, make) in kinds {
            if node.types & t == 0 {
                continue;
            }
            let Some(h) = make(self, &node, pointer)? else {
                continue;
            };
            let out: Vec<&Value> = excluded(t);
            if out.is_empty() {
                parts.push(h);
            } else {
                let values: Vec<Value> = out.into_iter().cloned().collect();
                let minus = self.literal_alternation(&values);
                let mut table = self.table_of(&h, pointer)?;
                if values.iter().any(holds_number) {
                    // Texts of numbers that read as the same double as an excluded one
                    // (`1.00000000000000001` is `1.0`) are not its spellings: numbers with
                    // a fraction or exponent keep at most 15 significant digits.
                    let distinct = crate::json::doubles_distinct_table(&self.limits)
                        .map_err(|e| build_error(pointer, e))?;
                    table = table.and_in(&distinct, &self.limits, pointer)?;
                }
                let minus = self.table_of(&minus, pointer)?;
                let t = table.minus_in(&minus, &self.limits, pointer)?;
                parts.extend(self.slot(t, pointer)?);
            }
        }
        Ok((!parts.is_empty()).then(|| alt(parts)))
    }

    /// The types a node (without literals) leaves unconstrained, as general.rs type bits:
    /// any value of them is valid. Closed objects are not free.
    fn free_types(&self, node: &Node<'a>) -> u8 {
        let unexcluded = |t: u8| !node.excluded.iter().any(|v| type_of(v) & t != 0);
        let mut free = 0;
        for (t, ok) in [
            (NULL, true),
            (BOOL, true),
            (STRING, node.string_free()),
            // Numbers stay with the number automaton: the reader's are fewer (untyped).
            (ARRAY, node.array_free()),
            (OBJECT, node.object_free() && !self.closed),
        ] {
            if node.types & t == t && ok && unexcluded(t) {
                free |= t;
            }
        }
        // Only worth a reader when a structured type is free.
        if free & (OBJECT | ARRAY | STRING) == 0 {
            0
        } else {
            free
        }
    }

    /// A slot for any value of `types` (general.rs type bits), shared within the compile.
    fn typed_value(&mut self, types: u8, pointer: &str) -> Result<Hir, CompileError> {
        if let Some(h) = self.typed.get(&types) {
            return Ok(h.clone());
        }
        let mut mask = 0;
        for (ours, theirs) in [
            (NULL, crate::json::TYPE_NULL),
            (BOOL, crate::json::TYPE_BOOL),
            (OBJECT, crate::json::TYPE_OBJECT),
            (ARRAY, crate::json::TYPE_ARRAY),
            (STRING, crate::json::TYPE_STRING),
            (NUMBER, crate::json::TYPE_NUMBER),
        ] {
            if types & ours == ours {
                mask |= theirs;
            }
        }
        let table = crate::json::typed_value_table(
            mask,
            self.options.any_depth,
            self.options.whitespace,
            &self.limits,
        )
        .map_err(|e| build_error(pointer, e))?;
        // Its table is the mask's under the options and limits every value key holds.
        let content = crate::dfa::digest(&("typed", u64::from(mask)));
        let h = self.push_slot(table, Some(content), pointer)?;
        self.typed.insert(types, h.clone());
        Ok(h)
    }

    /// `enum`/`const` values meeting the rest of the node.
    fn gen_literals(
        &mut self,
        node: &Node<'a>,
        values: &[Value],
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let mut kept: Vec<Value> = Vec::new();
        // Strings (most of a long `enum`) are told apart by a set: a string equals only a
        // string, and comparing each with every one kept was quadratic (Dependabot's
        // `enum`s of time zones, in every place that reads them).
        let excluded: std::collections::HashSet<&str> =
            node.excluded.iter().filter_map(Value::as_str).collect();
        let mut strings: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for v in values {
            let repeated = match v {
                Value::String(s) => excluded.contains(s.as_str()) || !strings.insert(s),
                _ => {
                    node.excluded.iter().any(|x| same_value(x, v))
                        || kept.iter().any(|k| same_value(k, v))
                }
            };
            if repeated {
                continue;
            }
            // Numbers are sorted by spelling below; the others need their type.
            if !matches!(v, Value::Number(_)) && type_of(v) & node.types == 0 {
                continue;
            }
            kept.push(v.clone());
        }
        let mut parts = Vec::new();
        let mut rest = node.clone();
        rest.literals = None;
        rest.excluded.clear();
        for (t, free) in [
            (NULL | BOOL, true),
            (STRING, node.string_free()),
            (NUMBER, false),
            (ARRAY, node.array_free()),
            (OBJECT, node.object_free()),
        ] {
            let these: Vec<Value> = kept
                .iter()
                .filter(|v| type_of(v) & t != 0)
                .cloned()
                .collect();
            if these.is_empty() {
                continue;
            }
            let words = self.literal_alternation(&these);
            if free {
                parts.push(words);
                continue;
            }
            // The values' spellings within the rest of the node's language for the type.
            let mut only = rest.clone();
            only.types &= t;
            if only.types == 0 {
                continue;
            }
            let Some(lang) = self.gen_flat(only, pointer)? else {
                continue;
            };
            let a = self.table_of(&words, pointer)?;
            let b = self.table_of(&lang, pointer)?;
            let both = a.and_in(&b, &self.limits, pointer)?;
            parts.extend(self.slot(both, pointer)?);
        }
        Ok((!parts.is_empty()).then(|| alt(parts)))
    }

    /// The written spellings of values.
    fn literal_alternation(&self, values: &[Value]) -> Hir {
        alt(values.iter().map(|v| self.literal(v)).collect())
    }

    fn literal(&self, v: &Value) -> Hir {
        let w = &self.writer;
        match v {
            Value::Number(n) => Decimal::of(n).map_or_else(Hir::fail, |d| spelled(&d)),
            Value::Array(items) => {
                if items.is_empty() {
                    return w.container("[", Hir::empty(), true, "]");
                }
                let mut parts = Vec::new();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        parts.push(w.comma());
                    }
                    parts.push(self.literal(item));
                }
                w.container("[", cat(parts), false, "]")
            }
            Value::Object(m) => {
                if m.is_empty() {
                    return w.container("{", Hir::empty(), true, "}");
                }
                let mut parts = Vec::new();
                for (i, (k, item)) in m.iter().enumerate() {
                    if i > 0 {
                        parts.push(w.comma());
                    }
                    parts.push(w.key(k));
                    parts.push(self.literal(item));
                }
                w.container("{", cat(parts), false, "}")
            }
            other => lit(&other.to_string()),
        }
    }

    /// A compiler of `document` (no value generated yet).
    fn new(
        document: &'a Value,
        options: JsonOptions,
        closed: bool,
        draft: Draft,
        limits: &Limits,
    ) -> Self {
        General {
            doc: document,
            options,
            closed,
            draft,
            limits: *limits,
            refs: Refs::new(document, draft),
            writer: Writer::new(&options),
            slots: Slots::default(),
            path: Vec::new(),
            cut: None,
            work: 0,
            depth: 0,
            collecting: 0,
            negating: 0,
            complementing: 0,
            numbers: HashMap::new(),
            typed: HashMap::new(),
            values: HashMap::new(),
            slot_keys: Vec::new(),
            options_key: format!("{options:?}"),
            by_rows: HashMap::new(),
            skeletons: HashMap::new(),
            matchers: HashMap::new(),
            children: HashMap::new(),
            children_nodes: 0,
            within_alternatives: 0,
        }
    }

    fn table_of(&self, hir: &Hir, pointer: &str) -> Result<Table, CompileError> {
        self.table_within(hir, pointer, &self.limits)
    }

    /// [`Self::table_of`] within `limits` instead of the compile's.
    fn table_within(
        &self,
        hir: &Hir,
        pointer: &str,
        limits: &Limits,
    ) -> Result<Table, CompileError> {
        crate::json::language_table(hir, &self.slots, self.options, limits)
            .map_err(|e| build_error(pointer, e))
    }

    /// A slot for `table` (`None` when its language is empty), minimized.
    fn slot(&mut self, table: Table, pointer: &str) -> Result<Option<Hir>, CompileError> {
        self.slot_shared(Arc::new(Self::minimized(table)), pointer)
    }

    /// `table` minimized when it has at most [`MINIMIZE_UP_TO`] states.
    fn minimized(table: Table) -> Table {
        if table.len() <= MINIMIZE_UP_TO {
            table.minimize()
        } else {
            table
        }
    }

    /// [`Self::slot`] for a table already minimized (or too large to be, or trimmed and
    /// known to be close to minimal) and shared.
    fn slot_shared(
        &mut self,
        table: Arc<Table>,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        self.slot_keyed(table, None, pointer)
    }

    /// A new slot for `table`, `content` its key ([`Self::slot_keys`]): every slot of a
    /// compile is added here, so that keys and slots stay in step.
    ///
    /// Errors: past [`crate::json::MAX_SLOTS`].
    fn push_slot(
        &mut self,
        table: Arc<Table>,
        content: Option<(u64, u64)>,
        pointer: &str,
    ) -> Result<Hir, CompileError> {
        let h = self
            .slots
            .push(table)
            .ok_or_else(|| budget(pointer, "too many automata in one schema"))?;
        self.slot_keys.push(content);
        Ok(h)
    }

    /// [`Self::slot_shared`] with the key of what determines `table` ([`Self::slot_keys`];
    /// `None`: unknown).
    fn slot_keyed(
        &mut self,
        table: Arc<Table>,
        content: Option<(u64, u64)>,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        if table.is_empty() {
            return Ok(None);
        }
        // The same automaton built again (a definition reached through several `$ref`s or
        // branches) is the same slot: one table, and one call where two places read it.
        let hash = table.rows_hash();
        if let Some((_, h)) = self
            .by_rows
            .get(&hash)
            .and_then(|found| found.iter().find(|(t, _)| t.same_rows(&table)))
        {
            return Ok(Some(h.clone()));
        }
        let h = self.push_slot(table.clone(), content, pointer)?;
        self.by_rows
            .entry(hash)
            .or_default()
            .push((table, h.clone()));
        Ok(Some(h))
    }

    /// While `weights` (one per member of `named`) add up to more than [`OBJECT_WEIGHT`],
    /// the heaviest member's value is read from a slot of its own (one table, shared where
    /// the value starts after its key) and its weight no longer counts. Optional members
    /// whose value admits nothing are dropped. `Ok(false)` when a required one admits
    /// nothing (no object does).
    fn slot_heaviest(
        &mut self,
        named: &mut Vec<(String, Hir, bool)>,
        weights: &[usize],
        pointer: &str,
    ) -> Result<bool, CompileError> {
        let mut total = weights.iter().fold(0usize, |a, &w| a.saturating_add(w));
        if total <= OBJECT_WEIGHT {
            return Ok(true);
        }
        let mut order: Vec<usize> = (0..named.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(weights[i]));
        let mut empty = Vec::new();
        for i in order {
            if total <= OBJECT_WEIGHT {
                break;
            }
            total -= weights[i];
            let v = std::mem::replace(&mut named[i].1, Hir::fail());
            match self.slot_of_value(v, pointer)? {
                Some(slot) => named[i].1 = slot,
                None if named[i].2 => return Ok(false),
                None => empty.push(i),
            }
        }
        // Indices were found by weight: removed from the last one down.
        empty.sort_unstable_by(|a, b| b.cmp(a));
        for i in empty {
            named.remove(i);
        }
        Ok(true)
    }

    /// One character of a canonical string.
    fn canonical_char() -> Hir {
        crate::json::re(concat!(
            r#"[^"\\\x00-\x1f]"#,
            r#"|\\["\\bfnrt]"#,
            r"|\\u00(?:0[0-7bef]|1[0-9a-f])",
        ))
    }

    fn quoted(body: Hir) -> Hir {
        cat(vec![lit("\""), body, lit("\"")])
    }

    fn gen_string(&mut self, node: &Node<'a>, pointer: &str) -> Result<Option<Hir>, CompileError> {
        let s = &node.string;
        if s.max.is_some_and(|m| m < s.min) {
            return Ok(None);
        }
        let cap = self.options.max_count as u64;
        if s.min > cap {
            return Err(above_cap("minLength", s.min, &s.min_at, pointer, cap));
        }
        let max = s.max.map(|m| m.min(cap));
        let mut parts: Vec<Hir> = Vec::new();
        if s.min > 0 || max.is_some() {
            parts.push(Self::quoted(repeat(
                Self::canonical_char(),
                s.min as u32,
                max.map(|m| m as u32),
            )));
        }
        for f in &s.formats {
            if let Some(p) = crate::formats::string_format(f) {
                parts.push(Self::quoted(crate::json::re(&p)));
            }
        }
        for (p, at) in &s.patterns {
            parts.push(Self::quoted(self.pattern(p, at)?));
        }
        let mut minus = Vec::new();
        for (p, at) in &s.not_patterns {
            minus.push(Self::quoted(self.pattern(p, at)?));
        }
        if parts.is_empty() {
            parts.push(Self::quoted(repeat(Self::canonical_char(), 0, None)));
        }
        if parts.len() == 1
            && minus.is_empty()
            && crate::json::hir_weight(&parts[0], STRING_SLOT_FROM) <= STRING_SLOT_FROM
        {
            return Ok(parts.pop());
        }
        // Built within the default size budgets at least, and the caller's state limit
        // checked on the table built (kept or not), as `json::cached_reader` does: the
        // outcome does not depend on what is kept, and a lower limit (the first of
        // `template::with_shallow_retry`'s tries) is refused at once by a table kept
        // under the default ones instead of failing the same construction at each
        // compile (`format: uri` with `maxLength: 4096`: 8-80 ms per compile).
        let within = self.limits.at_least_default();
        let build = || {
            let table_of = |hir: &Hir| self.table_within(hir, pointer, &within);
            let mut table = table_of(&parts[0])?;
            for p in &parts[1..] {
                table = table.and_in(&table_of(p)?, &within, pointer)?;
            }
            for m in &minus {
                table = table.minus_in(&table_of(m)?, &within, pointer)?;
            }
            Ok(Self::minimized(table))
        };
        // The same bounds, formats and patterns in another place or another schema (`uri`
        // up to 256 characters is common) are one table, built once per process; unless a
        // part refers to this schema's slots (a pattern with look-aheads).
        let (table, content) = if parts
            .iter()
            .chain(&minus)
            .any(crate::json::holds_placeholder)
        {
            (Arc::new(build()?), None)
        } else {
            let key = (&parts, &minus);
            // Tagged apart from values' keys (`Self::content_key`).
            let content = crate::dfa::digest(&("string", &key));
            (
                STRING_TABLES.get_or_build(&key, &within, build)?,
                Some(content),
            )
        };
        self.limits
            .check(table.len())
            .map_err(|e| build_error(pointer, e))?;
        self.slot_keyed(table, content, pointer)
    }

    /// A pattern's language over canonical string text (between the quotes): found anywhere,
    /// except where `^`/`$` anchor it. Negative look-aheads right after a leading `^`
    /// (`^(?!A)R`, "anything but these") are a difference of automata
    /// ([`split_lookaheads`]).
    fn pattern(&mut self, pattern: &str, at: &str) -> Result<Hir, CompileError> {
        let Some((positive, negatives)) = split_lookaheads(pattern) else {
            return plain_pattern(pattern, pattern, at);
        };
        let mut table = self.table_of(&plain_pattern(&positive, pattern, at)?, at)?;
        for n in &negatives {
            let t = self.table_of(&plain_pattern(n, pattern, at)?, at)?;
            table = table.minus_in(&t, &self.limits, at)?;
        }
        Ok(self.slot(table, at)?.unwrap_or_else(Hir::fail))
    }

    fn gen_number(&mut self, node: &Node<'a>, pointer: &str) -> Result<Option<Hir>, CompileError> {
        let n = &node.number;
        let integers = node.types & INTEGER != 0;
        let fractions = node.types & FRACTION != 0;
        let mut multiple_of = Vec::new();
        for (q, _) in &n.multiple_of {
            // Every integer is a multiple of 1/k.
            if !(integers && !fractions && q.divides_one()) {
                multiple_of.push(q.clone());
            }
        }
        // A fractional multipleOf is decided on doubles by most validators: values stay
        // within 2^53, where every integer is a double.
        let (mut lo, mut hi) = (n.lo.clone(), n.hi.clone());
        if multiple_of.iter().any(|q| !q.is_integer()) {
            let limit = Decimal::parse("9007199254740992").unwrap_or_else(Decimal::zero);
            lo = Some(tighter(
                lo,
                (limit.negated(), false),
                std::cmp::Ordering::Greater,
            ));
            hi = Some(tighter(hi, (limit, false), std::cmp::Ordering::Less));
        }
        let spec = NumberSpec {
            integers,
            fractions,
            draft4: self.draft == Draft::Draft4,
            lo,
            hi,
            multiple_of,
            not_multiple_of: n.not_multiple_of.iter().map(|(q, _)| q.clone()).collect(),
        };
        if spec.is_empty() {
            return Ok(None);
        }
        if let Some(h) = self.numbers.get(&spec) {
            return Ok(Some(h.clone()));
        }
        let table = match spec.cached_table(&self.limits) {
            // A divisor too fine for residues in a bounded range: its few multiples there.
            Err(NumberError::TooFine | NumberError::Divisor(_)) => {
                self.multiples(&spec, pointer)?
            }
            other => other,
        };
        let table = table.map_err(|e| match e {
            NumberError::Divisor(q) => {
                let at = n
                    .multiple_of
                    .iter()
                    .chain(&n.not_multiple_of)
                    .find(|(d, _)| *d == q)
                    .map_or(pointer, |(_, at)| at.as_str());
                err(
                    at,
                    format!("multipleOf {q} has too many digits to generate"),
                )
            }
            NumberError::TooFine => {
                let first = n.multiple_of.first();
                let at = first.map_or(pointer, |(_, at)| at.as_str());
                let one = Decimal::parse("1").unwrap_or_else(Decimal::zero);
                let large =
                    first.is_some_and(|(q, _)| q.cmp_value(&one) == std::cmp::Ordering::Greater);
                err(
                    at,
                    if large {
                        "multipleOf is too large to generate (more than 18 significant digits \
                         or past 1.8e19); minimum and maximum leaving at most 256 multiples \
                         let it through"
                    } else {
                        "multipleOf is too fine to generate (too many residues); minimum and \
                         maximum leaving at most 256 multiples let it through"
                    },
                )
            }
            NumberError::Build(e) => build_error(pointer, e),
        })?;
        if table.is_empty() {
            return Ok(None);
        }
        let content = crate::dfa::digest(&("number", format!("{spec:?}")));
        let h = self.push_slot(table, Some(content), pointer)?;
        self.numbers.insert(spec, h.clone());
        Ok(Some(h))
    }

    /// [`NumberSpec::table`] for a spec whose first too fine divisor has few multiples
    /// between its bounds: those multiples' spellings within the spec without that divisor.
    fn multiples(
        &mut self,
        spec: &NumberSpec,
        pointer: &str,
    ) -> Result<Result<Arc<Table>, NumberError>, CompileError> {
        let (Some(lo), Some(hi)) = (&spec.lo, &spec.hi) else {
            return Ok(Err(NumberError::TooFine));
        };
        let fine = spec.multiple_of.iter().position(|q| {
            NumberSpec {
                multiple_of: vec![q.clone()],
                ..NumberSpec::any()
            }
            .table(&Limits::default())
            .is_err()
        });
        let Some(i) = fine else {
            return Ok(Err(NumberError::TooFine));
        };
        let Some(values) = spec.multiple_of[i].multiples_between(lo, hi, MAX_MULTIPLES) else {
            return Ok(Err(NumberError::TooFine));
        };
        let mut rest = spec.clone();
        rest.multiple_of.remove(i);
        let rest = match rest.cached_table(&self.limits) {
            Ok(t) => t,
            Err(e) => return Ok(Err(e)),
        };
        let words = alt(values.iter().map(spelled).collect());
        let words = self.table_of(&words, pointer)?;
        Ok(words
            .intersect(&rest, &self.limits)
            .map(Arc::new)
            .map_err(NumberError::Build))
    }

    fn gen_array(&mut self, node: &Node<'a>, pointer: &str) -> Result<Option<Hir>, CompileError> {
        let a = &node.array;
        let cap = self.options.max_count as u64;
        if a.max.is_some_and(|m| m < a.min) {
            return Ok(None);
        }
        if a.min > cap {
            return Err(above_cap("minItems", a.min, &a.min_at, pointer, cap));
        }
        let min = a.min as usize;
        let mut max = a.max.map(|m| m.min(cap) as usize);
        let refs = node.refs.clone();
        let mut items = Vec::new();
        for (k, schemas) in a.prefix.iter().enumerate() {
            if max.is_some_and(|m| k >= m) {
                break;
            }
            let subs: Vec<Sub<'a>> = schemas.iter().cloned().map(Sub::Is).collect();
            match self.child_language(&subs, &refs, &format!("{pointer}/{k}"))? {
                Some(h) => items.push(h),
                None if k < min => return Ok(None),
                None => {
                    max = Some(k);
                    break;
                }
            }
        }
        let p = items.len();
        let rest = if max.is_none_or(|m| m > p) {
            let subs: Vec<Sub<'a>> = a.rest.iter().cloned().map(Sub::Is).collect();
            match self.child_language(&subs, &refs, pointer)? {
                // An item written once per counted copy (`maxItems`) whose copies together
                // would make a large automaton is read in place from one table.
                Some(r)
                    if Self::copies_weigh(
                        &r,
                        (min.saturating_sub(p), max.map(|m| m - p)),
                        p == 0,
                        self.items_weight(a),
                    ) =>
                {
                    self.slot_of_value(r, pointer)?
                }
                other => other,
            }
        } else {
            None
        };
        if rest.is_none() {
            if min > p {
                return Ok(None);
            }
            max = Some(max.map_or(p, |m| m.min(p)));
        }
        let w = self.writer.clone();
        let position = |k: usize| -> Hir {
            if k < p {
                items[k].clone()
            } else {
                rest.clone().unwrap_or_else(Hir::fail)
            }
        };
        let hir = if max == Some(0) {
            w.container("[", Hir::empty(), true, "]")
        } else {
            // What follows position 0, each item after a comma: the prefix positions (the
            // first `min` required, the others optional, nested), then the rest items.
            let mut tail = match &rest {
                Some(r) => {
                    let from = p.max(1);
                    let lo = min.saturating_sub(from) as u32;
                    let hi = max.map(|m| m.saturating_sub(from) as u32);
                    repeat(cat(vec![w.comma(), r.clone()]), lo, hi)
                }
                None => Hir::empty(),
            };
            for k in (1..p).rev() {
                let item = cat(vec![w.comma(), position(k), tail]);
                tail = if k < min { item } else { opt(item) };
            }
            w.container("[", cat(vec![position(0), tail]), min == 0, "]")
        };
        let counted: Vec<&Contains<'a>> = a.contains.iter().filter(|c| c.counts()).collect();
        // Items otherwise unconstrained, one `contains`: its language is the array's (every
        // list of items, counted as it asks), written once and not intersected with the
        // list of any items.
        if let [c] = counted[..] {
            if p == 0 && a.rest.is_empty() && min == 0 && max.is_none() {
                return self.contains_language(c, &refs);
            }
        }
        let mut contains = Vec::new();
        for c in counted {
            contains.push(self.contains_language(c, &refs)?);
        }
        if contains.is_empty() {
            return Ok(Some(hir));
        }
        let mut table = self.table_of(&hir, pointer)?;
        for c in contains {
            let Some(c) = c else {
                return Ok(None);
            };
            let t = self.table_of(&c, pointer)?;
            table = table.and_in(&t, &self.limits, pointer)?;
        }
        self.slot(table, pointer)
    }

    /// Whether `item`, written once per item it may be (`(min, max)` of them: at most
    /// `max`; unbounded, the repetition once per item it needs and once more, `min` + 1,
    /// and the first item apart where it is the array's first (`first`) and `min` is 0),
    /// weighs more than `bound` in all ([`crate::json::hir_weight`]) and is written more
    /// than once: its copies would be determinized and minimized one by one (the Store's
    /// `tslint.json`: up to 15 items of a `member-ordering` kind, 125,761 states), and an
    /// array of arrays doubles its items' states per level until minimized.
    fn copies_weigh(
        item: &Hir,
        (min, max): (usize, Option<usize>),
        first: bool,
        bound: usize,
    ) -> bool {
        let copies = max.unwrap_or(min.saturating_add(1) + usize::from(first && min == 0));
        if copies < 2 {
            return false;
        }
        let one = crate::json::hir_weight(item, bound + 1);
        one.saturating_mul(copies) > bound
    }

    /// The weight of an array item's copies past which it is read from a slot
    /// ([`Self::copies_weigh`]): [`ITEMS_ALONE_WEIGHT`], or [`OBJECT_WEIGHT`] inside an
    /// alternative of a disjunction (at any depth), where a slot may be copied side by side
    /// with the other alternatives' values (as [`QUADRATIC_UP_TO`] says for objects), and
    /// for an array that counts the items meeting a `contains`: its list of items is
    /// intersected with the counting automaton, whose product reads the item's slot
    /// beside the `contains` schema's language (an item of eight optional members under
    /// `maxContains: 3`: 4 -> 128 ms with the lower bound, from the cold review).
    fn items_weight(&self, array: &Arrs<'a>) -> usize {
        if self.within_alternatives > 0 || array.contains.iter().any(Contains::counts) {
            OBJECT_WEIGHT
        } else {
            ITEMS_ALONE_WEIGHT
        }
    }

    /// Arrays with between `min` and `max` items meeting the `contains` schema (`None`: no
    /// such array).
    fn contains_language(
        &mut self,
        c: &Contains<'a>,
        refs: &[String],
    ) -> Result<Option<Hir>, CompileError> {
        let cap = self.options.max_count as u64;
        let at = &c.schema.pointer;
        if c.min > cap {
            return Err(budget(
                at,
                format!("minContains {} is above JsonOptions::max_count", c.min),
            ));
        }
        let Some(s) = self.child_language(&[Sub::Is(c.schema.clone())], refs, at)? else {
            return Ok(if c.min == 0 {
                Some(self.any_array())
            } else {
                None
            });
        };
        let other = match c.max {
            // Counted from below only, an item of a type every value of which meets the
            // schema may as well be counted: the other items are only the values of the
            // other types. The item's two readings (as the schema and as any value) then
            // start on different bytes wherever they can: read side by side, they were a
            // product of two readers of any value (`{"contains": {"minimum": 5}}` built
            // 11,362 states in 40 ms; now only numbers are read both ways).
            None => {
                let total = self.nested(refs, at, |me| {
                    let mut n = Node::any();
                    me.collect(&mut n, &c.schema)?;
                    Ok(n.total_types(me.closed))
                })?;
                // Any value of those types, as untyped values are (open objects in a
                // closed compile too).
                match ALL & !total {
                    0 => None,
                    ALL => Some(untyped()),
                    open => Some(self.typed_value(open, at)?),
                }
            }
            Some(_) => {
                let neg = self
                    .negate(&c.schema)
                    .map_err(|e| refused(&c.pointer, "maxContains", e))?;
                let mut n = Node::any();
                n.disj.push(neg);
                self.nested(refs, at, |me| me.gen(n, at))?
            }
        };
        let w = self.writer.clone();
        let lo = c.min as u32;
        let hi = c.max.map(|m| m.min(cap) as u32);
        if hi.is_some_and(|h| h < lo) {
            return Ok(None);
        }
        // Non-empty lists with between lo and hi items of `s`, the others `other`.
        let sep = |h: &Hir| cat(vec![w.comma(), h.clone()]);
        let mut forms = Vec::new();
        if let Some(x) = &other {
            // Starting with an `other` item.
            forms.push(cat(vec![
                x.clone(),
                repeat(sep(x), 0, None),
                repeat(cat(vec![sep(&s), repeat(sep(x), 0, None)]), lo, hi),
            ]));
        }
        if hi != Some(0) {
            let tail_other = match &other {
                Some(x) => repeat(sep(x), 0, None),
                None => Hir::empty(),
            };
            forms.push(cat(vec![
                s.clone(),
                tail_other.clone(),
                repeat(
                    cat(vec![sep(&s), tail_other]),
                    lo.saturating_sub(1),
                    hi.map(|h| h - 1),
                ),
            ]));
        }
        let body = alt(forms);
        Ok(Some(w.container("[", body, lo == 0, "]")))
    }

    fn any_array(&self) -> Hir {
        let w = &self.writer;
        let items = cat(vec![
            untyped(),
            repeat(cat(vec![w.comma(), untyped()]), 0, None),
        ]);
        w.container("[", items, true, "]")
    }

    fn gen_object(&mut self, node: &Node<'a>, pointer: &str) -> Result<Option<Hir>, CompileError> {
        let o = &node.object;
        let refs = node.refs.clone();
        // propertyNames: the language of keys, as a table of string text.
        let names = if o.names.is_empty() {
            None
        } else {
            let language = self.nested(&refs, pointer, |me| {
                let mut n = Node::of(STRING);
                for s in &o.names {
                    me.collect(&mut n, s)?;
                }
                n.types &= STRING;
                me.gen(n, pointer)
            })?;
            Some(match language {
                Some(h) => self.table_of(&h, pointer)?,
                // No key is allowed.
                None => self.table_of(&Hir::fail(), pointer)?,
            })
        };
        let key_ok = |name: &str| -> bool {
            names
                .as_ref()
                .is_none_or(|t| t.matches(Value::String(name.to_string()).to_string().as_bytes()))
        };
        // Declared members: properties, then required names not declared.
        let mut declared: Vec<(String, Vec<Sub<'a>>)> = o.props.clone();
        for r in &o.required {
            if !declared.iter().any(|(n, _)| n == r) {
                declared.push((r.clone(), Vec::new()));
            }
        }
        let mut taken: Vec<String> = Vec::new();
        // Declared members: name, value, required.
        let mut named: Vec<(String, Hir, bool)> = Vec::new();
        for (name, mut schemas) in declared {
            let required = o.required.contains(&name);
            taken.push(name.clone());
            let at = format!("{pointer}/properties/{}", escape_token(&name));
            if o.forbidden.contains(&name) || !key_ok(&name) {
                if required {
                    return Ok(None);
                }
                continue;
            }
            for g in &o.groups {
                let matching: Vec<Sub<'a>> = g
                    .patterns
                    .iter()
                    .filter(|(p, _)| self.matches(p, &name))
                    .map(|(_, s)| Sub::Is(s.clone()))
                    .collect();
                let declared_here = g.declared.contains(&name);
                if !matching.is_empty() || declared_here {
                    schemas.extend(matching);
                } else if let Some(a) = &g.additional {
                    schemas.push(Sub::Is(a.clone()));
                }
            }
            match self.child_language(&schemas, &refs, &at)? {
                Some(v) => named.push((name.clone(), v, required)),
                None if required => {
                    self.cut.get_or_insert(at);
                    return Ok(None);
                }
                None => {}
            }
        }
        // Values that together would make a large automaton: the heaviest read from slots
        // of their own (one table each, shared where the value starts after its key).
        let weights: Vec<usize> = named
            .iter()
            .map(|(_, v, _)| crate::json::hir_weight(v, OBJECT_WEIGHT + 1))
            .collect();
        if !self.slot_heaviest(&mut named, &weights, pointer)? {
            return Ok(None);
        }
        for f in &o.forbidden {
            if !taken.contains(f) {
                taken.push(f.clone());
            }
        }
        // Members with undeclared keys, one alternative per key class.
        let classes = self.key_classes(node, &taken, names.as_ref(), pointer)?;
        // minProperties/maxProperties: each member's value becomes a slot (its key stays in
        // the skeleton, so the automaton knows the member before its value starts and one
        // shared table reads each value), and the object's text (keys, colons, value
        // placeholders, commas) is intersected with the texts holding between min and max
        // members, counted by the colons outside strings. A bound every object meets anyway
        // (min at most the required members, max at least every member there can be) is
        // not counted.
        let required_members = named.iter().filter(|(_, _, r)| *r).count() as u64;
        // The values of undeclared keys (a class whose schema admits nothing writes none).
        let mut other_values: Vec<(Hir, Hir)> = Vec::new();
        for (key, schemas) in classes {
            if let Some(v) = self.child_language(&schemas, &refs, pointer)? {
                other_values.push((key, v));
            }
        }
        let counted = {
            let min_met = o.min <= required_members;
            let max_met = o
                .max
                .is_none_or(|m| other_values.is_empty() && named.len() as u64 <= m);
            !(min_met && max_met)
        };
        // Members are moved, not cloned (a clone per level would copy nested objects once
        // per level above them): into the linear form, or written as key and value. Counted
        // optional members are linear too (the count goes into the form's comma automaton;
        // written quadratically, each key would be written once per member before it).
        let all_optional = !named.is_empty() && required_members == 0;
        let linear = all_optional && (counted || self.quadratic(&named));
        if all_optional && !linear {
            // Written quadratically (`JsonWriter::members`), member j (from 0) is written
            // j + 1 times, and so is its value: the copies merge only when the table is
            // minimized. Snowplow's `com.mailgun--message_bounced` (16 members, strings up to
            // 50 and 128 characters among them) built 69,430 states that minimized to 2,932.
            let weights: Vec<usize> = named
                .iter()
                .enumerate()
                .map(|(j, (_, v, _))| {
                    crate::json::hir_weight(v, OBJECT_WEIGHT + 1).saturating_mul(j + 1)
                })
                .collect();
            if !self.slot_heaviest(&mut named, &weights, pointer)? {
                return Ok(None);
            }
        }
        let mut others: Vec<Hir> = Vec::new();
        for (key, v) in other_values {
            let v = if counted || linear {
                match self.slot_of_value(v, pointer)? {
                    Some(v) => v,
                    None => continue,
                }
            } else {
                v
            };
            others.push(cat(vec![self.writer.key_hir(key), v]));
        }
        let w = self.writer.clone();
        let (members, named): (Vec<(Hir, bool)>, _) = if linear {
            (Vec::new(), named)
        } else {
            let mut members = Vec::with_capacity(named.len());
            for (name, v, required) in named {
                let v = if counted {
                    match self.slot_of_value(v, pointer)? {
                        Some(v) => v,
                        None if required => return Ok(None),
                        None => continue,
                    }
                } else {
                    v
                };
                members.push((cat(vec![w.key(&name), v]), required));
            }
            (members, Vec::new())
        };
        if counted {
            let cap = self.options.max_count as u64;
            if o.max.is_some_and(|m| m < o.min) {
                return Ok(None);
            }
            if o.min > cap {
                return Err(above_cap("minProperties", o.min, &o.min_at, pointer, cap));
            }
        }
        let (body, may_be_empty) = if members.is_empty() && named.is_empty() {
            if others.is_empty() {
                let empty = w.container("{", Hir::empty(), true, "}");
                return Ok((o.min == 0).then_some(empty));
            }
            let g = alt(others);
            (
                cat(vec![g.clone(), repeat(cat(vec![w.comma(), g]), 0, None)]),
                true,
            )
        } else {
            let (body, may_be_empty) = if linear {
                // The members of undeclared keys are in the linear form too, and so is the
                // count: the object is whole.
                let count = counted.then(|| {
                    let max = o.max.map(|m| m.min(self.options.max_count as u64));
                    (o.min, max)
                });
                let others = std::mem::take(&mut others);
                let may_be_empty = !counted || o.min == 0;
                return self
                    .optional_members(named, others, count, may_be_empty, pointer)
                    .map(Some);
            } else {
                w.members(members, pointer)?
            };
            if others.is_empty() {
                (body, may_be_empty)
            } else {
                let g = alt(others);
                let more = repeat(cat(vec![w.comma(), g.clone()]), 0, None);
                if may_be_empty {
                    (
                        alt(vec![cat(vec![body, more.clone()]), cat(vec![g, more])]),
                        true,
                    )
                } else {
                    (cat(vec![body, more]), false)
                }
            }
        };
        let hir = w.container("{", body, may_be_empty, "}");
        if !counted {
            return Ok(Some(hir));
        }
        let skeleton = Table::from_hir(&hir, &self.limits).map_err(|e| build_error(pointer, e))?;
        let (min, max) = (o.min, o.max.map(|m| m.min(self.options.max_count as u64)));
        let top = max.unwrap_or(min);
        // Members so far (capped at `top`): values are slots, so every colon outside a
        // key's string starts a member.
        let count = self.skeleton_automaton(
            0u64,
            b":",
            |&c, b| match b {
                b':' if max.is_some_and(|m| c >= m) => None,
                b':' => Some((c + 1).min(top)),
                _ => Some(c),
            },
            |&c| c >= min,
            pointer,
        )?;
        self.slot_of_both(&skeleton, &count, pointer)
    }

    /// A slot for the texts both `skeleton` (a table whose slot placeholders are still
    /// transitions) and `other` accept, the placeholders then replaced by their values
    /// (`None` when the language is empty).
    ///
    /// Errors: the automata past the limits.
    fn slot_of_both(
        &mut self,
        skeleton: &Table,
        other: &Table,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let t = skeleton
            .intersect(other, &self.limits)
            .map_err(|e| build_error(pointer, e))?;
        self.skeleton_slot(t, true, pointer)
    }

    /// Whether `members` are all optional and large enough that [`Writer::members`]'s
    /// quadratic form (which member comes first decides the commas, so each member is
    /// written once per member before it) costs more than [`Self::optional_members`]'s
    /// automata: more than two members and over [`QUADRATIC_ALONE_UP_TO`] nodes written
    /// ([`QUADRATIC_UP_TO`] inside alternatives).
    fn quadratic(&self, members: &[(String, Hir, bool)]) -> bool {
        let n = members.len();
        if n <= 2 || members.iter().any(|(_, _, required)| *required) {
            return false;
        }
        let up_to = if self.within_alternatives > 0 {
            QUADRATIC_UP_TO
        } else {
            QUADRATIC_ALONE_UP_TO
        };
        let cap = up_to / n + 1;
        let mut total = 0;
        for (_, v, _) in members {
            // The value and its key (a literal, a colon, whitespace).
            total += crate::json::hir_size(v, cap) + 4;
            if total * n > up_to {
                return true;
            }
        }
        false
    }

    /// An object whose declared members (`(name, value)`) are all optional: `{}` where
    /// `may_be_empty`, else at least one member, the declared ones in order, then any number
    /// of members of undeclared keys (`others`: each a key and a value placeholder, a slot or
    /// an untyped value), with one comma between two: a placeholder for its table, built
    /// linearly. Each value becomes a slot; the skeleton writes the braces and each member
    /// (its key, then its value's placeholder) with an optional comma before it (linear in
    /// the members) and is intersected with an automaton that wants no comma before the
    /// first member and exactly one between two, counting members by their colons outside
    /// the keys' strings (the values' commas and colons are inside their slots, and so are
    /// the keys of undeclared members). The same language as [`Writer::members`]'s quadratic
    /// form followed by the undeclared members, whose copies of nested objects multiply per
    /// level. A declared key stays in the skeleton, so the DFA knows the member before it
    /// reads its value, and one shared table serves each value; the undeclared members are
    /// in the same table, so the body's end is decided there (a body placeholder followed
    /// by `, "other": ...` would be copied: both go on with a comma). With `count`
    /// (`minProperties`, `maxProperties`), the same automaton counts the members: the object
    /// holds between `min` and `max` of them. The skeleton is kept with the slot
    /// ([`Self::merge_objects`]).
    ///
    /// Errors: the values' and the object's automata past the limits.
    fn optional_members(
        &mut self,
        members: Vec<(String, Hir, bool)>,
        others: Vec<Hir>,
        count: Option<(u64, Option<u64>)>,
        may_be_empty: bool,
        pointer: &str,
    ) -> Result<Hir, CompileError> {
        let w = self.writer.clone();
        let mut parts = Vec::with_capacity(members.len() + 1);
        for (name, v, _) in members {
            if let Some(slot) = self.slot_of_value(v, pointer)? {
                let member = cat(vec![w.key(&name), slot]);
                parts.push(opt(cat(vec![opt(w.comma()), member])));
            }
        }
        if !others.is_empty() {
            parts.push(repeat(cat(vec![opt(w.comma()), alt(others)]), 0, None));
        }
        let written = w.container("{", cat(parts), false, "}");
        // The same object in another schema is built once per process: its table is
        // `written`'s (slots by their keys) under `count` and `may_be_empty`.
        let content = self.content_key(&written).map(|k| {
            let (min, max) = count.unwrap_or((0, None));
            let shape = [min, max.unwrap_or(u64::MAX), u64::from(may_be_empty)];
            crate::dfa::digest(&("object", (k, shape.to_vec())))
        });
        let mut built = None;
        let mut build = || {
            let object = self.optional_skeleton(&written, count, may_be_empty, pointer)?;
            built = Some(Arc::new(object.clone()));
            let t = crate::json::splice_slots(object, &self.slots, self.options, &self.limits)
                .map_err(|e| build_error(pointer, e))?;
            Ok(Spliced::of(t))
        };
        let object = match content {
            Some(k) => OBJECT_TABLES.get_or_make(&k, &self.limits, build)?,
            None => build()?,
        };
        let skeleton = match built {
            Some(t) => Skeleton::Built(t),
            None => Skeleton::Optional {
                written,
                count,
                may_be_empty,
            },
        };
        Ok(self
            .spliced_slot(object, skeleton, false, content, pointer)?
            .unwrap_or_else(Hir::fail))
    }

    /// The skeleton of [`Self::optional_members`]: `written` (braces, keys and value
    /// placeholders, each member with an optional comma before it) intersected with the
    /// automaton of commas and member counts.
    ///
    /// Errors: the automata past the limits.
    fn optional_skeleton(
        &self,
        written: &Hir,
        count: Option<(u64, Option<u64>)>,
        may_be_empty: bool,
        pointer: &str,
    ) -> Result<Table, CompileError> {
        let w = &self.writer;
        let skeleton =
            Table::from_hir(written, &self.limits).map_err(|e| build_error(pointer, e))?;
        // The place: 0 before the first member, 1 after a member's colon (in the member), 2
        // after a comma; and the members so far (with `count`: at least `min`, at most
        // `max`, capped at the larger).
        let (min, max) = count.unwrap_or((0, None));
        let top = max.unwrap_or(min);
        // Without whitespace, `{}` is the skeleton without members; with it, `{` and `}`
        // around one run of whitespace, added below (the skeleton would write two).
        let bare = self.options.whitespace == 0;
        let commas = self.skeleton_automaton(
            (0u8, 0u64),
            b",:",
            |&(place, c), b| match b {
                b'"' => (place != 1).then_some((place, c)),
                b':' if place == 1 || max.is_some_and(|m| c >= m) => None,
                b':' => Some((1, (c + 1).min(top))),
                b',' => (place == 1).then_some((2, c)),
                _ => Some((place, c)),
            },
            |&(place, c)| (place == 1 && c >= min) || (bare && may_be_empty && place == 0),
            pointer,
        )?;
        let mut object = skeleton.and_in(&commas, &self.limits, pointer)?;
        if may_be_empty && !bare {
            let empty = cat(vec![lit("{"), w.ws.clone(), lit("}")]);
            let empty =
                Table::from_hir(&empty, &self.limits).map_err(|e| build_error(pointer, e))?;
            object = object
                .union(&empty, &self.limits)
                .map_err(|e| build_error(pointer, e))?;
        }
        Ok(object)
    }

    /// A slot for the language of `skeleton` (a table whose placeholders are still
    /// transitions) with its values spliced in, the skeleton kept with it (`bounded`:
    /// [`Kept::bounded`]; `None` when the language is empty).
    ///
    /// Errors: the automaton past the limits.
    fn skeleton_slot(
        &mut self,
        skeleton: Table,
        bounded: bool,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let kept = Arc::new(skeleton.clone());
        let t = crate::json::splice_slots(skeleton, &self.slots, self.options, &self.limits)
            .map_err(|e| build_error(pointer, e))?;
        self.skeleton_kept(kept, t, bounded, pointer)
    }

    /// A slot for `spliced` (`skeleton` with its values spliced in), the skeleton kept with
    /// it ([`Kept`]).
    ///
    /// Errors: the automaton past the limits.
    fn skeleton_kept(
        &mut self,
        skeleton: Arc<Table>,
        spliced: Table,
        bounded: bool,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let object = Spliced::of(spliced);
        self.spliced_slot(object, Skeleton::Built(skeleton), bounded, None, pointer)
    }

    /// A slot for `object`'s table, its skeleton kept with it ([`Kept`]; `bounded`:
    /// [`Kept::bounded`]); `content`: the key of what determines it ([`Self::slot_keys`]).
    ///
    /// Errors: past [`crate::json::MAX_SLOTS`].
    fn spliced_slot(
        &mut self,
        object: Spliced,
        skeleton: Skeleton,
        bounded: bool,
        content: Option<(u64, u64)>,
        pointer: &str,
    ) -> Result<Option<Hir>, CompileError> {
        let slot = self.slot_keyed(object.table, content, pointer)?;
        if let Some(HirKind::Literal(l)) = slot.as_ref().map(Hir::kind) {
            self.skeletons.entry(l.0.to_vec()).or_insert(Kept {
                skeleton,
                states: object.states,
                bounded,
            });
        }
        Ok(slot)
    }

    /// The skeleton table kept for the slot placeholder `placeholder`, built now where it
    /// was left to build ([`Skeleton::Optional`]; kept built for the next merge).
    ///
    /// Errors: the skeleton's automata past the limits.
    fn skeleton_table(
        &mut self,
        placeholder: &[u8],
        pointer: &str,
    ) -> Result<Option<Kept>, CompileError> {
        let Some(kept) = self.skeletons.get(placeholder).cloned() else {
            return Ok(None);
        };
        let Skeleton::Optional {
            written,
            count,
            may_be_empty,
        } = &kept.skeleton
        else {
            return Ok(Some(kept));
        };
        let table = self.optional_skeleton(written, *count, *may_be_empty, pointer)?;
        let kept = Kept {
            skeleton: Skeleton::Built(Arc::new(table)),
            ..kept
        };
        self.skeletons.insert(placeholder.to_vec(), kept.clone());
        Ok(Some(kept))
    }

    /// `parts` (alternatives; each with the types it may be), those that are objects of
    /// optional members ([`Self::optional_members`]) as one table: their skeletons' union
    /// with the values spliced in once. Apart, each object is a table of its own, and the
    /// automaton reading the alternatives copies both where they start on one byte (`{`),
    /// with every value they read side by side (the Store's
    /// `sil-kit-participant-configuration.json`, a closed object of 20 members with a `not`
    /// of two of them: three alternatives, 179,575 states); their union reads each value
    /// where the skeletons reach it together. The same language: splicing values into the
    /// placeholders of a union is the union of the spliced ones. Counted objects
    /// ([`Self::slot_of_both`]) and objects written inline (required members; a skeleton
    /// of at most [`INLINE_SKELETON_UP_TO`] states) join them where every part that may
    /// be an object then joins (a larger merged table read beside an object left out is
    /// copied beside it: a `not` of two required names next to them took 8 -> 100 ms),
    /// the union reads no large value side by side with something else
    /// ([`crate::json::values_clash`]) and the merged table stays within
    /// [`MERGED_GROWTH`] times the parts' states (a `dependencies` of four names over any
    /// value: 16 objects, 65 ms apart, 1 ms merged);
    /// otherwise, or past a budget, the objects of optional members alone, as before
    /// (their alternation fails or passes it as before).
    ///
    /// Errors: the merged automaton's splice past the limits.
    fn merge_objects(
        &mut self,
        parts: Vec<(Hir, u8)>,
        pointer: &str,
    ) -> Result<Vec<Hir>, CompileError> {
        let mut kept: Vec<Option<(Arc<Table>, usize, bool)>> = Vec::with_capacity(parts.len());
        for (h, _) in &parts {
            kept.push(match h.kind() {
                HirKind::Literal(l) => match self.skeleton_table(&l.0, pointer)? {
                    Some(Kept {
                        skeleton: Skeleton::Built(t),
                        states,
                        bounded,
                    }) => Some((t, states, bounded)),
                    _ => None,
                },
                _ => None,
            });
        }
        if kept.iter().all(Option::is_none) {
            // Apart from a kept skeleton, alternatives of inline objects are one table
            // already.
            return Ok(parts.into_iter().map(|(h, _)| h).collect());
        }
        // An inline object's skeleton is its HIR's table, placeholders still transitions
        // (its states counted as they are), up to INLINE_SKELETON_UP_TO states: a larger
        // one writes large values inline, which the union would read beside the kept
        // skeletons' (`chezmoi.json`: two of 8,923 states, 65 ms of union to find that).
        let limits = Limits {
            max_states: INLINE_SKELETON_UP_TO,
            ..self.limits
        };
        let mut bounded = false;
        let mut with_inline: Vec<Option<(Arc<Table>, usize)>> = Vec::with_capacity(parts.len());
        for ((h, types), k) in parts.iter().zip(&kept) {
            with_inline.push(match k {
                Some((skeleton, states, kept_bounded)) => {
                    bounded |= kept_bounded;
                    Some((skeleton.clone(), *states))
                }
                None if *types == OBJECT => Table::from_hir(h, &limits).ok().map(|t| {
                    bounded = true;
                    let states = t.len();
                    (Arc::new(t), states)
                }),
                None => None,
            });
        }
        let every_object = parts
            .iter()
            .zip(&with_inline)
            .all(|((_, types), s)| types & OBJECT == 0 || s.is_some());
        if bounded && every_object {
            if let Some(out) = self.merge_skeletons(&parts, &with_inline, true, pointer)? {
                return Ok(out);
            }
        }
        // The objects of optional members alone, without a bound, as before.
        let optional: Vec<Option<(Arc<Table>, usize)>> = kept
            .into_iter()
            .map(|k| {
                k.filter(|k| !k.2)
                    .map(|(skeleton, states, _)| (skeleton, states))
            })
            .collect();
        Ok(
            match self.merge_skeletons(&parts, &optional, false, pointer)? {
                Some(out) => out,
                None => parts.into_iter().map(|(h, _)| h).collect(),
            },
        )
    }

    /// [`Self::merge_objects`] of the parts with a skeleton (with the states of each
    /// part's table): the others, then one slot for the merged ones; `None` where fewer
    /// than two have one or the union passes a budget (`bounded`: the merged table past
    /// [`MERGED_GROWTH`] times the parts' states too).
    ///
    /// Errors: the merged automaton's splice past the limits (not `bounded`'s bound).
    fn merge_skeletons(
        &mut self,
        parts: &[(Hir, u8)],
        skeletons: &[Option<(Arc<Table>, usize)>],
        bounded: bool,
        pointer: &str,
    ) -> Result<Option<Vec<Hir>>, CompileError> {
        let mut objects = skeletons.iter().flatten();
        let (Some((first, _)), Some(_)) = (objects.next(), objects.clone().next()) else {
            return Ok(None);
        };
        let parts_states: usize = skeletons.iter().flatten().map(|(_, n)| n).sum();
        let within = Limits {
            max_states: if bounded {
                parts_states
                    .saturating_mul(MERGED_GROWTH)
                    .min(self.limits.max_states)
            } else {
                self.limits.max_states
            },
            ..self.limits
        };
        let mut union = Table::clone(first);
        for (o, _) in objects {
            match union.union(o, &within) {
                Ok(u) => union = u,
                Err(_) => return Ok(None),
            }
        }
        // Where the skeletons hold different values at one key, the union reads them side
        // by side, as copies (the Store's `bamboo-spec.json`: a one-member object of ten
        // kinds next to a task object, 37,730 stored states against 130 and 2,454; 0.35 ->
        // 0.9 s), and the bound would be passed after building up to it.
        if bounded && crate::json::values_clash(&union, &self.slots, self.options, &self.limits) {
            return Ok(None);
        }
        let skeleton = Arc::new(union.clone());
        let spliced = match crate::json::splice_slots(union, &self.slots, self.options, &within) {
            Ok(t) => t,
            Err(BuildError::TooLarge {
                budget: Budget::States,
                ..
            }) if within.max_states < self.limits.max_states => return Ok(None),
            Err(e) => return Err(build_error(pointer, e)),
        };
        let mut out: Vec<Hir> = parts
            .iter()
            .zip(skeletons)
            .filter(|(_, s)| s.is_none())
            .map(|((h, _), _)| h.clone())
            .collect();
        if let Some(merged) = self.skeleton_kept(skeleton, spliced, bounded, pointer)? {
            out.push(merged);
        }
        Ok(Some(out))
    }

    /// An automaton over an object's skeleton (keys, colons, commas and value placeholders:
    /// the keys' strings are the only strings there) that skips the inside of each key's
    /// string (escapes included) and steps `outside(state, byte)` on every other byte (a
    /// `"` there starts a key); it accepts outside a key where `accept` does. `special`:
    /// the bytes `outside` tells apart besides `"` (each gets a column of its own).
    ///
    /// Errors: the automaton past the limits.
    fn skeleton_automaton<S: std::hash::Hash + Eq + Clone>(
        &self,
        start: S,
        special: &[u8],
        outside: impl Fn(&S, u8) -> Option<S>,
        accept: impl Fn(&S) -> bool,
        pointer: &str,
    ) -> Result<Table, CompileError> {
        let mut classes = [0u8; 256];
        classes[b'"' as usize] = 1;
        classes[b'\\' as usize] = 2;
        for (i, &b) in special.iter().enumerate() {
            classes[b as usize] = 3 + i as u8;
        }
        let mut keys = Vec::new();
        Table::determinize_keyed(
            classes,
            3 + special.len(),
            (start, false, false),
            |(s, key, escaped): &(S, bool, bool), b| match (*key, b) {
                (true, _) if *escaped => Some((s.clone(), true, false)),
                (true, b'\\') => Some((s.clone(), true, true)),
                (true, b'"') => Some((s.clone(), false, false)),
                (true, _) => Some((s.clone(), true, false)),
                (false, b'"') => outside(s, b).map(|t| (t, true, false)),
                (false, _) => outside(s, b).map(|t| (t, false, false)),
            },
            |(s, key, _): &(S, bool, bool)| !*key && accept(s),
            &self.limits,
            &mut keys,
        )
        .map_err(|e| build_error(pointer, e))
    }

    /// The classes of keys not in `taken`: per class, the language of its keys (a slot) and
    /// the schemas its values meet.
    fn key_classes(
        &mut self,
        node: &Node<'a>,
        taken: &[String],
        names: Option<&Table>,
        pointer: &str,
    ) -> Result<Vec<(Hir, Vec<Sub<'a>>)>, CompileError> {
        let o = &node.object;
        let patterns: Vec<(usize, &String, &At<'a>)> = o
            .groups
            .iter()
            .enumerate()
            .flat_map(|(g, group)| group.patterns.iter().map(move |(p, s)| (g, p, s)))
            .collect();
        let explicit = o.groups.iter().any(|g| g.additional.is_some()) || !patterns.is_empty();
        if self.closed && !explicit {
            return Ok(Vec::new());
        }
        // Without `propertyNames` and patterns, the one class is the keys no name in
        // `taken` takes: its key ([`Self::slot_keys`]) is that list.
        let content =
            (names.is_none() && patterns.is_empty()).then(|| crate::dfa::digest(&("keys", taken)));
        // The universe: canonical strings that are not taken names.
        let any_key = Self::quoted(repeat(Self::canonical_char(), 0, None));
        let mut universe = if taken.is_empty() {
            self.table_of(&any_key, pointer)?
        } else {
            let words = alt(taken
                .iter()
                .map(|n| lit(&Value::String(n.clone()).to_string()))
                .collect());
            // Built under the compile's size budgets, which key it (as `Table::from_hir`'s
            // tables are keyed).
            let kept = KEY_UNIVERSES.get_or_build(&words, &self.limits, || {
                let t = self.table_of(&words, pointer)?;
                self.table_of(&any_key, pointer)?
                    .minus_in(&t, &self.limits, pointer)
            })?;
            Table::clone(&kept)
        };
        if let Some(n) = names {
            universe = universe.and_in(n, &self.limits, pointer)?;
        }
        // Split by each pattern: matching or not.
        let mut classes: Vec<(Table, Vec<bool>)> = vec![(universe, Vec::new())];
        for (_, p, s) in &patterns {
            let k = Self::quoted(self.pattern(p, &s.pointer)?);
            let k = self.table_of(&k, pointer)?;
            let mut next = Vec::new();
            for (t, v) in classes {
                let yes = t.and_in(&k, &self.limits, pointer)?;
                let no = t.minus_in(&k, &self.limits, pointer)?;
                for (part, m) in [(yes, true), (no, false)] {
                    if !part.is_empty() {
                        let mut v = v.clone();
                        v.push(m);
                        next.push((part, v));
                    }
                }
            }
            if next.len() > MAX_KEY_CLASSES {
                return Err(budget(
                    pointer,
                    "patternProperties overlap in too many ways",
                ));
            }
            classes = next;
        }
        let mut out = Vec::new();
        for (table, matched) in classes {
            let mut schemas = Vec::new();
            let mut allowed = !self.closed;
            for (g, group) in o.groups.iter().enumerate() {
                let hits: Vec<Sub<'a>> = patterns
                    .iter()
                    .zip(&matched)
                    .filter(|((pg, _, _), m)| *pg == g && **m)
                    .map(|((_, _, s), _)| Sub::Is((*s).clone()))
                    .collect();
                if !hits.is_empty() {
                    allowed = true;
                    schemas.extend(hits);
                } else if let Some(a) = &group.additional {
                    allowed = true;
                    schemas.push(Sub::Is(a.clone()));
                }
            }
            if !allowed {
                continue;
            }
            // Not minimized: a class is a product of the any-key table with the names'
            // trie (trimmed as built), which minimization only shrinks by the trie's shared
            // suffixes, at more cost than the rest of the key (20 names: 264 -> 185 states,
            // a fifth of the schema's compile).
            if let Some(key) = self.slot_keyed(Arc::new(table), content, pointer)? {
                out.push((key, schemas));
            }
        }
        Ok(out)
    }

    /// Whether pattern `p` (ECMA-262) matches `name` somewhere.
    fn matches(&mut self, p: &str, name: &str) -> bool {
        let re = self.matchers.entry(p.to_string()).or_insert_with(|| {
            jsonschema_regex::to_rust_regex(p)
                .ok()
                .and_then(|t| regex_automata::meta::Regex::new(&t).ok())
        });
        re.as_ref().is_some_and(|r| r.is_match(name))
    }
}

/// The written spellings of a number ([`Decimal::spellings`]).
fn spelled(d: &Decimal) -> Hir {
    let text = d.spellings();
    match regex_syntax::Parser::new().parse(&text) {
        Ok(h) if !text.is_empty() => h,
        _ => Hir::fail(),
    }
}

/// An error of a negation, put at the keyword that needed it.
fn refused(at: &str, keyword: &str, e: CompileError) -> CompileError {
    if e.budget.is_some() {
        return e;
    }
    err(
        at,
        format!(
            "{keyword} of a schema that cannot be negated ({}: {})",
            e.pointer, e.reason
        ),
    )
}

/// Every alternative of `a` with every one of `b` merged in.
fn product<'a>(
    a: Vec<Alt<'a>>,
    b: &[Alt<'a>],
    pointer: &str,
) -> Result<Vec<Alt<'a>>, CompileError> {
    if a.len().saturating_mul(b.len()) > MAX_ALTERNATIVES {
        return Err(budget(
            pointer,
            format!("more than {MAX_ALTERNATIVES} alternatives"),
        ));
    }
    let mut out = Vec::new();
    for x in &a {
        for y in b {
            let mut node = x.node.clone();
            node.merge(y.node.clone());
            if node.types == 0 {
                continue;
            }
            let mut schemas = x.schemas.clone();
            schemas.extend(y.schemas.iter().cloned());
            out.push(Alt { node, schemas });
        }
    }
    Ok(out)
}

/// The negation of a node without disjunctions, as alternatives (see the module
/// documentation for what can be negated).
/// The counts outside `min..=max` as `(min, where, max, where)` ranges: below `min` (its
/// upper bound set by the `min` keyword, `min_at`), above `max` (its lower bound set by
/// the `max` keyword, `max_at`).
type Range = (u64, Option<String>, Option<u64>, Option<String>);

fn outside(
    min: u64,
    min_at: &Option<String>,
    max: Option<u64>,
    max_at: &Option<String>,
) -> Vec<Range> {
    let mut out = Vec::new();
    if min > 0 {
        out.push((0, None, Some(min - 1), min_at.clone()));
    }
    if let Some(max) = max {
        out.push((max.saturating_add(1), max_at.clone(), None, None));
    }
    out
}

/// `min` raised to `to` (a `minLength`-like keyword at `at`), remembering where.
fn raise_min(min: &mut u64, min_at: &mut Option<String>, to: u64, at: Option<String>) {
    if to > *min {
        *min = to;
        *min_at = at;
    }
}

/// `max` lowered to `to` (a `maxLength`-like keyword at `at`), remembering where.
fn lower_max(
    max: &mut Option<u64>,
    max_at: &mut Option<String>,
    to: Option<u64>,
    at: Option<String>,
) {
    if let Some(to) = to {
        if max.is_none_or(|m| to < m) {
            *max = Some(to);
            *max_at = at;
        }
    }
}

/// A lower count bound past `JsonOptions::max_count`, at the keyword that set it (`pointer`
/// when none did): `keyword` (`minLength`) itself, or a negated upper bound (`not:
/// {maxLength: 300}` wants 301 or more, named as the keyword written).
fn above_cap(
    keyword: &str,
    min: u64,
    at: &Option<String>,
    pointer: &str,
    cap: u64,
) -> CompileError {
    match at {
        Some(at) if !at.ends_with(&format!("/{keyword}")) => {
            let written = at.rsplit('/').next().unwrap_or(keyword);
            budget(
                at,
                format!(
                    "{written} {} negated wants {min} or more, above JsonOptions::max_count ({cap})",
                    min.saturating_sub(1)
                ),
            )
        }
        Some(at) => budget(
            at,
            format!("{keyword} {min} is above JsonOptions::max_count ({cap})"),
        ),
        None => budget(
            pointer,
            format!("{keyword} {min} is above JsonOptions::max_count ({cap})"),
        ),
    }
}

/// One alternative: a node of `types` that `set` constrains further.
fn patch<'a>(types: u8, set: impl FnOnce(&mut Node<'a>)) -> Alt<'a> {
    let mut m = Node::of(types);
    set(&mut m);
    Alt::node(m)
}

/// Whether a value holds a number a double reader may confuse with a longer text of it:
/// any number, at any depth (an integer `1` is also the double `1.0` that
/// `1.00000000000000001` reads as).
fn holds_number(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::Array(items) => items.iter().any(holds_number),
        Value::Object(members) => members.values().any(holds_number),
        _ => false,
    }
}

fn complement_atoms<'a>(n: &Node<'a>, pointer: &str) -> Result<Vec<Alt<'a>>, CompileError> {
    let refuse = |at: &Option<String>, what: &str| {
        err(
            at.as_deref().unwrap_or(pointer),
            format!("{what} cannot be negated"),
        )
    };
    let mut out = Vec::new();
    let others = ALL & !n.types;
    if others != 0 {
        out.push(Alt::node(Node::of(others)));
    }
    if n.types == 0 {
        return Ok(out);
    }
    if let Some(values) = &n.literals {
        let constrained = !(n.excluded.is_empty()
            && n.string_free()
            && n.number_free()
            && n.array_free()
            && n.object_free());
        if constrained {
            return Err(err(
                pointer,
                "enum or const next to other keywords cannot be negated",
            ));
        }
        let values: Vec<Value> = values
            .iter()
            .filter(|v| type_of(v) & n.types != 0 || (v.is_number() && n.types & NUMBER != 0))
            .cloned()
            .collect();
        if values.iter().any(|v| !spelled_exactly(v)) {
            return Err(err(
                pointer,
                "an enum or const object of several members cannot be negated",
            ));
        }
        let mut node = Node::of(n.types);
        node.excluded = values;
        out.push(Alt::node(node));
        return Ok(out);
    }
    let s = &n.string;
    if n.types & STRING != 0 {
        if !s.formats.is_empty() {
            return Err(refuse(&s.format_at, "format"));
        }
        for (lo, lo_at, hi, hi_at) in outside(s.min, &s.min_at, s.max, &s.max_at) {
            out.push(patch(STRING, |m| {
                (m.string.min, m.string.max) = (lo, hi);
                (m.string.min_at, m.string.max_at) = (lo_at, hi_at);
            }));
        }
        for p in &s.patterns {
            out.push(patch(STRING, |m| m.string.not_patterns.push(p.clone())));
        }
        for p in &s.not_patterns {
            out.push(patch(STRING, |m| m.string.patterns.push(p.clone())));
        }
    }
    let num = &n.number;
    let nt = n.types & NUMBER;
    if nt != 0 {
        if let Some((b, x)) = &num.lo {
            out.push(patch(nt, |m| m.number.hi = Some((b.clone(), !x))));
        }
        if let Some((b, x)) = &num.hi {
            out.push(patch(nt, |m| m.number.lo = Some((b.clone(), !x))));
        }
        for q in &num.multiple_of {
            out.push(patch(nt, |m| m.number.not_multiple_of.push(q.clone())));
        }
        for q in &num.not_multiple_of {
            out.push(patch(nt, |m| m.number.multiple_of.push(q.clone())));
        }
    }
    let o = &n.object;
    if n.types & OBJECT != 0 {
        if !o.groups.is_empty() || !o.names.is_empty() {
            return Err(refuse(
                &o.structure_at,
                "patternProperties, additionalProperties or propertyNames",
            ));
        }
        // not (if p is present, p meets S) = p is present and does not meet S.
        for (name, subs) in &o.props {
            for sub in subs {
                out.push(patch(OBJECT, |m| {
                    m.object.required.push(name.clone());
                    let flipped = match sub {
                        Sub::Is(at) => Sub::Not(at.clone()),
                        Sub::Not(at) => Sub::Is(at.clone()),
                    };
                    m.object.props.push((name.clone(), vec![flipped]));
                }));
            }
        }
        for (lo, lo_at, hi, hi_at) in outside(o.min, &o.min_at, o.max, &o.max_at) {
            out.push(patch(OBJECT, |m| {
                (m.object.min, m.object.max) = (lo, hi);
                (m.object.min_at, m.object.max_at) = (lo_at, hi_at);
            }));
        }
        for r in &o.required {
            out.push(patch(OBJECT, |m| m.object.forbidden.push(r.clone())));
        }
        for f in &o.forbidden {
            out.push(patch(OBJECT, |m| m.object.required.push(f.clone())));
        }
    }
    let a = &n.array;
    if n.types & ARRAY != 0 {
        if !a.prefix.is_empty()
            || !a.rest.is_empty()
            || !a.contains.is_empty()
            || a.structure_at.is_some()
        {
            return Err(refuse(&a.structure_at, "items"));
        }
        for (lo, lo_at, hi, hi_at) in outside(a.min, &a.min_at, a.max, &a.max_at) {
            out.push(patch(ARRAY, |m| {
                (m.array.min, m.array.max) = (lo, hi);
                (m.array.min_at, m.array.max_at) = (lo_at, hi_at);
            }));
        }
    }
    if !n.excluded.is_empty() {
        let mut m = Node::any();
        m.literals = Some(n.excluded.clone());
        out.push(Alt::node(m));
    }
    Ok(out)
}

/// Whether no value meets both nodes, by a cheap structural test: different types,
/// different constants, disjoint numeric ranges, or a required property with disjoint
/// constants (to `depth` levels; `const` only where `draft` has it).
fn disjoint<'a>(a: &Node<'a>, b: &Node<'a>, depth: usize, draft: Draft) -> bool {
    if !a.disj.is_empty() || !b.disj.is_empty() {
        return a.types & b.types == 0;
    }
    if a.types & b.types == 0 {
        return true;
    }
    if let (Some(x), Some(y)) = (&a.literals, &b.literals) {
        if x.iter().all(|v| y.iter().all(|w| !same_value(v, w))) {
            return true;
        }
    }
    let common = a.types & b.types;
    if common & !NUMBER == 0 {
        let below = |lo: &Option<Bound>, hi: &Option<Bound>| match (lo, hi) {
            (Some((l, lx)), Some((h, hx))) => match l.cmp_value(h) {
                std::cmp::Ordering::Greater => true,
                std::cmp::Ordering::Equal => *lx || *hx,
                std::cmp::Ordering::Less => false,
            },
            _ => false,
        };
        if below(&a.number.lo, &b.number.hi) || below(&b.number.lo, &a.number.hi) {
            return true;
        }
    }
    if common == OBJECT && depth > 0 {
        for r in &a.object.required {
            if !b.object.required.contains(r) {
                continue;
            }
            let find = |n: &Node<'a>| {
                n.object
                    .props
                    .iter()
                    .find(|(p, _)| p == r)
                    .map(|(_, s)| s.clone())
            };
            let (Some(sa), Some(sb)) = (find(a), find(b)) else {
                continue;
            };
            let literal_node = |schemas: &[Sub<'_>]| -> Option<Vec<Value>> {
                // Only constants read directly from the property schemas (`const` where the
                // draft has it: cold review).
                let mut out: Option<Vec<Value>> = None;
                for s in schemas {
                    let Sub::Is(s) = s else {
                        continue;
                    };
                    let m = s.schema.as_object()?;
                    let vals = match (
                        m.get("const").filter(|_| draft >= since("const")),
                        m.get("enum"),
                    ) {
                        (Some(c), _) => vec![c.clone()],
                        (None, Some(Value::Array(e))) => e.clone(),
                        _ => continue,
                    };
                    out = Some(match out {
                        None => vals,
                        Some(prev) => prev
                            .into_iter()
                            .filter(|v| vals.iter().any(|w| same_value(v, w)))
                            .collect(),
                    });
                }
                out
            };
            if let (Some(x), Some(y)) = (literal_node(&sa), literal_node(&sb)) {
                if x.iter().all(|v| y.iter().all(|w| !same_value(v, w))) {
                    return true;
                }
            }
        }
    }
    false
}

/// A pattern's HIR (regex-syntax, from the ECMA-262 translation) as the language of string
/// texts holding a match: free canonical characters around it, except at an anchored edge.
/// The language of `pattern` (ECMA-262, without look-around) over canonical string text;
/// errors name `original`, the pattern as the schema writes it.
fn plain_pattern(pattern: &str, original: &str, at: &str) -> Result<Hir, CompileError> {
    let translated = jsonschema_regex::to_rust_regex(pattern).map_err(|()| {
        err(
            at,
            crate::json::untranslatable(&format!("the pattern {original:?}"), original),
        )
    })?;
    let hir = regex_syntax::Parser::new()
        .parse(&translated)
        .map_err(|e| {
            err(
                at,
                format!(
                    "invalid pattern {original:?}: {}",
                    crate::json::one_line(&e)
                ),
            )
        })?;
    let mut budget = MAX_PATTERN_BRANCHES;
    let branches = distribute(&hir, &mut budget).unwrap_or_else(|| vec![hir.clone()]);
    let branches = branches
        .iter()
        .map(anchored)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|what| err(at, format!("the pattern {original:?} has {what}")))?;
    Ok(alt(branches))
}

/// Most top-level alternatives [`distribute`] writes a pattern as.
const MAX_PATTERN_BRANCHES: usize = 64;

/// `hir` as alternatives whose union is its language, with every alternation that holds an
/// anchor lifted to the top (`^(?:in$|out$)`, which regex-syntax makes of `^in$|^out$`, is
/// `^in$` or `^out$`), so that [`anchored`] finds each anchor at the start or end of a
/// branch. `None` past `budget` alternatives.
fn distribute(hir: &Hir, budget: &mut usize) -> Option<Vec<Hir>> {
    if hir.properties().look_set().is_empty() {
        return Some(vec![hir.clone()]);
    }
    match hir.kind() {
        HirKind::Capture(c) => distribute(&c.sub, budget),
        HirKind::Alternation(branches) => {
            let mut out = Vec::new();
            for b in branches {
                out.extend(distribute(b, budget)?);
            }
            Some(out)
        }
        HirKind::Concat(parts) => {
            let mut out: Vec<Vec<Hir>> = vec![Vec::new()];
            for part in parts {
                let options = distribute(part, budget)?;
                if out.len() * options.len() > *budget {
                    return None;
                }
                out = out
                    .into_iter()
                    .flat_map(|prefix| {
                        options.iter().map(move |o| {
                            let mut p = prefix.clone();
                            p.push(o.clone());
                            p
                        })
                    })
                    .collect();
            }
            Some(out.into_iter().map(Hir::concat).collect())
        }
        _ => Some(vec![hir.clone()]),
    }
}

/// `^(?!A)(?!B)R` as the pattern `^R` and the patterns `^(?:A)`, `^(?:B)` a string must not
/// match: a negative look-ahead at the start holds where its pattern matches no prefix of
/// the string. `None` for any other pattern (also when `R` has a top-level `|`, where the
/// look-ahead would cover one branch only).
fn split_lookaheads(pattern: &str) -> Option<(String, Vec<String>)> {
    let mut rest = pattern.strip_prefix('^')?;
    let mut negatives = Vec::new();
    while let Some(body) = rest.strip_prefix("(?!") {
        let end = group_end(body)?;
        negatives.push(format!("^(?:{})", &body[..end]));
        rest = &body[end + 1..];
    }
    if negatives.is_empty() || top_level_bar(rest) {
        return None;
    }
    Some((format!("^{rest}"), negatives))
}

/// The byte offset of the `)` that closes a group whose body starts `body` (escapes and
/// character classes skipped), if there is one.
fn group_end(body: &str) -> Option<usize> {
    let b = body.as_bytes();
    let (mut depth, mut i, mut class) = (0usize, 0, false);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b']' if class => class = false,
            _ if class => {}
            b'[' => class = true,
            b'(' => depth += 1,
            b')' if depth == 0 => return Some(i),
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `pattern` has a `|` outside every group and class.
fn top_level_bar(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    let (mut depth, mut i, mut class) = (0usize, 0, false);
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b']' if class => class = false,
            _ if class => {}
            b'[' => class = true,
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b'|' if depth == 0 => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// The language of a pattern (one of [`distribute`]'s alternatives) over written string
/// text, found anywhere in it: an alternative that starts with `^` is matched from the
/// string's start, one that ends with `$` up to its end, and any text may come on a side
/// without an anchor. Alternatives are grouped by their anchors and each group has one free
/// text on each open side: `(em|ex|...)` is `free (em|ex|...) free`, not `free em free |
/// free ex free | ...`, whose determinization tells apart every set of alternatives
/// already matched (2^n states before minimizing: the Store's `stylelintrc.json`, a
/// `patternProperties` of 15 unit names, spent 3 s failing the work budget).
///
/// Errors: what [`encode_pattern`] cannot write (other anchors, word boundaries).
fn anchored(hir: &Hir) -> Result<Hir, String> {
    // By anchors: index `2 * start + end`.
    let mut groups: [Vec<Hir>; 4] = Default::default();
    anchor_groups(hir, &mut groups)?;
    let free = || repeat(General::canonical_char(), 0, None);
    Ok(alt(groups
        .into_iter()
        .enumerate()
        .filter(|(_, group)| !group.is_empty())
        .map(|(i, group)| {
            cat(vec![
                if i & 2 != 0 { Hir::empty() } else { free() },
                alt(group),
                if i & 1 != 0 { Hir::empty() } else { free() },
            ])
        })
        .collect()))
}

/// Adds each alternative of `hir`, written without its anchors, to the group of
/// [`anchored`] its anchors select.
fn anchor_groups(hir: &Hir, groups: &mut [Vec<Hir>; 4]) -> Result<(), String> {
    match hir.kind() {
        HirKind::Capture(c) => anchor_groups(&c.sub, groups),
        HirKind::Alternation(branches) => {
            for b in branches {
                anchor_groups(b, groups)?;
            }
            Ok(())
        }
        // An anchor alone: any text after the start, or before the end.
        HirKind::Look(Look::Start) => {
            groups[2].push(Hir::empty());
            Ok(())
        }
        HirKind::Look(Look::End) => {
            groups[1].push(Hir::empty());
            Ok(())
        }
        HirKind::Concat(parts) => {
            let mut parts: &[Hir] = parts;
            // Repeated anchors (`^(?:^a)`) are one.
            let mut start = false;
            while let Some(HirKind::Look(Look::Start)) = parts.first().map(Hir::kind) {
                start = true;
                parts = &parts[1..];
            }
            let mut end = false;
            while let Some(HirKind::Look(Look::End)) = parts.last().map(Hir::kind) {
                end = true;
                parts = &parts[..parts.len() - 1];
            }
            let inner = encode_pattern(&Hir::concat(parts.to_vec()))?;
            groups[2 * usize::from(start) + usize::from(end)].push(inner);
            Ok(())
        }
        _ => {
            groups[0].push(encode_pattern(hir)?);
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::dfa::{Limits, Table};
    use crate::json::{
        alt, cat, lit, re, repeat, untyped, Draft, JsonOptions, SchemaHir, SchemaLanguage,
        SchemaMode, Slots,
    };
    use regex_syntax::hir::Hir;
    use serde_json::{json, Map, Value};

    use super::General;

    fn options(closed: bool, draft: Draft) -> JsonOptions {
        JsonOptions {
            mode: SchemaMode::General { closed, draft },
            ..JsonOptions::default()
        }
    }

    fn table_with(schema: Value, options: JsonOptions) -> Table {
        let language = SchemaLanguage::new(&schema, options)
            .compile_language()
            .unwrap();
        language.table(options, &Limits::default()).unwrap()
    }

    fn table(schema: Value) -> Table {
        table_with(schema, options(false, Draft::Draft2020))
    }

    /// `schema`'s HIR and slots in general mode (objects open, draft 2020-12).
    fn general_hir(schema: &Value) -> SchemaHir {
        let o = options(false, Draft::Draft2020);
        super::compile(schema, o, false, Draft::Draft2020, &Limits::default()).unwrap()
    }

    /// Fails unless `t` has fewer than `below` stored states.
    fn small(t: &Table, below: usize) {
        assert!(
            t.stored_states() < below,
            "{} stored states",
            t.stored_states()
        );
    }

    fn check(t: &Table, yes: &[&str], no: &[&str]) {
        for y in yes {
            assert!(t.matches(y.as_bytes()), "{y} should be in");
        }
        for n in no {
            assert!(!t.matches(n.as_bytes()), "{n} should be out");
        }
    }

    /// A pattern that cannot be translated is refused with the reason the regex parser
    /// gives for it as written and where (1-based characters), at its pointer: an unclosed
    /// class, a repetition range backwards.
    #[test]
    fn untranslatable_patterns_say_why() {
        for (pattern, reason) in [
            ("([a-z", "unclosed character class at character 2"),
            ("x{2,1}", "the start must be <= the end at character 2"),
        ] {
            let schema = json!({"properties": {"id": {"type": "string", "pattern": pattern}}});
            let e = SchemaLanguage::new(&schema, options(false, Draft::Draft2020))
                .compile_language()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.contains("/properties/id/pattern") && e.contains(reason),
                "{pattern}: {e}"
            );
        }
    }

    /// A pattern that translates but that regex-syntax refuses (a backreference) is
    /// refused on one line naming why (the parser error's `Display` spans three lines with
    /// a caret), as the strict subset's gate already says it.
    #[test]
    fn refused_patterns_say_why_on_one_line() {
        let schema = json!({"properties": {"id": {"type": "string", "pattern": "^(a|b)\\1$"}}});
        let general = SchemaLanguage::new(&schema, options(false, Draft::Draft2020))
            .compile_language()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        let strict_schema = json!({"type": "object", "properties": {
            "id": {"type": "string", "pattern": "^(a|b)\\1$"}},
            "required": ["id"], "additionalProperties": false});
        let strict = SchemaLanguage::new(&strict_schema, crate::json::JsonOptions::default())
            .compile()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        for e in [general, strict] {
            assert!(
                e.contains("/properties/id/pattern")
                    && e.contains("backreferences are not supported")
                    && !e.contains('\n'),
                "{e}"
            );
        }
    }

    /// A child place reused ([`General::child_language`]) is the one met in the same state:
    /// `a` and `b` both read `node` again, which is unrolled three entries deep
    /// ([`JsonOptions::max_recursion`]), so the place `/properties/b` is met with `node`
    /// entered once, twice and three times (no value then), and each keeps its own
    /// language. Reusing the deepest one (`b` left out) at the top, or the top one (four
    /// levels) at the bottom, changes which of these is in.
    #[test]
    fn reused_places_keep_their_recursion_depth() {
        let node = json!({"type": "object", "required": ["s"], "properties": {
            "a": {"$ref": "#/$defs/node"},
            "b": {"$ref": "#/$defs/node"},
            "s": {"type": "string"}
        }});
        let t = table(json!({"$defs": {"node": node}, "$ref": "#/$defs/node"}));
        check(
            &t,
            &[
                r#"{"b":{"s":"1"},"s":"0"}"#,
                r#"{"a":{"s":"1"},"b":{"b":{"s":"2"},"s":"1"},"s":"0"}"#,
                r#"{"b":{"a":{"s":"2"},"s":"1"},"s":"0"}"#,
            ],
            &[
                r#"{"b":{"b":{"b":{"s":"3"},"s":"2"},"s":"1"},"s":"0"}"#,
                r#"{"a":{"b":{"a":{"s":"3"},"s":"2"},"s":"1"},"s":"0"}"#,
            ],
        );
    }

    /// The linear form of an object of optional members ([`General::optional_members`])
    /// has the quadratic form's language ([`Writer::members`]): keys holding commas,
    /// quotes and backslashes, values holding commas, untyped values.
    #[test]
    fn optional_members_linear_form_is_the_quadratic_one() {
        let doc = json!({});
        let limits = Limits::default();
        let o = options(true, Draft::Draft2020);
        let values = [
            lit("1"),
            lit(r#""x,y""#),
            lit("[1,2]"),
            lit(r#"{"k":1,"j":[2,3]}"#),
            untyped(),
            alt(vec![lit("true"), lit("[]")]),
        ];
        let cases: [&[&str]; 3] = [
            &["a", "b", "c"],
            &["a,b", "q\"t", "back\\slash", ",", "e", "f"],
            &["only"],
        ];
        for names in cases {
            let members: Vec<(String, Hir, bool)> = names
                .iter()
                .zip(values.iter().cycle())
                .map(|(n, v)| (n.to_string(), v.clone(), false))
                .collect();
            let mut g = General::new(&doc, o, true, Draft::Draft2020, &limits);
            let w = g.writer.clone();
            let quadratic: Vec<(Hir, bool)> = members
                .iter()
                .map(|(n, v, _)| (cat(vec![w.key(n), v.clone()]), false))
                .collect();
            let (body, empty) = w.members(quadratic, "").unwrap();
            assert!(empty);
            let want = g.table_of(&w.container("{", body, true, "}"), "").unwrap();
            let object = g
                .optional_members(members, Vec::new(), None, true, "")
                .unwrap();
            let got = g.table_of(&object, "").unwrap();
            assert!(got.same_language(&want), "{names:?}");
            let first = format!("{}:1", Value::from(names[0]));
            check(
                &got,
                &["{}", &format!("{{{first}}}")],
                &["{,}", &format!("{{,{first}}}"), &format!("{{{first},}}")],
            );
        }
    }

    /// With members of undeclared keys (keys and values in slots, or untyped values), the
    /// linear form is the quadratic form followed by any number of them (the writing the
    /// object takes when its declared members are few), keys holding colons and commas.
    #[test]
    fn optional_members_linear_form_takes_undeclared_members_after() {
        let doc = json!({});
        let limits = Limits::default();
        let o = options(true, Draft::Draft2020);
        let mut g = General::new(&doc, o, true, Draft::Draft2020, &limits);
        let w = g.writer.clone();
        let declared: Vec<(String, Hir, bool)> = [("a:b", lit("1")), ("c", lit(r#"{"x":[1,2]}"#))]
            .iter()
            .map(|(n, v)| (n.to_string(), v.clone(), false))
            .collect();
        let key = g.table_of(&General::quoted(re("[xy:,]+")), "").unwrap();
        let key = g.slot(key, "").unwrap().unwrap();
        let value = g.table_of(&lit(r#"[3,{"k":4}]"#), "").unwrap();
        let value = g.slot(value, "").unwrap().unwrap();
        let others = vec![
            cat(vec![w.key_hir(key.clone()), value]),
            cat(vec![w.key_hir(lit(r#""z""#)), untyped()]),
        ];
        let quadratic: Vec<(Hir, bool)> = declared
            .iter()
            .map(|(n, v, _)| (cat(vec![w.key(n), v.clone()]), false))
            .collect();
        let (body, _) = w.members(quadratic, "").unwrap();
        let more = alt(others.clone());
        let rest = repeat(cat(vec![w.comma(), more.clone()]), 0, None);
        let body = alt(vec![cat(vec![body, rest.clone()]), cat(vec![more, rest])]);
        let want = g.table_of(&w.container("{", body, true, "}"), "").unwrap();
        let linear = g
            .optional_members(declared, others, None, true, "")
            .unwrap();
        let got = g.table_of(&linear, "").unwrap();
        assert!(got.same_language(&want));
        check(
            &got,
            &[
                "{}",
                r#"{"a:b":1}"#,
                r#"{"a:b":1,"c":{"x":[1,2]}}"#,
                r#"{"c":{"x":[1,2]},"x:,":[3,{"k":4}],"z":null,"y":[3,{"k":4}]}"#,
                r#"{"z":{"q":[1,{}]}}"#,
            ],
            &[
                r#"{"c":{"x":[1,2]},"a:b":1}"#,
                r#"{"a:b":1"c":{"x":[1,2]}}"#,
                r#"{,"z":1}"#,
                r#"{"z":1,}"#,
                r#"{"z":1,,"z":2}"#,
                r#"{"x":1}"#,
            ],
        );
    }

    /// Counted objects of optional members (`maxProperties` below their number, closed,
    /// which left no undeclared key to write; `minProperties` above 0) are written in the
    /// linear form with the count in its comma automaton: exact at the bounds. Written
    /// quadratically, 45 members passed the state budget.
    #[test]
    fn counted_optional_members_are_linear_and_exact() {
        let mut props = Map::new();
        for i in 0..45 {
            props.insert(format!("p{i}"), json!({"type": "integer"}));
        }
        let members = |n: usize| {
            let body: Vec<String> = (0..n).map(|i| format!(r#""p{i}":{i}"#)).collect();
            format!("{{{}}}", body.join(","))
        };
        let t = table(json!({
            "type": "object",
            "additionalProperties": false,
            "maxProperties": 44,
            "properties": props,
        }));
        check(&t, &["{}", &members(1), &members(44)], &[&members(45)]);
        // `maxProperties` every object meets: not counted.
        let t = table(json!({
            "type": "object",
            "additionalProperties": false,
            "maxProperties": 100,
            "properties": props,
        }));
        check(&t, &["{}", &members(45)], &[r#"{"q":1}"#]);
        let t = table(json!({
            "type": "object",
            "minProperties": 2,
            "maxProperties": 3,
            "properties": props,
        }));
        check(
            &t,
            &[&members(2), &members(3), r#"{"p0":0,"x":[1,{"y":2}]}"#],
            &[
                "{}",
                &members(1),
                &members(4),
                r#"{"p0":0,"x":1,"y":2,"z":3}"#,
            ],
        );
    }

    /// The same automaton slotted twice is one slot (one table, one call where two places
    /// read it); a different one is not.
    #[test]
    fn equal_tables_are_one_slot() {
        let doc = json!({});
        let limits = Limits::default();
        let o = options(true, Draft::Draft2020);
        let mut g = General::new(&doc, o, true, Draft::Draft2020, &limits);
        let a = g.table_of(&re("\"[a-c]{0,40}\""), "").unwrap();
        // The same language written otherwise.
        let b = g.table_of(&re("\"(?:a|b|c){0,40}\""), "").unwrap();
        let c = g.table_of(&re("\"[a-d]{0,40}\""), "").unwrap();
        let sa = g.slot(a, "").unwrap().unwrap();
        let sb = g.slot(b, "").unwrap().unwrap();
        let sc = g.slot(c, "").unwrap().unwrap();
        assert_eq!(sa, sb);
        assert_ne!(sa, sc);
        assert_eq!(g.slots.len(), 2);
    }

    /// A value met again is found by the digest of its HIR however large the HIR
    /// (here over 32 KiB printed; a key bounded at 16 KiB built such a value once per place): one
    /// entry, one slot; a value differing in its last literal is another.
    #[test]
    fn long_values_met_again_are_built_once() {
        let doc = json!({});
        let limits = Limits::default();
        let o = options(true, Draft::Draft2020);
        let mut g = General::new(&doc, o, true, Draft::Draft2020, &limits);
        let words = |last: &str| {
            let mut w: Vec<String> = (0..3000).map(|i| format!("\"word{i}\"")).collect();
            w.push(format!("\"{last}\""));
            re(&w.join("|"))
        };
        let value = words("last");
        let len = format!("{value:?}").len();
        assert!(len > 32 << 10, "{len}");
        let first = g.slot_of_value(value.clone(), "").unwrap();
        assert_eq!(g.values.len(), 1);
        assert_eq!(g.slot_of_value(value, "").unwrap(), first);
        assert_eq!(g.values.len(), 1);
        let other = g.slot_of_value(words("lasT"), "").unwrap();
        assert_eq!(g.values.len(), 2);
        assert_ne!(other, first);
    }

    /// An object of many long strings (40 values of up to 100 characters, past
    /// `OBJECT_WEIGHT` together) compiles with its values in slots (one table read in place
    /// by every member), with a `minProperties` its required member meets and with one
    /// that counts: lengths and counts are exact.
    #[test]
    fn objects_of_many_long_strings_compile_exactly() {
        let mut props = Map::new();
        for i in 0..40 {
            props.insert(
                format!("p{i}"),
                json!({"type": ["string", "null"], "maxLength": 100}),
            );
        }
        let long = "é".repeat(100);
        let longer = "x".repeat(101);
        for min in [1, 3] {
            let t = table(json!({
                "type": "object",
                "properties": props,
                "required": ["p0"],
                "minProperties": min,
            }));
            let ok = format!(r#"{{"p0":"{long}","p7":null,"p39":"","extra":[1,{{"a":2}}]}}"#);
            let too_long = format!(r#"{{"p0":"a","p7":null,"p39":"{longer}"}}"#);
            check(&t, &[&ok], &[&too_long, r#"{"p1":"a"}"#, "{}"]);
            let few = r#"{"p0":"a","p5":"b"}"#;
            assert_eq!(t.matches(few.as_bytes()), min <= 2, "{few} with {min}");
        }
    }

    /// Written quadratically, an object of optional members copies member j's value j + 1
    /// times; heavy values (bounded strings) are read from slots instead, so the skeleton
    /// stays small. Twelve members of strings up to 40 characters fit in 20,000 states
    /// (written in place, the skeleton passed them before it was minimized), with the same
    /// language at the bounds.
    #[test]
    fn quadratic_members_read_heavy_values_from_slots() {
        let mut props = Map::new();
        for i in 0..12 {
            props.insert(format!("k{i}"), json!({"type": "string", "maxLength": 40}));
        }
        let schema = json!({"type": "object", "properties": props});
        let o = options(false, Draft::Draft2020);
        let language = SchemaLanguage::new(&schema, o).compile_language().unwrap();
        let small = Limits {
            max_states: 20_000,
            ..Limits::default()
        };
        let t = language.table(o, &small).unwrap();
        let full = "é".repeat(40);
        let over = "x".repeat(41);
        check(
            &t,
            &[
                &format!(r#"{{"k0":"{full}","k5":"","k11":"{full}","other":[1]}}"#),
                &format!(r#"{{"k11":"{full}"}}"#),
                r#"{"k3":"a","k4":"b"}"#,
                "{}",
            ],
            &[
                &format!(r#"{{"k0":"{over}"}}"#),
                &format!(r#"{{"k2":"a","k11":"{over}"}}"#),
                r#"{"k1":"a",}"#,
            ],
        );
    }

    /// An object of optional members whose quadratic form writes more than
    /// `QUADRATIC_ALONE_UP_TO` nodes (and at most `QUADRATIC_UP_TO`) is written linearly
    /// (the object one slot, its values slots) where it is no alternative of a disjunction;
    /// as an alternative of `anyOf`, at any depth, it stays quadratic (its values written
    /// inline, member j j + 1 times). Both read the same documents.
    #[test]
    fn optional_members_are_linear_from_a_lower_size_outside_alternatives() {
        let pair = json!({"type": "object", "properties": {
            "on": {"type": "boolean"}, "off": {"type": "boolean"}}});
        let props: Map<String, Value> = (0..5).map(|i| (format!("k{i}"), pair.clone())).collect();
        let object = json!({"type": "object", "properties": props});
        let other = json!({"type": "object", "properties": {"z": {"type": "string"}},
            "required": ["z"]});
        let yes = [
            r#"{}"#,
            r#"{"k0":{},"k3":{"off":true}}"#,
            r#"{"k4":{"on":false,"off":true},"x":1}"#,
        ];
        let no = [
            r#"{"k3":{},"k0":{}}"#,
            r#"{"k1":{"on":1}}"#,
            r#"{,"k1":{}}"#,
        ];
        let alone = general_hir(&object);
        assert!(
            crate::json::hir_size(&alone.hir, 10) < 10,
            "{:?}",
            alone.hir
        );
        assert!(alone.slots.len() > 1);
        check(&table(object.clone()), &yes, &no);
        for schema in [
            json!({"anyOf": [object.clone(), other.clone()]}),
            json!({"anyOf": [{"properties": {"inner": object.clone()}}, other.clone()]}),
        ] {
            let inside = general_hir(&schema);
            assert!(crate::json::hir_size(&inside.hir, 300) > 300, "{schema}");
        }
        check(&table(json!({"anyOf": [object, other]})), &yes, &no);
    }

    /// An array item whose copies weigh more than `ITEMS_ALONE_WEIGHT` is read from a slot
    /// where the array is no alternative of a disjunction: an unbounded array writes its
    /// item twice (the first, then the repetition of the others), so an item of more than
    /// half that weight is a slot. As an alternative of `anyOf` the bound stays
    /// `OBJECT_WEIGHT` and the item is written inline. Both read the same documents.
    #[test]
    fn array_items_are_slots_from_a_lower_weight_outside_alternatives() {
        let mut props: Map<String, Value> = (0..6)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({"enum": ["one", "two", "three", 4, [5]]}),
                )
            })
            .collect();
        props.insert(
            "kind".into(),
            json!({"enum": ["alpha", "beta", "gamma,delta"]}),
        );
        props.insert("tag".into(), json!({"enum": ["one", "two", "three"]}));
        let item = json!({"type": "object", "properties": props, "required": ["kind", "tag"]});
        let array = json!({"type": "array", "items": item});
        let item_hir = general_hir(&item).hir;
        let weight = crate::json::hir_weight(&item_hir, 100_000);
        let size = crate::json::hir_size(&item_hir, 100_000);
        assert!(
            2 * weight > super::ITEMS_ALONE_WEIGHT && 2 * weight <= super::OBJECT_WEIGHT,
            "{weight}"
        );
        let yes = [
            "[]",
            r#"[{"kind":"alpha","tag":"one"}]"#,
            r#"[{"kind":"gamma,delta","tag":"two"},{"kind":"beta","tag":"three"}]"#,
        ];
        let no = [
            "[,]",
            r#"[{"kind":"alpha"}]"#,
            r#"[{"kind":"alpha","tag":"one"},]"#,
            r#"[{"tag":"one","kind":"alpha"}]"#,
        ];
        let alone = general_hir(&array);
        assert!(
            crate::json::hir_size(&alone.hir, 40) < 40,
            "{:?}",
            alone.hir
        );
        assert!(!alone.slots.is_empty());
        check(&table(array.clone()), &yes, &no);
        let either = json!({"anyOf": [array, {"type": "string"}]});
        let inside = general_hir(&either);
        assert!(
            crate::json::hir_size(&inside.hir, 2 * size) >= 2 * size,
            "{:?}",
            inside.hir
        );
        check(&table(either), &yes, &no);
        // Counting the items that meet a `contains`, the list of items is intersected with
        // the counting automaton: the item stays inline there (a slot made that product
        // 4 -> 128 ms).
        let counted = json!({"type": "array", "items": item,
            "contains": {"type": "object", "required": ["p0"]}, "maxContains": 3});
        let c = general_hir(&counted);
        // The same array beside another one keeps its item inline in any case.
        let other = json!({"type": "array", "items": {"type": "boolean"}});
        let beside = general_hir(&json!({"anyOf": [counted.clone(), other]}));
        assert_eq!(c.slots.len(), beside.slots.len(), "{:?}", c.hir);
        check(
            &table(counted),
            &[
                r#"[{"p0":4,"kind":"alpha","tag":"one"}]"#,
                r#"[{"kind":"alpha","tag":"one"},{"p0":"two","kind":"beta","tag":"two"}]"#,
            ],
            &[
                r#"[{"kind":"alpha","tag":"one"}]"#,
                &format!(
                    "[{}]",
                    [r#"{"p0":4,"kind":"alpha","tag":"one"}"#; 4].join(",")
                ),
            ],
        );
    }

    /// A string's bounds, formats and patterns are one table kept process-wide, built within
    /// the default size budgets and then held to the caller's state limit, as cached
    /// readers are: `format: uri` up to 256 characters (`maxLength` cut to `max_count`)
    /// minimizes to 42,375 states, its intersection passing 45,000 before that. Under a
    /// 45,000-state limit it compiles (the intersection was refused under the caller's
    /// limit, and the first of `template::with_shallow_retry`'s tries, at a quarter of the
    /// default limit, failed that construction again at every compile); under 40,000 it
    /// is refused by the state budget, before the table is kept and after.
    #[test]
    fn string_tables_are_held_to_the_state_limit_once_built() {
        let schema = json!({"type": "string", "format": "uri", "maxLength": 4096});
        let o = options(false, Draft::Draft2020);
        for (max_states, fits) in [(40_000, false), (45_000, true), (40_000, false)] {
            let limits = Limits {
                max_states,
                ..Limits::default()
            };
            let compiled = SchemaLanguage::new(&schema, o)
                .with_limits(limits)
                .compile_language()
                .and_then(|l| l.table(o, &limits).map_err(|e| super::build_error("", e)));
            match compiled {
                Ok(t) => {
                    assert!(fits, "{max_states}: {} states", t.len());
                    let long = format!("\"https://example.com/{}\"", "a".repeat(236));
                    check(&t, &[r#""https://example.com/a?b#c""#, &long], &["\"a b\""]);
                    assert!(!t.matches(
                        format!("\"https://example.com/{}\"", "a".repeat(237)).as_bytes()
                    ));
                }
                Err(e) => {
                    assert!(!fits, "{max_states}: {}", e.reason);
                    assert_eq!(e.budget, Some(crate::dfa::Budget::States), "{}", e.reason);
                }
            }
        }
    }

    /// `not` of a constant object whose member is read in place (a shared value: a string
    /// up to 100 characters, a `uri`) is a difference of a table with calls
    /// (`Table::product_shared` with `minus`): cold review of 2026-12-05, where a
    /// mutation left there had made it an intersection, so the constant alone was accepted.
    #[test]
    fn not_const_of_objects_with_shared_values_is_a_difference() {
        for member in [
            json!({"type": "string", "maxLength": 100}),
            json!({"format": "uri"}),
        ] {
            let t = table(json!({
                "type": "object",
                "properties": {"a": member},
                "not": {"const": {"a": "x:y"}}
            }));
            check(
                &t,
                &[r#"{"a":"x:z"}"#, "{}", r#"{"a":"x:yy"}"#],
                &[r#"{"a":"x:y"}"#],
            );
        }
    }

    /// A value past [`SLOT_FROM`] nodes becomes a slot of the same language.
    #[test]
    fn large_values_become_slots_of_the_same_language() {
        let doc = json!({});
        let limits = Limits::default();
        let o = options(true, Draft::Draft2020);
        let mut g = General::new(&doc, o, true, Draft::Draft2020, &limits);
        let digits: Vec<Hir> = (0..super::SLOT_FROM / 2)
            .map(|i| crate::json::opt(lit(&(i % 10).to_string())))
            .collect();
        let big = cat(vec![lit("\"x"), cat(digits), lit("\"")]);
        let slot = g.large_as_slot(Some(big.clone()), "").unwrap().unwrap();
        assert!(crate::json::hir_size(&slot, 10) < 10, "{slot:?}");
        let small = lit("1");
        assert_eq!(
            g.large_as_slot(Some(small.clone()), "").unwrap(),
            Some(small)
        );
        let w = g.writer.clone();
        let object = |v: Hir| w.container("{", cat(vec![w.key("k"), v]), false, "}");
        let want = g.table_of(&object(big), "").unwrap();
        let got = g.table_of(&object(slot), "").unwrap();
        assert!(got.same_language(&want));
        check(
            &got,
            &[r#"{"k":"x0123"}"#, r#"{"k":"x"}"#],
            &[r#"{"k":"xa"}"#, r#"{"k":1}"#],
        );
    }

    /// A string whose bound writes many characters ([`STRING_SLOT_FROM`]) is one minimized
    /// table per process, read in place: two schemas holding it read the same table, and
    /// the language is the bound's (`maxLength` cut to `max_count` characters).
    #[test]
    fn long_bounded_strings_are_one_table_per_process() {
        let schema = |other: &str| {
            json!({"type": "object", "properties": {
                "a": {"type": "string", "maxLength": 4096}, other: {"type": "integer"}},
                "required": ["a"], "additionalProperties": false})
        };
        let value = |t: &Table| {
            (t.stored_states() as u32..t.len() as u32)
                .find_map(|s| t.value_of(s).map(|(_, v, _, _)| v as *const Table))
                .unwrap()
        };
        let t = table(schema("b"));
        let u = table(schema("c"));
        assert!(
            t.is_shared() && t.stored_states() < 40,
            "{}",
            t.stored_states()
        );
        assert_eq!(value(&t), value(&u));
        let a = |n: usize| format!(r#"{{"a":"{}","b":1}}"#, "é".repeat(n));
        check(&t, &[&a(0), &a(256)], &[&a(257), r#"{"a":1}"#, "{}"]);
        // A short bound stays in the object's automaton.
        let t = table(json!({"type": "object", "properties": {
            "a": {"type": "string", "maxLength": 8}}, "required": ["a"],
            "additionalProperties": false}));
        assert!(!t.is_shared());
        check(&t, &[r#"{"a":"12345678"}"#], &[r#"{"a":"123456789"}"#]);
    }

    /// Objects of optional members nested (each level's object read by every member before
    /// it in the quadratic form) compile: 3 levels of 8 members, each a `$ref` to the level
    /// below (was refused past the state budget).
    #[test]
    fn nested_objects_of_optional_members_compile() {
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({"type": "integer"}));
        for level in 1..=3 {
            let props: Map<String, Value> = (0..8)
                .map(|i| {
                    let below = format!("#/$defs/l{}", level - 1);
                    (format!("p{level}{i}"), json!({ "$ref": below }))
                })
                .collect();
            defs.insert(
                format!("l{level}"),
                json!({"type": "object", "properties": props, "additionalProperties": false}),
            );
        }
        let schema = json!({"$defs": defs, "$ref": "#/$defs/l3"});
        let t = table_with(schema, options(true, Draft::Draft2020));
        // Level 1's members are integers, the others' objects.
        let (mut yes, mut no) = (String::from("1"), String::from("1"));
        for level in 1..=3 {
            let other = if level == 1 { "2" } else { "{}" };
            yes = format!(r#"{{"p{level}0":{yes},"p{level}5":{other}}}"#);
            // The same members, out of order at every level.
            no = format!(r#"{{"p{level}5":{other},"p{level}0":{no}}}"#);
        }
        check(&t, &[&yes, "{}"], &[&no, &yes.replace("}}", "},}")]);
    }

    /// A negated `const` or `enum` is an automaton difference over texts: it takes away the
    /// spellings of the excluded values. Texts a validator on doubles reads as the excluded
    /// value must go too (cold review: `[1.00000000000000000001]` under
    /// `not: {const: [1]}`, `{"a":1e-324}` under `not: {const: {"a":0}}`): the difference
    /// keeps numbers with a fraction or exponent to 15 significant digits
    /// ([`crate::json::doubles_distinct_table`]), exponents from -307 on (untyped values
    /// write down to -324). Integers up to `u64::MAX` are read exactly (Python's
    /// `jsonschema` compares `100000000000000001` and `100000000000000000` as different),
    /// so they stay; longer ones go.
    #[test]
    fn negated_constants_refuse_texts_of_the_same_double() {
        let t = table(json!({"not": {"const": [1]}}));
        check(
            &t,
            &["[2]", "[1.5]", "[0.999999999999999]", "[1.00000000000001]"],
            &[
                "[1]",
                "[1.0000000000000001]",
                "[1.00000000000000000001]",
                "[0.99999999999999999999]",
                "[0.9999999999999999e0]",
            ],
        );
        let t = table(json!({"type": "object", "not": {"const": {"a": 0}}}));
        check(
            &t,
            &[
                r#"{"a":1}"#,
                r#"{"a":1e-300}"#,
                r#"{"a":[0.3]}"#,
                r#"{"a":0.0000001}"#,
            ],
            &[
                r#"{"a":0}"#,
                // Cut as well, though a double of its own (fewer instances).
                r#"{"a":[0.30000000000000004]}"#,
                r#"{"a":1e-324}"#,
                r#"{"a":2e-324}"#,
                // A double of its own, but past 6 zeros (fewer instances); and 1e-400,
                // which reads as 0.
                r#"{"a":0.0000000000000000000001}"#,
                &format!(r#"{{"a":0.{}1}}"#, "0".repeat(399)),
            ],
        );
        let t = table(json!({"not": {"const": [100000000000000000u64]}}));
        check(
            &t,
            &["[1]", "[100000000000000001]"],
            &["[100000000000000000]", "[1.000000000000000001e17]"],
        );
        // Integers past `u64::MAX` or below `i64::MIN`, which typed integers write up to 39
        // digits: a reader without big integers reads them as doubles, equal to the excluded
        // value (`99999999999999999999` is `1e20`) or, exactly, the excluded value itself
        // (cold review of 7d1242c: both accepted).
        let parse = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
        for (schema, keep, cut) in [
            (
                r#"{"type":"integer","not":{"const":18446744073709551616}}"#,
                ["18446744073709551615", "1"],
                ["18446744073709551616", "18446744073709551617"],
            ),
            (
                r#"{"type":"integer","not":{"const":1e20}}"#,
                ["12", "18446744073709551615"],
                ["99999999999999999999", "100000000000000000000"],
            ),
            (
                r#"{"type":"integer","not":{"const":-9223372036854775808}}"#,
                ["-9223372036854775807", "0"],
                ["-9223372036854775808", "-9223372036854775809"],
            ),
            (
                r#"{"oneOf":[{"type":"integer"},{"enum":[18446744073709551616]}]}"#,
                ["7", "18446744073709551615"],
                [
                    "18446744073709551616",
                    "340282366920938463463374607431768211455",
                ],
            ),
        ] {
            check(&table(parse(schema)), &keep, &cut);
        }
        // Padded exponents of any length are spellings too (cold review: `1e010`).
        let t = table(json!({"not": {"const": 1e10}}));
        check(
            &t,
            &["1e11", "1e011"],
            &["1e10", "1e010", "1e+010", "10000000000"],
        );
        // A typed number nothing compares takes 17 digits; not beside a negated constant.
        let t = table(json!({"type": "number", "not": {"const": 1}}));
        check(
            &t,
            &["2", "0.5", "1.00000000000001"],
            &["1", "1.0000000000000001"],
        );
    }

    /// Numbers inside untyped values are compared with nothing: any shortest text of a
    /// double (Python's `repr`, ryu: up to 17 significant digits, exponents from the
    /// smallest subnormal's `e-324` to the largest double's), integers of up to 39 digits
    /// (every `u128`), any number of fraction digits.
    #[test]
    fn untyped_numbers_take_every_double_text() {
        let t = table(json!({"type": "object"}));
        check(
            &t,
            &[
                r#"{"a":0.30000000000000004}"#,
                r#"{"a":[-2.5206876611146013,1.6976931348623157e+308]}"#,
                r#"{"a":{"b":12345678901234567890}}"#,
                r#"{"a":-9999999999999999999}"#,
                r#"{"a":0.000000000000000000000000001}"#,
                // `repr(sys.float_info.max)`, `repr(-5e-324)`, the smallest normal double
                // and a subnormal (the texts Python writes for them).
                r#"{"a":1.7976931348623157e+308}"#,
                r#"{"a":[-5e-324,2.2250738585072014e-308,1.1125369292536007e-308]}"#,
                // `2**128 - 1` and `-(2**127)`, as Python writes them.
                r#"{"a":340282366920938463463374607431768211455}"#,
                r#"{"a":-170141183460469231731687303715884105728}"#,
            ],
            &[
                // 40 digits.
                r#"{"a":1234567890123456789012345678901234567890}"#,
                // Past the largest double: infinity to Python, an error to serde_json.
                r#"{"a":1e309}"#,
                r#"{"a":1.7976931348623159e+308}"#,
                // Reads as the largest double, but the comparison stops at its shortest
                // text (a valid text refused, never an overflow let through).
                r#"{"a":1.79769313486231571e+308}"#,
                r#"{"a":1e-325}"#,
                r#"{"a":01}"#,
            ],
        );
    }

    /// A typed integer compared with nothing or with bounds within ±2^53 takes integer texts
    /// up to 39 digits; past such a bound, or with a divisor, only up to `u64::MAX`. Python's
    /// `jsonschema` (Draft202012Validator) finds every instance here valid but the negative
    /// `m`: the 40 digits and the last two are valid texts the written forms leave out.
    #[test]
    fn typed_integers_take_long_texts_where_small_bounds_compare() {
        let t = table(json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "m": {"type": "number", "exclusiveMinimum": 0},
            "k": {"type": "integer", "maximum": 1e20}, "d": {"type": "integer", "multipleOf": 2}},
            "additionalProperties": false}));
        check(
            &t,
            &[
                r#"{"n":15176879684285399826432}"#,
                r#"{"n":-25750378502406589644800}"#,
                r#"{"m":340282366920938463463374607431768211455}"#,
                r#"{"k":18446744073709551615,"d":18446744073709551614}"#,
            ],
            &[
                r#"{"m":-340282366920938463463374607431768211455}"#,
                r#"{"n":1234567890123456789012345678901234567890}"#,
                // Past a bound beyond 2^53 or with a divisor: not written (though valid).
                r#"{"k":18446744073709551616}"#,
                r#"{"d":18446744073709551616}"#,
            ],
        );
    }

    /// A bound that serde_json reads as a double past the integers it reads exactly stands
    /// for an integer Python compares exactly: the bound moves inward to the next double.
    /// Verdicts from Python's `jsonschema` (Draft202012Validator); `1.8446744073709552e19`
    /// is 2^64, below `minimum: 18446744073709551617` exactly, though it reads as the
    /// double serde_json reads the bound as.
    #[test]
    fn bounds_past_exact_integers_move_inward() {
        let parse = |text: &str| -> Value { serde_json::from_str(text).unwrap() };
        let t = table(parse(
            r#"{"type":"integer","maximum":-9223372036854775809}"#,
        ));
        check(
            &t,
            &[],
            &["-9223372036854775808", "-9223372036854775807", "0"],
        );
        let t = table(parse(
            r#"{"type":"number","exclusiveMaximum":18446744073709551617}"#,
        ));
        // `18446744073709551615` is valid but within the double's rounding of the bound:
        // refused.
        check(&t, &["1.8e19"], &["1.9e19", "18446744073709551615"]);
        let t = table(parse(r#"{"type":"number","minimum":18446744073709551617}"#));
        check(
            &t,
            &["1.9e19"],
            &["18446744073709551615", "1.8446744073709552e19"],
        );
        // Past 2^128 too: a 40-digit bound reads as the double 1e39 (cold review).
        let t = table(parse(
            r#"{"type":"number","minimum":1000000000000000000000000000000000000001}"#,
        ));
        check(&t, &["2e39"], &["1e39", "1e+39"]);
    }

    #[test]
    fn members_follow_llguidance_order() {
        let t = table(json!({"type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {}},
            "required": ["b", "z"]}));
        check(
            &t,
            &[
                r#"{"b":"","z":1}"#,
                r#"{"a":1,"b":"x","z":null}"#,
                r#"{"b":"x","c":[1],"z":2,"other":true}"#,
                r#"{"a":1,"b":"x","z":0,"y":1,"x":{"k":2}}"#,
            ],
            &[
                // Declared properties out of order, or after undeclared ones.
                r#"{"b":"x","a":1,"z":1}"#,
                r#"{"z":1,"b":"x"}"#,
                r#"{"b":"x","other":1,"z":1}"#,
                // A declared name again as an undeclared key, and a required one missing.
                r#"{"b":"x","z":1,"a":1}"#,
                r#"{"a":1,"z":1}"#,
                // A declared property of the wrong type.
                r#"{"a":"1","b":"x","z":1}"#,
            ],
        );
        // Closed: no undeclared key, unless the schema admits some.
        let closed = table_with(
            json!({"properties": {"a": {}}, "required": ["a"]}),
            options(true, Draft::Draft2020),
        );
        check(&closed, &[r#"{"a":1}"#], &[r#"{"a":1,"b":2}"#]);
        let open_extra = table_with(
            json!({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}}),
            options(true, Draft::Draft2020),
        );
        check(&open_extra, &[r#"{"a":1,"b":2}"#], &[r#"{"a":1,"b":"2"}"#]);
    }

    #[test]
    fn dependencies_past_draft_7_are_ignored_inside_negations() {
        // Python's jsonschema 4.26: under Draft202012Validator `dependencies` is no keyword,
        // so `not` of it refuses every object ({"x": {"a": 1}} invalid); under
        // Draft7Validator that instance is valid. Outside `not`, 2020-12 applies it (refusing
        // more, README).
        let s =
            json!({"type": "object", "properties": {"x": {"not": {"dependencies": {"a": ["b"]}}}}});
        check(
            &table(s.clone()),
            &["{}"],
            &[r#"{"x":{"a":1}}"#, r#"{"x":1}"#],
        );
        let d7 = table_with(s, options(false, Draft::Draft7));
        check(
            &d7,
            &["{}", r#"{"x":{"a":1}}"#],
            &[r#"{"x":{"b":1,"a":2}}"#, r#"{"x":1}"#],
        );
        let positive = table(json!({"type": "object", "dependencies": {"a": ["b"]}}));
        check(&positive, &[r#"{"b":2,"a":1}"#, "{}"], &[r#"{"a":1}"#]);
    }

    #[test]
    fn pattern_properties_names_and_dependencies() {
        let t = table(json!({
            "patternProperties": {"^a": {"type": "integer"}, "b$": {"minimum": 10}},
            "additionalProperties": false}));
        check(
            &t,
            &[r#"{"ax":1}"#, r#"{"xb":"s"}"#, r#"{"ab":12}"#, r#"{}"#],
            &[
                r#"{"ax":"1"}"#,
                r#"{"ab":5}"#,
                r#"{"ab":"s"}"#,
                r#"{"c":1}"#,
            ],
        );
        let names = table(json!({"propertyNames": {"maxLength": 2}, "properties": {"abc": {}}}));
        check(&names, &[r#"{"ab":1}"#], &[r#"{"abc":1}"#, r#"{"xyz":1}"#]);
        let deps = table(json!({"type": "object", "dependentRequired": {"q": ["f"]}}));
        check(
            &deps,
            &[r#"{"f":1,"q":2}"#, r#"{"f":1}"#, r#"{}"#],
            &[r#"{"q":2}"#, r#"{"x":1,"q":2}"#],
        );
    }

    #[test]
    fn strings_are_canonical_with_lengths_patterns_and_formats() {
        let s = table(json!({"type": "string", "minLength": 2, "maxLength": 3}));
        check(
            &s,
            &[r#""ab""#, r#""a\nb""#, "\"é東\""],
            &[r#""a""#, r#""abcd""#, r#""\u0061b""#, r#""a\/""#],
        );
        let anchored = table(json!({"pattern": "^a[0-9]+$", "type": "string"}));
        check(
            &anchored,
            &[r#""a12""#],
            &[r#""xa12""#, r#""a12x""#, r#""a""#],
        );
        let free = table(json!({"pattern": "a[0-9]", "type": "string"}));
        check(&free, &[r#""xa1y""#], &[r#""xa""#]);
        let both = table(json!({"type": "string", "pattern": "^x|y$", "maxLength": 3}));
        check(&both, &[r#""xab""#, r#""aby""#], &[r#""axb""#, r#""xabc""#]);
        let email = table(json!({"format": "email", "type": "string"}));
        check(&email, &[r#""a.b@c.de""#], &[r#""a..b@c.de""#, r#""ab""#]);
    }

    /// Alternatives of objects of optional members are one table (`merge_objects`): a
    /// closed object of 12 members with a `not` of two of them (the shape of the Store's
    /// `sil-kit-participant-configuration.json`, three alternatives) reads each member's
    /// value where the alternatives' skeletons reach it together: 110 stored states, where
    /// copying the alternatives side by side with their values passed 200,000. The language
    /// is the alternation's.
    /// With whitespace, `{}` takes one run of it, as an object without members always did.
    #[test]
    fn alternatives_of_objects_are_one_table() {
        let mut props = Map::new();
        for i in 0..12 {
            props.insert(
                format!("p{i}"),
                json!({"type": "object", "properties": {"x": {"type": "integer"},
                    "y": {"type": "array", "items": {"type": "string", "maxLength": 20}}}}),
            );
        }
        let schema = json!({"type": "object", "additionalProperties": false,
            "properties": props, "not": {"required": ["p0", "p5"]}});
        let t = table(schema.clone());
        let member = r#"{"x":1,"y":["a"],"z":null}"#;
        check(
            &t,
            &[
                "{}",
                &format!(r#"{{"p0":{member},"p1":{{}}}}"#),
                &format!(r#"{{"p5":{member},"p11":{member}}}"#),
            ],
            &[
                &format!(r#"{{"p0":{member},"p5":{member}}}"#),
                &format!(r#"{{"p0":{member},"p1":{{"x":"1"}}}}"#),
                r#"{"q":1}"#,
                r#"{"p0":{},}"#,
            ],
        );
        small(&t, 2_000);
        let spaced = JsonOptions {
            whitespace: 2,
            ..options(false, Draft::Draft2020)
        };
        let t = table_with(schema, spaced);
        check(
            &t,
            &[
                "{}",
                "{  }",
                &format!(r#"{{ "p0" : {member} , "p1": {{ }} }}"#),
            ],
            &["{   }", &format!(r#"{{"p0":{member},"p5":{{}}}}"#)],
        );
    }

    /// `contains` counted from below reads an item as its schema or as any other value:
    /// the other items are only of the types the schema does not take whole (`minimum`
    /// takes every object, array, string, boolean and null), so the two readings are read
    /// side by side only where both can be (numbers), not as two readers of any value.
    /// Items otherwise unconstrained: the `contains` language is the array's, with no
    /// intersection with the list of any items. Verdicts as the specification gives them
    /// (a keyword of one type holds for values of every other type).
    #[test]
    fn contains_reads_other_items_only_where_the_schema_does_not_take_them_whole() {
        let cases = [
            // Schema, valid, invalid, and whether the items are otherwise unconstrained.
            (
                json!({"contains": {"minimum": 5}}),
                &[
                    r#"[5]"#,
                    r#"[{"a":1}]"#,
                    r#"[1,"x"]"#,
                    r#"[[1]]"#,
                    r#"[4.9,5.0]"#,
                    "3",
                ][..],
                &[r#"[]"#, r#"[1,2]"#, r#"[4.99]"#, r#"[-5]"#][..],
                true,
            ),
            (
                json!({"contains": {"type": "string"}, "minContains": 2}),
                &[r#"["a",1,"b"]"#, r#"["a","b"]"#, r#"[{},"a",null,"b",[]]"#][..],
                &[r#"["a",{"b":"c"}]"#, r#"["a",["b"]]"#, r#"[1,2,"a"]"#][..],
                true,
            ),
            (
                json!({"contains": {"type": ["object", "null"]}}),
                &[r#"[1,{"x":[1,{}]}]"#, r#"[null]"#][..],
                &[r#"[1,"a",[{}]]"#, r#"[]"#][..],
                true,
            ),
            (
                json!({"items": {"type": "integer"}, "contains": {"minimum": 3},
                    "minContains": 2}),
                &[r#"[3,4]"#, r#"[1,3,0,3]"#][..],
                &[r#"[3,1]"#, r#"[3,4,1.5]"#, r#"[3,"4",5]"#, r#"[]"#][..],
                false,
            ),
            (
                json!({"contains": {"minimum": 1, "maximum": 2}, "minContains": 1,
                    "maxContains": 1}),
                &[r#"[1,3]"#, r#"[0,1.5,3]"#, r#"["a"]"#][..],
                &[r#"[1,2]"#, r#"[0,3]"#, r#"["a",2]"#, r#"[{},"b"]"#][..],
                true,
            ),
        ];
        // Closed, the schema's objects are closed but the other items are any value, as
        // untyped values are (cold review: `[5,{"a":1}]` was refused).
        let closed = |schema: Value| table_with(schema, options(true, Draft::Draft2020));
        check(
            &closed(json!({"contains": {"minimum": 5}})),
            &[r#"[5,{"a":1}]"#, r#"[{},5]"#],
            &[r#"[{"a":1}]"#, r#"[4]"#],
        );
        check(
            &closed(json!({"type": "array", "contains": {"type": "string"}, "minContains": 2})),
            &[r#"["",{"a":1},"b"]"#],
            &[r#"["",{"a":1}]"#],
        );
        for (schema, yes, no, free) in cases {
            let t = table(schema.clone());
            check(&t, yes, no);
            // Any value and a `minimum` read side by side: 14,997 stored states.
            small(&t, 2_000);
            // Intersected with the list of any items, the array would be one table that
            // the root calls (3 stored states: start, the call's place, its return).
            assert!(!free || t.stored_states() > 3, "{schema}: intersected");
        }
    }

    /// Alternatives of objects written inline (required members) join the kept skeletons
    /// of counted objects in one table where no large value would be read side by side:
    /// the JSON-Schema-Test-Suite's draft 4 "dependencies with escaped characters" are 16
    /// objects over any value (required and forbidden names, some counted by a
    /// `minProperties`). Apart, the root read them side by side with their untyped values
    /// copied (66,088 stored states, 65 ms); merged, the root calls one table. Verdicts:
    /// the suite's (its valid objects with the names a dependency requires written before
    /// the property, the documented order), and any value that is not an object.
    #[test]
    fn inline_objects_join_kept_skeletons() {
        let t = table(json!({"dependencies": {"foo\nbar": ["foo\rbar"],
            "foo\tbar": {"minProperties": 4}, "foo'bar": {"required": ["foo\"bar"]},
            "foo\"bar": ["foo'bar"]}}));
        check(
            &t,
            &[
                r#"{"foo\rbar":2,"foo\nbar":1}"#,
                r#"{"foo\tbar":1,"a":2,"b":3,"c":4}"#,
                r#"{"foo\"bar":2,"foo'bar":1}"#,
                "{}",
                "[1]",
                r#""foo'bar""#,
            ],
            &[
                r#"{"foo\nbar":1,"foo":2}"#,
                r#"{"foo\tbar":1,"a":2}"#,
                r#"{"foo'bar":1}"#,
                r#"{"foo\"bar":2}"#,
            ],
        );
        small(&t, 1_000);
    }

    /// An array item written once per counted copy (`maxItems`) is read in place from one
    /// table where its copies would weigh more than `OBJECT_WEIGHT` (`copies_weigh`): the
    /// shape of the Store's `tslint.json` `member-ordering` (up to 15 items, each a kind or
    /// an object holding up to 15 kinds) is 33 stored states, not 10,608 (one copy of the
    /// item per count: the Store's schema compiled in 0.77 s, now 0.08 s), and its language
    /// is unchanged.
    #[test]
    fn counted_items_are_read_in_place() {
        let kinds = json!({"type": "array", "minItems": 1, "maxItems": 15, "items": {
            "enum": ["static-field", "instance-field", "static-method", "instance-method",
                     "constructor", "public-static-field", "public-static-method"]}});
        let t = table(
            json!({"type": "array", "minItems": 1, "maxItems": 15, "items": {
            "anyOf": [kinds["items"], {"type": "object", "additionalProperties": false,
                "properties": {"name": {"type": "string"}, "kinds": kinds}}]}}),
        );
        let item = r#"{"name":"a","kinds":["static-field","constructor"]}"#;
        let fifteen = vec![r#""constructor""#; 15].join(",");
        let sixteen = vec![r#""constructor""#; 16].join(",");
        let many_kinds = vec![r#""static-method""#; 15].join(",");
        let too_many_kinds = vec![r#""static-method""#; 16].join(",");
        check(
            &t,
            &[
                &format!("[{item}]"),
                &format!("[{fifteen}]"),
                &format!(r#"[{item},"static-field",{{"kinds":[{many_kinds}]}}]"#),
            ],
            &[
                "[]",
                &format!("[{sixteen}]"),
                &format!(r#"[{{"kinds":[{too_many_kinds}]}}]"#),
                r#"[{"kinds":[]}]"#,
                r#"["constructor",]"#,
            ],
        );
        small(&t, 1_000);
    }

    /// Alternatives of a pattern with the same anchors share one free text on each open
    /// side (`anchored`): a `patternProperties` of 15 unit names found anywhere in a key
    /// (the Store's `stylelintrc.json`) compiles within the default budgets (written as 15
    /// branches with free text each, it failed the work budget after 3 s), and every
    /// grouping of anchors keeps the pattern's language: each string of up to 5 letters
    /// over `a`, `b`, `c` is in exactly where regex-automata finds the pattern in it.
    #[test]
    fn unanchored_alternatives_share_their_free_text() {
        let units = "(em|ex|ch|vw|vh|cm|mm|in|pt|pc|px|rem|vmin|vmax|%)";
        let t = table(json!({"type": "object", "additionalProperties": false,
            "patternProperties": {units: {"type": "integer"}}}));
        check(
            &t,
            &[
                r#"{"12px":1}"#,
                r#"{"a%b":1,"vmin":2}"#,
                r#"{"xinx":1}"#,
                "{}",
            ],
            &[r#"{"12":1}"#, r#"{"e m":1}"#, r#"{"px":"1"}"#],
        );
        for pattern in [
            "(ab|ba|aa)",
            "^a|b$|ab|^c$",
            "^(a|b)|c",
            "a|^$",
            "(^a|b)(c|$)",
        ] {
            let t = table(json!({"type": "string", "pattern": pattern}));
            let regex = regex_automata::meta::Regex::new(pattern).unwrap();
            let mut words = vec![String::new()];
            for _ in 0..5 {
                let longer: Vec<String> = words
                    .iter()
                    .filter(|w| w.len() == words.last().map_or(0, String::len))
                    .flat_map(|w| ["a", "b", "c"].map(|c| format!("{w}{c}")))
                    .collect();
                words.extend(longer);
            }
            for w in &words {
                let written = format!("\"{w}\"");
                assert_eq!(
                    t.matches(written.as_bytes()),
                    regex.is_match(w.as_str()),
                    "{pattern} on {w:?}"
                );
            }
        }
    }

    #[test]
    fn anchors_in_alternatives_and_leading_negative_lookaheads() {
        // regex-syntax factors `^in$|^out$` into `^(?:in$|out$)`: anchors inside the
        // alternation, lifted to the top.
        let t = table(json!({"type": "string", "pattern": "^in$|^out$"}));
        check(
            &t,
            &[r#""in""#, r#""out""#],
            &[r#""inx""#, r#""xout""#, r#""""#],
        );
        // One branch anchored at the start only, the other at both ends (SARIF's language
        // tag): the first matches any string starting with two letters.
        let t = table(json!({"type": "string",
            "pattern": "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}?$"}));
        check(
            &t,
            &[r#""en""#, r#""en-US""#, r#""en-""#, r#""ab1""#],
            &[r#""e""#, r#""1en""#],
        );
        let t = table(json!({"type": "string",
            "pattern": "^(\\d{4})$|^([a-zA-Z]{2}(-[A-Za-z]{2})?)$|^neutral$"}));
        check(
            &t,
            &[r#""1033""#, r#""en""#, r#""en-us""#, r#""neutral""#],
            &[r#""103""#, r#""en-usa""#, r#""neutrals""#, r#""x1033""#],
        );
        // `^(?!A)(?!B)R`: R from the start, and no prefix matching A or B.
        let t = table(json!({"type": "string", "pattern": "^(?!bundle::)(?!with$).*"}));
        check(
            &t,
            &[
                r#""""#,
                r#""bundle:x""#,
                r#""withx""#,
                r#""wit""#,
                r#""x bundle::""#,
            ],
            &[r#""bundle::a""#, r#""bundle::""#, r#""with""#],
        );
        let t = table(json!({"type": "string", "pattern": "^(?!@@)[@a-z]+$"}));
        check(
            &t,
            &[r#""@a""#, r#""a@@""#],
            &[r#""@@""#, r#""@@a""#, r#""""#, r#""A""#],
        );
        // A `^` inside the look-ahead, alternatives in it.
        let t = table(json!({"type": "string",
            "pattern": "^(?!^lucene\\.|builtin\\.|mongo(db)?\\.).*"}));
        check(
            &t,
            &[r#""lucene""#, r#""my.builtin.x""#, r#""mongox.""#],
            &[
                r#""lucene.x""#,
                r#""builtin.""#,
                r#""mongo.a""#,
                r#""mongodb.b""#,
            ],
        );
        // Look-aheads in patternProperties: keys that are not `variables`.
        let t = table(json!({"type": "object", "additionalProperties": false,
            "patternProperties": {"^(?!variables$).+$": {"type": "integer"}}}));
        check(
            &t,
            &[r#"{"a":1}"#, r#"{"variablesx":1,"b":2}"#],
            &[r#"{"variables":1}"#, r#"{"":1}"#, r#"{"a":"x"}"#],
        );
        // Only at the very start, before no top-level `|`, and without nested look-around:
        // otherwise refused as before.
        for p in ["a(?!b)", "^(?!a)b|c", "^(?!a(?=b))c"] {
            let schema = json!({"type": "string", "pattern": p});
            let e = crate::json::SchemaLanguage::new(&schema, options(false, Draft::Draft2020))
                .compile_language()
                .err()
                .unwrap_or_else(|| panic!("{p} compiles"));
            assert!(e.pointer.ends_with("/pattern"), "{p}: {e}");
        }
        assert_eq!(
            super::split_lookaheads(r"^(?!a[)]\)|(b))x"),
            Some(("^x".to_string(), vec![r"^(?:a[)]\)|(b))".to_string()]))
        );
    }

    #[test]
    fn a_property_negation_that_cannot_be_generated_leaves_out_its_alternative() {
        // Branch 1 of the oneOf must not meet branch 0: among the ways, `a` present and not
        // an array of integers, which `items` cannot say; that way is left out, the others
        // stay. Verdicts by the oneOf rule (exactly one branch).
        let t = table(json!({"oneOf": [
            {"type": "object", "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
             "required": ["a"]},
            {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]}]}));
        check(
            &t,
            &[r#"{"a":[1]}"#, r#"{"b":"x"}"#, r#"{"a":[1],"b":1}"#],
            &[r#"{"a":[1],"b":"x"}"#, r#"{"a":"s"}"#, r#"{}"#, "1"],
        );
    }

    #[test]
    fn literals_negations_and_conditionals() {
        let e = table(json!({"enum": [{"a": 1, "b": [2.5]}, 3, "x"]}));
        check(
            &e,
            &[
                r#"{"a":1,"b":[2.5]}"#,
                r#"{"a":1.0,"b":[2.50]}"#,
                "3",
                "3.0",
                r#""x""#,
            ],
            &[r#"{"b":[2.5],"a":1}"#, "4", r#""y""#],
        );
        // Repeated strings, strings excluded by `not`, numbers of one value spelled twice.
        let repeated = table(json!({"enum": ["a", "b", "a", 1, "c", 1.0, "b", "1"],
            "not": {"enum": ["b", 2]}}));
        check(
            &repeated,
            &[r#""a""#, r#""c""#, "1", "1.0", r#""1""#],
            &[r#""b""#, "2", r#""d""#],
        );
        let not = table(json!({"not": {"type": "string", "minLength": 2}}));
        check(&not, &["1", r#""a""#, "null"], &[r#""ab""#]);
        let cond = table(json!({"if": {"type": "integer"}, "then": {"minimum": 5},
            "else": {"type": "string"}}));
        check(&cond, &["5", r#""s""#], &["4", "null", "5.5"]);
        let one = table(json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}));
        check(&one, &["1", "2.5", r#""s""#], &["3", "-1.5"]);
    }

    /// A keyword newer than the schema's `$schema` draft is ignored, as that draft's
    /// validators (Python `jsonschema`'s `Draft4Validator`, ...) ignore it; inside `not`,
    /// applying it would write instances they find invalid.
    #[test]
    fn keywords_newer_than_the_draft_are_ignored() {
        let d4 = "http://json-schema.org/draft-04/schema#";
        let d6 = "http://json-schema.org/draft-06/schema#";
        let d7 = "http://json-schema.org/draft-07/schema#";
        let d2019 = "https://json-schema.org/draft/2019-09/schema";
        // Draft 4 has no `const`: `not: {const: 1}` is `not: {}` there, which no value meets.
        let t = table(json!({"$schema": d4, "anyOf": [{"type": "string"}, {"not": {"const": 1}}]}));
        check(&t, &[r#""s""#], &["2", "1", "null"]);
        check(
            &table(json!({"$schema": d4, "const": 1, "type": "integer"})),
            &["1", "2"],
            &["\"1\""],
        );
        check(
            &table(
                json!({"$schema": d4, "type": "array", "contains": {"type": "string"},
                "items": {"type": "integer"}}),
            ),
            &["[1]", "[]"],
            &[r#"["a"]"#],
        );
        check(
            &table(json!({"$schema": d4, "type": "object", "propertyNames": {"maxLength": 1}})),
            &[r#"{"long":1}"#],
            &["1"],
        );
        // Draft 6 has no `if`; draft 7 no `dependentRequired` nor `minContains`.
        check(
            &table(
                json!({"$schema": d6, "type": "integer", "if": {"minimum": 0},
                "then": {"maximum": 3}}),
            ),
            &["3", "7"],
            &["\"x\""],
        );
        check(
            &table(json!({"$schema": d7, "type": "object", "dependentRequired": {"a": ["b"]}})),
            &[r#"{"a":1}"#],
            &["[]"],
        );
        check(
            &table(
                json!({"$schema": d7, "type": "array", "contains": {"const": 1},
                "minContains": 2}),
            ),
            &["[1]", "[1,1]"],
            &["[2]"],
        );
        // Draft 2019-09 has no `prefixItems`; `unevaluatedProperties` of draft 7 is an
        // unknown keyword, not a refusal.
        check(
            &table(json!({"$schema": d2019, "type": "array",
                "prefixItems": [{"type": "integer"}]})),
            &[r#"["x"]"#, "[1]"],
            &["{}"],
        );
        check(
            &table(json!({"$schema": d7, "type": "object", "unevaluatedProperties": false})),
            &[r#"{"a":1}"#],
            &["[]"],
        );
        // Nor does draft 4 have `const` where `oneOf` looks for disjoint branches: these two
        // are the same schema there, so no object meets exactly one (refused or not written).
        let branch = |k: i64| json!({"type": "object", "required": ["k"], "properties": {"k": {"const": k}}});
        let same = json!({"$schema": d4, "oneOf": [branch(1), branch(2)]});
        let o = options(false, Draft::Draft2020);
        if let Ok(language) = SchemaLanguage::new(&same, o).compile_language() {
            let t = language.table(o, &Limits::default()).unwrap();
            check(&t, &[], &[r#"{"k":3}"#, r#"{"k":1}"#]);
        }
        // Draft 4's numeric `exclusiveMinimum`/`exclusiveMaximum` are no bounds; a truthy one
        // makes `minimum`/`maximum` exclusive (Python's `Draft4Validator`).
        check(
            &table(json!({"$schema": d4,
                "anyOf": [{"type": "string"}, {"not": {"exclusiveMinimum": 2}}]})),
            &[r#""s""#],
            &["1", "3"],
        );
        check(
            &table(json!({"$schema": d4, "type": "integer", "minimum": 2,
                "exclusiveMinimum": 5})),
            &["3"],
            &["2", "1"],
        );
    }

    /// Past ±2^53 Python's `jsonschema` compares an integer text exactly and a text with a
    /// fraction or an exponent as the double it reads, and a bound or constant written with
    /// an exponent is a double too. Verdicts from Python `jsonschema` 4 (`Draft202012Validator`).
    #[test]
    fn numbers_past_two_to_the_53_compare_as_python_reads_them() {
        check(
            &table(json!({"exclusiveMaximum": 1234567890123450100u64})),
            &["1234567890123449856", "1.2345678901234e18"],
            &["1.23456789012345e18", "1234567890123450100"],
        );
        check(
            &table(json!({"minimum": 1234567890123450100u64})),
            &["1.23456789012346e18", "1234567890123450112"],
            &["1.2345678901234e18"],
        );
        check(
            &table(json!({"type": "integer", "maximum": 9.223372036854776e18})),
            &["9223372036854775808", "9223372036854775807"],
            &["9223372036854775809"],
        );
        check(
            &table(json!({"not": {"const": 1234567890123450112u64}})),
            &["1234567890123450000", "1"],
            &["1.23456789012345e18", "1234567890123450112"],
        );
        check(
            &table(json!({"const": 1234567890123450112u64})),
            &["1.23456789012345e18", "1234567890123450112"],
            &["1234567890123450000"],
        );
        check(
            &table(json!({"const": 9.223372036854776e18})),
            &["9223372036854775808"],
            &["9223372036854776000"],
        );
    }

    #[test]
    fn references_drafts_and_number_bounds() {
        let d4 = table_with(
            json!({"id": "http://x.test/root.json", "definitions": {
                "pos": {"id": "#pos", "type": "integer", "minimum": 0, "exclusiveMinimum": true}},
                "properties": {"n": {"$ref": "#pos"}, "m": {"$ref": "#/definitions/pos"}},
                "required": ["n"]}),
            options(false, Draft::Draft4),
        );
        check(
            &d4,
            &[r#"{"n":1}"#, r#"{"n":1,"m":2}"#],
            &[r#"{"n":0}"#, r#"{"n":1.0}"#],
        );
        // Draft 4's boolean spelling in a later draft: Python's Draft202012Validator compares
        // the boolean as the integer it is (jsonschema 4.26: 0.5 and 1 are not above `true`,
        // 1.5 is; 1 and 3 are not below it).
        check(
            &table(json!({"type": "number", "minimum": 0, "exclusiveMinimum": true})),
            &["1.5", "2"],
            &["0.5", "1", "0"],
        );
        check(
            &table(json!({"type": "number", "maximum": 5, "exclusiveMaximum": true})),
            &["0.5", "0", "-3"],
            &["1", "3", "5"],
        );
        // Snowplow's self-describing schemas extend draft 4 (boolean exclusive bounds, `id`)
        // with `self`, whatever the default draft; another meta-schema is refused.
        let iglu = json!({
            "$schema": "http://iglucentral.com/schemas/com.snowplowanalytics.self-desc/schema/jsonschema/1-0-0#",
            "self": {"vendor": "com.acme", "name": "e", "format": "jsonschema", "version": "1-0-0"},
            "type": "object",
            "properties": {"n": {"type": "integer", "maximum": 5, "exclusiveMaximum": true}},
            "required": ["n"], "additionalProperties": false});
        check(
            &table(iglu.clone()),
            &[r#"{"n":4}"#],
            &[r#"{"n":5}"#, r#"{"n":4,"m":1}"#],
        );
        // `$schema` names a draft by the exact meta-schema URI, with or without its empty
        // fragment, as Python's `validator_for` finds it: the https spelling of draft 7 is
        // unknown there and read as the latest draft, where a `$ref`'s siblings apply
        // (Python's jsonschema 4.26: "abc" is valid under Draft7Validator, not under
        // Draft202012Validator).
        let sibling = |uri: &str| {
            json!({"$schema": uri, "definitions": {"s": {"type": "string"}},
                "$ref": "#/definitions/s", "maxLength": 2})
        };
        for (uri, draft7) in [
            ("http://json-schema.org/draft-07/schema#", true),
            ("http://json-schema.org/draft-07/schema", true),
            ("https://json-schema.org/draft-07/schema#", false),
            ("http://json-schema.org/draft-07/schema##", false),
            // Python normalizes with `urlsplit(uri).geturl()` first (cold review).
            ("HTTP://json-schema.org/draft-07/schema?#", true),
            ("\n http://json-schema.org/draft-07/sch\tema#\n", true),
            ("http://json-schema.org/draft-07/schema ", false),
            ("http://JSON-schema.org/draft-07/schema", false),
        ] {
            let t = table(sibling(uri));
            assert!(t.matches(br#""ab""#), "{uri}");
            assert_eq!(t.matches(br#""abc""#), draft7, "{uri}");
        }
        let e = SchemaLanguage::new(
            &sibling("http://json-schema.org/draft-03/schema#"),
            options(false, Draft::Draft2020),
        )
        .compile_language()
        .unwrap_err();
        assert!(
            e.pointer == "/$schema" && e.reason.contains("draft 3"),
            "{e}"
        );
        // Below the root Python's validators switch drafts (`Validator.evolve`): another
        // draft there is refused, the same one or an unknown URI is read as the schema's;
        // a `$schema` that is no string fails in Python and is refused.
        for (schema, at) in [
            (
                json!({"properties": {"x": {"$schema": "http://json-schema.org/draft-04/schema#",
                    "not": {"const": 3}}}}),
                Some("/properties/x/$schema"),
            ),
            (
                json!({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {
                    "x": {"$schema": "HTTP://json-schema.org/draft-03/schema"}}}),
                Some("/properties/x/$schema"),
            ),
            (json!({"$schema": 5}), Some("/$schema")),
            (
                json!({"properties": {"x": {"$schema": "https://json-schema.org/draft/2020-12/schema#"}}}),
                None,
            ),
            (
                json!({"properties": {"x": {"$schema": "http://example.test/meta"}}}),
                None,
            ),
        ] {
            let r =
                SchemaLanguage::new(&schema, options(false, Draft::Draft2020)).compile_language();
            match (r, at) {
                (Err(e), Some(at)) => assert_eq!(e.pointer, at, "{schema}: {e}"),
                (Ok(_), None) => {}
                (r, _) => panic!("{schema}: {:?}", r.map(|_| ())),
            }
        }
        let mut custom = iglu;
        custom["$schema"] = json!("http://example.test/my-meta-schema#");
        let e = SchemaLanguage::new(&custom, options(false, Draft::Draft2020))
            .compile_language()
            .unwrap_err();
        assert_eq!(e.pointer, "/$schema", "{e}");
        // A divisor too large for residues is said to be so, not too fine.
        for (q, says) in [(json!(1e308), "too large"), (json!(0.0123457), "too fine")] {
            let e = SchemaLanguage::new(
                &json!({"type": "number", "multipleOf": q}),
                options(false, Draft::Draft2020),
            )
            .compile_language()
            .map(|_| ())
            .expect_err(says);
            assert!(
                e.pointer.ends_with("/multipleOf") && e.reason.contains(says),
                "{e}"
            );
        }
        let anchor = table(json!({"$ref": "#x", "$defs": {"a": {"$anchor": "x", "maximum": 1e2}}}));
        check(
            &anchor,
            &["100", "1e+2", "-5", r#""s""#],
            &["100.5", "1.5e2"],
        );
    }

    #[test]
    fn languages_with_automata_share_one_hir() {
        // Two languages that both refer to automata, adopted into one set of slots.
        let o = options(false, Draft::Draft2020);
        let a = SchemaLanguage::new(&json!({"type": "integer", "minimum": 10}), o)
            .compile_language()
            .unwrap();
        let b = SchemaLanguage::new(
            &json!({"type": "string", "maxLength": 1, "pattern": "x"}),
            o,
        )
        .compile_language()
        .unwrap();
        assert!(!a.slots.is_empty() && !b.slots.is_empty());
        let mut slots = Slots::default();
        let ha = slots.adopt(a).unwrap();
        let hb = slots.adopt(b).unwrap();
        let both = regex_syntax::hir::Hir::alternation(vec![ha, hb]);
        let t = crate::json::language_table(&both, &slots, o, &Limits::default()).unwrap();
        check(&t, &["10", "15", r#""x""#], &["9", r#""y""#, r#""xx""#]);
    }
}
