//! `json-call-list`: tool calls written as JSON objects, several in one region, read into
//! `[{"name": ..., "arguments": {...}}, ...]` (the shape `python-call-list` gives, so the same
//! `transform_each` transform serves both).
//!
//! This parser is this project's, not the reference's: transformers 5.24.0 has no parser of
//! this name and refuses a template that uses it as a field's `content` when it loads
//! (`unknown content parser`), so a template written for it never means something else
//! there. The shapes it reads are those models write (shared/formats.md §7, §9, §10):
//!
//! - a bracketed JSON list (`brackets: "required"`): Mistral before v11,
//!   `[TOOL_CALLS] [{"name": "f", "arguments": {...}}, {...}]`; Granite 3,
//!   `<|tool_call|>[{...}]`;
//! - calls one after another with a separator (`brackets: "none"`, `separator: ";"`), and a
//!   single bare call: Llama 3.1 / 3.2, `{"name": "f", "parameters": {...}}; {...}`;
//! - either (`brackets: "optional"`): a list when the body starts with `[`, else bare calls.
//!
//! ```text
//! body  = ws "[" ws [ call ( ws SEP ws call )* ] ws "]" ws      (bracketed)
//!       | ws call ( ws SEP ws call )* ws                        (bare: at least one call)
//! call  = a JSON object (json.loads rules) with a string under NAME_KEY and an object under
//!         the first of ARGUMENTS_KEYS it has; other keys are ignored
//! ws    = [ \t\n\r]*
//! ```
//!
//! `SEP` is the `separator` content argument (default `,`, so a bracketed list is a JSON
//! array); it is looked for only between two complete calls, so a `;` or `]` inside a string
//! or a nested object of the arguments is never one. Each call becomes `{"name": <name>,
//! "arguments": <object>}`: the keys the call used are renamed, any other key (`"type"`,
//! `"id"`) is left out. An empty bracketed list is no calls.
//!
//! Errors are [`ContentError::InvalidJsonCalls`] with a byte offset in the body: where the
//! unexpected token starts (after the whitespace before it), where JSON parsing failed inside a
//! call, or the call's `{` when a complete call object lacks a string name or an object of
//! arguments.

use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

use serde_json::{Map, Value};

use super::json_value_at;
use crate::error::ContentError;
use crate::tables::CallBrackets;
use crate::transform::py_type_name;

/// The content arguments of a `json-call-list` region (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CallListShape<'a> {
    /// Whether the calls sit in `[` `]`.
    pub(crate) brackets: CallBrackets,
    /// What stands between two calls (non-empty, no whitespace at either end: checked at load).
    pub(crate) separator: &'a str,
    /// The key holding the tool name.
    pub(crate) name_key: &'a str,
    /// The keys that may hold the arguments, in preference order (at least one).
    pub(crate) arguments_keys: &'a [String],
}

/// Reads `body` as JSON calls of the given shape.
pub(crate) fn json_call_list(body: &str, shape: &CallListShape<'_>) -> Result<Value, ContentError> {
    let b = body.as_bytes();
    let mut i = skip_ws(b, 0);
    let bracketed = match shape.brackets {
        CallBrackets::Required if b.get(i) != Some(&b'[') => {
            return Err(fail(i, "expected '[' to open the list of calls"));
        }
        CallBrackets::Required => true,
        CallBrackets::Optional => b.get(i) == Some(&b'['),
        CallBrackets::Absent => false,
    };
    let mut calls = Vec::new();
    if bracketed {
        i = skip_ws(b, i + 1);
    }
    if bracketed && b.get(i) == Some(&b']') {
        i += 1;
    } else {
        loop {
            let (call, end) = call(body, i, shape)?;
            calls.push(call);
            i = skip_ws(b, end);
            if bracketed && b.get(i) == Some(&b']') {
                i += 1;
                break;
            }
            if body[i..].starts_with(shape.separator) {
                i = skip_ws(b, i + shape.separator.len());
                continue;
            }
            if !bracketed && i == b.len() {
                break;
            }
            let expected = if bracketed { "']'" } else { "the end" };
            return Err(fail(
                i,
                format!("expected {:?} or {expected} after a call", shape.separator),
            ));
        }
    }
    let end = skip_ws(b, i);
    if end != b.len() {
        return Err(fail(end, "unexpected text after the closing ']'"));
    }
    Ok(Value::Array(calls))
}

/// Lenient mode: the complete calls at the start of a body that does not parse whole (a
/// list cut off by the end of the output, or a bad call after good ones). Returns a body of
/// those calls alone that [`json_call_list`] reads (the text up to the end of the last
/// complete call, closed with `]` when the list is bracketed) and the byte offset in `body`
/// where that call ends, or just past the list's own `]` when it follows (an empty list
/// included); `None` when not even the first call is complete.
pub(crate) fn complete_calls(body: &str, shape: &CallListShape<'_>) -> Option<(String, usize)> {
    let b = body.as_bytes();
    let start = skip_ws(b, 0);
    let bracketed = match shape.brackets {
        CallBrackets::Required if b.get(start) != Some(&b'[') => return None,
        CallBrackets::Required => true,
        CallBrackets::Optional => b.get(start) == Some(&b'['),
        CallBrackets::Absent => false,
    };
    let mut i = if bracketed {
        skip_ws(b, start + 1)
    } else {
        start
    };
    // An empty list is complete when its `]` follows.
    let mut last = (bracketed && b.get(i) == Some(&b']')).then_some(i);
    while let Ok((_, end)) = call(body, i, shape) {
        last = Some(end);
        let next = skip_ws(b, end);
        if !body[next..].starts_with(shape.separator) {
            break;
        }
        i = skip_ws(b, next + shape.separator.len());
    }
    let end = last?;
    let close = skip_ws(b, end);
    if bracketed && b.get(close) == Some(&b']') {
        return Some((String::from(&body[..=close]), close + 1));
    }
    let mut calls = String::from(&body[..end]);
    if bracketed {
        calls.push(']');
    }
    Some((calls, end))
}

fn fail(offset: usize, reason: impl Into<String>) -> ContentError {
    ContentError::InvalidJsonCalls {
        reason: reason.into(),
        offset,
    }
}

/// The first byte at or after `i` that is not JSON whitespace.
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// One call object at `at`: `{"name", "arguments"}` and the offset just after it.
fn call(body: &str, at: usize, shape: &CallListShape<'_>) -> Result<(Value, usize), ContentError> {
    if body.as_bytes().get(at) != Some(&b'{') {
        return Err(fail(at, "expected '{' to open a call"));
    }
    let (value, end) = json_value_at(body, at).map_err(|e| {
        // json.loads' reasons that point at a place end in "at" ("Unterminated string
        // starting at"): the message's own "at byte N" completes them.
        let reason = e.reason.strip_suffix(" at").unwrap_or(e.reason);
        fail(e.offset, format!("invalid JSON in a call: {reason}"))
    })?;
    let Value::Object(mut object) = value else {
        // A value that starts with `{` is an object.
        return Err(fail(at, "expected a call object"));
    };
    let name = match object.remove(shape.name_key) {
        Some(Value::String(name)) => name,
        Some(other) => {
            return Err(fail(
                at,
                format!(
                    "the call's {:?} must be a string, got {}",
                    shape.name_key,
                    py_type_name(&other)
                ),
            ))
        }
        None => {
            return Err(fail(
                at,
                format!("the call has no {:?} key", shape.name_key),
            ))
        }
    };
    let Some((key, arguments)) = shape
        .arguments_keys
        .iter()
        .find_map(|k| object.remove(k.as_str()).map(|v| (k, v)))
    else {
        return Err(fail(
            at,
            format!("the call has none of the keys {:?}", shape.arguments_keys),
        ));
    };
    if !arguments.is_object() {
        return Err(fail(
            at,
            format!(
                "the call's {key:?} must be a JSON object, got {}",
                py_type_name(&arguments)
            ),
        ));
    }
    let mut out = Map::new();
    out.insert("name".into(), Value::String(name));
    out.insert("arguments".into(), arguments);
    Ok((Value::Object(out), end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;
    use serde_json::json;

    fn shape<'a>(
        brackets: CallBrackets,
        separator: &'a str,
        arguments_keys: &'a [String],
    ) -> CallListShape<'a> {
        CallListShape {
            brackets,
            separator,
            name_key: "name",
            arguments_keys,
        }
    }

    fn args() -> Vec<String> {
        vec!["arguments".to_string()]
    }

    fn llama_args() -> Vec<String> {
        vec!["parameters".to_string(), "arguments".to_string()]
    }

    fn ok(body: &str, shape: &CallListShape<'_>, expected: Value) {
        assert_eq!(json_call_list(body, shape).unwrap(), expected, "{body:?}");
    }

    /// The error offset and reason.
    fn err(body: &str, shape: &CallListShape<'_>) -> (usize, String) {
        match json_call_list(body, shape) {
            Err(ContentError::InvalidJsonCalls { reason, offset }) => (offset, reason),
            other => panic!("{body:?}: expected an error, got {other:?}"),
        }
    }

    #[test]
    fn bracketed_lists() {
        let keys = args();
        let s = shape(CallBrackets::Required, ",", &keys);
        // Mistral before v11 (shared/formats.md §9), after `[TOOL_CALLS] `.
        let body = r#" [{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "get_weather", "arguments": {"city": "Tokyo"}}]"#;
        ok(
            body,
            &s,
            json!([
                {"name": "get_weather", "arguments": {"city": "Paris"}},
                {"name": "get_weather", "arguments": {"city": "Tokyo"}}
            ]),
        );
        ok(" [ ] \n", &s, json!([]));
        // Nested braces and brackets, separators and `]` inside strings.
        let body = r#"[{"name":"f","arguments":{"a":{"b":[1,{"c":"]}, {"}]},"s":"x;y]"}}]"#;
        ok(
            body,
            &s,
            json!([{"name": "f", "arguments": {"a": {"b": [1, {"c": "]}, {"}]}, "s": "x;y]"}}]),
        );
        // Other keys of a call are left out; a missing list is an error.
        ok(
            r#"[{"id":"abc123XYZ","name":"f","arguments":{}}]"#,
            &s,
            json!([{"name": "f", "arguments": {}}]),
        );
        assert_eq!(err(r#" {"name":"f","arguments":{}}"#, &s).0, 1);
    }

    #[test]
    fn bare_calls_with_a_separator() {
        let keys = llama_args();
        let s = shape(CallBrackets::Absent, ";", &keys);
        // Llama 3.1 (shared/formats.md §7).
        let body = r#"{"name": "get_weather", "parameters": {"location": "NYC"}}; {"name": "get_time", "parameters": {"timezone": "EST"}}"#;
        ok(
            body,
            &s,
            json!([
                {"name": "get_weather", "arguments": {"location": "NYC"}},
                {"name": "get_time", "arguments": {"timezone": "EST"}}
            ]),
        );
        // One bare call; `arguments` when there is no `parameters`; extra keys dropped.
        ok(
            r#" {"type": "function", "name": "f", "arguments": {"x": 1}} "#,
            &s,
            json!([{"name": "f", "arguments": {"x": 1}}]),
        );
        // The first key listed wins when both are there.
        ok(
            r#"{"name":"f","arguments":{"a":1},"parameters":{"p":2}}"#,
            &s,
            json!([{"name": "f", "arguments": {"p": 2}}]),
        );
        // No calls, a trailing separator, brackets: errors.
        assert_eq!(err("  ", &s), (2, "expected '{' to open a call".into()));
        assert_eq!(err(r#"{"name":"f","parameters":{}};"#, &s).0, 29);
        assert_eq!(err(r#"[{"name":"f","parameters":{}}]"#, &s).0, 0);
        // A missing separator names what was expected.
        assert_eq!(
            err(
                r#"{"name":"f","parameters":{}} {"name":"g","parameters":{}}"#,
                &s
            ),
            (29, "expected \";\" or the end after a call".into())
        );
    }

    #[test]
    fn optional_brackets() {
        let keys = llama_args();
        let s = shape(CallBrackets::Optional, ";", &keys);
        ok(
            r#"[{"name":"f","parameters":{}}]"#,
            &s,
            json!([{"name": "f", "arguments": {}}]),
        );
        ok(
            r#"{"name":"f","parameters":{}}"#,
            &s,
            json!([{"name": "f", "arguments": {}}]),
        );
        assert_eq!(
            err(r#"[{"name":"f","parameters":{}}"#, &s),
            (29, "expected \";\" or ']' after a call".into())
        );
    }

    #[test]
    fn complete_calls_before_a_cut_or_a_bad_call() {
        let keys = args();
        let list = shape(CallBrackets::Required, ",", &keys);
        let a = r#"{"name": "a", "arguments": {"x": 1}}"#;
        // Cut off inside the second call: the first is kept, the list closed after it.
        let body = format!(r#" [{a}, {{"name": "b", "argu"#);
        let (calls, end) = complete_calls(&body, &list).unwrap();
        assert_eq!(calls, format!(" [{a}]"));
        assert_eq!(&body[end..], r#", {"name": "b", "argu"#);
        assert_eq!(
            json_call_list(&calls, &list).unwrap(),
            json!([{"name": "a", "arguments": {"x": 1}}])
        );
        // A bad second call; a complete call followed by junk.
        let body = format!(r#"[{a}, {{"name": b}}]"#);
        assert_eq!(
            &body[complete_calls(&body, &list).unwrap().1..],
            r#", {"name": b}]"#
        );
        let body = format!("[{a} junk");
        assert_eq!(&body[complete_calls(&body, &list).unwrap().1..], " junk");
        // The list's own `]` stays with the calls; an empty list is complete.
        let body = format!("[{a} ] then text");
        let (calls, end) = complete_calls(&body, &list).unwrap();
        assert_eq!(
            (calls.as_str(), &body[end..]),
            (&body[..body.len() - 10], " then text")
        );
        assert_eq!(complete_calls(" [ ]x", &list), Some((" [ ]".into(), 4)));
        // Nothing complete: the first call cut off, no `[`, a call without arguments.
        assert_eq!(complete_calls(r#"[{"name": "a", "argu"#, &list), None);
        assert_eq!(complete_calls(a, &list), None);
        assert_eq!(complete_calls(r#"[{"name": "a"}, "#, &list), None);
        // Bare calls with a separator: no `]` added.
        let bare = shape(CallBrackets::Absent, ";", &keys);
        let body = format!(r#"{a}; {{"name": "#);
        let (calls, end) = complete_calls(&body, &bare).unwrap();
        assert_eq!((calls.as_str(), end), (a, a.len()));
    }

    #[test]
    fn call_errors_name_the_offset() {
        let keys = args();
        let s = shape(CallBrackets::Required, ",", &keys);
        // JSON errors at the offending byte of the body.
        let (offset, reason) = err(r#"[{"name": "f", "arguments": {"a": tru}}]"#, &s);
        assert_eq!(offset, 34, "{reason}");
        assert!(reason.starts_with("invalid JSON in a call"), "{reason}");
        // Truncated output: the call never closes. The message reads as one sentence
        // (json.loads' "starting at" and the error's "at byte N" not doubled).
        let (offset, reason) = err(r#"[{"name": "f", "arguments": {"a": "b"#, &s);
        assert_eq!(offset, 34);
        assert_eq!(
            reason,
            "invalid JSON in a call: Unterminated string starting"
        );
        let e = json_call_list(r#"[{"name": "f", "arguments": {"a": "b"#, &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "json-call-list: invalid JSON in a call: Unterminated string starting at byte 34"
        );
        // Shape errors at the call's `{`.
        assert_eq!(
            err(r#"[{"name": "f", "arguments": {}}, {"arguments": {}}]"#, &s),
            (33, "the call has no \"name\" key".into())
        );
        assert_eq!(
            err(r#"[{"name": 5, "arguments": {}}]"#, &s),
            (1, "the call's \"name\" must be a string, got int".into())
        );
        assert_eq!(
            err(r#"[{"name": "f", "parameters": {}}]"#, &s),
            (1, "the call has none of the keys [\"arguments\"]".into())
        );
        assert_eq!(
            err(r#"[{"name": "f", "arguments": "{\"a\": 1}"}]"#, &s),
            (
                1,
                "the call's \"arguments\" must be a JSON object, got str".into()
            )
        );
        // Not a call; text after the list.
        assert_eq!(err(r#"["f"]"#, &s).0, 1);
        assert_eq!(
            err(r#"[{"name": "f", "arguments": {}}] and more"#, &s),
            (33, "unexpected text after the closing ']'".into())
        );
        // A trailing comma.
        assert_eq!(err(r#"[{"name": "f", "arguments": {}},]"#, &s).0, 32);
        // Multi-byte text before an error: offsets are bytes.
        assert_eq!(err(r#"[{"name": "é", "arguments": {}} x]"#, &s).0, 33);
    }

    #[test]
    fn other_keys_and_separators() {
        let keys = vec!["args".to_string()];
        let s = CallListShape {
            brackets: CallBrackets::Absent,
            separator: "<sep>",
            name_key: "tool",
            arguments_keys: &keys,
        };
        ok(
            r#"{"tool":"a","args":{}} <sep> {"tool":"b","args":{"k":[]}}"#,
            &s,
            json!([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": []}}]),
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let keys = args();
        let s = shape(CallBrackets::Required, ",", &keys);
        let deep = format!(
            r#"[{{"name":"f","arguments":{{"a":{}{}}}}}]"#,
            "[".repeat(5000),
            "]".repeat(5000)
        );
        assert!(matches!(
            json_call_list(&deep, &s),
            Err(ContentError::InvalidJsonCalls { .. })
        ));
    }
}
