//! The 487 conformance cases of `shared/cases/conformance.jsonl` (derived from the reference's
//! own tests and docs): every message, and every event stream after merging adjacent chunks of
//! one field, must equal the reference's.

use workspace_tests::{check_case, read_jsonl, shared_dir};

#[test]
fn all_conformance_cases_pass() {
    let cases = read_jsonl(&shared_dir().join("cases").join("conformance.jsonl"));
    assert!(
        cases.len() >= 487,
        "expected at least 487 cases, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    for case in &cases {
        let result = rtpl::cases::run_case(case, true);
        if let Some(why) = check_case(case, &result) {
            failures.push(format!("{}: {why}", case["id"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The `python-call-list` cases (`pcl_*`) of `shared/cases/conformance-5.24.jsonl`, whose
/// expectations come from the transformers 5.24.0 oracle (the file's other cases cover 5.24
/// changes outside this parser).
#[test]
fn python_call_list_cases_of_5_24_pass() {
    let cases: Vec<_> = read_jsonl(&shared_dir().join("cases").join("conformance-5.24.jsonl"))
        .into_iter()
        .filter(|case| case["id"].as_str().is_some_and(|id| id.starts_with("pcl_")))
        .collect();
    assert!(
        cases.len() >= 40,
        "expected at least 40 pcl_ cases, found {}",
        cases.len()
    );
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let result = rtpl::cases::run_case(case, true);
            check_case(case, &result).map(|why| format!("{}: {why}", case["id"]))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
