//! Word boundaries (`\b`, `\B`, `\m`, `\M`) in delimiters, compiled with the Python `regex`
//! module's word characters (docs/word-boundaries.md). The cases of
//! `tests/data/word-boundary.jsonl` (made from `word-boundary.in.jsonl` by
//! `tests/data/make_regressions.py tests/data/word-boundary.in.jsonl
//! tests/data/word-boundary.jsonl` with the reference oracle, transformers 5.24.0) must give the
//! reference's messages and merged events, and streaming must equal one-shot parsing at every
//! split of each output, including inside the multi-byte characters next to a boundary. The
//! router and static-table comparisons of the same cases are in `router.rs` and `statics.rs`.

use parser_runtime::event::merge_chunks;
use parser_runtime::{CompiledTemplate, Event, ResponseParser};
use serde_json::Value;
use workspace_tests::{check_case, compiled_word_boundary};

#[test]
fn word_boundary_cases_match_the_reference() {
    let cases = compiled_word_boundary();
    assert!(cases.len() >= 35, "{} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|(case, _, _)| {
            let result = rtpl::cases::run_case(case, true);
            check_case(case, &result).map(|why| format!("{} ({}): {why}", case["id"], case["note"]))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

type Outcome = Result<(Value, Vec<Event>, Vec<Event>), String>;

/// Parses `text` fed as the given byte pieces (with `feed_bytes`): the message and the merged
/// initial and output events, or the error.
fn run(template: &CompiledTemplate, case: &Value, text: &[u8], cuts: &[usize]) -> Outcome {
    let prefix = case["prefix"].as_str().unwrap_or_default();
    let tools = case["tools"].as_array().cloned().unwrap_or_default();
    let mut parser =
        ResponseParser::with_tools(template, prefix, &tools).map_err(|e| e.to_string())?;
    let initial = parser.initial_events().to_vec();
    let mut events = Vec::new();
    let mut at = 0;
    for &cut in cuts.iter().chain([&text.len()]) {
        events.extend(
            parser
                .feed_bytes(&text[at..cut])
                .map_err(|e| e.to_string())?,
        );
        at = cut;
    }
    let (message, tail) = parser.finalize().map_err(|e| e.to_string())?;
    events.extend(tail);
    Ok((
        Value::Object(message),
        merge_chunks(&initial),
        merge_chunks(&events),
    ))
}

#[test]
fn streaming_equals_one_shot_at_every_split() {
    let mut runs = 0;
    for (case, template, text) in compiled_word_boundary() {
        let bytes = text.as_bytes();
        let one_shot = run(template, case, bytes, &[]);
        let one_byte: Vec<usize> = (1..bytes.len()).collect();
        assert_eq!(
            run(template, case, bytes, &one_byte),
            one_shot,
            "{}: 1-byte chunks",
            case["id"]
        );
        for cut in 0..=bytes.len() {
            assert_eq!(
                run(template, case, bytes, &[cut]),
                one_shot,
                "{}: split at byte {cut}",
                case["id"]
            );
            runs += 1;
        }
        // Splits on both sides of every multi-byte character.
        let around: Vec<usize> = text
            .char_indices()
            .filter(|(_, c)| c.len_utf8() > 1)
            .flat_map(|(i, c)| [i, i + 1, i + c.len_utf8()])
            .collect();
        assert_eq!(
            run(template, case, bytes, &around),
            one_shot,
            "{}: splits around multi-byte characters {around:?}",
            case["id"]
        );
    }
    assert!(runs > 500, "{runs} runs");
}
