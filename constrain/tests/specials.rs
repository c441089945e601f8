//! Special tokens that are delimiters (Qwen vocabularies have `<tool_call>`, `</tool_call>`,
//! `<think>` and `<|im_end|>` as single ids): allowed exactly where the delimiter is written,
//! never inside content, JSON strings or other bodies; other specials never; EOS only at the
//! end. And the index is shareable across threads.

use std::sync::Arc;

use constrain::index::{Mask, Step, TokenIndex, VocabIndex};
use constrain::template::{compile, Options, Request};
use constrain::vocab::Vocabulary;
use serde_json::{json, Value};

const SPECIALS: [&str; 6] = [
    "<tool_call>",
    "</tool_call>",
    "<think>",
    "</think>",
    "<|im_end|>",
    "<|im_start|>",
];

/// o200k_base's ordinary tokens plus Qwen-style specials after them.
fn qwen_like() -> (Arc<VocabIndex>, Vec<u32>) {
    let base = Vocabulary::builtin("o200k_base").unwrap();
    let mut tokens: Vec<Vec<u8>> = (0..199_998u32).map(|id| base.token(id).to_vec()).collect();
    let mut ids = Vec::new();
    for s in SPECIALS {
        ids.push(tokens.len() as u32);
        tokens.push(s.as_bytes().to_vec());
    }
    let eos = ids[4];
    let vocab = Vocabulary::new(tokens, &ids, &[eos]).unwrap();
    (Arc::new(VocabIndex::new(vocab)), ids)
}

fn walk(index: &TokenIndex, tokens: &[u32]) -> u32 {
    tokens
        .iter()
        .fold(index.start(), |s, &t| match index.advance(s, t) {
            Some(Step::Next(n)) => n,
            other => panic!("token {t}: {other:?}"),
        })
}

/// The first five tokens of `mask` that `other` does not hold, as text.
fn first_missing(mask: &Mask, other: &Mask, vocab: &VocabIndex) -> Vec<String> {
    mask.iter()
        .filter(|&t| !other.contains(t))
        .map(|t| String::from_utf8_lossy(vocab.vocab().token(t)).into_owned())
        .take(5)
        .collect()
}

#[test]
fn delimiter_specials_only_where_delimiters_go() {
    let (vocab, ids) = qwen_like();
    let [tool_call, tool_call_end, think, think_end, im_end, im_start] = ids[..] else {
        unreachable!()
    };
    let template: Value = serde_json::from_str(templates::source("qwen3").unwrap()).unwrap();
    let model = template_build::model::load(&template).unwrap();
    let request = Request {
        tools: vec![
            json!({"type": "function", "function": {"name": "f", "parameters": {
            "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}),
        ],
        ..Request::default()
    };
    let index = TokenIndex::new(
        Arc::new(compile(&model, &request, &Options::default()).unwrap()),
        vocab,
    );
    let bpe = tiktoken_rs::o200k_base().unwrap();
    let text = |s: &str| bpe.encode_ordinary(s);

    let start = index.start();
    let mask = index.allowed(start);
    assert!(mask.contains(think) && mask.contains(tool_call));
    assert!(!mask.contains(im_start) && !mask.contains(tool_call_end) && !mask.contains(think_end));
    // `<|im_end|>` is both the EOS and the end-of-turn delimiter: it may end an empty turn.
    assert!(mask.contains(im_end));

    // Inside the reasoning: its close only.
    let s = walk(&index, &[think]);
    let mask = index.allowed(s);
    assert!(
        mask.contains(think_end)
            && !mask.contains(tool_call)
            && !mask.contains(think)
            && !mask.contains(im_end)
    );

    // Inside a tool call's JSON string: no special at all.
    let mut toks = vec![tool_call];
    toks.extend(text("{\"name\":\"f\",\"arguments\":{\"q\":\"ab"));
    let s = walk(&index, &toks);
    let mask = index.allowed(s);
    for id in &ids {
        assert!(!mask.contains(*id), "special {id} inside a JSON string");
    }
    // After the call's JSON: its close, as one token.
    let mut toks = vec![tool_call];
    toks.extend(text("{\"name\":\"f\",\"arguments\":{\"q\":\"ab\"}}"));
    let s = walk(&index, &toks);
    let mask = index.allowed(s);
    assert!(mask.contains(tool_call_end) && !mask.contains(im_end));
    let s = walk(&index, &[tool_call]);
    assert_eq!(index.advance(s, im_start), None);

    // After content text: another call or the end of turn.
    let s = walk(&index, &text("Hello"));
    let mask = index.allowed(s);
    assert!(mask.contains(tool_call) && mask.contains(im_end) && !mask.contains(think_end));
    assert_eq!(index.advance(s, im_end), Some(Step::End));
}

#[test]
fn indexes_are_send_and_sync_and_shareable() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TokenIndex>();
    assert_send_sync::<VocabIndex>();
    let (vocab, _) = qwen_like();
    let template: Value = serde_json::from_str(templates::source("smollm3").unwrap()).unwrap();
    let model = template_build::model::load(&template).unwrap();
    let index = Arc::new(TokenIndex::new(
        Arc::new(compile(&model, &Request::default(), &Options::default()).unwrap()),
        vocab,
    ));
    // Concurrent first uses of the same masks give the same answers.
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let index = index.clone();
            std::thread::spawn(move || {
                (1..index.machine().table.len() as u32)
                    .map(|s| index.allowed(s).count())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<Vec<usize>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(results.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn the_plain_text_shortcut_gives_the_full_walk() {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let tools = vec![
        json!({"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}, "d": {"type": "string", "format": "date"},
        "p": {"type": "string", "pattern": "[a-z]+ [0-9]"}, "n": {"type": "number"},
        // Body states still matching a pattern: plain characters move between them.
        "c": {"type": "string", "pattern": "[A-Z]{3}"}, "u": {"type": "string", "pattern": "é+\\p{Lu}"}},
        "required": ["q"]}}}),
    ];
    for (template, format) in [
        ("qwen3", None),
        ("gemma-4", None),
        ("qwen3-coder", None),
        ("smollm3", Some(json!({"type": "json_object"}))),
    ] {
        let mut tools = tools.clone();
        if template == "qwen3-coder" {
            // XML parameters: one plain type each.
            tools = vec![
                json!({"type": "function", "function": {"name": "f", "parameters": {
                "type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
                "required": ["q"]}}}),
            ];
        }
        let model = template_build::model::load(
            &serde_json::from_str(templates::source(template).unwrap()).unwrap(),
        )
        .unwrap();
        let request = Request {
            tools,
            response_format: format,
            ..Request::default()
        };
        let index = TokenIndex::new(
            Arc::new(compile(&model, &request, &Options::default()).unwrap()),
            vocab.clone(),
        );
        let states = index.machine().table.len() as u32;
        // Every state of the smaller machines, a spread of the larger one.
        let step = (states / 400).max(1);
        for s in (1..states).step_by(step as usize) {
            let (fast, full) = (index.allowed(s), index.allowed_by_full_walk(s));
            let only_fast = first_missing(&fast, &full, &vocab);
            let only_full = first_missing(&full, &fast, &vocab);
            assert!(
                only_fast.is_empty() && only_full.is_empty(),
                "{template} state {s}: only with the shortcut {only_fast:?}, only in the full walk {only_full:?}"
            );
        }
    }
}
