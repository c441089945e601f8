//! # parser-runtime
//!
//! Turns the raw text a language model generates into a structured assistant message
//! (`{"role", "content", "reasoning_content", "tool_calls", ...}`) and a stream of events
//! (`region_open`, `region_chunk`, `region_close`), following the model's response template
//! (the `response_template` of `tokenizer_config.json`, defined by Hugging Face transformers;
//! reference behaviour: transformers 5.24.0, `transformers/utils/chat_parsing/`).
//!
//! Two ways to get a compiled template:
//!
//! * **At build time** with [`response_template!`] (feature `macros`, on by default) or a
//!   build script using `template_build::Builder`: the template is validated and its
//!   delimiters compiled to DFAs while your crate compiles; a broken template is a compile
//!   error naming the file, the JSON path and the line. At run time the DFAs are
//!   deserialized in place from static bytes, once.
//! * **At run time** with `template_build::load_file` / `compile_str`, for templates chosen
//!   by the user.
//!
//! Both give the same [`CompiledTemplate`] tables and the same results.
//!
//! ```
//! let prefix = "<|im_start|>assistant\n";
//! let output = "<think>\nThe user greets me.\n</think>\nHello!";
//! let message = parser_runtime::response_template!("../../templates/smollm3.json")
//!     .parse_response(output, prefix)?;
//! assert_eq!(message["content"], "Hello!");
//! assert_eq!(message["thinking"], "The user greets me.");
//! # Ok::<(), parser_runtime::ParseError>(())
//! ```
//!
//! The macro's expression form is a `&'static` [`EmbeddedTemplate`] (keep it in a `let` or a
//! `static`). The item form names the template and generates an enum of its fields, so that
//! events can be matched exhaustively:
//!
//! ```
//! parser_runtime::response_template!(pub SmolLm3 = "../../templates/smollm3.json");
//!
//! let prefix = "<|im_start|>assistant\n";
//! let output = "<think>\nThe user greets me.\n</think>\nHello!";
//! let message = SmolLm3::parse_response(output, prefix)?;
//! assert_eq!(message["content"], "Hello!");
//! assert_eq!(message["thinking"], "The user greets me.");
//!
//! // Streaming: the same message, plus events whose field can be matched exhaustively.
//! let mut parser = SmolLm3::parser(prefix)?;
//! for chunk in ["<think>\nThe user", " greets me.\n</th", "ink>\nHel", "lo!"] {
//!     for event in parser.feed(chunk)? {
//!         match SmolLm3::from_name(event.field()) {
//!             Some(SmolLm3::Thinking) | Some(SmolLm3::Content) => {}
//!             Some(SmolLm3::ToolCalls) | None => unreachable!(),
//!         }
//!     }
//! }
//! let (streamed, _events) = parser.finalize()?;
//! assert_eq!(streamed, message);
//! # Ok::<(), parser_runtime::ParseError>(())
//! ```
//!
//! [`ResponseParser<'t>`](ResponseParser) borrows its template; [`OwnedResponseParser`] is the
//! same parser holding an `Arc<CompiledTemplate>`, with no lifetime and `Send + Sync`, for a
//! server or a binding that keeps one parser per stream (a generated item's `parser` is a
//! `ResponseParser<'static>`, which needs neither).
//!
//! Without a heap (`default-features = false`, `#![no_std]`): the generated item's `router`
//! gives a [`Router`] with a fixed hold buffer whose events borrow their text and carry the
//! field enum; nothing is allocated while feeding.
//!
//! ```
//! use parser_runtime::{RegionEvent, RegionValue, Span};
//! parser_runtime::response_template!(SmolLm3 = "../../templates/smollm3.json");
//!
//! let mut router = SmolLm3::router::<256>()?;
//! let mut content = String::new();
//! let mut thinking = None;
//! let output = "<think>\nThe user greets me.\n</think>\nHello!";
//! for chunk in ["<think>\nThe user", " greets me.\n</th", "ink>\nHel", "lo!"] {
//!     router.feed(chunk, |event| match event {
//!         RegionEvent::Chunk { field: SmolLm3::Content, text } => content.push_str(text),
//!         RegionEvent::Close { field: SmolLm3::Thinking, body, value } => {
//!             thinking = Some((body, value))
//!         }
//!         _ => {}
//!     })?;
//! }
//! router.finish(|_| {})?;
//! assert_eq!(content, "\nHello!"); // chunks are raw text
//! let (body, value) = thinking.unwrap();
//! assert_eq!(&output[body.start..body.end], "\nThe user greets me.\n");
//! assert_eq!(body, Span { start: 7, end: 28 });
//! // The `text` parser strips the body: the value is a span of the output.
//! assert_eq!(value, RegionValue::Text(Span { start: 8, end: 27 }));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

pub use parser_runtime_core::*;

/// Compiles a response template at build time, into an expression or an item.
///
/// ```text
/// response_template!("path/to/template.json")            // &'static EmbeddedTemplate
/// response_template!(pub NAME = "path/to/template.json");  // an enum of the fields
/// ```
///
/// The path is relative to the file invoking the macro, like `include_str!`; the file is a
/// bare template or a `tokenizer_config.json` with a `response_template` key. Editing it
/// rebuilds the crate.
///
/// The expression form evaluates to a `&'static` [`EmbeddedTemplate`] (in a `let`, in a
/// `static`, or inline: `response_template!("smollm3.json").parse_response(output, prefix)?`);
/// its name is the file stem, or for a `tokenizer_config.json` the name of its directory. Each
/// invocation embeds its own tables and builds them once, on its own first use: to share one
/// template, invoke the macro once, in a `static` or `const`. The path must be a string
/// literal (a macro such as `concat!` is not expanded there). The item form in expression
/// position, or the expression form where an item is expected, is a syntax error of rustc.
///
/// The item form is an enum with one variant per field of the template (field names converted to
/// `UpperCamelCase`), so events can be matched exhaustively, with:
///
/// * `as_str(self) -> &'static str`, `from_name(&str) -> Option<Self>`, `FIELDS`;
/// * `embedded() -> &'static EmbeddedTemplate` (the same value the expression form gives; the
///   functions below delegate to it);
/// * `template() -> Result<&'static CompiledTemplate, TableError>` (built once, on first use);
/// * `parse_response(output, prefix)`, `parse_response_with_tools(output, prefix, tools)`;
/// * `parser(prefix)`, `parser_with_tools(prefix, tools)` (streaming [`ResponseParser`]);
/// * without a heap: `tables()` (the const tables), `routes()` (the tables of the router,
///   DFAs deserialized in place on first use) and `router::<HOLD>()` (a [`Router`] whose
///   events carry this enum); the items above need the `alloc` feature.
///
/// A template with errors fails the build with every error, each with the file, the JSON path
/// (e.g. `fields.tool_calls.open_pattern`), the reason and the line:column in the file.
///
/// Variant names: field names split into words at every character that is not an ASCII letter
/// or digit, each word capitalized (`tool_calls` -> `ToolCalls`); `Field` is prefixed to a
/// name that would be empty, start with a digit, or be `Self`, `NAME` or `FIELDS`; a name
/// already taken gets a number (`AB`, `AB2`, ...).
///
/// The generated code names `::parser_runtime`: depend on this crate under its own name (not
/// renamed in `Cargo.toml`).
#[cfg(feature = "macros")]
pub use template_macro::response_template;

/// Items used by generated code. Not a public API: may change in any release.
#[doc(hidden)]
pub mod __private {
    #[cfg(feature = "alloc")]
    pub use parser_runtime_core::engine::{parse_response, Message, ResponseParser};
    #[cfg(feature = "alloc")]
    pub use parser_runtime_core::error::ParseError;
    pub use parser_runtime_core::router::{DelimiterKind, FieldId, Router};
    pub use parser_runtime_core::statics::*;
    #[cfg(feature = "alloc")]
    pub use parser_runtime_core::tables::CompiledTemplate;
    pub use parser_runtime_core::tables::{
        Branch, ByteSet, CallBrackets, Content, Delimiter, Field, JumpPlan, Lookahead, Prefilter,
        Role, StartAnchor, Template, ToolFamily, Watch, Watched,
    };
    #[cfg(feature = "alloc")]
    pub use serde_json::Value;
}

/// Used by generated code: its tokens when this crate has the `alloc` feature, nothing
/// otherwise. Not a public API.
#[cfg(feature = "alloc")]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_alloc {
    ($($tokens:tt)*) => { $($tokens)* };
}

/// Used by generated code: its tokens when this crate has the `alloc` feature, nothing
/// otherwise. Not a public API.
#[cfg(not(feature = "alloc"))]
#[doc(hidden)]
#[macro_export]
macro_rules! __if_alloc {
    ($($tokens:tt)*) => {};
}
