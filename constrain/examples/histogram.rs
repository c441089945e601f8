//! Which segment combinations the machine states of one template + tool request stand for.
mod common;

use serde_json::json;

fn main() {
    let name = std::env::args().nth(1).unwrap_or_else(|| "gpt-oss".into());
    let template = common::template(&name);
    let tools = vec![
        json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}),
    ];
    let c = common::compile_with_tools(&template, tools);
    let m = &c.machine;
    for (i, s) in m.graph.segments.iter().enumerate() {
        println!("seg {i} {} {} states", s.name, s.table.len());
    }
    let mut hist = std::collections::HashMap::new();
    for s in 1..m.table.len() as u32 {
        let key: Vec<String> = m
            .elements(s)
            .iter()
            .map(|e| m.graph.segments[e.0 as usize].name.clone())
            .collect();
        *hist.entry(key).or_insert(0usize) += 1;
    }
    let mut v: Vec<_> = hist.into_iter().collect();
    v.sort_by_key(|x| std::cmp::Reverse(x.1));
    for (k, n) in v.iter().take(10) {
        println!("{n} {k:?}");
    }
}
