//! Masks computed with the plain-text shortcuts (`TokenIndex::allowed`: every plain token
//! at once where any plain text stays live, the plain tokens up to a length where texts of
//! one more character all die) equal masks from walking every token
//! (`TokenIndex::allowed_by_full_walk`), on schemas that reach each shortcut: names of open
//! objects (a declared name's prefix, then any name), strings with length bounds, patterns,
//! strings limited to some non-ASCII characters, and formats.
use std::sync::Arc;

use constrain::index::{Mask, TokenIndex, VocabIndex};
use constrain::json::SchemaMode;
use constrain::template::{compile_schema, Options};
use constrain::vocab::Vocabulary;
use serde_json::json;

#[test]
fn shortcut_masks_are_full_walks() {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let names: serde_json::Map<String, serde_json::Value> = (0..40)
        .map(|i| {
            (
                format!("name_{i}_{}", "x".repeat(i % 7)),
                json!({"type": "boolean"}),
            )
        })
        .collect();
    for schema in [
        json!({"type": "object", "properties": names}),
        json!({"type": "object", "properties": {"api_token": {"type": "string", "maxLength": 40}}}),
        json!({"type": "string", "minLength": 3, "maxLength": 9}),
        json!({"type": "string", "maxLength": 200}),
        json!({"type": "string", "pattern": "^[a-z]{2,5}$"}),
        json!({"type": "string", "pattern": "^[éü]*$"}),
        // Names and texts whose multi-byte characters go on in some states and die or
        // leave in others (one walk per state after a lead byte is shared by the states
        // reaching it).
        json!({"type": "object", "properties": {
            "café": {"type": "integer"}, "caféine": {}, "naïve": {"type": "string"},
            "日本": {"type": "boolean"}, "日本語": {}, "😀x": {}}}),
        json!({"type": "string", "pattern": "^[日本😀a-zé]{1,6}$"}),
        // Every character but `é`: only its last byte dies.
        json!({"type": "string", "pattern": "^[^é]*$"}),
        json!({"type": "string", "pattern": "^(abc|xyz)+$"}),
        // ECMA-262's `.` leaves out U+2028 and U+2029 (`e2 80 a8`, `e2 80 a9`), which are
        // not plain text; U+1028 (`e1 80 a8`) and U+2068 (`e2 81 a8`) are, and die here.
        json!({"type": "string", "pattern": "^(\\d+\\.\\d+\\.\\d+.*)$", "maxLength": 32}),
        json!({"type": "string", "pattern": "^.*$"}),
        json!({"type": "string", "pattern": "^[^\u{1028}\u{2028}\u{2068}]*$"}),
        json!({"type": "string", "pattern": "^[^\u{2029}]*$"}),
        json!({"type": "string", "format": "date-time"}),
        // Strings of ASCII characters only, where non-ASCII text dies: URIs, host names,
        // ASCII classes, with and without a length bound, and a first character restricted.
        json!({"type": "string", "format": "uri"}),
        json!({"type": "string", "format": "hostname"}),
        json!({"type": "string", "pattern": "^[A-Za-z0-9]+$"}),
        json!({"type": "string", "pattern": "^[a-zA-Z0-9_-]*$", "maxLength": 12}),
        json!({"type": "string", "pattern": "^[a-zA-Z_]\\w*"}),
        // Lower-case letters and digits, where upper-case letters die (the lower-case
        // tier): identifiers, MIME types (`\\s` takes spaces and Unicode spaces too), host
        // labels with a length bound, and a prefix of lower-case letters then others.
        json!({"type": "string", "pattern": "^[a-z0-9_.-]+:[a-z0-9_.-]+$"}),
        json!({"type": "string", "pattern": "^[\\sa-z0-9\\-+;\\.=\\/]+$"}),
        json!({"type": "string", "pattern": "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 63}),
        json!({"type": "string", "pattern": "^[a-z]{2,4}[A-Z0-9]*$"}),
        json!({"type": "array", "items": {"type": "string", "pattern": "^[a-z0-9]*$"}}),
        json!({"type": "array", "items": {"type": "string", "maxLength": 4}}),
        // States one byte away from plain text: the last characters of escapes (`\u001`
        // then a hex digit), `"` opening a string after `[`, `:` or `,`; and next to them
        // states whose first bytes lead nowhere plain (digits, `\u` then `0`).
        json!({"type": "string"}),
        json!({"type": "array", "items": {"type": "string"}}),
        json!({"type": "object", "additionalProperties": {"type": ["string", "number"]}}),
        json!({"enum": ["a\u{1}b", "x\"y", "tab\tz", 12]}),
        json!({"type": "string", "pattern": "^[a-z ]*$"}),
        json!({"propertyNames": {"maxLength": 3}, "additionalProperties": {"type": "integer"}}),
        // Escapes in strings of a bounded length: after `\u00` and a hex digit, only tokens
        // whose other characters fit in the length left (`Tier::plain_tails` by length).
        json!({"type": "string", "maxLength": 6}),
        json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 2, "maxLength": 9}}}),
        json!({"type": "string", "format": "uri", "maxLength": 24}),
        // URI characters (the fourth tier: unreserved, sub-delims and `/`): where all of
        // them go on, where one of them dies (`~`), and relative references.
        json!({"type": "string", "pattern": "^[A-Za-z0-9._~!$&'()*+,;=/-]*$"}),
        json!({"type": "string", "pattern": "^[a-z0-9/._!$&'()*+,;=-]+$"}),
        json!({"type": "string", "format": "uri-reference", "maxLength": 60}),
        json!({"type": "array", "items": {"type": "string", "pattern": "^[^q]*$", "maxLength": 5}}),
        // String bodies counting their characters far from both bounds: each token's tail
        // past its plain prefix walked from the state that many characters on
        // (`Tier::tails_by_prefix`); a closing quote `p` characters on meets `minLength`
        // where one right away does not.
        json!({"type": "string", "minLength": 150, "maxLength": 400}),
        json!({"type": "object", "properties": {"id": {"type": "string", "minLength": 140, "maxLength": 300}}}),
    ] {
        let c = Arc::new(compile_schema(Some(&schema), &options).unwrap());
        let index = TokenIndex::new(c.clone(), vocab.clone());
        let n = c.machine.table.len() as u32;
        let step = (n / 300).max(1);
        for s in (1..n).step_by(step as usize) {
            assert_full_walk(&index, s, &schema);
        }
    }
}

/// Asserts that `state`'s mask equals the full walk's, and returns it; `what` names the
/// schema or template in the failure.
fn assert_full_walk(index: &TokenIndex, state: u32, what: &serde_json::Value) -> Mask {
    let fast = index.allowed(state);
    let full = index.allowed_by_full_walk(state);
    assert!(
        *fast == full,
        "{what} state {state}: {} allowed with the shortcuts, {} by the full walk",
        fast.count(),
        full.count()
    );
    full
}

/// The masks along an object's names share the walks of the roots whose byte leads to the
/// state of any other name: each root's walk is kept per state after its byte, from the
/// second mask meeting that state on (`RootWalks`). Every state's mask equals the full
/// walk, asked in both orders on two indexes (walks kept by earlier masks serve the later
/// ones): names of upper-case letters, digits and `_` only (where some letters go on and
/// others die, so every root is walked), and names of an open object (the non-plain
/// tokens walked from each name's prefix).
#[test]
fn kept_root_walks_are_full_walks() {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let upper: serde_json::Map<String, serde_json::Value> = (0..24)
        .map(|i| {
            let value = if i % 3 == 0 {
                json!({"type": "string", "enum": ["0", "1"]})
            } else {
                json!({"type": "string"})
            };
            (
                format!("CLAUDE_CODE_{}_{i}", ["API", "DEBUG", "MAX"][i % 3]),
                value,
            )
        })
        .collect();
    let lower: serde_json::Map<String, serde_json::Value> = (0..16)
        .map(|i| {
            (
                format!("rule-{}-{i}", ["no", "max", "prefer"][i % 3]),
                json!({"type": "boolean"}),
            )
        })
        .collect();
    for schema in [
        json!({"type": "object", "properties": upper,
               "propertyNames": {"pattern": "^[A-Z_][A-Z0-9_]*$"},
               "additionalProperties": {"type": "string"}}),
        json!({"type": "object", "properties": lower}),
    ] {
        let c = Arc::new(compile_schema(Some(&schema), &options).unwrap());
        let n = c.machine.table.len() as u32;
        let states: Vec<u32> = (1..n).collect();
        for order in [states.clone(), states.into_iter().rev().collect()] {
            let index = TokenIndex::new(c.clone(), vocab.clone());
            for &s in &order {
                assert_full_walk(&index, s, &schema);
            }
        }
    }
}

/// Ids with the same bytes (some Hugging Face vocabularies hold a few): the trie keeps one
/// node per distinct prefix, and every id ending there is allowed with it, in the plain
/// tiers and in full walks alike.
#[test]
fn ids_with_the_same_bytes_are_allowed_together() {
    let tokens: Vec<Vec<u8>> = ["\"", "a", "a", "ab", "-", "ab", "ab", "\"}", "b", "!"]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
    let vocab = Arc::new(VocabIndex::new(Vocabulary::new(tokens, &[], &[]).unwrap()));
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    // After the opening quote; `"}` (7) closes the string and writes `}`, never allowed.
    for (schema, expected) in [
        // Plain text: the tier shortcut.
        (
            json!({"type": "string"}),
            vec![0u32, 1, 2, 3, 4, 5, 6, 8, 9],
        ),
        // A pattern where `-` and `!` die: a full walk.
        (
            json!({"type": "string", "pattern": "^[ab]*$"}),
            vec![0, 1, 2, 3, 5, 6, 8],
        ),
    ] {
        let compiled = compile_schema(Some(&schema), &options).unwrap();
        let index = TokenIndex::new(Arc::new(compiled), vocab.clone());
        let constrain::index::Step::Next(open) = index.advance(index.start(), 0).unwrap() else {
            panic!("`\"` ends nothing");
        };
        assert_eq!(
            index.allowed(open).iter().collect::<Vec<_>>(),
            expected,
            "{schema}"
        );
        assert_eq!(
            index.allowed_by_full_walk(open).iter().collect::<Vec<_>>(),
            expected,
            "{schema}"
        );
    }
}

/// Full walks (`allowed_by_full_walk`, which steps each first byte from the trie's list of
/// first-level nodes and each live subtree node by node) and the shortcut masks against
/// each token walked on its own (`TokenIndex::advance`), on the real vocabulary: states of
/// an object's names and values, a string body, a number and the start.
#[test]
fn full_walks_are_every_token_walked_alone() {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 20},
        "size": {"type": "integer", "minimum": 3},
        "tags": {"type": "array", "items": {"enum": ["a", "b{", "😀"]}}},
        "required": ["name"]});
    let c = Arc::new(compile_schema(Some(&schema), &options).unwrap());
    let index = TokenIndex::new(c.clone(), vocab.clone());
    let mut state = index.start();
    let mut states = vec![state];
    for b in br#"{"name":"ab","size":12,"tags":["b{"#.iter() {
        state = c.machine.table.next(state, *b);
        assert_ne!(state, 0, "the text is valid");
        states.push(state);
    }
    let ordinary = (0..vocab.vocab().len() as u32).filter(|&id| !vocab.vocab().is_special(id));
    let ordinary: Vec<u32> = ordinary.collect();
    for &s in states.iter().step_by(3) {
        let full = index.allowed_by_full_walk(s);
        let fast = index.allowed(s);
        for &id in &ordinary {
            let alone = index.advance(s, id).is_some();
            assert_eq!(full.contains(id), alone, "state {s} token {id}: full walk");
            assert_eq!(fast.contains(id), alone, "state {s} token {id}: shortcuts");
        }
    }
}

/// A token whose first byte is outside a tier and whose plain tail is longer than the
/// tier's longest plain token (cl100k_base: `.translatesAutoresizingMaskIntoConstraints`,
/// 41 letters past `.`, where the letters-and-digits tier's longest token has 36) is walked,
/// not dropped with the tails listed up to that length (the cold review's reproducer).
#[test]
fn plain_tails_longer_than_the_tier_are_walked() {
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("cl100k_base").unwrap()));
    let mut options = Options::default();
    options.json.mode = SchemaMode::general();
    let schema = json!({"type": "string", "pattern": "^[0-9]*[.][a-zA-Z0-9]*$"});
    let c = Arc::new(compile_schema(Some(&schema), &options).unwrap());
    let index = TokenIndex::new(c.clone(), vocab.clone());
    let open = c.machine.table.next(index.start(), b'"');
    let fast = index.allowed(open);
    let full = index.allowed_by_full_walk(open);
    for token in [
        ".translatesAutoresizingMaskIntoConstraints",
        ".DataGridViewColumnHeadersHeightSizeMode",
    ] {
        let id = (0..vocab.vocab().len() as u32)
            .find(|&id| vocab.vocab().token(id) == token.as_bytes())
            .unwrap();
        assert!(index.advance(open, id).is_some(), "{token}");
        assert!(full.contains(id), "{token}: full walk");
        assert!(fast.contains(id), "{token}: shortcuts");
    }
    assert!(*fast == full);
}

/// Free text closed by a delimiter of plain text then a control character (`é\n`,
/// `ab\n`): there, tokens of plain text stopped by a control character are live (`a\n`
/// may begin the close, `.\n` is text), so the mask must not skip them as it does in
/// names and string bodies, where every state plain text reaches kills control
/// characters (`TokenIndex::stops_die`). No vendored template reaches this: their
/// delimiters lead into JSON or are special tokens. Every state's mask equals the full
/// walk, with and without a tool (its arguments are JSON, where the skip applies).
#[test]
fn control_stopped_tokens_are_walked_where_text_takes_them() {
    use constrain::template::{compile, Request};
    let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base").unwrap()));
    let dot_newline = (0..vocab.vocab().len() as u32)
        .find(|&id| vocab.vocab().token(id) == b".\n")
        .unwrap();
    let tool = json!({"type": "function", "function": {"name": "f", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}});
    for template in [
        json!({"start_anchor": "<s>", "fields": {"content": {"close": "é\n", "content": "text"}}}),
        json!({"start_anchor": "<s>", "fields": {"content": {"close": "ab\n", "content": "text"}}}),
        json!({"start_anchor": "<s>", "fields": {
            "thinking": {"open": "<think>", "close": "思考終\n", "content": "text"},
            "content": {"close": "ab\n", "content": "text"},
            "tool_calls": {"open": "<tool_call>", "close": "</tool_call>", "repeats": true,
                "content": "json", "transform": {"type": "function", "function": "{content}"}}}}),
    ] {
        let model = template_build::model::load(&template).unwrap();
        let with_tool = template["fields"].get("tool_calls").is_some();
        let requests = if with_tool {
            vec![
                Request::default(),
                Request {
                    tools: vec![tool.clone()],
                    ..Request::default()
                },
            ]
        } else {
            vec![Request::default()]
        };
        for request in requests {
            let c = Arc::new(compile(&model, &request, &Options::default()).unwrap());
            let index = TokenIndex::new(c.clone(), vocab.clone());
            let n = c.machine.table.len() as u32;
            let mut stopped_live = 0;
            for s in 1..n {
                // `.\n` is plain text then a control character.
                if assert_full_walk(&index, s, &template).contains(dot_newline) {
                    stopped_live += 1;
                }
            }
            assert!(stopped_live > 0, "{template}: no state takes `.\\n`");
        }
    }
}
