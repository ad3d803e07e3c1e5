//! The `aql` fuzz target's body (`fuzz/src/aql.rs`) on stable: for a fixed
//! time (`SOFTGPU_FUZZ_SECONDS`, default 10) it writes pseudo-random and
//! mutated AQL packets into real queues of the built library and rings
//! their doorbells. The library must never crash or hang, and every packet
//! must complete or stop its queue with an error status. The time only
//! bounds how long the test explores; nothing about speed is asserted.

#[path = "../../../fuzz/src/api.rs"]
mod api;
#[path = "../../../fuzz/src/aql.rs"]
#[allow(dead_code)]
mod aql;
mod common;
#[path = "../../../fuzz/src/sequence.rs"]
mod sequence;

use std::time::{Duration, Instant};

use aql::{assemble_kernel, Harness, Outcome};
use sequence::Rng;

/// Values at and around the limits the packet processor checks.
const EDGES: [u64; 14] = [
    0,
    1,
    2,
    31,
    32,
    1023,
    1024,
    1025,
    65535,
    65536,
    262_136,
    262_137,
    u32::MAX as u64,
    u64::MAX,
];

/// Packet fields by (offset, width): header, setup, block x/y/z, grid
/// x/y/z, private and group segment, kernel object, kernarg, barrier
/// dependency slots, completion signal.
const FIELDS: [(usize, usize); 16] = [
    (0, 2),
    (2, 2),
    (4, 2),
    (6, 2),
    (8, 2),
    (12, 4),
    (16, 4),
    (20, 4),
    (24, 4),
    (28, 4),
    (32, 8),
    (40, 8),
    (8, 8),
    (16, 8),
    (48, 8),
    (56, 8),
];

fn mutate(rng: &mut Rng, input: &mut [u8; 66]) {
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 => input[rng.below(66) as usize] = rng.next() as u8,
            1 => input[rng.below(66) as usize] ^= 1 << rng.below(8),
            2 | 3 => {
                let (at, width) = FIELDS[rng.below(FIELDS.len() as u64) as usize];
                let v = EDGES[rng.below(EDGES.len() as u64) as usize];
                input[at..at + width].copy_from_slice(&v.to_le_bytes()[..width]);
            }
            // The packet type: every AQL type and a few that are none.
            _ => input[0] = rng.below(8) as u8,
        }
    }
}

/// The tests of this file take turns: the hostile one frees and destroys
/// stale addresses (its own freed allocations), which a queue or buffer of
/// another test in the same process may since have reused. That call is a
/// legitimate `hsa_queue_destroy` of someone else's live queue, which no
/// library can refuse, and would hang that test's packet.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sends file descriptor 2 to /dev/null while it lives: the library prints
/// a line for every queue that stops and every refused call, tens of
/// thousands in a fuzz run. Only made under [`one_at_a_time`].
struct QuietStderr(i32);

impl QuietStderr {
    fn new() -> QuietStderr {
        // SAFETY: dup, open and dup2 take plain integers and a
        // NUL-terminated path; failures leave descriptor 2 as it was.
        let saved = unsafe {
            let saved = libc::dup(2);
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY);
            if saved >= 0 && null >= 0 {
                libc::dup2(null, 2);
            }
            if null >= 0 {
                libc::close(null);
            }
            saved
        };
        QuietStderr(saved)
    }
}

impl Drop for QuietStderr {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: restores the descriptor saved by `new`.
            unsafe {
                libc::dup2(self.0, 2);
                libc::close(self.0);
            }
        }
    }
}

#[test]
fn aql_packets_never_crash_or_hang_the_library() {
    let _turn = one_at_a_time();
    let seconds: f64 = std::env::var("SOFTGPU_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10.0);
    let dir = common::lib_dir().join("../hsa-fuzz");
    let code = assemble_kernel(&dir, "gfx1151").unwrap_or_else(|e| panic!("{e}"));
    let library = common::lib_dir().join("libhsa-runtime64.so.1");
    let harness = Harness::new(&library, &code).unwrap_or_else(|e| panic!("{e}"));
    let with = |packet: [u8; 64], flags: u8, slots: u8| {
        let mut input = [0u8; 66];
        input[..64].copy_from_slice(&packet);
        input[64] = flags;
        input[65] = slots;
        input
    };
    // Real kernel object, kernarg and completion signal; a barrier on live
    // signals.
    let seeds = [
        with(harness.dispatch_packet(64), 0b0111, 0),
        with(harness.barrier_packet(), 0b1100, 0b1_1111),
    ];
    for seed in &seeds {
        let outcome = harness.run(seed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(outcome, Outcome::Completed, "a valid packet must complete");
    }
    let mut rng = Rng(0x5eed_0000_0000_0011);
    let (mut completed, mut failed, mut runs) = (0u32, 0u32, 0u32);
    let start = Instant::now();
    let quiet = QuietStderr::new();
    let mut failure = None;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        let mut input = [0u8; 66];
        if rng.below(4) == 0 {
            input.iter_mut().for_each(|b| *b = rng.next() as u8);
        } else {
            input = seeds[rng.below(2) as usize];
            mutate(&mut rng, &mut input);
        }
        match harness.run(&input) {
            Ok(Outcome::Completed) => completed += 1,
            Ok(Outcome::Failed(_)) => failed += 1,
            Ok(Outcome::NotPublished) => {}
            Err(e) => {
                failure = Some(format!("input {input:02x?}: {e}"));
                break;
            }
        }
        runs += 1;
    }
    drop(quiet);
    if let Some(f) = failure {
        panic!("{f}");
    }
    eprintln!("{runs} packets: {completed} completed, {failed} stopped their queue with an error");
    assert!(
        completed > 0 && failed > 0,
        "the inputs explored only one outcome"
    );
}

/// The `api` fuzz target's body (`fuzz/src/api.rs`) on stable: for a fixed
/// time, pseudo-random sequences of HSA calls with wild, freed and
/// read-only pointers, forged handles and huge sizes. The process must
/// survive every call, a canary allocation must keep its bytes and a valid
/// copy must keep working.
#[test]
fn hostile_api_calls_never_crash_the_library_or_change_other_data() {
    let _turn = one_at_a_time();
    let seconds: f64 = std::env::var("SOFTGPU_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10.0);
    let library = common::lib_dir().join("libhsa-runtime64.so.1");
    let mut harness = api::Harness::new(&library).unwrap_or_else(|e| panic!("{e}"));
    let mut rng = Rng(0x5eed_0000_0000_0a91);
    let (mut calls, mut refused, mut runs) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    let quiet = QuietStderr::new();
    let mut failure = None;
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        let data = rng.bytes(64);
        match harness.run(&data) {
            Ok(counts) => {
                calls += counts.calls;
                refused += counts.refused;
            }
            Err(e) => {
                failure = Some(format!("input {data:02x?}: {e}"));
                break;
            }
        }
        runs += 1;
    }
    drop(quiet);
    if let Some(f) = failure {
        panic!("{f}");
    }
    eprintln!("{runs} sequences, {calls} calls, {refused} refused");
    assert!(
        refused > 0 && refused < calls,
        "the inputs explored only one outcome"
    );
}

/// Each limit the packet processor checks, through the library: a packet
/// beyond it stops the queue with the status ROCr reports for that check
/// (`amd_aql_queue.cpp`: `AqlQueue::ExceptionHandler`); the edge itself
/// completes.
#[test]
fn hostile_packets_stop_the_queue_with_an_error() {
    let _turn = one_at_a_time();
    const INVALID_ARGUMENT: u32 = 0x1001;
    const INVALID_ALLOCATION: u32 = 0x1003;
    const INVALID_SIGNAL: u32 = 0x1006;
    const OUT_OF_RESOURCES: u32 = 0x1008;
    const INCOMPATIBLE_ARGUMENTS: u32 = 0x100D;
    const INVALID_CODE_OBJECT: u32 = 0x1010;
    const MEMORY_APERTURE_VIOLATION: u32 = 41;
    let dir = common::lib_dir().join("../hsa-fuzz-limits");
    let code = assemble_kernel(&dir, "gfx1151").unwrap_or_else(|e| panic!("{e}"));
    let library = common::lib_dir().join("libhsa-runtime64.so.1");
    let harness = Harness::new(&library, &code).unwrap_or_else(|e| panic!("{e}"));
    let patched = |at: usize, value: u64, width: usize| {
        let mut input = [0u8; 65];
        input[..64].copy_from_slice(&harness.dispatch_packet(64));
        input[at..at + width].copy_from_slice(&value.to_le_bytes()[..width]);
        input
    };
    let bad = [
        (
            "private segment of 32 GiB per wave",
            patched(24, 1 << 30, 4),
            OUT_OF_RESOURCES,
        ),
        (
            "private segment past the gfx11 limit",
            patched(24, 262_137, 4),
            OUT_OF_RESOURCES,
        ),
        (
            "group segment past the LDS",
            patched(28, 65_537, 4),
            INVALID_ALLOCATION,
        ),
        ("workgroup of 1025", patched(4, 1025, 2), INVALID_ARGUMENT),
        ("zero grid", patched(12, 0, 4), INCOMPATIBLE_ARGUMENTS),
        ("null kernarg", patched(40, 0, 8), MEMORY_APERTURE_VIOLATION),
        (
            "unmapped kernarg",
            patched(40, 0x40, 8),
            MEMORY_APERTURE_VIOLATION,
        ),
        (
            "kernel object that is no kernel",
            patched(32, 0x1234_5678, 8),
            INVALID_CODE_OBJECT,
        ),
        (
            "garbage completion signal",
            patched(56, 0xdead_beef, 8),
            INVALID_SIGNAL,
        ),
    ];
    for (what, input, status) in bad {
        let outcome = harness
            .run(&input)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(outcome, Outcome::Failed(status), "{what}");
    }
    let mut barrier = [0u8; 64];
    barrier.copy_from_slice(&harness.barrier_packet());
    barrier[8..16].copy_from_slice(&0xdead_beef_u64.to_le_bytes());
    let outcome = harness.run(&barrier).unwrap();
    assert_eq!(outcome, Outcome::Failed(INVALID_SIGNAL), "bad dependency");
    let edges = [
        ("largest private segment", patched(24, 262_136, 4)),
        ("all of the LDS", patched(28, 65_536, 4)),
        ("workgroup of 1024", patched(4, 1024, 2)),
    ];
    for (what, input) in edges {
        let outcome = harness
            .run(&input)
            .unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(outcome, Outcome::Completed, "{what}");
    }
}
