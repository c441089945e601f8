//! `rtpl parse` with contracts: `--strict-tools` and `--response-format` print
//! `{"message", "violations"}` and exit 3 when a contract is broken, 0 when not, 1 for a schema
//! outside the supported subset.

mod common;

use std::path::Path;

use common::data;
use serde_json::Value;

/// `rtpl parse --model smollm3 ARGS`: the exit code, stdout as JSON (null when it is not JSON)
/// and stderr.
fn parse_smollm3(args: &[&str]) -> (i32, Value, String) {
    let (code, stdout, stderr) = common::rtpl(&[&["parse", "--model", "smollm3"], args].concat());
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (code, json, stderr)
}

/// `rtpl parse --model smollm3 --prefix "" --response-format FORMAT TEXT`.
fn parse_with_response_format(format: &Path, text: &Path) -> (i32, Value, String) {
    parse_smollm3(&[
        "--prefix",
        "",
        "--response-format",
        format.to_str().unwrap(),
        text.to_str().unwrap(),
    ])
}

fn kinds(v: &Value) -> Vec<(String, String)> {
    v["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| {
            (
                v["kind"].as_str().unwrap_or("").to_string(),
                v["pointer"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn strict_tools_report_every_broken_guarantee_with_exit_3() {
    let (prefix, tools, text) = (
        data("strict-tools.prefix"),
        data("strict-tools.tools.json"),
        data("strict-tools.txt"),
    );
    let request = [
        "--prefix-file",
        prefix.to_str().unwrap(),
        "--tools",
        tools.to_str().unwrap(),
    ];
    let text = text.to_str().unwrap();
    let (code, out, stderr) = parse_smollm3(&[&request[..], &["--strict-tools", text]].concat());
    assert_eq!(code, 3, "{stderr}");
    let args = |i: usize, p: &str| format!("/tool_calls/{i}/function/arguments/{p}");
    assert_eq!(
        kinds(&out),
        [
            ("unknown_tool".into(), "/tool_calls/0/function/name".into()),
            ("missing_required".into(), args(1, "city")),
            ("unknown_parameter".into(), args(1, "country")),
            ("type_mismatch".into(), args(2, "max_results")),
        ]
    );
    assert_eq!(
        out["message"]["tool_calls"].as_array().map(Vec::len),
        Some(3)
    );
    // Without --strict-tools the same output is just a message, exit 0.
    let (code, out, _) = parse_smollm3(&[&request[..], &[text]].concat());
    assert_eq!(code, 0);
    assert!(out.get("violations").is_none() && out["role"] == "assistant");
}

#[test]
fn response_format_json_schema() {
    let format = data("json-schema.response-format.json");
    let (code, out, stderr) = parse_with_response_format(&format, &data("json-schema.txt"));
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(
        kinds(&out),
        [("type_mismatch".into(), "/content/confidence".into())]
    );
}

#[test]
fn conforming_output_exits_0_and_bad_schemas_exit_1() {
    let dir = std::env::temp_dir().join(format!("rtpl-contract-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ok = dir.join("ok.txt");
    std::fs::write(&ok, r#"{"answer": "Paris", "confidence": 0.9}<|im_end|>"#).unwrap();
    let format = data("json-schema.response-format.json");
    let (code, out, stderr) = parse_with_response_format(&format, &ok);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(out["violations"], Value::Array(Vec::new()));
    let bad = dir.join("bad.json");
    std::fs::write(
        &bad,
        r#"{"type": "json_schema", "json_schema": {"schema": {"type": "object",
            "properties": {"n": {"type": "integer", "minimum": 0}}, "required": ["n"]}}}"#,
    )
    .unwrap();
    let (code, _, stderr) = parse_with_response_format(&bad, &ok);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("/json_schema/schema/properties/n/minimum: minimum"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `rtpl ARGS` with a standard output nobody reads (the read end of its pipe closed before it
/// starts, as `rtpl ... | head -c0` can leave it): the exit code and stderr.
fn rtpl_into_closed_pipe(args: &[&str]) -> (i32, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rtpl"))
        .args(args)
        .stdout(writer)
        .output()
        .expect("rtpl runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_output_pipe_keeps_the_exit_code() {
    let (prefix, tools, text) = (
        data("strict-tools.prefix"),
        data("strict-tools.tools.json"),
        data("strict-tools.txt"),
    );
    let parse = [
        "parse",
        "--model",
        "smollm3",
        "--prefix-file",
        prefix.to_str().unwrap(),
        "--tools",
        tools.to_str().unwrap(),
        "--strict-tools",
        text.to_str().unwrap(),
    ];
    // A broken contract is exit 3 whether or not anyone reads the report.
    assert_eq!(rtpl_into_closed_pipe(&parse), (3, String::new()));
    let stream = [&["stream"][..], &parse[1..]].concat();
    assert_eq!(rtpl_into_closed_pipe(&stream), (3, String::new()));
    // Without the contract: success, quietly.
    let plain: Vec<&str> = parse
        .iter()
        .copied()
        .filter(|a| *a != "--strict-tools")
        .collect();
    assert_eq!(rtpl_into_closed_pipe(&plain), (0, String::new()));
    // A template with problems is exit 1 (its problems go to the closed output).
    let broken = std::env::temp_dir().join(format!("rtpl-closed-pipe-{}.json", std::process::id()));
    std::fs::write(&broken, r#"{"fields": {"content": {"open": "("}}}"#).unwrap();
    let (code, _) = rtpl_into_closed_pipe(&["check", broken.to_str().unwrap()]);
    std::fs::remove_file(&broken).ok();
    assert_eq!(code, 1);
}
