//! Times the first mask of every state along a valid output of a tool schema and prints the
//! slowest ones with the text that led there: `cargo run --release -p constrain --example
//! slow_masks`.
use std::sync::Arc;

use constrain::index::{Step, TokenIndex, VocabIndex};
use constrain::template::{compile_schema, Options};
use constrain::vocab::Vocabulary;
use serde_json::json;

fn main() {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let schema = json!({"type": "object", "properties": {
        "title": {"type": "string"}, "count": {"type": "integer"}, "price": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}}, "ok": {"type": "boolean"}},
        "required": ["title"]});
    let index = TokenIndex::new(
        Arc::new(compile_schema(Some(&schema), &Options::default()).unwrap()),
        vocab.clone(),
    );
    let text = r#"{"title":"Weekly planning meeting with the team","count":12,"price":3.75,"tags":["work","planning"],"ok":true}"#;
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let mut state = index.start();
    let mut done = String::new();
    let mut times = Vec::new();
    for t in bpe.encode_ordinary(text) {
        let start = std::time::Instant::now();
        let mask = index.allowed(state);
        let us = start.elapsed().as_micros();
        times.push((us, done.clone(), mask.count()));
        match index.advance(state, t) {
            Some(Step::Next(n)) => state = n,
            other => panic!("{other:?}"),
        }
        done.push_str(&String::from_utf8_lossy(vocab.vocab().token(t)));
    }
    times.sort_by_key(|t| std::cmp::Reverse(t.0));
    for (us, before, count) in times.iter().take(8) {
        println!("{us:>6} us  {count:>6} allowed  after {before:?}");
    }
}
