//! The body of the `load` fuzz target: arbitrary bytes through the code
//! object loader, every image that loads placed. Nothing may panic.
//!
//! Shared by `fuzz/fuzz_targets/load.rs` (cargo-fuzz, nightly) and the
//! stable test `crates/codeobj/tests/fuzz.rs`, which includes this file.

/// Loads `data` as a code object or bundle in every way softgpu does.
pub fn load(data: &[u8]) {
    if let Ok(co) = softgpu_codeobj::load(data) {
        let _ = co.image.place(0x1_0000_0000);
    }
    for target in ["gfx1151", "gfx1100:xnack-"] {
        if let Ok(co) = softgpu_codeobj::load_for_target(data, target) {
            let _ = co.image.place(0);
        }
    }
    let _ = softgpu_codeobj::bundle_entries(data);
}
