//! Workspace integration tests (one binary): conformance with the reference, streaming ==
//! one-shot under random chunkings, the vendored templates' fixtures, and word boundaries.

mod api;
mod chunking;
mod conformance;
mod deliberate;
mod fixtures;
mod lenient;
mod limits;
mod memo;
mod regressions;
mod router;
mod statics;
mod word_boundary;
