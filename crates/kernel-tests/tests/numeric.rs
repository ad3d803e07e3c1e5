//! Packed f16, 64-bit integer division, device-library transcendentals.

mod common;
use common::*;
use half::f16;
use softgpu_exec::Arg;

/// Random f16 with magnitude in [1/64, 16] and random sign (keeps every f16
/// sum/fma exact in f64 before the single final rounding).
fn rand_f16(rng: &mut Rng) -> f16 {
    let mag = 2f64.powf(rng.f64_in(-6.0, 4.0));
    f16::from_f64(if rng.chance(0.5) { -mag } else { mag })
}

fn half_ops(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("half.cl", &[]);
    let n = 300usize;
    let mut rng = Rng::new(20);
    let gen = |rng: &mut Rng, k: usize| -> Vec<f16> { (0..k).map(|_| rand_f16(rng)).collect() };
    let (a, b, c) = (
        gen(&mut rng, 2 * n),
        gen(&mut rng, 2 * n),
        gen(&mut rng, 2 * n),
    );
    let bits = |v: &[f16]| -> Vec<u16> { v.iter().map(|h| h.to_bits()).collect() };
    let (da, db, dc) = (gpu.buf(&bits(&a)), gpu.buf(&bits(&b)), gpu.buf(&bits(&c)));
    let out = gpu.zeros(n * 6 * 4);
    gpu.run1d(
        &prog,
        "half2_ops",
        n,
        64,
        &[buf(&da), buf(&db), buf(&dc), buf(&out), Arg::U32(n as u32)],
    );
    let got: Vec<u16> = gpu.read(&out);
    let r = |v: f64| f16::from_f64(v).to_bits();
    let mut want = vec![];
    for i in 0..n {
        let mut lanes = [[0u16; 2]; 6];
        for h in 0..2 {
            let (x, y, z) = (
                a[2 * i + h].to_f64(),
                b[2 * i + h].to_f64(),
                c[2 * i + h].to_f64(),
            );
            lanes[0][h] = r(x * y);
            lanes[1][h] = r(x + y);
            lanes[2][h] = r(x - y);
            lanes[3][h] = r(x * y + z); // exact in f64, one rounding
            lanes[4][h] = r(x.min(y));
            lanes[5][h] = r(x.max(y));
        }
        for l in lanes {
            want.extend_from_slice(&l);
        }
    }
    assert_slice_eq("half2_ops (f16 bits: mul add sub fma min max)", &got, &want);

    // half4 products and a sequential half sum.
    let (a4, b4) = (gen(&mut rng, 4 * n), gen(&mut rng, 4 * n));
    let (da4, db4) = (gpu.buf(&bits(&a4)), gpu.buf(&bits(&b4)));
    let (oh, of) = (gpu.zeros(n * 2), gpu.zeros(n * 4));
    gpu.run1d(
        &prog,
        "half4_dot",
        n,
        64,
        &[buf(&da4), buf(&db4), buf(&oh), buf(&of), Arg::U32(n as u32)],
    );
    let mut want_h = vec![];
    let mut want_f = vec![];
    for i in 0..n {
        let p: Vec<f16> = (0..4)
            .map(|k| f16::from_f64(a4[4 * i + k].to_f64() * b4[4 * i + k].to_f64()))
            .collect();
        let mut s = f16::from_f64(p[0].to_f64() + p[1].to_f64());
        s = f16::from_f64(s.to_f64() + p[2].to_f64());
        s = f16::from_f64(s.to_f64() + p[3].to_f64());
        want_h.push(s.to_bits());
        want_f.push(a4[4 * i].to_f32() * b4[4 * i].to_f32());
    }
    assert_slice_eq("half4_dot (f16 bits)", &gpu.read::<u16>(&oh), &want_h);
    assert_slice_eq("half4_dot f32 conversion", &gpu.read::<f32>(&of), &want_f);
}
per_target!(packed_f16, half_ops);

/// Random 64-bit value with a random magnitude and sign.
fn rand_i64(rng: &mut Rng) -> u64 {
    let shift = rng.below(64) as u32;
    let v = rng.next_u64() >> shift;
    if rng.chance(0.5) {
        v.wrapping_neg()
    } else {
        v
    }
}

fn int64(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("int64.cl", &[]);
    let n = 512usize;
    let mut rng = Rng::new(21);
    let mut a = vec![];
    let mut b = vec![];
    let mut b32 = vec![];
    for i in 0..n {
        let mut x = rand_i64(&mut rng);
        let mut y = rand_i64(&mut rng);
        if i < 8 {
            // edge cases
            x = [
                i64::MIN as u64,
                i64::MAX as u64,
                u64::MAX,
                0,
                1,
                7,
                (-7i64) as u64,
                1 << 32,
            ][i];
            y = [
                3,
                (-2i64) as u64,
                2,
                5,
                u64::MAX,
                (-2i64) as u64,
                2,
                (1 << 32) + 1,
            ][i];
        }
        if y == 0 || (x == i64::MIN as u64 && y == u64::MAX) {
            y = 3;
        }
        let mut y32 = rand_i64(&mut rng) as u32;
        if y32 == 0 || (x as u32 == i32::MIN as u32 && y32 == u32::MAX) {
            y32 = 5;
        }
        a.push(x);
        b.push(y);
        b32.push(y32);
    }
    let (da, db, db32) = (gpu.buf(&a), gpu.buf(&b), gpu.buf(&b32));
    let out = gpu.zeros(n * 8 * 8);
    gpu.run1d(
        &prog,
        "divmod64",
        n,
        64,
        &[
            buf(&da),
            buf(&db),
            buf(&db32),
            buf(&out),
            Arg::U32(n as u32),
        ],
    );
    let mut want = vec![];
    for i in 0..n {
        let (x, y, y32) = (a[i], b[i], b32[i]);
        let (sx, sy) = (x as i64, y as i64);
        let (x32, s32, sy32) = (x as u32, x as u32 as i32, y32 as i32);
        want.extend_from_slice(&[
            (sx / sy) as u64,
            (sx % sy) as u64,
            x / y,
            x % y,
            (s32 / sy32) as i64 as u64,
            (s32 % sy32) as i64 as u64,
            (x32 / y32) as u64,
            (x32 % y32) as u64,
        ]);
    }
    assert_slice_eq(
        "divmod64 [sdiv, srem, udiv, urem, sdiv32, srem32, udiv32, urem32]",
        &gpu.read::<u64>(&out),
        &want,
    );

    let out = gpu.zeros(n * 5 * 8);
    gpu.run1d(
        &prog,
        "mul64",
        n,
        64,
        &[buf(&da), buf(&db), buf(&out), Arg::U32(n as u32)],
    );
    let mut want = vec![];
    for i in 0..n {
        let (x, y) = (a[i], b[i]);
        want.extend_from_slice(&[
            x.wrapping_mul(y),
            ((x as u128 * y as u128) >> 64) as u64,
            ((x as i64 as i128 * y as i64 as i128) >> 64) as u64,
            (x << (y & 63)) ^ (x >> ((y >> 8) & 63)),
            ((x as i64) >> (y & 63)) as u64,
        ]);
    }
    assert_slice_eq(
        "mul64 [mul, mul_hi u, mul_hi s, shl^shr, ashr]",
        &gpu.read::<u64>(&out),
        &want,
    );
}
per_target!(int64_divmod_mul, int64);

/// One device-library function: id in math.cl, reference, input generator,
/// allowed error in ulp (f32, f64).
struct MathFn {
    id: i32,
    name: &'static str,
    reference: fn(f64, f64) -> f64,
    input: fn(&mut Rng) -> (f64, f64),
    ulp32: u64,
    ulp64: u64,
}

/// Log-uniform positive value in [2^lo, 2^hi).
fn logu(rng: &mut Rng, lo: f64, hi: f64) -> f64 {
    rng.f64_in(lo, hi).exp2()
}

/// Tolerances are the OpenCL 2.0 full-profile accuracy requirements (which
/// OCML meets); the f64 ones get +1 ulp because the reference (glibc libm via
/// Rust) is itself not always correctly rounded. f32 references are computed
/// in f64 and rounded, so they are accurate to 0.5 ulp.
fn math_fns() -> Vec<MathFn> {
    vec![
        MathFn {
            id: 0,
            name: "sin",
            reference: |x, _| x.sin(),
            input: |r| (r.f64_in(-20.0, 20.0), 0.0),
            ulp32: 4,
            ulp64: 5,
        },
        MathFn {
            id: 1,
            name: "cos",
            reference: |x, _| x.cos(),
            input: |r| (r.f64_in(-20.0, 20.0), 0.0),
            ulp32: 4,
            ulp64: 5,
        },
        MathFn {
            id: 2,
            name: "tan",
            reference: |x, _| x.tan(),
            input: |r| (r.f64_in(-20.0, 20.0), 0.0),
            ulp32: 5,
            ulp64: 6,
        },
        MathFn {
            id: 3,
            name: "exp",
            reference: |x, _| x.exp(),
            input: |r| (r.f64_in(-80.0, 80.0), 0.0),
            ulp32: 3,
            ulp64: 4,
        },
        MathFn {
            id: 4,
            name: "exp2",
            reference: |x, _| x.exp2(),
            input: |r| (r.f64_in(-120.0, 120.0), 0.0),
            ulp32: 3,
            ulp64: 4,
        },
        MathFn {
            id: 5,
            name: "log",
            reference: |x, _| x.ln(),
            input: |r| (logu(r, -100.0, 100.0), 0.0),
            ulp32: 3,
            ulp64: 4,
        },
        MathFn {
            id: 6,
            name: "log2",
            reference: |x, _| x.log2(),
            input: |r| (logu(r, -100.0, 100.0), 0.0),
            ulp32: 3,
            ulp64: 4,
        },
        MathFn {
            id: 7,
            name: "pow",
            reference: |x, y| x.powf(y),
            input: |r| (r.f64_in(0.01, 10.0), r.f64_in(-15.0, 15.0)),
            ulp32: 16,
            ulp64: 17,
        },
        MathFn {
            id: 8,
            name: "sqrt",
            reference: |x, _| x.sqrt(),
            input: |r| (logu(r, -100.0, 100.0), 0.0),
            ulp32: 3,
            ulp64: 0,
        },
        MathFn {
            id: 9,
            name: "tanh",
            reference: |x, _| x.tanh(),
            input: |r| (r.f64_in(-10.0, 10.0), 0.0),
            ulp32: 5,
            ulp64: 6,
        },
        MathFn {
            id: 10,
            name: "atan2",
            reference: |x, y| x.atan2(y),
            input: |r| (r.f64_in(-10.0, 10.0), r.f64_in(-10.0, 10.0)),
            ulp32: 6,
            ulp64: 7,
        },
        MathFn {
            id: 11,
            name: "cbrt",
            reference: |x, _| x.cbrt(),
            input: |r| (r.f64_in(-1e6, 1e6), 0.0),
            ulp32: 2,
            ulp64: 3,
        },
        MathFn {
            id: 12,
            name: "asin",
            reference: |x, _| x.asin(),
            input: |r| (r.f64_in(-1.0, 1.0), 0.0),
            ulp32: 4,
            ulp64: 5,
        },
        MathFn {
            id: 13,
            name: "sinh",
            reference: |x, _| x.sinh(),
            input: |r| (r.f64_in(-40.0, 40.0), 0.0),
            ulp32: 4,
            ulp64: 5,
        },
        MathFn {
            id: 14,
            name: "log1p",
            reference: |x, _| x.ln_1p(),
            input: |r| (logu(r, -30.0, 30.0) - 0.5, 0.0),
            ulp32: 2,
            ulp64: 3,
        },
        MathFn {
            id: 15,
            name: "expm1",
            reference: |x, _| x.exp_m1(),
            input: |r| (r.f64_in(-20.0, 40.0), 0.0),
            ulp32: 3,
            ulp64: 4,
        },
        MathFn {
            id: 16,
            name: "rsqrt",
            reference: |x, _| 1.0 / x.sqrt(),
            input: |r| (logu(r, -60.0, 60.0), 0.0),
            ulp32: 2,
            ulp64: 3,
        },
        MathFn {
            id: 17,
            name: "hypot",
            reference: |x, y| x.hypot(y),
            input: |r| (r.f64_in(-1e3, 1e3), r.f64_in(-1e3, 1e3)),
            ulp32: 4,
            ulp64: 5,
        },
    ]
}

fn math(target: &str) {
    let gpu = Gpu::new(target);
    let prog = gpu.program("math.cl", &[]);
    let n = 256usize;
    let mut rng = Rng::new(22);
    let mut failures = vec![];
    for f in math_fns() {
        let inputs: Vec<(f64, f64)> = (0..n).map(|_| (f.input)(&mut rng)).collect();
        // f32: inputs rounded to f32 first, reference in f64 then rounded.
        let x32: Vec<f32> = inputs.iter().map(|p| p.0 as f32).collect();
        let y32: Vec<f32> = inputs.iter().map(|p| p.1 as f32).collect();
        let out = gpu.zeros(n * 4);
        gpu.run1d(
            &prog,
            "math_f32",
            n,
            64,
            &[
                buf(&gpu.buf(&x32)),
                buf(&gpu.buf(&y32)),
                buf(&out),
                Arg::I32(f.id),
                Arg::U32(n as u32),
            ],
        );
        let got: Vec<f32> = gpu.read(&out);
        let want: Vec<f32> = (0..n)
            .map(|i| (f.reference)(x32[i] as f64, y32[i] as f64) as f32)
            .collect();
        if let Err(e) = std::panic::catch_unwind(|| {
            assert_ulp_f32(&format!("{} f32", f.name), &got, &want, f.ulp32)
        }) {
            failures.push(panic_text(e));
        }
        let x64: Vec<f64> = inputs.iter().map(|p| p.0).collect();
        let y64: Vec<f64> = inputs.iter().map(|p| p.1).collect();
        let out = gpu.zeros(n * 8);
        gpu.run1d(
            &prog,
            "math_f64",
            n,
            64,
            &[
                buf(&gpu.buf(&x64)),
                buf(&gpu.buf(&y64)),
                buf(&out),
                Arg::I32(f.id),
                Arg::U32(n as u32),
            ],
        );
        let got: Vec<f64> = gpu.read(&out);
        let want: Vec<f64> = (0..n).map(|i| (f.reference)(x64[i], y64[i])).collect();
        if let Err(e) = std::panic::catch_unwind(|| {
            assert_ulp_f64(&format!("{} f64", f.name), &got, &want, f.ulp64)
        }) {
            failures.push(panic_text(e));
        }
    }
    assert!(
        failures.is_empty(),
        "{} math failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
per_target!(device_library_math, math);

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}
