//! Fuzz sequences of HIP calls with hostile arguments through softgpu's
//! HIP library: `cargo +nightly fuzz run hip` after `cargo build --release
//! -p softgpu-hip` (the library is taken from `SOFTGPU_HIP_LIB`, default
//! `../target/release/libamdhip64.so`).
#![no_main]

use std::path::PathBuf;
use std::sync::Mutex;

use libfuzzer_sys::fuzz_target;
use softgpu_fuzz::hip::Harness;

static HARNESS: Mutex<Option<Harness>> = Mutex::new(None);

fuzz_target!(|data: &[u8]| {
    let mut harness = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
    let h = harness.get_or_insert_with(|| {
        let library = std::env::var_os("SOFTGPU_HIP_LIB")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("../target/release/libamdhip64.so"));
        Harness::new(&library).unwrap_or_else(|e| panic!("{e}"))
    });
    if let Err(e) = h.run(data) {
        panic!("{e}");
    }
});
