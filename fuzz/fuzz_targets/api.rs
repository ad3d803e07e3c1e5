//! Fuzz sequences of HSA calls with hostile arguments through softgpu's
//! HSA library: `cargo +nightly fuzz run api` after `cargo build --release
//! -p softgpu-hsa` (the library is taken from `SOFTGPU_HSA_LIB`, default
//! `../target/release/libhsa_runtime64.so`).
#![no_main]

use std::path::PathBuf;
use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use softgpu_fuzz::api::Harness;

static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut harness = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let h = harness.get_or_insert_with(|| {
        let library = std::env::var_os("SOFTGPU_HSA_LIB")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("../target/release/libhsa_runtime64.so"));
        Harness::new(&library).unwrap_or_else(|e| panic!("{e}"))
    });
    if let Err(e) = h.run(data) {
        panic!("{e}");
    }
});
