//! The three engines, each run in a worker process (`--worker ENGINE`) so that a schema past
//! the time cap can be abandoned by killing the process.
//!
//! A worker reads the job file (a JSON array of jobs), prepares the vocabulary once, prints
//! `READY ns bytes` (time and heap of the vocabulary preparation), then for each job from `--start` on prints lines the parent waits for with the
//! cap: `PREPARED k` (ours only: the valid text is generated), then `COMPILED k ns` or
//! `REJECTED k reason`, then `RESULT k {json}`.
//!
//! Per job an engine: compiles the schema (timed; memory = live heap after minus before),
//! then walks the job's tokens: at each position it computes the mask (timed), checks the
//! token is in it, advances with the token (timed separately); at the end it checks EOS is
//! allowed. Memory is measured again after the walk (compiled schema plus whatever the engine
//! cached while walking), while the compiled objects are still alive.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use crate::alloc;
use crate::harness::{
    ns, one_line, run_jobs, say, tail, timed, walk_llguidance, walk_ours, walk_tokens, Walk,
};
use crate::rng::Rng;
use crate::vocab;
use crate::walk;

/// One schema to run.
pub struct Job {
    pub schema: Value,
    /// Two valid outputs, as o200k_base tokens (empty for ours, which generates them): the
    /// first is walked right after compiling (cold caches), the second after it, on the same
    /// compiled schema (what a second request with the same schema sees).
    pub tokens: [Vec<u32>; 2],
    /// Suite data the schema must reject / accept (JSON-Schema-Test-Suite groups only).
    pub invalid: Vec<Value>,
    pub valid: Vec<Value>,
    pub seed: u64,
}

pub fn read_jobs(path: &str) -> Vec<Job> {
    let text = std::fs::read_to_string(path).expect("job file");
    let list: Vec<Value> = serde_json::from_str(&text).expect("job file is JSON");
    list.into_iter()
        .map(|j| Job {
            schema: j["schema"].clone(),
            tokens: [ids(&j["tokens"][0]), ids(&j["tokens"][1])],
            invalid: j["invalid"].as_array().cloned().unwrap_or_default(),
            valid: j["valid"].as_array().cloned().unwrap_or_default(),
            seed: j["seed"].as_u64().unwrap_or(0),
        })
        .collect()
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_u64)
                .map(|t| t as u32)
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// ours

pub fn ours(jobs: &[Job], start: usize) {
    use constrain::index::{Step, TokenIndex, VocabIndex};
    use constrain::template::{compile_schema, Options};
    use structured_outputs::schema::Strictness;

    let t = Instant::now();
    let before = alloc::live();
    let (vocab, eos) = vocab::ours("o200k_base");
    let vindex = Arc::new(VocabIndex::new(vocab));
    let setup_bytes = alloc::live() - before;
    let setup_ns = ns(t);
    // Tokenizing the generated outputs (not part of the engine).
    let bpe = vocab::bpe("o200k_base");
    say(format!("READY {setup_ns} {setup_bytes}"));
    let options = Options::default();

    // Whether `text` is accepted token by token (each token in the mask of its state and
    // advanced; EOS allowed at the end). Also counts mask/advance inconsistencies.
    let accepts = |index: &TokenIndex, text: &str, inconsistent: &mut usize| -> bool {
        let mut state = index.start();
        for t in bpe.encode_ordinary(text) {
            let in_mask = index.allowed(state).contains(t);
            let step = index.advance(state, t);
            if in_mask != step.is_some() {
                *inconsistent += 1;
            }
            match (in_mask, step) {
                (true, Some(Step::Next(s))) => state = s,
                _ => return false,
            }
        }
        index.allowed(state).contains(eos) && index.advance(state, eos) == Some(Step::End)
    };

    run_jobs(jobs, start, |k, job| {
        // Preparation (not measured): two valid outputs, from a first compilation.
        let prep = match compile_schema(Some(&job.schema), &options) {
            Ok(c) => c,
            Err(e) => {
                say(format!("REJECTED {k} {}", one_line(&e.to_string())));
                return;
            }
        };
        let mut rng = Rng::new(job.seed);
        let mut texts = Vec::new();
        for _ in 0..2 {
            let budget = rng.range(30, 250);
            texts.push(walk::instance(&prep.machine.table, &mut rng, budget));
        }
        drop(prep);
        let texts: Vec<String> = match texts.into_iter().collect::<Option<Vec<String>>>() {
            Some(t) => t,
            None => {
                say(format!(
                    "REJECTED {k} no valid UTF-8 instance from the walk"
                ));
                return;
            }
        };
        let tokens: Vec<Vec<u32>> = texts.iter().map(|t| bpe.encode_ordinary(t)).collect();
        say(format!("PREPARED {k}"));

        // Measured run: a fresh compilation and a cold mask cache.
        let base = alloc::live();
        let t0 = Instant::now();
        let constraint =
            Arc::new(compile_schema(Some(&job.schema), &options).expect("compiled once"));
        let index = TokenIndex::new(constraint.clone(), vindex.clone());
        let compile_ns = ns(t0);
        let mem_compile = alloc::live() - base;
        say(format!("COMPILED {k} {compile_ns}"));
        let cold = walk_ours(&index, eos, &tokens[0]);
        if let Some(limit) = std::env::var("BENCH_SLOW_US")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            for (i, &t) in cold.mask_ns.iter().enumerate() {
                if t > limit * 1000 {
                    let prefix = bpe
                        .decode(&tokens[0][..i.min(tokens[0].len())])
                        .unwrap_or_default();
                    eprintln!("SLOW {k} {} us at {:?}", t / 1000, tail(&prefix, 80));
                }
            }
        }
        let mem_walk = alloc::live() - base - cold.heap();
        let states = constraint.machine.table.len();
        let self_mem = constraint.machine.table.memory() + index.mask_memory();
        let masks_cached = (0..states as u32).filter(|&s| index.is_cached(s)).count();
        let warm = walk_ours(&index, eos, &tokens[1]);

        // The guarantee side: texts an independent checker (the structured-outputs value
        // checker, draft 2020-12 with formats) or the test suite calls invalid must be
        // rejected token by token.
        let oracle = structured_outputs::schema::compile(&job.schema, Strictness::Strict).ok();
        let mut inconsistent = 0usize;
        let mut invalid_checked = 0usize;
        let mut invalid_accepted: Vec<String> = Vec::new();
        let mut check_invalid = |candidate: String, inconsistent: &mut usize| {
            invalid_checked += 1;
            if accepts(&index, &candidate, inconsistent) {
                invalid_accepted.push(candidate);
            }
        };
        for data in &job.invalid {
            check_invalid(data.to_string(), &mut inconsistent);
        }
        let mut mutants = 0usize;
        for text in &texts {
            for m in walk::mutations(text, &mut rng, 8) {
                let invalid = match serde_json::from_str::<Value>(&m) {
                    Err(_) => true,
                    Ok(v) => oracle.as_ref().is_some_and(|o| !o.is_valid(&v)),
                };
                if invalid {
                    mutants += 1;
                    check_invalid(m, &mut inconsistent);
                }
            }
        }
        let mut suite_valid_rejected: Vec<String> = Vec::new();
        for data in &job.valid {
            let text = data.to_string();
            if !accepts(&index, &text, &mut inconsistent) {
                suite_valid_rejected.push(text);
            }
        }
        // The generated outputs must satisfy the independent checker too.
        let texts_invalid = texts
            .iter()
            .filter(|t| match serde_json::from_str::<Value>(t) {
                Err(_) => true,
                Ok(v) => oracle.as_ref().is_some_and(|o| !o.is_valid(&v)),
            })
            .count();
        let result = json!({
            "walks": [cold.to_json(), warm.to_json()],
            "compile_ns": compile_ns,
            "mem_compile": mem_compile,
            "mem_walk": mem_walk,
            "self_mem": self_mem,
            "states": states,
            "masks_cached": masks_cached,
            "texts": texts,
            "tokens": tokens,
            "texts_invalid": texts_invalid,
            "oracle": oracle.is_some(),
            "invalid_checked": invalid_checked,
            "invalid_mutants": mutants,
            "invalid_accepted": invalid_accepted,
            "suite_valid": job.valid.len(),
            "suite_valid_rejected": suite_valid_rejected,
            "inconsistent": inconsistent,
        });
        say(format!("RESULT {k} {result}"));
    });
}

// ---------------------------------------------------------------------------------------------
// llguidance

/// The schema with llguidance's compact-JSON options (no whitespace between tokens, `,` and
/// `:` separators), the language ours compiles by default. A boolean schema has no keywords
/// to add them to, so it becomes the object schema of the same meaning first (`true` is `{}`,
/// `false` is `{"not": {}}`).
pub fn llguidance_schema(schema: &Value) -> Value {
    let mut s = match schema {
        Value::Bool(true) => json!({}),
        Value::Bool(false) => json!({"not": {}}),
        other => other.clone(),
    };
    if let Value::Object(map) = &mut s {
        map.insert(
            "x-guidance".into(),
            json!({"whitespace_flexible": false, "item_separator": ",", "key_separator": ":"}),
        );
    }
    s
}

pub fn llguidance(jobs: &[Job], start: usize) {
    use llguidance::api::TopLevelGrammar;
    use llguidance::Matcher;

    let t = Instant::now();
    let before = alloc::live();
    let (factory, eos) = vocab::llguidance_factory("o200k_base");
    say(format!("READY {} {}", ns(t), alloc::live() - before));

    run_jobs(jobs, start, |k, job| {
        let schema = llguidance_schema(&job.schema);
        let base = alloc::live();
        let t0 = Instant::now();
        let parser = factory.create_parser(TopLevelGrammar::from_json_schema(schema));
        let mut matcher = match parser {
            Ok(p) => Matcher::new(Ok(p)),
            Err(e) => {
                say(format!("REJECTED {k} {}", one_line(&e.to_string())));
                return;
            }
        };
        let compile_ns = ns(t0);
        if let Some(e) = matcher.get_error() {
            say(format!("REJECTED {k} {}", one_line(&e)));
            return;
        }
        let mem_compile = alloc::live() - base;
        say(format!("COMPILED {k} {compile_ns}"));
        // The second request starts from a copy of the fresh matcher; copies share the lexer
        // caches (llguidance's own reuse path).
        let before_clone = alloc::live();
        let mut second = matcher.clone();
        let clone_bytes = alloc::live() - before_clone;
        let cold = walk_llguidance(&mut matcher, eos, &job.tokens[0]);
        let mem_walk = alloc::live() - base - cold.heap() - clone_bytes;
        let warm = walk_llguidance(&mut second, eos, &job.tokens[1]);
        let result = json!({
            "walks": [cold.to_json(), warm.to_json()],
            "compile_ns": compile_ns,
            "mem_compile": mem_compile,
            "mem_walk": mem_walk,
        });
        drop(matcher);
        drop(second);
        say(format!("RESULT {k} {result}"));
    });
}

// ---------------------------------------------------------------------------------------------
// outlines-core

pub fn outlines(jobs: &[Job], start: usize) {
    use outlines_core::prelude::{json_schema, Index, Vocabulary};

    let t = Instant::now();
    let before = alloc::live();
    let (words, eos) = vocab::token_words("o200k_base");
    let mut vocabulary = Vocabulary::new(eos);
    for (id, w) in words.iter().enumerate() {
        if !w.is_empty() && w[0] != toktrie::TokTrie::SPECIAL_TOKEN_MARKER {
            vocabulary
                .try_insert(w.clone(), id as u32)
                .expect("insert token");
        }
    }
    let n_words = words.len();
    drop(words);
    say(format!("READY {} {}", ns(t), alloc::live() - before));

    // The mask as a sampler applies it: a bitset over the vocabulary, filled from the index's
    // allowed tokens (what outlines' `write_mask_into` does).
    let walk_on = |index: &Index, mask: &mut Vec<u64>, tokens: &[u32]| -> Walk {
        walk_tokens(
            tokens,
            eos,
            &mut (index.initial_state(), mask),
            |(state, mask), tok| {
                let ((), t) = timed(|| {
                    mask.iter_mut().for_each(|x| *x = 0);
                    if let Some(it) = index.allowed_tokens_iter(state) {
                        for &id in it {
                            mask[id as usize / 64] |= 1 << (id % 64);
                        }
                    }
                });
                let mut ok = mask[tok as usize / 64] & (1 << (tok % 64)) != 0;
                if tok == eos {
                    ok &= index.is_final_state(state);
                }
                (ok, t)
            },
            |(state, _), tok| {
                let (next, t) = timed(|| index.next_state(state, &tok));
                match next {
                    Some(s) => {
                        *state = s;
                        (true, t)
                    }
                    None => (false, t),
                }
            },
        )
    };

    run_jobs(jobs, start, |k, job| {
        let mut mask = vec![0u64; n_words.div_ceil(64)];
        let base = alloc::live();
        let t0 = Instant::now();
        // Compact JSON: an empty whitespace pattern.
        let regex = match json_schema::regex_from_value(&job.schema, Some(""), None) {
            Ok(r) => r,
            Err(e) => {
                say(format!("REJECTED {k} {}", one_line(&e.to_string())));
                return;
            }
        };
        let index = match Index::new(&regex, &vocabulary) {
            Ok(i) => i,
            Err(e) => {
                say(format!("REJECTED {k} {}", one_line(&e.to_string())));
                return;
            }
        };
        let compile_ns = ns(t0);
        let mem_compile = alloc::live() - base;
        say(format!("COMPILED {k} {compile_ns}"));
        let cold = walk_on(&index, &mut mask, &job.tokens[0]);
        let mem_walk = alloc::live() - base - cold.heap();
        let warm = walk_on(&index, &mut mask, &job.tokens[1]);
        let result = json!({
            "walks": [cold.to_json(), warm.to_json()],
            "compile_ns": compile_ns,
            "mem_compile": mem_compile,
            "mem_walk": mem_walk,
            "regex_len": regex.len(),
            "states": index.transitions().len(),
        });
        drop(index);
        say(format!("RESULT {k} {result}"));
    });
}
