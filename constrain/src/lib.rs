//! # constrain
//!
//! Structured outputs enforced during generation: a response template plus the request's
//! tools, `tool_choice` and response format compiled into one byte-level DFA of valid whole
//! responses ([`template::compile`]), and token masks over a vocabulary
//! ([`index::TokenIndex`]).
//!
//! Layers, each on the one before:
//!
//! * [`dfa`]: explicit DFA tables with byte classes (from regex-syntax HIR through our
//!   position automaton, or regex-automata for look-around and searches; literals, texts
//!   avoiding a pattern, intersection, splicing, trimming);
//! * [`json`]: JSON Schema as a regular language: the structured-outputs subset (strict
//!   mode, the default) or general JSON Schema ([`json::SchemaMode::General`]: [`general`],
//!   with [`numeric`] for numbers, [`formats`] for string formats), and JSON mode's
//!   bounded-depth reader;
//! * [`word`]: delimiters with Unicode word assertions (`\b`, `\B`, `\m`, `\M`): their exact
//!   languages with the classes of the neighbouring characters (docs/word-boundaries.md);
//! * [`graph`]: segment graphs (delimiters, bodies, free text) determinized into one table,
//!   supplying the neighbours' classes to delimiters that read them;
//! * [`template`]: the grammar of a response template's regions for a request;
//! * [`vocab`], [`index`]: vocabularies and per-state masks; [`sample`]: a sampler for tests
//!   and `rtpl constrain`.
//!
//! ```
//! use std::sync::Arc;
//! use constrain::index::{Step, TokenIndex, VocabIndex};
//! use constrain::template::{compile, Options, Request, ToolChoice};
//! use constrain::vocab::Vocabulary;
//! use serde_json::json;
//!
//! let model = template_build::model::load(&serde_json::from_str(
//!     templates::source("qwen3").unwrap())?)?;
//! let request = Request {
//!     tools: vec![json!({"type": "function", "function": {"name": "get_weather", "parameters": {
//!         "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}})],
//!     tool_choice: ToolChoice::Required,
//!     ..Request::default()
//! };
//! let constraint = compile(&model, &request, &Options::default())?;
//! // Once per vocabulary; shared by every index over it.
//! let vocab = Arc::new(VocabIndex::new(Vocabulary::builtin("o200k_base")?));
//! let index = TokenIndex::new(Arc::new(constraint), vocab.clone());
//!
//! // Walk a valid output token by token: every token is in the mask of its state.
//! let text = "<tool_call>{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}</tool_call><|im_end|>";
//! let bpe = tiktoken_rs::o200k_base()?;
//! let mut state = index.start();
//! for token in bpe.encode_ordinary(text) {
//!     assert!(index.allowed(state).contains(token));
//!     match index.advance(state, token) {
//!         Some(Step::Next(next)) => state = next,
//!         other => panic!("{other:?}"),
//!     }
//! }
//! let eos = vocab.vocab().eos()[0];
//! assert_eq!(index.advance(state, eos), Some(Step::End));
//! // A hallucinated tool name is masked out as soon as it diverges.
//! let state = bpe.encode_ordinary("<tool_call>{\"name\":\"get_").into_iter()
//!     .fold(index.start(), |s, t| match index.advance(s, t) { Some(Step::Next(n)) => n, _ => 0 });
//! let wrong = bpe.encode_ordinary("time")[0];
//! assert!(!index.allowed(state).contains(wrong));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod dfa;
pub mod formats;
pub mod general;
pub mod graph;
pub mod index;
pub mod json;
pub mod numeric;
mod positions;
mod refs;
pub mod sample;
pub mod template;
pub mod vocab;
pub mod word;
