//! Wave-level operations (DPP, ds_swizzle, permlanex16, sub-groups), wave64, WMMA.

mod common;
use common::*;
use half::f16;
use softgpu_exec::Arg;

fn wave_ops(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("wave_ops.cl", &[]);
    let n = 64usize; // one workgroup of two wave32s
    let mut rng = Rng::new(7);
    let input: Vec<i32> = (0..n).map(|_| rng.range_i64(-1000, 1000) as i32).collect();
    let din = gpu.buf(&input);
    let run = |name: &str, per: usize| -> Vec<i32> {
        let out = gpu.zeros(n * per * 4);
        gpu.run(
            &prog,
            name,
            [1, 1, 1],
            [n as u32, 1, 1],
            &[buf(&din), buf(&out)],
        );
        gpu.read(&out)
    };

    let want: Vec<i32> = (0..n)
        .map(|l| input[l / 16 * 16..][..16].iter().sum())
        .collect();
    assert_slice_eq("dpp_row_sum", &run("dpp_row_sum", 1), &want);

    let mut want = vec![];
    for l in 0..n {
        let (base, p) = (l / 16 * 16, l % 16);
        want.extend_from_slice(&[
            input[(l & !3) + (3 - l % 4)],
            if p >= 1 { input[l - 1] } else { 0 },
            if p >= 3 { input[l - 3] } else { -1 },
            input[base + (p + 16 - 5) % 16],
            input[base + 15 - p],
            input[(l & !7) + 7 - l % 8],
        ]);
    }
    assert_slice_eq(
        "dpp_controls (quad_perm, row_shr bc/no-bc, row_ror, row_mirror, row_half_mirror)",
        &run("dpp_controls", 6),
        &want,
    );

    let mut want = vec![];
    for l in 0..n {
        let (g, l32) = (l / 32 * 32, l % 32);
        want.extend_from_slice(&[
            input[g + (l32 ^ 1)],
            input[g + ((l32 & 0x18) | 3)],
            input[(l & !3) + [2, 3, 0, 1][l % 4]],
            input[g + (l32 ^ 0x1f)],
        ]);
    }
    assert_slice_eq("ds_swizzle", &run("swizzle", 4), &want);

    let want: Vec<i32> = (0..n)
        .map(|l| input[l / 32 * 32..][..32].iter().sum())
        .collect();
    assert_slice_eq(
        "wave_sum_dpp (dpp + permlanex16)",
        &run("wave_sum_dpp", 1),
        &want,
    );

    let mut want = vec![];
    for l in 0..n {
        let w = &input[l / 32 * 32..][..32];
        let p = l % 32;
        want.extend_from_slice(&[
            32,
            p as i32,
            w.iter().sum(),
            w[..=p].iter().sum(),
            w[5],
            *w.iter().max().unwrap(),
        ]);
    }
    assert_slice_eq("subgroup_ops (wave32)", &run("subgroup_ops", 6), &want);
}
/// On the RDNA parts: the kernels are wave32 and use RDNA's DPP row_xmask
/// and v_permlanex16 (gfx10 instructions, which clang-19 refuses for
/// CDNA); CDNA's cross-lane controls are held by the instruction cases
/// (`gfx9_dpp.txt`) and the demo's wave64 `wave_reduce`.
mod wave32_cross_lane {
    #[test]
    fn gfx1100() {
        super::wave_ops("gfx1100")
    }
    #[test]
    fn gfx1151() {
        super::wave_ops("gfx1151")
    }
    #[test]
    fn gfx1201() {
        super::wave_ops("gfx1201")
    }
    #[test]
    fn gfx1030() {
        super::wave_ops("gfx1030")
    }
}

fn wave64(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("wave64.cl", &["-mwavefrontsize64"]);
    let n = 256usize;
    let mut rng = Rng::new(8);
    let input: Vec<i32> = (0..n).map(|_| rng.range_i64(-1000, 1000) as i32).collect();
    let din = gpu.buf(&input);
    let out = gpu.zeros(n * 16);
    gpu.run(
        &prog,
        "wave64_subgroups",
        [1, 1, 1],
        [256, 1, 1],
        &[buf(&din), buf(&out)],
    );
    let mut want = vec![];
    for l in 0..n {
        let w = &input[l / 64 * 64..][..64];
        let p = l % 64;
        want.extend_from_slice(&[64, p as i32, w.iter().sum(), w[..=p].iter().sum()]);
    }
    assert_slice_eq("wave64_subgroups", &gpu.read::<i32>(&out), &want);

    let m = 1000usize;
    let u = rng.vec_u32(m);
    let (du, ou) = (gpu.buf(&u), gpu.zeros(blocks(m, 256) as usize * 4));
    gpu.run1d(
        &prog,
        "wave64_reduce",
        m,
        256,
        &[buf(&du), buf(&ou), Arg::U32(m as u32)],
    );
    let want: Vec<u32> = u
        .chunks(256)
        .map(|c| c.iter().fold(0u32, |a, &b| a.wrapping_add(b)))
        .collect();
    assert_slice_eq("wave64_reduce", &gpu.read::<u32>(&ou), &want);

    let x = rng.vec_f32(m, -5.0, 5.0);
    let y = rng.vec_f32(m, -5.0, 5.0);
    let (dx, dy) = (gpu.buf(&x), gpu.buf(&y));
    gpu.run1d(
        &prog,
        "wave64_saxpy",
        m,
        128,
        &[buf(&dy), buf(&dx), Arg::F32(-0.5), Arg::U32(m as u32)],
    );
    let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| -0.5 * x + y).collect();
    assert_slice_eq("wave64_saxpy", &gpu.read::<f32>(&dy), &want);
}
per_target!(wave64_kernels, wave64);

fn wmma_case(gpu: &Gpu, a: &[f32], b: &[f32], c: &[f32]) -> (Vec<f32>, Vec<f64>) {
    let prog = gpu.program("wmma.cl", &[]);
    let ah: Vec<u16> = a.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
    let bh: Vec<u16> = b.iter().map(|&v| f16::from_f32(v).to_bits()).collect();
    let (da, db, dc, dd) = (gpu.buf(&ah), gpu.buf(&bh), gpu.buf(c), gpu.zeros(256 * 4));
    gpu.run(
        &prog,
        "wmma_f16_16x16x16",
        [1, 1, 1],
        [32, 1, 1],
        &[buf(&da), buf(&db), buf(&dc), buf(&dd)],
    );
    let af: Vec<f64> = ah.iter().map(|&h| f16::from_bits(h).to_f64()).collect();
    let bf: Vec<f64> = bh.iter().map(|&h| f16::from_bits(h).to_f64()).collect();
    let mut want = vec![0f64; 256];
    for i in 0..16 {
        for j in 0..16 {
            want[i * 16 + j] = c[i * 16 + j] as f64
                + (0..16)
                    .map(|k| af[i * 16 + k] * bf[k * 16 + j])
                    .sum::<f64>();
        }
    }
    (gpu.read(&dd), want)
}

fn wmma(target: &str) {
    let gpu = Gpu::new(target);
    let mut rng = Rng::new(9);
    // Small integers: every product and sum is exact, whatever the order.
    let ints = |rng: &mut Rng, n: usize| -> Vec<f32> {
        (0..n).map(|_| rng.range_i64(-4, 5) as f32).collect()
    };
    let (a, b, c) = (
        ints(&mut rng, 256),
        ints(&mut rng, 256),
        ints(&mut rng, 256),
    );
    let (got, want) = wmma_case(&gpu, &a, &b, &c);
    let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    assert_slice_eq("wmma integers (exact)", &got, &want32);

    // Random halves: the hardware's summation order is unspecified, so allow
    // a small relative error against the f64 reference.
    let (a, b, c) = (
        rng.vec_f32(256, -2.0, 2.0),
        rng.vec_f32(256, -2.0, 2.0),
        rng.vec_f32(256, -2.0, 2.0),
    );
    let (got, want) = wmma_case(&gpu, &a, &b, &c);
    for i in 0..256 {
        let tol = 1e-5 * (1.0 + want[i].abs()) + 4.0 * f32::EPSILON as f64 * 16.0;
        assert!(
            (got[i] as f64 - want[i]).abs() <= tol,
            "wmma random [{}][{}]: got {} want {}",
            i / 16,
            i % 16,
            got[i],
            want[i]
        );
    }
}
/// On the parts with WMMA: RDNA2 (gfx1030) has no matrix instructions, and
/// clang-19 refuses the builtin for it.
mod wmma_16x16x16_f16 {
    #[test]
    fn gfx1100() {
        super::wmma("gfx1100")
    }
    #[test]
    fn gfx1151() {
        super::wmma("gfx1151")
    }
    #[test]
    fn gfx1201() {
        super::wmma("gfx1201")
    }
}

/// gfx12's split barrier across the waves of real workgroups: before it
/// signals, each wave reads the barrier's state, which names the group's
/// four waves as members (none can end before all pass the barrier) and
/// counts the signals of the waves that came first; the one wave that
/// found none is the one `s_barrier_signal_isfirst` calls first. Which wave
/// that is, is up to the schedule, on hardware too.
#[test]
fn barrier_isfirst_and_state_gfx1201() {
    let gpu = Gpu::new("gfx1201");
    let prog = gpu.program("wave_ops.cl", &[]);
    let (groups, block) = (6usize, 128usize);
    let states = gpu.zeros(groups * block * 4);
    gpu.run(
        &prog,
        "barrier_first_signal",
        [groups as u32, 1, 1],
        [block as u32, 1, 1],
        &[buf(&states)],
    );
    let states: Vec<u32> = gpu.read(&states);
    for (g, group) in states.chunks(block).enumerate() {
        let mut firsts = 0;
        for (i, &s) in group.iter().enumerate() {
            let (first, signals) = (s >> 31, s >> 16 & 0x7f);
            let (members, valid) = (s >> 4 & 0x7f, s & 1);
            assert!(
                valid == 1 && members == 4 && signals < 4 && (first == 1) == (signals == 0),
                "group {g} work-item {i}: barrier state {s:#x}"
            );
            firsts += (i % 32 == 0 && first == 1) as u32;
        }
        assert_eq!(firsts, 1, "group {g}: one wave signals first");
    }
}
