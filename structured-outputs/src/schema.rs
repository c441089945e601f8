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

use serde_json::Value;

/// A schema the compiler does not admit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{pointer}: {keyword}: {reason}")]
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
const ANNOTATIONS: &[&str] = &[
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

const TYPES: &[&str] = &[
    "string", "integer", "number", "boolean", "object", "array", "null",
];

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
                "properties" => match v {
                    Value::Object(props) => {
                        for (name, sub) in props {
                            self.schema(sub, &format!("{at}/{}", escape_token(name)));
                        }
                    }
                    _ => self.error(&at, key, "must be an object of schemas"),
                },
                "required" => {
                    let ok = v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
                    if !ok {
                        self.error(&at, key, "must be an array of property names");
                    }
                }
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
                "enum" => {
                    if !v.is_array() {
                        self.error(&at, key, "must be an array");
                    }
                }
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
                "$defs" => match v {
                    Value::Object(defs) => {
                        for (name, sub) in defs {
                            self.schema(sub, &format!("{at}/{}", escape_token(name)));
                        }
                    }
                    _ => self.error(&at, key, "must be an object of schemas"),
                },
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
        for name in names {
            match name.as_str() {
                Some(n) if TYPES.contains(&n) => {}
                _ => self.error(
                    at,
                    "type",
                    format!("unknown type {name} (types: {TYPES:?})"),
                ),
            }
        }
    }

    fn pattern(&mut self, v: &Value, at: &str) {
        let Some(p) = v.as_str() else {
            self.error(at, "pattern", "must be a string");
            return;
        };
        for (needle, what) in [
            ("(?=", "look-ahead"),
            ("(?!", "negative look-ahead"),
            ("(?<=", "look-behind"),
            ("(?<!", "negative look-behind"),
        ] {
            if p.contains(needle) {
                self.error(at, "pattern", format!("{what} `{needle}` is not supported"));
                return;
            }
        }
        // `^` and `$` outside character classes and escapes.
        let mut escaped = false;
        let mut class = false;
        for c in p.chars() {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '[') => class = true,
                (false, ']') => class = false,
                (false, '^' | '$') if !class => {
                    self.error(at, "pattern", format!("anchor `{c}` is not supported"));
                    return;
                }
                _ => {}
            }
        }
        if let Err(e) = regex_syntax::Parser::new().parse(p) {
            self.error(at, "pattern", format!("invalid regex: {e}"));
        }
    }

    fn reference(&mut self, v: &Value, owner: &str, at: &str) {
        let Some(r) = v.as_str() else {
            self.error(at, "$ref", "must be a string");
            return;
        };
        let target = r
            .strip_prefix('#')
            .filter(|f| f.is_empty() || f.starts_with('/'))
            .and_then(percent_decode);
        match target {
            Some(target) => self.refs.push((owner.to_string(), at.to_string(), target)),
            None => self.error(
                at,
                "$ref",
                format!("{r:?}: only references within the schema (`#` or `#/...`) are supported"),
            ),
        }
    }

    /// After the walk: every reference lands on a place walked as a schema (so no keyword
    /// reaches the checker unchecked), and no cycle of references and `anyOf` members comes
    /// back to a schema without going through a property or an item.
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

/// The JSON type name of a value (`object`, `array`, `string`, `integer`, `number`,
/// `boolean`, `null`).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
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
        Ok(())
    } else {
        Err(SchemaErrors(gate.errors))
    }
}

/// The contract rules on a schema used as a response format or as a tool's parameters: the
/// top level is `type: object`, and every object schema declares at least one required
/// property. Errors name the pointer.
pub fn check_contract_rules(schema: &Value) -> Result<(), SchemaErrors> {
    let mut errors = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        errors.push(SchemaError {
            pointer: String::new(),
            keyword: "type".into(),
            reason: "the top level must be `\"type\": \"object\"`".into(),
        });
    }
    objects_declare_required(schema, "", &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(SchemaErrors(errors))
    }
}

fn objects_declare_required(v: &Value, pointer: &str, errors: &mut Vec<SchemaError>) {
    let Value::Object(map) = v else { return };
    let is_object =
        map.get("type").and_then(Value::as_str) == Some("object") || map.contains_key("properties");
    if is_object {
        let required = map
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| !r.is_empty());
        if !required {
            errors.push(SchemaError {
                pointer: pointer.to_string(),
                keyword: "required".into(),
                reason: "every object must declare at least one required property".into(),
            });
        }
    }
    for (key, sub) in map {
        let at = format!("{pointer}/{}", escape_token(key));
        match key.as_str() {
            "properties" | "$defs" => {
                if let Value::Object(children) = sub {
                    for (name, child) in children {
                        objects_declare_required(
                            child,
                            &format!("{at}/{}", escape_token(name)),
                            errors,
                        );
                    }
                }
            }
            "items" | "additionalProperties" => objects_declare_required(sub, &at, errors),
            "anyOf" => {
                if let Value::Array(items) = sub {
                    for (i, child) in items.iter().enumerate() {
                        objects_declare_required(child, &format!("{at}/{i}"), errors);
                    }
                }
            }
            _ => {}
        }
    }
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

type Cache = Mutex<HashMap<(String, Strictness), Arc<CompiledSchema>>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Compiles `schema` under `strictness` (subset gate, then the draft 2020-12 checker with
/// format validation on). The same content compiles once per process (a cache keyed by the
/// schema's JSON text).
///
/// Errors: every keyword outside the subset ([`check_subset`]); a schema the checker cannot
/// build (e.g. a `$ref` to an `$id` that is not in the schema) as one error at the root.
pub fn compile(
    schema: &Value,
    strictness: Strictness,
) -> Result<Arc<CompiledSchema>, SchemaErrors> {
    let key = (schema.to_string(), strictness);
    if let Ok(cache) = cache().lock() {
        if let Some(hit) = cache.get(&key) {
            return Ok(hit.clone());
        }
    }
    check_subset(schema, strictness)?;
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| {
            SchemaErrors(vec![SchemaError {
                pointer: String::new(),
                keyword: "schema".into(),
                reason: format!("cannot build the checker: {e}"),
            }])
        })?;
    let compiled = Arc::new(CompiledSchema {
        schema: schema.clone(),
        strictness,
        validator,
    });
    if let Ok(mut cache) = cache().lock() {
        cache.insert(key, compiled.clone());
    }
    Ok(compiled)
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

    #[test]
    fn contract_rules() {
        assert!(
            check_contract_rules(&json!({"type": "object", "properties": {"a": {}},
            "required": ["a"]}))
            .is_ok()
        );
        let e = check_contract_rules(&json!({"type": "array"})).unwrap_err();
        assert_eq!(e.0[0].pointer, "");
        let e = check_contract_rules(&json!({"type": "object", "required": ["a"],
            "properties": {"a": {"type": "object", "properties": {"b": {}}}}}))
        .unwrap_err();
        assert_eq!(e.0[0].pointer, "/properties/a");
    }

    #[test]
    fn compiled_schemas_are_cached_by_content() {
        let schema =
            json!({"type": "object", "properties": {"x": {"const": 3}}, "required": ["x"]});
        let a = compile(&schema, Strictness::Strict).unwrap();
        let b = compile(&schema.clone(), Strictness::Strict).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
    }
}
