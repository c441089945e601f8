//! The router's outcome memo (`parser-runtime-core/src/router/memo.rs`) saves the rescans after
//! a commit and nothing else: with it turned off (`set_rescan_memo(false)`) every event and
//! every message is the same (past the per-state cap of look-ahead branches, a known limit,
//! the two could differ; these outputs stay under it), on the conformance outputs and on generated outputs built to
//! keep delimiters pending over long stretches (whole-text look-aheads, run-on opens, greedy
//! parts that fail late, look-ahead branches), in any chunking.

use parser_runtime::{CompiledTemplate, ResponseParser};
use proptest::prelude::*;
use serde_json::{json, Value};
use workspace_tests::{compiled_conformance, delimiter_pieces, pieces, workspace_root};

/// Events and message (or the error) of one run, as JSON, with the memo on or off.
fn run(template: &CompiledTemplate, text: &str, size: usize, memo: bool) -> Value {
    let mut parser = match ResponseParser::new(template, "") {
        Ok(p) => p,
        Err(e) => return json!({"construct": e.to_string()}),
    };
    parser.set_hold_limit(usize::MAX);
    parser.set_rescan_memo(memo);
    let mut events = Vec::new();
    for piece in pieces(text, size) {
        match parser.feed(piece) {
            Ok(ev) => events.extend(ev),
            Err(e) => return json!({"events": events, "error": e.to_string()}),
        }
    }
    match parser.finalize() {
        Ok((message, ev)) => {
            events.extend(ev);
            json!({"events": events, "message": message})
        }
        Err(e) => json!({"events": events, "error": e.to_string()}),
    }
}

/// The conformance outputs, each repeated past a few checkpoints (128 bytes apart).
#[test]
fn memo_changes_nothing_on_conformance_outputs() {
    for (case, template, text) in compiled_conformance() {
        if text.is_empty() {
            continue;
        }
        let long = text.repeat(600 / text.len() + 1);
        for size in [0, 1, 7] {
            assert_eq!(
                run(template, &long, size, true),
                run(template, &long, size, false),
                "{} in {size}-byte chunks",
                case["id"]
            );
        }
    }
}

/// Templates whose delimiters stay pending over long stretches.
fn pending_templates() -> Vec<CompiledTemplate> {
    let specs = [
        // DeepSeek-R1's: a whole-text look-ahead open, a close with a `$` branch.
        json!({"start_anchor": "S", "fields": {
            "reasoning_content": {"open_pattern": "(?=[\\s\\S]*?</think>)", "close_pattern": "</think>\\s*"},
            "content": {"close_pattern": "<E>\\s*|$"}}}),
        // A run-on open (`[^<]*`) and an implicit close.
        json!({"start_anchor": "S", "fields": {
            "content": {"open_pattern": "(?:<m>)?[^<]*<t>", "close": "<e>"},
            "rest": {"close": "!"}}}),
        // Greedy parts that fail late, with and without a look-ahead.
        json!({"start_anchor": "S", "fields": {
            "a": {"open_pattern": "a(?:[ab!]*c)?", "close_pattern": "!|(?=<)"},
            "b": {"open_pattern": "<b(?:[^>]*x)?(?=[ab]*!)", "close": ">"},
            "rest": {}}}),
        // The look-ahead branch with an ambiguous main part (the per-state cap).
        json!({"start_anchor": "S", "fields": {
            "x": {"open_pattern": "[ab](?:c[^d]*d)?(?=cx)", "close": "!"},
            "rest": {"close": "<E>"}}}),
    ];
    specs
        .iter()
        .map(|s| template_build::compile(s).unwrap())
        .collect()
}

fn pending_output() -> impl Strategy<Value = String> {
    const PIECES: &[&str] = &[
        "</think>", "<E>", "<E>\n", "<m>", "<t>", "<e>", "!", "a", "b", "ab", "c", "cx", "d", "x",
        "<", "<b", ">", "  ", "\n", "</thi", "<E",
    ];
    let piece = prop_oneof![
        8 => proptest::sample::select(PIECES).prop_map(str::to_owned),
        1 => "[a-z ]{0,40}",
        1 => proptest::sample::select(PIECES).prop_flat_map(|p| (Just(p), 1usize..80))
            .prop_map(|(p, n)| p.repeat(n)),
    ];
    proptest::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn memo_changes_nothing_on_pending_outputs(text in pending_output(), size in 0usize..9) {
        for (i, template) in pending_templates().iter().enumerate() {
            prop_assert_eq!(
                run(template, &text, size, true),
                run(template, &text, size, false),
                "template {}", i
            );
        }
    }

    /// Every vendored template on text made of its own delimiters (as written, or a sample
    /// of their patterns), cut short, repeated, with text between.
    #[test]
    fn memo_changes_nothing_on_vendored_templates(
        plan in proptest::collection::vec((0usize..1000, 1usize..60, 0usize..6), 0..40),
        size in 0usize..9,
    ) {
        let dir = workspace_root().join("templates");
        for name in templates::names() {
            let template = templates::by_name(name).expect("listed").expect("tables");
            let spec: Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join(format!("{name}.json"))).unwrap(),
            )
            .unwrap();
            let pieces = delimiter_pieces(&spec);
            let mut text = String::new();
            for &(i, n, how) in &plan {
                let piece = &pieces[i % pieces.len()];
                match how {
                    0 => text.push_str(&piece.repeat(n)),
                    1 => {
                        let cut = piece.char_indices().nth(n % piece.chars().count()).map_or(0, |(i, _)| i);
                        text.push_str(&piece[..cut]);
                    }
                    2 => text.push_str(&"x ".repeat(n)),
                    3 => text.push_str("{\"a\": \"<"),
                    _ => text.push_str(piece),
                }
            }
            prop_assert_eq!(
                run(template, &text, size, true),
                run(template, &text, size, false),
                "{}", name
            );
        }
    }
}
