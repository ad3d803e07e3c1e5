//! VOPC: vector compares (and `v_cmpx`, which writes EXEC instead) and
//! float class tests. The result is a lane mask; inactive lanes read 0.

use softgpu_isa::Inst;

use super::float::{d, f, h};
use super::valu::{fetch, fetch64};
use super::{Env, Exec, Flow, Result};
use crate::wave::{Wave, MAX_LANES};

#[inline(always)]
fn cmp32(w: &mut Wave, i: &Inst, pred: impl Fn(u32, u32) -> bool) -> Result {
    let info = i.op.info();
    let (mut b0, mut b1) = ([0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = fetch(w, i, 0, info.src[0], &mut b0);
    let b = fetch(w, i, 1, info.src[1], &mut b1);
    let mut bits = 0u64;
    for l in 0..w.lanes {
        bits |= (pred(a[l], b[l]) as u64) << l;
    }
    let mask = super::valu::write_mask(w, i);
    w.write_mask(i.dst[0], bits & mask);
    Ok(Flow::Next)
}

#[inline(always)]
fn cmp64(w: &mut Wave, i: &Inst, pred: impl Fn(u64, u64) -> bool) -> Result {
    let info = i.op.info();
    let (mut a, mut b) = ([0u64; MAX_LANES], [0u64; MAX_LANES]);
    fetch64(w, i, 0, info.src[0], &mut a);
    fetch64(w, i, 1, info.src[1], &mut b);
    let mut bits = 0u64;
    for l in 0..w.lanes {
        bits |= (pred(a[l], b[l]) as u64) << l;
    }
    let mask = w.exec();
    w.write_mask(i.dst[0], bits & mask);
    Ok(Flow::Next)
}

/// The IEEE class of a value as the bit index `v_cmp_class` tests.
fn class_bit(nan: bool, quiet: bool, inf: bool, zero: bool, denorm: bool, neg: bool) -> u32 {
    if nan {
        return if quiet { 1 } else { 0 };
    }
    let k = if inf {
        2
    } else if zero {
        5
    } else if denorm {
        4
    } else {
        3
    };
    if neg {
        k
    } else {
        9 - k + 2
    }
}

fn class32(x: u32, mask: u32) -> bool {
    let v = f(x);
    let bit = class_bit(
        v.is_nan(),
        x & 0x0040_0000 != 0,
        v.is_infinite(),
        v == 0.0,
        v.is_subnormal(),
        x >> 31 != 0,
    );
    mask >> bit & 1 != 0
}

fn class16(x: u32, mask: u32) -> bool {
    let v = h(x);
    let bit = class_bit(
        v.is_nan(),
        x & 0x200 != 0,
        v.is_infinite(),
        v == 0.0,
        x & 0x7c00 == 0 && x & 0x3ff != 0,
        x & 0x8000 != 0,
    );
    mask >> bit & 1 != 0
}

fn class64(x: u64, mask: u64) -> bool {
    let v = d(x);
    let bit = class_bit(
        v.is_nan(),
        x & 0x0008_0000_0000_0000 != 0,
        v.is_infinite(),
        v == 0.0,
        v.is_subnormal(),
        x >> 63 != 0,
    );
    mask >> bit & 1 != 0
}

macro_rules! float_cmps {
    ($suffix:literal, $cmp:ident, $conv:expr) => {
        [
            (
                concat!("v_cmp_f_", $suffix),
                concat!("v_cmpx_f_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| false)) as Exec,
            ),
            (
                concat!("v_cmp_lt_", $suffix),
                concat!("v_cmpx_lt_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) < $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_eq_", $suffix),
                concat!("v_cmpx_eq_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) == $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_le_", $suffix),
                concat!("v_cmpx_le_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) <= $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_gt_", $suffix),
                concat!("v_cmpx_gt_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) > $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_lg_", $suffix),
                concat!("v_cmpx_lg_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| {
                        let (x, y) = ($conv(a), $conv(b));
                        x < y || x > y
                    })
                }) as Exec,
            ),
            (
                concat!("v_cmp_ge_", $suffix),
                concat!("v_cmpx_ge_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) >= $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_o_", $suffix),
                concat!("v_cmpx_o_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| !$conv(a).is_nan() && !$conv(b).is_nan())
                }) as Exec,
            ),
            (
                concat!("v_cmp_u_", $suffix),
                concat!("v_cmpx_u_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| $conv(a).is_nan() || $conv(b).is_nan())
                }) as Exec,
            ),
            (
                concat!("v_cmp_nge_", $suffix),
                concat!("v_cmpx_nge_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) >= $conv(b))))
                    as Exec,
            ),
            (
                concat!("v_cmp_nlg_", $suffix),
                concat!("v_cmpx_nlg_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| {
                        let (x, y) = ($conv(a), $conv(b));
                        !(x < y || x > y)
                    })
                }) as Exec,
            ),
            (
                concat!("v_cmp_ngt_", $suffix),
                concat!("v_cmpx_ngt_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) > $conv(b))))
                    as Exec,
            ),
            (
                concat!("v_cmp_nle_", $suffix),
                concat!("v_cmpx_nle_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) <= $conv(b))))
                    as Exec,
            ),
            (
                concat!("v_cmp_neq_", $suffix),
                concat!("v_cmpx_neq_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) != $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_nlt_", $suffix),
                concat!("v_cmpx_nlt_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) < $conv(b))))
                    as Exec,
            ),
            (
                concat!("v_cmp_t_", $suffix),
                concat!("v_cmpx_t_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| true)) as Exec,
            ),
        ]
    };
}

macro_rules! int_cmps {
    ($suffix:literal, $cmp:ident, $conv:expr) => {
        [
            (
                concat!("v_cmp_f_", $suffix),
                concat!("v_cmpx_f_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| false)) as Exec,
            ),
            (
                concat!("v_cmp_lt_", $suffix),
                concat!("v_cmpx_lt_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) < $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_eq_", $suffix),
                concat!("v_cmpx_eq_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) == $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_le_", $suffix),
                concat!("v_cmpx_le_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) <= $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_gt_", $suffix),
                concat!("v_cmpx_gt_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) > $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_ne_", $suffix),
                concat!("v_cmpx_ne_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) != $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_ge_", $suffix),
                concat!("v_cmpx_ge_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) >= $conv(b)))
                    as Exec,
            ),
            (
                concat!("v_cmp_t_", $suffix),
                concat!("v_cmpx_t_", $suffix),
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| true)) as Exec,
            ),
        ]
    };
}

fn f32v(x: u32) -> f32 {
    f(x)
}
fn f16v(x: u32) -> f32 {
    h(x)
}
fn f64v(x: u64) -> f64 {
    d(x)
}

type Entry = (&'static str, &'static str, Exec);

const F16: [Entry; 16] = float_cmps!("f16", cmp32, f16v);
const F32: [Entry; 16] = float_cmps!("f32", cmp32, f32v);
const F64: [Entry; 16] = float_cmps!("f64", cmp64, f64v);
const I16: [Entry; 8] = int_cmps!("i16", cmp32, |x: u32| x as i16);
const U16: [Entry; 8] = int_cmps!("u16", cmp32, |x: u32| x as u16);
const I32: [Entry; 8] = int_cmps!("i32", cmp32, |x: u32| x as i32);
const U32: [Entry; 8] = int_cmps!("u32", cmp32, |x: u32| x);
const I64: [Entry; 8] = int_cmps!("i64", cmp64, |x: u64| x as i64);
const U64: [Entry; 8] = int_cmps!("u64", cmp64, |x: u64| x);

const CLASS: [Entry; 3] = [
    (
        "v_cmp_class_f32",
        "v_cmpx_class_f32",
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp32(w, i, class32)) as Exec,
    ),
    (
        "v_cmp_class_f16",
        "v_cmpx_class_f16",
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp32(w, i, class16)) as Exec,
    ),
    (
        "v_cmp_class_f64",
        "v_cmpx_class_f64",
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp64(w, i, class64)) as Exec,
    ),
];

/// Every compare, under both its `v_cmp` and `v_cmpx` names (the decoder
/// points a cmpx's destination at EXEC, so one handler serves both).
pub fn entries() -> impl Iterator<Item = (&'static str, Exec)> {
    [
        &F16[..],
        &F32,
        &F64,
        &I16,
        &U16,
        &I32,
        &U32,
        &I64,
        &U64,
        &CLASS,
    ]
    .into_iter()
    .flatten()
    .flat_map(|&(cmp, cmpx, exec)| [(cmp, exec), (cmpx, exec)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_classes() {
        assert!(class32(f32::NAN.to_bits(), 1 << 1));
        assert!(class32(f32::NEG_INFINITY.to_bits(), 1 << 2));
        assert!(class32((-1.0f32).to_bits(), 1 << 3));
        assert!(class32((-0.0f32).to_bits(), 1 << 5));
        assert!(class32(0.0f32.to_bits(), 1 << 6));
        assert!(class32(1e-40f32.to_bits(), 1 << 7));
        assert!(class32(1.0f32.to_bits(), 1 << 8));
        assert!(class32(f32::INFINITY.to_bits(), 1 << 9));
    }
}
