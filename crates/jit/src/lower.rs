//! What the JIT can compile: each opcode it lowers, as data.
//!
//! An op's class says how the emitter builds it; the formulas are the
//! interpreter's own lane functions (`ops::valu`, `ops::salu`, `ops::vcmp`)
//! written in Cranelift IR, operand for operand (`v_sub_f32` is `a + -b`
//! there, so it is `a + -b` here: the two differ in a NaN's sign). Any op
//! not listed here ends a JIT block and runs in the interpreter, so every
//! op has one reference definition and the equivalence test compares the
//! two for those that have a second.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use softgpu_isa::{sreg, Inst, LaneSel, Operand, Ty};

use softgpu_isa::Op;

use softgpu_interp::wave::NUM_VGPRS;

/// A vector op of up to three 32-bit sources, lane by lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Mov,
    Not,
    FAdd,
    /// `a + -b`
    FSub,
    /// `b + -a`
    FSubRev,
    FMul,
    /// `a * b + c`, one rounding.
    Fma,
    CvtF32I32,
    CvtF32U32,
    IAdd,
    ISub,
    ISubRev,
    And,
    Or,
    Xor,
    MulLo,
    /// `(a & 0xffffff) * (b & 0xffffff)`
    MulU24,
    /// `(a & 0xffffff) * (b & 0xffffff) + c`
    MadU24,
    MaxI,
    MinI,
    MaxU,
    MinU,
    /// `b << a`, `b >> a`, `b >>s a`: the amount (src0) must be uniform.
    ShlRev,
    ShrRev,
    SarRev,
    /// `(a << b) + c`, `(a << b) | c`: the amount (src1) must be uniform.
    ShlAdd,
    ShlOr,
    AndOr,
    Or3,
    Xor3,
    Add3,
    /// `(a ^ b) + c`
    Xad,
    /// `c ? b : a`, with `c` a lane mask.
    Cndmask,
    /// `v_bfe_u32`: `(a >> (b & 31)) & ((1 << (c & 31)) - 1)`, with `b`
    /// and `c` uniform (the workitem-id unpacking every 2-D or 3-D kernel
    /// starts with).
    BfeU,
}

/// A vector add or subtract with a carry (borrow) out to a lane mask in
/// `dst[1]`; the `Ci` forms also take one in from the mask in `src[2]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carry {
    Add,
    Sub,
    SubRev,
    AddCi,
    SubCi,
    SubRevCi,
}

/// A 64-bit shift of a VGPR pair by a constant amount (src0, taken
/// modulo 64), into a VGPR pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shift64 {
    /// `b << a` (`v_lshlrev_b64`: the amount is the first source)
    Shl,
    /// `b >> a`
    Shr,
    /// `b >>s a`
    Sar,
}

/// An f64 op on VGPR pairs, SGPR pairs or constants, into a VGPR pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum F64 {
    Add,
    Mul,
    /// `a * b + c`, one rounding.
    Fma,
    /// `a · 2^b`, b a 32-bit integer source.
    Ldexp,
}

/// The accesses of an LDS load or store, lane by lane from the lane's
/// address VGPR: `dwords` at one offset, or at two (`*_2addr*`, each
/// offset scaled by the access size, and by 64 more for `stride64`). A
/// load access not wholly inside LDS reads zero, a store access is
/// discarded (§3.3.4.1), as in `ops::ds`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LdsShape {
    One { dwords: u8 },
    Two { dwords: u8, stride64: bool },
}

impl LdsShape {
    const fn one(dwords: u8) -> LdsShape {
        LdsShape::One { dwords }
    }

    const fn two(dwords: u8, stride64: bool) -> LdsShape {
        LdsShape::Two { dwords, stride64 }
    }

    /// Dwords per access.
    pub fn dwords(self) -> usize {
        match self {
            LdsShape::One { dwords } | LdsShape::Two { dwords, .. } => dwords as usize,
        }
    }

    /// For a dword load, which the fast pass reads as a 16-byte window
    /// from lane 0's address plus each offset (`Emitter::lds_load_window`):
    /// the LDS bytes from that address the windows reach.
    pub fn window_reach(self, inst: &Inst) -> Option<u64> {
        let windows = self
            .accesses(inst)
            .into_iter()
            .map(|(offset, _)| offset + 16);
        (self.dwords() == 1).then(|| windows.max().unwrap_or(16))
    }

    /// Each access as (byte offset from the address VGPR, bytes), in the
    /// order their dwords fill the destination.
    pub fn accesses(self, inst: &Inst) -> Vec<(u64, u64)> {
        let bytes = 4 * self.dwords() as u64;
        let imm = inst.imm as u32 as u64;
        match self {
            LdsShape::One { .. } => vec![(imm & 0xffff, bytes)],
            LdsShape::Two { stride64, .. } => {
                let scale = bytes * if stride64 { 64 } else { 1 };
                vec![
                    ((imm & 0xff) * scale, bytes),
                    ((imm >> 8 & 0xff) * scale, bytes),
                ]
            }
        }
    }
}

/// A scalar op on 32-bit operands (or 64-bit ones, `Class::Scalar64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Mov,
    /// SOPK: the sign-extended 16-bit immediate.
    Movk,
    /// SCC = carry / borrow.
    AddU,
    SubU,
    /// SCC = signed overflow.
    AddI,
    SubI,
    /// SCC = result != 0.
    And,
    Or,
    Xor,
    AndNot1,
    OrNot1,
    Shl,
    Shr,
    Sar,
    /// SCC unchanged.
    Mul,
    /// `scc ? a : b`
    Cselect,
    /// SCC = the comparison.
    Cmp(IntCC),
}

impl Scalar {
    /// Whether the op is a shift, whose amount is a 32-bit source at
    /// either width.
    pub fn is_shift(self) -> bool {
        matches!(self, Scalar::Shl | Scalar::Shr | Scalar::Sar)
    }
}

/// When a branch ending a block is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cond {
    Always,
    Scc0,
    Scc1,
    Vccz,
    Vccnz,
    Execz,
    Execnz,
}

/// How one opcode is compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Scheduling only: nothing to run.
    Hint,
    Lane(Lane),
    /// A vector compare writing a lane mask.
    FCmp(FloatCC),
    ICmp(IntCC),
    Carry(Carry),
    Shift64(Shift64),
    F64(F64),
    /// `v_mad_{u,i}64_{u,i}32`: `a * b + c` exact, with 32-bit `a` and `b`
    /// (sign-extended when `signed`) and a 64-bit `c`, into a VGPR pair;
    /// bit 64 of the exact sum to a lane mask in `dst[1]`.
    Mad64 {
        signed: bool,
    },
    /// An LDS load into VGPRs.
    LdsLoad(LdsShape),
    /// An LDS store from VGPRs (data0 in `src[1]`, data1 in `src[2]`).
    /// Stores run after the block's other vector ops, so the planner puts
    /// them only at a block's end.
    LdsStore(LdsShape),
    /// `s_load_b32`…`s_load_b512`: `dwords` from device memory at an SGPR
    /// pair plus offsets, into SGPRs, in the scalar phase, once
    /// `access::scalar_ok` allowed them; otherwise the block leaves before
    /// changing anything.
    ScalarLoad {
        dwords: u8,
    },
    /// `global_load_b32`…`_b128`, `flat_load_b32`…`_b128`: whole dwords a
    /// lane from device memory into VGPRs. The block's scalar phase finds
    /// where each chunk's rows are for the whole wave (`access::load_rows`,
    /// the interpreter's wave-wide decision) or leaves before changing
    /// anything; the chunk loop loads them from there at the op's program
    /// point. The planner admits one only while its
    /// address VGPRs still hold what they held when the block started.
    GlobalLoad {
        dwords: u8,
        flat: bool,
    },
    /// `global_store_b32`, `flat_store_b32`: one dword a lane to device
    /// memory. Only as a block's last slot, after everything else of it
    /// has run: the block stores the rows itself when the interpreter's
    /// wave-wide path would take the store (`access::rows_ok` or
    /// `access::store_lanes` said so), and otherwise leaves with the store
    /// not run ([`super::STORE_LEFT`]) for the interpreter to run it.
    GlobalStore {
        flat: bool,
    },
    Scalar(Scalar),
    /// The 64-bit forms of `Mov`, the logic ops, the shifts (by a 32-bit
    /// amount, modulo 64) and `Cselect`, on SGPR pairs and constants
    /// (pointer arithmetic, wave64 masks); SCC as the 32-bit forms set it.
    Scalar64(Scalar),
    Branch(Cond),
}

impl Class {
    /// The MODE bits the op's results depend on: FP_ROUND and FP_DENORM
    /// for f32 (bits 0-1, 4-5) or for f16/f64 (2-3, 6-7). A block runs
    /// only where they hold the default.
    pub fn mode_fields(self) -> u32 {
        if matches!(self, Class::F64(_)) {
            0xcc
        } else if self.uses_f32_mode() {
            0x33
        } else {
            0
        }
    }

    fn uses_f32_mode(self) -> bool {
        matches!(
            self,
            Class::FCmp(_)
                | Class::Lane(
                    Lane::FAdd
                        | Lane::FSub
                        | Lane::FSubRev
                        | Lane::FMul
                        | Lane::Fma
                        | Lane::CvtF32I32
                        | Lane::CvtF32U32
                )
        )
    }

    /// The operand a vector op writes a lane mask to: a compare's `dst[0]`,
    /// a carry op's `dst[1]`.
    pub fn mask_dst(self, inst: &Inst) -> Option<Operand> {
        match self {
            Class::FCmp(_) | Class::ICmp(_) => Some(inst.dst[0]),
            Class::Carry(_) | Class::Mad64 { .. } => Some(inst.dst[1]),
            _ => None,
        }
    }
}

/// The class of `op`, if the JIT lowers it.
pub fn class_of(op: Op) -> Option<Class> {
    use Lane as L;
    use Scalar as S;
    // A gfx12 rename lowers as its gfx11 twin.
    let op = softgpu_interp::ops::renamed(op);
    if softgpu_interp::ops::sopp::HINTS.contains(&op) {
        return Some(Class::Hint);
    }
    let lane = |l| Some(Class::Lane(l));
    let scalar = |s| Some(Class::Scalar(s));
    let scalar64 = |s| Some(Class::Scalar64(s));
    let fcmp = |c| Some(Class::FCmp(c));
    let icmp = |c| Some(Class::ICmp(c));
    let scmp = |c| Some(Class::Scalar(S::Cmp(c)));
    let branch = |c| Some(Class::Branch(c));
    let carry = |c| Some(Class::Carry(c));
    let lds = |l| Some(Class::LdsLoad(l));
    let lds_store = |l| Some(Class::LdsStore(l));
    let global = |dwords, flat| Some(Class::GlobalLoad { dwords, flat });
    let global_store = |flat| Some(Class::GlobalStore { flat });
    match op {
        Op::V_MOV_B32 | Op::V_DUAL_MOV_B32 => lane(L::Mov),
        Op::V_NOT_B32 => lane(L::Not),
        Op::V_BFE_U32 => lane(L::BfeU),
        Op::V_ADD_F32 | Op::V_DUAL_ADD_F32 => lane(L::FAdd),
        Op::V_SUB_F32 | Op::V_DUAL_SUB_F32 => lane(L::FSub),
        Op::V_SUBREV_F32 | Op::V_DUAL_SUBREV_F32 => lane(L::FSubRev),
        Op::V_MUL_F32 | Op::V_DUAL_MUL_F32 => lane(L::FMul),
        Op::V_FMA_F32
        | Op::V_FMAC_F32
        | Op::V_FMAAK_F32
        | Op::V_FMAMK_F32
        | Op::V_DUAL_FMAC_F32
        | Op::V_DUAL_FMAAK_F32
        | Op::V_DUAL_FMAMK_F32 => lane(L::Fma),
        Op::V_CVT_F32_I32 => lane(L::CvtF32I32),
        Op::V_CVT_F32_U32 => lane(L::CvtF32U32),
        Op::V_ADD_NC_U32 | Op::V_DUAL_ADD_NC_U32 => lane(L::IAdd),
        Op::V_SUB_NC_U32 => lane(L::ISub),
        Op::V_SUBREV_NC_U32 => lane(L::ISubRev),
        Op::V_AND_B32 | Op::V_DUAL_AND_B32 => lane(L::And),
        Op::V_OR_B32 => lane(L::Or),
        Op::V_XOR_B32 => lane(L::Xor),
        Op::V_MUL_LO_U32 => lane(L::MulLo),
        Op::V_MUL_U32_U24 => lane(L::MulU24),
        Op::V_MAD_U32_U24 => lane(L::MadU24),
        Op::V_MAX_I32 => lane(L::MaxI),
        Op::V_MIN_I32 => lane(L::MinI),
        Op::V_MAX_U32 => lane(L::MaxU),
        Op::V_MIN_U32 => lane(L::MinU),
        Op::V_LSHLREV_B32 | Op::V_DUAL_LSHLREV_B32 => lane(L::ShlRev),
        Op::V_LSHRREV_B32 => lane(L::ShrRev),
        Op::V_ASHRREV_I32 => lane(L::SarRev),
        Op::V_LSHL_ADD_U32 => lane(L::ShlAdd),
        Op::V_LSHL_OR_B32 => lane(L::ShlOr),
        Op::V_AND_OR_B32 => lane(L::AndOr),
        Op::V_OR3_B32 => lane(L::Or3),
        Op::V_XOR3_B32 => lane(L::Xor3),
        Op::V_ADD3_U32 => lane(L::Add3),
        Op::V_XAD_U32 => lane(L::Xad),
        Op::V_CNDMASK_B32 | Op::V_DUAL_CNDMASK_B32 => lane(L::Cndmask),
        Op::V_LSHLREV_B64 => Some(Class::Shift64(Shift64::Shl)),
        Op::V_LSHRREV_B64 => Some(Class::Shift64(Shift64::Shr)),
        Op::V_ASHRREV_I64 => Some(Class::Shift64(Shift64::Sar)),
        Op::V_ADD_F64 => Some(Class::F64(F64::Add)),
        Op::V_MUL_F64 => Some(Class::F64(F64::Mul)),
        Op::V_FMA_F64 => Some(Class::F64(F64::Fma)),
        Op::V_LDEXP_F64 => Some(Class::F64(F64::Ldexp)),
        Op::V_MAD_U64_U32 => Some(Class::Mad64 { signed: false }),
        Op::V_MAD_I64_I32 => Some(Class::Mad64 { signed: true }),
        Op::V_ADD_CO_U32 => carry(Carry::Add),
        Op::V_SUB_CO_U32 => carry(Carry::Sub),
        Op::V_SUBREV_CO_U32 => carry(Carry::SubRev),
        Op::V_ADD_CO_CI_U32 => carry(Carry::AddCi),
        Op::V_SUB_CO_CI_U32 => carry(Carry::SubCi),
        Op::V_SUBREV_CO_CI_U32 => carry(Carry::SubRevCi),
        // The ISA's f32 compares by name: lg is ordered-unequal, neq is
        // "not equal" (true for NaN), nge/ngt/nle/nlt the negations.
        Op::V_CMP_LT_F32 => fcmp(FloatCC::LessThan),
        Op::V_CMP_EQ_F32 => fcmp(FloatCC::Equal),
        Op::V_CMP_LE_F32 => fcmp(FloatCC::LessThanOrEqual),
        Op::V_CMP_GT_F32 => fcmp(FloatCC::GreaterThan),
        Op::V_CMP_LG_F32 => fcmp(FloatCC::OrderedNotEqual),
        Op::V_CMP_GE_F32 => fcmp(FloatCC::GreaterThanOrEqual),
        Op::V_CMP_O_F32 => fcmp(FloatCC::Ordered),
        Op::V_CMP_U_F32 => fcmp(FloatCC::Unordered),
        Op::V_CMP_NGE_F32 => fcmp(FloatCC::UnorderedOrLessThan),
        Op::V_CMP_NLG_F32 => fcmp(FloatCC::UnorderedOrEqual),
        Op::V_CMP_NGT_F32 => fcmp(FloatCC::UnorderedOrLessThanOrEqual),
        Op::V_CMP_NLE_F32 => fcmp(FloatCC::UnorderedOrGreaterThan),
        Op::V_CMP_NEQ_F32 => fcmp(FloatCC::NotEqual),
        Op::V_CMP_NLT_F32 => fcmp(FloatCC::UnorderedOrGreaterThanOrEqual),
        Op::V_CMP_EQ_I32 | Op::V_CMP_EQ_U32 => icmp(IntCC::Equal),
        Op::V_CMP_NE_I32 | Op::V_CMP_NE_U32 => icmp(IntCC::NotEqual),
        Op::V_CMP_LT_I32 => icmp(IntCC::SignedLessThan),
        Op::V_CMP_LE_I32 => icmp(IntCC::SignedLessThanOrEqual),
        Op::V_CMP_GT_I32 => icmp(IntCC::SignedGreaterThan),
        Op::V_CMP_GE_I32 => icmp(IntCC::SignedGreaterThanOrEqual),
        Op::V_CMP_LT_U32 => icmp(IntCC::UnsignedLessThan),
        Op::V_CMP_LE_U32 => icmp(IntCC::UnsignedLessThanOrEqual),
        Op::V_CMP_GT_U32 => icmp(IntCC::UnsignedGreaterThan),
        Op::V_CMP_GE_U32 => icmp(IntCC::UnsignedGreaterThanOrEqual),
        Op::DS_LOAD_B32 => lds(LdsShape::one(1)),
        Op::DS_LOAD_B64 => lds(LdsShape::one(2)),
        Op::DS_LOAD_B96 => lds(LdsShape::one(3)),
        Op::DS_LOAD_B128 => lds(LdsShape::one(4)),
        Op::DS_LOAD_2ADDR_B32 => lds(LdsShape::two(1, false)),
        Op::DS_LOAD_2ADDR_STRIDE64_B32 => lds(LdsShape::two(1, true)),
        Op::DS_LOAD_2ADDR_B64 => lds(LdsShape::two(2, false)),
        Op::DS_LOAD_2ADDR_STRIDE64_B64 => lds(LdsShape::two(2, true)),
        Op::DS_STORE_B32 => lds_store(LdsShape::one(1)),
        Op::DS_STORE_B64 => lds_store(LdsShape::one(2)),
        Op::DS_STORE_B96 => lds_store(LdsShape::one(3)),
        Op::DS_STORE_B128 => lds_store(LdsShape::one(4)),
        Op::DS_STORE_2ADDR_B32 => lds_store(LdsShape::two(1, false)),
        Op::DS_STORE_2ADDR_STRIDE64_B32 => lds_store(LdsShape::two(1, true)),
        Op::DS_STORE_2ADDR_B64 => lds_store(LdsShape::two(2, false)),
        Op::DS_STORE_2ADDR_STRIDE64_B64 => lds_store(LdsShape::two(2, true)),
        Op::GLOBAL_LOAD_B32 => global(1, false),
        Op::GLOBAL_STORE_B32 => global_store(false),
        Op::FLAT_STORE_B32 => global_store(true),
        Op::GLOBAL_LOAD_B64 => global(2, false),
        Op::GLOBAL_LOAD_B96 => global(3, false),
        Op::GLOBAL_LOAD_B128 => global(4, false),
        Op::FLAT_LOAD_B32 => global(1, true),
        Op::FLAT_LOAD_B64 => global(2, true),
        Op::FLAT_LOAD_B96 => global(3, true),
        Op::FLAT_LOAD_B128 => global(4, true),
        Op::S_LOAD_B32 => Some(Class::ScalarLoad { dwords: 1 }),
        Op::S_LOAD_B64 => Some(Class::ScalarLoad { dwords: 2 }),
        Op::S_LOAD_B96 => Some(Class::ScalarLoad { dwords: 3 }),
        Op::S_LOAD_B128 => Some(Class::ScalarLoad { dwords: 4 }),
        Op::S_LOAD_B256 => Some(Class::ScalarLoad { dwords: 8 }),
        Op::S_LOAD_B512 => Some(Class::ScalarLoad { dwords: 16 }),
        Op::S_MOV_B32 => scalar(S::Mov),
        Op::S_MOV_B64 => scalar64(S::Mov),
        Op::S_AND_B64 => scalar64(S::And),
        Op::S_OR_B64 => scalar64(S::Or),
        Op::S_XOR_B64 => scalar64(S::Xor),
        Op::S_AND_NOT1_B64 => scalar64(S::AndNot1),
        Op::S_OR_NOT1_B64 => scalar64(S::OrNot1),
        Op::S_LSHL_B64 => scalar64(S::Shl),
        Op::S_LSHR_B64 => scalar64(S::Shr),
        Op::S_ASHR_I64 => scalar64(S::Sar),
        Op::S_CSELECT_B64 => scalar64(S::Cselect),
        Op::S_MOVK_I32 => scalar(S::Movk),
        Op::S_ADD_U32 => scalar(S::AddU),
        Op::S_SUB_U32 => scalar(S::SubU),
        Op::S_ADD_I32 => scalar(S::AddI),
        Op::S_SUB_I32 => scalar(S::SubI),
        Op::S_AND_B32 => scalar(S::And),
        Op::S_OR_B32 => scalar(S::Or),
        Op::S_XOR_B32 => scalar(S::Xor),
        Op::S_AND_NOT1_B32 => scalar(S::AndNot1),
        Op::S_OR_NOT1_B32 => scalar(S::OrNot1),
        Op::S_LSHL_B32 => scalar(S::Shl),
        Op::S_LSHR_B32 => scalar(S::Shr),
        Op::S_ASHR_I32 => scalar(S::Sar),
        Op::S_MUL_I32 => scalar(S::Mul),
        Op::S_CSELECT_B32 => scalar(S::Cselect),
        Op::S_CMP_EQ_I32 | Op::S_CMP_EQ_U32 => scmp(IntCC::Equal),
        Op::S_CMP_LG_I32 | Op::S_CMP_LG_U32 => scmp(IntCC::NotEqual),
        Op::S_CMP_GT_I32 => scmp(IntCC::SignedGreaterThan),
        Op::S_CMP_GE_I32 => scmp(IntCC::SignedGreaterThanOrEqual),
        Op::S_CMP_LT_I32 => scmp(IntCC::SignedLessThan),
        Op::S_CMP_LE_I32 => scmp(IntCC::SignedLessThanOrEqual),
        Op::S_CMP_GT_U32 => scmp(IntCC::UnsignedGreaterThan),
        Op::S_CMP_GE_U32 => scmp(IntCC::UnsignedGreaterThanOrEqual),
        Op::S_CMP_LT_U32 => scmp(IntCC::UnsignedLessThan),
        Op::S_CMP_LE_U32 => scmp(IntCC::UnsignedLessThanOrEqual),
        Op::S_BRANCH => branch(Cond::Always),
        Op::S_CBRANCH_SCC0 => branch(Cond::Scc0),
        Op::S_CBRANCH_SCC1 => branch(Cond::Scc1),
        Op::S_CBRANCH_VCCZ => branch(Cond::Vccz),
        Op::S_CBRANCH_VCCNZ => branch(Cond::Vccnz),
        Op::S_CBRANCH_EXECZ => branch(Cond::Execz),
        Op::S_CBRANCH_EXECNZ => branch(Cond::Execnz),
        _ => None,
    }
}

/// A scalar register the JIT may read: an SGPR, VCC, a trap temporary
/// (gfx12's workgroup IDs arrive in ttmp7 and ttmp9), M0 or EXEC (null and
/// the specials stay with the interpreter).
pub fn readable_sgpr(r: u8) -> bool {
    r <= sreg::VCC_HI
        || (sreg::TTMP0..sreg::TTMP0 + 16).contains(&r)
        || r == sreg::M0
        || r == sreg::EXEC_LO
        || r == sreg::EXEC_HI
}

/// A scalar register the JIT may write: as [`readable_sgpr`] but never
/// EXEC, which a block takes as fixed.
pub fn writable_sgpr(r: u8) -> bool {
    r <= sreg::VCC_HI || r == sreg::M0
}

/// Whether a 32-bit source of a 64-bit op is one the emitter reads: a VGPR
/// or a scalar source.
fn narrow_src_ok(s: Operand) -> bool {
    matches!(s, Operand::Vgpr(_)) || scalar_src_ok(s)
}

/// Whether `inst` of class `class` is in the form the emitter builds: no
/// DPP, no clamp or output modifier, no half selects, abs/neg only on f32
/// sources, every operand a plain register or constant.
pub fn form_ok(inst: &Inst, class: Class) -> bool {
    let info = inst.op.info();
    let m = inst.mods;
    if inst.lane_sel != LaneSel::None || m.clamp || m.omod != 0 || m.opsel != 0 || m.neg_hi != 0 {
        return false;
    }
    for k in 0..3 {
        let bit = 1u8 << k;
        if (m.abs | m.neg) & bit != 0 && !matches!(info.src[k], Ty::F32 | Ty::F64) {
            return false;
        }
    }
    match class {
        Class::Hint | Class::Branch(_) => true,
        Class::Scalar64(op) => {
            let pair_ok = |s| !matches!(s, Operand::Vgpr(_)) && pair_src_ok(s);
            let b_ok = match op {
                Scalar::Mov => inst.src[1] == Operand::None,
                _ if op.is_shift() => scalar_src_ok(inst.src[1]),
                _ => pair_ok(inst.src[1]),
            };
            let dst_ok = match inst.dst[0] {
                Operand::Sgpr(r) => writable_sgpr(r) && writable_sgpr(r.wrapping_add(1)),
                _ => false,
            };
            pair_ok(inst.src[0]) && b_ok && dst_ok && inst.src[2] == Operand::None
        }
        Class::Scalar(_) => {
            let src_ok = inst.src[..2].iter().all(|&s| scalar_src_ok(s));
            let dst_ok = match inst.dst[0] {
                Operand::None => true,
                Operand::Sgpr(r) => writable_sgpr(r) || r == sreg::NULL,
                _ => false,
            };
            src_ok && dst_ok && inst.src[2] == Operand::None
        }
        Class::F64(k) => {
            let srcs = inst.src[..3].iter().zip(info.src);
            let src_ok = srcs.clone().all(|(&s, ty)| match ty {
                Ty::None => true,
                Ty::F64 => pair_src_ok(s),
                Ty::B32 if k == F64::Ldexp => narrow_src_ok(s),
                _ => false,
            });
            src_ok
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && inst.dst[1] == Operand::None
                && inst.src[3] == Operand::None
        }
        Class::Mad64 { .. } => {
            let mask_ok = match inst.dst[1] {
                Operand::Sgpr(r) => writable_sgpr(r) || r == sreg::NULL,
                _ => false,
            };
            narrow_src_ok(inst.src[0])
                && narrow_src_ok(inst.src[1])
                && pair_src_ok(inst.src[2])
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && mask_ok
                && inst.src[3] == Operand::None
        }
        Class::LdsLoad(_) => {
            // The address a VGPR, no GDS; the data sources are unused.
            matches!(inst.src[0], Operand::Vgpr(_))
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && inst.flags & softgpu_isa::flags::GDS == 0
                && inst.src[1..] == [Operand::None; 3]
                && inst.dst[1] == Operand::None
        }
        Class::ScalarLoad { dwords } => {
            // The base an SGPR pair, the result SGPRs all writable.
            let base_ok = matches!(inst.src[0], Operand::Sgpr(r) if pair_src_ok(Operand::Sgpr(r)));
            let dst_ok = match inst.dst[0] {
                Operand::Sgpr(r) => (0..dwords).all(|k| writable_sgpr(r.wrapping_add(k))),
                _ => false,
            };
            base_ok
                && dst_ok
                && scalar_src_ok(inst.src[1])
                && inst.src[2..] == [Operand::None; 2]
                && inst.dst[1] == Operand::None
        }
        Class::GlobalStore { flat } => {
            // The address as for loads; the data one VGPR.
            global_address_ok(inst, flat)
                && matches!(inst.src[1], Operand::Vgpr(_))
                && inst.src[3] == Operand::None
                && inst.dst == [Operand::None; 2]
        }
        Class::GlobalLoad { dwords, flat } => {
            // A 64-bit address VGPR pair, or (global only) a 32-bit one
            // and an SGPR pair; the destination rows not wrapping.
            let dst_ok = matches!(inst.dst[0], Operand::Vgpr(d) if d as usize + dwords as usize <= NUM_VGPRS);
            global_address_ok(inst, flat)
                && dst_ok
                && inst.src[1] == Operand::None
                && inst.src[3] == Operand::None
                && inst.dst[1] == Operand::None
        }
        Class::LdsStore(shape) => {
            // Address and data VGPRs (data1 only for two accesses), no
            // GDS, no result.
            let data1 = match shape {
                LdsShape::One { .. } => inst.src[2] == Operand::None,
                LdsShape::Two { .. } => matches!(inst.src[2], Operand::Vgpr(_)),
            };
            matches!(inst.src[0], Operand::Vgpr(_))
                && matches!(inst.src[1], Operand::Vgpr(_))
                && data1
                && inst.src[3] == Operand::None
                && inst.flags & softgpu_isa::flags::GDS == 0
                && inst.dst == [Operand::None; 2]
        }
        Class::Shift64(_) => {
            // The amount a constant, the value and the result VGPR pairs.
            matches!(inst.src[0], Operand::Const(_))
                && matches!(inst.src[1], Operand::Vgpr(_))
                && matches!(inst.dst[0], Operand::Vgpr(_))
                && inst.src[2] == Operand::None
                && inst.dst[1] == Operand::None
        }
        Class::Lane(_) | Class::FCmp(_) | Class::ICmp(_) | Class::Carry(_) => {
            let srcs = inst.src[..3].iter().zip(info.src);
            let src_ok = srcs.clone().all(|(&s, ty)| match ty {
                Ty::None => true,
                Ty::B32 | Ty::F32 => matches!(s, Operand::Vgpr(_)) || scalar_src_ok(s),
                Ty::Mask => matches!(s, Operand::Sgpr(r) if readable_sgpr(r)),
                _ => false,
            });
            let dst_ok = match (class, inst.dst[0]) {
                (Class::Lane(_), Operand::Vgpr(_)) => matches!(info.dst[0], Ty::B32 | Ty::F32),
                (Class::FCmp(_) | Class::ICmp(_), Operand::Sgpr(r)) => {
                    writable_sgpr(r) || r == sreg::NULL
                }
                (Class::FCmp(_) | Class::ICmp(_), Operand::None) => true,
                (Class::Carry(_), Operand::Vgpr(_)) => true,
                _ => false,
            };
            let dst1_ok = match (class, inst.dst[1]) {
                (Class::Carry(_), Operand::Sgpr(r)) => writable_sgpr(r) || r == sreg::NULL,
                (_, d) => d == Operand::None,
            };
            src_ok && dst_ok && dst1_ok && inst.src[3] == Operand::None
        }
    }
}

/// A 64-bit source the emitter reads: a VGPR pair, a constant, or an SGPR
/// pair both of whose halves it may read.
fn pair_src_ok(s: Operand) -> bool {
    match s {
        Operand::Vgpr(_) | Operand::Const(_) => true,
        Operand::Sgpr(r) => readable_sgpr(r) && readable_sgpr(r.wrapping_add(1)),
        _ => false,
    }
}

fn scalar_src_ok(s: Operand) -> bool {
    match s {
        Operand::None | Operand::Const(_) => true,
        Operand::Sgpr(r) => readable_sgpr(r),
        _ => false,
    }
}

/// The sources a lane op needs uniform (host SIMD shifts take one amount
/// for all lanes): a shift's amount, then a bit field's width.
pub fn uniform_srcs(lane: Lane) -> &'static [usize] {
    match lane {
        Lane::ShlRev | Lane::ShrRev | Lane::SarRev => &[0],
        Lane::ShlAdd | Lane::ShlOr => &[1],
        Lane::BfeU => &[1, 2],
        _ => &[],
    }
}

/// A global or flat access's address: a 64-bit VGPR pair, or (global
/// only) a 32-bit VGPR and an SGPR pair.
fn global_address_ok(inst: &Inst, flat: bool) -> bool {
    match (inst.src[0], inst.src[2]) {
        (Operand::Vgpr(r), Operand::None) => (r as usize) + 1 < NUM_VGPRS,
        (Operand::Vgpr(_), base @ Operand::Sgpr(_)) => !flat && pair_src_ok(base),
        _ => false,
    }
}
