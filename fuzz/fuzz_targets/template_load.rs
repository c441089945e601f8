//! Template loading: any bytes as a template file (a bare template or a
//! `tokenizer_config.json`) either compile or give typed errors, each located in the file
//! (a line:column inside the text); never a panic. A template that compiles is then run on an
//! output: streaming in 1-byte and in 3-byte chunks equals one-shot parsing.
//!
//! Input: `TEMPLATE [0xFF OUTPUT [0xFF PREFIX]]` (0xFF never occurs in UTF-8; `seed.py` writes
//! the conformance cases this way). Invalid UTF-8 in a part is replaced (U+FFFD).
#![no_main]

use libfuzzer_sys::fuzz_target;
use response_templates_fuzz::assert_streaming_equals_one_shot;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xFF);
    let text = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let output = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let prefix = String::from_utf8_lossy(parts.next().unwrap_or_default());
    let template = match template_build::compile_text(&text) {
        Ok(t) => t,
        Err(errors) => {
            assert!(!errors.0.is_empty(), "an error without a problem");
            let lines = text.split('\n').count();
            for e in &errors.0 {
                let (line, col) = e.line_col.expect("every error is located");
                assert!(
                    line >= 1 && line <= lines && col >= 1,
                    "{e}: line:column {line}:{col} outside the text ({lines} lines)"
                );
                assert!(!e.to_string().is_empty());
            }
            return;
        }
    };
    // The same template given as a value compiles too.
    let value = template_build::compile::template_value_from_text(&text).expect("it compiled");
    assert!(template_build::compile(&value).is_ok());
    for sizes in [[1], [3]] {
        assert_streaming_equals_one_shot(&template, &prefix, &[], &output, &sizes);
    }
});
