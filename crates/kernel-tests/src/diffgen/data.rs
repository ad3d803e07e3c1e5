//! Input values. Every statement draws its inputs from its own PRNG stream;
//! the distributions lean on the values where implementations go wrong:
//! bounds, ±0, infinities, NaNs with payloads, subnormals, exact rounding
//! ties of every narrowing conversion, and values next to integer limits.

use super::catalogue::Round;
use super::gen::{data_rng, Domain, Program};
use super::types::{write_value, Scalar};
use crate::Rng;

/// f64 → binary16 bits, round to nearest even.
pub fn f64_to_half(v: f64) -> u16 {
    let sign = if v.is_sign_negative() { 0x8000u16 } else { 0 };
    if v.is_nan() {
        return 0x7e00;
    }
    let a = v.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a == 0.0 {
        return sign;
    }
    let e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(-14);
    let m = (a / 2f64.powi(e - 10)).round_ties_even() as u32;
    if e == -14 && m < 1024 {
        return sign | m as u16;
    }
    // A carry out of the significand (m == 2048) steps the exponent up.
    sign | ((((e + 15) as u32) << 10) + (m - 1024)) as u16
}

fn pick<T: Copy>(rng: &mut Rng, v: &[T]) -> T {
    v[rng.below(v.len() as u64) as usize]
}

/// Float bits from sign, biased exponent and significand fields.
fn compose(t: Scalar, neg: bool, exp: u64, man: u64) -> u64 {
    let (p, _, _) = t.float_format();
    let mb = p as u64 - 1;
    ((neg as u64) << (t.bits() - 1)) | (exp << mb) | (man & ((1 << mb) - 1))
}

/// The bits of the float type `t` nearest to `v`.
pub fn float_of(t: Scalar, v: f64) -> u64 {
    match t {
        Scalar::Half => f64_to_half(v) as u64,
        Scalar::Float => (v as f32).to_bits() as u64,
        _ => v.to_bits(),
    }
}

fn float_bits(rng: &mut Rng, t: Scalar) -> u64 {
    let (p, _, emax) = t.float_format();
    let mb = p as u64 - 1;
    let bias = emax as u64;
    let top = 2 * bias + 1; // all-ones exponent
    let neg = rng.chance(0.5);
    let man = rng.next_u64() & ((1 << mb) - 1);
    match rng.below(8) {
        0 => pick(
            rng,
            &[
                compose(t, neg, 0, 0),                    // ±0
                compose(t, neg, top, 0),                  // ±inf
                compose(t, neg, top, 1 << (mb - 1)),      // quiet NaN
                compose(t, neg, top, 1),                  // signalling NaN
                compose(t, neg, top, man | 1),            // NaN, payload
                compose(t, neg, 0, 1),                    // smallest subnormal
                compose(t, neg, 0, (1 << mb) - 1),        // largest subnormal
                compose(t, neg, 1, 0),                    // smallest normal
                compose(t, neg, top - 1, (1 << mb) - 1),  // largest finite
                compose(t, neg, bias, 0),                 // ±1
                compose(t, neg, bias - 1, 0),             // ±0.5
                compose(t, neg, bias, 1 << (mb - 1)),     // ±1.5
                compose(t, neg, bias + 1, 1 << (mb - 2)), // ±2.5
            ],
        ),
        1 => rng.next_u64() & t.mask(),
        2 => float_of(t, rng.range_i64(-80, 80) as f64 / 4.0),
        3 => compose(t, neg, bias - 10 + rng.below(21), man),
        4 => {
            // Exactly (or one unit off) halfway between two values of a
            // narrower format: the rounding ties of each narrowing conversion.
            let narrower: Vec<u32> = [11u32, 24].into_iter().filter(|&q| q < p).collect();
            if narrower.is_empty() {
                return float_bits(rng, t);
            }
            let q = pick(rng, &narrower) as u64;
            let drop = mb - (q - 1); // bits below the narrower significand
            let tie = 1u64 << (drop - 1);
            let low = pick(rng, &[tie, tie, tie - 1, tie + 1]);
            // Exponents inside the narrower format's range.
            let exp = bias - 12 + rng.below(26);
            compose(t, neg, exp, (man & !((1u64 << drop) - 1)) | low)
        }
        5 => {
            // Next to integer limits: ±2^k, ±(2^k ± 0.5), ±(2^k - 1).
            let k = pick(rng, &[7, 8, 15, 16, 31, 32, 63, 64]);
            let base = 2f64.powi(k);
            let off = pick(rng, &[0.0, 0.5, -0.5, -1.0, 1.0, -0.75, 0.25]);
            let v = if neg { -(base + off) } else { base + off };
            float_of(t, v)
        }
        6 => compose(t, neg, 0, man),
        _ => compose(t, neg, rng.below(top), man),
    }
}

fn int_bits(rng: &mut Rng, t: Scalar) -> u64 {
    let (lo, hi) = t.int_range();
    let bits = t.bits() as u64;
    let v: i128 = match rng.below(6) {
        0 => pick(rng, &[0, 1, -1, lo, hi, lo + 1, hi - 1, 2, hi / 2, lo / 2]),
        1 => rng.range_i64(-16, 17) as i128,
        2 => {
            let p = 1i128 << rng.below(bits);
            p + pick(rng, &[0, 1, -1])
        }
        3 => {
            // Rounding ties of int → float/half: an odd (q+1)-bit number
            // shifted up, so it sits halfway between two q-bit values.
            let q = pick(rng, &[11u64, 24, 53]);
            if q + 1 >= bits {
                rng.next_u64() as i128
            } else {
                let odd = (rng.next_u64() & ((1 << (q + 1)) - 1)) | (1 << q) | 1;
                let shift = rng.below(bits - (q + 1) - t.is_signed_int() as u64 + 1);
                let v = (odd as i128) << shift;
                if t.is_signed_int() && rng.chance(0.5) {
                    -v
                } else {
                    v
                }
            }
        }
        _ => rng.next_u64() as i128,
    };
    (v as u64) & t.mask()
}

/// One component's bits for an input of element type `t` in `domain`.
pub fn value(rng: &mut Rng, t: Scalar, domain: Domain) -> u64 {
    match domain {
        Domain::Any if t.is_float() => float_bits(rng, t),
        Domain::Any => int_bits(rng, t),
        Domain::Ctl => {
            if rng.chance(0.25) {
                rng.next_u32() as u64
            } else {
                rng.below(64)
            }
        }
        Domain::Int24 => {
            let v: i64 = if t == Scalar::Int {
                match rng.below(3) {
                    0 => pick(rng, &[-(1 << 23), (1 << 23) - 1, 0, -1, 1]),
                    1 => rng.range_i64(-100, 100),
                    _ => rng.range_i64(-(1 << 23), 1 << 23),
                }
            } else {
                match rng.below(3) {
                    0 => pick(rng, &[0, (1 << 24) - 1, 1, 1 << 23]),
                    1 => rng.range_i64(0, 200),
                    _ => rng.range_i64(0, 1 << 24),
                }
            };
            (v as u64) & t.mask()
        }
        Domain::FloatToInt { to, round } => {
            for _ in 0..100 {
                let bits = if rng.chance(0.6) {
                    near_integer(rng, t, to)
                } else {
                    float_bits(rng, t)
                };
                if converts_in_range(t, bits, to, round) {
                    return bits;
                }
            }
            0
        }
    }
}

/// A value of float type `t` near an integer of `to`'s range (bounds, small
/// numbers), often with a fraction of exactly one half.
fn near_integer(rng: &mut Rng, t: Scalar, to: Scalar) -> u64 {
    let (lo, hi) = to.int_range();
    let k: f64 = match rng.below(4) {
        0 => pick(rng, &[lo, hi, 0, lo + 1, hi - 1]) as f64,
        1 => rng.range_i64(-10, 10) as f64,
        2 => ((rng.next_u64() as i128) & to.mask() as i128) as f64 + lo as f64,
        _ => (rng.f64_in(0.0, 1.0) * (hi - lo) as f64) + lo as f64,
    };
    let frac = pick(rng, &[0.0, 0.5, -0.5, 0.25, -0.75, 0.4999, -0.5001, 0.9]);
    float_of(t, k + frac)
}

/// Does float `bits` of type `from`, rounded as `round` says, fit `to`?
pub fn converts_in_range(from: Scalar, bits: u64, to: Scalar, round: Round) -> bool {
    let v = from.float_value(bits);
    if !v.is_finite() {
        return false;
    }
    let r = round.to_integer(v, to);
    let (lo, hi) = to.int_range();
    r.abs() < 2f64.powi(100) && (lo..=hi).contains(&(r as i128))
}

/// Byte offsets of every input and output region of a program.
#[derive(Clone, Debug)]
pub struct Layout {
    /// `vars[s][v]`: region of input `v` of statement `s` (program order).
    pub vars: Vec<Vec<usize>>,
    /// Output region of each statement.
    pub outs: Vec<usize>,
    pub in_bytes: usize,
    pub out_bytes: usize,
    /// Lanes per statement (the oracle's skip flags are one byte each).
    pub lanes: usize,
}

impl Layout {
    pub fn new(p: &Program) -> Layout {
        let lanes = p.lanes as usize;
        let align = |x: usize| x.div_ceil(16) * 16;
        let (mut vars, mut outs, mut i, mut o) = (vec![], vec![], 0, 0);
        for (_, s) in &p.stmts {
            let mut vs = vec![];
            for v in &s.vars {
                vs.push(i);
                i = align(i + lanes * v.storage().bytes());
            }
            vars.push(vs);
            outs.push(o);
            o = align(o + lanes * s.out_ty().bytes());
        }
        Layout {
            vars,
            outs,
            in_bytes: i,
            out_bytes: o,
            lanes,
        }
    }

    /// Where the host oracle writes statement `s`'s per-lane "unspecified"
    /// flags, after the outputs the kernel writes.
    pub fn skip_at(&self, s: usize) -> usize {
        self.out_bytes + s * self.lanes
    }

    /// The host oracle's output: the kernel's outputs and the skip flags.
    pub fn host_out_bytes(&self) -> usize {
        self.skip_at(self.outs.len())
    }
}

/// The input buffer of a program: each statement's regions filled from its
/// own data stream.
pub fn inputs(p: &Program, layout: &Layout) -> Vec<u8> {
    let mut buf = vec![0u8; layout.in_bytes];
    for (si, (k, s)) in p.stmts.iter().enumerate() {
        let mut rng = data_rng(p.seed, *k);
        for (vi, v) in s.vars.iter().enumerate() {
            let st = v.storage();
            let mut region = vec![];
            for _ in 0..p.lanes {
                let comps: Vec<u64> = (0..st.width)
                    .map(|_| value(&mut rng, st.elem, v.domain))
                    .collect();
                write_value(&mut region, st.elem, &comps);
            }
            let at = layout.vars[si][vi];
            buf[at..at + region.len()].copy_from_slice(&region);
        }
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diffgen::types::half_to_f64;

    #[test]
    fn half_rounding() {
        for h in 0..=0xffffu16 {
            let v = half_to_f64(h);
            if !v.is_nan() {
                assert_eq!(f64_to_half(v), h, "{h:#x}");
            }
        }
        assert_eq!(f64_to_half(65519.0), 0x7bff);
        assert_eq!(f64_to_half(65520.0), 0x7c00);
        assert_eq!(f64_to_half(2f64.powi(-25)), 0);
        assert_eq!(f64_to_half(1.0 + 2f64.powi(-11)), 0x3c00); // tie to even
        assert_eq!(f64_to_half(1.0 + 3.0 * 2f64.powi(-11)), 0x3c02);
    }

    #[test]
    fn float_to_int_domain() {
        let mut rng = Rng::new(1);
        for to in Scalar::INTS {
            for from in Scalar::FLOATS {
                for round in Round::ALL {
                    let d = Domain::FloatToInt { to, round };
                    for _ in 0..200 {
                        let b = value(&mut rng, from, d);
                        assert!(converts_in_range(from, b, to, round));
                    }
                }
            }
        }
    }
}
