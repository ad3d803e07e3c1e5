//! The `load` fuzz target's body (`fuzz/src/load.rs`) on stable: for a fixed
//! time (`SOFTGPU_FUZZ_SECONDS`, default 15) it loads pseudo-random bytes
//! and mutations of real code objects. Nothing may panic. The time only
//! bounds how long the test explores; nothing about speed is asserted.

mod common;
#[path = "../../../fuzz/src/load.rs"]
mod load;

use std::time::{Duration, Instant};

use softgpu_test_support::Rng;

fn mutate(rng: &mut Rng, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(8) {
        let len = bytes.len() as u64;
        match rng.below(6) {
            0 if len > 0 => {
                let at = rng.below(len) as usize;
                bytes[at] = rng.next_u64() as u8;
            }
            1 if len > 0 => {
                let at = rng.below(len) as usize;
                bytes[at] ^= 1 << rng.below(8);
            }
            // A header field set to an extreme value (offsets, counts, sizes).
            2 if len >= 8 => {
                let at = rng.below(len.min(256) - 7) as usize & !3;
                let v = [0u64, 1, 0x7fff_ffff, u32::MAX as u64, u64::MAX][rng.below(5) as usize];
                bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
            }
            3 => bytes.truncate(rng.below(len + 1) as usize),
            4 if len > 0 => {
                // Copy a run of bytes elsewhere (duplicated headers, notes).
                let from = rng.below(len) as usize;
                let to = rng.below(len) as usize;
                let n = (rng.below(64) as usize).min(bytes.len() - from.max(to));
                bytes.copy_within(from..from + n, to);
            }
            _ => bytes.extend((0..rng.below(64)).map(|_| rng.next_u64() as u8)),
        }
    }
}

#[test]
fn loader_never_panics_on_random_and_mutated_inputs() {
    let seconds: f64 = std::env::var("SOFTGPU_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15.0);
    let seeds = [
        common::compile_cl("vadd.cl", "gfx1151", &[]).1,
        common::compile_cl("reloc.cl", "gfx1100", &[]).1,
        common::compile_cl("multi.cl", "gfx1100", &["-mcode-object-version=4"]).1,
    ];
    for seed in &seeds {
        softgpu_codeobj::load(seed).expect("the seeds are valid code objects");
    }
    let mut rng = Rng::new(0x5eed_0000_0000_0010);
    let mut runs = 0u64;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs_f64(seconds) {
        let input = if rng.below(8) == 0 {
            (0..rng.below(4096)).map(|_| rng.next_u64() as u8).collect()
        } else {
            let mut bytes = seeds[rng.below(seeds.len() as u64) as usize].clone();
            mutate(&mut rng, &mut bytes);
            bytes
        };
        load::load(&input);
        runs += 1;
    }
    eprintln!("{runs} inputs loaded without a panic");
}
