//! Times general-mode compiles of corpus files (`{"schema", "draft"}`, as the corpus runner
//! of bench-constrain reads them), each repeated (the fastest run is printed, as the least
//! disturbed by other load):
//! `cargo run --release -p constrain --example corpus_compile -- REPEAT FILE...`.
//! With `FINGERPRINT=1`, each line also holds a hash of the language (of its minimal
//! automaton, numbered breadth first over bytes), to compare two builds.
use constrain::json::{Draft, SchemaMode};
use constrain::template::{compile_schema, Options};

fn main() {
    let mut args = std::env::args().skip(1);
    let repeat: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let mut total = std::time::Duration::ZERO;
    let fingerprint = std::env::var("FINGERPRINT").is_ok();
    for path in args {
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // The draft key's digits: `draft-07`, `draft7`, `draft2020-12`, `2019-09`.
        let digits: String = file["draft"]
            .as_str()
            .unwrap_or_default()
            .chars()
            .filter(char::is_ascii_digit)
            .collect();
        let drafts = [
            ("4", Draft::Draft4),
            ("6", Draft::Draft6),
            ("7", Draft::Draft7),
        ];
        let later = [("201909", Draft::Draft2019), ("202012", Draft::Draft2020)];
        let draft = drafts
            .into_iter()
            .chain(later)
            .find(|(d, _)| *d == digits.trim_start_matches('0'))
            .map_or(Draft::default(), |(_, d)| d);
        let mut options = Options::default();
        options.json.mode = SchemaMode::General {
            closed: false,
            draft,
        };
        let mut out = String::new();
        let mut each = std::time::Duration::MAX;
        for _ in 0..repeat {
            let t = std::time::Instant::now();
            out = match compile_schema(Some(&file["schema"]), &options) {
                Ok(c) if fingerprint => format!(
                    "{} states, language {:016x}",
                    c.machine.table.len(),
                    language_hash(&c.machine.table)
                ),
                Ok(c) => format!("{} states", c.machine.table.len()),
                Err(e) => format!(
                    "error {}",
                    e.to_string().chars().take(80).collect::<String>()
                ),
            };
            each = each.min(t.elapsed());
        }
        total += each;
        println!("{each:?} {path}: {out}");
    }
    println!("total {total:?}");
}

/// A hash of the table's language: its minimal automaton, states numbered breadth first
/// over the bytes 0..=255 (independent of byte classes and of how the table was built).
fn language_hash(table: &constrain::dfa::Table) -> u64 {
    use std::hash::{Hash, Hasher};
    let minimal = table.clone().stored().minimize();
    let mut ids = std::collections::HashMap::from([(constrain::dfa::DEAD, 0u32)]);
    let mut order = vec![constrain::dfa::START];
    ids.insert(constrain::dfa::START, 1);
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    let mut i = 0;
    while i < order.len() {
        let s = order[i];
        i += 1;
        minimal.is_accepting(s).hash(&mut hasher);
        for b in 0..=255u8 {
            let t = minimal.next(s, b);
            let fresh = ids.len() as u32;
            let id = *ids.entry(t).or_insert_with(|| {
                order.push(t);
                fresh
            });
            id.hash(&mut hasher);
        }
    }
    hasher.finish()
}
