//! Compile cost of general mode on the JSON-Schema-Test-Suite: per group, the median of
//! `JSTS_REPEAT` (default 3) compiles, the machine's states and table bytes (without the
//! value tables shared with other schemas, [`constrain::dfa::Table::shared_memory`]); prints the
//! slowest groups, then p50/p99/max and memory percentiles.
//!
//! `cargo run --release -p constrain --example jsts_cost [-- TOP]`
//! (`JSTS_DIR`: the suite's `tests` folder, default ../shared/jsts-full/tests; `JSTS_FILTER`:
//! only groups whose name holds it; `JSTS_COPY`: values copied, not shared).
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use constrain::json::{Draft, JsonOptions, SchemaMode};
use constrain::template::{compile_schema, Options};
use serde_json::Value;

fn files(root: &Path) -> Vec<PathBuf> {
    let mut pending = vec![root.to_path_buf()];
    let mut out = Vec::new();
    while let Some(d) = pending.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                pending.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn main() {
    let top: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(15);
    let repeat: usize = std::env::var("JSTS_REPEAT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let suite = std::env::var("JSTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/jsts-full/tests")
        });
    let filter = std::env::var("JSTS_FILTER").ok();
    // JSTS_COPY: values copied at each place, as before they were shared.
    constrain::dfa::set_sharing(std::env::var("JSTS_COPY").is_err());
    let mut rows: Vec<(Duration, usize, usize, String)> = Vec::new();
    for (dir, draft) in [
        ("draft2020-12", Draft::Draft2020),
        ("draft7", Draft::Draft7),
        ("draft4", Draft::Draft4),
    ] {
        let options = Options {
            json: JsonOptions {
                mode: SchemaMode::General {
                    closed: false,
                    draft,
                },
                ..JsonOptions::default()
            },
            ..Options::default()
        };
        for path in files(&suite.join(dir)) {
            let groups: Vec<Value> =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for (i, g) in groups.iter().enumerate() {
                let name = format!(
                    "{dir}/{}#{i}",
                    path.strip_prefix(suite.join(dir)).unwrap().display()
                );
                if filter.as_ref().is_some_and(|f| !name.contains(f.as_str())) {
                    continue;
                }
                let mut times = Vec::new();
                let mut size = (0, 0);
                let mut ok = true;
                for _ in 0..repeat {
                    let t = Instant::now();
                    let c = compile_schema(Some(&g["schema"]), &options);
                    times.push(t.elapsed());
                    match c {
                        Ok(c) => {
                            // The machine's table (its one segment shares it); values
                            // shared with other schemas (cached readers) not counted.
                            let t = &c.machine.table;
                            size = (t.len(), t.memory() - t.shared_memory());
                        }
                        Err(_) => ok = false,
                    }
                }
                if !ok {
                    continue;
                }
                times.sort();
                rows.push((times[times.len() / 2], size.0, size.1, name));
            }
        }
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    for r in rows.iter().take(top) {
        println!("{:>10.2?} {:>7} states {:>9} bytes  {}", r.0, r.1, r.2, r.3);
    }
    let mut t: Vec<Duration> = rows.iter().map(|r| r.0).collect();
    t.sort();
    let mut m: Vec<usize> = rows.iter().map(|r| r.2).collect();
    m.sort();
    let q = |n: usize, p: f64| ((n as f64 - 1.0) * p).round() as usize;
    let n = t.len();
    println!(
        "{n} compiled: compile p50 {:.2?} p99 {:.2?} max {:.2?} mean {:.2?}; table bytes p50 {} p99 {} max {} mean {}",
        t[q(n, 0.5)],
        t[q(n, 0.99)],
        t[n - 1],
        t.iter().sum::<Duration>() / n as u32,
        m[q(n, 0.5)],
        m[q(n, 0.99)],
        m[n - 1],
        m.iter().sum::<usize>() / n
    );
}
