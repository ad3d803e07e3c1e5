//! Private arrays indexed dynamically; non-inlined, recursive and indirect calls (HIP).

mod common;
use common::*;
use softgpu_exec::{Arg, Program};

fn private_arrays(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("private_array.cl", &[]);
    let n = 200usize;
    let mut rng = Rng::new(40);
    let idx = rng.vec_u32(n);
    let vals = rng.vec_u32(n);
    let out = gpu.zeros(n * 4);
    gpu.run1d(
        &prog,
        "private_small",
        n,
        64,
        &[
            buf(&gpu.buf(&idx)),
            buf(&gpu.buf(&vals)),
            buf(&out),
            Arg::U32(n as u32),
        ],
    );
    let want: Vec<u32> = (0..n)
        .map(|i| {
            let mut a: Vec<u32> = (0..16u32)
                .map(|k| vals[i].wrapping_mul(k + 1).wrapping_add(k))
                .collect();
            let j = idx[i] as usize;
            a[j & 15] ^= 0xdeadbeef;
            a[(j >> 4) & 15] = a[(j >> 4) & 15].wrapping_add(7);
            a[(j >> 8) & 15].wrapping_add(a[(j >> 12) & 15].wrapping_mul(3))
        })
        .collect();
    assert_slice_eq("private_small", &gpu.read::<u32>(&out), &want);

    let n = 100usize;
    let seed = rng.vec_u32(n);
    let out = gpu.zeros(n * 4);
    gpu.run1d(
        &prog,
        "private_large",
        n,
        32,
        &[buf(&gpu.buf(&seed)), buf(&out), Arg::U32(n as u32)],
    );
    let want: Vec<u32> = seed
        .iter()
        .map(|&sd| {
            let mut a = [0u32; 200];
            let mut s = sd;
            for v in a.iter_mut() {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                *v = s;
            }
            let (mut acc, mut p) = (0u32, (sd % 200) as usize);
            for _ in 0..300 {
                acc = acc.wrapping_add(a[p]);
                a[(p * 7 + 3) % 200] ^= acc;
                p = (a[p] % 200) as usize;
            }
            acc
        })
        .collect();
    assert_slice_eq("private_large (scratch)", &gpu.read::<u32>(&out), &want);
}
per_target!(private_arrays, private_arrays);

fn rec_sum(n: u32, acc: u32) -> u32 {
    if n == 0 {
        return acc;
    }
    let local = [n, n.wrapping_mul(3), n ^ acc, acc.wrapping_add(1)];
    rec_sum(
        n - 1,
        acc.wrapping_mul(31).wrapping_add(local[(n & 3) as usize]),
    )
}

fn fib(n: u32) -> u32 {
    if n < 2 {
        n
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn op(s: u32, a: u32, b: u32) -> u32 {
    match s & 3 {
        0 => a.wrapping_add(b),
        1 => a.wrapping_mul(b),
        2 => a ^ b.rotate_left(7),
        _ => rec_sum(b & 7, a),
    }
}

fn calls(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("calls.hip", &[]);
    calls_in(&gpu, &prog);
}
per_target!(recursive_and_indirect_calls, calls);

/// A code object whose text is too large to decode at load is decoded a
/// kernel at a time (rocBLAS's Tensile library: 170 MB of text): each
/// kernel's program holds its own function and every non-kernel function,
/// which its direct and indirect calls reach.
#[test]
fn calls_run_alike_when_each_kernel_is_decoded_at_its_first_dispatch() {
    let gpu = Gpu::new("gfx1151");
    let code = compile_kernel("calls.hip", "gfx1151", &[]);
    let prog = gpu.dev.load_lazily(&code).expect("load");
    let whole = prog.whole_text().slots().len();
    for k in &prog.code_object.kernels {
        let own = prog.for_kernel(k);
        assert!(
            own.slots().len() < whole,
            "{}: decoded every kernel's code ({} slots)",
            k.name,
            own.slots().len()
        );
        assert!(std::ptr::eq(own, prog.for_kernel(k)), "decoded once");
    }
    calls_in(&gpu, &prog);
}

fn calls_in(gpu: &Gpu, prog: &Program) {
    let n = 100usize;
    let mut rng = Rng::new(41);
    let input = rng.vec_u32(n);
    let (o1, o2) = (gpu.zeros(n * 4), gpu.zeros(n * 4));
    gpu.run1d(
        prog,
        "_Z9recursivePKjPjS1_i",
        n,
        64,
        &[
            buf(&gpu.buf(&input)),
            buf(&o1),
            buf(&o2),
            Arg::I32(n as i32),
        ],
    );
    let want1: Vec<u32> = input.iter().map(|&v| rec_sum(v % 40, v)).collect();
    let want2: Vec<u32> = input.iter().map(|&v| fib(v % 12)).collect();
    assert_slice_eq("recursive rec_sum", &gpu.read::<u32>(&o1), &want1);
    assert_slice_eq("recursive fib", &gpu.read::<u32>(&o2), &want2);

    let sel = rng.vec_u32(n);
    let (a, b) = (rng.vec_u32(n), rng.vec_u32(n));
    let (ds, da, db) = (gpu.buf(&sel), gpu.buf(&a), gpu.buf(&b));
    let out = gpu.zeros(n * 4);
    gpu.run1d(
        prog,
        "_Z14indirect_tablePKjS0_S0_Pji",
        n,
        64,
        &[buf(&ds), buf(&da), buf(&db), buf(&out), Arg::I32(n as i32)],
    );
    let want: Vec<u32> = (0..n).map(|i| op(sel[i], a[i], b[i])).collect();
    assert_slice_eq(
        "indirect_table (function pointers in global memory)",
        &gpu.read::<u32>(&out),
        &want,
    );

    let out = gpu.zeros(n * 4);
    gpu.run1d(
        prog,
        "_Z15indirect_selectPKjS0_S0_Pji",
        n,
        64,
        &[buf(&ds), buf(&da), buf(&db), buf(&out), Arg::I32(n as i32)],
    );
    let want: Vec<u32> = (0..n)
        .map(|i| op(sel[i], op(sel[i], a[i], b[i]), b[i]))
        .collect();
    assert_slice_eq(
        "indirect_select (divergent indirect calls)",
        &gpu.read::<u32>(&out),
        &want,
    );
}
