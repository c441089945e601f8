//! The shared conformance cases: the 487 of `shared/cases/conformance.jsonl` (derived from the
//! reference's own tests and docs) and the 70 of `shared/cases/conformance-5.24.jsonl` (what
//! transformers 5.24.0 added or changed: `python-call-list`, close captures, `unquoted_keys`,
//! `merge_duplicates`, `_can_grow`; expectations from the 5.24.0 oracle): every message, and
//! every event stream after merging adjacent chunks of one field, must equal the reference's.

use workspace_tests::{check_case, read_jsonl, shared_dir};

/// Runs every case of `file`; it must hold at least `at_least` cases.
fn all_pass(file: &str, at_least: usize) {
    let cases = read_jsonl(&shared_dir().join("cases").join(file));
    assert!(
        cases.len() >= at_least,
        "{file}: expected at least {at_least} cases, found {}",
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
        "{file}: {} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn all_conformance_cases_pass() {
    all_pass("conformance.jsonl", 487);
}

#[test]
fn all_5_24_conformance_cases_pass() {
    all_pass("conformance-5.24.jsonl", 70);
}
