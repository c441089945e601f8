//! Compiles every schema of a corpus directory in name order in one process (ours, general
//! mode, as a corpus worker does), then all of them again, and prints one line per schema:
//! first compile ms, second compile ms, compiled, file. The difference is what the first
//! compile paid for the process-wide caches; the second is the schema's own cost.
//!
//! `cargo run --release --manifest-path bench-constrain/Cargo.toml --example coldwarm -- DIR`
use std::time::Instant;

fn main() {
    let dir = std::env::args().nth(1).expect("DIR");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut entries = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if let Ok(e) = bench_constrain::corpus::parse_entry(&text) {
            entries.push((f.file_name().unwrap().to_string_lossy().to_string(), e));
        }
    }
    let mut first = Vec::new();
    for (_, e) in &entries {
        let t = Instant::now();
        let ok = constrain::template::compile_schema(Some(&e.schema), &e.general_options()).is_ok();
        first.push((t.elapsed().as_secs_f64() * 1e3, ok));
    }
    for (k, (name, e)) in entries.iter().enumerate() {
        let t = Instant::now();
        let _ = constrain::template::compile_schema(Some(&e.schema), &e.general_options());
        let warm = t.elapsed().as_secs_f64() * 1e3;
        println!("{:.3}\t{:.3}\t{}\t{}", first[k].0, warm, first[k].1, name);
    }
}
