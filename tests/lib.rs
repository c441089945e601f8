//! Shared helpers of the workspace integration tests: where the shared conformance cases and
//! the vendored templates live, and how results are compared (the rules of
//! `shared/cases/check.py`).

use std::path::PathBuf;

use parser_runtime::event::merge_chunks;
use parser_runtime::Event;
use serde_json::Value;

/// The workspace root.
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The `shared/` folder beside the checkout (`../shared`).
pub fn shared_dir() -> PathBuf {
    workspace_root().join("..").join("shared")
}

/// Reads a JSON Lines file.
pub fn read_jsonl(path: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}: bad JSON line: {e}", path.display()))
        })
        .collect()
}

/// Merges adjacent chunks of a JSON event list (as `check.py` does).
pub fn merge_json_events(events: &Value) -> Value {
    let list: Vec<Event> = serde_json::from_value(events.clone()).unwrap_or_default();
    serde_json::to_value(merge_chunks(&list)).unwrap_or(Value::Null)
}

/// Compares a result with a case's expectations, like `check.py --events`; `None` when it
/// passes, else the reason.
pub fn check_case(case: &Value, res: &Value) -> Option<String> {
    if let Some(Value::Array(script)) = case.get("script") {
        let log = res
            .get("script_log")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if log.len() != script.len() {
            return Some(format!(
                "script_log has {} steps, expected {}",
                log.len(),
                script.len()
            ));
        }
        for (want, got) in script.iter().zip(&log) {
            let want_err = want
                .get("expect_error")
                .is_some_and(|v| !v.is_null() && v != &Value::Bool(false));
            let got_err = got.get("error").is_some_and(|v| !v.is_null());
            if want_err != got_err {
                return Some(format!(
                    "script step {want}: expected error={want_err}, got {got}"
                ));
            }
        }
        return None;
    }
    let ok = res.get("ok") == Some(&Value::Bool(true));
    if case.get("expect_error") == Some(&Value::Bool(true)) {
        return if ok {
            Some(format!("expected an error, got {}", res["message"]))
        } else {
            None
        };
    }
    if !ok {
        return Some(format!("unexpected error: {}", res["error"]));
    }
    if res.get("message") != case.get("expect") {
        return Some(format!(
            "message differs:\n  want {}\n  got  {}",
            case["expect"], res["message"]
        ));
    }
    if let Some(want) = case.get("expect_events").filter(|v| !v.is_null()) {
        if merge_json_events(&res["initial_events"]) != merge_json_events(&want["initial"]) {
            return Some(format!(
                "initial events differ:\n  want {}\n  got  {}",
                want["initial"], res["initial_events"]
            ));
        }
        if merge_json_events(&res["events"]) != merge_json_events(&want["events"]) {
            return Some(format!(
                "events differ:\n  want {}\n  got  {}",
                merge_json_events(&want["events"]),
                merge_json_events(&res["events"])
            ));
        }
    }
    None
}
