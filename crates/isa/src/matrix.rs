//! CDNA's matrix-core instructions (MFMA and SMFMAC): each op's shape and
//! element types, the one table the executor's semantics and the
//! runtime's time estimate read.
//!
//! An op computes, per block b, D_b (M×N) = A_b (M×K) · B_b (K×N) + C_b.
//! The shapes are those of AMD's Matrix Instruction Calculator (its CDNA2
//! and CDNA3 tables) and the ops' names.

use crate::Op;

/// The element type of an A or B input.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Elem {
    F32,
    /// An f32 word used with a 10-bit mantissa (gfx94's xf32).
    Xf32,
    F16,
    Bf16,
    I8,
    /// gfx94's FNUZ E4M3.
    Fp8,
    /// gfx94's FNUZ E5M2.
    Bf8,
    F64,
}

impl Elem {
    /// Bits one element takes in a register.
    pub const fn bits(self) -> usize {
        match self {
            Elem::F32 | Elem::Xf32 => 32,
            Elem::F16 | Elem::Bf16 => 16,
            Elem::I8 | Elem::Fp8 | Elem::Bf8 => 8,
            Elem::F64 => 64,
        }
    }
}

/// The element type of C and D.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Accum {
    F32,
    I32,
    F64,
}

/// One MFMA or SMFMAC.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct MatrixShape {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Independent products a wave computes at once.
    pub blocks: usize,
    pub a: Elem,
    pub b: Elem,
    pub acc: Accum,
    /// SMFMAC: A is 4:2 sparse (K counts the dense columns), src2 its
    /// index VGPR, D the accumulator.
    pub sparse: bool,
}

impl MatrixShape {
    /// Bits of a C or D element.
    pub const fn out_bits(self) -> usize {
        match self.acc {
            Accum::F64 => 64,
            Accum::F32 | Accum::I32 => 32,
        }
    }

    /// VGPRs of C/D.
    pub const fn out_regs(self) -> usize {
        self.blocks * self.m * self.n * self.out_bits() / 32 / 64
    }

    /// Multiplies and adds the matrix core performs for one wave's
    /// instruction, two per multiply-accumulate: `2·M·N·K·blocks`, with a
    /// sparse A's K halved (AMD quotes a sparse rate twice the dense one
    /// for the dense-equivalent count; the core does half the products).
    pub const fn ops(self) -> u64 {
        let k = if self.sparse { self.k / 2 } else { self.k };
        (2 * self.m * self.n * k * self.blocks) as u64
    }
}

macro_rules! matrix_table {
    ($($op:ident => $m:expr, $n:expr, $k:expr, $blocks:expr, $a:ident, $b:ident, $acc:ident, $sparse:expr;)*) => {
        /// Each op's shape, named as the op.
        mod each {
            use super::{Accum, Elem, MatrixShape};
            $(pub const $op: MatrixShape = MatrixShape {
                m: $m,
                n: $n,
                k: $k,
                blocks: $blocks,
                a: Elem::$a,
                b: Elem::$b,
                acc: Accum::$acc,
                sparse: $sparse,
            };)*
        }

        /// Every MFMA and SMFMAC of gfx90a and gfx94, with its shape.
        pub const SHAPES: &[(Op, MatrixShape)] = &[$((Op::$op, each::$op),)*];

        /// The shape of `op`, if it is an MFMA or SMFMAC.
        pub const fn shape(op: Op) -> Option<MatrixShape> {
            match op {
                $(Op::$op => Some(each::$op),)*
                _ => None,
            }
        }
    };
}

matrix_table! {
    // gfx90a (CDNA2).
    V_MFMA_F32_32X32X1F32 => 32, 32, 1, 2, F32, F32, F32, false;
    V_MFMA_F32_16X16X1F32 => 16, 16, 1, 4, F32, F32, F32, false;
    V_MFMA_F32_4X4X1F32 => 4, 4, 1, 16, F32, F32, F32, false;
    V_MFMA_F32_32X32X2F32 => 32, 32, 2, 1, F32, F32, F32, false;
    V_MFMA_F32_16X16X4F32 => 16, 16, 4, 1, F32, F32, F32, false;
    V_MFMA_F32_32X32X4F16 => 32, 32, 4, 2, F16, F16, F32, false;
    V_MFMA_F32_16X16X4F16 => 16, 16, 4, 4, F16, F16, F32, false;
    V_MFMA_F32_4X4X4F16 => 4, 4, 4, 16, F16, F16, F32, false;
    V_MFMA_F32_32X32X8F16 => 32, 32, 8, 1, F16, F16, F32, false;
    V_MFMA_F32_16X16X16F16 => 16, 16, 16, 1, F16, F16, F32, false;
    V_MFMA_I32_32X32X4I8 => 32, 32, 4, 2, I8, I8, I32, false;
    V_MFMA_I32_16X16X4I8 => 16, 16, 4, 4, I8, I8, I32, false;
    V_MFMA_I32_4X4X4I8 => 4, 4, 4, 16, I8, I8, I32, false;
    V_MFMA_I32_32X32X8I8 => 32, 32, 8, 1, I8, I8, I32, false;
    V_MFMA_I32_16X16X16I8 => 16, 16, 16, 1, I8, I8, I32, false;
    V_MFMA_F32_32X32X4BF16_1K => 32, 32, 4, 2, Bf16, Bf16, F32, false;
    V_MFMA_F32_16X16X4BF16_1K => 16, 16, 4, 4, Bf16, Bf16, F32, false;
    V_MFMA_F32_4X4X4BF16_1K => 4, 4, 4, 16, Bf16, Bf16, F32, false;
    V_MFMA_F32_32X32X8BF16_1K => 32, 32, 8, 1, Bf16, Bf16, F32, false;
    V_MFMA_F32_16X16X16BF16_1K => 16, 16, 16, 1, Bf16, Bf16, F32, false;
    V_MFMA_F32_32X32X2BF16 => 32, 32, 2, 2, Bf16, Bf16, F32, false;
    V_MFMA_F32_16X16X2BF16 => 16, 16, 2, 4, Bf16, Bf16, F32, false;
    V_MFMA_F32_4X4X2BF16 => 4, 4, 2, 16, Bf16, Bf16, F32, false;
    V_MFMA_F32_32X32X4BF16 => 32, 32, 4, 1, Bf16, Bf16, F32, false;
    V_MFMA_F32_16X16X8BF16 => 16, 16, 8, 1, Bf16, Bf16, F32, false;
    V_MFMA_F64_16X16X4F64 => 16, 16, 4, 1, F64, F64, F64, false;
    V_MFMA_F64_4X4X4F64 => 4, 4, 4, 4, F64, F64, F64, false;
    // gfx94 (CDNA3): renamed forms, xf32, i8 with K doubled, fp8/bf8.
    V_MFMA_F32_16X16X8_XF32 => 16, 16, 8, 1, Xf32, Xf32, F32, false;
    V_MFMA_F32_32X32X4_XF32 => 32, 32, 4, 1, Xf32, Xf32, F32, false;
    V_MFMA_F32_32X32X1_2B_F32 => 32, 32, 1, 2, F32, F32, F32, false;
    V_MFMA_F32_16X16X1_4B_F32 => 16, 16, 1, 4, F32, F32, F32, false;
    V_MFMA_F32_4X4X1_16B_F32 => 4, 4, 1, 16, F32, F32, F32, false;
    V_MFMA_F32_32X32X2_F32 => 32, 32, 2, 1, F32, F32, F32, false;
    V_MFMA_F32_16X16X4_F32 => 16, 16, 4, 1, F32, F32, F32, false;
    V_MFMA_F32_32X32X4_2B_F16 => 32, 32, 4, 2, F16, F16, F32, false;
    V_MFMA_F32_16X16X4_4B_F16 => 16, 16, 4, 4, F16, F16, F32, false;
    V_MFMA_F32_4X4X4_16B_F16 => 4, 4, 4, 16, F16, F16, F32, false;
    V_MFMA_F32_32X32X8_F16 => 32, 32, 8, 1, F16, F16, F32, false;
    V_MFMA_F32_16X16X16_F16 => 16, 16, 16, 1, F16, F16, F32, false;
    V_MFMA_I32_32X32X4_2B_I8 => 32, 32, 4, 2, I8, I8, I32, false;
    V_MFMA_I32_16X16X4_4B_I8 => 16, 16, 4, 4, I8, I8, I32, false;
    V_MFMA_I32_4X4X4_16B_I8 => 4, 4, 4, 16, I8, I8, I32, false;
    V_MFMA_I32_32X32X16_I8 => 32, 32, 16, 1, I8, I8, I32, false;
    V_MFMA_I32_16X16X32_I8 => 16, 16, 32, 1, I8, I8, I32, false;
    V_MFMA_F32_32X32X4_2B_BF16 => 32, 32, 4, 2, Bf16, Bf16, F32, false;
    V_MFMA_F32_16X16X4_4B_BF16 => 16, 16, 4, 4, Bf16, Bf16, F32, false;
    V_MFMA_F32_4X4X4_16B_BF16 => 4, 4, 4, 16, Bf16, Bf16, F32, false;
    V_MFMA_F32_32X32X8_BF16 => 32, 32, 8, 1, Bf16, Bf16, F32, false;
    V_MFMA_F32_16X16X16_BF16 => 16, 16, 16, 1, Bf16, Bf16, F32, false;
    V_MFMA_F64_16X16X4_F64 => 16, 16, 4, 1, F64, F64, F64, false;
    V_MFMA_F64_4X4X4_4B_F64 => 4, 4, 4, 4, F64, F64, F64, false;
    V_MFMA_F32_16X16X32_BF8_BF8 => 16, 16, 32, 1, Bf8, Bf8, F32, false;
    V_MFMA_F32_16X16X32_BF8_FP8 => 16, 16, 32, 1, Bf8, Fp8, F32, false;
    V_MFMA_F32_16X16X32_FP8_BF8 => 16, 16, 32, 1, Fp8, Bf8, F32, false;
    V_MFMA_F32_16X16X32_FP8_FP8 => 16, 16, 32, 1, Fp8, Fp8, F32, false;
    V_MFMA_F32_32X32X16_BF8_BF8 => 32, 32, 16, 1, Bf8, Bf8, F32, false;
    V_MFMA_F32_32X32X16_BF8_FP8 => 32, 32, 16, 1, Bf8, Fp8, F32, false;
    V_MFMA_F32_32X32X16_FP8_BF8 => 32, 32, 16, 1, Fp8, Bf8, F32, false;
    V_MFMA_F32_32X32X16_FP8_FP8 => 32, 32, 16, 1, Fp8, Fp8, F32, false;
    V_SMFMAC_F32_16X16X32_F16 => 16, 16, 32, 1, F16, F16, F32, true;
    V_SMFMAC_F32_32X32X16_F16 => 32, 32, 16, 1, F16, F16, F32, true;
    V_SMFMAC_F32_16X16X32_BF16 => 16, 16, 32, 1, Bf16, Bf16, F32, true;
    V_SMFMAC_F32_32X32X16_BF16 => 32, 32, 16, 1, Bf16, Bf16, F32, true;
    V_SMFMAC_I32_16X16X64_I8 => 16, 16, 64, 1, I8, I8, I32, true;
    V_SMFMAC_I32_32X32X32_I8 => 32, 32, 32, 1, I8, I8, I32, true;
    V_SMFMAC_F32_16X16X64_BF8_BF8 => 16, 16, 64, 1, Bf8, Bf8, F32, true;
    V_SMFMAC_F32_16X16X64_BF8_FP8 => 16, 16, 64, 1, Bf8, Fp8, F32, true;
    V_SMFMAC_F32_16X16X64_FP8_BF8 => 16, 16, 64, 1, Fp8, Bf8, F32, true;
    V_SMFMAC_F32_16X16X64_FP8_FP8 => 16, 16, 64, 1, Fp8, Fp8, F32, true;
    V_SMFMAC_F32_32X32X32_BF8_BF8 => 32, 32, 32, 1, Bf8, Bf8, F32, true;
    V_SMFMAC_F32_32X32X32_BF8_FP8 => 32, 32, 32, 1, Bf8, Fp8, F32, true;
    V_SMFMAC_F32_32X32X32_FP8_BF8 => 32, 32, 32, 1, Fp8, Bf8, F32, true;
    V_SMFMAC_F32_32X32X32_FP8_FP8 => 32, 32, 32, 1, Fp8, Fp8, F32, true;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_fill_whole_registers_of_a_wave64() {
        for &(op, s) in SHAPES {
            assert_eq!(shape(op), Some(s));
            // Each input spreads over the 64 lanes in whole registers.
            for (outer, bits) in [(s.m, s.a.bits()), (s.n, s.b.bits())] {
                let stored_k = if s.sparse && outer == s.m {
                    s.k / 2
                } else {
                    s.k
                };
                assert_eq!(outer * stored_k * s.blocks * bits % (64 * 32), 0, "{op:?}");
            }
            assert!(s.out_regs() >= 1, "{op:?}");
        }
        assert_eq!(shape(Op::V_ADD_F32), None);
        let gemm = shape(Op::V_MFMA_F32_32X32X8_F16).unwrap();
        assert_eq!(gemm.ops(), 2 * 32 * 32 * 8);
        assert_eq!(gemm.out_regs(), 16);
        let sparse = shape(Op::V_SMFMAC_F32_16X16X32_F16).unwrap();
        assert_eq!(sparse.ops(), 2 * 16 * 16 * 16);
    }
}
