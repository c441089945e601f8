//! The corpus runner: every `*.json` file of a directory in the JSONSchemaBench/MaskBench
//! shape through ours and llguidance, instance by instance, token by token
//! (`bench_constrain::corpus`; bench-constrain/README.md, "Corpus runner").
//!
//! ```text
//! cargo run --release --manifest-path bench-constrain/Cargo.toml --bin corpus -- --dir DIR
//!     [--engines ours,llguidance] [--schema-mode general|strict] [--vocab o200k_base]
//!     [--cap SECS] [--out FILE] [--show N]
//! ```

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bench_constrain::corpus::{self, summary, Config, SchemaMode};

const USAGE: &str = "corpus --dir DIR [--engines ours,llguidance] [--schema-mode general|strict] \
[--vocab o200k_base] [--cap SECS] [--out FILE] [--show N]
  --dir DIR: the corpus, every *.json file in it ({\"schema\", \"tests\": [{\"data\", \"valid\"}]})
  --engines: which engines (default ours,llguidance)
  --schema-mode: how ours reads schemas: general (default; JSON Schema, objects open unless
    additionalProperties is false, the file's \"draft\" key as default draft) or strict (the
    structured-outputs subset)
  --vocab: o200k_base (default), cl100k_base or o200k_harmony
  --cap SECS: cap on one schema's compile and walks together, per engine (default 10)
  --out FILE: per-schema results as JSON
  --show N: wrong verdicts listed per engine (default 10)";

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.iter().any(|a| a == "--worker") {
        corpus::workers::main(&argv);
        return;
    }
    let mut dir = None;
    let mut config = Config {
        dir: PathBuf::new(),
        engines: corpus::ENGINES.iter().map(|s| s.to_string()).collect(),
        vocab: "o200k_base".into(),
        cap: Duration::from_secs(10),
        schema_mode: SchemaMode::General,
        exe: std::env::current_exe().expect("current exe"),
    };
    let mut out = None;
    let mut show = 10;
    let mut it = argv.iter().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || {
            it.next().cloned().unwrap_or_else(|| {
                eprintln!("{arg} needs a value\n{USAGE}");
                std::process::exit(2)
            })
        };
        match arg.as_str() {
            "--dir" => dir = Some(PathBuf::from(val())),
            "--engines" => config.engines = val().split(',').map(str::to_string).collect(),
            "--schema-mode" => {
                let name = val();
                config.schema_mode = SchemaMode::parse(&name).unwrap_or_else(|| {
                    eprintln!("unknown schema mode {name} (general, strict)\n{USAGE}");
                    std::process::exit(2)
                })
            }
            "--vocab" => config.vocab = val(),
            "--cap" => config.cap = Duration::from_secs_f64(val().parse().expect("--cap SECS")),
            "--out" => out = Some(PathBuf::from(val())),
            "--show" => show = val().parse().expect("--show N"),
            "-h" | "--help" => {
                println!("{USAGE}");
                return;
            }
            other => {
                eprintln!("unknown argument {other}\n{USAGE}");
                std::process::exit(2)
            }
        }
    }
    let Some(dir) = dir else {
        eprintln!("--dir is required\n{USAGE}");
        std::process::exit(2)
    };
    config.dir = dir;
    if let Some(bad) = config
        .engines
        .iter()
        .find(|e| !corpus::ENGINES.contains(&e.as_str()))
    {
        eprintln!("unknown engine {bad} (ours, llguidance)");
        std::process::exit(2)
    }
    let started = Instant::now();
    let run = corpus::run(&config).unwrap_or_else(|e| {
        eprintln!("{}: {e}", config.dir.display());
        std::process::exit(1)
    });
    if let Some(out) = out {
        let json = serde_json::to_string(&summary::to_json(&run)).expect("JSON");
        std::fs::write(&out, json)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", out.display()));
    }
    eprintln!("run time {:.1} s", started.elapsed().as_secs_f64());
    print!("{}", summary::report(&run, show));
}
