//! The no-heap router against the message-building parser: both run the same partial-match
//! engine, so on any output the router's regions (field, routed text, open/close order) must
//! be exactly the `ResponseParser`'s events, whatever the chunking and whichever tables
//! (run-time `CompiledTemplate` or embedded `StaticRoutes`). Plus the prefilter: turning the
//! compiler's prefilter facts off must change nothing, and the router's typed limits.

use parser_runtime::router::{RegionEvent, RegionValue, RouteError, Router};
use parser_runtime::tables::{CompiledTemplate, Owned, Routed};
use parser_runtime::{Event, ResponseParser};
use proptest::prelude::*;
use serde_json::Value;
use workspace_tests::{
    compiled_conformance, compiled_word_boundary, fixture_paths, pieces, push_text, Step,
};

parser_runtime::response_template!(SmolLm3 = "../../templates/smollm3.json");
parser_runtime::response_template!(Llama31 = "../../templates/llama3.1.json");
// Word boundaries: `\bTHINK:`, `\bANSWER\b:?`, `<invoke\b[^>]*?\bname="...">`.
parser_runtime::response_template!(WordBoundary = "../data/word-boundary.json");
parser_runtime::response_template!(Qwen3Coder = "../../templates/qwen3-coder.json");
parser_runtime::response_template!(GptOss = "../../templates/gpt-oss.json");

/// The `ResponseParser`'s steps on `text` in chunks of `size` bytes, or `None` when it fails.
fn parser_steps(template: &CompiledTemplate, text: &str, size: usize) -> Option<Vec<Step>> {
    workspace_tests::parser_steps(template, &pieces(text, size))
}

/// The router's steps over any tables, field ids mapped to names by `name`.
fn router_steps<R: parser_runtime::router::Routes, F: parser_runtime::FieldId>(
    mut router: Router<R, F, 65536>,
    name: impl Fn(F) -> String,
    text: &str,
    size: usize,
) -> Result<Vec<Step>, RouteError> {
    let mut steps = Vec::new();
    let mut on_event = |e: RegionEvent<'_, F>| match e {
        RegionEvent::Open { field, .. } => steps.push(Step::Open(name(field))),
        RegionEvent::Chunk { field, text } => push_text(&mut steps, &name(field), text),
        RegionEvent::Close { field, .. } => steps.push(Step::Close(name(field))),
    };
    for piece in pieces(text, size) {
        router.feed(piece, &mut on_event)?;
    }
    router.finish(&mut on_event)?;
    Ok(steps)
}

fn dynamic_steps(template: &CompiledTemplate, text: &str, size: usize) -> Vec<Step> {
    let router: Router<Routed<'_, Owned>, usize, 65536> =
        Router::new(template.routes()).expect("router");
    router_steps(router, |f| template.fields[f].name.clone(), text, size)
        .unwrap_or_else(|e| panic!("router: {e}"))
}

/// Every fixture text of a vendored template.
fn fixture_texts(name: &str) -> Vec<(String, String)> {
    fixture_paths(name)
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("fixture");
            (path.display().to_string(), text)
        })
        .collect()
}

#[test]
fn router_equals_response_parser_on_every_fixture() {
    let mut compared = 0;
    let mut skipped = 0;
    for name in templates::names() {
        let template = templates::by_name(name)
            .expect("listed")
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (file, text) in fixture_texts(name) {
            for size in [0, 1, 3, 64] {
                let Some(want) = parser_steps(template, &text, size) else {
                    skipped += 1;
                    continue;
                };
                let got = dynamic_steps(template, &text, size);
                assert_eq!(got, want, "{file} in {size}-byte chunks");
                compared += 1;
            }
        }
    }
    assert!(compared >= 600, "{compared} compared, {skipped} skipped");
}

#[test]
fn router_equals_response_parser_on_conformance_outputs() {
    let mut compared = 0;
    for (case, template, text) in compiled_conformance() {
        let text = text.as_str();
        for size in [0, 1, 7] {
            let Some(want) = parser_steps(template, text, size) else {
                continue;
            };
            let router: Router<Routed<'_, Owned>, usize, 65536> =
                Router::new(template.routes()).expect("router");
            match router_steps(router, |f| template.fields[f].name.clone(), text, size) {
                Ok(got) => assert_eq!(got, want, "{} in {size}-byte chunks", case["id"]),
                Err(e) => panic!(
                    "{}: router failed where the parser did not: {e}",
                    case["id"]
                ),
            }
            compared += 1;
        }
    }
    assert!(compared >= 900, "{compared} compared");
}

/// Outputs around the word boundaries of `tests/data/word-boundary.json`: the characters next
/// to each boundary are word or non-word, ASCII or not, and come from a small alphabet so that
/// delimiters and near misses are frequent.
fn word_boundary_output() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "THINK:",
        "ANSWER",
        ":",
        " ",
        "é",
        "東",
        "\u{301}",
        "_",
        "1",
        "x",
        "-",
        "\n",
        "<invoke",
        "<invoke ",
        " name=\"f\">",
        "name=\"",
        "\">",
        "</invoke>",
        "<parameter name=\"a\">1</parameter>",
        ">",
        "ANSWERS",
    ]);
    prop::collection::vec(pieces, 0..24).prop_map(|v| v.concat())
}

#[test]
fn router_equals_response_parser_on_word_boundary_outputs() {
    let mut compared = 0;
    for (case, template, text) in compiled_word_boundary() {
        for size in [0, 1, 2, 3, 7] {
            let Some(want) = parser_steps(template, text, size) else {
                continue;
            };
            let got = dynamic_steps(template, text, size);
            assert_eq!(got, want, "{} in {size}-byte chunks", case["id"]);
            compared += 1;
        }
    }
    assert!(compared >= 150, "{compared} compared");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The embedded tables of a word-boundary template (the `response_template!` item, no
    /// heap) route exactly like the run-time tables and the message-building parser.
    #[test]
    fn word_boundary_router_equals_parser_and_run_time_tables(
        text in word_boundary_output(),
        size in 0usize..5,
    ) {
        static DYNAMIC: std::sync::OnceLock<CompiledTemplate> = std::sync::OnceLock::new();
        let template = WordBoundary::template().unwrap();
        let dynamic = DYNAMIC.get_or_init(|| {
            template_build::load_file(
                &workspace_tests::workspace_root().join("tests/data/word-boundary.json"),
            )
            .unwrap()
        });
        let want = dynamic_steps(dynamic, &text, size);
        let router: Router<_, WordBoundary, 65536> =
            Router::new(WordBoundary::routes().unwrap()).expect("router");
        let got = router_steps(router, |f| f.to_string(), &text, size)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"));
        prop_assert_eq!(&got, &want, "embedded != run time");
        prop_assert_eq!(dynamic_steps(template, &text, size), want.clone(), "lazy tables");
        if let Some(parser) = parser_steps(dynamic, &text, size) {
            prop_assert_eq!(parser, want.clone(), "router != parser");
        }
        // Streaming equals one-shot.
        prop_assert_eq!(dynamic_steps(dynamic, &text, 0), want);
    }
}

#[test]
fn embedded_routes_equal_run_time_tables() {
    fn check<F: parser_runtime::FieldId + std::fmt::Display>(
        name: &str,
        routes: parser_runtime::StaticRoutes<'static>,
        template: &CompiledTemplate,
    ) -> usize {
        let mut n = 0;
        for (file, text) in fixture_texts(name) {
            for size in [0, 1, 5] {
                let want = dynamic_steps(template, &text, size);
                let router: Router<_, F, 65536> = Router::new(routes).expect("router");
                let got = router_steps(router, |f: F| f.to_string(), &text, size)
                    .unwrap_or_else(|e| panic!("{file}: {e}"));
                assert_eq!(
                    got, want,
                    "{file} in {size}-byte chunks: embedded != run time"
                );
                n += 1;
            }
        }
        n
    }
    let mut n = 0;
    n += check::<SmolLm3>(
        "smollm3",
        SmolLm3::routes().unwrap(),
        SmolLm3::template().unwrap(),
    );
    n += check::<Qwen3Coder>(
        "qwen3-coder",
        Qwen3Coder::routes().unwrap(),
        Qwen3Coder::template().unwrap(),
    );
    n += check::<GptOss>(
        "gpt-oss",
        GptOss::routes().unwrap(),
        GptOss::template().unwrap(),
    );
    assert!(n >= 60, "{n} runs");
}

/// `template` with every prefilter removed: the router then starts a walk at every byte that
/// can begin a delimiter, which is the plain algorithm.
fn without_prefilters(template: &CompiledTemplate) -> CompiledTemplate {
    let mut plain = template.clone();
    for f in &mut plain.fields {
        for d in f.open.iter_mut().chain(f.close.iter_mut()) {
            for b in &mut d.branches {
                b.prefilter = None;
            }
        }
    }
    plain
}

#[test]
fn prefilters_change_nothing_on_conformance_outputs() {
    let mut with_prefilter = 0;
    for (case, template, text) in compiled_conformance() {
        let text = text.as_str();
        let uses = template.fields.iter().any(|f| {
            f.open
                .iter()
                .chain(f.close.iter())
                .any(|d| d.branches.iter().any(|b| b.prefilter.is_some()))
        });
        with_prefilter += usize::from(uses);
        let plain = without_prefilters(template);
        for size in [0, 1, 5] {
            assert_eq!(
                dynamic_steps(template, text, size),
                dynamic_steps(&plain, text, size),
                "{} in {size}-byte chunks",
                case["id"]
            );
        }
    }
    assert!(
        with_prefilter >= 300,
        "{with_prefilter} cases use a prefilter"
    );
}

/// Outputs built from pieces of the delimiters of lead-run templates (`\s*<tool_call>`),
/// whitespace and text: the prefilter's corner cases (runs of lead bytes, partial
/// delimiters, look-alikes).
fn tricky_output() -> impl Strategy<Value = String> {
    const LITERALS: &[&str] = &[
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        "<|im_end|>",
        "<tool_",
        "<",
        " ",
        "\n\n",
        "\u{a0}",
        "\u{3000}",
        "{\"name\": \"f\", \"arguments\": {}}",
    ];
    // Each literal as likely as the text run, as with one `Just` per literal.
    let piece = prop_oneof![
        12 => proptest::sample::select(LITERALS).prop_map(str::to_owned),
        1 => "[a-z ]{0,6}",
    ];
    proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn prefilters_change_nothing_on_tricky_outputs(text in tricky_output(), size in 0usize..6) {
        for name in ["smollm3", "qwen3", "hermes", "minimax-m2", "kimi-k2"] {
            let template = templates::by_name(name).expect("listed").expect("tables");
            let plain = without_prefilters(template);
            prop_assert_eq!(
                dynamic_steps(template, &text, size),
                dynamic_steps(&plain, &text, size),
                "{}", name
            );
        }
    }
}

#[test]
fn a_delimiter_that_outgrows_the_hold_buffer_is_a_typed_error() {
    // `[^<]*<\|x\|>` may match from the first byte on: everything is held until it resolves.
    let template = template_build::compile_str(
        r#"{"start_anchor": "<s>", "fields": {"content": {"content": "text"},
            "x": {"open_pattern": "[^<]*<\\|x\\|>", "close": "<|/x|>", "content": "text"}}}"#,
    )
    .expect("template");
    let mut router: Router<Routed<'_, Owned>, usize, 16> = Router::new(template.routes()).unwrap();
    router.feed("0123456789", |_| {}).expect("fits");
    assert_eq!(router.held(), 10);
    let err = router.feed("abcdefghij", |_| {}).unwrap_err();
    // 16 bytes held and the 17th does not fit.
    assert_eq!(
        err,
        RouteError::HoldOverflow {
            offset: 0,
            held: 17,
            limit: 16
        }
    );
    // The error is final: nothing is routed after it.
    let mut after = 0;
    assert_eq!(router.feed("<|x|>in<|/x|>", |_| after += 1), Err(err));
    assert_eq!(router.finish(|_| after += 1), Err(err));
    assert_eq!(after, 0);
    // With room, the same text routes, nothing lost.
    let mut text = String::new();
    let mut router: Router<Routed<'_, Owned>, usize, 64> = Router::new(template.routes()).unwrap();
    for piece in ["0123456789", "abcdefghij", "<|x|>in<|/x|>"] {
        router
            .feed(piece, |e| {
                if let RegionEvent::Chunk { text: t, .. } = e {
                    text.push_str(t);
                }
            })
            .unwrap();
    }
    router.finish(|_| {}).unwrap();
    assert_eq!(text, "in");
}

#[test]
fn too_many_pending_walks_or_delimiters_is_a_typed_error() {
    // `<x><y>` over `<x><`: one walk from byte 0 (after `<x><`) and one from byte 3 (after
    // `<`), in different DFA states: two walks of one delimiter.
    let template = template_build::compile_str(
        r#"{"start_anchor": "<s>", "fields": {"content": {"content": "text"},
            "x": {"open": "<x><y>", "close": "</x>", "content": "text"}}}"#,
    )
    .expect("template");
    let mut router: Router<Routed<'_, Owned>, usize, 64, 1> =
        Router::new(template.routes()).unwrap();
    let err = router.feed("<x><", |_| {}).unwrap_err();
    assert_eq!(
        err,
        RouteError::TooManyWalks {
            offset: 3,
            limit: 1
        }
    );
    let mut text = String::new();
    let mut router: Router<Routed<'_, Owned>, usize, 64, 2> =
        Router::new(template.routes()).unwrap();
    let mut on_event = |e: RegionEvent<'_, usize>| {
        if let RegionEvent::Chunk { field, text: t } = e {
            text.push_str(&format!("{field}:{t} "));
        }
    };
    router.feed("<x><", &mut on_event).unwrap();
    router.feed("x><y>in</x>", &mut on_event).unwrap();
    router.finish(&mut on_event).unwrap();
    assert_eq!(text, "0:<x> 1:in ");
    assert_eq!(router.feed("more", |_| {}), Err(RouteError::Finished));

    // Two opens watched at once need a capacity of two.
    let two = template_build::compile_str(
        r#"{"start_anchor": "<s>", "fields": {"content": {"content": "text"},
            "a": {"open": "<a>", "close": "</a>", "content": "text"},
            "b": {"open": "<b>", "close": "</b>", "content": "text"}}}"#,
    )
    .expect("template");
    let err = Router::<Routed<'_, Owned>, usize, 64, 1>::new(two.routes()).unwrap_err();
    assert_eq!(err, RouteError::TooManyDelimiters { limit: 1 });
}

#[test]
fn close_events_give_body_spans_and_values() {
    let text = "<think>\nplan\n</think>\nHi <tool_call>{\"name\": \"f\"}</tool_call>";
    let mut closes = Vec::new();
    let mut router = SmolLm3::router::<128>().unwrap();
    let mut on_event = |e: RegionEvent<'_, SmolLm3>| {
        if let RegionEvent::Close { field, body, value } = e {
            let value = match value {
                RegionValue::Text(s) => format!("text {:?}", &text[s.start..s.end]),
                RegionValue::Raw(s) => format!("raw {:?}", &text[s.start..s.end]),
                other => format!("{other:?}"),
            };
            closes.push((field, &text[body.start..body.end], value));
        }
    };
    for piece in pieces(text, 3) {
        router.feed(piece, &mut on_event).unwrap();
    }
    router.finish(&mut on_event).unwrap();
    // SmolLM3: thinking and content are `text` (stripped), tool calls `json` (raw).
    assert_eq!(
        closes,
        [
            (SmolLm3::Thinking, "\nplan\n", "text \"plan\"".to_string()),
            (SmolLm3::Content, "\nHi", "text \"Hi\"".to_string()),
            (
                SmolLm3::ToolCalls,
                "{\"name\": \"f\"}",
                "raw \"{\\\"name\\\": \\\"f\\\"}\"".to_string()
            ),
        ]
    );
}

#[test]
fn json_call_lists_are_raw_bodies_without_a_heap() {
    // `json-call-list` is structured: the no-heap router gives the whole body of the calls as
    // `Raw`, in any chunking, and the alloc parser reads both calls from that one region.
    let text = "Both.<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": \"}<x>\"}}; \
                {\"name\": \"g\", \"parameters\": {}}<|eom_id|>";
    let body_start = text.find('{').unwrap();
    let body_end = text.find("<|eom_id|>").unwrap();
    for size in [1, 3, text.len()] {
        let mut raw = Vec::new();
        let mut router = Llama31::router::<256>().unwrap();
        let mut on_event = |e: RegionEvent<'_, Llama31>| {
            if let RegionEvent::Close {
                field: Llama31::ToolCalls,
                value: RegionValue::Raw(s),
                ..
            } = e
            {
                raw.push((s.start, s.end));
            }
        };
        for piece in pieces(text, size) {
            router.feed(piece, &mut on_event).unwrap();
        }
        router.finish(&mut on_event).unwrap();
        assert_eq!(raw, [(body_start, body_end)], "chunks of {size}");
    }
    let message = Llama31::parse_response(text, "").unwrap();
    assert_eq!(
        message["tool_calls"],
        serde_json::json!([
            {"type": "function", "function": {"name": "f", "arguments": {"a": "}<x>"}}},
            {"type": "function", "function": {"name": "g", "arguments": {}}}
        ])
    );
    assert_eq!(message["content"], "Both.");
}

/// The value the router gives for a region, as the JSON the content parser gives (`None`:
/// nothing to compare: a raw body, or past the router's limits).
fn router_value_json(text: &str, value: RegionValue) -> Option<Value> {
    match value {
        RegionValue::Text(s) => Some(Value::String(text[s.start..s.end].to_string())),
        RegionValue::Int(i) => Some(serde_json::json!(i)),
        RegionValue::Float(f) => serde_json::Number::from_f64(f).map(Value::Number),
        RegionValue::Bool(b) => Some(Value::Bool(b)),
        RegionValue::Raw(_) | RegionValue::Unsupported(_) => None,
        RegionValue::Invalid(_) => Some(Value::String("<invalid>".into())),
    }
}

#[test]
fn region_values_equal_the_content_parsers() {
    let mut compared = 0;
    let mut invalid = 0;
    for (case, template, text) in compiled_conformance() {
        let text = text.as_str();
        // The content parser's values, in close order, for fields without a transform (the
        // router gives the parser's result, before transforms).
        let mut parser = ResponseParser::new(template, "").unwrap();
        parser.set_hold_limit(usize::MAX);
        let mut want: Vec<(String, Value)> = Vec::new();
        let mut failed = false;
        match parser.feed(text) {
            Ok(events) => want.extend(events.into_iter().filter_map(close_value)),
            Err(_) => failed = true,
        }
        if !failed {
            match parser.finalize() {
                Ok((_, events)) => want.extend(events.into_iter().filter_map(close_value)),
                Err(_) => failed = true,
            }
        }
        let mut got: Vec<(String, Option<Value>)> = Vec::new();
        let mut router: Router<Routed<'_, Owned>, usize, 65536> =
            Router::new(template.routes()).unwrap();
        let mut on_event = |e: RegionEvent<'_, usize>| {
            if let RegionEvent::Close { field, value, .. } = e {
                got.push((
                    template.fields[field].name.clone(),
                    router_value_json(text, value),
                ));
            }
        };
        router.feed(text, &mut on_event).unwrap();
        router.finish(&mut on_event).unwrap();
        for (i, (name, value)) in got.iter().enumerate() {
            let field = template.fields.iter().find(|f| &f.name == name).unwrap();
            if field.transform.is_some() {
                continue;
            }
            match (value, want.get(i)) {
                (Some(Value::String(s)), _) if s == "<invalid>" => {
                    // The parser must have failed on this region (int/float not a literal).
                    assert!(
                        failed && i == want.len(),
                        "{}: router says invalid",
                        case["id"]
                    );
                    invalid += 1;
                }
                (Some(v), Some((wname, w))) => {
                    assert_eq!((name, v), (wname, w), "{} region {i}", case["id"]);
                    compared += 1;
                }
                (Some(_), None) => assert!(failed, "{}: region {i} missing", case["id"]),
                (None, _) => {}
            }
        }
    }
    assert!(
        compared >= 500,
        "{compared} values compared, {invalid} invalid"
    );
}

#[test]
fn scalar_values_follow_python() {
    let template = template_build::compile_str(
        r#"{"start_anchor": "<s>", "fields": {
            "content": {"content": "text", "content_args": {"strip": false}},
            "i": {"open": "<i>", "close": "</i>", "content": "int"},
            "f": {"open": "<f>", "close": "</f>", "content": "float"},
            "b": {"open": "<b>", "close": "</b>", "content": "bool"},
            "n": {"open": "<n>", "close": "</n>", "content": "int",
                  "content_args": {"strip": false}},
            "c": {"open": "<c>", "close": "</c>", "content": "bool",
                  "content_args": {"strip": false}}}}"#,
    )
    .expect("template");
    let value_of = |body: &str| {
        let mut values = Vec::new();
        let mut router: Router<Routed<'_, Owned>, usize, 256> =
            Router::new(template.routes()).unwrap();
        let mut on_event = |e: RegionEvent<'_, usize>| {
            if let RegionEvent::Close { value, .. } = e {
                values.push(value);
            }
        };
        for piece in pieces(body, 2) {
            router.feed(piece, &mut on_event).unwrap();
        }
        router.finish(&mut on_event).unwrap();
        values.first().copied()
    };
    let span = |start, end| parser_runtime::Span { start, end };
    // Python: int(" 1_2 ") == 12; int("-9223372036854775808") fits i64; int("abc") raises;
    // an int of 30 digits is past i64; float("1e400") == inf; "TRUE".lower() == "true".
    assert_eq!(value_of("<i> 1_2 </i>"), Some(RegionValue::Int(12)));
    assert_eq!(
        value_of("<i>-9223372036854775808</i>"),
        Some(RegionValue::Int(i64::MIN))
    );
    assert_eq!(value_of("<i>\u{663}</i>"), Some(RegionValue::Int(3)));
    assert_eq!(
        value_of("<i> abc </i>"),
        Some(RegionValue::Invalid(span(4, 7)))
    );
    assert_eq!(
        value_of(&format!("<i>{}</i>", "9".repeat(30))),
        Some(RegionValue::Unsupported(span(3, 33)))
    );
    assert_eq!(
        value_of(&format!("<f>{}</f>", "1".repeat(80))),
        Some(RegionValue::Unsupported(span(3, 83)))
    );
    assert_eq!(
        value_of("<f>1e400</f>"),
        Some(RegionValue::Float(f64::INFINITY))
    );
    assert_eq!(value_of("<f>\n2.5\n</f>"), Some(RegionValue::Float(2.5)));
    assert_eq!(value_of("<b> TRUE </b>"), Some(RegionValue::Bool(true)));
    assert_eq!(value_of("<b>1</b>"), Some(RegionValue::Bool(true)));
    assert_eq!(value_of("<b>yes</b>"), Some(RegionValue::Bool(false)));
    assert_eq!(
        value_of(&format!("<b>{}</b>", " ".repeat(100) + "true")),
        Some(RegionValue::Bool(true))
    );
    // Whitespace the parser ignores does not count against the 64-byte buffer, wherever it
    // is: Python gives int("42" + 70 spaces) == 42, float("2.5" + 70 newlines) == 2.5,
    // "true" + 70 spaces stripped == "true", int(70 spaces + "7") == 7 (int strips itself).
    let pad = " ".repeat(70);
    assert_eq!(
        value_of(&format!("<i>42{pad}</i>")),
        Some(RegionValue::Int(42))
    );
    assert_eq!(
        value_of(&format!("<f>2.5{}</f>", "\n".repeat(70))),
        Some(RegionValue::Float(2.5))
    );
    assert_eq!(
        value_of(&format!("<b>true{pad}</b>")),
        Some(RegionValue::Bool(true))
    );
    assert_eq!(
        value_of(&format!("<n>{pad}7</n>")),
        Some(RegionValue::Int(7))
    );
    assert_eq!(
        value_of(&format!("<n>{pad}7{pad}</n>")),
        Some(RegionValue::Int(7))
    );
    // Inside the text whitespace counts: "4" + 70 spaces + "2" is 72 bytes after stripping.
    assert_eq!(
        value_of(&format!("<i>4{pad}2</i>")),
        Some(RegionValue::Unsupported(span(3, 75)))
    );
    assert_eq!(
        value_of("<i>4 2</i>"),
        Some(RegionValue::Invalid(span(3, 6)))
    );
    // `bool` without `strip` compares the raw body: " true" is not "true".
    assert_eq!(value_of("<c> true</c>"), Some(RegionValue::Bool(false)));
    assert_eq!(value_of("<c>TRUE</c>"), Some(RegionValue::Bool(true)));
    // `strip: false`: the raw body.
    assert_eq!(value_of(" x "), Some(RegionValue::Text(span(0, 3))));
}

fn close_value(e: Event) -> Option<(String, Value)> {
    match e {
        Event::RegionClose { field, value, .. } => Some((field.to_string(), value)),
        _ => None,
    }
}

#[test]
fn generated_items_expose_tables_without_a_heap() {
    let routes = SmolLm3::routes().unwrap();
    assert_eq!(routes.template().fields.len(), SmolLm3::FIELDS.len());
    assert!(std::ptr::eq(routes.template(), &SmolLm3::tables().template));
    let _: Value = serde_json::json!(SmolLm3::FIELDS.len());
}
