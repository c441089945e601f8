//! Parsing under any chunking: a vendored template, an output built from the fuzz input (its
//! delimiters, near misses, any bytes) and chunk sizes that cut anywhere, also inside a
//! character. Streaming must give exactly the one-shot message, merged events or error, and
//! never panic; in lenient mode as well. Input layout: `response_templates_fuzz` (`src/lib.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use response_templates_fuzz::{
    assert_lenient_streaming_equals_one_shot, assert_streaming_equals_one_shot, Case,
};

fuzz_target!(|data: &[u8]| {
    let Some(case) = Case::decode(data) else {
        return;
    };
    let sizes = if case.sizes.is_empty() {
        vec![1]
    } else {
        case.sizes.clone()
    };
    assert_streaming_equals_one_shot(
        case.vendored.template,
        case.prefix,
        case.tools,
        &case.output,
        &sizes,
    );
    // Lenient mode too; the policy for calls in the reasoning from the output's length.
    assert_lenient_streaming_equals_one_shot(
        case.vendored.template,
        case.prefix,
        case.tools,
        &case.output,
        &sizes,
        case.output.len() % 2 == 1,
    );
});
