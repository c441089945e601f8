//! Token masks: `Matcher` over a vocabulary (constrain's `TokenIndex`), with the conventions
//! of llguidance and xgrammar.

use pyo3::prelude::*;

/// Adds the mask classes and functions to the module.
pub fn register(_m: &Bound<'_, PyModule>) -> PyResult<()> {
    Ok(())
}
