//! Each violation kind and each strict-tools guarantee, on hand-built messages. Expected
//! values follow the structured-outputs source document (`../shared/SEEDS.md` part 2) and JSON
//! Schema draft 2020-12.

use serde_json::{json, Value};
use structured_outputs::{Contract, ResponseFormat, StrictTools, ViolationKind};

fn message(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().expect("object").clone()
}

fn kinds(contract: &Contract, m: Value) -> Vec<(ViolationKind, String)> {
    contract
        .check(&message(m))
        .into_iter()
        .map(|v| (v.kind, v.pointer))
        .collect()
}

fn weather_tools() -> StrictTools {
    StrictTools::new(&[json!({"type": "function", "function": {
    "name": "get_weather",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "pattern": "[A-Z][a-z]+"},
            "unit": {"enum": ["C", "F"]},
            "days": {"type": "integer"},
            "when": {"type": "string", "format": "date"},
            "source": {"const": "api"},
            "place": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "options": {"type": "object", "properties": {"hourly": {"type": "boolean"}},
                        "required": ["hourly"], "additionalProperties": false}
        },
        "required": ["city"]
    }}})])
    .expect("tools compile")
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"role": "assistant", "tool_calls": [
        {"type": "function", "function": {"name": name, "arguments": arguments}}]})
}

const ARGS: &str = "/tool_calls/0/function/arguments";

#[test]
fn strict_tools_guarantees() {
    let contract = Contract {
        strict_tools: Some(weather_tools()),
        ..Contract::default()
    };
    // A valid call has no violation.
    assert_eq!(
        kinds(&contract, call("get_weather", json!({"city": "Paris"}))),
        []
    );
    // Hallucinated tool name.
    assert_eq!(
        kinds(&contract, call("get_wether", json!({"city": "Paris"}))),
        [(
            ViolationKind::UnknownTool,
            "/tool_calls/0/function/name".into()
        )]
    );
    // Hallucinated parameter, missing required one, wrong type.
    assert_eq!(
        kinds(
            &contract,
            call("get_weather", json!({"town": "Paris", "days": "3"}))
        ),
        [
            (ViolationKind::MissingRequired, format!("{ARGS}/city")),
            (ViolationKind::TypeMismatch, format!("{ARGS}/days")),
            (ViolationKind::UnknownParameter, format!("{ARGS}/town")),
        ]
    );
    // Arguments given as a JSON string are checked the same way; a string that is not JSON
    // is not_json.
    assert_eq!(
        kinds(&contract, call("get_weather", json!("{\"city\": 5}"))),
        [(ViolationKind::TypeMismatch, format!("{ARGS}/city"))]
    );
    assert_eq!(
        kinds(&contract, call("get_weather", json!("city=Paris"))),
        [(ViolationKind::NotJson, ARGS.to_string())]
    );
}

#[test]
fn every_value_kind() {
    let contract = Contract {
        strict_tools: Some(weather_tools()),
        ..Contract::default()
    };
    let cases = [
        (
            json!({"city": "paris"}),
            ViolationKind::PatternMismatch,
            "city",
        ),
        (
            json!({"city": "Paris", "unit": "K"}),
            ViolationKind::EnumMismatch,
            "unit",
        ),
        (
            json!({"city": "Paris", "source": "web"}),
            ViolationKind::ConstMismatch,
            "source",
        ),
        (
            json!({"city": "Paris", "when": "2026-13-40"}),
            ViolationKind::FormatMismatch,
            "when",
        ),
        (
            json!({"city": "Paris", "place": [1]}),
            ViolationKind::AnyOfMismatch,
            "place",
        ),
        (
            json!({"city": "Paris", "options": {"hourly": true, "extra": 1}}),
            ViolationKind::AdditionalProperty,
            "options/extra",
        ),
        (
            json!({"city": "Paris", "options": {}}),
            ViolationKind::MissingRequired,
            "options/hourly",
        ),
    ];
    for (arguments, kind, at) in cases {
        let got = contract.check(&message(call("get_weather", arguments.clone())));
        assert_eq!(got.len(), 1, "{arguments}: {got:?}");
        assert_eq!(
            (got[0].kind, got[0].pointer.as_str()),
            (kind, format!("{ARGS}/{at}").as_str())
        );
        assert!(
            !got[0].expected.is_empty() && !got[0].found.is_empty(),
            "{got:?}"
        );
    }
}

#[test]
fn json_mode() {
    let contract = Contract {
        response_format: Some(ResponseFormat::JsonObject),
        ..Contract::default()
    };
    let content = |text: &str| json!({"role": "assistant", "content": text});
    assert_eq!(kinds(&contract, content(r#"{"a": [1, {"b": 2}]}"#)), []);
    assert_eq!(
        kinds(&contract, content("Sure! {\"a\": 1}")),
        [(ViolationKind::NotJson, "/content".into())]
    );
    assert_eq!(
        kinds(&contract, content("[1, 2]")),
        [(ViolationKind::NotObject, "/content".into())]
    );
    // Five levels are allowed, the sixth is too deep.
    assert_eq!(
        kinds(&contract, content(r#"{"a":{"b":{"c":{"d":{"e":1}}}}}"#)),
        []
    );
    assert_eq!(
        kinds(&contract, content(r#"{"a":{"b":{"c":{"d":{"e":[1]}}}}}"#)),
        [(ViolationKind::TooDeep, "/content/a/b/c/d/e".into())]
    );
    assert_eq!(
        kinds(&contract, json!({"role": "assistant"})),
        [(ViolationKind::NotJson, "/content".into())]
    );
}

#[test]
fn json_schema_mode() {
    let format = ResponseFormat::from_request(&json!({"type": "json_schema", "json_schema": {
        "name": "answer", "strict": true,
        "schema": {"type": "object",
                   "properties": {"answer": {"type": "string"}, "score": {"type": "number"}},
                   "required": ["answer"], "additionalProperties": false}}}))
    .expect("schema compiles");
    let contract = Contract {
        response_format: Some(format),
        ..Contract::default()
    };
    let content = |text: &str| json!({"role": "assistant", "content": text});
    assert_eq!(
        kinds(&contract, content(r#"{"answer": "yes", "score": 0.5}"#)),
        []
    );
    assert_eq!(
        kinds(&contract, content(r#"{"score": "high", "why": 1}"#)),
        [
            (ViolationKind::MissingRequired, "/content/answer".into()),
            (ViolationKind::TypeMismatch, "/content/score".into()),
            (ViolationKind::AdditionalProperty, "/content/why".into()),
        ]
    );
}

#[test]
fn contracts_refuse_schemas_outside_the_rules() {
    // Unsupported keyword, named with its pointer into the tools list.
    let e = StrictTools::new(&[json!({"type": "function", "function": {"name": "f",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}},
                       "required": ["n"]}}})])
    .unwrap_err();
    assert_eq!(
        e.0[0].pointer,
        "/0/function/parameters/properties/n/maximum"
    );
    assert_eq!(e.0[0].keyword, "maximum");
    // A tool without a required parameter.
    let e = StrictTools::new(&[json!({"name": "f", "parameters": {"type": "object",
        "properties": {"n": {"type": "integer"}}}})])
    .unwrap_err();
    assert_eq!(
        (e.0[0].pointer.as_str(), e.0[0].keyword.as_str()),
        ("/0/parameters", "required")
    );
    // More than 200 properties over all tools.
    let tools: Vec<Value> = (0..3)
        .map(|t| {
            let props: serde_json::Map<String, Value> = (0..70)
                .map(|i| (format!("p{i}"), json!({"type": "string"})))
                .collect();
            json!({"name": format!("t{t}"), "parameters": {"type": "object",
                "properties": props, "required": ["p0"]}})
        })
        .collect();
    let e = StrictTools::new(&tools).unwrap_err();
    assert!(
        e.0.iter().any(|e| e.reason.contains("210 properties")),
        "{e}"
    );
    // JSON Schema mode: the top level must be an object.
    assert!(ResponseFormat::json_schema(&json!({"type": "array"})).is_err());
    assert!(ResponseFormat::from_request(&json!({"type": "yaml"})).is_err());
}

#[test]
fn violations_serialize_with_snake_case_kinds() {
    let contract = Contract {
        strict_tools: Some(weather_tools()),
        ..Contract::default()
    };
    let v = contract.check(&message(call("nope", json!({}))));
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json[0]["kind"], "unknown_tool");
    assert_eq!(json[0]["pointer"], "/tool_calls/0/function/name");
    assert_eq!(json[0]["found"], "string \"nope\"");
}

#[test]
fn strict_tools_close_nested_objects_unless_told_otherwise() {
    let tools = StrictTools::new(&[json!({"name": "book", "parameters": {
        "type": "object",
        "properties": {
            "guest": {"type": "object", "properties": {"name": {"type": "string"}},
                      "required": ["name"]},
            "extras": {"type": "object", "properties": {"k": {"type": "string"}},
                       "required": ["k"], "additionalProperties": {"type": "integer"}}
        },
        "required": ["guest"]}})])
    .expect("tools compile");
    let contract = Contract {
        strict_tools: Some(tools),
        ..Contract::default()
    };
    // An undeclared field below the top level is a violation too (the object is closed).
    assert_eq!(
        kinds(
            &contract,
            call("book", json!({"guest": {"name": "A", "vip": true}}))
        ),
        [(
            ViolationKind::AdditionalProperty,
            format!("{ARGS}/guest/vip")
        )]
    );
    // An explicit additionalProperties schema admits extra fields of its type.
    assert_eq!(
        kinds(
            &contract,
            call(
                "book",
                json!({"guest": {"name": "A"}, "extras": {"k": "v", "n": 2}})
            )
        ),
        []
    );
    assert_eq!(
        kinds(
            &contract,
            call(
                "book",
                json!({"guest": {"name": "A"}, "extras": {"k": "v", "n": "2"}})
            )
        ),
        [(ViolationKind::TypeMismatch, format!("{ARGS}/extras/n"))]
    );
    // A top level that says `additionalProperties: true` admits undeclared parameters.
    let open = StrictTools::new(&[json!({"name": "f", "parameters": {"type": "object",
        "properties": {"a": {"type": "string"}}, "required": ["a"],
        "additionalProperties": true}})])
    .expect("tools compile");
    let contract = Contract {
        strict_tools: Some(open),
        ..Contract::default()
    };
    assert_eq!(kinds(&contract, call("f", json!({"a": "x", "b": 1}))), []);
}

#[test]
fn strict_tools_refuse_objects_that_closing_would_break() {
    let refused = |parameters: Value| {
        let e = StrictTools::new(&[json!({"name": "f", "parameters": parameters})])
            .expect_err("refused");
        e.0.iter()
            .map(|e| (e.pointer.clone(), e.keyword.clone()))
            .collect::<Vec<_>>()
    };
    // Properties brought in by $ref or anyOf next to the object's own keywords.
    assert_eq!(
        refused(
            json!({"type": "object", "$ref": "#/$defs/a", "required": ["x"],
            "properties": {"x": {}}, "$defs": {"a": {"type": "object",
            "properties": {"y": {}}, "required": ["y"]}}})
        ),
        [("/0/parameters/$ref".to_string(), "$ref".to_string())]
    );
    // A required parameter that is not declared could never be sent.
    assert_eq!(
        refused(json!({"type": "object", "properties": {"x": {}}, "required": ["y"]})),
        [("/0/parameters/required".to_string(), "required".to_string())]
    );
    // The top level is an object, not a nullable one or a reference to one.
    assert_eq!(
        refused(json!({"type": ["object", "null"], "properties": {"x": {}},
            "required": ["x"]})),
        [("/0/parameters".to_string(), "type".to_string())]
    );
}

#[test]
fn the_property_limit_counts_declarations_not_key_names() {
    // $defs entries named like keywords, and enum values shaped like schemas, are not
    // property maps.
    let props: serde_json::Map<String, Value> = (0..199)
        .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/properties"})))
        .collect();
    let tools = [
        json!({"name": "f", "parameters": {"type": "object", "properties": props,
        "required": ["p0"], "$defs": {"properties": {"enum": [{"properties": {"a": 1, "b": 2}}]}}}}),
    ];
    assert!(StrictTools::new(&tools).is_ok());
    let props: serde_json::Map<String, Value> = (0..199)
        .map(|i| (format!("p{i}"), json!({"type": "string"})))
        .collect();
    let tools = [
        json!({"name": "f", "parameters": {"type": "object", "properties": props,
        "required": ["p0"], "$defs": {"properties": {"type": "object",
        "properties": {"a": {}, "b": {}}, "required": ["a"]}}}}),
    ];
    let e = StrictTools::new(&tools).expect_err("201 properties");
    assert!(
        e.0.iter().any(|e| e.reason.contains("201 properties")),
        "{e}"
    );
}

#[test]
fn json_mode_beyond_the_reader_limit_is_too_deep() {
    let content = |text: String| json!({"role": "assistant", "content": text});
    // 200 levels: serde_json stops at 128; the first container past level 5 is reported.
    let deep = format!(r#"{{"a": [{}1{}]}}"#, "[".repeat(198), "]".repeat(198));
    let json_mode = Contract {
        response_format: Some(ResponseFormat::JsonObject),
        ..Contract::default()
    };
    assert_eq!(
        kinds(&json_mode, content(deep.clone())),
        [(ViolationKind::TooDeep, "/content/a/0/0/0/0".into())]
    );
    // Keys with escapes and later siblings are placed exactly.
    let deep2 = format!(
        r#"{{"x": 1, "a/b": {{"c": [0, [[[{}1{}]]]]}}}}"#,
        "[".repeat(130),
        "]".repeat(130)
    );
    assert_eq!(
        kinds(&json_mode, content(deep2)),
        [(ViolationKind::TooDeep, "/content/a~1b/c/1/0/0".into())]
    );
    // JSON Schema mode sets no nesting limit of its own; past the reader's it is too_deep
    // too (not "not JSON").
    let schema_mode = Contract {
        response_format: Some(
            ResponseFormat::json_schema(&json!({"type": "object",
                "properties": {"a": {}}, "required": ["a"]}))
            .expect("schema compiles"),
        ),
        ..Contract::default()
    };
    let v = schema_mode.check(&message(content(deep)));
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!(v[0].kind, ViolationKind::TooDeep);
    assert!(v[0].expected.contains("127"), "{v:?}");
    let fine = format!(r#"{{"a": {}1{}}}"#, "[".repeat(100), "]".repeat(100));
    assert_eq!(kinds(&schema_mode, content(fine)), []);
}

#[test]
fn a_turn_of_tool_calls_has_no_content_to_check() {
    let contract = Contract {
        response_format: Some(ResponseFormat::JsonObject),
        ..Contract::default()
    };
    for content in [json!(null), json!(""), json!("\n  ")] {
        let m = json!({"role": "assistant", "content": content, "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {}}}]});
        assert_eq!(kinds(&contract, m), [], "{content}");
    }
    let m = json!({"role": "assistant", "content": "Calling.", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {}}}]});
    assert_eq!(
        kinds(&contract, m),
        [(ViolationKind::NotJson, "/content".into())]
    );
}

#[test]
fn false_schemas_and_found_values() {
    let format = ResponseFormat::json_schema(&json!({"type": "object", "required": ["a"],
        "properties": {"a": {"type": "array", "items": false}, "b": false, "c": {"type": "string"}}}))
    .expect("schema compiles");
    let contract = Contract {
        response_format: Some(format),
        ..Contract::default()
    };
    let v = contract.check(&message(
        json!({"role": "assistant", "content": r#"{"a": [1], "b": 2, "c": null}"#}),
    ));
    let got: Vec<_> = v
        .iter()
        .map(|v| (v.kind, v.pointer.as_str(), v.found.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (ViolationKind::TypeMismatch, "/content/a/0", "integer 1"),
            (ViolationKind::AdditionalProperty, "/content/b", "integer 2"),
            (ViolationKind::TypeMismatch, "/content/c", "null"),
        ]
    );
}

/// A diamond of anyOf/$ref edges: 2^levels paths to the leaf at one place.
fn diamond(levels: usize, leaf: Value) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..levels {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"anyOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert(format!("d{levels}"), leaf);
    json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/d0"}}, "required": ["x"],
           "$defs": defs})
}

#[test]
fn fan_out_through_any_of_and_refs_is_bounded() {
    // Each level applies its two members and their two references: about 2^(levels + 2)
    // schemas at one place. 9 levels (2045) are admitted and checked quickly; 11 (8189) are
    // refused at compile time.
    let ok = ResponseFormat::json_schema(&diamond(9, json!({"type": "integer"})))
        .expect("2045 schemas admitted");
    let contract = Contract {
        response_format: Some(ok),
        ..Contract::default()
    };
    let v = contract.check(&message(
        json!({"role": "assistant", "content": r#"{"x": "s"}"#}),
    ));
    assert_eq!(v.len(), 1, "{v:?}");
    let e = ResponseFormat::json_schema(&diamond(11, json!({"type": "integer"})))
        .expect_err("8189 schemas refused");
    assert!(e.0[0].reason.contains("at most 4096"), "{e}");
    let e = StrictTools::new(&[
        json!({"name": "f", "parameters": diamond(40, json!({"type": "string"}))}),
    ])
    .expect_err("refused");
    assert!(e.0.iter().any(|e| e.keyword == "anyOf"), "{e}");
}

#[test]
fn deep_arguments_stop_at_the_reader_limit() {
    let node = json!({"$defs": {"n": {"type": "object", "properties": {
        "a": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}}, "required": ["a"]}},
        "type": "object", "properties": {"a": {"anyOf": [{"$ref": "#/$defs/n"}, {"type": "null"}]}},
        "required": ["a"]});
    let tools = StrictTools::new(&[json!({"name": "f", "parameters": node})]).expect("tools");
    let contract = Contract {
        strict_tools: Some(tools),
        ..Contract::default()
    };
    let mut args = json!(null);
    for _ in 0..900 {
        args = json!({"a": args});
    }
    // Run on a small stack, as a worker thread would.
    let got = std::thread::Builder::new()
        .stack_size(512 << 10)
        .spawn(move || kinds(&contract, call("f", args)))
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, ViolationKind::TooDeep);
    assert_eq!(got[0].1.matches("/a").count(), 128, "{}", got[0].1);
}

#[test]
fn schema_errors_name_their_place() {
    for (schema, pointer, keyword) in [
        (
            json!({"type": "object", "properties": {"x": {}}, "required": ["x", "x"]}),
            "/required",
            "required",
        ),
        (json!({"type": ["string", "string"]}), "/type", "type"),
        (
            json!({"$defs": {"é": {}}, "$ref": "#/$defs/é"}),
            "/$ref",
            "$ref",
        ),
    ] {
        let e = structured_outputs::compile(&schema, structured_outputs::Strictness::Strict)
            .expect_err("refused");
        assert_eq!(
            (e.0[0].pointer.as_str(), e.0[0].keyword.as_str()),
            (pointer, keyword),
            "{e}"
        );
    }
    let e = structured_outputs::compile(
        &json!({"type": "object", "enum": []}),
        structured_outputs::Strictness::Strict,
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("/enum"), "{e}");
    let e = ResponseFormat::json_schema(&json!({"type": "array"})).unwrap_err();
    assert!(e.to_string().starts_with("(root): type"), "{e}");
}
