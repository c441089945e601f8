//! The slowest first mask computations of one corpus file (ours, general mode, o200k_base),
//! each timed again on a fresh index (minimum of five): where masks cost their time.
//!
//! `cargo run --release --manifest-path bench-constrain/Cargo.toml --example maskprof -- FILE`;
//! with `TOP=N` it lists the N slowest (6 unless told); with `PROF_STATE=N` it times state N's mask [`PROF_N`] times instead (`PROF_N=K`: K times; for a profiler);
//! with `WARM=1` as well, state N's mask is computed once and then `PROF_N` times again on
//! the same index (`allowed_uncached`: what it remembered about plain text kept);
//! with `COMPILE_ONLY=N` it compiles N times (at least once) before any vocabulary is loaded
//! and stops; with `PREPARE=1` it calls `template::prepare` first, as the corpus runner's
//! workers do.
use std::sync::Arc;
use std::time::Instant;

/// How many fresh masks `PROF_STATE` times.
const PROF_N: u32 = 1000;

fn main() {
    let path = std::env::args().nth(1).expect("FILE");
    let text = std::fs::read_to_string(&path).unwrap();
    let entry = bench_constrain::corpus::parse_entry(&text).unwrap();
    let options = entry.general_options();
    if std::env::var("PREPARE").is_ok() {
        // As the corpus runner's workers do before they report ready.
        constrain::template::prepare(&options).unwrap();
    }
    if let Ok(n) = std::env::var("COMPILE_ONLY") {
        // For a profiler: the compile alone, `n` times.
        for _ in 0..n.parse::<u32>().unwrap_or(1).max(1) {
            let t = Instant::now();
            let c = constrain::template::compile_schema(Some(&entry.schema), &options).unwrap();
            println!("compile {:?} states {}", t.elapsed(), c.machine.table.len());
        }
        return;
    }
    let (vocab, _eos) = bench_constrain::vocab::ours("o200k_base");
    let bpe = bench_constrain::vocab::bpe("o200k_base");
    let vindex = Arc::new(constrain::index::VocabIndex::new(vocab));
    let t = Instant::now();
    let c = constrain::template::compile_schema(Some(&entry.schema), &options).unwrap();
    println!("compile {:?} states {}", t.elapsed(), c.machine.table.len());
    let c = Arc::new(c);
    let index = constrain::index::TokenIndex::new(c.clone(), vindex.clone());
    if let Ok(st) = std::env::var("PROF_STATE") {
        let st: u32 = st.parse().unwrap();
        let n: u32 = std::env::var("PROF_N")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(PROF_N);
        if std::env::var("WARM").is_ok() {
            index.allowed(st);
            let t = Instant::now();
            for _ in 0..n {
                std::hint::black_box(index.allowed_uncached(st));
            }
            println!("state {st}, warm: {:?} per mask", t.elapsed() / n);
            return;
        }
        let t = Instant::now();
        for _ in 0..n {
            let fresh = constrain::index::TokenIndex::new(c.clone(), vindex.clone());
            fresh.allowed(st);
        }
        println!("state {st}: {:?} per mask", t.elapsed() / n);
        return;
    }
    let mut rows = Vec::new();
    for test in &entry.tests {
        let toks = bpe
            .encode_ordinary(&test.text)
            .into_iter()
            .collect::<Vec<u32>>();
        let mut state = index.start();
        let mut done = String::new();
        for &tok in &toks {
            let t = Instant::now();
            let m = index.allowed(state);
            let ns = t.elapsed().as_nanos();
            rows.push((
                ns,
                m.count(),
                state,
                done.chars()
                    .rev()
                    .take(50)
                    .collect::<String>()
                    .chars()
                    .rev()
                    .collect::<String>(),
            ));
            match index.advance(state, tok) {
                Some(constrain::index::Step::Next(s)) => state = s,
                _ => break,
            }
            done.push_str(&bpe.decode(&[tok as _]).unwrap_or_default());
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    let total: u128 = rows.iter().map(|r| r.0).sum();
    println!(
        "sum of first fills {} us over {} masks",
        total / 1000,
        rows.len()
    );
    let over = rows.iter().filter(|r| r.0 > 36_000).count();
    println!("masks over 36 us: {over}");
    let top = std::env::var("TOP")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(6);
    for r in rows.iter().take(top) {
        let min = (0..5)
            .map(|_| {
                let fresh = constrain::index::TokenIndex::new(c.clone(), vindex.clone());
                let t = Instant::now();
                fresh.allowed(r.2);
                t.elapsed().as_nanos()
            })
            .min()
            .unwrap();
        println!(
            "{:>9} ns (min of 5 {:>9})  allowed {:>6}  state {:>7}  after {:?}",
            r.0, min, r.1, r.2, r.3
        );
    }
}
