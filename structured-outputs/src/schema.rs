//! The schema compiler: admits a JSON Schema only if it stays inside the supported subset
//! (`../shared/SEEDS.md` part 2, the structured-outputs source document), applies the contract
//! rules, and builds the value checker. Compiled schemas are cached by content.
//!
//! Subset (draft 2020-12 keywords):
//!
//! * types `string`, `integer`, `number`, `boolean`, `object`, `array`, `null` (also as a list);
//! * `properties`, `required`, `additionalProperties`; `items` (one schema, any depth);
//! * `enum`; `const` with a scalar (int, float, bool, null, string);
//! * `pattern` (a regex without `^`, `$` and look-around);
//! * `format`: `date-time`, `date`, `time` (RFC 3339) and `uuid`;
//! * `$ref` / `$defs` (recursion allowed; a `$ref` chain that loops without a constraint is an
//!   error); `anyOf`;
//! * annotations: `title`, `description`, `default`, `examples`, `$schema`, `$id`,
//!   `$comment`, `deprecated`, `readOnly`, `writeOnly`;
//! * `uniqueItems` only outside strict modes ([`Strictness::Plain`]).
//!
//! Every other keyword (`allOf`, `oneOf`, `not`, `minimum`, `maximum`, exclusive bounds,
//! `multipleOf`, `minItems`, `maxItems`, `minLength`, `maxLength`, `if`/`then`/`else`,
//! `patternProperties`, `prefixItems`, `contains`, `propertyNames`, `dependent*`,
//! `unevaluated*`, `min/maxProperties`, `definitions`, `$anchor`, `$dynamicRef`, ...) and every
//! other format is rejected with an error naming the keyword and its JSON pointer: never
//! silently ignored.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value};

pub use crate::types::{decode_fragment, type_name};
use crate::types::{ref_pointer, type_keyword, JsonType};

/// A schema the compiler does not admit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {keyword}: {reason}", if pointer.is_empty() { "(root)" } else { pointer.as_str() })]
pub struct SchemaError {
    /// JSON pointer of the offending place in the schema (RFC 6901, `""` for the root).
    pub pointer: String,
    /// The keyword (or the rule, e.g. `required`) at fault.
    pub keyword: String,
    /// Why.
    pub reason: String,
}

/// Every problem of a schema.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct SchemaErrors(pub Vec<SchemaError>);

/// Whether `uniqueItems` is admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strictness {
    /// JSON Schema mode and strict tools: `uniqueItems` is rejected.
    Strict,
    /// Plain (non-strict) tool use: `uniqueItems` is admitted.
    Plain,
}

/// Annotation keywords: admitted anywhere, never checked.
pub const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "$schema",
    "$id",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
];

/// The formats of the subset.
pub const FORMATS: &[&str] = &["date-time", "date", "time", "uuid"];

const TYPES: &[&str] = &JsonType::NAMES;

fn has_duplicates(values: &[Value]) -> bool {
    values
        .iter()
        .enumerate()
        .any(|(i, v)| values[..i].contains(v))
}

/// RFC 6901 escaping of one reference token.
pub fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

struct Gate {
    strictness: Strictness,
    errors: Vec<SchemaError>,
    /// Pointers of every place walked as a schema.
    walked: std::collections::HashSet<String>,
    /// `(schema pointer, $ref keyword pointer, target pointer)` of every local reference.
    refs: Vec<(String, String, String)>,
    /// Schema pointer -> its `anyOf` members' pointers.
    any_of: HashMap<String, Vec<String>>,
}

impl Gate {
    fn error(&mut self, pointer: &str, keyword: &str, reason: impl Into<String>) {
        self.errors.push(SchemaError {
            pointer: pointer.to_string(),
            keyword: keyword.to_string(),
            reason: reason.into(),
        });
    }

    fn schema(&mut self, value: &Value, pointer: &str) {
        self.walked.insert(pointer.to_string());
        let map = match value {
            Value::Bool(_) => return,
            Value::Object(map) => map,
            other => {
                self.error(
                    pointer,
                    "schema",
                    format!(
                        "a schema is an object or a boolean, not {}",
                        type_name(other)
                    ),
                );
                return;
            }
        };
        for (key, v) in map {
            let at = format!("{pointer}/{}", escape_token(key));
            match key.as_str() {
                "$id" if !pointer.is_empty() => {
                    self.error(&at, key, "$id below the root is not supported")
                }
                k if ANNOTATIONS.contains(&k) => {}
                "type" => self.types(v, &at),
                "properties" | "$defs" => match v {
                    Value::Object(schemas) => {
                        for (name, sub) in schemas {
                            self.schema(sub, &format!("{at}/{}", escape_token(name)));
                        }
                    }
                    _ => self.error(&at, key, "must be an object of schemas"),
                },
                "required" => match v.as_array() {
                    Some(names) if names.iter().all(Value::is_string) => {
                        if has_duplicates(names) {
                            self.error(&at, key, "names a property twice");
                        }
                    }
                    _ => self.error(&at, key, "must be an array of property names"),
                },
                "additionalProperties" | "items" => {
                    if key == "items" && v.is_array() {
                        self.error(
                            &at,
                            key,
                            "the array form of items (tuple validation) is not supported",
                        );
                    } else {
                        self.schema(v, &at);
                    }
                }
                "enum" => match v.as_array() {
                    Some(values) if !values.is_empty() => {}
                    // `enum: []` admits no value: every instance would fail.
                    Some(_) => self.error(&at, key, "must list at least one value"),
                    None => self.error(&at, key, "must be an array"),
                },
                "const" => {
                    if v.is_array() || v.is_object() {
                        self.error(
                            &at,
                            key,
                            "const must be an integer, a number, a boolean, null or a string",
                        );
                    }
                }
                "pattern" => self.pattern(v, &at),
                "format" => match v.as_str() {
                    Some(f) if FORMATS.contains(&f) => {}
                    Some(f) => self.error(
                        &at,
                        key,
                        format!("format {f:?} is not supported (supported: {FORMATS:?})"),
                    ),
                    None => self.error(&at, key, "must be a string"),
                },
                "$ref" => self.reference(v, pointer, &at),
                "anyOf" => match v.as_array() {
                    Some(items) if !items.is_empty() => {
                        let members: Vec<String> =
                            (0..items.len()).map(|i| format!("{at}/{i}")).collect();
                        for (sub, member) in items.iter().zip(&members) {
                            self.schema(sub, member);
                        }
                        self.any_of.insert(pointer.to_string(), members);
                    }
                    _ => self.error(&at, key, "must be a non-empty array of schemas"),
                },
                "uniqueItems" if self.strictness == Strictness::Plain => {
                    if !v.is_boolean() {
                        self.error(&at, key, "must be a boolean");
                    }
                }
                "uniqueItems" => {
                    self.error(&at, key, "uniqueItems is not supported in strict modes")
                }
                "definitions" => self.error(
                    &at,
                    key,
                    "unsupported keyword (draft 2020-12 spells it $defs)",
                ),
                other => self.error(&at, other, "unsupported keyword"),
            }
        }
    }

    fn types(&mut self, v: &Value, at: &str) {
        let names: Vec<&Value> = match v {
            Value::Array(list) if !list.is_empty() => list.iter().collect(),
            Value::String(_) => vec![v],
            _ => {
                self.error(
                    at,
                    "type",
                    "must be a type name or a non-empty list of them",
                );
                return;
            }
        };
        if has_duplicates(&names.iter().map(|v| (*v).clone()).collect::<Vec<_>>()) {
            self.error(at, "type", "names a type twice");
        }
        for name in names {
            match name.as_str() {
                Some(n) if JsonType::from_name(n).is_some() => {}
                _ => self.error(
                    at,
                    "type",
                    format!("unknown type {name} (types: {TYPES:?})"),
                ),
            }
        }
    }

    /// `pattern` is an ECMA-262 regex (JSON Schema's dialect). Admitted: what ECMA-262 (with
    /// the `u` flag) reads and the checker can translate, without anchors (`^`, `$`), word
    /// boundaries, look-around or backreferences.
    fn pattern(&mut self, v: &Value, at: &str) {
        let Some(p) = v.as_str() else {
            self.error(at, "pattern", "must be a string");
            return;
        };
        if let Err(reason) = check_pattern(p) {
            self.error(at, "pattern", format!("{p:?}: {reason}"));
        }
    }

    fn reference(&mut self, v: &Value, owner: &str, at: &str) {
        let Some(r) = v.as_str() else {
            self.error(at, "$ref", "must be a string");
            return;
        };
        if !r
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/?%#".contains(c))
        {
            self.error(
                at,
                "$ref",
                format!("{r:?} is not a URI reference (percent-encode other characters)"),
            );
            return;
        }
        match ref_pointer(r) {
            Some(target) => self.refs.push((owner.to_string(), at.to_string(), target)),
            None => self.error(
                at,
                "$ref",
                format!("{r:?}: only references within the schema (`#` or `#/...`) are supported"),
            ),
        }
    }

    /// After the walk: every reference lands on a place walked as a schema (so no keyword
    /// reaches the checker unchecked), no cycle of references and `anyOf` members comes
    /// back to a schema without going through a property or an item, and no schema fans out
    /// through them to more than [`MAX_FAN_OUT`] schemas applied at one place of the value.
    fn check_references(&mut self) {
        let mut edges: HashMap<String, Vec<String>> = self.any_of.clone();
        for (owner, at, target) in self.refs.clone() {
            if self.walked.contains(&target) {
                edges.entry(owner).or_default().push(target);
            } else {
                self.error(
                    &at,
                    "$ref",
                    format!(
                        "#{target} is not a schema of this document (a $ref must point to one)"
                    ),
                );
            }
        }
        // Depth-first search for a cycle (0: new, 1: on the stack, 2: done).
        let mut state: HashMap<String, u8> = HashMap::new();
        let mut nodes: Vec<String> = edges.keys().cloned().collect();
        nodes.sort();
        for start in nodes {
            if state.get(&start).copied().unwrap_or(0) != 0 {
                continue;
            }
            let mut stack = vec![(start.clone(), 0usize)];
            state.insert(start, 1);
            while let Some((node, i)) = stack.pop() {
                let next = edges.get(&node).and_then(|e| e.get(i)).cloned();
                match next {
                    None => {
                        state.insert(node, 2);
                    }
                    Some(n) => {
                        stack.push((node.clone(), i + 1));
                        match state.get(&n).copied().unwrap_or(0) {
                            0 => {
                                state.insert(n.clone(), 1);
                                stack.push((n, 0));
                            }
                            1 => {
                                let at = self
                                    .refs
                                    .iter()
                                    .find(|(owner, _, _)| *owner == node)
                                    .map_or_else(|| node.clone(), |(_, at, _)| at.clone());
                                self.error(
                                    &at,
                                    "$ref",
                                    format!(
                                        "reference cycle through {node:?} and {n:?} that never \
                                         reaches a property or an item"
                                    ),
                                );
                                return;
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

/// The pattern rule of the subset. `Err` says why `pattern` is not admitted.
///
/// The pattern is read as ECMA-262 with the `u` flag (`jsonschema_regex::is_valid_ecma_regex`,
/// so `\A`, `\z` or a lone `{` are not patterns), translated to regex-syntax as the checker
/// does (`jsonschema_regex::to_rust_regex`), and the translation is parsed: look-around and
/// backreferences do not parse there, and anchors and word boundaries are found in its HIR.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    use regex_syntax::ast::ErrorKind;
    use regex_syntax::hir::{HirKind, Look};

    if !jsonschema_regex::is_valid_ecma_regex(pattern) {
        return Err("not a valid ECMA-262 regex (JSON Schema patterns are ECMA-262)".into());
    }
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return Err("a construct the checker cannot translate from ECMA-262".into());
    };
    // One line each (regex-syntax's `Display` draws the pattern and a caret on lines of
    // their own): what is wrong and where, in characters of the translated pattern.
    let at = |span: &regex_syntax::ast::Span| translated[..span.start.offset].chars().count();
    let hir = match regex_syntax::Parser::new().parse(&translated) {
        Ok(hir) => hir,
        Err(regex_syntax::Error::Parse(e)) => {
            return Err(match e.kind() {
                ErrorKind::UnsupportedLookAround => "look-around is not supported".into(),
                ErrorKind::UnsupportedBackreference => "backreferences are not supported".into(),
                other => format!("invalid regex: {other} at character {}", at(e.span())),
            })
        }
        Err(regex_syntax::Error::Translate(e)) => {
            return Err(format!(
                "invalid regex: {} at character {}",
                e.kind(),
                at(e.span())
            ))
        }
        Err(e) => return Err(format!("invalid regex: {e}")),
    };
    // Iterative walk: a pattern's nesting is as deep as its text.
    let mut stack = vec![&hir];
    while let Some(h) = stack.pop() {
        match h.kind() {
            HirKind::Look(look) => {
                return Err(match look {
                    Look::Start | Look::StartLF | Look::StartCRLF => {
                        "anchor `^` is not supported (a pattern matches anywhere in the string)"
                            .into()
                    }
                    Look::End | Look::EndLF | Look::EndCRLF => {
                        "anchor `$` is not supported (a pattern matches anywhere in the string)"
                            .into()
                    }
                    _ => "word boundaries (`\\b`, `\\B`) are not supported".into(),
                });
            }
            HirKind::Repetition(r) => stack.push(&r.sub),
            HirKind::Capture(c) => stack.push(&c.sub),
            HirKind::Concat(hs) | HirKind::Alternation(hs) => stack.extend(hs.iter().rev()),
            HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => {}
        }
    }
    Ok(())
}

/// The most schemas that `anyOf` members and `$ref` targets may apply at one place of a
/// value, counted with repetitions (a diamond of references counts every path). Checking a
/// value, and collecting its errors, costs about this much per place.
pub const MAX_FAN_OUT: usize = 4096;

impl Gate {
    /// For every schema, the number of schemas it applies at the same place of the value
    /// through `anyOf` and `$ref` (itself included, every path counted), memoized; an error
    /// for the first schema past [`MAX_FAN_OUT`]. Runs after [`Self::check_references`]
    /// found no cycle, so the edges form a DAG.
    fn check_fan_out(&mut self) {
        let mut edges: HashMap<&str, Vec<&str>> = HashMap::new();
        for (owner, members) in &self.any_of {
            edges
                .entry(owner.as_str())
                .or_default()
                .extend(members.iter().map(String::as_str));
        }
        for (owner, _, target) in &self.refs {
            edges
                .entry(owner.as_str())
                .or_default()
                .push(target.as_str());
        }
        let mut memo: HashMap<&str, usize> = HashMap::new();
        let mut nodes: Vec<&str> = edges.keys().copied().collect();
        nodes.sort_unstable();
        let mut over: Option<(String, usize)> = None;
        'outer: for root in nodes {
            // Iterative post-order: a chain of references may be very long.
            let mut stack = vec![(root, false)];
            while let Some((node, expanded)) = stack.pop() {
                if memo.contains_key(node) {
                    continue;
                }
                let children = edges.get(node).map(Vec::as_slice).unwrap_or(&[]);
                if expanded {
                    let total = children
                        .iter()
                        .map(|c| memo.get(c).copied().unwrap_or(1))
                        .fold(1usize, usize::saturating_add);
                    memo.insert(node, total);
                    if total > MAX_FAN_OUT {
                        over = Some((node.to_string(), total));
                        break 'outer;
                    }
                } else {
                    stack.push((node, true));
                    for &c in children {
                        if !memo.contains_key(c) {
                            stack.push((c, false));
                        }
                    }
                }
            }
        }
        if let Some((node, total)) = over {
            let count = if total == usize::MAX {
                "too many".to_string()
            } else {
                total.to_string()
            };
            self.error(
                &node,
                "anyOf",
                format!(
                    "applies {count} schemas at one place through anyOf and $ref (at most \
                     {MAX_FAN_OUT}); checking would take too long"
                ),
            );
        }
    }
}

/// Checks that `schema` stays inside the subset. Errors: every keyword outside it, each with
/// its JSON pointer.
pub fn check_subset(schema: &Value, strictness: Strictness) -> Result<(), SchemaErrors> {
    let mut gate = Gate {
        strictness,
        errors: Vec::new(),
        walked: std::collections::HashSet::new(),
        refs: Vec::new(),
        any_of: HashMap::new(),
    };
    gate.schema(schema, "");
    gate.check_references();
    if gate.errors.is_empty() {
        gate.check_fan_out();
    }
    if gate.errors.is_empty() {
        Ok(())
    } else {
        Err(SchemaErrors(gate.errors))
    }
}

/// Every schema position of `schema` that holds an object schema, in document order, with its
/// JSON pointer: the root, `properties/*`, `items`, `additionalProperties`, `anyOf/*` and
/// `$defs/*`, recursively (the places the subset gate walks; nothing under `default`, `enum`,
/// `const` or `examples`). Iterative: schemas are untrusted and may nest deeply.
pub fn schema_positions(schema: &Value) -> Vec<(String, &Map<String, Value>)> {
    let mut out = Vec::new();
    let mut stack = vec![(String::new(), schema)];
    while let Some((pointer, v)) = stack.pop() {
        let Value::Object(map) = v else { continue };
        let mut children = Vec::new();
        for (key, sub) in map {
            let at = format!("{pointer}/{}", escape_token(key));
            match (key.as_str(), sub) {
                ("properties" | "$defs", Value::Object(named)) => {
                    for (name, child) in named {
                        children.push((format!("{at}/{}", escape_token(name)), child));
                    }
                }
                ("items" | "additionalProperties", _) => children.push((at, sub)),
                ("anyOf", Value::Array(members)) => {
                    for (i, child) in members.iter().enumerate() {
                        children.push((format!("{at}/{i}"), child));
                    }
                }
                _ => {}
            }
        }
        out.push((pointer, map));
        stack.extend(children.into_iter().rev());
    }
    out
}

/// Whether a schema describes objects: `type` is `object` or a list naming it, or it uses an
/// object keyword (`properties`, `required`, `additionalProperties`). A schema without a type
/// and without those keywords (`{}`) admits any JSON value and is not an object schema.
pub fn is_object_schema(map: &Map<String, Value>) -> bool {
    type_keyword(map).is_some_and(|types| types.contains(JsonType::Object))
        || map.contains_key("properties")
        || map.contains_key("required")
        || map.contains_key("additionalProperties")
}

/// Whether an object schema admits no property beyond `properties`.
fn is_closed(map: &Map<String, Value>) -> bool {
    map.get("additionalProperties") == Some(&Value::Bool(false))
}

/// How [`check_contract_rules`] treats objects without an explicit `additionalProperties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objects {
    /// JSON Schema semantics: open (JSON Schema mode).
    Open,
    /// Closed, as strict tools read them ([`close_objects`]).
    Closed,
}

/// The contract rules on a schema used as a response format or as a tool's parameters
/// (`../shared/SEEDS.md` part 2):
///
/// * the top level is `"type": "object"` (a string, or a list holding only `object`);
/// * every object schema ([`is_object_schema`]) declares at least one required property;
/// * a closed object (`"additionalProperties": false`, or no `additionalProperties` under
///   [`Objects::Closed`]) requires only properties it declares (any other could never be
///   sent without breaking the schema);
/// * with [`Objects::Closed`] (strict tools), an object schema declares its properties
///   itself: `$ref` or `anyOf` next to object keywords would be closed against properties
///   they bring in, so they are an error there.
///
/// Errors: every broken rule, with the pointer of the schema (or of its `required`).
pub fn check_contract_rules(schema: &Value, objects: Objects) -> Result<(), SchemaErrors> {
    let mut errors = Vec::new();
    let top = match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => !ts.is_empty() && ts.iter().all(|t| t == "object"),
        _ => false,
    };
    if !top {
        errors.push(SchemaError {
            pointer: String::new(),
            keyword: "type".into(),
            reason: "the top level must be `\"type\": \"object\"`".into(),
        });
    }
    for (pointer, map) in schema_positions(schema) {
        if !is_object_schema(map) {
            continue;
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if required.is_empty() {
            errors.push(SchemaError {
                pointer: pointer.clone(),
                keyword: "required".into(),
                reason: "every object must declare at least one required property".into(),
            });
        }
        let properties = map.get("properties").and_then(Value::as_object);
        let closed = is_closed(map)
            || (objects == Objects::Closed && !map.contains_key("additionalProperties"));
        if closed {
            for name in required {
                if !properties.is_some_and(|p| p.contains_key(name)) {
                    errors.push(SchemaError {
                        pointer: format!("{pointer}/required"),
                        keyword: "required".into(),
                        reason: format!(
                            "{name:?} is required but not declared in `properties` of a \
                             closed object, so no value could satisfy the schema"
                        ),
                    });
                }
            }
        }
        if objects == Objects::Closed {
            for key in ["$ref", "anyOf"] {
                if map.contains_key(key) {
                    errors.push(SchemaError {
                        pointer: format!("{pointer}/{}", escape_token(key)),
                        keyword: key.into(),
                        reason: format!(
                            "strict tools: an object schema declares its properties itself; \
                             {key} next to object keywords is not supported (use {key} as the \
                             whole schema of a property instead)"
                        ),
                    });
                }
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(SchemaErrors(errors))
    }
}

/// Strict tools' reading of objects: every object schema without `additionalProperties` gets
/// `"additionalProperties": false`, so an undeclared property is a violation at any depth
/// (`unknown_parameter` at the top of a call's arguments, `additional_property` below). An
/// explicit `additionalProperties` (`true` or a schema) is kept.
pub fn close_objects(schema: &Value) -> Value {
    let open: Vec<String> = schema_positions(schema)
        .into_iter()
        .filter(|(_, map)| is_object_schema(map) && !map.contains_key("additionalProperties"))
        .map(|(pointer, _)| pointer)
        .collect();
    let mut closed = schema.clone();
    for pointer in open {
        if let Some(Value::Object(map)) = closed.pointer_mut(&pointer) {
            map.insert("additionalProperties".into(), Value::Bool(false));
        }
    }
    closed
}

/// How many properties `schema` declares: the sizes of every `properties` map at a schema
/// position (nested objects and `$defs` included, each declaration once).
pub fn count_properties(schema: &Value) -> usize {
    schema_positions(schema)
        .iter()
        .filter_map(|(_, map)| map.get("properties").and_then(Value::as_object))
        .map(Map::len)
        .sum()
}

/// A schema admitted by the subset gate, with its value checker.
pub struct CompiledSchema {
    /// The schema as given.
    pub schema: Value,
    /// The strictness it was admitted under.
    pub strictness: Strictness,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompiledSchema")
            .field("schema", &self.schema)
            .field("strictness", &self.strictness)
            .finish_non_exhaustive()
    }
}

impl CompiledSchema {
    /// Whether `instance` conforms.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.validator.is_valid(instance)
    }

    /// Every error of `instance`, as the checker reports it.
    pub fn errors<'i>(&'i self, instance: &'i Value) -> jsonschema::ErrorIterator<'i> {
        self.validator.iter_errors(instance)
    }
}

/// The most compiled schemas the cache keeps; past it the oldest entry is dropped.
pub const CACHE_CAPACITY: usize = 256;

#[derive(Default)]
struct Cache {
    map: HashMap<(String, Strictness), Arc<CompiledSchema>>,
    /// Keys in insertion order, oldest first.
    order: std::collections::VecDeque<(String, Strictness)>,
}

fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::default()))
}

/// Compiles `schema` under `strictness` (subset gate, then the draft 2020-12 checker with
/// format validation on). The same content compiles once per process (a cache keyed by the
/// schema's JSON text and the strictness, holding at most [`CACHE_CAPACITY`] schemas).
///
/// Errors: every keyword outside the subset ([`check_subset`]); a schema the checker cannot
/// build (e.g. a `$ref` to an `$id` that is not in the schema) as one error at the root.
pub fn compile(
    schema: &Value,
    strictness: Strictness,
) -> Result<Arc<CompiledSchema>, SchemaErrors> {
    let key = (schema.to_string(), strictness);
    if let Ok(cache) = cache().lock() {
        if let Some(hit) = cache.map.get(&key) {
            return Ok(hit.clone());
        }
    }
    check_subset(schema, strictness)?;
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| {
            // The checker validates the schema against its meta-schema: the error's instance
            // path is the place in the schema.
            let pointer = e.instance_path().as_str().to_string();
            let keyword = pointer
                .rsplit('/')
                .next()
                .filter(|k| !k.is_empty())
                .unwrap_or("schema")
                .to_string();
            SchemaErrors(vec![SchemaError {
                pointer,
                keyword,
                reason: format!("the checker refuses it: {e}"),
            }])
        })?;
    let compiled = Arc::new(CompiledSchema {
        schema: schema.clone(),
        strictness,
        validator,
    });
    if let Ok(mut cache) = cache().lock() {
        if cache.map.insert(key.clone(), compiled.clone()).is_none() {
            cache.order.push_back(key);
            while cache.order.len() > CACHE_CAPACITY {
                if let Some(oldest) = cache.order.pop_front() {
                    cache.map.remove(&oldest);
                }
            }
        }
    }
    Ok(compiled)
}

/// The checker's verdict on each of `instances` against the schema at `pointer` (RFC 6901,
/// `""` for the root) inside `document`, read as [`compile`] reads schemas (draft 2020-12,
/// formats checked), its `$ref`s resolved in `document`. No subset gate: the caller decides
/// what `document` may hold (token masks use it to keep only the `enum`/`const` values the
/// rest of their schema admits).
///
/// `None` where the checker cannot build that schema (e.g. a `$ref` to something not in
/// `document`); nothing is fetched.
pub fn check_at(document: &Value, pointer: &str, instances: &[&Value]) -> Option<Vec<bool>> {
    const BASE: &str = "urn:response-templates:document";
    let registry = jsonschema::Registry::new()
        .add(BASE, document.clone())
        .ok()?
        .prepare()
        .ok()?;
    let fragment: String = pointer
        .bytes()
        .map(|b| {
            // A URI fragment: the pointer's characters that are not URI characters escaped.
            if b.is_ascii_alphanumeric() || b"/-._~!$&'()*+,;=:@".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    let root = serde_json::json!({ "$ref": format!("{BASE}#{fragment}") });
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .offline()
        .with_registry(&registry)
        .build(&root)
        .ok()?;
    Some(instances.iter().map(|v| validator.is_valid(v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keywords(schema: Value) -> Vec<(String, String)> {
        match check_subset(&schema, Strictness::Strict) {
            Ok(()) => Vec::new(),
            Err(e) => e.0.into_iter().map(|e| (e.pointer, e.keyword)).collect(),
        }
    }

    #[test]
    fn unsupported_keywords_are_named_with_their_pointer() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 1},
                "b/c": {"type": "array", "items": {"type": "string", "maxLength": 3}},
                "d": {"allOf": [{"type": "string"}]}
            },
            "required": ["a"],
            "patternProperties": {"x": {}}
        });
        assert_eq!(
            keywords(schema),
            [
                ("/properties/a/minimum".into(), "minimum".into()),
                (
                    "/properties/b~1c/items/maxLength".into(),
                    "maxLength".into()
                ),
                ("/properties/d/allOf".into(), "allOf".into()),
                ("/patternProperties".into(), "patternProperties".into()),
            ]
        );
    }

    #[test]
    fn enum_needs_a_value() {
        assert_eq!(
            keywords(json!({"enum": []})),
            [("/enum".into(), "enum".into())]
        );
        assert!(keywords(json!({"enum": [null]})).is_empty());
    }

    #[test]
    fn patterns_formats_consts_and_unique_items() {
        assert_eq!(keywords(json!({"pattern": "^a"})).len(), 1);
        assert_eq!(keywords(json!({"pattern": "a$"})).len(), 1);
        assert_eq!(keywords(json!({"pattern": "a(?=b)"})).len(), 1);
        assert!(keywords(json!({"pattern": "[$^]\\$"})).is_empty());
        assert_eq!(keywords(json!({"format": "email"})).len(), 1);
        assert!(keywords(json!({"format": "uuid"})).is_empty());
        assert_eq!(keywords(json!({"const": {"a": 1}})).len(), 1);
        assert!(keywords(json!({"const": null})).is_empty());
        assert_eq!(keywords(json!({"uniqueItems": true})).len(), 1);
        assert!(check_subset(&json!({"uniqueItems": true}), Strictness::Plain).is_ok());
    }

    #[test]
    fn reference_cycles_are_detected_and_recursion_is_allowed() {
        let cycle = json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}},
                           "$ref": "#/$defs/a"});
        assert!(keywords(cycle).iter().all(|(_, k)| k == "$ref"));
        let tree = json!({"$defs": {"node": {"type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["children"]}}, "$ref": "#/$defs/node"});
        assert!(keywords(tree.clone()).is_empty());
        let compiled = compile(&tree, Strictness::Strict).unwrap();
        assert!(compiled.is_valid(&json!({"children": [{"children": []}]})));
        assert!(!compiled.is_valid(&json!({"children": [{"kids": []}]})));
        assert_eq!(keywords(json!({"$ref": "#/$defs/missing"})).len(), 1);
        // A cycle through anyOf never reaches a property or an item.
        let any_of_cycle = json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"},
            {"type": "string"}]}}, "$ref": "#/$defs/a"});
        assert_eq!(
            keywords(any_of_cycle),
            [("/$defs/a/anyOf/0/$ref".into(), "$ref".into())]
        );
        // A reference must land on a schema: not into `default`, `enum` or a properties map,
        // where unchecked keywords would reach the checker.
        for target in ["#/$defs/x/default", "#/properties/a/enum/0", "#/properties"] {
            let schema = json!({"properties": {"a": {"enum": [{"maximum": 3}]},
                "b": {"$ref": target}},
                "$defs": {"x": {"type": "string", "default": {"minLength": 3}}}});
            assert_eq!(
                keywords(schema),
                [("/properties/b/$ref".into(), "$ref".into())],
                "{target}"
            );
        }
        // Only references within the document.
        assert_eq!(keywords(json!({"$ref": "http://e.com/s#/x"})).len(), 1);
    }

    fn rule_errors(schema: Value, objects: Objects) -> Vec<(String, String)> {
        match check_contract_rules(&schema, objects) {
            Ok(()) => Vec::new(),
            Err(e) => e.0.into_iter().map(|e| (e.pointer, e.keyword)).collect(),
        }
    }

    #[test]
    fn contract_rules() {
        let ok = json!({"type": "object", "properties": {"a": {}}, "required": ["a"]});
        assert!(rule_errors(ok, Objects::Closed).is_empty());
        assert_eq!(
            rule_errors(json!({"type": "array"}), Objects::Open),
            [("".into(), "type".into())]
        );
        // A nullable top level is not an object.
        assert_eq!(
            rule_errors(
                json!({"type": ["object", "null"], "properties": {"a": {}}, "required": ["a"]}),
                Objects::Open
            ),
            [("".into(), "type".into())]
        );
        let nested = json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "object", "properties": {"b": {}}}}});
        assert_eq!(
            rule_errors(nested, Objects::Open),
            [("/properties/a".into(), "required".into())]
        );
        // Type lists naming object, and object keywords without a type, are object schemas;
        // `{}` (any value) is not.
        let listed = json!({"type": "object", "required": ["a", "b", "c"], "properties": {
            "a": {"type": ["object", "null"], "properties": {"x": {}}},
            "b": {"additionalProperties": {"type": "string"}},
            "c": {}}});
        assert_eq!(
            rule_errors(listed, Objects::Open),
            [
                ("/properties/a".into(), "required".into()),
                ("/properties/b".into(), "required".into()),
            ]
        );
        // A closed object cannot require what it does not declare; an open one can.
        let undeclared = json!({"type": "object", "properties": {"a": {}}, "required": ["b"]});
        assert!(rule_errors(undeclared.clone(), Objects::Open).is_empty());
        assert_eq!(
            rule_errors(undeclared, Objects::Closed),
            [("/required".into(), "required".into())]
        );
        let explicit = json!({"type": "object", "properties": {"a": {}}, "required": ["b"],
            "additionalProperties": false});
        assert_eq!(
            rule_errors(explicit, Objects::Open),
            [("/required".into(), "required".into())]
        );
        // Strict tools: $ref or anyOf next to object keywords.
        let mixed = json!({"type": "object", "properties": {"a": {}}, "required": ["a"],
            "anyOf": [{"properties": {"b": {}}}]});
        assert_eq!(
            rule_errors(mixed, Objects::Closed),
            [
                ("/anyOf".into(), "anyOf".into()),
                ("/anyOf/0".into(), "required".into())
            ]
        );
        // $defs named like keywords are schemas, not keyword values.
        let defs = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/properties"}},
            "required": ["a"], "$defs": {"properties": {"type": "object",
            "properties": {"x": {}}, "required": ["x"]}}});
        assert!(rule_errors(defs.clone(), Objects::Closed).is_empty());
        assert_eq!(count_properties(&defs), 2);
    }

    #[test]
    fn closing_objects_keeps_explicit_additional_properties() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "object", "properties": {"x": {}}},
            "b": {"type": "object", "properties": {"y": {}}, "additionalProperties": true},
            "c": {"type": "array", "items": {"properties": {"z": {}}}},
            "d": {"type": "string", "default": {"properties": {}}}}});
        let closed = close_objects(&schema);
        assert_eq!(closed["additionalProperties"], json!(false));
        assert_eq!(
            closed["properties"]["a"]["additionalProperties"],
            json!(false)
        );
        assert_eq!(
            closed["properties"]["b"]["additionalProperties"],
            json!(true)
        );
        assert_eq!(
            closed["properties"]["c"]["items"]["additionalProperties"],
            json!(false)
        );
        assert!(closed["properties"]["c"]
            .get("additionalProperties")
            .is_none());
        assert!(closed["properties"]["d"]
            .get("additionalProperties")
            .is_none());
        assert!(closed["properties"]["d"]["default"]
            .get("additionalProperties")
            .is_none());
    }

    #[test]
    fn patterns_are_ecma_262() {
        let reason = |p: &str| check_pattern(p).err().unwrap_or_default();
        for ok in [
            r"\(?=x",
            r"[$^]\$",
            r"\d{3}-\d{4}",
            r"\p{L}+",
            r"[\w-]+",
            r"\u0041",
            "a|b",
        ] {
            assert_eq!(check_pattern(ok), Ok(()), "{ok}");
        }
        assert!(reason("^a").contains("anchor `^`"));
        assert!(reason("a|b$").contains("anchor `$`"));
        assert!(reason("(?=a)b").contains("look-around"));
        assert!(reason("(?<!a)b").contains("look-around"));
        assert!(reason(r"(a)\1").contains("backreferences"));
        assert!(reason(r"\bword").contains("word boundaries"));
        // Not ECMA-262 (with the u flag): Rust/PCRE anchors, a lone brace.
        for bad in [r"\A", r"a\z", r"a\Z", "a{", "(?i)a"] {
            assert!(reason(bad).contains("ECMA-262"), "{bad}: {}", reason(bad));
        }
        // regex-syntax's own errors on one line: what and where (not its drawing of the
        // pattern with a caret, on lines of their own).
        assert_eq!(
            reason(r"xy\p{Nope}"),
            "invalid regex: Unicode property not found at character 2"
        );
    }

    #[test]
    fn compiled_schemas_are_cached_by_content() {
        let schema =
            json!({"type": "object", "properties": {"x": {"const": 3}}, "required": ["x"]});
        let a = compile(&schema, Strictness::Strict).unwrap();
        let b = compile(&schema.clone(), Strictness::Strict).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        // The cache is bounded: past its capacity the oldest entries go.
        for i in 0..=CACHE_CAPACITY {
            compile(&json!({"const": i}), Strictness::Plain).unwrap();
        }
        let held = cache().lock().unwrap().map.len();
        assert!(held <= CACHE_CAPACITY, "{held}");
    }
}
