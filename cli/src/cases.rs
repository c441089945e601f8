//! Runs one case of the conformance schema (`shared/README.md`): `id`, `template`, `prefix`
//! (null = not given, an error), `text`, `chunks` (null = one feed), `tools`, or `script`, and
//! returns a result in exactly the schema the reference oracle (`shared/oracle/oracle.py`)
//! prints: `{"id", "ok": true, "message", "initial_events", "events"}` or
//! `{"id", "ok": false, "error"}`; script cases add `script_log`.

use parser_runtime::event::merge_chunks;
use parser_runtime::{CompiledTemplate, Event, ParseError, ParserOptions, ResponseParser};
use serde_json::{json, Value};

/// Events as JSON, merged when `merge`.
pub fn events_json(events: &[Event], merge: bool) -> Value {
    let merged;
    let list = if merge {
        merged = merge_chunks(events);
        &merged
    } else {
        events
    };
    serde_json::to_value(list).unwrap_or(Value::Null)
}

/// Runs one case, compiling its template at run time; `merge` merges adjacent chunks of one
/// field in the events.
pub fn run_case(case: &Value, merge: bool) -> Value {
    run_case_options(case, merge, ParserOptions::default())
}

/// Like [`run_case`], with parser options (`rtpl run-cases --lenient`: lenient mode).
pub fn run_case_options(case: &Value, merge: bool, options: ParserOptions) -> Value {
    match template_build::compile(case.get("template").unwrap_or(&Value::Null)) {
        Ok(template) => run_case_with_options(case, &template, merge, options),
        Err(e) => {
            let id = case.get("id").cloned().unwrap_or(Value::Null);
            json!({"id": id, "ok": false,
                   "error": format!("TemplateError: {}", e.to_string().replace('\n', "; "))})
        }
    }
}

/// Runs one case with an already compiled `template` (the case's `template` key is ignored):
/// how tables compiled ahead of time are checked against run-time ones.
pub fn run_case_with(case: &Value, template: &CompiledTemplate, merge: bool) -> Value {
    run_case_with_options(case, template, merge, ParserOptions::default())
}

/// Like [`run_case_with`], with parser options.
pub fn run_case_with_options(
    case: &Value,
    template: &CompiledTemplate,
    merge: bool,
    options: ParserOptions,
) -> Value {
    let id = case.get("id").cloned().unwrap_or(Value::Null);
    let fail = |e: String| json!({"id": id, "ok": false, "error": e});
    // Like the oracle: a missing `prefix` key is "", an explicit null is "not given" (an error).
    let prefix = match case.get("prefix") {
        None => "",
        Some(Value::String(p)) => p.as_str(),
        Some(Value::Null) => return fail(format!("ParseError: {}", ParseError::MissingPrefix)),
        // The oracle passes any value on; the reference treats falsy ones as no prefix.
        Some(Value::Bool(false)) => "",
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => "",
        Some(Value::Array(a)) if a.is_empty() => "",
        Some(Value::Object(o)) if o.is_empty() => "",
        Some(other) => return fail(format!("CaseError: prefix must be a string, got {other}")),
    };
    let tools: Vec<Value> = match case.get("tools") {
        Some(Value::Array(list)) => list.clone(),
        _ => Vec::new(),
    };
    let mut parser = match ResponseParser::with_options(template, prefix, &tools, options) {
        Ok(p) => p,
        Err(e) => return fail(format!("ParseError: {e}")),
    };
    let initial = parser.initial_events().to_vec();
    if let Some(Value::Array(script)) = case
        .get("script")
        .filter(|s| s.as_array().is_some_and(|a| !a.is_empty()))
    {
        let mut log = Vec::new();
        let mut events = Vec::new();
        let mut message = Value::Null;
        for op in script {
            let name = op.get("op").and_then(Value::as_str).unwrap_or("");
            let result = if name == "feed" {
                parser
                    .feed(op.get("text").and_then(Value::as_str).unwrap_or(""))
                    .map(|ev| events.extend(ev))
            } else {
                parser.finalize().map(|(m, ev)| {
                    message = Value::Object(m);
                    events.extend(ev);
                })
            };
            let error = match result {
                Ok(()) => Value::Null,
                Err(e) => Value::String(error_kind(&e).to_string()),
            };
            log.push(json!({"op": name, "error": error}));
        }
        return json!({"id": id, "ok": true, "message": message, "initial_events": events_json(&initial, merge),
                      "events": events_json(&events, merge), "script_log": log});
    }
    let chunks: Vec<String> = match case.get("chunks") {
        // Like the oracle's `for chunk in chunks`: a string is fed one character at a time.
        Some(Value::String(text)) => text.chars().map(String::from).collect(),
        Some(Value::Array(list)) => {
            let mut out = Vec::with_capacity(list.len());
            for c in list {
                match c.as_str() {
                    Some(c) => out.push(c.to_string()),
                    None => return fail(format!("CaseError: chunks must be strings, got {c}")),
                }
            }
            out
        }
        _ => vec![case
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()],
    };
    let mut events = Vec::new();
    for chunk in &chunks {
        match parser.feed(chunk) {
            Ok(ev) => events.extend(ev),
            Err(e) => return fail(format!("ParseError: {e}")),
        }
    }
    match parser.finalize() {
        Ok((message, ev)) => {
            events.extend(ev);
            json!({"id": id, "ok": true, "message": Value::Object(message),
                   "initial_events": events_json(&initial, merge), "events": events_json(&events, merge)})
        }
        Err(e) => fail(format!("ParseError: {e}")),
    }
}

/// A short name for the kind of error, like the reference's exception type names in script logs.
fn error_kind(e: &ParseError) -> &'static str {
    match e {
        ParseError::Finalized => "Finalized",
        ParseError::Content { .. } => "Content",
        ParseError::MissingRequired(_) => "MissingRequired",
        ParseError::MissingPrefix => "MissingPrefix",
        ParseError::BatchLengthMismatch { .. } => "BatchLengthMismatch",
        ParseError::InvalidUtf8 { .. } => "InvalidUtf8",
        ParseError::HoldOverflow { .. } => "HoldOverflow",
        ParseError::NoProgress { .. } => "NoProgress",
        ParseError::StartAnchor(_) => "StartAnchor",
        ParseError::Tables(_) => "Tables",
        ParseError::Route(_) => "Route",
    }
}
