//! The vendored response templates (`templates/*.json`; sources and licences in
//! `templates/SOURCES.md`), compiled to DFAs at build time by `template_build::Builder` in this
//! crate's build script: a broken template fails `cargo build`.
//!
//! Each template is an item named after its file ([`Smollm3`], [`Qwen3Coder`], ...) with the
//! API of `parser_runtime::response_template!`; [`by_name`] selects one at run time.
//!
//! ```
//! let template = templates::by_name("smollm3").unwrap()?;
//! let message = parser_runtime::parse_response(template, "Hi!", "", &[])?;
//! assert_eq!(message["content"], "Hi!");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

include!(concat!(env!("OUT_DIR"), "/templates.rs"));

use parser_runtime::statics::TableError;
use parser_runtime::CompiledTemplate;

/// The names of the vendored templates (file stems), sorted.
pub fn names() -> impl Iterator<Item = &'static str> {
    TEMPLATES.iter().map(|(name, _)| *name)
}

/// The vendored template named `name` (its file stem, e.g. `qwen3-coder`), built on first use;
/// `None` when there is no such template.
///
/// Errors (inside the `Some`): [`TableError`] when the embedded tables cannot be loaded.
pub fn by_name(name: &str) -> Option<Result<&'static CompiledTemplate, TableError>> {
    TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, lazy)| lazy().get())
}
