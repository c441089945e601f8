//! Tables whose large values are shared ([`constrain::json::SchemaHir::shared_table`]) have
//! the same language as the copied ones, store fewer states, and give the same masks.
use std::sync::Arc;

use constrain::dfa::Limits;
use constrain::index::{TokenIndex, VocabIndex};
use constrain::json::{JsonOptions, SchemaLanguage, SchemaMode};
use constrain::template::{compile_schema, Options};
use constrain::vocab::Vocabulary;
use serde_json::{json, Value};

fn schemas() -> Vec<Value> {
    vec![
        json!({}),
        json!(true),
        json!({"type": "object"}),
        json!({"properties": {"a": {"type": "integer"}}}),
        json!({"properties": {"a": {"type": "integer"}, "b": {}}, "required": ["a"]}),
        json!({"type": "array"}),
        json!({"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}),
        json!({"anyOf": [{"type": "string", "pattern": "^a"}, {}]}),
        json!({"properties": {"foo": {"type": "array", "maxItems": 3}, "bar": {"type": "array"}},
               "patternProperties": {"f.o": {"minItems": 2}},
               "additionalProperties": {"type": "integer"}}),
        json!({"maxProperties": 2}),
        json!({"contains": {"const": 1}, "minContains": 2}),
        json!({"type": ["object", "array"], "properties": {"n": {"type": "number"}}}),
        json!({"properties": {"a": {"properties": {"b": {"properties": {"c": {}}}}}}}),
        json!({"items": [{"type": "integer"}, {}], "additionalItems": {"type": "object"}}),
        json!({"oneOf": [{"type": "object", "required": ["a"]}, {"type": "array"}]}),
        json!({"type": "object", "anyOf": [
            {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            {"properties": {"c": {"type": "string"}}, "required": ["c"]}]}),
    ]
}

fn modes() -> Vec<JsonOptions> {
    vec![
        JsonOptions {
            mode: SchemaMode::general(),
            ..JsonOptions::default()
        },
        JsonOptions {
            mode: SchemaMode::general(),
            whitespace: 1,
            ..JsonOptions::default()
        },
    ]
}

#[test]
fn shared_tables_have_the_copied_language() {
    let limits = Limits::default();
    let mut shared = 0;
    for options in modes() {
        for schema in schemas() {
            let language = SchemaLanguage::new(&schema, options)
                .compile_language()
                .unwrap();
            constrain::dfa::set_sharing(false);
            let copied = SchemaLanguage::new(&schema, options)
                .compile_language()
                .unwrap()
                .table(options, &limits)
                .unwrap();
            constrain::dfa::set_sharing(true);
            assert!(!copied.is_shared());
            let t = language.shared_table(options, &limits).unwrap();
            assert_eq!(t.len(), t.clone().stored().len(), "{schema}");
            assert!(t.same_language(&copied), "{schema}");
            assert!(t.clone().stored().same_language(&copied), "{schema}");
            assert!(
                t.clone().stored().minimize().len() == copied.clone().minimize().len(),
                "{schema}"
            );
            if t.is_shared() {
                shared += 1;
                assert!(t.stored_states() < copied.len(), "{schema}");
            }
        }
    }
    assert!(shared >= 10, "{shared} shared");
}

/// The o200k_base vocabulary prepared for masks, and general mode's options.
fn masks_setup() -> (Arc<VocabIndex>, Options) {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let options = Options {
        json: modes()[0],
        ..Options::default()
    };
    (vocab, options)
}

#[test]
fn masks_of_shared_states_are_full_walks() {
    let (vocab, options) = masks_setup();
    for schema in [
        json!({"properties": {"a": {"type": "integer"}}}),
        json!({"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}),
    ] {
        let c = Arc::new(compile_schema(Some(&schema), &options).unwrap());
        assert!(c.machine.table.is_shared(), "{schema}");
        let index = TokenIndex::new(c.clone(), vocab.clone());
        let n = c.machine.table.len() as u32;
        // Every stored state and a spread of computed ones.
        let step = ((n - c.machine.table.stored_states() as u32) / 200).max(1);
        let states = (1..c.machine.table.stored_states() as u32)
            .chain((c.machine.table.stored_states() as u32..n).step_by(step as usize));
        for s in states {
            assert_eq!(
                *index.allowed(s),
                index.allowed_by_full_walk(s),
                "{schema} state {s}"
            );
            assert!(index.is_cached(s));
        }
    }
}

/// Masks of states in shared values, where what one plain character does is remembered per
/// value state ([`TokenIndex::allowed`]): nullable strings with a `maxLength` read in place
/// by the members of a closed object (values in a value), numbers whose plain text goes on
/// into the caller (`,`, `}`). States are filled out of order, so that later masks reuse
/// what earlier ones remembered.
#[test]
fn masks_of_values_read_by_many_calls_are_full_walks() {
    let (vocab, options) = masks_setup();
    let members: serde_json::Map<String, Value> = (0..24)
        .map(|i| {
            let value = match i % 4 {
                3 => json!({"type": "number"}),
                _ => json!({"type": ["string", "null"], "maxLength": 20 + i % 3}),
            };
            (format!("m{i}"), value)
        })
        .collect();
    let schema = json!({"properties": members, "additionalProperties": false});
    let c = Arc::new(compile_schema(Some(&schema), &options).unwrap());
    let table = &c.machine.table;
    assert!(table.is_shared(), "{schema}");
    let index = TokenIndex::new(c.clone(), vocab.clone());
    let n = table.len() as u32;
    let step = (n / 1500).max(1) as usize;
    let mut checked = 0;
    for phase in 0..step {
        for s in (1 + phase as u32..n).step_by(step * 7) {
            let (fast, full) = (index.allowed(s), index.allowed_by_full_walk(s));
            assert!(
                *fast == full,
                "state {s}: {} allowed with the shortcuts, {} by the full walk",
                fast.count(),
                full.count()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} states checked");
}

/// The names of an open object of optional members are read in place (the object's body is
/// a shared value): the masks in its key states, whose plain-text closure steps in the
/// value's own rows, are the full walk's.
#[test]
fn masks_of_names_read_in_place_are_full_walks() {
    let (vocab, options) = masks_setup();
    let members: serde_json::Map<String, Value> = (0..30)
        .map(|i| {
            (
                format!("name_{i}_{}", "x".repeat(i % 5)),
                json!({"type": "string", "maxLength": 30}),
            )
        })
        .collect();
    // Open names, and names of at most 12 characters (plain text dies a few characters
    // on, so a closure that went astray would take plain tokens it must not).
    for schema in [
        json!({"properties": members, "patternProperties": {"^p": {"type": "integer"}}}),
        json!({"properties": members, "propertyNames": {"maxLength": 12}}),
    ] {
        names_match_full_walks(&schema, &options, &vocab);
    }
}

fn names_match_full_walks(schema: &Value, options: &Options, vocab: &Arc<VocabIndex>) {
    let c = Arc::new(compile_schema(Some(schema), options).unwrap());
    let table = &c.machine.table;
    let index = TokenIndex::new(c.clone(), vocab.clone());
    let mut read_in_place = 0;
    for prefix in [
        "{\"",
        "{\"name_1",
        "{\"name_3_xxx",
        "{\"name_3_xxxy",
        "{\"p",
        "{\"q\\n",
        "{\"na\u{e9}",
        "{\"name_0_\":\"a\",\"",
        "{\"name_0_\":\"a\",\"name_2_x",
        "{\"pz\":1,\"",
    ] {
        let s = table.walk(constrain::dfa::START, prefix.as_bytes());
        if s == constrain::dfa::DEAD {
            // A name past 12 characters, or a value the schema refuses.
            continue;
        }
        read_in_place += (s as usize >= table.stored_states()) as usize;
        let (fast, full) = (index.allowed(s), index.allowed_by_full_walk(s));
        assert!(
            *fast == full,
            "after {prefix}: {} allowed with the shortcuts, {} by the full walk",
            fast.count(),
            full.count()
        );
    }
    assert!(
        read_in_place >= 5,
        "{schema}: {read_in_place} key states read in place"
    );
}
