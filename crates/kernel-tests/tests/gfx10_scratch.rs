//! gfx10 (RDNA2) private memory: LLVM reaches scratch on gfx10 with MUBUF
//! instructions through the private segment buffer (`buffer_store_dword
//! v1, off, s[0:3], 0 offset:4`, `buffer_load_dword v0, v1, s[0:3], 0
//! offen`, the stack pointer in SOFFSET), which the launch fills with a
//! V# swizzled by lane; the executor routes those accesses to each lane's
//! own private memory. Run in wave32 and wave64 (`-mwavefrontsize64`,
//! whose V# has an index stride of 64), checked against the host.

mod common;
use common::*;
use softgpu_exec::Arg;

const TARGET: &str = "gfx1030";

/// The host's `walk` of `gfx10_scratch.cl`.
fn walk(seed: u32, steps: u32) -> u32 {
    let mut a = [0u32; 48];
    let mut s = seed;
    for v in a.iter_mut() {
        s = s.wrapping_mul(1664525).wrapping_add(1013904223);
        *v = s;
    }
    let (mut acc, mut p) = (0u32, (seed % 48) as usize);
    for _ in 0..steps {
        acc = acc.wrapping_add(a[p]);
        a[(p * 5 + 1) % 48] ^= acc;
        p = (a[p] % 48) as usize;
    }
    acc
}

/// The host's `mixed`: one `rec` as (bytes, short, word, 64-bit, 128-bit).
fn mixed(input: &[u32], i: usize) -> u32 {
    #[derive(Clone, Copy)]
    struct Rec {
        b: [u8; 3],
        h: u16,
        w: u32,
        d: u64,
        q: [u32; 4],
    }
    let n = input.len();
    let mut r: Vec<Rec> = (0..12)
        .map(|k| {
            let v = input[(i + k) % n];
            Rec {
                b: [v as u8, (v >> 8) as u8, (v >> 16) as u8],
                h: (v >> 3) as u16,
                w: v.wrapping_mul(3),
                d: (v as u64) << 20 | k as u64,
                q: [
                    v,
                    v.wrapping_add(1),
                    v.wrapping_add(2),
                    v.wrapping_add(k as u32),
                ],
            }
        })
        .collect();
    let (j, m) = ((input[i] % 12) as usize, ((input[i] >> 4) % 12) as usize);
    r[m].w = r[m].w.wrapping_add(5);
    r[m].q[1] ^= 0xff;
    r[m].b[1] = r[m].b[1].wrapping_add(1);
    let (s, t) = (r[j], r[(j + m) % 12]);
    [
        s.b[0] as u32,
        (s.b[1] as u32) * 3,
        (s.b[2] as u32) * 5,
        (s.h as u32) * 7,
        s.w,
        (s.d >> 7) as u32,
        s.d as u32,
        s.q[0],
        s.q[3].wrapping_mul(11),
        t.w,
        t.q[1],
        t.b[1] as u32,
        walk(input[i], 20 + (i % 7) as u32),
    ]
    .into_iter()
    .fold(0u32, |a, x| a.wrapping_add(x))
}

fn run(flags: &[&str], block: u32) {
    let gpu = Gpu::new(TARGET);
    let prog = gpu.program("gfx10_scratch.cl", flags);
    let n = 300usize;
    let input = Rng::new(1030).vec_u32(n);
    let out = gpu.zeros(n * 4);
    gpu.run1d(
        &prog,
        "mixed",
        n,
        block,
        &[buf(&gpu.buf(&input)), buf(&out), Arg::U32(n as u32)],
    );
    let want: Vec<u32> = (0..n).map(|i| mixed(&input, i)).collect();
    assert_slice_eq(&format!("mixed {flags:?}"), &gpu.read::<u32>(&out), &want);
}

#[test]
fn mubuf_scratch_wave32() {
    run(&[], 64);
}

#[test]
fn mubuf_scratch_wave64() {
    run(&["-mwavefrontsize64"], 128);
}

/// -O0 keeps every local in scratch, loads and stores through VGPR
/// offsets (`offen`) as well as immediate ones.
#[test]
fn mubuf_scratch_o0() {
    run(&["-O0"], 64);
    run(&["-O0", "-mwavefrontsize64"], 64);
}
