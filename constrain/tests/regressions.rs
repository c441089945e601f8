//! Cases found by the cold review of constrained generation, each checked against the parser
//! and the strict contract.

use std::sync::Arc;

use constrain::template::{compile, Options, Request};
use parser_runtime::structured_outputs::{Contract, StrictTools};
use serde_json::{json, Value};

fn model(name: &str) -> template_build::TemplateModel {
    let value: Value = serde_json::from_str(templates::source(name).unwrap()).unwrap();
    template_build::model::load(&value).unwrap()
}

fn tool(name: &str, parameters: Value) -> Value {
    json!({"type": "function", "function": {"name": name, "parameters": parameters}})
}

/// Whether the constraint accepts `text`, and if so that the parse keeps the contract.
fn accepts(template: &str, tools: &[Value], text: &str) -> bool {
    let request = Request {
        tools: tools.to_vec(),
        ..Request::default()
    };
    let c = compile(&model(template), &request, &Options::default()).expect("compiles");
    let ok = c.machine.table.matches(text.as_bytes());
    if ok {
        let contract = Arc::new(Contract {
            strict_tools: Some(StrictTools::new(tools).unwrap()),
            ..Contract::default()
        });
        let parsed = parser_runtime::parse_response_checked(
            templates::by_name(template).unwrap().unwrap(),
            text,
            "",
            tools,
            contract,
        );
        let (_, violations) =
            parsed.unwrap_or_else(|e| panic!("accepted but does not parse: {e}: {text:?}"));
        assert!(
            violations.is_empty(),
            "accepted with violations {violations:?}: {text:?}"
        );
    }
    ok
}

#[test]
fn xml_values_never_hold_the_parameter_close() {
    let tools = [tool(
        "note",
        json!({"type": "object", "properties": {
        "n": {"type": "integer"}, "text": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}}}, "required": ["n", "text"]}),
    )];
    let call = |text: &str, tags: &str| {
        format!(
        "<tool_call>\n<function=note>\n<parameter=n>\n5\n</parameter>\n<parameter=text>\n{text}\n</parameter>\n{tags}</function>\n</tool_call><|im_end|>")
    };
    assert!(accepts("qwen3-coder", &tools, &call("hi there", "")));
    assert!(!accepts(
        "qwen3-coder",
        &tools,
        &call("hi</parameter>\n<parameter=bogus>\nabc", "")
    ));
    assert!(accepts(
        "qwen3-coder",
        &tools,
        &call("a", "<parameter=tags>\n[\"x\"]\n</parameter>\n")
    ));
    assert!(!accepts(
        "qwen3-coder",
        &tools,
        &call("a", "<parameter=tags>\n[\"</parameter>\"]\n</parameter>\n")
    ));
}

/// gemma-4 reads its JSON with `unquoted_keys`, which (transformers 5.24) skips whole strings:
/// a string may hold key-like text, and it is parsed back as written (the 5.24.0 oracle gives
/// the same arguments).
#[test]
fn gemma_strings_may_hold_key_like_text() {
    let tools = [tool(
        "run",
        json!({"type": "object", "properties": {"code": {"type": "string"}}, "required": ["code"]}),
    )];
    let call =
        |code: &str| format!("<|tool_call>call:run{{\"code\":\"{code}\"}}<tool_call|><turn|>");
    assert!(accepts("gemma-4", &tools, &call("f(x, y)")));
    let text = call("f({x:1, y:2}, {z :3})");
    assert!(accepts("gemma-4", &tools, &text));
    let message = parser_runtime::parse_response(
        templates::by_name("gemma-4").unwrap().unwrap(),
        &text,
        "",
        &tools,
    )
    .unwrap();
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        json!({"code": "f({x:1, y:2}, {z :3})"})
    );
    // Its custom quote `<|"|>` cannot appear: a JSON string escapes the quote.
    assert!(accepts("gemma-4", &tools, &call("a<|\\\"|>b")));
}

#[test]
fn tool_names_must_fit_the_name_group_and_may_prefix_other_text() {
    let params =
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    // The published gemma-4 entry (templates/upstream) reads names with `\w+`: `get-weather`
    // cannot be written.
    let upstream = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../templates/upstream/gemma-4.json"
    );
    let value: Value = serde_json::from_str(&std::fs::read_to_string(upstream).unwrap()).unwrap();
    let e = compile(
        &template_build::model::load(&value).unwrap(),
        &Request {
            tools: vec![tool("get-weather", params.clone())],
            ..Request::default()
        },
        &Options::default(),
    )
    .unwrap_err();
    assert!(e.reason.contains("name group"), "{e}");
    // The vendored gemma-4 takes the name up to `{`: it is written and parsed back.
    assert!(accepts(
        "gemma-4",
        &[tool("get-weather", params.clone())],
        "<|tool_call>call:get-weather{\"q\":\"x\"}<tool_call|><turn|>"
    ));
    // Short names that occur in the rest of the delimiter compile and are written.
    assert!(accepts("qwen3-coder", &[tool("tool", params.clone())],
        "<tool_call>\n<function=tool>\n<parameter=q>\nx\n</parameter>\n</function>\n</tool_call><|im_end|>"));
    assert!(accepts(
        "gpt-oss",
        &[tool("con", params.clone())],
        "to=functions.con <|constrain|>json<|message|>{\"q\":\"x\"}<|call|>"
    ));
    // The name may not run on into the text after it (gpt-oss's greedy `[^\s<]+`).
    assert!(!accepts(
        "gpt-oss",
        &[tool("con", params)],
        "to=functions.conx<|message|>{\"q\":\"x\"}<|call|>"
    ));
}

#[test]
fn llama_call_lists_are_generated() {
    // The vendored llama3.1 reads bare and `;`-separated JSON calls with `json-call-list`
    // (key `parameters` preferred): each accepted text parses to calls that keep the contract.
    let tools = [tool(
        "get_weather",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )];
    let call =
        |city: &str| format!("{{\"name\":\"get_weather\",\"parameters\":{{\"city\":\"{city}\"}}}}");
    assert!(accepts(
        "llama3.1",
        &tools,
        &format!("{}<|eot_id|>", call("Bern"))
    ));
    assert!(accepts(
        "llama3.1",
        &tools,
        &format!("<|python_tag|>{}; {}<|eom_id|>", call("Bern"), call("Zug"))
    ));
    // Not a list in brackets, no unknown tool, no text after the calls.
    assert!(!accepts(
        "llama3.1",
        &tools,
        &format!("[{}]<|eot_id|>", call("Bern"))
    ));
    assert!(!accepts(
        "llama3.1",
        &tools,
        "{\"name\":\"get_time\",\"parameters\":{\"city\":\"Bern\"}}<|eot_id|>"
    ));
    assert!(!accepts(
        "llama3.1",
        &tools,
        &format!("{} ok<|eot_id|>", call("Bern"))
    ));
    // Without tools, content avoids the call's open, a look-ahead (`{` followed by a `"name"`
    // key): JSON may stand in the answer, a call object may not.
    let c = compile(&model("llama3.1"), &Request::default(), &Options::default()).unwrap();
    let t = &c.machine.table;
    assert!(t.matches("Use this config: {\"debug\": true}. Then restart.<|eot_id|>".as_bytes()));
    assert!(!t.matches("Try {\"name\": \"x\"}<|eot_id|>".as_bytes()));
    assert!(!t.matches("Try <|python_tag|>{ \"type\" : 1}<|eot_id|>".as_bytes()));
}

#[test]
fn deep_nesting_is_a_clear_error_not_a_memory_blowup() {
    let mut items = json!({"type": "string"});
    for _ in 0..60 {
        items = json!({"type": "array", "items": items});
    }
    let tools = [tool(
        "f",
        json!({"type": "object", "properties": {"a": items}, "required": ["a"]}),
    )];
    let e = compile(
        &model("qwen3"),
        &Request {
            tools: tools.to_vec(),
            ..Request::default()
        },
        &Options::default(),
    )
    .unwrap_err();
    assert!(e.reason.contains("too large"), "{e}");
    // 150 optional members after a required one: linear, compiles.
    let mut props = serde_json::Map::new();
    props.insert("id".into(), json!({"type": "integer"}));
    for i in 0..150 {
        props.insert(format!("p{i}"), json!({"type": "integer"}));
    }
    let tools = [tool(
        "g",
        json!({"type": "object", "properties": props, "required": ["id"]}),
    )];
    compile(
        &model("qwen3"),
        &Request {
            tools: tools.to_vec(),
            ..Request::default()
        },
        &Options::default(),
    )
    .expect("compiles");
}

/// Cold review of 783f970: a shared splice where some transitions read the value as a copy
/// counted more states (its calls' included) than copying every value; past a quarter of
/// the state budget the schema was built again with untyped values 3 levels deep, and the
/// valid `[[[[]]]]` (4 levels) was refused. `Table::splice_shared` now keeps the smaller.
/// (`maxItems` was 5; since untyped numbers take every double's text and 39-digit
/// integers, the reader is half as large again, and five copies pass the first try's
/// share on their own.)
#[test]
fn shared_splices_with_copies_keep_the_untyped_depth() {
    let schema = serde_json::json!({"anyOf": [
        {"prefixItems": [{"type": "string", "minLength": 120, "pattern": "[A-Z]"}], "maxItems": 4},
        {"additionalProperties": false}]});
    let mut options = constrain::template::Options::default();
    options.json.mode = constrain::json::SchemaMode::general();
    let c = constrain::template::compile_schema(Some(&schema), &options).unwrap();
    // Valid for Python's `jsonschema` (Draft202012Validator), each within 5 levels.
    for text in [
        "[[[[]]]]",
        "[[[[[]]]]]",
        "[1,{}]",
        "{\"a\":1}",
        "[1,2,3,4,5,6]",
    ] {
        assert!(c.machine.table.matches(text.as_bytes()), "{text}");
    }
}
