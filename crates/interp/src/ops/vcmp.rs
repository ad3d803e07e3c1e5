//! VOPC: vector compares (and `v_cmpx`, which writes EXEC instead) and
//! float class tests. The result is a lane mask; inactive lanes read 0.

use softgpu_isa::{sreg, Cond, Implicit, Inst, Num, Operand, Ty};

use super::valu::{fetch, fetch64};
use super::{Env, Exec, Flow, Result};
use crate::float::{d, f, flush16, flush32, flush64, h};
use crate::wave::{Wave, MAX_LANES};

/// How a compare reads its two sources.
///
/// The shared fetch applies DPP, OP_SEL half selection and abs/neg; its own
/// f32/f64 denormal flush is skipped (f32 and f64 sources are fetched as
/// raw bits) because a compare has only inputs and MODE can flush those
/// alone: FP_DENORM 0 (flush in and out) and 2 (flush in only) make an
/// input denormal read as a zero of its sign, 1 (flush out only) and 3 keep
/// it. The class tests never flush: they classify the bits as given.
#[derive(Clone, Copy, PartialEq)]
enum Src {
    /// Integers: no modifiers, no flushing.
    Int,
    F16,
    F32,
    F64,
    /// `v_cmp_class_*`: src0 with abs/neg but unflushed, src1 the mask.
    Class,
}

/// MODE flushes input denormals for the FP_DENORM field at `shift`
/// (4: f32, 6: f16 and f64).
fn flushes_inputs(w: &Wave, shift: u32) -> bool {
    (w.mode.bits >> shift) & 1 == 0
}

/// Writes a compare's lane mask to its destination. A `v_cmpx` whose
/// destination is not EXEC (GFX9's, which write VCC or their sdst as well
/// as EXEC: GFX9 ISA guide, VOPC "V_CMPX: write the result to VCC or sdst
/// and to EXEC") also writes EXEC; gfx10+'s decode with EXEC there.
#[inline(always)]
fn write_result(w: &mut Wave, i: &Inst, bits: u64) {
    w.write_mask(i.dst[0], bits);
    let exec = Operand::Sgpr(sreg::EXEC_LO);
    if i.dst[0] != exec && i.op.info().implicit.has(Implicit::WRITES_EXEC) {
        w.set_exec(bits);
    }
}

#[inline(always)]
fn cmp32(w: &mut Wave, i: &Inst, src: Src, pred: impl Fn(u32, u32) -> bool) -> Result {
    let info = i.op.info();
    let ty = |k: usize| match (src, k) {
        // Raw bits: no flush by the fetch (see [`Src`]).
        (Src::F32, _) | (Src::Class, 0) if info.src[k] == Ty::F32 => Ty::B32,
        // A class test's f16 source likewise (B16 keeps OP_SEL and the
        // 16-bit sign for abs/neg; F16 would flush it).
        (Src::Class, 0) if info.src[k] == Ty::F16 => Ty::B16,
        // The f16 class mask is a 16-bit operand too: OP_SEL may pick
        // its high half.
        (Src::Class, 1) if info.src[0] == Ty::F16 => Ty::B16,
        _ => info.src[k],
    };
    let (mut b0, mut b1) = ([0u32; MAX_LANES], [0u32; MAX_LANES]);
    let a = fetch(w, i, 0, ty(0), &mut b0);
    let b = fetch(w, i, 1, ty(1), &mut b1);
    let flush: Option<fn(u32) -> u32> = match src {
        Src::F16 if flushes_inputs(w, 6) => Some(flush16),
        Src::F32 if flushes_inputs(w, 4) => Some(flush32),
        _ => None,
    };
    let mut bits = 0u64;
    for l in 0..w.lanes {
        let (x, y) = match flush {
            Some(fl) => (fl(a[l]), fl(b[l])),
            None => (a[l], b[l]),
        };
        bits |= (pred(x, y) as u64) << l;
    }
    let mask = super::valu::write_mask(w, i);
    write_result(w, i, bits & mask);
    Ok(Flow::Next)
}

#[inline(always)]
fn cmp64(w: &mut Wave, i: &Inst, src: Src, pred: impl Fn(u64, u64) -> bool) -> Result {
    let info = i.op.info();
    let (mut a, mut b) = ([0u64; MAX_LANES], [0u64; MAX_LANES]);
    // f64 sources come as raw bits (see [`Src`]); abs/neg are applied here.
    let raw = |ty: Ty| if ty == Ty::F64 { Ty::B64 } else { ty };
    fetch64(w, i, 0, raw(info.src[0]), &mut a);
    fetch64(w, i, 1, raw(info.src[1]), &mut b);
    let n = w.lanes;
    for (k, v) in [&mut a, &mut b].into_iter().enumerate() {
        if info.src[k] != Ty::F64 {
            continue;
        }
        let bit = 1u8 << k;
        let sign = 1u64 << 63;
        let flush = src == Src::F64 && flushes_inputs(w, 6);
        for x in &mut v[..n] {
            if i.mods.abs & bit != 0 {
                *x &= !sign;
            }
            if i.mods.neg & bit != 0 {
                *x ^= sign;
            }
            if flush {
                *x = flush64(*x);
            }
        }
    }
    let mut bits = 0u64;
    for l in 0..n {
        bits |= (pred(a[l], b[l]) as u64) << l;
    }
    let mask = w.exec();
    write_result(w, i, bits & mask);
    Ok(Flow::Next)
}

fn cmp_f16(w: &mut Wave, i: &Inst, pred: impl Fn(u32, u32) -> bool) -> Result {
    cmp32(w, i, Src::F16, pred)
}
fn cmp_f32(w: &mut Wave, i: &Inst, pred: impl Fn(u32, u32) -> bool) -> Result {
    cmp32(w, i, Src::F32, pred)
}
fn cmp_f64(w: &mut Wave, i: &Inst, pred: impl Fn(u64, u64) -> bool) -> Result {
    cmp64(w, i, Src::F64, pred)
}
fn cmp_int(w: &mut Wave, i: &Inst, pred: impl Fn(u32, u32) -> bool) -> Result {
    cmp32(w, i, Src::Int, pred)
}
fn cmp_int64(w: &mut Wave, i: &Inst, pred: impl Fn(u64, u64) -> bool) -> Result {
    cmp64(w, i, Src::Int, pred)
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
    ($cmp:ident, $conv:expr) => {
        [
            (
                Cond::F,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| false)) as Exec,
            ),
            (
                Cond::Lt,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) < $conv(b)))
                    as Exec,
            ),
            (
                Cond::Eq,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) == $conv(b)))
                    as Exec,
            ),
            (
                Cond::Le,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) <= $conv(b)))
                    as Exec,
            ),
            (
                Cond::Gt,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) > $conv(b)))
                    as Exec,
            ),
            (
                Cond::Lg,
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| {
                        let (x, y) = ($conv(a), $conv(b));
                        x < y || x > y
                    })
                }) as Exec,
            ),
            (
                Cond::Ge,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) >= $conv(b)))
                    as Exec,
            ),
            (
                Cond::O,
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| !$conv(a).is_nan() && !$conv(b).is_nan())
                }) as Exec,
            ),
            (
                Cond::U,
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| $conv(a).is_nan() || $conv(b).is_nan())
                }) as Exec,
            ),
            (
                Cond::Nge,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) >= $conv(b))))
                    as Exec,
            ),
            (
                Cond::Nlg,
                (|w: &mut Wave, _: &mut Env, i: &Inst| {
                    $cmp(w, i, |a, b| {
                        let (x, y) = ($conv(a), $conv(b));
                        !(x < y || x > y)
                    })
                }) as Exec,
            ),
            (
                Cond::Ngt,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) > $conv(b))))
                    as Exec,
            ),
            (
                Cond::Nle,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) <= $conv(b))))
                    as Exec,
            ),
            (
                Cond::Neq,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) != $conv(b)))
                    as Exec,
            ),
            (
                Cond::Nlt,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| !($conv(a) < $conv(b))))
                    as Exec,
            ),
            (
                Cond::T,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| true)) as Exec,
            ),
        ]
    };
}

macro_rules! int_cmps {
    ($cmp:ident, $conv:expr) => {
        [
            (
                Cond::F,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |_, _| false)) as Exec,
            ),
            (
                Cond::Lt,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) < $conv(b)))
                    as Exec,
            ),
            (
                Cond::Eq,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) == $conv(b)))
                    as Exec,
            ),
            (
                Cond::Le,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) <= $conv(b)))
                    as Exec,
            ),
            (
                Cond::Gt,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) > $conv(b)))
                    as Exec,
            ),
            (
                Cond::Ne,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) != $conv(b)))
                    as Exec,
            ),
            (
                Cond::Ge,
                (|w: &mut Wave, _: &mut Env, i: &Inst| $cmp(w, i, |a, b| $conv(a) >= $conv(b)))
                    as Exec,
            ),
            (
                Cond::T,
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

/// A compare's condition and its handler for one operand type.
type Entry = (Cond, Exec);

const F16: [Entry; 16] = float_cmps!(cmp_f16, f16v);
const F32: [Entry; 16] = float_cmps!(cmp_f32, f32v);
const F64: [Entry; 16] = float_cmps!(cmp_f64, f64v);
const I16: [Entry; 8] = int_cmps!(cmp_int, |x: u32| x as i16);
const U16: [Entry; 8] = int_cmps!(cmp_int, |x: u32| x as u16);
const I32: [Entry; 8] = int_cmps!(cmp_int, |x: u32| x as i32);
const U32: [Entry; 8] = int_cmps!(cmp_int, |x: u32| x);
const I64: [Entry; 8] = int_cmps!(cmp_int64, |x: u64| x as i64);
const U64: [Entry; 8] = int_cmps!(cmp_int64, |x: u64| x);

/// `v_cmp_class_*`, by the type of its S0.
const CLASS: [(Num, Exec); 3] = [
    (
        Num::F32,
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp32(w, i, Src::Class, class32)) as Exec,
    ),
    (
        Num::F16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp32(w, i, Src::Class, class16)) as Exec,
    ),
    (
        Num::F64,
        (|w: &mut Wave, _: &mut Env, i: &Inst| cmp64(w, i, Src::Class, class64)) as Exec,
    ),
];

/// The handler of a compare (`Class::Cmp`). One handler serves `v_cmp` and
/// `v_cmpx`: the decoder points a cmpx's destination at EXEC.
pub fn handler(cond: Cond, num: Num) -> Option<Exec> {
    if cond == Cond::Class {
        return CLASS.iter().find(|(n, _)| *n == num).map(|&(_, exec)| exec);
    }
    let table: &[Entry] = match num {
        Num::F16 => &F16,
        Num::F32 => &F32,
        Num::F64 => &F64,
        Num::I16 => &I16,
        Num::U16 => &U16,
        Num::I32 => &I32,
        Num::U32 => &U32,
        Num::I64 => &I64,
        Num::U64 => &U64,
        Num::B32 | Num::B64 => return None,
    };
    table
        .iter()
        .find(|(c, _)| *c == cond)
        .map(|&(_, exec)| exec)
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
