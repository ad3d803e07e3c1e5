//! LDS reductions with many barriers, prefix scan, bitonic sort.

mod common;
use common::*;
use softgpu_exec::Arg;

fn reduce(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("reduce_lds.cl", &[]);
    let n = 3000usize;
    let mut rng = Rng::new(3);
    let u = rng.vec_u32(n);
    let f = rng.vec_f32(n, -1.0, 1.0);
    let groups = blocks(n, 256) as usize;
    let (du, df) = (gpu.buf(&u), gpu.buf(&f));
    let (ou, of) = (gpu.zeros(groups * 4), gpu.zeros(groups * 4));
    gpu.run1d(
        &prog,
        "reduce_u32",
        n,
        256,
        &[buf(&du), buf(&ou), Arg::U32(n as u32)],
    );
    gpu.run1d(
        &prog,
        "reduce_f32",
        n,
        256,
        &[buf(&df), buf(&of), Arg::U32(n as u32)],
    );
    let mut want_u = vec![];
    let mut want_f = vec![];
    for g in 0..groups {
        let lane = |i: usize| g * 256 + i;
        let mut su: Vec<u32> = (0..256)
            .map(|i| u.get(lane(i)).copied().unwrap_or(0))
            .collect();
        let mut sf: Vec<f32> = (0..256)
            .map(|i| f.get(lane(i)).copied().unwrap_or(0.0))
            .collect();
        let mut stride = 128;
        while stride > 0 {
            for i in 0..stride {
                su[i] = su[i].wrapping_add(su[i + stride]);
                sf[i] += sf[i + stride];
            }
            stride >>= 1;
        }
        want_u.push(su[0]);
        want_f.push(sf[0]);
    }
    assert_slice_eq("reduce_u32", &gpu.read::<u32>(&ou), &want_u);
    assert_slice_eq("reduce_f32 (tree order)", &gpu.read::<f32>(&of), &want_f);
}
per_target!(lds_tree_reduction, reduce);

fn barrier_rotate(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("reduce_lds.cl", &[]);
    let groups = 3usize;
    let rounds = 50u32;
    let mut rng = Rng::new(4);
    let data = rng.vec_u32(groups * 256);
    let d = gpu.buf(&data);
    gpu.run(
        &prog,
        "barrier_rotate",
        [groups as u32, 1, 1],
        [256, 1, 1],
        &[buf(&d), Arg::U32(rounds)],
    );
    let mut want = data.clone();
    for g in 0..groups {
        let s = &mut want[g * 256..(g + 1) * 256];
        for _ in 0..rounds {
            let old = s.to_vec();
            for (l, v) in s.iter_mut().enumerate() {
                *v = old[(l + 1) % 256].wrapping_add(l as u32);
            }
        }
    }
    assert_slice_eq("barrier_rotate", &gpu.read::<u32>(&d), &want);
}
per_target!(many_barriers, barrier_rotate);

fn scan(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("scan.cl", &[]);
    let n = 5000usize;
    const CHUNK: usize = 256;
    let chunks = n.div_ceil(CHUNK);
    assert!(chunks <= CHUNK);
    let mut rng = Rng::new(5);
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32() % 1000).collect();
    let din = gpu.buf(&input);
    let dout = gpu.zeros(n * 4);
    let totals = gpu.zeros(chunks * 4);
    let offsets = gpu.zeros(chunks * 4);
    let dummy = gpu.zeros(4);
    gpu.run(
        &prog,
        "scan_blocks",
        [chunks as u32, 1, 1],
        [128, 1, 1],
        &[buf(&din), buf(&dout), buf(&totals), Arg::U32(n as u32)],
    );
    gpu.run(
        &prog,
        "scan_blocks",
        [1, 1, 1],
        [128, 1, 1],
        &[
            buf(&totals),
            buf(&offsets),
            buf(&dummy),
            Arg::U32(chunks as u32),
        ],
    );
    gpu.run1d(
        &prog,
        "add_offsets",
        n,
        256,
        &[buf(&dout), buf(&offsets), Arg::U32(n as u32)],
    );
    let mut want = Vec::with_capacity(n);
    let mut acc = 0u32;
    for &v in &input {
        want.push(acc);
        acc += v;
    }
    assert_slice_eq("exclusive scan", &gpu.read::<u32>(&dout), &want);
    assert_eq!(gpu.read::<u32>(&dummy), vec![acc], "grand total");
}
per_target!(prefix_scan, scan);

fn bitonic(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("bitonic.cl", &[]);
    let n = 1024usize;
    let mut rng = Rng::new(6);
    let input: Vec<u32> = (0..n).map(|_| rng.next_u32() % 5000).collect(); // with duplicates
    let mut want = input.clone();
    want.sort_unstable();

    // Global version: one dispatch per (k, j) step.
    let d = gpu.buf(&input);
    let mut k = 2u32;
    while k as usize <= n {
        let mut j = k / 2;
        while j > 0 {
            gpu.run1d(
                &prog,
                "bitonic_step",
                n,
                128,
                &[buf(&d), Arg::U32(j), Arg::U32(k)],
            );
            j /= 2;
        }
        k *= 2;
    }
    assert_slice_eq("bitonic_step sort", &gpu.read::<u32>(&d), &want);

    // Local version: two independent 1024-element sorts, one per workgroup.
    let input2: Vec<u32> = (0..2 * n).map(|_| rng.next_u32()).collect();
    let d2 = gpu.buf(&input2);
    gpu.run(&prog, "bitonic_local", [2, 1, 1], [512, 1, 1], &[buf(&d2)]);
    let mut want2 = input2.clone();
    want2[..n].sort_unstable();
    want2[n..].sort_unstable();
    assert_slice_eq("bitonic_local sort", &gpu.read::<u32>(&d2), &want2);
}
per_target!(bitonic_sort, bitonic);
