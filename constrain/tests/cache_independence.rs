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

/// Definitions the schemas of [`values_and_objects_kept_across_compiles_are_cold_ones`]
/// share, as Kubernetes' resources share `ObjectMeta`: objects of many optional members
/// (written linearly, each value a slot), numbers, formats, bounded strings, maps (keys
/// no declared name takes) and values of free types.
fn shared_defs() -> serde_json::Value {
    let nullable = |t: &str| json!({"type": [t, "null"]});
    let mut meta = serde_json::Map::new();
    for i in 0..8 {
        meta.insert(format!("name{i}"), nullable("string"));
        meta.insert(
            format!("count{i}"),
            json!({"type": ["integer", "null"], "minimum": i}),
        );
    }
    meta.insert(
        "labels".into(),
        json!({"type": ["object", "null"], "additionalProperties": {"type": "string"}}),
    );
    meta.insert(
        "created".into(),
        json!({"type": ["string", "null"], "format": "date-time"}),
    );
    let mut reference = serde_json::Map::new();
    for i in 0..8 {
        reference.insert(
            format!("kind{i}"),
            json!({"type": ["string", "null"], "maxLength": 20 + i, "pattern": "^[a-z0-9]+$"}),
        );
        reference.insert(format!("flag{i}"), nullable("boolean"));
    }
    reference.insert("extra".into(), json!({"type": ["object", "array"]}));
    reference.insert("meta".into(), json!({"$ref": "#/$defs/Meta"}));
    json!({
        "Meta": {"type": ["object", "null"], "properties": meta, "additionalProperties": false},
        "Ref": {"type": ["object", "null"], "properties": reference, "additionalProperties": false},
        "Spec": {
            "type": ["object", "null"],
            "properties": {
                "replicas": {"type": ["integer", "null"], "maximum": 100},
                "refs": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Ref"}},
                "paused": {"type": ["boolean", "null"]},
                "meta": {"$ref": "#/$defs/Meta"},
                "selector": {"type": "object", "additionalProperties": {"type": "string"}}
            },
            "additionalProperties": false
        }
    })
}

/// Values read from slots and objects of optional members are kept process-wide by what
/// determines their tables (a value's HIR with each slot it reads written as that slot's
/// key), so another schema that holds the same definition reuses them though its slots are
/// numbered otherwise. Each schema compiled after the others equals its compile under
/// size budgets no other compile used (`max_work` apart: keys of their own, nothing kept).
#[test]
fn values_and_objects_kept_across_compiles_are_cold_ones() {
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let defs = shared_defs();
    let with = |properties: serde_json::Value| json!({"type": "object", "properties": properties, "$defs": defs.clone()});
    let schemas = [
        with(json!({"metadata": {"$ref": "#/$defs/Meta"}, "spec": {"$ref": "#/$defs/Spec"}})),
        with(json!({
            "items": {"type": ["array", "null"], "items": {"$ref": "#/$defs/Ref"}},
            "metadata": {"$ref": "#/$defs/Meta"},
            "owner": {"$ref": "#/$defs/Meta", "minProperties": 2}
        })),
        with(json!({
            "a": {"type": ["integer", "null"], "minimum": 5},
            "free": {"type": ["object", "array"]},
            "b": {"type": ["boolean", "null"]},
            "ref": {"$ref": "#/$defs/Ref"},
            "spec": {"$ref": "#/$defs/Spec"}
        })),
        with(json!({
            "x": {"type": ["string", "null"], "format": "date-time"},
            "specs": {"type": "array", "items": {"$ref": "#/$defs/Spec"}},
            "n": {"type": "integer", "maximum": 7}
        })),
    ];
    // Tables kept under other JSON options are other tables: whitespace between tokens,
    // and untyped values nested four levels deep (under the same size budgets as five:
    // only the options tell those keys apart).
    let mut spaced = options;
    spaced.json.whitespace = 2;
    let mut shallow = options;
    shallow.json.any_depth = 4;
    for other in [spaced, shallow] {
        for schema in &schemas {
            compile_schema(Some(schema), &other).unwrap();
        }
    }
    // Twice over, in two orders: every schema compiled after the others left their tables.
    let order: Vec<usize> = (0..schemas.len()).chain((0..schemas.len()).rev()).collect();
    for (k, &i) in order.iter().enumerate() {
        let warm = compile_schema(Some(&schemas[i]), &options).unwrap();
        let mut cold_options = options;
        cold_options.limits.max_work += 1 + k;
        let cold = compile_schema(Some(&schemas[i]), &cold_options).unwrap();
        let (w, c) = (&warm.machine.table, &cold.machine.table);
        assert_same_language(w, c, &format!("schema {i} (compile {k})"));
        // And both are the schema's: the bounds of members whose values differ only
        // by them (`count0` .. `count7`, `kind0` .. `kind7`) are each their own.
        let accepts = |text: &str| w.is_accepting(w.walk(constrain::dfa::START, text.as_bytes()));
        let refs = r#"{"kind3":"12345678901234567890123","flag3":null}"#;
        let mut cases: Vec<(&str, String, String)> = match i {
            0 | 1 => vec![(
                "metadata",
                r#"{"count3":3}"#.into(),
                r#"{"count3":2}"#.into(),
            )],
            2 => vec![("ref", refs.into(), refs.replace("123\"", "1234\""))],
            _ => vec![(
                "specs",
                r#"[{"replicas":100}]"#.into(),
                r#"[{"replicas":101}]"#.into(),
            )],
        };
        if i == 1 {
            // The same members, counted: another object (members in declared order, as
            // general mode writes them).
            let two = r#"{"name0":null,"count3":3}"#;
            cases.push(("owner", two.into(), r#"{"count3":3}"#.into()));
        }
        for (member, good, bad) in cases {
            assert!(
                accepts(&format!(r#"{{"{member}":{good}}}"#)),
                "schema {i}: {good}"
            );
            assert!(
                !accepts(&format!(r#"{{"{member}":{bad}}}"#)),
                "schema {i}: {bad}"
            );
        }
    }
}

/// An object of optional members kept from another compile is merged with the other
/// alternatives of a disjunction (`General::merge_objects`) through its skeleton, whose
/// placeholders are slot numbers: the skeleton is built from this compile's HIR, not taken
/// from the compile that kept the object (whose slot numbers read other tables here, or
/// none: an index past the slots). From the cold review of the kept-values round.
#[test]
fn kept_objects_merge_with_this_compiles_slots() {
    let leaves = [
        json!({"type": "string", "maxLength": 4}),
        json!({"type": "integer", "minimum": 2}),
        json!({}),
        json!({"type": ["object", "array"]}),
        json!({"$ref": "#/$defs/T"}),
    ];
    let members = |name: &str, step: usize| {
        let mut m = serde_json::Map::new();
        for i in (0..22).rev() {
            m.insert(
                format!("{name}{i}"),
                leaves[(i * step) % leaves.len()].clone(),
            );
        }
        m
    };
    let tree = json!({"type": ["object", "null"], "minProperties": 1, "properties": {
        "v": {"type": "integer", "exclusiveMaximum": 5},
        "k": {"type": "array", "items": {"$ref": "#/$defs/T"}}}});
    let defs = json!({
        "T": tree,
        "B": {"type": "object", "properties": members("m", 1)},
        "C": {"type": "object", "properties": members("n", 3), "maxProperties": 3}
    });
    let a = json!({"$defs": defs, "type": "object", "properties": {
        "p": {"$ref": "#/$defs/B"},
        "q": {"type": "array", "items": {"$ref": "#/$defs/C"}},
        "t": {"$ref": "#/$defs/T"}}});
    let b = json!({"$defs": defs, "anyOf": [
        {"$ref": "#/$defs/C"},
        {"$ref": "#/$defs/B"},
        {"type": "object", "dependentRequired": {"t": ["x"]}, "properties": {
            "t": {"$ref": "#/$defs/T"}, "x": {"not": {"$ref": "#/$defs/C"}}}}
    ]});
    // Closed objects: with open ones `b` passes the state limit, kept or cold.
    let mut options = Options::default();
    options.json.mode = SchemaMode::General {
        closed: true,
        draft: Default::default(),
    };
    compile_schema(Some(&a), &options).unwrap();
    let warm = compile_schema(Some(&b), &options).unwrap();
    let mut cold_options = options;
    cold_options.limits.max_work += 1000;
    let cold = compile_schema(Some(&b), &cold_options).unwrap();
    assert_same_language(&warm.machine.table, &cold.machine.table, "b after a");
}

/// `kept` (compiled after other schemas) and `cold` (under keys of its own) have one
/// language; `what` names the compile.
fn assert_same_language(kept: &constrain::dfa::Table, cold: &constrain::dfa::Table, what: &str) {
    assert!(
        kept.same_language(cold),
        "{what}: {} states kept, {} cold",
        kept.len(),
        cold.len()
    );
}

/// The smallest case of [`kept_objects_merge_with_this_compiles_slots`] (the cold
/// review's): an object of optional members (`minProperties` writes it linearly) kept by
/// one schema and merged with another object in a disjunction of the next one, whose
/// slots are numbered otherwise. With the first schema's skeleton the merged object read
/// `a` as an integer and `b` as a string.
#[test]
fn a_kept_object_in_a_disjunction_reads_its_own_values() {
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let o = json!({"type": "object", "minProperties": 1, "additionalProperties": false,
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
    let other = json!({"type": "object", "minProperties": 1, "additionalProperties": false,
        "properties": {"c": {"type": "integer"}, "d": {"type": "string"}}});
    compile_schema(Some(&o), &options).unwrap();
    let b = json!({"anyOf": [other, o]});
    let warm = compile_schema(Some(&b), &options).unwrap();
    let t = &warm.machine.table;
    let accepts = |text: &str| t.is_accepting(t.walk(constrain::dfa::START, text.as_bytes()));
    for good in [r#"{"a":"x"}"#, r#"{"b":1}"#, r#"{"c":1,"d":"y"}"#] {
        assert!(accepts(good), "{good}");
    }
    for bad in [r#"{"a":1}"#, r#"{"b":"x"}"#, r#"{"c":"y"}"#] {
        assert!(!accepts(bad), "{bad}");
    }
}
