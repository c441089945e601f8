//! # template-build
//!
//! The compiler of response-templates. It reads a response template (the `response_template`
//! JSON of `tokenizer_config.json`, version 1), validates it with every load-time check of the
//! reference implementation (transformers 5.24.0, `chat_parsing/response_templates.py`),
//! translates its Python-dialect regexes and compiles every delimiter to regex-automata DFAs,
//! producing the tables ([`parser_runtime_core::CompiledTemplate`]) the runtime walks.
//!
//! ```text
//! JSON --model::load--> TemplateModel --compile--> CompiledTemplate --codegen--> Rust items
//! ```
//!
//! Three front ends share this crate: run-time loading ([`load_file`], [`compile_str`]), the
//! `response_template!` macro (crate `template-macro`), and build scripts ([`Builder`]); the
//! last two emit the same code through [`codegen`].

pub mod builder;
pub mod codegen;
pub mod compile;
pub mod error;
pub mod locate;
pub mod model;
pub mod path;
pub mod pyregex;
pub mod roles;
pub mod word;

pub use builder::Builder;
pub use compile::{compile, compile_model, compile_str, compile_text, load_file};
pub use error::{Problem, TemplateError, TemplateErrorKind, TemplateErrors};
pub use model::TemplateModel;
pub use pyregex::{Construct, RegexIssueKind};
