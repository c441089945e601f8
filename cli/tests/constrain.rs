//! `rtpl constrain`: samples under token masks, one JSON line per sample with the parsed
//! message and its violations (none, since the masks keep the contract); typed failures.

mod common;

use common::{data, rtpl};
use serde_json::Value;

#[test]
fn samples_parse_and_keep_the_contract() {
    let tools = data("strict-tools.tools.json");
    for (model, vocab) in [
        ("smollm3", "o200k_base"),
        ("qwen3", "o200k_base"),
        ("gpt-oss", "o200k_harmony"),
        ("qwen3-coder", "o200k_base"),
        ("lfm2", "o200k_base"),
        ("lfm2.5", "o200k_base"),
    ] {
        let (code, stdout, stderr) = rtpl(&[
            "constrain",
            "--model",
            model,
            "--tools",
            tools.to_str().unwrap(),
            "--tool-choice",
            "required",
            "--vocab",
            vocab,
            "--sample",
            "5",
            "--seed",
            "1",
        ]);
        assert_eq!(code, 0, "{model}: {stderr}");
        let lines: Vec<Value> = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 5, "{model}");
        for line in &lines {
            assert_eq!(line["violations"], Value::Array(vec![]), "{model}: {line}");
            let calls = line["message"]["tool_calls"].as_array().map_or(0, Vec::len);
            assert!(calls >= 1, "{model}: a call is required: {line}");
            assert!(line["tokens"].as_u64().unwrap() > 0);
            let names = ["get_weather", "web_search"];
            for call in line["message"]["tool_calls"].as_array().unwrap() {
                assert!(
                    names.contains(&call["function"]["name"].as_str().unwrap()),
                    "{line}"
                );
            }
        }
    }
}

#[test]
fn json_schema_content() {
    let (code, stdout, stderr) = rtpl(&[
        "constrain",
        "--model",
        "qwen3",
        "--response-format",
        data("json-schema.response-format.json").to_str().unwrap(),
        "--vocab",
        "o200k_base",
        "--sample",
        "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    for line in stdout.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        let content = line["message"]["content"].as_str().expect("content");
        let value: Value = serde_json::from_str(content).expect("the content is JSON");
        assert!(value.is_object(), "{line}");
        assert_eq!(line["violations"], Value::Array(vec![]));
    }
}

#[test]
fn errors_are_typed() {
    let tools = data("strict-tools.tools.json");
    let tools = tools.to_str().unwrap();
    // A tool choice naming no declared tool: bad data (1), naming the field.
    let (code, _, stderr) = rtpl(&[
        "constrain",
        "--model",
        "smollm3",
        "--tools",
        tools,
        "--tool-choice",
        "get_wether",
        "--vocab",
        "o200k_base",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("tool_choice") && stderr.contains("get_wether"),
        "{stderr}"
    );
    // No vocabulary: usage (2).
    let (code, _, stderr) = rtpl(&["constrain", "--model", "smollm3"]);
    assert_eq!(code, 2, "{stderr}");
    // A .tiktoken file needs its special tokens.
    let dir = std::env::temp_dir().join(format!("rtpl-constrain-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tiny.tiktoken");
    std::fs::write(&file, "YQ== 0\n").unwrap();
    let (code, _, stderr) = rtpl(&[
        "constrain",
        "--model",
        "smollm3",
        "--vocab",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--eos"), "{stderr}");
    // An unknown template; a parameter a family does not generate (LFM2.5's keyword
    // arguments: a string with a `pattern`).
    let (code, _, stderr) = rtpl(&["constrain", "--model", "nope", "--vocab", "o200k_base"]);
    assert_eq!(code, 2, "{stderr}");
    let python_tools = data("python-calls.tools.json");
    let (code, _, stderr) = rtpl(&[
        "constrain",
        "--model",
        "lfm2.5",
        "--tools",
        python_tools.to_str().unwrap(),
        "--vocab",
        "o200k_base",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        // The file the pointer points into, not the template.
        stderr.contains("python-calls.tools.json: tools/1/function/parameters/properties/origin")
            && stderr.contains("keyword arguments"),
        "{stderr}"
    );
}

/// `--schema-mode general`: JSON Schema outside the strict subset (draft-4 definitions,
/// lengths, patterns, bounds, open objects) in a response format and in tools; every sample
/// passes the JSON Schema validator (no violations), and the values keep the keywords, read
/// here by hand. The default (strict, the contract mode) refuses the same schemas.
#[test]
fn general_schema_mode() {
    let dir = std::env::temp_dir().join(format!("rtpl-constrain-general-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let format = dir.join("format.json");
    std::fs::write(
        &format,
        r##"{"type": "json_schema", "json_schema": {"name": "item", "schema": {
            "$schema": "http://json-schema.org/draft-04/schema#",
            "definitions": {"code": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2,
                "maxLength": 5}},
            "type": "object",
            "properties": {"code": {"$ref": "#/definitions/code"},
                "n": {"type": "integer", "minimum": 10, "maximum": 99},
                "tags": {"type": "array", "items": {"enum": ["x", "y"]}, "maxItems": 3}},
            "required": ["code", "n"]}}}"##,
    )
    .unwrap();
    let format = format.to_str().unwrap();
    let args = |mode: Option<&'static str>| {
        let mut a = vec![
            "constrain",
            "--model",
            "qwen3",
            "--response-format",
            format,
            "--vocab",
            "o200k_base",
            "--sample",
            "8",
            "--seed",
            "3",
        ];
        if let Some(m) = mode {
            a.extend(["--schema-mode", m]);
        }
        a
    };
    let (code, _, stderr) = rtpl(&args(None));
    assert_eq!(code, 1, "strict is the default: {stderr}");
    assert!(stderr.contains("format.json: response_format"), "{stderr}");
    let (code, _, stderr) = rtpl(&args(Some("strict")));
    assert_eq!(code, 1, "{stderr}");
    let (code, stdout, stderr) = rtpl(&args(Some("general")));
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 8);
    for line in &lines {
        assert_eq!(line["violations"], Value::Array(vec![]), "{line}");
        let content = line["message"]["content"].as_str().expect("content");
        let value: Value = serde_json::from_str(content).expect("JSON content");
        let code = value["code"].as_str().expect("code is a string");
        assert!(
            (2..=5).contains(&code.chars().count()) && code.bytes().all(|b| b.is_ascii_lowercase()),
            "{line}"
        );
        let n = value["n"].as_f64().expect("n is a number");
        assert!(n.fract() == 0.0 && (10.0..=99.0).contains(&n), "{line}");
        if let Some(tags) = value.get("tags") {
            let tags = tags.as_array().expect("tags is an array");
            assert!(
                tags.len() <= 3 && tags.iter().all(|t| t == "x" || t == "y"),
                "{line}"
            );
        }
    }

    // Schemas the sample checker's validator refuses (draft 4 wants a boolean
    // `exclusiveMaximum`; `minContains` is an integer): the error names the
    // response-format file and the keyword's place in the schema.
    let refused = dir.join("refused.json");
    for (schema, place) in [
        (
            r##"{"$schema": "http://json-schema.org/draft-04/schema#",
                "type": "number", "maximum": 5, "exclusiveMaximum": 5}"##,
            "schema/exclusiveMaximum",
        ),
        (
            r##"{"type": "object", "properties": {"a": {"minContains": "x"}}}"##,
            "schema/properties/a/minContains",
        ),
    ] {
        std::fs::write(
            &refused,
            format!(
                r#"{{"type": "json_schema", "json_schema": {{"name": "n", "schema": {schema}}}}}"#
            ),
        )
        .unwrap();
        let (code, _, stderr) = rtpl(&[
            "constrain",
            "--model",
            "qwen3",
            "--response-format",
            refused.to_str().unwrap(),
            "--schema-mode",
            "general",
            "--vocab",
            "o200k_base",
        ]);
        assert_eq!(code, 1, "{stderr}");
        let expected =
            format!("refused.json: response_format/json_schema/{place}: the validator refuses");
        assert!(stderr.contains(&expected), "{stderr}");
    }

    // Tools: a call's arguments keep the bounds of its general-mode parameters.
    let tools = dir.join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"type": "function", "function": {"name": "repeat", "parameters": {
            "type": "object",
            "properties": {"word": {"type": "string", "maxLength": 3},
                "times": {"type": "integer", "exclusiveMinimum": 0, "maximum": 4}},
            "required": ["word", "times"], "additionalProperties": false}}}]"#,
    )
    .unwrap();
    let tool_args = |mode: &str| {
        rtpl(&[
            "constrain",
            "--model",
            "qwen3",
            "--tools",
            tools.to_str().unwrap(),
            "--tool-choice",
            "required",
            "--vocab",
            "o200k_base",
            "--sample",
            "5",
            "--schema-mode",
            mode,
        ])
    };
    let (code, _, stderr) = tool_args("strict");
    assert_eq!(code, 1, "{stderr}");
    let (code, stdout, stderr) = tool_args("general");
    assert_eq!(code, 0, "{stderr}");
    for line in stdout.lines() {
        let line: Value = serde_json::from_str(line).unwrap();
        assert_eq!(line["violations"], Value::Array(vec![]), "{line}");
        let calls = line["message"]["tool_calls"].as_array().expect("calls");
        assert!(!calls.is_empty(), "{line}");
        for call in calls {
            let arguments = &call["function"]["arguments"];
            let arguments: Value = match arguments {
                Value::String(s) => serde_json::from_str(s).unwrap(),
                other => other.clone(),
            };
            let word = arguments["word"].as_str().expect("word");
            assert!(word.chars().count() <= 3, "{line}");
            // An integer by value (`2.0` and `2e0` are integers in JSON Schema).
            let times = arguments["times"].as_f64().expect("times");
            assert!(
                times.fract() == 0.0 && (1.0..=4.0).contains(&times),
                "{line}"
            );
        }
    }
    let (code, _, stderr) = tool_args("lax");
    assert_eq!(code, 2, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_vocabulary_names_the_built_in_ones() {
    let (code, _, stderr) = rtpl(&[
        "constrain",
        "--model",
        "qwen3",
        "--vocab",
        "o200k_bas",
        "--sample",
        "1",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("\"o200k_bas\": not a built-in vocabulary (o200k_base, cl100k_base, o200k_harmony) and no such file"),
        "{stderr}"
    );
}
