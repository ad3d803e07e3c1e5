//! WMMA: 16×16×16 matrix multiply-accumulate across a wave (RDNA3 layout).
//!
//! Lanes 0–15 hold row m of A and column n of B (lanes 16–31 repeat them);
//! the accumulator's VGPR r in lane l holds D[2r + l/16][l % 16] in wave32
//! and D[4r + l/16][l % 16] in wave64 (whose upper 32 lanes mirror A/B).

use softgpu_isa::{Inst, Operand};

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
fn element(w: &Wave, base: usize, l: usize, k: usize, ty: In, signed: bool) -> f64 {
    let reg = |idx: usize| w.vgpr[(base + idx) % w.vgpr.len()][l];
    match ty {
        In::F16 => h(reg(k / 2) >> (16 * (k % 2))) as f64,
        In::BF16 => f32::from_bits((reg(k / 2) >> (16 * (k % 2))) << 16) as f64,
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

fn wmma(w: &mut Wave, i: &Inst, input: In, acc: Acc) -> Result {
    let (a, b, c, d) = (vgpr(i.src[0])?, vgpr(i.src[1])?, i.src[2], vgpr(i.dst[0])?);
    let (sign_a, sign_b) = (i.mods.neg & 1 != 0, i.mods.neg & 2 != 0);
    let rows_per_reg = w.lanes / 16;
    let high_half = i.mods.opsel & 8 != 0;
    // Gather A (row m) and B (column n) from lanes 0..15.
    let mut ma = [[0f64; 16]; 16];
    let mut mb = [[0f64; 16]; 16];
    for m in 0..16 {
        for k in 0..16 {
            ma[m][k] = element(w, a, m, k, input, sign_a);
            mb[k][m] = element(w, b, m, k, input, sign_b);
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
                Acc::F32 => (dot as f32 + f(c_bits)).to_bits(),
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
                    let v = dot as f32 + cv;
                    let bits = if acc == Acc::F16 {
                        to_h(v)
                    } else {
                        v.to_bits() >> 16
                    };
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

pub const TABLE: &[(&str, Exec)] = &[
    (
        "v_wmma_f32_16x16x16_f16",
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::F16, Acc::F32)) as Exec,
    ),
    (
        "v_wmma_f32_16x16x16_bf16",
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::BF16, Acc::F32)) as Exec,
    ),
    (
        "v_wmma_f16_16x16x16_f16",
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::F16, Acc::F16)) as Exec,
    ),
    (
        "v_wmma_bf16_16x16x16_bf16",
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::BF16, Acc::BF16)) as Exec,
    ),
    (
        "v_wmma_i32_16x16x16_iu8",
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::U8, Acc::I32)) as Exec,
    ),
    (
        "v_wmma_i32_16x16x16_iu4",
        (|w: &mut Wave, _: &mut Env, i: &Inst| wmma(w, i, In::U4, Acc::I32)) as Exec,
    ),
];
