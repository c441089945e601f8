//! Errors raised to Python. The exception classes are defined once, in Python
//! (`response_templates/_errors.py`); this module builds their instances from the Rust errors:
//!
//! - `template_build::TemplateErrors` -> `ResponseTemplateError` (`.problems`: one dict per
//!   problem with `file`, `path`, `field`, `line`, `column`, `kind`, `reason`), and so is an
//!   unknown vendored template name (kind `UnknownVendoredName`);
//! - `parser_runtime::ParseError` -> `ResponseParseError` (`.kind`, `.field`, `.offset` in
//!   bytes, `.in_prefix`, `.fields`), except `Finalized` -> `RuntimeError` and
//!   `MissingPrefix` -> `ValueError`, as transformers raises them;
//! - `structured_outputs::SchemaErrors` -> `SchemaError` (`.problems`: `pointer`, `keyword`,
//!   `reason`);
//! - a message that breaks its contract -> `ContractViolation` (`.message`, `.violations`);
//! - `constrain::template::ConstrainError` -> `ConstraintError` (`.at`, `.reason`, `.budget`);
//! - a vocabulary that cannot be read -> `VocabularyError`.
//!
//! Being defined in Python, every class pickles (an error raised in a worker process reaches
//! the parent).

use constrain::template::ConstrainError;
use parser_runtime::structured_outputs::{SchemaErrors, Violation};
use parser_runtime::{Message, ParseError};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use template_build::TemplateErrors;

use crate::convert;

/// The exception class `name` of `response_templates._errors`.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("response_templates._errors")?.getattr(name)
}

/// An instance of the class `name` built with `message` and the keyword arguments.
fn raise(py: Python<'_>, name: &str, message: String, kwargs: &Bound<'_, PyDict>) -> PyErr {
    match class(py, name).and_then(|cls| cls.call((message,), Some(kwargs))) {
        Ok(instance) => PyErr::from_value(instance),
        Err(e) => e,
    }
}

/// The field a template problem's JSON path names (`fields.tool_calls.open_pattern` ->
/// `tool_calls`, `fields["a.b"].open` -> `a.b`), if it is under `fields`.
pub fn field_of_path(path: &str) -> Option<String> {
    let rest = path.strip_prefix("response_template.").unwrap_or(path);
    if let Some(rest) = rest.strip_prefix("fields.") {
        let end = rest.find(['.', '[']).unwrap_or(rest.len());
        return (end > 0).then(|| rest[..end].to_owned());
    }
    let rest = rest.strip_prefix("fields[")?;
    // A quoted key: a JSON string up to the `]` that follows its closing quote.
    let mut stream = serde_json::Deserializer::from_str(rest).into_iter::<String>();
    match stream.next() {
        Some(Ok(name)) => Some(name),
        _ => None,
    }
}

/// One problem of a template, as `ResponseTemplateError.problems` lists it.
struct Problem<'a> {
    file: Option<&'a str>,
    path: &'a str,
    line_col: Option<(usize, usize)>,
    kind: String,
    reason: &'a str,
}

/// `ResponseTemplateError` with `message` and one dict per problem.
fn template_problems(py: Python<'_>, message: String, problems: &[Problem<'_>]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let list = PyList::empty(py);
        for p in problems {
            let problem = PyDict::new(py);
            problem.set_item("file", p.file)?;
            problem.set_item("path", p.path)?;
            problem.set_item("field", field_of_path(p.path))?;
            problem.set_item("line", p.line_col.map(|(l, _)| l))?;
            problem.set_item("column", p.line_col.map(|(_, c)| c))?;
            problem.set_item("kind", &p.kind)?;
            problem.set_item("reason", p.reason)?;
            list.append(problem)?;
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("problems", list)?;
        Ok(raise(py, "ResponseTemplateError", message, &kwargs))
    };
    build().unwrap_or_else(|e| e)
}

/// `ResponseTemplateError` for every problem of a template; the message has one problem a
/// line, each `FILE:LINE:COLUMN: PATH: REASON` (parts that are unknown left out).
pub fn template_error(py: Python<'_>, errors: &TemplateErrors) -> PyErr {
    let mut problems = Vec::new();
    let mut lines = Vec::new();
    for e in errors.iter() {
        problems.push(Problem {
            file: e.file.as_deref(),
            path: &e.path,
            line_col: e.line_col,
            kind: format!("{:?}", e.kind),
            reason: &e.reason,
        });
        let mut line = String::new();
        if let Some(file) = &e.file {
            line.push_str(file);
            line.push(':');
        }
        if let Some((l, c)) = e.line_col {
            line.push_str(&format!("{l}:{c}:"));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        if !e.path.is_empty() {
            line.push_str(&e.path);
            line.push_str(": ");
        }
        line.push_str(&e.reason);
        lines.push(line);
    }
    let head = match lines.len() {
        1 => "invalid response template: ".to_owned(),
        n => format!("invalid response template ({n} problems):\n  "),
    };
    template_problems(py, format!("{head}{}", lines.join("\n  ")), &problems)
}

/// `ResponseTemplateError` for a vendored template `name` that does not exist: one problem of
/// kind `UnknownVendoredName` (path `""`), naming the vendored templates.
pub fn unknown_vendored(py: Python<'_>, name: &str) -> PyErr {
    let reason = format!(
        "no vendored template named {name:?}; the vendored templates \
         (response_templates.vendored_names()) are: {}",
        templates::names().collect::<Vec<_>>().join(", ")
    );
    let problem = Problem {
        file: None,
        path: "",
        line_col: None,
        kind: "UnknownVendoredName".to_owned(),
        reason: &reason,
    };
    template_problems(py, reason.clone(), &[problem])
}

/// The Python exception of a parse error (see the module documentation).
pub fn parse_error(py: Python<'_>, error: &ParseError) -> PyErr {
    let (kind, field, offset, in_prefix, fields): (_, Option<&str>, Option<usize>, bool, _) =
        match error {
            ParseError::Finalized => return PyRuntimeError::new_err(error.to_string()),
            ParseError::MissingPrefix => return PyValueError::new_err(error.to_string()),
            ParseError::Content {
                field,
                offset,
                in_prefix,
                ..
            } => ("content", Some(field), Some(*offset), *in_prefix, None),
            ParseError::MissingRequired(names) => {
                ("missing_required", None, None, false, Some(names.clone()))
            }
            ParseError::BatchLengthMismatch { .. } => {
                ("batch_length_mismatch", None, None, false, None)
            }
            ParseError::NoProgress {
                field,
                offset,
                in_prefix,
            } => ("no_progress", Some(field), Some(*offset), *in_prefix, None),
            ParseError::InvalidUtf8 { offset } => {
                ("invalid_utf8", None, Some(*offset), false, None)
            }
            ParseError::HoldOverflow { offset, .. } => {
                ("hold_overflow", None, Some(*offset), false, None)
            }
            ParseError::StartAnchor(_) => ("start_anchor", None, None, true, None),
            ParseError::Route(_) => ("route", None, None, false, None),
            ParseError::Tables(_) => ("tables", None, None, false, None),
        };
    let build = || -> PyResult<PyErr> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("kind", kind)?;
        kwargs.set_item("field", field)?;
        kwargs.set_item("offset", offset)?;
        kwargs.set_item("in_prefix", in_prefix)?;
        kwargs.set_item("fields", fields)?;
        Ok(raise(py, "ResponseParseError", error.to_string(), &kwargs))
    };
    build().unwrap_or_else(|e| e)
}

/// `SchemaError` with `message` and one dict per problem (`pointer`, `keyword`, `reason`).
fn schema_problems(
    py: Python<'_>,
    message: String,
    problems: &[(&str, Option<&str>, &str)],
) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let list = PyList::empty(py);
        for (pointer, keyword, reason) in problems {
            let problem = PyDict::new(py);
            problem.set_item("pointer", pointer)?;
            problem.set_item("keyword", keyword)?;
            problem.set_item("reason", reason)?;
            list.append(problem)?;
        }
        let kwargs = PyDict::new(py);
        kwargs.set_item("problems", list)?;
        Ok(raise(py, "SchemaError", message, &kwargs))
    };
    build().unwrap_or_else(|e| e)
}

/// `SchemaError` for a response format or tool list outside the supported schema subset;
/// `what` says which argument (`response_format`, `tools`).
pub fn schema_error(py: Python<'_>, what: &str, errors: &SchemaErrors) -> PyErr {
    let problems: Vec<_> = errors
        .0
        .iter()
        .map(|e| {
            (
                e.pointer.as_str(),
                Some(e.keyword.as_str()),
                e.reason.as_str(),
            )
        })
        .collect();
    schema_problems(
        py,
        format!("{what}: unsupported schema: {errors}"),
        &problems,
    )
}

/// The error of a Python value nested deeper than [`convert::MAX_DEPTH`] at `at`, by the
/// argument it was given as: a template's `ResponseTemplateError` (one problem of kind
/// `TooDeep` at the template path), the `SchemaError` of `tools` or `response_format` (one
/// problem at the JSON pointer, keyword None), a `ConstraintError` at `tool_choice`.
pub fn too_deep(py: Python<'_>, arg: convert::Arg, at: &[convert::Step]) -> PyErr {
    let reason = format!(
        "nested more than {} levels deep (the limit for a Python value read as JSON)",
        convert::MAX_DEPTH
    );
    let pointer = convert::pointer(at);
    match arg {
        convert::Arg::Template => {
            let path = at.iter().fold(String::new(), |parent, step| match step {
                convert::Step::Key(k) => template_build::path::key(&parent, k),
                convert::Step::Index(i) => template_build::path::index(&parent, *i),
            });
            let problem = Problem {
                file: None,
                path: &path,
                line_col: None,
                kind: "TooDeep".to_owned(),
                reason: &reason,
            };
            let message = format!("invalid response template: {path}: {reason}");
            template_problems(py, message, &[problem])
        }
        convert::Arg::Tools | convert::Arg::ResponseFormat => {
            let what = if arg == convert::Arg::Tools {
                "tools"
            } else {
                "response_format"
            };
            let message = format!("{what}: {reason} at JSON pointer {pointer:?}");
            schema_problems(py, message, &[(&pointer, None, &reason)])
        }
        convert::Arg::ToolChoice => constraint_error(
            py,
            &ConstrainError {
                at: "tool_choice".to_owned(),
                reason: format!("{reason} at JSON pointer {pointer:?}"),
                budget: None,
            },
        ),
    }
}

/// `ContractViolation` for a parsed `message` that breaks its contract.
pub fn contract_violation(py: Python<'_>, message: &Message, violations: &[Violation]) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("message", convert::map_to_py(py, message)?)?;
        kwargs.set_item("violations", convert::violations_to_py(py, violations)?)?;
        let summary: Vec<String> = violations
            .iter()
            .take(5)
            .map(|v| {
                format!(
                    "{} at {:?}: expected {}, found {}",
                    serde_json::to_value(v.kind)
                        .ok()
                        .and_then(|k| k.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    v.pointer,
                    v.expected,
                    v.found
                )
            })
            .collect();
        let more = if violations.len() > 5 {
            format!("; and {} more", violations.len() - 5)
        } else {
            String::new()
        };
        Ok(raise(
            py,
            "ContractViolation",
            format!(
                "the message breaks its contract ({} violation{}): {}{more}",
                violations.len(),
                if violations.len() == 1 { "" } else { "s" },
                summary.join("; ")
            ),
            &kwargs,
        ))
    };
    build().unwrap_or_else(|e| e)
}

/// `ConstraintError` for a template or request `constrain` cannot compile.
pub fn constraint_error(py: Python<'_>, e: &ConstrainError) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let kwargs = PyDict::new(py);
        kwargs.set_item("at", &e.at)?;
        kwargs.set_item("reason", &e.reason)?;
        kwargs.set_item("budget", e.budget.map(|b| format!("{b:?}")))?;
        Ok(raise(py, "ConstraintError", e.to_string(), &kwargs))
    };
    build().unwrap_or_else(|e| e)
}

/// `VocabularyError` with `message` (the source and the reason).
pub fn vocabulary_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "VocabularyError", message, &PyDict::new(py))
}
