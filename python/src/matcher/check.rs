//! A test helper: parse a response with a template and check it against the request's
//! contract (strict tools, response format), as `rtpl constrain` and the Rust guarantee test
//! do. Private (`_masks_check_response`): the public parsing API is `parse_response`.

use std::sync::Arc;

use parser_runtime::structured_outputs::{Contract, ResponseFormat, StrictTools};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use serde_json::Value;

/// Parses `text` (the whole response, no prefix) with the template `template_json` and checks
/// it against strict `tools_json` and `response_format_json`. Returns `(message_json,
/// violations_json)`: the parsed message and the list of violations (`kind`, `pointer`,
/// `expected`, `found`), both as JSON text.
///
/// Raises ValueError for a template, tools or response format that does not load, or a
/// response that does not parse (with the parser's reason).
#[pyfunction]
#[pyo3(signature = (template_json, text, tools_json=None, response_format_json=None))]
pub fn _masks_check_response(
    template_json: &str,
    text: &str,
    tools_json: Option<&str>,
    response_format_json: Option<&str>,
) -> PyResult<(String, String)> {
    let bad = |what: &str, e: String| PyValueError::new_err(format!("{what}: {e}"));
    let value = template_build::compile::template_value_from_text(template_json)
        .map_err(|e| bad("template", e.to_string()))?;
    let compiled = template_build::compile(&value).map_err(|e| bad("template", e.to_string()))?;
    let tools: Vec<Value> = match tools_json {
        None => Vec::new(),
        Some(t) => serde_json::from_str(t).map_err(|e| bad("tools", e.to_string()))?,
    };
    let response_format: Option<Value> = match response_format_json {
        None => None,
        Some(t) => serde_json::from_str(t).map_err(|e| bad("response_format", e.to_string()))?,
    };
    let contract = Arc::new(Contract {
        response_format: match &response_format {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                ResponseFormat::from_request(v)
                    .map_err(|e| bad("response_format", e.to_string()))?,
            ),
        },
        strict_tools: if tools.is_empty() {
            None
        } else {
            Some(StrictTools::new(&tools).map_err(|e| bad("tools", e.to_string()))?)
        },
    });
    let (message, violations) =
        parser_runtime::parse_response_checked(&compiled, text, "", &tools, contract)
            .map_err(|e| bad("parse", e.to_string()))?;
    let message = serde_json::to_string(&message).map_err(|e| bad("message", e.to_string()))?;
    let violations =
        serde_json::to_string(&violations).map_err(|e| bad("violations", e.to_string()))?;
    Ok((message, violations))
}
