//! Each content parser on any body: `text`, `int`, `float`, `bool`, `json` (and its
//! `unquoted_keys`, `string_delims`, `allow_non_json` knobs), `xml-inline`, `kv-lines`,
//! `python-call-list`, with the settings the vendored templates and the conformance cases use
//! (`specs/content.json`, written by `seed.py`). Never a panic; a result of the parser's shape
//! or a typed `ContentError`; and where Rust's own readers know the answer, the same answer:
//! strict JSON that `serde_json` reads is read to the same value by plain `json`, plain
//! decimal integers and floats by `int` and `float`, ASCII words by `bool`.
//!
//! Input: `SPEC BODY...` (byte 0 picks the spec, modulo their count; the body is read as UTF-8
//! with invalid bytes replaced).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use parser_runtime::content::parse_content;
use parser_runtime::ContentSpec;
use serde_json::{json, Value};

/// Every spec of `specs/content.json` that compiles (as the content of a field of a minimal
/// template; some conformance cases hold settings the reference refuses at load).
fn specs() -> &'static [ContentSpec] {
    static SPECS: OnceLock<Vec<ContentSpec>> = OnceLock::new();
    SPECS.get_or_init(|| {
        let list: Vec<Value> =
            serde_json::from_str(include_str!("../specs/content.json")).expect("specs");
        list.into_iter()
            .filter_map(|spec| {
                let mut field = json!({"open": "<x>", "close": "</x>"});
                field
                    .as_object_mut()
                    .unwrap()
                    .extend(spec.as_object().unwrap().clone());
                let template = json!({"start_anchor": "S", "fields": {"x": field}});
                let compiled = template_build::compile(&template).ok()?;
                Some(compiled.fields[0].content.clone())
            })
            .collect()
    })
}

/// Python's `str.strip()` on ASCII text (its ASCII whitespace includes `\x1c`..`\x1f`).
fn py_strip_ascii(s: &str) -> &str {
    s.trim_matches(|c: char| matches!(c, ' ' | '\t'..='\r' | '\x1c'..='\x1f'))
}

/// Whether `s` is `[+-]?[0-9]+` with at most 18 digits (an `i64` for Python's `int()` too).
fn plain_int(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.len() <= 18 && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `s` is `-?[0-9]{1,15}(\.[0-9]{1,15})?`.
fn plain_float(s: &str) -> bool {
    let s = s.strip_prefix('-').unwrap_or(s);
    let (a, b) = s.split_once('.').unwrap_or((s, "0"));
    [a, b]
        .iter()
        .all(|p| !p.is_empty() && p.len() <= 15 && p.bytes().all(|b| b.is_ascii_digit()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, body)) = data.split_first() else {
        return;
    };
    let all = specs();
    let spec = &all[usize::from(pick) % all.len()];
    let body = String::from_utf8_lossy(body);
    let result = parse_content(&body, spec);
    if let Err(e) = &result {
        assert!(!e.to_string().is_empty());
    }
    let ascii = body.is_ascii();
    match spec {
        ContentSpec::Text { strip } => {
            let want = if *strip && ascii {
                py_strip_ascii(&body)
            } else if *strip {
                return;
            } else {
                &body
            };
            assert_eq!(result.unwrap(), Value::String(want.to_owned()));
        }
        ContentSpec::Int { .. } if plain_int(&body) => {
            let n: i64 = body.parse().unwrap();
            assert_eq!(result.unwrap(), json!(n), "int({body:?})");
        }
        ContentSpec::Float { .. } if plain_float(&body) => {
            let f: f64 = body.parse().unwrap();
            assert_eq!(result.unwrap(), json!(f), "float({body:?})");
        }
        ContentSpec::Bool { strip } if ascii => {
            let t = if *strip { py_strip_ascii(&body) } else { &body };
            let want = t.eq_ignore_ascii_case("true") || t == "1";
            assert_eq!(result.unwrap(), Value::Bool(want), "bool({body:?})");
        }
        ContentSpec::Json {
            unquoted_keys: false,
            string_delims,
            ..
        } if string_delims.is_empty() => {
            // Python's json.loads reads whatever serde_json reads, to the same value (numbers
            // compared by value: serde_json reads `-0` as the float -0.0, Python as the int
            // 0); the one exception is an integer too large for a JSON value here (serde_json
            // rounds it to a float, the parser refuses it, or with `allow_non_json` keeps the
            // text: see `parser_runtime::content`).
            if let Ok(want) = serde_json::from_str::<Value>(&body) {
                match &result {
                    Ok(got) => assert!(
                        same(got, &want) || (has_float(&want) && got.is_string()),
                        "json.loads({body:?}): {got} != {want}"
                    ),
                    Err(e) => assert!(
                        has_float(&want),
                        "json.loads({body:?}) refused by the parser ({e}), read by serde_json"
                    ),
                }
            }
        }
        ContentSpec::PythonCallList => {
            if let Ok(v) = &result {
                for call in v.as_array().expect("a list of calls") {
                    let call = call.as_object().expect("a call object");
                    assert!(call["name"].is_string(), "{v}");
                    assert!(call["arguments"].is_object(), "{v}");
                }
            }
        }
        ContentSpec::XmlInline { .. } | ContentSpec::KvLines { .. } => {
            if let Ok(v) = &result {
                assert!(v.is_object(), "{v}");
            }
        }
        _ => {}
    }
});

/// Whether a number in `v` is a float (`serde_json` reads an integer past `u64` as one).
fn has_float(v: &Value) -> bool {
    match v {
        Value::Number(n) => n.is_f64(),
        Value::Array(a) => a.iter().any(has_float),
        Value::Object(o) => o.values().any(has_float),
        _ => false,
    }
}

/// `a == b`, numbers compared by value (as `f64` when either is a float).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            x.as_f64() == y.as_f64()
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same(x, y))
        }
        _ => a == b,
    }
}
