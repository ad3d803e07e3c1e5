//! The 8-bit floats: the conversions to and from f32 and the fp8/bf8 dot
//! products.
//!
//! Two families of formats share the op names:
//! - RDNA4 uses the OCP 8-bit formats (LLVM types them `f8E4M3FN` and
//!   `f8E5M2` for gfx12):
//!   - fp8 = E4M3 "FN": bias 7, no infinities, NaN = S.1111.111, largest
//!     finite 448 (S.1111.110), smallest denormal 2^-9.
//!   - bf8 = E5M2: bias 15, IEEE-shaped: S.11111.00 is infinity,
//!     S.11111.xx (xx ≠ 0) NaN, largest finite 57344 (S.11110.11),
//!     smallest denormal 2^-16.
//! - gfx94 (CDNA3) uses the "FNUZ" formats (LLVM's `f8E4M3FNUZ` and
//!   `f8E5M2FNUZ`): the same field widths with the bias one higher (8 and
//!   16), no infinities and no negative zero: 0x80 is the only NaN, every
//!   other code a number (largest 240 and 57344, smallest denormal 2^-10
//!   and 2^-17).
//!
//! A handler is bound to the OCP format and takes the FNUZ one on gfx94
//! ([`F8::on`]), as the instruction's family says.

use softgpu_isa::{Family, Inst, Op, Operand, Ty};

use super::valu::{fetch, store, write_mask};
use super::{Env, Exec, Flow, Result, Scratch};
use crate::float::flush32;
use crate::wave::Wave;

/// One of the 8-bit float formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F8 {
    /// E4M3 (OCP "FN").
    Fp8,
    /// E5M2 (OCP).
    Bf8,
    /// gfx94's E4M3 FNUZ.
    Fp8Fnuz,
    /// gfx94's E5M2 FNUZ.
    Bf8Fnuz,
}

/// How [`encode`] rounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F8Round {
    /// To nearest, ties to even.
    Nearest,
    /// Stochastically, with these 32 random bits (`v_cvt_sr_*`'s S1).
    Stochastic(u32),
}

/// The FNUZ formats' one NaN code (the bit pattern of negative zero).
const FNUZ_NAN: u8 = 0x80;

impl F8 {
    /// The format `family`'s instructions use for this one: gfx94's FNUZ
    /// variant of an OCP format.
    pub const fn on(self, family: Family) -> F8 {
        match (self, family) {
            (F8::Fp8, Family::Gfx94) => F8::Fp8Fnuz,
            (F8::Bf8, Family::Gfx94) => F8::Bf8Fnuz,
            (fmt, _) => fmt,
        }
    }

    /// Whether this is a FNUZ format.
    pub const fn fnuz(self) -> bool {
        matches!(self, F8::Fp8Fnuz | F8::Bf8Fnuz)
    }

    /// Mantissa (fraction) bits.
    pub const fn mant(self) -> u32 {
        match self {
            F8::Fp8 | F8::Fp8Fnuz => 3,
            F8::Bf8 | F8::Bf8Fnuz => 2,
        }
    }

    pub const fn bias(self) -> i32 {
        match self {
            F8::Fp8 => 7,
            F8::Fp8Fnuz => 8,
            F8::Bf8 => 15,
            F8::Bf8Fnuz => 16,
        }
    }

    /// The magnitude code of the largest finite value (448, 57344; FNUZ:
    /// 240, 57344).
    pub const fn max_code(self) -> u8 {
        match self {
            F8::Fp8 => 0x7e,
            F8::Bf8 => 0x7b,
            F8::Fp8Fnuz | F8::Bf8Fnuz => 0x7f,
        }
    }

    /// The code written for a NaN of sign bit `sign` (0 or 0x80). OCP fp8
    /// has one NaN code per sign; FNUZ one NaN in all. uncertain: for OCP
    /// bf8 the quiet NaN with the top mantissa bit set (S.11111.10) is
    /// assumed, as a narrowed IEEE quiet NaN would be.
    pub const fn nan(self, sign: u8) -> u8 {
        match self {
            F8::Fp8 => sign | 0x7f,
            F8::Bf8 => sign | 0x7e,
            F8::Fp8Fnuz | F8::Bf8Fnuz => FNUZ_NAN,
        }
    }

    /// The code of a value too large for the format, of sign bit `sign`:
    /// ±max when saturating; else OCP bf8's infinity, or the NaN of the
    /// formats without infinities.
    const fn overflow(self, sign: u8, saturate: bool) -> u8 {
        match (self, saturate) {
            (_, true) => sign | self.max_code(),
            (F8::Bf8, false) => sign | 0x7c,
            (fmt, false) => fmt.nan(sign),
        }
    }
}

/// The value of an 8-bit float code, exactly (every fp8/bf8 value is an
/// f32). A NaN code gives the f32 quiet NaN with the code's sign
/// (uncertain: the payload hardware writes is not documented in what we
/// read; the canonical quiet NaN is assumed).
pub fn decode(fmt: F8, code: u8) -> f32 {
    if fmt.fnuz() && code == FNUZ_NAN {
        return f32::NAN;
    }
    let sign = if code & 0x80 != 0 { -1.0f32 } else { 1.0 };
    let mag = (code & 0x7f) as u32;
    let m = fmt.mant();
    let (e, frac) = (mag >> m, mag & ((1 << m) - 1));
    let all_ones = (1 << (7 - m)) - 1;
    match fmt {
        F8::Fp8 if mag == 0x7f => return f32::from_bits(0x7fc0_0000 | (code as u32 & 0x80) << 24),
        F8::Bf8 if e == all_ones && frac != 0 => {
            return f32::from_bits(0x7fc0_0000 | (code as u32 & 0x80) << 24)
        }
        F8::Bf8 if e == all_ones => return sign * f32::INFINITY,
        _ => {}
    }
    // Denormals (e = 0) scale the fraction by the smallest normal's
    // exponent; normals carry the implicit one.
    let (sig, exp) = if e == 0 {
        (frac, 1 - fmt.bias())
    } else {
        (frac | 1 << m, e as i32 - fmt.bias())
    };
    sign * sig as f32 * 2f32.powi(exp - m as i32)
}

/// `x` as an 8-bit float code.
///
/// `saturate` is MODE.FP16_OVFL: AMD's generated RDNA4 pseudocode passes
/// the wave's `fp16_ovfl` bit to the f32→fp8/bf8 encoders, and an RDNA4
/// emulator built from it saturates exactly when that bit is set (these
/// instructions have no clamp bit: llvm-mc-19 rejects `clamp` on them).
/// A finite value whose rounded magnitude exceeds the largest finite one
/// becomes ±max when saturating, else fp8's NaN (it has no infinity) or
/// bf8's infinity, the OCP conversions without saturation.
///
/// An infinite input stays infinite in bf8 even when saturating, as
/// FP16_OVFL leaves f16 infinities alone; for fp8, which cannot hold it,
/// it becomes ±448 when saturating and NaN otherwise (uncertain: inferred
/// from the OCP spec's saturating mode, not seen in AMD's text).
///
/// A NaN stays a NaN, keeping its sign (uncertain: the sign).
///
/// The FNUZ formats have no infinity and no negative zero: an infinity,
/// like a finite overflow, gives the NaN unless saturating (then ±max;
/// uncertain: ROCm's MI300 conversion clamps finite values to ±240 itself
/// before `v_cvt_pk_fp8_f32` and leaves infinities to become NaN, which
/// this agrees with), and a zero or a value that rounds to zero gives +0.
///
/// Rounding: the ISA's conversions round to nearest even regardless of
/// MODE's FP_ROUND (uncertain: assumed, as gfx940's pseudocode uses RNE);
/// [`F8Round::Stochastic`] adds the random bits to the bits that rounding
/// drops (see `round_bits`).
pub fn encode(fmt: F8, x: f32, round: F8Round, saturate: bool) -> u8 {
    let bits = x.to_bits();
    let sign = (bits >> 24) as u8 & 0x80;
    if x.is_nan() {
        return fmt.nan(sign);
    }
    if x.is_infinite() {
        return match fmt {
            F8::Bf8 => sign | 0x7c,
            _ => fmt.overflow(sign, saturate),
        };
    }
    // FNUZ's zero is unsigned.
    let zero = if fmt.fnuz() { 0 } else { sign };
    // |x| = sig · 2^lsb, the f32's significand and its last bit's weight.
    let field = (bits >> 23) & 0xff;
    let (sig, lsb) = if field == 0 {
        (bits & 0x7f_ffff, -149)
    } else {
        ((bits & 0x7f_ffff) | 1 << 23, field as i32 - 150)
    };
    if sig == 0 {
        return zero;
    }
    // The weight of the target's last mantissa bit at x's magnitude: the
    // exponent is that of x, but not below the smallest normal's (the
    // denormals share its quantum).
    let m = fmt.mant() as i32;
    let top = lsb + 31 - sig.leading_zeros() as i32; // floor(log2 |x|)
    let mut quantum = top.max(1 - fmt.bias()) - m;
    let mut n = round_bits(sig as u64, quantum - lsb, round);
    // Rounding up may carry into the next binade: 2^(m+1) quanta.
    if n >= 2 << m {
        n >>= 1;
        quantum += 1;
    }
    let mag = if n < 1 << m {
        // A denormal (only possible at the smallest quantum).
        n as u32
    } else {
        ((quantum + m + fmt.bias()) as u32) << m | (n as u32 - (1 << m))
    };
    if mag > fmt.max_code() as u32 {
        return fmt.overflow(sign, saturate);
    }
    if mag == 0 {
        return zero;
    }
    sign | mag as u8
}

/// `sig / 2^drop` rounded to an integer as `round` says (`drop` ≤ 0:
/// exact).
///
/// Stochastic rounding adds S1 to the dropped bits, aligned at their least
/// significant end, and truncates: it rounds up exactly when the dropped
/// bits plus `S1 mod 2^drop` carry out (so S1 = 0 truncates toward zero).
/// uncertain: which bits of S1 hardware adds. This is what AMD's software
/// emulation of these conversions (composable_kernel's `f8_utils`, with
/// its `rng & drop_mask`) does; in the denormal range, where more than 32
/// bits are dropped, S1 then falls short of the top dropped bits and the
/// value is truncated.
fn round_bits(sig: u64, drop: i32, round: F8Round) -> u64 {
    if drop <= 0 {
        return sig << (-drop).min(40);
    }
    // sig < 2^24: past 100 dropped bits the kept part is 0 and nothing can
    // round up (the remainder is below half, and below 2^drop − 2^32).
    if drop > 100 {
        return 0;
    }
    let sig = sig as u128;
    let kept = sig >> drop;
    let rem = sig & ((1u128 << drop) - 1);
    let up = match round {
        F8Round::Nearest => {
            let half = 1u128 << (drop - 1);
            rem > half || (rem == half && kept & 1 == 1)
        }
        F8Round::Stochastic(r) => {
            let r = if drop >= 32 {
                r as u128
            } else {
                (r & ((1u32 << drop) - 1)) as u128
            };
            rem + r >= 1u128 << drop
        }
    };
    (kept + up as u128) as u64
}

/// The VOP3 byte select of `v_cvt_f32_fp8`/`bf8`: LLVM encodes its
/// `byte_sel` operand with the bits reversed into OP_SEL[1:0]
/// (llvm-mc-19 puts byte_sel:1 in OP_SEL[1], byte_sel:2 in OP_SEL[0];
/// LLVM's `VOP3FP8OpSel_src_bytesel` class notes the reversal as
/// intentional), so byte = 2·OP_SEL[0] + OP_SEL[1]. The VOP1 form has no
/// select and reads byte 0. gfx94 selects with SDWA's `src0_sel` instead
/// (its VOP3 form takes no op_sel): the SDWA fetch brings the selected
/// byte or word down to bit 0.
fn src_byte(i: &Inst) -> u32 {
    ((i.mods.opsel & 1) << 1 | (i.mods.opsel >> 1) & 1) as u32
}

/// `v_cvt_f32_fp8`/`bf8`: one byte of S0 as an f32. S0 is read raw (as
/// B32: the op table types the fp8 form's source F32, but it holds bytes,
/// which denormal flushing must not touch; LLVM allows no abs/neg on it).
fn cvt_f32(w: &mut Wave, env: &mut Env, i: &Inst, fmt: F8) -> Result {
    let fmt = fmt.on(i.family);
    let Scratch {
        src: [buf, ..],
        res: [res, _],
        ..
    } = &mut *env.tmp;
    let src = fetch(w, i, 0, Ty::B32, buf);
    let shift = 8 * src_byte(i);
    for l in 0..w.lanes {
        res[l] = decode(fmt, (src[l] >> shift) as u8).to_bits();
    }
    let mask = write_mask(w, i);
    store(w, i, Ty::F32, res, mask);
    Ok(Flow::Next)
}

/// `v_cvt_pk_f32_fp8`/`bf8`: the two bytes of one 16-bit word of S0 as
/// two f32 in D[0] (low byte) and D[1] (high byte). OP_SEL[0] picks the
/// high word (llvm-mc-19 encodes LLVM's `op_sel:[1,0]`, the intrinsic's
/// word-select argument, there; the true16 syntax writes it `v0.h`).
fn cvt_pk_f32(w: &mut Wave, env: &mut Env, i: &Inst, fmt: F8) -> Result {
    let fmt = fmt.on(i.family);
    if i.sdwa
        .is_some_and(|s| s.dst_sel != softgpu_isa::Sdwa::DWORD)
    {
        return Err(super::Trap::UnsupportedForm {
            op: i.op,
            why: "an SDWA DST_SEL other than DWORD: the result is two whole VGPRs".into(),
        });
    }
    let [buf, ..] = &mut env.tmp.src;
    let src = *fetch(w, i, 0, Ty::B32, buf);
    let high = i.mods.opsel & 1 != 0 || matches!(i.src[0], Operand::VgprHi(_));
    let shift = if high { 16 } else { 0 };
    let d = super::vgpr(i.dst[0], "the destination")?;
    let n = w.vgpr.len();
    let mask = write_mask(w, i);
    for l in 0..w.lanes {
        if mask >> l & 1 != 0 {
            let word = src[l] >> shift;
            w.vgpr[d][l] = decode(fmt, word as u8).to_bits();
            w.vgpr[(d + 1) % n][l] = decode(fmt, (word >> 8) as u8).to_bits();
        }
    }
    Ok(Flow::Next)
}

/// `v_cvt_pk_fp8_f32`/`bf8`: S0 and S1 (f32, with abs/neg) converted and
/// packed into one 16-bit word of D, S0 in its low byte; OP_SEL[3] (LLVM's
/// `op_sel:[0,0,1]`, the intrinsic's word-select) picks the high word.
/// The other word of D is preserved (gfx940 pseudocode: "D0[31:16] are
/// preserved"; LLVM ties the old destination to an input of the
/// intrinsic, `llvm.amdgcn.cvt.pk.fp8.f32(float, float, i32 old, i1)`).
fn cvt_pk_8(w: &mut Wave, env: &mut Env, i: &Inst, fmt: F8) -> Result {
    let fmt = fmt.on(i.family);
    let sat = w.mode.fp16_ovfl();
    let shift = if i.mods.opsel & 8 != 0 { 16 } else { 0 };
    let enc = |x: u32| encode(fmt, f32::from_bits(x), F8Round::Nearest, sat) as u32;
    convert_into(w, env, i, Ty::F32, 0xffff << shift, |a, b| {
        (enc(a) | enc(b) << 8) << shift
    })
}

/// The conversions into part of D: S0 (f32) and S1 (typed `s1`) fetched
/// with their modifiers, `convert` run on each lane's pair, and the bits
/// of `field` written into D's enabled lanes, the others kept.
fn convert_into(
    w: &mut Wave,
    env: &mut Env,
    i: &Inst,
    s1: Ty,
    field: u32,
    convert: impl Fn(u32, u32) -> u32,
) -> Result {
    let d = super::vgpr(i.dst[0], "the destination")?;
    let Scratch {
        src: [b0, b1, _],
        res: [res, _],
        ..
    } = &mut *env.tmp;
    let a = fetch(w, i, 0, Ty::F32, b0);
    let b = fetch(w, i, 1, s1, b1);
    for l in 0..w.lanes {
        res[l] = convert(a[l], b[l]);
    }
    let mask = write_mask(w, i);
    let d = &mut w.vgpr[d];
    for l in 0..w.lanes {
        if mask >> l & 1 != 0 {
            d[l] = (d[l] & !field) | (res[l] & field);
        }
    }
    Ok(Flow::Next)
}

/// `v_cvt_sr_fp8_f32`/`bf8`: S0 (f32, with abs/neg) stochastically
/// rounded with the random bits of S1 (raw) into one byte of D. The byte
/// is OP_SEL[3:2] as a number (llvm-mc-19 puts `byte_sel:1` in OP_SEL[2]
/// and `byte_sel:2` in OP_SEL[3]); the other bytes are preserved (the
/// intrinsic takes the old value, `llvm.amdgcn.cvt.sr.fp8.f32(float, i32
/// rnd, i32 old, i32 byte)`).
fn cvt_sr_8(w: &mut Wave, env: &mut Env, i: &Inst, fmt: F8) -> Result {
    let fmt = fmt.on(i.family);
    let sat = w.mode.fp16_ovfl();
    let shift = 8 * ((i.mods.opsel >> 2) & 3) as u32;
    convert_into(w, env, i, Ty::B32, 0xff << shift, |a, r| {
        (encode(fmt, f32::from_bits(a), F8Round::Stochastic(r), sat) as u32) << shift
    })
}

/// `v_dot4_f32_{fp8,bf8}_{fp8,bf8}`: D = S2 + Σ_k A.byte[k] · B.byte[k]
/// (A in `fa`, B in `fb`).
///
/// The four products and the f32 accumulator are summed exactly (in f64:
/// fp8 products and their sum are exact there, bf8 ones nearly always)
/// and rounded once to f32, nearest even (uncertain: hardware's internal
/// precision and rounding; one rounding is what a fused dot product
/// does). A NaN or ∞·0 gives a NaN, as IEEE arithmetic would.
///
/// Modifiers: LLVM accepts only `neg_lo`/`neg_hi` on S2 (not on A/B, no
/// op_sel, no clamp). As for WMMA's f32 C, NEG negates S2 and NEG_HI
/// takes its absolute value (uncertain: assumed from the WMMA rule of the
/// RDNA3 ISA, section 7.9). f32 output denormals flush as MODE says.
fn dot4(w: &mut Wave, env: &mut Env, i: &Inst, fa: F8, fb: F8) -> Result {
    let Scratch {
        src: [b0, b1, b2],
        res: [res, _],
        ..
    } = &mut *env.tmp;
    let a = w.vsrc(i.src[0], b0);
    let b = w.vsrc(i.src[1], b1);
    let c = w.vsrc(i.src[2], b2);
    let (neg_c, abs_c) = (i.mods.neg & 4 != 0, i.mods.neg_hi & 4 != 0);
    let flush_in = w.mode.flush_in_f32();
    let flush_out = w.mode.flush_out_f32();
    for l in 0..w.lanes {
        let mut cv = f32::from_bits(if flush_in { flush32(c[l]) } else { c[l] });
        if abs_c {
            cv = cv.abs();
        }
        if neg_c {
            cv = -cv;
        }
        let dot: f64 = (0..4)
            .map(|k| {
                let x = decode(fa, (a[l] >> (8 * k)) as u8) as f64;
                let y = decode(fb, (b[l] >> (8 * k)) as u8) as f64;
                x * y
            })
            .sum();
        let v = ((dot + cv as f64) as f32).to_bits();
        res[l] = if flush_out { flush32(v) } else { v };
    }
    let mask = w.exec();
    w.write_v32(i.dst[0], res, mask);
    Ok(Flow::Next)
}

pub const TABLE: &[(Op, Exec)] = &[
    (Op::V_CVT_F32_FP8, bind!(cvt_f32, F8::Fp8)),
    (Op::V_CVT_F32_BF8, bind!(cvt_f32, F8::Bf8)),
    (Op::V_CVT_PK_F32_FP8, bind!(cvt_pk_f32, F8::Fp8)),
    (Op::V_CVT_PK_F32_BF8, bind!(cvt_pk_f32, F8::Bf8)),
    (Op::V_CVT_PK_FP8_F32, bind!(cvt_pk_8, F8::Fp8)),
    (Op::V_CVT_PK_BF8_F32, bind!(cvt_pk_8, F8::Bf8)),
    (Op::V_CVT_SR_FP8_F32, bind!(cvt_sr_8, F8::Fp8)),
    (Op::V_CVT_SR_BF8_F32, bind!(cvt_sr_8, F8::Bf8)),
    (Op::V_DOT4_F32_FP8_FP8, bind!(dot4, F8::Fp8, F8::Fp8)),
    (Op::V_DOT4_F32_FP8_BF8, bind!(dot4, F8::Fp8, F8::Bf8)),
    (Op::V_DOT4_F32_BF8_FP8, bind!(dot4, F8::Bf8, F8::Fp8)),
    (Op::V_DOT4_F32_BF8_BF8, bind!(dot4, F8::Bf8, F8::Bf8)),
];

#[cfg(test)]
mod tests {
    use super::*;

    const FORMATS: [F8; 4] = [F8::Fp8, F8::Bf8, F8::Fp8Fnuz, F8::Bf8Fnuz];

    /// The value of a code straight from the format's definition, as f64
    /// (independent of `decode`): None for NaN.
    fn by_definition(fmt: F8, code: u8) -> Option<f64> {
        let (ebits, mbits, bias) = match fmt {
            F8::Fp8 => (4, 3, 7),
            F8::Bf8 => (5, 2, 15),
            F8::Fp8Fnuz => (4, 3, 8),
            F8::Bf8Fnuz => (5, 2, 16),
        };
        if fmt.fnuz() && code == 0x80 {
            return None;
        }
        let s = if code >> 7 == 1 { -1.0 } else { 1.0 };
        let e = (code as i32 >> mbits) & ((1 << ebits) - 1);
        let m = code as i32 & ((1 << mbits) - 1);
        let emax = (1 << ebits) - 1;
        match fmt {
            F8::Fp8 if e == emax && m == (1 << mbits) - 1 => return None,
            F8::Bf8 if e == emax && m != 0 => return None,
            F8::Bf8 if e == emax => return Some(s * f64::INFINITY),
            _ => {}
        }
        let frac = m as f64 / (1 << mbits) as f64;
        Some(if e == 0 {
            s * frac * 2f64.powi(1 - bias)
        } else {
            s * (1.0 + frac) * 2f64.powi(e - bias)
        })
    }

    /// The finite non-negative codes in increasing order of value.
    fn finite_codes(fmt: F8) -> Vec<u8> {
        (0..=fmt.max_code()).collect()
    }

    #[test]
    fn decode_matches_the_definition_for_every_code() {
        for fmt in FORMATS {
            for code in 0..=255u8 {
                let got = decode(fmt, code);
                match by_definition(fmt, code) {
                    None => assert!(got.is_nan(), "{fmt:?} {code:#x}"),
                    Some(v) => {
                        assert_eq!(got as f64, v, "{fmt:?} {code:#x}");
                        assert_eq!(got.is_sign_negative(), code & 0x80 != 0);
                    }
                }
            }
        }
        assert_eq!(decode(F8::Fp8, 0x7e), 448.0);
        assert_eq!(decode(F8::Bf8, 0x7b), 57344.0);
        assert_eq!(decode(F8::Fp8, 0x01), 2f32.powi(-9));
        assert_eq!(decode(F8::Bf8, 0x01), 2f32.powi(-16));
    }

    #[test]
    fn every_code_round_trips() {
        for fmt in FORMATS {
            for code in 0..=255u8 {
                let v = decode(fmt, code);
                for sat in [false, true] {
                    let back = encode(fmt, v, F8Round::Nearest, sat);
                    if v.is_nan() {
                        assert_eq!(back, fmt.nan(code & 0x80));
                    } else if !(fmt == F8::Fp8 && v.is_infinite()) {
                        assert_eq!(back, code, "{fmt:?} {code:#x} sat {sat}");
                    }
                    // Stochastic rounding of a representable value is exact
                    // whatever the random bits.
                    if !v.is_nan() {
                        for r in [0, 1, 0x8000_0000, u32::MAX] {
                            assert_eq!(encode(fmt, v, F8Round::Stochastic(r), sat), code);
                        }
                    }
                }
            }
        }
    }

    /// Between two neighbours: below the midpoint goes down, above goes
    /// up, the midpoint itself to the even code. Stochastic rounding with
    /// no random bits truncates, with all ones rounds any inexact value up.
    #[test]
    fn rounds_to_nearest_even_between_every_pair() {
        for fmt in FORMATS {
            let codes = finite_codes(fmt);
            for pair in codes.windows(2) {
                let (lo, hi) = (pair[0], pair[1]);
                let (a, b) = (decode(fmt, lo) as f64, decode(fmt, hi) as f64);
                let mid = (a + b) / 2.0;
                let even = if lo & 1 == 0 { lo } else { hi };
                for sign in [0u8, 0x80] {
                    let s = if sign != 0 { -1.0 } else { 1.0 };
                    // The code of magnitude `c` with this sign: FNUZ's zero
                    // is unsigned.
                    let signed = |c: u8| if fmt.fnuz() && c == 0 { 0 } else { sign | c };
                    let enc = |x: f64| encode(fmt, (s * x) as f32, F8Round::Nearest, false);
                    assert_eq!(enc(mid), signed(even), "{fmt:?} mid {mid}");
                    let below = mid - (b - a) / 64.0;
                    let above = mid + (b - a) / 64.0;
                    assert_eq!(enc(below), signed(lo), "{fmt:?} {below}");
                    assert_eq!(enc(above), signed(hi), "{fmt:?} {above}");
                    let sr = |x: f64, r| encode(fmt, (s * x) as f32, F8Round::Stochastic(r), false);
                    assert_eq!(sr(above, 0), signed(lo));
                    assert_eq!(sr(below, u32::MAX), signed(hi));
                }
            }
        }
    }

    /// Every f32 bit pattern in a sweep against the nearest code found by
    /// a linear search over all codes (ties to the even code).
    #[test]
    fn nearest_agrees_with_a_search_over_all_codes() {
        for fmt in FORMATS {
            let codes = finite_codes(fmt);
            let max = decode(fmt, fmt.max_code()) as f64;
            let ulp_max = max - decode(fmt, fmt.max_code() - 1) as f64;
            for bits in (0..0x7f80_0000u32).step_by(997) {
                let x = f32::from_bits(bits) as f64;
                let got = encode(fmt, x as f32, F8Round::Nearest, false);
                if x > max + ulp_max / 2.0 || (x == max + ulp_max / 2.0 && fmt.max_code() & 1 == 1)
                {
                    let over = match fmt {
                        F8::Fp8 => 0x7f,
                        F8::Bf8 => 0x7c,
                        _ => 0x80,
                    };
                    assert_eq!(got, over, "{fmt:?} {x}");
                    assert_eq!(
                        encode(fmt, x as f32, F8Round::Nearest, true),
                        fmt.max_code()
                    );
                    continue;
                }
                let mut best = 0u8;
                for &c in &codes {
                    let (dc, db) = (
                        (decode(fmt, c) as f64 - x).abs(),
                        (decode(fmt, best) as f64 - x).abs(),
                    );
                    if dc < db || (dc == db && c & 1 == 0) {
                        best = c;
                    }
                }
                assert_eq!(got, best, "{fmt:?} {x:e}");
            }
        }
    }

    #[test]
    fn overflow_saturates_only_under_fp16_ovfl() {
        // fp8: 464 is the midpoint of 448 and (the missing) 480: ties to
        // the even 448; anything above overflows.
        assert_eq!(encode(F8::Fp8, 464.0, F8Round::Nearest, false), 0x7e);
        assert_eq!(encode(F8::Fp8, 465.0, F8Round::Nearest, false), 0x7f);
        assert_eq!(encode(F8::Fp8, -465.0, F8Round::Nearest, false), 0xff);
        assert_eq!(encode(F8::Fp8, 1e30, F8Round::Nearest, true), 0x7e);
        assert_eq!(encode(F8::Fp8, -1e30, F8Round::Nearest, true), 0xfe);
        assert_eq!(
            encode(F8::Fp8, f32::INFINITY, F8Round::Nearest, false),
            0x7f
        );
        assert_eq!(encode(F8::Fp8, f32::INFINITY, F8Round::Nearest, true), 0x7e);
        // bf8: 61440 is the midpoint of 57344 and 65536 (odd max code):
        // ties to even go up, to infinity.
        assert_eq!(encode(F8::Bf8, 61439.0, F8Round::Nearest, false), 0x7b);
        assert_eq!(encode(F8::Bf8, 61440.0, F8Round::Nearest, false), 0x7c);
        assert_eq!(encode(F8::Bf8, 61440.0, F8Round::Nearest, true), 0x7b);
        assert_eq!(
            encode(F8::Bf8, f32::NEG_INFINITY, F8Round::Nearest, true),
            0xfc
        );
        assert_eq!(encode(F8::Bf8, f32::NAN, F8Round::Nearest, true), 0x7e);
        // Stochastic rounding past the largest value overflows the same way.
        assert_eq!(
            encode(F8::Fp8, 449.0, F8Round::Stochastic(u32::MAX), false),
            0x7f
        );
        assert_eq!(
            encode(F8::Fp8, 449.0, F8Round::Stochastic(u32::MAX), true),
            0x7e
        );
        assert_eq!(encode(F8::Fp8, 449.0, F8Round::Stochastic(0), false), 0x7e);
    }

    #[test]
    fn underflow_and_zero() {
        for fmt in FORMATS {
            // FNUZ has no negative zero (0x80 is its NaN).
            let neg_zero = if fmt.fnuz() { 0 } else { 0x80 };
            assert_eq!(encode(fmt, 0.0, F8Round::Nearest, false), 0);
            assert_eq!(encode(fmt, -0.0, F8Round::Nearest, false), neg_zero);
            assert_eq!(encode(fmt, -1e-30, F8Round::Nearest, false), neg_zero);
            assert_eq!(encode(fmt, 1e-30, F8Round::Nearest, false), 0);
            assert_eq!(encode(fmt, f32::from_bits(1), F8Round::Nearest, false), 0);
            let tiny = decode(fmt, 1);
            // Half the smallest denormal ties to even (0); above it, up.
            assert_eq!(encode(fmt, tiny / 2.0, F8Round::Nearest, false), 0);
            assert_eq!(encode(fmt, tiny * 0.51, F8Round::Nearest, false), 1);
            assert_eq!(encode(fmt, -tiny * 1.5, F8Round::Nearest, false), 0x82);
        }
    }

    /// gfx94's FNUZ formats: the values MI300's conversions are known by
    /// (ROCm's hip_fp8 host reference: 1.0 is 0x40 in both, the largest
    /// values 240 and 57344), overflow and infinities to the one NaN
    /// unless saturating.
    #[test]
    fn fnuz_values_and_overflow() {
        assert_eq!(decode(F8::Fp8Fnuz, 0x40), 1.0);
        assert_eq!(decode(F8::Fp8Fnuz, 0x48), 2.0);
        assert_eq!(decode(F8::Fp8Fnuz, 0x7f), 240.0);
        assert_eq!(decode(F8::Fp8Fnuz, 0xff), -240.0);
        assert_eq!(decode(F8::Fp8Fnuz, 0x01), 2f32.powi(-10));
        assert_eq!(decode(F8::Bf8Fnuz, 0x40), 1.0);
        assert_eq!(decode(F8::Bf8Fnuz, 0x7f), 57344.0);
        assert_eq!(decode(F8::Bf8Fnuz, 0x01), 2f32.powi(-17));
        assert!(decode(F8::Bf8Fnuz, 0x80).is_nan());
        assert_eq!(decode(F8::Fp8Fnuz, 0x00), 0.0);
        let enc = |fmt, x, sat| encode(fmt, x, F8Round::Nearest, sat);
        assert_eq!(enc(F8::Fp8Fnuz, 1.0, false), 0x40);
        assert_eq!(enc(F8::Fp8Fnuz, 2.0, false), 0x48);
        // 248 is the midpoint of 240 (0x7f, odd) and 256: the tie goes
        // to the even side, past the largest value.
        assert_eq!(enc(F8::Fp8Fnuz, 247.0, false), 0x7f);
        assert_eq!(enc(F8::Fp8Fnuz, 248.0, false), 0x80);
        assert_eq!(enc(F8::Fp8Fnuz, -249.0, true), 0xff);
        assert_eq!(enc(F8::Bf8Fnuz, f32::INFINITY, false), 0x80);
        assert_eq!(enc(F8::Bf8Fnuz, f32::NEG_INFINITY, true), 0xff);
        assert_eq!(enc(F8::Bf8Fnuz, -f32::NAN, true), 0x80);
        assert_eq!(F8::Fp8.on(Family::Gfx94), F8::Fp8Fnuz);
        assert_eq!(F8::Bf8.on(Family::Gfx12), F8::Bf8);
    }

    /// Stochastic rounding is unbiased over evenly spread random bits.
    #[test]
    fn stochastic_rounding_averages_to_the_value() {
        let x = 1.0 + 1.0 / 32.0; // a quarter of the way from 1.0 to 1.125
        let n = 1 << 12;
        let sum: f64 = (0..n)
            .map(|k| {
                let r = (k as u32) << 8; // spread over the 20 dropped bits
                decode(F8::Fp8, encode(F8::Fp8, x, F8Round::Stochastic(r), false)) as f64
            })
            .sum();
        assert!((sum / n as f64 - x as f64).abs() < 1e-3);
    }
}
