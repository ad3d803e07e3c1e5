//! WMMA and SWMMAC: 16×16 matrix multiply-accumulate across a wave, one
//! driver for both families, parameterised by where each family keeps the
//! matrix elements (`Layout`).
//!
//! RDNA3 (gfx11): lanes 0–15 hold row m of A and column n of B (lanes
//! 16–31 repeat them); the accumulator's VGPR r in lane l holds
//! D[2r + l/16][l % 16] in wave32 and D[4r + l/16][l % 16] in wave64
//! (whose upper 32 lanes mirror A/B); a 16-bit accumulator uses one half
//! of each VGPR, chosen by OPSEL\[2\].
//!
//! RDNA4 (gfx12): A and B are not replicated: the K elements of a row
//! (column) are spread over both half-waves (and in wave64 over all four
//! 16-lane quarters), so A and B take half the VGPRs; D's VGPR r in lane l
//! holds D[r + 8·(l/16)][l % 16] in wave32, and a 16-bit accumulator is
//! packed two rows to a VGPR. The RDNA4 positions below are those of AMD's
//! Matrix Instruction Calculator (`ROCm/amd_matrix_instruction_calculator`,
//! `InstCalcGfx12`), which implements the RDNA4 ISA guide's WMMA tables.

use softgpu_isa::{Inst, Op, Operand};

use super::fp8::{decode, F8};
use super::valu::to_bf16;
use super::{Env, Exec, Flow, Result, Trap};
use crate::float::{f, h, to_h};
use crate::wave::Wave;

/// Element type of an A or B input.
#[derive(Clone, Copy, PartialEq, Debug)]
enum In {
    F16,
    BF16,
    /// iu8: signed or not by the operand's NEG bit.
    U8,
    /// iu4: likewise.
    U4,
    Fp8,
    Bf8,
}

impl In {
    fn bits(self) -> usize {
        match self {
            In::F16 | In::BF16 => 16,
            In::U8 | In::Fp8 | In::Bf8 => 8,
            In::U4 => 4,
        }
    }
}

/// Element type of the accumulator and result.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Acc {
    F32,
    F16,
    BF16,
    I32,
}

/// Which family's register layout an op uses.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Layout {
    Rdna3,
    Rdna4,
}

/// One WMMA/SWMMAC op: D (16×16) = A (16×K) · B (K×16) + C.
#[derive(Clone, Copy, Debug)]
struct Shape {
    a: In,
    b: In,
    acc: Acc,
    k: usize,
    /// SWMMAC: A is 4:2 sparse (two of each four K values stored, their
    /// positions in the index VGPR, src2), and the accumulator is D.
    sparse: bool,
    layout: Layout,
}

/// Where an element lives: VGPR offset from the operand's first, lane,
/// and bit offset in the 32-bit lane value.
#[derive(Clone, Copy, PartialEq, Debug)]
struct Slot {
    reg: usize,
    lane: usize,
    shift: usize,
}

/// The slot of element k of row/column `i` of a dense A or B input (A's
/// row i, B's column i: both matrices share the layout).
fn dense_slot(
    layout: Layout,
    wave64: bool,
    bits: usize,
    k_total: usize,
    i: usize,
    k: usize,
) -> Slot {
    let shift = bits * (k % (32 / bits));
    let (reg, lane) = match (layout, wave64, bits) {
        // RDNA3: one row per lane, K along the VGPRs.
        (Layout::Rdna3, _, _) => (k * bits / 32, i),
        (Layout::Rdna4, false, 16) => (2 * (k / 8) + (k / 2) % 2, 16 * ((k / 4) % 2) + i),
        (Layout::Rdna4, false, 8) => ((k / 4) % 2, 16 * (k / 8) + i),
        (Layout::Rdna4, false, _) if k_total == 16 => (0, 16 * (k / 8) + i),
        (Layout::Rdna4, false, _) => ((k / 8) % 2, 16 * (k / 16) + i),
        (Layout::Rdna4, true, 16) => ((k / 2) % 2, 32 * ((k / 8) % 2) + 16 * ((k / 4) % 2) + i),
        (Layout::Rdna4, true, 8) => (0, 32 * ((k / 4) % 2) + 16 * ((k / 8) % 2) + i),
        // iu4 16x16x16 uses only lanes 0–31 of a wave64.
        (Layout::Rdna4, true, _) if k_total == 16 => (0, 16 * (k / 8) + i),
        (Layout::Rdna4, true, _) => (0, 32 * ((k / 8) % 2) + 16 * ((k / 16) % 2) + i),
    };
    Slot { reg, lane, shift }
}

/// SWMMAC (RDNA4 only): the dense B's slot of element k of column j.
fn sparse_b_slot(wave64: bool, bits: usize, k_total: usize, j: usize, k: usize) -> Slot {
    let shift = bits * (k % (32 / bits));
    let (reg, lane) = match (wave64, bits) {
        (false, 16) => (4 * (k / 16) + (k / 2) % 4, 16 * ((k / 8) % 2) + j),
        (false, 8) => ((k / 4) % 4, 16 * (k / 16) + j),
        (false, _) if k_total == 32 => ((k / 8) % 2, 16 * (k / 16) + j),
        (false, _) => ((k / 8) % 4, 16 * (k / 32) + j),
        (true, 16) => ((k / 2) % 4, 16 * (k / 8) + j),
        (true, 8) => ((k / 4) % 2, 32 * ((k / 8) % 2) + 16 * (k / 16) + j),
        (true, _) if k_total == 32 => (0, 32 * ((k / 8) % 2) + 16 * (k / 16) + j),
        (true, _) => ((k / 8) % 2, 32 * ((k / 16) % 2) + 16 * (k / 32) + j),
    };
    Slot { reg, lane, shift }
}

/// SWMMAC: for the group of four K values holding (uncompressed) k in row
/// i of the sparse A, the slot of its two stored values (the first at
/// `shift`, the second `bits` above) and the bit offset of its 4-bit index
/// field in the index VGPR (same lane), before the OPSEL set offset.
/// Field bits [1:0] give the first stored value's position in the group,
/// [3:2] the second's (the calculator's notes on 4:2 compression).
fn sparse_a_slot(wave64: bool, bits: usize, k_total: usize, i: usize, k: usize) -> (Slot, usize) {
    let (reg, lane) = match (wave64, bits) {
        (false, 16) => (2 * (k / 16) + (k / 4) % 2, 16 * ((k / 8) % 2) + i),
        (false, 8) => ((k / 8) % 2, 16 * (k / 16) + i),
        (false, _) if k_total == 32 => (0, 16 * (k / 16) + i),
        (false, _) => ((k / 16) % 2, 16 * (k / 32) + i),
        (true, 16) => ((k / 4) % 2, 16 * (k / 8) + i),
        (true, 8) => (0, 32 * ((k / 8) % 2) + 16 * (k / 16) + i),
        // The 4-bit K=32 form's A uses only lanes 0–31 of a wave64.
        (true, _) if k_total == 32 => (0, 16 * (k / 16) + i),
        (true, _) => (0, 32 * ((k / 16) % 2) + 16 * (k / 32) + i),
    };
    // Two values of `bits` per group: 16-bit ones fill a VGPR.
    let shift = if bits == 16 {
        0
    } else {
        2 * bits * ((k / 4) % (16 / bits))
    };
    let index = match (wave64, bits) {
        (false, 16) => 8 * (k / 16) + 4 * ((k / 4) % 2),
        (false, 8) => 4 * ((k / 4) % 4),
        (false, _) if k_total == 32 => 4 * ((k / 4) % 4),
        (false, _) => 4 * ((k / 4) % 8),
        (true, 16 | 8) => 4 * ((k / 4) % 2),
        (true, _) => 4 * ((k / 4) % 4),
    };
    (Slot { reg, lane, shift }, index)
}

/// Index sets in the SWMMAC index VGPR (OPSEL, LLVM's `index_key`, picks
/// one; each takes 32 / sets bits).
fn index_sets(wave64: bool, bits: usize, k_total: usize) -> usize {
    match (wave64, bits) {
        (false, 4) if k_total == 64 => 1,
        (false, _) => 2,
        (true, 8 | 16) => 4,
        (true, _) => 2,
    }
}

/// The slot of D[i][j] (and of C[i][j]); `bits` is the accumulator width.
fn out_slot(layout: Layout, wave64: bool, bits: usize, opsel: u8, i: usize, j: usize) -> Slot {
    match (layout, wave64) {
        (Layout::Rdna3, false) => Slot {
            reg: i / 2,
            lane: 16 * (i % 2) + j,
            shift: if bits == 16 && opsel & 4 != 0 { 16 } else { 0 },
        },
        (Layout::Rdna3, true) => Slot {
            reg: i / 4,
            lane: 16 * (i % 4) + j,
            shift: if bits == 16 && opsel & 4 != 0 { 16 } else { 0 },
        },
        (Layout::Rdna4, false) => Slot {
            reg: if bits == 32 { i % 8 } else { (i / 2) % 4 },
            lane: 16 * (i / 8) + j,
            shift: if bits == 32 { 0 } else { 16 * (i % 2) },
        },
        (Layout::Rdna4, true) => Slot {
            reg: if bits == 32 { i % 4 } else { (i / 2) % 2 },
            lane: 32 * ((i / 4) % 2) + 16 * (i / 8) + j,
            shift: if bits == 32 { 0 } else { 16 * (i % 2) },
        },
    }
}

fn vgpr(op: Operand) -> Result<usize> {
    super::vgpr(op, "a WMMA operand")
}

/// The element of type `ty` at `slot` of the operand starting at VGPR
/// `base`, as f64. For the integer inputs NEG (bit 0 of `neg`) makes them
/// signed; for the 16-bit floats NEG negates the low halves and NEG_HI
/// (bit 1) the high ones (RDNA3 ISA 7.9; LLVM accepts neg_lo and neg_hi
/// separately on gfx12 too). The fp8/bf8 forms take no A/B modifiers
/// (llvm-mc-19 rejects them).
fn element(w: &Wave, base: usize, slot: Slot, ty: In, neg: u8) -> f64 {
    let v = w.vgpr[(base + slot.reg) % w.vgpr.len()][slot.lane] >> slot.shift;
    let signed = neg & 1 != 0;
    let sign = if neg >> (slot.shift / 16) & 1 != 0 {
        -1.0
    } else {
        1.0
    };
    match ty {
        In::F16 => sign * h(v & 0xffff) as f64,
        In::BF16 => sign * f32::from_bits((v & 0xffff) << 16) as f64,
        In::U8 if signed => v as u8 as i8 as f64,
        In::U8 => (v & 0xff) as f64,
        In::U4 if signed => (((v << 28) as i32) >> 28) as f64,
        In::U4 => (v & 0xf) as f64,
        In::Fp8 => decode(F8::Fp8, v as u8) as f64,
        In::Bf8 => decode(F8::Bf8, v as u8) as f64,
    }
}

/// An inline constant C of a 16-bit WMMA is the constant in that type,
/// replicated into both halves (ISA 7.9).
fn const_c(c: Operand, acc: Acc) -> Operand {
    match c {
        Operand::Const(k) if matches!(acc, Acc::F16 | Acc::BF16) => {
            let k = k as u32;
            let float = softgpu_isa::is_inline_float_f32(k);
            let half = match (float, acc) {
                (true, Acc::F16) => to_h(f(k)),
                (true, _) => k >> 16,
                (false, _) => k & 0xffff,
            };
            Operand::Const((half | half << 16) as u64)
        }
        other => other,
    }
}

/// The most VGPRs a 16×16 accumulator spans (8: f32 in wave32, or a
/// 16-bit one kept a half per VGPR).
const MAX_D_REGS: usize = 8;

fn wmma(w: &mut Wave, i: &Inst, s: Shape) -> Result {
    let wave64 = w.lanes == 64;
    let (a, b, d) = (vgpr(i.src[0])?, vgpr(i.src[1])?, vgpr(i.dst[0])?);
    // SWMMAC accumulates into D; src2 is its index VGPR.
    let (c, index) = if s.sparse {
        (Operand::Vgpr(d as u16), Some(vgpr(i.src[2])?))
    } else {
        (const_c(i.src[2], s.acc), None)
    };
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
    // Gather A (16×K, dense) and B (K×16).
    let k_total = s.k;
    let mut ma = [[0f64; 64]; 16];
    let mut mb = [[0f64; 16]; 64];
    for m in 0..16 {
        for k in 0..k_total {
            if s.sparse {
                let slot = sparse_b_slot(wave64, s.b.bits(), k_total, m, k);
                mb[k][m] = element(w, b, slot, s.b, neg_b);
            } else {
                let slot = dense_slot(s.layout, wave64, s.a.bits(), k_total, m, k);
                ma[m][k] = element(w, a, slot, s.a, neg_a);
                let slot = dense_slot(s.layout, wave64, s.b.bits(), k_total, m, k);
                mb[k][m] = element(w, b, slot, s.b, neg_b);
            }
        }
        if let Some(index) = index {
            let bits = s.a.bits();
            let set = (i.mods.opsel as usize) % index_sets(wave64, bits, k_total);
            let set_offset = set * 32 / index_sets(wave64, bits, k_total);
            for group in 0..k_total / 4 {
                let (slot, at) = sparse_a_slot(wave64, bits, k_total, m, 4 * group);
                let idx = w.vgpr[index][slot.lane] >> (at + set_offset);
                for n in 0..2 {
                    let pos = 4 * group + (idx >> (2 * n) & 3) as usize;
                    let slot = Slot {
                        shift: slot.shift + n * bits,
                        ..slot
                    };
                    // Both stored values may name the same position.
                    ma[m][pos] += element(w, a, slot, s.a, neg_a);
                }
            }
        }
    }
    let out_bits = if matches!(s.acc, Acc::F16 | Acc::BF16) {
        16
    } else {
        32
    };
    let regs = 1
        + (0..16 * 16)
            .map(|e| out_slot(s.layout, wave64, out_bits, i.mods.opsel, e / 16, e % 16).reg)
            .max()
            .unwrap_or(0);
    // D starts as its old value so that bits no element maps to (RDNA3's
    // other half of a 16-bit accumulator) are preserved.
    let mut out = [[0u32; 64]; MAX_D_REGS];
    let out = out.get_mut(..regs).ok_or_else(|| Trap::UnsupportedForm {
        op: i.op,
        why: format!("D spans {regs} VGPRs, more than any layout has"),
    })?;
    for (r, o) in out.iter_mut().enumerate() {
        *o = w.vgpr[(d + r) % w.vgpr.len()];
    }
    for m in 0..16 {
        for n in 0..16 {
            let slot = out_slot(s.layout, wave64, out_bits, i.mods.opsel, m, n);
            let c_bits = match c {
                Operand::Vgpr(cr) => w.vgpr[(cr as usize + slot.reg) % w.vgpr.len()][slot.lane],
                other => w.read_s32(other),
            } >> slot.shift;
            let dot: f64 = (0..k_total).map(|k| ma[m][k] * mb[k][n]).sum();
            let word = &mut out[slot.reg][slot.lane];
            match s.acc {
                Acc::F32 => *word = (dot as f32 + c_mod(f(c_bits))).to_bits(),
                Acc::I32 => {
                    let v = dot as i64 + c_bits as i32 as i64;
                    *word = if i.mods.clamp {
                        v.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                    } else {
                        v as i32 as u32
                    };
                }
                Acc::F16 | Acc::BF16 => {
                    let cv = if s.acc == Acc::F16 {
                        h(c_bits & 0xffff)
                    } else {
                        f32::from_bits((c_bits & 0xffff) << 16)
                    };
                    let v = dot as f32 + c_mod(cv);
                    let bits = if s.acc == Acc::F16 {
                        to_h(v)
                    } else {
                        to_bf16(v)
                    };
                    *word = (*word & !(0xffff << slot.shift)) | bits << slot.shift;
                }
            }
        }
    }
    for (r, out) in out.iter().enumerate() {
        let reg = (d + r) % w.vgpr.len();
        w.vgpr[reg][..w.lanes].copy_from_slice(&out[..w.lanes]);
    }
    Ok(Flow::Next)
}

macro_rules! wmma_table {
    ($($op:ident => $layout:ident, $a:ident, $b:ident, $acc:ident, $k:expr, $sparse:expr;)*) => {
        pub const TABLE: &[(Op, Exec)] = &[$((
            Op::$op,
            (|w: &mut Wave, _: &mut Env, i: &Inst| {
                wmma(w, i, Shape {
                    a: In::$a,
                    b: In::$b,
                    acc: Acc::$acc,
                    k: $k,
                    sparse: $sparse,
                    layout: Layout::$layout,
                })
            }) as Exec,
        ),)*];
    };
}

wmma_table! {
    V_WMMA_F32_16X16X16_F16 => Rdna3, F16, F16, F32, 16, false;
    V_WMMA_F32_16X16X16_BF16 => Rdna3, BF16, BF16, F32, 16, false;
    V_WMMA_F16_16X16X16_F16 => Rdna3, F16, F16, F16, 16, false;
    V_WMMA_BF16_16X16X16_BF16 => Rdna3, BF16, BF16, BF16, 16, false;
    V_WMMA_I32_16X16X16_IU8 => Rdna3, U8, U8, I32, 16, false;
    V_WMMA_I32_16X16X16_IU4 => Rdna3, U4, U4, I32, 16, false;
    V_WMMA_F32_16X16X16_F16_GFX12 => Rdna4, F16, F16, F32, 16, false;
    V_WMMA_F32_16X16X16_BF16_GFX12 => Rdna4, BF16, BF16, F32, 16, false;
    V_WMMA_F16_16X16X16_F16_GFX12 => Rdna4, F16, F16, F16, 16, false;
    V_WMMA_BF16_16X16X16_BF16_GFX12 => Rdna4, BF16, BF16, BF16, 16, false;
    V_WMMA_I32_16X16X16_IU8_GFX12 => Rdna4, U8, U8, I32, 16, false;
    V_WMMA_I32_16X16X16_IU4_GFX12 => Rdna4, U4, U4, I32, 16, false;
    V_WMMA_F32_16X16X16_FP8_FP8 => Rdna4, Fp8, Fp8, F32, 16, false;
    V_WMMA_F32_16X16X16_FP8_BF8 => Rdna4, Fp8, Bf8, F32, 16, false;
    V_WMMA_F32_16X16X16_BF8_FP8 => Rdna4, Bf8, Fp8, F32, 16, false;
    V_WMMA_F32_16X16X16_BF8_BF8 => Rdna4, Bf8, Bf8, F32, 16, false;
    V_WMMA_I32_16X16X32_IU4 => Rdna4, U4, U4, I32, 32, false;
    V_SWMMAC_F32_16X16X32_F16 => Rdna4, F16, F16, F32, 32, true;
    V_SWMMAC_F32_16X16X32_BF16 => Rdna4, BF16, BF16, F32, 32, true;
    V_SWMMAC_F16_16X16X32_F16 => Rdna4, F16, F16, F16, 32, true;
    V_SWMMAC_BF16_16X16X32_BF16 => Rdna4, BF16, BF16, BF16, 32, true;
    V_SWMMAC_I32_16X16X32_IU8 => Rdna4, U8, U8, I32, 32, true;
    V_SWMMAC_I32_16X16X32_IU4 => Rdna4, U4, U4, I32, 32, true;
    V_SWMMAC_I32_16X16X64_IU4 => Rdna4, U4, U4, I32, 64, true;
    V_SWMMAC_F32_16X16X32_FP8_FP8 => Rdna4, Fp8, Fp8, F32, 32, true;
    V_SWMMAC_F32_16X16X32_FP8_BF8 => Rdna4, Fp8, Bf8, F32, 32, true;
    V_SWMMAC_F32_16X16X32_BF8_FP8 => Rdna4, Bf8, Fp8, F32, 32, true;
    V_SWMMAC_F32_16X16X32_BF8_BF8 => Rdna4, Bf8, Bf8, F32, 32, true;
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Every element of a 16×K input lands on its own bits of the operand's
    /// VGPRs, and together they fill them (wave32 and wave64).
    #[test]
    fn rdna4_input_layouts_are_bijections() {
        for wave64 in [false, true] {
            let lanes = if wave64 { 64 } else { 32 };
            for (bits, k_total) in [(16, 16), (8, 16), (4, 16), (4, 32)] {
                let mut seen = HashSet::new();
                for i in 0..16 {
                    for k in 0..k_total {
                        let s = dense_slot(Layout::Rdna4, wave64, bits, k_total, i, k);
                        for b in 0..bits {
                            assert!(
                                seen.insert((s.reg, s.lane, s.shift + b)),
                                "{bits} {k_total}"
                            );
                        }
                    }
                }
                // 16·K elements of `bits`: in wave64 iu4 K=16 fills half the lanes.
                assert_eq!(seen.len(), 16 * k_total * bits);
                let used_lanes: HashSet<_> = seen.iter().map(|s| s.1).collect();
                let full = !(wave64 && bits == 4 && k_total == 16);
                assert_eq!(used_lanes.len(), if full { lanes } else { 32 });
            }
            for (bits, k_total) in [(16, 32), (8, 32), (4, 32), (4, 64)] {
                let mut seen = HashSet::new();
                for j in 0..16 {
                    for k in 0..k_total {
                        let s = sparse_b_slot(wave64, bits, k_total, j, k);
                        for b in 0..bits {
                            assert!(seen.insert((s.reg, s.lane, s.shift + b)));
                        }
                    }
                }
                assert_eq!(seen.len(), 16 * k_total * bits);
                // The sparse A: two values per group of four.
                let mut seen = HashSet::new();
                let mut index = HashSet::new();
                for i in 0..16 {
                    for g in 0..k_total / 4 {
                        let (s, at) = sparse_a_slot(wave64, bits, k_total, i, 4 * g);
                        for b in 0..2 * bits {
                            assert!(seen.insert((s.reg, s.lane, s.shift + b)));
                        }
                        assert!(index.insert((s.lane, at)));
                        assert!(at + 4 <= 32 / index_sets(wave64, bits, k_total));
                    }
                }
                assert_eq!(seen.len(), 16 * k_total / 2 * bits);
            }
            for out_bits in [16, 32] {
                let mut seen = HashSet::new();
                for i in 0..16 {
                    for j in 0..16 {
                        let s = out_slot(Layout::Rdna4, wave64, out_bits, 0, i, j);
                        assert!(seen.insert((s.reg, s.lane, s.shift)));
                        assert!(s.lane < lanes);
                    }
                }
                assert_eq!(seen.len(), 256);
            }
        }
    }
}
