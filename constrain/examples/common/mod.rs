//! What the examples and the guarantee test (`tests/guarantee.rs`, which includes this file)
//! share: the vendored templates, requests with tools or JSON mode, and a weather tool.

// Each example uses a part.
#![allow(dead_code)]

use constrain::template::{compile, Constraint, Options, Request};
use serde_json::{json, Value};
use template_build::TemplateModel;

/// The templates measured first (the example `sizes`) and sampled most (the guarantee test).
pub const MAIN_TEMPLATES: [&str; 6] = [
    "smollm3",
    "qwen3",
    "hermes",
    "gpt-oss",
    "gemma-4",
    "qwen3-coder",
];

/// The vendored template `name` (`templates/NAME.json`), loaded.
pub fn template(name: &str) -> TemplateModel {
    let text = templates::source(name).unwrap_or_else(|| panic!("no template {name:?}"));
    let value: Value = serde_json::from_str(text).expect("template JSON");
    template_build::model::load(&value).expect("template loads")
}

/// A request with `tools` (tool choice auto, no response format).
pub fn with_tools(tools: Vec<Value>) -> Request {
    Request {
        tools,
        ..Request::default()
    }
}

/// A JSON-mode request (`{"type": "json_object"}`).
pub fn json_mode() -> Request {
    Request {
        response_format: Some(json!({"type": "json_object"})),
        ..Request::default()
    }
}

/// `template` compiled for a request with `tools`, with the default options.
pub fn compile_with_tools(template: &TemplateModel, tools: Vec<Value>) -> Constraint {
    compile(template, &with_tools(tools), &Options::default()).expect("compiles")
}

/// A weather tool: `city` (required), `days`, `unit` (`C` or `F`).
pub fn weather() -> Value {
    json!({"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["C", "F"]}},
        "required": ["city"]}}})
}

/// A template written here (none is vendored) whose delimiters have Unicode word assertions.
pub struct WordBoundaryTemplate {
    /// Its name in reports.
    pub name: &'static str,
    /// The template JSON.
    pub template: Value,
    /// `(field, text)`: texts the field's value must not hold (a delimiter the parser missed
    /// because a boundary did not hold would leave its text there).
    pub misread: Vec<(&'static str, &'static str)>,
}

/// The word-boundary templates: `\b`, `\m`, `\M` inside delimiters and at their edges.
pub fn word_boundary_templates() -> Vec<WordBoundaryTemplate> {
    vec![
        WordBoundaryTemplate {
            // Boundaries at the edges: before the reasoning open (the start of the text), before
            // its close (the reasoning's last character), around a call's open and close (the
            // text or call before, the JSON body after; the next call or the end after) and
            // around the implicit close (the end of the text after it).
            name: "wb-edges",
            template: json!({"start_anchor": "<s>", "fields": {
                "reasoning_content": {"open_pattern": "\\bTHINK:", "close_pattern": "\\bANSWER:"},
                "content": {"close_pattern": "\\bSTOP\\b"},
                "tool_calls": {"open_pattern": "\\mCALL\\M", "close_pattern": "\\bEND\\b",
                    "content": "json", "repeats": true,
                    "transform": {"type": "function", "function": "{content}"}}}}),
            misread: vec![
                ("content", "THINK:"),
                ("content", "ANSWER:"),
                ("content", "CALL"),
                ("content", "STOP"),
                ("reasoning_content", "ANSWER:"),
            ],
        },
        WordBoundaryTemplate {
            // MiniMax's call open (boundaries inside it only) after a `\bTHINK:` reasoning.
            name: "wb-invoke",
            template: json!({"start_anchor": "]~b]ai\n", "fields": {
                "reasoning_content": {"open_pattern": "\\bTHINK:", "close": "</think>"},
                "content": {"close_pattern": "\\s*(?:</minimax:tool_call>|\\[e~\\[)"},
                "tool_calls": {
                    "open_pattern": "\\s*<invoke\\b[^>]*?\\bname=\"(?P<name>[^\"]+)\">",
                    "close": "</invoke>", "repeats": true, "content": "json",
                    "transform": {"type": "function",
                        "function": {"name": "{name}", "arguments": "{content}"}}}}}),
            // Content may hold `<invoke` where no whole open follows; a missed open would
            // leave its call's close there.
            misread: vec![
                ("content", "THINK:"),
                ("content", "</invoke>"),
                ("reasoning_content", "</think>"),
            ],
        },
    ]
}

/// JSON-argument tools with nested objects, arrays, formats, patterns, anyOf and $ref.
pub fn rich() -> Vec<Value> {
    vec![
        json!({"type": "function", "function": {"name": "search_flights", "parameters": {
            "type": "object",
            "properties": {
                "origin": {"type": "string", "pattern": "[A-Z]{3}"},
                "date": {"type": "string", "format": "date"},
                "passengers": {"type": "object", "properties": {
                    "adults": {"type": "integer"}, "children": {"type": "integer"}},
                    "required": ["adults"]},
                "cabin": {"anyOf": [{"enum": ["economy", "business"]}, {"type": "null"}]},
                "max_price": {"type": "number"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "flexible": {"type": "boolean"}
            },
            "required": ["origin", "date", "passengers"]}}}),
        json!({"type": "function", "function": {"name": "create_event", "parameters": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "start": {"type": "string", "format": "date-time"},
                "attendees": {"type": "array", "items": {"$ref": "#/$defs/person"}},
                "id": {"type": "string", "format": "uuid"}
            },
            "required": ["title", "start"],
            "$defs": {"person": {"type": "object", "properties": {
                "name": {"type": "string"}, "email": {"type": "string"}},
                "required": ["name"]}}}}}),
    ]
}

/// Tools for XML parameters (one type per parameter, values as text).
pub fn xml_tools() -> Vec<Value> {
    vec![
        weather(),
        json!({"type": "function", "function": {"name": "set_alarm", "parameters": {
            "type": "object",
            "properties": {
                "hour": {"$ref": "#/$defs/hour"}, "minute": {"type": "integer"},
                "repeat": {"enum": [1, 2, 7]}, "label": {"type": "string"},
                "loud": {"type": "boolean"}, "volume": {"type": "number"},
                "days": {"type": "array", "items": {"type": "string"}},
                "snooze": {"type": "object", "properties": {"minutes": {"type": "integer"}},
                           "required": ["minutes"]}
            },
            "required": ["hour", "minute"],
            "$defs": {"hour": {"type": "integer"}}}}}),
    ]
}
