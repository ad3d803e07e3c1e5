//! Fuzz AQL packets through softgpu's HSA library: `cargo +nightly fuzz run
//! aql` after `cargo build --release -p softgpu-hsa` (the library is taken
//! from `SOFTGPU_HSA_LIB`, default `../target/release/libhsa_runtime64.so`).
//! Needs clang-19 and ld.lld-19 to assemble the kernel packets dispatch.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use softgpu_fuzz::aql::{assemble_kernel, Harness};

fn harness() -> &'static Harness {
    static H: OnceLock<Harness> = OnceLock::new();
    H.get_or_init(|| {
        let library = std::env::var_os("SOFTGPU_HSA_LIB")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("../target/release/libhsa_runtime64.so"));
        let dir = std::env::temp_dir().join(format!("softgpu-fuzz-aql-{}", std::process::id()));
        let code = assemble_kernel(&dir, "gfx1151").unwrap_or_else(|e| panic!("{e}"));
        Harness::new(&library, &code).unwrap_or_else(|e| panic!("{e}"))
    })
}

fuzz_target!(|data: &[u8]| {
    if let Err(e) = harness().run(data) {
        panic!("{e}");
    }
});
