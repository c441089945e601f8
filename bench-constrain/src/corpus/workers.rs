//! The corpus runner's engine workers (`corpus --worker ENGINE --jobs FILE --start K --vocab
//! NAME --schema-mode general|strict`): per job, compile the schema alone (timed, as the benchmark times it), then walk
//! every instance's tokens from the start state (each mask timed; `crate::harness`).
//!
//! Lines: `READY`, then per job `COMPILED k ns` or `REJECTED k reason`, then `RESULT k
//! {"compile_ns", "walks": [{"mask_ns", "advance_ns", "disallowed_at", "eos_ok"}, ...]}`, one
//! walk per instance in the job's order.

use std::sync::Arc;

use serde_json::{json, Value};

use constrain::json::Draft;

use crate::corpus::SchemaMode;
use crate::harness::{flag, one_line, run_jobs, say, timed, walk_llguidance, walk_ours, Walk};
use crate::vocab;

/// One schema and the tokens of each of its instances.
pub struct Job {
    pub schema: Value,
    /// The file's draft (its `draft` key), the default draft of ours' general mode.
    pub draft: Option<Draft>,
    pub tokens: Vec<Vec<u32>>,
}

impl Job {
    pub fn to_json(&self) -> Value {
        let draft = self.draft.map(|d| format!("{d:?}"));
        json!({"schema": self.schema, "draft": draft, "tokens": self.tokens})
    }

    fn from_json(v: &Value) -> Self {
        let tokens = v["tokens"].as_array().expect("job tokens");
        let draft = v["draft"].as_str().map(|d| {
            *[
                Draft::Draft4,
                Draft::Draft6,
                Draft::Draft7,
                Draft::Draft2019,
                Draft::Draft2020,
            ]
            .iter()
            .find(|x| format!("{x:?}") == d)
            .expect("a draft name")
        });
        Self {
            schema: v["schema"].clone(),
            draft,
            tokens: tokens
                .iter()
                .map(|t| {
                    crate::stats::u64s(t)
                        .into_iter()
                        .map(|id| id as u32)
                        .collect()
                })
                .collect(),
        }
    }
}

/// The worker's entry point: `args` are the process arguments.
pub fn main(args: &[String]) {
    let get = |name: &str| flag(args, name);
    let text = std::fs::read_to_string(get("--jobs")).expect("job file");
    let list: Vec<Value> = serde_json::from_str(&text).expect("job file is JSON");
    drop(text);
    let jobs: Vec<Job> = list.iter().map(Job::from_json).collect();
    drop(list);
    let start: usize = get("--start").parse().expect("--start");
    let vocab = get("--vocab");
    let mode = SchemaMode::parse(&get("--schema-mode")).expect("--schema-mode general|strict");
    match get("--worker").as_str() {
        "ours" => ours(&jobs, start, &vocab, mode),
        "llguidance" => llguidance(&jobs, start, &vocab),
        other => panic!("unknown engine {other}"),
    }
}

/// Prints `COMPILED` and then the `RESULT` with one walk per instance (`walk(tokens)`).
fn walk_all(k: usize, compile_ns: u64, job: &Job, mut walk: impl FnMut(&[u32]) -> Walk) {
    say(format!("COMPILED {k} {compile_ns}"));
    let walks: Vec<Value> = job.tokens.iter().map(|t| walk(t).to_json()).collect();
    say(format!(
        "RESULT {k} {}",
        json!({"compile_ns": compile_ns, "walks": walks})
    ));
}

/// Ours: `compile_schema` (the schema alone, compact JSON) in `mode` plus a `TokenIndex` on
/// the shared vocabulary index; every instance walks the same index, so masks cached by one
/// instance serve the next (what requests with the same schema see).
fn ours(jobs: &[Job], start: usize, vocab: &str, mode: SchemaMode) {
    use constrain::index::{TokenIndex, VocabIndex};
    use constrain::json;
    use constrain::template::{compile_schema, Options};

    let (vocab, eos) = vocab::ours(vocab);
    let vindex = Arc::new(VocabIndex::new(vocab));
    if mode == SchemaMode::General {
        // The process-wide readers, built at start-up as a serving stack would (before
        // READY, like the vocabulary; the first schema would pay for them otherwise).
        let mut options = Options::default();
        options.json.mode = json::SchemaMode::general();
        if let Err(e) = constrain::template::prepare(&options) {
            eprintln!("prepare: {e}");
        }
    }
    say("READY".into());
    run_jobs(jobs, start, |k, job| {
        let mut options = Options::default();
        if mode == SchemaMode::General {
            options.json.mode = json::SchemaMode::General {
                closed: false,
                draft: job.draft.unwrap_or_default(),
            };
        }
        let (compiled, compile_ns) = timed(|| {
            compile_schema(Some(&job.schema), &options)
                .map(|c| TokenIndex::new(Arc::new(c), vindex.clone()))
        });
        match compiled {
            Ok(index) => walk_all(k, compile_ns, job, |t| walk_ours(&index, eos, t)),
            Err(e) => say(format!("REJECTED {k} {}", one_line(&e.to_string()))),
        }
    });
}

/// llguidance: its JSON-schema grammar with compact separators
/// ([`crate::engines::llguidance_schema`]) and a `Matcher`; every instance walks a clone of
/// the fresh matcher (clones share the lexer caches, llguidance's own reuse path).
fn llguidance(jobs: &[Job], start: usize, vocab: &str) {
    use llguidance::api::TopLevelGrammar;
    use llguidance::Matcher;

    let (factory, eos) = vocab::llguidance_factory(vocab);
    say("READY".into());
    run_jobs(jobs, start, |k, job| {
        let grammar =
            TopLevelGrammar::from_json_schema(crate::engines::llguidance_schema(&job.schema));
        let (matcher, compile_ns) = timed(|| {
            factory
                .create_parser(grammar)
                .map(|p| Matcher::new(Ok(p)))
                .map_err(|e| e.to_string())
                .and_then(|m| match m.get_error() {
                    Some(e) => Err(e),
                    None => Ok(m),
                })
        });
        match matcher {
            Ok(fresh) => walk_all(k, compile_ns, job, |t| {
                walk_llguidance(&mut fresh.clone(), eos, t)
            }),
            Err(e) => say(format!("REJECTED {k} {}", one_line(&e))),
        }
    });
}
