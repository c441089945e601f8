//! Prints the size and build time of the whole-response machine for the vendored templates
//! with no request, a tool, and JSON mode: `cargo run --release -p constrain --example sizes`.

use constrain::template::{compile, Options, Request};
use serde_json::{json, Value};

fn main() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates");
    let tools = vec![
        json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["C", "F"]}},
            "required": ["city"]}}}),
    ];
    let requests = [
        ("plain", Request::default()),
        (
            "tools",
            Request {
                tools: tools.clone(),
                ..Request::default()
            },
        ),
        (
            "json",
            Request {
                response_format: Some(json!({"type": "json_object"})),
                ..Request::default()
            },
        ),
    ];
    for name in [
        "smollm3",
        "qwen3",
        "hermes",
        "gpt-oss",
        "gemma-4",
        "qwen3-coder",
    ] {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("template");
        let value: Value = serde_json::from_str(&text).expect("JSON");
        let template = template_build::model::load(&value).expect("template loads");
        for (label, request) in &requests {
            let start = std::time::Instant::now();
            match compile(&template, request, &Options::default()) {
                Ok(c) => println!(
                    "{name:12} {label:6} {:>7} states {:>4} classes {:>9} bytes {:>10.1?}",
                    c.machine.table.len(),
                    c.machine.table.classes(),
                    c.machine.table.memory(),
                    start.elapsed()
                ),
                Err(e) => println!("{name:12} {label:6} error: {e}"),
            }
        }
    }
}
