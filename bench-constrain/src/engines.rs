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

use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{json, Value};

use crate::alloc;
use crate::rng::Rng;
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

fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// What a walk measured.
#[derive(Default)]
struct Walk {
    mask_ns: Vec<u64>,
    advance_ns: Vec<u64>,
    /// First position whose token the engine does not allow (mask or advance).
    disallowed_at: Option<usize>,
    /// EOS allowed after the last token.
    eos_ok: bool,
}

impl Walk {
    /// Heap bytes of the recorded times (subtracted from memory measurements).
    fn heap(&self) -> isize {
        ((self.mask_ns.capacity() + self.advance_ns.capacity()) * 8) as isize
    }

    fn with_capacity(n: usize) -> Self {
        Self {
            mask_ns: Vec::with_capacity(n + 1),
            advance_ns: Vec::with_capacity(n),
            disallowed_at: None,
            eos_ok: false,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "mask_ns": self.mask_ns,
            "advance_ns": self.advance_ns,
            "disallowed_at": self.disallowed_at,
            "eos_ok": self.eos_ok,
        })
    }
}

/// Walks `tokens` from the engine state `state`: per position `mask(state, token)` computes
/// the mask (timed) and says whether the token is in it, `advance(state, token)` moves on
/// (timed) and says whether it could; at the end `mask(state, eos)` says whether EOS is
/// allowed.
fn walk_tokens<S>(
    tokens: &[u32],
    eos: u32,
    state: &mut S,
    mut mask: impl FnMut(&mut S, u32) -> (bool, u64),
    mut advance: impl FnMut(&mut S, u32) -> (bool, u64),
) -> Walk {
    let mut w = Walk::with_capacity(tokens.len());
    for (i, &tok) in tokens.iter().enumerate() {
        let (in_mask, t) = mask(state, tok);
        w.mask_ns.push(t);
        if !in_mask {
            w.disallowed_at = Some(i);
            return w;
        }
        let (ok, t) = advance(state, tok);
        w.advance_ns.push(t);
        if !ok {
            w.disallowed_at = Some(i);
            return w;
        }
    }
    let (in_mask, t) = mask(state, eos);
    w.mask_ns.push(t);
    w.eos_ok = in_mask;
    w
}

fn ns(t: Instant) -> u64 {
    t.elapsed().as_nanos() as u64
}

/// `f()` and the nanoseconds it took.
fn timed<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let t0 = Instant::now();
    let out = f();
    (out, ns(t0))
}

/// Runs `per_job` for jobs `start..`, turning a panic into a rejection.
fn run_jobs(jobs: &[Job], start: usize, mut per_job: impl FnMut(usize, &Job)) {
    for (k, job) in jobs.iter().enumerate().skip(start) {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| per_job(k, job)));
        if let Err(e) = r {
            let msg = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            say(format!("REJECTED {k} panic: {}", one_line(&msg)));
        }
    }
}

fn one_line(s: &str) -> String {
    let s: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    s.chars().take(300).collect()
}

// ---------------------------------------------------------------------------------------------
// ours

pub fn ours(jobs: &[Job], start: usize) {
    use constrain::index::{Step, TokenIndex, VocabIndex};
    use constrain::template::{compile_schema, Options};
    use constrain::vocab::Vocabulary;
    use structured_outputs::schema::Strictness;

    let t = Instant::now();
    let before = alloc::live();
    let vocab = Vocabulary::builtin("o200k_base").expect("o200k_base");
    let eos = vocab.eos()[0];
    let vindex = Arc::new(VocabIndex::new(vocab));
    let setup_bytes = alloc::live() - before;
    let setup_ns = ns(t);
    // Tokenizing the generated outputs (not part of the engine).
    let bpe = tiktoken_rs::o200k_base().expect("o200k_base");
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

    // One walk over `tokens` on `index` (from its start).
    let walk_on = |index: &TokenIndex, tokens: &[u32]| -> Walk {
        walk_tokens(
            tokens,
            eos,
            &mut index.start(),
            |&mut state, tok| {
                let (mask, t) = timed(|| index.allowed(state));
                let ok = if tok == eos {
                    mask.contains(eos) && index.is_accepting(state)
                } else {
                    mask.contains(tok)
                };
                (ok, t)
            },
            |state, tok| {
                let (step, t) = timed(|| index.advance(*state, tok));
                match step {
                    Some(Step::Next(s)) => {
                        *state = s;
                        (true, t)
                    }
                    _ => (false, t),
                }
            },
        )
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
        let cold = walk_on(&index, &tokens[0]);
        if let Some(limit) = std::env::var("BENCH_SLOW_US")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
        {
            for (i, &t) in cold.mask_ns.iter().enumerate() {
                if t > limit * 1000 {
                    let prefix = bpe
                        .decode(&tokens[0][..i.min(tokens[0].len())])
                        .unwrap_or_default();
                    eprintln!("SLOW {k} {} us at {:?}", t / 1000, crate::tail(&prefix, 80));
                }
            }
        }
        let mem_walk = alloc::live() - base - cold.heap();
        let states = constraint.machine.table.len();
        let self_mem = constraint.machine.table.memory() + index.mask_memory();
        let masks_cached = (0..states as u32).filter(|&s| index.is_cached(s)).count();
        let warm = walk_on(&index, &tokens[1]);

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

/// The tokenizer environment llguidance asks for: the o200k_base token bytes in a `TokTrie`
/// (special tokens marked with 0xFF, as toktrie expects) and tiktoken-rs for tokenizing text.
struct Tiktoken {
    trie: toktrie::TokTrie,
    bpe: tiktoken_rs::CoreBPE,
}

impl toktrie::TokenizerEnv for Tiktoken {
    fn tok_trie(&self) -> &toktrie::TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, s: &[u8]) -> Vec<u32> {
        match std::str::from_utf8(s) {
            Ok(text) => self.bpe.encode_ordinary(text),
            Err(_) => self.trie.greedy_tokenize(s),
        }
    }
}

/// The o200k_base vocabulary as token byte strings (specials prefixed by 0xFF) and its EOS.
fn o200k_words() -> (Vec<Vec<u8>>, u32) {
    let vocab = constrain::vocab::Vocabulary::builtin("o200k_base").expect("o200k_base");
    let words = (0..vocab.len() as u32)
        .map(|id| {
            let bytes = vocab.token(id);
            if vocab.is_special(id) && !bytes.is_empty() {
                let mut w = vec![toktrie::TokTrie::SPECIAL_TOKEN_MARKER];
                w.extend_from_slice(bytes);
                w
            } else {
                bytes.to_vec()
            }
        })
        .collect();
    (words, vocab.eos()[0])
}

/// The schema with llguidance's compact-JSON options (no whitespace between tokens, `,` and
/// `:` separators), the language ours compiles by default.
pub fn llguidance_schema(schema: &Value) -> Value {
    let mut s = schema.clone();
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
    use llguidance::{Matcher, ParserFactory};

    let t = Instant::now();
    let before = alloc::live();
    let (words, eos) = o200k_words();
    let info = toktrie::TokRxInfo::new(words.len() as u32, eos);
    let env: toktrie::TokEnv = Arc::new(Tiktoken {
        trie: toktrie::TokTrie::from(&info, &words),
        bpe: tiktoken_rs::o200k_base().expect("o200k_base"),
    });
    drop(words);
    let mut factory = ParserFactory::new_simple(&env).expect("parser factory");
    factory.quiet();
    say(format!("READY {} {}", ns(t), alloc::live() - before));

    let walk_on = |matcher: &mut Matcher, tokens: &[u32]| -> Walk {
        walk_tokens(
            tokens,
            eos,
            matcher,
            |m, tok| {
                let (mask, t) = timed(|| m.compute_mask_or_eos());
                (mask.is_ok_and(|mask| mask.is_allowed(tok)), t)
            },
            |m, tok| {
                let (r, t) = timed(|| m.consume_token(tok));
                (r.is_ok(), t)
            },
        )
    };

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
        let cold = walk_on(&mut matcher, &job.tokens[0]);
        let mem_walk = alloc::live() - base - cold.heap() - clone_bytes;
        let warm = walk_on(&mut second, &job.tokens[1]);
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
    let (words, eos) = o200k_words();
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
