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
