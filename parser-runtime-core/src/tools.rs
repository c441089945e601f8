//! Tool-argument typing: string arguments of parsed tool calls are cast by the calling tool's
//! JSON Schema.
//!
//! Reference: `ResponseParser.__init__` (the `tools` handling), `_schema_types`, `_coerce` and
//! `ResponseParser._coerce_tool_calls` of `transformers/utils/chat_parsing/response_parser.py`
//! (transformers 5.24.0).
//!
//! # Where Python parity is impossible
//!
//! Python integers are unbounded; a `serde_json::Value` holds `i64`/`u64` integers and `f64`s.
//! A cast result outside `i64`/`u64` is emitted as an `f64` when that `f64` is exactly the
//! integer (`number` of `"1e20"`), and otherwise the cast fails and the next declared type is
//! tried (finally the string is kept) where Python would return the big integer. A JSON
//! `object`/`array` argument with values a `Value` cannot hold (NaN, ...) fails its cast too.
//! Python raises (`TypeError`/`RecursionError`) on a schema whose `anyOf`/`oneOf` is a
//! non-zero number or `true`, and on `object`/`array` arguments nested about 1000 deep; here
//! the former contributes no types and the latter fails the cast.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};
use structured_outputs::read_tools;
use structured_outputs::types::{type_keyword, JsonType};

use crate::content::{
    f64_is_integer, integral_f64_number, json_loads, py_float, py_int, py_strip, PyInt,
};

/// A JSON Schema type the casts know (`_coerce`); `string` never changes a value and is
/// dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SchemaType {
    Integer,
    Number,
    Boolean,
    Null,
    Object,
    Array,
}

impl SchemaType {
    fn from_json(t: JsonType) -> Option<Self> {
        Some(match t {
            JsonType::Integer => Self::Integer,
            JsonType::Number => Self::Number,
            JsonType::Boolean => Self::Boolean,
            JsonType::Null => Self::Null,
            JsonType::Object => Self::Object,
            JsonType::Array => Self::Array,
            JsonType::String => return None,
        })
    }
}

/// How deep `anyOf`/`oneOf` are followed, and how deeply nested lists of tool calls are
/// walked (Python would raise `RecursionError` somewhere near 1000).
const MAX_DEPTH: usize = 256;

/// Tool parameter schemas by tool name, from OpenAI-style tools JSON
/// (`[{"type":"function","function":{"name", "parameters": {"properties": ...}}}]` or bare
/// `{"name","parameters"}` items), reference `ResponseParser.__init__`.
///
/// Each parameter is reduced to its cast types (reference `_schema_types`: `type` as a string
/// or list, `anyOf`/`oneOf` recursively, `nullable` adds `null`), in declaration order.
#[derive(Debug, Clone, Default)]
pub struct ToolSchemas {
    /// Tool name -> (parameter name -> cast types). A tool whose `properties` is absent or
    /// empty maps to an empty list: its calls are not cast.
    tools: BTreeMap<String, Vec<(String, Vec<SchemaType>)>>,
    /// Lenient mode's repairs of string arguments the reference casts leave as they are
    /// ([`Self::set_lenient`]).
    lenient: bool,
}

impl ToolSchemas {
    /// Reads the tools ([`structured_outputs::read_tools`]): every item with a string `name`,
    /// in its `function` object or (without a `function` key) at top level. A later tool with
    /// the same name replaces an earlier one. Items that cannot be read are ignored, as the
    /// reference ignores them.
    pub fn from_tools(tools: &[Value]) -> Self {
        let mut out = BTreeMap::new();
        for tool in read_tools(tools).flatten() {
            let properties = tool
                .properties()
                .into_iter()
                .flatten()
                .map(|(k, schema)| {
                    let mut types = Vec::new();
                    schema_types(schema, &mut types, 0);
                    (k.clone(), types)
                })
                .collect();
            out.insert(String::from(tool.name), properties);
        }
        Self {
            tools: out,
            lenient: false,
        }
    }

    /// Turns lenient mode's repairs on (README, "Lenient mode"): a string argument that no
    /// declared type casts (reference `_coerce`) is read again, and kept when that gives a
    /// declared type:
    ///
    /// * declared `array` or `object`: a Python literal (`"['python', 'tutorial']"` ->
    ///   `["python", "tutorial"]`; single quotes, `True`/`False`/`None`, tuples; see
    ///   [`crate::content::py_literal`]);
    /// * a whole single-quoted string (`"'single'"`): its contents, cast again by the declared
    ///   types (`"'True'"` -> `true` for a boolean), or kept as the string (`"single"`) when
    ///   `string` is declared; an apostrophe inside a word stays (`"'it's'"` -> `"it's"`).
    pub fn set_lenient(&mut self, on: bool) {
        self.lenient = on;
    }

    /// Adds `other`'s tools, replacing tools of the same name.
    pub fn extend(&mut self, other: Self) {
        self.tools.extend(other.tools);
    }

    /// Whether no tool was read (the reference then skips casting altogether).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Reference `_coerce_tool_calls`: casts string arguments in place.
    ///
    /// `value` is a region's value: a tool call `{"function": {"name", "arguments": {...}}}` or
    /// a list of them (nested lists are walked); anything else is left alone. For a known tool
    /// with parameters, each argument whose parameter has cast types is cast when it is a string
    /// and, when the types do not include `array`, each string element of a list argument is
    /// (duplicate keys collected by `merge_duplicates`).
    pub fn coerce(&self, value: &mut Value) {
        self.coerce_at(value, 0);
    }

    fn coerce_at(&self, value: &mut Value, depth: usize) {
        match value {
            Value::Array(items) if depth < MAX_DEPTH => {
                for item in items {
                    self.coerce_at(item, depth + 1);
                }
            }
            Value::Object(call) => {
                let Some(Value::Object(function)) = call.get_mut("function") else {
                    return;
                };
                let Some(Value::String(name)) = function.get("name") else {
                    return;
                };
                let Some(properties) = self.tools.get(name.as_str()) else {
                    return;
                };
                if properties.is_empty() {
                    return;
                }
                let Some(Value::Object(arguments)) = function.get_mut("arguments") else {
                    return;
                };
                coerce_arguments(arguments, properties, self.lenient);
            }
            _ => {}
        }
    }
}

fn coerce_arguments(
    arguments: &mut Map<String, Value>,
    properties: &[(String, Vec<SchemaType>)],
    lenient: bool,
) {
    for (key, argument) in arguments.iter_mut() {
        let Some((_, types)) = properties.iter().find(|(k, _)| k == key) else {
            continue;
        };
        if types.is_empty() && !lenient {
            continue;
        }
        match argument {
            Value::String(raw) => {
                if let Some(v) = coerce_str(raw, types) {
                    *argument = v;
                } else if lenient {
                    if let Some(v) = repair_str(raw, types) {
                        *argument = v;
                    }
                }
            }
            Value::Array(items) if !types.contains(&SchemaType::Array) => {
                for item in items {
                    if let Value::String(raw) = item {
                        if let Some(v) = coerce_str(raw, types) {
                            *item = v;
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

/// Lenient mode's repair of a string argument no declared type cast ([`ToolSchemas::set_lenient`]).
/// `types` empty: only `string` (or an unknown type) is declared.
fn repair_str(raw: &str, types: &[SchemaType]) -> Option<Value> {
    use crate::content::py_literal;
    let wants = |t| types.contains(&t);
    if wants(SchemaType::Array) || wants(SchemaType::Object) {
        match py_literal::read(raw) {
            Some(v @ Value::Array(_)) if wants(SchemaType::Array) => return Some(v),
            Some(v @ Value::Object(_)) if wants(SchemaType::Object) => return Some(v),
            _ => {}
        }
    }
    let inner = py_literal::unquote_single(raw)?;
    match coerce_str(&inner, types) {
        Some(v) => Some(v),
        // Only `string` (or an unknown type) declared: the casts list no type.
        None if types.is_empty() => Some(Value::String(inner)),
        None => None,
    }
}

/// Python truthiness of a JSON value.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Reference `_schema_types`, keeping only the types [`SchemaType`] knows (the others never
/// change a cast's outcome).
///
/// Its own walk, not [`structured_outputs::types::resolved_types`] (strict tools' typing): the
/// reference follows `anyOf` and `oneOf` and adds `null` for `nullable`, but reads no `$ref`
/// and no `enum`/`const`. Only the reading of `type` is shared.
fn schema_types(schema: &Value, out: &mut Vec<SchemaType>, depth: usize) {
    let Value::Object(schema) = schema else {
        return;
    };
    if let Some(types) = type_keyword(schema) {
        out.extend(types.iter().filter_map(SchemaType::from_json));
    }
    for union in ["anyOf", "oneOf"] {
        // `schema.get(union) or []`, iterated: only a list has schema elements (a dict or
        // string iterates keys or characters, which are not schemas).
        if let Some(Value::Array(choices)) = schema.get(union) {
            if depth < MAX_DEPTH {
                for choice in choices {
                    schema_types(choice, out, depth + 1);
                }
            }
        }
    }
    if schema.get("nullable").is_some_and(truthy) && !out.contains(&SchemaType::Null) {
        out.push(SchemaType::Null);
    }
}

/// Reference `_coerce`: the first declared type that casts `raw` gives the value; `None` keeps
/// the string.
fn coerce_str(raw: &str, types: &[SchemaType]) -> Option<Value> {
    for &t in types {
        match t {
            SchemaType::Integer => match py_int(raw) {
                PyInt::Exact(n) => return Some(Value::Number(n)),
                // Python returns the big integer; it has no exact Value.
                PyInt::Unrepresentable => {}
                // Whole numbers written as floats, e.g. "3.0".
                PyInt::Invalid => {
                    if let Some(f) = py_float(raw).filter(|&f| f64_is_integer(f)) {
                        if let Some(n) = integral_f64_number(f) {
                            return Some(Value::Number(n));
                        }
                    }
                }
            },
            SchemaType::Number => {
                if let Some(f) = py_float(raw).filter(|f| f.is_finite()) {
                    // Ints are kept when the text has no fractional part.
                    let n = if f64_is_integer(f) && !raw.contains('.') {
                        integral_f64_number(f)
                    } else {
                        serde_json::Number::from_f64(f)
                    };
                    if let Some(n) = n {
                        return Some(Value::Number(n));
                    }
                }
            }
            SchemaType::Boolean => {
                let s = py_strip(raw);
                if s.eq_ignore_ascii_case("true") || s == "1" {
                    return Some(Value::Bool(true));
                }
                if s.eq_ignore_ascii_case("false") || s == "0" {
                    return Some(Value::Bool(false));
                }
            }
            SchemaType::Null => {
                if matches!(py_strip(raw), "null" | "None") {
                    return Some(Value::Null);
                }
            }
            SchemaType::Object => {
                if let Ok(v @ Value::Object(_)) = json_loads(raw) {
                    return Some(v);
                }
            }
            SchemaType::Array => {
                if let Ok(v @ Value::Array(_)) = json_loads(raw) {
                    return Some(v);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! Expected values come from running the reference (transformers 5.23.0,
    //! `response_parser._coerce`, `_schema_types` and `ResponseParser._coerce_tool_calls` with
    //! the same tools), except where a comment says the value is unrepresentable here.

    use super::*;
    use alloc::borrow::ToOwned;
    use alloc::string::ToString;
    use SchemaType::*;

    fn types_of(schema: &str) -> Vec<SchemaType> {
        let mut out = Vec::new();
        schema_types(&serde_json::from_str(schema).unwrap(), &mut out, 0);
        out
    }

    /// The serialized cast result (`None` keeps the string).
    fn cast(raw: &str, types: &[SchemaType]) -> String {
        let v = coerce_str(raw, types).unwrap_or_else(|| Value::String(raw.to_owned()));
        serde_json::to_string(&v).unwrap()
    }

    #[test]
    fn coerce_matches_reference() {
        for (raw, types, want) in [
            ("42", &[Integer][..], "42"),
            (" 42 ", &[Integer], "42"),
            ("1_000", &[Integer], "1000"),
            ("3.0", &[Integer], "3"),
            ("3.5", &[Integer], r#""3.5""#),
            ("1e3", &[Integer], "1000"),
            ("3.5", &[Integer, Number], "3.5"),
            ("abc", &[Integer], r#""abc""#),
            ("nan", &[Integer], r#""nan""#),
            ("1e3", &[Number], "1000"),
            ("1.0", &[Number], "1.0"),
            ("2", &[Number], "2"),
            ("-0", &[Number], "0"),
            ("NaN", &[Number], r#""NaN""#),
            ("inf", &[Number], r#""inf""#),
            ("1e400", &[Number], r#""1e400""#),
            (" 7 ", &[Number], "7"),
            ("\u{663}", &[Number], "3"),
            ("TRUE", &[Boolean], "true"),
            (" 0 ", &[Boolean], "false"),
            ("yes", &[Boolean], r#""yes""#),
            ("null", &[Null], "null"),
            (" None ", &[Null], "null"),
            ("nil", &[Null], r#""nil""#),
            (r#"{"a": 1}"#, &[Object], r#"{"a":1}"#),
            ("[1, 2]", &[Object], r#""[1, 2]""#),
            ("[1, 2]", &[Array], "[1,2]"),
            ("x", &[Object, Array], r#""x""#),
            ("null", &[Integer, Null], "null"),
            ("5", &[Null, Integer], "5"),
            ("true", &[Integer, Boolean], "true"),
            ("1", &[Boolean, Integer], "true"),
            ("12", &[Boolean, Integer], "12"),
        ] {
            assert_eq!(cast(raw, types), want, "{raw:?} as {types:?}");
        }
    }

    #[test]
    fn coerce_beyond_64_bits() {
        // Reference: 100000000000000000000 for both; here the f64 1e20, which is exactly it.
        assert_eq!(
            coerce_str("1e20", &[Integer]).and_then(|v| v.as_f64()),
            Some(1e20)
        );
        assert_eq!(
            coerce_str("1e20", &[Number]).and_then(|v| v.as_f64()),
            Some(1e20)
        );
        // Reference: the int 123456789012345678901234567890. Unrepresentable: the string stays.
        assert_eq!(
            cast("123456789012345678901234567890", &[Integer]),
            r#""123456789012345678901234567890""#
        );
        // Reference: {"a": NaN}. Unrepresentable: the string stays.
        assert_eq!(cast(r#"{"a": NaN}"#, &[Object]), r#""{\"a\": NaN}""#);
    }

    #[test]
    fn schema_types_matches_reference() {
        assert_eq!(types_of(r#"{"type": "integer"}"#), [Integer]);
        assert_eq!(
            types_of(r#"{"type": ["integer", "null"]}"#),
            [Integer, Null]
        );
        // "string" is dropped: it never changes a value.
        assert_eq!(
            types_of(r#"{"anyOf": [{"type": "integer"}, {"type": "string"}]}"#),
            [Integer]
        );
        assert_eq!(
            types_of(r#"{"type": "number", "nullable": true}"#),
            [Number, Null]
        );
        assert_eq!(types_of(r#"{"type": "null", "nullable": true}"#), [Null]);
        assert_eq!(
            types_of(r#"{"oneOf": [{"anyOf": [{"type": "boolean"}]}], "type": "array"}"#),
            [Array, Boolean]
        );
        assert_eq!(types_of(r#"{"nullable": "yes"}"#), [Null]);
        for schema in [
            r#"{"anyOf": {"type": "integer"}}"#,
            r#"{"anyOf": "integer"}"#,
            r#"{"nullable": 0}"#,
            r#""integer""#,
            r#"{"type": 5}"#,
            r#"{"anyOf": []}"#,
            r#"{"anyOf": 0}"#,
        ] {
            assert_eq!(types_of(schema), [], "{schema}");
        }
    }

    fn schemas() -> ToolSchemas {
        let tools: Value = serde_json::from_str(
            r#"[
              {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
                  "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"}, "o": {"type": "object"},
                  "l": {"type": "array"}, "s": {"type": "string"}, "m": {"type": ["integer", "null"]}}}}},
              {"name": "bare", "parameters": {"properties": {"k": {"type": "integer"}}}},
              {"type": "function", "function": {"name": "empty", "parameters": {"properties": {}}}},
              {"function": null, "name": "shadow", "parameters": {"properties": {"k": {"type": "integer"}}}},
              "junk", {"function": {"name": 5}}
            ]"#,
        )
        .unwrap();
        ToolSchemas::from_tools(tools.as_array().unwrap())
    }

    #[track_caller]
    fn coerced(s: &ToolSchemas, value: &str) -> String {
        let mut v: Value = serde_json::from_str(value).unwrap();
        s.coerce(&mut v);
        v.to_string()
    }

    #[test]
    fn reads_tools_like_the_reference() {
        let s = schemas();
        // Reference `_tool_params` keys: f, bare, empty ("shadow" has `"function": null`).
        let names: Vec<&str> = s.tools.keys().map(String::as_str).collect();
        assert_eq!(names, ["bare", "empty", "f"]);
        assert!(!s.is_empty());
        assert!(ToolSchemas::from_tools(&[]).is_empty());
        assert!(ToolSchemas::default().is_empty());
    }

    #[test]
    fn coerce_tool_calls_matches_reference() {
        let s = schemas();
        assert_eq!(
            coerced(
                &s,
                r#"{"type": "function", "function": {"name": "f", "arguments": {"n": "5", "x": "2.50", "b": "true",
                    "o": "{\"a\": [1]}", "l": "[1, 2]", "s": "7", "m": ["1", "null", 3, "z"], "zz": "1"}}}"#
            ),
            r#"{"type":"function","function":{"name":"f","arguments":{"n":5,"x":2.5,"b":true,"o":{"a":[1]},"l":[1,2],"s":"7","m":[1,null,3,"z"],"zz":"1"}}}"#
        );
        // Nested lists are walked; list arguments of an `array` parameter are left alone.
        assert_eq!(
            coerced(
                &s,
                r#"[{"function": {"name": "bare", "arguments": {"k": ["1", "2"]}}},
                    [{"function": {"name": "f", "arguments": {"l": ["1", "2"], "n": 4}}}]]"#
            ),
            r#"[{"function":{"name":"bare","arguments":{"k":[1,2]}}},[{"function":{"name":"f","arguments":{"l":["1","2"],"n":4}}}]]"#
        );
        for unchanged in [
            r#"{"function":{"name":"empty","arguments":{"k":"1"}}}"#,
            r#"{"function":{"name":"shadow","arguments":{"k":"1"}}}"#,
            r#"{"function":{"name":"unknown","arguments":{"k":"1"}}}"#,
            r#"{"function":{"name":"f","arguments":"{\"n\": \"1\"}"}}"#,
            r#""text""#,
            r#"{"name":"f","arguments":{"n":"1"}}"#,
        ] {
            assert_eq!(coerced(&s, unchanged), unchanged.to_string());
        }
    }
}
