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
    check_contract_rules, close_objects, compile, count_properties, escape_token, type_name,
    CompiledSchema, Objects, SchemaError, SchemaErrors, Strictness,
};
use crate::tool::{read_tools, ToolError};
use crate::types::{resolved_types, JsonType, Types};

/// The deepest nesting JSON mode admits (a top-level object is level 1).
pub const JSON_MODE_MAX_DEPTH: usize = 5;

/// The deepest nesting the JSON reader (serde_json) takes: content nested deeper is a
/// `too_deep` violation in JSON Schema mode too, where the contract itself sets no limit.
pub const JSON_READER_MAX_DEPTH: usize = 127;

/// The most properties strict tools may declare over all tools (nested ones included).
pub const STRICT_TOOLS_MAX_PROPERTIES: usize = 200;

/// What kind of rule a message breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// The content is not JSON (JSON modes), or a call's arguments are a string that is not
    /// JSON (strict tools).
    NotJson,
    /// The content is JSON but not an object (JSON modes).
    NotObject,
    /// Nested deeper than [`JSON_MODE_MAX_DEPTH`] (JSON mode) or [`JSON_READER_MAX_DEPTH`]
    /// (JSON Schema mode content, tool-call arguments).
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
    if v.is_null() {
        return "null".into();
    }
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
        check_contract_rules(schema, Objects::Open)?;
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

    /// The violations of the message content (`content`: a string holding the JSON, or the
    /// object itself when a content parser already read it). A message with tool calls and
    /// no content (absent, `null` or only whitespace) has nothing to check: the response
    /// format applies to the content of a turn that answers.
    pub fn check(&self, message: &Map<String, Value>) -> Vec<Violation> {
        let mut out = Vec::new();
        if matches!(self, Self::Text) {
            return out;
        }
        let has_calls = matches!(message.get("tool_calls"), Some(Value::Array(c)) if !c.is_empty());
        let no_content = match message.get("content") {
            None | Some(Value::Null) => true,
            Some(Value::String(text)) => text.trim().is_empty(),
            Some(_) => false,
        };
        if has_calls && no_content {
            return out;
        }
        let limit = match self {
            Self::JsonObject => JSON_MODE_MAX_DEPTH,
            _ => JSON_READER_MAX_DEPTH,
        };
        let parsed = match message.get("content") {
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(v) => v,
                Err(e) if is_recursion_limit(&e) && !text.trim_start().starts_with('{') => {
                    out.push(violation(
                        ViolationKind::NotObject,
                        "/content",
                        "a JSON object",
                        "a deeply nested array",
                    ));
                    return out;
                }
                Err(e) => {
                    out.extend(unreadable(text, &e, "/content", limit));
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
        too_deep(&parsed, "/content", 1, limit, &mut out);
        if let Self::JsonSchema(schema) = self {
            if out.is_empty() {
                schema_violations(schema, &parsed, "/content", &mut out);
            }
        }
        sort(&mut out);
        out
    }
}

fn is_recursion_limit(e: &serde_json::Error) -> bool {
    e.is_syntax() && e.to_string().starts_with("recursion limit exceeded")
}

/// The violations of JSON text at `at` that serde_json could not read: past its nesting limit
/// (read as JSON up to a nesting it will not go past), every container opened at level
/// `limit + 1`; otherwise text that is not JSON.
fn unreadable(text: &str, e: &serde_json::Error, at: &str, limit: usize) -> Vec<Violation> {
    if !is_recursion_limit(e) {
        return vec![violation(
            ViolationKind::NotJson,
            at,
            "a JSON object",
            format!("text that is not JSON ({e})"),
        )];
    }
    containers_past(text, limit)
        .into_iter()
        .map(|pointer| {
            too_deep_violation(
                format!("{at}{pointer}"),
                limit,
                format!("a container at level {}", limit + 1),
            )
        })
        .collect()
}

fn too_deep_violation(pointer: String, limit: usize, found: String) -> Violation {
    let expected = if limit == JSON_MODE_MAX_DEPTH {
        format!("at most {limit} levels of nesting")
    } else {
        format!("at most {limit} levels of nesting (the JSON reader's limit)")
    };
    violation(ViolationKind::TooDeep, pointer, expected, found)
}

/// The JSON pointers (relative to the text's top value) of every container opened at level
/// `limit + 1`, the first past the limit on its path, read from JSON text without building
/// values (for text too deep to parse). Text after a syntax error is read as well as it can
/// be; only pointers are produced.
fn containers_past(text: &str, limit: usize) -> Vec<String> {
    enum Frame {
        Object { key: String, expect_key: bool },
        Array { index: usize },
    }
    let bytes = text.as_bytes();
    let mut frames: Vec<Frame> = Vec::new();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                if let Some(Frame::Object { key, expect_key }) = frames.last_mut() {
                    if *expect_key {
                        let raw = text.get(start..=i.min(bytes.len() - 1)).unwrap_or("");
                        *key = serde_json::from_str::<String>(raw).unwrap_or_default();
                        *expect_key = false;
                    }
                }
            }
            open @ (b'{' | b'[') => {
                if frames.len() == limit {
                    let mut pointer = String::new();
                    for frame in &frames {
                        pointer.push('/');
                        match frame {
                            Frame::Object { key, .. } => pointer.push_str(&escape_token(key)),
                            Frame::Array { index } => pointer.push_str(&index.to_string()),
                        }
                    }
                    out.push(pointer);
                }
                frames.push(if open == b'{' {
                    Frame::Object {
                        key: String::new(),
                        expect_key: true,
                    }
                } else {
                    Frame::Array { index: 0 }
                });
            }
            b'}' | b']' => {
                frames.pop();
            }
            b',' => match frames.last_mut() {
                Some(Frame::Object { expect_key, .. }) => *expect_key = true,
                Some(Frame::Array { index }) => *index += 1,
                None => {}
            },
            _ => {}
        }
        i += 1;
    }
    out
}

/// JSON mode's nesting limit: the first container past the limit on each path.
fn too_deep(v: &Value, pointer: &str, depth: usize, limit: usize, out: &mut Vec<Violation>) {
    if !(v.is_object() || v.is_array()) {
        return;
    }
    if depth > limit {
        out.push(too_deep_violation(
            pointer.to_string(),
            limit,
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
                    limit,
                    out,
                );
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                too_deep(child, &format!("{pointer}/{i}"), depth + 1, limit, out);
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
        let (kind, expected) = match error.kind() {
            ValidationErrorKind::Type { kind } => (ViolationKind::TypeMismatch, type_kind(kind)),
            ValidationErrorKind::Enum { options } => {
                (ViolationKind::EnumMismatch, format!("one of {options}"))
            }
            ValidationErrorKind::Constant { expected_value } => {
                (ViolationKind::ConstMismatch, expected_value.to_string())
            }
            ValidationErrorKind::Pattern { pattern } => (
                ViolationKind::PatternMismatch,
                format!("a string matching {pattern:?}"),
            ),
            ValidationErrorKind::Format { format } => {
                (ViolationKind::FormatMismatch, format!("a {format} string"))
            }
            ValidationErrorKind::Required { property } => {
                let name = property
                    .as_str()
                    .map_or_else(|| property.to_string(), str::to_string);
                out.push(violation(
                    ViolationKind::MissingRequired,
                    format!("{at}/{}", escape_token(&name)),
                    format!("property {name:?}"),
                    "nothing",
                ));
                continue;
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
            // A `false` schema: under an object it forbids that property; as `items` (or at
            // the top) it forbids any value there.
            ValidationErrorKind::FalseSchema => {
                let path = error.instance_path().as_str();
                let parent = path.rfind('/').map(|i| &path[..i]);
                let in_object = parent
                    .and_then(|p| instance.pointer(p))
                    .is_some_and(Value::is_object);
                if in_object {
                    (
                        ViolationKind::AdditionalProperty,
                        "no such property (its schema is false)".to_string(),
                    )
                } else {
                    (
                        ViolationKind::TypeMismatch,
                        "no value here (the schema is false)".to_string(),
                    )
                }
            }
            ValidationErrorKind::AnyOf { .. } => (
                ViolationKind::AnyOfMismatch,
                "a value matching one of the anyOf branches".to_string(),
            ),
            // The subset gate admits no other keyword, so the checker reports no other kind;
            // should it, the violation keeps the checker's words.
            _ => (ViolationKind::TypeMismatch, error.to_string()),
        };
        out.push(violation(kind, at, expected, found));
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

/// One strict tool: where it is declared and its parameters schema, as declared and compiled.
#[derive(Debug, Clone)]
pub struct StrictTool {
    name: String,
    /// JSON pointer of the object holding its fields in the tool list (`/0/function`).
    pointer: String,
    /// The parameters schema as declared.
    declared: Value,
    /// The parameters schema with its objects closed ([`close_objects`]), compiled.
    parameters: Arc<CompiledSchema>,
    /// The declared top-level parameters.
    names: Vec<String>,
}

impl StrictTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// JSON pointer of the object holding the tool's fields in the tool list (`/0/function`,
    /// or `/0` for a bare `{"name", "parameters"}` item).
    pub fn pointer(&self) -> &str {
        &self.pointer
    }

    /// The parameters schema as declared.
    pub fn declared(&self) -> &Value {
        &self.declared
    }

    /// The parameters schema as strict tools read it: every object closed
    /// ([`close_objects`]).
    pub fn closed(&self) -> &Value {
        &self.parameters.schema
    }

    /// The types the parser's argument typing should cast each declared parameter to under
    /// strict tools, in declaration order: [`resolved_types`] (its `type`, or the JSON types
    /// of its `enum` values or its `const`, then those of its `$ref` target and its `anyOf`
    /// members).
    ///
    /// The reference's typing (`_schema_types`) reads only `type` and `anyOf`/`oneOf`, so a
    /// parameter typed through `$ref`, or an untyped `enum` of numbers, stays a string in
    /// formats that write every argument as text (Qwen3-Coder's `<parameter=...>`), and strict
    /// tools would report it; with these types the parser casts it first.
    pub fn parameter_types(&self) -> impl Iterator<Item = (&str, Types)> + '_ {
        self.declared
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(param, schema)| (param.as_str(), resolved_types(&self.declared, schema)))
    }
}

impl From<ToolError> for SchemaError {
    fn from(e: ToolError) -> Self {
        Self {
            keyword: e.keyword().into(),
            reason: e.reason(),
            pointer: e.pointer,
        }
    }
}

/// Strict tools: the request's tools, each parameters schema admitted by the subset gate and
/// the contract rules.
///
/// Objects are closed: an object schema without `additionalProperties` admits only its
/// declared properties ([`close_objects`]), so an undeclared argument is `unknown_parameter`
/// at the top of a call's arguments and `additional_property` below it. An explicit
/// `additionalProperties` (`true` or a schema) is honoured.
#[derive(Debug, Clone)]
pub struct StrictTools {
    /// In declaration order.
    tools: Vec<StrictTool>,
    /// Name -> place in `tools`.
    by_name: BTreeMap<String, usize>,
}

impl StrictTools {
    /// Compiles `tools` (OpenAI tool JSON, read by [`read_tools`]: `{"type": "function",
    /// "function": {"name", "parameters"}}`, or `{"name", "parameters"}`).
    ///
    /// Errors, each with a JSON pointer into `tools`, in the order of the tools: a tool without
    /// a name or parameters, a duplicated name, a parameters schema outside the subset or
    /// breaking the contract rules ([`check_contract_rules`] with [`Objects::Closed`]: top-level
    /// object, every object with a required property that it declares, no `$ref`/`anyOf` next
    /// to object keywords), more than [`STRICT_TOOLS_MAX_PROPERTIES`] properties over all
    /// tools.
    pub fn new(tools: &[Value]) -> Result<Self, SchemaErrors> {
        let mut errors: Vec<SchemaError> = Vec::new();
        let mut out = Self {
            tools: Vec::new(),
            by_name: BTreeMap::new(),
        };
        let mut properties = 0;
        for tool in read_tools(tools) {
            let (tool, parameters) = match tool.and_then(|t| t.require_parameters().map(|p| (t, p)))
            {
                Ok(read) => read,
                Err(e) => {
                    errors.push(e.into());
                    continue;
                }
            };
            let at = format!("{}/parameters", tool.pointer());
            let prefixed = |e: SchemaErrors| {
                e.0.into_iter().map(|mut err| {
                    err.pointer = format!("{at}{}", err.pointer);
                    err
                })
            };
            // The gate first, on the schema as written (its pointers are the caller's).
            if let Err(e) = crate::schema::check_subset(parameters, Strictness::Strict) {
                errors.extend(prefixed(e));
                continue;
            }
            if let Err(e) = check_contract_rules(parameters, Objects::Closed) {
                errors.extend(prefixed(e));
                continue;
            }
            let compiled = match compile(&close_objects(parameters), Strictness::Strict) {
                Ok(c) => c,
                Err(e) => {
                    errors.extend(prefixed(e));
                    continue;
                }
            };
            properties += count_properties(parameters);
            if out.by_name.contains_key(tool.name) {
                errors.push(tool.duplicate().into());
                continue;
            }
            out.by_name.insert(tool.name.to_string(), out.tools.len());
            out.tools.push(StrictTool {
                name: tool.name.to_string(),
                pointer: tool.pointer(),
                declared: parameters.clone(),
                parameters: compiled,
                names: tool
                    .properties()
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.clone())
                    .collect(),
            });
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
            Ok(out)
        } else {
            Err(SchemaErrors(errors))
        }
    }

    /// The declared tool names, in name order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// The tools, in declaration order.
    pub fn tools(&self) -> &[StrictTool] {
        &self.tools
    }

    /// The tool called `name`, if declared.
    pub fn get(&self, name: &str) -> Option<&StrictTool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tools as the parser's argument typing (`ToolSchemas::from_tools`) should read them
    /// under strict tools, in name order: one `{"name": N, "parameters": {"properties": {P:
    /// {"type": [T, ...]}}}}` per tool, each parameter typed by
    /// [`StrictTool::parameter_types`].
    pub fn typing_tools(&self) -> Vec<Value> {
        self.by_name
            .values()
            .map(|&i| {
                let tool = &self.tools[i];
                let properties: Map<String, Value> = tool
                    .parameter_types()
                    .map(|(param, types)| {
                        let names: Vec<&str> = types.iter().map(JsonType::name).collect();
                        (param.to_string(), serde_json::json!({ "type": names }))
                    })
                    .collect();
                serde_json::json!({"name": tool.name, "parameters": {"properties": properties}})
            })
            .collect()
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
        let Some(tool) = name.and_then(Value::as_str).and_then(|n| self.get(n)) else {
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
                Err(e) => {
                    out.extend(unreadable(text, &e, &at, JSON_READER_MAX_DEPTH));
                    return out;
                }
            },
            Some(v) => v,
            None => {
                parsed = Value::Object(Map::new());
                &parsed
            }
        };
        // The value checks recurse with the value: past the reader's depth, stop there (the
        // parser admits deeper JSON than the checker should walk on a small stack).
        too_deep(arguments, &at, 1, JSON_READER_MAX_DEPTH, &mut out);
        if !out.is_empty() {
            return out;
        }
        schema_violations(&tool.parameters, arguments, &at, &mut out);
        // An undeclared property of the arguments object itself is a hallucinated parameter.
        let top = format!("{at}/");
        for v in &mut out {
            let is_top = v
                .pointer
                .strip_prefix(&top)
                .is_some_and(|rest| !rest.contains('/'));
            let key = if is_top {
                v.pointer[top.len()..].replace("~1", "/").replace("~0", "~")
            } else {
                String::new()
            };
            // (A declared parameter whose schema is `false` stays additional_property.)
            if v.kind == ViolationKind::AdditionalProperty && is_top && !tool.names.contains(&key) {
                v.kind = ViolationKind::UnknownParameter;
                v.expected = format!("one of {:?}", tool.names);
                v.found = format!("parameter {key:?}");
            }
        }
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
