//! The deliberate differences from the reference (README, "Deliberate differences"), each
//! pinned by a test. Reference results quoted here were produced with
//! `shared/oracle/oracle.py` (transformers 5.23.0).

use parser_runtime::{Event, ResponseParser};
use serde_json::{json, Value};

fn think_template() -> parser_runtime::CompiledTemplate {
    template_build::compile(&json!({
        "defaults": {"role": "assistant"},
        "start_anchor": "<|assistant|>",
        "fields": {
            "thinking": {"open_pattern": "<think>(?:\\n\\n)?", "close": "</think>", "content_args": {"strip": false}},
            "content": {}
        }
    }))
    .unwrap()
}

/// A template anchored at `S` with the field `name` (`field`) before a plain content field.
fn with_field(
    name: &str,
    field: Value,
) -> Result<parser_runtime::CompiledTemplate, template_build::TemplateErrors> {
    template_build::compile(&json!({"start_anchor": "S", "fields": {name: field, "content": {}}}))
}

fn run(t: &parser_runtime::CompiledTemplate, chunks: &[&str]) -> Value {
    let mut p = ResponseParser::new(t, "").unwrap();
    for c in chunks {
        p.feed(c).unwrap();
    }
    Value::Object(p.finalize().unwrap().0)
}

/// Difference 1: streaming equals one-shot. With an optional suffix in the open pattern the
/// reference's partial regex commits the short match `<think>` when a chunk ends inside the
/// suffix: chunked it gives `"thinking": "\n\nplan"`, one-shot `"plan"`. We give `"plan"` for
/// both.
#[test]
fn optional_suffix_split_by_a_chunk_gives_the_one_shot_result() {
    let t = think_template();
    let one_shot = run(&t, &["<think>\n\nplan</think>answer"]);
    assert_eq!(
        one_shot,
        json!({"role": "assistant", "thinking": "plan", "content": "answer"})
    );
    assert_eq!(run(&t, &["<think>\n", "\nplan</think>answer"]), one_shot);
}

/// Difference 2: a complete regex delimiter that cannot grow is committed in the same feed
/// (the reference waits for one more chunk for any regex delimiter).
#[test]
fn regex_delimiter_that_cannot_grow_commits_at_once() {
    let t = with_field(
        "call",
        json!({"open_pattern": "<call name=(?P<name>\\w+)>", "close_pattern": "</call>", "transform": {"name": "{name}", "body": "{content}"}}),
    )
    .unwrap();
    let mut p = ResponseParser::new(&t, "").unwrap();
    let events = p.feed("<call name=f>x</call>").unwrap();
    assert_eq!(
        events.last(),
        Some(&Event::RegionClose {
            field: "call".into(),
            value: json!({"name": "f", "body": "x"}),
            violations: Vec::new(),
        }),
        "{events:?}"
    );
    // A greedy delimiter at the buffer end may still grow: it is held.
    let t = with_field("a", json!({"open_pattern": "<a>\\s*", "close": "</a>"})).unwrap();
    let mut p = ResponseParser::new(&t, "").unwrap();
    assert!(p.feed("<a> ").unwrap().is_empty());
    assert_eq!(
        p.feed("x").unwrap()[0],
        Event::RegionOpen { field: "a".into() }
    );
}

/// Difference 4: template flags are typed. The reference reads `repeats`/`optional` with
/// Python truthiness (`"optional": "false"` makes a field required); here they must be bools.
#[test]
fn non_bool_flags_are_template_errors() {
    let string_flag = json!({"open": "<a>", "close": "</a>", "optional": "false"});
    let err = with_field("a", string_flag).unwrap_err();
    assert_eq!(err.0[0].path, "fields.a.optional");
    assert_eq!(err.0[0].kind, template_build::TemplateErrorKind::WrongType);
}

/// Difference 6: a group name defined more than once is merged as the `regex` module merges
/// it (the copy that closed last wins; `tests/data/reference-5.24.jsonl`, `dup_*`), except
/// with a backreference to it or a copy inside a look-around, which are load-time errors. The
/// reference (transformers 5.24.0) runs this `tag_pattern` on `<a>1</a>[b=2]` and gives
/// `{"a": "1", "b": "2"}`.
#[test]
fn names_defined_twice_with_a_backreference_or_in_a_look_around_are_refused() {
    use template_build::{Construct, RegexIssueKind, TemplateErrorKind};
    let refused = TemplateErrorKind::Regex(RegexIssueKind::Unsupported(Construct::DuplicateName));
    let tag_pattern =
        r"<(?P<key>\w+)>(?P<value>[^<]*)</(?P=key)>|\[(?P<key>\w+)=(?P<value>[^\]]*)\]";
    let xml = json!({"open": "<p>", "close": "</p>", "content": "xml-inline",
                     "content_args": {"tag_pattern": tag_pattern}});
    let err = with_field("params", xml).unwrap_err();
    assert_eq!(err.0[0].path, "fields.params.content_args.tag_pattern");
    assert_eq!(err.0[0].kind, refused);
    assert!(
        err.0[0].reason.contains("backreference `(?P=key)`"),
        "{err}"
    );
    let look = json!({"open_pattern": "<(?P<n>\\w+)(?=(?P<n>>))", "close": "</a>", "transform": {"n": "{n}"}});
    let err = with_field("a", look).unwrap_err();
    assert_eq!(err.0[0].path, "fields.a.open_pattern");
    assert_eq!(err.0[0].kind, refused);
    // Without those, the copies are merged: the later one wins here.
    let merged = json!({"open_pattern": "<(?P<n>\\w+)(?: as (?P<n>\\w+))?>", "close": "</a>", "transform": {"n": "{n}"}});
    let t = with_field("a", merged).unwrap();
    assert_eq!(
        run(&t, &["S<f as g>x</a>"]),
        json!({"content": "S", "a": {"n": "g"}})
    );
}

/// Difference 5: a message is JSON. Python's `json` accepts `NaN` and unbounded integers and
/// the reference returns them; here such a region is a typed parse error (or, with
/// `allow_non_json`, its text), never a silently different number.
#[test]
fn non_json_numbers_are_errors_not_silent_changes() {
    let json_region = json!({"open": "<d>", "close": "</d>", "content": "json"});
    let t = with_field("data", json_region).unwrap();
    let mut p = ResponseParser::new(&t, "").unwrap();
    assert!(p.feed("<d>[NaN]</d>").is_err());
}

/// Difference 10: under strict tools, argument typing reads a parameter's types through `$ref`
/// and from an untyped `enum`. The reference (`_schema_types`) reads only `type` and
/// `anyOf`/`oneOf`: on this Qwen3-Coder output with these tools the oracle gives
/// `{"hour": "7", "repeat": "2", "label": "5", "mode": "daily"}`, every value a string. That is
/// what we give without a contract; with strict tools the integers are cast, and the call has
/// no violation.
#[test]
fn strict_tools_type_arguments_through_refs_and_enums() {
    use parser_runtime::structured_outputs::{Contract, StrictTools};
    let template = templates::by_name("qwen3-coder").unwrap().unwrap();
    let tools = [
        json!({"type": "function", "function": {"name": "set_alarm", "parameters": {
        "type": "object",
        "properties": {"hour": {"$ref": "#/$defs/Hour"}, "repeat": {"enum": [1, 2, 7]},
                       "label": {"type": "string"}, "mode": {"enum": ["once", "daily"]}},
        "required": ["hour"],
        "$defs": {"Hour": {"type": "integer"}}}}}),
    ];
    let text = "<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n\
                <parameter=repeat>\n2\n</parameter>\n<parameter=label>\n5\n</parameter>\n\
                <parameter=mode>\ndaily\n</parameter>\n</function>\n</tool_call>";
    let arguments =
        |m: &serde_json::Map<String, Value>| m["tool_calls"][0]["function"]["arguments"].clone();
    let plain = parser_runtime::parse_response(template, text, "", &tools).unwrap();
    assert_eq!(
        arguments(&plain),
        json!({"hour": "7", "repeat": "2", "label": "5", "mode": "daily"})
    );
    let contract = std::sync::Arc::new(Contract {
        strict_tools: Some(StrictTools::new(&tools).unwrap()),
        ..Contract::default()
    });
    let (message, violations) =
        parser_runtime::parse_response_checked(template, text, "", &tools, contract).unwrap();
    assert_eq!(
        arguments(&message),
        json!({"hour": 7, "repeat": 2, "label": "5", "mode": "daily"})
    );
    assert_eq!(violations, []);
}
