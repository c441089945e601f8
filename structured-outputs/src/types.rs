//! The JSON types a schema declares: one reading of `type`, `enum`/`const` and local `$ref`
//! shared by every crate that asks what a value may be (no heap beyond `alloc`, no `std`).
//!
//! * [`type_keyword`]: the `type` keyword of one schema (a name or a list of names);
//! * [`value_types`]: `type`, or else the types of the `enum` values and the `const`;
//! * [`resolved_types`]: [`value_types`] over a schema and everything it applies at the same
//!   place of the value through `$ref` and `anyOf`;
//! * [`ref_pointer`] / [`resolve_ref`]: a local `$ref` (`#`, `#/...`) as a JSON pointer and
//!   its target.
//!
//! Users: strict tools' argument typing ([`resolved_types`]), the parser's reference typing
//! (`parser-runtime-core`'s `tools.rs`: [`type_keyword`] per schema, its own walk over
//! `anyOf`/`oneOf`), the subset gate and the generator (`constrain`: [`type_keyword`],
//! [`value_types`], [`ref_pointer`]).

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use core::fmt;

use serde_json::{Map, Value};

/// A JSON Schema type name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
    /// `object`.
    Object,
    /// `array`.
    Array,
    /// `null`.
    Null,
}

impl JsonType {
    /// Every type, in the order of [`Self::NAMES`].
    pub const ALL: [Self; 7] = [
        Self::String,
        Self::Integer,
        Self::Number,
        Self::Boolean,
        Self::Object,
        Self::Array,
        Self::Null,
    ];

    /// The type names JSON Schema knows.
    pub const NAMES: [&'static str; 7] = [
        "string", "integer", "number", "boolean", "object", "array", "null",
    ];

    /// The type of a name, if JSON Schema knows it.
    pub fn from_name(name: &str) -> Option<Self> {
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        Some(Self::ALL[i])
    }

    /// The name (`"integer"`, ...).
    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The type of a value: `integer` for a number held as an integer (`1`, not `1.0`).
    pub fn of(v: &Value) -> Self {
        match v {
            Value::Null => Self::Null,
            Value::Bool(_) => Self::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => Self::Integer,
            Value::Number(_) => Self::Number,
            Value::String(_) => Self::String,
            Value::Array(_) => Self::Array,
            Value::Object(_) => Self::Object,
        }
    }
}

/// The JSON type name of a value (`object`, `array`, `string`, `integer`, `number`,
/// `boolean`, `null`): [`JsonType::of`]'s name.
pub fn type_name(v: &Value) -> &'static str {
    JsonType::of(v).name()
}

/// A set of JSON types in the order they were first added (the order matters to casts that
/// try the declared types one after the other). At most seven; no heap.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Types {
    /// The first `len` entries are the types; the rest are unused.
    list: [JsonType; 7],
    len: usize,
}

impl Types {
    /// No type.
    pub const fn new() -> Self {
        Self {
            list: [JsonType::String; 7],
            len: 0,
        }
    }

    /// Adds `t` at the end unless it is already in.
    pub fn push(&mut self, t: JsonType) {
        if !self.contains(t) {
            self.list[self.len] = t;
            self.len += 1;
        }
    }

    /// Whether `t` is in.
    pub fn contains(&self, t: JsonType) -> bool {
        self.as_slice().contains(&t)
    }

    /// How many types.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no type.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The types, in order.
    pub fn as_slice(&self) -> &[JsonType] {
        &self.list[..self.len]
    }

    /// The types, in order.
    pub fn iter(&self) -> impl Iterator<Item = JsonType> + '_ {
        self.as_slice().iter().copied()
    }
}

impl Default for Types {
    fn default() -> Self {
        Self::new()
    }
}

impl Extend<JsonType> for Types {
    fn extend<I: IntoIterator<Item = JsonType>>(&mut self, iter: I) {
        for t in iter {
            self.push(t);
        }
    }
}

impl FromIterator<JsonType> for Types {
    fn from_iter<I: IntoIterator<Item = JsonType>>(iter: I) -> Self {
        let mut out = Self::new();
        out.extend(iter);
        out
    }
}

impl fmt::Debug for Types {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The `type` keyword of one schema: its name, or the names of its list, in order (names
/// JSON Schema does not know, and list elements that are not strings, are left out). `None`
/// when the schema has no `type`, or one that is neither a string nor a list.
pub fn type_keyword(schema: &Map<String, Value>) -> Option<Types> {
    match schema.get("type")? {
        Value::String(t) => Some(JsonType::from_name(t).into_iter().collect()),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(Value::as_str)
                .filter_map(JsonType::from_name)
                .collect(),
        ),
        _ => None,
    }
}

/// The types one schema gives its values: its `type` ([`type_keyword`]), or, without one, the
/// types of its `enum` values, then of its `const`.
pub fn value_types(schema: &Map<String, Value>) -> Types {
    type_keyword(schema).unwrap_or_else(|| {
        let mut out = Types::new();
        if let Some(Value::Array(values)) = schema.get("enum") {
            out.extend(values.iter().map(JsonType::of));
        }
        out.extend(schema.get("const").map(JsonType::of));
        out
    })
}

/// The JSON pointer a local `$ref` names (`#` or `#/...`, percent-decoded); `None` for any
/// other reference.
pub fn ref_pointer(reference: &str) -> Option<String> {
    reference.strip_prefix('#').and_then(decode_fragment)
}

/// The schema a local `$ref` names in `document`, if there is one.
pub fn resolve_ref<'a>(document: &'a Value, reference: &str) -> Option<&'a Value> {
    document.pointer(&ref_pointer(reference)?)
}

/// The types a schema of `document` gives its values, following what applies at the same place
/// of the value: a pre-order walk ([`value_types`] of the schema, then its `$ref` target, then
/// its `anyOf` members in order), each schema visited once, so the cost is linear in the
/// document and a reference cycle ends.
pub fn resolved_types(document: &Value, schema: &Value) -> Types {
    let mut out = Types::new();
    let mut seen: BTreeSet<*const Value> = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(schema) = stack.pop() {
        let Value::Object(map) = schema else { continue };
        if !seen.insert(schema as *const Value) {
            continue;
        }
        out.extend(value_types(map).iter());
        // Children in reverse, so the stack visits the $ref target, then the members in
        // order.
        if let Some(Value::Array(members)) = map.get("anyOf") {
            stack.extend(members.iter().rev());
        }
        if let Some(target) = map
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_ref(document, r))
        {
            stack.push(target);
        }
    }
    out
}

/// A `$ref` fragment (after `#`) as a JSON pointer: `""` or `/...`, percent-decoded.
pub fn decode_fragment(fragment: &str) -> Option<String> {
    if fragment.is_empty() || fragment.starts_with('/') {
        percent_decode(fragment)
    } else {
        None
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use JsonType::*;

    fn list(t: Types) -> Vec<JsonType> {
        t.iter().collect()
    }

    #[test]
    fn names_round_trip() {
        for t in JsonType::ALL {
            assert_eq!(JsonType::from_name(t.name()), Some(t));
        }
        assert_eq!(JsonType::from_name("any"), None);
        assert_eq!(type_name(&json!(1)), "integer");
        assert_eq!(type_name(&json!(1.0)), "number");
    }

    #[test]
    fn type_keyword_and_value_types() {
        let map = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(type_keyword(&map(json!({}))), None);
        assert_eq!(type_keyword(&map(json!({"type": 5}))), None);
        assert_eq!(
            type_keyword(&map(json!({"type": "any"}))).map(list),
            Some(vec![])
        );
        assert_eq!(
            type_keyword(&map(json!({"type": ["null", "x", 3, "integer", "null"]}))).map(list),
            Some(vec![Null, Integer])
        );
        assert_eq!(
            list(value_types(&map(
                json!({"enum": [1, "a", 2.5, 3], "const": null})
            ))),
            [Integer, String, Number, Null]
        );
        // `type` wins over enum values.
        assert_eq!(
            list(value_types(&map(json!({"type": "number", "enum": ["a"]})))),
            [Number]
        );
    }

    #[test]
    fn resolved_types_follow_refs_and_any_of_once() {
        let doc = json!({"$defs": {
            "a": {"anyOf": [{"$ref": "#/$defs/b"}, {"type": "null"}]},
            "b": {"enum": ["x", 1]},
            "loop": {"anyOf": [{"$ref": "#/$defs/loop"}, {"type": "boolean"}]}},
            "properties": {"p": {"$ref": "#/$defs/a"}, "q": {"$ref": "#/$defs/loop"}}});
        assert_eq!(
            list(resolved_types(&doc, &doc["properties"]["p"])),
            [String, Integer, Null]
        );
        assert_eq!(
            list(resolved_types(&doc, &doc["properties"]["q"])),
            [Boolean]
        );
        assert_eq!(ref_pointer("#/$defs/a%20b"), Some("/$defs/a b".into()));
        assert_eq!(ref_pointer("#a"), None);
        assert_eq!(ref_pointer("other.json#/x"), None);
        assert!(resolve_ref(&doc, "#/$defs/none").is_none());
    }
}
