//! Kernels built without optimisation (-O0), whose locals, spills and
//! call frames live in private memory: run with the harness's default
//! `SOFTGPU_JIT=verify`, every JIT block of them (scratch loads and
//! stores among the block's ops) is held to the interpreter, and the
//! results to the host's.

mod common;
use common::*;
use softgpu_exec::Arg;

fn mix(h: u32, v: u32) -> u32 {
    let h = (h ^ v).wrapping_mul(0x9e37_79b1);
    h ^ (h >> 15)
}

fn hip_at_o0(target: &str) {
    hip_at_o0_with(target, &["-O0"]);
}

/// The same in wave64, whose blocks address 64 lanes' private memory.
fn hip_at_o0_wave64(target: &str) {
    hip_at_o0_with(target, &["-O0", "-mwavefrontsize64"]);
}

fn hip_at_o0_with(target: &str, flags: &[&str]) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("o0.hip", flags);
    let n = 320usize;
    let mut rng = Rng::new(46);
    let x = rng.vec_u32(n);
    let xf: Vec<f32> = x.iter().map(|&v| (v % 1000) as f32 * 0.25).collect();
    let yf: Vec<f32> = x.iter().map(|&v| (v >> 20) as f32 - 7.5).collect();
    let y = gpu.buf(&yf);
    gpu.run1d(
        &prog,
        "_Z5saxpyfPKfPfi",
        n,
        64,
        &[
            Arg::F32(1.5),
            buf(&gpu.buf(&xf)),
            buf(&y),
            Arg::I32(n as i32 - 3),
        ],
    );
    let want: Vec<f32> = (0..n)
        .map(|i| match i < n - 3 {
            true => 1.5f32 * xf[i] + yf[i],
            false => yf[i],
        })
        .collect();
    assert_slice_eq("saxpy -O0", &gpu.read::<f32>(&y), &want);

    let out = gpu.zeros(n * 4);
    let iters = 9;
    gpu.run1d(
        &prog,
        "_Z8hashloopPKjPji",
        n,
        64,
        &[buf(&gpu.buf(&x)), buf(&out), Arg::I32(iters)],
    );
    let want: Vec<u32> = x.iter().map(|&h| (0..iters as u32).fold(h, mix)).collect();
    assert_slice_eq("hashloop -O0", &gpu.read::<u32>(&out), &want);

    let out = gpu.zeros(n * 4);
    gpu.run1d(
        &prog,
        "_Z6widthsPKjPj",
        n,
        64,
        &[buf(&gpu.buf(&x)), buf(&out)],
    );
    let want: Vec<u32> = x
        .iter()
        .map(|&v| {
            let b = v as u8 as u32;
            let s = (v >> 8) as i16 as i32 as u32;
            let q = ((v as u64 * 0x1_0000_0001) >> 17) as u32;
            let f = |k: u32| (v >> (8 * k) & 0xff) as f32;
            let sum = f(0) + f(1) * 2.0 + f(2) * 3.0 + f(3) * 4.0;
            b.wrapping_add(s).wrapping_add(q).wrapping_add(sum as u32)
        })
        .collect();
    assert_slice_eq("widths -O0", &gpu.read::<u32>(&out), &want);
}
per_target!(hip_kernels_at_o0, hip_at_o0);
per_target!(hip_kernels_at_o0_wave64, hip_at_o0_wave64);

fn opencl_at_o0(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("o0.cl", &["-O0"]);
    let n = 260usize;
    let mut rng = Rng::new(47);
    let x: Vec<f32> = rng.vec_u32(n).iter().map(|&v| (v % 64) as f32).collect();
    let y = gpu.zeros(n * 4);
    gpu.run1d(
        &prog,
        "stencil",
        n,
        64,
        &[buf(&gpu.buf(&x)), buf(&y), Arg::I32(n as i32)],
    );
    let want: Vec<f32> = (0..n as i64)
        .map(|i| {
            (-2..=2i64)
                .filter(|k| (0..n as i64).contains(&(i + k)))
                .fold(0.0f32, |acc, k| {
                    acc + x[(i + k) as usize] * (3 - k.abs()) as f32
                })
        })
        .collect();
    assert_slice_eq("stencil -O0", &gpu.read::<f32>(&y), &want);
}
per_target!(opencl_kernel_at_o0, opencl_at_o0);
