//! # parser-runtime-core
//!
//! The engine behind `parser-runtime` (which re-exports everything here and adds the
//! `response_template!` macro); depend on `parser-runtime`.
//!
//! The runtime of response-templates: it walks the tables a compiled response template
//! ([`CompiledTemplate`], produced by `template-build`) to turn the raw text a language model
//! generates into an assistant message (`{"role", "content", "reasoning_content",
//! "tool_calls", ...}`) and a stream of events (`region_open`, `region_chunk`,
//! `region_close`).
//!
//! The behaviour follows the reference implementation, transformers 5.23.0
//! (`transformers/utils/chat_parsing/`), except for the deliberate differences listed in the
//! project README.
//!
//! ```text
//! template JSON -> template-build (validate, compile) -> CompiledTemplate -> ResponseParser
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

pub mod content;
pub mod engine;
pub mod error;
pub mod event;
pub mod statics;
pub mod tables;
pub mod tools;
pub mod transform;

pub use engine::{parse_response, parse_responses, Message, Prefixes, ResponseParser};
pub use error::{ContentError, ParseError};
pub use event::Event;
pub use tables::{CompiledTemplate, ContentSpec, Delimiter, FieldTable};
pub use tools::ToolSchemas;
