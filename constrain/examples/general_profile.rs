//! Times general-mode compiles of a few schemas (`cargo run --release -p constrain --example general_profile`).
use constrain::json::{JsonOptions, SchemaMode};
use constrain::template::{compile_schema, Options};
use serde_json::json;

fn main() {
    let options = Options {
        json: JsonOptions {
            mode: SchemaMode::general(),
            ..JsonOptions::default()
        },
        ..Options::default()
    };
    // PROFILE_COPY: values copied at each place, not shared.
    constrain::dfa::set_sharing(std::env::var("PROFILE_COPY").is_err());
    if let Ok(text) = std::env::var("PROFILE_SCHEMA") {
        let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut options = options;
        if std::env::var("PROFILE_CLOSED").is_ok() {
            options.json.mode = SchemaMode::General {
                closed: true,
                draft: constrain::json::Draft::Draft2020,
            };
        }
        let t = std::time::Instant::now();
        let mut states = 0;
        for _ in 0..20 {
            states = compile_schema(Some(&schema), &options)
                .unwrap()
                .machine
                .table
                .len();
        }
        println!("{:?} per compile, {states} states", t.elapsed() / 20);
        return;
    }
    if std::env::var("SIZES").is_ok() {
        let l = constrain::dfa::Limits::default();
        let any = constrain::numeric::NumberSpec::any().table(&l).unwrap();
        println!("numbers: {} states", any.len());
        for depth in 0..4 {
            let r = constrain::json::general_value_table(depth, 0, &l).unwrap();
            let s = constrain::json::any_value_table(depth, 0, &l).unwrap();
            println!(
                "reader depth {depth}: general {} strict {}",
                r.len(),
                s.len()
            );
        }
        return;
    }
    for schema in [
        json!({"type": "integer"}),
        json!({}),
        json!({"type": "object", "properties": {"foo": {"type": "string"}}}),
        json!({"properties": {"foo": {}}}),
        json!({"minLength": 2}),
        json!({"items": {"type": "integer"}}),
        json!({"anyOf": [{"type": "integer"}, {"minimum": 2}]}),
    ] {
        for _ in 0..2 {
            let t = std::time::Instant::now();
            let c = compile_schema(Some(&schema), &options).unwrap();
            let whole = t.elapsed();
            let t = std::time::Instant::now();
            let l = constrain::json::SchemaLanguage::new(&schema, options.json)
                .compile_language()
                .unwrap();
            let hir_time = t.elapsed();
            let table = l.table(options.json, &options.limits).unwrap();
            println!(
                "{whole:>10.2?} (hir {hir_time:>8.2?}, table {:>8.2?}) {:>6} states  {schema}",
                t.elapsed(),
                table.len()
            );
            let _ = c;
        }
    }
}

#[allow(dead_code)]
fn parts() {}
