//! Histograms with global and LDS atomics, CAS loops, float atomic add, and
//! the values atomics return.

mod common;
use common::*;
use softgpu_exec::Arg;

fn histograms(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("atomics.cl", &[]);
    let n = 4096usize;
    let mut rng = Rng::new(30);
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32() % 1000).collect();
    // weights k/4: every partial sum is exact, so the order does not matter
    let w: Vec<f32> = (0..n).map(|_| rng.range_i64(-8, 9) as f32 / 4.0).collect();
    let din = gpu.buf(&input);
    let dw = gpu.buf(&w);
    let count = |nbins: usize| -> Vec<u32> {
        let mut h = vec![0u32; nbins];
        for &v in &input {
            h[v as usize % nbins] += 1;
        }
        h
    };
    let fsum = |nbins: usize| -> Vec<f32> {
        let mut h = vec![0f32; nbins];
        for (&v, &x) in input.iter().zip(&w) {
            h[v as usize % nbins] += x;
        }
        h
    };

    let bins = gpu.zeros(37 * 4);
    gpu.run1d(
        &prog,
        "hist_global_inc",
        n,
        128,
        &[buf(&din), buf(&bins), Arg::U32(37), Arg::U32(n as u32)],
    );
    assert_slice_eq("hist_global_inc", &gpu.read::<u32>(&bins), &count(37));

    let bins = gpu.zeros(64 * 4);
    gpu.run(
        &prog,
        "hist_local",
        [4, 1, 1],
        [128, 1, 1],
        &[buf(&din), buf(&bins), Arg::U32(64), Arg::U32(n as u32)],
    );
    assert_slice_eq(
        "hist_local (LDS atomics)",
        &gpu.read::<u32>(&bins),
        &count(64),
    );

    let bins = gpu.zeros(16 * 4);
    gpu.run1d(
        &prog,
        "hist_cas_float",
        n,
        256,
        &[
            buf(&din),
            buf(&dw),
            buf(&bins),
            Arg::U32(16),
            Arg::U32(n as u32),
        ],
    );
    assert_slice_eq(
        "hist_cas_float (atomic_cmpxchg loop)",
        &gpu.read::<f32>(&bins),
        &fsum(16),
    );

    let (b1, b2) = (gpu.zeros(16 * 4), gpu.zeros(16 * 4));
    gpu.run1d(
        &prog,
        "hist_fadd",
        n,
        256,
        &[
            buf(&din),
            buf(&dw),
            buf(&b1),
            buf(&b2),
            Arg::U32(16),
            Arg::U32(n as u32),
        ],
    );
    assert_slice_eq("hist_fadd atomic_float", &gpu.read::<f32>(&b1), &fsum(16));
    assert_slice_eq(
        "hist_fadd global_atomic_add_f32",
        &gpu.read::<f32>(&b2),
        &fsum(16),
    );
}
per_target!(histograms, histograms);

fn tickets(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("atomics.cl", &[]);
    let (n, block) = (256usize, 64u32);
    let mut rng = Rng::new(31);
    let vals: Vec<i32> = (0..n).map(|_| rng.next_u32() as i32).collect();
    let counter = gpu.zeros(4);
    let (t, lt) = (gpu.zeros(n * 4), gpu.zeros(n * 4));
    let minmax = gpu.buf(&[i32::MIN, i32::MAX]);
    let orbits = gpu.zeros(16);
    let dv = gpu.buf(&vals);
    gpu.run1d(
        &prog,
        "tickets",
        n,
        block,
        &[
            buf(&counter),
            buf(&t),
            buf(&lt),
            buf(&minmax),
            buf(&orbits),
            buf(&dv),
        ],
    );
    assert_eq!(gpu.read::<u32>(&counter), vec![n as u32]);
    let mut got: Vec<u32> = gpu.read(&t);
    got.sort_unstable();
    assert_slice_eq(
        "global atomic_add return values are a permutation",
        &got,
        &(0..n as u32).collect::<Vec<_>>(),
    );
    let lt: Vec<u32> = gpu.read(&lt);
    for (g, chunk) in lt.chunks(block as usize).enumerate() {
        let mut c = chunk.to_vec();
        c.sort_unstable();
        assert_slice_eq(
            &format!("LDS atomic_inc return values, group {g}"),
            &c,
            &(0..block).collect::<Vec<_>>(),
        );
    }
    let want_mm = vec![*vals.iter().max().unwrap(), *vals.iter().min().unwrap()];
    assert_slice_eq("atomic_max/min", &gpu.read::<i32>(&minmax), &want_mm);
    let mut want_or = [0u32; 4];
    for i in 0..n {
        want_or[i % 4] |= 1 << (i % 32);
    }
    assert_slice_eq("atomic_or", &gpu.read::<u32>(&orbits), &want_or);
}
per_target!(atomic_return_values, tickets);
