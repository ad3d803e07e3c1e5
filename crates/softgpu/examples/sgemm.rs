//! Tiled SGEMM (C = A * B, 16x16 tiles staged in LDS) with the committed
//! code object `examples/bin/sgemm-gfx1151.hsaco`, so no compiler is needed.
//! Checked against a CPU SGEMM that does the kernel's fused multiply-adds in
//! the kernel's order, so the results must agree bit for bit.
//!
//! Run with `cargo run --release -p softgpu --example sgemm`.

use std::time::Duration;

use softgpu::{Args, Device, Error};

const CODE_OBJECT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../examples/bin/sgemm-gfx1151.hsaco"
);
/// The kernel's workgroup is one TILE x TILE tile of C.
const TILE: u32 = 16;
/// C is M x N; A is M x K, B is K x N.
const M: usize = 256;
const N: usize = 256;
const K: usize = 256;
const TIMED_RUNS: usize = 3;

fn main() -> Result<(), Error> {
    let device = Device::open_for(0, "gfx1151")?;
    let stream = device.stream()?;
    let sgemm = stream.load(CODE_OBJECT, "sgemm")?;
    let a = inputs(M * K, 1);
    let b = inputs(K * N, 2);
    let (da, db, dc) = (
        stream.allocate(4 * a.len())?,
        stream.allocate(4 * b.len())?,
        stream.allocate(4 * (M * N))?,
    );
    stream.upload(&da, &a)?;
    stream.upload(&db, &b)?;
    let args = Args::new().view(&da).view(&db).view(&dc);
    let args = args.value(M as i32).value(N as i32).value(K as i32);
    let grid = ((N as u32).div_ceil(TILE), (M as u32).div_ceil(TILE));
    let mut best = Duration::MAX;
    for _ in 0..TIMED_RUNS {
        let start = stream.record_event()?;
        stream.dispatch_args(&sgemm, grid, (TILE, TILE), &args)?;
        let end = stream.record_event()?;
        best = best.min(end.elapsed_since(&start)?);
    }
    let c: Vec<f32> = stream.read_vec(&dc)?;
    let want = cpu_sgemm(&a, &b);
    let wrong = c.iter().zip(&want).filter(|(g, w)| g != w).count();
    let gflops = 2.0 * (M * N * K) as f64 / best.as_secs_f64() / 1e9;
    println!(
        "sgemm {M}x{N}x{K} on {}: best of {TIMED_RUNS} {best:.2?}, {gflops:.3} GFLOP/s, {wrong} of {} values wrong",
        device.target(),
        c.len()
    );
    match wrong {
        0 => Ok(()),
        _ => Err(Error::Invalid(format!("{wrong} wrong values of C"))),
    }
}

/// Deterministic inputs in [-1, 1), different per `seed`.
fn inputs(len: usize, seed: u64) -> Vec<f32> {
    (0..len as u64)
        .map(|i| {
            let h = (i + seed * 0x9e37_79b9).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
            h as f32 / (1u64 << 23) as f32 - 1.0
        })
        .collect()
}

/// C = A * B, row-major, one fma per k in order as the kernel does (its
/// zero padding of partial tiles adds exact zeros).
fn cpu_sgemm(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut c = vec![0.0f32; M * N];
    for (row, c_row) in c.chunks_exact_mut(N).enumerate() {
        for (col, out) in c_row.iter_mut().enumerate() {
            *out = (0..K).fold(0.0, |acc, k| a[row * K + k].mul_add(b[k * N + col], acc));
        }
    }
    c
}
