//! HIP kernels: blockIdx/threadIdx/blockDim/gridDim, __shared__, __syncthreads,
//! dynamic shared memory.

mod common;
use common::*;
use softgpu_exec::Arg;

fn hip_kernels(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("hip_basic.hip", &[]);
    let mut rng = Rng::new(50);

    let n = 777usize;
    let (a, b) = (rng.vec_f32(n, -3.0, 3.0), rng.vec_f32(n, -3.0, 3.0));
    let c = gpu.zeros(n * 4);
    gpu.run1d(
        &prog,
        "_Z8hip_vaddPKfS0_Pfi",
        n,
        128,
        &[
            buf(&gpu.buf(&a)),
            buf(&gpu.buf(&b)),
            buf(&c),
            Arg::I32(n as i32),
        ],
    );
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_slice_eq("hip_vadd", &gpu.read::<f32>(&c), &want);

    let (rows, cols) = (45usize, 67usize);
    let m = rng.vec_f32(rows * cols, -1.0, 1.0);
    let t = gpu.zeros(rows * cols * 4);
    gpu.run(
        &prog,
        "_Z13hip_transposePKfPfii",
        [blocks(cols, 16), blocks(rows, 16), 1],
        [16, 16, 1],
        &[
            buf(&gpu.buf(&m)),
            buf(&t),
            Arg::I32(rows as i32),
            Arg::I32(cols as i32),
        ],
    );
    let mut want = vec![0f32; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            want[c * rows + r] = m[r * cols + c];
        }
    }
    assert_slice_eq("hip_transpose", &gpu.read::<f32>(&t), &want);

    let n = 1000usize;
    let u = rng.vec_u32(n);
    let du = gpu.buf(&u);
    let out = gpu.zeros(blocks(n, 128) as usize * 4);
    gpu.run_lds(
        &prog,
        "_Z13hip_block_sumPKjPji",
        [blocks(n, 128), 1, 1],
        [128, 1, 1],
        128 * 4,
        &[buf(&du), buf(&out), Arg::I32(n as i32)],
    );
    let want: Vec<u32> = u
        .chunks(128)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    assert_slice_eq("hip_block_sum (dynamic LDS)", &gpu.read::<u32>(&out), &want);

    let out = gpu.zeros(n * 4);
    let total = gpu.zeros(4);
    gpu.run(
        &prog,
        "_Z15hip_grid_stridePKjPjS1_i",
        [3, 1, 1],
        [64, 1, 1],
        &[buf(&du), buf(&out), buf(&total), Arg::I32(n as i32)],
    );
    let want: Vec<u32> = u
        .iter()
        .map(|v| v.wrapping_mul(2).wrapping_add(1))
        .collect();
    assert_slice_eq("hip_grid_stride", &gpu.read::<u32>(&out), &want);
    assert_eq!(
        gpu.read::<u32>(&total),
        vec![u.iter().fold(0u32, |a, &b| a.wrapping_add(b))],
        "gridDim total"
    );
}
per_target!(hip_kernels, hip_kernels);
