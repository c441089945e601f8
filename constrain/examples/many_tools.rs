//! Machine size and build time as the number of tools grows, per template:
//! `cargo run --release -p constrain --example many_tools [TEMPLATE...]` (default: smollm3,
//! gpt-oss, qwen3-coder) with 1, 10, 50 and 128 tools taken from the benchmark's tool schemas
//! (`FLAT=1`: a two-property tool each; `SLACK=N`: `Options::delimiter_slack`).
mod common;

use constrain::template::{compile, Options};
use serde_json::{json, Value};

fn main() {
    let mut names: Vec<String> = std::env::args().skip(1).collect();
    if names.is_empty() {
        names = vec!["smollm3".into(), "gpt-oss".into(), "qwen3-coder".into()];
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("bench-constrain/schemas/tools.json")).unwrap(),
    )
    .unwrap();
    // XML parameters take one plain type each: a flat schema for qwen3-coder.
    let flat = |i: usize| {
        json!({"type": "function", "function": {"name": format!("tool_{i}"), "parameters": {
            "type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"]}}})
    };
    // FLAT=1: the flat two-property tool for every template.
    let flat_all = std::env::var_os("FLAT").is_some();
    for name in &names {
        let template = common::template(name);
        for n in [1usize, 10, 50, 128] {
            let list: Vec<Value> = (0..n)
                .map(|i| {
                    if flat_all || name == "qwen3-coder" || name == "seed-oss" {
                        flat(i)
                    } else {
                        let t = &tools[i % tools.len()];
                        json!({"type": "function", "function": {
                            "name": format!("{}_{i}", t["name"].as_str().unwrap()),
                            "parameters": t["parameters"]}})
                    }
                })
                .collect();
            let request = common::with_tools(list);
            let t = std::time::Instant::now();
            let mut options = Options::default();
            if let Some(slack) = std::env::var("SLACK").ok().and_then(|s| s.parse().ok()) {
                options.delimiter_slack = slack;
            }
            match compile(&template, &request, &options) {
                Ok(c) => {
                    let elapsed = t.elapsed();
                    let states = c.machine.table.len();
                    let pairs: usize = (0..states as u32)
                        .map(|s| c.machine.elements(s).len())
                        .sum();
                    println!(
                        "{name:<12} {n:>4} tools {states:>7} states {elapsed:>8.1?} ({:.1} pairs per state)",
                        pairs as f64 / states as f64
                    )
                }
                Err(e) => println!(
                    "{name:<12} {n:>4} tools error after {:.1?}: {e}",
                    t.elapsed()
                ),
            }
        }
    }
}
