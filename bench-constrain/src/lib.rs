//! What the two binaries share: `bench-constrain` (src/main.rs, the side-by-side benchmark)
//! and `corpus` (src/bin/corpus.rs, the corpus runner). Each runs engines in worker
//! processes of itself, so a schema past the time cap can be abandoned by killing one.
//!
//! - [`worker`]: the parent side (spawn, cap, restart);
//! - [`harness`]: the worker side (the line protocol, timing, token walks);
//! - [`vocab`]: vocabularies for every engine;
//! - [`engines`]: the benchmark's workers; [`corpus`]: the corpus runner's;
//! - [`walk`], [`tools`], [`rng`]: the benchmark's generated outputs and tool schemas;
//! - [`alloc`], [`stats`]: heap counting, percentiles and units.

pub mod alloc;
pub mod corpus;
pub mod engines;
pub mod harness;
pub mod rng;
pub mod stats;
pub mod tools;
pub mod vocab;
pub mod walk;
pub mod worker;
