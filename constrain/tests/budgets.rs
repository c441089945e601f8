//! Compile budgets of `constrain` on hostile requests (issue 17): each ends quickly, in a
//! constraint or in a [`ConstrainError`] naming the budget ([`Budget`]), and each budget can be
//! raised through [`Options`]. The reproducers follow the hostile-input campaign: an `enum` of
//! 100,000 strings, a `pattern` of `.{1000}`, a response format of 5,000 properties.

use std::time::{Duration, Instant};

use constrain::dfa::Budget;
use constrain::template::{compile, ConstrainError, Constraint, Options, Request};
use serde_json::{json, Value};

fn model() -> template_build::TemplateModel {
    let value: Value = serde_json::from_str(templates::source("qwen3").unwrap()).unwrap();
    template_build::model::load(&value).unwrap()
}

/// Compiles qwen3 with `schema` as the response format, timing it.
fn with_schema(schema: Value, options: &Options) -> (Result<Constraint, ConstrainError>, Duration) {
    let request = Request {
        response_format: Some(json!({"type": "json_schema",
            "json_schema": {"name": "x", "strict": true, "schema": schema}})),
        ..Request::default()
    };
    let started = Instant::now();
    let result = compile(&model(), &request, options);
    (result, started.elapsed())
}

/// The error of a compile that must fail (a constraint's `Debug` is too long to print).
fn refused(result: Result<Constraint, ConstrainError>) -> ConstrainError {
    match result {
        Ok(_) => panic!("compiled; a budget error was expected"),
        Err(e) => e,
    }
}

/// Default options in general schema mode.
fn general_options() -> Options {
    use constrain::json::{JsonOptions, SchemaMode};
    Options {
        json: JsonOptions {
            mode: SchemaMode::general(),
            ..JsonOptions::default()
        },
        ..Options::default()
    }
}

fn object(properties: serde_json::Map<String, Value>) -> Value {
    let required: Vec<&String> = properties.keys().collect();
    json!({"type": "object", "properties": properties, "required": required,
           "additionalProperties": false})
}

fn one_property(schema: Value) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert("a".into(), schema);
    object(properties)
}

#[test]
fn an_enum_of_100000_strings_compiles_quickly() {
    // Over 40 s before (a quadratic duplicate check).
    let values: Vec<String> = (0..100_000).map(|i| format!("value-{i}")).collect();
    let (result, took) = with_schema(one_property(json!({"enum": values})), &Options::default());
    let constraint = result.unwrap();
    let table = &constraint.machine.table;
    assert!(table.matches(br#"{"a":"value-99999"}<|im_end|>"#));
    assert!(!table.matches(br#"{"a":"value-100000"}<|im_end|>"#));
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn a_long_counted_pattern_ends_quickly() {
    // Over 40 s before: the position construction's candidate sets were not counted as work.
    let (result, took) = with_schema(
        one_property(json!({"type": "string", "pattern": ".{1000}"})),
        &Options::default(),
    );
    match result {
        Ok(c) => {
            let text = format!("{{\"a\":\"{}\"}}<|im_end|>", "x".repeat(1000));
            assert!(c.machine.table.matches(text.as_bytes()));
        }
        Err(e) => assert!(e.budget.is_some(), "{e}"),
    }
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn five_thousand_properties_end_in_a_named_budget() {
    // 19 s before "too large", which named no budget.
    let mut properties = serde_json::Map::new();
    for i in 0..5000 {
        properties.insert(format!("p{i}"), json!({"type": "string"}));
    }
    let (result, took) = with_schema(object(properties.clone()), &Options::default());
    let e = refused(result);
    assert!(e.budget.is_some(), "{e}");
    let budget = e.budget.unwrap();
    assert!(e.reason.contains(budget.name()), "{e}");
    assert!(took < Duration::from_secs(20), "{took:?}");
    // A smaller object of the same kind compiles.
    let small: serde_json::Map<String, Value> = properties.into_iter().take(50).collect();
    let (result, _) = with_schema(object(small), &Options::default());
    result.unwrap();
}

#[test]
fn each_budget_is_named_and_can_be_raised() {
    let schema = || {
        let mut properties = serde_json::Map::new();
        for i in 0..40 {
            properties.insert(format!("p{i}"), json!({"type": "integer"}));
        }
        object(properties)
    };
    let (result, _) = with_schema(schema(), &Options::default());
    result.unwrap();
    // States.
    let mut options = Options::default();
    options.limits.max_states = 100;
    let e = refused(with_schema(schema(), &options).0);
    assert_eq!(e.budget, Some(Budget::States), "{e}");
    assert!(e.reason.contains("Limits::max_states"), "{e}");
    // Schema size.
    let mut options = Options::default();
    options.json.max_nodes = 20;
    let list = one_property(json!({"type": "array", "items": schema()}));
    let e = refused(with_schema(list, &options).0);
    assert_eq!(e.budget, Some(Budget::SchemaNodes), "{e}");
    assert!(e.reason.contains("JsonOptions::max_nodes"), "{e}");
    // Time: a budget already spent.
    let options = Options {
        time_budget: Some(Duration::ZERO),
        ..Options::default()
    };
    let e = refused(with_schema(schema(), &options).0);
    assert_eq!(e.budget, Some(Budget::Time), "{e}");
    assert!(e.reason.contains("Options::time_budget"), "{e}");
    // Running out of time is not a size passed.
    assert!(e.reason.contains("longer than the time budget"), "{e}");
    assert!(!e.reason.contains("too large"), "{e}");
    // No time bound.
    let options = Options {
        time_budget: None,
        ..Options::default()
    };
    with_schema(schema(), &options).0.unwrap();
}

/// General JSON Schema mode on hostile schemas: each ends quickly, in a constraint or in an
/// error naming its budget or its keyword.
#[test]
fn general_mode_hostile_schemas_end_quickly() {
    use constrain::template::compile_schema;
    let options = general_options();
    let many_patterns: Vec<Value> = (0..50)
        .map(|i| json!({"pattern": format!("(a|b)*a(a|b){{{}}}", i % 12)}))
        .collect();
    let many_branches: Vec<Value> = (0..30)
        .map(|i| json!({"minimum": i, "maximum": i + 100}))
        .collect();
    let mut chain = serde_json::Map::new();
    for i in 0..200 {
        chain.insert(
            format!("d{i}"),
            json!({"type": "object", "properties": {"next": {"$ref": format!("#/$defs/d{}", i + 1)}},
                   "required": ["next"]}),
        );
    }
    chain.insert("d200".into(), json!({"type": "integer"}));
    for (what, schema, budget_or_keyword) in [
        // A maximum past max_count is generated up to it; a minimum past it is an error.
        (
            "maxLength 1e9",
            json!({"type": "string", "maxLength": 1_000_000_000u64}),
            None,
        ),
        (
            "minLength 1e9",
            json!({"type": "string", "minLength": 1_000_000_000u64}),
            Some(Ok(Budget::SchemaNodes)),
        ),
        (
            "maxItems 1e9, integers",
            json!({"type": "array", "items": {"type": "integer"}, "maxItems": 1_000_000_000u64}),
            None,
        ),
        // 256 counted places of one untyped value read in place: no rows of their own,
        // a sixteenth of a state each (`dfa::IN_PLACE_PER_STATE`).
        (
            "maxItems 1e9, untyped",
            json!({"type": "array", "maxItems": 1_000_000_000u64}),
            None,
        ),
        // 256 counted places of that array (each of its 293,891 states a sixteenth) pass
        // the states budget.
        (
            "maxItems 1e9 of maxItems 1e9, untyped",
            json!({"type": "array", "maxItems": 1_000_000_000u64,
                   "items": {"type": "array", "maxItems": 1_000_000_000u64}}),
            Some(Ok(Budget::States)),
        ),
        (
            "integers past any written form",
            json!({"type": "integer", "minimum": 1e300, "maximum": 3e300}),
            None,
        ),
        (
            "a multipleOf too fine, unbounded",
            json!({"type": "number", "multipleOf": 0.123456789}),
            Some(Err("multipleOf")),
        ),
        (
            "a multipleOf too fine, few multiples in range",
            json!({"type": "integer", "multipleOf": 123456789, "minimum": 0, "maximum": 1e9}),
            None,
        ),
        (
            "allOf of 50 patterns",
            json!({"type": "string", "allOf": many_patterns}),
            None,
        ),
        (
            "oneOf of 30 ranges",
            json!({"oneOf": many_branches}),
            Some(Ok(Budget::SchemaNodes)),
        ),
        (
            "a chain of 200 references",
            json!({"$defs": chain, "$ref": "#/$defs/d0"}),
            Some(Ok(Budget::SchemaNodes)),
        ),
        (
            "a reference to itself",
            json!({"$ref": "#", "type": "integer"}),
            None,
        ),
    ] {
        let started = Instant::now();
        let result = compile_schema(Some(&schema), &options);
        let took = started.elapsed();
        assert!(took < Duration::from_secs(20), "{what}: {took:?}");
        match (result, budget_or_keyword) {
            (Ok(_), None) => {}
            (Err(e), Some(Ok(b))) => assert_eq!(e.budget, Some(b), "{what}: {e}"),
            (Err(e), Some(Err(k))) => {
                assert!(e.at.ends_with(k) && e.budget.is_none(), "{what}: {e}")
            }
            (Ok(_), Some(_)) => panic!("{what}: compiled; an error was expected"),
            (Err(e), None) => panic!("{what}: {e}"),
        }
    }
    // The capped maximum: strings up to max_count characters, not more.
    let capped = compile_schema(
        Some(&json!({"type": "string", "maxLength": 1_000_000_000u64})),
        &options,
    )
    .unwrap();
    let at = |n: usize| format!("\"{}\"", "a".repeat(n));
    assert!(capped.machine.table.matches(at(256).as_bytes()));
    assert!(!capped.machine.table.matches(at(257).as_bytes()));
    // Untyped items up to max_count of them.
    let capped = compile_schema(
        Some(&json!({"type": "array", "maxItems": 1_000_000_000u64})),
        &options,
    )
    .unwrap();
    let items = |n: usize| format!("[{}]", vec![r#"{"a":[1]}"#; n].join(","));
    assert!(capped.machine.table.matches(items(256).as_bytes()));
    assert!(!capped.machine.table.matches(items(257).as_bytes()));
}

/// A count's lower bound past `JsonOptions::max_count` is refused at the keyword that set
/// it, under `properties`, `allOf` and `not` (where a negated upper bound wants more).
#[test]
fn count_bounds_past_max_count_name_their_keyword() {
    use constrain::template::compile_schema;
    let options = general_options();
    for (schema, place, says) in [
        (
            json!({"properties": {"a": {"type": "string", "minLength": 100_000}}}),
            "/properties/a/minLength",
            "minLength 100000",
        ),
        (
            json!({"allOf": [{"minLength": 5}, {"minLength": 500}]}),
            "/allOf/1/minLength",
            "minLength 500",
        ),
        (
            json!({"not": {"maxLength": 300}}),
            "/not/maxLength",
            "maxLength 300 negated wants 301 or more",
        ),
        (
            json!({"properties": {"x": {"type": "array", "not": {"maxItems": 400}}}}),
            "/properties/x/not/maxItems",
            "maxItems 400 negated wants 401 or more",
        ),
        (
            json!({"type": "object", "minProperties": 1000}),
            "/minProperties",
            "minProperties 1000",
        ),
    ] {
        let e = match compile_schema(Some(&schema), &options) {
            Ok(_) => panic!("{schema}: compiled"),
            Err(e) => e,
        };
        assert_eq!(e.budget, Some(Budget::SchemaNodes), "{schema}: {e}");
        assert!(e.at.ends_with(place), "{schema}: {e}");
        assert!(e.to_string().contains(says), "{schema}: {e}");
    }
}

/// A child place generated once and met again (general mode reuses its language) still
/// counts its schema places each time it is met: the place budget (200,000, half of
/// `JsonOptions::max_nodes`) ends a compile exactly where generating every place again
/// would. A `$ref` unrolled three times with `n` members that all read it meets about
/// `n^3` places: 60 members (216,000) pass the budget, 40 (64,000) do not, and both are
/// generated from about `3n` distinct places. The budget its error names moves it: 60
/// members pass it with `max_nodes` doubled, and 40 no longer do with it an eighth.
#[test]
fn reused_places_count_against_the_place_budget() {
    use constrain::template::compile_schema;
    let tree = |n: usize| {
        let members: serde_json::Map<String, Value> = (0..n)
            .map(|i| (format!("p{i}"), json!({"$ref": "#/$defs/node"})))
            .collect();
        json!({"$defs": {"node": {"type": "object", "properties": members}},
               "$ref": "#/$defs/node"})
    };
    let options = general_options();
    let e = match compile_schema(Some(&tree(60)), &options) {
        Ok(_) => panic!("216,000 places compiled"),
        Err(e) => e,
    };
    assert_eq!(e.budget, Some(Budget::SchemaNodes), "{e}");
    assert!(e.reason.contains("schema places collected"), "{e}");
    compile_schema(Some(&tree(40)), &options).unwrap();
    // Raised, the place budget passes (the table may still pass the state budget).
    let mut raised = general_options();
    raised.json.max_nodes *= 2;
    if let Err(e) = compile_schema(Some(&tree(60)), &raised) {
        assert_ne!(e.budget, Some(Budget::SchemaNodes), "{e}");
    }
    let mut lowered = general_options();
    lowered.json.max_nodes /= 8;
    let e = match compile_schema(Some(&tree(40)), &lowered) {
        Ok(_) => panic!("64,000 places compiled within 25,000"),
        Err(e) => e,
    };
    assert!(e.reason.contains("more than 25000 schema places"), "{e}");
}

/// A negated `anyOf` that reads itself again (`d0` is a string or `d0`) was complemented
/// without end until the stack overflowed (the process aborted). Now it is a part that
/// cannot be negated: under `not` the compile is refused with a message naming the place;
/// where the negation only tells `oneOf` branches apart, the pair reads as `anyOf` and the
/// schema compiles.
#[test]
fn a_ref_cycle_under_a_negation_is_an_error_not_a_stack_overflow() {
    use constrain::template::compile_schema;
    let defs = json!({"d0": {"anyOf": [{"type": "string"}, {"$ref": "#/definitions/d0"}]}});
    let negated = json!({"$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": defs, "type": "object",
        "properties": {"a": {"not": {"$ref": "#/definitions/d0"}}}});
    let e = match compile_schema(Some(&negated), &general_options()) {
        Ok(_) => panic!("compiled"),
        Err(e) => e,
    };
    assert!(e.at.ends_with("/properties/a/not"), "{e}");
    assert!(e.reason.contains("negations nested deeper than"), "{e}");
    let branches = json!({"$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": defs,
        "oneOf": [{"$ref": "#/definitions/d0"}, {"type": "integer"}]});
    let c = compile_schema(Some(&branches), &general_options()).unwrap();
    assert!(c.machine.table.matches(br#""x""#));
    assert!(c.machine.table.matches(b"7"));
}
