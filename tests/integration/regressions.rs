//! Regressions found by fuzzing and cold review, with the reference's expectations
//! (`tests/data/regressions.jsonl`, made by `tests/data/make_regressions.py` from
//! `tests/data/regressions.in.jsonl` with the oracle), the transformers 5.24 behaviours
//! (`tests/data/reference-5.24.jsonl`, likewise), plus the cases the reference cannot answer
//! because it loops forever.

use parser_runtime::{parse_response, ParseError};
use serde_json::json;
use workspace_tests::{check_case, read_jsonl, workspace_root};

/// Runs every case of `tests/data/<file>` (at least `min` of them) and checks it like
/// `check.py --events`.
fn cases_match_the_reference(file: &str, min: usize) {
    let cases = read_jsonl(&workspace_root().join("tests/data").join(file));
    assert!(cases.len() >= min, "{file}: {} cases", cases.len());
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let result = rtpl::cases::run_case(case, true);
            check_case(case, &result).map(|why| format!("{} ({}): {why}", case["id"], case["note"]))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn regression_cases_match_the_reference() {
    cases_match_the_reference("regressions.jsonl", 1);
}

/// Behaviours new in transformers 5.24 (close-pattern captures, `unquoted_keys` that skips
/// strings, `merge_duplicates` that wraps a list) and group names defined more than once in
/// delimiters and `tag_pattern` (`dup_*`), with the 5.24.0 oracle's expectations
/// (`tests/data/reference-5.24.jsonl`, made by `tests/data/make_regressions.py` from
/// `tests/data/reference-5.24.in.jsonl`), most also fed in 1-char chunks.
#[test]
fn reference_5_24_cases_match_the_reference() {
    cases_match_the_reference("reference-5.24.jsonl", 40);
}

/// Open and close both match the empty string at one position: the reference loops forever
/// (and grows its event list without bound); we fail with a typed error.
#[test]
fn empty_open_and_close_at_one_position_is_an_error_not_a_hang() {
    let t = template_build::compile(&json!({
        "start_anchor": "S",
        "fields": {"x": {"open_pattern": "(?=<)", "close_pattern": "x?"}, "content": {}}
    }))
    .unwrap();
    let err = parse_response(&t, "a<b", "", &[]).unwrap_err();
    assert_eq!(
        err,
        ParseError::NoProgress {
            field: "x".into(),
            offset: 1,
            in_prefix: false
        }
    );
}
