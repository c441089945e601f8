//! Templates and parsing: `Template`, `parse_response`, `ResponseParser` and their errors
//! (transformers 5.24 `utils/chat_parsing/response_parser.py` names and dicts).

use pyo3::prelude::*;

/// Adds the parsing classes and functions to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
