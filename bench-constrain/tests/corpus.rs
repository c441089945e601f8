//! The corpus runner's core on the small corpus in `tests/corpus/` (its README gives the
//! expected counts file by file), and the reading of compile errors by keyword.
//!
//! Runs the `corpus` binary's workers; in release it takes a few seconds
//! (`cargo test --release --manifest-path bench-constrain/Cargo.toml`).

use std::path::PathBuf;
use std::time::Duration;

use bench_constrain::corpus::summary::{keywords, summarize};
use bench_constrain::corpus::{compact, draft_of, parse_entry, run, Config, SchemaMode};
use constrain::json::Draft;

fn config(engines: &[&str], schema_mode: SchemaMode) -> Config {
    Config {
        dir: PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus")),
        engines: engines.iter().map(|e| e.to_string()).collect(),
        vocab: "o200k_base".into(),
        cap: Duration::from_secs(120),
        schema_mode,
        exe: PathBuf::from(env!("CARGO_BIN_EXE_corpus")),
    }
}

#[test]
fn small_corpus_counts() {
    let run = run(&config(&["ours", "llguidance"], SchemaMode::General)).expect("corpus read");
    let names: Vec<&str> = run.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a-object.json",
            "b-enum.json",
            "c-mislabelled.json",
            "d-remote-ref.json",
            "e-no-valid-flag.json",
            "f-not-json.json",
            "g-open-object.json"
        ]
    );
    let unreadable: Vec<(&str, &str)> = run.unreadable().collect();
    assert_eq!(unreadable.len(), 2);
    assert_eq!(
        unreadable[0],
        ("e-no-valid-flag.json", "tests[0] has no boolean \"valid\"")
    );
    assert!(unreadable[1].1.starts_with("not JSON"), "{unreadable:?}");

    assert_eq!(run.engines.len(), 2);
    for engine in &run.engines {
        let s = summarize(&run, engine);
        let counts = (
            s.files,
            s.passed,
            s.compiled,
            s.refused,
            s.compile_timeouts + s.walk_timeouts + s.crashed,
            s.wrong,
            s.instances,
            s.valid_refused,
            s.invalid_accepted,
        );
        assert_eq!(counts, (7, 3, 4, 1, 0, 1, 9, 1, 1), "{}", s.table());
        // Every position of every walked instance has a mask, plus the one where EOS is
        // looked up after an accepted prefix: at least one per instance.
        assert!(s.mask_ns.len() >= s.instances);
        assert_eq!(s.compile_ns.len(), 4);
        let prefix = format!("{}: passed 3/7, compiled 4, compile p50 ", engine.engine);
        let line = s.line();
        assert!(line.starts_with(&prefix), "{line}");
        assert!(line.contains(" ms p99 ") && line.ends_with(" us"), "{line}");
    }
    let ours = summarize(&run, &run.engines[0]);
    assert_eq!(ours.engine, "ours");
    assert_eq!(ours.reasons.len(), 1);
    assert_eq!((ours.reasons[0].0.as_str(), ours.reasons[0].1), ("$ref", 1));

    let report = bench_constrain::corpus::summary::report(&run, 10);
    let last: Vec<&str> = report.lines().rev().take(2).collect();
    assert!(report.contains("ours in general mode"), "{report}");
    assert!(last[1].starts_with("ours: passed 3/7"), "{report}");
    assert!(last[0].starts_with("llguidance: passed 3/7"), "{report}");
}

/// Ours in the strict subset (`--schema-mode strict`) refuses the open object with a
/// `minLength` and judges the rest as in general mode.
#[test]
fn small_corpus_strict_mode() {
    let run = run(&config(&["ours"], SchemaMode::Strict)).expect("corpus read");
    assert_eq!(run.engines.len(), 1);
    let s = summarize(&run, &run.engines[0]);
    let counts = (
        s.files,
        s.passed,
        s.compiled,
        s.refused,
        s.wrong,
        s.instances,
        s.valid_refused,
        s.invalid_accepted,
    );
    assert_eq!(counts, (7, 2, 3, 2, 1, 7, 1, 1), "{}", s.table());
    let mut reasons: Vec<(&str, usize)> =
        s.reasons.iter().map(|(k, n, _)| (k.as_str(), *n)).collect();
    reasons.sort();
    assert_eq!(reasons, [("$ref", 1), ("minLength", 1)]);
    let report = bench_constrain::corpus::summary::report(&run, 10);
    assert!(report.contains("ours in strict mode"), "{report}");
    assert!(report.trim_end().ends_with(&s.line()), "{report}");
}

#[test]
fn draft_keys() {
    assert_eq!(draft_of("draft2020-12"), Some(Draft::Draft2020));
    assert_eq!(draft_of("draft7"), Some(Draft::Draft7));
    assert_eq!(draft_of("draft-07"), Some(Draft::Draft7));
    assert_eq!(draft_of("draft4"), Some(Draft::Draft4));
    assert_eq!(draft_of("draft-04"), Some(Draft::Draft4));
    assert_eq!(draft_of("draft-06"), Some(Draft::Draft6));
    assert_eq!(draft_of("2019-09"), Some(Draft::Draft2019));
    assert_eq!(draft_of("draft3"), None);
    assert_eq!(draft_of("unknown"), None);
}

#[test]
fn entries_that_are_not_the_format() {
    let why = |text: &str| parse_entry(text).err().unwrap_or_default();
    assert_eq!(why("[1]"), "not a JSON object");
    assert_eq!(why(r#"{"tests": []}"#), "no \"schema\" key");
    assert_eq!(
        why(r#"{"schema": 1, "tests": []}"#),
        "\"schema\" is neither an object nor a boolean"
    );
    assert_eq!(why(r#"{"schema": {}}"#), "no \"tests\" list");
    assert_eq!(
        why(r#"{"schema": {}, "tests": [3]}"#),
        "tests[0] is not an object"
    );
    assert_eq!(
        why(r#"{"schema": {}, "tests": [{"valid": true}]}"#),
        "tests[0] has no \"data\""
    );
    let entry = parse_entry(
        r#"{"schema": true, "draft": "draft7", "tests": [{"data": {"b": 1, "a": [1.0, "x"]}, "valid": false}]}"#,
    )
    .expect("an entry");
    assert_eq!(entry.draft.as_deref(), Some("draft7"));
    // Compact, and in the instance's own key order.
    assert_eq!(entry.tests[0].text, r#"{"b":1,"a":[1.0,"x"]}"#);
    // Numbers keep their digits; strings are written as serde_json writes them.
    assert_eq!(
        compact("[ 12345678910111213141516171819202122232425262728293031, 1E2, -0.0 ]"),
        "[12345678910111213141516171819202122232425262728293031,1E2,-0.0]"
    );
    assert_eq!(
        compact(r#" { "k\u0065y" : "\u00e9\/\u001F\n" } "#),
        "{\"key\":\"é/\\u001f\\n\"}"
    );
    assert!(!entry.tests[0].valid);
}

#[test]
fn errors_by_keyword() {
    // Ours: the subset gate names the keyword after the pointer, whatever it is.
    assert_eq!(
        keywords("schema/properties/x/allOf: allOf: unsupported keyword"),
        ["allOf"]
    );
    assert_eq!(
        keywords("schema/properties/minimum: readonly: unsupported keyword"),
        ["readonly"]
    );
    assert_eq!(
        keywords("schema/unknown~1keyword: unknown/keyword: unsupported keyword"),
        ["unknown/keyword"]
    );
    // General mode: the pointer ends with the keyword, unless it names a property.
    assert_eq!(
        keywords(r#"schema/items/$ref: "x.json" refers to another document (x.json)"#),
        ["$ref"]
    );
    assert_eq!(
        keywords("schema/properties/a/maxProperties: maxProperties is not generated"),
        ["maxProperties"]
    );
    assert_eq!(
        keywords("schema/properties/not: the schema admits no value"),
        Vec::<String>::new()
    );
    // A keyword in the prose of the reason, not in the pointer.
    assert_eq!(
        keywords("schema/properties/a/format: format \"uri\""),
        ["format"]
    );
    assert_eq!(
        keywords("schema/properties/items: the schema admits no value"),
        Vec::<String>::new()
    );
    // llguidance: quoted keys first, all of them; prose words only when no key is quoted.
    assert_eq!(
        keywords(r#"Unimplemented keys: ["maxContains", "minContains"]"#),
        ["maxContains", "minContains"]
    );
    assert_eq!(
        keywords("oneOf constraints are not supported. Enable 'coerce_one_of' option"),
        ["oneOf"]
    );
    // Words inside a quoted value are not the error's; the first keyword in order wins.
    assert_eq!(
        keywords("Resource 'https://x.org/y-definitions.json' is not present in a registry"),
        Vec::<String>::new()
    );
    assert_eq!(
        keywords(
            r#"min/maxProperties only supported when all keys listed in "properties" are required"#
        ),
        ["maxProperties"]
    );
    assert_eq!(
        keywords("circular references are not supported: https://x.org/y#/definitions/p"),
        Vec::<String>::new()
    );
    // "not" in prose is not the keyword; what follows "while processing" is a pointer.
    assert_eq!(
        keywords("Reference segment 'x' not found. while processing #/properties/a"),
        Vec::<String>::new()
    );
}
