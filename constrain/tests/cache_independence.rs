//! A compile's outcome does not depend on what earlier compiles in the process left in the
//! process-wide caches (readers of untyped values, number automata, tables from a HIR). Its
//! own test binary, so that the caches start empty: general mode's first try at 5 levels of
//! untyped values has a quarter of the state limit, and a number automaton whose transient
//! states passed it failed that try the first time (3 levels, 1,332 states) and fit once
//! cached (5 levels, 5,028 states): cold review of 2026-12-04, on the suite's
//! `allOf` with `multipleOf` in `allOf`, `anyOf` and `oneOf`.

use constrain::json::SchemaMode;
use constrain::template::{compile_schema, Options};
use serde_json::json;

#[test]
fn the_first_compile_in_a_process_equals_the_next() {
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "allOf": [{"multipleOf": 2}],
        "anyOf": [{"multipleOf": 3}],
        "oneOf": [{"multipleOf": 5}]
    });
    let first = compile_schema(Some(&schema), &options).unwrap();
    let second = compile_schema(Some(&schema), &options).unwrap();
    assert_eq!(first.machine.table.len(), second.machine.table.len());
    // Untyped values nest 5 levels in both: `{"":{"":{"":{}}}}` is 4 levels deep.
    for c in [&first, &second] {
        let t = &c.machine.table;
        let end = t.walk(constrain::dfa::START, br#"{"":{"":{"":{}}}}"#);
        assert!(t.is_accepting(end), "{} states", t.len());
    }
}
