//! Contracts and violations: what a parsed message must satisfy, and every way it does not.
//!
//! Source: `../shared/SEEDS.md` part 2 (the structured-outputs source document): JSON mode
//! (`response_format={"type": "json_object"}`: the content is one JSON object, nested at most
//! 5 levels), JSON Schema mode (the object follows the schema), strict tools (no hallucinated
//! tool names or parameters, every required parameter present, every value of the declared
//! type).

use std::collections::BTreeMap;
use std::sync::Arc;

use jsonschema::error::ValidationErrorKind;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::{
    check_contract_rules, compile, escape_token, type_name, CompiledSchema, SchemaError,
    SchemaErrors, Strictness,
};

/// The deepest nesting JSON mode admits (a top-level object is level 1).
pub const JSON_MODE_MAX_DEPTH: usize = 5;

/// The most properties strict tools may declare over all tools (nested ones included).
pub const STRICT_TOOLS_MAX_PROPERTIES: usize = 200;

/// What kind of rule a message breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// The content is not JSON (JSON modes).
    NotJson,
    /// The content is JSON but not an object (JSON modes).
    NotObject,
    /// JSON mode: nested deeper than [`JSON_MODE_MAX_DEPTH`].
    TooDeep,
    /// Strict tools: a call names no declared tool.
    UnknownTool,
    /// Strict tools: an argument the tool does not declare.
    UnknownParameter,
    /// A required property (or parameter) is absent.
    MissingRequired,
    /// A value of the wrong JSON type.
    TypeMismatch,
    /// A value outside `enum`.
    EnumMismatch,
    /// A value other than `const`.
    ConstMismatch,
    /// A string that does not match `pattern`.
    PatternMismatch,
    /// A string that is not of its `format`.
    FormatMismatch,
    /// A property `additionalProperties` forbids (below the top level of tool arguments).
    AdditionalProperty,
    /// A value that matches no branch of `anyOf`.
    AnyOfMismatch,
}

/// One broken rule: where (a JSON pointer into the message, e.g.
/// `/tool_calls/0/function/arguments/city`), what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Violation {
    /// The kind of rule.
    pub kind: ViolationKind,
    /// JSON pointer into the message (RFC 6901).
    pub pointer: String,
    /// What the contract expects there.
    pub expected: String,
    /// What the message has there.
    pub found: String,
}

fn violation(
    kind: ViolationKind,
    pointer: impl Into<String>,
    expected: impl Into<String>,
    found: impl Into<String>,
) -> Violation {
    Violation {
        kind,
        pointer: pointer.into(),
        expected: expected.into(),
        found: found.into(),
    }
}

/// A short description of a found value: its type, and the value itself when small.
fn describe(v: &Value) -> String {
    let text = v.to_string();
    if text.chars().count() <= 60 {
        format!("{} {text}", type_name(v))
    } else {
        let cut: String = text.chars().take(57).collect();
        format!("{} {cut}...", type_name(v))
    }
}

/// The response format of a request.
#[derive(Debug, Clone)]
pub enum ResponseFormat {
    /// Free text: no check.
    Text,
    /// JSON mode: the content is one JSON object nested at most [`JSON_MODE_MAX_DEPTH`] levels.
    JsonObject,
    /// JSON Schema mode: the content is a JSON object valid for the schema.
    JsonSchema(Arc<CompiledSchema>),
}

impl ResponseFormat {
    /// JSON Schema mode for `schema`: the subset gate (strict), the contract rules (top-level
    /// object, every object with a required property), compiled once per content.
    ///
    /// Errors: every problem of the schema, each with its JSON pointer.
    pub fn json_schema(schema: &Value) -> Result<Self, SchemaErrors> {
        let compiled = compile(schema, Strictness::Strict)?;
        check_contract_rules(schema)?;
        Ok(Self::JsonSchema(compiled))
    }

    /// From the OpenAI request field: `{"type": "text"}`, `{"type": "json_object"}` (with an
    /// optional `"schema"`), or `{"type": "json_schema", "json_schema": {"schema": ...}}`.
    ///
    /// Errors: an unknown type or a malformed object (pointer into the given value), or the
    /// schema's problems (pointers prefixed with the schema's place).
    pub fn from_request(value: &Value) -> Result<Self, SchemaErrors> {
        let bad = |pointer: &str, reason: &str| {
            SchemaErrors(vec![SchemaError {
                pointer: pointer.into(),
                keyword: "response_format".into(),
                reason: reason.into(),
            }])
        };
        let with_prefix = |prefix: &str, e: SchemaErrors| {
            SchemaErrors(
                e.0.into_iter()
                    .map(|mut err| {
                        err.pointer = format!("{prefix}{}", err.pointer);
                        err
                    })
                    .collect(),
            )
        };
        match value.get("type").and_then(Value::as_str) {
            Some("text") => Ok(Self::Text),
            Some("json_object") => match value.get("schema") {
                None => Ok(Self::JsonObject),
                Some(schema) => Self::json_schema(schema).map_err(|e| with_prefix("/schema", e)),
            },
            Some("json_schema") => {
                let Some(schema) = value.pointer("/json_schema/schema") else {
                    return Err(bad("/json_schema/schema", "missing"));
                };
                Self::json_schema(schema).map_err(|e| with_prefix("/json_schema/schema", e))
            }
            Some(other) => Err(bad(
                "/type",
                &format!("unknown response format {other:?} (text, json_object, json_schema)"),
            )),
            None => Err(bad("/type", "missing")),
        }
    }

    /// The violations of the message content (`content`, a string holding the JSON).
    pub fn check(&self, message: &Map<String, Value>) -> Vec<Violation> {
        let mut out = Vec::new();
        if matches!(self, Self::Text) {
            return out;
        }
        let parsed = match message.get("content") {
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(v) => v,
                Err(e) => {
                    out.push(violation(
                        ViolationKind::NotJson,
                        "/content",
                        "a JSON object",
                        format!("text that is not JSON ({e})"),
                    ));
                    return out;
                }
            },
            Some(Value::Object(_)) => message["content"].clone(),
            Some(other) => {
                out.push(violation(
                    ViolationKind::NotJson,
                    "/content",
                    "a JSON object",
                    describe(other),
                ));
                return out;
            }
            None => {
                out.push(violation(
                    ViolationKind::NotJson,
                    "/content",
                    "a JSON object",
                    "no content",
                ));
                return out;
            }
        };
        if !parsed.is_object() {
            out.push(violation(
                ViolationKind::NotObject,
                "/content",
                "a JSON object",
                describe(&parsed),
            ));
            return out;
        }
        match self {
            Self::JsonObject => too_deep(&parsed, "/content", 1, &mut out),
            Self::JsonSchema(schema) => schema_violations(schema, &parsed, "/content", &mut out),
            Self::Text => {}
        }
        sort(&mut out);
        out
    }
}

/// JSON mode's nesting limit: the first container past the limit on each path.
fn too_deep(v: &Value, pointer: &str, depth: usize, out: &mut Vec<Violation>) {
    if !(v.is_object() || v.is_array()) {
        return;
    }
    if depth > JSON_MODE_MAX_DEPTH {
        out.push(violation(
            ViolationKind::TooDeep,
            pointer,
            format!("at most {JSON_MODE_MAX_DEPTH} levels of nesting"),
            format!("{} at level {depth}", type_name(v)),
        ));
        return;
    }
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                too_deep(
                    child,
                    &format!("{pointer}/{}", escape_token(k)),
                    depth + 1,
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                too_deep(child, &format!("{pointer}/{i}"), depth + 1, out);
            }
        }
        _ => {}
    }
}

/// The checker's errors for `instance` (at `base` in the message) as violations.
fn schema_violations(
    schema: &CompiledSchema,
    instance: &Value,
    base: &str,
    out: &mut Vec<Violation>,
) {
    for error in schema.errors(instance) {
        let at = format!("{base}{}", error.instance_path().as_str());
        let found = describe(error.instance());
        let v = match error.kind() {
            ValidationErrorKind::Type { kind } => {
                violation(ViolationKind::TypeMismatch, at, type_kind(kind), found)
            }
            ValidationErrorKind::Enum { options } => violation(
                ViolationKind::EnumMismatch,
                at,
                format!("one of {options}"),
                found,
            ),
            ValidationErrorKind::Constant { expected_value } => violation(
                ViolationKind::ConstMismatch,
                at,
                expected_value.to_string(),
                found,
            ),
            ValidationErrorKind::Pattern { pattern } => violation(
                ViolationKind::PatternMismatch,
                at,
                format!("a string matching {pattern:?}"),
                found,
            ),
            ValidationErrorKind::Format { format } => violation(
                ViolationKind::FormatMismatch,
                at,
                format!("a {format} string"),
                found,
            ),
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                violation(
                    ViolationKind::MissingRequired,
                    format!("{at}/{}", escape_token(&name)),
                    format!("property {name:?}"),
                    "nothing",
                )
            }
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for name in unexpected {
                    let value = instance
                        .pointer(&format!(
                            "{}/{}",
                            error.instance_path().as_str(),
                            escape_token(name)
                        ))
                        .map_or_else(|| "a value".to_string(), describe);
                    out.push(violation(
                        ViolationKind::AdditionalProperty,
                        format!("{at}/{}", escape_token(name)),
                        "no such property (additionalProperties forbids it)",
                        value,
                    ));
                }
                continue;
            }
            ValidationErrorKind::FalseSchema => violation(
                ViolationKind::AdditionalProperty,
                at,
                "nothing (the schema here is false)",
                found,
            ),
            ValidationErrorKind::AnyOf { .. } => violation(
                ViolationKind::AnyOfMismatch,
                at,
                "a value matching one of the anyOf branches",
                found,
            ),
            // The subset gate admits no other keyword, so the checker reports no other kind;
            // should it, the violation keeps the checker's words.
            _ => violation(ViolationKind::TypeMismatch, at, error.to_string(), found),
        };
        out.push(v);
    }
}

fn type_kind(kind: &jsonschema::error::TypeKind) -> String {
    match kind {
        jsonschema::error::TypeKind::Single(t) => t.to_string(),
        jsonschema::error::TypeKind::Multiple(set) => {
            let names: Vec<String> = set.iter().map(|t| t.to_string()).collect();
            format!("one of {}", names.join(", "))
        }
    }
}

/// One declared tool, compiled.
#[derive(Debug, Clone)]
struct Tool {
    parameters: Arc<CompiledSchema>,
    /// The declared top-level parameters.
    names: Vec<String>,
}

/// Strict tools: the request's tools, each parameters schema admitted by the subset gate and
/// the contract rules.
#[derive(Debug, Clone)]
pub struct StrictTools {
    tools: BTreeMap<String, Tool>,
}

impl StrictTools {
    /// Compiles `tools` (OpenAI tool JSON: `{"type": "function", "function": {"name",
    /// "parameters"}}`, or `{"name", "parameters"}`).
    ///
    /// Errors, each with a JSON pointer into `tools`: a tool without a name or parameters, a
    /// duplicated name, a parameters schema outside the subset or breaking the contract rules
    /// (top-level object, at least one required parameter, every object with a required
    /// property), more than [`STRICT_TOOLS_MAX_PROPERTIES`] properties over all tools.
    pub fn new(tools: &[Value]) -> Result<Self, SchemaErrors> {
        let mut errors = Vec::new();
        let mut out = BTreeMap::new();
        let mut properties = 0;
        for (i, tool) in tools.iter().enumerate() {
            let (function, base) = match tool.get("function") {
                Some(f) => (f, format!("/{i}/function")),
                None => (tool, format!("/{i}")),
            };
            let Some(name) = function.get("name").and_then(Value::as_str) else {
                errors.push(SchemaError {
                    pointer: format!("{base}/name"),
                    keyword: "name".into(),
                    reason: "a tool needs a name".into(),
                });
                continue;
            };
            let Some(parameters) = function.get("parameters") else {
                errors.push(SchemaError {
                    pointer: format!("{base}/parameters"),
                    keyword: "parameters".into(),
                    reason: format!("tool {name:?} has no parameters schema"),
                });
                continue;
            };
            let at = format!("{base}/parameters");
            let prefixed = |e: SchemaErrors| {
                e.0.into_iter().map(|mut err| {
                    err.pointer = format!("{at}{}", err.pointer);
                    err
                })
            };
            let compiled = match compile(parameters, Strictness::Strict) {
                Ok(c) => c,
                Err(e) => {
                    errors.extend(prefixed(e));
                    continue;
                }
            };
            if let Err(e) = check_contract_rules(parameters) {
                errors.extend(prefixed(e));
                continue;
            }
            properties += count_properties(parameters);
            let names = parameters
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            if out
                .insert(
                    name.to_string(),
                    Tool {
                        parameters: compiled,
                        names,
                    },
                )
                .is_some()
            {
                errors.push(SchemaError {
                    pointer: format!("{base}/name"),
                    keyword: "name".into(),
                    reason: format!("tool {name:?} is declared twice"),
                });
            }
        }
        if properties > STRICT_TOOLS_MAX_PROPERTIES {
            errors.push(SchemaError {
                pointer: String::new(),
                keyword: "properties".into(),
                reason: format!(
                    "{properties} properties over all tools, over the limit of \
                     {STRICT_TOOLS_MAX_PROPERTIES}"
                ),
            });
        }
        if errors.is_empty() {
            Ok(Self { tools: out })
        } else {
            Err(SchemaErrors(errors))
        }
    }

    /// The declared tool names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }

    /// The violations of one tool call (`{"type": "function", "function": {"name",
    /// "arguments"}}`, arguments an object or a JSON string), `pointer` its place in the
    /// message (e.g. `/tool_calls/0`).
    pub fn check_call(&self, call: &Value, pointer: &str) -> Vec<Violation> {
        let mut out = Vec::new();
        let (function, base) = match call.get("function") {
            Some(f) => (f, format!("{pointer}/function")),
            None => (call, pointer.to_string()),
        };
        let name = function.get("name");
        let Some(tool) = name.and_then(Value::as_str).and_then(|n| self.tools.get(n)) else {
            let declared: Vec<&str> = self.names().collect();
            out.push(violation(
                ViolationKind::UnknownTool,
                format!("{base}/name"),
                format!("one of {declared:?}"),
                name.map_or_else(|| "no name".to_string(), describe),
            ));
            return out;
        };
        let at = format!("{base}/arguments");
        let parsed;
        let arguments = match function.get("arguments") {
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(v) => {
                    parsed = v;
                    &parsed
                }
                Err(_) => {
                    out.push(violation(
                        ViolationKind::TypeMismatch,
                        at,
                        "object",
                        describe(&Value::String(text.clone())),
                    ));
                    return out;
                }
            },
            Some(v) => v,
            None => {
                parsed = Value::Object(Map::new());
                &parsed
            }
        };
        if let Value::Object(args) = arguments {
            for key in args.keys() {
                if !tool.names.iter().any(|n| n == key) {
                    out.push(violation(
                        ViolationKind::UnknownParameter,
                        format!("{at}/{}", escape_token(key)),
                        format!("one of {:?}", tool.names),
                        format!("parameter {key:?}"),
                    ));
                }
            }
        }
        let mut found = Vec::new();
        schema_violations(&tool.parameters, arguments, &at, &mut found);
        // Unknown top-level parameters are reported once, as unknown_parameter.
        found.retain(|v| {
            !(v.kind == ViolationKind::AdditionalProperty
                && out
                    .iter()
                    .any(|u| u.kind == ViolationKind::UnknownParameter && u.pointer == v.pointer))
        });
        out.extend(found);
        sort(&mut out);
        out
    }
}

/// Violations in pointer order (then kind), array indices compared as numbers: a stable
/// order whatever the checker's.
fn sort(violations: &mut [Violation]) {
    fn key(pointer: &str) -> Vec<(u8, u64, &str)> {
        pointer
            .split('/')
            .map(|t| match t.parse::<u64>() {
                Ok(n) => (0, n, ""),
                Err(_) => (1, 0, t),
            })
            .collect()
    }
    violations
        .sort_by(|a, b| (key(&a.pointer), a.kind as u8).cmp(&(key(&b.pointer), b.kind as u8)));
}

fn count_properties(schema: &Value) -> usize {
    match schema {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match (k.as_str(), v) {
                ("properties", Value::Object(props)) => {
                    props.len() + props.values().map(count_properties).sum::<usize>()
                }
                ("enum" | "const" | "default" | "examples", _) => 0,
                (_, v) => count_properties(v),
            })
            .sum(),
        Value::Array(items) => items.iter().map(count_properties).sum(),
        _ => 0,
    }
}

/// What a message must satisfy: an optional response format and optional strict tools.
#[derive(Debug, Clone, Default)]
pub struct Contract {
    /// The response format (JSON mode, JSON Schema mode), if any.
    pub response_format: Option<ResponseFormat>,
    /// Strict tools, if requested.
    pub strict_tools: Option<StrictTools>,
}

impl Contract {
    /// Every violation of `message` (the parsed assistant message): the content's, then each
    /// tool call's, each part in JSON-pointer order.
    pub fn check(&self, message: &Map<String, Value>) -> Vec<Violation> {
        let mut out = Vec::new();
        if let Some(format) = &self.response_format {
            out.extend(format.check(message));
        }
        if let Some(tools) = &self.strict_tools {
            if let Some(Value::Array(calls)) = message.get("tool_calls") {
                for (i, call) in calls.iter().enumerate() {
                    out.extend(tools.check_call(call, &format!("/tool_calls/{i}")));
                }
            }
        }
        out
    }
}
