//! The `hip` fuzz target's body (`fuzz/src/hip.rs`) on stable: for a fixed
//! time (`SOFTGPU_FUZZ_SECONDS`, default 15), pseudo-random sequences of
//! HIP calls with wild, freed and read-only pointers, forged streams and
//! events, bad copy kinds and huge sizes, through the built
//! `libamdhip64.so`. The process must survive every call, a canary
//! allocation must keep its bytes and a valid copy must keep working.
//! Needs the library built first (`cargo build --release -p softgpu-hip`).

#[path = "../../../fuzz/src/aql.rs"]
#[allow(dead_code)]
mod aql;
#[path = "../../../fuzz/src/hip.rs"]
mod hip;
#[path = "../../../fuzz/src/sequence.rs"]
#[allow(dead_code)]
mod sequence;

use std::time::{Duration, Instant};

use sequence::Rng;

#[test]
fn hostile_hip_calls_never_crash_the_library_or_change_other_data() {
    let seconds: f64 = std::env::var("SOFTGPU_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15.0);
    // The test executable is target/PROFILE/deps/fuzz-HASH.
    let exe = std::env::current_exe().expect("cannot find the test executable");
    let library = exe
        .parent()
        .and_then(std::path::Path::parent)
        .expect("the test executable is not in target/PROFILE/deps")
        .join("libamdhip64.so");
    assert!(
        library.is_file(),
        "{} is missing: cargo build --release -p softgpu-hip",
        library.display()
    );
    let mut harness = hip::Harness::new(&library).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Rng(0x5eed_0000_0000_41b0);
    let (mut calls, mut refused, mut runs) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        let data = rng.bytes(64);
        let counts = harness
            .run(&data)
            .unwrap_or_else(|e| panic!("input {data:02x?}: {e}"));
        calls += counts.calls;
        refused += counts.refused;
        runs += 1;
    }
    eprintln!("{runs} sequences, {calls} calls, {refused} refused");
    assert!(
        refused > 0 && refused < calls,
        "the inputs explored only one outcome"
    );
}
