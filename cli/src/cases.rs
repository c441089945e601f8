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

/// A case that does not follow the case schema: the key (a JSON path inside the case, such as
/// `chunks[2]` or `script[0].op`) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseError {
    /// The offending key's path inside the case (`""`: the case itself).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for CaseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.reason)
        } else {
            write!(f, "{}: {}", self.field, self.reason)
        }
    }
}

/// The JSON type of `v`, with the value when it is short (`number 5`, `string "x"`), for
/// [`CaseError`] reasons.
fn shown(v: &Value) -> String {
    let kind = match v {
        Value::Null => return "null".into(),
        Value::Bool(b) => return format!("boolean {b}"),
        Value::Number(n) => return format!("number {n}"),
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "object",
    };
    let text = v.to_string();
    if text.chars().count() <= 40 {
        format!("{kind} {text}")
    } else {
        kind.to_owned()
    }
}

/// Checks that `case` follows the case schema (`shared/README.md`) in the keys a run reads:
/// an object with `prefix` (a string, or null for "not given"; the falsy values the oracle
/// passes on to the reference, `false`, `0`, `[]`, `{}`, mean no prefix), `text` (a string or
/// null), `chunks` (null or a list of strings), `tools` (null or a list), `script` (null or a
/// list of `{"op": "feed" | "finalize", "text"?: string}`). Other keys (`id`, `origin`,
/// `expect*`) are not read. `template` is checked by compiling it.
///
/// The oracle lets Python coerce what it is given (it iterates a string of `chunks` as
/// characters, and a missing `prefix` is `""`); a case file written for the schema never
/// relies on that, so here each such value is an error naming the key.
pub fn check_case(case: &Value) -> Result<(), CaseError> {
    let err = |field: &str, reason: String| {
        Err(CaseError {
            field: field.into(),
            reason,
        })
    };
    let Some(obj) = case.as_object() else {
        return err(
            "",
            format!("a case must be a JSON object, got {}", shown(case)),
        );
    };
    match obj.get("prefix") {
        None => {
            return err(
                "prefix",
                "missing (the prompt as a string, or null for none given)".into(),
            )
        }
        Some(Value::String(_) | Value::Null | Value::Bool(false)) => {}
        Some(Value::Number(n)) if n.as_f64() == Some(0.0) => {}
        Some(Value::Array(a)) if a.is_empty() => {}
        Some(Value::Object(o)) if o.is_empty() => {}
        Some(other) => return err("prefix", format!("must be a string, got {}", shown(other))),
    }
    if let Some(text) = obj.get("text").filter(|t| !t.is_string() && !t.is_null()) {
        return err("text", format!("must be a string, got {}", shown(text)));
    }
    match obj.get("chunks") {
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            if let Some((i, c)) = list.iter().enumerate().find(|(_, c)| !c.is_string()) {
                return err(
                    &format!("chunks[{i}]"),
                    format!("must be a string, got {}", shown(c)),
                );
            }
        }
        Some(other) => {
            return err(
                "chunks",
                format!("must be a list of strings, got {}", shown(other)),
            )
        }
    }
    match obj.get("tools") {
        None | Some(Value::Null | Value::Array(_)) => {}
        Some(other) => {
            return err(
                "tools",
                format!("must be a list of tools, got {}", shown(other)),
            )
        }
    }
    match obj.get("script") {
        None | Some(Value::Null) => {}
        Some(Value::Array(ops)) => {
            for (i, op) in ops.iter().enumerate() {
                let at = format!("script[{i}]");
                let Some(op) = op.as_object() else {
                    return err(&at, format!("must be an object, got {}", shown(op)));
                };
                match op.get("op") {
                    Some(Value::String(name)) if name == "feed" || name == "finalize" => {}
                    Some(Value::String(name)) => {
                        return err(
                            &format!("{at}.op"),
                            format!("unknown op {:?} (feed or finalize)", name),
                        )
                    }
                    Some(other) => {
                        return err(
                            &format!("{at}.op"),
                            format!("must be \"feed\" or \"finalize\", got {}", shown(other)),
                        )
                    }
                    None => return err(&format!("{at}.op"), "missing".into()),
                }
                if let Some(text) = op.get("text").filter(|t| !t.is_string()) {
                    return err(
                        &format!("{at}.text"),
                        format!("must be a string, got {}", shown(text)),
                    );
                }
            }
        }
        Some(other) => {
            return err(
                "script",
                format!("must be a list of steps, got {}", shown(other)),
            )
        }
    }
    Ok(())
}

/// Runs one case, compiling its template at run time; `merge` merges adjacent chunks of one
/// field in the events. A case outside the schema ([`check_case`]) gives
/// `{"id", "ok": false, "error": "CaseError: KEY: REASON"}`.
pub fn run_case(case: &Value, merge: bool) -> Value {
    run_case_options(case, merge, ParserOptions::default())
}

/// Like [`run_case`], with parser options (`rtpl run-cases --lenient`: lenient mode).
pub fn run_case_options(case: &Value, merge: bool, options: ParserOptions) -> Value {
    if let Err(e) = check_case(case) {
        return case_error(case, &e.to_string());
    }
    match template_build::compile(case.get("template").unwrap_or(&Value::Null)) {
        Ok(template) => run_case_with_options(case, &template, merge, options),
        Err(e) => {
            let id = case.get("id").cloned().unwrap_or(Value::Null);
            json!({"id": id, "ok": false,
                   "error": format!("TemplateError: {}", e.to_string().replace('\n', "; "))})
        }
    }
}

/// `{"id", "ok": false, "error": "CaseError: {what}"}` for `case`.
pub fn case_error(case: &Value, what: &str) -> Value {
    let id = case.get("id").cloned().unwrap_or(Value::Null);
    json!({"id": id, "ok": false, "error": format!("CaseError: {what}")})
}

/// Runs one case with an already compiled `template` (the case's `template` key is ignored):
/// how tables compiled ahead of time are checked against run-time ones. A case outside the
/// schema is a `CaseError` result, as in [`run_case`].
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
    if let Err(e) = check_case(case) {
        return case_error(case, &e.to_string());
    }
    let id = case.get("id").cloned().unwrap_or(Value::Null);
    let fail = |e: String| json!({"id": id, "ok": false, "error": e});
    // An explicit null is "not given" (an error); the falsy values `check_case` lets through
    // are no prefix, as the reference reads them.
    let prefix = match case.get("prefix") {
        Some(Value::String(p)) => p.as_str(),
        Some(Value::Null) => return fail(format!("ParseError: {}", ParseError::MissingPrefix)),
        _ => "",
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
        Some(Value::Array(list)) => list
            .iter()
            .map(|c| c.as_str().unwrap_or_default().to_string())
            .collect(),
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
