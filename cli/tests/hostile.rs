//! Hostile input to the CLI (issue 17): `run-cases` checks each case's types and goes on past a
//! bad line; `constrain` reports a sample cut off by the token cap as cut off (exit 4), not as
//! a contract violation, and its compile budgets are named and can be raised.

mod common;

use std::io::Write;
use std::process::{Command, Stdio};

use common::{data, rtpl};
use serde_json::{json, Value};

/// Runs `rtpl run-cases` on `input`: exit code and the result lines.
fn run_cases(input: &[u8]) -> (i32, Vec<Value>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rtpl"))
        .arg("run-cases")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rtpl runs");
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (out.status.code().unwrap_or(-1), lines)
}

fn template() -> Value {
    json!({"start_anchor": "<s>", "fields": {
        "reasoning_content": {"open": "<think>", "close": "</think>"},
        "content": {"content": "text"}}})
}

/// A valid case with `id`, changed by `edit`.
fn case(id: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut c = json!({"id": id, "template": template(), "prefix": "<s>",
                       "text": "<think>a</think>b"});
    edit(&mut c);
    c.to_string()
}

#[test]
fn run_cases_names_the_line_and_key_of_a_wrong_type() {
    let lines = [
        case("good", |_| {}),
        case("text", |c| c["text"] = json!(5)),
        case("chunks", |c| c["chunks"] = json!("x")),
        case("chunk item", |c| c["chunks"] = json!(["a", 1])),
        case("tools", |c| c["tools"] = json!("x")),
        case("op", |c| {
            c["script"] = json!([{"op": "feed", "text": "a"}, {"op": "rewind"}]);
        }),
        case("feed text", |c| {
            c["script"] = json!([{"op": "feed", "text": 3}])
        }),
        case("prefix", |c| {
            c.as_object_mut().unwrap().remove("prefix");
        }),
        "[1, 2]".to_owned(),
        case("last", |c| c["chunks"] = json!(["<think>a</th", "ink>b"])),
    ];
    let (code, results) = run_cases(lines.join("\n").as_bytes());
    assert_eq!(code, 0);
    assert_eq!(results.len(), lines.len(), "{results:?}");
    let expect_errors = [
        (2, "text", "line 2: text: must be a string, got number 5"),
        (3, "chunks", "line 3: chunks: must be a list of strings"),
        (
            4,
            "chunk item",
            "line 4: chunks[1]: must be a string, got number 1",
        ),
        (5, "tools", "line 5: tools: must be a list of tools"),
        (6, "op", "line 6: script[1].op: unknown op \"rewind\""),
        (7, "feed text", "line 7: script[0].text: must be a string"),
        (8, "prefix", "line 8: prefix: missing"),
        (9, "", "line 9: a case must be a JSON object"),
    ];
    for (line, id, words) in expect_errors {
        let result = &results[line - 1];
        assert_eq!(result["ok"], json!(false), "{result}");
        if !id.is_empty() {
            assert_eq!(result["id"], json!(id), "{result}");
        }
        let error = result["error"].as_str().unwrap();
        assert!(error.starts_with("CaseError: "), "{error}");
        assert!(error.contains(words), "line {line}: {error}");
    }
    // Valid cases run as before, in the oracle's schema.
    for result in [&results[0], &results[9]] {
        assert_eq!(result["ok"], json!(true), "{result}");
        assert_eq!(
            result["message"],
            json!({"reasoning_content": "a", "content": "b"})
        );
        let keys: Vec<&str> = result
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(keys, ["id", "ok", "message", "initial_events", "events"]);
    }
}

#[test]
fn run_cases_goes_on_past_a_line_of_invalid_utf8() {
    let mut input = case("before", |_| {}).into_bytes();
    input.extend_from_slice(b"\n{\"id\": \"bad\", \"text\": \"\xff\xfe\"}\n");
    input.extend_from_slice(case("after", |_| {}).as_bytes());
    input.push(b'\n');
    let (code, results) = run_cases(&input);
    assert_eq!(code, 0);
    assert_eq!(results.len(), 3, "{results:?}");
    assert_eq!(results[0]["ok"], json!(true));
    assert_eq!(results[1]["ok"], json!(false));
    let error = results[1]["error"].as_str().unwrap();
    assert!(error.contains("line 2: not UTF-8"), "{error}");
    assert_eq!(results[2]["ok"], json!(true));
    assert_eq!(results[2]["id"], json!("after"));
}

fn constrain(extra: &[&str]) -> (i32, Vec<Value>, String) {
    let tools = data("strict-tools.tools.json");
    let mut args = vec![
        "constrain",
        "--model",
        "qwen3",
        "--tools",
        tools.to_str().unwrap(),
        "--tool-choice",
        "required",
        "--vocab",
        "o200k_base",
        "--seed",
        "1",
    ];
    args.extend_from_slice(extra);
    let (code, stdout, stderr) = rtpl(&args);
    let lines = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (code, lines, stderr)
}

#[test]
fn constrain_reports_a_sample_cut_off_by_the_token_cap() {
    // A required tool call needs more than 8 tokens: every sample reaches the cap.
    let (code, lines, stderr) = constrain(&["--sample", "3", "--token-cap", "8"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stderr.contains("cut off"), "{stderr}");
    assert_eq!(lines.len(), 3);
    for line in &lines {
        assert_eq!(line["cut_off"], json!(true), "{line}");
        assert_eq!(line["tokens"], json!(8), "{line}");
        assert!(line.get("violations").is_none(), "{line}");
        assert!(line.get("incomplete").is_none(), "{line}");
    }
    // With room to finish, the same request ends with no violation.
    let (code, lines, stderr) = constrain(&["--sample", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        lines.iter().all(|l| l["violations"] == json!([])),
        "{lines:?}"
    );
}

#[test]
fn constrain_budgets_are_named_and_can_be_raised() {
    let (code, _, stderr) = constrain(&["--max-states", "50"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("budget Limits::max_states"), "{stderr}");
    // The flag that raises it is named as well.
    assert!(stderr.contains("raise it with --max-states"), "{stderr}");
    let (code, _, stderr) = constrain(&["--max-states", "1000000"]);
    assert_eq!(code, 0, "{stderr}");
    // General mode's place budget follows `--max-schema-nodes` (half of it).
    let (code, _, stderr) = constrain(&["--schema-mode", "general", "--max-schema-nodes", "5"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("schema places collected")
            && stderr.contains("raise it with --max-schema-nodes"),
        "{stderr}"
    );
    let (code, _, stderr) = constrain(&["--schema-mode", "general", "--max-schema-nodes", "50"]);
    assert_eq!(code, 0, "{stderr}");
    // A limit no flag moves (a `minLength` above `JsonOptions::max_count`) names no flag.
    let format = std::env::temp_dir().join(format!("rtpl-max-count-{}.json", std::process::id()));
    std::fs::write(
        &format,
        r#"{"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object",
            "properties": {"e": {"type": "string", "minLength": 300}}}}}"#,
    )
    .unwrap();
    let (code, stdout, stderr) = rtpl(&[
        "constrain",
        "--model",
        "qwen3",
        "--vocab",
        "o200k_base",
        "--schema-mode",
        "general",
        "--response-format",
        format.to_str().unwrap(),
    ]);
    std::fs::remove_file(&format).unwrap();
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("JsonOptions::max_count"), "{stderr}");
    assert!(!stderr.contains("raise it with"), "{stderr}");
}
