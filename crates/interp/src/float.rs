//! Floating-point helpers shared by the vector ALU: denormal flushing,
//! the ISA's min/max/med3 NaN rules, directed rounding (MODE.FP_ROUND),
//! the division-sequence primitives and f16 conversions.
//!
//! Arithmetic in round-to-nearest-even runs on the host's IEEE operations.
//! The other round modes go through [`round`], which rounds an exact
//! intermediate (a wide integer significand and an exponent) to any of the
//! formats; the operations hand it their exact results, so each result is
//! rounded once, as IEEE 754 asks.
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

/// One MODE.FP_ROUND field (LLVM's SIDefines.h: 0 nearest even, 1 toward
/// +inf, 2 toward -inf, 3 toward zero). Bits 1:0 round f32 results, bits
/// 3:2 f16 and f64 results (LLVM sets the latter for `v_cvt_f16_f32`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Nearest,
    Up,
    Down,
    Zero,
}

impl Round {
    pub const fn from_bits(b: u32) -> Round {
        match b & 3 {
            0 => Round::Nearest,
            1 => Round::Up,
            2 => Round::Down,
            _ => Round::Zero,
        }
    }
}

/// The MODE state a float lane function depends on (denormal flushing is
/// applied around it, by operand type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fp {
    /// Rounding of f32 results.
    pub r32: Round,
    /// Rounding of f16 and f64 results.
    pub r16: Round,
    /// MODE.IEEE: min/max quiet signalling NaNs instead of passing them.
    pub ieee: bool,
}

impl Fp {
    /// Round to nearest even, IEEE mode on (the compute default).
    pub const DEFAULT: Fp = Fp {
        r32: Round::Nearest,
        r16: Round::Nearest,
        ieee: true,
    };
}

/// An IEEE binary format, by its fraction and exponent widths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fmt {
    pub mant: u32,
    pub exp: u32,
}

pub const F16: Fmt = Fmt { mant: 10, exp: 5 };
pub const F32: Fmt = Fmt { mant: 23, exp: 8 };
pub const F64: Fmt = Fmt { mant: 52, exp: 11 };
pub const BF16: Fmt = Fmt { mant: 7, exp: 8 };

impl Fmt {
    #[inline(always)]
    pub const fn sign(self) -> u64 {
        1 << (self.mant + self.exp)
    }
    /// The bits of +infinity.
    #[inline(always)]
    pub const fn inf(self) -> u64 {
        ((1 << self.exp) - 1) << self.mant
    }
    #[inline(always)]
    pub const fn quiet(self) -> u64 {
        1 << (self.mant - 1)
    }
    #[inline(always)]
    pub const fn is_nan(self, x: u64) -> bool {
        x & !self.sign() > self.inf()
    }
    #[inline(always)]
    pub const fn is_finite(self, x: u64) -> bool {
        x & !self.sign() < self.inf()
    }
    /// The exponent of a denormal's last bit (f32: -149).
    const fn lsb_min(self) -> i32 {
        2 - (1 << (self.exp - 1)) - self.mant as i32
    }
    /// A finite value as sign, significand and exponent: |x| = sig·2^exp.
    #[inline(always)]
    fn unpack(self, x: u64) -> Exact {
        let e = (x >> self.mant) & ((1 << self.exp) - 1);
        let frac = (x & ((1 << self.mant) - 1)) as u128;
        let (sig, exp) = if e == 0 {
            (frac, self.lsb_min())
        } else {
            (frac | 1 << self.mant, e as i32 - 1 + self.lsb_min())
        };
        Exact {
            neg: x & self.sign() != 0,
            sig,
            exp,
        }
    }
}

/// An exact finite value: (-1)^neg · sig · 2^exp.
#[derive(Clone, Copy, Debug)]
struct Exact {
    neg: bool,
    sig: u128,
    exp: i32,
}

/// Where the discarded bits of a rounding lie, relative to half an ulp.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    Zero,
    Below,
    Half,
    Above,
}

/// Rounds (-1)^neg · (sig + s)·2^exp to `fmt` by `rm`, where s is 0, or a
/// fraction in (0, 1) when `sticky` is set. Results beyond the largest
/// finite value become infinity or the largest value, as the mode says
/// (IEEE 754 §7.4); tiny results round into the denormals (flushing is
/// the caller's business).
pub fn round(fmt: Fmt, neg: bool, sig: u128, exp: i32, sticky: bool, rm: Round) -> u64 {
    let sign = if neg { fmt.sign() } else { 0 };
    if sig == 0 && !sticky {
        return sign;
    }
    let len = 128 - sig.leading_zeros() as i32;
    // The exponent of the result's last bit: the format's precision below
    // the leading bit, but never below the denormals' last bit.
    let lsb = (exp + len - 1 - fmt.mant as i32).max(fmt.lsb_min());
    let (q, rest) = if lsb <= exp {
        let rest = if sticky { Rest::Below } else { Rest::Zero };
        (sig << (exp - lsb) as u32, rest)
    } else {
        let k = (lsb - exp) as u32;
        if k > 128 {
            (0, Rest::Below)
        } else {
            let (q, rem) = if k == 128 {
                (0, sig)
            } else {
                (sig >> k, sig & ((1u128 << k) - 1))
            };
            let half = 1u128 << (k - 1);
            let rest = match rem.cmp(&half) {
                std::cmp::Ordering::Less if rem == 0 && !sticky => Rest::Zero,
                std::cmp::Ordering::Less => Rest::Below,
                std::cmp::Ordering::Equal if sticky => Rest::Above,
                std::cmp::Ordering::Equal => Rest::Half,
                std::cmp::Ordering::Greater => Rest::Above,
            };
            (q, rest)
        }
    };
    let inexact = rest != Rest::Zero;
    let up = match rm {
        Round::Nearest => rest == Rest::Above || (rest == Rest::Half && q & 1 == 1),
        Round::Zero => false,
        Round::Up => inexact && !neg,
        Round::Down => inexact && neg,
    };
    // Denormals (lsb at its minimum) encode as q; normal values as q plus
    // (biased exponent - 1) above the fraction, so a carry out of the
    // significand steps the exponent by itself.
    let bits = (((lsb - fmt.lsb_min()) as u128) << fmt.mant) + q + up as u128;
    if bits >= fmt.inf() as u128 {
        let to_inf = match rm {
            Round::Nearest => true,
            Round::Zero => false,
            Round::Up => !neg,
            Round::Down => neg,
        };
        return sign | if to_inf { fmt.inf() } else { fmt.inf() - 1 };
    }
    sign | bits as u64
}

fn round_exact(fmt: Fmt, x: Exact, rm: Round) -> u64 {
    round(fmt, x.neg, x.sig, x.exp, false, rm)
}

/// The correctly rounded sum of two exact values (each significand at most
/// 107 bits wide, as a product of two f64 significands is).
fn add_exact(fmt: Fmt, a: Exact, b: Exact, rm: Round) -> u64 {
    if a.sig == 0 && b.sig == 0 {
        // IEEE 754 §6.3: an exact zero sum of opposite signs is +0, or -0
        // when rounding toward -inf.
        let neg = if a.neg == b.neg {
            a.neg
        } else {
            rm == Round::Down
        };
        return if neg { fmt.sign() } else { 0 };
    }
    if a.sig == 0 {
        return round_exact(fmt, b, rm);
    }
    if b.sig == 0 {
        return round_exact(fmt, a, rm);
    }
    let top = |x: &Exact| x.exp + 128 - x.sig.leading_zeros() as i32;
    let (big, small) = if top(&a) >= top(&b) { (a, b) } else { (b, a) };
    // Align both on a grid 125 bits below the larger leading bit: the
    // larger fits whole, the smaller loses only bits far below the result's
    // precision (kept as a sticky fraction).
    let base = top(&big) - 125;
    let hi = big.sig << (big.exp - base) as u32;
    let (lo, sticky) = if small.exp >= base {
        (small.sig << (small.exp - base) as u32, false)
    } else {
        let k = (base - small.exp) as u32;
        if k >= 128 {
            (0, true)
        } else {
            (small.sig >> k, small.sig & ((1u128 << k) - 1) != 0)
        }
    };
    if big.neg == small.neg {
        return round(fmt, big.neg, hi + lo, base, sticky, rm);
    }
    if hi >= lo {
        let diff = hi - lo;
        if diff == 0 && !sticky {
            return if rm == Round::Down { fmt.sign() } else { 0 };
        }
        // hi - (lo + s) = (hi - lo - 1) + (1 - s).
        let diff = if sticky { diff - 1 } else { diff };
        round(fmt, big.neg, diff, base, sticky, rm)
    } else {
        // Only possible when nothing was lost (equal leading bits).
        round(fmt, small.neg, lo - hi, base, false, rm)
    }
}

/// a + b in `fmt`, finite operands, rounded by `rm`.
pub fn add_rounded(fmt: Fmt, a: u64, b: u64, rm: Round) -> u64 {
    add_exact(fmt, fmt.unpack(a), fmt.unpack(b), rm)
}

/// a · b in `fmt`, finite operands.
pub fn mul_rounded(fmt: Fmt, a: u64, b: u64, rm: Round) -> u64 {
    let (a, b) = (fmt.unpack(a), fmt.unpack(b));
    round(fmt, a.neg != b.neg, a.sig * b.sig, a.exp + b.exp, false, rm)
}

/// a · b + c in `fmt` with one rounding, finite operands.
pub fn fma_rounded(fmt: Fmt, a: u64, b: u64, c: u64, rm: Round) -> u64 {
    let (a, b) = (fmt.unpack(a), fmt.unpack(b));
    let p = Exact {
        neg: a.neg != b.neg,
        sig: a.sig * b.sig,
        exp: a.exp + b.exp,
    };
    add_exact(fmt, p, fmt.unpack(c), rm)
}

/// A finite value of format `from` rounded to format `to`.
pub fn convert_rounded(from: Fmt, to: Fmt, x: u64, rm: Round) -> u64 {
    round_exact(to, from.unpack(x), rm)
}

/// An integer (sign and magnitude) rounded to `fmt`.
pub fn from_int(fmt: Fmt, neg: bool, mag: u64, rm: Round) -> u64 {
    round(fmt, neg, mag as u128, 0, false, rm)
}

/// x · 2^e in `fmt` with one rounding; NaNs come back quiet, infinities
/// and zeros unchanged.
pub fn ldexp_rounded(fmt: Fmt, x: u64, e: i32, rm: Round) -> u64 {
    if fmt.is_nan(x) {
        return x | fmt.quiet();
    }
    if !fmt.is_finite(x) {
        return x;
    }
    let mut v = fmt.unpack(x);
    // Beyond ±100000 every finite input over- or underflows alike.
    v.exp += e.clamp(-100_000, 100_000);
    round_exact(fmt, v, rm)
}

/// f32 addition by the f32 round mode.
/// A NaN operand of a two-operand f32 op: the first, quieted. This is
/// what x86's SSE does, written out so that neither the compiler (which
/// may commute `a + b`) nor the host decides it.
#[inline(always)]
fn first_nan(a: f32, b: f32) -> Option<f32> {
    if a.is_nan() {
        Some(quiet(a))
    } else if b.is_nan() {
        Some(quiet(b))
    } else {
        None
    }
}

#[inline(always)]
pub fn add32(a: f32, b: f32, rm: Round) -> f32 {
    if let Some(nan) = first_nan(a, b) {
        return nan;
    }
    if rm == Round::Nearest || !(a.is_finite() && b.is_finite()) {
        a + b
    } else {
        f(add_rounded(F32, a.to_bits() as u64, b.to_bits() as u64, rm) as u32)
    }
}

#[inline(always)]
pub fn mul32(a: f32, b: f32, rm: Round) -> f32 {
    if let Some(nan) = first_nan(a, b) {
        return nan;
    }
    if rm == Round::Nearest || !(a.is_finite() && b.is_finite()) {
        a * b
    } else {
        f(mul_rounded(F32, a.to_bits() as u64, b.to_bits() as u64, rm) as u32)
    }
}

/// `a * b + c` with one rounding. A NaN operand gives the first NaN of
/// `a`, `b`, `c`, quieted — the order the two-operand ops take theirs in
/// (first operand first). The host's fused multiply-add picks among NaN
/// operands by which of its three forms the compiler chose, so it is not
/// asked.
#[inline(always)]
pub fn fma32(a: f32, b: f32, c: f32, rm: Round) -> f32 {
    if a.is_nan() || b.is_nan() || c.is_nan() {
        return quiet([a, b, c].into_iter().find(|x| x.is_nan()).unwrap_or(a));
    }
    if rm == Round::Nearest || !(a.is_finite() && b.is_finite() && c.is_finite()) {
        a.mul_add(b, c)
    } else {
        let bits = |x: f32| x.to_bits() as u64;
        f(fma_rounded(F32, bits(a), bits(b), bits(c), rm) as u32)
    }
}

/// `first_nan` for f64 ops of any arity.
#[inline(always)]
fn first_nan64<const N: usize>(operands: [f64; N]) -> Option<f64> {
    let nan = operands.into_iter().find(|x| x.is_nan())?;
    Some(f64::from_bits(nan.to_bits() | F64.quiet()))
}

#[inline(always)]
pub fn add64(a: f64, b: f64, rm: Round) -> f64 {
    if let Some(nan) = first_nan64([a, b]) {
        return nan;
    }
    if rm == Round::Nearest || !(a.is_finite() && b.is_finite()) {
        a + b
    } else {
        d(add_rounded(F64, a.to_bits(), b.to_bits(), rm))
    }
}

#[inline(always)]
pub fn mul64(a: f64, b: f64, rm: Round) -> f64 {
    if let Some(nan) = first_nan64([a, b]) {
        return nan;
    }
    if rm == Round::Nearest || !(a.is_finite() && b.is_finite()) {
        a * b
    } else {
        d(mul_rounded(F64, a.to_bits(), b.to_bits(), rm))
    }
}

#[inline(always)]
pub fn fma64(a: f64, b: f64, c: f64, rm: Round) -> f64 {
    if let Some(nan) = first_nan64([a, b, c]) {
        return nan;
    }
    if rm == Round::Nearest || !(a.is_finite() && b.is_finite() && c.is_finite()) {
        a.mul_add(b, c)
    } else {
        d(fma_rounded(F64, a.to_bits(), b.to_bits(), c.to_bits(), rm))
    }
}

#[inline(always)]
fn finite16(x: u32) -> bool {
    F16.is_finite(x as u64 & 0xffff)
}

/// f16 addition on f16 bits. Round to nearest goes through f64, where the
/// sum of two f16 values is exact, so there is one rounding.
#[inline(always)]
pub fn add16(a: u32, b: u32, rm: Round) -> u32 {
    if rm == Round::Nearest || !(finite16(a) && finite16(b)) {
        d_to_h(h(a) as f64 + h(b) as f64)
    } else {
        add_rounded(F16, a as u64 & 0xffff, b as u64 & 0xffff, rm) as u32
    }
}

/// bf16 addition on bf16 bits (the low half), rounded once to nearest even
/// with denormals kept; infinities and NaN through f32, where they are
/// exact (a NaN result is the canonical quiet NaN's upper half).
#[inline(always)]
pub fn add_bf16(a: u32, b: u32) -> u32 {
    let (a, b) = (a as u64 & 0xffff, b as u64 & 0xffff);
    if BF16.is_finite(a) && BF16.is_finite(b) {
        return add_rounded(BF16, a, b, Round::Nearest) as u32;
    }
    let sum = f((a as u32) << 16) + f((b as u32) << 16);
    if sum.is_nan() {
        0x7fc0
    } else {
        sum.to_bits() >> 16
    }
}

/// f16 product: exact in f32 (22 significant bits), rounded once.
#[inline(always)]
pub fn mul16(a: u32, b: u32, rm: Round) -> u32 {
    if rm == Round::Nearest || !(finite16(a) && finite16(b)) {
        to_h(h(a) * h(b))
    } else {
        mul_rounded(F16, a as u64 & 0xffff, b as u64 & 0xffff, rm) as u32
    }
}

/// f16 fma. In f64 the product is exact and the sum is exact whenever it
/// can decide the f16 rounding (a sum close to an f16 tie has its terms
/// within ~36 bits of each other), so nearest rounding is single there.
#[inline(always)]
pub fn fma16(a: u32, b: u32, c: u32, rm: Round) -> u32 {
    if rm == Round::Nearest || !(finite16(a) && finite16(b) && finite16(c)) {
        d_to_h((h(a) as f64).mul_add(h(b) as f64, h(c) as f64))
    } else {
        let m = |x: u32| x as u64 & 0xffff;
        fma_rounded(F16, m(a), m(b), m(c), rm) as u32
    }
}

/// Negates f16 bits.
#[inline(always)]
pub fn neg16(x: u32) -> u32 {
    x ^ 0x8000
}

/// f32 → f16 by the f16 round mode.
#[inline(always)]
pub fn f32_to_f16(x: f32, rm: Round) -> u32 {
    if rm == Round::Nearest || !x.is_finite() {
        to_h(x)
    } else {
        convert_rounded(F32, F16, x.to_bits() as u64, rm) as u32
    }
}

/// f64 → f32 by the f32 round mode.
#[inline(always)]
pub fn f64_to_f32(x: f64, rm: Round) -> f32 {
    if rm == Round::Nearest || !x.is_finite() {
        x as f32
    } else {
        f(convert_rounded(F64, F32, x.to_bits(), rm) as u32)
    }
}

/// i32 → f32 (inexact above 2^24).
#[inline(always)]
pub fn i32_to_f32(x: i32, rm: Round) -> f32 {
    if rm == Round::Nearest {
        x as f32
    } else {
        f(from_int(F32, x < 0, x.unsigned_abs() as u64, rm) as u32)
    }
}

#[inline(always)]
pub fn u32_to_f32(x: u32, rm: Round) -> f32 {
    if rm == Round::Nearest {
        x as f32
    } else {
        f(from_int(F32, false, x as u64, rm) as u32)
    }
}

/// A 16-bit integer → f16 (inexact above 2048; large u16 overflow to inf
/// in nearest mode).
#[inline(always)]
pub fn int_to_f16(neg: bool, mag: u32, rm: Round) -> u32 {
    if rm == Round::Nearest {
        // Exact in f32, so one rounding.
        to_h(if neg { -(mag as f32) } else { mag as f32 })
    } else {
        from_int(F16, neg, mag as u64, rm) as u32
    }
}

/// The ISA's `v_min`/`v_max` (RDNA3 pseudocode, any width): with
/// MODE.IEEE a signalling NaN operand comes back quieted (S0 checked
/// first), a quiet NaN loses to a number; without it any NaN loses to the
/// other operand (S1 checked first; two NaNs give S0 untouched). -0 orders
/// below +0. `val` reads a non-NaN operand exactly.
#[inline(always)]
pub fn minmax(fmt: Fmt, a: u64, b: u64, ieee: bool, max: bool, val: impl Fn(u64) -> f64) -> u64 {
    let (an, bn) = (fmt.is_nan(a), fmt.is_nan(b));
    if an || bn {
        if ieee {
            if an && a & fmt.quiet() == 0 {
                return a | fmt.quiet();
            }
            if bn && b & fmt.quiet() == 0 {
                return b | fmt.quiet();
            }
        }
        return if bn { a } else { b };
    }
    ordered(fmt, a, b, max, val)
}

/// The larger (`max`) or smaller of two non-NaN operands, -0 below +0.
#[inline(always)]
fn ordered(fmt: Fmt, a: u64, b: u64, max: bool, val: impl Fn(u64) -> f64) -> u64 {
    let (x, y) = (val(a), val(b));
    let (sa, sb) = (a & fmt.sign() != 0, b & fmt.sign() != 0);
    let zeros = x == 0.0 && y == 0.0;
    let a_wins = if max {
        x > y || (zeros && !sa && sb)
    } else {
        x < y || (zeros && sa && !sb)
    };
    if a_wins {
        a
    } else {
        b
    }
}

/// gfx12's `*_num` min/max (RDNA4 pseudocode of `v_max_num_f32`, IEEE
/// 754-2019 maximumNumber/minimumNumber): a NaN operand, signalling or
/// quiet, loses to a number; two NaNs give S0 quieted; -0 orders below +0.
#[inline(always)]
pub fn minmax_num(fmt: Fmt, a: u64, b: u64, max: bool, val: impl Fn(u64) -> f64) -> u64 {
    match (fmt.is_nan(a), fmt.is_nan(b)) {
        (true, true) => a | fmt.quiet(),
        (true, false) => b,
        (false, true) => a,
        (false, false) => ordered(fmt, a, b, max, val),
    }
}

/// gfx12's `v_maximum`/`v_minimum` (RDNA4 pseudocode, IEEE 754-2019
/// maximum/minimum): NaN wins. A signalling NaN comes first (S0 before
/// S1), then a quiet one (S0 before S1); the NaN returned is quieted.
/// -0 orders below +0.
#[inline(always)]
pub fn minmax_nan(fmt: Fmt, a: u64, b: u64, max: bool, val: impl Fn(u64) -> f64) -> u64 {
    let signalling = |x: u64| fmt.is_nan(x) && x & fmt.quiet() == 0;
    if signalling(a) {
        a | fmt.quiet()
    } else if signalling(b) {
        b | fmt.quiet()
    } else if fmt.is_nan(a) {
        a
    } else if fmt.is_nan(b) {
        b
    } else {
        ordered(fmt, a, b, max, val)
    }
}

/// How gfx12's min/max families treat NaN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NanRule {
    /// `*_num`: a number wins over NaN.
    Number,
    /// `*imum*`: NaN wins.
    Propagate,
}

/// One f32 min/max of gfx12's families.
#[inline(always)]
pub fn mm32(rule: NanRule, max: bool, a: u32, b: u32) -> u32 {
    let val = |x: u64| f(x as u32) as f64;
    let (a, b) = (a as u64, b as u64);
    (match rule {
        NanRule::Number => minmax_num(F32, a, b, max, val),
        NanRule::Propagate => minmax_nan(F32, a, b, max, val),
    }) as u32
}

/// One f16 min/max of gfx12's families (the operands' low halves; the
/// result has the high half clear).
#[inline(always)]
pub fn mm16(rule: NanRule, max: bool, a: u32, b: u32) -> u32 {
    let val = |x: u64| h(x as u32) as f64;
    let (a, b) = (a as u64 & 0xffff, b as u64 & 0xffff);
    (match rule {
        NanRule::Number => minmax_num(F16, a, b, max, val),
        NanRule::Propagate => minmax_nan(F16, a, b, max, val),
    }) as u32
}

/// One f64 min/max of gfx12's families.
#[inline(always)]
pub fn mm64(rule: NanRule, max: bool, a: u64, b: u64) -> u64 {
    match rule {
        NanRule::Number => minmax_num(F64, a, b, max, d),
        NanRule::Propagate => minmax_nan(F64, a, b, max, d),
    }
}

/// gfx12's `v_med3_num` (RDNA4 pseudocode): with any NaN operand, the
/// `min3_num` of all three; else the median, -0 below +0 (as `med3`).
#[inline(always)]
pub fn med3_num(
    mm: impl Fn(NanRule, bool, u32, u32) -> u32 + Copy,
    a: u32,
    b: u32,
    c: u32,
    nan: impl Fn(u32) -> bool,
) -> u32 {
    let mn = |x, y| mm(NanRule::Number, false, x, y);
    let mx = |x, y| mm(NanRule::Number, true, x, y);
    if nan(a) || nan(b) || nan(c) {
        return mn(mn(a, b), c);
    }
    mx(mn(a, b), mn(mx(a, b), c))
}

/// `v_med3` (RDNA3 pseudocode): with any NaN operand, the min3 of all
/// three; else the median, max(min(a, b), min(max(a, b), c)), with -0
/// ordered below +0 as in min/max. (The pseudocode picks by comparing
/// max3 with each operand, which read with IEEE equality would let a tie
/// of ±0 pick by position; clang-19 lowers `clamp(x, -0, +0)`-like code to
/// `v_med3` with a -0 bound and needs the signed median, which the
/// differential generator confirms.)
#[inline(always)]
pub fn med3(fmt: Fmt, a: u64, b: u64, c: u64, ieee: bool, val: impl Fn(u64) -> f64 + Copy) -> u64 {
    let mn = |x, y| minmax(fmt, x, y, ieee, false, val);
    let mx = |x, y| minmax(fmt, x, y, ieee, true, val);
    if fmt.is_nan(a) || fmt.is_nan(b) || fmt.is_nan(c) {
        return mn(mn(a, b), c);
    }
    mx(mn(a, b), mn(mx(a, b), c))
}

#[inline(always)]
pub fn vmin32(a: u32, b: u32, ieee: bool) -> u32 {
    minmax(F32, a as u64, b as u64, ieee, false, |x| f(x as u32) as f64) as u32
}

#[inline(always)]
pub fn vmax32(a: u32, b: u32, ieee: bool) -> u32 {
    minmax(F32, a as u64, b as u64, ieee, true, |x| f(x as u32) as f64) as u32
}

/// f16 operands as bits (the low half of `a`/`b`): a NaN's kind is read
/// from the bits, since a host f16→f32 conversion may quiet it.
#[inline(always)]
pub fn vmin16(a: u32, b: u32, ieee: bool) -> u32 {
    minmax(
        F16,
        a as u64 & 0xffff,
        b as u64 & 0xffff,
        ieee,
        false,
        |x| h(x as u32) as f64,
    ) as u32
}

#[inline(always)]
pub fn vmax16(a: u32, b: u32, ieee: bool) -> u32 {
    minmax(F16, a as u64 & 0xffff, b as u64 & 0xffff, ieee, true, |x| {
        h(x as u32) as f64
    }) as u32
}

#[inline(always)]
pub fn vmin64(a: u64, b: u64, ieee: bool) -> u64 {
    minmax(F64, a, b, ieee, false, d)
}

#[inline(always)]
pub fn vmax64(a: u64, b: u64, ieee: bool) -> u64 {
    minmax(F64, a, b, ieee, true, d)
}

pub fn med3_f32(a: u32, b: u32, c: u32, ieee: bool) -> u32 {
    med3(F32, a as u64, b as u64, c as u64, ieee, |x| {
        f(x as u32) as f64
    }) as u32
}

pub fn med3_f16(a: u32, b: u32, c: u32, ieee: bool) -> u32 {
    let m = |x: u32| x as u64 & 0xffff;
    med3(F16, m(a), m(b), m(c), ieee, |x| h(x as u32) as f64) as u32
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

/// Flushes both f16 halves of a packed pair.
#[inline(always)]
pub fn flush16x2(bits: u32) -> u32 {
    flush16(bits) | flush16(bits >> 16) << 16
}

/// Replaces an f16 denormal (the low half) by a zero of the same sign; the
/// result has the high half clear.
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

/// Unbiased exponent field of an f32 (0 for zero/denormal).
pub fn exp32(x: f32) -> i32 {
    ((x.to_bits() >> 23) & 0xff) as i32
}

pub fn exp64(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// x · 2^e with one rounding. In round to nearest the f64 product is exact
/// (f32 exponents ± 300 stay in f64's normal range), so converting it
/// rounds once.
pub fn ldexp32(x: f32, e: i32, rm: Round) -> f32 {
    if rm == Round::Nearest {
        (x as f64 * pow2(e.clamp(-300, 300))) as f32
    } else {
        f(ldexp_rounded(F32, x.to_bits() as u64, e, rm) as u32)
    }
}

/// x · 2^e with one rounding: a plain product when both 2^e and the result
/// are normal (then it is exact), else the exact path (a product that
/// lands among the denormals would round twice if taken in two steps).
pub fn ldexp64(x: f64, e: i32, rm: Round) -> f64 {
    // In 64 bits: e is any i32 (a VGPR's contents).
    let scaled = i64::from(exp64(x)) + i64::from(e);
    if rm == Round::Nearest
        && x.is_normal()
        && (-1022..=1023).contains(&e)
        && (1..=2046).contains(&scaled)
    {
        x * pow2(e)
    } else {
        d(ldexp_rounded(F64, x.to_bits(), e, rm))
    }
}

/// 2^e for `e` in f64's normal range (-1022..=1023), built from its bits
/// (`powi` is a loop of multiplies in a library call).
#[inline(always)]
fn pow2(e: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&e));
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// f16 · 2^e: the exponent saturates to ±64, beyond which every f16
/// over- or underflows alike.
pub fn ldexp16(x: u32, e: i32, rm: Round) -> u32 {
    ldexp_rounded(F16, x as u64 & 0xffff, e.clamp(-64, 64), rm) as u32
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
    let facts = DivScaleFacts {
        zero: num == 0.0 || den == 0.0,
        near_overflow: exp32(num) - exp32(den) >= 96,
        den_denormal: is_denorm32(den),
        quotient_denormal: denormal(num as f64 / den as f64),
        reciprocal_denormal: denormal(1.0 / den as f64),
        num_tiny: exp32(num) <= 23,
    };
    let (scale, vcc) = facts.rule(s0 == den, s0 == num, denorm_out);
    let v = match scale {
        Scale::Nan => f32::NAN,
        Scale::Keep => s0,
        Scale::Up => ldexp32(s0, 64, Round::Nearest),
        Scale::Down => ldexp32(s0, -64, Round::Nearest),
    };
    (v, vcc)
}

/// `v_div_scale_f64`, by the rules of [`div_scale32`] (thresholds 768,
/// 2^±128 and 53; `denorm_out` from the f16/f64 denormal mode). Quotient
/// and reciprocal are judged without rounding: a denormal f64 quotient is
/// below 2^-1022 exactly when `num` < `den` · 2^-1022.
pub fn div_scale64(s0: f64, den: f64, num: f64, denorm_out: bool) -> (f64, bool) {
    let (n, dn) = (num.abs(), den.abs());
    let facts = DivScaleFacts {
        zero: num == 0.0 || den == 0.0,
        near_overflow: exp64(num) - exp64(den) >= 768,
        den_denormal: is_denorm64(den),
        quotient_denormal: n < dn * f64::MIN_POSITIVE || (n / dn) < f64::MIN_POSITIVE,
        reciprocal_denormal: dn > 1.0 / f64::MIN_POSITIVE,
        num_tiny: exp64(num) <= 53,
    };
    let (scale, vcc) = facts.rule(s0 == den, s0 == num, denorm_out);
    let v = match scale {
        Scale::Nan => f64::NAN,
        Scale::Keep => s0,
        Scale::Up => ldexp64(s0, 128, Round::Nearest),
        Scale::Down => ldexp64(s0, -128, Round::Nearest),
    };
    (v, vcc)
}

/// What `v_div_scale` does to S0: the format's scale factor is 2^64 (f32)
/// or 2^128 (f64).
enum Scale {
    Nan,
    Keep,
    Up,
    Down,
}

/// The operand tests `v_div_scale`'s rules read, judged in one format.
struct DivScaleFacts {
    zero: bool,
    near_overflow: bool,
    den_denormal: bool,
    quotient_denormal: bool,
    reciprocal_denormal: bool,
    num_tiny: bool,
}

impl DivScaleFacts {
    /// The rules of [`div_scale32`], in their order, for both formats: the
    /// scaling of S0 and the lane's VCC bit.
    fn rule(&self, s0_is_den: bool, s0_is_num: bool, denorm_out: bool) -> (Scale, bool) {
        if self.zero {
            (Scale::Nan, true)
        } else if self.near_overflow {
            (if s0_is_den { Scale::Up } else { Scale::Keep }, true)
        } else if self.den_denormal {
            (Scale::Up, false)
        } else if self.quotient_denormal {
            let scale = denorm_out && s0_is_num;
            (if scale { Scale::Up } else { Scale::Keep }, true)
        } else if self.reciprocal_denormal {
            (Scale::Down, false)
        } else if self.num_tiny {
            (Scale::Up, !denorm_out)
        } else {
            (Scale::Keep, false)
        }
    }
}

/// `v_div_fmas_f32`: fma, then undo the pre-scaling when VCC is set (by
/// 2^64 up when S2's exponent says the quotient was scaled down, else
/// 2^-64: the hardware-corrected reading of the guide's 2^32), rounded
/// once, so a quotient that lands among the denormals is not rounded twice.
pub fn div_fmas32(a: f32, b: f32, c: f32, vcc: bool, rm: Round) -> f32 {
    if !vcc {
        return fma32(a, b, c, rm);
    }
    let e = if exp32(c) > 127 { 64 } else { -64 };
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return ldexp32(a.mul_add(b, c), e, rm);
    }
    let bits = |x: f32| x.to_bits() as u64;
    f(fma_scaled(F32, bits(a), bits(b), bits(c), e, rm) as u32)
}

pub fn div_fmas64(a: f64, b: f64, c: f64, vcc: bool, rm: Round) -> f64 {
    if !vcc {
        return fma64(a, b, c, rm);
    }
    let e = if exp64(c) > 1023 { 128 } else { -128 };
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return ldexp64(a.mul_add(b, c), e, rm);
    }
    d(fma_scaled(
        F64,
        a.to_bits(),
        b.to_bits(),
        c.to_bits(),
        e,
        rm,
    ))
}

/// (a · b + c) · 2^e with one rounding, finite operands.
fn fma_scaled(fmt: Fmt, a: u64, b: u64, c: u64, e: i32, rm: Round) -> u64 {
    let (a, b, mut c) = (fmt.unpack(a), fmt.unpack(b), fmt.unpack(c));
    let p = Exact {
        neg: a.neg != b.neg,
        sig: a.sig * b.sig,
        exp: a.exp + b.exp + e,
    };
    c.exp += e;
    add_exact(fmt, p, c, rm)
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

/// `v_div_fixup_f16` on f16 bits: the f32 rules (the guide's f16 code has
/// no overflow/underflow clauses, and the f32 ones never fire for values
/// an f16 can hold); a NaN's kind is read from the bits.
pub fn div_fixup16(q: u32, den: u32, num: u32) -> u32 {
    let m = |x: u32| x & 0xffff;
    if F16.is_nan(m(num) as u64) {
        return m(num) | 0x200;
    }
    if F16.is_nan(m(den) as u64) {
        return m(den) | 0x200;
    }
    to_h(div_fixup32(h(q), h(den), h(num)))
}

/// `v_sin` / `v_cos` take revolutions: sin(2π·x). Whole turns come off
/// exactly, then the nearest quarter turn (as a sine/cosine swap), so the
/// host's sine only sees |θ| ≤ π/4: multiples of a quarter turn give exact
/// 0 and ±1, large inputs keep their fraction's accuracy. Infinities and
/// NaN give NaN. (A zero result takes the input's sign.)
pub fn sin_rev(x: f64) -> f64 {
    sin_cos_rev(x, 0)
}

pub fn cos_rev(x: f64) -> f64 {
    sin_cos_rev(x, 1)
}

fn sin_cos_rev(x: f64, quarter: i64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    // Exact: x has at most 24 significant bits.
    let r = x - x.round_ties_even();
    let k = (4.0 * r).round_ties_even();
    let theta = (r - k / 4.0) * std::f64::consts::TAU;
    let v = match (k as i64 + quarter).rem_euclid(4) {
        0 => theta.sin(),
        1 => theta.cos(),
        2 => -theta.sin(),
        _ => -theta.cos(),
    };
    if v == 0.0 {
        0f64.copysign(x)
    } else {
        v
    }
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
pub fn mullit(a: f32, b: f32, c: f32, rm: Round) -> f32 {
    let unwanted = b == -f32::MAX || b == f32::NEG_INFINITY || b.is_nan() || !(c > 0.0);
    if unwanted {
        -f32::MAX
    } else {
        mul32(a, b, rm)
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
        let q = div_fmas32(e, r, q, vcc, Round::Nearest);
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
        assert_eq!(
            divide(n, dn).to_bits(),
            (n / dn).to_bits(),
            "diffgen seed 1"
        );
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
