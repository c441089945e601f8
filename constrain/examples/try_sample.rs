//! Samples outputs for one vendored template with a weather tool: `cargo run --release -p
//! constrain --example try_sample -- smollm3 20`.
mod common;

use std::sync::Arc;

use constrain::index::{TokenIndex, VocabIndex};
use constrain::sample::{SampleOptions, Sampler};
use constrain::vocab::Vocabulary;
use rand::SeedableRng;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "smollm3".into());
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let template = common::template(&name);
    let tools = vec![common::weather()];
    let t0 = std::time::Instant::now();
    let c = common::compile_with_tools(&template, tools);
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
