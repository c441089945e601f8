//! A compile's outcome does not depend on what earlier compiles in the process left in the
//! process-wide caches (readers of untyped values, number automata, tables from a HIR,
//! strings with several constraints). Its own test binary, so that the caches start empty:
//! general mode's first try at 5 levels of untyped values has a quarter of the state limit,
//! and a number automaton whose transient states passed it failed that try the first time
//! (3 levels, 1,332 states) and fit once cached (5 levels, 5,028 states): cold review of
//! 2026-12-04, on the suite's `allOf` with `multipleOf` in `allOf`, `anyOf` and `oneOf`.

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

/// Strings with several constraints are kept process-wide by their parts' HIRs; a part that
/// refers to one schema's slots (a pattern with a look-ahead becomes a slot) is not, since the
/// same placeholder text means another table in another schema. Here both schemas' look-ahead
/// pattern is slot 0 with the same length bound, so the parts' texts are equal.
#[test]
fn strings_kept_across_compiles_never_mix_two_schemas_slots() {
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let accepts = |schema: &serde_json::Value, text: &str| {
        let c = compile_schema(Some(schema), &options).unwrap();
        let t = &c.machine.table;
        t.is_accepting(t.walk(constrain::dfa::START, text.as_bytes()))
    };
    let not_ab = json!({"type": "string", "pattern": "^(?!ab)[a-z]+$", "maxLength": 3});
    let not_cd = json!({"type": "string", "pattern": "^(?!cd)[a-z]+$", "maxLength": 3});
    assert!(!accepts(&not_ab, r#""abc""#) && accepts(&not_ab, r#""cde""#));
    assert!(accepts(&not_cd, r#""abc""#) && !accepts(&not_cd, r#""cde""#));
    assert!(!accepts(&not_cd, r#""abcd""#));
    // Kept ones (a format within a length) are served again, equal.
    let uri = json!({"type": "string", "format": "uri", "maxLength": 20});
    for _ in 0..2 {
        assert!(accepts(&uri, r#""http://a.example/b""#));
        assert!(!accepts(&uri, r#""http://a.example/bcdef""#));
        assert!(!accepts(&uri, r#""not a uri""#));
    }
}
