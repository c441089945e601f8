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
//! The behaviour follows the reference implementation, transformers 5.24.0
//! (`transformers/utils/chat_parsing/`), except for the deliberate differences listed in the
//! project README.
//!
//! ```text
//! template JSON -> template-build (validate, compile) -> CompiledTemplate -> ResponseParser
//! ```
//!
//! Features: `std` (default) implies `alloc`. Without `alloc` the crate is `#![no_std]` and
//! needs no heap: [`router::Router`] routes output into regions over embedded tables
//! ([`statics::StaticRoutes`]) with a fixed-capacity hold buffer and borrowed events. `alloc`
//! adds the message ([`ResponseParser`], [`parse_response`]), content parsers, transforms,
//! captures and tool typing, and run-time compiled templates ([`CompiledTemplate`]).
//! [`OwnedResponseParser`] is the same parser holding an `Arc<CompiledTemplate>`: no
//! lifetime, `Send` and `Sync`, for a server or a binding that keeps one parser per stream.
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[cfg(feature = "alloc")]
pub mod content;
#[cfg(feature = "alloc")]
pub mod engine;
#[cfg(feature = "alloc")]
pub mod error;
#[cfg(feature = "alloc")]
pub mod event;
pub mod groups;
pub mod pychar;
pub mod pynum;
pub mod router;
pub mod statics;
pub mod tables;
#[cfg(feature = "alloc")]
pub mod tools;
#[cfg(feature = "alloc")]
pub mod transform;
mod values;

#[cfg(feature = "contracts")]
pub use engine::parse_response_checked;
#[cfg(feature = "alloc")]
pub use engine::{
    parse_response, parse_responses, Message, OwnedResponseParser, Parser, ParserOptions, Prefixes,
    ReasoningCalls, ResponseParser,
};
#[cfg(feature = "alloc")]
pub use error::{ContentError, ParseError};
#[cfg(feature = "alloc")]
pub use event::Event;
pub use router::{FieldId, RegionEvent, RegionValue, RouteError, Router, Span};
pub use statics::{EmbeddedTemplate, StaticRoutes, TableError};
/// Structured-output contracts (feature `contracts`): the `structured-outputs` crate.
#[cfg(feature = "contracts")]
pub use structured_outputs;
#[cfg(feature = "alloc")]
pub use tables::{CompiledTemplate, ContentSpec, FieldTable};
pub use tables::{Content, Delimiter, Field, Storage, Template};
#[cfg(feature = "alloc")]
pub use tools::ToolSchemas;
#[cfg(feature = "alloc")]
pub use transform::TransformLimit;
