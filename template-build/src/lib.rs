//! # template-build
//!
//! The compiler of response-templates. It reads a response template (the `response_template`
//! JSON of `tokenizer_config.json`, version 1), validates it with every load-time check of the
//! reference implementation (transformers 5.23.0, `chat_parsing/response_templates.py`),
//! translates its Python-dialect regexes and compiles every delimiter to regex-automata DFAs,
//! producing the tables ([`parser_runtime::CompiledTemplate`]) the runtime walks.
//!
//! ```text
//! JSON --model::load--> TemplateModel --compile--> CompiledTemplate
//! ```

pub mod compile;
pub mod error;
pub mod model;
pub mod pyregex;

pub use compile::{compile, compile_model, compile_str, load_file};
pub use error::{TemplateError, TemplateErrors};
pub use model::TemplateModel;
