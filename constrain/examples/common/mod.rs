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
