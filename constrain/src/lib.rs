//! # constrain
//!
//! Structured outputs enforced during generation (work in progress).
#![warn(missing_docs)]

pub mod dfa;
pub mod json;
