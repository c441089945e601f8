//! Schema compilation: any JSON value as a JSON Schema (`structured_outputs::compile`, strict
//! and plain), as a `response_format`, as a tool's `parameters` or as a tool list
//! (`StrictTools::new`), and as `constrain`'s schema language. Never a panic; a typed error
//! (each with a JSON pointer) or a compiled schema. Where both the checker and the generator
//! take the schema in JSON Schema mode, every value the generator's masks produce is a JSON
//! object the checker finds no violation in. General schema mode (`SchemaMode::general`):
//! compiled within a time budget or a typed error, and every complete sample is JSON.
//!
//! Input: JSON text (anything else is skipped).
#![no_main]

use std::sync::Arc;

use constrain::index::{TokenIndex, VocabIndex};
use libfuzzer_sys::fuzz_target;
use response_templates_fuzz::{fuzz_options, sample_outputs, seed_of, small_vocabulary};
use serde_json::{json, Value};
use structured_outputs::{ResponseFormat, SchemaErrors, StrictTools, Strictness};

fn typed(errors: &SchemaErrors) {
    assert!(!errors.0.is_empty(), "an error without a problem");
    for e in &errors.0 {
        assert!(
            e.pointer.is_empty() || e.pointer.starts_with('/'),
            "not a JSON pointer: {e:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    for strictness in [Strictness::Strict, Strictness::Plain] {
        if let Err(e) = structured_outputs::compile(&schema, strictness) {
            typed(&e);
        }
    }
    for request in [
        schema.clone(),
        json!({"type": "json_schema", "json_schema": {"schema": schema}}),
    ] {
        if let Err(e) = ResponseFormat::from_request(&request) {
            typed(&e);
        }
    }
    let tool = json!({"type": "function", "function": {"name": "f", "parameters": schema}});
    if let Err(e) = StrictTools::new(&[tool]) {
        typed(&e);
    }
    if let Some(list) = schema.as_array() {
        if let Err(e) = StrictTools::new(list) {
            typed(&e);
        }
    }
    let vocab = Arc::new(VocabIndex::new(small_vocabulary(&[])));
    // General JSON Schema mode (token masks for the schemas people send, any keyword): a
    // compiled schema or a typed error at a place in the schema, within a time budget
    // below the fuzzer's time-out; every complete sample is JSON.
    let mut general = fuzz_options();
    general.json.mode = constrain::json::SchemaMode::general();
    general.time_budget = Some(std::time::Duration::from_secs(2));
    match constrain::template::compile_schema(Some(&schema), &general) {
        Ok(c) => {
            let index = TokenIndex::new(Arc::new(c), vocab.clone());
            sample_outputs(&index, seed_of(data), 2, |text| {
                if let Err(e) = serde_json::from_str::<Value>(text) {
                    panic!("general mode wrote {text:?} for {schema}: not JSON: {e}");
                }
            });
        }
        Err(e) => assert!(e.at.starts_with("schema"), "{e}"),
    }
    // The generator against the checker.
    let Ok(format) = ResponseFormat::json_schema(&schema) else {
        return;
    };
    let constraint = match constrain::template::compile_schema(Some(&schema), &fuzz_options()) {
        Ok(c) => c,
        Err(e) => {
            assert!(e.at.starts_with("schema"), "{e}");
            return;
        }
    };
    let index = TokenIndex::new(Arc::new(constraint), vocab);
    sample_outputs(&index, seed_of(data), 2, |text| {
        let message = json!({"role": "assistant", "content": text});
        let violations = format.check(message.as_object().unwrap());
        assert!(
            violations.is_empty(),
            "generated {text:?} breaks the schema {schema}: {violations:?}"
        );
    });
});
