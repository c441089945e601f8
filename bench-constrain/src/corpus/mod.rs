//! The corpus runner: every `*.json` file of a directory in the JSONSchemaBench/MaskBench
//! shape, `{"schema": ..., "tests": [{"data": ..., "valid": bool, ...}], ...}`, run through
//! each engine as a JSON value language, instance by instance, token by token.
//!
//! Per file and engine: the schema is compiled on its own (timed); each instance is written
//! as compact JSON ([`compact`]: keys in the instance's own order, numbers as written), tokenized with the
//! vocabulary (tiktoken, `encode_ordinary`) and walked from the start state: a valid instance
//! must have every token in the mask of its state and EOS allowed at the end; an invalid one
//! must be refused somewhere (a token outside the mask, or EOS not allowed at the end). A
//! schema **passes** when it compiles and every instance gets the right verdict. Each engine
//! runs in worker processes ([`workers`]); a schema whose compile and walks together pass the
//! cap is a timeout, and the worker is killed and restarted at the next schema.
//!
//! [`run`] does all of it; [`summary`] counts and prints.

pub mod summary;
pub mod workers;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::Value;

use crate::worker::{run_engine, Cap, Outcome, Spawn};

/// The engines the runner knows, in the order it runs and prints them.
pub const ENGINES: &[&str] = &["ours", "llguidance"];

/// Which JSON Schema ours reads (`--schema-mode`; llguidance has one reading).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SchemaMode {
    /// General JSON Schema (`constrain::json::SchemaMode::General`), objects open unless
    /// `additionalProperties: false` (as llguidance reads them); the default draft is the
    /// file's `draft` key when it names one, else 2020-12 (a root `$schema` wins over both).
    #[default]
    General,
    /// The strict structured-outputs subset (the contract mode).
    Strict,
}

impl SchemaMode {
    /// `general` or `strict`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "general" => Some(Self::General),
            "strict" => Some(Self::Strict),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::General => "general",
            Self::Strict => "strict",
        }
    }
}

/// The draft a corpus file's `draft` key names (`draft2020-12`, `draft7`, `draft-04`,
/// `2019-09`, ...), if it names one.
pub fn draft_of(key: &str) -> Option<constrain::json::Draft> {
    use constrain::json::Draft;
    let k: String = key
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase();
    let k = k.strip_prefix("draft").unwrap_or(&k);
    Some(match k.trim_start_matches('0') {
        "4" => Draft::Draft4,
        "6" => Draft::Draft6,
        "7" => Draft::Draft7,
        "201909" => Draft::Draft2019,
        "202012" => Draft::Draft2020,
        _ => return None,
    })
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    pub dir: PathBuf,
    /// Names from [`ENGINES`].
    pub engines: Vec<String>,
    /// A tiktoken vocabulary name (`crate::vocab`).
    pub vocab: String,
    /// The cap on one schema's compile and walks together, per engine.
    pub cap: Duration,
    /// How ours reads the schemas.
    pub schema_mode: SchemaMode,
    /// The `corpus` binary, run with `--worker` (`std::env::current_exe()` in the binary,
    /// `env!("CARGO_BIN_EXE_corpus")` in tests).
    pub exe: PathBuf,
}

/// One instance of a corpus file.
#[derive(Debug, Clone)]
pub struct Test {
    pub valid: bool,
    /// The test's `description`, when it has one.
    pub description: Option<String>,
    /// The instance as compact JSON.
    pub text: String,
}

/// A readable corpus file.
#[derive(Debug, Clone)]
pub struct Entry {
    pub schema: Value,
    pub tests: Vec<Test>,
    /// The file's `draft` key, when it has one (the JSON-Schema-Test-Suite conversion writes
    /// it).
    pub draft: Option<String>,
}

impl Entry {
    /// Ours' compile options for this entry: general mode, objects open, the entry's draft
    /// (2020-12 when it names none). What the corpus worker compiles with.
    pub fn general_options(&self) -> constrain::template::Options {
        let mut options = constrain::template::Options::default();
        options.json.mode = constrain::json::SchemaMode::General {
            closed: false,
            draft: self.draft.as_deref().and_then(draft_of).unwrap_or_default(),
        };
        options
    }
}

/// A `*.json` file of the directory: its entry, or why it is not one.
#[derive(Debug, Clone)]
pub struct File {
    pub name: String,
    pub entry: Result<Entry, String>,
}

/// Reads `text` (the file `name`) as a corpus entry, or says why it is not one.
pub fn parse_entry(text: &str) -> Result<Entry, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut map) = value else {
        return Err("not a JSON object".into());
    };
    let schema = map.remove("schema").ok_or("no \"schema\" key")?;
    if !(schema.is_object() || schema.is_boolean()) {
        return Err("\"schema\" is neither an object nor a boolean".into());
    }
    let Some(Value::Array(list)) = map.remove("tests") else {
        return Err("no \"tests\" list".into());
    };
    let mut tests = Vec::with_capacity(list.len());
    for (i, t) in list.into_iter().enumerate() {
        let Value::Object(t) = t else {
            return Err(format!("tests[{i}] is not an object"));
        };
        let valid = t
            .get("valid")
            .and_then(Value::as_bool)
            .ok_or_else(|| format!("tests[{i}] has no boolean \"valid\""))?;
        if !t.contains_key("data") {
            return Err(format!("tests[{i}] has no \"data\""));
        }
        tests.push(Test {
            valid,
            description: t
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_string),
            text: String::new(),
        });
    }
    // The data as written, for the numbers' own digits (serde_json reads an integer past 64
    // bits as a float and would write `1.2345678910111214e52`).
    let raw: HashMap<String, Box<RawValue>> = serde_json::from_str(text).expect("read above");
    let raw: Vec<HashMap<String, Box<RawValue>>> =
        serde_json::from_str(raw["tests"].get()).expect("read above");
    for (test, raw) in tests.iter_mut().zip(&raw) {
        test.text = compact(raw["data"].get());
    }
    Ok(Entry {
        schema,
        tests,
        draft: map.get("draft").and_then(Value::as_str).map(str::to_string),
    })
}

/// The JSON value `raw` (valid JSON) as compact JSON: no whitespace between tokens, keys in
/// their own order, strings as serde_json writes them (UTF-8, `\"`, `\\`, the short escapes and
/// `\u00XX` for other control characters), numbers with the digits they are written with.
pub fn compact(raw: &str) -> String {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(raw.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'"' => {
                let mut end = i + 1;
                while b[end] != b'"' {
                    end += if b[end] == b'\\' { 2 } else { 1 };
                }
                let s: String = serde_json::from_str(&raw[i..=end]).expect("a JSON string");
                out.push_str(&serde_json::to_string(&s).expect("a string serializes"));
                i = end + 1;
            }
            // Outside strings valid JSON is ASCII.
            c => {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

/// Every `*.json` file directly in `dir`, sorted by name, read as corpus entries.
///
/// Errors: `dir` cannot be listed.
pub fn read_dir(dir: &Path) -> std::io::Result<Vec<File>> {
    let mut paths = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_file() && p.extension().is_some_and(|x| x == "json") {
            paths.push(p);
        }
    }
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|p| File {
            name: p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            entry: std::fs::read(&p)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8".to_string()))
                .and_then(|text| parse_entry(&text)),
        })
        .collect())
}

/// One instance walked by one engine.
#[derive(Debug, Clone)]
pub struct Walked {
    /// Every token allowed and EOS allowed at the end.
    pub accepted: bool,
    /// The first token not allowed (its index), if any.
    pub refused_at: Option<usize>,
    /// Every mask of the walk, in nanoseconds (the last one is where EOS was looked up,
    /// unless a token was refused).
    pub mask_ns: Vec<u64>,
}

/// One engine on one readable file.
#[derive(Debug, Clone)]
pub enum SchemaResult {
    /// Compiled (in `compile_ns`) and walked: one [`Walked`] per test.
    Walked {
        compile_ns: u64,
        walks: Vec<Walked>,
    },
    /// The engine refused the schema (its error).
    Refused(String),
    CompileTimeout,
    /// Compiled, but the walks ran past the cap.
    WalkTimeout {
        compile_ns: u64,
    },
    /// The worker died on this schema.
    Crashed,
}

/// One engine over the corpus: per readable file (in [`Run::files`] order), its result.
#[derive(Debug, Clone)]
pub struct EngineRun {
    pub engine: String,
    pub results: Vec<SchemaResult>,
}

/// The whole run: the files and, per engine, the results of the readable ones.
#[derive(Debug, Clone)]
pub struct Run {
    pub config: Config,
    pub files: Vec<File>,
    /// Per readable file (in order), the tokens of each test.
    pub tokens: Vec<Vec<Vec<u32>>>,
    pub engines: Vec<EngineRun>,
}

impl Run {
    /// The readable files, in order (what [`EngineRun::results`] and [`Run::tokens`] follow).
    pub fn entries(&self) -> impl Iterator<Item = (&str, &Entry)> {
        self.files
            .iter()
            .filter_map(|f| f.entry.as_ref().ok().map(|e| (f.name.as_str(), e)))
    }

    /// The unreadable files, in order: name and why.
    pub fn unreadable(&self) -> impl Iterator<Item = (&str, &str)> {
        self.files.iter().filter_map(|f| {
            f.entry
                .as_ref()
                .err()
                .map(|why| (f.name.as_str(), why.as_str()))
        })
    }
}

fn result_of(outcome: Outcome) -> SchemaResult {
    match outcome {
        Outcome::Rejected(r) => SchemaResult::Refused(r),
        Outcome::CompileTimeout => SchemaResult::CompileTimeout,
        Outcome::WalkTimeout { compile_ns } => SchemaResult::WalkTimeout { compile_ns },
        Outcome::Crashed => SchemaResult::Crashed,
        Outcome::Done(v) => SchemaResult::Walked {
            compile_ns: v["compile_ns"].as_u64().unwrap_or(0),
            walks: v["walks"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|w| {
                    let refused_at = w["disallowed_at"].as_u64().map(|i| i as usize);
                    Walked {
                        accepted: refused_at.is_none() && w["eos_ok"] == true,
                        refused_at,
                        mask_ns: crate::stats::u64s(&w["mask_ns"]),
                    }
                })
                .collect(),
        },
    }
}

/// Reads the corpus and runs every engine of `config` over it.
///
/// Errors: the directory cannot be listed, or the job file cannot be written.
pub fn run(config: &Config) -> std::io::Result<Run> {
    for e in &config.engines {
        assert!(
            ENGINES.contains(&e.as_str()),
            "unknown engine {e} (ours, llguidance)"
        );
    }
    let files = read_dir(&config.dir)?;
    let bpe = crate::vocab::bpe(&config.vocab);
    let entries: Vec<&Entry> = files.iter().filter_map(|f| f.entry.as_ref().ok()).collect();
    let tokens: Vec<Vec<Vec<u32>>> = entries
        .iter()
        .map(|e| {
            e.tests
                .iter()
                .map(|t| bpe.encode_ordinary(&t.text))
                .collect()
        })
        .collect();
    let jobs: Vec<Value> = entries
        .iter()
        .zip(&tokens)
        .map(|(e, t)| {
            workers::Job {
                schema: e.schema.clone(),
                draft: e.draft.as_deref().and_then(draft_of),
                tokens: t.clone(),
            }
            .to_json()
        })
        .collect();
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let jobs_path = std::env::temp_dir().join(format!(
        "corpus-jobs-{}-{}.json",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&jobs_path, serde_json::to_string(&jobs)?)?;
    drop(jobs);
    let args = vec![
        "--vocab".to_string(),
        config.vocab.clone(),
        "--schema-mode".to_string(),
        config.schema_mode.name().to_string(),
    ];
    let engines = ENGINES
        .iter()
        .filter(|e| config.engines.iter().any(|c| c == *e))
        .map(|engine| {
            let spawn = Spawn {
                exe: &config.exe,
                engine,
                jobs: &jobs_path,
                args: &args,
                stderr: false,
            };
            let (outcomes, _) = run_engine(&spawn, entries.len(), Cap::PerJob(config.cap));
            EngineRun {
                engine: engine.to_string(),
                results: outcomes.into_iter().map(result_of).collect(),
            }
        })
        .collect();
    let _ = std::fs::remove_file(&jobs_path);
    Ok(Run {
        config: config.clone(),
        files,
        tokens,
        engines,
    })
}
