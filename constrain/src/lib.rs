//! # constrain
//!
//! Structured outputs enforced during generation (work in progress).
#![warn(missing_docs)]

pub mod dfa;
pub mod graph;
pub mod index;
pub mod json;
pub mod sample;
pub mod template;
pub mod vocab;
