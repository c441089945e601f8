//! Streaming gives the same message and merged events as one-shot parsing, for every chunking:
//! random byte splits (including 1-byte chunks and splits inside multi-byte characters) of the
//! conformance cases' and the word-boundary cases' outputs, fed with `feed_bytes`.

use std::sync::OnceLock;

use parser_runtime::CompiledTemplate;
use proptest::prelude::*;
use serde_json::Value;
use workspace_tests::{conformance_cases, parse_in_chunks, read_jsonl, workspace_root, Outcome};

struct Sample {
    id: String,
    template: CompiledTemplate,
    prefix: String,
    text: String,
    tools: Vec<Value>,
}

/// Conformance and word-boundary cases whose template compiles and whose one-shot parse
/// succeeds.
fn samples() -> &'static [Sample] {
    static SAMPLES: OnceLock<Vec<Sample>> = OnceLock::new();
    SAMPLES.get_or_init(|| {
        let mut cases = conformance_cases();
        cases.extend(read_jsonl(
            &workspace_root().join("tests/data/word-boundary.jsonl"),
        ));
        let mut out = Vec::new();
        for case in cases {
            if case.get("script").is_some_and(|s| !s.is_null()) {
                continue;
            }
            let Ok(template) = template_build::compile(&case["template"]) else {
                continue;
            };
            let Some(prefix) = case["prefix"].as_str() else {
                continue;
            };
            let text = case["text"].as_str().unwrap_or("").to_string();
            let tools = case["tools"].as_array().cloned().unwrap_or_default();
            let sample = Sample {
                id: case["id"].to_string(),
                template,
                prefix: prefix.to_string(),
                text,
                tools,
            };
            if run(&sample, &[sample.text.len()]).is_ok() {
                out.push(sample);
            }
        }
        out
    })
}

/// Feeds the output in byte chunks of the given sizes (cycled), then finalizes.
fn run(sample: &Sample, sizes: &[usize]) -> Outcome {
    parse_in_chunks(
        &sample.template,
        &sample.prefix,
        &sample.tools,
        &sample.text,
        sizes,
    )
}

fn check(sample: &Sample, sizes: &[usize]) -> Result<(), TestCaseError> {
    let one_shot = run(sample, &[usize::MAX]);
    let streamed = run(sample, sizes);
    prop_assert_eq!(
        &one_shot,
        &streamed,
        "case {} with chunk sizes {:?}",
        sample.id,
        sizes
    );
    Ok(())
}

#[test]
fn samples_cover_the_conformance_cases() {
    assert!(
        samples().len() > 300,
        "only {} usable samples",
        samples().len()
    );
}

#[test]
fn one_byte_chunks_equal_one_shot() {
    for sample in samples() {
        check(sample, &[1]).unwrap_or_else(|e| panic!("{e}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_chunkings_equal_one_shot(index in any::<prop::sample::Index>(), sizes in prop::collection::vec(1usize..12, 1..8)) {
        let all = samples();
        let sample = &all[index.index(all.len())];
        check(sample, &sizes)?;
    }
}
