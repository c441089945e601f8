//! Side-by-side benchmark of JSON-Schema token-mask engines on the same schemas and the same
//! vocabulary (tiktoken o200k_base): ours (`constrain`), llguidance and outlines-core.
//! See README.md for what is measured and how.
//!
//! ```text
//! cargo run --release --manifest-path bench-constrain/Cargo.toml -- [--limit N] [--cap SECS]
//!     [--engines ours,llguidance,outlines] [--seed S] [--out FILE] [--show N] [--jsts DIR]
//! ```
//!
//! The parent process runs each engine in a worker process (this binary with `--worker`),
//! one engine after another, and kills a worker whose schema passes the time cap.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bench_constrain::harness::{flag, tail};
use bench_constrain::stats::{avg, fmt_bytes, fmt_ns, median_i, percentile, u64s};
use bench_constrain::worker::{run_engine, Cap, Outcome, Spawn};
use bench_constrain::{alloc, engines, tools, vocab};
use serde_json::{json, Value};

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

const ENGINES: &[&str] = &["ours", "llguidance", "outlines"];
/// How many tool schemas the benchmark generates.
const TOOL_COUNT: usize = 220;
const TOOL_SEED: u64 = 7;

struct Args {
    limit: Option<usize>,
    cap: Duration,
    engines: Vec<String>,
    seed: u64,
    out: Option<PathBuf>,
    jsts: PathBuf,
    show: usize,
}

fn parse_args() -> Args {
    let mut a = Args {
        limit: None,
        cap: Duration::from_secs(10),
        engines: ENGINES.iter().map(|s| s.to_string()).collect(),
        seed: 1,
        out: None,
        jsts: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/jsts")),
        show: 6,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut val = || it.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--limit" => a.limit = Some(val().parse().expect("--limit N")),
            "--cap" => a.cap = Duration::from_secs_f64(val().parse().expect("--cap SECS")),
            "--engines" => a.engines = val().split(',').map(str::to_string).collect(),
            "--seed" => a.seed = val().parse().expect("--seed S"),
            "--out" => a.out = Some(PathBuf::from(val())),
            "--jsts" => a.jsts = PathBuf::from(val()),
            "--show" => a.show = val().parse().expect("--show N"),
            "-h" | "--help" => {
                println!(
                    "bench-constrain [--limit N] [--cap SECS] [--engines ours,llguidance,outlines] \
                     [--seed S] [--out FILE] [--jsts DIR] [--show N]\n  --limit N: at most N schemas from \
                     each set (suite, tools)\n  --cap SECS: time cap per schema and step \
                     (default 10)\n  --out FILE: raw per-schema results as JSON\n  --show N: refused \
                     outputs listed per engine (default 6)"
                );
                std::process::exit(0);
            }
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

/// A schema of the benchmark.
struct Schema {
    set: &'static str,
    name: String,
    schema: Value,
    invalid: Vec<Value>,
    valid: Vec<Value>,
}

fn suite_schemas(dir: &Path) -> Vec<Schema> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&f).expect("read")).expect("JSON");
        let file = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
        for (i, g) in groups.into_iter().enumerate() {
            let tests = g["tests"].as_array().cloned().unwrap_or_default();
            let pick = |valid: bool| -> Vec<Value> {
                tests
                    .iter()
                    .filter(|t| t["valid"].as_bool() == Some(valid))
                    .map(|t| t["data"].clone())
                    .collect()
            };
            out.push(Schema {
                set: "suite",
                name: format!("{file}#{i} {}", g["description"].as_str().unwrap_or("")),
                invalid: pick(false),
                valid: pick(true),
                schema: g["schema"].clone(),
            });
        }
    }
    out
}

fn tool_schemas() -> Vec<Schema> {
    let tools = tools::generate(TOOL_COUNT, TOOL_SEED);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/tools.json");
    let text = tools::to_file(&tools);
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, &text).expect("write schemas/tools.json");
        eprintln!("wrote {}", path.display());
    }
    tools
        .into_iter()
        .map(|(name, schema)| Schema {
            set: "tools",
            name,
            schema,
            invalid: Vec::new(),
            valid: Vec::new(),
        })
        .collect()
}

/// Runs `engine`'s worker (this binary) over the `n` jobs in `jobs`, each step capped: per job
/// the outcome, and the vocabulary preparation time (ns) and heap (bytes).
fn run(engine: &str, jobs: &Path, n: usize, cap: Duration) -> (Vec<Outcome>, (i64, i64)) {
    let exe = std::env::current_exe().expect("current exe");
    let spawn = Spawn {
        exe: &exe,
        engine,
        jobs,
        args: &[],
        stderr: std::env::var_os("BENCH_SLOW_US").is_some(),
    };
    let (outcomes, ready) = run_engine(&spawn, n, Cap::PerStep(cap));
    let at = |i: usize| ready.get(i).copied().unwrap_or(0);
    (outcomes, (at(0), at(1)))
}

// ---------------------------------------------------------------------------------------------
// Statistics.

/// One engine's numbers over a set of schemas.
#[derive(Default)]
struct Row {
    schemas: usize,
    compiled: usize,
    rejected: usize,
    compile_timeouts: usize,
    walk_timeouts: usize,
    crashed: usize,
    compile_ns: Vec<u64>,
    /// Per walk (0: first output, cold; 1: second output, same compiled schema).
    mask_ns: [Vec<u64>; 2],
    advance_ns: Vec<u64>,
    mem_compile: Vec<i64>,
    mem_walk: Vec<i64>,
    outputs: usize,
    refused: usize,
    eos_refused: usize,
}

fn row(outcomes: &[&Outcome]) -> Row {
    let mut r = Row {
        schemas: outcomes.len(),
        ..Row::default()
    };
    for o in outcomes {
        match o {
            Outcome::Rejected(_) => r.rejected += 1,
            Outcome::CompileTimeout => r.compile_timeouts += 1,
            Outcome::WalkTimeout { compile_ns } => {
                r.compiled += 1;
                r.walk_timeouts += 1;
                r.compile_ns.push(*compile_ns);
            }
            Outcome::Crashed => r.crashed += 1,
            Outcome::Done(v) => {
                r.compiled += 1;
                r.compile_ns.push(v["compile_ns"].as_u64().unwrap_or(0));
                r.mem_compile.push(v["mem_compile"].as_i64().unwrap_or(0));
                r.mem_walk.push(v["mem_walk"].as_i64().unwrap_or(0));
                for (w, times) in r.mask_ns.iter_mut().enumerate() {
                    let walk = &v["walks"][w];
                    times.extend(u64s(&walk["mask_ns"]));
                    r.advance_ns.extend(u64s(&walk["advance_ns"]));
                    r.outputs += 1;
                    if !walk["disallowed_at"].is_null() {
                        r.refused += 1;
                    } else if walk["eos_ok"] != true {
                        r.eos_refused += 1;
                    }
                }
            }
        }
    }
    r.compile_ns.sort_unstable();
    r.mask_ns.iter_mut().for_each(|v| v.sort_unstable());
    r.advance_ns.sort_unstable();
    r
}

fn print_table(title: &str, rows: &[(&str, Row)]) {
    println!("\n### {title}\n");
    println!(
        "| engine | compiled / rejected / timeouts (of N) | compile p50 | compile p99 | mask avg | mask p99 | mask avg / p99, 2nd output | advance avg | masks measured | memory median, after compile / after 1st output | outputs refused / EOS refused (of 2 per schema) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, r) in rows {
        let timeouts = if r.walk_timeouts > 0 || r.crashed > 0 {
            format!(
                "{} compile + {} walk{}",
                r.compile_timeouts,
                r.walk_timeouts,
                if r.crashed > 0 {
                    format!(" + {} crashed", r.crashed)
                } else {
                    String::new()
                }
            )
        } else {
            r.compile_timeouts.to_string()
        };
        let mut mc = r.mem_compile.clone();
        let mut mw = r.mem_walk.clone();
        println!(
            "| {name} | {} / {} / {} ({}) | {} | {} | {} | {} | {} / {} | {} | {} | {} / {} | {} / {} |",
            r.compiled,
            r.rejected,
            timeouts,
            r.schemas,
            fmt_ns(percentile(&r.compile_ns, 0.5)),
            fmt_ns(percentile(&r.compile_ns, 0.99)),
            fmt_ns(avg(&r.mask_ns[0])),
            fmt_ns(percentile(&r.mask_ns[0], 0.99)),
            fmt_ns(avg(&r.mask_ns[1])),
            fmt_ns(percentile(&r.mask_ns[1], 0.99)),
            fmt_ns(avg(&r.advance_ns)),
            r.mask_ns[0].len() + r.mask_ns[1].len(),
            fmt_bytes(median_i(&mut mc)),
            fmt_bytes(median_i(&mut mw)),
            r.refused,
            r.eos_refused,
        );
    }
}

// ---------------------------------------------------------------------------------------------

fn worker_main(args: &[String]) {
    let get = |name: &str| flag(args, name);
    let engine = get("--worker");
    let jobs = engines::read_jobs(&get("--jobs"));
    let start: usize = get("--start").parse().expect("--start");
    match engine.as_str() {
        "ours" => engines::ours(&jobs, start),
        "llguidance" => engines::llguidance(&jobs, start),
        "outlines" => engines::outlines(&jobs, start),
        other => panic!("unknown engine {other}"),
    }
}

fn write_jobs(path: &Path, schemas: &[&Schema], tokens: &[Value], seed: u64) {
    let list: Vec<Value> = schemas
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "name": s.name,
                "schema": s.schema,
                "tokens": tokens.get(i).cloned().unwrap_or(json!([[], []])),
                "invalid": s.invalid,
                "valid": s.valid,
                "seed": seed.wrapping_mul(1_000_003).wrapping_add(i as u64),
            })
        })
        .collect();
    std::fs::write(path, serde_json::to_string(&list).expect("JSON")).expect("write job file");
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.iter().any(|a| a == "--worker") {
        worker_main(&argv);
        return;
    }
    let args = parse_args();
    let started = Instant::now();

    // The schemas: suite groups whose schema is an object (boolean schemas have no JSON
    // object form to compile into), then the generated tools.
    let suite_all = suite_schemas(&args.jsts);
    let suite_total = suite_all.len();
    let mut suite: Vec<Schema> = suite_all
        .into_iter()
        .filter(|s| s.schema.is_object())
        .collect();
    let suite_objects = suite.len();
    let mut tools = tool_schemas();
    if let Some(n) = args.limit {
        suite.truncate(n);
        tools.truncate(n);
    }
    let all: Vec<&Schema> = suite.iter().chain(tools.iter()).collect();
    let tmp = std::env::temp_dir().join(format!("bench-constrain-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).expect("temp dir");

    // 1. Ours over every schema: which are in our subset, and the valid outputs.
    let jobs0 = tmp.join("ours.json");
    write_jobs(&jobs0, &all, &[], args.seed);
    eprintln!(
        "suite: {suite_total} groups, {suite_objects} with an object schema, {} used; tools: {}",
        suite.len(),
        tools.len()
    );
    let (ours_all, ours_setup) = run("ours", &jobs0, all.len(), args.cap);

    // Out-of-subset schemas (rejected by our compiler) leave the comparison.
    let mut kept: Vec<usize> = Vec::new();
    let mut out_of_subset: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ours_failed: Vec<(String, String)> = Vec::new();
    let mut ours_reasons: BTreeMap<String, usize> = BTreeMap::new();
    for (i, o) in ours_all.iter().enumerate() {
        match o {
            Outcome::Done(_) => kept.push(i),
            Outcome::Rejected(reason) => {
                *out_of_subset.entry(all[i].set).or_default() += 1;
                // The reason without its pointer: `schema/allOf: ...` -> `allOf: ...`.
                let short = reason
                    .split_once(": ")
                    .map_or(reason.as_str(), |(at, why)| {
                        if at.starts_with("schema") {
                            why
                        } else {
                            reason.as_str()
                        }
                    });
                *ours_reasons
                    .entry(short.chars().take(80).collect())
                    .or_default() += 1;
                if all[i].set == "tools" {
                    ours_failed.push((all[i].name.clone(), reason.clone()));
                }
            }
            other => ours_failed.push((all[i].name.clone(), format!("{other:?}"))),
        }
    }
    let kept_schemas: Vec<&Schema> = kept.iter().map(|&i| all[i]).collect();
    let kept_tokens: Vec<Value> = kept
        .iter()
        .map(|&i| match &ours_all[i] {
            Outcome::Done(v) => v["tokens"].clone(),
            _ => json!([[], []]),
        })
        .collect();
    let jobs1 = tmp.join("common.json");
    write_jobs(&jobs1, &kept_schemas, &kept_tokens, args.seed);

    let mut results: BTreeMap<String, Vec<Outcome>> = BTreeMap::new();
    let mut setups: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    results.insert(
        "ours".into(),
        kept.iter().map(|&i| ours_all[i].clone()).collect(),
    );
    setups.insert("ours".into(), ours_setup);
    for engine in args.engines.iter().filter(|e| e.as_str() != "ours") {
        let (o, s) = run(engine, &jobs1, kept.len(), args.cap);
        results.insert(engine.clone(), o);
        setups.insert(engine.clone(), s);
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let order: Vec<&str> = ENGINES
        .iter()
        .copied()
        .filter(|e| results.contains_key(*e))
        .collect();

    // Tables.
    println!(
        "## JSON-Schema token masks, o200k_base ({} tokens)\n",
        200_019
    );
    println!(
        "Schemas: {} JSON-Schema-Test-Suite groups in our subset (of {suite_total} groups, \
         {suite_objects} with an object schema, {} used; {} rejected by our compiler as outside \
         the subset) + {} generated tool schemas ({} rejected by our compiler). Time cap {} s \
         per schema and step.",
        kept_schemas.iter().filter(|s| s.set == "suite").count(),
        suite.len(),
        out_of_subset.get("suite").copied().unwrap_or(0),
        kept_schemas.iter().filter(|s| s.set == "tools").count(),
        out_of_subset.get("tools").copied().unwrap_or(0),
        args.cap.as_secs_f64()
    );
    // (title, set filter: None = every schema)
    let sets = [
        ("all schemas", None),
        ("suite schemas", Some("suite")),
        ("tool schemas", Some("tools")),
    ];
    for (title, set) in sets {
        let filter = |i: usize| set.is_none_or(|s| kept_schemas[i].set == s);
        let rows: Vec<(&str, Row)> = order
            .iter()
            .map(|e| {
                let picked: Vec<&Outcome> = results[*e]
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| filter(*i))
                    .map(|(_, o)| o)
                    .collect();
                (*e, row(&picked))
            })
            .collect();
        print_table(title, &rows);
    }
    // Same schemas for everyone: those every engine compiled and walked to the end.
    let common: Vec<usize> = (0..kept.len())
        .filter(|&i| {
            order.iter().all(|e| {
                matches!(&results[*e][i], Outcome::Done(v)
                    if v["walks"][0]["disallowed_at"].is_null()
                        && v["walks"][1]["disallowed_at"].is_null())
            })
        })
        .collect();
    let rows: Vec<(&str, Row)> = order
        .iter()
        .map(|e| {
            (
                *e,
                row(&common.iter().map(|&i| &results[*e][i]).collect::<Vec<_>>()),
            )
        })
        .collect();
    print_table(
        &format!(
            "only the {} schemas every engine compiled and walked to the end",
            common.len()
        ),
        &rows,
    );

    // Details.
    println!("\n### Details\n");
    for e in &order {
        let (t, b) = setups[*e];
        println!(
            "- {e}: vocabulary preparation (once, shared by all schemas; not in the numbers \
             above) {}, {}",
            fmt_ns(t as u64),
            fmt_bytes(b)
        );
    }
    let (mut checked, mut mutants, mut suite_valid, mut inconsistent, mut texts_invalid) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut no_oracle = 0usize;
    let mut accepted: Vec<String> = Vec::new();
    let mut valid_rejected: Vec<String> = Vec::new();
    let mut self_mem: Vec<i64> = Vec::new();
    let mut states: Vec<i64> = Vec::new();
    for (i, o) in results["ours"].iter().enumerate() {
        if let Outcome::Done(v) = o {
            // The texts listed under `key`, each after the schema's name.
            let name = &kept_schemas[i].name;
            let named = |key: &str| -> Vec<String> {
                let texts = v[key].as_array().into_iter().flatten();
                texts
                    .map(|a| format!("{name}: {}", a.as_str().unwrap_or("")))
                    .collect()
            };
            checked += v["invalid_checked"].as_u64().unwrap_or(0);
            mutants += v["invalid_mutants"].as_u64().unwrap_or(0);
            accepted.extend(named("invalid_accepted"));
            suite_valid += v["suite_valid"].as_u64().unwrap_or(0);
            valid_rejected.extend(named("suite_valid_rejected"));
            inconsistent += v["inconsistent"].as_u64().unwrap_or(0);
            texts_invalid += v["texts_invalid"].as_u64().unwrap_or(0);
            if v["oracle"] != true {
                no_oracle += 1;
            }
            self_mem.push(v["self_mem"].as_i64().unwrap_or(0));
            states.push(v["states"].as_i64().unwrap_or(0));
        }
    }
    println!(
        "- ours, invalid texts: {checked} checked token by token ({} suite `valid: false` data, \
         {mutants} edits of the valid outputs that the JSON parser or the value checker \
         rejects), {} accepted{}",
        checked - mutants,
        accepted.len(),
        if accepted.is_empty() {
            String::new()
        } else {
            format!(": {accepted:?}")
        }
    );
    println!(
        "- ours, suite `valid: true` data (compact JSON) rejected: {} of {suite_valid}{}",
        valid_rejected.len(),
        if valid_rejected.is_empty() {
            String::new()
        } else {
            format!(
                " (first ones: {:?})",
                &valid_rejected[..valid_rejected.len().min(8)]
            )
        }
    );
    println!(
        "- ours, generated valid outputs the value checker rejects: {texts_invalid} (schemas \
         without a checker: {no_oracle}); mask/advance inconsistencies: {inconsistent}"
    );
    println!(
        "- ours, self-reported memory (table + cached masks after the 1st output) median {}, \
         states median {}",
        fmt_bytes(median_i(&mut self_mem)),
        median_i(&mut states)
    );
    let mut reasons: Vec<(&String, &usize)> = ours_reasons.iter().collect();
    reasons.sort_by(|a, b| b.1.cmp(a.1));
    println!(
        "- ours rejected (outside the subset, left out for every engine): {}",
        reasons
            .iter()
            .map(|(r, n)| format!("{n}x {r:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (name, reason) in ours_failed.iter().take(10) {
        println!("- ours could not use {name}: {reason}");
    }
    let bpe = vocab::bpe("o200k_base");
    for e in order.iter().filter(|e| **e != "ours") {
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut refused: Vec<String> = Vec::new();
        for (i, o) in results[*e].iter().enumerate() {
            match o {
                Outcome::Rejected(r) => {
                    let short: String = r.chars().take(90).collect();
                    *reasons.entry(short).or_default() += 1;
                }
                Outcome::Done(v) => {
                    for w in 0..2 {
                        let Some(p) = v["walks"][w]["disallowed_at"].as_u64() else {
                            continue;
                        };
                        let p = p as usize;
                        let text = match &ours_all[kept[i]] {
                            Outcome::Done(o) => o["texts"][w].as_str().unwrap_or("").to_string(),
                            _ => String::new(),
                        };
                        let toks: Vec<u32> = u64s(&kept_tokens[i][w])
                            .into_iter()
                            .map(|t| t as u32)
                            .collect();
                        let decode = |ids: &[u32]| {
                            String::from_utf8_lossy(&bpe.decode_bytes(ids).unwrap_or_default())
                                .into_owned()
                        };
                        refused.push(format!(
                            "{}: refused {:?} after {:?} (output {:?})",
                            kept_schemas[i].name,
                            decode(&toks[p..p + 1]),
                            tail(&decode(&toks[..p]), 40),
                            text
                        ));
                    }
                }
                _ => {}
            }
        }
        for (r, n) in &reasons {
            println!("- {e} rejected {n}: {r}");
        }
        println!("- {e} refused outputs ({}), first ones:", refused.len());
        for r in refused.iter().take(args.show) {
            println!("  - {r}");
        }
    }
    println!(
        "\nRun time {:.1} s (2-core machine; engines run one after another).",
        started.elapsed().as_secs_f64()
    );

    if let Some(out) = &args.out {
        let raw: Vec<Value> = kept
            .iter()
            .enumerate()
            .map(|(j, &i)| {
                let mut m = serde_json::Map::new();
                m.insert("name".into(), json!(all[i].name));
                m.insert("set".into(), json!(all[i].set));
                for e in &order {
                    let v = match &results[*e][j] {
                        Outcome::Done(v) => {
                            let mut v = v.clone();
                            v["status"] = json!("done");
                            v
                        }
                        other => json!({"status": format!("{other:?}")}),
                    };
                    m.insert(e.to_string(), v);
                }
                Value::Object(m)
            })
            .collect();
        std::fs::write(out, serde_json::to_string(&raw).expect("JSON")).expect("write --out");
    }
}
