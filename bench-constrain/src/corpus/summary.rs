//! Counting a [`Run`] per engine, the printed report (a table per engine, then one final line
//! per engine) and the `--out` JSON.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{EngineRun, Entry, Run, SchemaResult, Walked};
use crate::harness::{one_line, tail};
use crate::stats::{avg, fmt_ns, percentile};

/// One engine's counts over a corpus.
#[derive(Debug, Clone, Default)]
pub struct Summary {
    pub engine: String,
    /// Files read, readable or not (the N of "passed P/N").
    pub files: usize,
    /// Compiled, and every instance got the right verdict.
    pub passed: usize,
    /// Compiled within the cap (walk timeouts included).
    pub compiled: usize,
    /// Refused by the engine at compile time.
    pub refused: usize,
    pub compile_timeouts: usize,
    pub walk_timeouts: usize,
    pub crashed: usize,
    /// Schemas compiled and walked with at least one wrong verdict.
    pub wrong: usize,
    /// Instances walked (of the schemas compiled and walked within the cap).
    pub instances: usize,
    /// Valid instances refused.
    pub valid_refused: usize,
    /// Invalid instances accepted.
    pub invalid_accepted: usize,
    /// Compile refusals by keyword (or, where the error names none, by its reason): the
    /// number of schemas and one error as an example, most schemas first. A schema counts
    /// under every keyword its error names.
    pub reasons: Vec<(String, usize, String)>,
    /// Compile times of the compiled schemas, sorted (ns).
    pub compile_ns: Vec<u64>,
    /// Every mask computed, sorted (ns).
    pub mask_ns: Vec<u64>,
    /// Per `draft` key, in name order: (draft, files, passed, compiled).
    pub drafts: Vec<(String, usize, usize, usize)>,
}

/// JSON Schema keywords of drafts 4 to 2020-12, for finding the one an error names.
const KEYWORDS: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$ref",
    "$defs",
    "definitions",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
    "$comment",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "prefixItems",
    "items",
    "additionalItems",
    "contains",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "type",
    "enum",
    "const",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "maxContains",
    "minContains",
    "maxProperties",
    "minProperties",
    "required",
    "dependentRequired",
    "format",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
];

/// Keywords whose members are named by the schema (a property `items` is no keyword).
const NAMING: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
];

/// Keywords that are also English words: taken from an error only when quoted.
const PROSE: &[&str] = &[
    "not", "if", "then", "else", "id", "type", "contains", "items",
];

/// The keywords an error names, first the ones it quotes (`"minLength"`, `'oneOf'`).
///
/// Ours writes `schema<pointer>: <keyword>: <reason>` for keywords outside its subset: that
/// keyword alone, whatever it is (`readonly` too); in general mode the pointer ends with the
/// keyword. Otherwise every quoted keyword of a list
/// (`Unimplemented keys: ["if", "then"]`), or else the first keyword, quoted or written as a
/// word (`oneOf constraints are not supported`, `format "uri"`), where keywords that are also
/// English words (`not`, `if`, `items`) count only quoted; none for an error that names no
/// keyword. What llguidance appends after
/// ` while processing ` (a pointer) is not read.
pub fn keywords(error: &str) -> Vec<String> {
    let (pointer, reason) = split_error(error);
    if !pointer.is_empty() {
        if let Some((head, _)) = reason.split_once(": ") {
            if !head.is_empty() && !head.contains(char::is_whitespace) {
                return vec![head.to_string()];
            }
        }
        // General mode: the pointer ends with the keyword (`schema/items/$ref: "x.json"
        // refers to another document`), unless that is a name under a keyword that names
        // its members (`schema/properties/items`).
        let mut segments = pointer.rsplit('/');
        let last = segments
            .next()
            .unwrap_or("")
            .replace("~1", "/")
            .replace("~0", "~");
        let parent = segments.next().unwrap_or("");
        if KEYWORDS.contains(&last.as_str()) && !NAMING.contains(&parent) {
            return vec![last];
        }
    }
    // Words outside quotes, and quoted single words; the words of a longer quoted value
    // (`'https://json.schemastore.org/x-definitions.json'`) or of a URL or pointer are not
    // the error's words.
    let reason: String = reason
        .split(' ')
        .filter(|w| !(w.contains("://") || w.starts_with('#') || w.starts_with('/')))
        .collect::<Vec<_>>()
        .join(" ");
    let reason = reason.as_str();
    let mut words: Vec<(&str, bool)> = Vec::new();
    let is_word = |c: char| c.is_alphanumeric() || c == '$' || c == '_';
    let mut quote: Option<(char, usize)> = None;
    let mut start: Option<usize> = None;
    let mut prev = ' ';
    for (i, c) in reason.char_indices().chain([(reason.len(), ' ')]) {
        match quote {
            Some((q, from)) if c == q => {
                let inner = &reason[from..i];
                if !inner.is_empty() && inner.chars().all(is_word) {
                    words.push((inner, true));
                }
                quote = None;
            }
            Some(_) => {}
            None => {
                if let (Some(s), false) = (start, is_word(c)) {
                    words.push((&reason[s..i], false));
                    start = None;
                }
                if matches!(c, '"' | '\'' | '`') && !prev.is_alphanumeric() {
                    quote = Some((c, i + 1));
                } else if start.is_none() && is_word(c) {
                    start = Some(i);
                }
            }
        }
        prev = c;
    }
    let keyword =
        |&(w, quoted): &(&str, bool)| KEYWORDS.contains(&w) && (quoted || !PROSE.contains(&w));
    // A list of keys (`Unimplemented keys: ["if", "then"]`): every quoted keyword.
    if reason.contains('[') {
        let mut listed: Vec<String> = Vec::new();
        for (w, _) in words.iter().filter(|w| w.1 && keyword(w)) {
            if !listed.iter().any(|l| l == w) {
                listed.push(w.to_string());
            }
        }
        if !listed.is_empty() {
            return listed;
        }
    }
    words
        .iter()
        .find(|w| keyword(w))
        .map(|(w, _)| w.to_string())
        .into_iter()
        .collect()
}

/// An error as (pointer, reason): ours writes `schema<pointer>: <reason>`, and what
/// llguidance appends after ` while processing ` (where in the schema) is dropped.
fn split_error(error: &str) -> (&str, &str) {
    let (pointer, reason) = match error.split_once(": ") {
        Some((p, r)) if p.starts_with("schema") && !p.contains(' ') => (p, r),
        _ => ("", error),
    };
    (
        pointer,
        reason.split(" while processing ").next().unwrap_or(""),
    )
}

/// An error without a keyword, as a group name: its reason without the pointer, quoted
/// values and numbers, at most 80 characters.
fn reason_group(error: &str) -> String {
    // The statement before any detail (`...: Default retriever does not fetch resources`).
    let reason = split_error(error).1.split(": ").next().unwrap_or("");
    let mut out = String::new();
    let mut quote = None;
    for c in reason.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push('…');
                out.push(c);
            }
            Some(_) => {}
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                out.push(c);
            }
            None if c.is_ascii_digit() => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            None => out.push(c),
        }
    }
    out.chars().take(80).collect()
}

/// Whether each instance of `entry` got the right verdict in `walks`.
fn all_right(entry: &Entry, walks: &[Walked]) -> bool {
    entry.tests.len() == walks.len()
        && entry
            .tests
            .iter()
            .zip(walks)
            .all(|(t, w)| t.valid == w.accepted)
}

/// Counts `engine`'s results over `run`.
pub fn summarize(run: &Run, engine: &EngineRun) -> Summary {
    let mut s = Summary {
        engine: engine.engine.clone(),
        files: run.files.len(),
        ..Summary::default()
    };
    let mut reasons: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut drafts: BTreeMap<String, (usize, usize, usize)> = BTreeMap::new();
    for ((_, entry), result) in run.entries().zip(&engine.results) {
        let mut passed = false;
        let mut compiled = true;
        match result {
            SchemaResult::Walked { compile_ns, walks } => {
                s.compile_ns.push(*compile_ns);
                passed = all_right(entry, walks);
                s.wrong += usize::from(!passed);
                for (t, w) in entry.tests.iter().zip(walks) {
                    s.instances += 1;
                    s.valid_refused += usize::from(t.valid && !w.accepted);
                    s.invalid_accepted += usize::from(!t.valid && w.accepted);
                    s.mask_ns.extend(&w.mask_ns);
                }
            }
            SchemaResult::WalkTimeout { compile_ns } => {
                s.compile_ns.push(*compile_ns);
                s.walk_timeouts += 1;
            }
            SchemaResult::Refused(error) => {
                compiled = false;
                s.refused += 1;
                let mut groups = keywords(error);
                if groups.is_empty() {
                    groups.push(reason_group(error));
                }
                for g in groups {
                    let slot = reasons.entry(g).or_insert((0, error.clone()));
                    slot.0 += 1;
                }
            }
            SchemaResult::CompileTimeout => {
                compiled = false;
                s.compile_timeouts += 1;
            }
            SchemaResult::Crashed => {
                compiled = false;
                s.crashed += 1;
            }
        }
        s.passed += usize::from(passed);
        s.compiled += usize::from(compiled);
        if let Some(d) = &entry.draft {
            let slot = drafts.entry(d.clone()).or_default();
            *slot = (
                slot.0 + 1,
                slot.1 + usize::from(passed),
                slot.2 + usize::from(compiled),
            );
        }
    }
    s.compile_ns.sort_unstable();
    s.mask_ns.sort_unstable();
    let mut reasons: Vec<(String, usize, String)> =
        reasons.into_iter().map(|(k, (n, e))| (k, n, e)).collect();
    reasons.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    s.reasons = reasons;
    s.drafts = drafts
        .into_iter()
        .map(|(d, (n, p, c))| (d, n, p, c))
        .collect();
    s
}

/// `x` with about three significant digits.
fn sig(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else if x >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

impl Summary {
    /// `ENGINE: passed P/N, compiled C, compile p50 X ms p99 Y ms, mask avg Z us p99 W us`.
    pub fn line(&self) -> String {
        let ms = |ns: u64| sig(ns as f64 / 1e6);
        let us = |ns: u64| sig(ns as f64 / 1e3);
        format!(
            "{}: passed {}/{}, compiled {}, compile p50 {} ms p99 {} ms, mask avg {} us p99 {} us",
            self.engine,
            self.passed,
            self.files,
            self.compiled,
            ms(percentile(&self.compile_ns, 0.5)),
            ms(percentile(&self.compile_ns, 0.99)),
            us(avg(&self.mask_ns)),
            us(percentile(&self.mask_ns, 0.99)),
        )
    }

    /// The engine's tables (Markdown).
    pub fn table(&self) -> String {
        let c = &self.compile_ns;
        let m = &self.mask_ns;
        let mut out = format!(
            "### {}\n\n\
             | files | passed | compiled | refused at compile | timeouts, compile / walk | crashed | schemas with a wrong verdict | valid refused | invalid accepted |\n\
             |---|---|---|---|---|---|---|---|---|\n\
             | {} | {} | {} | {} | {} / {} | {} | {} | {} | {} |\n\n\
             | compile p50 | p90 | p99 | max | mask avg | p50 | p99 | masks |\n\
             |---|---|---|---|---|---|---|---|\n\
             | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            self.engine,
            self.files,
            self.passed,
            self.compiled,
            self.refused,
            self.compile_timeouts,
            self.walk_timeouts,
            self.crashed,
            self.wrong,
            self.valid_refused,
            self.invalid_accepted,
            fmt_ns(percentile(c, 0.5)),
            fmt_ns(percentile(c, 0.9)),
            fmt_ns(percentile(c, 0.99)),
            fmt_ns(c.last().copied().unwrap_or(0)),
            fmt_ns(avg(m)),
            fmt_ns(percentile(m, 0.5)),
            fmt_ns(percentile(m, 0.99)),
            m.len(),
        );
        if !self.reasons.is_empty() {
            out.push_str("\nRefused at compile, by keyword, or by reason where the error names none (schemas; a schema counts under each keyword its error names):\n\n");
            for (group, n, example) in self.reasons.iter().take(15) {
                out.push_str(&format!("- `{group}` {n}: e.g. {:?}\n", cut(example, 160)));
            }
            if self.reasons.len() > 15 {
                let rest: usize = self.reasons[15..].iter().map(|r| r.1).sum();
                out.push_str(&format!(
                    "- {} more groups, {rest} schemas\n",
                    self.reasons.len() - 15
                ));
            }
        }
        if !self.drafts.is_empty() {
            out.push_str("\nBy draft: ");
            let parts: Vec<String> = self
                .drafts
                .iter()
                .map(|(d, n, p, c)| format!("{d} passed {p}/{n}, compiled {c}"))
                .collect();
            out.push_str(&parts.join("; "));
            out.push('\n');
        }
        out
    }
}

/// The first `n` characters of `s`, with `…` when cut.
fn cut(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        out.push('…');
    }
    out
}

/// The byte offset and text of token `at` of `tokens`, and the text before it (its last 40
/// characters).
fn refused_token(bpe: &tiktoken_rs::CoreBPE, tokens: &[u32], at: usize) -> (usize, String, String) {
    let decode = |ids: &[u32]| {
        String::from_utf8_lossy(&bpe.decode_bytes(ids).unwrap_or_default()).into_owned()
    };
    let before = bpe.decode_bytes(&tokens[..at]).unwrap_or_default();
    (
        before.len(),
        decode(&tokens[at..(at + 1).min(tokens.len())]),
        tail(&String::from_utf8_lossy(&before), 40),
    )
}

/// One line per wrong verdict of `engine` (at most `limit`): file, test, what happened.
pub fn wrong_verdicts(run: &Run, engine: &EngineRun, limit: usize) -> Vec<String> {
    let bpe = crate::vocab::bpe(&run.config.vocab);
    let mut out = Vec::new();
    let entries = run.entries().zip(&engine.results).zip(&run.tokens);
    for (((name, entry), result), tokens) in entries {
        let SchemaResult::Walked { walks, .. } = result else {
            continue;
        };
        for (i, (t, w)) in entry.tests.iter().zip(walks).enumerate() {
            if t.valid == w.accepted {
                continue;
            }
            if out.len() == limit {
                return out;
            }
            let what = match (t.valid, w.refused_at) {
                (true, Some(at)) => {
                    let (byte, tok, before) = refused_token(&bpe, &tokens[i], at);
                    format!("valid, refused token {tok:?} at byte {byte} after {before:?}")
                }
                (true, None) => "valid, EOS refused at the end".to_string(),
                (false, _) => format!("invalid, accepted: {}", cut(&t.text, 100)),
            };
            let desc = t.description.as_deref().unwrap_or("");
            out.push(format!("{name} tests[{i}] {:?}: {what}", one_line(desc)));
        }
    }
    out
}

/// The whole report: the corpus, unreadable files, a table per engine with its first wrong
/// verdicts, then, last, one [`Summary::line`] per engine.
pub fn report(run: &Run, show: usize) -> String {
    let entries: Vec<&Entry> = run.entries().map(|(_, e)| e).collect();
    let instances: usize = entries.iter().map(|e| e.tests.len()).sum();
    let valid: usize = entries
        .iter()
        .map(|e| e.tests.iter().filter(|t| t.valid).count())
        .sum();
    let mut out = format!(
        "## Corpus {}: {} files, {} unreadable; {instances} instances ({valid} valid, {} \
         invalid); vocabulary {}, cap {} s per schema and engine; ours in {} mode\n",
        run.config.dir.display(),
        run.files.len(),
        run.files.len() - entries.len(),
        instances - valid,
        run.config.vocab,
        run.config.cap.as_secs_f64(),
        run.config.schema_mode.name(),
    );
    let unreadable: Vec<String> = run
        .unreadable()
        .map(|(name, why)| format!("- {name}: {why}\n"))
        .collect();
    if !unreadable.is_empty() {
        out.push_str("\nUnreadable files (not counted as passed):\n\n");
        out.extend(unreadable);
    }
    let summaries: Vec<Summary> = run.engines.iter().map(|e| summarize(run, e)).collect();
    for (s, e) in summaries.iter().zip(&run.engines) {
        out.push('\n');
        out.push_str(&s.table());
        let wrong = wrong_verdicts(run, e, show);
        if !wrong.is_empty() {
            out.push_str(&format!(
                "\nWrong verdicts, first {} of {}:\n\n",
                wrong.len(),
                s.valid_refused + s.invalid_accepted
            ));
            for w in wrong {
                out.push_str(&format!("- {w}\n"));
            }
        }
    }
    out.push('\n');
    for s in &summaries {
        out.push_str(&s.line());
        out.push('\n');
    }
    out
}

/// Per file: its name, draft, and per engine the status, error, compile time and each
/// instance's verdict and mask times (or why the file is unreadable).
pub fn to_json(run: &Run) -> Value {
    let bpe = crate::vocab::bpe(&run.config.vocab);
    let mut readable = 0usize;
    let files = run.files.iter().map(|f| {
        let mut m = Map::new();
        m.insert("file".into(), json!(f.name));
        let entry = match &f.entry {
            Err(why) => {
                m.insert("unreadable".into(), json!(why));
                return Value::Object(m);
            }
            Ok(e) => e,
        };
        let j = readable;
        readable += 1;
        m.insert("draft".into(), json!(entry.draft));
        for e in &run.engines {
            let result = &e.results[j];
            let v = match result {
                SchemaResult::Walked { compile_ns, walks } => {
                    let instances: Vec<Value> = entry
                        .tests
                        .iter()
                        .zip(walks)
                        .zip(&run.tokens[j])
                        .map(|((t, w), tokens)| {
                            let refused = w.refused_at.map(|at| {
                                let (byte, tok, _) = refused_token(&bpe, tokens, at);
                                json!({"token_index": at, "byte": byte, "token": tok})
                            });
                            json!({
                                "valid": t.valid,
                                "accepted": w.accepted,
                                "correct": t.valid == w.accepted,
                                "tokens": tokens.len(),
                                "refused_at": refused,
                                "masks": w.mask_ns.len(),
                                "mask_avg_ns": avg(&w.mask_ns),
                                "mask_max_ns": w.mask_ns.iter().max(),
                            })
                        })
                        .collect();
                    let status = if all_right(entry, walks) {
                        "passed"
                    } else {
                        "wrong"
                    };
                    json!({"status": status, "compile_ns": compile_ns, "instances": instances})
                }
                SchemaResult::Refused(error) => json!({
                    "status": "refused",
                    "error": error,
                    "keywords": keywords(error),
                }),
                SchemaResult::CompileTimeout => json!({"status": "compile_timeout"}),
                SchemaResult::WalkTimeout { compile_ns } => {
                    json!({"status": "walk_timeout", "compile_ns": compile_ns})
                }
                SchemaResult::Crashed => json!({"status": "crashed"}),
            };
            m.insert(e.engine.clone(), v);
        }
        Value::Object(m)
    });
    Value::Array(files.collect())
}
