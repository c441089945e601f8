//! Every mask of a corpus directory's instances (ours, general mode, o200k_base), as the
//! corpus runner asks for them: average, p99, and the slowest first fills with their file
//! and the text before them.
//!
//! `cargo run --release --manifest-path bench-constrain/Cargo.toml --example maskdir -- DIR [TOP]`;
//! with `REPLAY=K` each file's masks are asked for K times in the same order, each time on
//! a fresh index, and the average and p99 are over each mask's least time (steadier on a
//! noisy machine).
use std::sync::Arc;
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("DIR");
    let top: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(40);
    let replay: usize = std::env::var("REPLAY")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let (vocab, _eos) = bench_constrain::vocab::ours("o200k_base");
    let bpe = bench_constrain::vocab::bpe("o200k_base");
    let t = Instant::now();
    let vindex = Arc::new(constrain::index::VocabIndex::new(vocab));
    eprintln!(
        "vocabulary index: {:?}, {} MiB of tries and token sets",
        t.elapsed(),
        vindex.trie_memory() >> 20
    );
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut all = Vec::new();
    // Per mask, the file it was asked for in (an index into `files`).
    let mut file_of: Vec<usize> = Vec::new();
    let mut rows = Vec::new();
    for (file_no, path) in files.iter().enumerate() {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(entry) = bench_constrain::corpus::parse_entry(&text) else {
            continue;
        };
        let options = entry.general_options();
        let Ok(c) = constrain::template::compile_schema(Some(&entry.schema), &options) else {
            continue;
        };
        let index_constraint = Arc::new(c);
        let index = constrain::index::TokenIndex::new(index_constraint.clone(), vindex.clone());
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let first = all.len();
        for test in &entry.tests {
            let mut state = index.start();
            let mut done = String::new();
            for tok in bpe.encode_ordinary(&test.text) {
                let cached = index.is_cached(state);
                let t = Instant::now();
                let m = index.allowed(state);
                let ns = t.elapsed().as_nanos() as u64;
                all.push(ns);
                file_of.push(file_no);
                if !cached {
                    let again = if ns > 40_000 {
                        (0..2)
                            .map(|_| {
                                let fresh = constrain::index::TokenIndex::new(
                                    index_constraint.clone(),
                                    vindex.clone(),
                                );
                                let t = Instant::now();
                                fresh.allowed(state);
                                t.elapsed().as_nanos() as u64
                            })
                            .min()
                            .unwrap_or(0)
                    } else {
                        0
                    };
                    let tail: String = done
                        .chars()
                        .rev()
                        .take(40)
                        .collect::<Vec<_>>()
                        .into_iter()
                        .rev()
                        .collect();
                    rows.push((ns, m.count(), name.clone(), tail, again, all.len() - 1));
                }
                match index.advance(state, tok) {
                    Some(constrain::index::Step::Next(s)) => state = s,
                    _ => break,
                }
                done.push_str(&bpe.decode(&[tok as _]).unwrap_or_default());
            }
        }
        // The same masks in the same order on fresh indexes: each mask's least time.
        for _ in 1..replay {
            let index = constrain::index::TokenIndex::new(index_constraint.clone(), vindex.clone());
            let mut k = first;
            for test in &entry.tests {
                let mut state = index.start();
                for tok in bpe.encode_ordinary(&test.text) {
                    let t = Instant::now();
                    index.allowed(state);
                    let ns = t.elapsed().as_nanos() as u64;
                    all[k] = all[k].min(ns);
                    k += 1;
                    match index.advance(state, tok) {
                        Some(constrain::index::Step::Next(s)) => state = s,
                        _ => break,
                    }
                }
            }
        }
    }
    // The files with the most masks at or past the p99 of all of them.
    let mut sorted = all.clone();
    sorted.sort_unstable();
    let cut = sorted.get(sorted.len() * 99 / 100).copied().unwrap_or(0);
    let mut past: std::collections::HashMap<usize, usize> = Default::default();
    for (&ns, &f) in all.iter().zip(&file_of) {
        if ns >= cut {
            *past.entry(f).or_default() += 1;
        }
    }
    let mut past: Vec<(usize, usize)> = past.into_iter().collect();
    past.sort_by_key(|&(f, n)| (std::cmp::Reverse(n), f));
    for (f, n) in past.iter().take(12) {
        println!("{n:>6} masks at or past the p99 in {}", files[*f].display());
    }
    let least = all.clone();
    all.sort_unstable();
    let avg = all.iter().sum::<u64>() as f64 / all.len().max(1) as f64;
    let p99 = all.get(all.len() * 99 / 100).copied().unwrap_or(0);
    println!(
        "{} masks, avg {:.2} us, p99 {:.1} us; {} first fills",
        all.len(),
        avg / 1000.0,
        p99 as f64 / 1000.0,
        rows.len()
    );
    let slow = rows.iter().filter(|r| r.0 > 40_000).count();
    let genuine = rows.iter().filter(|r| r.4 > 40_000).count();
    println!(
        "first fills over 40 us: {slow}, of which over 40 us again on a fresh index: {genuine}"
    );
    // With `BY_LEAST=1`, the first fills ordered by their least time over the replays
    // (what the p99 above counts), not by their time on a fresh index.
    let by_least = std::env::var("BY_LEAST").is_ok();
    rows.sort_by_key(|r| std::cmp::Reverse(if by_least { least[r.5] } else { r.4 }));
    for r in rows.iter().take(top) {
        println!(
            "{:>8} ns (again {:>8}, least {:>8})  allowed {:>6}  {:<50} {:?}",
            r.0, r.4, least[r.5], r.1, r.2, r.3
        );
    }
}
