//! The public API contract of the engine: prefix replay, errors after finalize, byte feeding
//! with split UTF-8, batch parsing, required fields. Expected values follow the reference's
//! behaviour (transformers 5.23.0 `ResponseParser`), checked with the oracle where noted.

use std::sync::Arc;

use parser_runtime::structured_outputs::{Contract, StrictTools};
use parser_runtime::{
    parse_response, parse_responses, Event, ParseError, Prefixes, ResponseParser,
};
use serde_json::{json, Value};

fn qwen() -> parser_runtime::CompiledTemplate {
    template_build::compile(&json!({
        "defaults": {"role": "assistant"},
        "start_anchor": "<|im_start|>assistant\n",
        "fields": {
            "reasoning_content": {"open": "<think>", "close": "</think>"},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true, "content": "json",
                           "transform": {"type": "function", "function": "{content}"}},
            "content": {"close": "<|im_end|>"}
        }
    }))
    .expect("template compiles")
}

#[test]
fn prefilled_think_in_prefix_is_replayed_as_initial_events() {
    let t = qwen();
    let prefix = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n";
    let mut p = ResponseParser::new(&t, prefix).unwrap();
    assert_eq!(
        p.initial_events(),
        &[
            Event::RegionOpen {
                field: "reasoning_content".into()
            },
            Event::RegionChunk {
                field: "reasoning_content".into(),
                text: "\n".into(),
                dirty: false
            },
        ]
    );
    p.feed("plan</think>Answer.<|im_end|>").unwrap();
    let (m, _) = p.finalize().unwrap();
    assert_eq!(
        Value::Object(m),
        json!({"role": "assistant", "reasoning_content": "plan", "content": "Answer."})
    );
}

#[test]
fn prefix_is_cut_after_the_last_anchor() {
    let t = qwen();
    // An earlier assistant turn holds an unclosed <think>: it must not leak into this turn.
    let prefix =
        "<|im_start|>assistant\n<think>old<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n";
    let m = parse_response(&t, "new answer", prefix, &[]).unwrap();
    assert_eq!(
        Value::Object(m),
        json!({"role": "assistant", "content": "new answer"})
    );
}

#[test]
fn feed_and_finalize_after_finalize_are_errors() {
    let t = qwen();
    let mut p = ResponseParser::new(&t, "").unwrap();
    p.feed("x").unwrap();
    p.finalize().unwrap();
    assert_eq!(p.feed("more").unwrap_err(), ParseError::Finalized);
    assert_eq!(p.finalize().unwrap_err(), ParseError::Finalized);
    assert_eq!(p.feed_bytes(b"more").unwrap_err(), ParseError::Finalized);
}

#[test]
fn feed_bytes_holds_a_split_character() {
    let t = qwen();
    let text = "<think>Zürich 東京 🎉</think>ok";
    let mut p = ResponseParser::new(&t, "").unwrap();
    let mut chunks = Vec::new();
    for b in text.as_bytes() {
        for e in p.feed_bytes(std::slice::from_ref(b)).unwrap() {
            if let Event::RegionChunk { text, .. } = e {
                chunks.push(text);
            }
        }
    }
    let (m, _) = p.finalize().unwrap();
    assert_eq!(m["reasoning_content"], "Zürich 東京 🎉");
    assert_eq!(m["content"], "ok");
    assert!(chunks.iter().all(|c| !c.is_empty()));
}

#[test]
fn invalid_utf8_is_a_typed_error_with_offset() {
    let t = qwen();
    let mut p = ResponseParser::new(&t, "").unwrap();
    p.feed_bytes(b"abc").unwrap();
    assert_eq!(
        p.feed_bytes(b"d\xffe").unwrap_err(),
        ParseError::InvalidUtf8 { offset: 4 }
    );
}

#[test]
fn output_ending_inside_a_character_is_an_error_at_finalize() {
    let t = qwen();
    let mut p = ResponseParser::new(&t, "").unwrap();
    p.feed_bytes("é".as_bytes().get(..1).unwrap()).unwrap();
    assert_eq!(
        p.finalize().unwrap_err(),
        ParseError::InvalidUtf8 { offset: 0 }
    );
}

#[test]
fn batch_with_broadcast_and_per_output_prefixes() {
    let t = qwen();
    let texts = ["<think>a</think>A", "B"];
    let all = parse_responses(&t, &texts, Prefixes::Broadcast(""), &[]).unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all[0]["content"], "A");
    assert_eq!(all[1]["content"], "B");
    let per = parse_responses(&t, &texts, Prefixes::PerOutput(&["<think>", ""]), &[]).unwrap();
    // The prefix opened reasoning, so the output's own `<think>` is text (reference result).
    assert_eq!(per[0]["reasoning_content"], "<think>a");
    let err = parse_responses(&t, &texts, Prefixes::PerOutput(&[""]), &[]).unwrap_err();
    assert_eq!(
        err,
        ParseError::BatchLengthMismatch {
            outputs: 2,
            prefixes: 1
        }
    );
}

#[test]
fn a_required_field_that_is_missing_is_an_error() {
    let t = template_build::compile(&json!({
        "start_anchor": "A:",
        "fields": {"answer": {"open": "<a>", "close": "</a>", "optional": false}, "rest": {}}
    }))
    .unwrap();
    let err = parse_response(&t, "no answer", "", &[]).unwrap_err();
    assert_eq!(err, ParseError::MissingRequired(vec!["answer".into()]));
}

#[test]
fn a_region_that_fails_to_parse_names_field_and_offset() {
    let t = qwen();
    let err = parse_response(&t, "hi <tool_call>{not json</tool_call>", "", &[]).unwrap_err();
    match err {
        ParseError::Content { field, offset, .. } => {
            assert_eq!(field, "tool_calls");
            assert_eq!(offset, "hi <tool_call>".len());
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn tools_type_arguments_at_close() {
    let t = qwen();
    let tools = vec![
        json!({"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}, "s": {"type": "string"}}}}}),
    ];
    let m = parse_response(
        &t,
        r#"<tool_call>{"name": "f", "arguments": {"n": "7", "s": "7"}}</tool_call>"#,
        "",
        &tools,
    )
    .unwrap();
    assert_eq!(
        m["tool_calls"][0]["function"]["arguments"],
        json!({"n": 7, "s": "7"})
    );
}

#[test]
fn dollar_in_a_trailing_group_matches_before_a_final_newline() {
    // `(?:<\|END\|>|$)`: Python's `$` matches before a final "\n", so the region closes there
    // and the "\n" opens the implicit field again. Reference (oracle.py) on
    // {"id":"x","template":{"start_anchor":"A:","fields":{"content":{"close":"<c>"},
    //  "answer":{"open":"<a>","close_pattern":"(?:<\\|END\\|>|$)"}}},"prefix":"",
    //  "text":"hi <a>Answer.\n"}:
    // message {"answer": "Answer."}; events: content "hi " (value "hi"), answer "Answer."
    // (value "Answer."), content "\n" (value "").
    let t = template_build::compile(&json!({
        "start_anchor": "A:",
        "fields": {
            "content": {"close": "<c>"},
            "answer": {"open": "<a>", "close_pattern": r"(?:<\|END\|>|$)"}
        }
    }))
    .unwrap();
    let text = "hi <a>Answer.\n";
    let m = parse_response(&t, text, "", &[]).unwrap();
    assert_eq!(Value::Object(m), json!({"answer": "Answer."}));
    let chunk = |field: &str, text: &str| Event::RegionChunk {
        field: field.into(),
        text: text.into(),
        dirty: false,
    };
    let open = |field: &str| Event::RegionOpen {
        field: field.into(),
    };
    let close = |field: &str, value: &str| Event::RegionClose {
        field: field.into(),
        value: json!(value),
        violations: Vec::new(),
    };
    let expected = vec![
        open("content"),
        chunk("content", "hi "),
        close("content", "hi"),
        open("answer"),
        chunk("answer", "Answer."),
        close("answer", "Answer."),
        open("content"),
        chunk("content", "\n"),
        close("content", ""),
    ];
    // Streamed a char at a time, too (the close stays pending until the end of output).
    for chunk_chars in [text.len(), 1] {
        let mut p = ResponseParser::new(&t, "").unwrap();
        let mut events = p.initial_events().to_vec();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(chunk_chars) {
            events.extend(p.feed(&piece.iter().collect::<String>()).unwrap());
        }
        let (m, last) = p.finalize().unwrap();
        events.extend(last);
        assert_eq!(Value::Object(m), json!({"answer": "Answer."}));
        let merged = parser_runtime::event::merge_chunks(&events);
        assert_eq!(merged, expected, "chunks of {chunk_chars} chars");
    }
    // Without the final "\n", and with the literal alternative.
    let m = parse_response(&t, "hi <a>Answer.", "", &[]).unwrap();
    assert_eq!(
        Value::Object(m),
        json!({"content": "hi", "answer": "Answer."})
    );
    let m = parse_response(&t, "hi <a>Answer.<|END|>\n", "", &[]).unwrap();
    assert_eq!(Value::Object(m), json!({"answer": "Answer."}));
}

/// The contract of strict `tools`.
fn strict_tools(tools: &[Value]) -> Arc<Contract> {
    Arc::new(Contract {
        strict_tools: Some(StrictTools::new(tools).unwrap()),
        ..Contract::default()
    })
}

/// A tool `name` with one parameter, `param`, a required string.
fn string_tool(name: &str, param: &str) -> Value {
    json!({"type": "function", "function": {"name": name,
    "parameters": {"type": "object", "properties": {param: {"type": "string"}},
                   "required": [param]}}})
}

#[test]
fn contract_violations_ride_on_tool_call_close_events() {
    use parser_runtime::structured_outputs::ViolationKind;
    let root = workspace_tests::workspace_root().join("cli/tests/data");
    let tools: Vec<serde_json::Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("strict-tools.tools.json")).unwrap(),
    )
    .unwrap();
    let text = std::fs::read_to_string(root.join("strict-tools.txt")).unwrap();
    let template = templates::by_name("smollm3").unwrap().unwrap();
    let contract = strict_tools(&tools);
    let mut parser = ResponseParser::with_tools(template, "", &tools).unwrap();
    parser.set_contract(contract.clone());
    let mut closes = Vec::new();
    let mut collect = |events: Vec<Event>| {
        for e in events {
            if let Event::RegionClose {
                field, violations, ..
            } = &e
            {
                let json = serde_json::to_value(&e).unwrap();
                // Conformance shape kept: the key appears only with violations.
                assert_eq!(json.get("violations").is_some(), !violations.is_empty());
                closes.push((field.to_string(), violations.len()));
            }
        }
    };
    for piece in text.as_bytes().chunks(5) {
        collect(parser.feed_bytes(piece).unwrap());
    }
    let (message, tail) = parser.finalize().unwrap();
    collect(tail);
    assert_eq!(
        closes,
        [
            ("thinking".to_string(), 0),
            ("tool_calls".to_string(), 1),
            ("tool_calls".to_string(), 2),
            ("tool_calls".to_string(), 1),
        ]
    );
    let kinds: Vec<ViolationKind> = parser.violations().iter().map(|v| v.kind).collect();
    assert_eq!(
        kinds,
        [
            ViolationKind::UnknownTool,
            ViolationKind::MissingRequired,
            ViolationKind::UnknownParameter,
            ViolationKind::TypeMismatch,
        ]
    );
    // One-shot gives the same violations.
    let (same, violations) =
        parser_runtime::parse_response_checked(template, &text, "", &tools, contract).unwrap();
    assert_eq!(same, message);
    assert_eq!(violations, parser.violations());
}

#[test]
fn a_replaced_tool_call_list_is_checked_again() {
    use parser_runtime::structured_outputs::ViolationKind;
    // command-a's tool_calls field does not repeat: a second action block replaces the list.
    let template = templates::by_name("command-a").unwrap().unwrap();
    let tools = [string_tool("get_weather", "city")];
    let contract = strict_tools(&tools);
    let action = |calls: &str| format!("<|START_ACTION|>{calls}<|END_ACTION|>");
    let text = action(
        r#"[{"tool_call_id": "0", "tool_name": "nope", "parameters": {}},
            {"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": 1}}]"#,
    ) + &action(
        r#"[{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"town": "B"}}]"#,
    );
    let (message, violations) =
        parser_runtime::parse_response_checked(template, &text, "", &tools, contract).unwrap();
    assert_eq!(
        message["tool_calls"].as_array().map(Vec::len),
        Some(1),
        "{message:?}"
    );
    let got: Vec<(ViolationKind, &str)> = violations
        .iter()
        .map(|v| (v.kind, v.pointer.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                ViolationKind::MissingRequired,
                "/tool_calls/0/function/arguments/city"
            ),
            (
                ViolationKind::UnknownParameter,
                "/tool_calls/0/function/arguments/town"
            ),
        ]
    );
}

#[test]
fn only_tool_call_closes_carry_violations() {
    let template = templates::by_name("smollm3").unwrap().unwrap();
    let tools = [string_tool("web_search", "query")];
    let contract = strict_tools(&tools);
    let mut parser = ResponseParser::with_tools(template, "", &tools).unwrap();
    parser.set_contract(contract);
    let text = "<tool_call>\n{\"name\": \"web_search\", \"arguments\": {\"query\": 1}}\n</tool_call>\nDone.<|im_end|>";
    let mut events = parser.feed(text).unwrap();
    events.extend(parser.finalize().unwrap().1);
    let closes: Vec<(String, usize)> = events
        .iter()
        .filter_map(|e| match e {
            Event::RegionClose {
                field, violations, ..
            } => Some((field.to_string(), violations.len())),
            _ => None,
        })
        .collect();
    assert_eq!(
        closes,
        [("tool_calls".to_string(), 1), ("content".to_string(), 0)]
    );
    assert_eq!(parser.violations().len(), 1);
}

/// What a parser reports for one output fed in `size`-byte pieces: the prefix's events, every
/// later event, the message and the contract violations.
type Run = (
    Vec<Event>,
    Vec<Event>,
    parser_runtime::Message,
    Vec<parser_runtime::structured_outputs::Violation>,
);

/// Feeds `text` to `parser` (either form: the function is generic over how it holds the
/// template) and finalizes.
fn run<T>(
    mut parser: parser_runtime::Parser<T>,
    contract: Option<std::sync::Arc<parser_runtime::structured_outputs::Contract>>,
    text: &str,
    size: usize,
) -> Result<Run, ParseError>
where
    T: std::ops::Deref<Target = parser_runtime::CompiledTemplate> + Clone,
{
    if let Some(contract) = contract {
        parser.set_contract(contract);
    }
    let initial = parser.initial_events().to_vec();
    let mut events = Vec::new();
    for piece in text.as_bytes().chunks(size) {
        events.extend(parser.feed_bytes(piece)?);
    }
    let (message, tail) = parser.finalize()?;
    events.extend(tail);
    Ok((initial, events, message, parser.violations().to_vec()))
}

#[test]
fn owned_parsers_on_other_threads_give_the_borrowed_results() {
    use parser_runtime::OwnedResponseParser;
    use std::sync::Arc;
    // A template loaded at run time, shared by one owned parser per stream, each moved into a
    // thread of its own.
    let root = workspace_tests::workspace_root().join("templates");
    let template = Arc::new(template_build::load_file(&root.join("qwen3.json")).unwrap());
    let dir = root.join("fixtures/qwen3");
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".txt").map(String::from)
        })
        .collect();
    stems.sort();
    assert!(stems.len() >= 8, "{stems:?}");
    let streams: Vec<_> = stems
        .iter()
        .map(|stem| {
            let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{stem}{ext}")));
            let prefix = read(".prefix").unwrap_or_default();
            let text = read(".txt").unwrap();
            let tools: Vec<Value> = read(".tools.json")
                .map(|t| serde_json::from_str(&t).unwrap())
                .unwrap_or_default();
            let expected: Value = serde_json::from_str(&read(".expected.json").unwrap()).unwrap();
            let owned =
                OwnedResponseParser::with_tools(Arc::clone(&template), &prefix, &tools).unwrap();
            let thread = {
                let text = text.clone();
                std::thread::spawn(move || run(owned, None, &text, 5))
            };
            (stem, prefix, text, tools, expected, thread)
        })
        .collect();
    for (stem, prefix, text, tools, expected, thread) in streams {
        let borrowed = ResponseParser::with_tools(&template, &prefix, &tools).unwrap();
        let want = run(borrowed, None, &text, 5);
        let got = thread.join().unwrap();
        assert_eq!(got, want, "{stem}");
        match got {
            Ok((_, events, message, _)) => {
                assert!(!events.is_empty(), "{stem}");
                assert_eq!(Value::Object(message), expected, "{stem}");
            }
            Err(_) => assert_eq!(expected, json!({"expect_error": true}), "{stem}"),
        }
    }
}

#[test]
fn an_owned_parser_checks_contracts_like_the_borrowed_one() {
    use parser_runtime::structured_outputs::{Contract, StrictTools};
    use parser_runtime::OwnedResponseParser;
    use std::sync::Arc;
    let root = workspace_tests::workspace_root().join("cli/tests/data");
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(root.join("strict-tools.tools.json")).unwrap(),
    )
    .unwrap();
    let text = std::fs::read_to_string(root.join("strict-tools.txt")).unwrap();
    let template = templates::by_name("smollm3").unwrap().unwrap();
    let contract = Arc::new(Contract {
        strict_tools: Some(StrictTools::new(&tools).unwrap()),
        ..Contract::default()
    });
    let want = run(
        ResponseParser::with_tools(template, "", &tools).unwrap(),
        Some(contract.clone()),
        &text,
        3,
    )
    .unwrap();
    assert_eq!(want.3.len(), 4);
    let owned = OwnedResponseParser::with_tools(Arc::new(template.clone()), "", &tools).unwrap();
    let got = std::thread::spawn(move || run(owned, Some(contract), &text, 3))
        .join()
        .unwrap();
    assert_eq!(got.unwrap(), want);
}

#[test]
fn recycled_feeds_give_the_events_of_plain_feeds() {
    // `feed_into` + `recycle` (what the Python binding does each feed) against `feed`: the
    // same events, message and errors, for every smollm3 fixture, in pieces of 3, 40 and 1000
    // bytes (whole characters): the last give chunk texts too long to be kept for reuse.
    let root = workspace_tests::workspace_root().join("templates");
    let template = template_build::load_file(&root.join("smollm3.json")).unwrap();
    let dir = root.join("fixtures/smollm3");
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".txt").map(String::from)
        })
        .collect();
    stems.sort();
    assert!(!stems.is_empty());
    for stem in &stems {
        let read = |ext: &str| std::fs::read_to_string(dir.join(format!("{stem}{ext}")));
        let prefix = read(".prefix").unwrap_or_default();
        let text = read(".txt").unwrap();
        let tools: Vec<Value> = read(".tools.json")
            .map(|t| serde_json::from_str(&t).unwrap())
            .unwrap_or_default();
        for size in [3, 40, 1000] {
            let pieces = workspace_tests::pieces(&text, size);
            let mut plain = ResponseParser::with_tools(&template, &prefix, &tools).unwrap();
            let mut recycled = ResponseParser::with_tools(&template, &prefix, &tools).unwrap();
            let mut scratch = Vec::new();
            for piece in &pieces {
                let want = plain.feed(piece);
                let got = recycled
                    .feed_into(piece, &mut scratch)
                    .map(|()| scratch.clone());
                recycled.recycle(&mut scratch);
                assert!(scratch.is_empty());
                assert_eq!(got, want, "{stem}, pieces of {size}: {piece:?}");
                if want.is_err() {
                    break;
                }
            }
            assert_eq!(
                recycled.finalize(),
                plain.finalize(),
                "{stem}, pieces of {size}"
            );
        }
    }
}
