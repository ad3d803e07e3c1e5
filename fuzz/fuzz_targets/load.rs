//! Fuzz the code object loader: `cargo +nightly fuzz run load`.
//! Seed the corpus with real code objects, e.g. `fuzz/corpus/load/*.hsaco`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(co) = softgpu_codeobj::load(data) {
        let _ = co.image.place(0x1_0000_0000);
    }
    for target in ["gfx1151", "gfx1100:xnack-"] {
        if let Ok(co) = softgpu_codeobj::load_for_target(data, target) {
            let _ = co.image.place(0);
        }
    }
    let _ = softgpu_codeobj::bundle_entries(data);
});
