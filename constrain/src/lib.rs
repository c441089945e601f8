//! # constrain
//!
//! Structured outputs enforced during generation (work in progress).
#![warn(missing_docs)]

pub mod dfa;
pub mod graph;
pub mod json;
pub mod template;
