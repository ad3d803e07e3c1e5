//! Tiled SGEMM and DGEMM with LDS tiles (bit exact: sequential k order, no fma).

mod common;
use common::*;
use softgpu_exec::Arg;

fn sgemm_case(gpu: &Gpu, m: usize, n: usize, k: usize, seed: u64) {
    let prog = gpu.program("gemm.cl", &[]);
    let mut rng = Rng::new(seed);
    let a = rng.vec_f32(m * k, -1.0, 1.0);
    let b = rng.vec_f32(k * n, -1.0, 1.0);
    let (da, db, dc) = (gpu.buf(&a), gpu.buf(&b), gpu.zeros(m * n * 4));
    gpu.run(
        &prog,
        "sgemm_tiled",
        [blocks(n, 16), blocks(m, 16), 1],
        [16, 16, 1],
        &[
            buf(&da),
            buf(&db),
            buf(&dc),
            Arg::I32(m as i32),
            Arg::I32(n as i32),
            Arg::I32(k as i32),
        ],
    );
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f32;
            for kk in 0..k {
                acc += a[i * k + kk] * b[kk * n + j];
            }
            want[i * n + j] = acc;
        }
    }
    assert_slice_eq(&format!("sgemm {m}x{n}x{k}"), &gpu.read::<f32>(&dc), &want);
}

fn sgemm(target: &str) {
    let gpu = Gpu::new(target);
    sgemm_case(&gpu, 64, 64, 64, 10);
    sgemm_case(&gpu, 50, 70, 40, 11); // partial tiles
}
per_target!(sgemm_tiled, sgemm);

fn dgemm(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("gemm.cl", &[]);
    let (m, n, k) = (33usize, 29usize, 31usize);
    let (alpha, beta) = (1.5f64, -0.75f64);
    let mut rng = Rng::new(12);
    let a = rng.vec_f64(m * k, -1.0, 1.0);
    let b = rng.vec_f64(k * n, -1.0, 1.0);
    let c = rng.vec_f64(m * n, -1.0, 1.0);
    let (da, db, dc) = (gpu.buf(&a), gpu.buf(&b), gpu.buf(&c));
    gpu.run(
        &prog,
        "dgemm_tiled",
        [blocks(n, 16), blocks(m, 16), 1],
        [16, 16, 1],
        &[
            buf(&da),
            buf(&db),
            buf(&dc),
            Arg::I32(m as i32),
            Arg::I32(n as i32),
            Arg::I32(k as i32),
            Arg::F64(alpha),
            Arg::F64(beta),
        ],
    );
    let mut want = vec![0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let mut acc = 0f64;
            for kk in 0..k {
                acc += a[i * k + kk] * b[kk * n + j];
            }
            want[i * n + j] = alpha * acc + beta * c[i * n + j];
        }
    }
    assert_slice_eq("dgemm", &gpu.read::<f64>(&dc), &want);
}
per_target!(dgemm_tiled, dgemm);
