//! The side-by-side benchmark's parts (src/main.rs runs them). It runs engines in worker
//! processes of itself, so a schema past the time cap can be abandoned by killing one.
//!
//! - [`worker`]: the parent side (spawn, cap, restart);
//! - [`harness`]: the worker side (the line protocol, timing, token walks);
//! - [`vocab`]: vocabularies for every engine;
//! - [`engines`]: the benchmark's workers;
//! - [`walk`], [`tools`], [`rng`]: the benchmark's generated outputs and tool schemas;
//! - [`alloc`], [`stats`]: heap counting, percentiles and units.

pub mod alloc;
pub mod engines;
pub mod harness;
pub mod rng;
pub mod stats;
pub mod tools;
pub mod vocab;
pub mod walk;
pub mod worker;
