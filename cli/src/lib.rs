//! The library half of `rtpl`: the conformance-case runner shared by the CLI (`rtpl run-cases`)
//! and the workspace tests.

pub mod cases;
