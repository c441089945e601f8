//! Our loader agrees with the reference (transformers 5.24.0, `load_response_template`) on
//! whether each template loads: every distinct template of the conformance cases plus probes
//! of every load-time check. `tests/data/load_expectations.jsonl` was produced by running the
//! reference on each template (`tests/data/gen_load_expectations.py`).

use serde_json::Value;

#[test]
fn load_agrees_with_reference() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/load_expectations.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("read load_expectations.jsonl");
    let mut disagreements = Vec::new();
    let mut count = 0;
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Value = serde_json::from_str(line).expect("a JSON line");
        let origin = entry["origin"].as_str().unwrap_or("?");
        let expect_loads = entry["loads"].as_bool().expect("a boolean 'loads'");
        count += 1;
        match (
            template_build::model::load(&entry["template"]),
            expect_loads,
        ) {
            (Ok(_), true) | (Err(_), false) => {}
            (Ok(_), false) => disagreements.push(format!(
                "line {}: {origin}: loads here, the reference rejects it: {}",
                i + 1,
                entry["reference_error"]
            )),
            (Err(errors), true) => disagreements.push(format!(
                "line {}: {origin}: rejected here, the reference loads it:\n{errors}",
                i + 1
            )),
        }
    }
    assert!(count > 100, "only {count} expectations");
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
