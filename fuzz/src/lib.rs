//! Bodies of softgpu's fuzz targets, each a plain function so the stable
//! tests (`crates/codeobj/tests/fuzz.rs`, `crates/hsa/tests/fuzz.rs`) run
//! them too, for a fixed time, on pseudo-random and mutated inputs.

pub mod api;
pub mod aql;
pub mod hip;
pub mod load;
pub mod sequence;
