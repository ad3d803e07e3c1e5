//! Fuzz the code object loader: `cargo +nightly fuzz run load`.
//! Seed the corpus with real code objects, e.g. `fuzz/corpus/load/*.hsaco`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| softgpu_fuzz::load::load(data));
