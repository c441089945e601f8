//! Lenient mode (`ParserOptions::lenient`; README, "Lenient mode"): the cases of
//! `tests/data/lenient.jsonl`, each on a vendored template, one-shot and in 1-byte chunks.
//!
//! A case gives the output (`text`, `prefix`, `tools`, or `fixture`: the stem of a fixture of
//! that template), the lenient message (`expected`, or `expected_file`), the lenient-only
//! events in order (`events`: `region_malformed` with `error` a prefix of the error text,
//! `region_truncated`), what the default mode does with it (`default`: `error`, `same` or
//! `differs`) and where the expectation comes from (`source`). The expected messages come from
//! what the output means, not from our own output.

use parser_runtime::event::merge_chunks;
use parser_runtime::{Event, ParseError, ParserOptions, ReasoningCalls, ResponseParser};
use serde_json::Value;
use workspace_tests::{read_jsonl, workspace_root};

/// One run: the message and every event (prefix replay included), or the error.
pub(crate) fn run(
    template: &parser_runtime::CompiledTemplate,
    case: &Value,
    options: ParserOptions,
    chunk: usize,
) -> Result<(Value, Vec<Event>), ParseError> {
    let (text, prefix, tools) = case_input(case);
    let mut parser = ResponseParser::with_options(template, &prefix, &tools, options)?;
    let mut events = parser.initial_events().to_vec();
    for piece in text.as_bytes().chunks(chunk.max(1)) {
        events.extend(parser.feed_bytes(piece)?);
    }
    let (message, last) = parser.finalize()?;
    events.extend(last);
    Ok((Value::Object(message), events))
}

/// The output, prefix and tools of a case.
fn case_input(case: &Value) -> (String, String, Vec<Value>) {
    let name = case["template"].as_str().unwrap();
    let read = |stem: &str, ext: &str| {
        std::fs::read_to_string(
            workspace_root()
                .join("templates/fixtures")
                .join(name)
                .join(format!("{stem}{ext}")),
        )
    };
    if let Some(stem) = case["fixture"].as_str() {
        let text = read(stem, ".txt").unwrap();
        let prefix = read(stem, ".prefix").unwrap_or_default();
        let tools = read(stem, ".tools.json")
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or_default();
        return (text, prefix, tools);
    }
    let tools = case["tools"].as_array().cloned().unwrap_or_default();
    (
        case["text"].as_str().unwrap().to_owned(),
        case["prefix"].as_str().unwrap_or("").to_owned(),
        tools,
    )
}

/// The lenient-only events of a run.
fn lenient_events(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::RegionMalformed { .. } | Event::RegionTruncated { .. }
            )
        })
        .collect()
}

/// Whether `got` is the expected event `want` (`error`: a prefix of the error text).
fn event_matches(got: &Event, want: &Value) -> bool {
    let got = serde_json::to_value(got).unwrap();
    let same = |key: &str| got[key] == want[key];
    same("type")
        && same("field")
        && same("text")
        && match (got["error"].as_str(), want["error"].as_str()) {
            (Some(g), Some(w)) => g.starts_with(w),
            (None, None) => true,
            _ => false,
        }
}

/// Lenient options, with the case's `options` (`reasoning_calls`: `keep` or `extract`).
pub(crate) fn lenient(case: &Value) -> ParserOptions {
    ParserOptions {
        lenient: true,
        reasoning_calls: match case["options"]["reasoning_calls"].as_str() {
            Some("extract") => ReasoningCalls::Extract,
            _ => ReasoningCalls::Keep,
        },
        ..ParserOptions::default()
    }
}

#[test]
fn lenient_cases() {
    let cases = read_jsonl(&workspace_root().join("tests/data/lenient.jsonl"));
    assert!(cases.len() >= 7);
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let template = template_build::load_file(
            &workspace_root()
                .join("templates")
                .join(format!("{}.json", case["template"].as_str().unwrap())),
        )
        .unwrap();
        let expected: Value = match case["expected_file"].as_str() {
            Some(path) => {
                serde_json::from_str(&std::fs::read_to_string(workspace_root().join(path)).unwrap())
                    .unwrap()
            }
            None => case["expected"].clone(),
        };
        let want_events = case["events"].as_array().unwrap();
        let mut streams = Vec::new();
        for chunk in [usize::MAX, 1] {
            let (message, events) = match run(&template, case, lenient(case), chunk) {
                Ok(r) => r,
                Err(e) => {
                    failures.push(format!("{name} ({chunk}): lenient run failed: {e}"));
                    continue;
                }
            };
            if message != expected {
                failures.push(format!(
                    "{name} ({chunk}):\n  want {expected}\n  got  {message}"
                ));
            }
            let got = lenient_events(&events);
            if got.len() != want_events.len()
                || !got
                    .iter()
                    .zip(want_events)
                    .all(|(g, w)| event_matches(g, w))
            {
                failures.push(format!(
                    "{name} ({chunk}): events {got:?}, want {want_events:?}"
                ));
            }
            streams.push(merge_chunks(&events));
        }
        if streams.len() == 2 && streams[0] != streams[1] {
            failures.push(format!("{name}: 1-byte events differ from one-shot"));
        }
        // What the default mode does with the same output.
        let default = run(&template, case, ParserOptions::default(), usize::MAX);
        let ok = match (case["default"].as_str(), &default) {
            (Some("error"), Err(_)) => true,
            (Some("same"), Ok((m, _))) => *m == expected,
            (Some("differs"), Ok((m, _))) => *m != expected,
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{name}: default mode gave {:?}, the case says {}",
                default.map(|r| r.0),
                case["default"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The compiler marks the regions whose closes lenient mode keeps out of JSON strings: a
/// `json` region with `"` strings, not one with `string_delims` (gemma-4's `<|"|>`), never
/// the outside list.
#[test]
fn compiler_marks_json_regions() {
    let load = |name: &str| {
        template_build::load_file(&workspace_root().join(format!("templates/{name}.json"))).unwrap()
    };
    let field = |t: &parser_runtime::CompiledTemplate, name: &str| {
        t.fields.iter().position(|f| f.name == name).unwrap()
    };
    let hermes = load("hermes");
    assert!(
        hermes
            .watch(Some(field(&hermes, "tool_calls")))
            .unwrap()
            .json_strings
    );
    assert!(
        !hermes
            .watch(Some(field(&hermes, "reasoning_content")))
            .unwrap()
            .json_strings
    );
    assert!(!hermes.watch(None).unwrap().json_strings);
    let gemma = load("gemma-4");
    assert!(
        !gemma
            .watch(Some(field(&gemma, "tool_calls")))
            .unwrap()
            .json_strings
    );
}
