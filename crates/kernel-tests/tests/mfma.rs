//! CDNA matrix cores from clang-19: `kernels/mfma.cl`'s GEMMs (one wave64
//! per tile, K walked in MFMA steps) on gfx90a and gfx942, against a host
//! matmul. Inputs are small integers, so every product and partial sum is
//! exact in each element type and the results are compared bit for bit.

mod common;
use common::*;
use half::f16;
use softgpu_exec::Arg;

/// Matrix sizes: two tiles of 32 (four of 16) each way, and K a multiple
/// of every kernel's step, so each kernel loops over K.
const M: usize = 64;
const N: usize = 64;
const K: usize = 64;

/// A (M x K) and B (K x N) as small integers, different per element so a
/// wrong lane, row or k shows in D.
fn inputs(rng: &mut Rng) -> (Vec<i64>, Vec<i64>) {
    let a = (0..M * K).map(|_| rng.range_i64(-3, 3)).collect();
    let b = (0..K * N).map(|_| rng.range_i64(-3, 3)).collect();
    (a, b)
}

/// D = A * B exactly.
fn matmul(a: &[i64], b: &[i64]) -> Vec<i64> {
    let mut d = vec![0; M * N];
    for i in 0..M {
        for j in 0..N {
            d[i * N + j] = (0..K).map(|k| a[i * K + k] * b[k * N + j]).sum();
        }
    }
    d
}

/// Runs GEMM `kernel` (of `tile`-square tiles) on A and B as the
/// kernel's element bytes and holds D, of `T`, to `want`.
fn check<T: FromBytes + PartialEq + std::fmt::Debug>(
    gpu: &Gpu,
    prog: &softgpu_exec::Program,
    (kernel, tile): (&str, u32),
    (a, b): (&[u8], &[u8]),
    want: &[T],
) {
    let (da, db) = (gpu.buf(a), gpu.buf(b));
    let d = gpu.zeros(M * N * std::mem::size_of::<T>());
    gpu.run(
        prog,
        kernel,
        [N as u32 / tile, M as u32 / tile, 1],
        [64, 1, 1],
        &[
            buf(&da),
            buf(&db),
            buf(&d),
            Arg::I32(K as i32),
            Arg::I32(N as i32),
        ],
    );
    assert_slice_eq(
        &format!("{kernel} on {}", gpu.target),
        &gpu.read::<T>(&d),
        want,
    );
}

fn mfma_gemms(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("mfma.cl", &[]);
    let mut rng = Rng::new(90);
    let (a, b) = inputs(&mut rng);
    let want = matmul(&a, &b);
    let want_f32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    let want_i32: Vec<i32> = want.iter().map(|&v| v as i32).collect();
    let want_f64: Vec<f64> = want.iter().map(|&v| v as f64).collect();

    let f16s = |v: &[i64]| -> Vec<u8> {
        let h: Vec<u16> = v
            .iter()
            .map(|&x| f16::from_f32(x as f32).to_bits())
            .collect();
        bytes_of(&h)
    };
    // bf16: the top half of the f32 bits (exact for small integers).
    let bf16s = |v: &[i64]| {
        let h: Vec<u16> = v
            .iter()
            .map(|&x| ((x as f32).to_bits() >> 16) as u16)
            .collect();
        bytes_of(&h)
    };
    let f32s = |v: &[i64]| bytes_of(&v.iter().map(|&x| x as f32).collect::<Vec<_>>());
    let i8s = |v: &[i64]| bytes_of(&v.iter().map(|&x| x as i8).collect::<Vec<_>>());
    let f64s = |v: &[i64]| bytes_of(&v.iter().map(|&x| x as f64).collect::<Vec<_>>());

    let (ah, bh) = (f16s(&a), f16s(&b));
    check(&gpu, &prog, ("gemm_f16_32x32x8", 32), (&ah, &bh), &want_f32);
    check(
        &gpu,
        &prog,
        ("gemm_f16_16x16x16", 16),
        (&ah, &bh),
        &want_f32,
    );
    let (af, bf) = (f32s(&a), f32s(&b));
    check(&gpu, &prog, ("gemm_f32_16x16x4", 16), (&af, &bf), &want_f32);
    let (ab, bb) = (bf16s(&a), bf16s(&b));
    check(
        &gpu,
        &prog,
        ("gemm_bf16_16x16x16", 16),
        (&ab, &bb),
        &want_f32,
    );
    let (ai, bi) = (i8s(&a), i8s(&b));
    check(&gpu, &prog, ("gemm_i8_16x16", 16), (&ai, &bi), &want_i32);
    let (ad, bd) = (f64s(&a), f64s(&b));
    check(&gpu, &prog, ("gemm_f64_16x16x4", 16), (&ad, &bd), &want_f64);
}

#[test]
fn mfma_gemm_gfx90a() {
    mfma_gemms("gfx90a");
}

#[test]
fn mfma_gemm_gfx942() {
    mfma_gemms("gfx942");
}
