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
        stderr.contains("lfm2.5: tools/1/function/parameters/properties/origin")
            && stderr.contains("keyword arguments"),
        "{stderr}"
    );
}
