//! # response_templates._native
//!
//! The extension module behind the Python package `response_templates` (python/): the
//! compiled-template engine of `parser-runtime` with transformers' names and dicts
//! (`parse.rs`: `Template`, `parse_response`, `ResponseParser`, the errors), and token masks
//! over a vocabulary from `constrain` (`matcher.rs`: `Matcher`). The Python layer
//! (`python/response_templates/`) gives the public API its transformers signatures; this
//! module does the work and converts JSON values to and from Python objects.

use pyo3::prelude::*;

mod matcher;
mod parse;

/// The module `response_templates._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    parse::register(m)?;
    matcher::register(m)?;
    Ok(())
}
