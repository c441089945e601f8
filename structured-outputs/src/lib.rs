//! # structured-outputs
//!
//! Structured-output contracts checked on parsed assistant messages (the second source
//! document, `../shared/SEEDS.md` part 2): **JSON mode** (the content is one JSON object, nested
//! at most 5 levels), **JSON Schema mode** (the object follows the caller's schema) and
//! **strict tools** (no hallucinated tool names or parameters, every required parameter
//! present, every value of its declared type).
//!
//! Schemas are admitted only inside the supported JSON Schema subset ([`schema`]); anything
//! else is rejected when compiled, with an error naming the keyword and its JSON pointer.
//! Checking a message gives every [`Violation`], typed by [`ViolationKind`], with a JSON
//! pointer into the message, what was expected and what was found. Value checks run on the
//! `jsonschema` crate (draft 2020-12, formats on); this crate owns the subset gate, the
//! strict-tools rules and the mapping to violations.
//!
//! Two parts need no `std` and are there without the default feature `contracts`: [`tool`],
//! the one reading of OpenAI tool JSON (name, description, parameters, strict flag) that the
//! parser's argument typing, strict tools and constrained generation share, and [`types`],
//! the JSON types a schema declares (`type`, `enum`/`const`, `$ref`, `anyOf`).
//!
//! ```
//! # #[cfg(feature = "contracts")] {
//! use serde_json::json;
//! use structured_outputs::{Contract, StrictTools, ViolationKind};
//!
//! let tools = [json!({"type": "function", "function": {"name": "get_weather", "parameters": {
//!     "type": "object",
//!     "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
//!     "required": ["city"]}}})];
//! let contract = Contract { strict_tools: Some(StrictTools::new(&tools)?), ..Contract::default() };
//! let message = json!({"role": "assistant", "tool_calls": [
//!     {"type": "function", "function": {"name": "get_weather",
//!      "arguments": {"city": "Paris", "days": "three", "unit": "C"}}}]});
//! let violations = contract.check(message.as_object().unwrap());
//! let kinds: Vec<_> = violations.iter().map(|v| (v.kind, v.pointer.as_str())).collect();
//! assert_eq!(kinds, [
//!     (ViolationKind::TypeMismatch, "/tool_calls/0/function/arguments/days"),
//!     (ViolationKind::UnknownParameter, "/tool_calls/0/function/arguments/unit"),
//! ]);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(not(feature = "contracts"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

#[cfg(feature = "contracts")]
pub mod contract;
#[cfg(feature = "contracts")]
pub mod schema;
pub mod tool;
pub mod types;

pub use tool::{read_tools, Tool, ToolError, ToolErrorKind};
pub use types::{JsonType, Types};

#[cfg(feature = "contracts")]
pub use contract::{
    Contract, ResponseFormat, StrictTool, StrictTools, Violation, ViolationKind,
    JSON_MODE_MAX_DEPTH, JSON_READER_MAX_DEPTH, STRICT_TOOLS_MAX_PROPERTIES,
};
#[cfg(feature = "contracts")]
pub use schema::{
    check_contract_rules, check_pattern, compile, CompiledSchema, Objects, SchemaError,
    SchemaErrors, Strictness, CACHE_CAPACITY,
};
