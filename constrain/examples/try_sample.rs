//! Samples outputs for one vendored template with a weather tool: `cargo run --release -p
//! constrain --example try_sample -- smollm3 20`.
use std::sync::Arc;

use constrain::index::{TokenIndex, VocabIndex};
use constrain::sample::{SampleOptions, Sampler};
use constrain::template::{compile, Options, Request};
use constrain::vocab::Vocabulary;
use rand::SeedableRng;
use serde_json::{json, Value};

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "smollm3".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates");
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap())
            .unwrap();
    let template = template_build::model::load(&value).unwrap();
    let tools = vec![
        json!({"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["C", "F"]}},
            "required": ["city"]}}}),
    ];
    let t0 = std::time::Instant::now();
    let c = compile(
        &template,
        &Request {
            tools,
            ..Request::default()
        },
        &Options::default(),
    )
    .unwrap();
    let t1 = std::time::Instant::now();
    let vocab = Vocabulary::builtin(if name == "gpt-oss" {
        "o200k_harmony"
    } else {
        "o200k_base"
    })
    .unwrap();
    let t2 = std::time::Instant::now();
    let index = TokenIndex::new(Arc::new(c), Arc::new(VocabIndex::new(vocab)));
    let t3 = std::time::Instant::now();
    let sampler = Sampler::new(&index, SampleOptions::default());
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    let mut total = 0;
    for _ in 0..n {
        let s = sampler.sample(&mut rng);
        total += s.tokens.len();
        println!(
            "{} {} {:?}",
            s.complete,
            s.refused,
            String::from_utf8_lossy(&s.text)
        );
    }
    eprintln!(
        "compile {:?} vocab {:?} index {:?} sampling {:?} for {total} tokens",
        t1 - t0,
        t2 - t1,
        t3 - t2,
        t3.elapsed()
    );
}
