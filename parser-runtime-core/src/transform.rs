//! Field processing: the content parser followed by the optional `transform` template.
//!
//! Reference: `process_field` and `_apply_transform` of
//! `transformers/utils/chat_parsing/content_parsers.py` (transformers 5.24.0).
//!
//! A transform is a JSON shape. Objects and arrays are walked; a string that is *entirely* a
//! placeholder `{root}` or `{root.key.key}` (Python `\{(\w+(?:\.\w+)*)\}`, fullmatch, Unicode
//! `\w` of the `regex` module) is replaced by the value it names; every other value is kept
//! as written. The scope holds the named groups of the delimiters (strings) and `content` (the
//! parsed body), or, with `transform_each`, the named groups overlaid by the keys of each list
//! element. Python returns the scope's objects themselves (aliased); here they are cloned,
//! which gives equal values.

use alloc::string::{String, ToString};
use alloc::vec::Vec;

use serde_json::{Map, Value};

use crate::content::parse_content;
use crate::error::ContentError;
use crate::pychar::is_word_char;
use crate::tables::FieldTable;

/// The cap on what one application of a field's `transform` may produce: the values it
/// substitutes for placeholders, measured as their compact JSON text without escapes (see
/// [`json_size`]), may not exceed `per_input_byte` times the bytes the transform draws on (the region's body
/// and the text of its named groups) plus `base`.
///
/// A transform copies what it names (`"{content}"` twice in an object makes two copies); a
/// template that names the content hundreds of times would otherwise turn a 100 KB tool call
/// into tens of megabytes of message. Past the cap the region fails with
/// [`ContentError::TransformTooLarge`]. The default (16 times the input plus 64 KiB) never
/// binds a transform that names each value a few times;
/// `ResponseParser::set_transform_limit` and `rtpl --transform-limit` change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransformLimit {
    /// Bytes a transform may produce per byte of its input.
    pub per_input_byte: usize,
    /// Bytes a transform may produce whatever its input.
    pub base: usize,
}

impl TransformLimit {
    /// The default: 16 bytes per input byte, plus 64 KiB.
    pub const DEFAULT: Self = Self {
        per_input_byte: 16,
        base: 64 << 10,
    };

    /// No cap.
    pub const UNLIMITED: Self = Self {
        per_input_byte: usize::MAX,
        base: usize::MAX,
    };

    /// The cap in bytes for a transform drawing on `input` bytes.
    pub fn bytes_for(&self, input: usize) -> usize {
        self.per_input_byte
            .saturating_mul(input)
            .saturating_add(self.base)
    }
}

impl Default for TransformLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Runs `body` through the field's content parser, then applies its `transform` (reference
/// `process_field`), with the default [`TransformLimit`].
///
/// `captures` are the named groups of the region's delimiters that participated in the match,
/// as `(name, text)` pairs; a repeated name keeps its last text (Python dict semantics).
///
/// Errors: the content parser's, [`ContentError::TransformEachNotList`] and
/// [`ContentError::TransformEachItemNotObject`] for `transform_each`, and
/// [`ContentError::UndefinedPlaceholder`], [`ContentError::NotAnObject`],
/// [`ContentError::MissingKey`] for placeholders. Type names in errors are Python's (`dict`,
/// `list`, `str`, `int`, `float`, `bool`, `NoneType`).
pub fn process_field(
    body: &str,
    field: &FieldTable,
    captures: &[(String, String)],
) -> Result<Value, ContentError> {
    process_field_limited(body, field, captures, TransformLimit::DEFAULT)
}

/// [`process_field`] with the cap `limit` on what the transform produces.
///
/// Errors: as [`process_field`], and [`ContentError::TransformTooLarge`] past the cap.
pub fn process_field_limited(
    body: &str,
    field: &FieldTable,
    captures: &[(String, String)],
    limit: TransformLimit,
) -> Result<Value, ContentError> {
    let value = parse_content(body, &field.content)?;
    let Some(transform) = &field.transform else {
        return Ok(value);
    };
    let input = body.len()
        + captures
            .iter()
            .map(|(k, v)| k.len() + v.len())
            .sum::<usize>();
    let mut budget = Budget {
        left: limit.bytes_for(input),
        limit: limit.bytes_for(input),
    };
    if !field.transform_each {
        return apply(
            transform,
            &Scope {
                captures,
                content: Some(&value),
                item: None,
            },
            &mut budget,
        );
    }
    let Value::Array(items) = &value else {
        return Err(ContentError::TransformEachNotList {
            found: py_type_name(&value).to_string(),
        });
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Object(item) = item else {
            return Err(ContentError::TransformEachItemNotObject {
                found: py_type_name(item).to_string(),
            });
        };
        out.push(apply(
            transform,
            &Scope {
                captures,
                content: None,
                item: Some(item),
            },
            &mut budget,
        )?);
    }
    Ok(Value::Array(out))
}

/// The Python type name of a JSON value as the reference parses it (`type(v).__name__`):
/// `dict`, `list`, `str`, `int`, `float`, `bool` or `NoneType`.
pub fn py_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// The names a placeholder root can take: `{**captures, "content": content}` or
/// `{**captures, **item}`.
struct Scope<'a> {
    captures: &'a [(String, String)],
    content: Option<&'a Value>,
    item: Option<&'a Map<String, Value>>,
}

/// A value found in the scope: a captured string or a JSON value.
#[derive(Clone, Copy)]
enum Found<'a> {
    Str(&'a str),
    Json(&'a Value),
}

impl<'a> Scope<'a> {
    fn get(&self, name: &str) -> Option<Found<'a>> {
        if let Some(item) = self.item {
            if let Some(v) = item.get(name) {
                return Some(Found::Json(v));
            }
        }
        if let Some(content) = self.content {
            if name == "content" {
                return Some(Found::Json(content));
            }
        }
        self.captures
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| Found::Str(v))
    }

    /// `sorted(scope)`.
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.captures.iter().map(|(k, _)| k.clone()).collect();
        if self.content.is_some() {
            names.push("content".to_string());
        }
        if let Some(item) = self.item {
            names.extend(item.keys().cloned());
        }
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// The length in bytes of the placeholder (reference `_PLACEHOLDER`, `\{(\w+(?:\.\w+)*)\}`
/// with the `regex` module's Unicode `\w`) at the start of `s`, if one is there. The grammar is
/// unambiguous (`\w` matches neither `.` nor `}`), so a greedy scan is exact. The one
/// placeholder grammar: the compiler checks transforms with it (`template_build::model`).
pub fn placeholder_at(s: &str) -> Option<usize> {
    let mut chars = s.char_indices();
    if chars.next()?.1 != '{' {
        return None;
    }
    let mut after_word = false;
    for (i, c) in chars {
        if is_word_char(c) {
            after_word = true;
        } else if c == '.' && after_word {
            after_word = false;
        } else if c == '}' && after_word {
            return Some(i + 1);
        } else {
            return None;
        }
    }
    None
}

/// Python's `_PLACEHOLDER.search(s)`: a placeholder anywhere in `s`.
pub fn has_placeholder(s: &str) -> bool {
    s.match_indices('{')
        .any(|(i, _)| placeholder_at(&s[i..]).is_some())
}

/// The path of a whole-string placeholder (`_PLACEHOLDER.fullmatch`): `a` for `{a}`, `a.b.c`
/// for `{a.b.c}`.
pub fn placeholder(s: &str) -> Option<&str> {
    (placeholder_at(s) == Some(s.len())).then(|| &s[1..s.len() - 1])
}

/// What a transform may still produce (see [`TransformLimit`]).
struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    /// Takes `size` bytes, or fails with the cap.
    fn take(&mut self, size: usize) -> Result<(), ContentError> {
        match self.left.checked_sub(size) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(ContentError::TransformTooLarge { limit: self.limit }),
        }
    }
}

/// The size of `v` as compact JSON text, escapes aside (strings count their bytes and two
/// quotes, numbers 8). Stops counting once past `cap`: a result above `cap` only
/// says that it is too large.
pub fn json_size(v: &Value, cap: usize) -> usize {
    fn walk(v: &Value, total: &mut usize, cap: usize) {
        if *total > cap {
            return;
        }
        *total += match v {
            Value::Null => 4,
            Value::Bool(b) => 4 + usize::from(!*b),
            Value::Number(_) => 8,
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                *total += 1 + items.len();
                for item in items {
                    walk(item, total, cap);
                }
                0
            }
            Value::Object(map) => {
                *total += 1 + map.len() * 2;
                for (k, item) in map {
                    *total += k.len() + 2;
                    walk(item, total, cap);
                }
                0
            }
        };
    }
    let mut total = 0;
    walk(v, &mut total, cap);
    total
}

/// Reference `_apply_transform`.
fn apply(transform: &Value, scope: &Scope<'_>, budget: &mut Budget) -> Result<Value, ContentError> {
    match transform {
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                out.insert(k.clone(), apply(v, scope, budget)?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(items) => items
            .iter()
            .map(|v| apply(v, scope, budget))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::String(s) => match placeholder(s) {
            Some(path) => resolve(path, scope, budget),
            None => Ok(transform.clone()),
        },
        other => Ok(other.clone()),
    }
}

/// Looks a placeholder path up: its root in the scope, then each key in turn; the value's
/// size is taken from `budget` before it is copied.
fn resolve(path: &str, scope: &Scope<'_>, budget: &mut Budget) -> Result<Value, ContentError> {
    let mut parts = path.split('.');
    let root = parts.next().unwrap_or_default();
    let Some(mut found) = scope.get(root) else {
        return Err(ContentError::UndefinedPlaceholder {
            path: path.to_string(),
            available: scope.names(),
        });
    };
    for key in parts {
        let obj = match found {
            Found::Json(Value::Object(obj)) => obj,
            Found::Json(other) => {
                return Err(ContentError::NotAnObject {
                    path: path.to_string(),
                    key: key.to_string(),
                    found: py_type_name(other).to_string(),
                })
            }
            Found::Str(_) => {
                return Err(ContentError::NotAnObject {
                    path: path.to_string(),
                    key: key.to_string(),
                    found: "str".to_string(),
                })
            }
        };
        let Some(next) = obj.get(key) else {
            let mut available: Vec<String> = obj.keys().cloned().collect();
            available.sort_unstable();
            return Err(ContentError::MissingKey {
                path: path.to_string(),
                key: key.to_string(),
                available,
            });
        };
        found = Found::Json(next);
    }
    let size = match found {
        Found::Str(s) => s.len() + 2,
        Found::Json(v) => json_size(v, budget.left),
    };
    budget.take(size)?;
    Ok(match found {
        Found::Str(s) => Value::String(s.to_string()),
        Found::Json(v) => v.clone(),
    })
}

#[cfg(test)]
mod tests {
    //! Expected values come from running the reference (transformers 5.23.0,
    //! `content_parsers.process_field` with the same body, parser, transform and captures).

    use super::*;
    use crate::tables::ContentSpec;
    use alloc::borrow::ToOwned;
    use alloc::vec;

    fn field(content: ContentSpec, transform: Option<&str>, transform_each: bool) -> FieldTable {
        FieldTable {
            role: crate::tables::Role::Other,
            name: "f".to_owned(),
            open: None,
            close: None,
            content,
            repeats: false,
            join: None,
            optional: true,
            transform: transform.map(|t| serde_json::from_str(t).unwrap()),
            transform_each,
        }
    }

    fn json_field(transform: &str, each: bool) -> FieldTable {
        let content = ContentSpec::Json {
            unquoted_keys: false,
            string_delims: Vec::new(),
            allow_non_json: false,
            strip: true,
        };
        field(content, Some(transform), each)
    }

    fn text_field(transform: &str) -> FieldTable {
        field(ContentSpec::Text { strip: true }, Some(transform), false)
    }

    fn caps(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// Compares serialized, so key order and number types count.
    #[track_caller]
    fn assert_json(got: &Value, expected: &str) {
        let want: Value = serde_json::from_str(expected).unwrap();
        assert_eq!(
            serde_json::to_string(got).unwrap(),
            serde_json::to_string(&want).unwrap()
        );
    }

    #[test]
    fn placeholder_grammar() {
        assert_eq!(placeholder("{a}"), Some("a"));
        assert_eq!(placeholder("{a.b.c}"), Some("a.b.c"));
        assert_eq!(placeholder("{名前}"), Some("名前"));
        for not_one in ["{a.}", "{.a}", "{a..b}", "{a}}", "{}", "a", "{a} "] {
            assert_eq!(placeholder(not_one), None, "{not_one}");
        }
        assert!(has_placeholder("x{{a}}"));
        assert!(has_placeholder("{ {a}"));
        assert!(!has_placeholder("{a b}"));
        assert!(!has_placeholder("{a-b}"));
    }

    #[test]
    fn placeholders_are_replaced_whole_strings_only() {
        let t = r#"{"type": "function", "function": {"name": "{name}", "arguments": "{content}"}, "n": 5,
                   "l": ["{content.a}", "lit", "{x}", "{ nope }", "{a}b", "{content.a.b}x"], "z": null}"#;
        let got = process_field(
            r#"{"a": {"b": 1}}"#,
            &json_field(t, false),
            &caps(&[("name", "get"), ("x", "X")]),
        )
        .unwrap();
        assert_json(
            &got,
            r#"{"type": "function", "function": {"name": "get", "arguments": {"a": {"b": 1}}}, "n": 5,
                "l": [{"b": 1}, "lit", "X", "{ nope }", "{a}b", "{content.a.b}x"], "z": null}"#,
        );
        // `content` overrides a captured group of the same name.
        let got = process_field(
            "x",
            &text_field(r#"{"v": "{content}", "w": "{content}"}"#),
            &caps(&[("content", "captured")]),
        );
        assert_json(&got.unwrap(), r#"{"v": "x", "w": "x"}"#);
        // A bare string transform, a list transform, Unicode `\w` (U+00B2 is not `\w` for `regex`).
        assert_json(
            &process_field("x", &text_field(r#""{content}""#), &[]).unwrap(),
            r#""x""#,
        );
        let got = process_field(
            "x",
            &text_field(r#"["{content}", 1, {"é": "{é}"}]"#),
            &caps(&[("é", "E")]),
        )
        .unwrap();
        assert_json(&got, r#"["x", 1, {"é": "E"}]"#);
        let got =
            process_field("x", &text_field(r#"{"v": "{²}"}"#), &caps(&[("²", "sq")])).unwrap();
        assert_json(&got, r#"{"v": "{²}"}"#);
        let got = process_field(
            "x",
            &text_field(r#"{"v": "{a..b}", "w": "{.a}", "u": "{}"}"#),
            &[],
        )
        .unwrap();
        assert_json(&got, r#"{"v": "{a..b}", "w": "{.a}", "u": "{}"}"#);
        // No transform: the parsed value.
        assert_json(
            &process_field(
                "5",
                &field(ContentSpec::Int { strip: true }, None, false),
                &[],
            )
            .unwrap(),
            "5",
        );
    }

    #[test]
    fn placeholder_errors() {
        let t = r#"{"v": "{content.a.b}"}"#;
        for (body, found) in [
            (r#"{"a": 1}"#, "int"),
            (r#"{"a": "s"}"#, "str"),
            (r#"{"a": null}"#, "NoneType"),
            (r#"{"a": 1.5}"#, "float"),
            (r#"{"a": true}"#, "bool"),
            (r#"{"a": [1]}"#, "list"),
        ] {
            assert_eq!(
                process_field(body, &json_field(t, false), &[]),
                Err(ContentError::NotAnObject {
                    path: "content.a.b".to_owned(),
                    key: "b".to_owned(),
                    found: found.to_owned()
                }),
                "{body}"
            );
        }
        assert_eq!(
            process_field(r#"{"a": {"c": 1, "B": 2}}"#, &json_field(t, false), &[]),
            Err(ContentError::MissingKey {
                path: "content.a.b".to_owned(),
                key: "b".to_owned(),
                available: vec!["B".to_owned(), "c".to_owned()],
            })
        );
        assert_eq!(
            process_field(
                "x",
                &text_field(r#"{"v": "{name.x}"}"#),
                &caps(&[("name", "n")])
            ),
            Err(ContentError::NotAnObject {
                path: "name.x".to_owned(),
                key: "x".to_owned(),
                found: "str".to_owned()
            })
        );
        assert_eq!(
            process_field(
                "x",
                &text_field(r#"{"v": "{missing}"}"#),
                &caps(&[("zeta", "1"), ("alpha", "2")])
            ),
            Err(ContentError::UndefinedPlaceholder {
                path: "missing".to_owned(),
                available: vec!["alpha".to_owned(), "content".to_owned(), "zeta".to_owned()],
            })
        );
        // Content parser errors pass through.
        assert!(matches!(
            process_field(
                "x",
                &field(
                    ContentSpec::Int { strip: true },
                    Some(r#""{content}""#),
                    false
                ),
                &[]
            ),
            Err(ContentError::InvalidInt { .. })
        ));
    }

    #[test]
    fn transform_each() {
        let t = r#"{"function": {"name": "{name}", "arguments": "{arguments}"}, "g": "{grp}"}"#;
        let body =
            r#"[{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}, "id": "c"}]"#;
        let got = process_field(
            body,
            &json_field(t, true),
            &caps(&[("grp", "G"), ("name", "shadowed")]),
        )
        .unwrap();
        assert_json(
            &got,
            r#"[{"function": {"name": "a", "arguments": {"x": 1}}, "g": "G"},
                {"function": {"name": "b", "arguments": {}}, "g": "G"}]"#,
        );
        assert_json(
            &process_field("[]", &json_field(r#"{"v": "{a}"}"#, true), &[]).unwrap(),
            "[]",
        );
        assert_eq!(
            process_field(r#"{"a": 1}"#, &json_field(r#"{"v": "{a}"}"#, true), &[]),
            Err(ContentError::TransformEachNotList {
                found: "dict".to_owned()
            })
        );
        assert_eq!(
            process_field(
                r#"[{"a": 1}, 2]"#,
                &json_field(r#"{"v": "{a}"}"#, true),
                &[]
            ),
            Err(ContentError::TransformEachItemNotObject {
                found: "int".to_owned()
            })
        );
        // `content` is not in the scope of transform_each.
        assert_eq!(
            process_field(
                r#"[{"a": 1}]"#,
                &json_field(r#"{"v": "{content}"}"#, true),
                &caps(&[("k", "v")])
            ),
            Err(ContentError::UndefinedPlaceholder {
                path: "content".to_owned(),
                available: vec!["a".to_owned(), "k".to_owned()],
            })
        );
    }

    #[test]
    fn type_names() {
        let v: Value = serde_json::from_str(r#"[null, true, 1, -1, 1.0, "s", [], {}]"#).unwrap();
        let names: Vec<&str> = v.as_array().unwrap().iter().map(py_type_name).collect();
        assert_eq!(
            names,
            ["NoneType", "bool", "int", "int", "float", "str", "list", "dict"]
        );
    }
}
