//! WMMA: 16×16×16 matrix multiply-accumulate across a wave (RDNA3 layout).
//!
//! Lanes 0–15 hold row m of A and column n of B (lanes 16–31 repeat them);
//! the accumulator's VGPR r in lane l holds D[2r + l/16][l % 16] in wave32
//! and D[4r + l/16][l % 16] in wave64 (whose upper 32 lanes mirror A/B).

use softgpu_isa::{Inst, Op, Operand};

use super::float::{f, h, to_h};
use super::{Env, Exec, Flow, Result, Trap};
use crate::wave::Wave;

/// Element type of the A and B inputs.
#[derive(Clone, Copy, PartialEq)]
enum In {
    F16,
    BF16,
    U8,
    U4,
}

/// Element type of the accumulator and result.
#[derive(Clone, Copy, PartialEq)]
enum Acc {
    F32,
    F16,
    BF16,
    I32,
}

fn vgpr(op: Operand) -> Result<usize> {
    match op {
        Operand::Vgpr(r) => Ok(r as usize),
        _ => Err(Trap::Other("WMMA operands must be VGPRs".into())),
    }
}

/// Element `k` of the 16 inputs that lane `l` holds, as f64 or integer.
/// For the integer inputs `signed` is the operand's NEG bit; for the
/// 16-bit floats `neg` holds NEG (bit 0, the low halves: even k) and
/// NEG_HI (bit 1, the high halves: odd k) of the operand (ISA 7.9).
fn element(w: &Wave, base: usize, l: usize, k: usize, ty: In, neg: u8) -> f64 {
    let signed = neg & 1 != 0;
    let sign = if neg >> (k % 2) & 1 != 0 { -1.0 } else { 1.0 };
    let reg = |idx: usize| w.vgpr[(base + idx) % w.vgpr.len()][l];
    match ty {
        In::F16 => sign * h(reg(k / 2) >> (16 * (k % 2))) as f64,
        In::BF16 => sign * f32::from_bits((reg(k / 2) >> (16 * (k % 2))) << 16) as f64,
        In::U8 => {
            let b = (reg(k / 4) >> (8 * (k % 4))) & 0xff;
            if signed {
                b as u8 as i8 as f64
            } else {
                b as f64
            }
        }
        In::U4 => {
            let n = (reg(k / 8) >> (4 * (k % 8))) & 0xf;
            if signed {
                ((n << 28) as i32 >> 28) as f64
            } else {
                n as f64
            }
        }
    }
}

/// f32 to bf16, rounding to nearest even (a NaN stays a quiet NaN).
fn to_bf16(v: f32) -> u32 {
    let b = v.to_bits();
    if v.is_nan() {
        return (b >> 16) | 0x40;
    }
    (b + 0x7fff + (b >> 16 & 1)) >> 16
}

fn wmma(w: &mut Wave, i: &Inst, input: In, acc: Acc) -> Result {
    let (a, b, c, d) = (vgpr(i.src[0])?, vgpr(i.src[1])?, i.src[2], vgpr(i.dst[0])?);
    // Per operand: bit 0 its NEG bit, bit 1 its NEG_HI bit.
    let neg = |src: u8| (i.mods.neg >> src & 1) | (i.mods.neg_hi >> src & 1) << 1;
    let (neg_a, neg_b) = (neg(0), neg(1));
    // On the float forms {NEG_HI[2], NEG[2]} act on C as {ABS, NEG}.
    let (abs_c, neg_c) = (neg(2) & 2 != 0, neg(2) & 1 != 0);
    let c_mod = |v: f32| {
        let v = if abs_c { v.abs() } else { v };
        if neg_c {
            -v
        } else {
            v
        }
    };
    let rows_per_reg = w.lanes / 16;
    // VOP3P OPSEL[2] (C's and D's half for the 16-bit results).
    let high_half = i.mods.opsel & 4 != 0;
    // An inline constant C of a 16-bit WMMA is the constant in that type,
    // replicated into both halves (ISA 7.9).
    let c = match c {
        Operand::Const(k) if matches!(acc, Acc::F16 | Acc::BF16) => {
            let k = k as u32;
            let float = matches!(
                k,
                0x3f00_0000
                    | 0xbf00_0000
                    | 0x3f80_0000
                    | 0xbf80_0000
                    | 0x4000_0000
                    | 0xc000_0000
                    | 0x4080_0000
                    | 0xc080_0000
                    | 0x3e22_f983
            );
            let half = match (float, acc) {
                (true, Acc::F16) => to_h(f(k)),
                (true, _) => k >> 16,
                (false, _) => k & 0xffff,
            };
            Operand::Const((half | half << 16) as u64)
        }
        other => other,
    };
    // Gather A (row m) and B (column n) from lanes 0..15.
    let mut ma = [[0f64; 16]; 16];
    let mut mb = [[0f64; 16]; 16];
    for m in 0..16 {
        for k in 0..16 {
            ma[m][k] = element(w, a, m, k, input, neg_a);
            mb[k][m] = element(w, b, m, k, input, neg_b);
        }
    }
    let regs = 16 / rows_per_reg;
    let mut out = vec![[0u32; 64]; regs];
    for (r, out) in out.iter_mut().enumerate() {
        for l in 0..w.lanes {
            let (m, n) = (rows_per_reg * r + l / 16, l % 16);
            let c_bits = match c {
                Operand::Vgpr(cr) => w.vgpr[(cr as usize + r) % w.vgpr.len()][l],
                other => w.read_s32(other),
            };
            let dot: f64 = (0..16).map(|k| ma[m][k] * mb[k][n]).sum();
            let old = w.vgpr[(d + r) % w.vgpr.len()][l];
            out[l] = match acc {
                Acc::F32 => (dot as f32 + c_mod(f(c_bits))).to_bits(),
                Acc::I32 => {
                    let v = dot as i64 + c_bits as i32 as i64;
                    if i.mods.clamp {
                        v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                    } else {
                        v as i32 as u32
                    }
                }
                Acc::F16 | Acc::BF16 => {
                    let c_half = if high_half {
                        c_bits >> 16
                    } else {
                        c_bits & 0xffff
                    };
                    let cv = if acc == Acc::F16 {
                        h(c_half)
                    } else {
                        f32::from_bits(c_half << 16)
                    };
                    let v = dot as f32 + c_mod(cv);
                    let bits = if acc == Acc::F16 { to_h(v) } else { to_bf16(v) };
                    if high_half {
                        (old & 0xffff) | bits << 16
                    } else {
                        (old & 0xffff_0000) | bits
                    }
                }
            };
        }
    }
    for (r, out) in out.iter().enumerate() {
        let reg = (d + r) % w.vgpr.len();
        w.vgpr[reg][..w.lanes].copy_from_slice(&out[..w.lanes]);
    }
    Ok(Flow::Next)
}

pub const TABLE: &[(Op, Exec)] = &[
    (
        Op::V_WMMA_F32_16X16X16_F16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::F16, Acc::F32)) as Exec,
    ),
    (
        Op::V_WMMA_F32_16X16X16_BF16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::BF16, Acc::F32)) as Exec,
    ),
    (
        Op::V_WMMA_F16_16X16X16_F16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::F16, Acc::F16)) as Exec,
    ),
    (
        Op::V_WMMA_BF16_16X16X16_BF16,
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::BF16, Acc::BF16)) as Exec,
    ),
    (
        Op::V_WMMA_I32_16X16X16_IU8,
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::U8, Acc::I32)) as Exec,
    ),
    (
        Op::V_WMMA_I32_16X16X16_IU4,
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::U4, Acc::I32)) as Exec,
    ),
];
