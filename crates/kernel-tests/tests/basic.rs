//! Vector add, 2D saxpy with partial workgroups, 3D indexing.

mod common;
use common::*;
use softgpu_exec::Arg;

fn vector_add(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("vector_add.cl", &[]);
    let n = 1000; // not a multiple of the block
    let mut rng = Rng::new(1);
    let a = rng.vec_f32(n, -100.0, 100.0);
    let b = rng.vec_f32(n, -100.0, 100.0);
    let (da, db, dc) = (gpu.buf(&a), gpu.buf(&b), gpu.zeros(n * 4));
    let stats = gpu.run1d(
        &prog,
        "vector_add",
        n,
        64,
        &[buf(&da), buf(&db), buf(&dc), Arg::I32(n as i32)],
    );
    let want: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    assert_slice_eq("vector_add", &gpu.read::<f32>(&dc), &want);
    assert_eq!(stats.workgroups, 16);
    assert_eq!(stats.threads, 1024);
    assert!(stats.wave_instructions > 0 && stats.lane_instructions >= stats.wave_instructions);
}
per_target!(vector_add_1000, vector_add);

fn saxpy2d(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("saxpy2d.cl", &[]);
    let (w, h) = (37usize, 23usize);
    let mut rng = Rng::new(2);
    let x = rng.vec_f32(w * h, -10.0, 10.0);
    let y = rng.vec_f32(w * h, -10.0, 10.0);
    let alpha = 1.75f32;
    let (dy, dx) = (gpu.buf(&y), gpu.buf(&x));
    let block = [8, 4, 1];
    gpu.run(
        &prog,
        "saxpy2d",
        [blocks(w, 8), blocks(h, 4), 1],
        block,
        &[
            buf(&dy),
            buf(&dx),
            Arg::F32(alpha),
            Arg::I32(w as i32),
            Arg::I32(h as i32),
        ],
    );
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| alpha * x + y).collect();
    assert_slice_eq("saxpy2d", &gpu.read::<f32>(&dy), &want);
}
per_target!(saxpy2d_partial_groups, saxpy2d);

fn index3d(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("index3d.cl", &[]);
    let (gx, gy, gz) = (13usize, 7usize, 5usize);
    let block = [4u32, 3, 2];
    let grid = [blocks(gx, 4), blocks(gy, 3), blocks(gz, 2)];
    let out = gpu.zeros(gx * gy * gz * 12 * 4);
    gpu.run(
        &prog,
        "index3d",
        grid,
        block,
        &[
            buf(&out),
            Arg::U32(gx as u32),
            Arg::U32(gy as u32),
            Arg::U32(gz as u32),
        ],
    );
    let got: Vec<u32> = gpu.read(&out);
    let mut want = Vec::with_capacity(got.len());
    for z in 0..gz as u32 {
        for y in 0..gy as u32 {
            for x in 0..gx as u32 {
                let (lx, ly, lz) = (x % block[0], y % block[1], z % block[2]);
                let gsz = [grid[0] * block[0], grid[1] * block[1], grid[2] * block[2]];
                want.extend_from_slice(&[
                    lx,
                    ly,
                    lz,
                    x / block[0],
                    y / block[1],
                    z / block[2],
                    block[0] * 10000 + block[1] * 100 + block[2],
                    grid[0] * 10000 + grid[1] * 100 + grid[2],
                    gsz[0],
                    gsz[1] * 1000 + gsz[2],
                    (lz * block[1] + ly) * block[0] + lx,
                    3,
                ]);
            }
        }
    }
    assert_slice_eq("index3d", &got, &want);
}
per_target!(index3d_ids, index3d);
