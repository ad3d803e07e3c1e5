//! Floating-point helpers shared by the vector ALU: denormal flushing,
//! IEEE min/max, the division-sequence primitives and f16 conversions.
//!
//! Transcendentals (`v_exp`, `v_log`, `v_rcp`, `v_rsq`, `v_sqrt`, `v_sin`,
//! `v_cos`) are computed with the host's correctly rounded or libm functions,
//! which is at least as accurate as the hardware's documented 1 ULP.

use half::f16;

#[inline(always)]
pub fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

#[inline(always)]
pub fn d(bits: u64) -> f64 {
    f64::from_bits(bits)
}

#[inline(always)]
pub fn h(bits: u32) -> f32 {
    f16::from_bits(bits as u16).to_f32()
}

#[inline(always)]
pub fn to_h(x: f32) -> u32 {
    f16::from_f32(x).to_bits() as u32
}

/// f64 → f16 with a single rounding.
#[inline(always)]
pub fn d_to_h(x: f64) -> u32 {
    f16::from_f64(x).to_bits() as u32
}

/// Replaces an f32 denormal by a zero of the same sign.
#[inline(always)]
pub fn flush32(bits: u32) -> u32 {
    if bits & 0x7f80_0000 == 0 {
        bits & 0x8000_0000
    } else {
        bits
    }
}

#[inline(always)]
pub fn flush64(bits: u64) -> u64 {
    if bits & 0x7ff0_0000_0000_0000 == 0 {
        bits & 0x8000_0000_0000_0000
    } else {
        bits
    }
}

#[inline(always)]
pub fn flush16(bits: u32) -> u32 {
    if bits & 0x7c00 == 0 {
        bits & 0x8000
    } else {
        bits & 0xffff
    }
}

/// IEEE-mode minimum: a quiet NaN operand is ignored, -0 < +0.
#[inline(always)]
pub fn min32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return quiet32(b, a);
    }
    if b.is_nan() {
        return a;
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

#[inline(always)]
pub fn max32(a: f32, b: f32) -> f32 {
    if a.is_nan() {
        return quiet32(b, a);
    }
    if b.is_nan() {
        return a;
    }
    if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

fn quiet32(other: f32, nan: f32) -> f32 {
    if other.is_nan() {
        f32::from_bits(nan.to_bits() | 0x0040_0000)
    } else {
        other
    }
}

#[inline(always)]
pub fn min64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a < b || (a == b && a.is_sign_negative()) {
        a
    } else {
        b
    }
}

#[inline(always)]
pub fn max64(a: f64, b: f64) -> f64 {
    if a.is_nan() {
        return if b.is_nan() { f64::NAN } else { b };
    }
    if b.is_nan() {
        return a;
    }
    if a > b || (a == b && b.is_sign_negative()) {
        a
    } else {
        b
    }
}

/// Median of three under IEEE min/max.
pub fn med3_32(a: f32, b: f32, c: f32) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return min32(min32(a, b), c);
    }
    max32(min32(a, b), min32(max32(a, b), c))
}

/// Unbiased exponent field of an f32 (0 for zero/denormal).
pub fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

pub fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

pub fn ldexp32(x: f32, e: i32) -> f32 {
    (x as f64 * 2f64.powi(e.clamp(-300, 300))) as f32
}

pub fn ldexp64(x: f64, e: i32) -> f64 {
    // Two steps keep intermediate scale factors representable.
    let e = e.clamp(-2200, 2200);
    let half = e / 2;
    x * 2f64.powi(half) * 2f64.powi(e - half)
}

fn is_denorm32(x: f32) -> bool {
    x != 0.0 && x.is_subnormal()
}

fn is_denorm64(x: f64) -> bool {
    x != 0.0 && x.is_subnormal()
}

/// `v_div_scale_f32`: pre-scales a numerator or denominator so the Newton
/// iteration of the division sequence cannot overflow or underflow. Returns
/// the scaled value and the lane's VCC bit, which tells `v_div_fmas` to undo
/// the scaling. The cases follow the ISA guide's definition, read with its
/// "is denormal" tests meaning the f32 range, plus what gfx11 hardware was
/// measured to do where that differs (measured with f32 denormals flushed,
/// which `denorm_out` = false is):
/// - a zero numerator or denominator (a flushed denormal is one) gives NaN
///   and sets VCC;
/// - a quotient near overflow sets VCC and scales the denominator up;
/// - a denormal denominator scales S0 up;
/// - a denominator whose reciprocal would be denormal scales S0 down
///   (so `v_rcp` of the scaled denominator keeps its precision), unless
///   the quotient is denormal too, which is the next case;
/// - a denormal quotient sets VCC; with denormals kept the numerator is
///   scaled up, so `v_div_fmas` scales back with a single rounding; when
///   they are flushed, hardware leaves S0 as it is (1.0 / 2^127 gives 1.0);
/// - a tiny numerator (exponent ≤ 23) scales S0 up; hardware in flush mode
///   was measured to set VCC for it, while with denormals kept (where the
///   sequence must be exact; unmeasured) the guide's VCC = 0 stands.
pub fn div_scale32(s0: f32, den: f32, num: f32, denorm_out: bool) -> (f32, bool) {
    let denormal = |x: f64| x != 0.0 && x.abs() < f32::MIN_POSITIVE as f64;
    let (quotient, reciprocal) = (num as f64 / den as f64, 1.0 / den as f64);
    if num == 0.0 || den == 0.0 {
        (f32::NAN, true)
    } else if exp32(num) - exp32(den) >= 96 {
        (if s0 == den { ldexp32(s0, 64) } else { s0 }, true)
    } else if is_denorm32(den) {
        (ldexp32(s0, 64), false)
    } else if denormal(quotient) {
        let scale = denorm_out && s0 == num;
        (if scale { ldexp32(s0, 64) } else { s0 }, true)
    } else if denormal(reciprocal) {
        (ldexp32(s0, -64), false)
    } else if exp32(num) <= 23 {
        (ldexp32(s0, 64), !denorm_out)
    } else {
        (s0, false)
    }
}

/// `v_div_scale_f64`, by the rules of [`div_scale32`] (thresholds 768,
/// 2^±128 and 53; `denorm_out` from the f16/f64 denormal mode). Quotient
/// and reciprocal are judged without rounding: a denormal f64 quotient is
/// below 2^-1022 exactly when `num` < `den` · 2^-1022.
pub fn div_scale64(s0: f64, den: f64, num: f64, denorm_out: bool) -> (f64, bool) {
    let (n, dn) = (num.abs(), den.abs());
    let quotient_denormal = n < dn * f64::MIN_POSITIVE || (n / dn) < f64::MIN_POSITIVE;
    let reciprocal_denormal = dn > 1.0 / f64::MIN_POSITIVE;
    if num == 0.0 || den == 0.0 {
        (f64::NAN, true)
    } else if exp64(num) - exp64(den) >= 768 {
        (if s0 == den { ldexp64(s0, 128) } else { s0 }, true)
    } else if is_denorm64(den) {
        (ldexp64(s0, 128), false)
    } else if quotient_denormal {
        let scale = denorm_out && s0 == num;
        (if scale { ldexp64(s0, 128) } else { s0 }, true)
    } else if reciprocal_denormal {
        (ldexp64(s0, -128), false)
    } else if exp64(num) <= 53 {
        (ldexp64(s0, 128), !denorm_out)
    } else {
        (s0, false)
    }
}

/// `v_div_fmas_f32`: fma, then undo the pre-scaling when VCC is set.
pub fn div_fmas32(a: f32, b: f32, c: f32, vcc: bool) -> f32 {
    let r = a.mul_add(b, c);
    if !vcc {
        return r;
    }
    let e = if exp32(c) > 127 { 64 } else { -64 };
    // Scale in f64 so the final rounding to f32 happens once.
    ((a as f64).mul_add(b as f64, c as f64) * 2f64.powi(e)) as f32
}

pub fn div_fmas64(a: f64, b: f64, c: f64, vcc: bool) -> f64 {
    let r = a.mul_add(b, c);
    if !vcc {
        return r;
    }
    let e = if exp64(c) > 1023 { 128 } else { -128 };
    ldexp64(r, e)
}

/// `v_div_fixup_f32`: special cases of the quotient (zero, infinity, NaN,
/// overflow, underflow) from the original operands.
pub fn div_fixup32(q: f32, den: f32, num: f32) -> f32 {
    let sign = (den.to_bits() ^ num.to_bits()) & 0x8000_0000;
    let signed = |mag: f32| f32::from_bits((mag.to_bits() & 0x7fff_ffff) | sign);
    if num.is_nan() {
        return quiet(num);
    }
    if den.is_nan() {
        return quiet(den);
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f32::from_bits(0xffc0_0000);
    }
    if den == 0.0 || num.is_infinite() {
        return signed(f32::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return signed(0.0);
    }
    if q.is_nan() {
        return signed(f32::INFINITY);
    }
    signed(q)
}

pub fn div_fixup64(q: f64, den: f64, num: f64) -> f64 {
    let sign = (den.to_bits() ^ num.to_bits()) & 0x8000_0000_0000_0000;
    let signed = |mag: f64| f64::from_bits((mag.to_bits() & !0x8000_0000_0000_0000) | sign);
    if num.is_nan() {
        return f64::from_bits(num.to_bits() | 0x0008_0000_0000_0000);
    }
    if den.is_nan() {
        return f64::from_bits(den.to_bits() | 0x0008_0000_0000_0000);
    }
    if (den == 0.0 && num == 0.0) || (den.is_infinite() && num.is_infinite()) {
        return f64::from_bits(0xfff8_0000_0000_0000);
    }
    if den == 0.0 || num.is_infinite() {
        return signed(f64::INFINITY);
    }
    if den.is_infinite() || num == 0.0 {
        return signed(0.0);
    }
    if q.is_nan() {
        return signed(f64::INFINITY);
    }
    signed(q)
}

pub fn quiet(x: f32) -> f32 {
    f32::from_bits(x.to_bits() | 0x0040_0000)
}

/// `v_frexp_mant_f32`: mantissa in [0.5, 1).
pub fn frexp_mant32(x: f32) -> f32 {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return x;
    }
    let (m, _) = frexp64(x as f64);
    m as f32
}

pub fn frexp_exp32(x: f32) -> i32 {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return 0;
    }
    frexp64(x as f64).1
}

/// Splits a finite non-zero value into mantissa in [0.5, 1) and exponent.
pub fn frexp64(x: f64) -> (f64, i32) {
    if x.is_nan() || x.is_infinite() || x == 0.0 {
        return (x, 0);
    }
    let (x, bias) = if x.is_subnormal() {
        (x * 2f64.powi(64), -64)
    } else {
        (x, 0)
    };
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32 - 1022;
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022u64 << 52));
    (m, e + bias)
}

/// `v_fract`: x - floor(x), kept below 1 (the largest float under 1 is
/// what a tiny negative input rounds to); infinities give NaN and a NaN
/// stays a NaN, quieted (Rust's `min` would drop it).
pub fn fract32(x: f32) -> f32 {
    if x.is_nan() {
        return quiet(x);
    }
    if x.is_infinite() {
        return f32::NAN;
    }
    (x - x.floor()).min(f32::from_bits(0x3f7f_ffff))
}

pub fn fract64(x: f64) -> f64 {
    if x.is_nan() {
        return f64::from_bits(x.to_bits() | 0x0008_0000_0000_0000);
    }
    if x.is_infinite() {
        return f64::NAN;
    }
    (x - x.floor()).min(f64::from_bits(0x3fef_ffff_ffff_ffff))
}

/// `v_fract_f16`, by the same rules.
pub fn fract16(x: f32) -> f32 {
    if x.is_nan() || x.is_infinite() {
        return fract32(x);
    }
    (x - x.floor()).min(0.999_511_7)
}

/// `v_mullit_f32` (a legacy lighting multiply): S0 × S1, or −MAX_FLOAT
/// when the guard says the product is not wanted: S1 is −MAX_FLOAT, −inf
/// or NaN, or S2 is not positive (≤ 0 or NaN).
pub fn mullit(a: f32, b: f32, c: f32) -> f32 {
    let unwanted = b == -f32::MAX || b == f32::NEG_INFINITY || b.is_nan() || !(c > 0.0);
    if unwanted {
        -f32::MAX
    } else {
        a * b
    }
}

/// Float → int conversions saturate and map NaN to 0, as the hardware does.
pub fn f_to_i32(x: f64) -> u32 {
    if x.is_nan() {
        0
    } else {
        (x as i32) as u32
    }
}

pub fn f_to_u32(x: f64) -> u32 {
    if x.is_nan() {
        0
    } else {
        x as u32
    }
}

/// Round half to even.
pub fn rne32(x: f32) -> f32 {
    x.round_ties_even()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn divide(n: f32, dn: f32) -> f32 {
        // The sequence clang emits for a correctly rounded f32 division.
        let (den, _) = div_scale32(dn, dn, n, true);
        let (num, vcc) = div_scale32(n, dn, n, true);
        let r = 1.0 / den;
        let e = (-den).mul_add(r, 1.0);
        let r = e.mul_add(r, r);
        let q = num * r;
        let e = (-den).mul_add(q, num);
        let q = e.mul_add(r, q);
        let e = (-den).mul_add(q, num);
        let q = div_fmas32(e, r, q, vcc);
        div_fixup32(q, dn, n)
    }

    #[test]
    fn division_sequence_is_correctly_rounded() {
        let values = [
            1.0f32,
            3.0,
            -7.5,
            1e-38,
            3e38,
            1e-45,
            0.1,
            123456.79,
            f32::MAX,
            f32::MIN_POSITIVE,
            2e-40,
            -3.950_528,
            1e-30,
            7e-39,
            4e37,
            1e20,
            1e-20,
        ];
        for &n in &values {
            for &dn in &values {
                let want = n / dn;
                let got = divide(n, dn);
                assert!(
                    got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                    "{n:e} / {dn:e}: got {got:e}, want {want:e}"
                );
            }
        }
        // Random finite operands across the whole exponent range.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            f32::from_bits(state as u32 & 0xfeff_ffff)
        };
        for _ in 0..200_000 {
            let (n, dn) = (next(), next());
            let (want, got) = (n / dn, divide(n, dn));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{n:e} / {dn:e}: got {got:e}, want {want:e}"
            );
        }
        // Denominators whose reciprocal is denormal (the div_scale case
        // that scales down), against numerators of every size.
        for _ in 0..50_000 {
            let dn = f32::from_bits(0x7e80_0000 | (next().to_bits() & 0x807f_ffff));
            let n = next();
            let (want, got) = (n / dn, divide(n, dn));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{n:e} / {dn:e}: got {got:e}, want {want:e}"
            );
        }
        let (n, dn) = (-(2f32.powi(32)), -f32::MAX);
        assert_eq!(divide(n, dn).to_bits(), (n / dn).to_bits(), "diffgen seed 1");
        assert!(divide(0.0, 0.0).is_nan());
        assert_eq!(divide(1.0, 0.0), f32::INFINITY);
        assert_eq!(divide(-1.0, f32::INFINITY).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    fn ieee_min_max() {
        assert_eq!(min32(f32::NAN, 1.0), 1.0);
        assert_eq!(max32(2.0, f32::NAN), 2.0);
        assert!(min32(-0.0, 0.0).is_sign_negative());
        assert!(!max32(-0.0, 0.0).is_sign_negative());
    }
}
